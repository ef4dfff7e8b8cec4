"""Checks and normalisers of the keywords shared by the public functions.

``nan_policy``, ``ignore_index``, ``replace_undefined_by``, ``sample_weight`` and
``frequency_weight``:
each check returns the normalised value or raises a ValueError that says what
to pass instead.
"""

from __future__ import annotations

import decimal
import numbers

import numpy as np

from .columns import FloatColumn, IntColumn, _is_missing_scalar, _module_of, as_column
from .dispatch import chunked, kernels

NAN_POLICIES = ("raise", "omit")


def check_nan_policy(nan_policy: str) -> str:
    if not isinstance(nan_policy, str) or nan_policy not in NAN_POLICIES:
        # an array is shown by its type: its truth value is ambiguous, its repr long
        shown = (repr(nan_policy) if nan_policy is None or np.isscalar(nan_policy)
                 else type(nan_policy).__name__)
        raise ValueError(f"`nan_policy` must be 'raise' or 'omit'; got {shown}.")
    return nan_policy


def check_marker_kind(name: str, value, kind: str | None, labels: str, effect: str) -> None:
    """A label marker (``ignore_index``, ``missing``) of the other kind than the
    labels is an error: a number never equals a string label, nor a string a
    number, so the marker would silently ``effect`` nothing."""
    if value is None or kind is None or (kind == "str") == isinstance(value, str):
        return
    if isinstance(value, np.generic):
        value = value.item()  # shown as 10, not np.int64(10)
    given = "string" if isinstance(value, str) else "number"
    held = "strings" if kind == "str" else "numbers"
    hint = repr(str(value)) if kind == "str" else "a number (e.g. -1)"
    raise ValueError(f"`{name}` is the {given} {value!r} but the {labels} are {held}, so it "
                     f"would {effect}; give it as {hint}.")


def is_marker(label, marker) -> bool:
    """Whether a class ``label`` is the marker value (``missing``, ``ignore_index``):
    equal and of the same kind (a number is never the string, a bool no marker)."""
    return (type(label) is not bool and isinstance(label, str) == isinstance(marker, str)
            and label == marker)


def check_marker_undeclared(name: str, value, declared, consequence: str) -> None:
    """A label marker (``ignore_index``, ``missing``) that is also one of the
    declared classes is an error: every row or rating of that class would
    be dropped while the class stays on the scale."""
    if value is None or declared is None:
        return
    if not any(is_marker(v, value) for v in np.asarray(declared).tolist()):
        return
    if isinstance(value, np.generic):
        value = value.item()
    raise ValueError(f"`{name}` is {value!r}, one of the declared classes (`labels=` or "
                     f"`n_classes=`, or an ordered Categorical's categories), so {consequence}")


def check_ignore_undeclared(ignore_index, declared) -> None:
    """``ignore_index`` among the declared classes (see :func:`check_marker_undeclared`)."""
    check_marker_undeclared(
        "ignore_index", ignore_index, declared,
        "rows where either side equals it would be dropped and predictions of that class "
        "would go uncounted (torchmetrics drops rows on the target side only). Declare "
        "the classes without it, or drop the rows whose true label equals it yourself.")


def check_thresholds(thresholds) -> np.ndarray:
    """Cut points as a float64 array: numbers, 1-D, at least one, finite and
    strictly increasing (every function that takes ``thresholds``)."""
    try:
        th = np.asarray(thresholds)
    except ValueError:  # ragged nested lists
        th = np.asarray(None)
    if th.dtype == object and th.size and all(
            isinstance(v, (numbers.Real, decimal.Decimal)) and not isinstance(v, bool)
            for v in th.ravel().tolist()):
        th = th.astype(np.float64)  # Decimals, an object Series of floats
    if th.dtype == object or th.dtype.kind not in "biuf":
        raise ValueError("`thresholds` must be numbers: increasing numeric cut points.")
    if th.ndim != 1 or th.size == 0:
        raise ValueError("`thresholds` must be a non-empty 1-D array of cut points; got "
                         f"shape {th.shape}.")
    th = th.astype(np.float64)
    if not np.all(np.isfinite(th)):
        raise ValueError("`thresholds` must be finite (they hold nan or inf).")
    if np.any(np.diff(th) <= 0):
        raise ValueError("`thresholds` must be strictly increasing.")
    return th


def check_replace_undefined_by(value) -> float:
    """``replace_undefined_by`` as a float: a number in [-1, 1] or nan, as in
    scikit-learn's ``cohen_kappa_score`` (a kappa's own range)."""
    ok = (isinstance(value, (int, float, np.integer, np.floating))
          and not isinstance(value, (bool, np.bool_)))
    if ok and (value != value or -1 <= value <= 1):  # no float() of a huge int first
        return float(value)
    raise ValueError(
        "`replace_undefined_by` must be a number in [-1, 1] or nan (what an undefined "
        f"kappa is reported as); got {value!r}.")


