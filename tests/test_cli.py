"""The fastkappa command line, in-process (main(argv)) and as a subprocess."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

import fastkappa as fk
from fastkappa.cli import main, make_parser

pa = pytest.importorskip("pyarrow")
pcsv = pytest.importorskip("pyarrow.csv")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def graded():
    """A small graded set: grades 0-4, two models, sites, patients (two rows each)."""
    rng = np.random.default_rng(7)
    n = 3000
    t = rng.integers(0, 5, n)
    a = np.clip(t + rng.integers(-1, 2, n), 0, 4)
    b = np.clip(t + rng.integers(-2, 3, n), 0, 4)
    score = t + rng.normal(0, 0.6, n)
    site = rng.choice(["north", "south", "east"], n)
    patient = np.arange(n) // 2
    return {"grade": t, "model_a": a, "model_b": b, "score": score, "site": site,
            "patient": patient}


@pytest.fixture(scope="module")
def files(graded, tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    table = pa.table(graded)
    paths = {"csv": root / "graded.csv", "parquet": root / "graded.parquet",
             "gz": root / "graded.csv.gz"}
    pcsv.write_csv(table, paths["csv"])
    pq.write_table(table, paths["parquet"], row_group_size=700)
    paths["gz"].write_bytes(gzip.compress(paths["csv"].read_bytes()))
    return {k: str(v) for k, v in paths.items()}


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def run_json(argv, capsys):
    code, out, err = run([*argv, "--format", "json"], capsys)
    assert code == 0, err
    return json.loads(out)


# --------------------------------------------------------------------------- score


@pytest.mark.parametrize("kind", ["csv", "parquet", "gz"])
@pytest.mark.parametrize("weights", ["none", "linear", "quadratic"])
def test_main_score_matches_sklearn(files, graded, capsys, kind, weights):
    res = run_json(["score", files[kind], "--true", "grade", "--pred", "model_a",
                    "--weights", weights], capsys)
    expected = cohen_kappa_score(graded["grade"], graded["model_a"],
                                 weights=None if weights == "none" else weights)
    assert res["kappa"] == pytest.approx(expected, rel=1e-12)
    assert res["n_rows"] == 3000 and res["labels"] == [0, 1, 2, 3, 4]
    np.testing.assert_array_equal(
        res["confusion"], fk.confusion_matrix(graded["grade"], graded["model_a"]))


def test_main_score_text_and_csv(files, graded, capsys):
    code, out, _ = run(["score", files["csv"], "--true", "grade", "--pred", "model_b",
                        "--weights", "quadratic", "--method", "asymptotic"], capsys)
    assert code == 0
    ci = fk.kappa_ci(graded["grade"], graded["model_b"], weights="quadratic",
                     method="asymptotic")
    assert f"kappa = {ci.estimate:.4f} (95% CI {ci.low:.4f} to {ci.high:.4f}, asymptotic)" in out
    assert "3,000 rows" in out and "confusion matrix" in out
    code, out, _ = run(["score", files["csv"], "--true", "grade", "--pred", "model_b",
                        "--weights", "quadratic", "--method", "asymptotic", "--format", "csv"],
                       capsys)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 1 and rows[0]["level"] == "overall"
    assert float(rows[0]["kappa"]) == ci.estimate
    assert float(rows[0]["low"]) == pytest.approx(ci.low, rel=1e-12)


@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_main_score_ci_matches_kappa_ci(files, graded, capsys, method):
    res = run_json(["score", files["parquet"], "--true", "grade", "--pred", "model_a",
                    "--weights", "quadratic", "--method", method, "--n-resamples", "400",
                    "--seed", "5", "--confidence-level", "0.9"], capsys)
    ci = fk.kappa_ci(graded["grade"], graded["model_a"], weights="quadratic", method=method,
                     n_resamples=400, seed=5, confidence_level=0.9)
    assert res["ci"]["low"] == pytest.approx(ci.low, rel=1e-12)
    assert res["ci"]["high"] == pytest.approx(ci.high, rel=1e-12)
    assert res["ci"]["n_resamples"] == 400 and res["ci"]["confidence_level"] == 0.9


def test_main_score_clusters(files, graded, capsys):
    res = run_json(["score", files["csv"], "--true", "grade", "--pred", "model_a",
                    "--weights", "quadratic", "--method", "bca", "--n-resamples", "300",
                    "--seed", "1", "--clusters", "patient"], capsys)
    ci = fk.kappa_ci(graded["grade"], graded["model_a"], weights="quadratic", method="bca",
                     n_resamples=300, seed=1, clusters=graded["patient"])
    assert res["ci"]["low"] == pytest.approx(ci.low, rel=1e-12)
    assert res["ci"]["high"] == pytest.approx(ci.high, rel=1e-12)
    assert res["clusters"] == "patient"


def test_main_score_by_group(files, graded, capsys):
    res = run_json(["score", files["gz"], "--true", "grade", "--pred", "model_b",
                    "--weights", "linear", "--by", "site", "--method", "asymptotic"], capsys)
    ref = fk.kappa_by_group(graded["grade"], graded["model_b"], graded["site"],
                            weights="linear", method="asymptotic")
    assert [g["group"] for g in res["groups"]] == ref.groups.tolist()
    np.testing.assert_allclose([g["kappa"] for g in res["groups"]], ref.estimate, rtol=1e-12)
    np.testing.assert_allclose([g["ci"]["low"] for g in res["groups"]], ref.low, rtol=1e-12)
    assert [g["n_rows"] for g in res["groups"]] == ref.n_rows.tolist()
    code, out, _ = run(["score", files["gz"], "--true", "grade", "--pred", "model_b",
                        "--by", "site", "--format", "csv"], capsys)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and [r["group"] for r in rows] == ["", "east", "north", "south"]


def test_main_score_declared_classes(tmp_path, capsys):
    path = tmp_path / "x.csv"
    path.write_text("t,p\n0,0\n1,1\n1,0\n")
    res = run_json(["score", str(path), "--true", "t", "--pred", "p", "--weights",
                    "quadratic", "--n-classes", "4"], capsys)
    assert res["labels"] == [0, 1, 2, 3]
    assert res["kappa"] == pytest.approx(
        fk.cohen_kappa([0, 1, 1], [0, 1, 0], weights="quadratic", n_classes=4))
    path.write_text("t,p\nnone,none\nmild,severe\nsevere,mild\nmild,mild\n")
    res = run_json(["score", str(path), "--true", "t", "--pred", "p", "--weights", "linear",
                    "--labels", "none,mild,severe"], capsys)
    assert res["labels"] == ["none", "mild", "severe"]
    assert res["kappa"] == pytest.approx(fk.cohen_kappa(
        ["none", "mild", "severe", "mild"], ["none", "severe", "mild", "mild"],
        weights="linear", labels=["none", "mild", "severe"]))


def test_main_score_json_nan_is_null(tmp_path, capsys):
    path = tmp_path / "x.csv"
    path.write_text("t,p\n1,1\n1,1\n")
    code, out, err = run(["score", str(path), "--true", "t", "--pred", "p", "--format",
                          "json"], capsys)
    assert code == 0
    assert "NaN" not in out and json.loads(out)["kappa"] is None
    assert "warning: kappa is undefined" in err


def test_main_score_nan_policy(tmp_path, capsys):
    path = tmp_path / "x.csv"
    path.write_text("t,p\n0,0\n1,\n1,1\n0,1\n")
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p"], capsys)
    assert code == 1
    assert "row 2: column 'p' is missing" in err and "--nan-policy omit" in err
    res = run_json(["score", str(path), "--true", "t", "--pred", "p", "--nan-policy", "omit"],
                   capsys)
    assert res["n_rows"] == 3
    assert res["kappa"] == pytest.approx(cohen_kappa_score([0, 1, 0], [0, 1, 1]))


# --------------------------------------------------------------------------- errors


def test_main_missing_column_lists_columns(files, capsys):
    code, _, err = run(["score", files["csv"], "--true", "grade", "--pred", "model_z"], capsys)
    assert code == 1
    assert ("has no column 'model_z'; its columns are 'grade', 'model_a', 'model_b', 'score', "
            "'site', 'patient'") in err


def test_main_bad_value_names_row(tmp_path, capsys):
    path = tmp_path / "x.csv"
    path.write_text("t,p\n0,0\n1,1\n2,7\n")
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p", "--n-classes", "3"],
                       capsys)
    assert code == 1
    assert "row 3: column 'p' holds 7, which is not one of the declared classes [0, 1, 2]" in err
    path.write_text("t,p\n0,0\n1,1.5\n")
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p"], capsys)
    assert code == 1 and "row 2: column 'p' holds '1.5', which is not a class label" in err
    # row numbers count dropped rows too
    path.write_text("t,p\n0,\n1,1\n2,9\n")
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p", "--n-classes", "3",
                        "--nan-policy", "omit"], capsys)
    assert code == 1 and "row 3: column 'p' holds 9" in err


def test_main_data_errors_exit_1(tmp_path, capsys):
    path = tmp_path / "x.csv"
    path.write_text("t,p\nmild,none\nnone,none\n")
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p", "--weights",
                        "quadratic"], capsys)
    assert code == 1 and "weighted kappa needs ordered classes" in err
    code, _, err = run(["score", str(tmp_path / "nope.csv"), "--true", "t", "--pred", "p"],
                       capsys)
    assert code == 1 and "no such file" in err
    path.write_text("t,p\n")
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p"], capsys)
    assert code == 1 and "holds no rows to score" in err


@pytest.mark.parametrize("argv, message", [
    (["score", "x.csv", "--true", "t"], "the following arguments are required: --pred"),
    (["score", "x.csv", "--true", "t", "--pred", "p", "--labels", "0,1", "--n-classes", "2"],
     "not allowed with argument"),
    (["score", "x.csv", "--true", "t", "--pred", "p", "--weights", "quad"], "invalid choice"),
    (["score", "x.csv", "--true", "t", "--pred", "p", "--threads", "0"],
     "expected a positive integer"),
    (["score", "x.csv", "--true", "t", "--pred", "p", "--confidence-level", "95"],
     r"expected a number in \(0, 1\)"),
    (["score", "x.csv", "--true", "t", "--pred", "p", "--labels", "0,,1"],
     "comma-separated class labels"),
    (["frobnicate"], "invalid choice"),
    ([], "required: COMMAND"),
])
def test_main_usage_errors_exit_2(argv, message, capsys):
    code, _, err = run(argv, capsys)
    assert code == 2
    import re

    assert re.search(message, err), err


def test_main_usage_errors_of_values_exit_2(files, capsys):
    code, _, err = run(["score", files["csv"], "--true", "grade", "--pred", "model_a",
                        "--threads", "100000"], capsys)
    assert code == 2 and "more than the" in err
    code, _, err = run(["compare", files["csv"], "--true", "grade", "--pred", "model_a",
                        "model_b", "--reference", "model_c"], capsys)
    assert code == 2 and "--reference 'model_c' must be one of the --pred columns" in err
    code, _, err = run(["compare", files["csv"], "--true", "grade", "--pred", "model_a"],
                       capsys)
    assert code == 2 and "two or more --pred columns" in err


def test_main_help_and_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("fastkappa ")
    assert main(["score", "--help"]) == 0
    assert "--true COL" in capsys.readouterr().out


def test_main_threads(files, graded, capsys):
    import numba

    before = numba.get_num_threads()
    try:
        res = run_json(["score", files["parquet"], "--true", "grade", "--pred", "model_a",
                        "--threads", "1"], capsys)
        assert numba.get_num_threads() == 1
    finally:
        numba.set_num_threads(before)
    assert res["kappa"] == pytest.approx(cohen_kappa_score(graded["grade"], graded["model_a"]))


# ------------------------------------------------------- Parquet row groups in parallel


@pytest.fixture
def parallel_units(monkeypatch):
    """Small work units, so that the small test files are read in parallel;
    counts the parallel runs."""
    from fastkappa import _io, files

    monkeypatch.setattr(_io, "PARQUET_BATCH_ROWS", 600)
    calls = []
    inner = files._score_row_groups

    def spy(*a, **kw):
        calls.append(a[1].name)
        return inner(*a, **kw)

    monkeypatch.setattr(files, "_score_row_groups", spy)
    return calls


def test_row_group_units_pack_small_groups():
    from fastkappa._io import Source

    src = Source("x", "parquet", [], 0, None, [3, 4, 10, 1, 1, 1, 2])
    assert src.row_group_units(5) == [(1, [0, 1]), (8, [2]), (18, [3, 4, 5, 6])]
    assert src.row_group_units(100) == [(1, [0, 1, 2, 3, 4, 5, 6])]
    assert src.row_group_units(1) == [(1, [0]), (4, [1]), (8, [2]), (18, [3]), (19, [4]),
                                      (20, [5]), (21, [6])]


def _threads(argv, capsys, n):
    import numba

    before = numba.get_num_threads()
    try:
        return run_json([*argv, "--threads", str(n)], capsys)
    finally:
        numba.set_num_threads(before)


def test_main_row_groups_in_parallel_match_one_thread(files, graded, capsys, parallel_units):
    """The parallel row-group path (5 row groups) against the one-thread path and the library."""
    assert len(pq.ParquetFile(files["parquet"]).metadata.to_dict()["row_groups"]) == 5
    argv = ["score", files["parquet"], "--true", "grade", "--pred", "model_b", "--weights",
            "quadratic", "--method", "bca", "--n-resamples", "300", "--seed", "2", "--clusters",
            "patient", "--by", "site"]
    one, two = _threads(argv, capsys, 1), _threads(argv, capsys, 2)
    assert one == two and len(parallel_units) == 1  # two threads: the parallel path
    ci = fk.kappa_ci(graded["grade"], graded["model_b"], weights="quadratic", method="bca",
                     n_resamples=300, seed=2, clusters=graded["patient"])
    assert two["kappa"] == pytest.approx(ci.estimate, rel=1e-12)
    assert two["ci"]["low"] == pytest.approx(ci.low, rel=1e-12)  # rows kept in file order
    assert two["ci"]["high"] == pytest.approx(ci.high, rel=1e-12)
    ref = fk.kappa_by_group(graded["grade"], graded["model_b"], graded["site"],
                            weights="quadratic")
    assert [g["group"] for g in two["groups"]] == ref.groups.tolist()
    assert [g["n_rows"] for g in two["groups"]] == ref.n_rows.tolist()
    np.testing.assert_allclose([g["kappa"] for g in two["groups"]], ref.estimate, rtol=1e-12)


def _page_reader(on: bool, monkeypatch) -> None:
    """Switch off the reader of dictionary pages (``fastkappa._parquet_pages``), with
    which a plain score reads row groups whatever the number of threads."""
    from fastkappa import files
    from fastkappa._core import config

    if on:
        monkeypatch.setattr(config, "PAGES_MIN_ROWS", 0)
        monkeypatch.setattr(config, "PAGES_MIN_GROUP_ROWS", 0)
    else:
        monkeypatch.setattr(files, "_by_pairs", lambda spec, src, cells: False)


@pytest.mark.parametrize("pages", [True, False])
@pytest.mark.parametrize("kind", ["int", "str"])
def test_main_row_groups_learn_different_labels(tmp_path, capsys, kind, parallel_units,
                                                pages, monkeypatch):
    """Each row group holds its own labels: the merged result has the sorted union."""
    _page_reader(pages, monkeypatch)
    t = np.array([0, 1, 1, 0, 5, 7, 7, 5, 2, 2, 9, 9])
    p = np.array([0, 1, 0, 0, 5, 7, 5, 5, 2, 9, 9, 2])
    if kind == "str":
        t, p = np.array([f"g{v}" for v in t]), np.array([f"g{v}" for v in p])
    path = tmp_path / "groups.parquet"
    pq.write_table(pa.table({"t": t, "p": p}), path, row_group_size=4)
    from fastkappa import _io

    _io.PARQUET_BATCH_ROWS = 4  # one row group per unit (the fixture restores it)
    one = _threads(["score", str(path), "--true", "t", "--pred", "p"], capsys, 1)
    two = _threads(["score", str(path), "--true", "t", "--pred", "p"], capsys, 2)
    assert one == two and len(parallel_units) == (2 if pages else 1)
    assert two["labels"] == np.unique(np.concatenate([t, p])).tolist()
    assert two["kappa"] == pytest.approx(cohen_kappa_score(t, p), rel=1e-12)
    np.testing.assert_array_equal(two["confusion"], fk.confusion_matrix(t, p))


@pytest.mark.parametrize("pages", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
def test_main_row_groups_report_the_first_bad_row(tmp_path, capsys, threads, parallel_units,
                                                  pages, monkeypatch):
    """Bad values in several row groups: the error names the first in file order."""
    import numba

    _page_reader(pages, monkeypatch)
    n = 4000
    t = np.zeros(n, dtype=np.int64)
    p = np.zeros(n, dtype=np.int64)
    p[2500] = 9  # row group 2 (data rows 2001-3000)
    p[3999] = 8  # row group 3
    t[1234] = -1  # row group 1, data row 1235: the first
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"t": t, "p": p}), path, row_group_size=1000)
    before = numba.get_num_threads()
    try:
        for _ in range(3):  # whichever worker meets which error first
            code, _, err = run(["score", str(path), "--true", "t", "--pred", "p",
                                "--n-classes", "3", "--threads", str(threads)], capsys)
            assert code == 1
            assert "row 1235: column 't' holds -1, which is not one of the declared" in err
        assert len(parallel_units) == (3 if threads == 2 or pages else 0)
        t[1234] = 0
        p[10] = 7  # whole-number floats are labels too
        pq.write_table(pa.table({"t": t, "p": p.astype(np.float64)}), path,
                       row_group_size=1000)
        code, _, err = run(["score", str(path), "--true", "t", "--pred", "p",
                            "--n-classes", "3", "--threads", str(threads)], capsys)
        assert code == 1 and "row 11: column 'p' holds" in err
    finally:
        numba.set_num_threads(before)


def test_main_row_groups_missing_values(tmp_path, capsys, parallel_units):
    t = pa.array([0, 1, 2, None, 1, 0, 2, 2, 1], pa.int64())
    p = pa.array([0, 1, 2, 1, 1, None, 2, 1, 1], pa.int64())
    path = tmp_path / "na.parquet"
    pq.write_table(pa.table({"t": t, "p": p}), path, row_group_size=3)
    from fastkappa import _io

    _io.PARQUET_BATCH_ROWS = 3  # one row group per unit (the fixture restores it)
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p"], capsys)
    assert code == 1 and "row 4: column 't' is missing" in err
    res = _threads(["score", str(path), "--true", "t", "--pred", "p", "--nan-policy", "omit"],
                   capsys, 2)
    keep = [0, 1, 2, 4, 6, 7, 8]
    tv, pv = np.array(t.to_pylist(), dtype=object), np.array(p.to_pylist(), dtype=object)
    expected = cohen_kappa_score(tv[keep].astype(int), pv[keep].astype(int))
    assert res["n_rows"] == 7 and res["kappa"] == pytest.approx(expected, rel=1e-12)
    assert len(parallel_units) == 2


def test_make_parser_progress_only_on_terminals(monkeypatch):
    from fastkappa.cli import _common as cli

    args = make_parser().parse_args(["score", "f", "--true", "a", "--pred", "b"])

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", Tty())
    assert cli._progress(args)
    args.quiet = True
    assert not cli._progress(args)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    args.quiet = False
    assert not cli._progress(args)


def test_main_progress_bar_on_terminals(files, monkeypatch, capsys):
    from fastkappa import _io

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(_io, "PROGRESS_DELAY", 0.0)
    monkeypatch.setattr(_io, "CSV_BLOCK_SIZE", 1 << 12)
    monkeypatch.setattr(_io, "PARQUET_BATCH_ROWS", 600)  # row groups read in parallel
    for kind in ("csv", "parquet"):
        argv = ["score", files[kind], "--true", "grade", "--pred", "model_a"]
        for quiet, shown in (([], True), (["--quiet"], False)):
            fake = Tty()
            monkeypatch.setattr(sys, "stderr", fake)
            assert main([*argv, *quiet]) == 0
            assert ("rows" in fake.getvalue()) is shown
    capsys.readouterr()


# --------------------------------------------------------------------------- compare


def test_main_compare(files, graded, capsys):
    res = run_json(["compare", files["parquet"], "--true", "grade", "--pred", "model_a",
                    "model_b", "--n-resamples", "300", "--seed", "2", "--clusters",
                    "patient", "--weights", "quadratic"], capsys)
    ref = fk.compare(graded["grade"], {"model_a": graded["model_a"],
                                       "model_b": graded["model_b"]},
                     weights="quadratic", n_resamples=300, seed=2, clusters=graded["patient"])
    assert res["models"]["model_a"]["estimate"] == pytest.approx(
        ref.models["model_a"].estimate, rel=1e-12)
    (pair,) = res["pairs"]
    assert pair["difference"] == pytest.approx(ref.pairs[0].difference, rel=1e-12)
    assert pair["low"] == pytest.approx(ref.pairs[0].low, rel=1e-12)
    for fmt in ("text", "csv"):
        code, out, _ = run(["compare", files["csv"], "--true", "grade", "--pred", "model_a",
                            "model_b", "--n-resamples", "200", "--format", fmt,
                            "--reference", "model_b"], capsys)
        assert code == 0 and "model_a" in out


# --------------------------------------------------------------------------- thresholds


def test_main_thresholds(files, graded, capsys):
    res = run_json(["thresholds", files["csv"], "--true", "grade", "--score", "score",
                    "--cv", "3", "--seed", "0"], capsys)
    opt = fk.ThresholdOptimizer(cv=3, seed=0).fit(graded["grade"], graded["score"])
    np.testing.assert_allclose(res["thresholds"], opt.thresholds_, rtol=1e-12)
    assert res["kappa"] == pytest.approx(opt.qwk_, rel=1e-12)
    assert res["cv_kappa"] == pytest.approx(opt.cv_qwk_, rel=1e-12)
    code, out, _ = run(["thresholds", files["parquet"], "--true", "grade", "--score", "score",
                        "--format", "csv"], capsys)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and len(rows) == 4 and rows[0]["cut"] == "1"


def test_main_thresholds_bad_score_names_row(tmp_path, capsys):
    path = tmp_path / "x.csv"
    path.write_text("t,s\n0,0.1\n1,high\n")
    code, _, err = run(["thresholds", str(path), "--true", "t", "--score", "s"], capsys)
    assert code == 1 and "row 2: column 's' holds 'high', which is not a number" in err


# --------------------------------------------------------------------------- demo


def test_main_demo(capsys):
    from fastkappa.data import load_fleiss_1969, load_retinopathy

    res = run_json(["demo", "--n-resamples", "200", "--no-figures"], capsys)
    d = load_retinopathy()
    assert len(d["y_true"]) >= 100_000
    for m in ("model_a", "model_b", "model_c"):
        assert res["models"][m]["estimate"] == pytest.approx(
            cohen_kappa_score(d["y_true"], d[m], weights="quadratic"), rel=1e-12)
        assert res["models"][m]["low"] < res["models"][m]["estimate"] < res["models"][m]["high"]
    assert res["best_model"] == "model_a"
    diffs = {(pr["a"], pr["b"]): pr for pr in res["comparison"]}
    assert len(diffs) == 3
    ab = diffs[("model_a", "model_b")]
    assert ab["difference"] == pytest.approx(
        res["models"]["model_a"]["estimate"] - res["models"]["model_b"]["estimate"], rel=1e-9)
    assert ab["low"] < ab["difference"] < ab["high"] and ab["p_adjusted"] >= ab["p_value"]
    np.testing.assert_array_equal(res["confusion"], fk.confusion_matrix(d["y_true"],
                                                                        d["model_a"]))
    assert res["published_table"]["estimate"] == pytest.approx(3 / 7, rel=1e-12)
    assert load_fleiss_1969()["kappa"] == pytest.approx(3 / 7)
    code, out, _ = run(["demo", "--n-resamples", "200", "--no-figures"], capsys)
    assert code == 0 and "model_a" in out and "Fleiss" in out
    code, out, _ = run(["demo", "--n-resamples", "200", "--no-figures", "--format", "csv"],
                        capsys)
    assert code == 0 and out.startswith("kind,name,estimate")


def test_main_demo_figures(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    folder = tmp_path / "figs"
    res = run_json(["demo", "--n-resamples", "200", "--figures", str(folder)], capsys)
    assert len(res["figures"]) >= 4
    for path in res["figures"]:
        with open(path, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_demo_data_regenerates_identically(tmp_path):
    from fastkappa.data import load_retinopathy, make_demo_data

    path = make_demo_data.main(str(tmp_path / "again.npz"))
    with np.load(path) as again:
        shipped = load_retinopathy()
        for key, values in shipped.items():
            np.testing.assert_array_equal(again[key], values)
    assert os.path.getsize(path) < 1_000_000


# --------------------------------------------------------------------------- subprocess


def _python(args, **kw):
    return subprocess.run([sys.executable, "-m", "fastkappa", *args], capture_output=True,
                          timeout=300, **kw)


def _subcommand_cases(files):
    return [
        ["demo", "--n-resamples", "200", "--no-figures"],  # figures: test_main_demo_*
        ["score", files["parquet"], "--true", "grade", "--pred", "model_a", "--weights",
         "quadratic", "--method", "bca", "--n-resamples", "200", "--by", "site"],
        ["compare", files["csv"], "--true", "grade", "--pred", "model_a", "model_b",
         "--n-resamples", "200"],
        ["thresholds", files["gz"], "--true", "grade", "--score", "score"],
    ]


def _check_output(out: str, fmt: str) -> None:
    if fmt == "json":
        json.loads(out)
    elif fmt == "csv":
        assert len(list(csv.reader(io.StringIO(out)))) >= 2
    else:
        assert out.strip()


@pytest.mark.parametrize("fmt", ["text", "json", "csv"])
def test_main_every_subcommand_and_format(files, capsys, fmt):
    for argv in _subcommand_cases(files):
        code, out, err = run([*argv, "--format", fmt], capsys)
        assert code == 0, err
        _check_output(out, fmt)


def test_subprocess_every_subcommand(files):
    # one subprocess per subcommand, the formats taking turns
    for argv, fmt in zip(_subcommand_cases(files), ["text", "json", "csv", "csv"],
                         strict=True):
        proc = _python([*argv, "--format", fmt, "--threads", "1"])
        assert proc.returncode == 0, proc.stderr.decode()
        _check_output(proc.stdout.decode(), fmt)
        assert proc.stderr == b""  # no progress bar when stderr is not a terminal
    proc = subprocess.run(["fastkappa", "demo", "--n-resamples", "200", "--no-figures",
                           "--format", "json"],
                          capture_output=True, timeout=300)  # the console script
    assert proc.returncode == 0 and json.loads(proc.stdout)["best_model"] == "model_a"


def test_subprocess_stdin_plain_and_gzip(files, graded):
    expected = cohen_kappa_score(graded["grade"], graded["model_b"], weights="quadratic")
    for path in (files["csv"], files["gz"], files["parquet"]):
        with open(path, "rb") as f:
            proc = _python(["score", "-", "--true", "grade", "--pred", "model_b", "--weights",
                            "quadratic", "--format", "json"], stdin=f)
        assert proc.returncode == 0, proc.stderr.decode()
        res = json.loads(proc.stdout)
        assert res["file"] == "stdin" and res["kappa"] == pytest.approx(expected, rel=1e-12)


def test_subprocess_exit_codes(files):
    proc = _python(["score", files["csv"], "--true", "grade", "--pred", "nope"])
    assert proc.returncode == 1 and b"its columns are" in proc.stderr
    proc = _python(["score", files["csv"], "--true", "grade"])
    assert proc.returncode == 2 and b"--pred" in proc.stderr
    proc = subprocess.run([sys.executable, "-c", "import sys; from fastkappa.cli import main; "
                           "sys.exit(main(['score', '-', '--true', 'a', '--pred', 'b']))"],
                          input=b"a,b\n1,x\n", capture_output=True, timeout=120)
    assert proc.returncode == 1
    assert b"row 1: column 'b' holds 'x', but column 'a' holds numbers" in proc.stderr


# --------------------------------------------------------------------------- memory


MEMORY_SCRIPT = textwrap.dedent("""
    import gc, os, sys, threading
    import psutil
    from fastkappa.cli import main

    # getrusage's ru_maxrss starts from the parent's RSS after fork + exec, so the
    # peak is read from VmHWM (Linux, reset after the warm-up) or sampled
    def hwm():
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            return 0
        return 0

    big, small = sys.argv[1], sys.argv[2]
    argv = ["--true", "t", "--pred", "p", "--weights", "quadratic", "--quiet"]
    sys.stdout = open(os.devnull, "w")
    assert main(["score", small, *argv]) == 0  # warm-up: numba, pyarrow, the CLI
    gc.collect()
    proc = psutil.Process()
    base = proc.memory_info().rss
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset the peak (VmHWM) to the current RSS
    except OSError:
        pass
    sampled = [base]
    done = threading.Event()

    def sample():
        while not done.wait(0.002):
            sampled.append(proc.memory_info().rss)

    sampler = threading.Thread(target=sample)
    sampler.start()
    assert main(["score", big, *argv, "--format", "json"]) == 0
    done.set()
    sampler.join()
    sys.stdout = sys.__stdout__
    print(base, max(max(sampled), hwm()))
