"""Score files bigger than memory: CSV, Parquet and Arrow streams, read in batches.

:func:`score_file` is the engine behind ``fastkappa score``, callable from
Python.  The input is read in record batches of the columns it needs (a few
megabytes each), so memory does not grow with the number of rows: the labels
go through :class:`fastkappa.CohenKappa`, and ``by=`` / ``clusters=`` add one
sparse table per group or cluster, never the rows.  Sources:

- a path to a CSV file (plain or gzip, told apart by its first bytes; ``-``
  reads standard input) or a Parquet file (its row groups read in parallel);
- any Arrow record-batch stream: a ``pyarrow.RecordBatchReader``, a
  ``pyarrow.Table``, or any object with ``__arrow_c_stream__`` (a polars
  DataFrame, a DuckDB query result), so a query result streams in without
  a file.

:func:`agreement_file` is the same for many raters (see
:mod:`fastkappa.agreement_files`).

Label columns follow the command line's rules: a column holds numbers or
strings for the whole input, CSV missing-value tokens (``NA``, ``NaN``,
empty, ...) are missing, and a bad value is a :class:`DataError` naming its
row.
"""

from __future__ import annotations

import contextlib
import copy
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._core.config import MAX_CLASSES
from ._core.dispatch import use_serial_kernels
from ._core.options import check_ignore_undeclared, check_nan_policy
from ._core.stand_ins import ColdStandIn
from ._core.weights import is_unweighted as _unweighted
from ._file_columns import (
    IdConverter,
    LabelConverter,
    first_row_outside,
    materialize,
    score_values,
    subset,
)
from ._filecount import UnitTables as _UnitTables
from ._filecount import score_groups as _score_groups
from ._io import (
    DataError,
    as_column_label,
    as_file_labels,
    as_source,
    iter_batches,
    progress_bar,
    wait_all,
)
from .agreement_files import agreement_file

__all__ = ["DataError", "agreement_file", "score_file"]


