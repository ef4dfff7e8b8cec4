"""Many-rater coefficients: estimates against peers, loops and published values."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import naive
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastkappa as fk
from fastkappa import raters as _r

DATA = json.loads((Path(__file__).parent / "data" / "many_raters_examples.json").read_text())
NAMES = ("percent_agreement", "fleiss_kappa", "conger_kappa", "gwet_ac", "brennan_prediger")
FUNCS = {name: getattr(fk, name) for name in NAMES}


def random_ratings(rng, n, n_raters, k, p_missing=0.2):
    x = rng.integers(0, k, (n, n_raters)).astype(float)
    x[rng.random((n, n_raters)) < p_missing] = np.nan
    x[0, :2] = [0, k - 1]  # both ends of the scale occur
    x[1, :] = np.arange(n_raters) % k  # every rater has a rating
    return x


def as_lists(x):
    return [[None if v != v else int(v) for v in row] for row in x]


def custom_weights(rng, k):
    w = rng.random((k, k)) * 3
    np.fill_diagonal(w, 0)
    return w


def agree(k, weights):
    return _r.agreement_weights(k, weights).tolist()


# --------------------------------------------------------------------------- loops


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 10), n_raters=st.integers(2, 20),
       n=st.integers(3, 40), p_missing=st.sampled_from([0.0, 0.1, 0.4]),
       weights=st.sampled_from([None, "linear", "quadratic", "custom"]))
def test_estimates_match_naive_loops(seed, k, n_raters, n, p_missing, weights):
    rng = np.random.default_rng(seed)
    x = random_ratings(rng, n, n_raters, k, p_missing)
    w = custom_weights(rng, k) if weights == "custom" else weights
    a = agree(k, w)
    rows = as_lists(x)
    for name in NAMES:
        got = FUNCS[name](x, weights=w, n_classes=k)
        want = getattr(naive, name)(rows, k, a)
        assert got == pytest.approx(want, abs=1e-12, rel=1e-12), name
    d = (1 - np.asarray(a)).tolist()
    got = fk.krippendorff_alpha(x, level=np.asarray(d), n_classes=k)
    assert got == pytest.approx(naive.krippendorff_alpha(rows, k, d), abs=1e-12)


def test_krippendorff_levels_match_naive(rng):
    x = random_ratings(rng, 30, 5, 6)
    rows = as_lists(x)
    v = np.arange(6.0)
    interval = ((v[:, None] - v[None, :]) ** 2).tolist()
    assert fk.krippendorff_alpha(x, level="interval") == pytest.approx(
        naive.krippendorff_alpha(rows, 6, interval), abs=1e-12)
    assert fk.krippendorff_alpha(x, level="ordinal") == pytest.approx(
        naive.krippendorff_alpha(rows, 6, naive.ordinal_distance), abs=1e-12)


# --------------------------------------------------------------------------- peers


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 10), n_raters=st.integers(2, 20),
       weights=st.sampled_from([None, "linear", "quadratic", "custom"]))
def test_estimates_and_standard_errors_match_irrcac(seed, k, n_raters, weights):
    import irrCAC.raw as irr  # installed by the README test command (--no-deps)
    rng = np.random.default_rng(seed)
    x = random_ratings(rng, 30, n_raters, k)
    w = custom_weights(rng, k) if weights == "custom" else weights
    a = _r.agreement_weights(k, w)
    df = pd.DataFrame(x).dropna(how="all")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # irrCAC's own pandas FutureWarnings
        cac = irr.CAC(df, weights=a, categories=list(range(k)), digits=20)
        ref = {name: getattr(cac, meth)()["est"] for name, meth in (
            ("fleiss_kappa", "fleiss"), ("gwet_ac", "gwet"), ("conger_kappa", "conger"),
            ("brennan_prediger", "bp"), ("krippendorff_alpha", "krippendorff"))}
    res = fk.agreement(x, weights=w, n_classes=k, level=1 - a,
                       coefficients=list(ref))
    for name, r in ref.items():
        row = res[name]
        assert row.estimate == pytest.approx(float(r["coefficient_value"]), abs=1e-12), name
        assert row.standard_error == pytest.approx(float(r["se"]), abs=1e-10), name


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_matches_package(rng, level):
    kd = pytest.importorskip("krippendorff")
    x = random_ratings(rng, 50, 6, 7, 0.3) + 1  # ratio needs positive values
    want = kd.alpha(reliability_data=x.T, level_of_measurement=level,
                    value_domain=np.arange(1.0, 8.0))
    assert fk.krippendorff_alpha(x, level=level) == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("method", ["fleiss", "randolph"])
def test_fleiss_and_brennan_prediger_match_statsmodels(rng, method):
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    counts = rng.multinomial(7, [0.5, 0.2, 0.2, 0.1], size=60)
    want = inter_rater.fleiss_kappa(counts, method=method)
    f = fk.fleiss_kappa if method == "fleiss" else fk.brennan_prediger
    assert f(counts=counts) == pytest.approx(want, abs=1e-12)


def test_nltk_pi_and_alpha(rng):
    agreement_mod = pytest.importorskip("nltk.metrics.agreement")
    x = random_ratings(rng, 25, 4, 3, 0.0)
    triples = [(f"c{g}", f"i{i}", int(x[i, g])) for i in range(25) for g in range(4)]
    task = agreement_mod.AnnotationTask(data=triples)
    assert fk.fleiss_kappa(x) == pytest.approx(task.pi(), abs=1e-12)
    assert fk.krippendorff_alpha(x) == pytest.approx(task.alpha(), abs=1e-12)
    y = x.copy()
    y[rng.random(y.shape) < 0.3] = np.nan
    y[:, 0] = x[:, 0]
    triples = [(f"c{g}", f"i{i}", int(y[i, g])) for i in range(25) for g in range(4)
               if y[i, g] == y[i, g]]
    task = agreement_mod.AnnotationTask(data=triples)
    assert fk.krippendorff_alpha(y) == pytest.approx(task.alpha(), abs=1e-12)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_two_raters_conger_is_cohen_and_fleiss_is_scott(rng, weights):
    y1 = rng.integers(0, 4, 200)
    y2 = np.where(rng.random(200) < 0.6, y1, rng.integers(0, 4, 200))
    x = np.column_stack([y1, y2])
    assert fk.conger_kappa(x, weights=weights) == pytest.approx(
        fk.cohen_kappa(y1, y2, weights=weights), abs=1e-12)
    if weights is None:
        assert fk.fleiss_kappa(x) == pytest.approx(
            naive.scott_pi(y1.tolist(), y2.tolist(), 4), abs=1e-12)


# --------------------------------------------------------------------------- published


def test_krippendorff_2011_reliability_data():
    ex = DATA["krippendorff_2011"]
    x = np.array(ex["ratings_by_observer"], dtype=float).T
    for level, want in ex["alpha"].items():
        assert round(fk.krippendorff_alpha(x, level=level), ex["decimals"]) == want


def test_fleiss_1971_diagnoses_and_wikipedia_table():
    ex = DATA["fleiss_1971"]
    assert round(fk.fleiss_kappa(np.array(ex["ratings"])), 3) == ex["fleiss_kappa"]
    ex = DATA["wikipedia_fleiss"]
    assert round(fk.fleiss_kappa(counts=ex["counts"]), 3) == ex["fleiss_kappa"]


def test_gwet_handbook_raw_4raters_with_standard_errors():
    ex = DATA["gwet_raw_4raters"]
    x = np.array(ex["ratings"], dtype=float)
    res = fk.agreement(x, coefficients=list(ex["unweighted"]), labels=ex["categories"])
    for name, (est, se) in ex["unweighted"].items():
        assert round(res[name].estimate, 5) == est
        assert round(res[name].standard_error, 5) == se
    # AC2: agreement weights a given, disagreement weights 1 - a
    w = 1 - np.array(ex["bipolar_agreement_weights"])
    res = fk.agreement(x, weights=w, coefficients="gwet_ac", labels=ex["categories"])
    est, se = ex["bipolar"]["gwet_ac"]
    assert round(res["gwet_ac"].estimate, 5) == est
    assert round(res["gwet_ac"].standard_error, 5) == se


# --------------------------------------------------------------------------- inputs


def test_wide_long_and_counts_agree(rng):
    x = random_ratings(rng, 40, 5, 4)
    items, raters = np.nonzero(~np.isnan(x))
    order = rng.permutation(len(items))
    labels = x[items, raters].astype(int)
    long = dict(item=(items * 7 + 3)[order], rater=np.array(list("abcde"))[raters][order],
                label=labels[order])
    counts = np.stack([(x == c).sum(axis=1) for c in range(4)], axis=1)
    for name in NAMES:
        wide = FUNCS[name](x)
        assert FUNCS[name](**long) == pytest.approx(wide, abs=1e-14), name
        if name != "conger_kappa":
            assert FUNCS[name](counts=counts) == pytest.approx(wide, abs=1e-14), name
    assert fk.krippendorff_alpha(**long) == pytest.approx(fk.krippendorff_alpha(x), abs=1e-14)


@pytest.mark.parametrize("level", ["nominal", "ordinal"])
@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_estimate_only_model_has_the_same_sums(rng, level, weights):
    # the one-coefficient functions build a column-major model in found order;
    # agree() a row-major one sorted by type count: the same feature sums
    agreement_module = __import__("fastkappa.agreement", fromlist=["_encode"])
    x = random_ratings(rng, 300, 4, 5)
    x[[3, 150]] = np.nan  # unrated items
    table = agreement_module._encode(x, {}, True)
    names = ("percent_agreement", "conger_kappa", "krippendorff_alpha", "light_kappa")
    full = _r.build_model(table, names, weights, level)
    alone = _r.build_model(table, names, weights, level, estimate_only=True)
    assert full.features.flags.c_contiguous and alone.features.flags.f_contiguous
    # ordinal coincidences and Light's cells are pooled totals there, after the
    # columns written per type: compared block by block

    def blocks(m):
        tot = m.total
        return np.concatenate([tot[:m.knk.stop]] + [tot[b] for b in (m.o, m.c, m.light)
                                                     if b is not None])

    assert len(alone.total) == len(full.total)
    np.testing.assert_allclose(blocks(alone), blocks(full), rtol=1e-13, atol=1e-12)
    assert sorted(alone.type_counts) == sorted(full.type_counts)
    np.testing.assert_array_equal(np.sort(alone.type_of), np.sort(full.type_of))


def test_types_come_most_frequent_first_with_wide_count_ranges():
    n = np.array([3, 1 << 20, 3, 7, 0, 1 << 20, 1], dtype=np.int64)
    np.testing.assert_array_equal(_r._descending(n), np.argsort(-n, kind="stable"))
    small = n % 1000
    np.testing.assert_array_equal(_r._descending(small), np.argsort(-small, kind="stable"))


def test_sparse_long_panel_is_counted_without_a_dense_table(rng):
    from fastkappa import _raters_input

    n_items, per_item = 3000, 3
    items = np.repeat(np.arange(n_items), per_item)
    raters = rng.choice(5000, size=(n_items, per_item), replace=True)
    raters = (raters + np.arange(per_item) * 5000).ravel()  # distinct raters per item
    truth = rng.integers(0, 4, n_items)
    labels = np.where(rng.random(n_items * per_item) < 0.7, np.repeat(truth, per_item),
                      rng.integers(0, 4, n_items * per_item))
    table = _raters_input.encode_ratings(item=items, rater=raters, label=labels)
    assert table.codes is None and len(table.raters) > 1000
    wide = labels.reshape(n_items, per_item)  # the same ratings, raters anonymous
    for name in ("percent_agreement", "fleiss_kappa", "gwet_ac", "brennan_prediger"):
        assert FUNCS[name](item=items, rater=raters, label=labels) == pytest.approx(
            FUNCS[name](wide), abs=1e-14), name
    assert fk.krippendorff_alpha(item=items, rater=raters, label=labels) == pytest.approx(
        fk.krippendorff_alpha(wide), abs=1e-14)
    res = fk.agreement(item=items, rater=raters, label=labels)
    assert "conger_kappa" not in [r.coefficient for r in res]
    with pytest.raises(ValueError, match="panel is sparse"):
        fk.conger_kappa(item=items, rater=raters, label=labels)


def test_containers_and_missing_markers(rng):
    x = random_ratings(rng, 30, 3, 3)
    want = fk.fleiss_kappa(x)
    df = pd.DataFrame(x).astype("Int64")
    assert fk.fleiss_kappa(df) == pytest.approx(want, abs=1e-14)
    strs = pd.DataFrame(np.where(np.isnan(x), None, x.astype(object)))
    strs = strs.map(lambda v: None if v is None else f"c{int(v)}")
    assert fk.fleiss_kappa(strs) == pytest.approx(want, abs=1e-14)
    marked = np.where(np.isnan(x), -1, x).astype(int)
    assert fk.fleiss_kappa(marked, missing=-1) == pytest.approx(want, abs=1e-14)
    pl = pytest.importorskip("polars")
    assert fk.fleiss_kappa(pl.from_pandas(df)) == pytest.approx(want, abs=1e-14)
    pa = pytest.importorskip("pyarrow")
    assert fk.fleiss_kappa(pa.Table.from_pandas(df)) == pytest.approx(want, abs=1e-14)


def test_a_missing_marker_of_the_other_kind_is_an_error(rng):
    # -1 never equals "-1": the marker would mark nothing and count as a class
    x = random_ratings(rng, 30, 3, 3)
    strs = np.where(np.isnan(x), "-1", np.char.add("c", np.nan_to_num(x).astype(int).astype(str)))
    want = fk.fleiss_kappa(x)
    assert fk.fleiss_kappa(strs, missing="-1") == pytest.approx(want, abs=1e-14)
    number = r"`missing` is the number -1 but the ratings are strings.*give it as '-1'"
    with pytest.raises(ValueError, match=number):
        fk.fleiss_kappa(strs, missing=-1)
    marked = np.where(np.isnan(x), -1, x).astype(int)
    with pytest.raises(ValueError, match="`missing` is the string '-1' but the ratings are "
                       "numbers"):
        fk.krippendorff_alpha(marked, missing="-1")
    rows, cols = np.nonzero(np.ones_like(x, dtype=bool))
    acc = fk.AgreementAccumulator(missing=-1)
    with pytest.raises(ValueError, match=number):
        acc.update(item=rows, rater=cols, label=strs.ravel())
    assert acc.n_ratings == 0  # left unchanged
    acc = fk.AgreementAccumulator(missing="-1").update(item=rows, rater=cols,
                                                       label=strs.ravel())
    assert acc.compute(coefficients=["fleiss_kappa"]).rows[0].estimate == pytest.approx(
        want, abs=1e-14)


def test_a_missing_marker_that_is_a_declared_class_is_an_error(rng):
    # the declared class could never be counted: its ratings were dropped as missing
    x = np.array([[1, 1, 0], [2, 2, 2], [0, 1, 1], [2, 1, 2]])
    clash = r"`missing` is 0, one of the declared classes"
    for kw in (dict(labels=[0, 1, 2]), dict(n_classes=3), dict(labels=[0.0, 1.0, 2.0])):
        with pytest.raises(ValueError, match=clash):
            fk.agreement(x, missing=0, **kw)
        with pytest.raises(ValueError, match=clash):
            fk.fleiss_kappa(item=[0, 0], rater=[0, 1], label=[1, 0], missing=0.0, **kw)
        with pytest.raises(ValueError, match=clash):
            fk.AgreementAccumulator(missing=0, **kw)
    with pytest.raises(ValueError, match="`missing` is '', one of the declared"):
        fk.gwet_ac(x.astype(str), missing="", labels=["", "1", "2"])
    # outside the scale, or of the other kind, it is no class
    assert fk.fleiss_kappa(x, missing=-1, n_classes=3) == pytest.approx(fk.fleiss_kappa(x))
    assert fk.fleiss_kappa(np.where(x == 0, -1, x), missing=-1, labels=[1, 2]) == (
        pytest.approx(fk.fleiss_kappa(np.where(x == 0, np.nan, x))))


def test_missing_nan_or_na_means_missing_values_as_none_does():
    s = pd.DataFrame({"a": ["x", "y", None, "x"], "b": ["x", np.nan, "y", "y"],
                      "c": ["y", "y", "x", None]})
    want = fk.fleiss_kappa(s)
    for marker in (np.nan, float("nan"), pd.NA):
        assert fk.fleiss_kappa(s, missing=marker) == pytest.approx(want, abs=1e-15)
    acc = fk.AgreementAccumulator(missing=np.nan).update(
        item=[0, 0, 1, 1], rater=[0, 1, 0, 1], label=["a", "b", "a", "a"])
    assert acc.n_ratings == 4


def test_declared_classes_change_gwet_but_not_fleiss():
    x = np.array([[0, 0, 1], [1, 1, 1], [0, 1, 0], [2, 2, 2]])
    assert fk.fleiss_kappa(x, n_classes=5) == pytest.approx(fk.fleiss_kappa(x), abs=1e-15)
    assert fk.gwet_ac(x, n_classes=5) != pytest.approx(fk.gwet_ac(x))


def test_ordered_categorical_declares_classes():
    cat = pd.CategoricalDtype(["low", "mid", "high"], ordered=True)
    df = pd.DataFrame({"a": ["low", "mid", "low"], "b": ["low", "high", "mid"]}).astype(cat)
    want = fk.gwet_ac([[0, 0], [1, 2], [0, 1]], weights="linear", n_classes=3)
    assert fk.gwet_ac(df, weights="linear") == pytest.approx(want, abs=1e-15)


def test_items_with_no_rating_are_left_out(rng):
    x = random_ratings(rng, 20, 4, 3)
    y = np.vstack([x, np.full((3, 4), np.nan)])
    for name in NAMES:
        assert FUNCS[name](y) == pytest.approx(FUNCS[name](x), abs=1e-15)
    # ... and the result says how many it left out (not only in to_dict)
    res = fk.agreement(y)
    assert (res.n_items, res.n_unrated) == (20 - int(np.isnan(x).all(axis=1).sum()),
                                            3 + int(np.isnan(x).all(axis=1).sum()))
    assert f"({res.n_unrated} more without a rating, left out)" in str(res)
    assert "without a rating" in res._repr_html_()
    assert "without a rating" not in str(fk.agreement(x[~np.isnan(x).all(axis=1)]))


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("call, match", [
    (lambda: fk.fleiss_kappa(np.array([1, 2, 3])), "must be 2-D"),
    (lambda: fk.fleiss_kappa([[1, 2], [1, 2]], item=[1]), "exactly one form"),
    (lambda: fk.fleiss_kappa(item=[1, 2], rater=[1, 2]), "all three"),
    (lambda: fk.fleiss_kappa(item=[1, 1], rater=["a", "a"], label=[0, 1]),
     "more than once"),
    (lambda: fk.fleiss_kappa(item=[1, None], rater=["a", "b"], label=[0, 1]),
     "missing ids"),
    (lambda: fk.fleiss_kappa([[1, 7], [1, 2]], labels=[1, 2]), "not one of the declared"),
    (lambda: fk.fleiss_kappa([[1, 2], [1, 2]], labels=[1, 2], n_classes=2),
     "either `labels` or `n_classes`"),
    (lambda: fk.fleiss_kappa([["a", "b"], ["a", "a"]], weights="linear"),
     "needs ordered classes"),
    (lambda: fk.krippendorff_alpha([["a", "b"], ["a", "a"]], level="interval"),
     "needs ordered classes"),
    (lambda: fk.krippendorff_alpha([["a", "b"], ["a", "a"]], level="interval",
                                   labels=["a", "b"]), "use level='ordinal'"),
    (lambda: fk.krippendorff_alpha([[1, 2], [1, 1]], level="cosine"), "`level` must be"),
    (lambda: fk.krippendorff_alpha([[1, 2], [1, 1]], level=np.ones((2, 2))),
     "`level` matrix must be zero on the diagonal"),
    (lambda: fk.krippendorff_alpha([[1, 2], [1, 1]], level=np.zeros((3, 3))),
     r"`level` matrix must have shape \(K, K\)"),
    (lambda: fk.krippendorff_alpha([[1, 2], [1, 1]], level="ratio", labels=[-1, 1, 2]),
     "non-negative"),
    (lambda: fk.fleiss_kappa([[1, 2], [1, 1]], weights="cubic"), "`weights` must be"),
    (lambda: fk.gwet_ac([["a", "b"], ["a", "a"]], weights="cubic"), "`weights` must be"),
    (lambda: fk.conger_kappa(counts=[[1, 2], [3, 0]]), "anonymous raters"),
    (lambda: fk.fleiss_kappa([[1, None], [None, 2]]), "no item has two"),
    (lambda: fk.fleiss_kappa([[None, None], [None, None]]), "every rating is missing"),
    (lambda: fk.fleiss_kappa(counts=[[1, -2]]), "non-negative"),
    (lambda: fk.fleiss_kappa(counts=[[1.5, 2]]), "whole numbers"),
    # uint64 at 2**63 wrapped to negative int64 ("no item has two ratings" before)
    (lambda: fk.fleiss_kappa(counts=np.array([[1, 2], [3, 0]], np.uint64) * np.uint64(2**62)),
     r"too many raters .* below 2\*\*62"),
    (lambda: fk.fleiss_kappa(counts=[[1e300, 2.0], [3.0, 0.0]]), "too many raters"),
    (lambda: fk.fleiss_kappa(counts=[[1, 2]], n_classes=3), "3 classes are declared"),
    (lambda: fk.fleiss_kappa([[1, 2.5], [1, 1]]),
     "non-integral .* Round or bin continuous ratings into classes first"),
    (lambda: fk.fleiss_kappa(np.array([[1, 2.5], [1, 1]])),
     "non-integral .* Round or bin continuous ratings into classes first"),
    (lambda: fk.AgreementAccumulator().update([1, 1], [0, 1], [0.5, 1.0]),
     "non-integral .* Round or bin continuous ratings into classes first"),
    (lambda: fk.fleiss_kappa([[1, "a"], [1, 1]]), "mixes strings and numbers"),
    (lambda: fk.fleiss_kappa([[1, 2]], missing=[1]), "`missing` must be"),
    (lambda: fk.fleiss_kappa([[1, 2]], colour=1), "unexpected keyword"),
    (lambda: fk.fleiss_kappa(np.empty((3, 0))), "has no column"),
    (lambda: fk.fleiss_kappa(np.empty((0, 3), dtype=object)), "has no row"),
    (lambda: fk.fleiss_kappa(counts=[1, 2, 3]), "`counts` must be 2-D"),
    (lambda: fk.fleiss_kappa(counts=[["a", "b"]]), "`counts` must hold numbers"),
    (lambda: fk.fleiss_kappa(counts=np.empty((0, 2))), "`counts` has no row"),
    (lambda: fk.fleiss_kappa(item=[1, 2], rater=[1, 2], label=[0]), "same length"),
    (lambda: fk.fleiss_kappa(item=[], rater=[], label=[]), "long-format data are empty"),
    (lambda: fk.fleiss_kappa(item=[1, 1], rater=[1, 2], label=[[0, 1], [1, 0]]),
     "`label` must be 1-D"),
    (lambda: fk.fleiss_kappa(item=np.array([{1}, {2}], dtype=object), rater=[1, 2],
                             label=[0, 1]), "ids must be numbers or strings"),
    (lambda: fk.fleiss_kappa(np.arange(10_000).reshape(5_000, 2)), "distinct labels"),
    (lambda: fk.fleiss_kappa(pd.DataFrame({
        "a": pd.Categorical(["x", "y"], categories=["x", "y"], ordered=True),
        "b": pd.Categorical(["x", "y"], categories=["y", "x"], ordered=True)})),
     "categories different from another rater's"),
])
def test_bad_input_errors(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_undefined_warns_and_returns_nan():
    x = [[1, 1], [1, 1], [1, 1]]
    with pytest.warns(fk.UndefinedKappaWarning, match="undefined"):
        assert np.isnan(fk.fleiss_kappa(x))
    assert fk.percent_agreement(x) == 1.0


@pytest.mark.parametrize("name", ["fleiss_kappa", "conger_kappa", "gwet_ac",
                                  "brennan_prediger", "krippendorff_alpha"])
@pytest.mark.parametrize("replacement", [0.0, -1.0, 1.0])
def test_replace_undefined_by(name, replacement):
    """Undefined (every rating in one class): nan by default, else the stand-in, warned."""
    x = [[2, 2, 2], [2, 2, None], [2, 2, 2]]
    func = getattr(fk, name)
    with pytest.warns(fk.UndefinedKappaWarning,
                      match="undefined .* returning replace_undefined_by=nan"):
        assert np.isnan(func(x))
    with pytest.warns(fk.UndefinedKappaWarning,
                      match=f"returning replace_undefined_by={replacement!r}"):
        assert func(x, replace_undefined_by=replacement) == replacement
    with warnings.catch_warnings():  # a defined coefficient ignores the stand-in
        warnings.simplefilter("error")
        y = [[1, 2, 2], [2, 2, None], [1, 1, 1]]
        assert func(y, replace_undefined_by=replacement) == func(y)


def test_percent_agreement_takes_replace_undefined_by():
    # with a pair of ratings p_a is always defined; no pair at all is a ValueError
    assert fk.percent_agreement([[1, 1], [1, 1]], replace_undefined_by=0.0) == 1.0
    with pytest.raises(ValueError, match="no item has two"):
        fk.percent_agreement([[1, None], [None, 2]], replace_undefined_by=0.0)


def test_numeric_fast_path_equals_general_path(rng):
    x = random_ratings(rng, 50, 4, 5) * 3 + 10  # values 10, 13, ... (gaps in the range)
    table = pd.DataFrame(x)  # the general path (one column at a time)
    for name in NAMES:
        assert FUNCS[name](x) == pytest.approx(FUNCS[name](table), abs=1e-14), name
        assert FUNCS[name](x, labels=[10, 13, 16, 19, 22, 25]) == pytest.approx(
            FUNCS[name](table, labels=[10, 13, 16, 19, 22, 25]), abs=1e-14), name
    ints = np.where(np.isnan(x), -1, x).astype(np.int16)
    assert fk.gwet_ac(ints, missing=-1) == pytest.approx(fk.gwet_ac(x), abs=1e-14)
    flags = ints > 15
    assert fk.gwet_ac(flags) == pytest.approx(fk.gwet_ac(pd.DataFrame(flags)), abs=1e-14)


def _table_numbers(res):
    return {r.coefficient: (r.estimate, r.standard_error, r.low, r.high) for r in res.rows}


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 7), n_raters=st.integers(2, 7),
       n=st.integers(1, 60), p_missing=st.sampled_from([0.0, 0.2, 0.7]),
       dtype=st.sampled_from(["float64", "float32", "int8", "int64", "uint16"]),
       first=st.sampled_from([0, 1, -3]), order=st.sampled_from(["C", "F"]),
       declare=st.sampled_from([None, "n_classes", "wider"]))
@pytest.mark.filterwarnings("ignore")
def test_grouping_by_rating_row_equals_general_path(seed, k, n_raters, n, p_missing, dtype,
                                                    first, order, declare):
    """Wide numeric arrays are grouped by rating row in one pass; the result must be
    the general path's (one column at a time, a DataFrame) to the last digit."""
    from fastkappa._raters_input import encode_ratings

    if dtype == "uint16" and first < 0:
        first = 0
    rng = np.random.default_rng(seed)
    x = rng.integers(0, k, (n, n_raters)).astype(float) + first
    gone = rng.random(x.shape) < p_missing
    if dtype.startswith("float"):
        x[gone] = np.nan
        kw = {}
    else:  # integer arrays mark a missing rating with a value
        x[gone] = first - 1 if first - 1 >= 0 or dtype != "uint16" else 99
        kw = {"missing": first - 1 if first - 1 >= 0 or dtype != "uint16" else 99}
    if declare == "n_classes":
        if first != 0:
            return
        kw["n_classes"] = k
    elif declare == "wider":
        # unused classes above the data's (the missing marker, first - 1, is no class)
        kw["labels"] = list(range(first, first + k + 2))
    arr = np.asarray(x, dtype=dtype, order=order)
    if not np.any(~gone):
        with pytest.raises(ValueError):
            fk.agreement(arr, **kw)
        return
    if (k + 4) ** n_raters <= 1 << 16:  # few possible rows: the one-pass path ran
        assert encode_ratings(arr, **kw).patterns is not None
    frame, fkw = pd.DataFrame(arr), dict(kw)
    if not dtype.startswith("float"):
        frame = frame.astype(float).where(~gone)  # the general path, NaN for missing
        fkw.pop("missing")
    clusters = np.arange(n) // 3
    for extra in ({"method": "asymptotic"},
                  {"method": "bca", "n_resamples": 200, "seed": 3},
                  {"method": "percentile", "n_resamples": 100, "seed": 1, "clusters": clusters,
                   "coefficients": ["fleiss_kappa", "conger_kappa"]}):
        got = _outcome(lambda e=extra: fk.agreement(arr, **e, **kw))
        want = _outcome(lambda e=extra: fk.agreement(frame, **e, **fkw))
        if isinstance(want, str) or isinstance(got, str):
            assert got == want
            continue
        assert got[0] == want[0]
        assert got[1].keys() == want[1].keys()
        for name in got[1]:
            np.testing.assert_allclose(got[1][name], want[1][name], rtol=1e-12, atol=1e-14,
                                       err_msg=name)


