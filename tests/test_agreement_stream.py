"""AgreementAccumulator: chunks in any order, merge and pickle equal one shot."""

from __future__ import annotations

import copy
import itertools
import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastkappa as fk
from fastkappa.exceptions import DegenerateIntervalWarning

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


def test_shallow_copy_is_independent(rng):
    # copy.copy shared the table and the id maps: the copy's new item showed up
    # in the original as an item without a rating
    _x, item, rater, label = long_data(rng)
    a = fk.AgreementAccumulator()
    a.update(item, rater, label)
    b = copy.copy(a)
    b.update(["new", "new"], ["A", "B"], [1, 1])
    b.update(["new2"], ["Z"], [2])
    assert (a.n_items, a.n_raters, a.n_ratings) == (120, 5, len(item))
    assert (b.n_items, b.n_raters, b.n_ratings) == (122, 6, len(item) + 3)
    assert_same(a.compute(), fk.agreement(item=item, rater=rater, label=label))


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


def test_integer_ids_in_a_compact_range_go_through_a_direct_map():
    from fastkappa.agreement_stream import _IdIndex

    idx = _IdIndex()
    # new ids are numbered in order of first appearance, in one pass
    assert idx.row_codes(np.array([30, 10, 20, 10]), "item").tolist() == [0, 1, 2, 1]
    assert idx._dmap is not None and idx.ids() == [30, 10, 20]
    # the map grows down and up; known ids keep their codes
    assert idx.row_codes(np.array([5, 30, 1000]), "item").tolist() == [3, 0, 4]
    assert idx._low == 5 and idx._top == 1000 and idx._base <= 5
    assert idx.ids() == [30, 10, 20, 5, 1000]
    # distinct ids (a merge) are numbered in the order given
    assert idx.codes(np.array([40, 7, 10])).tolist() == [5, 6, 1]
    idx.truncate(4)
    assert idx.ids() == [30, 10, 20, 5]
    assert idx.row_codes(np.array([1000, 7], dtype=np.int16), "item").tolist() == [4, 5]
    # a range far wider than the ids: the sorted arrays from then on, same codes
    assert idx.row_codes(np.array([10**12, 20]), "item").tolist() == [6, 2]
    assert idx._dmap is None and not idx._direct_ok
    assert idx.row_codes(np.array([7, 8]), "item").tolist() == [5, 7]
    assert idx.ids() == [30, 10, 20, 5, 1000, 7, 10**12, 8]


def test_more_ids_than_the_direct_map_numbers_go_to_the_sorted_arrays(monkeypatch):
    """The direct map holds int32 codes: ids beyond what it can number leave it, and
    the codes stay those the map gave."""
    from fastkappa import agreement_stream
    from fastkappa.agreement_stream import _IdIndex

    assert agreement_stream._DMAP_DTYPE == np.int32
    monkeypatch.setattr(agreement_stream, "_DMAP_MAX_IDS", 6)
    idx = _IdIndex()
    assert idx.row_codes(np.array([30, 10, 20, 10]), "item").tolist() == [0, 1, 2, 1]
    assert idx._dmap is not None and idx._dmap.dtype == np.int32
    assert idx.row_codes(np.array([40, 50, 60, 10]), "item").tolist() == [3, 4, 5, 1]
    assert idx._dmap is None and not idx._direct_ok  # 3 + 3 ids reached the limit
    assert idx.row_codes(np.array([20, 70]), "item").tolist() == [2, 6]
    assert idx.ids() == [30, 10, 20, 40, 50, 60, 70]


