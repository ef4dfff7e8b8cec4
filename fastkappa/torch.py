"""Kappa as a training loss for PyTorch: soft (expected-count) kappa with autograd.

``import fastkappa`` never imports this module or PyTorch; importing
``fastkappa.torch`` imports PyTorch and raises an ``ImportError`` that names
the extra when it is missing.

The soft kappa (de la Torre, Puig & Valls 2018) replaces the confusion
matrix by expected counts. With class probabilities ``P`` (N x C, the
softmax of logits) and integer targets ``y``::

    O_kj = sum_n [y_n = k] P_nj          (soft confusion matrix)
    E    = outer(r, c) / N,  r_k = #{y_n = k},  c_j = sum_n P_nj
    loss = log(sum(w * O) / sum(w * E))  (form="log")
         = sum(w * O) / sum(w * E)        (form="linear", i.e. 1 - kappa_soft)

with ``w`` the disagreement weights of :func:`fastkappa.weight_matrix`. On
one-hot ``P`` the linear form is exactly ``1 - kappa`` of the hard labels.
Everything is computed in float32 (float64 for float64 input) with autocast
switched off inside the loss, so float16/bfloat16 mixed precision neither
overflows the sums nor loses the ratio.

A batch whose targets all fall in one class carries no signal: its soft
kappa is 0 whatever the predictions (O = E), so both forms are constant.
Such batches (and any batch whose expected disagreement is zero) emit an
:class:`fastkappa.UndefinedKappaWarning` and return the constant (``0`` for
the log form, ``1`` for the linear form) with an exactly zero gradient that
is still connected to the graph, so ``loss.backward()`` works and the
optimiser step is a no-op for that batch. Use larger or stratified batches
to avoid them. A batch whose targets all equal ``ignore_index`` is treated
the same way.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

try:
    import torch
except ImportError as _err:  # pragma: no cover - exercised only without torch
    raise ImportError(
        "fastkappa.torch needs PyTorch; install it with: pip install \"fastkappa[torch]\" "
        "(from a clone: pip install -e \".[torch]\"). On a machine without a GPU, install "
        "the much smaller CPU build first: pip install torch --index-url "
        "https://download.pytorch.org/whl/cpu") from _err

from ._core import weights as _weights
from ._core.caller import user_stacklevel
from .exceptions import UndefinedKappaWarning

__all__ = ["KappaLoss", "continuous_qwk_loss", "kappa_loss"]

FORMS = ("log", "linear")


def _compute_dtype(x: torch.Tensor) -> torch.dtype:
    return torch.float64 if x.dtype == torch.float64 else torch.float32


def _swap_hint(input: torch.Tensor, target: torch.Tensor) -> str:
    """A hint when the shapes or dtypes of ``input`` and ``target`` suggest they
    were passed in the wrong order (targets first, scores second)."""
    if input.ndim >= 1 and (input.ndim + 1 == target.ndim or (
            input.ndim == target.ndim >= 2 and not input.dtype.is_floating_point
            and target.dtype.is_floating_point)):
        return " Are `input` and `target` swapped? The scores come first."
    return ""


def _rows(input: torch.Tensor, target: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(N, C, ...) scores and (N, ...) targets as (M, C) and (M,) rows."""
    if not isinstance(input, torch.Tensor) or not isinstance(target, torch.Tensor):
        raise ValueError("`input` and `target` must be torch tensors.")
    if input.ndim < 2:
        hint = _swap_hint(input, target) or " For one score per row use continuous_qwk_loss."
        raise ValueError(
            f"`input` must be (N, C) or (N, C, ...) logits/probabilities; got shape "
            f"{tuple(input.shape)}.{hint}")
    if target.shape != input.shape[:1] + input.shape[2:]:
        if input.ndim > 2 and target.shape == input.shape[:-1]:
            hint = (" `input` looks channels-last (N, ..., C): move its class axis to "
                    "position 1 with input.movedim(-1, 1).")
        else:
            hint = _swap_hint(input, target)
        raise ValueError(
            f"`target` must have shape (N, ...) = {tuple(input.shape[:1] + input.shape[2:])} "
            f"for `input` of shape {tuple(input.shape)} (class axis at position 1); got "
            f"{tuple(target.shape)}.{hint}")
    if target.dtype.is_floating_point or target.dtype.is_complex or target.dtype == torch.bool:
        raise ValueError(
            f"`target` must hold integer class indices (torch.long); got {target.dtype}. "
            "Use continuous_qwk_loss for real-valued targets.")
    c = input.shape[1]
    if input.ndim > 2:
        input = input.movedim(1, -1)
    # masks often come as uint8/int32: index_add_ and bincount want int64 indices
    return input.reshape(-1, c), target.reshape(-1).to(device=input.device, dtype=torch.long)


