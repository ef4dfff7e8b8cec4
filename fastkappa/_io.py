"""Streaming readers for the command line: CSV (plain or gzip, file or stdin) and Parquet.

Files are read in record batches with pyarrow, only the columns a command
needs, so memory stays bounded whatever the file size. CSV label columns are
read as dictionary-encoded strings whatever they hold: their type is fixed
before the first byte of data is parsed, so a block that happens to look
different (a ``2.0`` after a million ``2``, a ``NA`` in row 10^7) cannot
change a column's type halfway through the file, and every bad value can be
traced to its row. Numbers are parsed from each block's small dictionary.

Missing values in CSV are the tokens of :data:`MISSING_TOKENS` (pandas'
default ``na_values`` plus ``-`` and ``?``), also with spaces around them,
and any other spelling of NaN (``NAN``): they are read as missing, never as
a class, so they cannot turn a numeric column into a
column of strings.  A numeric label column holds integers within int64 (or
whole-number spellings of them such as ``1.0`` and ``1e3``, the same class as
``1`` and ``1000``); anything else in it is an error naming its row.
"""

from __future__ import annotations

import csv
import decimal
import gzip
import io
import math
import os
import queue
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ._core.columns import CodesColumn
from ._core.config import (
    CSV_BLOCK_SIZE,
    MAX_HEADER_BYTES,
    PARQUET_BATCH_ROWS,
    PREFETCH,
    PROGRESS_DELAY,
    WAIT_POLL,
)
from ._install import install_hint

GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"
#: CSV fields read as missing: pandas' default ``na_values`` plus ``-`` and
#: ``?`` (also with spaces around them), and any spelling of NaN.  Never a
#: class, in any column.
MISSING_TOKENS = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
                  "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a",
                  "nan", "null", "-", "?")
#: the range of integer class labels
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class DataError(ValueError):
    """The data cannot be scored (exit code 1 on the command line)."""


def _read_errors():
    """Exceptions a damaged input raises while it is read (truncated or corrupt
    gzip, Parquet, bad UTF-8, I/O errors)."""
    import zlib

    import pyarrow as pa

    return (pa.ArrowException, OSError, EOFError, zlib.error, UnicodeDecodeError)


def require_pyarrow():
    """Import pyarrow or fail with the install command."""
    try:
        import pyarrow
    except ImportError:
        raise DataError(
            "reading files needs pyarrow (and tqdm for the progress bar); install them "
            f"with: {install_hint('io')}") from None
    return pyarrow


# --------------------------------------------------------------------------- sources


@dataclass
class Source:
    """An opened input: its format, column names and a way to stream batches."""

    name: str  # as shown in messages ("-" shows as "stdin")
    fmt: str  # "csv" or "parquet"
    columns: list[str]
    n_rows: int | None = None
    _open: object = None  # callable(needed, types) -> iterator of pyarrow RecordBatch
    #: Parquet: rows in each row group (None for CSV)
    row_groups: list[int] | None = None
    _group_reader: object = None  # callable() -> callable(groups, needed) -> batch iterator

    def row_group_units(self, rows: int | None = None) -> list[tuple[int, list[int]]]:
        """Consecutive row groups packed into units of at least ``rows`` rows
        (default: a Parquet batch, ``PARQUET_BATCH_ROWS``).

        Returns ``(first_row, [row group numbers])`` per unit, in file order
        (``first_row`` is 1-based).  Small row groups go together so that a
        unit pays pyarrow's per-read cost once; a large row group is a unit
        of its own.
        """
        rows = PARQUET_BATCH_ROWS if rows is None else rows
        units: list[tuple[int, list[int]]] = []
        first, start, size = 1, 1, 0
        members: list[int] = []
        for i, n in enumerate(self.row_groups or ()):
            members.append(i)
            size += n
            first += n
            if size >= rows:
                units.append((start, members))
                start, size, members = first, 0, []
        if members:
            units.append((start, members))
        return units

    def group_reader(self):
        """A reader of whole row groups, for one thread.

        Returns ``read(first_row, groups, needed)``, which yields the record
        batches of the row groups ``groups`` (consecutive, starting at data row
        ``first_row``) decoded on the calling thread alone (each thread works
        on its own file handle), with Arrow errors turned into
        :class:`DataError`.  Only Parquet sources have one.
        """

        read = self._group_reader()

        def batches(first_row: int, groups: list[int], needed: list[str]) -> Iterator:
            row = first_row
            try:
                for batch in read(groups, needed):
                    yield batch
                    row += batch.num_rows
            except _read_errors() as e:
                raise DataError(f"{self.name}: cannot parse the rows after row {row - 1}: "
                                f"{_one_line(e)}") from None

        return batches

    def check_columns(self, needed: list[str]) -> None:
        """Raise :class:`DataError` listing the columns that exist."""
        missing = [c for c in needed if c not in self.columns]
        if missing:
            shown = ", ".join(repr(c) for c in self.columns[:50])
            more = f" and {len(self.columns) - 50} more" if len(self.columns) > 50 else ""
            noun = "column" if len(missing) == 1 else "columns"
            raise DataError(
                f"{self.name} has no {noun} {', '.join(repr(c) for c in missing)}; its "
                f"columns are {shown}{more}.")


