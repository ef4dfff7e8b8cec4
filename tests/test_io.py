"""Streaming readers of the command line (fastkappa._io)."""

from __future__ import annotations

import gzip
import io
import sys
import time

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pcsv = pytest.importorskip("pyarrow.csv")
pq = pytest.importorskip("pyarrow.parquet")

from fastkappa import _file_columns, _io  # noqa: E402
from fastkappa._file_columns import LabelConverter  # noqa: E402
from fastkappa._io import DataError, iter_batches, open_source  # noqa: E402


def _csv_bytes(rows: list[list], header=("t", "p")) -> bytes:
    lines = [",".join(header)] + [",".join(str(v) for v in r) for r in rows]
    return ("\n".join(lines) + "\n").encode()


def _read_all(src, needed, types=None):
    conv = {c: LabelConverter(c, src.fmt) for c in needed if (types or {}).get(c) != "score"}
    out = {c: [] for c in needed}
    for row0, cols in iter_batches(src, needed, types):
        for c in needed:
            if c in conv:
                col, missing = conv[c].convert(cols[c], row0)
                out[c].append((_file_columns.materialize(col), missing))
            else:
                out[c].append(_file_columns.score_values(cols[c], c, row0))
    return out


@pytest.fixture
def small_blocks(monkeypatch):
    """Tiny CSV blocks and Parquet batches, so a small file spans many batches."""
    monkeypatch.setattr(_io, "CSV_BLOCK_SIZE", 1 << 10)
    monkeypatch.setattr(_io, "PARQUET_BATCH_ROWS", 100)


# --------------------------------------------------------------------------- formats


@pytest.mark.parametrize("fmt", ["csv", "csv.gz", "parquet"])
def test_open_source_detects_format_by_magic_bytes(tmp_path, rng, fmt):
    t = rng.integers(0, 5, 300)
    table = pa.table({"t": t, "p": t[::-1].copy(), "other": np.arange(300)})
    path = tmp_path / "data.bin"  # the name says nothing about the format
    if fmt == "parquet":
        pq.write_table(table, path)
    else:
        buf = io.BytesIO()
        pcsv.write_csv(table, buf)
        data = buf.getvalue()
        path.write_bytes(gzip.compress(data) if fmt.endswith("gz") else data)
    src = open_source(str(path))
    assert src.fmt == ("parquet" if fmt == "parquet" else "csv")
    assert src.columns == ["t", "p", "other"]
    got = _read_all(src, ["t", "p"])
    np.testing.assert_array_equal(np.concatenate([v for v, _ in got["t"]]), t)
    np.testing.assert_array_equal(np.concatenate([v for v, _ in got["p"]]), t[::-1])


@pytest.mark.parametrize("compress", [False, True])
def test_open_source_reads_stdin(rng, compress):
    t = rng.integers(0, 3, 50)
    data = _csv_bytes([[a, b] for a, b in zip(t, t, strict=True)])
    stream = io.BufferedReader(io.BytesIO(gzip.compress(data) if compress else data))
    src = open_source("-", stdin=stream)
    assert src.name == "stdin" and src.columns == ["t", "p"]
    got = _read_all(src, ["t"])
    np.testing.assert_array_equal(np.concatenate([v for v, _ in got["t"]]), t)
    with pytest.raises(DataError, match="standard input can be read only once"):
        list(iter_batches(src, ["t"]))


def test_open_source_reads_parquet_from_stdin(tmp_path):
    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"t": [1, 2, 3]}), path)
    src = open_source("-", stdin=io.BufferedReader(io.BytesIO(path.read_bytes())))
    assert src.fmt == "parquet" and src.n_rows == 3


@pytest.mark.parametrize("from_stdin", [False, True])
def test_parquet_group_reader_reads_units_in_order(tmp_path, from_stdin):
    """Each thread's reader yields a unit's rows, from a path or from stdin's bytes."""
    path = tmp_path / "x.parquet"
    t = np.arange(50) % 7
    pq.write_table(pa.table({"t": t, "u": -t}), path, row_group_size=8)
    src = (open_source("-", stdin=io.BufferedReader(io.BytesIO(path.read_bytes())))
           if from_stdin else open_source(str(path)))
    assert src.row_groups == [8] * 6 + [2]
    units = src.row_group_units(20)
    assert units == [(1, [0, 1, 2]), (25, [3, 4, 5]), (49, [6])]
    got = []
    for first, members in units:
        read = src.group_reader()  # one per thread; here one per unit
        rows = [b.column(0).to_numpy() for b in read(first, members, ["t"])]
        assert len(np.concatenate(rows)) == sum(src.row_groups[i] for i in members)
        got.append(np.concatenate(rows))
    np.testing.assert_array_equal(np.concatenate(got), t)


