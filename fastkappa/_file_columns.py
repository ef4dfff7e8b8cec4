"""Label and score columns of a file's record batches, one kind per column for the whole file.

:class:`LabelConverter` turns each batch's Arrow array of a label column into
a NumPy column (numbers, or a :class:`~fastkappa._core.columns.CodesColumn` over
a dictionary), exactly: CSV words are parsed without passing through
float64, dictionary arrays (CSV, and Parquet string columns read from their
dictionary pages) are converted once per dictionary, not once per row.
:func:`score_values` does the same for continuous scores.  The readers that
produce the batches are in :mod:`fastkappa._io`.
"""

from __future__ import annotations

import decimal
import math

import numpy as np

from ._core.columns import CodesColumn, first_index_outside
from ._io import (
    INT64_MAX,
    INT64_MIN,
    MISSING_TOKENS,
    NUMBER_WORD,
    DataError,
    number_text,
    plain_strings,
)

_NUM_HINT = ("labels must be whole numbers or strings; to score continuous predictions "
             "use `fastkappa thresholds`")



class LabelConverter:
    """Turn one column's record batches into label columns, one kind for the whole file.

    The kind (numbers or strings) is fixed by the first batch; a later value
    of the other kind is an error naming its row.
    """

    #: True for an id column (groups, clusters): any number is an id, not only a
    #: whole one, and missing-value tokens are never ids
    ids = False

    def __init__(self, name: str, fmt: str, kept: frozenset = frozenset()) -> None:
        self.name = name
        self.fmt = fmt
        self.kind: str | None = None
        self.kept = kept  # missing-value tokens that are declared labels here

    def convert(self, arr, row0: int):
        """``(column, missing_mask or None)`` for one batch."""
        import pyarrow as pa

        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        arr = plain_strings(arr)
        t = arr.type
        if pa.types.is_null(t):  # a column of nulls only (no value told its type)
            n = len(arr)
            return (CodesColumn(np.full(n, -1, dtype=np.int64), np.empty(0, dtype=object),
                                kind=self.kind or "str"), np.ones(n, dtype=bool))
        missing = None
        if arr.null_count:
            missing = arrow_nulls(arr)
        if pa.types.is_dictionary(t):
            return self._from_dictionary(arr, row0, missing)
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return self._from_dictionary(arr.dictionary_encode(), row0, missing)
        if pa.types.is_boolean(t):
            vals = arrow_numpy(arr, fill=False).view(np.uint8)
            return self._numbers(vals, row0, missing)
        if pa.types.is_integer(t):
            vals = arrow_numpy(arr, fill=0)
            if vals.dtype.kind == "u" and len(vals) and vals.max() > INT64_MAX:
                i = int(np.flatnonzero(vals > INT64_MAX)[0])
                raise DataError(f"row {row0 + i}: column {self.name!r} holds "
                                f"{vals[i].item()!r}, "
                                f"{_ID_OUT_OF_RANGE if self.ids else _OUT_OF_RANGE}.")
            return self._numbers(vals, row0, missing)
        if pa.types.is_floating(t):
            vals = arrow_numpy(arr).astype(np.float64, copy=False)
            nan = np.isnan(vals)
            if missing is not None or nan.any():
                missing = nan if missing is None else (missing | nan)
                vals = np.where(missing, 0.0, vals)
            if self.ids:  # any number names a group or cluster
                self._set_kind("num", row0, 0, vals[0] if len(vals) else None)
                return vals, missing
            frac = (vals != np.floor(vals)) | (np.abs(vals) >= 2.0**63)
            if frac.any():
                i = int(np.flatnonzero(frac)[0])
                raise DataError(
                    f"row {row0 + i}: column {self.name!r} holds {vals[i].item()!r}, "
                    f"{_not_a_class(vals[i])}.")
            self._set_kind("num", row0, 0, vals[0] if len(vals) else None)
            return vals.astype(np.int64), missing
        raise DataError(
            f"column {self.name!r} has type {t}; labels must be integers, whole-number "
            "floats, booleans or strings.")

    def _numbers(self, vals, row0, missing):
        if len(vals):
            self._set_kind("num", row0, 0, vals[0])
        return vals, missing

    def _set_kind(self, kind: str, row0: int, i: int, value) -> None:
        if self.kind is None:
            self.kind = kind
        elif kind != self.kind:
            had = "numbers" if self.kind == "num" else "strings"
            what = ("an id column must hold one kind of value, as in memory (recode it, "
                    "e.g. as strings)" if self.ids
                    else "a label column must hold one kind of value")
            raise DataError(
                f"row {row0 + i}: column {self.name!r} holds {value!r}, but earlier rows "
                f"hold {had}; {what}.")

    def _from_dictionary(self, arr, row0, missing):
        import pyarrow as pa

        idx = arr.indices
        codes = arrow_numpy(idx, fill=0)
        i = first_index_outside(idx, len(arr.dictionary))
        if i is not None:  # a damaged file
            raise DataError(f"row {row0 + i}: column {self.name!r} holds dictionary index "
                            f"{idx[i].as_py()}, but its dictionary has {len(arr.dictionary)} "
                            "values; the file is damaged.")
        if idx.null_count:  # -1 marks a null (unsigned indices cannot hold it)
            if codes.dtype.kind == "u":
                codes = codes.astype(np.int64)
            codes[arrow_nulls(idx)] = -1
        dict_vals = arr.dictionary
        # a batch's dictionary order is not the file's scale: an ordered Categorical
        # written to Parquet declares its categories through the source
        # (Source.ordered_categories, passed as the classes), and a column written
        # without dictionary pages rebuilds each batch's dictionary from its values
        ordered = False
        if pa.types.is_string(dict_vals.type) or pa.types.is_large_string(dict_vals.type):
            words = dict_vals.to_pylist()
            if self.fmt == "csv":
                used = _used_codes(codes, len(words))
                codes, used, missing = _blank_tokens(words, codes, used, missing,
                                                     self.kept)
                present = len(used) > 0
            else:  # a file's own strings: nothing to parse, so no pass over the codes
                used = None
                present = len(codes) > (0 if missing is None else int(missing.sum()))
            if not present:  # every value missing: the kind is still open
                return CodesColumn(codes, np.asarray(words, dtype=object),
                                   kind=self.kind or "str"), missing
            parsed = (_parse_labels([words[j] for j in used])
                      if self.fmt == "csv" and self.kind != "str" else None)
            if parsed is not None and parsed[1] and self.ids:
                parsed = _parse_ids([words[j] for j in used])  # any number is an id
            if parsed is not None:
                nums, bad = parsed
                if bad:  # the first such row in the file
                    i, why = min((int(np.flatnonzero(codes == used[b])[0]), why)
                                 for b, why in bad)
                    raise DataError(f"row {row0 + i}: column {self.name!r} holds "
                                    f"{words[codes[i]]!r}, {why}.")
                cats = np.zeros(len(words), dtype=nums.dtype)
                cats[used] = nums
                self._set_kind("num", row0, 0, None)
                return CodesColumn(codes, cats, kind="num"), missing
            if self.kind == "num":
                # the first value in file order that is not a number
                if used is None:
                    used = _used_codes(codes, len(words))
                first = None
                for j in used:
                    if _parse_labels([words[j]]) is None:
                        i = int(np.flatnonzero(codes == j)[0])
                        first = i if first is None else min(first, i)
                self._set_kind("str", row0, first, words[codes[first]])
            self._set_kind("str", row0, 0, None)
            cats = np.asarray(words, dtype=object)
            return CodesColumn(codes, cats, ordered, kind="str"), missing
        # a dictionary of numbers (e.g. a categorical column in Parquet)
        cats = arrow_numpy(dict_vals)
        # the classes used matter only where a value may not be one (a pass over the codes)
        used = _used_codes(codes, len(cats)) if cats.dtype.kind in "fu" else None
        if cats.dtype.kind == "f" and not self.ids:
            bad = (cats != np.floor(cats)) | (np.abs(cats) >= 2.0**63)
            bad_used = used[bad[used]]
            if len(bad_used):
                i = int(np.flatnonzero(np.isin(codes, bad_used))[0])
                raise DataError(f"row {row0 + i}: column {self.name!r} holds "
                                f"{cats[codes[i]].item()!r}, {_not_a_class(cats[codes[i]])}.")
            cats = np.where(bad, 0, cats).astype(np.int64)
        elif cats.dtype.kind == "u" and len(used) and cats[used].max() > INT64_MAX:
            big = used[cats[used] > INT64_MAX]
            i = int(np.flatnonzero(np.isin(codes, big))[0])
            raise DataError(f"row {row0 + i}: column {self.name!r} holds "
                            f"{cats[codes[i]].item()!r}, "
                            f"{_ID_OUT_OF_RANGE if self.ids else _OUT_OF_RANGE}.")
        if len(codes):
            self._set_kind("num", row0, 0, None)
        return CodesColumn(codes, cats, ordered, kind="num"), missing


