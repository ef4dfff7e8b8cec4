"""QWK where models are tuned: scikit-learn scorers, LightGBM and XGBoost eval metrics
and custom objectives (``1 - continuous_qwk`` of a regression output).

Nothing here imports scikit-learn, LightGBM or XGBoost at module import;
:func:`make_qwk_scorer` imports scikit-learn when called, and the eval-metric
factories return plain functions with the call signatures those libraries
document, so this module works (and is tested) without them.

How predictions become classes, everywhere in this module:

- (n, K) probabilities or margins (multiclass objectives): ``argmax``;
  column ``i`` is class ``i`` (``labels[i]`` when ``labels`` is given).
  A flat array of ``n * K`` values (LightGBM before 4.0) is read
  class-major, as LightGBM wrote it.  :func:`make_qwk_scorer` reads a
  classifier's ``predict_proba`` and ``decision_function`` as scikit-learn
  passes them: columns in the order of its sorted ``classes_``, a binary
  classifier's as one column (the second class above 0.5 or above 0).
- 1-D floats (regression): cut at ``thresholds`` when given (class index =
  number of cut points ``<=`` prediction), otherwise rounded to the nearest
  class: the cut points are the midpoints between consecutive class values,
  so a prediction of 2.5 between classes 2 and 3 goes to 3 and anything
  beyond the ends is clipped to the first or last class.
- 1-D integers or booleans (a classifier's predicted labels) and strings:
  used as labels, as by :func:`fastkappa.cohen_kappa` (cut at ``thresholds``
  only when given).  A predicted label outside declared classes is an
  error, never clipped.

The classes are ``labels``, or ``0..n_classes-1``; otherwise the sorted
distinct values of ``y_true`` (and, for predicted labels, of ``y_pred`` too,
as in scikit-learn).  Declare them (``n_classes=`` or ``labels=``) when a
fold or an eval set may miss a grade: weights use the class index, so a
missing grade would otherwise change the scale.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._core import weights as _weights
from ._core.encode import check_labels
from ._core.encoding import rows_text
from ._core.options import check_thresholds
from ._install import install_hint
from ._threshold_cuts import fitted_labels
from .metrics import cohen_kappa

__all__ = [
    "continuous_qwk_gradient",
    "lightgbm_eval_metric",
    "lightgbm_qwk_objective",
    "lightgbm_sklearn_eval_metric",
    "make_qwk_scorer",
    "qwk_score",
    "xgboost_eval_metric",
    "xgboost_qwk_objective",
    "xgboost_sklearn_eval_metric",
]


def _as_array(x) -> np.ndarray:
    if hasattr(x, "to_numpy"):
        x = x.to_numpy()
    return np.asarray(x)


def _declared_classes(y_true, labels, n_classes) -> np.ndarray:
    """The classes (``labels`` and ``n_classes`` checked by :func:`_options`)."""
    if labels is not None:
        return _as_array(labels)
    if n_classes is not None:
        return np.arange(n_classes)
    y = _as_array(y_true)
    if y.dtype.kind == "f" and np.isnan(y).any():  # not "`labels` must not contain NaN"
        raise ValueError(
            f"`y_true` holds NaN in {rows_text(np.isnan(y).sum())}; score the rows with a "
            "true class (drop the others first).")
    if y.dtype == object:
        return np.asarray(sorted(set(y.tolist())), dtype=object)
    return np.unique(y)


def _midpoints(classes: np.ndarray) -> np.ndarray:
    if classes.dtype.kind not in "biuf":
        shown = ", ".join(map(repr, classes[:5].tolist())) + (", ..." if len(classes) > 5
                                                             else "")
        raise ValueError(
            "numeric predictions need `thresholds=` to become non-numeric classes "
            f"(the classes are [{shown}]); pass cut points, or numeric labels.")
    c = classes.astype(np.float64)
    if len(c) > 1 and np.any(np.diff(c) <= 0):
        raise ValueError("rounding to the nearest class needs increasing numeric classes; "
                         "pass `labels` in increasing order or give `thresholds=`.")
    return 0.5 * (c[:-1] + c[1:])


def qwk_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    thresholds: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_classes: int | None = None,
    weights: str | ArrayLike | None = "quadratic",
    sample_weight: ArrayLike | None = None,
) -> float:
    """QWK (or kappa with ``weights``) of predictions that may be continuous.

    A metric with scikit-learn's signature, ready for
    ``sklearn.metrics.make_scorer(qwk_score, n_classes=5)``; see the module
    notes for how predictions become classes (argmax, ``thresholds``, or
    rounding to the nearest class).

    Parameters
    ----------
    y_true : array_like of shape (n,)
        True classes.
    y_pred : array_like of shape (n,) or (n, K)
        Predicted labels, continuous scores, or (n, K) probabilities/margins.
    thresholds : array_like of shape (K - 1,), optional
        Increasing cut points for 1-D scores (e.g. from
        :func:`fastkappa.optimize_thresholds`).  Default: round to the
        nearest class.
    labels, n_classes : optional
        The classes (see the module notes).
    weights : None, 'linear', 'quadratic' or (K, K) array
        Disagreement weights; QWK by default.
    sample_weight : array_like of shape (n,), optional
        Non-negative weight of each row.

    Returns
    -------
    float

    Examples
    --------
    >>> from fastkappa.integrations import qwk_score
    >>> round(qwk_score([0, 1, 2, 3], [0.2, 1.4, 2.6, 2.9]), 4)  # rounds to [0, 1, 3, 3]
    0.9167
    >>> qwk_score([0, 1, 2, 3], [0.2, 1.4, 2.6, 2.9], thresholds=[0.5, 1.5, 2.7])
    1.0
    """
    thresholds = _options(thresholds, labels, n_classes, weights)["thresholds"]
    n = len(y_true)
    pred = _as_array(y_pred)
    if labels is None and n_classes is None and thresholds is not None:
        labels = fitted_labels(thresholds)  # fitted cuts name their classes
    if pred.ndim == 2 and pred.shape[1] == 1:
        pred = pred[:, 0]
    if pred.ndim == 1 and n > 0 and pred.size != n and pred.size % n == 0 and (
            pred.size // n >= 2) and pred.dtype.kind == "f":
        pred = pred.reshape(pred.size // n, n).T  # class-major flat multiclass output
    if pred.ndim == 2:
        if thresholds is not None:
            raise ValueError("`thresholds` cut 1-D scores; these predictions are (n, K) "
                             "class scores, which are read by argmax.")
        if labels is None and n_classes is None:
            n_classes = pred.shape[1]
        return cohen_kappa(y_true, pred, weights=weights, labels=labels, n_classes=n_classes,
                           sample_weight=sample_weight)
    if pred.dtype.kind in "biu" and thresholds is None:  # predicted labels, as they are
        return cohen_kappa(y_true, pred, weights=weights, labels=labels, n_classes=n_classes,
                           sample_weight=sample_weight)
    if pred.dtype.kind in "biuf":
        _check_finite(pred)
        classes = _declared_classes(y_true, labels, n_classes)
        if thresholds is None:
            thresholds = _midpoints(classes)
        if len(classes) == 1:
            return cohen_kappa(y_true, np.full(n, classes[0]), weights=weights,
                               labels=classes, sample_weight=sample_weight)
        return cohen_kappa(y_true, pred.astype(np.float64), weights=weights, labels=classes,
                           thresholds=thresholds, sample_weight=sample_weight)
    return cohen_kappa(y_true, pred, weights=weights, labels=labels, n_classes=n_classes,
                       sample_weight=sample_weight)


def _check_finite(pred: np.ndarray) -> None:
    """1-D scores become classes only when finite (NaN or inf is a ValueError)."""
    for what, bad in (("NaN", np.isnan(pred)), ("inf", np.isinf(pred))):
        if bad.any():
            raise ValueError(
                f"`y_pred` holds {what} in {rows_text(bad.sum())}; the model's predictions "
                "must be finite to be turned into classes.")


def make_qwk_scorer(
    *,
    thresholds: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_classes: int | None = None,
    weights: str | ArrayLike | None = "quadratic",
    response_method: str | list[str] = "predict",
) -> Any:
    """A scikit-learn scorer for ``cross_val_score``, ``GridSearchCV``...

    ``sklearn.metrics.make_scorer(qwk_score, ...)`` with these options
    (greater is better), checked when the scorer is built.  Imports
    scikit-learn when called (``pip install "fastkappa[sklearn]"``, or
    ``pip install -e ".[sklearn]"`` from a clone).

    Parameters
    ----------
    thresholds, labels, n_classes, weights
        As in :func:`qwk_score`.  Declare the classes: a cross-validation
        fold that misses a grade would otherwise change the scale.
        ``thresholds`` cut 1-D predictions, so they need
        ``response_method='predict'``.
    response_method : {'predict', 'predict_proba', 'decision_function'} or list, \