def test_parquet_group_reader_reads_a_unit_of_small_groups_as_one_batch(tmp_path,
                                                                        monkeypatch):
    """Small row groups packed into a unit come as one batch (one count per unit); a
    unit of one big row group still comes in batches of PARQUET_BATCH_ROWS."""
    monkeypatch.setattr(_io, "PARQUET_BATCH_ROWS", 20)
    path = tmp_path / "x.parquet"
    t = np.arange(124) % 5
    writer = pq.ParquetWriter(path, pa.schema([("t", pa.int64())]))
    for lo, hi in ((0, 8), (8, 16), (16, 24), (24, 124)):
        writer.write_table(pa.table({"t": t[lo:hi]}))
    writer.close()
    src = open_source(str(path))
    assert src.row_groups == [8, 8, 8, 100]
    units = src.row_group_units()
    assert units == [(1, [0, 1, 2]), (25, [3])]
    read = src.group_reader()
    small = [b.num_rows for b in read(1, [0, 1, 2], ["t"])]
    big = [b.num_rows for b in read(25, [3], ["t"])]
    assert small == [24]
    assert big == [20] * 5


def test_open_source_tsv_separator(tmp_path):
    path = tmp_path / "x.tsv"
    path.write_text("a\tb\n1\t2\n")
    assert open_source(str(path)).columns == ["a", "b"]


def test_open_source_errors(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        open_source(str(tmp_path / "nope.csv"))
    with pytest.raises(DataError, match="is a directory"):
        open_source(str(tmp_path))
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(DataError, match="is empty: a CSV file needs a header"):
        open_source(str(empty))


@pytest.mark.parametrize("rows", [3, 300_000])
def test_open_source_names_bare_carriage_return_line_endings(tmp_path, rows):
    # old Mac line endings (CR alone): said so, short file or one whose first
    # "line" is longer than the header bound; CRLF stays a line ending
    path = tmp_path / "mac.csv"
    path.write_bytes(b"t,p\r" + b"0,1\r" * rows)
    with pytest.raises(DataError, match=r"bare carriage return \(CR"):
        open_source(str(path))
    path.write_bytes(b"t,p\r\n" + b"0,1\r\n" * rows)
    assert open_source(str(path)).columns == ["t", "p"]


def test_open_source_without_pyarrow_names_the_extra(monkeypatch, tmp_path):
    import re

    from fastkappa._install import install_hint

    path = tmp_path / "whatever.csv"
    path.write_text("a,b\n1,2\n")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(DataError, match=re.escape(install_hint("io"))):
        open_source(str(path))
    # a file that is not there says so first: installing the extra would not help
    with pytest.raises(DataError, match=r"cannot open 'nope\.csv': no such file"):
        open_source("nope.csv")


def test_iter_batches_missing_column_lists_columns(tmp_path):
    path = tmp_path / "x.csv"
    path.write_bytes(_csv_bytes([[1, 2]], header=("grade", "model_a")))
    src = open_source(str(path))
    with pytest.raises(DataError, match=r"has no column 'model_b'; its columns are 'grade', "
                                        r"'model_a'"):
        list(iter_batches(src, ["grade", "model_b"]))


def test_row_group_reader_names_a_missing_or_repeated_column(tmp_path):
    # the parallel Parquet path reads through group_reader, not iter_batches: the
    # same clear errors there (it raised Arrow's KeyError before)
    path = tmp_path / "x.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array([1, 2]), pa.array([2, 2]),
                                         pa.array([1, 1])], names=["a", "a", "b"]), path)
    read = open_source(str(path)).group_reader()
    with pytest.raises(DataError, match=r"has no column 'zz'; its columns are 'a', 'a', 'b'"):
        list(read(1, [0], ["zz", "b"]))
    with pytest.raises(DataError, match="more than one column named 'a'"):
        list(read(1, [0], ["a", "b"]))


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_repeated_column_name_is_an_error_not_a_guess(tmp_path, fmt):
    path = tmp_path / f"x.{fmt}"
    if fmt == "csv":
        path.write_bytes(_csv_bytes([[1, 2, 1], [2, 2, 2]], header=("a", "a", "b")))
    else:
        pq.write_table(pa.Table.from_arrays([pa.array([1, 2]), pa.array([2, 2]),
                                             pa.array([1, 2])], names=["a", "a", "b"]), path)
    src = open_source(str(path))
    with pytest.raises(DataError, match=r"more than one column named 'a'.*its own name"):
        list(iter_batches(src, ["a", "b"]))
    assert len(list(iter_batches(src, ["b"]))) == 1  # the other columns still read


