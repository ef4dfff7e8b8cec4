"""Slow, obviously-correct oracles written straight from the definitions.

Plain Python loops over rows, items, raters and pairs of ratings; no NumPy
tricks and no code shared with fastkappa.  (The exact-fraction kappa oracles
live in ``reference.py``.)  Many-rater ratings are lists of rows (one per
item) holding class *indices* 0..K-1 or None (missing); ``a`` is a K x K list
of agreement weights.
"""

from __future__ import annotations

import math


def item_counts(ratings, k):
    """r[i][c]: raters who put item i in class c (items with no rating dropped)."""
    out = []
    for row in ratings:
        r = [0] * k
        for v in row:
            if v is not None:
                r[v] += 1
        if sum(r):
            out.append(r)
    return out


def percent_agreement(ratings, k, a):
    """Mean over items with >= 2 ratings of the weighted share of agreeing ordered pairs."""
    total, n2 = 0.0, 0
    for row in ratings:
        vals = [v for v in row if v is not None]
        m = len(vals)
        if m < 2:
            continue
        n2 += 1
        s = 0.0
        for x in range(m):
            for y in range(m):
                if x != y:
                    s += a[vals[x]][vals[y]]
        total += s / (m * (m - 1))
    return total / n2


def class_shares(ratings, k):
    """pi_k: mean over rated items of the share of the item's ratings in class k."""
    rows = item_counts(ratings, k)
    return [sum(r[c] / sum(r) for r in rows) / len(rows) for c in range(k)]


def _kappa(pa, pe):
    return (pa - pe) / (1 - pe)


def fleiss_kappa(ratings, k, a):
    pi = class_shares(ratings, k)
    pe = sum(a[x][y] * pi[x] * pi[y] for x in range(k) for y in range(k))
    return _kappa(percent_agreement(ratings, k, a), pe)


def gwet_ac(ratings, k, a):
    pi = class_shares(ratings, k)
    t = sum(a[x][y] for x in range(k) for y in range(k))
    pe = t / (k * (k - 1)) * sum(p * (1 - p) for p in pi)
    return _kappa(percent_agreement(ratings, k, a), pe)


def brennan_prediger(ratings, k, a):
    t = sum(a[x][y] for x in range(k) for y in range(k))
    return _kappa(percent_agreement(ratings, k, a), t / k**2)


def conger_kappa(ratings, k, a):
    """Chance agreement as the mean over ordered rater pairs of Cohen's chance agreement."""
    n_raters = len(ratings[0])
    p = []
    for g in range(n_raters):
        vals = [row[g] for row in ratings if row[g] is not None]
        p.append([vals.count(c) / len(vals) for c in range(k)])
    pe, pairs = 0.0, 0
    for g in range(n_raters):
        for h in range(n_raters):
            if g != h:
                pairs += 1
                pe += sum(a[x][y] * p[g][x] * p[h][y] for x in range(k) for y in range(k))
    return _kappa(percent_agreement(ratings, k, a), pe / pairs)


def scott_pi(y1, y2, k):
    """Scott's pi of two complete raters: pooled class shares."""
    n = len(y1)
    po = sum(x == y for x, y in zip(y1, y2, strict=True)) / n
    pooled = [(y1.count(c) + y2.count(c)) / (2 * n) for c in range(k)]
    pe = sum(q * q for q in pooled)
    return (po - pe) / (1 - pe)


def krippendorff_alpha(ratings, k, d):
    """From pairs of values within units: 1 - D_o / D_e (Krippendorff 2011).

    ``d`` is a K x K disagreement list, or a function of the value counts
    ``n_c`` returning one (ordinal).
    """
    o = [[0.0] * k for _ in range(k)]
    for row in ratings:
        vals = [v for v in row if v is not None]
        m = len(vals)
        if m < 2:
            continue
        for x in range(m):
            for y in range(m):
                if x != y:
                    o[vals[x]][vals[y]] += 1.0 / (m - 1)
    nc = [sum(o[c]) for c in range(k)]
    n = sum(nc)
    if callable(d):
        d = d(nc)
    do = sum(o[x][y] * d[x][y] for x in range(k) for y in range(k)) / n
    de = sum(nc[x] * nc[y] * d[x][y] for x in range(k) for y in range(k)) / (n * (n - 1))
    return 1 - do / de


def ordinal_distance(nc):
    k = len(nc)
    out = [[0.0] * k for _ in range(k)]
    for x in range(k):
        for y in range(k):
            lo, hi = min(x, y), max(x, y)
            out[x][y] = (sum(nc[lo:hi + 1]) - (nc[x] + nc[y]) / 2) ** 2
    return out


