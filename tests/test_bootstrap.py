"""kappa_ci and the resampling paths: oracles are scikit-learn, scipy, brute-force loops."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import naive
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastkappa as fk
from fastkappa._core import intervals as fki
from fastkappa._core import units as fku
from fastkappa.exceptions import DegenerateIntervalWarning, UndefinedKappaWarning

ROOT = Path(__file__).resolve().parents[1]


def graded(rng, n, k=4, agree=0.6):
    t = rng.integers(0, k, n)
    p = np.where(rng.random(n) < agree, t, np.clip(t + rng.integers(-1, 2, n), 0, k - 1))
    return t, p


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize("method", ["BCa", "bootstrap", "", None, 3])
def test_kappa_ci_rejects_unknown_method(method):
    with pytest.raises(ValueError, match=r"`method` must be 'percentile', 'basic', 'bca' or "
                                         r"'asymptotic'; got"):
        fk.kappa_ci([0, 1], [0, 1], method=method)


@pytest.mark.parametrize("level", [0, 1, 1.5, -0.1, float("nan"), "0.95", True])
def test_kappa_ci_rejects_bad_confidence_level(level):
    with pytest.raises(ValueError, match=r"`confidence_level` must be .*between 0 and 1"):
        fk.kappa_ci([0, 1], [0, 1], confidence_level=level)


def test_kappa_ci_confidence_level_in_percent_gets_a_hint():
    with pytest.raises(ValueError, match=r"For a 95% interval pass 0.95"):
        fk.kappa_ci([0, 1], [0, 1], confidence_level=95)


def test_n_resamples_beyond_what_memory_holds_is_refused_before_anything_runs(
        monkeypatch):
    # regression: numba's bare "MemoryError: Allocation failed" from inside a kernel
    t, p = [0, 1, 1, 0, 2], [0, 1, 0, 0, 2]
    match = (r"`n_resamples` is 1,000,000,000,000, more than the 2,147,483,648 supported "
             r"\(the replicates alone take 7,450.6 GiB, 8 bytes each\); pass fewer")
    calls = {
        "kappa_ci": lambda n: fk.kappa_ci(t, p, n_resamples=n),
        "compare": lambda n: fk.compare(t, {"a": p, "b": t}, n_resamples=n),
        "kappa_by_group": lambda n: fk.kappa_by_group(t, p, [0, 0, 1, 1, 1],
                                                      method="percentile", n_resamples=n),
        "agreement": lambda n: fk.agreement(np.array([t, p]).T, n_resamples=n),
    }
    monkeypatch.setattr(fki, "_physical_memory", lambda: 2**40)
    for call in calls.values():
        with pytest.raises(ValueError, match=match):
            call(10**12)
    # on a machine with less memory, its memory is the bound
    monkeypatch.setattr(fki, "_physical_memory", lambda: 8 * 10**6)
    with pytest.raises(ValueError, match=r"more than the 1,000,000 that fit in this machine's "
                                         "memory"):
        fk.kappa_ci(t, p, n_resamples=10**6 + 1)
    monkeypatch.setattr(fki, "_physical_memory", lambda: None)  # the OS does not say
    with pytest.raises(ValueError, match="the 2,147,483,648 supported"):
        fk.kappa_ci(t, p, n_resamples=2**31 + 1)
    monkeypatch.undo()
    # reasonable requests pass the check (the interval itself is not drawn here)
    for n in (10**6, 10**7):
        assert fki._kappa_ci_iv("bca", 0.95, n, 0)[2] == n


@pytest.mark.parametrize("n_resamples", [0, 1, -5, 2.5, "100", True, None])
def test_kappa_ci_rejects_bad_n_resamples(n_resamples):
    with pytest.raises(ValueError, match=r"`n_resamples` must be an integer of at least 2"):
        fk.kappa_ci([0, 1], [0, 1], n_resamples=n_resamples)


@pytest.mark.parametrize("seed", [-1, 1.5, "x", np.random.RandomState(0)])
def test_kappa_ci_rejects_bad_seed(seed):
    with pytest.raises(ValueError, match=r"`seed` must be"):
        fk.kappa_ci([0, 1], [0, 1], seed=seed)


def test_kappa_ci_rejects_bad_clusters():
    y = [0, 1, 1, 0]
    with pytest.raises(ValueError, match=r"`clusters` must have one id per row: got 3 ids "
                                         r"for 4 rows"):
        fk.kappa_ci(y, y, clusters=[1, 2, 3])
    with pytest.raises(ValueError, match=r"`clusters` holds 1 row with a missing id.*"
                                         r"nan_policy='omit'"):
        fk.kappa_ci(y, y, clusters=[1.0, np.nan, 2.0, 2.0])
    with pytest.raises(ValueError, match=r"`clusters` must be a 1-D array"):
        fk.kappa_ci(y, y, clusters=np.zeros((4, 2)))


def test_kappa_ci_from_confusion_rejects_weighted_tables():
    with pytest.raises(ValueError, match=r"must hold counts \(whole numbers\) to be "
                                         r"resampled.*sample_weight"):
        fk.kappa_ci_from_confusion([[1.5, 2], [0, 3]])
    # the asymptotic interval resamples nothing: it needs the row count
    with pytest.raises(ValueError, match=r"must hold counts \(whole numbers\) for the "
                                         r"asymptotic variance, which counts rows"):
        fk.kappa_ci_from_confusion([[1.5, 2], [0, 3]], method="asymptotic")
    with pytest.raises(ValueError, match=r"square"):
        fk.kappa_ci_from_confusion([[1, 2, 3]])
    with pytest.raises(ValueError, match=r"method"):
        fk.kappa_ci_from_confusion([[1, 2], [0, 3]], method="wald")
    with pytest.raises(ValueError, match=r"counts sum to \d+ rows, at or beyond 2\*\*63"):
        fk.kappa_ci_from_confusion([[1e19, 2], [0, 3]])


def test_kappa_ci_input_errors_come_from_validation():
    with pytest.raises(ValueError, match=r"same length"):
        fk.kappa_ci([0, 1, 2], [0, 1])
    with pytest.raises(ValueError, match=r"`weights` must be None, 'linear', 'quadratic'"):
        fk.kappa_ci([0, 1], [0, 1], weights="quad")


# --------------------------------------------------------------------------- results


def test_kappa_ci_result_prints_and_serialises(rng):
    t, p = graded(rng, 400)
    res = fk.kappa_ci(t, p, seed=1, n_resamples=2000)
    assert isinstance(res, fk.KappaCI)
    s = str(res)
    assert s.startswith(f"kappa = {res.estimate:.2f} (95% CI {res.low:.2f} to "
                        f"{res.high:.2f}, BCa)")
    assert repr(res) == s  # a REPL shows the same short line
    html = res._repr_html_()
    assert "<table>" in html and "BCa" in html
    d = res.to_dict()
    assert d["method"] == "bca" and d["n_resamples"] == 2000 and "distribution" not in d
    assert json.loads(json.dumps(res.to_dict(distribution=True)))["distribution"][0] == \
        pytest.approx(res.distribution[0])
    with pytest.raises(AttributeError):
        res.low = 0.0  # frozen
    same = fk.kappa_ci(t, p, seed=1, n_resamples=2000)
    assert same == res  # arrays do not take part in ==
    hash(res)


def test_kappa_ci_to_dict_writes_nan_as_null():
    with pytest.warns(UndefinedKappaWarning):
        res = fk.kappa_ci([1, 1, 1], [1, 1, 1], seed=0)
    text = json.dumps(res.to_dict())
    assert "NaN" not in text and json.loads(text)["estimate"] is None
    assert math.isnan(res.estimate) and "kappa = nan" in str(res)


def test_kappa_ci_str_formats_levels():
    res = fk.kappa_ci_from_confusion([[20, 5], [3, 22]], method="asymptotic",
                                     confidence_level=0.9)
    assert "(90% CI" in str(res) and str(res).endswith("asymptotic)")
    res = fk.kappa_ci_from_confusion([[20, 5], [3, 22]], method="percentile",
                                     confidence_level=0.999, n_resamples=500, seed=0)
    assert "(99.9% CI" in str(res) and str(res).endswith("percentile)")


# --------------------------------------------------------------------------- estimates


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("method", ["percentile", "basic", "bca", "asymptotic"])
def test_kappa_ci_estimate_equals_sklearn(rng, weights, method):
    from sklearn.metrics import cohen_kappa_score

    t, p = graded(rng, 300, k=5)
    res = fk.kappa_ci(t, p, weights=weights, method=method, n_resamples=500, seed=3)
    assert res.estimate == pytest.approx(cohen_kappa_score(t, p, weights=weights), rel=1e-12)
    assert -1 <= res.low <= res.estimate <= res.high <= 1
    assert res.method == method
    assert res.n_resamples == (0 if method == "asymptotic" else 500)


def test_kappa_ci_from_confusion_equals_kappa_ci_on_rows(rng):
    t, p = graded(rng, 500)
    table = fk.confusion_matrix(t, p)
    for method in ("percentile", "basic", "bca", "asymptotic"):
        a = fk.kappa_ci(t, p, weights="quadratic", method=method, n_resamples=1000, seed=5)
        b = fk.kappa_ci_from_confusion(table, weights="quadratic", method=method,
                                       n_resamples=1000, seed=5)
        assert a == b
        np.testing.assert_array_equal(a.distribution, b.distribution)


def test_kappa_ci_bootstrap_se_close_to_asymptotic(rng):
    t, p = graded(rng, 5000, k=5)
    boot = fk.kappa_ci(t, p, weights="quadratic", method="percentile", seed=0)
    asym = fk.kappa_ci(t, p, weights="quadratic", method="asymptotic")
    assert boot.standard_error == pytest.approx(asym.standard_error, rel=0.05)
    assert boot.standard_error_null == asym.standard_error_null
    assert boot.z == asym.z and boot.p_value == asym.p_value
    assert boot.low == pytest.approx(asym.low, abs=0.01)
    assert boot.high == pytest.approx(asym.high, abs=0.01)


def test_kappa_ci_input_keywords_fix_classes_and_drop_rows(rng):
    t, p = graded(rng, 600, k=4)
    # classes 0..5 declared: kappa uses the full scale; ignore_index / omit drop rows
    p_bad = p.astype(float)
    p_bad[:7] = np.nan
    t_ign = t.copy()
    t_ign[10:20] = -1
    clusters = np.arange(600) // 3
    keep = np.ones(600, bool)
    keep[:7] = False
    keep[10:20] = False
    ref = fk.kappa_ci(t[keep], p[keep], weights="quadratic", n_classes=6, seed=9,
                      n_resamples=1000, clusters=clusters[keep])
    res = fk.kappa_ci(t_ign, p_bad, weights="quadratic", n_classes=6, seed=9,
                      n_resamples=1000, nan_policy="omit", ignore_index=-1, clusters=clusters)
    assert res == ref
    np.testing.assert_array_equal(res.distribution, ref.distribution)
    assert ref.estimate == pytest.approx(
        naive.kappa_ref(t[keep], p[keep], 6, "quadratic"), rel=1e-12)
    labels = ["a", "b", "c", "d"]
    names = np.array(labels, dtype=object)
    res_s = fk.kappa_ci(names[t], names[p], labels=labels, weights="linear", seed=1,
                        n_resamples=500)
    res_i = fk.kappa_ci(t, p, n_classes=4, weights="linear", seed=1, n_resamples=500)
    assert res_s == res_i


def test_kappa_ci_scores_with_thresholds(rng):
    t = rng.integers(0, 3, 400)
    scores = t + rng.normal(0, 0.6, 400)
    res = fk.kappa_ci(t, scores, thresholds=[0.5, 1.5], weights="quadratic", seed=0,
                      n_resamples=500)
    pred = np.searchsorted([0.5, 1.5], scores, side="right")
    assert res.estimate == pytest.approx(naive.kappa_ref(t, pred, 3, "quadratic"), rel=1e-12)


# --------------------------------------------------------------------------- determinism


def test_kappa_ci_same_seed_same_interval(rng):
    t, p = graded(rng, 300)
    a = fk.kappa_ci(t, p, seed=11, n_resamples=1000)
    b = fk.kappa_ci(t, p, seed=np.random.SeedSequence(11), n_resamples=1000)
    np.testing.assert_array_equal(a.distribution, b.distribution)
    ss = np.random.SeedSequence(4)
    c1 = fk.kappa_ci(t, p, seed=ss, n_resamples=1000)
    c2 = fk.kappa_ci(t, p, seed=ss, n_resamples=1000)  # a SeedSequence is not advanced
    np.testing.assert_array_equal(c1.distribution, c2.distribution)
    gen = np.random.default_rng(2)
    g1 = fk.kappa_ci(t, p, seed=gen, n_resamples=1000)
    g2 = fk.kappa_ci(t, p, seed=gen, n_resamples=1000)  # a Generator is advanced
    assert not np.array_equal(g1.distribution, g2.distribution)
    g3 = fk.kappa_ci(t, p, seed=np.random.default_rng(2), n_resamples=1000)
    np.testing.assert_array_equal(g1.distribution, g3.distribution)
    assert not np.array_equal(a.distribution, fk.kappa_ci(t, p, seed=12,
                                                          n_resamples=1000).distribution)


_DETERMINISM_SCRIPT = """
import json, sys
import numpy as np
import fastkappa as fk
rng = np.random.default_rng(0)
n = 3000
t = rng.integers(0, 4, n)
p = np.where(rng.random(n) < 0.6, t, rng.integers(0, 4, n))
cl = np.arange(n) // 3
sw = rng.uniform(0.5, 2.0, n)
out = {}
out["iid"] = fk.kappa_ci(t, p, seed=7, n_resamples=3000).to_dict(distribution=True)
out["clusters"] = fk.kappa_ci(t, p, seed=7, n_resamples=3000, clusters=cl,
                              weights="quadratic").to_dict(distribution=True)