def test_score_file_on_parallel_row_groups_names_a_missing_column(tmp_path, monkeypatch):
    from fastkappa.files import score_file

    monkeypatch.setattr(_io, "PARQUET_BATCH_ROWS", 64)  # several units from a small file
    path = tmp_path / "x.parquet"
    t = np.arange(1000) % 3
    pq.write_table(pa.table({"t": t, "p": t}), path, row_group_size=100)
    assert len(open_source(str(path)).row_group_units()) > 1
    assert score_file(str(path), true="t", pred="p") == pytest.approx(1.0)
    with pytest.raises(DataError, match="has no column 'q'"):
        score_file(str(path), true="t", pred="q")


# --------------------------------------------------------------------------- types


def test_label_converter_type_fixed_up_front(tmp_path, small_blocks):
    # the first blocks hold integers only; later ones hold "2.0" and blanks: still numbers
    rows = [[i % 3, i % 3] for i in range(2000)] + [["2.0", 1], ["", 1]]
    path = tmp_path / "x.csv"
    path.write_bytes(_csv_bytes(rows))
    src = open_source(str(path))
    got = _read_all(src, ["t"])
    assert len(got["t"]) > 5  # many batches
    values = np.concatenate([v for v, _ in got["t"]])
    assert values.dtype.kind == "i"
    assert values[2000] == 2
    missing = [m for _, m in got["t"] if m is not None]
    assert len(missing) == 1 and missing[0].sum() == 1


def test_label_converter_kind_change_names_row(tmp_path, small_blocks):
    rows = [[1, 1]] * 1500 + [["mild", 1]]
    path = tmp_path / "x.csv"
    path.write_bytes(_csv_bytes(rows))
    with pytest.raises(DataError, match=r"row 1501: column 't' holds 'mild', but earlier rows "
                                        r"hold numbers"):
        _read_all(open_source(str(path)), ["t"])


def test_label_converter_strings_stay_strings(tmp_path, small_blocks):
    rows = [["none", "a"]] * 600 + [["3", "b"]]
    path = tmp_path / "x.csv"
    path.write_bytes(_csv_bytes(rows))
    got = _read_all(open_source(str(path)), ["t"])
    values = np.concatenate([v for v, _ in got["t"]])
    assert values[-1] == "3" and values.dtype == object


def test_label_converter_non_integral_names_row(tmp_path):
    path = tmp_path / "x.csv"
    path.write_bytes(_csv_bytes([[1, 1], [2, 2], [2.5, 1]]))
    with pytest.raises(DataError, match=r"row 3: column 't' holds '2.5', which is not a class"):
        _read_all(open_source(str(path)), ["t"])
    pqpath = tmp_path / "x.parquet"
    pq.write_table(pa.table({"t": [1.0, 0.25]}), pqpath)
    with pytest.raises(DataError, match=r"row 2: column 't' holds 0.25"):
        _read_all(open_source(str(pqpath)), ["t"])


def test_label_converter_parquet_types(tmp_path):
    import pandas as pd

    frame = pd.DataFrame({
        "ints": np.array([1, 2, 3], dtype=np.int16),
        "floats": [1.0, np.nan, 3.0],
        "nullable": pd.array([1, None, 3], dtype="Int64"),
        "strings": ["a", None, "c"],
        "cats": pd.Categorical(["lo", "hi", "lo"]),
        "bools": [True, False, True],
    })
    path = tmp_path / "x.parquet"
    frame.to_parquet(path)
    src = open_source(str(path))
    got = _read_all(src, list(frame.columns))
    vals = {c: np.concatenate([v for v, _ in got[c]]) for c in frame.columns}
    miss = {c: got[c][0][1] for c in frame.columns}
    assert vals["ints"].tolist() == [1, 2, 3] and miss["ints"] is None
    assert miss["floats"].tolist() == [False, True, False]
    assert miss["nullable"].tolist() == [False, True, False]
    assert vals["strings"][0] == "a" and miss["strings"].tolist() == [False, True, False]
    assert vals["cats"].tolist() == ["lo", "hi", "lo"]
    assert vals["bools"].tolist() == [1, 0, 1]


