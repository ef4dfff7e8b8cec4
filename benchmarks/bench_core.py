"""asv suites for the core engine: scoring against the alternatives.

Run with ``asv run --python=same --quick`` (or ``asv check --python=same``).
Every suite is parametrised over the implementation, so asv's own tables show
fastkappa beside scikit-learn and NumPy ``bincount`` in one run.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np

import fastkappa as fk
from benchmarks._data import graded_pair, string_pair


def _bincount_kappa(t, p, k, weights):
    o = np.bincount(t.astype(np.int64) * k + p, minlength=k * k).reshape(k, k)
    return fk.kappa_from_confusion(o, weights)


class Scoring:
    """cohen_kappa at n rows, K = 5, by implementation, weights and dtype."""

    params = (
        ["fastkappa", "sklearn", "numpy_bincount"],
        [100_000, 1_000_000, 10_000_000],
        ["quadratic", None],
        ["int64", "int8"],
    )
    param_names = ["impl", "n", "weights", "dtype"]
    timeout = 240

    def setup(self, impl, n, weights, dtype):
        if impl == "sklearn" and n > 1_000_000:
            raise NotImplementedError  # minutes per call; the comparison script covers it
        self.t, self.p = graded_pair(n, 5, dtype=np.dtype(dtype))
        if impl == "fastkappa":
            self.f = lambda: fk.cohen_kappa(self.t, self.p, weights=weights, n_classes=5)
        elif impl == "sklearn":
            from sklearn.metrics import cohen_kappa_score

            self.f = lambda: cohen_kappa_score(self.t, self.p, weights=weights,
                                               labels=np.arange(5))
        else:
            self.f = lambda: _bincount_kappa(self.t, self.p, 5, weights)
        self.f()  # warm-up: compile or load from numba's cache

    def time_score(self, impl, n, weights, dtype):
        self.f()

    def peakmem_score(self, impl, n, weights, dtype):
        self.f()


class Labels:
    """Labels 0..4, 1..5 and strings at n = 1e6 (quadratic needs an order)."""

    params = (["fastkappa", "sklearn"], ["0..4", "1..5", "strings"])
    param_names = ["impl", "labels"]
    timeout = 240

    def setup(self, impl, labels):
        n = 1_000_000
        if labels == "strings":
            self.t, self.p = string_pair(n)
            kw = {}
        else:
            off = 0 if labels == "0..4" else 1
            self.t, self.p = graded_pair(n, 5, offset=off)
            kw = {"labels": list(range(off, off + 5))}
        if impl == "fastkappa":
            self.f = lambda: fk.cohen_kappa(self.t, self.p, **kw)
        else:
            from sklearn.metrics import cohen_kappa_score

            self.f = lambda: cohen_kappa_score(self.t, self.p, **kw)
        self.f()

    def time_unweighted(self, impl, labels):
        self.f()


class FirstCall:
    """Latency of a first call in a fresh process (numba cache warm) and of import."""

    timeout = 240
    number = 1
    repeat = 5

    def setup(self):
        subprocess.run([sys.executable, "-c", "import fastkappa as fk; "
                        "fk.cohen_kappa([0, 1, 1], [0, 1, 0], n_classes=2)"], check=True)

    def time_import(self):
        subprocess.run([sys.executable, "-c", "import fastkappa"], check=True)

    def time_import_and_first_call(self):
        subprocess.run([sys.executable, "-c", "import fastkappa as fk; "
                        "fk.cohen_kappa([0, 1, 1], [0, 1, 0], n_classes=2)"], check=True)
