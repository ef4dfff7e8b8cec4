"""asv suite for the command line: ``fastkappa score`` against pyarrow alone.

Run with ``asv run --python=same --quick --bench ScoreParquet``.  Both time
the same Parquet file (10^7 rows, row groups of 2^20 rows, written once per
setup into a temporary folder): ``fastkappa score`` through ``main(argv)``
in-process, and pyarrow streaming the two label columns with
``ParquetFile.iter_batches``, the floor any reader pays.  The issue's target
is the ratio of the two (at most 1.5x); the pytest-benchmark twin,
``benchmarks/comparisons/test_bench_cli.py``, asserts it.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile

import numpy as np


class ScoreParquet:
    params = (["fastkappa_score", "pyarrow_iter_batches"], [1_000_000, 10_000_000])
    param_names = ["impl", "n"]
    timeout = 300

    def setup(self, impl, n):
        import pyarrow as pa
        import pyarrow.parquet as pq

        from fastkappa.cli import main

        rng = np.random.default_rng(0)
        t = rng.integers(0, 5, n)
        p = np.clip(t + rng.integers(-1, 2, n), 0, 4)
        self.dir = tempfile.TemporaryDirectory()
        path = os.path.join(self.dir.name, "graded.parquet")
        pq.write_table(pa.table({"y_true": t, "y_pred": p}), path, row_group_size=1 << 20)
        argv = ["score", path, "--true", "y_true", "--pred", "y_pred", "--weights",
                "quadratic", "--format", "json", "--quiet"]

        def score():
            with contextlib.redirect_stdout(io.StringIO()):
                assert main(argv) == 0

        def stream():
            for _ in pq.ParquetFile(path).iter_batches(columns=["y_true", "y_pred"],
                                                       batch_size=1 << 20):
                pass

        self.f = score if impl == "fastkappa_score" else stream
        self.f()  # warm-up: numba's cache, pyarrow's thread pool

    def teardown(self, impl, n):
        self.dir.cleanup()

    def time_score(self, impl, n):
        self.f()