def test_a_shuffled_first_batch_keeps_the_direct_map(rng):
    """A shuffled export's first batch spans the whole id range with few of the ids;
    the map stays direct (it used to fall back to sorting, 4x slower at 1e7 items),
    its capacity doubling does not count as range, and a pickle stores no map."""
    import pickle

    from fastkappa.agreement_stream import _IdIndex

    n_items = 200_000
    item = np.repeat(np.arange(n_items), 3)
    rater = np.tile(np.arange(3), n_items)
    label = rng.integers(0, 4, len(item))
    order = rng.permutation(len(item))
    item, rater, label = item[order], rater[order], label[order]
    acc = fk.AgreementAccumulator()
    for lo in range(0, len(item), 20_000):  # each batch: 20,000 rows over 200,000 ids
        acc.update(item[lo:lo + 20_000], rater[lo:lo + 20_000], label[lo:lo + 20_000])
    assert acc._items._dmap is not None and acc._items._direct_ok
    want = fk.agreement(item=item, rater=rater, label=label)
    for a, b in zip(acc.compute(), want, strict=True):
        assert a.estimate == pytest.approx(b.estimate, abs=1e-14)
    assert acc._items.__getstate__()["_dmap"] == len(acc._items._dmap)  # its length only
    back = pickle.loads(pickle.dumps(acc))
    np.testing.assert_array_equal(back._items._dmap, acc._items._dmap)
    more = (np.array([n_items + 5, 3]), np.array([0, 9]), np.array([1, 2]))
    np.testing.assert_array_equal(back.update(*more).table().codes,
                                  acc.update(*more).table().codes)
    # the first batch spans nearly every id; later ones widen the range a little at
    # both ends, which the map's room takes without a copy, and the id buffer, sized
    # by the map at once, does not grow either
    assert acc._items._low == 0 and acc._items._top == n_items + 5
    first = fk.AgreementAccumulator()
    inner = (item >= 10) & (item < n_items - 10)
    first.update(item[inner][:20_000], rater[inner][:20_000], label[inner][:20_000])
    dmap, ids = first._items._dmap, first._items._ids_buf
    assert len(dmap) >= 1.2 * (n_items - 20) and len(ids) == len(dmap)
    first.update(np.array([0, n_items - 1]), np.array([0, 0]), np.array([1, 1]))
    assert first._items._dmap is dmap and first._items._ids_buf is ids
    # the items x raters table follows the items seen, not the id range
    assert len(first._codes) <= 2 * first.n_items
    # a pickle and a copy hold the rated part of the table, not its room
    assert len(pickle.loads(pickle.dumps(first))._codes) == first.n_items
    assert len(copy.deepcopy(first)._codes) == first.n_items
    # growing ids (files in item order) double the map: the range, not the capacity,
    # decides whether it stays direct
    idx = _IdIndex()
    for lo in range(0, 1 << 21, 1 << 17):
        idx.row_codes(np.arange(lo, lo + (1 << 17)), "item")
    assert idx._dmap is not None and len(idx) == 1 << 21
    assert len(idx._dmap) <= 1 << 23  # doubling: at most 4 x the ids


