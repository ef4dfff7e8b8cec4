"""``frequency_weight``: a row with count c is c identical rows.

The oracle everywhere is the same call on the rows expanded with
``np.repeat`` (plus SAS PROC FREQ's printed skin-condition example and
statsmodels for the asymptotic interval, and exact integers for the table).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import fastkappa as fk
from fastkappa._core import config

SETTINGS = settings(deadline=None, max_examples=40,
                    suppress_health_check=[HealthCheck.too_slow])

# SAS/STAT User's Guide, PROC FREQ, "Agreement Study" (Getting Started): two
# dermatologists, skin condition terrible/poor/marginal/clear, the Count variable
# given in the WEIGHT statement. Printed: simple kappa 0.3449, ASE 0.0724,
# 95% confidence limits 0.2030 to 0.4868.
SKIN = np.array([[10, 4, 1, 0],
                 [5, 10, 12, 2],
                 [2, 4, 12, 5],
                 [0, 2, 6, 13]])
SKIN_PRINTED = {"estimate": 0.3449, "standard_error": 0.0724, "low": 0.2030, "high": 0.4868}


def one_row_per_cell(table):
    i, j = np.indices(np.shape(table))
    return i.ravel(), j.ravel(), np.asarray(table).ravel()


def calls(f, *args, **kwargs):
    """``(result, warnings as (category, message))`` of one call."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = f(*args, **kwargs)
    return out, [(w.category, str(w.message)) for w in rec]


def same_ci(a, b):
    """Every field of two KappaCI equal (nan equal to nan), arrays included."""
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y)
        elif isinstance(x, float) and x != x:
            assert y != y, f.name
        else:
            assert x == y, (f.name, x, y)


@st.composite
def counted_rows(draw, max_k=4, max_rows=12, max_count=5):
    k = draw(st.integers(2, max_k))
    n = draw(st.integers(1, max_rows))
    t = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    p = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    c = np.array(draw(st.lists(st.integers(0, max_count), min_size=n, max_size=n)))
    assume(c.sum() > 0)
    return t, p, c


# --------------------------------------------------------------------------- known value


def test_skin_condition_asymptotic_matches_sas_proc_freq():
    i, j, c = one_row_per_cell(SKIN)
    res = fk.kappa_ci(i, j, frequency_weight=c, method="asymptotic")
    for name, printed in SKIN_PRINTED.items():
        assert abs(getattr(res, name) - printed) <= 5.1e-5, (name, getattr(res, name))
    # and exactly the interval of the 88 expanded patients
    same_ci(res, fk.kappa_ci(np.repeat(i, c), np.repeat(j, c), method="asymptotic"))


def test_skin_condition_agrees_with_statsmodels():
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    i, j, c = one_row_per_cell(SKIN)
    res = fk.kappa_ci(i, j, frequency_weight=c, method="asymptotic")
    sm = inter_rater.cohens_kappa(SKIN)
    assert res.estimate == pytest.approx(sm.kappa, rel=1e-12)
    assert res.standard_error == pytest.approx(sm.std_kappa, rel=1e-6)


@pytest.mark.parametrize("method", ["bca", "percentile", "basic", "asymptotic"])
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_table_one_row_per_cell_gives_the_expanded_interval(method, weights):
    i, j, c = one_row_per_cell(SKIN)
    kw = dict(method=method, weights=weights, seed=7, n_resamples=999)
    same_ci(fk.kappa_ci(i, j, frequency_weight=c, **kw),
            fk.kappa_ci(np.repeat(i, c), np.repeat(j, c), **kw))


# --------------------------------------------------------------------------- properties


