"""The data-dependent resampling paths (issue 16): many classes, many joint rows.

Oracles: SciPy's binomial pmf for the sampler, the dense kernels of
``_kernels.resampling`` (themselves checked against row resampling in
test_bootstrap.py) for exact equality on the same draw, scikit-learn for the
estimates, and the old paths in distribution (seeded two-sample KS and
moments) where the draw differs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import naive
import numba
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

import fastkappa as fk
from fastkappa._core import units as fku
from fastkappa._kernels import sampling

WEIGHTS = [None, "linear", "quadratic"]


def _kern():
    return fku._kernels()


def _banded(n, k, seed=0, width=2):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, k, n)
    p = np.clip(t + rng.integers(-width, width + 1, n), 0, k - 1)
    return t, p


@pytest.fixture
def threads():
    """Restore numba's thread count after a test changes it."""
    before = numba.get_num_threads()
    yield
    numba.set_num_threads(before)


# --------------------------------------------------------------------------- sampler


@pytest.mark.parametrize(("n", "p"), [
    (1_000_000, 2e-4),   # BTRS, the many-classes regime (mean 200)
    (60, 0.3),           # BTRS near its lower mean
    (40, 0.9),           # flipped to 1 - p
    (7, 0.5),            # inversion
    (400, 0.02),         # inversion, mean 8
    (10**7, 0.5),        # BTRS, huge n
    (1000, 0.999),       # flipped, inversion
])
def test_binomial_sampler_matches_scipy_pmf(n, p):
    x = naive.binomial_draws(n, p, 100_000, 7)
    assert x.min() >= 0 and x.max() <= n
    lo, hi = (int(v) for v in stats.binom.ppf([1e-7, 1 - 1e-7], n, p))
    ks = np.arange(lo, hi + 1)
    obs = np.bincount(np.clip(x, lo, hi) - lo, minlength=len(ks)).astype(float)
    exp = stats.binom.pmf(ks, n, p) * len(x)
    exp[0] += stats.binom.cdf(lo - 1, n, p) * len(x)
    exp[-1] += stats.binom.sf(hi, n, p) * len(x)
    # pool sparse tail bins so the chi-square approximation holds (expected >= 5)
    keep = exp >= 5
    chi2 = ((obs[keep] - exp[keep]) ** 2 / exp[keep]).sum()
    pooled_obs, pooled_exp = obs[~keep].sum(), exp[~keep].sum()
    dof = keep.sum() - 1
    if pooled_exp > 0:
        chi2 += (pooled_obs - pooled_exp) ** 2 / max(pooled_exp, 5.0)
        dof += 1
    # fixed seed: deterministic; a wrong sampler gives p ~ 0 at 1e5 draws
    assert stats.chi2.sf(chi2, dof) > 1e-3
    assert abs(x.mean() - n * p) < 5 * np.sqrt(n * p * (1 - p) / len(x))


def test_binomial_sampler_edges():
    assert np.all(naive.binomial_draws(0, 0.3, 10, 1) == 0)
    assert np.all(naive.binomial_draws(50, 0.0, 10, 1) == 0)
    assert np.all(naive.binomial_draws(50, 1.0, 10, 1) == 50)
    np.testing.assert_array_equal(naive.binomial_draws(1000, 0.01, 50, 3),
                                  naive.binomial_draws(1000, 0.01, 50, 3))


def test_fast_multinomial_draws_the_right_distribution():
    counts = np.array([5000, 300, 150, 50, 0, 7], dtype=np.int64)
    total, n, reps = int(counts.sum()), 2000, 20_000
    state = np.empty(4, dtype=np.uint64)
    sampling._rng_init(11, state)
    out = np.empty((reps, len(counts)), dtype=np.int64)
    for i in range(reps):
        sampling._draw_multinomial_fast(counts, total, n, out[i], state)
    assert np.all(out.sum(axis=1) == n) and np.all(out[:, 4] == 0)
    prob = counts / total
    np.testing.assert_allclose(out.mean(axis=0), n * prob,
                               atol=5 * np.sqrt(n * 0.25 / reps))
    np.testing.assert_allclose(out.var(axis=0, ddof=1), n * prob * (1 - prob), rtol=0.06)
    assert np.cov(out[:, 0], out[:, 1])[0, 1] == pytest.approx(-n * prob[0] * prob[1],
                                                               rel=0.08)


