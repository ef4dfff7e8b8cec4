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
