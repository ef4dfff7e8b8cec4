"""Encode many-rater data (wide, long or counts) into one table.

Every many-rater entry point calls :func:`encode_ratings` once.  It fixes the
classes by the two-rater rules (``labels``, ``n_classes``, the sorted union of
observed values, an ordered Categorical), maps every rating to a class index
(``-1`` for a missing rating) and counts the item x class table ``r_ik`` in
one pass of a numba kernel.  A wide NumPy array of whole numbers with few
possible rating rows is instead grouped by rating row (:class:`Patterns`):
one key per item, the tables built only if asked for.  Items without any
rating carry no information about agreement: they are left out of the table
and counted in ``n_unrated`` (reported, never silently dropped).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._core.columns import CodesColumn, FloatColumn, MatrixColumn, as_column
from ._core.config import DENSE_PER_ROW, MAX_CLASSES, PARALLEL_MIN_RATINGS, PATTERN_MAX_KEYS
from ._core.dispatch import n_chunks_for
from ._core.dispatch import raters_kernels as _kernels
from ._core.encode import (
    check_labels as _check_labels,
)
from ._core.encode import (
    column_kind as _column_kind,
)
from ._core.encode import (
    observed_values as _observed_values,
)
from ._core.encode import (
    side_for as _side_for,
)
from ._core.encoding import float_codes as _float_codes
from ._core.options import check_marker_kind, check_marker_undeclared, is_marker
from ._core.stand_ins import ColdStandIn


@dataclass(frozen=True, eq=False)
class Patterns:
    """Items of a wide panel grouped by their rating row ("pattern").

    Attributes
    ----------
    keys : int32 ndarray (n_input,)
        Pattern key of each item (mixed radix of class code + 1 over the raters).
    rank : ndarray (n_keys,)
        Pattern index of each key (-1: key unused).
    codes : int32 ndarray (T, R)
        The distinct rating rows (-1: missing).
    counts : int32 ndarray (T, K)
        ``r_ik`` of each pattern.
    n : int64 ndarray (T,)
        Items with each pattern.
    """

    keys: np.ndarray
    rank: np.ndarray
    codes: np.ndarray
    counts: np.ndarray
    n: np.ndarray

    def of_item(self) -> np.ndarray:
        """Pattern index of every item (one gather over the items)."""
        return self.rank[self.keys]


class RatingsTable:
    """Validated many-rater data with fixed classes.

    Attributes
    ----------
    classes : ndarray
        The K classes in scale order.
    ordered : bool
        True when the classes have a meaningful order (numbers, ``labels=``,
        ``n_classes=`` or an ordered Categorical).
    counts : integer ndarray (n_input, K)
        ``r_ik`` of every input item (all zero for an item with no rating).
    codes : int32 ndarray (n_input, R) or None
        Class index of each (item, rater), -1 when missing; None for
        ``counts=`` input (anonymous raters) and for sparse long-format
        panels (many raters, each on few items).
    rated : ndarray of bool (n_input,) or None
        Which input items have a rating (None when all have).
    n_input : int
        Items in the input.
    raters : list
        Rater names (column names, long-format ids or positions).
    rater_counts : int64 ndarray (R,) or None
        Ratings given by each rater.
    n_pairable : int or None
        Items with at least two ratings (None: count them from ``counts``).
    row_item : int64 ndarray (n_rows,) or None
        Long format: the item of each input row (items numbered in sorted
        id order), so per-row options such as clusters can be mapped.
    patterns : Patterns or None
        Wide numeric input encoded in one pass: items grouped by rating row.
        ``counts``, ``codes`` and ``rated`` are then built from it only when
        asked for (the coefficients and their intervals never need them).
    """

    def __init__(self, classes: np.ndarray, ordered: bool, counts: np.ndarray | None = None,
                 codes: np.ndarray | None = None, rated: np.ndarray | None = None,
                 n_input: int = 0, raters: list | None = None,
                 rater_counts: np.ndarray | None = None, row_item: np.ndarray | None = None,
                 n_pairable: int | None = None, patterns: Patterns | None = None,
                 n_unrated: int | None = None):
        self.classes = classes
        self.ordered = ordered
        self._counts = counts
        self._codes = codes
        self._rated = rated
        self.n_input = n_input
        self.raters = list(raters) if raters is not None else []
        self.rater_counts = rater_counts
        self.row_item = row_item
        self.n_pairable = n_pairable
        self.patterns = patterns
        self._n_unrated = n_unrated

    @property
    def counts(self) -> np.ndarray:
        if self._counts is None:
            self._counts = self.patterns.counts[self.patterns.of_item()]
        return self._counts

    @property
    def codes(self) -> np.ndarray | None:
        if self._codes is None and self.patterns is not None:
            self._codes = self.patterns.codes[self.patterns.of_item()]
        return self._codes

    @property
    def has_codes(self) -> bool:
        """Whether the rater of each rating is known (without building ``codes``)."""
        return self._codes is not None or self.patterns is not None

    @property
    def rated(self) -> np.ndarray | None:
        if self._rated is None and self.patterns is not None and self._n_unrated:
            self._rated = self.patterns.keys != 0  # key 0: no rating at all
        return self._rated

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def n_items(self) -> int:
        """Items with at least one rating (the ones scored)."""
        return self.n_input - self.n_unrated

    @property
    def n_unrated(self) -> int:
        if self._n_unrated is None:
            rated = self.rated
            self._n_unrated = 0 if rated is None else self.n_input - int(
                np.count_nonzero(rated))
        return self._n_unrated

    @property
    def numeric(self) -> bool:
        return self.classes.dtype.kind in "iuf"


def _chunks(n_ratings: int) -> int:
    """Fixed number of row blocks (depends on the size only, never on threads)."""
    return 1 if n_ratings < PARALLEL_MIN_RATINGS else n_chunks_for(n_ratings)


# --------------------------------------------------------------------------- columns


def _wide_columns(ratings) -> tuple[list, list]:
    """Split wide ratings into one column per rater (and the rater names)."""
    mod = type(ratings).__module__.split(".")[0]
    if mod == "pandas" and hasattr(ratings, "columns"):
        return ([as_column(ratings.iloc[:, j], f"ratings[:, {j}]")
                 for j in range(ratings.shape[1])], list(ratings.columns))
    if mod == "polars" and hasattr(ratings, "columns"):
        return ([as_column(ratings.to_series(j), f"ratings[:, {j}]")
                 for j in range(ratings.width)], list(ratings.columns))
    if mod == "pyarrow" and hasattr(ratings, "column_names"):
        return ([as_column(ratings.column(j), f"ratings[:, {j}]")
                 for j in range(ratings.num_columns)], list(ratings.column_names))
    if isinstance(ratings, np.ndarray):
        arr = ratings
    elif isinstance(ratings, (list, tuple)):
        arr = np.asarray(ratings)
        if arr.dtype.kind in "US" or arr.dtype == object:
            arr = np.asarray(ratings, dtype=object)
    else:
        arr = np.asarray(ratings)
    if arr.ndim != 2:
        raise ValueError(
            f"`ratings` must be 2-D, one row per item and one column per rater; got shape "
            f"{arr.shape}. For long-format data pass `item=`, `rater=` and `label=`; for "
            "per-class counts pass `counts=`.")
    return [as_column(arr[:, j], f"ratings[:, {j}]") for j in range(arr.shape[1])], \
        list(range(arr.shape[1]))


def _length(col) -> int:
    return len(col.codes) if isinstance(col, CodesColumn) else len(col.values)


def missing_marker(missing):
    """``missing=`` as a label value, or None: NaN and ``pd.NA`` say "missing" as
    None does (missing values are missing already), not a label to match."""
    if missing is None or type(missing).__name__ == "NAType":
        return None
    if not (np.isscalar(missing) and not isinstance(missing, bytes)):
        raise ValueError("`missing` must be a single label value (e.g. -1 or '').")
    if isinstance(missing, (float, np.floating)):
        if missing != missing:
            return None
        if float(missing).is_integer():
            return int(missing)
    return missing


def check_missing_undeclared(missing, declared) -> None:
    """A ``missing`` marker among the declared classes: that class could never
    be counted."""
    check_marker_undeclared(
        "missing", missing, declared,
        "that class could never be counted (its ratings would all be dropped as "
        "missing); mark missing ratings with a value outside the scale, or with NaN/None.")


def check_missing_kind(missing, kind: str | None) -> None:
    """A ``missing`` marker of the other kind than the ratings is an error (its
    cells would count as a class)."""
    check_marker_kind("missing", missing, kind, "ratings", "mark no rating as missing")


def _classes(cols, labels, n_classes, missing, weighted, names) -> tuple[np.ndarray, str, bool]:
    """The classes (two-rater rules), their kind ('num'/'str') and whether ordered."""
    declared, kind = _check_labels(labels, n_classes)
    for col, name in zip(cols, names, strict=True):
        if isinstance(col, CodesColumn) and col.ordered and labels is None and (
                n_classes is None):
            cats = np.asarray(col.categories)
            if missing is not None:  # the marker is no class, listed or not
                cats = cats[np.asarray([not is_marker(c, missing) for c in cats.tolist()],
                                       dtype=bool)]
            if declared is None:
                declared, kind = cats, col.kind
            elif list(cats) != list(declared):
                raise ValueError(
                    f"`{name}` is an ordered categorical with categories different from "
                    "another rater's; every rater must declare the same classes in the "
                    "same order (or pass `labels=`).")
    known = kind is not None  # declared, or seen in a value (not all missing)
    if kind is None:
        kinds = {_column_kind(c) for c in cols}
        kinds.discard(None)
        if len(kinds) > 1:
            raise ValueError(
                "the ratings mix strings and numbers across raters; labels must be all "
                "strings or all numbers (convert with .astype(str)).")
        known = bool(kinds)
        kind = kinds.pop() if kinds else "num"
    check_missing_kind(missing, kind if known else None)
    ordered = declared is not None or kind == "num"
    check_order(ordered, weighted)
    if declared is None:
        if kind == "num":
            for col, name in zip(cols, names, strict=True):
                if isinstance(col, FloatColumn):
                    whole_float_codes(col, name)  # raises for non-integral floats
        classes = _observed_values(cols, missing, kind)
    else:
        classes = np.asarray(declared)
    if len(classes) == 0:
        raise ValueError("no rating to score: every rating is missing (or equals `missing`).")
    if len(classes) > MAX_CLASSES:
        raise ValueError(
            f"{len(classes)} distinct labels is more than the {MAX_CLASSES} classes "
            "supported; are these really class labels?")
    if kind == "str":
        classes = np.asarray(classes, dtype=object)
    return classes, kind, ordered


def check_order(ordered: bool, weighted: bool) -> None:
    """Weighted agreement needs an order: numbers, ``labels=`` or an ordered Categorical."""
    if weighted and not ordered:
        raise ValueError(
            "weighted agreement (and Krippendorff's ordinal, interval and ratio levels) "
            "needs ordered classes, but the labels are strings with no declared order "
            "(alphabetical order would give a meaningless number). Pass `labels=[...]` "
            "in scale order, or use an ordered pandas Categorical.")


def whole_float_codes(col, name: str):
    """:func:`fastkappa._core.encoding.float_codes` for ratings: a non-integral float is a
    ValueError that suggests rounding (agreement functions take no `thresholds=`)."""
    try:
        return _float_codes(col, name)
    except ValueError as err:
        raise ValueError(str(err).replace(
            "labels must be whole numbers. To score continuous predictions, pass "
            "`thresholds=` cut points (see fastkappa.optimize_thresholds).",
            "classes found in the data must be whole numbers. Round or bin continuous "
            "ratings into classes first, or declare the values as classes with "
            "`labels=[...]` (e.g. half points of a scale).")) from None


def _slots(col, classes, kind, missing, name) -> np.ndarray:
    """Class index (int32) of each value; -1 for missing; ValueError for others."""
    side = _side_for(col, classes, kind, missing, name)
    k = len(classes)
    v = np.asarray(side.values)
    if v.dtype.kind == "u" and v.dtype.itemsize == 8:
        v = v.view(np.int64)
    idx = np.clip(v.astype(np.int64, copy=False) - side.off, 0, len(side.lut) - 1)
    slots = side.lut[idx]
    bad = slots == k
    if bad.any():
        src = side.source
        pos = np.flatnonzero(bad)
        vals = (np.asarray(src.categories)[np.asarray(src.codes)[pos]]
                if isinstance(src, CodesColumn) else np.asarray(src.values)[pos])
        first = vals[0].item() if isinstance(vals[0], np.generic) else vals[0]
        n_same = int(np.count_nonzero(vals == vals[0]))
        raise ValueError(
            f"`{name}` holds {first!r} ({n_same} rating{'s' if n_same != 1 else ''}), "
            "which is not one of the declared classes; declare it in `labels=` / "
            "`n_classes=`, or mark it as missing with `missing=`.")
    out = slots.astype(np.int32)
    out[slots > k] = -1  # missing (NaN/None) or equal to `missing`
    return out


def _factorize(x, name: str, as_array: bool = False) -> tuple[np.ndarray, list]:
    """Codes 0..m-1 of ids (sorted) and the ids; ValueError on missing ids.

    Integer ids in a compact range are numbered by counting (no hashing, no
    sort of the rows).  ``as_array``: integer ids come back as an int64
    array instead of a list.
    """
    if isinstance(x, np.ndarray) and x.ndim == 1 and x.dtype.kind in "iu" and len(x) and (
            x.dtype.itemsize < 8 or x.dtype.kind == "i"):
        lo, hi = int(x.min()), int(x.max())
        if hi - lo <= 4 * len(x) + 1024:
            # offsets in int64: int8/int16 ids spanning more than their type's
            # positive range would wrap around
            off = x.astype(np.int64, copy=False)
            if lo:
                off = off - lo
            present = np.bincount(off, minlength=hi - lo + 1) > 0
            ids = np.flatnonzero(present)
            if len(ids) == hi - lo + 1:
                codes = off
            else:
                remap = np.cumsum(present) - 1
                codes = remap[off]
            return codes, (ids + lo) if as_array else (ids + lo).tolist()
    arr = x
    mod = type(x).__module__.split(".")[0]
    if isinstance(x, (list, tuple)):
        arr = np.asarray(x)
        if ((arr.dtype.kind in "US" and not all(isinstance(v, str) for v in x))
                or (arr.dtype.kind == "f"
                    and all(isinstance(v, (int, np.integer)) for v in x))):
            # numbers among strings: np.asarray would turn 0 into "0", one id with
            # "0" (another chunk keeps them two); integers past int64 next to
            # negative ones: it would make them floats, merging neighbours
            arr = np.asarray(x, dtype=object)
    elif mod in ("polars", "pyarrow"):
        arr = np.asarray(x.to_numpy() if mod == "polars" else x.to_numpy(
            zero_copy_only=False))
    try:
        import pandas as pd

        codes, uniques = pd.factorize(np.asarray(arr) if mod not in ("pandas",) else arr,
                                      sort=True, use_na_sentinel=True)
        codes = np.asarray(codes, dtype=np.int64)
        uniques = np.asarray(uniques)
        if as_array and (uniques.dtype.kind == "i" or (
                uniques.dtype.kind == "u"
                and (not len(uniques) or int(uniques.max()) <= np.iinfo(np.int64).max))):
            return codes, uniques.astype(np.int64)  # uint64 ids past int64 stay Python ints
        uniques = list(uniques)
    except ImportError:  # pragma: no cover - pandas is installed in the test env
        a = np.asarray(arr)
        uniques_arr, codes = np.unique(a, return_inverse=True)
        codes, uniques = codes.astype(np.int64), list(uniques_arr)
    except TypeError:
        raise ValueError(
            f"`{name}` ids must be numbers or strings (one id per row); got values that "
            "cannot be compared or hashed.") from None
    n_missing = int(np.count_nonzero(codes < 0))
    if n_missing:
        raise ValueError(
            f"`{name}` holds {n_missing} missing ids (NaN/None); every row of long-format "
            f"data needs an id in `{name}`.")
    return codes, [u.item() if isinstance(u, np.generic) else u for u in uniques]


# --------------------------------------------------------------------------- entry


def encode_ratings(ratings=None, *, item=None, rater=None, label=None, counts=None,
                   labels=None, n_classes=None, missing=None, weighted: bool = False
                   ) -> RatingsTable:
    """Validate wide, long or counts input and return a :class:`RatingsTable`."""
    long_given = [v is not None for v in (item, rater, label)]
    n_forms = (ratings is not None) + any(long_given) + (counts is not None)
    if n_forms != 1:
        raise ValueError(
            "pass exactly one form of data: wide `ratings` (items x raters), long format "
            "`item=`, `rater=` and `label=`, or `counts=` (items x classes).")
    missing = missing_marker(missing)
    if counts is None:
        check_missing_undeclared(missing, _check_labels(labels, n_classes)[0])
    if counts is not None:
        return _from_counts(counts, labels, n_classes, weighted)
    if any(long_given):
        if not all(long_given):
            raise ValueError("long-format data needs all three of `item=`, `rater=` and "
                             "`label=` (one row per rating).")
        return _from_long(item, rater, label, labels, n_classes, missing, weighted)
    fast = _numeric_fast_path(ratings, labels, n_classes, missing)
    if fast is not None:
        return fast
    cols, raters = _wide_columns(ratings)  # 1-D columns: never a MatrixColumn
    if not cols:
        raise ValueError("`ratings` has no column; it needs one column per rater.")
    n = _length(cols[0])
    if n == 0:
        raise ValueError("`ratings` has no row; agreement needs at least one item.")
    names = [f"ratings[:, {j}]" for j in range(len(cols))]
    classes, kind, ordered = _classes(cols, labels, n_classes, missing, weighted, names)
    codes = np.empty((n, len(cols)), dtype=np.int32)
    for j, (col, name) in enumerate(zip(cols, names, strict=True)):
        codes[:, j] = _slots(col, classes, kind, missing, name)
    return _finish(codes, classes, ordered, raters)


def first_repeat(key: np.ndarray, seen: np.ndarray | None = None) -> int:
    """Position of the first entry of ``key`` that an earlier entry repeats (or that
    ``seen`` marks as known before); the caller knows there is one."""
    again = np.ones(len(key), dtype=bool)
    again[np.unique(key, return_index=True)[1]] = False
    if seen is not None:
        again |= seen
    return int(np.flatnonzero(again)[0])


def shown_id(v) -> str:
    """An item or rater id as an error message shows it (its Python value's repr)."""
    return repr(v.item() if isinstance(v, np.generic) else v)


def _from_long(item, rater, label, labels, n_classes, missing, weighted) -> RatingsTable:
    lab = as_column(label, "label")
    if isinstance(lab, MatrixColumn):
        raise ValueError("`label` must be 1-D, one label per row.")
    n = _length(lab)
    items, item_ids = _factorize(item, "item")
    rat, rater_ids = _factorize(rater, "rater")
    if len(items) != n or len(rat) != n:
        raise ValueError(
            f"`item`, `rater` and `label` must have the same length; got {len(items)}, "
            f"{len(rat)} and {n}.")
    if n == 0:
        raise ValueError("the long-format data are empty; agreement needs ratings.")
    classes, kind, ordered = _classes([lab], labels, n_classes, missing, weighted, ["label"])
    slots = _slots(lab, classes, kind, missing, "label")
    n_items, n_raters = int(items.max()) + 1, len(rater_ids)
    key = items * n_raters + rat
    dense = n_items * n_raters <= DENSE_PER_ROW * n + (1 << 22)
    if dense:
        seen = np.bincount(key, minlength=n_items * n_raters)
        dup = int(np.count_nonzero(seen > 1))
    else:
        _, cnt = np.unique(key, return_counts=True)
        dup = int(np.count_nonzero(cnt > 1))
    if dup:
        j = first_repeat(key)
        raise ValueError(
            f"{dup} (item, rater) pairs occur more than once (the first repeat is at "
            f"position {j}, counting from 0: item {shown_id(item_ids[items[j]])} with "
            f"rater {shown_id(rater_ids[rat[j]])}); each "
            "rater rates an item at most "
            "once, and a row with a missing label counts as that rater's row. Remove or "
            "aggregate the duplicate rows first.")
    if dense:
        codes = np.full((n_items, n_raters), -1, dtype=np.int32)
        codes[items, rat] = slots
        return _finish(codes, classes, ordered, rater_ids, row_item=items)
    # a sparse panel (many raters, each on few items): count without the
    # items x raters table, which would dwarf the data
    ok = slots >= 0
    k = len(classes)
    table = np.bincount(items[ok] * k + slots[ok], minlength=n_items * k).reshape(n_items, k)
    rated = table.any(axis=1)
    return RatingsTable(classes=classes, ordered=ordered, counts=table, codes=None,
                        rated=None if rated.all() else rated, n_input=n_items,
                        raters=list(rater_ids),
                        rater_counts=np.bincount(rat[ok], minlength=n_raters), row_item=items)


def _from_counts(counts, labels, n_classes, weighted) -> RatingsTable:
    c = np.asarray(counts)
    if c.ndim != 2 or c.shape[1] == 0:
        raise ValueError(
            f"`counts` must be 2-D, one row per item and one column per class; got shape "
            f"{c.shape}.")
    if c.dtype.kind not in "biuf":
        raise ValueError(f"`counts` must hold numbers; got dtype {c.dtype}.")
    if c.dtype.kind == "f" and (not np.all(np.isfinite(c)) or not np.array_equal(c, np.round(c))):
        raise ValueError("`counts` must hold whole numbers (raters per item and class).")
    if c.size and c.min() < 0:
        raise ValueError("`counts` must be non-negative (raters per item and class).")
    k = c.shape[1]
    if c.size and float(c.max()) * k >= 2.0**62:
        # int64 would wrap (uint64 or huge floats), or an item's total overflow
        raise ValueError(
            f"`counts` holds {c.max()}, too many raters for one item and class: an "
            "item's total must stay below 2**62.")
    c = c.astype(np.int64)
    if labels is None and n_classes is None:
        classes = np.arange(k, dtype=np.int64)
    else:
        classes, kind = _check_labels(labels, n_classes)
        if len(classes) != k:
            raise ValueError(
                f"`counts` has {k} columns but {len(classes)} classes are declared; pass "
                "one label per column.")
        if kind == "str":
            classes = np.asarray(classes, dtype=object)
    if c.shape[0] == 0:
        raise ValueError("`counts` has no row; agreement needs at least one item.")
    r = c.sum(axis=1)
    rated = r > 0
    return RatingsTable(classes=classes, ordered=True, counts=c, codes=None,
                        rated=None if rated.all() else rated, n_input=len(c), raters=[])


def _numeric_fast_path(ratings, labels, n_classes, missing) -> RatingsTable | None:
    """One scan and one encoding pass over a 2-D NumPy array of whole numbers.

    Returns None (the general path then decides, and raises where needed)
    for anything unusual: other containers, non-integral or non-finite
    values, a wide value range, labels that are not numbers, invalid values.
    """
    if not (isinstance(ratings, np.ndarray) and ratings.ndim == 2
            and ratings.dtype.kind in "biuf" and ratings.size and ratings.shape[1]):
        return None
    if missing is not None and not isinstance(missing, (int, float, np.integer, np.floating)):
        return None
    x = ratings.view(np.uint8) if ratings.dtype.kind == "b" else ratings
    if not x.dtype.isnative or (x.dtype.kind == "u" and x.dtype.itemsize == 8) or (
            x.dtype.kind == "f" and x.dtype.itemsize < 4):  # no float16 in the kernels
        return None
    kern = _kernels()
    n = x.shape[0]
    chunks = _chunks(x.size)
    has_missing = missing is not None
    miss = float(missing) if has_missing else 0.0
    # the range of the present values (those not NaN and not `missing`), and
    # whether each is a whole number, in one vectorised pass in memory order
    flat = x.ravel() if x.flags.c_contiguous else x.T.ravel() if x.flags.f_contiguous else (
        np.ascontiguousarray(x).ravel())
    is_float = x.dtype.kind == "f"
    # integer ratings never equal a `missing` that is not a whole int64
    scan_missing = has_missing and (is_float or (miss.is_integer() and abs(miss) < 2.0**62))
    if chunks == 1:
        parts = np.zeros((1, 3), dtype=np.int64)
        _scan_serial(flat, is_float, scan_missing, miss, parts[0])
    else:
        parts = kern._scan_values(flat, is_float, scan_missing, miss, np.int64(chunks))
    lo, hi = int(parts[:, 0].min()), int(parts[:, 1].max())
    if parts[:, 2].sum() or lo > hi:  # not whole, not finite, or nothing present
        return None
    if max(abs(lo), abs(hi)) >= _EXACT_MAX:  # the keys' float64 sums would round
        return None
    if labels is None and n_classes is None:
        if hi - lo >= 64:
            return None
        classes = np.arange(lo, hi + 1, dtype=np.int64)
    else:
        declared, kind = _check_labels(labels, n_classes)
        if kind != "num" or declared.dtype.kind not in "iu":
            return None
        classes = declared.astype(np.int64)
        lo, hi = min(lo, int(classes.min())), max(hi, int(classes.max()))
        if hi - lo >= (1 << 22):
            return None
    k = len(classes)
    space = pattern_space(k, x.shape[1], n)
    if space and hi - lo + 1 == k and np.array_equal(classes, np.arange(lo, hi + 1)):
        # the classes are every whole number from lo to hi, which bound the
        # present values: each is a class, so group the items by rating row
        return by_patterns(x, lo, classes, miss if has_missing else np.nan, space,
                           inferred=labels is None and n_classes is None)
    lut = np.full(hi - lo + 1, k, dtype=np.int32)
    lut[classes - lo] = np.arange(k, dtype=np.int32)
    if chunks == 1:
        codes = np.empty(x.shape, dtype=np.int32)
        table = np.zeros((n, k), dtype=np.int32)
        summary = (np.empty(n, dtype=np.int64), np.zeros(k, dtype=np.int64),
                   np.zeros(x.shape[1], dtype=np.int64))
        invalid = kern._encode_numeric_block(x, np.int64(lo), lut, np.int64(k), has_missing,
                                             miss, 0, n, codes, table, *summary)
    else:
        codes, table, invalid, *summary = kern._encode_numeric(
            x, np.int64(lo), lut, np.int64(k), has_missing, miss, np.int64(chunks))
    if invalid:
        return None
    if labels is None and n_classes is None:
        used = np.flatnonzero(summary[1])
        if len(used) < k:
            codes, table, classes = _drop_unused(used, codes, table, classes)
            summary = (summary[0], summary[1][used], summary[2])
    return _finish(codes, classes, True, list(range(x.shape[1])), table, summary)


#: whole numbers from this magnitude on leave the fast path: its rating-row keys
#: are sums in float64, exact below 2**53
_EXACT_MAX = 1 << 53

#: NumPy stand-ins for the serial scan and pattern-key kernels while a fresh
#: kernel cache has neither (about 0.3 s of compiling at the first many-rater
#: call; NumPy takes a few milliseconds more on 1e5 x 3 ratings), for
#: inputs below the parallel threshold, until they have run this long
_cold_scan = ColdStandIn(budget=0.5)
_cold_keys = ColdStandIn(budget=0.5)


def _scan_serial(flat: np.ndarray, is_float: bool, has_missing: bool, missing: float,
                 out: np.ndarray) -> None:
    """``_scan_float_block`` / ``_scan_int_block`` over all of ``flat`` into ``out``:
    (min, max, #bad) of the present values, in NumPy while a fresh cache has
    not compiled the kernel (the same three numbers)."""
    kern = _kernels()
    scan = kern._scan_float_block if is_float else kern._scan_int_block
    args = (flat, 0, len(flat), has_missing, missing, out)
    if not _cold_scan.wanted(scan, args, (is_float, flat.dtype)):
        scan(*args)
        return
    with _cold_scan.time.timing():
        big = 1 << 62
        if is_float:
            v = flat.astype(np.float64, copy=False)
            present = v == v
            if has_missing:
                present &= v != missing
            w = np.where(present, v, 0.0)
            iv = np.clip(w, -4.6e18, 4.6e18).astype(np.int64)  # inf stays bad
            bad = int(np.count_nonzero(iv.astype(np.float64) != w))
            iv = iv[present]
        else:
            iv = flat.astype(np.int64, copy=False)
            bad = 0
            if has_missing:
                iv = iv[iv != np.int64(missing)]
        # the kernel's running min and max start at +-2**62
        out[:] = (min(int(iv.min()), big), max(int(iv.max()), -big), bad) if len(iv) else (
            big, -big, bad)


def _pattern_keys_serial(x: np.ndarray, first: np.int64, base: np.int64, marker: float,
                         keys: np.ndarray, cnt: np.ndarray) -> None:
    """``_pattern_keys_block`` over every row of ``x``, in NumPy while a fresh
    cache has not compiled the kernel: the same float64 sums in the same
    order, so the same keys and counts."""
    kern = _kernels()
    args = (x, first, base, marker, 0, x.shape[0], keys, cnt)
    layout = "C" if x.flags.c_contiguous else "F" if x.flags.f_contiguous else "A"
    if not _cold_keys.wanted(kern._pattern_keys_block, args, (x.dtype, layout)):
        kern._pattern_keys_block(*args)
        return
    with _cold_keys.time.timing():
        shift = 1.0 - np.float64(first)
        key = np.zeros(x.shape[0])
        m = 1.0
        for g in range(x.shape[1]):
            v = x[:, g].astype(np.float64)
            key += np.where((v == v) & (v != marker), v + shift, 0.0) * m
            m *= np.float64(base)
        keys[:] = key.astype(np.int32)
        cnt += np.bincount(keys, minlength=len(cnt))


def _drop_unused(used: np.ndarray, codes: np.ndarray, counts: np.ndarray, classes: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keep the classes ``used`` (inferred from the range lo..hi, which may have gaps):
    renumber the codes (-1 stays missing) and drop the unused count columns."""
    remap = np.full(len(classes) + 1, -1, dtype=np.int32)
    remap[used] = np.arange(len(used), dtype=np.int32)
    return remap[codes], np.ascontiguousarray(counts[:, used]), classes[used]


def pattern_space(k: int, n_raters: int, n: int) -> int:
    """Number of possible rating rows, ``(k + 1) ** n_raters``, when small enough to
    count them in a dense table (at most :data:`PATTERN_MAX_KEYS`, and not far
    beyond the number of items); else 0."""
    space = (k + 1) ** n_raters
    return space if space <= min(PATTERN_MAX_KEYS, max(1 << 16, 2 * n)) else 0


def decode_patterns(keys: np.ndarray, k: int, n_raters: int) -> tuple[np.ndarray, np.ndarray]:
    """Rating rows of pattern keys (digit g = rater g's class code + 1, base k + 1):
    codes (T, R) int32 with -1 for missing, and counts (T, k) int32.  In NumPy,
    a pass per rater over the T distinct rows (no kernel to compile for them)."""
    t = len(keys)
    codes = np.empty((t, n_raters), dtype=np.int32)
    counts = np.zeros((t, k), dtype=np.int32)
    rest = np.asarray(keys, dtype=np.int64).copy()
    rows = np.arange(t)
    for g in range(n_raters):
        digit = rest % (k + 1)
        rest //= k + 1
        codes[:, g] = digit - 1
        rated = digit > 0
        counts[rows[rated], digit[rated] - 1] += 1  # one rating per row and rater
    return codes, counts


def by_patterns(x: np.ndarray, first: int, classes: np.ndarray, marker: float, space: int,
                *, inferred: bool = False, remap: np.ndarray | None = None,
                ordered: bool = True, raters: list | None = None) -> RatingsTable:
    """One pass over wide numeric ratings that groups the items by rating row.

    Every present value (not NaN, not ``marker``) is a whole number in
    ``first .. first + K - 1`` (checked by the caller); ``space`` is
    :func:`pattern_space`.  Nothing of size items x raters or items x classes
    is written: each item gets one int32 key, and the distinct rows are
    decoded from the counts of the keys.  ``inferred``: drop the classes no
    rating uses.  ``remap[c]``: the final class of value ``first + c`` (for
    provisional codes; ``remap[-1]`` must be -1).
    """
    kern = _kernels()
    n, n_raters = x.shape
    k = len(classes)
    n_ratings = x.size
    # per-block key tables stay small: fewer blocks when the key space is large.
    # Zeroing and summing a block's table costs about what counting 16 rows
    # per key does, so blocks get at least that many rows per key (2 blocks
    # at least, one per core; the counts are integers, so the split never
    # changes a result)
    chunks = 1 if n_ratings < PARALLEL_MIN_RATINGS else max(
        2, min(n_chunks_for(n_ratings), (1 << 21) // space, n // (16 * space)))
    if chunks == 1:
        keys = np.empty(n, dtype=np.int32)
        cnt = np.zeros(space, dtype=np.int64)
        _pattern_keys_serial(x, np.int64(first), np.int64(k + 1), marker, keys, cnt)
    else:
        keys, cnt = kern._pattern_keys(x, np.int64(first), np.int64(k + 1), marker,
                                       np.int64(space), np.int64(chunks))
    used = np.flatnonzero(cnt)
    per = cnt[used]
    rank = np.full(space, -1, dtype=np.int64)
    rank[used] = np.arange(len(used))
    codes, counts = decode_patterns(used, k, n_raters)
    if remap is not None:
        # final codes, and the rows in the order of their final keys, as every
        # other path lists them (the bootstrap draws types in this order)
        codes = remap[codes]
        order = np.argsort(((codes.astype(np.int64) + 1) * (k + 1) ** np.arange(n_raters))
                           .sum(axis=1), kind="stable")
        codes, used, per = codes[order], used[order], per[order]
        rank[used] = np.arange(len(used))
        provisional = np.empty(k, dtype=np.int64)  # the provisional code of each class
        provisional[remap[:k]] = np.arange(k)
        counts = np.ascontiguousarray(counts[order][:, provisional])
    per_class = per @ counts
    if inferred:  # classes are the values present: drop the gaps of the range
        kept = np.flatnonzero(per_class)
        if len(kept) < k:
            codes, counts, classes = _drop_unused(kept, codes, counts, classes)
    m = counts.sum(axis=1)
    rater_counts = per @ (codes >= 0)
    patterns = Patterns(keys=keys, rank=rank, codes=codes, counts=counts, n=per)
    return RatingsTable(classes=classes, ordered=ordered, n_input=n,
                        raters=list(range(n_raters)) if raters is None else raters,
                        rater_counts=rater_counts.astype(np.int64),
                        n_pairable=int(per[m >= 2].sum()), patterns=patterns,
                        n_unrated=int(per[m == 0].sum()))


def _finish(codes: np.ndarray, classes, ordered: bool, raters: list,
            table: np.ndarray | None = None, summary=None,
            row_item: np.ndarray | None = None) -> RatingsTable:
    kern = _kernels()
    k = len(classes)
    n = codes.shape[0]
    if table is None:
        chunks = _chunks(n * codes.shape[1])
        if chunks == 1:
            table = kern._count_item_classes_serial(codes, np.int64(k))
        else:
            table = kern._count_item_classes(codes, np.int64(k), np.int64(chunks))
    if summary is None:
        summary = kern._table_summary(codes, table)
    per_item, _, per_rater = summary
    rated = per_item > 0
    n_pairable = int(np.count_nonzero(per_item >= 2))
    return RatingsTable(classes=classes, ordered=ordered, counts=table, codes=codes,
                        rated=None if rated.all() else rated, n_input=n,
                        raters=list(raters), rater_counts=per_rater, row_item=row_item,
                        n_pairable=n_pairable)


# --------------------------------------------------------------------------- types


def distinct_rows(mat: np.ndarray, lo: int | None = None, hi: int | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of an integer matrix: (first row of each, inverse, counts).

    Rows become one int64 key when their mixed-radix code fits, else
    ``np.unique(axis=0)``.  Distinct rows come in sorted key order.  ``lo``
    and ``hi`` bound the values when the caller knows them (saves a pass).
    """
    m = np.ascontiguousarray(mat)
    n, p = m.shape
    if n == 0:
        return (np.empty(0, np.int64),) * 3
    lo = int(m.min()) if lo is None else lo
    base = (int(m.max()) if hi is None else hi) - lo + 1
    if p == 0:
        return np.zeros(1, np.int64), np.zeros(n, np.int64), np.array([n], np.int64)
    if p * np.log2(max(base, 2)) < 62:
        key = _kernels()._row_keys(m, np.int64(lo), np.int64(base))
        if base**p <= max(1 << 20, 4 * n):
            # dense key range: count keys directly (O(n)), no sort
            cnt_all, first_all = _kernels()._dense_key_counts(key, np.int64(base**p))
            used = np.flatnonzero(cnt_all)
            rank = np.zeros(len(cnt_all), dtype=np.int64)
            rank[used] = np.arange(len(used))
            inverse = rank[key]
            first, cnt = first_all[used], cnt_all[used]
        else:
            _, first, inverse, cnt = np.unique(key, return_index=True, return_inverse=True,
                                               return_counts=True)
    else:
        _, first, inverse, cnt = np.unique(m, axis=0, return_index=True, return_inverse=True,
                                           return_counts=True)
    return first.astype(np.int64), inverse.reshape(-1).astype(np.int64), cnt.astype(np.int64)


def distinct_float_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(x, axis=0, return_counts=True)`` for a float matrix without NaN.

    Rows are deduplicated by a 64-bit hash confirmed entry by entry (bytes
    after a collision) first (``np.unique(axis=0)`` sorts every row as a
    record: 7 s at 1e6 rows), then only the distinct rows are put in the same
    lexicographic order.  ``-0.0`` is written ``0.0`` first, so the
    two stay one row as before.
    """
    from ._core.units import _mix64

    rows = np.ascontiguousarray(x, dtype=np.float64)
    rows += 0.0  # in place: the caller's features, made for this
    if not len(rows) or rows.shape[1] == 0:
        return np.unique(rows, axis=0, return_counts=True)
    # one 64-bit hash per row, sorted; equal hashes are then checked entry by entry
    bits = rows.view(np.uint64)
    with np.errstate(over="ignore"):
        h = np.zeros(len(rows), dtype=np.uint64)
        for c in range(rows.shape[1]):
            h += _mix64(bits[:, c] ^ np.uint64((c + 1) * 0x9E3779B97F4A7C15 % 2**64))
            h = _mix64(h)
    by_hash = np.argsort(h, kind="stable")
    hs = h[by_hash]
    start = np.ones(len(hs), dtype=bool)
    start[1:] = hs[1:] != hs[:-1]
    first = by_hash[start]
    rep = first[np.cumsum(start) - 1]  # each row's first row of equal hash
    if all(np.array_equal(rows[by_hash, c], rows[rep, c]) for c in range(rows.shape[1])):
        cnt = np.diff(np.append(np.flatnonzero(start), len(hs)))
    else:  # a hash collision: compare the rows as bytes
        as_bytes = rows.view(np.dtype((np.void, rows.shape[1] * rows.itemsize))).ravel()
        _, first, cnt = np.unique(as_bytes, return_index=True, return_counts=True)
    uniq = rows[first]
    order = np.lexsort(uniq.T[::-1])
    return uniq[order], cnt[order]


__all__ = ["Patterns", "RatingsTable", "by_patterns", "distinct_float_rows", "distinct_rows",
           "encode_ratings", "pattern_space"]
