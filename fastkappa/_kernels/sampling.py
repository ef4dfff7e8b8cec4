"""Random draws for the resampling kernels: one generator, exact samplers.

* a block-local xoshiro256+ generator (:func:`_rng_init`, :func:`_uniform`)
  and an exact fast binomial (:func:`_binomial`: inversion, or BTRS);
* :func:`_draw_multinomial_fast`: conditional binomials from that generator;
* :func:`_draw_multinomial_poisson`: independent Poisson variates topped up
  to N, read from Walker alias tables (:func:`_alias_table`,
  :func:`_poisson_tables`): one uniform per cell.

Kernels never raise.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit

# --------------------------------------------------------------------------- block generator
#
# A replicate of many cells needs one draw per occupied cell: a fast exact
# binomial sampler from a generator local to each block of replicates (no
# shared state: the same draws at any thread count).

#: below this mean (n * min(p, 1 - p)) a binomial is drawn by inversion, above by BTRS
_BTRS_MIN_MEAN = 10.0


_TWO_M53 = 1.0 / 9007199254740992.0
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
#: Stirling's remainder of log(k!) for k < 10 (exact, from log-gamma)
_STIRLING_TAIL = np.array([math.lgamma(k + 1.0) - ((k + 0.5) * math.log(k + 1.0) - (k + 1.0)
                                                   + _HALF_LOG_2PI) for k in range(10)])


@jit()
def _stirling_tail(x):
    """``log(x!) - [(x + 1/2) log(x + 1) - (x + 1) + log(2 pi) / 2]`` for whole x >= 0."""
    if x < 10.0:
        return _STIRLING_TAIL[np.int64(x)]
    inv = 1.0 / (x + 1.0)
    inv2 = inv * inv
    return (1.0 / 12.0 - (1.0 / 360.0 - inv2 * (1.0 / 1260.0)) * inv2) * inv


@jit(inline=True)
def _rng_init(seed, state):
    """Seed a xoshiro256+ state (uint64 (4,)) from one integer by splitmix64.

    A generator local to one block (no shared state), several times cheaper
    per draw than NumPy's per-thread Mersenne Twister inside numba.
    """
    z = np.uint64(seed)
    for i in range(4):
        z = z + np.uint64(0x9E3779B97F4A7C15)
        x = z
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        state[i] = x ^ (x >> np.uint64(31))


@jit(inline=True)
def _xoshiro(s0, s1, s2, s3):
    """One xoshiro256+ step on a state held in four locals.

    Returns ``(u, s0, s1, s2, s3)``: a uniform double in [0, 1) and the next
    state.  A hot loop keeps the state in locals this way (in registers);
    through an array it would load and store the four words at every draw,
    since the compiler cannot tell the state from the arrays written.
    """
    result = s0 + s3
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = (s3 << np.uint64(45)) | (s3 >> np.uint64(19))
    return np.float64(result >> np.uint64(11)) * _TWO_M53, s0, s1, s2, s3


@jit()
def _uniform(state):
    """One uniform double in [0, 1) from a xoshiro256+ state (advanced in place)."""
    u, state[0], state[1], state[2], state[3] = _xoshiro(state[0], state[1], state[2],
                                                         state[3])
    return u


@jit()
def _binomial_inversion(n, p, state):
    """Binomial(n, p) by sequential inversion; ``p <= 1/2`` and a small mean."""
    q = 1.0 - p
    qn = math.exp(n * math.log1p(-p))
    ratio = p / q
    mean = n * p
    bound = min(np.float64(n), mean + 10.0 * math.sqrt(mean * q + 1.0))
    x = 0
    px = qn
    u = _uniform(state)
    while u > px:
        x += 1
        if x > bound:  # rounding left u above the mass: start again
            x = 0
            px = qn
            u = _uniform(state)
        else:
            u -= px
            px *= (n - x + 1) * ratio / x
    return x


@jit()
def _binomial_btrs(n, p, state):
    """Binomial(n, p) by transformed rejection with squeeze (BTRS, Hörmann 1993).

    ``p <= 1/2`` and ``n p >= 10``.  About 1.15 trials of two uniforms each;
    most trials end at the squeeze, the rest at the exact bound
    ``log f(k) - log f(m)`` (Stirling's series with its remainder).
    """
    q = 1.0 - p
    nf = np.float64(n)
    spq = math.sqrt(nf * p * q)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = nf * p + 0.5
    v_r = 0.92 - 4.2 / b
    m = np.float64(math.floor((nf + 1.0) * p))  # floats: one _stirling_tail signature
    h = np.nan
    alpha = 0.0
    lpq = 0.0
    while True:
        u = _uniform(state) - 0.5
        v = _uniform(state)
        us = 0.5 - abs(u)
        kf = np.float64(math.floor((2.0 * a / us + b) * u + c))
        if kf < 0.0 or kf > nf:
            continue
        if us >= 0.07 and v <= v_r:
            return np.int64(kf)
        # log f(k) - log f(m) by Stirling's series (the linear terms cancel); the
        # terms in m depend on (n, p) only and are computed once per call
        if h != h:
            h = _stirling_tail(m) + _stirling_tail(nf - m)
            alpha = (2.83 + 5.1 / b) * spq
            lpq = math.log(p / q)
        v = math.log(v * alpha / (a / (us * us) + b))
        nk = nf - kf
        nm = nf - m
        bound = ((m + 0.5) * math.log((m + 1.0) / (kf + 1.0))
                 + (nm + 0.5) * math.log((nm + 1.0) / (nk + 1.0))
                 + (kf - m) * (lpq + math.log((nk + 1.0) / (kf + 1.0)))
                 + h - _stirling_tail(kf) - _stirling_tail(nk))
        if v <= bound:
            return np.int64(kf)


@jit()
def _binomial(n, p, state):
    """One exact Binomial(n, p) draw (int64) from a :func:`_rng_init` state."""
    if n <= 0 or p <= 0.0:
        return np.int64(0)
    if p >= 1.0:
        return np.int64(n)
    flip = p > 0.5
    pp = 1.0 - p if flip else p
    if n * pp < _BTRS_MIN_MEAN:
        x = np.int64(_binomial_inversion(n, pp, state))
    else:
        x = _binomial_btrs(n, pp, state)
    return np.int64(n) - x if flip else x


@jit()
def _draw_multinomial_fast(counts, total, n, out, state):
    """One Multinomial(n, counts / total) draw into ``out`` (int64), by
    conditional binomials (:func:`_binomial`) in the order of ``counts``.

    Put large counts first: the loop stops as soon as all ``n`` trials are
    placed.  ``counts`` are non-negative integers summing to ``total``.
    """
    remaining_n = np.int64(n)
    remaining = np.int64(total)
    for t in range(counts.shape[0]):
        c = np.int64(counts[t])
        if remaining_n <= 0 or c <= 0:
            out[t] = 0
        elif c >= remaining:
            out[t] = remaining_n
            remaining_n = 0
        else:
            x = _binomial(remaining_n, c / remaining, state)
            out[t] = x
            remaining_n -= x
        remaining -= c



# --------------------------------------------------------------------------- Poisson, top-up
#
# A multinomial over T cells needs T conditional binomials, one after another.
# When the cells are many, a cheaper exact draw exists: independent
# X_t ~ Poisson(lam_t) with lam_t proportional to the cell counts are, given
# their sum S, Multinomial(S, c / N).  With sum(lam) = N - m sqrt(N), S <= N
# with probability about Phi(m) (else the draw is repeated, which keeps the
# conditional law), and N - S more rows drawn one by one from c / N complete
# a Multinomial(N, c / N) exactly, for any margin m.  The margin only sets the
# cost: T / Phi(m) Poisson variates plus about sqrt(N) (m + phi(m) / Phi(m))
# top-up rows; :func:`fastkappa._core.units.poisson_margin` picks the m that
# minimises it.  Each lam_t is the same in every replicate, so each Poisson
# (and each top-up row) is one uniform read through a Walker alias table: an
# index and a comparison, no search and no branch to mispredict.

#: Poisson tables span lam +- (_POISSON_SPAN * sqrt(lam) + _POISSON_SPAN): the mass
#: left out is far below the resolution of a double-precision uniform
_POISSON_SPAN = 10.0


@jit()
def _alias_table(weights, prob, alias):
    """Walker's alias table of ``weights`` (W,) into ``prob`` (W,) and ``alias`` (W,).

    Drawing ``x = u W``, ``i = floor(x)``, then ``i`` if ``x - i < prob[i]`` else
    ``alias[i]`` gives ``i`` with probability ``weights[i] / sum(weights)``
    (Vose's construction).  Bucket masses are kept as ``weights * W`` against
    the bucket size ``sum(weights)``, so whole-number weights (cell counts)
    give exact sums and differences; only the final ``prob`` is rounded.
    """
    w = weights.shape[0]
    total = 0.0
    for i in range(w):
        total += weights[i]
    scaled = np.empty(w, dtype=np.float64)
    small = np.empty(w, dtype=np.int64)
    large = np.empty(w, dtype=np.int64)
    n_small = 0
    n_large = 0
    for i in range(w):
        scaled[i] = weights[i] * w
        alias[i] = i
        if scaled[i] < total:
            small[n_small] = i
            n_small += 1
        else:
            large[n_large] = i
            n_large += 1
    while n_small > 0 and n_large > 0:
        n_small -= 1
        s = small[n_small]
        g = large[n_large - 1]
        prob[s] = scaled[s] / total
        alias[s] = g
        scaled[g] = (scaled[g] + scaled[s]) - total
        if scaled[g] < total:
            n_large -= 1
            small[n_small] = g
            n_small += 1
    # what is left holds (up to rounding) exactly one bucket each
    for i in range(n_large):
        prob[large[i]] = 1.0
    for i in range(n_small):
        prob[small[i]] = 1.0


@jit()
def _poisson_tables(lam):
    """Alias tables of Poisson(lam_t) on a window around each mean.

    Returns ``(lo, ptr, prob, alias)``: table ``t`` covers the values
    ``lo[t] + i`` for entries ``ptr[t] <= i < ptr[t + 1]``; ``prob`` and
    ``alias`` (offsets within the table) are its :func:`_alias_table`.
    """
    n_tables = lam.shape[0]
    lo = np.empty(n_tables, dtype=np.int64)
    ptr = np.empty(n_tables + 1, dtype=np.int64)
    ptr[0] = 0
    for t in range(n_tables):
        s = math.sqrt(lam[t])
        a = max(0.0, math.floor(lam[t] - _POISSON_SPAN * s - _POISSON_SPAN))
        b = math.ceil(lam[t] + _POISSON_SPAN * s + _POISSON_SPAN)
        lo[t] = np.int64(a)
        ptr[t + 1] = ptr[t] + np.int64(b - a) + 1
    prob = np.empty(ptr[n_tables], dtype=np.float64)
    alias = np.empty(ptr[n_tables], dtype=np.int64)
    for t in range(n_tables):
        l0 = ptr[t]
        l1 = ptr[t + 1]
        lg = math.log(lam[t])
        pmf = np.empty(l1 - l0, dtype=np.float64)
        for i in range(l0, l1):
            kf = np.float64(lo[t] + (i - l0))
            pmf[i - l0] = math.exp(kf * lg - lam[t] - math.lgamma(kf + 1.0))
        _alias_table(pmf, prob[l0:l1], alias[l0:l1])
    return lo, ptr, prob, alias


@jit(inline=True)
def _alias_index(u, prob, alias, l0, width):
    """The entry offset of the alias table ``prob[l0:l0 + width]`` that the
    uniform ``u`` draws: ``i`` if ``x - i < prob[l0 + i]`` else ``alias[l0 + i]``,
    with ``x = u * width`` and ``i = floor(x)``.

    Without a branch: the sign of ``(x - i) - prob[l0 + i]`` (the same
    comparison, as a difference of doubles is negative exactly when the first
    is smaller) picks the entry or its alias through arithmetic.  The branch
    that the compiler makes of a plain conditional is mispredicted about
    every other draw, and cost about 4 ns of each (twice the rest of the
    draw, on 7,775 tables per replicate).
    """
    x = u * width
    i = min(np.int64(x), width - 1)
    e = l0 + i
    take = np.int64(math.copysign(0.5, (x - i) - prob[e]) + 0.5)  # 1: the alias
    return i + take * (alias[e] - i)


@jit()
def _draw_multinomial_poisson(tab_of, lo, ptr, prob, alias, cell_prob, cell_alias, n, out,
                              state):
    """One Multinomial(n, counts / n) draw into ``out`` (see the section comment).

    Cell ``t`` draws from Poisson table ``tab_of[t]`` (cells with equal counts
    share one, which keeps the tables in cache); ``cell_prob``/``cell_alias``
    are the alias table of the cell counts (summing to n), and the Poisson
    means sum to less than n.
    """
    n_cells = out.shape[0]
    s0 = state[0]  # the generator in locals through the loop (see _xoshiro)
    s1 = state[1]
    s2 = state[2]
    s3 = state[3]
    while True:
        s = np.int64(0)
        # cells sharing a table come one after another (most frequent first):
        # read a table's place once per run of cells
        j_last = np.int64(-1)
        l0 = np.int64(0)
        width = np.int64(1)
        base = np.int64(0)
        for t in range(n_cells):
            j = tab_of[t]
            if j != j_last:
                j_last = j
                l0 = ptr[j]
                width = ptr[j + 1] - l0
                base = lo[j]
            u, s0, s1, s2, s3 = _xoshiro(s0, s1, s2, s3)
            x = base + _alias_index(u, prob, alias, l0, width)
            out[t] = x
            s += x
        if s <= n:
            break
    for _ in range(n - s):
        u, s0, s1, s2, s3 = _xoshiro(s0, s1, s2, s3)
        out[_alias_index(u, cell_prob, cell_alias, 0, n_cells)] += 1
    state[0] = s0
    state[1] = s1
    state[2] = s2
    state[3] = s3
