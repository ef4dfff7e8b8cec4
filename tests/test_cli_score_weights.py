"""Row weights with ``score --by`` / ``--clusters`` and ``--sample-weight`` with
``--method`` (issue 13): the numbers the Python API gives for the same rows."""

from __future__ import annotations

import json

import numpy as np
import pytest

import fastkappa as fk
from fastkappa.cli import main

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    rng = np.random.default_rng(7)
    n = 600
    t = rng.integers(0, 4, n)
    a = np.where(rng.random(n) < 0.7, t, rng.integers(0, 4, n))
    frame = pd.DataFrame({"t": t, "a": a, "w": rng.random(n) + 0.1,
                          "f": rng.integers(1, 4, n), "g": rng.choice(["x", "y", "z"], n),
                          "c": np.arange(n) // 4})
    path = tmp_path_factory.mktemp("weights") / "rows.csv"
    frame.to_csv(path, index=False)
    return str(path), frame


def _json(argv, capsys):
    code = main([*argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _groups(res, key):
    return np.array([np.nan if g[key] is None else g[key] for g in res["groups"]])


def _ci(res, key):
    return np.array([g["ci"][key] for g in res["groups"]])


WEIGHTS = [("--sample-weight", "w", "sample_weight"), ("--frequency-weight", "f",
                                                       "frequency_weight")]


@pytest.mark.parametrize(("flag", "col", "kw"), WEIGHTS)
@pytest.mark.parametrize("method", [None, "percentile", "bca"])
def test_score_by_with_weights_is_kappa_by_group(table, capsys, flag, col, kw, method):
    path, d = table
    argv = ["score", path, "--true", "t", "--pred", "a", "--by", "g", flag, col,
            "--weights", "quadratic"]
    if method:
        argv += ["--method", method, "--n-resamples", "300", "--seed", "5"]
    res = _json(argv, capsys)
    ref = fk.kappa_by_group(d.t, d.a, d.g, weights="quadratic", method=method,
                            n_resamples=300, seed=5, **{kw: d[col]})
    assert [g["group"] for g in res["groups"]] == ref.groups.tolist()
    np.testing.assert_array_equal(_groups(res, "kappa"), ref.estimate)
    np.testing.assert_array_equal(_groups(res, "n_rows"), ref.n_rows)
    if method:
        np.testing.assert_array_equal(_ci(res, "low"), ref.low)
        np.testing.assert_array_equal(_ci(res, "high"), ref.high)
    assert res["kappa"] == fk.cohen_kappa(d.t, d.a, weights="quadratic", **{kw: d[col]})


@pytest.mark.parametrize(("flag", "col", "kw"), WEIGHTS)
def test_score_clusters_with_weights_is_kappa_ci(table, capsys, flag, col, kw):
    path, d = table
    res = _json(["score", path, "--true", "t", "--pred", "a", "--clusters", "c", flag, col,
                 "--method", "percentile", "--n-resamples", "300", "--seed", "2"], capsys)
    ref = fk.kappa_ci(d.t, d.a, clusters=d.c, method="percentile", n_resamples=300, seed=2,
                      **{kw: d[col]})
    assert (res["ci"]["low"], res["ci"]["high"]) == (ref.low, ref.high)
    assert res["ci"]["estimate"] == ref.estimate


def test_score_by_and_clusters_with_counts_is_kappa_by_group(table, capsys):
    path, d = table
    res = _json(["score", path, "--true", "t", "--pred", "a", "--by", "g", "--clusters", "c",
                 "--frequency-weight", "f", "--method", "percentile", "--n-resamples", "300",
                 "--seed", "9"], capsys)
    ref = fk.kappa_by_group(d.t, d.a, d.g, clusters=d.c, frequency_weight=d.f,
                            method="percentile", n_resamples=300, seed=9)
    np.testing.assert_array_equal(_ci(res, "low"), ref.low)
    np.testing.assert_array_equal(_ci(res, "high"), ref.high)


@pytest.mark.parametrize("method", ["percentile", "asymptotic"])
def test_score_sample_weight_with_method_is_kappa_ci(table, capsys, method):
    path, d = table
    res = _json(["score", path, "--true", "t", "--pred", "a", "--sample-weight", "w",
                 "--method", method, "--n-resamples", "300", "--seed", "4"], capsys)
    ref = fk.kappa_ci(d.t, d.a, sample_weight=d.w, method=method, n_resamples=300, seed=4)
    assert (res["ci"]["low"], res["ci"]["high"]) == (ref.low, ref.high)


def test_compare_sample_weight_with_method_is_compare(table, capsys):
    path, d = table
    b = d.t.where(d.index % 3 == 0, d.a[::-1].to_numpy())
    frame = d.assign(b=b)
    other = path.replace("rows.csv", "rows_b.csv")
    frame.to_csv(other, index=False)
    res = _json(["compare", other, "--true", "t", "--pred", "a", "b", "--sample-weight", "w",
                 "--method", "percentile", "--n-resamples", "300", "--seed", "6"], capsys)
    ref = fk.compare(frame.t, {"a": frame.a, "b": frame.b}, sample_weight=frame.w,
                     method="percentile", n_resamples=300, seed=6)
    (pair,) = res["pairs"]
    assert (pair["low"], pair["high"]) == (ref.pairs[0].low, ref.pairs[0].high)
    assert res["models"]["a"]["low"] == ref.models["a"].low


def test_score_weighted_groups_text_shows_weights(table, capsys):
    path, _ = table
    assert main(["score", path, "--true", "t", "--pred", "a", "--by", "g",
                 "--sample-weight", "w"]) == 0
    text = capsys.readouterr().out.split("by 'g':\n")[1].splitlines()
    assert text[0].split() == ["group", "weight", "kappa"]
    assert all("." in line.split()[1] for line in text[1:])
