"""torchmetrics as an oracle: values, shapes ((N, ...) labels, (N, C, ...) scores), spellings.

torch (pinned to a CPU build) and torchmetrics are in the `test` extra, so CI
runs this file; it skips only in an environment installed without them.
"""

from __future__ import annotations

import numpy as np
import pytest

import fastkappa as fk

torch = pytest.importorskip("torch")
tmf = pytest.importorskip("torchmetrics.functional.classification")
from torchmetrics.functional import cohen_kappa as tm_cohen_kappa  # noqa: E402

import fastkappa.torch as fkt  # noqa: E402  (torch is here: an import error must fail)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("k", [2, 5, 12])
def test_cohen_kappa_matches_torchmetrics(weights, k):
    rng = np.random.default_rng(k)
    t = rng.integers(0, k, 5000)
    p = np.clip(t + rng.integers(-2, 3, 5000), 0, k - 1)
    expected = float(tmf.multiclass_cohen_kappa(torch.from_numpy(p), torch.from_numpy(t),
                                                num_classes=k, weights=weights))
    assert fk.cohen_kappa(t, p, weights=weights, n_classes=k) == pytest.approx(expected,
                                                                              abs=1e-6)


def test_torch_tensor_input_is_detached_and_read():
    t = torch.tensor([2, 1, 0, 0])
    p = torch.tensor([[0.16, 0.26, 0.58], [0.22, 0.61, 0.17], [0.71, 0.09, 0.2],
                      [0.05, 0.82, 0.13]], requires_grad=True)
    expected = float(tmf.multiclass_cohen_kappa(p, t, num_classes=3))
    assert fk.cohen_kappa(t, p, n_classes=3) == pytest.approx(expected, abs=1e-6)
    assert fk.cohen_kappa(t, p, n_classes=3) == pytest.approx(7 / 11)


def test_ignore_index_differs_from_torchmetrics_on_purpose():
    # torchmetrics drops rows where the *target* equals ignore_index; fastkappa drops rows
    # where either side does (documented in the README)
    t = np.array([0, 1, 1, 0, 1, 0])
    p = np.array([0, 1, -1, 0, 1, 1])
    ours = fk.cohen_kappa(t, p, ignore_index=-1, n_classes=2)
    keep = (t != -1) & (p != -1)
    assert ours == pytest.approx(fk.cohen_kappa(t[keep], p[keep], n_classes=2))


def _tm(preds, target, k, weights=None):
    return float(tm_cohen_kappa(torch.as_tensor(preds), torch.as_tensor(target),
                                task="multiclass", num_classes=k, weights=weights))


@pytest.mark.parametrize("weights", [None, "none", "linear", "quadratic"])
@pytest.mark.parametrize("shape", [(16, 9), (4, 8, 8), (2, 3, 5, 7)])
def test_nd_labels_match_torchmetrics(weights, shape):
    # segmentation-style masks: torchmetrics flattens (N, ...); so does fastkappa
    rng = np.random.default_rng(sum(shape))
    k = 5
    t = rng.integers(0, k, shape)
    p = np.clip(t + rng.integers(-2, 3, shape), 0, k - 1)
    expected = _tm(p, t, k, weights)
    assert fk.cohen_kappa(t, p, weights=weights, n_classes=k) == pytest.approx(expected,
                                                                              abs=1e-6)
    assert fk.cohen_kappa(torch.from_numpy(t), torch.from_numpy(p), weights=weights,
                          n_classes=k) == fk.cohen_kappa(t.ravel(), p.ravel(),
                                                         weights=weights, n_classes=k)
    acc = fk.CohenKappa(n_classes=k, weights=weights).update(t, p)
    assert acc.compute() == pytest.approx(expected, abs=1e-6)
    # per-sample weights as a tensor that requires grad: detached, repeated over the mask
    w = torch.ones(shape[0], dtype=torch.float64, requires_grad=True)
    assert fk.cohen_kappa(torch.from_numpy(t), torch.from_numpy(p), weights=weights,
                          n_classes=k, sample_weight=w) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("weights", [None, "quadratic"])