def _check_probabilities(p: torch.Tensor, input_dtype: torch.dtype) -> None:
    """``from_logits=False``: every row of ``p`` (M, C) holds probabilities, in
    [0, 1] and summing to 1 up to the input's rounding.

    Rows holding NaN or inf are left to the loss's own warning about them.  One
    device sync, as the other checks of a batch.
    """
    c = p.shape[1]
    tol = max(1e-3, 4 * c * torch.finfo(input_dtype).eps)
    with torch.no_grad():
        finite = torch.isfinite(p).all(dim=1, keepdim=True)
        q = torch.where(finite, p, torch.full_like(p, 1.0 / c))
        dev = q.sum(dim=1) - 1.0
        worst = dev.abs().argmax()
        lo, hi, total = torch.stack([q.min(), q.max(), dev[worst] + 1.0]).tolist()
    if lo < -tol or hi > 1.0 + tol:
        raise ValueError(
            f"`input` holds {lo if lo < -tol else hi:.4g}, which is not a probability, "
            "with from_logits=False; pass logits with from_logits=True (the default), "
            "or probabilities in [0, 1] whose rows along axis 1 sum to 1.")
    if abs(total - 1.0) > tol:
        raise ValueError(
            f"with from_logits=False the rows of `input` along axis 1 must sum to 1 "
            f"(probabilities); one sums to {total:.4g}. Pass logits with "
            "from_logits=True (the default), or normalise the probabilities.")


def _loss_iv(form: str, from_logits, n_classes, ignore_index
             ) -> tuple[str, bool, int | None, int | None]:
    """The options of :func:`kappa_loss` and :class:`KappaLoss`, checked and
    normalised (``from_logits`` a bool, ``n_classes`` and ``ignore_index`` ints)."""
    if form not in FORMS:
        raise ValueError(f"`form` must be 'log' or 'linear'; got {form!r}.")
    if not isinstance(from_logits, (bool, np.bool_)):
        raise ValueError(
            f"`from_logits` must be True (`input` holds logits) or False (`input` holds "
            f"probabilities); got {from_logits!r}.")
    if n_classes is not None:
        n_classes = _weights._check_n_classes(n_classes)
    if ignore_index is not None:
        if isinstance(ignore_index, (bool, np.bool_)) or not isinstance(
                ignore_index, (int, np.integer)):
            raise ValueError(
                f"`ignore_index` must be an int, the target value of the rows to leave out "
                f"(e.g. -100, as in torch.nn.functional.cross_entropy); got {ignore_index!r}.")
        ignore_index = int(ignore_index)
        if n_classes is not None:
            _check_ignore_outside(ignore_index, n_classes)
    return form, bool(from_logits), n_classes, ignore_index


def _check_ignore_outside(ignore_index: int | None, c: int) -> None:
    """``ignore_index`` must not be a class: every target of that class would be
    left out while the class stays in the soft confusion matrix."""
    if ignore_index is not None and 0 <= ignore_index < c:
        raise ValueError(
            f"`ignore_index`={ignore_index} is one of the classes 0..{c - 1}, so every target "
            "of that class would be left out; pass a value outside them (e.g. -100, "
            "cross_entropy's default, or 255 for void pixels).")


