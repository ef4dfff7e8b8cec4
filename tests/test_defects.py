"""Classes of defects from the hostile-input audit (issue 11) and the drift bugs of
issue 12: each test would have caught its class, most over generated inputs.

Oracles: ``reference.reference_kappa`` (exact fractions on the rows that
should be kept), scikit-learn on the filtered rows, closed forms.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from naive import cluster_robust_se, confusion_dict, kappa_from_table, reference_kappa

import fastkappa as fk
from fastkappa.exceptions import DegenerateIntervalWarning, UndefinedKappaWarning

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pl = pytest.importorskip("polars")

ROOT = Path(__file__).resolve().parents[1]
B = 2**53
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _close(got, want) -> bool:
    if want is None:
        return math.isnan(got)
    return math.isclose(got, float(want), rel_tol=1e-12, abs_tol=1e-12)


# --------------------------------------------------------------------------- 1. big ints


def test_the_reported_big_integer_case():
    got = fk.cohen_kappa([B, B + 1, None, 1, B], [B + 1, B, None, 1, B + 1],
                         nan_policy="omit")
    from sklearn.metrics import cohen_kappa_score

    want = cohen_kappa_score([B, B + 1, 1, B], [B + 1, B, 1, B + 1])
    assert got == pytest.approx(want, rel=1e-12) and got == pytest.approx(-1 / 11)


_HUGE = st.sampled_from([B - 1, B, B + 1, B + 2, 2**62 + 1, 2**62, 2**63 - 1, 1, 0])
_HUGE_SIGNED = st.sampled_from([-(2**63), -B - 1, -B, B, B + 1, 2**62 + 3, 5])


def _as_container(values, kind):
    """``values`` (Python ints and None) in one of the containers users pass."""
    if kind == "list":
        return list(values)
    if kind == "object":
        return np.array(values, dtype=object)
    if kind in ("Int64", "UInt64"):
        return pd.Series(pd.array(values, dtype=kind))
    if kind == "Int64-array":
        return pd.array(values, dtype="Int64")
    if kind == "polars-Int64":
        return pl.Series(values, dtype=pl.Int64)
    if kind == "polars-UInt64":
        return pl.Series(values, dtype=pl.UInt64)
    if kind == "arrow-int64":
        return pa.array(values, type=pa.int64())
    if kind == "arrow-uint64":
        return pa.array(values, type=pa.uint64())
    if kind == "arrow-chunked":
        half = len(values) // 2
        return pa.chunked_array([pa.array(values[:half], type=pa.int64()),
                                 pa.array(values[half:], type=pa.int64())])
    if kind == "masked":
        data = [0 if v is None else v for v in values]
        return np.ma.array(np.array(data, dtype=np.int64), mask=[v is None for v in values])
    raise AssertionError(kind)


_SIGNED_KINDS = ["list", "object", "Int64", "Int64-array", "polars-Int64", "arrow-int64",
                 "arrow-chunked", "masked"]
_UNSIGNED_KINDS = ["UInt64", "polars-UInt64", "arrow-uint64"]


@st.composite
def _huge_pairs(draw):
    unsigned = draw(st.booleans())
    kind = draw(st.sampled_from(_UNSIGNED_KINDS if unsigned else _SIGNED_KINDS))
    pool = _HUGE if unsigned else _HUGE_SIGNED
    n = draw(st.integers(3, 25))
    t = [draw(pool) for _ in range(n)]
    p = [draw(pool) for _ in range(n)]
    missing = draw(st.lists(st.integers(0, n - 1), max_size=3))
    for i in missing:
        (t if i % 2 else p)[i] = None
    return kind, t, p


@SETTINGS
@given(_huge_pairs(), st.sampled_from([None, "linear", "quadratic"]), st.booleans())
def test_integers_beyond_2_53_are_never_merged(case, weights, declare):
    """No integer label passes through float64, whatever the container."""
    kind, t, p = case
    kept = [(a, b) for a, b in zip(t, p, strict=True) if a is not None and b is not None]
    if not kept:
        return
    classes = sorted({v for pair in kept for v in pair})
    labels = classes if declare else None
    want = reference_kappa([a for a, _ in kept], [b for _, b in kept], weights=weights,
                           labels=labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedKappaWarning)
        got = fk.cohen_kappa(_as_container(t, kind), _as_container(p, kind), weights=weights,
                             labels=labels, nan_policy="omit")
        cm = fk.confusion_matrix(_as_container(t, kind), _as_container(p, kind),
                                 labels=classes, nan_policy="omit")
    assert _close(got, want), (kind, t, p, got, want)
    np.testing.assert_array_equal(cm, confusion_dict(*zip(*kept, strict=True), classes))


def test_unsigned_labels_of_2_63_or_more_are_an_error_not_a_wrap():
    for x in (pd.Series(pd.array([2**63, None, 1], dtype="UInt64")),
              pa.array([2**63, None, 1], type=pa.uint64()),
              pl.Series([2**63, None, 1], dtype=pl.UInt64),
              np.ma.array(np.array([2**63, 0, 1], dtype=np.uint64), mask=[0, 1, 0])):
        with pytest.raises(ValueError, match=r"unsigned integers of 2\*\*63 or more"):
            fk.cohen_kappa(x, [1, 1, 1], nan_policy="omit")


# --------------------------------------------------------------------------- 2. order


_UNORDERED = [lambda v: set(v), lambda v: frozenset(v), lambda v: dict.fromkeys(v),
              lambda v: dict.fromkeys(v).keys(), lambda v: {x: x for x in v}.values(),
              lambda v: {x: x for x in v}.items()]


@pytest.mark.parametrize("make", _UNORDERED)
def test_unordered_labels_are_rejected(make):
    with pytest.raises(ValueError, match=r"`labels` is a .*no reliable order; pass a list"):
        fk.cohen_kappa([0, 1, 2], [0, 2, 1], labels=make([0, 1, 2]), weights="quadratic")
    with pytest.raises(ValueError, match=r"`labels` is a .*pass a list"):
        fk.CohenKappa(labels=make([0, 1, 2]))


_ORDERED = [list, tuple, np.array, lambda v: pd.Series(v), lambda v: pa.array(v),
            lambda v: pl.Series(v), lambda v: pd.Index(v), lambda v: iter(v)]


@SETTINGS
@given(st.permutations([0, 1, 2, 3]), st.sampled_from(range(len(_ORDERED))))
def test_ordered_label_containers_keep_their_order(order, which):
    t = [0, 1, 2, 3, 1, 2]
    p = [1, 1, 3, 3, 0, 2]
    got = fk.cohen_kappa(t, p, labels=_ORDERED[which](list(order)), weights="quadratic")
    want = reference_kappa(t, p, labels=list(order), weights="quadratic")
    assert _close(got, want)


@pytest.mark.parametrize("make", _UNORDERED[:3])
def test_unordered_rows_are_rejected(make):
    with pytest.raises(ValueError, match=r"`y_true` is a .*one value per row"):
        fk.cohen_kappa(make([0, 1, 2]), [0, 1, 2])
    with pytest.raises(ValueError, match=r"`y_pred` is a .*pass a list"):
        fk.confusion_matrix([0, 1, 2], make([0, 1, 2]))


def test_labels_as_a_set_fail_the_same_way_under_every_hash_seed():
    """The audit's case: a set gave -0.071 or 0.25 depending on PYTHONHASHSEED."""
    code = ("import fastkappa as fk\n"
            "try:\n"
            "    print(fk.cohen_kappa(['b', 'a', 'c', 'a'], ['a', 'c', 'c', 'b'], "
            "labels={'c', 'a', 'b'}, weights='quadratic'))\n"
            "except ValueError as e:\n"
            "    print('ValueError', e)\n")
    outs = set()
    for seed in ("0", "1"):
        env = {**os.environ, "PYTHONHASHSEED": seed,
               "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        outs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                text=True, timeout=300, check=True).stdout)
    assert len(outs) == 1
    assert outs.pop().startswith("ValueError `labels` is a set")


# --------------------------------------------------------------------------- 3. ignore_index


_ONE = [True, 1, 1.0, np.int8(1), np.uint64(1), np.float32(1.0), np.bool_(True)]


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=2, max_size=40),
       st.sampled_from(["bool", "int8", "int64", "float64", "object"]),
       st.sampled_from(_ONE))
