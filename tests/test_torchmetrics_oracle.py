"""torchmetrics as an oracle, when installed (the `bench` extra pins a CPU torch).

Skips as a whole when torch or torchmetrics is absent: they are kept out of
the `test` extra because an unpinned torch pulls a multi-GB CUDA build.
"""

from __future__ import annotations

import numpy as np
import pytest

import fastkappa as fk

torch = pytest.importorskip("torch")
tmf = pytest.importorskip("torchmetrics.functional.classification")


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