def _peek(stream, n: int) -> bytes:
    if hasattr(stream, "peek"):
        return stream.peek(n)[:n]
    raise AssertionError("stream must be buffered")  # pragma: no cover


def _read_header(stream, sep: str, name: str) -> list[str]:
    """The column names from the first line of ``stream`` (read with a bound)."""
    line = stream.readline(MAX_HEADER_BYTES + 1)
    if not line:
        raise DataError(f"{name} is empty: a CSV file needs a header line naming its columns.")
    if len(line) > MAX_HEADER_BYTES and not line.endswith(b"\n"):
        raise DataError(
            f"{name}: the header line is longer than {MAX_HEADER_BYTES:,} bytes (no line "
            "break found); is it a CSV file? Check the file, or --sep for its separator.")
    try:
        text = line.decode("utf-8-sig").rstrip("\r\n")
    except UnicodeDecodeError as e:
        raise DataError(f"{name}: the header line is not UTF-8 text ({e.reason} at byte "
                        f"{e.start}); is it a CSV file?") from None
    try:
        row = next(csv.reader([text], delimiter=sep))
    except csv.Error as e:
        raise DataError(f"{name}: cannot read the header line: {e}.") from None
    except StopIteration:
        row = []
    return [c.strip() for c in row]


def open_source(path: str, *, sep: str | None = None, stdin=None) -> Source:
    """Open ``path`` (``-`` for standard input) as CSV, gzip CSV or Parquet.

    The format comes from the first bytes (gzip and Parquet magic numbers),
    not from the file name, so piped input works too.  A damaged input
    (truncated or corrupt gzip or Parquet) is a :class:`DataError`.
    """
    require_pyarrow()
    try:
        if path == "-":  # a pipe can block: wait where Ctrl-C is seen
            return call_interruptibly(_open_source, path, sep, stdin)
        return _open_source(path, sep, stdin)
    except DataError:
        raise
    except _read_errors() as e:
        shown = "stdin" if path == "-" else path
        raise DataError(f"cannot read {shown}: {_one_line(e)}") from None


def as_source(data, *, sep: str | None = None) -> Source:
    """A :class:`Source` for a path (see :func:`open_source`) or an Arrow stream.

    Arrow streams: a ``pyarrow.RecordBatchReader``, a ``pyarrow.Table``, or
    any object with ``__arrow_c_stream__`` (a polars DataFrame, a DuckDB
    result); their batches are read once, in order, never gathered.
    """
    if isinstance(data, (str, os.PathLike)):
        return open_source(os.fspath(data), sep=sep)
    pa = require_pyarrow()
    if isinstance(data, pa.Table):
        data = data.to_reader()
    elif not isinstance(data, pa.RecordBatchReader):
        if not hasattr(data, "__arrow_c_stream__"):
            raise TypeError(
                f"expected a file path or an Arrow stream (pyarrow.RecordBatchReader, "
                f"pyarrow.Table, or an object with __arrow_c_stream__ such as a polars "
                f"DataFrame); got {type(data).__name__}.")
        data = pa.RecordBatchReader.from_stream(data)
    if sep is not None:
        raise ValueError("`sep=` applies to CSV files only; leave it out for an Arrow stream.")
    return _arrow_stream_source(data)


def _arrow_stream_source(reader) -> Source:
    used = []

    def batches(needed, types):
        if used:
            raise DataError("an Arrow stream can be read only once; pass a new one.")
        used.append(True)
        for batch in reader:
            yield batch.select(list(needed))

    return Source("the Arrow stream", "arrow", list(reader.schema.names), None, batches)