default 'predict'
        Which estimator method gives the predictions: 'predict' for
        regressors (scores, rounded or cut) and for a classifier's labels;
        'predict_proba' or 'decision_function' for a classifier's class
        probabilities or margins, scored by argmax, which is the class
        ``predict`` gives.  Their columns follow the classifier's sorted
        ``classes_``; they are read in that order and scored on ``labels``
        in scale order, so each training fold must hold exactly the
        declared classes.  A binary classifier gives one column, the second
        class's probability or margin: the second class above 0.5 or above
        0, else the first.  A list names methods in order of preference:
        scikit-learn calls the first one the estimator has, and the
        predictions are read as that method's.

    Returns
    -------
    callable
        A scikit-learn scorer, ``scorer(estimator, X, y) -> float``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression, Ridge
    >>> from sklearn.model_selection import cross_val_score
    >>> from fastkappa.integrations import make_qwk_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = np.clip(np.round(X @ [1.0, 0.5, 0.0] + 2), 0, 4).astype(int)
    >>> scores = cross_val_score(Ridge(), X, y, cv=3, scoring=make_qwk_scorer(n_classes=5))
    >>> bool(scores.min() > 0.8)
    True
    >>> grades = np.array(["none", "mild", "moderate", "severe", "proliferative"])
    >>> scorer = make_qwk_scorer(labels=grades, response_method="decision_function")
    >>> scores = cross_val_score(LogisticRegression(), X, grades[y], cv=3, scoring=scorer)
    >>> bool(scores.min() > 0.8)
    True
    """
    try:
        from sklearn.metrics import make_scorer
    except ImportError:
        raise ImportError("make_qwk_scorer builds a scikit-learn scorer and needs "
                          f"scikit-learn; {install_hint('sklearn')}") from None

    options = _options(thresholds, labels, n_classes, weights)  # not nan scores per fold
    kwargs = {key: value for key, value in options.items()
              if value is not None or key == "weights"}
    methods = _response_methods(response_method, thresholds)
    by_method = {method: make_scorer(_SCORE_OF[method], greater_is_better=True,
                                     response_method=method, **kwargs)
                 for method in methods}
    if isinstance(response_method, str):
        return by_method[response_method]
    from ._sklearn_scorer import FirstMethodScorer

    return FirstMethodScorer(by_method, kwargs)


def _response_methods(response_method, thresholds) -> list[str]:
    """``make_qwk_scorer``'s ``response_method`` as a list of names, checked."""
    methods = [response_method] if isinstance(response_method, str) else (
        list(response_method) if isinstance(response_method, (list, tuple)) else [])
    if not methods or any(m not in _SCORE_OF for m in methods):
        raise ValueError(
            "`response_method` must be 'predict', 'predict_proba', 'decision_function' or "
            f"a list of them in order of preference; got {response_method!r}.")
    if thresholds is not None and methods != ["predict"]:
        raise ValueError(
            "`thresholds` cut 1-D predictions (a regressor's, with "
            f"response_method='predict'); response_method={response_method!r} gives class "
            "probabilities or margins, scored by argmax. Leave out `thresholds`, or use "
            "response_method='predict'.")
    return methods


