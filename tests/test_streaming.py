"""CohenKappa: the streaming accumulator."""

from __future__ import annotations

import copy
import itertools
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import confusion_dict, reference_kappa
from sklearn.metrics import cohen_kappa_score
from sklearn.metrics import confusion_matrix as sk_confusion

import fastkappa as fk
from fastkappa import CohenKappa, UndefinedKappaWarning


def _chunks(n: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Random chunk boundaries covering 0..n (empty chunks included)."""
    cuts = np.sort(rng.integers(0, n + 1, size=rng.integers(1, 12)))
    edges = [0, *cuts.tolist(), n]
    return list(itertools.pairwise(edges))


# --------------------------------------------------------------------------- update


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("declare", [False, True])
def test_cohen_kappa_update_chunks_equal_one_shot(rng, weights, declare):
    for _ in range(20):
        n = int(rng.integers(1, 3000))
        t = rng.integers(0, 6, n)
        p = np.clip(t + rng.integers(-2, 3, n), 0, 5)
        acc = CohenKappa(weights=weights, **({"n_classes": 6} if declare else {}))
        for lo, hi in _chunks(n, rng):
            acc.update(t[lo:hi], p[lo:hi])
        kw = {"n_classes": 6} if declare else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedKappaWarning)
            expected = fk.cohen_kappa(t, p, weights=weights, **kw)
            got = acc.compute()
        np.testing.assert_equal(got, expected)
        labels = list(range(6)) if declare else sorted(set(t) | set(p))
        np.testing.assert_array_equal(acc.confusion, sk_confusion(t, p, labels=labels))
        assert acc.n_rows == n
        assert acc.confusion.dtype == np.int64


def test_cohen_kappa_update_matches_reference_oracle(rng):
    t = rng.integers(1, 6, 500)
    p = np.clip(t + rng.integers(-1, 2, 500), 1, 5)
    acc = CohenKappa(weights="quadratic")
    for lo in range(0, 500, 37):
        acc.update(t[lo:lo + 37], p[lo:lo + 37])
    ref = reference_kappa(t.tolist(), p.tolist(), weights="quadratic")
    assert acc.compute() == pytest.approx(float(ref), rel=1e-12)


def test_cohen_kappa_update_learns_strings(rng):
    words = np.array(["cat", "dog", "emu", "ant"], dtype=object)
    t = words[rng.integers(0, 4, 400)]
    p = words[rng.integers(0, 4, 400)]
    acc = CohenKappa()
    # the first batch holds only part of the classes: the matrix must grow
    acc.update(t[:3], p[:3])
    for lo in range(3, 400, 50):
        acc.update(list(t[lo:lo + 50]), pd.Series(p[lo:lo + 50]))
    assert acc.labels.tolist() == sorted(set(t) | set(p))
    assert acc.compute() == pytest.approx(cohen_kappa_score(t, p), rel=1e-12)
    np.testing.assert_array_equal(
        acc.confusion, np.array(confusion_dict(t, p, acc.labels.tolist())))


def test_cohen_kappa_update_sample_weight_gives_float_matrix(rng):
    t = rng.integers(0, 3, 300)
    p = rng.integers(0, 3, 300)
    w = rng.random(300)
    acc = CohenKappa(n_classes=3, weights="linear")
    acc.update(t[:100], p[:100])
    assert acc.confusion.dtype == np.int64
    acc.update(t[100:], p[100:], sample_weight=w[100:])
    assert acc.weighted and acc.confusion.dtype == np.float64
    full_w = np.r_[np.ones(100), w[100:]]
    expected = cohen_kappa_score(t, p, weights="linear", sample_weight=full_w)
    assert acc.compute() == pytest.approx(expected, rel=1e-12)
    assert acc.n_rows == 300


def test_cohen_kappa_update_empty_batch_is_noop():
    acc = CohenKappa(n_classes=2).update([0, 1], [0, 1])
    acc.update([], [])
    acc.update(np.array([], dtype=np.int64), np.array([], dtype=np.int64))
    assert acc.n_rows == 2


@pytest.mark.parametrize(("kw", "match"), [
    ({"sample_weight": [1, 2, 3], "nan_policy": "bogus"},
     r"`nan_policy` must be 'raise' or 'omit'; got 'bogus'"),
    ({"sample_weight": [1, 2, 3]}, r"one weight per row: got 3 weights for \d rows"),
    ({"frequency_weight": [1, 2]}, r"one count per row: got 2 counts for \d rows"),
    ({"sample_weight": [], "frequency_weight": []}, r"pass `sample_weight` .* not both"),
    ({"ignore_index": [1]}, r"`ignore_index` must be a single label value"),
    ({"thresholds": [2, 1]}, r"`thresholds` must be strictly increasing"),
])
def test_cohen_kappa_update_empty_batch_checks_its_keywords(kw, match):
    # regression: an empty batch returned before any check, accepting anything
    acc = CohenKappa()
    with pytest.raises(ValueError, match=match):
        acc.update([], [], **kw)
    with pytest.raises(ValueError, match=match):
        acc.update([0], [0], **kw)  # a batch with rows says the same
    # every row counted 0 times is no row, with the keywords checked too
    with pytest.raises(ValueError, match="`nan_policy` must be"):
        acc.update([0, 1], [0, 1], frequency_weight=[0, 0], nan_policy="bogus")
    acc.update([], [], sample_weight=[], nan_policy="omit", ignore_index=-1)
    assert acc.n_rows == 0


def test_cohen_kappa_update_probabilities_with_declared_classes():
    probs = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]])
    acc = CohenKappa(n_classes=3).update([0, 1, 1], probs)
    np.testing.assert_array_equal(acc.confusion, [[1, 0, 0], [0, 1, 1], [0, 0, 0]])


def test_cohen_kappa_update_value_outside_declared_classes_raises():
    acc = CohenKappa(n_classes=3)
    with pytest.raises(ValueError, match=r"outside the declared classes: 7 \(1 row"):
        acc.update([0, 7], [0, 1])
    assert acc.n_rows == 0  # a rejected batch leaves the state untouched


def test_cohen_kappa_update_missing_value_raises():
    with pytest.raises(ValueError, match="missing value"):
        CohenKappa().update([0.0, np.nan], [0, 1])


def test_cohen_kappa_update_errors_after_labels_are_learned():
    acc = CohenKappa().update([0, 1, 2], [0, 1, 2])
    with pytest.raises(ValueError, match="missing value"):
        acc.update([0.0, np.nan], [0, 1])
    with pytest.raises(ValueError, match="non-integral floats"):
        acc.update([0.5, 1.0], [0, 1])
    with pytest.raises(ValueError, match="same length"):
        acc.update([0, 1], [0])
    assert acc.n_rows == 3
    acc.update([5, 1], [1, 1])  # a new label still goes in
    assert acc.labels.tolist() == [0, 1, 2, 5] and acc.n_rows == 5


def test_cohen_kappa_update_kind_change_raises():
    acc = CohenKappa().update([1, 2], [1, 2])
    with pytest.raises(ValueError, match="holds numbers as labels but the batch holds strings"):
        acc.update(["a"], ["b"])


def test_cohen_kappa_update_weighted_strings_without_order_raises():
    with pytest.raises(ValueError, match="weighted kappa needs ordered classes"):
        CohenKappa(weights="quadratic").update(["mild", "none"], ["none", "none"])


def test_cohen_kappa_update_weighted_strings_with_labels():
    scale = ["none", "mild", "moderate"]
    t = ["none", "mild", "moderate", "moderate"]
    p = ["none", "moderate", "moderate", "mild"]
    acc = CohenKappa(labels=scale, weights="quadratic").update(t, p)
    assert acc.compute() == pytest.approx(
        fk.cohen_kappa(t, p, labels=scale, weights="quadratic"), rel=1e-12)


# --------------------------------------------------------------------------- options


def test_cohen_kappa_init_rejects_bad_options():
    with pytest.raises(ValueError, match="either `labels` or `n_classes`"):
        CohenKappa(labels=[0, 1], n_classes=2)
    with pytest.raises(ValueError, match="'quad'"):
        CohenKappa(weights="quad")
    with pytest.raises(ValueError, match="custom `weights` matrix needs the classes declared"):
        CohenKappa(weights=np.ones((2, 2)) - np.eye(2))
    with pytest.raises(ValueError, match=r"shape \(K, K\) = \(3, 3\)"):
        CohenKappa(n_classes=3, weights=np.ones((2, 2)) - np.eye(2))


def test_cohen_kappa_custom_weight_matrix(rng):
    w = np.array([[0, 1, 3], [1, 0, 1], [2, 1, 0]], dtype=float)
    t, p = rng.integers(0, 3, 200), rng.integers(0, 3, 200)
    acc = CohenKappa(n_classes=3, weights=w).update(t[:50], p[:50]).update(t[50:], p[50:])
    assert acc.compute() == pytest.approx(fk.cohen_kappa(t, p, weights=w, n_classes=3))


def test_cohen_kappa_compute_empty_raises():
    with pytest.raises(ValueError, match="holds no rows"):
        CohenKappa().compute()


def test_cohen_kappa_compute_undefined_warns():
    acc = CohenKappa().update([1, 1], [1, 1])
    with pytest.warns(UndefinedKappaWarning):
        assert acc.compute(replace_undefined_by=0.0) == 0.0


def test_cohen_kappa_reset():
    acc = CohenKappa().update(["a", "b"], ["a", "a"]).reset()
    assert acc.n_rows == 0 and acc.labels.size == 0
    acc.update([3, 4], [3, 4])  # a reset learner may change kind
    assert acc.labels.tolist() == [3, 4]
    fixed = CohenKappa(n_classes=3).update([0, 1], [1, 1]).reset()
    assert fixed.labels.tolist() == [0, 1, 2]
    np.testing.assert_array_equal(fixed.confusion, np.zeros((3, 3)))


def test_cohen_kappa_repr():
    acc = CohenKappa(weights="linear").update([0, 1], [1, 1])
    assert repr(acc) == "CohenKappa(labels=[0, 1], weights='linear', n_rows=2)"


def test_cohen_kappa_aligned():
    acc = CohenKappa().update([2, 4], [4, 4])
    np.testing.assert_array_equal(acc.aligned([1, 2, 4]), [[0, 0, 0], [0, 0, 1], [0, 0, 1]])
    with pytest.raises(ValueError, match=r"labels \[4\] of the accumulator are not in"):
        acc.aligned([1, 2])


# --------------------------------------------------------------------------- merge


def _split_accs(t, p, n_parts, rng, **kw):
    bounds = np.sort(rng.integers(0, len(t) + 1, n_parts - 1))
    edges = [0, *bounds.tolist(), len(t)]
    return [CohenKappa(**kw).update(t[a:b], p[a:b]) for a, b in itertools.pairwise(edges)]


def test_cohen_kappa_merge_associative_and_commutative(rng):
    t = rng.integers(0, 8, 3000)
    p = np.clip(t + rng.integers(-2, 3, 3000), 0, 7)
    a, b, c = _split_accs(t, p, 3, rng, weights="quadratic")
    left = (a + b) + c
    right = a + (b + c)
    swapped = c + b + a
    for x in (right, swapped):
        np.testing.assert_array_equal(left.confusion, x.confusion)
        np.testing.assert_array_equal(left.labels, x.labels)
        assert left.compute() == x.compute()
    assert left.compute() == fk.cohen_kappa(t, p, weights="quadratic")
    # `+` leaves its operands alone; merge works in place and returns self
    assert a.n_rows + b.n_rows + c.n_rows == left.n_rows == 3000
    before = a.n_rows
    assert a.merge(b) is a and a.n_rows == before + b.n_rows


def test_cohen_kappa_merge_sum_builtin(rng):
    t = rng.integers(0, 4, 600)
    accs = _split_accs(t, t[::-1].copy(), 5, rng)
    total = sum(accs)
    assert total.compute() == fk.cohen_kappa(t, t[::-1])


def test_cohen_kappa_merge_self():
    acc = CohenKappa().update([0, 1], [0, 0])
    acc.merge(acc)
    np.testing.assert_array_equal(acc.confusion, [[2, 0], [2, 0]])


def test_cohen_kappa_merge_declared_with_learned():
    fixed = CohenKappa(n_classes=4).update([0, 1], [0, 1])
    learned = CohenKappa().update([3, 1], [3, 3])
    both = learned + fixed  # the learner adopts the declared scale
    assert both.labels.tolist() == [0, 1, 2, 3]
    np.testing.assert_array_equal(both.confusion, sk_confusion(
        [3, 1, 0, 1], [3, 3, 0, 1], labels=[0, 1, 2, 3]))
    assert (fixed + learned).confusion.tolist() == both.confusion.tolist()


def test_cohen_kappa_merge_errors():
    with pytest.raises(ValueError, match="different `weights`"):
        CohenKappa(weights="linear").merge(CohenKappa())
    with pytest.raises(ValueError, match="declared with different classes"):
        CohenKappa(n_classes=3).merge(CohenKappa(labels=[0, 2, 1]))
    with pytest.raises(ValueError, match=r"labels \[5\] are outside the declared classes"):
        CohenKappa(n_classes=3).merge(CohenKappa().update([5], [0]))
    with pytest.raises(ValueError, match="holds strings as labels but the other accumulator"):
        CohenKappa().update(["a"], ["a"]).merge(CohenKappa().update([1], [1]))
    with pytest.raises(TypeError, match="can only merge a CohenKappa"):
        CohenKappa().merge(np.zeros((2, 2)))


@settings(deadline=None, max_examples=60)
@given(
    parts=st.lists(
        st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", "e"]),
                           st.sampled_from(["a", "b", "c", "d", "e"])), max_size=15),
        min_size=1, max_size=6),
    order=st.randoms(use_true_random=False),
)
def test_cohen_kappa_merge_aligns_label_sets(parts, order):
    accs = []
    for rows in parts:
        acc = CohenKappa()
        if rows:
            acc.update([r[0] for r in rows], [r[1] for r in rows])
        accs.append(acc)
    shuffled = accs[:]
    order.shuffle(shuffled)
    total = CohenKappa()
    for acc in shuffled:
        total.merge(acc)
    rows = [r for part in parts for r in part]
    classes = sorted({v for r in rows for v in r})
    assert total.labels.tolist() == classes
    expected = confusion_dict([r[0] for r in rows], [r[1] for r in rows], classes)
    np.testing.assert_array_equal(total.confusion.reshape(len(classes), len(classes)),
                                  np.array(expected, dtype=np.int64).reshape(
                                      len(classes), len(classes)))
    assert total.n_rows == len(rows)


@settings(deadline=None, max_examples=40)
@given(parts=st.lists(st.lists(st.tuples(st.integers(-3, 40), st.integers(-3, 40)),
                               min_size=1, max_size=20), min_size=1, max_size=5))
def test_cohen_kappa_merge_aligns_numeric_label_sets(parts):
    accs = [CohenKappa(weights="linear").update([r[0] for r in rows], [r[1] for r in rows])
            for rows in parts]
    total = accs[0]
    for a in accs[1:]:
        total = total + a
    t = [r[0] for rows in parts for r in rows]
    p = [r[1] for rows in parts for r in rows]
    assert total.labels.tolist() == sorted(set(t) | set(p))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedKappaWarning)
        np.testing.assert_equal(total.compute(), fk.cohen_kappa(t, p, weights="linear"))


# --------------------------------------------------------------------------- pickle, ci


def test_cohen_kappa_pickle_round_trip(rng):
    acc = CohenKappa(weights="quadratic").update(rng.integers(0, 5, 100),
                                                 rng.integers(0, 5, 100))
    again = pickle.loads(pickle.dumps(acc))
    np.testing.assert_array_equal(again.confusion, acc.confusion)
    np.testing.assert_array_equal(again.labels, acc.labels)
    assert again.compute() == acc.compute()
    again.update([7], [7])  # still a working learner
    assert again.labels.tolist()[-1] == 7 and acc.labels.tolist()[-1] == 4
    s = CohenKappa(labels=["x", "y"]).update(["x"], ["y"])
    assert pickle.loads(pickle.dumps(s)).confusion.tolist() == [[0, 1], [0, 0]]
    assert copy.deepcopy(s).labels.tolist() == ["x", "y"]


def test_cohen_kappa_shallow_copy_is_independent():
    # copy.copy shared the matrix: updating the copy counted in the original too
    a = CohenKappa().update([0, 1, 1], [0, 1, 0])
    b = copy.copy(a).update([1], [1])
    assert a.n_rows == 3 and a.confusion.sum() == 3
    assert b.n_rows == 4 and b.confusion.tolist() == [[1, 0], [1, 2]]
    d = CohenKappa(n_classes=3).update([0], [0])
    copy.copy(d).update([2], [2])
    assert d.confusion.tolist() == [[1, 0, 0], [0, 0, 0], [0, 0, 0]]


def test_cohen_kappa_ci_from_confusion(rng):
    t = rng.integers(0, 4, 2000)
    p = np.clip(t + rng.integers(-1, 2, 2000), 0, 3)
    acc = CohenKappa(weights="quadratic")
    for lo in range(0, 2000, 300):
        acc.update(t[lo:lo + 300], p[lo:lo + 300])
    for method in ("asymptotic", "bca", "percentile"):
        got = acc.ci(method=method, n_resamples=500, seed=3, confidence_level=0.9)
        want = fk.kappa_ci(t, p, weights="quadratic", method=method, n_resamples=500, seed=3,
                           confidence_level=0.9)
        assert got.estimate == pytest.approx(want.estimate, rel=1e-12)
        assert got.low == pytest.approx(want.low, rel=1e-9)
        assert got.high == pytest.approx(want.high, rel=1e-9)
        assert got.method == want.method


def test_cohen_kappa_ci_weighted_raises():
    acc = CohenKappa().update([0, 1], [0, 1], sample_weight=[1.0, 2.0])
    with pytest.raises(ValueError, match="a weighted interval resamples the rows"):
        acc.ci()


def test_cohen_kappa_ci_empty_raises():
    with pytest.raises(ValueError, match="holds no rows"):
        CohenKappa(n_classes=2).ci()


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weighted_stream_of_ordered_categoricals_takes_their_scale(rng, weights):
    # as fk.cohen_kappa on the Categorical: its categories, in order and unused ones
    # included, are the classes (alphabetical order would give another number)
    scale = ["none", "mild", "unused", "moderate", "severe"]
    cat = pd.CategoricalDtype(scale, ordered=True)
    used = np.array(["none", "mild", "moderate", "severe"], dtype=object)
    t = used[rng.integers(0, 4, 300)]
    p = used[rng.integers(0, 4, 300)]
    acc = CohenKappa(weights=weights)
    for i in range(0, 300, 100):
        acc.update(pd.Series(t[i:i + 100], dtype=cat), pd.Series(p[i:i + 100], dtype=cat))
    assert acc.labels.tolist() == scale
    want = cohen_kappa_score(t, p, labels=scale, weights=weights)
    assert acc.compute() == pytest.approx(want, rel=1e-12)
    assert acc.compute() == pytest.approx(
        fk.cohen_kappa(pd.Series(t, dtype=cat), pd.Series(p, dtype=cat), weights=weights))
    with pytest.raises(ValueError, match="outside the declared classes: 'x'"):
        acc.update(["x"], ["none"])
    assert pickle.loads(pickle.dumps(acc)).compute() == acc.compute()
    merged = CohenKappa(weights=weights).merge(acc)
    assert merged.compute() == acc.compute()
    merged.reset()
    acc.reset()  # the Categorical's classes go with its rows, in a merged copy too
    assert len(acc.labels) == 0 and len(merged.labels) == 0
    with pytest.raises(ValueError, match="weighted kappa needs ordered classes"):
        acc.update(["a", "b"], ["b", "b"])


def test_learning_stream_of_scores_reads_columns_as_the_labels_learned():
    # the usual loop over mini-batches of logits: a batch that misses a class still
    # names its columns by the K labels learned so far (documented in update)
    rng = np.random.default_rng(5)
    n, k = 256, 5
    t = rng.integers(0, k, n)
    scores = rng.random((n, k)) + np.eye(k)[t] * 0.8
    for make in (np.asarray, pd.DataFrame):
        acc = CohenKappa(weights="quadratic")
        for i in range(0, n, 16):
            acc.update(t[i:i + 16], make(scores[i:i + 16]))
        assert acc.compute() == pytest.approx(
            fk.cohen_kappa(t, scores, weights="quadratic"), rel=1e-12)
    # first batch: column i is the i-th sorted class of its y_true
    with pytest.raises(ValueError, match="3 columns but the sorted classes observed in "
                       "`y_true` number 2"):
        CohenKappa().update([20, 30, 30], np.eye(3))


def test_weighted_stream_of_numeric_categoricals_keeps_learning():
    # numbers are ordered by value: a numeric ordered Categorical declares nothing new,
    # so a later batch may bring a class it did not list (as before)
    oc = lambda a: pd.Categorical(a, categories=[0, 1, 2], ordered=True)  # noqa: E731
    t, p = [0, 1, 2, 1, 0], [0, 2, 2, 1, 1]
    t2, p2 = [3, 2, 3], [3, 3, 1]
    acc = CohenKappa(weights="quadratic").update(oc(t), oc(p)).update(t2, p2)
    assert acc.labels.tolist() == [0, 1, 2, 3]
    assert acc.compute() == pytest.approx(
        cohen_kappa_score(t + t2, p + p2, weights="quadratic"), rel=1e-12)


def test_weighted_stream_refuses_a_categorical_of_another_order():
    scale = ["lo", "mid", "hi"]
    first = pd.Categorical(["lo", "hi", "mid"], categories=scale, ordered=True)
    other = pd.Categorical(["lo", "hi"], categories=scale[::-1], ordered=True)
    acc = CohenKappa(weights="quadratic").update(first, first)
    with pytest.raises(ValueError, match=r"this batch declares the classes \['hi', 'mid', "
                                         r"'lo'\] \(an ordered categorical, or fitted cut "
                                         r"points\), but the stream's classes are"):
        acc.update(other, other)
    assert acc.n_rows == 3  # left unchanged


def test_a_stream_of_scores_refuses_a_label_outside_the_learned_columns():
    # learned [0, 1, 2]: a batch whose y_true holds 3 cannot be read against three
    # columns without shifting them, so it is an error, as in one call
    acc = CohenKappa().update([0, 1, 2, 0, 1, 2], np.eye(3)[[0, 1, 2, 0, 1, 2]])
    with pytest.raises(ValueError, match=r"the scores' 3 columns name the 3 labels learned "
                       r"so far \[0, 1, 2\]"):
        acc.update([1, 2, 3], np.eye(3))
    with pytest.raises(ValueError, match=r"^`sample_weight` must be non-negative"):
        acc.update([0, 1, 2], np.eye(3), sample_weight=[1, -1, 1])  # other errors as they are
    with pytest.raises(ValueError, match="3 columns but"):
        fk.cohen_kappa([0, 1, 2, 0, 1, 2, 1, 2, 3], np.eye(3)[[0, 1, 2, 0, 1, 2, 0, 1, 2]])
    assert acc.n_rows == 6


def test_weighted_stream_refuses_a_y_pred_categorical_of_another_order():
    scale = ["lo", "mid", "hi"]
    cat = lambda v, c=scale: pd.Categorical(v, categories=c, ordered=True)  # noqa: E731
    acc = CohenKappa(weights="quadratic").update(cat(["lo", "mid", "hi"]),
                                                cat(["lo", "mid", "hi"]))
    with pytest.raises(ValueError, match=r"classes \['hi', 'mid', 'lo'\] \(an ordered "
                                         r"categorical, or fitted cut points\), but the stream"):
        acc.update(cat(["lo"]), cat(["hi"], scale[::-1]))
    assert acc.n_rows == 3


def test_a_batch_of_zero_weights_is_an_update_not_an_error(rng):
    """A batch whose rows all weigh 0 declares its classes and adds nothing, as
    those rows do in one call; only a stream with no weight at all cannot be
    scored.  (File scoring hands each thread a slice of a batch: a slice of zero
    weights failed before, depending on the thread count.)"""
    t, p = rng.integers(0, 4, 400), rng.integers(0, 4, 400)
    w = np.r_[np.zeros(200), rng.random(200)]
    acc = CohenKappa(weights="quadratic")
    for lo in range(0, 400, 50):
        acc.update(t[lo:lo + 50], p[lo:lo + 50], sample_weight=w[lo:lo + 50])
    want = cohen_kappa_score(t, p, weights="quadratic", sample_weight=w)
    assert acc.compute() == pytest.approx(want, rel=1e-12)
    assert acc.compute() == pytest.approx(
        fk.cohen_kappa(t, p, weights="quadratic", sample_weight=w), rel=1e-12)
    # a zero-weight row still declares its class, as in one call
    one = CohenKappa().update([0, 1, 1], [0, 1, 0], sample_weight=[1.0, 2, 1])
    one.update([2], [1], sample_weight=[0.0])
    assert one.labels.tolist() == [0, 1, 2]
    assert one.compute() == fk.cohen_kappa([0, 1, 1, 2], [0, 1, 0, 1],
                                           sample_weight=[1, 2, 1, 0])
    with pytest.raises(ValueError, match="only zero-weight rows"):
        CohenKappa().update([2], [1], sample_weight=[0.0]).compute()
    with pytest.raises(ValueError, match="zero everywhere"):  # one call: still an error
        fk.cohen_kappa([2], [1], sample_weight=[0.0])


def test_batch_whose_rows_all_drop_adds_nothing():
    # as torchmetrics: an all-ignored (or all-missing, omitted) batch is no update
    acc = fk.CohenKappa(n_classes=3).update([0, 1, 2], [0, 1, 1])
    acc.update([255, 255], [0, 1], ignore_index=255)
    acc.update([np.nan], [1], nan_policy="omit")
    assert acc.compute() == fk.cohen_kappa([0, 1, 2], [0, 1, 1], n_classes=3)
    learned = fk.CohenKappa()
    learned.update([np.nan], [np.nan], nan_policy="omit")
    learned.update(["x"], ["y"], ignore_index="x")
    learned.update([0, 1, 1], [0, 1, 0])
    assert learned.compute() == fk.cohen_kappa([0, 1, 1], [0, 1, 0])
    assert list(learned.labels) == [0, 1]
    empty = fk.CohenKappa().update([255], [1], ignore_index=255)
    with pytest.raises(ValueError, match="holds no rows"):
        empty.compute()
    with pytest.raises(ValueError, match="missing value"):  # nan_policy='raise' still raises
        fk.CohenKappa().update([np.nan], [1])
    with pytest.raises(ValueError, match="no rows left to score"):  # one call: an error
        fk.cohen_kappa([255], [1], ignore_index=255)


def test_all_missing_batch_is_an_error_under_nan_policy_raise():
    # a batch with no class left is empty only when its rows are dropped on purpose
    with pytest.raises(ValueError, match=r"2 rows hold a missing value .* `y_true` and "
                                         r"`y_pred`; pass nan_policy='omit'"):
        fk.CohenKappa().update([np.nan, np.nan], [np.nan, np.nan])
    with pytest.raises(ValueError, match="missing value"):
        fk.CohenKappa().update([np.nan, 255], [1, 255], ignore_index=255)
    # a row ignored on either side is dropped before its missing value counts
    acc = fk.CohenKappa().update([np.nan], [255], ignore_index=255)
    with pytest.raises(ValueError, match="holds no rows"):
        acc.compute()


def test_ordered_categoricals_keep_their_order_through_merges():
    pd = pytest.importorskip("pandas")
    for cats in ([3, 1, 2, 7], ["severe", "none", "mild"]):
        dtype = pd.CategoricalDtype(cats, ordered=True)
        t = pd.Series(pd.Categorical([cats[0], cats[1], cats[2], cats[0]], dtype=dtype))
        p = pd.Series(pd.Categorical([cats[0], cats[2], cats[2], cats[1]], dtype=dtype))
        a = fk.CohenKappa(weights="quadratic").update(t[:2], p[:2])
        a.merge(fk.CohenKappa(weights="quadratic").update(t[2:], p[2:]))
        assert list(a.labels) == cats
        assert a.compute() == pytest.approx(fk.cohen_kappa(t, p, weights="quadratic"),
                                            abs=1e-12)


def test_fitted_cuts_with_string_labels_declare_a_weighted_stream():
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(0)
    names = np.array(["lo", "mid", "hi"])
    y = names[rng.integers(0, 3, 300)]
    s = np.array([{"lo": 0, "mid": 1, "hi": 2}[v] for v in y]) + rng.normal(0, 0.6, 300)
    cuts = fk.optimize_thresholds(y, s, labels=["lo", "mid", "hi"], weights="quadratic")
    got = fk.CohenKappa(weights="quadratic").update(y[:150], s[:150], thresholds=cuts)
    got.update(y[150:], s[150:], thresholds=cuts)
    pred = np.asarray(cuts.labels)[np.searchsorted(np.asarray(cuts), s, side="right")]
    assert got.compute() == pytest.approx(cohen_kappa_score(
        y, pred, weights="quadratic", labels=["lo", "mid", "hi"]), abs=1e-12)
