"""Input validation and label encoding, in one place.

:func:`encode_pair` is the single entry through which every public function
that takes ``(y_true, y_pred)`` validates its input and fixes the classes.  It
returns an :class:`~fastkappa._core.encoding.EncodedPair`, which counts itself
into the confusion matrix or gives dense class indices.
"""

from __future__ import annotations

import numpy as np

from . import weights as _weights
from .columns import CodesColumn, FloatColumn, IntColumn, MatrixColumn, as_column
from .config import DIRECT_RANGE_MAX, LUT_RANGE_MAX, MAX_CLASSES
from .dispatch import counting_kernels, minmax
from .encoding import (
    EncodedPair,
    NoClassLeftError,
    Side,
    float_codes,
    int_lut,
    missing_message,
    rows_text,
    whole_float_column,
)
from .options import (
    check_ignore_undeclared,
    check_marker_kind,
    check_nan_policy,
    check_row_keywords,
    check_thresholds,
)


def check_class_count(k: int, what: str) -> int:
    """``k`` classes, checked against :data:`MAX_CLASSES` before anything is allocated."""
    if k > MAX_CLASSES:
        raise ValueError(
            f"`{what}` declares {k} classes, more than the {MAX_CLASSES} a confusion "
            "matrix supports here; are these really class labels?")
    return k


def check_labels(labels, n_classes):
    if labels is not None and n_classes is not None:
        raise ValueError("pass either `labels` or `n_classes`, not both.")
    if n_classes is not None:
        k = check_class_count(_weights._check_n_classes(n_classes), "n_classes")
        return np.arange(k, dtype=np.int64), "num"
    if labels is None:
        return None, None
    col = as_column(labels, "labels")
    if isinstance(col, CodesColumn):
        if (col.codes < 0).any():
            raise ValueError("`labels` must not contain missing values.")
        arr = col.categories[col.codes]
        kind = col.kind
    elif isinstance(col, IntColumn):
        arr, kind = col.values.astype(np.int64), "num"
    elif isinstance(col, FloatColumn):
        arr, kind = col.values, "num"
        if np.isnan(arr).any():
            raise ValueError("`labels` must not contain NaN.")
        if np.array_equal(arr, np.round(arr)) and (
                arr.size == 0 or float(np.abs(arr).max()) < 2**53):
            arr = arr.astype(np.int64)
    else:
        raise ValueError("`labels` must be a 1-D list of class labels.")
    if len(arr) == 0:
        raise ValueError("`labels` must hold at least one class.")
    check_class_count(len(arr), "labels")
    seen = set()
    for v in arr.tolist():
        if v in seen:
            raise ValueError(f"`labels` must not repeat a class; {v!r} appears more than "
                             "once. List each class once, in scale order.")
        seen.add(v)
    if kind == "str":
        arr = np.asarray(arr, dtype=object)
    return arr, kind


def declared_scale(named_cols) -> tuple[np.ndarray, str] | None:
    """The classes and kind the ordered categoricals among ``named_cols`` (pairs of
    argument name and column) declare, or None when none is ordered.  They must
    all declare the same classes in the same order; the error names two that
    differ."""
    first = None
    for name, col in named_cols:
        if not (isinstance(col, CodesColumn) and col.ordered):
            continue
        cats = np.asarray(col.categories, dtype=object if col.kind == "str" else None)
        if first is None:
            first = name, cats, col.kind
        elif col.kind != first[2] or cats.tolist() != first[1].tolist():
            raise ValueError(
                f"`{first[0]}` and `{name}` are ordered categoricals with different "
                "categories; they must declare the same classes in the same order.")
    return None if first is None else (first[1], first[2])


def column_kind(col) -> str | None:
    """'str' or 'num'; None for a column with no value at all (every row missing)."""
    if isinstance(col, CodesColumn):
        return col.kind if len(col.categories) else None
    if isinstance(col, FloatColumn) and len(col.values) and np.isnan(col.values).all():
        return None
    return "num"


# --------------------------------------------------------------------------- classes


