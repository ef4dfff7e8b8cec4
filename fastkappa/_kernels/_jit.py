"""The one decorator factory every kernel uses."""

from __future__ import annotations

import numba

from . import _cache


def jit(*, parallel: bool = False, fastmath: bool = False):
    """Return a lazy ``numba.njit`` decorator with fastkappa's fixed options.

    Compiled kernels are cached on disk so a new process reuses them, in a
    per-user cache folder (``FASTKAPPA_CACHE_DIR`` or ``NUMBA_CACHE_DIR``
    move it; see ``fastkappa._kernels._cache``), never inside the installed
    package, so that reinstalling or uninstalling fastkappa leaves nothing
    behind.  ``error_model="numpy"`` so 0/0 gives nan instead of raising, and
    ``nogil=True`` so several Python threads can run kernels at once.
    Compilation happens at the first call with a new type signature.
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
        return dispatcher

    return wrap