def check_ignore_index(ignore_index):
    """``ignore_index`` as a plain Python value that compares by value.

    Labels are matched by value whatever their dtype: ``True`` is 1, ``1.0``
    is 1 (so ``ignore_index=True`` drops the ``True`` rows of a bool array and
    ``-1.0`` the ``-1`` rows of an int array); NaN equals nothing and is an
    error pointing to ``nan_policy``.
    """
    if ignore_index is None:
        return None
    v = ignore_index
    if not (np.isscalar(v) and not isinstance(v, bytes)):
        raise ValueError("`ignore_index` must be a single label value (e.g. -1).")
    if isinstance(v, (bool, np.bool_, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        if v != v:
            raise ValueError(
                "`ignore_index` is NaN, which equals no label; to drop rows holding "
                "missing values pass nan_policy='omit' instead.")
        return int(v) if float(v).is_integer() else float(v)
    if isinstance(v, np.str_):
        return str(v)
    return v


def _n_missing(x) -> int:
    """How many entries of a weights argument are missing: None, pd.NA, a pandas,
    polars or pyarrow null.  NaN in a float column is not counted (it is a
    non-finite number there, refused as such)."""
    mod = _module_of(x)
    if mod == "pandas":
        import pandas as pd

        if isinstance(x, pd.MultiIndex):
            return 0  # refused by as_column, with a hint
        if isinstance(x, pd.DataFrame) and x.shape[1] == 1:
            x = x.iloc[:, 0]
        dtype = getattr(x, "dtype", None)
        if not isinstance(dtype, np.dtype) or dtype.kind == "O":
            return int(np.asarray(pd.isna(x)).sum())
        return 0
    if mod == "polars":
        import polars as pl

        if isinstance(x, pl.DataFrame) and x.width == 1:
            x = x.to_series(0)
        return int(x.null_count()) if isinstance(x, pl.Series) else 0
    if mod == "pyarrow":
        count = getattr(x, "null_count", 0)
        return int(count) if isinstance(count, (int, np.integer)) else 0
    if isinstance(x, np.ndarray) and x.dtype == object:
        x = x.ravel().tolist()
    if isinstance(x, (list, tuple)):
        return sum(_is_missing_scalar(v) and not isinstance(v, (float, np.floating))
                   for v in x)
    return 0


def _weight_column(x, name: str, what: str, fill: str, column=FloatColumn):
    """Per-row weights as a column: masked or missing entries are an error, plain
    numeric arrays skip the label rules (uint64 above 2**63 is a fine weight)."""
    if isinstance(x, np.ma.MaskedArray):
        if np.ma.getmaskarray(x).any():
            raise ValueError(
                f"`{name}` is a masked array with masked entries; a {what} cannot be "
                f"missing. Fill them (e.g. .filled(0) to {fill}).")
        x = np.ma.getdata(x)
    if n := _n_missing(x):
        raise ValueError(
            f"`{name}` holds {n} missing value{'s' if n > 1 else ''} (None, pd.NA or "
            f"null); a {what} cannot be missing. Fill them with 0 to {fill} (.fillna(0) "
            "in pandas, .fill_null(0) in polars or pyarrow).")
    if isinstance(x, np.ndarray) and x.dtype.kind in "biuf" and (
            x.ndim == 1 or x.shape[1:] == (1,)):
        v = x.reshape(-1)
        return column(v) if v.dtype.kind != "f" else FloatColumn(v)
    return as_column(x, name)


def _negatives(values: np.ndarray, noun: str) -> str:
    """How many of ``values`` are negative, and the first: for an error message."""
    negative = values < 0
    count = int(negative.sum())
    first = values[int(np.argmax(negative))]
    return (f"a negative {noun} ({first:g})" if count == 1
            else f"{count} negative {noun}s (the first is {first:g})")


def check_sample_weight(sample_weight, n: int, *, allow_zero: bool = False
                        ) -> np.ndarray | None:
    """``sample_weight`` as a float64 array of ``n`` finite, non-negative weights (or
    None).  All zero is an error unless ``allow_zero`` (a streaming batch: the
    stream's total is checked when it is scored)."""
    if sample_weight is None:
        return None
    col = _weight_column(sample_weight, "sample_weight", "weight", "give those rows no weight")
    if isinstance(col, (IntColumn, FloatColumn)):
        w = np.asarray(col.values, dtype=np.float64)
    else:
        raise ValueError("`sample_weight` must be a 1-D array of non-negative numbers.")
    if w.shape != (n,):
        raise ValueError(
            f"`sample_weight` must have one weight per row: got {w.shape[0]} weights for "
            f"{n} rows.")
    w = np.ascontiguousarray(w)
    # one pass for sum, min and max; only a non-finite sum needs a closer look
    stats = chunked(kernels().weight_stats, n, w) if n else np.zeros((1, 3))
    with np.errstate(over="ignore", invalid="ignore"):
        total = stats[:, 0].sum()
    if not np.isfinite(total) and not np.all(np.isfinite(w)):
        raise ValueError("`sample_weight` must be finite (it holds nan or inf).")
    if n and stats[:, 1].min() < 0:
        raise ValueError(
            f"`sample_weight` must be non-negative; it holds {_negatives(w, 'weight')}. "
            "Give a row weight 0 to leave it out.")
    if not (n and stats[:, 2].max() > 0) and not allow_zero:
        raise ValueError("`sample_weight` is zero everywhere; at least one row needs a "
                         "positive weight.")
    if not np.isfinite(total):
        raise ValueError("`sample_weight` sums past the float64 range; rescale the weights "
                         "(kappa does not change when all weights are multiplied by a constant).")
    return w


_FW_HINT = ("`frequency_weight` holds counts: a row with count c stands for c identical "
            "rows")


def check_one_row_weight(sample_weight, frequency_weight) -> None:
    """Error when both kinds of row weight are given."""
    if sample_weight is not None and frequency_weight is not None:
        raise ValueError(
            "pass `sample_weight` (each row is one sampled unit carrying a weight) or "
            "`frequency_weight` (each row stands for c identical rows), not both; for "
            "counted rows that also carry a weight, expand the counts (np.repeat) and pass "
            "`sample_weight` alone.")


def check_frequency_weight(frequency_weight, n: int, sample_weight=None, *,
                           allow_zero: bool = False) -> np.ndarray | None:
    """``frequency_weight`` as int64 counts of the ``n`` rows (or None).

    Counts are non-negative whole numbers (floats holding whole numbers are
    fine) summing below 2**63; anything else is an error naming
    ``sample_weight`` for real-valued weights. All counts zero is an error
    unless ``allow_zero`` (a streaming batch of no rows).
    """
    if frequency_weight is None:
        return None
    check_one_row_weight(sample_weight, frequency_weight)
    fw = frequency_weight
    if type(fw) is np.ndarray and fw.dtype == np.int64 and fw.shape == (n,) and (
            fw.flags.c_contiguous and n and fw.min() >= 0 and (allow_zero or fw.max() > 0)):
        return _check_count_total(fw)  # already normalised (e.g. by frequency_rows)
    col = _weight_column(fw, "frequency_weight", "count", "drop those rows", IntColumn)
    if not isinstance(col, (IntColumn, FloatColumn)):
        raise ValueError(
            f"`frequency_weight` must be a 1-D array of non-negative whole numbers; "
            f"{_FW_HINT}. For real-valued weights pass `sample_weight` instead.")
    v = np.asarray(col.values)
    if v.shape != (n,):
        raise ValueError(
            f"`frequency_weight` must have one count per row: got {v.shape[0]} counts for "
            f"{n} rows.")
    if v.dtype.kind == "f":
        if not np.all(np.isfinite(v)):
            raise ValueError(
                "`frequency_weight` must be finite (it holds nan or inf); give every row a "
                "count (0 drops the row).")
        if not np.array_equal(v, np.floor(v)):
            raise ValueError(
                f"`frequency_weight` must hold whole numbers; {_FW_HINT}. For fractional "
                "weights pass `sample_weight` instead.")
    if n and v.min() < 0:
        raise ValueError(
            f"`frequency_weight` must be non-negative; it holds {_negatives(v, 'count')}. "
            "A row with count 0 is dropped.")
    if n and float(v.max()) >= 2.0**63:
        raise ValueError(
            "`frequency_weight` holds a count at or beyond 2**63; counts must fit in int64.")
    out = np.ascontiguousarray(v, dtype=np.int64)
    if not (n and out.max() > 0) and not allow_zero:
        raise ValueError(
            "`frequency_weight` is zero everywhere; at least one row needs a positive "
            "count.")
    return _check_count_total(out)


def _check_count_total(fw: np.ndarray) -> np.ndarray:
    """``fw`` unchanged if its total is below 2**63 (exact, in Python integers when
    the fast bound does not settle it), else an error."""
    approx = float(fw.sum(dtype=np.float64))  # off by far less than 2**61 here
    if approx >= 2**62:
        total = sum(int(x) for x in fw[fw > 0]) if approx < 2**64 else approx
        if total >= 2**63:
            raise ValueError(
                f"`frequency_weight` sums to {total:.0f} rows, at or beyond 2**63; a count "
                "table holds fewer rows in all (split the data and add the tables).")
    return fw


def check_row_keywords(n: int, *, sample_weight=None, frequency_weight=None,
                       ignore_index=None, nan_policy="raise", thresholds=None,
                       stream: bool = False) -> tuple:
    """The keywords that come with ``n`` rows of labels, checked as one batch of
    them is: ``(sample_weight, frequency_weight, ignore_index)`` normalised.

    :func:`~fastkappa._core.encode.encode_pair` calls it for every batch, and an
    empty streaming batch (``n == 0``, ``stream=True``), which counts nothing,
    still gets the same errors.  ``stream``: the weights may all be zero (the
    accumulator checks the total when it scores).
    """
    check_nan_policy(nan_policy)
    fw = check_frequency_weight(frequency_weight, n, sample_weight, allow_zero=stream)
    sw = check_sample_weight(sample_weight, n, allow_zero=stream)
    if thresholds is not None:
        check_thresholds(thresholds)
    return sw, fw, check_ignore_index(ignore_index)
