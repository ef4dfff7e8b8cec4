"""Disagreement weight matrices and table-level kappa arithmetic (pure NumPy)."""

from __future__ import annotations

import warnings

import numpy as np

from ..exceptions import UndefinedKappaWarning
from .caller import user_stacklevel
from .columns import list_array

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

    References
    ----------
    .. [1] Cohen, J. (1968). Weighted kappa: Nominal scale agreement provision for
       scaled disagreement or partial credit. Psychological Bulletin, 70(4),
       213-220. https://doi.org/10.1037/h0026256

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
        # built in place: one (K, K) array, no temporaries of that size
        if is_unweighted(weights):
            w = np.ones((k, k))
            np.fill_diagonal(w, 0.0)
            return w
        idx = np.arange(k, dtype=np.float64)
        w = np.subtract.outer(idx, idx)
        if weights == "linear":
            return np.abs(w, out=w)
        return np.multiply(w, w, out=w)
    w = list_array(weights, "weights", "a (K, K) array of disagreement weights")
    if w.ndim == 2 and (w.dtype == object or w.dtype.kind not in "biuf"):
        raise ValueError(
            f"a custom `weights` matrix must be numeric; got dtype {w.dtype}. Pass a "
            "(K, K) array of numbers (e.g. np.asarray(weights, dtype=float)).")
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


def scale_free(sample_weight: np.ndarray | None) -> np.ndarray | None:
    """Row weights far from 1 brought near it by an exact power of two.

    Kappa and its intervals do not change when every weight is multiplied
    by a constant, but sums of products of weights (variances, resampled
    tables) overflow near 1e155 or lose every digit near 1e-170.  Weights
    whose largest is within 2**-100..2**100 are returned as they are (no
    copy); others as a new array whose largest is in [0.5, 1).
    """
    if sample_weight is None or not len(sample_weight):
        return sample_weight
    top = float(sample_weight.max())
    if top > 0 and not 2.0**-100 <= top <= 2.0**100:
        return np.ldexp(sample_weight, -int(np.frexp(top)[1]))
    return sample_weight


def kappa_terms(confusion: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Observed and expected weighted disagreement, both scaled by N.

    Returns ``(N * sum(w * O), sum(w * outer(r, c)))`` in float64, so that
    ``kappa = 1 - first / second``; both carry the same power-of-two factor
    (the table is rescaled so its largest cell is in [0.5, 1)), so only their
    ratio and signs are meaningful.  Products of counts are formed in float64,
    never int64, so tables with N beyond 2**32 stay exact to rounding.
    """
    confusion = np.asarray(confusion)
    if confusion.nbytes > _BLOCK_BYTES:
        return _kappa_terms_blocked(confusion, w)
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


#: tables larger than this are reduced in row blocks of about this size (each
#: temporary of a block stays this small)
_BLOCK_BYTES = 1 << 20


def kappa_terms_named(confusion: np.ndarray, weights) -> tuple[float, float]:
    """:func:`kappa_terms` with ``weights`` a name (None, 'linear', 'quadratic') or a
    matrix; for a large table a named matrix is never built whole (its rows are
    made a block at a time)."""
    confusion = np.asarray(confusion)
    if not is_named(weights):
        return kappa_terms(confusion, np.asarray(weights, dtype=np.float64))
    if confusion.nbytes > _BLOCK_BYTES:
        return _kappa_terms_blocked(confusion, weights, named=True)
    return kappa_terms(confusion, weight_matrix(confusion.shape[0], weights))


def _weight_rows(w, k: int, lo: int, hi: int, named: bool) -> np.ndarray:
    """Rows lo..hi-1 of the weight matrix (built for a named one, sliced otherwise)."""
    if not named:
        return w[lo:hi]
    idx = np.arange(k, dtype=np.float64)
    if w is None:
        rows = np.ones((hi - lo, k))
        rows[np.arange(hi - lo), np.arange(lo, hi)] = 0.0
        return rows
    rows = np.subtract.outer(idx[lo:hi], idx)
    return np.abs(rows, out=rows) if w == "linear" else np.multiply(rows, rows, out=rows)


def expected_disagreement(r: np.ndarray, c: np.ndarray, weights) -> float:
    """``r @ w @ c`` for marginals ``r``, ``c``; a named ``weights`` matrix is made a
    block of rows at a time (never whole), a matrix is used as it is."""
    named = is_named(weights)
    k = len(r)
    step = max(1, _BLOCK_BYTES // (8 * max(k, 1)))
    total = 0.0
    for lo in range(0, k, step):
        hi = min(k, lo + step)
        total += float(r[lo:hi] @ (_weight_rows(weights, k, lo, hi, named) @ c))
    return total


def _kappa_terms_blocked(confusion: np.ndarray, w, named: bool = False
                         ) -> tuple[float, float]:
    """:func:`kappa_terms` for large tables, converted and rescaled a block of rows
    at a time: no (K, K) float64 temporary beside the table (and the weights,
    unless they are named: then no (K, K) array at all)."""
    k = confusion.shape[0]
    top = confusion.max() if confusion.size else 0
    shift = -int(np.frexp(float(top))[1]) if top > 0 else 0
    step = max(1, _BLOCK_BYTES // (8 * max(k, 1)))
    r = np.empty(k)
    c = np.zeros(k)
    weighted = 0.0
    for lo in range(0, k, step):
        hi = min(k, lo + step)
        block = np.ldexp(np.asarray(confusion[lo:hi], dtype=np.float64), shift)
        r[lo:hi] = block.sum(axis=1)
        c += block.sum(axis=0)
        weighted += float(np.sum(_weight_rows(w, k, lo, hi, named) * block))
    return r.sum() * weighted, expected_disagreement(r, c, w)


def finish_kappa(observed: float, expected: float, replace_undefined_by=np.nan,
                 *, warn: bool = True) -> float:
    """``1 - observed / expected`` with the undefined case handled (warned unless
    ``warn`` is False)."""
    if not expected > 0:
        if not warn:
            return replace_undefined_by
        warnings.warn(
            "kappa is undefined: the expected disagreement is zero (both raters use a "
            "single, identical class, or the data hold one class only); returning "
            f"replace_undefined_by={replace_undefined_by!r}. Declaring more classes "
            "does not change this: chance agreement is 1 whenever every rating is in "
            "one class.",
            UndefinedKappaWarning,
            stacklevel=user_stacklevel(),
        )
        return replace_undefined_by
    return float(1.0 - observed / expected)