def _int_observed(values: list[np.ndarray], ignore_index) -> np.ndarray:
    """Sorted distinct values of integer arrays (ignore_index excluded)."""
    kern = counting_kernels()
    lo = hi = None
    for v in values:
        if len(v):
            a, b = minmax(v)
            lo = a if lo is None else min(lo, a)
            hi = b if hi is None else max(hi, b)
    if lo is None:
        return np.empty(0, dtype=np.int64)
    if hi - lo < LUT_RANGE_MAX:
        present = np.zeros(hi - lo + 1, dtype=bool)
        for v in values:
            if len(v):
                present |= kern._histogram(v, lo, hi - lo + 1) > 0
        obs = np.flatnonzero(present).astype(np.int64) + lo
    else:
        obs = np.unique(np.concatenate([np.unique(v) for v in values]))
    if ignore_index is not None:
        obs = obs[obs != ignore_index]
    return obs


def observed_values(cols, ignore_index, kind: str) -> np.ndarray:
    """Sorted union of the values the columns hold (the scikit-learn rule)."""
    ints: list[np.ndarray] = []
    others: list[np.ndarray] = []
    for col in cols:
        if isinstance(col, IntColumn):
            ints.append(col.values)
        elif isinstance(col, FloatColumn):
            v = col.values[~np.isnan(col.values)]
            others.append(np.unique(v))
        elif isinstance(col, CodesColumn):
            if len(col.categories) == 0:
                continue
            # presence by counting (O(N)), not np.unique (a sort)
            used = np.flatnonzero(np.bincount(np.asarray(col.codes, dtype=np.int64) + 1,
                                              minlength=len(col.categories) + 1)[1:])
            others.append(np.asarray(col.categories)[used])
    pieces = []
    if ints:
        pieces.append(_int_observed(ints, ignore_index))
    if kind == "str":
        vals = set()
        for o in others:
            vals.update(o.tolist())
        if ignore_index is not None:
            vals.discard(ignore_index)
        return np.asarray(sorted(vals), dtype=object)
    for o in others:
        o = np.asarray(o, dtype=np.float64) if o.dtype == object else o
        if ignore_index is not None:
            o = o[o != ignore_index]
        if o.dtype.kind == "f" and np.array_equal(o, np.round(o)) and (
                o.size == 0 or float(np.abs(o).max()) < 2**63):
            o = o.astype(np.int64)  # whole floats join integers as integers: exact
        pieces.append(o)
    if not pieces:
        return np.empty(0, dtype=np.int64)
    if all(p_.dtype.kind in "iu" for p_ in pieces):
        # integers never pass through float64 (it merges neighbours beyond 2**53)
        return np.unique(np.concatenate([p_.astype(np.int64, copy=False) for p_ in pieces]))
    return np.unique(np.concatenate([np.asarray(p_, dtype=np.float64) for p_ in pieces]))


# --------------------------------------------------------------------------- sides


