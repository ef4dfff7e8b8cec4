"""Private Numba kernels.

Every ``@njit`` function of fastkappa lives in this subpackage, one module per
concern (``counting``, ``resampling``, ``thresholds``...).  Kernels are small,
never raise and never read globals that change at run time: options such as
the number of chunks and seeds are arguments.  Nothing here imports from the
rest of fastkappa, and ``import fastkappa`` does not import this package:
wrappers import it at their first call, so numba is loaded lazily.
"""
