"""``fastkappa score --by``: per-group tables counted as the file streams, into the
group kernel's layout, and equal to :func:`fastkappa.kappa_by_group` on the same rows."""

from __future__ import annotations

import collections
import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastkappa as fk
from fastkappa import _filecount, _io, files
from fastkappa.cli import main

pa = pytest.importorskip("pyarrow")
pcsv = pytest.importorskip("pyarrow.csv")
pq = pytest.importorskip("pyarrow.parquet")


def _data(n=6_000, n_groups=300, k=5, seed=0, spread=1):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, k, n)
    p = np.clip(t + rng.integers(-1, 2, n), 0, k - 1)
    g = rng.integers(0, n_groups, n) * spread
    return t, p, g


def _write(tmp_path, kind, cols, name="x"):
    path = tmp_path / f"{name}.{kind}"
    table = pa.table(cols)
    if kind == "csv":
        pcsv.write_csv(table, path)
    else:
        pq.write_table(table, path, row_group_size=700)
    return str(path)


@pytest.fixture
def small_batches(monkeypatch):
    """Many batches (and Parquet row groups read in parallel) on a small file."""
    monkeypatch.setattr(_io, "CSV_BLOCK_SIZE", 1 << 12)
    monkeypatch.setattr(_io, "PARQUET_BATCH_ROWS", 500)


def _by(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fk.UndefinedKappaWarning)
        return files._score(path, true="t", pred="p", by="g", **kw).by


def _ref(t, p, g, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fk.UndefinedKappaWarning)
        return fk.kappa_by_group(t, p, g, **kw)


def _assert_same(res, ref):
    assert res.groups.tolist() == ref.groups.tolist()
    np.testing.assert_array_equal(res.n_rows, ref.n_rows)
    np.testing.assert_array_equal(res.confusion, ref.confusion)
    np.testing.assert_array_equal(res.estimate, ref.estimate)  # exact: the same reduction


@pytest.mark.parametrize("kind", ["csv", "parquet"])
@pytest.mark.parametrize("spread", [1, 1 << 24])  # ids through a lookup table / sorted
def test_score_by_equals_kappa_by_group_exactly(tmp_path, small_batches, kind, spread):
    t, p, g = _data(spread=spread)
    path = _write(tmp_path, kind, {"t": t, "p": p, "g": g})
    for weights in (None, "quadratic"):
        _assert_same(_by(path, weights=weights), _ref(t, p, g, weights=weights))


def test_score_by_string_groups_and_classes_met_late(tmp_path, small_batches):
    """String ids; a class first met in a late batch grows every group's table."""
    t, p, g = _data(n=5_000, k=3)
    t[-3:], p[-2:] = 7, 7  # class 7 only at the end of the file
    names = np.array([f"site-{i:03d}" for i in g], dtype=object)
    path = _write(tmp_path, "csv", {"t": t, "p": p, "g": names})
    _assert_same(_by(path, weights="linear"), _ref(t, p, names, weights="linear"))


def test_score_by_declared_labels_missing_from_the_data(tmp_path, small_batches):
    t, p, g = _data(n=3_000, k=3)
    path = _write(tmp_path, "parquet", {"t": t + 1, "p": p + 1, "g": g})
    res = _by(path, labels=[0, 1, 2, 3, 4], weights="quadratic")
    _assert_same(res, _ref(t + 1, p + 1, g, labels=[0, 1, 2, 3, 4], weights="quadratic"))
    assert res.confusion.shape[1:] == (5, 5)


def test_score_by_turns_sparse_past_the_dense_limit(tmp_path, small_batches, monkeypatch):
    """Past DENSE_ENTRIES_MAX the counts go sparse, with the same numbers."""
    t, p, g = _data(n=4_000, n_groups=500)
    path = _write(tmp_path, "csv", {"t": t, "p": p, "g": g})
    turned = []
    original = _filecount.CellCounts._to_sparse

    def to_sparse(self):
        turned.append(1)
        original(self)

    monkeypatch.setattr(_filecount, "DENSE_ENTRIES_MAX", 25 * 64)
    monkeypatch.setattr(_filecount.CellCounts, "_to_sparse", to_sparse)
    _assert_same(_by(path), _ref(t, p, g))
    assert turned


