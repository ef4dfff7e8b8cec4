"""Parquet kernels: dictionary indices decoded from data pages, and their pairs counted.

A dictionary-encoded Parquet column stores, per data page, the dictionary
index of every row in the RLE / bit-packed hybrid encoding.  The reader in
``fastkappa._parquet_pages`` hands each page's bytes to :func:`_rle_hybrid`
and the two label columns' indices to :func:`_count_index_pairs`, so a row
is never turned back into its value.  Both kernels check every read and
index against the buffer's bounds and report a problem by their return
value; they never raise.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit


@jit()
def _uleb(buf, pos, end, bits):
    """The ULEB128 integer at ``buf[pos:end]`` and the offset after it, or
    ``(0, -1)`` when the bytes end first or it runs past ``bits`` bits."""
    value = np.int64(0)
    shift = np.int64(0)
    while True:
        if pos >= end or shift >= bits:
            return np.int64(0), np.int64(-1)
        x = np.int64(buf[pos])
        pos += 1
        value |= (x & 0x7F) << shift
        shift += 7
        if x < 0x80:
            return value, pos


@jit()
def _rle_hybrid(buf, pos, end, width, out, start, n):
    """Decode ``n`` values of the RLE / bit-packed hybrid encoding.

    Reads ``buf[pos:end]`` (uint8) with values ``width`` bits wide (0 to 32)
    and writes them to ``out[start:start + n]`` (int32).  Values are not
    checked against the dictionary's length here: :func:`_count_index_pairs`
    checks every index it reads.  A run is a ULEB128 header:
    an odd header ``2g + 1`` is a bit-packed run of ``8g`` values (packed from
    the lowest bit up, ``g * width`` bytes); an even one ``2c`` repeats the
    next ``ceil(width / 8)`` little-endian bytes ``c`` times.  The last
    bit-packed run may hold padding beyond ``n``.

    Returns the number of values written (``n``), or -1 when the bytes end
    before ``n`` values, a header is malformed, or ``out`` is too short.
    """
    if width < 0 or width > 32 or start < 0 or start + n > out.shape[0] or end > buf.shape[0]:
        return -1
    mask = (np.uint64(1) << np.uint64(width)) - np.uint64(1)
    w = np.uint64(width)
    k = start
    stop = start + n
    while k < stop:
        h, pos = _uleb(buf, pos, end, np.int64(35))  # the run header, at most five bytes
        if pos < 0:
            return -1
        if h & 1:
            groups = h >> 1
            if groups == 0 or pos + groups * width > end:
                return -1
            take = min(groups * 8, stop - k)
            run_end = pos + groups * width
            if width == 0:
                for j in range(take):
                    out[k + j] = 0
                k += take
            elif width <= 8:
                # eight values fill exactly `width` bytes: one 64-bit word per group
                full = take // 8
                for _g in range(full):
                    word = np.uint64(0)
                    for b in range(width):
                        word |= np.uint64(buf[pos + b]) << np.uint64(8 * b)
                    pos += width
                    for j in range(8):
                        v = word & mask
                        out[k + j] = np.int32(v)
                        word >>= w
                    k += 8
                rest = take - full * 8
                if rest:
                    word = np.uint64(0)
                    for b in range(width):
                        word |= np.uint64(buf[pos + b]) << np.uint64(8 * b)
                    for j in range(rest):
                        v = word & mask
                        out[k + j] = np.int32(v)
                        word >>= w
                    k += rest
            else:
                acc = np.uint64(0)
                bits = np.int64(0)
                p = pos
                for j in range(take):
                    while bits < width:
                        acc |= np.uint64(buf[p]) << np.uint64(bits)
                        p += 1
                        bits += 8
                    v = acc & mask
                    out[k + j] = np.int32(v)
                    acc >>= w
                    bits -= width
                k += take
            pos = run_end
        else:
            count = h >> 1
            nbytes = (width + 7) // 8
            if count == 0 or pos + nbytes > end:
                return -1
            v = np.uint64(0)
            for b in range(nbytes):
                v |= np.uint64(buf[pos + b]) << np.uint64(8 * b)
            pos += nbytes
            if v > mask:
                return -1
            take = min(count, stop - k)
            value = np.int32(v)
            for j in range(take):
                out[k + j] = value
            k += take
    return n


#: columns of :func:`_page_headers`'s rows: the page header's own fields 1-7 at
#: 0-7, then those of its data page (v1), dictionary page and data page v2
#: headers at 8-15, 16-23 and 24-31, and the offset of the page's body at 32
HEADER_SLOTS = 32
BODY = HEADER_SLOTS
_NESTED = (5, 7, 8)  # field ids of those three headers in the page header


@jit()
def _page_headers(buf, end, out, stack):
    """Read the Thrift compact-protocol ``PageHeader`` of every page in ``buf[:end]``
    (one column chunk), one row of ``out`` per page.

    Integer and boolean fields 1-7 of a header go to ``out[row, field]``;
    those of the nested data page (field 5), dictionary page (7) and data
    page v2 (8) headers to ``out[row, 8 * (1 + which) + field]``; absent ones
    are -1.  Other fields (statistics, ...) are skipped.  ``out[row, BODY]``
    is where the page's body starts; the next header follows the body's
    ``compressed_page_size`` (field 3) bytes.

    ``stack`` (int64, ``(2, 16)``) is scratch: per nesting depth, the last
    field id read and where that depth's fields go (-1: nowhere).  The caller
    allocates it, so this kernel compiles no array allocation of its own.

    Returns the number of pages; -1 when the bytes end inside a header or a
    body, or hold a list, set or map (no page header has one); -2 when
    ``out`` has too few rows; -3 when ``stack`` has another shape.
    """
    if stack.shape[0] != 2 or stack.shape[1] != 16:
        return -3
    if end > buf.shape[0]:
        end = buf.shape[0]
    last = stack[0]  # last field id per nesting depth
    slot_base = stack[1]  # where a depth's fields go (-1: nowhere)
    pos = np.int64(0)
    row = 0
    while pos < end:
        if row >= out.shape[0]:
            return -2
        for i in range(out.shape[1]):
            out[row, i] = -1
        depth = 0
        last[0] = 0
        slot_base[0] = 0
        while True:
            if pos >= end:
                return -1
            head = np.int64(buf[pos])
            pos += 1
            if head == 0:
                if depth == 0:
                    break
                depth -= 1
                continue
            kind = head & 15
            delta = head >> 4
            if delta:
                field = last[depth] + delta
            else:
                raw, pos = _uleb(buf, pos, end, np.int64(35))
                if pos < 0:
                    return -1
                field = (raw >> 1) ^ -(raw & 1)
            last[depth] = field
            slot = -1
            if slot_base[depth] >= 0 and 0 <= field < 8:
                slot = slot_base[depth] + field
            # a known field of another wire type than the format's is damage: the
            # two booleans (a dictionary page's is_sorted, a v2 page's
            # is_compressed) are booleans, the headers and statistics structs,
            # every other known field an i32
            if slot >= 0 and kind != 12:
                boolean = slot == 19 or slot == 31
                if boolean != (kind == 1 or kind == 2) or (not boolean and kind != 5):
                    return -1
            if kind == 1 or kind == 2:
                if slot >= 0:
                    out[row, slot] = 1 if kind == 1 else 0
            elif kind == 3:
                if pos >= end:
                    return -1
                if slot >= 0:
                    out[row, slot] = np.int64(buf[pos])
                pos += 1
            elif kind == 4 or kind == 5 or kind == 6 or kind == 8:
                raw, pos = _uleb(buf, pos, end, np.int64(70))
                if pos < 0:
                    return -1
                if kind == 8:  # binary: the varint is its length
                    if raw < 0 or pos + raw > end:
                        return -1
                    pos += raw
                elif slot >= 0:
                    out[row, slot] = (raw >> 1) ^ -(raw & 1)
            elif kind == 7:
                pos += 8
            elif kind == 12:
                if depth >= 15:
                    return -1
                base = -1
                if depth == 0:
                    for which in range(3):
                        if field == _NESTED[which]:
                            base = 8 * (1 + which)
                depth += 1
                last[depth] = 0
                slot_base[depth] = base
            else:
                return -1
        stored = out[row, 3]
        if pos > end or stored < 0 or pos + stored > end:
            return -1
        out[row, BODY] = pos
        pos += stored
        row += 1
    return row


@jit()
def _no_null(buf, pos, end, n):
    """Whether one-bit definition levels at ``buf[pos:end]`` say none of ``n``
    values is null, in the form writers use for such a page: one repeated
    run of 1 (a ULEB128 header ``2n``, then the byte 1, then nothing)."""
    count, pos = _uleb(buf, pos, end, np.int64(35))
    return pos >= 0 and count == 2 * n and pos + 1 == end and buf[pos] == 1


@jit()
def _count_index_pairs(a, b, m, n_a, n_b, table):
    """Add the pairs of dictionary indices ``(a[i], b[i])``, ``i < m``, to
    ``table`` (``(copies, n_a * n_b)``: copy ``i % copies`` takes pair ``i``,
    so that with four copies neighbouring rows holding the same pair do not
    wait on one counter).

    Returns 0, or -1 (with nothing added) when an index lies outside its
    dictionary, which a well-formed file never holds.
    """
    copies = table.shape[0]
    if m > a.shape[0] or m > b.shape[0] or table.shape[1] != n_a * n_b \
            or (copies != 1 and copies != 4):
        return -1
    lo = np.int32(0)
    hi_a = np.int32(0)
    hi_b = np.int32(0)
    for i in range(m):  # selects, not branches: the loop vectorises
        x = a[i]
        y = b[i]
        lo = x if x < lo else lo
        lo = y if y < lo else lo
        hi_a = x if x > hi_a else hi_a
        hi_b = y if y > hi_b else hi_b
    if lo < 0 or hi_a >= n_a or hi_b >= n_b:
        return -1
    start = 0
    if copies == 4:
        start = m - m % 4
        for i in range(0, start, 4):
            table[0, a[i] * n_b + b[i]] += 1
            table[1, a[i + 1] * n_b + b[i + 1]] += 1
            table[2, a[i + 2] * n_b + b[i + 2]] += 1
            table[3, a[i + 3] * n_b + b[i + 3]] += 1
    for i in range(start, m):
        table[0, a[i] * n_b + b[i]] += 1
    return 0


@jit()
def _count_page_pairs(buf_a, pages_a, buf_b, pages_b, scratch_a, scratch_b, n_a, n_b,
                      table):
    """Count the pairs of dictionary indices of two columns' data pages into ``table``.

    ``pages_x`` has one row per data page of column x, in order: where its
    bytes start and end in ``buf_x``, its number of values, and whether
    one-bit definition levels (four-byte length, then the levels) come before
    its indices, which then must show no null (:func:`_no_null`).  The
    indices themselves are a bit width byte and the hybrid encoding
    (:func:`_rle_hybrid`).  The two columns' pages hold different numbers
    of rows: each step decodes the next page of the column that is behind
    into its scratch array (as long as its longest page), counts the rows
    both have decoded (:func:`_count_index_pairs`) and moves the rest to
    the front.

    Returns the number of rows counted; -1 when a page is malformed, holds a
    null or an index outside its dictionary, or one column has rows left
    over.
    """
    # np.int64, not a literal 0: numba would compile the callees once more
    # for a literal argument while it infers the loop's types
    have_a = np.int64(0)
    have_b = np.int64(0)
    next_a = 0
    next_b = 0
    counted = 0
    while True:
        side_a = have_a <= have_b
        pages = pages_a if side_a else pages_b
        p = next_a if side_a else next_b
        if p >= pages.shape[0]:
            break
        buf = buf_a if side_a else buf_b
        scratch = scratch_a if side_a else scratch_b
        pos = pages[p, 0]
        end = pages[p, 1]
        n = pages[p, 2]
        start = have_a if side_a else have_b  # 0: the side behind has nothing left
        if pos < 0 or end > buf.shape[0] or n < 0 or start + n > scratch.shape[0]:
            return -1
        if pages[p, 3]:
            if end - pos < 4:
                return -1
            length = (np.int64(buf[pos]) | (np.int64(buf[pos + 1]) << 8)
                      | (np.int64(buf[pos + 2]) << 16) | (np.int64(buf[pos + 3]) << 24))
            # _no_null's test written out here: one more compiled callee costs a
            # fresh process more than these lines
            count, at = _uleb(buf, pos + 4, pos + 4 + length, np.int64(35))
            if length > end - pos - 4 or at < 0 or count != 2 * n \
                    or at + 1 != pos + 4 + length or buf[at] != 1:
                return -1
            pos += 4 + length
        if pos >= end:
            return -1
        if _rle_hybrid(buf, pos + 1, end, np.int64(buf[pos]), scratch, start, n) != n:
            return -1
        if side_a:
            have_a += n
            next_a += 1
        else:
            have_b += n
            next_b += 1
        both = have_a if have_a < have_b else have_b  # not min(): one callee less
        if both:
            if _count_index_pairs(scratch_a, scratch_b, both, n_a, n_b, table) != 0:
                return -1
            for i in range(have_a - both):
                scratch_a[i] = scratch_a[both + i]
            for i in range(have_b - both):
                scratch_b[i] = scratch_b[both + i]
            have_a -= both
            have_b -= both
            counted += both
    if have_a or have_b or next_a < pages_a.shape[0] or next_b < pages_b.shape[0]:
        return -1
    return counted


@jit()
def _snappy_pages(src, starts, stops, out, out_starts, sizes):
    """Decompress the raw Snappy blocks ``src[starts[j]:stops[j]]`` into
    ``out[out_starts[j]:out_starts[j] + sizes[j]]``.

    A block is the uncompressed length (ULEB128), then elements: a literal
    (tag ``...00``: its length in the tag or in the next 1-4 bytes, then the
    bytes) or a copy of earlier output (tags ``01``, ``10``, ``11``: length and
    an offset of 11, 16 or 32 bits; a copy may overlap what it writes).
    Returns 0, or -1 at the first block that is malformed, ends early, refers
    before its start, or does not give exactly ``sizes[j]`` bytes.  One
    kernel, no helper of its own but :func:`_uleb`: each compiled function
    costs a fresh process time to compile.
    """
    if stops.shape[0] != starts.shape[0] or out_starts.shape[0] != starts.shape[0] \
            or sizes.shape[0] != starts.shape[0]:
        return -1
    for j in range(starts.shape[0]):
        pos = starts[j]
        end = stops[j]
        at = out_starts[j]
        size = sizes[j]
        if pos < 0 or at < 0 or size < 0 or at + size > out.shape[0] or end > src.shape[0]:
            return -1
        length, pos = _uleb(src, pos, end, np.int64(35))
        if pos < 0 or length != size:
            return -1
        k = at
        stop = at + size
        while pos < end:
            tag = np.int64(src[pos])
            pos += 1
            kind = tag & 3
            if kind == 0:
                n = tag >> 2
                if n >= 60:
                    extra = n - 59
                    if pos + extra > end:
                        return -1
                    n = np.int64(0)
                    for b in range(extra):
                        n |= np.int64(src[pos + b]) << (8 * b)
                    pos += extra
                n += 1
                if pos + n > end or k + n > stop:
                    return -1
                for i in range(n):
                    out[k + i] = src[pos + i]
                pos += n
                k += n
                continue
            if kind == 1:
                if pos >= end:
                    return -1
                n = ((tag >> 2) & 7) + 4
                offset = ((tag >> 5) << 8) | np.int64(src[pos])
                pos += 1
            else:
                width = 2 if kind == 2 else 4
                if pos + width > end:
                    return -1
                n = (tag >> 2) + 1
                offset = np.int64(0)
                for b in range(width):
                    offset |= np.int64(src[pos + b]) << (8 * b)
                pos += width
            if offset <= 0 or offset > k - at or k + n > stop:
                return -1
            for i in range(n):  # byte by byte: the source may overlap the bytes written
                out[k + i] = out[k - offset + i]
            k += n
        if k != stop:
            return -1
    return 0
