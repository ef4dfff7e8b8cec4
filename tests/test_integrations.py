"""scikit-learn scorer and LightGBM / XGBoost eval metrics.

Oracles: scikit-learn's ``cohen_kappa_score`` on classes derived by hand
(floor(x + 1/2) clipped, ``np.searchsorted``, ``argmax``), and manual
cross-validation loops.  LightGBM and XGBoost are optional: their call
conventions are reproduced with stand-in objects offering the documented
methods (``get_label``, ``get_weight``) and argument shapes; real training
runs are tested when the libraries are installed.
"""

from __future__ import annotations

import inspect
import subprocess
import sys

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

import fastkappa as fk
from fastkappa.integrations import (
    lightgbm_eval_metric,
    lightgbm_sklearn_eval_metric,
    make_qwk_scorer,
    qwk_score,
    xgboost_eval_metric,
    xgboost_sklearn_eval_metric,
)


def _rounded(x, lo, hi):
    """Nearest integer class, halves up, clipped: the documented rounding."""
    return np.clip(np.floor(np.asarray(x, float) + 0.5), lo, hi).astype(int)


@pytest.fixture
def graded(rng):
    y = rng.integers(0, 5, 400)
    pred = y + rng.normal(0, 0.9, 400)
    return y, pred


# --------------------------------------------------------------------------- qwk_score


def test_qwk_score_rounds_to_nearest_class(graded):
    y, pred = graded
    expected = cohen_kappa_score(y, _rounded(pred, 0, 4), weights="quadratic")
    assert qwk_score(y, pred) == pytest.approx(expected, abs=1e-12)
    assert qwk_score(y, pred, n_classes=5) == pytest.approx(expected, abs=1e-12)
    # halves go up, like side="right" cut points
    assert qwk_score([0, 1, 2], [0.5, 1.5, 2.0]) == pytest.approx(
        cohen_kappa_score([0, 1, 2], [1, 2, 2], weights="quadratic"), abs=1e-12)


def test_qwk_score_with_thresholds_and_weights(graded, rng):
    y, pred = graded
    cuts = [0.3, 1.6, 2.4, 3.7]
    sw = rng.uniform(0, 2, len(y))
    p = np.searchsorted(cuts, pred, side="right")
    for weights in (None, "linear", "quadratic"):
        expected = cohen_kappa_score(y, p, weights=weights, sample_weight=sw, labels=range(5))
        assert qwk_score(y, pred, thresholds=cuts, weights=weights, sample_weight=sw,
                         n_classes=5) == pytest.approx(expected, abs=1e-12)


def test_qwk_score_non_consecutive_classes():
    y = np.array([1, 2, 4, 4, 2, 1])
    pred = np.array([1.2, 2.9, 3.0, 5.5, 1.6, 0.0])
    # classes 1, 2, 4: cut points 1.5 and 3.0
    p = np.array([1, 2, 4, 4, 2, 1])
    assert qwk_score(y, pred) == pytest.approx(
        cohen_kappa_score(y, p, weights="quadratic"), abs=1e-12)


def test_qwk_score_class_scores_by_argmax(rng):
    y = rng.integers(0, 4, 300)
    probs = rng.dirichlet(np.ones(4), 300)
    probs[np.arange(300), y] += 0.3 * rng.random(300)
    expected = cohen_kappa_score(y, probs.argmax(1), weights="quadratic", labels=range(4))
    assert qwk_score(y, probs) == pytest.approx(expected, abs=1e-12)
    # LightGBM < 4 passes multiclass scores flat, class-major
    assert qwk_score(y, probs.T.ravel()) == pytest.approx(expected, abs=1e-12)
    names = np.array(["a", "b", "c", "d"])
    assert qwk_score(names[y], probs, labels=names) == pytest.approx(expected, abs=1e-12)


def test_qwk_score_label_predictions(rng):
    names = np.array(["none", "mild", "moderate", "severe"], dtype=object)
    y = rng.integers(0, 4, 200)
    p = np.clip(y + rng.integers(-1, 2, 200), 0, 3)
    expected = cohen_kappa_score(y, p, weights="quadratic", labels=range(4))
    assert qwk_score(names[y], names[p], labels=list(names)) == pytest.approx(expected,
                                                                             abs=1e-12)
    assert qwk_score(y, p) == pytest.approx(expected, abs=1e-12)


