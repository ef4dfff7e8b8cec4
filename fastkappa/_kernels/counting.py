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

from .._core.stand_ins import ColdStandIn
from ._jit import canonical_args, jit


@jit()
def _slot(v, off, last):
    """LUT index of value ``v``: ``v - off``, or ``last`` (the invalid entry) when
    ``v`` lies below ``off`` or beyond ``off + last``.

    Compared before subtracting, so no value wraps or overflows (``v`` may be
    any int64, e.g. near its maximum with a negative ``off``); the two
    comparisons compile to selects, and the loop still vectorises.
    """
    x = np.int64(v)
    lo = np.int64(off)
    hi = np.int64(last)
    outside = (x < lo) | (x > lo + hi)
    return np.uint64(hi if outside else x - lo)


#: rows per pass of the two-pass counting loop (the cell buffer stays in L1)
_BLOCK = 2048
#: largest table (cells) counted in four interleaved copies
_SPLIT_MAX_CELLS = 4096


@jit()
def _cells(tb, t_off, t_lut, pb, p_off, p_lut, s, direct, buf):
    """Pass one: the flat cell index (true slot * s + pred slot) of each row into ``buf``.

    No loop-carried dependency, so the loop vectorises.  With ``direct`` both
    LUTs are known to be the plain range (``lut[1 + j] == j`` for every class
    ``j``, invalid at both ends), so the slot is the clamped value itself,
    ``min(v - (off + 1), K)`` as unsigned, and the LUT reads (gathers) are
    skipped.
    """
    m = tb.shape[0]
    if direct:
        t_first = t_off + 1
        p_first = p_off + 1
        t_inv = np.uint64(t_lut.shape[0] - 2)
        p_inv = np.uint64(p_lut.shape[0] - 2)
        for j in range(m):
            buf[j] = (np.int64(_slot(tb[j], t_first, t_inv)) * s
                      + np.int64(_slot(pb[j], p_first, p_inv)))
    else:
        lt = np.uint64(t_lut.shape[0] - 1)
        lp = np.uint64(p_lut.shape[0] - 1)
        for j in range(m):
            buf[j] = (np.int64(t_lut[_slot(tb[j], t_off, lt)]) * s
                      + np.int64(p_lut[_slot(pb[j], p_off, lp)]))


def _block_scratch(s: int) -> tuple[np.ndarray, np.ndarray]:
    """The scratch of :func:`_count_block` for ``s`` slots: four zeroed copies
    of the table (none above :data:`_SPLIT_MAX_CELLS` cells) and the cell buffer.

    Allocated by the caller, so that a fresh process compiling the block
    kernel for a serial count compiles no array allocation with it (about
    0.2 s of a first call)."""
    ss = s * s
    tables = np.zeros((4 if ss <= _SPLIT_MAX_CELLS else 0, ss), dtype=np.int64)
    return tables, np.empty(_BLOCK, dtype=np.intp)


@jit()
def _count_block(t, t_off, t_lut, p, p_off, p_lut, s, direct, acc, tables, buf):
    """Add every row into ``acc`` (flat, length s*s).

    Two passes per block of ``_BLOCK`` rows: :func:`_cells` into ``buf``
    (``_BLOCK`` long), then the increments, spread over the four zeroed copies
    of a small table in ``tables`` (``(4, s*s)``) so that neighbouring rows
    landing on the same cell do not wait for each other's store.  A table
    above :data:`_SPLIT_MAX_CELLS` cells is counted straight into ``acc``
    (``tables`` then has no row): no second table of its size.
    :func:`_block_scratch` allocates both.  Returns 0, or -1 (nothing counted)
    when ``buf`` is shorter than ``_BLOCK``.
    """
    if buf.shape[0] < _BLOCK:
        return -1
    ss = s * s
    split = tables.shape[0] == 4 and tables.shape[1] == ss
    n = t.shape[0]
    for lo in range(0, n, _BLOCK):
        hi = lo + _BLOCK if lo + _BLOCK < n else n
        m = hi - lo
        _cells(t[lo:hi], t_off, t_lut, p[lo:hi], p_off, p_lut, s, direct, buf)
        if split:
            m4 = m - m % 4
            for j in range(0, m4, 4):
                tables[0, buf[j]] += 1
                tables[1, buf[j + 1]] += 1
                tables[2, buf[j + 2]] += 1
                tables[3, buf[j + 3]] += 1
            for j in range(m4, m):
                tables[0, buf[j]] += 1
        else:
            for j in range(m):
                acc[buf[j]] += 1
    if split:
        for k in range(4):
            for c in range(ss):
                acc[c] += tables[k, c]
    return 0


