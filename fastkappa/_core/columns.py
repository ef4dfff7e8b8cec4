"""Turn any array-like users pass into one of a few column kinds.

Everything that takes labels goes through :func:`as_column`, so that lists,
NumPy arrays (any integer dtype, any stride, no copy), floats holding whole
numbers, strings and objects, pandas Series (Categorical included), polars
Series, pyarrow arrays and anything with ``__array__`` or ``__dlpack__``
(torch tensors) all arrive at the encoder in the same shape.
"""

from __future__ import annotations

import decimal
import math
import numbers
import sys
from collections import abc
from dataclasses import dataclass
from typing import NoReturn

import numpy as np


@dataclass
class IntColumn:
    """Integer values used as they are (no copy); bool is viewed as uint8."""

    values: np.ndarray


@dataclass
class FloatColumn:
    """Floating values: whole numbers are classes, NaN is missing."""

    values: np.ndarray


@dataclass
class CodesColumn:
    """Dictionary-encoded values: ``codes`` index ``categories``, -1 is missing.

    Strings, objects, pandas/polars categoricals and pyarrow dictionary
    arrays all take this form.  ``ordered`` is True when the source declared
    an order (an ordered Categorical, a polars Enum): then ``categories`` is
    the full class scale, unobserved classes included.
    """

    codes: np.ndarray
    categories: np.ndarray
    ordered: bool = False
    kind: str = "str"  # "str" or "num": what the categories hold


@dataclass
class MatrixColumn:
    """A 2-D (n, K) array of probabilities or logits."""

    values: np.ndarray


Column = IntColumn | FloatColumn | CodesColumn | MatrixColumn


#: the arguments that hold per-row weights: numbers only, never labels
ROW_WEIGHT_NAMES = ("sample_weight", "frequency_weight")
#: what a labels, weights or ids argument holds, for the ragged-list message
_ROWS = ("a flat list of one value per row (or, for scores, the same number of values "
         "in every row)")


def _accepted(name: str) -> str:
    """What ``name`` may hold, for an error message: weights are numbers, labels
    and ids also strings."""
    if name in ROW_WEIGHT_NAMES:
        return "real numbers (integers, floats or booleans)"
    return "integers, whole-number floats, booleans or strings"


def list_array(x, name: str, expected: str = _ROWS) -> np.ndarray:
    """``np.asarray`` of a (nested) list or tuple; a ragged nested list (rows of
    different lengths) is an error naming ``name`` and what to pass instead
    (``expected``), not NumPy's."""
    try:
        return np.asarray(x)
    except ValueError as e:
        if "inhomogeneous" not in str(e) and "sequence" not in str(e):
            raise
        raise ValueError(
            f"`{name}` is a ragged nested list (its rows differ in length); pass "
            f"{expected}.") from None


def _is_missing_scalar(v) -> bool:
    if v is None:
        return True
    if isinstance(v, float) and v != v:
        return True
    pd = sys.modules.get("pandas")
    if pd is not None and (v is pd.NA or v is pd.NaT):
        return True
    if isinstance(v, np.floating) and np.isnan(v):
        return True
    return False


