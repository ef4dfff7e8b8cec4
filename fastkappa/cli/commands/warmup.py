"""``fastkappa warmup``: compile and cache every kernel ahead of use."""

from __future__ import annotations

import sys

from ..output import Output


def run(args) -> Output:
    """``fastkappa warmup`` from parsed arguments."""
    return warmup(show_steps=not args.quiet and sys.stderr.isatty())


def warmup(*, show_steps: bool = False) -> Output:
    """Compile and cache every kernel; ``show_steps`` prints each step on stderr as it
    ends (a cold warm-up takes minutes)."""
    from ..._warmup import warmup as compile_all

    def progress(step: str, seconds: float) -> None:
        # on a terminal, show each step as it ends (a cold warm-up takes minutes)
        if show_steps:
            print(f"  {seconds:7.2f} s  {step}", file=sys.stderr, flush=True)

    report = compile_all(progress=progress)
    d = report.to_dict()
    called = d["n_kernels"] - len(report.inner) - len(report.unused)
    lines = [f"fastkappa warmup: kernels cached in {report.cache_dir}" if report.cache_dir
             else "fastkappa warmup: no cache folder can be written (set FASTKAPPA_CACHE_DIR "
                  "to a writable folder); kernels are compiled in each new process"]
    lines += [f"  {sec:7.2f} s  {step}" for step, sec in report.steps]
    lines.append(
        f"{called} kernels called from Python, {len(report.inner)} inner kernels compiled "
        f"within them: {d['n_signatures']} type signatures, {d['n_compiled']} compiled now, "
        f"{d['n_loaded']} loaded from the cache")
    if report.not_compiled:
        lines.append("not reached: " + ", ".join(report.not_compiled))
    lines.append(f"total {report.seconds:.1f} s")
    rows = [{"step": step, "seconds": sec} for step, sec in report.steps]
    return Output("\n".join(lines), {"command": "warmup", **d}, rows)

