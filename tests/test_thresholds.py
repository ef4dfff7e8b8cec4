"""Threshold optimisation: exact optimum, conventions, cross-validation, errors.

Oracles: an exhaustive search over every monotone assignment of the distinct
scores to the classes (all cut positions, empty classes included), kappa from
a confusion table built by ``np.add.at`` (checked against scikit-learn),
scipy's Nelder-Mead (the Kaggle OptimizedRounder recipe), ``np.searchsorted``
and the closed form of Lin's concordance correlation.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from naive import brute_force, brute_force_cuts, kappa_ref

import fastkappa as fk

# --------------------------------------------------------------------------- oracles


def achieved(t, s, cuts, k, weights=None, sw=None):
    return kappa_ref(t, np.searchsorted(cuts, s, side="right"), k, weights, sw)


def test_kappa_ref_matches_sklearn(rng):
    from sklearn.metrics import cohen_kappa_score

    for weights in (None, "linear", "quadratic"):
        t = rng.integers(0, 4, 50)
        p = rng.integers(0, 4, 50)
        sw = rng.uniform(0, 2, 50)
        assert kappa_ref(t, p, 4, weights, sw) == pytest.approx(
            cohen_kappa_score(t, p, weights=weights, sample_weight=sw, labels=range(4)),
            abs=1e-12)


# --------------------------------------------------------------------------- exactness


@pytest.mark.parametrize("k", [2, 3, 4, 5])
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_optimize_thresholds_equals_exhaustive_search(k, weights, weighted, seed):
    rng = np.random.default_rng(1000 * k + seed)
    n = 24
    t = rng.integers(0, k, n)
    d = 10 if k <= 3 else 7
    # noisy scores on a coarse grid: ties across classes, some runs of one class
    s = np.round(t * (d - 1) / (k - 1) + rng.normal(0, 1.5, n)).clip(0, d - 1) / 3.0
    sw = rng.uniform(0, 3, n) * (rng.random(n) > 0.2) if weighted else None
    # the fixed seeds give at least two weighted classes; a change that breaks this
    # must fail loudly, not skip
    assert len(np.unique(t[sw > 0] if weighted else t)) >= 2, "degenerate draw"
    cuts = fk.optimize_thresholds(t, s, n_classes=k, weights=weights, sample_weight=sw)
    best, _ = brute_force(t, s, k, weights, sw)
    assert cuts.shape == (k - 1,)
    assert np.all(np.diff(cuts) > 0)
    assert achieved(t, s, cuts, k, weights, sw) == pytest.approx(best, abs=1e-12)


@settings(deadline=None, max_examples=60)
@given(
    data=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 6),
                            st.sampled_from([0.0, 0.5, 1.0, 2.0])), min_size=2, max_size=14),
    k=st.integers(2, 4),
    weights=st.sampled_from([None, "linear", "quadratic"]),
    use_sw=st.booleans(),
)
def test_optimize_thresholds_exhaustive_hypothesis(data, k, weights, use_sw):
    t = np.array([min(a, k - 1) for a, _, _ in data])
    s = np.array([b for _, b, _ in data], dtype=float)
    sw = np.array([c for _, _, c in data]) if use_sw else None
    live = t if sw is None else t[sw > 0]
    assume(len(np.unique(live)) >= 2)
    cuts = fk.optimize_thresholds(t, s, n_classes=k, weights=weights, sample_weight=sw)
    best, _ = brute_force(t, s, k, weights, sw)
    assert np.all(np.diff(cuts) > 0)
    assert achieved(t, s, cuts, k, weights, sw) == pytest.approx(best, abs=1e-12)


def test_optimize_thresholds_custom_asymmetric_weights(rng):
    w = np.array([[0, 1, 5], [2, 0, 1], [9, 3, 0]], dtype=float)
    for _ in range(5):
        t = rng.integers(0, 3, 20)
        s = rng.integers(0, 8, 20) + t
        cuts = fk.optimize_thresholds(t, s, weights=w)
        best, _ = brute_force(t, s, 3, w)
        assert achieved(t, s, cuts, 3, w) == pytest.approx(best, abs=1e-12)


def test_optimize_thresholds_absent_class_equals_exhaustive_search(rng):
    # y_true never holds grade 2 of 0..4: the scale is declared, the search uses it
    t = rng.choice([0, 1, 3, 4], 30)
    s = t + rng.normal(0, 1.0, 30)
    s = np.round(s, 0)
    cuts = fk.optimize_thresholds(t, s, n_classes=5)
    best, _ = brute_force(t, s, 5, "quadratic")
    assert achieved(t, s, cuts, 5, "quadratic") == pytest.approx(best, abs=1e-12)


# --------------------------------------------------------------------------- vs Nelder-Mead


def _nelder_mead_qwk(t, s, k):
    """The OptimizedRounder recipe (Nelder-Mead on the cut points from [0.5, 1.5, ...])."""
    from scipy.optimize import minimize

    def loss(c):
        return -kappa_ref(t, np.searchsorted(np.sort(c), s, side="right"), k, "quadratic")

    res = minimize(loss, np.arange(k - 1) + 0.5, method="nelder-mead")
    return -res.fun


DISTORTIONS = {
    "identity": lambda x: x,
    "exp": lambda x: np.exp(x / 2),
    "cube": lambda x: (x - 1) ** 3,
    "logistic": lambda x: 1 / (1 + np.exp(-(x - 2))),
    "squash": lambda x: 0.5 * x + 0.3,
}


@pytest.mark.parametrize("k", [3, 5, 7])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("distortion", sorted(DISTORTIONS))
def test_optimize_thresholds_never_below_nelder_mead(k, seed, distortion):
    rng = np.random.default_rng(seed)
    n = 600
    t = rng.integers(0, k, n)
    s = DISTORTIONS[distortion](t + rng.normal(0, 0.8, n))
    cuts = fk.optimize_thresholds(t, s, n_classes=k)
    ours = achieved(t, s, cuts, k, "quadratic")
    assert ours >= _nelder_mead_qwk(t, s, k) - 1e-12
    # and the cuts reproduce the kappa fastkappa scores
    assert fk.quadratic_weighted_kappa(t, s, thresholds=cuts, n_classes=k) == pytest.approx(
        ours, abs=1e-12)


def test_optimize_thresholds_beats_the_kaggle_recipe():
    # pandas.cut + scikit-learn QWK + Nelder-Mead, as published
    pd = pytest.importorskip("pandas")
    from scipy.optimize import minimize
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(7)
    t = rng.integers(0, 5, 3000)
    s = t + rng.normal(0, 0.9, 3000)

    def loss(c):
        p = pd.cut(s, [-np.inf, *np.sort(c), np.inf], labels=[0, 1, 2, 3, 4])
        return -cohen_kappa_score(t, p, weights="quadratic")

    nm = -minimize(loss, [0.5, 1.5, 2.5, 3.5], method="nelder-mead").fun
    cuts = fk.optimize_thresholds(t, s)
    ours = cohen_kappa_score(t, fk.apply_thresholds(s, cuts), weights="quadratic")
    assert ours >= nm - 1e-12


# --------------------------------------------------------------------------- conventions


def test_optimize_thresholds_cuts_sit_midway():
    t = np.array([0, 0, 1, 1, 2, 2])
    s = np.array([0.1, 0.4, 0.5, 1.2, 1.3, 2.0])
    np.testing.assert_allclose(fk.optimize_thresholds(t, s), [0.45, 1.25], rtol=0, atol=1e-15)


def test_optimize_thresholds_midpoints_on_random_data(rng):
    t = rng.integers(0, 4, 300)
    s = t + rng.normal(0, 0.6, 300)
    cuts = fk.optimize_thresholds(t, s)
    u = np.unique(s)
    for c in cuts:
        i = np.searchsorted(u, c)
        assert 0 < i < len(u)
        assert c == 0.5 * u[i - 1] + 0.5 * u[i]


def test_optimize_thresholds_ties_share_a_class(rng):
    t = rng.integers(0, 3, 200)
    s = np.round(t + rng.normal(0, 1.0, 200))  # heavy ties across classes
    cuts = fk.optimize_thresholds(t, s)
    p = fk.apply_thresholds(s, cuts)
    for value in np.unique(s):
        assert len(np.unique(p[s == value])) == 1
    assert np.all(np.isin(cuts, (np.unique(s)[1:] + np.unique(s)[:-1]) / 2))


def test_optimize_thresholds_empty_middle_class():
    # grades 0 and 2 only, perfectly separated: kappa 1 needs class 1 empty
    t = np.array([0] * 10 + [2] * 10)
    s = np.concatenate([np.arange(10.0), np.arange(20.0, 30.0)])
    cuts = fk.optimize_thresholds(t, s, n_classes=3)
    np.testing.assert_allclose(cuts, [9 + 11 / 3, 9 + 22 / 3])
    p = fk.apply_thresholds(s, cuts)
    assert np.array_equal(p, t)
    assert fk.quadratic_weighted_kappa(t, p, n_classes=3) == 1.0


def test_optimize_thresholds_empty_top_and_bottom_classes():
    t = np.array([1] * 5 + [2] * 5)
    s = np.arange(10.0)  # mean gap 1
    cuts = fk.optimize_thresholds(t, s, n_classes=4)
    # classes 0 and 3 empty: half a mean gap beyond the lowest / highest score
    np.testing.assert_allclose(cuts, [-0.5, 4.5, 9.5])
    assert np.array_equal(fk.apply_thresholds(s, cuts), t)
    # two empty classes below: spread over one mean gap under the lowest score
    cuts = fk.optimize_thresholds(t + 1, s, n_classes=4)
    np.testing.assert_allclose(cuts, [-2 / 3, -1 / 3, 4.5])


def test_optimize_thresholds_constant_scores():
    t = np.array([0, 0, 1, 1, 1, 2, 3])
    s = np.full(7, 2.5)
    cuts = fk.optimize_thresholds(t, s)
    assert np.all(np.diff(cuts) > 0)
    p = fk.apply_thresholds(s, cuts)
    # every row in the class holding the median of y_true (class 1), kappa 0
    assert np.all(p == 1)
    assert kappa_ref(t, p, 4, "quadratic") == 0.0


def test_optimize_thresholds_weighted_median_for_constant_scores():
    t = np.array([0, 1, 2])
    cuts = fk.optimize_thresholds(t, [1.0, 1.0, 1.0], sample_weight=[1, 1, 5])
    assert np.all(fk.apply_thresholds([1.0], cuts) == 2)


def test_optimize_thresholds_adjacent_floats_and_huge_offsets():
    a = 1.0
    b = np.nextafter(a, 2.0)
    t = np.array([0, 0, 1, 1])
    s = np.array([a, a, b, b])
    cuts = fk.optimize_thresholds(t, s)
    assert np.array_equal(fk.apply_thresholds(s, cuts), t)
    big = 1e15 + np.array([0.0, 0.125, 0.25, 0.375])
    cuts = fk.optimize_thresholds(t, big, n_classes=4)
    assert np.all(np.diff(cuts) > 0)
    assert np.array_equal(fk.apply_thresholds(big, cuts), [0, 0, 1, 1])


def test_optimize_thresholds_labels_strings_and_scale():
    t = ["mild", "none", "severe", "mild", "none", "severe"]
    s = [1.1, 0.2, 2.2, 0.9, -0.1, 1.9]
    cuts = fk.optimize_thresholds(t, s, labels=["none", "mild", "severe"])
    labels = fk.apply_thresholds(s, cuts, labels=["none", "mild", "severe"])
    assert list(labels) == t


def test_optimize_thresholds_ordered_categorical_declares_the_scale():
    pd = pytest.importorskip("pandas")
    scale = ["none", "mild", "moderate", "severe"]
    t = pd.Categorical(["none", "mild", "mild", "severe", "none", "severe"], categories=scale,
                       ordered=True)
    s = [0.1, 1.2, 0.9, 3.1, -0.2, 2.8]
    opt = fk.ThresholdOptimizer().fit(t, s)
    assert list(opt.classes_) == scale
    assert opt.thresholds_.shape == (3,)
    assert list(opt.transform(s)) == list(t)
    assert opt.qwk_ == 1.0


def test_optimize_thresholds_non_contiguous_grades_use_the_observed_classes():
    # classes are the sorted observed values 1, 2, 4 (index weights), like sklearn
    t = np.array([1, 1, 2, 2, 4, 4])
    s = np.array([0.0, 0.1, 1.0, 1.1, 3.0, 3.1])
    cuts = fk.optimize_thresholds(t, s)
    assert cuts.shape == (2,)
    assert np.array_equal(fk.apply_thresholds(s, cuts, labels=[1, 2, 4]), t)


def test_optimize_thresholds_accepts_array_likes(rng):
    pd = pytest.importorskip("pandas")
    t = rng.integers(0, 3, 100)
    s = t + rng.normal(0, 0.5, 100)
    expected = fk.optimize_thresholds(t, s)
    np.testing.assert_array_equal(fk.optimize_thresholds(pd.Series(t), pd.Series(s)), expected)
    np.testing.assert_array_equal(fk.optimize_thresholds(list(t), list(s)), expected)
    np.testing.assert_array_equal(
        fk.optimize_thresholds(t.astype(np.int8), s.astype(np.float32)),
        fk.optimize_thresholds(t, s.astype(np.float32).astype(np.float64)))
    np.testing.assert_array_equal(fk.optimize_thresholds(t, s[:, None]), expected)


def test_optimize_thresholds_zero_weight_rows_do_not_count(rng):
    t = rng.integers(0, 3, 60)
    s = t + rng.normal(0, 0.7, 60)
    sw = np.ones(60)
    sw[:20] = 0
    # zero-weight rows only move where cut points can sit, never the kappa
    cuts = fk.optimize_thresholds(t, s, sample_weight=sw)
    cuts_sub = fk.optimize_thresholds(t[20:], s[20:], n_classes=3)
    assert achieved(t[20:], s[20:], cuts, 3, "quadratic") == pytest.approx(
        achieved(t[20:], s[20:], cuts_sub, 3, "quadratic"), abs=1e-12)


def test_optimize_thresholds_integer_weights_equal_repeated_rows(rng):
    t = rng.integers(0, 4, 80)
    s = t + rng.normal(0, 0.8, 80)
    reps = rng.integers(1, 4, 80)
    a = fk.optimize_thresholds(t, s, sample_weight=reps)
    b = fk.optimize_thresholds(np.repeat(t, reps), np.repeat(s, reps))
    assert achieved(t, s, a, 4, "quadratic", reps) == pytest.approx(
        achieved(t, s, b, 4, "quadratic", reps), abs=1e-12)


def test_optimize_thresholds_deterministic_and_thread_safe(rng):
    t = rng.integers(0, 5, 20000)
    s = t + rng.normal(0, 0.8, 20000)
    ref = fk.optimize_thresholds(t, s)
    barrier = threading.Barrier(4)

    def run(_):
        barrier.wait()
        return fk.optimize_thresholds(t, s)

    with ThreadPoolExecutor(4) as ex:
        for out in ex.map(run, range(4)):
            np.testing.assert_array_equal(out, ref)


# --------------------------------------------------------------------------- apply


@settings(deadline=None, max_examples=200)
@given(
    scores=st.lists(st.floats(-1e6, 1e6, allow_nan=False), max_size=40),
    cuts=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=6, unique=True),
    with_labels=st.booleans(),
)
def test_apply_thresholds_matches_searchsorted(scores, cuts, with_labels):
    cuts = np.sort(np.asarray(cuts, dtype=float))
    assume(np.all(np.diff(cuts) > 0))
    s = np.asarray(scores, dtype=float)
    expected = np.searchsorted(cuts, s, side="right")
    if with_labels:
        labels = [f"c{i}" for i in range(len(cuts) + 1)]
        out = fk.apply_thresholds(s, cuts, labels=labels)
        assert list(out) == [labels[i] for i in expected]
    else:
        out = fk.apply_thresholds(s, cuts)
        np.testing.assert_array_equal(out, expected)


def test_apply_thresholds_boundaries_go_up():
    np.testing.assert_array_equal(fk.apply_thresholds([0.5, 1.5, 1.4999], [0.5, 1.5]),
                                  [1, 2, 1])
    assert list(fk.apply_thresholds([0, 2], [1.0], labels=[10, 20])) == [10, 20]


# --------------------------------------------------------------------------- continuous QWK


def test_continuous_qwk_closed_form(rng):
    t = rng.integers(0, 5, 500).astype(float)
    s = 0.8 * t + rng.normal(0.3, 0.9, 500)
    cov = np.cov(t, s, bias=True)
    expected = 2 * cov[0, 1] / (cov[0, 0] + cov[1, 1] + (t.mean() - s.mean()) ** 2)
    assert fk.continuous_qwk(t, s) == pytest.approx(expected, rel=1e-12)
    sw = rng.uniform(0, 2, 500)
    cov = np.cov(t, s, aweights=sw, bias=True)
    mt, ms = np.average(t, weights=sw), np.average(s, weights=sw)
    expected = 2 * cov[0, 1] / (cov[0, 0] + cov[1, 1] + (mt - ms) ** 2)
    assert fk.continuous_qwk(t, s, sample_weight=sw) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_continuous_qwk_equals_qwk_on_consecutive_integers(rng, weighted):
    from sklearn.metrics import cohen_kappa_score

    t = rng.integers(1, 6, 400)
    p = np.clip(t + rng.integers(-2, 3, 400), 1, 5)
    sw = rng.uniform(0, 2, 400) if weighted else None
    qwk = cohen_kappa_score(t, p, weights="quadratic", labels=range(1, 6), sample_weight=sw)
    assert fk.continuous_qwk(t, p, sample_weight=sw) == pytest.approx(qwk, abs=1e-12)
    assert fk.continuous_qwk(t, p, sample_weight=sw) == pytest.approx(
        fk.quadratic_weighted_kappa(t, p, labels=range(1, 6), sample_weight=sw), abs=1e-12)


def test_continuous_qwk_undefined_warns():
    with pytest.warns(fk.UndefinedKappaWarning, match="constant and equal"):
        assert np.isnan(fk.continuous_qwk([2, 2, 2], [2.0, 2.0, 2.0]))
    with pytest.warns(fk.UndefinedKappaWarning):
        assert fk.continuous_qwk([1], [1.0], replace_undefined_by=0.0) == 0.0
    # constant but different: defined, and 0
    assert fk.continuous_qwk([2, 2], [3.0, 3.0]) == 0.0


# --------------------------------------------------------------------------- estimator


def _graded(rng, n=3000, k=5, sd=0.8):
    t = rng.integers(0, k, n)
    return t, t + rng.normal(0, sd, n)


def test_threshold_optimizer_fit_matches_function(rng):
    t, s = _graded(rng)
    opt = fk.ThresholdOptimizer().fit(t, s)
    np.testing.assert_array_equal(opt.thresholds_, fk.optimize_thresholds(t, s))
    np.testing.assert_array_equal(opt.classes_, np.arange(5))
    assert opt.qwk_ == pytest.approx(achieved(t, s, opt.thresholds_, 5, "quadratic"),
                                     abs=1e-12)
    assert opt.cv_qwk_ is None and opt.cv_thresholds_ is None
    np.testing.assert_array_equal(opt.transform(s), fk.apply_thresholds(s, opt.thresholds_))
    np.testing.assert_array_equal(opt.fit_transform(t, s), opt.predict(s))
    assert opt.n_iter_ >= 1


def test_threshold_optimizer_labels_and_weights(rng):
    t = rng.integers(1, 6, 500)
    s = t + rng.normal(0, 0.9, 500)
    opt = fk.ThresholdOptimizer(weights="linear").fit(t, s)
    np.testing.assert_array_equal(opt.classes_, [1, 2, 3, 4, 5])
    assert set(np.unique(opt.transform(s))) <= {1, 2, 3, 4, 5}
    assert opt.qwk_ == pytest.approx(
        fk.cohen_kappa(t, opt.transform(s), weights="linear", labels=[1, 2, 3, 4, 5]),
        abs=1e-12)


def test_threshold_optimizer_cv_out_of_fold():
    from sklearn.model_selection import StratifiedKFold

    rng = np.random.default_rng(3)
    t, s = _graded(rng, 1200, 4)
    sw = rng.uniform(0.5, 2, 1200)
    skf = StratifiedKFold(4, shuffle=True, random_state=0)
    opt = fk.ThresholdOptimizer(cv=skf).fit(t, s, sample_weight=sw)
    oof = np.empty(1200, dtype=int)
    for f, (train, test) in enumerate(skf.split(np.zeros((1200, 1)), t)):
        cuts = fk.optimize_thresholds(t[train], s[train], n_classes=4, sample_weight=sw[train])
        np.testing.assert_array_equal(opt.cv_thresholds_[f], cuts)
        oof[test] = fk.apply_thresholds(s[test], cuts)
        np.testing.assert_array_equal(opt.cv_folds_[test], f)
    np.testing.assert_array_equal(opt.oof_predictions_, oof)
    assert opt.cv_qwk_ == pytest.approx(kappa_ref(t, oof, 4, "quadratic", sw), abs=1e-12)
    # tuned on all rows, scored on them: never below the out-of-fold estimate here
    assert opt.qwk_ >= opt.cv_qwk_


def test_threshold_optimizer_cv_int_is_stratified_and_deterministic(rng):
    t, s = _graded(rng, 2000, 5)
    a = fk.ThresholdOptimizer(cv=5, seed=11).fit(t, s)
    b = fk.ThresholdOptimizer(cv=5, seed=np.random.SeedSequence(11)).fit(t, s)
    c = fk.ThresholdOptimizer(cv=5, seed=12).fit(t, s)
    assert a.cv_qwk_ == b.cv_qwk_
    np.testing.assert_array_equal(a.cv_thresholds_, b.cv_thresholds_)
    np.testing.assert_array_equal(a.cv_folds_, b.cv_folds_)
    assert not np.array_equal(a.cv_folds_, c.cv_folds_)
    # each class is split into 5 near-equal parts
    for cls in range(5):
        counts = np.bincount(a.cv_folds_[t == cls], minlength=5)
        assert counts.max() - counts.min() <= 1
    # every fold's cut points are the optimum on the other folds
    for f in range(5):
        train = a.cv_folds_ != f
        np.testing.assert_array_equal(
            a.cv_thresholds_[f], fk.optimize_thresholds(t[train], s[train], n_classes=5))
    oof = np.empty(len(t), dtype=int)
    for f in range(5):
        test = a.cv_folds_ == f
        oof[test] = fk.apply_thresholds(s[test], a.cv_thresholds_[f])
    assert a.cv_qwk_ == pytest.approx(kappa_ref(t, oof, 5, "quadratic"), abs=1e-12)
    # no seed: contiguous blocks in input order, deterministic
    d1 = fk.ThresholdOptimizer(cv=3).fit(t, s)
    d2 = fk.ThresholdOptimizer(cv=3).fit(t, s)
    np.testing.assert_array_equal(d1.cv_folds_, d2.cv_folds_)
    first = np.flatnonzero(t == 0)
    assert np.all(np.diff(d1.cv_folds_[first]) >= 0)


def test_threshold_optimizer_curve(rng):
    from sklearn.metrics import cohen_kappa_score

    t, s = _graded(rng, 800, 4, 0.9)
    sw = rng.uniform(0.2, 2, 800)
    for weight in (None, sw):
        opt = fk.ThresholdOptimizer().fit(t, s, sample_weight=weight)
        curve = opt.curve_
        assert set(curve) == {"cut", "threshold", "kappa"}
        assert len(curve["cut"]) == len(curve["threshold"]) == len(curve["kappa"])
        # the optimum is global: no single-cut move beats it, and each cut reaches it
        assert np.nanmax(curve["kappa"]) <= opt.qwk_ + 1e-12
        for c in range(3):
            sel = curve["cut"] == c
            x = curve["threshold"][sel]
            assert np.all(np.diff(x) > 0)
            assert opt.thresholds_[c] in x
            assert curve["kappa"][sel][x == opt.thresholds_[c]][0] == pytest.approx(
                opt.qwk_, abs=1e-12)
            for i in (0, len(x) // 3, len(x) - 1):
                cuts = opt.thresholds_.copy()
                cuts[c] = x[i]
                p = np.searchsorted(cuts, s, side="right")
                expected = cohen_kappa_score(t, p, weights="quadratic", labels=range(4),
                                             sample_weight=weight)
                assert curve["kappa"][sel][i] == pytest.approx(expected, abs=1e-9)


def test_threshold_optimizer_sklearn_protocol(rng):
    from sklearn.base import clone

    opt = fk.ThresholdOptimizer(n_classes=5, cv=3, seed=1)
    params = opt.get_params()
    assert np.isnan(params.pop("replace_undefined_by"))
    assert params == {"n_classes": 5, "labels": None, "weights": "quadratic", "cv": 3,
                      "seed": 1, "ignore_index": None, "nan_policy": "raise"}
    twin = clone(opt)
    assert twin.get_params() == opt.get_params()
    assert opt.set_params(cv=4) is opt and opt.cv == 4
    assert repr(fk.ThresholdOptimizer()) == "ThresholdOptimizer()"
    assert repr(opt) == "ThresholdOptimizer(n_classes=5, cv=4, seed=1)"


# --------------------------------------------------------------------------- errors


def test_optimize_thresholds_errors():
    t = np.array([0, 1, 2, 1])
    s = np.array([0.1, 0.5, 0.9, 0.4])
    with pytest.raises(ValueError, match=r"`scores` holds missing values \(NaN/None\) in 1 row; "
                                         "pass nan_policy='omit'"):
        fk.optimize_thresholds(t, [0.1, np.nan, 0.9, 0.4])
    with pytest.raises(ValueError, match="`scores` holds inf in 1 row;"):
        fk.optimize_thresholds(t, [0.1, np.inf, 0.9, 0.4])
    with pytest.raises(ValueError, match=r"`y_true` holds missing values \(NaN/None\) in 1 row; "
                                         "pass nan_policy='omit'"):
        fk.optimize_thresholds([0.0, 1.0, np.nan, 1.0], s)
    with pytest.raises(ValueError, match="`y_true` holds missing values"):
        fk.optimize_thresholds(["a", None, "b", "a"], s, labels=["a", "b"])
    with pytest.raises(ValueError, match="same length; got 4 and 3"):
        fk.optimize_thresholds(t, s[:3])
    with pytest.raises(ValueError, match="are empty"):
        fk.optimize_thresholds([], [])
    with pytest.raises(ValueError, match="must be 1-D continuous scores; got a 2-D array"):
        fk.optimize_thresholds(t, np.ones((4, 3)))
    with pytest.raises(ValueError, match="must be numeric continuous scores; it holds strings"):
        fk.optimize_thresholds(t, ["a", "b", "c", "d"])
    with pytest.raises(ValueError, match=r"holds a single class with positive weight \(1\)"):
        fk.optimize_thresholds([1, 1, 1, 1], s)
    with pytest.raises(ValueError, match="holds a single class with positive weight"):
        fk.optimize_thresholds(t, s, sample_weight=[0, 1, 0, 1])
    with pytest.raises(ValueError, match="strings with no declared order"):
        fk.optimize_thresholds(["a", "b", "a", "b"], s, weights=None)
    with pytest.raises(ValueError, match="outside the declared classes"):
        fk.optimize_thresholds(t, s, n_classes=2)
    with pytest.raises(ValueError, match="`weights` must be None, 'linear', 'quadratic'"):
        fk.optimize_thresholds(t, s, weights="quad")
    with pytest.raises(ValueError, match="`sample_weight` must be non-negative"):
        fk.optimize_thresholds(t, s, sample_weight=[1, -1, 1, 1])
    with pytest.raises(ValueError, match="either `labels` or `n_classes`"):
        fk.optimize_thresholds(t, s, labels=[0, 1, 2], n_classes=3)


def test_apply_thresholds_errors():
    with pytest.raises(ValueError, match="`thresholds` must be strictly increasing"):
        fk.apply_thresholds([0.1, 0.2], [1.0, 1.0])
    with pytest.raises(ValueError, match="`thresholds` must be finite"):
        fk.apply_thresholds([0.1, 0.2], [np.nan])
    with pytest.raises(ValueError, match="1-D array of cut points"):
        fk.apply_thresholds([0.1], [[0.5]])
    with pytest.raises(ValueError, match="numeric cut points"):
        fk.apply_thresholds([0.1], ["a"])
    # as in every other function that takes cut points: at least one (an empty array
    # put every score in class 0), and `labels` checked as `labels` everywhere (a
    # repeated class, a missing one, numbers mixed with strings were returned)
    with pytest.raises(ValueError, match="non-empty 1-D array of cut points"):
        fk.apply_thresholds([0.1, 0.7], [])
    for labels, match in (([1, "a", 2], "mixes strings and numbers"),
                          ([1, 1, 2], "repeat|duplicate|more than once"),
                          ([1, None, 2], "missing"), ([1, np.nan, 2], "NaN")):
        with pytest.raises(ValueError, match=match):
            fk.apply_thresholds([0.1, 0.7, 2], [0.5, 1.5], labels=labels)
    with pytest.raises(ValueError, match="`scores` holds NaN/None in 1 row;"):
        fk.apply_thresholds([np.nan, 0.2], [0.5])
    with pytest.raises(ValueError, match="3 labels for 2 cut points; got 2"):
        fk.apply_thresholds([0.1], [0.5, 1.5], labels=["a", "b"])


def test_continuous_qwk_errors():
    with pytest.raises(ValueError, match="`y_true` must be numeric numbers; it holds strings"):
        fk.continuous_qwk(["a", "b"], [0.1, 0.2])
    with pytest.raises(ValueError, match=r"`scores` holds missing values \(NaN/None\) in 1 row; "
                                         "pass nan_policy='omit'"):
        fk.continuous_qwk([1, 2], [0.1, np.nan])
    with pytest.raises(ValueError, match="same length; got 2 and 1"):
        fk.continuous_qwk([1, 2], [0.1])
    with pytest.raises(ValueError, match="are empty"):
        fk.continuous_qwk([], [])
    with pytest.raises(ValueError, match="`sample_weight` must have one weight per row"):
        fk.continuous_qwk([1, 2], [0.1, 0.2], sample_weight=[1.0])


def test_threshold_optimizer_errors(rng):
    t, s = _graded(rng, 40, 3)
    for bad in (1, 0, 2.5, True, "5"):
        with pytest.raises(ValueError, match="`cv` must be None, an integer number of folds"):
            fk.ThresholdOptimizer(cv=bad).fit(t, s)
    with pytest.raises(ValueError, match="`cv`=50 folds need at least 50 rows; got 40"):
        fk.ThresholdOptimizer(cv=50).fit(t, s)
    with pytest.raises(ValueError, match="not fitted yet"):
        fk.ThresholdOptimizer().transform(s)
    with pytest.raises(ValueError, match="invalid parameter 'folds'"):
        fk.ThresholdOptimizer().set_params(folds=3)

    class Overlapping:
        def split(self, x, y):
            n = len(y)
            yield np.arange(n // 2, n), np.arange(n // 2 + 1)
            yield np.arange(n // 2), np.arange(n // 2, n)

    class Partial:
        def split(self, x, y):
            n = len(y)
            yield np.arange(n // 2, n), np.arange(n // 2)

    with pytest.raises(ValueError, match="more than one test fold"):
        fk.ThresholdOptimizer(cv=Overlapping()).fit(t, s)
    with pytest.raises(ValueError, match="leaves rows out of every test fold"):
        fk.ThresholdOptimizer(cv=Partial()).fit(t, s)
    # a training fold with a single class: the message names the fold
    t2 = np.array([0] * 10 + [1])
    s2 = np.arange(11.0)

    class OneOut:
        def split(self, x, y):
            yield np.arange(10), np.array([10])
            yield np.array([10]), np.arange(10)

    with pytest.raises(ValueError, match=r"\(the training rows of fold 0\) holds a single"):
        fk.ThresholdOptimizer(cv=OneOut()).fit(t2, s2)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), k=st.sampled_from([2, 3, 5, 200]),
       whole=st.booleans())
def test_partition_and_start_equal_plain_loops(seed, n, k, whole):
    """The NumPy partition (a radix sort) is the stable counting sort a loop does, and
    the search starts (no programme run: ``max_iter=0``) from the classes in y_true's
    proportions, as a plain loop over the blocks places them."""
    from fastkappa._core.dispatch import threshold_kernels
    from fastkappa._threshold_search import _dinkelbach, _partition_by_class

    rng = np.random.default_rng(seed)
    t = rng.integers(0, k, n).astype(np.int16)
    s = rng.normal(size=n)
    s_part, perm, offsets = _partition_by_class(t, s, k)
    want_perm = [i for c in range(k) for i in range(n) if t[i] == c]
    assert perm.tolist() == want_perm and s_part.tolist() == s[want_perm].tolist()
    assert offsets.tolist() == [0, *np.cumsum([np.sum(t == c) for c in range(k)]).tolist()]
    h = rng.integers(1, 4, n).astype(float) if whole else rng.random(n) + 0.01
    r = rng.integers(0, 3, k).astype(float)
    r[0] += 1.0
    want, j, bound, before = [], 0, r[0], 0.0
    for hb in h:
        mid = before + 0.5 * hb
        while j < k - 1 and bound <= mid:
            j += 1
            bound += r[j]
        want.append(j)
        before += hb
    g = rng.random((n, k))
    v = rng.random(k) + 0.1  # B > 0 for every assignment: the start is kept
    assign = np.empty(n, dtype=np.int16)
    a, b, n_iter = _dinkelbach(threshold_kernels(), g, h, v, r, 0, assign, np.full(n, k - 1))
    assert n_iter == 0 and assign.tolist() == want
    assert a == pytest.approx(g[np.arange(n), want].sum(), rel=1e-12)
    assert b == pytest.approx((h * v[want]).sum(), rel=1e-12)


@pytest.mark.parametrize("seed", range(60))
def test_scores_a_few_floats_apart_get_the_best_cut_points_that_fit(seed):
    """Between two distinct scores only a few floats apart, strictly increasing cut
    points have room for a few classes only.  The search keeps to that room: the
    cut points returned give the best kappa that any such cut points give (brute
    force), and the kappa reported is the one they give."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 6))
    n = int(rng.integers(4, 9))
    base = float(rng.choice([1.0, 1e6, -3.5, 2.0 ** -1060, 7.25e300]))
    offsets = rng.integers(0, 6, n)  # each score a few floats above base
    s = np.array([base] * n)
    for i, m in enumerate(offsets):
        for _ in range(m):
            s[i] = np.nextafter(s[i], np.inf)
    t = rng.integers(0, k, n)
    t[:2] = [0, k - 1]  # two classes at least
    weights = [None, "linear", "quadratic"][seed % 3]
    sw = rng.random(n) + 0.1 if seed % 4 == 0 else None
    cuts = fk.optimize_thresholds(t, s, n_classes=k, weights=weights, sample_weight=sw)
    assert np.all(np.diff(cuts) > 0)
    pred = fk.apply_thresholds(s, cuts)
    got = kappa_ref(t, pred, k, weights, sw)
    assert got == pytest.approx(brute_force_cuts(t, s, k, weights, sw), abs=1e-12)
    if weights == "quadratic" and sw is None:
        fitted = fk.ThresholdOptimizer(n_classes=k).fit(t, s)
        assert fitted.qwk_ == pytest.approx(got, abs=1e-12)


def test_cut_points_sit_midway_in_wide_gaps_across_zero_and_fit_subnormal_scores():
    """A gap from a negative to a positive score holds its cut midway (counting its
    floats must not overflow), and subnormal scores get cut points that give the
    classes the search chose."""
    assert np.asarray(fk.optimize_thresholds([0, 1], [-1.0, 4.0])).tolist() == [1.5]
    assert np.asarray(fk.optimize_thresholds([0, 1, 2], [-2.0, 3.0, 5.0])).tolist() == [
        0.5, 4.0]
    s, t = np.array([5e-324, 1e-323]), np.array([4, 5])
    cuts = fk.optimize_thresholds(t, s, n_classes=6)
    assert np.all(np.diff(cuts) > 0)
    np.testing.assert_array_equal(fk.apply_thresholds(s, np.asarray(cuts)), t)
    assert fk.ThresholdOptimizer(n_classes=6).fit(t, s).qwk_ == 1.0
