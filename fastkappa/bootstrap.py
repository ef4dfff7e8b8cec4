"""Confidence intervals for kappa: bootstrap (percentile, basic, BCa) and asymptotic.

How the bootstrap avoids the rows
---------------------------------
Resampling N iid rows with replacement gives a confusion matrix distributed
Multinomial(N, O / N) over the K*K cells, exactly.  So after one counting pass
a replicate costs K*K binomial draws, whatever N is, and memory stays
O(K^2 + n_resamples).  With ``clusters`` (e.g. both eyes of a patient) whole
clusters are resampled; clusters whose own K x K tables are equal are
interchangeable, so they are collapsed into *types* and a replicate costs
one binomial per type.  Non-uniform ``sample_weight``: rows are resampled
uniformly and carry their weights; rows with the same cell and weight form
a type (few distinct weights stay fast; when almost every row has its own
weight, rows are drawn by index, O(N) per replicate).

BCa needs the jackknife: leaving out one row changes only its cell, so the N
leave-one-out values take at most K*K distinct values (one per type with
clusters or weights), weighted by how many units share them.

Internal building blocks reused by other modules (a paired ``compare``):

* :class:`Units` and :func:`units_from_counts`, :func:`units_from_rows`,
  :func:`units_from_clusters`: resampling units over joint cells that map
  to the tables of ``M`` models (``cell_t``, ``cell_p[:, m]``);
* :func:`bootstrap_kappas` (n_resamples, M) and :func:`jackknife_kappas`
  (T, M) on such units; :func:`full_kappas` for the estimates;
* :func:`resolve_seed`, :func:`block_seeds`;
* :func:`bca_acceleration`, :func:`bootstrap_interval` on any statistic's
  replicates (e.g. ``kappa_a - kappa_b``);
* :func:`encode_clusters`.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import _asymptotic
from ._core import weights as _weights
from ._core.columns import materialize
from ._core.config import (
    DENSE_CELLS_MAX,
    MAX_BLOCKS,
    POISSON_TABLE_MAX,
    ROW_CHUNK,
    ROWS_MIN_TYPES_PER_ROW,
    SERIAL_MAX_DRAWS,
    SPARSE_MIN_CLASSES,
    TYPES_PER_UNIT_MAX,
)
from ._core.dispatch import resampling_kernels as _kernels
from ._core.encode import encode_pair
from ._core.options import check_nan_policy
from ._core.rows import frequency_rows, id_codes, missing_id_rows, omit_missing_ids
from ._core.shapes import flatten_labels
from .exceptions import DegenerateIntervalWarning
from .results import KappaCI

__all__ = ["kappa_ci", "kappa_ci_from_confusion"]

METHODS = ("percentile", "basic", "bca", "asymptotic")

_NORMAL = statistics.NormalDist()



# --------------------------------------------------------------------------- options


def _kappa_ci_iv(method, confidence_level, n_resamples, seed):
    """Validate the interval options; return them normalised."""
    if not isinstance(method, str) or method not in METHODS:
        shown = f"'{method}'" if isinstance(method, str) else repr(method)
        raise ValueError(
            "`method` must be 'percentile', 'basic', 'bca' or 'asymptotic'; "
            f"got {shown}.")
    if isinstance(confidence_level, bool) or not isinstance(
            confidence_level, (int, float, np.integer, np.floating)):
        raise ValueError(
            "`confidence_level` must be a number strictly between 0 and 1 (e.g. 0.95); "
            f"got {confidence_level!r}.")
    cl = float(confidence_level)
    if not 0.0 < cl < 1.0:
        hint = f" For a {cl:g}% interval pass {cl / 100:g}." if 1.0 < cl < 100.0 else ""
        raise ValueError(
            "`confidence_level` must be strictly between 0 and 1 (e.g. 0.95); "
            f"got {confidence_level!r}.{hint}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)):
        raise ValueError(
            "`n_resamples` must be an integer of at least 2 (e.g. 10_000); "
            f"got {n_resamples!r}.")
    if n_resamples < 2:
        raise ValueError(
            "`n_resamples` must be an integer of at least 2 (e.g. 10_000); "
            f"got {n_resamples}.")
    return method, cl, int(n_resamples), resolve_seed(seed)


def resolve_seed(seed) -> np.random.SeedSequence:
    """The one seed normaliser: a fresh :class:`numpy.random.SeedSequence`.

    ``None`` draws entropy from the OS (recorded by :func:`seed_record`); an
    int, a sequence of ints or a SeedSequence always gives the same sequence
    (a SeedSequence is copied, never advanced); a Generator is advanced by one
    draw, as any use of a Generator is.  Anything else is a ``ValueError``.
    """
    if seed is None:
        return np.random.SeedSequence()
    if isinstance(seed, np.random.SeedSequence):
        return np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key,
                                      pool_size=seed.pool_size)
    if isinstance(seed, np.random.Generator):
        return np.random.SeedSequence(seed.integers(0, 2**63, size=4).tolist())
    if _is_seed_int(seed):
        return np.random.SeedSequence(int(seed))
    if isinstance(seed, (list, tuple)) and seed and all(_is_seed_int(v) for v in seed):
        return np.random.SeedSequence([int(v) for v in seed])
    shown = repr(seed)
    raise ValueError(
        "`seed` must be None, a non-negative int, a numpy.random.SeedSequence or a "
        "numpy.random.Generator (or a list of non-negative ints, as results record "
        f"them); got {shown if len(shown) <= 80 else shown[:77] + '...'}.")


def _is_seed_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and v >= 0


def seed_record(seq: np.random.SeedSequence):
    """What a result records so that ``seed=`` reproduces it: the entropy (an int,
    or a list of ints) of a root sequence, the sequence itself when spawned."""
    if seq.spawn_key:
        return np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key,
                                      pool_size=seq.pool_size)
    return seq.entropy


def with_provenance(res: KappaCI, seq: np.random.SeedSequence | None, weights,
                    units: Units | None = None) -> KappaCI:
    """``res`` with what reproduces it and what a methods section needs: the seed
    (when it drew resamples), the weights (``"none"`` for unweighted), and, from
    ``units``, the rows scored and the clusters resampled."""
    seed = seed_record(seq) if seq is not None and res.n_resamples else None
    weights = _weights.canonical(weights)
    if weights is None:
        weights = "none"
    elif not isinstance(weights, str):
        weights = "custom"  # a matrix: named, so that results compare and print
    extra = {} if units is None else {
        "n_rows": int(units.n_rows),
        "n_clusters": int(units.n_units) if units.kind == "clusters" else None}
    return dataclasses.replace(res, seed=seed, weights=weights, **extra)


def block_seeds(seq: np.random.SeedSequence, n_resamples: int) -> np.ndarray:
    """One uint32 seed per block of replicates (a fixed count, independent of threads)."""
    n_blocks = max(1, min(MAX_BLOCKS, n_resamples))
    children = np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key,
                                      pool_size=seq.pool_size).spawn(n_blocks)
    return np.array([c.generate_state(1, np.uint32)[0] for c in children], dtype=np.uint32)


# --------------------------------------------------------------------------- units


@dataclass(frozen=True, eq=False)
class Units:
    """Resampling units collapsed into types (see ``_kernels.resampling``).

    Attributes
    ----------
    type_counts : int64 (T,)
        Units of each type, in decreasing order.
    type_ptr, type_cell, type_val : CSR arrays
        Entries (joint cell, value) of each type's table.
    n_units : int
        Units drawn per replicate (rows or clusters).
    cell_t, cell_p : int64 (J,), (J, M)
        Joint cell -> (row, column) of each model's (K, K) table.
    n_classes : int
    n_rows : int
        Scored rows behind the units.
    kind : str
        "cells" (iid counts), "rows" (weighted rows) or "clusters".
    """

    type_counts: np.ndarray
    type_ptr: np.ndarray
    type_cell: np.ndarray
    type_val: np.ndarray
    n_units: int
    cell_t: np.ndarray
    cell_p: np.ndarray
    n_classes: int
    n_rows: int
    kind: str

    @property
    def n_types(self) -> int:
        return len(self.type_counts)

    @property
    def by_index(self) -> bool:
        """True when drawing units by index is cheaper than a draw per type."""
        return self.n_types > TYPES_PER_UNIT_MAX * self.n_units

    def unit_type(self) -> np.ndarray:
        """The type of every unit (units listed type by type): O(n_units)."""
        return np.repeat(np.arange(self.n_types, dtype=np.int64), self.type_counts)

    def table(self, model: int = 0) -> np.ndarray:
        """The full (K, K) table of one model (counts or weighted sums)."""
        k = self.n_classes
        joint = self.joint()
        flat = np.bincount(self.cell_t * k + self.cell_p[:, model], weights=joint,
                           minlength=k * k)
        return flat.reshape(k, k)

    def joint(self) -> np.ndarray:
        """Totals per joint cell over all units."""
        owner = np.repeat(np.arange(self.n_types), np.diff(self.type_ptr))
        return np.bincount(self.type_cell, weights=self.type_val * self.type_counts[owner],
                           minlength=len(self.cell_t))


def _compress_cells(cells: np.ndarray, cell_t: np.ndarray, cell_p: np.ndarray):
    """Keep only joint cells that occur; return remapped cells and maps."""
    used = np.unique(cells)
    if len(used) == len(cell_t):
        return cells, cell_t, cell_p
    remap = np.full(len(cell_t), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    return remap[cells], cell_t[used], cell_p[used]


def _finish_types(counts, ptr, cell, val, n_units, cell_t, cell_p, k, n_rows, kind) -> Units:
    """Order types by decreasing count (stable) and compress the joint cells."""
    counts = np.asarray(counts, dtype=np.int64)
    order = np.argsort(-counts, kind="stable")
    lens = np.diff(ptr)[order]
    new_ptr = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(lens, out=new_ptr[1:])
    src = np.repeat(ptr[:-1][order] - new_ptr[:-1], lens) + np.arange(new_ptr[-1])
    cell = np.asarray(cell, dtype=np.int64)[src]
    val = np.asarray(val, dtype=np.float64)[src] + 0.0
    cell, cell_t, cell_p = _compress_cells(cell, np.asarray(cell_t, dtype=np.int64),
                                           np.asarray(cell_p, dtype=np.int64))
    return Units(type_counts=counts[order], type_ptr=new_ptr, type_cell=cell, type_val=val,
                 n_units=int(n_units), cell_t=np.ascontiguousarray(cell_t),
                 cell_p=np.ascontiguousarray(cell_p), n_classes=int(k), n_rows=int(n_rows),
                 kind=kind)


def _single_model_cells(k: int) -> tuple[np.ndarray, np.ndarray]:
    j = np.arange(k * k, dtype=np.int64)
    return j // k, (j % k)[:, None]


def units_from_counts(counts: np.ndarray, cell_t: np.ndarray | None = None,
                      cell_p: np.ndarray | None = None, n_classes: int | None = None) -> Units:
    """iid rows without weights: one type per non-empty joint cell.

    ``counts`` is a (K, K) table (one model) or, with ``cell_t``/``cell_p``,
    flat joint cell counts.
    """
    c = np.asarray(counts)
    flat = c.reshape(-1).astype(np.int64, copy=False)
    nz = np.flatnonzero(flat)
    if cell_t is None:
        # one model: keep only the occupied cells (K may be large)
        k = c.shape[0]
        cell_t, cell_p = nz // k, (nz % k)[:, None]
        cells = np.arange(len(nz), dtype=np.int64)
    else:
        k = int(n_classes)
        cells = nz
    ptr = np.arange(len(nz) + 1, dtype=np.int64)
    n = int(flat.sum())
    return _finish_types(flat[nz], ptr, cells, np.ones(len(nz)), n, cell_t, cell_p, k, n,
                         "cells")


def units_from_rows(cells: np.ndarray, values: np.ndarray | None, cell_t: np.ndarray,
                    cell_p: np.ndarray, n_classes: int) -> Units:
    """Rows carrying sample weights: one type per distinct (joint cell, weight).

    ``cells`` are joint cell codes 0..J-1 per row (``t * K + p`` for one
    model).  Without ``values`` the rows are plain counts (one type per cell).
    """
    cells = np.asarray(cells, dtype=np.int64)
    if values is None:
        flat = np.bincount(cells, minlength=len(cell_t))
        return units_from_counts(flat, cell_t, cell_p, n_classes)
    values = np.asarray(values, dtype=np.float64) + 0.0
    order = np.lexsort((values, cells))
    cs, vs = cells[order], values[order]
    start = np.ones(len(cs), dtype=bool)
    start[1:] = (cs[1:] != cs[:-1]) | (vs[1:] != vs[:-1])
    first = np.flatnonzero(start)
    counts = np.diff(np.append(first, len(cs)))
    ptr = np.arange(len(first) + 1, dtype=np.int64)
    return _finish_types(counts, ptr, cs[first], vs[first], len(cells), cell_t, cell_p,
                         n_classes, len(cells), "rows")


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on a uint64 array (wraps modulo 2**64)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _unit_hashes(unit_ptr: np.ndarray, cell: np.ndarray, bits: np.ndarray):
    """Two independent 64-bit hashes of each unit's (cell, value-bits) entries.

    Entry hashes are summed per unit (modulo 2**64); equal tables always get
    equal hashes, and :func:`_assign_types` confirms equality entry by entry.
    """
    with np.errstate(over="ignore"):
        c = cell.astype(np.uint64)
        e1 = _mix64(_mix64(c + np.uint64(0x632BE59BD9B4E019)) ^ bits)
        e2 = _mix64(c * np.uint64(0x8CB92BA72F3D8DD7)
                    + _mix64(bits ^ np.uint64(0x2545F4914F6CDD1D)))
        starts = unit_ptr[:-1]
        n_e = np.diff(unit_ptr).astype(np.uint64)
        h1 = _mix64(np.add.reduceat(e1, starts) ^ n_e)
        h2 = _mix64(np.add.reduceat(e2, starts) + n_e * np.uint64(0x9E3779B97F4A7C15))
    return h1, h2


def units_from_clusters(cells: np.ndarray, values: np.ndarray | None,
                        cluster_codes: np.ndarray, n_clusters: int, cell_t: np.ndarray,
                        cell_p: np.ndarray, n_classes: int) -> Units:
    """Clusters of rows: per-cluster sparse tables collapsed into types.

    Rows are sorted by (cluster, joint cell) so each cluster keeps only the
    cells it uses (never a dense (C, K, K) array); identical cluster tables
    are found by hashing and confirmed entry by entry.
    """
    kern = _kernels()
    cells = np.asarray(cells, dtype=np.int64)
    n_cells = len(cell_t)
    key = np.asarray(cluster_codes, dtype=np.int64) * n_cells + cells
    if values is None:
        ks = np.sort(key)
        start = np.ones(len(ks), dtype=bool)
        start[1:] = ks[1:] != ks[:-1]
        first = np.flatnonzero(start)
        ukey = ks[first]
        uval = np.diff(np.append(first, len(ks))).astype(np.float64)
    else:
        order = np.argsort(key, kind="stable")
        ks = key[order]
        start = np.ones(len(ks), dtype=bool)
        start[1:] = ks[1:] != ks[:-1]
        first = np.flatnonzero(start)
        ukey = ks[first]
        uval = np.add.reduceat(np.asarray(values, dtype=np.float64)[order], first) + 0.0
    ucl = ukey // n_cells
    ucell = ukey - ucl * n_cells
    unit_ptr = np.zeros(n_clusters + 1, dtype=np.int64)
    np.cumsum(np.bincount(ucl, minlength=n_clusters), out=unit_ptr[1:])
    bits = uval.view(np.uint64)
    h1, h2 = _unit_hashes(unit_ptr, ucell, bits)
    order = np.lexsort((h2, h1))
    unit_type, reps = kern._assign_types(order, h1, h2, unit_ptr, ucell, bits)
    counts = np.bincount(unit_type, minlength=len(reps))
    lens = np.diff(unit_ptr)[reps]
    ptr = np.zeros(len(reps) + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    src = np.repeat(unit_ptr[:-1][reps] - ptr[:-1], lens) + np.arange(ptr[-1])
    return _finish_types(counts, ptr, ucell[src], uval[src], n_clusters, cell_t, cell_p,
                         n_classes, len(cells), "clusters")


#: fewer clusters than this: the cluster-robust variance is unreliable (a warning)
MIN_RELIABLE_CLUSTERS = 30


def encode_clusters(clusters, n_input: int, keep: np.ndarray | None, *,
                    stacklevel: int = 3) -> tuple[np.ndarray, int]:
    """Integer codes 0..C-1 of the cluster ids of the kept rows, and C.

    ``clusters`` is any 1-D array-like of ids (numbers, strings...) aligned
    with the input rows; ``keep`` is :meth:`EncodedPair.keep`.  Rows with a
    missing id must have been dropped before (see
    :func:`fastkappa._validation.omit_missing_ids`).
    Fewer than 2 clusters is an error (the variance needs two); fewer than
    :data:`MIN_RELIABLE_CLUSTERS` warn that it is unreliable.
    """
    codes = id_codes(clusters, n_input, "clusters")
    missing_id_rows(codes, "raise", "clusters")
    if keep is not None:
        codes = codes[keep]
    present = np.zeros(int(codes.max()) + 1 if len(codes) else 0, dtype=bool)
    present[codes] = True
    if not present.all():
        remap = np.cumsum(present) - 1
        codes = remap[codes]
    n_clusters = int(present.sum())
    check_cluster_count(n_clusters, stacklevel=stacklevel + 1)
    return codes, n_clusters


def check_cluster_count(n_clusters: int, *, stacklevel: int) -> None:
    """The cluster-count rule: < 2 clusters is an error, < 30 a warning."""
    if n_clusters < 2:
        raise ValueError(
            f"`clusters` holds {n_clusters} cluster{'s' if n_clusters != 1 else ''} among "
            "the scored rows; a cluster-robust variance needs at least 2 (and is reliable "
            "from about 30). Pass clusters=None if the rows are independent.")
    if n_clusters < MIN_RELIABLE_CLUSTERS:
        warnings.warn(
            f"only {n_clusters} clusters: the cluster-robust variance (and a bootstrap "
            f"over clusters) is unreliable with fewer than {MIN_RELIABLE_CLUSTERS}; treat "
            "the interval and p-value as rough.", DegenerateIntervalWarning,
            stacklevel=stacklevel)


# --------------------------------------------------------------------------- kernels


def weight_kind(wmat: np.ndarray) -> int:
    """0 for a custom matrix, 1 unweighted, 2 linear, 3 quadratic: which closed form
    of the expected disagreement ``r @ w @ c`` the kernels may use (O(K), not O(K^2)).
    """
    k = wmat.shape[0]
    for kind, name in ((1, None), (2, "linear"), (3, "quadratic")):
        if np.array_equal(wmat, _weights.weight_matrix(k, name)):
            return kind
    return 0


def sparse_cells(units: Units) -> bool:
    """True when ``units`` are iid rows (one cell per type) with many classes: the
    replicates then come from :func:`_kernels.resampling._bootstrap_kappa_cells`."""
    return units.kind == "cells" and units.n_classes >= SPARSE_MIN_CLASSES


def _poisson_tables(units: Units):
    """The Poisson-and-top-up tables of iid cells, or None when binomials are cheaper
    (fewer cells than sqrt(N) / 4) or the tables would be too large.

    Poisson means sum to ``N - 1.5 sqrt(N)``: the total exceeds N (and the draw
    is repeated) about 7% of the time, and about ``1.5 sqrt(N)`` rows top it up.
    """
    kern = _kernels()
    n = units.n_units
    root = math.sqrt(n)
    margin = kern._POISSON_MARGIN * root
    if 4 * units.n_types <= root or n - margin <= 0:
        return None
    counts = units.type_counts
    # cells with equal counts share a table (a few hundred distinct counts at most
    # where a table is worth it), so the tables stay small and in cache
    uniq, tab_of = np.unique(counts, return_inverse=True)
    lam = uniq * ((n - margin) / n)
    span = kern._POISSON_SPAN
    width = np.ceil(2.0 * (span * np.sqrt(lam) + span)) + 2.0
    if width.sum() > POISSON_TABLE_MAX:
        return None
    lo, ptr, cdf, guide = kern._poisson_tables(lam)
    cum = np.cumsum(counts)
    return (tab_of.astype(np.int64), lo, ptr, cdf, guide, cum,
            kern._categorical_guide(cum))


def full_kappas(units: Units, wmat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kappa of each model on the full data, computed the way replicates are: (M,).

    Also returns the joint cell totals.
    """
    kern = _kernels()
    if sparse_cells(units):
        est = kern._full_kappas_of_cells(units.type_counts, units.type_cell, units.cell_t,
                                         units.cell_p, units.n_classes, wmat,
                                         weight_kind(wmat))
        return est, units.joint()
    return kern._kappas_of_types(units.type_counts, units.type_ptr, units.type_cell,
                                 units.type_val, len(units.cell_t), units.cell_t,
                                 units.cell_p, units.n_classes, wmat)


