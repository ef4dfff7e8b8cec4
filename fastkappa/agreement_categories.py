"""Per-category agreement: each class against all the others (Fleiss 1971)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._agreement_result import Agreement
from ._raters_input import RatingsTable

__all__ = ["agreement_by_category"]


def _binary_table(table: RatingsTable, k: int) -> RatingsTable:
    """Class ``k`` (code 0) against every other class (code 1)."""
    counts = table.counts
    hit = counts[:, k]
    binary = np.stack([hit, counts.sum(axis=1) - hit], axis=1)
    codes = None
    if table.has_codes:
        codes = np.where(table.codes < 0, -1, np.where(table.codes == k, 0, 1)).astype(
            np.int32)
    classes = np.array([table.classes[k], "other"], dtype=object)
    return RatingsTable(classes=classes, ordered=False, counts=binary, codes=codes,
                        rated=table.rated, n_input=table.n_input, raters=table.raters,
                        rater_counts=table.rater_counts, row_item=table.row_item,
                        n_pairable=table.n_pairable)


def agreement_by_category(
    ratings: ArrayLike | None = None,
    *,
    coefficients: str | list[str] | None = None,
    method: str = "asymptotic",
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | np.random.SeedSequence | np.random.Generator | None = None,
    clusters: ArrayLike | None = None,
    population_size: float | None = None,
    **keywords: Any,
) -> dict[Any, Agreement]:
    """Agreement on each class against all the others, with intervals.

    Every rating becomes "class k" or "another class", and the coefficients
    of :func:`fastkappa.agreement` are computed on these two categories,
    one class at a time. Fleiss' kappa on them is Fleiss' (1971)
    category-specific kappa.

    Parameters
    ----------
    ratings, item, rater, label, counts, labels, n_classes, missing
        The data, as in :func:`fastkappa.agreement`.
    coefficients, method, confidence_level, n_resamples, seed, clusters, population_size
        As in :func:`fastkappa.agreement` (no weights: two categories). Each
        class uses the same seed.

    Returns
    -------
    dict
        Class -> :class:`~fastkappa.Agreement`, in class order.

    References
    ----------
    .. [1] Fleiss, J. L. (1971). Measuring nominal scale agreement among many
       raters. Psychological Bulletin, 76(5), 378-382.

    Examples
    --------
    >>> import fastkappa as fk
    >>> ratings = [[1, 1, 1], [1, 2, 2], [3, 3, 3], [2, 2, 1], [3, 3, 2]]
    >>> res = fk.agreement_by_category(ratings, coefficients="fleiss_kappa")
    >>> {c: round(r["fleiss_kappa"].estimate, 3) for c, r in res.items()}
    {1: 0.4, 2: 0.1, 3: 0.7}
    """
    from ._core.intervals import _kappa_ci_iv
    from .agreement import _encode, agreement_from_table

    method, cl, n_resamples, seq = _kappa_ci_iv(method, confidence_level, n_resamples, seed)
    table = _encode(ratings, keywords, False, agreement_by_category)
    out = {}
    for k, cls in enumerate(table.classes):
        key = cls.item() if isinstance(cls, np.generic) else cls
        child = np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key,
                                       pool_size=seq.pool_size)
        out[key] = agreement_from_table(_binary_table(table, k), coefficients, None, None,
                                        method, cl, n_resamples, child, clusters,
                                        population_size)
    return out
