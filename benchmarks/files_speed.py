"""``fastkappa score`` on Parquet against DuckDB, polars and pyarrow, side by side.

Usage::

    python benchmarks/files_speed.py                       # 1e7 rows, every variant
    python benchmarks/files_speed.py --rows 1e8 --kinds int64 --compressions snappy
    python benchmarks/files_speed.py --rows 1e7 --repeats 15 --no-fresh

Writes realistic graded data once into a temporary folder (deleted at the
end): a truth column of grades 0-4 (skewed towards 0) and a prediction that
errs on 30% of rows by up to two grades, as int64, int32 or strings
(``grade_0`` ...), plus an int64 ``id`` column that no reader needs (so
column projection counts).  Each file is written with pyarrow's default row
groups (``--row-group default``) or 10^6 rows per group, with snappy or zstd.

In one process, interleaved, each repeated ``--repeats`` times (medians):

* ``fk``: ``fastkappa.files.score_file(path, true=, pred=, weights="quadratic")``
  (row groups counted on every core; a file of 2^20 rows or more in row groups
  of 2^19 rows or more on average is counted from its dictionary pages, see
  ``fastkappa._parquet_pages``), and the same with numba at one thread
  (``fk, one thread``: one worker reads the row groups the same way; smaller
  files get pyarrow decoding batches ahead while one thread counts);
* ``duckdb``: ``SELECT y_true, y_pred, count(*) ... GROUP BY ALL`` on the file;
* ``polars``: ``scan_parquet(path).group_by([...]).len().collect()``;
* ``pyarrow``: ``ParquetFile.iter_batches`` of the two columns (the floor any
  reader pays), and ``pyarrow.parquet.read_table`` of the two columns.

Every result is checked: DuckDB's and polars' cell counts give the same
QWK as fastkappa (closed form from the confusion matrix), and pyarrow reads
every row.  Wall time and the process's CPU time are both reported (CPU
time is what a busy machine distorts least).

Then, unless ``--no-fresh``, each tool in a fresh process (what a shell user
pays, imports and numba's cached kernels included): ``python -m fastkappa
score``, and ``python -c`` running the DuckDB query / the pyarrow read, with
each child's peak RSS (``/usr/bin/time``), to show that memory does not grow
with the rows.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

# time the kernels, not a fresh cache's NumPy stand-ins (see benchmarks/__init__.py)
os.environ.setdefault("FASTKAPPA_COLD_SERIAL", "0")

import numpy as np

LABELS = np.array([f"grade_{i}" for i in range(5)], dtype=object)


def graded(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Truth (grades 0-4, mostly low) and a prediction wrong on 30% of rows."""
    rng = np.random.default_rng(seed)
    t = rng.choice(5, n, p=[0.4, 0.25, 0.15, 0.12, 0.08])
    wrong = rng.random(n) < 0.3
    p = np.where(wrong, np.clip(t + rng.integers(-2, 3, n), 0, 4), t)
    return t, p


def write_file(folder: str, n: int, kind: str, compression: str, row_group: str) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = os.path.join(folder, f"{kind}_{n:.0e}_{compression}_{row_group}.parquet")
    if os.path.exists(path):
        return path
    rows = None if row_group == "default" else int(float(row_group))
    writer = None
    step = 10_000_000  # write in slices so that 1e8 rows never sit in memory
    for lo in range(0, n, step):
        m = min(step, n - lo)
        t, p = graded(m, seed=lo // step)
        if kind == "string":
            cols = {"y_true": pa.array(LABELS[t].tolist()), "y_pred": pa.array(LABELS[p].tolist())}
        else:
            dt = np.int32 if kind == "int32" else np.int64
            cols = {"y_true": t.astype(dt), "y_pred": p.astype(dt)}
        table = pa.table({"id": np.arange(lo, lo + m), **cols})
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema, compression=compression)
        writer.write_table(table, row_group_size=rows)
    writer.close()
    return path


def qwk(m: np.ndarray) -> float:
    """Quadratic-weighted kappa of a confusion matrix (closed form)."""
    m = m.astype(np.float64)
    k = m.shape[0]
    i, j = np.indices((k, k))
    w = (i - j) ** 2 / (k - 1) ** 2
    n = m.sum()
    e = np.outer(m.sum(1), m.sum(0)) / n
    return 1.0 - (w * m).sum() / (w * e).sum()


def matrix(rows) -> np.ndarray:
    """Confusion matrix from (truth, prediction, count) rows (labels sorted)."""
    labels = sorted({r[0] for r in rows} | {r[1] for r in rows})
    pos = {v: i for i, v in enumerate(labels)}
    m = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for a, b, c in rows:
        m[pos[a], pos[b]] += c
    return m


