"""Large-sample standard errors: statsmodels, SAS PROC FREQ and finite-difference oracles."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import naive
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import fce_variances_exact, kappa_from_table

import fastkappa as fk
from fastkappa import _asymptotic
from fastkappa._core.units import _single_model_cells, units_from_clusters, units_from_rows

# SAS PROC FREQ printouts transcribed in statsmodels' test suite
# (statsmodels/stats/tests/test_inter_rater.py at commit 99d59e3d5fa8, classes
# UnweightedCohens and TestWeightedCohens: res10_sas, res10_sash0, res10w_sas,
# res10w_sash0); the Fleiss, Cohen & Everitt (1969) table as in R psych's kappa.Rd.
SAS_TABLE = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]
SAS_CASES = {
    None: {"kappa": 0.4842, "exact": Fraction(107, 221), "ase": 0.138, "ci_low": 0.2137,
           "ci_high": 0.7547, "ase_h0": 0.1484, "z": 3.2626, "p_two_sided": 0.0011},
    "linear": {"kappa": 0.4701, "exact": Fraction(118, 251), "ase": 0.1457,
               "ci_low": 0.1845, "ci_high": 0.7558, "ase_h0": 0.1426, "z": 3.2971,
               "p_two_sided": 0.001},
}
SAS_TOL = 5.1e-5  # four printed decimals
FCE_TABLE = [[106, 10, 4], [22, 28, 10], [2, 12, 6]]


def _sm_weights(weights):
    """statsmodels' parametrisation of our named weights (wt=..., 1-D scores)."""
    return {"wt": weights} if weights is not None else {}


def _random_table(rng, k):
    o = rng.integers(0, 40, (k, k))
    o[np.arange(k), np.arange(k)] += rng.integers(5, 60, k)
    return o


@pytest.mark.parametrize("k", [2, 3, 4, 6])
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_fce_variances_equal_statsmodels(rng, k, weights):
    sm = pytest.importorskip("statsmodels.stats.inter_rater")
    for _ in range(5):
        o = _random_table(rng, k)
        res = sm.cohens_kappa(o, **_sm_weights(weights))
        ci = fk.kappa_ci_from_confusion(o, weights=weights, method="asymptotic")
        assert ci.estimate == pytest.approx(res.kappa, rel=1e-12)
        assert ci.standard_error == pytest.approx(res.std_kappa, rel=1e-12)
        assert ci.standard_error_null == pytest.approx(res.std_kappa0, rel=1e-12)
        assert ci.z == pytest.approx(res.z_value, rel=1e-10)
        assert ci.p_value == pytest.approx(res.pvalue_two_sided, rel=1e-8, abs=1e-300)


def test_fce_variances_custom_matrix_equal_statsmodels(rng):
    """statsmodels takes a 2-D matrix as Wikipedia-style weights with max 1: ours rescaled."""
    sm = pytest.importorskip("statsmodels.stats.inter_rater")
    w = np.array([[0, 2, 5], [1, 0, 3], [4, 2, 0]], dtype=float)  # asymmetric
    o = _random_table(rng, 3)
    res = sm.cohens_kappa(o, weights=w / w.max())
    ci = fk.kappa_ci_from_confusion(o, weights=w, method="asymptotic")
    assert ci.standard_error == pytest.approx(res.std_kappa, rel=1e-12)
    assert ci.standard_error_null == pytest.approx(res.std_kappa0, rel=1e-12)


@pytest.mark.parametrize("weights", [None, "linear"])
def test_kappa_ci_from_confusion_sas_values(weights):
    exp, tol = SAS_CASES[weights], SAS_TOL
    res = fk.kappa_ci_from_confusion(SAS_TABLE, weights=weights, method="asymptotic")
    assert res.estimate == pytest.approx(float(exp["exact"]), rel=1e-12)
    assert res.estimate == pytest.approx(exp["kappa"], abs=tol)
    assert res.standard_error == pytest.approx(exp["ase"], abs=tol)
    assert res.low == pytest.approx(exp["ci_low"], abs=tol)
    assert res.high == pytest.approx(exp["ci_high"], abs=tol)
    assert res.standard_error_null == pytest.approx(exp["ase_h0"], abs=tol)
    assert res.z == pytest.approx(exp["z"], abs=tol)
    assert res.p_value == pytest.approx(exp["p_two_sided"], abs=tol)


