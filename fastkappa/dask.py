"""Kappa on Dask collections: data bigger than one machine's memory.

Every function takes 1-D dask arrays or dask DataFrame columns (dask
Series) and runs one pass over the data: each partition is scored by a
:class:`fastkappa.CohenKappa` (the same validation and counting kernels as
:func:`fastkappa.cohen_kappa`), and the per-partition accumulators are
merged in a tree. A partition's result is its K x K confusion matrix, so a
worker holds one partition at a time and the client receives K * K
numbers per partition.

Import it explicitly (``import fastkappa.dask``); it needs
``pip install "fastkappa[dask]"`` (``pip install -e ".[dask]"`` from a clone).

Other map-reduce engines
------------------------
:meth:`fastkappa.CohenKappa.merge` is associative and commutative and the
accumulator pickles, so the same pattern serves any engine. With Spark::

    import fastkappa as fk

    def score(rows):                        # runs on the executors
        rows = list(rows)
        acc = fk.CohenKappa(n_classes=5, weights="quadratic")
        if rows:
            acc.update([r.y_true for r in rows], [r.y_pred for r in rows])
        yield acc

    acc = df.rdd.mapPartitions(score).reduce(lambda a, b: a + b)
    acc.compute()          # QWK of the whole table
    acc.ci(seed=0)         # iid bootstrap interval from the merged matrix

(``mapInPandas`` or ``mapInArrow`` with ``acc.update(batch["y_true"],
batch["y_pred"])`` avoids the per-row Python objects.) Ray, multiprocessing
and a training loop work the same way: update per shard, add the
accumulators.
"""

from __future__ import annotations

import copy
import functools
import re
import warnings
from typing import Any

import numpy as np

from ._core.caller import user_stacklevel
from ._install import install_hint

try:
    import dask
    import dask.array as da
except ImportError as _err:  # pragma: no cover - exercised only without dask
    raise ImportError(
        "fastkappa.dask needs dask and distributed; install them with: "
        f"{install_hint('dask')}") from _err

from ._core import weights as _weights
from ._core.columns import as_column
from ._core.encode import _prediction_indices, check_labels
from ._core.encoding import NoClassLeftError, NoRowsLeftError
from ._core.intervals import _kappa_ci_iv
from ._core.options import (
    check_frequency_weight,
    check_ignore_index,
    check_ignore_undeclared,
    check_nan_policy,
    check_one_row_weight,
    check_replace_undefined_by,
)
from ._core.rows import id_keys
from ._core.shapes import flatten_labels
from ._core.units import seed_record
from .bootstrap import kappa_ci as fk_kappa_ci
from .bootstrap import kappa_ci_from_confusion
from .exceptions import UndefinedKappaWarning
from .groups import KappaByGroup, _boolean_ids, _group_kappas, group_interval_iv
from .streaming import CohenKappa

__all__ = ["accumulate", "cohen_kappa", "confusion_matrix", "kappa_by_group", "kappa_ci"]

#: accumulators merged per reduce task
_FAN_IN = 16


# --------------------------------------------------------------------------- partitions


def _is_dask_frame_like(x) -> bool:
    return type(x).__module__.startswith("dask.dataframe") or (
        hasattr(x, "npartitions") and hasattr(x, "divisions"))


