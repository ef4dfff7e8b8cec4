"""Deterministic benchmark inputs shared by the asv suites and the comparisons."""

from __future__ import annotations

import numpy as np


def graded_pair(n: int, k: int = 5, dtype=np.int64, offset: int = 0, seed: int = 0):
    """Two raters on an ordinal scale: truth plus a noisy copy (kappa about 0.7)."""
    rng = np.random.default_rng(seed)
    t = rng.integers(0, k, n, dtype=np.int64)
    p = np.clip(t + rng.integers(-1, 2, n), 0, k - 1)
    return (t + offset).astype(dtype), (p + offset).astype(dtype)


def string_pair(n: int, k: int = 5, seed: int = 0):
    names = np.array([f"grade_{i}" for i in range(k)], dtype=object)
    t, p = graded_pair(n, k, seed=seed)
    return names[t], names[p]
