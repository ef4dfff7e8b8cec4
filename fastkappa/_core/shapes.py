"""torchmetrics' shapes: (N, ...) labels and (N, C, ...) scores become rows.

One normaliser, called at the top of every entry point that takes labels,
before anything else looks at them:

* labels of shape (N, d1, d2, ...) (a segmentation mask (N, H, W)) become
  N*d1*d2*... rows: a view for a C-contiguous array, never a copy;
* scores of shape (N, C, d1, ...) (the class axis at position 1, as for
  (N, C)) become (N*d1*..., C) rows in the same row order (one copy: the
  class axis has to move last);
* per-row arrays (``sample_weight``, ``clusters``, ``groups``) are either of
  shape (N,), repeated over the extra axes, or of the label shape, flattened.

Inputs that are 1-D (or (n, 1) columns) are returned untouched, so the rest
of the package sees exactly what it saw before. Which of ``y_pred``'s shapes
means labels and which means scores follows torchmetrics: as many dimensions
as ``y_true`` is labels, one more is scores.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .columns import list_array, to_numpy_any
from .encoding import rows_text

_TABULAR = ("pandas", "polars", "pyarrow")


def _nd(x, name: str) -> np.ndarray | None:
    """A NumPy view of a multi-dimensional array-like; None for anything 1-D or tabular.

    Tabular objects (pandas, polars, pyarrow) keep their own paths (categoricals,
    nulls); lists are only converted when they are nested (a ragged one is an
    error naming ``name``).
    """
    if x is None or isinstance(x, (str, bytes)):
        return None
    if isinstance(x, np.ndarray):
        return x if x.ndim >= 2 else None
    if type(x).__module__.split(".")[0] in _TABULAR:
        return None
    if isinstance(x, (list, tuple)):
        if len(x) and isinstance(x[0], (list, tuple, np.ndarray)):
            arr = list_array(x, name)
            return arr if arr.ndim >= 2 else None
        return None
    ndim = getattr(x, "ndim", None)
    if isinstance(ndim, int) and ndim >= 2:
        return to_numpy_any(x, name)
    return None


def _is_column(shape: tuple[int, ...]) -> bool:
    """(n, 1): a column, flattened by the input layer as before."""
    return len(shape) == 2 and shape[1] == 1


def _flatten_pred(y_pred, shape: tuple[int, ...], name: str, t_name: str):
    if _len(y_pred) is None and hasattr(y_pred, "__next__"):
        y_pred = list(y_pred)  # an iterator: read once here, where its shape counts
    arr = _nd(y_pred, name)
    if arr is None:
        n = _len(y_pred)
        if n is not None and int(np.prod(shape)) != shape[0]:
            # 1-D next to (N, d1, ...): refused as torchmetrics refuses different
            # shapes, also when the sizes agree (a raveled copy of another layout)
            raise ValueError(
                f"`{name}` is 1-D with {rows_text(n)} but `{t_name}` has shape {shape}; pass "
                f"`{name}` of shape {shape} (labels) or {(shape[0], 'C', *shape[1:])} "
                "(scores with the class axis at position 1), or flatten both.")
        return y_pred
    if arr.ndim == len(shape):
        if arr.shape != shape:
            raise ValueError(
                f"`{name}` has shape {arr.shape} but `{t_name}` has shape {shape}; labels "
                "must have the same shape on both sides.")
        return arr.reshape(-1)
    if arr.ndim == len(shape) + 1:
        if arr.shape[0] != shape[0] or arr.shape[2:] != shape[1:]:
            raise ValueError(
                f"`{name}` has shape {arr.shape} but `{t_name}` has shape {shape}; scores "
                f"must be (N, C, ...) = {(shape[0], 'C', *shape[1:])}, with the class "
                "axis at position 1.")
        return np.moveaxis(arr, 1, -1).reshape(-1, arr.shape[1])
    raise ValueError(
        f"`{name}` has shape {arr.shape} but `{t_name}` has shape {shape}; pass labels of "
        f"the same shape or scores of shape {(shape[0], 'C', *shape[1:])}.")


def _pred_ndim(y_pred, name: str) -> int:
    """The most dimensions among the predictions (1 for anything 1-D or tabular)."""
    preds = ({f"{name}[{k!r}]": v for k, v in y_pred.items()}
             if isinstance(y_pred, Mapping) else {name: y_pred})
    return max((a.ndim for a in (_nd(v, k) for k, v in preds.items()) if a is not None),
               default=1)


def _len(x) -> int | None:
    try:
        return len(x)
    except TypeError:
        return None


def _flatten_rows(values, shape: tuple[int, ...], name: str, t_name: str):
    """A per-row array of shape (N,) or ``shape`` as N*d1*... rows."""
    if values is None:
        return None
    arr = _nd(values, name)
    if arr is None and isinstance(values, np.ndarray):
        arr = values
    elif arr is None:  # Series, tensors (detached), lists
        arr = to_numpy_any(values, name)
        if arr is None:
            arr = list_array(values, name)
    if arr.shape == shape:
        return arr.reshape(-1)
    if arr.shape == shape[:1] or arr.shape == (shape[0], 1):
        return np.repeat(arr.reshape(-1), int(np.prod(shape[1:])))
    raise ValueError(
        f"`{name}` must have shape {shape[:1]} (one value per sample, repeated over the "
        f"extra axes) or {shape} (the shape of `{t_name}`); got shape {arr.shape}.")


def flatten_labels(y_true, y_pred, *, names: tuple[str, str] = ("y_true", "y_pred"),
                   **rows: Any) -> tuple:
    """``(y_true, y_pred, *rows.values())`` with (N, ...) shapes turned into rows.

    ``y_pred`` may be a mapping of name -> predictions (:func:`fastkappa.compare`);
    each value is flattened by the same rule. ``rows`` are per-row arrays
    (``sample_weight=``, ``clusters=``, ``groups=``), returned in the order given.
    When ``y_true`` is 1-D nothing changes (``y_pred`` may then be (N, C) scores).
    """
    t_name, p_name = names
    arr = _nd(y_true, t_name)
    if arr is None or (_is_column(arr.shape) and _pred_ndim(y_pred, p_name) < 3):
        # (n, 1) labels stay a column, unless the scores are (n, C, 1)
        return (y_true, y_pred, *rows.values())
    shape = arr.shape
    if isinstance(y_pred, Mapping):
        pred = {k: _flatten_pred(v, shape, f"{p_name}[{k!r}]", t_name)
                for k, v in y_pred.items()}
    else:
        pred = _flatten_pred(y_pred, shape, p_name, t_name)
    out = [_flatten_rows(v, shape, name, t_name) for name, v in rows.items()]
    return (arr.reshape(-1), pred, *out)