def test_label_converter_rejects_other_types(tmp_path):
    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"ts": pa.array([0], pa.timestamp("ms"))}), path)
    with pytest.raises(DataError, match=r"column 'ts' has type timestamp\[ms\]; labels must"):
        _read_all(open_source(str(path)), ["ts"])


def test_score_values_bad_value_names_row(tmp_path):
    path = tmp_path / "x.csv"
    path.write_bytes(_csv_bytes([[0, 0.5], [1, "NA"], [1, "high"]], header=("t", "s")))
    with pytest.raises(DataError, match=r"row 3: column 's' holds 'high', which is not a num"):
        _read_all(open_source(str(path)), ["s"], {"s": "score"})


def test_score_values_missing(tmp_path):
    path = tmp_path / "x.csv"
    path.write_bytes(_csv_bytes([[0, 0.5], [1, ""], [1, "1e3"]], header=("t", "s")))
    (vals, missing), = _read_all(open_source(str(path)), ["s"], {"s": "score"})["s"]
    assert vals[0] == 0.5 and vals[2] == 1000.0 and missing.tolist() == [False, True, False]


def test_first_row_outside():
    from fastkappa._core.columns import CodesColumn

    col = CodesColumn(np.array([0, -1, 1, 2]), np.array([1, 2, 9]), kind="num")
    assert _file_columns.first_row_outside(col, np.array([1, 2])) == (3, 9)
    assert _file_columns.first_row_outside(np.array([0, 1, 5]), np.array([0, 1])) == (2, 5)
    assert _file_columns.first_row_outside(np.array([0, 1]), np.array([0, 1])) is None


# --------------------------------------------------------------------------- prefetch


def test_iter_batches_parse_error_mid_file(tmp_path, small_blocks):
    rows = [[1, 1]] * 3000
    path = tmp_path / "x.csv"
    path.write_bytes(_csv_bytes(rows) + b"1,2,3\n" + _csv_bytes(rows, header=("1", "1")))
    with pytest.raises(DataError, match=r"cannot parse the rows after row \d+: .*"
                                        r"Expected 2 columns, got 3"):
        _read_all(open_source(str(path)), ["t", "p"])


def test_iter_batches_early_exit_stops_reader_thread(tmp_path, small_blocks):
    import threading

    path = tmp_path / "x.csv"
    path.write_bytes(_csv_bytes([[i % 3, 1] for i in range(5000)]))
    before = threading.active_count()
    it = iter_batches(open_source(str(path)), ["t"])
    next(it)
    assert any(t.name == "fastkappa-reader" for t in threading.enumerate())
    it.close()
    assert not any(t.name == "fastkappa-reader" for t in threading.enumerate())
    assert threading.active_count() <= before


@pytest.mark.parametrize("prefetch", [0, 1, 3])
def test_iter_batches_prefetch_keeps_order(tmp_path, small_blocks, prefetch):
    path = tmp_path / "x.csv"
    path.write_bytes(_csv_bytes([[i, 0] for i in range(4000)]))
    src = open_source(str(path))
    firsts, values = [], []
    for row0, cols in iter_batches(src, ["t"], prefetch=prefetch):
        firsts.append(row0)
        values.append(np.asarray(cols["t"].dictionary.to_pylist(), dtype=np.int64)[
            cols["t"].indices.to_numpy()])
    got = np.concatenate(values)
    np.testing.assert_array_equal(got, np.arange(4000))
    np.testing.assert_array_equal(np.diff(firsts), [len(v) for v in values[:-1]])


# --------------------------------------------------------------------------- missing tokens


