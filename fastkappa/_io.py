"""Streaming readers for the command line: CSV (plain or gzip, file or stdin) and Parquet.

Files are read in record batches with pyarrow, only the columns a command
needs, so memory stays bounded whatever the file size. CSV label columns are
read as dictionary-encoded strings whatever they hold: their type is fixed
before the first byte of data is parsed, so a block that happens to look
different (a ``2.0`` after a million ``2``, a ``NA`` in row 10^7) cannot
change a column's type halfway through the file, and every bad value can be
traced to its row. Numbers are parsed from each block's small dictionary
(:mod:`fastkappa._file_columns` turns batches into label columns).  Parquet
string columns are read as dictionary arrays from the file's dictionary pages.

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
import os
import queue
import re
import sys
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass

from ._core.config import (
    CSV_BLOCK_SIZE,
    MAX_HEADER_BYTES,
    PARQUET_BATCH_ROWS,
    PREFETCH,
    PROGRESS_DELAY,
    STREAM_RELEASE_WAIT,
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


#: a number as a CSV writes it: ASCII digits, an optional sign, point and
#: exponent, ASCII spaces around, or an inf/nan spelling (``1_000``, non-ASCII
#: digits and spaces make words, as pandas reads them, although Python's
#: ``int()`` and ``Decimal()`` take them)
NUMBER_WORD = re.compile(r"[ \t\r\n\f\v]*[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)"
                         r"(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))[ \t\r\n\f\v]*")


def number_text(word: str) -> str:
    """``word`` without the ASCII spaces :data:`NUMBER_WORD` allows around a number."""
    return word.strip(" \t\r\n\f\v")


class CommandLineInt(int):
    """A class label typed on the command line that reads as an integer; ``text``
    keeps what was typed, the label itself when the file stores its labels as
    text (a Parquet string column holding ``"10"``)."""

    text: str

    def __new__(cls, text: str) -> CommandLineInt:
        if not NUMBER_WORD.fullmatch(text):  # ``1_0``: text, as a file's word
            raise ValueError(f"{text!r} is not a number")
        # "10.0", "1e3": whole numbers, as a numeric column reads them (exactly)
        d = decimal.Decimal(number_text(text))
        if not d.is_finite() or d != d.to_integral_value() or d.adjusted() > 40:
            raise ValueError(f"{text!r} is not a whole number")
        value = int(d)
        self = super().__new__(cls, value)
        self.text = text
        return self


def as_file_labels(src: Source, columns: list[str], labels, ignore_index):
    """``labels`` and ``ignore_index`` in the type of the file's label ``columns``:
    integers typed on the command line (:class:`CommandLineInt`) are their text
    when a typed source stores any of those columns as text, so ``--labels 2,3,10``
    and ``--ignore-index 10`` name the strings ``"2"``, ``"3"``, ``"10"`` there.

    Declared labels that spell a missing-value token (a class named ``None``,
    ``NA`` or ``-``) are labels in a CSV file's label columns, not missing
    values (:attr:`Source.kept_tokens`); other columns keep the tokens."""
    if labels is not None and not isinstance(labels, (str, bytes)):
        src.kept_tokens = frozenset(
            v.strip() for v in labels if isinstance(v, str) and _is_token(v))
    if not any(src.holds_text(c) for c in columns if c is not None):
        return labels, ignore_index

    def text(v):
        return v.text if isinstance(v, CommandLineInt) else v

    if isinstance(labels, list) and any(isinstance(v, CommandLineInt) for v in labels):
        labels = [text(v) for v in labels]
    return labels, text(ignore_index)


def as_column_label(value, columns):
    """``value`` as the label it names in ``columns`` (arrays already read): an
    integer typed on the command line is its text when they hold text (a CSV
    column of words holding "10"), else unchanged."""
    if isinstance(value, CommandLineInt) and any(
            getattr(getattr(c, "dtype", None), "kind", "") in "OUS" for c in columns):
        return value.text
    return value


def _is_token(word: str) -> bool:
    return word.strip() in MISSING_TOKENS


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
    _open: object = None  # callable(needed, types, kept) -> iterator of RecordBatch
    #: Parquet: rows in each row group (None for CSV)
    row_groups: list[int] | None = None
    _group_reader: object = None  # callable(types) -> callable(groups, needed, batch_size)
    _scale: object = None  # callable(column) -> its ordered categories, or None
    schema: object = None  #: the pyarrow schema of a typed source (Parquet, Arrow)
    #: missing-value tokens that are declared labels: a CSV reader keeps them as
    #: words (the label columns' converters take them as labels, others as missing)
    kept_tokens: frozenset = frozenset()
    #: Parquet: callable() -> (counts(row group, (true, pred)), close), a reader of
    #: the rows counted by pair of values straight from the dictionary pages
    #: (see ``fastkappa._parquet_pages.pair_counts``; None where it cannot read)
    pair_reader: object = None

    def unstored_order(self, column: str) -> bool:
        """Whether ``column`` is an ordered dictionary in the schema whose
        categories the file does not store (an ordered Categorical written
        without dictionary pages: each batch rebuilds its dictionary)."""
        return (self.schema is not None and _ordered_dictionary(self.schema, column)
                and self.ordered_categories(column) is None)

    def holds_text(self, column: str) -> bool:
        """Whether a typed source (Parquet, an Arrow stream) stores ``column`` as
        text: strings, string views, or a dictionary of them.  Always False for
        CSV, whose words are numbers when they all read as numbers."""
        if self.schema is None or self.schema.names.count(column) != 1:
            return False
        pa = require_pyarrow()
        kind = self.schema.field(column).type
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        is_view = getattr(pa.types, "is_string_view", None)  # pyarrow 16 on
        return _is_text(kind) or (is_view is not None and is_view(kind))

    def ordered_categories(self, column: str) -> list | None:
        """The categories of an ordered dictionary column (an ordered Categorical
        written to Parquet), in their order; None for any other column or format.

        As in one call on the Categorical, they declare the classes, unused
        ones included.
        """
        return None if self._scale is None else self._scale(column)

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

    def group_reader(self, types: dict[str, str] | None = None):
        """A reader of whole row groups, for one thread.

        Returns ``read(first_row, groups, needed)``, which yields the record
        batches of the row groups ``groups`` (consecutive, starting at data row
        ``first_row``) decoded on the calling thread alone (each thread works
        on its own file handle), with Arrow errors turned into
        :class:`DataError`.  Only Parquet sources have one.  ``types`` marks
        columns as in :func:`iter_batches`: string label columns come as
        dictionary arrays, score columns as they are stored.
        """

        read = self._group_reader(types)

        def batches(first_row: int, groups: list[int], needed: list[str]) -> Iterator:
            self.check_columns(needed)  # a missing or ambiguous name, before Arrow's KeyError
            row = first_row
            # a unit of small row groups in one batch (it holds under two batches'
            # rows, see row_group_units): one count per unit, not one per fragment
            rows = sum(self.row_groups[g] for g in groups)
            size = rows if rows < 2 * PARQUET_BATCH_ROWS else PARQUET_BATCH_ROWS
            try:
                for batch in read(groups, needed, size):
                    yield batch
                    row += batch.num_rows
            except _read_errors() as e:
                raise DataError(f"{self.name}: cannot parse the rows after row {row - 1}: "
                                f"{_one_line(e)}") from None

        return batches

    def check_columns(self, needed: list[str]) -> None:
        """Raise :class:`DataError` listing the columns that exist."""
        twice = [c for c in dict.fromkeys(needed) if self.columns.count(c) > 1]
        if twice:
            raise DataError(
                f"{self.name} has more than one column named {twice[0]!r}, so which one "
                "to read is ambiguous; give each column its own name.")
        missing = [c for c in needed if c not in self.columns]
        if missing:
            shown = ", ".join(repr(c) for c in self.columns[:50])
            more = f" and {len(self.columns) - 50} more" if len(self.columns) > 50 else ""
            noun = "column" if len(missing) == 1 else "columns"
            hint = ""
            if self.fmt == "csv" and len(self.columns) == 1:
                seps = [s for s in (";", "\t", "|", ",") if s in self.columns[0]]
                if seps:  # one column whose name holds another separator
                    hint = (f" Is the separator {seps[0]!r}? Pass it with --sep (sep= in "
                            "Python).")
                elif not self.columns[0].isprintable():
                    hint = " Is it a CSV or Parquet file?"
            raise DataError(
                f"{self.name} has no {noun} {', '.join(repr(c) for c in missing)}; its "
                f"columns are {shown}{more}.{hint}")


def _peek(stream, n: int) -> bytes:
    if hasattr(stream, "peek"):
        return stream.peek(n)[:n]
    raise AssertionError("stream must be buffered")  # pragma: no cover


def _read_header(stream, sep: str, name: str) -> tuple[list[str], bool]:
    """The column names from the first line of ``stream`` (read with a bound), and
    whether rows may follow (False: the header line ends the file, no line break)."""
    line = stream.readline(MAX_HEADER_BYTES + 1)
    if not line:
        raise DataError(f"{name} is empty: a CSV file needs a header line naming its columns.")
    if b"\r" in line.rstrip(b"\r\n"):
        raise DataError(
            f"{name}: its lines end in a bare carriage return (CR, old Mac line endings); "
            "fastkappa reads lines that end in LF or CRLF. Convert the file first, e.g. "
            "with `tr '\\r' '\\n'`.")
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
    return [c.strip() for c in row], line.endswith(b"\n")


def _separator(sep: str | None) -> str | None:
    """``sep`` as one character: ``\\t`` (as a shell passes ``--sep '\t'``) and
    ``tab`` are a tab; anything longer is a ValueError."""
    if sep is None:
        return None
    sep = {"\\t": "\t", "tab": "\t"}.get(sep, sep)
    if not isinstance(sep, str) or len(sep) != 1:
        raise ValueError(f"the CSV separator must be one character (a tab: '\\t'); got "
                         f"{sep!r}.")
    return sep


def open_source(path: str, *, sep: str | None = None, stdin=None) -> Source:
    """Open ``path`` (``-`` for standard input) as CSV, gzip CSV or Parquet.

    The format comes from the first bytes (gzip and Parquet magic numbers),
    not from the file name, so piped input works too.  A damaged input
    (truncated or corrupt gzip or Parquet) is a :class:`DataError`.
    """
    sep = _separator(sep)
    if path != "-" and not os.path.exists(path):  # before asking for an extra
        raise DataError(f"cannot open {path!r}: no such file.")
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
    # the first batch is read ahead (and handed out first): an ordered dictionary
    # column declares its categories, which only a batch holds
    ahead = []
    columns = list(reader.schema.names)

    def first_batch():
        if not ahead:
            ahead.append(next(iter(reader), None))
        return ahead[0]

    def batches(needed, types, kept=frozenset()):
        if used:
            raise DataError("an Arrow stream can be read only once; pass a new one.")
        used.append(True)
        first = first_batch()
        if first is None:
            return
        yield _plain_strings(first.select(list(needed)))
        for batch in reader:
            yield _plain_strings(batch.select(list(needed)))

    def scale(column):
        if not _ordered_dictionary(reader.schema, column):
            return None
        first = first_batch()
        if first is None:
            return None
        return first.column(columns.index(column)).dictionary.to_pylist()

    return Source("the Arrow stream", "arrow", columns, None, batches, _scale=scale,
                  schema=reader.schema)


def _ordered_dictionary(schema, column: str) -> bool:
    """Whether ``column`` is named once in ``schema`` and is an ordered dictionary
    (an ordered Categorical, a polars Enum)."""
    pa = require_pyarrow()
    if schema.names.count(column) != 1:
        return False
    kind = schema.field(column).type
    return pa.types.is_dictionary(kind) and kind.ordered


def plain_strings(arr):
    """An array whose string views (polars exports text as ``string_view``; a
    Parquet file may store them) are large strings, dictionary values included,
    so the label readers see the string types they know."""
    pa = require_pyarrow()
    is_view = getattr(pa.types, "is_string_view", None)  # pyarrow 16 on
    if is_view is None:
        return arr
    t = arr.type
    if is_view(t):
        return arr.cast(pa.large_string())
    if pa.types.is_dictionary(t) and is_view(t.value_type):
        return pa.DictionaryArray.from_arrays(
            arr.indices, arr.dictionary.cast(pa.large_string()), ordered=t.ordered)
    return arr


def _plain_strings(batch):
    """A batch whose columns are :func:`plain_strings`."""
    pa = require_pyarrow()
    arrays = [plain_strings(arr) for arr in batch.columns]
    if all(a is b for a, b in zip(arrays, batch.columns, strict=True)):
        return batch
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


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
        header, rows_follow = _read_header(f, sep, name)

    def batches(needed, types, kept=frozenset()):
        import pyarrow as pa

        if not rows_follow:  # a header alone, without a line break: no row
            return iter(())
        stream = pa.input_stream(path, compression=compression)
        return _csv_reader(stream, header, needed, types, sep, skip_rows=1, kept=kept)

    return Source(name, "csv", header, None, batches)


class _PythonStream:
    """A Python binary stream as pyarrow reads it, until :meth:`stop`.

    pyarrow reads a Python stream ahead on its own I/O threads, and goes on
    reading after its reader is gone; a thread that calls into Python while
    the interpreter shuts down aborts the process ("terminate called without
    an active exception").  After :meth:`stop` every read is at the end of the
    stream, so pyarrow stops reading and lets go of it.
    """

    __slots__ = ("__weakref__", "_raw", "_stopped")

    def __init__(self, raw) -> None:
        self._raw = raw
        self._stopped = False

    closed = False

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        return b"" if self._stopped else self._raw.read(n)

    def stop(self) -> None:
        self._stopped = True


def _csv_stream_source(raw, name: str, sep: str) -> Source:
    header, rows_follow = _read_header(raw, sep, name)
    rows_follow = rows_follow and _peek(raw, 1) != b""  # pyarrow: "Empty CSV file"
    used = []

    def batches(needed, types, kept=frozenset()):
        import pyarrow as pa

        if used:
            raise DataError("standard input can be read only once.")
        used.append(True)
        if not rows_follow:  # a header alone, without a line break: no row
            return
        stream = _PythonStream(raw)
        released = threading.Event()
        watch = weakref.ref(stream, lambda _: released.set())  # noqa: F841
        reader = _csv_reader(pa.PythonFile(stream, mode="r"), header, needed, types, sep,
                             skip_rows=0, kept=kept)
        try:
            yield from reader
        finally:
            # the reader may be reading ahead on pyarrow's threads: end the
            # stream for it, drop this frame's references (a traceback keeps
            # the frame alive) and wait until pyarrow has let go of the stream
            stream.stop()
            stream = reader = None
            released.wait(STREAM_RELEASE_WAIT)

    return Source(name, "csv", header, None, batches)


def _csv_reader(stream, header, needed, types, sep, skip_rows, kept=frozenset()):
    """A pyarrow streaming CSV reader of ``needed`` columns; the ``kept`` tokens
    are read as words, not as missing values."""
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
        # quoted values may hold line breaks (a comment column): the chunker then
        # follows the quotes, a few percent slower, never out of sync
        parse_options=pcsv.ParseOptions(delimiter=sep, newlines_in_values=True),
        convert_options=pcsv.ConvertOptions(include_columns=list(needed),
                                            column_types=column_types,
                                            null_values=[t for t in MISSING_TOKENS
                                                         if t not in kept],
                                            strings_can_be_null=True,
                                            quoted_strings_can_be_null=True))
    return reader


def _parquet_source(path_or_bytes, name: str) -> Source:
    import pyarrow as pa
    import pyarrow.parquet as pq

    def open_file(read_dictionary=None):
        src = (pa.BufferReader(path_or_bytes) if isinstance(path_or_bytes, bytes)
               else path_or_bytes)
        return pq.ParquetFile(src, read_dictionary=read_dictionary)

    try:
        pf = open_file()
    except pa.ArrowException as e:
        raise DataError(f"cannot read {name} as Parquet: {_one_line(e)}") from None
    schema = pf.schema_arrow
    columns = list(schema.names)

    def as_dictionary(needed, types) -> list[str]:
        """The string label columns: read as dictionary-encoded arrays, straight from
        the file's own dictionary pages (no per-row strings, no hashing)."""
        return [c for c in needed if (types or {}).get(c) != "score"
                and _is_text(schema.field(c).type)]

    def opened(needed, types):
        dictionary = as_dictionary(needed, types)
        return open_file(dictionary) if dictionary else pf

    def batches(needed, types, kept=frozenset()):
        return opened(needed, types).iter_batches(
            batch_size=PARQUET_BATCH_ROWS, columns=list(needed), use_threads=True)

    def group_reader(types=None):
        files: dict[tuple[str, ...], object] = {}  # this thread's own file handles

        def read(groups, needed, batch_size):
            key = tuple(needed)
            if key not in files:
                files[key] = open_file(as_dictionary(needed, types) or None)
            return files[key].iter_batches(batch_size=batch_size,
                                           row_groups=list(groups), columns=list(needed),
                                           use_threads=False)

        return read

    def scale(column):
        if not _ordered_dictionary(schema, column):
            return None
        # a dictionary-encoded column carries the whole Arrow dictionary in every
        # row group (pyarrow writes the categories as the dictionary page and
        # restores the order from the stored schema): one row of the first row
        # group is enough. Plain-encoded ones rebuild a dictionary per batch from
        # its own values, so they declare nothing.
        leaf = [j for j in range(md.num_columns) if md.schema.column(j).path == column]
        if len(leaf) != 1 or not all(md.row_group(g).column(leaf[0]).has_dictionary_page
                                     for g in range(md.num_row_groups)):
            return None
        first = next(pf.iter_batches(batch_size=1, columns=[column], use_threads=False),
                     None)
        return None if first is None else first.column(0).dictionary.to_pylist()

    def pair_reader():
        from ._parquet_pages import PairCounter

        if isinstance(path_or_bytes, bytes):
            data = memoryview(path_or_bytes)
            handle = None

            def read(offset, size):
                return data[offset:offset + size]
        else:
            handle = open(path_or_bytes, "rb")

            def read(offset, size):
                handle.seek(offset)
                return handle.read(size)

        counter = PairCounter(read, md)

        def counts(group, pair):
            if any(schema.names.count(c) != 1 for c in pair):
                return None
            return counter(group, pair, [schema.field(c).type for c in pair])

        return counts, (handle.close if handle is not None else (lambda: None))

    md = pf.metadata
    sizes = [md.row_group(i).num_rows for i in range(md.num_row_groups)]
    return Source(name, "parquet", columns, md.num_rows, batches, sizes, group_reader, scale,
                  schema, pair_reader=pair_reader)


def _is_text(t) -> bool:
    import pyarrow as pa

    return pa.types.is_string(t) or pa.types.is_large_string(t)


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
    it = iter(source._open(needed, types, source.kept_tokens))
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
            try:
                for item in it:
                    if not put((True, item)):
                        return
                put((False, None))
            finally:  # on this thread, where `it` runs: its clean-up may wait
                close = getattr(it, "close", None)
                if close is not None:
                    close()
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
