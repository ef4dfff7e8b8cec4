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


@jit()
def _merge_blocks(s_part, offsets, sw_part, w, merge):
    """K-way merge of the sorted class segments into cost blocks.

    ``merge`` False: every distinct score is a block of its own (the search
    needs that when two scores are only a few floats apart, see
    ``fastkappa._threshold_search._gap_steps``).

    ``sw_part`` holds the sample weights in ``s_part`` order (empty: all 1).
    Returns ``(g, h, lo, hi, r, n_distinct)``: per block the (K,) cost row
    ``g[b, j] = sum sw * w[t, j]``, the weight ``h[b]``, the first and the
    last distinct score ``lo[b]``, ``hi[b]``; the weighted y_true class
    totals ``r`` and the number of distinct scores kept.

    When one segment's head is strictly below every other head, all its
    scores below the second smallest head belong to that class alone: they
    are consumed in a tight loop without comparing heads again.
    """
    n = s_part.shape[0]
    k = w.shape[0]
    weighted = sw_part.shape[0] == n and n > 0
    pos = offsets[:-1].copy()
    end = offsets[1:].copy()
    head = np.empty(k, dtype=np.float64)  # score at each segment's head, inf at its end
    for i in range(k):
        p = pos[i]
        head[i] = s_part[p] if p < end[i] else np.inf
    g = np.empty((n, k), dtype=np.float64)
    h = np.empty(n, dtype=np.float64)
    lo = np.empty(n, dtype=np.float64)
    hi = np.empty(n, dtype=np.float64)
    r = np.empty(k, dtype=np.float64)  # (np.empty and a loop: np.zeros compiles more)
    for i in range(k):
        r[i] = 0.0
    cls = np.empty(k, dtype=np.int64)  # classes with weight at the current score
    wts = np.empty(k, dtype=np.float64)
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
    return g[:nb], h[:nb], lo[:nb], hi[:nb], r, n_distinct


@jit()
def _dp(g, h, v, lam, cap, choice, assign):
    """Minimise ``A - lam * B`` over monotone assignments.

    Returns ``(A, B, j)``: the minimiser's terms and the class of its last
    block.  Each state carries the ``A`` and ``B`` of its best path, so no
    table is needed for the value: ``O(B K)`` time, ``O(K)`` memory.  Ties go
    to the smallest class.

    ``cap[d]`` bounds the class step from block ``d - 1`` to block ``d``: the
    cut points between them must be distinct floats in ``(hi[d - 1], lo[d]]``,
    and a gap of a few ulps holds only a few (``cap[d] >= K - 1``, any step,
    on any data but that).

    When ``choice`` has a row per block (``(n_blocks, K)`` int16; ``(0, K)``
    to skip it) the programme records instead, for each block and class, the
    class of the previous block on the best path, and writes the minimiser
    into ``assign`` (``(n_blocks,)`` int16, untouched otherwise); ``A`` and
    ``B`` are not tracked then.  One function computes the costs the same
    way in both modes, so the recorded minimiser is the one whose terms were
    returned.  Dinkelbach's loop around it runs in Python
    (``fastkappa._threshold_search``): a handful of programmes, and one
    kernel less to compile in a fresh process.
    """
    n_d, k = g.shape
    record = n_d > 0 and choice.shape[0] == n_d
    cost = np.empty(k, dtype=np.float64)
    pa = np.empty(k, dtype=np.float64)
    pb = np.empty(k, dtype=np.float64)
    prev = np.empty((3, k), dtype=np.float64)  # the last block's states (narrow gaps)
    for j in range(k):
        hb = h[0] * v[j]
        cost[j] = g[0, j] - lam * hb
        pa[j] = g[0, j]
        pb[j] = hb
        if record:
            choice[0, j] = j
    for d in range(1, n_d):
        best = np.inf
        ba = 0.0
        bb = 0.0
        hd = h[d]
        c = cap[d]
        if c < k - 1:  # a narrow gap: the previous class is one of j - c .. j
            for j in range(k):
                prev[0, j] = cost[j]
                prev[1, j] = pa[j]
                prev[2, j] = pb[j]
            for j in range(k):
                best = np.inf
                arg = j
                for i in range(max(0, j - c), j + 1):
                    if prev[0, i] < best:
                        best = prev[0, i]
                        arg = i
                gj = g[d, j]
                hb = hd * v[j]
                cost[j] = best + gj - lam * hb
                if record:
                    choice[d, j] = arg
                pa[j] = prev[1, arg] + gj
                pb[j] = prev[2, arg] + hb
            continue
        if record:  # the same costs, without the path sums (the caller traces back)
            arg = 0
            for j in range(k):
                if cost[j] < best:
                    best = cost[j]
                    arg = j
                choice[d, j] = arg  # class of block d - 1 when block d takes class j
                cost[j] = best + g[d, j] - lam * (hd * v[j])
            continue
        for j in range(k):
            # best path whose previous block took a class <= j
            if cost[j] < best:
                best = cost[j]
                ba = pa[j]
                bb = pb[j]
            gj = g[d, j]
            hb = hd * v[j]
            cost[j] = best + gj - lam * hb
            pa[j] = ba + gj
            pb[j] = bb + hb
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
