"""compare(): paired model comparison, against oracles and known behaviour."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import fastkappa as fk
from fastkappa._core import intervals as fki
from fastkappa._core.intervals import holm, inverted_p_value

METHODS = ["bca", "percentile", "basic", "asymptotic"]


def _models(n=3000, seed=0, k=5):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    good = np.clip(y + rng.integers(-1, 2, n) * (rng.random(n) < 0.3), 0, k - 1)
    poor = np.clip(y + rng.integers(-2, 3, n), 0, k - 1)
    return y, {"good": good, "poor": poor}


@pytest.mark.parametrize("method", METHODS)
def test_compare_estimates_equal_cohen_kappa(method):
    y, preds = _models()
    res = fk.compare(y, preds, weights="quadratic", method=method, n_resamples=500, seed=1)
    for name, pred in preds.items():
        assert res.models[name].estimate == pytest.approx(
            fk.cohen_kappa(y, pred, weights="quadratic"), abs=1e-12)
    pair = res.pair("good", "poor")
    assert pair.difference == pytest.approx(
        res.models["good"].estimate - res.models["poor"].estimate, abs=1e-12)
    assert pair.low < pair.difference < pair.high
    assert pair.p_value < 0.01
    assert res.n_rows == len(y)


def test_compare_model_identical_to_truth_and_to_itself():
    y, preds = _models(n=800)
    preds = {"truth": y.copy(), "good": preds["good"], "again": preds["good"].copy()}
    with pytest.warns(fk.DegenerateIntervalWarning, match="distribution is constant"):
        res = fk.compare(y, preds, n_resamples=400, seed=0)
    assert res.models["truth"].estimate == 1.0
    assert (res.models["truth"].low, res.models["truth"].high) == (1.0, 1.0)
    same = res.pair("good", "again")
    assert same.difference == 0.0
    assert (same.low, same.high) == (0.0, 0.0)
    assert same.p_value == 1.0
    assert np.all(same.distribution == 0.0)


def test_compare_swapping_models_flips_the_sign():
    y, preds = _models(n=1500)
    ab = fk.compare(y, preds, n_resamples=600, seed=3, method="percentile")
    ba = fk.compare(y, {"poor": preds["poor"], "good": preds["good"]}, n_resamples=600,
                    seed=3, method="percentile")
    p1, p2 = ab.pairs[0], ba.pairs[0]
    assert (p1.a, p1.b) == ("good", "poor") and (p2.a, p2.b) == ("poor", "good")
    assert p2.difference == pytest.approx(-p1.difference, abs=1e-12)
    assert (p2.low, p2.high) == pytest.approx((-p1.high, -p1.low), abs=1e-12)
    assert p2.p_value == pytest.approx(p1.p_value)
    flipped = ab.pair("poor", "good")
    assert flipped.difference == pytest.approx(-p1.difference)


def test_compare_paired_resamples_match_a_row_index_oracle():
    """The paired replicates of kappa_a - kappa_b agree in distribution with
    resampling rows by index and scoring both models with scikit-learn."""
    from scipy import stats
    from sklearn.metrics import cohen_kappa_score

    y, preds = _models(n=400, seed=5, k=3)
    res = fk.compare(y, preds, n_resamples=4000, seed=11, method="percentile")
    ours = res.pairs[0].distribution
    rng = np.random.default_rng(12)
    naive = []
    for _ in range(1500):
        i = rng.integers(0, len(y), len(y))
        naive.append(cohen_kappa_score(y[i], preds["good"][i], labels=[0, 1, 2])
                     - cohen_kappa_score(y[i], preds["poor"][i], labels=[0, 1, 2]))
    naive = np.array(naive)
    assert stats.ks_2samp(ours, naive).pvalue > 1e-3
    se = naive.std(ddof=1)
    assert ours.mean() == pytest.approx(naive.mean(), abs=4 * se / math.sqrt(1500))
    assert ours.std(ddof=1) == pytest.approx(se, rel=0.1)


def test_compare_asymptotic_se_matches_bootstrap_sd():
    y, preds = _models(n=20_000, seed=2)
    asym = fk.compare(y, preds, weights="linear", method="asymptotic")
    boot = fk.compare(y, preds, weights="linear", method="percentile", n_resamples=3000,
                      seed=2)
    assert asym.pairs[0].standard_error == pytest.approx(boot.pairs[0].standard_error,
                                                         rel=0.08)
    for name in preds:
        ci = fk.kappa_ci(y, preds[name], weights="linear", method="asymptotic")
        assert (asym.models[name].low, asym.models[name].high) == pytest.approx(
            (ci.low, ci.high), abs=1e-12)
        assert asym.models[name].standard_error_null == pytest.approx(ci.standard_error_null)


def test_compare_asymptotic_difference_se_against_delta_method_oracle():
    """Paired influence functions: the SE of kappa_a - kappa_b equals the
    delta-method SE from a numerical gradient over the joint cell proportions."""
    rng = np.random.default_rng(4)
    k = 3
    y = rng.integers(0, k, 600)
    a = np.where(rng.random(600) < 0.7, y, rng.integers(0, k, 600))
    b = np.where(rng.random(600) < 0.5, y, rng.integers(0, k, 600))
    res = fk.compare(y, {"a": a, "b": b}, method="asymptotic")
    cells, inverse = np.unique(np.stack([y, a, b], axis=1), axis=0, return_inverse=True)
    counts = np.bincount(inverse.ravel(), minlength=len(cells)).astype(float)
    p0 = counts / counts.sum()

    def diff(p):
        ta = np.zeros((k, k))
        tb = np.zeros((k, k))
        np.add.at(ta, (cells[:, 0], cells[:, 1]), p)
        np.add.at(tb, (cells[:, 0], cells[:, 2]), p)
        return fk.kappa_from_confusion(ta) - fk.kappa_from_confusion(tb)

    h = 1e-6
    grad = np.array([(diff(p0 + h * e) - diff(p0 - h * e)) / (2 * h)
                     for e in np.eye(len(p0))])
    # multinomial covariance (diag(p) - p p^T) / N
    var = (grad**2 @ p0 - (grad @ p0) ** 2) / counts.sum()
    assert res.pairs[0].standard_error == pytest.approx(math.sqrt(var), rel=1e-4)


def test_compare_union_of_classes_and_declared_scale():
    y = np.array([0, 1, 2, 0, 1, 2, 0, 1])
    a = np.array([0, 1, 2, 0, 1, 3, 0, 1])  # predicts a class y_true never has
    b = np.array([0, 1, 1, 0, 2, 2, 0, 0])
    res = fk.compare(y, {"a": a, "b": b}, weights="quadratic", method="asymptotic")
    np.testing.assert_array_equal(res.classes, [0, 1, 2, 3])
    assert res.models["b"].estimate == pytest.approx(
        fk.cohen_kappa(y, b, weights="quadratic", labels=[0, 1, 2, 3]))
    with pytest.raises(ValueError, match="outside the declared classes"):
        fk.compare(y, {"a": a, "b": b}, n_classes=3)


def test_compare_drops_a_row_for_every_model():
    y = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 1])
    a = np.array([0, 1, 2, 0, 1, 2, 0, 1, 1, 1], dtype=float)
    b = np.array([0, 1, 1, 0, 2, 2, 0, 0, 2, 1], dtype=float)
    a[3] = np.nan
    with pytest.raises(ValueError, match="nan_policy='omit'"):
        fk.compare(y, {"a": a, "b": b}, method="asymptotic")
    res = fk.compare(y, {"a": a, "b": b}, method="asymptotic", nan_policy="omit")
    keep = np.ones(10, dtype=bool)
    keep[3] = False
    assert res.n_rows == 9
    assert res.models["b"].estimate == pytest.approx(fk.cohen_kappa(y[keep], b[keep]))


def test_compare_reference_and_holm():
    rng = np.random.default_rng(8)
    n = 2000
    y = rng.integers(0, 4, n)
    preds = {f"m{i}": np.where(rng.random(n) < 0.5 + 0.1 * i, y, rng.integers(0, 4, n))
             for i in range(4)}
    res = fk.compare(y, preds, reference="m0", p_adjust="holm", n_resamples=1000, seed=0)
    assert [(p.a, p.b) for p in res.pairs] == [("m1", "m0"), ("m2", "m0"), ("m3", "m0")]
    raw = np.array([p.p_value for p in res.pairs])
    np.testing.assert_allclose([p.p_adjusted for p in res.pairs], holm(raw))
    assert all(p.p_adjusted >= p.p_value for p in res.pairs)
    with pytest.warns(UserWarning, match="cannot reach 0.05"):
        fk.compare(y, preds, p_adjust="holm", n_resamples=100, seed=0)


def test_holm_matches_statsmodels():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.array([0.01, 0.04, 0.03, 0.2, 0.001, 0.5])
    expected = multitest.multipletests(p, method="holm")[1]
    np.testing.assert_allclose(holm(p), expected)


def test_inverted_p_value_is_the_level_where_the_interval_touches_zero():
    rng = np.random.default_rng(0)
    reps = rng.normal(0.05, 0.02, 20_000)
    est = 0.05
    for method in ("percentile", "basic"):
        p = inverted_p_value(est, reps, method)
        lo, hi, _ = fki.bootstrap_interval(est, reps, method, 1 - p,
                                                    bounds=(-2, 2))
        assert min(abs(lo), abs(hi)) < 2e-3
    p_bca = inverted_p_value(est, reps, "bca")  # no jackknife: a = 0
    lo, hi, _ = fki.bootstrap_interval(est, reps, "bca", 1 - p_bca, bounds=(-2, 2))
    assert min(abs(lo), abs(hi)) < 2e-3
    assert inverted_p_value(est, np.full(10, 0.0), "percentile") == 1.0
    assert inverted_p_value(est, np.full(10, 0.3), "percentile") == pytest.approx(0.2)


def test_compare_clusters_widen_the_interval():
    rng = np.random.default_rng(21)
    patients = 600
    y_pat = rng.integers(0, 3, patients)
    y = np.repeat(y_pat, 2)  # both eyes share the grade
    noise = np.repeat(rng.random(patients) < 0.35, 2)  # and the model's mistakes
    a = np.where(noise, (y + 1) % 3, y)
    b = np.where(np.repeat(rng.random(patients) < 0.45, 2), (y + 2) % 3, y)
    ids = np.repeat(np.arange(patients), 2)
    iid = fk.compare(y, {"a": a, "b": b}, method="percentile", n_resamples=1500, seed=1)
    cl = fk.compare(y, {"a": a, "b": b}, method="percentile", n_resamples=1500, seed=1,
                    clusters=ids)
    width = lambda r: r.pairs[0].high - r.pairs[0].low  # noqa: E731
    assert width(cl) > 1.2 * width(iid)
    asym = fk.compare(y, {"a": a, "b": b}, method="asymptotic", clusters=ids)
    assert asym.pairs[0].standard_error == pytest.approx(cl.pairs[0].standard_error,
                                                         rel=0.12)


def test_compare_sample_weight_estimates():
    y, preds = _models(n=600, seed=9)
    w = np.random.default_rng(9).random(600)
    res = fk.compare(y, preds, sample_weight=w, n_resamples=300, seed=0, method="percentile")
    for name, pred in preds.items():
        assert res.models[name].estimate == pytest.approx(
            fk.cohen_kappa(y, pred, sample_weight=w), abs=1e-12)


def test_compare_validation_messages():
    y, preds = _models(n=50)
    with pytest.raises(ValueError, match="at least two models"):
        fk.compare(y, {"good": preds["good"]})
    with pytest.raises(ValueError, match="must be a dict"):
        fk.compare(y, [preds["good"], preds["poor"]])
    with pytest.raises(ValueError, match="`reference` 'best' is not one of"):
        fk.compare(y, preds, reference="best")
    # regression: TypeError: unhashable type
    for bad in ({"good": 1}, ["good"], 0):
        with pytest.raises(ValueError, match=r"`reference` names one model: pass one of the "
                                             r"model names \['good', 'poor'.*\(a string\); got "
                                             rf"{type(bad).__name__}\."):
            fk.compare(y, preds, reference=bad)
    with pytest.raises(ValueError, match="`p_adjust` must be None or 'holm'"):
        fk.compare(y, preds, p_adjust="bonferroni")
    with pytest.raises(ValueError, match="`method` must be"):
        fk.compare(y, preds, method="wald")
    with pytest.raises(ValueError, match="same length"):
        fk.compare(y, {"a": y, "b": y[:-1]})


def test_compare_output_forms():
    y, preds = _models(n=500)
    res = fk.compare(y, preds, method="asymptotic", weights="quadratic")
    text = str(res)
    assert "quadratic-weighted kappa (QWK) of 2 models on 500 rows" in text
    assert "good - poor" in text
    data = json.loads(json.dumps(res.to_dict()))
    assert data["pairs"][0]["a"] == "good"
    assert "<table>" in res._repr_html_()
    df = res.to_dataframe()
    assert list(df["a"]) == ["good"]
    assert res.to_dataframe("models")["estimate"].tolist() == pytest.approx(
        [res.models["good"].estimate, res.models["poor"].estimate])


@pytest.mark.slow
def test_compare_rejection_rate_under_equal_population_kappa():
    """Two models with the same population kappa: at the 5% level the paired test
    rejects about 5% of the time (within Monte-Carlo error); clearly different
    models are rejected almost always."""
    rng = np.random.default_rng(2024)
    reps, n = 300, 400
    rejected = 0
    for r in range(reps):
        y = rng.integers(0, 3, n)
        a = np.where(rng.random(n) < 0.6, y, rng.integers(0, 3, n))
        b = np.where(rng.random(n) < 0.6, y, rng.integers(0, 3, n))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fk.DegenerateIntervalWarning)
            res = fk.compare(y, {"a": a, "b": b}, n_resamples=400, seed=r,
                             method="percentile")
        rejected += res.pairs[0].p_value < 0.05
    rate = rejected / reps
    mc = math.sqrt(0.05 * 0.95 / reps)
    assert 0.05 - 3.5 * mc < rate < 0.05 + 3.5 * mc, rate
    hits = 0
    for r in range(40):
        y = rng.integers(0, 3, n)
        a = np.where(rng.random(n) < 0.8, y, rng.integers(0, 3, n))
        b = np.where(rng.random(n) < 0.5, y, rng.integers(0, 3, n))
        hits += fk.compare(y, {"a": a, "b": b}, n_resamples=400, seed=r).pairs[0].p_value < 0.05
    assert hits >= 38


def test_compare_same_seed_same_result_at_one_and_two_threads(tmp_path):
    code = textwrap.dedent("""
        import json, numpy as np, fastkappa as fk
        rng = np.random.default_rng(0)
        y = rng.integers(0, 4, 5000)
        preds = {f"m{i}": np.where(rng.random(5000) < 0.6, y, rng.integers(0, 4, 5000))
                 for i in range(3)}
        ids = np.arange(5000) // 2
        out = []
        for clusters in (None, ids):
            res = fk.compare(y, preds, n_resamples=700, seed=42, clusters=clusters)
            out.append([[p.low, p.high, p.p_value] for p in res.pairs])
        print(json.dumps(out))
    """)
    results = []
    for threads in ("1", "2"):
        env = dict(os.environ, NUMBA_NUM_THREADS=threads)
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, check=True)
        results.append(json.loads(proc.stdout))
    assert results[0] == results[1]


def test_compare_fifty_models_against_a_reference():
    rng = np.random.default_rng(50)
    n, k = 3000, 5
    y = rng.integers(0, k, n)
    preds = {f"m{i:02d}": np.where(rng.random(n) < 0.4 + 0.01 * i, y, rng.integers(0, k, n))
             for i in range(50)}
    res = fk.compare(y, preds, weights="quadratic", reference="m00", p_adjust="holm",
                     n_resamples=2000, seed=0, method="percentile")
    assert len(res.models) == 50 and len(res.pairs) == 49
    for name in ("m00", "m17", "m49"):
        assert res.models[name].estimate == pytest.approx(
            fk.cohen_kappa(y, preds[name], weights="quadratic"), abs=1e-12)
    best = res.pair("m49", "m00")
    assert best.difference > 0 and best.p_adjusted < 0.05
    asym = fk.compare(y, preds, weights="quadratic", method="asymptotic")
    assert len(asym.pairs) == 50 * 49 // 2


def test_compare_takes_a_dataframe_of_predictions():
    """A pandas or polars DataFrame (columns = models) gives the dict's numbers."""
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    rng = np.random.default_rng(5)
    t = rng.integers(0, 5, 400)
    cols = {"a": np.clip(t + rng.integers(-1, 2, 400), 0, 4), "b": rng.integers(0, 5, 400)}
    want = fk.compare(t, cols, weights="quadratic", n_resamples=300, seed=1)
    for frame in (pd.DataFrame(cols), pl.DataFrame(cols)):
        got = fk.compare(t, frame, weights="quadratic", n_resamples=300, seed=1)
        assert list(got.models) == ["a", "b"]
        for name in cols:
            assert got.models[name].estimate == want.models[name].estimate
            assert (got.models[name].low, got.models[name].high) == (
                want.models[name].low, want.models[name].high)
        assert got.pairs[0].p_value == want.pairs[0].p_value
    with pytest.raises(ValueError, match="one column per model"):
        fk.compare(t, [cols["a"], cols["b"]])


