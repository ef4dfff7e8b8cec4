"""Kappa per group (site, device, subgroup) in one pass over the data."""

from __future__ import annotations

import contextlib
import threading
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._asymptotic import fce_many
from ._core import weights as _weights
from ._core.caller import user_stacklevel
from ._core.columns import (
    CodesColumn,
    FloatColumn,
    IntColumn,
    MatrixColumn,
    as_column,
    materialize,
)
from ._core.config import (
    DIRECT_GROUPS_MAX,
    GROUP_PARTIALS_MAX,
    GROUP_TABLES_MAX_BYTES,
    GUESS_SAMPLE,
    LUT_RANGE_MAX,
)
from ._core.dispatch import chunked, counting_kernels, kernels, minmax, n_chunks_for, sum_partials
from ._core.encode import encode_pair
from ._core.encoding import int_lut as _int_lut
from ._core.encoding import is_plain_range as _is_plain_range
from ._core.intervals import _NORMAL, _kappa_ci_iv
from ._core.options import check_nan_policy, check_replace_undefined_by
from ._core.rows import expand_frequency, id_codes, omit_missing_ids, take_rows
from ._core.shapes import flatten_labels
from ._core.units import MIN_RELIABLE_CLUSTERS, resolve_seed, seed_record
from .bootstrap import kappa_ci, kappa_ci_from_confusion
from .exceptions import DegenerateIntervalWarning, UndefinedKappaWarning
from .results import GroupKappa, KappaByGroup

__all__ = ["GroupKappa", "KappaByGroup", "kappa_by_group"]





def _encode_groups(groups, n: int, guess: bool = False):
    """Group slots: ``(values, off, lut, keys, provisional, guessed)``; slot G is "missing".

    Boolean ids are counted as 0/1 and given back as ``False``/``True``.
    """
    out = _encode_group_column(as_column(groups, "groups"), n, guess)
    if _boolean_ids(groups):
        out = (*out[:3], out[3].astype(bool), *out[4:])
    return out


def _boolean_ids(ids) -> bool:
    """Whether ``ids`` are booleans (NumPy, pandas, pyarrow, polars, or a list)."""
    if isinstance(ids, list):
        return bool(ids) and all(isinstance(v, (bool, np.bool_)) or v is None for v in ids)
    dtype = getattr(ids, "dtype", None)
    if getattr(dtype, "kind", None) == "b" or str(dtype) == "Boolean":  # polars
        return True
    arrow_type = getattr(ids, "type", None)
    return str(arrow_type) == "bool"


