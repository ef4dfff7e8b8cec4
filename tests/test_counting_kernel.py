"""The confusion counting kernel against a brute-force count.

The kernel has two ways to find a row's cell (through the lookup tables, or
straight from the value when both tables are the plain range), a four-way
split of the increments with a remainder, and blocks of ``_BLOCK`` rows;
each is checked here on values inside and outside the table's range.
"""

from __future__ import annotations

import threading
from unittest import mock

import naive
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastkappa._core.config import PARALLEL_MIN_ROWS
from fastkappa._core.dispatch import chunked, kernels, use_serial_kernels
from fastkappa._core.encoding import int_lut, is_plain_range
from fastkappa._core.stand_ins import ColdStandIn
from fastkappa._kernels import _jit, counting

DTYPES = [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint16]


@st.composite
def columns(draw):
    dtype = draw(st.sampled_from(DTYPES))
    info = np.iinfo(dtype)
    k = draw(st.integers(1, 9))
    lo = draw(st.integers(max(int(info.min), -50), min(int(info.max) - k + 1, 50)))
    n = draw(st.sampled_from([0, 1, 3, 4, 5, 2047, 2048, 2049, 5000]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # mostly in range, some just outside on both sides, some far outside
    vals = rng.integers(lo - 2, lo + k + 2, n)
    far = rng.random(n) < 0.02
    vals[far] = rng.choice([int(info.min), int(info.max)], far.sum())
    vals = np.clip(vals, info.min, info.max).astype(dtype)
    plain = draw(st.booleans())
    slots = np.arange(k) if plain else rng.permutation(k + 2)[:k] % (k + 2)
    off, lut = int_lut(lo, lo + k - 1, slots, k)
    return vals, off, lut, k


@settings(max_examples=60, deadline=None)
@given(columns(), st.data())
def test_kernel_matches_brute_force(col, data):
    t, t_off, t_lut, k = col
    # the other side: same length, its own table over the same classes
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    p = rng.permutation(t) if len(t) else t
    p_off, p_lut = t_off, t_lut.copy()
    s = k + 3
    expected = naive.slot_counts(t, t_off, t_lut, p, p_off, p_lut, s)
    got = counting._accumulate_confusion_serial(t, t_off, t_lut, p, p_off, p_lut, s, False)
    np.testing.assert_array_equal(got[0], expected)
    direct = is_plain_range(t_lut) and is_plain_range(p_lut)
    if direct:
        got = counting._accumulate_confusion_serial(t, t_off, t_lut, p, p_off, p_lut, s, True)
        np.testing.assert_array_equal(got[0], expected)
    parts = counting._accumulate_confusion(t, t_off, t_lut, p, p_off, p_lut, s, direct, 3)
    np.testing.assert_array_equal(parts.sum(axis=0), expected)


def test_kernel_direct_path_with_large_table():
    """Above the four-way split's size limit the single-table loop counts."""
    k = 100  # (k + 3)^2 > 4096 cells
    rng = np.random.default_rng(3)
    t = rng.integers(-3, k + 3, 10_000)
    p = rng.integers(-3, k + 3, 10_000)
    off, lut = int_lut(0, k - 1, np.arange(k), k)
    assert (k + 3) ** 2 > counting._SPLIT_MAX_CELLS
    expected = naive.slot_counts(t, off, lut, p, off, lut, k + 3)
    for direct in (False, True):
        got = counting._accumulate_confusion_serial(t, off, lut, p, off, lut, k + 3, direct)
        np.testing.assert_array_equal(got[0], expected)


def test_is_plain_range():
    assert is_plain_range(int_lut(3, 7, np.arange(5), 5)[1])
    assert not is_plain_range(int_lut(3, 7, np.array([0, 1, 2, 4, 3]), 5)[1])
    # a hole (a value between classes that is not a class) is not plain
    assert not is_plain_range(int_lut(0, 2, np.array([0, 2, 1]), 2)[1])
    assert not is_plain_range(int_lut(0, 1, np.array([0, 3]), 2)[1])


def test_use_serial_kernels_only_on_marked_threads():
    n = 2 * PARALLEL_MIN_ROWS
    rng = np.random.default_rng(0)
    t = rng.integers(0, 4, n)
    p = rng.integers(0, 4, n)
    w = rng.random(n)
    off, lut = int_lut(0, 3, np.arange(4), 4)
    args = (t, off, lut, p, off, lut, 7, True)
    out = {}

    def marked():
        use_serial_kernels()
        out["counts"] = chunked(kernels().confusion, n, *args)
        # a float-summing kernel keeps its fixed blocks
        out["weighted"] = chunked(kernels().confusion_weighted, n, t, off, lut, p, off,
                                  lut, w, 7, True)

    th = threading.Thread(target=marked)
    th.start()
    th.join()
    here = chunked(kernels().confusion, n, *args)
    assert out["counts"].shape[0] == 1 and here.shape[0] > 1
    np.testing.assert_array_equal(out["counts"][0], here.sum(axis=0))
    weighted = chunked(kernels().confusion_weighted, n, t, off, lut, p, off, lut, w, 7,
                       True)
    assert out["weighted"][0].shape == weighted[0].shape
    np.testing.assert_array_equal(out["weighted"][0], weighted[0])


def test_every_serial_twin_has_an_explicit_pair():
    """dispatch.kernels() pairs each counting kernel that has a serial twin, and
    only integer-valued kernels are marked exact (they may run serially on a
    marked thread without changing a float sum)."""
    twins = {name.removesuffix("_serial") for name, obj in vars(counting).items()
             if name.endswith("_serial") and callable(obj)}
    pairs = kernels()
    paired = {pair.parallel.__name__ for pair in pairs}
    assert paired == twins
    for pair in pairs:
        assert pair.serial is getattr(counting, pair.parallel.__name__ + "_serial")
    exact = {pair.parallel.__name__ for pair in pairs if pair.exact}
    assert exact == {"_minmax", "_accumulate_confusion", "_accumulate_confusion_counted",
                     "_accumulate_quadratic_sums", "_accumulate_group_confusion"}


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint64])
def test_extreme_values_land_on_the_invalid_slot(dtype):
    info = np.iinfo(dtype)
    t = np.array([info.min, info.max, 0, 1], dtype=dtype)
    off, lut = int_lut(0, 1, np.arange(2), 2)
    got = counting._accumulate_confusion_serial(t, off, lut, t, off, lut, 5, True)[0]
    np.testing.assert_array_equal(got, naive.slot_counts(t.astype(object), off, lut,
                                                   t.astype(object), off, lut, 5))