def test_compare_computes_each_bca_acceleration_once(monkeypatch):
    """One acceleration per model and per pair: the pair's interval and its
    inverted p-value share it (the jackknife can hold 10^5 values per pair)."""
    import importlib

    cmp_mod = importlib.import_module("fastkappa.compare")  # the module, not the function
    calls = []
    real = cmp_mod.bca_acceleration

    def counting(jack, counts=None):
        calls.append(len(jack))
        return real(jack, counts)

    monkeypatch.setattr(cmp_mod, "bca_acceleration", counting)
    y, preds = _models()
    preds = {**preds, "third": np.roll(preds["good"], 1)}
    want = fk.compare(y, preds, n_resamples=300, seed=2)
    assert len(calls) == 3  # the pairs; each model's interval computes its own once
    monkeypatch.setattr(cmp_mod, "bca_acceleration", real)
    again = fk.compare(y, preds, n_resamples=300, seed=2)
    assert [(p.low, p.high, p.p_value) for p in want.pairs] == [
        (p.low, p.high, p.p_value) for p in again.pairs]


def test_inverted_p_value_takes_the_acceleration_it_would_compute():
    rng = np.random.default_rng(5)
    reps = rng.normal(0.1, 0.05, 2000)
    jack = rng.normal(0.1, 0.01, 300) ** 3
    from fastkappa._core.intervals import bca_acceleration

    a = bca_acceleration(jack)
    assert a != 0.0
    assert inverted_p_value(0.1, reps, "bca", jackknife=jack) == inverted_p_value(
        0.1, reps, "bca", acceleration=a)
    assert inverted_p_value(0.1, reps, "bca", jackknife=jack) != inverted_p_value(
        0.1, reps, "bca")