""")


@pytest.mark.slow
def test_main_score_memory_bounded(tmp_path):
    pytest.importorskip("psutil")
    rng = np.random.default_rng(0)
    n = 10_000_000
    t = rng.integers(0, 5, n, dtype=np.int8)
    p = np.clip(t + rng.integers(-1, 2, n, dtype=np.int8), 0, 4).astype(np.int8)
    big, small = tmp_path / "big.csv", tmp_path / "small.csv"
    pcsv.write_csv(pa.table({"t": t, "p": p}), big)
    # the warm-up file spans several blocks and update slices, so that every code
    # path (and numba compilation, if the kernel cache is cold) runs before measuring
    pcsv.write_csv(pa.table({"t": t[:600_000], "p": p[:600_000]}), small)
    del t, p
    proc = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, str(big), str(small)],
                          capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    base, peak = (int(v) for v in proc.stdout.split())
    growth = peak - base
    print(f"RSS after warm-up {base / 2**20:.0f} MB, peak {peak / 2**20:.0f} MB")
    assert growth < 100 * 2**20, f"peak RSS grew by {growth / 2**20:.0f} MB"


# --------------------------------------------------------------------------- figures


def _png_is_drawn(path) -> None:
    """The file is a PNG with something drawn on it (not one flat colour)."""
    import matplotlib.image as mpimg

    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    img = mpimg.imread(path)
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    assert img[..., :3].var() > 1e-3, f"{path} is blank"


@pytest.fixture
def saved_figures(monkeypatch):
    """The Figures the CLI saves, in order (the files are still written)."""
    pytest.importorskip("matplotlib")
    from fastkappa.cli import figures

    saved = []
    original = figures._save_figure

    def spy(fig, path):
        saved.append(fig)
        return original(fig, path)

    monkeypatch.setattr(figures, "_save_figure", spy)
    return saved


def _gid_lines(ax, gid):
    return [ln for ln in ax.lines if ln.get_gid() == gid]


def _gid_segments(ax):
    (coll,) = [c for c in ax.collections if c.get_gid() == "fastkappa-interval"]
    segs = np.array(coll.get_segments())
    return segs[np.argsort(segs[:, 0, 1])]


def test_main_score_plot_writes_the_confusion_bootstrap_and_groups(files, graded, tmp_path,
                                                                   capsys, saved_figures):
    path = tmp_path / "score.png"
    argv = ["score", files["parquet"], "--true", "grade", "--pred", "model_a", "--weights",
            "quadratic", "--method", "percentile", "--n-resamples", "300", "--seed", "3",
            "--by", "site", "--plot", str(path)]
    code, out, err = run(argv, capsys)
    assert code == 0, err
    assert f"figure: {path}" in out
    _png_is_drawn(path)
    (fig,) = saved_figures
    conf, boot, forest = [ax for ax in fig.get_axes() if ax.get_label() != "<colorbar>"]
    t, p = graded["grade"], graded["model_a"]
    np.testing.assert_array_equal(np.asarray(conf.images[0].get_array()),
                                  fk.confusion_matrix(t, p))
    ci = fk.kappa_ci_from_confusion(fk.confusion_matrix(t, p), weights="quadratic",
                                    method="percentile", n_resamples=300, seed=3)
    (est,) = _gid_lines(boot, "fastkappa-estimate")
    assert est.get_xdata()[0] == pytest.approx(ci.estimate, rel=1e-12)
    assert _gid_lines(boot, "fastkappa-low")[0].get_xdata()[0] == pytest.approx(ci.low,
                                                                                 rel=1e-12)
    assert _gid_lines(boot, "fastkappa-high")[0].get_xdata()[0] == pytest.approx(ci.high,
                                                                                  rel=1e-12)
    bars = [pa.get_height() for pa in boot.patches if pa.get_gid() == "fastkappa-replicates"]
    assert sum(bars) == len(ci.distribution)
    sites = sorted(set(graded["site"]))
    assert [tk.get_text() for tk in forest.get_yticklabels()] == [*sites, "overall"]
    (pts,) = _gid_lines(forest, "fastkappa-estimate")
    expected = [cohen_kappa_score(t[graded["site"] == s], p[graded["site"] == s],
                                  weights="quadratic", labels=[0, 1, 2, 3, 4]) for s in sites]
    np.testing.assert_allclose(pts.get_xdata(), expected, rtol=1e-12)
    res = run_json(argv[:-2], capsys)  # the same numbers without --plot
    lows = [g["ci"]["low"] for g in res["groups"]]
    np.testing.assert_allclose(_gid_segments(forest)[:, 0, 0], lows, rtol=1e-12)
    (overall,) = _gid_lines(forest, "fastkappa-overall")
    assert overall.get_xdata()[0] == pytest.approx(res["kappa"], rel=1e-12)


def test_main_score_plot_svg_and_pdf(files, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    for name, magic in (("kappa.svg", b"<?xml"), ("kappa.PDF", b"%PDF")):
        path = tmp_path / name
        res = run_json(["score", files["csv"], "--true", "grade", "--pred", "model_b",
                        "--plot", str(path)], capsys)
        assert res["plot"] == str(path)
        assert path.read_bytes()[:5].startswith(magic)


def test_main_compare_plot_models_and_differences(files, graded, tmp_path, capsys,
                                                  saved_figures):
    path = tmp_path / "compare.png"
    res = run_json(["compare", files["csv"], "--true", "grade", "--pred", "model_a",
                    "model_b", "--n-resamples", "300", "--seed", "4", "--p-adjust", "holm",
                    "--weights", "quadratic", "--plot", str(path)], capsys)
    assert res["plot"] == str(path)
    _png_is_drawn(path)
    (fig,) = saved_figures
    models_ax, diff_ax = fig.get_axes()
    ref = fk.compare(graded["grade"], {"model_a": graded["model_a"],
                                       "model_b": graded["model_b"]},
                     weights="quadratic", n_resamples=300, seed=4, p_adjust="holm")
    (pts,) = _gid_lines(models_ax, "fastkappa-estimate")
    np.testing.assert_allclose(pts.get_xdata(), [r.estimate for r in ref.models.values()],
                               rtol=1e-12)
    np.testing.assert_allclose(_gid_segments(models_ax)[:, 1, 0],
                               [r.high for r in ref.models.values()], rtol=1e-12)
    (pair,) = ref.pairs
    (d,) = _gid_lines(diff_ax, "fastkappa-estimate")
    assert d.get_xdata()[0] == pytest.approx(pair.difference, rel=1e-12)
    np.testing.assert_allclose(_gid_segments(diff_ax)[0, :, 0], [pair.low, pair.high],
                               rtol=1e-12)
    label = next(t.get_text() for t in diff_ax.texts if t.get_gid() == "fastkappa-label-0")
    # 300 resamples: the p-value sits at its floor, 2/300, so only a bound is known
    assert pair.p_value_is_bound and pair.p_value == pytest.approx(2 / 300)
    assert label.endswith(f"< {pair.p_adjusted:.2g}")


def test_main_thresholds_plot_curve(files, graded, tmp_path, capsys, saved_figures):
    path = tmp_path / "cuts.png"
    code, out, err = run(["thresholds", files["gz"], "--true", "grade", "--score", "score",
                          "--plot", str(path)], capsys)
    assert code == 0, err
    assert out.rstrip().endswith(f"figure: {path}")
    _png_is_drawn(path)
    (fig,) = saved_figures
    (ax,) = fig.get_axes()
    opt = fk.ThresholdOptimizer().fit(graded["grade"], graded["score"])
    (best,) = _gid_lines(ax, "fastkappa-optimum")
    np.testing.assert_allclose(best.get_xdata(), opt.thresholds_, rtol=1e-12)
    np.testing.assert_allclose(best.get_ydata(), [opt.qwk_] * 4, rtol=1e-12)


@pytest.mark.parametrize("plot, message", [
    ("kappa.jpg", r"must end in \.png, \.svg or \.pdf .*got '\.jpg'"),
    ("kappa", r"must end in \.png, \.svg or \.pdf .*got no suffix"),
    ("missing/kappa.png", r"the folder '.*missing' does not exist"),
    ("folder.png", r"is a folder; give a file name"),
])
def test_main_plot_bad_path_exit_2_before_reading_data(tmp_path, capsys, plot, message):
    import re

    (tmp_path / "folder.png").mkdir()
    target = str(tmp_path / plot)
    # the data file does not exist either: the path is checked first (exit 2, not 1)
    for argv in (["score", str(tmp_path / "nope.csv"), "--true", "t", "--pred", "p"],
                 ["compare", str(tmp_path / "nope.csv"), "--true", "t", "--pred", "a", "b"],
                 ["thresholds", str(tmp_path / "nope.csv"), "--true", "t", "--score", "s"]):
        code, out, err = run([*argv, "--plot", target], capsys)
        assert code == 2 and out == ""
        assert re.search(message, err), err
        assert "no such file" not in err
    assert not (tmp_path / "missing").exists()


def test_main_plot_without_matplotlib_exit_2(files, tmp_path, capsys, monkeypatch):
    from fastkappa._install import install_hint
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    path = tmp_path / "kappa.png"
    for argv in (["score", files["csv"], "--true", "grade", "--pred", "model_a"],
                 ["compare", files["csv"], "--true", "grade", "--pred", "model_a", "model_b"],
                 ["thresholds", files["csv"], "--true", "grade", "--score", "score"]):
        code, out, err = run([*argv, "--plot", str(path)], capsys)
        assert code == 2 and out == ""
        assert r"--plot needs matplotlib" in err and install_hint("plot") in err
    assert not path.exists()


def test_main_plot_uses_no_pyplot(files, tmp_path):
    pytest.importorskip("matplotlib")
    code = ("import sys\n"
            "from fastkappa.cli import main\n"
            f"assert main(['thresholds', {files['csv']!r}, '--true', 'grade', '--score', "
            f"'score', '--plot', {str(tmp_path / 'c.png')!r}]) == 0\n"
            "assert 'matplotlib.figure' in sys.modules\n"
            "assert 'matplotlib.pyplot' not in sys.modules, 'the CLI imported pyplot'\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    _png_is_drawn(tmp_path / "c.png")


def test_main_demo_writes_figures_to_the_folder_it_names(tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    from fastkappa import cli

    monkeypatch.chdir(tmp_path)
    code, out, err = run(["demo", "--n-resamples", "200"], capsys)
    assert code == 0, err
    folder = tmp_path / cli.DEMO_FIGURES
    assert f"figures saved in {cli.DEMO_FIGURES}{os.sep}: " in out
    assert sorted(os.listdir(folder)) == sorted(cli.DEMO_FIGURE_FILES)
    for name in cli.DEMO_FIGURE_FILES:
        assert name in out
        _png_is_drawn(folder / name)
        assert os.path.getsize(folder / name) < 150_000


def test_main_demo_without_matplotlib_still_runs(tmp_path, capsys, monkeypatch):
    from fastkappa import cli
    from fastkappa._install import install_hint

    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, out, err = run(["demo", "--n-resamples", "200"], capsys)
    assert code == 0, err
    assert ("no figures: matplotlib is not installed; add it with: "
            + install_hint("plot")) in out
    assert "model_a" in out and not (tmp_path / cli.DEMO_FIGURES).exists()
    code, out, err = run(["demo", "--n-resamples", "200", "--format", "json"], capsys)
    res = json.loads(out)
    assert code == 0 and res["figures"] == [] and res["figures_folder"] is None
    assert "matplotlib is not installed" in res["no_figures"]
    assert "note: no figures: matplotlib is not installed" in err
    # an explicit folder is a request that cannot be met: a usage error
    code, out, err = run(["demo", "--figures", str(tmp_path / "f")], capsys)
    assert code == 2 and out == "" and install_hint("plot") in err


def test_main_demo_figures_folder_errors(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    code, out, err = run(["demo", "--figures", str(tmp_path / "file")], capsys)
    assert code == 2 and out == "" and "is a file, not a folder" in err
    code, _, err = run(["demo", "--figures", "x", "--no-figures"], capsys)
    assert code == 2 and "not allowed with argument" in err


def test_main_demo_default_folder_unusable_gives_a_note(tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    from fastkappa import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / cli.DEMO_FIGURES).write_text("a file where the folder would go")
    code, out, err = run(["demo", "--n-resamples", "200"], capsys)
    assert code == 0, err
    assert (f"no figures: {cli.DEMO_FIGURES!r} is a file, not a folder; name another folder "
            "with --figures DIR.") in out
    assert (tmp_path / cli.DEMO_FIGURES).read_text() == "a file where the folder would go"


# --------------------------------------------------------------------------- issue 11 / 12


def test_main_score_missing_token_row_is_missing_not_a_class(tmp_path, capsys):
    # a "None,None" row used to turn both columns into strings: kappa 0.1429, exit 0
    path = tmp_path / "x.csv"
    path.write_text("t,p\nNone,None\n1,1\n2,2\n1.0,1\n2,2.0\n3,3\n")
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p"], capsys)
    assert code == 1 and "row 1: column 't' is missing" in err and "--nan-policy omit" in err
    res = run_json(["score", str(path), "--true", "t", "--pred", "p", "--nan-policy", "omit"],
                   capsys)
    assert res["labels"] == [1, 2, 3] and res["n_rows"] == 5 and res["kappa"] == 1.0


def test_main_score_out_of_range_integer_names_the_row(tmp_path, capsys):
    path = tmp_path / "x.csv"
    path.write_text("t,p\n1,1\n9223372036854775808,1\n")
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p"], capsys)
    assert code == 1 and "row 2: column 't' holds '9223372036854775808'" in err
    assert "outside the range of integer class labels" in err and "warning" not in err


_TOKENS = st.sampled_from(["", "NA", "N/A", "NaN", "nan", "None", "null", "NULL", "-", "?",
                           "#N/A", "<NA>", "n/a", " NA", "NAN", " None "])


@given(data=st.data())
@settings(deadline=None, max_examples=40,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_main_score_random_missing_tokens_match_the_api(tmp_path, capsys, data):
    """CSV with missing-value tokens at random rows (first block included) against
    fastkappa.cohen_kappa on the parsed values with None there."""
    n = data.draw(st.integers(4, 60))
    t = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    p = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    holes_t = data.draw(st.sets(st.integers(0, n - 1), max_size=n // 2))
    holes_p = data.draw(st.sets(st.integers(0, n - 1), max_size=n // 2))
    spell = data.draw(st.lists(st.sampled_from(["{}", "{}.0", "+{}", "{}e0"]), min_size=n,
                               max_size=n))
    token = data.draw(_TOKENS)

    def cell(v, i, holes):
        if i in holes:
            return '""' if token == "" else token
        return spell[i].format(v)

    path = tmp_path / "h.csv"
    path.write_text("t,p\n" + "".join(f"{cell(a, i, holes_t)},{cell(b, i, holes_p)}\n"
                                      for i, (a, b) in enumerate(zip(t, p, strict=True))))
    tt = [None if i in holes_t else v for i, v in enumerate(t)]
    pp = [None if i in holes_p else v for i, v in enumerate(p)]
    kept = [i for i in range(n) if i not in holes_t and i not in holes_p]
    code, out, err = run(["score", str(path), "--true", "t", "--pred", "p", "--nan-policy",
                          "omit", "--weights", "quadratic", "--format", "json"], capsys)
    if not kept:
        assert code == 1 and "no rows to score" in err
    else:
        assert code == 0, err
        res = json.loads(out)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fk.UndefinedKappaWarning)
            expected = fk.cohen_kappa(tt, pp, weights="quadratic", nan_policy="omit")
        assert res["n_rows"] == len(kept)
        assert res["labels"] == sorted({t[i] for i in kept} | {p[i] for i in kept})
        if np.isnan(expected):
            assert res["kappa"] is None
        else:
            assert res["kappa"] == pytest.approx(expected, rel=1e-12, abs=1e-15)
    if holes_t or holes_p:
        code, _, err = run(["score", str(path), "--true", "t", "--pred", "p"], capsys)
        first = min(holes_t | holes_p)
        col = "t" if first in holes_t else "p"
        assert code == 1 and f"row {first + 1}: column '{col}' is missing" in err


@pytest.mark.parametrize("argv, flag", [
    (["score", "x.csv", "--true", "t", "--pred", "p", "--n-resamples", "1"], "--n-resamples"),
    (["score", "x.csv", "--true", "t", "--pred", "p", "--seed", "-1"], "--seed"),
    (["compare", "x.csv", "--true", "t", "--pred", "a", "b", "--seed", "x"], "--seed"),
    (["thresholds", "x.csv", "--true", "t", "--score", "s", "--cv", "1"], "--cv"),
    (["score", "x.csv", "--true", "t", "--pred", "p", "--labels", "1,2,1"], "--labels"),
    (["demo", "--n-resamples", "0"], "--n-resamples"),
])
def test_main_option_values_are_usage_errors(argv, flag, capsys):
    code, _, err = run(argv, capsys)
    assert code == 2 and f"argument {flag}" in err and err.count("error:") == 1


def test_main_score_ci_is_a_deprecated_alias_of_method(files, graded, capsys):
    argv = ["score", files["csv"], "--true", "grade", "--pred", "model_a", "--seed", "5",
            "--n-resamples", "200", "--format", "json"]
    code, out, err = run([*argv, "--ci", "percentile"], capsys)
    assert code == 0 and "--ci is deprecated; use --method percentile" in err
    assert json.loads(out) == run_json([*argv, "--method", "percentile"], capsys)
    code, _, err = run([*argv, "--ci", "bca", "--method", "basic"], capsys)
    assert code == 2 and "--ci bca and --method basic disagree" in err


def test_main_defaults_equal_the_api(files, graded, capsys):
    """No --weights and no --method: the API's defaults (unweighted; bca, 10,000)."""
    from fastkappa.cli import make_parser

    for cmd in (["score", "x", "--true", "t", "--pred", "p"],
                ["compare", "x", "--true", "t", "--pred", "a", "b"]):
        args = make_parser().parse_args(cmd)
        assert args.weights == "none" and args.n_resamples == 10_000
    args = make_parser().parse_args(["compare", "x", "--true", "t", "--pred", "a", "b"])
    assert args.method == "bca"
    res = run_json(["compare", files["csv"], "--true", "grade", "--pred", "model_a",
                    "model_b", "--n-resamples", "200", "--seed", "1"], capsys)
    ref = fk.compare(graded["grade"], {"model_a": graded["model_a"],
                                       "model_b": graded["model_b"]},
                     n_resamples=200, seed=1)
    assert res["weights"] == "none" and res["method"] == "bca"
    assert res["models"]["model_a"]["estimate"] == pytest.approx(
        ref.models["model_a"].estimate, rel=1e-12)
    assert res["pairs"][0]["low"] == pytest.approx(ref.pairs[0].low, rel=1e-12)