def in_process(path: str, n: int, repeats: int, labels) -> dict[str, tuple[float, float]]:
    import duckdb
    import polars as pl
    import pyarrow.parquet as pq

    import fastkappa as fk

    cols = ["y_true", "y_pred"]
    con = duckdb.connect()

    def run_fk():
        return fk.files.score_file(path, true="y_true", pred="y_pred", weights="quadratic",
                                   labels=labels)

    def run_fk_serial():  # numba at one thread (see the module docstring)
        import numba

        before = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            return run_fk()
        finally:
            numba.set_num_threads(before)

    def run_duckdb():
        return con.sql(f"SELECT y_true, y_pred, count(*) FROM '{path}' GROUP BY ALL").fetchall()

    def run_polars():
        df = pl.scan_parquet(path).group_by(cols).len().collect()
        return list(zip(*(df[c].to_list() for c in df.columns), strict=True))

    def run_iter():
        return sum(b.num_rows for b in pq.ParquetFile(path).iter_batches(columns=cols))

    def run_read():
        return pq.read_table(path, columns=cols).num_rows

    impls = {"fk": run_fk, "fk, one thread": run_fk_serial, "duckdb": run_duckdb,
             "polars": run_polars, "pyarrow iter_batches": run_iter,
             "pyarrow read_table": run_read}
    kappa = run_fk()  # warm-up and checks: a fast wrong answer cannot win
    assert run_fk_serial() == kappa
    for name in ("duckdb", "polars"):
        got = qwk(matrix(impls[name]()))
        assert abs(got - kappa) < 1e-12, (name, got, kappa)
    assert run_iter() == n and run_read() == n
    wall = {k: [] for k in impls}
    cpu = {k: [] for k in impls}
    for _ in range(repeats):
        for k, f in impls.items():
            c0, t0 = time.process_time(), time.perf_counter()
            f()
            wall[k].append(time.perf_counter() - t0)
            cpu[k].append(time.process_time() - c0)
    return {k: (float(np.median(wall[k])), float(np.median(cpu[k]))) for k in impls}


def _child(argv: list[str]) -> tuple[float, int | None]:
    """Wall time and peak RSS (bytes; None without ``/usr/bin/time``) of a child process.

    The peak comes from ``/usr/bin/time``: a child forked straight from this
    process would inherit this process's own peak in its ``ru_maxrss``.
    """
    timer = shutil.which("time", path="/usr/bin")
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as out:
        cmd = [timer, "-f", "%M", "-o", out.name, *argv] if timer else argv
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, env=os.environ.copy(), check=True)
        wall = time.perf_counter() - t0
        rss = int(out.read().split()[-1]) * 1024 if timer else None
    return wall, rss


def fresh(path: str, repeats: int, labels) -> dict[str, tuple[float, int]]:
    py = sys.executable
    declared = ["--labels", ",".join(labels)] if labels is not None else []
    impls = {
        "fastkappa score (CLI)": [py, "-m", "fastkappa", "score", path, "--true", "y_true",
                                  "--pred", "y_pred", "--weights", "quadratic", "--quiet",
                                  *declared],
        "duckdb (python -c)": [py, "-c", "import duckdb; duckdb.sql(\"SELECT y_true, y_pred, "
                               f"count(*) FROM '{path}' GROUP BY ALL\").fetchall()"],
        "pyarrow read (python -c)": [py, "-c", "import pyarrow.parquet as pq; pq.read_table("
                                     f"'{path}', columns=['y_true', 'y_pred'])"],
        "python -c pass": [py, "-c", "pass"],
    }
    if shutil.which("duckdb"):
        impls["duckdb CLI"] = ["duckdb", "-c", f"SELECT y_true, y_pred, count(*) FROM "
                               f"'{path}' GROUP BY ALL"]
    for argv in impls.values():
        _child(argv)  # warm the page cache and numba's kernel cache
    wall = {k: [] for k in impls}
    rss = {k: 0 for k in impls}
    for _ in range(repeats):
        for k, argv in impls.items():
            w, r = _child(argv)
            wall[k].append(w)
            rss[k] = max(rss[k], r or 0)
    return {k: (float(np.median(wall[k])), rss[k]) for k in impls}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", nargs="+", default=["1e7"])
    ap.add_argument("--kinds", nargs="+", default=["int64", "int32", "string"])
    ap.add_argument("--compressions", nargs="+", default=["snappy", "zstd"])
    ap.add_argument("--row-groups", nargs="+", default=["default", "1e6"])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--no-fresh", action="store_true", help="skip the fresh-process runs")
    ap.add_argument("--dir", help="folder for the files (default: a temporary one, deleted)")
    args = ap.parse_args(argv)
    folder = args.dir or tempfile.mkdtemp(prefix="fk-files-")
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
    try:
        for rows in args.rows:
            n = int(float(rows))
            for kind in args.kinds:
                for comp in args.compressions:
                    for rg in args.row_groups:
                        path = write_file(folder, n, kind, comp, rg)
                        size = os.path.getsize(path) / 1e6
                        print(f"\n{n:.0e} rows, {kind}, {comp}, row groups {rg} "
                              f"({size:.0f} MB):")
                        labels = LABELS.tolist() if kind == "string" else None
                        res = in_process(path, n, args.repeats, labels)
                        base = res["pyarrow iter_batches"]
                        for k, (w, c) in res.items():
                            print(f"  {k:22s} wall {w * 1e3:8.1f} ms ({w / base[0]:5.2f}x)"
                                  f"   cpu {c * 1e3:8.1f} ms ({c / base[1]:5.2f}x)")
                        if not args.no_fresh:
                            out = fresh(path, max(3, args.repeats // 3), labels)
                            for k, (w, r) in out.items():
                                print(f"  fresh {k:26s} wall {w * 1e3:8.1f} ms   "
                                      f"peak RSS {r / 2**20:7.0f} MiB")
                        if args.dir is None:
                            os.remove(path)
    finally:
        if args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
