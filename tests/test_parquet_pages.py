"""Label pairs counted from Parquet dictionary pages equal pyarrow's read of the rows.

``fastkappa score`` counts a plain score's row groups from the two label
columns' dictionary indices (``fastkappa._parquet_pages``) instead of asking
pyarrow for every row's value.  The oracle is pyarrow itself: the pairs of
the rows ``pyarrow.parquet.ParquetFile.read_row_group`` returns, counted by
NumPy, over files written with every type, codec, page version, page size
and row group size a writer may choose.  Then ``score_file`` with the reader
on and off (every row group read by pyarrow) must give the same kappa,
interval, row counts and errors.  The kernels themselves are tested in
``test_parquet_kernels.py``.
"""

import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from fastkappa import _parquet_pages, files  # noqa: E402
from fastkappa._io import DataError, as_source  # noqa: E402

TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float32", "float64", "string", "large_string"]
CODECS = ["none", "snappy", "zstd", "gzip"]  # read from their pages


def column(codes: np.ndarray, kind: str, k: int):
    """Class codes as an Arrow column of ``kind``, using each type's extremes."""
    if kind in ("string", "large_string"):
        names = np.array([f"grade {i}" if i % 3 else f"é{i}" for i in range(k)], dtype=object)
        return pa.array(names[codes].tolist(), type=getattr(pa, kind)())
    dt = np.dtype(kind)
    if dt.kind == "f":
        values = np.arange(k, dtype=dt) - k // 2
    else:
        info = np.iinfo(dt)
        lo, hi = int(info.min), int(info.max)
        picks = [hi, lo, hi - 1, lo + 1, 0, 1]  # the type's extremes first
        picks += list(range(2, 2 + k)) if hi > 2 * k else list(range(lo + 2, hi - 1))
        values = np.array(list(dict.fromkeys(picks))[:k], dtype=dt)
    return pa.array(values[codes % len(values)], type=pa.from_numpy_dtype(dt))


def write(table, **options) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, **options)
    return buf.getvalue()


def pairs_of(raw: bytes, g: int, names=("t", "p")):
    pf = pq.ParquetFile(pa.BufferReader(raw))
    data = memoryview(raw)
    got = _parquet_pages.pair_counts(lambda off, size: data[off:off + size], pf.metadata, g,
                                     names, [pf.schema_arrow.field(c).type for c in names])
    return pf, got


def oracle(pf, g: int, names=("t", "p")) -> dict:
    rows = pf.read_row_group(g, columns=list(dict.fromkeys(names)))
    t, p = (rows.column(c).to_pylist() for c in names)
    out: dict = {}
    for key in zip(t, p, strict=True):
        out[key] = out.get(key, 0) + 1
    return out


def as_dict(got) -> dict:
    t, p, n = got
    out = {}
    for a, b, c in zip(t.tolist(), p.tolist(), n.tolist(), strict=True):
        assert (a, b) not in out
        out[(a, b)] = c
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 3000), k_t=st.integers(1, 300), k_p=st.integers(1, 40),
       kind_t=st.sampled_from(TYPES), kind_p=st.sampled_from(TYPES),
       codec=st.sampled_from(CODECS), version=st.sampled_from(["1.0", "2.0"]),
       page=st.sampled_from([64, 700, 1 << 20]), group=st.sampled_from([97, 1000, 5000]),
       runs=st.booleans(), stats=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_pair_counts_equal_pyarrow(n, k_t, k_p, kind_t, kind_p, codec, version, page, group,
                                   runs, stats, seed):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, k_t, n)
    p = rng.integers(0, k_p, n)
    if runs:  # long runs of one value: the encoder writes RLE runs, not bit-packed ones
        t = np.sort(t)
        p = np.repeat(p, 50)[:n]
    table = pa.table({"id": np.arange(n), "t": column(t, kind_t, k_t),
                      "p": column(p, kind_p, k_p)})
    raw = write(table, compression=codec, data_page_version=version, data_page_size=page,
                row_group_size=group, write_statistics=stats)
    pf = pq.ParquetFile(pa.BufferReader(raw))
    for g in range(pf.metadata.num_row_groups):
        _, got = pairs_of(raw, g)
        assert got is not None, (g, kind_t, kind_p, codec, version)
        assert as_dict(got) == oracle(pf, g)
        assert got[0].dtype == (object if "string" in kind_t else np.dtype(kind_t))


