"""Per-group and per-cluster tables counted from a stream of record batches.

``fastkappa score --by`` and ``--clusters`` read a file batch by batch; what
they keep is one sparse K x K table per group, per cluster (or per group and
cluster pair), never the rows.  Memory grows with the number of distinct
(unit, cell) entries, not with the file.

* :class:`KeyIndex` numbers the distinct values of a column (labels, group
  ids, cluster ids) in order of first appearance, across batches and threads;
* :class:`CellCounts` counts ``(unit, true class, predicted class)`` triples
  into a sorted, deduplicated array, merged batch by batch.

The tables are then handed to the same reductions the Python API uses
(the group kernel's kappa for many tables, the cluster resampling units of
:mod:`fastkappa.bootstrap`), so the numbers are those of
:func:`fastkappa.kappa_by_group` and :func:`fastkappa.kappa_ci`.
"""

from __future__ import annotations

import threading

import numpy as np

from ._columns import CodesColumn
from ._validation import MAX_CLASSES

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
