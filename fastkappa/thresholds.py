"""Exact threshold optimisation for QWK (and kappa with any weights).

Regression-style models output continuous scores; kappa needs classes.
:func:`optimize_thresholds` finds the increasing cut points that maximise
kappa between ``y_true`` and ``apply_thresholds(scores, cuts)``, exactly.

How: with ``y_true`` fixed, ``sum(w * O)`` and ``sum(w * E)`` are both sums
over rows of a term that depends only on the row's predicted class, so kappa
is ``1 - A / B`` with ``A`` and ``B`` sums over the sorted scores.  Dinkelbach
iterations minimise the ratio, each one a dynamic programme over the sorted
distinct scores (ties kept together) in ``O(D K)``.  Scores are sorted once,
per y_true class, and reused.  The search visits every monotone assignment of
the distinct scores to the classes implicitly, so the result is the global
optimum, not a local one, and it does not depend on a starting point.

Conventions (documented on the public functions too):

- class index = number of cut points ``<= score``
  (``np.searchsorted(cuts, score, side="right")``);
- a cut point between two adjacent distinct scores ``a < b`` sits midway,
  ``(a + b) / 2``;
- classes may end up empty when that scores higher.  The ``m`` cut points
  falling into one gap ``(a, b)`` sit at ``a + (b - a) * i / (m + 1)``,
  ``i = 1..m`` (evenly spread, so cut points are always strictly
  increasing).  Cut points of empty classes below the lowest (above the
  highest) score are spread the same way over one mean gap below (above)
  it, so a single one sits half a mean gap away; the mean gap is
  ``(max - min) / (D - 1)`` over the ``D`` distinct scores (1 when all
  scores are equal);
- which of several assignments with the same kappa is returned depends on
  the data only (deterministic; ties in the programme go to the lower
  class).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._core import weights as _weights
from ._core.columns import CodesColumn, FloatColumn, MatrixColumn, as_column
from ._core.dispatch import threshold_kernels as _kernels
from ._core.encode import encode_pair
from ._core.options import check_sample_weight
from ._core.rows import expand_frequency
from ._core.shapes import flatten_labels
from .bootstrap import resolve_seed
from .exceptions import UndefinedKappaWarning

__all__ = [
    "ThresholdOptimizer",
    "Thresholds",
    "apply_thresholds",
    "continuous_qwk",
    "optimize_thresholds",
]

#: most Dinkelbach steps (each a dynamic programme); a handful suffice in practice
MAX_ITER = 100
#: positions per cut point in ``ThresholdOptimizer.curve_``
CURVE_POINTS = 256



# --------------------------------------------------------------------------- cut points


class Thresholds(np.ndarray):
    """Cut points that remember the classes they were fitted on.

    What :func:`optimize_thresholds` returns and what
    ``ThresholdOptimizer.thresholds_`` holds: a 1-D float64 array of ``K - 1``
    strictly increasing cut points (it works wherever an ndarray does) with
    a ``labels`` attribute, the ``K`` classes in index order.
    :func:`apply_thresholds` returns those labels by default, so grades
    ``1..5`` come back as ``1..5`` and string grades as strings, not as
    0-based indices.

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
        th = _thresholds_iv(cuts)
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


# --------------------------------------------------------------------------- validation


def _length(col) -> int:
    return len(col.codes) if isinstance(col, CodesColumn) else len(col.values)


def _numeric_iv(x, name: str, what: str) -> np.ndarray:
    """A finite 1-D float64 array, or a ValueError that says what is wrong."""
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
    n_nan = int(np.count_nonzero(np.isnan(values)))
    if n_nan:
        raise ValueError(
            f"`{name}` holds NaN/None in {n_nan} rows; every row needs a finite value "
            "(drop or impute those rows first).")
    n_inf = int(np.count_nonzero(np.isinf(values)))
    if n_inf:
        raise ValueError(f"`{name}` holds inf in {n_inf} rows; values must be finite.")
    return values


def _thresholds_iv(thresholds) -> np.ndarray:
    th = np.asarray(thresholds)
    if th.dtype == object or th.dtype.kind not in "biuf":
        raise ValueError("`thresholds` must be a 1-D array of numeric cut points.")
    th = th.astype(np.float64)
    if th.ndim != 1:
        raise ValueError(f"`thresholds` must be a 1-D array of cut points; got shape "
                         f"{th.shape}.")
    if not np.all(np.isfinite(th)):
        raise ValueError("`thresholds` must be finite (they hold nan or inf).")
    if np.any(np.diff(th) <= 0):
        raise ValueError("`thresholds` must be strictly increasing.")
    return th


@dataclass
class _Problem:
    """Validated ``(y_true, scores)``: class indices, scores, weights."""

    classes: np.ndarray
    w: np.ndarray
    weights_spec: Any
    t: np.ndarray  # int16/int32 class index per row
    scores: np.ndarray  # float64
    sw: np.ndarray | None

    @property
    def n_classes(self) -> int:
        return len(self.classes)


