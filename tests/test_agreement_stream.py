"""AgreementAccumulator: chunks in any order, merge and pickle equal one shot."""

from __future__ import annotations

import copy
import itertools
import pickle

import numpy as np
import pandas as pd
import pytest

import fastkappa as fk

ALL = ("percent_agreement", "fleiss_kappa", "conger_kappa", "gwet_ac", "brennan_prediger",
       "krippendorff_alpha")


def long_data(rng, n=120, n_raters=5, k=4):
    truth = rng.integers(0, k, n)
    x = np.where(rng.random((n, n_raters)) < 0.6, truth[:, None],
                 rng.integers(0, k, (n, n_raters))).astype(float)
    x[rng.random(x.shape) < 0.2] = np.nan
    x[0] = np.arange(n_raters) % k
    items, raters = np.nonzero(~np.isnan(x))
    order = rng.permutation(len(items))
    item_ids = np.array([f"doc{i}" for i in range(n)], dtype=object)[items[order]]
    rater_ids = np.array(list("ABCDEFGHIJ"[:n_raters]), dtype=object)[raters[order]]
    return x, item_ids, rater_ids, x[items, raters][order].astype(int)


def assert_same(a, b):
    assert [r.coefficient for r in a] == [r.coefficient for r in b]
    for ra, rb in zip(a, b, strict=True):
        assert ra.estimate == pytest.approx(rb.estimate, abs=1e-13), ra.coefficient
        assert ra.standard_error == pytest.approx(rb.standard_error, abs=1e-13), ra.coefficient


@pytest.mark.parametrize("declared", [False, True])
def test_chunks_merge_and_pickle_equal_one_shot(rng, declared):
    _x, item, rater, label = long_data(rng)
    kw = dict(n_classes=4) if declared else {}
    want = fk.agreement(item=item, rater=rater, label=label, **kw)
    acc = fk.AgreementAccumulator(**kw)
    cuts = [0, 7, 100, 101, 250, len(item)]
    for lo, hi in itertools.pairwise(cuts):
        acc.update(item[lo:hi], rater[lo:hi], label[lo:hi])
    assert acc.n_ratings == len(item) and acc.n_items == 120 and acc.n_raters == 5
    assert_same(acc.compute(), want)
    assert_same(pickle.loads(pickle.dumps(acc)).compute(), want)
    a, b = fk.AgreementAccumulator(**kw), fk.AgreementAccumulator(**kw)
    a.update(item[::2], rater[::2], label[::2])
    b.update(item[1::2], rater[1::2], label[1::2])
    assert_same((a + b).compute(), want)
    assert a.n_ratings == len(item[::2])  # + left a unchanged
    assert_same(a.merge(b).compute(), want)
    assert_same(acc.compute(weights="quadratic"), fk.agreement(
        item=item, rater=rater, label=label, weights="quadratic", **kw))