@pytest.mark.parametrize("options", [
    {"use_dictionary": False},
    {"use_dictionary": ["p"]},
    {"compression": "lz4"},
    {"compression": "brotli"},
])
def test_layouts_not_read_here_are_left_to_pyarrow(options):
    rng = np.random.default_rng(0)
    table = pa.table({"t": rng.integers(0, 5, 500), "p": rng.integers(0, 5, 500)})
    raw = write(table, **options)
    _pf, got = pairs_of(raw, 0)
    assert got is None


def test_nulls_and_a_dictionary_that_overflows_are_left_to_pyarrow():
    rng = np.random.default_rng(1)
    with_null = pa.table({"t": pa.array([1, None, 2] * 100), "p": pa.array([1, 2, 2] * 100)})
    assert pairs_of(write(with_null), 0)[1] is None
    # a dictionary larger than the page limit: pyarrow falls back to PLAIN pages midway
    many = pa.table({"t": rng.permutation(20000), "p": rng.integers(0, 3, 20000)})
    pf, got = pairs_of(write(many, dictionary_pagesize_limit=4096), 0)
    assert got is None
    # nulls only in a column's other row group: the clean group is still read here
    split = pa.table({"t": pa.array([1, 2, 3, 4] * 50 + [None] * 4),
                      "p": pa.array([1, 2, 2, 4] * 50 + [1] * 4)})
    raw = write(split, row_group_size=200)
    pf, got = pairs_of(raw, 0)
    assert as_dict(got) == oracle(pf, 0)
    assert pairs_of(raw, 1)[1] is None


def test_the_same_column_twice_and_nested_columns():
    rng = np.random.default_rng(2)
    t = rng.integers(0, 4, 1000)
    raw = write(pa.table({"t": t, "s": pa.array([{"x": int(v)} for v in t])}))
    pf, got = pairs_of(raw, 0, ("t", "t"))
    assert as_dict(got) == oracle(pf, 0, ("t", "t"))
    assert pairs_of(raw, 0, ("t", "s"))[1] is None  # a struct: no leaf of that name
    # a list column: its leaf repeats
    raw = write(pa.table({"t": t, "l": pa.array([[int(v)] for v in t])}))
    assert pairs_of(raw, 0, ("t", "l"))[1] is None


# --------------------------------------------------------------------------- score_file

@pytest.fixture(autouse=True)
def pages_for_small_files(monkeypatch):
    """The page reader starts at 2^20 rows; these files are smaller."""
    from fastkappa._core import config

    monkeypatch.setattr(config, "PAGES_MIN_ROWS", 0)
    monkeypatch.setattr(config, "PAGES_MIN_GROUP_ROWS", 0)


def _without_pages(monkeypatch):
    monkeypatch.setattr(files, "_by_pairs", lambda spec, src, cells: False)


@pytest.fixture
def graded_file(tmp_path):
    rng = np.random.default_rng(4)
    n = 30000
    t = rng.choice(5, n, p=[0.4, 0.25, 0.15, 0.12, 0.08])
    p = np.where(rng.random(n) < 0.3, np.clip(t + rng.integers(-2, 3, n), 0, 4), t)
    path = tmp_path / "graded.parquet"
    pq.write_table(pa.table({"y": t, "p": p, "s": [f"g{v}" for v in p]}), path,
                   row_group_size=4000)
    return path