def score_file(
    source: Any,
    *,
    true: str,
    pred: str,
    weights: str | None = None,
    labels: Any = None,
    n_classes: int | None = None,
    by: str | None = None,
    clusters: str | None = None,
    method: str | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    seed: Any = None,
    nan_policy: str = "raise",
    sep: str | None = None,
    progress: bool = False,
    sample_weight: str | None = None,
    frequency_weight: str | None = None,
    ignore_index: Any = None,
):
    """Cohen's kappa of two label columns of a file or Arrow stream, in bounded memory.

    Parameters
    ----------
    source : str, os.PathLike or Arrow stream
        A CSV (plain or gzip) or Parquet file (``"-"`` reads standard input),
        or a ``pyarrow.RecordBatchReader``, ``pyarrow.Table`` or any object
        with ``__arrow_c_stream__`` (a polars DataFrame, a DuckDB result).
    true, pred : str
        The columns of reference labels and of predictions.
    weights : {None, 'linear', 'quadratic'}, default None
        Disagreement weights (``'quadratic'`` gives QWK).
    labels : sequence, optional
        The classes in scale order (declares unobserved ones too).
    n_classes : int, optional
        Classes are ``0..n_classes-1``.
    by : str, optional
        Also score each group of this column; returns a
        :class:`~fastkappa.groups.KappaByGroup`.
    clusters : str, optional
        Cluster column (e.g. patient id): intervals resample clusters.
    method : {None, 'bca', 'percentile', 'basic', 'asymptotic'}, default None
        Add a confidence interval (None: none).
    confidence_level : float, default 0.95
        Confidence level of the interval.
    n_resamples : int, default 10000
        Bootstrap replicates.
    seed : int, SeedSequence or None
        Random seed of the bootstrap; with ``by``, one stream per group is
        spawned from it, as :func:`fastkappa.kappa_by_group` does.
    nan_policy : {'raise', 'omit'}, default 'raise'
        A row with a missing value: an error, or dropped.
    sep : str, optional
        CSV field separator (default: ``,``, or tab for ``.tsv``).
    progress : bool, default False
        Show a progress bar (needs tqdm).
    sample_weight : str, optional
        Column of non-negative row weights, read batch by batch into
        :meth:`fastkappa.CohenKappa.update`. Not with ``by`` or ``clusters``
        (their tables count rows), nor with ``method`` (a weighted interval
        needs the rows: call :func:`fastkappa.kappa_ci` on them). Counts
        belong in ``frequency_weight``.
    frequency_weight : str, optional
        Column of whole-number row counts: a row with count c stands for c
        identical rows, so the result is that of the expanded rows. Not with
        ``sample_weight``, ``by`` or ``clusters``.
    ignore_index : scalar, optional
        Rows where either label equals this value are dropped, as
        ``ignore_index=`` in :func:`fastkappa.cohen_kappa`.

    Returns
    -------
    float, KappaCI or KappaByGroup
        The kappa (no ``method``, no ``by``), a :class:`~fastkappa.KappaCI`
        (``method``), or a :class:`~fastkappa.groups.KappaByGroup` (``by``),
        as :func:`fastkappa.cohen_kappa`, :func:`fastkappa.kappa_ci` and
        :func:`fastkappa.kappa_by_group` return them.

    Raises
    ------
    DataError
        (a ValueError) when the data cannot be scored: unreadable file,
        missing column, a value that is not a class, no rows.

    Notes
    -----
    A Parquet file's row groups are counted in parallel, each thread into a
    table of its own. A plain score (no ``by``, ``clusters`` or weight
    column) of a file of 2^20 rows or more, in row groups of 2^19 rows or
    more on average, is counted from the label columns' dictionary pages:
    each row's pair of dictionary indices, decoded by numba kernels, without
    building the values (see the Parquet format's dictionary and RLE /
    bit-packed hybrid encodings [1]_). Row groups in any other layout are
    read by pyarrow; the results are the same either way.

    References
    ----------
    .. [1] Apache Parquet, "File format" and "Encodings",
       https://parquet.apache.org/docs/file-format/

    Examples
    --------
    >>> import os, tempfile
    >>> import fastkappa as fk
    >>> path = os.path.join(tempfile.mkdtemp(), "scores.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("y,p,site\\n0,0,a\\n1,1,a\\n2,1,b\\n2,2,b\\n1,1,b\\n0,1,a\\n")
    >>> round(fk.files.score_file(path, true="y", pred="p", weights="quadratic"), 4)
    0.6667
    >>> res = fk.files.score_file(path, true="y", pred="p", method="bca", seed=0,
    ...                           n_resamples=200)
    >>> round(res.estimate, 4)
    0.5
    >>> fk.files.score_file(path, true="y", pred="p", by="site").groups.tolist()
    ['a', 'b']

    An Arrow stream (a DuckDB or polars query result works the same way):

    >>> import pyarrow as pa
    >>> table = pa.table({"y": [0, 1, 2, 2], "p": [0, 1, 1, 2]})
    >>> round(fk.files.score_file(table.to_reader(), true="y", pred="p"), 4)
    0.6364

    A table written one row per cell with its count, and a label to skip:

    >>> counts = pa.table({"y": [0, 0, 1, 1, 9], "p": [0, 1, 0, 1, 1], "n": [20, 5, 10, 15, 3]})
    >>> round(fk.files.score_file(counts, true="y", pred="p", frequency_weight="n",
    ...                           ignore_index=9), 4)
    0.4
    """
    res = _score(source, true=true, pred=pred, weights=weights, labels=labels,
                 n_classes=n_classes, by=by, clusters=clusters, method=method,
                 confidence_level=confidence_level, n_resamples=n_resamples, seed=seed,
                 nan_policy=nan_policy, sep=sep, progress=progress,
                 sample_weight=sample_weight, frequency_weight=frequency_weight,
                 ignore_index=ignore_index)
    if res.by is not None:
        return res.by
    if res.ci is not None:
        return res.ci
    return res.kappa


@dataclass(frozen=True)
class _Spec:
    """The columns and reading options of one scoring run."""

    true: str
    pred: str
    by: str | None = None
    clusters: str | None = None
    nan_policy: str = "raise"
    progress: bool = False
    weight: str | None = None  #: column of row weights
    weight_kind: str = "sample_weight"  #: or "frequency_weight" (the update keyword)
    ignore_index: Any = None  #: rows where either label equals this are dropped


@dataclass
class FileScore:
    """Everything :func:`score_file` computed (the command line prints all of it)."""

    name: str  #: the source as shown in messages
    accumulator: Any  #: the :class:`fastkappa.CohenKappa` holding the confusion matrix
    kappa: float
    ci: Any = None  #: KappaCI with ``method``
    by: Any = None  #: KappaByGroup with ``by``
    n_read: int = 0  #: rows read from the source
    n_missing: int = 0  #: rows dropped for a missing value (``nan_policy='omit'``)
    n_ignored: int = 0  #: rows dropped because a label equals ``ignore_index``


