"""The one decorator factory every kernel uses, and the guard of parallel kernels."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import types

import numba
import numpy as np

from .._core.config import COLD_SERIAL_ENV
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


#: True in a process forked after the parent ran a parallel kernel on the OpenMP
#: layer: GNU OpenMP aborts a child that starts a parallel region ("fork() called
#: from a process already using GNU OpenMP"), and a multiprocessing pool then
#: hangs.  Such a child runs every parallel kernel's serial twin instead (the same
#: fixed blocks, so the same result).
_forked_after_omp = False


def _after_fork_in_child() -> None:
    global _forked_after_omp
    if _layer_thread_safe is None:  # no parallel kernel ran: numba has no layer yet
        return
    try:
        _forked_after_omp = numba.threading_layer() == "omp"
    except ValueError:
        pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


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


#: serial kernels cast small integer label arrays to int64 up to this many
#: elements: the copy costs a few microseconds, a new specialisation a second
#: or more of compiling.  Larger arrays keep their type: at 1e5 int8 labels the
#: copy doubled the time of a call (0.07 -> 0.13 ms, measured)
CANONICAL_MAX_SIZE = 1 << 15
#: integer kinds that cast to int64 without changing a value (uint64 may not)
_CANONICAL_CASTS = frozenset(np.dtype(d) for d in (
    "bool", "int8", "int16", "int32", "uint8", "uint16", "uint32"))


def canonical_args(args: tuple, positions: tuple[int, ...]) -> tuple:
    """``args`` with the small integer or boolean arrays at ``positions`` as int64.

    So that a serial kernel compiles once for every integer label type (and
    every mixed pair) instead of once per dtype pair.  Values never change:
    only types that int64 holds exactly are cast, and arrays above
    :data:`CANONICAL_MAX_SIZE` keep their type (the parallel kernels, which
    run on those, specialise per dtype rather than pay an extra pass).
    """
    out = list(args)
    for i in positions:
        a = out[i]
        if (isinstance(a, np.ndarray) and a.dtype in _CANONICAL_CASTS
                and a.size <= CANONICAL_MAX_SIZE):
            out[i] = a.astype(np.int64)
    return tuple(out)


#: > 0 while every kernel a call reaches must be compiled (``fastkappa warmup``)
_compile_forced = [0]


@contextlib.contextmanager
def compile_kernels():
    """Within the block no NumPy stand-in replaces a kernel that is not compiled
    yet (:func:`cold_stand_ins` is False): ``fastkappa warmup`` caches them all."""
    _compile_forced[0] += 1
    try:
        yield
    finally:
        _compile_forced[0] -= 1


def cold_stand_ins() -> bool:
    """Whether a fresh kernel cache may stand in for a kernel it has not compiled
    (NumPy counts, a bootstrap's serial twin): not within
    :func:`compile_kernels`, nor with ``FASTKAPPA_COLD_SERIAL=0`` (benchmarks
    and tests that time or check the compiled paths)."""
    return not _compile_forced[0] and os.environ.get(COLD_SERIAL_ENV, "1") != "0"


def is_ready(kernel, args: tuple) -> bool:
    """Whether ``kernel(*args)`` runs without compiling: numba holds an overload
    for these argument types in this process, or the kernel cache has one.

    Reads numba's cache index (a private API, the key numba itself looks up);
    anything unexpected answers True, which keeps the caller's usual choice.
    """
    disp = getattr(kernel, "dispatcher", kernel)
    try:
        sig = tuple(disp.typeof_pyval(a) for a in args)
        if sig in disp.overloads:
            return True
        cache = disp._cache
        key = cache._index_key(sig, disp.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # no JIT, no cache, another numba: as if compiled
        return True


def _twin_function(func, suffix: str):
    """A copy of ``func`` (same code and globals) under the name ``name + suffix``.

    numba names a kernel's cache files after its qualified name: the twin
    caches apart from the original even though their code is the same.
    """
    twin = types.FunctionType(func.__code__, func.__globals__, func.__name__ + suffix,
                              func.__defaults__, func.__closure__)
    twin.__qualname__ = func.__qualname__ + suffix
    twin.__module__ = func.__module__
    twin.__doc__ = f":func:`{func.__name__}` on one thread: the same blocks, the same result."
    return twin


def jit(*, parallel: bool = False, fastmath: bool = False,
        canonical: tuple[int, ...] = (), inline: bool = False, serial_twin: bool = False):
    """Return a lazy ``numba.njit`` decorator with fastkappa's fixed options.

    Compiled kernels are cached on disk so a new process reuses them, in a
    per-user cache folder (``FASTKAPPA_CACHE_DIR`` or ``NUMBA_CACHE_DIR``
    move it; see ``fastkappa._kernels._cache``), never inside the installed
    package, so that reinstalling or uninstalling fastkappa leaves nothing
    behind.  ``error_model="numpy"`` so 0/0 gives nan instead of raising, and
    ``nogil=True`` so several Python threads can run kernels at once.
    Compilation happens at the first call with a new type signature.
    ``inline``: a small helper that kernels call is inlined into them by
    numba itself (``inline="always"``), so it costs no compile of its own in
    a fresh process.

    A ``parallel=True`` kernel is returned wrapped by :func:`run_parallel`,
    so calls from several Python threads are safe under every threading
    layer numba can pick (``workqueue`` is serialised); such kernels are
    called from Python only, never from another kernel.  The compiled
    dispatcher is the wrapper's ``dispatcher`` attribute.

    ``canonical`` lists the positions of integer label arrays that a kernel
    called from Python only takes: small ones are cast to int64 first
    (:func:`canonical_args`), so one compiled specialisation serves every
    integer label type.  Such a kernel is wrapped the same way.

    ``serial_twin`` (parallel kernels): the wrapper's ``serial`` attribute is
    the same function compiled without ``parallel``, where numba runs
    ``prange`` as ``range``.  A driver whose ``prange`` runs fixed blocks of
    replicates from per-block seeds then gives the same result on one thread,
    without a second copy of its code.
    """

    def decorate(func, parallel=parallel):
        # cache=False: numba's own cache=True would write beside the source
        dispatcher = numba.njit(
            cache=False,
            error_model="numpy",
            nogil=True,
            parallel=parallel,
            fastmath=fastmath,
            inline="always" if inline else "never",
        )(func)
        _cache.enable(dispatcher)
        return dispatcher

    def wrap(func):
        dispatcher = decorate(func)
        if not parallel and not canonical:
            return dispatcher

        @functools.wraps(func)
        def call(*args):
            if canonical:
                args = canonical_args(args, canonical)
            if parallel and _forked_after_omp:
                return _serial_of(call)(*args)
            if parallel:
                return run_parallel(dispatcher, *args)
            return dispatcher(*args)

        def _serial_of(call):
            twin = getattr(call, "serial", None)
            if twin is None:  # compiled once, in the forked child that needs it
                twin = call.serial = decorate(_twin_function(func, "_serial"),
                                              parallel=False)
            return twin

        call.dispatcher = dispatcher
        call.parallel = parallel
        if serial_twin and parallel and hasattr(dispatcher, "py_func"):
            call.serial = decorate(_twin_function(func, "_serial"), parallel=False)
        elif serial_twin and parallel:  # NUMBA_DISABLE_JIT: the plain function
            call.serial = func
        return call

    return wrap
