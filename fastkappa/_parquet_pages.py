"""Two label columns of a Parquet row group counted from their dictionary indices.

Parquet writers (pyarrow, pandas, polars, DuckDB, Spark) store a column of
few distinct values dictionary-encoded: a dictionary page holds each value
once, and every data page holds each row's index into it, bit-packed.
pyarrow, asked for the column, looks every row's index up and writes out its
value (8 bytes a row for int64); ``fastkappa score`` only needs how many rows
hold each pair of indices.  :func:`pair_counts` therefore reads the two
column chunks' bytes and hands them to the kernels of
``fastkappa._kernels.parquet``, which read the page headers, decompress
Snappy pages (GZIP and zstd pages are decompressed page by page, by zlib and
pyarrow, each checked against the size its header claims),
decode the indices and count the pairs; on two cores this takes less time
than pyarrow's own read of the two columns.

Only the layout every common writer produces is read here: a flat column
(no nesting) of integers, floats or strings, one dictionary page, data pages
(v1 or v2) all dictionary-encoded, no null (definition levels, when the
column may hold nulls, in the one-run form writers use for a page without
any), and no compression, Snappy, GZIP or zstd.  For
anything else, and for any inconsistency in the bytes,
:func:`pair_counts` returns None and the caller reads the row group with
pyarrow as before: this module only ever makes a read faster, never
decides a number that pyarrow would give differently.

References
----------
.. [1] Apache Parquet format, "Encodings" (dictionary, RLE / bit-packed
   hybrid) and ``parquet.thrift`` (page headers),
   https://parquet.apache.org/docs/file-format/
.. [2] Apache Thrift, "Compact protocol",
   https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md
"""

from __future__ import annotations

import numpy as np

#: Parquet codecs (as pyarrow's metadata names them) and pyarrow's names for them
#: (Snappy is decompressed by a kernel, GZIP by zlib; both check the size a
#: page claims, which ``pyarrow.decompress`` does not for every codec: Brotli
#: and LZ4 pages are left to pyarrow's reader)
_CODECS = {"UNCOMPRESSED": None, "SNAPPY": "snappy", "GZIP": "gzip", "ZSTD": "zstd"}
#: the most bytes a chunk's pages may claim decompressed, per byte stored
#: (beyond the first MiB): more is damage, left to pyarrow's reader
_MAX_EXPANSION = 64
#: physical types read here, and the numpy type of their PLAIN values
_PLAIN = {"INT32": "<i4", "INT64": "<i8", "FLOAT": "<f4", "DOUBLE": "<f8",
          "BYTE_ARRAY": None}
#: the most cells of a row group's table of index pairs (8 MiB of counts)
_MAX_CELLS = 1 << 20
#: tables up to this many cells are counted in four interleaved copies
_SPLIT_MAX_CELLS = 4096
_DATA_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2, _INDEX_PAGE = 0, 2, 3, 1
_PLAIN_ENCODINGS = (0, 2)  # PLAIN, PLAIN_DICTIONARY (a dictionary page's own)
_DICTIONARY_ENCODINGS = (2, 8)  # PLAIN_DICTIONARY, RLE_DICTIONARY (data pages)
_RLE = 3


class _Unsupported(Exception):
    """The chunk is not in the layout read here (or its bytes are inconsistent)."""


# --------------------------------------------------------------------------- pages

def _dictionary_values(body: np.ndarray, n: int, physical: str) -> np.ndarray:
    """The ``n`` PLAIN values of a dictionary page."""
    dtype = _PLAIN[physical]
    if n < 0 or n > _MAX_CELLS:
        raise _Unsupported("dictionary size")
    if dtype is not None:
        size = np.dtype(dtype).itemsize
        if len(body) < n * size:
            raise _Unsupported("short dictionary page")
        return np.frombuffer(body, dtype=dtype, count=n).astype(dtype[1:])  # native order
    raw = body.tobytes()
    out = np.empty(n, dtype=object)
    i = 0
    for j in range(n):
        if i + 4 > len(raw):
            raise _Unsupported("short dictionary page")
        size = int.from_bytes(raw[i:i + 4], "little")
        i += 4
        if i + size > len(raw):
            raise _Unsupported("short dictionary page")
        out[j] = raw[i:i + size].decode("utf-8")  # bad UTF-8: pyarrow's own error
        i += size
    return out