@pytest.mark.parametrize("declared", [False, True])
def test_a_pair_seen_with_a_missing_label_is_a_duplicate_across_chunks(declared):
    """As for the one-shot functions (and within one chunk): a rater's second row for
    an item is a duplicate even when the first one's label was missing, in a later
    chunk and through merge; the missing label itself is no rating."""
    item, rater = np.repeat([1, 2, 3, 4], 2), np.tile([0, 1], 4)
    label = np.array([0.0, np.nan, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="more than once"):
        fk.agreement(item=np.r_[item, 1], rater=np.r_[rater, 1], label=np.r_[label, 0.0])
    opts = {"n_classes": 2} if declared else {}
    acc = fk.AgreementAccumulator(**opts).update(item, rater, label)
    assert acc.n_ratings == 7
    with pytest.raises(ValueError, match="more than once"):
        acc.update(np.array([1]), np.array([1]), np.array([0.0]))
    assert acc.n_ratings == 7
    other = fk.AgreementAccumulator(**opts).update(np.array([1]), np.array([1]),
                                                  np.array([0.0]))
    with pytest.raises(ValueError, match="more than once"):
        copy.deepcopy(acc).merge(other)
    merged = fk.AgreementAccumulator(**opts).merge(acc)  # the marker travels with merge
    with pytest.raises(ValueError, match="more than once"):
        merged.merge(other)
    want = fk.agreement(item=item, rater=rater, label=label)
    for got in (acc, merged, pickle.loads(pickle.dumps(acc))):
        assert got.n_ratings == 7 and got.n_items == 4
        for a, b in zip(got.compute(), want, strict=True):
            assert a.estimate == pytest.approx(b.estimate, abs=1e-14, nan_ok=True)
    acc.update(np.array([5, 5]), np.array([0, 1]), np.array([1.0, 1.0]))
    assert acc.n_ratings == 9
    # an accumulator whose every label is missing merges its pairs, no class
    blank = fk.AgreementAccumulator(**opts).update(np.array([6]), np.array([0]),
                                                  np.array([np.nan]))
    acc.merge(blank)
    assert acc.n_items == 6 and acc.n_ratings == 9
    with pytest.raises(ValueError, match="more than once"):
        acc.update(np.array([6]), np.array([0]), np.array([1.0]))


def test_sparse_item_ids_keep_the_table_small():
    """Two items at the ends of a 1e7-wide id range, raters arriving one at a time:
    the table holds a row per item, not per id of the range (it used to follow the
    id map's capacity, 1.5 GB here), and running out of memory for it leaves the
    accumulator as it was."""
    acc = fk.AgreementAccumulator()
    for r in range(65):
        acc.update(np.array([0, 9_999_999]), np.array([r, r]), np.array([r % 3, 1]))
    assert acc.n_items == 2 and acc.n_raters == 65 and acc.n_ratings == 130
    assert acc._codes.shape[0] <= 16 and acc._codes.nbytes < 1 << 16
    want = fk.agreement(item=np.tile([0, 9_999_999], 65), rater=np.repeat(np.arange(65), 2),
                        label=np.column_stack([np.arange(65) % 3, np.ones(65, int)]).ravel())
    for a, b in zip(acc.compute(), want, strict=True):
        assert a.estimate == pytest.approx(b.estimate, abs=1e-14, nan_ok=True)


def test_a_failed_allocation_leaves_the_state_unchanged(monkeypatch):
    acc = fk.AgreementAccumulator().update(np.array([0, 1]), np.array([0, 0]), np.array([1, 1]))
    before = acc.table().codes.copy()

    def no_memory(*args, **kwargs):
        raise MemoryError("no memory for the table")

    monkeypatch.setattr(acc, "_grow", no_memory)
    with pytest.raises(MemoryError):
        acc.update(np.array([2, 3]), np.array([5, 6]), np.array([0, 1]))
    monkeypatch.undo()
    assert (acc.n_items, acc.n_raters, acc.n_ratings) == (2, 1, 2)
    np.testing.assert_array_equal(acc.table().codes, before)
    acc.update(np.array([2, 3]), np.array([5, 6]), np.array([0, 1]))
    assert (acc.n_items, acc.n_raters, acc.n_ratings) == (4, 3, 4)


def test_duplicates_in_integer_arrays_leave_the_state_unchanged():
    acc = fk.AgreementAccumulator()
    acc.update(np.array([1, 1, 2]), np.array([0, 1, 0]), np.array([0.0, 1.0, np.nan]))
    assert acc.n_ratings == 2
    before = acc.table().codes.copy()
    for item, rater, label in [
        ([3, 4, 1], [0, 0, 1], [1.0, 1.0, 0.0]),        # rated before
        ([5, 5], [0, 0], [1.0, 0.0]),                   # twice in the batch
        ([6, 6], [1, 1], [np.nan, 0.0]),                # twice, the first one missing
    ]:
        with pytest.raises(ValueError, match="more than once"):
            acc.update(np.array(item), np.array(rater), np.array(label))
        assert acc.n_items == 2 and acc.n_ratings == 2
        np.testing.assert_array_equal(acc.table().codes, before)
    acc.update(np.array([8, 8]), np.array([0, 1]), np.array([1.0, 1.0]))
    assert acc.n_items == 3 and acc.n_ratings == 4


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_items=st.integers(1, 60),
       n_raters=st.integers(2, 6), spread=st.sampled_from([1, 3, 1000, 10**9]),
       shift=st.integers(-1000, 1000), dtype=st.sampled_from(["int8", "int16", "int32",
                                                              "int64", "uint16"]),
       n_cuts=st.integers(0, 5))