def _expand_counted(y_true, scores, sample_weight, frequency_weight, groups=None):
    """``(y_true, scores, groups)`` with each row repeated by its ``frequency_weight``
    count (unchanged without one): the result is that of the expanded rows."""
    if frequency_weight is None:
        return y_true, scores, groups
    y_true, scores, frequency_weight, groups = flatten_labels(
        y_true, scores, names=("y_true", "scores"), frequency_weight=frequency_weight,
        groups=groups)
    rows = expand_frequency(frequency_weight, sample_weight,
                            {"y_true": y_true, "scores": scores, "groups": groups})
    return rows["y_true"], rows["scores"], rows["groups"]


def _problem_iv(y_true, scores, *, labels, n_classes, weights, sample_weight) -> _Problem:
    y_true, scores, sample_weight = flatten_labels(
        y_true, scores, names=("y_true", "scores"), sample_weight=sample_weight)
    tcol = as_column(y_true, "y_true")
    if isinstance(tcol, FloatColumn) and np.isnan(tcol.values).any():
        n_nan = int(np.isnan(tcol.values).sum())
        raise ValueError(f"`y_true` holds NaN in {n_nan} rows; every row needs a class "
                         "(drop those rows first).")
    if isinstance(tcol, CodesColumn) and (tcol.codes < 0).any():
        n_nan = int((tcol.codes < 0).sum())
        raise ValueError(f"`y_true` holds missing values (NaN/None) in {n_nan} rows; every "
                         "row needs a class (drop those rows first).")
    if (isinstance(tcol, CodesColumn) and tcol.kind == "str" and not tcol.ordered
            and labels is None and n_classes is None):
        raise ValueError(
            "cut points map increasing scores to classes in scale order, but `y_true` "
            "holds strings with no declared order; pass `labels=[...]` in scale order "
            "(or use an ordered pandas Categorical).")
    s = _numeric_iv(scores, "scores", "continuous scores")
    n = _length(tcol) if not isinstance(tcol, MatrixColumn) else tcol.values.shape[0]
    if n != len(s):
        raise ValueError(
            f"`y_true` and `scores` must have the same length; got {n} and {len(s)}.")
    if n == 0:
        raise ValueError("`y_true` and `scores` are empty; thresholds need at least one row.")
    enc = encode_pair(tcol, tcol, labels=labels, n_classes=n_classes,
                      sample_weight=sample_weight, weights=weights,
                      names=("y_true", "y_true"))
    t, _, sw = enc.indices()
    return _Problem(classes=enc.classes, w=enc.weights, weights_spec=weights, t=t, scores=s,
                    sw=sw)


# --------------------------------------------------------------------------- solving


@dataclass
class _Prepared:
    """Scores partitioned by y_true class, sorted within each class."""

    s_part: np.ndarray
    offsets: np.ndarray
    sw_part: np.ndarray  # empty when unweighted
    perm: np.ndarray  # input row of each position of s_part


def _prepare(prob: _Problem, *, need_perm: bool) -> _Prepared:
    kern = _kernels()
    k = prob.n_classes
    s_part, perm, offsets = kern._partition_by_class(prob.t, prob.scores, k)
    if prob.sw is None and not need_perm:
        for i in range(k):
            s_part[offsets[i]:offsets[i + 1]].sort()
        sw_part = np.empty(0, dtype=np.float64)
    else:
        for i in range(k):
            a, b = offsets[i], offsets[i + 1]
            o = np.argsort(s_part[a:b])
            s_part[a:b] = s_part[a:b][o]
            perm[a:b] = perm[a:b][o]
        sw_part = (np.empty(0, dtype=np.float64) if prob.sw is None
                   else np.ascontiguousarray(prob.sw[perm]))
    return _Prepared(s_part=s_part, offsets=offsets, sw_part=sw_part, perm=perm)


@dataclass
class _Solution:
    thresholds: np.ndarray
    observed: float  # A = sum(w * O)
    expected: float  # B = sum(w * E)
    n_iter: int
    v: np.ndarray


_NO_MASK = np.empty(0, dtype=np.uint8)


def _solve(prep: _Prepared, prob: _Problem, keep: np.ndarray | None = None,
           where: str = "") -> _Solution:
    kern = _kernels()
    k = prob.n_classes
    g, h, lo, hi, r, n_distinct = kern._merge_blocks(
        prep.s_part, prep.offsets, prep.sw_part, _NO_MASK if keep is None else keep, prob.w)
    present = np.flatnonzero(r > 0)
    if len(present) < 2:
        what = (f"a single class with positive weight ({prob.classes[present].tolist()[0]!r})"
                if len(present) else "no row with positive weight")
        raise ValueError(
            f"`y_true`{where} holds {what}; kappa is 0 or undefined for every choice of "
            "cut points, so there is nothing to optimise. Thresholds need at least two "
            "classes in `y_true`.")
    v = (r @ prob.w) / r.sum()
    x0 = kern._quantile_start(h, r)
    assign = np.empty(len(h), dtype=np.int16)
    a, b, n_iter = kern._dinkelbach(g, h, v, x0, MAX_ITER, assign)
    starts = np.searchsorted(assign, np.arange(1, k), side="left")
    cuts = _place_cuts(starts, lo, hi, n_distinct)
    return _Solution(thresholds=cuts, observed=float(a), expected=float(b),
                     n_iter=int(n_iter), v=v)


