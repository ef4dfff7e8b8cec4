"""The Kaggle competitor's journey: grouped CV, a readable fitted optimizer, score().

Oracles: cut points re-tuned by hand on each fold's training rows with
``optimize_thresholds`` and pooled kappa from scikit-learn; scikit-learn's
``GroupKFold`` / ``KFold`` for the splitter protocol.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

import fastkappa as fk


def _patients(rng, n_patients=400, k=5):
    """1-4 rows per patient (eyes, visits), the same grade within a patient."""
    sizes = rng.integers(1, 5, n_patients)
    patient = np.repeat(np.arange(n_patients), sizes)
    y = np.repeat(rng.integers(0, k, n_patients), sizes)
    s = y + rng.normal(0, 0.9, len(y)) + np.repeat(rng.normal(0, 0.5, n_patients), sizes)
    return y, s, patient


@pytest.mark.parametrize("seed", [None, 0, 7])
def test_grouped_cv_never_splits_a_group_and_is_honest(rng, seed):
    y, s, patient = _patients(rng)
    opt = fk.ThresholdOptimizer(cv=5, seed=seed).fit(y, s, groups=patient)
    folds = opt.cv_folds_
    for p in np.unique(patient):
        assert len(np.unique(folds[patient == p])) == 1
    assert set(np.unique(folds)) == set(range(5))
    sizes = np.bincount(folds)
    assert sizes.max() - sizes.min() <= 4  # whole groups of at most 4 rows, balanced
    # oracle: tune on the other folds by hand, pool the out-of-fold predictions
    oof = np.empty(len(y), dtype=np.int64)
    for f in range(5):
        train = folds != f
        cuts = fk.optimize_thresholds(y[train], s[train], labels=opt.classes_)
        np.testing.assert_array_equal(opt.cv_thresholds_[f], np.asarray(cuts))
        oof[~train] = fk.apply_thresholds(s[~train], cuts)
    np.testing.assert_array_equal(opt.oof_predictions_, oof)
    assert opt.cv_qwk_ == pytest.approx(cohen_kappa_score(y, oof, weights="quadratic"),
                                        abs=1e-12)
    assert opt.cv_groups_ is True


def test_grouped_cv_keeps_classes_balanced(rng):
    y, s, patient = _patients(rng, n_patients=1000)
    opt = fk.ThresholdOptimizer(cv=4).fit(y, s, groups=patient)
    shares = np.array([np.bincount(y[opt.cv_folds_ == f], minlength=5) / np.bincount(y)
                       for f in range(4)])
    assert np.all(np.abs(shares - 0.25) < 0.03)


def test_grouped_cv_is_deterministic_and_the_seed_reshuffles(rng):
    y, s, patient = _patients(rng)
    a = fk.ThresholdOptimizer(cv=5).fit(y, s, groups=patient).cv_folds_
    b = fk.ThresholdOptimizer(cv=5).fit(y, s, groups=patient).cv_folds_
    c = fk.ThresholdOptimizer(cv=5, seed=3).fit(y, s, groups=patient).cv_folds_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    # string group keys give the same folds as their integer codes
    names = np.array([f"patient-{p:04d}" for p in patient])
    np.testing.assert_array_equal(
        fk.ThresholdOptimizer(cv=5).fit(y, s, groups=names).cv_folds_, a)


def test_ungrouped_cv_does_split_patients(rng):
    # the leak grouped CV prevents is real on this data: row-wise folds split patients
    y, s, patient = _patients(rng)
    folds = fk.ThresholdOptimizer(cv=5, seed=0).fit(y, s).cv_folds_
    split = sum(len(np.unique(folds[patient == p])) > 1 for p in np.unique(patient))
    assert split > 50


def test_grouped_cv_with_sklearn_splitters(rng):
    from sklearn.model_selection import GroupKFold, KFold

    y, s, patient = _patients(rng)
    opt = fk.ThresholdOptimizer(cv=GroupKFold(n_splits=3)).fit(y, s, groups=patient)
    for p in np.unique(patient):
        assert len(np.unique(opt.cv_folds_[patient == p])) == 1
    # scikit-learn warns that KFold ignores groups; fastkappa then refuses the split
    with pytest.warns(UserWarning, match="ignored by KFold"), \
            pytest.raises(ValueError, match=r"group-aware splitter such as .*GroupKFold"):
        fk.ThresholdOptimizer(cv=KFold(3, shuffle=True, random_state=0)).fit(
            y, s, groups=patient)


def test_groups_errors(rng):
    y, s, patient = _patients(rng, n_patients=20)
    with pytest.raises(ValueError, match=r"needs `cv`: use ThresholdOptimizer\(cv=5\)"):
        fk.ThresholdOptimizer().fit(y, s, groups=patient)
    with pytest.raises(ValueError, match="`cv`=30 folds need at least 30 groups; `groups` "
                                         "holds 20"):
        fk.ThresholdOptimizer(cv=30).fit(y, s, groups=patient)
    with pytest.raises(ValueError, match="`groups` must have one id per row: got 47 ids for "
                                         "48 rows"):
        fk.ThresholdOptimizer(cv=3).fit(y, s, groups=patient[:-1])
    bad = patient.astype(float)
    bad[3] = np.nan
    with pytest.raises(ValueError, match="`groups` holds 1 row with a missing id"):
        fk.ThresholdOptimizer(cv=3).fit(y, s, groups=bad)
    with pytest.raises(ValueError, match="`groups` holds 1 row with a missing id"):
        fk.ThresholdOptimizer(cv=3).fit(y, s, groups=[None] + ["a"] * (len(y) - 1))
    with pytest.raises(ValueError, match="`groups` must be a 1-D array of ids, one per row"):
        fk.ThresholdOptimizer(cv=3).fit(y, s, groups=np.ones((len(y), 2)))


def test_fitted_repr_shows_cut_points_and_scores(rng):
    y, s, patient = _patients(rng)
    opt = fk.ThresholdOptimizer(cv=5, seed=0)
    assert repr(opt) == "ThresholdOptimizer(cv=5, seed=0)"
    opt.fit(y, s, groups=patient)
    lines = repr(opt).splitlines()
    assert lines[0] == "ThresholdOptimizer(cv=5, seed=0)"
    cuts = ", ".join(f"{v:.4g}" for v in np.asarray(opt.thresholds_))
    assert lines[1] == f"  thresholds_ = [{cuts}] between classes [0, 1, 2, 3, 4]"
    assert lines[2] == f"  qwk_ = {opt.qwk_:.4f} (in-sample QWK)"
    assert lines[3] == (f"  cv_qwk_ = {opt.cv_qwk_:.4f} (out-of-fold QWK, 5 folds, "
                        "groups kept whole)")
    linear = fk.ThresholdOptimizer(weights="linear").fit(y, s)
    assert repr(linear).splitlines()[2].endswith("(in-sample kappa)")
    assert len(repr(linear).splitlines()) == 3


@pytest.mark.parametrize("weights", ["quadratic", "linear", None])
def test_score_is_kappa_of_predict_as_sklearn_expects(rng, weights):
    y, s, _ = _patients(rng)
    y = y + 1  # grades 1-5
    opt = fk.ThresholdOptimizer(weights=weights).fit(y[:800], s[:800])
    x_test, y_test = s[800:], y[800:]
    expected = cohen_kappa_score(y_test, opt.predict(x_test), weights=weights,
                                 labels=opt.classes_)
    assert opt.score(x_test, y_test) == pytest.approx(expected, abs=1e-12)
    assert opt.score(x_test.reshape(-1, 1), y_test) == pytest.approx(expected, abs=1e-12)
    w = rng.uniform(0, 2, len(y_test))
    assert opt.score(x_test, y_test, sample_weight=w) == pytest.approx(
        cohen_kappa_score(y_test, opt.predict(x_test), weights=weights,
                          labels=opt.classes_, sample_weight=w), abs=1e-12)
    # in-sample, score equals qwk_
    assert opt.score(s[:800], y[:800]) == pytest.approx(opt.qwk_, abs=1e-12)


def test_score_errors(rng):
    with pytest.raises(ValueError, match="not fitted yet"):
        fk.ThresholdOptimizer().score([0.1], [1])
    opt = fk.ThresholdOptimizer().fit([1, 2, 3, 1, 2, 3], [0.0, 1.0, 2.0, 0.1, 1.1, 2.1])
    with pytest.raises(ValueError, match=r"not fitted on .*7 \(1 row\).*"
                                         r"ThresholdOptimizer\(labels=\[\.\.\.\]\)"):
        opt.score([0.5, 1.5], [1, 7])
    # declared up front, an unseen grade is scored on the full scale
    opt = fk.ThresholdOptimizer(labels=[1, 2, 3, 7]).fit([1, 2, 3, 1, 2, 3],
                                                          [0.0, 1.0, 2.0, 0.1, 1.1, 2.1])
    assert opt.score([0.5, 1.5], [1, 7]) == pytest.approx(
        cohen_kappa_score([1, 7], opt.predict([0.5, 1.5]), weights="quadratic",
                          labels=[1, 2, 3, 7]))