def bootstrap_kappas(units: Units, wmat: np.ndarray, n_resamples: int,
                     seed: np.random.SeedSequence, *, by_index: bool | None = None
                     ) -> np.ndarray:
    """``n_resamples`` bootstrap replicates of each model's kappa: (n_resamples, M).

    A multinomial over unit types, or unit indices when almost every unit is
    its own type (``by_index`` forces one or the other).  iid rows with
    :data:`SPARSE_MIN_CLASSES` or more classes draw the occupied cells only
    and score each replicate in O(cells + K) (:func:`sparse_cells`).  nan
    marks an undefined replicate.
    """
    kern = _kernels()
    seeds = block_seeds(seed, n_resamples)
    if by_index is None:
        by_index = units.by_index
    if by_index:
        return kern._bootstrap_kappa_units(units.unit_type(), units.type_ptr,
                                           units.type_cell, units.type_val, units.cell_t,
                                           units.cell_p, units.n_classes, wmat,
                                           n_resamples, seeds)
    serial = n_resamples * (units.n_types + len(units.cell_t)) <= SERIAL_MAX_DRAWS
    if sparse_cells(units):
        tables = _poisson_tables(units)
        if tables is not None:
            kernel = (kern._bootstrap_kappa_cells_poisson_serial if serial
                      else kern._bootstrap_kappa_cells_poisson)
            return kernel(*tables, np.int64(units.n_units), units.type_cell, units.cell_t,
                          units.cell_p, units.n_classes, wmat, weight_kind(wmat),
                          n_resamples, seeds)
        kernel = (kern._bootstrap_kappa_cells_serial if serial
                  else kern._bootstrap_kappa_cells)
        return kernel(units.type_counts, units.type_cell, np.int64(units.n_units),
                      units.cell_t, units.cell_p, units.n_classes, wmat, weight_kind(wmat),
                      n_resamples, seeds)
    kernel = kern._bootstrap_kappa_types_serial if serial else kern._bootstrap_kappa_types
    return kernel(units.type_counts, units.type_ptr, units.type_cell, units.type_val,
                  np.int64(units.n_units), units.cell_t, units.cell_p, units.n_classes, wmat,
                  n_resamples, seeds)


