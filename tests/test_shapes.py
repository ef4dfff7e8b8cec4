"""torchmetrics' shapes and spellings: (N, ...) labels, (N, C, ...) scores, weights="none".

Every entry point that takes labels must give on (N, d1, ...) input exactly
what it gives on the flattened rows (the oracle here is the package's own
1-D path, itself checked against scikit-learn and brute force elsewhere);
tests/test_torchmetrics_oracle.py compares the same inputs with torchmetrics.
"""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastkappa as fk


def _data(rng, shape, k=4, c_axis=False):
    t = rng.integers(0, k, shape)
    p = np.clip(t + rng.integers(-1, 2, shape), 0, k - 1)
    if not c_axis:
        return t, p
    scores = rng.random((shape[0], k, *shape[1:]))
    # make argmax over axis 1 agree with p
    np.put_along_axis(scores, np.expand_dims(p, 1), 2.0, axis=1)
    return t, p, scores


# --------------------------------------------------------------------------- weights="none"


def test_weights_none_string_everywhere(rng):
    t, p = _data(rng, 400)
    ref = fk.cohen_kappa(t, p)
    assert fk.cohen_kappa(t, p, weights="none") == ref
    assert fk.kappa_from_confusion(fk.confusion_matrix(t, p), "none") == ref
    np.testing.assert_array_equal(fk.weight_matrix(4, "none"), fk.weight_matrix(4, None))
    a = fk.kappa_ci(t, p, weights="none", seed=3, n_resamples=200)
    b = fk.kappa_ci(t, p, seed=3, n_resamples=200)
    assert (a.estimate, a.low, a.high) == (b.estimate, b.low, b.high)
    q = np.where(t > 0, t, 1)
    c = fk.compare(t, {"a": p, "b": q}, weights="none", seed=1, n_resamples=200)
    d = fk.compare(t, {"a": p, "b": q}, seed=1, n_resamples=200)
    assert c.weights == d.weights == "none" and str(c) == str(d)  # results name it
    g = fk.kappa_by_group(t, p, t % 2, weights="none")
    np.testing.assert_array_equal(g.estimate, fk.kappa_by_group(t, p, t % 2).estimate)
    assert g.weights == "none" and str(g).startswith("unweighted kappa by group")
    acc = fk.CohenKappa(weights="none").update(t, p)
    assert acc.weights is None and acc.compute() == ref
    acc.merge(fk.CohenKappa().update(t, p))  # same weights: merges
    np.testing.assert_array_equal(
        fk.optimize_thresholds(t, p + 0.1, weights="none"),
        fk.optimize_thresholds(t, p + 0.1, weights=None))


def test_unknown_weights_message_names_none():
    with pytest.raises(ValueError, match=r"'none' also means unweighted\); got 'nothing'"):
        fk.cohen_kappa([0, 1], [0, 1], weights="nothing")


# --------------------------------------------------------------------------- label shapes


@pytest.mark.parametrize("shape", [(6, 5), (3, 4, 5), (2, 3, 4, 5)])
def test_nd_labels_equal_flattened(rng, shape):
    t, p = _data(rng, shape)
    for weights in (None, "linear", "quadratic"):
        assert fk.cohen_kappa(t, p, weights=weights) == fk.cohen_kappa(
            t.ravel(), p.ravel(), weights=weights)
    np.testing.assert_array_equal(fk.confusion_matrix(t, p),
                                  fk.confusion_matrix(t.ravel(), p.ravel()))


def test_nd_scores_argmax_over_axis_1(rng):
    t, p, scores = _data(rng, (5, 6, 7), c_axis=True)
    assert fk.cohen_kappa(t, scores, weights="quadratic", n_classes=4) == fk.cohen_kappa(
        t.ravel(), p.ravel(), weights="quadratic", n_classes=4)
    np.testing.assert_array_equal(fk.confusion_matrix(t, scores, n_classes=4),
                                  fk.confusion_matrix(t.ravel(), p.ravel(), n_classes=4))
    # (N, C) stays the 2-D scores case it always was
    t2, p2, s2 = _data(rng, (50,), c_axis=True)
    assert fk.cohen_kappa(t2, s2, n_classes=4) == fk.cohen_kappa(t2, p2, n_classes=4)


def test_no_copy_of_c_contiguous_labels(monkeypatch, rng):
    t, p = _data(rng, (4, 16, 16))
    seen = []
    import fastkappa.metrics as metrics

    real = metrics.encode_pair

    def spy(y_true, y_pred, **kw):
        seen.append((y_true, y_pred))
        return real(y_true, y_pred, **kw)

    monkeypatch.setattr(metrics, "encode_pair", spy)
    fk.cohen_kappa(t, p)
    (ft, fp), = seen
    assert ft.shape == (t.size,) and np.shares_memory(ft, t) and np.shares_memory(fp, p)


