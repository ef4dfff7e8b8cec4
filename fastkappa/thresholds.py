"""Exact threshold optimisation for QWK (and kappa with any weights).

Regression-style models output continuous scores; kappa needs classes.
:func:`optimize_thresholds` finds the increasing cut points that maximise
kappa between ``y_true`` and ``apply_thresholds(scores, cuts)``, exactly;
:class:`ThresholdOptimizer` wraps it scikit-learn style with out-of-fold
kappa; :func:`continuous_qwk` scores unrounded values.

Layout: this module holds the public functions; the cut-point type and
``apply_thresholds`` live in ``_threshold_cuts``, the search (input checks,
Dinkelbach over a dynamic programme, where cut points sit) in
``_threshold_search``, the estimator in ``_threshold_optimizer`` and its
cross-validation folds in ``_threshold_folds``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._core.caller import user_stacklevel
from ._core.options import (
    check_ignore_index,
    check_nan_policy,
    check_replace_undefined_by,
    check_sample_weight,
)
from ._core.shapes import flatten_labels
from ._threshold_cuts import Thresholds, _numeric_iv, apply_thresholds
from ._threshold_optimizer import ThresholdOptimizer
from ._threshold_search import _expand_counted, _kept_rows, _prepare, _problem_iv, _solve
from .exceptions import UndefinedKappaWarning

__all__ = [
    "ThresholdOptimizer",
    "Thresholds",
    "apply_thresholds",
    "continuous_qwk",
    "optimize_thresholds",
]


def optimize_thresholds(
    y_true: ArrayLike,
    scores: ArrayLike,
    *,
    n_classes: int | None = None,
    labels: ArrayLike | None = None,
    weights: str | ArrayLike | None = "quadratic",
    sample_weight: ArrayLike | None = None,
    frequency_weight: ArrayLike | None = None,
    ignore_index: Any = None,
    nan_policy: str = "raise",
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
        Continuous predictions: finite, or NaN/None for a missing score (see
        ``nan_policy``).  Only their order matters for which rows share a
        class.
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
    ignore_index : scalar, optional
        Rows whose ``y_true`` equals this value are dropped, as in
        :func:`fastkappa.cohen_kappa` (the value is no class).  Scores are
        numbers, not labels: a score equal to it is kept.
    nan_policy : {'raise', 'omit'}, default 'raise'
        Rows with a missing value (NaN/None) in ``y_true`` or in ``scores``:
        ``'raise'`` gives a ``ValueError`` that counts them, ``'omit'`` drops
        them before the search (:class:`ThresholdOptimizer` reports how many
        rows it dropped in ``n_dropped_``).  The result equals that of the
        search on the remaining rows.  ``'propagate'`` is not offered: cut
        points cannot be NaN.

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
    - Two distinct scores only a few floats apart leave room for only that
      many cut points between them (the floats in the gap), so the classes
      can step only that far there; the optimum is taken over the cut points
      that fit, and such cut points are the consecutive floats of the gap.
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

    Unlabelled rows (``-1``) and missing scores are dropped on request:

    >>> fk.optimize_thresholds([0, -1, 1, 2, 1], [0.2, 0.5, np.nan, 1.4, 0.7],
    ...                        ignore_index=-1, nan_policy="omit")
    Thresholds([0.45, 1.05], labels=[0, 1, 2])
    """
    y_true, scores, _ = _expand_counted(y_true, scores, sample_weight, frequency_weight)
    prob = _problem_iv(y_true, scores, labels=labels, n_classes=n_classes, weights=weights,
                       sample_weight=sample_weight, ignore_index=ignore_index,
                       nan_policy=nan_policy)
    return Thresholds(_solve(_prepare(prob, need_perm=False), prob).thresholds, prob.classes)


def continuous_qwk(
    y_true: ArrayLike,
    scores: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    replace_undefined_by: float = np.nan,
    frequency_weight: ArrayLike | None = None,
    ignore_index: Any = None,
    nan_policy: str = "raise",
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
        Finite numbers, or NaN/None for a missing value (see ``nan_policy``).
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
    ignore_index : scalar, optional
        Rows whose ``y_true`` equals this value (e.g. -1 for "not graded")
        are dropped, as in :func:`fastkappa.cohen_kappa`.
    nan_policy : {'raise', 'omit'}, default 'raise'
        Rows with a missing value in ``y_true`` or ``scores``: a
        ``ValueError`` that counts them, or ``'omit'`` to drop them.

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
    replace_undefined_by = check_replace_undefined_by(replace_undefined_by)
    y_true, scores, _ = _expand_counted(y_true, scores, sample_weight, frequency_weight)
    y_true, scores, sample_weight = flatten_labels(
        y_true, scores, names=("y_true", "scores"), sample_weight=sample_weight)
    check_nan_policy(nan_policy)
    ignore_index = check_ignore_index(ignore_index)
    t = _numeric_iv(y_true, "y_true", "numbers", keep_nan=True)
    s = _numeric_iv(scores, "scores", "continuous scores", keep_nan=True)
    if len(t) != len(s):
        raise ValueError(
            f"`y_true` and `scores` must have the same length; got {len(t)} and {len(s)}.")
    if len(t) == 0:
        raise ValueError("`y_true` and `scores` are empty; kappa needs at least one row.")
    sw = check_sample_weight(sample_weight, len(t))
    rows = _kept_rows(np.isnan(t), s, nan_policy)
    if ignore_index is not None:
        labelled = t != ignore_index
        rows = np.flatnonzero(labelled) if rows is None else rows[labelled[rows]]
        if len(rows) == 0:
            raise ValueError("no rows left to score: every row is missing or equals "
                             "`ignore_index`.")
    if rows is not None:
        t, s, sw = t[rows], s[rows], None if sw is None else sw[rows]
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
            UndefinedKappaWarning, stacklevel=user_stacklevel())
        return replace_undefined_by
    return float(2.0 * cov / denom)