def _qwk_of_probabilities(y_true, y_pred, *, labels=None, n_classes=None,
                          weights="quadratic", sample_weight=None) -> float:
    """:func:`qwk_score` of ``predict_proba`` as a scikit-learn scorer passes it
    (see :func:`_qwk_of_class_scores`); a binary classifier's is the second
    class's probability."""
    p = _as_array(y_pred).astype(np.float64, copy=False)
    return _qwk_of_class_scores(y_true, np.column_stack([1.0 - p, p]) if p.ndim == 1 else p,
                                labels, n_classes, weights, sample_weight, "predict_proba")


def _qwk_of_margins(y_true, y_pred, *, labels=None, n_classes=None,
                    weights="quadratic", sample_weight=None) -> float:
    """:func:`qwk_score` of ``decision_function`` as a scikit-learn scorer passes it
    (see :func:`_qwk_of_class_scores`); a binary classifier's is the second
    class's margin, positive for that class."""
    m = _as_array(y_pred).astype(np.float64, copy=False)
    return _qwk_of_class_scores(y_true, np.column_stack([-m, m]) if m.ndim == 1 else m,
                                labels, n_classes, weights, sample_weight,
                                "decision_function")


def _qwk_of_class_scores(y_true, scores, labels, n_classes, weights, sample_weight,
                         method: str) -> float:
    """:func:`qwk_score` of (n, K) class scores whose columns follow the sorted
    classes (a classifier's ``classes_``), scored on the classes in scale order.

    A binary classifier's single column was made two, ``[first, second]``, so
    that argmax gives the second class only above 0.5 (probabilities) or 0
    (margins), as ``predict`` does."""
    declared = _declared_classes(y_true, labels, n_classes)
    if scores.ndim != 2 or scores.shape[1] != len(declared):
        columns = scores.shape[-1] if scores.ndim == 2 else 1
        if labels is None and n_classes is None:
            raise ValueError(
                f"the classifier's {method} has {columns} class columns but this fold's "
                f"`y_true` holds {len(declared)} classes; declare the scale on the scorer, "
                "make_qwk_scorer(labels=...) or make_qwk_scorer(n_classes=...), so that a "
                "fold that lacks a class keeps it.")
        raise ValueError(
            f"the classifier's {method} has {columns} class columns (it was fitted on "
            f"{columns} classes) but {len(declared)} are declared; each training fold must "
            "hold exactly the declared classes (stratify the folds), or score with "
            "response_method='predict'.")
    # column j is the j-th class in sorted order (as classes_ is): argmax over the
    # columns as given, so that a tie goes to the first class in sorted order, as
    # predict's does; then the class it names
    if not np.isfinite(scores).all():  # refused with qwk_score's own message
        return qwk_score(y_true, scores, labels=declared, weights=weights,
                         sample_weight=sample_weight)
    predicted = np.asarray(declared)[np.argsort(declared, kind="stable")][
        np.argmax(scores, axis=1)]
    return qwk_score(y_true, predicted, labels=declared, weights=weights,
                     sample_weight=sample_weight)


