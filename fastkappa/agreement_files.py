"""Agreement among many raters straight from CSV or Parquet files, in batches.

The engine behind a ``fastkappa agreement FILE`` command: the file is read
in record batches (only the needed columns) by fastkappa's streaming
readers, and each batch goes into one :class:`~fastkappa.AgreementAccumulator`,
so memory is one batch plus the items x raters table.  Label columns follow
the command line's rules (a CSV column holds numbers or strings for the
whole file; a bad value is reported with its row).

Long format: ``item=``, ``rater=``, ``label=`` name the columns (one row per
rating, any order).  Wide format: ``wide=[...]`` names one column per rater
(one row per item; an empty cell is a missing rating).
"""

from __future__ import annotations

import decimal
import math
from typing import Any

import numpy as np

from ._agreement_result import Agreement
from ._core.options import is_marker
from ._raters_input import missing_marker
from .agreement_stream import AgreementAccumulator

__all__ = ["accumulate_file", "agreement_file"]


def _id_word(word: str):
    """A CSV id as the value it writes: a number where the word is one (``1``,
    ``1.0``, ``1e0``, `` 1`` and ``01`` are the id 1, as a numeric column read
    into memory, such as a file written with ``", "`` between fields), else
    the word (``1_000`` and ``x1`` stay words); see
    :data:`fastkappa._io.NUMBER_WORD`."""
    from ._io import NUMBER_WORD, number_text

    if not NUMBER_WORD.fullmatch(word):
        return word
    d = decimal.Decimal(number_text(word))
    if not d.is_finite():
        return word
    if d.adjusted() > 40:  # far beyond any integer id: a float, or the word
        v = float(d)
        return v if math.isfinite(v) else word
    if d == d.to_integral_value():
        return int(d)
    return float(d)