def use_row_tables(n_types: int, n_rows: int, n_classes: int, n_models: int) -> bool:
    """Whether a paired bootstrap of iid rows should draw rows into per-model tables
    (:func:`bootstrap_kappas_rows`) rather than a multinomial over joint types:
    when the types are many and the M (K, K) tables are small next to the rows."""
    return (n_types > ROWS_MIN_TYPES_PER_ROW * n_rows
            and 4 * n_models * n_classes * n_classes <= n_rows)


def row_cells(t_idx: np.ndarray, p_idx: np.ndarray, n_classes: int) -> np.ndarray:
    """(N, M) C-ordered ``t * K + p`` per row and model, in the smallest unsigned dtype."""
    kk = n_classes * n_classes
    dtype = np.uint8 if kk <= 1 << 8 else np.uint16 if kk <= 1 << 16 else np.int64
    out = np.empty((len(t_idx), p_idx.shape[0]), dtype=dtype)
    base = t_idx.astype(np.int64) * n_classes
    for m in range(p_idx.shape[0]):
        out[:, m] = base + p_idx[m]
    return out


def bootstrap_kappas_rows(cells: np.ndarray, row_w: np.ndarray | None, n_classes: int,
                          wmat: np.ndarray, n_resamples: int,
                          seed: np.random.SeedSequence) -> np.ndarray:
    """Paired bootstrap replicates of M models' kappas by drawing rows: (n_resamples, M).

    ``cells`` is :func:`row_cells`; ``row_w`` the rows' sample weights (None for
    plain counts).  Each replicate draws N rows with replacement (a multinomial
    over chunks of :data:`ROW_CHUNK` rows, uniform within a chunk) and adds
    every drawn row to the M (K, K) tables: O(N M) per replicate, no joint
    table.  Blocks of replicates are seeded by :func:`block_seeds`, so the
    result does not depend on the number of threads.
    """
    kern = _kernels()
    seeds = block_seeds(seed, n_resamples)
    w = np.empty(0) if row_w is None else np.ascontiguousarray(row_w, dtype=np.float64)
    serial = n_resamples * len(cells) <= SERIAL_MAX_DRAWS
    kernel = (kern._bootstrap_kappa_row_tables_serial if serial
              else kern._bootstrap_kappa_row_tables)
    return kernel(np.ascontiguousarray(cells), w, np.int64(ROW_CHUNK), n_classes, wmat,
                  n_resamples, seeds)


