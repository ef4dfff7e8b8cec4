"""Disagreement weight matrices and table-level kappa arithmetic (pure NumPy)."""

from __future__ import annotations

import warnings

import numpy as np

from .exceptions import UndefinedKappaWarning

WEIGHT_NAMES = (None, "linear", "quadratic")
#: spellings of unweighted kappa besides None ("none" is torchmetrics' spelling)
UNWEIGHTED_NAMES = ("none",)


def _weights_error(weights) -> ValueError:
    shown = f"'{weights}'" if isinstance(weights, str) else type(weights).__name__
    return ValueError(
        "`weights` must be None, 'linear', 'quadratic' or a (K, K) array of "
        f"disagreement weights ('none' also means unweighted); got {shown}."
    )


def canonical(weights):
    """``weights`` with the spellings of unweighted kappa (``'none'``) turned into None.

    Anything else is returned unchanged (and checked later by :func:`weight_matrix`).
    """
    if isinstance(weights, str) and weights in UNWEIGHTED_NAMES:
        return None
    return weights


def is_named(weights) -> bool:
    """True for None / 'none' / 'linear' / 'quadratic' (raises for other strings)."""
    if weights is None:
        return True
    if isinstance(weights, str):
        if weights not in ("linear", "quadratic", *UNWEIGHTED_NAMES):
            raise _weights_error(weights)
        return True
    return False


def is_unweighted(weights) -> bool:
    """True for None and 'none' (unweighted kappa)."""
    return canonical(weights) is None


def weight_matrix(n_classes: int, weights=None) -> np.ndarray:
    """Disagreement weights ``w`` (zero on the diagonal) for ``K`` classes.

    Parameters
    ----------
    n_classes : int
        Number of classes ``K`` (at least 1).
    weights : None, 'none', 'linear', 'quadratic' or array_like of shape (K, K)
        ``None`` (or ``'none'``, torchmetrics' spelling) gives ``1 - [i == j]``
        (unweighted kappa), ``'linear'`` gives ``|i - j|`` and ``'quadratic'``
        gives ``(i - j) ** 2``, where
        ``i`` and ``j`` are class *indices*.  A custom matrix must be (K, K),
        finite, non-negative, zero on the diagonal and have a positive
        maximum; it may be asymmetric (rows are ``y_true``).

    Returns
    -------
    numpy.ndarray
        float64 array of shape (K, K).

    Examples
    --------
    >>> import fastkappa as fk
    >>> fk.weight_matrix(3, "quadratic")
    array([[0., 1., 4.],
           [1., 0., 1.],
           [4., 1., 0.]])
    """
    k = _check_n_classes(n_classes)
    if is_named(weights):
        idx = np.arange(k, dtype=np.float64)
        diff = idx[:, None] - idx[None, :]
        if is_unweighted(weights):
            return 1.0 - np.eye(k)
        if weights == "linear":
            return np.abs(diff)
        return diff * diff
    w = np.asarray(weights)
    if w.dtype == object or w.dtype.kind not in "biuf":
        raise _weights_error(weights)
    w = w.astype(np.float64)
    if w.shape != (k, k):
        raise ValueError(
            f"a custom `weights` matrix must have shape (K, K) = ({k}, {k}) for "
            f"{k} classes; got shape {w.shape}."
        )
    if not np.all(np.isfinite(w)):
        raise ValueError("the `weights` matrix must be finite; it holds nan or inf.")
    if np.any(w < 0):
        raise ValueError("the `weights` matrix must be non-negative (disagreement weights).")
    if np.any(np.diag(w) != 0):
        raise ValueError(
            "the `weights` matrix must be zero on the diagonal: it holds disagreement "
            "weights, and agreement costs nothing (use 1 - agreement weights)."
        )
    if k > 1 and not w.max() > 0:
        raise ValueError("the `weights` matrix must have a positive maximum.")
    return w


def _check_n_classes(n_classes) -> int:
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)):
        raise ValueError(f"`n_classes` must be a positive integer; got {n_classes!r}.")
    if n_classes < 1:
        raise ValueError(f"`n_classes` must be a positive integer; got {n_classes}.")
    return int(n_classes)


def kappa_terms(confusion: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Observed and expected weighted disagreement, both scaled by N.

    Returns ``(N * sum(w * O), sum(w * outer(r, c)))`` in float64, so that
    ``kappa = 1 - first / second``; both carry the same power-of-two factor
    (the table is rescaled so its largest cell is in [0.5, 1)), so only their
    ratio and signs are meaningful.  Products of counts are formed in float64,
    never int64, so tables with N beyond 2**32 stay exact to rounding.
    """
    o = np.asarray(confusion, dtype=np.float64)
    top = o.max() if o.size else 0.0
    if top > 0:
        # an exact power-of-two rescale (kappa is scale-free): sample weights near the
        # float64 limits (1e-320, 1e200) neither underflow nor overflow the products
        o = np.ldexp(o, -int(np.frexp(top)[1]))
    n = o.sum()
    r = o.sum(axis=1)
    c = o.sum(axis=0)
    observed = n * float(np.sum(w * o))
    expected = float(r @ w @ c)
    return observed, expected


def finish_kappa(observed: float, expected: float, replace_undefined_by=np.nan,
                 *, stacklevel: int = 3) -> float:
    """``1 - observed / expected`` with the undefined case handled."""
    if not expected > 0:
        warnings.warn(
            "kappa is undefined: the expected disagreement is zero (both raters use a "
            "single, identical class, or the data hold one class only); returning "
            f"replace_undefined_by={replace_undefined_by!r}. Declare the full class "
            "scale with `labels=` or `n_classes=` if classes are missing.",
            UndefinedKappaWarning,
            stacklevel=stacklevel,
        )
        return replace_undefined_by
    return float(1.0 - observed / expected)