@pytest.mark.parametrize("token", _io.MISSING_TOKENS)
def test_missing_tokens_never_change_a_numeric_column(tmp_path, small_blocks, token):
    # the token in the first block: the column stays numeric, the token is missing,
    # and "1" and "1.0" are one class
    quoted = '""' if token == "" else token
    rows = [[quoted, quoted], [1, "1.0"], [2, 2]] + [[i % 3, i % 3] for i in range(1500)]
    path = tmp_path / "x.csv"
    path.write_bytes(_csv_bytes(rows))
    got = _read_all(open_source(str(path)), ["t", "p"])
    for c in ("t", "p"):
        values = np.concatenate([v for v, _ in got[c]])
        assert values.dtype.kind == "i", (token, values.dtype)
        missing = [m for _, m in got[c] if m is not None]
        assert len(missing) == 1 and missing[0].sum() == 1 and missing[0][0]
    p = np.concatenate([v for v, _ in got["p"]])
    assert p[1] == 1


def test_missing_tokens_in_a_string_column(tmp_path):
    # "none" (lower case) is a grade name, not a missing token
    path = tmp_path / "x.csv"
    path.write_bytes(_csv_bytes([["none", "mild"], ["None", "mild"], ["?", "none"]]))
    got = _read_all(open_source(str(path)), ["t"])
    ((values, missing),) = got["t"]
    assert values[0] == "none" and missing.tolist() == [False, True, True]


@pytest.mark.parametrize("word, value", [("1.0", 1), ("+3", 3), ("1e3", 1000), (" 7 ", 7),
                                         ("-0.0", 0), ("9223372036854775807", 2**63 - 1),
                                         ("-9223372036854775808", -(2**63)),
                                         ("9007199254740993.0", 2**53 + 1)])
def test_numbers_parse_exactly(tmp_path, word, value):
    path = tmp_path / "x.csv"
    path.write_bytes(_csv_bytes([[1, 1], [f'"{word}"', 1]]))
    got = _read_all(open_source(str(path)), ["t"])
    ((values, _),) = got["t"]
    assert values.dtype == np.int64 and values[1] == value


@pytest.mark.parametrize("word, message", [
    ("9223372036854775808", "outside the range of integer class labels"),
    ("-9223372036854775809", "outside the range of integer class labels"),
    ("1e400", "outside the range of integer class labels"),
    ("1e999999999", "outside the range of integer class labels"),
    ("inf", "not a class label"),
    ("-Infinity", "not a class label"),
    ("2.5", "not a class label"),
])
def test_numbers_that_are_not_classes_name_the_row(tmp_path, small_blocks, word, message):
    rows = [[i % 3, 1] for i in range(700)] + [[word, 1]] + [[1, 1]] * 10
    path = tmp_path / "x.csv"
    path.write_bytes(_csv_bytes(rows))
    with pytest.raises(DataError, match=rf"row 701: column 't' holds '{word}', .*{message}"):
        _read_all(open_source(str(path)), ["t"])


def test_first_block_number_out_of_range_names_the_row(tmp_path):
    # 2**63 wrapped to -2**63 before; several bad values: the first row is named
    path = tmp_path / "x.csv"
    path.write_bytes(_csv_bytes([[1, 1], [2**64, 1], [2**63, 1]]))
    with pytest.raises(DataError, match=r"row 2: column 't' holds '18446744073709551616'"):
        _read_all(open_source(str(path)), ["t"])


def test_parquet_integers_out_of_range_name_the_row(tmp_path):
    for arr in (pa.array([1, 2**63, 2], pa.uint64()), pa.array([1.0, 2.0**64, 2.0])):
        path = tmp_path / "x.parquet"
        pq.write_table(pa.table({"t": arr, "p": pa.array([1, 1, 1])}), path)
        with pytest.raises(DataError, match=r"row 2: column 't' holds .*outside the range"):
            _read_all(open_source(str(path)), ["t"])
    path = tmp_path / "d.parquet"
    dictionary = pa.DictionaryArray.from_arrays(pa.array([0, 1, 0], pa.int32()),
                                                pa.array([1, 2**63], pa.uint64()))
    pq.write_table(pa.table({"t": dictionary, "p": pa.array([1, 1, 1])}), path)
    with pytest.raises(DataError, match=r"row 2: column 't' holds .*outside the range"):
        _read_all(open_source(str(path)), ["t"])