def _place_cuts(starts: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                n_distinct: int) -> np.ndarray:
    """Cut points from the first block of each class ``>= j`` (see module doc)."""
    nb = len(lo)
    n_cuts = len(starts)
    u0, u1 = float(lo[0]), float(hi[-1])
    scale = max(abs(u0), abs(u1))
    step = (u1 - u0) / (n_distinct - 1) if n_distinct > 1 else 1.0
    step = max(step, scale * 2.0**-40)  # never absorbed by the scores' magnitude
    if not np.isfinite(step):
        step = scale
    cuts = np.empty(n_cuts, dtype=np.float64)
    j = 0
    while j < n_cuts:
        b = int(starts[j])
        m = 1
        while j + m < n_cuts and starts[j + m] == b:
            m += 1
        if b == 0:
            a, c = u0 - step, u0  # cuts <= the lowest score: empty classes below
        elif b == nb:
            a, c = u1, u1 + step  # cuts > the highest score: empty classes above
        else:
            a, c = float(hi[b - 1]), float(lo[b])
        for i in range(m):
            f = (i + 1) / (m + 1)
            x = a * (1.0 - f) + c * f
            if b > 0 and x <= a:
                x = np.nextafter(a, np.inf)
            if b < nb and x > c:
                x = c
            cuts[j + i] = x
        j += m
    for i in range(1, n_cuts):
        if cuts[i] <= cuts[i - 1]:
            cuts[i] = np.nextafter(cuts[i - 1], np.inf)
    return cuts


# --------------------------------------------------------------------------- public


def optimize_thresholds(
    y_true: ArrayLike,
    scores: ArrayLike,
    *,
    n_classes: int | None = None,
    labels: ArrayLike | None = None,
    weights: str | ArrayLike | None = "quadratic",
    sample_weight: ArrayLike | None = None,
    frequency_weight: ArrayLike | None = None,
) -> Thresholds:
    """Cut points that maximise kappa between ``y_true`` and thresholded scores.

    Exact: the result is the global optimum over all increasing cut points
    (Dinkelbach iterations over a dynamic programme on the sorted scores; see
    the module notes), for any weights and sample weights, in ``O(N log N)``
    for the sort plus ``O(D K)`` per iteration over the ``D`` distinct scores.
    It does not depend on a starting point and is deterministic.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        True classes (grades).
    scores : array_like of shape (n,)
        Continuous predictions, finite (NaN raises ``ValueError``).  Only
        their order matters for which rows share a class.
    n_classes : int, optional
        Classes are ``0..n_classes-1``.
    labels : array_like, optional
        The classes in scale order (strings need it).  Pass ``labels`` or
        ``n_classes``, not both; with neither, the classes are the sorted
        distinct values of ``y_true``.  Declare the full scale when a grade
        may be missing from ``y_true``: weights use the class index.
    weights : None, 'linear', 'quadratic' or array_like of shape (K, K)
        Disagreement weights (see :func:`fastkappa.weight_matrix`); the
        default maximises QWK.
    sample_weight : array_like of shape (n,), optional
        Non-negative weight of each row (counts of identical rows belong in
        ``frequency_weight``).
    frequency_weight : array_like of shape (n,), optional
        Whole-number count of each row: a row with count c is c identical
        rows (expanded, so the cut points are those of the expanded rows).
        Not with ``sample_weight``.

    Returns
    -------
    Thresholds of shape (K - 1,)
        Strictly increasing float64 cut points (an ndarray subclass); class
        index = number of cut points ``<= score``.  Its ``labels`` attribute
        holds the ``K`` classes in index order, so
        ``apply_thresholds(scores, cuts)`` returns classes of ``y_true``
        (grades ``1..5`` stay ``1..5``), not 0-based indices.

    Notes
    -----
    - Each cut point sits midway between the two adjacent distinct scores it
      separates.  Rows with equal scores always get the same class.
    - A class may end up empty (no score maps to it) when that gives a
      higher kappa, e.g. a grade absent from ``y_true``.  Cut points stay
      strictly increasing: several cut points in one gap are spread evenly
      inside it; below the lowest (above the highest) score they are spread
      over one mean gap beyond it (a single one sits half a mean gap away).
    - Constant scores carry no information: every row gets the class that
      holds the (weighted) median of ``y_true`` and kappa is 0.
    - ``y_true`` must hold at least two classes with positive weight;
      otherwise kappa is 0 or undefined for every choice and a
      ``ValueError`` says so.
    - Tuning cut points on the rows you score is optimistic; see
      :class:`ThresholdOptimizer` with ``cv=`` for an out-of-fold estimate.

    References
    ----------
    .. [1] Dinkelbach, W. (1967). On nonlinear fractional programming. Management
       Science, 13(7), 492-498. https://doi.org/10.1287/mnsc.13.7.492

    Examples
    --------
    >>> import numpy as np
    >>> import fastkappa as fk
    >>> y = np.array([0, 0, 1, 1, 2, 2])
    >>> s = np.array([0.1, 0.4, 0.5, 1.2, 1.3, 2.0])
    >>> cuts = fk.optimize_thresholds(y, s)
    >>> cuts
    Thresholds([0.45, 1.25], labels=[0, 1, 2])
    >>> fk.quadratic_weighted_kappa(y, fk.apply_thresholds(s, cuts))
    1.0

    Grades that do not start at 0 come back as themselves:

    >>> cuts = fk.optimize_thresholds(y + 1, s)
    >>> fk.apply_thresholds([0.3, 0.9, 1.6], cuts)
    array([1, 2, 3])
    """
    y_true, scores, _ = _expand_counted(y_true, scores, sample_weight, frequency_weight)
    prob = _problem_iv(y_true, scores, labels=labels, n_classes=n_classes, weights=weights,
                       sample_weight=sample_weight)
    return Thresholds(_solve(_prepare(prob, need_perm=False), prob).thresholds, prob.classes)


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
        Finite, strictly increasing cut points.  The :class:`Thresholds`
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
    th = _thresholds_iv(thresholds)
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
    return lab[idx]


