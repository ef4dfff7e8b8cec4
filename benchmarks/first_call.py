"""First-call latency of every entry point: cold cache (compiling) and warm (loading).

Usage::

    python benchmarks/first_call.py            # prints a markdown table
    python benchmarks/first_call.py --python /path/to/other/env/bin/python
    python benchmarks/first_call.py --only score_file   # the rows naming score_file

Each entry point runs in a fresh process with its own empty kernel cache
(``FASTKAPPA_CACHE_DIR`` in a temporary folder): the first run compiles the
kernels it needs (cold), a second process with the same folder loads them
(warm).  Reported: the call alone (after ``import fastkappa`` and the data),
in wall-clock seconds, and the whole process's CPU time.  On a machine shared
with other jobs the wall-clock times grow with the load; the CPU times do not.

The last row is numba's own floor in the same environment: a one-line
``@numba.njit(cache=True)`` function, called once cold and once warm, with
numba's import.  A warm first call cannot cost less: numba initialises its
compiler target at the first kernel, even one loaded from the cache, and that
imports ``scipy.linalg`` when SciPy is installed.  ``--python`` runs the
processes with another interpreter (for example a plain ``pip install
fastkappa`` environment without SciPy).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap

SETUP = textwrap.dedent("""
    import json, resource, time
    import numpy as np
    import fastkappa as fk
    rng = np.random.default_rng(0)
    n = 100_000
    y = rng.integers(0, 5, n)
    a = np.clip(y + rng.integers(-1, 2, n), 0, 4)
    b = np.clip(y + rng.integers(-2, 3, n), 0, 4)
    s = y + rng.normal(0, 0.8, n)
    patient = np.arange(n) // 2
    site = rng.integers(0, 10, n)
    t0 = time.perf_counter()
""")

FINISH = textwrap.dedent("""
    call = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"call": call, "cpu": ru.ru_utime + ru.ru_stime}))
""")

CALLS = {
    "`cohen_kappa(y, a)`": "fk.cohen_kappa(y, a)",
    "`cohen_kappa(..., weights='quadratic')`": "fk.cohen_kappa(y, a, weights='quadratic')",
    "`confusion_matrix`": "fk.confusion_matrix(y, a)",
    "`kappa_ci` (BCa, 10,000 resamples)": "fk.kappa_ci(y, a, weights='quadratic', seed=0)",
    "`kappa_ci(..., clusters=)`": "fk.kappa_ci(y, a, clusters=patient, seed=0)",
    "`kappa_ci(..., method='asymptotic')`": "fk.kappa_ci(y, a, method='asymptotic')",
    "`compare` (2 models, BCa)": "fk.compare(y, {'a': a, 'b': b}, seed=0)",
    "`kappa_by_group`": "fk.kappa_by_group(y, a, site)",
    "`optimize_thresholds`": "fk.optimize_thresholds(y, s)",
    "`CohenKappa.update` + `compute`": "fk.CohenKappa(n_classes=5).update(y, a).compute()",
    "`fleiss_kappa` (3 raters)": "fk.fleiss_kappa(np.stack([y, a, b], axis=1))",
    "`agreement` (3 raters, asymptotic)": "fk.agreement(np.stack([y, a, b], axis=1))",
    "`agreement` (3 raters, BCa, 10,000 resamples)": (
        "fk.agreement(np.stack([y, a, b], axis=1), method='bca', seed=0)"),
    # the file is written before the clock starts again; needs the io extra (pyarrow)
    "`score_file` (Parquet, QWK)": (
        "import os, tempfile, pyarrow as pa, pyarrow.parquet as pq, fastkappa.files\n"
        "path = os.path.join(tempfile.mkdtemp(), 'graded.parquet')\n"
        "pq.write_table(pa.table({'y': y, 'a': a}), path)\n"
        "t0 = time.perf_counter()\n"
        "fastkappa.files.score_file(path, true='y', pred='a', weights='quadratic')"),
    # 2^21 rows in 2^20-row groups: a page-reader file (a fresh kernel cache reads it
    # with pyarrow; with the page kernels cached, from its dictionary pages)
    "`score_file` (Parquet, QWK, 2^21 rows)": (
        "import os, tempfile, pyarrow as pa, pyarrow.parquet as pq, fastkappa.files\n"
        "path = os.path.join(tempfile.mkdtemp(), 'graded.parquet')\n"
        "pq.write_table(pa.table({'y': np.tile(y, 21)[:1 << 21],\n"
        "                         'a': np.tile(a, 21)[:1 << 21]}), path)\n"
        "t0 = time.perf_counter()\n"
        "fastkappa.files.score_file(path, true='y', pred='a', weights='quadratic')"),
}
#: rows that need an optional package (skipped in an environment without it)
NEEDS = {"`score_file` (Parquet, QWK)": "pyarrow",
         "`score_file` (Parquet, QWK, 2^21 rows)": "pyarrow"}


#: numba alone: a trivial cached kernel in a module of its own (cache=True needs a file)
FLOOR_MODULE = "import numba\n\n@numba.njit(cache=True)\ndef f(x):\n    return x + 1\n"
FLOOR = textwrap.dedent("""
    import json, resource, sys, time
    t0 = time.perf_counter()
    sys.path.insert(0, sys.argv[1])
    import floor_kernel
    floor_kernel.f(1)
""")


def run(code: str, cache: str, python: str = sys.executable, argv: tuple = ()) -> dict:
    env = dict(os.environ, FASTKAPPA_CACHE_DIR=cache, NUMBA_CACHE_DIR=cache)
    env.pop("FASTKAPPA_COLD_SERIAL", None)  # a new user's defaults, stand-ins included
    out = subprocess.run([python, "-c", code + "\n" + FINISH, *argv], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def floor(python: str = sys.executable) -> tuple[dict, dict]:
    """Cold and warm first call of a trivial cached numba kernel (numba's import included)."""
    with tempfile.TemporaryDirectory() as cache:
        with open(os.path.join(cache, "floor_kernel.py"), "w") as f:
            f.write(FLOOR_MODULE)
        return (run(FLOOR, cache, python, (cache,)), run(FLOOR, cache, python, (cache,)))


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter of the environment to measure (default: this one)")
    ap.add_argument("--only", default="",
                    help="measure only the entry points whose row contains this text")
    args = ap.parse_args(argv)
    python = args.python
    rows = ["| entry point (n = 100,000) | cold: call (s) | cold: process CPU (s) "
            "| warm: call (s) | warm: process CPU (s) |", "|---|---|---|---|---|"]
    for name, code in CALLS.items():
        if args.only not in name:
            continue
        if name in NEEDS and subprocess.run([python, "-c", f"import {NEEDS[name]}"],
                                            capture_output=True).returncode:
            rows.append(f"| {name} | (needs {NEEDS[name]}) | | | |")
            continue
        with tempfile.TemporaryDirectory() as cache:
            cold = run(SETUP + code, cache, python)
            warm = run(SETUP + code, cache, python)
        rows.append(f"| {name} | {cold['call']:.2f} | {cold['cpu']:.2f} | "
                    f"{warm['call']:.3f} | {warm['cpu']:.2f} |")
        print(rows[-1], file=sys.stderr, flush=True)
    cold, warm = floor(python)
    rows.append(f"| numba alone: a trivial `@njit(cache=True)` kernel | {cold['call']:.2f} | "
                f"{cold['cpu']:.2f} | {warm['call']:.3f} | {warm['cpu']:.2f} |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
