"""Shared fixtures (keep this small: test modules hold their own helpers)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

# tests import their oracles as `from naive import ...`
sys.path.insert(0, str(Path(__file__).parent))

# bootstrap tests run the parallel drivers whatever the kernel cache holds (a
# fresh cache would otherwise pick their serial twins for mid-sized work, see
# fastkappa._core.units.run_driver); subprocesses inherit it
os.environ["FASTKAPPA_COLD_SERIAL"] = "0"


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh, fixed-seed generator per test."""
    return np.random.default_rng(20240601)