def _labels_array(labels) -> np.ndarray:
    if hasattr(labels, "to_numpy"):
        labels = labels.to_numpy()
    lab = np.asarray(labels)
    if lab.ndim != 1:
        raise ValueError("`labels` must be a 1-D list of class labels.")
    return lab


def continuous_qwk(
    y_true: ArrayLike,
    scores: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    replace_undefined_by: float = np.nan,
    frequency_weight: ArrayLike | None = None,
) -> float:
    """QWK on unrounded scores (Lin's concordance correlation coefficient).

    ``2 cov(t, s) / (var(t) + var(s) + (mean(t) - mean(s)) ** 2)`` with
    population (weighted) moments.  Quadratic-weighted kappa of integer
    grades on consecutive classes equals this value, so essay-scoring work
    reports it beside the thresholded QWK.  The values of ``y_true`` are used
    as numbers, not as class indices.

    Parameters
    ----------
    y_true, scores : array_like of shape (n,)
        Finite numbers (NaN raises ``ValueError``).
    sample_weight : array_like of shape (n,), optional
        Non-negative weight of each row (counts of identical rows belong in
        ``frequency_weight``).
    replace_undefined_by : float, default nan
        Returned, with an :class:`UndefinedKappaWarning`, when the
        denominator is zero (both sides constant and equal).
    frequency_weight : array_like of shape (n,), optional
        Whole-number count of each row (a row with count c is c identical
        rows); the value is that of the expanded rows. Not with
        ``sample_weight``.

    Returns
    -------
    float

    References
    ----------
    .. [1] Lin, L. I.-K. (1989). A concordance correlation coefficient to evaluate
       reproducibility. Biometrics, 45(1), 255-268.
       https://doi.org/10.2307/2532051

    Examples
    --------
    >>> import fastkappa as fk
    >>> round(fk.continuous_qwk([1, 2, 3, 4], [1.2, 1.9, 3.3, 3.6]), 6)
    0.966292
    """
    y_true, scores, _ = _expand_counted(y_true, scores, sample_weight, frequency_weight)
    y_true, scores, sample_weight = flatten_labels(
        y_true, scores, names=("y_true", "scores"), sample_weight=sample_weight)
    t = _numeric_iv(y_true, "y_true", "numbers")
    s = _numeric_iv(scores, "scores", "continuous scores")
    if len(t) != len(s):
        raise ValueError(
            f"`y_true` and `scores` must have the same length; got {len(t)} and {len(s)}.")
    if len(t) == 0:
        raise ValueError("`y_true` and `scores` are empty; kappa needs at least one row.")
    sw = check_sample_weight(sample_weight, len(t))
    # the coefficient is unchanged when both sides are scaled by one factor: an
    # exact power-of-two rescale keeps squares of values near 1e200 (or 1e-200)
    # inside the float64 range
    top = max(float(np.abs(t).max()), float(np.abs(s).max()))
    if top > 0:
        shift = -int(np.frexp(top)[1])
        t, s = np.ldexp(t, shift), np.ldexp(s, shift)
    if sw is None:
        mt, ms = t.mean(), s.mean()
        dt, ds = t - mt, s - ms
        vt, vs, cov = np.mean(dt * dt), np.mean(ds * ds), np.mean(dt * ds)
    else:
        total = sw.sum()
        mt, ms = (sw @ t) / total, (sw @ s) / total
        dt, ds = t - mt, s - ms
        vt, vs, cov = (sw @ (dt * dt)) / total, (sw @ (ds * ds)) / total, (
            sw @ (dt * ds)) / total
    denom = vt + vs + (mt - ms) ** 2
    if not denom > 0:
        warnings.warn(
            "continuous QWK is undefined: `y_true` and `scores` are constant and equal "
            f"(zero denominator); returning replace_undefined_by={replace_undefined_by!r}.",
            UndefinedKappaWarning, stacklevel=2)
        return replace_undefined_by
    return float(2.0 * cov / denom)


# --------------------------------------------------------------------------- estimator


def _check_cv(cv):
    if cv is None or (hasattr(cv, "split") and not isinstance(cv, (str, bytes))):
        return cv
    if isinstance(cv, bool) or not isinstance(cv, (int, np.integer)) or cv < 2:
        raise ValueError(
            "`cv` must be None, an integer number of folds >= 2 or a splitter with a "
            f"split() method (e.g. sklearn.model_selection.StratifiedKFold); got {cv!r}.")
    return int(cv)


