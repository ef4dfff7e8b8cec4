"""Cross-validation folds for :class:`fastkappa.ThresholdOptimizer`: stratified,
grouped (groups kept whole, classes balanced), or from a scikit-learn splitter."""

from __future__ import annotations

import numpy as np

from ._core.columns import CodesColumn, as_column
from ._core.units import resolve_seed


def _check_cv(cv):
    if cv is None or (hasattr(cv, "split") and not isinstance(cv, (str, bytes))):
        return cv
    if isinstance(cv, bool) or not isinstance(cv, (int, np.integer)) or cv < 2:
        raise ValueError(
            "`cv` must be None, an integer number of folds >= 2 or a splitter with a "
            f"split() method (e.g. sklearn.model_selection.StratifiedKFold); got {cv!r}.")
    return int(cv)


def _stratified_folds(t: np.ndarray, n_classes: int, n_folds: int, seed) -> np.ndarray:
    """Fold of each row: every class split into ``n_folds`` near-equal parts.

    Without a seed the rows of each class are taken in input order
    (contiguous blocks, like ``StratifiedKFold(shuffle=False)``); with one
    they are shuffled first.
    """
    rng = None if seed is None else np.random.default_rng(resolve_seed(seed))
    fold = np.empty(len(t), dtype=np.int64)
    order = np.argsort(t, kind="stable")
    counts = np.bincount(t, minlength=n_classes)
    start = 0
    for c in range(n_classes):
        rows = order[start:start + counts[c]]
        start += counts[c]
        if rng is not None:
            rows = rng.permutation(rows)
        m = len(rows)
        fold[rows] = (np.arange(m) * n_folds) // max(m, 1)
    return fold


def _grouped_folds(t: np.ndarray, group: np.ndarray, n_classes: int, n_folds: int,
                   seed) -> np.ndarray:
    """Fold of each row with every group whole in one fold, classes kept balanced.

    Groups are placed largest first (ties in order of first appearance, or
    shuffled with a seed); each goes to the fold where, after adding it,
    the per-class shares of all rows placed so far stay most even: the fold
    minimising ``sum_c ((count[f, c] + g_c) / total_c)^2``, ties to the fold
    with fewer rows, then the lower index (as scikit-learn's
    ``StratifiedGroupKFold`` does, without its randomness).
    """
    n_groups = int(group.max()) + 1
    counts = np.zeros((n_groups, n_classes), dtype=np.int64)
    np.add.at(counts, (group, t), 1)
    sizes = counts.sum(axis=1)
    order = np.arange(n_groups)
    if seed is not None:
        order = np.random.default_rng(seed).permutation(n_groups)
    order = order[np.argsort(-sizes[order], kind="stable")]
    totals = np.maximum(counts.sum(axis=0), 1).astype(np.float64)
    placed = np.zeros((n_folds, n_classes), dtype=np.float64)
    group_fold = np.empty(n_groups, dtype=np.int64)
    for g in order:
        cost = (((placed + counts[g]) / totals) ** 2).sum(axis=1)
        f = int(np.lexsort((np.arange(n_folds), placed.sum(axis=1), cost))[0])
        placed[f] += counts[g]
        group_fold[g] = f
    return group_fold[group]


def _groups_iv(groups, n: int) -> np.ndarray:
    """Group code (0..G-1, in order of first appearance) of each of the ``n`` rows.

    The shape, the length and missing ids were checked by the shared input
    layer (``omit_missing_ids``) before this is called."""
    col = as_column(groups, "groups")
    values = (np.asarray(col.codes, dtype=np.int64) if isinstance(col, CodesColumn)
              else np.asarray(col.values))
    assert len(values) == n
    _, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse.ravel()]


def _splitter_folds(cv, t: np.ndarray, groups: np.ndarray | None = None
                    ) -> tuple[np.ndarray, int]:
    n = len(t)
    fold = np.full(n, -1, dtype=np.int64)
    n_folds = 0
    split = (cv.split(np.zeros((n, 1)), t) if groups is None
             else cv.split(np.zeros((n, 1)), t, groups))
    for f, (_, test) in enumerate(split):
        test = np.asarray(test)
        if np.any(fold[test] >= 0):
            raise ValueError(
                "the `cv` splitter puts a row in more than one test fold; out-of-fold "
                "predictions need test folds that cover every row exactly once "
                "(KFold-like splitters).")
        fold[test] = f
        n_folds = f + 1
    if np.any(fold < 0):
        raise ValueError(
            "the `cv` splitter leaves rows out of every test fold; out-of-fold "
            "predictions need test folds that cover every row exactly once "
            "(KFold-like splitters).")
    if groups is not None:
        per_group = np.zeros(int(groups.max()) + 1, dtype=np.int64)
        np.maximum.at(per_group, groups, fold)
        low = np.full_like(per_group, n_folds)
        np.minimum.at(low, groups, fold)
        split_groups = int(np.count_nonzero(per_group != low))
        if split_groups:
            raise ValueError(
                f"the `cv` splitter puts {split_groups} group(s) of `groups` in more than "
                "one test fold; pass cv=k (fastkappa keeps groups whole) or a group-aware "
                "splitter such as sklearn.model_selection.GroupKFold.")
    return fold, n_folds
