"""pytest-benchmark: fastkappa against scikit-learn, torchmetrics and NumPy bincount.

    python -m pytest benchmarks/comparisons/test_bench_core.py --benchmark-only \
        --benchmark-group-by=group --benchmark-columns=median,iqr,rounds

One ``group`` per comparison (size, dtype, weights), so pytest-benchmark's
table shows each alternative beside fastkappa, and every benchmark checks its
answer against fastkappa's inside the run: a fast wrong answer cannot win.
The "read" entries only read both arrays once: the physical limit.
"""

from __future__ import annotations

import numpy as np
import pytest

import fastkappa as fk
from benchmarks._data import graded_pair, string_pair

SIZES = [10**5, 10**6, 10**7]
DTYPES = ["int64", "int8"]


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"n={n:.0e}")
def size(request):
    return request.param


def _pair(n, dtype, offset=0):
    return graded_pair(n, 5, dtype=np.dtype(dtype), offset=offset)


def _expected(t, p, weights, labels):
    return fk.cohen_kappa(t, p, weights=weights, labels=labels)


def _run(benchmark, func, expected, tol=1e-9):
    value = benchmark(func)
    assert abs(value - expected) <= tol, (value, expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("weights", ["quadratic", None])
@pytest.mark.parametrize("impl", ["fastkappa", "sklearn", "bincount", "torchmetrics",
                                  "torchmetrics_novalidate"])
def test_scoring(benchmark, size, dtype, weights, impl):
    benchmark.group = f"score n={size:.0e} {dtype} weights={weights}"
    t, p = _pair(size, dtype)
    expected = _expected(t, p, weights, range(5))
    if impl == "fastkappa":
        func = lambda: fk.cohen_kappa(t, p, weights=weights, n_classes=5)  # noqa: E731
    elif impl == "sklearn":
        from sklearn.metrics import cohen_kappa_score

        func = lambda: cohen_kappa_score(t, p, weights=weights, labels=np.arange(5))  # noqa: E731
    elif impl == "bincount":
        def func():
            o = np.bincount(t.astype(np.int64) * 5 + p, minlength=25).reshape(5, 5)
            return fk.kappa_from_confusion(o, weights)
    else:
        torch = pytest.importorskip("torch")
        tmf = pytest.importorskip("torchmetrics.functional.classification")
        tt = torch.from_numpy(t.astype(np.int64))
        pt = torch.from_numpy(p.astype(np.int64))
        validate = impl == "torchmetrics"

        def func():
            return float(tmf.multiclass_cohen_kappa(pt, tt, num_classes=5, weights=weights,
                                                    validate_args=validate))
    if impl == "sklearn" and size > 10**6:
        # scikit-learn takes seconds here: three rounds, still checked
        benchmark.extra_info["note"] = "3 rounds"
        value = benchmark.pedantic(func, rounds=3, iterations=1)
        assert abs(value - expected) <= 1e-9
    else:
        _run(benchmark, func, expected, 1e-6 if impl.startswith("torch") else 1e-9)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("impl", ["numpy_sum", "numba_serial", "numba_parallel"])
def test_read_both_arrays(benchmark, size, dtype, impl):
    """The physical limit: read both arrays once (grouped with the scoring rows)."""
    import numba

    benchmark.group = f"score n={size:.0e} {dtype} weights=quadratic"
    t, p = _pair(size, dtype)
    if impl == "numpy_sum":
        def func():
            return int(t.sum(dtype=np.int64)) + int(p.sum(dtype=np.int64))
    else:
        parallel = impl == "numba_parallel"

        @numba.njit(parallel=parallel, cache=True)
        def read(a, b):
            s = 0
            for i in numba.prange(a.shape[0]):
                s += a[i] + b[i]
            return s

        def func():
            return read(t, p)
    expected = int(t.sum(dtype=np.int64)) + int(p.sum(dtype=np.int64))
    assert benchmark(func) == expected


@pytest.mark.parametrize("labels", ["0..4", "1..5", "strings"])
@pytest.mark.parametrize("impl", ["fastkappa", "sklearn"])
def test_labels(benchmark, labels, impl):
    n = 10**6
    benchmark.group = f"labels n={n:.0e} unweighted"
    if labels == "strings":
        t, p = string_pair(n)
        kw = {}
    else:
        off = 0 if labels == "0..4" else 1
        t, p = _pair(n, "int64", off)
        kw = {"labels": list(range(off, off + 5))}
    expected = fk.cohen_kappa(t, p, **kw)
    if impl == "fastkappa":
        func = lambda: fk.cohen_kappa(t, p, **kw)  # noqa: E731
    else:
        from sklearn.metrics import cohen_kappa_score

        func = lambda: cohen_kappa_score(t, p, **kw)  # noqa: E731
    _run(benchmark, func, expected)