def _stratified_folds(t: np.ndarray, n_classes: int, n_folds: int, seed) -> np.ndarray:
    """Fold of each row: every class split into ``n_folds`` near-equal parts.

    Without a seed the rows of each class are taken in input order
    (contiguous blocks, like ``StratifiedKFold(shuffle=False)``); with one
    they are shuffled first.
    """
    rng = None if seed is None else np.random.default_rng(resolve_seed(seed))
    fold = np.empty(len(t), dtype=np.int64)
    order = np.argsort(t, kind="stable")
    counts = np.bincount(t, minlength=n_classes)
    start = 0
    for c in range(n_classes):
        rows = order[start:start + counts[c]]
        start += counts[c]
        if rng is not None:
            rows = rng.permutation(rows)
        m = len(rows)
        fold[rows] = (np.arange(m) * n_folds) // max(m, 1)
    return fold


def _grouped_folds(t: np.ndarray, group: np.ndarray, n_classes: int, n_folds: int,
                   seed) -> np.ndarray:
    """Fold of each row with every group whole in one fold, classes kept balanced.

    Groups are placed largest first (ties in order of first appearance, or
    shuffled with a seed); each goes to the fold where, after adding it,
    the per-class shares of all rows placed so far stay most even: the fold
    minimising ``sum_c ((count[f, c] + g_c) / total_c)^2``, ties to the fold
    with fewer rows, then the lower index (as scikit-learn's
    ``StratifiedGroupKFold`` does, without its randomness).
    """
    n_groups = int(group.max()) + 1
    counts = np.zeros((n_groups, n_classes), dtype=np.int64)
    np.add.at(counts, (group, t), 1)
    sizes = counts.sum(axis=1)
    order = np.arange(n_groups)
    if seed is not None:
        order = np.random.default_rng(seed).permutation(n_groups)
    order = order[np.argsort(-sizes[order], kind="stable")]
    totals = np.maximum(counts.sum(axis=0), 1).astype(np.float64)
    placed = np.zeros((n_folds, n_classes), dtype=np.float64)
    group_fold = np.empty(n_groups, dtype=np.int64)
    for g in order:
        cost = (((placed + counts[g]) / totals) ** 2).sum(axis=1)
        f = int(np.lexsort((np.arange(n_folds), placed.sum(axis=1), cost))[0])
        placed[f] += counts[g]
        group_fold[g] = f
    return group_fold[group]


def _groups_iv(groups, n: int) -> np.ndarray:
    """Group code (0..G-1, in order of first appearance) of each row."""
    col = as_column(groups, "groups")
    if isinstance(col, MatrixColumn):
        raise ValueError(f"`groups` must be 1-D (one group per row); got shape "
                         f"{col.values.shape}.")
    if isinstance(col, CodesColumn):
        codes = np.asarray(col.codes, dtype=np.int64)
        if (codes < 0).any():
            raise ValueError(f"`groups` holds missing values (NaN/None) in "
                             f"{int((codes < 0).sum())} rows; every row needs a group.")
        values = codes
    else:
        values = np.asarray(col.values)
        if values.dtype.kind == "f" and np.isnan(values).any():
            raise ValueError(f"`groups` holds NaN in {int(np.isnan(values).sum())} rows; "
                             "every row needs a group.")
    if len(values) != n:
        raise ValueError(f"`groups` must have one value per row: {n} rows, got "
                         f"{len(values)} groups.")
    _, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse.ravel()]


def _splitter_folds(cv, t: np.ndarray, groups: np.ndarray | None = None
                    ) -> tuple[np.ndarray, int]:
    n = len(t)
    fold = np.full(n, -1, dtype=np.int64)
    n_folds = 0
    split = (cv.split(np.zeros((n, 1)), t) if groups is None
             else cv.split(np.zeros((n, 1)), t, groups))
    for f, (_, test) in enumerate(split):
        test = np.asarray(test)
        if np.any(fold[test] >= 0):
            raise ValueError(
                "the `cv` splitter puts a row in more than one test fold; out-of-fold "
                "predictions need test folds that cover every row exactly once "
                "(KFold-like splitters).")
        fold[test] = f
        n_folds = f + 1
    if np.any(fold < 0):
        raise ValueError(
            "the `cv` splitter leaves rows out of every test fold; out-of-fold "
            "predictions need test folds that cover every row exactly once "
            "(KFold-like splitters).")
    if groups is not None:
        per_group = np.zeros(int(groups.max()) + 1, dtype=np.int64)
        np.maximum.at(per_group, groups, fold)
        low = np.full_like(per_group, n_folds)
        np.minimum.at(low, groups, fold)
        split_groups = int(np.count_nonzero(per_group != low))
        if split_groups:
            raise ValueError(
                f"the `cv` splitter puts {split_groups} group(s) of `groups` in more than "
                "one test fold; pass cv=k (fastkappa keeps groups whole) or a group-aware "
                "splitter such as sklearn.model_selection.GroupKFold.")
    return fold, n_folds