@SETTINGS
@given(counted_rows(), st.sampled_from([None, "linear", "quadratic"]))
def test_table_and_kappa_equal_the_expanded_rows(rows, weights):
    t, p, c = rows
    T, P = np.repeat(t, c), np.repeat(p, c)
    got = fk.confusion_matrix(t, p, frequency_weight=c)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, fk.confusion_matrix(T, P))
    a = calls(fk.cohen_kappa, t, p, frequency_weight=c, weights=weights)
    b = calls(fk.cohen_kappa, T, P, weights=weights)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1] == b[1]
    acc = fk.CohenKappa(weights=weights).update(t, p, frequency_weight=c)
    ref = fk.CohenKappa(weights=weights).update(T, P)
    np.testing.assert_array_equal(acc.confusion, ref.confusion)
    assert acc.n_rows == ref.n_rows == c.sum()


@SETTINGS
@given(counted_rows(max_count=4), st.sampled_from(["bca", "percentile", "asymptotic"]),
       st.sampled_from([None, "quadratic"]), st.booleans())
def test_kappa_ci_equals_the_expanded_rows(rows, method, weights, clustered):
    t, p, c = rows
    T, P = np.repeat(t, c), np.repeat(p, c)
    assume(len(set(T.tolist())) > 1 or len(set(P.tolist())) > 1)
    kw = dict(method=method, weights=weights, seed=3, n_resamples=200)
    if clustered:  # a row's c copies belong to its cluster
        cl = np.arange(len(t)) // 2
        kw_a, kw_b = dict(clusters=cl), dict(clusters=np.repeat(cl, c))
    else:
        kw_a = kw_b = {}
    try:
        b = calls(fk.kappa_ci, T, P, **kw, **kw_b)
    except ValueError as err:  # e.g. fewer than 2 clusters: the same error both ways
        with pytest.raises(ValueError, match=str(err)[:40].replace("(", r"\(")):
            fk.kappa_ci(t, p, frequency_weight=c, **kw, **kw_a)
        return
    a = calls(fk.kappa_ci, t, p, frequency_weight=c, **kw, **kw_a)
    same_ci(a[0], b[0])
    assert a[1] == b[1]


def outcome(f, *args, **kwargs):
    """``('ok', result, warnings)`` or ``('error', message)`` of one call."""
    try:
        res, warned = calls(f, *args, **kwargs)
    except ValueError as err:
        return ("error", str(err))
    return ("ok", res, warned)


@SETTINGS
@given(counted_rows(max_k=3, max_rows=10, max_count=3), st.integers(0, 2**16))
def test_row_level_entry_points_equal_the_expanded_rows(rows, salt):
    t, p, c = rows
    rng = np.random.default_rng(salt)
    q = rng.integers(0, t.max() + 1, len(t))
    g = rng.integers(0, 2, len(t))
    s = t + rng.normal(0, 0.5, len(t))
    T, P, Q, G, S = (np.repeat(x, c) for x in (t, p, q, g, s))
    pairs = [
        (fk.compare, (t, {"a": p, "b": q}), (T, {"a": P, "b": Q}),
         dict(seed=1, n_resamples=100, method="percentile")),
        (fk.kappa_by_group, (t, p, g), (T, P, G), dict(method="percentile", seed=1,
                                                       n_resamples=100)),
        (fk.optimize_thresholds, (t, s), (T, S), {}),
        (fk.continuous_qwk, (t, s), (T, S), {}),
    ]
    for f, args_a, args_b, kw in pairs:
        a = outcome(f, *args_a, frequency_weight=c, **kw)
        b = outcome(f, *args_b, **kw)
        assert a[0] == b[0], (f.__name__, a, b)
        if a[0] == "error":
            assert a[1] == b[1]
            continue
        assert a[2] == b[2], f.__name__
        if f is fk.compare:
            assert repr(a[1].to_dict()) == repr(b[1].to_dict())  # nan-safe
        elif f is fk.kappa_by_group:
            for name in ("estimate", "n_rows", "low", "high", "confusion"):
                np.testing.assert_array_equal(getattr(a[1], name), getattr(b[1], name))
        else:
            np.testing.assert_array_equal(a[1], b[1])