@pytest.mark.parametrize("kw", [
    {"weights": "quadratic"},
    {"weights": "linear", "labels": [0, 1, 2, 3, 4, 5]},
    {"n_classes": 7},
    {"ignore_index": 4},
    {"weights": "quadratic", "method": "bca", "n_resamples": 300, "seed": 3},
])
def test_score_file_equal_with_and_without_the_page_reader(graded_file, kw, monkeypatch):
    calls = []
    real = _parquet_pages.pair_counts

    def spy(*a, **k):
        got = real(*a, **k)
        calls.append(got is not None)
        return got

    monkeypatch.setattr(_parquet_pages, "pair_counts", spy)
    fast = files._score(graded_file, true="y", pred="p", **kw)
    assert calls and all(calls)  # every row group was counted from its pages
    _without_pages(monkeypatch)
    slow = files._score(graded_file, true="y", pred="p", **kw)
    assert fast.kappa == slow.kappa
    np.testing.assert_array_equal(fast.accumulator.confusion, slow.accumulator.confusion)
    assert (fast.n_read, fast.n_missing, fast.n_ignored) == (
        slow.n_read, slow.n_missing, slow.n_ignored)
    if "method" in kw:
        assert (fast.ci.low, fast.ci.high) == (slow.ci.low, slow.ci.high)


@pytest.mark.parametrize("kw", [
    {"labels": [0, 1, 2, 3]},  # a value outside the declared classes: named by its row
    {"true": "y", "pred": "s"},  # numbers against text
    {"ignore_index": "x"},  # a marker of the other kind
])
def test_score_file_errors_name_the_same_row(graded_file, kw, monkeypatch):
    kw = {"true": "y", "pred": "p", **kw}
    with pytest.raises(DataError) as fast:
        files.score_file(graded_file, **kw)
    _without_pages(monkeypatch)
    with pytest.raises(DataError) as slow:
        files.score_file(graded_file, **kw)
    assert str(fast.value) == str(slow.value)


def test_score_file_with_nulls_and_one_thread(tmp_path, monkeypatch):
    rng = np.random.default_rng(6)
    t = rng.integers(0, 3, 9000).astype(float)
    t[8500] = np.nan  # in the last row group only
    path = tmp_path / "nulls.parquet"
    pq.write_table(pa.table({"y": pa.array(t, from_pandas=True),
                             "p": rng.integers(0, 3, 9000)}), path, row_group_size=3000)
    with pytest.raises(DataError, match="row 8501"):
        files.score_file(path, true="y", pred="p")
    fast = files._score(path, true="y", pred="p", nan_policy="omit")
    assert (fast.n_read, fast.n_missing) == (9000, 1)
    _without_pages(monkeypatch)
    slow = files._score(path, true="y", pred="p", nan_policy="omit")
    assert fast.kappa == slow.kappa
    np.testing.assert_array_equal(fast.accumulator.confusion, slow.accumulator.confusion)


def test_source_from_bytes_reads_pages(graded_file):
    raw = graded_file.read_bytes()
    src = as_source(str(graded_file))
    counts, close = src.pair_reader()
    try:
        assert counts(0, ("y", "p")) is not None
    finally:
        close()
    pf, got = pairs_of(raw, 1, ("y", "p"))
    assert as_dict(got) == oracle(pf, 1, ("y", "p"))


def test_small_files_are_read_by_pyarrow(graded_file, monkeypatch):
    """Below ``PAGES_MIN_ROWS`` rows no page kernel is needed (nor compiled)."""
    from fastkappa._core import config

    monkeypatch.setattr(config, "PAGES_MIN_ROWS", 30001)
    calls = []
    monkeypatch.setattr(_parquet_pages, "pair_counts", lambda *a, **k: calls.append(1))
    files.score_file(graded_file, true="y", pred="p")
    assert calls == []
    monkeypatch.setattr(config, "PAGES_MIN_ROWS", 30000)
    files.score_file(graded_file, true="y", pred="p")
    # the spy's None sends the row group, and the rest of its unit, to pyarrow
    assert calls == [1]
    calls.clear()  # row groups of 4,000 rows on average, below 4,001: pyarrow alone
    monkeypatch.setattr(config, "PAGES_MIN_GROUP_ROWS", 4001)
    files.score_file(graded_file, true="y", pred="p")
    assert calls == []


