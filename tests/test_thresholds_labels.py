"""Cut points remember their classes (``fk.Thresholds``).

The README recipe ``fk.cohen_kappa(y, fk.apply_thresholds(s, cuts),
weights="quadratic")`` used to score 0-based indices against grades 1-5
(a silently wrong QWK).  Oracles: the exhaustive search over every monotone
assignment (tests/naive.py), the exact row-by-row kappa (tests/naive.py)
and scikit-learn.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from naive import brute_force, reference_kappa

import fastkappa as fk


def _graded(rng, scale, n):
    idx = rng.integers(0, len(scale), n)
    return np.asarray(scale)[idx], idx + rng.normal(0, 0.9, n)


@pytest.mark.parametrize("seed", range(4))
def test_recipe_on_grades_1_to_5_reaches_the_exhaustive_optimum(seed):
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(seed)
    y, s = _graded(rng, [1, 2, 3, 4, 5], 14)
    s = np.round(s, 1)  # ties too
    cuts = fk.optimize_thresholds(y, s)
    pred = fk.apply_thresholds(s, cuts)
    assert set(np.unique(pred)) <= {1, 2, 3, 4, 5}
    classes = np.unique(y)
    best, _ = brute_force(np.searchsorted(classes, y), s, len(classes), "quadratic")
    recipe = fk.cohen_kappa(y, pred, weights="quadratic")
    assert recipe == pytest.approx(best, abs=1e-12)
    assert recipe == pytest.approx(
        cohen_kappa_score(y, pred, weights="quadratic", labels=classes), abs=1e-12)
    assert recipe == pytest.approx(float(reference_kappa(y, pred, weights="quadratic",
                                                         labels=list(classes))), abs=1e-12)
    # the other two spellings in the README agree
    assert fk.cohen_kappa(y, s, thresholds=cuts, weights="quadratic") == pytest.approx(recipe)
    opt = fk.ThresholdOptimizer().fit(y, s)
    np.testing.assert_array_equal(opt.predict(s), pred)
    np.testing.assert_array_equal(opt.transform(s), pred)
    np.testing.assert_array_equal(fk.apply_thresholds(s, opt.thresholds_), pred)


def test_recipe_on_grades_1_to_5_differs_from_the_index_mistake(rng):
    # the bug this guards against: indices 0..4 scored against grades 1..5
    y, s = _graded(rng, [1, 2, 3, 4, 5], 2000)
    cuts = fk.optimize_thresholds(y, s)
    right = fk.cohen_kappa(y, fk.apply_thresholds(s, cuts), weights="quadratic")
    wrong = fk.cohen_kappa(y, fk.apply_thresholds(s, np.asarray(cuts)), weights="quadratic")
    assert right == pytest.approx(
        fk.cohen_kappa(y, s, thresholds=cuts, weights="quadratic"), abs=1e-12)
    assert right - wrong > 0.1


def test_recipe_on_string_grades_reaches_the_exhaustive_optimum(rng):
    scale = ["none", "mild", "moderate", "severe"]
    y, s = _graded(rng, scale, 12)
    cuts = fk.optimize_thresholds(y, s, labels=scale)
    assert cuts.labels.tolist() == scale
    pred = fk.apply_thresholds(s, cuts)
    assert set(pred) <= set(scale)
    best, _ = brute_force(np.array([scale.index(v) for v in y]), s, 4, "quadratic")
    recipe = fk.cohen_kappa(y, pred, weights="quadratic", labels=scale)
    assert recipe == pytest.approx(best, abs=1e-12)
    opt = fk.ThresholdOptimizer(labels=scale).fit(y, s)
    assert list(opt.transform(s)) == list(pred)


def test_n_classes_labels_are_the_indices(rng):
    y, s = _graded(rng, [0, 1, 2, 3], 300)
    cuts = fk.optimize_thresholds(y, s, n_classes=6)
    assert cuts.labels.tolist() == [0, 1, 2, 3, 4, 5]
    np.testing.assert_array_equal(fk.apply_thresholds(s, cuts),
                                  np.searchsorted(np.asarray(cuts), s, side="right"))


def test_explicit_labels_win_and_plain_arrays_give_indices():
    cuts = fk.Thresholds([1.5, 2.5], labels=[1, 2, 3])
    s = [0.0, 2.0, 3.0]
    assert fk.apply_thresholds(s, cuts).tolist() == [1, 2, 3]
    assert fk.apply_thresholds(s, cuts, labels=["a", "b", "c"]).tolist() == ["a", "b", "c"]
    assert fk.apply_thresholds(s, [1.5, 2.5]).tolist() == [0, 1, 2]
    assert fk.apply_thresholds(s, np.asarray(cuts)).tolist() == [0, 1, 2]
    assert fk.apply_thresholds(s, list(cuts)).tolist() == [0, 1, 2]


def test_thresholds_behave_as_the_float_array(rng):
    y, s = _graded(rng, [1, 2, 3, 4, 5], 500)
    cuts = fk.optimize_thresholds(y, s)
    plain = np.asarray(cuts)
    assert type(plain) is np.ndarray and plain.dtype == np.float64 and plain.shape == (4,)
    assert isinstance(cuts, np.ndarray) and cuts.shape == (4,) and cuts.dtype == np.float64
    np.testing.assert_array_equal(cuts, plain)
    assert np.array_equal(np.searchsorted(cuts, s, side="right"),
                          np.searchsorted(plain, s, side="right"))
    # arithmetic, comparisons, reductions and slices are plain (labels would be wrong)
    for derived in (cuts + 1, cuts * 2, cuts > 2, cuts[:2], np.diff(cuts)):
        assert type(derived) is np.ndarray
    assert type(cuts[0]) is np.float64
    assert float(cuts.sum()) == pytest.approx(float(plain.sum()))
    assert cuts.tolist() == plain.tolist()
    # copies and pickles keep the labels
    for same in (cuts.copy(), copy.copy(cuts), copy.deepcopy(cuts),
                 pickle.loads(pickle.dumps(cuts))):
        assert isinstance(same, fk.Thresholds)
        assert same.labels.tolist() == [1, 2, 3, 4, 5]
        np.testing.assert_array_equal(same, plain)
    opt = pickle.loads(pickle.dumps(fk.ThresholdOptimizer().fit(y, s)))
    assert opt.thresholds_.labels.tolist() == [1, 2, 3, 4, 5]


def test_thresholds_repr():
    assert repr(fk.Thresholds([0.5, 1.25], labels=["a", "b", "c"])) == (
        "Thresholds([0.5 , 1.25], labels=['a', 'b', 'c'])")
    assert str(fk.Thresholds([0.5, 1.5], labels=[1, 2, 3])) == "[0.5 1.5]"


def test_thresholds_errors():
    with pytest.raises(ValueError, match="one class per interval: 3 labels for 2 cut"):
        fk.Thresholds([0.5, 1.5], labels=[1, 2])
    with pytest.raises(ValueError, match="strictly increasing"):
        fk.Thresholds([1.5, 0.5], labels=[1, 2, 3])
    with pytest.raises(ValueError, match="`labels` must be a 1-D"):
        fk.Thresholds([0.5], labels=[[1, 2]])


def test_optimizer_repr_shows_only_changed_parameters_after_pickling():
    # replace_undefined_by=nan is the default, although a pickled NaN is a new object
    assert repr(pickle.loads(pickle.dumps(fk.ThresholdOptimizer()))) == "ThresholdOptimizer()"
    opt = pickle.loads(pickle.dumps(fk.ThresholdOptimizer(cv=3, replace_undefined_by=0.0)))
    assert repr(opt) == "ThresholdOptimizer(cv=3, replace_undefined_by=0.0)"


def test_fitted_cuts_declare_their_classes_where_thresholds_are_taken():
    # a subset missing a grade: the cuts name the classes, as labels= would
    rng = np.random.default_rng(0)
    y = rng.integers(1, 4, 300)
    s = y + rng.normal(0, 0.5, 300)
    cuts = fk.optimize_thresholds(y, s)
    sub = y < 3
    want = fk.cohen_kappa(y[sub], s[sub], thresholds=cuts, labels=cuts.labels)
    pred = np.asarray(cuts.labels)[np.searchsorted(np.asarray(cuts), s[sub], side="right")]
    from sklearn.metrics import cohen_kappa_score

    assert want == pytest.approx(cohen_kappa_score(y[sub], pred, labels=[1, 2, 3]), abs=1e-12)
    assert fk.cohen_kappa(y[sub], s[sub], thresholds=cuts) == want
    assert fk.kappa_ci(y[sub], s[sub], thresholds=cuts, method="asymptotic").estimate == want
    assert fk.CohenKappa().update(y[sub], s[sub], thresholds=cuts).compute() == want
    # the boosting eval metrics too (their factories turned the cuts into a plain array)
    from fastkappa.integrations import (
        lightgbm_sklearn_eval_metric,
        qwk_score,
        xgboost_sklearn_eval_metric,
    )

    assert qwk_score(y[sub], s[sub], thresholds=cuts, weights=None) == want
    assert lightgbm_sklearn_eval_metric(thresholds=cuts, weights=None)(
        y[sub], s[sub], None)[1] == want
    assert xgboost_sklearn_eval_metric(thresholds=cuts, weights=None)(y[sub], s[sub]) == want
    # plain cut points still number the classes from y_true, and say so when they cannot
    with pytest.raises(ValueError, match="declare the classes"):
        fk.cohen_kappa(y[sub], s[sub], thresholds=np.asarray(cuts))
    # a label the cuts do not name is outside the declared classes
    with pytest.raises(ValueError, match="outside the declared classes"):
        fk.cohen_kappa(np.append(y, 7), np.append(s, 2.0), thresholds=cuts)
