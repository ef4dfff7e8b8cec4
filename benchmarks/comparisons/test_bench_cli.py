"""The command line on a 10^7-row Parquet file against pyarrow alone.

Target (issue 5): ``fastkappa score`` through ``main(argv)``, in-process and
after a warm-up, takes at most 1.5x the time pyarrow needs just to stream the
two label columns with ``ParquetFile.iter_batches(columns=...)``.

Run with ``pytest benchmarks/comparisons/test_bench_cli.py``.
"""

from __future__ import annotations

import contextlib
import io
import json
import time

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import fastkappa as fk  # noqa: E402
from fastkappa.cli import main  # noqa: E402

N_ROWS = 10_000_000


@pytest.fixture(scope="module")
def parquet_file(tmp_path_factory):
    rng = np.random.default_rng(0)
    t = rng.integers(0, 5, N_ROWS)
    p = np.clip(t + rng.integers(-1, 2, N_ROWS), 0, 4)
    path = tmp_path_factory.mktemp("bench") / "graded.parquet"
    pq.write_table(pa.table({"id": np.arange(N_ROWS), "y_true": t, "y_pred": p,
                             "score": rng.random(N_ROWS)}), path, row_group_size=1 << 20)
    expected = fk.cohen_kappa(t, p, weights="quadratic")
    return str(path), expected


def _score(path: str) -> float:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["score", path, "--true", "y_true", "--pred", "y_pred", "--weights",
                     "quadratic", "--format", "json", "--quiet"])
    assert code == 0
    return json.loads(buf.getvalue())["kappa"]


def _pyarrow_stream(path: str) -> int:
    n = 0
    pf = pq.ParquetFile(path)
    for batch in pf.iter_batches(columns=["y_true", "y_pred"], batch_size=1 << 20):
        n += batch.num_rows
    return n


@pytest.mark.benchmark(group="cli-parquet-1e7")
def test_bench_cli_score_parquet(benchmark, parquet_file):
    path, expected = parquet_file
    _score(path)  # warm-up: numba kernels, pyarrow
    got = benchmark.pedantic(_score, args=(path,), rounds=5, iterations=1)
    assert got == expected


@pytest.mark.benchmark(group="cli-parquet-1e7")
def test_bench_pyarrow_iter_batches(benchmark, parquet_file):
    path, _ = parquet_file
    _pyarrow_stream(path)
    n = benchmark.pedantic(_pyarrow_stream, args=(path,), rounds=5, iterations=1)
    assert n == N_ROWS


def test_speed_ratio(parquet_file):
    """Best of interleaved runs, so that load from other processes hits both alike."""
    path, expected = parquet_file
    assert _score(path) == expected
    _pyarrow_stream(path)
    best = {"cli": float("inf"), "arrow": float("inf")}
    for _ in range(10):
        for name, f in (("cli", _score), ("arrow", _pyarrow_stream)):
            t0 = time.perf_counter()
            f(path)
            best[name] = min(best[name], time.perf_counter() - t0)
    ratio = best["cli"] / best["arrow"]
    print(f"\nfastkappa score {best['cli']:.3f} s, pyarrow iter_batches {best['arrow']:.3f} s, "
          f"ratio {ratio:.2f}")
    assert ratio <= 1.5
