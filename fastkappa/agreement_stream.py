"""Streaming agreement among many raters: long-format chunks in any order.

:class:`AgreementAccumulator` keeps the items x raters table of class codes
(``-1`` for a missing rating), growing it as new item and rater ids arrive,
so memory is one table entry per (item, rater) pair seen, not one per input
row.  Chunks may come in any order and split an item's ratings anywhere;
``compute`` scores the table exactly as :func:`fastkappa.agreement` scores
the same ratings given at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._agreement_result import Agreement
from ._columns import CodesColumn, FloatColumn, IntColumn, MatrixColumn, as_column
from ._raters_input import RatingsTable, _factorize, _finish, _slots, check_order
from ._validation import _check_labels

__all__ = ["AgreementAccumulator"]


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
        self._items: dict = {}
        self._raters: dict = {}
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

    @staticmethod
    def _index(ids: list, table: dict) -> np.ndarray:
        out = np.empty(len(ids), dtype=np.int64)
        for j, v in enumerate(ids):
            code = table.get(v)
            if code is None:
                code = table[v] = len(table)
            out[j] = code
        return out

    # ----------------------------------------------------------------- update

    def _label_codes(self, label) -> np.ndarray:
        """Provisional class codes of a chunk's labels (-1 missing)."""
        col = as_column(label, "label")
        if isinstance(col, MatrixColumn):
            raise ValueError("`label` must be 1-D, one label per row.")
        if self._declared is not None:
            return _slots(col, self._declared, self._kind, self._missing, "label")
        if isinstance(col, FloatColumn):
            from ._validation import _float_codes

            col = _float_codes(col, "label")
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
        lut[1:] = np.where(keep, self._index(cats, self._values), -1)
        return lut[np.asarray(col.codes, dtype=np.int64) + 1]

    def update(self, item: ArrayLike, rater: ArrayLike, label: ArrayLike
               ) -> AgreementAccumulator:
        """Add one chunk of long-format ratings (one row per rating); returns self.

        A rater who rates an item twice (in this chunk or across chunks) is a
        ``ValueError``; the accumulator is left unchanged then.
        """
        item_codes, item_ids = _factorize(item, "item")
        rater_codes, rater_ids = _factorize(rater, "rater")
        snapshot = self._snapshot()
        try:
            slots = self._label_codes(label)
            if not len(item_codes) == len(rater_codes) == len(slots):
                raise ValueError(
                    f"`item`, `rater` and `label` must have the same length; got "
                    f"{len(item_codes)}, {len(rater_codes)} and {len(slots)}.")
            gi = self._index(item_ids, self._items)[item_codes]
            gr = self._index(rater_ids, self._raters)[rater_codes]
            self._write(gi, gr, slots)
        except ValueError:
            self._restore(snapshot)
            raise
        return self

    def _snapshot(self) -> tuple:
        return len(self._items), len(self._raters), len(self._values), self._kind

    def _restore(self, snapshot: tuple) -> None:
        """Forget ids and label values added since ``snapshot`` (a failed update)."""
        for table, n in zip((self._items, self._raters, self._values), snapshot[:3],
                            strict=True):
            for key in list(table)[n:]:
                del table[key]
        self._kind = snapshot[3]

    def _write(self, gi: np.ndarray, gr: np.ndarray, slots: np.ndarray) -> None:
        self._grow(len(self._items), len(self._raters))
        key = gi * max(len(self._raters), 1) + gr
        order = np.sort(key)
        dup_within = int(np.count_nonzero(order[1:] == order[:-1]))
        dup_before = int(np.count_nonzero(self._codes[gi, gr] >= 0))
        if dup_within or dup_before:
            raise ValueError(
                f"{dup_within + dup_before} (item, rater) pairs were rated more than once "
                "(within this chunk or across chunks); each rater rates an item at most "
                "once. Remove or aggregate the duplicate rows first.")
        self._codes[gi, gr] = slots
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
                remap = self._index(list(other._values), self._values).astype(np.int32)
                vals = remap[vals] if len(vals) else vals
            gi = self._index(list(other._items), self._items)[ii]
            gr = self._index(list(other._raters), self._raters)[gg]
            self._write(gi, gr, vals.astype(np.int32))
        except ValueError:
            self._restore(snapshot)
            raise
        return self

    def __add__(self, other: AgreementAccumulator) -> AgreementAccumulator:
        out = AgreementAccumulator.__new__(AgreementAccumulator)
        out.__dict__.update({k: (v.copy() if isinstance(v, (dict, np.ndarray)) else v)
                             for k, v in self.__dict__.items()})
        return out.merge(other)

    # ----------------------------------------------------------------- compute

    def table(self, *, weighted: bool = False) -> RatingsTable:
        """The encoded ratings (classes fixed), as the one-shot functions build them."""
        if not self._items:
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
        return _finish(codes, classes, ordered, list(self._raters))

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
        from .agreement import _any_weighted, _norm_weights, agreement_from_table
        from .bootstrap import _kappa_ci_iv

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
            absent = [i for i in self._items if i not in clusters]
            if absent:
                raise ValueError(
                    f"`clusters` has no cluster for {len(absent)} items (e.g. {absent[0]!r}); "
                    "map every item id to a cluster id.")
            cl_ids = np.asarray([clusters[i] for i in self._items], dtype=object)
        return agreement_from_table(table, coefficients, weights, level, method, cl,
                                    n_resamples, seq, cl_ids, population_size)

    def __repr__(self) -> str:
        return (f"AgreementAccumulator(n_items={self.n_items}, n_raters={self.n_raters}, "
                f"n_ratings={self.n_ratings})")