# --------------------------------------------------------------------------- kappa


@pytest.mark.parametrize("weights", [*WEIGHTS, "custom"])
@pytest.mark.parametrize("k", [2, 17, 60])
def test_sparse_kappa_equals_dense_kappa_on_the_same_table(rng, weights, k):
    kern = _kern()
    if weights == "custom":
        w = rng.random((k, k))
        np.fill_diagonal(w, 0.0)
    else:
        w = fk.weight_matrix(k, weights)
    kind = fku.weight_kind(w)
    if k > 2:  # with two classes the three named matrices coincide
        assert kind == (0 if weights == "custom" else 1 + WEIGHTS.index(weights))
    for _ in range(20):
        table = rng.integers(0, 50, (k, k)) * (rng.random((k, k)) < 0.3)
        units = fku.units_from_counts(table)
        if units.n_types == 0:
            continue
        joint = np.empty(len(units.cell_t))
        kern._accumulate_types(units.type_counts, units.type_ptr, units.type_cell,
                               units.type_val, joint)
        dense = np.empty(units.cell_p.shape[1])
        kern._kappas_from_joint(joint, units.cell_t, units.cell_p, k, w, np.empty(k),
                                np.empty(k), dense)
        sparse = kern._full_kappas_of_cells(units.type_counts, units.type_cell, units.cell_t,
                                            units.cell_p, k, w, kind)
        if kind:  # integer weights and counts: both sums are exact
            np.testing.assert_array_equal(sparse, dense)
        else:
            np.testing.assert_allclose(sparse, dense, rtol=0, atol=1e-12)  # summation order


@pytest.mark.parametrize("weights", WEIGHTS)
def test_expected_disagreement_beyond_exact_integers(rng, weights):
    """Margins so large that the raw quadratic sums pass 2**53: the centred form."""
    kern = _kern()
    k = 40
    r = rng.integers(0, 10**9, k).astype(float)
    c = rng.permutation(r)
    w = fk.weight_matrix(k, weights)
    got = kern._expected_disagreement(r, c, k, r.sum(), w, fku.weight_kind(w))
    assert got == pytest.approx(float(r @ w @ c), rel=1e-12)


@pytest.mark.parametrize("weights", WEIGHTS)
def test_many_class_estimate_matches_sklearn(weights):
    t, p = _banded(3000, 40, seed=1)
    res = fk.kappa_ci(t, p, weights=weights, n_classes=40, n_resamples=200, seed=0)
    assert res.estimate == pytest.approx(
        cohen_kappa_score(t, p, labels=range(40), weights=weights), abs=1e-12)
    assert res.low < res.estimate < res.high


# --------------------------------------------------------------------------- paths


def _units(t, p, k):
    return fku.units_from_counts(fk.confusion_matrix(t, p, n_classes=k))


def test_many_classes_take_the_sparse_path_and_few_keep_the_dense_one():
    assert fku.sparse_cells(_units(*_banded(500, 20), 20))
    assert not fku.sparse_cells(_units(*_banded(500, 5), 5))