def _weight_array(weights, c: int | None) -> np.ndarray:
    """The (c, c) disagreement weights, validated; a tensor (on any device, with
    autograd or not) is read as its values.  ``c=None``: a custom matrix checked
    before the number of classes is known, against its own first axis."""
    if isinstance(weights, torch.Tensor):
        weights = weights.detach().cpu().numpy()
    if c is None:
        shape = np.shape(weights)
        c = shape[0] if shape else 1
    return _weights.weight_matrix(c, weights)  # validates names and custom matrices


def _weight_tensor(weights, c: int | None, dtype, device) -> torch.Tensor:
    return torch.as_tensor(_weight_array(weights, c), dtype=dtype, device=device)


def _constant(anchor: torch.Tensor, value: float, dtype: torch.dtype) -> torch.Tensor:
    """``value`` as a ``dtype`` scalar connected to ``anchor``'s graph (backward
    works) with an exactly zero gradient: zeros summed, so inf or NaN in
    ``anchor`` (masked logits) or a sum past float16's range do not make it NaN."""
    finite = torch.nan_to_num(anchor.to(dtype), nan=0.0, posinf=0.0, neginf=0.0)
    return (finite * 0.0).sum() + value


def _undefined(anchor: torch.Tensor, value: float, why: str, dtype: torch.dtype
               ) -> torch.Tensor:
    warnings.warn(
        f"kappa_loss: {why}; the soft kappa carries no signal for this batch, so the loss "
        f"is the constant {value:g} with zero gradient. Use larger or stratified batches.",
        UndefinedKappaWarning, stacklevel=user_stacklevel())
    return _constant(anchor, value, dtype)


def _nonfinite(loss: torch.Tensor, caller: str, names: str) -> torch.Tensor:
    """``loss`` (NaN: a NaN or inf value reaches every term), with a warning that
    names the inputs holding them rather than an undefined-kappa warning."""
    warnings.warn(
        f"{caller}: {names} {'hold' if ' and ' in names else 'holds'} NaN or inf values, "
        "so the loss is NaN. Find where they come from (torch.autograd.detect_anomaly "
        "helps) and pass finite values.",
        RuntimeWarning, stacklevel=user_stacklevel())
    return loss


