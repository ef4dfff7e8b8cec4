"""Row-level input: frequency-weight expansion, per-row ids, taking rows.

Helpers for entry points that work row by row (resampling, groups): expand
``frequency_weight`` counts into repeated rows, encode ``clusters`` and
``groups`` ids, drop rows whose id is missing, and take the same rows of
every column.
"""

from __future__ import annotations

import numpy as np

from . import config
from .columns import CodesColumn, FloatColumn, IntColumn, MatrixColumn, as_column
from .config import LUT_RANGE_MAX
from .dispatch import minmax
from .encode import column_length
from .encoding import float_codes, rows_text
from .options import check_frequency_weight


def frequency_rows(frequency_weight, sample_weight, arrays: dict, *,
                   allow_zero: bool = False) -> tuple:
    """Validate ``frequency_weight`` at the top of an entry point.

    ``arrays`` maps argument names to the row-aligned arguments (``y_true``
    first; None entries pass through; compare's dict of predictions too).
    Returns ``(counts, arrays)``: int64 counts (None without frequency
    weights) and the arrays, both restricted to the rows with a positive
    count (a row counted 0 times is no row: not a class, not a cluster).
    """
    if frequency_weight is None:
        return None, arrays
    first = next(iter(arrays))
    n = n_rows(arrays[first], first)
    for k, v in arrays.items():
        for name, x in (v.items() if isinstance(v, dict) else [(k, v)]):
            m = None if x is None else n_rows(x, name)
            if m is not None and m != n:
                shown = name if not isinstance(v, dict) else f"{k}[{name!r}]"
                raise ValueError(
                    f"`{first}` and `{shown}` must have the same length; got {n} and {m}.")
    fw = check_frequency_weight(frequency_weight, n, sample_weight, allow_zero=allow_zero)
    if len(fw) == 0 or fw.min() > 0:
        return fw, arrays
    rows = fw > 0
    return np.ascontiguousarray(fw[rows]), take_all_rows(arrays, rows)


def expand_frequency(frequency_weight, sample_weight, arrays: dict) -> dict:
    """The rows of ``arrays`` repeated by their ``frequency_weight`` counts.

    For entry points that work row by row (memory grows with the total count):
    the result is exactly that of the expanded rows.
    """
    fw, arrays = frequency_rows(frequency_weight, sample_weight, arrays)
    if fw is None:
        return arrays
    total = int(fw.sum())
    if total > config.MAX_EXPANDED_ROWS:
        raise ValueError(
            f"`frequency_weight` sums to {total} rows; this function expands counted rows "
            f"and supports at most {config.MAX_EXPANDED_ROWS} in all. Use "
            "fastkappa.kappa_ci(..., frequency_weight=...) or cohen_kappa(), which count "
            "without expanding.")
    return take_all_rows(arrays, np.repeat(np.arange(len(fw)), fw))


def id_keys(ids, n_input: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Codes and distinct values of per-row ids (``clusters``, ``groups``).

    ``keys[codes[i]]`` is row i's id; equal ids (by value, like labels) share
    a code; missing ids (NaN, None, pd.NA, Arrow nulls) get -1.  Accepts
    every container labels accept (lists, NumPy, pandas, polars, pyarrow,
    chunked arrays...).
    """
    col = as_column(ids, name)
    if isinstance(col, MatrixColumn):
        raise ValueError(
            f"`{name}` must be a 1-D array of ids, one per row; got shape "
            f"{col.values.shape}.")
    if column_length(col) != n_input:
        raise ValueError(
            f"`{name}` must have one id per row: got {column_length(col)} ids for {n_input} rows.")
    if isinstance(col, FloatColumn):
        col = float_codes(col, name, require_whole=False)
    if isinstance(col, CodesColumn):
        return np.asarray(col.codes, dtype=np.int64), np.asarray(col.categories)
    keys, codes = np.unique(col.values, return_inverse=True)
    return codes.astype(np.int64).reshape(-1), keys


def id_codes(ids, n_input: int, name: str) -> np.ndarray:
    """Codes of per-row ids, -1 for missing (see :func:`id_keys`); no sort for
    integer ids spanning a moderate range."""
    col = as_column(ids, name)
    if isinstance(col, IntColumn) and column_length(col) == n_input and len(col.values):
        lo, hi = minmax(col.values)
        if hi - lo < LUT_RANGE_MAX:
            return np.asarray(col.values, dtype=np.int64) - lo
    return id_keys(col, n_input, name)[0]


def missing_id_rows(codes: np.ndarray, nan_policy: str, name: str,
                    omit: bool = True) -> np.ndarray | None:
    """Rows to keep when some ids are missing and ``nan_policy='omit'`` (else None);
    an error under ``'raise'``, naming ``nan_policy`` when the caller takes it
    (``omit``)."""
    missing = codes < 0
    if not missing.any():
        return None
    if nan_policy != "omit":
        way = (", or pass nan_policy='omit' to drop those rows" if omit else
               " (the agreement functions take no nan_policy: drop those rows first)")
        raise ValueError(
            f"`{name}` holds {rows_text(missing.sum())} with a missing id (NaN/None/null); "
            f"give every row an id{way}.")
    return ~missing


def n_rows(x, name: str) -> int:
    """Number of rows of a labels argument (no copy for arrays)."""
    return column_length(as_column(x, name))


def omit_missing_ids(ids, name: str, nan_policy: str, arrays: dict) -> tuple:
    """Apply ``nan_policy`` to missing ``ids`` (clusters, groups) of the rows.

    ``arrays`` maps argument names to the row-aligned arguments (``y_true``
    first; None entries are passed through).  Returns ``(ids, arrays)``,
    restricted to the rows with an id when ``nan_policy='omit'``.
    """
    if ids is None:
        return ids, arrays
    first = next(iter(arrays))
    codes = id_codes(ids, n_rows(arrays[first], first), name)
    rows = missing_id_rows(codes, nan_policy, name)
    if rows is None:
        return ids, arrays
    if not rows.any():
        raise ValueError(f"every row has a missing id in `{name}`; no row is left to score.")
    return take_rows(ids, rows, name), take_all_rows(arrays, rows)


def take_all_rows(arrays: dict, rows: np.ndarray) -> dict:
    """Every row-aligned argument of ``arrays`` restricted to ``rows`` (a mask or
    indices; compare's dict of predictions included)."""
    out = {}
    for k, v in arrays.items():
        if isinstance(v, dict):  # compare's predictions
            out[k] = {m: take_rows(p, rows, f"{k}[{m!r}]") for m, p in v.items()}
        else:
            out[k] = take_rows(v, rows, k)
    return out


def take_rows(x, rows: np.ndarray | None, name: str):
    """``x`` (any labels/scores/weights container, or None) restricted to ``rows``."""
    if x is None or rows is None:
        return x
    col = as_column(x, name)
    if isinstance(col, CodesColumn):
        return CodesColumn(col.codes[rows], col.categories, col.ordered, col.kind)
    if isinstance(col, IntColumn) and col.values.dtype == np.uint8 and (
            getattr(getattr(x, "dtype", None), "kind", None) == "b" or (
            isinstance(x, list) and x and isinstance(x[0], (bool, np.bool_)))):
        return col.values[rows].view(bool)  # booleans stay booleans (group ids)
    return type(col)(col.values[rows])