@pytest.mark.parametrize("weighted", [False, True])
def test_seeded_row_path_does_not_depend_on_the_row_order(weighted):
    # models erring independently: a joint type per row or so, and the row-draw path,
    # which drew rows in their given order (shuffled rows gave other intervals)
    from fastkappa._core.units import use_row_tables

    rng = np.random.default_rng(0)
    n = 20_000
    t = rng.integers(0, 5, n)
    models = {f"m{i}": np.where(rng.random(n) < 0.5, t, rng.integers(0, 5, n))
              for i in range(5)}
    joint = np.unique(np.column_stack([t, *models.values()]), axis=0)
    assert use_row_tables(len(joint), n, 5, 5)
    kw = {"sample_weight": rng.exponential(1.0, n)} if weighted else {}
    shuffle = rng.permutation(n)
    a = fk.compare(t, models, method="percentile", n_resamples=200, seed=0, **kw)
    b = fk.compare(t[shuffle], {k: v[shuffle] for k, v in models.items()},
                   method="percentile", n_resamples=200, seed=0,
                   **{k: v[shuffle] for k, v in kw.items()})
    assert [(x.low, x.high) for x in a.pairs] == [(x.low, x.high) for x in b.pairs]
    # nor on the order the models are given
    c = fk.compare(t, dict(reversed(models.items())), method="percentile", n_resamples=200,
                   seed=0, **kw)
    for name in models:
        np.testing.assert_array_equal(a.models[name].distribution,
                                      c.models[name].distribution)