out["weighted"] = fk.kappa_ci(t, p, seed=7, n_resamples=300, sample_weight=sw,
                              weights="linear").to_dict(distribution=True)
out["few_weights"] = fk.kappa_ci(t, p, seed=7, n_resamples=3000,
                                 sample_weight=np.round(sw)).to_dict(distribution=True)
import numba
out["threads"] = numba.get_num_threads()
json.dump(out, sys.stdout)
"""


def _run_with_threads(n_threads: int) -> dict:
    env = dict(os.environ, NUMBA_NUM_THREADS=str(n_threads))
    proc = subprocess.run([sys.executable, "-c", _DETERMINISM_SCRIPT], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=True)
    return json.loads(proc.stdout)


def test_kappa_ci_same_seed_same_result_at_one_and_two_threads():
    one, two = _run_with_threads(1), _run_with_threads(2)
    assert one.pop("threads") == 1 and two.pop("threads") == 2
    assert one == two


def test_kappa_ci_concurrent_python_threads(rng):
    t, p = graded(rng, 2000)
    ref = fk.kappa_ci(t, p, seed=3, n_resamples=2000, clusters=np.arange(2000) // 2)
    results = [None] * 4
    errors = []

    def work(i):
        try:
            results[i] = fk.kappa_ci(t, p, seed=3, n_resamples=2000,
                                     clusters=np.arange(2000) // 2)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    for r in results:
        np.testing.assert_array_equal(r.distribution, ref.distribution)


def test_bootstrap_serial_and_parallel_kernels_give_identical_replicates(rng):
    k = 4
    units = fku.units_from_counts(rng.integers(1, 100, (k, k)))
    seeds = fku.block_seeds(np.random.SeedSequence(3), 5000)
    kern = fku._kernels()
    args = (units.type_counts, units.type_ptr, units.type_cell, units.type_val,
            np.int64(units.n_units), units.cell_t, units.cell_p, k, fk.weight_matrix(k),
            5000, seeds)
    np.testing.assert_array_equal(kern._bootstrap_kappa_types(*args),
                                  kern._bootstrap_kappa_types_serial(*args))


# --------------------------------------------------------------------------- paths agree


def _ks_agree(a, b, n_rep):
    from scipy.stats import ks_2samp

    assert ks_2samp(a, b).pvalue > 0.001
    # mean and std within Monte-Carlo error (5 standard errors)
    sd = np.std(a, ddof=1)
    assert abs(np.mean(a) - np.mean(b)) < 5 * sd * math.sqrt(2 / n_rep)
    assert abs(np.std(a, ddof=1) / np.std(b, ddof=1) - 1) < 5 * math.sqrt(1 / n_rep)


@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_multinomial_and_row_index_bootstrap_agree_in_distribution(rng, weights):
    k, n, n_rep = 4, 400, 20_000
    t, p = graded(rng, n, k)
    w = fk.weight_matrix(k, weights)
    units = fku.units_from_counts(fk.confusion_matrix(t, p, n_classes=k))
    fast = fku.bootstrap_kappas(units, w, n_rep, np.random.SeedSequence(1))[:, 0]
    rows = naive.row_bootstrap_kappas(t, p, k, weights, n_rep, 2)
    _ks_agree(fast, rows, n_rep)


def test_cluster_types_and_unit_index_bootstrap_agree_in_distribution(rng):
    k, n_clusters, n_rep = 3, 300, 20_000
    sizes = rng.integers(1, 4, n_clusters)
    codes = np.repeat(np.arange(n_clusters), sizes)
    latent = rng.integers(0, k, n_clusters)[codes]
    t = np.clip(latent + rng.integers(-1, 2, len(codes)), 0, k - 1)
    p = np.clip(latent + rng.integers(-1, 2, len(codes)), 0, k - 1)
    cell_t, cell_p = fku._single_model_cells(k)
    units = fku.units_from_clusters(t * k + p, None, codes, n_clusters, cell_t, cell_p, k)
    assert units.n_types < n_clusters
    w = fk.weight_matrix(k, "linear")
    types = fku.bootstrap_kappas(units, w, n_rep, np.random.SeedSequence(1), by_index=False)
    index = fku.bootstrap_kappas(units, w, n_rep, np.random.SeedSequence(2), by_index=True)
    _ks_agree(types[:, 0], index[:, 0], n_rep)
    # the index path against a plain loop over cluster ids (numpy, no fastkappa kernels)
    gen = np.random.default_rng(3)
    rows_of = [np.flatnonzero(codes == c) for c in range(n_clusters)]
    plain = np.empty(2000)
    for b in range(len(plain)):
        rows = np.concatenate([rows_of[c] for c in gen.integers(0, n_clusters, n_clusters)])
        plain[b] = naive.kappa_ref(t[rows], p[rows], k, "linear")
    from scipy.stats import ks_2samp

    assert ks_2samp(types[:, 0], plain).pvalue > 0.001


def test_weighted_rows_types_and_row_index_agree_in_distribution(rng):
    k, n, n_rep = 3, 400, 20_000
    t, p = graded(rng, n, k)
    sw = rng.choice([0.5, 1.0, 2.0], n)
    cell_t, cell_p = fku._single_model_cells(k)
    units = fku.units_from_rows(t * k + p, sw, cell_t, cell_p, k)
    assert units.n_types <= 3 * k * k and not units.by_index
    w = fk.weight_matrix(k, "quadratic")
    types = fku.bootstrap_kappas(units, w, n_rep, np.random.SeedSequence(1))[:, 0]
    rows = naive.row_bootstrap_kappas(t, p, k, "quadratic", n_rep, 2, sample_weight=sw)
    _ks_agree(types, rows, n_rep)


def test_continuous_weights_draw_rows_and_agree_in_distribution(rng, monkeypatch):
    """Weights that differ on every row (a type per row): kappa_ci draws rows
    straight into the table; its replicates match resampling rows with NumPy."""
    import fastkappa.bootstrap as fkb

    k, n, n_rep = 4, 2000, 20_000
    t, p = graded(rng, n, k)
    sw = rng.gamma(2.0, 1.0, n)
    calls = []
    real = fkb.bootstrap_kappas_rows
    monkeypatch.setattr(fkb, "bootstrap_kappas_rows",
                        lambda *a: calls.append(1) or real(*a))
    res = fk.kappa_ci(t, p, weights="quadratic", sample_weight=sw, method="percentile",
                      n_resamples=n_rep, seed=3)
    assert calls
    assert res.estimate == pytest.approx(
        naive.kappa_ref(t, p, k, "quadratic", sw=sw), abs=1e-12)
    rows = naive.row_bootstrap_kappas(t, p, k, "quadratic", n_rep, 2, sample_weight=sw)
    _ks_agree(res.distribution, rows, n_rep)
    again = fk.kappa_ci(t, p, weights="quadratic", sample_weight=sw, method="percentile",
                        n_resamples=n_rep, seed=3)
    np.testing.assert_array_equal(again.distribution, res.distribution)


def test_clusters_of_one_row_match_iid_bootstrap(rng):
    t, p = graded(rng, 500)
    iid = fk.kappa_ci(t, p, seed=1, n_resamples=20_000, method="percentile")
    cl = fk.kappa_ci(t, p, seed=2, n_resamples=20_000, method="percentile",
                     clusters=np.arange(500))
    _ks_agree(iid.distribution, cl.distribution, 20_000)
    assert cl.standard_error_null == pytest.approx(iid.standard_error_null, rel=1e-12)
    asym = fk.kappa_ci(t, p, method="asymptotic")
    asym_cl = fk.kappa_ci(t, p, method="asymptotic", clusters=np.arange(500))
    assert asym_cl.standard_error == pytest.approx(asym.standard_error, rel=1e-12)


def test_kappa_ci_clusters_widen_the_interval_for_correlated_rows(rng):
    # every cluster is one row duplicated 4 times: the effective n is n / 4
    t, p = graded(rng, 300)
    t4, p4, cl = np.repeat(t, 4), np.repeat(p, 4), np.repeat(np.arange(300), 4)
    base = fk.kappa_ci(t, p, method="asymptotic")
    naive = fk.kappa_ci(t4, p4, method="asymptotic")
    robust = fk.kappa_ci(t4, p4, method="asymptotic", clusters=cl)
    assert naive.standard_error == pytest.approx(base.standard_error / 2, rel=1e-10)
    assert robust.standard_error == pytest.approx(base.standard_error, rel=1e-10)
    assert robust.standard_error_null == pytest.approx(base.standard_error_null, rel=1e-10)
    boot = fk.kappa_ci(t4, p4, clusters=cl, seed=0, n_resamples=4000)
    boot_base = fk.kappa_ci(t, p, seed=0, n_resamples=4000)
    assert boot.standard_error == pytest.approx(boot_base.standard_error, rel=0.06)


def test_units_from_clusters_collapses_identical_tables(rng):
    # clusters with identical tables (in any row order) become one type
    k = 3
    t = np.array([0, 1, 1, 0, 2, 2, 0, 1])
    p = np.array([0, 2, 2, 0, 2, 2, 0, 2])
    codes = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    cell_t, cell_p = fku._single_model_cells(k)
    units = fku.units_from_clusters(t * k + p, None, codes, 4, cell_t, cell_p, k)
    # tables: {00, 12}, {12, 00}, {22, 22}, {00, 12} -> two types, counts 3 and 1
    assert units.n_types == 2
    np.testing.assert_array_equal(units.type_counts, [3, 1])
    np.testing.assert_allclose(units.table(), fk.confusion_matrix(t, p, n_classes=3))
    # weighted: distinct weights split types
    sw = np.array([1, 1, 1, 1, 1, 1, 2, 1.0])
    units_w = fku.units_from_clusters(t * k + p, sw, codes, 4, cell_t, cell_p, k)
    assert units_w.n_types == 3
    np.testing.assert_allclose(units_w.table(),
                               fk.confusion_matrix(t, p, n_classes=3, sample_weight=sw))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 5), st.sampled_from([1.0, 2.0, 0.5])),
                         max_size=4), min_size=1, max_size=30))
def test_assign_types_in_numpy_equals_the_kernel(units_spec):
    """The NumPy pass numbers types exactly as the kernel does (hash order)."""
    ptr = np.zeros(len(units_spec) + 1, dtype=np.int64)
    cells, vals = [], []
    for i, entries in enumerate(units_spec):
        table = dict(entries)  # one value per cell, cells sorted
        cells += sorted(table)
        vals += [table[c] for c in sorted(table)]
        ptr[i + 1] = len(cells)
    cell = np.array(cells, dtype=np.int64)
    bits = np.array(vals, dtype=np.float64).view(np.uint64)
    unit_type, reps = fku.assign_types(ptr, cell, bits)
    h1, h2 = fku._unit_hashes(ptr, cell, bits)
    ref_type, ref_reps = fku._kernels()._assign_types(np.lexsort((h2, h1)), h1, h2, ptr,
                                                      cell, bits)
    np.testing.assert_array_equal(unit_type, ref_type)
    np.testing.assert_array_equal(reps, ref_reps)
    # and types are exact: equal tables share a type, different ones never do
    key = [tuple(sorted(dict(e).items())) for e in units_spec]
    for a in range(len(key)):
        for b in range(len(key)):
            assert (unit_type[a] == unit_type[b]) == (key[a] == key[b])


def test_encode_clusters_accepts_strings_and_aligns_with_kept_rows():
    with pytest.warns(DegenerateIntervalWarning, match="only 2 clusters"):
        codes, n = fku.encode_clusters(["b", "a", "b", "c", "a"], 5,
                                      np.array([True, True, True, False, True]))
    assert n == 2
    assert codes[0] == codes[2] and codes[1] == codes[3] and codes[0] != codes[1]


def test_joint_cells_resample_several_models_together(rng):
    """Two models on the same rows: joint cells (t, pa, pb) -> one table per model."""
    k, n = 3, 400
    t, pa = graded(rng, n, k, agree=0.7)
    pb = np.where(rng.random(n) < 0.5, pa, rng.integers(0, k, n))
    j = np.arange(k**3)
    cell_t = j // (k * k)
    cell_p = np.stack([(j // k) % k, j % k], axis=1)
    units = fku.units_from_rows(t * k * k + pa * k + pb, None, cell_t, cell_p, k)
    w = fk.weight_matrix(k, "quadratic")
    est, _ = fku.full_kappas(units, w)
    np.testing.assert_allclose(est, [naive.kappa_ref(t, pa, k, "quadratic"),
                                     naive.kappa_ref(t, pb, k, "quadratic")], rtol=1e-12)
    np.testing.assert_allclose(units.table(1), fk.confusion_matrix(t, pb, n_classes=k))
    reps = fku.bootstrap_kappas(units, w, 20_000, np.random.SeedSequence(0))
    single = fku.bootstrap_kappas(fku.units_from_counts(fk.confusion_matrix(t, pb)), w, 20_000,
                                 np.random.SeedSequence(1))
    _ks_agree(reps[:, 1], single[:, 0], 20_000)
    # paired: the difference's spread is below what independent draws would give
    diff = reps[:, 0] - reps[:, 1]
    assert np.std(diff) < np.sqrt(np.var(reps[:, 0]) + np.var(reps[:, 1]))
    # leave-one-row-out for both models at once
    jack = fku.jackknife_kappas(units, w)
    a = [fki.bca_acceleration(jack[:, m], units.type_counts) for m in range(2)]
    assert a[1] == pytest.approx(naive.jackknife_acceleration(t, pb, k, "quadratic"), rel=1e-9)
    assert a[0] == pytest.approx(naive.jackknife_acceleration(t, pa, k, "quadratic"), rel=1e-9)


# --------------------------------------------------------------------------- jackknife / BCa


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_bca_acceleration_from_cells_equals_brute_force_jackknife(rng, weights):
    k = 4
    t, p = graded(rng, 60, k)
    w = fk.weight_matrix(k, weights)
    units = fku.units_from_counts(fk.confusion_matrix(t, p, n_classes=k))
    jack = fku.jackknife_kappas(units, w)[:, 0]
    a = fki.bca_acceleration(jack, units.type_counts)
    assert a == pytest.approx(naive.jackknife_acceleration(t, p, k, weights), rel=1e-9, abs=1e-14)


def test_bca_acceleration_clusters_and_weights_equal_brute_force(rng):
    k = 3
    n_clusters = 40
    codes = np.repeat(np.arange(n_clusters), rng.integers(1, 4, n_clusters))
    n = len(codes)
    t, p = graded(rng, n, k)
    sw = rng.choice([0.5, 1.0, 2.0], n)
    w = fk.weight_matrix(k, "quadratic")
    cell_t, cell_p = fku._single_model_cells(k)
    units = fku.units_from_clusters(t * k + p, sw, codes, n_clusters, cell_t, cell_p, k)
    a = fki.bca_acceleration(fku.jackknife_kappas(units, w)[:, 0], units.type_counts)
    assert a == pytest.approx(naive.jackknife_acceleration(t, p, k, "quadratic", sw, codes),
                              rel=1e-9)
    units_r = fku.units_from_rows(t * k + p, sw, cell_t, cell_p, k)
    a_r = fki.bca_acceleration(fku.jackknife_kappas(units_r, w)[:, 0], units_r.type_counts)
    assert a_r == pytest.approx(naive.jackknife_acceleration(t, p, k, "quadratic", sw), rel=1e-9)


def test_jackknife_recomputes_where_expected_disagreement_cancels():
    # leaving out the only off-diagonal row leaves a one-class table: undefined
    table = np.array([[5, 1], [0, 0]])
    units = fku.units_from_counts(table)
    jack = fku.jackknife_kappas(units, fk.weight_matrix(2))[:, 0]
    cells = units.cell_t * 2 + units.cell_p[:, 0]
    by_cell = dict(zip(cells[units.type_cell].tolist(), jack.tolist(), strict=True))
    assert math.isnan(by_cell[1])
    assert by_cell[0] == pytest.approx(0.0)


@pytest.mark.parametrize("pairs", [None, 7])
def test_jackknife_values_of_clusters_and_two_models_equal_recomputing(rng, monkeypatch,
                                                                       pairs):
    """Every leave-one-cluster-out kappa of both models, recomputed from scratch by
    the oracle; ``pairs`` forces the entry pairs into many small chunks."""
    if pairs is not None:
        monkeypatch.setattr(fku, "_JACKKNIFE_PAIRS", pairs)
    k = 4
    n_clusters = 30
    codes = np.repeat(np.arange(n_clusters), rng.integers(1, 6, n_clusters))
    n = len(codes)
    t, pa = graded(rng, n, k)
    pb = np.clip(t + rng.integers(-2, 3, n), 0, k - 1)
    sw = rng.choice([0.5, 1.0, 3.0], n)
    j = np.arange(k ** 3)
    cell_t, cell_p = j // (k * k), np.stack([(j // k) % k, j % k], axis=1)
    units = fku.units_from_clusters(t * k * k + pa * k + pb, sw, codes, n_clusters, cell_t,
                                    cell_p, k)
    w = fk.weight_matrix(k, "linear")
    jack = fku.jackknife_kappas(units, w)
    assert jack.shape == (units.n_types, 2)
    for c in range(n_clusters):
        keep = codes != c
        # the type of cluster c: the one whose table equals the cluster's own table
        own = np.zeros(len(j))
        np.add.at(own, (t * k * k + pa * k + pb)[~keep], sw[~keep])
        tables = np.zeros((units.n_types, len(j)))
        joint_of = units.cell_t * k * k + units.cell_p[:, 0] * k + units.cell_p[:, 1]
        for ty in range(units.n_types):
            lo, hi = units.type_ptr[ty], units.type_ptr[ty + 1]
            tables[ty, joint_of[units.type_cell[lo:hi]]] = units.type_val[lo:hi]
        ty = int(np.flatnonzero((tables == own).all(axis=1))[0])
        for m, p in enumerate((pa, pb)):
            assert jack[ty, m] == pytest.approx(
                naive.kappa_ref(t[keep], p[keep], k, "linear", sw[keep]), rel=1e-10)


def test_bootstrap_interval_bca_equals_efron_formula(rng):
    from scipy.stats import norm

    reps = rng.normal(0.5, 0.1, 5000)
    reps[:40] = 0.52  # ties with the estimate count half
    jack = rng.normal(0.5, 0.01, 30)
    counts = rng.integers(1, 5, 30)
    est = 0.52
    low, high, used = fki.bootstrap_interval(est, reps, "bca", 0.9, jackknife=jack,
                                            jackknife_counts=counts)
    z0 = norm.ppf((np.sum(reps < est) + 0.5 * np.sum(reps == est)) / len(reps))
    jj = np.repeat(jack, counts)
    d = jj.mean() - jj
    a = np.sum(d**3) / (6 * np.sum(d**2) ** 1.5)
    za = norm.ppf([0.05, 0.95])
    q = norm.cdf(z0 + (z0 + za) / (1 - a * (z0 + za)))
    assert used == "bca"
    np.testing.assert_allclose([low, high], np.percentile(reps, 100 * q), rtol=1e-12)


def test_bca_matches_scipy_bootstrap(rng):
    """Same method, independent resamples: the intervals agree within Monte-Carlo error."""
    from scipy.stats import bootstrap
    from sklearn.metrics import cohen_kappa_score

    k = 4
    t, p = graded(rng, 250, k, agree=0.5)

    def stat(a, b, axis=-1):
        a, b = np.atleast_2d(a), np.atleast_2d(b)
        return np.array([cohen_kappa_score(x, y, labels=np.arange(k), weights="linear")
                         for x, y in zip(a, b, strict=True)])

    ref = bootstrap((t, p), stat, paired=True, vectorized=True, method="BCa",
                    n_resamples=4000, random_state=np.random.default_rng(0),
                    confidence_level=0.9)
    res = fk.kappa_ci(t, p, weights="linear", n_classes=k, seed=0, n_resamples=20_000,
                      confidence_level=0.9)
    assert res.low == pytest.approx(ref.confidence_interval.low, abs=0.012)
    assert res.high == pytest.approx(ref.confidence_interval.high, abs=0.012)
    assert res.standard_error == pytest.approx(ref.standard_error, rel=0.06)


def test_bca_guard_falls_back_to_percentile_with_warning(rng):
    reps = rng.normal(0.0, 1.0, 2000)
    # one far jackknife value with a small weight: acceleration a = 1 / (6 sqrt(0.001))
    jack = np.r_[np.zeros(50), -10.0]
    counts = np.r_[np.ones(50), 0.001]
    assert fki.bca_acceleration(jack, counts) > 5
    with pytest.warns(DegenerateIntervalWarning, match=r"BCa interval .* not defined.*"
                                                       r"1 - a \(z0 \+ z_alpha\) <= 0"):
        low, high, used = fki.bootstrap_interval(0.0, reps, "bca", 0.95, jackknife=jack,
                                                jackknife_counts=counts, bounds=None)
    assert used == "percentile"
    np.testing.assert_allclose([low, high], np.quantile(reps, [0.025, 0.975]))
    with pytest.warns(DegenerateIntervalWarning, match=r"bias correction is infinite"):
        _, _, used = fki.bootstrap_interval(5.0, reps, "bca", 0.95, bounds=None)
    assert used == "percentile"


def test_basic_interval_is_reflected_percentile_and_clipped(rng):
    reps = rng.normal(0.95, 0.05, 4000)
    low, high, used = fki.bootstrap_interval(0.97, reps, "basic", 0.95)
    q = np.quantile(reps, [0.025, 0.975])
    assert used == "basic"
    assert low == pytest.approx(2 * 0.97 - q[1])
    assert high == 1.0  # 2 * 0.97 - q[0] is above 1: clipped


# --------------------------------------------------------------------------- degenerate


def test_kappa_ci_perfect_agreement_gives_zero_width_interval_with_warning():
    y = [0, 1, 2, 1, 0, 2] * 20
    for method in ("percentile", "basic", "bca"):
        with pytest.warns(DegenerateIntervalWarning, match=r"constant.*zero-width"):
            res = fk.kappa_ci(y, y, method=method, seed=0, n_resamples=500)
        assert res.estimate == res.low == res.high == 1.0
        assert res.standard_error == 0.0 and res.method == method
    with pytest.warns(DegenerateIntervalWarning, match=r"standard error of kappa is zero"):
        res = fk.kappa_ci(y, y, method="asymptotic")
    assert res.low == res.high == 1.0


def test_kappa_ci_counts_undefined_replicates():
    # 29 rows agree on class 0, one row on class 1: a replicate misses it with
    # probability (29/30)^30, about 36%; those replicates are undefined
    y = [0] * 29 + [1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = fk.kappa_ci(y, y, seed=0, n_resamples=4000, method="percentile")
    msgs = [str(w.message) for w in caught]
    assert any("undefined kappa" in m and "n_undefined" in m for m in msgs)
    assert any("constant" in m for m in msgs)
    q = (29 / 30) ** 30
    assert abs(res.n_undefined / 4000 - q) < 5 * math.sqrt(q * (1 - q) / 4000)
    assert len(res.distribution) == 4000 - res.n_undefined
    assert np.all(np.isfinite(res.distribution))
    assert res.low == res.high == 1.0


def test_kappa_ci_undefined_estimate_warns_and_returns_nan():
    with pytest.warns(UndefinedKappaWarning, match=r"undefined"):
        res = fk.kappa_ci([2, 2, 2], [2, 2, 2], method="bca", seed=0)
    assert math.isnan(res.estimate) and math.isnan(res.low) and math.isnan(res.high)
    assert res.n_resamples == 0 and len(res.distribution) == 0


def test_kappa_ci_constant_rater_has_nan_z():
    # one rater constant: kappa is 0 and its null SE is 0, so z and p are undefined
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateIntervalWarning)
        res = fk.kappa_ci([0, 0, 0, 0, 0, 0], [0, 1, 0, 1, 1, 0], method="percentile",
                          seed=0, n_resamples=200)
    assert res.estimate == 0.0
    assert math.isnan(res.z) and math.isnan(res.p_value)
    assert res.to_dict()["z"] is None


# --------------------------------------------------------------------------- memory


_MEMORY_SCRIPT = """
import gc
import sys
import numpy as np
import fastkappa as fk