def test_qwk_score_errors(graded):
    y, pred = graded
    with pytest.raises(ValueError, match="`thresholds` cut 1-D scores"):
        qwk_score(y, np.ones((len(y), 5)), thresholds=[0.5])
    with pytest.raises(ValueError, match="numeric predictions need `thresholds=`"):
        qwk_score(["a", "b"], [0.1, 0.9], labels=["a", "b"])
    with pytest.raises(ValueError, match="either `labels` or `n_classes`"):
        qwk_score(y, pred, labels=range(5), n_classes=5)
    with pytest.raises(ValueError, match="increasing numeric classes"):
        qwk_score([0, 1], [0.1, 0.9], labels=[1, 0])
    with pytest.raises(ValueError, match="`y_pred` holds NaN in 1 row;"):
        qwk_score([0, 1], [0.1, np.nan])


# --------------------------------------------------------------------------- scikit-learn


def _ordinal_regression_data(seed=0, n=600):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4))
    y = np.clip(np.round(x @ [1.0, 0.6, -0.4, 0.0] + 2 + rng.normal(0, 0.5, n)), 0, 4)
    return x, y.astype(int)


def test_make_qwk_scorer_cross_val_score_matches_manual_loop():
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import KFold, cross_val_score

    x, y = _ordinal_regression_data()
    cv = KFold(4, shuffle=True, random_state=0)
    got = cross_val_score(Ridge(alpha=1.0), x, y, cv=cv, scoring=make_qwk_scorer(n_classes=5))
    manual = []
    for train, test in cv.split(x):
        pred = Ridge(alpha=1.0).fit(x[train], y[train]).predict(x[test])
        manual.append(cohen_kappa_score(y[test], _rounded(pred, 0, 4), weights="quadratic",
                                        labels=range(5)))
    np.testing.assert_allclose(got, manual, rtol=0, atol=1e-12)


def test_make_qwk_scorer_grid_search_and_make_scorer():
    from sklearn.linear_model import Ridge
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

    x, y = _ordinal_regression_data(1)
    cv = KFold(3, shuffle=True, random_state=1)
    grid = GridSearchCV(Ridge(), {"alpha": [0.1, 10.0, 1000.0]}, cv=cv,
                        scoring=make_qwk_scorer(n_classes=5)).fit(x, y)
    best = cross_val_score(Ridge(alpha=grid.best_params_["alpha"]), x, y, cv=cv,
                           scoring=make_qwk_scorer(n_classes=5))
    assert grid.best_score_ == pytest.approx(best.mean(), abs=1e-12)
    assert grid.best_params_["alpha"] != 1000.0  # heavy shrinkage hurts QWK here
    plain = cross_val_score(Ridge(), x, y, cv=cv, scoring=make_scorer(qwk_score, n_classes=5))
    np.testing.assert_allclose(
        plain, cross_val_score(Ridge(), x, y, cv=cv, scoring=make_qwk_scorer(n_classes=5)))


def test_make_qwk_scorer_classifier_labels_and_probabilities():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    x, y = _ordinal_regression_data(2)
    cv = StratifiedKFold(3, shuffle=True, random_state=2)
    clf = LogisticRegression(max_iter=500)
    by_label = cross_val_score(clf, x, y, cv=cv, scoring=make_qwk_scorer(n_classes=5))
    by_proba = cross_val_score(clf, x, y, cv=cv, scoring=make_qwk_scorer(
        n_classes=5, response_method="predict_proba"))
    manual = []
    for train, test in cv.split(x, y):
        pred = clf.fit(x[train], y[train]).predict(x[test])
        manual.append(cohen_kappa_score(y[test], pred, weights="quadratic", labels=range(5)))
    np.testing.assert_allclose(by_label, manual, rtol=0, atol=1e-12)
    np.testing.assert_allclose(by_proba, manual, rtol=0, atol=1e-12)  # argmax = predict


def test_make_qwk_scorer_with_tuned_thresholds():
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import KFold, cross_val_score

    x, y = _ordinal_regression_data(3)
    pred = Ridge().fit(x, y).predict(x)
    cuts = fk.optimize_thresholds(y, pred, n_classes=5)
    cv = KFold(3)
    got = cross_val_score(Ridge(), x, y, cv=cv,
                          scoring=make_qwk_scorer(n_classes=5, thresholds=cuts))
    for g, (train, test) in zip(got, cv.split(x), strict=True):
        p = np.searchsorted(cuts, Ridge().fit(x[train], y[train]).predict(x[test]),
                            side="right")
        assert g == pytest.approx(cohen_kappa_score(y[test], p, weights="quadratic",
                                                    labels=range(5)), abs=1e-12)