def test_integer_array_chunks_build_the_table_the_list_path_builds(
        seed, n_items, n_raters, spread, shift, dtype, n_cuts):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    ids = np.unique(rng.integers(0, n_items * spread, n_items) + shift)
    ids = ids[(ids >= info.min) & (ids <= info.max)]
    if len(ids) == 0:
        ids = np.array([max(info.min, 0)])
    item = np.repeat(ids, n_raters)
    rater = np.tile(np.arange(n_raters), len(ids))
    keep = rng.random(len(item)) < 0.8
    keep[0] = True
    order = rng.permutation(np.flatnonzero(keep))
    item, rater = item[order].astype(dtype), rater[order]
    label = rng.integers(0, 4, len(item))
    cuts = np.sort(rng.integers(0, len(item) + 1, n_cuts))
    fast, slow = fk.AgreementAccumulator(), fk.AgreementAccumulator()
    for lo, hi in itertools.pairwise([0, *cuts, len(item)]):
        if hi > lo:
            fast.update(item[lo:hi], rater[lo:hi], label[lo:hi])
            slow.update(item[lo:hi].tolist(), rater[lo:hi].tolist(), label[lo:hi].tolist())
    # the same ids and each (item, rater) cell (a direct map numbers ids in order of
    # first appearance, the list path per batch in ascending order)
    tables = []
    for acc in (fast, slow):
        items, raters = np.asarray(acc._items.ids()), np.asarray(acc._raters.ids())
        tables.append((np.sort(items), np.sort(raters),
                       acc.table().codes[np.argsort(items)][:, np.argsort(raters)]))
    for a, b in zip(*tables, strict=True):
        np.testing.assert_array_equal(a, b)
    assert fast.n_ratings == slow.n_ratings == len(item)


def test_the_table_widens_from_int8_when_the_classes_outgrow_it(rng):
    """Cells hold class code + 1 in int8 while 126 classes fit; the 127th class (in a
    later chunk, or a merge) widens the table to int32, and nothing changes."""
    n = 600
    item = np.repeat(np.arange(n), 3)
    rater = np.tile(np.arange(3), n)
    label = rng.integers(0, 5, len(item))
    label[-900:] = rng.integers(0, 200, 900)  # the last chunks bring many classes
    acc = fk.AgreementAccumulator()
    acc.update(item[:900], rater[:900], label[:900])
    assert acc._codes.dtype == np.int8
    acc.update(item[900:], rater[900:], label[900:])
    assert acc._codes.dtype == np.int32 and len(acc._values) > 126
    assert_same(acc.compute(), fk.agreement(item=item, rater=rater, label=label))
    small = fk.AgreementAccumulator().update(item[:900], rater[:900], label[:900])
    big = fk.AgreementAccumulator().update(item[900:], rater[900:], label[900:])
    assert small._codes.dtype == np.int8
    assert_same(small.merge(big).compute(), acc.compute())
    assert small._codes.dtype == np.int32
    declared = fk.AgreementAccumulator(n_classes=200).update(item, rater, label)
    assert declared._codes.dtype == np.int32
    assert_same(declared.compute(), fk.agreement(item=item, rater=rater, label=label,
                                                 n_classes=200))


@pytest.mark.parametrize("chunk", [180, 50, 7])
def test_rater_order_and_so_seeded_intervals_equal_one_shot(chunk):
    """Rater codes follow the ids (per chunk, in ascending order), whatever order the
    raters first appear in: their order orders the rating-row types a bootstrap draws
    (Conger's kappa), so the accumulator's intervals equal the one-shot ones for a
    seed.  Item codes follow first appearance, which changes no number."""
    item = np.repeat(np.arange(60), 3)
    rater = np.tile([2, 0, 1], 60)
    label = np.random.default_rng(0).integers(0, 3, (60, 3)).ravel()
    kw = dict(coefficients=["fleiss_kappa", "conger_kappa"], method="percentile",
              n_resamples=200, seed=1)
    want = fk.agreement(item=item, rater=rater, label=label, **kw)
    acc = fk.AgreementAccumulator()
    for lo in range(0, len(item), chunk):
        acc.update(item[lo:lo + chunk], rater[lo:lo + chunk], label[lo:lo + chunk])
    assert acc._raters.ids() == [0, 1, 2] and acc._raters._dmap is not None
    got = acc.compute(**kw)
    assert [(r.low, r.high) for r in got] == [(r.low, r.high) for r in want]
    # new raters of a later chunk come after the known ones, in ascending order
    acc.update([0, 0, 1], [9, 5, 7], [0, 1, 2])
    assert acc._raters.ids() == [0, 1, 2, 5, 7, 9]


