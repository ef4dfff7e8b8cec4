"""Scoring: confusion matrix and Cohen's kappa (unweighted, linear, quadratic)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._core import weights as _weights
from ._core.columns import IntColumn
from ._core.dispatch import chunked, kernels
from ._core.encode import encode_pair
from ._core.encoding import EncodedPair
from ._core.options import check_replace_undefined_by
from ._core.rows import frequency_rows
from ._core.shapes import flatten_labels

__all__ = [
    "cohen_kappa",
    "cohen_kappa_score",
    "confusion_matrix",
    "kappa_from_confusion",
    "quadratic_weighted_kappa",
    "weight_matrix",
]

weight_matrix = _weights.weight_matrix

_INPUT_DOC = """\
    labels : array_like, optional
        The classes in scale order. Weights use the class *index*, so for
        weighted kappa this declares the scale (grades absent from the data
        included). Values outside ``labels`` raise ``ValueError``.
    n_classes : int, optional
        Classes are ``0..n_classes-1``. Pass ``labels`` or ``n_classes``, not
        both; with neither, the classes are the sorted union of the observed
        values (scikit-learn's rule).
    sample_weight : array_like of shape (n,), optional
        Non-negative weight of each row; for (N, ...) labels, of shape (N,)
        (repeated over the extra axes) or of the label shape. Each row stays
        one sampled unit; counts of identical rows belong in
        ``frequency_weight``.
    frequency_weight : array_like of shape (n,), optional
        Whole-number count of each row (SAS ``WEIGHT``, Stata ``fweight``): a
        row with count c is c identical rows, and a row with count 0 is
        dropped. The result equals that of the expanded rows, counted exactly
        in int64. Not together with ``sample_weight``.
    ignore_index : scalar, optional
        Rows where either side equals this value are dropped. It must be of
        the labels' kind (a number on string labels is a ``ValueError``) and
        not one of the declared classes (``labels``, ``n_classes``): that
        is a ``ValueError`` too, since predictions of that class would go
        uncounted (torchmetrics drops rows on the target side only).
    nan_policy : {'raise', 'omit'}, default 'raise'
        What to do with rows holding NaN/None on either side.
    thresholds : array_like, optional
        Increasing cut points that turn 1-D continuous ``y_pred`` scores into
        class indices (index = number of cut points <= score)."""


def _fill_doc(func):
    func.__doc__ = func.__doc__.replace("    {input_doc}", _INPUT_DOC)
    return func


@_fill_doc
def confusion_matrix(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    n_classes: int | None = None,
    sample_weight: ArrayLike | None = None,
    frequency_weight: ArrayLike | None = None,
    ignore_index: Any = None,
    nan_policy: str = "raise",
    thresholds: ArrayLike | None = None,
) -> np.ndarray:
    """Confusion matrix of two raters, in one pass over the data.

    Parameters
    ----------
    y_true, y_pred : array_like of shape (n,)
        Labels of the two raters. ``y_pred`` may also be (n, K)
        probabilities or logits (argmax is taken), or scores with
        ``thresholds``. (N, ...) labels (masks) are flattened and (N, C, ...)
        scores argmaxed over axis 1, as in torchmetrics.
    {input_doc}

    Returns
    -------
    numpy.ndarray of shape (K, K)
        Rows are ``y_true`` classes, columns ``y_pred`` classes; int64
        counts (of ``frequency_weight`` when given), or float64 sums of
        ``sample_weight``.

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales.
       Educational and Psychological Measurement, 20(1), 37-46.
       https://doi.org/10.1177/001316446002000104 (the two raters' table of
       joint proportions that kappa is computed from).
    .. [2] scikit-learn: ``sklearn.metrics.confusion_matrix`` (the same layout:
       rows are true classes, columns predicted ones).

    Examples
    --------
    >>> import fastkappa as fk
    >>> fk.confusion_matrix([0, 1, 2, 2], [0, 2, 2, 2])
    array([[1, 0, 0],
           [0, 0, 1],
           [0, 0, 2]])
    """
    y_true, y_pred, sample_weight, frequency_weight = flatten_labels(
        y_true, y_pred, sample_weight=sample_weight, frequency_weight=frequency_weight)
    frequency_weight, rows = frequency_rows(frequency_weight, sample_weight,
                                            {"y_true": y_true, "y_pred": y_pred})
    y_true, y_pred = rows["y_true"], rows["y_pred"]
    enc = encode_pair(y_true, y_pred, labels=labels, n_classes=n_classes,
                      sample_weight=sample_weight, frequency_weight=frequency_weight,
                      ignore_index=ignore_index,
                      nan_policy=nan_policy, thresholds=thresholds)
    return enc.confusion()  # the encoding is ours alone: no copy of a (K, K) table


def _quadratic_fast(enc: EncodedPair) -> tuple[float, float] | None:
    """QWK terms from five running sums, one pass, no confusion matrix.

    Only for raw integer input with consecutive integer classes and nothing
    to drop; returns None when it does not apply (the caller then counts).
    """
    from ._core.encode import contiguous_int_classes

    if (enc.sample_weight is not None or enc.frequency_weight is not None
            or enc.compressible or enc.counted):
        # already counted (classes inferred at encode time): the table is at hand
        return None
    if not (isinstance(enc.t.source, IntColumn) and isinstance(enc.p.source, IntColumn)):
        return None
    if enc.has_ignore:
        return None
    lo = contiguous_int_classes(enc)
    if lo is None:
        return None
    hi = lo + enc.n_classes - 1
    if max(abs(lo), abs(hi)) > 2**15:
        return None

    t, p = enc.t.values, enc.p.values
    n = enc.n_input
    wide = t.dtype.itemsize > 2 or p.dtype.itemsize > 2
    parts = chunked(kernels().quadratic_sums, n, t, p, wide)
    if parts[:, 5].min() < lo or parts[:, 6].max() > hi:
        return None  # let the counting path name the bad values
    sx, sy, sxx, syy, sxy = (int(v) for v in parts[:, :5].sum(axis=0))
    # exact in Python integers, then one float division
    observed = n * (sxx + syy - 2 * sxy)
    expected = n * (sxx + syy) - 2 * sx * sy
    return float(observed), float(expected)


@_fill_doc
def cohen_kappa(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    weights: str | ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_classes: int | None = None,
    sample_weight: ArrayLike | None = None,
    frequency_weight: ArrayLike | None = None,
    ignore_index: Any = None,
    nan_policy: str = "raise",
    thresholds: ArrayLike | None = None,
    replace_undefined_by: float = np.nan,
) -> float:
    """Cohen's kappa between two raters: unweighted, linear or quadratic.

    ``kappa = 1 - sum(w * O) / sum(w * E)`` with ``O`` the confusion matrix,
    ``E`` the table expected from its margins and ``w`` the disagreement
    weights (see :func:`weight_matrix`).

    Parameters
    ----------
    y_true, y_pred : array_like of shape (n,)
        Labels of the two raters (lists, NumPy, pandas, polars, pyarrow,
        torch...). ``y_pred`` may also be (n, K) probabilities or logits, or
        1-D scores with ``thresholds``. (N, ...) labels (masks) are flattened
        and (N, C, ...) scores argmaxed over axis 1, as in torchmetrics.
    weights : None, 'none', 'linear', 'quadratic' or array_like of shape (K, K)
        Disagreement weights by class index. Weighted kappa needs ordered
        classes: numbers, or strings with ``labels=`` (or an ordered pandas
        Categorical).
    {input_doc}
    replace_undefined_by : float, default nan
        Returned, with an :class:`UndefinedKappaWarning`, when kappa is
        undefined (zero expected disagreement, e.g. both raters constant and
        equal).

    Returns
    -------
    float

    Notes
    -----
    Quadratic weights on integer input with consecutive classes (``n_classes``
    or ``labels`` such as 1..5) skip the confusion matrix: five running sums
    of class indices give QWK exactly, in one pass at memory speed.

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales.
       Educational and Psychological Measurement, 20(1), 37-46.
       https://doi.org/10.1177/001316446002000104
    .. [2] Cohen, J. (1968). Weighted kappa: Nominal scale agreement provision for
       scaled disagreement or partial credit. Psychological Bulletin, 70(4),
       213-220. https://doi.org/10.1037/h0026256

    Examples
    --------
    >>> import fastkappa as fk
    >>> y_true = [1, 1, 1, 1, 1, 2, 1, 2, 3, 5, 1, 2, 4]
    >>> y_pred = [2, 1, 4, 3, 1, 1, 1, 2, 5, 1, 2, 2, 1]
    >>> round(fk.cohen_kappa(y_true, y_pred, weights="quadratic", labels=[1, 2, 3, 4, 5]), 6)
    -0.097561
    >>> fk.cohen_kappa(["cat", "dog", "dog"], ["cat", "dog", "cat"])
    0.4
    """
    replace_undefined_by = check_replace_undefined_by(replace_undefined_by)
    y_true, y_pred, sample_weight, frequency_weight = flatten_labels(
        y_true, y_pred, sample_weight=sample_weight, frequency_weight=frequency_weight)
    frequency_weight, rows = frequency_rows(frequency_weight, sample_weight,
                                            {"y_true": y_true, "y_pred": y_pred})
    y_true, y_pred = rows["y_true"], rows["y_pred"]
    enc = encode_pair(y_true, y_pred, labels=labels, n_classes=n_classes,
                      sample_weight=sample_weight, frequency_weight=frequency_weight,
                      ignore_index=ignore_index,
                      nan_policy=nan_policy, thresholds=thresholds, weights=weights)
    terms = None
    if isinstance(weights, str) and weights == "quadratic":
        terms = _quadratic_fast(enc)
    if terms is None and enc.table_free():
        # many classes: a (K, K) table would outgrow the input; sum without one
        terms = enc.kappa_terms_without_table()
    if terms is None:
        terms = _weights.kappa_terms_named(enc.confusion(), enc.weights_spec)
    return _weights.finish_kappa(*terms, replace_undefined_by)


def quadratic_weighted_kappa(y_true: ArrayLike, y_pred: ArrayLike, **kwargs) -> float:
    """Quadratic-weighted kappa (QWK): :func:`cohen_kappa` with ``weights='quadratic'``.

    Parameters
    ----------
    y_true, y_pred : array_like of shape (n,)
        Labels of the two raters, as for :func:`cohen_kappa`.
    **kwargs
        Every keyword of :func:`cohen_kappa` but ``weights`` (``labels``,
        ``n_classes``, ``sample_weight``, ``ignore_index``, ``nan_policy``,
        ``thresholds``, ``replace_undefined_by``).

    Returns
    -------
    float
        QWK, in [-1, 1]; ``replace_undefined_by`` when it is undefined.

    References
    ----------
    .. [1] Cohen, J. (1968). Weighted kappa: Nominal scale agreement provision for
       scaled disagreement or partial credit. Psychological Bulletin, 70(4),
       213-220. https://doi.org/10.1037/h0026256
    .. [2] Fleiss, J. L., & Cohen, J. (1973). The equivalence of weighted kappa and
       the intraclass correlation coefficient as measures of reliability.
       Educational and Psychological Measurement, 33(3), 613-619.
       https://doi.org/10.1177/001316447303300309

    Examples
    --------
    >>> import fastkappa as fk
    >>> round(fk.quadratic_weighted_kappa([0, 1, 2, 3], [0, 1, 3, 3], n_classes=4), 4)
    0.9167
    """
    if "weights" in kwargs:
        raise TypeError("quadratic_weighted_kappa() sets weights='quadratic'; use "
                        "cohen_kappa() for other weights.")
    return cohen_kappa(y_true, y_pred, weights="quadratic", **kwargs)


def cohen_kappa_score(
    y1: ArrayLike,
    y2: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    weights: str | None = None,
    sample_weight: ArrayLike | None = None,
    replace_undefined_by: float = np.nan,
) -> float:
    """Drop-in for ``sklearn.metrics.cohen_kappa_score`` (same signature).

    Differences, on purpose: values outside ``labels`` raise ``ValueError``
    (scikit-learn silently drops those rows), weighted kappa on unordered
    strings raises, and the undefined case warns with
    :class:`UndefinedKappaWarning`.

    Parameters
    ----------
    y1, y2 : array_like of shape (n,)
        Labels of the two raters.
    labels : array_like, optional
        The classes in scale order; default the sorted union of both.
    weights : {None, 'linear', 'quadratic'}, optional
        Disagreement weights by class index (None: unweighted kappa).
    sample_weight : array_like of shape (n,), optional
        Non-negative weight of each row.
    replace_undefined_by : float, default nan
        Returned when kappa is undefined (zero expected disagreement).

    Returns
    -------
    float
        Cohen's kappa.

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales.
       Educational and Psychological Measurement, 20(1), 37-46.
       https://doi.org/10.1177/001316446002000104
    .. [2] Cohen, J. (1968). Weighted kappa: Nominal scale agreement provision for
       scaled disagreement or partial credit. Psychological Bulletin, 70(4),
       213-220. https://doi.org/10.1037/h0026256

    Examples
    --------
    >>> from fastkappa import cohen_kappa_score
    >>> cohen_kappa_score([0, 1, 1, 0], [0, 1, 0, 0])
    0.5
    """
    try:
        return cohen_kappa(y1, y2, labels=labels, weights=weights,
                           sample_weight=sample_weight,
                           replace_undefined_by=replace_undefined_by)
    except ValueError as err:
        # name this function's arguments, and say where the options it lacks live
        msg = str(err).replace("`y_true`", "`y1`").replace("`y_pred`", "`y2`")
        named = [o for o in _FASTKAPPA_ONLY if f"{o}=" in msg]
        if named:
            msg += (f" ({', '.join(f'`{o}`' for o in named)}: an option of "
                    "fastkappa.cohen_kappa, which takes these arguments too; "
                    "cohen_kappa_score keeps scikit-learn's signature.)")
        raise ValueError(msg) from None


#: input keywords of cohen_kappa that scikit-learn's signature lacks
_FASTKAPPA_ONLY = ("nan_policy", "ignore_index", "n_classes", "thresholds")


def _check_confusion(confusion) -> np.ndarray:
    try:
        o = np.asarray(confusion)
    except ValueError:  # NumPy's "inhomogeneous shape": rows of different lengths
        raise ValueError("`confusion` must be a square (K, K) array of counts; its rows "
                         "have different lengths.") from None
    if o.dtype == object or o.dtype.kind not in "biuf":
        raise ValueError("`confusion` must be a numeric (K, K) array of counts.")
    if o.ndim != 2 or o.shape[0] != o.shape[1] or o.shape[0] == 0:
        raise ValueError(f"`confusion` must be a square (K, K) array; got shape {o.shape}.")
    if o.dtype.kind == "f" and not np.all(np.isfinite(o)):
        raise ValueError("`confusion` must be finite; it holds nan or inf.")
    if np.any(o < 0):
        raise ValueError("`confusion` must be non-negative counts.")
    if not o.any():  # not a sum: int64 sums of big tables overflow
        raise ValueError("`confusion` is all zeros; kappa needs at least one rated pair.")
    return o


def total_count(o: np.ndarray) -> int | float:
    """Exact sum of a checked non-negative table: a Python int for integer
    tables (never an int64 sum that overflows), a float for float tables."""
    if o.dtype.kind == "f":
        return float(o.sum())
    if float(o.sum(dtype=np.float64)) < 2.0**62:
        return int(o.astype(np.int64, copy=False).sum())
    return sum(int(v) for v in o.ravel().tolist())


def kappa_from_confusion(
    confusion: ArrayLike,
    weights: str | ArrayLike | None = None,
    *,
    replace_undefined_by: float = np.nan,
) -> float:
    """Kappa of a (K, K) confusion matrix (rows ``y_true``, columns ``y_pred``).

    Products of counts are formed in float64, so tables with N beyond 2**32
    (far past where int64 products overflow) give the right kappa.

    Parameters
    ----------
    confusion : array_like of shape (K, K)
        Non-negative counts (or sums of weights), rows ``y_true`` classes,
        columns ``y_pred`` classes.
    weights : None, 'linear', 'quadratic' or array_like of shape (K, K), optional
        Disagreement weights by class index (see :func:`weight_matrix`).
    replace_undefined_by : float, default nan
        Returned, with an :class:`UndefinedKappaWarning`, when kappa is
        undefined (zero expected disagreement).

    Returns
    -------
    float
        ``1 - sum(w * O) / sum(w * E)``.

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales.
       Educational and Psychological Measurement, 20(1), 37-46.
       https://doi.org/10.1177/001316446002000104
    .. [2] Cohen, J. (1968). Weighted kappa: Nominal scale agreement provision for
       scaled disagreement or partial credit. Psychological Bulletin, 70(4),
       213-220. https://doi.org/10.1037/h0026256

    Examples
    --------
    >>> import fastkappa as fk
    >>> round(fk.kappa_from_confusion([[0, 4, 1], [0, 8, 0], [0, 1, 5]]), 4)
    0.4842
    """
    replace_undefined_by = check_replace_undefined_by(replace_undefined_by)
    o = _check_confusion(confusion)
    if not _weights.is_named(weights):
        weights = weight_matrix(o.shape[0], weights)  # checks a custom matrix
    return _weights.finish_kappa(*_weights.kappa_terms_named(o, weights),
                                 replace_undefined_by)