def _one_line(e: BaseException) -> str:
    """An exception's message on one line (Arrow's can span several)."""
    text = " ".join(str(e).split()) or type(e).__name__
    if isinstance(e, EOFError) or "end-of-stream" in text:
        text += " (the file is truncated)"
    return text


def _open_source(path: str, sep: str | None, stdin) -> Source:
    if path == "-":
        raw = stdin if stdin is not None else sys.stdin.buffer
        if not hasattr(raw, "peek"):
            raw = io.BufferedReader(raw)
        name = "stdin"
        magic = _peek(raw, 4)
        if magic[:4] == PARQUET_MAGIC:
            return _parquet_source(raw.read(), name)
        if magic[:2] == GZIP_MAGIC:
            raw = io.BufferedReader(gzip.GzipFile(fileobj=raw), 1 << 20)
        return _csv_stream_source(raw, name, sep or ",")
    name = path
    if not os.path.exists(path):
        raise DataError(f"cannot open {path!r}: no such file.")
    if os.path.isdir(path):
        raise DataError(f"cannot open {path!r}: it is a directory, not a file.")
    with open(path, "rb") as f:
        magic = f.read(4)
    if sep is None:
        sep = "\t" if path.lower().removesuffix(".gz").endswith((".tsv", ".tab")) else ","
    if magic == PARQUET_MAGIC:
        return _parquet_source(path, name)
    compression = "gzip" if magic[:2] == GZIP_MAGIC else None
    opener = gzip.open if compression else open
    with opener(path, "rb") as f:
        header = _read_header(f, sep, name)

    def batches(needed, types):
        import pyarrow as pa

        stream = pa.input_stream(path, compression=compression)
        return _csv_batches(stream, header, needed, types, sep, skip_rows=1)

    return Source(name, "csv", header, None, batches)


def _csv_stream_source(raw, name: str, sep: str) -> Source:
    header = _read_header(raw, sep, name)
    used = []

    def batches(needed, types):
        import pyarrow as pa

        if used:
            raise DataError("standard input can be read only once.")
        used.append(True)
        return _csv_batches(pa.PythonFile(raw, mode="r"), header, needed, types, sep,
                            skip_rows=0)

    return Source(name, "csv", header, None, batches)


def _csv_batches(stream, header, needed, types, sep, skip_rows):
    import pyarrow as pa
    import pyarrow.csv as pcsv

    # every column's type is fixed here, before any data is parsed: labels as
    # dictionary-encoded strings (parsed into numbers per block), scores as strings
    # (cast per block, so a bad value can be traced to its row)
    column_types = {
        c: pa.string() if types.get(c) == "score" else pa.dictionary(pa.int32(), pa.string())
        for c in needed}
    reader = pcsv.open_csv(
        stream,
        read_options=pcsv.ReadOptions(column_names=header, skip_rows=skip_rows,
                                      block_size=CSV_BLOCK_SIZE),
        parse_options=pcsv.ParseOptions(delimiter=sep),
        convert_options=pcsv.ConvertOptions(include_columns=list(needed),
                                            column_types=column_types,
                                            null_values=list(MISSING_TOKENS),
                                            strings_can_be_null=True,
                                            quoted_strings_can_be_null=True))
    yield from reader


def _parquet_source(path_or_bytes, name: str) -> Source:
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = pa.BufferReader(path_or_bytes) if isinstance(path_or_bytes, bytes) else path_or_bytes
    try:
        pf = pq.ParquetFile(src)
    except pa.ArrowException as e:
        raise DataError(f"cannot read {name} as Parquet: {_one_line(e)}") from None
    columns = list(pf.schema_arrow.names)

    def batches(needed, types):
        return pf.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=list(needed),
                               use_threads=True)

    def group_reader():
        own = pq.ParquetFile(pa.BufferReader(path_or_bytes)
                             if isinstance(path_or_bytes, bytes) else path_or_bytes)

        def read(groups, needed):
            return own.iter_batches(batch_size=PARQUET_BATCH_ROWS, row_groups=list(groups),
                                    columns=list(needed), use_threads=False)

        return read

    md = pf.metadata
    sizes = [md.row_group(i).num_rows for i in range(md.num_row_groups)]
    return Source(name, "parquet", columns, md.num_rows, batches, sizes, group_reader)


