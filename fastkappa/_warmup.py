"""Compile every kernel ahead of use (``fastkappa warmup``).

numba compiles a kernel at its first call with a new type signature and
keeps the machine code in fastkappa's cache folder (see
``fastkappa._kernels._cache``).  A warm-up runs every public entry point on
small synthetic data, with the input types users pass (integer labels of
every width, floats holding whole numbers, strings, probabilities, scores
with cut points, sample weights, clusters, groups) and on enough rows to
reach the parallel kernels too, so that later processes, a Docker image
built with ``RUN fastkappa warmup`` or a CI job with the cache folder
cached, load every kernel instead of compiling it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .agreement import agreement, krippendorff_alpha
from .agreement_stream import AgreementAccumulator
from .bootstrap import kappa_ci, kappa_ci_from_confusion
from .compare import compare
from .groups import kappa_by_group
from .metrics import cohen_kappa, confusion_matrix
from .streaming import CohenKappa
from .thresholds import ThresholdOptimizer, optimize_thresholds

#: integer and boolean label types the warm-up passes (as the file reader compacts them)
LABEL_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "bool", "float64")


@dataclass
class WarmupReport:
    """What ``warmup()`` did: each step's time and every kernel's state."""

    steps: list[tuple[str, float]] = field(default_factory=list)
    #: kernel name -> (signatures, loaded from the cache, compiled now)
    kernels: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    seconds: float = 0.0
    #: the folder the kernels are cached in ("" when no folder is usable)
    cache_dir: str = ""

    #: kernels only other kernels call (compiled, or loaded, inside their callers)
    inner: list[str] = field(default_factory=list)
    #: kernels the package never calls (none expected: oracles live in the tests)
    unused: list[str] = field(default_factory=list)

    @property
    def not_compiled(self) -> list[str]:
        """Kernels the package calls that no step reached (none when all are covered)."""
        return [k for k, (sigs, _, _) in self.kernels.items()
                if sigs == 0 and k not in self.inner and k not in self.unused]

    def to_dict(self) -> dict:
        return {
            "seconds": self.seconds,
            "cache_dir": self.cache_dir,
            "steps": [{"step": name, "seconds": sec} for name, sec in self.steps],
            "kernels": {k: {"signatures": s, "loaded": h, "compiled": m}
                        for k, (s, h, m) in self.kernels.items()},
            "n_kernels": len(self.kernels),
            "n_signatures": sum(s for s, _, _ in self.kernels.values()),
            "n_loaded": sum(h for _, h, _ in self.kernels.values()),
            "n_compiled": sum(m for _, _, m in self.kernels.values()),
            "not_compiled": self.not_compiled,
            "inner": self.inner,
            "unused": self.unused,
        }


def _dispatchers() -> dict:
    from numba.core.registry import CPUDispatcher

    from ._kernels import counting, parquet, raters, resampling, sampling, thresholds

    out = {}
    for mod in (counting, parquet, raters, resampling, sampling, thresholds):
        short = mod.__name__.rsplit(".", 1)[1]
        for name in sorted(vars(mod)):
            obj = getattr(mod, name)
            # kernels behind a wrapper (serial ones taking canonical int64 labels,
            # parallel ones run in fixed blocks) count as their dispatcher
            if callable(obj) and hasattr(obj, "dispatcher"):
                obj = obj.dispatcher
            # a kernel once, under the module that defines it (not where it is imported)
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == mod.__name__:
                out[f"{short}.{name}"] = obj
    return out


def _roles(dispatchers: dict) -> tuple[list[str], list[str]]:
    """(kernels only called by kernels, kernels the package's Python never names)."""
    from pathlib import Path

    called = set()
    for disp in dispatchers.values():
        called |= set(disp.py_func.__code__.co_names)
    package = Path(__file__).resolve().parent
    files = [*package.glob("*.py"), *package.glob("_core/*.py")]
    source = "\n".join(p.read_text(encoding="utf-8") for p in files)
    inner, unused = [], []
    for full in dispatchers:
        name = full.split(".", 1)[1]
        if name in called:
            inner.append(full)
        elif name not in source and name.removesuffix("_serial") not in source:
            unused.append(full)
    return inner, unused


def _steps(n_small: int, n_large: int) -> list[tuple[str, Callable[[], None]]]:
    from ._core.config import PARALLEL_MIN_ROWS
    from ._core.dispatch import resampling_kernels
    from ._core.units import SERIAL_MAX_DRAWS

    rng = np.random.default_rng(0)
    n_large = max(n_large, PARALLEL_MIN_ROWS)
    n_raters_large = PARALLEL_MIN_ROWS // 4 + 1  # items x 4 raters >= PARALLEL_MIN_ROWS

    def graded(n):
        t = rng.integers(0, 5, n)
        return t, np.clip(t + rng.integers(-1, 2, n), 0, 4)

    small, large = graded(n_small), graded(n_large)

    def labels():
        for t, p in (small, large):
            w = rng.random(len(t))
            for dt in LABEL_DTYPES:
                a, b = t.astype(dt), p.astype(dt)
                for weights in (None, "linear", "quadratic"):
                    cohen_kappa(a, b, weights=weights)
                    if dt != "bool":
                        cohen_kappa(a, b, weights=weights, n_classes=5)
                cohen_kappa(a, b, sample_weight=w)
                cohen_kappa(a, b, weights="quadratic", sample_weight=w)
                cohen_kappa(a, b, frequency_weight=(w * 4).astype(np.int64) + 1)
                confusion_matrix(a, b)
        # the file readers' worker threads run the serial twins on large batches
        # (the label range of small inputs comes from NumPy)
        from concurrent.futures import ThreadPoolExecutor

        from ._core.dispatch import minmax, use_serial_kernels

        with ThreadPoolExecutor(1, initializer=use_serial_kernels) as pool:
            for dt in LABEL_DTYPES:
                pool.submit(minmax, large[0].astype(dt)).result()
        for t, p in (small, large):
            cohen_kappa(t + 1, p + 1, weights="quadratic", labels=[1, 2, 3, 4, 5])
            cohen_kappa(3 * t, 3 * p)  # values with gaps: a lookup table
            cohen_kappa(t, p, ignore_index=4)

    def strings_and_scores():
        t, p = small
        names = np.array(["none", "mild", "moderate", "severe", "proliferative"])
        cohen_kappa(names[t], names[p])
        cohen_kappa(names[t], names[p], weights="quadratic", labels=list(names))
        for dt in ("float64", "float32"):
            probs = rng.random((len(t), 5)).astype(dt)
            cohen_kappa(t, probs, weights="quadratic")
        cohen_kappa(t, t + rng.normal(0, 0.5, len(t)), thresholds=[0.5, 1.5, 2.5, 3.5])

    def groups():
        for t, p in (small, large):
            g = rng.integers(0, 8, len(t))
            kappa_by_group(t, p, g, weights="quadratic")
            kappa_by_group(t, p, g, sample_weight=rng.random(len(t)))

    def intervals():
        t, p = small
        clusters = np.arange(len(t)) // 2
        w = rng.random(len(t))
        for method in ("bca", "percentile", "basic", "asymptotic"):
            kappa_ci(t, p, weights="quadratic", method=method, n_resamples=200, seed=0)
            kappa_ci(t, p, method=method, clusters=clusters, n_resamples=200, seed=0)
            kappa_ci(t, p, method=method, sample_weight=w, n_resamples=200, seed=0)
        kappa_ci_from_confusion([[20, 5], [3, 22]], n_resamples=200, seed=0)
        # clusters of ten rows: nearly a table each, drawn by index (serial, parallel)
        tens = np.arange(len(t)) // 10
        for b in (200, SERIAL_MAX_DRAWS // max(1, len(t) // 10) + 1):
            kappa_ci(t, p, clusters=tens, method="percentile", n_resamples=b, seed=0)
        # cluster types split by the kernel, as after a hash collision
        ptr = np.array([0, 1, 2], dtype=np.int64)
        same_hash = np.zeros(2, dtype=np.uint64)
        resampling_kernels()._assign_types(np.arange(2, dtype=np.int64), same_hash,
                                           same_hash, ptr, np.array([0, 1], dtype=np.int64),
                                           np.ones(2, dtype=np.uint64))
        kappa_ci(*large, n_resamples=200, seed=0)
        # enough draws for the parallel multinomial kernel (the default B = 10,000 is)
        kappa_ci(t, p, n_resamples=SERIAL_MAX_DRAWS // 25, seed=0)
        # many classes: only the occupied cells are resampled (serial and parallel)
        many = rng.integers(0, 40, len(t))
        near = np.clip(many + rng.integers(-2, 3, len(t)), 0, 39)
        for weights in (None, "linear", "quadratic", 1 - np.eye(40)):
            kappa_ci(many, near, weights=weights, n_classes=40, n_resamples=200, seed=0)
        kappa_ci(many, near, weights="quadratic", n_classes=40,
                    n_resamples=SERIAL_MAX_DRAWS // 25, seed=0)
        # few occupied cells among many rows: one binomial per cell (serial, parallel)
        diag = np.repeat(np.arange(40), 4000)
        off = np.where(np.arange(len(diag)) % 50 == 0, (diag + 1) % 40, diag)
        for b in (200, SERIAL_MAX_DRAWS // 25):
            kappa_ci(diag, off, n_classes=40, n_resamples=b, seed=0)
        big = rng.integers(0, 40, n_large)
        kappa_ci(big, np.clip(big + rng.integers(-2, 3, n_large), 0, 39), n_classes=40,
                    n_resamples=200, seed=0)
        # a class count whose (K, K) table outgrows the counting budget: sums only
        for t_, p_ in (small, large):
            for weights in (None, "linear", "quadratic"):
                cohen_kappa(t_, p_, weights=weights, n_classes=1000)

    def comparisons():
        t, p = small
        q = np.clip(t + rng.integers(-2, 3, len(t)), 0, 4)
        r = np.where(rng.random(len(t)) < 0.5, t, rng.integers(0, 5, len(t)))
        models = {"a": p, "b": q, "c": r}
        for method in ("bca", "asymptotic"):
            compare(t, models, weights="quadratic", method=method, n_resamples=200,
                       seed=0)
            compare(t, models, method=method, clusters=np.arange(len(t)) // 2,
                       n_resamples=200, seed=0)
        compare(t, models, sample_weight=rng.random(len(t)), n_resamples=200, seed=0)
        # many distinct rows: the row-index resampling path
        many = {f"m{i}": np.clip(t + rng.integers(-2, 3, len(t)), 0, 4) for i in range(8)}
        compare(t, many, n_resamples=200, seed=0)
        # and few enough draws for its serial twin
        compare(t[:900], {f"m{i}": many[f"m{i}"][:900] for i in range(3)},
                   n_resamples=100, seed=0)

    def thresholds():
        t, _ = small
        s = t + rng.normal(0, 0.8, len(t))
        optimize_thresholds(t, s)
        optimize_thresholds(t, s, sample_weight=rng.random(len(t)))
        ThresholdOptimizer(cv=3, seed=0).fit(t, s)

    def streaming():
        t, p = small
        acc = CohenKappa(n_classes=5, weights="quadratic")
        for lo in range(0, len(t), 500):
            acc.update(t[lo:lo + 500], p[lo:lo + 500])
        acc.compute()
        acc.ci(n_resamples=200, seed=0)
        learner = CohenKappa()
        learner.update(t, p)
        learner.compute()

    def raters():
        truth = rng.integers(0, 5, n_small)
        ratings = np.where(rng.random((n_small, 4)) < 0.6, truth[:, None],
                           rng.integers(0, 5, (n_small, 4))).astype(float)
        ratings[rng.random(ratings.shape) < 0.1] = np.nan
        for method in ("asymptotic", "bca", "percentile"):
            agreement(ratings, method=method, n_resamples=200, seed=0)
            agreement(ratings, weights="quadratic", method=method, n_resamples=200,
                         seed=0, clusters=np.arange(n_small) // 2)
        agreement(np.nan_to_num(ratings, nan=-1).astype(np.int64), missing=-1)
        agreement(ratings, labels=[0, 1, 2, 3, 4, 9])  # classes with a gap: code table
        item = np.repeat(np.arange(n_small), 4)
        rater = np.tile(np.arange(4), n_small)
        keep = ~np.isnan(ratings.ravel())
        agreement(item=item[keep], rater=rater[keep],
                     label=ratings.ravel()[keep].astype(np.int64))
        agreement(item=item[keep].astype(str), rater=rater[keep].astype(str),
                     label=ratings.ravel()[keep])
        for level in ("nominal", "ordinal", "interval", "ratio"):
            krippendorff_alpha(ratings + 1, level=level)
        acc = AgreementAccumulator()
        acc.update(item=item[keep], rater=rater[keep], label=ratings.ravel()[keep])
        acc.compute()
        # the parallel encoders start at PARALLEL_MIN_RATINGS ratings (2^21): reach
        # them on a panel of 2^18 ratings with the threshold lowered for the step
        from . import _raters_input

        big = np.where(rng.random((n_raters_large, 4)) < 0.6,
                       rng.integers(0, 5, n_raters_large)[:, None],
                       rng.integers(0, 5, (n_raters_large, 4))).astype(float)
        big[rng.random(big.shape) < 0.1] = np.nan
        saved = _raters_input.PARALLEL_MIN_RATINGS
        _raters_input.PARALLEL_MIN_RATINGS = 1
        try:
            agreement(big)                                       # group rating rows
            agreement(big, labels=[0, 1, 2, 3, 4, 9])                       # code table
            agreement(np.nan_to_num(big, nan=-1).astype(np.int64), missing=-1)  # scan
            agreement(big.astype(object))                                  # count codes
            items, raters = np.nonzero(~np.isnan(big))                     # stored rows
            AgreementAccumulator().update(items, raters, big[items, raters]).compute()
        finally:
            _raters_input.PARALLEL_MIN_RATINGS = saved

    def parquet_pages():
        # the reader of Parquet dictionary pages (fastkappa score), on the argument
        # types it passes: read-only bytes, int32 indices, an int64 table
        from ._kernels import parquet

        def readonly(data):
            buf = np.frombuffer(bytes(data), dtype=np.uint8)
            buf.flags.writeable = False
            return buf

        # one data page header (type 0, 1 value, 4 bytes) and its body: one-bit
        # definition levels (4-byte length, a run of one 1), then 3-bit indices
        page = readonly([0x15, 0x00, 0x15, 0x08, 0x15, 0x08, 0x00,
                         0x02, 0x00, 0x00, 0x00, 0x02, 0x01, 0x03, 0x02, 0x01])
        headers = np.empty((4, parquet.HEADER_SLOTS + 1), dtype=np.int64)
        parquet._page_headers(page, len(page), headers, np.empty((2, 16), dtype=np.int64))
        parquet._no_null(page, 11, 13, 1)  # a v2 page's levels (the pairs kernel reads v1's)
        pages = np.array([[7, 16, 1, 1]], dtype=np.int64)
        scratch = [np.zeros(16, dtype=np.int32) for _ in range(2)]
        one = np.array([0], dtype=np.int64)
        literal = readonly([0x01, 0x00, 0x07])  # a Snappy block: one byte, 7
        parquet._snappy_pages(literal, one, one + 3, np.zeros(1, dtype=np.uint8), one,
                              one + 1)
        for copies in (1, 4):
            parquet._count_page_pairs(page, pages, page, pages, scratch[0], scratch[1], 8, 8,
                                      np.zeros((copies, 64), dtype=np.int64))

    return [
        ("cohen_kappa and confusion_matrix: every label type, serial and parallel", labels),
        ("strings, probabilities, scores with cut points", strings_and_scores),
        ("kappa_by_group", groups),
        ("kappa_ci: bca, percentile, basic, asymptotic; clusters; sample weights", intervals),
        ("compare", comparisons),
        ("optimize_thresholds and ThresholdOptimizer", thresholds),
        ("CohenKappa (streaming)", streaming),
        ("many raters: agreement, wide and long, every interval method", raters),
        ("fastkappa score: Parquet dictionary pages", parquet_pages),
    ]


def warmup(*, n_small: int = 2000, n_large: int = 0,
           progress: Callable[[str, float], None] | None = None) -> WarmupReport:
    """Run every entry point once so every kernel is compiled and cached.

    Parameters
    ----------
    n_small : int
        Rows of the small synthetic data set.
    n_large : int
        Rows of the large one (at least the parallel threshold, 2**18).
    progress : callable, optional
        Called as ``progress(step, seconds)`` after each step.

    Returns
    -------
    WarmupReport
    """
    import warnings

    from ._core.units import parallel_drivers
    from ._kernels import _cache

    folder = _cache.cache_dir()
    report = WarmupReport(cache_dir="" if folder is None else str(folder))
    start = time.perf_counter()
    with warnings.catch_warnings(), parallel_drivers():
        # the synthetic data is built to reach code paths, not to give clean numbers
        warnings.simplefilter("ignore")
        for name, step in _steps(n_small, n_large):
            t0 = time.perf_counter()
            step()
            seconds = time.perf_counter() - t0
            report.steps.append((name, seconds))
            if progress is not None:
                progress(name, seconds)
    report.seconds = time.perf_counter() - start
    dispatchers = _dispatchers()
    report.inner, report.unused = _roles(dispatchers)
    for name, disp in dispatchers.items():
        stats = disp.stats
        report.kernels[name] = (len(disp.signatures), len(stats.cache_hits),
                                len(stats.cache_misses))
    return report