def _partitions(cols: dict[str, Any]) -> list:
    """One delayed object per partition, each a mapping ``name -> column piece``.

    ``None`` entries of ``cols`` are left out (``part.get(name)`` gives None).
    Columns of a dask DataFrame are first joined into one frame, so each
    partition is read once, all needed columns together, on one worker.
    """
    present = {k: v for k, v in cols.items() if v is not None}
    first_name, first = next(iter(present.items()))
    if isinstance(first, da.Array):
        arrays = {}
        for name, x in present.items():
            if _is_dask_frame_like(x):
                raise TypeError(
                    f"`{name}` is a dask DataFrame column but `{first_name}` is a dask "
                    "array; pass one kind of collection (e.g. df[col].to_dask_array("
                    "lengths=True)).")
            if not isinstance(x, da.Array):
                x = np.asarray(x)
                x = da.from_array(x, chunks=(first.chunks[0], *x.shape[1:]))
            if x.ndim == 2 and x.shape[1] == 1:
                x = x[:, 0]
            if x.ndim == 0:
                raise ValueError(f"`{name}` must be a dask array of rows; got a scalar.")
            if any(np.isnan(c) for c in x.chunks[0]) or any(
                    np.isnan(c) for c in first.chunks[0]):
                raise ValueError(
                    "dask arrays with unknown chunk sizes cannot be aligned; call "
                    "x.compute_chunk_sizes() first.")
            if x.shape[0] != first.shape[0]:
                raise ValueError(
                    f"`{first_name}` and `{name}` must have the same length; got "
                    f"{first.shape[0]} and {x.shape[0]}.")
            if x.chunks[0] != first.chunks[0]:
                x = x.rechunk({0: first.chunks[0]})
            if any(len(c) > 1 for c in x.chunks[1:]):
                # (N, ...) labels and (N, C, ...) scores: whole samples in each block,
                # flattened per partition as in memory (fastkappa._core.shapes)
                x = x.rechunk({axis: -1 for axis in range(1, x.ndim)})
            arrays[name] = x.to_delayed().ravel().tolist()
        n = len(arrays[first_name])
        return [dask.delayed(dict)(**{k: v[i] for k, v in arrays.items()}) for i in range(n)]
    if not _is_dask_frame_like(first):
        raise TypeError(
            "fastkappa.dask takes dask arrays or dask DataFrame columns; got "
            f"{type(first).__name__} (use fastkappa.cohen_kappa for in-memory data).")
    for name, x in list(present.items()):
        if not _is_dask_frame_like(x):
            raise TypeError(
                f"`{first_name}` is a dask DataFrame column but `{name}` is "
                f"{type(x).__name__}; pass columns of one dask DataFrame (or dask arrays "
                "only, e.g. df[col].to_dask_array(lengths=True)).")
        if getattr(x, "ndim", 1) == 2:  # a dask DataFrame: one column is that column
            if len(x.columns) != 1:
                raise ValueError(
                    f"`{name}` is a dask DataFrame with {len(x.columns)} columns; pass one "
                    "column (df[col]).")
            present[name] = x[x.columns[0]]
    first_name, first = next(iter(present.items()))
    for name, x in present.items():
        if not _is_dask_frame_like(x):
            raise TypeError(
                f"`{first_name}` is a dask DataFrame column but `{name}` is "
                f"{type(x).__name__}; pass columns of one dask DataFrame.")
        if x.npartitions != first.npartitions:
            raise ValueError(
                f"`{first_name}` and `{name}` have {first.npartitions} and "
                f"{x.npartitions} partitions; pass columns of the same DataFrame.")
        if first.known_divisions and x.known_divisions and tuple(x.divisions) != tuple(
                first.divisions):
            raise ValueError(
                f"`{first_name}` and `{name}` are partitioned differently; pass columns "
                "of the same DataFrame.")
    frame = first.rename(first_name).to_frame()
    for name, x in present.items():
        if name != first_name:
            frame = frame.assign(**{name: x.rename(name)})
    return list(frame.to_delayed())


def _values(part, name: str):
    """One column of a partition, or None (pandas Series are kept as they are)."""
    return part.get(name) if hasattr(part, "get") else None


#: a count of rows in a message ("2 rows hold ...", "7 (1 row)")
_ROW_COUNT = re.compile(r"\b\d[\d,]* rows?\b")