def iter_batches(source: Source, needed: list[str], types: dict[str, str] | None = None,
                 *, progress: bool = False, prefetch: int = PREFETCH
                 ) -> Iterator[tuple[int, dict]]:
    """Yield ``(first_row, {column: pyarrow.Array})`` for each record batch.

    ``first_row`` is the 1-based number of the batch's first data row.
    ``types`` marks columns as ``"label"`` (default) or ``"score"`` (floats).
    Arrow parse errors become :class:`DataError`. With ``prefetch > 0`` a
    background thread decodes up to that many batches ahead while the caller
    works on the current one (pyarrow and the counting kernels both release
    the GIL), so decoding and counting overlap.
    """

    source.check_columns(needed)
    types = types or {}
    bar = progress_bar(source) if progress else None
    row = 1
    it = iter(source._open(needed, types))
    if prefetch > 0:
        it = _prefetched(it, prefetch)
    try:
        while True:
            try:
                batch = next(it)
            except StopIteration:
                break
            except _read_errors() as e:
                raise DataError(f"{source.name}: cannot parse the rows after row {row - 1}: "
                                f"{_one_line(e)}") from None
            cols = {c: batch.column(batch.schema.get_field_index(c)) for c in needed}
            yield row, cols
            row += batch.num_rows
            if bar is not None:
                bar.update(batch.num_rows)
    finally:
        close = getattr(it, "close", None)
        if close is not None:
            close()
        if bar is not None:
            bar.close()


def _prefetched(it, depth: int):
    """Iterate ``it`` in a background thread, at most ``depth`` items ahead."""
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in it:
                if not put((True, item)):
                    return
            put((False, None))
        except BaseException as e:  # handed to the consumer, raised there
            put((False, e))

    worker = threading.Thread(target=work, name="fastkappa-reader", daemon=True)
    worker.start()
    interrupted = False
    try:
        while True:
            ok, item = _get(q)
            if ok:
                yield item
            elif item is None:
                return
            else:
                raise item
    except KeyboardInterrupt:
        # the reader may be blocked on input that never comes (a pipe): do not
        # wait for it; it is a daemon thread and stops at its next batch
        interrupted = True
        raise
    finally:
        stop.set()
        if not interrupted:
            worker.join()




def _get(q: queue.Queue):
    """``q.get()`` in short waits: a signal (Ctrl-C) delivered to another thread
    never wakes a blocked main thread, but it sees the signal between waits."""
    while True:
        try:
            return q.get(timeout=WAIT_POLL)
        except queue.Empty:
            continue


def call_interruptibly(fn, *args):
    """``fn(*args)`` on a daemon thread while this one waits in short steps, so a
    read blocked on a pipe cannot keep Ctrl-C from being seen (see :func:`_get`)."""
    from concurrent.futures import Future

    fut: Future = Future()

    def work() -> None:
        try:
            fut.set_result(fn(*args))
        except BaseException as e:  # handed to the caller, raised there
            fut.set_exception(e)

    threading.Thread(target=work, name="fastkappa-open", daemon=True).start()
    return wait_all([fut])[0]


def wait_all(futures) -> list:
    """The results of ``futures`` in order, waiting in short steps (see :func:`_get`)."""
    from concurrent.futures import wait

    pending = set(futures)
    while pending:
        _, pending = wait(pending, timeout=WAIT_POLL)
    return [f.result() for f in futures]


