"""The Parquet kernels: page headers, Snappy, the hybrid decoder, levels, pair counts.

Each kernel is checked against an encoder written here (the RLE /
bit-packed hybrid, Thrift's compact protocol), pyarrow's Snappy or a NumPy count, on every
bit width and field type, and on bytes cut short or damaged anywhere: a
kernel reports -1 (or False) and never reads outside its buffer.  These
tests also run with ``NUMBA_DISABLE_JIT=1`` for coverage
(``test_kernel_coverage.py``).
"""

import io

import numpy as np
import pytest

from fastkappa._kernels import parquet as kernels


def uleb(x: int) -> bytes:
    out = bytearray()
    while True:
        b = x & 0x7F
        x >>= 7
        out.append(b | (0x80 if x else 0))
        if not x:
            return bytes(out)


def zigzag(n: int) -> int:
    return (n << 1) ^ (n >> 63)


def thrift(fields) -> bytes:
    """A compact-protocol struct: ``fields`` is a list of ``(id, type, value)``;
    type 12's value is a nested list of fields, type 9's ``(element type, items)``."""
    out = bytearray()
    last = 0
    for fid, kind, value in fields:
        if kind in (1, 2):
            kind = 1 if value else 2
        delta = fid - last
        if 0 < delta <= 15:
            out.append((delta << 4) | kind)
        else:  # the long form: the type, then the id as a zigzag varint
            out.append(kind)
            out += uleb(zigzag(fid))
        last = fid
        if kind == 3:
            out.append(value & 0xFF)
        elif kind in (4, 5, 6):
            out += uleb(zigzag(value))
        elif kind == 7:
            out += b"\x00" * 8
        elif kind == 8:
            out += uleb(len(value)) + value
        elif kind == 9:
            elem, items = value
            out.append((len(items) << 4) | elem)
            for v in items:
                out += uleb(zigzag(v))
        elif kind == 12:
            out += thrift(value)
    out.append(0)
    return bytes(out)


def page_headers(buf, end, out):
    """``_page_headers`` with its scratch stack."""
    return kernels._page_headers(buf, end, out, np.empty((2, 16), dtype=np.int64))


def snappy(src, pos, end, out, at, size):
    """One block through ``_snappy_pages``."""
    one = [np.array([v], dtype=np.int64) for v in (pos, end, at, size)]
    return kernels._snappy_pages(src, one[0], one[1], out, one[2], one[3])


def header(data: bytes, body: bytes = b""):
    """``(pages read, first row)`` of ``_page_headers`` on one header and its body."""
    buf = np.frombuffer(data + body, dtype=np.uint8)
    out = np.zeros((2, kernels.HEADER_SLOTS + 1), dtype=np.int64)
    return page_headers(buf, len(buf), out), out[0]


STATS = [(1, 8, b"\x04" * 8), (2, 8, b"\x00" * 8), (3, 6, 0), (5, 8, b"ab"), (7, 1, True),
         (8, 2, False)]


def test_page_headers_of_each_page_kind():
    data_page = thrift([(1, 5, 0), (2, 5, 9), (3, 5, 5), (4, 5, -12345),
                        (5, 12, [(1, 5, 20000), (2, 5, 8), (3, 5, 3), (4, 5, 3),
                                 (5, 12, STATS)])])
    n, h = header(data_page, b"12345")
    assert n == 1 and h[kernels.BODY] == len(data_page)
    assert h[1:5].tolist() == [0, 9, 5, -12345]
    assert h[9:13].tolist() == [20000, 8, 3, 3]
    assert h[13] == -1 and h[16:32].tolist() == [-1] * 16  # statistics skipped
    dictionary = thrift([(1, 5, 2), (2, 5, 4), (3, 5, 2), (7, 12, [(1, 5, 5), (2, 5, 0),
                                                                 (3, 1, True)])])
    n, h = header(dictionary, b"xy")
    assert n == 1 and h[1] == 2 and h[17:20].tolist() == [5, 0, 1]
    v2 = thrift([(1, 5, 3), (2, 5, 100), (3, 5, 0),
                 (8, 12, [(1, 5, 64), (2, 5, 0), (3, 5, 64), (4, 5, 8), (5, 5, 3), (6, 5, 0),
                          (7, 2, False), (8, 12, STATS)])])
    n, h = header(v2)
    assert n == 1 and h[25:32].tolist() == [64, 0, 64, 8, 3, 0, 0]
    # pages back to back: each header follows the previous page's body
    both = np.frombuffer(data_page + b"12345" + dictionary + b"xy", dtype=np.uint8)
    out = np.zeros((3, kernels.HEADER_SLOTS + 1), dtype=np.int64)
    assert page_headers(both, len(both), out) == 2
    assert out[1, 1] == 2 and out[1, kernels.BODY] == len(data_page) + 5 + len(dictionary)
    assert page_headers(both, len(both), out[:1]) == -2  # too few rows
    for shape in [(2, 15), (1, 16), (3, 16)]:  # scratch of another shape
        assert kernels._page_headers(both, len(both), out, np.empty(shape, np.int64)) == -3