def test_main_json_records_provenance_and_the_seed_used(files, capsys):
    argv = ["score", files["csv"], "--true", "grade", "--pred", "model_a", "--weights",
            "linear", "--method", "percentile", "--n-resamples", "200"]
    first = run_json(argv, capsys)
    assert first["fastkappa_version"] == fk.__version__
    assert (first["weights"], first["method"], first["n_resamples"]) == (
        "linear", "percentile", 200)
    seed = first["seed"]
    # drawn, and reported; below 2**53, so that jq and JavaScript, which read JSON
    # numbers as doubles, keep it exact (128-bit entropy came back rounded)
    assert isinstance(seed, int) and 0 <= seed < 2**53 and float(seed) == seed
    again = run_json([*argv, "--seed", str(seed)], capsys)
    assert again["ci"] == first["ci"] and again["seed"] == seed
    plain = run_json(argv[:-4], capsys)
    assert plain["method"] is None and plain["seed"] is None and plain["weights"] == "linear"
    comp = run_json(["compare", files["csv"], "--true", "grade", "--pred", "model_a",
                     "model_b", "--n-resamples", "200", "--method", "asymptotic"], capsys)
    assert comp["seed"] is None and comp["n_resamples"] is None
    assert comp["fastkappa_version"] == fk.__version__
    code, out, _ = run([*argv, "--seed", "3", "--format", "csv"], capsys)
    row = next(csv.DictReader(io.StringIO(out)))
    assert code == 0 and row["weights"] == "linear" and row["method"] == "percentile"
    code, out, _ = run([*argv, "--seed", "3"], capsys)
    assert code == 0 and "linear-weighted" in out and "percentile" in out and "seed 3" in out
    # unweighted: the CSV names the weights "none", as the JSON does (the cell was empty)
    code, out, _ = run([*argv[:-6], "--format", "csv"], capsys)
    assert code == 0 and next(csv.DictReader(io.StringIO(out)))["weights"] == "none"
    code, out, _ = run(["compare", files["csv"], "--true", "grade", "--pred", "model_a",
                        "model_b", "--method", "asymptotic", "--format", "csv"], capsys)
    assert code == 0 and {r["weights"] for r in csv.DictReader(io.StringIO(out))} == {"none"}