@pytest.mark.parametrize("margin", [None, 0.0, 1.5, 3.0])
def test_poisson_multinomial_draws_the_right_distribution(margin):
    """Poisson variates topped up to N: every cell's mean and variance, and the
    variance of sums of many cells (n p (1 - p): twice that for unconditioned
    Poisson counts at p = 1/2), match the multinomial, whatever the margin
    (None: the one the package picks; 0: half the draws are repeated; 3: a
    large top-up)."""
    counts = np.array([5000, 300, 150, 50, 7, 1, 1, 2, 900, 40] * 30, dtype=np.int64)
    n, reps = int(counts.sum()), 20_000
    out = naive.poisson_multinomial_draws(counts, reps, 5, margin)
    assert np.all(out.sum(axis=1) == n) and out.min() >= 0
    prob = counts / n
    z = (out.mean(axis=0) - n * prob) / np.sqrt(n * prob * (1 - prob) / reps)
    assert abs(z.mean()) < 4 / np.sqrt(len(z)) and abs(z.var() - 1) < 4 * np.sqrt(2 / len(z))
    ratio = out.var(axis=0, ddof=1) / (n * prob * (1 - prob))
    assert abs(ratio.mean() - 1) < 4 * np.sqrt(2 / reps / len(ratio))
    for sel in (slice(0, 150), slice(0, 300, 10), slice(8, 300, 10)):
        pa = prob[sel].sum()
        assert out[:, sel].sum(axis=1).var(ddof=1) / (n * pa * (1 - pa)) == pytest.approx(
            1.0, abs=5 * np.sqrt(2 / reps))


def test_poisson_margin_minimises_the_expected_reads():
    """The margin trades repeated Poisson draws against top-up rows: few cells
    want a small margin, many cells a large one, and the choice beats the
    fixed 1.5 of earlier releases in the cost model it minimises."""
    def reads(cells, n, m):
        phi, cdf = stats.norm.pdf(m), stats.norm.cdf(m)
        return cells / cdf + np.sqrt(n) * (m + phi / cdf)

    for cells, n in ((494, 10**6), (4994, 10**6), (300, 10**5), (30_000, 10**8)):
        m = fku.poisson_margin(cells, n)
        assert 0.0 <= m <= 3.0
        grid = np.linspace(0, 3, 3001)
        assert reads(cells, n, m) <= reads(cells, n, grid).min() * 1.001
        assert reads(cells, n, m) <= reads(cells, n, 1.5)
    assert fku.poisson_margin(494, 10**6) < 1.0 < fku.poisson_margin(4994, 10**6)


def _alias_masses(prob, alias):
    """The probability of each entry that an alias table draws (Walker's identity)."""
    w = len(prob)
    mass = prob.copy()
    np.add.at(mass, alias, 1.0 - prob)
    return mass / w


def test_poisson_tables_are_alias_tables_of_the_pmf():
    lam = np.array([0.3, 1.0, 17.5, 200.0, 5000.0])
    lo, ptr, prob, alias = sampling._poisson_tables(lam)
    for t, m in enumerate(lam):
        seg = slice(ptr[t], ptr[t + 1])
        ks = lo[t] + np.arange(ptr[t + 1] - ptr[t])
        assert np.all((prob[seg] >= 0) & (prob[seg] <= 1))
        assert np.all((alias[seg] >= 0) & (alias[seg] < len(ks)))
        np.testing.assert_allclose(_alias_masses(prob[seg], alias[seg]),
                                   stats.poisson.pmf(ks, m), rtol=1e-9, atol=1e-15)
        assert stats.poisson.cdf(lo[t] - 1, m) < 1e-16  # mass left out below the window
        assert stats.poisson.sf(ks[-1], m) < 1e-16  # and above it


def test_alias_table_of_counts_is_exact():
    """Whole-number weights: every bucket's mass is a ratio of integers, so the
    masses equal counts / N to rounding."""
    counts = np.array([5000, 300, 150, 50, 0, 7, 1, 1, 2, 900], dtype=np.float64)
    prob = np.empty(len(counts))
    alias = np.empty(len(counts), dtype=np.int64)
    sampling._alias_table(counts, prob, alias)
    np.testing.assert_allclose(_alias_masses(prob, alias), counts / counts.sum(),
                               rtol=1e-14, atol=1e-17)
    assert _alias_masses(prob, alias)[4] == 0.0  # an empty cell is never drawn