def side_for(col, classes: np.ndarray, kind: str, ignore_index, name: str) -> Side:
    """Build the LUT that maps a column's values to class slots."""
    k = len(classes)
    inv, ign, mis = k, k + 1, k + 2
    if isinstance(col, FloatColumn):
        whole = np.asarray(classes).dtype.kind != "f"
        return side_for(float_codes(col, name, whole, ignore_index), classes, kind,
                         ignore_index, name)
    if isinstance(col, IntColumn):
        if kind == "str":
            raise ValueError(
                f"`{name}` holds numbers but the classes are strings; labels on both sides "
                "(and in `labels=`) must be of one kind.")
        cls = np.asarray(classes)
        if cls.dtype.kind == "f":
            whole = np.array_equal(cls, np.round(cls)) and (
                cls.size == 0 or float(np.abs(cls).max()) < 2**62)
            if not whole:
                # non-integral (or beyond int64) classes cannot index a LUT
                cls = None
        if cls is not None and len(cls):
            cls = cls.astype(np.int64)
            lo, hi = int(cls.min()), int(cls.max())
            if ignore_index is not None and _is_int(ignore_index):
                lo, hi = min(lo, int(ignore_index)), max(hi, int(ignore_index))
            if hi - lo < LUT_RANGE_MAX and -(2**62) < lo and hi < 2**62:
                slots = np.full(hi - lo + 1, inv, dtype=np.int32)
                slots[cls - lo] = np.arange(k, dtype=np.int32)
                if ignore_index is not None and _is_int(ignore_index):
                    slots[int(ignore_index) - lo] = ign
                off, lut = int_lut(lo, hi, slots, inv)
                return Side(col.values, off, lut, col)
        # a range too wide for a LUT: encode through unique values (rare)
        uniq, inverse = np.unique(col.values, return_inverse=True)
        return side_for(CodesColumn(inverse.astype(np.int64), uniq, kind="num"), classes,
                         kind, ignore_index, name)
    if isinstance(col, CodesColumn):
        if col.kind != kind and len(col.categories):
            raise ValueError(
                f"`{name}` holds {'strings' if col.kind == 'str' else 'numbers'} but the "
                f"classes are {'strings' if kind == 'str' else 'numbers'}; labels on both "
                "sides (and in `labels=`) must be of one kind.")
        index = {c: i for i, c in enumerate(classes.tolist())}
        cats = col.categories.tolist()
        slots = np.empty(len(cats) + 1, dtype=np.int32)
        slots[0] = mis  # code -1
        for j, c in enumerate(cats):
            if ignore_index is not None and c == ignore_index:
                slots[j + 1] = ign
            else:
                slots[j + 1] = index.get(c, inv)
        off, lut = int_lut(-1, len(cats) - 1, slots, inv)
        return Side(col.codes, off, lut, col)
    raise AssertionError(type(col))


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _prediction_indices(col, thresholds, name: str) -> np.ndarray:
    """Class indices 0..K-1 from (n, K) scores (argmax) or from cut points.

    Missing scores (NaN) give -1.
    """
    if isinstance(col, MatrixColumn):
        if thresholds is not None:
            raise ValueError(
                f"`thresholds` cut 1-D scores into classes; `{name}` is 2-D "
                f"(shape {col.values.shape}), which is scored by argmax instead.")
        m = col.values
        if m.shape[1] == 0:
            raise ValueError(
                f"`{name}` has shape {m.shape}: (n, K) probabilities/logits need at least "
                "one column.")
        if m.dtype.kind == "f" and np.isnan(m).any():
            rows = int(np.isnan(m).any(axis=1).sum())
            raise ValueError(
                f"`{name}` holds NaN inside {rows_text(rows)} of probabilities/logits; every "
                "row needs K finite scores (nan_policy does not apply inside a row).")
        return np.argmax(m, axis=1).astype(np.int32)
    th = check_thresholds(thresholds)
    if isinstance(col, CodesColumn):
        if col.kind == "str":
            raise ValueError(f"`thresholds` need numeric scores; `{name}` holds strings.")
        scores = np.where(col.codes >= 0, np.asarray(col.categories, dtype=np.float64)[
            np.maximum(col.codes, 0)] if len(col.categories) else np.nan, np.nan)
    else:
        scores = np.asarray(col.values, dtype=np.float64)
    if np.isinf(scores).any():
        raise ValueError(f"`{name}` holds inf scores; scores must be finite or NaN.")
    idx = np.searchsorted(th, scores, side="right").astype(np.int32)
    nan = np.isnan(scores)
    if nan.any():
        idx[nan] = -1
    return idx


def _missing(col) -> np.ndarray | None:
    """Rows whose value is missing (NaN/None), or None when none is."""
    if isinstance(col, CodesColumn):
        m = np.asarray(col.codes) < 0
    elif isinstance(col, FloatColumn):
        m = np.isnan(col.values)
    elif isinstance(col, MatrixColumn) and col.values.dtype.kind == "f":
        m = np.isnan(col.values).any(axis=1)
    else:
        return None
    return m if m.any() else None


def _ignored(col, ignore_index) -> np.ndarray | None:
    """Rows whose value equals ``ignore_index``, or None."""
    if ignore_index is None:
        return None
    if isinstance(col, CodesColumn):
        cats = np.asarray(col.categories)
        hit = np.flatnonzero(np.array([c == ignore_index for c in cats.tolist()], dtype=bool))
        return np.isin(np.asarray(col.codes), hit)
    if isinstance(col, (IntColumn, FloatColumn)):
        return np.asarray(col.values == ignore_index)
    return None


