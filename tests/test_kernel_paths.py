"""Every kernel path on small data, serial and parallel twins, against oracles.

The parallel kernels normally start at 2**18 rows (and 200,000 bootstrap
draws); here the thresholds are lowered so that small inputs take them too,
which keeps the file fast when the kernels run as plain Python
(``NUMBA_DISABLE_JIT=1``, see ``test_kernel_coverage.py``).  Oracles: the
loops of ``tests/naive.py`` and NumPy.
"""

from __future__ import annotations

import warnings

import naive
import numpy as np
import pytest

import fastkappa as fk
from fastkappa._core import config
from fastkappa._core import intervals as fki
from fastkappa._core import units as fku
from fastkappa.exceptions import UndefinedKappaWarning

K = 4


@pytest.fixture(params=["serial", "parallel"])
def twin(request, monkeypatch):
    """Run the test once with the serial kernels, once with the parallel ones."""
    if request.param == "parallel":
        monkeypatch.setattr(config, "PARALLEL_MIN_ROWS", 64)
        monkeypatch.setattr(fku, "SERIAL_MAX_DRAWS", 0)
    return request.param


def _graded(rng, n=600, k=K):
    t = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.6, t, rng.integers(0, k, n))
    return t, p


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_counting_paths_equal_the_oracle(rng, twin, dtype, weights):
    t, p = _graded(rng)
    want = naive.kappa_ref(t, p, K, weights)
    a, b = t.astype(dtype), p.astype(dtype)
    assert fk.cohen_kappa(a, b, weights=weights) == pytest.approx(want, rel=1e-12)
    assert fk.cohen_kappa(a, b, weights=weights, n_classes=K) == pytest.approx(want, rel=1e-12)
    # values with gaps go through the lookup tables
    assert fk.cohen_kappa(3 * a, 3 * b, weights=weights, labels=3 * np.arange(K)) == \
        pytest.approx(want, rel=1e-12)
    sw = rng.random(len(t))
    assert fk.cohen_kappa(a, b, weights=weights, sample_weight=sw) == pytest.approx(
        naive.kappa_ref(t, p, K, weights, sw), rel=1e-12)
    table = np.zeros((K, K), dtype=np.int64)
    np.add.at(table, (t, p), 1)
    np.testing.assert_array_equal(fk.confusion_matrix(a, b), table)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic", "matrix"])
def test_table_free_sums_equal_the_oracle(rng, twin, weights):
    """Many declared classes on few rows: kappa from marginals, no (K, K) table."""
    k = 700
    t = rng.integers(0, 6, 300)
    p = np.where(rng.random(300) < 0.6, t, rng.integers(0, 6, 300))
    sw = rng.random(300)
    w = (np.abs(np.subtract.outer(np.arange(k), np.arange(k))) ** 1.5
         if weights == "matrix" else weights)
    for labels in (None, 2 * np.arange(k)):
        a, b = (t, p) if labels is None else (2 * t, 2 * p)
        kw = {"n_classes": k} if labels is None else {"labels": labels}
        assert fk.cohen_kappa(a, b, weights=w, **kw) == pytest.approx(
            naive.kappa_ref(t, p, k, w), rel=1e-10)
        assert fk.cohen_kappa(a, b, weights=w, sample_weight=sw, **kw) == pytest.approx(
            naive.kappa_ref(t, p, k, w, sw), rel=1e-10)


def test_groups_paths_equal_the_oracle(rng, twin):
    t, p = _graded(rng)
    g = rng.integers(0, 3, len(t))
    sw = rng.random(len(t))
    for weights in (None, "quadratic"):
        res = fk.kappa_by_group(t, p, g, weights=weights)
        wres = fk.kappa_by_group(t, p, g, weights=weights, sample_weight=sw)
        for i, key in enumerate(res.groups):
            m = g == key
            assert res.estimate[i] == pytest.approx(naive.kappa_ref(t[m], p[m], K, weights),
                                                 rel=1e-12)
            assert wres.estimate[i] == pytest.approx(
                naive.kappa_ref(t[m], p[m], K, weights, sw[m]), rel=1e-12)