def test_kappa_ci_from_confusion_fleiss_cohen_everitt_table():
    res = fk.kappa_ci_from_confusion(FCE_TABLE, method="asymptotic")
    assert res.estimate == pytest.approx(3 / 7, rel=1e-12)
    sm = pytest.importorskip("statsmodels.stats.inter_rater")
    ref = sm.cohens_kappa(FCE_TABLE)
    assert res.standard_error == pytest.approx(ref.std_kappa, rel=1e-12)
    assert res.standard_error_null == pytest.approx(ref.std_kappa0, rel=1e-12)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cell_influence_equals_finite_difference(rng, weights):
    """IF_ij = d/d eps kappa((1 - eps) p + eps e_ij) at eps = 0 (the definition)."""
    k = 4
    o = _random_table(rng, k).astype(float)
    w = fk.weight_matrix(k, weights)
    info = _asymptotic.cell_influence(o, w)
    p = o / o.sum()
    eps = 1e-6
    for i in range(k):
        for j in range(k):
            e = np.zeros((k, k))
            e[i, j] = 1.0
            up = kappa_from_table((1 - eps) * p + eps * e, w.tolist(), exact=False)
            down = kappa_from_table((1 + eps) * p - eps * e, w.tolist(), exact=False)
            assert info.influence[i, j] == pytest.approx((up - down) / (2 * eps), abs=1e-6)
    assert np.sum(p * info.influence) == pytest.approx(0.0, abs=1e-12)
    assert np.sum(info.expected * info.null_influence) == pytest.approx(0.0, abs=1e-12)
    assert np.sum(p * info.null_influence) == pytest.approx(info.kappa, abs=1e-12)


def _rows_from_table(o):
    k = o.shape[0]
    cells = np.repeat(np.arange(k * k), o.ravel())
    return cells // k, cells % k


@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_row_variance_singletons_equal_fce(rng, weights):
    k = 3
    o = _random_table(rng, k)
    w = fk.weight_matrix(k, weights)
    info = _asymptotic.cell_influence(o, w)
    t, p = _rows_from_table(o)
    exact_var, exact_var0, _ = fce_variances_exact(o, weights)
    var, var0 = float(exact_var), float(exact_var0)
    assert naive.robust_variance(info.influence[t, p]) == pytest.approx(var, rel=1e-12)
    # singleton clusters and equal weights change nothing
    codes = np.arange(len(t))
    cell_t, cell_p = _single_model_cells(k)
    units = units_from_clusters(t * k + p, None, codes, len(t), cell_t, cell_p, k)
    rv, rv0 = _asymptotic.robust_variances(
        info, units.cell_t, units.cell_p[:, 0], units.type_counts, units.type_ptr,
        units.type_cell, units.type_val, len(t))
    assert rv == pytest.approx(var, rel=1e-12)
    assert rv0 == pytest.approx(var0, rel=1e-12)