#: how make_qwk_scorer reads each response method's predictions
_SCORE_OF = {"predict": qwk_score, "predict_proba": _qwk_of_probabilities,
             "decision_function": _qwk_of_margins}


_EVAL_OPTIONS_DOC = """Parameters
    ----------
    thresholds : array_like of shape (K - 1,), optional
        Increasing cut points for the model's continuous output (on the
        scale it passes: raw margins with a custom objective). Default:
        round to the nearest class, as :func:`qwk_score` does.
    labels, n_classes : optional
        The classes (see the module notes).
    weights : None, 'linear', 'quadratic' or (K, K) array, default 'quadratic'
        Disagreement weights; QWK by default.
    name : str, default 'qwk'
        The metric's name in the training log.

    Returns
    -------
    callable
        The metric, with the call signature above."""


def _options(thresholds, labels, n_classes, weights) -> dict:
    """The options of :func:`qwk_score`, checked once where they are given (every
    function here takes them), so that a bad one is an error when a scorer or
    metric is built, not nan in every fold.  Fitted cut points are kept as
    they are (they name their classes); others become float64."""
    declared, _ = check_labels(labels, n_classes)
    n_declared = None if declared is None else len(declared)
    if thresholds is not None:  # fitted cuts (Thresholds) hold one label per class
        cuts = check_thresholds(thresholds)  # at least one
        if n_declared is not None and n_declared != len(cuts) + 1:
            raise ValueError(
                f"`thresholds` has {len(cuts)} cut points ({len(cuts) + 1} classes) but "
                f"`{'labels' if labels is not None else 'n_classes'}` declares {n_declared}"
                "; pass K - 1 cut points for K classes.")
        n_declared = len(cuts) + 1
        if fitted_labels(thresholds) is None:
            thresholds = cuts
    if not _weights.is_named(weights):  # unknown names raise here
        if n_declared is None:  # the classes come from the data: check the matrix alone
            n_declared = max((*np.shape(weights)[:1], 1))
        _weights.weight_matrix(n_declared, weights)
    return {"thresholds": thresholds, "labels": labels, "n_classes": n_classes,
            "weights": weights}