def _is_quadratic(weights) -> bool:
    return isinstance(weights, str) and weights == "quadratic"


def _kappa_of(t: np.ndarray, p: np.ndarray, w: np.ndarray, sw: np.ndarray | None) -> float:
    k = w.shape[0]
    flat = np.bincount(t.astype(np.int64) * k + p, weights=sw, minlength=k * k)
    terms = _weights.kappa_terms(flat.reshape(k, k), w)
    return _weights.finish_kappa(*terms, stacklevel=4)


class ThresholdOptimizer:
    """Tune cut points for kappa, scikit-learn style (Kaggle's OptimizedRounder).

    ``fit`` finds the exact optimum with :func:`optimize_thresholds`;
    ``transform`` turns scores into class labels.

    Parameters
    ----------
    n_classes : int, optional
        Classes are ``0..n_classes-1``.
    labels : array_like, optional
        The classes in scale order.  With neither, the sorted distinct
        values of ``y_true`` passed to ``fit``.
    weights : None, 'linear', 'quadratic' or array_like of shape (K, K)
        Disagreement weights; the default tunes QWK.
    cv : None, int or splitter, optional
        Tuning cut points on the rows you score is optimistic (they are
        fitted to those rows' noise).  With ``cv=k`` the rows are split into
        ``k`` folds stratified by ``y_true``; for each fold the cut points
        are tuned on the other ``k - 1`` folds and applied to the held-out
        one, and ``cv_qwk_`` is the kappa of the pooled out-of-fold
        predictions: an honest estimate of the kappa to expect on new data.
        A scikit-learn splitter whose test folds partition the rows (e.g.
        ``KFold``) may be passed instead.  ``thresholds_`` are always tuned
        on all rows.
    seed : int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Shuffles the rows of each class before they are split into folds.
        Without a seed the folds take each class's rows in input order
        (contiguous blocks), so the split is deterministic either way.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        Class labels in index order.
    thresholds_ : Thresholds of shape (K - 1,)
        Optimal cut points on all rows; they know ``classes_``, so
        ``apply_thresholds(scores, opt.thresholds_)`` equals
        ``opt.transform(scores)``.
    qwk_ : float
        Kappa (with the chosen ``weights``; QWK by default) of the fitted
        cut points on the rows they were fitted to (in-sample, optimistic).
    cv_qwk_ : float or None
        Kappa of the pooled out-of-fold predictions (None without ``cv``).
    cv_thresholds_ : ndarray of shape (n_folds, K - 1) or None
        Cut points tuned in each fold.
    oof_predictions_ : ndarray of shape (n,) or None
        Out-of-fold class labels, in input order (None without ``cv``).
    cv_folds_ : ndarray of shape (n,) or None
        Test fold of each row (None without ``cv``).
    cv_groups_ : bool
        Whether the folds kept the ``groups`` passed to ``fit`` whole.
    curve_ : dict of ndarrays
        Data for a kappa-versus-threshold plot, in long format (``pandas.
        DataFrame(curve_)`` works): ``"cut"`` (int, the cut point ``c``
        between class ``c`` and ``c + 1``), ``"threshold"`` (a position of
        that cut point) and ``"kappa"`` (kappa with that cut point at that
        position and every other one at its optimum).  Each cut point is
        evaluated at 256 evenly spaced positions between its neighbours (the
        lowest/highest score for the outer ones), plus its optimum, in
        increasing order.
    n_iter_ : int
        Dinkelbach steps (dynamic programmes) of the final fit.

    References
    ----------
    .. [1] Dinkelbach, W. (1967). On nonlinear fractional programming. Management
       Science, 13(7), 492-498. https://doi.org/10.1287/mnsc.13.7.492

    Examples
    --------
    >>> import numpy as np
    >>> import fastkappa as fk
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 5, 2000)
    >>> s = y + rng.normal(0, 0.7, 2000)
    >>> opt = fk.ThresholdOptimizer(cv=5, seed=0).fit(y, s)
    >>> opt.thresholds_.shape
    (4,)
    >>> bool(opt.qwk_ >= opt.cv_qwk_)
    True
    >>> opt.transform([0.1, 2.2, 9.0])
    array([0, 2, 4])
    """

    def __init__(self, *, n_classes: int | None = None, labels: ArrayLike | None = None,
                 weights: str | ArrayLike | None = "quadratic", cv: Any = None,
                 seed: Any = None) -> None:
        self.n_classes = n_classes
        self.labels = labels
        self.weights = weights
        self.cv = cv
        self.seed = seed

    # scikit-learn's estimator protocol (clone, GridSearchCV), without importing it
    def get_params(self, deep: bool = True) -> dict:
        return {"n_classes": self.n_classes, "labels": self.labels, "weights": self.weights,
                "cv": self.cv, "seed": self.seed}

    def set_params(self, **params) -> ThresholdOptimizer:
        valid = self.get_params()
        for key, value in params.items():
            if key not in valid:
                raise ValueError(
                    f"invalid parameter {key!r} for ThresholdOptimizer; valid parameters "
                    f"are {sorted(valid)}.")
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        defaults = {"n_classes": None, "labels": None, "weights": "quadratic", "cv": None,
                    "seed": None}
        shown = [f"{k}={v!r}" for k, v in self.get_params().items()
                 if not (v is defaults[k] or (isinstance(v, str) and v == defaults[k]))]
        head = f"ThresholdOptimizer({', '.join(shown)})"
        if not hasattr(self, "thresholds_"):
            return head
        # fitted: the cut points and the scores, as a reader of a notebook wants them
        what = "QWK" if _is_quadratic(self.weights) else "kappa"
        cuts = ", ".join(f"{v:.4g}" for v in np.asarray(self.thresholds_))
        lines = [head,
                 f"  thresholds_ = [{cuts}] between classes {self.classes_.tolist()!r}",
                 f"  qwk_ = {self.qwk_:.4f} (in-sample {what})"]
        if self.cv_qwk_ is not None:
            folds = len(self.cv_thresholds_)
            lines.append(f"  cv_qwk_ = {self.cv_qwk_:.4f} (out-of-fold {what}, {folds} folds"
                         + (", groups kept whole" if self.cv_groups_ else "") + ")")
        return "\n".join(lines)

    def fit(self, y_true: ArrayLike, scores: ArrayLike, *,
            sample_weight: ArrayLike | None = None,
            groups: ArrayLike | None = None,
            frequency_weight: ArrayLike | None = None) -> ThresholdOptimizer:
        """Tune the cut points on ``(y_true, scores)``; returns ``self``.

        Parameters
        ----------
        y_true : array_like of shape (n,)
            True classes.
        scores : array_like of shape (n,)
            Finite continuous predictions.
        sample_weight : array_like of shape (n,), optional
            Non-negative weight of each row (counts of identical rows belong
            in ``frequency_weight``).
        groups : array_like of shape (n,), optional
            Group of each row (patient, essay prompt, user...) for the
            cross-validation: every group lies in one fold, so rows of one
            patient never tune the cut points applied to another of its rows
            (grouped cross-validation; needs ``cv``).  With ``cv=k`` whole
            groups are spread over the folds keeping the classes balanced
            (largest groups first); a splitter gets ``groups`` in its
            ``split(X, y, groups)`` and must keep every group in one test fold.
        frequency_weight : array_like of shape (n,), optional
            Whole-number count of each row: a row with count c is c identical
            rows (of its group). The rows are expanded, so the fit, folds
            included, is that of the expanded rows. Not with ``sample_weight``.

        Examples
        --------
        >>> import numpy as np
        >>> import fastkappa as fk
        >>> rng = np.random.default_rng(0)
        >>> patient = np.repeat(np.arange(500), 2)            # two eyes per patient
        >>> y = np.repeat(rng.integers(0, 5, 500), 2)
        >>> s = y + rng.normal(0, 0.7, 1000)
        >>> opt = fk.ThresholdOptimizer(cv=5, seed=0).fit(y, s, groups=patient)
        >>> bool(np.all(opt.cv_folds_[0::2] == opt.cv_folds_[1::2]))  # eyes stay together
        True
        """
        cv = _check_cv(self.cv)
        y_true, scores, groups = _expand_counted(y_true, scores, sample_weight,
                                                 frequency_weight, groups)
        prob = _problem_iv(y_true, scores, labels=self.labels, n_classes=self.n_classes,
                           weights=self.weights, sample_weight=sample_weight)
        k = prob.n_classes
        n = len(prob.t)
        grp = None
        if groups is not None:
            if cv is None:
                raise ValueError(
                    "`groups` keeps each group in one cross-validation fold, so it needs "
                    "`cv`: use ThresholdOptimizer(cv=5) (or another number of folds).")
            grp = _groups_iv(groups, n)
        prep = _prepare(prob, need_perm=cv is not None)
        sol = _solve(prep, prob)
        self.classes_ = prob.classes
        self.thresholds_ = Thresholds(sol.thresholds, prob.classes)
        self.qwk_ = _weights.finish_kappa(sol.observed, sol.expected, stacklevel=3)
        self.n_iter_ = sol.n_iter
        self.curve_ = _curve(prep, prob, sol)
        self.cv_qwk_ = None
        self.cv_thresholds_ = None
        self.oof_predictions_ = None
        self.cv_folds_ = None
        self.cv_groups_ = grp is not None
        if cv is not None:
            if not isinstance(cv, int):
                fold, n_folds = _splitter_folds(cv, prob.t, grp)
            elif grp is not None:
                n_groups = int(grp.max()) + 1
                if cv > n_groups:
                    raise ValueError(f"`cv`={cv} folds need at least {cv} groups; `groups` "
                                     f"holds {n_groups}.")
                fold, n_folds = _grouped_folds(prob.t, grp, k, cv, self.seed), cv
            else:
                if cv > n:
                    raise ValueError(f"`cv`={cv} folds need at least {cv} rows; got {n}.")
                fold, n_folds = _stratified_folds(prob.t, k, cv, self.seed), cv
            fold_part = fold[prep.perm]
            oof = np.empty(n, dtype=np.intp)
            cuts = np.empty((n_folds, k - 1), dtype=np.float64)
            for f in range(n_folds):
                keep = (fold_part != f).view(np.uint8)
                fs = _solve(prep, prob, keep, where=f" (the training rows of fold {f})")
                cuts[f] = fs.thresholds
                test = fold == f
                oof[test] = np.searchsorted(fs.thresholds, prob.scores[test], side="right")
            self.cv_thresholds_ = cuts
            self.cv_qwk_ = _kappa_of(prob.t, oof, prob.w, prob.sw)
            self.oof_predictions_ = prob.classes[oof]
            self.cv_folds_ = fold
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "thresholds_"):
            raise ValueError("this ThresholdOptimizer is not fitted yet; call "
                             "fit(y_true, scores) first.")

    def transform(self, scores: ArrayLike) -> np.ndarray:
        """Class labels (``classes_``) of ``scores`` under the fitted cut points."""
        self._check_fitted()
        # classes_ named explicitly: thresholds_ may have been replaced by a plain array
        return apply_thresholds(scores, self.thresholds_, labels=self.classes_)

    predict = transform

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
              ) -> float:
        """Kappa of ``predict(X)`` against ``y`` (scikit-learn's ``score(X, y)``).

        As scikit-learn expects of ``score``, the inputs come first and the
        truth second: ``X`` holds the continuous scores (shape (n,) or
        (n, 1)), ``y`` the true classes.  (``fit`` keeps fastkappa's
        ``fit(y_true, scores)`` order.)  Higher is better; the weights are
        the optimizer's (QWK by default), on the classes ``classes_``.

        Parameters
        ----------
        X : array_like of shape (n,) or (n, 1)
            Continuous scores.
        y : array_like of shape (n,)
            True classes, among ``classes_``.
        sample_weight : array_like of shape (n,), optional
            Non-negative weight of each row.

        Returns
        -------
        float

        Examples
        --------
        >>> import fastkappa as fk
        >>> opt = fk.ThresholdOptimizer().fit([1, 1, 2, 2, 3, 3], [0.1, 0.2, 1.1, 1.3, 2.2, 2.4])
        >>> opt.score([0.0, 1.2, 2.9, 0.5], [1, 2, 3, 2])
        0.8
        """
        self._check_fitted()
        from .metrics import cohen_kappa

        pred = self.predict(X)
        try:
            return cohen_kappa(y, pred, weights=self.weights, labels=self.classes_,
                               sample_weight=sample_weight)
        except ValueError as e:
            if "outside the declared classes" not in str(e):
                raise
            raise ValueError(
                f"`y` holds classes this optimizer was not fitted on ({e}). Fit it with "
                "every class declared: ThresholdOptimizer(labels=[...]) or "
                "ThresholdOptimizer(n_classes=K).") from None

    def fit_transform(self, y_true: ArrayLike, scores: ArrayLike, *,
                      sample_weight: ArrayLike | None = None) -> np.ndarray:
        """``fit(y_true, scores)`` then ``transform(scores)`` (in-sample labels)."""
        return self.fit(y_true, scores, sample_weight=sample_weight).transform(scores)