@pytest.mark.parametrize("first", [1, 2, 5])
def test_raters_first_seen_in_a_later_chunk_give_the_one_shot_intervals(first):
    # a first chunk without every rater numbered the later ones after it (r2, r0, r1):
    # Conger's rating-row types, and so every seeded interval of a joint bootstrap,
    # differed from one call's; the table is built in rater id order now
    rng = np.random.default_rng(9)
    item = np.repeat(np.arange(120), 3)
    rater = np.array([f"r{r}" for r in np.tile([2, 0, 1], 120)], dtype=object)
    label = rng.integers(0, 3, 360)
    shuffle = rng.permutation(360)
    shuffle = shuffle[np.argsort(rater[shuffle] != "r2", kind="stable")]  # r2's rows first
    item, rater, label = item[shuffle], rater[shuffle], label[shuffle]
    for coefficients in ("conger_kappa", None):
        kw = dict(coefficients=coefficients, method="percentile", n_resamples=200, seed=1)
        want = fk.agreement(item=item, rater=rater, label=label, **kw)
        acc = fk.AgreementAccumulator()
        acc.update(item[:first], rater[:first], label[:first])
        acc.update(item[first:], rater[first:], label[first:])
        got = acc.compute(**kw)
        assert [(r.coefficient, r.low, r.high) for r in got] == [
            (r.coefficient, r.low, r.high) for r in want]
        assert acc.table().raters == ["r0", "r1", "r2"]


def test_an_index_pickled_before_the_id_buffer_loads():
    """Accumulators pickled by the earlier layout (the ids in ``_by_code``) load, and
    go on numbering new ids as they did (each batch's in ascending order)."""
    from fastkappa.agreement_stream import _IdIndex

    idx = _IdIndex()
    idx.row_codes(np.array([30, 10, 20]), "item")
    state = idx.__getstate__()
    state["_by_code"] = state.pop("_ids_buf")
    del state["_n_ids"], state["_ascending"]
    old = _IdIndex.__new__(_IdIndex)
    old.__setstate__(state)
    assert old.ids() == [30, 10, 20] and len(old) == 3
    assert old.row_codes(np.array([25, 5, 10]), "item").tolist() == [4, 3, 1]


@pytest.mark.parametrize("kind", ["int", "str"])
def test_the_missing_marker_is_no_class(kind):
    """``missing=`` marks a missing rating: it is no class of the result, and every
    coefficient equals the one-shot value (the marker used to become a class, which
    moved Gwet's AC1 and Brennan-Prediger), in chunks and through a merge."""
    rng = np.random.default_rng(1)
    ii, rr = np.nonzero(np.ones((200, 3), bool))
    lab = rng.integers(0, 3, len(ii))
    gone = rng.random(len(ii)) < 0.2
    if kind == "int":
        lab[gone], marker = -1, -1
    else:
        lab = np.array(["abc"[v] for v in lab], dtype=object)
        lab[gone], marker = "NA", "NA"
    want = fk.agreement(item=ii, rater=rr, label=lab, missing=marker)
    acc = fk.AgreementAccumulator(missing=marker)
    for lo in range(0, len(ii), 170):
        acc.update(ii[lo:lo + 170], rr[lo:lo + 170], lab[lo:lo + 170])
    got = acc.compute()
    assert list(got.classes) == list(want.classes) and marker not in list(got.classes)
    assert acc.n_ratings == int((~gone).sum())
    assert_same(got, want)
    a = fk.AgreementAccumulator(missing=marker).update(ii[:300], rr[:300], lab[:300])
    b = fk.AgreementAccumulator(missing=marker).update(ii[300:], rr[300:], lab[300:])
    assert_same(a.merge(b).compute(), want)