def test_robust_variances_clusters_equal_brute_force(rng):
    """Cluster-robust variance from types equals the sum over clusters of row IFs."""
    k, n_clusters = 4, 300
    sizes = rng.integers(1, 5, n_clusters)
    codes = np.repeat(np.arange(n_clusters), sizes)
    n = len(codes)
    latent = rng.integers(0, k, n_clusters)[codes]  # rows of a cluster agree more
    t = np.clip(latent + rng.integers(-1, 2, n), 0, k - 1)
    p = np.clip(latent + rng.integers(-1, 2, n), 0, k - 1)
    sw = rng.choice([0.5, 1.0, 3.0], n)
    w = fk.weight_matrix(k, "linear")
    table = np.zeros((k, k))
    np.add.at(table, (t, p), sw)
    info = _asymptotic.cell_influence(table, w)
    # brute force: loop over clusters
    row_if = info.influence[t, p]
    sums = np.zeros(n_clusters)
    for r in range(n):
        sums[codes[r]] += sw[r] * row_if[r]
    brute = float(np.sum(sums**2)) / sw.sum() ** 2
    cell_t, cell_p = _single_model_cells(k)
    units = units_from_clusters(t * k + p, sw, codes, n_clusters, cell_t, cell_p, k)
    rv, rv0 = _asymptotic.robust_variances(
        info, units.cell_t, units.cell_p[:, 0], units.type_counts, units.type_ptr,
        units.type_cell, units.type_val, n)
    assert rv == pytest.approx(brute, rel=1e-10)
    # null: FCE null variance (weighted table) times the design effect of IF0 - kappa
    g = info.null_influence[t, p] - info.kappa
    gs = np.zeros(n_clusters)
    for r in range(n):
        gs[codes[r]] += sw[r] * g[r]
    deff = (np.sum(gs**2) / sw.sum() ** 2) / (np.sum(sw * g * g) / sw.sum() / n)
    null_iid = float(np.sum(info.expected * info.null_influence**2)) / n
    assert rv0 == pytest.approx(null_iid * deff, rel=1e-10)
    res = fk.kappa_ci(t, p, weights="linear", sample_weight=sw, clusters=codes,
                      method="asymptotic")
    assert res.standard_error == pytest.approx(math.sqrt(brute), rel=1e-10)
    assert res.standard_error_null == pytest.approx(math.sqrt(null_iid * deff), rel=1e-10)


def test_robust_variances_weighted_rows_equal_brute_force(rng):
    k, n = 3, 400
    t = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.6, t, rng.integers(0, k, n))
    sw = rng.uniform(0.2, 3.0, n)
    table = np.zeros((k, k))
    np.add.at(table, (t, p), sw)
    w = fk.weight_matrix(k, "quadratic")
    info = _asymptotic.cell_influence(table, w)
    brute = float(np.sum((sw * info.influence[t, p]) ** 2)) / sw.sum() ** 2
    cell_t, cell_p = _single_model_cells(k)
    units = units_from_rows(t * k + p, sw, cell_t, cell_p, k)
    rv, _ = _asymptotic.robust_variances(
        info, units.cell_t, units.cell_p[:, 0], units.type_counts, units.type_ptr,
        units.type_cell, units.type_val, n)
    assert rv == pytest.approx(brute, rel=1e-10)
    res = fk.kappa_ci(t, p, weights="quadratic", sample_weight=sw, method="asymptotic")
    assert res.estimate == pytest.approx(
        fk.cohen_kappa(t, p, weights="quadratic", sample_weight=sw), rel=1e-12)
    assert res.standard_error == pytest.approx(math.sqrt(brute), rel=1e-10)


@pytest.mark.parametrize("weights", [None, "linear"])
def test_compare_asymptotic_pair_se_equals_brute_force(rng, weights):
    """Var(kappa_a - kappa_b) from IF_a - IF_b per row (loops in naive.py), with weights
    and clusters; zero for identical models."""
    k, n = 3, 500
    t = rng.integers(0, k, n)
    pa = np.where(rng.random(n) < 0.7, t, rng.integers(0, k, n))
    pb = np.where(rng.random(n) < 0.5, t, rng.integers(0, k, n))
    res = fk.compare(t, {"a": pa, "b": pb}, weights=weights, method="asymptotic")
    want = naive.paired_difference_variance(t, pa, pb, k, weights)
    assert res.pairs[0].standard_error == pytest.approx(math.sqrt(want), rel=1e-10)
    sw = rng.choice([0.5, 1.0, 3.0], n)
    codes = np.arange(n) // 4
    res = fk.compare(t, {"a": pa, "b": pb}, weights=weights, method="asymptotic",
                     sample_weight=sw, clusters=codes)
    want = naive.paired_difference_variance(t, pa, pb, k, weights, sw, codes)
    assert res.pairs[0].standard_error == pytest.approx(math.sqrt(want), rel=1e-10)
    assert naive.paired_difference_variance(t, pa, pa, k, weights) == 0.0


