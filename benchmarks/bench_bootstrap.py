"""asv suites for confidence intervals: kappa_ci against a naive loop and NumPy.

Run with ``asv run --python=same --quick --bench bench_bootstrap``.  The naive
loop (resample row indices, rebuild with scikit-learn) and SciPy's bootstrap
take minutes at these sizes for 10,000 replicates, so their suites time a
fixed small number of replicates (``n_resamples`` in the parameters says how
many): divide to compare per replicate.  ``benchmarks/comparisons/
test_bench_bootstrap.py`` prints the extrapolated ratios.
"""

from __future__ import annotations

import os
import subprocess
import sys

# time the parallel bootstrap drivers whatever the kernel cache holds (a fresh
# cache runs mid-sized bootstraps on their serial twins; see fastkappa._core.units)
os.environ.setdefault("FASTKAPPA_COLD_SERIAL", "0")

import numpy as np

import fastkappa as fk
from benchmarks._data import graded_pair


def _naive_iid(t, p, n_resamples, seed=0):
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(seed)
    n = len(t)
    labels = np.arange(5)
    out = np.empty(n_resamples)
    for b in range(n_resamples):
        idx = rng.integers(0, n, n)
        out[b] = cohen_kappa_score(t[idx], p[idx], labels=labels)
    return out


def _numpy_multinomial(t, p, n_resamples, seed=0):
    """Bootstrap kappas by NumPy's multinomial over the 25 cells (vectorised)."""
    rng = np.random.default_rng(seed)
    o = np.bincount(t.astype(np.int64) * 5 + p, minlength=25)
    tables = rng.multinomial(len(t), o / o.sum(), size=n_resamples).reshape(-1, 5, 5)
    n = tables.sum(axis=(1, 2))
    diag = np.trace(tables, axis1=1, axis2=2)
    r, c = tables.sum(axis=2), tables.sum(axis=1)
    pe = np.einsum("bi,bi->b", r, c) / n**2
    return (diag / n - pe) / (1 - pe)


class IidInterval:
    """kappa_ci on n iid rows (K = 5), by implementation; pass over the data included."""

    params = (
        ["fastkappa_bca", "fastkappa_percentile", "fastkappa_asymptotic",
         "numpy_multinomial_percentile", "naive_sklearn_loop"],
        [10_000, 100_000, 1_000_000],
    )
    param_names = ["impl", "n"]
    timeout = 300

    def setup(self, impl, n):
        self.t, self.p = graded_pair(n, 5)
        if impl.startswith("fastkappa"):
            method = impl.split("_", 1)[1]
            self.f = lambda: fk.kappa_ci(self.t, self.p, method=method, n_classes=5,
                                         n_resamples=10_000, seed=0)
        elif impl == "numpy_multinomial_percentile":
            self.f = lambda: np.quantile(_numpy_multinomial(self.t, self.p, 10_000),
                                         [0.025, 0.975])
        else:
            # 3 replicates only (about 0.2 s each at n = 1e6): per replicate x 10,000
            self.f = lambda: _naive_iid(self.t, self.p, 3)
        self.f()

    def time_interval(self, impl, n):
        self.f()

    def peakmem_interval(self, impl, n):
        self.f()


class ClusterInterval:
    """Cluster bootstrap: C clusters of 2 rows, 10,000 replicates (naive: 3)."""

    params = (["fastkappa_bca", "fastkappa_percentile", "naive_sklearn_loop"],
              [10_000, 100_000])
    param_names = ["impl", "n_clusters"]
    timeout = 300

    def setup(self, impl, n_clusters):
        self.t, self.p = graded_pair(2 * n_clusters, 5, seed=1)
        self.clusters = np.repeat(np.arange(n_clusters), 2)
        if impl.startswith("fastkappa"):
            method = impl.split("_", 1)[1]
            self.f = lambda: fk.kappa_ci(self.t, self.p, method=method, n_classes=5,
                                         weights="quadratic", clusters=self.clusters,
                                         n_resamples=10_000, seed=0)
        else:
            from sklearn.metrics import cohen_kappa_score

            def naive(n_resamples=3):
                rng = np.random.default_rng(0)
                for _ in range(n_resamples):
                    ids = rng.integers(0, n_clusters, n_clusters)
                    rows = np.concatenate([2 * ids, 2 * ids + 1])
                    cohen_kappa_score(self.t[rows], self.p[rows], labels=np.arange(5),
                                      weights="quadratic")

            self.f = naive
        self.f()

    def time_interval(self, impl, n_clusters):
        self.f()


class MultinomialKernel:
    """10,000 replicate kappas from a K x K table of 1e6 rows: fastkappa's multinomial over
    the cells vs NumPy's multinomial tables reduced to kappa."""

    params = (["fastkappa", "numpy"], [5, 30])
    param_names = ["impl", "k"]

    def setup(self, impl, k):
        from fastkappa._core.units import bootstrap_kappas, units_from_counts

        rng = np.random.default_rng(0)
        self.counts = rng.multinomial(1_000_000, rng.dirichlet(np.ones(k * k))).reshape(k, k)
        w = (np.arange(k)[:, None] != np.arange(k)[None, :]).astype(float)
        if impl == "fastkappa":
            units = units_from_counts(self.counts)
            self.f = lambda: bootstrap_kappas(units, w, 10_000, np.random.SeedSequence(0))
        else:
            prob = self.counts.ravel() / self.counts.sum()

            def replicate():
                o = rng.multinomial(1_000_000, prob, size=10_000).reshape(-1, k, k)
                r, c = o.sum(axis=2), o.sum(axis=1)
                e = np.einsum("bi,ij,bj->b", r, w, c)
                return 1.0 - 1_000_000 * np.einsum("bij,ij->b", o, w) / e

            self.f = replicate
        self.f()

    def time_replicate_tables(self, impl, k):
        self.f()


class FirstCallInterval:
    """A first kappa_ci in a fresh process (numba cache warm)."""

    timeout = 240
    number = 1
    repeat = 5
    code = ("import fastkappa as fk; fk.kappa_ci([0, 1, 1, 0, 2], [0, 1, 0, 0, 2], "
            "n_resamples=100, seed=0)")

    def setup(self):
        subprocess.run([sys.executable, "-c", self.code], check=True)

    def time_import_and_first_interval(self):
        subprocess.run([sys.executable, "-c", self.code], check=True)