def test_main_compare_p_value_at_its_floor_prints_as_a_bound(tmp_path, capsys):
    rng = np.random.default_rng(0)
    t = rng.integers(0, 3, 2000)
    good = t.copy()
    bad = rng.integers(0, 3, 2000)
    path = tmp_path / "x.csv"
    pcsv.write_csv(pa.table({"t": t, "good": good, "bad": bad}), path)
    argv = ["compare", str(path), "--true", "t", "--pred", "good", "bad", "--n-resamples",
            "500", "--seed", "0", "--method", "percentile"]
    res = run_json(argv, capsys)
    (pair,) = res["pairs"]
    assert pair["p_value"] == pytest.approx(2 / 500) and pair["p_value_is_bound"] is True
    code, out, _ = run(argv, capsys)
    assert code == 0 and "p < 0.004" in out and "p = 0.004" not in out
    res = run_json([*argv[:-1], "asymptotic"], capsys)
    assert res["pairs"][0]["p_value_is_bound"] is False


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_main_score_by_intervals_equal_kappa_by_group(files, graded, capsys, kind):
    """Same seed, same per-group intervals as the Python API (one stream per group)."""
    res = run_json(["score", files[kind], "--true", "grade", "--pred", "model_b",
                    "--weights", "quadratic", "--by", "site", "--method", "percentile",
                    "--seed", "11", "--n-resamples", "300"], capsys)
    ref = fk.kappa_by_group(graded["grade"], graded["model_b"], graded["site"],
                            weights="quadratic", method="percentile", seed=11, n_resamples=300)
    assert [g["group"] for g in res["groups"]] == ref.groups.tolist()
    np.testing.assert_array_equal([g["ci"]["low"] for g in res["groups"]], ref.low)
    np.testing.assert_array_equal([g["ci"]["high"] for g in res["groups"]], ref.high)
    assert len({g["ci"]["low"] for g in res["groups"]}) == len(ref.groups)


