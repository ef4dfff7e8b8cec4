"""Observed coverage of fk.agreement's intervals for many raters.

``python benchmarks/coverage_agreement.py [n_sims] [n_resamples]`` simulates
panels of 4 raters grading items on a 4-point scale (each rater copies a
latent grade with probability 0.6, else rates at random with a rater-specific
bias; 10% of ratings missing), computes every coefficient's 95% interval by
each method at 100, 500 and 2,000 items, and prints the share of intervals
that cover the population value (each coefficient on 2,000,000 items, whose
sampling error is far below the intervals' widths).  With S simulations the
Monte Carlo standard error of a coverage near 0.95 is about
sqrt(0.95 * 0.05 / S): 0.01 at S = 500.
"""

from __future__ import annotations

import os
import sys
import warnings

# time the parallel bootstrap drivers whatever the kernel cache holds (a fresh
# cache runs mid-sized bootstraps on their serial twins; see fastkappa._core.units)
os.environ.setdefault("FASTKAPPA_COLD_SERIAL", "0")

import numpy as np

import fastkappa as fk

ALL = ("percent_agreement", "fleiss_kappa", "conger_kappa", "gwet_ac", "brennan_prediger",
       "krippendorff_alpha")
METHODS = ("asymptotic", "percentile", "basic", "bca")


def simulate(n_items: int, rng: np.random.Generator, n_raters: int = 4, k: int = 4
             ) -> np.ndarray:
    truth = rng.choice(k, size=n_items, p=[0.4, 0.3, 0.2, 0.1])
    bias = np.array([[0.4, 0.3, 0.2, 0.1], [0.25] * 4, [0.1, 0.2, 0.3, 0.4],
                     [0.3, 0.2, 0.2, 0.3]])[:n_raters]
    noise = np.stack([rng.choice(k, size=n_items, p=b) for b in bias], axis=1)
    x = np.where(rng.random((n_items, n_raters)) < 0.6, truth[:, None], noise).astype(float)
    x[rng.random(x.shape) < 0.1] = np.nan
    return x


def population_values(seed: int = 12345) -> dict[str, float]:
    big = fk.agreement(simulate(2_000_000, np.random.default_rng(seed)), n_classes=4)
    return {row.coefficient: row.estimate for row in big}


def coverage(n_items: int, n_sims: int, n_resamples: int, truth: dict, seed: int = 0
             ) -> dict[tuple[str, str], float]:
    rng = np.random.default_rng(seed)
    hits = {(m, c): 0 for m in METHODS for c in ALL}
    for s in range(n_sims):
        x = simulate(n_items, rng)
        for m in METHODS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = fk.agreement(x, method=m, n_resamples=n_resamples, seed=s, n_classes=4)
            for row in res:
                hits[m, row.coefficient] += row.low <= truth[row.coefficient] <= row.high
    return {key: v / n_sims for key, v in hits.items()}


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Coverage of fk.agreement's intervals "
                                     "in simulated panels.")
    parser.add_argument("n_sims", nargs="?", type=int, default=500,
                        help="simulations per sample size (500)")
    parser.add_argument("n_resamples", nargs="?", type=int, default=2000,
                        help="bootstrap resamples (2,000)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    n_sims, n_resamples = args.n_sims, args.n_resamples
    truth = population_values()
    print(f"95% intervals, {n_sims} simulations, {n_resamples} resamples; population values:",
          ", ".join(f"{c} {v:.3f}" for c, v in truth.items()))
    for n in (100, 500, 2000):
        cov = coverage(n, n_sims, n_resamples, truth)
        print(f"\nn = {n} items")
        print(f"{'coefficient':20s}" + "".join(f"{m:>12s}" for m in METHODS))
        for c in ALL:
            print(f"{c:20s}" + "".join(f"{cov[m, c]:12.3f}" for m in METHODS))


if __name__ == "__main__":
    main()