def _factorize_strings(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes (-1 for missing) and unique strings of a string/object array."""
    try:
        import pandas as pd
    except ImportError:
        pd = None
    if pd is not None:
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        return codes, np.asarray(uniques, dtype=object)
    try:
        import pyarrow as pa
    except ImportError:
        pa = None
    if pa is not None and values.dtype.kind in "US":
        enc = pa.array(values).dictionary_encode()
        codes = enc.indices.to_numpy(zero_copy_only=False)
        return codes.astype(np.int64, copy=False), np.asarray(
            enc.dictionary.to_pylist(), dtype=object)
    table: dict = {}
    codes = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values.tolist()):
        if _is_missing_scalar(v):
            codes[i] = -1
            continue
        c = table.get(v)
        if c is None:
            c = table[v] = len(table)
        codes[i] = c
    return codes, np.asarray(list(table), dtype=object)


def _is_number(u) -> bool:
    """A real number (Python, NumPy or Decimal); complex numbers are not labels."""
    return isinstance(u, (numbers.Real, decimal.Decimal))


def _unsupported_value(name: str, bad) -> NoReturn:
    if isinstance(bad, np.generic):
        bad = bad.item()  # shown as b'a', not np.bytes_(b'a')
    hint = (" (decode bytes to strings first, e.g. with .astype(str) or "
            "np.char.decode(x, 'utf-8'))" if isinstance(bad, bytes) and name not in
            ROW_WEIGHT_NAMES else "")
    raise ValueError(
        f"`{name}` holds a value of unsupported type {type(bad).__name__} ({bad!r}); "
        f"values must be {_accepted(name)}{hint}.")


def _object_column(values: np.ndarray, name: str) -> Column:
    """Classify an object/str array: strings, numbers, or a mix (an error)."""
    if values.dtype.kind == "S":  # refused as bytes objects are: b"1" == "1" is False
        _unsupported_value(name, values[0] if len(values) else b"")
    if values.dtype.kind == "U":
        codes, uniques = _factorize_strings(values)
        return CodesColumn(codes, uniques, kind="str")
    try:
        codes, uniques = _factorize_strings(values)
    except TypeError:  # unhashable elements (lists, dicts...)
        bad = next(v for v in values.tolist() if not isinstance(v, (str, numbers.Number)))
        _unsupported_value(name, bad)
    # uniques hold the distinct non-missing values: classify them, not the rows
    n_str = sum(isinstance(u, str) for u in uniques)
    n_num = sum(_is_number(u) and not isinstance(u, bool) for u in uniques)
    n_bool = sum(isinstance(u, (bool, np.bool_)) for u in uniques)
    if n_str and (n_num or n_bool):
        raise ValueError(
            f"`{name}` mixes strings and numbers; its values must be all strings or all "
            "numbers (convert them, e.g. with .astype(str))."
        )
    if n_str + n_num + n_bool != len(uniques):
        _unsupported_value(name, next(u for u in uniques if not (
            isinstance(u, (str, np.bool_)) or _is_number(u))))
    if n_str:
        return CodesColumn(codes, uniques, kind="str")
    if any(not -(2**63) <= v < 2**63 for v in map(_whole_decimal, uniques) if v is not None) or (
            any(isinstance(u, numbers.Integral) and not -(2**63) <= u < 2**63 for u in uniques)):
        # float64 would merge distinct labels (10**20 and 10**20 + 1): refuse
        raise ValueError(
            f"`{name}` holds integers beyond the int64 range; values that large are not "
            "supported as labels or ids (subtract an offset, or convert them to strings).")
    exact = _exact_ints(uniques)
    if exact is not None:
        # integers (and floats holding whole numbers) keep their exact value: never
        # through float64, which merges neighbours beyond 2**53
        return CodesColumn(codes, exact, kind="num")
    # non-integral or non-finite numbers: the float path checks them (and
    # `thresholds` can cut them), exactly as for a float array
    nums = np.array([float(u) for u in uniques], dtype=np.float64)
    return FloatColumn(np.where(codes >= 0, nums[np.maximum(codes, 0)], np.nan))


def _whole_decimal(u) -> int | None:
    """A ``decimal.Decimal`` holding a whole number as its exact int (pyarrow's
    and polars' decimal columns, SQL exports); None for anything else."""
    if isinstance(u, decimal.Decimal) and u.is_finite() and u == u.to_integral_value():
        return int(u)
    return None


def _exact_ints(uniques) -> np.ndarray | None:
    """``uniques`` as exact int64 values when each is an integer (bools included),
    a float or a Decimal holding a whole number within the int64 range; else
    None."""
    out = np.empty(len(uniques), dtype=np.int64)
    for i, u in enumerate(uniques):
        if isinstance(u, (numbers.Integral, np.bool_)):
            v = int(u)
        elif isinstance(u, numbers.Real) and math.isfinite(u) and float(u).is_integer():
            v = int(u)
        elif (v := _whole_decimal(u)) is None:
            return None
        if not -(2**63) <= v < 2**63:
            return None
        out[i] = v
    return out


def _check_uint64(values: np.ndarray, name: str) -> np.ndarray:
    """uint64 labels viewed as int64; 2**63 and above is an error (never wrapped)."""
    if values.dtype == np.uint64:
        if values.size and values.max() >= 2**63:
            raise ValueError(
                f"`{name}` holds unsigned integers of 2**63 or more; values that large "
                "are not supported as labels or ids (subtract an offset, or convert them to "
                "strings).")
        return values.view(np.int64)
    return values


def _masked_ints(values: np.ndarray, missing: np.ndarray, name: str) -> Column:
    """Integers with missing entries (``missing`` True), kept exact.

    Below 2**53 in magnitude float64 holds every value exactly, so they take
    the float path (NaN missing); beyond, float64 would merge neighbouring
    labels, so the values are encoded as codes into their distinct integers.
    ``values`` at the missing positions are ignored.
    """
    if values.dtype.kind == "b":
        values = values.view(np.uint8)
    present = values[~missing]
    if values.dtype == np.uint64:
        _check_uint64(present, name)
        values = values.view(np.int64)
        present = present.view(np.int64)
    if present.size == 0 or (present.min() > -(2**53) and present.max() < 2**53):
        out = values.astype(np.float64)
        out[missing] = np.nan
        return FloatColumn(out)
    uniq, inverse = np.unique(present, return_inverse=True)
    codes = np.full(len(values), -1, dtype=np.int64)
    codes[~missing] = inverse
    return CodesColumn(codes, uniq.astype(np.int64), kind="num")


def _from_pandas(x, name: str) -> Column:
    import pandas as pd

    if isinstance(x, pd.MultiIndex):
        raise ValueError(
            f"`{name}` is a pandas MultiIndex, which holds tuples of {x.nlevels} levels; "
            "pass one level (e.g. index.get_level_values(0)) or a column.")
    if isinstance(x, (pd.api.extensions.ExtensionArray, pd.Index)):
        # Series.array, pd.array(...), an Index: read like the Series they make
        x = pd.Series(x, copy=False)
    if isinstance(x, pd.DataFrame):
        if x.shape[1] == 1:
            return _from_pandas(x.iloc[:, 0], name)
        return as_column(x.to_numpy(), name)
    dtype = x.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        codes = np.asarray(x.cat.codes if isinstance(x, pd.Series) else x.codes)
        cats = dtype.categories.to_numpy()
        if cats.dtype.kind in "biuf":
            return CodesColumn(codes, cats, ordered=bool(dtype.ordered), kind="num")
        cats = np.asarray(cats, dtype=object)
        if not all(isinstance(c, str) for c in cats):
            return _object_column(np.asarray(x.to_numpy(dtype=object)), name)
        return CodesColumn(codes, cats, ordered=bool(dtype.ordered), kind="str")
    if isinstance(dtype, np.dtype):
        return as_column(x.to_numpy(), name)
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa

        if pa.types.is_dictionary(dtype.pyarrow_dtype):
            # read as the pyarrow array it wraps (its kind is "O" whatever the
            # dictionary holds): an ordered dictionary keeps its order
            return _from_arrow(pa.array(x.array), name)
    # extension dtypes: nullable integers/floats/booleans, strings, arrow-backed
    kind = getattr(dtype, "kind", "O")
    if kind in "biuf":
        missing = x.isna().to_numpy()
        if missing.any():
            if kind in "iu":
                big = np.uint64 if kind == "u" and dtype.itemsize == 8 else np.int64
                return _masked_ints(x.to_numpy(dtype=big, na_value=0), missing, name)
            return FloatColumn(x.to_numpy(dtype=np.float64, na_value=np.nan))
        np_dtype = getattr(dtype, "numpy_dtype", None)
        return as_column(x.to_numpy(dtype=np_dtype), name)
    return _object_column(x.to_numpy(dtype=object, na_value=None), name)


def _from_polars(x, name: str) -> Column:
    import polars as pl

    if isinstance(x, (pl.LazyFrame, pl.Expr)):
        what = "LazyFrame" if isinstance(x, pl.LazyFrame) else "expression"
        raise ValueError(
            f"`{name}` is a polars {what}, which holds no values until it is evaluated; "
            "collect it first (e.g. lazy_frame.collect()['column'], or "
            "df.select(expression).to_series()).")
    if not isinstance(x, (pl.Series, pl.DataFrame)):
        raise ValueError(
            f"`{name}` is a polars {type(x).__name__}; pass a polars Series (or a "
            "one-column DataFrame) instead.")
    if isinstance(x, pl.DataFrame):
        if x.width == 1:
            return _from_polars(x.to_series(0), name)
        return as_column(x.to_numpy(), name)
    dtype = x.dtype
    if isinstance(dtype, pl.Enum):
        cats = np.asarray(dtype.categories.to_list(), dtype=object)
        codes = x.to_physical().cast(pl.Int64).fill_null(-1).to_numpy()
        return CodesColumn(np.asarray(codes, dtype=np.int64), cats, ordered=True, kind="str")
    if isinstance(dtype, pl.Categorical):
        # physical codes of a Categorical index a global string cache: re-encode
        return _object_column(x.cast(pl.String).to_numpy(), name)
    if dtype == pl.String:
        return _object_column(x.to_numpy(), name)
    if x.null_count() and dtype.is_integer():
        big = pl.UInt64 if dtype == pl.UInt64 else pl.Int64
        return _masked_ints(x.fill_null(0).cast(big).to_numpy(), x.is_null().to_numpy(), name)
    if x.null_count() and dtype.is_numeric():
        return FloatColumn(x.cast(pl.Float64).fill_null(float("nan")).to_numpy())
    return as_column(x.to_numpy(), name)


def first_index_outside(idx, size: int) -> int | None:
    """Position of the first non-null index in ``idx`` (a pyarrow integer array of
    dictionary indices) outside ``0 .. size - 1``, or None when every one is
    inside.  pyarrow does not check the indices it decodes from a file, and an
    array built with ``safe=False`` is not checked either."""
    import pyarrow.compute as pc

    if len(idx) == idx.null_count:
        return None
    lo_hi = pc.min_max(idx)
    if lo_hi["min"].as_py() >= 0 and lo_hi["max"].as_py() < size:
        return None  # one pass in the common case
    bad = pc.or_(pc.less(idx, 0), pc.greater_equal(idx, size)).fill_null(False)
    return int(np.flatnonzero(bad.to_numpy(zero_copy_only=False))[0])


def _from_arrow(x, name: str) -> Column:
    import pyarrow as pa

    if isinstance(x, (pa.Table, pa.RecordBatch)):  # as a pandas or polars DataFrame
        if x.num_columns == 0:
            raise ValueError(f"`{name}` is a table with no column; pass one column of "
                             "labels (or (n, K) scores).")
        if x.num_columns == 1:
            return _from_arrow(x.column(0), name)
        return as_column(np.column_stack([c.to_numpy(zero_copy_only=False)
                                          for c in x.columns]), name)
    if isinstance(x, pa.ChunkedArray):
        try:
            x = x.combine_chunks() if x.num_chunks != 1 else x.chunk(0)
        except pa.ArrowInvalid:  # dictionaries that hold a null cannot be unified
            x = x.cast(x.type.value_type).combine_chunks()
    if pa.types.is_dictionary(x.type):
        idx = x.indices
        i = first_index_outside(idx, len(x.dictionary))
        if i is not None:
            raise ValueError(f"`{name}` is a dictionary array whose index {idx[i].as_py()} at "
                             f"position {i} lies outside its dictionary of "
                             f"{len(x.dictionary)} values; it is not a valid array "
                             "(pyarrow's `validate(full=True)` refuses it too).")
        if idx.null_count:
            # indices may be unsigned: widen before writing the -1 sentinel
            idx = idx.cast(pa.int64()).fill_null(-1)
        codes = idx.to_numpy(zero_copy_only=False)
        values = x.dictionary.to_pylist()
        absent = [_is_missing_scalar(v) for v in values]
        if any(absent):
            # a null or NaN *in the dictionary* (pyarrow's null_encoding="encode",
            # NaN floats) is a missing value, as a null index is: no class
            keep = ~np.asarray(absent)
            remap = np.append(np.where(keep, np.cumsum(keep) - 1, -1), -1)
            codes = remap[np.asarray(codes, dtype=np.int64)]
            values = [v for v, k in zip(values, keep, strict=True) if k]
        dict_col = _object_column(np.asarray(values, dtype=object), name)
        kind = dict_col.kind if isinstance(dict_col, CodesColumn) else "num"
        cats = np.asarray(values, dtype=object if kind == "str" else None)
        return CodesColumn(np.asarray(codes), cats, ordered=bool(x.type.ordered), kind=kind)
    if pa.types.is_string(x.type) or pa.types.is_large_string(x.type):
        enc = x.dictionary_encode()
        return _from_arrow(enc, name)
    if x.null_count:
        if pa.types.is_integer(x.type):
            big = pa.uint64() if x.type == pa.uint64() else pa.int64()
            return _masked_ints(
                x.fill_null(0).cast(big).to_numpy(zero_copy_only=False),
                x.is_null().to_numpy(zero_copy_only=False), name)
        if pa.types.is_integer(x.type) or pa.types.is_floating(x.type):
            return FloatColumn(
                x.cast(pa.float64()).fill_null(float("nan")).to_numpy(zero_copy_only=False))
        return _object_column(np.asarray(x.to_pylist(), dtype=object), name)
    return as_column(x.to_numpy(zero_copy_only=False), name)


def materialize(x):
    """An iterator (a generator, ``map``...) read once into a list, so that every
    later pass sees the same rows; anything else is returned unchanged."""
    if isinstance(x, abc.Iterator):
        return list(x)
    return x


def _module_of(x) -> str:
    return type(x).__module__.split(".")[0]


def to_numpy_any(x, name: str) -> np.ndarray | None:
    """NumPy view of foreign array objects (torch, cupy-on-host, dlpack), else None."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # torch.Tensor, without importing torch
        x = x.detach().cpu()
        if hasattr(x, "numpy"):
            try:
                return x.numpy()
            except Exception:  # fall through to the protocols
                pass
            if getattr(x, "is_floating_point", lambda: False)():
                # NumPy has no bfloat16 (nor float8): float32 holds them exactly
                return x.float().numpy()
    if hasattr(x, "__array__"):
        return np.asarray(x)
    if hasattr(x, "__dlpack__"):
        return np.from_dlpack(x)
    return None


def _from_masked(x: np.ma.MaskedArray, name: str) -> Column:
    """A NumPy masked array: masked entries are missing values (``nan_policy``)."""
    mask = np.ma.getmaskarray(x)
    data = np.ma.getdata(x)
    if not mask.any():
        return as_column(np.asarray(data), name)
    if data.ndim == 2 and data.shape[1] == 1:
        data, mask = data[:, 0], mask[:, 0]
    if data.ndim != 1:
        raise ValueError(
            f"`{name}` is a masked array of shape {data.shape} with masked entries; only "
            "1-D labels may be masked (masked rows are missing values). Fill or drop "
            "the masked scores first.")
    kind = data.dtype.kind
    if kind in "biu":
        return _masked_ints(data, mask, name)
    if kind == "f":
        out = data.astype(np.float64)
        out[mask] = np.nan
        return FloatColumn(out)
    out = data.astype(object)
    out[mask] = None
    return _object_column(out, name)


def as_column(x, name: str) -> Column:
    """Normalise one labels argument (``y_true``, ``y_pred``...) to a column.

    Raises ``ValueError`` for scalars, arrays of more than two dimensions and
    unsupported element types.  (n, 1) inputs are flattened; (n, K) inputs
    with K > 1 become a :class:`MatrixColumn` (probabilities or logits).
    """
    if isinstance(x, (IntColumn, FloatColumn, CodesColumn, MatrixColumn)):
        return x
    if isinstance(x, (abc.Set, abc.Mapping, abc.MappingView)):
        raise ValueError(
            f"`{name}` is a {type(x).__name__}, which has no reliable order; pass a list "
            "(or an array) instead" + (", with the classes in scale order." if name == "labels"
                                       else ", one value per row."))
    mod = _module_of(x)
    if mod == "pandas":
        return _from_pandas(x, name)
    if mod == "polars":
        return _from_polars(x, name)
    if mod == "pyarrow":
        return _from_arrow(x, name)
    if isinstance(x, np.ma.MaskedArray):
        return _from_masked(x, name)
    if isinstance(x, np.ndarray):
        arr = x
    elif isinstance(x, (list, tuple, range)):
        arr = list_array(x, name)
        if arr.dtype.kind in "US" and not all(isinstance(v, str) for v in x):
            arr = np.asarray(x, dtype=object)
    elif isinstance(x, (str, bytes)) or np.isscalar(x):
        raise ValueError(f"`{name}` must be array-like (a list, array or Series); got a scalar.")
    else:
        arr = to_numpy_any(x, name)
        if arr is None:
            try:
                arr = list_array(list(x), name)
            except TypeError:
                raise ValueError(
                    f"`{name}` must be array-like; got {type(x).__name__}.") from None
    if arr.ndim == 0:
        raise ValueError(f"`{name}` must be array-like (a list, array or Series); got a scalar.")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim == 2:
        if arr.dtype.kind not in "biuf":
            raise ValueError(
                f"`{name}` is 2-D with dtype {arr.dtype}: labels and ids must be 1-D, and "
                "only predictions may be 2-D, as (n, K) numeric probabilities or logits.")
        return MatrixColumn(arr)
    if arr.ndim != 1:
        raise ValueError(
            f"`{name}` must be 1-D labels (or (n, K) scores for y_pred); got shape {arr.shape}.")
    kind = arr.dtype.kind
    if not arr.dtype.isnative and kind in "biuf":
        # numba reads native byte order only: one copy, unavoidable
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if kind == "b":
        return IntColumn(arr.view(np.uint8))
    if kind == "u" and arr.dtype.itemsize == 8:
        # float64 would merge distinct labels (2**63 and 2**63 + 1): refuse
        return IntColumn(_check_uint64(arr, name))
    if kind in "iu":
        return IntColumn(arr)
    if kind == "f":
        return FloatColumn(arr)
    if kind in "USO":
        return _object_column(arr, name)
    raise ValueError(f"`{name}` has unsupported dtype {arr.dtype}; pass {_accepted(name)}.")
