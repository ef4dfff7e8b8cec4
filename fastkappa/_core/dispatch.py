"""The one way wrappers run a counting kernel: serial or parallel, in fixed blocks.

:func:`chunked` picks a kernel's serial twin below
:data:`config.PARALLEL_MIN_ROWS` rows (or on a thread marked by
:func:`use_serial_kernels`) and the parallel kernel otherwise, with a number of
blocks that depends on the data's shape only, never on the thread count, so
that float sums are the same on every machine.  The ``*_kernels()`` loaders
here are the one way the package imports a kernel module (and so numba): at
the first call, not before.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from . import config


def n_chunks_for(n: int) -> int:
    """Fixed number of blocks for ``n`` rows: depends on n only, never on threads."""
    if n < config.PARALLEL_MIN_ROWS:
        return 1
    return int(min(64, max(2, n // config.PARALLEL_MIN_ROWS)))



def table_chunks(n: int, table_bytes: int, input_bytes: int) -> int:
    """Blocks for counting ``n`` rows into per-block tables of ``table_bytes``.

    :func:`n_chunks_for`, capped so that the partial tables together stay
    below half the input's size plus :data:`PARTIALS_SLACK` (at least one
    block): with many classes the count runs in fewer blocks (one, serially,
    at the largest K) instead of allocating chunks x K^2.  Depends on the
    data's shape only, never on the thread count.
    """
    budget = input_bytes // 2 + config.PARTIALS_SLACK
    return int(max(1, min(n_chunks_for(n), budget // max(table_bytes, 1))))


def sum_partials(parts: np.ndarray, *shape: int) -> np.ndarray:
    """Sum of per-chunk partial tables ``parts`` (chunks, size) in chunk order (so
    float sums never depend on the thread count), reshaped to ``shape``; no copy
    for one chunk."""
    if len(parts) == 1:
        return parts[0].reshape(shape)
    return parts.sum(axis=0).reshape(shape)



def counting_kernels():
    """The counting kernels (importing them imports numba)."""
    from .._kernels import counting

    return counting


def resampling_kernels():
    """The bootstrap kernels (importing them imports numba)."""
    from .._kernels import resampling

    return resampling


def raters_kernels():
    """The many-rater kernels (importing them imports numba)."""
    from .._kernels import raters

    return raters


def sampling_kernels():
    """The random-number and sampling kernels (importing them imports numba)."""
    from .._kernels import sampling

    return sampling


def threshold_kernels():
    """The threshold-search kernels (importing them imports numba)."""
    from .._kernels import thresholds

    return thresholds


class KernelPair(NamedTuple):
    """A parallel counting kernel and its serial twin.

    Both take the same arguments, the parallel one a trailing ``n_chunks``;
    both return per-chunk partials with a leading chunk axis.
    """

    parallel: Callable
    serial: Callable
    #: integer results only: one block or many give the same answer
    exact: bool


class CountingKernels(NamedTuple):
    """Every counting kernel :func:`chunked` runs, by what it counts."""

    minmax: KernelPair
    weight_stats: KernelPair
    confusion: KernelPair
    confusion_counted: KernelPair
    confusion_weighted: KernelPair
    quadratic_sums: KernelPair
    kappa_sums: KernelPair
    group_confusion: KernelPair
    group_confusion_weighted: KernelPair


@functools.cache
def kernels() -> CountingKernels:
    """The serial/parallel pairs, built at the first call (which imports numba)."""
    c = counting_kernels()
    return CountingKernels(
        minmax=KernelPair(c._minmax, c._minmax_serial, exact=True),
        weight_stats=KernelPair(c._weight_stats, c._weight_stats_serial, exact=False),
        confusion=KernelPair(c._accumulate_confusion, c._accumulate_confusion_serial,
                             exact=True),
        confusion_counted=KernelPair(c._accumulate_confusion_counted,
                                     c._accumulate_confusion_counted_serial, exact=True),
        confusion_weighted=KernelPair(c._accumulate_confusion_weighted,
                                      c._accumulate_confusion_weighted_serial, exact=False),
        quadratic_sums=KernelPair(c._accumulate_quadratic_sums,
                                  c._accumulate_quadratic_sums_serial, exact=True),
        kappa_sums=KernelPair(c._accumulate_kappa_sums, c._accumulate_kappa_sums_serial,
                              exact=False),
        group_confusion=KernelPair(c._accumulate_group_confusion,
                                   c._accumulate_group_confusion_serial, exact=True),
        group_confusion_weighted=KernelPair(c._accumulate_group_confusion_weighted,
                                            c._accumulate_group_confusion_weighted_serial,
                                            exact=False),
    )


#: kernel names groups.py still passes to :func:`chunked` (its owner switches
#: them to ``kernels().group_confusion...`` and deletes this table)
_thread = threading.local()


def use_serial_kernels() -> None:
    """Make later :func:`chunked` calls on this thread run the serial twin.

    For worker threads that each count their own share of the rows: a
    parallel kernel started from several threads at once would only fight
    over the cores, and its idle workers would spin against the others.
    Only exact (integer) kernels follow it; the float-summing ones keep their
    fixed blocks so that their rounding never depends on the caller.
    """
    _thread.serial = True


def chunked(kernel: KernelPair, n: int, *args, n_chunks: int | None = None):
    """Run a counting ``kernel`` (a pair from :func:`kernels`) over ``n`` rows.

    Its serial twin below the parallel threshold (or, for an exact kernel, on
    a thread marked by :func:`use_serial_kernels`), else the parallel kernel
    with ``n_chunks_for(n)`` blocks (or ``n_chunks``, when the caller caps it).
    Both return per-chunk partials with a leading chunk axis.
    """
    if n_chunks is None:
        n_chunks = n_chunks_for(n)
    if n_chunks == 1 or (kernel.exact and getattr(_thread, "serial", False)):
        return kernel.serial(*args)
    return kernel.parallel(*args, n_chunks)


def minmax(a: np.ndarray) -> tuple[int, int]:
    """(min, max) of a non-empty integer array, in one vectorised pass.

    Below the parallel threshold NumPy's ``min`` and ``max``: two passes, but
    over so few rows that they cost microseconds (at most 6 us more at 1e5
    int64 labels, less than one pass for 8-bit ones), against a third of a
    second of compiling per integer type in each new process.
    """
    if n_chunks_for(len(a)) == 1:
        return int(a.min()), int(a.max())
    parts = chunked(kernels().minmax, len(a), a)
    return int(parts[:, 0].min()), int(parts[:, 1].max())