def _counted_in_one_partition(func):
    """``func`` (a task on one partition) with its errors saying that a count of
    rows they give is one partition's: the first partition that fails raises,
    and the others may hold more such rows."""

    @functools.wraps(func)
    def task(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except ValueError as e:
            text = str(e)
            if len(e.args) == 1 and _ROW_COUNT.search(text):
                e.args = (f"{text} (rows counted in one partition of the Dask collection; "
                          "others may hold more)",)
            raise

    return task


@_counted_in_one_partition
def _partition_accumulator(part, spec, inputs):
    acc = CohenKappa(**spec)
    acc.update(part["y_true"], part["y_pred"], sample_weight=_values(part, "sample_weight"),
               frequency_weight=_values(part, "frequency_weight"), **inputs)
    return acc


def _inputs(ignore_index, nan_policy, thresholds, labels, n_classes) -> dict:
    """The per-row input keywords, checked on the client before any task runs."""
    check_nan_policy(nan_policy)
    ignore_index = check_ignore_index(ignore_index)
    check_ignore_undeclared(ignore_index, check_labels(labels, n_classes)[0])
    return {"ignore_index": ignore_index, "nan_policy": nan_policy, "thresholds": thresholds}


def _merge_many(*accs):
    out = copy.deepcopy(accs[0])
    for a in accs[1:]:
        out.merge(a)
    return out


def _tree(tasks: list, merge) -> Any:
    """Reduce delayed tasks pairwise-ish (fan-in ``_FAN_IN``) into one delayed."""
    level = tasks
    while len(level) > 1:
        level = [dask.delayed(merge)(*level[i:i + _FAN_IN])
                 for i in range(0, len(level), _FAN_IN)]
    return level[0]


def _spec(weights, labels, n_classes) -> dict:
    spec = {"weights": _weights.canonical(weights)}
    if labels is not None:
        spec["labels"] = labels
    if n_classes is not None:
        spec["n_classes"] = n_classes
    CohenKappa(**spec)  # validates the options before any task runs
    return spec


def accumulate(y_true, y_pred, *, weights=None, labels=None, n_classes=None,
               sample_weight=None, ignore_index=None, nan_policy: str = "raise",
               thresholds=None, compute: bool = True, frequency_weight=None):
    """One pass over dask collections into a merged :class:`fastkappa.CohenKappa`.

    Each partition is scored into its own accumulator; the accumulators are
    merged in a tree (label sets aligned). The other functions of this
    module are built on it.

    Parameters
    ----------
    y_true, y_pred : dask.array.Array or dask.dataframe.Series
        Aligned collections (columns of one DataFrame, or arrays; arrays
        are rechunked to match ``y_true``). Arrays may be (N, ...) labels and
        (N, C, ...) scores, flattened as by :func:`fastkappa.cohen_kappa`;
        the C columns of scores name the classes ``y_true`` holds when none
        are declared, found by one extra pass over ``y_true``.
    weights, labels, n_classes
        As in :class:`fastkappa.CohenKappa`.
    sample_weight : dask collection, optional
        Row weights, aligned like the labels (each row one sampled unit).
    ignore_index, nan_policy, thresholds
        As in :func:`fastkappa.cohen_kappa`, applied to every partition.
    compute : bool, default True
        False returns the ``dask.delayed`` object instead.
    frequency_weight : dask collection, optional
        Whole-number row counts, aligned like the labels: a row with count c
        is c identical rows (the matrix stays int64). Not with
        ``sample_weight``.

    Returns
    -------
    CohenKappa

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import fastkappa.dask as fkd
    >>> t = da.from_array(np.array([0, 1, 2, 2]), chunks=2)
    >>> p = da.from_array(np.array([0, 2, 2, 2]), chunks=2)
    >>> acc = fkd.accumulate(t, p, weights="quadratic")
    >>> acc.confusion
    array([[1, 0, 0],
           [0, 0, 1],
           [0, 0, 2]])
    >>> round(acc.compute(), 4)
    0.8333
    """
    spec = _spec(weights, labels, n_classes)
    inputs = _inputs(ignore_index, nan_policy, thresholds, labels, n_classes)
    check_one_row_weight(sample_weight, frequency_weight)
    spec = _spec(weights, _scored_classes(y_true, y_pred, labels, n_classes, thresholds,
                                          inputs["ignore_index"], weights), n_classes)
    parts = _partitions({"y_true": y_true, "y_pred": y_pred, "sample_weight": sample_weight,
                         "frequency_weight": frequency_weight})
    tasks = [dask.delayed(_partition_accumulator)(part, spec, inputs) for part in parts]
    total = _tree(tasks, _merge_many)
    return total.compute() if compute else total


def confusion_matrix(y_true, y_pred, *, labels=None, n_classes=None, sample_weight=None,
                     ignore_index=None, nan_policy: str = "raise", thresholds=None,
                     frequency_weight=None):
    """Confusion matrix of dask collections, summed over partitions.

    Parameters
    ----------
    y_true, y_pred : dask.array.Array or dask.dataframe.Series
        Aligned collections, as for :func:`accumulate`.
    labels, n_classes, sample_weight, ignore_index, nan_policy, thresholds
        As in :func:`fastkappa.confusion_matrix`.
    frequency_weight : dask collection, optional
        Whole-number row counts (see :func:`accumulate`).

    Returns
    -------
    numpy.ndarray of shape (K, K)
        The same array as :func:`fastkappa.confusion_matrix` on the
        concatenated data (int64, float64 when weighted).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import fastkappa.dask as fkd
    >>> t = da.from_array(np.array([0, 1, 2, 2]), chunks=3)
    >>> fkd.confusion_matrix(t, t)
    array([[1, 0, 0],
           [0, 1, 0],
           [0, 0, 2]])
    """
    acc = accumulate(y_true, y_pred, labels=labels, n_classes=n_classes,
                     sample_weight=sample_weight, ignore_index=ignore_index,
                     nan_policy=nan_policy, thresholds=thresholds,
                     frequency_weight=frequency_weight)
    acc._check_nonempty()
    return acc.confusion


def cohen_kappa(y_true, y_pred, *, weights=None, labels=None, n_classes=None,
                sample_weight=None, ignore_index=None, nan_policy: str = "raise",
                thresholds=None, replace_undefined_by: float = np.nan,
                frequency_weight=None) -> float:
    """Cohen's kappa of dask collections, in one pass over the partitions.

    Parameters
    ----------
    y_true, y_pred : dask.array.Array or dask.dataframe.Series
        Aligned collections, as for :func:`accumulate`.
    weights, labels, n_classes, sample_weight, ignore_index, nan_policy, thresholds
        As in :func:`fastkappa.cohen_kappa`.
    replace_undefined_by : float, default nan
        Returned when kappa is undefined.
    frequency_weight : dask collection, optional
        Whole-number row counts (see :func:`accumulate`).

    Returns
    -------
    float
        The value :func:`fastkappa.cohen_kappa` gives on the concatenated data.

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
    >>> import dask.array as da, numpy as np
    >>> import fastkappa.dask as fkd
    >>> t = da.from_array(np.array([0, 1, 1, 0]), chunks=2)
    >>> p = da.from_array(np.array([0, 1, 0, 0]), chunks=2)
    >>> fkd.cohen_kappa(t, p)
    0.5
    """
    check_replace_undefined_by(replace_undefined_by)  # before the graph runs
    acc = accumulate(y_true, y_pred, weights=weights, labels=labels, n_classes=n_classes,
                     sample_weight=sample_weight, ignore_index=ignore_index,
                     nan_policy=nan_policy, thresholds=thresholds,
                     frequency_weight=frequency_weight)
    if acc.n_rows == 0:
        raise ValueError(
            "no row to score: every partition of `y_true` and `y_pred` is empty, or every "
            "row was dropped (missing values with nan_policy='omit', `ignore_index`).")
    return acc.compute(replace_undefined_by=replace_undefined_by)


# --------------------------------------------------------------------------- intervals


def _declared_scale(y_true, y_pred, labels, n_classes):
    """``labels``, or the categories of an ordered pandas Categorical on either side
    when neither ``labels`` nor ``n_classes`` is given: in memory such a column
    declares the classes (unused ones included, in their order), and the rows a
    partition sends lose their dtype."""
    if labels is not None or n_classes is not None:
        return labels
    scales = []
    for x in (y_true, y_pred):
        dtype = getattr(x, "dtype", None)
        cat = getattr(x, "cat", None)
        if getattr(dtype, "ordered", False) and cat is not None:
            scales.append(list(dtype.categories) if cat.known else _partition_scale(x))
    if len(scales) == 2 and scales[0] != scales[1]:
        raise ValueError(
            "`y_true` and `y_pred` are ordered categoricals with different categories; "
            "they must declare the same classes in the same order.")
    return scales[0] if scales else None


def _partition_classes(part, ignore_index):
    """The classes one partition's ``y_true`` holds (the in-memory rule,
    ``observed_values``), or None when its values are of no one kind."""
    from ._core.encode import column_kind, observed_values

    t, _ = flatten_labels(part["y_true"], part["y_pred"])
    col = as_column(_plain(t), "y_true")
    kind = column_kind(col)
    return np.empty(0) if kind is None else observed_values([col], ignore_index, kind)


def _union_classes(*parts):
    if any(p is None for p in parts):
        return None
    parts = [p for p in parts if len(p)]
    try:
        return np.unique(np.concatenate(parts)) if parts else np.empty(0)
    except TypeError:  # strings and numbers: the partitions name the error
        return None


def _scored_classes(y_true, y_pred, labels, n_classes, thresholds, ignore_index, weights):
    """``labels``, or the classes ``y_true`` holds over every partition when
    ``y_pred`` holds (N, K) scores and nothing declares the classes.

    In memory the K columns then name the sorted classes observed in
    ``y_true``; a partition sees only its own, so one extra pass over
    ``y_true`` finds them all (and a count other than K is the in-memory
    error).  Strings are left to the partitions when weighted (in memory
    their order is undeclared then, a refusal)."""
    if labels is not None or n_classes is not None or thresholds is not None:
        return labels
    ndim_true = len(getattr(y_true, "shape", (0,)))
    shape = getattr(y_pred, "shape", ())
    if not isinstance(y_pred, da.Array) or len(shape) != ndim_true + 1 or shape[1] <= 1:
        return labels
    if _declared_scale(y_true, y_pred, None, None) is not None:
        return labels  # an ordered Categorical declares them
    parts = _partitions({"y_true": y_true, "y_pred": y_pred})
    tasks = [dask.delayed(_partition_classes)(part, ignore_index) for part in parts]
    found = _tree(tasks, _union_classes).compute()
    if len(tasks) == 1 and found is not None:
        found = _union_classes(found)
    if found is None or not len(found) or (
            found.dtype == object and not _weights.is_unweighted(weights)):
        return labels
    k = int(shape[1])
    if len(found) != k:
        raise ValueError(
            f"`y_pred` has {k} columns but the sorted classes observed in `y_true` number "
            f"{len(found)}; class index i is the i-th class, so declare the classes with "
            "`labels=` or `n_classes=`.")
    return found.tolist()


def _categories(piece) -> list:
    return list(piece.dtype.categories)


def _partition_scale(x) -> list:
    """The categories of an ordered categorical dask column whose categories dask
    does not know (``dd.read_parquet``): read from its partitions, which must
    all declare the same ones, in the same order."""
    found = dask.compute(*[dask.delayed(_categories)(p) for p in x.to_delayed()])
    for other in found[1:]:
        if list(other) != list(found[0]):
            raise ValueError(
                f"the partitions of an ordered categorical declare different categories "
                f"({list(found[0])} and {list(other)}); pass `labels=` in scale order.")
    return list(found[0]) if found else []


@_counted_in_one_partition
def _partition_cells(part):
    """Distinct (cluster, y_true, y_pred, weight) rows of a partition and their counts
    (cluster and weight are 0 when absent; counts sum ``frequency_weight`` if given).
    (n, K) scores are sent as the class index of each row (their argmax, as in memory)."""
    import pandas as pd

    t, p, c, w, f = flatten_labels(part["y_true"], part["y_pred"],
                                   clusters=_values(part, "clusters"),
                                   sample_weight=_values(part, "sample_weight"),
                                   frequency_weight=_values(part, "frequency_weight"))
    t, p = _plain(t), _plain(p)
    if p.ndim == 2:
        p = _prediction_indices(as_column(p, "y_pred"), None, "y_pred")
    frame = pd.DataFrame({"c": np.zeros(len(t), np.int8) if c is None else _plain(c),
                          "t": t, "p": p,
                          "w": np.zeros(len(t), np.int8) if w is None else _plain(w)})
    if f is not None:
        frame["n"] = check_frequency_weight(_plain(f), len(t), allow_zero=True)
    groups = frame.groupby(["c", "t", "p", "w"], sort=False, dropna=False, observed=True)
    return groups.size() if f is None else groups["n"].sum()


def _plain(x):
    return x.to_numpy() if hasattr(x, "to_numpy") else np.asarray(x)


def _concat_cells(*parts):
    import pandas as pd

    both = pd.concat(parts)
    return both.groupby(level=[0, 1, 2, 3], sort=True, dropna=False).sum()


def kappa_ci(y_true, y_pred, *, weights=None, method: str = "bca",
             confidence_level: float = 0.95, n_resamples: int = 10_000, seed=None,
             clusters=None, labels=None, n_classes=None, sample_weight=None,
             ignore_index=None, nan_policy: str = "raise", thresholds=None,
             frequency_weight=None):
    """Kappa with a confidence interval on dask collections.

    Without ``clusters`` or ``sample_weight`` the rows are iid: the interval
    comes from the merged confusion matrix
    (:func:`fastkappa.kappa_ci_from_confusion`), exactly as on the
    concatenated data. With ``clusters`` or ``sample_weight`` (collections
    aligned with the labels), each partition sends its distinct
    (cluster, y_true, y_pred, weight) rows with their counts; the client
    rebuilds the rows from them (compact, O(rows) memory on the client) and
    calls :func:`fastkappa.kappa_ci`. The other keywords are those of
    :func:`fastkappa.kappa_ci`; with ``frequency_weight`` the counts of each
    distinct row are summed and passed on (the interval of the expanded rows).

    Parameters
    ----------
    y_true, y_pred : dask.array.Array or dask.dataframe.Series
        Aligned collections, as for :func:`accumulate`.
    weights, method, confidence_level, n_resamples, seed
        As in :func:`fastkappa.kappa_ci` (``method="bca"``, ``confidence_level=0.95``,
        ``n_resamples=10_000`` by default).
    clusters : dask collection, optional
        Cluster ids aligned with the labels; whole clusters are resampled.
    labels, n_classes, sample_weight, ignore_index, nan_policy, thresholds
        As in :func:`fastkappa.cohen_kappa`; ``sample_weight`` is a collection
        aligned with the labels.

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
    .. [3] Field, C. A., & Welsh, A. H. (2007). Bootstrapping clustered data.
       Journal of the Royal Statistical Society: Series B (Statistical
       Methodology), 69(3), 369-390.
       https://doi.org/10.1111/j.1467-9868.2007.00593.x

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import fastkappa.dask as fkd
    >>> t = da.from_array(np.array([0, 1, 2, 2, 1, 0]), chunks=3)
    >>> p = da.from_array(np.array([0, 1, 2, 1, 1, 0]), chunks=3)
    >>> round(fkd.kappa_ci(t, p, method="asymptotic").estimate, 4)
    0.75
    """
    inputs = _inputs(ignore_index, nan_policy, thresholds, labels, n_classes)
    check_one_row_weight(sample_weight, frequency_weight)
    if clusters is None and sample_weight is None:
        _kappa_ci_iv(method, confidence_level, n_resamples, seed)  # checked before any task
        acc = accumulate(y_true, y_pred, weights=weights, labels=labels, n_classes=n_classes,
                         frequency_weight=frequency_weight, **inputs)
        return acc.ci(method=method, confidence_level=confidence_level,
                      n_resamples=n_resamples, seed=seed)
    labels = _scored_classes(y_true, y_pred, _declared_scale(y_true, y_pred, labels, n_classes),
                             n_classes, thresholds, inputs["ignore_index"], weights)
    _spec(weights, labels, n_classes)
    parts = _partitions({"y_true": y_true, "y_pred": y_pred, "clusters": clusters,
                         "sample_weight": sample_weight, "frequency_weight": frequency_weight})
    tasks = [dask.delayed(_partition_cells)(part) for part in parts]
    cells = _tree(tasks, _concat_cells).compute()
    if len(tasks) == 1:
        cells = _concat_cells(cells)
    counts = cells.to_numpy()
    scores = len(getattr(y_pred, "shape", ())) == 2  # (n, K): rows sent as indices

    def predicted(p):
        if not scores:
            return p
        # the argmax as a (rows, K) one-hot score matrix: the in-memory rules of
        # (n, K) predictions (the K columns name the classes) then apply unchanged
        k = int(y_pred.shape[1])
        out = np.zeros((len(p), k), dtype=np.int8)
        out[np.arange(len(p)), p.astype(np.int64)] = 1
        return out

    if frequency_weight is not None:  # distinct rows with their summed counts
        c, t, p = (cells.index.get_level_values(i).to_numpy() for i in range(3))
        p = predicted(p)
        return fk_kappa_ci(t, p, weights=weights, method=method,
                           confidence_level=confidence_level, n_resamples=n_resamples,
                           seed=seed, clusters=c, labels=labels, n_classes=n_classes,
                           frequency_weight=counts, **inputs)
    c, t, p, w = (np.repeat(cells.index.get_level_values(i).to_numpy(), counts)
                  for i in range(4))
    p = predicted(p)
    return fk_kappa_ci(t, p, weights=weights, method=method,
                       confidence_level=confidence_level, n_resamples=n_resamples, seed=seed,
                       clusters=None if clusters is None else c, labels=labels,
                       n_classes=n_classes, sample_weight=None if sample_weight is None else w,
                       **inputs)


# --------------------------------------------------------------------------- groups


@_counted_in_one_partition
def _partition_groups(part, spec, inputs):
    """One partition's per-group tables, counted by the group kernel of
    :func:`fastkappa.kappa_by_group`: ``{"keys", "tables", "classes", "missing"}``,
    where ``classes`` is a :class:`fastkappa.CohenKappa` that learned the
    partition's classes (merged, it puts every table on one scale).  Rows with a
    missing group id are only counted here; the client applies ``nan_policy``."""
    from .groups import kappa_by_group as group_kernel
    from .groups import quiet_undefined

    t, p, w, f, g = flatten_labels(part["y_true"], part["y_pred"],
                                   sample_weight=_values(part, "sample_weight"),
                                   frequency_weight=_values(part, "frequency_weight"),
                                   groups=part["groups"])
    g = _plain(g)
    out = {"keys": [], "tables": None, "classes": CohenKappa(**spec), "missing": 0}
    if len(g) == 0:
        return out
    t, p = _plain(t), _plain(p)
    w = None if w is None else _plain(w)
    f = None if f is None else _plain(f)
    codes, keys = id_keys(g, len(g), "groups")
    if _boolean_ids(g):  # counted as 0/1, reported as False/True (as in memory)
        keys = np.asarray(keys).astype(bool)
    present = codes >= 0
    out["missing"] = int(len(codes) - present.sum())
    if not present.any():
        return out
    if out["missing"]:
        t, p, w, f = (None if x is None else x[present] for x in (t, p, w, f))
    with quiet_undefined():  # scored on the client
        try:
            res = group_kernel(t, p, keys[codes[present]], labels=spec.get("labels"),
                               n_classes=spec.get("n_classes"), sample_weight=w,
                               frequency_weight=f, **inputs)
        except (NoClassLeftError, NoRowsLeftError):
            # every row ignored or missing (omitted): the groups are still met, with
            # no rows (in memory such a group is listed with n = 0 and kappa NaN)
            out["keys"] = keys[np.unique(codes[present])].tolist()
            return out
    out["keys"] = res.groups.tolist()
    out["tables"] = np.asarray(res.confusion)
    out["classes"].update(res.classes, res.classes)
    out["labels"] = res.classes
    return out


def _merge_group_tables(*parts):
    """Merge partitions' group tables: the union of groups and of classes."""
    classes = functools.reduce(lambda a, b: a.merge(b), (x["classes"] for x in parts[1:]),
                               copy.deepcopy(parts[0]["classes"]))
    labels = classes.labels
    at = {v: i for i, v in enumerate(labels.tolist())}
    keys: dict = {}
    for x in parts:
        for key in x["keys"]:
            keys.setdefault(key, len(keys))
    used = [x for x in parts if x["tables"] is not None]
    dtype = np.result_type(*(x["tables"].dtype for x in used)) if used else np.int64
    k = len(labels)
    tables = np.zeros((len(keys), k, k), dtype=dtype)
    for x in used:
        rows = np.array([keys[key] for key in x["keys"]], dtype=np.int64)
        pos = np.array([at[v] for v in np.asarray(x["labels"]).tolist()], dtype=np.int64)
        tables[np.ix_(rows, pos, pos)] += x["tables"]  # groups are distinct in a part
    return {"keys": list(keys), "tables": tables, "classes": classes, "labels": labels,
            "missing": sum(x["missing"] for x in parts)}


def kappa_by_group(y_true, y_pred, groups, *, weights=None, method: str | None = None,
                   confidence_level: float = 0.95, n_resamples: int = 10_000, seed=None,
                   labels=None, n_classes=None, sample_weight=None, ignore_index=None,
                   nan_policy: str = "raise", thresholds=None,
                   replace_undefined_by: float = np.nan, ci: str | None = None,
                   frequency_weight=None):
    """Kappa per group on dask collections (see :func:`fastkappa.kappa_by_group`).

    One pass: each partition counts its rows of every group with the group
    kernel of :func:`fastkappa.kappa_by_group` (one K x K table per group);
    the tables are merged across partitions on the union of their classes and
    reduced as in memory, so count tables give exactly the in-memory result. ``method``
    adds an iid interval per group from its confusion matrix (not with
    ``sample_weight``, whose intervals need the rows); ``ci`` is its
    deprecated alias. Missing group ids follow ``nan_policy``.
    ``frequency_weight`` (whole-number row counts) keeps every group's table
    a count table, so its interval is that of the expanded rows.

    Parameters
    ----------
    y_true, y_pred, groups : dask.array.Array or dask.dataframe.Series
        Aligned collections: labels and the group id of each row.
    weights : {None, "linear", "quadratic"} or (K, K) array, default None
        As in :func:`fastkappa.cohen_kappa`.
    method : {None, "bca", "percentile", "basic", "asymptotic"}, default None
        None: no interval; otherwise an iid interval per group.
    confidence_level, n_resamples, seed
        As in :func:`fastkappa.kappa_by_group`.
    labels, n_classes, sample_weight, ignore_index, nan_policy, thresholds
        As in :func:`fastkappa.cohen_kappa`.
    replace_undefined_by : float, default nan
        The kappa reported for a group whose kappa is undefined.
    ci : str, optional
        Deprecated alias of ``method``.

    Returns
    -------
    KappaByGroup

    References
    ----------
    .. [1] Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969). Large sample standard
       errors of kappa and weighted kappa. Psychological Bulletin, 72(5),
       323-327. https://doi.org/10.1037/h0028106
    .. [2] Efron, B. (1987). Better bootstrap confidence intervals. Journal of the
       American Statistical Association, 82(397), 171-185.
       https://doi.org/10.1080/01621459.1987.10478410
    .. [3] Field, C. A., & Welsh, A. H. (2007). Bootstrapping clustered data.
       Journal of the Royal Statistical Society: Series B (Statistical
       Methodology), 69(3), 369-390.
       https://doi.org/10.1111/j.1467-9868.2007.00593.x

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import fastkappa.dask as fkd
    >>> t = da.from_array(np.array([0, 1, 2, 0, 1, 2]), chunks=4)
    >>> p = da.from_array(np.array([0, 1, 2, 0, 2, 2]), chunks=4)
    >>> g = da.from_array(np.array(["a", "a", "a", "b", "b", "b"]), chunks=4)
    >>> fkd.kappa_by_group(t, p, g).estimate
    array([1. , 0.5])
    """
    replace_undefined_by = check_replace_undefined_by(replace_undefined_by)
    method, confidence_level, n_resamples, seq = group_interval_iv(
        method, ci, confidence_level, n_resamples, seed)
    if method is not None and sample_weight is not None:
        raise ValueError(
            "per-group intervals with `sample_weight` resample the weighted rows; use "
            "fastkappa.kappa_by_group on in-memory data for them.")
    inputs = _inputs(ignore_index, nan_policy, thresholds, labels, n_classes)
    check_one_row_weight(sample_weight, frequency_weight)
    labels = _scored_classes(y_true, y_pred, _declared_scale(y_true, y_pred, labels, n_classes),
                             n_classes, thresholds, inputs["ignore_index"], weights)
    spec = _spec(weights, labels, n_classes)
    parts = _partitions({"y_true": y_true, "y_pred": y_pred, "groups": groups,
                         "sample_weight": sample_weight, "frequency_weight": frequency_weight})
    tasks = [dask.delayed(_partition_groups)(part, spec, inputs) for part in parts]
    merged = _tree(tasks, _merge_group_tables).compute()
    if len(tasks) == 1:
        merged = _merge_group_tables(merged)
    missing = merged["missing"]
    if missing and nan_policy != "omit":
        raise ValueError(
            f"`groups` is missing (NaN/None/null) on {missing} rows; pass "
            "nan_policy='omit' to drop them.")
    if not merged["keys"]:
        raise ValueError("no rows to score: the collections are empty"
                         + (" once rows without a group id are dropped." if missing else "."))
    classes = merged["labels"]
    if len(classes) == 0:  # every partition's rows dropped
        raise ValueError("no rows left to score after dropping ignored and missing rows; "
                         "kappa needs at least one labelled pair.")
    # groups sorted as before (numbers, then strings), tables summed exactly (counts)
    order = sorted(range(len(merged["keys"])),
                   key=lambda j: (isinstance(merged["keys"][j], str), merged["keys"][j]))
    keys = [merged["keys"][j] for j in order]
    tables = merged["tables"][order]
    wmat = _weights.weight_matrix(len(classes), spec["weights"])
    kappa, n_g = _group_kappas(tables, wmat)  # the in-memory reduction
    if tables.dtype.kind in "iu":
        n_g = n_g.astype(np.int64)
    undefined = np.isnan(kappa)
    if undefined.any():
        warnings.warn(
            f"kappa is undefined (or no row is left) in {int(undefined.sum())} of "
            f"{len(keys)} groups; they are reported as "
            f"replace_undefined_by={replace_undefined_by!r}.", UndefinedKappaWarning,
            stacklevel=user_stacklevel())
        kappa[undefined] = replace_undefined_by
    total = _weights.finish_kappa(*_weights.kappa_terms(tables.sum(axis=0), wmat),
                                  replace_undefined_by)
    low = high = None
    if method is not None:
        low = np.full(len(keys), np.nan)
        high = np.full(len(keys), np.nan)
        seeds = seq.spawn(len(keys))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for i in range(len(keys)):
                if tables[i].sum() == 0:  # no scored row: no interval, as in memory
                    continue
                res = kappa_ci_from_confusion(
                    tables[i], weights=spec["weights"], method=method,
                    confidence_level=confidence_level, n_resamples=n_resamples, seed=seeds[i])
                low[i], high[i] = res.low, res.high
    w = spec["weights"]
    group_keys = np.asarray(keys, dtype=object if any(isinstance(k, str) for k in keys)
                            else None)
    return KappaByGroup(
        groups=group_keys, estimate=kappa, n_rows=n_g, overall=total,
        confusion=np.ascontiguousarray(tables), classes=classes,
        weights=w if isinstance(w, str) or w is None else "custom",
        low=low, high=high, method=method,
        confidence_level=confidence_level if method else None,
        n_resamples=None if method in (None, "asymptotic") else n_resamples,
        seed=None if method in (None, "asymptotic") else seed_record(seq))


# many raters: implemented in fastkappa.dask_agreement, used from here
from .dask_agreement import accumulate_agreement, agreement  # noqa: E402

__all__ += ["accumulate_agreement", "agreement"]