def test_page_headers_skip_unknown_fields_of_every_type():
    data = thrift([(1, 5, 0), (2, 5, 10), (3, 5, 0), (4, 5, 7), (23, 7, None), (22, 3, 1),
                   (20, 6, -(2**40)), (21, 8, b"x" * 300),
                   (5, 12, [(1, 5, 4), (2, 5, 8), (40, 12, [(1, 12, [(2, 3, 1)])]), (3, 5, 3)]),
                   (9, 1, True), (30, 12, [(1, 5, 99)])])
    n, h = header(data)
    assert n == 1 and h[kernels.BODY] == len(data)
    assert h[1:5].tolist() == [0, 10, 0, 7]
    assert h[9:12].tolist() == [4, 8, 3]
    assert h[16:32].tolist() == [-1] * 16  # the unknown struct 30 fills nothing


def test_page_headers_refuse_lists_deep_nesting_and_short_bytes():
    assert header(thrift([(1, 5, 0), (2, 9, (5, [1, 2]))]))[0] == -1
    deep = [(1, 5, 1)]
    for _ in range(17):
        deep = [(1, 12, deep)]
    assert header(thrift(deep))[0] == -1
    full = thrift([(1, 5, 0), (2, 5, 7547), (3, 5, 3), (5, 12, [(1, 5, 1), (5, 12, STATS)]),
                   (9, 6, 2**40)]) + b"abc"
    for cut in range(1, len(full)):  # cut anywhere, the body included
        assert header(full[:cut])[0] == -1
    assert header(b"")[0] == 0  # no page
    assert header(bytes([0x0F]))[0] == -1  # an unknown type
    assert header(bytes([0x05]) + b"\xff" * 10)[0] == -1  # a field id varint too long
    assert header(bytes([0x15]) + b"\xff" * 11)[0] == -1  # an i32 varint too long
    assert header(bytes([0x18, 0x7F]))[0] == -1  # a binary longer than the bytes
    assert header(thrift([(1, 5, 0), (3, 5, -1)]))[0] == -1  # a negative body size