def test_agreement_weights_rescale_and_single_class():
    w = fk.weight_matrix(3, "quadratic")
    np.testing.assert_allclose(_asymptotic.agreement_weights(w),
                               [[1, 0.75, 0], [0.75, 1, 0.75], [0, 0.75, 1]])
    np.testing.assert_array_equal(_asymptotic.agreement_weights(np.zeros((1, 1))), [[1.0]])


#: statsmodels' float evaluation of the FCE standard errors: relative error at
#: most STATSMODELS_ROUNDING * K^2 * eps * cancellation (see _se_tolerance)
STATSMODELS_ROUNDING = 64
#: fastkappa's own evaluation: the same form, a tighter constant
FASTKAPPA_ROUNDING = 4


def _se_tolerance(k: int, cancellation: float, constant: float) -> float:
    """Relative error a float evaluation of an FCE standard error may carry.

    Each variance is a difference ``S - T`` of two sums over the K^2 cells
    (see ``naive.fce_variances_exact``).  In float64 each cell's term is rounded at a few ulps of
    ``S``, so ``S - T`` carries about ``K^2 * eps * S`` of absolute error:
    relative error ``K^2 * eps * cancellation`` with ``cancellation = S /
    (S - T)``, which is huge on near-degenerate tables (one big diagonal
    cell, a single off-diagonal pair: ``[[0, 1], [1, 853]]`` gives 3e8).  The
    standard error's square root halves it.  Over 6,000 random near-degenerate
    tables (K = 2..5, every weighting) the largest observed constants were
    17 for statsmodels and 0.26 for fastkappa; the constants used leave room.
    That is why statsmodels differs from the exact value by up to 1.7e-7
    relative there: its rounding, not a different formula.
    """
    return constant * k * k * np.finfo(float).eps * cancellation


def _check_se(got: float, exact_var, k: int, cancellation: float, constant: float):
    exact = math.sqrt(exact_var)
    if exact_var == 0:  # perfect disagreement: a float difference of equal terms
        assert got <= 1e-7
    else:
        assert abs(got - exact) <= _se_tolerance(k, cancellation, constant) * exact + 1e-300


@settings(deadline=None, max_examples=60)
@given(k=st.integers(2, 5), data=st.data(),
       weights=st.sampled_from([None, "linear", "quadratic"]))
def test_kappa_ci_asymptotic_equals_the_exact_fce_variance_and_statsmodels(k, data, weights):
    """Oracle: the FCE variances in exact rational arithmetic (tests/naive.py).

    statsmodels is checked too, at the tolerance its float rounding allows on
    the drawn table (``_se_tolerance``), so a near-degenerate table never
    fails on a rounding fluke and hypothesis has no failure to replay.
    """
    sm = pytest.importorskip("statsmodels.stats.inter_rater")
    cells = data.draw(st.lists(st.integers(0, 1000), min_size=k * k, max_size=k * k))
    o = np.array(cells).reshape(k, k)
    o[0, 1] += 1  # both raters use two classes: kappa is defined
    o[1, 0] += 1
    with warnings.catch_warnings():
        # a zero SE (perfect disagreement, e.g. [[0, 1], [1, 0]]) warns; checked elsewhere
        warnings.simplefilter("ignore", fk.DegenerateIntervalWarning)
        res = fk.kappa_ci_from_confusion(o, weights=weights, method="asymptotic")
    var, var0, cancellation = fce_variances_exact(o, weights)
    exact_kappa = float(kappa_from_table(o.tolist(), weights))
    assert res.estimate == pytest.approx(exact_kappa, rel=1e-12, abs=1e-15)
    _check_se(res.standard_error, var, k, cancellation, FASTKAPPA_ROUNDING)
    _check_se(res.standard_error_null, var0, k, cancellation, FASTKAPPA_ROUNDING)
    ref = sm.cohens_kappa(o, **_sm_weights(weights))
    assert ref.kappa == pytest.approx(exact_kappa, rel=1e-9, abs=1e-12)
    _check_se(ref.std_kappa, var, k, cancellation, STATSMODELS_ROUNDING)
    _check_se(ref.std_kappa0, var0, k, cancellation, STATSMODELS_ROUNDING)
    assert -1 <= res.low <= res.high <= 1