def _file_scale(src, columns: list[str], weights=None) -> list | None:
    """The classes that ordered dictionary label columns declare (ordered
    Categoricals written to Parquet, or in an Arrow stream), as an ordered
    Categorical does in one call; None when none of ``columns`` is one.

    With kappa ``weights``, an ordered column whose categories the file does not
    store (written without dictionary pages) is an error that says so."""
    scales = [(c, src.ordered_categories(c)) for c in columns]
    if not any(sc is not None for c, sc in scales) and not _unweighted(weights):
        for c, _ in scales:
            if src.unstored_order(c):
                raise DataError(
                    f"{src.name}: column {c!r} is an ordered categorical, but the file "
                    "stores its values without the categories (it was written without "
                    "dictionary encoding), so it does not hold their order; weighted "
                    "kappa needs it: pass `labels=` in the scale's order.")
    scales = [(c, sc) for c, sc in scales if sc is not None]
    if not scales:
        return None
    for c, sc in scales:
        if len(sc) > MAX_CLASSES:
            raise DataError(
                f"{src.name}: column {c!r} is an ordered categorical with {len(sc)} "
                f"categories, more than the {MAX_CLASSES} classes a confusion matrix "
                "supports here; are these really class labels?")
    for c, sc in scales[1:]:
        if sc != scales[0][1]:
            raise DataError(
                f"{src.name}: columns {scales[0][0]!r} and {c!r} are ordered categoricals "
                "with different categories; they must declare the same classes in the "
                "same order (or pass `labels=` in the scale's order).")
    return scales[0][1]


def _unique(names) -> list[str]:
    out: list[str] = []
    for n in names:
        if n is not None and n not in out:
            out.append(n)
    return out


def _declared(labels, n_classes) -> np.ndarray | None:
    """The declared classes as an array (None when none are declared)."""
    if labels is not None:
        labels = list(labels)
        return np.asarray(labels, dtype=object if isinstance(labels[0], str) else np.int64)
    if n_classes is not None:
        return np.arange(n_classes)
    return None


def _score(source, *, true, pred, weights=None, labels=None, n_classes=None, by=None,
           clusters=None, method=None, confidence_level=0.95, n_resamples=10_000,
           seed=None, nan_policy="raise", sep=None, progress=False, sample_weight=None,
           frequency_weight=None, ignore_index=None) -> FileScore:
    """:func:`score_file` returning every part (:class:`FileScore`).

    ``sample_weight`` / ``frequency_weight`` name a column of row weights
    (one of them; not with ``by`` or ``clusters``, whose tables count rows),
    passed batch by batch to :meth:`fastkappa.CohenKappa.update`;
    ``ignore_index`` drops the rows where either label equals it.
    """
    from ._core.intervals import _kappa_ci_iv
    from .streaming import CohenKappa

    check_nan_policy(nan_policy)
    for name, col in (("true", true), ("pred", pred)):
        if not isinstance(col, str):
            raise ValueError(f"`{name}=` names a column (a string); got {col!r}.")
    if sample_weight is not None and frequency_weight is not None:
        raise ValueError("pass `sample_weight=` or `frequency_weight=`, not both.")
    weight = sample_weight if sample_weight is not None else frequency_weight
    weight_kind = "sample_weight" if sample_weight is not None else "frequency_weight"
    if weight is not None and (by or clusters):
        raise ValueError(f"`{weight_kind}=` does not go with `by=` or `clusters=` when "
                         "scoring a file (their tables count rows); read the columns and "
                         "call fastkappa.kappa_by_group or fastkappa.kappa_ci instead.")
    if weight is not None and weight_kind == "sample_weight" and method is not None:
        raise ValueError("a streamed interval needs unweighted rows; with `sample_weight=` "
                         "read the columns and call fastkappa.kappa_ci(..., "
                         "sample_weight=...) instead.")
    if method is not None:  # bad interval options fail before the file is read
        _kappa_ci_iv(method, confidence_level, n_resamples, seed)
    src = as_source(source, sep=sep)
    labels, ignore_index = as_file_labels(src, [true, pred], labels, ignore_index)
    spec = _Spec(true, pred, by, clusters, nan_policy, progress, weight, weight_kind,
                 ignore_index)
    if labels is None and n_classes is None:
        labels = _file_scale(src, _unique([true, pred]), weights)
    # the declared classes, an ordered categorical column's included
    check_ignore_undeclared(ignore_index, _declared(labels, n_classes))
    acc = CohenKappa(weights=weights, labels=labels, n_classes=n_classes)
    needed = _unique([true, pred, clusters, by, weight])
    declared = _declared(labels, n_classes)
    conv = {c: LabelConverter(c, src.fmt, src.kept_tokens) if c in (true, pred)
            else IdConverter(c, src.fmt) for c in needed if c != weight}
    state = _ScoreState(spec)
    cells = state.new_counts()
    stand_in = _pages_layout(spec, src, cells) and _pages_cold(src)
    with _serial_kernels() as n_threads, (
            _cold_pages.time.timing() if stand_in else contextlib.nullcontext()):
        units = src.row_group_units() if src.row_groups else []
        if (n_threads > 1 and len(units) > 1) or _by_pairs(spec, src, cells):
            _score_row_groups(spec, src, units, acc, state, cells, declared, needed,
                              n_threads)
        else:
            with _Counter(acc, n_threads) as counter:
                types = {weight: "score"} if weight is not None else None
                for row0, cols in iter_batches(src, needed, types, progress=progress):
                    _score_batch(spec, row0, cols, counter.count, conv, state, cells,
                                 declared, needed)
    if acc.n_rows == 0:
        raise DataError(f"{src.name} holds no rows to score"
                        + (" after dropping rows with missing values"
                           if nan_policy == "omit" else "")
                        + ("; an Arrow stream is read once, so pass a new one to each call"
                           if src.fmt == "arrow" else "") + ".")
    if weight_kind == "sample_weight" and weight is not None and not acc.confusion.sum() > 0:
        # batches (and threads' slices of them) may each hold only zero weights; the
        # file as a whole may not
        raise DataError(f"{src.name}: the weight column {weight!r} is zero on every scored "
                        "row; at least one row needs a positive weight.")
    classes = acc.labels
    kappa = acc.compute()
    tables = _UnitTables(state, cells, classes) if cells is not None else None
    ci = None
    if method is not None:
        if clusters:
            ci = tables.cluster_ci(None, weights, method, confidence_level, n_resamples,
                                   seed)
        else:
            ci = acc.ci(method=method, confidence_level=confidence_level,
                        n_resamples=n_resamples, seed=seed)
    groups = (_score_groups(by, tables, weights, method, confidence_level, n_resamples,
                            seed, classes, kappa) if by else None)
    return FileScore(src.name, acc, kappa, ci, groups, state.n_read, state.n_missing,
                     state.n_ignored)


