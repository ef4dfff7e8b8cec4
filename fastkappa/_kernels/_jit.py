"""The one decorator factory every kernel uses, and the guard of parallel kernels."""

from __future__ import annotations

import functools
import threading

import numba

from . import _cache

#: serialises parallel kernels while the threading layer may not be thread-safe
_PARALLEL_LOCK = threading.Lock()
#: True once the active layer is known to be thread-safe, False when it is not,
#: None before the first parallel kernel has run (numba picks the layer then)
_layer_thread_safe: bool | None = None
#: numba's layers that are safe to enter from several Python threads at once
#: ("workqueue" is not: concurrent launches abort the process)
_THREAD_SAFE_LAYERS = frozenset({"tbb", "omp"})


def _known_thread_safety() -> bool | None:
    """Whether the threading layer is thread-safe: from the configuration when it
    names one, else from :func:`numba.threading_layer` once a kernel has run."""
    configured = str(numba.config.THREADING_LAYER).lower()
    if configured == "workqueue":
        return False
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel kernel has run yet
        return None
    return layer in _THREAD_SAFE_LAYERS


def run_parallel(kernel, *args):
    """Call parallel ``kernel``: directly when the threading layer is thread-safe,
    else holding one process-wide lock (the first call always holds it, since
    the layer is only chosen then).  Serial kernels never need this."""
    global _layer_thread_safe
    if _layer_thread_safe:
        return kernel(*args)
    with _PARALLEL_LOCK:
        out = kernel(*args)
        if _layer_thread_safe is None:
            _layer_thread_safe = _known_thread_safety()
        return out



def jit(*, parallel: bool = False, fastmath: bool = False):
    """Return a lazy ``numba.njit`` decorator with fastkappa's fixed options.

    Compiled kernels are cached on disk so a new process reuses them, in a
    per-user cache folder (``FASTKAPPA_CACHE_DIR`` or ``NUMBA_CACHE_DIR``
    move it; see ``fastkappa._kernels._cache``), never inside the installed
    package, so that reinstalling or uninstalling fastkappa leaves nothing
    behind.  ``error_model="numpy"`` so 0/0 gives nan instead of raising, and
    ``nogil=True`` so several Python threads can run kernels at once.
    Compilation happens at the first call with a new type signature.

    A ``parallel=True`` kernel is returned wrapped by :func:`run_parallel`,
    so calls from several Python threads are safe under every threading
    layer numba can pick (``workqueue`` is serialised); such kernels are
    called from Python only, never from another kernel.  The compiled
    dispatcher is the wrapper's ``dispatcher`` attribute.
    """
    # cache=False: numba's own cache=True would write beside the source
    decorate = numba.njit(
        cache=False,
        error_model="numpy",
        nogil=True,
        parallel=parallel,
        fastmath=fastmath,
    )

    def wrap(func):
        dispatcher = decorate(func)
        _cache.enable(dispatcher)
        if not parallel:
            return dispatcher

        @functools.wraps(func)
        def call(*args):
            return run_parallel(dispatcher, *args)

        call.dispatcher = dispatcher
        return call

    return wrap
