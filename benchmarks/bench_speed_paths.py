"""asv suites for the data-dependent resampling paths (issue 16).

Run with ``asv run --python=same --quick --bench bench_speed_paths``.  Sizes
are small so an asv run is quick; ``python -m benchmarks.speed_paths`` holds
the issue's sizes and prints the ratios side by side.

* ``ManyClasses``: ``kappa_ci`` (BCa) on banded errors at K = 5, 100, 1000,
  the sparse-cell path against the dense path of earlier releases.
* ``CompareJointTypes``: ``compare`` (10 models, QWK, BCa) on models that err
  independently (many joint types: rows drawn into per-model tables) and on
  the README's data (few joint types), against the joint-type multinomial.
"""

from __future__ import annotations

import os

# time the parallel bootstrap drivers whatever the kernel cache holds (a fresh
# cache runs mid-sized bootstraps on their serial twins; see fastkappa._core.units)
os.environ.setdefault("FASTKAPPA_COLD_SERIAL", "0")

import fastkappa as fk
from benchmarks.bench_compare import noisy_models
from benchmarks.speed_paths import _setting, banded, independent_models

N_RESAMPLES = 2_000


class ManyClasses:
    """kappa_ci BCa, 10^5 rows, 2,000 resamples, predictions within +-2 classes."""

    params = (["fastkappa", "dense_path"], [5, 100, 1000])
    param_names = ["impl", "k"]
    timeout = 300

    def setup(self, impl, k):
        self.t, self.p = banded(10**5, k)
        self.old = 1 << 62 if impl == "dense_path" else None
        self.time_kappa_ci(impl, k)  # warm-up: compile or load from numba's cache

    def time_kappa_ci(self, impl, k):
        def run():
            fk.kappa_ci(self.t, self.p, n_classes=k, n_resamples=N_RESAMPLES, seed=0)

        if self.old is None:
            run()
        else:
            with _setting("SPARSE_MIN_CLASSES", self.old):
                run()


class CompareJointTypes:
    """compare 10 models, 10^5 rows, QWK, 500 paired resamples, BCa."""

    params = (["fastkappa", "joint_types_path"], ["independent_errors", "readme_data"])
    param_names = ["impl", "data"]
    timeout = 300

    def setup(self, impl, data):
        n = 10**5
        self.t, self.models = (independent_models(n) if data == "independent_errors"
                               else noisy_models(n))
        self.time_compare(impl, data)

    def time_compare(self, impl, data):
        def run():
            fk.compare(self.t, self.models, weights="quadratic", n_classes=5,
                       n_resamples=500, seed=0)

        if impl == "fastkappa":
            run()
        else:
            with _setting("ROWS_MIN_TYPES_PER_ROW", float("inf")):
                run()