def test_alias_index_is_the_alias_rule_without_a_branch():
    """The branch-free pick equals ``i if x - i < prob[l0 + i] else alias[l0 + i]``
    for every uniform, including a fraction exactly at the threshold (the alias
    then), a threshold of 1 (never the alias) and u just below 1."""
    rng = np.random.default_rng(5)
    prob = np.array([0.25, 1.0, 0.5, 0.0, 0.75, 0.125, 1.0])
    alias = np.array([1, 1, 4, 6, 4, 0, 6])
    l0, width = 2, 4  # the table prob[2:6]; alias holds offsets within it
    u = np.concatenate([rng.random(20_000), [0.0, 1.0 - 2.0**-53],
                        (np.arange(width) + prob[l0:l0 + width]) / width,  # at a threshold
                        np.nextafter((np.arange(width) + prob[l0:l0 + width]) / width, 0.0)])
    for v in u:
        x = v * width
        i = min(int(x), width - 1)
        want = i if x - i < prob[l0 + i] else alias[l0 + i]
        assert sampling._alias_index(v, prob, alias, np.int64(l0), np.int64(width)) == want


@pytest.mark.parametrize("poisson", [True, False])
@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_sparse_bootstrap_matches_the_dense_path_in_distribution(weights, poisson,
                                                                 monkeypatch):
    """Different draws (fast sampler vs NumPy's binomial), same distribution.

    Two seeded samples of 4,000 replicates each: the two-sample KS test has
    power against a shift of about 0.04 SD; means agree within 4 standard
    errors of a difference and SDs within 8% (the SD of a sample SD at
    B = 4,000 is about 1.1%).
    """
    k = 30
    t, p = _banded(4000, k, seed=3)
    units = _units(t, p, k)
    if not poisson:
        monkeypatch.setattr(fku, "POISSON_TABLE_MAX", 0)
    assert (fku._poisson_tables(units) is not None) == poisson
    w = fk.weight_matrix(k, weights)
    reps = 4000
    seeds = fku.block_seeds(np.random.SeedSequence(5), reps)
    kern = _kern()
    dense = kern._bootstrap_kappa_types_serial(
        units.type_counts, units.type_ptr, units.type_cell, units.type_val,
        np.int64(units.n_units), units.cell_t, units.cell_p, k, w, reps, seeds)[:, 0]
    sparse = fku.bootstrap_kappas(units, w, reps, np.random.SeedSequence(6))[:, 0]
    assert stats.ks_2samp(dense, sparse).pvalue > 1e-3
    se = np.sqrt(dense.var() / reps + sparse.var() / reps)
    assert abs(dense.mean() - sparse.mean()) < 4 * se
    assert sparse.std() == pytest.approx(dense.std(), rel=0.08)


def test_sparse_bootstrap_serial_parallel_and_thread_counts_agree(threads):
    k = 25
    t, p = _banded(5000, k, seed=4)
    units = _units(t, p, k)
    w = fk.weight_matrix(k, "linear")
    seeds = fku.block_seeds(np.random.SeedSequence(9), 3000)
    args = (units.type_counts, units.type_cell, np.int64(units.n_units), units.cell_t,
            units.cell_p, k, w, fku.weight_kind(w), 3000, seeds)
    kern = _kern()
    serial = kern._bootstrap_kappa_cells_serial(*args)
    numba.set_num_threads(1)
    one = kern._bootstrap_kappa_cells(*args)
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    two = kern._bootstrap_kappa_cells(*args)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one, serial)
    assert np.all(np.isfinite(one))
    tables = fku._poisson_tables(units)
    assert tables is not None
    args = (*tables, np.int64(units.n_units), units.type_cell, *args[3:])
    serial = kern._bootstrap_kappa_cells_poisson_serial(*args)
    numba.set_num_threads(1)
    one = kern._bootstrap_kappa_cells_poisson(*args)
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    two = kern._bootstrap_kappa_cells_poisson(*args)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one, serial)
    assert np.all(np.isfinite(one))