# --------------------------------------------------------------------------- reading

def _missing_rows(masks: dict[str, np.ndarray | None], row0: int, policy: str,
                  fmt: str = "csv", label_cols=()):
    """Keep-mask of the rows without missing values (None: all kept); with
    ``nan_policy='raise'`` the first missing value in file order is an error
    (worded for the file's format: tokens in text, nulls in Parquet/Arrow; a
    label column's names what ``labels=`` does with a token)."""
    any_missing = None
    first = None  # (row, column)
    for name, m in masks.items():
        if m is None or not m.any():
            continue
        i = int(np.argmax(m))
        if first is None or i < first[0]:
            first = (i, name)
        any_missing = m if any_missing is None else (any_missing | m)
    if first is not None and policy == "raise":
        i, name = first
        if fmt != "csv":
            raise DataError(
                f"row {row0 + i}: column {name!r} is missing (a null or NaN); pass "
                "nan_policy='omit' to skip rows with a missing value.")
        declare = (" (a class named like a token, such as None, is a class once "
                   "`labels=` declares it)" if name in label_cols else "")
        raise DataError(
            f"row {row0 + i}: column {name!r} is missing (empty, or a missing-value "
            "token such as NA, NaN, None, null, - or ?); pass nan_policy='omit' to skip "
            f"rows with a missing value{declare}.")
    return None if any_missing is None else ~any_missing


def _explain_update_error(err: ValueError, cols: dict, declared, row0: int,
                          index: np.ndarray | None = None) -> DataError:
    """Turn an accumulator error into one that names the first bad row."""
    if declared is not None:
        for name, col in cols.items():
            hit = first_row_outside(col, declared)
            if hit is not None:
                i, value = hit
                i = int(index[i]) if index is not None else i
                shown = declared.tolist()
                kinds = {isinstance(value, str), all(isinstance(c, str) for c in shown)}
                hint = ("" if len(kinds) == 1 else
                        " (the column holds text, the classes are numbers: declare them as "
                        "strings)" if isinstance(value, str) else
                        " (the column holds numbers, the classes are strings)")
                return DataError(
                    f"row {row0 + i}: column {name!r} holds {value!r}, which is not one of "
                    f"the declared classes {shown[:20]}{' ...' if len(shown) > 20 else ''}"
                    f"{hint}; declare every class with `labels=` or `n_classes=`.")
    names = list(cols)
    msg = str(err).replace("`y_true`", repr(names[0])).replace("`y_pred`", repr(names[-1]))
    msg = msg.replace("CohenKappa(labels=[...], weights=...)",
                      "pass `labels=` in the scale's order")
    return DataError(f"in the rows from row {row0}: {msg}")


