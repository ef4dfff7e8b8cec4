"""Brute-force oracles written from the definitions (loops, exhaustive search, Fractions).

Nothing here shares code with fastkappa.  ``tests/reference.py`` holds the
row-by-row kappa oracle; this module holds the searches and exact formulas
that other tests compare against.
"""

from __future__ import annotations

import itertools

import numpy as np


def weights_ref(k, weights):
    i = np.arange(k)[:, None]
    j = np.arange(k)[None, :]
    if weights is None:
        return (i != j).astype(float)
    if not isinstance(weights, str):
        return np.asarray(weights, dtype=float)
    if weights == "linear":
        return np.abs(i - j).astype(float)
    if weights == "quadratic":
        return ((i - j) ** 2).astype(float)
    raise AssertionError(weights)


def kappa_ref(t, p, k, weights=None, sw=None):
    """1 - sum(w O) / sum(w E) from an np.add.at table; nan when undefined."""
    o = np.zeros((k, k))
    np.add.at(o, (np.asarray(t), np.asarray(p)), 1.0 if sw is None else np.asarray(sw, float))
    w = weights_ref(k, weights)
    n = o.sum()
    e = np.outer(o.sum(1), o.sum(0)) / n
    den = (w * e).sum()
    return np.nan if den <= 0 else 1.0 - (w * o).sum() / den


def brute_force(t, s, k, weights=None, sw=None):
    """Best kappa over every monotone assignment of the distinct scores.

    A choice of K-1 cut positions p_1 <= ... <= p_{K-1} in 0..D gives
    distinct value d the class #{j : p_j <= d}; repeats and the ends make
    empty classes.  Returns (best kappa, list of best class-per-value tuples).
    """
    u, inv = np.unique(s, return_inverse=True)
    d = len(u)
    best, arg = -np.inf, []
    for cuts in itertools.combinations_with_replacement(range(d + 1), k - 1):
        cls = np.searchsorted(np.asarray(cuts), np.arange(d), side="right")
        kap = kappa_ref(t, cls[inv], k, weights, sw)
        if np.isnan(kap):
            continue
        if kap > best + 1e-12:
            best, arg = kap, [tuple(cls)]
        elif abs(kap - best) <= 1e-12:
            arg.append(tuple(cls))
    return best, arg


def fce_variances_exact(table, weights=None):
    """Fleiss-Cohen-Everitt (1969) variances of kappa, exactly, as Fractions.

    ``(var, var0, cancellation)`` for an integer (K, K) table, straight from
    the formulas in DESIGN.md with agreement weights ``a = 1 - w / max(w)``:

        var  = (sum p_ij [a_ij (1-Pe) - (abar_i. + abar_.j)(1-Po)]^2
                - (Po Pe - 2 Pe + Po)^2) / (N (1-Pe)^4)
        var0 = (sum p_i. p_.j [a_ij - (abar_i. + abar_.j)]^2 - Pe^2) / (N (1-Pe)^2)

    ``cancellation`` is the larger of ``first term / difference`` over the
    two numerators: how many times a floating-point evaluation of the
    difference magnifies the rounding of its terms (1 when nothing cancels,
    inf when the variance is 0).
    """
    from fractions import Fraction

    o = [[int(v) for v in row] for row in table]
    k = len(o)
    if weights is None:
        w = [[Fraction(int(i != j)) for j in range(k)] for i in range(k)]
    elif isinstance(weights, str):
        power = {"linear": 1, "quadratic": 2}[weights]
        w = [[Fraction(abs(i - j) ** power) for j in range(k)] for i in range(k)]
    else:
        w = [[Fraction(v) for v in row] for row in weights]
    wmax = max(max(row) for row in w)
    a = [[1 - w[i][j] / wmax for j in range(k)] for i in range(k)]
    n = sum(sum(row) for row in o)
    p = [[Fraction(o[i][j], n) for j in range(k)] for i in range(k)]
    pr = [sum(p[i]) for i in range(k)]
    pc = [sum(p[i][j] for i in range(k)) for j in range(k)]
    po = sum(a[i][j] * p[i][j] for i in range(k) for j in range(k))
    pe = sum(a[i][j] * pr[i] * pc[j] for i in range(k) for j in range(k))
    ar = [sum(pc[j] * a[i][j] for j in range(k)) for i in range(k)]
    ac = [sum(pr[i] * a[i][j] for i in range(k)) for j in range(k)]
    s1 = sum(p[i][j] * (a[i][j] * (1 - pe) - (ar[i] + ac[j]) * (1 - po)) ** 2
             for i in range(k) for j in range(k))
    t1 = (po * pe - 2 * pe + po) ** 2
    s0 = sum(pr[i] * pc[j] * (a[i][j] - (ar[i] + ac[j])) ** 2
             for i in range(k) for j in range(k))
    t0 = pe**2
    var = (s1 - t1) / (n * (1 - pe) ** 4)
    var0 = (s0 - t0) / (n * (1 - pe) ** 2)
    cancellation = max(float(s1 / (s1 - t1)) if s1 != t1 else float("inf"),
                       float(s0 / (s0 - t0)) if s0 != t0 else float("inf"))
    return var, var0, cancellation