@pytest.mark.parametrize("plain", [True, False])
@pytest.mark.parametrize("n", [0, 5, 2048, 4099])
def test_group_kernel_matches_brute_force(plain, n):
    rng = np.random.default_rng(n)
    k, n_groups = 4, 7
    t = rng.integers(-1, k + 1, n)
    p = rng.integers(-1, k + 1, n)
    g = rng.integers(-2, n_groups + 2, n)  # some ids outside the table: the extra slot
    off, lut = int_lut(0, k - 1, np.arange(k) if plain else np.array([2, 0, 3, 1]), k)
    g_slots = np.arange(n_groups) if plain else rng.permutation(n_groups)
    g_off, g_lut = int_lut(0, n_groups - 1, g_slots, n_groups)
    s = k + 3
    expected = np.zeros((n_groups + 1) * s * s, dtype=np.int64)
    for a, b, c in zip(t.tolist(), p.tolist(), g.tolist(), strict=True):
        gi = g_lut[min(max(c - g_off, 0), len(g_lut) - 1)]
        expected[gi * s * s:(gi + 1) * s * s] += naive.slot_counts(
            np.array([a]), off, lut, np.array([b]), off, lut, s)
    direct = plain
    assert is_plain_range(g_lut) is plain and is_plain_range(lut) is plain
    got = counting._accumulate_group_confusion_serial(g, g_off, g_lut, t, off, lut, p, off,
                                                      lut, s, direct, n_groups)
    np.testing.assert_array_equal(got[0], expected)
    parts = counting._accumulate_group_confusion(g, g_off, g_lut, t, off, lut, p, off, lut, s,
                                                 direct, n_groups, 3)
    np.testing.assert_array_equal(parts.sum(axis=0), expected)


def test_flush_groups_places_compact_cells_and_zeroes():
    """The compact (G + 1) x (K + 1)^2 int32 table lands on the s x s layout."""
    rng = np.random.default_rng(1)
    n_groups, k = 3, 4
    rt = rp = k + 1
    s = k + 3
    small = rng.integers(0, 1000, (n_groups + 1) * rt * rp).astype(np.int32)
    acc = rng.integers(0, 10, (n_groups + 1) * s * s).astype(np.int64)
    expected = acc.reshape(n_groups + 1, s, s).copy()
    expected[:, :rt, :rp] += small.reshape(n_groups + 1, rt, rp)
    keep = small.copy()
    counting._flush_groups(small, rt, rp, s, acc)
    np.testing.assert_array_equal(acc.reshape(n_groups + 1, s, s), expected)
    assert not small.any() and keep.any()


