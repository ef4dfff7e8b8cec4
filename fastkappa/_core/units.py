"""Resampling units: rows, clusters and their types, and the draws over them.

How the bootstrap avoids the rows
---------------------------------
Resampling N iid rows with replacement gives a confusion matrix distributed
Multinomial(N, O / N) over the K*K cells, exactly.  So after one counting pass
a replicate costs one draw per occupied cell, whatever N is, and memory stays
O(cells + n_resamples).  With ``clusters`` (e.g. both eyes of a patient) whole
clusters are resampled; clusters whose own K x K tables are equal are
interchangeable, so they are collapsed into *types* and a replicate costs
one binomial per type.  Non-uniform ``sample_weight``: rows are resampled
uniformly and carry their weights; rows with the same cell and weight form
a type (few distinct weights stay fast; when almost every row has its own
weight, rows are drawn by index, O(N) per replicate).

BCa needs the jackknife: leaving out one row changes only its cell, so the N
leave-one-out values take at most K*K distinct values (one per type with
clusters or weights), weighted by how many units share them.

* :class:`Units` and :func:`units_from_counts`, :func:`units_from_rows`,
  :func:`units_from_clusters`: resampling units over joint cells that map
  to the tables of ``M`` models (``cell_t``, ``cell_p[:, m]``);
* :func:`bootstrap_kappas` (n_resamples, M), :func:`bootstrap_kappas_rows`
  and :func:`jackknife_kappas` (T, M) on such units; :func:`full_kappas`
  for the estimates;
* :func:`resolve_seed`, :func:`seed_record`, :func:`block_seeds`: the one
  way seeds are normalised, recorded and spawned;
* :func:`encode_clusters`.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import warnings
from dataclasses import dataclass

import numpy as np

from .._core import weights as _weights
from .._core.rows import id_codes, missing_id_rows
from ..exceptions import DegenerateIntervalWarning
from .caller import user_stacklevel
from .config import (
    COLD_SERIAL_BUDGET,
    COLD_SERIAL_MAX_DRAWS,
    MAX_BLOCKS,
    POISSON_TABLE_MAX,
    ROW_CHUNK,
    ROWS_MIN_TYPES_PER_ROW,
    SERIAL_MAX_DRAWS,
    SPARSE_MIN_CLASSES,
    TYPES_PER_UNIT_MAX,
)
from .dispatch import resampling_kernels, sampling_kernels
from .stand_ins import StandInTime

_kernels = resampling_kernels
_sampling = sampling_kernels


# --------------------------------------------------------------------------- seeds


def fresh_seed() -> int:
    """A seed drawn from the OS for a run without one: 53 bits, so that the
    recorded seed survives every JSON reader (jq and JavaScript read numbers as
    doubles, which round 128-bit entropy) and can be passed back as ``seed=``."""
    return int(np.random.SeedSequence().entropy) >> 75


def resolve_seed(seed) -> np.random.SeedSequence:
    """The one seed normaliser: a fresh :class:`numpy.random.SeedSequence`.

    ``None`` draws a seed from the OS (:func:`fresh_seed`; recorded by
    :func:`seed_record`); an
    int, a sequence of ints or a SeedSequence always gives the same sequence
    (a SeedSequence is copied, never advanced); a Generator is advanced by one
    draw, as any use of a Generator is.  Anything else is a ``ValueError``.
    """
    if seed is None:
        return np.random.SeedSequence(fresh_seed())
    if isinstance(seed, np.random.SeedSequence):
        return np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key,
                                      pool_size=seed.pool_size)
    if isinstance(seed, np.random.Generator):
        return np.random.SeedSequence(seed.integers(0, 2**63, size=4).tolist())
    if _is_seed_int(seed):
        return np.random.SeedSequence(int(seed))
    if isinstance(seed, np.ndarray) and seed.ndim == 1 and seed.dtype.kind in "iu":
        seed = seed.tolist()  # as numpy takes it
    if _is_seed_ints(seed):
        return np.random.SeedSequence([int(v) for v in seed])
    if isinstance(seed, dict) and _is_seed_record(seed):
        # a spawned sequence as ``to_dict()`` records it
        entropy = seed["entropy"]
        return np.random.SeedSequence(
            int(entropy) if _is_seed_int(entropy) else [int(v) for v in entropy],
            spawn_key=[int(v) for v in seed.get("spawn_key", ())],
            pool_size=int(seed.get("pool_size", DEFAULT_POOL_SIZE)))
    shown = repr(seed)
    raise ValueError(
        "`seed` must be None, a non-negative int, a numpy.random.SeedSequence or a "
        "numpy.random.Generator (or a list of non-negative ints, or a dict with "
        "'entropy' and 'spawn_key', as results record them); got "
        f"{shown if len(shown) <= 80 else shown[:77] + '...'}.")


def _is_seed_ints(v) -> bool:
    return isinstance(v, (list, tuple)) and bool(v) and all(_is_seed_int(x) for x in v)


def _is_seed_record(d: dict) -> bool:
    """Whether ``d`` is a recorded SeedSequence: ``entropy`` (an int or ints),
    ``spawn_key`` (ints) and optionally ``pool_size`` (an int of 4 or more)."""
    if not set(d) <= {"entropy", "spawn_key", "pool_size"} or "entropy" not in d:
        return False
    entropy, key = d["entropy"], d.get("spawn_key", [])
    pool = d.get("pool_size", DEFAULT_POOL_SIZE)
    return ((_is_seed_int(entropy) or _is_seed_ints(entropy))
            and isinstance(key, (list, tuple)) and all(_is_seed_int(v) for v in key)
            and _is_seed_int(pool) and pool >= 4)


def _is_seed_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and v >= 0


def seed_record(seq: np.random.SeedSequence):
    """What a result records so that ``seed=`` reproduces it: the entropy (a
    Python int, or a list of them) of a root sequence with numpy's pool size,
    else the sequence itself (spawned, or another pool size)."""
    entropy = _python_ints(seq.entropy)
    if seq.spawn_key or seq.pool_size != DEFAULT_POOL_SIZE:
        return np.random.SeedSequence(entropy, spawn_key=_python_ints(seq.spawn_key),
                                      pool_size=seq.pool_size)
    return entropy


#: numpy's pool size of a SeedSequence (recorded only when another one is used)
DEFAULT_POOL_SIZE = np.random.SeedSequence(0).pool_size


def _python_ints(v):
    """An entropy or spawn key as Python ints (numpy's scalars and arrays are not JSON)."""
    if isinstance(v, (int, np.integer)):
        return int(v)
    return [int(x) for x in v]


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
    equal hashes, and :func:`assign_types` confirms equality entry by entry.
    """
    with np.errstate(over="ignore"):
        c = cell.astype(np.uint64)
        e1 = _mix64(_mix64(c + np.uint64(0x632BE59BD9B4E019)) ^ bits)
        e2 = _mix64(c * np.uint64(0x8CB92BA72F3D8DD7)
                    + _mix64(bits ^ np.uint64(0x2545F4914F6CDD1D)))
        n_e = np.diff(unit_ptr).astype(np.uint64)
        h1 = _mix64(_unit_sums(e1, unit_ptr) ^ n_e)
        h2 = _mix64(_unit_sums(e2, unit_ptr) + n_e * np.uint64(0x9E3779B97F4A7C15))
    return h1, h2


def _unit_sums(e: np.ndarray, unit_ptr: np.ndarray) -> np.ndarray:
    """Per-unit sums of uint64 ``e`` modulo 2**64 (0 for a unit without entries,
    which ``np.add.reduceat`` would not give)."""
    cs = np.zeros(len(e) + 1, dtype=np.uint64)
    np.cumsum(e, out=cs[1:])
    return cs[unit_ptr[1:]] - cs[unit_ptr[:-1]]


def assign_types(unit_ptr: np.ndarray, cell: np.ndarray, bits: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Exact types of units given as sparse tables: ``(unit_type, representatives)``.

    Unit ``u`` holds the entries ``unit_ptr[u]:unit_ptr[u + 1]`` of ``cell``
    (sorted) and ``bits`` (the values' bit patterns).  Units are visited in
    the order of their two hashes; each run of equal hashes is one type,
    numbered in that order, with its first unit as representative, once every
    unit of the run is confirmed equal to it entry by entry (in NumPy: no
    kernel to compile in a fresh process).  A run holding two different
    tables (a hash collision) goes to the kernel, which splits it.
    """
    n_units = len(unit_ptr) - 1
    h1, h2 = _unit_hashes(unit_ptr, cell, bits)
    order = np.lexsort((h2, h1))
    hs1, hs2 = h1[order], h2[order]
    new_run = np.ones(n_units, dtype=bool)
    new_run[1:] = (hs1[1:] != hs1[:-1]) | (hs2[1:] != hs2[:-1])
    run = np.cumsum(new_run) - 1
    reps = order[new_run]
    rep = reps[run]  # the representative of each unit, in hash order
    lens = np.diff(unit_ptr)
    same = bool(np.array_equal(lens[order], lens[rep]))
    if same:
        ls = lens[order]
        within = np.arange(int(ls.sum())) - np.repeat(np.cumsum(ls) - ls, ls)
        a = np.repeat(unit_ptr[order], ls) + within
        b = np.repeat(unit_ptr[rep], ls) + within
        same = bool(np.array_equal(cell[a], cell[b]) and np.array_equal(bits[a], bits[b]))
    if not same:
        return _kernels()._assign_types(order, h1, h2, unit_ptr, cell, bits)
    unit_type = np.empty(n_units, dtype=np.int64)
    unit_type[order] = run
    return unit_type, reps.astype(np.int64, copy=False)


def units_from_clusters(cells: np.ndarray, values: np.ndarray | None,
                        cluster_codes: np.ndarray, n_clusters: int, cell_t: np.ndarray,
                        cell_p: np.ndarray, n_classes: int, *,
                        sample_weights: bool = False) -> Units:
    """Clusters of rows: per-cluster sparse tables collapsed into types.

    Rows are sorted by (cluster, joint cell) so each cluster keeps only the
    cells it uses (never a dense (C, K, K) array); identical cluster tables
    are found by hashing and confirmed entry by entry.  ``sample_weights``:
    ``values`` are sample weights (not counts), hashed free of their scale.
    """
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
        # within a cluster's cell, weights summed in ascending order: the same sum's
        # last bits, and so the same types, whatever the row order
        order = np.lexsort((values, key))
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
    # types are found (and ordered) by the values' bits: sample weights are taken
    # with the smallest positive sum brought into [1, 2) by an exact power of two,
    # so that weights scaled by one power-of-two factor give the same types in the
    # same order (counts are hashed as they are: their draws stay those of before)
    positive = uval[uval > 0] if sample_weights else uval[:0]
    shift = 1 - int(np.frexp(positive.min())[1]) if len(positive) else 0
    if shift and not np.isfinite(np.ldexp(positive.max(), shift)):
        shift = 0  # a range of weights past float64's: the bits as they are
    bits = (np.ldexp(uval, shift) if shift else uval).view(np.uint64)
    unit_type, reps = assign_types(unit_ptr, ucell, bits)
    counts = np.bincount(unit_type, minlength=len(reps))
    lens = np.diff(unit_ptr)[reps]
    ptr = np.zeros(len(reps) + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    src = np.repeat(unit_ptr[:-1][reps] - ptr[:-1], lens) + np.arange(ptr[-1])
    return _finish_types(counts, ptr, ucell[src], uval[src], n_clusters, cell_t, cell_p,
                         n_classes, len(cells), "clusters")


#: fewer clusters than this: the cluster-robust variance is unreliable (a warning)
MIN_RELIABLE_CLUSTERS = 30


def encode_clusters(clusters, n_input: int, keep: np.ndarray | None,
                    omit: bool = True) -> tuple[np.ndarray, int]:
    """Integer codes 0..C-1 of the cluster ids of the kept rows, and C.

    ``clusters`` is any 1-D array-like of ids (numbers, strings...) aligned
    with the input rows; ``keep`` is :meth:`EncodedPair.keep`.  Rows with a
    missing id must have been dropped before (see
    :func:`fastkappa._core.rows.omit_missing_ids`).
    Fewer than 2 clusters is an error (the variance needs two); fewer than
    :data:`MIN_RELIABLE_CLUSTERS` warn that it is unreliable.
    """
    codes = id_codes(clusters, n_input, "clusters")
    missing_id_rows(codes, "raise", "clusters", omit)  # omit: the caller takes nan_policy
    if keep is not None:
        codes = codes[keep]
    present = np.zeros(int(codes.max()) + 1 if len(codes) else 0, dtype=bool)
    present[codes] = True
    if not present.all():
        remap = np.cumsum(present) - 1
        codes = remap[codes]
    n_clusters = int(present.sum())
    check_cluster_count(n_clusters)
    return codes, n_clusters


def check_cluster_count(n_clusters: int) -> None:
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
            stacklevel=user_stacklevel())


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
    """:func:`poisson_tables` of iid cells."""
    return poisson_tables(units.type_counts, units.n_units)


#: the margins :func:`poisson_margin` chooses from (in units of sqrt(N))
_MARGIN_GRID = np.linspace(0.0, 3.0, 301)
_NORMAL_CDF = 0.5 * (1.0 + np.array([math.erf(m / math.sqrt(2.0)) for m in _MARGIN_GRID]))
_NORMAL_PDF = np.exp(-0.5 * _MARGIN_GRID ** 2) / math.sqrt(2.0 * math.pi)


def poisson_margin(n_cells: int, n: int) -> float:
    """The margin ``m`` (in units of sqrt(n)) that makes the Poisson-and-top-up
    draw over ``n_cells`` cells cheapest: the Poisson means sum to
    ``n - m sqrt(n)``.

    Any margin gives the same exact multinomial; it only sets the cost.  The
    Poisson total is about Normal(n - m sqrt(n), n): it exceeds ``n``, and the
    ``n_cells`` variates are drawn again, with probability ``1 - Phi(m)``, and
    an accepted draw is topped up by ``sqrt(n) (m + phi(m) / Phi(m))`` single
    rows on average.  Each variate and each top-up row is one alias-table read,
    so the expected number of reads ``n_cells / Phi(m) + sqrt(n) (m + phi(m) /
    Phi(m))`` is minimised over a grid of ``m`` in [0, 3]: about 0.4 for 500
    cells at n = 10^6 (1.26x fewer reads than m = 1.5), about 1.5 for 5,000.
    """
    cost = (n_cells / _NORMAL_CDF
            + math.sqrt(n) * (_MARGIN_GRID + _NORMAL_PDF / _NORMAL_CDF))
    return float(_MARGIN_GRID[int(np.argmin(cost))])


def poisson_tables(counts: np.ndarray, n: int):
    """The Poisson-and-top-up alias tables of a multinomial over ``counts`` (summing
    to ``n``), or None when binomials are cheaper (fewer cells than sqrt(N) / 4) or
    the tables would not stay in cache.

    Poisson means sum to ``N - m sqrt(N)``, with the margin ``m`` of
    :func:`poisson_margin`: a draw whose total exceeds N is repeated, and the
    rows it lacks are drawn one by one.
    Returns ``(tab_of, lo, ptr, prob, alias, cell_prob, cell_alias)``.
    """
    sampling = _sampling()
    root = math.sqrt(n)
    if 4 * len(counts) <= root:
        return None
    margin = poisson_margin(len(counts), n) * root
    if n - margin <= 0:
        return None
    # cells with equal counts share a table (a few hundred distinct counts at most
    # where a table is worth it), so the tables stay small and in cache
    uniq, tab_of = np.unique(counts, return_inverse=True)
    lam = uniq * ((n - margin) / n)
    span = sampling._POISSON_SPAN
    width = np.ceil(2.0 * (span * np.sqrt(lam) + span)) + 2.0
    if width.sum() > POISSON_TABLE_MAX:
        return None
    lo, ptr, prob, alias = sampling._poisson_tables(lam)
    cell_prob = np.empty(len(counts))
    cell_alias = np.empty(len(counts), dtype=np.int64)
    sampling._alias_table(counts.astype(np.float64), cell_prob, cell_alias)
    return tab_of.astype(np.int64), lo, ptr, prob, alias, cell_prob, cell_alias


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
    # the two steps of a replicate (``_types_block``), called one after the other:
    # the same compiled code gives a bit-identical value when a replicate redraws
    # the original table (BCa counts such ties exactly), and nothing new to compile
    k = units.n_classes
    joint = np.empty(len(units.cell_t), dtype=np.float64)
    kern._accumulate_types(units.type_counts, units.type_ptr, units.type_cell, units.type_val,
                           joint)
    est = np.empty(units.cell_p.shape[1], dtype=np.float64)
    kern._kappas_from_joint(joint, units.cell_t, units.cell_p, k, wmat,
                            np.empty(k, dtype=np.float64), np.empty(k, dtype=np.float64), est)
    return est, joint


#: the seconds of serial runs in place of each parallel driver (keyed by its id)
_cold_serial_time = StandInTime()


@contextlib.contextmanager
def parallel_drivers():
    """Within the block, :func:`run_driver` compiles and runs the parallel drivers
    whenever the work is large enough for them, and no NumPy stand-in replaces a
    kernel (``fastkappa warmup`` caches them all)."""
    from .._kernels._jit import compile_kernels

    with compile_kernels():
        yield


def run_driver(parallel, serial, work: int, *args, blocks=None) -> np.ndarray:
    """Run a bootstrap driver on ``args``: its serial twin (the same blocks, so the
    same result) up to :data:`SERIAL_MAX_DRAWS` draws, and up to
    :data:`COLD_SERIAL_MAX_DRAWS` while the parallel driver would have to be
    compiled first (a fresh kernel cache: the parallel driver costs about 1.1 s
    more to compile than its serial twin); else the parallel driver.

    Once such serial runs have taken :data:`COLD_SERIAL_BUDGET` seconds in a
    process (the first run, which compiles, left out), the parallel driver is
    compiled after all: repeated calls never lose much more than the first
    call saved.

    ``blocks``, when given, runs the serial twin's loop over blocks in Python
    (the same blocks, the same result) in that second case, while the serial
    driver is not compiled either: a fresh cache then compiles neither driver
    (the serial one costs about 0.4 s), for about 0.5 ms more per call (64
    blocks called from Python; such calls take 5 ms or more).
    """
    if work <= SERIAL_MAX_DRAWS:
        return serial(*args)
    from .._kernels._jit import cold_stand_ins, is_ready

    if work > COLD_SERIAL_MAX_DRAWS or not cold_stand_ins():
        return parallel(*args)
    key = id(parallel)
    if _cold_serial_time.spent(key) > COLD_SERIAL_BUDGET or is_ready(parallel, args):
        return parallel(*args)
    with _cold_serial_time.timing(key):
        if blocks is not None and not is_ready(serial, args):
            return blocks(*args)
        return serial(*args)


def _blocks_from_python(block_name: str, scratch_name: str | None = None):
    """A driver's serial twin as a Python loop over its blocks (the same blocks,
    the same result), for drivers taking ``(*lead, n_rep, seeds)`` whose block
    takes ``(*lead, seed, lo, hi, out)`` and whose ``lead[-3]`` is ``cell_p``
    (one column per model in the output).  With ``scratch_name`` the block
    also takes the arrays that kernel function returns for ``*lead`` (and
    returns 0), allocated here once, so that no allocation compiles with it."""

    def run(*args) -> np.ndarray:
        *lead, n_rep, seeds = args
        kern = _kernels()
        block = getattr(kern, block_name)
        out = np.empty((n_rep, lead[-3].shape[1]), dtype=np.float64)
        step = -(-n_rep // len(seeds))
        scratch = () if scratch_name is None else getattr(kern, scratch_name)(*lead)
        for b in range(len(seeds)):
            lo = min(n_rep, b * step)
            if scratch_name is None:
                block(*lead, seeds[b], lo, min(n_rep, lo + step), out)
            elif block(*lead, seeds[b], lo, min(n_rep, lo + step), out, *scratch) != 0:
                raise RuntimeError(f"internal error: {block_name}'s scratch is too short")
        return out

    return run


#: ``_bootstrap_kappa_types_serial`` and ``_bootstrap_kappa_units_serial`` as Python loops
_types_blocks = _blocks_from_python("_types_block", "_types_scratch")
_units_blocks = _blocks_from_python("_units_block")


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
        # iid cells of many classes: the sparse draw costs O(cells + K) a replicate,
        # drawing units by index O(units + K^2) however few the cells
        by_index = units.by_index and not sparse_cells(units)
    if by_index:
        return run_driver(kern._bootstrap_kappa_units, kern._bootstrap_kappa_units_serial,
                          n_resamples * units.n_units, units.unit_type(), units.type_ptr,
                          units.type_cell, units.type_val, units.cell_t, units.cell_p,
                          units.n_classes, wmat, n_resamples, seeds, blocks=_units_blocks)
    work = n_resamples * (units.n_types + len(units.cell_t))
    if sparse_cells(units):
        tables = _poisson_tables(units)
        if tables is not None:
            return run_driver(kern._bootstrap_kappa_cells_poisson,
                              kern._bootstrap_kappa_cells_poisson_serial, work, *tables,
                              np.int64(units.n_units), units.type_cell, units.cell_t,
                              units.cell_p, units.n_classes, wmat, weight_kind(wmat),
                              n_resamples, seeds)
        return run_driver(kern._bootstrap_kappa_cells, kern._bootstrap_kappa_cells_serial,
                          work, units.type_counts, units.type_cell, np.int64(units.n_units),
                          units.cell_t, units.cell_p, units.n_classes, wmat,
                          weight_kind(wmat), n_resamples, seeds)
    return run_driver(kern._bootstrap_kappa_types, kern._bootstrap_kappa_types_serial, work,
                      units.type_counts, units.type_ptr, units.type_cell, units.type_val,
                      np.int64(units.n_units), units.cell_t, units.cell_p, units.n_classes,
                      wmat, n_resamples, seeds, blocks=_types_blocks)


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
    return run_driver(kern._bootstrap_kappa_row_tables,
                      kern._bootstrap_kappa_row_tables_serial, n_resamples * len(cells),
                      np.ascontiguousarray(cells), w, np.int64(ROW_CHUNK), n_classes, wmat,
                      n_resamples, seeds)


#: pairs of entries (within one type) handled at once by :func:`jackknife_kappas`
_JACKKNIFE_PAIRS = 1 << 20


def _segment_sums(seg: np.ndarray, x: np.ndarray, n: int) -> np.ndarray:
    """Sums of the rows of ``x`` (E,) or (E, M) per segment id ``seg`` (E,): (n,) or (n, M)."""
    if x.ndim == 1:
        return np.bincount(seg, weights=x, minlength=n)
    return np.stack([np.bincount(seg, weights=x[:, m], minlength=n)
                     for m in range(x.shape[1])], axis=1)


def jackknife_kappas(units: Units, wmat: np.ndarray, joint: np.ndarray | None = None
                     ) -> np.ndarray:
    """Leave-one-unit-out kappa of each model, one row per type: (T, M).

    Weight each row by ``units.type_counts`` (the units sharing it).

    Removing one unit of type ``t`` subtracts its own sparse entries (cells
    ``e`` with values ``v_e``) from the joint table, so for each model
    ``N``, the observed term ``s = sum(w * O)`` and the margins change by
    those entries only, and the expected term by a rank-one correction:
    ``r' w c' = r w c - sum_e v_e [(w c)_{a_e} + (r w)_{b_e}]
    + sum_{e, f} v_e v_f w[a_e, b_f]``, O(entries^2) per type and model
    instead of a pass over the data.  Where the expected term nearly
    cancels (below 1e-6 of the full one) the value is recomputed from
    scratch.  NumPy throughout: the types are few next to the data, and a
    compiled kernel here cost more than a second of compiling per process.
    """
    if joint is None:
        joint = full_kappas(units, wmat)[1]
    joint = np.asarray(joint, dtype=np.float64)
    k = units.n_classes
    cell_t, cell_p = units.cell_t, units.cell_p
    ptr, t_cell = units.type_ptr, units.type_cell
    val = np.asarray(units.type_val, dtype=np.float64)
    n_types, n_models = len(ptr) - 1, cell_p.shape[1]
    # the full table of each model: N, margins, observed and expected terms
    nn = float(joint.sum())
    rr = np.bincount(cell_t, weights=joint, minlength=k)
    cc = np.stack([np.bincount(cell_p[:, m], weights=joint, minlength=k)
                   for m in range(n_models)])                      # (M, K)
    ss = joint @ wmat[cell_t[:, None], cell_p]                      # (M,)
    rw = rr @ wmat                                                  # (r w)[b]
    wc = cc @ wmat.T                                                # (M, K): (w c)[a]
    ee = wc @ rr                                                    # (M,)
    # each type's entries
    sizes = np.diff(ptr)
    seg = np.repeat(np.arange(n_types), sizes)
    a = cell_t[t_cell]                                              # (E,)
    b = cell_p[t_cell]                                              # (E, M)
    ds = _segment_sums(seg, val[:, None] * wmat[a[:, None], b], n_types)
    dn = _segment_sums(seg, val, n_types)
    dlin = _segment_sums(seg, val[:, None] * (wc.T[a] + rw[b]), n_types)
    # sum over pairs (e, f) of entries of one type, in chunks of whole types
    dq = np.zeros((n_types, n_models))
    chunk = (np.cumsum(sizes * sizes) - 1) // _JACKKNIFE_PAIRS
    bounds = [0, *(np.flatnonzero(np.diff(chunk)) + 1).tolist(), n_types]
    for t0, t1 in itertools.pairwise(bounds):
        e_lo, e_hi = ptr[t0], ptr[t1]
        rep = sizes[seg[e_lo:e_hi]]                                 # partners per entry
        e = np.repeat(np.arange(e_lo, e_hi), rep)
        first = np.cumsum(rep) - rep
        f = ptr[seg[e]] + (np.arange(len(e)) - np.repeat(first, rep))
        term = (val[e] * val[f])[:, None] * wmat[a[e][:, None], b[f]]
        dq[t0:t1] = _segment_sums(seg[e] - t0, term, t1 - t0)
    e2 = ee - dlin + dq
    ok = e2 > 1e-6 * ee
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 1.0 - (nn - dn)[:, None] * (ss - ds) / e2
    redo = np.nonzero(~ok)
    if len(redo[0]):  # from scratch, by the kernel that scores a replicate's table
        kern = _kernels()
        r, c, one = np.empty(k), np.empty(k), np.empty(1)
        for t, m in zip(*redo, strict=True):
            sub = joint.copy()
            np.subtract.at(sub, t_cell[ptr[t]:ptr[t + 1]], val[ptr[t]:ptr[t + 1]])
            kern._kappas_from_joint(sub, cell_t, np.ascontiguousarray(cell_p[:, m:m + 1]), k,
                                    wmat, r, c, one)
            out[t, m] = one[0]
    return out