def status(key):
    with open("/proc/self/status") as fh:
        return [int(x.split()[1]) * 1024 for x in fh if x.startswith(key)][0]

def reset_peak():
    with open("/proc/self/clear_refs", "w") as fh:  # resets VmHWM (Linux >= 4.0)
        fh.write("5")
    gc.collect()
    return status("VmRSS")

mode = sys.argv[1]
n = 10_000_000
rng = np.random.default_rng(0)
# built in slices: no temporary as large as the inputs raises the peak
t = np.empty(n, dtype=np.int32)
p = np.empty(n, dtype=np.int32)
for lo in range(0, n, 100_000):
    a = rng.integers(0, 5, 100_000)
    t[lo:lo + 100_000] = a
    p[lo:lo + 100_000] = np.clip(a + rng.integers(-1, 2, 100_000), 0, 4)
fk.kappa_ci(t[:1000], p[:1000], seed=0, n_resamples=10_000)  # compile / load the cache
fk.kappa_ci(t[:300_000], p[:300_000], seed=0, n_resamples=10_000)  # parallel counting too
gc.collect()

def ci():
    fk.kappa_ci(t, p, seed=0, n_resamples=10_000)

def probe():
    (t.astype(np.int64) * 5).sum()  # the probe must see a 80 MB temporary

