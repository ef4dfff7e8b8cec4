"""Light's kappa (mean pairwise Cohen's kappa): estimate, standard error, bootstrap.

Oracles: a brute-force mean of scikit-learn's ``cohen_kappa_score`` over the
rater pairs (``naive.light_kappa``), its numerical item derivatives for the
standard error (``naive.light_kappa_se``), and with two raters Cohen's kappa,
Conger's kappa and the Fleiss-Cohen-Everitt standard error of ``kappa_ci``.
irrCAC has no Light's kappa (Light 1971; Conger 1980).
"""

from __future__ import annotations

import math
import warnings

import naive
import numpy as np
import pytest

import fastkappa as fk
from fastkappa import raters as _r
from fastkappa._raters_input import encode_ratings


def ratings(rng, n=60, n_raters=4, k=3, p_missing=0.2, agree=0.6):
    truth = rng.integers(0, k, n)
    x = np.where(rng.random((n, n_raters)) < agree, truth[:, None],
                 rng.integers(0, k, (n, n_raters))).astype(float)
    x[rng.random(x.shape) < p_missing] = np.nan
    x[0, :] = np.arange(n_raters) % k  # every rater rates, classes at both ends
    x[1, :] = (np.arange(n_raters) + 1) % k
    return x


def as_lists(x):
    return [[None if v != v else int(v) for v in row] for row in x]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_estimate_equals_mean_of_sklearn_pairwise_kappas(seed, weights):
    rng = np.random.default_rng(seed)
    k, n_raters = 2 + seed % 5, 2 + (3 * seed) % 7
    x = ratings(rng, 40 + 10 * seed, n_raters, k)
    want = naive.light_kappa(as_lists(x), k, weights)
    got = fk.light_kappa(x, weights=weights, n_classes=k)
    assert got == pytest.approx(want, abs=1e-12)
    row = fk.agreement(x, coefficients="light_kappa", weights=weights, n_classes=k)
    assert row["light_kappa"].estimate == pytest.approx(want, abs=1e-12)


def test_long_format_and_custom_weights(rng):
    x = ratings(rng, 50, 5, 4)
    items, raters = np.nonzero(~np.isnan(x))
    order = rng.permutation(len(items))
    long = {"item": items[order], "rater": np.array(list("abcde"))[raters[order]],
            "label": x[items, raters][order].astype(int)}
    w = rng.random((4, 4)) * 3
    np.fill_diagonal(w, 0)
    want = fk.light_kappa(x, weights=w, n_classes=4)
    assert fk.light_kappa(**long, weights=w, n_classes=4) == pytest.approx(want, abs=1e-13)
    # scikit-learn takes no weight matrix: the mean of fk.cohen_kappa over pairs instead
    pairs = []
    for g in range(5):
        for h in range(g + 1, 5):
            both = ~np.isnan(x[:, g]) & ~np.isnan(x[:, h])
            pairs.append(fk.cohen_kappa(x[both, g], x[both, h], weights=w, n_classes=4))
    assert want == pytest.approx(np.mean(pairs), abs=1e-12)


def test_two_raters_is_cohen_and_conger(rng):
    for weights in (None, "quadratic"):
        x = ratings(rng, 300, 2, 4, p_missing=0.0)
        res = fk.agreement(x, coefficients=["light_kappa", "conger_kappa"], weights=weights)
        light, conger = res["light_kappa"], res["conger_kappa"]
        assert light.estimate == pytest.approx(
            fk.cohen_kappa(x[:, 0], x[:, 1], weights=weights), abs=1e-13)
        assert light.estimate == pytest.approx(conger.estimate, abs=1e-13)
        # Gwet's SE of Conger's kappa (irrCAC) = FCE * sqrt(n / (n - 1)) = Light's SE
        assert light.standard_error == pytest.approx(conger.standard_error, rel=1e-12)
        fce = fk.kappa_ci(x[:, 0], x[:, 1], weights=weights, method="asymptotic")
        n = len(x)
        assert light.standard_error == pytest.approx(
            fce.standard_error * math.sqrt(n / (n - 1)), rel=1e-12)


@pytest.mark.parametrize("seed, weights", [(0, None), (1, "quadratic"), (2, "linear")])
def test_standard_error_matches_numerical_influence(seed, weights):
    rng = np.random.default_rng(seed)
    x = ratings(rng, 35, 4, 3, p_missing=0.25)
    x[5, :3] = np.nan  # an item with a single rating: no pair, no influence
    want = naive.light_kappa_se(as_lists(x), 3, weights)
    res = fk.agreement(x, coefficients="light_kappa", weights=weights)
    assert res["light_kappa"].standard_error == pytest.approx(want, rel=1e-6)