def progress_bar(source: Source):
    """A tqdm bar on stderr over ``source``'s rows (None without tqdm)."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=source.n_rows, unit=" rows", unit_scale=True, file=sys.stderr,
                delay=PROGRESS_DELAY, leave=False, desc=os.path.basename(source.name))


# --------------------------------------------------------------------------- columns


_NUM_HINT = ("labels must be whole numbers or strings; to score continuous predictions "
             "use `fastkappa thresholds`")


class LabelConverter:
    """Turn one column's record batches into label columns, one kind for the whole file.

    The kind (numbers or strings) is fixed by the first batch; a later value
    of the other kind is an error naming its row.
    """

    def __init__(self, name: str, fmt: str) -> None:
        self.name = name
        self.fmt = fmt
        self.kind: str | None = None

    def convert(self, arr, row0: int):
        """``(column, missing_mask or None)`` for one batch."""
        import pyarrow as pa

        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        t = arr.type
        missing = None
        if arr.null_count:
            missing = arr.is_null().to_numpy(zero_copy_only=False)
        if pa.types.is_dictionary(t):
            return self._from_dictionary(arr, row0, missing)
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return self._from_dictionary(arr.dictionary_encode(), row0, missing)
        if pa.types.is_boolean(t):
            vals = arr.fill_null(False).to_numpy(zero_copy_only=False).view(np.uint8)
            return self._numbers(vals, row0, missing)
        if pa.types.is_integer(t):
            vals = (arr.fill_null(0) if missing is not None else arr).to_numpy(
                zero_copy_only=False)
            if vals.dtype.kind == "u" and len(vals) and vals.max() > INT64_MAX:
                i = int(np.flatnonzero(vals > INT64_MAX)[0])
                raise DataError(f"row {row0 + i}: column {self.name!r} holds "
                                f"{vals[i].item()!r}, {_OUT_OF_RANGE}.")
            return self._numbers(vals, row0, missing)
        if pa.types.is_floating(t):
            vals = arr.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
            nan = np.isnan(vals)
            if missing is not None or nan.any():
                missing = nan if missing is None else (missing | nan)
                vals = np.where(missing, 0.0, vals)
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
            raise DataError(
                f"row {row0 + i}: column {self.name!r} holds {value!r}, but earlier rows "
                f"hold {had}; a label column must hold one kind of value.")

    def _from_dictionary(self, arr, row0, missing):
        import pyarrow as pa

        idx = arr.indices
        if idx.null_count:
            idx = idx.fill_null(-1)
        codes = idx.to_numpy(zero_copy_only=False)
        dict_vals = arr.dictionary
        if pa.types.is_string(dict_vals.type) or pa.types.is_large_string(dict_vals.type):
            words = dict_vals.to_pylist()
            used = _used_codes(codes, len(words))
            if self.fmt == "csv":
                codes, used, missing = _blank_tokens(words, codes, used, missing)
            if not len(used):  # every value missing: the kind is still open
                return CodesColumn(codes, np.asarray(words, dtype=object),
                                   kind=self.kind or "str"), missing
            parsed = (_parse_labels([words[j] for j in used])
                      if self.fmt == "csv" and self.kind != "str" else None)
            if parsed is not None:
                nums, bad = parsed
                if bad:  # the first such row in the file
                    i, why = min((int(np.flatnonzero(codes == used[b])[0]), why)
                                 for b, why in bad)
                    raise DataError(f"row {row0 + i}: column {self.name!r} holds "
                                    f"{words[codes[i]]!r}, {why}.")
                cats = np.zeros(len(words), dtype=np.int64)
                cats[used] = nums
                self._set_kind("num", row0, 0, None)
                return CodesColumn(codes, cats, kind="num"), missing
            if self.kind == "num":
                # the first value in file order that is not a number
                first = None
                for j in used:
                    if _parse_labels([words[j]]) is None:
                        i = int(np.flatnonzero(codes == j)[0])
                        first = i if first is None else min(first, i)
                self._set_kind("str", row0, first, words[codes[first]])
            self._set_kind("str", row0, 0, None)
            cats = np.asarray(words, dtype=object)
            return CodesColumn(codes, cats, kind="str"), missing
        # a dictionary of numbers (e.g. a categorical column in Parquet)
        cats = dict_vals.to_numpy(zero_copy_only=False)
        used = _used_codes(codes, len(cats))
        if cats.dtype.kind == "f":
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
                            f"{cats[codes[i]].item()!r}, {_OUT_OF_RANGE}.")
        if len(codes):
            self._set_kind("num", row0, 0, None)
        return CodesColumn(codes, cats, kind="num"), missing


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


def _blank_tokens(words, codes, used, missing):
    """Rows whose word is a missing token that Arrow's exact match left (``" NA"``,
    ``NAN``) become missing too: such words never decide a column's kind."""
    blank = [j for j in used if _is_missing_word(words[j])]
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
                d = decimal.Decimal(w.strip())
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
            for i, w in enumerate(arr.to_pylist()):
                if w is None:
                    continue
                try:
                    float(w)
                except ValueError:
                    raise DataError(
                        f"row {row0 + i}: column {name!r} holds {w!r}, which is not a "
                        "number.") from None
            raise
    elif not (pa.types.is_floating(arr.type) or pa.types.is_integer(arr.type)
              or pa.types.is_decimal(arr.type)):
        raise DataError(f"column {name!r} has type {arr.type}; scores must be numbers.")
    vals = arr.cast(pa.float64()).fill_null(float("nan")).to_numpy(zero_copy_only=False)
    missing = np.isnan(vals)
    return vals, (missing if missing.any() else None)


# --------------------------------------------------------------------------- helpers


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
