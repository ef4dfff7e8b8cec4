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
reseeds NumPy's generator (numba keeps one per thread) at its start and
draws all of its replicates inside one ``prange`` iteration, so the result
does not depend on the number of threads or on which thread runs a block.
The ``*_block`` functions hold one block's work; ``*_serial`` drivers run the
same blocks in order on one thread and give identical results (cheaper than
a parallel launch for small jobs).

Building blocks for other statistics (e.g. a paired comparison of several
models): :func:`_draw_multinomial` (one draw into a buffer),
:func:`_kappas_from_joint` (the M kappas of a joint table) and
:func:`_jackknife_kappa_types` (leave-one-unit-out, all models at once).

Kernels never raise: an undefined kappa (zero expected disagreement) is nan.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import jit

# --------------------------------------------------------------------------- draws


@jit()
def _draw_multinomial(counts, total, n, out):
    """One Multinomial(n, counts / total) draw into ``out`` (int64).

    Conditional binomials in the order of ``counts`` (put large counts first:
    the loop stops as soon as all ``n`` trials are placed).  ``counts`` are
    non-negative integers summing to ``total``.
    """
    remaining_n = np.int64(n)
    remaining = np.int64(total)
    m = counts.shape[0]
    for t in range(m):
        c = np.int64(counts[t])
        if remaining_n <= 0 or c <= 0:
            out[t] = 0
        elif c >= remaining:
            out[t] = remaining_n
            remaining_n = 0
        else:
            x = np.random.binomial(remaining_n, c / remaining)  # noqa: NPY002 (numba: legacy API, per-thread state)
            out[t] = x
            remaining_n -= x
        remaining -= c


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


@jit()
def _kappas_of_types(type_counts, type_ptr, type_cell, type_val, n_cells, cell_t, cell_p,
                     k, wmat):
    """Kappa of each model on the full data, computed exactly as a replicate is.

    A replicate that redraws the original table then gives a bit-identical
    value, which keeps BCa's tie counting exact.
    """
    joint = np.empty(n_cells, dtype=np.float64)
    _accumulate_types(type_counts, type_ptr, type_cell, type_val, joint)
    out = np.empty(cell_p.shape[1], dtype=np.float64)
    r = np.empty(k, dtype=np.float64)
    c = np.empty(k, dtype=np.float64)
    _kappas_from_joint(joint, cell_t, cell_p, k, wmat, r, c, out)
    return out, joint


# --------------------------------------------------------------------------- bootstrap


@jit()
def _types_block(type_counts, type_ptr, type_cell, type_val, n_units, cell_t, cell_p, k,
                 wmat, seed, lo, hi, out):
    """Replicates ``lo:hi`` of :func:`_bootstrap_kappa_types`, from one seed."""
    np.random.seed(seed)  # noqa: NPY002 (numba: legacy API, per-thread state)
    drawn = np.empty(type_counts.shape[0], dtype=np.int64)
    joint = np.empty(cell_t.shape[0], dtype=np.float64)
    r = np.empty(k, dtype=np.float64)
    c = np.empty(k, dtype=np.float64)
    for rep in range(lo, hi):
        _draw_multinomial(type_counts, n_units, n_units, drawn)
        _accumulate_types(drawn, type_ptr, type_cell, type_val, joint)
        _kappas_from_joint(joint, cell_t, cell_p, k, wmat, r, c, out[rep])


@jit(parallel=True)
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
                     wmat, block_seeds[b], lo, hi, out)
    return out


@jit()
def _bootstrap_kappa_types_serial(type_counts, type_ptr, type_cell, type_val, n_units,
                                  cell_t, cell_p, k, wmat, n_rep, block_seeds):
    """:func:`_bootstrap_kappa_types` on one thread (same blocks, same result)."""
    out = np.empty((n_rep, cell_p.shape[1]), dtype=np.float64)
    n_blocks = block_seeds.shape[0]
    step = (n_rep + n_blocks - 1) // n_blocks
    for b in range(n_blocks):
        lo = min(n_rep, b * step)
        hi = min(n_rep, lo + step)
        _types_block(type_counts, type_ptr, type_cell, type_val, n_units, cell_t, cell_p, k,
                     wmat, block_seeds[b], lo, hi, out)
    return out


