"""fastkappa.dask.kappa_by_group: the group kernel per partition, tables merged,
equal to the in-memory :func:`fastkappa.kappa_by_group` on the same rows."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

dask = pytest.importorskip("dask")
pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

import dask.array as da  # noqa: E402

import fastkappa as fk  # noqa: E402
import fastkappa.dask as fkd  # noqa: E402


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


def _rows(n=4_000, n_groups=60, k=5, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, k, n)
    p = np.clip(t + rng.integers(-1, 2, n), 0, k - 1)
    g = rng.integers(0, n_groups, n)
    return t, p, g


def _quiet(f, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fk.UndefinedKappaWarning)
        return f(*a, **kw)


def _assert_same(got, want, exact=True):
    check = (np.testing.assert_array_equal if exact
             else lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12))
    assert got.groups.tolist() == want.groups.tolist()
    assert got.classes.tolist() == want.classes.tolist()
    check(got.confusion, want.confusion)
    check(got.n_rows, want.n_rows)
    check(got.estimate, want.estimate)
    check(got.overall, want.overall)


@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_dask_groups_equal_in_memory_exactly(weights):
    """Classes that only some partitions hold (3 only in the last): merged on one scale."""
    t, p, g = _rows()
    t[t == 3], p[p == 3] = 2, 2
    t[-5:], p[-3:] = 3, 3
    got = _quiet(fkd.kappa_by_group, da.from_array(t, chunks=700), da.from_array(p, chunks=700),
                 da.from_array(g, chunks=700), weights=weights, method="percentile", seed=2,
                 n_resamples=200)
    want = _quiet(fk.kappa_by_group, t, p, g, weights=weights, method="percentile", seed=2,
                  n_resamples=200)
    _assert_same(got, want)
    np.testing.assert_array_equal(got.low, want.low)
    np.testing.assert_array_equal(got.high, want.high)


def test_dask_groups_string_ids_declared_labels_and_counts():
    t, p, g = _rows(n=3_000, n_groups=25, k=3)
    names = np.array([f"s{i:02d}" for i in g], dtype=object)
    f = np.random.default_rng(1).integers(1, 4, len(t))
    frame = pd.DataFrame({"t": t + 1, "p": p + 1, "g": names, "f": f})
    ddf = dd.from_pandas(frame, npartitions=5)
    kw = dict(labels=[0, 1, 2, 3, 4], weights="linear")
    got = _quiet(fkd.kappa_by_group, ddf.t, ddf.p, ddf.g, frequency_weight=ddf.f, **kw)
    want = _quiet(fk.kappa_by_group, t + 1, p + 1, names, frequency_weight=f, **kw)
    _assert_same(got, want)


def test_dask_groups_sample_weight_and_missing_ids():
    t, p, g = _rows(n=3_000, n_groups=20)
    w = np.random.default_rng(3).random(len(t))
    groups = pd.array(g, dtype="Int64")
    groups[::97] = pd.NA
    frame = pd.DataFrame({"t": t, "p": p, "g": groups, "w": w})
    ddf = dd.from_pandas(frame, npartitions=4)
    got = _quiet(fkd.kappa_by_group, ddf.t, ddf.p, ddf.g, sample_weight=ddf.w,
                 nan_policy="omit")
    want = _quiet(fk.kappa_by_group, t, p, groups, sample_weight=w, nan_policy="omit")
    _assert_same(got, want, exact=False)  # float sums added in another order
    with pytest.raises(ValueError, match=r"`groups` is missing .* on 31 rows; pass "
                                         r"nan_policy='omit'"):
        fkd.kappa_by_group(ddf.t, ddf.p, ddf.g)


def test_dask_groups_build_no_accumulator_per_group(monkeypatch):
    """Partitions count with the group kernel, not one CohenKappa per group."""
    t, p, g = _rows(n=4_000, n_groups=400)
    made = []
    original = fk.CohenKappa.__init__

    def counting(self, *a, **kw):
        made.append(1)
        original(self, *a, **kw)

    monkeypatch.setattr(fk.CohenKappa, "__init__", counting)
    got = _quiet(fkd.kappa_by_group, da.from_array(t, chunks=1000),
                 da.from_array(g * 0 + p, chunks=1000), da.from_array(g, chunks=1000))
    assert len(made) < 20  # a few per partition, never per group
    _assert_same(got, _quiet(fk.kappa_by_group, t, p, g))


def test_boolean_group_ids_are_booleans_as_in_memory():
    # they came back as 0 and 1 (in memory: False and True)
    frame = pd.DataFrame({"t": [0, 1, 2, 1, 0, 2, 1, 1] * 10,
                          "p": [0, 1, 2, 2, 0, 1, 1, 0] * 10, "g": [True, False] * 40})
    ddf = dd.from_pandas(frame, npartitions=3)
    got = fkd.kappa_by_group(ddf.t, ddf.p, ddf.g)
    want = fk.kappa_by_group(frame.t, frame.p, frame.g)
    assert got.groups.dtype == bool and got.groups.tolist() == want.groups.tolist()
    np.testing.assert_array_equal(got.estimate, want.estimate)
