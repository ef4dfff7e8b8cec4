"""`fastkappa warmup` compiles every kernel the package calls, and later processes load them.

Oracle: numba's own per-kernel statistics (``dispatcher.stats``: cache hits
and misses) in a fresh process that runs the README's kind of workload
against the cache folder the warm-up filled.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import fastkappa

PACKAGE = Path(fastkappa.__file__).resolve().parent

WORKLOAD = textwrap.dedent("""
    import json
    import numpy as np
    import fastkappa as fk
    from fastkappa._warmup import _dispatchers
    rng = np.random.default_rng(1)
    n = 3000
    y = rng.integers(0, 5, n)
    a = np.clip(y + rng.integers(-1, 2, n), 0, 4)
    b = np.clip(y + rng.integers(-2, 3, n), 0, 4)
    fk.cohen_kappa(y, a, weights="quadratic")
    fk.cohen_kappa(list(y), list(a), n_classes=5)
    fk.kappa_ci(y, a, weights="quadratic", seed=0)
    fk.kappa_ci(y, a, weights="quadratic", clusters=np.arange(n) // 2, seed=0)
    fk.compare(y, {"a": a, "b": b}, weights="quadratic", n_resamples=1000, seed=0)
    fk.kappa_by_group(y, a, rng.choice(["x", "y"], n), weights="quadratic")
    fk.ThresholdOptimizer(cv=3).fit(y, y + rng.normal(0, 0.7, n))
    stats = {k: [len(d.stats.cache_hits), len(d.stats.cache_misses)]
             for k, d in _dispatchers().items() if d.signatures}
    print(json.dumps(stats))
""")


def _env(cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT")}
    env["FASTKAPPA_CACHE_DIR"] = str(cache)
    return env


def test_warmup_compiles_every_kernel_and_later_processes_load_them(tmp_path):
    cache = tmp_path / "cache"
    out = subprocess.run([sys.executable, "-m", "fastkappa", "warmup", "--format", "json"],
                         env=_env(cache), cwd=tmp_path, capture_output=True, text=True,
                         timeout=1800)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["command"] == "warmup"  # as every command's JSON names itself
    assert Path(report["cache_dir"]) == cache
    assert report["not_compiled"] == []
    assert report["n_compiled"] > 0 and report["n_loaded"] == 0  # a cold cache
    assert len(report["steps"]) >= 7 and all(s["seconds"] >= 0 for s in report["steps"])
    assert report["seconds"] >= sum(s["seconds"] for s in report["steps"]) - 1e-6
    assert any(cache.rglob("*.nbc"))
    # the kernels left out are the tests' oracles, which the package never calls
    source = "\n".join(p.read_text(encoding="utf-8") for p in [*PACKAGE.glob("*.py"),
                                                              *PACKAGE.glob("_core/*.py")])
    for full in report["unused"]:
        assert full.split(".", 1)[1] not in source
    called = {k for k, v in report["kernels"].items()
              if k not in report["inner"] and k not in report["unused"]}
    assert called and all(report["kernels"][k]["signatures"] >= 1 for k in called)

    # a later process compiles nothing: every kernel it runs comes from the cache
    work = subprocess.run([sys.executable, "-c", WORKLOAD], env=_env(cache), cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert work.returncode == 0, work.stderr
    stats = json.loads(work.stdout.strip().splitlines()[-1])
    assert stats
    misses = {k: v for k, v in stats.items() if v[1]}
    assert not misses, f"compiled after the warm-up: {misses}"

    # text output: the steps, the totals, nothing compiled the second time
    again = subprocess.run([sys.executable, "-m", "fastkappa", "warmup"], env=_env(cache),
                           cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    lines = again.stdout.splitlines()
    assert lines[0] == f"fastkappa warmup: kernels cached in {cache}"
    assert any("kappa_ci: bca, percentile, basic, asymptotic" in line for line in lines)
    assert ", 0 compiled now, " in again.stdout
    assert lines[-1].startswith("total ") and lines[-1].endswith(" s")
    assert again.stderr == ""  # no progress lines when stderr is not a terminal