class IdConverter(LabelConverter):
    """:class:`LabelConverter` for a group or cluster id column (``by=``,
    ``clusters=``, ``groups=``): numbers that are not whole (``1.5``) are ids
    too, as :func:`fastkappa.kappa_by_group` takes them in memory."""

    ids = True

    def __init__(self, name: str, fmt: str) -> None:
        super().__init__(name, fmt, frozenset())


_ID_OUT_OF_RANGE = ("a whole number outside the int64 range; ids that large are not "
                    "supported (write them as text, e.g. with a letter in front)")
_ID_INEXACT = ("a number of 2**52 or more that float64 cannot hold exactly, in a block "
               "with ids that are not whole; it would be rounded onto another id (write "
               "the ids as text, e.g. with a letter in front)")


def _parse_ids(words: list[str]) -> tuple[np.ndarray, list] | None:
    """CSV words of an id column as float64 numbers, for a block where
    :func:`_parse_labels` found a number that is no class label (``2.5``);
    None when a word is not a finite number (the column holds strings).
    Whole numbers among them keep the ids of the integers they equal
    (``KeyIndex``).  An id float64 cannot hold exactly from 2**52 on (where
    it would round onto a whole number, such as an id that other blocks
    hold exactly as an integer) is an error, as is a whole number beyond
    int64."""
    values = np.zeros(len(words), dtype=np.float64)
    bad: list[tuple[int, str]] = []
    for i, w in enumerate(words):
        if not NUMBER_WORD.fullmatch(w):
            return None
        d = decimal.Decimal(number_text(w))
        if not d.is_finite():
            return None
        if d == d.to_integral_value() and not INT64_MIN <= d <= INT64_MAX:
            bad.append((i, _ID_OUT_OF_RANGE))
            continue
        values[i] = float(d)
        if abs(d) >= 2**52 and decimal.Decimal(values[i]) != d:
            bad.append((i, _ID_INEXACT))
    return values, bad


