"""Every kind of input users pass, and every way it can be wrong.

Each accepted container is scored against scikit-learn on the plain integer
(or string) equivalent; each rejected input raises ``ValueError`` with a
message that says what to do.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from naive import reference_kappa

import fastkappa as fk

sklearn_metrics = pytest.importorskip("sklearn.metrics")

WEIGHTS = [None, "linear", "quadratic"]

T = [0, 1, 2, 2, 1, 0, 3, 3, 2, 1, 0, 2]
P = [0, 2, 2, 1, 1, 0, 3, 2, 2, 1, 1, 3]


def sk_kappa(y1, y2, **kw) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(sklearn_metrics.cohen_kappa_score(y1, y2, **kw))


def assert_close(a: float, b: float, rel: float = 1e-12) -> None:
    assert math.isclose(a, b, rel_tol=rel, abs_tol=1e-12), (a, b)


def check_all_weights(t, p, t_ref=T, p_ref=P, **kw) -> None:
    """fastkappa on (t, p) equals sklearn on the plain integer lists, every weighting."""
    for weights in WEIGHTS:
        assert_close(fk.cohen_kappa(t, p, weights=weights, **kw),
                     sk_kappa(t_ref, p_ref, weights=weights))


# --------------------------------------------------------------------------- stand-ins


class ArrayOnly:
    """Exposes nothing but ``__array__`` (like many array libraries)."""

    def __init__(self, a):
        self._a = np.asarray(a)

    def __array__(self, dtype=None, copy=None):
        return self._a if dtype is None else self._a.astype(dtype)


class DLPackOnly:
    """Exposes only the DLPack protocol (a GPU-less stand-in for a foreign tensor)."""

    def __init__(self, a):
        self._a = np.asarray(a)

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class DLPackMethodOnly:
    """Only ``__dlpack__`` (no ``__dlpack_device__``, no ``__array__``)."""

    def __init__(self, a):
        self._a = np.asarray(a)

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)


class TorchLike:
    """Quacks like a torch tensor: ``.detach().cpu().numpy()`` (and nothing else)."""

    def __init__(self, a, *, requires_grad=False, calls=None):
        self._a = np.asarray(a)
        self.requires_grad = requires_grad
        self.calls = [] if calls is None else calls

    def detach(self):
        self.calls.append("detach")
        return TorchLike(self._a, calls=self.calls)

    def cpu(self):
        self.calls.append("cpu")
        return self

    def numpy(self):
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad.")
        return self._a


# --------------------------------------------------------------------------- containers


def test_cohen_kappa_lists_tuples_arrays():
    check_all_weights(T, P)
    check_all_weights(tuple(T), tuple(P))
    check_all_weights(np.array(T), np.array(P))
    check_all_weights(np.array(T, dtype=np.int8), P)
    check_all_weights(range(12), range(12), t_ref=list(range(12)), p_ref=list(range(12)))
    # any iterable
    assert_close(fk.cohen_kappa((v for v in T), np.array(P), weights="linear"),
                 sk_kappa(T, P, weights="linear"))


def test_cohen_kappa_foreign_protocol_objects():
    check_all_weights(ArrayOnly(T), ArrayOnly(np.array(P, dtype=np.int16)))
    check_all_weights(DLPackOnly(np.array(T, dtype=np.int32)), DLPackOnly(P))
    check_all_weights(DLPackMethodOnly(np.array(T, dtype=np.int8)), DLPackMethodOnly(P))
    assert not hasattr(DLPackMethodOnly(T), "__array__")
    tl = TorchLike(T, requires_grad=True)
    check_all_weights(tl, TorchLike(np.array(P, dtype=np.uint8)))
    assert tl.calls[:2] == ["detach", "cpu"]  # detached before numpy(): no grad error
    # (n, 1) column vectors from such objects are flattened
    check_all_weights(ArrayOnly(np.array(T)[:, None]), DLPackOnly(np.array(P)[:, None]))
    # 2-D probabilities through a tensor stand-in
    probs = np.eye(4)[P] * 0.7 + 0.05
    check_all_weights(TorchLike(T), TorchLike(probs))


def test_cohen_kappa_pandas_series():
    pd = pytest.importorskip("pandas")
    check_all_weights(pd.Series(T), pd.Series(P))
    check_all_weights(pd.Series(T, dtype="Int64"), pd.Series(P, dtype="UInt8"))
    check_all_weights(pd.Series(T, dtype="float64"), pd.Series(P, dtype="Float32"))
    check_all_weights(pd.Series(T, index=np.arange(12)[::-1]), pd.Series(P))  # index ignored
    check_all_weights(pd.DataFrame({"a": T}), pd.Series(P))  # one-column frame
    check_all_weights(pd.Series(T, dtype="int64[pyarrow]"), pd.Series(P))
    # categoricals of numbers: the numbers are the labels
    check_all_weights(pd.Series(pd.Categorical(T)), pd.Series(P))


def test_cohen_kappa_pandas_strings_and_categoricals():
    pd = pytest.importorskip("pandas")
    scale = ["none", "mild", "moderate", "severe"]
    names = np.array(scale, dtype=object)
    ts, ps = names[T], names[P]
    for t in (pd.Series(ts), pd.Series(ts, dtype="string"),
              pd.Series(ts, dtype="string[pyarrow]"), pd.Series(pd.Categorical(ts))):
        assert_close(fk.cohen_kappa(t, ps), sk_kappa(T, P))
        check_all_weights(t, ps, labels=scale)
        with pytest.raises(ValueError, match="weighted kappa needs ordered classes"):
            fk.cohen_kappa(t, ps, weights="quadratic")
    # an ordered Categorical declares its scale, unobserved grades included
    cat = pd.Categorical(ts, categories=[*scale, "proliferative"], ordered=True)
    check_all_weights(pd.Series(cat), ps)
    check_all_weights(cat, pd.Series(ps, dtype="string"))
    assert fk.confusion_matrix(cat, ps).shape == (5, 5)
    for weights in WEIGHTS:
        assert_close(fk.cohen_kappa(pd.Series(cat), ps, weights=weights),
                     sk_kappa(T, P, weights=weights, labels=[0, 1, 2, 3, 4]))


def test_cohen_kappa_polars_series():
    pl = pytest.importorskip("polars")
    check_all_weights(pl.Series(T), pl.Series(P, dtype=pl.UInt8))
    check_all_weights(pl.Series(T, dtype=pl.Float64), pl.Series(P, dtype=pl.Int16))
    check_all_weights(pl.DataFrame({"a": T}), pl.Series(P))
    scale = ["none", "mild", "moderate", "severe"]
    ts = [scale[i] for i in T]
    ps = [scale[i] for i in P]
    assert_close(fk.cohen_kappa(pl.Series(ts), pl.Series(ps)), sk_kappa(T, P))
    # regression: polars Categorical crashed (Series.cat.get_categories is gone in polars 2)
    cat = pl.Series(ts, dtype=pl.Categorical)
    assert_close(fk.cohen_kappa(cat, pl.Series(ps, dtype=pl.Categorical)), sk_kappa(T, P))
    check_all_weights(cat, ps, labels=scale)
    with pytest.raises(ValueError, match="weighted kappa needs ordered classes"):
        fk.cohen_kappa(cat, ps, weights="linear")
    # an Enum is ordered: it declares the scale (here in a non-alphabetical order)
    enum = pl.Enum([*scale, "proliferative"])
    check_all_weights(pl.Series(ts, dtype=enum), pl.Series(ps, dtype=enum))
    assert fk.confusion_matrix(pl.Series(ts, dtype=enum), ps).shape == (5, 5)


def test_cohen_kappa_pyarrow_arrays():
    pa = pytest.importorskip("pyarrow")
    check_all_weights(pa.array(T), pa.array(P, pa.int8()))
    check_all_weights(pa.chunked_array([T[:5], T[5:]]), pa.chunked_array([P[:3], P[3:9], P[9:]]))
    check_all_weights(pa.chunked_array([T]), pa.array(P, pa.float64()))
    scale = ["none", "mild", "moderate", "severe"]
    ts = [scale[i] for i in T]
    ps = [scale[i] for i in P]
    assert_close(fk.cohen_kappa(pa.array(ts), pa.array(ps, pa.large_string())), sk_kappa(T, P))
    dict_t = pa.array(ts).dictionary_encode()
    assert_close(fk.cohen_kappa(dict_t, pa.chunked_array([ps]).dictionary_encode()),
                 sk_kappa(T, P))
    check_all_weights(dict_t, ps, labels=scale)
    ordered = pa.DictionaryArray.from_arrays(pa.array(T, pa.int32()), pa.array(scale),
                                             ordered=True)
    check_all_weights(ordered, ps)
    # numeric dictionaries are numbers
    check_all_weights(pa.array(T).dictionary_encode(), P)
    # a one-column Table or RecordBatch is that column, as a one-column DataFrame is
    check_all_weights(pa.table({"t": T}), pa.record_batch({"p": P}))
    with pytest.raises(ValueError, match="`y_true` is a table with no column"):
        fk.cohen_kappa(pa.table({}), P)


def test_cohen_kappa_pyarrow_dictionary_unsigned_indices_with_nulls():
    # regression: writing the -1 sentinel into uint8 indices overflowed
    pa = pytest.importorskip("pyarrow")
    idx = pa.array([0, 1, None, 2, 1], pa.uint8())
    arr = pa.DictionaryArray.from_arrays(idx, pa.array(["a", "b", "c"]))
    assert_close(fk.cohen_kappa(arr, ["a", "b", "c", "c", "a"], nan_policy="omit"),
                 sk_kappa(["a", "b", "c", "b"], ["a", "b", "c", "a"]))
    with pytest.raises(ValueError, match=r"1 row hold.*`y_true`.*nan_policy='omit'"):
        fk.cohen_kappa(arr, ["a", "b", "c", "c", "a"])


@pytest.mark.parametrize("index", [7, 3, -2])
def test_cohen_kappa_pyarrow_dictionary_index_outside_its_dictionary(index):
    """An array built with ``safe=False`` may point past its dictionary: a
    ValueError naming the position, never an IndexError from inside."""
    pa = pytest.importorskip("pyarrow")
    idx = pa.array([0, None, index, 2], pa.int32())
    arr = pa.DictionaryArray.from_arrays(idx, pa.array(["a", "b", "c"]), safe=False)
    with pytest.raises(ValueError, match=rf"`y_pred` is a dictionary array whose index "
                                         rf"{index} at position 2 lies outside its "
                                         r"dictionary of 3 values"):
        fk.cohen_kappa(["a", "b", "c", "c"], arr, nan_policy="omit")
    # the first index outside is named, not the largest
    arr = pa.DictionaryArray.from_arrays(pa.array([0, 5, 7], pa.int32()),
                                         pa.array(["a", "b", "c"]), safe=False)
    with pytest.raises(ValueError, match=r"index 5 at position 1 lies outside"):
        fk.cohen_kappa(["a", "b", "c"], arr)


def test_cohen_kappa_big_endian_arrays():
    # regression: numba rejected non-native byte order with a TypingError
    t = np.array(T, dtype=">i4")
    p = np.array(P, dtype=">u2")
    check_all_weights(t, p)
    check_all_weights(t, p, n_classes=4)
    check_all_weights(np.array(T, dtype=">f8"), np.array(P, dtype=">i8"))
    np.testing.assert_array_equal(fk.confusion_matrix(t, p),
                                  sklearn_metrics.confusion_matrix(T, P))
    assert_close(fk.cohen_kappa(T, P, sample_weight=np.arange(1, 13, dtype=">f8")),
                 sk_kappa(T, P, sample_weight=np.arange(1, 13)))


def test_cohen_kappa_read_only_and_memmap_arrays(tmp_path):
    t = np.array(T, dtype=np.int16)
    t.flags.writeable = False
    check_all_weights(t, np.array(P))
    mm = np.memmap(tmp_path / "p.bin", dtype=np.int32, mode="w+", shape=(12,))
    mm[:] = P
    check_all_weights(t, mm)


def test_cohen_kappa_huge_unsigned_labels_raise_instead_of_merging():
    # regression: uint64 labels >= 2**63 went through float64, merging 2**63 and 2**63 + 1
    big = np.array([2**63, 2**63 + 1, 2**63], dtype=np.uint64)
    with pytest.raises(ValueError, match=r"unsigned integers of 2\*\*63 or more"):
        fk.confusion_matrix(big, big)
    # below 2**63 they are exact
    ok = np.array([2**62, 2**62 + 1, 2**62], dtype=np.uint64)
    ok2 = np.array([2**62 + 1, 2**62 + 1, 2**62], dtype=np.uint64)
    np.testing.assert_array_equal(fk.confusion_matrix(ok, ok2), [[1, 1], [0, 1]])


def test_cohen_kappa_float16_labels():
    # regression: comparing a float16 maximum with 2**53 overflowed (a warning, an error
    # under -W error)
    t = np.array(T, dtype=np.float16)
    check_all_weights(t, P)
    check_all_weights(T, P, labels=np.arange(4, dtype=np.float16))


# --------------------------------------------------------------------------- missing values


def _with_missing(values, rows, missing):
    out = list(values)
    for r in rows:
        out[r] = missing
    return out


@pytest.mark.parametrize("missing", ["nan", "None", "pd.NA"])
def test_cohen_kappa_nan_policy_with_python_missing_values(missing):
    pd = pytest.importorskip("pandas")
    m = {"nan": float("nan"), "None": None, "pd.NA": pd.NA}[missing]
    t = _with_missing(T, [2, 7], m)
    p = _with_missing(P, [7, 10], m)
    keep = [r for r in range(12) if r not in (2, 7, 10)]
    t_ref, p_ref = [T[r] for r in keep], [P[r] for r in keep]
    with pytest.raises(ValueError, match=r"3 rows hold a missing value \(NaN/None\) in "
                                         r"`y_true` and `y_pred`; pass nan_policy='omit'"):
        fk.cohen_kappa(t, p)
    check_all_weights(t, p, t_ref, p_ref, nan_policy="omit")
    check_all_weights(np.array(t, dtype=object), p, t_ref, p_ref, nan_policy="omit")
    check_all_weights(pd.Series(t), pd.Series(p), t_ref, p_ref, nan_policy="omit")
    check_all_weights(pd.Series(t, dtype="Float64"), pd.Series(p, dtype="Int64"), t_ref, p_ref,
                      nan_policy="omit")
    # missing values only on one side
    with pytest.raises(ValueError, match=r"2 rows hold a missing value .* in `y_true`;"):
        fk.cohen_kappa(t, P)
    # strings with missing values
    names = np.array(["a", "b", "c", "d"], dtype=object)
    ts = _with_missing(names[T].tolist(), [2, 7], m)
    assert_close(fk.cohen_kappa(ts, names[P], nan_policy="omit"),
                 sk_kappa([names[T][r] for r in range(12) if r not in (2, 7)],
                          [names[P][r] for r in range(12) if r not in (2, 7)]))
    with pytest.raises(ValueError, match="nan_policy='omit'"):
        fk.cohen_kappa(ts, names[P])


def test_cohen_kappa_nan_policy_with_arrow_and_polars_nulls():
    pa = pytest.importorskip("pyarrow")
    pl = pytest.importorskip("polars")
    t = _with_missing(T, [1, 4], None)
    p = _with_missing(P, [4, 11], None)
    keep = [r for r in range(12) if r not in (1, 4, 11)]
    t_ref, p_ref = [T[r] for r in keep], [P[r] for r in keep]
    pairs = [
        (pa.array(t), pa.array(p)),
        (pa.chunked_array([t[:6], t[6:]]), pa.array(p, pa.float32())),
        (pl.Series(t), pl.Series(p)),
        (pl.Series(t, dtype=pl.Float64), pl.Series(p, dtype=pl.UInt8)),
        (pa.array(t).dictionary_encode(), pl.Series(p)),
    ]
    for a, b in pairs:
        check_all_weights(a, b, t_ref, p_ref, nan_policy="omit")
        with pytest.raises(ValueError, match=r"3 rows hold a missing value"):
            fk.cohen_kappa(a, b)
    names = ["a", "b", "c", "d"]
    ts = [None if v is None else names[v] for v in t]
    ps = [None if v is None else names[v] for v in p]
    for a, b in [(pa.array(ts), pa.array(ps)),
                 (pl.Series(ts), pl.Series(ps, dtype=pl.Categorical)),
                 (pl.Series(ts, dtype=pl.Enum(names)), pa.array(ps).dictionary_encode())]:
        check_all_weights(a, b, t_ref, p_ref, nan_policy="omit", labels=names)
        with pytest.raises(ValueError, match=r"3 rows hold a missing value"):
            fk.cohen_kappa(a, b, labels=names)


def test_cohen_kappa_nan_omit_value_seen_only_in_dropped_rows():
    # regression: with nan_policy='omit', 5 (paired only with NaN) became a class between
    # 0 and 9 and shifted the linear/quadratic weights
    t = [0.0, 9.0, 9.0, np.nan, 0.0, 9.0]
    p = [0, 9, 0, 5, 9, 9]
    for weights in ("linear", "quadratic"):
        expected = sk_kappa([0, 9, 9, 0, 9], [0, 9, 0, 9, 9], weights=weights)
        assert_close(fk.cohen_kappa(t, p, weights=weights, nan_policy="omit"), expected)
        assert_close(fk.cohen_kappa(t, [float(v) for v in p], weights=weights,
                                    nan_policy="omit"), expected)
    assert fk.confusion_matrix(t, p, nan_policy="omit").shape == (2, 2)


def test_cohen_kappa_bad_nan_policy_raises():
    with pytest.raises(ValueError, match=r"`nan_policy` must be 'raise' or 'omit'; got 'drop'"):
        fk.cohen_kappa(T, P, nan_policy="drop")


def test_cohen_kappa_all_missing_raises():
    with pytest.raises(ValueError, match=r"no (class|rows) left to score"):
        fk.cohen_kappa([np.nan, 1.0], [1, np.nan], nan_policy="omit")
    with pytest.raises(ValueError, match=r"no (class|rows) left to score"):
        fk.cohen_kappa([None, None], ["a", "b"], nan_policy="omit")
    with pytest.raises(ValueError, match=r"no (class|rows) left to score"):
        fk.cohen_kappa([np.nan, 1.0], [1, np.nan], nan_policy="omit", n_classes=3)
    # an all-missing column has no kind, so it is not "numbers against strings"
    with pytest.raises(ValueError, match=r"2 rows hold a missing value .* `y_true`"):
        fk.cohen_kappa([None, None], ["a", "b"])
    with pytest.raises(ValueError, match=r"no (class|rows) left to score"):
        fk.cohen_kappa(["a", "b"], [None, None], nan_policy="omit")
    with pytest.raises(ValueError, match=r"2 rows hold a missing value .* `y_pred`"):
        fk.cohen_kappa(["a", "b"], [np.nan, np.nan])
    with pytest.raises(ValueError, match=r"no (class|rows) left to score"):
        fk.cohen_kappa([np.nan, np.nan], ["a", "b"], nan_policy="omit")


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("t", "p", "match"),
    [
        ([0, 1], [0, 1, 1], r"same length; got 2 and 3"),
        ([], [], r"empty"),
        (np.array([], dtype=np.int8), np.array([], dtype=np.int8), "empty"),
        (["a", 1, "b"], ["a", "a", "b"], "mixes strings and numbers"),
        (np.array(["a", 1.5], dtype=object), ["a", "b"], "mixes strings and numbers"),
        (["a", "b"], [1, 2], "`y_true` holds strings but `y_pred` holds numbers"),
        ([0, 1, 2], [0.5, 1, 2], r"non-integral floats \(e\.g\. 0\.5, 1 row\).*thresholds"),
        ([0, 1, 2], np.array([0.5, 1, None], dtype=object), "non-integral floats.*thresholds"),
        ([0, np.inf], [0, 1], "holds inf"),
        (np.array([0, float("inf"), None], dtype=object), [0, 1, 1], "holds inf"),
        (3, [0, 1], "must be array-like"),
        ("ab", "ab", "must be array-like"),
        # (N, ...) labels are flattened (torchmetrics' shapes): y_pred must match
        (np.zeros((2, 2, 2)), [0, 1], r"`y_true` has shape \(2, 2, 2\); pass `y_pred`"),
        (np.zeros((2, 3)), [0, 1], r"`y_pred` is 1-D with 2 rows but `y_true` has shape"),
        (np.array([1j, 2]), [0, 1], "unsupported dtype complex128"),
        (np.array(["2020-01-01", "2020-01-02"], dtype="M8[D]"), [0, 1], "unsupported dtype"),
        (np.array([b"a", b"b"], dtype=object), [0, 1], "unsupported type bytes"),
        ([object(), object()], [0, 1], "unsupported type object"),
        ([0, 1], np.array([["a", "b"], ["c", "d"]]), "numeric probabilities or logits"),
    ],
)
def test_cohen_kappa_bad_labels_raise(t, p, match):
    with pytest.raises(ValueError, match=match):
        fk.cohen_kappa(t, p)
    with pytest.raises(ValueError, match=match):
        fk.confusion_matrix(t, p)


@pytest.mark.parametrize(
    ("sw", "match"),
    [
        ([1, -1, 1, 1], "non-negative"),
        ([1, np.nan, 1, 1], "finite"),
        ([1, np.inf, 1, 1], "finite"),
        ([0, 0, 0, 0], "zero everywhere"),
        ([0.0, -0.0, 0, 0], "zero everywhere"),
        ([1, 1, 1], r"one weight per row: got 3 weights for 4 rows"),
        (["a", "b", "c", "d"], "non-negative numbers"),
        ([1, None, 1, 1], "holds 1 missing value .*a weight cannot be missing"),
        (np.ones((4, 2)), "non-negative numbers"),
        (2.0, "must be array-like"),
    ],
)
def test_cohen_kappa_bad_sample_weight_raises(sw, match):
    with pytest.raises(ValueError, match=match):
        fk.cohen_kappa([0, 1, 1, 0], [0, 1, 0, 0], sample_weight=sw)
    with pytest.raises(ValueError, match=match):
        fk.confusion_matrix([0, 1, 1, 0], [0, 1, 0, 0], sample_weight=sw)


def test_cohen_kappa_sample_weight_zero_on_every_kept_row_raises():
    with pytest.raises(ValueError, match="zero on every scored row"):
        fk.cohen_kappa([0, 1, -1], [0, 1, 1], sample_weight=[0, 0, 1], ignore_index=-1)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        (dict(labels=[0, np.nan]), "must not contain NaN"),
        (dict(labels=[0, 1, 1]), "must not repeat a class"),
        (dict(labels=[]), "at least one class"),
        (dict(labels=3), "must be array-like"),
        (dict(labels=["a", "b"]), "holds numbers but the classes are strings"),
        (dict(labels=["a", 1]), "mixes strings and numbers"),
        (dict(n_classes=0), "`n_classes` must be a positive integer; got 0"),
        (dict(n_classes=2.0), "`n_classes` must be a positive integer; got 2.0"),
        (dict(n_classes="4"), "`n_classes` must be a positive integer"),
    ],
)
def test_cohen_kappa_bad_class_declarations_raise(kw, match):
    with pytest.raises(ValueError, match=match):
        fk.cohen_kappa(T, P, **kw)


def test_cohen_kappa_declared_numbers_against_string_data_raise():
    with pytest.raises(ValueError, match="holds strings but the classes are numbers"):
        fk.cohen_kappa(["a", "b"], ["a", "b"], labels=[0, 1])


# --------------------------------------------------------------------------- strings, order


def test_cohen_kappa_weighted_strings_need_declared_order():
    scale = ["none", "mild", "moderate", "severe"]
    ts = [scale[i] for i in T]
    ps = [scale[i] for i in P]
    for weights in ("linear", "quadratic", 1 - np.eye(4)):
        with pytest.raises(ValueError, match=r"weighted kappa needs ordered classes.*labels="):
            fk.cohen_kappa(ts, ps, weights=weights)
    # unknown weight strings are named first
    with pytest.raises(ValueError, match=r"got 'quad'"):
        fk.cohen_kappa(ts, ps, weights="quad")
    # with the scale declared, it equals sklearn on the integer codes
    check_all_weights(ts, ps, labels=scale)
    # declared in another order, the codes follow that order
    rev = scale[::-1]
    for weights in WEIGHTS:
        assert_close(fk.cohen_kappa(ts, ps, weights=weights, labels=rev),
                     sk_kappa([3 - v for v in T], [3 - v for v in P], weights=weights))
    # unweighted needs no order
    assert_close(fk.cohen_kappa(ts, ps), sk_kappa(ts, ps))
    assert_close(fk.cohen_kappa(ts, ps, weights=None), sk_kappa(T, P))


def test_cohen_kappa_unordered_categorical_with_labels_matches_codes():
    pd = pytest.importorskip("pandas")
    scale = ["lo", "mid", "hi"]
    t = pd.Series(pd.Categorical([scale[v] for v in [0, 1, 2, 2, 0, 1]]))  # unordered
    p = pd.Series(pd.Categorical([scale[v] for v in [0, 2, 2, 1, 0, 0]], categories=scale[::-1]))
    for weights in WEIGHTS:
        assert_close(fk.cohen_kappa(t, p, weights=weights, labels=scale),
                     sk_kappa([0, 1, 2, 2, 0, 1], [0, 2, 2, 1, 0, 0], weights=weights))


def test_cohen_kappa_two_ordered_categoricals_must_agree():
    pd = pytest.importorskip("pandas")
    a = pd.Categorical(["a", "b"], categories=["a", "b", "c"], ordered=True)
    b = pd.Categorical(["a", "b"], categories=["c", "b", "a"], ordered=True)
    with pytest.raises(ValueError, match="ordered categoricals with different categories"):
        fk.cohen_kappa(a, b)
    # labels= overrides both
    assert_close(fk.cohen_kappa(a, b, labels=["a", "b", "c"], weights="linear"), 1.0)


# --------------------------------------------------------------------------- scores


def test_cohen_kappa_probabilities_take_argmax(rng):
    n, k = 300, 4
    t = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k)) + 2.0 * np.eye(k)[t]
    pred = np.argmax(logits, axis=1)
    for weights in WEIGHTS:
        expected = sk_kappa(t, pred, weights=weights, labels=np.arange(k))
        assert_close(fk.cohen_kappa(t, logits, weights=weights), expected)
        assert_close(fk.cohen_kappa(t, logits, weights=weights, n_classes=k), expected)
        # softmax probabilities, float32, Fortran order
        probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        assert_close(fk.cohen_kappa(t, np.asfortranarray(probs.astype(np.float32)),
                                    weights=weights), expected)
    np.testing.assert_array_equal(
        fk.confusion_matrix(t, logits),
        sklearn_metrics.confusion_matrix(t, pred, labels=np.arange(k)))
    # class i is labels[i]: y_true on 1..4
    assert_close(fk.cohen_kappa(t + 1, logits, weights="quadratic"),
                 sk_kappa(t + 1, pred + 1, weights="quadratic", labels=np.arange(1, k + 1)))
    assert_close(fk.cohen_kappa(t + 1, logits, weights="quadratic", labels=[1, 2, 3, 4]),
                 sk_kappa(t + 1, pred + 1, weights="quadratic", labels=np.arange(1, k + 1)))


def test_cohen_kappa_probabilities_with_string_truth():
    # regression: string y_true with (n, K) scores was rejected as "strings vs numbers";
    # class i is the i-th sorted class of y_true (or labels[i])
    names = np.array(["cat", "dog", "eel"])
    t = [0, 1, 2, 1, 0, 2, 2]
    pred = [0, 1, 1, 1, 2, 2, 0]
    probs = np.eye(3)[pred] + 0.1
    assert_close(fk.cohen_kappa(names[t], probs), sk_kappa(t, pred))
    order = ["eel", "dog", "cat"]
    assert_close(fk.cohen_kappa(names[t], probs, labels=order, weights="linear"),
                 sk_kappa([order.index(v) for v in names[t]], pred, weights="linear"))
    with pytest.raises(ValueError, match="weighted kappa needs ordered classes"):
        fk.cohen_kappa(names[t], probs, weights="linear")
    scores = np.array(pred) + 0.2
    assert_close(fk.cohen_kappa(names[t], scores, thresholds=[0.5, 1.5]), sk_kappa(t, pred))


def test_cohen_kappa_probabilities_errors():
    probs = np.array([[0.1, 0.9, 0.0], [0.5, np.nan, 0.5], [0.2, 0.2, 0.6]])
    with pytest.raises(ValueError, match=r"NaN inside 1 row of probabilities"):
        fk.cohen_kappa([1, 0, 2], probs)
    with pytest.raises(ValueError, match=r"nan_policy does not apply inside a row"):
        fk.cohen_kappa([1, 0, 2], probs, nan_policy="omit")
    with pytest.raises(ValueError, match=r"4 columns but the sorted classes observed in "
                                         r"`y_true` number 3"):
        fk.cohen_kappa([0, 1, 2, 1], np.eye(4))
    with pytest.raises(ValueError, match=r"3 columns but the declared classes number 5"):
        fk.cohen_kappa([0, 1, 2], np.eye(3), n_classes=5)
    with pytest.raises(ValueError, match=r"`thresholds` cut 1-D scores"):
        fk.cohen_kappa([0, 1, 2], np.eye(3), thresholds=[0.5, 1.5])
    with pytest.raises(ValueError, match=r"at least one column"):
        fk.cohen_kappa([0, 1], np.zeros((2, 0)))
    with pytest.raises(ValueError, match="same length"):
        fk.cohen_kappa([0, 1], np.eye(3))


def test_cohen_kappa_thresholds_equal_searchsorted(rng):
    n = 500
    t = rng.integers(0, 4, n)
    scores = t + rng.normal(scale=0.7, size=n)
    th = np.array([0.4, 1.6, 2.5])
    pred = np.searchsorted(th, scores, side="right")
    for weights in WEIGHTS:
        expected = sk_kappa(t, pred, weights=weights, labels=np.arange(4))
        assert_close(fk.cohen_kappa(t, scores, thresholds=th, weights=weights), expected)
        assert_close(fk.cohen_kappa(t, scores.astype(np.float32), thresholds=list(th),
                                    weights=weights),
                     sk_kappa(t, np.searchsorted(th, scores.astype(np.float32), side="right"),
                              weights=weights, labels=np.arange(4)))
    # a score equal to a cut point goes above it
    assert fk.confusion_matrix([0, 1, 1], [0.4, 0.5, 1.0], thresholds=[0.5])[1].tolist() == [0, 2]
    # labels name the classes
    assert_close(fk.cohen_kappa(t + 1, scores, thresholds=th, labels=[1, 2, 3, 4],
                                weights="quadratic"),
                 sk_kappa(t, pred, weights="quadratic", labels=np.arange(4)))
    # NaN scores are missing values
    s2 = scores.copy()
    s2[[3, 9]] = np.nan
    keep = np.ones(n, bool)
    keep[[3, 9]] = False
    with pytest.raises(ValueError, match=r"2 rows hold a missing value .* `y_pred`"):
        fk.cohen_kappa(t, s2, thresholds=th)
    assert_close(fk.cohen_kappa(t, s2, thresholds=th, nan_policy="omit"),
                 sk_kappa(t[keep], pred[keep], labels=np.arange(4)))
    # integer scores are scores too
    assert_close(fk.cohen_kappa(t, t * 10, thresholds=[5, 15, 25]), 1.0)


@pytest.mark.parametrize(
    ("th", "match"),
    [
        ([1.5, 0.5], "strictly increasing"),
        ([0.5, 0.5], "strictly increasing"),
        ([0.5, np.nan], "finite"),
        ([[0.5, 1.5]], "non-empty 1-D"),
        ([], "non-empty 1-D"),
        (0.5, "non-empty 1-D"),
        ([0.5], r"1 cut points \(2 classes\) but the sorted classes observed in `y_true` "
                r"number 3"),
    ],
)
def test_cohen_kappa_bad_thresholds_raise(th, match):
    with pytest.raises(ValueError, match=match):
        fk.cohen_kappa([0, 1, 2, 2], [0.1, 0.7, 1.8, 1.2], thresholds=th)


def test_cohen_kappa_threshold_scores_must_be_numbers():
    with pytest.raises(ValueError, match=r"holds inf scores"):
        fk.cohen_kappa([0, 1, 2], [0.1, np.inf, 1.6], thresholds=[0.5, 1.5])
    with pytest.raises(ValueError, match=r"`thresholds` need numeric scores"):
        fk.cohen_kappa([0, 1, 2], ["a", "b", "c"], thresholds=[0.5, 1.5])


def test_cohen_kappa_object_non_integral_numbers_use_float_rules():
    # regression: [0.5, 1.5, None] (object) was taken as two classes 0.5 and 1.5, while
    # the same floats in a float array raise; both now follow the float rules
    t = [0, 1, 1, 0]
    p = np.array([0.2, 1.7, None, 0.4], dtype=object)
    with pytest.raises(ValueError, match="non-integral floats"):
        fk.cohen_kappa(t, p, nan_policy="omit")
    assert_close(fk.cohen_kappa(t, p, thresholds=[1.0], nan_policy="omit"),
                 float(reference_kappa([0, 1, 0], [0, 1, 0])))


def test_cohen_kappa_whole_float_ignore_index_on_integer_data():
    # regression: ignore_index=-1.0 was not recognised on integer data, so the -1 rows
    # became a class (inferred classes) or an "outside the classes" error (declared)
    t = [0, 1, -1, 1, 0]
    p = [0, 1, 1, 0, 0]
    expected = sk_kappa([0, 1, 1, 0], [0, 1, 0, 0])
    assert_close(fk.cohen_kappa(t, p, ignore_index=-1.0), expected)
    assert_close(fk.cohen_kappa(t, p, ignore_index=np.float32(-1.0), n_classes=2), expected)
    assert_close(fk.cohen_kappa(np.array(t, np.int8), p, ignore_index=-1.0, labels=[0, 1]),
                 expected)


def test_ignore_index_among_the_declared_classes_is_an_error(tmp_path):
    # rows where either side equals it were dropped: a model predicting the ignored
    # class on other rows was never penalised (QWK 1.0; torchmetrics, target side
    # only, 0.22)
    t = np.array([1, 2, 3, 1, 2, 3, 0, 0] * 5)
    p = np.array([0, 0, 0, 1, 2, 3, 0, 1] * 5)
    clash = r"`ignore_index` is 0, one of the declared classes .*target side only"
    calls = [
        lambda **kw: fk.cohen_kappa(t, p, weights="quadratic", **kw),
        lambda **kw: fk.confusion_matrix(t, p, **kw),
        lambda **kw: fk.kappa_ci(t, p, method="asymptotic", **kw),
        lambda **kw: fk.kappa_by_group(t, p, np.arange(40) % 2, **kw),
        lambda **kw: fk.compare(t, {"a": p, "b": p[::-1]}, method="asymptotic", **kw),
        lambda **kw: fk.optimize_thresholds(t, p + 0.3, **kw),
        lambda **kw: fk.CohenKappa(**kw.pop("decl")).update(t, p, **kw),
    ]
    for call in calls:
        for decl in (dict(n_classes=4), dict(labels=[0, 1, 2, 3])):
            kw = {"decl": decl} if call is calls[-1] else decl
            with pytest.raises(ValueError, match=clash):
                call(ignore_index=0, **kw)
    # an ordered Categorical declares its categories as labels= does
    cats = pytest.importorskip("pandas").Categorical
    with pytest.raises(ValueError, match="`ignore_index` is 'b', one of the declared"):
        fk.cohen_kappa(cats.from_codes(t, list("abcd"), ordered=True),
                       cats.from_codes(p, list("abcd"), ordered=True), ignore_index="b")
    # an empty streaming batch checks it too
    with pytest.raises(ValueError, match=clash):
        fk.CohenKappa(n_classes=4).update([], [], ignore_index=0)
    path = tmp_path / "rows.csv"
    path.write_text("y,p\n" + "\n".join(f"{a},{b}" for a, b in zip(t, p, strict=True)))
    with pytest.raises(ValueError, match=clash):
        fk.files.score_file(path, true="y", pred="p", n_classes=4, ignore_index=0)
    # outside the declared classes it drops rows as before; inferred classes are no
    # declaration
    keep = (t != 0) & (p != 0)
    want = sk_kappa(t[keep], p[keep], weights="quadratic")
    assert_close(fk.cohen_kappa(t, p, weights="quadratic", ignore_index=0), want)
    assert_close(fk.cohen_kappa(t, p, weights="quadratic", labels=[1, 2, 3],
                                ignore_index=0), want)
    assert_close(fk.files.score_file(path, true="y", pred="p", labels=[1, 2, 3],
                                     ignore_index=0, weights="quadratic"), want)


def test_decimal_labels_and_ids_keep_their_exact_value():
    # pyarrow / polars decimal columns (SQL and Parquet exports) went through float64:
    # 2**60 and 2**60 + 1 became one class, group or cluster
    pa = pytest.importorskip("pyarrow")
    from decimal import Decimal

    big = [Decimal(2**60), Decimal(2**60 + 1)]
    x = pa.array(big, type=pa.decimal128(38, 0))
    np.testing.assert_array_equal(fk.confusion_matrix(x, x), [[1, 0], [0, 1]])
    assert fk.cohen_kappa(x, x) == 1.0
    obj = np.array([*big, Decimal("1E+3")], dtype=object)
    np.testing.assert_array_equal(fk.confusion_matrix(obj, [2**60, 2**60 + 1, 1000]),
                                  np.eye(3, dtype=np.int64))
    groups = pa.array(big * 2, type=pa.decimal128(38, 0))
    res = fk.kappa_by_group([0, 1, 1, 0], [0, 1, 0, 0], groups)
    assert res.groups.tolist() == [2**60, 2**60 + 1]
    ids = pa.array([Decimal(2**60 + i % 40) for i in range(80)], type=pa.decimal128(38, 0))
    t = np.arange(80) % 3
    p = (t + (np.arange(80) % 5 == 0)) % 3
    assert_close(fk.kappa_ci(t, p, clusters=ids, method="asymptotic").standard_error,
                 fk.kappa_ci(t, p, clusters=np.arange(80) % 40,
                             method="asymptotic").standard_error)
    with pytest.raises(ValueError, match="integers beyond the int64 range"):
        fk.cohen_kappa(np.array([Decimal(2**70), Decimal(1)], dtype=object), [1, 1])
    with pytest.raises(ValueError, match="non-integral floats"):
        fk.cohen_kappa(np.array([Decimal("1.5"), Decimal(2)], dtype=object), [1, 2])


def test_null_or_nan_inside_an_arrow_dictionary_is_a_missing_value():
    # a TypeError from sorting None with strings, or NaN / None "outside the classes"
    pa = pytest.importorskip("pyarrow")
    cases = [
        (pa.array(["a", "b", None, "a"]).dictionary_encode(null_encoding="encode"),
         ["a", "b", "b", "a"]),
        (pa.array([1.0, 2.0, float("nan"), 1.0], from_pandas=False).dictionary_encode(),
         [1, 2, 2, 1]),
        (pa.array([1, 2, None, 1]).dictionary_encode(null_encoding="encode"), [1, 2, 2, 1]),
    ]
    # in several chunks pyarrow cannot unify such dictionaries (ArrowInvalid)
    chunked = pa.chunked_array([
        pa.array(["a", None]).dictionary_encode(null_encoding="encode"),
        pa.array(["b", "a", None, "c"]).dictionary_encode(null_encoding="encode")])
    assert fk.cohen_kappa(chunked, list("abbaac"), nan_policy="omit") == 1.0
    for arr, other in cases:
        with pytest.raises(ValueError, match="1 row holds a missing value"):
            fk.cohen_kappa(arr, other)
        assert fk.cohen_kappa(arr, other, nan_policy="omit") == 1.0
        np.testing.assert_array_equal(fk.confusion_matrix(other, arr, nan_policy="omit"),
                                      [[2, 0], [0, 1]])


def test_bytes_and_complex_values_are_refused_with_a_clear_message():
    # a NumPy bytes array was taken as strings and then failed with a TypeError
    # against str labels (b"a" == "a" is False); complex objects with a TypeError
    decode = r"unsupported type bytes \(b'a'\).*decode bytes to strings first"
    for bad in (np.array([b"a", b"b"]), [b"a", b"b"]):
        with pytest.raises(ValueError, match=decode):
            fk.cohen_kappa(bad, ["a", "b"])
    with pytest.raises(ValueError, match=r"`groups` holds a value of unsupported type bytes"):
        fk.kappa_by_group([1, 2], [1, 2], np.array([b"x", b"y"]))
    with pytest.raises(ValueError, match=r"`ratings\[:, 0\]` holds .* type bytes"):
        fk.fleiss_kappa(np.array([[b"a", b"b"], [b"a", b"a"]]))
    for bad in (np.array([1 + 2j, 1], dtype=object), [1 + 2j, None, 1]):
        with pytest.raises(ValueError, match=r"unsupported type complex"):
            fk.cohen_kappa(bad, [1] * len(bad), nan_policy="omit")
    with pytest.raises(ValueError, match=r"`groups` is 2-D with dtype <U1: labels and ids "
                       "must be 1-D"):
        fk.kappa_by_group([1, 2], [1, 2], np.array([["a", "b"], ["c", "d"]]))


def test_cohen_kappa_integers_beyond_int64_raise():
    # regression: Python ints past int64 went through float64 (merging 10**20 and
    # 10**20 + 1) or warned on an overflowing cast
    with pytest.raises(ValueError, match="integers beyond the int64 range"):
        fk.cohen_kappa([10**20, 10**20 + 1], [10**20, 10**20])
    with pytest.raises(ValueError, match="`labels` holds integers beyond the int64 range"):
        fk.cohen_kappa([1, 2], [1, 1], labels=[1, 2, 10**20])


def test_cohen_kappa_huge_whole_floats_are_labels():
    # regression: 1e300 was cast to int64 (an overflow warning); floats beyond 2**53
    # stay floats and still work as labels
    assert fk.cohen_kappa([1e300, 1.0, 1e300], [1.0, 1.0, 1e300]) == pytest.approx(
        sk_kappa([2, 1, 2], [1, 1, 2]))
    np.testing.assert_array_equal(fk.confusion_matrix([2.0**60, 2.0**60 + 256], [2.0**60] * 2),
                                  [[1, 0], [1, 0]])


def test_cohen_kappa_unhashable_labels_raise():
    pd = pytest.importorskip("pandas")
    # regression: a TypeError escaped from the string encoder
    with pytest.raises(ValueError, match="unsupported type list"):
        fk.cohen_kappa([0, 1], pd.Series([[1], [2]]))
    with pytest.raises(ValueError, match="unsupported type dict"):
        fk.cohen_kappa(np.array([{}, {}], dtype=object), [0, 1])


def test_cohen_kappa_sample_weight_at_float_limits():
    t, p = [0, 1, 1, 2], [0, 1, 0, 2]
    expected = sk_kappa(t, p)
    # regression: tiny weights underflowed the expected disagreement to 0 ("undefined")
    assert_close(fk.cohen_kappa(t, p, sample_weight=[1e-320] * 4), expected, rel=1e-9)
    assert_close(fk.cohen_kappa(t, p, weights="quadratic", sample_weight=[1e-300] * 4),
                 sk_kappa(t, p, weights="quadratic"), rel=1e-9)
    # huge weights whose products overflowed
    assert_close(fk.cohen_kappa(t, p, sample_weight=[1e200] * 4), expected)
    with pytest.raises(ValueError, match="sums past the float64 range; rescale"):
        fk.cohen_kappa(t, p, sample_weight=[1e308] * 4)
    # weights are numbers, not labels: uint64 above 2**63 is fine
    sw = np.array([2**63 + 2**11, 2**63, 2**63, 2**63], dtype=np.uint64)
    assert_close(fk.cohen_kappa(t, p, sample_weight=sw),
                 sk_kappa(t, p, sample_weight=sw.astype(float)))
    assert_close(fk.cohen_kappa(t, p, sample_weight=np.ones((4, 1))), expected)


def test_cohen_kappa_non_numeric_thresholds_raise():
    with pytest.raises(ValueError, match=r"`thresholds` must be numbers"):
        fk.cohen_kappa([0, 1], [0.2, 0.8], thresholds=["a"])
    with pytest.raises(ValueError, match=r"`thresholds` must be numbers"):
        fk.cohen_kappa([0, 1], [0.2, 0.8], thresholds=np.array(["0.5"], dtype=object))
    # numbers held as objects are numbers (Decimals, an object Series of floats)
    from decimal import Decimal

    for cuts in ([Decimal("1.0")], np.array([1.0], dtype=object)):
        assert fk.cohen_kappa([0, 1, 0, 1], [0.4, 1.6, 0.2, 1.1], thresholds=cuts) == 1.0


def test_encode_pair_row_indices_agree_with_the_table(rng):
    # the row-level view other modules build on: kept rows, dense indices, final classes
    from fastkappa._core.encode import encode_pair

    t = rng.integers(0, 4, 300) * 50
    p = np.where(rng.random(300) < 0.6, t, rng.integers(0, 4, 300) * 50)
    t[rng.random(300) < 0.1] = -1
    tf = t.astype(float)
    tf[rng.random(300) < 0.05] = np.nan
    sw = rng.random(300)
    for args in [dict(y_true=t, y_pred=p, ignore_index=-1),
                 dict(y_true=tf, y_pred=p, ignore_index=-1, nan_policy="omit",
                      sample_weight=sw)]:
        enc = encode_pair(**args)
        ti, pi, w = enc.indices()
        keep = enc.keep()
        k = enc.n_classes
        assert keep is not None and keep.sum() == len(ti) == enc.counts().sum()
        np.testing.assert_array_equal(np.bincount(ti * k + pi, minlength=k * k).reshape(k, k),
                                      enc.counts())
        assert enc.weights.shape == (k, k)
        if w is not None:
            np.testing.assert_allclose(
                np.bincount(ti * k + pi, weights=w, minlength=k * k).reshape(k, k),
                enc.confusion(), rtol=1e-12)
            np.testing.assert_array_equal(w, sw[keep])
        np.testing.assert_array_equal(enc.classes, [0, 50, 100, 150])


def test_cohen_kappa_nullable_integers_beyond_2_pow_53():
    # regression: nullable integers with nulls went through float64, which merged
    # 2**60 and 2**60 + 1 (pandas) or raised ArrowInvalid (pyarrow)
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    pl = pytest.importorskip("polars")
    t = [2**60, 2**60 + 1, None, 2**60 + 1]
    p = [2**60, 2**60, 2**60, 2**60 + 1]
    expected = sk_kappa([0, 1, 1], [0, 0, 1])
    for col in (pd.Series(t, dtype="Int64"), pa.array(t), pl.Series(t)):
        np.testing.assert_array_equal(fk.confusion_matrix(col, p, nan_policy="omit"),
                                      [[1, 0], [1, 1]])
        assert_close(fk.cohen_kappa(col, p, nan_policy="omit", weights="linear"), expected)


def test_ragged_confusion_table_is_named():
    for f in (fk.kappa_from_confusion, fk.kappa_ci_from_confusion):
        with pytest.raises(ValueError, match=r"square \(K, K\) array of counts; its rows "
                                             r"have different lengths"):
            f([[20, 5], [10]])


def _label_arguments(bad):
    """Calls that pass ``bad`` as each labels, weights or ids argument, by name."""
    t, p = [0, 1, 1, 0], [0, 1, 0, 0]
    return {
        "y_true": lambda: fk.cohen_kappa(bad, p),
        "y_pred": lambda: fk.cohen_kappa(t, bad),
        "labels": lambda: fk.cohen_kappa(t, p, labels=bad),
        "sample_weight": lambda: fk.cohen_kappa(t, p, sample_weight=bad),
        "frequency_weight": lambda: fk.cohen_kappa(t, p, frequency_weight=bad),
        "groups": lambda: fk.kappa_by_group(t, p, bad),
        "clusters": lambda: fk.kappa_ci(t, p, clusters=bad, method="asymptotic"),
        "scores": lambda: fk.optimize_thresholds(t, bad),
    }


def test_polars_lazy_frames_and_expressions_are_refused_by_name():
    # regression: AttributeError: 'LazyFrame' object has no attribute 'dtype'
    pl = pytest.importorskip("polars")
    for bad, what in ((pl.DataFrame({"x": [0, 1, 1, 0]}).lazy(), "LazyFrame"),
                      (pl.col("x"), "expression")):
        for name, call in _label_arguments(bad).items():
            with pytest.raises(ValueError, match=rf"`{name}` is a polars {what}.*collect it "
                                                 "first"):
                call()


def test_pandas_multiindex_is_refused_by_name():
    # regression: pandas' NotImplementedError (initializing a Series from a MultiIndex)
    pd = pytest.importorskip("pandas")
    bad = pd.MultiIndex.from_arrays([[0, 1, 1, 0], [1, 1, 0, 0]])
    for name, call in _label_arguments(bad).items():
        with pytest.raises(ValueError, match=rf"`{name}` is a pandas MultiIndex.*pass one "
                                             r"level \(e.g. index.get_level_values\(0\)\)"):
            call()


def test_ragged_nested_lists_are_refused_by_name():
    # regression: NumPy's "setting an array element with a sequence", naming nothing
    bad = [[1, 2], [3]]
    for name, call in _label_arguments(bad).items():
        with pytest.raises(ValueError, match=rf"`{name}` is a ragged nested list \(its rows "
                                             r"differ in length\); pass a flat list"):
            call()
    with pytest.raises(ValueError, match=r"`y_true` is a ragged nested list"):
        fk.cohen_kappa(bad, [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match=r"`y_pred` is a ragged nested list"):
        fk.cohen_kappa([[1, 2], [3, 4]], bad)
    with pytest.raises(ValueError, match=r"`sample_weight` is a ragged nested list"):
        fk.cohen_kappa([[1, 2], [3, 4]], [[1, 2], [3, 4]], sample_weight=bad)
    with pytest.raises(ValueError, match=r"`predictions\['b'\]` is a ragged nested list"):
        fk.compare([[1, 2], [3, 4]], {"a": [[1, 2], [3, 4]], "b": bad}, method="asymptotic")


@pytest.mark.parametrize("bad", [np.zeros(3), ["raise"], 1, None])
def test_nan_policy_must_be_a_string(bad):
    # regression: an array gave "The truth value of an array ... is ambiguous"
    shown = type(bad).__name__ if isinstance(bad, (np.ndarray, list)) else repr(bad)
    with pytest.raises(ValueError, match=rf"`nan_policy` must be 'raise' or 'omit'; got "
                                         rf"{shown}\."):
        fk.cohen_kappa([0, 1], [0, 1], nan_policy=bad)


def test_weight_messages_say_what_weights_may_be():
    # regression: complex weights were told to be "integers, floats, booleans or strings"
    t, p = [0, 1, 1, 0], [0, 1, 0, 0]
    for kw in ("sample_weight", "frequency_weight"):
        with pytest.raises(ValueError, match=rf"`{kw}` has unsupported dtype complex128; pass "
                                             r"real numbers \(integers, floats or booleans\)\.$"):
            fk.cohen_kappa(t, p, **{kw: np.ones(4, dtype=complex)})
    with pytest.raises(ValueError, match="booleans or strings"):  # labels may be strings
        fk.cohen_kappa(np.ones(4, dtype=complex), p)


def test_missing_weights_are_named_missing_not_non_finite():
    # regression: a null weight was reported as "must be finite (it holds nan or inf)"
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    pl = pytest.importorskip("polars")
    t, p = [0, 1, 1, 0], [0, 1, 0, 0]
    cases = [pd.array([1, None, 1, 1], dtype="Int64"), pd.Series([1.0, None, 1, 1],
             dtype="Float64"), pa.array([1, None, 1, 1]), pa.chunked_array([[1, None], [1, 1]]),
             pl.Series([1, None, 1, 1]), [1, pd.NA, 1, 1]]
    for w in cases:
        with pytest.raises(ValueError, match=r"`sample_weight` holds 1 missing value .*a "
                                             "weight cannot be missing. Fill them"):
            fk.cohen_kappa(t, p, sample_weight=w)
        with pytest.raises(ValueError, match=r"`frequency_weight` holds 1 missing value .*a "
                                             "count cannot be missing. Fill them"):
            fk.cohen_kappa(t, p, frequency_weight=w)
    # NaN in a float array stays a non-finite number
    with pytest.raises(ValueError, match="must be finite"):
        fk.cohen_kappa(t, p, sample_weight=pd.Series([1.0, np.nan, 1, 1]))


def test_object_weights_matrix_must_be_numeric():
    # regression: "`weights` must be None, 'linear', 'quadratic' or ...; got ndarray"
    w = np.array([[0, 1], [1, 0]], dtype=object)
    with pytest.raises(ValueError, match=r"a custom `weights` matrix must be numeric; got "
                                         r"dtype object\. Pass a \(K, K\) array of numbers"):
        fk.cohen_kappa([0, 1, 1], [0, 1, 0], weights=w)
    with pytest.raises(ValueError, match="must be numeric; got dtype <U1"):
        fk.cohen_kappa([0, 1, 1], [0, 1, 0], weights=[["a", "b"], ["c", "d"]])
    with pytest.raises(ValueError, match=r"`weights` is a ragged nested list \(its rows "
                                         r"differ in length\); pass a \(K, K\) array"):
        fk.cohen_kappa([0, 1, 1], [0, 1, 0], weights=[[0, 1], [1]])


def test_ordered_arrow_dictionary_in_pandas_keeps_its_order():
    # regression: read through pandas' ArrowDtype as unordered strings ("no declared order")
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    t = pa.DictionaryArray.from_arrays(pa.array([0, 1, 0, 2, 1], pa.int8()),
                                       pa.array(["lo", "mid", "hi"]), ordered=True)
    p = pa.DictionaryArray.from_arrays(pa.array([0, 2, 0, 2, 0], pa.int8()),
                                       pa.array(["lo", "mid", "hi"]), ordered=True)
    as_pandas = [pd.Series(pd.arrays.ArrowExtensionArray(x)) for x in (t, p)]
    for weights in WEIGHTS:
        expected = sk_kappa([0, 1, 0, 2, 1], [0, 2, 0, 2, 0], weights=weights)
        assert_close(fk.cohen_kappa(*as_pandas, weights=weights), expected)
        assert_close(fk.cohen_kappa(t, p, weights=weights), expected)
    np.testing.assert_array_equal(fk.confusion_matrix(*as_pandas).shape, (3, 3))
    unordered = pd.Series(pd.arrays.ArrowExtensionArray(t.cast(
        pa.dictionary(pa.int8(), pa.string(), ordered=False))))
    with pytest.raises(ValueError, match="no declared order"):
        fk.cohen_kappa(unordered, unordered, weights="quadratic")
