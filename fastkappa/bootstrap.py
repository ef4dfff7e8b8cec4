"""``kappa_ci`` and ``kappa_ci_from_confusion``: kappa with a confidence interval.

Each reads as check options -> encode -> count -> resampling units -> result:
the units and their draws live in :mod:`fastkappa._core.units`, the bounds and
the :class:`KappaCI` in :mod:`fastkappa._core.intervals`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import _asymptotic
from ._core import weights as _weights
from ._core.columns import materialize
from ._core.config import DENSE_CELLS_MAX
from ._core.encode import encode_pair
from ._core.intervals import _kappa_ci_iv, kappa_interval, undefined_interval, with_provenance
from ._core.options import check_nan_policy
from ._core.rows import frequency_rows, omit_missing_ids
from ._core.shapes import flatten_labels
from ._core.units import (
    Units,
    _single_model_cells,
    bootstrap_kappas,
    bootstrap_kappas_rows,
    encode_clusters,
    full_kappas,
    jackknife_kappas,
    row_cells,
    units_from_clusters,
    units_from_counts,
    units_from_rows,
    use_row_tables,
)
from .results import KappaCI

__all__ = ["kappa_ci", "kappa_ci_from_confusion"]


# --------------------------------------------------------------------------- core


def model_variances(units: Units, wmat: np.ndarray, m: int = 0
                    ) -> tuple[_asymptotic.CellInfluence, float, float]:
    """Influence functions, variance and null variance of model ``m``'s kappa.

    FCE for iid counts; the weighted / cluster-robust forms otherwise.
    """
    info = _asymptotic.cell_influence(units.table(m), wmat)
    if units.kind == "cells":
        var, var0 = _asymptotic._fce_from_info(info, info.n)
    else:
        var, var0 = _asymptotic.robust_variances(
            info, units.cell_t, units.cell_p[:, m], units.type_counts, units.type_ptr,
            units.type_cell, units.type_val, units.n_rows)
    return info, var, var0


def _standard_errors(units: Units, wmat: np.ndarray) -> tuple[float, float]:
    """FCE SE and null SE (iid counts), or their weighted / cluster-robust forms."""
    _, var, var0 = model_variances(units, wmat)
    return math.sqrt(max(var, 0.0)), math.sqrt(max(var0, 0.0))


def _ci_from_units(units: Units, wmat: np.ndarray, method: str, cl: float, n_resamples: int,
                   seq: np.random.SeedSequence, rows=None) -> KappaCI:
    """The interval from resampling units; ``rows`` = ``(row_cells, row_w, k)``
    draws rows straight into the table instead (weighted rows, a type per row)."""
    est_arr, joint = full_kappas(units, wmat)
    estimate = float(est_arr[0])
    if not math.isfinite(estimate):
        return undefined_interval(method, cl)
    se, se0 = _standard_errors(units, wmat)
    if method == "asymptotic":
        return kappa_interval(estimate, method, cl, standard_error=se,
                              standard_error_null=se0)
    if rows is not None:
        reps = bootstrap_kappas_rows(*rows, wmat, n_resamples, seq)[:, 0]
    else:
        reps = bootstrap_kappas(units, wmat, n_resamples, seq)[:, 0]
    jack = None
    if method == "bca":
        jack = jackknife_kappas(units, wmat, joint)[:, 0]
    return kappa_interval(estimate, method, cl, standard_error_null=se0, replicates=reps,
                          jackknife=jack, jackknife_counts=units.type_counts)


# --------------------------------------------------------------------------- public


def kappa_ci(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    weights: str | ArrayLike | None = None,
    method: str = "bca",
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | np.random.SeedSequence | np.random.Generator | None = None,
    clusters: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_classes: int | None = None,
    sample_weight: ArrayLike | None = None,
    ignore_index: Any = None,
    nan_policy: str = "raise",
    thresholds: ArrayLike | None = None,
    frequency_weight: ArrayLike | None = None,
) -> KappaCI:
    """Cohen's kappa with a confidence interval, a standard error and a p-value.

    Parameters
    ----------
    y_true, y_pred : array_like of shape (n,)
        Labels of the two raters (lists, NumPy, pandas, polars, pyarrow,
        torch...). ``y_pred`` may also be (n, K) probabilities or logits, or
        1-D scores with ``thresholds``. (N, ...) labels are flattened and
        (N, C, ...) scores argmaxed over axis 1 (torchmetrics' shapes);
        ``sample_weight`` and ``clusters`` are then (N,) or of the label shape.
    weights : None, 'linear', 'quadratic' or array_like of shape (K, K)
        Disagreement weights by class index (see :func:`cohen_kappa`).
    method : {'bca', 'percentile', 'basic', 'asymptotic'}, default 'bca'
        ``'bca'``: bias-corrected and accelerated bootstrap (acceleration
        from the jackknife). ``'percentile'`` and ``'basic'``: the plain
        bootstrap intervals. ``'asymptotic'``: ``estimate ± z * SE`` with the
        Fleiss–Cohen–Everitt large-sample SE (the ASE of SAS PROC FREQ).
    confidence_level : float, default 0.95
        Strictly between 0 and 1.
    n_resamples : int, default 10_000
        Bootstrap replicates (ignored by ``'asymptotic'``).
    seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        The same int or SeedSequence gives the same interval whatever the
        number of threads.
    clusters : array_like of shape (n,), optional
        Cluster id of each row (e.g. patient id when both eyes are graded).
        Whole clusters are resampled and jackknifed, and the standard errors
        are cluster-robust.
    labels : array_like, optional
        The classes in scale order (fixed for every replicate).
    n_classes : int, optional
        Classes are ``0..n_classes-1``.
    sample_weight : array_like of shape (n,), optional
        Non-negative row weights. The bootstrap resamples rows uniformly and
        each drawn row carries its weight (equal weights use the fast
        multinomial path; many distinct weights cost O(n) per replicate).
        The asymptotic SEs use the weighted influence function. Each row
        stays one sampled unit: counts of identical rows belong in
        ``frequency_weight``, and a row of weight 0 is still drawn (adding
        nothing), so its presence changes a bootstrap interval slightly
        where dropping it would not; drop such rows first to leave them out.
    ignore_index : scalar, optional
        Rows where either side equals this value are dropped; not one of
        the declared classes (a ``ValueError``).
    nan_policy : {'raise', 'omit'}, default 'raise'
        What to do with rows holding NaN/None on either side.
    thresholds : array_like, optional
        Increasing cut points that turn 1-D continuous ``y_pred`` scores into
        classes.
    frequency_weight : array_like of shape (n,), optional
        Whole-number count of each row (SAS ``WEIGHT``, Stata ``fweight``): a
        row with count c is c identical iid rows (with ``clusters``, c rows
        of its cluster). Every method then gives exactly the interval of the
        expanded rows, the bootstrap the same numbers for the same seed. Not
        together with ``sample_weight``.

    Returns
    -------
    KappaCI
        ``estimate``, ``low``, ``high``, ``standard_error`` (SD of the
        replicates, or the FCE SE for ``'asymptotic'``), ``method`` (the one
        used), ``confidence_level``, ``n_resamples``, ``distribution`` (the
        defined replicates), ``n_undefined``, and for every method
        ``standard_error_null`` (FCE SE under H0: kappa = 0), ``z =
        estimate / standard_error_null`` and the two-sided ``p_value``.

    Warns
    -----
    DegenerateIntervalWarning
        The bootstrap distribution is constant (perfect agreement): the
        interval is ``[estimate, estimate]``; some replicates are undefined
        (excluded, counted in ``n_undefined``); the BCa correction is not
        defined (falls back to the percentile interval and reports
        ``method='percentile'``); the asymptotic SE is zero.
    UndefinedKappaWarning
        Kappa itself is undefined: every field is nan.

    Notes
    -----
    * iid rows: after one counting pass, a replicate is a multinomial draw
      of the K x K table (K*K binomials), exactly the distribution of a
      table rebuilt from N resampled rows; memory is O(K^2 + n_resamples).
    * Classes are fixed from the full data for every replicate: a replicate
      that misses a class is still scored on the full scale.
    * BCa acceleration comes from the exact leave-one-row-out jackknife
      (leave one cluster out with ``clusters``), grouped by cell.
    * Bounds are clipped to [-1, 1].
    * Cluster-robust variance: ``sum_c (sum_{r in c} w_r IF_r)^2 /
      (sum_r w_r)^2`` with the FCE influence function ``IF``; the null SE is
      the FCE null SE times the design effect of the null influence
      function.

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales.
       Educational and Psychological Measurement, 20(1), 37-46.
       https://doi.org/10.1177/001316446002000104
    .. [2] Cohen, J. (1968). Weighted kappa: Nominal scale agreement provision for
       scaled disagreement or partial credit. Psychological Bulletin, 70(4),
       213-220. https://doi.org/10.1037/h0026256
    .. [3] Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969). Large sample standard
       errors of kappa and weighted kappa. Psychological Bulletin, 72(5),
       323-327. https://doi.org/10.1037/h0028106
    .. [4] Efron, B. (1987). Better bootstrap confidence intervals. Journal of the
       American Statistical Association, 82(397), 171-185.
       https://doi.org/10.1080/01621459.1987.10478410
    .. [5] Davison, A. C., & Hinkley, D. V. (1997). Bootstrap Methods and their
       Application. Cambridge University Press.
       https://doi.org/10.1017/CBO9780511802843
    .. [6] Field, C. A., & Welsh, A. H. (2007). Bootstrapping clustered data.
       Journal of the Royal Statistical Society: Series B (Statistical
       Methodology), 69(3), 369-390.
       https://doi.org/10.1111/j.1467-9868.2007.00593.x

    Examples
    --------
    >>> import fastkappa as fk
    >>> y_true = [0, 1, 2, 2, 1, 0, 2, 1, 0, 2] * 30
    >>> y_pred = [0, 1, 2, 1, 1, 0, 2, 2, 0, 2] * 30
    >>> res = fk.kappa_ci(y_true, y_pred, method="asymptotic")
    >>> print(res)
    kappa = 0.70 (95% CI 0.63 to 0.77, asymptotic)
    >>> res = fk.kappa_ci(y_true, y_pred, weights="quadratic", seed=0)
    >>> res.method, res.n_resamples, res.low < res.estimate < res.high
    ('bca', 10000, True)
    """
    method, cl, n_resamples, seq = _kappa_ci_iv(method, confidence_level, n_resamples, seed)
    check_nan_policy(nan_policy)
    y_true, y_pred, sample_weight, clusters, frequency_weight = (
        materialize(v) for v in (y_true, y_pred, sample_weight, clusters, frequency_weight))
    y_true, y_pred, sample_weight, clusters, frequency_weight = flatten_labels(
        y_true, y_pred, sample_weight=sample_weight, clusters=clusters,
        frequency_weight=frequency_weight)
    clusters, rows = omit_missing_ids(clusters, "clusters", nan_policy, {
        "y_true": y_true, "y_pred": y_pred, "sample_weight": sample_weight,
        "frequency_weight": frequency_weight})
    fw, rows = frequency_rows(rows["frequency_weight"], rows["sample_weight"], {
        "y_true": rows["y_true"], "y_pred": rows["y_pred"], "clusters": clusters})
    y_true, y_pred, clusters = rows["y_true"], rows["y_pred"], rows["clusters"]
    sample_weight = None if fw is not None else sample_weight
    enc = encode_pair(y_true, y_pred, labels=labels, n_classes=n_classes,
                      sample_weight=sample_weight, frequency_weight=fw,
                      ignore_index=ignore_index,
                      nan_policy=nan_policy, thresholds=thresholds, weights=weights)
    # intervals are scale-free in the weights; their sums of products are not
    sw = enc.sample_weight = _weights.scale_free(enc.sample_weight)
    uniform = sw is None or float(sw.min()) == float(sw.max())
    if clusters is None and uniform:
        enc.counts()  # validates the data, and the classes are final afterwards
        units = units_from_counts(enc.counts())
        res = _ci_from_units(units, enc.weights, method, cl, n_resamples, seq)
        return with_provenance(res, seq, weights, units)
    keep = enc.keep()
    t_idx, p_idx, row_w = enc.indices()
    k = enc.n_classes
    cells = t_idx.astype(np.int64) * k + p_idx
    if k * k <= DENSE_CELLS_MAX:
        cell_t, cell_p = _single_model_cells(k)
    else:  # many classes: number only the occupied cells
        used, cells = np.unique(cells, return_inverse=True)
        cell_t, cell_p = used // k, (used % k)[:, None]
    if uniform:
        row_w = None
    if clusters is not None:
        codes, n_clusters = encode_clusters(clusters, enc.n_input, keep)
        if fw is not None:  # a row's c copies sit in its cluster's table
            counted = fw if keep is None else fw[keep]
            units = units_from_clusters(cells, counted.astype(np.float64), codes,
                                        n_clusters, cell_t, cell_p, k)
            units = dataclasses.replace(units, n_rows=int(counted.sum()))
        else:
            units = units_from_clusters(cells, row_w, codes, n_clusters, cell_t, cell_p, k,
                                        sample_weights=row_w is not None)
    else:
        units = units_from_rows(cells, row_w, cell_t, cell_p, k)
    rows = None
    if clusters is None and use_row_tables(units.n_types, len(t_idx), k, 1):
        # weights that differ on almost every row: a type per row, so draw rows
        # straight into the table (chunks of rows stay in cache), in the order of
        # (cell, weight), as the types are: the draws do not depend on the row order
        order = np.lexsort((row_w, cells))
        rows = (row_cells(t_idx[order], p_idx[None, order], k), row_w[order], k)
    res = _ci_from_units(units, enc.weights, method, cl, n_resamples, seq,
                         rows=rows)
    return with_provenance(res, seq, weights, units)


def kappa_ci_from_confusion(
    confusion: ArrayLike,
    *,
    weights: str | ArrayLike | None = None,
    method: str = "bca",
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | np.random.SeedSequence | np.random.Generator | None = None,
) -> KappaCI:
    """:func:`kappa_ci` from a (K, K) confusion matrix of iid rows.

    The table must hold counts (whole numbers): resampling its rows is a
    multinomial draw over its cells. A table of weighted sums, or clustered
    rows, cannot be resampled from the table alone; pass the rows to
    :func:`kappa_ci` instead.

    Parameters
    ----------
    confusion : array_like of shape (K, K)
        Counts; rows are ``y_true`` classes, columns ``y_pred`` classes.
    weights, method, confidence_level, n_resamples, seed
        As in :func:`kappa_ci`.

    Returns
    -------
    KappaCI

    References
    ----------
    .. [1] Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969). Large sample standard
       errors of kappa and weighted kappa. Psychological Bulletin, 72(5),
       323-327. https://doi.org/10.1037/h0028106
    .. [2] Efron, B. (1987). Better bootstrap confidence intervals. Journal of the
       American Statistical Association, 82(397), 171-185.
       https://doi.org/10.1080/01621459.1987.10478410
    .. [3] Davison, A. C., & Hinkley, D. V. (1997). Bootstrap Methods and their
       Application. Cambridge University Press.
       https://doi.org/10.1017/CBO9780511802843

    Examples
    --------
    >>> import fastkappa as fk
    >>> table = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]   # SAS PROC FREQ example
    >>> res = fk.kappa_ci_from_confusion(table, method="asymptotic")
    >>> round(res.estimate, 4), round(res.standard_error, 4), round(res.low, 4)
    (0.4842, 0.138, 0.2137)
    >>> round(res.standard_error_null, 4), round(res.z, 4), round(res.p_value, 4)
    (0.1484, 3.2626, 0.0011)
    """
    from .metrics import _check_confusion, total_count

    method, cl, n_resamples, seq = _kappa_ci_iv(method, confidence_level, n_resamples, seed)
    o = _check_confusion(confusion)
    if o.dtype.kind == "f" and not np.array_equal(o, np.round(o)):
        why = ("to be resampled" if method != "asymptotic" else
               "for the asymptotic variance, which counts rows")
        raise ValueError(
            f"`confusion` must hold counts (whole numbers) {why}; a table of weighted "
            "sums or proportions has no row count, so pass the rows and `sample_weight` "
            "to kappa_ci().")
    n = total_count(o)
    if n >= 2**63:
        raise ValueError(
            f"`confusion` counts sum to {int(n)} rows, at or beyond 2**63; an interval "
            "supports fewer rows in all (fastkappa.kappa_from_confusion() still gives the "
            "estimate).")
    counts = o.astype(np.int64)
    wmat = _weights.weight_matrix(counts.shape[0], weights)
    units = units_from_counts(counts)
    res = _ci_from_units(units, wmat, method, cl, n_resamples, seq)
    return with_provenance(res, seq, weights, units)
