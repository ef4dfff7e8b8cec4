"""Agreement among many raters on long-format Dask collections.

Each partition of ``item``, ``rater`` and ``label`` (columns of one dask
DataFrame, or aligned dask arrays) is read into its own
:class:`fastkappa.AgreementAccumulator`; the accumulators are merged in a
tree (an item's ratings may be spread over any partitions), and the client
scores the merged items x raters table.  A worker holds one partition and
one accumulator at a time.

Use it as ``fastkappa.dask.agreement`` and
``fastkappa.dask.accumulate_agreement`` (this module implements them); it
needs the ``dask`` extra (``pip install "fastkappa[dask]"``, or from a clone
``pip install -e ".[dask]"``).
"""

from __future__ import annotations

from typing import Any

from ._install import install_hint
from .agreement_stream import AgreementAccumulator

try:
    import dask
except ImportError as _err:  # pragma: no cover - fastkappa.dask raised already
    raise ImportError(
        f"fastkappa.dask_agreement needs dask; {install_hint('dask')}") from _err

__all__ = ["accumulate_agreement", "agreement"]


def _partition_accumulator(part, spec: dict) -> AgreementAccumulator:
    acc = AgreementAccumulator(**spec)
    if len(part["item"]):
        acc.update(part["item"], part["rater"], part["label"])
    return acc


def accumulate_agreement(item, rater, label, *, labels=None, n_classes=None, missing=None,
                         compute: bool = True):
    """One pass over long-format dask collections into an :class:`AgreementAccumulator`.

    Parameters
    ----------
    item, rater, label : dask.dataframe.Series or dask.array.Array
        One row per rating: columns of one DataFrame, or aligned 1-D arrays.
    labels, n_classes, missing
        As in :class:`fastkappa.AgreementAccumulator`.
    compute : bool, default True
        False returns the ``dask.delayed`` object instead.

    Returns
    -------
    AgreementAccumulator

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import fastkappa.dask as fkd
    >>> item = da.from_array(np.array([1, 1, 2, 2, 3, 3]), chunks=4)
    >>> rater = da.from_array(np.array([0, 1, 0, 1, 0, 1]), chunks=4)
    >>> label = da.from_array(np.array([0, 0, 1, 1, 1, 0]), chunks=4)
    >>> acc = fkd.accumulate_agreement(item, rater, label)
    >>> acc.n_items, acc.n_ratings
    (3, 6)
    """
    # fastkappa.dask re-exports this module
    from .dask import _counted_in_one_partition, _merge_many, _partitions, _tree

    spec = {"labels": labels, "n_classes": n_classes, "missing": missing}
    AgreementAccumulator(**spec)  # validates the options before any task runs
    parts = _partitions({"item": item, "rater": rater, "label": label})
    task = _counted_in_one_partition(_partition_accumulator)
    tasks = [dask.delayed(task)(part, spec) for part in parts]
    total = _tree(tasks, _merge_many)
    return total.compute() if compute else total


def agreement(item, rater, label, *, labels=None, n_classes=None, missing=None,
              **options: Any):
    """:func:`fastkappa.agreement` on long-format dask collections.

    Parameters
    ----------
    item, rater, label : dask.dataframe.Series or dask.array.Array
        One row per rating.
    labels, n_classes, missing
        The classes and the missing-rating marker.
    **options
        ``coefficients``, ``weights``, ``level``, ``method``,
        ``confidence_level``, ``n_resamples``, ``seed``, ``population_size``
        and ``clusters`` (a dict item id -> cluster id), as in
        :meth:`fastkappa.AgreementAccumulator.compute`.

    Returns
    -------
    Agreement

    References
    ----------
    .. [1] Gwet, K. L. (2008). Computing inter-rater reliability and its variance
       in the presence of high agreement. British Journal of Mathematical and
       Statistical Psychology, 61(1), 29-48.
       https://doi.org/10.1348/000711006X126600
    .. [2] Gwet, K. L. (2014). Handbook of Inter-Rater Reliability (4th ed.).
       Advanced Analytics, LLC.
    .. [3] Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability.
       Departmental Papers (ASC) 43, Annenberg School for Communication,
       University of Pennsylvania.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import fastkappa.dask as fkd
    >>> item = da.from_array(np.array([1, 1, 2, 2, 3, 3, 4, 4]), chunks=3)
    >>> rater = da.from_array(np.array([0, 1, 0, 1, 0, 1, 0, 1]), chunks=3)
    >>> label = da.from_array(np.array([0, 0, 1, 1, 1, 0, 2, 2]), chunks=3)
    >>> res = fkd.agreement(item, rater, label, coefficients="fleiss_kappa")
    >>> round(res["fleiss_kappa"].estimate, 4)
    0.619
    """
    acc = accumulate_agreement(item, rater, label, labels=labels, n_classes=n_classes,
                               missing=missing)
    return acc.compute(**options)
