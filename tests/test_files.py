"""fastkappa.files: score_file on CSV, Parquet and Arrow streams equals the in-memory API."""

import gzip
import json
import subprocess
import sys

import numba
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

import fastkappa as fk

pa = pytest.importorskip("pyarrow")
pcsv = pytest.importorskip("pyarrow.csv")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def graded():
    rng = np.random.default_rng(11)
    n = 2000
    t = rng.integers(0, 4, n)
    p = np.clip(t + rng.integers(-1, 2, n), 0, 3)
    site = rng.choice(["north", "south", "east"], n)
    patient = np.arange(n) // 2
    return {"y": t, "p": p, "site": site, "patient": patient}


@pytest.fixture(scope="module")
def paths(graded, tmp_path_factory):
    root = tmp_path_factory.mktemp("files")
    table = pa.table(graded)
    out = {"csv": root / "g.csv", "parquet": root / "g.parquet", "gz": root / "g.csv.gz"}
    pcsv.write_csv(table, out["csv"])
    pq.write_table(table, out["parquet"], row_group_size=300)
    out["gz"].write_bytes(gzip.compress(out["csv"].read_bytes()))
    return out


def _sources(graded, paths):
    """Every kind of source score_file takes, each holding ``graded``."""
    table = pa.table(graded)
    return {"csv": str(paths["csv"]), "gz": paths["gz"], "parquet": str(paths["parquet"]),
            "reader": pa.RecordBatchReader.from_batches(table.schema,
                                                        table.to_batches(max_chunksize=250)),
            "table": table}


@pytest.mark.parametrize("kind", ["csv", "gz", "parquet", "reader", "table"])
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_score_file_matches_sklearn(graded, paths, kind, weights):
    source = _sources(graded, paths)[kind]
    got = fk.files.score_file(source, true="y", pred="p", weights=weights)
    assert isinstance(got, float)
    assert got == pytest.approx(cohen_kappa_score(graded["y"], graded["p"], weights=weights),
                                rel=1e-12)


@pytest.mark.parametrize("kind", ["parquet", "reader"])
def test_score_file_interval_equals_kappa_ci(graded, paths, kind):
    source = _sources(graded, paths)[kind]
    got = fk.files.score_file(source, true="y", pred="p", weights="quadratic", method="bca",
                              n_resamples=300, seed=4)
    ref = fk.kappa_ci(graded["y"], graded["p"], weights="quadratic", method="bca",
                      n_resamples=300, seed=4)
    assert isinstance(got, fk.KappaCI)
    assert (got.estimate, got.low, got.high) == pytest.approx(
        (ref.estimate, ref.low, ref.high), rel=1e-12)


def test_score_file_clusters_equal_kappa_ci(graded, paths):
    got = fk.files.score_file(paths["csv"], true="y", pred="p", method="percentile",
                              n_resamples=300, seed=2, clusters="patient")
    ref = fk.kappa_ci(graded["y"], graded["p"], method="percentile", n_resamples=300,
                      seed=2, clusters=graded["patient"])
    assert (got.low, got.high) == pytest.approx((ref.low, ref.high), rel=1e-12)
    # and the same record of what reproduces it (seed, weights, rows, clusters)
    assert (got.seed, got.weights, got.n_rows, got.n_clusters) == (
        ref.seed, ref.weights, ref.n_rows, ref.n_clusters)
    assert got.seed == 2 and got.n_clusters == len(np.unique(graded["patient"]))


def test_score_file_by_equals_kappa_by_group(graded, paths):
    table = pa.table(graded)
    got = fk.files.score_file(table.to_reader(max_chunksize=128), true="y", pred="p",
                              weights="linear", by="site", method="asymptotic")
    ref = fk.kappa_by_group(graded["y"], graded["p"], graded["site"], weights="linear",
                            method="asymptotic")
    assert isinstance(got, fk.KappaByGroup)
    assert got.groups.tolist() == ref.groups.tolist()
    np.testing.assert_allclose(got.estimate, ref.estimate, rtol=1e-12)
    np.testing.assert_allclose(got.low, ref.low, rtol=1e-12)
    np.testing.assert_array_equal(got.n_rows, ref.n_rows)


def test_score_file_polars_dataframe(graded):
    pl = pytest.importorskip("polars")
    df = pl.DataFrame(graded)
    got = fk.files.score_file(df, true="y", pred="p", weights="quadratic")
    assert got == pytest.approx(cohen_kappa_score(graded["y"], graded["p"],
                                                  weights="quadratic"), rel=1e-12)


def test_score_file_duckdb_result(graded):
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.register("graded", pa.table(graded))
    res = con.sql("select y, p from graded where site <> 'east'")
    keep = graded["site"] != "east"
    got = fk.files.score_file(res, true="y", pred="p")  # through __arrow_c_stream__
    assert got == pytest.approx(cohen_kappa_score(graded["y"][keep], graded["p"][keep]),
                                rel=1e-12)