def kappa_loss(
    input: torch.Tensor,
    target: torch.Tensor,
    *,
    weights: Any = "quadratic",
    form: str = "log",
    from_logits: bool = True,
    n_classes: int | None = None,
    ignore_index: int | None = None,
) -> torch.Tensor:
    """Soft (differentiable) kappa loss: ``log(sum w O / sum w E)`` or ``1 - kappa_soft``.

    Parameters
    ----------
    input : torch.Tensor of shape (N, C) or (N, C, ...)
        Logits (``from_logits=True``, softmax over axis 1) or class
        probabilities, class axis at position 1 as in
        ``torch.nn.functional.cross_entropy``; any device, any float dtype.
    target : torch.Tensor of shape (N,) or (N, ...)
        Integer class indices in ``0..C-1``.
    weights : None, 'none', 'linear', 'quadratic' or (C, C) array/tensor
        Disagreement weights (see :func:`fastkappa.weight_matrix`); QWK by
        default.
    form : {'log', 'linear'}
        ``'log'`` is de la Torre et al.'s ``log(sum w O / sum w E)``, that is
        ``log(1 - kappa_soft)`` (-> -inf as kappa_soft -> 1); ``'linear'`` is
        ``1 - kappa_soft`` (0 at perfect agreement, 1 at chance). Only exactly
        one-hot probabilities on the true classes (``from_logits=False``)
        reach observed disagreement 0: the log form is then clamped to a
        finite value, and its gradient there is that of the expected term
        alone (the true one is infinite); ``'linear'`` has no such point.
    from_logits : bool, default True
        Apply a softmax over axis 1 first; False when ``input`` already holds
        probabilities: values in [0, 1] whose rows along axis 1 sum to 1
        (within 1e-3, or the input dtype's rounding), else ``ValueError``.
        Must be a bool (a string such as ``"False"`` is a ``ValueError``).
    n_classes : int, optional
        The number of classes (a positive int), checked against ``C``.
    ignore_index : int, optional
        A target value whose rows (pixels, for (N, C, ...) input) are left
        out of the soft confusion matrix, as in
        ``torch.nn.functional.cross_entropy``: on the target side only, since
        a row of probabilities has no predicted label; they get a zero
        gradient. It must lie outside ``0..C-1`` (e.g. -100, or 255 for void
        pixels); other targets outside ``0..C-1`` are a ``ValueError``.

    Returns
    -------
    torch.Tensor
        A scalar (float32, or float64 for float64 input) with autograd.

    Warns
    -----
    UndefinedKappaWarning
        When every target of the batch is in one class, every target equals
        ``ignore_index``, or the expected disagreement is zero: the loss is
        then constant with zero gradient (see the module notes).
    RuntimeWarning
        When ``input`` holds NaN or inf values (in rows not left out): the
        loss is then NaN.

    References
    ----------
    .. [1] J. de la Torre, D. Puig, A. Valls, "Weighted kappa loss function for
       multi-class classification of ordinal data in deep learning", Pattern
       Recognition Letters 105 (2018) 144-154.

    Examples
    --------
    >>> import torch
    >>> from fastkappa.torch import kappa_loss
    >>> logits = torch.tensor([[2.0, 0.5, -1.0], [0.1, 1.5, 0.2], [-1.0, 0.3, 2.5]],
    ...                       requires_grad=True)
    >>> target = torch.tensor([0, 1, 2])
    >>> loss = kappa_loss(logits, target)
    >>> loss.backward()
    >>> round(loss.item(), 4), logits.grad.shape
    (-1.5354, torch.Size([3, 3]))

    Rows whose target is ``ignore_index`` are left out:

    >>> kappa_loss(torch.cat([logits, logits[:1]]), torch.tensor([0, 1, 2, -100]),
    ...            ignore_index=-100).item() == loss.item()
    True
    """
    form, from_logits, n_classes, ignore_index = _loss_iv(
        form, from_logits, n_classes, ignore_index)
    scores, y = _rows(input, target)
    n, c = scores.shape
    if n_classes is not None and n_classes != c:
        raise ValueError(
            f"`n_classes`={n_classes} but `input` has {c} classes along axis 1; they must "
            "agree (one score per class).")
    _check_ignore_outside(ignore_index, c)
    if n == 0:
        raise ValueError("`input` and `target` are empty; the loss needs at least one row.")
    dtype = _compute_dtype(scores)
    w = _weight_tensor(weights, c, dtype, scores.device)  # checked whatever the batch holds
    constant = 0.0 if form == "log" else 1.0
    if ignore_index is not None:
        keep = y != ignore_index
        scores, y = scores[keep], y[keep]  # autograd gives the left-out rows zero gradient
        n = y.shape[0]
        if n == 0:
            return _undefined(input, constant,
                              f"every target equals ignore_index={ignore_index}", dtype)
    lo, hi = torch.stack([y.min(), y.max()]).tolist()
    if lo < 0 or hi >= c:
        bad = lo if lo < 0 else hi
        skip = (f", or ignore_index={ignore_index} for rows to leave out"
                if ignore_index is not None else
                f"; if {bad} marks rows to leave out, pass ignore_index={bad}")
        raise ValueError(
            f"`target` holds class index {bad}, outside 0..{c - 1} for {c} classes; targets "
            f"must be class indices into axis 1 of `input`{skip}.")
    with torch.autocast(device_type=scores.device.type, enabled=False):
        s = scores.to(dtype)
        if not from_logits:  # integer or bool one-hot rows are read as floats
            _check_probabilities(s, scores.dtype if scores.dtype.is_floating_point
                                 else dtype)
        p = torch.softmax(s, dim=1) if from_logits else s
        rows = torch.bincount(y, minlength=c).to(dtype)  # r_k
        if int((rows > 0).sum()) < 2:
            return _undefined(input, constant, f"every target is class {lo}", dtype)
        soft = torch.zeros((c, c), dtype=dtype, device=p.device).index_add_(0, y, p)  # O
        cols = p.sum(dim=0)  # c_j
        observed = (w * soft).sum()
        expected = rows @ w @ cols / n
        e = float(expected.detach())  # one device sync, as the check always needed
        if not math.isfinite(e):  # NaN or inf in `input` reaches every term: say so
            return _nonfinite(observed / expected, "kappa_loss", "`input`")
        if not e > 0:
            return _undefined(input, constant, "the expected disagreement is zero", dtype)
        if form == "linear":
            return observed / expected
        # log(0) only for a perfect one-hot batch; the clamp keeps it finite
        tiny = torch.finfo(dtype).tiny
        return torch.log(observed.clamp_min(tiny)) - torch.log(expected)