def test_sample_weight_broadcast_or_full_shape(rng):
    t, p = _data(rng, (6, 3, 4))
    w = rng.random(6)
    wfull = np.broadcast_to(w[:, None, None], t.shape)
    expected = fk.cohen_kappa(t.ravel(), p.ravel(), sample_weight=wfull.ravel())
    assert fk.cohen_kappa(t, p, sample_weight=w) == expected
    assert fk.cohen_kappa(t, p, sample_weight=np.ascontiguousarray(wfull)) == expected
    assert fk.cohen_kappa(t, p, sample_weight=list(w)) == expected
    np.testing.assert_array_equal(
        fk.confusion_matrix(t, p, sample_weight=w),
        fk.confusion_matrix(t.ravel(), p.ravel(), sample_weight=wfull.ravel()))


def test_kappa_ci_clusters_broadcast(rng):
    t, p = _data(rng, (64, 5))
    patients = np.arange(64) // 2  # 32 clusters: above the few-cluster warning
    flat_clusters = np.repeat(patients, 5)
    for method in ("percentile", "asymptotic"):
        a = fk.kappa_ci(t, p, clusters=patients, method=method, seed=4, n_resamples=300)
        b = fk.kappa_ci(t.ravel(), p.ravel(), clusters=flat_clusters, method=method, seed=4,
                        n_resamples=300)
        assert (a.estimate, a.low, a.high, a.standard_error) == (
            b.estimate, b.low, b.high, b.standard_error)
    a = fk.kappa_ci(t, p, seed=4, n_resamples=300, method="bca")
    b = fk.kappa_ci(t.ravel(), p.ravel(), seed=4, n_resamples=300, method="bca")
    assert (a.low, a.high) == (b.low, b.high)


def test_compare_nd(rng):
    t, p = _data(rng, (30, 4))
    q = np.clip(t + rng.integers(-2, 3, t.shape), 0, 3)
    s = rng.random((30, 4, 4))
    np.put_along_axis(s, np.expand_dims(q, 1), 2.0, axis=1)
    a = fk.compare(t, {"p": p, "q": s}, n_classes=4, seed=2, n_resamples=200,
                   clusters=np.arange(30))
    b = fk.compare(t.ravel(), {"p": p.ravel(), "q": q.ravel()}, n_classes=4, seed=2,
                   n_resamples=200, clusters=np.repeat(np.arange(30), 4))
    assert str(a) == str(b)


def test_kappa_by_group_nd(rng):
    t, p = _data(rng, (20, 3, 3))
    site = np.array(["a", "b"] * 10)
    a = fk.kappa_by_group(t, p, site, weights="quadratic")
    b = fk.kappa_by_group(t.ravel(), p.ravel(), np.repeat(site, 9), weights="quadratic")
    np.testing.assert_array_equal(a.estimate, b.estimate)
    np.testing.assert_array_equal(a.n_rows, b.n_rows)
    full = np.broadcast_to(site[:, None, None], t.shape)
    np.testing.assert_array_equal(fk.kappa_by_group(t, p, full, weights="quadratic").estimate,
                                  b.estimate)
    a = fk.kappa_by_group(t, p, site, method="percentile", n_resamples=200, seed=1)
    b = fk.kappa_by_group(t.ravel(), p.ravel(), np.repeat(site, 9), method="percentile",
                          n_resamples=200, seed=1)
    np.testing.assert_array_equal(a.low, b.low)
    np.testing.assert_array_equal(a.high, b.high)


def test_streaming_update_nd(rng):
    t, p, s = _data(rng, (8, 5, 5), c_axis=True)
    acc = fk.CohenKappa(n_classes=4, weights="quadratic")
    acc.update(t[:4], s[:4]).update(t[4:], p[4:], sample_weight=np.ones(4))
    one = fk.CohenKappa(n_classes=4, weights="quadratic").update(t.ravel(), p.ravel())
    np.testing.assert_array_equal(acc.confusion, one.confusion)
    learn = fk.CohenKappa().update(t, p)
    np.testing.assert_array_equal(learn.confusion, fk.confusion_matrix(t.ravel(), p.ravel()))