def test_population_size_and_singleton_clusters(rng):
    x = ratings(rng, 60, 4, 3)
    base = fk.agreement(x, coefficients="light_kappa")["light_kappa"].standard_error
    fin = fk.agreement(x, coefficients="light_kappa", population_size=240)
    assert fin["light_kappa"].standard_error == pytest.approx(
        base * math.sqrt(1 - 60 / 240), rel=1e-12)
    single = fk.agreement(x, coefficients="light_kappa", clusters=np.arange(60))
    assert single["light_kappa"].standard_error == pytest.approx(base, rel=1e-12)


def test_pairs_without_a_common_item_are_left_out():
    # raters 0 and 2 never rate the same item
    x = [[0, 0, None], [1, 1, None], [0, 1, None], [None, 1, 1], [None, 0, 0],
         [None, 0, 1], [1, 1, None]]
    got = fk.light_kappa(x)
    assert got == pytest.approx(naive.light_kappa(x, 2), abs=1e-12)
    assert got == pytest.approx((fk.cohen_kappa([0, 1, 0, 1], [0, 1, 1, 1])
                                 + fk.cohen_kappa([1, 0, 0], [1, 0, 1])) / 2, abs=1e-12)


def test_undefined_pair_and_replace_undefined_by():
    x = [[1, 1, 2], [1, 1, 1], [1, 1, 2]]  # raters 0 and 1 both constant: pair undefined
    with pytest.warns(fk.UndefinedKappaWarning, match="Light's kappa is undefined"):
        assert math.isnan(fk.light_kappa(x))
    with pytest.warns(fk.UndefinedKappaWarning, match="replace_undefined_by=0.0"):
        assert fk.light_kappa(x, replace_undefined_by=0.0) == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fk.light_kappa([[1, 2, 2], [1, 1, 2], [2, 2, 1]],
                              replace_undefined_by=0.0) == pytest.approx(
            naive.light_kappa([[0, 1, 1], [0, 0, 1], [1, 1, 0]], 2), abs=1e-12)


def test_undefined_warning_names_the_pair_and_its_common_items():
    """The warning neither named the pair nor fitted a pair sharing one item on which
    they agree: declaring the full scale cannot help there."""
    x = [[1, 1, None], [2, 2, None], [1, None, 2], [None, 1, 1]]
    match = r"raters 1 and 2 \(1 common item\) is 1.*Declaring more classes does not"
    with pytest.warns(fk.UndefinedKappaWarning, match=match) as got:
        assert math.isnan(fk.light_kappa(x))
    assert "full scale" not in str(got[0].message)
    with pytest.warns(fk.UndefinedKappaWarning, match=match):
        res = fk.agreement(x, coefficients=["light_kappa", "fleiss_kappa"])
    assert math.isnan(res["light_kappa"].estimate)
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"ann": [1, 1, 1], "bob": [1, 1, 1], "cy": [1, 2, 1]})
    with pytest.warns(fk.UndefinedKappaWarning,
                      match=r"raters 'ann' and 'bob' \(3 common items\) is 1.*"
                            r"returning replace_undefined_by=nan"):
        fk.light_kappa(frame)


def test_bootstrap_matches_index_resampling_in_distribution(rng):
    stats = pytest.importorskip("scipy.stats")
    x = ratings(rng, 80, 4, 3)
    fast = fk.agreement(x, coefficients="light_kappa", method="percentile",
                        n_resamples=3000, seed=1)["light_kappa"].distribution
    gen = np.random.default_rng(2)
    slow = np.array([fk.light_kappa(x[gen.integers(0, len(x), len(x))], n_classes=3)
                     for _ in range(400)])
    assert stats.ks_2samp(fast, slow).pvalue > 1e-3
    se = math.sqrt(fast.var() / len(fast) + slow.var() / len(slow))
    assert abs(fast.mean() - slow.mean()) < 4 * se


def test_jackknife_by_type_equals_leaving_an_item_out(rng):
    x = ratings(rng, 30, 4, 3)
    from fastkappa._raters_input import encode_ratings

    table = encode_ratings(x)
    model = _r.build_model(table, ("light_kappa",))
    jack = _r.values(model, model.total[None, :] - model.features)["light_kappa"]
    for t in range(len(model.type_counts)):
        i = int(np.flatnonzero(model.item_type == t)[0])
        want = naive.light_kappa(as_lists(np.delete(x, i, axis=0)), 3)
        assert jack[t] == pytest.approx(want, abs=1e-12), t