_OUT_OF_RANGE = ("which is outside the range of integer class labels (-2**63 to 2**63 - 1); "
                 "recode the column")


def _not_a_class(value) -> str:
    """Why a number is not a class label (the end of an error message)."""
    v = float(value)
    if not math.isfinite(v):
        return f"which is not a class label ({_NUM_HINT})"
    if v == math.floor(v):
        return _OUT_OF_RANGE
    return f"which is not a class label ({_NUM_HINT})"


_MISSING_SET = frozenset(MISSING_TOKENS)


def _is_missing_word(word: str) -> bool:
    """A missing-value token, with surrounding spaces, or any spelling of NaN."""
    w = word.strip()
    if w in _MISSING_SET:
        return True
    if w[-3:].lower() != "nan":
        return False
    try:
        return decimal.Decimal(w).is_nan()
    except decimal.InvalidOperation:
        return False


def _blank_tokens(words, codes, used, missing, kept=frozenset()):
    """Rows whose word is a missing token that Arrow's exact match left (``" NA"``,
    ``NAN``, or a token another column declares as a label) become missing too:
    such words never decide a column's kind.  ``kept`` tokens are labels here."""
    blank = [j for j in used if _is_missing_word(words[j]) and words[j].strip() not in kept]
    if not blank:
        return codes, used, missing
    hit = np.isin(codes, blank)
    codes = np.where(hit, -1, codes)
    missing = hit if missing is None else (missing | hit)
    return codes, np.setdiff1d(used, blank), missing