def jackknife_kappas(units: Units, wmat: np.ndarray, joint: np.ndarray | None = None
                     ) -> np.ndarray:
    """Leave-one-unit-out kappa of each model, one row per type: (T, M).

    Weight each row by ``units.type_counts`` (the units sharing it).
    """
    kern = _kernels()
    if joint is None:
        joint = full_kappas(units, wmat)[1]
    return kern._jackknife_kappa_types(joint, units.type_ptr, units.type_cell,
                                       units.type_val, units.cell_t, units.cell_p,
                                       units.n_classes, wmat)


# --------------------------------------------------------------------------- intervals


def bca_acceleration(jackknife: np.ndarray, counts: np.ndarray | None = None) -> float:
    """BCa acceleration ``sum(n d^3) / (6 (sum(n d^2))^1.5)`` from jackknife values.

    ``d = mean(jack) - jack_i`` with every value weighted by ``counts`` (the
    number of units it stands for); undefined values are left out.  0 when
    the jackknife values are all equal.
    """
    jack = np.asarray(jackknife, dtype=np.float64)
    n = np.ones(len(jack)) if counts is None else np.asarray(counts, dtype=np.float64)
    ok = np.isfinite(jack)
    jack, n = jack[ok], n[ok]
    if n.sum() <= 0:
        return 0.0
    d = np.dot(n, jack) / n.sum() - jack
    s2 = float(np.dot(n, d * d))
    if not s2 > 0:
        return 0.0
    return float(np.dot(n, d * d * d) / (6.0 * s2**1.5))


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def bootstrap_interval(estimate: float, replicates: np.ndarray, method: str,
                       confidence_level: float, *, jackknife: np.ndarray | None = None,
                       jackknife_counts: np.ndarray | None = None, what: str = "kappa",
                       bounds: tuple[float, float] | None = (-1.0, 1.0), stacklevel: int = 2
                       ) -> tuple[float, float, str]:
    """``(low, high, method_used)`` from the *defined* bootstrap replicates.

    Percentile and basic use linear-interpolated quantiles.  BCa: bias
    ``z0 = Phi^-1((#{t* < t} + #{t* = t} / 2) / B')`` and the jackknife
    acceleration; when ``z0`` is infinite or ``1 - a (z0 + z_alpha) <= 0`` it
    falls back to the percentile interval with a
    :class:`DegenerateIntervalWarning`.  A constant distribution gives
    ``(estimate, estimate)`` with a warning; no replicate gives nan.  Bounds
    are clipped to ``bounds``.
    """
    reps = np.asarray(replicates, dtype=np.float64)
    if len(reps) == 0:
        warnings.warn(
            f"no bootstrap replicate of {what} is defined, so there is no interval; "
            "returning nan bounds.", DegenerateIntervalWarning, stacklevel=stacklevel + 1)
        return math.nan, math.nan, method
    lo_rep, hi_rep = float(reps.min()), float(reps.max())
    if lo_rep == hi_rep:
        warnings.warn(
            f"every bootstrap replicate of {what} equals {lo_rep!r} (e.g. perfect "
            "agreement in every resample), so the bootstrap distribution is constant; "
            "returning a zero-width interval at the estimate.",
            DegenerateIntervalWarning, stacklevel=stacklevel + 1)
        low = high = float(estimate)
        return _clip(low, bounds), _clip(high, bounds), method
    alpha = (1.0 - confidence_level) / 2.0
    used = method
    if method == "bca":
        b = len(reps)
        below = float(np.count_nonzero(reps < estimate))
        ties = float(np.count_nonzero(reps == estimate))
        prop = (below + 0.5 * ties) / b
        a = bca_acceleration(jackknife, jackknife_counts) if jackknife is not None else 0.0
        z_lo, z_hi = _NORMAL.inv_cdf(alpha), _NORMAL.inv_cdf(1.0 - alpha)
        reason = None
        if not 0.0 < prop < 1.0:
            reason = (f"the estimate lies {'below' if prop == 0 else 'above'} every "
                      "replicate, so the bias correction is infinite")
        else:
            z0 = _NORMAL.inv_cdf(prop)
            den_lo, den_hi = 1.0 - a * (z0 + z_lo), 1.0 - a * (z0 + z_hi)
            if den_lo <= 0 or den_hi <= 0:
                reason = (f"1 - a (z0 + z_alpha) <= 0 with bias z0 = {z0:.3g} and "
                          f"acceleration a = {a:.3g}")
        if reason is not None:
            warnings.warn(
                f"the BCa interval of {what} is not defined here ({reason}); "
                "returning the percentile interval instead (method='percentile').",
                DegenerateIntervalWarning, stacklevel=stacklevel + 1)
            used = "percentile"
        else:
            q_lo = _phi(z0 + (z0 + z_lo) / den_lo)
            q_hi = _phi(z0 + (z0 + z_hi) / den_hi)
            low, high = np.quantile(reps, [q_lo, q_hi])
    if used in ("percentile", "basic"):
        q_lo, q_hi = np.quantile(reps, [alpha, 1.0 - alpha])
        if used == "basic":
            low, high = 2.0 * estimate - q_hi, 2.0 * estimate - q_lo
        else:
            low, high = q_lo, q_hi
    return _clip(float(low), bounds), _clip(float(high), bounds), used