def encode_hybrid(values: np.ndarray, width: int, rng) -> bytes:
    """An RLE / bit-packed hybrid stream of ``values``, runs chosen at random."""
    out = bytearray()
    i = 0
    while i < len(values):
        if rng.random() < 0.5:  # a repeated run of values[i]
            j = i
            while j < len(values) and values[j] == values[i] and j - i < 300:
                j += 1
            out += uleb((j - i) << 1)
            out += int(values[i]).to_bytes((width + 7) // 8, "little")
            i = j
        else:  # a bit-packed run of whole groups of eight (the last padded)
            groups = int(rng.integers(1, 6))
            chunk = (list(values[i:i + 8 * groups]) + [0] * (8 * groups))[:8 * groups]
            bits = 0
            for j, v in enumerate(chunk):
                bits |= int(v) << (j * width)
            out += uleb((groups << 1) | 1)
            out += bits.to_bytes(groups * width, "little")
            i += 8 * groups
    return bytes(out)


@pytest.mark.parametrize("width", [0, 1, 2, 3, 5, 7, 8, 9, 12, 16, 17, 24, 31, 32])
def test_hybrid_decoder_against_an_encoder(width):
    rng = np.random.default_rng(width)
    top = (1 << width) - 1
    for _ in range(12):
        n = int(rng.integers(1, 300))
        values = rng.integers(0, top + 1, n, dtype=np.int64) if top else np.zeros(n, np.int64)
        if rng.random() < 0.5:
            values = np.repeat(values[: n // 7 + 1], 7)[:n]
        raw = np.frombuffer(encode_hybrid(values, width, rng), dtype=np.uint8)
        out = np.full(n + 5, -7, dtype=np.int32)
        assert kernels._rle_hybrid(raw, 0, len(raw), width, out, 2, n) == n
        np.testing.assert_array_equal(out[2:2 + n].astype(np.int64) & 0xFFFFFFFF,
                                      values & 0xFFFFFFFF)
        assert (out[:2] == -7).all() and (out[2 + n:] == -7).all()
        for cut in rng.integers(0, len(raw), 4):  # cut short: -1, never a read past the end
            assert kernels._rle_hybrid(raw, 0, int(cut), width, out, 0, n) in (-1, n)
    assert kernels._rle_hybrid(raw, 0, len(raw), 33, out, 0, 1) == -1
    assert kernels._rle_hybrid(raw, 0, len(raw), width, out, 0, len(out) + 1) == -1
    assert kernels._rle_hybrid(raw, 0, len(raw) + 1, width, out, 0, 1) == -1


def test_hybrid_decoder_refuses_malformed_runs():
    out = np.zeros(16, dtype=np.int32)

    def dec(data, width=3, n=8):
        buf = np.frombuffer(bytes(data), dtype=np.uint8)
        return kernels._rle_hybrid(buf, 0, len(buf), width, out, 0, n)

    assert dec([0x01]) == -1  # a bit-packed run of no group
    assert dec([0x00, 0x01]) == -1  # a repeated run of no value
    assert dec([0x10, 0x09]) == -1  # a repeated value wider than the bit width
    assert dec([0x80] * 6) == -1  # a header longer than five bytes
    assert dec([0x10, 0x05]) == 8 and (out[:8] == 5).all()
    assert dec([0x10, 0x05], n=0) == 0


def test_no_null_reads_one_run_of_ones():
    def check(data, n):
        buf = np.frombuffer(bytes(data), dtype=np.uint8)
        return kernels._no_null(buf, 0, len(buf), n)

    assert check(uleb(20000 << 1) + b"\x01", 20000)
    assert not check(uleb(3) + b"\xff", 8)  # a bit-packed group of ones: left to pyarrow
    assert not check(uleb(10 << 1) + b"\x00", 10)  # a run of nulls
    assert not check(uleb(10 << 1) + b"\x01", 11)  # too few levels
    assert not check(uleb(10 << 1) + b"\x01" + uleb(2) + b"\x01", 11)  # two runs
    assert not check(b"\x80" * 6, 1)  # a header that never ends
    assert not check(b"\x80\x80", 1)  # bytes end inside the header
    assert not check(b"", 0)


@pytest.mark.parametrize(("levels", "n"), [
    (uleb(20000 << 1) + b"\x01", 20000), (uleb(3) + b"\xff", 8), (uleb(10 << 1) + b"\x00", 10),
    (uleb(10 << 1) + b"\x01", 11), (uleb(10 << 1) + b"\x01" + uleb(2) + b"\x01", 11),
    (b"\x80" * 6, 1), (b"\x80\x80", 1), (b"", 0), (uleb(4 << 1) + b"\x01", 4)])
def test_count_page_pairs_reads_levels_as_no_null(levels, n):
    # the pair kernel checks a v1 page's levels inline: it must accept what
    # _no_null accepts and nothing else
    indices = b"\x00" + uleb(n << 1) if n else b"\x00"  # width 0: one repeated run of 0
    body = np.frombuffer(len(levels).to_bytes(4, "little") + levels + indices, dtype=np.uint8)
    pages = np.array([[0, len(body), n, 1]], dtype=np.int64)
    scratch = [np.zeros(max(n, 1), dtype=np.int32) for _ in range(2)]
    table = np.zeros((1, 1), dtype=np.int64)
    got = kernels._count_page_pairs(body, pages, body, pages, scratch[0], scratch[1], 1, 1,
                                    table)
    accepted = kernels._no_null(body, 4, 4 + len(levels), n)
    assert got == (n if accepted else -1)


@pytest.mark.parametrize("copies", [1, 4])
def test_count_index_pairs(copies):
    rng = np.random.default_rng(copies)
    for m in (0, 1, 3, 4, 5, 1001):
        a = rng.integers(0, 7, m + 3).astype(np.int32)
        b = rng.integers(0, 5, m + 3).astype(np.int32)
        table = np.zeros((copies, 35), dtype=np.int64)
        assert kernels._count_index_pairs(a, b, m, 7, 5, table) == 0
        want = np.zeros(35, dtype=np.int64)
        np.add.at(want, a[:m] * 5 + b[:m], 1)
        np.testing.assert_array_equal(table.sum(axis=0), want)
    a[0] = 7  # outside the dictionary: nothing added
    table = np.zeros((copies, 35), dtype=np.int64)
    assert kernels._count_index_pairs(a, b, 5, 7, 5, table) == -1 and not table.any()
    a[0], b[1] = 0, -1
    assert kernels._count_index_pairs(a, b, 5, 7, 5, table) == -1 and not table.any()
    assert kernels._count_index_pairs(a, b, len(a) + 1, 7, 5, table) == -1
    assert kernels._count_index_pairs(a, b, 2, 7, 4, table) == -1  # table of another size
    assert kernels._count_index_pairs(a, b, 2, 7, 5, np.zeros((2, 35), np.int64)) == -1


def page_bytes(values, width, levels, rng):
    """One data page's body: optional no-null levels, the bit width, the indices."""
    body = bytes([width]) + encode_hybrid(np.asarray(values), width, rng)
    if levels:
        run = uleb(len(values) << 1) + b"\x01"
        body = len(run).to_bytes(4, "little") + run + body
    return body


def pages_of(columns, width, levels, rng):
    """``(bytes, pages)`` of one column split into pages of the given lengths."""
    data, rows, at = b"", [], 0
    for values in columns:
        body = page_bytes(values, width, levels, rng)
        rows.append([at, at + len(body), len(values), int(levels)])
        data += body
        at += len(body)
    return np.frombuffer(data, dtype=np.uint8), np.array(rows, dtype=np.int64).reshape(-1, 4)


@pytest.mark.parametrize("levels", [0, 1])
def test_count_page_pairs_lines_up_pages_of_different_lengths(levels):
    rng = np.random.default_rng(7 + levels)
    for _ in range(20):
        n = int(rng.integers(1, 2000))
        a = rng.integers(0, 6, n)
        b = rng.integers(0, 3, n)
        cuts_a = np.sort(rng.choice(np.arange(1, n), min(n - 1, int(rng.integers(0, 6))),
                                    replace=False)) if n > 1 else []
        cuts_b = np.sort(rng.choice(np.arange(1, n), min(n - 1, int(rng.integers(0, 6))),
                                    replace=False)) if n > 1 else []
        buf_a, pages_a = pages_of(np.split(a, cuts_a), 3, levels, rng)
        buf_b, pages_b = pages_of(np.split(b, cuts_b), 2, levels, rng)
        longest = max(int(pages_a[:, 2].max()), int(pages_b[:, 2].max()))
        scratch = [np.zeros(longest, dtype=np.int32) for _ in range(2)]
        table = np.zeros((4, 18), dtype=np.int64)
        got = kernels._count_page_pairs(buf_a, pages_a, buf_b, pages_b, scratch[0],
                                        scratch[1], 6, 3, table)
        assert got == n
        want = np.zeros(18, dtype=np.int64)
        np.add.at(want, a * 3 + b, 1)
        np.testing.assert_array_equal(table.sum(axis=0), want)
        # a column with a row more than the other, or a page cut short: -1
        buf_c, pages_c = pages_of([np.append(b, 0)], 2, levels, rng)
        assert kernels._count_page_pairs(buf_a, pages_a, buf_c, pages_c, scratch[0],
                                         np.zeros(n + 1, np.int32), 6, 3, table) == -1
        short = pages_a.copy()
        short[-1, 1] = short[-1, 0] + 1
        assert kernels._count_page_pairs(buf_a, short, buf_b, pages_b, scratch[0],
                                         scratch[1], 6, 3, table) == -1


def test_count_page_pairs_refuses_bad_pages():
    rng = np.random.default_rng(8)
    buf, pages = pages_of([np.array([0, 1, 2, 1])], 2, 1, rng)
    scratch = [np.zeros(8, dtype=np.int32) for _ in range(2)]

    def run(p_a, b=buf, k=3, size=8):
        return kernels._count_page_pairs(b, p_a, buf, pages, np.zeros(size, np.int32),
                                         scratch[1], k, 3, np.zeros((4, k * 3), np.int64))

    assert run(pages) == 4
    assert run(pages, k=2) == -1  # an index outside the dictionary
    assert run(pages, size=3) == -1  # scratch shorter than the page
    for bad in ([[0, 3, 4, 1]], [[-1, 10, 4, 1]], [[0, 1000, 4, 1]], [[0, 10, -1, 1]]):
        assert run(np.array(bad, dtype=np.int64)) == -1
    nulls = pages_of([np.array([0, 1, 2, 1])], 2, 0, rng)[0]
    body = len(b"\x08\x00").to_bytes(4, "little") + b"\x08\x00" + nulls.tobytes()
    assert run(np.array([[0, len(body), 4, 1]], np.int64),
               b=np.frombuffer(body, np.uint8)) == -1  # levels that hold a null
    huge = (1000).to_bytes(4, "little") + b"\x08\x01"
    assert run(np.array([[0, len(huge), 4, 1]], np.int64),
               b=np.frombuffer(huge, np.uint8)) == -1  # levels longer than the page


@pytest.mark.parametrize("size", [0, 1, 7, 64, 1000, 70000])
def test_snappy_against_pyarrow(size):
    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(size)
    # runs (copies, overlapping ones), repeats from far back (2- and 4-byte offsets),
    # and noise (long literals)
    raw = bytes(np.concatenate([np.repeat(rng.integers(0, 4, size // 8 + 1), 8)[:size // 2],
                                rng.integers(0, 256, size - size // 2)]).astype(np.uint8))
    raw = (raw + raw[: size // 3])[:size] if size else raw
    for data in (raw, bytes(size), raw[::-1]):
        packed = pa.compress(data, codec="snappy", asbytes=True)
        src = np.frombuffer(b"zz" + packed, dtype=np.uint8)
        out = np.full(len(data) + 3, 7, dtype=np.uint8)
        assert snappy(src, 2, len(src), out, 1, len(data)) == 0
        assert out[1:1 + len(data)].tobytes() == data
        assert out[0] == 7 and (out[1 + len(data):] == 7).all()
        assert snappy(src, 2, len(src), out, 1, len(data) + 1) == -1  # wrong size
        for cut in rng.integers(2, len(src), 4):  # cut short: -1
            assert snappy(src, 2, int(cut), out, 1, len(data)) in (-1, 0)


def test_snappy_refuses_malformed_blocks():
    out = np.zeros(32, dtype=np.uint8)

    def dec(data, size):
        src = np.frombuffer(bytes(data), dtype=np.uint8)
        return snappy(src, 0, len(src), out, 0, size)

    assert dec([4, 0x0C, 1, 2, 3, 4], 4) == 0  # a literal of four bytes
    assert dec([5, 0x0C, 1, 2, 3, 4], 5) == -1  # fewer bytes than announced
    assert dec([4, 0x10, 1, 2, 3, 4], 4) == -1  # a literal past the end
    assert dec([8, 0x00, 9, 0x01, 0x01], 8) == -1  # offset 1 but then too long: 1 + 4 + ...
    assert dec([5, 0x00, 9, 0x01, 0x01], 5) == 0 and out[:5].tolist() == [9] * 5
    assert dec([5, 0x00, 9, 0x01, 0x02], 5) == -1  # an offset before the start
    assert dec([5, 0x00, 9, 0x0E, 0x00, 0x00], 5) == -1  # offset 0
    assert dec([6, 0x00, 9, 0x06, 0x01, 0x00], 6) == -1  # copy runs past the size
    assert dec([5, 0x00, 9, 0x0F, 0x01, 0x00, 0x00, 0x00], 5) == 0  # a 4-byte offset
    assert dec([5, 0x00, 9, 0x0F, 0x01], 5) == -1  # the offset cut short
    assert dec([3, 0xF0, 0x02], 3) == -1  # a long literal's length cut short
    assert dec([3, 0xF0, 0x02, 0, 1, 2], 3) == 0  # a long literal (its length in 1 byte)
    assert dec([0x80] * 6, 0) == -1
    assert dec([2, 0x00, 9, 0x01], 2) == -1  # a copy's offset byte missing
    src = np.frombuffer(bytes([1, 0, 5]), dtype=np.uint8)
    pages = [np.array([0], np.int64), np.array([3], np.int64)]
    assert kernels._snappy_pages(src, *pages, out, np.array([0], np.int64),
                                 np.array([1], np.int64)) == 0
    assert kernels._snappy_pages(src, *pages, out, np.array([0], np.int64),
                                 np.array([2], np.int64)) == -1
    assert snappy(src, 0, 3, out, 31, 2) == -1  # output past the end
    assert snappy(src, -1, 3, out, 0, 1) == -1  # a block before the buffer
    assert snappy(src, 0, 4, out, 0, 1) == -1  # a block past the buffer
    assert kernels._snappy_pages(src, *pages, out, np.array([0, 1], np.int64),
                                 np.array([1], np.int64)) == -1  # lengths differ


def test_damaged_bytes_never_crash():
    """Random bytes over the label columns' chunks: None, or what pyarrow reads."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from fastkappa import _parquet_pages

    rng = np.random.default_rng(3)
    n = 1500
    table = pa.table({"t": rng.integers(0, 6, n),
                      "p": pa.array([f"g{v}" for v in rng.integers(0, 4, n)])})
    for codec in ("none", "snappy"):
        for version in ("1.0", "2.0"):
            buf = io.BytesIO()
            pq.write_table(table, buf, compression=codec, data_page_version=version,
                           data_page_size=256)
            raw = buf.getvalue()
            md = pq.ParquetFile(pa.BufferReader(raw)).metadata
            lo = md.row_group(0).column(0).dictionary_page_offset
            hi = lo + sum(md.row_group(0).column(j).total_compressed_size for j in (0, 1))
            for _ in range(60):
                bad = bytearray(raw)
                for at in rng.integers(lo, hi, int(rng.integers(1, 4))):
                    bad[at] = int(rng.integers(0, 256))
                data = memoryview(bytes(bad))
                got = _parquet_pages.pair_counts(
                    lambda off, size, data=data: data[off:off + size], md, 0, ("t", "p"),
                    [pa.int64(), pa.string()])
                if got is None:
                    continue
                assert int(got[2].sum()) == n
                try:  # what pyarrow reads from the same bytes, if it can
                    rows = pq.ParquetFile(pa.BufferReader(bytes(bad))).read_row_group(0)
                except (pa.ArrowException, OSError, ValueError):
                    continue
                want: dict = {}
                for key in zip(rows.column("t").to_pylist(), rows.column("p").to_pylist(),
                               strict=True):
                    want[key] = want.get(key, 0) + 1
                assert dict(zip(zip(got[0].tolist(), got[1].tolist(), strict=True),
                                got[2].tolist(), strict=True)) == want


def test_page_headers_refuse_known_fields_of_another_wire_type():
    ok = [(1, 5, 0), (2, 5, 4), (3, 5, 0)]
    assert header(thrift(ok))[0] == 1
    assert header(thrift([(1, 6, 0), (2, 5, 4), (3, 5, 0)]))[0] == -1  # type as an i64
    assert header(thrift([(1, 1, True), (2, 5, 4), (3, 5, 0)]))[0] == -1  # as a bool
    assert header(thrift([(1, 3, 0), (2, 5, 4), (3, 5, 0)]))[0] == -1  # as a byte
    v2 = [(1, 5, 3), (2, 5, 4), (3, 5, 0), (8, 12, [(1, 5, 4), (7, 1, False)])]
    assert header(thrift(v2))[0] == 1  # is_compressed: a boolean
    v2[3] = (8, 12, [(1, 5, 4), (7, 5, 0)])
    assert header(thrift(v2))[0] == -1  # ... not an i32


def test_chunks_that_claim_too_much_or_the_wrong_size_are_left_to_pyarrow():
    from fastkappa import _parquet_pages

    dictionary = thrift([(1, 5, 2), (2, 5, 8), (3, 5, 8), (7, 12, [(1, 5, 1), (2, 5, 0)])])
    chunk = dictionary + bytes(8)
    for _ in range(30):  # data pages each claiming 2 GiB decompressed
        chunk += thrift([(1, 5, 0), (2, 5, 2**31 - 1), (3, 5, 2),
                         (5, 12, [(1, 5, 1), (2, 5, 8), (3, 5, 3), (4, 5, 3)])]) + b"\x00\x00"
    with pytest.raises(_parquet_pages._Unsupported):
        _parquet_pages._Chunk(chunk, "SNAPPY", "INT64", 0)
    import gzip

    packed = gzip.compress(b"x" * 100)
    assert _parquet_pages._decompress(packed, 100, "gzip") == b"x" * 100
    with pytest.raises(_parquet_pages._Unsupported):
        _parquet_pages._decompress(packed, 101, "gzip")