@pytest.mark.parametrize("writer", ["polars", "duckdb", "pandas"])
@pytest.mark.parametrize("kind", ["int", "str"])
def test_other_writers_files_are_read_from_their_pages(tmp_path, writer, kind):
    """Files as polars, DuckDB and pandas write them: counted from their pages, and
    the counts equal pyarrow's read of the rows."""
    rng = np.random.default_rng(9)
    n = 300_000
    t = rng.integers(0, 5, n)
    p = np.clip(t + rng.integers(-1, 2, n), 0, 4)
    if kind == "str":
        names = np.array(["none", "mild", "moderate", "severe", "worst"], dtype=object)
        t, p = names[t], names[p]
    path = tmp_path / f"{writer}.parquet"
    if writer == "polars":
        pl = pytest.importorskip("polars")
        pl.DataFrame({"t": t, "p": p}).write_parquet(path, row_group_size=100_000)
    elif writer == "duckdb":
        duckdb = pytest.importorskip("duckdb")
        labels = pa.table({"t": t, "p": p})  # noqa: F841 (DuckDB reads it by name)
        duckdb.sql(f"COPY (SELECT * FROM labels) TO '{path}' (FORMAT parquet)")
    else:
        pd = pytest.importorskip("pandas")
        pd.DataFrame({"t": t, "p": p}).to_parquet(path)
    raw = path.read_bytes()
    pf = pq.ParquetFile(pa.BufferReader(raw))
    for g in range(pf.metadata.num_row_groups):
        _, got = pairs_of(raw, g)
        assert got is not None, (writer, kind, g, pf.metadata.row_group(g).column(0))
        assert as_dict(got) == oracle(pf, g)


def test_a_damaged_row_group_gives_the_same_error(tmp_path, monkeypatch):
    """Garbage in the second row group's page: pyarrow reads the whole unit, so
    the message names the same row as without the page reader."""
    rng = np.random.default_rng(10)
    path = tmp_path / "damaged.parquet"
    pq.write_table(pa.table({"t": rng.integers(0, 5, 2000), "p": rng.integers(0, 5, 2000)}),
                   path, row_group_size=1000)
    md = pq.ParquetFile(path).metadata
    raw = bytearray(path.read_bytes())
    at = md.row_group(1).column(0).data_page_offset
    raw[at + 30:at + 60] = b"\xff" * 30
    path.write_bytes(bytes(raw))
    with pytest.raises(DataError) as fast:
        files.score_file(path, true="t", pred="p")
    _without_pages(monkeypatch)
    with pytest.raises(DataError) as slow:
        files.score_file(path, true="t", pred="p")
    assert str(fast.value) == str(slow.value)


@pytest.mark.parametrize("kw", [{}, {"labels": ["g0", "g1", "g2", "g3", "g4"]}])
def test_dictionary_indices_past_the_dictionary_name_their_row(tmp_path, monkeypatch, kw):
    """A damaged page whose indices point past the dictionary: a DataError naming
    the row (pyarrow decodes such indices without a word), from the pages or not."""
    from fastkappa._kernels import parquet as kernels

    rng = np.random.default_rng(11)
    words = np.array([f"g{i}" for i in range(5)], dtype=object)
    path = tmp_path / "damaged.parquet"
    pq.write_table(pa.table({"t": words[rng.integers(0, 5, 3000)].tolist(),
                             "p": words[rng.integers(0, 5, 3000)].tolist()}),
                   path, compression="NONE", row_group_size=1000)
    md = pq.ParquetFile(path).metadata.row_group(1).column(1)
    raw = bytearray(path.read_bytes())
    start = md.dictionary_page_offset
    chunk = np.frombuffer(bytes(raw[start:start + md.total_compressed_size]), np.uint8)
    h = np.empty((8, kernels.HEADER_SLOTS + 1), np.int64)
    assert kernels._page_headers(chunk, len(chunk), h, np.empty((2, 16), np.int64)) >= 2
    body = start + int(h[1, kernels.BODY])  # the first data page (v1): levels, then indices
    width = body + 4 + int.from_bytes(raw[body:body + 4], "little")
    assert raw[width] == 3 and raw[width + 1] & 1  # 3-bit indices, a bit-packed run first
    raw[width + 2:width + 5] = b"\xff\xff\xff"  # rows 1001-1008: index 7 of 5 values
    path.write_bytes(bytes(raw))
    message = ("row 1001: column 'p' holds dictionary index 7, but its dictionary has "
               "5 values; the file is damaged.")
    with pytest.raises(DataError) as fast:
        files.score_file(path, true="t", pred="p", **kw)
    assert str(fast.value) == message
    _without_pages(monkeypatch)
    with pytest.raises(DataError) as slow:
        files.score_file(path, true="t", pred="p", **kw)
    assert str(slow.value) == message