def _clip(x: float, bounds) -> float:
    if bounds is None or not math.isfinite(x):
        return x
    return min(max(x, bounds[0]), bounds[1])


def _z_and_p(estimate: float, se0: float) -> tuple[float, float]:
    if not (math.isfinite(se0) and se0 > 0 and math.isfinite(estimate)):
        return math.nan, math.nan
    z = estimate / se0
    return z, math.erfc(abs(z) / math.sqrt(2.0))


# --------------------------------------------------------------------------- core


def _undefined_result(method: str, cl: float, stacklevel: int) -> KappaCI:
    _weights.finish_kappa(0.0, 0.0, stacklevel=stacklevel + 2)  # warns
    return KappaCI(estimate=math.nan, low=math.nan, high=math.nan, standard_error=math.nan,
                   method=method, confidence_level=cl, n_resamples=0,
                   distribution=np.empty(0), n_undefined=0)


def model_variances(units: Units, wmat: np.ndarray, m: int = 0
                    ) -> tuple[_asymptotic.CellInfluence, float, float]:
    """Influence functions, variance and null variance of model ``m``'s kappa.

    FCE for iid counts; the weighted / cluster-robust forms otherwise.
    """
    info = _asymptotic.cell_influence(units.table(m), wmat)
    if units.kind == "cells":
        var, var0 = _asymptotic._fce_from_info(info, info.n)
    else:
        var, var0 = _asymptotic.robust_variances(
            info, units.cell_t, units.cell_p[:, m], units.type_counts, units.type_ptr,
            units.type_cell, units.type_val, units.n_rows)
    return info, var, var0