@pytest.mark.parametrize("method", ["percentile", "bca", "asymptotic"])
def test_score_by_intervals_seeded_per_group_as_the_api(tmp_path, small_batches, method):
    t, p, g = _data(n=3_000, n_groups=12)
    path = _write(tmp_path, "parquet", {"t": t, "p": p, "g": g})
    kw = dict(weights="quadratic", method=method, seed=5, n_resamples=200)
    res, ref = _by(path, **kw), _ref(t, p, g, **kw)
    _assert_same(res, ref)
    np.testing.assert_array_equal(res.low, ref.low)
    np.testing.assert_array_equal(res.high, ref.high)


def test_cli_score_by_json_text_and_csv_equal_the_api(tmp_path, capsys):
    t, p, g = _data(n=2_000, n_groups=40)
    path = _write(tmp_path, "csv", {"t": t, "p": p, "g": g})
    ref = _ref(t, p, g, method="percentile", seed=3, n_resamples=200)
    argv = ["score", path, "--true", "t", "--pred", "p", "--by", "g", "--method",
            "percentile", "--seed", "3", "--n-resamples", "200"]
    assert main([*argv, "--format", "json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert [r["group"] for r in res["groups"]] == ref.groups.tolist()
    assert [r["kappa"] for r in res["groups"]] == ref.estimate.tolist()
    assert [r["ci"]["low"] for r in res["groups"]] == ref.low.tolist()
    assert main([*argv, "--format", "csv"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:]
    assert [float(r.split(",")[3]) for r in rows] == ref.estimate.tolist()
    assert main(argv) == 0
    text = capsys.readouterr().out.split("by 'g':\n")[1].splitlines()
    assert text[0].split() == ["group", "rows", "kappa", "low", "high"]
    for line, key, n, kap, low in zip(text[1:], ref.groups, ref.n_rows, ref.estimate, ref.low,
                                      strict=True):
        assert line.split() == [str(key), f"{n:,}", f"{kap:.4f}", f"{low:.4f}",
                                line.split()[-1]]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 4), st.integers(0, 4)),
                         max_size=40), max_size=6),
       st.integers(16, 4000))
def test_cell_counts_count_every_triple(batches, dense_max):
    """Dense or sparse, batch by batch, the entries are the triples' counts."""
    old = _filecount.DENSE_ENTRIES_MAX
    _filecount.DENSE_ENTRIES_MAX = dense_max
    try:
        cells = _filecount.CellCounts()
        for batch in batches:
            arr = np.array(batch, dtype=np.int64).reshape(-1, 3)
            cells.add(arr[:, 0], arr[:, 1], arr[:, 2])
    finally:
        _filecount.DENSE_ENTRIES_MAX = old
    expected = collections.Counter(tuple(x) for batch in batches for x in batch)
    unit, t, p, count = cells.entries()
    got = {(int(u), int(a), int(b)): int(c)
           for u, a, b, c in zip(unit, t, p, count, strict=True) if c}
    assert got == dict(expected)
    assert np.all(np.diff(unit) >= 0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(-(1 << 40), 1 << 40) | st.integers(-50, 50),
                         max_size=30), max_size=6))
def test_key_index_numbers_each_value_once(batches):
    """Lookup table, its hand-over to sorted arrays when ids spread: one id per value."""
    index = _filecount.KeyIndex()
    seen = {}
    for batch in batches:
        ids = index.ids(np.array(batch, dtype=np.int64))
        for v, i in zip(batch, ids.tolist(), strict=True):
            assert seen.setdefault(v, i) == i
            assert index.values[i] == v
    assert len(index) == len(seen)