def test_a_fresh_kernel_cache_reads_page_files_with_pyarrow_until_its_budget(graded_file,
                                                                               monkeypatch):
    """While the page kernels are neither compiled nor cached, a page-reader file
    is read by pyarrow (the same score), timed against the stand-in's budget;
    once it is spent, the pages are read (and their kernels compiled)."""
    from fastkappa._core.stand_ins import ColdStandIn

    calls = []
    real = _parquet_pages.pair_counts
    monkeypatch.setattr(_parquet_pages, "pair_counts",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    want = files._score(graded_file, true="y", pred="p", weights="quadratic")
    assert calls
    calls.clear()
    cold = ColdStandIn(budget=1.0)
    monkeypatch.setattr(files, "_cold_pages", cold)
    monkeypatch.setenv("FASTKAPPA_COLD_SERIAL", "1")  # the tests' conftest turns it off
    monkeypatch.setattr(cold, "wanted", lambda kernel, args, key: cold.time.spent() <= 0.0)
    # pyarrow twice (the first run is not timed), then the pages
    for pages_read in (False, False, True):
        got = files._score(graded_file, true="y", pred="p", weights="quadratic")
        assert got.kappa == want.kappa
        np.testing.assert_array_equal(got.accumulator.confusion, want.accumulator.confusion)
        assert bool(calls) is pages_read
    assert cold.time.spent() > 0.0
    # a file beyond PAGES_COLD_MAX_ROWS rows compiles the page reader at once
    calls.clear()
    monkeypatch.setattr(cold, "wanted", lambda kernel, args, key: True)
    monkeypatch.setattr(files, "PAGES_COLD_MAX_ROWS", 1000)
    assert files._score(graded_file, true="y", pred="p", weights="quadratic").kappa == (
        want.kappa)
    assert calls


def test_page_kernels_ready_is_read_from_the_kernel_cache(graded_file, tmp_path):
    """In a fresh process the page reader's readiness comes from the kernel cache:
    an empty cache compiles no page kernel (pyarrow reads), a cache holding them
    reads the pages; the score is the same."""
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json, sys, fastkappa.files as f, fastkappa._kernels.parquet as kp\n"
        "from fastkappa._core import config\n"
        "config.PAGES_MIN_ROWS = config.PAGES_MIN_GROUP_ROWS = 0\n"
        "s = f.score_file(sys.argv[1], true='y', pred='p', weights='quadratic')\n"
        "print(json.dumps({'kappa': s, 'compiled': len(getattr(kp._count_page_pairs,\n"
        "                  'overloads', ()))}))\n")
    runs = []
    for cold in ("1", "0", "1"):
        env = dict(os.environ, FASTKAPPA_CACHE_DIR=str(tmp_path / "cache"),
                   FASTKAPPA_COLD_SERIAL=cold)
        proc = subprocess.run([sys.executable, "-c", code, str(graded_file)], env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert runs[0]["kappa"] == runs[1]["kappa"] == runs[2]["kappa"]
    if os.environ.get("NUMBA_DISABLE_JIT") != "1":
        # none compiled in an empty cache; compiled; then loaded from the cache
        assert [r["compiled"] for r in runs] == [0, 1, 1]
