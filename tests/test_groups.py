"""kappa_by_group: one pass, every group on the global scale, against per-group calls."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastkappa as fk

pd = pytest.importorskip("pandas")


def _data(n=20_000, k=5, n_groups=30, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, k, n)
    p = np.clip(t + rng.integers(-1, 2, n), 0, k - 1)
    g = rng.integers(0, n_groups, n)
    return t, p, g


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_by_group_equals_per_group_cohen_kappa(weights):
    t, p, g = _data()
    res = fk.kappa_by_group(t, p, g, weights=weights)
    assert list(res.groups) == sorted(set(g.tolist()))
    for i, key in enumerate(res.groups):
        m = g == key
        expected = fk.cohen_kappa(t[m], p[m], weights=weights, labels=res.classes)
        assert res.estimate[i] == pytest.approx(expected, abs=1e-12)
        assert res.n_rows[i] == m.sum()
        np.testing.assert_array_equal(res.confusion[i],
                                      fk.confusion_matrix(t[m], p[m], labels=res.classes))
    assert res.overall == pytest.approx(fk.cohen_kappa(t, p, weights=weights), abs=1e-12)


def test_kappa_by_group_uses_global_scale_for_groups_missing_a_grade():
    # group "b" never uses grade 2: it must still be weighted on the 0..3 scale
    t = np.array([0, 1, 2, 3, 0, 1, 3, 3, 0])
    p = np.array([0, 1, 2, 2, 0, 3, 3, 1, 1])
    g = np.array(["a", "a", "a", "a", "b", "b", "b", "b", "b"])
    res = fk.kappa_by_group(t, p, g, weights="quadratic")
    m = g == "b"
    assert res["b"].estimate == pytest.approx(
        fk.cohen_kappa(t[m], p[m], weights="quadratic", labels=[0, 1, 2, 3]), abs=1e-12)
    assert res["b"].estimate != pytest.approx(fk.cohen_kappa(t[m], p[m], weights="quadratic"))


def test_kappa_by_group_inferred_classes_with_gaps():
    rng = np.random.default_rng(3)
    t = rng.choice([0, 2, 4, 8], 5000)
    p = rng.choice([0, 2, 4, 8], 5000)
    g = rng.integers(0, 7, 5000)
    res = fk.kappa_by_group(t, p, g, weights="linear")
    np.testing.assert_array_equal(res.classes, [0, 2, 4, 8])
    for key in res.groups:
        m = g == key
        assert res[key].estimate == pytest.approx(
            fk.cohen_kappa(t[m], p[m], weights="linear", labels=[0, 2, 4, 8]), abs=1e-12)


def test_kappa_by_group_string_and_float_group_ids():
    t, p, g = _data(n=3000, n_groups=4)
    names = np.array(["site-d", "site-a", "site-c", "site-b"], dtype=object)[g]
    res = fk.kappa_by_group(t, p, names)
    assert list(res.groups) == ["site-a", "site-b", "site-c", "site-d"]
    for key in res.groups:
        m = names == key
        assert res[key].estimate == pytest.approx(fk.cohen_kappa(t[m], p[m], labels=res.classes))
    resf = fk.kappa_by_group(t, p, g.astype(float) + 0.5)
    np.testing.assert_allclose(resf.estimate, fk.kappa_by_group(t, p, g).estimate)


def test_kappa_by_group_sample_weight():
    t, p, g = _data(n=5000, n_groups=5)
    w = np.random.default_rng(1).random(5000)
    res = fk.kappa_by_group(t, p, g, sample_weight=w, weights="quadratic")
    for key in res.groups:
        m = g == key
        assert res[key].estimate == pytest.approx(
            fk.cohen_kappa(t[m], p[m], sample_weight=w[m], weights="quadratic",
                           labels=res.classes), abs=1e-12)
        assert res[key].n_rows == pytest.approx(w[m].sum())


def test_kappa_by_group_undefined_group_is_nan_with_warning():
    t = np.array([0, 0, 0, 1, 0, 1])
    p = np.array([0, 0, 0, 1, 1, 1])
    g = np.array([1, 1, 1, 2, 2, 2])
    with pytest.warns(fk.UndefinedKappaWarning, match="1 of 2 groups"):
        res = fk.kappa_by_group(t, p, g)
    assert np.isnan(res[1].estimate)
    assert np.isfinite(res[2].estimate)
    assert json.loads(json.dumps(res.to_dict()))["groups"][0]["estimate"] is None


def test_kappa_by_group_missing_group_ids():
    t = np.array([0, 1, 0, 1, 1, 0])
    p = np.array([0, 1, 1, 1, 0, 0])
    g = pd.Series(["a", None, "a", "b", "b", "b"])
    with pytest.raises(ValueError, match="`groups` is missing"):
        fk.kappa_by_group(t, p, g)
    res = fk.kappa_by_group(t, p, g, nan_policy="omit")
    keep = g.notna().to_numpy()
    assert res.overall == pytest.approx(fk.cohen_kappa(t[keep], p[keep]))
    assert res["a"].n_rows + res["b"].n_rows == keep.sum()


def test_kappa_by_group_validates_like_cohen_kappa():
    with pytest.raises(ValueError, match="one id per row"):
        fk.kappa_by_group([0, 1], [0, 1], [1, 2, 3])
    with pytest.raises(ValueError, match="outside the declared classes"):
        fk.kappa_by_group([0, 1, 7], [0, 1, 1], [1, 1, 2], n_classes=2)
    with pytest.raises(ValueError, match="`method` must be 'percentile', 'basic'"):
        fk.kappa_by_group([0, 1], [0, 1], [1, 1], method="wald")


def test_kappa_by_group_ignore_index_drops_rows_in_groups():
    t = np.array([0, 1, -1, 1, 0, 1])
    p = np.array([0, 1, 1, -1, 0, 0])
    g = np.array([1, 1, 1, 2, 2, 2])
    res = fk.kappa_by_group(t, p, g, ignore_index=-1)
    assert res.n_rows.tolist() == [2, 2]
    assert res[2].estimate == pytest.approx(fk.cohen_kappa([0, 1], [0, 0], labels=[0, 1]))


def test_kappa_by_group_intervals_match_per_group_kappa_ci():
    t, p, g = _data(n=4000, n_groups=3)
    res = fk.kappa_by_group(t, p, g, method="percentile", n_resamples=500, seed=7)
    seeds = np.random.SeedSequence(7).spawn(3)
    for i in range(len(res)):
        ci = fk.kappa_ci_from_confusion(res.confusion[i], method="percentile",
                                        n_resamples=500, seed=seeds[i])
        assert (res.low[i], res.high[i]) == (ci.low, ci.high)
        assert res.low[i] < res.estimate[i] < res.high[i]
    asym = fk.kappa_by_group(t, p, g, method="asymptotic")
    for i in range(3):
        ci = fk.kappa_ci_from_confusion(res.confusion[i], method="asymptotic")
        assert asym.low[i] == pytest.approx(ci.low)


def test_kappa_by_group_output_forms():
    t, p, g = _data(n=600, n_groups=3)
    res = fk.kappa_by_group(t, p, g, weights="quadratic")
    df = res.to_dataframe()
    assert list(df.columns) == ["group", "n_rows", "estimate"]
    np.testing.assert_allclose(df["estimate"].to_numpy(), res.estimate)
    text = str(res)
    assert "quadratic-weighted kappa (QWK) by group (3 groups)" in text
    assert f"{res.estimate[0]:.4f}" in text
    assert "<table>" in res._repr_html_()
    assert len(list(res)) == 3
    with pytest.raises(KeyError):
        res[99]


@settings(deadline=None, max_examples=40)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.sampled_from("xyz")),
                min_size=1, max_size=60))
def test_kappa_by_group_property_tables_add_up(rows):
    t = np.array([r[0] for r in rows])
    p = np.array([r[1] for r in rows])
    g = np.array([r[2] for r in rows], dtype=object)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fk.UndefinedKappaWarning)
        res = fk.kappa_by_group(t, p, g, n_classes=4)
    np.testing.assert_array_equal(res.confusion.sum(axis=0),
                                  fk.confusion_matrix(t, p, n_classes=4))
    for key in res.groups:
        m = g == key
        np.testing.assert_array_equal(res[key].n_rows, m.sum())


def test_kappa_by_group_integer_ids_with_gaps_and_weighted_intervals():
    rng = np.random.default_rng(17)
    n = 900
    t = rng.integers(0, 3, n)
    p = np.where(rng.random(n) < 0.7, t, rng.integers(0, 3, n))
    g = rng.choice([-4, 5, 9, 200], n)  # a range with many ids that never occur
    w = rng.random(n) + 0.5
    res = fk.kappa_by_group(t, p, g, sample_weight=w, method="percentile", n_resamples=300,
                            seed=3)
    assert list(res.groups) == [-4, 5, 9, 200]
    for key in res.groups:
        m = g == key
        assert res[key].estimate == pytest.approx(
            fk.cohen_kappa(t[m], p[m], sample_weight=w[m], labels=res.classes), abs=1e-12)
        assert res[key].n_rows == pytest.approx(w[m].sum())
        assert res[key].low < res[key].estimate < res[key].high


@pytest.mark.filterwarnings("ignore::fastkappa.UndefinedKappaWarning")  # one-row groups
@pytest.mark.parametrize("case", ["sorted", "outlier_near", "outlier_far", "negative",
                                  "weighted_outlier"])
def test_kappa_by_group_integer_ids_outside_the_sampled_range(case):
    """Integer ids' range is first guessed from a sample: a row outside it must
    still be counted in its own group (the ids are counted again)."""
    from fastkappa.groups import GUESS_SAMPLE

    rng = np.random.default_rng(5)
    n = 20 * GUESS_SAMPLE
    t = rng.integers(0, 4, n)
    p = np.where(rng.random(n) < 0.6, t, rng.integers(0, 4, n))
    g = rng.integers(0, 40, n)
    w = None
    if case == "sorted":
        g = np.sort(g)
    elif case == "outlier_near":
        g[1] = 57  # row 1 is never in the evenly spaced sample
    elif case == "outlier_far":
        g[1] = 10**9  # outside even the one-slot-per-id range
    elif case == "negative":
        g = g - 100
        g[3] = -1000
    else:
        g[1] = -7
        w = rng.random(n) + 0.5
    res = fk.kappa_by_group(t, p, g, sample_weight=w)
    assert list(res.groups) == sorted(set(g.tolist()))
    for key in res.groups:
        m = g == key
        if m.sum() == 1:
            continue  # a single row: kappa undefined
        expected = fk.cohen_kappa(t[m], p[m], labels=res.classes,
                                  sample_weight=None if w is None else w[m])
        assert res[key].estimate == pytest.approx(expected, abs=1e-12)
    np.testing.assert_array_equal(res.confusion.sum(axis=0).round(9),
                                  fk.confusion_matrix(t, p, sample_weight=w).round(9))


def test_quiet_undefined_is_per_thread():
    """Dask partitions score groups on several threads at once and leave out the
    warning about undefined groups: a thread-local switch, so that another
    thread's call still warns (``warnings.catch_warnings`` is process-wide and
    let partitions' warnings escape, or silenced other threads)."""
    import threading
    import warnings

    from fastkappa.exceptions import UndefinedKappaWarning
    from fastkappa.groups import quiet_undefined

    t, p, g = [0, 0, 1, 0, 1, 1], [0, 0, 1, 1, 0, 1], [0, 0, 1, 1, 1, 1]
    inside, release = threading.Event(), threading.Event()
    seen = []

    def partition():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with quiet_undefined():
                inside.set()
                release.wait(10)
                res = fk.kappa_by_group(t, p, g)
        seen.append((res, [w.category for w in caught]))

    worker = threading.Thread(target=partition)
    worker.start()
    assert inside.wait(10)
    try:
        with pytest.warns(UndefinedKappaWarning, match="1 of 2 groups"):
            here = fk.kappa_by_group(t, p, g)  # this thread is not quiet
    finally:
        release.set()
        worker.join(10)
    (res, categories), = seen
    assert UndefinedKappaWarning not in categories
    # the same numbers, the undefined group replaced as usual
    np.testing.assert_array_equal(res.estimate, here.estimate)
    assert np.isnan(res.estimate[0]) and not np.isnan(res.estimate[1])