def _read_columns(src, label_cols: list[str], score_cols: list[str] = (),
                  extra_cols: list[str] = (), *, declared=None, nan_policy: str = "raise",
                  progress: bool = False, tally: dict | None = None
                  ) -> dict[str, np.ndarray]:
    """Whole columns in memory (compact dtypes), missing rows handled by ``nan_policy``;
    ``tally`` (a dict) receives ``n_read`` and ``n_missing``, the rows read and those
    dropped for a missing value."""
    needed = _unique([*label_cols, *score_cols, *extra_cols])
    types = {c: "score" for c in score_cols}
    conv = {c: LabelConverter(c, src.fmt, src.kept_tokens) if c in label_cols
            else IdConverter(c, src.fmt) for c in needed if c not in score_cols}
    parts: dict[str, list] = {c: [] for c in needed}
    n_read = n_missing = 0
    for row0, cols in iter_batches(src, needed, types, progress=progress):
        values, masks = {}, {}
        for c in needed:
            if c in score_cols:
                values[c], masks[c] = score_values(cols[c], c, row0)
            else:
                values[c], masks[c] = conv[c].convert(cols[c], row0)
        n = _length(values[needed[0]])
        n_read += n
        keep = _missing_rows(masks, row0, nan_policy, src.fmt, label_cols)
        index = None
        if keep is not None:
            index = np.flatnonzero(keep)
            n_missing += n - len(index)
            values = {c: subset(v, index) for c, v in values.items()}
        _check_kinds(label_cols, values, conv, row0, index)
        if declared is not None:
            for c in label_cols:
                hit = first_row_outside(values[c], declared)
                if hit is not None:
                    i, value = hit
                    rows = int(index[i]) if index is not None else i
                    raise DataError(
                        f"row {row0 + rows}: column {c!r} holds {value!r}, which is not one "
                        f"of the declared classes {declared.tolist()[:20]}; declare every "
                        "class with `labels=` or `n_classes=`.")
        for c in needed:
            parts[c].append(_compact(materialize(values[c]) if c not in score_cols
                                     else values[c]))
    out = {}
    for c in needed:
        if parts[c]:
            out[c] = np.concatenate(parts[c])
        else:
            out[c] = np.empty(0)
    if tally is not None:
        tally.update(n_read=n_read, n_missing=n_missing)
    if len(out[needed[0]]) == 0:
        raise DataError(f"{src.name} holds no rows to score.")
    return out