def test_uint64_ids_past_int64_keep_their_value():
    """uint64 ids of 2**63 or more came back as negative ids (and missed a
    ``clusters`` mapping keyed by the real ids)."""
    big = np.uint64(2**63)
    item = np.repeat(np.array([0, 1, 2], dtype=np.uint64) + big, 2)
    rater = np.tile(np.array([5, 7], dtype=np.uint64) + big, 3)
    label = np.array([1, 1, 0, 1, 2, 2])
    want = fk.agreement(item=item.astype(str), rater=rater.astype(str), label=label)
    acc = fk.AgreementAccumulator().update(item, rater, label)
    assert acc._items.ids() == [2**63, 2**63 + 1, 2**63 + 2]
    assert acc.table().raters == [2**63 + 5, 2**63 + 7]
    assert_same(acc.compute(), want)
    assert_same(fk.agreement(item=item, rater=rater, label=label), want)
    with pytest.warns(DegenerateIntervalWarning, match="only 2 clusters"):
        got = acc.compute(clusters={2**63: "a", 2**63 + 1: "a", 2**63 + 2: "b"})
    assert got.n_clusters == 2
    acc.update(np.array([9, 9]), np.array([1, 2]), np.array([0, 0]))  # small ids join
    # the table lists the raters in id order, as one call does
    assert acc.n_items == 4 and acc.table().raters == [1, 2, 2**63 + 5, 2**63 + 7]


def test_integer_and_string_ids_in_one_list_stay_two_ids():
    """``0`` and ``"0"`` are two raters within a chunk as across chunks (a list mixing
    them went through np.asarray, which turned 0 into "0": one rater, reported as a
    duplicate, and integer ids came back as strings)."""
    item = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    rater = [0, "0"] * 5
    label = [1, 1, 0, 1, 2, 2, 0, 0, 2, 1]
    res = fk.agreement(item=item, rater=rater, label=label)
    assert res.n_raters == 2
    acc = fk.AgreementAccumulator().update(item, rater, label)
    assert acc.table().raters == [0, "0"]
    assert_same(acc.compute(), res)
    split = fk.AgreementAccumulator().update(item[::2], rater[::2], label[::2])
    split.update(item[1::2], rater[1::2], label[1::2])
    assert_same(split.compute(), res)
    assert fk.agreement(item=[1, "1", *item[2:]], rater=[0, 1] * 5,
                        label=label).n_items == 6


def test_list_of_huge_and_negative_integer_ids_keeps_every_id():
    """np.asarray makes [2**64 - 1, 2**64 - 2, -1] float64, which merged the first two."""
    item = [2**63, 2**63, 2**63 + 1, 2**63 + 1, -1, -1, 2**64 - 1, 2**64 - 1]
    rater = ["a", "b"] * 4
    label = [0, 0, 1, 1, 0, 1, 2, 2]
    want = fk.agreement(item=[str(v) for v in item], rater=rater, label=label)
    got = fk.agreement(item=item, rater=rater, label=label)
    assert got.n_items == want.n_items == 4
    assert_same(got, want)
    acc = fk.AgreementAccumulator().update(item, rater, label)
    assert sorted(acc._items.ids()) == [-1, 2**63, 2**63 + 1, 2**64 - 1]
    assert_same(acc.compute(), want)


@pytest.mark.parametrize("dtype", [np.int8, np.int16])
def test_small_integer_ids_spanning_past_their_type_are_numbered(dtype):
    """int8/int16 ids from the type's minimum to its maximum: their offsets are taken in
    int64 (they wrapped around, and the ids were rejected as negative counts)."""
    info = np.iinfo(dtype)
    ids = np.array([info.min, -1, 0, info.max], dtype=dtype)
    item = np.repeat(ids, 3)
    rater = np.tile([0, 1, 2], len(ids))
    label = np.array([0, 0, 1, 1, 1, 1, 0, 1, 0, 2, 2, 2])
    want = fk.agreement(item=item.astype(np.int64), rater=rater, label=label,
                        coefficients="fleiss_kappa")
    got = fk.agreement(item=item, rater=rater, label=label, coefficients="fleiss_kappa")
    assert got.n_items == want.n_items == 4
    assert got["fleiss_kappa"].estimate == pytest.approx(want["fleiss_kappa"].estimate)
    acc = fk.AgreementAccumulator().update(["x"], [0], [0])  # string ids: the dict path
    acc.update(item, rater, label)
    assert acc.n_items == 5 and sorted(acc._items.ids()[1:]) == [int(v) for v in ids]