def _decompress(body, decompressed_size: int, codec: str):
    """One page decompressed, exactly ``decompressed_size`` bytes long."""
    if codec == "gzip":
        import zlib

        out = zlib.decompress(bytes(body), wbits=31)
    else:  # zstd: pyarrow's codec fails on a size that is not the page's
        import pyarrow as pa

        out = pa.decompress(body, decompressed_size=decompressed_size, codec=codec)
    if len(out) != decompressed_size:
        raise _Unsupported("a page's size")
    return out


def _bytes(buffer) -> np.ndarray:
    """A read-only uint8 view (one kernel signature for file bytes and decompressed pages)."""
    out = np.frombuffer(buffer, dtype=np.uint8)
    out.flags.writeable = False
    return out


class _Chunk:
    """One column chunk's dictionary and its data pages, ready for the kernels.

    ``dictionary``: the values; ``data``: the pages' bytes (decompressed);
    ``pages``: per data page, where its bytes start and end in ``data``, its
    values, and whether definition levels come first (see
    :func:`fastkappa._kernels.parquet._count_page_pairs`).  Raises
    ``_Unsupported`` for a layout not read here.
    """

    def __init__(self, raw, codec: str, physical: str, max_definition: int) -> None:
        from ._kernels.parquet import BODY, HEADER_SLOTS, _no_null, _page_headers, _snappy_pages

        if codec not in _CODECS or physical not in _PLAIN or max_definition > 1:
            raise _Unsupported("codec, type or nesting")
        name = _CODECS[codec]
        self.physical = physical
        data = _bytes(raw)
        rows = 256
        stack = np.empty((2, 16), dtype=np.int64)
        while True:  # about one row per 20,000 values; more rows when a chunk needs them
            h = np.empty((rows, HEADER_SLOTS + 1), dtype=np.int64)
            n_pages = _page_headers(data, len(data), h, stack)
            if n_pages != -2 or rows > len(data):
                break
            rows *= 8
        if n_pages < 1:
            raise _Unsupported("page headers")
        h = h[:n_pages]
        if int(np.maximum(h[:, 2], 0).sum()) > len(data) * _MAX_EXPANSION + (1 << 20):
            raise _Unsupported("pages claim more bytes than they can hold")
        h = h[h[:, 1] != _INDEX_PAGE]
        if not len(h) or h[0, 1] != _DICTIONARY_PAGE or h[0, 18] not in _PLAIN_ENCODINGS:
            raise _Unsupported("no dictionary page first")
        body, size = int(h[0, BODY]), int(h[0, 2])
        page = data[body:body + int(h[0, 3])]
        if name is not None:
            page = _bytes(_decompress(page, decompressed_size=size, codec=name))
        self.dictionary = _dictionary_values(page, int(h[0, 17]), physical)
        h = h[1:]
        v1 = h[:, 1] == _DATA_PAGE
        v2 = h[:, 1] == _DATA_PAGE_V2
        # v1: fields of the data page header at 8-15; v2: at 24-31
        n = np.where(v1, h[:, 9], h[:, 25])
        if not (v1 | v2).all() or not np.isin(np.where(v1, h[:, 10], h[:, 28]),
                                              _DICTIONARY_ENCODINGS).all() \
                or (n < 0).any() or (h[:, 2] < 0).any():
            raise _Unsupported("data pages")
        if ((h[v2, 26] != 0) | (h[v2, 30] > 0) | (h[v2, 29] > h[v2, 3])
                | (h[v2, 27] != n[v2])).any():
            raise _Unsupported("data page v2 with nulls, repetition levels or other rows")
        for j in np.flatnonzero(v2 & (h[:, 29] > 0)):  # a v2 page's levels: all 1
            body = int(h[j, BODY])
            if not max_definition or not _no_null(data, body, body + int(h[j, 29]),
                                                   int(n[j])):
                raise _Unsupported("data page v2 levels")
        if max_definition and (h[v1, 11] != _RLE).any():
            raise _Unsupported("definition levels")
        # a v2 page keeps its levels (h[29] bytes) uncompressed before the values
        skip = np.where(v2, np.maximum(h[:, 29], 0), 0)
        start = h[:, BODY] + skip
        stop = h[:, BODY] + h[:, 3]
        squeezed = v1 | (h[:, 31] != 0)  # a v2 page may leave its values uncompressed
        if name is None or not squeezed.any():
            self.data = data
        elif name == "snappy":  # every page in one kernel call
            sizes = np.where(squeezed, h[:, 2] - skip, stop - start)
            if (sizes < 0).any():
                raise _Unsupported("page sizes")
            out_stop = np.cumsum(sizes)
            out_start = out_stop - sizes
            out = np.empty(int(out_stop[-1]) if len(sizes) else 0, dtype=np.uint8)
            plain = np.flatnonzero(~squeezed)
            for j in plain:  # v2 values stored uncompressed: copied as they are
                out[out_start[j]:out_stop[j]] = data[start[j]:stop[j]]
            todo = np.flatnonzero(squeezed)
            if _snappy_pages(data, start[todo], stop[todo], out, out_start[todo],
                             sizes[todo]) != 0:
                raise _Unsupported("snappy")
            self.data = _bytes(out)
            start, stop = out_start, out_stop
        else:
            parts = []
            for j in range(len(h)):
                part = data[start[j]:stop[j]]
                if squeezed[j]:
                    part = _bytes(_decompress(part, decompressed_size=int(h[j, 2] - skip[j]),
                                              codec=name))
                parts.append(part)
            sizes = np.array([len(x) for x in parts], dtype=np.int64)
            stop = np.cumsum(sizes)
            start = stop - sizes
            self.data = _bytes(np.concatenate(parts)) if parts else data[:0]
        self.pages = np.stack([start, stop, n, v1 * max_definition], axis=1).astype(np.int64)
        self.pages = np.ascontiguousarray(self.pages)
        self.rows = int(n.sum())


