"""CI step: the kernel tests run as plain Python and cover fastkappa/_kernels.

Compiled kernels hide their bodies from coverage tools.  With
``NUMBA_DISABLE_JIT=1`` the same tests run the kernel bodies as Python, so
pytest-cov sees every line; this test runs them in a subprocess and requires
at least ``MIN_COVERAGE`` percent of ``fastkappa/_kernels``.  The listed test
files are the kernel tests (small data, both serial and parallel twins); the
run takes well under a minute on two cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pytest_cov")

ROOT = Path(__file__).resolve().parents[1]
MIN_COVERAGE = 95.0
KERNEL_TESTS = [
    "tests/test_counting_kernel.py",
    "tests/test_agreement_kernels.py",
    "tests/test_kernel_paths.py",
    "tests/test_kernel_cache_dir.py",
    "tests/test_parquet_kernels.py",
]


@pytest.mark.timeout(900)
def test_kernel_tests_under_disabled_jit_cover_the_kernels(tmp_path):
    report = tmp_path / "coverage.json"
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", COVERAGE_FILE=str(tmp_path / ".coverage"))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *KERNEL_TESTS, "-q", "-p", "no:cacheprovider",
         "-p", "no:randomly", "--cov=fastkappa/_kernels", "--cov-report=term-missing",
         # the block random generator's uint64 arithmetic wraps by design (silently
         # when compiled); as plain NumPy scalars it warns
         "-W", "ignore:overflow encountered in scalar:RuntimeWarning",
         f"--cov-report=json:{report}", "-o", "addopts=--strict-markers"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=880)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    data = json.loads(report.read_text())
    files = {Path(name).as_posix(): f for name, f in data["files"].items()}
    assert any(name.endswith("_kernels/counting.py") for name in files), sorted(files)
    total = data["totals"]["percent_covered"]
    assert total >= MIN_COVERAGE, (
        f"fastkappa/_kernels covered {total:.1f}% < {MIN_COVERAGE}% under NUMBA_DISABLE_JIT=1:"
        f"\n{proc.stdout[-3000:]}")