def percent_agreement_se(ratings, k, a, fpc=1.0):
    """Gwet's variance of p_a (Brennan-Prediger's with chance agreement 0), loops."""
    rows = [[v for v in row if v is not None] for row in ratings]
    rows = [r for r in rows if r]
    n = len(rows)
    n2 = sum(len(r) >= 2 for r in rows)
    pa = percent_agreement(ratings, k, a)
    total = 0.0
    for vals in rows:
        m = len(vals)
        pa_i = 0.0
        if m >= 2:
            pa_i = sum(a[vals[x]][vals[y]] for x in range(m) for y in range(m) if x != y) / (
                m * (m - 1))
        x_i = n / n2 * pa_i
        total += (x_i - pa) ** 2
    return math.sqrt(fpc * total / (n * (n - 1)))


def fleiss_influence(ratings, k, a):
    """Gwet's per-item terms x_i - kappa of Fleiss' kappa (irrCAC's formulas, as loops).

    Returns the list of centred terms, one per rated item; the variance is
    ``sum(d^2) / (n (n - 1))`` and for clusters ``C / (C - 1) / n^2 *
    sum_c (sum_{i in c} d_i)^2``.
    """
    rows = [[v for v in row if v is not None] for row in ratings]
    keep = [i for i, r in enumerate(rows) if r]
    n = len(keep)
    n2 = sum(len(rows[i]) >= 2 for i in keep)
    pi = class_shares(ratings, k)
    pe = sum(a[x][y] * pi[x] * pi[y] for x in range(k) for y in range(k))
    kappa = fleiss_kappa(ratings, k, a)
    piw = [sum((a[c][y] + a[y][c]) / 2 * pi[y] for y in range(k)) for c in range(k)]
    out = []
    for i in keep:
        vals = rows[i]
        m = len(vals)
        pa_i = 0.0
        if m >= 2:
            pa_i = sum(a[vals[x]][vals[y]] for x in range(m) for y in range(m) if x != y) / (
                m * (m - 1))
        kappa_i = n / n2 * (pa_i - (pe if m >= 2 else 0.0)) / (1 - pe)
        pe_i = sum(piw[v] for v in vals) / m
        x_i = kappa_i - 2 * (1 - kappa) * (pe_i - pe) / (1 - pe)
        out.append(x_i - kappa)
    return out


def _disagreement(k: int, weights=None) -> list[list[float]]:
    if weights is None:
        return [[float(i != j) for j in range(k)] for i in range(k)]
    if weights == "linear":
        return [[float(abs(i - j)) for j in range(k)] for i in range(k)]
    return [[float((i - j) ** 2) for j in range(k)] for i in range(k)]


def cluster_robust_se(t, p, clusters, k: int, weights=None) -> float:
    """Cluster-robust standard error of kappa: ``sqrt(sum_c (sum_{r in c} IF_r)^2) / N``.

    ``t`` and ``p`` are class indices 0..k-1; ``IF`` is the Fleiss-Cohen-Everitt
    influence value of a row's cell, ``(T_ij - Tbar) / (1 - Pe)^2`` with
    ``T_ij = a_ij (1 - Pe) - (abar_i. + abar_.j)(1 - Po)`` and
    ``Tbar = Po Pe - 2 Pe + Po`` (DESIGN.md, "The mathematics").
    """
    n = len(t)
    w = _disagreement(k, weights)
    wmax = max(max(row) for row in w)
    a = [[1.0 - w[i][j] / wmax for j in range(k)] for i in range(k)]
    pi = [sum(1 for x in t if x == i) / n for i in range(k)]
    pj = [sum(1 for y in p if y == j) / n for j in range(k)]
    po = sum(a[x][y] for x, y in zip(t, p, strict=True)) / n
    pe = sum(a[i][j] * pi[i] * pj[j] for i in range(k) for j in range(k))
    abar_i = [sum(pj[j] * a[i][j] for j in range(k)) for i in range(k)]
    abar_j = [sum(pi[i] * a[i][j] for i in range(k)) for j in range(k)]
    tbar = po * pe - 2 * pe + po
    sums: dict = {}
    for x, y, c in zip(t, p, clusters, strict=True):
        tij = a[x][y] * (1 - pe) - (abar_i[x] + abar_j[y]) * (1 - po)
        sums[c] = sums.get(c, 0.0) + (tij - tbar) / (1 - pe) ** 2
    return math.sqrt(sum(v * v for v in sums.values())) / n
