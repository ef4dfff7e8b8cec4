"""A fresh kernel cache runs mid-sized bootstraps on one thread.

Compiling a parallel bootstrap driver costs about a second more than its
serial twin, and both give the same numbers (the same blocks, each from its
own seed).  So while the parallel driver is neither compiled in the process
nor in the kernel cache, a bootstrap of up to ``COLD_SERIAL_MAX_DRAWS`` draws
runs the serial twin (for the types driver, its blocks called from Python, so
that neither driver compiles); ``fastkappa warmup`` (or a large call) caches
the parallel one, and from then on it runs.  Each case runs in a new process on a
cache folder of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from fastkappa._core import config, units
from fastkappa._core.config import COLD_SERIAL_MAX_DRAWS, SERIAL_MAX_DRAWS
from fastkappa._core.stand_ins import StandInTime

SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import fastkappa as fk
    from fastkappa._core import dispatch
    from fastkappa._core.units import parallel_drivers

    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, 20_000)
    a = np.clip(y + rng.integers(-1, 2, 20_000), 0, 4)
    if sys.argv[1] == "warmup":
        with parallel_drivers():
            ci = fk.kappa_ci(y, a, seed=3)
    else:
        ci = fk.kappa_ci(y, a, seed=3)
    kern = dispatch.resampling_kernels()
    print(json.dumps({
        "low": ci.low, "high": ci.high,
        "parallel": len(kern._bootstrap_kappa_types.dispatcher.overloads),
        "serial": len(kern._bootstrap_kappa_types_serial.overloads)}))
""")


def _run(mode: str, cache) -> dict:
    env = dict(os.environ, FASTKAPPA_CACHE_DIR=str(cache))
    env.pop(config.COLD_SERIAL_ENV, None)  # the tests' conftest turns the choice off
    proc = subprocess.run([sys.executable, "-c", SCRIPT, mode], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_fresh_cache_runs_the_serial_twin_then_the_cached_parallel_driver(tmp_path):
    # 10,000 resamples x (13 types + 13 cells): between the two thresholds
    assert SERIAL_MAX_DRAWS < 10_000 * 26 < COLD_SERIAL_MAX_DRAWS
    cold = _run("default", tmp_path)  # the serial twin's blocks, run from Python
    assert cold["serial"] == 0 and cold["parallel"] == 0
    warm = _run("warmup", tmp_path)  # as `fastkappa warmup` does: the parallel driver
    assert warm["parallel"] == 1 and warm["serial"] == 0
    again = _run("default", tmp_path)  # it is cached now: it runs
    assert again["parallel"] == 1 and again["serial"] == 0
    # the same numbers on both drivers
    assert cold["low"] == warm["low"] == again["low"]
    assert cold["high"] == warm["high"] == again["high"]


def test_is_ready_reads_the_process_and_the_cache():
    from fastkappa._core.dispatch import resampling_kernels
    from fastkappa._kernels._jit import is_ready

    kern = resampling_kernels()
    args = (np.array([3, 2], np.int64), np.array([0, 1, 2], np.int64), np.array([0, 3]),
            np.array([1.0, 1.0]), np.int64(5), np.array([0, 1]), np.array([[0], [1]]),
            2, np.eye(2), 10, np.arange(1, 3, dtype=np.uint64))
    kern._bootstrap_kappa_types(*args)
    assert is_ready(kern._bootstrap_kappa_types, args)
    # a signature never compiled: not ready (float32 weights)
    odd = (*args[:8], np.eye(2, dtype=np.float32), *args[9:])
    assert not is_ready(kern._bootstrap_kappa_types, odd)
    # anything unexpected keeps the usual choice
    assert is_ready(object(), args)


@pytest.mark.parametrize("env, forced, want", [("1", False, "serial"), ("0", False, "parallel"),
                                               ("1", True, "parallel")])
def test_run_driver_choice(monkeypatch, env, forced, want):
    monkeypatch.setenv(config.COLD_SERIAL_ENV, env)
    monkeypatch.setattr("fastkappa._kernels._jit.is_ready", lambda kernel, args: False)
    ran = []
    par, ser = (lambda *a: ran.append("parallel")), (lambda *a: ran.append("serial"))
    if forced:
        with units.parallel_drivers():
            units.run_driver(par, ser, SERIAL_MAX_DRAWS + 1)
    else:
        units.run_driver(par, ser, SERIAL_MAX_DRAWS + 1)
    units.run_driver(par, ser, SERIAL_MAX_DRAWS)  # small work: always serial
    units.run_driver(par, ser, COLD_SERIAL_MAX_DRAWS + 1)  # large work: always parallel
    assert ran == [want, "serial", "parallel"]


def test_serial_runs_stop_once_they_cost_what_compiling_saved(monkeypatch):
    """A process that keeps running a driver's serial twin compiles the parallel
    driver once those runs (the first one, which compiles, left out) have taken
    ``COLD_SERIAL_BUDGET`` seconds."""
    monkeypatch.setenv(config.COLD_SERIAL_ENV, "1")
    monkeypatch.setattr("fastkappa._kernels._jit.is_ready", lambda kernel, args: False)
    monkeypatch.setattr(units, "COLD_SERIAL_BUDGET", 0.05)
    monkeypatch.setattr(units, "_cold_serial_time", StandInTime())
    ran = []

    def parallel(*a):
        ran.append("parallel")

    def serial(*a):
        ran.append("serial")
        time.sleep(0.03)

    for _ in range(6):
        units.run_driver(parallel, serial, SERIAL_MAX_DRAWS + 1)
    # run 1 compiles (not counted), runs 2-3 take 0.06 s > 0.05 s: then parallel
    assert ran == ["serial", "serial", "serial", "parallel", "parallel", "parallel"]