@pytest.mark.parametrize(("table", "weights"), [
    ([[0, 1], [1, 853]], "linear"),
    ([[0, 1, 0], [1, 792, 0], [0, 0, 0]], "quadratic"),
    ([[0, 1, 0], [1, 607, 0], [0, 230, 0]], "linear"),
    ([[496, 1], [1, 0]], "quadratic"),
])
def test_near_degenerate_tables_statsmodels_rounding_is_what_the_tolerance_says(table, weights):
    """The tables where statsmodels drifted (up to 1.7e-7 relative) from the exact SE."""
    sm = pytest.importorskip("statsmodels.stats.inter_rater")
    o = np.array(table)
    k = len(table)
    var, var0, cancellation = fce_variances_exact(o, weights)
    assert cancellation > 1e7  # these tables are the hard case
    res = fk.kappa_ci_from_confusion(o, weights=weights, method="asymptotic")
    _check_se(res.standard_error, var, k, cancellation, FASTKAPPA_ROUNDING)
    _check_se(res.standard_error_null, var0, k, cancellation, FASTKAPPA_ROUNDING)
    ref = sm.cohens_kappa(o, wt=weights)
    _check_se(ref.std_kappa, var, k, cancellation, STATSMODELS_ROUNDING)
    _check_se(ref.std_kappa0, var0, k, cancellation, STATSMODELS_ROUNDING)
    # and fastkappa is the closer of the two to the exact value
    exact = math.sqrt(var)
    assert abs(res.standard_error - exact) <= abs(ref.std_kappa - exact) + 1e-18


@pytest.mark.parametrize("weights", [None, "linear", "quadratic", "custom"])
def test_fce_many_equals_one_table_at_a_time(weights):
    """The batched closed form (kappa_by_group's asymptotic intervals) equals
    cell_influence + _fce_from_info table by table, degenerate tables included."""
    from fastkappa import _asymptotic as asy

    rng = np.random.default_rng(8)
    k = 4
    tables = rng.integers(0, 30, (60, k, k)).astype(np.int64)
    tables[0] = np.diag([5, 3, 0, 2])  # perfect agreement: SE 0
    tables[1] = 0
    tables[1, 2, 2] = 7  # one class for both: undefined
    w = rng.random((k, k)) if weights == "custom" else fk.weight_matrix(k, weights)
    if weights == "custom":
        w = w + w.T
        np.fill_diagonal(w, 0.0)
    kappa, se, defined = asy.fce_many(tables, w)
    for i, tab in enumerate(tables):
        info = asy.cell_influence(tab, w)
        if not defined[i]:
            with pytest.warns(fk.UndefinedKappaWarning):
                assert i == 1 and np.isnan(fk.kappa_from_confusion(tab, weights=w))
            continue
        var, _ = asy._fce_from_info(info, info.n)
        assert kappa[i] == pytest.approx(info.kappa, abs=1e-13)
        assert se[i] == pytest.approx(np.sqrt(max(var, 0.0)), abs=1e-13)
    assert se[0] == pytest.approx(0.0, abs=1e-15)