if mode == "reset":  # one process: reset the peak before each measurement
    try:
        before = reset_peak()
    except OSError:
        print("unsupported")
        raise SystemExit
    ci()
    extra = status("VmHWM") - before
    before = reset_peak()
    probe()
    print(extra, status("VmHWM") - before, t.nbytes + p.nbytes)
else:  # one process per step, compared by their peaks: "base", "ci" or "probe"
    {"base": lambda: None, "ci": ci, "probe": probe}[mode]()
    print(status("VmHWM"))
"""


def _memory_run(mode: str) -> str:
    proc = subprocess.run([sys.executable, "-c", _MEMORY_SCRIPT, mode], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=True)
    return proc.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")
def test_kappa_ci_iid_peak_memory_below_five_percent_of_input():
    out = _memory_run("reset")
    if out == "unsupported":
        # no peak reset on this kernel: the same steps in separate processes,
        # each peak against that of a process that stops before the step
        base = int(_memory_run("base"))
        extra = int(_memory_run("ci")) - base
        probe = int(_memory_run("probe")) - base
        size = 2 * 4 * 10_000_000
    else:
        extra, probe, size = map(int, out.split())
    assert probe > 0.9 * 8 * 10_000_000  # the measurement sees a temporary of that size
    assert extra < 0.05 * size, (extra, size)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")
def test_kappa_ci_peak_memory_without_a_peak_reset():
    """The fallback for kernels without /proc/self/clear_refs, run everywhere."""
    base = int(_memory_run("base"))
    assert int(_memory_run("probe")) - base > 0.9 * 8 * 10_000_000
    assert int(_memory_run("ci")) - base < 0.05 * 2 * 4 * 10_000_000


def test_kappa_ci_many_classes_numbers_only_occupied_cells(rng):
    from sklearn.metrics import cohen_kappa_score

    k, n = 300, 3000  # K*K = 90,000 cells, most of them empty
    t = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.7, t, rng.integers(0, k, n))
    ref = cohen_kappa_score(t, p)
    for kw in ({}, {"clusters": np.arange(n) // 2}, {"sample_weight": rng.choice([1., 2.], n)}):
        res = fk.kappa_ci(t, p, n_resamples=200, seed=0, method="percentile", **kw)
        sw = kw.get("sample_weight")
        assert res.estimate == pytest.approx(cohen_kappa_score(t, p, sample_weight=sw)
                                             if sw is not None else ref, rel=1e-12)
        assert res.low < res.estimate < res.high


@pytest.mark.parametrize("with_clusters", [False, True])
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_seeded_weighted_intervals_do_not_depend_on_the_row_order(with_clusters, method):
    # weights on (almost) every row take the row-draw path, whose draws followed the
    # row order; with clusters, a cluster's weights were summed in row order (their
    # last bits, and so the cluster types, changed): the same rows shuffled gave
    # another interval for one seed (and Dask, which sorts the rows, another one)
    rng = np.random.default_rng(0)
    n = 2000
    t = rng.integers(0, 4, n)
    p = np.clip(t + rng.integers(-1, 2, n), 0, 3)
    kw = {"sample_weight": rng.exponential(1.0, n)}
    if with_clusters:
        kw["clusters"] = rng.integers(0, 300, n)
    shuffle = rng.permutation(n)
    a = fk.kappa_ci(t, p, method=method, n_resamples=400, seed=0, **kw)
    b = fk.kappa_ci(t[shuffle], p[shuffle], method=method, n_resamples=400, seed=0,
                    **{name: v[shuffle] for name, v in kw.items()})
    assert (a.low, a.high) == (b.low, b.high)
    np.testing.assert_array_equal(np.sort(a.distribution), np.sort(b.distribution))


@pytest.mark.parametrize("scale", [2.0**-1070, 1e-300, 1e-170, 3.0, 2.0, 1e155, 2.0**600,
                                   1e300])
def test_weighted_results_do_not_depend_on_the_weights_scale(scale):
    # kappa and its intervals are scale-free in the weights; near the float64 limits
    # kappa_ci and kappa_by_group gave nan, compare an OverflowError or a
    # ZeroDivisionError (sums of products of weights); with clusters a seeded interval
    # changed with any factor, 2 included (the cluster types are ordered by a hash of
    # the weights' bits: now the same for power-of-two factors, which leave the
    # digits alone; another factor changes the digits and may reorder the types)
    t = np.array([0, 1, 2, 3, 1, 2, 0, 3] * 8)
    p = np.array([0, 1, 2, 2, 1, 3, 0, 3] * 8)
    base = 1.0 + np.arange(64) % 3
    groups = np.array(["a", "b"] * 32)
    boot = {"n_resamples": 200, "seed": 0}

    def results(w):
        out = [fk.cohen_kappa(t, p, sample_weight=w)]
        r = fk.kappa_ci(t, p, sample_weight=w, method="asymptotic")
        out += [r.estimate, r.low, r.high]
        clusters = [{"clusters": np.arange(64) // 2}] if np.log2(scale).is_integer() else []
        for kw in ({}, *clusters):
            r = fk.kappa_ci(t, p, sample_weight=w, **kw, **boot)
            out += [r.low, r.high]
        g = fk.kappa_by_group(t, p, groups, sample_weight=w, method="percentile", **boot)
        out += [*g.estimate, *g.low, *g.high]
        for kw in ({"method": "asymptotic"}, boot):
            c = fk.compare(t, {"a": p, "b": t[::-1]}, sample_weight=w, **kw)
            out += [c.pairs[0].difference, c.pairs[0].low, c.pairs[0].high]
        return np.array(out), g.n_rows

    want, n_want = results(base)
    got, n_got = results(scale * base)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(n_got, scale * n_want, rtol=1e-15)


_FORK_SCRIPT = """
import multiprocessing as mp, sys
import numpy as np, numba, fastkappa as fk
rng = np.random.default_rng(0)
t = rng.integers(0, 5, 400_000)
p = np.clip(t + rng.integers(-1, 2, t.size), 0, 4)
def job(i):
    return (fk.cohen_kappa(t, p, weights="quadratic"),
            fk.kappa_ci(t, p, n_resamples=200, seed=i).low)
