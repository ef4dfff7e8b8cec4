"""Regenerate the README's core ratio table.

    python -m benchmarks.ratio_table            # full table (a few minutes)
    python -m benchmarks.ratio_table --quick    # n = 1e5, 1e6 only

Every row is measured in one run, interleaved (each repetition runs every
implementation once, in rotating order), and summarised as the median of the
repetitions, so machine noise hits all columns alike.  Ratios, not seconds,
are the result.  The "read" baseline is the physical limit: the best of a few
kernels that only read both arrays once (NumPy sum, Numba serial and parallel
sums).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

# time the kernels, not a fresh cache's NumPy stand-ins (see benchmarks/__init__.py)
os.environ.setdefault("FASTKAPPA_COLD_SERIAL", "0")

import numpy as np

import fastkappa as fk
from benchmarks._data import graded_pair, string_pair


def _read_kernels():
    import numba

    @numba.njit(cache=True)
    def serial(a, b):
        s = 0
        for i in range(a.shape[0]):
            s += a[i] + b[i]
        return s

    @numba.njit(cache=True, parallel=True)
    def parallel(a, b):
        s = 0
        for i in numba.prange(a.shape[0]):
            s += a[i] + b[i]
        return s

    return {
        "numpy_sum": lambda a, b: int(a.sum(dtype=np.int64)) + int(b.sum(dtype=np.int64)),
        "numba_serial": serial,
        "numba_parallel": parallel,
    }


def _bincount(t, p, k, weights):
    o = np.bincount(t.astype(np.int64) * k + p, minlength=k * k).reshape(k, k)
    return fk.kappa_from_confusion(o, weights)


def _torchmetrics():
    try:
        import torch
        from torchmetrics.functional.classification import multiclass_cohen_kappa
    except ImportError:
        return None

    def run(t, p, k, weights, validate):
        tt, pp = torch.from_numpy(np.asarray(t, dtype=np.int64)), torch.from_numpy(
            np.asarray(p, dtype=np.int64))
        return float(multiclass_cohen_kappa(pp, tt, num_classes=k, weights=weights,
                                            validate_args=validate))

    return run


def interleaved(funcs: dict, reps: int, slow: dict | None = None) -> dict:
    """Median seconds of each function, run in rotating order ``reps`` times.

    Functions named in ``slow`` run only that many repetitions (still interleaved).
    """
    slow = slow or {}
    times: dict = {k: [] for k in funcs}
    names = list(funcs)
    for r in range(reps):
        order = names[r % len(names):] + names[: r % len(names)]
        for name in order:
            if len(times[name]) >= slow.get(name, reps):
                continue
            t0 = time.perf_counter()
            funcs[name]()
            times[name].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def check_equal(results: dict, ref: float, tol: float = 1e-9) -> None:
    for name, val in results.items():
        if abs(val - ref) > tol:
            raise AssertionError(f"{name} gave {val}, fastkappa gave {ref}")


def bench_scoring(n: int, dtype, reps: int) -> list[dict]:
    rows = []
    t, p = graded_pair(n, 5, dtype=dtype)
    reads = _read_kernels()
    for f in reads.values():
        f(t, p)
    tm = _torchmetrics()
    from sklearn.metrics import cohen_kappa_score

    for weights in ("quadratic", None):
        funcs = {
            "fastkappa": lambda w=weights: fk.cohen_kappa(t, p, weights=w, n_classes=5),
            "sklearn": lambda w=weights: cohen_kappa_score(t, p, weights=w,
                                                           labels=np.arange(5)),
            "bincount": lambda w=weights: _bincount(t, p, 5, w),
        }
        if tm is not None:
            funcs["torchmetrics"] = lambda w=weights: tm(t, p, 5, w, True)
            funcs["torchmetrics_novalidate"] = lambda w=weights: tm(t, p, 5, w, False)
        values = {k: f() for k, f in funcs.items()}
        check_equal({k: v for k, v in values.items() if k != "fastkappa"},
                    values["fastkappa"], 1e-6)
        funcs.update({f"read_{k}": (lambda f=f: f(t, p)) for k, f in reads.items()})
        slow = {"sklearn": max(3, reps // 8) if n >= 10**7 else reps}
        med = interleaved(funcs, reps, slow)
        read = min(v for k, v in med.items() if k.startswith("read_"))
        fk_t = med["fastkappa"]
        row = {
            "n": n, "dtype": np.dtype(dtype).name, "weights": weights or "none",
            "fastkappa_ms": fk_t * 1e3, "read_ms": read * 1e3,
            "x_read": fk_t / read,
            "sklearn_speedup": med["sklearn"] / fk_t,
            "bincount_speedup": med["bincount"] / fk_t,
        }
        if tm is not None:
            row["torchmetrics_speedup"] = med["torchmetrics"] / fk_t
            row["torchmetrics_novalidate_speedup"] = med["torchmetrics_novalidate"] / fk_t
        rows.append(row)
    return rows


def bench_labels(n: int, reps: int) -> list[dict]:
    from sklearn.metrics import cohen_kappa_score

    t0, p0 = graded_pair(n, 5)
    t1, p1 = graded_pair(n, 5, offset=1)
    ts, ps = string_pair(n)
    # pandas' integer grades with a null arrive as float64 with NaN (1% here)
    tf, pf = t0.astype(np.float64), p0.astype(np.float64)
    tf[::100] = np.nan
    keep = ~np.isnan(tf)
    funcs = {
        "0..4": lambda: fk.cohen_kappa(t0, p0, weights="quadratic", labels=range(5)),
        "1..5": lambda: fk.cohen_kappa(t1, p1, weights="quadratic", labels=range(1, 6)),
        "0..4_inferred": lambda: fk.cohen_kappa(t0, p0),
        "1..5_inferred": lambda: fk.cohen_kappa(t1, p1),
        "strings": lambda: fk.cohen_kappa(ts, ps),
        "sklearn_strings": lambda: cohen_kappa_score(ts, ps),
        "floats_nan": lambda: fk.cohen_kappa(tf, pf, nan_policy="omit"),
        "sklearn_floats": lambda: cohen_kappa_score(tf[keep], pf[keep]),
    }
    check_equal({"sklearn_strings": funcs["sklearn_strings"]()}, funcs["strings"]())
    check_equal({"sklearn_floats": funcs["sklearn_floats"]()}, funcs["floats_nan"]())
    med = interleaved(funcs, reps, {"sklearn_strings": max(3, reps // 4),
                                    "sklearn_floats": max(3, reps // 4)})
    return [{
        "n": n,
        "labels_1_5_vs_0_4": med["1..5"] / med["0..4"],
        "inferred_1_5_vs_0_4": med["1..5_inferred"] / med["0..4_inferred"],
        "strings_ms": med["strings"] * 1e3,
        "sklearn_strings_speedup": med["sklearn_strings"] / med["strings"],
        "floats_nan_ms": med["floats_nan"] * 1e3,
        "floats_nan_vs_ints": med["floats_nan"] / med["0..4_inferred"],
        "sklearn_floats_speedup": med["sklearn_floats"] / med["floats_nan"],
    }]


_MEM_SCRIPT = """
import resource, sys, numpy as np, fastkappa as fk
n = int(sys.argv[1]); dtype = sys.argv[2]; weights = sys.argv[3] if sys.argv[3] != "none" else None
rng = np.random.default_rng(0)
t = rng.integers(0, 5, n).astype(dtype); p = rng.integers(0, 5, n).astype(dtype)
fk.cohen_kappa(t[:1000], p[:1000], weights=weights, n_classes=5)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
fk.cohen_kappa(t, p, weights=weights, n_classes=5)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((peak - base) * 1024 / (t.nbytes + p.nbytes))
"""


def extra_memory(n: int, dtype: str, weights: str) -> float:
    """Peak extra RSS while scoring, as a fraction of the input's size."""
    out = subprocess.run([sys.executable, "-c", _MEM_SCRIPT, str(n), dtype, weights],
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def _fresh(code: str, env=None) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return time.perf_counter() - t0


def startup(reps: int = 10) -> dict:
    base = statistics.median(_fresh("pass") for _ in range(reps))
    imp_np = statistics.median(_fresh("import numpy") for _ in range(reps))
    imp = statistics.median(_fresh("import fastkappa") for _ in range(reps))
    call = "import fastkappa as fk; fk.cohen_kappa([0, 1, 1, 2], [0, 1, 2, 2], n_classes=3)"
    _fresh(call)
    first_warm = statistics.median(_fresh(call) for _ in range(reps))
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        first_cold = _fresh(call, env)
    return {
        "import_fastkappa_ms": (imp - base) * 1e3,
        "import_numpy_ms": (imp_np - base) * 1e3,
        "first_call_warm_cache_ms": (first_warm - base) * 1e3,
        "first_call_cold_cache_ms": (first_cold - base) * 1e3,
    }


def markdown(scoring, labels, memory, start) -> str:
    lines = ["| n | dtype | weights | fastkappa (ms) | x read-once | vs scikit-learn | "
             "vs NumPy bincount | vs torchmetrics (validate / not) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in scoring:
        tmv = (f"{r['torchmetrics_speedup']:.0f}x / {r['torchmetrics_novalidate_speedup']:.0f}x"
               if "torchmetrics_speedup" in r else "not installed")
        lines.append(
            f"| {r['n']:.0e} | {r['dtype']} | {r['weights']} | {r['fastkappa_ms']:.2f} | "
            f"{r['x_read']:.2f} | {r['sklearn_speedup']:.0f}x faster | "
            f"{r['bincount_speedup']:.1f}x faster | {tmv} |")
    lines.append("")
    for r in labels:
        lines.append(
            f"- n = {r['n']:.0e}: labels 1..5 take {r['labels_1_5_vs_0_4']:.2f}x the time of "
            f"0..4 (declared; inferred: {r['inferred_1_5_vs_0_4']:.2f}x); string labels "
            f"{r['strings_ms']:.1f} ms, {r['sklearn_strings_speedup']:.0f}x faster than "
            "scikit-learn on the same strings; float64 labels with 1% NaN (pandas' "
            f"integers with a null), `nan_policy='omit'`: {r['floats_nan_ms']:.1f} ms, "
            f"{r['floats_nan_vs_ints']:.1f}x the integers' time, "
            f"{r['sklearn_floats_speedup']:.0f}x faster than scikit-learn on the rows "
            "without NaN.")
    for key, frac in memory.items():
        lines.append(f"- extra peak memory scoring {key}: {100 * frac:.2f}% of the input's size")
    lines.append(
        f"- `import fastkappa`: {start['import_fastkappa_ms']:.0f} ms (NumPy alone: "
        f"{start['import_numpy_ms']:.0f} ms); first call in a fresh process: "
        f"{start['first_call_warm_cache_ms']:.0f} ms with numba's cache warm (import "
        f"included), {start['first_call_cold_cache_ms']:.0f} ms compiling from scratch.")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 1e5 and 1e6 only")
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--json", help="also write the raw numbers to this file")
    args = ap.parse_args(argv)
    sizes = [10**5, 10**6] if args.quick else [10**5, 10**6, 10**7]
    scoring = []
    for n in sizes:
        for dtype in (np.int64, np.int8):
            scoring += bench_scoring(n, dtype, args.reps)
            print(f"scored n={n} {np.dtype(dtype).name}", file=sys.stderr)
    labels = bench_labels(10**6, args.reps)
    n_mem = sizes[-1]
    memory = {f"n = {n_mem:.0e} {d} {w}": extra_memory(n_mem, d, w)
              for d in ("int64", "int8") for w in ("quadratic", "none")}
    start = startup()
    print(markdown(scoring, labels, memory, start))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"scoring": scoring, "labels": labels, "memory": memory,
                       "startup": start, "max_rss_kb": resource.getrusage(
                           resource.RUSAGE_SELF).ru_maxrss}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
