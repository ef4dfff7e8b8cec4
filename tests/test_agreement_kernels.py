"""Many-rater kernels: parallel twins equal serial ones, and every body runs as Python."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastkappa._kernels import raters as kern


def _ratings(rng, n=500, n_raters=4, k=5):
    x = rng.integers(0, k, (n, n_raters)).astype(float)
    x[rng.random(x.shape) < 0.2] = np.nan
    return x


def test_parallel_counting_equals_serial(rng):
    x = _ratings(rng)
    codes = np.where(np.isnan(x), -1, x).astype(np.int32)
    want = kern._count_item_classes_serial(codes, 5)
    for chunks in (1, 3, 7):
        np.testing.assert_array_equal(kern._count_item_classes(codes, 5, chunks), want)
    lut = np.arange(5, dtype=np.int32)
    c1 = np.empty(codes.shape, dtype=np.int32)
    t1 = np.zeros((len(x), 5), dtype=np.int32)
    s1 = (np.empty(len(x), np.int64), np.zeros(5, np.int64), np.zeros(4, np.int64))
    inv = kern._encode_numeric_block(x, 0, lut, 5, False, 0.0, 0, len(x), c1, t1, *s1)
    c3, t3, inv3, *s3 = kern._encode_numeric(x, 0, lut, 5, False, 0.0, 3)
    assert inv == inv3 == 0
    np.testing.assert_array_equal(c1, codes)
    np.testing.assert_array_equal(c3, codes)
    np.testing.assert_array_equal(t1, want)
    np.testing.assert_array_equal(t3, want)
    summary = kern._table_summary(codes, want)
    for a, b, c in zip(s1, s3, summary, strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, c)
    np.testing.assert_array_equal(summary[0], (codes >= 0).sum(axis=1))
    np.testing.assert_array_equal(summary[1], want.sum(axis=0))
    np.testing.assert_array_equal(summary[2], (codes >= 0).sum(axis=0))
    parts = kern._scan_values(x.ravel(), True, False, 0.0, 4)
    assert (parts[:, 0].min(), parts[:, 1].max(), parts[:, 2].sum()) == (0, 4, 0)
    # a value outside the table is counted as invalid, and a marked value as missing
    c, t, bad, *_ = kern._encode_numeric(x, 0, np.array([0, 1, 2, 3, 5], np.int32), 5, True,
                                         1.0, 2)
    assert bad == np.count_nonzero(x == 4)
    assert (c[x == 1] == -1).all() and t[:, 1].sum() == 0


#: no Poisson tables: the multinomial draws one binomial per type
#: (tab_of, lo, ptr, prob, alias, cell_prob, cell_alias) of no Poisson table
NO_TABLES = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(1, np.int64), np.empty(0),
             np.empty(0, np.int64), np.empty(0), np.empty(0, np.int64))
#: no rating-row grid: rater columns come from the sparse entries
NO_GRID = (np.empty(0, np.int64), np.zeros(5, np.int64))


def test_parallel_bootstrap_equals_serial():
    counts = np.array([50, 30, 15, 5], dtype=np.int64)
    dense = np.eye(4)  # the dense sums are the type counts themselves
    idx = np.array([[4, -1], [5, 4], [-1, -1], [5, -1]], dtype=np.int64)
    val = np.array([[1.0, 0], [2.0, 1.0], [0, 0], [1.0, 0]])
    seeds = np.arange(1, 9, dtype=np.uint32)
    no_units = np.empty(0, dtype=np.int64)
    unit_type = np.repeat(np.arange(4), counts)
    dense_of = np.arange(4, dtype=np.int64)
    for units in (no_units, unit_type):
        a = kern._bootstrap_type_moments(counts, dense_of, dense, idx, val, 6, units, NO_TABLES,
                                         *NO_GRID, 100, 64, seeds)
        b = kern._bootstrap_type_moments_serial(counts, dense_of, dense, idx, val, 6, units,
                                                NO_TABLES, *NO_GRID, 100, 64, seeds)
        np.testing.assert_array_equal(a, b)
        m = a[:, :4]
        assert (m.sum(axis=1) == 100).all() and m.std(axis=0).min() > 0
        np.testing.assert_array_equal(a[:, 4], m[:, 0] + m[:, 1])
        np.testing.assert_array_equal(a[:, 5], 2 * m[:, 1] + m[:, 3])
    # each replicate draws 100 units: a feature of ones sums to 100
    ones = np.ones((4, 1))
    empty = np.empty((4, 0), np.int64)
    for units in (no_units, unit_type):
        out = kern._bootstrap_type_moments(counts, dense_of, ones, empty, empty.astype(float),
                                           1, units, NO_TABLES, *NO_GRID, 100, 16, seeds)
        assert (out == 100).all()
    # types sharing a dense row: the row's sum is the sum of their draws
    shared = np.array([0, 1, 0, 1], dtype=np.int64)
    two = np.array([[1.0, 0.0], [0.0, 1.0]])
    for units in (no_units, unit_type):
        for kernel in (kern._bootstrap_type_moments, kern._bootstrap_type_moments_serial):
            out = kernel(counts, shared, two, idx, val, 6, units, NO_TABLES, *NO_GRID, 100, 64,
                         seeds)
            assert ((out[:, 0] + out[:, 1]) == 100).all() and out[:, 0].std() > 0
            full = kernel(counts, dense_of, dense, idx, val, 6, units, NO_TABLES, *NO_GRID, 100,
                          64, seeds)
            np.testing.assert_array_equal(out[:, 0], full[:, 0] + full[:, 2])
            np.testing.assert_array_equal(out[:, 1], full[:, 1] + full[:, 3])
            np.testing.assert_array_equal(out[:, 4:], full[:, 4:])


def test_poisson_table_draws_are_multinomial():
    """Many types: one Poisson table look-up per type, topped up to exactly n units."""
    from fastkappa._core.units import poisson_tables

    counts = np.repeat(np.array([80, 40, 20, 10], dtype=np.int64), 60)  # 240 types
    n = int(counts.sum())
    tables = poisson_tables(counts, n)
    assert tables is not None
    dense_of = np.arange(len(counts), dtype=np.int64)
    dense = np.eye(len(counts))
    idx = np.empty((len(counts), 0), np.int64)
    seeds = np.arange(1, 9, dtype=np.uint32)
    no_units = np.empty(0, dtype=np.int64)
    args = (counts, dense_of, dense, idx, idx.astype(float), len(counts), no_units, tables,
            *NO_GRID, n, 2000, seeds)
    a = kern._bootstrap_type_moments(*args)
    np.testing.assert_array_equal(a, kern._bootstrap_type_moments_serial(*args))
    assert (a.sum(axis=1) == n).all()
    # multinomial moments: mean n p_t, variance n p_t (1 - p_t), 2,000 replicates
    p = counts / n
    se_mean = np.sqrt(n * p * (1 - p) / len(a))
    assert (np.abs(a.mean(axis=0) - n * p) < 5 * se_mean).all()
    var = a.var(axis=0, ddof=1)
    assert abs(var.sum() / (n * p * (1 - p)).sum() - 1) < 0.03
    # the draws of distinct types are negatively correlated (-n p_s p_t)
    cov = np.cov(a[:, 0], a[:, 1])[0, 1]
    assert cov == pytest.approx(-n * p[0] * p[1], abs=5 * np.sqrt(var[0] * var[1] / len(a)))


def test_cluster_features_sum_each_clusters_items(rng):
    features = rng.random((3, 4))
    cluster = np.array([0, 2, 0, 1, 2], dtype=np.int64)
    item_type = np.array([0, 1, 2, 2, 1], dtype=np.int64)
    got = kern._cluster_features(cluster, item_type, features, 3)
    want = np.stack([features[[0, 2]].sum(axis=0), features[2], 2 * features[1]])
    np.testing.assert_allclose(got, want, rtol=1e-15)


def test_row_keys_and_dense_counts():
    m = np.array([[0, 1], [1, 0], [0, 1], [2, 2]], dtype=np.int32)
    key = kern._row_keys(m, 0, 3)
    assert key.tolist() == [3, 1, 3, 8]
    counts, first = kern._dense_key_counts(key, 9)
    assert counts[[1, 3, 8]].tolist() == [1, 2, 1] and first[[1, 3, 8]].tolist() == [1, 0, 3]
    assert (first[counts == 0] == -1).all()


SCRIPT = textwrap.dedent("""
    import json, warnings
    import numpy as np
    import pandas as pd
    import fastkappa as fk
    from fastkappa._kernels import raters as kern
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, (80, 5)).astype(float)
    x[rng.random(x.shape) < 0.2] = np.nan
    x[0] = [0, 1, 2, 3, 0]
    items, raters = np.nonzero(~np.isnan(x))
    out = {
        "fast": fk.agreement(x).to_dict()["coefficients"],
        "general": fk.agreement(pd.DataFrame(x)).to_dict()["coefficients"],
        "long": fk.fleiss_kappa(item=items, rater=raters, label=x[items, raters]),
        "ordinal": fk.krippendorff_alpha(x, level="ordinal"),
        "clusters": fk.agreement(x, clusters=np.arange(80) // 3).to_dict()["coefficients"],
        "stream": fk.AgreementAccumulator().update(items, raters, x[items, raters]).compute(
            coefficients="fleiss_kappa")["fleiss_kappa"].estimate,
        "parallel_count": kern._count_item_classes(
            np.where(np.isnan(x), -1, x).astype(np.int32), 4, 3).tolist(),
    }
    res = fk.agreement(x, method="bca", n_resamples=200, seed=0)
    out["ordered"] = all(r.low <= r.estimate <= r.high for r in res)
    res = fk.agreement(x, method="percentile", n_resamples=200, seed=0)
    out["ordered"] &= all(r.low <= r.estimate <= r.high for r in res)
    res = fk.agreement(np.tile(x, (30, 1)), method="percentile", n_resamples=50, seed=0)
    out["ordered"] &= all(r.low <= r.estimate <= r.high for r in res)  # multinomial draws
    print(json.dumps(out))
""")


def _run(disable_jit: bool) -> dict:
    env = dict(os.environ, NUMBA_DISABLE_JIT="1" if disable_jit else "0")
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_kernels_as_plain_python_give_the_same_estimates():
    compiled, python = _run(False), _run(True)
    assert python["ordered"] and compiled["ordered"]
    for key in ("fast", "general", "clusters"):
        for a, b in zip(compiled[key], python[key], strict=True):
            assert a["estimate"] == pytest.approx(b["estimate"], abs=1e-12)
            assert a["standard_error"] == pytest.approx(b["standard_error"], abs=1e-12)
    assert compiled["fast"] == compiled["general"]
    assert compiled["stream"] == pytest.approx(compiled["long"], abs=1e-14)
    for key in ("long", "ordinal", "stream"):
        assert compiled[key] == pytest.approx(python[key], abs=1e-12)
    assert compiled["parallel_count"] == python["parallel_count"]


def test_write_ratings_writes_all_or_nothing():
    codes = np.zeros((3, 2), dtype=np.int32)  # class code + 1; 0: no rating
    codes[0, 0] = 2
    before = codes.copy()
    item, rater = np.array([1, 2, 0]), np.array([0, 1, 0])
    assert kern._write_ratings(codes, item, rater, np.array([0, 1, 0], np.int32)) == 1
    np.testing.assert_array_equal(codes, before)  # nothing written, markers removed
    item, rater = np.array([1, 2, 1]), np.array([0, 1, 0])
    assert kern._write_ratings(codes, item, rater, np.array([0, 1, 0], np.int32)) == 1
    np.testing.assert_array_equal(codes, before)
    assert kern._write_ratings(codes, np.array([1, 2]), np.array([1, 0]),
                               np.array([2, -1], np.int32)) == 0
    assert codes[1, 1] == 3 and codes[2, 0] == -1  # -1: seen with a missing label


def test_write_ratings_missing_label_then_duplicate():
    codes = np.zeros((2, 2), dtype=np.int32)
    # a missing label holds its pair for the batch: the second row is a duplicate
    assert kern._write_ratings(codes, np.array([0, 0]), np.array([1, 1]),
                               np.array([-1, 1], np.int32)) == 1
    assert (codes == 0).all()
    # and in a later batch too: the pair keeps its -1
    assert kern._write_ratings(codes, np.array([0]), np.array([1]),
                               np.array([-1], np.int32)) == 0
    assert codes[0, 1] == -1
    assert kern._write_ratings(codes, np.array([1, 0]), np.array([0, 1]),
                               np.array([0, 1], np.int32)) == 1
    assert codes[0, 1] == -1 and codes[1, 0] == 0


def test_direct_codes_number_new_ids_in_order_of_first_appearance():
    dmap = np.zeros(10, dtype=np.int64)  # code + 1; 0: unseen
    dmap[3] = 1  # id 103 known as code 0
    ids = np.array([107, 103, 101, 107])
    new_ids, out = np.empty(4, np.int64), np.empty(4, np.int64)
    m = kern._direct_codes(ids, np.int64(100), dmap, np.int64(1), new_ids, out)
    assert m == 2 and new_ids[:2].tolist() == [107, 101]
    assert out.tolist() == [1, 0, 2, 1] and dmap[7] == 2 and dmap[1] == 3


def test_scan_kernels_range_and_bad_values(rng):
    x = _ratings(rng).ravel()
    for chunks in (1, 3, 7):
        parts = kern._scan_values(x, True, True, 4.0, chunks)  # 4 marks a missing rating
        assert (parts[:, 0].min(), parts[:, 1].max(), parts[:, 2].sum()) == (0, 3, 0)
    y = x.copy()
    y[[3, 10, 11]] = [2.5, np.inf, -np.inf]
    y[20] = 1e300
    parts = kern._scan_values(y, True, False, 0.0, 2)
    assert parts[:, 2].sum() == 4  # non-whole, both infinities and a huge value
    z = np.where(np.isnan(x), -9, x).astype(np.int16)
    out = np.zeros(3, np.int64)
    kern._scan_int_block(z, 0, len(z), True, -9.0, out)
    assert tuple(out) == (0, 4, 0)
    kern._scan_int_block(z, 0, len(z), False, 0.0, out)
    assert tuple(out) == (-9, 4, 0)
    parts = kern._scan_values(z, False, True, -9.0, 3)
    assert (parts[:, 0].min(), parts[:, 1].max(), parts[:, 2].sum()) == (0, 4, 0)


def test_pattern_keys_match_a_loop(rng):
    x = _ratings(rng)
    n, r = x.shape
    want = np.zeros(n, np.int64)
    for i in range(n):
        for g in range(r):
            if not np.isnan(x[i, g]):
                want[i] += (int(x[i, g]) + 1) * 6**g
    keys = np.empty(n, np.int32)
    cnt = np.zeros(6**r, np.int64)
    kern._pattern_keys_block(x, 0, 6, np.nan, 0, n, keys, cnt)
    np.testing.assert_array_equal(keys, want)
    np.testing.assert_array_equal(cnt, np.bincount(want, minlength=6**r))
    for chunks in (2, 5):
        k2, c2 = kern._pattern_keys(x, 0, 6, np.nan, 6**r, chunks)
        np.testing.assert_array_equal(k2, want)
        np.testing.assert_array_equal(c2, cnt)
    # ratings 1..5 with 3 marking a missing one, on an integer array
    y = np.where(np.isnan(x), 3, x + 1).astype(np.int8)
    k3, _ = kern._pattern_keys(y, 1, 6, 3.0, 6**r, 3)
    miss = (y == 3)
    want3 = ((np.where(miss, 0, y.astype(np.int64))) * 6 ** np.arange(r)).sum(axis=1)
    np.testing.assert_array_equal(k3, want3)


def test_decode_patterns_inverts_the_keys(rng):
    k, r = 4, 3
    rows = rng.integers(-1, k, (50, r))
    keys = ((rows + 1) * (k + 1) ** np.arange(r)).sum(axis=1)
    from fastkappa._raters_input import decode_patterns

    codes, counts = decode_patterns(keys, k, r)
    np.testing.assert_array_equal(codes, rows)
    np.testing.assert_array_equal(counts, [[np.count_nonzero(row == c) for c in range(k)]
                                           for row in rows])


@pytest.mark.parametrize("names", [("conger_kappa",), ("light_kappa",),
                                   ("fleiss_kappa", "conger_kappa", "light_kappa")])
@pytest.mark.parametrize("n_items, n_raters, k, p_missing",
                         [(4000, 4, 3, 0.2), (6000, 3, 6, 0.0), (20000, 5, 5, 0.1),
                          (3000, 2, 4, 0.3)])
def test_rating_grid_columns_equal_the_sparse_ones(names, n_items, n_raters, k, p_missing):
    """Conger's and Light's columns summed out of the grid of rating rows are the
    per-type sums, to the bit, replicate by replicate (same seed, same draws)."""
    from fastkappa import raters as _r
    from fastkappa._raters_input import encode_ratings

    rng = np.random.default_rng(n_items + n_raters)
    truth = rng.integers(0, k, n_items)
    x = np.where(rng.random((n_items, n_raters)) < 0.6, truth[:, None],
                 rng.integers(0, k, (n_items, n_raters))).astype(float)
    x[rng.random(x.shape) < p_missing] = np.nan
    model = _r.build_model(encode_ratings(x), names)
    units = _r.Units(model.features, model.type_counts, None)
    key, spec = _r.rating_grid(model, units, force=True)
    assert len(key) == len(units.counts)
    assert len(np.unique(key)) == len(key) and key.max() < (k + 1) ** n_raters
    if n_raters >= 4:  # many rating rows per grid cell: the grid is the cheaper path
        assert len(_r.rating_grid(model, units)[0]) == len(key)
    seq = np.random.SeedSequence(7)
    original = _r.rating_grid
    try:
        _r.rating_grid = lambda m, u: (key, spec)
        with_grid = _r.bootstrap_moments(model, units, 300, seq)
        _r.rating_grid = lambda m, u: (np.empty(0, np.int64), np.zeros(5, np.int64))
        sparse = _r.bootstrap_moments(model, units, 300, seq)
    finally:
        _r.rating_grid = original
    np.testing.assert_array_equal(with_grid, sparse)
    # and the columns are what they count: each replicate places every item once
    # per rater (Conger: one column per rater and class, items that rater rated)
    if model.c is not None:
        per_rater = with_grid[:, model.c].reshape(len(with_grid), n_raters, k).sum(axis=2)
        rated = (model.row_codes >= 0).sum(axis=0)  # rating-row types each rater rated
        assert per_rater.min() >= 0 and (per_rater.sum(axis=0) > 0).all() and rated.all()


def test_grid_margins_kernel_against_numpy(rng):
    """``_grid_margins``: the one-way margins of a tensor, summed in place."""
    for base, n_axes in ((2, 1), (3, 4), (6, 5), (7, 2)):
        grid = rng.integers(0, 50, base ** n_axes).astype(np.int64)
        marg = np.empty((n_axes, base), dtype=np.int64)
        kern._grid_margins(grid.copy(), grid.size, base, n_axes, marg)
        tensor = grid.reshape((base,) * n_axes)
        for axis in range(n_axes):
            other = tuple(a for a in range(n_axes) if a != axis)
            np.testing.assert_array_equal(marg[axis], tensor.sum(axis=other))


def test_grid_rater_features_kernel_against_numpy(rng):
    """``_grid_rater_features``: Conger's rater-by-class counts and Light's
    pair-by-class-pair counts (both rated) of a grid of rating-row counts."""
    base, n_raters = 4, 4  # k = 3 classes, digit 0 = missing
    k = base - 1
    grid = rng.integers(0, 9, base ** n_raters).astype(np.int64)
    tensor = grid.reshape((base,) * n_raters)
    n_pairs = n_raters * (n_raters - 1) // 2
    out = np.zeros(5 + n_raters * k + n_pairs * k * k)
    work = np.empty_like(grid)
    marg = np.empty((n_raters, base), dtype=np.int64)
    kern._grid_rater_features(grid.copy(), base, n_raters, k, 5, 5 + n_raters * k, work, marg,
                              out)
    assert (out[:5] == 0).all()
    conger = out[5:5 + n_raters * k].reshape(n_raters, k)
    for r in range(n_raters):
        other = tuple(a for a in range(n_raters) if a != r)
        np.testing.assert_array_equal(conger[r], tensor.sum(axis=other)[1:])
    light = out[5 + n_raters * k:].reshape(n_pairs, k, k)
    for p, (g, h) in enumerate(zip(*np.triu_indices(n_raters, 1), strict=True)):
        other = tuple(a for a in range(n_raters) if a not in (g, h))
        np.testing.assert_array_equal(light[p], tensor.sum(axis=other)[1:, 1:])


def test_moment_blocks_from_python_equal_both_drivers():
    """A fresh cache runs the serial driver's blocks from Python (compiling only
    the block of the draw in use, and the grid's columns as sparse entries): the
    same replicates in each of the three draws and with a grid."""
    from fastkappa._core.units import poisson_tables
    from fastkappa.raters import _moment_blocks, _sparse_tail

    counts = np.repeat(np.array([80, 40, 20, 10], dtype=np.int64), 60)
    n = int(counts.sum())
    dense_of = np.arange(len(counts), dtype=np.int64)
    dense = np.eye(len(counts))[:, :7]
    idx = np.full((len(counts), 1), 7, np.int64)
    val = np.linspace(0.5, 2.0, len(counts))[:, None]
    seeds = np.arange(1, 9, dtype=np.uint32)
    # Conger's columns 8..15 of 8 raters and one class: bit r of the key (rater
    # 0 the most significant, one key per type) says whether rater r rated
    grid = (np.arange(len(counts), dtype=np.int64), np.array([2, 8, 1, 8, -1]))
    bits = (grid[0][:, None] >> np.arange(7, -1, -1)) & 1
    features = np.hstack([dense[dense_of], val, bits.astype(float)])
    for units, tables, rater_grid in (
            (np.empty(0, np.int64), NO_TABLES, NO_GRID),                   # binomials
            (np.empty(0, np.int64), poisson_tables(counts, n), NO_GRID),   # Poisson tables
            (np.repeat(dense_of, counts), NO_TABLES, NO_GRID),             # unit draws
            (np.empty(0, np.int64), NO_TABLES, grid)):                     # Conger's grid
        args = (counts, dense_of, dense, idx, val, np.int64(8 + 8), units, tables,
                *rater_grid, np.int64(n), 300, seeds)
        tail = _sparse_tail(features, 7) if len(rater_grid[0]) else (idx, val)
        out = _moment_blocks(*args, sparse=tail)
        np.testing.assert_array_equal(out, kern._bootstrap_type_moments_serial(*args))
        np.testing.assert_array_equal(out, kern._bootstrap_type_moments(*args))
        assert (out[:, :7].sum(axis=1) <= n).all() and out.std(axis=0)[:7].min() > 0


_ARRAY_DTYPES = ("float64", "float32", "int64", "int16", "uint8", "int8")


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_ARRAY_DTYPES), st.integers(0, 3), st.integers(1, 200),
       st.integers(0, 2**32 - 1), st.sampled_from([None, -1.0, 3.0, 2.5]))
def test_cold_stand_ins_for_scan_and_pattern_keys_equal_the_kernels(
        dtype, n_raters_less, n, seed, marker):
    """A fresh kernel cache scans ratings and keys rating rows with NumPy: the
    same (min, max, #bad) and the same keys and counts as the kernels, for
    every dtype, marker and odd value (non-whole, infinite, huge, negative)."""
    from unittest import mock

    from fastkappa import _raters_input as ri

    rng = np.random.default_rng(seed)
    r = 4 - n_raters_less
    x = rng.integers(-1, 5, (n, r)).astype(dtype)
    if x.dtype.kind == "f":
        x[rng.random(x.shape) < 0.2] = np.nan
        odd = rng.random(x.shape) < 0.05
        x[odd] = rng.choice(np.array([0.5, np.inf, -np.inf, 1e30], dtype=dtype), odd.sum())
    has_missing = marker is not None
    miss = marker if has_missing else 0.0
    for cold in (True, False):
        with mock.patch.object(ri._cold_scan, "wanted", lambda *a, cold=cold: cold), \
                mock.patch.object(ri._cold_keys, "wanted", lambda *a, cold=cold: cold):
            is_float = x.dtype.kind == "f"
            scan_missing = has_missing and (is_float or float(miss).is_integer())
            got = np.zeros(3, np.int64)
            ri._scan_serial(x.ravel(), is_float, scan_missing, miss, got)
            want = np.zeros(3, np.int64)
            (kern._scan_float_block if is_float else kern._scan_int_block)(
                x.ravel(), 0, x.size, scan_missing, miss, want)
            np.testing.assert_array_equal(got, want)
            # pattern keys: present values 0..4 (digits 1..5, base 6); -1 and NaN missing
            y = rng.integers(-1, 5, (n, r)).astype("int16" if dtype == "uint8" else dtype)
            if y.dtype.kind == "f":
                y[rng.random(y.shape) < 0.1] = np.nan
            for lay in (y, np.asfortranarray(y), y[::-1]):
                keys, cnt = np.empty(n, np.int32), np.zeros(6 ** r, np.int64)
                ri._pattern_keys_serial(lay, np.int64(0), np.int64(6), -1.0, keys, cnt)
                keys2, cnt2 = np.empty(n, np.int32), np.zeros(6 ** r, np.int64)
                kern._pattern_keys_block(lay, np.int64(0), np.int64(6), -1.0, 0, n, keys2, cnt2)
                np.testing.assert_array_equal(keys, keys2)
                np.testing.assert_array_equal(cnt, cnt2)


def test_many_rater_scores_in_a_fresh_cache_compile_no_scan_or_key_kernel(tmp_path):
    """The first many-rater call of a fresh process on a fresh kernel cache keys
    its rating rows in NumPy: the same estimates as with the kernels, and the
    scan and key kernels are not compiled."""
    code = textwrap.dedent("""
        import json, numpy as np, fastkappa as fk
        from fastkappa._core import dispatch
        rng = np.random.default_rng(5)
        y = rng.integers(0, 4, 3000)
        r = np.stack([np.clip(y + rng.integers(-1, 2, 3000), 0, 3) for _ in range(3)], 1)
        f = r.astype(float); f[rng.random(f.shape) < 0.1] = np.nan
        res = [fk.fleiss_kappa(r), fk.krippendorff_alpha(f, level="ordinal"),
               fk.agreement(f, method="asymptotic").to_dict()]
        k = dispatch.raters_kernels()
        print(json.dumps({"res": res, "compiled": [len(getattr(f, "overloads", ())) for f in (
            k._scan_int_block, k._scan_float_block, k._pattern_keys_block)]}, default=str))
    """)
    outs = []
    for cold in ("1", "0"):
        env = dict(os.environ, FASTKAPPA_CACHE_DIR=str(tmp_path / cold),
                   FASTKAPPA_COLD_SERIAL=cold)
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        outs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert outs[0]["res"] == outs[1]["res"]
    if os.environ.get("NUMBA_DISABLE_JIT") != "1":
        assert outs[0]["compiled"] == [0, 0, 0]
        assert sum(outs[1]["compiled"]) >= 2


@pytest.mark.parametrize("offset", [2**53 - 1, 2**53, 2**54 + 4, 2**58, 2**62 + 100,
                                    -(2**62) - 200])
def test_ratings_beyond_float64_integers_score_as_small_ones(offset):
    """Whole-number ratings from 2**53 on leave the fast path (its rating-row keys
    are float64 sums): the same kappas as the same ratings near zero, fresh cache
    stand-ins or kernels."""
    from unittest import mock

    import fastkappa as fk
    from fastkappa import _raters_input as ri

    x0 = np.random.default_rng(0).integers(0, 3, (40, 3))
    want = fk.fleiss_kappa(x0)
    lo = np.int64(offset)
    for cold in (True, False):
        with mock.patch.object(ri._cold_scan, "wanted", lambda *a, cold=cold: cold), \
                mock.patch.object(ri._cold_keys, "wanted", lambda *a, cold=cold: cold):
            assert fk.fleiss_kappa(x0 + lo) == pytest.approx(want, abs=1e-12)
            two = np.array([[0, 4]] * 5 + [[4, 4]] * 5 + [[0, 0]] * 5) + lo
            assert fk.fleiss_kappa(two) == pytest.approx(1 / 3, abs=1e-12)
            # the stand-in scan clamps as the kernel does
            got, ref = np.zeros(3, np.int64), np.zeros(3, np.int64)
            flat = (x0 + lo).ravel()
            ri._scan_serial(flat, False, False, 0.0, got)
            kern._scan_int_block(flat, 0, len(flat), False, 0.0, ref)
            np.testing.assert_array_equal(got, ref)


def test_float16_ratings_score_whatever_the_cache_holds():
    """float16 (no numba type) takes the general path, in a fresh cache and after."""
    import fastkappa as fk

    x = np.random.default_rng(1).integers(0, 3, (4000, 4))
    assert fk.fleiss_kappa(x.astype(np.float16)) == pytest.approx(fk.fleiss_kappa(x),
                                                                  abs=1e-12)