def test_bootstrap_paths_give_the_estimate_and_ordered_bounds(rng, twin):
    t, p = _graded(rng, 300)
    want = naive.kappa_ref(t, p, K, "quadratic")
    clusters = np.arange(len(t)) // 3
    sw = rng.choice([0.5, 1.0, 2.0], len(t))
    for kw in ({}, {"clusters": clusters}, {"sample_weight": sw},
               {"clusters": np.arange(len(t))}):
        for method in ("bca", "percentile", "basic"):
            res = fk.kappa_ci(t, p, weights="quadratic", method=method, n_resamples=100,
                              seed=0, **kw)
            est = want if "sample_weight" not in kw else naive.kappa_ref(t, p, K, "quadratic",
                                                                         sw)
            assert res.estimate == pytest.approx(est, rel=1e-12)
            assert res.low <= res.estimate <= res.high
    cmp = fk.compare(t, {"a": p, "b": np.roll(p, 1)}, n_resamples=100, seed=0)
    assert cmp.pairs[0].difference == pytest.approx(
        naive.kappa_ref(t, p, K) - naive.kappa_ref(t, np.roll(p, 1), K), rel=1e-12)


def test_serial_and_parallel_bootstrap_kernels_draw_the_same_replicates(rng):
    t, p = _graded(rng, 200)
    units = fku.units_from_counts(fk.confusion_matrix(t, p, n_classes=K))
    kern = fku._kernels()
    seeds = fku.block_seeds(np.random.SeedSequence(3), 60)
    args = (units.type_counts, units.type_ptr, units.type_cell, units.type_val,
            np.int64(units.n_units), units.cell_t, units.cell_p, K, fk.weight_matrix(K), 60,
            seeds)
    np.testing.assert_array_equal(kern._bootstrap_kappa_types(*args),
                                  kern._bootstrap_kappa_types_serial(*args))
    # the Python loop over the blocks, with scratch allocated outside the kernel
    np.testing.assert_array_equal(kern._bootstrap_kappa_types(*args),
                                  fku._types_blocks(*args))
    lead = args[:-2]
    scratch = kern._types_scratch(*lead)
    out = np.zeros((4, args[6].shape[1]))
    for i in range(len(scratch)):  # any scratch array too short: -1, nothing drawn
        short = list(scratch)
        short[i] = short[i][:-1]
        assert kern._types_block(*lead, seeds[0], 0, 4, out, *short) == -1
        assert not out.any()
    assert kern._types_block(*lead, seeds[0], 0, 4, out, *scratch) == 0
    # the serial twin is the same function compiled without parallel, cached apart
    par = getattr(kern._bootstrap_kappa_types, "dispatcher", None)
    if hasattr(par, "py_func"):  # compiled (not under NUMBA_DISABLE_JIT)
        twin = kern._bootstrap_kappa_types_serial
        assert twin.py_func.__code__ is par.py_func.__code__
        assert twin.py_func.__qualname__ == par.py_func.__qualname__ + "_serial"
        assert not twin.targetoptions.get("parallel") and par.targetoptions["parallel"]


@pytest.mark.parametrize("weighted", [False, True])
def test_unit_index_bootstrap_drivers_draw_the_same_replicates(rng, weighted):
    """Clusters of a few rows, nearly each its own table: the unit-index driver, its
    serial twin and the Python loop over its blocks give the same replicates, and
    a weighted unit table enters with its value."""
    n_clusters = 40
    sizes = rng.integers(1, 4, n_clusters)
    codes = np.repeat(np.arange(n_clusters), sizes)
    t, p = _graded(rng, len(codes))
    sw = rng.choice([0.5, 1.0, 3.0], len(codes)) if weighted else None
    cell_t, cell_p = fku._single_model_cells(K)
    units = fku.units_from_clusters(t * K + p, sw, codes, n_clusters, cell_t, cell_p, K)
    kern = fku._kernels()
    seeds = fku.block_seeds(np.random.SeedSequence(4), 50)
    args = (units.unit_type(), units.type_ptr, units.type_cell, units.type_val,
            units.cell_t, units.cell_p, K, fk.weight_matrix(K, "quadratic"), 50, seeds)
    par = kern._bootstrap_kappa_units(*args)
    np.testing.assert_array_equal(par, kern._bootstrap_kappa_units_serial(*args))
    np.testing.assert_array_equal(par, fku._units_blocks(*args))
    assert np.isfinite(par).all() and par.std() > 0


def test_assign_types_never_merges_on_hash_collision():
    """Force every unit into one hash bucket: equality is still checked entry by entry."""
    kern = fku._kernels()
    ptr = np.array([0, 1, 3, 4, 6], dtype=np.int64)
    cell = np.array([2, 0, 5, 2, 0, 5], dtype=np.int64)
    bits = np.array([1.0, 1.0, 2.0, 1.0, 1.0, 3.0]).view(np.uint64)
    zeros = np.zeros(4, dtype=np.uint64)
    unit_type, reps = kern._assign_types(np.arange(4), zeros, zeros, ptr, cell, bits)
    np.testing.assert_array_equal(unit_type, [0, 1, 0, 2])
    np.testing.assert_array_equal(reps, [0, 1, 3])


