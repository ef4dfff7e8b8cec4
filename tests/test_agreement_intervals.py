"""fk.agreement: Gwet's standard errors, the item-type bootstrap, clusters, results."""

from __future__ import annotations

import json
import math
import warnings

import naive
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastkappa as fk
from fastkappa import raters as _r
from fastkappa._raters_input import encode_ratings

ALL = ("percent_agreement", "fleiss_kappa", "conger_kappa", "gwet_ac", "brennan_prediger",
       "krippendorff_alpha")


def ratings(rng, n=60, n_raters=4, k=3, p_missing=0.2, agree=0.6):
    truth = rng.integers(0, k, n)
    x = np.where(rng.random((n, n_raters)) < agree, truth[:, None],
                 rng.integers(0, k, (n, n_raters))).astype(float)
    x[rng.random(x.shape) < p_missing] = np.nan
    x[0, :] = np.arange(n_raters) % k
    return x


# --------------------------------------------------------------------------- asymptotic


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 6), n_raters=st.integers(2, 8),
       population=st.sampled_from([None, 50, 400]),
       weights=st.sampled_from([None, "quadratic"]))
def test_population_size_matches_irrcac(seed, k, n_raters, population, weights):
    import irrCAC.raw as irr  # installed by the README test command (--no-deps)
    rng = np.random.default_rng(seed)
    x = ratings(rng, 40, n_raters, k)
    a = _r.agreement_weights(k, weights)
    df = pd.DataFrame(x).dropna(how="all")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cac = irr.CAC(df, weights=a, categories=list(range(k)), digits=20,
                      N=np.inf if population is None else population)
        ref = {"fleiss_kappa": cac.fleiss()["est"], "gwet_ac": cac.gwet()["est"],
               "conger_kappa": cac.conger()["est"],
               "krippendorff_alpha": cac.krippendorff()["est"]}
    res = fk.agreement(x, weights=weights, n_classes=k, population_size=population,
                       coefficients=list(ref))
    for name, r in ref.items():
        assert res[name].standard_error == pytest.approx(float(r["se"]), abs=1e-10), name


def test_interval_of_an_estimate_below_minus_one_contains_it():
    # Fleiss' kappa on partly rated items can fall below -1 (irrCAC: -2.6, SE 0.28);
    # the lower bound was clipped at -1, giving [-1, -1], which excludes the estimate
    import irrCAC.raw as irr

    x = np.array([[1, 0], [np.nan, 1], [1, np.nan]])
    want = irr.CAC(pd.DataFrame(x)).fleiss()
    row = fk.agreement(x, coefficients=["fleiss_kappa"])["fleiss_kappa"]
    assert row.estimate == pytest.approx(want["est"]["coefficient_value"], abs=1e-12)
    assert row.standard_error == pytest.approx(want["est"]["se"], abs=1e-12)
    half = 1.959963984540054 * row.standard_error  # normal, where irrCAC takes t(n - 1)
    assert (row.low, row.high) == pytest.approx((row.estimate - half, row.estimate + half))
    with pytest.warns(fk.DegenerateIntervalWarning, match="replicates"):
        boot = fk.agreement(x, coefficients=["fleiss_kappa"], method="percentile",
                            n_resamples=200, seed=0)["fleiss_kappa"]
    assert boot.low <= boot.estimate <= boot.high


def test_missing_cluster_id_message_offers_no_nan_policy():
    # it suggested nan_policy='omit', which the agreement functions do not take
    x = np.array([[1, 1], [2, 2], [1, 2], [2, 2], [1, 1], [2, 1]])
    msg = r"1 row with a missing id .* take no nan_policy: drop those rows first\)\.$"
    with pytest.raises(ValueError, match=msg):
        fk.agreement(x, clusters=[1, 2, np.nan, 1, 2, 3])
    acc = fk.AgreementAccumulator().update([1, 1, 2, 2], [0, 1, 0, 1], [1, 1, 2, 1])
    with pytest.raises(ValueError, match=msg):
        acc.compute(clusters={1: "a", 2: None})
    with pytest.raises(ValueError, match="or pass nan_policy='omit' to drop those rows"):
        fk.kappa_ci([1, 2, 1], [1, 2, 2], clusters=[1, None, 2])