def test_bootstrap_and_clusters_equal_one_shot(rng):
    x, item, rater, label = long_data(rng)
    acc = fk.AgreementAccumulator().update(item, rater, label)
    cluster_of = {f"doc{i}": i // 4 for i in range(120)}
    want = fk.agreement(x, method="bca", n_resamples=500, seed=3,
                        clusters=np.arange(120) // 4)
    got = acc.compute(method="bca", n_resamples=500, seed=3, clusters=cluster_of)
    for ra, rb in zip(got, want, strict=True):
        assert ra.estimate == pytest.approx(rb.estimate, abs=1e-13)
        assert ra.standard_error == pytest.approx(rb.standard_error, rel=1e-9)


def test_string_labels_missing_marker_and_unordered_weights():
    acc = fk.AgreementAccumulator(missing="")
    acc.update(["i1", "i1", "i2", "i2"], ["a", "b", "a", "b"], ["yes", "yes", "no", ""])
    acc.update(["i3", "i3", "i2"], ["a", "b", "c"], ["no", "no", "no"])
    assert acc.n_ratings == 6
    got = acc.compute(coefficients="fleiss_kappa")["fleiss_kappa"].estimate
    want = fk.fleiss_kappa([["yes", "yes", None], ["no", None, "no"], ["no", "no", None]])
    assert got == pytest.approx(want, abs=1e-14)
    with pytest.raises(ValueError, match="needs ordered classes"):
        acc.compute(weights="linear")


def test_duplicates_are_refused_and_leave_the_state_unchanged():
    acc = fk.AgreementAccumulator()
    acc.update([1, 1], ["a", "b"], [0, 1])
    with pytest.raises(ValueError, match="more than once"):
        acc.update([2, 1], ["a", "a"], [5, 1])
    assert acc.n_items == 1 and acc.n_ratings == 2
    assert list(acc.table().classes) == [0, 1]
    with pytest.raises(ValueError, match="more than once"):
        acc.update([3, 3], ["a", "a"], [0, 0])
    other = fk.AgreementAccumulator().update([1], ["b"], [0])
    with pytest.raises(ValueError, match="more than once"):
        acc.merge(other)
    assert acc.n_ratings == 2


@pytest.mark.parametrize("call, match", [
    (lambda: fk.AgreementAccumulator().compute(), "empty"),
    (lambda: fk.AgreementAccumulator().update([1, 2], ["a"], [0, 1]), "same length"),
    (lambda: fk.AgreementAccumulator(n_classes=2).update([1], ["a"], [3]),
     "not one of the declared"),
    (lambda: fk.AgreementAccumulator().update([1], ["a"], [0]).update([2], ["a"], ["x"]),
     "one kind"),
    (lambda: fk.AgreementAccumulator(n_classes=2).merge(fk.AgreementAccumulator()),
     "cannot be merged"),
    (lambda: fk.AgreementAccumulator().update([1, 1], ["a", "b"], [0, 1]).compute(
        clusters={2: 0}), "no cluster"),
    (lambda: fk.AgreementAccumulator().update([1, 1], ["a", "b"], [0, 1]).compute(
        clusters=[0]), "must be a dict"),
    (lambda: fk.AgreementAccumulator().update([1], ["a"], [[0, 1]]), "`label` must be 1-D"),
])
def test_accumulator_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_merge_takes_an_accumulator():
    with pytest.raises(TypeError, match="takes another AgreementAccumulator"):
        fk.AgreementAccumulator().merge(fk.CohenKappa())


def test_nan_labels_are_missing_ratings():
    acc = fk.AgreementAccumulator()
    acc.update([1, 1, 2, 2, 3, 3], ["a", "b", "a", "b", "a", "b"],
               [0.0, np.nan, 1.0, 1.0, 0.0, 1.0])
    assert acc.n_ratings == 5
    want = fk.gwet_ac([[0, np.nan], [1, 1], [0, 1]])
    assert acc.compute(coefficients="gwet_ac")["gwet_ac"].estimate == pytest.approx(want)


def test_integer_ids_use_sorted_arrays_and_fall_back_to_a_dict():
    from fastkappa.agreement_stream import _IdIndex

    idx = _IdIndex()
    assert idx.codes(np.array([30, 10, 20])).tolist() == [0, 1, 2]
    assert idx.codes(np.array([20, 40, 5])).tolist() == [2, 3, 4]
    assert idx._dict is None and idx.ids() == [30, 10, 20, 40, 5]
    idx.truncate(3)
    assert idx.ids() == [30, 10, 20] and idx.codes(np.array([5])).tolist() == [3]
    assert idx.codes(["x", 10]).tolist() == [4, 1]  # strings: dict from now on
    assert idx._dict is not None and idx.ids() == [30, 10, 20, 5, "x"]


def test_integer_and_string_ids_mix_across_chunks_and_merges(rng):
    _, item, rater, label = long_data(rng)
    codes = pd.factorize(item)[0]
    want = fk.agreement(item=item, rater=rater, label=label)
    a = fk.AgreementAccumulator()
    a.update(codes[:200], rater[:200], label[:200])       # integer item ids
    b = fk.AgreementAccumulator()
    b.update(codes[200:], rater[200:], label[200:])
    assert a._items._dict is None
    assert_same((a + b).compute(), want)
    c = fk.AgreementAccumulator().update(item[:50].astype(str), rater[:50], label[:50])
    with pytest.raises(ValueError, match="more than once"):
        a.merge(fk.AgreementAccumulator().update(codes[:1], rater[:1], label[:1]))
    assert a._items._dict is None and a.n_ratings == 200
    d = copy.deepcopy(a).merge(c)  # string ids join integer ones: a dict from then on
    assert d._items._dict is not None and d.n_items == a.n_items + c.n_items