if __name__ == "__main__":
    want = [job(i) for i in range(2)]  # parallel kernels run in the parent first
    print(numba.threading_layer())
    with mp.get_context("fork").Pool(2) as pool:
        got = pool.map_async(job, range(2)).get(timeout=120)
    print(got == want)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="no fork")
def test_forked_children_after_openmp_kernels_run_and_agree(tmp_path):
    # GNU OpenMP aborts a forked child that starts a parallel region ("fork() called
    # from a process already using GNU OpenMP"): a fork Pool after any parallel
    # kernel in the parent hung. Such children now run the serial twins.
    script = tmp_path / "fork_pool.py"
    script.write_text(_FORK_SCRIPT)
    env = dict(os.environ, NUMBA_THREADING_LAYER="omp")
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=600)
    layer = "omp"
    if "No threading layer could be loaded" in proc.stderr:
        # no OpenMP here: the fork Pool must still agree under the layer numba picks
        env.pop("NUMBA_THREADING_LAYER")
        proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                              text=True, timeout=600)
        layer = proc.stdout.split()[0] if proc.stdout.split() else "?"
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == [layer, "True"], proc.stdout + proc.stderr[-2000:]


def test_a_drawn_seed_is_recorded_exactly_as_json_readers_read_it():
    # seed=None drew 128-bit entropy: JSON readers that hold numbers as doubles
    # (jq, JavaScript) rounded it, and the rounded seed reproduced nothing
    t = np.arange(200) % 4
    p = (t + (np.arange(200) % 7 == 0)) % 4
    res = fk.kappa_ci(t, p, n_resamples=100)
    seed = json.loads(json.dumps(res.to_dict()))["seed"]
    assert 0 <= seed < 2**53 and float(seed) == seed
    again = fk.kappa_ci(t, p, n_resamples=100, seed=int(float(seed)))
    assert (again.low, again.high) == (res.low, res.high)