# --------------------------------------------------------------------------- LightGBM


class FakeLgbDataset:
    """The two methods LightGBM's feval reads from ``lightgbm.Dataset``."""

    def __init__(self, label, weight=None):
        self._label = np.asarray(label, dtype=np.float32)  # LightGBM stores float32
        self._weight = None if weight is None else np.asarray(weight, dtype=np.float32)

    def get_label(self):
        return self._label

    def get_weight(self):
        return self._weight


def test_lightgbm_eval_metric_regression_and_weights(graded, rng):
    y, pred = graded
    feval = lightgbm_eval_metric(n_classes=5)
    name, value, higher = feval(pred, FakeLgbDataset(y))
    assert (name, higher) == ("qwk", True)
    assert value == pytest.approx(
        cohen_kappa_score(y, _rounded(pred, 0, 4), weights="quadratic", labels=range(5)),
        abs=1e-12)
    sw = rng.uniform(0.5, 2, len(y)).astype(np.float32)
    _, value, _ = feval(pred, FakeLgbDataset(y, sw))
    assert value == pytest.approx(cohen_kappa_score(
        y, _rounded(pred, 0, 4), weights="quadratic", labels=range(5), sample_weight=sw),
        abs=1e-9)
    cuts = [0.4, 1.5, 2.6, 3.5]
    _, value, _ = lightgbm_eval_metric(n_classes=5, thresholds=cuts, name="qwk_cut")(
        pred, FakeLgbDataset(y))
    assert value == pytest.approx(cohen_kappa_score(
        y, np.searchsorted(cuts, pred, side="right"), weights="quadratic", labels=range(5)),
        abs=1e-12)


def test_lightgbm_eval_metric_multiclass_shapes(rng):
    y = rng.integers(0, 3, 150)
    raw = rng.normal(size=(150, 3))
    raw[np.arange(150), y] += 1.0
    expected = cohen_kappa_score(y, raw.argmax(1), weights="quadratic", labels=range(3))
    feval = lightgbm_eval_metric()
    assert feval(raw, FakeLgbDataset(y))[1] == pytest.approx(expected, abs=1e-12)  # >= 4.0
    assert feval(raw.T.ravel(), FakeLgbDataset(y))[1] == pytest.approx(expected, abs=1e-12)


def test_lightgbm_sklearn_eval_metric_signature(graded, rng):
    y, pred = graded
    metric = lightgbm_sklearn_eval_metric(n_classes=5, name="kappa")
    # LightGBM's scikit-learn wrapper passes weights when the metric takes 3 arguments
    assert len(inspect.signature(metric).parameters) == 3
    expected = cohen_kappa_score(y, _rounded(pred, 0, 4), weights="quadratic", labels=range(5))
    assert metric(y.astype(np.float32), pred, None) == ("kappa", pytest.approx(expected), True)
    sw = rng.uniform(0.5, 2, len(y))
    _, value, _ = metric(y, pred, sw)
    assert value == pytest.approx(cohen_kappa_score(
        y, _rounded(pred, 0, 4), weights="quadratic", labels=range(5), sample_weight=sw),
        abs=1e-12)


# --------------------------------------------------------------------------- XGBoost


class FakeDMatrix:
    """The two methods XGBoost's custom metric reads from ``xgboost.DMatrix``."""

    def __init__(self, label, weight=None):
        self._label = np.asarray(label, dtype=np.float32)
        self._weight = np.empty(0, np.float32) if weight is None else np.asarray(
            weight, dtype=np.float32)

    def get_label(self):
        return self._label

    def get_weight(self):
        return self._weight  # empty when the DMatrix has no weights


def test_xgboost_eval_metric(graded, rng):
    y, pred = graded
    metric = xgboost_eval_metric(n_classes=5)
    expected = cohen_kappa_score(y, _rounded(pred, 0, 4), weights="quadratic", labels=range(5))
    assert metric(pred.astype(np.float32), FakeDMatrix(y)) == ("qwk", pytest.approx(expected))
    sw = rng.uniform(0.5, 2, len(y))
    _, value = metric(pred, FakeDMatrix(y, sw))
    assert value == pytest.approx(cohen_kappa_score(
        y, _rounded(pred, 0, 4), weights="quadratic", labels=range(5),
        sample_weight=sw.astype(np.float32)), abs=1e-9)
    # multi:softprob hands (n, K) probabilities
    probs = rng.dirichlet(np.ones(5), len(y))
    probs[np.arange(len(y)), y] += 0.2
    assert metric(probs, FakeDMatrix(y))[1] == pytest.approx(cohen_kappa_score(
        y, probs.argmax(1), weights="quadratic", labels=range(5)), abs=1e-12)


