"""Brute-force oracles written from DESIGN.md with plain loops over rows.

(The exact-fraction kappa oracles live in ``reference.py``; this module holds
the loops for quantities that need the rows themselves.)
"""

from __future__ import annotations

import math


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
