"""Cut points: the :class:`~fastkappa.Thresholds` type, their checks, and
:func:`~fastkappa.apply_thresholds` (class index = number of cut points ``<= score``)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._core.columns import CodesColumn, MatrixColumn, as_column
from ._core.encode import check_labels
from ._core.encoding import rows_text
from ._core.options import check_thresholds


class Thresholds(np.ndarray):
    """Cut points that remember the classes they were fitted on.

    What :func:`optimize_thresholds` returns and what
    ``ThresholdOptimizer.thresholds_`` holds: a 1-D float64 array of ``K - 1``
    strictly increasing cut points (it works wherever an ndarray does) with
    a ``labels`` attribute, the ``K`` classes in index order.
    :func:`apply_thresholds` returns those labels by default, so grades
    ``1..5`` come back as ``1..5`` and string grades as strings, not as
    0-based indices.  Passed as ``thresholds=`` to :func:`fastkappa.cohen_kappa`,
    :func:`fastkappa.kappa_ci`, :func:`fastkappa.compare` or
    :meth:`fastkappa.CohenKappa.update` without ``labels=`` or ``n_classes=``,
    the cuts declare those labels as the classes, so a validation subset that
    lacks a grade keeps the scale.

    Arithmetic, comparisons and indexing give plain ndarrays (``cuts + 1``
    no longer separates the same classes, ``cuts[:2]`` has fewer cut points
    than the labels need), and so does ``np.asarray(cuts)``: a plain array
    gives class indices, as before.  Copies and pickles keep the labels.

    Parameters
    ----------
    cuts : array_like of shape (K - 1,)
        Finite, strictly increasing cut points.
    labels : array_like of shape (K,)
        The classes in scale order.

    Examples
    --------
    >>> import numpy as np
    >>> import fastkappa as fk
    >>> cuts = fk.Thresholds([1.5, 2.5], labels=[1, 2, 3])
    >>> cuts
    Thresholds([1.5, 2.5], labels=[1, 2, 3])
    >>> fk.apply_thresholds([0.7, 2.0, 2.6], cuts)
    array([1, 2, 3])
    >>> fk.apply_thresholds([0.7, 2.0, 2.6], np.asarray(cuts))  # plain array: indices
    array([0, 1, 2])
    """

    labels: np.ndarray

    def __new__(cls, cuts: ArrayLike, labels: ArrayLike) -> Thresholds:
        th = check_thresholds(cuts)
        lab = _labels_array(labels)
        if lab.shape != (len(th) + 1,):
            raise ValueError(
                f"`labels` must hold one class per interval: {len(th) + 1} labels for "
                f"{len(th)} cut points; got {lab.shape[0]}.")
        obj = th.view(cls)
        obj.labels = lab
        return obj

    def __array_finalize__(self, obj) -> None:
        # views and copies of the same cut points (copy(), astype) keep the labels
        labels = getattr(obj, "labels", None)
        if labels is not None and (self.ndim != 1 or len(labels) != self.shape[0] + 1):
            labels = None
        self.labels = labels

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # arithmetic and comparisons compute on, and return, plain arrays
        inputs = tuple(x.view(np.ndarray) if isinstance(x, Thresholds) else x
                       for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(x.view(np.ndarray) if isinstance(x, Thresholds) else x
                                  for x in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __getitem__(self, key):
        return self.view(np.ndarray)[key]

    def __reduce__(self):
        return (_rebuild_thresholds, (self.view(np.ndarray).copy(), self.labels))

    def __repr__(self) -> str:
        body = np.array2string(self.view(np.ndarray), separator=", ",
                               prefix="Thresholds(")
        labels = None if self.labels is None else self.labels.tolist()
        return f"Thresholds({body}, labels={labels!r})"


def _rebuild_thresholds(cuts: np.ndarray, labels) -> np.ndarray:
    if labels is None:
        return cuts
    return Thresholds(cuts, labels)


def _numeric_iv(x, name: str, what: str, *, keep_nan: bool = False) -> np.ndarray:
    """A finite 1-D float64 array, or a ValueError that says what is wrong.

    With ``keep_nan`` missing values (NaN/None) come back as NaN for the caller's
    ``nan_policy``; inf is an error either way."""
    col = as_column(x, name)
    if isinstance(col, MatrixColumn):
        raise ValueError(
            f"`{name}` must be 1-D {what}; got a 2-D array of shape {col.values.shape}. "
            "For (n, K) class probabilities, pass their expected grade, e.g. "
            "probs @ np.arange(K).")
    if isinstance(col, CodesColumn):
        if col.kind == "str":
            raise ValueError(f"`{name}` must be numeric {what}; it holds strings.")
        cats = np.asarray(col.categories, dtype=np.float64)
        values = np.full(len(col.codes), np.nan)
        ok = col.codes >= 0
        if len(cats):
            values[ok] = cats[col.codes[ok]]
    else:
        values = np.asarray(col.values, dtype=np.float64)
    n_nan = 0 if keep_nan else int(np.count_nonzero(np.isnan(values)))
    if n_nan:
        raise ValueError(
            f"`{name}` holds NaN/None in {rows_text(n_nan)}; every row needs a finite value "
            "(drop or impute those rows first).")
    n_inf = int(np.count_nonzero(np.isinf(values)))
    if n_inf:
        raise ValueError(f"`{name}` holds inf in {rows_text(n_inf)}; values must be finite.")
    return values


def apply_thresholds(
    scores: ArrayLike,
    thresholds: ArrayLike,
    *,
    labels: ArrayLike | None = None,
) -> np.ndarray:
    """Classes from scores and increasing cut points.

    The class index of a score is the number of cut points ``<= score``,
    i.e. ``np.searchsorted(thresholds, scores, side="right")``.

    Parameters
    ----------
    scores : array_like of shape (n,)
        Finite continuous scores (NaN raises ``ValueError``).
    thresholds : array_like of shape (K - 1,)
        Finite, strictly increasing cut points (at least one).  The :class:`Thresholds`
        that :func:`optimize_thresholds` returns carry their classes.
    labels : array_like of shape (K,), optional
        Class labels; when given, ``labels[index]`` is returned instead of
        the index.  Default: the ``labels`` of a :class:`Thresholds`, and
        class indices for a plain array of cut points.

    Returns
    -------
    numpy.ndarray of shape (n,)
        Labels (``labels[index]``), or class indices (``intp``) when the cut
        points know no labels and none are given.

    Examples
    --------
    >>> import fastkappa as fk
    >>> fk.apply_thresholds([0.2, 0.5, 1.7, 3.0], [0.5, 1.5])
    array([0, 1, 2, 2])
    >>> fk.apply_thresholds([0.2, 0.5, 1.7], [0.5, 1.5], labels=["mild", "moderate", "severe"])
    array(['mild', 'moderate', 'severe'], dtype='<U8')
    """
    s = _numeric_iv(scores, "scores", "continuous scores")
    th = check_thresholds(thresholds)
    idx = np.searchsorted(th, s, side="right")
    if labels is None:
        labels = getattr(thresholds, "labels", None) if isinstance(
            thresholds, Thresholds) else None
    if labels is None:
        return idx
    lab = _labels_array(labels)
    if lab.shape != (len(th) + 1,):
        raise ValueError(
            f"`labels` must hold one class per interval: {len(th) + 1} labels for "
            f"{len(th)} cut points; got {lab.shape[0] if lab.ndim == 1 else lab.shape}.")
    check_labels(labels, None)  # distinct, not missing, of one kind
    return lab[idx]


def _labels_array(labels) -> np.ndarray:
    if hasattr(labels, "to_numpy"):
        labels = labels.to_numpy()
    lab = np.asarray(labels)
    if lab.ndim != 1:
        raise ValueError("`labels` must be a 1-D list of class labels.")
    return lab


def fitted_labels(thresholds):
    """The classes fitted cut points name (a :class:`Thresholds`), or None for
    anything else: plain cut points number the classes from the data."""
    return thresholds.labels if isinstance(thresholds, Thresholds) else None