@jit()
def _units_block(unit_type, type_ptr, type_cell, type_val, cell_t, cell_p, k, wmat, seed,
                 lo, hi, out):
    np.random.seed(seed)  # noqa: NPY002 (numba: legacy API, per-thread state)
    n_units = unit_type.shape[0]
    n_cells = cell_t.shape[0]
    joint = np.empty(n_cells, dtype=np.float64)
    r = np.empty(k, dtype=np.float64)
    c = np.empty(k, dtype=np.float64)
    for rep in range(lo, hi):
        for j in range(n_cells):
            joint[j] = 0.0
        for _ in range(n_units):
            t = unit_type[np.random.randint(0, n_units)]  # noqa: NPY002 (numba: legacy API, per-thread state)
            for e in range(type_ptr[t], type_ptr[t + 1]):
                joint[type_cell[e]] += type_val[e]
        _kappas_from_joint(joint, cell_t, cell_p, k, wmat, r, c, out[rep])


@jit(parallel=True)
def _bootstrap_kappa_units(unit_type, type_ptr, type_cell, type_val, cell_t, cell_p, k,
                           wmat, n_rep, block_seeds):
    """Bootstrap kappas by drawing unit indices with replacement: (n_rep, M).

    ``unit_type[u]`` is the type of unit ``u``.  O(n_units) per replicate;
    used when almost every unit has its own type, and as a reference for
    :func:`_bootstrap_kappa_types`.
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


# --------------------------------------------------------------------------- jackknife


@jit()
def _kappa_without(joint, cell_t, cell_p, m, k, wmat, type_ptr, type_cell, type_val, t):
    """Kappa of model ``m`` on ``joint`` minus one unit of type ``t``, from scratch."""
    sub = joint.copy()
    for e in range(type_ptr[t], type_ptr[t + 1]):
        sub[type_cell[e]] -= type_val[e]
    one = np.empty((cell_p.shape[0], 1), dtype=np.int64)
    for j in range(cell_p.shape[0]):
        one[j, 0] = cell_p[j, m]
    r = np.empty(k, dtype=np.float64)
    c = np.empty(k, dtype=np.float64)
    res = np.empty(1, dtype=np.float64)
    _kappas_from_joint(sub, cell_t, one, k, wmat, r, c, res)
    return res[0]


@jit()
def _jackknife_kappa_types(joint, type_ptr, type_cell, type_val, cell_t, cell_p, k, wmat):
    """Leave-one-unit-out kappas, one per type: (T, M).

    Removing one unit changes the table by its own sparse entries, so the
    observed term, N and the margins change by those entries only and
    ``r @ w @ c`` by a rank-one correction: O(nnz_t^2) per type and model
    instead of a pass over the data.  Where the expected disagreement nearly
    cancels, the value is recomputed from scratch.  Serial: it is cheap next
    to the bootstrap, and a parallel launch costs more than it saves.
    """
    n_types = type_ptr.shape[0] - 1
    n_cells = cell_t.shape[0]
    n_models = cell_p.shape[1]
    rr = np.zeros((n_models, k), dtype=np.float64)
    cc = np.zeros((n_models, k), dtype=np.float64)
    ss = np.zeros(n_models, dtype=np.float64)
    nn = 0.0
    for j in range(n_cells):
        nn += joint[j]
    for m in range(n_models):
        for j in range(n_cells):
            v = joint[j]
            a = cell_t[j]
            b = cell_p[j, m]
            rr[m, a] += v
            cc[m, b] += v
            ss[m] += v * wmat[a, b]
    rw = np.zeros((n_models, k), dtype=np.float64)  # (r @ w)[b]
    wc = np.zeros((n_models, k), dtype=np.float64)  # (w @ c)[a]
    ee = np.zeros(n_models, dtype=np.float64)
    for m in range(n_models):
        for a in range(k):
            for b in range(k):
                rw[m, b] += rr[m, a] * wmat[a, b]
                wc[m, a] += wmat[a, b] * cc[m, b]
        for a in range(k):
            ee[m] += rr[m, a] * wc[m, a]
    out = np.empty((n_types, n_models), dtype=np.float64)
    for t in range(n_types):
        lo = type_ptr[t]
        hi = type_ptr[t + 1]
        for m in range(n_models):
            ds = 0.0
            dn = 0.0
            dlin = 0.0
            dq = 0.0
            for e in range(lo, hi):
                v = type_val[e]
                a = cell_t[type_cell[e]]
                b = cell_p[type_cell[e], m]
                ds += v * wmat[a, b]
                dn += v
                dlin += v * (wc[m, a] + rw[m, b])
                for f in range(lo, hi):
                    b2 = cell_p[type_cell[f], m]
                    dq += v * type_val[f] * wmat[a, b2]
            e2 = ee[m] - dlin + dq
            if e2 > 1e-6 * ee[m]:
                out[t, m] = 1.0 - (nn - dn) * (ss[m] - ds) / e2
            else:
                out[t, m] = _kappa_without(joint, cell_t, cell_p, m, k, wmat, type_ptr,
                                           type_cell, type_val, t)
    return out


# --------------------------------------------------------------------------- types


@jit()
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