def _standard_errors(units: Units, wmat: np.ndarray) -> tuple[float, float]:
    """FCE SE and null SE (iid counts), or their weighted / cluster-robust forms."""
    _, var, var0 = model_variances(units, wmat)
    return math.sqrt(max(var, 0.0)), math.sqrt(max(var0, 0.0))


def _ci_from_units(units: Units, wmat: np.ndarray, method: str, cl: float, n_resamples: int,
                   seq: np.random.SeedSequence, stacklevel: int) -> KappaCI:
    est_arr, joint = full_kappas(units, wmat)
    estimate = float(est_arr[0])
    if not math.isfinite(estimate):
        return _undefined_result(method, cl, stacklevel + 1)
    se, se0 = _standard_errors(units, wmat)
    z, p_value = _z_and_p(estimate, se0)
    if method == "asymptotic":
        half = _NORMAL.inv_cdf(0.5 + cl / 2.0) * se
        if not half > 0:
            warnings.warn(
                "the large-sample standard error of kappa is zero (e.g. perfect agreement, "
                "every row on the diagonal, or perfect disagreement), so the asymptotic "
                "interval has zero width at the estimate; the data show no variation to "
                "estimate an error from, so report the estimate together with n.",
                DegenerateIntervalWarning, stacklevel=stacklevel + 1)
        return KappaCI(estimate=estimate, low=_clip(estimate - half, (-1.0, 1.0)),
                       high=_clip(estimate + half, (-1.0, 1.0)), standard_error=se,
                       method=method, confidence_level=cl, n_resamples=0,
                       distribution=np.empty(0), n_undefined=0, standard_error_null=se0,
                       z=z, p_value=p_value)
    reps = bootstrap_kappas(units, wmat, n_resamples, seq)[:, 0]
    finite = reps[np.isfinite(reps)]
    n_undefined = n_resamples - len(finite)
    if n_undefined:
        warnings.warn(
            f"{n_undefined} of {n_resamples} bootstrap replicates have an undefined kappa "
            "(every resampled row in one class, identical for both raters); they are "
            "excluded from the interval and counted in `n_undefined`.",
            DegenerateIntervalWarning, stacklevel=stacklevel + 1)
    jack = counts = None
    if method == "bca" and len(finite):
        jack = jackknife_kappas(units, wmat, joint)[:, 0]
        counts = units.type_counts
    low, high, used = bootstrap_interval(estimate, finite, method, cl, jackknife=jack,
                                         jackknife_counts=counts, stacklevel=stacklevel + 1)
    sd = float(np.std(finite, ddof=1)) if len(finite) > 1 else math.nan
    return KappaCI(estimate=estimate, low=low, high=high, standard_error=sd, method=used,
                   confidence_level=cl, n_resamples=n_resamples, distribution=finite,
                   n_undefined=n_undefined, standard_error_null=se0, z=z, p_value=p_value)


# --------------------------------------------------------------------------- public


