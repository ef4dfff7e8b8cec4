"""asv suites for paired model comparison and per-group kappa.

Run with ``asv run --python=same --quick --bench bench_compare`` (or
``asv check --python=same``).  Sizes are kept small so an asv run is quick;
``benchmarks/comparisons/test_bench_compare.py`` holds the issue's targets
(10 models at n = 10^6, 1,000 groups at n = 10^7) and prints the ratios.

* ``Compare``: ``fk.compare`` (2,000 paired resamples) against the naive loop
  (resample row indices, scikit-learn's ``cohen_kappa_score`` per model per
  replicate).  The naive loop times **3 replicates only**: multiply by
  2,000 / 3 to compare.
* ``ByGroup``: ``fk.kappa_by_group`` against one ``fk.cohen_kappa`` over the
  same rows (the target: within 2x), a pandas ``groupby`` loop calling
  ``fk.cohen_kappa`` per group, and a per-group scikit-learn loop.
"""

from __future__ import annotations

import os

# time the parallel bootstrap drivers whatever the kernel cache holds (a fresh
# cache runs mid-sized bootstraps on their serial twins; see fastkappa._core.units)
os.environ.setdefault("FASTKAPPA_COLD_SERIAL", "0")

import numpy as np

import fastkappa as fk
from benchmarks._data import graded_pair

K = 5
N_RESAMPLES = 2_000
NAIVE_REPLICATES = 3


def noisy_models(n: int, n_models: int = 10, k: int = K, seed: int = 0):
    """Truth 0..k-1 and ``n_models`` predictions: truth with a share of rows moved.

    Model ``m`` moves a share ``rate_m`` of its rows (rates evenly spaced
    from 5% to 50%) by -2, -1, +1 or +2 grades (clipped to the scale), so the
    models have clearly different kappas.  Returns ``(y_true, {name: y_pred})``
    with names ``model_00``, ``model_01``, ...
    """
    rng = np.random.default_rng(seed)
    t = rng.integers(0, k, n)
    steps = np.array([-2, -1, 1, 2])
    models = {}
    for m, rate in enumerate(np.linspace(0.05, 0.5, n_models)):
        moved = rng.random(n) < rate
        shifted = np.clip(t + steps[rng.integers(0, 4, n)], 0, k - 1)
        models[f"model_{m:02d}"] = np.where(moved, shifted, t)
    return t, models


def naive_compare(t, models, n_resamples, seed=0, weights="quadratic"):
    """The naive paired bootstrap: (n_resamples, M) replicate kappas.

    One set of resampled row indices per replicate, shared by every model
    (paired), and scikit-learn's ``cohen_kappa_score`` per model.
    """
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(seed)
    n = len(t)
    out = np.empty((n_resamples, len(models)))
    for b in range(n_resamples):
        idx = rng.integers(0, n, n)
        tb = t[idx]
        for m, p in enumerate(models.values()):
            out[b, m] = cohen_kappa_score(tb, p[idx], labels=range(K), weights=weights)
    return out


def integer_groups(n: int, n_groups: int, seed: int = 1) -> np.ndarray:
    """Group ids 0..n_groups-1 drawn uniformly (int64)."""
    return np.random.default_rng(seed).integers(0, n_groups, n)


def pandas_groupby_kappas(t, p, g):
    """Kappa per group by a pandas ``groupby`` and ``fk.cohen_kappa`` per group."""
    import pandas as pd

    df = pd.DataFrame({"t": t, "p": p, "g": g})
    return np.array([fk.cohen_kappa(d["t"].to_numpy(), d["p"].to_numpy(), n_classes=K,
                                    replace_undefined_by=np.nan)
                     for _, d in df.groupby("g", sort=True)])


def sklearn_group_kappas(t, p, g):
    """Kappa per group: sort by group once, scikit-learn per group."""
    from sklearn.metrics import cohen_kappa_score

    order = np.argsort(g, kind="stable")
    gs = g[order]
    bounds = np.flatnonzero(np.diff(gs)) + 1
    out = []
    for rows in np.split(order, bounds):
        out.append(cohen_kappa_score(t[rows], p[rows], labels=range(K)))
    return np.array(out)


class Compare:
    """fk.compare with 2,000 paired resamples (naive loop: 3 replicates), QWK, K = 5."""

    params = (
        ["fastkappa_bca", "fastkappa_percentile", "fastkappa_asymptotic",
         "naive_sklearn_loop_3_replicates"],
        [2, 10],
        [10_000, 100_000],
    )
    param_names = ["impl", "n_models", "n"]
    timeout = 300

    def setup(self, impl, n_models, n):
        self.t, self.models = noisy_models(n, n_models)
        if impl.startswith("fastkappa"):
            method = impl.split("_", 1)[1]
            self.f = lambda: fk.compare(self.t, self.models, weights="quadratic",
                                        method=method, n_classes=K,
                                        n_resamples=N_RESAMPLES, seed=0)
        else:
            self.f = lambda: naive_compare(self.t, self.models, NAIVE_REPLICATES)
        self.f()  # warm-up: compile or load from numba's cache

    def time_compare(self, impl, n_models, n):
        self.f()

    def peakmem_compare(self, impl, n_models, n):
        self.f()


class ByGroup:
    """kappa_by_group (unweighted, K = 5) against one cohen_kappa and per-group loops."""

    params = (
        ["fastkappa_by_group", "fastkappa_cohen_kappa_all_rows", "pandas_groupby_fastkappa",
         "sklearn_loop"],
        [10, 1_000],
        [100_000, 1_000_000],
    )
    param_names = ["impl", "n_groups", "n"]
    timeout = 300

    def setup(self, impl, n_groups, n):
        self.t, self.p = graded_pair(n, K)
        self.g = integer_groups(n, n_groups)
        if impl == "fastkappa_by_group":
            self.f = lambda: fk.kappa_by_group(self.t, self.p, self.g, n_classes=K)
        elif impl == "fastkappa_cohen_kappa_all_rows":
            self.f = lambda: fk.cohen_kappa(self.t, self.p, n_classes=K)
        elif impl == "pandas_groupby_fastkappa":
            self.f = lambda: pandas_groupby_kappas(self.t, self.p, self.g)
        else:
            self.f = lambda: sklearn_group_kappas(self.t, self.p, self.g)
        self.f()

    def time_by_group(self, impl, n_groups, n):
        self.f()

    def peakmem_by_group(self, impl, n_groups, n):
        self.f()
