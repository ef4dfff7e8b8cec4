"""pytest-benchmark: fk.compare and fk.kappa_by_group against the usual loops.

    python -m pytest benchmarks/comparisons/test_bench_compare.py --benchmark-only \
        --benchmark-group-by=group --benchmark-columns=median,iqr,rounds -s

Paired model comparison (10 models, n = 10^6, QWK, K = 5, 2,000 paired
resamples).  The naive loop resamples row indices with NumPy and calls
scikit-learn's ``cohen_kappa_score(..., labels=range(5), weights="quadratic")``
per model per replicate: about an hour for 2,000 replicates, so it is timed on
**3 replicates and extrapolated** to 2,000 (x 2,000 / 3); every printed line
and ``extra_info`` says so.  ``test_compare_speed_ratio`` times both in the
same test and asserts the >= 100x target.

Per-group kappa (1,000 integer groups, unweighted).  At n = 10^7
``test_by_group_ratio`` asserts that ``kappa_by_group`` takes at most twice
one ``cohen_kappa`` over the same rows; the baseline runs before every timed
round (pytest-benchmark's ``setup``), so load on the machine hits both alike.
At n = 10^6 a pandas ``groupby`` loop and a per-group scikit-learn loop give
context.

Every benchmark checks its answer (against scikit-learn, or against
fastkappa's own whole-data value) inside the run: a fast wrong answer cannot
win.  The ratio tests print the load average next to each number: on a
shared machine, read the ratios with it.
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np
import pytest

import fastkappa as fk
from benchmarks._data import graded_pair
from benchmarks.bench_compare import (
    N_RESAMPLES,
    K,
    integer_groups,
    naive_compare,
    noisy_models,
    pandas_groupby_kappas,
    sklearn_group_kappas,
)

N_COMPARE = 10**6
N_MODELS = 10
NAIVE_REPLICATES = 3
COMPARE_TARGET = 100.0
N_GROUPS = 1_000
N_BY_GROUP = 10**7
N_BY_GROUP_CONTEXT = 10**6
BY_GROUP_TARGET = 2.0
COMPARE_GROUP = (f"compare {N_MODELS} models n={N_COMPARE:.0e} QWK "
                 f"{N_RESAMPLES} paired resamples")


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} ({os.cpu_count()} cores)"


def _seconds(func, *args) -> float:
    start = time.perf_counter()
    func(*args)
    return time.perf_counter() - start


def _benchmark_median(benchmark) -> float | None:
    stats = getattr(benchmark, "stats", None)
    if stats is not None and stats.stats.data:
        return float(stats.stats.median)
    return None  # --benchmark-disable


# --------------------------------------------------------------------------- compare


@pytest.fixture(scope="module")
def compare_case():
    from sklearn.metrics import cohen_kappa_score

    t, models = noisy_models(N_COMPARE, N_MODELS)
    sklearn_kappas = {nm: cohen_kappa_score(t, p, labels=range(K), weights="quadratic")
                      for nm, p in models.items()}
    # warm-up: compile or load every kernel from numba's cache, on the same code paths
    # (parallel multinomial over joint cells, jackknife) at a tenth of the size
    tw, mw = noisy_models(N_COMPARE // 10, N_MODELS, seed=1)
    for method in ("bca", "percentile", "asymptotic"):
        fk.compare(tw, mw, weights="quadratic", method=method, n_classes=K,
                   n_resamples=N_RESAMPLES, seed=0)
    asymptotic = fk.compare(t, models, weights="quadratic", method="asymptotic",
                            n_classes=K)
    return {"t": t, "models": models, "sklearn": sklearn_kappas, "asymptotic": asymptotic}


def _run_compare(case, method):
    return fk.compare(case["t"], case["models"], weights="quadratic", method=method,
                      n_classes=K, n_resamples=N_RESAMPLES, seed=0)


def _check_compare(res, case):
    """Estimates equal scikit-learn's; bootstrap SEs agree with the asymptotic ones."""
    asym = case["asymptotic"]
    assert list(res.models) == list(case["models"])
    for nm, ci in res.models.items():
        assert ci.estimate == pytest.approx(case["sklearn"][nm], rel=1e-12, abs=1e-14), nm
        assert ci.low < ci.estimate < ci.high, (nm, ci)
        # 2,000 replicates: the SD of the replicates is within a few % of the FCE SE
        assert ci.standard_error == pytest.approx(asym.models[nm].standard_error, rel=0.1), nm
    assert len(res.pairs) == N_MODELS * (N_MODELS - 1) // 2
    for pair, ref in zip(res.pairs, asym.pairs, strict=True):
        assert (pair.a, pair.b) == (ref.a, ref.b)
        assert pair.difference == pytest.approx(
            case["sklearn"][pair.a] - case["sklearn"][pair.b], abs=1e-12)
        assert pair.standard_error == pytest.approx(ref.standard_error, rel=0.1), (pair, ref)


