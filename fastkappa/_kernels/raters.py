"""Kernels for agreement among many raters.

Data model
----------
Ratings arrive as a dense ``codes`` matrix (n_items, n_raters) of class
indices, ``-1`` for a missing rating.  :func:`_count_item_classes` turns it
into the item x class table ``r_ik`` in one pass.  Every coefficient is a
smooth function of sums over items of a few per-item *features* (see
``fastkappa.raters``), and items with equal features are interchangeable, so
resampling works on distinct feature rows ("types") with multiplicities:
:func:`_bootstrap_type_moments` draws Multinomial(n_units, type_counts /
n_units) over the types and returns the feature sums of every replicate.

Determinism: replicates are split into ``len(block_seeds)`` fixed blocks, each
with its own xoshiro256+ generator seeded from its block seed (the two-rater
engine's fast exact binomial sampler), so the replicates do not depend on the
number of threads.

Kernels never raise.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import jit
from .sampling import _draw_multinomial_fast, _draw_multinomial_poisson, _rng_init, _uniform


@jit()
def _count_item_classes_block(codes, k, lo, hi, out):
    n_raters = codes.shape[1]
    for i in range(lo, hi):
        for g in range(n_raters):
            c = codes[i, g]
            if c >= 0:
                out[i, c] += 1


@jit(parallel=True)
def _count_item_classes(codes, k, n_chunks):
    """Item x class counts ``r_ik`` (int32, shape (n_items, k)) of a codes matrix.

    ``codes`` holds class indices in 0..k-1 or -1 (missing); the caller has
    validated them.  Rows are split into ``n_chunks`` disjoint blocks, so the
    blocks never write to the same cell.
    """
    n = codes.shape[0]
    out = np.zeros((n, k), dtype=np.int32)
    step = (n + n_chunks - 1) // n_chunks
    for b in prange(n_chunks):
        lo = min(n, b * step)
        hi = min(n, lo + step)
        _count_item_classes_block(codes, k, lo, hi, out)
    return out


@jit()
def _grid_margins(buf, size, base, n_axes, marg):
    """One-way margins of the tensor ``buf[:size]`` into ``marg[axis, digit]``.

    The tensor has ``n_axes`` axes of ``base`` digits, the first axis the most
    significant.  Axes are summed out from the last, in place (entry ``p`` of
    the next level is written after entries ``p * base ...`` were read), so
    ``buf`` is overwritten.
    """
    for r in range(n_axes - 1, -1, -1):
        size //= base
        for d in range(base):
            marg[r, d] = 0
        for p in range(size):
            q = p * base
            s = np.int64(0)
            for d in range(base):
                v = buf[q + d]
                marg[r, d] += v
                s += v
            buf[p] = s


@jit()
def _grid_rater_features(grid, base, n_raters, k, conger_col, light_col, work, marg, out_row):
    """Add Conger's rater columns and Light's rater-pair columns of one replicate.

    ``grid`` holds the replicate's count of every rating row, by key (rater 0
    the most significant digit; digit 0 missing, ``d`` class ``d - 1``) and is
    overwritten.  Conger's column ``conger_col + r k + c`` counts the rows where
    rater ``r`` gave class ``c``: the one-way margins of the grid.  Light's
    column ``light_col + p k^2 + c k + e`` counts the rows where pair ``p = (g,
    h)`` (``g < h``, in ``triu`` order) gave ``c`` and ``e``: for each ``h``
    from the last, the one-way margins of each slice of rater ``h``'s classes
    over raters ``0..h-1``, after which rater ``h`` is summed out.  A few
    sequential passes over the grid instead of one scattered add per rater
    (or pair) and row.
    """
    size = grid.shape[0]
    if conger_col >= 0:
        src = grid
        if light_col >= 0:  # Light reads the grid after this
            for i in range(size):
                work[i] = grid[i]
            src = work
        _grid_margins(src, size, base, n_raters, marg)
        for r in range(n_raters):
            for d in range(1, base):
                out_row[conger_col + r * k + d - 1] += np.float64(marg[r, d])
    if light_col >= 0:
        kk = k * k
        for h in range(n_raters - 1, 0, -1):
            sub = size // base  # grid[:size] holds the counts over raters 0..h
            for dh in range(1, base):
                for q in range(sub):
                    work[q] = grid[q * base + dh]
                _grid_margins(work, sub, base, h, marg)
                for g in range(h):
                    pair = g * (2 * n_raters - g - 1) // 2 + h - g - 1
                    col = light_col + pair * kk + dh - 1
                    for dg in range(1, base):
                        out_row[col + (dg - 1) * k] += np.float64(marg[g, dg])
            for q in range(sub):
                s = np.int64(0)
                for d in range(base):
                    s += grid[q * base + d]
                grid[q] = s
            size = sub


@jit()
def _moment_features(draws, dense_of, dense, sp_idx, sp_val, group_draws, out_row):
    """Add the features of one replicate's type counts ``draws`` to ``out_row``.

    Features are ``dense[dense_of[t]]`` (the first columns: types sharing a
    dense row are added up first, then each dense row once) plus sparse
    entries ``sp_val[t, e]`` at columns ``sp_idx[t, e]`` (-1: none; ``sp_val``
    with no columns: every entry is 1, as Conger's one-hot rater columns).
    ``group_draws`` (one per dense row) is scratch.
    """
    n_types = draws.shape[0]
    n_groups = dense.shape[0]
    n_dense = dense.shape[1]
    n_sparse = sp_idx.shape[1]
    unit_values = sp_val.shape[1] == 0
    for g in range(n_groups):
        group_draws[g] = 0
    for t in range(n_types):
        m = draws[t]
        if m != 0:
            group_draws[dense_of[t]] += m
            fm = np.float64(m)
            for e in range(n_sparse):
                c = sp_idx[t, e]
                if c >= 0:
                    if unit_values:
                        out_row[c] += fm
                    else:
                        out_row[c] += fm * sp_val[t, e]
    for g in range(n_groups):
        m = group_draws[g]
        if m != 0:
            fm = np.float64(m)
            for j in range(n_dense):
                out_row[j] += fm * dense[g, j]


@jit()
def _grid_features(draws, grid_key, grid_spec, gbuf, work, marg, out_row):
    """Add Conger's and Light's columns of one replicate's type counts ``draws``
    from its grid of rating rows (:func:`_grid_rater_features`): ``grid_key``
    is the key of each rating-row type, ``grid_spec`` = ``(base, n_raters, k,
    conger_col, light_col)``; ``gbuf`` and ``work`` hold a grid each, ``marg``
    is (n_raters, base)."""
    for i in range(gbuf.shape[0]):
        gbuf[i] = 0
    for t in range(draws.shape[0]):
        gbuf[grid_key[t]] = draws[t]
    _grid_rater_features(gbuf, grid_spec[0], grid_spec[1], grid_spec[2], grid_spec[3],
                         grid_spec[4], work, marg, out_row)


# The three blocks below draw replicates lo..hi in three ways and add up their
# features (:func:`_moment_features`), from a generator seeded with ``seed``
# when ``fresh`` (else ``state`` goes on: replicate by replicate, one block
# draws what a single call over lo..hi draws).  They take the same arguments,
# so that a caller picks one without compiling the others: ``type_counts,
# total, n_units, unit_type, poisson, dense_of, dense, sp_idx, sp_val, lo, hi,
# draws, group_draws, seed, fresh, state, out``; ``state`` (uint64 (4,)),
# ``draws`` (one per type: the last replicate's type counts on return) and
# ``group_draws`` are scratch.  No grid: the driver adds its columns.


@jit()
def _moments_block_binomial(type_counts, total, n_units, unit_type, poisson, dense_of, dense,
                            sp_idx, sp_val, lo, hi, draws, group_draws, seed, fresh, state,
                            out):
    """Type counts ~ Multinomial(n_units, type_counts / total): one binomial per type."""
    if fresh:
        _rng_init(seed, state)
    for rep in range(lo, hi):
        _draw_multinomial_fast(type_counts, total, n_units, draws, state)
        _moment_features(draws, dense_of, dense, sp_idx, sp_val, group_draws, out[rep])


@jit()
def _moments_block_poisson(type_counts, total, n_units, unit_type, poisson, dense_of, dense,
                           sp_idx, sp_val, lo, hi, draws, group_draws, seed, fresh, state,
                           out):
    """The same multinomial through ``poisson`` tables (a tuple of non-empty
    arrays, see ``_kernels.sampling._draw_multinomial_poisson``): one table
    look-up per type."""
    if fresh:
        _rng_init(seed, state)
    for rep in range(lo, hi):
        _draw_multinomial_poisson(poisson[0], poisson[1], poisson[2], poisson[3],
                                  poisson[4], poisson[5], poisson[6], n_units, draws, state)
        _moment_features(draws, dense_of, dense, sp_idx, sp_val, group_draws, out[rep])


@jit()
def _moments_block_units(type_counts, total, n_units, unit_type, poisson, dense_of, dense,
                         sp_idx, sp_val, lo, hi, draws, group_draws, seed, fresh, state, out):
    """Type counts from ``n_units`` uniform draws of units, ``unit_type`` the
    type of each (cheaper when almost every unit is its own type)."""
    n_types = type_counts.shape[0]
    fn = np.float64(n_units)
    if fresh:
        _rng_init(seed, state)
    for rep in range(lo, hi):
        for t in range(n_types):
            draws[t] = 0
        for _ in range(n_units):
            u = min(np.int64(_uniform(state) * fn), n_units - 1)
            draws[unit_type[u]] += 1
        _moment_features(draws, dense_of, dense, sp_idx, sp_val, group_draws, out[rep])


@jit()
def _moments_block(type_counts, total, n_units, unit_type, poisson, dense_of, dense, sp_idx,
                   sp_val, lo, hi, draws, group_draws, seed, fresh, state, out):
    """The block of the draw in use: unit draws when ``unit_type`` is given, else
    Poisson tables when given, else binomials."""
    if unit_type.shape[0] > 0:
        _moments_block_units(type_counts, total, n_units, unit_type, poisson, dense_of, dense,
                             sp_idx, sp_val, lo, hi, draws, group_draws, seed, fresh, state,
                             out)
    elif poisson[0].shape[0] > 0:
        _moments_block_poisson(type_counts, total, n_units, unit_type, poisson, dense_of, dense,
                               sp_idx, sp_val, lo, hi, draws, group_draws, seed, fresh, state,
                               out)
    else:
        _moments_block_binomial(type_counts, total, n_units, unit_type, poisson, dense_of,
                                dense, sp_idx, sp_val, lo, hi, draws, group_draws, seed, fresh,
                                state, out)


@jit()
def _moments_setup(type_counts, n_feat, n_rep, block_seeds):
    """Total units, the zeroed output, the number of blocks and replicates per block."""
    total = np.int64(0)
    for t in range(type_counts.shape[0]):
        total += np.int64(type_counts[t])
    out = np.zeros((n_rep, n_feat), dtype=np.float64)
    n_blocks = block_seeds.shape[0]
    return total, out, n_blocks, (n_rep + n_blocks - 1) // n_blocks


@jit()
def _grid_buffers(grid_key, grid_spec):
    """The grid scratch of one block: two grids and the margins (empty without a grid)."""
    if grid_key.shape[0] == 0:
        return (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64),
                np.empty((0, 0), dtype=np.int64))
    size = np.int64(1)
    for _ in range(grid_spec[1]):
        size *= grid_spec[0]
    return (np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64),
            np.empty((grid_spec[1], grid_spec[0]), dtype=np.int64))


@jit(parallel=True, serial_twin=True)
def _bootstrap_type_moments(type_counts, dense_of, dense, sp_idx, sp_val, n_feat, unit_type,
                            poisson, grid_key, grid_spec, n_units, n_rep, block_seeds):
    """Feature sums of ``n_rep`` item (or cluster) bootstrap replicates.

    A replicate draws ``n_units`` units with replacement, that is type counts
    ~ Multinomial(n_units, type_counts / sum(type_counts)), and returns
    ``sum_t m_t * features[t]``: an (n_rep, n_feat) float64 array (features
    as in :func:`_moment_features`, and with a ``grid_key`` Conger's and
    Light's columns from the grid of each replicate, :func:`_grid_features`).
    Put the most frequent types first (the draw stops once every unit is
    placed).
    """
    n_types = type_counts.shape[0]
    total, out, n_blocks, step = _moments_setup(type_counts, n_feat, n_rep, block_seeds)
    for b in prange(n_blocks):
        state = np.empty(4, dtype=np.uint64)
        draws = np.zeros(n_types, dtype=np.int64)
        group_draws = np.zeros(dense.shape[0], dtype=np.int64)
        gbuf, work, marg = _grid_buffers(grid_key, grid_spec)
        lo = min(n_rep, b * step)
        hi = min(n_rep, lo + step)
        if grid_key.shape[0] == 0:
            _moments_block(type_counts, total, n_units, unit_type, poisson, dense_of, dense,
                           sp_idx, sp_val, lo, hi, draws, group_draws, block_seeds[b], True,
                           state, out)
        else:  # one replicate at a time, its grid columns after it
            for rep in range(lo, hi):
                _moments_block(type_counts, total, n_units, unit_type, poisson, dense_of,
                               dense, sp_idx, sp_val, rep, rep + 1, draws, group_draws,
                               block_seeds[b], rep == lo, state, out)
                _grid_features(draws, grid_key, grid_spec, gbuf, work, marg, out[rep])
    return out


@jit()
def _count_item_classes_serial(codes, k):
    """:func:`_count_item_classes` on one thread (small inputs)."""
    out = np.zeros((codes.shape[0], k), dtype=np.int32)
    _count_item_classes_block(codes, k, np.int64(0), codes.shape[0], out)
    return out


_bootstrap_type_moments_serial = _bootstrap_type_moments.serial


# --------------------------------------------------------------------------- numeric input


@jit()
def _encode_numeric_block(x, off, lut, k, has_missing, missing, lo_row, hi_row, codes, counts,
                          per_item, per_class, per_rater):
    """Encode rows lo..hi; also ratings per item, and per class and rater (this block)."""
    invalid = 0
    n_raters = x.shape[1]
    for i in range(lo_row, hi_row):
        m = 0
        for g in range(n_raters):
            v = np.float64(x[i, g])
            if v != v or (has_missing and v == missing):
                codes[i, g] = -1
                continue
            iv = np.int64(v)
            s = lut[iv - off]
            if s >= k or np.float64(iv) != v:  # not a class, or not a whole number
                invalid += 1
                codes[i, g] = -1
            else:
                codes[i, g] = s
                counts[i, s] += 1
                per_class[s] += 1
                per_rater[g] += 1
                m += 1
        per_item[i] = m
    return invalid


@jit(parallel=True)
def _encode_numeric(x, off, lut, k, has_missing, missing, n_chunks):
    """Class codes (int32, -1 missing) and item x class counts of whole-number ratings.

    ``lut[v - off]`` is the class of value ``v`` (``k``: not a class); the
    caller has checked that every present value lies inside the table, and
    a value that is not a whole number counts as invalid.  Returns ``(codes,
    counts, n_invalid, per_item, per_class, per_rater)``: the last three as
    :func:`_table_summary` gives them.
    """
    n, n_raters = x.shape
    codes = np.empty(x.shape, dtype=np.int32)
    counts = np.zeros((n, k), dtype=np.int32)
    per_item = np.empty(n, dtype=np.int64)
    per_class = np.zeros((n_chunks, k), dtype=np.int64)
    per_rater = np.zeros((n_chunks, n_raters), dtype=np.int64)
    invalid = np.zeros(n_chunks, dtype=np.int64)
    step = (n + n_chunks - 1) // n_chunks
    for b in prange(n_chunks):
        lo = min(n, b * step)
        hi = min(n, lo + step)
        invalid[b] = _encode_numeric_block(x, off, lut, k, has_missing, missing, lo, hi,
                                           codes, counts, per_item, per_class[b],
                                           per_rater[b])
    return (codes, counts, invalid.sum(), per_item, per_class.sum(axis=0),
            per_rater.sum(axis=0))


@jit()
def _scan_float_block(flat, lo_j, hi_j, has_missing, missing, out):
    """(min, max, #bad) of the present values of ``flat[lo_j:hi_j]`` (float input).

    A value is present unless NaN or equal to ``missing``; it is bad unless it
    is a whole number below 2**62 in magnitude (so inf is bad).  Branch-free,
    in integers, so that the loop vectorises.
    """
    big = np.int64(1) << 62
    lo = big
    hi = -big
    bad = np.int64(0)
    seg = flat[lo_j:hi_j]  # a loop over a whole array vectorises; over lo..hi it did not
    for j in range(seg.shape[0]):
        v = np.float64(seg[j])
        present = (v == v) & ((not has_missing) | (v != missing))
        w = v if present else 0.0
        iv = np.int64(min(max(w, -4.6e18), 4.6e18))  # clamped: inf stays bad
        bad += np.int64(np.float64(iv) != w)
        lo = min(lo, iv if present else big)
        hi = max(hi, iv if present else -big)
    out[0] = lo
    out[1] = hi
    out[2] = bad


@jit()
def _scan_int_block(flat, lo_j, hi_j, has_missing, missing, out):
    """(min, max, 0) of the present values of ``flat[lo_j:hi_j]`` (integer input)."""
    big = np.int64(1) << 62
    lo = big
    hi = -big
    miss = np.int64(missing) if has_missing else np.int64(0)
    seg = flat[lo_j:hi_j]
    for j in range(seg.shape[0]):
        v = np.int64(seg[j])
        present = (not has_missing) | (v != miss)
        lo = min(lo, v if present else big)
        hi = max(hi, v if present else -big)
    out[0] = lo
    out[1] = hi
    out[2] = 0


@jit(parallel=True)
def _scan_values(flat, is_float, has_missing, missing, n_chunks):
    """Per-block (min, max, #bad) of a 1-D array of ratings: (n_chunks, 3) int64."""
    n = flat.shape[0]
    out = np.zeros((n_chunks, 3), dtype=np.int64)
    step = (n + n_chunks - 1) // n_chunks
    for b in prange(n_chunks):
        lo = min(n, b * step)
        hi = min(n, lo + step)
        if is_float:
            _scan_float_block(flat, lo, hi, has_missing, missing, out[b])
        else:
            _scan_int_block(flat, lo, hi, has_missing, missing, out[b])
    return out


@jit()
def _pattern_keys_block(x, first, base, missing, lo_row, hi_row, keys, cnt):
    """Rating-pattern key of rows lo..hi, counted into ``cnt``.

    The key of a row is ``sum_g (x[i, g] - first + 1) * base**g`` over its
    present ratings (not NaN, not equal to ``missing``; pass NaN for no
    marker), so equal keys are equal rating rows and key 0 is an item
    without any rating.  The caller has checked that every present value is
    a whole number in ``first .. first + base - 2``; the sum is exact in
    float64 (keys stay below 2**31).  Branch-free: missing ratings are
    frequent and scattered.
    """
    n_raters = x.shape[1]
    shift = 1.0 - np.float64(first)
    fbase = np.float64(base)
    for i in range(lo_row, hi_row):
        key = 0.0
        m = 1.0
        for g in range(n_raters):
            v = np.float64(x[i, g])
            d = v + shift
            key += (d if (v == v) & (v != missing) else 0.0) * m
            m *= fbase
        keys[i] = np.int32(key)
    for i in range(lo_row, hi_row):
        cnt[keys[i]] += 1


@jit(parallel=True)
def _pattern_keys(x, first, base, missing, n_space, n_chunks):
    """:func:`_pattern_keys_block` over fixed row blocks: (keys int32, counts per key)."""
    n = x.shape[0]
    keys = np.empty(n, dtype=np.int32)
    cnt = np.zeros((n_chunks, n_space), dtype=np.int64)
    step = (n + n_chunks - 1) // n_chunks
    for b in prange(n_chunks):
        lo = min(n, b * step)
        hi = min(n, lo + step)
        _pattern_keys_block(x, first, base, missing, lo, hi, keys, cnt[b])
    return keys, cnt.sum(axis=0)


@jit()
def _row_keys(mat, lo, base):
    """Mixed-radix key ``sum_j (mat[i, j] - lo) * base**j`` of each row (int64).

    The caller checks that ``base ** n_columns`` fits in int64.
    """
    n, p = mat.shape
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        key = np.int64(0)
        mult = np.int64(1)
        for j in range(p):
            key += (np.int64(mat[i, j]) - lo) * mult
            mult *= base
        out[i] = key
    return out


@jit()
def _table_summary(codes, table):
    """Ratings per item (int64), per class and per rater, in one pass."""
    n, k = table.shape
    n_raters = codes.shape[1]
    per_item = np.zeros(n, dtype=np.int64)
    per_class = np.zeros(k, dtype=np.int64)
    per_rater = np.zeros(n_raters, dtype=np.int64)
    for i in range(n):
        s = np.int64(0)
        for c in range(k):
            v = np.int64(table[i, c])
            s += v
            per_class[c] += v
        per_item[i] = s
        for g in range(n_raters):
            if codes[i, g] >= 0:
                per_rater[g] += 1
    return per_item, per_class, per_rater


@jit()
def _dense_key_counts(key, n_keys):
    """Occurrences of each key in 0..n_keys-1 and the first row holding it (-1: none)."""
    counts = np.zeros(n_keys, dtype=np.int64)
    first = np.full(n_keys, -1, dtype=np.int64)
    for i in range(key.shape[0]):
        v = key[i]
        if counts[v] == 0:
            first[v] = i
        counts[v] += 1
    return counts, first


@jit()
def _cluster_features(cluster, item_type, features, n_clusters):
    """Sum of the features of each cluster's items: (n_clusters, n_features).

    ``cluster[i]`` and ``item_type[i]`` are item i's cluster and type (both
    only for scored items).
    """
    n_feat = features.shape[1]
    out = np.zeros((n_clusters, n_feat), dtype=np.float64)
    for i in range(cluster.shape[0]):
        c = cluster[i]
        t = item_type[i]
        for j in range(n_feat):
            out[c, j] += features[t, j]
    return out


@jit()
def _write_ratings(codes, item, rater, slots):
    """Write ``slots + 1`` at ``codes[item, rater]`` unless a pair is already there.

    ``codes`` holds class code + 1, ``-1`` for a pair seen with a missing
    label, and 0 where no row of the pair came yet (so that a grown table is
    zeroed memory).  A pair seen before, with a label or without, is a
    duplicate, as it is for the one-shot functions.  Returns the number of
    (item, rater) pairs seen before or twice in this batch; when it is not 0
    nothing is written (the table is left as it was).
    """
    n = item.shape[0]
    dup = 0
    wrote = np.zeros(n, dtype=np.bool_)
    for j in range(n):
        i = item[j]
        r = rater[j]
        if codes[i, r] != 0:
            dup += 1
        else:
            s = slots[j] + 1
            codes[i, r] = s if s > 0 else -1
            wrote[j] = True
    if dup != 0:
        for j in range(n):
            if wrote[j]:
                codes[item[j], rater[j]] = 0
    return dup


@jit()
def _direct_codes(ids, base, dmap, first_code, new_ids, out):
    """Codes of integer ids through a direct map: ``dmap[id - base]`` is the
    id's code + 1 (0: unseen).

    One pass: ids not seen before get the codes ``first_code,
    first_code + 1, ...`` in order of first appearance (their ids go to
    ``new_ids``).  Writes each row's code to ``out``; returns the number of
    new ids.
    """
    code = first_code
    for j in range(ids.shape[0]):
        v = ids[j] - base
        c = dmap[v]
        if c == 0:
            new_ids[code - first_code] = ids[j]
            code += 1
            c = code
            dmap[v] = c
        out[j] = c - 1
    return code - first_code
