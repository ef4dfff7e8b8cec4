"""Streaming Cohen's kappa: a confusion matrix that grows batch by batch.

The whole state of :class:`CohenKappa` is one K x K matrix and its class
labels, so two accumulators built on disjoint parts of the data merge by
adding their matrices (after aligning their label sets). That makes the
accumulator the reduce step of any map-reduce engine: Dask (see
:mod:`fastkappa.dask`), Spark's ``mapPartitions``, Ray, ``multiprocessing``,
or a training loop that scores one mini-batch at a time.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import _display
from ._core import weights as _weights
from ._core.columns import CodesColumn, as_column, materialize
from ._core.config import MAX_CLASSES
from ._core.encode import check_labels, encode_pair
from ._core.encoding import NoClassLeftError, OutsideClassesError
from ._core.options import (
    check_ignore_undeclared,
    check_marker_kind,
    check_replace_undefined_by,
    check_row_keywords,
)
from ._core.rows import frequency_rows
from ._core.shapes import flatten_labels
from .bootstrap import kappa_ci_from_confusion

__all__ = ["CohenKappa"]


def _score_columns(y_pred, thresholds) -> int | None:
    """K when ``y_pred`` holds scores of K classes ((n, K), or cut by ``thresholds``
    into K), else None (labels)."""
    if thresholds is not None:
        return len(np.atleast_1d(thresholds)) + 1
    shape = getattr(y_pred, "shape", None)  # arrays, tensors, DataFrames
    if shape is None and isinstance(y_pred, (list, tuple)) and len(y_pred) and isinstance(
            y_pred[0], (list, tuple, np.ndarray)):
        shape = np.shape(y_pred)
    if shape is not None and len(shape) == 2 and shape[1] > 1:
        return int(shape[1])
    return None


def _declared_scales(y_true, y_pred, thresholds) -> list[list]:
    """The scales a batch declares: the categories of each side that is an
    ordered categorical of strings, or of numbers in another order than their
    values (``[3, 1, 2, 7]``: learned numbers would be sorted), and the labels
    of fitted cut points (:class:`~fastkappa.Thresholds`), as one call reads
    them.  Numbers in value order declare nothing: a later batch may still
    bring a class they did not list."""
    from ._threshold_cuts import fitted_labels

    scales = []
    for x, name in ((y_true, "y_true"), (y_pred, "y_pred")):
        if thresholds is not None and name == "y_pred":
            continue  # scores, cut by the thresholds
        col = as_column(x, name)
        if isinstance(col, CodesColumn) and col.ordered:
            cats = list(col.categories)
            if col.kind == "str" or cats != sorted(cats):
                scales.append(cats)
    cut_labels = fitted_labels(thresholds)
    if cut_labels is not None:
        scales.append(np.asarray(cut_labels).tolist())
    return scales


def _kind_of(classes: np.ndarray) -> str:
    return "str" if classes.dtype == object else "num"


def _same_weights(a, b) -> bool:
    if isinstance(a, str) or a is None or isinstance(b, str) or b is None:
        return (isinstance(a, str) or a is None) and (isinstance(b, str) or b is None) and (
            a == b)
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.array_equal(a, b))


def _union(a: np.ndarray, b: np.ndarray, kind: str) -> np.ndarray:
    """Sorted union of two label sets of one kind."""
    if kind == "str":
        return np.asarray(sorted(set(a.tolist()) | set(b.tolist())), dtype=object)
    out = np.union1d(a, b)
    if out.dtype.kind == "f" and np.array_equal(out, np.round(out)) and (
            out.size == 0 or np.abs(out).max() < 2**53):
        out = out.astype(np.int64)
    return out


def _positions(sub: np.ndarray, full: np.ndarray) -> np.ndarray:
    """Index of each label of ``sub`` in ``full`` (every label must be there)."""
    index = {v: i for i, v in enumerate(full.tolist())}
    return np.fromiter((index[v] for v in sub.tolist()), dtype=np.intp, count=len(sub))


class CohenKappa:
    """Cohen's kappa accumulated over batches, in constant memory.

    The state is the K x K confusion matrix (int64 counts, or float64 sums
    when any batch carries ``sample_weight``), so a stream of any length
    costs K * K numbers and every batch goes through the same validation and
    counting kernels as :func:`fastkappa.cohen_kappa`.

    Parameters
    ----------
    n_classes : int, optional
        Classes are ``0..n_classes-1`` and fixed: a value outside them is a
        ``ValueError``.
    labels : array_like, optional
        The classes in scale order, fixed. Pass ``labels`` or ``n_classes``,
        not both.
    weights : None, 'linear', 'quadratic' or array_like of shape (K, K)
        Disagreement weights by class index. A custom matrix needs the
        classes declared; weighted kappa on strings needs ``labels=``, or
        a first batch that is an ordered Categorical: its categories then
        declare the classes, as in one call (until :meth:`reset`).

    Notes
    -----
    With neither ``n_classes`` nor ``labels``, the accumulator *learns* the
    classes: each batch adds the labels it holds (numbers or strings, not a
    mix) and the matrix is re-indexed so that the classes stay sorted. The
    result then equals :func:`fastkappa.cohen_kappa` on all the data with
    ``labels=None``; as there, a grade that never occurs changes the
    weighted scale, so declare the classes for weighted kappa when you can.

    :meth:`merge` aligns the label sets of two accumulators and adds their
    matrices; it is associative and commutative, which is what a reduce
    step needs. A Spark job, for example, can score each partition with
    ``mapPartitions`` and combine the pickled accumulators::

        def score(rows):
            acc = CohenKappa(n_classes=5, weights="quadratic")
            for batch in batches_of(rows):         # lists or arrays of labels
                acc.update(batch.y_true, batch.y_pred)
            yield acc

        total = rdd.mapPartitions(score).reduce(lambda a, b: a + b)
        total.compute(), total.ci(seed=0)

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales.
       Educational and Psychological Measurement, 20(1), 37-46.
       https://doi.org/10.1177/001316446002000104
    .. [2] Cohen, J. (1968). Weighted kappa: Nominal scale agreement provision for
       scaled disagreement or partial credit. Psychological Bulletin, 70(4),
       213-220. https://doi.org/10.1037/h0026256

    Examples
    --------
    >>> import fastkappa as fk
    >>> acc = fk.CohenKappa(weights="quadratic", n_classes=3)
    >>> acc.update([0, 1, 2], [0, 2, 2]).update([1, 1], [1, 0])
    CohenKappa(labels=[0, 1, 2], weights='quadratic', n_rows=5)
    >>> round(acc.compute(), 4)
    0.6667
    >>> round(fk.cohen_kappa([0, 1, 2, 1, 1], [0, 2, 2, 1, 0], weights="quadratic"), 4)
    0.6667
    >>> a = fk.CohenKappa().update(["cat", "dog"], ["cat", "cat"])
    >>> b = fk.CohenKappa().update(["bird"], ["bird"])
    >>> (a + b).labels
    array(['bird', 'cat', 'dog'], dtype=object)
    """

    def __init__(
        self,
        *,
        n_classes: int | None = None,
        labels: ArrayLike | None = None,
        weights: str | ArrayLike | None = None,
    ) -> None:
        declared, kind = check_labels(labels, n_classes)
        named = _weights.is_named(weights)  # raises for unknown strings
        if declared is None and not named:
            raise ValueError(
                "a custom `weights` matrix needs the classes declared up front: pass "
                "`n_classes=` or `labels=` so the matrix has a fixed (K, K) shape.")
        if declared is not None:
            _weights.weight_matrix(len(declared), weights)  # validates a custom matrix
        self._fixed = declared is not None
        self._scale_from_data = False  # the classes an ordered Categorical declared
        self._n_classes_arg = n_classes
        self._weights_spec = (_weights.canonical(weights) if named
                              else np.asarray(weights, dtype=np.float64))
        self._kind = kind
        if declared is None:
            declared = np.empty(0, dtype=np.int64)
        self._labels = declared
        self._confusion = np.zeros((len(declared), len(declared)), dtype=np.int64)
        self._n_rows = 0

    # ------------------------------------------------------------------ state
    @property
    def labels(self) -> np.ndarray:
        """The classes in index order (declared, or learned so far)."""
        return self._labels.copy()

    @property
    def confusion(self) -> np.ndarray:
        """(K, K) confusion matrix so far: int64 counts, float64 when weighted."""
        return self._confusion.copy()

    @property
    def n_rows(self) -> int:
        """Number of rows added so far (unweighted)."""
        return self._n_rows

    @property
    def weights(self):
        """The ``weights`` the accumulator scores with."""
        return self._weights_spec

    @property
    def weighted(self) -> bool:
        """True once any batch carried ``sample_weight`` (the matrix is float64)."""
        return self._confusion.dtype.kind == "f"

    def __repr__(self) -> str:
        shown = self._labels.tolist()
        if len(shown) > 10:
            shown = [*shown[:10], "..."]
        w = self._weights_spec
        w_repr = repr(w) if w is None or isinstance(w, str) else "<matrix>"
        return f"CohenKappa(labels={shown}, weights={w_repr}, n_rows={self._n_rows})"

    # ------------------------------------------------------------------ display
    #: above this many classes ``str`` and ``_repr_html_`` leave the matrix out
    _MAX_SHOWN_CLASSES = 20

    def _summary(self) -> tuple[str, float | None]:
        """One line on what the accumulator holds, and its kappa (None: no rows yet).

        Computed without warnings: display never warns or raises.
        """
        w = self._weights_spec
        what = _display.kappa_name(w)
        k = len(self._labels)
        rows = f"{self._n_rows:,} row{'' if self._n_rows == 1 else 's'}"
        if self.weighted:
            rows += f" (weighted: {float(self._confusion.sum()):,.6g})"
        classes = (f"{k} class{'' if k == 1 else 'es'}" if k or self._fixed
                   else "classes learned from the data")
        if self._n_rows == 0 or not self._confusion.sum() > 0:
            return f"CohenKappa: no rows yet; {what}, {classes}", None
        observed, expected = _weights.kappa_terms(self._confusion, self._weight_matrix())
        if expected > 0:
            kappa = float(1.0 - observed / expected)
            shown = _display.number(kappa, 4)
        else:
            kappa, shown = float("nan"), "nan (undefined: zero expected disagreement)"
        return f"CohenKappa: {what} = {shown} on {rows}, {classes}", kappa

    def _matrix_rows(self) -> list[list[str]] | None:
        """The confusion matrix as text rows (first row: the y_pred classes), or None."""
        k = len(self._labels)
        if k == 0 or k > self._MAX_SHOWN_CLASSES:
            return None
        names = [str(v) for v in self._labels.tolist()]
        cells = [[f"{v:,}" if isinstance(v, int) else f"{v:,.6g}" for v in row]
                 for row in self._confusion.tolist()]
        return [["", *names]] + [[name, *row] for name, row in zip(names, cells, strict=True)]

    def __str__(self) -> str:
        line, _ = self._summary()
        rows = self._matrix_rows()
        if rows is None:
            k = len(self._labels)
            return line + (f"\n(the {k} x {k} confusion matrix is not shown)" if k else "")
        widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
        table = ["  ".join(c.ljust(w) if j == 0 else c.rjust(w)
                           for j, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
                 for r in rows]
        return "\n".join([line, "confusion matrix (rows: y_true, columns: y_pred):", *table])

    def _repr_html_(self) -> str:
        import html

        line, _ = self._summary()
        out = f"<p>{html.escape(line)}</p>"
        rows = self._matrix_rows()
        if rows is None:
            k = len(self._labels)
            return out + (f"<p>(the {k} &times; {k} confusion matrix is not shown)</p>"
                          if k else "")
        head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
        body = "".join(
            f"<tr><th>{html.escape(r[0])}</th>"
            + "".join(f"<td style='text-align:right'>{html.escape(c)}</td>" for c in r[1:])
            + "</tr>" for r in rows[1:])
        return (out + "<table><caption>confusion matrix (rows: y_true, columns: y_pred)"
                f"</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")

    # ------------------------------------------------------------------ updates
    def update(
        self,
        y_true: ArrayLike,
        y_pred: ArrayLike,
        sample_weight: ArrayLike | None = None,
        ignore_index: Any = None,
        nan_policy: str = "raise",
        thresholds: ArrayLike | None = None,
        frequency_weight: ArrayLike | None = None,
    ) -> CohenKappa:
        """Add a batch of label pairs.

        Each batch is validated like :func:`fastkappa.cohen_kappa` (missing
        values, values outside declared classes, mixed kinds raise
        ``ValueError``); an empty batch is a no-op. Iterators (generators)
        are read once. Learned classes obey the same limit as one batch
        (``MAX_CLASSES``): a batch that would take the accumulator past it is
        rejected and leaves it unchanged.

        Parameters
        ----------
        y_true, y_pred : array_like of shape (n,)
            Labels of the two raters. ``y_pred`` may be (n, K) probabilities
            (or 1-D scores with ``thresholds``): column i is the i-th class.
            Declare the classes (``n_classes=`` or ``labels=``) for a stream of
            scores. Undeclared, column i is the i-th of the K labels learned
            so far once there are K of them (a ``y_true`` label outside them
            is then a ``ValueError``); before that, the i-th sorted class of
            the batch's ``y_true``, which must hold K classes. (N, ...) labels
            are flattened and (N, C, ...) scores argmaxed over axis 1
            (torchmetrics' shapes).
        sample_weight : array_like of shape (n,), optional
            Non-negative row weights; the matrix becomes float64 from then on.
            Each row stays one sampled unit: counts of identical rows belong
            in ``frequency_weight``.
        ignore_index : scalar, optional
            Rows where either side equals this value are dropped; not one of
            the declared classes (a ``ValueError``).
        nan_policy : {'raise', 'omit'}, default 'raise'
            What to do with rows holding NaN/None on either side.
        thresholds : array_like, optional
            Increasing cut points that turn 1-D continuous ``y_pred`` scores
            into class indices (see :func:`fastkappa.cohen_kappa`).
        frequency_weight : array_like of shape (n,), optional
            Whole-number count of each row: a row with count c adds c
            identical rows (0 adds none); the matrix stays int64 counts.
            Not together with ``sample_weight``.

        Returns
        -------
        CohenKappa
            ``self``, so updates can be chained.

        Examples
        --------
        >>> import fastkappa as fk
        >>> fk.CohenKappa(n_classes=2).update([0, 1, 1], [0, 1, 0]).confusion
        array([[1, 0],
               [1, 1]])
        """
        # read iterators once: a batch may be encoded twice (known labels, then learning)
        y_true, y_pred, sample_weight, frequency_weight = (
            materialize(v) for v in (y_true, y_pred, sample_weight, frequency_weight))
        y_true, y_pred, sample_weight, frequency_weight = flatten_labels(
            y_true, y_pred, sample_weight=sample_weight, frequency_weight=frequency_weight)
        frequency_weight, rows = frequency_rows(
            frequency_weight, sample_weight, {"y_true": y_true, "y_pred": y_pred},
            allow_zero=True)
        y_true, y_pred = rows["y_true"], rows["y_pred"]
        if (_is_empty(y_true) and _is_empty(y_pred)) or (
                frequency_weight is not None and len(frequency_weight) == 0):
            # no rows (or every row counted 0 times): nothing to add, but the
            # keywords are checked as for any batch
            _, _, ignore = check_row_keywords(
                0, sample_weight=sample_weight, ignore_index=ignore_index,
                nan_policy=nan_policy, thresholds=thresholds, stream=True)
            if self._fixed:  # the declared classes, as a batch with rows checks them
                check_ignore_undeclared(ignore, self._labels)
                check_marker_kind("ignore_index", ignore, self._kind, "labels",
                                  "drop no row")
            return self
        inputs = {"sample_weight": sample_weight, "frequency_weight": frequency_weight,
                  "ignore_index": ignore_index,
                  "nan_policy": nan_policy, "thresholds": thresholds,
                  "weights": self._weights_spec, "stream": True}
        weighted = not _weights.is_unweighted(self._weights_spec)
        fresh = not self._fixed and not len(self._labels)
        from_data = getattr(self, "_scale_from_data", False)
        scales = (_declared_scales(y_true, y_pred, thresholds)
                  if weighted and (fresh or from_data) else [])
        scale = scales[0] if scales else None
        for other in scales if self._fixed else []:
            if other != self._labels.tolist():
                raise ValueError(
                    f"this batch declares the classes {other} (an ordered categorical, or "
                    f"fitted cut points), but the stream's classes are "
                    f"{self._labels.tolist()} (from its first batch); every batch must declare "
                    "the same classes in the same order.")
        if scale is not None and not self._fixed:
            # weighted, nothing learned yet: an ordered Categorical (or fitted cut
            # points) declares the classes, as in one call, and the accumulator keeps
            # them declared
            enc = encode_pair(y_true, y_pred, **inputs)
            batch = enc.confusion()
            self._fixed = self._scale_from_data = True
            self._labels = np.asarray(enc.classes)
            self._kind = _kind_of(self._labels)
            self._confusion = np.zeros(batch.shape, dtype=np.int64)
            self._add(batch, None)
        elif self._fixed:
            kw: dict[str, Any] = ({"n_classes": self._n_classes_arg}
                                  if self._n_classes_arg is not None
                                  else {"labels": self._labels})
            enc = encode_pair(y_true, y_pred, **inputs, **kw)
            batch = enc.confusion()
            self._add(batch, None)
        else:
            enc = None
            k_cols = _score_columns(y_pred, thresholds)
            if k_cols is not None and len(self._labels) == k_cols:
                # the K columns name the K labels learned so far: another label in
                # y_true is an error, as in one call (never a shift of the columns)
                try:
                    enc = encode_pair(y_true, y_pred, labels=self._labels, **inputs)
                    enc.confusion()
                except OutsideClassesError as e:
                    raise ValueError(
                        f"the scores' {k_cols} columns name the {k_cols} labels learned so "
                        f"far {self._labels.tolist()[:20]}: {e}") from None
            elif len(self._labels) and (self._kind == "num"
                                        or _weights.is_unweighted(self._weights_spec)):
                # most batches hold no new label: try the labels learned so far
                # (a lookup table, no pass to find the value range); any error,
                # a new label included, sends the batch down the learning path
                try:
                    enc = encode_pair(y_true, y_pred, labels=self._labels, **inputs)
                    enc.confusion()
                except ValueError:
                    enc = None
            if enc is not None:
                self._add(enc.confusion(), None)
                self._n_rows += int(enc.counts().sum())
                return self
            try:
                enc = encode_pair(y_true, y_pred, **inputs)
            except NoClassLeftError:
                return self  # every row missing (omitted) or ignored: no rows, as in torchmetrics
            classes = np.asarray(enc.classes)
            kind = _kind_of(classes)
            if kind == "str" and not _weights.is_unweighted(self._weights_spec):
                raise ValueError(
                    "weighted kappa needs ordered classes, but the accumulator learns string "
                    "labels in alphabetical order (which would give a meaningless number). "
                    "Declare the scale up front: CohenKappa(labels=[...], weights=...).")
            self._check_kind(kind, "the batch")
            self._add(enc.confusion(), classes)
        self._n_rows += int(enc.counts().sum())
        return self

    def _check_kind(self, kind: str, what: str) -> None:
        if self._kind is not None and len(self._labels) and kind != self._kind:
            have = "strings" if self._kind == "str" else "numbers"
            got = "strings" if kind == "str" else "numbers"
            raise ValueError(
                f"the accumulator holds {have} as labels but {what} holds {got}; labels "
                "must be of one kind throughout the stream.")

    def _add(self, batch: np.ndarray, classes: np.ndarray | None) -> None:
        """Add a (k, k) matrix whose rows/columns are ``classes`` (None: ours)."""
        if batch.dtype.kind == "f" and self._confusion.dtype.kind != "f":
            self._confusion = self._confusion.astype(np.float64)
        if classes is None:
            self._confusion += batch
            return
        kind = _kind_of(classes)
        if len(self._labels) == 0:
            self._kind = kind
            new = classes.copy()
        else:
            new = _union(self._labels, classes, kind)
        if len(new) > MAX_CLASSES:
            raise ValueError(
                f"this batch would take the accumulator to {len(new)} classes, more than "
                f"the {MAX_CLASSES} a confusion matrix supports here (the same limit as "
                "for one batch); are these really class labels? The batch was not added.")
        if len(new) != len(self._labels) or not np.array_equal(new, self._labels):
            pos = _positions(self._labels, new)
            grown = np.zeros((len(new), len(new)), dtype=self._confusion.dtype)
            grown[np.ix_(pos, pos)] = self._confusion
            self._confusion = grown
            self._labels = new
        pos = _positions(classes, self._labels)
        self._confusion[np.ix_(pos, pos)] += batch

    # ------------------------------------------------------------------ merging
    def merge(self, other: CohenKappa) -> CohenKappa:
        """Add another accumulator's rows to this one, in place.

        The label sets are aligned: two accumulators that learn their labels
        end with the sorted union; a declared label set stays as declared,
        and the other side's labels must belong to it. Both must use the same
        ``weights``.

        Returns
        -------
        CohenKappa
            ``self``.

        Examples
        --------
        >>> import fastkappa as fk
        >>> a = fk.CohenKappa().update([0, 1], [0, 1])
        >>> b = fk.CohenKappa().update([2, 2], [2, 1])
        >>> a.merge(b).confusion
        array([[1, 0, 0],
               [0, 1, 0],
               [0, 1, 1]])
        """
        if not isinstance(other, CohenKappa):
            raise TypeError(f"can only merge a CohenKappa, not {type(other).__name__}.")
        if not _same_weights(self._weights_spec, other._weights_spec):
            raise ValueError(
                "cannot merge accumulators with different `weights` "
                f"({_describe(self._weights_spec)} and {_describe(other._weights_spec)}).")
        if other is self:
            other = copy.deepcopy(other)
        if len(other._labels) == 0:  # an empty learning accumulator adds nothing
            return self
        other_kind = _kind_of(other._labels)
        if len(self._labels):
            self._check_kind(other_kind, "the other accumulator")
        if self._fixed and other._fixed:
            if len(self._labels) != len(other._labels) or not np.array_equal(
                    self._labels, other._labels):
                raise ValueError(
                    "cannot merge accumulators declared with different classes "
                    f"({self._labels.tolist()[:10]} and {other._labels.tolist()[:10]}).")
            self._add(other._confusion, None)
        elif self._fixed or other._fixed:
            fixed, learned = (self, other) if self._fixed else (other, self)
            have = set(fixed._labels.tolist())
            extra = [v for v in learned._labels.tolist() if v not in have]
            if extra:
                raise ValueError(
                    f"cannot merge: labels {extra[:5]} are outside the declared classes "
                    f"{fixed._labels.tolist()[:10]}.")
            if fixed is other:
                mine, my_labels = self._confusion, self._labels
                self._adopt_declaration(other)
                dtype = np.result_type(mine.dtype, other._confusion.dtype)
                self._confusion = other._confusion.astype(dtype, copy=True)
                if len(my_labels):
                    self._add_aligned(mine, my_labels)
            else:
                self._add_aligned(other._confusion, other._labels)
        else:
            self._add(other._confusion, other._labels)
        self._n_rows += other._n_rows
        return self

    def _adopt_declaration(self, other: CohenKappa) -> None:
        self._fixed = True
        self._scale_from_data = getattr(other, "_scale_from_data", False)
        self._n_classes_arg = other._n_classes_arg
        self._labels = other._labels.copy()
        self._kind = other._kind
        self._confusion = np.zeros((len(self._labels),) * 2, dtype=self._confusion.dtype)

    def _add_aligned(self, matrix: np.ndarray, classes: np.ndarray) -> None:
        if matrix.dtype.kind == "f" and self._confusion.dtype.kind != "f":
            self._confusion = self._confusion.astype(np.float64)
        pos = _positions(classes, self._labels)
        self._confusion[np.ix_(pos, pos)] += matrix

    def __copy__(self) -> CohenKappa:
        # a shallow copy would share the confusion matrix, and the next update
        # of either would count in both
        return copy.deepcopy(self)

    def __add__(self, other: CohenKappa) -> CohenKappa:
        if not isinstance(other, CohenKappa):
            return NotImplemented
        return copy.deepcopy(self).merge(other)

    def __radd__(self, other) -> CohenKappa:
        # lets sum([a, b, c]) start from 0
        if isinstance(other, int) and other == 0:
            return copy.deepcopy(self)
        return NotImplemented

    def reset(self) -> CohenKappa:
        """Forget every row (declared classes stay; learned ones, and those an
        ordered Categorical declared, are dropped).

        Examples
        --------
        >>> import fastkappa as fk
        >>> fk.CohenKappa(n_classes=2).update([0, 1], [1, 1]).reset().n_rows
        0
        """
        if not self._fixed or getattr(self, "_scale_from_data", False):
            self._fixed = self._scale_from_data = False
            self._labels = np.empty(0, dtype=np.int64)
            self._kind = None
        k = len(self._labels)
        self._confusion = np.zeros((k, k), dtype=np.int64)
        self._n_rows = 0
        return self

    def aligned(self, labels: ArrayLike) -> np.ndarray:
        """The confusion matrix re-indexed onto ``labels`` (a superset of ours).

        Examples
        --------
        >>> import fastkappa as fk
        >>> fk.CohenKappa().update([1, 2], [2, 2]).aligned([0, 1, 2])
        array([[0, 0, 0],
               [0, 0, 1],
               [0, 0, 1]])
        """
        labels = np.asarray(labels, dtype=object if self._kind == "str" else None)
        have = set(labels.tolist())
        extra = [v for v in self._labels.tolist() if v not in have]
        if extra:
            raise ValueError(f"labels {extra[:5]} of the accumulator are not in `labels`.")
        out = np.zeros((len(labels), len(labels)), dtype=self._confusion.dtype)
        pos = _positions(self._labels, labels)
        out[np.ix_(pos, pos)] = self._confusion
        return out

    # ------------------------------------------------------------------ results
    def _weight_matrix(self) -> np.ndarray:
        return _weights.weight_matrix(len(self._labels), self._weights_spec)

    def _check_nonempty(self) -> None:
        if self._n_rows == 0 or not self._confusion.sum() > 0:
            raise ValueError(
                "the accumulator holds no rows (or only zero-weight rows); call update() "
                "with data first.")

    def compute(self, *, replace_undefined_by: float = np.nan) -> float:
        """Kappa of every row added so far.

        Parameters
        ----------
        replace_undefined_by : float, default nan
            Returned, with an :class:`~fastkappa.UndefinedKappaWarning`, when
            kappa is undefined.

        Returns
        -------
        float

        Examples
        --------
        >>> import fastkappa as fk
        >>> fk.CohenKappa().update([0, 1, 1, 0], [0, 1, 0, 0]).compute()
        0.5
        """
        replace_undefined_by = check_replace_undefined_by(replace_undefined_by)
        self._check_nonempty()
        terms = _weights.kappa_terms(self._confusion, self._weight_matrix())
        return _weights.finish_kappa(*terms, replace_undefined_by)

    def ci(
        self,
        *,
        method: str = "bca",
        confidence_level: float = 0.95,
        n_resamples: int = 10_000,
        seed: Any = None,
    ):
        """Confidence interval for kappa, assuming independent rows.

        Resampling N iid rows is the same as a multinomial draw from the
        accumulated matrix, so the interval needs no rows (see
        :func:`fastkappa.kappa_ci_from_confusion`). Rows grouped in clusters
        (two eyes of one patient...) need :func:`fastkappa.kappa_ci` with
        ``clusters=`` on the rows instead.

        Parameters
        ----------
        method : {"bca", "percentile", "basic", "asymptotic"}, default "bca"
            Interval method, as in :func:`fastkappa.kappa_ci`.
        confidence_level : float, default 0.95
            Coverage of the interval.
        n_resamples : int, default 10_000
            Bootstrap replicates (ignored by ``"asymptotic"``).
        seed : int, SeedSequence, Generator or None, default None
            Seeds the bootstrap; None draws a seed and records it in the result.

        Returns
        -------
        KappaCI

        Raises
        ------
        ValueError
            If any batch carried ``sample_weight``: a weighted interval
            resamples the rows with their weights, which the matrix no longer
            holds.

        References
        ----------
        .. [1] Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969). Large sample
           standard errors of kappa and weighted kappa. Psychological Bulletin,
           72(5), 323-327. https://doi.org/10.1037/h0028106
        .. [2] Efron, B. (1987). Better bootstrap confidence intervals. Journal of
           the American Statistical Association, 82(397), 171-185.
           https://doi.org/10.1080/01621459.1987.10478410

        Examples
        --------
        >>> import fastkappa as fk
        >>> acc = fk.CohenKappa(n_classes=3).update([0, 1, 2, 2, 1, 0], [0, 1, 2, 1, 1, 0])
        >>> res = acc.ci(method="asymptotic")
        >>> round(res.estimate, 4)
        0.75
        """
        if self.weighted:
            raise ValueError(
                "this accumulator received `sample_weight`, and a weighted interval "
                "resamples the rows with their weights, which the accumulated matrix no "
                "longer holds; call fastkappa.kappa_ci(y_true, y_pred, sample_weight=...) "
                "on the rows instead.")
        self._check_nonempty()
        return kappa_ci_from_confusion(
            self._confusion, weights=self._weights_spec, method=method,
            confidence_level=confidence_level, n_resamples=n_resamples, seed=seed)


def _describe(w) -> str:
    return repr(w) if w is None or isinstance(w, str) else "a custom matrix"


def _is_empty(x) -> bool:
    try:
        return len(x) == 0
    except TypeError:
        return False