def test_xgboost_sklearn_eval_metric_call_styles(graded, rng):
    y, pred = graded
    expected = cohen_kappa_score(y, _rounded(pred, 0, 4), weights="quadratic", labels=range(5))
    metric = xgboost_sklearn_eval_metric(n_classes=5)
    loss = xgboost_sklearn_eval_metric(n_classes=5, loss=True)
    assert metric.__name__ == "qwk" and loss.__name__ == "qwk_loss"
    # XGBoost calls func(y_true, y_score), or func(y_true, y_score, sample_weight=w)
    assert metric(y, pred) == pytest.approx(expected, abs=1e-12)
    assert loss(y, pred) == pytest.approx(1 - expected, abs=1e-12)
    sw = rng.uniform(0.5, 2, len(y))
    assert metric(y, pred, sample_weight=sw) == pytest.approx(cohen_kappa_score(
        y, _rounded(pred, 0, 4), weights="quadratic", labels=range(5), sample_weight=sw),
        abs=1e-12)
    assert xgboost_sklearn_eval_metric(name="my_qwk").__name__ == "my_qwk"


def test_eval_metric_factories_reject_both_labels_and_n_classes():
    for factory in (lightgbm_eval_metric, lightgbm_sklearn_eval_metric, xgboost_eval_metric,
                    xgboost_sklearn_eval_metric):
        with pytest.raises(ValueError, match="either `labels` or `n_classes`"):
            factory(labels=[0, 1], n_classes=2)