class _Metric:
    """A picklable eval metric (a fitted model that holds one can be saved):
    :func:`qwk_score` with fixed options, under ``__name__``.  Each subclass's
    ``__call__`` has the signature its library inspects."""

    def __init__(self, name: str, opts: dict, loss: bool = False) -> None:
        self.__name__ = name
        self.opts = opts
        self.loss = loss

    def score(self, y_true, y_pred, weight) -> float:
        value = qwk_score(y_true, y_pred, sample_weight=_weights_or_none(weight), **self.opts)
        return 1.0 - value if self.loss else value

    def __repr__(self) -> str:
        return f"<fastkappa eval metric {self.__name__!r}>"


class _LightGBMMetric(_Metric):
    def __call__(self, preds, eval_data):
        return self.__name__, self.score(eval_data.get_label(), preds,
                                         eval_data.get_weight()), True


class _LightGBMSklearnMetric(_Metric):
    def __call__(self, y_true, y_pred, weight):
        return self.__name__, self.score(y_true, y_pred, weight), True


class _XGBoostMetric(_Metric):
    def __call__(self, predt, dtrain):
        return self.__name__, self.score(dtrain.get_label(), predt, dtrain.get_weight())


class _XGBoostSklearnMetric(_Metric):
    def __call__(self, y_true, y_pred, sample_weight=None):
        return self.score(y_true, y_pred, sample_weight)


def _weights_or_none(w) -> np.ndarray | None:
    if w is None:
        return None
    w = np.asarray(w)
    return None if w.size == 0 else w


def lightgbm_eval_metric(
    *,
    thresholds: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_classes: int | None = None,
    weights: str | ArrayLike | None = "quadratic",
    name: str = "qwk",
) -> Callable:
    """LightGBM ``feval`` for ``lightgbm.train`` / ``lightgbm.cv``.

    Returns ``feval(preds, eval_data) -> (name, value, True)``, the
    signature of LightGBM's native API (``True``: higher is better, so early
    stopping maximises it).  Labels and weights come from
    ``eval_data.get_label()`` and ``eval_data.get_weight()``.  With a custom
    objective LightGBM passes raw margins; rounding then needs
    ``thresholds`` on that scale.

    {options}

    Examples
    --------
    >>> import numpy as np
    >>> from fastkappa.integrations import lightgbm_eval_metric
    >>> class Data:  # what lightgbm.Dataset offers
    ...     def get_label(self): return np.array([0.0, 1.0, 2.0, 2.0])
    ...     def get_weight(self): return None
    >>> feval = lightgbm_eval_metric(n_classes=3)
    >>> feval(np.array([0.1, 0.9, 2.2, 1.6]), Data())
    ('qwk', 1.0, True)
    """
    return _LightGBMMetric(name, _options(thresholds, labels, n_classes, weights))