def _curve(prep: _Prepared, prob: _Problem, sol: _Solution) -> dict:
    """Kappa as each cut point moves between its neighbours (see curve_)."""
    k = prob.n_classes
    cuts = sol.thresholds
    segs = [prep.s_part[prep.offsets[i]:prep.offsets[i + 1]] for i in range(k)]
    if len(prep.sw_part):
        cws = [np.concatenate(([0.0], np.cumsum(prep.sw_part[prep.offsets[i]:
                                                             prep.offsets[i + 1]])))
               for i in range(k)]
    else:
        cws = None
    smin = min(seg[0] for seg in segs if len(seg))
    smax = max(seg[-1] for seg in segs if len(seg))

    def below(x: np.ndarray) -> np.ndarray:
        """(K, m) weight of each y_true class with score < x."""
        out = np.empty((k, len(x)), dtype=np.float64)
        for i, seg in enumerate(segs):
            p = np.searchsorted(seg, x, side="left")
            out[i] = p if cws is None else cws[i][p]
        return out

    cut_col, x_col, kappa_col = [], [], []
    for c in range(k - 1):
        lower = cuts[c - 1] if c > 0 else smin
        upper = cuts[c + 1] if c < k - 2 else smax
        lower, upper = min(lower, cuts[c]), max(upper, cuts[c])
        x = np.unique(np.concatenate((np.linspace(lower, upper, CURVE_POINTS), [cuts[c]])))
        delta = below(x) - below(np.array([cuts[c]]))
        a = sol.observed + (prob.w[:, c] - prob.w[:, c + 1]) @ delta
        b = sol.expected + (sol.v[c] - sol.v[c + 1]) * delta.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            kap = np.where(b > 0, 1.0 - a / np.where(b > 0, b, 1.0), np.nan)
        cut_col.append(np.full(len(x), c, dtype=np.intp))
        x_col.append(x)
        kappa_col.append(kap)
    if k < 2:
        return {"cut": np.empty(0, np.intp), "threshold": np.empty(0), "kappa": np.empty(0)}
    return {"cut": np.concatenate(cut_col), "threshold": np.concatenate(x_col),
            "kappa": np.concatenate(kappa_col)}
