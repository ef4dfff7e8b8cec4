"""Coverage of kappa_ci's 95% intervals by simulation from populations with known kappa.

With one margin ``pi`` for both raters, ``p = (1 - lam) pi pi^T + lam
diag(pi)`` has kappa = ``lam`` for any weights (disagreement weights vanish on
the diagonal); the last population has different margins and its kappa is
computed from ``p``.  A dataset of n iid rows is a Multinomial(n, p) table.
The observed coverage of every method at n = 100..1000 is in docs/coverage.md
(benchmarks/coverage_table.py).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fastkappa as fk
from fastkappa.exceptions import DegenerateIntervalWarning

REPETITIONS = 1000
N_RESAMPLES = 1000


def _agreement(pi, lam):
    pi = np.asarray(pi, dtype=float)
    return (1 - lam) * np.outer(pi, pi) + lam * np.diag(pi)


def _mixed():
    r, c = np.array([0.5, 0.3, 0.2]), np.array([0.35, 0.35, 0.3])
    p = 0.55 * np.outer(r, c) + 0.45 * np.diag([0.4, 0.35, 0.25])
    return p / p.sum()


POPULATIONS = {
    "K2-unweighted-0.5": (None, _agreement([0.3, 0.7], 0.5), 0.5),
    "K3-linear-0.7": ("linear", _agreement([1 / 3, 1 / 3, 1 / 3], 0.7), 0.7),
    "K5-quadratic-0.6": ("quadratic", _agreement([0.1, 0.2, 0.3, 0.25, 0.15], 0.6), 0.6),
    "K3-unweighted-unequal-margins": (None, _mixed(), None),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(POPULATIONS))
def test_kappa_ci_percentile_and_bca_cover_95_percent_at_n_500(name):
    weights, p, lam = POPULATIONS[name]
    truth = fk.kappa_from_confusion(p, weights)
    if lam is not None:
        assert truth == pytest.approx(lam, abs=1e-12)  # the population's kappa is known
    k = p.shape[0]
    rng = np.random.default_rng([7, len(name), k])
    hits = {"percentile": 0, "bca": 0}
    for rep in range(REPETITIONS):
        table = rng.multinomial(500, p.ravel()).reshape(k, k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateIntervalWarning)
            for method in hits:
                res = fk.kappa_ci_from_confusion(table, weights=weights, method=method,
                                                 n_resamples=N_RESAMPLES, seed=rep)
                hits[method] += res.low <= truth <= res.high
    for method, h in hits.items():
        assert 0.925 <= h / REPETITIONS <= 0.975, (method, h / REPETITIONS)