def _outcome(call):
    """(items, unrated, classes) and the numbers of each row, or the error message."""
    try:
        res = call()
    except ValueError as err:
        return str(err)
    return (res.n_items, res.n_unrated, list(res.classes)), _table_numbers(res)


def test_grouping_by_rating_row_falls_back_when_rows_are_many():
    from fastkappa._raters_input import encode_ratings

    x = np.random.default_rng(0).integers(0, 10, (200, 12)).astype(float)
    assert encode_ratings(x).patterns is None  # 11**12 possible rows: code table instead
    assert encode_ratings(x[:, :3]).patterns is not None
    assert fk.fleiss_kappa(x) == pytest.approx(fk.fleiss_kappa(pd.DataFrame(x)), abs=1e-14)


@pytest.mark.parametrize("x, match", [
    (np.array([[1, 7], [1, 2]]), "not one of the declared"),
    (np.array([[1.0, np.inf], [1, 2]]), "inf"),
    (np.array([[1.0, 2.5], [1, 2]]), "non-integral"),
])
def test_numeric_fast_path_errors(x, match):
    with pytest.raises(ValueError, match=match):
        fk.fleiss_kappa(x, labels=[1, 2] if match.startswith("not") else None)


# --------------------------------------------------------------------------- categories


def test_fleiss_1971_category_kappas():
    ex = DATA["fleiss_1971"]
    res = fk.agreement_by_category(np.array(ex["ratings"]), coefficients="fleiss_kappa")
    assert list(res) == [1, 2, 3, 4, 5]
    for cls, want in ex["category_kappa"].items():
        assert round(res[int(cls)]["fleiss_kappa"].estimate, 3) == want


