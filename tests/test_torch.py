"""fastkappa.torch: soft kappa losses, checked against autograd and the hard kappa.

Oracles: torch.autograd.gradcheck (finite differences in float64) for the
gradients; fastkappa.cohen_kappa / continuous_qwk (themselves checked against
scikit-learn and brute force) for the values on one-hot probabilities; a
plain NumPy transcription of the formula for soft probabilities.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import naive
import numpy as np
import pytest

import fastkappa as fk

torch = pytest.importorskip("torch")
import fastkappa.torch as fkt  # noqa: E402  (torch is there: a broken module fails)

K = 5
CUSTOM = np.array([[0, 1, 3, 3, 3], [1, 0, 1, 3, 3], [2, 1, 0, 1, 3], [2, 2, 1, 0, 1],
                   [2, 2, 2, 1, 0]], dtype=float)  # asymmetric, non-polynomial
WEIGHTS = [None, "none", "linear", "quadratic", CUSTOM]
IDS = ["None", "none", "linear", "quadratic", "custom"]


def _batch(n=12, k=K, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(n, k, generator=g, dtype=dtype)
    target = torch.randint(0, k, (n,), generator=g)
    target[:2] = torch.tensor([0, k - 1])  # at least two classes
    return logits, target


@pytest.mark.parametrize("weights", WEIGHTS, ids=IDS)
@pytest.mark.parametrize("form", ["log", "linear"])
@pytest.mark.parametrize("from_logits", [True, False])
def test_gradcheck(weights, form, from_logits):
    logits, target = _batch()
    x = logits if from_logits else torch.softmax(logits, 1)
    x = x.detach().requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda z: fkt.kappa_loss(z, target, weights=weights, form=form,
                                 from_logits=from_logits), (x,), eps=1e-6, atol=1e-7)


@pytest.mark.parametrize("weights", WEIGHTS, ids=IDS)
def test_value_matches_formula_on_soft_probabilities(weights):
    logits, target = _batch(n=40, seed=3)
    p = torch.softmax(logits, 1).numpy()
    w = fk.weight_matrix(K, weights)
    ratio = naive.soft_kappa_ratio(p, target.numpy(), w)
    lin = fkt.kappa_loss(logits, target, weights=weights, form="linear")
    log = fkt.kappa_loss(logits, target, weights=weights)
    assert lin.item() == pytest.approx(ratio, rel=1e-13)
    assert log.item() == pytest.approx(np.log(ratio), rel=1e-13)


@pytest.mark.parametrize("weights", WEIGHTS, ids=IDS)
def test_one_hot_equals_hard_kappa(weights):
    rng = np.random.default_rng(5)
    t = rng.integers(0, K, 500)
    p = np.clip(t + rng.integers(-2, 3, 500), 0, K - 1)
    hard = fk.cohen_kappa(t, p, weights=weights, n_classes=K)
    onehot = torch.nn.functional.one_hot(torch.from_numpy(p), K).to(torch.float64)
    target = torch.from_numpy(t)
    lin = fkt.kappa_loss(onehot, target, weights=weights, form="linear", from_logits=False)
    log = fkt.kappa_loss(onehot, target, weights=weights, form="log", from_logits=False)
    assert abs(lin.item() - (1 - hard)) < 1e-12
    assert abs(log.item() - np.log(1 - hard)) < 1e-12


def test_spatial_equals_flattened():
    g = torch.Generator().manual_seed(7)
    logits = torch.randn(3, K, 4, 6, generator=g, dtype=torch.float64, requires_grad=True)
    target = torch.randint(0, K, (3, 4, 6), generator=g)
    flat = logits.detach().movedim(1, -1).reshape(-1, K).requires_grad_(True)
    a = fkt.kappa_loss(logits, target)
    b = fkt.kappa_loss(flat, target.reshape(-1))
    assert a.item() == pytest.approx(b.item(), rel=1e-14)
    for dtype in (torch.uint8, torch.int32):  # mask dtypes
        assert fkt.kappa_loss(logits, target.to(dtype)).item() == a.item()
    a.backward()
    b.backward()
    torch.testing.assert_close(logits.grad.movedim(1, -1).reshape(-1, K), flat.grad)


def test_module_equals_function():
    logits, target = _batch(n=30, seed=11)
    for kw in ({}, {"weights": "linear", "form": "linear"},
               {"weights": CUSTOM, "n_classes": K}):
        module = fkt.KappaLoss(**kw)
        assert isinstance(module, torch.nn.Module)
        assert module(logits, target).item() == fkt.kappa_loss(logits, target, **kw).item()
    assert "weights='custom'" in repr(fkt.KappaLoss(weights=CUSTOM))


def test_batch_of_two_and_training_step():
    logits = torch.tensor([[3.0, 0.0, -2.0], [0.0, 0.0, 4.0]], requires_grad=True)
    loss = fkt.kappa_loss(logits, torch.tensor([0, 2]))
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(logits.grad).all()
    # a few SGD steps on a fixed batch lower the loss and raise the hard QWK
    g = torch.Generator().manual_seed(0)
    x = torch.randn(256, 4, generator=g)
    y = (x[:, 0] * 1.5 + 2).round().clamp(0, 4).long()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 5)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)

    def qwk():
        return fk.cohen_kappa(y.numpy(), model(x).argmax(1).numpy(), weights="quadratic",
                              n_classes=5)

    before, first = qwk(), None
    for _ in range(60):
        opt.zero_grad()
        loss = fkt.kappa_loss(model(x), y)
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
    assert loss.item() < first - 1.0
    assert qwk() > max(before + 0.3, 0.7)  # 0.82 with this seed (0.76 to 0.88 over seeds)


@pytest.mark.parametrize("form", ["log", "linear"])
def test_single_class_batch_warns_and_has_zero_gradient(form):
    logits = torch.randn(6, K, dtype=torch.float64, requires_grad=True)
    with pytest.warns(fk.UndefinedKappaWarning, match="every target is class 2"):
        loss = fkt.kappa_loss(logits, torch.full((6,), 2), form=form)
    assert loss.item() == (0.0 if form == "log" else 1.0)
    loss.backward()
    assert torch.equal(logits.grad, torch.zeros_like(logits))


def test_zero_expected_disagreement_warns():
    # one-hot probabilities all in class 0, two target classes, weights that never
    # penalise predicting 0: expected disagreement zero
    w = np.array([[0.0, 1.0], [0.0, 0.0]])
    p = torch.tensor([[1.0, 0.0], [1.0, 0.0]], requires_grad=True)
    with pytest.warns(fk.UndefinedKappaWarning, match="expected disagreement is zero"):
        loss = fkt.kappa_loss(p, torch.tensor([0, 1]), weights=w, from_logits=False)
    loss.backward()
    assert torch.isfinite(loss) and torch.equal(p.grad, torch.zeros_like(p))


@pytest.mark.parametrize("form", ["log", "linear"])
def test_nan_input_says_so_and_stays_nan(form):
    # a NaN logit reaches every term: the loss is NaN (as torch's losses propagate
    # it), with a warning that names the input, not an undefined-kappa warning
    x = torch.randn(6, 3, dtype=torch.float64)
    x[0, 0] = float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("error", fk.UndefinedKappaWarning)
        with pytest.warns(RuntimeWarning, match="`input` holds NaN or inf"):
            loss = fkt.kappa_loss(x, torch.tensor([0, 1, 2, 0, 1, 2]), form=form)
    assert torch.isnan(loss)
    probs = torch.softmax(torch.randn(6, 3, dtype=torch.float64), 1)
    probs[0, 0] = float("inf")
    with pytest.warns(RuntimeWarning, match="`input` holds NaN or inf"):
        loss = fkt.kappa_loss(probs, torch.tensor([0, 1, 2, 0, 1, 2]), form=form,
                              from_logits=False)
    assert not torch.isfinite(loss)


def test_perfect_one_hot_log_is_finite():
    p = torch.eye(3, dtype=torch.float64, requires_grad=True)
    loss = fkt.kappa_loss(p, torch.arange(3), from_logits=False)
    assert torch.isfinite(loss) and loss.item() < -700
    loss.backward()
    assert torch.isfinite(p.grad).all()
    # saturated logits (softmax rounds to one-hot in float32): finite value and gradient
    logits = (torch.eye(3) * 200).requires_grad_(True)
    for form in ("log", "linear"):
        loss = fkt.kappa_loss(logits, torch.arange(3), form=form)
        loss.backward()
        assert torch.isfinite(loss) and torch.isfinite(logits.grad).all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_low_precision_and_autocast(dtype):
    g = torch.Generator().manual_seed(2)
    logits64 = torch.randn(4096, K, generator=g, dtype=torch.float64) * 8
    target = torch.randint(0, K, (4096,), generator=g)
    ref = fkt.kappa_loss(logits64.to(dtype).to(torch.float64), target).item()
    x = logits64.to(dtype).requires_grad_(True)
    loss = fkt.kappa_loss(x, target)
    assert loss.dtype == torch.float32
    # float32 accumulation over 4096 rows: the ratio to ~1e-6, not the 1e-3 of half precision
    assert loss.item() == pytest.approx(ref, abs=1e-5)
    loss.backward()
    assert x.grad.dtype == dtype and torch.isfinite(x.grad.float()).all()
    layer = torch.nn.Linear(K, K).to(torch.float32)
    with torch.autocast("cpu", dtype=dtype):
        out = layer(logits64.float())
        assert out.dtype == dtype
        loss = fkt.kappa_loss(out, target, form="linear")
    assert torch.isfinite(loss) and loss.dtype == torch.float32
    loss.backward()
    assert torch.isfinite(layer.weight.grad).all()
    small = fkt.kappa_loss(torch.tensor([[9.0, -9.0], [-9.0, 9.0]], dtype=dtype),
                           torch.tensor([0, 1]))
    assert torch.isfinite(small)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"form": "square"}, r"`form` must be 'log' or 'linear'; got 'square'"),
    ({"weights": "cubic"}, r"`weights` must be None, 'linear', 'quadratic'"),
    ({"n_classes": 4}, r"`n_classes`=4 but `input` has 5 classes along axis 1"),
    ({"weights": np.ones((3, 3))}, r"shape \(K, K\) = \(5, 5\)"),
    # a string is truthy: from_logits="False" applied a second softmax silently
    ({"from_logits": "False"}, r"`from_logits` must be True .* or False .*; got 'False'"),
    ({"from_logits": 0}, r"`from_logits` must be True"),
    ({"from_logits": None}, r"`from_logits` must be True"),
    ({"n_classes": 5.0}, r"`n_classes` must be a positive integer; got 5\.0"),
    ({"n_classes": True}, r"`n_classes` must be a positive integer; got True"),
    ({"n_classes": 0}, r"`n_classes` must be a positive integer; got 0"),
    ({"ignore_index": 2}, r"`ignore_index`=2 is one of the classes 0\.\.4.*outside them"),
    ({"ignore_index": np.int64(0)}, r"`ignore_index`=0 is one of the classes"),
    ({"ignore_index": True}, r"`ignore_index` must be an int.*-100.*got True"),
    ({"ignore_index": -100.0}, r"`ignore_index` must be an int.*got -100\.0"),
    ({"ignore_index": "void"}, r"`ignore_index` must be an int.*got 'void'"),
])
def test_option_errors(kwargs, match):
    logits, target = _batch()
    with pytest.raises(ValueError, match=match):
        fkt.kappa_loss(logits, target, **kwargs)
    if "`n_classes`=" not in match:  # the module refuses the rest at construction
        with pytest.raises(ValueError, match=match):
            fkt.KappaLoss(**{"n_classes": K, **kwargs})


def test_numpy_bools_and_ints_are_options():
    logits, target = _batch()
    ref = fkt.kappa_loss(torch.softmax(logits, 1), target, from_logits=False, n_classes=K,
                         ignore_index=-100)
    kw = {"from_logits": np.False_, "n_classes": np.int64(K), "ignore_index": np.int32(-100)}
    assert fkt.kappa_loss(torch.softmax(logits, 1), target, **kw).item() == ref.item()
    module = fkt.KappaLoss(**kw)
    assert module.from_logits is False and type(module.n_classes) is int
    assert module(torch.softmax(logits, 1), target).item() == ref.item()


def test_input_errors():
    logits, target = _batch()
    with pytest.raises(ValueError, match=r"`target` holds class index 5, outside 0\.\.4"):
        fkt.kappa_loss(logits, torch.full((12,), 5))
    with pytest.raises(ValueError, match=r"`target` holds class index -1"):
        fkt.kappa_loss(logits, torch.full((12,), -1))
    with pytest.raises(ValueError, match=r"`target` must have shape \(N, \.\.\.\) = \(12,\)"):
        fkt.kappa_loss(logits, target[:5])
    with pytest.raises(ValueError, match=r"integer class indices.*continuous_qwk_loss"):
        fkt.kappa_loss(logits, target.double())
    with pytest.raises(ValueError, match=r"\(N, C\) or \(N, C, \.\.\.\).*continuous_qwk_loss"):
        fkt.kappa_loss(logits[:, 0], target)
    with pytest.raises(ValueError, match="must be torch tensors"):
        fkt.kappa_loss(logits.numpy(), target)
    with pytest.raises(ValueError, match="empty"):
        fkt.kappa_loss(logits[:0], target[:0])
    with pytest.raises(ValueError, match=r"`form` must be 'log' or 'linear'"):
        fkt.KappaLoss(form="exp")
    with pytest.raises(ValueError, match=r"`target` holds class index -100.*if -100 marks "
                       r"rows to leave out, pass ignore_index=-100"):
        fkt.kappa_loss(logits, torch.where(target == 3, -100, target))


# --------------------------------------------------------------------------- ignore_index


def _with_ignored(n=30, k=K, seed=0, marker=-100):
    """A float64 batch whose targets hold ``marker`` on a third of the rows."""
    logits, target = _batch(n=n, k=k, seed=seed)
    target = target.clone()
    target[2::3] = marker
    return logits, target, target != marker


@pytest.mark.parametrize("weights", WEIGHTS, ids=IDS)
@pytest.mark.parametrize("form", ["log", "linear"])
def test_ignore_index_leaves_those_rows_out(weights, form):
    logits, target, keep = _with_ignored()
    p = torch.softmax(logits, 1).numpy()
    ratio = naive.soft_kappa_ratio(p[keep.numpy()], target[keep].numpy(),
                                   fk.weight_matrix(K, weights))
    expected = ratio if form == "linear" else np.log(ratio)
    loss = fkt.kappa_loss(logits, target, weights=weights, form=form, ignore_index=-100)
    assert loss.item() == pytest.approx(expected, rel=1e-13)
    module = fkt.KappaLoss(weights=weights, form=form, ignore_index=-100)
    assert module(logits, target).item() == loss.item()
    assert "ignore_index=-100" in repr(module)


@pytest.mark.parametrize("form", ["log", "linear"])
@pytest.mark.parametrize("from_logits", [True, False])
def test_gradcheck_with_ignored_rows(form, from_logits):
    logits, target, keep = _with_ignored(n=15)
    x = logits if from_logits else torch.softmax(logits, 1)
    x = x.detach().requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda z: fkt.kappa_loss(z, target, form=form, from_logits=from_logits,
                                 ignore_index=-100), (x,), eps=1e-6, atol=1e-7)
    fkt.kappa_loss(x, target, form=form, from_logits=from_logits,
                   ignore_index=-100).backward()
    assert torch.equal(x.grad[~keep], torch.zeros_like(x.grad[~keep]))


def test_ignore_index_follows_cross_entropy():
    # cross_entropy's ignore_index is the oracle: the pixels it leaves out (zero
    # gradient) are the ones kappa_loss leaves out, on the target side only; a
    # NaN logit or a non-probability in a left-out pixel reaches nothing
    g = torch.Generator().manual_seed(4)
    logits = torch.randn(3, K, 4, 5, generator=g, dtype=torch.float64)
    masks = torch.randint(0, K, (3, 4, 5), generator=g)
    masks[:, 0] = 255  # void pixels
    masks[0, 1, 1] = 255
    x = logits.clone().requires_grad_(True)
    torch.nn.functional.cross_entropy(x, masks, ignore_index=255).backward()
    ce_used = x.grad.abs().sum(dim=1) > 0
    x.grad = None
    loss = fkt.kappa_loss(x, masks, ignore_index=255)
    loss.backward()
    assert torch.equal(x.grad.abs().sum(dim=1) > 0, ce_used)
    assert torch.equal(ce_used, masks != 255)
    flat = logits.movedim(1, -1)[masks != 255]
    assert loss.item() == pytest.approx(
        fkt.kappa_loss(flat, masks[masks != 255]).item(), rel=1e-14)
    dirty = logits.clone()
    dirty[:, :, 0] = float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fkt.kappa_loss(dirty, masks, ignore_index=255).item() == loss.item()
        probs = torch.softmax(logits, 1)
        probs[:, :, 0] = 7.0
        assert fkt.kappa_loss(probs, masks, ignore_index=255, from_logits=False).item() == (
            pytest.approx(loss.item(), rel=1e-14))


@pytest.mark.parametrize("form", ["log", "linear"])
def test_every_target_ignored_is_a_batch_without_signal(form):
    # no NaN from 0 / 0: the constant with zero gradient, as for a single-class batch
    logits = torch.randn(2, K, 3, 3, dtype=torch.float64, requires_grad=True)
    masks = torch.full((2, 3, 3), 255)
    with pytest.warns(fk.UndefinedKappaWarning, match="every target equals ignore_index=255"):
        loss = fkt.KappaLoss(form=form, ignore_index=255)(logits, masks)
    assert loss.item() == (0.0 if form == "log" else 1.0)
    loss.backward()
    assert torch.equal(logits.grad, torch.zeros_like(logits))
    # one class left once the ignored pixels are out: the single-class warning
    masks[1] = 3
    with pytest.warns(fk.UndefinedKappaWarning, match="every target is class 3"):
        fkt.kappa_loss(logits, masks, ignore_index=255, form=form)


def test_ignore_index_errors():
    logits, target, _ = _with_ignored()
    # other targets outside 0..C-1 stay an error, naming ignore_index
    with pytest.raises(ValueError, match=r"class index -1, outside 0\.\.4 .*or "
                       r"ignore_index=-100 for rows to leave out"):
        fkt.kappa_loss(logits, torch.where(target == 1, -1, target), ignore_index=-100)
    with pytest.raises(ValueError, match=r"class index 5, outside 0\.\.4"):
        fkt.kappa_loss(logits, torch.where(target == 1, 5, target), ignore_index=-100)
    # a class of the batch: refused at construction (n_classes) or at the first batch
    with pytest.raises(ValueError, match=r"`ignore_index`=4 is one of the classes 0\.\.4"):
        fkt.KappaLoss(n_classes=K, ignore_index=4)
    with pytest.raises(ValueError, match=r"`ignore_index`=4 is one of the classes 0\.\.4"):
        fkt.KappaLoss(ignore_index=4)(logits, target)
    # empty input stays an error (no batch at all, not a batch left empty)
    with pytest.raises(ValueError, match="empty"):
        fkt.kappa_loss(logits[:0], target[:0], ignore_index=-100)


# --------------------------------------------------------------------------- continuous


def test_continuous_qwk_loss_value_and_gradcheck():
    rng = np.random.default_rng(9)
    t = rng.integers(0, 5, 200).astype(float)
    s = t + rng.normal(0, 0.8, 200) + 0.3
    loss = fkt.continuous_qwk_loss(torch.from_numpy(s), torch.from_numpy(t))
    assert loss.item() == pytest.approx(1 - fk.continuous_qwk(t, s), rel=1e-12)
    x = torch.from_numpy(s[:20]).requires_grad_(True)
    y = torch.from_numpy(t[:20])
    assert torch.autograd.gradcheck(lambda z: fkt.continuous_qwk_loss(z, y), (x,))
    # (N, 1) heads and integer targets
    head = torch.from_numpy(s).reshape(-1, 1)
    assert fkt.continuous_qwk_loss(head, torch.from_numpy(t).long()).item() == pytest.approx(
        loss.item(), rel=1e-12)


def test_continuous_qwk_loss_constant_target_and_errors():
    x = torch.tensor([0.5, 1.5, 2.0], requires_grad=True)
    with pytest.warns(fk.UndefinedKappaWarning, match="every target is the same value"):
        loss = fkt.continuous_qwk_loss(x, torch.tensor([2, 2, 2]))
    loss.backward()
    assert loss.item() == 1.0 and torch.equal(x.grad, torch.zeros(3))
    with pytest.raises(ValueError, match=r"the same shape .*; got \(3,\) and \(2,\)"):
        fkt.continuous_qwk_loss(x, torch.tensor([1, 2]))
    # as many elements is not enough: (4,) against (2, 2), (3, 2) against (6,)
    for a, b in [((4,), (2, 2)), ((3, 2), (6,)), ((4, 1), (2, 2))]:
        with pytest.raises(ValueError, match="must have the same shape"):
            fkt.continuous_qwk_loss(torch.randn(a), torch.randn(b))
    with pytest.raises(ValueError, match="empty"):
        fkt.continuous_qwk_loss(x[:0], torch.tensor([]))
    # batch of two: finite gradient
    y = torch.tensor([0.2, 0.4], requires_grad=True)
    fkt.continuous_qwk_loss(y, torch.tensor([0, 1])).backward()
    assert torch.isfinite(y.grad).all()


@pytest.mark.parametrize(("bad_pred", "bad_target", "names"), [
    (float("nan"), None, "`pred` holds"),
    (float("inf"), None, "`pred` holds"),
    (None, float("nan"), "`target` holds"),
    (None, float("-inf"), "`target` holds"),
    (float("nan"), float("inf"), "`pred` and `target` hold"),
])
def test_continuous_qwk_loss_nan_input_says_so_and_stays_nan(bad_pred, bad_target, names):
    # it returned NaN silently; now as kappa_loss: a RuntimeWarning naming the input
    pred = torch.tensor([0.5, 1.5, 2.0, 3.1], dtype=torch.float64)
    target = torch.tensor([0.0, 1.0, 2.0, 3.0], dtype=torch.float64)
    if bad_pred is not None:
        pred[1] = bad_pred
    if bad_target is not None:
        target[2] = bad_target
    with warnings.catch_warnings():
        warnings.simplefilter("error", fk.UndefinedKappaWarning)
        with pytest.warns(RuntimeWarning, match=f"continuous_qwk_loss: {names} NaN or inf"):
            loss = fkt.continuous_qwk_loss(pred.requires_grad_(True), target)
    assert torch.isnan(loss)


def test_continuous_qwk_loss_infinite_constant_target_is_not_a_constant_batch():
    # every target inf: min == max, but the warning is about the inf, not a constant
    with warnings.catch_warnings():
        warnings.simplefilter("error", fk.UndefinedKappaWarning)
        with pytest.warns(RuntimeWarning, match="`target` holds NaN or inf"):
            loss = fkt.continuous_qwk_loss(torch.tensor([1.0, 2.0]),
                                           torch.full((2,), float("inf")))
    assert torch.isnan(loss)


@pytest.mark.parametrize("offset", [0.0, 2000.0, 1e5])
def test_continuous_qwk_loss_float32_far_from_zero(offset):
    # float32 targets far from zero: a rounded mean(t) left a bias in t - mean(t)
    # that mean(dt * s) multiplied by the size of s (0.0007 against 0.0227 at 1e5);
    # the value is shift-invariant, so float32 must match float64 at every offset
    # (float64 runs on the float32-rounded values: only the arithmetic differs)
    rng = np.random.default_rng(0)
    t = (offset + rng.integers(0, 5, 10_000)).astype(np.float32)
    s = (t + rng.normal(0, 0.3, 10_000)).astype(np.float32)
    expected = 1 - fk.continuous_qwk(t.astype(float), s.astype(float))
    x32 = torch.tensor(s, requires_grad=True)
    x64 = torch.tensor(s, dtype=torch.float64, requires_grad=True)
    loss32 = fkt.continuous_qwk_loss(x32, torch.tensor(t))
    loss64 = fkt.continuous_qwk_loss(x64, torch.tensor(t, dtype=torch.float64))
    assert loss64.item() == pytest.approx(expected, rel=1e-9)
    assert loss32.item() == pytest.approx(expected, rel=1e-3)
    loss32.backward()
    loss64.backward()
    g32, g64 = x32.grad.double(), x64.grad
    assert ((g32 - g64).norm() / g64.norm()).item() < 1e-3


def test_continuous_qwk_loss_constant_float32_target_is_found():
    # 0.1 in float32: t - mean(t) is not exactly zero, yet every target is equal
    t = torch.full((7,), 0.1)
    x = (t + 1e-5 * torch.randn(7, generator=torch.Generator().manual_seed(0))
         ).requires_grad_(True)
    with pytest.warns(fk.UndefinedKappaWarning, match="every target is the same value"):
        loss = fkt.continuous_qwk_loss(x, t)
    loss.backward()
    assert loss.item() == 1.0 and torch.equal(x.grad, torch.zeros(7))


def test_constant_losses_are_not_nan_for_masked_or_overflowing_input():
    # the constant of a batch without signal: -inf logits (a masked class) and a
    # float16 batch whose sum overflows gave NaN; the constant is float32
    masked = torch.randn(4, 3)
    masked[:, 2] = float("-inf")
    masked.requires_grad_(True)
    with pytest.warns(fk.UndefinedKappaWarning):
        loss = fkt.kappa_loss(masked, torch.zeros(4, dtype=torch.long))
    loss.backward()
    assert loss.item() == 0.0 and loss.dtype == torch.float32
    assert torch.equal(masked.grad, torch.zeros_like(masked))
    big = torch.rand(20_000, 5, generator=torch.Generator().manual_seed(1)).half() + 1
    with pytest.warns(fk.UndefinedKappaWarning):
        loss = fkt.kappa_loss(big, torch.zeros(20_000, dtype=torch.long), form="linear")
    assert loss.item() == 1.0 and loss.dtype == torch.float32
    with pytest.warns(fk.UndefinedKappaWarning):
        loss = fkt.continuous_qwk_loss(big[:, 0] + 3, torch.full((20_000,), 2.0))
    assert loss.item() == 1.0 and loss.dtype == torch.float32


def test_integer_one_hot_probabilities_are_read_as_floats():
    p = torch.nn.functional.one_hot(torch.tensor([1, 0, 0, 0]), 2)
    y = torch.tensor([1, 0, 1, 0])
    expected = fkt.kappa_loss(p.double(), y, from_logits=False).item()
    for q in (p, p.bool(), p.to(torch.uint8)):
        assert fkt.kappa_loss(q, y, from_logits=False).item() == pytest.approx(expected)


def test_kappa_loss_module_takes_a_weight_tensor_with_autograd():
    w = torch.tensor([[0.0, 1, 4], [1, 0, 1], [4, 1, 0]], requires_grad=True)
    x, y = torch.randn(6, 3), torch.tensor([0, 1, 2, 0, 1, 2])
    with_k = fkt.KappaLoss(weights=w, n_classes=3)(x, y)
    assert with_k.item() == fkt.KappaLoss(weights=w)(x, y).item()


def test_custom_weights_are_a_buffer_of_the_module():
    # they were a plain attribute: state_dict() was empty and .to() left them behind
    logits, target = _batch(n=30, seed=11)
    module = fkt.KappaLoss(weights=CUSTOM)
    assert list(module.state_dict()) == ["weights"]
    assert torch.equal(module.state_dict()["weights"], torch.from_numpy(CUSTOM))
    assert [name for name, _ in module.named_buffers()] == ["weights"]
    ref = fkt.kappa_loss(logits, target, weights=CUSTOM).item()
    assert module(logits, target).item() == ref
    module.to(torch.float32)
    assert module.weights.dtype == torch.float32
    assert module(logits, target).item() == ref  # the integers of CUSTOM are exact
    module.double()
    assert module.weights.dtype == torch.float64
    # load_state_dict round-trips into a module built with another matrix
    other = fkt.KappaLoss(weights=CUSTOM.T, form="linear")
    assert other(logits, target).item() != fkt.kappa_loss(
        logits, target, weights=CUSTOM, form="linear").item()
    other.load_state_dict(module.state_dict())
    assert torch.equal(other.weights, module.weights)
    assert other(logits, target).item() == fkt.kappa_loss(
        logits, target, weights=CUSTOM, form="linear").item()
    # named weights stay a name: nothing in the state
    assert fkt.KappaLoss(weights="linear").state_dict() == {}
    assert fkt.KappaLoss(weights=None).weights is None


def test_custom_weights_buffer_is_detached_and_checked_at_construction():
    w = torch.tensor([[0.0, 1, 4], [1, 0, 1], [4, 1, 0]], requires_grad=True)
    module = fkt.KappaLoss(weights=w)
    assert not module.weights.requires_grad and module.weights.data_ptr() != w.data_ptr()
    with torch.no_grad():
        w[0, 1] = 2.0  # a later change to the caller's tensor does not reach the module
    assert module.weights[0, 1].item() == 1.0
    x, y = torch.randn(6, 3, requires_grad=True), torch.tensor([0, 1, 2, 0, 1, 2])
    module(x, y).backward()  # no graph through the weights
    assert w.grad is None
    with pytest.raises(ValueError, match=r"shape \(K, K\) = \(3, 3\) .*got shape \(3, 4\)"):
        fkt.KappaLoss(weights=np.ones((3, 4)))
    with pytest.raises(ValueError, match="zero on the diagonal"):
        fkt.KappaLoss(weights=np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"shape \(K, K\) = \(5, 5\)"):
        fkt.KappaLoss(weights=CUSTOM[:3, :3])(*_batch())


def test_module_warnings_point_at_the_callers_line():
    criterion = fkt.KappaLoss()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        criterion(torch.randn(4, 3), torch.zeros(4, dtype=torch.long))
    assert [w.filename for w in caught] == [__file__]


def test_import_fastkappa_does_not_import_torch():
    code = ("import sys, fastkappa; assert 'torch' not in sys.modules, 'torch imported'; "
            "import fastkappa.torch; assert 'torch' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_torch_names_the_extra():
    code = ("import sys; sys.modules['torch'] = None\n"
            "try:\n    import fastkappa.torch\nexcept ImportError as e:\n"
            "    assert 'fastkappa[torch]' in str(e), e\nelse:\n    raise SystemExit(1)")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("bad, match", [
    (torch.tensor([[2.0, -0.5, -0.5], [0.2, 0.3, 0.5]]), "not a probability"),
    (torch.tensor([[0.2, 0.9, 0.3], [0.2, 0.3, 0.5]]), "one sums to 1.4"),
    (torch.tensor([[0.5, 0.5, 0.5], [0.2, 0.3, 0.5]]), "one sums to 1.5"),
])
def test_probabilities_that_are_not_say_so(bad, match):
    # logits passed with from_logits=False gave a finite, meaningless loss before
    target = torch.tensor([0, 2])
    with pytest.raises(ValueError, match=match):
        fkt.kappa_loss(bad, target, from_logits=False)
    with pytest.raises(ValueError, match="from_logits=True"):
        fkt.KappaLoss(from_logits=False)(bad, target)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_probabilities_in_any_float_dtype_pass(dtype):
    # softmax output rounded to the input dtype (rows off 1 by that rounding) is
    # accepted, and scores the same as the logits it came from
    logits = torch.randn(64, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    target = torch.arange(64) % 7
    p = torch.softmax(logits, dim=1).to(dtype)
    loss = fkt.kappa_loss(p, target, from_logits=False)
    ref = fkt.kappa_loss(logits, target)
    assert loss.item() == pytest.approx(ref.item(), abs=0.05 if dtype.itemsize == 2 else 1e-5)
    # an image of probabilities (N, C, H, W): rows along axis 1
    img = torch.softmax(torch.randn(2, 4, 3, 3), dim=1)
    fkt.kappa_loss(img, torch.randint(0, 4, (2, 3, 3)), from_logits=False)


def test_shape_messages_name_channels_last_and_swapped_arguments():
    logits = torch.randn(8, 4, 16, 16)
    masks = torch.randint(0, 4, (8, 16, 16))
    with pytest.raises(ValueError, match=r"looks channels-last .*input.movedim\(-1, 1\)"):
        fkt.kappa_loss(logits.permute(0, 2, 3, 1), masks)
    with pytest.raises(ValueError, match=r"Are `input` and `target` swapped\?"):
        fkt.kappa_loss(masks, logits)
    # (N,) targets first and (N, C) logits second: the same hint, not continuous_qwk_loss
    labels, scores = torch.randint(0, 4, (8,)), torch.randn(8, 4)
    with pytest.raises(ValueError, match=r"got shape \(8,\)\. Are `input` and `target` "
                       r"swapped\? The scores come first\.$"):
        fkt.kappa_loss(labels, scores)
    with pytest.raises(ValueError, match="swapped"):
        fkt.KappaLoss()(labels.float(), scores)
    # one score per row with (N,) targets: a regression head, not a swap
    with pytest.raises(ValueError) as err:
        fkt.kappa_loss(scores[:, 0], labels)
    assert "continuous_qwk_loss" in str(err.value) and "swapped" not in str(err.value)
    # the channels-last hint applies: the swapped hint does not
    with pytest.raises(ValueError) as err:
        fkt.kappa_loss(logits[:, :, :3], masks)
    assert "swapped" not in str(err.value) and "channels-last" not in str(err.value)