def _compact(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu" and len(a):
        lo, hi = a.min(), a.max()
        for dt in (np.int8, np.int16, np.int32):
            info = np.iinfo(dt)
            if info.min <= lo and hi <= info.max:
                return a.astype(dt)
    return a


# --------------------------------------------------------------------------- score

def _length(col) -> int:
    from ._core.columns import CodesColumn

    return len(col.codes) if isinstance(col, CodesColumn) else len(col)


def _check_kinds(label_cols: list[str], values: dict, conv: dict, row0: int,
                 index: np.ndarray | None) -> None:
    """Every label column holds numbers, or every one strings; else name the first
    row, column and value that breaks this.

    The value named is the first word that is not a number in a column of
    strings (``mild`` among ``1, 2, mild``) when the other columns hold numbers.
    """
    from ._file_columns import _parse_labels

    kinds = {c: conv[c].kind for c in label_cols}
    known = {k for k in kinds.values() if k is not None}
    if len(known) < 2 or _length(values[label_cols[0]]) == 0:
        return
    numeric = next(c for c in label_cols if kinds[c] == "num")
    best = None  # (row index in the batch, column)
    for c in label_cols:
        if kinds[c] != "str":
            continue
        words = materialize(values[c])
        for i, w in enumerate(words.tolist()):
            if best is not None and i >= best[0]:
                break
            if isinstance(w, str) and _parse_labels([w]) is None:
                best = (i, c)
                break
    if best is None:  # every string here looks like a number: name the first row
        best = (0, next(c for c in label_cols if kinds[c] == "str"))
    i, c = best
    value = materialize(subset(values[c], slice(i, i + 1)))[0]
    shown = value.item() if isinstance(value, np.generic) else value
    row = row0 + (int(index[i]) if index is not None else i)
    raise DataError(
        f"row {row}: column {c!r} holds {shown!r}, but column {numeric!r} holds numbers; "
        "label columns must all hold the same kind of value (numbers, or strings): recode "
        "one of them.")


class _ScoreState:
    """What scoring with ``by`` / ``clusters`` counts as the file streams (no rows kept).

    ``labels`` numbers the classes met; ``groups`` and ``clusters`` number
    the ids of those columns; with both, ``pairs`` numbers (group, cluster)
    pairs.  Each batch adds its (unit, true class, predicted class) counts to
    a :class:`~fastkappa._filecount.CellCounts`.
    """

    def __init__(self, spec: _Spec) -> None:
        from ._filecount import KeyIndex

        #: rows read, and those dropped for a missing value or as ``ignore_index``
        self.n_read = self.n_missing = self.n_ignored = 0
        self._tally_lock = threading.Lock()
        self.labels = KeyIndex()
        self.groups = KeyIndex() if spec.by else None
        self.clusters = KeyIndex() if spec.clusters else None
        self.pairs = KeyIndex() if spec.by and spec.clusters else None

    @property
    def active(self) -> bool:
        return self.groups is not None or self.clusters is not None

    def tally(self, read: int, missing: int, ignored: int) -> None:
        """Count one batch's rows (worker threads share this state)."""
        with self._tally_lock:
            self.n_read += read
            self.n_missing += missing
            self.n_ignored += ignored

    def new_counts(self):
        from ._filecount import CellCounts

        return CellCounts() if self.active else None

    def add(self, spec: _Spec, values, t, p, cells) -> None:
        ti, pi = self.labels.ids(t), self.labels.ids(p)
        gid = self.groups.ids(values[spec.by]) if self.groups is not None else None
        cid = self.clusters.ids(values[spec.clusters]) if self.clusters is not None else None
        if gid is not None and cid is not None:
            unit = self.pairs.ids((gid << 32) | cid)
        else:
            unit = gid if gid is not None else cid
        cells.add(unit, ti, pi)

    def pair_parts(self) -> tuple[np.ndarray, np.ndarray]:
        """Group id and cluster id of every pair id."""
        v = np.asarray(self.pairs.values, dtype=np.int64)
        return v >> 32, v & ((1 << 32) - 1)


def _score_batch(spec: _Spec, row0, cols, count, conv, state, cells, declared, needed) -> None:
    """Add one record batch to the overall accumulator (through ``count(t, p)``) and,
    with ``by`` / ``clusters``, to the per-unit tables ``cells``."""
    values, masks = {}, {}
    for c in needed:
        if c == spec.weight:
            values[c], masks[c] = score_values(cols[c], c, row0)
        else:
            values[c], masks[c] = conv[c].convert(cols[c], row0)
    n_read = _length(values[spec.true])
    keep = _missing_rows(masks, row0, spec.nan_policy,
                         next((c.fmt for c in conv.values()), "csv"), (spec.true, spec.pred))
    index = None
    if keep is not None:
        index = np.flatnonzero(keep)
        values = {c: subset(v, index) for c, v in values.items()}
    n_kept = _length(values[spec.true])
    _check_kinds([spec.true, spec.pred], values, conv, row0, index)
    if spec.ignore_index is not None:
        values, index = _drop_ignored(spec, values, index)
    t, p = values[spec.true], values[spec.pred]
    state.tally(n_read, n_read - n_kept, n_kept - _length(t))
    if _length(t) == 0:  # every row of the batch dropped (missing, or ignore_index)
        return
    kw = {} if spec.weight is None else {spec.weight_kind: values[spec.weight]}
    try:
        count(t, p, **kw)
    except DataError:
        raise
    except ValueError as e:
        raise _explain_update_error(e, {spec.true: t, spec.pred: p}, declared, row0,
                                    index) from None
    if cells is not None:
        state.add(spec, values, t, p, cells)


def _pages_layout(spec: _Spec, src, cells) -> bool:
    """Whether a plain score may count row groups from their dictionary pages (a
    Parquet file of at least ``PAGES_MIN_ROWS`` rows in row groups of
    ``PAGES_MIN_GROUP_ROWS`` on average; see ``_core.config``)."""
    from ._core import config

    rows, groups = src.n_rows or 0, len(src.row_groups or ())
    return (cells is None and spec.weight is None and src.pair_reader is not None
            and groups > 0 and rows >= config.PAGES_MIN_ROWS
            and rows >= groups * config.PAGES_MIN_GROUP_ROWS)


#: while the page reader's kernels are neither compiled nor in the kernel cache
#: (about 2.7 s to compile), such files are read by pyarrow instead (a 2^21-row
#: file in about 1.3 s in a fresh process, compiling the counting kernels,
#: against 2.8 s), until those reads have taken this long in a process;
#: ``fastkappa warmup`` compiles them ahead
_cold_pages = ColdStandIn(budget=1.0)
#: ... for files up to this many rows: beyond, pyarrow's read costs more than
#: the page reader gains back, so its kernels compile (once per cache)
PAGES_COLD_MAX_ROWS = 1 << 24


def _pages_cold(src) -> bool:
    """Whether to read a page-reader file with pyarrow: see :data:`_cold_pages`."""
    from ._kernels import parquet as kp

    if (src.n_rows or 0) > PAGES_COLD_MAX_ROWS:
        return False

    data = np.frombuffer(b"", dtype=np.uint8)  # read-only, as the file's bytes
    pages = np.zeros((0, 4), dtype=np.int64)
    index = np.empty(0, dtype=np.int32)
    table = np.zeros((1, 1), dtype=np.int64)
    return (_cold_pages.wanted(kp._page_headers, (
                data, 0, np.empty((1, kp.HEADER_SLOTS + 1), np.int64),
                np.empty((2, 16), np.int64)), "headers")
            or _cold_pages.wanted(kp._count_page_pairs, (
                data, pages, data, pages, index, index, 1, 1, table), "pairs"))


def _by_pairs(spec: _Spec, src, cells) -> bool:
    """Whether a plain score counts row groups from their dictionary pages:
    :func:`_pages_layout`, unless a fresh kernel cache reads them with pyarrow."""
    return _pages_layout(spec, src, cells) and not _pages_cold(src)


def _joined(pairs: list) -> tuple:
    """Row groups counted by pair of values, as one such count (pairs may repeat)."""
    if len(pairs) == 1:
        return pairs[0]
    return tuple(np.concatenate([p[k] for p in pairs]) for k in range(3))


def _score_pairs(spec: _Spec, pairs, count, conv, state, n_rows: int) -> bool:
    """Add ``n_rows`` rows counted by pair of values (``(true values, predicted
    values, rows)``, from :func:`fastkappa._parquet_pages.pair_counts` for one
    or more row groups) to the accumulator through ``count``, as
    :func:`_score_batch` would add the rows themselves.

    Returns False, having changed nothing, when ``pairs`` is None or the
    rows hold anything but plain labels (a missing value, a value the
    converters or the accumulator refuse): the caller then reads the row
    groups with pyarrow, which scores them or names the row at fault.
    """
    import pyarrow as pa

    if pairs is None:
        return False
    t_vals, p_vals, rows = pairs
    if int(rows.sum()) != n_rows:
        return False
    arrays = {spec.true: t_vals, spec.pred: p_vals}
    try:
        values = {}
        for c, v in arrays.items():
            arr = pa.array(v.tolist() if v.dtype == object else v,
                           type=pa.string() if v.dtype == object else None)
            values[c], mask = conv[c].convert(arr, 1)
            if mask is not None and mask.any():
                return False
        _check_kinds([spec.true, spec.pred], values, conv, 1, None)
        index = None
        if spec.ignore_index is not None:
            values, index = _drop_ignored(spec, values, None)
        kept = rows if index is None else rows[index]
        if len(kept):
            count(values[spec.true], values[spec.pred], frequency_weight=kept)
    except (ValueError, TypeError):  # DataError included: the row path explains it
        return False
    state.tally(n_rows, 0, n_rows - int(kept.sum()))
    return True


def _drop_ignored(spec: _Spec, values: dict, index):
    """Drop the rows where either label equals ``spec.ignore_index``."""
    hit = None
    for c in (spec.true, spec.pred):
        col = np.asarray(materialize(values[c]))
        if len(col) == 0:  # every row of the batch missing: no value tells the kind
            continue
        value = as_column_label(spec.ignore_index, [col])
        shown = value.item() if isinstance(value, np.generic) else value
        if col.dtype.kind in "iuf" and isinstance(value, str):
            raise DataError(f"`ignore_index` is the string {shown!r}, but column {c!r} holds "
                            "numbers; give a number.")
        if col.dtype.kind not in "iufb" and not isinstance(value, str):
            raise DataError(f"`ignore_index` is the number {shown!r}, but column {c!r} holds "
                            f"text; give the label as a string ({str(shown)!r}).")
        m = col == value
        hit = m if hit is None else (hit | m)
    if hit is None or not hit.any():
        return values, index
    kept = np.flatnonzero(~hit)
    values = {c: subset(v, kept) for c, v in values.items()}
    index = kept if index is None else index[kept]
    return values, index


class _Counter:
    """Count each record batch's label pairs into ``acc`` on worker threads.

    The batch is cut into one part per thread; each worker adds its part into
    an accumulator of its own with the serial kernels (they release the GIL),
    and the accumulators are merged into ``acc`` when the file is done.
    Counts are exact integers, so the result does not depend on the number
    of threads.  Idle workers block rather than spin, so they never take a
    core from the file reader; and counting off the reading thread measured
    faster even with one worker.
    """

    def __init__(self, acc, n_threads: int) -> None:
        self.acc = acc
        self.n_threads = max(1, n_threads)
        self.parts = [acc]
        self.pool = None

    def __enter__(self) -> _Counter:
        from concurrent.futures import ThreadPoolExecutor

        self.pool = ThreadPoolExecutor(self.n_threads, thread_name_prefix="fastkappa-count",
                                       initializer=use_serial_kernels)
        self.parts += [copy.deepcopy(self.acc) for _ in range(self.n_threads - 1)]
        return self

    def count(self, t, p, **weight) -> None:
        n = _length(t)
        step = max(1, -(-n // self.n_threads))
        futures = [self.pool.submit(acc.update, subset(t, slice(lo, lo + step)),
                                    subset(p, slice(lo, lo + step)),
                                    **{k: w[lo:lo + step] for k, w in weight.items()})
                   for acc, lo in zip(self.parts, range(0, n, step), strict=False)]
        wait_all(futures)

    def __exit__(self, *exc) -> None:
        self.pool.shutdown()
        if exc[0] is None:
            for other in self.parts[1:]:
                self.acc.merge(other)


class _RowGroupQueue:
    """Hands out work unit numbers in file order; stops at the first failure.

    Each failure is kept with its unit, so that the one reported is the first
    in the file whatever the order in which the workers met them.
    """

    def __init__(self, n: int) -> None:
        self.n = n
        self.next = 0
        self.failures: dict[int, BaseException] = {}
        self.lock = threading.Lock()

    def take(self) -> int | None:
        with self.lock:
            i = self.next
            if i >= self.n or (self.failures and i > min(self.failures)):
                return None
            self.next += 1
            return i

    def stop(self) -> None:
        with self.lock:
            self.n = 0

    def fail(self, i: int, err: BaseException) -> None:
        with self.lock:
            self.failures[i] = err

    def first_failure(self) -> BaseException | None:
        return self.failures[min(self.failures)] if self.failures else None


def _score_row_groups(spec: _Spec, src, units, acc, state, cells, declared, needed,
                      n_threads) -> None:
    """Score a Parquet file's row groups in parallel, into ``acc`` and ``cells``.

    Each worker thread takes the next of ``units`` (consecutive row groups
    holding at least a batch of rows, see :meth:`Source.row_group_units`), decodes it
    alone and counts it into accumulators of its own (the per-unit tables
    ``cells`` are shared, merged under a lock); the accumulators are
    merged at the end (exact integer counts, so the thread count never
    changes a result).  On two cores this keeps both busy without the reader
    and the counting ever waiting for each other, which interleaving them per
    batch cannot.  Memory holds one record batch per worker.
    """
    from concurrent.futures import ThreadPoolExecutor

    todo = _RowGroupQueue(len(units))
    bar = progress_bar(src) if spec.progress else None

    # a plain score counts each row group from its dictionary pages when it can
    # (see fastkappa._parquet_pages); a row group it cannot read goes to pyarrow
    by_pairs = _by_pairs(spec, src, cells)

    def work():
        read = src.group_reader({spec.weight: "score"} if spec.weight else None)
        pairs, close = src.pair_reader() if by_pairs else (None, None)
        mine = copy.deepcopy(acc)
        conv = {c: LabelConverter(c, src.fmt) if c in (spec.true, spec.pred)
                else IdConverter(c, src.fmt) for c in needed if c != spec.weight}
        try:
            while (i := todo.take()) is not None:
                try:
                    row0, members = units[i]
                    left = list(members)
                    if pairs is not None:  # the unit's row groups read from their pages
                        got = []
                        while left and (counted := pairs(left[0], (spec.true, spec.pred))):
                            got.append(counted)
                            left.pop(0)
                        n = sum(src.row_groups[g] for g in members)
                        # all of them, or pyarrow reads the whole unit, as without the
                        # page reader (so that any error names the same row)
                        if not left and _score_pairs(spec, _joined(got), mine.update, conv,
                                                     state, n):
                            row0 += n
                            if bar is not None:
                                bar.update(n)
                        else:
                            left = list(members)
                    for batch in (read(row0, left, needed) if left else ()):
                        cols = {c: batch.column(batch.schema.get_field_index(c))
                                for c in needed}
                        _score_batch(spec, row0, cols, mine.update, conv, state, cells,
                                     declared, needed)
                        row0 += batch.num_rows
                        if bar is not None:
                            bar.update(batch.num_rows)
                except Exception as e:  # reported by the caller, first in file order
                    todo.fail(i, e)
                    break
        finally:
            if close is not None:
                close()
        return mine

    n_workers = min(n_threads, todo.n)
    try:
        with ThreadPoolExecutor(n_workers, thread_name_prefix="fastkappa-read",
                                initializer=use_serial_kernels) as pool:
            futures = [pool.submit(work) for _ in range(n_workers)]
            try:
                done = wait_all(futures)
            except BaseException:  # Ctrl-C: no new units, then out
                todo.stop()
                raise
    finally:
        if bar is not None:
            bar.close()
    err = todo.first_failure()
    if err is not None:
        raise err
    for mine in done:
        acc.merge(mine)


@contextlib.contextmanager
def _serial_kernels():
    """Numba at one thread while the file reader's threads own the cores.

    Counting runs serially per slice anyway; with one thread even the small
    parallel helpers never wait for a worker that the reader keeps busy.
    The thread count set before (``--threads`` on the command line) applies
    again afterwards, to the intervals.
    """
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield before
    finally:
        numba.set_num_threads(before)
