"""Per-group and per-cluster tables counted from a stream of record batches.

``fastkappa score --by`` and ``--clusters`` read a file batch by batch; what
they keep is one sparse K x K table per group, per cluster (or per group and
cluster pair), never the rows.  Memory grows with the number of distinct
(unit, cell) entries, not with the file.

* :class:`KeyIndex` numbers the distinct values of a column (labels, group
  ids, cluster ids) in order of first appearance, across batches and threads;
* :class:`CellCounts` counts ``(unit, true class, predicted class)`` triples
  into a sorted, deduplicated array, merged batch by batch;
* :class:`UnitTables` puts them on the final class scale, and
  :func:`score_groups` scores every group (with intervals seeded per group).

The tables are then handed to the same reductions the Python API uses
(the group kernel's kappa for many tables, the cluster resampling units of
:mod:`fastkappa.bootstrap`), so the numbers are those of
:func:`fastkappa.kappa_by_group` and :func:`fastkappa.kappa_ci`.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np

from ._core.columns import CodesColumn
from ._core.config import MAX_CLASSES
from ._io import DataError

#: stride of a class id inside a key (ids of true and predicted classes)
_CLASS_STRIDE = MAX_CLASSES
_CELL_STRIDE = MAX_CLASSES * MAX_CLASSES


class KeyIndex:
    """Numbers for the distinct values of one column, in order of first appearance.

    Integer values are numbered with sorted arrays (vectorised); strings and
    other values with a dict.  Safe to share between threads.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ints = np.empty(0, dtype=np.int64)  # sorted integer keys
        self._int_ids = np.empty(0, dtype=np.int64)
        self._other: dict = {}
        self.values: list = []  # id -> value

    def __len__(self) -> int:
        return len(self.values)

    def ids(self, col) -> np.ndarray:
        """The id of every row's value (int64), numbering new values."""
        if isinstance(col, CodesColumn):
            codes = np.asarray(col.codes)
            cats = np.asarray(col.categories)
            if len(cats) == 0:
                return np.full(len(codes), -1, dtype=np.int64)
            used = np.unique(codes[codes >= 0])
            mapped = np.full(len(cats), -1, dtype=np.int64)
            if len(used):
                mapped[used] = self._lookup(cats[used])
            return mapped[codes]
        vals = np.asarray(col)
        if len(vals) == 0:
            return np.empty(0, dtype=np.int64)
        uniq, inverse = np.unique(vals, return_inverse=True)
        return self._lookup(uniq)[inverse.reshape(-1)]

    def _lookup(self, uniq: np.ndarray) -> np.ndarray:
        with self._lock:
            if uniq.dtype.kind in "iub":
                return self._lookup_ints(uniq.astype(np.int64))
            out = np.empty(len(uniq), dtype=np.int64)
            table = self._other
            for i, v in enumerate(uniq.tolist()):
                j = table.get(v)
                if j is None:
                    j = table[v] = len(self.values)
                    self.values.append(v)
                out[i] = j
            return out

    def _lookup_ints(self, uniq: np.ndarray) -> np.ndarray:
        known = self._ints
        pos = np.searchsorted(known, uniq)
        found = pos < len(known)
        found[found] = known[pos[found]] == uniq[found]
        new = uniq[~found]
        if len(new):
            first = len(self.values)
            self.values.extend(new.tolist())
            ids = np.concatenate([self._int_ids, np.arange(first, first + len(new))])
            keys = np.concatenate([known, new])
            order = np.argsort(keys, kind="stable")
            self._ints, self._int_ids = keys[order], ids[order]
            known = self._ints
            pos = np.searchsorted(known, uniq)
        return self._int_ids[pos]


class CellCounts:
    """Counts of ``(unit, true class id, predicted class id)``, sparse and sorted.

    Each batch's distinct keys are merged into one sorted array in place of
    a growing list (so memory is the distinct entries plus one batch, never
    the rows).  Safe to share between threads.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys = np.empty(0, dtype=np.int64)
        self._counts = np.empty(0, dtype=np.int64)

    def add(self, unit: np.ndarray, t: np.ndarray, p: np.ndarray) -> None:
        key = (unit.astype(np.int64) * _CELL_STRIDE + t.astype(np.int64) * _CLASS_STRIDE
               + p.astype(np.int64))
        keys, counts = np.unique(key, return_counts=True)
        del key
        self._merge(keys, counts.astype(np.int64))

    def merge(self, other: CellCounts) -> None:
        if other is not self:
            self._merge(other._keys, other._counts)

    def _merge(self, keys: np.ndarray, counts: np.ndarray) -> None:
        """Add sorted, distinct ``keys`` with their ``counts``."""
        with self._lock:
            known = self._keys
            pos = np.searchsorted(known, keys)
            found = pos < len(known)
            found[found] = known[pos[found]] == keys[found]
            self._counts[pos[found]] += counts[found]
            new = ~found
            if new.any():
                self._keys = np.insert(known, pos[new], keys[new])
                self._counts = np.insert(self._counts, pos[new], counts[new])

    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(unit, true id, predicted id, count)`` of every entry, sorted by unit."""
        unit = self._keys // _CELL_STRIDE
        rest = self._keys - unit * _CELL_STRIDE
        return unit, rest // _CLASS_STRIDE, rest % _CLASS_STRIDE, self._counts


def class_positions(index: KeyIndex, labels: np.ndarray) -> np.ndarray:
    """For every class id of ``index``, its position in the final ``labels``."""
    where = {v: i for i, v in enumerate(np.asarray(labels).tolist())}
    return np.array([where[v] for v in index.values], dtype=np.int64)