@jit(parallel=True)
def _accumulate_confusion(t, t_off, t_lut, p, p_off, p_lut, s, direct, n_chunks):
    """Counts of (true slot, pred slot) pairs: ``(n_chunks, s * s)`` partials."""
    n = t.shape[0]
    out = np.zeros((n_chunks, s * s), dtype=np.int64)
    step = (n + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        lo = min(n, c * step)
        hi = min(n, lo + step)
        ss = s * s
        tables = np.zeros((4 if ss <= _SPLIT_MAX_CELLS else 0, ss), dtype=np.int64)
        buf = np.empty(_BLOCK, dtype=np.intp)
        _count_block(t[lo:hi], t_off, t_lut, p[lo:hi], p_off, p_lut, s, direct, out[c],
                     tables, buf)
    return out


#: seconds a process counts serial inputs with NumPy (:func:`_confusion_numpy`)
#: while :func:`_count_block` is neither compiled nor in the kernel cache: the
#: same table, without the 0.6-0.9 s the block costs a fresh process to compile
#: (NumPy takes about 1 ms more at 1e5 rows), until such counts have taken this
#: long; then the block is compiled after all, as repeated calls pay it back
COLD_NUMPY_BUDGET = 0.5
#: ... and only inputs below this many rows (the parallel threshold): NumPy's
#: temporaries are O(rows), which larger inputs must not pay
COLD_NUMPY_MAX_ROWS = 1 << 18
#: NumPy's seconds so far (the first count left out), and the label dtype pairs
#: whose block is known to be compiled or cached
_cold_counts = ColdStandIn(budget=COLD_NUMPY_BUDGET)


def _confusion_numpy(t, t_off, t_lut, p, p_off, p_lut, s):
    """:func:`_count_block` in NumPy: ``(1, s * s)`` int64, the same counts."""
    cells = _cells_numpy(t, t_off, t_lut, p, p_off, p_lut, s)
    return np.bincount(cells, minlength=s * s).astype(np.int64).reshape(1, s * s)


def _count_cold(args: tuple) -> bool:
    """Whether to count ``args`` (those of :func:`_count_block`) with NumPy: the
    block is not ready for their types and the NumPy budget is not spent."""
    if args[0].shape[0] >= COLD_NUMPY_MAX_ROWS:
        return False
    return _cold_counts.wanted(_count_block, args, (args[0].dtype, args[3].dtype))


def _accumulate_confusion_serial(t, t_off, t_lut, p, p_off, p_lut, s, direct):
    """:func:`_accumulate_confusion` on one thread: ``(1, s * s)``.

    A Python function that calls the block kernel itself: a jitted wrapper
    around it cost about half a second more to compile at the first call of
    every entry point (numba optimises the inlined block again), for no gain
    at run time.  Small integer label arrays are cast to int64 first, as
    :func:`~fastkappa._kernels._jit.canonical_args` describes.  A fresh kernel
    cache counts with NumPy instead, up to :data:`COLD_NUMPY_BUDGET`.
    """
    t, p = canonical_args((t, p), (0, 1))
    out = np.zeros((1, s * s), dtype=np.int64)
    args = (t, t_off, t_lut, p, p_off, p_lut, s, direct, out[0], *_block_scratch(s))
    if _count_cold(args):
        with _cold_counts.time.timing():
            return _confusion_numpy(t, t_off, t_lut, p, p_off, p_lut, s)
    if _count_block(*args) != 0:
        raise RuntimeError("internal error: the counting kernel's scratch is too short")
    _cold_counts.ready((t.dtype, p.dtype))
    return out


@jit()
def _count_block_weighted(t, t_off, t_lut, p, p_off, p_lut, w, s, direct, acc, cnt):
    """Add every row's weight into ``acc`` and its count into ``cnt`` (flat, s*s).

    The two passes of :func:`_count_block`.  Float sums run in four
    interleaved tables (row j into table j % 4), added in a fixed order at the
    end: the result depends on the rows only, never on timing or threads.
    """
    ss = s * s
    split = ss <= _SPLIT_MAX_CELLS
    nt = 4 if split else 0  # a large table is summed straight into ``acc`` / ``cnt``
    wsum = np.zeros((nt, ss), dtype=np.float64)
    tables = np.zeros((nt, ss), dtype=np.int64)
    buf = np.empty(_BLOCK, dtype=np.intp)
    n = t.shape[0]
    for lo in range(0, n, _BLOCK):
        hi = min(n, lo + _BLOCK)
        m = hi - lo
        wb = w[lo:hi]
        _cells(t[lo:hi], t_off, t_lut, p[lo:hi], p_off, p_lut, s, direct, buf)
        if split:
            m4 = m - m % 4
            for j in range(0, m4, 4):
                wsum[0, buf[j]] += wb[j]
                wsum[1, buf[j + 1]] += wb[j + 1]
                wsum[2, buf[j + 2]] += wb[j + 2]
                wsum[3, buf[j + 3]] += wb[j + 3]
                tables[0, buf[j]] += 1
                tables[1, buf[j + 1]] += 1
                tables[2, buf[j + 2]] += 1
                tables[3, buf[j + 3]] += 1
            for j in range(m4, m):
                wsum[0, buf[j]] += wb[j]
                tables[0, buf[j]] += 1
        else:
            for j in range(m):
                acc[buf[j]] += wb[j]
                cnt[buf[j]] += 1
    for k in range(nt):
        for c in range(ss):
            acc[c] += wsum[k, c]
            cnt[c] += tables[k, c]


@jit(parallel=True)
def _accumulate_confusion_weighted(t, t_off, t_lut, p, p_off, p_lut, w, s, direct, n_chunks):
    """Weighted sums and plain counts per (true slot, pred slot), per chunk."""
    n = t.shape[0]
    out = np.zeros((n_chunks, s * s), dtype=np.float64)
    cnt = np.zeros((n_chunks, s * s), dtype=np.int64)
    step = (n + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        lo = min(n, c * step)
        hi = min(n, lo + step)
        _count_block_weighted(t[lo:hi], t_off, t_lut, p[lo:hi], p_off, p_lut, w[lo:hi], s,
                              direct, out[c], cnt[c])
    return out, cnt


@jit()
def _count_block_counted(t, t_off, t_lut, p, p_off, p_lut, c, s, direct, acc):
    """Add every row's int64 count ``c`` (frequency weight) into ``acc`` (flat, s*s).

    Integer sums only: exact below 2**63 (the wrapper checks the total first).
    """
    buf = np.empty(_BLOCK, dtype=np.intp)
    n = t.shape[0]
    for lo in range(0, n, _BLOCK):
        hi = min(n, lo + _BLOCK)
        cb = c[lo:hi]
        _cells(t[lo:hi], t_off, t_lut, p[lo:hi], p_off, p_lut, s, direct, buf)
        for j in range(hi - lo):
            acc[buf[j]] += cb[j]


@jit(parallel=True)
def _accumulate_confusion_counted(t, t_off, t_lut, p, p_off, p_lut, c, s, direct, n_chunks):
    """Frequency-weighted counts per (true slot, pred slot): ``(n_chunks, s * s)`` int64."""
    n = t.shape[0]
    out = np.zeros((n_chunks, s * s), dtype=np.int64)
    step = (n + n_chunks - 1) // n_chunks
    for k in prange(n_chunks):
        lo = min(n, k * step)
        hi = min(n, lo + step)
        _count_block_counted(t[lo:hi], t_off, t_lut, p[lo:hi], p_off, p_lut, c[lo:hi], s,
                             direct, out[k])
    return out


#: frequency-weighted inputs up to this many rows are counted by NumPy
#: (:func:`_counted_numpy`, about 0.1 ms) instead of a kernel that costs a fresh
#: process about a second to compile: such inputs are aggregated tables (K^2
#: rows) and the pairs of dictionary values the Parquet page reader counts
NUMPY_COUNTED_MAX_ROWS = 4096


def _slots_numpy(v: np.ndarray, off, lut: np.ndarray) -> np.ndarray:
    """:func:`_slot` and the LUT read of a whole array, in NumPy: ``lut[v - off]``,
    or the LUT's last (invalid) entry outside ``off .. off + len(lut) - 1``.

    Values are read as int64 as the kernel reads them; the difference is taken
    modulo 2**64 after the comparison with ``off``, so nothing overflows.
    """
    x = np.asarray(v).astype(np.int64, copy=False)
    lo = np.int64(off)
    last = lut.shape[0] - 1
    d = x.view(np.uint64) - np.array(lo).view(np.uint64)
    idx = np.where((x < lo) | (d > np.uint64(last)), np.uint64(last), d)
    return lut[idx.astype(np.intp)].astype(np.int64)


def _cells_numpy(t, t_off, t_lut, p, p_off, p_lut, s) -> np.ndarray:
    """:func:`_cells` in NumPy: each row's flat cell (true slot * s + pred slot)."""
    return _slots_numpy(t, t_off, t_lut) * s + _slots_numpy(p, p_off, p_lut)


def _counted_numpy(t, t_off, t_lut, p, p_off, p_lut, c, s):
    """:func:`_count_block_counted` in NumPy, for few rows: ``(1, s * s)`` int64."""
    cells = _cells_numpy(t, t_off, t_lut, p, p_off, p_lut, s)
    out = np.zeros((1, s * s), dtype=np.int64)
    np.add.at(out[0], cells, np.asarray(c, dtype=np.int64))
    return out


def _accumulate_confusion_counted_serial(t, t_off, t_lut, p, p_off, p_lut, c, s, direct):
    """:func:`_accumulate_confusion_counted` on one thread, from Python (see
    :func:`_accumulate_confusion_serial`); by NumPy up to
    :data:`NUMPY_COUNTED_MAX_ROWS` rows (``direct`` only skips LUT reads that
    give the same slots)."""
    if t.shape[0] <= NUMPY_COUNTED_MAX_ROWS:
        return _counted_numpy(t, t_off, t_lut, p, p_off, p_lut, c, s)
    t, p = canonical_args((t, p), (0, 1))
    out = np.zeros((1, s * s), dtype=np.int64)
    _count_block_counted(t, t_off, t_lut, p, p_off, p_lut, c, s, direct, out[0])
    return out


@jit()
def _quadratic_sums_narrow(a, b):
    """Five raw sums and the joint min/max of 8/16-bit inputs (int64 accumulators).

    Returns (Sx, Sy, Sxx, Syy, Sxy, min, max) over both sides.  The min/max
    run first, in the inputs' own narrow dtype (many lanes per vector), then
    the sums; a chunk is small enough to be read twice from cache.
    """
    if a.shape[0] == 0:
        return (np.int64(0), np.int64(0), np.int64(0), np.int64(0), np.int64(0),
                np.int64(1 << 40), np.int64(-(1 << 40)))
    amn = a[0]
    amx = a[0]
    bmn = b[0]
    bmx = b[0]
    for i in range(a.shape[0]):
        amn = min(amn, a[i])
        amx = max(amx, a[i])
        bmn = min(bmn, b[i])
        bmx = max(bmx, b[i])
    sx = np.int64(0)
    sy = np.int64(0)
    sxx = np.int64(0)
    syy = np.int64(0)
    sxy = np.int64(0)
    for i in range(a.shape[0]):
        u = np.int64(a[i])
        v = np.int64(b[i])
        sx += u
        sy += v
        sxx += u * u
        syy += v * v
        sxy += u * v
    return (sx, sy, sxx, syy, sxy, min(np.int64(amn), np.int64(bmn)),
            max(np.int64(amx), np.int64(bmx)))


@jit()
def _quadratic_sums_wide(a, b):
    """Five raw sums and joint min/max of 32/64-bit inputs.

    Products are taken in int32 (64-bit integer multiplies are slow and stop
    the loop from vectorising well); they are exact whenever |v| <= 2**15,
    and the caller only trusts the sums when min/max prove that bound.
    """
    sx = np.int64(0)
    sy = np.int64(0)
    sxx = np.int64(0)
    syy = np.int64(0)
    sxy = np.int64(0)
    mn = np.int64(1 << 62)
    mx = -mn
    for i in range(a.shape[0]):
        u = np.int64(a[i])
        v = np.int64(b[i])
        mn = min(mn, min(u, v))
        mx = max(mx, max(u, v))
        x = np.int32(u)
        y = np.int32(v)
        sx += u
        sy += v
        sxx += np.int64(x * x)
        syy += np.int64(y * y)
        sxy += np.int64(x * y)
    return sx, sy, sxx, syy, sxy, mn, mx


@jit()
def _quadratic_sums(a, b, wide):
    if wide:
        return _quadratic_sums_wide(a, b)
    return _quadratic_sums_narrow(a, b)


@jit(parallel=True)
def _accumulate_quadratic_sums(a, b, wide, n_chunks):
    """Per-chunk (Sx, Sy, Sxx, Syy, Sxy, min, max): an ``(n_chunks, 7)`` int64 array.

    Sums are of the raw values (QWK is invariant to a common shift of both
    raters' class indices, so no offset is subtracted).
    """
    n = a.shape[0]
    out = np.zeros((n_chunks, 7), dtype=np.int64)
    step = (n + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        lo = min(n, c * step)
        hi = min(n, lo + step)
        r = _quadratic_sums(a[lo:hi], b[lo:hi], wide)
        for j in range(7):
            out[c, j] = r[j]
    return out


@jit()
def _minmax_block(a):
    lo = np.int64(a[0])
    hi = lo
    for i in range(a.shape[0]):
        v = np.int64(a[i])
        lo = min(lo, v)
        hi = max(hi, v)
    return lo, hi


@jit(parallel=True)
def _minmax(a, n_chunks):
    """Per-chunk (min, max) of a non-empty integer array, as int64: ``(n_chunks, 2)``."""
    n = a.shape[0]
    out = np.empty((n_chunks, 2), dtype=np.int64)
    step = (n + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        lo = min(n - 1, c * step)
        hi = max(lo + 1, min(n, lo + step))
        r = _minmax_block(a[lo:hi])
        out[c, 0] = r[0]
        out[c, 1] = r[1]
    return out


@jit()
def _weight_stats_block(w):
    """(sum, min, max) of a float64 block, in four interleaved lanes.

    The lanes let the additions overlap (one chain would wait on each add)
    and are combined in a fixed order.  A nan or inf anywhere makes the sum
    non-finite, which is all the caller needs to know to look closer.
    """
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    mn = np.inf
    mx = -np.inf
    n = w.shape[0]
    n4 = n - n % 4
    for i in range(0, n4, 4):
        a = w[i]
        b = w[i + 1]
        c = w[i + 2]
        d = w[i + 3]
        s0 += a
        s1 += b
        s2 += c
        s3 += d
        mn = min(mn, min(min(a, b), min(c, d)))
        mx = max(mx, max(max(a, b), max(c, d)))
    for i in range(n4, n):
        s0 += w[i]
        mn = min(mn, w[i])
        mx = max(mx, w[i])
    return ((s0 + s1) + (s2 + s3)), mn, mx


@jit(parallel=True)
def _weight_stats(w, n_chunks):
    """Per-chunk (sum, min, max) of float64 weights: ``(n_chunks, 3)``."""
    n = w.shape[0]
    out = np.empty((n_chunks, 3), dtype=np.float64)
    step = (n + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        lo = min(n, c * step)
        hi = min(n, lo + step)
        r = _weight_stats_block(w[lo:hi])
        out[c, 0] = r[0]
        out[c, 1] = r[1]
        out[c, 2] = r[2]
    return out


@jit(canonical=(0,))
def _histogram(a, off, n_bins):
    """Counts of ``a - off`` over ``0..n_bins-1`` (values must be in range)."""
    out = np.zeros(n_bins, dtype=np.int64)
    for i in range(a.shape[0]):
        out[np.int64(a[i]) - off] += 1
    return out


@jit()
def _group_cells(gb, g_off, g_lut, tb, t_off, t_lut, pb, p_off, p_lut, wt, wp, direct, buf):
    """Pass one for per-group tables: ``g * (wt * wp) + a * wp + b`` of each row into ``buf``.

    ``(wt, wp)`` is ``(s, s)`` for the full layout; with ``direct`` (all three
    LUTs the plain range) a slot is at most the invalid one, so ``(K + 1,
    K + 1)`` fits too.  Vectorises like :func:`_cells`.
    """
    m = tb.shape[0]
    rr = wt * wp
    if direct:
        g_first = g_off + 1
        t_first = t_off + 1
        p_first = p_off + 1
        g_inv = np.uint64(g_lut.shape[0] - 2)
        t_inv = np.uint64(t_lut.shape[0] - 2)
        p_inv = np.uint64(p_lut.shape[0] - 2)
        for j in range(m):
            buf[j] = (np.int64(_slot(gb[j], g_first, g_inv)) * rr
                      + np.int64(_slot(tb[j], t_first, t_inv)) * wp
                      + np.int64(_slot(pb[j], p_first, p_inv)))
    else:
        lg = np.uint64(g_lut.shape[0] - 1)
        lt = np.uint64(t_lut.shape[0] - 1)
        lp = np.uint64(p_lut.shape[0] - 1)
        for j in range(m):
            buf[j] = (np.int64(g_lut[_slot(gb[j], g_off, lg)]) * rr
                      + np.int64(t_lut[_slot(tb[j], t_off, lt)]) * wp
                      + np.int64(p_lut[_slot(pb[j], p_off, lp)]))


#: rows counted into the int32 tables before they are added into the int64 result
_FLUSH_ROWS = 1 << 30


@jit()
def _flush_groups(small, rt, rp, s, acc):
    """Add the compact (G + 1) x rt x rp int32 table into ``acc``'s s x s layout; zero it."""
    rr = rt * rp
    ss = s * s
    for k in range(small.shape[0] // rr):
        for a in range(rt):
            for b in range(rp):
                acc[k * ss + a * s + b] += small[k * rr + a * rp + b]
    small[:] = 0


@jit()
def _count_groups_block(g, g_off, g_lut, t, t_off, t_lut, p, p_off, p_lut, s, direct, acc):
    """Add rows into ``acc`` (flat, length n_groups * s * s): one s x s table per group.

    Group slots come from ``g_lut`` like class slots; a group slot equal to
    ``n_groups`` (not a known group) is never produced by the wrapper's LUT.
    Two passes per block (:func:`_group_cells`, then the increments); one
    table, since with many groups neighbouring rows rarely share a cell.
    With ``direct`` each group needs only (K + 1) x (K + 1) cells: those are
    counted in a compact int32 table, a third of the memory the increments
    would otherwise roam, and added into ``acc`` at the end (and every
    ``_FLUSH_ROWS`` rows, long before an int32 count could overflow).
    """
    rt = t_lut.shape[0] - 1 if direct else s
    rp = p_lut.shape[0] - 1 if direct else s
    small = np.zeros((g_lut.shape[0] - 1) * rt * rp if direct else 0, dtype=np.int32)
    buf = np.empty(_BLOCK, dtype=np.intp)
    n = t.shape[0]
    since = 0
    for lo in range(0, n, _BLOCK):
        hi = min(n, lo + _BLOCK)
        m = hi - lo
        _group_cells(g[lo:hi], g_off, g_lut, t[lo:hi], t_off, t_lut, p[lo:hi], p_off, p_lut,
                     rt, rp, direct, buf)
        if direct:
            if since + m > _FLUSH_ROWS:
                _flush_groups(small, rt, rp, s, acc)
                since = 0
            since += m
            for j in range(m):
                small[buf[j]] += 1
        else:
            for j in range(m):
                acc[buf[j]] += 1
    if direct:
        _flush_groups(small, rt, rp, s, acc)


@jit(parallel=True)
def _accumulate_group_confusion(g, g_off, g_lut, t, t_off, t_lut, p, p_off, p_lut, s,
                                direct, n_groups, n_chunks):
    """Per-chunk (n_groups + 1) stacks of s x s tables: ``(n_chunks, (G + 1) * s * s)``.

    The extra last group collects rows whose group id is missing or unknown.
    """
    n = t.shape[0]
    size = (n_groups + 1) * s * s
    out = np.zeros((n_chunks, size), dtype=np.int64)
    step = (n + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        lo = min(n, c * step)
        hi = min(n, lo + step)
        _count_groups_block(g[lo:hi], g_off, g_lut, t[lo:hi], t_off, t_lut, p[lo:hi], p_off,
                            p_lut, s, direct, out[c])
    return out


@jit()
def _count_groups_block_weighted(g, g_off, g_lut, t, t_off, t_lut, p, p_off, p_lut, w, s,
                                 direct, acc, cnt):
    """Weighted sums into ``acc`` and counts into ``cnt``, per group (full s x s layout)."""
    buf = np.empty(_BLOCK, dtype=np.intp)
    n = t.shape[0]
    for lo in range(0, n, _BLOCK):
        hi = min(n, lo + _BLOCK)
        wb = w[lo:hi]
        _group_cells(g[lo:hi], g_off, g_lut, t[lo:hi], t_off, t_lut, p[lo:hi], p_off, p_lut,
                     s, s, direct, buf)
        for j in range(hi - lo):
            acc[buf[j]] += wb[j]
            cnt[buf[j]] += 1


@jit(parallel=True)
def _accumulate_group_confusion_weighted(g, g_off, g_lut, t, t_off, t_lut, p, p_off, p_lut,
                                         w, s, direct, n_groups, n_chunks):
    n = t.shape[0]
    size = (n_groups + 1) * s * s
    out = np.zeros((n_chunks, size), dtype=np.float64)
    cnt = np.zeros((n_chunks, size), dtype=np.int64)
    step = (n + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        lo = min(n, c * step)
        hi = min(n, lo + step)
        _count_groups_block_weighted(g[lo:hi], g_off, g_lut, t[lo:hi], t_off, t_lut, p[lo:hi],
                                     p_off, p_lut, w[lo:hi], s, direct, out[c], cnt[c])
    return out, cnt


@jit()
def _kappa_sums_block(t, t_off, t_lut, p, p_off, p_lut, w, weighted, wkind, wmat, s, direct,
                      r, c, obs, cats):
    """Kappa's sums without a table: marginals ``r``/``c`` (K,) and the weighted
    disagreement ``obs[0]`` of the kept rows, and a 4 x 4 tally ``cats`` (flat) of
    the slot kinds (0 class, 1 invalid, 2 ignored, 3 missing) on each side.

    ``wkind`` 0 / 1 / 2 computes the named weights ``[i != j]``, ``|i - j|``,
    ``(i - j)^2`` from the class indices; 3 reads the matrix ``wmat``.  Rows
    carry ``w`` when ``weighted``.  Sums run in row order: no dependence on
    timing or threads.
    """
    k = s - 3
    buf = np.empty(_BLOCK, dtype=np.intp)
    n = t.shape[0]
    acc = 0.0
    for lo in range(0, n, _BLOCK):
        hi = min(n, lo + _BLOCK)
        _cells(t[lo:hi], t_off, t_lut, p[lo:hi], p_off, p_lut, s, direct, buf)
        for j in range(hi - lo):
            ts = buf[j] // s
            ps = buf[j] - ts * s
            if ts < k and ps < k:
                x = w[lo + j] if weighted else 1.0
                r[ts] += x
                c[ps] += x
                if wkind == 0:
                    d = 0.0 if ts == ps else 1.0
                elif wkind == 1:
                    d = float(abs(ts - ps))
                elif wkind == 2:
                    d = float((ts - ps) * (ts - ps))
                else:
                    d = wmat[ts, ps]
                acc += x * d
                cats[0] += 1
            else:
                a = 0 if ts < k else ts - k + 1
                b = 0 if ps < k else ps - k + 1
                cats[a * 4 + b] += 1
    obs[0] += acc


@jit(parallel=True)
def _accumulate_kappa_sums(t, t_off, t_lut, p, p_off, p_lut, w, weighted, wkind, wmat, s,
                           direct, n_chunks):
    """Per-chunk partials of :func:`_kappa_sums_block`: ``(r, c, obs, cats)`` with a
    leading chunk axis (K-length, not K x K: memory independent of K^2)."""
    n = t.shape[0]
    k = s - 3
    r = np.zeros((n_chunks, k), dtype=np.float64)
    c = np.zeros((n_chunks, k), dtype=np.float64)
    obs = np.zeros((n_chunks, 1), dtype=np.float64)
    cats = np.zeros((n_chunks, 16), dtype=np.int64)
    step = (n + n_chunks - 1) // n_chunks
    for ch in prange(n_chunks):
        lo = min(n, ch * step)
        hi = min(n, lo + step)
        _kappa_sums_block(t[lo:hi], t_off, t_lut, p[lo:hi], p_off, p_lut,
                          w[lo:hi] if weighted else w, weighted, wkind, wmat, s, direct,
                          r[ch], c[ch], obs[ch], cats[ch])
    return r, c, obs, cats


# --------------------------------------------------------------------------- serial twins
# Below the parallel threshold a prange region costs more than it saves (and waits
# for busy cores), so every parallel kernel has a serial twin with the same output
# shape, as one chunk. The wrapper picks one with ``_core.dispatch.chunked``.


@jit()
def _weight_stats_serial(w):
    out = np.empty((1, 3), dtype=np.float64)
    r = _weight_stats_block(w)
    out[0, 0] = r[0]
    out[0, 1] = r[1]
    out[0, 2] = r[2]
    return out


@jit(canonical=(0,))
def _minmax_serial(a):
    out = np.empty((1, 2), dtype=np.int64)
    r = _minmax_block(a)
    out[0, 0] = r[0]
    out[0, 1] = r[1]
    return out


def _accumulate_quadratic_sums_serial(a, b, wide):
    """:func:`_accumulate_quadratic_sums` on one thread, from Python (see
    :func:`_accumulate_confusion_serial`)."""
    a, b = canonical_args((a, b), (0, 1))
    return np.array([_quadratic_sums(a, b, wide)], dtype=np.int64)


def _accumulate_confusion_weighted_serial(t, t_off, t_lut, p, p_off, p_lut, w, s, direct):
    """:func:`_accumulate_confusion_weighted` on one thread, from Python (see
    :func:`_accumulate_confusion_serial`)."""
    t, p = canonical_args((t, p), (0, 1))
    out = np.zeros((1, s * s), dtype=np.float64)
    cnt = np.zeros((1, s * s), dtype=np.int64)
    _count_block_weighted(t, t_off, t_lut, p, p_off, p_lut, w, s, direct, out[0], cnt[0])
    return out, cnt


def _accumulate_group_confusion_serial(g, g_off, g_lut, t, t_off, t_lut, p, p_off, p_lut, s,
                                       direct, n_groups):
    """:func:`_accumulate_group_confusion` on one thread, from Python (see
    :func:`_accumulate_confusion_serial`)."""
    g, t, p = canonical_args((g, t, p), (0, 1, 2))
    out = np.zeros((1, (n_groups + 1) * s * s), dtype=np.int64)
    _count_groups_block(g, g_off, g_lut, t, t_off, t_lut, p, p_off, p_lut, s, direct, out[0])
    return out


def _accumulate_group_confusion_weighted_serial(g, g_off, g_lut, t, t_off, t_lut, p, p_off,
                                                p_lut, w, s, direct, n_groups):
    """:func:`_accumulate_group_confusion_weighted` on one thread, from Python (see
    :func:`_accumulate_confusion_serial`)."""
    g, t, p = canonical_args((g, t, p), (0, 1, 2))
    size = (n_groups + 1) * s * s
    out = np.zeros((1, size), dtype=np.float64)
    cnt = np.zeros((1, size), dtype=np.int64)
    _count_groups_block_weighted(g, g_off, g_lut, t, t_off, t_lut, p, p_off, p_lut, w, s,
                                 direct, out[0], cnt[0])
    return out, cnt


def _accumulate_kappa_sums_serial(t, t_off, t_lut, p, p_off, p_lut, w, weighted, wkind, wmat,
                                  s, direct):
    """:func:`_accumulate_kappa_sums` on one thread, from Python (see
    :func:`_accumulate_confusion_serial`)."""
    t, p = canonical_args((t, p), (0, 1))
    k = s - 3
    r = np.zeros((1, k), dtype=np.float64)
    c = np.zeros((1, k), dtype=np.float64)
    obs = np.zeros((1, 1), dtype=np.float64)
    cats = np.zeros((1, 16), dtype=np.int64)
    _kappa_sums_block(t, t_off, t_lut, p, p_off, p_lut, w, weighted, wkind, wmat, s, direct,
                      r[0], c[0], obs[0], cats[0])
    return r, c, obs, cats