# ---------------------------------------------------------------- row-level entry points


def _data(n=90, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 3, n)
    p = np.where(rng.random(n) < 0.6, t, rng.integers(0, 3, n))
    q = np.where(rng.random(n) < 0.5, t, rng.integers(0, 3, n))
    c = rng.integers(0, 4, n)
    return t, p, q, c


def test_compare_equals_the_expanded_rows():
    t, p, q, c = _data()
    cl = np.arange(len(t)) % 40
    for extra_a, extra_b in [({}, {}), ({"clusters": cl}, {"clusters": np.repeat(cl, c)})]:
        a = fk.compare(t, {"a": p, "b": q}, frequency_weight=c, seed=5, n_resamples=300,
                       **extra_a)
        b = fk.compare(np.repeat(t, c), {"a": np.repeat(p, c), "b": np.repeat(q, c)},
                       seed=5, n_resamples=300, **extra_b)
        assert repr(a.to_dict()) == repr(b.to_dict())  # nan-safe


def test_kappa_by_group_equals_the_expanded_rows():
    t, p, _, c = _data(150)
    g = np.arange(len(t)) % 3
    a = fk.kappa_by_group(t, p, g, frequency_weight=c, method="bca", seed=2, n_resamples=300)
    b = fk.kappa_by_group(np.repeat(t, c), np.repeat(p, c), np.repeat(g, c), method="bca",
                          seed=2, n_resamples=300)
    for name in ("estimate", "n_rows", "low", "high", "confusion"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.overall == b.overall


def test_thresholds_and_continuous_qwk_equal_the_expanded_rows():
    t, _, _, c = _data(120)
    s = t + np.random.default_rng(1).normal(0, 0.6, len(t))
    T, S = np.repeat(t, c), np.repeat(s, c)
    np.testing.assert_array_equal(fk.optimize_thresholds(t, s, frequency_weight=c),
                                  fk.optimize_thresholds(T, S))
    assert fk.continuous_qwk(t, s, frequency_weight=c) == fk.continuous_qwk(T, S)
    g = np.arange(len(t)) % 30
    a = fk.ThresholdOptimizer(cv=3, seed=0).fit(t, s, frequency_weight=c, groups=g)
    b = fk.ThresholdOptimizer(cv=3, seed=0).fit(T, S, groups=np.repeat(g, c))
    np.testing.assert_array_equal(a.thresholds_, b.thresholds_)
    assert a.cv_qwk_ == b.cv_qwk_


def test_dask_equals_the_expanded_rows():
    da = pytest.importorskip("dask.array")
    import fastkappa.dask as fkd

    t, p, _, c = _data(120)
    T, P = np.repeat(t, c), np.repeat(p, c)

    def d(x):
        return da.from_array(x, chunks=37)

    np.testing.assert_array_equal(
        fkd.confusion_matrix(d(t), d(p), frequency_weight=d(c)), fk.confusion_matrix(T, P))
    assert fkd.cohen_kappa(d(t), d(p), frequency_weight=d(c), weights="quadratic") == (
        fk.cohen_kappa(T, P, weights="quadratic"))
    same_ci(fkd.kappa_ci(d(t), d(p), frequency_weight=d(c), seed=4, n_resamples=300),
            fk.kappa_ci(T, P, seed=4, n_resamples=300))
    cl = np.arange(len(t)) % 40
    same_ci(fkd.kappa_ci(d(t), d(p), frequency_weight=d(c), clusters=d(cl), seed=4,
                         n_resamples=300),
            fk.kappa_ci(T, P, clusters=np.repeat(cl, c), seed=4, n_resamples=300))
    g = np.arange(len(t)) % 3
    a = fkd.kappa_by_group(d(t), d(p), d(g), frequency_weight=d(c))
    b = fk.kappa_by_group(T, P, np.repeat(g, c))
    np.testing.assert_array_equal(a.estimate, b.estimate)
    np.testing.assert_array_equal(a.n_rows, b.n_rows)


# --------------------------------------------------------------------------- semantics


def test_counts_beyond_float64_precision_stay_exact():
    big = 2**60 + 1  # not a float64: a float path would round it
    got = fk.confusion_matrix([0, 1, 1, 0], [0, 1, 0, 1], frequency_weight=[big, big, 3, 1])
    assert got.dtype == np.int64
    assert got.tolist() == [[big, 1], [3, big]]
    assert fk.cohen_kappa([0, 1, 1, 0], [0, 1, 0, 1], frequency_weight=[big, big, 3, 1]) == (
        fk.kappa_from_confusion(got))


def test_zero_counts_are_no_rows():
    # the value 9 and the cluster 'z' appear only in rows counted 0 times
    t, p, c = [0, 1, 9, 1, 0], [0, 1, 9, 0, 1], [2, 3, 0, 1, 1]
    assert fk.confusion_matrix(t, p, frequency_weight=c).shape == (2, 2)
    acc = fk.CohenKappa().update(t, p, frequency_weight=c)
    assert acc.labels.tolist() == [0, 1]
    assert fk.CohenKappa().update([3], [3], frequency_weight=[0]).n_rows == 0


def test_whole_floats_and_dataframe_columns_are_counts():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"t": [0, 1, 1], "p": [0, 1, 0], "n": [2.0, 3.0, 1.0]})
    np.testing.assert_array_equal(
        fk.confusion_matrix(df["t"], df["p"], frequency_weight=df["n"]), [[2, 0], [1, 3]])