def test_percent_agreement_se_matches_loops(rng):
    x = ratings(rng)
    res = fk.agreement(x, coefficients="percent_agreement", weights="linear")
    a = _r.agreement_weights(3, "linear").tolist()
    rows = [[None if v != v else int(v) for v in row] for row in x]
    assert res["percent_agreement"].standard_error == pytest.approx(
        naive.percent_agreement_se(rows, 3, a), abs=1e-12)


def test_cluster_standard_error_matches_loops(rng):
    x = ratings(rng, 90)
    clusters = rng.integers(0, 40, 90)
    rows = [[None if v != v else int(v) for v in row] for row in x]
    d = naive.fleiss_influence(rows, 3, np.eye(3).tolist())
    sums = {}
    for c, di in zip(clusters.tolist(), d, strict=True):
        sums[c] = sums.get(c, 0.0) + di
    n_c, n = len(sums), len(d)
    want = math.sqrt(n_c / (n_c - 1) / n**2 * sum(v * v for v in sums.values()))
    res = fk.agreement(x, coefficients="fleiss_kappa", clusters=clusters)
    assert res["fleiss_kappa"].standard_error == pytest.approx(want, abs=1e-12)
    assert res.n_clusters == n_c
    # singleton clusters give the item-level SE exactly
    one = fk.agreement(x, clusters=np.arange(90))
    plain = fk.agreement(x)
    for name in ALL:
        assert one[name].standard_error == pytest.approx(plain[name].standard_error,
                                                         rel=1e-12), name


def test_asymptotic_interval_is_estimate_plus_minus_z_se(rng):
    res = fk.agreement(ratings(rng), confidence_level=0.9)
    z = 1.6448536269514722
    for row in res:
        assert row.low == pytest.approx(max(row.estimate - z * row.standard_error, -1), 1e-12)
        assert row.high == pytest.approx(min(row.estimate + z * row.standard_error, 1), 1e-12)
        p = math.erfc(abs(row.estimate / row.standard_error) / math.sqrt(2))
        assert row.p_value == pytest.approx(p, rel=1e-12)


# --------------------------------------------------------------------------- bootstrap


@pytest.mark.parametrize("weights, level", [(None, "nominal"), ("quadratic", "ordinal"),
                                            ("linear", "interval")])
def test_jackknife_by_type_equals_leaving_an_item_out(rng, weights, level):
    x = ratings(rng, 30)
    table = encode_ratings(x)
    model = _r.build_model(table, ALL, weights, level)
    jack = _r.values(model, model.total[None, :] - model.features)
    for t in range(len(model.type_counts)):
        i = int(np.flatnonzero(model.item_type == t)[0])
        rest = np.delete(table.codes, i, axis=0).astype(float)
        rest[rest < 0] = np.nan
        for name in ALL:
            if name == "krippendorff_alpha":
                want = fk.krippendorff_alpha(rest, level=level, n_classes=3)
            else:
                want = getattr(fk, name)(rest, weights=weights, n_classes=3)
            assert jack[name][t] == pytest.approx(want, abs=1e-12), (name, t)


def _index_bootstrap(x, n_rep, seed, clusters=None):
    """Plain index resampling of items (or clusters), coefficients recomputed."""
    rng = np.random.default_rng(seed)
    out = {name: [] for name in ALL}
    if clusters is not None:
        ids = np.unique(clusters)
        members = [np.flatnonzero(clusters == c) for c in ids]
    for _ in range(n_rep):
        if clusters is None:
            idx = rng.integers(0, len(x), len(x))
        else:
            idx = np.concatenate([members[j] for j in rng.integers(0, len(ids), len(ids))])
        res = fk.agreement(x[idx], n_classes=3)
        for name in ALL:
            out[name].append(res[name].estimate)
    return {k: np.array(v) for k, v in out.items()}


