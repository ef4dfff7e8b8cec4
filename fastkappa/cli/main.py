"""``fastkappa``'s entry point: parse, dispatch to a command, exit codes, signals, pipes."""

from __future__ import annotations

import argparse
import contextlib
import csv
import functools
import os
import sys
import warnings
from collections.abc import Sequence

from ._common import OutputError, UsageError, _cli_wording
from .output import _write
from .parser import make_parser


@functools.lru_cache(maxsize=1)
def _parser() -> argparse.ArgumentParser:
    """The parser, built once per process (parsing does not change it)."""
    return make_parser()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code.

    0 success; 1 the data cannot be scored (unreadable, truncated or corrupt
    file, missing column, bad value) or the output cannot be written (a
    closed pipe, a full disk); 2 the command line is wrong; 130 interrupted
    (Ctrl-C).  Every failure is one line on standard error, never a
    traceback.

    Examples
    --------
    >>> from fastkappa.cli import main
    >>> main(["demo", "--format", "json"])  # doctest: +SKIP
    0
    """
    prog = "fastkappa"
    try:
        parser = _parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as e:  # argparse reports usage errors itself
            return int(e.code) if isinstance(e.code, int) else 2
        prog = f"fastkappa {args.command}"
        return _run(args, prog)
    except KeyboardInterrupt:
        _error_line(f"{prog}: interrupted")
        if argv is None:
            # run as the program: a reader thread may still be blocked on input that
            # never comes (a pipe), and finalising the interpreter around it can
            # abort; nothing is left to clean up, so leave at once
            with contextlib.suppress(Exception):
                sys.stdout.flush()
            os._exit(130)
        return 130


def _error_line(text: str) -> None:
    """Print one line on stderr (a message's own line breaks become spaces)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.write(" ".join(text.split()) + "\n")
        sys.stderr.flush()


def _run(args, prog: str) -> int:
    from .._io import _read_errors

    recorded: list = []
    try:
        _set_threads(args.threads)
        with warnings.catch_warnings(record=True) as recorded:
            warnings.simplefilter("always")
            out = args.func(args)
        _report_warnings(recorded, prog)
        _write(out, args.format)
    except UsageError as e:
        _report_warnings(recorded, prog)
        _error_line(f"{prog}: error: {e}")
        return 2
    except OutputError as e:
        _error_line(f"{prog}: error: {e}")
        return 1
    except ValueError as e:  # DataError and the library's validation errors
        _report_warnings(recorded, prog)
        _error_line(f"{prog}: error: {_cli_wording(str(e))}")
        return 1
    except MemoryError:
        _error_line(f"{prog}: error: out of memory; score a smaller file, or fewer groups "
                    "or classes.")
        return 1
    except (*_read_errors(), csv.Error) as e:  # a damaged input the readers did not catch
        from .._io import _one_line

        name = "stdin" if getattr(args, "file", None) == "-" else getattr(args, "file", "")
        _error_line(f"{prog}: error: cannot read {name}: {_one_line(e)}")
        return 1
    return 0


def _report_warnings(recorded, prog: str) -> None:
    seen = set()
    for w in recorded:
        mod = getattr(w, "filename", "") or ""
        ours = issubclass(w.category, RuntimeWarning) or "fastkappa" in mod
        if not ours:  # not ours to judge: hand it back to the warning system
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            continue
        text = _cli_wording(str(w.message))
        if text not in seen:
            seen.add(text)
            print(f"{prog}: warning: {text}", file=sys.stderr)


def _set_threads(n: int | None) -> None:
    if n is None:
        return
    import numba

    top = numba.config.NUMBA_NUM_THREADS
    if n > top:
        raise UsageError(
            f"--threads {n} is more than the {top} threads numba was started with "
            "(set NUMBA_NUM_THREADS to raise the limit).")
    numba.set_num_threads(n)