def _count_pages(columns: list[_Chunk], n_rows: int, buffers) -> np.ndarray:
    """The table of index pairs of two columns' chunks (flat, true-major)."""
    from ._kernels.parquet import _count_page_pairs

    n_a, n_b = (len(c.dictionary) for c in columns)
    if n_a * n_b > _MAX_CELLS or any(c.rows != n_rows for c in columns):
        raise _Unsupported("too many pairs, or rows")
    for k, c in enumerate(columns):  # scratch as long as the column's longest page
        longest = int(c.pages[:, 2].max()) if len(c.pages) else 0
        if len(buffers[k]) < longest:
            buffers[k] = np.empty(max(longest, 2 * len(buffers[k])), dtype=np.int32)
    copies = 4 if n_a * n_b <= _SPLIT_MAX_CELLS else 1
    table = np.zeros((copies, n_a * n_b), dtype=np.int64)
    a, b = columns
    counted = _count_page_pairs(a.data, a.pages, b.data, b.pages, buffers[0], buffers[1],
                                n_a, n_b, table)
    if counted != n_rows:
        raise _Unsupported("pages")
    return table.sum(axis=0)


def _as_arrow(values: np.ndarray, physical: str, kind) -> np.ndarray:
    """Dictionary values as the NumPy type of the column's Arrow type ``kind``
    (unsigned and narrow integers are stored as INT32 or INT64)."""
    import pyarrow as pa

    if pa.types.is_integer(kind) and physical in ("INT32", "INT64"):
        target = np.dtype(kind.to_pandas_dtype())
        stored = np.int32 if physical == "INT32" else np.int64
        if target.itemsize * 8 > np.dtype(stored).itemsize * 8:
            raise _Unsupported("integer width")
        if target.kind == "u" and target.itemsize == np.dtype(stored).itemsize:
            return values.view(target)
        narrowed = values.astype(target)
        if not np.array_equal(narrowed, values):
            raise _Unsupported("integer out of its type's range")
        return narrowed
    if pa.types.is_floating(kind) and physical in ("FLOAT", "DOUBLE") \
            and not pa.types.is_float16(kind):
        return values.astype(np.dtype(kind.to_pandas_dtype()), copy=False)
    if (pa.types.is_string(kind) or pa.types.is_large_string(kind)) \
            and physical == "BYTE_ARRAY":
        return values
    raise _Unsupported(f"type {kind}")


