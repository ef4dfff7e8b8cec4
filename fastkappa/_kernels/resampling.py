"""Resampling kernels: bootstrap replicates and jackknife values of kappa.

Data model
----------
Every resampling path works on *units* (rows, or clusters of rows) that are
drawn with replacement.  A unit owns a sparse table over ``J`` *joint cells*:
entries ``(cell, value)`` where ``value`` is a count or a sum of sample
weights.  Units with identical tables are interchangeable, so they are
collapsed into *types* stored in CSR form::

    type_counts[t]                  how many units have type t
    type_ptr[t]:type_ptr[t + 1]     the entries of type t's table
    type_cell[e], type_val[e]       joint cell and value of entry e

Resampling ``n_units`` units with replacement gives type counts distributed
Multinomial(n_units, type_counts / n_units) exactly, so a replicate costs one
binomial draw per type (iid rows without weights: the types are the K*K
cells of the confusion matrix).

A joint cell maps to one cell of each of ``M`` confusion matrices:
``(cell_t[j], cell_p[j, m])`` for model ``m``.  One model (``M = 1``,
``cell_p[j, 0]``) is the plain kappa; several models share the resampled
rows, which is what a paired comparison needs.

Determinism
-----------
Replicates are split into ``len(block_seeds)`` fixed blocks.  Each block
seeds a generator of its own (xoshiro256+, ``_kernels.sampling``) at its start
and draws all of its replicates inside one ``prange`` iteration, so the result
does not depend on the number of threads or on which thread runs a block.
The ``*_block`` functions hold one block's work; each driver's ``*_serial``
twin is the same function compiled without ``parallel`` (``jit(...,
serial_twin=True)``), which runs the same blocks in order on one thread and
gives identical results (cheaper than a parallel launch for small jobs).

Building blocks for other statistics (e.g. a paired comparison of several
models): the draws of ``_kernels.sampling``, :func:`_kappas_from_joint` (the M
kappas of a joint table); the leave-one-unit-out values of BCa are computed in
NumPy (``_core.units.jackknife_kappas``).

Kernels never raise: an undefined kappa (zero expected disagreement) is nan.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import jit
from .sampling import (
    _draw_multinomial_fast,
    _draw_multinomial_poisson,
    _rng_init,
    _uniform,
)

# --------------------------------------------------------------------------- kappa


@jit()
def _kappas_from_joint(joint, cell_t, cell_p, k, wmat, r, c, out):
    """Kappa of each model from joint cell totals ``joint`` (J,) into ``out`` (M,).

    ``kappa = 1 - N * sum(w * O) / (r @ w @ c)``; nan when the expected
    disagreement ``r @ w @ c`` is not positive.  ``r`` and ``c`` are (K,)
    scratch buffers.
    """
    n_cells = joint.shape[0]
    n_models = cell_p.shape[1]
    for m in range(n_models):
        for a in range(k):
            r[a] = 0.0
            c[a] = 0.0
        s = 0.0
        n = 0.0
        for j in range(n_cells):
            v = joint[j]
            if v != 0.0:
                a = cell_t[j]
                b = cell_p[j, m]
                r[a] += v
                c[b] += v
                s += v * wmat[a, b]
                n += v
        e = 0.0
        for a in range(k):
            ra = r[a]
            if ra != 0.0:
                acc = 0.0
                for b in range(k):
                    acc += wmat[a, b] * c[b]
                e += ra * acc
        if e > 0.0:
            out[m] = 1.0 - n * s / e
        else:
            out[m] = np.nan


@jit()
def _accumulate_types(drawn, type_ptr, type_cell, type_val, joint):
    """``joint[:] = sum_t drawn[t] * table_t`` (types in order, entries in order)."""
    for j in range(joint.shape[0]):
        joint[j] = 0.0
    for t in range(drawn.shape[0]):
        d = drawn[t]
        if d != 0:
            fd = np.float64(d)
            for e in range(type_ptr[t], type_ptr[t + 1]):
                joint[type_cell[e]] += fd * type_val[e]


# --------------------------------------------------------------------------- bootstrap


def _types_scratch(type_counts, type_ptr, type_cell, type_val, n_units, cell_t, cell_p, k,
                   wmat):
    """The scratch of :func:`_types_block`: the generator's state, the drawn
    counts per type, the joint table and two K-vectors of margins.  Allocated
    by the caller, so that a fresh process running the block from Python
    compiles no array allocation with it."""
    return (np.empty(4, dtype=np.uint64), np.empty(type_counts.shape[0], dtype=np.int64),
            np.empty(cell_t.shape[0], dtype=np.float64), np.empty(k, dtype=np.float64),
            np.empty(k, dtype=np.float64))


@jit()
def _types_block(type_counts, type_ptr, type_cell, type_val, n_units, cell_t, cell_p, k,
                 wmat, seed, lo, hi, out, state, drawn, joint, r, c):
    """Replicates ``lo:hi`` of :func:`_bootstrap_kappa_types`, from one seed.

    ``state, drawn, joint, r, c`` are scratch (:func:`_types_scratch`); every
    replicate overwrites them.  Returns 0, or -1 (nothing drawn) when one is
    shorter than that.
    """
    if (state.shape[0] < 4 or drawn.shape[0] < type_counts.shape[0]
            or joint.shape[0] < cell_t.shape[0] or r.shape[0] < k or c.shape[0] < k):
        return -1
    _rng_init(seed, state)
    for rep in range(lo, hi):
        _draw_multinomial_fast(type_counts, n_units, n_units, drawn, state)
        _accumulate_types(drawn, type_ptr, type_cell, type_val, joint)
        _kappas_from_joint(joint, cell_t, cell_p, k, wmat, r, c, out[rep])
    return 0


@jit(parallel=True, serial_twin=True)
def _bootstrap_kappa_types(type_counts, type_ptr, type_cell, type_val, n_units, cell_t,
                           cell_p, k, wmat, n_rep, block_seeds):
    """Bootstrap kappas by a multinomial draw over unit types: (n_rep, M).

    Cost per replicate: one binomial per type, the entries of the drawn
    types, and O(M K^2) for the kappas; memory O(J + T) per block.
    """
    out = np.empty((n_rep, cell_p.shape[1]), dtype=np.float64)
    n_blocks = block_seeds.shape[0]
    step = (n_rep + n_blocks - 1) // n_blocks
    for b in prange(n_blocks):
        lo = min(n_rep, b * step)
        hi = min(n_rep, lo + step)
        _types_block(type_counts, type_ptr, type_cell, type_val, n_units, cell_t, cell_p, k,
                     wmat, block_seeds[b], lo, hi, out, np.empty(4, dtype=np.uint64),
                     np.empty(type_counts.shape[0], dtype=np.int64),
                     np.empty(cell_t.shape[0], dtype=np.float64),
                     np.empty(k, dtype=np.float64), np.empty(k, dtype=np.float64))
    return out


_bootstrap_kappa_types_serial = _bootstrap_kappa_types.serial


@jit()
def _units_block(unit_type, type_ptr, type_cell, type_val, cell_t, cell_p, k, wmat, seed,
                 lo, hi, out):
    """Replicates ``lo:hi`` of :func:`_bootstrap_kappa_units`, from one seed.

    The drawn units are first counted per type (one increment each), then
    the types are swept in order, each drawn type's entries added once with
    its count: the tables are read in sequence, not at random per draw.
    """
    state = np.empty(4, dtype=np.uint64)
    _rng_init(seed, state)
    n_units = unit_type.shape[0]
    n_types = type_ptr.shape[0] - 1
    fn = np.float64(n_units)
    n_cells = cell_t.shape[0]
    joint = np.empty(n_cells, dtype=np.float64)
    drawn = np.zeros(n_types, dtype=np.int64)
    r = np.empty(k, dtype=np.float64)
    c = np.empty(k, dtype=np.float64)
    for rep in range(lo, hi):
        for _ in range(n_units):
            drawn[unit_type[min(np.int64(_uniform(state) * fn), n_units - 1)]] += 1
        _accumulate_types(drawn, type_ptr, type_cell, type_val, joint)
        for t in range(n_types):
            drawn[t] = 0
        _kappas_from_joint(joint, cell_t, cell_p, k, wmat, r, c, out[rep])


@jit(parallel=True, serial_twin=True)
def _bootstrap_kappa_units(unit_type, type_ptr, type_cell, type_val, cell_t, cell_p, k,
                           wmat, n_rep, block_seeds):
    """Bootstrap kappas by drawing unit indices with replacement: (n_rep, M).

    ``unit_type[u]`` is the type of unit ``u``.  O(n_units + entries) per
    replicate; used when almost every unit has its own type, and as a
    reference for :func:`_bootstrap_kappa_types`.
    """
    out = np.empty((n_rep, cell_p.shape[1]), dtype=np.float64)
    n_blocks = block_seeds.shape[0]
    step = (n_rep + n_blocks - 1) // n_blocks
    for b in prange(n_blocks):
        lo = min(n_rep, b * step)
        hi = min(n_rep, lo + step)
        _units_block(unit_type, type_ptr, type_cell, type_val, cell_t, cell_p, k, wmat,
                     block_seeds[b], lo, hi, out)
    return out


_bootstrap_kappa_units_serial = _bootstrap_kappa_units.serial


# --------------------------------------------------------------------------- jackknife


# --------------------------------------------------------------------------- types


@jit(inline=True)
def _same_table(unit_ptr, unit_cell, unit_bits, u, v):
    lu = unit_ptr[u + 1] - unit_ptr[u]
    if lu != unit_ptr[v + 1] - unit_ptr[v]:
        return False
    for i in range(lu):
        eu = unit_ptr[u] + i
        ev = unit_ptr[v] + i
        if unit_cell[eu] != unit_cell[ev] or unit_bits[eu] != unit_bits[ev]:
            return False
    return True


@jit()
def _assign_types(order, h1, h2, unit_ptr, unit_cell, unit_bits):
    """Exact types of units visited in hash order: (unit_type, representatives).

    Units with equal hashes are compared entry by entry, so a hash collision
    can never merge two different tables.
    """
    n_units = order.shape[0]
    unit_type = np.empty(n_units, dtype=np.int64)
    reps = np.empty(n_units, dtype=np.int64)
    n_types = 0
    run_start = 0  # first type id of the current run of equal hashes
    for i in range(n_units):
        u = order[i]
        if i == 0 or h1[u] != h1[order[i - 1]] or h2[u] != h2[order[i - 1]]:
            run_start = n_types
        found = -1
        for t in range(run_start, n_types):
            if _same_table(unit_ptr, unit_cell, unit_bits, u, reps[t]):
                found = t
                break
        if found < 0:
            reps[n_types] = u
            found = n_types
            n_types += 1
        unit_type[u] = found
    return unit_type, reps[:n_types].copy()


# --------------------------------------------------------------------------- many classes
#
# With many classes the dense path above costs O(K^2) per replicate (the
# expected term ``r @ w @ c``) and one binomial per occupied cell.  The kernels
# below keep a replicate at O(occupied cells + K): binomials or Poisson
# variates topped up to N (``_kernels.sampling``),
# each cell's classes and weight read from flat arrays, and the expected term in
# O(K) for the named weights (``wkind``: 0 a custom matrix, 1 unweighted, 2
# linear, 3 quadratic).


@jit()
def _expected_disagreement(r, c, k, n, wmat, wkind):
    """``r @ w @ c``: O(K) for the named weights, O(K * rows in use) for a matrix.

    Integer margins give exactly the dense sum's value while the products stay
    below 2**53 (the quadratic form switches to a centred one beyond that).
    """
    e = 0.0
    if wkind == 1:  # 1 - [a == b]
        for a in range(k):
            if r[a] != 0.0:
                e += r[a] * (n - c[a])
    elif wkind == 2:  # |a - b|
        s_all = 0.0
        for b in range(k):
            s_all += b * c[b]
        below = 0.0  # sum_{b < a} c_b
        s_below = 0.0  # sum_{b < a} b c_b
        for a in range(k):
            if r[a] != 0.0:
                e += r[a] * (2.0 * (a * below - s_below) + s_all - a * n)
            below += c[a]
            s_below += a * c[a]
    elif wkind == 3:  # (a - b)^2
        sx = 0.0
        sy = 0.0
        sx2 = 0.0
        sy2 = 0.0
        for a in range(k):
            fa = np.float64(a)
            sx += fa * r[a]
            sx2 += fa * fa * r[a]
            sy += fa * c[a]
            sy2 += fa * fa * c[a]
        if n * n * (k - 1.0) * (k - 1.0) < 9007199254740992.0:
            e = n * sx2 + n * sy2 - 2.0 * sx * sy
        else:  # centred sums: no cancellation when the classes barely vary
            mx = sx / n
            my = sy / n
            vx = 0.0
            vy = 0.0
            for a in range(k):
                vx += r[a] * (a - mx) * (a - mx)
                vy += c[a] * (a - my) * (a - my)
            e = n * (vx + vy) + n * n * (mx - my) * (mx - my)
    else:
        for a in range(k):
            ra = r[a]
            if ra != 0.0:
                acc = 0.0
                for b in range(k):
                    acc += wmat[a, b] * c[b]
                e += ra * acc
    return e


@jit()
def _cell_coordinates(type_cell, cell_t, cell_p, wmat):
    """Per occupied cell ``t`` and model ``m``: its row class ``ta[t]``, column class
    ``tb[t, m]`` and weight ``tw[t, m]``, read once so that a replicate walks
    three flat arrays (a (K, K) weight matrix does not fit in cache at large K)."""
    n_types = type_cell.shape[0]
    n_models = cell_p.shape[1]
    ta = np.empty(n_types, dtype=np.int64)
    tb = np.empty((n_types, n_models), dtype=np.int64)
    tw = np.empty((n_types, n_models), dtype=np.float64)
    for t in range(n_types):
        j = type_cell[t]
        ta[t] = cell_t[j]
        for m in range(n_models):
            tb[t, m] = cell_p[j, m]
            tw[t, m] = wmat[ta[t], tb[t, m]]
    return ta, tb, tw


@jit()
def _kappas_of_cells(drawn, ta, tb, tw, k, wmat, wkind, r, c, out):
    """Kappa of each model from per-cell counts ``drawn`` (T,) into ``out`` (M,).

    Units of kind "cells": type ``t`` is one row in the cell of
    :func:`_cell_coordinates` ``(ta[t], tb[t, m])`` with weight ``tw[t, m]``.
    O(T + K) per model for the named weights.
    """
    n_types = drawn.shape[0]
    for m in range(tb.shape[1]):
        for a in range(k):
            r[a] = 0.0
            c[a] = 0.0
        s = 0.0
        n = 0.0
        for t in range(n_types):
            v = np.float64(drawn[t])
            r[ta[t]] += v
            c[tb[t, m]] += v
            s += v * tw[t, m]
            n += v
        e = _expected_disagreement(r, c, k, n, wmat, wkind)
        if e > 0.0:
            out[m] = 1.0 - n * s / e
        else:
            out[m] = np.nan


@jit()
def _full_kappas_of_cells(type_counts, type_cell, cell_t, cell_p, k, wmat, wkind):
    """Kappas of the full data computed exactly as :func:`_cells_block` computes a
    replicate (BCa counts ties with the estimate)."""
    out = np.empty(cell_p.shape[1], dtype=np.float64)
    r = np.empty(k, dtype=np.float64)
    c = np.empty(k, dtype=np.float64)
    ta, tb, tw = _cell_coordinates(type_cell, cell_t, cell_p, wmat)
    _kappas_of_cells(type_counts, ta, tb, tw, k, wmat, wkind, r, c, out)
    return out


@jit()
def _cells_block(type_counts, type_cell, n_units, cell_t, cell_p, k, wmat, wkind, seed,
                 lo, hi, out):
    """Replicates ``lo:hi`` of :func:`_bootstrap_kappa_cells`, from one seed."""
    state = np.empty(4, dtype=np.uint64)
    _rng_init(seed, state)
    drawn = np.empty(type_counts.shape[0], dtype=np.int64)
    r = np.empty(k, dtype=np.float64)
    c = np.empty(k, dtype=np.float64)
    ta, tb, tw = _cell_coordinates(type_cell, cell_t, cell_p, wmat)
    for rep in range(lo, hi):
        _draw_multinomial_fast(type_counts, n_units, n_units, drawn, state)
        _kappas_of_cells(drawn, ta, tb, tw, k, wmat, wkind, r, c, out[rep])


@jit(parallel=True, serial_twin=True)
def _bootstrap_kappa_cells(type_counts, type_cell, n_units, cell_t, cell_p, k, wmat, wkind,
                           n_rep, block_seeds):
    """Bootstrap kappas of iid rows over the occupied cells only: (n_rep, M).

    One exact fast binomial per occupied cell and O(cells + K) for each
    model's kappa; memory O(cells + K) per block.
    """
    out = np.empty((n_rep, cell_p.shape[1]), dtype=np.float64)
    n_blocks = block_seeds.shape[0]
    step = (n_rep + n_blocks - 1) // n_blocks
    for b in prange(n_blocks):
        lo = min(n_rep, b * step)
        hi = min(n_rep, lo + step)
        _cells_block(type_counts, type_cell, n_units, cell_t, cell_p, k, wmat, wkind,
                     block_seeds[b], lo, hi, out)
    return out


_bootstrap_kappa_cells_serial = _bootstrap_kappa_cells.serial


@jit()
def _cells_poisson_block(tab_of, tables_lo, tables_ptr, prob, alias, cell_prob, cell_alias,
                         n_units, type_cell, cell_t, cell_p, k, wmat, wkind, seed, lo, hi,
                         out):
    """Replicates ``lo:hi`` of :func:`_bootstrap_kappa_cells_poisson`, from one seed."""
    state = np.empty(4, dtype=np.uint64)
    _rng_init(seed, state)
    drawn = np.empty(tab_of.shape[0], dtype=np.int64)
    r = np.empty(k, dtype=np.float64)
    c = np.empty(k, dtype=np.float64)
    ta, tb, tw = _cell_coordinates(type_cell, cell_t, cell_p, wmat)
    for rep in range(lo, hi):
        _draw_multinomial_poisson(tab_of, tables_lo, tables_ptr, prob, alias, cell_prob,
                                  cell_alias, n_units, drawn, state)
        _kappas_of_cells(drawn, ta, tb, tw, k, wmat, wkind, r, c, out[rep])


@jit(parallel=True, serial_twin=True)
def _bootstrap_kappa_cells_poisson(tab_of, tables_lo, tables_ptr, prob, alias, cell_prob,
                                   cell_alias, n_units, type_cell, cell_t, cell_p, k, wmat,
                                   wkind, n_rep, block_seeds):
    """:func:`_bootstrap_kappa_cells` with the Poisson-and-top-up multinomial
    (``_kernels.sampling``): (n_rep, M).

    One uniform per cell (more when a draw is repeated) plus about ``sqrt(N)``
    top-up draws per replicate (:func:`fastkappa._core.units.poisson_margin`);
    the alias tables (:func:`_kernels.sampling._poisson_tables`) are shared, read-only.
    """
    out = np.empty((n_rep, cell_p.shape[1]), dtype=np.float64)
    n_blocks = block_seeds.shape[0]
    step = (n_rep + n_blocks - 1) // n_blocks
    for b in prange(n_blocks):
        lo = min(n_rep, b * step)
        hi = min(n_rep, lo + step)
        _cells_poisson_block(tab_of, tables_lo, tables_ptr, prob, alias, cell_prob,
                             cell_alias, n_units, type_cell, cell_t, cell_p, k, wmat, wkind,
                             block_seeds[b], lo, hi, out)
    return out


_bootstrap_kappa_cells_poisson_serial = _bootstrap_kappa_cells_poisson.serial


# --------------------------------------------------------------------------- many joint rows
#
# When almost every row of a paired comparison has its own joint cell, a
# multinomial over joint cells costs one binomial per row and a pass over a
# joint table as long as the data.  Instead each replicate draws rows and adds
# every drawn row straight into the M per-model (K x K) tables.  Rows are split
# into fixed chunks of ``chunk`` rows: a multinomial over the chunks (one
# binomial per chunk) says how many draws fall in each, then the draws inside a
# chunk are uniform over its rows, so the data a chunk's draws touch stay in
# cache.  The pair (multinomial over chunks, uniform within a chunk) is exactly
# N draws with replacement from N rows.


@jit()
def _rows_tables_block(row_cells, row_w, chunk, k, wmat, seed, lo, hi, out):
    """Replicates ``lo:hi`` of :func:`_bootstrap_kappa_row_tables`, from one seed."""
    state = np.empty(4, dtype=np.uint64)
    _rng_init(seed, state)
    n = row_cells.shape[0]
    n_models = row_cells.shape[1]
    kk = k * k
    weighted = row_w.shape[0] == n
    n_chunks = (n + chunk - 1) // chunk
    sizes = np.empty(n_chunks, dtype=np.int64)
    for g in range(n_chunks):
        sizes[g] = min(chunk, n - g * chunk)
    drawn = np.empty(n_chunks, dtype=np.int64)
    tables = np.empty((n_models, kk), dtype=np.float64)
    cell_t = np.empty(kk, dtype=np.int64)
    cell_p = np.empty((kk, 1), dtype=np.int64)
    for j in range(kk):
        cell_t[j] = j // k
        cell_p[j, 0] = j % k
    r = np.empty(k, dtype=np.float64)
    c = np.empty(k, dtype=np.float64)
    res = np.empty(1, dtype=np.float64)
    hits = np.zeros(min(chunk, n), dtype=np.int64)
    for rep in range(lo, hi):
        tables[:, :] = 0.0
        _draw_multinomial_fast(sizes, n, n, drawn, state)
        for g in range(n_chunks):
            start = g * chunk
            size = sizes[g]
            fsize = np.float64(size)
            # how often each row of the chunk is drawn, then one pass over its rows
            for _ in range(drawn[g]):
                hits[min(np.int64(_uniform(state) * fsize), size - 1)] += 1
            # branch-free: a third of the rows are not drawn, adding 0 beats mispredicting
            if weighted:
                for i in range(size):
                    v = hits[i] * row_w[start + i]
                    hits[i] = 0
                    for m in range(n_models):
                        tables[m, row_cells[start + i, m]] += v
            else:
                for i in range(size):
                    v = np.float64(hits[i])
                    hits[i] = 0
                    for m in range(n_models):
                        tables[m, row_cells[start + i, m]] += v
        for m in range(n_models):
            _kappas_from_joint(tables[m], cell_t, cell_p, k, wmat, r, c, res)
            out[rep, m] = res[0]


@jit(parallel=True, serial_twin=True)
def _bootstrap_kappa_row_tables(row_cells, row_w, chunk, k, wmat, n_rep, block_seeds):
    """Paired bootstrap kappas by drawing rows into per-model tables: (n_rep, M).

    ``row_cells[i, m] = t_i * K + p_{m,i}`` (any integer dtype, C order);
    ``row_w`` holds each row's sample weight, or is empty for plain counts.
    O(N M) per replicate with no joint table; memory O(N / chunk + M K^2)
    per block.
    """
    out = np.empty((n_rep, row_cells.shape[1]), dtype=np.float64)
    n_blocks = block_seeds.shape[0]
    step = (n_rep + n_blocks - 1) // n_blocks
    for b in prange(n_blocks):
        lo = min(n_rep, b * step)
        hi = min(n_rep, lo + step)
        _rows_tables_block(row_cells, row_w, chunk, k, wmat, block_seeds[b], lo, hi, out)
    return out


_bootstrap_kappa_row_tables_serial = _bootstrap_kappa_row_tables.serial