def test_integrations_import_no_optional_library():
    code = ("import sys, fastkappa.integrations; "
            "print(sorted(m for m in ('sklearn', 'lightgbm', 'xgboost') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------- real libraries


def _boosting_data():
    x, y = _ordinal_regression_data(4, 400)
    return x[:300], y[:300], x[300:], y[300:]


def test_lightgbm_train_with_feval():
    lgb = pytest.importorskip("lightgbm")
    xt, yt, xv, yv = _boosting_data()
    dval = lgb.Dataset(xv, yv)
    record: dict = {}
    booster = lgb.train({"objective": "regression", "verbose": -1}, lgb.Dataset(xt, yt),
                        num_boost_round=5, valid_sets=[dval], valid_names=["val"],
                        feval=lightgbm_eval_metric(n_classes=5),
                        callbacks=[lgb.record_evaluation(record)])
    assert len(record["val"]["qwk"]) == 5
    assert record["val"]["qwk"][-1] == pytest.approx(
        qwk_score(yv, booster.predict(xv), n_classes=5), abs=1e-9)


def test_xgboost_train_with_custom_metric():
    xgb = pytest.importorskip("xgboost")
    xt, yt, xv, yv = _boosting_data()
    dval = xgb.DMatrix(xv, label=yv)
    record: dict = {}
    booster = xgb.train({"objective": "reg:squarederror"}, xgb.DMatrix(xt, label=yt), 5,
                        evals=[(dval, "val")], custom_metric=xgboost_eval_metric(n_classes=5),
                        maximize=True, evals_result=record, verbose_eval=False)
    assert len(record["val"]["qwk"]) == 5
    assert record["val"]["qwk"][-1] == pytest.approx(
        qwk_score(yv, booster.predict(dval), n_classes=5), abs=1e-6)


def test_integer_predictions_are_labels_never_clipped():
    # a classifier's predicted labels: as fk.cohen_kappa and scikit-learn read them
    from sklearn.metrics import cohen_kappa_score

    from fastkappa.integrations import qwk_score

    for t, p in (([0, 1, 2, 3], [0, 1, 2, 4]), ([0, 2, 4, 4], [1, 2, 4, 4]),
                 ([1, 2, 3, 3], np.array([1, 2, 2, 3], dtype=np.uint8))):
        assert qwk_score(t, p) == pytest.approx(
            cohen_kappa_score(t, p, weights="quadratic"), abs=1e-12)
    with pytest.raises(ValueError, match="outside the declared classes"):
        qwk_score([0, 1, 2, 3], [0, 1, 2, 7], n_classes=4)
    assert qwk_score([0, 1, 1, 0], [True, True, False, False]) == pytest.approx(
        cohen_kappa_score([0, 1, 1, 0], [1, 1, 0, 0], weights="quadratic"))
    # cut points still apply when given, and floats still round to the nearest class
    assert qwk_score([0, 1, 2, 3], [0, 1, 2, 7], thresholds=[0.5, 1.5, 2.5]) == 1.0
    assert qwk_score([0, 1, 2, 3], [0.0, 1.0, 2.0, 7.0]) == 1.0


def test_qwk_score_reads_fitted_cuts_labels_and_refuses_other_lengths():
    from sklearn.metrics import cohen_kappa_score

    from fastkappa.integrations import qwk_score

    rng = np.random.default_rng(0)
    y = rng.integers(1, 6, 300)
    s = y + rng.normal(0, 0.5, 300)
    cuts = fk.optimize_thresholds(y, s, weights="quadratic")
    sub = y < 5  # a fold without grade 5: the cuts still name five classes
    pred = np.asarray(cuts.labels)[np.searchsorted(np.asarray(cuts), s[sub], side="right")]
    assert qwk_score(y[sub], s[sub], thresholds=cuts) == pytest.approx(
        cohen_kappa_score(y[sub], pred, weights="quadratic", labels=[1, 2, 3, 4, 5]))
    # integer labels of another length are not class-major scores
    with pytest.raises(ValueError, match="same length"):
        qwk_score([0, 1], [0, 1, 1, 0])


# --------------------------------------------------------------------------- seventh review


def test_predict_proba_scorer_reads_columns_in_classes_order():
    # binary classifiers give scikit-learn's scorer the positive class's column alone
    # (it was rounded as a score: every row class 1, QWK 0), and a classifier's columns
    # follow its sorted classes_, not the scale order of `labels` (QWK -0.45)
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import KFold, cross_val_score

    from fastkappa.integrations import make_qwk_scorer

    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    cv = KFold(3, shuffle=True, random_state=0)
    oracle = make_scorer(cohen_kappa_score, weights="quadratic")
    binary = np.where(X[:, 0] > 0, 2, 1)
    grades = np.array(["low", "mid", "high"])[np.digitize(X[:, 0], [-0.5, 0.5])]
    for y, labels in ((binary, [1, 2]), (grades, ["low", "mid", "high"])):
        got = cross_val_score(LogisticRegression(), X, y, cv=cv, scoring=make_qwk_scorer(
            labels=labels, response_method="predict_proba"))
        by_label = cross_val_score(LogisticRegression(), X, y, cv=cv, scoring=make_qwk_scorer(
            labels=labels, response_method="predict"))
        np.testing.assert_allclose(got, by_label, atol=1e-12)
        assert got.min() > 0.9
    np.testing.assert_allclose(
        cross_val_score(LogisticRegression(), X, binary, cv=cv, scoring=make_qwk_scorer(
            labels=[1, 2], response_method="predict_proba")),
        cross_val_score(LogisticRegression(), X, binary, cv=cv, scoring=oracle), atol=1e-12)


@pytest.mark.filterwarnings("ignore:The argument 'eval_set' is deprecated")
def test_fitted_models_with_fastkappa_objectives_and_metrics_pickle():
    # the objectives and metrics were closures, which pickle cannot save: a fitted
    # scikit-learn-API model that held one could not be saved (joblib.dump)
    import pickle

    lgb = pytest.importorskip("lightgbm")
    xgb = pytest.importorskip("xgboost")
    from fastkappa.integrations import (
        lightgbm_eval_metric,
        lightgbm_qwk_objective,
        lightgbm_sklearn_eval_metric,
        xgboost_eval_metric,
        xgboost_qwk_objective,
        xgboost_sklearn_eval_metric,
    )

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = np.clip(np.round(X @ [1.0, 0.5, 0.0] + 2), 0, 4)
    models = [
        lgb.LGBMRegressor(objective=lightgbm_qwk_objective(), n_estimators=5, verbose=-1).fit(
            X, y, eval_set=[(X, y)], eval_metric=lightgbm_sklearn_eval_metric(n_classes=5)),
        xgb.XGBRegressor(objective=xgboost_qwk_objective(), n_estimators=5,
                         eval_metric=xgboost_sklearn_eval_metric(n_classes=5)).fit(
            X, y, eval_set=[(X, y)], verbose=False),
    ]
    for model in models:
        again = pickle.loads(pickle.dumps(model))
        np.testing.assert_array_equal(again.predict(X), model.predict(X))
    for metric in (lightgbm_eval_metric(name="k"), xgboost_eval_metric(name="k")):
        assert pickle.loads(pickle.dumps(metric)).__name__ == "k"


@pytest.mark.parametrize("n_classes", [2.7, "5", True, 0, -1])
def test_n_classes_is_checked_for_scores_as_for_labels(n_classes):
    # float predictions read n_classes through int(): 2.7 was 2 classes, "5" five
    with pytest.raises(ValueError, match="`n_classes` must be a positive integer"):
        qwk_score([0, 1, 1, 0], [0.2, 0.9, 1.7, 0.4], n_classes=n_classes)


def test_make_qwk_scorer_checks_its_options_when_built():
    # accepted, then every fold scored nan (cross_val_score's error_score)
    from fastkappa.integrations import make_qwk_scorer

    with pytest.raises(ValueError, match="either `labels` or `n_classes`"):
        make_qwk_scorer(labels=[0, 1, 2, 3], n_classes=4)
    with pytest.raises(ValueError, match="`n_classes` must be a positive integer"):
        make_qwk_scorer(n_classes=2.5)


def test_nan_in_y_true_is_named_as_such():
    # it said "`labels` must not contain NaN", of an argument that was not passed
    with pytest.raises(ValueError, match=r"`y_true` holds NaN in 1 row"):
        qwk_score([0, 1, np.nan, 2], [0.1, 1.0, 2.0, 2.0])


# --------------------------------------------------------------------------- class scores


def _graded_classifier_data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 3))
    grade = np.digitize(X @ [1.0, 0.5, 0.0] + rng.normal(0, 0.3, 600), [-1.2, -0.4, 0.4, 1.2])
    return X, grade