def test_by_category_equals_coefficients_on_binary_ratings(rng):
    x = random_ratings(rng, 40, 4, 3)
    res = fk.agreement_by_category(x, method="percentile", n_resamples=200, seed=5)
    for c in range(3):
        binary = np.where(np.isnan(x), np.nan, (x != c).astype(float))
        want = fk.agreement(binary, method="percentile", n_resamples=200, seed=5)
        got = res[c]
        assert list(got.classes) == [c, "other"]
        for a, b in zip(got, want, strict=True):
            assert a.coefficient == b.coefficient
            assert a.estimate == pytest.approx(b.estimate, abs=1e-14)
            assert a.standard_error == pytest.approx(b.standard_error, abs=1e-14)


def test_a_rater_without_ratings_leaves_conger_undefined_and_the_others_scored():
    """A rater column with no rating (common after subsetting): Conger's kappa,
    which averages each rater's class shares, is nan with a warning, as irrCAC
    gives it; every other coefficient is scored, as irrCAC scores it."""
    import irrCAC.raw as irr

    x = np.array([[1, 1, np.nan], [2, 2, np.nan], [1, 2, np.nan], [2, 2, np.nan],
                  [1, 1, np.nan], [2, 1, np.nan]])
    with pytest.warns(fk.UndefinedKappaWarning, match="rater 2 has no rating"):
        warnings.simplefilter("ignore", fk.DegenerateIntervalWarning)  # 6 items resampled
        res = fk.agreement(x, method="bca", n_resamples=300, seed=1)
    assert math.isnan(res["conger_kappa"].estimate) and math.isnan(res["conger_kappa"].low)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cac = irr.CAC(pd.DataFrame(x), digits=20)
        assert res["fleiss_kappa"].estimate == pytest.approx(
            float(cac.fleiss()["est"]["coefficient_value"]), abs=1e-12)
        assert math.isnan(float(cac.conger()["est"]["coefficient_value"]))
    for name in ("fleiss_kappa", "gwet_ac", "krippendorff_alpha"):
        assert math.isfinite(res[name].low) and math.isfinite(res[name].estimate)
    with pytest.warns(fk.UndefinedKappaWarning, match="has no rating") as caught:
        assert math.isnan(fk.conger_kappa(x))
        fk.agreement(x, coefficients=["conger_kappa", "fleiss_kappa"])
    assert {w.filename for w in caught} == {__file__}  # the caller's line
    with pytest.warns(fk.UndefinedKappaWarning):
        assert fk.conger_kappa(x, replace_undefined_by=0.0) == 0.0
    with pytest.warns(fk.UndefinedKappaWarning), pytest.warns(fk.DegenerateIntervalWarning):
        only = fk.agreement(x, coefficients="conger_kappa", clusters=[0, 0, 1, 1, 2, 2])
    assert math.isnan(only["conger_kappa"].estimate) and only.n_clusters == 3