def test_main_score_by_with_clusters(files, graded, capsys):
    """--by with --clusters: each group's interval resamples its clusters, seeded as
    kappa_by_group seeds its groups."""
    res = run_json(["score", files["csv"], "--true", "grade", "--pred", "model_a",
                    "--by", "site", "--clusters", "patient", "--method", "bca", "--seed", "4",
                    "--n-resamples", "200"], capsys)
    sites = sorted(set(graded["site"]))
    seeds = np.random.SeedSequence(4).spawn(len(sites))
    for g, site, seq in zip(res["groups"], sites, seeds, strict=True):
        sel = graded["site"] == site
        ci = fk.kappa_ci(graded["grade"][sel], graded["model_a"][sel], method="bca",
                         n_resamples=200, seed=seq, clusters=graded["patient"][sel],
                         labels=[0, 1, 2, 3, 4])
        assert g["group"] == site and g["ci"]["low"] == pytest.approx(ci.low, rel=1e-12)
        assert g["ci"]["high"] == pytest.approx(ci.high, rel=1e-12)


def test_main_score_clusters_with_missing_rows_and_string_ids(tmp_path, capsys):
    rng = np.random.default_rng(5)
    n = 3000
    t = rng.integers(0, 4, n)
    p = np.clip(t + rng.integers(-1, 2, n), 0, 3)
    cl = np.array([f"id{v}" for v in rng.integers(0, 400, n)], dtype=object)
    pt = pa.array(p).to_pylist()
    for i in rng.choice(n, 40, replace=False):
        pt[i] = None
    path = tmp_path / "x.csv"
    pcsv.write_csv(pa.table({"t": t, "p": pa.array(pt, pa.int64()), "c": cl}), path)
    res = run_json(["score", str(path), "--true", "t", "--pred", "p", "--clusters", "c",
                    "--method", "bca", "--seed", "9", "--n-resamples", "300",
                    "--nan-policy", "omit"], capsys)
    keep = np.array([v is not None for v in pt])
    ci = fk.kappa_ci(t[keep], p[keep], method="bca", n_resamples=300, seed=9,
                     clusters=cl[keep])
    assert res["ci"]["low"] == ci.low and res["ci"]["high"] == ci.high
    assert res["ci"]["standard_error"] == pytest.approx(ci.standard_error, rel=1e-12)