def test_dataframe_columns_one_model_name_apart_are_refused():
    # columns 1 and "1" are one model name: one model was dropped silently
    pd = pytest.importorskip("pandas")
    t = np.array([0, 1, 2, 1, 0, 2])
    frame = pd.DataFrame({1: t, "1": t[::-1], "x": t})
    with pytest.raises(ValueError, match="repeats a column name"):
        fk.compare(t, frame, n_resamples=50, seed=0)


def test_compare_models_declaring_different_ordered_scales_raise():
    # regression: b was scored on a's scale, silently
    pd = pytest.importorskip("pandas")
    t = np.array([0, 1, 3, 3, 1, 0, 3, 1])
    a = pd.Series(pd.Categorical([0, 3, 3, 1, 1, 0, 3, 0], categories=[0, 1, 2, 3],
                                 ordered=True))
    b = pd.Series(pd.Categorical([0, 1, 3, 1, 1, 0, 3, 1], categories=[3, 1, 0],
                                 ordered=True))
    match = (r"`predictions\['a'\]` and `predictions\['b'\]` are ordered categoricals with "
             "different categories; they must declare the same classes in the same order")
    for method in ("asymptotic", "percentile"):
        with pytest.raises(ValueError, match=match):
            fk.compare(t, {"a": a, "b": b}, weights="quadratic", method=method,
                       n_resamples=100, seed=0)
    with pytest.raises(ValueError, match=match):
        fk.compare(t, {"a": a, "b": b}, method="asymptotic")  # unweighted too
    # y_true's declaration is checked against every model, as in cohen_kappa
    tc = pd.Series(pd.Categorical(t, categories=[0, 1, 2, 3], ordered=True))
    with pytest.raises(ValueError, match=r"`y_true` and `predictions\['b'\]` are ordered"):
        fk.compare(tc, {"a": a, "b": b}, method="asymptotic")
    # declared classes (labels=) settle the scale; the same scale twice is fine
    same = pd.Series(pd.Categorical(b.astype(int), categories=[0, 1, 2, 3], ordered=True))
    res = fk.compare(t, {"a": a, "b": same}, weights="quadratic", method="asymptotic")
    assert res.models["b"].estimate == pytest.approx(
        fk.cohen_kappa(t, b.astype(int), weights="quadratic", labels=[0, 1, 2, 3]), abs=1e-12)
    fk.compare(t, {"a": a, "b": b}, labels=[0, 1, 2, 3], method="asymptotic")
    # scores (argmax) next to ordered labels index the declared scale
    probs = np.eye(4)[[0, 1, 3, 3, 1, 0, 3, 0]]
    res = fk.compare(tc, {"a": a, "s": probs}, weights="quadratic", method="asymptotic")
    assert res.models["s"].estimate == pytest.approx(
        fk.cohen_kappa(t, [0, 1, 3, 3, 1, 0, 3, 0], weights="quadratic", labels=[0, 1, 2, 3]),
        abs=1e-12)