def test_half_point_ratings_are_classes_when_declared():
    """Non-integral ratings are refused when classes are inferred (the message
    names `labels=`) and scored when declared: Krippendorff's interval alpha
    equals the krippendorff package's."""
    import krippendorff

    x = np.array([[1.5, 1.5, 2.5], [2.5, 2.5, 2.5], [3.5, 3.5, 1.5], [1.5, 2.5, np.nan]])
    with pytest.raises(ValueError, match=r"labels=\[\.\.\.\]"):
        fk.krippendorff_alpha(x, level="interval")
    got = fk.krippendorff_alpha(x, level="interval", labels=[1.5, 2.5, 3.5])
    assert got == pytest.approx(krippendorff.alpha(x.T, level_of_measurement="interval"),
                                abs=1e-12)


def test_one_item_says_the_standard_error_is_undefined_not_zero():
    # Gwet's variance divides by n - 1: with one item the SE is nan (irrCAC divides
    # by zero), and the warning said "zero ... zero width" of a nan interval
    with pytest.warns(fk.DegenerateIntervalWarning, match="is undefined .*single item") as w:
        res = fk.agreement(np.array([[1, 1, 2]]), coefficients="fleiss_kappa")
    assert not any("zero width" in str(x.message) for x in w)
    row = res["fleiss_kappa"]
    assert math.isnan(row.standard_error) and math.isnan(row.low) and math.isnan(row.high)
    assert str(res).startswith("agreement among 3 raters on 1 item, 2 classes;")