def test_ignore_index_compares_by_value(rows, dtype, ignore):
    """ignore_index=1 in any spelling drops the rows holding 1 in any dtype."""
    t = [a % 2 if dtype == "bool" else a for a, _ in rows]
    p = [b % 2 if dtype == "bool" else b for _, b in rows]
    np_dtype = bool if dtype == "bool" else (object if dtype == "object" else dtype)
    kept = [(a, b) for a, b in zip(t, p, strict=True) if a != 1 and b != 1]
    tt, pp = np.array(t, dtype=np_dtype), np.array(p, dtype=np_dtype)
    if not kept:
        with pytest.raises(ValueError, match=r"no (rows|class) left"):
            fk.confusion_matrix(tt, pp, ignore_index=ignore)
        return
    cm = fk.confusion_matrix(tt, pp, ignore_index=ignore)
    assert int(cm.sum()) == len(kept)
    classes = sorted({v for pair in kept for v in pair})
    np.testing.assert_array_equal(cm, confusion_dict(*zip(*kept, strict=True), classes))


def test_ignore_index_true_on_bool_arrays_drops_the_true_rows():
    t = np.array([True, False, True, False])
    p = np.array([False, False, True, False])
    np.testing.assert_array_equal(fk.confusion_matrix(t, p, ignore_index=True), [[2]])
    acc = fk.CohenKappa().update(t, p, ignore_index=True)
    assert acc.n_rows == 2


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from([0.0, 1.0, 2.0, -0.5]),
                          st.sampled_from([0.0, 1.0, 2.0, -0.5])), min_size=1, max_size=30),
       st.sampled_from([-0.5, np.float32(-0.5)]))
def test_a_fractional_ignore_index_drops_its_rows_before_the_whole_number_check(rows, ig):
    t = np.array([a for a, _ in rows])
    p = np.array([b for _, b in rows])
    kept = [(int(a), int(b)) for a, b in rows if a != -0.5 and b != -0.5]
    if not kept:
        with pytest.raises(ValueError, match=r"no (rows|class) left"):
            fk.confusion_matrix(t, p, ignore_index=ig)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedKappaWarning)
        got = fk.cohen_kappa(t, p, ignore_index=ig, weights="quadratic", n_classes=3)
    want = reference_kappa([a for a, _ in kept], [b for _, b in kept], weights="quadratic",
                           labels=[0, 1, 2])
    assert _close(got, want)
    classes = sorted({v for pair in kept for v in pair})
    np.testing.assert_array_equal(fk.confusion_matrix(t, p, ignore_index=ig),
                                  confusion_dict(*zip(*kept, strict=True), classes))


def test_ignore_index_nan_is_an_error_pointing_to_nan_policy():
    with pytest.raises(ValueError, match=r"`ignore_index` is NaN.*nan_policy='omit'"):
        fk.cohen_kappa([0.0, 1.0], [0.0, 1.0], ignore_index=float("nan"))


@pytest.mark.parametrize("call", [
    lambda y, p, ig: fk.cohen_kappa(y, p, ignore_index=ig),
    lambda y, p, ig: fk.confusion_matrix(y, p, ignore_index=ig),
    lambda y, p, ig: fk.kappa_ci(y, p, ignore_index=ig, method="asymptotic"),
    lambda y, p, ig: fk.CohenKappa().update(y, p, ignore_index=ig),
    lambda y, p, ig: fk.CohenKappa(labels=["2", "3", "10"]).update(y, p, ignore_index=ig),
])
def test_ignore_index_of_the_other_kind_is_an_error_not_a_silent_no_op(call):
    # a number never equals a string label (nor a string a number): the filter
    # would drop no row and the caller would not know
    y, p = ["10", "2", "3", "10"], ["10", "2", "2", "3"]
    with pytest.raises(ValueError, match=r"`ignore_index` is the number 10 but the labels "
                       r"are strings, so it would drop no row; give it as '10'"):
        call(y, p, 10)


def test_marker_checks_wait_for_a_value_of_known_kind():
    # every value missing: the labels' kind is unknown, so no kind error; the usual
    # "nothing left" error says what happened
    pd = pytest.importorskip("pandas")
    empty = pd.Series([None, None], dtype="string")
    with pytest.raises(ValueError, match="no class left to score"):
        fk.cohen_kappa(empty, empty, ignore_index="b", nan_policy="omit")
    with pytest.raises(ValueError, match="no rating to score"):
        fk.fleiss_kappa(np.array([[None, None], [None, None]], dtype=object), missing="")
    with pytest.raises(ValueError, match="`ignore_index` is the number 10 but"):
        fk.cohen_kappa(["a", "b"], ["a", "a"], ignore_index=np.int64(10))


def test_ignore_index_string_on_numbers_is_an_error_and_strings_match_strings():
    from sklearn.metrics import cohen_kappa_score

    with pytest.raises(ValueError, match="is the string '1' but the labels are numbers"):
        fk.cohen_kappa([1, 2, 3, 1], [1, 2, 2, 3], ignore_index="1")
    y, p = ["10", "2", "3", "10", "3"], ["10", "2", "2", "3", "3"]
    assert _close(fk.cohen_kappa(y, p, ignore_index="10"),
                  cohen_kappa_score(["2", "3", "3"], ["2", "2", "3"]))