def test_score_file_string_labels_and_declared_classes(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("y,p\nlow,low\nhigh,high\nmid,high\nlow,mid\n")
    got = fk.files.score_file(path, true="y", pred="p", labels=["low", "mid", "high"],
                              weights="quadratic")
    y, p = ["low", "high", "mid", "low"], ["low", "high", "high", "mid"]
    assert got == pytest.approx(cohen_kappa_score(y, p, labels=["low", "mid", "high"],
                                                  weights="quadratic"), rel=1e-12)


def test_score_file_nan_policy(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("y,p\n0,0\n1,NA\n1,1\n0,1\n")
    with pytest.raises(ValueError, match=r"row 2: column 'p' is missing .*nan_policy='omit'"):
        fk.files.score_file(path, true="y", pred="p")
    got = fk.files.score_file(path, true="y", pred="p", nan_policy="omit")
    assert got == pytest.approx(cohen_kappa_score([0, 1, 0], [0, 1, 1]), rel=1e-12)
    with pytest.raises(ValueError, match=r"`nan_policy` must be 'raise' or 'omit'; got 'drop'"):
        fk.files.score_file(path, true="y", pred="p", nan_policy="drop")


def test_score_file_errors_name_python_options(tmp_path):
    path = tmp_path / "e.csv"
    path.write_text("y,p\n0,0\n1,5\n")
    with pytest.raises(fk.files.DataError,
                       match=r"row 2: column 'p' holds 5.*`labels=` or `n_classes=`"):
        fk.files.score_file(path, true="y", pred="p", n_classes=2)
    with pytest.raises(fk.files.DataError, match=r"has no column 'q'; its columns are"):
        fk.files.score_file(path, true="y", pred="q")
    with pytest.raises(ValueError, match=r"`pred=` names a column"):
        fk.files.score_file(path, true="y", pred=1)
    with pytest.raises(ValueError, match="method"):  # checked before the file is read
        fk.files.score_file(tmp_path / "absent.csv", true="y", pred="p", method="normal")


def test_score_file_source_errors():
    with pytest.raises(TypeError, match=r"file path or an Arrow stream .*got list"):
        fk.files.score_file([1, 2], true="y", pred="p")
    table = pa.table({"y": [0, 1], "p": [0, 1]})
    with pytest.raises(ValueError, match=r"`sep=` applies to CSV files only"):
        fk.files.score_file(table, true="y", pred="p", sep=";")
    reader = table.to_reader()
    assert fk.files.score_file(reader, true="y", pred="p") == 1.0
    with pytest.raises(fk.files.DataError, match="an Arrow stream is read once, so pass a new"):
        fk.files.score_file(reader, true="y", pred="p")


def test_score_file_empty_stream():
    table = pa.table({"y": pa.array([], pa.int64()), "p": pa.array([], pa.int64())})
    with pytest.raises(fk.files.DataError, match="holds no rows to score"):
        fk.files.score_file(table, true="y", pred="p")


def test_agreement_file_is_the_many_rater_engine():
    import fastkappa.agreement_files as fkf

    assert fk.files.agreement_file is fkf.agreement_file


def test_agreement_file_reads_arrow_streams():
    rng = np.random.default_rng(5)
    x = np.where(rng.random((300, 3)) < 0.7, rng.integers(0, 4, (300, 1)),
                 rng.integers(0, 4, (300, 3))).astype(float)
    x[rng.random(x.shape) < 0.15] = np.nan
    x[np.isnan(x).all(axis=1), 0] = 1.0
    items, raters = np.nonzero(~np.isnan(x))
    order = rng.permutation(len(items))
    long = pa.table({"doc": items[order], "who": np.array(["a", "b", "c"])[raters[order]],
                     "grade": x[items, raters][order].astype(np.int64)})
    want = fk.agreement(x, weights="linear")
    got = fk.files.agreement_file(long.to_reader(max_chunksize=100), item="doc", rater="who",
                                  label="grade", weights="linear")
    wide = pa.table({c: pa.array(x[:, j], from_pandas=True).cast(pa.int64())
                     for j, c in enumerate("abc")})
    got_wide = fk.files.agreement_file(wide, wide=["a", "b", "c"], weights="linear")
    for res in (got, got_wide):
        for r, w in zip(res.rows, want.rows, strict=True):
            assert r.coefficient == w.coefficient
            assert r.estimate == pytest.approx(w.estimate, abs=1e-12)
            assert r.standard_error == pytest.approx(w.standard_error, abs=1e-12)


@pytest.mark.parametrize("threads", [1, 2])
def test_sample_weights_zero_on_a_threads_slice_score_as_in_memory(tmp_path, threads):
    """Rows of weight 0 first (a sorted file): each thread's slice of a batch is
    scored on its own, and a slice of zero weights is no error."""
    rng = np.random.default_rng(0)
    n = 1000
    t, p = rng.integers(0, 3, n), rng.integers(0, 3, n)
    w = np.r_[np.zeros(500), rng.random(500)]
    path = tmp_path / "w.csv"
    path.write_text("t,p,w\n" + "".join(f"{a},{b},{float(c)!r}\n"
                                         for a, b, c in zip(t, p, w, strict=True)))
    zeros = tmp_path / "zeros.csv"
    zeros.write_text("t,p,w\n" + "".join(f"{a},{b},0\n" for a, b in zip(t, p, strict=True)))
    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        got = fk.files.score_file(str(path), true="t", pred="p", sample_weight="w")
        with pytest.raises(fk.files.DataError, match=r"weight column 'w' is zero on every"):
            fk.files.score_file(str(zeros), true="t", pred="p", sample_weight="w")
    finally:
        numba.set_num_threads(before)
    assert got == pytest.approx(fk.cohen_kappa(t, p, sample_weight=w), rel=1e-12)


def test_missing_value_message_speaks_the_file_format(tmp_path):
    # Parquet holds nulls, not text tokens: the message says so; CSV names its tokens
    table = pa.table({"t": pa.array([0, 1, None, 2]), "p": pa.array([0, 1, 1, 2])})
    path = tmp_path / "x.parquet"
    pq.write_table(table, path)
    with pytest.raises(fk.files.DataError, match=r"row 3: column 't' is missing \(a null or "
                                                 r"NaN\); pass nan_policy='omit'") as err:
        fk.files.score_file(str(path), true="t", pred="p")
    assert "token" not in str(err.value)
    csv = tmp_path / "x.csv"
    csv.write_text("t,p\n0,0\n1,1\nNA,1\n2,2\n")
    with pytest.raises(fk.files.DataError, match=r"row 3: column 't' is missing \(empty, or "
                                                 r"a missing-value token"):
        fk.files.score_file(str(csv), true="t", pred="p")
    assert fk.files.score_file(str(path), true="t", pred="p", nan_policy="omit") == 1.0


def test_csv_words_as_pandas_reads_them(tmp_path):
    """Numbers are plain ASCII numbers (``1_0`` and full-width digits are words, as
    pandas reads them); scores and weights may have spaces around them; ``--sep``
    takes ``\\t`` as a shell passes it; quoted values may hold line breaks
    anywhere in a file read in several blocks; a whole-number id beyond int64
    is refused, never merged with its neighbours through float64."""
    import pandas as pd

    path = tmp_path / "w.csv"
    path.write_text("y,p\n1_0,10\n2,2\n10,2\n2,1_0\n\uff11,2\n")
    df = pd.read_csv(path, dtype=str)
    assert fk.files.score_file(path, true="y", pred="p") == pytest.approx(
        cohen_kappa_score(df.y, df.p), abs=1e-12)
    path.write_text("y,p,w\n0,0,1.0\n1,1, 2.0\n1,0,1.5 \n")
    assert fk.files.score_file(path, true="y", pred="p", sample_weight="w") == (
        pytest.approx(cohen_kappa_score([0, 1, 1], [0, 1, 0], sample_weight=[1, 2, 1.5])))
    tsv = tmp_path / "t.txt"
    tsv.write_text("y\tp\n1\t1\n2\t2\n1\t2\n")
    want = cohen_kappa_score([1, 2, 1], [1, 2, 2])
    for sep in ("\t", "\\t", "tab"):
        assert fk.files.score_file(tsv, true="y", pred="p", sep=sep) == pytest.approx(want)
    with pytest.raises(ValueError, match="one character"):
        fk.files.score_file(tsv, true="y", pred="p", sep="ab")
    rng = np.random.default_rng(2)
    n = 120_000  # about 1.5 MB: more than one read block
    t = rng.integers(0, 3, n)
    p = np.where(rng.random(n) < 0.7, t, rng.integers(0, 3, n))
    note = np.where(rng.random(n) < 0.3, "line one\nline two", "ok")
    long = tmp_path / "notes.csv"
    pd.DataFrame({"note": note, "y": t, "p": p}).to_csv(long, index=False)
    assert fk.files.score_file(long, true="y", pred="p") == pytest.approx(
        cohen_kappa_score(t, p), abs=1e-12)
    big = tmp_path / "ids.csv"
    big.write_text("y,p,c\n" + "".join(f"{i % 3},{(i // 2) % 3},{10**19 + 4096 * (i // 2)}\n"
                                       for i in range(40)))
    with pytest.raises(fk.files.DataError, match="outside the int64 range; ids that large"):
        fk.files.score_file(big, true="y", pred="p", clusters="c", method="asymptotic")


def test_csv_numbers_are_ascii_and_ids_stay_exact(tmp_path):
    """Non-ASCII spaces make words (pandas reads such a column as strings); 19-digit
    ids beyond int64 are refused; large whole ids next to non-whole ones are
    refused rather than rounded; a command-line label ``1_0`` names the word
    ``1_0``."""
    import pandas as pd

    path = tmp_path / "s.csv"
    path.write_text("t,p\n1,1\n2\xa0,2\n2,2\u3000\n1,2\n2\xa0,2\xa0\n1,1\n")
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    assert fk.files.score_file(path, true="t", pred="p") == pytest.approx(
        cohen_kappa_score(df.t, df.p), abs=1e-12)
    for ids, why in ((["9300000000000000000", "9300000000000000001"], "outside the int64"),
                     (["9007199254740993", "0.5"], "float64 cannot hold exactly")):
        path.write_text("t,p,g\n" + "".join(f"{i % 2},{i % 2},{ids[i % 2]}\n"
                                            for i in range(20)))
        with pytest.raises(fk.files.DataError, match=why):
            fk.files.score_file(path, true="t", pred="p", by="g")
    path.write_text("t,p\n1_0,2_0\n2_0,2_0\n1_0,1_0\n")
    out = subprocess.run([sys.executable, "-m", "fastkappa", "score", str(path), "--true",
                          "t", "--pred", "p", "--labels", "1_0,2_0", "--format", "json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["kappa"] == pytest.approx(
        cohen_kappa_score(["1_0", "2_0", "1_0"], ["2_0", "2_0", "1_0"]))


def test_large_ids_next_to_non_whole_ones_and_exact_command_line_labels(tmp_path):
    """In a block read as float64 (it holds a non-whole id), an id float64 cannot
    hold exactly from 2**52 on is refused with its own row, while one it holds
    exactly (10**16) is scored; command-line labels with a point are exact."""
    import pandas as pd

    path = tmp_path / "g.csv"
    path.write_text("t,p,g\n0,0,0.5\n1,1,1\n1,0,9007199254740993.5\n0,1,9007199254740993\n")
    with pytest.raises(fk.files.DataError, match=r"row 3: .*'9007199254740993.5', a number "
                                                 r"of 2\*\*52 or more"):
        fk.files.score_file(path, true="t", pred="p", by="g")
    path.write_text("t,p,g\n" + "".join(f"{i % 2},{(i // 2) % 2},{g}\n" for i, g in enumerate(
        ["10000000000000000"] * 3 + ["0.5"] * 3)))
    df = pd.read_csv(path)
    got = fk.files.score_file(path, true="t", pred="p", by="g")
    want = fk.kappa_by_group(df.t, df.p, df.g)
    np.testing.assert_allclose(got.estimate, want.estimate)
    path.write_text("t,p\n9007199254740993,9007199254740993\n9007199254740993,0\n0,0\n"
                    "0,9007199254740993\n0,0\n")
    out = subprocess.run([sys.executable, "-m", "fastkappa", "score", str(path), "--true", "t",
                          "--pred", "p", "--labels", "0,9007199254740993.0", "--format",
                          "json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["kappa"] == pytest.approx(cohen_kappa_score(
        [9007199254740993, 9007199254740993, 0, 0, 0], [9007199254740993, 0, 0,
                                                         9007199254740993, 0]))


def test_ignore_index_among_an_ordered_categorical_columns_classes_is_refused(tmp_path):
    # the file's ordered categories declare the classes, as an ordered Categorical
    # does in one call (which refuses): score_file dropped the rows on both sides
    # and kept the class on the scale
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    t = rng.integers(0, 4, 3000)
    p = np.clip(t + rng.integers(-1, 2, 3000), 0, 4)
    cat = pd.CategoricalDtype(list("abcdef"), ordered=True)
    frame = pd.DataFrame({"t": pd.Categorical.from_codes(t, dtype=cat),
                          "p": pd.Categorical.from_codes(p, dtype=cat)})
    path = tmp_path / "ordered.parquet"
    frame.to_parquet(path, row_group_size=1000, index=False)
    clash = "`ignore_index` is 'a', one of the declared classes"
    with pytest.raises(ValueError, match=clash):
        fk.cohen_kappa(frame.t, frame.p, ignore_index="a")
    with pytest.raises(ValueError, match=clash):
        fk.files.score_file(path, true="t", pred="p", ignore_index="a")
    assert fk.files.score_file(path, true="t", pred="p", ignore_index="z") == pytest.approx(
        fk.cohen_kappa(frame.t, frame.p), abs=1e-12)