@pytest.mark.parametrize("categories, values", [
    ([0, 2, 1], [0, 1, 1, 2, 2, 1, 0, 0, 0, 1, 2, 2, 0, 1]),            # numbers, not sorted
    (["low", "mid", "high"], ["low", "mid", "mid", "high", "high", "mid", "low", "low",
                              "low", "mid", "high", "high", "low", "mid"]),  # strings
    ([3, 1, 2, 7], [3, 1, 1, 2, 2, 1, 3, 3, 3, 1, 2, 2, 3, 1]),          # an unused class
])
def test_ordered_categorical_declares_the_scale_in_chunks_merges_and_pickles(categories,
                                                                                 values):
    """An ordered Categorical declares its classes and their order, as in one call:
    weighted coefficients and ordinal alpha equal the one-shot values (which equal
    `labels=` in that order) through chunks, merges, pickles and Dask."""
    item = [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5]
    rater = ["a", "b", "c"] * 4 + ["a", "b"]
    lab = pd.Series(values).astype(pd.CategoricalDtype(categories, ordered=True))
    names = ["fleiss_kappa", "gwet_ac", "krippendorff_alpha"]
    want = fk.agreement(item=item, rater=rater, label=np.asarray(values, dtype=object),
                        labels=categories, weights="linear", coefficients=names)
    one = fk.agreement(item=item, rater=rater, label=lab, weights="linear",
                       coefficients=names)
    a, b = fk.AgreementAccumulator(), fk.AgreementAccumulator()
    a.update(item[:6], rater[:6], lab[:6])
    b.update(item[6:], rater[6:], lab[6:].reset_index(drop=True))
    got = [a + b, pickle.loads(pickle.dumps(a + b)),
           fk.AgreementAccumulator().update(item, rater, lab)]
    for res in [one] + [acc.compute(weights="linear", coefficients=names) for acc in got]:
        for name in names:
            assert res[name].estimate == pytest.approx(want[name].estimate, abs=1e-12)
    ordinal = fk.krippendorff_alpha(item=item, rater=rater, label=lab, level="ordinal")
    assert got[0].compute(level="ordinal", coefficients="krippendorff_alpha")[
        "krippendorff_alpha"].estimate == pytest.approx(ordinal, abs=1e-12)
    assert got[0].table().classes.tolist() == categories
    dd = pytest.importorskip("dask.dataframe")
    from fastkappa import dask as fkd

    d = dd.from_pandas(pd.DataFrame({"item": item, "rater": rater, "g": lab}), npartitions=3)
    res = fkd.agreement(d.item, d.rater, d.g, weights="linear", coefficients=names)
    for name in names:
        assert res[name].estimate == pytest.approx(want[name].estimate, abs=1e-12)


def test_chunks_declaring_other_scales_or_labels_outside_it_are_refused():
    acc = fk.AgreementAccumulator().update(
        [1, 1], ["a", "b"], pd.Categorical(["lo", "hi"], categories=["lo", "hi"], ordered=True))
    with pytest.raises(ValueError, match=r"declare the classes \['hi', 'lo'\]"):
        acc.update([2, 2], ["a", "b"],
                   pd.Categorical(["lo", "hi"], categories=["hi", "lo"], ordered=True))
    assert acc.n_items == 1  # the refused chunk left nothing
    with pytest.raises(ValueError, match="declare the classes"):
        acc.merge(fk.AgreementAccumulator().update(
            [3], ["a"], pd.Categorical(["x"], categories=["x"], ordered=True)))
    acc.update([4, 4], ["a", "b"], ["lo", "mid"])
    with pytest.raises(ValueError, match=r"\['mid'\] are not among the classes"):
        acc.compute()
    acc.reset()  # the declared scale came from the data: reset forgets it
    acc.update([1, 1], ["a", "b"], ["mid", "top"])
    assert acc.table().classes.tolist() == ["mid", "top"]