def _naive_seconds(case) -> tuple[float, np.ndarray]:
    """Seconds for ``NAIVE_REPLICATES`` naive replicates, and their kappas."""
    start = time.perf_counter()
    reps = naive_compare(case["t"], case["models"], NAIVE_REPLICATES)
    seconds = time.perf_counter() - start
    # sanity: each replicate is near the full-data kappa of its model
    full = np.array([case["sklearn"][nm] for nm in case["models"]])
    assert np.all(np.abs(reps - full) < 0.01), reps - full
    return seconds, reps


def test_compare_naive_loop(benchmark, compare_case):
    """The naive loop on 3 replicates only (the table's time is for 3, not 2,000)."""
    benchmark.group = COMPARE_GROUP
    note = (f"{NAIVE_REPLICATES} replicates timed; x {N_RESAMPLES}/{NAIVE_REPLICATES} "
            f"extrapolated to {N_RESAMPLES}")
    reps = benchmark.pedantic(naive_compare, args=(compare_case["t"], compare_case["models"],
                                                   NAIVE_REPLICATES),
                              rounds=1, iterations=1)
    assert reps.shape == (NAIVE_REPLICATES, N_MODELS)
    seconds = _benchmark_median(benchmark)
    if seconds is None:
        seconds = _naive_seconds(compare_case)[0]
    extrapolated = seconds / NAIVE_REPLICATES * N_RESAMPLES
    benchmark.extra_info.update({
        "replicates_timed": NAIVE_REPLICATES, "seconds_timed": seconds,
        f"extrapolated_seconds_for_{N_RESAMPLES}": extrapolated, "note": note,
    })
    print(f"\n  naive loop: {seconds:.2f} s for {NAIVE_REPLICATES} replicates -> "
          f"{extrapolated:,.0f} s for {N_RESAMPLES} ({note}); {_load()}")


@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_compare_speed_ratio(benchmark, compare_case, method):
    """fk.compare >= 100x faster than the naive loop (extrapolated), in one run."""
    benchmark.group = COMPARE_GROUP
    res = benchmark.pedantic(_run_compare, args=(compare_case, method), rounds=3,
                             iterations=1)
    _check_compare(res, compare_case)
    assert res.method == method and res.n_resamples == N_RESAMPLES
    load_fast = _load()
    fast = _benchmark_median(benchmark)
    if fast is None:
        fast = statistics.median(_seconds(_run_compare, compare_case, method)
                                 for _ in range(3))
    naive, _ = _naive_seconds(compare_case)
    load_naive = _load()
    extrapolated = naive / NAIVE_REPLICATES * N_RESAMPLES
    ratio = extrapolated / fast
    note = (f"naive: {NAIVE_REPLICATES} replicates timed ({naive:.2f} s), "
            f"extrapolated x {N_RESAMPLES}/{NAIVE_REPLICATES}")
    benchmark.extra_info.update({
        "fastkappa_seconds": fast, "naive_seconds_timed": naive,
        "naive_replicates_timed": NAIVE_REPLICATES,
        f"naive_extrapolated_seconds_for_{N_RESAMPLES}": extrapolated,
        "ratio": ratio, "note": note, "load_fastkappa": load_fast, "load_naive": load_naive,
    })
    print(f"\n  compare {N_MODELS} models n={N_COMPARE:.0e} {method}, {N_RESAMPLES} paired "
          f"resamples:\n    fastkappa {fast:.2f} s (median of 3; {load_fast})"
          f"\n    naive loop {extrapolated:,.0f} s ({note}; {load_naive})"
          f"\n    ratio {ratio:,.0f}x (target >= {COMPARE_TARGET:.0f}x)")
    assert ratio >= COMPARE_TARGET, (
        f"fk.compare ({method}) only {ratio:.0f}x faster than the naive loop")


# --------------------------------------------------------------------------- by group


@pytest.fixture(scope="module")
def by_group_case():
    t, p = graded_pair(N_BY_GROUP, K)
    g = integer_groups(N_BY_GROUP, N_GROUPS)
    # warm-up on the parallel kernels (above the serial threshold), both class modes
    for kw in ({"n_classes": K}, {}):
        fk.kappa_by_group(t[:10**6], p[:10**6], g[:10**6], **kw)
        fk.cohen_kappa(t[:10**6], p[:10**6], **kw)
    return {"t": t, "p": p, "g": g}


CLASS_MODES = {"n_classes=5": {"n_classes": K}, "inferred": {}}