@pytest.mark.parametrize("plain", [True, False])
@pytest.mark.parametrize("n", [0, 7, 2048, 5001])
def test_weighted_kernels_match_brute_force(plain, n):
    rng = np.random.default_rng(n + plain)
    k, n_groups = 5, 4
    t = rng.integers(-1, k + 1, n)
    p = rng.integers(-1, k + 1, n)
    g = rng.integers(-1, n_groups + 1, n)
    w = rng.random(n)
    slots = np.arange(k) if plain else np.array([3, 0, 4, 1, 2])
    off, lut = int_lut(0, k - 1, slots, k)
    g_off, g_lut = int_lut(0, n_groups - 1, np.arange(n_groups) if plain
                            else np.array([1, 0, 3, 2]), n_groups)
    s = k + 3

    def slot(v, o, lt):
        return lt[np.clip(v - o, 0, len(lt) - 1)]

    cells = slot(t, off, lut) * s + slot(p, off, lut)
    want_w = np.zeros(s * s)
    np.add.at(want_w, cells, w)
    want_n = np.bincount(cells, minlength=s * s)
    for kern in (counting._accumulate_confusion_weighted_serial,
                 lambda *a: counting._accumulate_confusion_weighted(*a, 3)):
        got_w, got_n = kern(t, off, lut, p, off, lut, w, s, plain)
        np.testing.assert_allclose(got_w.sum(axis=0), want_w, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(got_n.sum(axis=0), want_n)
    gcells = slot(g, g_off, g_lut) * s * s + cells
    size = (n_groups + 1) * s * s
    want_w = np.zeros(size)
    np.add.at(want_w, gcells, w)
    got_w, got_n = counting._accumulate_group_confusion_weighted(
        g, g_off, g_lut, t, off, lut, p, off, lut, w, s, plain, n_groups, 2)
    np.testing.assert_allclose(got_w.sum(axis=0), want_w, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got_n.sum(axis=0), np.bincount(gcells, minlength=size))


@pytest.mark.parametrize("plain", [True, False])
@pytest.mark.parametrize("n", [0, 7, 2048, 5001])
def test_counted_kernel_matches_brute_force(plain, n):
    """Frequency-weighted counts: exact int64 sums, counts beyond 2**53 included."""
    rng = np.random.default_rng(n + plain)
    k = 5
    t = rng.integers(-1, k + 1, n)
    p = rng.integers(-1, k + 1, n)
    # cell sums pass 2**53 (a float64 sum would round them) but stay below 2**63
    c = rng.integers(0, 2**48, n, dtype=np.int64) + (2**52 + 1) * (rng.random(n) < 0.1)
    slots = np.arange(k) if plain else np.array([3, 0, 4, 1, 2])
    off, lut = int_lut(0, k - 1, slots, k)
    s = k + 3
    cells = (lut[np.clip(t - off, 0, len(lut) - 1)] * s
             + lut[np.clip(p - off, 0, len(lut) - 1)])
    want = np.zeros(s * s, dtype=object)  # Python integers: the exact oracle
    for cell, count in zip(cells.tolist(), c.tolist(), strict=True):
        want[cell] += count
    for kern in (counting._accumulate_confusion_counted_serial,
                 lambda *a: counting._accumulate_confusion_counted(*a, 3)):
        got = kern(t, off, lut, p, off, lut, c, s, plain)
        assert got.dtype == np.int64
        assert [int(v) for v in got.sum(axis=0, dtype=object)] == want.tolist()


@settings(max_examples=60, deadline=None)
@given(columns(), st.data())
def test_counted_numpy_path_matches_the_kernel(col, data):
    """Few frequency-weighted rows are counted by NumPy, not compiled: the same
    slots as the kernel's (values far outside the range, every dtype), the same
    exact sums, in either mode."""
    t, off, lut, k = col
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    p = rng.permutation(t) if len(t) else t
    c = rng.integers(0, 2**40, len(t), dtype=np.int64)
    s = k + 3
    want = np.zeros((1, s * s), dtype=np.int64)
    counting._count_block_counted(t, off, lut, p, off, lut, c, s, False, want[0])
    got = counting._counted_numpy(t, off, lut, p, off, lut, c, s)
    np.testing.assert_array_equal(got, want)
    if len(t) <= counting.NUMPY_COUNTED_MAX_ROWS:
        serial = counting._accumulate_confusion_counted_serial(
            t, off, lut, p, off, lut, c, s, is_plain_range(lut))
        np.testing.assert_array_equal(serial, want)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
@pytest.mark.parametrize("off", [-3, 0, 7])
def test_counted_numpy_path_at_the_int64_extremes(dtype, off):
    info = np.iinfo(np.int64)
    t = np.array([info.min, info.min + 1, off - 1, off, off + 1, off + 3, off + 4,
                  info.max - 1, info.max], dtype=np.int64)
    if dtype == np.uint64:  # the kernel reads uint64 as int64 (modulo 2**64)
        t = np.concatenate([t.view(np.uint64),
                            np.array([0, 2**63, 2**64 - 1], dtype=np.uint64)])
    lut = np.array([4, 0, 1, 2, 4], dtype=np.int64)  # slots 0..2 for off+1..off+3
    c = np.arange(1, len(t) + 1, dtype=np.int64)
    want = np.zeros((1, 25), dtype=np.int64)
    counting._count_block_counted(t, off, lut, t[::-1].copy(), off, lut, c, 5, False, want[0])
    got = counting._counted_numpy(t, off, lut, t[::-1].copy(), off, lut, c, 5)
    np.testing.assert_array_equal(got, want)


@settings(max_examples=60, deadline=None)
@given(columns(), st.data())
def test_cold_cache_numpy_count_matches_the_block(col, data):
    """A fresh kernel cache counts serial inputs with NumPy: the same table as the
    block, in either mode (plain range or LUT), for every dtype and range."""
    t, off, lut, k = col
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    p = rng.permutation(t) if len(t) else t
    s = k + 3
    want = np.zeros((1, s * s), dtype=np.int64)
    counting._count_block(t, off, lut, p, off, lut, s, False, want[0],
                          *counting._block_scratch(s))
    np.testing.assert_array_equal(counting._confusion_numpy(t, off, lut, p, off, lut, s),
                                  want)
    # the serial entry on the NumPy branch (as in a fresh cache), then on the block's
    for cold in (True, False):
        with mock.patch.object(counting, "_count_cold", lambda args, cold=cold: cold):
            got = counting._accumulate_confusion_serial(t, off, lut, p, off, lut, s,
                                                        is_plain_range(lut))
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, want)


