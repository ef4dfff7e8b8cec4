"""Benchmarks: the compiled paths, timed as ratios against the alternatives.

They time the kernels, never the NumPy stand-ins and serial runs a fresh
kernel cache uses for a first call (``FASTKAPPA_COLD_SERIAL=0``; see
``docs/kernel-cache.md``).  ``first_call.py`` measures that first call and
runs its processes with the package's defaults.
"""

import os

os.environ.setdefault("FASTKAPPA_COLD_SERIAL", "0")