def test_an_ordered_categorical_listing_the_missing_marker_keeps_it_out():
    """The `missing` marker is no class even when an ordered Categorical lists it:
    one call and the accumulator agree with the ratings without the marker."""
    rng = np.random.default_rng(2)
    item = np.repeat(np.arange(30), 3)
    rater = np.tile(["a", "b", "c"], 30)
    lab = rng.choice([0, 2, -1, 1], 90, p=[0.3, 0.3, 0.1, 0.3])
    cat = pd.Categorical(lab, categories=[0, 2, -1, 1], ordered=True)
    names = ["gwet_ac", "brennan_prediger", "fleiss_kappa"]
    keep = lab != -1
    want = fk.agreement(item=item[keep], rater=rater[keep], label=lab[keep],
                        labels=[0, 2, 1], weights="linear", coefficients=names)
    one = fk.agreement(item=item, rater=rater, label=cat, missing=-1, weights="linear",
                       coefficients=names)
    acc = fk.AgreementAccumulator(missing=-1).update(item, rater, cat)
    streamed = acc.compute(weights="linear", coefficients=names)
    for res in (one, streamed):
        assert res.classes.tolist() == [0, 2, 1]
        for name in names:
            assert res[name].estimate == pytest.approx(want[name].estimate, abs=1e-12)


def test_mixed_rater_ids_give_the_one_shot_intervals():
    # numbers before strings, as one call sorts them (mixed ids did not sort, and kept
    # the arrival order)
    rng = np.random.default_rng(3)
    item = np.repeat(np.arange(120), 3)
    rater = np.array([1, "a", 2] * 120, dtype=object)
    label = rng.integers(0, 3, 360)
    kw = dict(method="percentile", n_resamples=300, seed=0)
    want = fk.agreement(item=item, rater=rater, label=label, coefficients="conger_kappa", **kw)
    acc = fk.AgreementAccumulator()
    acc.update(item[1:3], rater[1:3], label[1:3])  # "a" and 2 first
    acc.update(np.r_[item[:1], item[3:]], np.r_[rater[:1], rater[3:]],
               np.r_[label[:1], label[3:]])
    assert acc.table().raters == [1, 2, "a"]
    got = acc.compute(coefficients="conger_kappa", **kw)
    assert (got["conger_kappa"].low, got["conger_kappa"].high) == (
        want["conger_kappa"].low, want["conger_kappa"].high)


def test_cluster_intervals_do_not_depend_on_the_order_items_arrive():
    # a cluster's items were summed in arrival order, even within one chunk: the
    # same rows shuffled gave another seeded interval; items go in id order now
    rng = np.random.default_rng(0)
    item = np.repeat(np.arange(120), 3)
    rater = np.tile(["a", "b", "c"], 120)
    truth = np.repeat(rng.integers(0, 3, 120), 3)
    label = np.where(rng.random(360) < 0.6, truth, rng.integers(0, 3, 360))
    clusters = {i: i % 17 for i in range(120)}
    kw = dict(coefficients="fleiss_kappa", method="percentile", n_resamples=500, seed=0)
    with pytest.warns(DegenerateIntervalWarning, match="only 17 clusters"):
        want = fk.agreement(item=item, rater=rater, label=label, clusters=item % 17, **kw)
    shuffle = rng.permutation(360)
    acc = fk.AgreementAccumulator().update(item[shuffle], rater[shuffle], label[shuffle])
    with pytest.warns(DegenerateIntervalWarning, match="only 17 clusters"):
        got = acc.compute(clusters=clusters, **kw)
    assert (got["fleiss_kappa"].low, got["fleiss_kappa"].high) == (
        want["fleiss_kappa"].low, want["fleiss_kappa"].high)
