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
reseeding NumPy's generator at its start inside one ``prange`` iteration, so
the replicates do not depend on the number of threads.

Kernels never raise.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import jit
from .resampling import _draw_multinomial


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
def _moments_block(type_counts, total, n_units, features, lo, hi, draws, out):
    n_types = type_counts.shape[0]
    n_feat = features.shape[1]
    for rep in range(lo, hi):
        _draw_multinomial(type_counts, total, n_units, draws)
        for t in range(n_types):
            m = draws[t]
            if m != 0:
                fm = np.float64(m)
                for j in range(n_feat):
                    out[rep, j] += fm * features[t, j]


@jit(parallel=True)
def _bootstrap_type_moments(type_counts, features, n_units, n_rep, block_seeds):
    """Feature sums of ``n_rep`` item (or cluster) bootstrap replicates.

    A replicate draws ``n_units`` units with replacement, that is type counts
    ~ Multinomial(n_units, type_counts / sum(type_counts)), and returns
    ``sum_t m_t * features[t]``: an (n_rep, n_features) float64 array.  Put
    the most frequent types first (the draw stops once every unit is placed).
    """
    n_types = type_counts.shape[0]
    n_feat = features.shape[1]
    total = np.int64(0)
    for t in range(n_types):
        total += np.int64(type_counts[t])
    out = np.zeros((n_rep, n_feat), dtype=np.float64)
    n_blocks = block_seeds.shape[0]
    step = (n_rep + n_blocks - 1) // n_blocks
    for b in prange(n_blocks):
        np.random.seed(block_seeds[b])  # noqa: NPY002 (numba: legacy API, per-thread state)
        draws = np.zeros(n_types, dtype=np.int64)
        lo = min(n_rep, b * step)
        hi = min(n_rep, lo + step)
        _moments_block(type_counts, total, n_units, features, lo, hi, draws, out)
    return out