def _used_codes(codes: np.ndarray, n: int) -> np.ndarray:
    if n == 0:
        return np.empty(0, dtype=np.int64)
    seen = np.bincount(codes[codes >= 0], minlength=n) > 0 if len(codes) else np.zeros(n, bool)
    return np.flatnonzero(seen)


def _parse_labels(words: list[str]) -> tuple[np.ndarray, list[tuple[int, str]]] | None:
    """Parse CSV words of a numeric label column, exactly (never through float64).

    Returns None when a word is not a number at all (the column holds
    strings).  Otherwise ``(values, bad)``: int64 values, and ``(index,
    reason)`` of every word that is a number but not a class label (not
    whole, not finite, or outside int64).
    ``1``, ``1.0``, ``+1`` and ``1e0`` are all the class 1.
    """
    if not all(NUMBER_WORD.fullmatch(w) for w in words):
        return None  # a word, not a number (``1_0``, non-ASCII digits included)
    try:  # fast path: plain integers within range
        return np.array([int(w) for w in words], dtype=np.int64), []
    except (ValueError, OverflowError):
        pass
    values = np.zeros(len(words), dtype=np.int64)
    bad: list[tuple[int, str]] = []
    for i, w in enumerate(words):
        try:
            v = int(w)
        except ValueError:
            try:
                d = decimal.Decimal(number_text(w))
            except decimal.InvalidOperation:
                return None
            if d.is_nan():  # "nan" spellings the missing tokens do not cover ("NAN")
                return None
            if not d.is_finite() or d != d.to_integral_value():
                bad.append((i, f"which is not a class label ({_NUM_HINT})"))
                continue
            if d.adjusted() > 19:  # never build a huge int from "1e999999999"
                bad.append((i, _OUT_OF_RANGE))
                continue
            v = int(d)
        if not INT64_MIN <= v <= INT64_MAX:
            bad.append((i, _OUT_OF_RANGE))
            continue
        values[i] = v
    return values, bad