_SCALE = ["none", "mild", "moderate", "severe", "proliferative"]


def _by_predict(clf, X, y, labels):
    """scikit-learn's own numbers: its QWK of the classifier's predict."""
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import KFold, cross_val_score

    return cross_val_score(clf, X, y, cv=KFold(3, shuffle=True, random_state=0),
                           scoring=make_scorer(cohen_kappa_score, weights="quadratic",
                                               labels=labels))


def _by_scorer(clf, X, y, **options):
    from sklearn.model_selection import KFold, cross_val_score

    return cross_val_score(clf, X, y, cv=KFold(3, shuffle=True, random_state=0),
                           scoring=make_qwk_scorer(**options), error_score="raise")


@pytest.mark.parametrize("scale", [_SCALE, [40, 30, 20, 10, 0]])
def test_decision_function_scorer_reads_columns_in_classes_order(scale):
    # the columns follow the sorted classes_; they were read in `labels` order (QWK
    # 0.57 for string grades where predict gives 0.90, -0.88 for descending grades)
    from sklearn.linear_model import LogisticRegression

    X, grade = _graded_classifier_data()
    y = np.asarray(scale, dtype=object if isinstance(scale[0], str) else None)[grade]
    clf = LogisticRegression(max_iter=1000)
    want = _by_predict(clf, X, y, scale)
    assert want.min() > 0.8
    np.testing.assert_allclose(
        _by_scorer(clf, X, y, labels=scale, response_method="decision_function"), want,
        atol=1e-12)


@pytest.mark.parametrize("labels", [[0, 1], [1, 0], ["no", "yes"], ["yes", "no"]])
def test_binary_decision_function_is_a_margin(labels):
    # one column of margins: class classes_[1] above 0 (it was rounded at 0.5 as a
    # score, and string classes raised "numeric predictions need `thresholds=`")
    from sklearn.linear_model import LogisticRegression

    X, grade = _graded_classifier_data()
    y = np.asarray(sorted(labels), dtype=object if isinstance(labels[0], str) else None)[
        (grade >= 3).astype(int)]
    clf = LogisticRegression(max_iter=1000)
    want = _by_predict(clf, X, y, labels)
    assert want.min() > 0.8
    for method in ("decision_function", "predict_proba"):
        np.testing.assert_allclose(
            _by_scorer(clf, X, y, labels=labels, response_method=method), want, atol=1e-12)