def test_header_bounded_and_csv_errors(tmp_path, monkeypatch):
    monkeypatch.setattr(_io, "MAX_HEADER_BYTES", 1000)
    path = tmp_path / "x.csv"
    path.write_bytes(b"t" * 5000)
    with pytest.raises(DataError, match="header line is longer than 1,000 bytes"):
        open_source(str(path))
    path.write_bytes(gzip.compress(b"t" * 5000))
    with pytest.raises(DataError, match="header line is longer than 1,000 bytes"):
        open_source(str(path))
    with pytest.raises(DataError, match="header line is longer than 1,000 bytes"):
        open_source("-", stdin=io.BytesIO(b"t" * 5000))
    path.write_bytes(b"t,\xff\xfe\n1,1\n")
    with pytest.raises(DataError, match="header line is not UTF-8"):
        open_source(str(path))
    path.write_bytes(b"t," + b"p" * 140_000 + b"\n")
    monkeypatch.setattr(_io, "MAX_HEADER_BYTES", 1 << 20)
    with pytest.raises(DataError, match="cannot read the header line: field larger"):
        open_source(str(path))


def test_truncated_gzip_header_is_a_data_error(tmp_path):
    path = tmp_path / "x.csv.gz"
    path.write_bytes(gzip.compress(b"t,p\n" + b"1,1\n" * 10)[:12])
    with pytest.raises(DataError, match=r"cannot read .*x\.csv\.gz"):
        open_source(str(path))
    with pytest.raises(DataError, match=r"cannot read stdin: .*truncated"):
        open_source("-", stdin=io.BytesIO(path.read_bytes()))


def test_prefetch_reraises_keyboard_interrupt_without_waiting():
    import threading

    release = threading.Event()

    def slow():
        yield 1
        release.wait(30)  # a reader blocked on input that never comes
        yield 2

    import time

    it = _io._prefetched(slow(), 1)
    assert next(it) == 1
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        it.throw(KeyboardInterrupt)
    assert time.monotonic() - start < 10  # the blocked reader was not waited for
    release.set()


@pytest.mark.parametrize("word", [" NA", "None ", " - ", "NAN", "nAn", "+nan", "sNaN"])
def test_spaced_tokens_and_nan_spellings_are_missing(tmp_path, word):
    path = tmp_path / "x.csv"
    path.write_bytes(_csv_bytes([[f'"{word}"', 1], ["1.0", 1], [2, 2]]))
    ((values, missing),) = _read_all(open_source(str(path)), ["t"])["t"]
    assert values.dtype.kind == "i" and values[1:].tolist() == [1, 2]
    assert missing.tolist() == [True, False, False]


def test_missing_words_in_a_string_column_with_spaces(tmp_path):
    path = tmp_path / "x.csv"
    path.write_bytes(_csv_bytes([["mild", 1], ['" NA "', 1], ["Nan", 1], ["nano", 1]]))
    ((values, missing),) = _read_all(open_source(str(path)), ["t"])["t"]
    assert missing.tolist() == [False, True, True, False] and values[3] == "nano"


class _SlowPipe(io.RawIOBase):
    """A pipe whose first ``fast`` bytes are there at once and the rest trickle in."""

    def __init__(self, data: bytes, fast: int, delay: float):
        self.data, self.pos, self.fast, self.delay = data, 0, fast, delay
        self.reading = False

    def readable(self):
        return True

    def readinto(self, b):
        self.reading = True
        try:
            if self.pos >= self.fast:
                time.sleep(self.delay)
            n = min(len(b), len(self.data) - self.pos, 1 << 16)
            b[:n] = self.data[self.pos:self.pos + n]
            self.pos += n
            return n
        finally:
            self.reading = False


@pytest.mark.parametrize("prefetch", [0, 2])
def test_stdin_is_let_go_when_reading_stops_early(prefetch):
    """pyarrow reads stdin ahead on its own threads and, left alone, goes on
    after its reader is gone; a read still running when the interpreter exits
    aborts the process. Stopping early (an error in the first batch) must end
    every read before the caller gets control back."""
    data = b"t,p\n1,x\n" + b"1,2\n" * 4_000_000  # 16 MB, about 5 s to trickle in
    pipe = _SlowPipe(data, fast=(1 << 20) + (1 << 17), delay=0.02)
    src = open_source("-", stdin=pipe)
    with pytest.raises(DataError, match="stop"):
        for _ in iter_batches(src, ["t", "p"], prefetch=prefetch):
            raise DataError("stop at the first batch")
    assert not pipe.reading
    pos = pipe.pos
    time.sleep(0.5)
    assert pipe.pos == pos < len(data)
