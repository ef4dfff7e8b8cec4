"""Input validation and label encoding, in one place.

:func:`encode_pair` is the single entry through which every public function
that takes ``(y_true, y_pred)`` validates its input and fixes the classes.  It
returns an :class:`EncodedPair` that can produce the confusion matrix (one pass
over the data through the counting kernels, no O(N) temporaries for integer
input) or, for row-level work such as cluster resampling, dense class indices.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from . import _weights
from ._columns import CodesColumn, FloatColumn, IntColumn, MatrixColumn, as_column

NAN_POLICIES = ("raise", "omit")

#: rows per chunk below which kernels run serially (measured on 2 cores)
PARALLEL_MIN_ROWS = 1 << 18
#: largest value range counted directly into a (range x range) table
DIRECT_RANGE_MAX = 64
#: largest value range handled with a lookup table
LUT_RANGE_MAX = 1 << 22
#: the most classes a confusion matrix may have
MAX_CLASSES = 4096


def n_chunks_for(n: int) -> int:
    """Fixed number of blocks for ``n`` rows: depends on n only, never on threads."""
    if n < PARALLEL_MIN_ROWS:
        return 1
    return int(min(64, max(2, n // PARALLEL_MIN_ROWS)))


#: bytes the per-chunk partial tables may take beyond half the input's size
PARTIALS_SLACK = 2 << 20


def table_chunks(n: int, table_bytes: int, input_bytes: int) -> int:
    """Blocks for counting ``n`` rows into per-block tables of ``table_bytes``.

    :func:`n_chunks_for`, capped so that the partial tables together stay
    below half the input's size plus :data:`PARTIALS_SLACK` (at least one
    block): with many classes the count runs in fewer blocks (one, serially,
    at the largest K) instead of allocating chunks x K^2.  Depends on the
    data's shape only, never on the thread count.
    """
    budget = input_bytes // 2 + PARTIALS_SLACK
    return int(max(1, min(n_chunks_for(n), budget // max(table_bytes, 1))))


def sum_partials(parts: np.ndarray, *shape: int) -> np.ndarray:
    """Sum of per-chunk partial tables ``parts`` (chunks, size) in chunk order (so
    float sums never depend on the thread count), reshaped to ``shape``; no copy
    for one chunk."""
    if len(parts) == 1:
        return parts[0].reshape(shape)
    return parts.sum(axis=0).reshape(shape)


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


def _kernels():
    from ._kernels import counting

    return counting


_thread = threading.local()
#: kernels with integer results only: one block or many give the same answer
_EXACT_KERNELS = frozenset({"_accumulate_confusion", "_accumulate_confusion_counted",
                            "_accumulate_group_confusion",
                            "_accumulate_quadratic_sums", "_minmax"})


def use_serial_kernels() -> None:
    """Make later :func:`chunked` calls on this thread run the serial twin.

    For worker threads that each count their own share of the rows: a
    parallel kernel started from several threads at once would only fight
    over the cores, and its idle workers would spin against the others.
    Only integer kernels follow it; the float-summing ones keep their fixed
    blocks so that their rounding never depends on the caller.
    """
    _thread.serial = True


def chunked(name: str, n: int, *args, n_chunks: int | None = None):
    """Run counting kernel ``name`` over ``n`` rows: its serial twin below the
    parallel threshold (or on a thread marked by :func:`use_serial_kernels`),
    else the parallel kernel with ``n_chunks_for(n)`` blocks (or ``n_chunks``,
    when the caller caps it).

    Both return per-chunk partials with a leading chunk axis.
    """
    kern = _kernels()
    if n_chunks is None:
        n_chunks = n_chunks_for(n)
    if n_chunks == 1 or (name in _EXACT_KERNELS and getattr(_thread, "serial", False)):
        return getattr(kern, name + "_serial")(*args)
    return getattr(kern, name)(*args, n_chunks)


def minmax(a: np.ndarray) -> tuple[int, int]:
    """(min, max) of a non-empty integer array, in one vectorised pass."""
    parts = chunked("_minmax", len(a), a)
    return int(parts[:, 0].min()), int(parts[:, 1].max())


# --------------------------------------------------------------------------- sides


@dataclass
class _Side:
    """One side of a pair ready for counting: slot = lut[clamp(v - off)]."""

    values: np.ndarray
    off: int
    lut: np.ndarray  # int32; slots 0..K-1 classes, K invalid, K+1 ignored, K+2 missing
    source: object  # the column it came from, for error messages


def _py(v):
    """A NumPy scalar as the Python value it holds, for readable messages."""
    return v.item() if isinstance(v, np.generic) else v


def _rows(n) -> str:
    n = int(n)
    return f"{n} row" if n == 1 else f"{n} rows"


def _int_lut(lo: int, hi: int, slots: np.ndarray, invalid: int) -> tuple[int, np.ndarray]:
    """LUT over values lo..hi with an invalid entry at both ends."""
    lut = np.empty(hi - lo + 3, dtype=np.int32)
    lut[0] = invalid
    lut[-1] = invalid
    lut[1:-1] = slots
    return lo - 1, lut


def _is_plain_range(lut: np.ndarray) -> bool:
    """True when ``lut`` maps its inner entries to slots 0, 1, ... and both ends
    to the invalid slot right after them, so a kernel may compute the slot as
    the clamped value and skip the table."""
    k = len(lut) - 2
    return bool(lut[0] == k and lut[-1] == k
                and np.array_equal(lut[1:-1], np.arange(k, dtype=lut.dtype)))


def _float_codes(col: FloatColumn, name: str, require_whole: bool = True,
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
            f"`{name}` holds non-integral floats (e.g. {float(bad[0])!r}, {_rows(bad.size)}); "
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
    """

    classes: np.ndarray
    weights_spec: object
    sample_weight: np.ndarray | None
    n_input: int
    t: _Side
    p: _Side
    nan_policy: str
    names: tuple[str, str]
    frequency_weight: np.ndarray | None = None
    compressible: bool = False  # classes are a provisional value range, trimmed after counting
    has_ignore: bool = False
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

    # -- counting ------------------------------------------------------------
    def _count(self) -> None:
        if self._counts is not None:
            return
        k = self.n_classes
        s = k + 3
        t, p = self.t, self.p
        n = self.n_input
        direct = _is_plain_range(t.lut) and _is_plain_range(p.lut)
        input_bytes = t.values.nbytes + p.values.nbytes
        if self.frequency_weight is not None:
            chunks = table_chunks(n, s * s * 8, input_bytes + self.frequency_weight.nbytes)
            flat = chunked("_accumulate_confusion_counted", n, t.values, t.off, t.lut,
                           p.values, p.off, p.lut, self.frequency_weight, s, direct,
                           n_chunks=chunks)
            table = sum_partials(flat, s, s)
            wtable = None
        elif self.sample_weight is None:
            chunks = table_chunks(n, s * s * 8, input_bytes)
            flat = chunked("_accumulate_confusion", n, t.values, t.off, t.lut, p.values,
                           p.off, p.lut, s, direct, n_chunks=chunks)
            table = sum_partials(flat, s, s)
            wtable = None
        else:
            chunks = table_chunks(n, 2 * s * s * 8, input_bytes + self.sample_weight.nbytes)
            wflat, flat = chunked("_accumulate_confusion_weighted", n, t.values, t.off, t.lut,
                                  p.values, p.off, p.lut, self.sample_weight, s, direct,
                                  n_chunks=chunks)
            # partial sums added in a fixed order: independent of the thread count
            wtable = sum_partials(wflat, s, s)
            table = sum_partials(flat, s, s)
        del flat
        self._check_table(table, wtable)

    def _check_table(self, table: np.ndarray, wtable: np.ndarray | None) -> None:
        k = self.n_classes
        self._validate_slots(table, k)
        core = core_table(table, k)
        if wtable is not None:
            if not wtable[:k, :k].sum() > 0:
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
            which = []
            if row_mis:
                which.append(t_name)
            if col_mis:
                which.append(p_name)
            raise ValueError(
                f"{_rows(n_missing)} hold a missing value (NaN/None) in "
                f"{' and '.join(f'`{w}`' for w in which)}; pass nan_policy='omit' to "
                "drop those rows."
            )
        if int(table[inv, :].sum()) - int(table[inv, ign]) - int(table[inv, mis]):
            self._raise_invalid(0)
        if int(table[:, inv].sum()) - int(table[ign, inv]) - int(table[mis, inv]):
            self._raise_invalid(1)
        if not table[:k, :k].any():
            raise ValueError(
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
            # kappa does not change when every weight is scaled: bring weights far
            # from 1 near it by a power of two (exact), so that the row-by-row
            # products w_ij * weight neither lose digits as subnormals nor overflow
            top = float(sw.max())
            if top > 0 and not 2.0**-500 < top < 2.0**500:
                sw = np.ldexp(sw, -int(np.frexp(top)[1]))
        direct = _is_plain_range(t.lut) and _is_plain_range(p.lut)
        r, c, obs, cats = chunked(
            "_accumulate_kappa_sums", self.n_input, t.values, t.off, t.lut, p.values, p.off,
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
        themselves (and pass the table to ``_check_table``) call this.
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
        listing = ", ".join(f"{_py(uniq[i])!r} ({_rows(counts[i])})" for i in order)
        more = f" and {len(uniq) - 5} more values" if len(uniq) > 5 else ""
        shown_classes = [_py(c) for c in self.classes[:10]]
        etc = ", ..." if len(self.classes) > 10 else ""
        raise ValueError(
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
    def _slots(self, side: _Side) -> np.ndarray:
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
            self._keep = (self._slots(self.t) < k) & (self._slots(self.p) < k)
        return self._keep

    def indices(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Dense class indices of the kept rows: ``(t_idx, p_idx, weights)``.

        Allocates O(N); meant for row-level resampling, not for scoring.
        """
        self._count()
        t = self._slots(self.t)
        p = self._slots(self.p)
        keep = self.keep()
        w = self.sample_weight
        if keep is not None:
            t, p = t[keep], p[keep]
            w = None if w is None else w[keep]
        dtype = np.int16 if self.n_classes < 2**15 else np.int32
        return t.astype(dtype), p.astype(dtype), w


# --------------------------------------------------------------------------- options


def check_nan_policy(nan_policy: str) -> str:
    if nan_policy not in NAN_POLICIES:
        raise ValueError(f"`nan_policy` must be 'raise' or 'omit'; got {nan_policy!r}.")
    return nan_policy


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


def _weight_column(x, name: str, what: str, fill: str, column=FloatColumn):
    """Per-row weights as a column: masked entries are an error, plain numeric
    arrays skip the label rules (uint64 above 2**63 is a fine weight)."""
    if isinstance(x, np.ma.MaskedArray):
        if np.ma.getmaskarray(x).any():
            raise ValueError(
                f"`{name}` is a masked array with masked entries; a {what} cannot be "
                f"missing. Fill them (e.g. .filled(0) to {fill}).")
        x = np.ma.getdata(x)
    if isinstance(x, np.ndarray) and x.dtype.kind in "biuf" and (
            x.ndim == 1 or x.shape[1:] == (1,)):
        v = x.reshape(-1)
        return column(v) if v.dtype.kind != "f" else FloatColumn(v)
    return as_column(x, name)


def check_sample_weight(sample_weight, n: int) -> np.ndarray | None:
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
    stats = chunked("_weight_stats", n, w) if n else np.zeros((1, 3))
    with np.errstate(over="ignore", invalid="ignore"):
        total = stats[:, 0].sum()
    if not np.isfinite(total) and not np.all(np.isfinite(w)):
        raise ValueError("`sample_weight` must be finite (it holds nan or inf).")
    if n and stats[:, 1].min() < 0:
        raise ValueError("`sample_weight` must be non-negative (it holds negative weights).")
    if not (n and stats[:, 2].max() > 0):
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
            "`frequency_weight` must be non-negative (it holds negative counts); a row "
            "with count 0 is dropped.")
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
    if total > MAX_EXPANDED_ROWS:
        raise ValueError(
            f"`frequency_weight` sums to {total} rows; this function expands counted rows "
            f"and supports at most {MAX_EXPANDED_ROWS} in all. Use "
            "fastkappa.kappa_ci(..., frequency_weight=...) or cohen_kappa(), which count "
            "without expanding.")
    return take_all_rows(arrays, np.repeat(np.arange(len(fw)), fw))


#: largest total count a row-by-row entry point expands (8 bytes per row and index)
MAX_EXPANDED_ROWS = 2**31


def check_class_count(k: int, what: str) -> int:
    """``k`` classes, checked against :data:`MAX_CLASSES` before anything is allocated."""
    if k > MAX_CLASSES:
        raise ValueError(
            f"`{what}` declares {k} classes, more than the {MAX_CLASSES} a confusion "
            "matrix supports here; are these really class labels?")
    return k


def _check_labels(labels, n_classes):
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
    uniq = set(arr.tolist())
    if len(uniq) != len(arr):
        raise ValueError("`labels` must not repeat a class.")
    if kind == "str":
        arr = np.asarray(arr, dtype=object)
    return arr, kind


def _column_kind(col) -> str | None:
    """'str' or 'num'; None for a column with no value at all (every row missing)."""
    if isinstance(col, CodesColumn):
        return col.kind if len(col.categories) else None
    if isinstance(col, FloatColumn) and len(col.values) and np.isnan(col.values).all():
        return None
    return "num"


# --------------------------------------------------------------------------- classes


def _int_observed(values: list[np.ndarray], ignore_index) -> np.ndarray:
    """Sorted distinct values of integer arrays (ignore_index excluded)."""
    kern = _kernels()
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


def _observed_values(cols, ignore_index, kind: str) -> np.ndarray:
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


def _side_for(col, classes: np.ndarray, kind: str, ignore_index, name: str) -> _Side:
    """Build the LUT that maps a column's values to class slots."""
    k = len(classes)
    inv, ign, mis = k, k + 1, k + 2
    if isinstance(col, FloatColumn):
        whole = np.asarray(classes).dtype.kind != "f"
        return _side_for(_float_codes(col, name, whole, ignore_index), classes, kind,
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
                off, lut = _int_lut(lo, hi, slots, inv)
                return _Side(col.values, off, lut, col)
        # a range too wide for a LUT: encode through unique values (rare)
        uniq, inverse = np.unique(col.values, return_inverse=True)
        return _side_for(CodesColumn(inverse.astype(np.int64), uniq, kind="num"), classes,
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
        off, lut = _int_lut(-1, len(cats) - 1, slots, inv)
        return _Side(col.codes, off, lut, col)
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
                f"`{name}` holds NaN inside {rows} rows of probabilities/logits; every "
                "row needs K finite scores (nan_policy does not apply inside a row).")
        return np.argmax(m, axis=1).astype(np.int32)
    try:
        th = np.asarray(thresholds, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("`thresholds` must be numbers (increasing cut points).") from None
    if th.ndim != 1 or th.size == 0:
        raise ValueError("`thresholds` must be a non-empty 1-D array of cut points.")
    if not np.all(np.isfinite(th)) or np.any(np.diff(th) <= 0):
        raise ValueError("`thresholds` must be finite and strictly increasing.")
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


def _length(col) -> int:
    if isinstance(col, CodesColumn):
        return len(col.codes)
    return len(col.values)


# --------------------------------------------------------------------------- entry


def encode_pair(y_true, y_pred, *, labels=None, n_classes=None, sample_weight=None,
                frequency_weight=None, ignore_index=None, nan_policy="raise",
                thresholds=None, weights=None, names=("y_true", "y_pred"),
                defer_count: bool = False) -> EncodedPair:
    """Validate a pair of label vectors and fix their classes.

    See the module docstring; every public function with the input keywords
    calls this once and works from the returned :class:`EncodedPair`.
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
    n = _length(tcol)
    if _length(pcol) != n:
        raise ValueError(
            f"`{t_name}` and `{p_name}` must have the same length; got {n} and "
            f"{_length(pcol)}.")
    if n == 0:
        raise ValueError(f"`{t_name}` and `{p_name}` are empty; kappa needs at least one row.")
    fw = check_frequency_weight(frequency_weight, n, sample_weight)
    sw = check_sample_weight(sample_weight, n)
    ignore_index = check_ignore_index(ignore_index)
    declared, kind = _check_labels(labels, n_classes)
    for col in (tcol, pcol):
        if isinstance(col, CodesColumn) and col.ordered and declared is None:
            declared, kind = np.asarray(col.categories), col.kind
            if kind == "str":
                declared = np.asarray(declared, dtype=object)
        elif isinstance(col, CodesColumn) and col.ordered and labels is None and (
                n_classes is None):
            if list(col.categories) != list(declared):
                raise ValueError(
                    f"`{t_name}` and `{p_name}` are ordered categoricals with different "
                    "categories; they must declare the same classes in the same order.")
    scored_pred = isinstance(pcol, MatrixColumn) or thresholds is not None
    compressible = False
    if kind is None:
        # scored predictions (argmax, thresholds) are class *indices*: y_true's
        # classes, strings included, name them
        kinds = {_column_kind(tcol)} | (set() if scored_pred else {_column_kind(pcol)})
        kinds.discard(None)
        if len(kinds) > 1:
            raise ValueError(
                f"`{t_name}` holds {'strings' if _column_kind(tcol) == 'str' else 'numbers'}"
                f" but `{p_name}` holds "
                f"{'strings' if _column_kind(pcol) == 'str' else 'numbers'}; both must be "
                "of one kind.")
        kind = kinds.pop() if kinds else "num"
    if declared is None and kind == "num":
        for col, name in ((tcol, t_name), (pcol, p_name)):
            if isinstance(col, FloatColumn) and not (scored_pred and col is pcol):
                _float_codes(col, name, ignore_index=ignore_index)  # non-integral floats
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
            declared = _observed_values([tcol], ignore_index, kind)
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
        pcol = CodesColumn(idx, classes, ordered=True, kind=kind)
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
            classes = _observed_values([tcol, pcol], ignore_index, kind)
            # a value seen only in rows that are dropped (the other side missing or
            # ignored) is no class: trim to the kept rows, as filtering first would
            compressible = ignore_index is not None or nan_policy == "omit"
    else:
        classes = np.asarray(declared)
    if len(classes) == 0:
        raise ValueError(
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
    tside = _side_for(tcol, classes, kind, ignore_index, t_name)
    pside = _side_for(pcol, classes, kind, ignore_index, p_name)
    enc = EncodedPair(
        classes=classes, _wmat=wmat, weights_spec=weights, sample_weight=sw, n_input=n,
        frequency_weight=fw,
        t=tside, p=pside, nan_policy=nan_policy, names=(t_name, p_name),
        compressible=compressible, has_ignore=ignore_index is not None)
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


# --------------------------------------------------------------------------- row ids


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
    if _length(col) != n_input:
        raise ValueError(
            f"`{name}` must have one id per row: got {_length(col)} ids for {n_input} rows.")
    if isinstance(col, FloatColumn):
        col = _float_codes(col, name, require_whole=False)
    if isinstance(col, CodesColumn):
        return np.asarray(col.codes, dtype=np.int64), np.asarray(col.categories)
    keys, codes = np.unique(col.values, return_inverse=True)
    return codes.astype(np.int64).reshape(-1), keys


def id_codes(ids, n_input: int, name: str) -> np.ndarray:
    """Codes of per-row ids, -1 for missing (see :func:`id_keys`); no sort for
    integer ids spanning a moderate range."""
    col = as_column(ids, name)
    if isinstance(col, IntColumn) and _length(col) == n_input and len(col.values):
        lo, hi = minmax(col.values)
        if hi - lo < LUT_RANGE_MAX:
            return np.asarray(col.values, dtype=np.int64) - lo
    return id_keys(col, n_input, name)[0]


def missing_id_rows(codes: np.ndarray, nan_policy: str, name: str) -> np.ndarray | None:
    """Rows to keep when some ids are missing and ``nan_policy='omit'`` (else None);
    an error naming ``nan_policy`` under ``'raise'``."""
    missing = codes < 0
    if not missing.any():
        return None
    if nan_policy != "omit":
        raise ValueError(
            f"`{name}` holds {_rows(missing.sum())} with a missing id (NaN/None/null); "
            "give every row an id, or pass nan_policy='omit' to drop those rows.")
    return ~missing


def n_rows(x, name: str) -> int:
    """Number of rows of a labels argument (no copy for arrays)."""
    return _length(as_column(x, name))


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
    return type(col)(col.values[rows])