def lightgbm_sklearn_eval_metric(
    *,
    thresholds: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_classes: int | None = None,
    weights: str | ArrayLike | None = "quadratic",
    name: str = "qwk",
) -> Callable:
    """``eval_metric`` for LightGBM's scikit-learn API (``LGBMRegressor.fit``...).

    Returns ``metric(y_true, y_pred, weight) -> (name, value, True)``: three
    parameters, so LightGBM passes the eval set's weights (``None`` when it
    has none).

    {options}

    Examples
    --------
    >>> from fastkappa.integrations import lightgbm_sklearn_eval_metric
    >>> metric = lightgbm_sklearn_eval_metric(n_classes=3)
    >>> metric([0, 1, 2], [0.2, 0.8, 2.4], None)
    ('qwk', 1.0, True)
    """
    return _LightGBMSklearnMetric(name, _options(thresholds, labels, n_classes, weights))


def xgboost_eval_metric(
    *,
    thresholds: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_classes: int | None = None,
    weights: str | ArrayLike | None = "quadratic",
    name: str = "qwk",
) -> Callable:
    """XGBoost ``custom_metric`` for ``xgboost.train`` / ``xgboost.cv``.

    Returns ``custom_metric(predt, dtrain) -> (name, value)``; labels and
    weights come from ``dtrain.get_label()`` and ``dtrain.get_weight()``
    (empty when unweighted).  XGBoost minimises custom metrics by default:
    pass ``maximize=True`` to ``xgboost.train`` (or
    ``xgboost.callback.EarlyStopping(..., maximize=True)``) when early
    stopping on it.

    {options}

    Examples
    --------
    >>> import numpy as np
    >>> from fastkappa.integrations import xgboost_eval_metric
    >>> class DMatrix:  # what xgboost.DMatrix offers
    ...     def get_label(self): return np.array([0.0, 1.0, 2.0])
    ...     def get_weight(self): return np.empty(0)
    >>> metric = xgboost_eval_metric(n_classes=3)
    >>> metric(np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.3, 0.6]]), DMatrix())
    ('qwk', 1.0)
    """
    return _XGBoostMetric(name, _options(thresholds, labels, n_classes, weights))


def xgboost_sklearn_eval_metric(
    *,
    thresholds: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_classes: int | None = None,
    weights: str | ArrayLike | None = "quadratic",
    loss: bool = False,
    name: str | None = None,
) -> Callable:
    """``eval_metric`` for XGBoost's scikit-learn API (``XGBRegressor(eval_metric=...)``).

    Returns ``metric(y_true, y_pred, sample_weight=None) -> float``; XGBoost
    reports it under the function's ``__name__`` (``name``).  XGBoost's
    scikit-learn API treats a callable metric as a cost and minimises it in
    early stopping: pass ``loss=True`` to get ``1 - kappa`` (named
    ``"qwk_loss"``), or keep kappa and use
    ``xgboost.callback.EarlyStopping(..., maximize=True)``.

    {options}

    Examples
    --------
    >>> from fastkappa.integrations import xgboost_sklearn_eval_metric
    >>> metric = xgboost_sklearn_eval_metric(n_classes=3, loss=True)
    >>> metric.__name__, metric([0, 1, 2], [0.1, 1.2, 1.9])
    ('qwk_loss', 0.0)
    """
    name = name if name is not None else ("qwk_loss" if loss else "qwk")
    return _XGBoostSklearnMetric(name, _options(thresholds, labels, n_classes, weights), loss)


# --------------------------------------------------------------------------- objectives


