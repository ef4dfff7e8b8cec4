"""Coverage of fk.agreement's 95% intervals by simulation (marked slow).

Panels of 4 raters on a 4-point scale: each rater copies a latent grade with
probability 0.6, else rates at random with its own bias; 10% of ratings are
missing.  The population value of each coefficient is its estimate on
2,000,000 simulated items (sampling error about 0.0005, far below the
intervals' half-widths near 0.07 at 300 items).  The full table for every
method at 100, 500 and 2,000 items is in docs/coverage.md ("Many raters")
(benchmarks/coverage_agreement.py).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fastkappa as fk

REPETITIONS = 300
N_ITEMS = 300
COEFFICIENTS = ["fleiss_kappa", "conger_kappa", "gwet_ac", "krippendorff_alpha"]


def _simulate(n_items, rng):
    truth = rng.choice(4, size=n_items, p=[0.4, 0.3, 0.2, 0.1])
    bias = [[0.4, 0.3, 0.2, 0.1], [0.25] * 4, [0.1, 0.2, 0.3, 0.4], [0.3, 0.2, 0.2, 0.3]]
    noise = np.stack([rng.choice(4, size=n_items, p=b) for b in bias], axis=1)
    x = np.where(rng.random((n_items, 4)) < 0.6, truth[:, None], noise).astype(float)
    x[rng.random(x.shape) < 0.1] = np.nan
    return x


@pytest.mark.slow
@pytest.mark.parametrize("method", ["asymptotic", "percentile"])
def test_agreement_intervals_cover_95_percent(method):
    big = fk.agreement(_simulate(2_000_000, np.random.default_rng(12345)),
                       coefficients=COEFFICIENTS, n_classes=4)
    truth = {row.coefficient: row.estimate for row in big}
    rng = np.random.default_rng(2024)
    hits = dict.fromkeys(COEFFICIENTS, 0)
    for rep in range(REPETITIONS):
        x = _simulate(N_ITEMS, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fk.DegenerateIntervalWarning)
            res = fk.agreement(x, coefficients=COEFFICIENTS, method=method,
                               n_resamples=1000, seed=rep, n_classes=4)
        for row in res:
            hits[row.coefficient] += row.low <= truth[row.coefficient] <= row.high
    # Monte Carlo SE of a 0.95 coverage over 300 repetitions: 0.0126; the
    # window is about 3 SEs wide on each side
    for name, h in hits.items():
        assert 0.91 <= h / REPETITIONS <= 0.985, (name, h / REPETITIONS)