def test_ordinal_alpha_keeps_no_coincidences_per_type(rng):
    """Ordinal alpha stored a K^2 coincidence vector per type (a MemoryError of
    14.9 GiB at K = 1,000, 2,000 items x 4 raters; 41 s and 7.1 GB at K = 100,
    50,000 x 3); the estimate and Gwet's SE keep the (K, K) totals only."""
    import tracemalloc

    krippendorff = pytest.importorskip("krippendorff")
    k = 200
    x = rng.integers(0, k, (300, 3)).astype(float)
    x[rng.random(x.shape) < 0.1] = np.nan
    fk.krippendorff_alpha(x[:20], level="ordinal")  # kernels compiled first
    tracemalloc.start()
    try:
        got = fk.krippendorff_alpha(x, level="ordinal")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 300 * k * k * 8 / 4  # the per-type coincidences, in bytes
    assert got == pytest.approx(
        krippendorff.alpha(x.T, level_of_measurement="ordinal"), abs=1e-10)
    # Gwet's SE from the totals equals the one from per-type columns (which
    # singleton clusters use)
    alone = fk.agreement(x, level="ordinal", coefficients="krippendorff_alpha")
    per_type = fk.agreement(x, level="ordinal", coefficients="krippendorff_alpha",
                            clusters=np.arange(len(x)))
    assert alone["krippendorff_alpha"].estimate == pytest.approx(got, abs=1e-12)
    assert alone["krippendorff_alpha"].standard_error == pytest.approx(
        per_type["krippendorff_alpha"].standard_error, rel=1e-10)
