"""Threshold-search kernels: merge sorted scores into blocks, Dinkelbach over a DP.

With ``y_true`` fixed, kappa of a monotone assignment ``x`` of the sorted
distinct scores to classes ``0..K-1`` is ``1 - A(x) / B(x)`` with

    A(x) = sum_b G[b, x_b]        G[b, j] = sum of sw * w[t, j] over the rows of b
    B(x) = sum_b H[b] * v[x_b]    H[b] = sum of sw over the rows of b,
                                  v = (r @ w) / N, r the y_true class totals

so maximising kappa is minimising the ratio ``A / B``.  Dinkelbach's method
does it exactly: for a fixed ``lam`` the minimiser of ``A - lam * B`` over
monotone assignments is a dynamic programme (:func:`_dp`), ``O(B K)``, and
``lam <- A / B`` of that minimiser decreases strictly until it is optimal
(the loop itself is in ``fastkappa._threshold_search``).

``b`` runs over *blocks* of consecutive distinct scores.  Tied rows are one
distinct score, so they always share a class.  A run of consecutive distinct
scores whose weighted rows all hold the same y_true class (or no weight at
all) is merged into one block: the cost of giving such a score class ``j`` is
its weight times one vector ``w[i, j] - lam * v[j]``, so between any two
classes fixed around the run the best monotone choice is constant on it.
Merging is therefore exact, and it halves the work on typical data.

Input arrives partitioned by y_true class: ``s_part[offsets[i]:offsets[i+1]]``
are the scores of class ``i``, sorted (``fastkappa._threshold_search``
partitions and sorts them with NumPy).  Sorting K pieces and merging them is
faster than one argsort of all rows, and it hands the merge each row's class
for free.

The kernels never raise and read no globals; ``fastkappa.thresholds``
validates the input and turns assignments into cut points.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit


def _merge_scratch(offsets, k: int, n: int):
    """The outputs and scratch of :func:`_merge_blocks` for ``n`` rows and ``k``
    classes: ``(g, h, lo, hi, r, pos, end, head, cls, wts)``.

    Allocated by the caller, so that a fresh process compiles no array
    allocation with the kernel (about 0.2 s of the first call).  ``pos`` and
    ``end`` start at each class segment's bounds.
    """
    return (np.empty((n, k), dtype=np.float64), np.empty(n, dtype=np.float64),
            np.empty(n, dtype=np.float64), np.empty(n, dtype=np.float64),
            np.empty(k, dtype=np.float64), offsets[:-1].astype(np.int64),
            offsets[1:].astype(np.int64), np.empty(k, dtype=np.float64),
            np.empty(k, dtype=np.int64), np.empty(k, dtype=np.float64))


@jit()
def _merge_blocks(s_part, offsets, sw_part, w, merge, g, h, lo, hi, r, pos, end, head, cls,
                  wts):
    """K-way merge of the sorted class segments into cost blocks.

    ``merge`` False: every distinct score is a block of its own (the search
    needs that when two scores are only a few floats apart, see
    ``fastkappa._threshold_search._gap_steps``).

    ``sw_part`` holds the sample weights in ``s_part`` order (empty: all 1).
    Fills, per block, the (K,) cost row ``g[b, j] = sum sw * w[t, j]``, the
    weight ``h[b]``, the first and the last distinct score ``lo[b]``,
    ``hi[b]``, and the weighted y_true class totals ``r``; returns ``(nb,
    n_distinct)``, the number of blocks and of distinct scores kept.
    ``g, h, lo, hi, r`` and the scratch ``pos, end, head, cls, wts`` come from
    :func:`_merge_scratch` (``pos``/``end`` are used up); arrays of other
    shapes return ``(-1, -1)`` and nothing is read.

    When one segment's head is strictly below every other head, all its
    scores below the second smallest head belong to that class alone: they
    are consumed in a tight loop without comparing heads again.
    """
    n = s_part.shape[0]
    k = w.shape[0]
    if (g.shape[0] < n or g.shape[1] != k or h.shape[0] < n or lo.shape[0] < n
            or hi.shape[0] < n or r.shape[0] != k or pos.shape[0] != k
            or end.shape[0] != k or head.shape[0] != k or cls.shape[0] != k
            or wts.shape[0] != k or offsets.shape[0] != k + 1):
        return -1, -1
    weighted = sw_part.shape[0] == n and n > 0
    for i in range(k):
        p = pos[i]
        head[i] = s_part[p] if p < end[i] else np.inf
        r[i] = 0.0
    nb = 0
    bclass = -1  # class of the open block: -1 no weight yet, -3 mixed, else pure
    n_distinct = 0
    while True:
        # smallest and second smallest head, without data-dependent branches
        i0 = 0
        m = head[0]
        m2 = np.inf
        for i in range(1, k):
            x = head[i]
            lower = x < m
            hi_ = x if x > m else m
            m2 = hi_ if hi_ < m2 else m2
            i0 = i if lower else i0
            m = x if lower else m
        if m == np.inf:
            break
        if m < m2:
            # fast path: every score of segment i0 below m2 holds class i0 only
            i = i0
            p = pos[i]
            e = end[i]
            while p < e:
                x = s_part[p]
                if x >= m2:
                    break
                ws = 0.0
                while p < e and s_part[p] == x:
                    ws += sw_part[p] if weighted else 1.0
                    p += 1
                n_distinct += 1
                if ws > 0:
                    if merge and nb > 0 and (bclass == i or bclass == -1):
                        b = nb - 1
                    else:
                        b = nb
                        nb += 1
                        for j in range(k):
                            g[b, j] = 0.0
                        h[b] = 0.0
                        lo[b] = x
                    bclass = i
                    h[b] += ws
                    r[i] += ws
                    for j in range(k):
                        g[b, j] += ws * w[i, j]
                elif nb == 0 or not merge:
                    b = nb
                    nb += 1
                    for j in range(k):
                        g[b, j] = 0.0
                    h[b] = 0.0
                    lo[b] = x
                    bclass = -1
                else:
                    b = nb - 1  # a score without weight joins the open block
                hi[b] = x
            pos[i] = p
            head[i] = s_part[p] if p < e else np.inf
            continue
        n_distinct += 1
        n_cls = 0
        vh = 0.0
        for i in range(i0, k):
            if head[i] != m:
                continue
            p = pos[i]
            e = end[i]
            ws = 0.0
            while p < e and s_part[p] == m:
                ws += sw_part[p] if weighted else 1.0
                p += 1
            pos[i] = p
            head[i] = s_part[p] if p < e else np.inf
            if ws > 0:
                cls[n_cls] = i
                wts[n_cls] = ws
                n_cls += 1
                vh += ws
                r[i] += ws
        vclass = -1 if n_cls == 0 else (cls[0] if n_cls == 1 else -3)
        if merge and nb > 0 and (vclass == -1 or (vclass >= 0 and (bclass == vclass
                                                                  or bclass == -1))):
            b = nb - 1  # the score joins the open block
            if vclass >= 0:
                bclass = vclass
        else:
            b = nb  # the score opens a new block
            nb += 1
            for j in range(k):
                g[b, j] = 0.0
            h[b] = 0.0
            lo[b] = m
            bclass = vclass
        hi[b] = m
        h[b] += vh
        for c in range(n_cls):
            i = cls[c]
            ws = wts[c]
            for j in range(k):
                g[b, j] += ws * w[i, j]
    return nb, n_distinct


@jit()
def _dp(g, h, v, lam, d0, d1, cost, pa, pb, choice, assign):
    """Minimise ``A - lam * B`` over monotone assignments, blocks ``d0..d1-1``.

    The state of each class after a block is the cost of the best path ending
    there in that class, and that path's ``A`` and ``B`` (``cost``, ``pa``,
    ``pb``, (K,) each, updated in place; ``d0 = 0`` starts them).  Each step
    is ``O(K)``: the best path whose previous block took a class ``<= j``.
    Ties go to the smallest class.  The caller runs the whole range at once,
    or stops before a block whose gap to the previous one is only a few
    floats wide (its class step is bounded: ``fastkappa._threshold_search``
    does that step) and goes on after it.

    At the last block (``d1`` = the number of blocks) returns ``(A, B, j)``:
    the minimiser's terms and the class of its last block; else
    ``(nan, nan, -1)``.  When ``choice`` has a row per block (``(n_blocks,
    K)`` int16; ``(0, K)`` to skip it) the programme also records, for each
    block and class, the class of the previous block on the best path, and
    at the last block writes the minimiser into ``assign`` (``(n_blocks,)``
    int16).
    """
    n_d, k = g.shape
    record = n_d > 0 and choice.shape[0] == n_d
    start = d0
    if d0 == 0 and n_d > 0:
        for j in range(k):
            hb = h[0] * v[j]
            cost[j] = g[0, j] - lam * hb
            pa[j] = g[0, j]
            pb[j] = hb
            if record:
                choice[0, j] = j
        start = 1
    for d in range(start, d1):
        best = np.inf
        ba = 0.0
        bb = 0.0
        arg = 0
        hd = h[d]
        for j in range(k):
            # best path whose previous block took a class <= j
            if cost[j] < best:
                best = cost[j]
                ba = pa[j]
                bb = pb[j]
                arg = j
            gj = g[d, j]
            hb = hd * v[j]
            cost[j] = best + gj - lam * hb
            pa[j] = ba + gj
            pb[j] = bb + hb
            if record:
                choice[d, j] = arg  # class of block d - 1 when block d takes class j
    if d1 < n_d:
        return np.nan, np.nan, -1
    jbest = 0
    for j in range(1, k):
        if cost[j] < cost[jbest]:
            jbest = j
    if record:  # trace the minimiser back
        j = jbest
        for d in range(n_d - 1, -1, -1):
            assign[d] = j
            j = choice[d, j]
    return pa[jbest], pb[jbest], jbest
