"""pytest-benchmark: kappa_ci against a naive loop and scipy.stats.bootstrap.

    python -m pytest benchmarks/comparisons/test_bench_bootstrap.py --benchmark-only \
        --benchmark-group-by=group --benchmark-columns=median,iqr,rounds -s

fastkappa is timed by pytest-benchmark (10,000 replicates, the pass over the
data included).  The baselines would run for minutes to hours, so they are
timed on a few replicates and *extrapolated* to 10,000, and every extrapolation
says so in the printed line and in ``extra_info``:

* naive loop: resample row indices (or cluster ids) with NumPy and call
  ``sklearn.metrics.cohen_kappa_score(labels=...)`` per replicate; 3 replicates
  timed, times 10,000 / 3;
* ``scipy.stats.bootstrap`` with a vectorised statistic (one ``bincount``
  per batch of resamples): percentile timed on a few replicates; BCa adds the
  jackknife, which SciPy evaluates over all n leave-one-out samples, O(n^2):
  it is timed at n = 10^4 and scaled by (n / 10^4)^2 beyond.

Each benchmark checks fastkappa's estimate against scikit-learn inside the run.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import fastkappa as fk
from benchmarks._data import graded_pair

SIZES = [10**4, 10**5, 10**6]
N_RESAMPLES = 10_000
K = 5
_JACKKNIFE_1E4: dict[str, float] = {}


def _vectorised_kappa(t, p, axis=-1):
    """Unweighted kappa of each row of (batch, n) label arrays (SciPy's vectorised API)."""
    t, p = np.atleast_2d(t), np.atleast_2d(p)
    b = t.shape[0]
    codes = t.astype(np.int64) * K + p + (np.arange(b) * K * K)[:, None]
    tables = np.bincount(codes.ravel(), minlength=b * K * K).reshape(b, K, K)
    n = tables.sum(axis=(1, 2))
    diag = np.trace(tables, axis1=1, axis2=2)
    pe = np.einsum("bi,bi->b", tables.sum(axis=2), tables.sum(axis=1)) / n**2
    return (diag / n - pe) / (1 - pe)


def _scipy(t, p, method, n_resamples):
    from scipy.stats import bootstrap

    batch = max(1, 2_000_000 // len(t))
    return bootstrap((t, p), _vectorised_kappa, paired=True, vectorized=True,
                     method=method, n_resamples=n_resamples, batch=batch,
                     random_state=np.random.default_rng(0))


def _seconds(func, *args) -> float:
    start = time.perf_counter()
    func(*args)
    return time.perf_counter() - start


def _naive_iid(t, p, n_resamples):
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(0)
    n = len(t)
    for _ in range(n_resamples):
        idx = rng.integers(0, n, n)
        cohen_kappa_score(t[idx], p[idx], labels=np.arange(K))


def _fastkappa_seconds(benchmark, func) -> float:
    stats = getattr(benchmark, "stats", None)
    if stats is not None and stats.stats.data:
        return float(stats.stats.median)
    return min(_seconds(func) for _ in range(3))  # --benchmark-disable


def _report(benchmark, fast, baselines):
    for name, (seconds, note) in baselines.items():
        benchmark.extra_info[f"{name}_seconds_for_10k"] = seconds
        benchmark.extra_info[f"{name}_ratio"] = seconds / fast
        benchmark.extra_info[f"{name}_note"] = note
        print(f"\n  {benchmark.group}: {name} {seconds:,.1f} s for 10,000 replicates "
              f"({note}) vs fastkappa {1e3 * fast:.1f} ms: {seconds / fast:,.0f}x")


def _scipy_bca_jackknife_1e4(t_full, p_full) -> float:
    """Seconds SciPy's BCa spends beyond its replicates at n = 10^4 (the jackknife)."""
    if "s" not in _JACKKNIFE_1E4:
        t, p = t_full[:10**4], p_full[:10**4]
        r = 50
        bca = _seconds(_scipy, t, p, "BCa", r)
        pct = _seconds(_scipy, t, p, "percentile", r)
        _JACKKNIFE_1E4["s"] = max(bca - pct, 0.0)
    return _JACKKNIFE_1E4["s"]


@pytest.mark.parametrize("n", SIZES, ids=lambda n: f"n={n:.0e}")
def test_kappa_ci_bca_iid_vs_naive_and_scipy(benchmark, n):
    from sklearn.metrics import cohen_kappa_score

    benchmark.group = f"kappa_ci iid BCa 10k replicates n={n:.0e}"
    t, p = graded_pair(n, K)

    def run():
        return fk.kappa_ci(t, p, n_classes=K, n_resamples=N_RESAMPLES, seed=0)

    res = benchmark.pedantic(run, rounds=5, warmup_rounds=1, iterations=1)
    assert res.estimate == pytest.approx(cohen_kappa_score(t, p), rel=1e-12)
    assert res.low < res.estimate < res.high and res.method == "bca"
    fast = _fastkappa_seconds(benchmark, run)

    reps = 3
    naive = _seconds(_naive_iid, t, p, reps) / reps * N_RESAMPLES
    r = {10**4: 200, 10**5: 20, 10**6: 4}[n]
    per_rep = _seconds(_scipy, t, p, "percentile", r) / r
    pct = per_rep * N_RESAMPLES
    jack = _scipy_bca_jackknife_1e4(t, p) * (n / 10**4) ** 2
    _report(benchmark, fast, {
        "naive_sklearn_loop": (naive, f"{reps} replicates timed, extrapolated"),
        "scipy_percentile": (pct, f"{r} replicates timed, extrapolated"),
        "scipy_bca": (pct + jack, f"{r} replicates timed + jackknife timed at n=1e4"
                      + (", scaled by (n/1e4)^2" if n > 10**4 else "") + ", extrapolated"),
    })


def test_kappa_ci_cluster_bootstrap_vs_naive(benchmark):
    from sklearn.metrics import cohen_kappa_score

    n_clusters = 10**5
    benchmark.group = "kappa_ci clusters 1e5 x 2 rows, BCa 10k replicates"
    t, p = graded_pair(2 * n_clusters, K, seed=1)
    clusters = np.repeat(np.arange(n_clusters), 2)

    def run():
        return fk.kappa_ci(t, p, n_classes=K, weights="quadratic", clusters=clusters,
                           n_resamples=N_RESAMPLES, seed=0)

    res = benchmark.pedantic(run, rounds=3, warmup_rounds=1, iterations=1)
    assert res.estimate == pytest.approx(cohen_kappa_score(t, p, weights="quadratic"),
                                         rel=1e-12)
    fast = _fastkappa_seconds(benchmark, run)

    def naive(n_resamples):
        rng = np.random.default_rng(0)
        for _ in range(n_resamples):
            ids = rng.integers(0, n_clusters, n_clusters)
            rows = np.concatenate([2 * ids, 2 * ids + 1])  # cluster c holds rows 2c, 2c+1
            cohen_kappa_score(t[rows], p[rows], labels=np.arange(K), weights="quadratic")

    reps = 3
    _report(benchmark, fast, {
        "naive_sklearn_loop": (_seconds(naive, reps) / reps * N_RESAMPLES,
                               f"{reps} replicates timed, extrapolated"),
    })