def test_list_of_response_methods_reads_the_method_scikit_learn_called():
    # scikit-learn calls the first method of the list the estimator has; the
    # predictions were read as labels or rounded scores whatever the method was
    import pickle

    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC

    X, grade = _graded_classifier_data()
    y = np.asarray(_SCALE, dtype=object)[grade]
    binary = np.where(grade >= 3, "yes", "no")
    either = ["predict_proba", "decision_function"]
    for clf in (LogisticRegression(max_iter=1000), SVC(kernel="linear")):  # SVC: no proba
        for target, labels in ((y, _SCALE), (binary, ["no", "yes"])):
            want = _by_predict(clf, X, target, labels)
            np.testing.assert_allclose(
                _by_scorer(clf, X, target, labels=labels, response_method=either), want,
                atol=1e-12)
    # a regressor has neither method here: its predict is rounded, as by default
    np.testing.assert_allclose(
        _by_scorer(Ridge(), X, grade, n_classes=5,
                   response_method=["decision_function", "predict"]),
        _by_scorer(Ridge(), X, grade, n_classes=5), atol=1e-12)
    scorer = make_qwk_scorer(labels=_SCALE, response_method=either)
    assert "response_method=['predict_proba', 'decision_function']" in repr(scorer)
    search = GridSearchCV(LogisticRegression(max_iter=1000), {"C": [0.1, 1.0]}, cv=3,
                          scoring=scorer).fit(X, y)
    again = pickle.loads(pickle.dumps(search))  # a fitted search holding the scorer saves
    assert again.scorer_(again.best_estimator_, X, y) == search.scorer_(
        search.best_estimator_, X, y) > 0.8


# --------------------------------------------------------------------------- options when built


_FACTORIES = [make_qwk_scorer, lightgbm_eval_metric, lightgbm_sklearn_eval_metric,
              xgboost_eval_metric, xgboost_sklearn_eval_metric]


@pytest.mark.parametrize("factory", _FACTORIES, ids=lambda f: f.__name__)
@pytest.mark.parametrize(("options", "match"), [
    ({"weights": "quad"}, r"`weights` must be None, 'linear', 'quadratic'"),
    ({"weights": np.ones((3, 3))}, "zero on the diagonal"),
    ({"weights": 1 - np.eye(3), "n_classes": 5}, r"shape \(K, K\) = \(5, 5\)"),
    ({"weights": 1 - np.eye(3), "thresholds": [0.5]}, r"shape \(K, K\) = \(2, 2\)"),
    ({"thresholds": [2, 1]}, "strictly increasing"),
    ({"thresholds": [0.5, np.nan]}, "finite"),
    ({"thresholds": []}, "non-empty 1-D array of cut points"),
    ({"thresholds": ["a", "b"]}, "numeric cut points"),
    ({"labels": [0, 1, 2, 3], "thresholds": [0.5, 1.5, 2.5, 3.5]},
     r"`thresholds` has 4 cut points \(5 classes\) but `labels` declares 4"),
    ({"n_classes": 5, "thresholds": [0.5, 1.5]},
     r"`thresholds` has 2 cut points \(3 classes\) but `n_classes` declares 5"),
    ({"labels": [0, 1, 1]}, "must not repeat a class"),
    ({"n_classes": 2.5}, "`n_classes` must be a positive integer"),
])
def test_options_are_checked_when_built(factory, options, match):
    # each was accepted, then every fold or boosting round scored nan (or raised)
    with pytest.raises(ValueError, match=match):
        factory(**options)


@pytest.mark.parametrize(("options", "match"), [
    ({"response_method": "predict_log_proba"}, "`response_method` must be 'predict', "),
    ({"response_method": []}, "`response_method` must be 'predict', "),
    ({"response_method": ["predict", "score"]}, r"got \['predict', 'score'\]"),
    ({"response_method": "predict_proba", "thresholds": [0.5]},
     "`thresholds` cut 1-D predictions.*response_method='predict'"),
])
def test_make_qwk_scorer_checks_response_method_when_built(options, match):
    with pytest.raises(ValueError, match=match):
        make_qwk_scorer(**options)