def score_values(arr, name: str, row0: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Continuous scores of one batch as float64 and the missing mask."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        try:
            arr = pc.cast(arr, pa.float64())
        except pa.ArrowInvalid:
            # missing-value tokens Arrow's exact match left (" NA", or a token that a
            # label column declares as a label) are missing here too; spaces around
            # a number are allowed, as in labels
            words = [None if w is None or _is_missing_word(w) else number_text(w)
                     for w in arr.to_pylist()]
            try:
                arr = pc.cast(pa.array(words, pa.string()), pa.float64())
            except pa.ArrowInvalid:
                for i, w in enumerate(words):
                    if w is None:
                        continue
                    try:
                        pc.cast(pa.array([w], pa.string()), pa.float64())
                    except pa.ArrowInvalid:
                        raise DataError(
                            f"row {row0 + i}: column {name!r} holds {arr[i].as_py()!r}, "
                            "which is not a number.") from None
                raise
    elif not (pa.types.is_floating(arr.type) or pa.types.is_integer(arr.type)
              or pa.types.is_decimal(arr.type)):
        raise DataError(f"column {name!r} has type {arr.type}; scores must be numbers.")
    vals = arrow_numpy(arr.cast(pa.float64()), fill=np.nan)
    missing = np.isnan(vals)
    return vals, (missing if missing.any() else None)


# --------------------------------------------------------------------------- helpers


def _arrow_dtype(t) -> np.dtype | None:
    """The NumPy dtype of a fixed-width Arrow number type (little-endian), else None."""
    import pyarrow as pa

    if pa.types.is_integer(t):
        return np.dtype(f"<{'i' if pa.types.is_signed_integer(t) else 'u'}{t.bit_width // 8}")
    if pa.types.is_floating(t):
        return np.dtype(f"<f{t.bit_width // 8}")
    return None


def _bits(buf, offset: int, n: int) -> np.ndarray:
    """Bits ``offset .. offset + n - 1`` of an Arrow bitmap (least significant first)."""
    return np.unpackbits(np.frombuffer(buf, dtype=np.uint8), count=offset + n,
                         bitorder="little")[offset:].view(np.bool_)


def arrow_numpy(arr, *, fill=None) -> np.ndarray:
    """The values of a pyarrow Array as a NumPy array, as ``to_numpy`` gives them.

    Numbers are read from the array's data buffer (no copy, read-only, as
    ``to_numpy`` gives them) and booleans from its bitmap: pyarrow's
    ``to_numpy`` imports pandas at its first call when pandas is installed,
    about 0.2 s of a fresh command-line run.  Null slots are nan (integers
    with nulls become float64), as with ``to_numpy``, or ``fill`` in the
    array's own dtype when given (numbers and booleans; ``fill_null`` builds
    a pyarrow scalar, which imports pandas too).  Booleans with nulls and no
    ``fill``, empty arrays and other types go through ``to_numpy``.
    """
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    n = len(arr)
    dt = _arrow_dtype(arr.type)
    if dt is not None and n:
        vals = np.frombuffer(arr.buffers()[1], dtype=dt, count=n,
                             offset=arr.offset * dt.itemsize)
        if not arr.null_count:
            return vals
        # as to_numpy: nan in the null slots, integers as float64 (or ``fill``)
        out = vals.astype(np.float64 if dt.kind in "iu" and fill is None else dt)
        out[arrow_nulls(arr)] = np.nan if fill is None else fill
        return out
    if pa.types.is_boolean(arr.type) and n and (fill is not None or not arr.null_count):
        out = _bits(arr.buffers()[1], arr.offset, n).copy()
        if arr.null_count:
            out[arrow_nulls(arr)] = fill
        return out
    return arr.to_numpy(zero_copy_only=False)


def arrow_nulls(arr) -> np.ndarray | None:
    """Where a pyarrow Array is null (bool), or None when nothing is (as ``is_null``)."""
    import pyarrow as pa

    if pa.types.is_dictionary(arr.type) and arr.dictionary.null_count:
        # a null in the dictionary itself: is_null resolves it per row
        mask = arr.is_null().to_numpy(zero_copy_only=False)
        return mask if mask.any() else None
    if not arr.null_count:
        return None
    validity = arr.buffers()[0]
    if validity is None:  # a null-type array: every slot is null
        return np.ones(len(arr), dtype=np.bool_)
    return ~_bits(validity, arr.offset, len(arr))


def subset(col, keep: np.ndarray):
    """Rows ``keep`` (bool mask or indices) of a converted column."""
    if isinstance(col, CodesColumn):
        return CodesColumn(col.codes[keep], col.categories, col.ordered, col.kind)
    return col[keep]


def materialize(col) -> np.ndarray:
    """The values of a converted column as a NumPy array (strings as objects)."""
    if isinstance(col, CodesColumn):
        cats = np.asarray(col.categories)
        if len(cats) == 0:
            return np.empty(len(col.codes), dtype=object if col.kind == "str" else np.int64)
        vals = cats[np.maximum(col.codes, 0)]
        return vals
    return np.asarray(col)


def first_row_outside(col, labels: np.ndarray) -> tuple[int, object] | None:
    """(index, value) of the first row whose value is not in ``labels``."""
    allowed = set(np.asarray(labels).tolist())
    if isinstance(col, CodesColumn):
        cats = np.asarray(col.categories).tolist()
        bad = np.array([c not in allowed for c in cats] + [False], dtype=bool)
        hit = np.flatnonzero(bad[col.codes])  # code -1 reads the trailing False
        if len(hit):
            return int(hit[0]), cats[col.codes[hit[0]]]
        return None
    vals = np.asarray(col)
    bad = ~np.isin(vals, np.asarray(list(allowed)))
    hit = np.flatnonzero(bad)
    if len(hit):
        return int(hit[0]), vals[hit[0]].item()
    return None
