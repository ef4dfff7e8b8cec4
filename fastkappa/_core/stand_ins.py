"""What a process spends on stand-ins for kernels a fresh cache has not compiled."""

from __future__ import annotations

import contextlib
import time


class StandInTime:
    """Seconds that stand-ins (see :func:`fastkappa._kernels._jit.cold_stand_ins`) have run in this
    process, per key, the first run of each key left out: it pays one-off
    imports and compiles that later runs do not.  A caller compares
    :meth:`spent` with its budget and compiles the kernel once it is over:
    repeated calls then never lose much more than the first call saved."""

    def __init__(self) -> None:
        self._runs: dict = {}  # key -> (runs, seconds after the first)

    def spent(self, key=None) -> float:
        return self._runs.get(key, (0, 0.0))[1]

    @contextlib.contextmanager
    def timing(self, key=None):
        """Time the block as one run of ``key``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            runs, spent = self._runs.get(key, (0, 0.0))
            if runs:
                spent += time.perf_counter() - start
            self._runs[key] = (runs + 1, spent)