def test_list_of_lists_and_foreign_arrays(rng):
    t, p = _data(rng, (5, 4))
    assert fk.cohen_kappa(t.tolist(), p.tolist()) == fk.cohen_kappa(t.ravel(), p.ravel())

    class Wrapped:  # anything with __array__ and ndim
        def __init__(self, a):
            self.a, self.ndim = a, a.ndim

        def __array__(self, dtype=None, copy=None):
            return self.a

    assert fk.cohen_kappa(Wrapped(t), Wrapped(p)) == fk.cohen_kappa(t.ravel(), p.ravel())


def test_column_vectors_unchanged(rng):
    # (n, 1) y_true next to (n, K) scores: still the scores case, not n*K labels
    t, p, s = _data(rng, (30,), c_axis=True)
    assert fk.cohen_kappa(t[:, None], s, n_classes=4) == fk.cohen_kappa(t, p, n_classes=4)
    assert fk.cohen_kappa(t[:, None], p[:, None]) == fk.cohen_kappa(t, p)


@pytest.mark.parametrize(("t_shape", "p_shape", "match"), [
    ((4, 5), (4, 6), r"`y_pred` has shape \(4, 6\) but `y_true` has shape \(4, 5\); labels"),
    ((4, 5), (4, 3, 6), r"scores must be \(N, C, \.\.\.\) = \(4, 'C', 5\)"),
    ((4, 5), (4, 3, 5, 1), r"pass labels of the same shape or scores of shape \(4, 'C', 5\)"),
    ((4, 5), (4,), r"`y_pred` is 1-D with 4 rows but `y_true` has shape \(4, 5\)"),
    # as many values, other layout: refused like torchmetrics, not raveled
    ((4, 5), (20,), r"`y_pred` is 1-D with 20 rows but `y_true` has shape \(4, 5\); .*"
                    r"or flatten both"),
    ((2, 3, 2), (12,), r"`y_pred` is 1-D with 12 rows"),
])
def test_shape_mismatch_messages(t_shape, p_shape, match):
    with pytest.raises(ValueError, match=match):
        fk.cohen_kappa(np.zeros(t_shape, int), np.zeros(p_shape, int))


def test_same_size_other_layout_refused_everywhere(rng):
    t, p = _data(rng, (4, 5))
    flat = p.reshape(-1)
    with pytest.raises(ValueError, match=r"`y_pred` is 1-D with 20 rows"):
        fk.CohenKappa(n_classes=4).update(t, flat)
    with pytest.raises(ValueError, match=r"`predictions\['b'\]` is 1-D with 20 rows"):
        fk.compare(t, {"a": p, "b": flat}, n_resamples=50, seed=0)
    with pytest.raises(ValueError, match=r"`y_pred` is 1-D with 20 rows"):
        fk.kappa_ci(t, flat, method="asymptotic")
    # (N, 1, 1) next to (N,): the same N rows either way, still scored
    assert fk.cohen_kappa(t[:, :1, None], p[:, 0]) == fk.cohen_kappa(t[:, 0], p[:, 0])


def test_row_array_shape_message(rng):
    t, p = _data(rng, (4, 5))
    with pytest.raises(ValueError, match=r"`sample_weight` must have shape \(4,\) .*or "
                                         r"\(4, 5\) \(the shape of `y_true`\); got shape \(5,\)"):
        fk.cohen_kappa(t, p, sample_weight=np.ones(5))
    with pytest.raises(ValueError, match=r"`groups` must have shape \(4,\)"):
        fk.kappa_by_group(t, p, np.ones(3))
    with pytest.raises(ValueError, match=r"`clusters` must have shape \(4,\)"):
        fk.kappa_ci(t, p, clusters=np.ones(7), method="asymptotic")


def test_issue_example_no_longer_raises():
    # the call from issue 14: all-zero masks, kappa undefined (a warning, not a shape error)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fk.UndefinedKappaWarning)
        assert np.isnan(fk.cohen_kappa(np.zeros((2, 8, 8), int), np.zeros((2, 8, 8), int)))


