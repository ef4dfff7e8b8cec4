"""Core scoring API against independent oracles.

scikit-learn's ``cohen_kappa_score``/``confusion_matrix`` for what it covers,
the loops in ``naive.py`` for the rest (custom asymmetric weights, exact
fractions), and the five-sums closed form for QWK.
"""

from __future__ import annotations

import inspect
import math
import subprocess
import sys
import tracemalloc
import warnings
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import numpy as np
import pytest
from naive import (
    confusion_dict,
    kappa_from_table,
    qwk_five_sums,
    reference_kappa,
)

import fastkappa as fk
from fastkappa import UndefinedKappaWarning

sklearn_metrics = pytest.importorskip("sklearn.metrics")

WEIGHTS = [None, "linear", "quadratic"]
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def sk_kappa(y1, y2, **kw) -> float:
    """scikit-learn's kappa with its own warnings silenced (it warns on undefined)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(sklearn_metrics.cohen_kappa_score(y1, y2, **kw))


def sk_confusion(y1, y2, **kw) -> np.ndarray:
    return sklearn_metrics.confusion_matrix(y1, y2, **kw)


def label_set(name: str, k: int, rng: np.random.Generator) -> np.ndarray:
    """K distinct class values of a named shape."""
    if name == "zero_based":
        return np.arange(k)
    if name == "one_based":
        return np.arange(1, k + 1)
    if name == "sparse":  # e.g. {3, 10, 200}
        if k == 3:
            return np.array([3, 10, 200])
        return np.sort(rng.choice(np.arange(2, 120), size=k, replace=False))
    if name == "negative":
        return np.sort(rng.choice(np.arange(-100, 100), size=k, replace=False))
    raise AssertionError(name)


def rated_pair(rng, k: int, n: int, agree: float = 0.6) -> tuple[np.ndarray, np.ndarray]:
    """Class indices of two raters who agree on about ``agree`` of the rows."""
    t = rng.integers(0, k, n)
    p = np.where(rng.random(n) < agree, t, rng.integers(0, k, n))
    return t, p


def fits(values: np.ndarray, dtype) -> bool:
    info = np.iinfo(dtype)
    return values.min() >= info.min and values.max() <= info.max


def assert_close(a: float, b: float, rel: float = 1e-12, abs_: float = 1e-12) -> None:
    assert math.isclose(a, b, rel_tol=rel, abs_tol=abs_), (a, b)


# --------------------------------------------------------------------------- sklearn parity


@pytest.mark.parametrize(
    ("dtype", "label_kind"),
    [(d, kind) for d in INT_DTYPES for kind in ("zero_based", "one_based", "sparse", "negative")
     if not (kind == "negative" and np.dtype(d).kind == "u")],
    ids=lambda v: np.dtype(v).name if isinstance(v, type) else v,
)
def test_cohen_kappa_matches_sklearn_every_int_dtype(dtype, label_kind, rng):
    checked = 0
    for k in (2, 5, 30):
        values = label_set(label_kind, k, rng)
        if not fits(values, dtype):
            continue
        ti, pi = rated_pair(rng, k, 600)
        t64, p64 = values[ti], values[pi]
        t, p = t64.astype(dtype), p64.astype(dtype)
        sw = rng.random(600)
        for weights in WEIGHTS:
            assert_close(fk.cohen_kappa(t, p, weights=weights),
                         sk_kappa(t64, p64, weights=weights))
            assert_close(fk.cohen_kappa(t, p, weights=weights, sample_weight=sw),
                         sk_kappa(t64, p64, weights=weights, sample_weight=sw), rel=1e-10)
            assert_close(fk.cohen_kappa_score(t, p, weights=weights),
                         sk_kappa(t64, p64, weights=weights))
            # declared scale, one unobserved class past the top
            labels = [*values.tolist(), int(values.max()) + 1] if fits(
                np.array([values.max() + 1]), dtype) else values.tolist()
            assert_close(fk.cohen_kappa(t, p, weights=weights, labels=labels),
                         sk_kappa(t64, p64, weights=weights, labels=labels))
            if label_kind == "zero_based":
                assert_close(fk.cohen_kappa(t, p, weights=weights, n_classes=k + 2),
                             sk_kappa(t64, p64, weights=weights, labels=np.arange(k + 2)))
        cm = fk.confusion_matrix(t, p)
        np.testing.assert_array_equal(cm, sk_confusion(t64, p64))
        assert cm.dtype == np.int64
        cmw = fk.confusion_matrix(t, p, sample_weight=sw)
        np.testing.assert_allclose(cmw, sk_confusion(t64, p64, sample_weight=sw), rtol=1e-12)
        assert cmw.dtype == np.float64
        checked += 1
    assert checked >= 1


def test_cohen_kappa_matches_sklearn_bool(rng):
    t = rng.random(500) < 0.4
    p = np.where(rng.random(500) < 0.7, t, rng.random(500) < 0.5)
    for weights in WEIGHTS:
        assert_close(fk.cohen_kappa(t, p, weights=weights), sk_kappa(t, p, weights=weights))
    np.testing.assert_array_equal(fk.confusion_matrix(t, p), sk_confusion(t, p))
    # bool on one side, integers on the other
    assert_close(fk.cohen_kappa(t, p.astype(np.int64)), sk_kappa(t.astype(int), p.astype(int)))


@pytest.mark.parametrize("weights", WEIGHTS)
def test_cohen_kappa_non_contiguous_views(weights, rng):
    a = rng.integers(0, 5, (3000, 3))
    f = np.asfortranarray(a)
    expected = sk_kappa(a[:, 0], a[:, 1], weights=weights)
    for t, p in [
        (a[:, 0], a[:, 1]),  # columns of a C array: stride 24 bytes
        (f[:, 0], f[:, 1]),  # columns of a Fortran array: contiguous
        (a[:, :1], a[:, 1:2]),  # (n, 1) columns are flattened
        (a[:, 0].reshape(-1, 1), a[:, 1]),
    ]:
        assert_close(fk.cohen_kappa(t, p, weights=weights), expected)
        assert_close(fk.cohen_kappa(t, p, weights=weights, n_classes=5), expected)
    small = a.astype(np.int8)
    for t, p in [(small[::3, 0], small[::3, 2]), (small[::-1, 0], small[::-1, 2]),
                 (small[::7, 1], a[::7, 2])]:
        exp = sk_kappa(t.astype(int), p.astype(int), weights=weights)
        assert_close(fk.cohen_kappa(t, p, weights=weights), exp)
        assert_close(fk.cohen_kappa(t, p, weights=weights, labels=[0, 1, 2, 3, 4]), exp)
        np.testing.assert_array_equal(fk.confusion_matrix(t, p),
                                      sk_confusion(t.astype(int), p.astype(int)))


@pytest.mark.parametrize("weights", WEIGHTS)
def test_cohen_kappa_whole_number_floats_match_sklearn(weights, rng):
    ti, pi = rated_pair(rng, 6, 400)
    for dtype in (np.float16, np.float32, np.float64):
        t, p = (ti + 1).astype(dtype), (pi + 1).astype(dtype)
        assert_close(fk.cohen_kappa(t, p, weights=weights),
                     sk_kappa(ti + 1, pi + 1, weights=weights))
    # floats against integers: 2.0 and 2 are one class
    assert_close(fk.cohen_kappa(ti.astype(float), pi, weights=weights),
                 sk_kappa(ti, pi, weights=weights))


def test_cohen_kappa_strings_unweighted_match_sklearn(rng):
    names = np.array(["none", "mild", "moderate", "severe"])
    ti, pi = rated_pair(rng, 4, 400)
    t, p = names[ti], names[pi]
    assert_close(fk.cohen_kappa(t, p), sk_kappa(t, p))
    assert_close(fk.cohen_kappa(t.tolist(), p.astype(object)), sk_kappa(t, p))
    np.testing.assert_array_equal(fk.confusion_matrix(t, p), sk_confusion(t, p))


@pytest.mark.parametrize("k", [2, 3, 7, 16, 30])
def test_cohen_kappa_every_k_with_sample_weight(k, rng):
    ti, pi = rated_pair(rng, k, 2000, agree=0.3)
    sw = rng.exponential(size=2000)
    sw[rng.random(2000) < 0.1] = 0.0
    for weights in WEIGHTS:
        assert_close(fk.cohen_kappa(ti, pi, weights=weights, sample_weight=sw),
                     sk_kappa(ti, pi, weights=weights, sample_weight=sw), rel=1e-10)
        # integer-valued weights act as repeated rows, exactly
        reps = rng.integers(0, 4, 2000)
        reps[0] = 1
        assert_close(fk.cohen_kappa(ti, pi, weights=weights, sample_weight=reps),
                     fk.cohen_kappa(np.repeat(ti, reps), np.repeat(pi, reps), weights=weights,
                                    labels=np.unique(np.r_[ti, pi])), rel=1e-10)


def test_cohen_kappa_zero_weight_rows_still_declare_classes():
    # class 2 occurs only in a zero-weight row: it still counts as a class (sklearn's rule)
    t = [0, 1, 0, 2]
    p = [0, 1, 1, 2]
    sw = [1.0, 1.0, 1.0, 0.0]
    cm = fk.confusion_matrix(t, p, sample_weight=sw)
    assert cm.shape == (3, 3)
    np.testing.assert_allclose(cm, sk_confusion(t, p, sample_weight=sw))
    for weights in WEIGHTS:
        assert_close(fk.cohen_kappa(t, p, weights=weights, sample_weight=sw),
                     sk_kappa(t, p, weights=weights, sample_weight=sw))


def test_cohen_kappa_score_has_sklearn_signature():
    ours = inspect.signature(fk.cohen_kappa_score).parameters
    theirs = inspect.signature(sklearn_metrics.cohen_kappa_score).parameters
    assert list(ours) == list(theirs)
    for name, param in theirs.items():
        mine = ours[name]
        assert mine.kind == param.kind, name
        if isinstance(param.default, float) and math.isnan(param.default):
            assert isinstance(mine.default, float) and math.isnan(mine.default)
        else:
            assert mine.default == param.default, name


def test_cohen_kappa_score_matches_sklearn_keywords(rng):
    ti, pi = rated_pair(rng, 5, 300)
    sw = rng.random(300)
    for weights in WEIGHTS:
        for labels in (None, [0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [0, 1, 2, 3, 4, 5, 6]):
            kw = dict(labels=labels, weights=weights, sample_weight=sw)
            assert_close(fk.cohen_kappa_score(ti, pi, **kw), sk_kappa(ti, pi, **kw), rel=1e-10)
    # positional use, as in sklearn
    assert_close(fk.cohen_kappa_score(ti, pi), sk_kappa(ti, pi))


# --------------------------------------------------------------------------- custom weights


def test_cohen_kappa_custom_asymmetric_weights_match_reference(rng):
    for k in (2, 3, 6):
        ti, pi = rated_pair(rng, k, 300, agree=0.4)
        w = rng.integers(0, 7, (k, k)).astype(float)
        np.fill_diagonal(w, 0.0)
        w[0, -1] = 5.0  # positive maximum, asymmetric
        w[-1, 0] = 1.0
        table = confusion_dict(ti.tolist(), pi.tolist(), list(range(k)))
        expected = kappa_from_table(table, w.tolist())
        assert_close(fk.cohen_kappa(ti, pi, weights=w), float(expected))
        assert_close(fk.kappa_from_confusion(np.array(table), w), float(expected))
        # transposing the data transposes the matrix
        assert_close(fk.cohen_kappa(pi, ti, weights=w.T), float(expected))


def test_cohen_kappa_custom_matrix_equals_named_weights(rng):
    ti, pi = rated_pair(rng, 5, 400)
    idx = np.arange(5)
    assert_close(fk.cohen_kappa(ti, pi, weights=np.abs(idx[:, None] - idx[None, :])),
                 fk.cohen_kappa(ti, pi, weights="linear"))
    assert_close(fk.cohen_kappa(ti, pi, weights=3.5 * (idx[:, None] - idx[None, :]) ** 2),
                 fk.cohen_kappa(ti, pi, weights="quadratic"))
    assert_close(fk.cohen_kappa(ti, pi, weights=1 - np.eye(5)), fk.cohen_kappa(ti, pi))


def test_cohen_kappa_custom_matrix_with_inferred_gappy_classes():
    # regression: classes inferred from {0, 2} were provisionally 0..2 and a (2, 2)
    # matrix was rejected as the wrong shape
    w = np.array([[0.0, 1.0], [3.0, 0.0]])
    t = [0, 2, 2, 0, 2]
    p = [0, 2, 0, 0, 0]
    table = confusion_dict(t, p, [0, 2])
    expected = float(kappa_from_table(table, w.tolist()))
    assert_close(fk.cohen_kappa(t, p, weights=w), expected)
    assert_close(fk.cohen_kappa([*t, -1], [*p, 2], weights=w, ignore_index=-1), expected)
    with pytest.raises(ValueError, match=r"shape \(K, K\) = \(2, 2\)"):
        fk.cohen_kappa(t, p, weights=np.ones((3, 3)) - np.eye(3))


def test_weight_matrix_values():
    np.testing.assert_array_equal(fk.weight_matrix(4), 1 - np.eye(4))
    i = np.arange(4)
    np.testing.assert_array_equal(fk.weight_matrix(4, "linear"), np.abs(i[:, None] - i))
    np.testing.assert_array_equal(fk.weight_matrix(4, "quadratic"), (i[:, None] - i) ** 2)
    assert fk.weight_matrix(4).dtype == np.float64
    w = [[0, 2], [1, 0]]
    np.testing.assert_array_equal(fk.weight_matrix(2, w), np.array(w, dtype=float))


@pytest.mark.parametrize(
    ("weights", "match"),
    [
        ("quad", r"`weights` must be None, 'linear', 'quadratic' or a \(K, K\) array.*got 'quad'"),
        ("Linear", r"got 'Linear'"),
        (np.ones((2, 2)) - np.eye(2), r"shape \(K, K\) = \(3, 3\).*got shape \(2, 2\)"),
        (np.ones((3, 2)), r"shape \(K, K\) = \(3, 3\)"),
        (np.ones(3), r"shape \(K, K\) = \(3, 3\)"),
        ([[0, -1, 2], [1, 0, 1], [2, 1, 0]], "non-negative"),
        ([[1, 1, 2], [1, 0, 1], [2, 1, 0]], "zero on the diagonal"),
        ([[0, np.nan, 2], [1, 0, 1], [2, 1, 0]], "finite"),
        ([[0, np.inf, 2], [1, 0, 1], [2, 1, 0]], "finite"),
        (np.zeros((3, 3)), "positive maximum"),
        ([["a"] * 3] * 3, r"a custom `weights` matrix must be numeric; got dtype <U1"),
    ],
)
def test_cohen_kappa_bad_weights_raise(weights, match):
    with pytest.raises(ValueError, match=match):
        fk.cohen_kappa([0, 1, 2, 1], [0, 2, 2, 0], weights=weights)
    with pytest.raises(ValueError, match=match):
        fk.kappa_from_confusion(np.ones((3, 3)), weights=weights)


@pytest.mark.parametrize("n_classes", [0, -2, 2.0, True, "3", None])
def test_weight_matrix_bad_n_classes_raise(n_classes):
    with pytest.raises(ValueError, match="`n_classes` must be a positive integer"):
        fk.weight_matrix(n_classes, None)


# --------------------------------------------------------------------------- QWK closed form


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64])
def test_quadratic_weighted_kappa_equals_five_sums(dtype, rng):
    for k, lo in [(2, 0), (5, 0), (5, 1), (12, 0), (30, 0)]:
        ti, pi = rated_pair(rng, k, 700, agree=0.5)
        expected = qwk_five_sums(ti.tolist(), pi.tolist())
        t, p = (ti + lo).astype(dtype), (pi + lo).astype(dtype)
        labels = list(range(lo, lo + k))
        for got in (
            fk.quadratic_weighted_kappa(t, p, labels=labels),
            fk.quadratic_weighted_kappa(t, p),
            fk.cohen_kappa(t, p, weights="quadratic", labels=labels),
            fk.cohen_kappa(t.astype(np.float64), p, weights="quadratic", labels=labels),
        ):
            assert_close(got, float(expected), rel=1e-14)
        if lo == 0:
            assert_close(fk.quadratic_weighted_kappa(t, p, n_classes=k), float(expected),
                         rel=1e-14)


@pytest.mark.parametrize("lo", [-(2**15), 2**15 - 4, 2**15 + 1, 40_000, -(2**31) - 7])
def test_quadratic_weighted_kappa_far_from_zero(lo, rng):
    # contiguous classes far from zero: the fast path's exactness bound (|v| <= 2**15)
    # and the fallback beyond it must both give the closed form
    ti, pi = rated_pair(rng, 5, 900)
    expected = float(qwk_five_sums(ti.tolist(), pi.tolist()))
    t, p = ti + lo, pi + lo
    labels = list(range(lo, lo + 5))
    assert_close(fk.quadratic_weighted_kappa(t, p, labels=labels), expected, rel=1e-13)
    assert_close(fk.quadratic_weighted_kappa(t, p), expected, rel=1e-13)
    if lo > 0 and lo + 5 < 2**31:
        assert_close(fk.quadratic_weighted_kappa(t.astype(np.int32), p.astype(np.uint32),
                                                 labels=labels), expected, rel=1e-13)


def test_quadratic_weighted_kappa_rejects_weights_keyword():
    with pytest.raises(TypeError, match="weights='quadratic'"):
        fk.quadratic_weighted_kappa([0, 1], [0, 1], weights="linear")


# --------------------------------------------------------------------------- classes


def test_cohen_kappa_labels_and_n_classes_together_raise():
    with pytest.raises(ValueError, match="either `labels` or `n_classes`, not both"):
        fk.cohen_kappa([0, 1], [0, 1], labels=[0, 1], n_classes=2)
    with pytest.raises(ValueError, match="either `labels` or `n_classes`, not both"):
        fk.confusion_matrix([0, 1], [0, 1], labels=[0, 1], n_classes=2)


def test_cohen_kappa_absent_grade_changes_qwk_unless_declared():
    # grade 2 never occurs: inferred classes are {0, 1, 3}, so 1 vs 3 is one step apart
    t = [0, 1, 3, 3, 1, 0, 3, 1]
    p = [1, 1, 3, 0, 3, 0, 1, 1]
    full = [0, 1, 2, 3]
    for weights in ("linear", "quadratic"):
        inferred = fk.cohen_kappa(t, p, weights=weights)
        declared = fk.cohen_kappa(t, p, weights=weights, n_classes=4)
        assert_close(inferred, sk_kappa(t, p, weights=weights))
        assert_close(declared, sk_kappa(t, p, weights=weights, labels=full))
        assert_close(fk.cohen_kappa(t, p, weights=weights, labels=full), declared)
        assert_close(declared, float(reference_kappa(t, p, weights=weights, labels=full)))
        assert abs(inferred - declared) > 1e-3
    assert_close(fk.quadratic_weighted_kappa(t, p, n_classes=4),
                 fk.cohen_kappa(t, p, weights="quadratic", n_classes=4))
    # unweighted kappa does not care about unused classes
    assert_close(fk.cohen_kappa(t, p), fk.cohen_kappa(t, p, n_classes=4))
    cm = fk.confusion_matrix(t, p, n_classes=4)
    np.testing.assert_array_equal(cm, sk_confusion(t, p, labels=full))
    assert cm[2].sum() == 0 and cm[:, 2].sum() == 0


@pytest.mark.parametrize(
    ("kw", "t", "p", "match"),
    [
        (dict(labels=[0, 1, 2]), [0, 1, 7, 7, 2], [0, 1, 1, 1, 2],
         r"`y_true` holds values outside the declared classes: 7 \(2 rows\)"),
        (dict(n_classes=3), [0, 1, 2], [0, 1, 9],
         r"`y_pred` holds values outside the declared classes: 9 \(1 row\)"),
        (dict(n_classes=3), [0, -1, 2], [0, 1, 2],
         r"`y_true` holds values outside the declared classes: -1 \(1 row\)"),
        (dict(labels=[1, 2, 3, 4, 5]), np.array([1, 2, 0, 5], np.uint8), [1, 2, 3, 4],
         r"`y_true` holds values outside the declared classes: 0 \(1 row\)"),
        (dict(labels=["a", "b"]), ["a", "b", "c"], ["a", "a", "b"],
         r"`y_true` holds values outside the declared classes: 'c' \(1 row\)"),
        (dict(labels=[0, 1]), [0.0, 1.0, 3.0], [0, 1, 1],
         r"`y_true` holds values outside the declared classes: 3"),
        (dict(labels=[3, 10, 200]), [3, 10, 200, 4], [3, 3, 10, 200],
         r"values outside the declared classes: 4 \(1 row\)"),
    ],
)
def test_cohen_kappa_value_outside_declared_classes_raises(kw, t, p, match):
    with pytest.raises(ValueError, match=match):
        fk.cohen_kappa(t, p, **kw)
    with pytest.raises(ValueError, match=match):
        fk.confusion_matrix(t, p, **kw)
    with pytest.raises(ValueError, match=match):
        fk.cohen_kappa(t, p, weights="quadratic", **kw)


def test_cohen_kappa_outside_values_beyond_parallel_size_raise(rng):
    t = rng.integers(0, 5, 700_000).astype(np.int8)
    p = t.copy()
    p[[5, 400_000, 699_999]] = 9
    with pytest.raises(ValueError, match=r"`y_pred` holds .*: 9 \(3 rows\)"):
        fk.quadratic_weighted_kappa(t, p, n_classes=5)
    with pytest.raises(ValueError, match=r"`y_pred` holds .*: 9 \(3 rows\)"):
        fk.cohen_kappa(t, p, labels=[0, 1, 2, 3, 4], sample_weight=np.ones(len(t)))


# --------------------------------------------------------------------------- ignore_index


@pytest.mark.parametrize("weights", WEIGHTS)
def test_cohen_kappa_ignore_index_equals_manual_filtering(weights, rng):
    ti, pi = rated_pair(rng, 5, 800)
    t, p = ti.copy(), pi.copy()
    t[rng.random(800) < 0.1] = -1
    p[rng.random(800) < 0.1] = -1
    keep = (t != -1) & (p != -1)
    expected = sk_kappa(t[keep], p[keep], weights=weights)
    assert_close(fk.cohen_kappa(t, p, weights=weights, ignore_index=-1), expected)
    assert_close(fk.cohen_kappa(t.astype(np.int8), p.astype(np.int16), weights=weights,
                                ignore_index=-1), expected)
    assert_close(fk.cohen_kappa(t.astype(float), p, weights=weights, ignore_index=-1), expected)
    # declared classes; the ignore value needs no declaring
    assert_close(fk.cohen_kappa(t, p, weights=weights, ignore_index=-1, n_classes=5),
                 sk_kappa(t[keep], p[keep], weights=weights, labels=np.arange(5)))
    np.testing.assert_array_equal(
        fk.confusion_matrix(t, p, ignore_index=-1, n_classes=5),
        sk_confusion(t[keep], p[keep], labels=np.arange(5)))
    # ignore_index 255 on unsigned data, and a string ignore value
    u_t, u_p = np.where(t < 0, 255, t).astype(np.uint8), np.where(p < 0, 255, p).astype(np.uint8)
    assert_close(fk.cohen_kappa(u_t, u_p, weights=weights, ignore_index=255), expected)
    names = np.array(["a", "b", "c", "d", "e", "?"])
    ordered = ["a", "b", "c", "d", "e"]
    assert_close(fk.cohen_kappa(names[t], names[p], weights=weights, ignore_index="?",
                                labels=ordered),
                 sk_kappa(t[keep], p[keep], weights=weights, labels=np.arange(5)))


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_cohen_kappa_ignore_index_class_seen_only_in_dropped_rows(weights):
    # regression: a value that occurs only in rows dropped by ignore_index (150 here)
    # became a class when the value range was wide, shifting the weights of the others
    t = [0, 100, 200, -1, 100, 0]
    p = [0, 100, 0, 150, 200, 100]
    expected = sk_kappa([0, 100, 200, 100, 0], [0, 100, 0, 200, 100], weights=weights)
    assert_close(fk.cohen_kappa(t, p, weights=weights, ignore_index=-1), expected)
    assert_close(fk.cohen_kappa(np.array(t, dtype=float), p, weights=weights, ignore_index=-1),
                 expected)
    assert fk.confusion_matrix(t, p, ignore_index=-1).shape == (3, 3)
    # the narrow-range path agreed already; keep it that way
    t2 = [0, 1, 4, -1, 1, 0]
    p2 = [0, 1, 0, 3, 4, 1]
    assert_close(fk.cohen_kappa(t2, p2, weights=weights, ignore_index=-1),
                 sk_kappa([0, 1, 4, 1, 0], [0, 1, 0, 4, 1], weights=weights))


def test_cohen_kappa_ignore_index_drops_either_side_unlike_torchmetrics():
    # torchmetrics drops on the target side only; fastkappa drops when either side matches
    t = [0, 1, 1, 0, 1]
    p = [0, 1, -1, 0, 0]
    assert_close(fk.cohen_kappa(t, p, ignore_index=-1), sk_kappa([0, 1, 0, 1], [0, 1, 0, 0]))


def test_cohen_kappa_ignore_everything_raises():
    with pytest.raises(ValueError, match=r"no (class|rows) left to score"):
        fk.cohen_kappa([-1, -1], [1, 2], ignore_index=-1)
    with pytest.raises(ValueError, match=r"no (class|rows) left to score"):
        fk.cohen_kappa([-1, -1], [-1, -1], ignore_index=-1)
    with pytest.raises(ValueError, match=r"no (class|rows) left to score"):
        fk.cohen_kappa([-1, 3], [1, -1], ignore_index=-1, n_classes=4)
    with pytest.raises(ValueError, match="`ignore_index` must be a single label value"):
        fk.cohen_kappa([0, 1], [0, 1], ignore_index=[1])


# --------------------------------------------------------------------------- undefined


def test_cohen_kappa_undefined_returns_replacement_with_warning():
    assert issubclass(UndefinedKappaWarning, RuntimeWarning)
    for weights in WEIGHTS:
        with pytest.warns(UndefinedKappaWarning, match="undefined"):
            got = fk.cohen_kappa([2, 2, 2], [2, 2, 2], weights=weights)
        assert math.isnan(got)
        with pytest.warns(UndefinedKappaWarning):
            assert fk.cohen_kappa([2, 2], [2, 2], weights=weights, replace_undefined_by=0.0) == 0.0
        with pytest.warns(UndefinedKappaWarning):
            got = fk.cohen_kappa_score([1, 1], [1, 1], weights=weights, replace_undefined_by=-1.0)
        assert got == sk_kappa([1, 1], [1, 1], weights=weights, replace_undefined_by=-1.0)
    with pytest.warns(UndefinedKappaWarning):
        assert math.isnan(fk.kappa_from_confusion([[7, 0], [0, 0]]))
    with pytest.warns(UndefinedKappaWarning):
        assert math.isnan(fk.kappa_from_confusion([[7]], weights="quadratic"))
    # sklearn's rule applies to zero-weight rows: a second class declared only by
    # them still leaves the expected disagreement at zero
    with pytest.warns(UndefinedKappaWarning):
        assert math.isnan(fk.cohen_kappa([1, 1, 2], [1, 1, 2], sample_weight=[1, 1, 0]))


def test_cohen_kappa_constant_but_different_raters_is_zero():
    # both constant, disagreeing: defined (expected disagreement > 0), kappa = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fk.cohen_kappa([0, 0, 0], [1, 1, 1]) == 0.0
    # a declared but unused scale does not rescue the undefined case
    with pytest.warns(UndefinedKappaWarning):
        fk.cohen_kappa([1, 1], [1, 1], n_classes=3)


# --------------------------------------------------------------------------- confusion / table


def test_confusion_matrix_matches_sklearn(rng):
    for k in (2, 4, 11):
        ti, pi = rated_pair(rng, k, 1000)
        for labels in (None, list(range(k)), list(range(k))[::-1], list(range(k + 2))):
            np.testing.assert_array_equal(fk.confusion_matrix(ti, pi, labels=labels),
                                          sk_confusion(ti, pi, labels=labels))
        sw = rng.random(1000)
        np.testing.assert_allclose(fk.confusion_matrix(ti, pi, sample_weight=sw),
                                   sk_confusion(ti, pi, sample_weight=sw), rtol=1e-12)
    # the result is the caller's to modify
    cm = fk.confusion_matrix([0, 1], [0, 1])
    cm[0, 0] = 99
    np.testing.assert_array_equal(fk.confusion_matrix([0, 1], [0, 1]), np.eye(2, dtype=int))


def test_kappa_from_confusion_matches_reference(rng):
    for k in (1, 2, 3, 5, 8):
        table = rng.integers(0, 40, (k, k))
        table[0, 0] += 1
        for weights in WEIGHTS:
            expected = kappa_from_table(table.tolist(), weights)
            if expected is None:
                with pytest.warns(UndefinedKappaWarning):
                    assert math.isnan(fk.kappa_from_confusion(table, weights))
                continue
            assert_close(fk.kappa_from_confusion(table, weights), float(expected), rel=1e-13)
            assert_close(fk.kappa_from_confusion(table.astype(np.int64), weights),
                         float(expected), rel=1e-13)
            assert_close(fk.kappa_from_confusion(table.astype(np.float64) / 7, weights),
                         float(expected), rel=1e-12)
            assert_close(fk.kappa_from_confusion(table.tolist(), weights), float(expected),
                         rel=1e-13)


def test_kappa_from_confusion_n_2_pow_40_exact():
    # N = 2**40: products of counts reach 2**80, far past int64
    n = 2**40
    table = [[n // 4 + 12_345, n // 8 - 5], [n // 8 - 12_345, n // 2 + 5]]
    assert sum(map(sum, table)) == n
    o = np.array(table, dtype=np.int64)
    for weights in WEIGHTS:
        exact = kappa_from_table(table, weights)
        assert isinstance(exact, Fraction)
        assert_close(fk.kappa_from_confusion(o, weights), float(exact), rel=1e-12)
    big = [[n // 3, 7, 11], [13, n // 3, 17], [19, 23, n - 2 * (n // 3) - 90]]
    assert sum(map(sum, big)) == n
    for weights in WEIGHTS:
        exact = kappa_from_table(big, weights)
        assert_close(fk.kappa_from_confusion(np.array(big, dtype=np.int64), weights),
                     float(exact), rel=1e-12)
    # int64 counts near their limit still work
    huge = np.array([[2**61, 2**59], [2**58, 2**61]], dtype=np.int64)
    exact = kappa_from_table(huge.tolist(), None)
    assert_close(fk.kappa_from_confusion(huge), float(exact), rel=1e-12)


@pytest.mark.parametrize(
    ("table", "match"),
    [
        ([[0, 0], [0, 0]], "all zeros"),
        ([[1, -1], [0, 3]], "non-negative"),
        ([[1, 1]], r"square \(K, K\)"),
        ([1, 2, 3], r"square \(K, K\)"),
        (np.zeros((0, 0)), r"square \(K, K\)"),
        ([[1, np.nan], [0, 1]], "finite"),
        ([[1, np.inf], [0, 1]], "finite"),
        ([["a", "b"], ["c", "d"]], "numeric"),
    ],
)
def test_kappa_from_confusion_bad_tables_raise(table, match):
    with pytest.raises(ValueError, match=match):
        fk.kappa_from_confusion(table)


# --------------------------------------------------------------------------- large n


def test_confusion_matrix_parallel_exact_at_k2():
    # several million rows: the parallel path must not lose a single count (a racy
    # shared += loses about a fifth at K=2)
    rng = np.random.default_rng(7)
    n = 3_000_001
    t = (rng.random(n) < 0.5).astype(np.int8)
    p = (rng.random(n) < 0.5).astype(np.int8)
    expected = np.bincount(t.astype(np.int64) * 2 + p, minlength=4).reshape(2, 2)
    np.testing.assert_array_equal(fk.confusion_matrix(t, p), expected)
    np.testing.assert_array_equal(fk.confusion_matrix(t, p, n_classes=2), expected)
    np.testing.assert_array_equal(fk.confusion_matrix(t.view(bool), p.view(bool)), expected)
    # integer-valued sample weights give exact float sums
    sw = rng.integers(0, 3, n).astype(np.float64)
    expected_w = np.bincount(t.astype(np.int64) * 2 + p, weights=sw, minlength=4).reshape(2, 2)
    np.testing.assert_array_equal(fk.confusion_matrix(t, p, sample_weight=sw), expected_w)
    exact = kappa_from_table(expected.tolist(), None)
    assert_close(fk.cohen_kappa(t, p), float(exact), rel=1e-13)
    assert_close(fk.quadratic_weighted_kappa(t, p, n_classes=2), float(exact), rel=1e-13)


@pytest.mark.parametrize("dtype", [np.int8, np.int64])
def test_cohen_kappa_large_n_matches_sklearn(dtype):
    rng = np.random.default_rng(11)
    n = 2_000_000
    ti, pi = rated_pair(rng, 5, n)
    t, p = (ti + 1).astype(dtype), (pi + 1).astype(dtype)
    cm = sk_confusion(ti, pi)
    np.testing.assert_array_equal(fk.confusion_matrix(t, p), cm)
    np.testing.assert_array_equal(fk.confusion_matrix(t, p, labels=[1, 2, 3, 4, 5]), cm)
    for weights in WEIGHTS:
        expected = float(kappa_from_table(cm.tolist(), weights))
        assert_close(fk.cohen_kappa(t, p, weights=weights), expected, rel=1e-12)
        assert_close(fk.cohen_kappa(t, p, weights=weights, labels=[1, 2, 3, 4, 5]), expected,
                     rel=1e-12)
    # the five sums of the quadratic fast path, against NumPy's own int64 sums
    x, y = ti.astype(np.int64), pi.astype(np.int64)
    sx, sy, sxx, syy, sxy = (int(v) for v in (x.sum(), y.sum(), (x * x).sum(), (y * y).sum(),
                                              (x * y).sum()))
    five = 1 - Fraction(n * (sxx + syy - 2 * sxy), n * (sxx + syy) - 2 * sx * sy)
    assert_close(fk.quadratic_weighted_kappa(t, p, labels=[1, 2, 3, 4, 5]), float(five),
                 rel=1e-13)
    assert_close(fk.quadratic_weighted_kappa(t[::2], p[::2], labels=[1, 2, 3, 4, 5]),
                 sk_kappa(ti[::2], pi[::2], weights="quadratic"), rel=1e-12)


def test_cohen_kappa_concurrent_threads():
    rng = np.random.default_rng(3)
    n = 600_000  # above the parallel threshold
    t = rng.integers(0, 2, n).astype(np.int8)
    p = np.where(rng.random(n) < 0.7, t, 1 - t).astype(np.int8)
    t5 = rng.integers(0, 5, n)
    p5 = np.where(rng.random(n) < 0.6, t5, rng.integers(0, 5, n))
    sw = rng.integers(1, 3, n).astype(float)
    cm2 = np.bincount(t.astype(np.int64) * 2 + p, minlength=4).reshape(2, 2)
    cm5 = np.bincount(t5 * 5 + p5, minlength=25).reshape(5, 5)
    cm5w = np.bincount(t5 * 5 + p5, weights=sw, minlength=25).reshape(5, 5)
    k_quad = float(kappa_from_table(cm5.tolist(), "quadratic"))
    k_lin_w = float(kappa_from_table(cm5w.tolist(), "linear"))

    def job(i: int) -> bool:
        ok = True
        for _ in range(3):
            ok &= np.array_equal(fk.confusion_matrix(t, p), cm2)
            ok &= np.array_equal(fk.confusion_matrix(t5, p5, n_classes=5), cm5)
            ok &= math.isclose(fk.quadratic_weighted_kappa(t5, p5, n_classes=5), k_quad,
                               rel_tol=1e-12)
            ok &= math.isclose(fk.cohen_kappa(t5, p5, weights="linear", sample_weight=sw),
                               k_lin_w, rel_tol=1e-12)
        return bool(ok)

    with ThreadPoolExecutor(max_workers=8) as ex:
        results = list(ex.map(job, range(16)))
    assert all(results)


# --------------------------------------------------------------------------- memory, import


def test_cohen_kappa_integer_input_makes_no_copy():
    rng = np.random.default_rng(5)
    n = 1_000_000
    t = rng.integers(0, 5, n)  # int64: 8 MB per side
    p = np.where(rng.random(n) < 0.6, t, rng.integers(0, 5, n))
    t8, p8 = t.astype(np.int8), p.astype(np.int8)
    calls = [
        lambda: fk.cohen_kappa(t, p),
        lambda: fk.cohen_kappa(t, p, weights="quadratic"),
        lambda: fk.cohen_kappa(t, p, weights="quadratic", n_classes=5),
        lambda: fk.cohen_kappa(t, p, weights="linear", labels=[0, 1, 2, 3, 4]),
        lambda: fk.cohen_kappa(t[::2], p[::2], weights="quadratic", n_classes=5),
        lambda: fk.confusion_matrix(t, p),
        lambda: fk.confusion_matrix(t, p, ignore_index=-1, n_classes=5),
        lambda: fk.cohen_kappa(t8, p8, weights="quadratic", n_classes=5),
        lambda: fk.cohen_kappa(t8, p8, labels=[0, 1, 2, 3, 4, 7, 100]),
    ]
    for call in calls:
        call()  # compile outside the measurement
    for i, call in enumerate(calls):
        tracemalloc.start()
        try:
            call()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < t.nbytes / 20, (i, peak)


def test_import_fastkappa_does_not_import_numba():
    code = (
        "import sys, fastkappa; "
        "assert 'numba' not in sys.modules, 'numba imported'; "
        "assert 'pandas' not in sys.modules, 'pandas imported'; "
        "print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_kappa_from_confusion_scale_free_at_float_limits():
    table = np.array([[5.0, 2.0, 1.0], [1.0, 7.0, 2.0], [0.0, 3.0, 9.0]])
    for weights in WEIGHTS:
        expected = float(kappa_from_table(table.astype(int).tolist(), weights))
        for scale in (1e-310, 1e-200, 1.0, 1e200, 1e300):
            assert_close(fk.kappa_from_confusion(table * scale, weights), expected, rel=1e-12)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("lo", [2**15 - 4, -(2**15)])
def test_quadratic_weighted_kappa_large_n_at_exactness_bound(dtype, lo):
    # many sub-blocks of float partial sums with |values| at 2**15: still exact
    rng = np.random.default_rng(17)
    n = 800_000
    ti, pi = rated_pair(rng, 5, n, agree=0.5)
    x, y = ti.astype(np.int64), pi.astype(np.int64)
    sx, sy, sxx, syy, sxy = (int(v) for v in (x.sum(), y.sum(), (x * x).sum(), (y * y).sum(),
                                              (x * y).sum()))
    five = float(1 - Fraction(n * (sxx + syy - 2 * sxy), n * (sxx + syy) - 2 * sx * sy))
    t, p = (ti + lo).astype(dtype), (pi + lo).astype(dtype)
    labels = list(range(lo, lo + 5))
    assert_close(fk.quadratic_weighted_kappa(t, p, labels=labels), five, rel=1e-13)
    assert_close(fk.quadratic_weighted_kappa(t, p), five, rel=1e-13)


@pytest.mark.parametrize("weights", WEIGHTS)
def test_cohen_kappa_int64_extremes_are_named_not_wrapped(weights):
    # v - offset wraps around for the int64 extremes: they must still land on "invalid"
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    t = np.array([0, 1, lo, 2, hi], dtype=np.int64)
    p = np.array([0, 1, 1, 2, 2], dtype=np.int64)
    with pytest.raises(ValueError, match=rf"`y_true` holds values outside the declared classes: "
                                         rf"(-?{lo}|{hi}) \(1 row\), (-?{lo}|{hi}) \(1 row\)"):
        fk.cohen_kappa(t, p, weights=weights, n_classes=3)
    with pytest.raises(ValueError, match="outside the declared classes"):
        fk.cohen_kappa(p, t, weights=weights, labels=[5, 6, 7, 0, 1, 2])
    # inferred, the extremes are classes like any other
    assert_close(fk.cohen_kappa(t, p, weights=weights), sk_kappa(t, p, weights=weights))