def test_main_messages_name_command_line_flags(tmp_path, capsys):
    path = tmp_path / "x.csv"
    path.write_text("t,p\n1,1\n1,1\n")
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p"], capsys)
    assert code == 0 and "kappa is undefined" in err and "reporting nan" in err
    assert "replace_undefined_by" not in err and "labels=" not in err
    path.write_text("t,p\nmild,severe\nsevere,mild\n")
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p", "--weights",
                        "quadratic"], capsys)
    assert code == 1 and "Pass --labels in scale order" in err and "labels=" not in err
    path.write_text("t,p\n1,1\n2,2\n")
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p", "--clusters", "t",
                        "--method", "bca", "--n-resamples", "50"], capsys)
    assert "`" not in err


def test_main_mixed_kinds_name_row_column_and_value(tmp_path, capsys):
    path = tmp_path / "x.csv"
    path.write_text("t,p\n1,\n2,mild\n3,severe\n")
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p", "--nan-policy",
                        "omit"], capsys)
    assert code == 1
    assert "row 2: column 'p' holds 'mild', but column 't' holds numbers" in err
    # declared classes: the first row outside them, counting the rows dropped before it
    path.write_text("t,p\nNA,1\n1,1\n,\n2,mild\n")
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p", "--nan-policy",
                        "omit", "--labels", "1,2"], capsys)
    assert code == 1 and "row 4: column 'p' holds 'mild'" in err, err
    code, _, err = run(["compare", str(path), "--true", "t", "--pred", "p", "t",
                        "--nan-policy", "omit", "--labels", "1,2"], capsys)
    assert code == 1 and "row 4: column 'p' holds 'mild'" in err, err