def test_cold_cache_counts_with_numpy_until_its_budget_is_spent(tmp_path):
    """In a fresh process with an empty kernel cache, the first scores compile no
    counting block (NumPy counts), agree with scikit-learn, and the block is
    compiled once NumPy has spent its budget; then it is known ready."""
    import json
    import os
    import subprocess
    import sys

    code = """
import json, numpy as np
import fastkappa as fk
from fastkappa._kernels import counting
from sklearn.metrics import cohen_kappa_score
rng = np.random.default_rng(0)
y = rng.integers(0, 5, 100_000); a = np.clip(y + rng.integers(-1, 2, 100_000), 0, 4)
first = fk.cohen_kappa(y, a, weights="quadratic")
ok = abs(first - cohen_kappa_score(y, a, weights="quadratic")) < 1e-12
compiled_first = len(getattr(counting._count_block, "overloads", ()))  # none without JIT
counting._cold_counts.budget = 0.0  # spent: the next two counts take the block
fk.cohen_kappa(y, a); fk.cohen_kappa(y, a)
second = fk.cohen_kappa(y, a, weights="quadratic")
print(json.dumps({"ok": ok, "same": second == first, "compiled_first": compiled_first,
                  "compiled_after": len(getattr(counting._count_block, "overloads", ())),
                  "ready": counting._cold_counts.n_ready}))
"""
    # the test session turns the cold paths off (conftest); this process has them
    env = dict(os.environ, FASTKAPPA_CACHE_DIR=str(tmp_path), FASTKAPPA_COLD_SERIAL="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True, timeout=600)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["ok"] and got["same"]
    if os.environ.get("NUMBA_DISABLE_JIT") == "1":
        return  # no compiled overloads to count
    assert got["compiled_first"] == 0
    assert got["compiled_after"] >= 1 and got["ready"] >= 1


def test_weight_stats():
    w = np.array([0.5, 2.0, 0.0, 1.5, 3.0])
    got = counting._weight_stats_serial(w)[0]
    np.testing.assert_allclose(got, [7.0, 0.0, 3.0])
    parts = counting._weight_stats(np.tile(w, 1000), 3)
    assert parts[:, 0].sum() == pytest.approx(7000.0)
    assert parts[:, 1].min() == 0.0 and parts[:, 2].max() == 3.0
    for bad in (np.nan, np.inf, -np.inf):
        assert not np.isfinite(counting._weight_stats_serial(np.append(w, bad))[0, 0])


@pytest.mark.parametrize("off", [-3, 0, 7])
def test_slot_maps_values_outside_the_range_to_the_invalid_entry_without_wrapping(off):
    """``_slot`` compares before subtracting: the int64 extremes and values just outside
    ``[off, off + last]`` land on ``last``, with no overflow (warnings are errors)."""
    last = 5
    info = np.iinfo(np.int64)
    values = [info.min, info.min + 1, off - 2, off - 1, off, off + 1, off + last - 1,
              off + last, off + last + 1, info.max - 1, info.max]
    for v in values:
        want = v - off if off <= v <= off + last else last
        assert int(counting._slot(np.int64(v), np.int64(off), np.int64(last))) == want, v
    # through the counting kernel: int64 columns holding both extremes
    t = np.array([info.min, 0, 1, info.max], dtype=np.int64)
    off0, lut = -1, np.array([3, 0, 1, 3], dtype=np.int64)  # slots 0, 1; 3 = invalid
    got = counting._accumulate_confusion_serial(t, off0, lut, t, off0, lut, 4, False)
    np.testing.assert_array_equal(got.ravel(), naive.slot_counts(t, off0, lut, t, off0,
                                                                 lut, 4))


def test_count_block_scratch():
    """The block kernel counts with the caller's scratch (:func:`_block_scratch`)
    and refuses a cell buffer shorter than a block, counting nothing."""
    t = np.array([0, 1, 1, 2, 2, 2], dtype=np.int64)
    off, lut = int_lut(0, 2, np.arange(3), 3)
    for s in (6, 70):  # four table copies, or none (more than _SPLIT_MAX_CELLS cells)
        tables, buf = counting._block_scratch(s)
        assert tables.shape == ((4, s * s) if s * s <= counting._SPLIT_MAX_CELLS
                                else (0, s * s))
        acc = np.zeros(s * s, dtype=np.int64)
        assert counting._count_block(t, off, lut, t, off, lut, s, False, acc, tables,
                                     buf) == 0
        np.testing.assert_array_equal(acc, naive.slot_counts(t, off, lut, t, off, lut, s))
        acc[:] = 0
        assert counting._count_block(t, off, lut, t, off, lut, s, False, acc, tables,
                                     buf[:-1]) == -1
        assert not acc.any()


def test_warmup_and_the_environment_turn_the_numpy_stand_in_off(monkeypatch):
    """``fastkappa warmup`` (through ``parallel_drivers``) compiles the block, and
    ``FASTKAPPA_COLD_SERIAL=0`` keeps benchmarks on it: no NumPy stand-in then."""
    from fastkappa._core import units

    monkeypatch.setenv("FASTKAPPA_COLD_SERIAL", "1")
    assert _jit.cold_stand_ins()
    with units.parallel_drivers():
        assert not _jit.cold_stand_ins()
    assert _jit.cold_stand_ins()
    monkeypatch.setenv("FASTKAPPA_COLD_SERIAL", "0")
    assert not _jit.cold_stand_ins()


def test_numpy_stand_in_only_below_the_parallel_threshold(monkeypatch):
    """The stand-in's temporaries are O(rows): a serial count of more rows (a
    large table keeps one block) takes the block, whatever the cache holds."""
    from fastkappa._core.config import PARALLEL_MIN_ROWS

    assert counting.COLD_NUMPY_MAX_ROWS <= PARALLEL_MIN_ROWS
    monkeypatch.setenv("FASTKAPPA_COLD_SERIAL", "1")
    monkeypatch.setattr(_jit, "is_ready", lambda kernel, args: False)
    monkeypatch.setattr(counting, "_cold_counts", ColdStandIn(counting.COLD_NUMPY_BUDGET))
    off, lut = int_lut(0, 4, np.arange(5), 5)
    for n, cold in ((1000, True), (counting.COLD_NUMPY_MAX_ROWS, False)):
        t = np.zeros(n, dtype=np.int64)
        args = (t, off, lut, t, off, lut, 8, True, np.zeros(64, np.int64),
                *counting._block_scratch(8))
        assert counting._count_cold(args) is cold