def _ids(arr, kept: frozenset = frozenset(), fmt: str = "parquet") -> np.ndarray:
    """Item or rater ids of one batch as a NumPy array (None where missing).

    ``kept`` are missing-value tokens that the label column declares as labels
    (so the reader kept them as words): in an id column they are missing still.
    CSV words that write numbers are those numbers (:func:`_id_word`), each
    distinct word parsed once.
    """
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if fmt == "csv" and (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        arr = arr.dictionary_encode()
    if pa.types.is_dictionary(arr.type) and fmt == "csv" and (
            pa.types.is_string(arr.type.value_type)
            or pa.types.is_large_string(arr.type.value_type)):
        words = [None if w in kept else _id_word(w) for w in arr.dictionary.to_pylist()]
        if all(type(w) is int and -2**63 <= w < 2**63 for w in words):
            table = np.array([*words, 0], dtype=np.int64)
        else:
            table = np.array([*words, None], dtype=object)
        codes = arr.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
        if table.dtype != object and (codes < 0).any():
            table = table.astype(object)
            table[-1] = None
        return table[codes]
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    from ._file_columns import arrow_numpy

    ids = np.asarray(arrow_numpy(arr))
    if kept and ids.dtype == object:
        ids[np.isin(ids, list(kept))] = None
    return ids


def _labels(conv, arr, row0: int):
    """(label column, keep mask or None) of one batch; missing labels are dropped."""
    from ._file_columns import subset

    col, missing = conv.convert(arr, row0)
    if missing is None:
        return col, None
    keep = ~missing
    return subset(col, keep), keep


def accumulate_file(path: Any, *, item: str | None = None, rater: str | None = None,
                    label: str | None = None, wide: list[str] | None = None,
                    labels=None, n_classes: int | None = None, missing: Any = None,
                    sep: str | None = None, progress: bool = False
                    ) -> AgreementAccumulator:
    """Read a CSV/Parquet file (``-`` for standard input) into an accumulator.

    Parameters
    ----------
    path : str, os.PathLike or Arrow stream
        CSV (plain or gzip) or Parquet, the format told by the first bytes
        (``"-"`` reads standard input); or a ``pyarrow.RecordBatchReader``,
        ``pyarrow.Table`` or any object with ``__arrow_c_stream__`` (a DuckDB
        relation, a polars DataFrame), read batch by batch.
    item, rater, label : str, optional
        Long format: the columns holding item ids, rater ids and labels.
    wide : list of str, optional
        Wide format instead: one label column per rater (rows are items).
    labels, n_classes, missing
        As in :class:`fastkappa.AgreementAccumulator`.
    sep : str, optional
        CSV separator (default: detected).
    progress : bool, default False
        Show a progress bar for long reads.

    Returns
    -------
    AgreementAccumulator
    """
    from ._file_columns import LabelConverter
    from ._io import as_file_labels, as_source, iter_batches

    long_given = [v is not None for v in (item, rater, label)]
    if wide is not None and any(long_given):
        raise ValueError("pass either `wide=` columns or `item=`, `rater=` and `label=`, "
                         "not both.")
    if wide is None and not all(long_given):
        raise ValueError("name the long-format columns `item=`, `rater=` and `label=`, or "
                         "the raters' columns with `wide=`.")
    if wide is not None and (len(wide) < 2 or len(set(wide)) != len(wide)):
        raise ValueError("`wide=` needs at least two distinct rater columns.")
    src = as_source(path, sep=sep)
    labels, _ = as_file_labels(src, [label] if wide is None else list(wide), labels, None)
    if labels is None and n_classes is None:
        # ordered categorical label columns declare the classes, as in one call (the
        # reader's dictionary arrays no longer carry the order flag)
        from .files import _file_scale

        labels = _file_scale(src, [label] if wide is None else list(wide))
        if labels is not None and missing is not None:
            # the marker is no class, listed or not (as an ordered Categorical in
            # one call): only a scale the caller declares may not hold it
            marker = missing_marker(missing)
            labels = [c for c in labels if not is_marker(c, marker)]
    acc = AgreementAccumulator(labels=labels, n_classes=n_classes, missing=missing)
    acc._csv_ids = src.fmt == "csv"  # ids read by _id_word (see agreement_file's clusters)
    if wide is None:
        needed = [item, rater, label]
        if len(set(needed)) != 3:
            raise ValueError("`item`, `rater` and `label` must name three different columns.")
        conv = LabelConverter(label, src.fmt, src.kept_tokens)
        for row0, cols in iter_batches(src, needed, progress=progress):
            lab, keep = _labels(conv, cols[label], row0)
            # a row with an empty label is still that rater's row for the item (a
            # second row of the pair is a duplicate), as in one call on all the rows
            acc._update(_ids(cols[item], src.kept_tokens, src.fmt),
                        _ids(cols[rater], src.kept_tokens, src.fmt), lab,
                        None if keep is None else ~keep)
        return acc
    convs = {c: LabelConverter(c, src.fmt, src.kept_tokens) for c in wide}
    for row0, cols in iter_batches(src, list(wide), progress=progress):
        for c in wide:
            lab, keep = _labels(convs[c], cols[c], row0)
            rows = np.arange(row0, row0 + len(cols[c]), dtype=np.int64)
            # every row is an item, an empty cell that rater's missing rating: a row
            # with no rating at all counts in n_unrated, as in one call on the array
            try:
                acc._update(rows, np.full(len(rows), c, dtype=object), lab,
                            None if keep is None else ~keep)
            except ValueError as e:  # the accumulator's `label` is this rater's column
                raise ValueError(str(e).replace("`label`", f"column {c!r}")) from None
    return acc


def agreement_file(path: Any, *, item: str | None = None, rater: str | None = None,
                   label: str | None = None, wide: list[str] | None = None,
                   labels=None, n_classes: int | None = None, missing: Any = None,
                   sep: str | None = None, progress: bool = False, **options: Any
                   ) -> Agreement:
    """:func:`fastkappa.agreement` on a CSV/Parquet file or an Arrow stream, read in batches.

    ``path`` and the column keywords are those of :func:`accumulate_file`.

    ``options`` are those of :meth:`fastkappa.AgreementAccumulator.compute`
    (``coefficients``, ``weights``, ``level``, ``method``,
    ``confidence_level``, ``n_resamples``, ``seed``, ``population_size``).
    Wide files: every row is an item; a row whose every rater cell is empty
    holds no rating and counts in ``n_unrated``, as in one call on the array.
    CSV item and rater ids that write a number are that number (``1``,
    ``1.0`` and ``01`` are one item, as in a numeric column read into
    memory); a ``clusters`` dict may key them as numbers or as written.

    Parameters
    ----------
    path : str, path-like or Arrow stream
        A CSV (optionally gzip-compressed) or Parquet file, ``"-"`` for
        standard input, or a ``pyarrow.Table`` / ``RecordBatchReader`` /
        object with ``__arrow_c_stream__`` (a polars DataFrame).
    item, rater, label : str, optional
        The long format's columns: one row per rating.
    wide : list of str, optional
        The wide format instead: one label column per rater.
    labels, n_classes, missing
        The classes and the missing-rating marker, as in
        :func:`fastkappa.agreement`.
    sep : str, optional
        CSV field separator (default ``,``, or a tab for ``.tsv``).
    progress : bool, default False
        A progress bar on standard error (needs tqdm).
    **options
        Passed to :meth:`fastkappa.AgreementAccumulator.compute`.

    Returns
    -------
    Agreement
        The same result as :func:`fastkappa.agreement` on all the rows.

    References
    ----------
    .. [1] Gwet, K. L. (2008). Computing inter-rater reliability and its variance
       in the presence of high agreement. British Journal of Mathematical and
       Statistical Psychology, 61(1), 29-48.
       https://doi.org/10.1348/000711006X126600
    .. [2] Gwet, K. L. (2014). Handbook of Inter-Rater Reliability (4th ed.).
       Advanced Analytics, LLC.
    .. [3] Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability.
       Departmental Papers (ASC) 43, Annenberg School for Communication,
       University of Pennsylvania.

    Examples
    --------
    >>> import os, tempfile
    >>> import fastkappa.agreement_files as fkf
    >>> path = os.path.join(tempfile.mkdtemp(), "ratings.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("doc,annotator,grade\\n1,a,0\\n1,b,0\\n2,a,1\\n2,b,1\\n3,a,1\\n3,b,0\\n")
    >>> res = fkf.agreement_file(path, item="doc", rater="annotator", label="grade",
    ...                          coefficients="fleiss_kappa")
    >>> round(res["fleiss_kappa"].estimate, 4)
    0.3333
    """
    acc = accumulate_file(path, item=item, rater=rater, label=label, wide=wide,
                          labels=labels, n_classes=n_classes, missing=missing, sep=sep,
                          progress=progress)
    check_rated(acc)
    if isinstance(options.get("clusters"), dict) and getattr(acc, "_csv_ids", False):
        options["clusters"] = _csv_cluster_keys(options["clusters"])
    return acc.compute(**options)


def _csv_cluster_keys(clusters: dict) -> dict:
    """``clusters`` keyed by CSV item ids as read (:func:`_id_word`): ``{"01": c}``
    is item 1's cluster; two keys naming one item must name one cluster."""
    out: dict = {}
    for key, cluster in clusters.items():
        item = _id_word(key) if isinstance(key, str) else key
        if item in out and out[item] != cluster:
            raise ValueError(
                f"`clusters` gives item {item!r} two clusters ({out[item]!r} and "
                f"{cluster!r}); CSV ids that write one number are one item.")
        out[item] = cluster
    return out


def check_rated(acc: AgreementAccumulator) -> None:
    """A ValueError when the file gave no rating (no row, or every label missing)."""
    if acc.n_ratings == 0:
        raise ValueError("the file holds no rating: it has no data row, or every label "
                         "is missing.")