def test_assign_types_splits_a_hash_collision(monkeypatch):
    """Every unit in one hash bucket: the NumPy check sees the difference and the
    kernel splits the run."""
    ptr = np.array([0, 1, 3, 4, 6], dtype=np.int64)
    cell = np.array([2, 0, 5, 2, 0, 5], dtype=np.int64)
    bits = np.array([1.0, 1.0, 2.0, 1.0, 1.0, 3.0]).view(np.uint64)
    monkeypatch.setattr(fku, "_unit_hashes",
                        lambda p, *a: (np.zeros(len(p) - 1, np.uint64),) * 2)
    unit_type, reps = fku.assign_types(ptr, cell, bits)
    np.testing.assert_array_equal(unit_type, [0, 1, 0, 2])
    np.testing.assert_array_equal(reps, [0, 1, 3])
    # equal lengths, different values in one bucket
    ptr2 = np.array([0, 1, 2], dtype=np.int64)
    unit_type, reps = fku.assign_types(ptr2, np.array([1, 1]),
                                       np.array([1.0, 2.0]).view(np.uint64))
    np.testing.assert_array_equal(unit_type, [0, 1])


@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_jackknife_acceleration_equals_the_oracle(rng, weights):
    t, p = _graded(rng, 50)
    w = fk.weight_matrix(K, weights)
    units = fku.units_from_counts(fk.confusion_matrix(t, p, n_classes=K))
    a = fki.bca_acceleration(fku.jackknife_kappas(units, w)[:, 0], units.type_counts)
    assert a == pytest.approx(naive.jackknife_acceleration(t, p, K, weights), rel=1e-9,
                              abs=1e-14)


def test_jackknife_of_a_nearly_degenerate_table_recomputes_from_scratch():
    """One off-diagonal row: leaving it out gives perfect agreement (the rank-one update
    cancels), every leave-one-out value equals kappa recomputed without that row."""
    t = np.array([0] * 20 + [1] * 20 + [0])
    p = np.array([0] * 20 + [1] * 20 + [1])
    units = fku.units_from_counts(fk.confusion_matrix(t, p, n_classes=2))
    jack = fku.jackknife_kappas(units, fk.weight_matrix(2))[:, 0]
    for i, c in enumerate(units.type_cell):
        keep = np.ones(len(t), bool)
        row = (t == units.cell_t[c]) & (p == units.cell_p[c, 0])
        keep[np.flatnonzero(row)[0]] = False
        assert jack[i] == pytest.approx(naive.kappa_ref(t[keep], p[keep], 2), rel=1e-12)