@pytest.mark.parametrize("weights", [None, "linear", "quadratic", "custom"])
def test_asymptotic_intervals_of_many_groups_match_one_group_each(weights):
    """The closed form over all groups at once equals kappa_ci_from_confusion per
    group, degenerate groups included: one row, perfect agreement (zero SE, a
    zero-width interval) and an undefined kappa (nan)."""
    import warnings

    rng = np.random.default_rng(3)
    t, p, g = _data(n=3000, k=4, n_groups=200, seed=3)
    g = g.copy()
    t, p = t.copy(), p.copy()
    p[g == 5] = t[g == 5]  # perfect agreement
    t[g == 6] = 2
    p[g == 6] = 2  # undefined: one class for both
    keep = (g != 7) | (np.arange(len(g)) == np.flatnonzero(g == 7)[0])  # one row
    t, p, g = t[keep], p[keep], g[keep]
    w = rng.random((4, 4)) if weights == "custom" else weights
    if weights == "custom":
        w = w + w.T
        np.fill_diagonal(w, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fk.kappa_by_group(t, p, g, weights=w, method="asymptotic")
        for i in range(len(res)):
            ci = fk.kappa_ci_from_confusion(res.confusion[i], weights=w, method="asymptotic")
            for got, want in ((res.low[i], ci.low), (res.high[i], ci.high)):
                assert (np.isnan(got) and np.isnan(want)) or got == pytest.approx(
                    want, abs=1e-13), (i, got, want)
    i5 = list(res.groups).index(5)
    assert res.low[i5] == res.high[i5] == pytest.approx(1.0)
    assert np.isnan(res.low[list(res.groups).index(6)])


@pytest.mark.parametrize("extra", ["clusters", "sample_weight"])
def test_group_intervals_with_rows_match_kappa_ci_on_each_group(extra):
    """With clusters or sample weights each group's rows go to kappa_ci (found by one
    sort, not one mask per group): the same intervals as calling it per group."""
    import warnings

    rng = np.random.default_rng(4)
    t, p, g = _data(n=3000, k=4, n_groups=6, seed=4)
    kw = ({"clusters": rng.integers(0, 400, len(t))} if extra == "clusters"
          else {"sample_weight": rng.gamma(2.0, 1.0, len(t))})
    res = fk.kappa_by_group(t, p, g, method="percentile", n_resamples=300, seed=11, **kw)
    seeds = np.random.SeedSequence(11).spawn(len(res))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, key in enumerate(res.groups):
            m = g == key
            ci = fk.kappa_ci(t[m], p[m], method="percentile", n_resamples=300, seed=seeds[i],
                             labels=res.classes, **{k: v[m] for k, v in kw.items()})
            assert (res.low[i], res.high[i]) == (ci.low, ci.high)


def test_asymptotic_group_with_zero_expected_disagreement_is_undefined():
    """A custom matrix where classes 0 and 1 agree: the expected disagreement is
    exactly 0, so kappa and its interval are nan (1 - pe came out 1e-16 and gave
    a finite interval from rounding noise)."""
    w = [[0, 0, 1], [0, 0, 1], [1, 1, 0]]
    with pytest.warns(fk.UndefinedKappaWarning):
        res = fk.kappa_by_group([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 1, 0], [7] * 6, weights=w,
                                labels=[0, 1, 2], method="asymptotic")
    assert np.isnan(res.estimate[0]) and np.isnan(res.low[0]) and np.isnan(res.high[0])


def test_boolean_group_ids_are_reported_as_booleans():
    # they were counted as 0/1 and reported so (groups, to_dict, to_dataframe)
    pa = pytest.importorskip("pyarrow")
    t, p = [0, 1, 1, 0, 1], [0, 1, 0, 0, 1]
    for ids in ([True, False, True, False, True], np.array([True, False, True, False, True]),
                pd.Series([True, False, True, False, None], dtype="boolean"),
                pa.array([True, False, True, False, None])):
        res = fk.kappa_by_group(t, p, ids, nan_policy="omit")
        assert res.groups.dtype == bool and res.groups.tolist() == [False, True]
        assert [g["group"] for g in res.to_dict()["groups"]] == [False, True]
    assert fk.kappa_by_group(t, p, np.array([1, 0, 1, 0, 1])).groups.tolist() == [0, 1]
    # rows repeated by their counts keep boolean ids too
    res = fk.kappa_by_group(t, p, [True, False, True, False, True],
                            frequency_weight=[1, 2, 1, 1, 1])
    assert res.groups.dtype == bool and res.groups.tolist() == [False, True]