def _raise_missing(tcol, pcol, names, ignore_index) -> None:
    """The missing-value error of :meth:`EncodedPair._validate_slots`, for columns
    whose every row is missing or ignored (no table is counted for them): a row
    ignored on either side is dropped before a missing value counts."""
    n = column_length(tcol)
    kept = np.ones(n, dtype=bool)
    for col in (tcol, pcol):
        ign = _ignored(col, ignore_index)
        if ign is not None:
            kept &= ~ign
    masks = []
    for name, col in zip(names, (tcol, pcol), strict=True):
        m = _missing(col)
        masks.append((name, None if m is None or not (m & kept).any() else m & kept))
    which = [name for name, m in masks if m is not None]
    if not which:
        return
    any_missing = np.zeros(n, dtype=bool)
    for _, m in masks:
        if m is not None:
            any_missing |= m
    raise ValueError(missing_message(int(any_missing.sum()), which))


def column_length(col) -> int:
    if isinstance(col, CodesColumn):
        return len(col.codes)
    return len(col.values)


# --------------------------------------------------------------------------- entry


def encode_pair(y_true, y_pred, *, labels=None, n_classes=None, sample_weight=None,
                frequency_weight=None, ignore_index=None, nan_policy="raise",
                thresholds=None, weights=None, names=("y_true", "y_pred"),
                defer_count: bool = False, stream: bool = False) -> EncodedPair:
    """Validate a pair of label vectors and fix their classes.

    See the module docstring; every public function with the input keywords
    calls this once and works from the returned :class:`EncodedPair`.
    ``stream``: one batch of a stream, whose sample weights may all be zero
    (the accumulator checks the total when it scores).
    ``frequency_weight`` rows with a zero count must have been dropped first
    (:func:`frequency_rows`): a row with count 0 is no row, not even a class.
    """
    check_nan_policy(nan_policy)
    t_name, p_name = names
    tcol = as_column(y_true, t_name)
    pcol = as_column(y_pred, p_name)
    if isinstance(tcol, MatrixColumn):
        raise ValueError(
            f"`{t_name}` must be 1-D class labels; got a 2-D array of shape "
            f"{tcol.values.shape}.")
    n = column_length(tcol)
    if column_length(pcol) != n:
        raise ValueError(
            f"`{t_name}` and `{p_name}` must have the same length; got {n} and "
            f"{column_length(pcol)}.")
    if n == 0:
        raise ValueError(f"`{t_name}` and `{p_name}` are empty; kappa needs at least one row.")
    sw, fw, ignore_index = check_row_keywords(
        n, sample_weight=sample_weight, frequency_weight=frequency_weight,
        ignore_index=ignore_index, nan_policy=nan_policy, stream=stream)
    if labels is None and n_classes is None and thresholds is not None:
        from .._threshold_cuts import fitted_labels

        labels = fitted_labels(thresholds)  # fitted cuts name their classes
    declared, kind = check_labels(labels, n_classes)
    if declared is None:
        scale = declared_scale([(t_name, tcol), (p_name, pcol)])
        if scale is not None:
            declared, kind = scale
    check_ignore_undeclared(ignore_index, declared)  # an ordered Categorical declares too
    scored_pred = isinstance(pcol, MatrixColumn) or thresholds is not None
    # whole-number floats (pandas' integers with a null) take the integer paths
    tcol = whole_float_column(tcol)
    if not scored_pred:
        pcol = whole_float_column(pcol)
    compressible = False
    known = kind is not None  # declared, or seen in a value (not all missing)
    if kind is None:
        # scored predictions (argmax, thresholds) are class *indices*: y_true's
        # classes, strings included, name them
        kinds = {column_kind(tcol)} | (set() if scored_pred else {column_kind(pcol)})
        kinds.discard(None)
        if len(kinds) > 1:
            raise ValueError(
                f"`{t_name}` holds {'strings' if column_kind(tcol) == 'str' else 'numbers'}"
                f" but `{p_name}` holds "
                f"{'strings' if column_kind(pcol) == 'str' else 'numbers'}; both must be "
                "of one kind.")
        known = bool(kinds)
        kind = kinds.pop() if kinds else "num"
    check_marker_kind("ignore_index", ignore_index, kind if known else None, "labels",
                      "drop no row")
    if declared is None and kind == "num":
        for col, name in ((tcol, t_name), (pcol, p_name)):
            if isinstance(col, FloatColumn) and not (scored_pred and col is pcol):
                float_codes(col, name, ignore_index=ignore_index)  # non-integral floats
    ordered = declared is not None or kind == "num"
    if not _weights.is_unweighted(weights) and not ordered:
        _weights.is_named(weights)  # unknown strings first
        raise ValueError(
            "weighted kappa needs ordered classes, but the labels are strings with no "
            "declared order (alphabetical order would give a meaningless number). Pass "
            "`labels=[...]` in scale order, or use an ordered pandas Categorical.")
    if scored_pred:
        idx = _prediction_indices(pcol, thresholds, p_name)
        k_pred = pcol.values.shape[1] if isinstance(pcol, MatrixColumn) else len(
            np.atleast_1d(thresholds)) + 1
        if declared is None:
            declared = observed_values([tcol], ignore_index, kind)
            source = f"the sorted classes observed in `{t_name}`"
        else:
            source = "the declared classes"
        if len(declared) != k_pred:
            what = (f"{k_pred} columns" if isinstance(pcol, MatrixColumn)
                    else f"{k_pred - 1} cut points ({k_pred} classes)")
            raise ValueError(
                f"`{p_name}` has {what} but {source} number {len(declared)}; class index "
                f"i is the i-th class, so declare the classes with `labels=` or "
                "`n_classes=`.")
        classes = np.asarray(declared)
        # class indices into the classes fixed above: the scores declare no scale
        pcol = CodesColumn(idx, classes, kind=kind)
    elif declared is None:
        classes = None
        if isinstance(tcol, IntColumn) and isinstance(pcol, IntColumn):
            lo_t, hi_t = minmax(tcol.values)
            lo_p, hi_p = minmax(pcol.values)
            lo, hi = min(lo_t, lo_p), max(hi_t, hi_p)
            if hi - lo < DIRECT_RANGE_MAX:
                # count over the whole value range, then keep the observed classes
                classes = np.arange(lo, hi + 1, dtype=np.int64)
                compressible = True
        if classes is None:
            classes = observed_values([tcol, pcol], ignore_index, kind)
            # a value seen only in rows that are dropped (the other side missing or
            # ignored) is no class: trim to the kept rows, as filtering first would
            compressible = ignore_index is not None or nan_policy == "omit"
    else:
        classes = np.asarray(declared)
    if len(classes) == 0:
        if nan_policy == "raise":  # missing values are an error before anything else
            _raise_missing(tcol, pcol, names, ignore_index)
        raise NoClassLeftError(
            "no class left to score: every row is missing or equals `ignore_index`.")
    if len(classes) > MAX_CLASSES:
        raise ValueError(
            f"{len(classes)} distinct labels is more than the {MAX_CLASSES} classes a "
            "confusion matrix supports here; are these really class labels?")
    if kind == "str":
        classes = np.asarray(classes, dtype=object)
    # named weights are built on first use; a custom matrix is checked now (against
    # the final classes when these are provisional)
    wmat = None
    if not _weights.is_named(weights) and not compressible:
        wmat = _weights.weight_matrix(len(classes), weights)
    tside = side_for(tcol, classes, kind, ignore_index, t_name)
    pside = side_for(pcol, classes, kind, ignore_index, p_name)
    enc = EncodedPair(
        classes=classes, _wmat=wmat, weights_spec=weights, sample_weight=sw, n_input=n,
        frequency_weight=fw,
        t=tside, p=pside, nan_policy=nan_policy, names=(t_name, p_name),
        compressible=compressible, has_ignore=ignore_index is not None, stream=stream)
    if compressible and not defer_count:
        enc._count()  # fixes the classes now, so callers never see provisional ones
        enc.finish_classes()
    return enc


def contiguous_int_classes(enc: EncodedPair) -> int | None:
    """First class value when the classes are consecutive integers, else None."""
    c = enc.classes
    if c.dtype.kind not in "iu" or len(c) == 0:
        return None
    if c[-1] - c[0] == len(c) - 1 and np.all(np.diff(c) == 1):
        return int(c[0])
    return None