def test_undefined_replicates_are_nan(twin):
    """A table where most replicates have no expected disagreement."""
    t = np.array([0] * 30 + [1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedKappaWarning)
        warnings.simplefilter("ignore", fk.DegenerateIntervalWarning)
        res = fk.kappa_ci(t, t, method="percentile", n_resamples=200, seed=0)
    assert res.n_undefined > 0


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_threshold_search_equals_brute_force(rng, weights):
    k = 3
    t = rng.integers(0, k, 40)
    s = np.round(t + rng.normal(0, 0.8, 40), 1)
    sw = rng.choice([0.5, 1.0, 2.0], 40)
    for w in (None, sw):
        best, _ = naive.brute_force(t, s, k, weights, w)
        cuts = fk.optimize_thresholds(t, s, n_classes=k, weights=weights, sample_weight=w)
        got = naive.kappa_ref(t, np.searchsorted(np.asarray(cuts), s, side="right"), k,
                              weights, w)
        assert got == pytest.approx(best, abs=1e-9)


def test_threshold_optimizer_cross_validation_runs_every_fold(rng):
    t = rng.integers(0, K, 200)
    s = t + rng.normal(0, 0.7, 200)
    opt = fk.ThresholdOptimizer(n_classes=K, cv=3, seed=0).fit(t, s)
    assert len(opt.thresholds_) == K - 1 and np.isfinite(opt.cv_qwk_)
    assert opt.qwk_ == pytest.approx(naive.kappa_ref(t, np.asarray(opt.transform(s)), K,
                                                     "quadratic"), rel=1e-12)


def test_weighted_confusion_of_a_large_table_equals_the_oracle(rng, twin):
    """More than 4,096 cells: weights summed straight into one table (no four-way split)."""
    k = 70
    t = rng.integers(0, k, 500)
    p = np.where(rng.random(500) < 0.5, t, rng.integers(0, k, 500))
    sw = rng.random(500)
    want = np.zeros((k, k))
    np.add.at(want, (t, p), sw)
    np.testing.assert_allclose(fk.confusion_matrix(t, p, n_classes=k, sample_weight=sw),
                               want, rtol=1e-12)


def test_table_free_sums_drop_ignored_and_missing_rows(rng, twin):
    k = 700
    t = rng.integers(0, 6, 300).astype(float)
    p = np.where(rng.random(300) < 0.6, t, rng.integers(0, 6, 300)).astype(float)
    t[:10] = -1
    p[10:20] = -1
    t[20:25] = np.nan
    keep = slice(25, None)
    for weights in (None, "quadratic"):
        got = fk.cohen_kappa(t, p, n_classes=k, weights=weights, ignore_index=-1,
                             nan_policy="omit")
        assert got == pytest.approx(naive.kappa_ref(t[keep].astype(int), p[keep].astype(int),
                                                    k, weights), rel=1e-10)


def test_jackknife_where_leaving_one_out_makes_kappa_undefined():
    """Leaving out the only row of class 1 leaves one class: kappa undefined (nan), taken
    from scratch where the rank-one update would divide by about zero."""
    t = np.array([0] * 20 + [1])
    units = fku.units_from_counts(fk.confusion_matrix(t, t, n_classes=2))
    jack = fku.jackknife_kappas(units, fk.weight_matrix(2))[:, 0]
    want = []
    for c in units.type_cell:
        keep = np.ones(len(t), bool)
        keep[np.flatnonzero((t == units.cell_t[c]) & (t == units.cell_p[c, 0]))[0]] = False
        want.append(naive.kappa_ref(t[keep], t[keep], 2))
    np.testing.assert_allclose(jack, want, rtol=1e-12)
    assert np.isnan(jack).any()


@pytest.mark.parametrize("seed", range(4))
def test_threshold_search_with_ties_across_classes_and_zero_weights(seed):
    """Coarse scores tie across true classes; zero-weight rows sit inside and at the ends."""
    rng = np.random.default_rng(seed)
    k = 3
    t = rng.integers(0, k, 30)
    s = np.round(t + rng.normal(0, 1.0, 30))
    sw = rng.choice([0.0, 1.0, 2.0], 30)
    sw[np.argmin(s)] = 0.0
    best, _ = naive.brute_force(t, s, k, "quadratic", sw)
    cuts = fk.optimize_thresholds(t, s, n_classes=k, sample_weight=sw)
    got = naive.kappa_ref(t, np.searchsorted(np.asarray(cuts), s, side="right"), k,
                          "quadratic", sw)
    assert got == pytest.approx(best, abs=1e-9)


# ------------------------------------------------- many classes, compare's row path


def _sparse_case(rng, kind):
    k = 18
    if kind == "poisson":  # many occupied cells: Poisson draws topped up to N
        t = rng.integers(0, k, 400)
        p = np.clip(t + rng.integers(-2, 3, 400), 0, k - 1)
    else:  # few occupied cells next to sqrt(N): one binomial per cell
        pairs = np.array([(0, 0), (5, 5), (10, 10), (17, 16), (3, 3)])
        rows = pairs[rng.integers(0, len(pairs), 400)]
        t, p = rows[:, 0], rows[:, 1]
    return k, t, p


@pytest.mark.parametrize("kind", ["poisson", "binomial"])
@pytest.mark.parametrize("weights", [None, "linear", "quadratic", "matrix"])
def test_many_class_paths_give_the_estimate_and_ordered_bounds(rng, twin, kind, weights):
    k, t, p = _sparse_case(rng, kind)
    w = (np.abs(np.subtract.outer(np.arange(k), np.arange(k))) ** 1.5
         if weights == "matrix" else weights)
    want = naive.kappa_ref(t, p, k, w)
    for method in ("bca", "percentile"):
        res = fk.kappa_ci(t, p, weights=w, n_classes=k, method=method, n_resamples=30,
                          seed=0)
        assert res.estimate == pytest.approx(want, rel=1e-12)
        assert res.low <= res.estimate <= res.high
        assert np.all(np.isfinite(res.distribution))


@pytest.mark.parametrize("weighted", [False, True])
def test_compare_row_table_path_gives_each_model_its_kappa(rng, twin, weighted):
    t = rng.integers(0, 3, 300)
    models = {f"m{i}": np.where(rng.random(300) < 0.6, t, rng.integers(0, 3, 300))
              for i in range(3)}
    sw = rng.random(300) if weighted else None
    res = fk.compare(t, models, weights="quadratic", n_resamples=30, seed=0,
                     sample_weight=sw)
    for name, pred in models.items():
        want = naive.kappa_ref(t, pred, 3, "quadratic", sw)
        assert res.models[name].estimate == pytest.approx(want, rel=1e-12)
        assert res.models[name].low <= want <= res.models[name].high
    assert len(res.pairs) == 3


def test_block_generator_draws_have_their_moments():
    """The block generator's binomial (inversion and BTRS) and Poisson-topped-up
    multinomial draws: means within 5 standard errors, totals exact."""
    for n, p in ((20, 0.3), (10**6, 2e-4)):  # small mean: inversion; else BTRS
        draws = np.asarray(naive.binomial_draws(n, p, 400, 3), dtype=np.float64)
        se = np.sqrt(n * p * (1 - p) / len(draws))
        assert abs(draws.mean() - n * p) < 5 * se
        assert draws.min() >= 0 and draws.max() <= n
    counts = np.array([50, 3, 1, 20, 7])
    multi = naive.poisson_multinomial_draws(counts, 200, 4)
    assert np.all(multi.sum(axis=1) == counts.sum())
    share = multi.mean(axis=0) / counts.sum()
    np.testing.assert_allclose(share, counts / counts.sum(), atol=0.05)


def test_threshold_merge_fills_the_callers_arrays_and_refuses_short_ones(rng):
    """The threshold merge writes into arrays from ``_merge_scratch``: one block per
    distinct score without merging, class totals and block weights that add up to
    the rows, and (-1, -1) with nothing read for arrays of the wrong shape."""
    from fastkappa._kernels import thresholds as tk

    t = rng.integers(0, K, 300)
    s = np.round(t + rng.normal(0, 0.7, 300), 1)
    order = np.lexsort((s, t))
    s_part = s[order]
    offsets = np.concatenate(([0], np.cumsum(np.bincount(t, minlength=K)))).astype(np.int64)
    w = fk.weight_matrix(K, "quadratic")
    no_sw = np.empty(0)
    out = tk._merge_scratch(offsets, K, len(s_part))
    nb, n_distinct = tk._merge_blocks(s_part, offsets, no_sw, w, False, *out)
    g, h, lo, hi, r = out[:5]
    assert nb == n_distinct == len(np.unique(s))
    np.testing.assert_array_equal(lo[:nb], np.unique(s))
    np.testing.assert_array_equal(hi[:nb], np.unique(s))
    np.testing.assert_array_equal(r, np.bincount(t, minlength=K))
    assert h[:nb].sum() == len(s)
    # each block's cost row: sum over its rows of w[t, :]
    want = np.array([w[t[s == v]].sum(axis=0) for v in np.unique(s)])
    np.testing.assert_allclose(g[:nb], want, rtol=0, atol=1e-9)
    merged = tk._merge_scratch(offsets, K, len(s_part))
    nb_m, nd_m = tk._merge_blocks(s_part, offsets, no_sw, w, True, *merged)
    assert nd_m == n_distinct and 0 < nb_m <= nb
    np.testing.assert_allclose(merged[0][:nb_m].sum(axis=0), g[:nb].sum(axis=0), atol=1e-9)
    for i in range(10):  # any array too short: refused before anything is read
        short = list(tk._merge_scratch(offsets, K, len(s_part)))
        short[i] = short[i][:-1]
        assert tuple(tk._merge_blocks(s_part, offsets, no_sw, w, True, *short)) == (-1, -1)


def test_after_a_fork_from_openmp_parallel_kernels_run_their_serial_twins(rng, monkeypatch):
    # the state a forked child of an OpenMP parent is in (tested end to end with a
    # fork Pool in test_bootstrap.py): every parallel kernel runs single-threaded,
    # twins compiled on demand where a kernel has none, with the same numbers
    from fastkappa._kernels import _jit

    n = 1 << 19  # above the parallel threshold
    t = rng.integers(0, 5, n)
    p = np.clip(t + rng.integers(-1, 2, n), 0, 4)
    w = rng.random(n)
    want = (fk.confusion_matrix(t, p), fk.cohen_kappa(t, p, sample_weight=w),
            fk.kappa_ci(t, p, n_resamples=100, seed=1).low)
    monkeypatch.setattr(_jit, "_forked_after_omp", True)
    got = (fk.confusion_matrix(t, p), fk.cohen_kappa(t, p, sample_weight=w),
           fk.kappa_ci(t, p, n_resamples=100, seed=1).low)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1:] == want[1:]
    # the hook sets the flag in a child only when the parent ran on OpenMP
    monkeypatch.setattr(_jit, "_forked_after_omp", False)
    monkeypatch.setattr(_jit, "_layer_thread_safe", None)
    _jit._after_fork_in_child()
    assert _jit._forked_after_omp is False