@pytest.mark.parametrize("shape", [(6, 10), (3, 6, 7), (12, 1), (5, 1, 1), (4, 3, 1)])
def test_nd_scores_match_torchmetrics(weights, shape):
    # (N, C, ...) logits: class axis at position 1, argmax there (torchmetrics' rule)
    rng = np.random.default_rng(len(shape))
    k = 4
    t = rng.integers(0, k, shape)
    logits = rng.normal(size=(shape[0], k, *shape[1:])).astype(np.float32)
    expected = _tm(logits, t, k, weights)
    got = fk.cohen_kappa(torch.from_numpy(t), torch.from_numpy(logits).requires_grad_(True),
                         weights=weights, n_classes=k)
    assert got == pytest.approx(expected, abs=1e-6)
    flat = np.moveaxis(logits, 1, -1).reshape(-1, k)
    assert got == fk.cohen_kappa(t.ravel(), flat, weights=weights, n_classes=k)


@pytest.mark.parametrize("weights", [None, "linear"])
def test_scores_with_a_trailing_axis_of_one_everywhere(weights):
    # (N, C, 1) scores with (N, 1) targets: torchmetrics' shapes, not a column of labels
    rng = np.random.default_rng(3)
    t = torch.from_numpy(rng.integers(0, 3, (40, 1)))
    x = torch.from_numpy(rng.normal(size=(40, 3, 1)))
    flat_t, flat_x = t[:, 0], x[:, :, 0]
    assert fk.cohen_kappa(t, x, weights=weights) == pytest.approx(
        _tm(x.numpy(), t.numpy(), 3, weights), abs=1e-6)
    assert fk.cohen_kappa(t, x, weights=weights) == fk.cohen_kappa(flat_t, flat_x,
                                                                   weights=weights)
    np.testing.assert_array_equal(fk.confusion_matrix(t, x), fk.confusion_matrix(flat_t, flat_x))
    assert fk.kappa_ci(t, x, weights=weights, method="asymptotic").high == fk.kappa_ci(
        flat_t, flat_x, weights=weights, method="asymptotic").high
    acc = fk.CohenKappa(n_classes=3, weights=weights).update(t, x)
    assert acc.compute() == fk.cohen_kappa(flat_t, flat_x, weights=weights, n_classes=3)


def test_bfloat16_scores_and_labels_read_exactly():
    # NumPy has no bfloat16: the values are read through float32, which holds them exactly
    rng = np.random.default_rng(4)
    t = torch.from_numpy(rng.integers(0, 3, 50))
    x = torch.from_numpy(rng.normal(size=(50, 3))).bfloat16()
    x32 = x.float()
    assert fk.cohen_kappa(t, x) == fk.cohen_kappa(t, x32)
    assert fk.cohen_kappa(t, x) == pytest.approx(_tm(x32.numpy(), t.numpy(), 3, None), abs=1e-6)
    assert fk.kappa_ci(t, x, method="asymptotic").low == fk.kappa_ci(
        t, x32, method="asymptotic").low
    assert fk.CohenKappa(n_classes=3).update(t, x).compute() == fk.cohen_kappa(t, x32)
    assert fk.cohen_kappa(t.bfloat16(), t.bfloat16()) == 1.0


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_loss_ignore_index_matches_torchmetrics(weights):
    # the loss drops ignored rows on the target side only, as torchmetrics does (a row
    # of probabilities has no predicted label): on one-hot probabilities its linear
    # form is 1 - torchmetrics' kappa with the same ignore_index
    rng = np.random.default_rng(8)
    k = 5
    t = rng.integers(0, k, (6, 7, 7))
    p = np.clip(t + rng.integers(-2, 3, t.shape), 0, k - 1)
    t[:, :2] = 255  # void pixels
    expected = float(tmf.multiclass_cohen_kappa(torch.from_numpy(p), torch.from_numpy(t),
                                                num_classes=k, weights=weights,
                                                ignore_index=255))
    onehot = torch.nn.functional.one_hot(torch.from_numpy(p), k).movedim(-1, 1).double()
    loss = fkt.kappa_loss(onehot, torch.from_numpy(t), weights=weights, form="linear",
                          from_logits=False, ignore_index=255)
    assert 1 - loss.item() == pytest.approx(expected, abs=1e-6)
