"""fastkappa.dask on Parquet files in a 2-worker LocalCluster vs one process in memory.

Usage::

    python benchmarks/dask_scaling.py                 # 10^8 rows, 20 files
    python benchmarks/dask_scaling.py --rows 10000000 --files 8

Writes ``--rows`` graded rows (two int64 label columns, grades 0-4) as
``--files`` Parquet files in a temporary folder (or ``--dir``, reused when
it already holds them), then times, end to end:

* dask: ``fastkappa.dask.cohen_kappa(df.y_true, df.y_pred, weights="quadratic")``
  on ``dask.dataframe.read_parquet`` in a ``LocalCluster`` of 2 worker
  processes, one thread each, numba at one thread per worker;
* in memory: ``pyarrow.parquet.read_table`` of the two columns into one
  process, then ``fastkappa.cohen_kappa`` (numba at its default threads);
  the scoring step alone is reported too.

It prints the times, the ratio dask / in-memory, and each worker's peak RSS
next to the size of one partition, to show that a worker's memory is bounded
by its partitions, not by the data set.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

# time the kernels, not a fresh cache's NumPy stand-ins (see benchmarks/__init__.py)
os.environ.setdefault("FASTKAPPA_COLD_SERIAL", "0")

import numpy as np


def _write_files(folder: str, rows: int, files: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    per = rows // files
    for i in range(files):
        n = per if i < files - 1 else rows - per * (files - 1)
        t = rng.integers(0, 5, n)
        p = np.clip(t + rng.integers(-1, 2, n), 0, 4)
        pq.write_table(pa.table({"y_true": t, "y_pred": p}),
                       os.path.join(folder, f"part-{i:04d}.parquet"), row_group_size=1 << 20)


def _have_files(folder: str, rows: int, files: int) -> bool:
    import pyarrow.parquet as pq

    names = sorted(f for f in os.listdir(folder) if f.endswith(".parquet"))
    if len(names) != files:
        return False
    total = sum(pq.ParquetFile(os.path.join(folder, f)).metadata.num_rows for f in names)
    return total == rows


def _rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _start_sampler() -> None:
    """In a worker: sample this process's RSS every 5 ms (ru_maxrss is inherited at fork)."""
    import sys
    import threading

    import psutil

    state = {"peak": 0, "stop": threading.Event()}

    def sample() -> None:
        proc = psutil.Process()
        while not state["stop"].is_set():
            state["peak"] = max(state["peak"], proc.memory_info().rss)
            state["stop"].wait(0.005)

    threading.Thread(target=sample, daemon=True).start()
    sys.modules[__name__].__dict__["_fastkappa_rss_sampler"] = state


def _stop_sampler() -> int:
    import sys

    state = sys.modules[__name__].__dict__.pop("_fastkappa_rss_sampler")
    state["stop"].set()
    return state["peak"]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--dir", help="folder for the Parquet files (kept)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (best is shown)")
    args = parser.parse_args(argv)

    import dask.dataframe as dd
    import pyarrow.parquet as pq
    from distributed import Client, LocalCluster

    import fastkappa as fk
    import fastkappa.dask as fkd

    folder = args.dir or tempfile.mkdtemp(prefix="fastkappa-dask-")
    os.makedirs(folder, exist_ok=True)
    try:
        if not _have_files(folder, args.rows, args.files):
            for f in os.listdir(folder):
                if f.endswith(".parquet"):
                    os.remove(os.path.join(folder, f))
            t0 = time.perf_counter()
            _write_files(folder, args.rows, args.files)
            print(f"wrote {args.rows:,} rows in {args.files} files "
                  f"({time.perf_counter() - t0:.1f} s)")
        cols = ["y_true", "y_pred"]

        # ---------------------------------------------------------- in memory
        def in_memory():
            t0 = time.perf_counter()
            table = pq.read_table(folder, columns=cols)
            t = table.column("y_true").to_numpy()
            p = table.column("y_pred").to_numpy()
            t1 = time.perf_counter()
            k = fk.cohen_kappa(t, p, weights="quadratic")
            t2 = time.perf_counter()
            return k, t2 - t0, t2 - t1

        fk.cohen_kappa(np.arange(5), np.arange(5), weights="quadratic")  # warm-up
        mem = [in_memory() for _ in range(args.repeat)]
        k_mem = mem[0][0]
        mem_total = min(m[1] for m in mem)
        mem_score = min(m[2] for m in mem)

        # ---------------------------------------------------------- dask
        env = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None, env=env) as cluster, Client(cluster) as client:
            client.run(lambda: __import__("fastkappa").cohen_kappa(
                np.arange(5), np.arange(5), weights="quadratic"))  # workers load the kernels
            small = dd.read_parquet(os.path.join(folder, "part-0000.parquet"), columns=cols)
            fkd.cohen_kappa(small.y_true, small.y_pred, weights="quadratic")  # warm-up
            threads = client.run(lambda: __import__("numba").get_num_threads())
            base = client.run(_rss)
            client.run(_start_sampler)
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                df = dd.read_parquet(folder, columns=cols)
                k_dask = fkd.cohen_kappa(df.y_true, df.y_pred, weights="quadratic")
                times.append(time.perf_counter() - t0)
            peak = client.run(_stop_sampler)
            n_parts = df.npartitions
        dask_total = min(times)
        assert k_dask == k_mem, (k_dask, k_mem)

        part_mb = args.rows / n_parts * 2 * 8 / 2**20
        print(f"rows: {args.rows:,}  files/partitions: {n_parts}  QWK: {k_mem:.6f}")
        print(f"in memory, one process: read {mem_total - mem_score:.2f} s + score "
              f"{mem_score:.2f} s = {mem_total:.2f} s")
        print(f"dask, 2 workers x 1 thread (numba threads per worker: "
              f"{sorted(set(threads.values()))}): {dask_total:.2f} s end to end")
        print(f"ratio dask / in-memory end to end: {dask_total / mem_total:.2f}  "
              f"(dask / in-memory scoring alone: {dask_total / mem_score:.2f})")
        print(f"one partition: {part_mb:.0f} MB of label columns (int64); data set: "
              f"{args.rows * 16 / 2**20:,.0f} MB")
        for addr in sorted(peak):
            print(f"worker {addr}: RSS after warm-up {base[addr] / 2**20:.0f} MB, peak "
                  f"{peak[addr] / 2**20:.0f} MB")
    finally:
        if not args.dir:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