def test_sparse_kappa_ci_is_reproducible_for_a_seed():
    t, p = _banded(2000, 20, seed=8)
    a = fk.kappa_ci(t, p, n_classes=20, n_resamples=300, seed=1)
    b = fk.kappa_ci(t, p, n_classes=20, n_resamples=300, seed=1)
    c = fk.kappa_ci(t, p, n_classes=20, n_resamples=300, seed=2)
    np.testing.assert_array_equal(a.distribution, b.distribution)
    assert (a.low, a.high) == (b.low, b.high)
    assert not np.array_equal(a.distribution, c.distribution)


# --------------------------------------------------------------------------- many joint rows


def _independent_models(n, n_models=3, k=5, seed=0):
    """Models erring independently on every row: almost a joint type per row."""
    rng = np.random.default_rng(seed)
    t = rng.integers(0, k, n)
    models = {f"m{i}": np.clip(t + rng.integers(-2, 3, n), 0, k - 1)
              for i in range(n_models)}
    return t, models


def _type_and_row_replicates(n=3000, reps=4000, weighted=False, chunk=None):
    k = 5
    t, models = _independent_models(n)
    p = np.stack(list(models.values()))
    w = fk.weight_matrix(k, "quadratic")
    cells_joint = t.astype(np.int64)
    for m in range(p.shape[0]):
        cells_joint = cells_joint * k + p[m]
    used, cells = np.unique(cells_joint, return_inverse=True)
    cell_p = np.stack([(used // k ** (p.shape[0] - 1 - m)) % k for m in range(p.shape[0])],
                      axis=1)
    cell_t = used // k ** p.shape[0]
    sw = np.random.default_rng(1).choice([0.5, 1.0, 2.0], n) if weighted else None
    units = fku.units_from_rows(cells, sw, cell_t, cell_p, k)
    by_types = fku.bootstrap_kappas(units, w, reps, np.random.SeedSequence(1), by_index=False)
    rc = fku.row_cells(t, p, k)
    if chunk is None:
        by_rows = fku.bootstrap_kappas_rows(rc, sw, k, w, reps, np.random.SeedSequence(2))
    else:
        by_rows = _kern()._bootstrap_kappa_row_tables(
            rc, np.empty(0) if sw is None else sw, np.int64(chunk), k, w, reps,
            fku.block_seeds(np.random.SeedSequence(2), reps))
    est = fku.full_kappas(units, w)[0]
    return by_types, by_rows, est


def _same_distribution(a, b):
    """Seeded samples of B = 4,000: KS p > 1e-3, means within 4 SE of a difference,
    SDs within 8% (the SD of a sample SD at B = 4,000 is about 1.1%)."""
    assert stats.ks_2samp(a, b).pvalue > 1e-3
    se = np.sqrt(a.var() / len(a) + b.var() / len(b))
    assert abs(a.mean() - b.mean()) < 4 * se
    assert b.std() == pytest.approx(a.std(), rel=0.08)


@pytest.mark.parametrize("weighted", [False, True])
def test_row_tables_match_the_joint_type_path_in_distribution(weighted):
    by_types, by_rows, est = _type_and_row_replicates(weighted=weighted)
    assert by_rows.shape == by_types.shape == (4000, 3)
    for m in range(3):
        _same_distribution(by_types[:, m], by_rows[:, m])
    # paired: the difference of two models, which is what compare reports
    _same_distribution(by_types[:, 0] - by_types[:, 1], by_rows[:, 0] - by_rows[:, 1])
    assert np.all(np.abs(by_rows.mean(axis=0) - est) < 4 * by_rows.std(axis=0))


def test_row_tables_with_many_small_chunks_draw_the_same_distribution():
    """Chunks of 7 rows (a multinomial over 429 chunks) against the type path."""
    by_types, by_rows, _ = _type_and_row_replicates(chunk=7)
    for m in range(3):
        _same_distribution(by_types[:, m], by_rows[:, m])


def test_row_tables_serial_parallel_and_thread_counts_agree(threads):
    t, models = _independent_models(2500, n_models=4)
    k = 5
    rc = fku.row_cells(t, np.stack(list(models.values())), k)
    w = fk.weight_matrix(k, "linear")
    seeds = fku.block_seeds(np.random.SeedSequence(4), 300)
    sw = np.random.default_rng(2).random(len(t))
    kern = _kern()
    for row_w in (np.empty(0), sw):
        args = (rc, row_w, np.int64(1000), k, w, 300, seeds)
        serial = kern._bootstrap_kappa_row_tables_serial(*args)
        numba.set_num_threads(1)
        one = kern._bootstrap_kappa_row_tables(*args)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = kern._bootstrap_kappa_row_tables(*args)
        np.testing.assert_array_equal(one, two)
        np.testing.assert_array_equal(one, serial)
        assert np.all(np.isfinite(one))


def test_row_cells_code_each_model_table_cell():
    t = np.array([0, 1, 2, 2])
    p = np.array([[0, 2, 1, 2], [1, 1, 0, 2]])
    rc = fku.row_cells(t, p, 3)
    assert rc.dtype == np.uint8 and rc.flags.c_contiguous
    np.testing.assert_array_equal(rc, [[0, 1], [5, 4], [7, 6], [8, 8]])
    assert fku.row_cells(np.array([0]), np.array([[0]]), 200).dtype == np.uint16
    assert fku.row_cells(np.array([0]), np.array([[0]]), 300).dtype == np.int64


def test_compare_takes_the_row_path_on_independent_errors_and_matches_sklearn():
    t, models = _independent_models(4000, n_models=3)
    n_types = np.unique(np.stack([t, *models.values()]), axis=1).shape[1]
    assert fku.use_row_tables(n_types, len(t), 5, 3)
    res = fk.compare(t, models, weights="quadratic", n_classes=5, n_resamples=400, seed=3)
    for nm, p in models.items():
        est = cohen_kappa_score(t, p, labels=range(5), weights="quadratic")
        assert res.models[nm].estimate == pytest.approx(est, abs=1e-12)
        assert res.models[nm].low < est < res.models[nm].high
    again = fk.compare(t, models, weights="quadratic", n_classes=5, n_resamples=400, seed=3)
    flipped = fk.compare(t, dict(reversed(models.items())), weights="quadratic",
                         n_classes=5, n_resamples=400, seed=3)
    for nm in models:
        np.testing.assert_array_equal(res.models[nm].distribution,
                                      again.models[nm].distribution)
        np.testing.assert_array_equal(res.models[nm].distribution,
                                      flipped.models[nm].distribution)


def test_compare_row_path_with_sample_weights_matches_sklearn_and_the_type_path(
        monkeypatch):
    t, models = _independent_models(3000, n_models=4)
    n_types = np.unique(np.stack([t, *models.values()]), axis=1).shape[1]
    assert fku.use_row_tables(n_types, len(t), 5, 4)
    sw = np.random.default_rng(3).choice([0.5, 1.0, 3.0], len(t))
    kw = dict(weights="linear", n_classes=5, n_resamples=1000, sample_weight=sw,
              method="percentile")
    res = fk.compare(t, models, seed=4, **kw)
    monkeypatch.setattr(fku, "ROWS_MIN_TYPES_PER_ROW", float("inf"))
    old = fk.compare(t, models, seed=5, **kw)
    for nm, p in models.items():
        est = cohen_kappa_score(t, p, labels=range(5), weights="linear", sample_weight=sw)
        assert res.models[nm].estimate == pytest.approx(est, abs=1e-12)
        a, b = old.models[nm].distribution, res.models[nm].distribution
        se = np.sqrt(a.var() / len(a) + b.var() / len(b))
        assert abs(a.mean() - b.mean()) < 4 * se
        assert abs(np.log(b.std() / a.std())) < 5 / np.sqrt(len(a))


def test_compare_keeps_the_joint_type_path_when_models_copy_the_truth():
    rng = np.random.default_rng(5)
    t = rng.integers(0, 5, 20_000)
    preds = np.stack([np.where(rng.random(len(t)) < 0.9, t, rng.integers(0, 5, len(t)))
                      for _ in range(3)])
    n_types = np.unique(np.vstack([t, preds]), axis=1).shape[1]
    assert not fku.use_row_tables(n_types, len(t), 5, 3)


# --------------------------------------------------------------------------- pure Python

PURE = textwrap.dedent("""
    import json, warnings
    import numpy as np
    warnings.simplefilter("ignore", RuntimeWarning)  # uint64 wrap-around, as in numba
    from fastkappa._core import units as fku
    import fastkappa as fk
    import naive
    rng = np.random.default_rng(0)
    k = 18
    t = rng.integers(0, k, 400)
    p = np.clip(t + rng.integers(-2, 3, 400), 0, k - 1)
    units = fku.units_from_counts(fk.confusion_matrix(t, p, n_classes=k))
    out = {}
    for name in (None, "linear", "quadratic"):
        w = fk.weight_matrix(k, name)
        est = fku.full_kappas(units, w)[0]
        reps = fku.bootstrap_kappas(units, w, 20, np.random.SeedSequence(1))[:, 0]
        out[str(name)] = [float(est[0]), bool(np.all(np.isfinite(reps)))]
    rc = fku.row_cells(t, np.stack([p, np.roll(p, 1)]), k)
    w = fk.weight_matrix(k, "quadratic")
    rows = fku.bootstrap_kappas_rows(rc, None, k, w, 20, np.random.SeedSequence(1))
    out["rows"] = rows.tolist()
    out["binom"] = [int(v) for v in naive.binomial_draws(10**6, 2e-4, 200, 3)]
    out["poisson"] = naive.poisson_multinomial_draws(
        np.array([50, 3, 1, 20, 7]), 30, 4).ravel().tolist()
    out["binom_small"] = [int(v) for v in naive.binomial_draws(20, 0.3, 200, 3)]
    print(json.dumps(out))
""")


def _pure(disable: bool) -> dict:
    here = os.path.dirname(os.path.abspath(__file__))  # tests/, for naive.py
    env = dict(os.environ, NUMBA_DISABLE_JIT="1" if disable else "0",
               PYTHONPATH=os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, "-c", PURE], env=env, capture_output=True,
                          text=True, check=True, timeout=600)
    return json.loads(proc.stdout)


def test_new_kernels_as_plain_python_give_the_compiled_results():
    plain, compiled = _pure(True), _pure(False)
    for key in ("None", "linear", "quadratic"):
        assert plain[key][1] and compiled[key][1]
        assert plain[key][0] == pytest.approx(compiled[key][0], abs=1e-12)
    # the generator is ours (not NumPy's per-thread one): identical draws either way
    assert plain["binom"] == compiled["binom"]
    assert plain["poisson"] == compiled["poisson"]
    np.testing.assert_allclose(plain["rows"], compiled["rows"], rtol=0, atol=1e-12)
    assert plain["binom_small"] == compiled["binom_small"]


def test_many_classes_with_nearly_a_cell_per_row_take_the_sparse_draw(rng, monkeypatch):
    # more occupied cells than a quarter of the rows made the bootstrap draw rows by
    # index and score each replicate's dense K x K table: 4.5x slower at K = 2000
    k, n = 300, 4000
    t = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.7, t, rng.integers(0, k, n))
    units = fku.units_from_counts(fk.confusion_matrix(t, p, n_classes=k))
    assert units.by_index and fku.sparse_cells(units)

    def refuse(*args, **kwargs):
        raise AssertionError("drew rows by index")

    monkeypatch.setattr(fku._kernels(), "_bootstrap_kappa_units", refuse)
    monkeypatch.setattr(fku._kernels(), "_bootstrap_kappa_units_serial", refuse)
    reps = fk.kappa_ci(t, p, n_classes=k, weights="quadratic", n_resamples=300, seed=0,
                       method="percentile").distribution
    want = cohen_kappa_score(t, p, weights="quadratic")
    assert abs(np.mean(reps) - want) < 4 * np.std(reps)  # centred on the estimate