def test_bca_interval_and_seed(rng):
    x = ratings(rng, 120, 5, 4)
    a = fk.agreement(x, coefficients=["fleiss_kappa", "light_kappa"], method="bca",
                     n_resamples=500, seed=3)
    b = fk.agreement(x, coefficients=["fleiss_kappa", "light_kappa"], method="bca",
                     n_resamples=500, seed=3)
    row = a["light_kappa"]
    assert row.low < row.estimate < row.high and row.method == "bca"
    assert (row.low, row.high) == (b["light_kappa"].low, b["light_kappa"].high)
    assert "Light's kappa" in str(a)


def test_only_when_asked_for(rng):
    x = ratings(rng, 30, 3, 3)
    assert "light_kappa" not in [r.coefficient for r in fk.agreement(x)]


@pytest.mark.parametrize(("call", "match"), [
    (lambda: fk.light_kappa(counts=[[1, 2], [3, 0]]),
     "Light's kappa compares each pair of raters.*`counts=` input has anonymous raters"),
    (lambda: fk.agreement(counts=[[1, 2], [3, 0]], coefficients="light_kappa"),
     "`counts=` input has anonymous raters. Pass wide `ratings`"),
    (lambda: fk.light_kappa([[1, None], [None, 2]]), "no item has two"),
    (lambda: fk.agreement([[1, 2], [1, 1]], coefficients="light"),
     "unknown coefficient 'light'; `coefficients` takes names from .*light_kappa"),
])
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_sparse_panel_error(rng):
    n_items = 3000
    items = np.repeat(np.arange(n_items), 2)
    raters = np.arange(2 * n_items)  # every rating by a new rater: a sparse panel
    labels = rng.integers(0, 3, 2 * n_items)
    with pytest.raises(ValueError, match=r"this panel is sparse .* not supported yet; score "
                                         r"the other coefficients with fk.agreement") as err:
        fk.light_kappa(item=items, rater=raters, label=labels)
    assert "Pass wide" not in str(err.value)  # the long format was what was passed


def test_too_many_cells_error(rng, monkeypatch):
    x = ratings(rng, 40, 4, 3)
    expected = fk.agreement(x, coefficients="light_kappa", clusters=np.arange(40))
    monkeypatch.setattr(_r, "LIGHT_MAX_CELLS", 100)
    for options in ({"method": "bca", "seed": 0}, {"clusters": np.arange(40)}):
        with pytest.raises(ValueError, match=r"use method='asymptotic' without `clusters=` "
                                             r"\(which needs no such table\), or leave"):
            fk.agreement(x, coefficients="light_kappa", **options)
    assert math.isfinite(fk.light_kappa(x))  # the estimate alone needs no type table
    # the asymptotic interval without clusters neither: the pair cells are totals
    got = fk.agreement(x, coefficients="light_kappa")["light_kappa"]
    assert got.estimate == pytest.approx(expected["light_kappa"].estimate, abs=1e-14)
    assert got.standard_error == pytest.approx(expected["light_kappa"].standard_error,
                                               rel=1e-12)


def test_asymptotic_light_needs_no_type_table():
    """LIGHT_MAX_CELLS refused ordinary panels (100,000 items x 12 raters x 3 classes,
    66 rater pairs) even for the asymptotic interval, whose variance needs each
    item's influence only: a sum over its pairs of one cell each."""
    import tracemalloc

    rng = np.random.default_rng(1)
    truth = rng.integers(0, 3, 20_000)
    x = np.where(rng.random((20_000, 12)) < 0.2, truth[:, None],
                 rng.integers(0, 3, (20_000, 12))).astype(float)
    table = encode_ratings(x)
    m = _r.build_model(table, ("light_kappa",), per_type=False)
    assert len(m.type_counts) * 66 * 9 > _r.LIGHT_MAX_CELLS / 10
    tracemalloc.start()
    try:
        res = fk.agreement(x, coefficients="light_kappa")["light_kappa"]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert res.estimate == pytest.approx(fk.light_kappa(x), abs=1e-12)
    assert peak < len(m.type_counts) * 66 * 9 * 8 / 4  # the per-type cells, in bytes
    # the same SE as the per-type table (checked on a sample small enough for it)
    small = x[:2000]
    per_type = _r.build_model(encode_ratings(small), ("light_kappa",))
    units = _r.Units(per_type.features, per_type.type_counts, None)
    total = per_type.total
    g, n = _r.influence_vector("light_kappa", per_type, total, 0.0 + _r.values(
        per_type, total)["light_kappa"][0])
    se = math.sqrt(_r.gwet_variance(_r.unit_scores(per_type, units, g),
                                    per_type.type_counts, n, 1.0,
                                    int(per_type.type_counts.sum())))
    assert fk.agreement(small, coefficients="light_kappa")["light_kappa"].standard_error \
        == pytest.approx(se, rel=1e-10)
