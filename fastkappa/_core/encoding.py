"""The encoding of a pair of label columns, and its count into a table.

An :class:`EncodedPair` (built by :func:`fastkappa._core.encode.encode_pair`)
holds each side as values plus a lookup table from value to class slot.  It
counts itself into the confusion matrix in one pass through the counting
kernels (checking, as it counts, that every value is a declared class), and can
give dense class indices for row-level work such as cluster resampling.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import weights as _weights
from .columns import CodesColumn, FloatColumn, IntColumn
from .config import LUT_RANGE_MAX, PARTIALS_SLACK
from .dispatch import chunked, kernels, sum_partials, table_chunks


class OutsideClassesError(ValueError):
    """A label outside the declared classes (a ``ValueError``; callers that read
    the classes from context, such as a stream of scores, add that context)."""


class NoClassLeftError(ValueError):
    """Every row is missing or ignored, so no value names a class (a
    ``ValueError``; a stream's batch is then empty, as one whose rows all drop)."""


class NoRowsLeftError(ValueError):
    """No labelled pair is left once missing and ignored rows are dropped (a
    ``ValueError``; a part of a larger collection is then empty)."""



def core_table(table: np.ndarray, k: int) -> np.ndarray:
    """The contiguous (k, k) top-left block of a square table the caller owns.

    Large tables are compacted in place (rows moved to the front of the same
    buffer) and a view is returned, so counting at large K holds one table,
    not two; small ones are copied.
    """
    s = table.shape[0]
    if s == k:
        return table
    if table.nbytes < (1 << 20) or not table.flags.c_contiguous:
        return np.ascontiguousarray(table[:k, :k])
    flat = table.reshape(-1)
    for i in range(k):
        # row i moves from offset i*s to i*k <= i*s: never over a row not yet moved
        flat[i * k:(i + 1) * k] = table[i, :k]
    return flat[:k * k].reshape(k, k)




@dataclass
class Side:
    """One side of a pair ready for counting: slot = lut[clamp(v - off)]."""

    values: np.ndarray
    off: int
    lut: np.ndarray  # int32; slots 0..K-1 classes, K invalid, K+1 ignored, K+2 missing
    source: object  # the column it came from, for error messages


def _py(v):
    """A NumPy scalar as the Python value it holds, for readable messages."""
    return v.item() if isinstance(v, np.generic) else v


def missing_message(n_missing: int, which: list[str]) -> str:
    """The error for rows holding a missing value under ``nan_policy='raise'``."""
    return (f"{rows_text(n_missing)} {'holds' if n_missing == 1 else 'hold'} a missing value "
            f"(NaN/None) in {' and '.join(f'`{w}`' for w in which)}; pass "
            "nan_policy='omit' to drop those rows.")


def rows_text(n) -> str:
    n = int(n)
    return f"{n} row" if n == 1 else f"{n} rows"


def int_lut(lo: int, hi: int, slots: np.ndarray, invalid: int) -> tuple[int, np.ndarray]:
    """LUT over values lo..hi with an invalid entry at both ends."""
    lut = np.empty(hi - lo + 3, dtype=np.int32)
    lut[0] = invalid
    lut[-1] = invalid
    lut[1:-1] = slots
    return lo - 1, lut


def is_plain_range(lut: np.ndarray) -> bool:
    """True when ``lut`` maps its inner entries to slots 0, 1, ... and both ends
    to the invalid slot right after them, so a kernel may compute the slot as
    the clamped value and skip the table."""
    k = len(lut) - 2
    return bool(lut[0] == k and lut[-1] == k
                and np.array_equal(lut[1:-1], np.arange(k, dtype=lut.dtype)))


def float_codes(col: FloatColumn, name: str, require_whole: bool = True,
                 ignore_index=None) -> CodesColumn:
    """Float labels as codes into their distinct values; NaN becomes code -1.

    With ``require_whole``, non-integral values are an error, except one equal
    to ``ignore_index`` (its rows are dropped, so it is no label)."""
    v = col.values
    nan = np.isnan(v)
    has_nan = bool(nan.any())
    finite_vals = v[~nan] if has_nan else v
    if finite_vals.size and not np.all(np.isfinite(finite_vals)):
        raise ValueError(f"`{name}` holds inf; labels must be finite.")
    fractional = finite_vals != np.round(finite_vals)
    all_whole = not fractional.any()
    if isinstance(ignore_index, float):
        fractional &= finite_vals != ignore_index
    if require_whole and finite_vals.size and fractional.any():
        bad = finite_vals[fractional]
        raise ValueError(
            f"`{name}` holds non-integral floats (e.g. {float(bad[0])!r}, {rows_text(bad.size)}); "
            "labels must be whole numbers. To score continuous predictions, pass "
            "`thresholds=` cut points (see fastkappa.optimize_thresholds)."
        )
    uniq, inverse = np.unique(finite_vals, return_inverse=True)
    codes = np.full(len(v), -1, dtype=np.int64)
    if has_nan:
        codes[~nan] = inverse
    else:
        codes[:] = inverse
    if require_whole and all_whole and (
            uniq.size == 0 or float(np.abs(uniq).max()) < 2**53):
        uniq = uniq.astype(np.int64)
    return CodesColumn(codes, uniq, kind="num")


def whole_float_column(col):
    """A float column of whole numbers as integer labels: :class:`IntColumn` when
    no value is NaN, else a :class:`CodesColumn` with NaN as code -1; any other
    column as it is.

    The labels, classes and messages are those :func:`float_codes` gives such a
    column, in a few O(N) passes without a sort (float labels arrive this way
    from pandas whenever an integer column holds a null).  A column holding a
    non-integral value, inf, or a magnitude of 2^53 or more, and one that is
    all NaN, are returned unchanged: the float path explains or keeps them.
    """
    if not isinstance(col, FloatColumn) or not len(col.values):
        return col
    v = col.values
    lo, hi = float(np.fmin.reduce(v)), float(np.fmax.reduce(v))  # NaN skipped; all NaN: NaN
    if not (-(2.0**53) < lo and hi < 2.0**53):
        return col
    nan = np.isnan(v)
    has_nan = bool(nan.any())
    filled = np.where(nan, lo, v) if has_nan else v  # lo occurs: the same values
    values = filled.astype(np.int64)
    if not np.array_equal(values, filled):
        return col
    if not has_nan:
        return IntColumn(values)
    ilo, span = int(lo), int(hi) - int(lo) + 1
    values -= ilo
    if span <= LUT_RANGE_MAX:
        present = np.bincount(values, minlength=span) > 0
        uniq = np.flatnonzero(present).astype(np.int64) + ilo
        codes = (np.cumsum(present) - 1)[values]
    else:
        uniq, codes = np.unique(values, return_inverse=True)
        uniq = uniq + ilo
    codes[nan] = -1
    return CodesColumn(codes.astype(np.int64, copy=False), uniq, kind="num")


# --------------------------------------------------------------------------- result


@dataclass
class EncodedPair:
    """Validated ``(y_true, y_pred)`` with their classes fixed.

    Attributes
    ----------
    classes : ndarray (K,)
        Class labels in index order.
    weights : ndarray (K, K)
        Resolved disagreement weights.
    weights_spec : None, str or ndarray
        What the user passed as ``weights``.
    sample_weight : ndarray or None
        float64 weights of the *input* rows (aligned with the input, not with
        the kept rows; see :meth:`indices`).
    frequency_weight : ndarray or None
        int64 counts of the input rows (a row with count c is c rows); the
        table is then an exact int64 count table.
    n_input : int
        Number of input rows.

    The rest of the package uses only: :meth:`counts` and :meth:`confusion`
    (the table), :attr:`counted`, :meth:`indices`, :meth:`keep` and
    :meth:`slots` (row level), :meth:`table_free` and
    :meth:`kappa_terms_without_table` (kappa without a table) and, for callers
    that count the table themselves (``encode_pair(..., defer_count=True)``),
    :meth:`check_table` then :meth:`finish_classes`.
    """

    classes: np.ndarray
    weights_spec: object
    sample_weight: np.ndarray | None
    n_input: int
    t: Side
    p: Side
    nan_policy: str
    names: tuple[str, str]
    frequency_weight: np.ndarray | None = None
    compressible: bool = False  # classes are a provisional value range, trimmed after counting
    has_ignore: bool = False
    stream: bool = False  # a stream's batch: its sample weights may all be zero
    _remap: np.ndarray | None = field(default=None, repr=False)
    _counts: np.ndarray | None = field(default=None, repr=False)
    _weighted: np.ndarray | None = field(default=None, repr=False)
    _keep: np.ndarray | None = field(default=None, repr=False)
    _wmat: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def weights(self) -> np.ndarray:
        """(K, K) disagreement weights, built on first use (a confusion matrix alone
        never allocates them: at large K they are as big as the table)."""
        if self._wmat is None or self._wmat.shape[0] != self.n_classes:
            self._wmat = _weights.weight_matrix(self.n_classes, self.weights_spec)
        return self._wmat

    @property
    def counted(self) -> bool:
        """Whether the table is counted (the classes are then final)."""
        return self._counts is not None

    # -- counting ------------------------------------------------------------
    def _count(self) -> None:
        if self._counts is not None:
            return
        k = self.n_classes
        s = k + 3
        t, p = self.t, self.p
        n = self.n_input
        direct = is_plain_range(t.lut) and is_plain_range(p.lut)
        input_bytes = t.values.nbytes + p.values.nbytes
        if self.frequency_weight is not None:
            chunks = table_chunks(n, s * s * 8, input_bytes + self.frequency_weight.nbytes)
            flat = chunked(kernels().confusion_counted, n, t.values, t.off, t.lut,
                           p.values, p.off, p.lut, self.frequency_weight, s, direct,
                           n_chunks=chunks)
            table = sum_partials(flat, s, s)
            wtable = None
        elif self.sample_weight is None:
            chunks = table_chunks(n, s * s * 8, input_bytes)
            flat = chunked(kernels().confusion, n, t.values, t.off, t.lut, p.values,
                           p.off, p.lut, s, direct, n_chunks=chunks)
            table = sum_partials(flat, s, s)
            wtable = None
        else:
            chunks = table_chunks(n, 2 * s * s * 8, input_bytes + self.sample_weight.nbytes)
            wflat, flat = chunked(kernels().confusion_weighted, n, t.values, t.off, t.lut,
                                  p.values, p.off, p.lut, self.sample_weight, s, direct,
                                  n_chunks=chunks)
            # partial sums added in a fixed order: independent of the thread count
            wtable = sum_partials(wflat, s, s)
            table = sum_partials(flat, s, s)
        del flat
        self.check_table(table, wtable)

    def check_table(self, table: np.ndarray, wtable: np.ndarray | None) -> None:
        k = self.n_classes
        self._validate_slots(table, k)
        core = core_table(table, k)
        if wtable is not None:
            if not wtable[:k, :k].sum() > 0 and not self.stream:
                raise ValueError(
                    "`sample_weight` is zero on every scored row; at least one row needs "
                    "a positive weight.")
            self._weighted = core_table(wtable, k)
        if self.compressible:
            self._compress(core)
            core = self._counts_pending
        self._counts = core

    def _validate_slots(self, table: np.ndarray, k: int) -> None:
        """Errors for missing, invalid or no rows, read from a slot table: classes
        ``0..k-1``, then the invalid, ignored and missing slots (``k`` = 1 for the
        4 x 4 tally of slot kinds the table-free path counts)."""
        inv, ign, mis = k, k + 1, k + 2
        t_name, p_name = self.names
        # a row is dropped when either side is ignored; then when either is missing.
        # Read from the slot rows and columns only: no copy of a (possibly huge) table
        row_mis = int(table[mis, :].sum()) - int(table[mis, ign])
        col_mis = int(table[:, mis].sum()) - int(table[ign, mis])
        n_missing = row_mis + col_mis - int(table[mis, mis])
        if n_missing and self.nan_policy == "raise":
            which = [name for name, n in ((t_name, row_mis), (p_name, col_mis)) if n]
            raise ValueError(missing_message(n_missing, which))
        if int(table[inv, :].sum()) - int(table[inv, ign]) - int(table[inv, mis]):
            self._raise_invalid(0)
        if int(table[:, inv].sum()) - int(table[ign, inv]) - int(table[mis, inv]):
            self._raise_invalid(1)
        if not table[:k, :k].any() and not self.stream:  # a stream's batch may drop all
            raise NoRowsLeftError(
                "no rows left to score"
                + (" after dropping ignored and missing rows" if table.any() else "")
                + "; kappa needs at least one labelled pair."
            )

    def table_free(self) -> bool:
        """True when kappa is better computed without the (K, K) table: it is not
        built yet, the classes are final, and the table would pass the memory the
        counting kernels may use (half the input plus PARTIALS_SLACK)."""
        s = self.n_classes + 3
        budget = (self.t.values.nbytes + self.p.values.nbytes) // 2 + PARTIALS_SLACK
        return self._counts is None and not self.compressible and s * s * 8 > budget

    def kappa_terms_without_table(self) -> tuple[float, float]:
        """``kappa_terms`` from K-length marginals and the weighted disagreement summed
        row by row: memory O(K), not O(K^2), at any K (the rows are validated as
        when counting a table)."""
        k = self.n_classes
        s = k + 3
        t, p = self.t, self.p
        spec = self.weights_spec
        if _weights.is_named(spec):
            wkind, wmat = {None: 0, "linear": 1, "quadratic": 2}[spec], np.zeros((1, 1))
        else:
            wkind, wmat = 3, np.ascontiguousarray(self.weights)
        sw = self.sample_weight
        if self.frequency_weight is not None:  # float sums of counts, as of the rows
            sw = self.frequency_weight.astype(np.float64)
        weighted = sw is not None
        if weighted:
            # the row-by-row products w_ij * weight neither lose digits as
            # subnormals nor overflow
            sw = _weights.scale_free(sw)
        direct = is_plain_range(t.lut) and is_plain_range(p.lut)
        r, c, obs, cats = chunked(
            kernels().kappa_sums, self.n_input, t.values, t.off, t.lut, p.values, p.off,
            p.lut, sw if weighted else np.zeros(0), weighted, wkind, wmat, s, direct)
        self._validate_slots(cats.sum(axis=0).reshape(4, 4), 1)
        r, c = r.sum(axis=0), c.sum(axis=0)
        observed = float(obs.sum())
        if weighted and not r.sum() > 0:
            raise ValueError(
                "`sample_weight` is zero on every scored row; at least one row needs "
                "a positive weight.")
        # an exact power-of-two rescale, as kappa_terms does: no overflow in r_i c_j
        shift = -int(np.frexp(max(float(r.max()), float(c.max())))[1])
        r, c = np.ldexp(r, shift), np.ldexp(c, shift)
        observed = float(np.ldexp(observed, shift))
        return float(r.sum()) * observed, _weights.expected_disagreement(
            r, c, wmat if wkind == 3 else spec)

    def finish_classes(self) -> None:
        """After counting provisional classes: weights for the final classes.

        Only callers of ``encode_pair(..., defer_count=True)`` that count
        themselves (and pass the table to :meth:`check_table`) call this.
        """
        if self._wmat is not None and self._wmat.shape[0] != self.n_classes:
            self._wmat = None  # named weights: rebuilt for the final classes on use
        if not _weights.is_named(self.weights_spec):
            self._wmat = _weights.weight_matrix(self.n_classes, self.weights_spec)

    def _compress(self, core: np.ndarray) -> None:
        """Keep only the classes observed in the scored rows (scikit-learn's rule)."""
        seen = (core.sum(axis=0) + core.sum(axis=1)) > 0
        self._counts_pending = np.ascontiguousarray(core[seen][:, seen])
        if self._weighted is not None:
            self._weighted = np.ascontiguousarray(self._weighted[seen][:, seen])
        if not seen.all():
            k = len(seen)
            remap = np.full(k + 3, 0, dtype=np.int32)
            remap[:k] = np.cumsum(seen) - 1
            m = int(seen.sum())
            remap[k:] = np.arange(m, m + 3)
            self._remap = remap
            self.classes = self.classes[seen]
        self.compressible = False

    def _raise_invalid(self, which: int) -> None:
        side = (self.t, self.p)[which]
        other = (self.p, self.t)[which]
        name = self.names[which]
        k = self.n_classes
        slots = side.lut[np.clip(side.values.astype(np.int64) - side.off, 0, len(side.lut) - 1)]
        oslots = other.lut[np.clip(other.values.astype(np.int64) - other.off, 0,
                                   len(other.lut) - 1)]
        bad = (slots == k) & (oslots != k + 1)
        if self.nan_policy == "omit":
            bad &= oslots != k + 2
        vals = side.values[bad]
        src = side.source
        if isinstance(src, CodesColumn):
            shown = src.categories[vals[vals >= 0]] if len(src.categories) else vals
        else:
            shown = vals
        uniq, counts = np.unique(np.asarray(shown), return_counts=True)
        order = np.argsort(-counts, kind="stable")[:5]
        listing = ", ".join(f"{_py(uniq[i])!r} ({rows_text(counts[i])})" for i in order)
        more = f" and {len(uniq) - 5} more values" if len(uniq) > 5 else ""
        shown_classes = [_py(c) for c in self.classes[:10]]
        etc = ", ..." if len(self.classes) > 10 else ""
        raise OutsideClassesError(
            f"`{name}` holds values outside the declared classes: {listing}{more}. "
            f"The classes are {shown_classes}{etc}; declare every class with `labels=` "
            "or `n_classes=`, or mark rows to drop with `ignore_index=`."
        )

    def counts(self) -> np.ndarray:
        """(K, K) int64 counts of the kept rows (unweighted)."""
        self._count()
        return self._counts

    def confusion(self) -> np.ndarray:
        """(K, K) confusion matrix: int64 counts, or float64 weighted sums."""
        self._count()
        return self._weighted if self._weighted is not None else self._counts

    # -- row level ------------------------------------------------------------
    def slots(self, side: Side) -> np.ndarray:
        idx = np.clip(side.values.astype(np.int64) - side.off, 0, len(side.lut) - 1)
        slots = side.lut[idx]
        return slots if self._remap is None else self._remap[slots]

    def keep(self) -> np.ndarray | None:
        """Boolean mask of the input rows that are scored, or None if all are."""
        self._count()
        fw = self.frequency_weight
        total = self.n_input if fw is None else int(fw.sum(dtype=np.uint64))
        if self._keep is None and int(self._counts.sum()) != total:
            k = self.n_classes
            self._keep = (self.slots(self.t) < k) & (self.slots(self.p) < k)
        return self._keep

    def indices(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Dense class indices of the kept rows: ``(t_idx, p_idx, weights)``.

        Allocates O(N); meant for row-level resampling, not for scoring.
        """
        self._count()
        t = self.slots(self.t)
        p = self.slots(self.p)
        keep = self.keep()
        w = self.sample_weight
        if keep is not None:
            t, p = t[keep], p[keep]
            w = None if w is None else w[keep]
        dtype = np.int16 if self.n_classes < 2**15 else np.int32
        return t.astype(dtype), p.astype(dtype), w
