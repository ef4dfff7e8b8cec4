"""Observed coverage of kappa's confidence intervals, by simulation.

    python benchmarks/coverage_table.py [--repetitions 1000] [--n-resamples 2000]

prints a Markdown table (docs/coverage.md holds its output) of the share of
datasets whose interval covers the population kappa, for every method at
n = 100, 200, 500 and 1000.

Populations with a known kappa: with one margin ``pi`` for both raters,
``p = (1 - lam) pi pi^T + lam diag(pi)`` has kappa = ``lam`` for *any*
weights (the disagreement weights are zero on the diagonal); with different
margins the population kappa is computed from ``p``.  A dataset of ``n`` iid
rows is a Multinomial(n, p) table, which is all an iid interval uses.
Small-n undercoverage is reported as it is.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from dataclasses import dataclass

# time the parallel bootstrap drivers whatever the kernel cache holds (a fresh
# cache runs mid-sized bootstraps on their serial twins; see fastkappa._core.units)
os.environ.setdefault("FASTKAPPA_COLD_SERIAL", "0")

import numpy as np

import fastkappa as fk
from fastkappa.exceptions import DegenerateIntervalWarning

METHODS = ("percentile", "basic", "bca", "asymptotic")


@dataclass(frozen=True)
class Scenario:
    name: str
    weights: str | None
    p: np.ndarray

    @property
    def kappa(self) -> float:
        return fk.kappa_from_confusion(self.p, self.weights)


def _agreement(pi, lam):
    pi = np.asarray(pi, dtype=float)
    return (1 - lam) * np.outer(pi, pi) + lam * np.diag(pi)


def scenarios() -> list[Scenario]:
    r = np.array([0.5, 0.3, 0.2])
    c = np.array([0.35, 0.35, 0.3])
    mixed = 0.55 * np.outer(r, c) + 0.45 * np.diag([0.4, 0.35, 0.25])
    return [
        Scenario("K=2, margins 0.3/0.7, kappa 0.5, unweighted", None,
                 _agreement([0.3, 0.7], 0.5)),
        Scenario("K=3, uniform margins, kappa 0.7, linear", "linear",
                 _agreement([1 / 3, 1 / 3, 1 / 3], 0.7)),
        Scenario("K=5, skewed margins, kappa 0.6, quadratic", "quadratic",
                 _agreement([0.1, 0.2, 0.3, 0.25, 0.15], 0.6)),
        Scenario("K=3, different margins per rater, unweighted", None, mixed / mixed.sum()),
        # harder: a rare class and high agreement (skewed sampling distribution)
        Scenario("K=2, rare class 10%, kappa 0.8, unweighted", None,
                 _agreement([0.1, 0.9], 0.8)),
        Scenario("K=5, rare extreme grades, kappa 0.85, quadratic", "quadratic",
                 _agreement([0.03, 0.17, 0.5, 0.27, 0.03], 0.85)),
    ]


def coverage(scenario: Scenario, n: int, repetitions: int, n_resamples: int, seed: int,
             methods=METHODS) -> dict[str, float]:
    """Share of ``repetitions`` datasets whose interval covers the population kappa.

    Every method sees the same datasets; the bootstrap methods of one dataset
    share its seed.  Datasets whose kappa is undefined count as misses.
    """
    rng = np.random.default_rng(seed)
    k = scenario.p.shape[0]
    truth = scenario.kappa
    hits = dict.fromkeys(methods, 0)
    for rep in range(repetitions):
        table = rng.multinomial(n, scenario.p.ravel()).reshape(k, k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateIntervalWarning)
            warnings.simplefilter("ignore", fk.UndefinedKappaWarning)
            for method in methods:
                res = fk.kappa_ci_from_confusion(table, weights=scenario.weights,
                                                 method=method, n_resamples=n_resamples,
                                                 seed=seed * 1_000_003 + rep)
                hits[method] += bool(res.low <= truth <= res.high)
    return {m: hits[m] / repetitions for m in methods}


SIZES = (100, 200, 500, 1000)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=1000)
    parser.add_argument("--n-resamples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    print(f"Coverage of nominal 95% intervals: {args.repetitions} datasets per cell, "
          f"{args.n_resamples} bootstrap replicates per interval, seed {args.seed}. "
          "Monte-Carlo standard error about "
          f"{100 * np.sqrt(0.95 * 0.05 / args.repetitions):.1f} points.\n")
    header = "| population | true kappa | n | " + " | ".join(METHODS) + " |"
    print(header)
    print("|" + "---|" * (3 + len(METHODS)))
    for i, sc in enumerate(scenarios()):
        for n in SIZES:
            cov = coverage(sc, n, args.repetitions, args.n_resamples, args.seed + 97 * i + n)
            cells = " | ".join(f"{100 * cov[m]:.1f}%" for m in METHODS)
            print(f"| {sc.name} | {sc.kappa:.3f} | {n} | {cells} |", flush=True)
    print(f"\n({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
