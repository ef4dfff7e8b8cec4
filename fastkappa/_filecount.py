"""Per-group and per-cluster tables counted from a stream of record batches.

``fastkappa score --by`` and ``--clusters`` read a file batch by batch; what
they keep is one K x K table per group, per cluster (or per group and
cluster pair), never the rows.  Memory grows with the units times their
occupied cells, not with the file.

* :class:`KeyIndex` numbers the distinct values of a column (labels, group
  ids, cluster ids) across batches and threads;
* :class:`CellCounts` counts ``(unit, true class, predicted class)`` triples
  into one dense unit-major table (the group kernel's layout), or, when
  that would be too large, into a sorted array of the occupied entries;
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

from ._core.caller import user_stacklevel
from ._core.columns import CodesColumn
from ._core.config import MAX_CLASSES
from ._io import DataError

#: stride of a class id inside a key (ids of true and predicted classes)
_CLASS_STRIDE = MAX_CLASSES
_CELL_STRIDE = MAX_CLASSES * MAX_CLASSES


#: integer ids spanning at most this many values are numbered through a lookup table
_ID_LUT_SPAN = 1 << 22
#: the most entries a dense per-unit table may hold before counting turns sparse
DENSE_ENTRIES_MAX = 1 << 23


class KeyIndex:
    """Numbers for the distinct values of one column, across batches and threads.

    Integer values spanning a modest range are numbered through a lookup
    table over that range (no sort: one pass per batch); wider integers with
    sorted arrays; strings and other values with a dict.  New values of one
    batch are numbered in sorted order.  Safe to share between threads.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lo = 0
        self._lut: np.ndarray | None = None  # value - _lo -> id (-1: not met yet)
        self._ints = np.empty(0, dtype=np.int64)  # sorted integer keys (no lut)
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
            valid = codes >= 0
            used = np.flatnonzero(np.bincount(codes[valid], minlength=len(cats)))
            mapped = np.full(len(cats) + 1, -1, dtype=np.int64)  # code -1 -> -1
            if len(used):
                mapped[used] = self._lookup(cats[used])
            return mapped[codes]
        vals = np.asarray(col)
        if len(vals) == 0:
            return np.empty(0, dtype=np.int64)
        if vals.dtype.kind in "iub":
            with self._lock:
                ids = self._lut_ids(vals)
            if ids is not None:
                return ids
        uniq, inverse = np.unique(vals, return_inverse=True)
        return self._lookup(uniq)[inverse.reshape(-1)]

    def _lut_ids(self, vals: np.ndarray) -> np.ndarray | None:
        """Ids through the lookup table, or None once the values span too wide a range."""
        if self._lut is None and (len(self._ints) or self._other):
            return None
        lo, hi = int(vals.min()), int(vals.max())
        if self._lut is not None:
            lo, hi = min(lo, self._lo), max(hi, self._lo + len(self._lut) - 1)
        if hi - lo >= _ID_LUT_SPAN:
            if self._lut is not None:  # hand what the table holds to the sorted arrays
                known = np.flatnonzero(self._lut >= 0)
                self._ints = known.astype(np.int64) + self._lo
                self._int_ids = self._lut[known]
                self._lut = None
            return None
        if self._lut is None or lo < self._lo or hi >= self._lo + len(self._lut):
            lut = np.full(hi - lo + 1, -1, dtype=np.int64)
            if self._lut is not None:
                lut[self._lo - lo:self._lo - lo + len(self._lut)] = self._lut
            self._lut, self._lo = lut, lo
        at = vals.astype(np.int64) - self._lo
        ids = self._lut[at]
        unknown = ids < 0
        if unknown.any():
            new = np.flatnonzero(np.bincount(at[unknown], minlength=len(self._lut)))
            first = len(self.values)
            self._lut[new] = np.arange(first, first + len(new))
            self.values.extend((new + self._lo).tolist())
            ids = self._lut[at]
        return ids

    def _lookup(self, uniq: np.ndarray) -> np.ndarray:
        if uniq.dtype.kind == "f":
            # a whole number is the same id as that integer (one text block may hold
            # 1 and 2, a later one 1, 2 and 2.5): integers take the integer path
            whole = (uniq == np.floor(uniq)) & (np.abs(uniq) < 2.0**62)
            if whole.any():
                out = np.empty(len(uniq), dtype=np.int64)
                out[whole] = self._lookup(uniq[whole].astype(np.int64))
                if not whole.all():
                    out[~whole] = self._lookup(uniq[~whole])
                return out
        with self._lock:
            if uniq.dtype.kind in "iub":
                ids = self._lut_ids(uniq)
                if ids is not None:
                    return ids
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
    """Counts of ``(unit, true class id, predicted class id)``.

    While the units (groups, clusters) times the classes squared stay under
    :data:`DENSE_ENTRIES_MAX`, the counts live in one dense, unit-major flat
    table, the layout of :func:`fastkappa.kappa_by_group`'s group kernel
    (one K x K table per unit), added to in place batch by batch.  Past that
    they turn into a sorted array of the occupied entries, each batch's
    distinct keys merged in.  Either way memory is the tables (or their
    occupied cells) plus one batch, never the rows.  Safe to share between
    threads.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._dense: np.ndarray | None = np.zeros((0, 1, 1), dtype=np.int64)
        self._units = 0  # units met (rows of the dense table in use)
        self._keys = np.empty(0, dtype=np.int64)
        self._counts = np.empty(0, dtype=np.int64)

    @property
    def dense(self) -> np.ndarray | None:
        """The (units, k, k) counts while they are dense (ids as numbered), else None."""
        if self._dense is None:
            return None
        return self._dense[:self._units]

    def add(self, unit: np.ndarray, t: np.ndarray, p: np.ndarray) -> None:
        if len(unit) == 0:
            return
        unit, t, p = (np.asarray(a, dtype=np.int64) for a in (unit, t, p))
        n_units = int(unit.max()) + 1
        k = max(int(t.max()), int(p.max())) + 1
        with self._lock:
            if self._dense is not None and self._fit(n_units, k):
                kk = self._dense.shape[1]
                np.add.at(self._dense.reshape(-1), (unit * kk + t) * kk + p, 1)
                return
        key = unit * _CELL_STRIDE + t * _CLASS_STRIDE + p
        keys, counts = np.unique(key, return_counts=True)
        del key
        self._merge(keys, counts.astype(np.int64))

    def _fit(self, n_units: int, k: int) -> bool:
        """Grow the dense table to ``n_units`` x ``k`` x ``k`` (False: too big, now sparse)."""
        cap, kk = self._dense.shape[0], self._dense.shape[1]
        self._units = max(self._units, n_units)
        if n_units <= cap and k <= kk:
            return True
        kk = max(kk, k)
        most = DENSE_ENTRIES_MAX // (kk * kk)
        if self._units > most:
            self._to_sparse()
            return False
        cap = max(cap, min(most, max(2 * cap, self._units)))
        grown = np.zeros((cap, kk, kk), dtype=np.int64)
        old = self._dense
        grown[:old.shape[0], :old.shape[1], :old.shape[2]] = old
        self._dense = grown
        return True

    def _to_sparse(self) -> None:
        dense, self._dense = self._dense, None
        unit, t, p = np.nonzero(dense)
        self._keys = unit * _CELL_STRIDE + t * _CLASS_STRIDE + p
        self._counts = dense[unit, t, p]

    def merge(self, other: CellCounts) -> None:
        if other is not self:
            unit, t, p, count = other.entries()
            key = unit * _CELL_STRIDE + t * _CLASS_STRIDE + p
            with self._lock:
                if self._dense is not None:
                    self._to_sparse()
            self._merge(key, count)

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
        if self._dense is not None:
            dense = self.dense
            unit, t, p = np.nonzero(dense)
            return unit, t, p, dense[unit, t, p]
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
        pos = class_positions(state.labels, labels)
        self.k = len(labels)
        self.state = state
        self.group = self.cluster = None
        self._dense = cells.dense if state.pairs is None and state.clusters is None else None
        if self._dense is not None:  # per-group tables, counted dense: kept as they are
            self._pos = pos
            return
        unit, ti, pi, count = cells.entries()
        self.t, self.p, self.count = pos[ti], pos[pi], count
        if state.pairs is not None:
            gid, cid = state.pair_parts()
            self.group, self.cluster = gid[unit], cid[unit]
        elif state.groups is not None:
            self.group = unit
        else:
            self.cluster = unit

    def group_order(self) -> tuple[list, np.ndarray]:
        """Group keys sorted as :func:`fastkappa.kappa_by_group` sorts them, and the
        rank of every group id."""
        keys = self.state.groups.values
        values = np.asarray(keys) if keys else np.empty(0, dtype=np.int64)
        if values.dtype.kind in "iub":
            order = np.argsort(values, kind="stable").tolist()
        else:
            order = sorted(range(len(keys)), key=lambda j: keys[j])
        rank = np.empty(len(keys), dtype=np.int64)
        rank[order] = np.arange(len(keys))
        return [keys[j] for j in order], rank

    def group_tables(self, rank: np.ndarray) -> np.ndarray:
        """(G, K, K) int64 tables, groups in sorted order."""
        k = self.k
        g = len(rank)
        if self._dense is not None:
            dense = self._dense
            m = dense.shape[1]
            sorted_dense = np.zeros((g, m, m), dtype=np.int64)
            sorted_dense[rank[:len(dense)]] = dense[:g]
            if m == k and np.array_equal(self._pos[:m], np.arange(m)):
                return sorted_dense
            out = np.zeros((g, k, k), dtype=np.int64)
            pos = self._pos[:m]
            out[:, pos[:, None], pos[None, :]] = sorted_dense
            return out
        flat = np.zeros(g * k * k, dtype=np.int64)
        np.add.at(flat, (rank[self.group] * k + self.t) * k + self.p, self.count)
        return flat.reshape(g, k, k)

    def cluster_ci(self, rows, weights, method, confidence_level, n_resamples, seed):
        """:func:`fastkappa.kappa_ci` with ``clusters`` from the per-cluster tables
        (``rows`` selects entries, None for all): the same units, so the same
        interval for the same seed."""
        import dataclasses

        from ._core import weights as weight_module
        from ._core.config import DENSE_CELLS_MAX
        from ._core.intervals import _kappa_ci_iv, with_provenance
        from ._core.units import _single_model_cells, units_from_clusters
        from .bootstrap import _ci_from_units

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
        res = _ci_from_units(units, wmat, method, cl, n_resamples, seq)
        # the seed, weights, rows and clusters, as fastkappa.kappa_ci records them
        return with_provenance(res, seq, weights, units)


def score_groups(by: str, tables: UnitTables, weights, method, confidence_level,
                  n_resamples, seed, labels, overall):
    """Per-group scores (``by``) as a :class:`~fastkappa.groups.KappaByGroup`: the group
    kernel's kappa of every table, and intervals seeded as
    :func:`fastkappa.kappa_by_group` seeds them (one stream per group,
    spawned from ``seed``)."""
    from ._core import weights as weight_module
    from .bootstrap import kappa_ci_from_confusion
    from .exceptions import UndefinedKappaWarning
    from .groups import GROUP_TABLES_MAX_BYTES, KappaByGroup, _asymptotic_bounds, _group_kappas

    keys, rank = tables.group_order()
    g, k = len(keys), tables.k
    need = g * k * k * 8
    if need > GROUP_TABLES_MAX_BYTES:  # checked before the tables are laid out
        raise DataError(
            f"{g} groups of {by!r} x {k} classes need one {k} x {k} table per group, "
            f"{need / 2**30:.1f} GiB in all (the limit is "
            f"{GROUP_TABLES_MAX_BYTES / 2**30:.0f} GiB); pass a coarser --by column.")
    confusion = tables.group_tables(rank)
    wmat = weight_module.weight_matrix(k, weights)
    kappa, n = _group_kappas(confusion, wmat)
    undefined = int(np.isnan(kappa).sum())
    if undefined:
        warnings.warn(f"kappa is undefined in {undefined} of {g} groups of {by!r}; "
                      "they are reported as nan.", UndefinedKappaWarning,
                      stacklevel=user_stacklevel())
    low = high = None
    if method is not None:
        low, high = np.full(g, np.nan), np.full(g, np.nan)
        seeds = np.random.SeedSequence(seed).spawn(g)
        if tables.cluster is not None:
            order = np.argsort(rank[tables.group], kind="stable")
            bounds = np.searchsorted(rank[tables.group][order], np.arange(g + 1))
        todo = np.flatnonzero(confusion.reshape(g, -1).sum(axis=1) > 0)
        if tables.cluster is None and method == "asymptotic":  # every group at once
            todo = todo[~_asymptotic_bounds(confusion[todo], wmat, confidence_level, low,
                                            high, todo)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # per-group degenerate notes
            for i in todo:
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
        groups=group_keys, estimate=kappa, n_rows=n.astype(np.int64), overall=float(overall),
        confusion=confusion, classes=labels,
        weights=weights, low=low, high=high, method=method,
        confidence_level=confidence_level if method is not None else None)