def continuous_qwk_gradient(y_true: ArrayLike, y_pred: ArrayLike,
                            sample_weight: ArrayLike | None = None
                            ) -> tuple[np.ndarray, np.ndarray]:
    """Gradient and a positive Hessian of ``n * (1 - continuous_qwk)`` per row.

    With ``t`` the targets, ``s`` the predictions, weighted means over the
    ``W = sum(w)`` total weight, ``a = s - t``, ``d = t - mean(t)``,
    ``M = mean(a**2)``, ``C = mean(d * s)`` (the covariance) and
    ``D = M + 2 C`` (the denominator of continuous QWK), the loss is
    ``L = M / D = 1 - continuous_qwk`` and, exactly,

        dL/ds_i = 2 w_i (2 C a_i - M d_i) / (W D**2).

    The exact diagonal of the Hessian is ``2 w_i (2 C / D) / (W D) - 2 (dD/ds_i)
    (dL/ds_i) / D``: it is negative wherever the predictions do not yet
    correlate with the targets. The returned Hessian is ``n * 2 w_i / (W D)``
    (``n`` as below), the curvature of ``M / D`` with the denominator held fixed: always
    positive, equal to the leading exact term when ``continuous_qwk = 1`` and
    above it otherwise (so Newton steps are never too long), dropping the
    cross term, which is O(1/n) smaller. Both are multiplied by ``n`` so that
    their scale matches a per-row loss (LightGBM's ``min_sum_hessian_in_leaf``
    and both libraries' ``lambda`` stay meaningful).

    Parameters
    ----------
    y_true : array_like of shape (n,)
        Grades, used as numbers (at least two distinct values).
    y_pred : array_like of shape (n,)
        Real-valued predictions (raw margins of a regression booster).
    sample_weight : array_like of shape (n,), optional
        Non-negative row weights.

    Returns
    -------
    gradient : ndarray of shape (n,)
        Exact gradient of ``n * (1 - continuous_qwk)`` per prediction.
    hessian : ndarray of shape (n,)
        Positive curvature ``n * 2 w_i / (W D)`` (see the notes above).

    References
    ----------
    .. [1] Lin, L. I.-K. (1989). A concordance correlation coefficient to evaluate
       reproducibility. Biometrics, 45(1), 255-268.
       https://doi.org/10.2307/2532051

    Examples
    --------
    >>> from fastkappa.integrations import continuous_qwk_gradient
    >>> g, h = continuous_qwk_gradient([0, 1, 2, 3], [0.0, 0.0, 0.0, 0.0])
    >>> g  # from constant predictions: push towards the centred targets
    array([ 0.85714286,  0.28571429, -0.28571429, -0.85714286])
    >>> h
    array([0.57142857, 0.57142857, 0.57142857, 0.57142857])
    """
    t = np.asarray(_as_array(y_true), dtype=np.float64).reshape(-1)
    s = np.asarray(_as_array(y_pred), dtype=np.float64).reshape(-1)
    if t.shape != s.shape:
        raise ValueError(
            f"`y_true` and `y_pred` must have the same length; got {t.size} and {s.size}. "
            "The QWK objectives take one regression output per row (objective='regression' "
            "/ 'reg:squarederror' shapes), not one column per class.")
    n = t.size
    if n == 0:
        raise ValueError("`y_true` and `y_pred` are empty.")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(s))):
        raise ValueError("`y_true` and `y_pred` must be finite (no NaN or inf).")
    w = _weights_or_none(sample_weight)
    if w is None:
        total = float(n)

        def mean(v):  # elementwise sums, not BLAS dot products (those spin on busy cores)
            return float(np.sum(v)) / total
    else:
        w = np.asarray(w, dtype=np.float64).reshape(-1)
        if w.shape != t.shape or not np.all(np.isfinite(w)) or np.any(w < 0) or not (
                w.sum() > 0):
            raise ValueError(
                "`sample_weight` must hold one finite, non-negative weight per row, not all "
                "zero.")
        total = float(w.sum())

        def mean(v):
            return float(np.sum(w * v)) / total
    d = t - mean(t)
    if not np.any(d[w > 0] != 0 if w is not None else d != 0):
        raise ValueError(
            "`y_true` is constant: continuous QWK is 0 whatever the predictions, so the "
            "QWK objective has nothing to learn. Train on data with at least two grades.")
    a = s - t
    m = mean(a * a)
    c = mean(d * s)
    den = m + 2.0 * c
    scale = 1.0 if w is None else w
    if not den > 0:  # predictions equal the targets exactly: nothing left to improve
        return np.zeros(n), np.full(n, n * 2.0 / (total * max(m, 1.0))) * scale
    grad = (n * 2.0 / (total * den * den)) * (2.0 * c * a - m * d) * scale
    hess = np.full(n, n * 2.0 / (total * den)) * scale
    return grad, hess


def _objective_call(first, second, weight) -> tuple[np.ndarray, np.ndarray]:
    """Both call forms: ``(preds, Dataset/DMatrix)`` or ``(y_true, y_pred, weight)``."""
    if hasattr(second, "get_label"):  # lightgbm.train / xgboost.train
        return continuous_qwk_gradient(second.get_label(), first, second.get_weight())
    return continuous_qwk_gradient(first, second, weight)