def kappa_ci(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    weights: str | ArrayLike | None = None,
    method: str = "bca",
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | np.random.SeedSequence | np.random.Generator | None = None,
    clusters: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_classes: int | None = None,
    sample_weight: ArrayLike | None = None,
    ignore_index: Any = None,
    nan_policy: str = "raise",
    thresholds: ArrayLike | None = None,
    frequency_weight: ArrayLike | None = None,
) -> KappaCI:
    """Cohen's kappa with a confidence interval, a standard error and a p-value.

    Parameters
    ----------
    y_true, y_pred : array_like of shape (n,)
        Labels of the two raters (lists, NumPy, pandas, polars, pyarrow,
        torch...). ``y_pred`` may also be (n, K) probabilities or logits, or
        1-D scores with ``thresholds``. (N, ...) labels are flattened and
        (N, C, ...) scores argmaxed over axis 1 (torchmetrics' shapes);
        ``sample_weight`` and ``clusters`` are then (N,) or of the label shape.
    weights : None, 'linear', 'quadratic' or array_like of shape (K, K)
        Disagreement weights by class index (see :func:`cohen_kappa`).
    method : {'bca', 'percentile', 'basic', 'asymptotic'}, default 'bca'
        ``'bca'``: bias-corrected and accelerated bootstrap (acceleration
        from the jackknife). ``'percentile'`` and ``'basic'``: the plain
        bootstrap intervals. ``'asymptotic'``: ``estimate ± z * SE`` with the
        Fleiss–Cohen–Everitt large-sample SE (the ASE of SAS PROC FREQ).
    confidence_level : float, default 0.95
        Strictly between 0 and 1.
    n_resamples : int, default 10_000
        Bootstrap replicates (ignored by ``'asymptotic'``).
    seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        The same int or SeedSequence gives the same interval whatever the
        number of threads.
    clusters : array_like of shape (n,), optional
        Cluster id of each row (e.g. patient id when both eyes are graded).
        Whole clusters are resampled and jackknifed, and the standard errors
        are cluster-robust.
    labels : array_like, optional
        The classes in scale order (fixed for every replicate).
    n_classes : int, optional
        Classes are ``0..n_classes-1``.
    sample_weight : array_like of shape (n,), optional
        Non-negative row weights. The bootstrap resamples rows uniformly and
        each drawn row carries its weight (equal weights use the fast
        multinomial path; many distinct weights cost O(n) per replicate).
        The asymptotic SEs use the weighted influence function. Each row
        stays one sampled unit: counts of identical rows belong in
        ``frequency_weight``.
    ignore_index : scalar, optional
        Rows where either side equals this value are dropped.
    nan_policy : {'raise', 'omit'}, default 'raise'
        What to do with rows holding NaN/None on either side.
    thresholds : array_like, optional
        Increasing cut points that turn 1-D continuous ``y_pred`` scores into
        classes.
    frequency_weight : array_like of shape (n,), optional
        Whole-number count of each row (SAS ``WEIGHT``, Stata ``fweight``): a
        row with count c is c identical iid rows (with ``clusters``, c rows
        of its cluster). Every method then gives exactly the interval of the
        expanded rows, the bootstrap the same numbers for the same seed. Not
        together with ``sample_weight``.

    Returns
    -------
    KappaCI
        ``estimate``, ``low``, ``high``, ``standard_error`` (SD of the
        replicates, or the FCE SE for ``'asymptotic'``), ``method`` (the one
        used), ``confidence_level``, ``n_resamples``, ``distribution`` (the
        defined replicates), ``n_undefined``, and for every method
        ``standard_error_null`` (FCE SE under H0: kappa = 0), ``z =
        estimate / standard_error_null`` and the two-sided ``p_value``.

    Warns
    -----
    DegenerateIntervalWarning
        The bootstrap distribution is constant (perfect agreement): the
        interval is ``[estimate, estimate]``; some replicates are undefined
        (excluded, counted in ``n_undefined``); the BCa correction is not
        defined (falls back to the percentile interval and reports
        ``method='percentile'``); the asymptotic SE is zero.
    UndefinedKappaWarning
        Kappa itself is undefined: every field is nan.

    Notes
    -----
    * iid rows: after one counting pass, a replicate is a multinomial draw
      of the K x K table (K*K binomials), exactly the distribution of a
      table rebuilt from N resampled rows; memory is O(K^2 + n_resamples).
    * Classes are fixed from the full data for every replicate: a replicate
      that misses a class is still scored on the full scale.
    * BCa acceleration comes from the exact leave-one-row-out jackknife
      (leave one cluster out with ``clusters``), grouped by cell.
    * Bounds are clipped to [-1, 1].
    * Cluster-robust variance: ``sum_c (sum_{r in c} w_r IF_r)^2 /
      (sum_r w_r)^2`` with the FCE influence function ``IF``; the null SE is
      the FCE null SE times the design effect of the null influence
      function.

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales.
       Educational and Psychological Measurement, 20(1), 37-46.
       https://doi.org/10.1177/001316446002000104
    .. [2] Cohen, J. (1968). Weighted kappa: Nominal scale agreement provision for
       scaled disagreement or partial credit. Psychological Bulletin, 70(4),
       213-220. https://doi.org/10.1037/h0026256
    .. [3] Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969). Large sample standard
       errors of kappa and weighted kappa. Psychological Bulletin, 72(5),
       323-327. https://doi.org/10.1037/h0028106
    .. [4] Efron, B. (1987). Better bootstrap confidence intervals. Journal of the
       American Statistical Association, 82(397), 171-185.
       https://doi.org/10.1080/01621459.1987.10478410
    .. [5] Davison, A. C., & Hinkley, D. V. (1997). Bootstrap Methods and their
       Application. Cambridge University Press.
       https://doi.org/10.1017/CBO9780511802843
    .. [6] Field, C. A., & Welsh, A. H. (2007). Bootstrapping clustered data.
       Journal of the Royal Statistical Society: Series B (Statistical
       Methodology), 69(3), 369-390.
       https://doi.org/10.1111/j.1467-9868.2007.00593.x

    Examples
    --------
    >>> import fastkappa as fk
    >>> y_true = [0, 1, 2, 2, 1, 0, 2, 1, 0, 2] * 30
    >>> y_pred = [0, 1, 2, 1, 1, 0, 2, 2, 0, 2] * 30
    >>> res = fk.kappa_ci(y_true, y_pred, method="asymptotic")
    >>> print(res)
    kappa = 0.70 (95% CI 0.63 to 0.77, asymptotic)
    >>> res = fk.kappa_ci(y_true, y_pred, weights="quadratic", seed=0)
    >>> res.method, res.n_resamples, res.low < res.estimate < res.high
    ('bca', 10000, True)
    """
    method, cl, n_resamples, seq = _kappa_ci_iv(method, confidence_level, n_resamples, seed)
    check_nan_policy(nan_policy)
    y_true, y_pred, sample_weight, clusters, frequency_weight = (
        materialize(v) for v in (y_true, y_pred, sample_weight, clusters, frequency_weight))
    y_true, y_pred, sample_weight, clusters, frequency_weight = flatten_labels(
        y_true, y_pred, sample_weight=sample_weight, clusters=clusters,
        frequency_weight=frequency_weight)
    clusters, rows = omit_missing_ids(clusters, "clusters", nan_policy, {
        "y_true": y_true, "y_pred": y_pred, "sample_weight": sample_weight,
        "frequency_weight": frequency_weight})
    fw, rows = frequency_rows(rows["frequency_weight"], rows["sample_weight"], {
        "y_true": rows["y_true"], "y_pred": rows["y_pred"], "clusters": clusters})
    y_true, y_pred, clusters = rows["y_true"], rows["y_pred"], rows["clusters"]
    sample_weight = None if fw is not None else sample_weight
    enc = encode_pair(y_true, y_pred, labels=labels, n_classes=n_classes,
                      sample_weight=sample_weight, frequency_weight=fw,
                      ignore_index=ignore_index,
                      nan_policy=nan_policy, thresholds=thresholds, weights=weights)
    sw = enc.sample_weight
    uniform = sw is None or float(sw.min()) == float(sw.max())
    if clusters is None and uniform:
        enc.counts()  # validates the data, and the classes are final afterwards
        units = units_from_counts(enc.counts())
        res = _ci_from_units(units, enc.weights, method, cl, n_resamples, seq, stacklevel=2)
        return with_provenance(res, seq, weights, units)
    keep = enc.keep()
    t_idx, p_idx, row_w = enc.indices()
    k = enc.n_classes
    cells = t_idx.astype(np.int64) * k + p_idx
    if k * k <= DENSE_CELLS_MAX:
        cell_t, cell_p = _single_model_cells(k)
    else:  # many classes: number only the occupied cells
        used, cells = np.unique(cells, return_inverse=True)
        cell_t, cell_p = used // k, (used % k)[:, None]
    if uniform:
        row_w = None
    if clusters is not None:
        codes, n_clusters = encode_clusters(clusters, enc.n_input, keep)
        if fw is not None:  # a row's c copies sit in its cluster's table
            counted = fw if keep is None else fw[keep]
            units = units_from_clusters(cells, counted.astype(np.float64), codes,
                                        n_clusters, cell_t, cell_p, k)
            units = dataclasses.replace(units, n_rows=int(counted.sum()))
        else:
            units = units_from_clusters(cells, row_w, codes, n_clusters, cell_t, cell_p, k)
    else:
        units = units_from_rows(cells, row_w, cell_t, cell_p, k)
    res = _ci_from_units(units, enc.weights, method, cl, n_resamples, seq, stacklevel=2)
    return with_provenance(res, seq, weights, units)