@pytest.mark.parametrize("counts, match", [
    ([1.5, 1, 1], "whole numbers.*sample_weight"),
    ([1, -1, 1], "non-negative"),
    ([1, np.nan, 1], "finite"),
    ([0, 0, 0], "zero everywhere"),
    (np.zeros(3, dtype=np.int64), "zero everywhere"),
    ([1, 1], "one count per row: got 2 counts for 3 rows"),
    (["a", "b", "c"], "whole numbers.*sample_weight"),
    ([2**62, 2**62, 1], "sums to .* 2\\*\\*63"),
    (np.array([2**64 - 1, 1, 1], dtype=np.uint64), "fit in int64"),
    (np.ma.masked_array([1, 1, 1], mask=[0, 1, 0]), r"masked.*\.filled\(0\)"),
])
def test_bad_counts_say_what_to_do(counts, match):
    with pytest.raises(ValueError, match=match):
        fk.cohen_kappa([0, 1, 1], [0, 1, 0], frequency_weight=counts)


def test_both_kinds_of_row_weight_is_an_error():
    with pytest.raises(ValueError, match=r"`sample_weight`.*or `frequency_weight`.*not both"):
        fk.kappa_ci([0, 1, 1], [0, 1, 0], sample_weight=[1, 1, 1],
                    frequency_weight=[1, 2, 1])
    with pytest.raises(ValueError, match="not both"):
        fk.compare([0, 1, 1], {"a": [0, 1, 0], "b": [0, 0, 1]}, sample_weight=[1, 1, 1],
                   frequency_weight=[1, 2, 1])


def test_row_level_entry_points_refuse_a_huge_expansion(monkeypatch):
    monkeypatch.setattr(config, "MAX_EXPANDED_ROWS", 10)
    with pytest.raises(ValueError, match=r"sums to 11 rows.*kappa_ci"):
        fk.kappa_by_group([0, 1], [0, 1], ["a", "b"], frequency_weight=[5, 6])


def test_length_mismatch_with_counts_is_a_value_error():
    with pytest.raises(ValueError, match="`y_true` and `groups` must have the same length"):
        fk.kappa_by_group([0, 1, 1], [0, 1, 0], ["a", "b"], frequency_weight=[1, 1, 1])