CLUSTER_MEMORY_SCRIPT = textwrap.dedent("""
    import gc, os, sys, threading
    import psutil
    from fastkappa.cli import main

    argv = ["--true", "t", "--pred", "p", "--weights", "quadratic", "--quiet",
            "--clusters", "c", "--method", "asymptotic"]
    proc = psutil.Process()

    def peak_rss(path):
        # the run's peak RSS: sampled, and VmHWM (Linux) reset before the run
        gc.collect()
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            pass
        sampled = [proc.memory_info().rss]
        done = threading.Event()

        def sample():
            while not done.wait(0.002):
                sampled.append(proc.memory_info().rss)

        sampler = threading.Thread(target=sample)
        sampler.start()
        shown, sys.stdout = sys.stdout, open(os.devnull, "w")
        assert main(["score", path, *argv]) == 0
        sys.stdout = shown
        done.set()
        sampler.join()
        hwm = 0
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        hwm = int(line.split()[1]) * 1024
        except OSError:
            pass
        return max(max(sampled), hwm)

    big, small = sys.argv[1], sys.argv[2]
    peak_rss(small)              # compiles, loads pyarrow, sizes the reader's pools
    warm = peak_rss(small)       # the warm-up run measured
    print(warm, peak_rss(big))
""")


@pytest.mark.slow
def test_main_score_clusters_memory_bounded(tmp_path):
    """score --clusters keeps per-cluster tables, not rows: the peak of a 2e7-row run
    stays within 200 MB of the peak of a 3e6-row warm-up run in the same process
    (rows kept, as before, took 1.0 GB at 5e6 rows: about 3.5 GB more here)."""
    pytest.importorskip("psutil")
    rng = np.random.default_rng(0)
    n = 20_000_000
    t = rng.integers(0, 5, n, dtype=np.int8)
    p = np.clip(t + rng.integers(-1, 2, n, dtype=np.int8), 0, 4).astype(np.int8)
    c = rng.integers(0, 50_000, n, dtype=np.int32)
    big, small = tmp_path / "big.parquet", tmp_path / "small.parquet"
    pq.write_table(pa.table({"t": t, "p": p, "c": c}), big, row_group_size=1 << 20)
    pq.write_table(pa.table({"t": t[:3_000_000], "p": p[:3_000_000], "c": c[:3_000_000]}),
                   small, row_group_size=1 << 20)
    del t, p, c
    proc = subprocess.run([sys.executable, "-c", CLUSTER_MEMORY_SCRIPT, str(big), str(small)],
                          capture_output=True, timeout=900)
    assert proc.returncode == 0, proc.stderr.decode()
    warm, peak = (int(v) for v in proc.stdout.split())
    growth = peak - warm
    print(f"peak RSS: warm-up run {warm / 2**20:.0f} MB, 2e7 rows {peak / 2**20:.0f} MB")
    assert growth < 200 * 2**20, f"peak RSS grew by {growth / 2**20:.0f} MB"


