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
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._agreement_result import Agreement
from ._core.columns import CodesColumn, FloatColumn, IntColumn, MatrixColumn, as_column
from ._core.dispatch import raters_kernels
from ._core.encode import check_labels as _check_labels
from ._raters_input import (
    RatingsTable,
    _factorize,
    _finish,
    _slots,
    check_order,
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


class _IdIndex:
    """Ids (items or raters) -> codes 0, 1, ... in order of first appearance.

    Integer ids live in sorted NumPy arrays (a batch of ``m`` new ids costs
    one ``searchsorted`` and one ``insert``, no Python loop); other ids in a
    dict.  Integer ids fall back to the dict the first time another kind
    arrives.
    """

    def __init__(self) -> None:
        self._dict: dict | None = None
        self._by_code = np.empty(0, dtype=np.int64)   # integer mode: id of each code
        self._sorted = np.empty(0, dtype=np.int64)
        self._sorted_code = np.empty(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self._dict) if self._dict is not None else len(self._by_code)

    def ids(self) -> list:
        return list(self._dict) if self._dict is not None else self._by_code.tolist()

    def _to_dict(self) -> None:
        if self._dict is None:
            self._dict = {v: c for c, v in enumerate(self._by_code.tolist())}

    def codes(self, ids) -> np.ndarray:
        """Codes of distinct ``ids`` (a list or 1-D array), adding the new ones."""
        # a list keeps its Python values (np.asarray would turn [1, "x"] into strings)
        arr = ids if isinstance(ids, np.ndarray) else np.asarray(ids, dtype=object)
        if self._dict is None and arr.dtype.kind in "iu" and (
                arr.dtype.kind == "i" or arr.dtype.itemsize < 8):
            return self._int_codes(arr.astype(np.int64, copy=False))
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
            self._by_code = np.concatenate([self._by_code, ids[new]])
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
        keep = self._sorted_code < n
        self._by_code = self._by_code[:n]
        self._sorted, self._sorted_code = self._sorted[keep], self._sorted_code[keep]


class AgreementAccumulator:
    """Agreement among many raters, accumulated from long-format chunks.

    Parameters
    ----------
    labels : array_like, optional
        The classes in scale order (fixed for every chunk).
    n_classes : int, optional
        Classes are ``0..n_classes-1``.
    missing : scalar, optional
        A label value that marks a missing rating.

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

    def __init__(self, *, labels: ArrayLike | None = None, n_classes: int | None = None,
                 missing: Any = None) -> None:
        declared, kind = _check_labels(labels, n_classes)
        self._declared = declared
        self._kind = kind
        self._missing = missing
        self.reset()

    # ----------------------------------------------------------------- state

    def reset(self) -> AgreementAccumulator:
        """Forget every rating (the options stay)."""
        self._items = _IdIndex()
        self._raters = _IdIndex()
        self._values: dict = {}   # label value -> provisional code (undeclared classes)
        self._codes = np.full((0, 0), -1, dtype=np.int32)
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

    def _grow(self, n_items: int, n_raters: int) -> None:
        rows, cols = self._codes.shape
        if n_items <= rows and n_raters <= cols:
            return
        new = np.full((max(n_items, 2 * rows if n_items > rows else rows, 16),
                       max(n_raters, 2 * cols if n_raters > cols else cols, 4)), -1,
                      dtype=np.int32)
        new[:rows, :cols] = self._codes
        self._codes = new

    # ----------------------------------------------------------------- update

    def _label_codes(self, label) -> np.ndarray:
        """Provisional class codes of a chunk's labels (-1 missing)."""
        col = as_column(label, "label")
        if isinstance(col, MatrixColumn):
            raise ValueError("`label` must be 1-D, one label per row.")
        if self._declared is not None:
            return _slots(col, self._declared, self._kind, self._missing, "label")
        if isinstance(col, FloatColumn):
            col = whole_float_codes(col, "label")
        if isinstance(col, IntColumn):
            uniq, inverse = np.unique(col.values, return_inverse=True)
            col = CodesColumn(inverse.astype(np.int64), uniq, kind="num")
        kind = col.kind if len(col.categories) else None
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
        if self._missing is not None:
            keep = [c != self._missing for c in cats]
        else:
            keep = [True] * len(cats)
        lut = np.full(len(cats) + 1, -1, dtype=np.int32)
        lut[1:] = np.where(keep, _dict_codes(cats, self._values), -1)
        return lut[np.asarray(col.codes, dtype=np.int64) + 1]

    def update(self, item: ArrayLike, rater: ArrayLike, label: ArrayLike
               ) -> AgreementAccumulator:
        """Add one chunk of long-format ratings (one row per rating); returns self.

        A rater who rates an item twice (in this chunk or across chunks) is a
        ``ValueError``; the accumulator is left unchanged then.
        """
        item_codes, item_ids = _factorize(item, "item", as_array=True)
        rater_codes, rater_ids = _factorize(rater, "rater", as_array=True)
        snapshot = self._snapshot()
        try:
            slots = self._label_codes(label)
            if not len(item_codes) == len(rater_codes) == len(slots):
                raise ValueError(
                    f"`item`, `rater` and `label` must have the same length; got "
                    f"{len(item_codes)}, {len(rater_codes)} and {len(slots)}.")
            gi = self._items.codes(item_ids)[item_codes]
            gr = self._raters.codes(rater_ids)[rater_codes]
            self._write(gi, gr, slots)
        except ValueError:
            self._restore(snapshot)
            raise
        return self

    def _snapshot(self) -> tuple:
        return len(self._items), len(self._raters), len(self._values), self._kind

    def _restore(self, snapshot: tuple) -> None:
        """Forget ids and label values added since ``snapshot`` (a failed update)."""
        self._items.truncate(snapshot[0])
        self._raters.truncate(snapshot[1])
        for key in list(self._values)[snapshot[2]:]:
            del self._values[key]
        self._kind = snapshot[3]

    def _write(self, gi: np.ndarray, gr: np.ndarray, slots: np.ndarray) -> None:
        kern = raters_kernels()

        self._grow(len(self._items), len(self._raters))
        dup = kern._write_ratings(self._codes, gi.astype(np.int64, copy=False),
                                  gr.astype(np.int64, copy=False),
                                  slots.astype(np.int32, copy=False))
        if dup:
            raise ValueError(
                f"{dup} (item, rater) pairs were rated more than once (within this batch "
                "or across batches); each rater rates an item at most once. Remove or "
                "aggregate the duplicate rows first.")
        self._n_ratings += int(np.count_nonzero(slots >= 0))

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
        codes = other._codes[:other.n_items, :other.n_raters]
        ii, gg = np.nonzero(codes >= 0)
        vals = codes[ii, gg]
        snapshot = self._snapshot()
        try:
            if self._declared is None:
                if other._kind is not None and self._kind is not None and (
                        other._kind != self._kind):
                    raise ValueError("the accumulators hold labels of different kinds "
                                     "(strings and numbers); labels must be of one kind.")
                if self._kind is None:
                    self._kind = other._kind
                remap = _dict_codes(list(other._values), self._values).astype(np.int32)
                vals = remap[vals] if len(vals) else vals
            gi = self._items.codes(_id_array(other._items))[ii]
            gr = self._raters.codes(_id_array(other._raters))[gg]
            self._write(gi, gr, vals.astype(np.int32))
        except ValueError:
            self._restore(snapshot)
            raise
        return self

    def __add__(self, other: AgreementAccumulator) -> AgreementAccumulator:
        return copy.deepcopy(self).merge(other)

    # ----------------------------------------------------------------- compute

    def table(self, *, weighted: bool = False) -> RatingsTable:
        """The encoded ratings (classes fixed), as the one-shot functions build them."""
        if not len(self._items):
            raise ValueError("the accumulator is empty; call update() with ratings first.")
        codes = np.ascontiguousarray(self._codes[:self.n_items, :self.n_raters])
        if self._declared is not None:
            classes, ordered = np.asarray(self._declared), True
        else:
            values = list(self._values)
            if not values:
                raise ValueError("no rating to score: every rating is missing.")
            order = sorted(range(len(values)), key=lambda j: values[j])
            classes = np.asarray([values[j] for j in order],
                                 dtype=object if self._kind == "str" else None)
            rank = np.empty(len(values) + 1, dtype=np.int32)
            rank[np.asarray(order)] = np.arange(len(values), dtype=np.int32)
            rank[-1] = -1
            codes = rank[codes]  # code -1 reads rank[-1] = -1
            ordered = self._kind != "str"
        check_order(ordered, weighted)
        return _finish(codes, classes, ordered, self._raters.ids())

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
        table = self.table(weighted=_any_weighted(weights, level))
        cl_ids = None
        if clusters is not None:
            if not isinstance(clusters, dict):
                raise ValueError("`clusters` must be a dict mapping item id -> cluster id.")
            item_ids = self._items.ids()
            absent = [i for i in item_ids if i not in clusters]
            if absent:
                raise ValueError(
                    f"`clusters` has no cluster for {len(absent)} items (e.g. {absent[0]!r}); "
                    "map every item id to a cluster id.")
            cl_ids = np.asarray([clusters[i] for i in item_ids], dtype=object)
        return agreement_from_table(table, coefficients, weights, level, method, cl,
                                    n_resamples, seq, cl_ids, population_size)

    def __repr__(self) -> str:
        return (f"AgreementAccumulator(n_items={self.n_items}, n_raters={self.n_raters}, "
                f"n_ratings={self.n_ratings})")


def _id_array(index: _IdIndex):
    """An index's ids in code order (an int64 array in integer mode)."""
    return index._by_code if index._dict is None else index.ids()