# few clusters are incidental here: the cluster-count warning is tested in test_defects
@pytest.mark.filterwarnings("ignore:only [0-9]+ clusters:fastkappa.DegenerateIntervalWarning")
@pytest.mark.parametrize("n, clustered", [(80, False), (80, True), (2000, False)])
def test_type_bootstrap_matches_index_resampling_in_distribution(rng, n, clustered):
    """80 items: more types than a quarter of the units (units drawn by index);
    2,000 items: a multinomial over the types."""
    stats = pytest.importorskip("scipy.stats")
    x = ratings(rng, n)
    clusters = rng.integers(0, n // 3, n) if clustered else None
    fast = fk.agreement(x, method="percentile", n_resamples=4000, seed=1, clusters=clusters,
                        n_classes=3)
    slow = _index_bootstrap(x, 400, 2, clusters)
    for name in ALL:
        a, b = fast[name].distribution, slow[name]
        # same distribution: the KS p-value is uniform, so with fixed seeds a p
        # above 1e-3 fails by chance once in a thousand seeds
        assert stats.ks_2samp(a, b).pvalue > 1e-3, name
        # mean within 4 standard errors of the difference of two means
        se = math.sqrt(a.var() / len(a) + b.var() / len(b))
        assert abs(a.mean() - b.mean()) < 4 * se, name
        # SD within 4 standard errors (SE of an SD ~ SD / sqrt(2 B))
        assert abs(a.std() - b.std()) < 4 * b.std() / math.sqrt(2 * len(b)), name


def test_multinomial_and_unit_draws_agree_in_distribution(rng):
    stats = pytest.importorskip("scipy.stats")
    x = ratings(rng, 120)
    model = _r.build_model(encode_ratings(x), ALL)
    units = _r.Units(model.features, model.type_counts, None)
    seq = np.random.SeedSequence(5)
    a = _r.values(model, _r.bootstrap_moments(model, units, 3000, seq, by_index=False))
    b = _r.values(model, _r.bootstrap_moments(model, units, 3000, seq, by_index=True))
    for name in ALL:
        assert stats.ks_2samp(a[name], b[name]).pvalue > 1e-3, name


def test_same_seed_same_interval_at_any_thread_count(rng):
    numba = pytest.importorskip("numba")
    x = ratings(rng, 200)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = fk.agreement(x, method="bca", n_resamples=3000, seed=7)
        numba.set_num_threads(max(1, numba.config.NUMBA_NUM_THREADS))
        many = fk.agreement(x, method="bca", n_resamples=3000, seed=7)
    finally:
        numba.set_num_threads(before)
    for name in ALL:
        np.testing.assert_array_equal(one[name].distribution, many[name].distribution)
        assert (one[name].low, one[name].high) == (many[name].low, many[name].high)
    other = fk.agreement(x, method="bca", n_resamples=3000, seed=8)
    assert other["fleiss_kappa"].low != one["fleiss_kappa"].low
    assert one.seed == 7 and one.to_dict()["seed"] == 7


@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
def test_bootstrap_intervals(rng, method):
    x = ratings(rng, 150)
    res = fk.agreement(x, method=method, n_resamples=2000, seed=3)
    for row in res:
        d = row.distribution
        assert row.method == method and len(d) == 2000
        assert row.standard_error == pytest.approx(np.std(d, ddof=1), rel=1e-12)
        q_lo, q_hi = np.quantile(d, [0.025, 0.975])
        if method == "percentile":
            assert (row.low, row.high) == pytest.approx((q_lo, q_hi), abs=1e-12)
        elif method == "basic":
            assert (row.low, row.high) == pytest.approx(
                (2 * row.estimate - q_hi, 2 * row.estimate - q_lo), abs=1e-12)
        assert row.low < row.estimate < row.high


def test_constant_bootstrap_warns():
    x = np.array([[0, 0, 0], [1, 1, 1], [2, 2, 2]] * 10, dtype=float)
    with pytest.warns(fk.DegenerateIntervalWarning, match="constant"):
        res = fk.agreement(x, method="percentile", n_resamples=200, seed=0,
                           coefficients="percent_agreement")
    assert res["percent_agreement"].low == res["percent_agreement"].high == 1.0


# --------------------------------------------------------------------------- results


def test_result_formats(rng):
    res = fk.agreement(ratings(rng), weights="quadratic", method="percentile",
                       n_resamples=500, seed=11)
    text = str(res)
    assert "Gwet's AC2" in text and "Krippendorff's alpha" in text and "500" in text
    assert "<table>" in res._repr_html_()
    d = json.loads(json.dumps(res.to_dict()))
    assert d["method"] == "percentile" and d["seed"] == 11 and d["weights"] == "quadratic"
    assert d["fastkappa_version"] == fk.__version__ and d["n_resamples"] == 500
    assert [c["coefficient"] for c in d["coefficients"]] == list(ALL)
    df = res.to_dataframe()
    assert list(df.index) == list(ALL)
    assert df.loc["fleiss_kappa", "estimate"] == res["fleiss_kappa"].estimate
    with pytest.raises(KeyError):
        res["cohen"]


def test_nan_becomes_none_in_to_dict():
    x = [[1, 1], [1, 1], [1, 1]]
    with pytest.warns(fk.UndefinedKappaWarning), pytest.warns(fk.DegenerateIntervalWarning):
        res = fk.agreement(x, coefficients=["percent_agreement", "fleiss_kappa"])
    d = json.loads(json.dumps(res.to_dict()))
    assert d["coefficients"][1]["estimate"] is None
    assert d["coefficients"][0]["estimate"] == 1.0


def test_zero_standard_error_warns():
    x = np.array([[0, 0, 0], [1, 1, 1], [2, 2, 2]] * 10, dtype=float)
    with pytest.warns(fk.DegenerateIntervalWarning, match="zero width"):
        res = fk.agreement(x, coefficients="percent_agreement")
    assert res["percent_agreement"].low == res["percent_agreement"].high == 1.0
    assert res.seed is None and res.level == "nominal"


def test_level_follows_weights(rng):
    x = ratings(rng)
    res = fk.agreement(x, weights="linear")
    assert res.level == "linear" and res.to_dict()["level"] == "linear"
    # Krippendorff's alpha with the same linear disagreement matrix
    assert res["krippendorff_alpha"].estimate == pytest.approx(
        fk.krippendorff_alpha(x, level=fk.weight_matrix(3, "linear")), abs=1e-15)


def test_counts_input_leaves_out_conger():
    res = fk.agreement(counts=[[3, 0], [1, 2], [0, 3], [2, 1]])
    assert "conger_kappa" not in [r.coefficient for r in res]


@pytest.mark.parametrize("kwargs, match", [
    (dict(coefficients=["cohen"]), "unknown coefficient"),
    (dict(coefficients=["fleiss_kappa", "fleiss_kappa"]), "each coefficient once"),
    (dict(population_size=3), "population_size"),
    (dict(method="normal"), "`method` must be"),
    (dict(confidence_level=95), "For a 95% interval pass 0.95"),
    (dict(n_resamples=1, method="bca"), "at least 2"),
    (dict(clusters=[1, 2]), "one id per row"),
    (dict(seed=-1), "non-negative"),
])
def test_agreement_option_errors(rng, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fk.agreement(ratings(rng, 20), **kwargs)


# few clusters are incidental here: the cluster-count warning is tested in test_defects
@pytest.mark.filterwarnings("ignore:only [0-9]+ clusters:fastkappa.DegenerateIntervalWarning")
def test_unrated_items_change_nothing_but_the_count(rng):
    x = ratings(rng, 60)
    clusters = np.arange(60) // 3
    y = np.vstack([x[:30], np.full((4, 4), np.nan), x[30:]])
    y_clusters = np.concatenate([clusters[:30], [100, 100, 5, 101], clusters[30:]])
    for method in ("asymptotic", "bca"):
        want = fk.agreement(x, method=method, n_resamples=300, seed=2, clusters=clusters)
        got = fk.agreement(y, method=method, n_resamples=300, seed=2, clusters=y_clusters)
        assert got.n_unrated == 4 and got.n_items == 60 and got.n_clusters == want.n_clusters
        for a, b in zip(got, want, strict=True):
            assert (a.estimate, a.standard_error, a.low, a.high) == pytest.approx(
                (b.estimate, b.standard_error, b.low, b.high), abs=1e-13), a.coefficient


# few clusters are incidental here: the cluster-count warning is tested in test_defects
@pytest.mark.filterwarnings("ignore:only [0-9]+ clusters:fastkappa.DegenerateIntervalWarning")
def test_long_format_clusters_per_row_or_per_item(rng):
    x = ratings(rng, 60)
    clusters = np.arange(60) // 3
    want = fk.agreement(x, clusters=clusters)
    items, raters = np.nonzero(~np.isnan(x))
    order = rng.permutation(len(items))
    long = dict(item=items[order] + 1000, rater=raters[order],
                label=x[items, raters][order])
    per_row = fk.agreement(**long, clusters=clusters[items[order]])
    per_item = fk.agreement(**long, clusters=clusters)
    for a, b, c in zip(per_row, per_item, want, strict=True):
        assert a.standard_error == pytest.approx(c.standard_error, abs=1e-13)
        assert b.standard_error == pytest.approx(c.standard_error, abs=1e-13)
    bad = clusters[items[order]].copy()
    bad[0] += 1
    with pytest.raises(ValueError, match="same item"):
        fk.agreement(**long, clusters=bad)
    with pytest.raises(ValueError, match="one id per row of the long-format data"):
        fk.agreement(**long, clusters=clusters[:10])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_distinct_cluster_rows_equal_numpy_unique(n, width, seed):
    """Cluster feature rows deduplicated by hash equal ``np.unique(axis=0)`` (which
    took 7 s at 1e6 clusters): same rows, same order, same counts, -0.0 as 0.0."""
    from fastkappa._raters_input import distinct_float_rows

    gen = np.random.default_rng(seed)
    x = gen.choice([0.0, -0.0, 1.0, 2.5, 1e300], size=(n, width))
    want_rows, want_cnt = np.unique(x + 0.0, axis=0, return_counts=True)
    rows, cnt = distinct_float_rows(x.copy())
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(cnt, want_cnt)


def test_distinct_cluster_rows_survive_a_hash_collision(monkeypatch):
    from fastkappa._core import units
    from fastkappa._raters_input import distinct_float_rows

    monkeypatch.setattr(units, "_mix64", lambda v: np.zeros_like(v))
    x = np.array([[1.0, 2.0], [0.0, 1.0], [1.0, 2.0], [3.0, 0.0]])
    rows, cnt = distinct_float_rows(x.copy())
    np.testing.assert_array_equal(rows, [[0.0, 1.0], [1.0, 2.0], [3.0, 0.0]])
    np.testing.assert_array_equal(cnt, [1, 2, 1])


def _conger_chance_outer(m, s):
    """Conger's ``p_e`` through the (B, K, K) outer products and covariances."""
    k, rk = m.k, m.n_raters
    cg = s[:, m.c].reshape(len(s), rk, k)
    with np.errstate(invalid="ignore", divide="ignore"):
        pg = cg / cg.sum(axis=2)[:, :, None]
    pbar = pg.mean(axis=1)
    outer = pbar[:, :, None] * pbar[:, None, :]
    cov = (np.einsum("bgk,bgl->bkl", pg, pg) - rk * outer) / (rk - 1)
    return np.einsum("kl,bkl->b", m.a, outer - cov / rk)


@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_conger_replicate_chance_agreement_needs_no_k_squared_per_replicate(rng, weights):
    """Conger's chance agreement of B bootstrap replicates built (B, K, K) outer products
    and covariances (a MemoryError of 6.7 GiB at K = 300, 2,000 items, 4 raters); it
    is now O(B R K), with the same values to rounding."""
    import tracemalloc

    k, b = 120, 400
    x = rng.integers(0, k, (300, 4)).astype(float)
    x[rng.random(x.shape) < 0.1] = np.nan
    table = encode_ratings(x, n_classes=k, weighted=weights is not None)
    m = _r.build_model(table, ["conger_kappa"], weights)
    units = _r.Units(m.features, m.type_counts, None)
    s = _r.bootstrap_moments(m, units, b, np.random.SeedSequence(0))
    tracemalloc.start()
    try:
        got = _r._chance("conger_kappa", m, s)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(got, _conger_chance_outer(m, s), rtol=0, atol=1e-12)
    assert peak < b * k * k * 8 / 4  # one (B, K, K) array is 46 MB


def test_single_item_bootstrap_warns_only_fastkappa_warnings():
    """BCa's jackknife of a single item left no rated item: two raw NumPy
    RuntimeWarnings (invalid value in divide) leaked besides fastkappa's own."""
    from fastkappa.exceptions import DegenerateIntervalWarning

    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        fk.agreement([[0, 1, 1]], method="bca", seed=0, n_resamples=100)
    assert got
    assert all(issubclass(w.category, (DegenerateIntervalWarning, fk.UndefinedKappaWarning))
               for w in got), [str(w.message) for w in got]


def test_seeded_interval_depends_on_the_type_kind_only(rng):
    """Documented: for one seed a coefficient's interval is the same with any
    companions resampled as count vectors, and may differ once Conger's kappa makes
    the types rating rows."""
    x = ratings(rng, 120, 4, 3, p_missing=0.0)

    def pa(coefficients):
        row = fk.agreement(x, method="percentile", seed=0, n_resamples=500,
                           coefficients=coefficients)["percent_agreement"]
        return row.low, row.high

    alone = pa(["percent_agreement"])
    assert pa(["percent_agreement", "fleiss_kappa", "krippendorff_alpha"]) == alone
    assert pa(["percent_agreement", "conger_kappa"]) != alone