class KappaLoss(torch.nn.Module):
    """:func:`kappa_loss` as a ``torch.nn.Module`` (options fixed at construction).

    Parameters
    ----------
    weights : None, 'none', 'linear', 'quadratic' or (C, C) array/tensor
        Disagreement weights (see :func:`fastkappa.weight_matrix`); QWK by
        default.  A custom matrix is checked at construction (against
        ``n_classes`` when given) and kept, detached, as the float64 buffer
        ``weights``: it is in ``state_dict()`` and follows ``.to()``.
    form : {'log', 'linear'}
        ``log(1 - kappa_soft)`` or ``1 - kappa_soft``, as in :func:`kappa_loss`.
    from_logits : bool, default True
        Apply a softmax over axis 1 first; False when the input already holds
        probabilities.
    n_classes : int, optional
        The number of classes (a positive int), checked against each batch's
        ``C``.
    ignore_index : int, optional
        A target value whose rows or pixels are left out, on the target side
        only, as in ``torch.nn.functional.cross_entropy`` (see
        :func:`kappa_loss`); it must lie outside ``0..C-1``.

    Notes
    -----
    Calling the module, ``criterion(input, target)``, returns
    ``kappa_loss(input, target, ...)`` with these options: a scalar tensor
    with autograd.

    ``torch.compile(criterion)`` works, with graph breaks at the checks that
    read the batch's values (target range, single-class batches);
    ``fullgraph=True`` fails on them.

    References
    ----------
    .. [1] de la Torre, J., Puig, D., & Valls, A. (2018). Weighted kappa loss
       function for multi-class classification of ordinal data in deep
       learning. Pattern Recognition Letters, 105, 144-154.
       https://doi.org/10.1016/j.patrec.2017.05.018

    Examples
    --------
    >>> import torch
    >>> from fastkappa.torch import KappaLoss
    >>> criterion = KappaLoss(weights="quadratic", form="linear")
    >>> criterion
    KappaLoss(weights='quadratic', form='linear', from_logits=True)
    >>> loss = criterion(torch.randn(8, 5), torch.arange(8) % 5)
    >>> loss.shape
    torch.Size([])
    """

    def __init__(self, *, weights: Any = "quadratic", form: str = "log",
                 from_logits: bool = True, n_classes: int | None = None,
                 ignore_index: int | None = None) -> None:
        super().__init__()
        self.form, self.from_logits, self.n_classes, self.ignore_index = _loss_iv(
            form, from_logits, n_classes, ignore_index)
        if _weights.is_named(weights):
            self.weights = weights
        else:  # checked now; a buffer, so state_dict() and .to() carry it
            device = weights.device if isinstance(weights, torch.Tensor) else None
            self.register_buffer("weights", _weight_tensor(
                weights, self.n_classes, torch.float64, device))

    def forward(self, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return kappa_loss(input, target, weights=self.weights, form=self.form,
                          from_logits=self.from_logits, n_classes=self.n_classes,
                          ignore_index=self.ignore_index)

    def extra_repr(self) -> str:
        w = self.weights if self.weights is None or isinstance(self.weights, str) else "custom"
        text = f"weights={w!r}, form={self.form!r}, from_logits={self.from_logits}"
        if self.ignore_index is not None:
            text += f", ignore_index={self.ignore_index}"
        return text


def continuous_qwk_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """``1 - continuous QWK`` of a regression head: differentiable, in [0, 2].

    Continuous QWK is Lin's concordance correlation (see
    :func:`fastkappa.continuous_qwk`); with ``mse = mean((pred - target)**2)``
    and ``cov`` the population covariance, ``1 - qwk = mse / (mse + 2 cov)``.
    Train on it, then cut the scores into grades with
    :func:`fastkappa.optimize_thresholds`.

    Parameters
    ----------
    pred : torch.Tensor of shape (N,) or (N, ...)
        Real-valued predictions ((N, 1) heads are fine).
    target : torch.Tensor of the same shape
        Grades (integers or floats), used as numbers.  (N,) targets next to
        an (N, 1) head, and the reverse, are fine; other shapes are refused.

    Returns
    -------
    torch.Tensor
        A scalar with autograd (float32, or float64 for float64 input).

    Warns
    -----
    UndefinedKappaWarning
        When ``target`` is constant: the loss is then the constant 1 with zero
        gradient (no signal in that batch).
    RuntimeWarning
        When ``pred`` or ``target`` holds NaN or inf values (named in the
        message, as :func:`kappa_loss` does): the loss is then NaN.

    References
    ----------
    .. [1] Lin, L. I.-K. (1989). A concordance correlation coefficient to evaluate
       reproducibility. Biometrics, 45(1), 255-268.
       https://doi.org/10.2307/2532051

    Examples
    --------
    >>> import torch
    >>> from fastkappa.torch import continuous_qwk_loss
    >>> pred = torch.tensor([1.2, 1.9, 3.3, 3.6], requires_grad=True)
    >>> round(continuous_qwk_loss(pred, torch.tensor([1, 2, 3, 4])).item(), 6)
    0.033708
    """
    if not isinstance(pred, torch.Tensor) or not isinstance(target, torch.Tensor):
        raise ValueError("`pred` and `target` must be torch tensors.")
    if _squeezed(pred.shape) != _squeezed(target.shape):
        raise ValueError(
            f"`pred` and `target` must have the same shape ((N,) next to (N, 1) is fine); "
            f"got {tuple(pred.shape)} and {tuple(target.shape)}.")
    if pred.numel() == 0:
        raise ValueError("`pred` and `target` are empty; the loss needs at least one row.")
    dtype = _compute_dtype(pred)
    with torch.autocast(device_type=pred.device.type, enabled=False):
        s = pred.reshape(-1).to(dtype)
        t = target.reshape(-1).to(device=s.device, dtype=dtype)
        # one device sync for the three checks; the min/max test is exact, where a
        # rounded mean is not
        pred_ok, target_ok, constant = torch.stack(
            [torch.isfinite(s).all(), torch.isfinite(t).all(), t.min() == t.max()]).tolist()
        if not (pred_ok and target_ok):  # NaN or inf reaches every term: say so
            names = " and ".join(name for name, ok in (("`pred`", pred_ok),
                                                       ("`target`", target_ok)) if not ok)
            return _nonfinite(_concordance_loss(s, t), "continuous_qwk_loss", names)
        if constant:
            warnings.warn(
                "continuous_qwk_loss: every target is the same value; continuous QWK is 0 "
                "whatever the predictions, so the loss is the constant 1 with zero "
                "gradient. Use larger or stratified batches.",
                UndefinedKappaWarning, stacklevel=user_stacklevel())
            return _constant(pred, 1.0, dtype)
        return _concordance_loss(s, t)


def _concordance_loss(s: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """``1 - ccc = mse / (mse + 2 cov)`` of 1-D ``s`` and ``t``."""
    mse = torch.mean((s - t) ** 2)
    # both sides centred: a rounded float32 mean leaves a bias in t - mean(t), and
    # mean(dt * s) would multiply it by the size of s (targets far from zero)
    cov = torch.mean((t - t.mean()) * (s - s.mean()))
    return mse / (mse + 2.0 * cov)


def _squeezed(shape: torch.Size) -> tuple[int, ...]:
    """``shape`` without a trailing axis of length 1 ((N, 1) heads are (N,))."""
    return tuple(shape[:-1]) if len(shape) > 1 and shape[-1] == 1 else tuple(shape)