# --------------------------------------------------------------------------- 4. clusters


def _graded(n=300, seed=0, k=4):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.6, t, rng.integers(0, k, n))
    return t, p


@pytest.mark.parametrize("method", ["asymptotic", "percentile", "basic", "bca"])
def test_one_cluster_is_an_error_for_every_method(method):
    t, p = _graded()
    with pytest.raises(ValueError, match=r"`clusters` holds 1 cluster .*at least 2"):
        fk.kappa_ci(t, p, method=method, clusters=np.zeros(len(t)), n_resamples=100, seed=0)
    with pytest.raises(ValueError, match=r"`clusters` holds 1 cluster"):
        fk.compare(t, {"a": p, "b": t[::-1]}, method=method, clusters=np.zeros(len(t)),
                   n_resamples=100, seed=0)


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 5), st.sampled_from(["asymptotic", "percentile"]))
def test_few_clusters_warn_and_one_raises(n_clusters, method):
    t, p = _graded(n=120, seed=n_clusters)
    clusters = np.arange(len(t)) % n_clusters
    if n_clusters == 1:
        with pytest.raises(ValueError, match="at least 2"):
            fk.kappa_ci(t, p, method=method, clusters=clusters, n_resamples=200, seed=0)
        return
    with pytest.warns(DegenerateIntervalWarning, match=rf"only {n_clusters} clusters.*"
                                                       "unreliable"):
        res = fk.kappa_ci(t, p, method=method, clusters=clusters, n_resamples=200, seed=0)
    assert res.standard_error_null > 1e-6  # never the 2e-16 of one cluster


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.sampled_from([None, "linear", "quadratic"]),
       st.integers(0, 10_000))
def test_few_clusters_still_give_the_brute_force_cluster_variance(n_clusters, weights, seed):
    """The warning does not change the number: it is the cluster-robust SE of naive.py."""
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 3, 80)
    p = np.where(rng.random(80) < 0.6, t, rng.integers(0, 3, 80))
    clusters = rng.integers(0, n_clusters, 80)
    if len(np.unique(clusters)) < 2:
        return
    with pytest.warns(DegenerateIntervalWarning, match="clusters"):
        res = fk.kappa_ci(t, p, method="asymptotic", clusters=clusters, weights=weights,
                          n_classes=3)
    want = cluster_robust_se(t.tolist(), p.tolist(), clusters.tolist(), 3, weights)
    assert res.standard_error == pytest.approx(want, rel=1e-9)


def test_thirty_clusters_do_not_warn():
    t, p = _graded(n=300)
    fk.kappa_ci(t, p, method="asymptotic", clusters=np.arange(300) % 30)  # no warning


