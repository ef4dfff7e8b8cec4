"""Every tunable of fastkappa's core in one place.

Thresholds that choose between code paths (serial or parallel kernels, a
direct table or a lookup table, dense or sparse resampling) and the limits
that guard memory.  None of them changes a result, only the time and memory
it takes; modules read them as ``config.NAME`` at call time, so a test can
lower one with ``monkeypatch.setattr(config, NAME, value)``.
"""

#: rows per chunk below which kernels run serially (measured on 2 cores)
PARALLEL_MIN_ROWS = 1 << 18
#: bytes the per-chunk partial tables may take beyond half the input's size
PARTIALS_SLACK = 2 << 20
#: largest value range counted directly into a (range x range) table
DIRECT_RANGE_MAX = 64
#: largest value range handled with a lookup table
LUT_RANGE_MAX = 1 << 22
#: the most classes a confusion matrix may have
MAX_CLASSES = 4096
#: largest total count a row-by-row entry point expands (8 bytes per row and index)
MAX_EXPANDED_ROWS = 2**31
