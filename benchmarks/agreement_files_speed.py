"""Long-format ratings from Parquet: ``fastkappa agreement`` against pyarrow reading.

Usage::

    python benchmarks/agreement_files_speed.py                 # 1e7 rows
    python benchmarks/agreement_files_speed.py --rows 5e7 --repeats 3

Writes an annotation export once into a temporary folder (deleted at the
end): ``rows / 5`` items with integer ids, 5 raters each, K = 5 grades
(raters agree with a true grade 60% of the time), rows shuffled (as exports
from annotation tools come), pyarrow's default row groups.  Then, interleaved
and repeated (medians):

* ``pyarrow``: ``pyarrow.parquet.read_table`` of the three columns, the floor
  any reader pays, in this process: the fastest of back-to-back reads, which
  reuse the memory of the read before (interleaved with other work, the same
  read took 2x as long);
* ``pyarrow, fresh process``: the same read as a script in a fresh process
  (``python -c "import pyarrow.parquet ..."``), which pays for starting and
  for fresh memory as a command line does;
* ``fk``: ``fastkappa.agreement_files.agreement_file`` (all six coefficients
  with their asymptotic intervals) in this process;
* ``cli``: ``python -m fastkappa agreement FILE --item item --rater rater
  --label label`` in a fresh process (imports and cached kernels included),
  with its peak RSS.

Each line shows its ratio to both pyarrow reads: in-process runs are
compared with the in-process read, the command line with the fresh-process
read as well.

The answer is checked against ``fk.agreement`` on the arrays read.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# time the kernels, not a fresh cache's NumPy stand-ins (see benchmarks/__init__.py)
os.environ.setdefault("FASTKAPPA_COLD_SERIAL", "0")

import numpy as np

#: runs ``python -m fastkappa ARGS`` and prints its own peak RSS to stderr at exit:
#: /proc/self/status VmHWM counts this program only (getrusage's maxrss of a child
#: also counts the parent's memory copied at fork, here several GB of test data)
PEAK = """
import atexit, resource, runpy, sys
def report():
    try:
        with open("/proc/self/status") as f:
            kb = next(int(x.split()[1]) for x in f if x.startswith("VmHWM"))
    except OSError:
        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sys.stderr.write(f"peak-kib {kb}\\n")
atexit.register(report)
sys.argv = ["fastkappa"] + sys.argv[1:]
runpy.run_module("fastkappa", run_name="__main__")
"""


def _peak_mib(stderr: str) -> float:
    return int(stderr.rsplit("peak-kib", 1)[1].split()[0]) / 1024


def write(path: str, n: int, seed: int = 0) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    n_items = n // 5
    item = np.repeat(np.arange(n_items, dtype=np.int64), 5)[:n]
    rater = np.tile(np.arange(5, dtype=np.int64), n_items)[:n]
    truth = rng.integers(0, 5, n_items)
    label = np.where(rng.random(n) < 0.6, truth[item], rng.integers(0, 5, n))
    order = rng.permutation(n)
    pq.write_table(pa.table({"item": item[order], "rater": rater[order],
                             "label": label[order]}), path)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    import pyarrow.parquet as pq

    import fastkappa as fk
    from fastkappa.agreement_files import agreement_file

    n = int(args.rows)
    tmp = tempfile.mkdtemp()
    try:
        path = os.path.join(tmp, "ratings.parquet")
        write(path, n)
        cols = ["item", "rater", "label"]
        t = pq.read_table(path, columns=cols)
        want = fk.agreement(item=t["item"].to_numpy(), rater=t["rater"].to_numpy(),
                            label=t["label"].to_numpy())
        got = agreement_file(path, item="item", rater="rater", label="label")
        for a, b in zip(got, want, strict=True):
            assert abs(a.estimate - b.estimate) < 1e-12, a.coefficient
        del t
        cli = [sys.executable, "-c", PEAK, "agreement", path, "--item", "item",
               "--rater", "rater", "--label", "label"]
        subprocess.run(cli, check=True, capture_output=True)  # the kernel cache is warm
        peaks: list[float] = []
        fresh_read = [sys.executable, "-c", "import sys, pyarrow.parquet as pq; "
                      f"pq.read_table(sys.argv[1], columns={cols!r})", path]
        warm = []
        for _ in range(args.repeats + 1):
            t0 = time.perf_counter()
            pq.read_table(path, columns=cols)
            warm.append(time.perf_counter() - t0)
        runs = {
            "pyarrow read_table (fresh process)": lambda: subprocess.run(
                fresh_read, check=True),
            "fk agreement_file": lambda: agreement_file(path, item="item", rater="rater",
                                                        label="label"),
            "fastkappa agreement (fresh process)": lambda: peaks.append(_peak_mib(
                subprocess.run(cli, check=True, capture_output=True, text=True).stderr)),
        }
        times: dict[str, list[float]] = {"pyarrow read_table (back to back)": [min(warm)]}
        times.update({k: [] for k in runs})
        for r in range(args.repeats):
            keys = list(runs)
            for k in keys[r % len(keys):] + keys[:r % len(keys)]:
                t0 = time.perf_counter()
                runs[k]()
                times[k].append(time.perf_counter() - t0)
        rss = max(peaks)
        base = min(warm)
        fresh = statistics.median(times["pyarrow read_table (fresh process)"])
        print(f"{n:.0e} rows, {n // 5:,} items x 5 raters, shuffled; "
              f"{os.path.getsize(path) / 2**20:.0f} MiB; load average "
              f"{os.getloadavg()[0]:.1f}")
        for k, v in times.items():
            med = statistics.median(v)
            print(f"  {k:40s} {med:8.3f} s  ({med / base:.2f}x pyarrow in process, "
                  f"{med / fresh:.2f}x pyarrow in a fresh process)")
        print(f"  peak RSS of the command line: {rss:.0f} MiB")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