class PairCounter:
    """Counts the rows of a file's row groups by pair of values (one per thread).

    ``read(offset, size)`` returns the file's bytes; ``md`` is the file's
    ``pyarrow.parquet.FileMetaData``.  The index buffers (a page or two) are
    kept from one row group to the next.
    """

    def __init__(self, read, md) -> None:
        self.read = read
        self.md = md
        self.buffers = [np.empty(1 << 16, dtype=np.int32) for _ in range(2)]

    def __call__(self, row_group: int, columns: tuple[str, str], kinds):
        """See :func:`pair_counts`."""
        return pair_counts(self.read, self.md, row_group, columns, kinds, self.buffers)


def pair_counts(read, md, row_group: int, columns: tuple[str, str], kinds, buffers=None):
    """The rows of one row group counted by their pair of values in two columns.

    ``read(offset, size)`` returns the file's bytes; ``md`` is the file's
    ``pyarrow.parquet.FileMetaData`` and ``kinds`` the two columns' Arrow
    types (the values come back in their NumPy types); ``buffers`` are two
    int32 scratch arrays (made here when None).  Returns ``(true values,
    predicted values, counts)``: the distinct pairs the row group holds
    (NumPy arrays; strings as object arrays) and how many rows hold each; or
    None when a chunk is not in the layout read here (see the module's notes).
    """
    group = md.row_group(row_group)
    if buffers is None:
        buffers = [np.empty(1 << 16, dtype=np.int32) for _ in range(2)]
    leaves = [md.schema.column(j).path for j in range(md.num_columns)]
    pages = []
    try:
        for column in columns:
            if leaves.count(column) != 1:
                return None
            j = leaves.index(column)
            leaf = md.schema.column(j)
            chunk = group.column(j)
            if leaf.max_repetition_level or not chunk.has_dictionary_page \
                    or chunk.file_path:
                return None
            start = chunk.dictionary_page_offset
            if start is None or start <= 0:
                return None
            raw = read(start, chunk.total_compressed_size)
            if len(raw) != chunk.total_compressed_size:
                return None
            pages.append(_Chunk(raw, chunk.compression, chunk.physical_type,
                                leaf.max_definition_level))
        table = _count_pages(pages, group.num_rows, buffers)
        dt, dp = (_as_arrow(c.dictionary, c.physical, kind)
                  for c, kind in zip(pages, kinds, strict=True))
    except (_Unsupported, IndexError, ValueError, OverflowError, UnicodeDecodeError,
            OSError, MemoryError):  # damaged pages: pyarrow's own read explains them
        return None
    except Exception as e:
        import pyarrow as pa

        if isinstance(e, pa.ArrowException):
            return None
        raise
    cells = np.flatnonzero(table)
    return dt[cells // len(dp)], dp[cells % len(dp)], table[cells]