def kappa_ci_from_confusion(
    confusion: ArrayLike,
    *,
    weights: str | ArrayLike | None = None,
    method: str = "bca",
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | np.random.SeedSequence | np.random.Generator | None = None,
) -> KappaCI:
    """:func:`kappa_ci` from a (K, K) confusion matrix of iid rows.

    The table must hold counts (whole numbers): resampling its rows is a
    multinomial draw over its cells. A table of weighted sums, or clustered
    rows, cannot be resampled from the table alone; pass the rows to
    :func:`kappa_ci` instead.

    Parameters
    ----------
    confusion : array_like of shape (K, K)
        Counts; rows are ``y_true`` classes, columns ``y_pred`` classes.
    weights, method, confidence_level, n_resamples, seed
        As in :func:`kappa_ci`.

    Returns
    -------
    KappaCI

    References
    ----------
    .. [1] Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969). Large sample standard
       errors of kappa and weighted kappa. Psychological Bulletin, 72(5),
       323-327. https://doi.org/10.1037/h0028106
    .. [2] Efron, B. (1987). Better bootstrap confidence intervals. Journal of the
       American Statistical Association, 82(397), 171-185.
       https://doi.org/10.1080/01621459.1987.10478410
    .. [3] Davison, A. C., & Hinkley, D. V. (1997). Bootstrap Methods and their
       Application. Cambridge University Press.
       https://doi.org/10.1017/CBO9780511802843

    Examples
    --------
    >>> import fastkappa as fk
    >>> table = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]   # SAS PROC FREQ example
    >>> res = fk.kappa_ci_from_confusion(table, method="asymptotic")
    >>> round(res.estimate, 4), round(res.standard_error, 4), round(res.low, 4)
    (0.4842, 0.138, 0.2137)
    >>> round(res.standard_error_null, 4), round(res.z, 4), round(res.p_value, 4)
    (0.1484, 3.2626, 0.0011)
    """
    from .metrics import _check_confusion, total_count

    method, cl, n_resamples, seq = _kappa_ci_iv(method, confidence_level, n_resamples, seed)
    o = _check_confusion(confusion)
    if o.dtype.kind == "f" and not np.array_equal(o, np.round(o)):
        raise ValueError(
            "`confusion` must hold counts (whole numbers) to be resampled; a table of "
            "weighted sums cannot be, so pass the rows and `sample_weight` to kappa_ci().")
    n = total_count(o)
    if n >= 2**63:
        raise ValueError(
            f"`confusion` counts sum to {int(n)} rows, at or beyond 2**63; an interval "
            "supports fewer rows in all (fastkappa.kappa_from_confusion() still gives the "
            "estimate).")
    counts = o.astype(np.int64)
    wmat = _weights.weight_matrix(counts.shape[0], weights)
    units = units_from_counts(counts)
    res = _ci_from_units(units, wmat, method, cl, n_resamples, seq, stacklevel=2)
    return with_provenance(res, seq, weights, units)