def test_main_every_json_output_names_the_version(files, capsys):
    for argv in _subcommand_cases(files):
        res = run_json(argv, capsys)
        assert res["fastkappa_version"] == fk.__version__ and next(iter(res)) == "command"


def test_main_score_clusters_need_two(tmp_path, capsys):
    path = tmp_path / "x.csv"
    path.write_text("t,p,c\n0,0,a\n1,1,a\n1,0,a\n0,1,a\n")
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p", "--clusters", "c",
                        "--method", "percentile", "--n-resamples", "50"], capsys)
    assert code == 1 and "needs at least 2 clusters; the data hold 1" in err


def test_main_score_by_keeps_no_accumulator_per_group(tmp_path, capsys, monkeypatch):
    """--by counts per-group tables, not one CohenKappa per group (200k groups took 86 s)."""
    rng = np.random.default_rng(2)
    n = 20_000
    t = rng.integers(0, 3, n)
    p = np.clip(t + rng.integers(-1, 2, n), 0, 2)
    g = rng.integers(0, 2_000, n)
    path = tmp_path / "x.csv"
    pcsv.write_csv(pa.table({"t": t, "p": p, "g": g}), path)
    made = []
    original = fk.CohenKappa.__init__

    def counting(self, *a, **kw):
        made.append(1)
        original(self, *a, **kw)

    monkeypatch.setattr(fk.CohenKappa, "__init__", counting)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fk.UndefinedKappaWarning)
        res = run_json(["score", str(path), "--true", "t", "--pred", "p", "--by", "g"], capsys)
        ref = fk.kappa_by_group(t, p, g)
    assert len(made) <= 2
    assert [x["group"] for x in res["groups"]] == ref.groups.tolist()
    np.testing.assert_allclose([np.nan if x["kappa"] is None else x["kappa"]
                                for x in res["groups"]], ref.estimate, rtol=1e-12)


def test_main_csv_rows_name_weights_and_method(files, capsys):
    for argv in _subcommand_cases(files):
        if argv[0] == "thresholds":
            continue
        code, out, _ = run([*argv, "--format", "csv"], capsys)
        rows = list(csv.DictReader(io.StringIO(out)))
        assert code == 0 and all("weights" in r and "method" in r for r in rows), argv


def test_main_compare_names_differing_in_spaces_are_refused(tmp_path, capsys):
    rng = np.random.default_rng(1)
    t = rng.integers(0, 3, 300)
    table = pa.table({"t": t, "m": np.clip(t + rng.integers(-1, 2, 300), 0, 2),
                      "m ": rng.integers(0, 3, 300)})
    path = tmp_path / "x.parquet"
    pq.write_table(table, path)
    code, out, err = run(["compare", str(path), "--true", "t", "--pred", "m", "m ",
                          "--n-resamples", "100", "--seed", "0"], capsys)
    # fk.compare refuses names that would print alike; the command line says so in one line
    assert code == 1 and out == ""
    assert "differ only in whitespace" in err and len(err.strip().splitlines()) == 1


def test_choice_options_are_case_insensitive():
    # the output spells the method "BCa": the command line takes that spelling back
    args = make_parser().parse_args(["score", "x", "--true", "t", "--pred", "p", "--weights",
                                     "Quadratic", "--method", "BCa"])
    assert (args.weights, args.method) == ("quadratic", "bca")
    args = make_parser().parse_args(["agreement", "x", "--wide", "a", "b", "--level",
                                     "Ordinal", "--method", "Percentile"])
    assert (args.level, args.method) == ("ordinal", "percentile")


def test_a_header_without_rows_or_line_break_is_an_empty_file(tmp_path, capsys):
    # "t,p" with no line break: pyarrow's "Could not skip initial 1 rows" (a raw
    # ArrowInvalid in Python) instead of the message of "t,p\n"
    import gzip

    plain = tmp_path / "h.csv"
    plain.write_text("t,p")
    packed = tmp_path / "h.csv.gz"
    packed.write_bytes(gzip.compress(b"t,p"))
    for path in (plain, packed):
        code, out, err = run(["score", str(path), "--true", "t", "--pred", "p"], capsys)
        assert code == 1 and out == "" and f"{path.name} holds no rows to score" in err
    code, _, err = run(["agreement", str(plain), "--wide", "t", "p"], capsys)
    assert code == 1 and "no rating" in err
    import fastkappa.files as fkfiles

    with pytest.raises(ValueError, match="holds no rows to score"):
        fkfiles.score_file(str(plain), true="t", pred="p")


def test_labels_in_double_quotes_hold_commas_and_spaces(tmp_path, capsys):
    path = tmp_path / "lc.csv"
    path.write_text('t,p\n"a,b",x\n"a,b","a,b"\nx,x\n" c",x\n')
    code, out, _ = run(["score", str(path), "--true", "t", "--pred", "p", "--labels",
                        '"a,b",x," c"', "--weights", "linear", "--format", "json"], capsys)
    got = json.loads(out)
    want = fk.cohen_kappa(["a,b", "a,b", "x", " c"], ["x", "a,b", "x", "x"],
                          labels=["a,b", "x", " c"], weights="linear")
    assert code == 0 and got["kappa"] == pytest.approx(want, abs=1e-15)
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p", "--labels",
                        '"a,b,x'], capsys)
    assert code == 2 and "is not closed" in err


@pytest.mark.parametrize(("text", "want"), [
    ("0,1,2", ["0", "1", "2"]), (" a , b ", ["a", "b"]), ('"a,b",x', ["a,b", "x"]),
    ('" a",x', [" a", "x"]), ('"say ""hi""",b', ['say "hi"', "b"]),
    ('"a,b",\t"c"', ["a,b", "c"]), ('\t"a,b",c', ["a,b", "c"]), ('"a,b"\t,c', ["a,b", "c"]),
    ('"a', None), ('"a"b,c', None)])
def test_label_lists_split_csv_style(text, want):
    from fastkappa.cli.parser import _split_labels

    assert _split_labels(text) == want


def test_a_missing_group_id_is_not_told_about_declaring_classes(tmp_path, capsys):
    # --labels declares classes of the label columns only: the hint is for them
    path = tmp_path / "g.csv"
    path.write_text("t,p,g\n0,0,a\n1,1,NA\n0,1,b\n")
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p", "--by", "g"], capsys)
    assert code == 1 and "row 2: column 'g' is missing" in err and "--labels" not in err
    path.write_text("t,p,g\n0,0,a\n1,NA,c\n0,1,b\n")
    code, _, err = run(["score", str(path), "--true", "t", "--pred", "p", "--by", "g"], capsys)
    assert code == 1 and "is a class once --labels declares it" in err