def _encode_group_column(col, n: int, guess: bool):
    """:func:`_encode_groups` of the column ``col``.

    ``provisional``: the keys are a whole integer range, some of which may not
    occur; the caller drops groups without any row after counting.
    ``guessed`` (only with ``guess=True``): that range comes from a sample of
    the ids instead of a pass over all of them; any row outside it lands in
    slot G, which integer ids never reach otherwise, and the caller then
    encodes again with ``guess=False``.  Sorted ids are always right (the
    first and last rows are in the sample), and so are ids drawn from a range.
    """
    if isinstance(col, MatrixColumn):
        raise ValueError("`groups` must be 1-D: one group id per row.")
    length = len(col.codes) if isinstance(col, CodesColumn) else len(col.values)
    if length != n:
        raise ValueError(f"`groups` must have one id per row: got {length} ids for {n} rows.")
    if isinstance(col, IntColumn):
        counting = counting_kernels()
        v = col.values
        guessed = guess and n > GUESS_SAMPLE
        if guessed:
            sample = np.append(v[::n // GUESS_SAMPLE], v[-1])
            lo, hi = int(sample.min()), int(sample.max())
            guessed = hi - lo < min(DIRECT_GROUPS_MAX, n)
        if not guessed:
            lo, hi = minmax(v)
        if hi - lo < min(DIRECT_GROUPS_MAX, n):
            # one slot per value in lo..hi; groups that never occur are dropped after
            # counting (saves a histogram pass)
            keys = np.arange(lo, hi + 1, dtype=np.int64)
            g = len(keys)
            off, lut = _int_lut(lo, hi, np.arange(g, dtype=np.int32), g)
            return v, off, lut, keys, True, guessed
        if hi - lo < LUT_RANGE_MAX:
            present = counting._histogram(v, lo, hi - lo + 1) > 0
            keys = np.flatnonzero(present).astype(np.int64) + lo
            g = len(keys)
            slots = np.full(hi - lo + 1, g, dtype=np.int32)
            slots[keys - lo] = np.arange(g, dtype=np.int32)
            off, lut = _int_lut(lo, hi, slots, g)
            return v, off, lut, keys, False, False
        keys, inverse = np.unique(v, return_inverse=True)
        col = CodesColumn(inverse.astype(np.int64), keys, kind="num")
    if isinstance(col, FloatColumn):
        v = col.values
        nan = np.isnan(v)
        keys, inverse = np.unique(v[~nan], return_inverse=True)
        codes = np.full(n, -1, dtype=np.int64)
        codes[~nan] = inverse
        if keys.size and np.array_equal(keys, np.round(keys)) and np.abs(keys).max() < 2**53:
            keys = keys.astype(np.int64)
        col = CodesColumn(codes, keys, kind="num")
    cats = np.asarray(col.categories)
    codes = col.codes
    used = np.zeros(len(cats), dtype=bool)
    if len(cats):
        used[np.unique(codes[codes >= 0])] = True
    order = sorted(np.flatnonzero(used).tolist(), key=lambda j: cats[j])
    keys = cats[order] if len(order) else cats[:0]
    g = len(keys)
    slots = np.full(len(cats) + 1, g, dtype=np.int32)  # code -1 -> missing
    slots[np.asarray(order, dtype=np.int64) + 1] = np.arange(g, dtype=np.int32)
    off, lut = _int_lut(-1, len(cats) - 1, slots, g)
    return codes, off, lut, keys, False, False


def _compact_lut(lut: np.ndarray, occurs: np.ndarray) -> np.ndarray:
    """Renumber group slots after dropping the groups that never occur."""
    g_old = len(occurs)
    remap = np.full(g_old + 1, int(occurs.sum()), dtype=np.int32)
    remap[np.flatnonzero(occurs)] = np.arange(int(occurs.sum()), dtype=np.int32)
    return remap[lut]


def _group_kappas(tables: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each group's kappa, and its row count (or weight sum)."""
    o = tables.astype(np.float64)
    n_rows = o.sum(axis=(1, 2))
    # each table rescaled by an exact power of two (kappa is scale-free): weighted
    # tables near the float64 limits neither overflow nor underflow in n * r * c
    top = o.max(axis=(1, 2), initial=0.0)
    o = np.ldexp(o, np.where(top > 0, -np.frexp(top)[1], 0)[:, None, None])
    n = o.sum(axis=(1, 2))
    r = o.sum(axis=2)
    c = o.sum(axis=1)
    observed = n * np.einsum("gij,ij->g", o, w)
    expected = np.einsum("gi,ij,gj->g", r, w, c)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = np.where(expected > 0, 1.0 - observed / np.where(expected > 0, expected, 1.0),
                         np.nan)
    return kappa, n_rows


def _count_groups(enc, gv, goff, glut, g: int):
    """Per-group (G + 1, s, s) counts, and weighted sums (None without weights)."""
    n = enc.n_input
    s = enc.n_classes + 3
    t, p = enc.t, enc.p
    need = (g + 1) * s * s * 8 * (1 if enc.sample_weight is None else 2)
    if need > GROUP_TABLES_MAX_BYTES:  # checked before anything is allocated
        raise ValueError(
            f"{g} groups x {enc.n_classes} classes need one {enc.n_classes} x "
            f"{enc.n_classes} table per group, {need / 2**30:.1f} GiB in all (the limit is "
            f"{GROUP_TABLES_MAX_BYTES / 2**30:.0f} GiB); pass coarser `groups`, or score "
            "the groups in batches.")
    # every chunk zeroes and sums its own (G + 1) * s * s partials: few chunks when
    # that stack is large (integer counts, so the result never depends on it)
    n_chunks = min(n_chunks_for(n), max(1, GROUP_PARTIALS_MAX // ((g + 1) * s * s)))
    direct = all(_is_plain_range(lut) for lut in (glut, t.lut, p.lut))
    if enc.sample_weight is None:
        flat = chunked(kernels().group_confusion, n, gv, goff, glut, t.values, t.off,
                       t.lut, p.values, p.off, p.lut, s, direct, g, n_chunks=n_chunks)
        return sum_partials(flat, g + 1, s, s), None
    wflat, flat = chunked(kernels().group_confusion_weighted, n, gv, goff, glut,
                          t.values, t.off, t.lut, p.values, p.off, p.lut,
                          enc.sample_weight, s, direct, g, n_chunks=n_chunks)
    return sum_partials(flat, g + 1, s, s), sum_partials(wflat, g + 1, s, s)


def group_interval_iv(method, ci, confidence_level, n_resamples, seed):
    """Interval options of ``kappa_by_group`` (here and in ``fastkappa.dask``).

    ``ci`` is the deprecated alias of ``method`` (a FutureWarning). Returns
    ``(method, confidence_level, n_resamples, seed_sequence)``; without a
    method the seed is still checked (the one message for a bad seed) and
    the sequence is None: nothing is drawn.
    """
    if ci is not None:
        if method is not None:
            raise ValueError("pass `method` only (`ci` is its deprecated alias), not both.")
        warnings.warn("`ci` is deprecated and will be removed in fastkappa 0.3.0; pass "
                      "`method` instead (the same values).", FutureWarning,
                      stacklevel=user_stacklevel())
        method = ci
    if method is None:
        resolve_seed(seed)
        return None, confidence_level, n_resamples, None
    return _kappa_ci_iv(method, confidence_level, n_resamples, seed)


#: per thread: ``undefined = True`` leaves out the warning about undefined groups
#: (Dask partitions, whose groups are scored again on the client).  A thread-local
#: flag, not ``warnings.catch_warnings``, which is not thread-safe: partitions run
#: on several threads at once.
_quiet = threading.local()


@contextlib.contextmanager
def quiet_undefined():
    """Within the block, :func:`kappa_by_group` on this thread does not warn about
    undefined groups, nor an undefined kappa over all of them (a Dask partition
    scored on the client)."""
    before = getattr(_quiet, "undefined", False)
    _quiet.undefined = True
    try:
        yield
    finally:
        _quiet.undefined = before


def kappa_by_group(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    groups: ArrayLike,
    *,
    weights: str | ArrayLike | None = None,
    method: str | None = None,
    clusters: ArrayLike | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    seed=None,
    labels: ArrayLike | None = None,
    n_classes: int | None = None,
    sample_weight: ArrayLike | None = None,
    ignore_index: Any = None,
    nan_policy: str = "raise",
    thresholds: ArrayLike | None = None,
    replace_undefined_by: float = np.nan,
    ci: str | None = None,
    frequency_weight: ArrayLike | None = None,
) -> KappaByGroup:
    """Kappa for every group in one pass, each on the global class scale.

    The classes are fixed once from all rows (or the declaration), so a group
    that lacks a grade is still scored on the full scale. Groups where kappa
    is undefined get ``replace_undefined_by`` (with one
    :class:`UndefinedKappaWarning` naming how many), never an error.

    Parameters
    ----------
    y_true, y_pred : array_like of shape (n,)
        Labels of the two raters (see :func:`fastkappa.cohen_kappa`).
    groups : array_like of shape (n,)
        Group id of each row (integers, strings...). Missing ids follow
        ``nan_policy``. For (N, ...) labels: (N,) ids (one per sample) or ids
        of the label shape.
    weights : None, 'linear', 'quadratic' or (K, K) array
        Disagreement weights.
    method : None or {'percentile', 'basic', 'bca', 'asymptotic'}
        Also compute an interval per group with this method (see
        :func:`fastkappa.kappa_ci`). None (the default): no interval.
    clusters : array_like of shape (n,), optional
        Cluster ids (e.g. patients) for the intervals: whole clusters are
        resampled within each group, and the standard errors are
        cluster-robust (see :func:`fastkappa.kappa_ci`). Needs ``method``.
        Missing ids follow ``nan_policy``. A group with fewer than 2 clusters
        gets a nan interval; fewer than 30 draw a warning.
    confidence_level, n_resamples, seed
        As in :func:`fastkappa.kappa_ci`; each group gets its own stream
        spawned from ``seed``, and the result records the seed.
    labels, n_classes, sample_weight, ignore_index, nan_policy, thresholds
        As in :func:`fastkappa.cohen_kappa` (``sample_weight`` rows stay one
        sampled unit each).
    replace_undefined_by : float, default nan
        Kappa reported for a group (or overall) where it is undefined.
    ci : None or str
        Deprecated alias of ``method`` (it will be removed in the next
        release).
    frequency_weight : array_like of shape (n,), optional
        Whole-number count of each row: a row with count c is c identical
        rows of its group (and cluster). The rows are expanded, so the
        result, intervals included, is exactly that of the expanded rows
        (memory grows with the total count). Not with ``sample_weight``.

    Returns
    -------
    KappaByGroup

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
    .. [5] Field, C. A., & Welsh, A. H. (2007). Bootstrapping clustered data.
       Journal of the Royal Statistical Society: Series B (Statistical
       Methodology), 69(3), 369-390.
       https://doi.org/10.1111/j.1467-9868.2007.00593.x

    Examples
    --------
    >>> import fastkappa as fk
    >>> res = fk.kappa_by_group([0, 1, 2, 0, 1, 2], [0, 1, 2, 0, 2, 2], ["a"] * 3 + ["b"] * 3)
    >>> res.estimate
    array([1. , 0.5])
    >>> res["b"].estimate
    0.5
    """
    replace_undefined_by = check_replace_undefined_by(replace_undefined_by)
    method, confidence_level, n_resamples, seq = group_interval_iv(
        method, ci, confidence_level, n_resamples, seed)
    if method is None and clusters is not None:
        raise ValueError("`clusters` only changes the intervals; pass `method=` (e.g. "
                         "'bca') to compute them, or drop `clusters`.")
    check_nan_policy(nan_policy)
    # iterators are read once: the rows are read again for groups and intervals
    y_true, y_pred, groups, sample_weight, clusters, frequency_weight = (
        materialize(v) for v in (y_true, y_pred, groups, sample_weight, clusters,
                                 frequency_weight))
    y_true, y_pred, sample_weight, groups, clusters, frequency_weight = flatten_labels(
        y_true, y_pred, sample_weight=sample_weight, groups=groups, clusters=clusters,
        frequency_weight=frequency_weight)
    clusters, rows = omit_missing_ids(clusters, "clusters", nan_policy, {
        "y_true": y_true, "y_pred": y_pred, "groups": groups, "sample_weight": sample_weight,
        "frequency_weight": frequency_weight})
    sample_weight = rows["sample_weight"]
    # counted rows are expanded: per-group counts and draws are those of the expanded rows
    rows = expand_frequency(rows["frequency_weight"], sample_weight, {
        "y_true": rows["y_true"], "y_pred": rows["y_pred"], "groups": rows["groups"],
        "clusters": clusters})
    y_true, y_pred, groups = rows["y_true"], rows["y_pred"], rows["groups"]
    clusters = rows["clusters"]
    enc = encode_pair(y_true, y_pred, labels=labels, n_classes=n_classes,
                      sample_weight=sample_weight, ignore_index=ignore_index,
                      nan_policy=nan_policy, thresholds=thresholds, weights=weights,
                      defer_count=True)
    n = enc.n_input
    k = enc.n_classes
    s = k + 3
    gv, goff, glut, keys, provisional_groups, guessed = _encode_groups(groups, n, guess=True)
    counts, wsum = _count_groups(enc, gv, goff, glut, len(keys))
    if guessed and counts[-1].any():  # ids outside the sampled range: count again
        gv, goff, glut, keys, provisional_groups, _ = _encode_groups(groups, n)
        counts, wsum = _count_groups(enc, gv, goff, glut, len(keys))
    g = len(keys)
    if provisional_groups:
        occurs = counts[:g].reshape(g, -1).sum(axis=1) > 0
        if not occurs.all():
            keep_g = np.append(np.flatnonzero(occurs), g)
            counts = counts[keep_g]
            wsum = None if wsum is None else wsum[keep_g]
            keys = keys[occurs]
            g = len(keys)
            # rows of the dropped groups were none; group slots are only used by the
            # sample-weight interval path, which maps them again below
            glut = _compact_lut(glut, occurs)
    provisional = enc.compressible
    if provisional:
        # inferred classes were counted over a value range: keep the observed ones
        kept = counts[:, :k, :k].sum(axis=0)
        seen = (kept.sum(axis=0) + kept.sum(axis=1)) > 0
    # validates y_true / y_pred (bad values, missing values) exactly as cohen_kappa
    enc.check_table(counts.sum(axis=0), None if wsum is None else wsum.sum(axis=0))
    if provisional:
        enc.finish_classes()
        keep_slots = np.concatenate([np.flatnonzero(seen), np.arange(k, s)])
        counts = counts[:, keep_slots][:, :, keep_slots]
        wsum = None if wsum is None else wsum[:, keep_slots][:, :, keep_slots]
        k = enc.n_classes
    missing_group = int(counts[g, :k, :k].sum())
    if missing_group and nan_policy == "raise":
        raise ValueError(
            f"`groups` is missing (NaN/None) on {missing_group} scored rows; pass "
            "nan_policy='omit' to drop them.")
    tables = (counts if wsum is None else wsum)[:g, :k, :k]
    kappa, n_g = _group_kappas(tables, enc.weights)
    if wsum is None:
        n_g = n_g.astype(np.int64)
    undefined = np.isnan(kappa)
    if undefined.any() and not getattr(_quiet, "undefined", False):
        warnings.warn(
            f"kappa is undefined (or no row is left) in {int(undefined.sum())} of {g} groups; "
            f"they are reported as replace_undefined_by={replace_undefined_by!r}.",
            UndefinedKappaWarning, stacklevel=user_stacklevel())
    kappa[undefined] = replace_undefined_by
    total = tables.sum(axis=0)
    overall = _weights.finish_kappa(*_weights.kappa_terms(total, enc.weights),
                                    replace_undefined_by,
                                    warn=not getattr(_quiet, "undefined", False))
    low = high = None
    if method is not None:
        low, high = _group_intervals(enc, tables, gv, goff, glut, method, confidence_level,
                                     n_resamples, seq, y_true, y_pred, weights, sample_weight,
                                     ignore_index, nan_policy, thresholds, clusters)
    return KappaByGroup(
        groups=keys, estimate=kappa, n_rows=n_g, overall=overall,
        confusion=np.ascontiguousarray(tables), classes=enc.classes,
        weights=(_weights.canonical(weights) if isinstance(weights, str) or weights is None
                 else "custom"),
        low=low, high=high, method=method,
        confidence_level=confidence_level if method else None,
        n_resamples=None if method in (None, "asymptotic") else n_resamples,
        seed=None if method in (None, "asymptotic") else seed_record(seq))


def _group_intervals(enc, tables, gv, goff, glut, method, confidence_level, n_resamples, seq,
                     y_true, y_pred, weights, sample_weight, ignore_index, nan_policy,
                     thresholds, clusters):
    g = tables.shape[0]
    low = np.full(g, np.nan)
    high = np.full(g, np.nan)
    rows = ccodes = None
    if enc.sample_weight is not None or clusters is not None:
        lut_idx = np.clip(np.asarray(gv, dtype=np.int64) - goff, 0, len(glut) - 1)
        rows = glut[lut_idx]
        # each group's rows in input order: one sort, then a slice per group
        order = np.argsort(rows, kind="stable")
        bounds = np.searchsorted(rows[order], np.arange(g + 1))
    todo = np.flatnonzero(tables.reshape(g, -1).sum(axis=1) > 0)
    if clusters is not None:
        ccodes = id_codes(clusters, enc.n_input, "clusters")
        keep = enc.keep()
        kept = order if keep is None else order[keep[order]]
        kept_bounds = np.searchsorted(rows[kept], np.arange(g + 1))
        n_cl = np.array([len(np.unique(ccodes[kept[kept_bounds[i]:kept_bounds[i + 1]]]))
                         for i in range(g)])
        few = [(int(i), int(n_cl[i])) for i in todo if n_cl[i] < MIN_RELIABLE_CLUSTERS]
        if few:
            single = sum(1 for _, c in few if c < 2)
            warnings.warn(
                f"{len(few)} of {g} groups have fewer than {MIN_RELIABLE_CLUSTERS} clusters, "
                "so their cluster-robust intervals are unreliable"
                + (f"; {single} have fewer than 2 and get a nan interval" if single else "")
                + ".", DegenerateIntervalWarning, stacklevel=user_stacklevel())
        todo = todo[n_cl[todo] >= 2]
    if rows is None and method == "asymptotic":
        # closed form for every group at once; an undefined kappa takes the
        # one-group path below (nan bounds)
        done = _asymptotic_bounds(tables[todo], enc.weights, confidence_level,
                                  low, high, todo)
        todo = todo[~done]
    seeds = seq.spawn(g) if method != "asymptotic" else [None] * g
    cols = None
    if rows is not None:
        cols = (as_column(y_true, "y_true"), as_column(y_pred, "y_pred"),
                None if sample_weight is None else as_column(sample_weight, "sample_weight"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # per-group degenerate notes
        for i in todo:
            if rows is None:
                res = kappa_ci_from_confusion(
                    tables[i], weights=enc.weights if not isinstance(weights, str) and (
                        weights is not None) else weights,
                    method=method, confidence_level=confidence_level,
                    n_resamples=n_resamples, seed=seeds[i])
            else:
                idx = order[bounds[i]:bounds[i + 1]]
                res = kappa_ci(
                    take_rows(cols[0], idx, "y_true"), take_rows(cols[1], idx, "y_pred"),
                    weights=weights, method=method, confidence_level=confidence_level,
                    n_resamples=n_resamples, seed=seeds[i], labels=enc.classes,
                    sample_weight=take_rows(cols[2], idx, "sample_weight"),
                    ignore_index=ignore_index, nan_policy=nan_policy, thresholds=thresholds,
                    clusters=None if ccodes is None else ccodes[idx])
            low[i], high[i] = res.low, res.high
    return low, high


def _asymptotic_bounds(tables: np.ndarray, wmat: np.ndarray, confidence_level: float,
                       low: np.ndarray, high: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Asymptotic (Fleiss-Cohen-Everitt) bounds of many (K, K) count tables at once
    (:func:`fastkappa._asymptotic.fce_many`, in blocks of groups so the
    temporaries stay small).

    Writes ``low[which[j]]`` and ``high[which[j]]`` for every table with a
    defined kappa (a zero SE gives a zero-width interval at the estimate, as
    one group's interval does; the per-group warnings are silenced there
    too) and returns which those were: an undefined kappa is left to the
    one-group path (nan bounds).
    """
    z = _NORMAL.inv_cdf(0.5 + confidence_level / 2.0)
    k = tables.shape[-1]
    done = np.zeros(len(tables), dtype=bool)
    step = max(1, (1 << 22) // max(k * k, 1))
    for lo in range(0, len(tables), step):
        kappa, se, ok = fce_many(tables[lo:lo + step], wmat)
        half = z * se[ok]
        idx = which[lo:lo + step][ok]
        low[idx] = np.clip(kappa[ok] - half, -1.0, 1.0)
        high[idx] = np.clip(kappa[ok] + half, -1.0, 1.0)
        done[lo:lo + step] = ok
    return done


