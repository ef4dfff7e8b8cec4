"""The one decorator factory every kernel uses."""

from __future__ import annotations

import numba


def jit(*, parallel: bool = False, fastmath: bool = False):
    """Return a lazy ``numba.njit`` decorator with fastkappa's fixed options.

    ``cache=True`` so a compiled kernel is reused across processes,
    ``error_model="numpy"`` so 0/0 gives nan instead of raising, and
    ``nogil=True`` so several Python threads can run kernels at once.
    Compilation happens at the first call with a new type signature.
    """
    return numba.njit(
        cache=True,
        error_model="numpy",
        nogil=True,
        parallel=parallel,
        fastmath=fastmath,
    )
