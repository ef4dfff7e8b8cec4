"""Property tests: random inputs, and only documented outcomes.

For random label sets, containers, dtypes, strides, missing values, ignored
rows, declarations, weights and sample weights, ``cohen_kappa`` either
returns the value the slow reference computes on the rows that should be
kept, or raises ``ValueError`` exactly when the input is documented as bad.
Never another exception, never a silent drop.

The containers on the two sides share a dtype and layout so that the set of
compiled kernel signatures stays small (each new one costs a compile).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from naive import is_missing, kept_rows, reference_kappa

import fastkappa as fk
from fastkappa import UndefinedKappaWarning

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pl = pytest.importorskip("polars")

SETTINGS = settings(deadline=None, max_examples=150,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

STRING_POOL = ["none", "mild", "moderate", "severe", "prolif", "a", "b", "Z", "é", ""]


@st.composite
def label_scales(draw):
    """(kind, K distinct class values in scale order)."""
    kind = draw(st.sampled_from(["zero", "offset", "sparse", "str", "float"]))
    k = draw(st.integers(1, 7))
    if kind == "zero":
        return kind, list(range(k))
    if kind == "offset":
        lo = draw(st.integers(-40, 40))
        return kind, list(range(lo, lo + k))
    if kind == "sparse":
        return kind, sorted(draw(st.sets(st.integers(-120, 120), min_size=k, max_size=k)))
    if kind == "float":
        return kind, [float(v) for v in sorted(draw(st.sets(st.integers(-50, 50), min_size=k,
                                                            max_size=k)))]
    return kind, draw(st.lists(st.sampled_from(STRING_POOL), min_size=k, max_size=k,
                               unique=True))


def _container(values, kind, container, dtype, strided):
    """Wrap a list of labels (None = missing) in the chosen container."""
    has_missing = any(v is None for v in values)
    if container == "list":
        return list(values)
    if container == "numpy":
        if kind == "str":
            return np.array(values, dtype=object)
        if has_missing or kind == "float":
            arr = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
        else:
            arr = np.array(values, dtype=dtype)
        if strided:  # a view with stride 2: the kernels must read it in place
            wide = np.empty(2 * len(arr), dtype=arr.dtype)
            wide[::2] = arr
            return wide[::2]
        return arr
    if container == "pandas":
        if kind == "str":
            return pd.Series(values, dtype="string")
        if kind == "float":
            return pd.Series(values, dtype="Float64")
        return pd.Series(values, dtype="Int64")
    if container == "pyarrow":
        if kind == "str":
            return pa.array(values, pa.string()).dictionary_encode() if strided else pa.array(
                values, pa.string())
        arr = pa.array(values, pa.float64() if kind == "float" else pa.int64())
        return pa.chunked_array([arr[: len(arr) // 2], arr[len(arr) // 2:]])
    if container == "polars":
        if kind == "str":
            return pl.Series(values, dtype=pl.String)
        return pl.Series(values, dtype=pl.Float64 if kind == "float" else pl.Int64)
    raise AssertionError(container)


@st.composite
def scoring_problems(draw):
    kind, scale = draw(label_scales())
    n = draw(st.integers(1, 40))
    declare = draw(st.sampled_from(["none", "labels", "n_classes"] if kind == "zero"
                                   else ["none", "labels"]))
    pool = list(scale)
    # an extra value: outside the declared classes (an error), or one more class
    extra = None
    if draw(st.booleans()):
        extra = "zzz" if kind == "str" else (float(max(scale) + 3) if kind == "float"
                                             else max(scale) + 3)
        pool.append(extra)
    ignore = None
    if draw(st.booleans()):
        ignore = "??" if kind == "str" else -999
    nan_policy = draw(st.sampled_from(["raise", "omit"]))
    missing_rate = draw(st.sampled_from([0.0, 0.0, 0.15]))

    def column():
        out = []
        for _ in range(n):
            r = draw(st.floats(0, 1))
            if r < missing_rate:
                out.append(None)
            elif ignore is not None and r > 0.9:
                out.append(ignore)
            else:
                out.append(draw(st.sampled_from(pool)))
        return out

    y_true = column()
    # the second rater agrees often, so that kappa is not always near 0
    y_pred = [a if draw(st.integers(0, 2)) else b for a, b in zip(y_true, column(), strict=True)]
    weights = draw(st.sampled_from([None, "linear", "quadratic", "custom"]))
    sample_weight = None
    if draw(st.booleans()):
        sample_weight = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.25]),
                                      min_size=n, max_size=n))
    container = draw(st.sampled_from(["list", "numpy", "pandas", "pyarrow", "polars"]))
    dtype = draw(st.sampled_from([np.int64, np.int8]))
    if kind != "str" and dtype == np.int8 and any(
            isinstance(v, (int, float)) and not -128 <= v <= 127 for v in [*pool, ignore or 0]):
        dtype = np.int64
    strided = draw(st.booleans())
    shuffle_labels = draw(st.booleans())
    labels = None
    n_classes = None
    if declare == "labels":
        labels = list(scale)
        if shuffle_labels:
            labels = labels[::-1]
    elif declare == "n_classes":
        n_classes = len(scale)
    return dict(kind=kind, y_true=y_true, y_pred=y_pred, labels=labels, n_classes=n_classes,
                ignore=ignore, nan_policy=nan_policy, weights=weights,
                sample_weight=sample_weight, container=container, dtype=dtype,
                strided=strided, custom_seed=draw(st.integers(0, 2**16)))


def _expected(prob):
    """('error', None) when a ValueError is documented, else ('value', kappa or None)."""
    t, p = prob["y_true"], prob["y_pred"]
    ignore = prob["ignore"]
    missing = any(is_missing(a) or is_missing(b) for a, b in zip(t, p, strict=True)
                  if not (ignore is not None and (a == ignore or b == ignore)))
    if missing and prob["nan_policy"] == "raise":
        return "error", "missing"
    kt, kp, kw = kept_rows(t, p, ignore_index=ignore, sample_weight=prob["sample_weight"])
    if not kt:
        return "error", "empty"
    if prob["sample_weight"] is not None and not any(w > 0 for w in prob["sample_weight"]):
        return "error", "zero weights"
    if kw is not None and not any(w > 0 for w in kw):
        return "error", "zero weights"
    declared = prob["labels"] if prob["labels"] is not None else (
        list(range(prob["n_classes"])) if prob["n_classes"] is not None else None)
    if prob["weights"] is not None and prob["kind"] == "str" and declared is None:
        return "error", "unordered"
    if declared is not None and not set(kt) | set(kp) <= set(declared):
        return "error", "outside"
    classes = declared if declared is not None else sorted(set(kt) | set(kp))
    return "value", classes


def _custom_matrix(k, seed):
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 5, (k, k)).astype(float)
    np.fill_diagonal(w, 0.0)
    if k > 1 and not w.max() > 0:
        w[0, 1] = 1.0
    return w


def _wrap(prob, values):
    return _container(values, prob["kind"], prob["container"], prob["dtype"], prob["strided"])


@SETTINGS
@given(scoring_problems())
def test_cohen_kappa_random_inputs_match_reference_or_raise_documented(prob):
    outcome, info = _expected(prob)
    weights = prob["weights"]
    if weights == "custom":
        k = len(info) if outcome == "value" else 2
        weights = _custom_matrix(k, prob["custom_seed"])
    kwargs = dict(weights=weights, labels=prob["labels"], n_classes=prob["n_classes"],
                  sample_weight=prob["sample_weight"], ignore_index=prob["ignore"],
                  nan_policy=prob["nan_policy"])
    t = _wrap(prob, prob["y_true"])
    p = _wrap(prob, prob["y_pred"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = fk.cohen_kappa(t, p, **kwargs)
        except ValueError as exc:
            if outcome == "error":
                return
            raise AssertionError(f"unexpected ValueError: {exc}") from exc
    assert outcome == "value", f"expected a ValueError ({info}); got {got!r}"
    w_ref = weights.tolist() if isinstance(weights, np.ndarray) else weights
    expected = reference_kappa(prob["y_true"], prob["y_pred"], weights=w_ref, labels=info,
                               sample_weight=prob["sample_weight"], ignore_index=prob["ignore"])
    undefined = [w for w in caught if issubclass(w.category, UndefinedKappaWarning)]
    if expected is None:
        assert math.isnan(got) and undefined
    else:
        assert not undefined
        assert math.isclose(got, float(expected), rel_tol=1e-9, abs_tol=1e-9), (got, expected)
    assert not [w for w in caught if not issubclass(w.category, UndefinedKappaWarning)]


@SETTINGS
@given(scoring_problems())
def test_confusion_matrix_random_inputs_match_reference_or_raise_documented(prob):
    outcome, info = _expected(prob)
    if info == "unordered":  # the confusion matrix needs no order
        outcome, info = "value", sorted(set(kept_rows(prob["y_true"], prob["y_pred"],
                                                      ignore_index=prob["ignore"])[0])
                                        | set(kept_rows(prob["y_true"], prob["y_pred"],
                                                        ignore_index=prob["ignore"])[1]))
    t = _wrap(prob, prob["y_true"])
    p = _wrap(prob, prob["y_pred"])
    try:
        cm = fk.confusion_matrix(t, p, labels=prob["labels"], n_classes=prob["n_classes"],
                                 sample_weight=prob["sample_weight"],
                                 ignore_index=prob["ignore"], nan_policy=prob["nan_policy"])
    except ValueError as exc:
        if outcome == "error":
            return
        raise AssertionError(f"unexpected ValueError: {exc}") from exc
    assert outcome == "value", f"expected a ValueError ({info})"
    kt, kp, kw = kept_rows(prob["y_true"], prob["y_pred"], ignore_index=prob["ignore"],
                           sample_weight=prob["sample_weight"])
    index = {c: i for i, c in enumerate(info)}
    expected = np.zeros((len(info), len(info)))
    for r, (a, b) in enumerate(zip(kt, kp, strict=True)):
        expected[index[a], index[b]] += 1 if kw is None else kw[r]
    assert cm.shape == expected.shape
    np.testing.assert_allclose(cm, expected, rtol=1e-12)
    assert cm.dtype == (np.float64 if prob["sample_weight"] is not None else np.int64)


@SETTINGS
@given(
    # K = 1 is left out: (n, 1) scores are an (n, 1) column, which is flattened
    k=st.integers(2, 6),
    n=st.integers(1, 30),
    seed=st.integers(0, 2**16),
    weights=st.sampled_from([None, "linear", "quadratic"]),
    offset=st.integers(-3, 3),
    use_thresholds=st.booleans(),
)
def test_cohen_kappa_scores_equal_argmax_or_searchsorted(k, n, seed, weights, offset,
                                                        use_thresholds):
    rng = np.random.default_rng(seed)
    labels = list(range(offset, offset + k))
    y_true = rng.choice(labels, n)
    if use_thresholds:
        scores = rng.normal(size=n) * k
        th = np.sort(rng.choice(np.arange(-3 * k, 3 * k), size=k - 1, replace=False)) + 0.5
        pred_idx = np.searchsorted(th, scores, side="right")
        call = dict(y_pred=scores, thresholds=th)
    else:
        scores = rng.normal(size=(n, k))
        pred_idx = np.argmax(scores, axis=1)
        call = dict(y_pred=scores)
    expected = reference_kappa(y_true.tolist(), [labels[i] for i in pred_idx], weights=weights,
                               labels=labels)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = fk.cohen_kappa(y_true, labels=labels, weights=weights, **call)
    if expected is None:
        assert math.isnan(got)
        assert any(issubclass(w.category, UndefinedKappaWarning) for w in caught)
    else:
        assert math.isclose(got, float(expected), rel_tol=1e-9, abs_tol=1e-9)


# --------------------------------------------------------------------------- whole floats

@st.composite
def whole_float_labels(draw):
    """Whole-number floats (pandas' integers with a null): NaN, negative values,
    -0.0, narrow and wide ranges (the bincount and the sort branch), and
    magnitudes up to just below 2^53."""
    dtype = draw(st.sampled_from([np.float64, np.float32, np.float16]))
    n = draw(st.integers(1, 60))
    span = draw(st.sampled_from([3, 40, 2**23, 2**52]))
    if dtype is np.float16:
        span = min(span, 2**11)
    elif dtype is np.float32:
        span = min(span, 2**24)
    lo = draw(st.integers(-span, span))
    vals = draw(st.lists(st.integers(lo, lo + span), min_size=n, max_size=n))
    v = np.array(vals, dtype=np.float64).astype(dtype)
    v[v == 0] = draw(st.sampled_from([0.0, -0.0]))
    nan = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    v[np.array(nan)] = np.nan
    return v


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(whole_float_labels())
def test_whole_floats_encode_as_the_float_path(v):
    # the O(N) conversion must give float_codes' classes and codes exactly
    from fastkappa._core.columns import FloatColumn, IntColumn
    from fastkappa._core.encoding import float_codes, whole_float_column

    col = FloatColumn(v)
    got = whole_float_column(col)
    if np.isnan(v).all():
        assert got is col
        return
    want = float_codes(col, "y")
    assert want.categories.dtype == np.int64
    expected = np.where(want.codes >= 0, want.categories[np.maximum(want.codes, 0)], -1)
    if isinstance(got, IntColumn):
        assert not np.isnan(v).any()
        assert got.values.dtype == np.int64
        np.testing.assert_array_equal(got.values, expected)
    else:
        assert got.categories.dtype == np.int64
        np.testing.assert_array_equal(got.categories, want.categories)
        np.testing.assert_array_equal(got.codes, want.codes)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(whole_float_labels(), st.randoms(use_true_random=False))
def test_whole_float_labels_score_as_integers(v, rnd):
    # against scikit-learn on the integer labels of the rows without NaN
    metrics = pytest.importorskip("sklearn.metrics")
    p = v.copy()
    order = list(range(len(v)))
    rnd.shuffle(order)
    p = p[order]
    keep = ~(np.isnan(v) | np.isnan(p))
    if keep.sum() < 2:
        return
    t_int, p_int = v[keep].astype(np.int64), p[keep].astype(np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedKappaWarning)
        got = fk.cohen_kappa(v, p, nan_policy="omit")
        cm = fk.confusion_matrix(v, p, nan_policy="omit")
        # scikit-learn's 0/0 and its single-label notice
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)
        want = metrics.cohen_kappa_score(t_int, p_int)
        labels = np.union1d(t_int, p_int)
        want_cm = metrics.confusion_matrix(t_int, p_int, labels=labels)
    if math.isnan(want):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(want, abs=1e-12)
    np.testing.assert_array_equal(cm, want_cm)
