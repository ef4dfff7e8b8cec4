"""Streaming agreement among many raters: long-format chunks in any order.

:class:`AgreementAccumulator` keeps the items x raters table of class codes
(``-1`` for a missing rating), growing it as new item and rater ids arrive,
so memory is one table entry per (item, rater) pair seen, not one per input
row.  Chunks may come in any order and split an item's ratings anywhere;
``compute`` scores the table exactly as :func:`fastkappa.agreement` scores
the same ratings given at once.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._agreement_result import Agreement
from ._core.columns import CodesColumn, FloatColumn, IntColumn, MatrixColumn, as_column
from ._core.config import ID_MAP_MIN
from ._core.dispatch import raters_kernels
from ._core.encode import check_labels as _check_labels
from ._raters_input import (
    RatingsTable,
    _factorize,
    _finish,
    _slots,
    by_patterns,
    check_missing_kind,
    check_missing_undeclared,
    check_order,
    first_repeat,
    missing_marker,
    pattern_space,
    shown_id,
    whole_float_codes,
)

__all__ = ["AgreementAccumulator"]


def _dict_codes(values: list, table: dict) -> np.ndarray:
    """Code of each value in ``table`` (insertion order), adding the new ones."""
    out = np.empty(len(values), dtype=np.int64)
    for j, v in enumerate(values):
        code = table.get(v)
        if code is None:
            code = table[v] = len(table)
        out[j] = code
    return out


def _n_ids(ids, name: str) -> int:
    try:
        return len(ids)
    except TypeError:
        raise ValueError(f"`{name}` must be a 1-D sequence of ids, one per row.") from None


#: the direct id map holds code + 1 per id: int32 halves its memory next to int64
#: (a shuffled export touches it at random, so fewer pages and cache lines count)
_DMAP_DTYPE = np.int32
#: ids beyond what the map's type can number go to the sorted arrays
_DMAP_MAX_IDS = np.iinfo(_DMAP_DTYPE).max - 1


class _IdIndex:
    """Ids (items or raters) -> codes 0, 1, ... in order of first appearance.

    Integer ids live in sorted NumPy arrays (a batch of ``m`` new ids costs
    one ``searchsorted`` and one ``insert``, no Python loop); other ids in a
    dict.  Integer ids fall back to the dict the first time another kind
    arrives.  ``ascending``: each batch's new ids are numbered in ascending
    order on every path (raters: their order orders the rating-row types that
    a bootstrap draws, so it must be the one the one-shot functions use);
    else the direct map numbers them in order of first appearance (items:
    their order changes no result, and numbering them in one pass is what
    a shuffled export of millions of items needs).
    """

    def __init__(self, *, ascending: bool = False) -> None:
        self._ascending = ascending
        self._dict: dict | None = None
        # integer mode: the id of each code, the first `_n_ids` of a buffer that
        # doubles (appending a batch's new ids copies O(ids) in all, not per batch)
        self._ids_buf = np.empty(0, dtype=np.int64)
        self._n_ids = 0
        self._sorted = np.empty(0, dtype=np.int64)
        self._sorted_code = np.empty(0, dtype=np.int64)
        # direct mode (integer ids in a compact range): dmap[id - base] is the id's
        # code + 1 (0: unseen); the sorted arrays are built only when it is left
        self._dmap: np.ndarray | None = None
        self._base = 0  # the id at dmap[0] (the map has room below and above the ids)
        self._low = 0  # smallest id in the direct map
        self._top = 0  # largest id in the direct map
        self._direct_ok = True

    def __len__(self) -> int:
        return len(self._dict) if self._dict is not None else self._n_ids

    @property
    def _by_code(self) -> np.ndarray:
        """Integer mode: the id of each code (a view)."""
        return self._ids_buf[:self._n_ids]

    def _room(self, m: int, cap: int = 0) -> np.ndarray:
        """The buffer's free tail, with room for at least ``m`` more ids.

        ``cap``: the most ids there can be (the direct map's id range); when
        the buffer grows it grows to that at once, since pages not written
        cost no memory, while growing by doubling copies the ids each time.
        """
        n = self._n_ids
        if n + m > len(self._ids_buf):
            grown = np.empty(max(n + m, 2 * len(self._ids_buf), cap), dtype=np.int64)
            grown[:n] = self._ids_buf[:n]
            self._ids_buf = grown
        return self._ids_buf[n:]

    def _append(self, ids: np.ndarray) -> None:
        self._room(len(ids))[:len(ids)] = ids
        self._n_ids += len(ids)

    def __getstate__(self) -> dict:
        # the direct map spans the id range (possibly far more than the ids): a
        # pickle stores its length only, and loading rebuilds it from the ids
        state = self.__dict__.copy()
        state["_ids_buf"] = self._by_code.copy()
        if state["_dmap"] is not None:
            state["_dmap"] = len(state["_dmap"])
        return state

    def __setstate__(self, state: dict) -> None:
        if "_by_code" in state:  # pickled before the id buffer: numbered as then
            ids = state.pop("_by_code")
            state["_ids_buf"], state["_n_ids"] = ids, len(ids)
            state.setdefault("_ascending", True)
        state.setdefault("_low", state["_base"])  # pickled before the map had room below
        self.__dict__.update(state)
        if isinstance(self._dmap, int):
            dmap = np.zeros(self._dmap, dtype=_DMAP_DTYPE)
            dmap[self._by_code - self._base] = np.arange(1, len(self._by_code) + 1)
            self._dmap = dmap

    def id_of(self, code: int):
        """The id numbered ``code``."""
        if self._dict is not None:
            return next(itertools.islice(self._dict, code, None))
        return self._by_code[code]

    def ids(self) -> list:
        return list(self._dict) if self._dict is not None else self._by_code.tolist()

    def _leave_direct(self) -> None:
        """Integer ids from now on in the sorted arrays (the range stopped being compact)."""
        self._direct_ok = False
        if self._dmap is not None:
            order = np.argsort(self._by_code, kind="stable")
            self._sorted, self._sorted_code = self._by_code[order], order.astype(np.int64)
            self._dmap = None

    def _to_dict(self) -> None:
        self._leave_direct()
        if self._dict is None:
            self._dict = {v: c for c, v in enumerate(self._by_code.tolist())}

    def row_codes(self, ids, name: str) -> np.ndarray:
        """Each row's code (int64), adding new ids.

        Integer ids in a compact range go through a direct map in one pass
        (no sort, no per-batch copy of the known ids), new ids numbered in
        order of first appearance (in ascending order with ``ascending``);
        other ids are numbered per batch first (:func:`_factorize`), new ids
        of a batch in ascending order.
        """
        if (self._dict is None and self._direct_ok and isinstance(ids, np.ndarray)
                and ids.ndim == 1 and len(ids) and ids.dtype.kind in "iu"
                and (ids.dtype.kind == "i" or ids.dtype.itemsize < 8)):
            out = self._direct(ids.astype(np.int64, copy=False))
            if out is not None:
                return out
        codes, uniq = _factorize(ids, name, as_array=True)
        return self.codes(uniq)[codes]

    def _fit(self, lo: int, hi: int, n_new: int) -> bool:
        """Make the direct map cover ids lo..hi; False (direct mode left) when the
        range would not be compact: wider than 4 x the ids (known and new) + 1024
        and than :data:`ID_MAP_MIN` (a shuffled export's first batch spans the
        whole id range with a fraction of the ids; the map is zeroed memory, so
        the pages of ids never seen are not touched)."""
        n = len(self._by_code)
        if self._dmap is None:
            if n:  # ids arrived before in the sorted arrays: stay there
                self._direct_ok = False
                return False
            low, top = lo, hi
        else:  # the range of the ids (not the map's capacity)
            low, top = min(self._low, lo), max(self._top, hi)
        size = top - low + 1
        if size > max(4 * (n + n_new) + 1024, ID_MAP_MIN) or n + n_new >= _DMAP_MAX_IDS:
            self._leave_direct()
            return False
        if self._dmap is None or low < self._base or top >= self._base + len(self._dmap):
            self._map_room(low, top)
        self._low, self._top = low, top
        return True

    def _map_room(self, low: int, top: int) -> None:
        """A direct map covering ids ``low..top``, with room on the sides that grew.

        The room is zeroed memory that costs nothing until an id lands there.
        A shuffled export's first batch spans nearly the whole id range and
        later batches widen it a little at both ends: an eighth of the range
        on each side keeps those from copying the map.  Ids that keep growing
        (files in item order) double the room: O(ids) copied in all.
        """
        size = top - low + 1
        old = self._dmap
        grew_low = old is None or low < self._base
        grew_top = old is None or top >= self._base + len(old)
        pad = max(size // 8, 1024, 0 if old is None else len(old))
        below = min(pad if grew_low else 0, low + 2**63)  # int64 ids: base stays an int64
        base = low - below
        if old is not None and not grew_low:
            base = self._base
        end = top + (pad if grew_top else 0)  # last id with room
        if old is not None and not grew_top:
            end = self._base + len(old) - 1
        grown = np.zeros(end - base + 1, dtype=_DMAP_DTYPE)
        if old is not None:
            off = self._base - base
            grown[off:off + len(old)] = old
        self._dmap, self._base = grown, base

    def _direct(self, ids: np.ndarray) -> np.ndarray | None:
        lo, hi = int(ids.min()), int(ids.max())
        if not self._fit(lo, hi, len(ids)):
            return None
        n = self._n_ids
        new_ids = self._room(min(len(ids), hi - lo + 1, self._top - self._low + 1 - n),
                             len(self._dmap))
        out = np.empty(len(ids), dtype=np.int64)
        m = raters_kernels()._direct_codes(ids, np.int64(self._base), self._dmap,
                                           np.int64(n), new_ids, out)
        self._n_ids += m
        if self._ascending and m > 1:
            fresh = new_ids[:m]
            order = np.argsort(fresh, kind="stable")
            if np.any(order != np.arange(m)):  # renumber the batch's new ids in id order
                code = np.empty(m, dtype=np.int64)  # new code of each first-appearance code
                code[order] = n + np.arange(m)
                fresh[:] = fresh[order]
                self._dmap[fresh - self._base] = (n + 1 + np.arange(m)).astype(_DMAP_DTYPE)
                renamed = out >= n
                out[renamed] = code[out[renamed] - n]
        return out

    def codes(self, ids) -> np.ndarray:
        """Codes of distinct ``ids`` (a list or 1-D array), adding the new ones."""
        # a list keeps its Python values (np.asarray would turn [1, "x"] into strings)
        arr = ids if isinstance(ids, np.ndarray) else np.asarray(ids, dtype=object)
        if self._dict is None and arr.dtype.kind in "iu" and (
                arr.dtype.kind == "i" or arr.dtype.itemsize < 8):
            arr = arr.astype(np.int64, copy=False)
            if (self._dmap is not None and len(arr)
                    and self._fit(int(arr.min()), int(arr.max()), len(arr))):
                # new ids numbered in the order given, as the sorted arrays do
                v = arr - self._base
                out = self._dmap[v] - 1
                new = out < 0
                out[new] = len(self._by_code) + np.arange(np.count_nonzero(new))
                self._dmap[v[new]] = out[new] + 1
                self._append(arr[new])
                return out
            self._leave_direct()
            return self._int_codes(arr)
        self._to_dict()
        return _dict_codes(arr.tolist(), self._dict)

    def _int_codes(self, ids: np.ndarray) -> np.ndarray:
        pos = np.searchsorted(self._sorted, ids)
        found = pos < len(self._sorted)
        found[found] = self._sorted[pos[found]] == ids[found]
        out = np.empty(len(ids), dtype=np.int64)
        out[found] = self._sorted_code[pos[found]]
        new = np.flatnonzero(~found)
        if len(new):
            n = len(self._by_code)
            out[new] = n + np.arange(len(new))
            self._append(ids[new])
            order = np.argsort(ids[new], kind="stable")
            self._sorted = np.insert(self._sorted, pos[new][order], ids[new][order])
            self._sorted_code = np.insert(self._sorted_code, pos[new][order],
                                          out[new][order])
        return out

    def truncate(self, n: int) -> None:
        """Forget the codes from ``n`` on (a failed update)."""
        if self._dict is not None:
            for key in list(self._dict)[n:]:
                del self._dict[key]
            return
        if self._dmap is not None:
            self._dmap[self._by_code[n:] - self._base] = 0
            self._n_ids = n
            return
        keep = self._sorted_code < n
        self._n_ids = n
        self._sorted, self._sorted_code = self._sorted[keep], self._sorted_code[keep]


def _sorted_positions(ids: list) -> list[int] | None:
    """The positions of ``ids`` in ascending id order (numbers before strings),
    or None when they are in it already (or do not compare).

    Rater codes follow each chunk's ids in ascending order, but a rater first
    seen in a later chunk comes after the known ones; items follow arrival.
    One call numbers both in id order.  The raters' order orders the
    rating-row types a bootstrap draws (Conger's kappa), and the items' order
    the sums within a cluster, so the table is built in id order for the same
    seeded intervals.
    """
    try:  # numbers before strings, as one call's sorted factorisation has them
        order = sorted(range(len(ids)), key=lambda j: (isinstance(ids[j], str), ids[j]))
    except TypeError:
        return None
    return None if order == list(range(len(ids))) else order


class AgreementAccumulator:
    """Agreement among many raters, accumulated from long-format chunks.

    Parameters
    ----------
    labels : array_like, optional
        The classes in scale order (fixed for every chunk).
    n_classes : int, optional
        Classes are ``0..n_classes-1``.
    missing : scalar, optional
        A label value that marks a missing rating; not one of the declared
        classes (that is a ``ValueError``).

    Notes
    -----
    Without ``labels`` or ``n_classes`` the classes are the sorted union of
    the labels seen (numbers, or strings without an order).

    References
    ----------
    .. [1] Gwet, K. L. (2014). Handbook of Inter-Rater Reliability (4th ed.).
       Advanced Analytics, LLC.
    .. [2] Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability.
       Departmental Papers (ASC) 43, Annenberg School for Communication,
       University of Pennsylvania.

    Examples
    --------
    >>> import fastkappa as fk
    >>> acc = fk.AgreementAccumulator()
    >>> _ = acc.update(item=[1, 1, 2], rater=["a", "b", "a"], label=[0, 0, 1])
    >>> _ = acc.update(item=[2, 3, 3], rater=["b", "a", "b"], label=[1, 2, 1])
    >>> acc.n_items, acc.n_raters, acc.n_ratings
    (3, 2, 6)
    >>> round(acc.compute(coefficients="fleiss_kappa")["fleiss_kappa"].estimate, 4)
    0.4545
    """

    #: accumulators pickled before the -1 marker existed hold none
    _missing_pairs = False
    #: the classes, in order, that an ordered Categorical declared (None: none did)
    _scale: list | None = None

    def __init__(self, *, labels: ArrayLike | None = None, n_classes: int | None = None,
                 missing: Any = None) -> None:
        declared, kind = _check_labels(labels, n_classes)
        self._declared = declared
        self._kind = kind
        self._missing = missing_marker(missing)
        check_missing_undeclared(self._missing, declared)
        self.reset()

    # ----------------------------------------------------------------- state

    def reset(self) -> AgreementAccumulator:
        """Forget every rating (the options stay)."""
        self._items = _IdIndex()
        self._raters = _IdIndex(ascending=True)
        self._values: dict = {}   # label value -> provisional code (undeclared classes)
        # class code + 1; -1: a pair seen with a missing label; 0: no row of the pair
        self._codes = np.zeros((0, 0), dtype=np.int8)
        self._missing_pairs = False  # whether the table holds a -1
        self._scale = None
        self._n_ratings = 0
        return self

    @property
    def n_items(self) -> int:
        return len(self._items)

    @property
    def n_raters(self) -> int:
        return len(self._raters)

    @property
    def n_ratings(self) -> int:
        """Ratings stored (missing labels are not counted)."""
        return self._n_ratings

    def __copy__(self) -> AgreementAccumulator:
        # a shallow copy would share the table and the id maps, and the next
        # update of either would change both
        return copy.deepcopy(self)

    def __getstate__(self) -> dict:
        # the table keeps room for ids to come (zeroed pages cost nothing in memory
        # but would in a pickle or a copy): store the rated part only
        state = self.__dict__.copy()
        state["_codes"] = self._codes[:self.n_items, :self.n_raters].copy()
        return state

    def _n_codes(self) -> int:
        """Provisional class codes so far (the table stores code + 1)."""
        return len(self._declared) if self._declared is not None else len(self._values)

    def _grow(self, n_items: int, n_raters: int) -> None:
        """Room for the items and raters, and a cell type that holds every code + 1.

        The table is int8 while the codes fit (a quarter of int32's memory; a
        shuffled export writes it at random, so fewer cache lines count), int32
        from the 127th class on.
        """
        rows, cols = self._codes.shape
        dtype = self._codes.dtype
        if self._n_codes() >= np.iinfo(dtype).max:
            dtype = np.dtype(np.int32)
        if n_items <= rows and n_raters <= cols and dtype == self._codes.dtype:
            return
        # zeroed memory: the pages beyond the copied part are touched only when used.
        # Rows double (items numbered in order of arrival fill them from the top), and
        # only the part that can hold ratings is copied: rows of items and columns of
        # raters known before this chunk (the rest is zero)
        new = np.zeros((max(n_items, 2 * rows if n_items > rows else rows, 16),
                        max(n_raters, 2 * cols if n_raters > cols else cols, 4)),
                       dtype=dtype)
        used_rows, used_cols = min(rows, n_items), min(cols, n_raters)
        new[:used_rows, :used_cols] = self._codes[:used_rows, :used_cols]
        self._codes = new

    # ----------------------------------------------------------------- update

    def _label_codes(self, label) -> np.ndarray:
        """Provisional class codes of a chunk's labels (-1 missing)."""
        col = as_column(label, "label")
        if isinstance(col, MatrixColumn):
            raise ValueError("`label` must be 1-D, one label per row.")
        if self._declared is not None:
            check_missing_kind(self._missing, self._kind)
            return _slots(col, self._declared, self._kind, self._missing, "label")
        if isinstance(col, FloatColumn):
            col = whole_float_codes(col, "label")
        codes = None
        if isinstance(col, IntColumn):
            # compact integer labels are numbered by counting, not by a sort
            inverse, uniq = _factorize(col.values, "label", as_array=True)
            col = CodesColumn(inverse, uniq, kind="num")
            used = np.ones(len(uniq), dtype=bool)  # each value occurs
        else:
            # a dictionary's words that no row of this chunk holds are no classes (an
            # unordered Categorical's unused categories, the word of rows dropped as
            # missing); an ordered Categorical declares its scale, as in one call
            codes = np.asarray(col.codes, dtype=np.int64)
            used = np.bincount(codes[codes >= 0], minlength=len(col.categories)) > 0
            if getattr(col, "ordered", False):
                used[:] = True
                scale = [c.item() if isinstance(c, np.generic) else c for c in col.categories]
                self._declare_scale([c for c in scale
                                     if self._missing is None or c != self._missing])
        kind = col.kind if used.any() else None
        check_missing_kind(self._missing, kind)  # before the accumulator takes the kind
        if kind is not None:
            if self._kind is None:
                self._kind = kind
            elif kind != self._kind:
                raise ValueError(
                    "this chunk's labels are "
                    f"{'strings' if kind == 'str' else 'numbers'} but earlier ones were "
                    f"{'strings' if self._kind == 'str' else 'numbers'}; labels must be of "
                    "one kind.")
        cats = [c.item() if isinstance(c, np.generic) else c for c in col.categories]
        keep = [bool(u) and (self._missing is None or c != self._missing)
                for c, u in zip(cats, used, strict=True)]
        lut = np.full(len(cats) + 1, -1, dtype=np.int32)
        # only the kept values become classes (the `missing` marker is no class)
        kept = [c for c, k in zip(cats, keep, strict=True) if k]
        if kept:
            lut[1:][np.asarray(keep, dtype=bool)] = _dict_codes(kept, self._values)
        return lut[(np.asarray(col.codes, dtype=np.int64) if codes is None else codes) + 1]

    def _declare_scale(self, scale: list) -> None:
        """Keep the classes an ordered Categorical declares, in its order; every
        chunk (and merged accumulator) that declares some must declare the same."""
        if self._scale is None:
            self._scale = scale
        elif scale != self._scale:
            raise ValueError(
                f"these labels declare the classes {scale} (an ordered Categorical), but "
                f"earlier ones declared {self._scale}; every chunk must declare the same "
                "classes in the same order (or pass `labels=` to the accumulator).")

    def update(self, item: ArrayLike, rater: ArrayLike, label: ArrayLike
               ) -> AgreementAccumulator:
        """Add one chunk of long-format ratings (one row per rating); returns self.

        A rater who rates an item twice (in this chunk or across chunks) is a
        ``ValueError``; the accumulator is left unchanged then.  Ids are
        integers or strings compared as Python values in every chunk (``0``
        and ``"0"`` are two ids); unsigned ids past 2**63 keep their value.
        """
        return self._update(item, rater, label)

    def _update(self, item, rater, label, missing: np.ndarray | None = None
                ) -> AgreementAccumulator:
        """:meth:`update`; ``missing`` (bool, one per row) marks rows whose label is
        missing, and ``label`` then holds the labels of the other rows only (as
        the file readers hand them over)."""
        snapshot = self._snapshot()
        try:
            slots = self._label_codes(label)
            if missing is not None:
                full = np.full(len(missing), -1, dtype=slots.dtype)
                full[~missing] = slots
                slots = full
            n_item, n_rater = _n_ids(item, "item"), _n_ids(rater, "rater")
            if not n_item == n_rater == len(slots):
                raise ValueError(
                    f"`item`, `rater` and `label` must have the same length; got "
                    f"{n_item}, {n_rater} and {len(slots)}.")
            gi = self._items.row_codes(item, "item")
            gr = self._raters.row_codes(rater, "rater")
            self._write(gi, gr, slots)
        except BaseException:  # a bad chunk, or no memory for the table: as before
            self._restore(snapshot)
            raise
        return self

    def _snapshot(self) -> tuple:
        return len(self._items), len(self._raters), len(self._values), self._kind, self._scale

    def _restore(self, snapshot: tuple) -> None:
        """Forget ids and label values added since ``snapshot`` (a failed update)."""
        self._items.truncate(snapshot[0])
        self._raters.truncate(snapshot[1])
        for key in list(self._values)[snapshot[2]:]:
            del self._values[key]
        self._kind = snapshot[3]
        self._scale = snapshot[4]

    def _write(self, gi: np.ndarray, gr: np.ndarray, slots: np.ndarray) -> None:
        kern = raters_kernels()

        self._grow(len(self._items), len(self._raters))
        dup = kern._write_ratings(self._codes, gi.astype(np.int64, copy=False),
                                  gr.astype(np.int64, copy=False),
                                  slots.astype(np.int32, copy=False))
        if dup:
            raise ValueError(
                f"{dup} (item, rater) pairs were rated more than once (within a chunk, "
                f"across chunks or merged accumulators; the first is {self._repeated(gi, gr)}"
                "); each rater rates an item at most once, and a row with a missing label "
                "counts as that rater's row. Remove or aggregate the duplicate rows first.")
        rated = int(np.count_nonzero(slots >= 0))
        self._n_ratings += rated
        if rated < len(slots):  # the table holds -1 for those pairs
            self._missing_pairs = True

    def _repeated(self, gi: np.ndarray, gr: np.ndarray) -> str:
        """The first row of a chunk whose pair came before (in the table, or earlier
        in the chunk), as text naming its item and rater ids (an error message's)."""
        key = gi.astype(np.int64) * (int(gr.max()) + 1) + gr
        j = first_repeat(key, seen=self._codes[gi, gr] != 0)
        return (f"item {shown_id(self._items.id_of(int(gi[j])))} with rater "
                f"{shown_id(self._raters.id_of(int(gr[j])))}")

    def merge(self, other: AgreementAccumulator) -> AgreementAccumulator:
        """Add another accumulator's ratings in place (same options); returns self."""
        if not isinstance(other, AgreementAccumulator):
            raise TypeError("merge() takes another AgreementAccumulator.")
        same = (other._missing == self._missing and (
            (self._declared is None) == (other._declared is None))
            and (self._declared is None or list(self._declared) == list(other._declared)))
        if not same:
            raise ValueError("accumulators with different `labels`, `n_classes` or `missing` "
                             "cannot be merged.")
        stored = other._codes[:other.n_items, :other.n_raters]
        ii, gg = np.nonzero(stored)  # -1 (missing label) comes as the slot -2: no rating
        vals = stored[ii, gg] - 1
        snapshot = self._snapshot()
        try:
            if self._declared is None:
                if other._kind is not None and self._kind is not None and (
                        other._kind != self._kind):
                    raise ValueError("the accumulators hold labels of different kinds "
                                     "(strings and numbers); labels must be of one kind.")
                if self._kind is None:
                    self._kind = other._kind
                if other._scale is not None:
                    self._declare_scale(other._scale)
                remap = _dict_codes(list(other._values), self._values).astype(np.int32)
                rated = vals >= 0  # the others stay missing labels
                vals = vals.astype(np.int32)
                vals[rated] = remap[vals[rated]]
            gi = self._items.codes(_id_array(other._items))[ii]
            gr = self._raters.codes(_id_array(other._raters))[gg]
            self._write(gi, gr, vals.astype(np.int32))
        except BaseException:  # a bad chunk, or no memory for the table: as before
            self._restore(snapshot)
            raise
        return self

    def __add__(self, other: AgreementAccumulator) -> AgreementAccumulator:
        return copy.deepcopy(self).merge(other)

    # ----------------------------------------------------------------- compute

    def table(self, *, weighted: bool = False, item_order: np.ndarray | None = None
              ) -> RatingsTable:
        """The encoded ratings (classes fixed), as the one-shot functions build them;
        ``item_order``: the items' rows in that order (else in arrival order)."""
        if not len(self._items):
            raise ValueError("the accumulator is empty; call update() with ratings first.")
        stored = self._codes[:self.n_items, :self.n_raters]  # class code + 1; 0: none
        if self._missing_pairs:  # -1: a pair seen with a missing label, no rating either
            stored = np.maximum(stored, 0)
        raters = self._raters.ids()
        perm = _sorted_positions(raters)
        if perm is not None:  # raters in id order, as one call numbers them
            stored = np.ascontiguousarray(stored[:, perm])  # C order: the compiled layout
            raters = [raters[j] for j in perm]
        if item_order is not None:
            stored = np.ascontiguousarray(stored[item_order])
        rank = None
        if self._declared is not None:
            classes, ordered = np.asarray(self._declared), True
        else:
            values = list(self._values)
            if not values:
                raise ValueError("no rating to score: every rating is missing.")
            if self._scale is not None:  # an ordered Categorical's order, as in one call
                pos = {c: j for j, c in enumerate(self._scale)}
                stray = [v for v in values if v not in pos]
                if stray:
                    raise ValueError(
                        f"the labels {stray[:5]} are not among the classes {self._scale} "
                        "that an ordered Categorical declared; pass every class in its "
                        "categories (or `labels=` to the accumulator).")
                classes = np.asarray(self._scale, dtype=object if self._kind == "str" else None)
                order = [values.index(c) for c in self._scale]
                ordered = True
            else:
                order = sorted(range(len(values)), key=lambda j: values[j])
                classes = np.asarray([values[j] for j in order],
                                     dtype=object if self._kind == "str" else None)
                ordered = self._kind != "str"
            rank = np.empty(len(values) + 1, dtype=np.int32)
            rank[np.asarray(order)] = np.arange(len(values), dtype=np.int32)
            rank[-1] = -1
        check_order(ordered, weighted)
        space = pattern_space(len(classes), self.n_raters, self.n_items)
        if space:  # group the items by rating row: no items-sized copies
            return by_patterns(stored, 1, classes, 0.0, space, remap=rank, ordered=ordered,
                               raters=raters)
        codes = stored - np.int32(1)
        if rank is not None:
            codes = rank[codes]  # code -1 reads rank[-1] = -1
        return _finish(codes, classes, ordered, raters)

    def compute(self, *, coefficients: str | list[str] | None = None,
                weights: str | ArrayLike | None = None, level: str | ArrayLike | None = None,
                method: str = "asymptotic", confidence_level: float = 0.95,
                n_resamples: int = 10_000,
                seed: int | np.random.SeedSequence | np.random.Generator | None = None,
                clusters: dict | None = None, population_size: float | None = None
                ) -> Agreement:
        """:func:`fastkappa.agreement` on everything accumulated.

        ``clusters`` maps item id -> cluster id (every item needs one).
        """
        from ._core.intervals import _kappa_ci_iv
        from .agreement import _any_weighted, _norm_weights, agreement_from_table

        method, cl, n_resamples, seq = _kappa_ci_iv(method, confidence_level, n_resamples,
                                                    seed)
        weights = _norm_weights(weights)
        if level is not None:
            from . import raters as _r

            _r.check_level(level)
        cl_ids = item_order = None
        if clusters is not None:
            if not isinstance(clusters, dict):
                raise ValueError("`clusters` must be a dict mapping item id -> cluster id.")
            item_ids = self._items.ids()
            # items in id order, as one call has them: a cluster's items are summed in
            # that order, whatever order they arrived in
            item_order = _sorted_positions(item_ids)
            if item_order is not None:
                item_ids = [item_ids[j] for j in item_order]
                item_order = np.asarray(item_order, dtype=np.int64)
            absent = [i for i in item_ids if i not in clusters]
            if absent:
                raise ValueError(
                    f"`clusters` has no cluster for {len(absent)} items (e.g. {absent[0]!r}); "
                    "map every item id to a cluster id.")
            cl_ids = np.asarray([clusters[i] for i in item_ids], dtype=object)
        table = self.table(weighted=_any_weighted(weights, level), item_order=item_order)
        return agreement_from_table(table, coefficients, weights, level, method, cl,
                                    n_resamples, seq, cl_ids, population_size)

    def __repr__(self) -> str:
        return (f"AgreementAccumulator(n_items={self.n_items}, n_raters={self.n_raters}, "
                f"n_ratings={self.n_ratings})")


def _id_array(index: _IdIndex):
    """An index's ids in code order (an int64 array in integer mode)."""
    return index._by_code if index._dict is None else index.ids()