class UnitTables:
    """The streamed (unit, true, predicted) counts on the final class scale."""

    def __init__(self, state, cells, labels: np.ndarray) -> None:
        unit, ti, pi, count = cells.entries()
        pos = class_positions(state.labels, labels)
        self.k = len(labels)
        self.t, self.p, self.count = pos[ti], pos[pi], count
        self.group = self.cluster = None
        if state.pairs is not None:
            gid, cid = state.pair_parts()
            self.group, self.cluster = gid[unit], cid[unit]
        elif state.groups is not None:
            self.group = unit
        else:
            self.cluster = unit
        self.state = state

    def group_order(self) -> tuple[list, np.ndarray]:
        """Group keys sorted as :func:`fastkappa.kappa_by_group` sorts them, and the
        rank of every group id."""
        keys = self.state.groups.values
        order = sorted(range(len(keys)), key=lambda j: keys[j])
        rank = np.empty(len(keys), dtype=np.int64)
        rank[order] = np.arange(len(keys))
        return [keys[j] for j in order], rank

    def group_tables(self, rank: np.ndarray) -> np.ndarray:
        """(G, K, K) int64 tables, groups in sorted order."""
        k = self.k
        g = len(rank)
        flat = np.zeros(g * k * k, dtype=np.int64)
        np.add.at(flat, (rank[self.group] * k + self.t) * k + self.p, self.count)
        return flat.reshape(g, k, k)

    def cluster_ci(self, rows, weights, method, confidence_level, n_resamples, seed):
        """:func:`fastkappa.kappa_ci` with ``clusters`` from the per-cluster tables
        (``rows`` selects entries, None for all): the same units, so the same
        interval for the same seed."""
        import dataclasses

        from ._core import weights as weight_module
        from .bootstrap import (
            DENSE_CELLS_MAX,
            _ci_from_units,
            _kappa_ci_iv,
            _single_model_cells,
            units_from_clusters,
        )

        method, cl, n_resamples, seq = _kappa_ci_iv(method, confidence_level, n_resamples,
                                                    seed)
        k = self.k
        t, p, count, cluster = self.t, self.p, self.count, self.cluster
        if rows is not None:
            t, p, count, cluster = t[rows], p[rows], count[rows], cluster[rows]
        cells = t * k + p
        ids, codes = np.unique(cluster, return_inverse=True)
        if len(ids) < 2:
            raise DataError(
                f"an interval that resamples clusters needs at least 2 clusters; "
                f"{'this group holds' if rows is not None else 'the data hold'} "
                f"{len(ids)} (leave out `clusters` to treat rows as independent).")
        if k * k <= DENSE_CELLS_MAX:
            cell_t, cell_p = _single_model_cells(k)
        else:
            used, cells = np.unique(cells, return_inverse=True)
            cell_t, cell_p = used // k, (used % k)[:, None]
        units = units_from_clusters(cells, count.astype(np.float64), codes.reshape(-1),
                                    len(ids), cell_t, cell_p, k)
        units = dataclasses.replace(units, n_rows=int(count.sum()))
        wmat = weight_module.weight_matrix(k, weights)
        return _ci_from_units(units, wmat, method, cl, n_resamples, seq, stacklevel=2)


def score_groups(by: str, tables: UnitTables, weights, method, confidence_level,
                  n_resamples, seed, labels, overall):
    """Per-group scores (``by``) as a :class:`~fastkappa.groups.KappaByGroup`: the group
    kernel's kappa of every table, and intervals seeded as
    :func:`fastkappa.kappa_by_group` seeds them (one stream per group,
    spawned from ``seed``)."""
    from ._core import weights as weight_module
    from .bootstrap import kappa_ci_from_confusion
    from .exceptions import UndefinedKappaWarning
    from .groups import KappaByGroup, _group_kappas

    keys, rank = tables.group_order()
    confusion = tables.group_tables(rank)
    g, k = len(keys), tables.k
    wmat = weight_module.weight_matrix(k, weights)
    kappa, n = _group_kappas(confusion, wmat)
    undefined = int(np.isnan(kappa).sum())
    if undefined:
        warnings.warn(f"kappa is undefined in {undefined} of {g} groups of {by!r}; "
                      "they are reported as nan.", UndefinedKappaWarning, stacklevel=2)
    low = high = None
    if method is not None:
        low, high = np.full(g, np.nan), np.full(g, np.nan)
        seeds = np.random.SeedSequence(seed).spawn(g)
        if tables.cluster is not None:
            order = np.argsort(rank[tables.group], kind="stable")
            bounds = np.searchsorted(rank[tables.group][order], np.arange(g + 1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # per-group degenerate notes
            for i in range(g):
                if confusion[i].sum() == 0:
                    continue
                if tables.cluster is None:
                    res = kappa_ci_from_confusion(
                        confusion[i], weights=weights, method=method,
                        confidence_level=confidence_level,
                        n_resamples=n_resamples, seed=seeds[i])
                else:
                    try:
                        res = tables.cluster_ci(order[bounds[i]:bounds[i + 1]], weights,
                                                method, confidence_level,
                                                n_resamples, seeds[i])
                    except DataError:  # one cluster in this group: no interval
                        continue
                low[i], high[i] = res.low, res.high
    group_keys = np.empty(g, dtype=object)
    group_keys[:] = keys
    return KappaByGroup(
        groups=group_keys, kappa=kappa, n=n.astype(np.int64), overall=float(overall),
        confusion=confusion, classes=labels,
        weights=weights, low=low, high=high, method=method,
        confidence_level=confidence_level if method is not None else None)

