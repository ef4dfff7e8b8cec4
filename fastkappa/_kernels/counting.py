"""Counting kernels: confusion tables, five running sums, min/max, histograms.

Each side of a pair is read through a lookup table (LUT): the class slot of a
value ``v`` is ``lut[clamp(v - offset, 0, len(lut) - 1)]``.  The first and the
last LUT entries are the "invalid" slot, so a value outside the declared range
lands there without a branch.  Slots ``0..K-1`` are classes; ``K`` is invalid,
``K + 1`` ignored (``ignore_index``), ``K + 2`` missing (NaN, None).  The
kernels count into a ``(K + 3) x (K + 3)`` table and never raise: the wrapper
reads the extra rows and columns afterwards and turns them into errors.

Parallel kernels split the rows into ``n_chunks`` fixed blocks with one
partial table each (never a shared ``+=`` inside ``prange``, which races), so
results, float sums included, do not depend on the number of threads.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import jit


@jit()
def _slot(v, off, last):
    d = np.int64(v) - off
    if d < 0:
        d = 0
    if d > last:
        d = last
    return d


@jit()
def _count_block(t, t_off, t_lut, p, p_off, p_lut, s, lo, hi, acc):
    """Add rows ``lo:hi`` into ``acc`` (flat, length s*s)."""
    lt = t_lut.shape[0] - 1
    lp = p_lut.shape[0] - 1
    for i in range(lo, hi):
        a = t_lut[_slot(t[i], t_off, lt)]
        b = p_lut[_slot(p[i], p_off, lp)]
        acc[a * s + b] += 1


@jit(parallel=True)
def _accumulate_confusion(t, t_off, t_lut, p, p_off, p_lut, s, n_chunks):
    """Counts of (true slot, pred slot) pairs: ``(n_chunks, s * s)`` partials."""
    n = t.shape[0]
    out = np.zeros((n_chunks, s * s), dtype=np.int64)
    step = (n + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        lo = c * step
        hi = min(n, lo + step)
        _count_block(t, t_off, t_lut, p, p_off, p_lut, s, lo, hi, out[c])
    return out


@jit()
def _accumulate_confusion_serial(t, t_off, t_lut, p, p_off, p_lut, s):
    out = np.zeros(s * s, dtype=np.int64)
    _count_block(t, t_off, t_lut, p, p_off, p_lut, s, 0, t.shape[0], out)
    return out


@jit()
def _count_block_weighted(t, t_off, t_lut, p, p_off, p_lut, w, s, lo, hi, acc, cnt):
    lt = t_lut.shape[0] - 1
    lp = p_lut.shape[0] - 1
    for i in range(lo, hi):
        a = t_lut[_slot(t[i], t_off, lt)]
        b = p_lut[_slot(p[i], p_off, lp)]
        acc[a * s + b] += w[i]
        cnt[a * s + b] += 1


@jit(parallel=True)
def _accumulate_confusion_weighted(t, t_off, t_lut, p, p_off, p_lut, w, s, n_chunks):
    """Weighted sums and plain counts per (true slot, pred slot), per chunk."""
    n = t.shape[0]
    out = np.zeros((n_chunks, s * s), dtype=np.float64)
    cnt = np.zeros((n_chunks, s * s), dtype=np.int64)
    step = (n + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        lo = c * step
        hi = min(n, lo + step)
        _count_block_weighted(t, t_off, t_lut, p, p_off, p_lut, w, s, lo, hi, out[c], cnt[c])
    return out, cnt


@jit()
def _sums_block(t, p, off, lo, hi, res):
    """Five running sums of class indices ``x = t - off``, ``y = p - off`` and
    the min/max of each side, over rows ``lo:hi``.

    res = [Sx, Sy, Sxx, Syy, Sxy, min t, max t, min p, max p]
    """
    sx = np.int64(0)
    sy = np.int64(0)
    sxx = np.int64(0)
    syy = np.int64(0)
    sxy = np.int64(0)
    tmin = np.int64(t[lo]) if hi > lo else np.int64(0)
    tmax = tmin
    pmin = np.int64(p[lo]) if hi > lo else np.int64(0)
    pmax = pmin
    for i in range(lo, hi):
        a = np.int64(t[i])
        b = np.int64(p[i])
        tmin = min(tmin, a)
        tmax = max(tmax, a)
        pmin = min(pmin, b)
        pmax = max(pmax, b)
        x = a - off
        y = b - off
        sx += x
        sy += y
        sxx += x * x
        syy += y * y
        sxy += x * y
    res[0] = sx
    res[1] = sy
    res[2] = sxx
    res[3] = syy
    res[4] = sxy
    res[5] = tmin
    res[6] = tmax
    res[7] = pmin
    res[8] = pmax


@jit(parallel=True)
def _accumulate_quadratic_sums(t, p, off, n_chunks):
    """Per-chunk five sums and min/max (see ``_sums_block``): ``(n_chunks, 9)``."""
    n = t.shape[0]
    out = np.zeros((n_chunks, 9), dtype=np.int64)
    step = (n + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        lo = c * step
        hi = min(n, lo + step)
        _sums_block(t, p, off, lo, hi, out[c])
    return out


@jit()
def _accumulate_quadratic_sums_serial(t, p, off):
    out = np.zeros(9, dtype=np.int64)
    _sums_block(t, p, off, 0, t.shape[0], out)
    return out


@jit()
def _minmax(a):
    """(min, max) of a non-empty integer array, as int64."""
    lo = np.int64(a[0])
    hi = lo
    for i in range(a.shape[0]):
        v = np.int64(a[i])
        lo = min(lo, v)
        hi = max(hi, v)
    return lo, hi


@jit()
def _histogram(a, off, n_bins):
    """Counts of ``a - off`` over ``0..n_bins-1`` (values must be in range)."""
    out = np.zeros(n_bins, dtype=np.int64)
    for i in range(a.shape[0]):
        out[np.int64(a[i]) - off] += 1
    return out
