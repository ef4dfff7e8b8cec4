"""Command-line parity with the Python API: --ignore-index, --sample-weight,
--frequency-weight, --nan-policy, and score --plot's --normalize / --class-names.

Every number the command prints is checked against the library called with the
same keywords, and against an independent oracle: scikit-learn's
``cohen_kappa_score`` on the filtered rows (it takes ``sample_weight``), and
``np.repeat`` expansion of the rows for frequency weights.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

import fastkappa as fk
from fastkappa.cli import main

pa = pytest.importorskip("pyarrow")
pcsv = pytest.importorskip("pyarrow.csv")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def data():
    """Grades 0-3 with -1 marking unreadable rows, real weights, whole-number counts."""
    rng = np.random.default_rng(11)
    n = 2400
    t = rng.integers(0, 4, n)
    a = np.clip(t + rng.integers(-1, 2, n), 0, 3)
    b = np.clip(t + rng.integers(-2, 3, n), 0, 3)
    t[rng.random(n) < 0.04] = -1
    a[rng.random(n) < 0.04] = -1
    return {"grade": t, "model_a": a, "model_b": b,
            "w": np.round(rng.uniform(0.2, 3.0, n), 3),
            "count": rng.integers(0, 4, n),
            "patient": np.arange(n) // 3,
            "score": t + rng.normal(0, 0.7, n),
            "site": rng.choice(["x", "y"], n)}


@pytest.fixture(scope="module")
def paths(data, tmp_path_factory):
    root = tmp_path_factory.mktemp("parity")
    table = pa.table(data)
    out = {"csv": root / "d.csv", "parquet": root / "d.parquet"}
    pcsv.write_csv(table, out["csv"])
    pq.write_table(table, out["parquet"], row_group_size=500)
    return {k: str(v) for k, v in out.items()}


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def run_json(argv, capsys):
    code, out, err = run([*argv, "--format", "json"], capsys)
    assert code == 0, err
    return json.loads(out)


def kept(d, *cols):
    """Rows where none of ``cols`` holds the ignored label -1."""
    return np.all([d[c] != -1 for c in cols], axis=0)


# --------------------------------------------------------------------------- score


@pytest.mark.parametrize("kind", ["csv", "parquet"])
@pytest.mark.parametrize("weights", ["none", "quadratic"])
def test_score_sample_weight_and_ignore_index(paths, data, capsys, kind, weights):
    w = None if weights == "none" else weights
    got = run_json(["score", paths[kind], "--true", "grade", "--pred", "model_a",
                    "--weights", weights, "--ignore-index", "-1", "--sample-weight", "w"],
                   capsys)
    api = fk.cohen_kappa(data["grade"], data["model_a"], weights=w, ignore_index=-1,
                         sample_weight=data["w"])
    assert got["kappa"] == pytest.approx(api, rel=1e-12)
    m = kept(data, "grade", "model_a")
    oracle = cohen_kappa_score(data["grade"][m], data["model_a"][m], weights=w,
                               sample_weight=data["w"][m])
    assert got["kappa"] == pytest.approx(oracle, rel=1e-10)
    assert got["labels"] == [0, 1, 2, 3] and got["sample_weight"] == "w"
    assert got["ignore_index"] == -1


@pytest.mark.parametrize("command", ["score", "compare", "thresholds"])
def test_ignore_index_among_declared_classes_is_refused(paths, capsys, command):
    # the rows where either side is 0 were dropped, predictions of 0 uncounted
    pred = {"score": ["--pred", "model_a"], "compare": ["--pred", "model_a", "model_b"],
            "thresholds": ["--score", "score"]}[command]
    code, out, err = run([command, paths["parquet"], "--true", "grade", *pred,
                          "--n-classes", "4", "--ignore-index", "0"], capsys)
    assert code != 0 and out == ""
    assert "--ignore-index is 0, one of the declared classes (--labels or --n-classes" in err


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_score_frequency_weight_equals_expanded_rows(paths, data, capsys, kind):
    got = run_json(["score", paths[kind], "--true", "grade", "--pred", "model_a",
                    "--weights", "quadratic", "--ignore-index", "-1",
                    "--frequency-weight", "count", "--method", "asymptotic"], capsys)
    api = fk.kappa_ci(data["grade"], data["model_a"], weights="quadratic", ignore_index=-1,
                      frequency_weight=data["count"], method="asymptotic")
    rep = [np.repeat(data[c], data["count"]) for c in ("grade", "model_a")]
    m = (rep[0] != -1) & (rep[1] != -1)
    expanded = fk.kappa_ci(rep[0][m], rep[1][m], weights="quadratic", method="asymptotic")
    for ref in (api, expanded):
        assert got["kappa"] == pytest.approx(ref.estimate, rel=1e-12)
        assert got["ci"]["low"] == pytest.approx(ref.low, rel=1e-10)
        assert got["ci"]["high"] == pytest.approx(ref.high, rel=1e-10)
        assert got["ci"]["standard_error"] == pytest.approx(ref.standard_error, rel=1e-10)
    assert got["kappa"] == pytest.approx(
        cohen_kappa_score(rep[0][m], rep[1][m], weights="quadratic"), rel=1e-10)
    assert np.asarray(got["confusion"]).sum() == m.sum()


def test_score_frequency_weight_bootstrap_equals_api(paths, data, capsys):
    got = run_json(["score", paths["csv"], "--true", "grade", "--pred", "model_b",
                    "--frequency-weight", "count", "--ignore-index", "-1", "--method", "bca",
                    "--n-resamples", "300", "--seed", "4"], capsys)
    api = fk.kappa_ci(data["grade"], data["model_b"], ignore_index=-1,
                      frequency_weight=data["count"], method="bca", n_resamples=300, seed=4)
    assert got["kappa"] == pytest.approx(api.estimate, rel=1e-12)
    assert got["ci"]["low"] == pytest.approx(api.low, rel=1e-10)
    assert got["ci"]["high"] == pytest.approx(api.high, rel=1e-10)


def test_score_weights_in_batches_and_row_groups_in_parallel(paths, data, capsys,
                                                             monkeypatch):
    """Small CSV blocks and Parquet batches: the weight column is cut with its rows."""
    import numba

    from fastkappa import _io

    monkeypatch.setattr(_io, "CSV_BLOCK_SIZE", 1 << 12)
    monkeypatch.setattr(_io, "PARQUET_BATCH_ROWS", 300)
    api = fk.cohen_kappa(data["grade"], data["model_b"], weights="linear", ignore_index=-1,
                         sample_weight=data["w"])
    before = numba.get_num_threads()
    try:
        for kind in ("csv", "parquet"):
            for threads in ("1", "2"):
                got = run_json(["score", paths[kind], "--true", "grade", "--pred", "model_b",
                                "--weights", "linear", "--ignore-index", "-1",
                                "--sample-weight", "w", "--threads", threads], capsys)
                assert got["kappa"] == pytest.approx(api, rel=1e-12), (kind, threads)
    finally:
        numba.set_num_threads(before)


def test_score_ignore_index_with_by_and_clusters(paths, data, capsys):
    got = run_json(["score", paths["csv"], "--true", "grade", "--pred", "model_a",
                    "--ignore-index", "-1", "--by", "site", "--clusters", "patient",
                    "--method", "percentile", "--n-resamples", "300", "--seed", "1"], capsys)
    m = kept(data, "grade", "model_a")
    ci = fk.kappa_ci(data["grade"], data["model_a"], ignore_index=-1,
                     clusters=data["patient"], method="percentile", n_resamples=300, seed=1)
    assert got["kappa"] == pytest.approx(ci.estimate, rel=1e-12)
    assert got["ci"]["low"] == pytest.approx(ci.low, rel=1e-10)
    assert got["ci"]["high"] == pytest.approx(ci.high, rel=1e-10)
    ref = fk.kappa_by_group(data["grade"][m], data["model_a"][m], data["site"][m])
    assert [g["n_rows"] for g in got["groups"]] == ref.n_rows.tolist()
    np.testing.assert_allclose([g["kappa"] for g in got["groups"]], ref.estimate, rtol=1e-12)


def test_score_string_labels_ignore_index(tmp_path, capsys):
    path = tmp_path / "s.csv"
    path.write_text("y,p\nlow,low\nhigh,low\nskip,high\nhigh,high\nlow,skip\nlow,high\n")
    got = run_json(["score", str(path), "--true", "y", "--pred", "p",
                    "--ignore-index", "skip"], capsys)
    y = ["low", "high", "skip", "high", "low", "low"]
    p = ["low", "low", "high", "high", "skip", "high"]
    assert got["kappa"] == pytest.approx(fk.cohen_kappa(y, p, ignore_index="skip"), rel=1e-12)
    assert got["kappa"] == pytest.approx(
        cohen_kappa_score(["low", "high", "high", "low"], ["low", "low", "high", "high"]))


def test_score_nan_policy_with_missing_weight(tmp_path, capsys):
    path = tmp_path / "m.csv"
    path.write_text("y,p,w\n0,0,1\n1,1,2\n1,0,\n0,1,0.5\n1,1,3\n")
    code, _, err = run(["score", str(path), "--true", "y", "--pred", "p",
                        "--sample-weight", "w"], capsys)
    assert code == 1 and "row 3: column 'w' is missing" in err and "--nan-policy omit" in err
    got = run_json(["score", str(path), "--true", "y", "--pred", "p", "--sample-weight", "w",
                    "--nan-policy", "omit"], capsys)
    # the library takes no missing weight (a NaN weight is an error there); the command
    # line's --nan-policy omit drops the row, as it does a row with a missing label
    api = fk.cohen_kappa([0, 1, 0, 1], [0, 1, 1, 1], sample_weight=[1, 2, 0.5, 3])
    assert got["kappa"] == pytest.approx(api, rel=1e-12)
    assert got["kappa"] == pytest.approx(
        cohen_kappa_score([0, 1, 0, 1], [0, 1, 1, 1], sample_weight=[1, 2, 0.5, 3]))


@pytest.mark.parametrize("argv, message", [
    (["--sample-weight", "w", "--frequency-weight", "count"],
     "--frequency-weight: not allowed with argument --sample-weight"),
    (["--normalize", "true"], "shape the figure; add --plot PATH"),
    (["--class-names", "a,b,c,d"], "shape the figure; add --plot PATH"),
    (["--normalize", "rows"], "invalid choice: 'rows'"),
])
def test_score_unsupported_combinations_exit_2(paths, capsys, argv, message):
    code, _, err = run(["score", paths["csv"], "--true", "grade", "--pred", "model_a",
                        *argv], capsys)
    assert code == 2
    assert message in err


@pytest.mark.parametrize("text, message", [
    ("y,p,f\n0,0,1.5\n1,1,2\n", "must hold whole numbers"),
    ("y,p,f\n0,0,-1\n1,1,2\n", "must be non-negative"),
    ("y,p,f\n0,0,x\n1,1,2\n", "row 1: column 'f' holds 'x', which is not a number"),
])
def test_score_bad_frequency_weight_exit_1(tmp_path, capsys, text, message):
    path = tmp_path / "f.csv"
    path.write_text(text)
    code, _, err = run(["score", str(path), "--true", "y", "--pred", "p",
                        "--frequency-weight", "f"], capsys)
    assert code == 1
    assert message in err


def test_score_string_ignore_index_on_numbers_exit_1(paths, capsys):
    code, _, err = run(["score", paths["csv"], "--true", "grade", "--pred", "model_a",
                        "--ignore-index", "none"], capsys)
    assert code == 1
    assert "is the string 'none', but column 'grade' holds numbers; give a number" in err


@pytest.fixture()
def digit_text(tmp_path):
    """Labels "10", "2", "3" stored as text in Parquet (the command line reads
    10 as a number; the file's labels are strings)."""
    y = np.array(["10", "2", "3", "10", "2", "3", "2", "3"], dtype=object)
    p = np.array(["10", "2", "2", "10", "3", "3", "2", "10"], dtype=object)
    path = tmp_path / "digits.parquet"
    pq.write_table(pa.table({"y": y, "p": p}), path)
    return str(path), y, p


def test_digit_text_labels_and_ignore_index_match_the_files_strings(digit_text, capsys):
    path, y, p = digit_text
    scale = ["2", "3", "10"]
    got = run_json(["score", path, "--true", "y", "--pred", "p", "--labels", "2,3,10",
                    "--weights", "quadratic"], capsys)
    assert got["labels"] == scale
    assert got["kappa"] == pytest.approx(
        cohen_kappa_score(y, p, labels=scale, weights="quadratic"), rel=1e-12)
    keep = (y != "10") & (p != "10")
    got = run_json(["score", path, "--true", "y", "--pred", "p", "--ignore-index", "10"],
                   capsys)
    assert got["n_rows"] == int(keep.sum()) and got["ignore_index"] == "10"
    assert got["kappa"] == pytest.approx(cohen_kappa_score(y[keep], p[keep]), rel=1e-12)
    got = run_json(["compare", path, "--true", "y", "--pred", "p", "y", "--labels", "2,3,10",
                    "--weights", "linear", "--method", "asymptotic"], capsys)
    assert got["models"]["p"]["estimate"] == pytest.approx(
        cohen_kappa_score(y, p, labels=scale, weights="linear"), rel=1e-12)
    # two raters: Conger's kappa is Cohen's
    got = run_json(["agreement", path, "--wide", "y", "p", "--labels", "2,3,10",
                    "--weights", "quadratic", "--coefficients", "conger_kappa"], capsys)
    assert got["classes"] == scale
    assert got["coefficients"][0]["estimate"] == pytest.approx(
        cohen_kappa_score(y, p, labels=scale, weights="quadratic"), rel=1e-12)


def test_score_plot_normalize_and_class_names(paths, data, capsys, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from fastkappa import plot as fkplot

    seen = {}
    inner = fkplot.confusion_matrix

    def spy(*a, **kw):
        seen.update(kw)
        return inner(*a, **kw)

    monkeypatch.setattr(fkplot, "confusion_matrix", spy)
    out = tmp_path / "cm.png"
    code, text, err = run(["score", paths["csv"], "--true", "grade", "--pred", "model_a",
                           "--ignore-index", "-1", "--frequency-weight", "count", "--plot",
                           str(out), "--normalize", "true", "--class-names",
                           "none,mild,moderate,severe"], capsys)
    assert code == 0, err
    assert out.stat().st_size > 0 and f"figure: {out}" in text
    assert seen["normalize"] == "true"
    assert seen["labels"] == ["none", "mild", "moderate", "severe"]
    m = kept(data, "grade", "model_a")
    expected = fk.confusion_matrix(data["grade"][m], data["model_a"][m],
                                   frequency_weight=data["count"][m])
    np.testing.assert_array_equal(seen["confusion"], expected)


def test_score_plot_class_names_count_must_match(paths, capsys, tmp_path):
    pytest.importorskip("matplotlib")
    code, _, err = run(["score", paths["csv"], "--true", "grade", "--pred", "model_a",
                        "--ignore-index", "-1", "--plot", str(tmp_path / "x.png"),
                        "--class-names", "a,b,c"], capsys)
    assert code == 2
    assert "--class-names gives 3 names, but the data hold 4 classes" in err


# --------------------------------------------------------------------------- compare


@pytest.mark.parametrize("weight", ["w", None])
def test_compare_sample_weight_ignore_index_clusters(paths, data, capsys, weight):
    argv = ["compare", paths["parquet"], "--true", "grade", "--pred", "model_a", "model_b",
            "--weights", "quadratic", "--ignore-index", "-1", "--clusters", "patient",
            "--method", "percentile", "--n-resamples", "300", "--seed", "3"]
    if weight:
        argv += ["--sample-weight", weight]
    got = run_json(argv, capsys)
    api = fk.compare(data["grade"], {"model_a": data["model_a"], "model_b": data["model_b"]},
                     weights="quadratic", ignore_index=-1, clusters=data["patient"],
                     method="percentile", n_resamples=300, seed=3,
                     sample_weight=data[weight] if weight else None)
    for name, res in api.models.items():
        assert got["models"][name]["estimate"] == pytest.approx(res.estimate, rel=1e-12)
        assert got["models"][name]["low"] == pytest.approx(res.low, rel=1e-10)
        assert got["models"][name]["high"] == pytest.approx(res.high, rel=1e-10)
    (pair,) = api.pairs
    assert got["pairs"][0]["difference"] == pytest.approx(pair.difference, rel=1e-12)
    assert got["pairs"][0]["p_value"] == pytest.approx(pair.p_value, rel=1e-12)
    m = kept(data, "grade", "model_a", "model_b")
    sw = data[weight][m] if weight else None
    oracle = cohen_kappa_score(data["grade"][m], data["model_b"][m], weights="quadratic",
                               sample_weight=sw)
    assert got["models"]["model_b"]["estimate"] == pytest.approx(oracle, rel=1e-10)


def test_compare_frequency_weight(paths, data, capsys):
    got = run_json(["compare", paths["csv"], "--true", "grade", "--pred", "model_a",
                    "model_b", "--ignore-index", "-1", "--frequency-weight", "count",
                    "--method", "asymptotic"], capsys)
    preds = {"model_a": data["model_a"], "model_b": data["model_b"]}
    api = fk.compare(data["grade"], preds, ignore_index=-1, frequency_weight=data["count"],
                     method="asymptotic")
    rep = {c: np.repeat(data[c], data["count"]) for c in ("grade", "model_a", "model_b")}
    for name, res in api.models.items():
        assert got["models"][name]["estimate"] == pytest.approx(res.estimate, rel=1e-12)
        assert got["models"][name]["low"] == pytest.approx(res.low, rel=1e-10)
        # compare drops a row ignored in any column, so all models share their rows
        m = (rep["grade"] != -1) & (rep["model_a"] != -1) & (rep["model_b"] != -1)
        ci = fk.kappa_ci(rep["grade"][m], rep[name][m], method="asymptotic")
        assert got["models"][name]["estimate"] == pytest.approx(ci.estimate, rel=1e-12)
        assert got["models"][name]["high"] == pytest.approx(ci.high, rel=1e-10)


def test_compare_both_weights_exit_2(paths, capsys):
    code, _, err = run(["compare", paths["csv"], "--true", "grade", "--pred", "model_a",
                        "model_b", "--sample-weight", "w", "--frequency-weight", "count"],
                       capsys)
    assert code == 2 and "not allowed with argument" in err


# --------------------------------------------------------------------------- thresholds


@pytest.mark.parametrize("kind", ["sample", "frequency"])
def test_thresholds_weights(tmp_path, data, capsys, kind):
    m = data["grade"] != -1
    cols = {c: data[c][m] for c in ("grade", "score", "w", "count")}
    path = tmp_path / "t.csv"
    pcsv.write_csv(pa.table(cols), path)
    col = "w" if kind == "sample" else "count"
    got = run_json(["thresholds", str(path), "--true", "grade", "--score", "score",
                    f"--{kind}-weight", col], capsys)
    opt = fk.ThresholdOptimizer().fit(cols["grade"], cols["score"],
                                      **{f"{kind}_weight": cols[col]})
    np.testing.assert_allclose(got["thresholds"], opt.thresholds_, rtol=1e-12)
    assert got["kappa"] == pytest.approx(opt.qwk_, rel=1e-12)
    if kind == "frequency":
        rep = fk.ThresholdOptimizer().fit(np.repeat(cols["grade"], cols["count"]),
                                          np.repeat(cols["score"], cols["count"]))
        assert got["kappa"] == pytest.approx(rep.qwk_, rel=1e-12)
    else:
        cut = fk.apply_thresholds(cols["score"], opt.thresholds_)
        assert got["kappa"] == pytest.approx(
            cohen_kappa_score(cols["grade"], cut, weights="quadratic",
                              sample_weight=cols["w"]), rel=1e-10)


def test_thresholds_apply_refuses_weights(tmp_path, capsys):
    path = tmp_path / "a.csv"
    path.write_text("s,w\n0.2,1\n1.7,2\n")
    code, _, err = run(["thresholds", str(path), "--score", "s", "--apply", "0.5,1.5",
                        "--sample-weight", "w"], capsys)
    assert code == 2 and "--sample-weight does not go with --apply" in err


# --------------------------------------------------------------------------- nan policy


@pytest.mark.parametrize("command", ["score", "compare", "thresholds"])
def test_nan_policy_on_every_two_rater_command(command):
    from fastkappa.cli import make_parser

    parser = make_parser()
    args = {"score": ["--pred", "p"], "compare": ["--pred", "a", "b"],
            "thresholds": ["--score", "s"]}[command]
    ns = parser.parse_args([command, "f.csv", "--true", "y", *args, "--nan-policy", "omit"])
    assert ns.nan_policy == "omit"


@pytest.mark.parametrize("command", ["score", "compare"])
def test_ignored_label_outside_declared_classes(tmp_path, capsys, command):
    """--ignore-index drops a row before the declared classes are checked, as in Python."""
    path = tmp_path / "d.csv"
    path.write_text("y,p,q\n0,0,1\n1,7,1\n1,1,0\n0,0,0\n1,1,1\n")
    y, p, q = [0, 1, 1, 0, 1], [0, 7, 1, 0, 1], [1, 1, 0, 0, 1]
    preds = ["--pred", "p"] if command == "score" else ["--pred", "p", "q", "--method",
                                                        "asymptotic"]
    got = run_json([command, str(path), "--true", "y", *preds, "--n-classes", "2",
                    "--ignore-index", "7"], capsys)
    if command == "score":
        assert got["kappa"] == pytest.approx(
            fk.cohen_kappa(y, p, n_classes=2, ignore_index=7), rel=1e-12)
        assert got["n_rows"] == 4
    else:
        api = fk.compare(y, {"p": p, "q": q}, n_classes=2, ignore_index=7,
                         method="asymptotic")
        assert got["n_rows"] == api.n_rows == 4
        for name in ("p", "q"):
            assert got["models"][name]["estimate"] == pytest.approx(
                api.models[name].estimate, rel=1e-12)
    code, _, err = run([command, str(path), "--true", "y", *preds, "--n-classes", "2",
                        "--ignore-index", "5"], capsys)
    assert code == 1
    assert "holds" in err and "7" in err and "--n-classes" in err


def test_compare_reports_the_rows_it_scored(paths, data, capsys):
    got = run_json(["compare", paths["csv"], "--true", "grade", "--pred", "model_a",
                    "model_b", "--ignore-index", "-1", "--frequency-weight", "count",
                    "--method", "asymptotic"], capsys)
    m = kept(data, "grade", "model_a", "model_b")
    assert got["n_rows"] == int(data["count"][m].sum())


# ------------------------------------------------------------ the file engine in Python


def test_score_file_keywords_equal_the_api(paths, data):
    from fastkappa.files import score_file

    for kind in ("csv", "parquet"):
        got = score_file(paths[kind], true="grade", pred="model_a", weights="quadratic",
                         sample_weight="w", ignore_index=-1)
        assert got == pytest.approx(fk.cohen_kappa(
            data["grade"], data["model_a"], weights="quadratic", sample_weight=data["w"],
            ignore_index=-1), rel=1e-12)
        ci = score_file(paths[kind], true="grade", pred="model_b", frequency_weight="count",
                        ignore_index=-1, method="asymptotic")
        ref = fk.kappa_ci(data["grade"], data["model_b"], frequency_weight=data["count"],
                          ignore_index=-1, method="asymptotic")
        assert (ci.estimate, ci.low, ci.high) == pytest.approx(
            (ref.estimate, ref.low, ref.high), rel=1e-10)


@pytest.mark.parametrize("kw, message", [
    ({"sample_weight": "w", "frequency_weight": "count"},
     r"pass `sample_weight=` or `frequency_weight=`, not both"),
    ({"frequency_weight": "count", "by": "site"},
     r"`frequency_weight=` does not go with `by=` or `clusters=`"),
    ({"sample_weight": "w", "clusters": "patient"},
     r"`sample_weight=` does not go with `by=` or `clusters=`"),
    ({"sample_weight": "w", "method": "bca"},
     r"call fastkappa.kappa_ci\(\.\.\., sample_weight=\.\.\.\) instead"),
    ({"ignore_index": "none"}, r"`ignore_index` is the string 'none', but column 'grade'"),
])
def test_score_file_refusals(paths, kw, message):
    from fastkappa.files import score_file

    with pytest.raises(ValueError, match=message):
        score_file(paths["csv"], true="grade", pred="model_a", **kw)


# --------------------------------------------------------------------------- ordered categoricals


@pytest.fixture(scope="module")
def ordered(tmp_path_factory):
    """Ordered Categorical label columns (pandas' Parquet form) with an unused
    category inside the scale, a score and row weights."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    scale = ["low", "mid", "unused", "high"]
    n = 3000
    t = rng.choice(["low", "mid", "high"], n)
    def noisy(share):
        return np.where(rng.random(n) < share, t, rng.choice(["low", "mid", "high"], n))
    df = pd.DataFrame({"t": pd.Categorical(t, categories=scale, ordered=True),
                       "a": pd.Categorical(noisy(0.7), categories=scale, ordered=True),
                       "b": pd.Categorical(noisy(0.5), categories=scale, ordered=True),
                       "w": rng.integers(1, 4, n).astype(float)})
    df["s"] = pd.Categorical(t, categories=scale).codes + rng.random(n)
    path = tmp_path_factory.mktemp("ordered") / "o.parquet"
    pq.write_table(pa.Table.from_pandas(df), path, row_group_size=500)
    return str(path), df


def test_ordered_categoricals_declare_the_scale_for_every_command(ordered, capsys):
    # as in one call on the Categoricals (their categories are the classes, the
    # unused one included); weighted kappa needed --labels before
    path, df = ordered
    got = run_json(["score", path, "--true", "t", "--pred", "a", "--weights", "quadratic"],
                   capsys)
    assert got["kappa"] == pytest.approx(fk.cohen_kappa(df.t, df.a, weights="quadratic"))
    assert got["labels"] == ["low", "mid", "unused", "high"]
    got = run_json(["score", path, "--true", "t", "--pred", "a", "--weights", "quadratic",
                    "--sample-weight", "w", "--method", "asymptotic"], capsys)
    assert got["kappa"] == pytest.approx(
        fk.cohen_kappa(df.t, df.a, weights="quadratic", sample_weight=df.w))
    got = run_json(["compare", path, "--true", "t", "--pred", "a", "b", "--weights",
                    "quadratic", "--n-resamples", "200", "--seed", "1"], capsys)
    for m in ("a", "b"):
        assert got["models"][m]["estimate"] == pytest.approx(
            fk.cohen_kappa(df.t, df[m], weights="quadratic"))
    got = run_json(["thresholds", path, "--true", "t", "--score", "s"], capsys)
    fitted = fk.ThresholdOptimizer().fit(df.t, df.s)
    assert got["thresholds"] == pytest.approx(list(fitted.thresholds_))


# --------------------------------------------------------------------------- dropped rows


@pytest.fixture()
def holey(tmp_path):
    """Grades with -1 (unreadable) and empty cells in every column."""
    rng = np.random.default_rng(8)
    n = 600
    y = rng.integers(0, 3, n).astype(object)
    p = np.clip(y.astype(int) + rng.integers(-1, 2, n), 0, 2).astype(object)
    g = rng.choice(["a", "b"], n).astype(object)
    w = np.round(rng.uniform(0.5, 2, n), 2).astype(object)
    y[rng.random(n) < 0.05] = -1
    for col in (y, p, g, w):
        col[rng.random(n) < 0.04] = ""
    path = tmp_path / "holey.csv"
    lines = ["y,p,g,w"] + [f"{a},{b},{c},{d}" for a, b, c, d in zip(y, p, g, w, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    return str(path), {"y": y, "p": p, "g": g, "w": w}


@pytest.mark.parametrize("extra", [[], ["--by", "g"], ["--by", "g", "--sample-weight", "w"]])
def test_score_counts_every_dropped_row(holey, capsys, extra):
    # nothing is dropped silently: the rows read, those dropped for a missing value
    # (in any column read) and those labelled --ignore-index add up to the file
    path, d = holey
    used = ["y", "p"] + [c for c in ("g", "w") if c in extra]
    missing = np.any([d[c] == "" for c in used], axis=0)
    ignored = ~missing & ((d["y"] == -1) | (d["p"] == -1))
    got = run_json(["score", path, "--true", "y", "--pred", "p", "--nan-policy", "omit",
                    "--ignore-index", "-1", *extra], capsys)
    assert got["n_read"] == len(d["y"])
    assert got["n_missing"] == int(missing.sum()) > 0
    assert got["n_ignored"] == int(ignored.sum()) > 0
    assert got["n_rows"] == len(d["y"]) - int(missing.sum()) - int(ignored.sum())
    code, out, _ = run(["score", path, "--true", "y", "--pred", "p", "--nan-policy", "omit",
                        "--ignore-index", "-1", *extra], capsys)
    assert code == 0
    assert (f"{got['n_rows']} rows of {len(d['y'])} read ({int(missing.sum())} with a "
            f"missing value and {int(ignored.sum())} labelled -1 dropped)") in out


def test_compare_and_thresholds_count_rows_dropped_for_a_missing_value(holey, capsys):
    path, d = holey
    missing = (d["y"] == "") | (d["p"] == "")
    got = run_json(["compare", path, "--true", "y", "--pred", "p", "y", "--nan-policy",
                    "omit", "--method", "asymptotic"], capsys)
    assert (got["n_read"], got["n_missing"]) == (len(d["y"]), int(missing.sum()))
    assert got["n_rows"] == len(d["y"]) - int(missing.sum())
    got = run_json(["thresholds", path, "--true", "y", "--score", "w", "--nan-policy",
                    "omit", "--ignore-index", "-1"], capsys)
    missing = (d["y"] == "") | (d["w"] == "")
    ignored = ~missing & (d["y"] == -1)
    assert (got["n_read"], got["n_missing"]) == (len(d["y"]), int(missing.sum()))
    assert got["n_ignored"] == int(ignored.sum())


def test_declared_labels_spelled_like_missing_tokens_are_classes(tmp_path, capsys):
    # "None" is a natural grade name: once --labels declares it, it is a class in the
    # label columns (as pandas' keep_default_na=False reads it); other columns keep
    # the tokens as missing values
    rows = [("None", "None", "a", "1"), ("Mild", "None", "NA", "2"),
            ("Moderate", "Moderate", "b", "NA"), ("None", "Mild", "a", "1"),
            ("Severe", "Severe", "b", "1"), ("None", "None", "None", "1"),
            ("Mild", "Mild", "a", "0.5"), ("-", "Mild", "b", "1")]
    path = tmp_path / "none.csv"
    path.write_text("grade,model,site,w\n" + "\n".join(",".join(r) for r in rows) + "\n")
    scale = ["None", "Mild", "Moderate", "Severe"]
    y = np.array([r[0] for r in rows], dtype=object)
    p = np.array([r[1] for r in rows], dtype=object)
    ok = y != "-"  # "-" is not declared: still a missing value
    argv = ["score", str(path), "--true", "grade", "--pred", "model", "--labels",
            ",".join(scale), "--weights", "quadratic", "--nan-policy", "omit"]
    got = run_json(argv, capsys)
    assert got["n_missing"] == 1 and got["labels"] == scale
    assert got["kappa"] == pytest.approx(
        cohen_kappa_score(y[ok], p[ok], labels=scale, weights="quadratic"), rel=1e-12)
    assert fk.files.score_file(str(path), true="grade", pred="model", labels=scale,
                               weights="quadratic", nan_policy="omit") == got["kappa"]
    # site "NA" / "None" and weight "NA" stay missing
    site_ok = ok & ~np.isin([r[2] for r in rows], ["NA", "None"])
    got = run_json([*argv, "--by", "site"], capsys)
    assert got["n_missing"] == int((~site_ok).sum())
    w = np.array([r[3] for r in rows], dtype=object)
    w_ok = ok & (w != "NA")
    got = run_json([*argv, "--sample-weight", "w"], capsys)
    assert got["kappa"] == pytest.approx(cohen_kappa_score(
        y[w_ok], p[w_ok], labels=scale, weights="quadratic",
        sample_weight=w[w_ok].astype(float)), rel=1e-12)
    # undeclared, "None" is a missing value, and the message says how to declare it
    code, _, err = run(["score", str(path), "--true", "grade", "--pred", "model"], capsys)
    assert code == 1 and "is a class once --labels declares it" in err
    got = run_json(["agreement", str(path), "--wide", "grade", "model", "--labels",
                    ",".join(scale), "--coefficients", "conger_kappa"], capsys)
    ratings = np.column_stack([np.where(ok, y, None), p])  # "-": a missing rating
    assert got["coefficients"][0]["estimate"] == pytest.approx(
        fk.conger_kappa(ratings, labels=scale), rel=1e-12)


def test_a_typed_number_names_a_csv_text_label(tmp_path, capsys):
    # a CSV column of words holding "10": --ignore-index 10 names that word
    path = tmp_path / "words.csv"
    path.write_text("y,p\n10,high\nhigh,high\nlow,10\nlow,low\nhigh,low\n10,10\nlow,high\n")
    y = np.array(["10", "high", "low", "low", "high", "10", "low"])
    p = np.array(["high", "high", "10", "low", "low", "10", "high"])
    keep = (y != "10") & (p != "10")
    for extra in ([], ["--by", "y", "--sample-weight", "w"]):
        if extra:  # the in-memory path
            lines = path.read_text().splitlines()
            path.write_text("\n".join([lines[0] + ",w"] + [r + ",1" for r in lines[1:]]) + "\n")
        got = run_json(["score", str(path), "--true", "y", "--pred", "p", "--ignore-index",
                        "10", *extra], capsys)
        assert got["n_ignored"] == int((~keep).sum()) and got["ignore_index"] == "10"
        assert got["kappa"] == pytest.approx(cohen_kappa_score(y[keep], p[keep]), rel=1e-12)
    got = run_json(["compare", str(path), "--true", "y", "--pred", "p", "y", "--ignore-index",
                    "10", "--method", "asymptotic"], capsys)
    assert got["n_ignored"] == int((~keep).sum())
    assert got["models"]["p"]["estimate"] == pytest.approx(cohen_kappa_score(y[keep], p[keep]))


def test_counted_rows_and_file_lines_are_told_apart(tmp_path, capsys):
    path = tmp_path / "f.csv"
    path.write_text("y,p,n\n1,1,50\n2,2,40\n1,2,5\n2,1,5\n-1,1,100\n2,2,\n")
    argv = ["score", str(path), "--true", "y", "--pred", "p", "--frequency-weight", "n",
            "--ignore-index", "-1", "--nan-policy", "omit"]
    got = run_json(argv, capsys)
    assert (got["n_rows"], got["n_read"], got["n_missing"], got["n_ignored"]) == (100, 6, 1, 1)
    _, out, _ = run(argv, capsys)
    assert ("100 rows counted from 6 lines (1 with a missing value and 1 labelled -1 "
            "dropped)") in out


def test_compare_counts_rows_labelled_ignore_index_in_any_column(tmp_path, capsys):
    path = tmp_path / "c.csv"
    path.write_text("y,p,q\n1,1,1\n2,2,1\n1,2,2\n-1,1,1\n2,NA,2\n1,1,-1\n2,2,2\n")
    argv = ["compare", str(path), "--true", "y", "--pred", "p", "q", "--ignore-index", "-1",
            "--nan-policy", "omit", "--method", "asymptotic"]
    got = run_json(argv, capsys)
    assert (got["n_rows"], got["n_read"], got["n_missing"], got["n_ignored"]) == (4, 7, 1, 2)
    _, out, _ = run(argv, capsys)
    assert "4 rows of 7 read (1 with a missing value and 2 labelled -1 dropped)" in out


def test_declared_token_labels_leave_long_format_ids_missing(tmp_path, capsys):
    path = tmp_path / "long.csv"
    path.write_text("item,rater,label\n1,A,None\n1,B,Mild\n2,A,Mild\n2,None,Mild\n")
    code, _, err = run(["agreement", str(path), "--item", "item", "--rater", "rater",
                        "--label", "label", "--labels", "None,Mild"], capsys)
    assert code == 1 and "--rater holds 1 missing ids" in err


def test_a_whole_float_typed_on_the_command_line_is_that_number(tmp_path, capsys):
    path = tmp_path / "num.csv"
    path.write_text("y,p\n10,1\n1,1\n2,2\n10,10\n2,1\n")
    got = run_json(["score", str(path), "--true", "y", "--pred", "p", "--ignore-index",
                    "10.0"], capsys)
    assert got["n_ignored"] == 2
    assert got["kappa"] == pytest.approx(cohen_kappa_score([1, 2, 2], [1, 2, 1]))