def test_fitted_cuts_declare_their_classes_when_built():
    cuts = fk.Thresholds([0.5, 1.5], labels=[0, 1, 2])
    with pytest.raises(ValueError, match=r"3 classes\) but `labels` declares 4"):
        lightgbm_sklearn_eval_metric(thresholds=cuts, labels=[0, 1, 2, 3])
    with pytest.raises(ValueError, match=r"shape \(K, K\) = \(3, 3\)"):
        make_qwk_scorer(thresholds=cuts, weights=1 - np.eye(4))
    assert lightgbm_sklearn_eval_metric(thresholds=cuts)([0, 1, 2], [0.1, 1.0, 2.0],
                                                         None) == ("qwk", 1.0, True)


# --------------------------------------------------------------------------- messages


def test_qwk_score_messages_name_what_is_wrong():
    # the cut points were called `y_pred`'s; classes printed as [np.str_('none'), ...]
    # with "..." after the whole list; inf was called "finite or NaN", though NaN is
    # refused too
    with pytest.raises(ValueError, match=r"`thresholds` has 2 cut points \(3 classes\)"):
        qwk_score([0, 1, 2, 3, 4], [0.0, 1, 2, 3, 4], thresholds=[0.5, 1.5], n_classes=5)
    with pytest.raises(ValueError, match=r"the classes are \['none', 'mild', 'moderate', "
                                         r"'severe', 'proliferative'\]\)"):
        qwk_score(np.array(_SCALE), [0.1, 1, 2, 3, 4.0], labels=np.array(_SCALE))
    with pytest.raises(ValueError, match=r"\['a', 'b', 'c', 'd', 'e', \.\.\.\]"):
        qwk_score(list("abcdef"), np.arange(6.0), labels=list("abcdef"))
    with pytest.raises(ValueError, match=r"`y_pred` holds inf in 2 rows; the model's "
                                         "predictions must be finite"):
        qwk_score([0, 1, 2], [-np.inf, 1.3, np.inf])


def test_predict_proba_scorer_asks_for_the_scale_when_a_fold_lacks_a_class():
    # it said "every class must be among the classes of each training fold"
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score

    X, grade = _graded_classifier_data()
    cv = [(np.arange(len(grade)), np.flatnonzero(grade != 0))]  # a test fold lacks grade 0
    clf = LogisticRegression(max_iter=1000)
    for method in ("predict_proba", "decision_function"):
        with pytest.raises(ValueError, match=r"this fold's `y_true` holds 4 classes; "
                                             r"declare the scale on the scorer, "
                                             r"make_qwk_scorer\(labels=\.\.\.\) or "
                                             r"make_qwk_scorer\(n_classes=\.\.\.\)"):
            cross_val_score(clf, X, grade, cv=cv, error_score="raise",
                            scoring=make_qwk_scorer(response_method=method))
        got = cross_val_score(clf, X, grade, cv=cv, error_score="raise",
                              scoring=make_qwk_scorer(n_classes=5, response_method=method))
        np.testing.assert_allclose(got, cross_val_score(
            clf, X, grade, cv=cv, scoring=make_qwk_scorer(n_classes=5)), atol=1e-12)
    with pytest.raises(ValueError, match=r"fitted on 5 classes\) but 6 are declared; "
                                         "each training fold must hold exactly"):
        cross_val_score(clf, X, grade, cv=cv, error_score="raise",
                        scoring=make_qwk_scorer(n_classes=6, response_method="predict_proba"))


def test_class_score_ties_go_to_the_first_sorted_class_as_predict_does():
    # the columns were put in scale order before argmax, so with labels not in
    # ascending order a tie (margin 0, probability 0.5) went to another class than
    # predict's: QWK 0.0 against 0.667
    from fastkappa.integrations import _qwk_of_margins, _qwk_of_probabilities

    y = [0, 1, 0, 1, 0, 1]
    margin = np.array([0, 1, -1, 0.5, 0, -0.2])
    want = qwk_score(y, (margin > 0).astype(int), labels=[1, 0], weights=None)
    assert _qwk_of_margins(y, margin, labels=[1, 0], weights=None) == want
    proba = np.array([0.5, 0.9, 0.2, 0.7, 0.5, 0.4])
    assert _qwk_of_probabilities(y, proba, labels=[1, 0], weights=None) == want
    three = np.array([[0.4, 0.4, 0.2], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])
    y3 = ["b", "c", "a"]  # a tie between classes "a" and "b" goes to "a"
    assert _qwk_of_probabilities(y3, three, labels=["c", "b", "a"], weights=None) == (
        qwk_score(y3, ["a", "c", "c"], labels=["c", "b", "a"], weights=None))