def test_score_by_too_many_group_tables_is_an_error(tmp_path, monkeypatch):
    from fastkappa import groups

    t, p, g = _data(n=2_000, n_groups=300)
    path = _write(tmp_path, "csv", {"t": t, "p": p, "g": g})
    monkeypatch.setattr(groups, "GROUP_TABLES_MAX_BYTES", 1 << 12)
    with pytest.raises(_io.DataError, match=r"300 groups of 'g' x 5 classes need one 5 x 5 "
                                            r"table per group.*pass a coarser --by column"):
        _by(path)


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_ids_that_are_not_whole_numbers_group_and_cluster_as_in_memory(tmp_path, capsys, kind):
    # by / clusters columns are ids, not labels: 1.5 is a site, 0.25 a patient
    t, p, g = _data(n=1_200, n_groups=6)
    site = g * 0.5 + 1.5
    patient = (np.arange(len(t)) // 4) * 0.25
    path = _write(tmp_path, kind, {"t": t, "p": p, "site": site, "pt": patient})
    res = files.score_file(path, true="t", pred="p", by="site")
    _assert_same(res, _ref(t, p, site))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fk.DegenerateIntervalWarning)
        got = files.score_file(path, true="t", pred="p", clusters="pt", method="asymptotic")
        want = fk.kappa_ci(t, p, clusters=patient, method="asymptotic")
    assert (got.estimate, got.low, got.high) == pytest.approx(
        (want.estimate, want.low, want.high), abs=1e-12)
    argv = ["score", path, "--true", "t", "--pred", "p", "--by", "site", "--clusters", "pt",
            "--method", "asymptotic", "--format", "json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["group"] for r in out["groups"]] == sorted(set(site.tolist()))
    q = np.clip(p + np.where(np.arange(len(t)) % 3 == 0, 1, 0), 0, 4)
    path2 = _write(tmp_path, kind, {"t": t, "p": p, "q": q, "pt": patient}, name="two")
    argv = ["compare", path2, "--true", "t", "--pred", "p", "q", "--clusters", "pt",
            "--n-resamples", "200", "--seed", "0", "--format", "json"]
    assert main(argv) == 0
    json.loads(capsys.readouterr().out)


def test_id_column_of_two_kinds_is_named_as_an_id_column(tmp_path):
    # numbers in the first CSV block, a word later: refused as in memory, with an
    # id column's wording
    n = 4 * _io.CSV_BLOCK_SIZE // 8
    path = tmp_path / "mixed.csv"
    with open(path, "w") as f:
        f.write("t,p,site\n")
        f.writelines(f"{i % 3},{i % 3},{'A' if i == n - 1 else i % 7}\n" for i in range(n))
    with pytest.raises(files.DataError, match=r"column 'site' holds 'A', but earlier rows "
                                              r"hold numbers; an id column must hold one "
                                              r"kind of value"):
        files.score_file(str(path), true="t", pred="p", by="site")


def test_ids_whole_in_one_csv_block_and_fractional_in_another_are_one_id(tmp_path):
    # block 1 holds ids 1 and 2 (integers), a later block 1, 2 and 2.5 (numbers):
    # 1 and 1.0 are one group, as pandas reads the column
    n = 3 * _io.CSV_BLOCK_SIZE // 8
    rng = np.random.default_rng(0)
    t = rng.integers(0, 3, n)
    p = np.where(rng.random(n) < 0.7, t, rng.integers(0, 3, n))
    g = np.where(np.arange(n) < n // 2, 1 + np.arange(n) % 2,
                 np.array([1, 2, 2.5])[np.arange(n) % 3])
    path = tmp_path / "ids.csv"
    with open(path, "w") as f:
        f.write("t,p,g\n")
        f.writelines(f"{a},{b},{c:g}\n" for a, b, c in zip(t, p, g, strict=True))
    res = files.score_file(str(path), true="t", pred="p", by="g")
    ref = _ref(t, p, g)
    assert res.groups.tolist() == ref.groups.tolist() == [1, 2, 2.5]
    np.testing.assert_array_equal(res.n_rows, ref.n_rows)
    np.testing.assert_allclose(res.estimate, ref.estimate, rtol=0, atol=1e-12)
