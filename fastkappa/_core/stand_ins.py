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


class ColdStandIn:
    """Whether a NumPy stand-in runs in place of one serial kernel: cold stand-ins
    are on (:func:`fastkappa._kernels._jit.cold_stand_ins`), the kernel is
    neither compiled in this process nor in the kernel cache for the argument
    types, and the stand-in has run less than ``budget`` seconds (its first
    run left out; time it with ``self.time.timing()``).  Then the kernel is
    compiled after all, as repeated calls pay it back."""

    def __init__(self, budget: float) -> None:
        self.budget = budget
        self.time = StandInTime()
        self._ready: set = set()  # keys whose kernel is known compiled or cached

    def wanted(self, kernel, args: tuple, key) -> bool:
        """For ``kernel(*args)``; ``key`` names the argument types (is_ready
        reads numba's cache index, so a known answer is kept)."""
        from .._kernels import _jit

        if key in self._ready or self.time.spent() > self.budget or not _jit.cold_stand_ins():
            return False
        if _jit.is_ready(kernel, args):
            self._ready.add(key)
            return False
        return True

    def ready(self, key) -> None:
        """The kernel has run for ``key``'s argument types: compiled from now on."""
        self._ready.add(key)

    @property
    def n_ready(self) -> int:
        return len(self._ready)