def _check_by_group(res, case, whole):
    assert len(res) == N_GROUPS and int(res.n.sum()) == N_BY_GROUP
    assert res.overall == pytest.approx(whole, rel=1e-12)
    assert np.isfinite(res.kappa).all()


@pytest.mark.parametrize("classes", list(CLASS_MODES))
def test_by_group_cohen_kappa_all_rows(benchmark, by_group_case, classes):
    """The baseline: one unweighted cohen_kappa over the same 10^7 rows."""
    benchmark.group = f"kappa_by_group {N_GROUPS} groups n={N_BY_GROUP:.0e} {classes}"
    kw = CLASS_MODES[classes]
    t, p = by_group_case["t"], by_group_case["p"]
    value = benchmark.pedantic(fk.cohen_kappa, args=(t, p), kwargs=kw, rounds=15,
                               warmup_rounds=1, iterations=1)
    from sklearn.metrics import cohen_kappa_score

    assert value == pytest.approx(cohen_kappa_score(t, p), rel=1e-12)


@pytest.mark.parametrize("classes", list(CLASS_MODES))
def test_by_group_ratio(benchmark, by_group_case, classes):
    """kappa_by_group over 1,000 groups within 2x one cohen_kappa on the same rows."""
    benchmark.group = f"kappa_by_group {N_GROUPS} groups n={N_BY_GROUP:.0e} {classes}"
    kw = CLASS_MODES[classes]
    t, p, g = by_group_case["t"], by_group_case["p"], by_group_case["g"]
    whole = fk.cohen_kappa(t, p, **kw)
    baseline: list[float] = []
    warmup, rounds = 1, 15

    def run_baseline():  # before every round: interleaved with the timed calls
        baseline.append(_seconds(lambda: fk.cohen_kappa(t, p, **kw)))

    res = benchmark.pedantic(fk.kappa_by_group, args=(t, p, g), kwargs=kw, setup=run_baseline,
                             rounds=rounds, warmup_rounds=warmup, iterations=1)
    _check_by_group(res, by_group_case, whole)
    fast = _benchmark_median(benchmark)
    if fast is None:  # --benchmark-disable: time both here, interleaved
        times = []
        for _ in range(rounds):
            run_baseline()
            times.append(_seconds(lambda: fk.kappa_by_group(t, p, g, **kw)))
        fast = statistics.median(times)
    base = statistics.median(baseline[warmup:] or baseline)
    ratio = fast / base
    load = _load()
    benchmark.extra_info.update({
        "kappa_by_group_seconds": fast, "cohen_kappa_seconds": base, "ratio": ratio,
        "load": load, "note": f"medians of {rounds} interleaved rounds",
    })
    print(f"\n  kappa_by_group {N_GROUPS} groups n={N_BY_GROUP:.0e} unweighted ({classes}): "
          f"{1e3 * fast:.1f} ms vs cohen_kappa {1e3 * base:.1f} ms (medians of {rounds} "
          f"interleaved rounds): {ratio:.2f}x (target <= {BY_GROUP_TARGET:g}x); {load}")
    assert ratio <= BY_GROUP_TARGET, (
        f"kappa_by_group ({classes}) takes {ratio:.2f}x one cohen_kappa")


@pytest.fixture(scope="module")
def by_group_context():
    n = N_BY_GROUP_CONTEXT
    t, p = graded_pair(n, K, seed=2)
    g = integer_groups(n, N_GROUPS, seed=3)
    ref = fk.kappa_by_group(t, p, g, n_classes=K)
    assert len(ref) == N_GROUPS
    return {"t": t, "p": p, "g": g, "kappa": ref.kappa}


@pytest.mark.parametrize("impl", ["fastkappa_by_group", "pandas_groupby_fastkappa_loop",
                                  "sklearn_loop"])
def test_by_group_context(benchmark, by_group_context, impl):
    """1,000 groups at n = 10^6: the one-pass kernel against per-group loops."""
    benchmark.group = f"kappa_by_group {N_GROUPS} groups n={N_BY_GROUP_CONTEXT:.0e} context"
    t, p, g = by_group_context["t"], by_group_context["p"], by_group_context["g"]
    if impl == "fastkappa_by_group":
        def func():
            return fk.kappa_by_group(t, p, g, n_classes=K).kappa
        rounds = 20
    elif impl == "pandas_groupby_fastkappa_loop":
        def func():
            return pandas_groupby_kappas(t, p, g)
        rounds = 3
    else:
        def func():
            return sklearn_group_kappas(t, p, g)
        rounds = 3
    kappas = benchmark.pedantic(func, rounds=rounds, warmup_rounds=1, iterations=1)
    np.testing.assert_allclose(kappas, by_group_context["kappa"], rtol=1e-12, atol=1e-14)