def test_kappa_by_group_clusters_follow_the_rule_per_group():
    t, p = _graded(n=600)
    g = np.arange(600) % 2
    many = np.arange(600) // 4           # 75 clusters per group
    res = fk.kappa_by_group(t, p, g, method="asymptotic", clusters=many)
    for i, key in enumerate(res.groups):
        sel = g == key
        want = fk.kappa_ci(t[sel], p[sel], method="asymptotic", clusters=many[sel],
                           labels=res.classes)
        assert (res.low[i], res.high[i]) == pytest.approx((want.low, want.high), rel=1e-12)
    one = np.where(g == 0, 0, np.arange(600) // 4)  # group 0 is a single cluster
    with pytest.warns(DegenerateIntervalWarning, match="fewer than 2 and get a nan"):
        res = fk.kappa_by_group(t, p, g, method="asymptotic", clusters=one)
    assert math.isnan(res.low[0]) and not math.isnan(res.low[1])
    with pytest.raises(ValueError, match=r"`clusters` only changes the intervals; pass "
                                         r"`method=`"):
        fk.kappa_by_group(t, p, g, clusters=many)


def test_missing_cluster_ids_follow_nan_policy():
    t, p = _graded(n=200)
    ids = [*range(100), None, *range(100, 199)]
    chunked = pa.chunked_array([pa.array(ids[:100]), pa.array(ids[100:])])
    for clusters in (chunked, pd.Series(ids, dtype="Int64"), np.array(ids, dtype=object)):
        with pytest.raises(ValueError, match=r"`clusters` holds 1 row with a missing id.*"
                                             r"nan_policy='omit'"):
            fk.kappa_ci(t, p, method="asymptotic", clusters=clusters)
        got = fk.kappa_ci(t, p, method="asymptotic", clusters=clusters, nan_policy="omit")
        keep = np.arange(200) != 100
        want = fk.kappa_ci(t[keep], p[keep], method="asymptotic",
                           clusters=np.array([i for i in ids if i is not None]))
        assert (got.estimate, got.standard_error) == pytest.approx(
            (want.estimate, want.standard_error), rel=1e-12)
    comp = fk.compare(t, {"a": p, "b": t}, method="asymptotic", clusters=chunked,
                      nan_policy="omit")
    assert comp.n_rows == 199


# --------------------------------------------------------------------------- 5. big tables


def test_kappa_from_confusion_big_counts_exact():
    big = 2**62
    got = fk.kappa_from_confusion([[big, 1], [1, big]])
    want = kappa_from_table([[big, 1], [1, big]])
    assert got == pytest.approx(float(want), rel=1e-12)
    u = np.array([[2**63 + 5, 7], [3, 2**63]], dtype=np.uint64)
    assert fk.kappa_from_confusion(u) == pytest.approx(
        float(kappa_from_table([[2**63 + 5, 7], [3, 2**63]])), rel=1e-12)
    with pytest.raises(ValueError, match="all zeros"):
        fk.kappa_from_confusion(np.zeros((2, 2), dtype=np.uint64))


def test_kappa_ci_from_confusion_big_counts():
    with pytest.raises(ValueError, match=r"sum to 18446744073709551626 rows, at or beyond "
                                         r"2\*\*63.*kappa_from_confusion"):
        fk.kappa_ci_from_confusion(np.array([[2**63, 5], [5, 2**63]], dtype=np.uint64),
                                   method="asymptotic")
    table = np.array([[2**60, 2**40], [2**41, 2**60]], dtype=np.uint64)
    res = fk.kappa_ci_from_confusion(table, method="asymptotic")
    want = kappa_from_table(table.tolist())
    assert res.estimate == pytest.approx(float(want), rel=1e-12)


# --------------------------------------------------------------------------- 6. containers


def test_pandas_extension_arrays_work_like_their_series():
    t = [0, 1, 2, 1, 0, 2, 1]
    p = [0, 1, 1, 1, 0, 2, 0]
    want = fk.cohen_kappa(t, p, weights="linear")
    series = pd.Series(t, dtype="Int64")
    for x in (pd.array(t, dtype="Int64"), series.array, pd.Index(t),
              pd.Series(t, dtype="int64[pyarrow]").array, pd.array(t, dtype="UInt8")):
        assert fk.cohen_kappa(x, p, weights="linear") == pytest.approx(want, rel=1e-15)
    bt = pd.array([True, False, None, True], dtype="boolean")
    got = fk.cohen_kappa(bt, pd.array([True, True, False, True], dtype="boolean"),
                         nan_policy="omit")
    assert got == pytest.approx(fk.cohen_kappa([1, 0, 1], [1, 1, 1]))
    s = pd.array(["a", None, "b"], dtype="string")
    assert fk.confusion_matrix(s, ["a", "b", "b"], nan_policy="omit").tolist() == [[1, 0],
                                                                                  [0, 1]]


def test_masked_arrays_honour_the_mask():
    t = np.ma.array([0, 1, 2, 7, 1], mask=[0, 0, 0, 1, 0])
    p = np.array([0, 1, 1, 0, 1])
    with pytest.raises(ValueError, match=r"1 row holds a missing value.*nan_policy='omit'"):
        fk.cohen_kappa(t, p)
    got = fk.cohen_kappa(t, p, nan_policy="omit")
    assert got == fk.cohen_kappa([0, 1, 2, 1], [0, 1, 1, 1])
    ft = np.ma.array([0.0, 1.0, 2.0, 7.5], mask=[0, 0, 0, 1])
    assert fk.cohen_kappa(ft, [0, 1, 1, 0], nan_policy="omit") == fk.cohen_kappa(
        [0, 1, 2], [0, 1, 1])
    st_ = np.ma.array(np.array(["a", "b", "zz"], dtype=object), mask=[0, 0, 1])
    assert fk.confusion_matrix(st_, ["a", "b", "a"], nan_policy="omit").tolist() == [
        [1, 0], [0, 1]]
    with pytest.raises(ValueError, match=r"masked array of shape \(2, 2\).*only 1-D"):
        fk.cohen_kappa([0, 1], np.ma.array([[0.2, 0.8], [0.5, 0.5]], mask=[[0, 1], [0, 0]]))
    with pytest.raises(ValueError, match=r"`sample_weight` is a masked array.*\.filled\(0\)"):
        fk.cohen_kappa([0, 1], [0, 1], sample_weight=np.ma.array([1.0, 2.0], mask=[0, 1]))
    # a mask with nothing masked is the plain array
    assert fk.cohen_kappa(np.ma.array([0, 1, 1]), [0, 1, 0]) == fk.cohen_kappa([0, 1, 1],
                                                                              [0, 1, 0])


# --------------------------------------------------------------------------- 7. threads


_THREAD_SCRIPT = """
import threading
import numpy as np
import fastkappa as fk
rng = np.random.default_rng(0)
n = 1 << 20  # above the parallel threshold: the parallel kernels run
t = rng.integers(0, 5, n)
p = (t + rng.integers(0, 2, n)) % 5
w = rng.random(n)
want = fk.cohen_kappa(t, p, weights="linear")
errors = []

def work(i):
    try:
        for _ in range(2):
            assert fk.cohen_kappa(t, p, weights="linear") == want
            fk.confusion_matrix(t, p, sample_weight=w)
            fk.kappa_ci(t[:4000], p[:4000], n_resamples=3000, seed=i, method="percentile")
    except Exception as e:  # reported, not swallowed
        errors.append(repr(e))

threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for th in threads:
    th.start()
for th in threads:
    th.join()
import numba
print(numba.threading_layer(), len(errors), errors)
"""

_DASK_SCRIPT = """
import dask, dask.array as da, numpy as np
import fastkappa as fk, fastkappa.dask as fkd
rng = np.random.default_rng(1)
n = 1 << 21
t = rng.integers(0, 5, n)
p = (t + rng.integers(0, 2, n)) % 5
with dask.config.set(scheduler="threads", num_workers=4):
    got = fkd.cohen_kappa(da.from_array(t, chunks=n // 4), da.from_array(p, chunks=n // 4),
                          weights="quadratic")
import numba
print(numba.threading_layer(), got == fk.cohen_kappa(t, p, weights="quadratic"))
"""


def _run_workqueue(script: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_THREADING_LAYER": "workqueue",
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=900)


def test_concurrent_calls_are_safe_under_the_workqueue_layer():
    """Without the guard the process aborts ("Concurrent access has been detected")."""
    out = _run_workqueue(_THREAD_SCRIPT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[:2] == ["workqueue", "0"], out.stdout


def test_dask_threaded_scheduler_is_safe_under_the_workqueue_layer():
    pytest.importorskip("dask")
    out = _run_workqueue(_DASK_SCRIPT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["workqueue", "True"], out.stdout


# --------------------------------------------------------------------------- 8. memory


_MEMORY_SCRIPT = """
import gc, sys
import numpy as np
import fastkappa as fk

def status(key):
    with open("/proc/self/status") as fh:
        return [int(x.split()[1]) * 1024 for x in fh if x.startswith(key)][0]

k, n = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
t = np.empty(n, dtype=np.int16)
p = np.empty(n, dtype=np.int16)
for lo in range(0, n, 100_000):
    t[lo:lo + 100_000] = rng.integers(0, k, min(100_000, n - lo))
    p[lo:lo + 100_000] = rng.integers(0, k, min(100_000, n - lo))
small = 600_000  # parallel counting, compiled and loaded before measuring
what = sys.argv[3]
run = {"kappa": lambda: fk.cohen_kappa(t, p, n_classes=k, weights="linear"),
       "confusion": lambda: fk.confusion_matrix(t, p, n_classes=k)}[what]
fk.cohen_kappa(t[:small], p[:small], n_classes=k, weights="linear")
fk.cohen_kappa(t[:1000], p[:1000], n_classes=k, weights="linear")
fk.confusion_matrix(t[:small], p[:small], n_classes=k)
gc.collect()
try:
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset the peak (VmHWM) to the current RSS
    reset = True
except OSError:  # kernels without a peak reset: the RSS is sampled instead
    reset = False
import threading
sampled = [status("VmRSS")]
done = threading.Event()

def sample():
    while not done.wait(0.001):
        sampled.append(status("VmRSS"))

sampler = threading.Thread(target=sample)
before = sampled[0]
sampler.start()
out = run()
done.set()
sampler.join()
peak = max(max(sampled), status("VmHWM") if reset else 0)
print(peak - before, t.nbytes + p.nbytes)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")
@pytest.mark.parametrize(("k", "what"), [(256, "kappa"), (1024, "kappa"), (4096, "kappa"),
                                         (4096, "confusion")])
def test_counting_memory_does_not_grow_with_chunks_times_k_squared(k, what):
    """K = 4096 on 17 MB of int16 labels peaked at 2.7 GB (chunks x K^2 partials).

    Kappa now needs less extra memory than the input at any K (beyond the
    partials' budget it is summed without a table); a confusion matrix
    needs its (K, K) result on top (128 MB at K = 4096), and no more.
    """
    n = 4_250_000  # 17 MB of int16 labels in all
    out = subprocess.run([sys.executable, "-c", _MEMORY_SCRIPT, str(k), str(n), what],
                         cwd=ROOT, capture_output=True, text=True, timeout=900, check=True)
    extra, size = map(int, out.stdout.split())
    result = k * k * 8 if what == "confusion" else 0
    assert extra < size + result + 4 * 2**20, (extra, size, result)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_large_tables_reduced_in_blocks_match_scikit_learn(weights):
    """K = 1100: the table passes 8 MB, so kappa is reduced a block of rows at a time
    (named weights built a block at a time too)."""
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(4)
    k, n = 1100, 60_000
    t = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.6, t, rng.integers(0, k, n))
    w = rng.random(n)
    labels = np.arange(k)
    assert fk.cohen_kappa(t, p, weights=weights, n_classes=k) == pytest.approx(
        cohen_kappa_score(t, p, weights=weights, labels=labels), rel=1e-10)
    assert fk.cohen_kappa(t, p, weights=weights, n_classes=k, sample_weight=w) == \
        pytest.approx(cohen_kappa_score(t, p, weights=weights, labels=labels,
                                        sample_weight=w), rel=1e-10)
    table = fk.confusion_matrix(t, p, n_classes=k)
    assert fk.kappa_from_confusion(table, weights) == pytest.approx(
        cohen_kappa_score(t, p, weights=weights, labels=labels), rel=1e-10)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from([0, 1, 5, 699, -1, None]),
                          st.sampled_from([0, 1, 5, 699, -1, None]), st.floats(0.0, 3.0)),
                min_size=1, max_size=40),
       st.sampled_from([None, "linear", "quadratic", "custom"]), st.booleans())
def test_kappa_without_a_table_matches_scikit_learn(rows, weights, weighted):
    """700 classes on a few rows: the (K, K) table would outgrow the input, so kappa is
    summed from marginals; every check and value as with a table."""
    from sklearn.metrics import cohen_kappa_score

    k = 700
    t = np.array([np.nan if a is None else a for a, _, _ in rows])
    p = np.array([np.nan if b is None else b for _, b, _ in rows])
    sw = np.array([w for _, _, w in rows]) if weighted else None
    keep = ~np.isnan(t) & ~np.isnan(p) & (t != -1) & (p != -1)
    wmat = (np.abs(np.subtract.outer(np.arange(k), np.arange(k))) ** 1.5
            if weights == "custom" else weights)
    kw = {"n_classes": k, "weights": wmat, "sample_weight": sw, "ignore_index": -1,
          "nan_policy": "omit"}
    if not keep.any():
        # weights that are zero on every row of the input are reported first
        match = "zero everywhere|no rows left" if weighted and not sw.sum() > 0 else (
            "no rows left")
        with pytest.raises(ValueError, match=match):
            fk.cohen_kappa(t, p, **kw)
        return
    if weighted and not sw[keep].sum() > 0:
        with pytest.raises(ValueError, match="zero"):
            fk.cohen_kappa(t, p, **kw)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedKappaWarning)
        got = fk.cohen_kappa(t, p, **kw)
        table = fk.confusion_matrix(t, p, n_classes=k, sample_weight=sw, ignore_index=-1,
                                    nan_policy="omit")
        want = fk.kappa_from_confusion(table, wmat)  # the table path
    if weights != "custom":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scikit-learn's own undefined-kappa warning
            sk = cohen_kappa_score(t[keep].astype(int), p[keep].astype(int), weights=weights,
                                   labels=np.arange(k), sample_weight=None if sw is None
                                   else sw[keep])
        if math.isfinite(sk):
            assert got == pytest.approx(sk, rel=1e-9, abs=1e-12)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12) or (
        math.isnan(got) and math.isnan(want))
    with pytest.raises(ValueError, match=r"1 row holds a missing value"):
        fk.cohen_kappa(np.append(t[keep], np.nan), np.append(p[keep], 0), n_classes=k)


def test_class_limits_are_checked_before_allocating():
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"`n_classes` declares 100000000 classes, more "
                                             r"than the 4096"):
            fk.cohen_kappa([0, 1], [0, 1], n_classes=10**8)
        with pytest.raises(ValueError, match=r"`n_classes` declares"):
            fk.CohenKappa(n_classes=10**8)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20
    with pytest.raises(ValueError, match=r"`labels` declares 5000 classes"):
        fk.cohen_kappa([0, 1], [0, 1], labels=list(range(5000)))


def test_group_tables_are_checked_before_allocating():
    t = np.arange(5000) % 4096
    with pytest.raises(ValueError, match=r"100 groups x 4096 classes need .* GiB in all .*"
                                         r"pass coarser `groups`"):
        fk.kappa_by_group(t, t, np.arange(5000) % 100)


# --------------------------------------------------------------------------- 9. streaming


def test_learned_classes_obey_one_limit_across_batches():
    acc = fk.CohenKappa()
    for i in range(4):
        acc.update(np.arange(i * 1000, (i + 1) * 1000), np.arange(i * 1000, (i + 1) * 1000))
    before = acc.confusion
    with pytest.raises(ValueError, match=r"would take the accumulator to 5000 classes.*"
                                         r"same limit as for one batch.*not added"):
        acc.update(np.arange(4000, 5000), np.arange(4000, 5000))
    assert len(acc.labels) == 4000 and acc.n_rows == 4000
    np.testing.assert_array_equal(acc.confusion, before)
    with pytest.raises(ValueError, match="more than the 4096 classes"):
        fk.CohenKappa().update(np.arange(5000), np.arange(5000))
    other = fk.CohenKappa().update(np.arange(4000, 4200), np.arange(4000, 4200))
    with pytest.raises(ValueError, match="4200 classes"):
        acc.merge(other)


def test_generators_are_read_once_everywhere():
    acc = fk.CohenKappa().update([0, 1], [0, 1])
    # a new label: the first (known-labels) attempt fails, the retry must see the rows
    acc.update((v for v in [0, 2, 2]), (v for v in [0, 2, 1]))
    assert acc.n_rows == 5
    np.testing.assert_array_equal(acc.confusion, fk.confusion_matrix([0, 1, 0, 2, 2],
                                                                     [0, 1, 0, 2, 1]))
    t, p = _graded(n=200)
    comp = fk.compare(iter(t.tolist()), {"a": iter(p.tolist()), "b": iter((t % 3).tolist())},
                      method="asymptotic")
    want = fk.compare(t, {"a": p, "b": t % 3}, method="asymptotic")
    assert comp.models["a"].estimate == want.models["a"].estimate
    g = np.arange(200) % 3
    res = fk.kappa_by_group(iter(t.tolist()), iter(p.tolist()), iter(g.tolist()),
                            method="asymptotic", clusters=iter((np.arange(200) // 2).tolist()))
    want = fk.kappa_by_group(t, p, g, method="asymptotic", clusters=np.arange(200) // 2)
    np.testing.assert_allclose(res.estimate, want.estimate, rtol=1e-15)
    np.testing.assert_allclose(res.low, want.low, rtol=1e-15)
    ci = fk.kappa_ci(t, p, method="asymptotic", clusters=iter((np.arange(200) // 2).tolist()))
    assert ci.standard_error == fk.kappa_ci(t, p, method="asymptotic",
                                            clusters=np.arange(200) // 2).standard_error


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from([0, 1, 2, -1, None]),
                          st.sampled_from([0, 1, 2, -1, None])), min_size=1, max_size=30),
       st.integers(1, 4))
def test_update_takes_the_input_keywords_like_cohen_kappa(rows, n_batches):
    t = [a for a, _ in rows]
    p = [b for _, b in rows]
    kw = {"ignore_index": -1, "nan_policy": "omit"}
    acc = fk.CohenKappa(n_classes=3)
    step = max(1, len(rows) // n_batches)
    for lo in range(0, len(rows), step):
        bt, bp = t[lo:lo + step], p[lo:lo + step]
        if any(a not in (None, -1) and b not in (None, -1)
               for a, b in zip(bt, bp, strict=True)):
            acc.update(bt, bp, **kw)
    kept = [(a, b) for a, b in rows if a not in (None, -1) and b not in (None, -1)]
    if not kept:
        return
    np.testing.assert_array_equal(acc.confusion, fk.confusion_matrix(t, p, n_classes=3, **kw))


def test_update_thresholds():
    acc = fk.CohenKappa(n_classes=3).update([0, 1, 2], [0.1, 1.4, 1.6], thresholds=[0.5, 1.5])
    np.testing.assert_array_equal(acc.confusion, np.eye(3, dtype=np.int64))


# --------------------------------------------------------------------------- 10. seeds


_BAD_SEEDS = [-1, 1.5, "0", True, object(), [1, -2]]


@pytest.mark.parametrize("seed", _BAD_SEEDS, ids=repr)
def test_every_entry_point_gives_one_message_for_a_bad_seed(seed):
    t, p = _graded(n=60)
    msg = r"`seed` must be None, a non-negative int, a numpy.random.SeedSequence or a numpy"
    calls = [
        lambda: fk.kappa_ci(t, p, seed=seed, n_resamples=50),
        lambda: fk.kappa_ci_from_confusion([[5, 1], [2, 6]], seed=seed, n_resamples=50),
        lambda: fk.compare(t, {"a": p, "b": t}, seed=seed, n_resamples=50),
        lambda: fk.kappa_by_group(t, p, t % 2, method="percentile", seed=seed,
                                  n_resamples=50),
        lambda: fk.kappa_by_group(t, p, t % 2, seed=seed),
        lambda: fk.CohenKappa().update(t, p).ci(seed=seed, n_resamples=50),
        lambda: fk.ThresholdOptimizer(cv=2, seed=seed).fit(t, p + 0.5),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=msg):
            call()


@pytest.mark.parametrize("seed", [None, 7, np.random.SeedSequence(3),
                                  np.random.default_rng(5), [1, 2, 3]], ids=repr)
def test_results_record_the_seed_that_reproduces_them(seed):
    t, p = _graded(n=200)
    res = fk.kappa_ci(t, p, method="percentile", n_resamples=300, seed=seed,
                      weights="linear")
    again = fk.kappa_ci(t, p, method="percentile", n_resamples=300, seed=res.seed,
                        weights="linear")
    np.testing.assert_array_equal(res.distribution, again.distribution)
    d = json.loads(json.dumps(res.to_dict()))
    assert d["seed"] == res.seed and d["weights"] == "linear"
    assert d["method"] == "percentile" and d["n_resamples"] == 300
    assert d["fastkappa_version"] == fk.__version__
    assert fk.kappa_ci(t, p, method="asymptotic").seed is None  # nothing drawn
    comp = fk.compare(t, {"a": p, "b": t % 3}, n_resamples=200, seed=seed,
                      method="percentile")
    comp2 = fk.compare(t, {"a": p, "b": t % 3}, n_resamples=200, seed=comp.seed,
                       method="percentile")
    assert comp.pairs[0].low == comp2.pairs[0].low
    assert json.loads(json.dumps(comp.to_dict()))["seed"] == comp.seed


def test_kappa_by_group_takes_a_seed_sequence_and_records_it():
    t, p = _graded(n=300)
    g = np.arange(300) % 3
    res = fk.kappa_by_group(t, p, g, method="percentile", n_resamples=300,
                            seed=np.random.SeedSequence(0))
    again = fk.kappa_by_group(t, p, g, method="percentile", n_resamples=300, seed=0)
    np.testing.assert_array_equal(res.low, again.low)
    fresh = fk.kappa_by_group(t, p, g, method="percentile", n_resamples=300, seed=None)
    replay = fk.kappa_by_group(t, p, g, method="percentile", n_resamples=300,
                               seed=fresh.seed)
    np.testing.assert_array_equal(fresh.high, replay.high)
    d = json.loads(json.dumps(res.to_dict()))
    assert d["seed"] == 0 and d["n_resamples"] == 300 and d["fastkappa_version"] == fk.__version__


_SPAWNED = [np.random.SeedSequence(5).spawn(2)[1],
            np.random.SeedSequence([7, 8], pool_size=8).spawn(1)[0]]


@pytest.mark.parametrize("seed", _SPAWNED, ids=["spawned", "spawned_pool_8"])
def test_a_spawned_seed_round_trips_through_json(seed):
    # to_dict() records a spawned SeedSequence as {"entropy", "spawn_key"(, "pool_size")};
    # seed= takes that dict back and reproduces the result (it was refused), and
    # fk.agreement records the spawn key too (it recorded the entropy alone)
    t, p = _graded(n=200)
    ratings = np.c_[t, p, t % 3]
    calls = [
        lambda s: fk.kappa_ci(t, p, method="percentile", n_resamples=100, seed=s),
        lambda s: fk.compare(t, {"a": p, "b": t % 3}, method="percentile",
                             n_resamples=100, seed=s),
        lambda s: fk.kappa_by_group(t, p, t % 2, method="percentile", n_resamples=100,
                                    seed=s),
        lambda s: fk.agreement(ratings, coefficients="fleiss_kappa", method="percentile",
                               n_resamples=100, seed=s),
    ]
    for call in calls:
        first = json.loads(json.dumps(call(seed).to_dict()))
        assert isinstance(first["seed"], dict) and first["seed"]["spawn_key"]
        again = json.loads(json.dumps(call(first["seed"]).to_dict()))
        assert again == first
        # the root sequence alone gives other draws
        root = json.loads(json.dumps(call(seed.entropy).to_dict()))
        assert root != first


@pytest.mark.parametrize("bad", [{"entropy": -1}, {"spawn_key": [1]},
                                 {"entropy": 1, "spawn_key": [1], "extra": 2},
                                 {"entropy": 1, "pool_size": 2},
                                 {"entropy": 1, "spawn_key": [-1]}], ids=repr)
def test_a_seed_dict_that_records_no_sequence_is_refused(bad):
    with pytest.raises(ValueError, match=r"`seed` must be .*'entropy' and 'spawn_key'"):
        fk.kappa_ci([0, 1, 1, 0], [0, 1, 0, 0], n_resamples=50, seed=bad)


# --------------------------------------------------------------------------- 11. warnings


@pytest.mark.parametrize("method", ["asymptotic", "percentile", "bca"])
def test_compare_with_an_undefined_model_warns_only_undefined(method):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        comp = fk.compare([0, 0, 0, 0, 0], {"a": [0, 0, 0, 0, 0], "b": [0, 1, 0, 1, 0]},
                          method=method, n_resamples=50, seed=1)
    kinds = {type(w.message) for w in caught}
    assert UndefinedKappaWarning in kinds
    assert all(issubclass(k, (UndefinedKappaWarning, DegenerateIntervalWarning))
               for k in kinds), [str(w.message) for w in caught]
    assert math.isnan(comp.models["a"].estimate)
    assert math.isnan(comp.pairs[0].p_value)  # never a p-value of 0 from nan


# --------------------------------------------------------------------------- 12. groups


def test_kappa_by_group_method_replaces_ci():
    t, p = _graded(n=200)
    g = np.arange(200) % 2
    new = fk.kappa_by_group(t, p, g, method="percentile", n_resamples=200, seed=1)
    with pytest.warns(FutureWarning, match="`ci` is deprecated.*pass `method`"):
        old = fk.kappa_by_group(t, p, g, ci="percentile", n_resamples=200, seed=1)
    np.testing.assert_array_equal(new.low, old.low)
    assert new.method == "percentile"
    with pytest.raises(ValueError, match="pass `method` only"):
        fk.kappa_by_group(t, p, g, method="bca", ci="bca")
    with pytest.raises(ValueError, match="`method` must be 'percentile', 'basic', 'bca'"):
        fk.kappa_by_group(t, p, g, method="wald")


def test_kappa_by_group_replace_undefined_by():
    with pytest.warns(UndefinedKappaWarning, match="replace_undefined_by=0.0"):
        res = fk.kappa_by_group([0, 0, 0, 1], [0, 0, 0, 1], [1, 1, 2, 2],
                                replace_undefined_by=0.0)
    assert res.estimate.tolist() == [0.0, 1.0]


# --------------------------------------------------------------------------- 13. messages


def test_cohen_kappa_score_messages_name_its_own_arguments():
    with pytest.raises(ValueError, match=r"`y1`.*nan_policy='omit'.*`nan_policy`: an option "
                                         r"of fastkappa.cohen_kappa"):
        fk.cohen_kappa_score([0, None, 1], [0, 1, 1])
    with pytest.raises(ValueError, match=r"`y2` holds values outside the declared classes.*"
                                         r"\(`ignore_index`, `n_classes`: an option of "
                                         r"fastkappa.cohen_kappa"):
        fk.cohen_kappa_score([0, 1, 1], [0, 1, 5], labels=[0, 1])
    with pytest.raises(ValueError, match=r"`y1` and `y2` must have the same length"):
        fk.cohen_kappa_score([0, 1], [0, 1, 1])


# --------------------------------------------------------------------------- 15. smaller


def test_continuous_qwk_scales_first():
    for scale in (1e200, 1e-200, 1.0):
        t = np.array([1.0, 2.0, 3.0]) * scale
        s = np.array([1.0, 2.5, 3.0]) * scale
        assert fk.continuous_qwk(t, s) == pytest.approx(16 / 17, rel=1e-12)
    assert fk.continuous_qwk([-1.7e308, 1.7e308], [1.7e308, -1.7e308]) == pytest.approx(-1.0)


def test_compare_rejects_names_equal_up_to_whitespace():
    t, p = _graded(n=50)
    for a, b in (("m", "m "), ("model a", "model  a"), ("x", "\tx"), ("a b", "a\nb")):
        with pytest.raises(ValueError, match=r"differ only in whitespace.*rename one"):
            fk.compare(t, {a: p, b: t}, method="asymptotic")


def test_exact_fraction_oracle_agrees_on_a_hand_table():
    """The oracle itself: kappa of [[2, 1], [1, 2]] is 1/3."""
    assert kappa_from_table([[2, 1], [1, 2]]) == Fraction(1, 3)


def test_kappa_without_a_table_keeps_its_digits_with_tiny_weights():
    """Found by hypothesis: one row of weight 5e-324 (a subnormal) under a custom
    matrix on 700 classes gave 0.0161 without a table (products of subnormals lose
    digits) and 0.0 with one. The weights are rescaled first, as kappa allows."""
    k = 700
    wmat = np.abs(np.subtract.outer(np.arange(k), np.arange(k))) ** 1.5
    for scale in (5e-324, 1e-310, 1e300):
        kw = {"n_classes": k, "weights": wmat, "sample_weight": np.array([scale, 2 * scale])}
        t, p = np.array([0, 3]), np.array([5, 3])
        table = fk.confusion_matrix(t, p, n_classes=k, sample_weight=kw["sample_weight"])
        want = fk.kappa_from_confusion(table, wmat)
        assert fk.cohen_kappa(t, p, **kw) == pytest.approx(want, rel=1e-12, abs=1e-12)
        assert fk.cohen_kappa(t, p, **kw) == pytest.approx(
            fk.cohen_kappa(t, p, n_classes=k, weights=wmat, sample_weight=[1.0, 2.0]),
            rel=1e-12, abs=1e-12)


# --------------------------------------------------------------------------- first messages


@pytest.mark.parametrize("call, match", [
    (lambda x: fk.agreement(x, methd="bca"),
     r"'methd' \(did you mean 'method'\?\); agreement\(\) takes"),
    (lambda x: fk.fleiss_kappa(x, weight="linear"), r"did you mean 'weights'\?.*fleiss_kappa\(\)"),
    (lambda x: fk.krippendorff_alpha(x, levle="ordinal"), r"did you mean 'level'\?"),
    (lambda x: fk.light_kappa(x, n_class=3), r"did you mean 'n_classes'\?"),
    (lambda x: fk.gwet_ac(x, method="bca"), r"'method' is an option of fastkappa.agreement"),
    (lambda x: fk.agreement_by_category(x, zzz=1), r"unexpected keyword argument 'zzz'; "
                                                    r"agreement_by_category\(\) takes"),
])
def test_many_rater_keyword_typos_name_the_closest_keyword(call, match):
    x = np.array([[1, 1, 2], [2, 2, 2], [1, 2, 1.0]])
    with pytest.raises(TypeError, match=match):
        call(x)


def test_weight_and_label_refusals_say_what_is_wrong():
    y, p = [0, 1, 2, 0, 1, 2, 0, 1], [0, 1, 2, 0, 1, 1, 0, 2]
    with pytest.raises(ValueError, match=r"holds a negative weight \(-1\)\. Give a row weight 0"):
        fk.cohen_kappa_score(y, p, sample_weight=[1, 1, 1, 1, 1, 1, 1, -1])
    with pytest.raises(ValueError, match=r"holds 2 negative weights \(the first is -2\)"):
        fk.cohen_kappa_score(y, p, sample_weight=[1, -2, 1, 1, 1, 1, 1, -1])
    with pytest.raises(ValueError, match=r"holds a negative count \(-3\)"):
        fk.kappa_ci(y, p, frequency_weight=[1, 1, 1, -3, 1, 1, 1, 1])
    with pytest.raises(ValueError, match=r"`labels` must not repeat a class; 4 appears more"):
        fk.cohen_kappa_score(y, p, labels=[0, 1, 2, 3, 4, 4])
    with pytest.raises(ValueError, match=r"'b' appears more than once"):
        fk.cohen_kappa(["a", "b"], ["b", "a"], labels=["a", "b", "b"])
    with pytest.raises(ValueError, match=r"in 1 row; pass nan_policy='omit'"):
        fk.optimize_thresholds(y, [0.1, 1, 2, np.nan, 1, 2, 0, 1])


def test_undefined_kappa_does_not_advise_declaring_classes():
    # both raters in one class: chance agreement is 1 whatever the declared scale
    with pytest.warns(UndefinedKappaWarning) as rec:
        assert math.isnan(fk.cohen_kappa([1, 1, 1], [1, 1, 1], n_classes=5))
    text = str(rec[0].message)
    assert "n_classes=" not in text and "does not change this" in text


# --------------------------------------------------------------------------- replace_undefined_by


_UNDEFINED_CALLS = {
    "cohen_kappa_score": lambda v: fk.cohen_kappa_score([1, 1], [1, 1],
                                                        replace_undefined_by=v),
    "cohen_kappa": lambda v: fk.cohen_kappa([1, 1], [1, 1], replace_undefined_by=v),
    "quadratic_weighted_kappa": lambda v: fk.quadratic_weighted_kappa(
        [1, 1], [1, 1], replace_undefined_by=v),
    "kappa_from_confusion": lambda v: fk.kappa_from_confusion([[2, 0], [0, 0]],
                                                              replace_undefined_by=v),
    "CohenKappa.compute": lambda v: fk.CohenKappa().update([1, 1], [1, 1]).compute(
        replace_undefined_by=v),
    "continuous_qwk": lambda v: fk.continuous_qwk([1, 1], [1, 1], replace_undefined_by=v),
    "kappa_by_group": lambda v: float(fk.kappa_by_group(
        [1, 1], [1, 1], groups=[0, 0], replace_undefined_by=v).estimate[0]),
    "fleiss_kappa": lambda v: fk.fleiss_kappa([[1, 1], [1, 1]], replace_undefined_by=v),
    "light_kappa": lambda v: fk.light_kappa([[1, 1], [1, 1]], replace_undefined_by=v),
}


@pytest.mark.parametrize("name", sorted(_UNDEFINED_CALLS))
def test_replace_undefined_by_is_a_number_in_kappas_range_or_nan(name):
    # scikit-learn's constraint: a float in [-1, 1] or nan; anything else was returned
    # as given (a string, None, 5.0)
    call = _UNDEFINED_CALLS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fk.UndefinedKappaWarning)
        for good in (-1.0, 0, 1, 0.5, np.float32(0.25)):
            assert call(good) == float(good)
        assert math.isnan(call(np.nan))
        for bad in ("x", None, 5.0, -1.5, True, [0.0]):
            with pytest.raises(ValueError, match=r"`replace_undefined_by` must be a number "
                                                 r"in \[-1, 1\] or nan"):
                call(bad)


def test_replace_undefined_by_is_checked_before_any_work():
    # ThresholdOptimizer checks it in fit (as scikit-learn validates), and a huge int is
    # the ValueError, not an OverflowError from a float conversion
    with pytest.raises(ValueError, match="`replace_undefined_by` must be a number"):
        fk.ThresholdOptimizer(replace_undefined_by=5.0).fit([0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8])
    with pytest.raises(ValueError, match="`replace_undefined_by` must be a number"):
        fk.cohen_kappa([0, 1], [0, 1], replace_undefined_by=10**400)


@pytest.mark.parametrize("seed", [np.random.SeedSequence(np.int64(5)),
                                  np.random.SeedSequence(np.array([1, 2], dtype=np.uint64)),
                                  np.random.SeedSequence(5, pool_size=8),
                                  np.array([3, 4]), np.int32(9)], ids=repr)
def test_seeds_of_numpy_values_and_pool_sizes_round_trip_through_json(seed):
    # numpy entropy made to_dict() unwritable as JSON; a root sequence of another pool
    # size recorded its entropy alone (other draws); an int array was refused
    t, p = _graded(n=120)
    ratings = np.c_[t, p, t % 3]
    calls = [
        lambda s: fk.kappa_ci(t, p, method="percentile", n_resamples=60, seed=s),
        lambda s: fk.agreement(ratings, coefficients="fleiss_kappa", method="percentile",
                               n_resamples=60, seed=s),
    ]
    for call in calls:
        first = json.loads(json.dumps(call(seed).to_dict()))
        assert json.loads(json.dumps(call(first["seed"]).to_dict())) == first
