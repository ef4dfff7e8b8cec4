"""fastkappa.dask (via fastkappa.dask_agreement): Dask collections equal the in-memory result."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fastkappa as fk

dd = pytest.importorskip("dask.dataframe")
dask = pytest.importorskip("dask")
import fastkappa.dask as fkd  # noqa: E402  (dask is there: a broken module fails)
import fastkappa.dask_agreement as fkda  # noqa: E402


@pytest.fixture
def long_frame(rng):
    n, n_raters = 300, 4
    truth = rng.integers(0, 4, n)
    x = np.where(rng.random((n, n_raters)) < 0.6, truth[:, None],
                 rng.integers(0, 4, (n, n_raters))).astype(float)
    x[rng.random(x.shape) < 0.2] = np.nan
    items, raters = np.nonzero(~np.isnan(x))
    order = rng.permutation(len(items))  # an item's ratings spread over partitions
    df = pd.DataFrame({"doc": np.array([f"d{i}" for i in items[order]], dtype=object),
                       "annotator": raters[order], "label": x[items, raters][order]})
    return df


def test_dataframe_columns_match_in_memory(long_frame):
    ddf = dd.from_pandas(long_frame, npartitions=7)
    want = fk.agreement(item=long_frame.doc, rater=long_frame.annotator,
                        label=long_frame.label, weights="quadratic")
    with dask.config.set(scheduler="synchronous"):
        got = fkd.agreement(ddf.doc, ddf.annotator, ddf.label, weights="quadratic")
        acc = fkd.accumulate_agreement(ddf.doc, ddf.annotator, ddf.label)
    assert acc.n_ratings == len(long_frame)
    for a, b in zip(got, want, strict=True):
        assert a.estimate == pytest.approx(b.estimate, abs=1e-13), a.coefficient
        assert a.standard_error == pytest.approx(b.standard_error, abs=1e-13), a.coefficient


def test_arrays_and_bootstrap_match_in_memory(long_frame):
    da = pytest.importorskip("dask.array")
    codes = pd.factorize(long_frame.doc)[0]
    item = da.from_array(codes, chunks=100)
    rater = da.from_array(long_frame.annotator.to_numpy(), chunks=100)
    label = da.from_array(long_frame.label.to_numpy(), chunks=100)
    want = fk.agreement(item=codes, rater=long_frame.annotator, label=long_frame.label,
                        method="percentile", n_resamples=300, seed=4)
    with dask.config.set(scheduler="threads"):
        got = fkda.agreement(item, rater, label, method="percentile", n_resamples=300, seed=4)
    for a, b in zip(got, want, strict=True):
        assert (a.low, a.high) == pytest.approx((b.low, b.high), abs=1e-13), a.coefficient


def test_duplicates_across_partitions_are_refused(long_frame):
    doubled = pd.concat([long_frame, long_frame.iloc[:1]], ignore_index=True)
    ddf = dd.from_pandas(doubled, npartitions=3)
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError,
                                                                 match="more than once"):
        fkda.agreement(ddf.doc, ddf.annotator, ddf.label)


def test_public_path_is_fastkappa_dask():
    assert fkd.agreement is fkda.agreement
    assert fkd.accumulate_agreement is fkda.accumulate_agreement
    assert {"agreement", "accumulate_agreement"} <= set(fkd.__all__)


def test_implementation_module_imports_first(tmp_path):
    """Importing the implementation module before fastkappa.dask has no import cycle."""
    import subprocess
    import sys

    code = ("import fastkappa.dask_agreement as a, fastkappa.dask as d; "
            "assert d.agreement is a.agreement")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False, timeout=300)
    assert run.returncode == 0, run.stderr