def _lightgbm_qwk_objective(y_true_or_preds, y_pred_or_data, weight=None):
    """:func:`lightgbm_qwk_objective`'s objective (module level: it pickles)."""
    return _objective_call(y_true_or_preds, y_pred_or_data, weight)


def _xgboost_qwk_objective(y_true_or_preds, y_pred_or_data, *, sample_weight=None):
    """:func:`xgboost_qwk_objective`'s objective (module level: it pickles)."""
    return _objective_call(y_true_or_preds, y_pred_or_data, sample_weight)


def lightgbm_qwk_objective() -> Callable:
    """LightGBM custom objective: ``1 - continuous_qwk`` of a regression output.

    The returned function works in both of LightGBM's call forms:
    ``lightgbm.train(params={"objective": obj, ...})`` calls
    ``obj(preds, train_data)``; the scikit-learn API
    (``LGBMRegressor(objective=obj)``) calls ``obj(y_true, y_pred, weight)``.
    It returns ``(gradient, hessian)`` from :func:`continuous_qwk_gradient`
    (sample weights included; see there for the positive-Hessian
    approximation). With a custom objective LightGBM starts from raw score 0
    and predicts raw margins: cut them into grades with
    :func:`fastkappa.optimize_thresholds` fitted on held-out margins, and
    monitor with :func:`lightgbm_eval_metric` given those ``thresholds``.

    References
    ----------
    .. [1] Lin, L. I.-K. (1989). A concordance correlation coefficient to evaluate
       reproducibility. Biometrics, 45(1), 255-268.
       https://doi.org/10.2307/2532051

    Examples
    --------
    >>> import numpy as np
    >>> from fastkappa.integrations import lightgbm_qwk_objective
    >>> obj = lightgbm_qwk_objective()
    >>> class Data:  # what lightgbm.Dataset offers
    ...     def get_label(self): return np.array([0.0, 1.0, 2.0, 3.0])
    ...     def get_weight(self): return None
    >>> g, h = obj(np.zeros(4), Data())
    >>> g
    array([ 0.85714286,  0.28571429, -0.28571429, -0.85714286])
    >>> np.array_equal(obj([0, 1, 2, 3], np.zeros(4), None)[0], g)
    True
    """

    return _lightgbm_qwk_objective


def xgboost_qwk_objective() -> Callable:
    """XGBoost custom objective: ``1 - continuous_qwk`` of a regression output.

    Works as ``xgboost.train(params, dtrain, obj=obj)`` (called as
    ``obj(predt, dtrain)``) and as ``XGBRegressor(objective=obj)`` (called as
    ``obj(y_true, y_pred, sample_weight=...)``). Returns ``(gradient,
    hessian)`` from :func:`continuous_qwk_gradient`; predictions are raw
    margins starting from ``base_score``: cut them with
    :func:`fastkappa.optimize_thresholds` fitted on held-out margins.

    References
    ----------
    .. [1] Lin, L. I.-K. (1989). A concordance correlation coefficient to evaluate
       reproducibility. Biometrics, 45(1), 255-268.
       https://doi.org/10.2307/2532051

    Examples
    --------
    >>> import numpy as np
    >>> from fastkappa.integrations import xgboost_qwk_objective
    >>> obj = xgboost_qwk_objective()
    >>> class DMatrix:  # what xgboost.DMatrix offers
    ...     def get_label(self): return np.array([0.0, 1.0, 2.0, 3.0])
    ...     def get_weight(self): return np.empty(0)
    >>> obj(np.zeros(4), DMatrix())[0]
    array([ 0.85714286,  0.28571429, -0.28571429, -0.85714286])
    """

    return _xgboost_qwk_objective


for _f in (lightgbm_eval_metric, lightgbm_sklearn_eval_metric, xgboost_eval_metric,
           xgboost_sklearn_eval_metric):
    _f.__doc__ = _f.__doc__.replace("{options}", _EVAL_OPTIONS_DOC)
del _f
