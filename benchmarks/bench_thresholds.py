"""asv suites for threshold optimisation: fastkappa against Kaggle's OptimizedRounder.

Run with ``asv run --python=same --quick --bench Thresholds`` (or
``asv check --python=same``).  The OptimizedRounder recipe is the one Kaggle
notebooks copy: ``pandas.cut`` at the cut points, scikit-learn's
``cohen_kappa_score(weights="quadratic")`` as the objective and
``scipy.optimize.minimize(method="nelder-mead")`` from ``[0.5, 1.5, ...]``.
``track_qwk`` records the QWK each method reaches, so a speed-up can never
hide a worse answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import partial

# time the parallel bootstrap drivers whatever the kernel cache holds (a fresh
# cache runs mid-sized bootstraps on their serial twins; see fastkappa._core.units)
os.environ.setdefault("FASTKAPPA_COLD_SERIAL", "0")

import numpy as np

import fastkappa as fk


def graded_scores(n: int, k: int = 5, seed: int = 0, sd: float = 0.8):
    """True grades 0..k-1 and a regression model's scores: grade + Gaussian noise."""
    rng = np.random.default_rng(seed)
    t = rng.integers(0, k, n)
    return t, t + rng.normal(0.0, sd, n)


class OptimizedRounder:
    """Kaggle's OptimizedRounder, as published (Nelder-Mead on the cut points)."""

    def __init__(self, k: int = 5):
        self.k = k

    def _loss(self, coef, x, y):
        import pandas as pd
        from sklearn.metrics import cohen_kappa_score

        p = pd.cut(x, [-np.inf, *np.sort(coef), np.inf], labels=list(range(self.k)))
        return -cohen_kappa_score(y, p, weights="quadratic")

    def fit(self, x, y):
        import scipy.optimize

        init = [i + 0.5 for i in range(self.k - 1)]
        res = scipy.optimize.minimize(partial(self._loss, x=x, y=y), init,
                                      method="nelder-mead")
        self.coef_ = np.sort(res.x)
        return self

    def predict(self, x):
        return np.searchsorted(self.coef_, x, side="left")  # pandas.cut: (a, b] bins


def qwk(t, p):
    from sklearn.metrics import cohen_kappa_score

    return cohen_kappa_score(t, p, weights="quadratic")


class Thresholds:
    """optimize_thresholds vs OptimizedRounder, K = 5."""

    params = (["fastkappa", "kaggle_optimized_rounder"], [100_000, 1_000_000])
    param_names = ["impl", "n"]
    timeout = 300

    def setup(self, impl, n):
        if impl == "kaggle_optimized_rounder" and n > 100_000:
            raise NotImplementedError  # ~20 s per call; the comparison test covers it
        self.t, self.s = graded_scores(n)
        if impl == "fastkappa":
            self.f = lambda: fk.apply_thresholds(self.s, fk.optimize_thresholds(self.t, self.s))
        else:
            self.f = lambda: OptimizedRounder(5).fit(self.s, self.t).predict(self.s)
        self.f()  # warm-up: compile or load from numba's cache

    def time_optimize(self, impl, n):
        self.f()

    def peakmem_optimize(self, impl, n):
        self.f()

    def track_qwk(self, impl, n):
        return qwk(self.t, self.f())

    track_qwk.unit = "QWK"


class ThresholdsWeighted:
    """With sample weights, several K and weights (the DP cost grows with K)."""

    params = ([3, 5, 10], [None, "linear", "quadratic"])
    param_names = ["k", "weights"]

    def setup(self, k, weights):
        self.t, self.s = graded_scores(1_000_000, k)
        self.w = np.random.default_rng(1).uniform(0.5, 2.0, len(self.t))
        fk.optimize_thresholds(self.t[:100], self.s[:100], n_classes=k, weights=weights,
                               sample_weight=self.w[:100])

    def time_optimize(self, k, weights):
        fk.optimize_thresholds(self.t, self.s, n_classes=k, weights=weights,
                               sample_weight=self.w)


class ThresholdOptimizerCV:
    """ThresholdOptimizer.fit with 5-fold out-of-fold QWK (6 optimisations, one sort)."""

    params = [100_000, 1_000_000]
    param_names = ["n"]

    def setup(self, n):
        self.t, self.s = graded_scores(n)
        fk.ThresholdOptimizer(cv=2, seed=0).fit(self.t[:1000], self.s[:1000])

    def time_fit_cv5(self, n):
        fk.ThresholdOptimizer(cv=5, seed=0).fit(self.t, self.s)


class ApplyThresholds:
    params = [1_000_000, 10_000_000]
    param_names = ["n"]

    def setup(self, n):
        _, self.s = graded_scores(n)
        self.cuts = np.array([0.5, 1.5, 2.5, 3.5])

    def time_apply(self, n):
        fk.apply_thresholds(self.s, self.cuts)


class ThresholdsFirstCall:
    """First optimize_thresholds call in a fresh process (numba cache warm)."""

    timeout = 240
    number = 1
    repeat = 5
    code = ("import numpy as np, fastkappa as fk; "
            "fk.optimize_thresholds(np.array([0, 1, 2, 1]), np.array([0.1, 0.9, 2.2, 1.1]))")

    def setup(self):
        subprocess.run([sys.executable, "-c", self.code], check=True)

    def time_import_and_first_call(self):
        subprocess.run([sys.executable, "-c", self.code], check=True)
