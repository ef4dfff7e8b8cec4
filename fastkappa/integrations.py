"""QWK where models are tuned: scikit-learn scorers, LightGBM and XGBoost eval metrics.

Nothing here imports scikit-learn, LightGBM or XGBoost at module import;
:func:`make_qwk_scorer` imports scikit-learn when called, and the eval-metric
factories return plain functions with the call signatures those libraries
document, so this module works (and is tested) without them.

How predictions become classes, everywhere in this module:

- (n, K) probabilities or margins (multiclass objectives): ``argmax``;
  column ``i`` is class ``i`` (``labels[i]`` when ``labels`` is given).
  A flat array of ``n * K`` values (LightGBM before 4.0) is read
  class-major, as LightGBM wrote it.
- 1-D numbers (regression, or a classifier's predicted labels): cut at
  ``thresholds`` when given (class index = number of cut points ``<=``
  prediction), otherwise rounded to the nearest class: the cut points are
  the midpoints between consecutive class values, so a prediction of 2.5
  between classes 2 and 3 goes to 3 and anything beyond the ends is clipped
  to the first or last class.  Integer labels are left as they are.
- 1-D strings: used as labels.

The classes are ``labels``, or ``0..n_classes-1``, or the sorted distinct
values of ``y_true``.  Declare them (``n_classes=`` or ``labels=``) when a
fold or an eval set may miss a grade: weights use the class index, so a
missing grade would otherwise change the scale.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .metrics import cohen_kappa

__all__ = [
    "lightgbm_eval_metric",
    "lightgbm_sklearn_eval_metric",
    "make_qwk_scorer",
    "qwk_score",
    "xgboost_eval_metric",
    "xgboost_sklearn_eval_metric",
]


def _as_array(x) -> np.ndarray:
    if hasattr(x, "to_numpy"):
        x = x.to_numpy()
    return np.asarray(x)


def _declared_classes(y_true, labels, n_classes) -> np.ndarray:
    if labels is not None and n_classes is not None:
        raise ValueError("pass either `labels` or `n_classes`, not both.")
    if labels is not None:
        return _as_array(labels)
    if n_classes is not None:
        return np.arange(int(n_classes))
    y = _as_array(y_true)
    if y.dtype == object:
        return np.asarray(sorted(set(y.tolist())), dtype=object)
    return np.unique(y)


def _midpoints(classes: np.ndarray) -> np.ndarray:
    if classes.dtype.kind not in "biuf":
        raise ValueError(
            "numeric predictions need `thresholds=` to become non-numeric classes "
            f"(the classes are {list(classes[:5])}...); pass cut points, or numeric labels.")
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
    n = len(y_true)
    pred = _as_array(y_pred)
    if pred.ndim == 2 and pred.shape[1] == 1:
        pred = pred[:, 0]
    if pred.ndim == 1 and n > 0 and pred.size != n and pred.size % n == 0 and (
            pred.size // n >= 2):
        pred = pred.reshape(pred.size // n, n).T  # class-major flat multiclass output
    if pred.ndim == 2:
        if thresholds is not None:
            raise ValueError("`thresholds` cut 1-D scores; these predictions are (n, K) "
                             "class scores, which are read by argmax.")
        if labels is None and n_classes is None:
            n_classes = pred.shape[1]
        return cohen_kappa(y_true, pred, weights=weights, labels=labels, n_classes=n_classes,
                           sample_weight=sample_weight)
    if pred.dtype.kind in "biuf":
        if pred.dtype.kind == "f" and np.isnan(pred).any():
            raise ValueError(
                f"`y_pred` holds NaN in {int(np.isnan(pred).sum())} rows; the model's "
                "predictions must be finite to be turned into classes.")
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


def make_qwk_scorer(
    *,
    thresholds: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_classes: int | None = None,
    weights: str | ArrayLike | None = "quadratic",
    response_method: str = "predict",
) -> Any:
    """A scikit-learn scorer for ``cross_val_score``, ``GridSearchCV``...

    ``sklearn.metrics.make_scorer(qwk_score, ...)`` with these options
    (greater is better).  Imports scikit-learn when called.

    Parameters
    ----------
    thresholds, labels, n_classes, weights
        As in :func:`qwk_score`.  Declare the classes: a cross-validation
        fold that misses a grade would otherwise change the scale.
    response_method : str, default 'predict'
        Which estimator method gives the predictions ('predict' for
        regressors and labels; 'predict_proba' for (n, K) probabilities).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.model_selection import cross_val_score
    >>> from fastkappa.integrations import make_qwk_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = np.clip(np.round(X @ [1.0, 0.5, 0.0] + 2), 0, 4).astype(int)
    >>> scores = cross_val_score(Ridge(), X, y, cv=3, scoring=make_qwk_scorer(n_classes=5))
    >>> bool(scores.min() > 0.8)
    True
    """
    from sklearn.metrics import make_scorer

    kwargs = {"weights": weights}
    for key, value in (("thresholds", thresholds), ("labels", labels),
                       ("n_classes", n_classes)):
        if value is not None:
            kwargs[key] = value
    return make_scorer(qwk_score, greater_is_better=True, response_method=response_method,
                       **kwargs)


def _options(thresholds, labels, n_classes, weights) -> dict:
    if labels is not None and n_classes is not None:
        raise ValueError("pass either `labels` or `n_classes`, not both.")
    return {"thresholds": None if thresholds is None else np.asarray(thresholds, float),
            "labels": labels, "n_classes": n_classes, "weights": weights}


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
    opts = _options(thresholds, labels, n_classes, weights)

    def feval(preds, eval_data):
        value = qwk_score(eval_data.get_label(), preds,
                          sample_weight=_weights_or_none(eval_data.get_weight()), **opts)
        return name, value, True

    feval.__name__ = name
    return feval


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

    Examples
    --------
    >>> from fastkappa.integrations import lightgbm_sklearn_eval_metric
    >>> metric = lightgbm_sklearn_eval_metric(n_classes=3)
    >>> metric([0, 1, 2], [0.2, 0.8, 2.4], None)
    ('qwk', 1.0, True)
    """
    opts = _options(thresholds, labels, n_classes, weights)

    def metric(y_true, y_pred, weight):
        value = qwk_score(y_true, y_pred, sample_weight=_weights_or_none(weight), **opts)
        return name, value, True

    metric.__name__ = name
    return metric


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
    opts = _options(thresholds, labels, n_classes, weights)

    def custom_metric(predt, dtrain):
        value = qwk_score(dtrain.get_label(), predt,
                          sample_weight=_weights_or_none(dtrain.get_weight()), **opts)
        return name, value

    custom_metric.__name__ = name
    return custom_metric


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

    Examples
    --------
    >>> from fastkappa.integrations import xgboost_sklearn_eval_metric
    >>> metric = xgboost_sklearn_eval_metric(n_classes=3, loss=True)
    >>> metric.__name__, metric([0, 1, 2], [0.1, 1.2, 1.9])
    ('qwk_loss', 0.0)
    """
    opts = _options(thresholds, labels, n_classes, weights)

    def metric(y_true, y_pred, sample_weight=None):
        value = qwk_score(y_true, y_pred, sample_weight=_weights_or_none(sample_weight),
                          **opts)
        return 1.0 - value if loss else value

    metric.__name__ = name if name is not None else ("qwk_loss" if loss else "qwk")
    return metric
