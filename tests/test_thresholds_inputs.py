"""The input keywords of the threshold search: ``ignore_index`` and ``nan_policy``.

``optimize_thresholds`` and ``ThresholdOptimizer`` (fit, score) take them with
the meaning they have in ``cohen_kappa``.  Oracles: the rows filtered by hand,
then the search on what is left (itself checked against the exhaustive search
of ``tests/naive.py``, which is also run directly on small cases), and
scikit-learn's ``cohen_kappa_score`` for ``score``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import brute_force, kappa_ref
from sklearn.metrics import cohen_kappa_score

import fastkappa as fk


def _dirty(rng, n=400, k=4, n_ignored=30, n_nan_true=20, n_nan_score=25):
    """Grades 0..k-1 with -1 (unlabelled) rows, NaN grades and NaN scores."""
    y = rng.integers(0, k, n).astype(np.float64)
    s = y + rng.normal(0, 0.8, n)
    y[rng.choice(n, n_ignored, replace=False)] = -1
    y[rng.choice(n, n_nan_true, replace=False)] = np.nan
    s[rng.choice(n, n_nan_score, replace=False)] = np.nan
    return y, s


def _by_hand(y, s, *, ignore=-1, sw=None):
    keep = ~np.isnan(y) & ~np.isnan(s) & (y != ignore)
    return y[keep].astype(np.int64), s[keep], None if sw is None else sw[keep], keep


# --------------------------------------------------------------------------- optimize_thresholds


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("weighted", [False, True])
def test_ignore_index_and_omit_equal_the_search_on_rows_filtered_by_hand(rng, weights,
                                                                          weighted):
    y, s = _dirty(rng)
    sw = rng.random(len(y)) if weighted else None
    yk, sk, swk, _ = _by_hand(y, s, sw=sw)
    got = fk.optimize_thresholds(y, s, weights=weights, sample_weight=sw, ignore_index=-1,
                                 nan_policy="omit")
    want = fk.optimize_thresholds(yk, sk, weights=weights, sample_weight=swk)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got.labels, [0, 1, 2, 3])


@pytest.mark.parametrize("seed", range(6))
def test_filtered_search_reaches_the_exhaustive_optimum(seed):
    rng = np.random.default_rng(seed)
    y, s = _dirty(rng, n=16, k=3, n_ignored=3, n_nan_true=2, n_nan_score=2)
    s = np.round(s, 1)  # ties too
    yk, sk, _, _ = _by_hand(y, s)
    cuts = fk.optimize_thresholds(y, s, ignore_index=-1, nan_policy="omit")
    classes = np.asarray(cuts.labels)
    t = np.searchsorted(classes, yk)
    best, _ = brute_force(t, sk, len(classes), "quadratic")
    got = kappa_ref(t, np.searchsorted(cuts, sk, side="right"), len(classes), "quadratic")
    assert got == pytest.approx(best, abs=1e-12)


def test_ignore_index_alone_keeps_every_score(rng):
    y = rng.integers(0, 4, 300)
    s = y + rng.normal(0, 0.7, 300)
    y[:40] = 9
    s[:40] = 9.0  # a score equal to ignore_index is a score: only y_true is matched
    got = fk.optimize_thresholds(y, s, ignore_index=9)
    np.testing.assert_array_equal(got, fk.optimize_thresholds(y[40:], s[40:]))


def test_a_class_seen_only_in_dropped_rows_is_no_class():
    # grade 3 occurs only on a row whose score is missing: as if filtered first
    y = np.array([0, 0, 1, 1, 2, 2, 3])
    s = np.array([0.1, 0.3, 1.1, 0.9, 2.2, 1.8, np.nan])
    got = fk.optimize_thresholds(y, s, nan_policy="omit")
    want = fk.optimize_thresholds(y[:6], s[:6])
    np.testing.assert_array_equal(got, want)
    assert got.labels.tolist() == [0, 1, 2]
    # a declared scale keeps it (as cohen_kappa does)
    assert fk.optimize_thresholds(y, s, nan_policy="omit", n_classes=4).labels.tolist() == [
        0, 1, 2, 3]


def test_missing_labels_of_every_container_are_omitted(rng):
    pd = pytest.importorskip("pandas")
    grades = np.array(["none", "mild", "moderate", "severe"], dtype=object)
    idx = rng.integers(0, 4, 200)
    s = idx + rng.normal(0, 0.6, 200)
    y = grades[idx].copy()
    y[:7] = None
    want = fk.optimize_thresholds(list(y[7:]), s[7:], labels=list(grades))
    for container in (list(y), pd.Series(y), pd.Series(pd.Categorical(
            y, categories=grades, ordered=True))):
        labels = None if isinstance(container, pd.Series) and isinstance(
            container.dtype, pd.CategoricalDtype) else list(grades)
        got = fk.optimize_thresholds(container, s, labels=labels, nan_policy="omit")
        np.testing.assert_array_equal(got, want)
        assert got.labels.tolist() == list(grades)
    # pandas' nullable floats hold pd.NA scores
    s_na = pd.array(np.where(np.arange(200) < 7, np.nan, s), dtype="Float64")
    s_na[:7] = pd.NA
    got = fk.optimize_thresholds(grades[idx], s_na, labels=list(grades), nan_policy="omit")
    np.testing.assert_array_equal(got, fk.optimize_thresholds(grades[idx][7:], s[7:],
                                                              labels=list(grades)))


def test_frequency_weight_with_omit_equals_the_expanded_rows_filtered(rng):
    y, s = _dirty(rng, n=120)
    fw = rng.integers(1, 4, len(y))
    got = fk.optimize_thresholds(y, s, frequency_weight=fw, ignore_index=-1,
                                 nan_policy="omit")
    yk, sk, _, keep = _by_hand(y, s)
    want = fk.optimize_thresholds(np.repeat(yk, fw[keep]), np.repeat(sk, fw[keep]))
    np.testing.assert_array_equal(got, want)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(4, 40), k=st.integers(2, 4),
       container=st.sampled_from(["numpy", "list"]))
def test_omit_and_ignore_equal_filtering_first_hypothesis(data, n, k, container):
    y = np.array(data.draw(st.lists(st.sampled_from([*range(k), -1, np.nan]),
                                    min_size=n, max_size=n)), dtype=np.float64)
    s = np.array(data.draw(st.lists(st.one_of(st.floats(-3, 3, allow_nan=False),
                                              st.just(np.nan)), min_size=n, max_size=n)))
    yk, sk, _, _ = _by_hand(y, s)
    yy, ss = (y, s) if container == "numpy" else (y.tolist(), s.tolist())
    if len(np.unique(yk)) < 2:
        with pytest.raises(ValueError,
                           match=r"nothing to optimise|no class left|no rows? (is )?left"):
            fk.optimize_thresholds(yy, ss, ignore_index=-1, nan_policy="omit")
        return
    got = fk.optimize_thresholds(yy, ss, ignore_index=-1, nan_policy="omit")
    np.testing.assert_array_equal(got, fk.optimize_thresholds(yk, sk))
    np.testing.assert_array_equal(got.labels, np.unique(yk))
    opt = fk.ThresholdOptimizer(ignore_index=-1, nan_policy="omit").fit(yy, ss)
    assert opt.n_dropped_ == n - len(yk)
    assert opt.n_rows_ == len(yk)
    np.testing.assert_array_equal(opt.thresholds_, got)


# --------------------------------------------------------------------------- continuous_qwk


@pytest.mark.parametrize("weighted", [False, True])
def test_continuous_qwk_omit_and_ignore_equal_filtering_first(rng, weighted):
    y, s = _dirty(rng)
    sw = rng.random(len(y)) if weighted else None
    yk, sk, swk, _ = _by_hand(y, s, sw=sw)
    got = fk.continuous_qwk(y, s, sample_weight=sw, ignore_index=-1, nan_policy="omit")
    assert got == pytest.approx(fk.continuous_qwk(yk, sk, sample_weight=swk), abs=1e-15)
    # and the closed form on the kept rows (Lin's coefficient, population moments)
    w = np.ones(len(yk)) if swk is None else swk
    mt, ms = np.average(yk, weights=w), np.average(sk, weights=w)
    cov = np.average((yk - mt) * (sk - ms), weights=w)
    den = (np.average((yk - mt) ** 2, weights=w) + np.average((sk - ms) ** 2, weights=w)
           + (mt - ms) ** 2)
    assert got == pytest.approx(2 * cov / den, rel=1e-12)


def test_continuous_qwk_row_errors():
    with pytest.raises(ValueError, match=r"^`y_true` holds missing values \(NaN/None\) in 1 row; "
                                         "pass nan_policy='omit'"):
        fk.continuous_qwk([1.0, np.nan, 3.0], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="every row holds a missing value"):
        fk.continuous_qwk([1.0, np.nan], [np.nan, 0.2], nan_policy="omit")
    with pytest.raises(ValueError, match="no rows left to score: every row is missing or "
                                         "equals `ignore_index`"):
        fk.continuous_qwk([-1, -1], [0.1, 0.2], ignore_index=-1)
    with pytest.raises(ValueError, match="`nan_policy` must be 'raise' or 'omit'"):
        fk.continuous_qwk([1, 2], [0.1, 0.2], nan_policy="propagate")


# --------------------------------------------------------------------------- errors


def test_nan_policy_raise_counts_the_missing_rows():
    y = np.array([0.0, 1.0, np.nan, 1.0, 2.0])
    s = np.array([0.1, np.nan, 0.4, np.nan, 0.9])
    with pytest.raises(ValueError, match=r"^`y_true` holds missing values \(NaN/None\) in 1 row "
                                         r"and `scores` holds missing values \(NaN/None\)"
                                         r" in 2 rows; pass nan_policy='omit' to drop"):
        fk.optimize_thresholds(y, s)
    with pytest.raises(ValueError, match=r"^`scores` holds missing values \(NaN/None\) in 2 "
                                         "rows; pass nan_policy='omit'"):
        fk.ThresholdOptimizer().fit([0, 1, 2, 1, 2], s)
    with pytest.raises(ValueError, match="`scores` holds inf in 1 row;"):
        fk.optimize_thresholds([0, 1, 2], [0.1, np.inf, np.nan], nan_policy="omit")


def test_input_keyword_errors():
    y, s = [0, 1, 2, 1], [0.1, 0.5, 0.9, 0.4]
    with pytest.raises(ValueError, match="`nan_policy` must be 'raise' or 'omit'; got "
                                         "'propagate'"):
        fk.optimize_thresholds(y, s, nan_policy="propagate")
    with pytest.raises(ValueError, match="`nan_policy` must be 'raise' or 'omit'"):
        fk.ThresholdOptimizer(nan_policy="drop").fit(y, s)
    with pytest.raises(ValueError, match="`ignore_index` is NaN, which equals no label; to "
                                         "drop rows holding missing values pass "
                                         "nan_policy='omit'"):
        fk.optimize_thresholds(y, s, ignore_index=np.nan)
    with pytest.raises(ValueError, match="`ignore_index` must be a single label value"):
        fk.optimize_thresholds(y, s, ignore_index=[1, 2])
    with pytest.raises(ValueError, match=r"every row holds a missing value .* no row is left"):
        fk.optimize_thresholds([np.nan, 1.0], [0.1, np.nan], nan_policy="omit")
    with pytest.raises(ValueError, match="no rows left to score after dropping ignored"):
        fk.optimize_thresholds([5, 5], [0.1, 0.2], ignore_index=5)
    with pytest.raises(ValueError, match="no rows left to score after dropping ignored"):
        fk.optimize_thresholds([5, 5], [0.1, 0.2], ignore_index=5, n_classes=3)
    with pytest.raises(ValueError, match=r"holds a single class with positive weight \(1\)"):
        fk.optimize_thresholds([0, 1, 1], [0.1, 0.2, 0.3], ignore_index=0)
    with pytest.raises(ValueError, match=r"outside the declared classes: 7 .*mark rows to drop "
                                         "with `ignore_index=`"):
        fk.optimize_thresholds([0, 1, 7], [0.1, 0.2, 0.3], n_classes=2)
    with pytest.raises(ValueError, match=r"`groups` holds 1 row with a missing id "
                                         r"\(NaN/None/null\); give every row an id, or pass "
                                         "nan_policy='omit'"):
        fk.ThresholdOptimizer(cv=2).fit([0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8],
                                        groups=[1.0, np.nan, 2.0, 3.0])


# --------------------------------------------------------------------------- ThresholdOptimizer


@pytest.mark.parametrize("cv", [None, 4])
def test_optimizer_fit_equals_the_fit_on_rows_filtered_by_hand(rng, cv):
    y, s = _dirty(rng, n=600)
    groups = rng.integers(0, 60, len(y)).astype(np.float64)
    if cv:
        groups[rng.choice(len(y), 15, replace=False)] = np.nan  # rows without a group
    yk, sk, _, keep = _by_hand(y, s)
    keep &= ~np.isnan(groups)
    yk, sk = y[keep].astype(np.int64), s[keep]
    kw = {"groups": groups} if cv else {}
    got = fk.ThresholdOptimizer(cv=cv, seed=3, ignore_index=-1, nan_policy="omit").fit(
        y, s, **kw)
    want = fk.ThresholdOptimizer(cv=cv, seed=3).fit(
        yk, sk, **({"groups": groups[keep]} if cv else {}))
    np.testing.assert_array_equal(got.thresholds_, want.thresholds_)
    assert got.qwk_ == want.qwk_
    assert got.n_rows_ == keep.sum() and got.n_dropped_ == len(y) - keep.sum()
    assert want.n_dropped_ == 0
    if cv:
        assert got.cv_qwk_ == want.cv_qwk_
        np.testing.assert_array_equal(got.cv_folds_, want.cv_folds_)
        np.testing.assert_array_equal(got.oof_predictions_, want.oof_predictions_)
        # groups of the kept rows stay whole
        for g in np.unique(groups[keep]):
            assert len(np.unique(got.cv_folds_[groups[keep] == g])) == 1


def test_optimizer_score_applies_the_row_options(rng):
    y, s = _dirty(rng, n=500)
    opt = fk.ThresholdOptimizer(ignore_index=-1, nan_policy="omit").fit(y, s)
    y2, s2 = _dirty(rng, n=300)
    sw = rng.random(len(y2))
    yk, sk, swk, _ = _by_hand(y2, s2, sw=sw)
    pred = np.searchsorted(opt.thresholds_, sk, side="right")
    want = cohen_kappa_score(yk, pred, weights="quadratic", sample_weight=swk,
                             labels=[0, 1, 2, 3])
    assert opt.score(s2, y2, sample_weight=sw) == pytest.approx(want, abs=1e-12)
    assert opt.score(s2.reshape(-1, 1), y2, sample_weight=sw) == pytest.approx(want,
                                                                                abs=1e-12)
    strict = fk.ThresholdOptimizer().fit(yk, sk)
    with pytest.raises(ValueError, match=r"in `X`; use ThresholdOptimizer\(nan_policy='omit'\)"):
        strict.score([0.1, np.nan, 2.0], [0, 1, 2])
    with pytest.raises(ValueError, match=r"`y` holds classes this optimizer was not fitted on"):
        strict.score([0.1, 0.5, 2.0], [0, 1, -1])
    # transform gives one label per score: a missing one stays an error
    with pytest.raises(ValueError, match="`scores` holds NaN/None in 1 row;"):
        opt.transform([0.1, np.nan])


def test_optimizer_score_replace_undefined_by(rng):
    opt = fk.ThresholdOptimizer(replace_undefined_by=0.0).fit([0, 0, 1, 1], [0.1, 0.2, 0.8,
                                                                              0.9])
    with pytest.warns(fk.UndefinedKappaWarning):
        assert opt.score([0.1, 0.2], [0, 0]) == 0.0
    with pytest.warns(fk.UndefinedKappaWarning):
        assert np.isnan(fk.ThresholdOptimizer().fit([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9])
                        .score([0.1, 0.2], [0, 0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert opt.score([0.1, 0.9], [0, 1]) == 1.0


def test_optimizer_clone_keeps_the_row_options():
    from sklearn.base import clone

    opt = fk.ThresholdOptimizer(ignore_index=-1, nan_policy="omit", replace_undefined_by=0.0)
    twin = clone(opt)
    assert twin.get_params() == opt.get_params()
    assert repr(twin) == ("ThresholdOptimizer(ignore_index=-1, nan_policy='omit', "
                          "replace_undefined_by=0.0)")
    twin.fit([0, -1, 1, 2, 1], [0.2, 0.5, np.nan, 1.4, 0.7])
    assert twin.n_dropped_ == 2


def test_rows_without_a_group_are_omitted_with_their_weights(rng):
    pd = pytest.importorskip("pandas")
    y = rng.integers(0, 3, 200)
    s = y + rng.normal(0, 0.7, 200)
    g = rng.integers(0, 20, 200).astype(np.float64)
    g[:10] = np.nan
    sw = rng.random(200)
    want = fk.ThresholdOptimizer(cv=3).fit(y[10:], s[10:], groups=g[10:],
                                           sample_weight=sw[10:])
    for wrap in (np.asarray, pd.Series):
        got = fk.ThresholdOptimizer(cv=3, nan_policy="omit").fit(
            wrap(y), wrap(s), groups=wrap(g), sample_weight=wrap(sw))
        np.testing.assert_array_equal(got.thresholds_, want.thresholds_)
        assert got.cv_qwk_ == want.cv_qwk_
        assert got.n_dropped_ == 10


# --------------------------------------------------------------------------- command line


def test_command_line_ignore_index_and_nan_policy(rng, tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    import json

    from fastkappa.cli import main

    y, s = _dirty(rng, n=300)
    path = tmp_path / "dirty.csv"
    pd.DataFrame({"grade": y, "score": s}).to_csv(path, index=False, float_format="%.17g")
    argv = ["thresholds", str(path), "--true", "grade", "--score", "score", "--format",
            "json"]
    assert main([*argv, "--ignore-index", "-1"]) == 1
    assert "--nan-policy omit" in capsys.readouterr().err
    assert main([*argv, "--ignore-index", "-1", "--nan-policy", "omit", "--n-classes",
                 "4"]) == 0
    out = json.loads(capsys.readouterr().out)
    yk, sk, _, keep = _by_hand(y, s)
    want = fk.ThresholdOptimizer(n_classes=4).fit(yk, sk)
    np.testing.assert_allclose(out["thresholds"], want.thresholds_, rtol=0, atol=0)
    assert out["kappa"] == want.qwk_
    assert out["n_rows"] == keep.sum()
    assert out["n_ignored"] == int(np.sum(y[~np.isnan(y) & ~np.isnan(s)] == -1))
    assert main([*argv[:-2], "--ignore-index", "-1", "--nan-policy", "omit"]) == 0
    n_missing = int(np.sum(np.isnan(y) | np.isnan(s)))
    assert (f"{out['n_rows']} rows of {len(y)} read ({n_missing} with a missing value and "
            f"{out['n_ignored']} labelled -1 dropped)") in capsys.readouterr().out
    assert out["n_missing"] == n_missing and out["n_read"] == len(y)
    assert main(["thresholds", str(path), "--score", "score", "--apply", "0.5,1.5",
                 "--ignore-index", "-1"]) == 2
    assert "--ignore-index does not go with --apply" in capsys.readouterr().err


def test_scores_passed_first_get_an_error_that_says_so():
    """scikit-learn's fit(X, y) puts the scores first; here the labels come first."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, 200)
    s = y + rng.normal(0, 0.5, 200)
    for call in (lambda: fk.ThresholdOptimizer().fit(s, y),
                 lambda: fk.optimize_thresholds(s, y)):
        with pytest.raises(ValueError, match="passed the other way round"):
            call()
    with pytest.raises(ValueError, match="non-integral") as err:  # both continuous
        fk.optimize_thresholds(s, s)
    assert "other way round" not in str(err.value)
    assert len(fk.optimize_thresholds(y.astype(float), s)) == 4  # whole floats are labels


def test_scores_at_the_largest_float_say_why_no_cut_point_fits():
    """An empty class beyond the largest finite score needs an infinite cut point:
    the error says so (it used to blame `thresholds`, which the user never passed);
    an empty class below the lowest one fits at -1.8e308 itself."""
    big = np.finfo(np.float64).max
    with pytest.raises(ValueError, match="reach the largest float"):
        fk.optimize_thresholds([0, 1], [1.0, big], n_classes=3)
    cuts = fk.optimize_thresholds([1, 2], [-big, 1.0], n_classes=3)
    assert np.all(np.isfinite(cuts)) and np.all(np.diff(cuts) > 0)
    np.testing.assert_array_equal(fk.apply_thresholds(np.array([-big, 1.0]),
                                                      np.asarray(cuts)), [1, 2])