@pytest.mark.skipif(importlib.util.find_spec("dask") is None, reason="dask extra absent")
def test_dask_nd_arrays(rng):
    da = pytest.importorskip("dask.array")
    import dask

    import fastkappa.dask as fkd

    t, p, s = _data(rng, (12, 4, 3), c_axis=True)
    w = rng.random(12)
    with dask.config.set(scheduler="synchronous"):
        dt = da.from_array(t, chunks=(5, 2, 3))
        got = fkd.cohen_kappa(dt, da.from_array(p, chunks=(5, 4, 1)), weights="quadratic",
                              sample_weight=da.from_array(w, chunks=5))
        ref = fk.cohen_kappa(t.ravel(), p.ravel(), weights="quadratic",
                             sample_weight=np.repeat(w, 12))
        assert got == pytest.approx(ref, rel=1e-12)
        got = fkd.confusion_matrix(dt, da.from_array(s, chunks=(5, 2, 2, 3)), n_classes=4)
        np.testing.assert_array_equal(got, fk.confusion_matrix(t.ravel(), p.ravel(),
                                                               n_classes=4))
        g = np.arange(12) % 3
        got = fkd.kappa_by_group(dt, da.from_array(p, chunks=(5, 4, 3)),
                                 da.from_array(g, chunks=5), weights="quadratic")
        ref = fk.kappa_by_group(t.ravel(), p.ravel(), np.repeat(g, 12), weights="quadratic")
        np.testing.assert_allclose(got.estimate, ref.estimate, rtol=1e-12)
        with pytest.warns(fk.DegenerateIntervalWarning, match="only 12 clusters"):
            got = fkd.kappa_ci(dt, da.from_array(p, chunks=(5, 4, 3)), method="asymptotic",
                               clusters=da.from_array(np.arange(12), chunks=5))
        with pytest.warns(fk.DegenerateIntervalWarning, match="only 12 clusters"):
            ref = fk.kappa_ci(t.ravel(), p.ravel(), method="asymptotic",
                              clusters=np.repeat(np.arange(12), 12))
        assert (got.estimate, got.standard_error) == pytest.approx(
            (ref.estimate, ref.standard_error), rel=1e-12)


def test_thresholds_and_continuous_qwk_nd(rng):
    t, p = _data(rng, (10, 6))
    s = p + rng.normal(0, 0.3, p.shape)
    w = rng.random(10)
    np.testing.assert_array_equal(
        fk.optimize_thresholds(t, s, n_classes=4, sample_weight=w),
        fk.optimize_thresholds(t.ravel(), s.ravel(), n_classes=4,
                               sample_weight=np.repeat(w, 6)))
    opt = fk.ThresholdOptimizer(n_classes=4).fit(t, s)
    assert opt.qwk_ == fk.ThresholdOptimizer(n_classes=4).fit(t.ravel(), s.ravel()).qwk_
    assert fk.continuous_qwk(t, s, sample_weight=w) == fk.continuous_qwk(
        t.ravel(), s.ravel(), sample_weight=np.repeat(w, 6))
    with pytest.raises(ValueError, match=r"`scores` has shape \(10, 5\) but `y_true` has shape"):
        fk.continuous_qwk(t, s[:, :5])


def test_plot_confusion_matrix_nd(rng):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import fastkappa.plot as fkplot

    t, p = _data(rng, (6, 7))
    ax = fkplot.confusion_matrix(t, p, sample_weight=np.ones(6))
    ref = fkplot.confusion_matrix(t.ravel(), p.ravel())
    got = [txt.get_text() for txt in ax.texts]
    assert got == [txt.get_text() for txt in ref.texts] and got
    plt.close("all")


@settings(deadline=None, max_examples=60)
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=4).filter(
           lambda sh: sh[1:] != [1]),
       k=st.integers(2, 5), seed=st.integers(0, 2**32 - 1),
       order=st.sampled_from(["C", "F"]), weights=st.sampled_from([None, "quadratic"]))
def test_any_shape_and_layout_equals_flattened(shape, k, seed, order, weights):
    rng = np.random.default_rng(seed)
    shape = tuple(shape)
    t = np.asarray(rng.integers(0, k, shape), order=order)
    p = np.asarray(rng.integers(0, k, shape), order=order)
    scores = np.asarray(rng.random((shape[0], k, *shape[1:])), order=order)
    hard = np.argmax(scores, axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fk.UndefinedKappaWarning)
        got = fk.cohen_kappa(t, p, weights=weights, n_classes=k)
        ref = fk.cohen_kappa(t.ravel(), p.ravel(), weights=weights, n_classes=k)
        assert got == ref or (np.isnan(got) and np.isnan(ref))
        np.testing.assert_array_equal(
            fk.confusion_matrix(t, scores, n_classes=k),
            fk.confusion_matrix(t.ravel(), hard.ravel(), n_classes=k))


def test_iterator_predictions_follow_the_shape_rules(rng):
    t, p = _data(rng, (4, 5))
    with pytest.raises(ValueError, match=r"`y_pred` is 1-D with 20 rows"):
        fk.cohen_kappa(t, iter(p.reshape(-1).tolist()))
    assert fk.cohen_kappa(t, iter(p.tolist())) == fk.cohen_kappa(t, p)
    assert fk.cohen_kappa(t.reshape(-1), iter(p.reshape(-1).tolist())) == fk.cohen_kappa(t, p)
