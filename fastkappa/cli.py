"""The ``fastkappa`` command line: score files bigger than memory.

Subcommands::

    fastkappa demo [--figures DIR]       score the shipped retinopathy set, save figures
    fastkappa score FILE --true C --pred C [--weights W] [--method M] [--by C] ...
    fastkappa compare FILE --true C --pred C1 C2 ... [--reference C1]
    fastkappa thresholds FILE --true C --score C [--cv K]

``score``, ``compare`` and ``thresholds`` take ``--plot PATH`` (``.png``,
``.svg`` or ``.pdf``) to save a figure as well; ``demo`` saves its figures in
a folder (``fastkappa-demo-figures`` unless ``--figures DIR`` names another)
and names it in its output. Figures need matplotlib (``pip install
fastkappa[plot]``); they are drawn on a bare ``matplotlib.figure.Figure``, so
no pyplot state or window is involved.

FILE is CSV (plain or gzip, told apart by its first bytes, so ``-`` reads
standard input either way) or Parquet. ``score`` streams the file in record
batches through :class:`fastkappa.CohenKappa`, so its memory does not grow
with the file; ``--by`` and ``--clusters`` add one sparse table per group or
cluster (:mod:`fastkappa._filecount`), never the rows. ``compare`` and
``thresholds`` resample rows and hold the columns they need (a few bytes per
row).

Options have the Python API's names and defaults (``--weights`` none,
``--method``, ``--n-resamples`` 10,000); the same ``--seed`` gives the same
numbers as the API, and a seed is drawn and reported when none is given.

Exit codes: 0 on success; 1 when the data cannot be scored (unreadable,
truncated or corrupt file, missing column, bad value) or the results cannot
be written (closed pipe, full disk); 2 when the command line is wrong; 130
when interrupted.  Every failure is one line on standard error.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import csv
import functools
import importlib
import io
import json
import math
import os
import sys
import threading
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._io import (
    DataError,
    LabelConverter,
    first_row_outside,
    iter_batches,
    materialize,
    open_source,
    progress_bar,
    score_values,
    subset,
    wait_all,
)
from ._validation import use_serial_kernels
from .bootstrap import METHODS as _API_METHODS

FORMATS = ("text", "json", "csv")
WEIGHTS = ("none", "linear", "quadratic")
#: interval methods, as the library lists them
METHODS = _API_METHODS
#: the library's default number of bootstrap replicates (fastkappa.kappa_ci)
N_RESAMPLES = 10_000

#: file formats ``--plot`` writes (told by the file name's suffix)
PLOT_SUFFIXES = (".png", ".svg", ".pdf")
#: where ``fastkappa demo`` saves its figures unless ``--figures DIR`` is given
DEMO_FIGURES = "fastkappa-demo-figures"
#: resolution of the PNG figures (small files that stay sharp on a screen)
FIGURE_DPI = 110
#: above this many groups ``score --by --plot`` leaves the forest plot out
MAX_PLOTTED_GROUPS = 60
_PLOT_INSTALL = "pip install fastkappa[plot]"


class UsageError(Exception):
    """The command line is wrong (exit code 2)."""


# --------------------------------------------------------------------------- parser


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {v}")
    return v


def _at_least(lo: int, what: str):
    """An argparse type: an integer of at least ``lo`` (``what`` says why)."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected an integer of at least {lo} ({what}), got {text!r}") from None
        if v < lo:
            raise argparse.ArgumentTypeError(
                f"expected an integer of at least {lo} ({what}), got {v}")
        return v

    parse.__name__ = f"integer >= {lo}"
    return parse


def _seed(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a non-negative integer seed, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer seed, got {v}")
    return v


def _level(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {v}")
    return v


def _label_list(text: str) -> list:
    items = [s.strip() for s in text.split(",")]
    if not text.strip() or any(s == "" for s in items):
        raise argparse.ArgumentTypeError(
            f"expected comma-separated class labels such as 0,1,2,3,4; got {text!r}")
    if len(set(items)) != len(items):
        twice = next(s for s in items if items.count(s) > 1)
        raise argparse.ArgumentTypeError(f"each class may appear once; {twice!r} is repeated "
                                         f"in {text!r}")
    try:
        values = [int(s) for s in items]
    except ValueError:
        return items
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"each class may appear once; got {text!r}")
    return values


def make_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``fastkappa`` command.

    Examples
    --------
    >>> from fastkappa.cli import make_parser
    >>> args = make_parser().parse_args(["score", "data.csv", "--true", "y", "--pred", "p"])
    >>> args.command, args.file, args.weights
    ('score', 'data.csv', 'none')
    """
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--threads", type=_positive_int, metavar="N",
                        help="threads for the counting kernels (numba), and for reading a "
                        "Parquet file's row groups in parallel (default: every core)")
    common.add_argument("--format", choices=FORMATS, default="text",
                        help="output format (default: text); json writes NaN as null")
    common.add_argument("--quiet", "-q", action="store_true",
                        help="no progress bar (it shows only on a terminal anyway)")

    file_opts = argparse.ArgumentParser(add_help=False)
    file_opts.add_argument("file", metavar="FILE",
                           help="CSV (optionally gzip-compressed) or Parquet file; - for stdin")
    file_opts.add_argument("--true", required=True, metavar="COL", dest="true",
                           help="column of reference labels")
    file_opts.add_argument("--sep", metavar="CHAR",
                           help="CSV field separator (default: , or tab for .tsv)")
    file_opts.add_argument("--nan-policy", choices=("raise", "omit"), default="raise",
                           help="rows with a missing value: error (default) or drop")

    classes = argparse.ArgumentParser(add_help=False)
    grp = classes.add_mutually_exclusive_group()
    grp.add_argument("--labels", type=_label_list, metavar="L1,L2,...",
                     help="the classes in scale order (declares unobserved ones too)")
    grp.add_argument("--n-classes", type=_positive_int, metavar="K",
                     help="classes are 0..K-1")

    interval = argparse.ArgumentParser(add_help=False)
    interval.add_argument("--confidence-level", type=_level, default=0.95, metavar="CL",
                          help="confidence level (default: 0.95)")
    interval.add_argument("--n-resamples", type=_at_least(2, "bootstrap replicates"),
                          default=N_RESAMPLES, metavar="B",
                          help=f"bootstrap replicates (default: {N_RESAMPLES})")
    interval.add_argument("--seed", type=_seed, default=None, metavar="N",
                          help="random seed, a non-negative integer (default: drawn at "
                               "random and reported)")

    parser = argparse.ArgumentParser(
        prog="fastkappa",
        description="Cohen's kappa and quadratic-weighted kappa (QWK) with confidence "
                    "intervals, on files of any size.",
        epilog="Exit codes: 0 success, 1 the data cannot be scored or the results cannot be "
               "written, 2 usage error, 130 interrupted. Missing values in CSV: empty, NA, "
               "N/A, NaN, nan, None, null, NULL, -, ? and the rest of pandas' na_values.")
    from . import __version__

    parser.add_argument("--version", action="version", version=f"fastkappa {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    demo = sub.add_parser(
        "demo", parents=[common],
        help="score the shipped retinopathy data set (QWK, intervals, comparison)",
        description="Score the simulated diabetic-retinopathy set shipped with fastkappa "
                    "(120,000 eyes, three models) and a published table.")
    demo.add_argument("--n-resamples", type=_at_least(2, "bootstrap replicates"),
                      default=N_RESAMPLES, metavar="B",
                      help=f"bootstrap replicates (default: {N_RESAMPLES})")
    demo.add_argument("--seed", type=_seed, default=0, metavar="N",
                      help="random seed (default: 0)")
    figs = demo.add_mutually_exclusive_group()
    figs.add_argument("--figures", metavar="DIR",
                      help=f"folder for the figures (PNG; default: {DEMO_FIGURES} in the "
                           "current folder; created if missing; needs matplotlib)")
    figs.add_argument("--no-figures", action="store_true", help="save no figures")
    demo.set_defaults(func=_cmd_demo)

    score = sub.add_parser(
        "score", parents=[file_opts, classes, interval, common],
        help="kappa of two label columns, streamed in constant memory",
        description="Kappa between two label columns of a file, read in batches.")
    score.add_argument("--pred", required=True, metavar="COL", help="column of predictions")
    score.add_argument("--weights", choices=WEIGHTS, default="none",
                       help="disagreement weights (default: none; quadratic gives QWK)")
    score.add_argument("--method", choices=METHODS, metavar="METHOD",
                       help=f"add a confidence interval: {', '.join(METHODS)} (default: "
                            "none)")
    score.add_argument("--ci", choices=METHODS, metavar="METHOD", dest="ci_alias",
                       help="deprecated spelling of --method")
    score.add_argument("--clusters", metavar="COL",
                       help="cluster column (e.g. patient id) for the interval")
    score.add_argument("--by", metavar="COL", help="also score each group of this column")
    score.add_argument("--plot", metavar="PATH",
                       help="also save a figure (.png, .svg or .pdf): the confusion matrix, "
                            "the bootstrap distribution with --ci, the groups with --by")
    score.set_defaults(func=_cmd_score)

    compare = sub.add_parser(
        "compare", parents=[file_opts, classes, interval, common],
        help="paired comparison of several prediction columns",
        description="Kappa of each prediction column and paired differences, resampled "
                    "jointly.")
    compare.add_argument("--pred", required=True, nargs="+", metavar="COL",
                         help="two or more prediction columns")
    compare.add_argument("--reference", metavar="COL",
                         help="compare each model with this one only")
    compare.add_argument("--weights", choices=WEIGHTS, default="none",
                         help="disagreement weights (default: none, as in fastkappa.compare; "
                              "quadratic gives QWK)")
    compare.add_argument("--method", choices=METHODS, default="bca",
                         help="interval method (default: bca)")
    compare.add_argument("--clusters", metavar="COL", help="cluster column for resampling")
    compare.add_argument("--p-adjust", choices=("none", "holm"), default="none",
                         help="multiplicity adjustment of the paired p-values")
    compare.add_argument("--plot", metavar="PATH",
                         help="also save a figure (.png, .svg or .pdf): each model's kappa "
                              "and each paired difference with its interval")
    compare.set_defaults(func=_cmd_compare)

    thresholds = sub.add_parser(
        "thresholds", parents=[file_opts, classes, common],
        help="cut points that maximise QWK for a continuous score",
        description="Exact optimal cut points turning a continuous score into classes.")
    thresholds.add_argument("--score", required=True, metavar="COL",
                            help="column of continuous scores")
    thresholds.add_argument("--weights", choices=WEIGHTS, default="quadratic",
                            help="disagreement weights (default: quadratic)")
    thresholds.add_argument("--cv", type=_at_least(2, "folds"), metavar="K",
                            help="also report the K-fold out-of-fold kappa")
    thresholds.add_argument("--seed", type=_seed, default=None, metavar="N",
                            help="random seed for the folds")
    thresholds.add_argument("--plot", metavar="PATH",
                            help="also save a figure (.png, .svg or .pdf): kappa as each cut "
                                 "point moves")
    thresholds.set_defaults(func=_cmd_thresholds)
    return parser


# --------------------------------------------------------------------------- entry


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


class OutputError(Exception):
    """The results cannot be written to standard output (exit code 1)."""


def _error_line(text: str) -> None:
    """Print one line on stderr (a message's own line breaks become spaces)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.write(" ".join(text.split()) + "\n")
        sys.stderr.flush()


def _run(args, prog: str) -> int:
    from ._io import _read_errors

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
        from ._io import _one_line

        name = "stdin" if getattr(args, "file", None) == "-" else getattr(args, "file", "")
        _error_line(f"{prog}: error: cannot read {name}: {_one_line(e)}")
        return 1
    return 0


#: the library's option names as the command line spells them
_CLI_NAMES = (
    ("returning replace_undefined_by=nan", "reporting nan"),
    ("nan_policy='omit'", "--nan-policy omit"),
    ("`labels=[...]`", "--labels"), ("labels=[...]", "--labels"),
    ("`labels=`", "--labels"), ("`labels`", "--labels"),
    ("`n_classes=`", "--n-classes"), ("`n_classes`", "--n-classes"),
    ("`n_resamples`", "--n-resamples"), ("`confidence_level`", "--confidence-level"),
    ("`seed`", "--seed"), ("`method`", "--method"), ("`weights`", "--weights"),
    ("`clusters`", "--clusters"), ("`groups`", "--by"),
    (", or mark rows to drop with `ignore_index=`", ""),
    (" or mark rows to drop with `ignore_index=`", ""),
)


def _cli_wording(text: str) -> str:
    """A library message with its Python option names turned into command-line flags."""
    for py, cli in _CLI_NAMES:
        text = text.replace(py, cli)
    return text.replace("`n_undefined`", "n_undefined (a field of --format json)")


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


# --------------------------------------------------------------------------- output


class Output:
    """What a command produced: text for people, a dict for JSON, rows for CSV."""

    def __init__(self, text: str, data: dict, rows: list[dict]):
        self.text = text
        self.data = data
        self.rows = rows


def _clean(x: Any) -> Any:
    """JSON-ready: NaN/inf as None, NumPy scalars and arrays as Python values."""
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, np.ndarray):
        return _clean(x.tolist())
    if isinstance(x, np.generic):
        return _clean(x.item())
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _render(out: Output, fmt: str) -> str:
    if fmt == "json":
        from . import __version__

        data = {"command": out.data.get("command"), "fastkappa_version": __version__,
                **out.data}  # every JSON output names the version that made it
        return json.dumps(_clean(data), indent=2, allow_nan=False) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        fields: list[str] = []
        for row in out.rows:
            fields.extend(k for k in row if k not in fields)
        writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for row in out.rows:
            writer.writerow({k: _csv_value(v) for k, v in row.items()})
        return buf.getvalue()
    return out.text.rstrip("\n") + "\n"


def _write(out: Output, fmt: str) -> None:
    """Write the output; a closed or full standard output is an :class:`OutputError`."""
    text = _render(out, fmt)
    stream = sys.stdout
    if stream is None:
        raise OutputError("standard output is closed; nothing was written.")
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        _silence_stdout()
        raise OutputError("standard output was closed before all the results were "
                          "written (a pipe whose reader exited?).") from None
    except OSError as e:
        _silence_stdout()
        raise OutputError(f"cannot write the results to standard output: "
                          f"{e.strerror or e}.") from None


def _silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so the interpreter's last flush of
    what could not be written fails silently instead of printing a traceback."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)


def _csv_value(v: Any) -> Any:
    if type(v) in (int, str):  # the common cells, without the generic cleaning
        return v
    v = _clean(v)
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    return v


def _fmt(x: float | None, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "nan"
    return f"{x:.{digits}f}"


def _ci_dict(res) -> dict:
    """The scalar fields of a KappaCI (the bootstrap distribution left out)."""
    keys = ("estimate", "low", "high", "standard_error", "method", "confidence_level",
            "n_resamples", "n_undefined", "standard_error_null", "z", "p_value")
    return {k: _clean(getattr(res, k, None)) for k in keys}


_METHOD_NAMES = {"bca": "BCa", "percentile": "percentile", "basic": "basic",
                 "asymptotic": "asymptotic"}


def _ci_text(res) -> str:
    """Like ``str(KappaCI)`` with four decimals (a CLI reader compares models)."""
    level = f"{100 * res.confidence_level:.10g}%"
    method = _METHOD_NAMES.get(res.method, res.method)
    return (f"kappa = {_fmt(res.estimate)} ({level} CI {_fmt(res.low)} to {_fmt(res.high)}, "
            f"{method})")


def _matrix_text(matrix: np.ndarray, labels: Sequence, row_names: Sequence | None = None
                 ) -> str:
    """A confusion matrix as aligned text; ``row_names`` default to the labels."""
    names = [str(v) for v in labels]
    rows = [str(v) for v in (row_names if row_names is not None else labels)]
    cells = [[f"{v:g}" if isinstance(v, float) else str(v) for v in row] for row in
             matrix.tolist()]
    width = max([len(n) for n in names] + [len(c) for r in cells for c in r] + [3])
    lead = max(len(r) for r in rows)
    lines = [" " * (lead + 2) + " ".join(n.rjust(width) for n in names)]
    for name, row in zip(rows, cells, strict=True):
        lines.append(name.ljust(lead) + "  " + " ".join(c.rjust(width) for c in row))
    return "\n".join(lines)


# --------------------------------------------------------------------------- figures


def _has_matplotlib() -> bool:
    try:  # the package first: a loaded submodule would hide a blocked package
        importlib.import_module("matplotlib")
        importlib.import_module("matplotlib.figure")
    except ImportError:
        return False
    return True


def _check_plot_path(path: str) -> str:
    """Check ``--plot PATH`` before any data is read; a UsageError says what is wrong."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in PLOT_SUFFIXES:
        got = repr(suffix) if suffix else "no suffix"
        raise UsageError(
            f"--plot {path!r}: the file name must end in .png, .svg or .pdf (it sets the "
            f"figure's format); got {got}.")
    if os.path.isdir(path):
        raise UsageError(f"--plot {path!r} is a folder; give a file name such as "
                         f"{os.path.join(path, 'kappa' + suffix)!r}.")
    folder = os.path.dirname(os.path.abspath(path))
    shown = os.path.dirname(path) or os.curdir
    if not os.path.isdir(folder):
        raise UsageError(f"--plot {path!r}: the folder {shown!r} does not exist; create it "
                         "first or choose another path.")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"--plot {path!r}: the folder {shown!r} is not writable.")
    if not _has_matplotlib():
        raise UsageError(f"--plot needs matplotlib, which is not installed; install it "
                         f"with: {_PLOT_INSTALL}")
    return path


def _figure(heights: Sequence[float], width: float = 8.0,
            widths: Sequence[float | None] | None = None):
    """A bare matplotlib Figure (no pyplot) with one Axes per height, stacked.

    Consecutive full-width panels share one grid, so their Axes line up; a
    panel given a width (``widths[i]`` inches, e.g. a square heatmap with its
    colorbar) gets a subfigure of its own, so it does not stretch to the
    width of the others.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, float(sum(heights))), layout="constrained")
    widths = list(widths) if widths else [None] * len(heights)
    if all(w is None for w in widths):
        axes = fig.subplots(len(heights), 1, height_ratios=list(heights), squeeze=False)
        return fig, list(axes[:, 0])
    blocks: list[list[int]] = []  # a narrow panel alone; full-width runs together
    for i, w in enumerate(widths):
        if w is None and blocks and widths[blocks[-1][-1]] is None:
            blocks[-1].append(i)
        else:
            blocks.append([i])
    parts = fig.subfigures(len(blocks), 1, squeeze=False,
                           height_ratios=[sum(heights[i] for i in b) for b in blocks])[:, 0]
    axes = []
    for part, block in zip(parts, blocks, strict=True):
        w = widths[block[0]]
        if w is not None:
            if w < width:
                part = part.subfigures(1, 2, width_ratios=[w, width - w])[0]
            axes.append(part.subplots())
        else:
            sub = part.subplots(len(block), 1, squeeze=False,
                                height_ratios=[heights[i] for i in block])
            axes.extend(sub[:, 0])
    return fig, axes


def _save_figure(fig, path: str) -> str:
    try:
        fig.savefig(path, dpi=FIGURE_DPI, bbox_inches="tight")
    except OSError as e:
        raise DataError(f"cannot write the figure {path!r}: {e.strerror or e}.") from None
    return path


def _score_figure(confusion: np.ndarray, labels: Sequence, weights, names: tuple[str, str],
                  ci=None, by=None):
    """Confusion heatmap; below it the bootstrap distribution (``ci``), the groups (``by``)."""
    import fastkappa.plot as fkplot

    k = len(labels)
    side = min(8.0, 2.8 + 0.5 * k)  # the heatmap's panel: square, plus the colorbar
    heights, widths = [side], [side + 1.6]
    if ci is not None:
        heights.append(3.4)
        widths.append(None)
    if by is not None:
        heights.append(1.6 + 0.36 * (len(by) + 1))
        widths.append(None)
    fig, axes = _figure(heights, width=max(8.0, side + 1.6), widths=widths)
    fkplot.confusion_matrix(confusion=confusion, labels=list(labels), weights=weights,
                            names=names, ax=axes[0])
    if ci is not None:
        fkplot.bootstrap_distribution(ci, ax=axes[1])
    if by is not None:
        fkplot.forest(by, ax=axes[-1])
    return fig


def _comparison_figure(comp):
    """Each model's kappa (forest plot) above the paired differences."""
    import fastkappa.plot as fkplot

    fig, (top, bottom) = _figure([1.6 + 0.36 * len(comp.models),
                                  1.6 + 0.36 * len(comp.pairs)])
    fkplot.forest(comp, ax=top)
    fkplot.differences(comp, ax=bottom)
    return fig


def _thresholds_figure(opt):
    import fastkappa.plot as fkplot

    fig, (ax,) = _figure([4.2], width=7.5)
    fkplot.threshold_curve(opt, ax=ax)
    return fig


def _add_plot(out: Output, path: str, fig) -> Output:
    """Save ``fig`` at ``path`` and say so in the output."""
    _save_figure(fig, path)
    out.data["plot"] = path
    out.text = out.text.rstrip("\n") + f"\nfigure: {path}"
    return out


# --------------------------------------------------------------------------- reading


def _weights(args) -> str | None:
    return None if args.weights == "none" else args.weights


def _class_kw(args) -> dict:
    if args.labels is not None:
        return {"labels": args.labels}
    if args.n_classes is not None:
        return {"n_classes": args.n_classes}
    return {}


def _declared(args) -> np.ndarray | None:
    if args.labels is not None:
        return np.asarray(args.labels, dtype=object if isinstance(args.labels[0], str)
                          else np.int64)
    if args.n_classes is not None:
        return np.arange(args.n_classes)
    return None


def _unique(names: list[str | None]) -> list[str]:
    out: list[str] = []
    for n in names:
        if n is not None and n not in out:
            out.append(n)
    return out


def _progress(args) -> bool:
    return not args.quiet and sys.stderr.isatty()


def _missing_rows(masks: dict[str, np.ndarray | None], row0: int, policy: str):
    """Keep-mask of the rows without missing values (None: all kept); with
    ``--nan-policy raise`` the first missing value in file order is an error."""
    any_missing = None
    first = None  # (row, column)
    for name, m in masks.items():
        if m is None or not m.any():
            continue
        i = int(np.argmax(m))
        if first is None or i < first[0]:
            first = (i, name)
        any_missing = m if any_missing is None else (any_missing | m)
    if first is not None and policy == "raise":
        i, name = first
        raise DataError(
            f"row {row0 + i}: column {name!r} is missing (empty, or a missing-value "
            "token such as NA, NaN, None, null, - or ?); pass --nan-policy omit to skip "
            "rows with a missing value.")
    return None if any_missing is None else ~any_missing


def _explain_update_error(err: ValueError, cols: dict, declared, row0: int,
                          index: np.ndarray | None = None) -> DataError:
    """Turn an accumulator error into one that names the first bad row."""
    if declared is not None:
        for name, col in cols.items():
            hit = first_row_outside(col, declared)
            if hit is not None:
                i, value = hit
                i = int(index[i]) if index is not None else i
                shown = declared.tolist()
                return DataError(
                    f"row {row0 + i}: column {name!r} holds {value!r}, which is not one of "
                    f"the declared classes {shown[:20]}{' ...' if len(shown) > 20 else ''}; "
                    "declare every class with --labels or --n-classes.")
    names = list(cols)
    msg = str(err).replace("`y_true`", repr(names[0])).replace("`y_pred`", repr(names[-1]))
    return DataError(f"in the rows from row {row0}: {msg}")


def _read_columns(args, src, label_cols: list[str], score_cols: list[str] = (),
                  extra_cols: list[str] = ()) -> dict[str, np.ndarray]:
    """Whole columns in memory (compact dtypes), missing rows handled by --nan-policy."""
    needed = _unique([*label_cols, *score_cols, *extra_cols])
    types = {c: "score" for c in score_cols}
    conv = {c: LabelConverter(c, src.fmt) for c in needed if c not in score_cols}
    parts: dict[str, list] = {c: [] for c in needed}
    declared = _declared(args)
    for row0, cols in iter_batches(src, needed, types, progress=_progress(args)):
        values, masks = {}, {}
        for c in needed:
            if c in score_cols:
                values[c], masks[c] = score_values(cols[c], c, row0)
            else:
                values[c], masks[c] = conv[c].convert(cols[c], row0)
        keep = _missing_rows(masks, row0, args.nan_policy)
        index = None
        if keep is not None:
            index = np.flatnonzero(keep)
            values = {c: subset(v, index) for c, v in values.items()}
        _check_kinds(label_cols, values, conv, row0, index)
        if declared is not None:
            for c in label_cols:
                hit = first_row_outside(values[c], declared)
                if hit is not None:
                    i, value = hit
                    rows = int(index[i]) if index is not None else i
                    raise DataError(
                        f"row {row0 + rows}: column {c!r} holds {value!r}, which is not one "
                        f"of the declared classes {declared.tolist()[:20]}; declare every "
                        "class with --labels or --n-classes.")
        for c in needed:
            parts[c].append(_compact(materialize(values[c]) if c not in score_cols
                                     else values[c]))
    out = {}
    for c in needed:
        if parts[c]:
            out[c] = np.concatenate(parts[c])
        else:
            out[c] = np.empty(0)
    if len(out[needed[0]]) == 0:
        raise DataError(f"{src.name} holds no rows to score.")
    return out


def _compact(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu" and len(a):
        lo, hi = a.min(), a.max()
        for dt in (np.int8, np.int16, np.int32):
            info = np.iinfo(dt)
            if info.min <= lo and hi <= info.max:
                return a.astype(dt)
    return a


# --------------------------------------------------------------------------- score

def _length(col) -> int:
    from ._columns import CodesColumn

    return len(col.codes) if isinstance(col, CodesColumn) else len(col)


def _check_kinds(label_cols: list[str], values: dict, conv: dict, row0: int,
                 index: np.ndarray | None) -> None:
    """Every label column holds numbers, or every one strings; else name the first
    row, column and value that breaks this.

    The value named is the first word that is not a number in a column of
    strings (``mild`` among ``1, 2, mild``) when the other columns hold numbers.
    """
    from ._io import _parse_labels

    kinds = {c: conv[c].kind for c in label_cols}
    known = {k for k in kinds.values() if k is not None}
    if len(known) < 2 or _length(values[label_cols[0]]) == 0:
        return
    numeric = next(c for c in label_cols if kinds[c] == "num")
    best = None  # (row index in the batch, column)
    for c in label_cols:
        if kinds[c] != "str":
            continue
        words = materialize(values[c])
        for i, w in enumerate(words.tolist()):
            if best is not None and i >= best[0]:
                break
            if isinstance(w, str) and _parse_labels([w]) is None:
                best = (i, c)
                break
    if best is None:  # every string here looks like a number: name the first row
        best = (0, next(c for c in label_cols if kinds[c] == "str"))
    i, c = best
    value = materialize(subset(values[c], slice(i, i + 1)))[0]
    shown = value.item() if isinstance(value, np.generic) else value
    row = row0 + (int(index[i]) if index is not None else i)
    raise DataError(
        f"row {row}: column {c!r} holds {shown!r}, but column {numeric!r} holds numbers; "
        "label columns must all hold the same kind of value (numbers, or strings): recode "
        "one of them.")


class _ScoreState:
    """What ``score --by`` / ``--clusters`` count as the file streams (no rows kept).

    ``labels`` numbers the classes met; ``groups`` and ``clusters`` number
    the ids of those columns; with both, ``pairs`` numbers (group, cluster)
    pairs.  Each batch adds its (unit, true class, predicted class) counts to
    a :class:`~fastkappa._filecount.CellCounts`.
    """

    def __init__(self, args) -> None:
        from ._filecount import KeyIndex

        self.labels = KeyIndex()
        self.groups = KeyIndex() if args.by else None
        self.clusters = KeyIndex() if args.clusters else None
        self.pairs = KeyIndex() if args.by and args.clusters else None

    @property
    def active(self) -> bool:
        return self.groups is not None or self.clusters is not None

    def new_counts(self):
        from ._filecount import CellCounts

        return CellCounts() if self.active else None

    def add(self, args, values, t, p, cells) -> None:
        ti, pi = self.labels.ids(t), self.labels.ids(p)
        gid = self.groups.ids(values[args.by]) if self.groups is not None else None
        cid = self.clusters.ids(values[args.clusters]) if self.clusters is not None else None
        if gid is not None and cid is not None:
            unit = self.pairs.ids((gid << 32) | cid)
        else:
            unit = gid if gid is not None else cid
        cells.add(unit, ti, pi)

    def pair_parts(self) -> tuple[np.ndarray, np.ndarray]:
        """Group id and cluster id of every pair id."""
        v = np.asarray(self.pairs.values, dtype=np.int64)
        return v >> 32, v & ((1 << 32) - 1)


def _score_batch(args, row0, cols, count, conv, state, cells, declared, needed) -> None:
    """Add one record batch to the overall accumulator (through ``count(t, p)``) and,
    with ``--by`` / ``--clusters``, to the per-unit tables ``cells``."""
    values, masks = {}, {}
    for c in needed:
        values[c], masks[c] = conv[c].convert(cols[c], row0)
    keep = _missing_rows(masks, row0, args.nan_policy)
    index = None
    if keep is not None:
        index = np.flatnonzero(keep)
        values = {c: subset(v, index) for c, v in values.items()}
    _check_kinds([args.true, args.pred], values, conv, row0, index)
    t, p = values[args.true], values[args.pred]
    try:
        count(t, p)
    except DataError:
        raise
    except ValueError as e:
        raise _explain_update_error(e, {args.true: t, args.pred: p}, declared, row0,
                                    index) from None
    if cells is not None:
        state.add(args, values, t, p, cells)


class _Counter:
    """Count each record batch's label pairs into ``acc`` on worker threads.

    The batch is cut into one part per thread; each worker adds its part into
    an accumulator of its own with the serial kernels (they release the GIL),
    and the accumulators are merged into ``acc`` when the file is done.
    Counts are exact integers, so the result does not depend on the number
    of threads.  Idle workers block rather than spin, so they never take a
    core from the file reader; and counting off the reading thread measured
    faster even with one worker.
    """

    def __init__(self, acc, n_threads: int) -> None:
        self.acc = acc
        self.n_threads = max(1, n_threads)
        self.parts = [acc]
        self.pool = None

    def __enter__(self) -> _Counter:
        from concurrent.futures import ThreadPoolExecutor

        self.pool = ThreadPoolExecutor(self.n_threads, thread_name_prefix="fastkappa-count",
                                       initializer=use_serial_kernels)
        self.parts += [copy.deepcopy(self.acc) for _ in range(self.n_threads - 1)]
        return self

    def count(self, t, p) -> None:
        n = _length(t)
        step = max(1, -(-n // self.n_threads))
        futures = [self.pool.submit(acc.update, subset(t, slice(lo, lo + step)),
                                    subset(p, slice(lo, lo + step)))
                   for acc, lo in zip(self.parts, range(0, n, step), strict=False)]
        wait_all(futures)

    def __exit__(self, *exc) -> None:
        self.pool.shutdown()
        if exc[0] is None:
            for other in self.parts[1:]:
                self.acc.merge(other)


class _RowGroupQueue:
    """Hands out work unit numbers in file order; stops at the first failure.

    Each failure is kept with its unit, so that the one reported is the first
    in the file whatever the order in which the workers met them.
    """

    def __init__(self, n: int) -> None:
        self.n = n
        self.next = 0
        self.failures: dict[int, BaseException] = {}
        self.lock = threading.Lock()

    def take(self) -> int | None:
        with self.lock:
            i = self.next
            if i >= self.n or (self.failures and i > min(self.failures)):
                return None
            self.next += 1
            return i

    def stop(self) -> None:
        with self.lock:
            self.n = 0

    def fail(self, i: int, err: BaseException) -> None:
        with self.lock:
            self.failures[i] = err

    def first_failure(self) -> BaseException | None:
        return self.failures[min(self.failures)] if self.failures else None


def _score_row_groups(args, src, units, acc, state, cells, declared, needed,
                      n_threads) -> None:
    """Score a Parquet file's row groups in parallel, into ``acc`` and ``cells``.

    Each worker thread takes the next of ``units`` (consecutive row groups
    holding at least a batch of rows, see :meth:`Source.row_group_units`), decodes it
    alone and counts it into accumulators of its own (the per-unit tables
    ``cells`` are shared, merged under a lock); the accumulators are
    merged at the end (exact integer counts, so the thread count never
    changes a result).  On two cores this keeps both busy without the reader
    and the counting ever waiting for each other, which interleaving them per
    batch cannot.  Memory holds one record batch per worker.
    """
    from concurrent.futures import ThreadPoolExecutor

    todo = _RowGroupQueue(len(units))
    bar = progress_bar(src) if _progress(args) else None

    def work():
        read = src.group_reader()
        mine = copy.deepcopy(acc)
        conv = {c: LabelConverter(c, src.fmt) for c in needed}
        while (i := todo.take()) is not None:
            try:
                row0, members = units[i]
                for batch in read(row0, members, needed):
                    cols = {c: batch.column(batch.schema.get_field_index(c)) for c in needed}
                    _score_batch(args, row0, cols, mine.update, conv, state, cells,
                                 declared, needed)
                    row0 += batch.num_rows
                    if bar is not None:
                        bar.update(batch.num_rows)
            except Exception as e:  # reported by the caller, first in file order
                todo.fail(i, e)
                break
        return mine

    n_workers = min(n_threads, todo.n)
    try:
        with ThreadPoolExecutor(n_workers, thread_name_prefix="fastkappa-read",
                                initializer=use_serial_kernels) as pool:
            futures = [pool.submit(work) for _ in range(n_workers)]
            try:
                done = wait_all(futures)
            except BaseException:  # Ctrl-C: no new units, then out
                todo.stop()
                raise
    finally:
        if bar is not None:
            bar.close()
    err = todo.first_failure()
    if err is not None:
        raise err
    for mine in done:
        acc.merge(mine)


@contextlib.contextmanager
def _serial_kernels():
    """Numba at one thread while the file reader's threads own the cores.

    Counting runs serially per slice anyway; with one thread even the small
    parallel helpers never wait for a worker that the reader keeps busy.
    ``--threads`` (or the default) applies again afterwards, to the intervals.
    """
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield before
    finally:
        numba.set_num_threads(before)


def _interval_method(args) -> str | None:
    """``--method``, or the deprecated ``--ci`` (with a warning saying so)."""
    alias = getattr(args, "ci_alias", None)
    if alias is None:
        return args.method
    if args.method is not None and args.method != alias:
        raise UsageError(f"--ci {alias} and --method {args.method} disagree; --ci is a "
                         "deprecated spelling of --method, so give --method alone.")
    warnings.warn(f"--ci is deprecated; use --method {alias} (the same choices).",
                  FutureWarning, stacklevel=2)
    return alias


def _draw_seed(args, method: str | None) -> int | None:
    """The seed of a bootstrap run: ``--seed``, or one drawn now (and reported)."""
    if method is None or method == "asymptotic":
        return args.seed
    if args.seed is None:
        return int(np.random.SeedSequence().entropy)
    return args.seed


def _provenance(args, method: str | None, seed: int | None) -> dict:
    """What a JSON result records so that it can be reproduced."""
    from . import __version__

    boot = method is not None and method != "asymptotic"
    return {"fastkappa_version": __version__,
            "weights": _weights(args),
            "method": method,
            "confidence_level": args.confidence_level if method is not None else None,
            "n_resamples": args.n_resamples if boot else None,
            "seed": seed if boot else None}


def _cmd_score(args) -> Output:
    import fastkappa as fk

    weights = _weights(args)
    method = _interval_method(args)
    seed = _draw_seed(args, method)
    plot = _check_plot_path(args.plot) if args.plot else None
    src = open_source(args.file, sep=args.sep)
    needed = _unique([args.true, args.pred, args.clusters, args.by])
    try:
        acc = fk.CohenKappa(weights=weights, **_class_kw(args))
    except ValueError as e:
        raise UsageError(_cli_wording(str(e))) from None
    declared = _declared(args)
    conv = {c: LabelConverter(c, src.fmt) for c in needed}
    state = _ScoreState(args)
    cells = state.new_counts()
    with _serial_kernels() as n_threads:
        units = src.row_group_units() if src.row_groups else []
        if n_threads > 1 and len(units) > 1:
            _score_row_groups(args, src, units, acc, state, cells, declared, needed,
                              n_threads)
        else:
            with _Counter(acc, n_threads) as counter:
                for row0, cols in iter_batches(src, needed, progress=_progress(args)):
                    _score_batch(args, row0, cols, counter.count, conv, state, cells,
                                 declared, needed)
    if acc.n_rows == 0:
        raise DataError(f"{src.name} holds no rows to score"
                        + (" after dropping rows with missing values"
                           if args.nan_policy == "omit" else "") + ".")
    labels = acc.labels
    kappa = acc.compute()
    tables = _UnitTables(state, cells, labels) if cells is not None else None
    ci = None
    if method is not None:
        if args.clusters:
            ci = tables.cluster_ci(None, weights, method, args.confidence_level,
                                   args.n_resamples, seed)
        else:
            ci = acc.ci(method=method, confidence_level=args.confidence_level,
                        n_resamples=args.n_resamples, seed=seed)
    by = (_score_groups(args, tables, weights, method, seed, labels, kappa) if args.by
          else None)
    out = _score_output(args, src, acc, kappa, ci, by, method, seed)
    if plot is None:
        return out
    if by is not None and len(by.groups) > MAX_PLOTTED_GROUPS:
        out.text += (f"\n(the figure leaves out the {len(by.groups):,} groups of "
                     f"{args.by!r}: a forest plot shows at most {MAX_PLOTTED_GROUPS})")
        by = None
    fig = _score_figure(acc.confusion, labels.tolist(), weights, (args.true, args.pred),
                        ci=ci, by=by)
    return _add_plot(out, plot, fig)


class _UnitTables:
    """The streamed (unit, true, predicted) counts on the final class scale."""

    def __init__(self, state: _ScoreState, cells, labels: np.ndarray) -> None:
        from ._filecount import class_positions

        unit, ti, pi, count = cells.entries()
        pos = class_positions(state.labels, labels)
        self.k = len(labels)
        self.t, self.p, self.count = pos[ti], pos[pi], count
        self.group = self.cluster = None
        if state.pairs is not None:
            gid, cid = state.pair_parts()
            self.group, self.cluster = gid[unit], cid[unit]
        elif state.groups is not None:
            self.group = unit
        else:
            self.cluster = unit
        self.state = state

    def group_order(self) -> tuple[list, np.ndarray]:
        """Group keys sorted as :func:`fastkappa.kappa_by_group` sorts them, and the
        rank of every group id."""
        keys = self.state.groups.values
        order = sorted(range(len(keys)), key=lambda j: keys[j])
        rank = np.empty(len(keys), dtype=np.int64)
        rank[order] = np.arange(len(keys))
        return [keys[j] for j in order], rank

    def group_tables(self, rank: np.ndarray) -> np.ndarray:
        """(G, K, K) int64 tables, groups in sorted order."""
        k = self.k
        g = len(rank)
        flat = np.zeros(g * k * k, dtype=np.int64)
        np.add.at(flat, (rank[self.group] * k + self.t) * k + self.p, self.count)
        return flat.reshape(g, k, k)

    def cluster_ci(self, rows, weights, method, confidence_level, n_resamples, seed):
        """:func:`fastkappa.kappa_ci` with ``clusters`` from the per-cluster tables
        (``rows`` selects entries, None for all): the same units, so the same
        interval for the same seed."""
        import dataclasses

        from . import _weights as weight_module
        from .bootstrap import (
            DENSE_CELLS_MAX,
            _ci_from_units,
            _kappa_ci_iv,
            _single_model_cells,
            units_from_clusters,
        )

        method, cl, n_resamples, seq = _kappa_ci_iv(method, confidence_level, n_resamples,
                                                    seed)
        k = self.k
        t, p, count, cluster = self.t, self.p, self.count, self.cluster
        if rows is not None:
            t, p, count, cluster = t[rows], p[rows], count[rows], cluster[rows]
        cells = t * k + p
        ids, codes = np.unique(cluster, return_inverse=True)
        if len(ids) < 2:
            raise DataError(
                f"an interval that resamples clusters needs at least 2 clusters; "
                f"{'this group holds' if rows is not None else 'the data hold'} "
                f"{len(ids)} (leave out --clusters to treat rows as independent).")
        if k * k <= DENSE_CELLS_MAX:
            cell_t, cell_p = _single_model_cells(k)
        else:
            used, cells = np.unique(cells, return_inverse=True)
            cell_t, cell_p = used // k, (used % k)[:, None]
        units = units_from_clusters(cells, count.astype(np.float64), codes.reshape(-1),
                                    len(ids), cell_t, cell_p, k)
        units = dataclasses.replace(units, n_rows=int(count.sum()))
        wmat = weight_module.weight_matrix(k, weights)
        return _ci_from_units(units, wmat, method, cl, n_resamples, seq, stacklevel=2)


def _score_groups(args, tables: _UnitTables, weights, method, seed, labels, overall):
    """``score --by`` as a :class:`~fastkappa.groups.KappaByGroup`: the group
    kernel's kappa of every table, and intervals seeded as
    :func:`fastkappa.kappa_by_group` seeds them (one stream per group,
    spawned from ``seed``)."""
    import fastkappa as fk

    from . import _weights as weight_module
    from .exceptions import UndefinedKappaWarning
    from .groups import KappaByGroup, _group_kappas

    keys, rank = tables.group_order()
    confusion = tables.group_tables(rank)
    g, k = len(keys), tables.k
    wmat = weight_module.weight_matrix(k, weights)
    kappa, n = _group_kappas(confusion, wmat)
    undefined = int(np.isnan(kappa).sum())
    if undefined:
        warnings.warn(f"kappa is undefined in {undefined} of {g} groups of {args.by!r}; "
                      "they are reported as nan.", UndefinedKappaWarning, stacklevel=2)
    low = high = None
    if method is not None:
        low, high = np.full(g, np.nan), np.full(g, np.nan)
        seeds = np.random.SeedSequence(seed).spawn(g)
        if tables.cluster is not None:
            order = np.argsort(rank[tables.group], kind="stable")
            bounds = np.searchsorted(rank[tables.group][order], np.arange(g + 1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # per-group degenerate notes
            for i in range(g):
                if confusion[i].sum() == 0:
                    continue
                if tables.cluster is None:
                    res = fk.kappa_ci_from_confusion(
                        confusion[i], weights=weights, method=method,
                        confidence_level=args.confidence_level,
                        n_resamples=args.n_resamples, seed=seeds[i])
                else:
                    try:
                        res = tables.cluster_ci(order[bounds[i]:bounds[i + 1]], weights,
                                                method, args.confidence_level,
                                                args.n_resamples, seeds[i])
                    except DataError:  # one cluster in this group: no interval
                        continue
                low[i], high[i] = res.low, res.high
    group_keys = np.empty(g, dtype=object)
    group_keys[:] = keys
    return KappaByGroup(
        groups=group_keys, kappa=kappa, n=n.astype(np.int64), overall=float(overall),
        confusion=confusion, classes=labels,
        weights=weights, low=low, high=high, method=method,
        confidence_level=args.confidence_level if method is not None else None)


def _sort_key(v):
    return (isinstance(v, str), v)


_WEIGHT_NAMES = {None: "unweighted", "linear": "linear-weighted",
                 "quadratic": "quadratic-weighted (QWK)"}


def _resampling_note(method: str | None, n_resamples: int, seed) -> str:
    """"10,000 resamples, seed 12" for a bootstrap, "" otherwise."""
    if method is None or method == "asymptotic":
        return ""
    return f"{n_resamples:,} resamples, seed {seed}"


def _score_output(args, src, acc, kappa, ci, by, method, seed) -> Output:
    labels = acc.labels
    weights = _weights(args)
    group_results = [] if by is None else [
        (key, int(by.n[i]), float(by.kappa[i]),
         None if by.low is None else (float(by.low[i]), float(by.high[i])))
        for i, key in enumerate(by.groups.tolist())]
    data = {
        "command": "score",
        **_provenance(args, method, seed),
        "file": src.name,
        "y_true": args.true,
        "y_pred": args.pred,
        "n_rows": acc.n_rows,
        "labels": labels,
        "kappa": kappa,
        "ci": _ci_dict(ci) if ci is not None else None,
        "clusters": args.clusters,
        "confusion": acc.confusion,
    }
    if args.by:
        data["by"] = args.by
        data["groups"] = [
            {"group": key, "n_rows": n, "kappa": k,
             "ci": None if c is None else {"low": c[0], "high": c[1], "method": method,
                                           "confidence_level": args.confidence_level}}
            for key, n, k, c in group_results]

    def row(level, group, n, k, low, high, se):
        r = {"level": level, "group": group, "n_rows": n, "kappa": k, "weights": weights,
             "method": method}
        if method is not None:
            r.update(low=low, high=high, standard_error=se,
                     confidence_level=args.confidence_level)
        return r

    overall = (ci.low, ci.high, ci.standard_error) if ci is not None else (None,) * 3
    rows = [row("overall", "", acc.n_rows, kappa, *overall)]
    rows += [row("group", key, n, k, *(c if c is not None else (None, None)), None)
             for key, n, k, c in group_results]
    lines = [f"{src.name}: {acc.n_rows:,} rows, {len(labels)} classes {labels.tolist()[:20]}"
             f"{' ...' if len(labels) > 20 else ''}",
             f"{_WEIGHT_NAMES[weights]} kappa of {args.pred!r} against {args.true!r}"]
    lines.append(_ci_text(ci) if ci is not None else f"kappa = {_fmt(kappa)}")
    note = _resampling_note(method, args.n_resamples, seed)
    if ci is not None and (note or args.clusters):
        parts = [note] if note else []
        if args.clusters:
            parts.append(f"clusters of {args.clusters!r} resampled")
        lines.append(f"({'; '.join(parts)})")
    if len(labels) <= 12:
        lines += ["", f"confusion matrix (rows: {args.true}, columns: {args.pred}):",
                  _matrix_text(acc.confusion, labels.tolist())]
    if group_results:
        lines += ["", f"by {args.by!r}:"]
        width = max(len(str(k)) for k, *_ in group_results)
        width = max(width, 5)
        head = f"{'group'.ljust(width)}  {'rows':>10}  {'kappa':>7}"
        if method is not None:
            head += f"  {'low':>7}  {'high':>7}"
        lines.append(head)
        for key, n, k, c in group_results:
            line = f"{str(key).ljust(width)}  {n:>10,}  {_fmt(k):>7}"
            if c is not None:
                line += f"  {_fmt(c[0]):>7}  {_fmt(c[1]):>7}"
            lines.append(line)
    return Output("\n".join(lines), data, rows)


# --------------------------------------------------------------------------- compare


def _p_at_floor(pr, method: str) -> bool:
    """A bootstrap p-value at its floor (about 2 / B): only a bound is known."""
    if method == "asymptotic" or pr.p_value is None or not math.isfinite(pr.p_value):
        return False
    b = len(pr.distribution) if pr.distribution is not None else 0
    return b > 1 and pr.p_value <= 2.0 / b * (1 + 1e-9)


def _p_text(p: float, bound: bool) -> str:
    return f"p < {p:.4g}" if bound else f"p = {p:.4g}"


def _shown(name: str) -> str:
    """A column name as printed: quoted when spaces at its ends (or nothing) would
    hide it, so two columns never print alike."""
    return repr(name) if name != name.strip() or not name else name


def _pairs_text(comp, method: str) -> list[str]:
    lines = []
    for pr in comp.pairs:
        bound = _p_at_floor(pr, method)
        p_adj = pr.p_adjusted
        adj = ("" if p_adj is None or p_adj == pr.p_value
               else f", adjusted {_p_text(p_adj, bound)}")
        lines.append(f"  {_shown(pr.a)} - {_shown(pr.b)}: {pr.difference:+.4f} "
                     f"({_fmt(pr.low)} to {_fmt(pr.high)}), {_p_text(pr.p_value, bound)}{adj}")
    return lines


def _pair_dict(pr, method: str) -> dict:
    """A paired difference for JSON; a p-value at its bootstrap floor is flagged as a
    bound (the true p is at most that)."""
    keys = ("a", "b", "difference", "low", "high", "p_value", "p_adjusted")
    out = {k: _clean(getattr(pr, k, None)) for k in keys}
    bound = _p_at_floor(pr, method)
    out["p_value_is_bound"] = bound
    out["p_adjusted_is_bound"] = bound and pr.p_adjusted is not None
    return out


def _cmd_compare(args) -> Output:
    import fastkappa as fk

    if len(args.pred) < 2:
        raise UsageError("compare needs two or more --pred columns.")
    if len(set(args.pred)) != len(args.pred):
        raise UsageError("each --pred column may appear once.")
    if args.reference is not None and args.reference not in args.pred:
        raise UsageError(f"--reference {args.reference!r} must be one of the --pred columns "
                         f"{args.pred}.")
    method = args.method
    seed = _draw_seed(args, method)
    plot = _check_plot_path(args.plot) if args.plot else None
    src = open_source(args.file, sep=args.sep)
    label_cols = _unique([args.true, *args.pred])
    cols = _read_columns(args, src, label_cols, extra_cols=_unique([args.clusters]))
    preds = {name: cols[name] for name in args.pred}
    weights = _weights(args)
    comp = fk.compare(
        cols[args.true], preds, weights=weights, method=method,
        confidence_level=args.confidence_level, n_resamples=args.n_resamples,
        seed=seed, clusters=cols[args.clusters] if args.clusters else None,
        reference=args.reference, p_adjust=None if args.p_adjust == "none" else args.p_adjust,
        **_class_kw(args))
    n = len(cols[args.true])
    data = {
        "command": "compare", **_provenance(args, method, seed),
        "p_adjust": None if args.p_adjust == "none" else args.p_adjust,
        "file": src.name, "y_true": args.true, "n_rows": n,
        "clusters": args.clusters,
        "models": {name: _ci_dict(res) for name, res in comp.models.items()},
        "pairs": [_pair_dict(pr, method) for pr in comp.pairs],
    }
    rows = [{"kind": "model", "model": name, "estimate": res.estimate, "low": res.low,
             "high": res.high, "p_value": "", "p_value_is_bound": "", "p_adjusted": "",
             "weights": weights, "method": res.method,
             "confidence_level": res.confidence_level}
            for name, res in comp.models.items()]
    rows += [{"kind": "difference", "model": f"{pr.a} - {pr.b}", "estimate": pr.difference,
              "low": pr.low, "high": pr.high, "p_value": pr.p_value,
              "p_value_is_bound": _p_at_floor(pr, method), "p_adjusted": pr.p_adjusted,
              "weights": weights, "method": method,
              "confidence_level": args.confidence_level}
             for pr in comp.pairs]
    note = _resampling_note(method, args.n_resamples, seed)
    lines = [f"{src.name}: {n:,} rows; {_WEIGHT_NAMES[weights]} kappa against "
             f"{args.true!r}, {_METHOD_NAMES[method]} intervals"
             + (f" ({note})" if note else "")
             + (f", clusters {args.clusters!r}" if args.clusters else "")]
    width = max(len(_shown(m)) for m in comp.models)
    for name, res in comp.models.items():
        lines.append(f"  {_shown(name).ljust(width)}  {_ci_text(res)}")
    lines += ["paired differences:", *_pairs_text(comp, method)]
    out = Output("\n".join(lines), data, rows)
    return out if plot is None else _add_plot(out, plot, _comparison_figure(comp))


# --------------------------------------------------------------------------- thresholds


def _cmd_thresholds(args) -> Output:
    import fastkappa as fk

    plot = _check_plot_path(args.plot) if args.plot else None
    src = open_source(args.file, sep=args.sep)
    cols = _read_columns(args, src, [args.true], score_cols=[args.score])
    opt = fk.ThresholdOptimizer(weights=_weights(args), cv=args.cv, seed=args.seed,
                                **_class_kw(args))
    opt.fit(cols[args.true], cols[args.score])
    th = np.asarray(opt.thresholds_, dtype=np.float64)
    cv_qwk = getattr(opt, "cv_qwk_", None) if args.cv else None
    n = len(cols[args.true])
    data = {"command": "thresholds", "file": src.name, "y_true": args.true,
            "score": args.score, "n_rows": n,
            "weights": None if args.weights == "none" else args.weights,
            "thresholds": th, "kappa": float(opt.qwk_),
            "cv": args.cv, "cv_kappa": None if cv_qwk is None else float(cv_qwk)}
    rows = [{"cut": i + 1, "threshold": float(v)} for i, v in enumerate(th)]
    lines = [f"{src.name}: {n:,} rows; cut points for {args.score!r} against {args.true!r}",
             "thresholds: " + ", ".join(f"{v:.6g}" for v in th),
             f"in-sample kappa = {_fmt(float(opt.qwk_))}"]
    if cv_qwk is not None:
        lines.append(f"{args.cv}-fold out-of-fold kappa = {_fmt(float(cv_qwk))}")
    out = Output("\n".join(lines), data, rows)
    return out if plot is None else _add_plot(out, plot, _thresholds_figure(opt))


# --------------------------------------------------------------------------- demo


def _cmd_demo(args) -> Output:
    import fastkappa as fk

    from .data import GRADE_NAMES, load_fleiss_1969, load_retinopathy

    folder, no_figures = _demo_folder(args)
    d = load_retinopathy()
    y = d["y_true"]
    patient = d["patient_id"]
    models = {m: d[m] for m in ("model_a", "model_b", "model_c")}
    k = len(GRADE_NAMES)
    common = {"weights": "quadratic", "n_classes": k}
    boot = {"n_resamples": args.n_resamples, "seed": args.seed}
    results = {}
    for name, pred in models.items():
        results[name] = fk.kappa_ci(y, pred, method="bca", clusters=patient, **common, **boot)
    best = max(results, key=lambda m: results[m].estimate)
    comp = fk.compare(y, models, method="bca", clusters=patient, p_adjust="holm",
                      **common, **boot)
    cm = fk.confusion_matrix(y, models[best], n_classes=k)
    table = load_fleiss_1969()
    pub = fk.kappa_ci_from_confusion(table["table"], method="asymptotic")

    data = {
        "command": "demo",
        "fastkappa_version": fk.__version__, "weights": "quadratic", "method": "bca",
        "confidence_level": 0.95, "n_resamples": args.n_resamples, "seed": args.seed,
        "data": {"rows": len(y), "patients": len(np.unique(patient)),
                 "grades": list(GRADE_NAMES), "prevalence": np.bincount(y, minlength=k) / len(y)},
        "models": {m: _ci_dict(r) for m, r in results.items()},
        "comparison": [_pair_dict(pr, "bca") for pr in comp.pairs],
        "best_model": best,
        "confusion": cm,
        "published_table": {"citation": table["citation"], "table": table["table"],
                            "kappa_published": table["kappa"], **_ci_dict(pub)},
    }
    qwk = {"weights": "quadratic", "method": "bca"}
    rows = [{"kind": "model", "name": m, "estimate": r.estimate, "low": r.low, "high": r.high,
             "p_value": "", "p_value_is_bound": "", **qwk} for m, r in results.items()]
    rows += [{"kind": "difference", "name": f"{pr.a} - {pr.b}", "estimate": pr.difference,
              "low": pr.low, "high": pr.high, "p_value": pr.p_adjusted,
              "p_value_is_bound": _p_at_floor(pr, "bca"), **qwk}
             for pr in comp.pairs]
    figures = _demo_figures(folder, y, d["score_a"], results, comp, cm, best,
                            k) if folder is not None else []
    data["figures"] = figures
    data["figures_folder"] = folder
    data["no_figures"] = no_figures
    rows.append({"kind": "published", "name": "Fleiss, Cohen & Everitt 1969",
                 "estimate": pub.estimate, "low": pub.low, "high": pub.high, "p_value": "",
                 "p_value_is_bound": "", "weights": None, "method": "asymptotic"})
    prev = ", ".join(f"{g} {100 * v:.1f}%" for g, v in zip(
        GRADE_NAMES, np.bincount(y, minlength=k) / len(y), strict=True))
    lines = [
        "fastkappa demo: simulated diabetic-retinopathy screening set (ships with fastkappa)",
        f"{len(y):,} eyes of {len(np.unique(patient)):,} patients, grades 0-4: {prev}",
        "",
        f"quadratic-weighted kappa (QWK), 95% BCa intervals, {args.n_resamples} resamples "
        "of patients (two eyes each):",
    ]
    width = max(len(m) for m in results)
    for m, r in results.items():
        lines.append(f"  {m.ljust(width)}  {_ci_text(r)}")
    lines += ["", "paired differences in QWK (same eyes, patients resampled jointly; "
                  "Holm-adjusted p):", *_pairs_text(comp, "bca")]
    lines += ["", f"confusion matrix of the best model, {best} "
                  f"(rows: reference grade, columns: {best}):",
              _matrix_text(cm, range(k), [f"{i} {g}" for i, g in enumerate(GRADE_NAMES)]),
              "",
              "published table: Fleiss, Cohen & Everitt (1969), 200 subjects, 3 categories",
              f"  unweighted kappa: {_ci_text(pub)}  (published: 3/7 = {table['kappa']:.4f})"]
    if figures:
        lines += ["", f"figures saved in {os.path.join(folder, '')}: "
                      + ", ".join(os.path.basename(f) for f in figures)]
    elif not args.no_figures:
        lines += ["", f"no figures: {no_figures}."]
        if args.format != "text":  # the note would be lost in JSON or CSV on stdout
            print(f"fastkappa demo: note: no figures: {no_figures}.", file=sys.stderr)
    return Output("\n".join(lines), data, rows)


def _demo_folder(args) -> tuple[str | None, str | None]:
    """The folder for the demo's figures (created), or None and why there are none.

    ``--figures DIR`` that cannot be honoured is a usage error (exit 2); the
    default folder only gives a note, so the demo runs without matplotlib or
    in a read-only folder.
    """
    if args.no_figures:
        return None, "--no-figures was given"
    explicit = args.figures is not None
    folder = args.figures if explicit else DEMO_FIGURES
    if not _has_matplotlib():
        if explicit:
            raise UsageError(f"--figures needs matplotlib, which is not installed; install "
                             f"it with: {_PLOT_INSTALL}")
        return None, f"matplotlib is not installed ({_PLOT_INSTALL} adds it)"
    problem = None
    if os.path.exists(folder) and not os.path.isdir(folder):
        problem = f"{folder!r} is a file, not a folder"
    else:
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as e:
            problem = f"cannot create the folder {folder!r} ({e.strerror or e})"
        else:
            if not os.access(folder, os.W_OK):
                problem = f"the folder {folder!r} is not writable"
    if problem is None:
        return folder, None
    if explicit:
        raise UsageError(f"--figures {folder!r}: {problem}.")
    return None, f"{problem}; name another folder with --figures DIR"


#: the demo's figures, in the order it saves them
DEMO_FIGURE_FILES = ("comparison.png", "confusion_matrix.png", "bootstrap.png",
                     "thresholds.png")


def _demo_figures(folder, y, score, results, comp, cm, best, k) -> list[str]:
    """Save the demo's figures as PNG files in ``folder``; return their paths.

    ``comparison.png`` is what ``fastkappa compare --plot`` draws (the models
    above their paired differences); ``confusion_matrix.png`` and
    ``bootstrap.png`` what ``fastkappa score --ci --plot`` draws, one panel
    each; ``thresholds.png`` what ``fastkappa thresholds --plot`` draws for
    model_a's continuous score.
    """
    import fastkappa as fk
    import fastkappa.plot as fkplot

    from .data import GRADE_NAMES

    def save(fig, name: str) -> str:
        return _save_figure(fig, os.path.join(folder, name))

    comparison, confusion, boot, curve = DEMO_FIGURE_FILES
    fig = _comparison_figure(comp)
    saved = [save(fig, comparison)]
    fig, (ax,) = _figure([5.2], width=7.0)
    fkplot.confusion_matrix(confusion=cm, labels=list(GRADE_NAMES), weights="quadratic",
                            names=("grade", best), ax=ax)
    saved.append(save(fig, confusion))
    fig, (ax,) = _figure([3.6], width=7.0)
    fkplot.bootstrap_distribution(results[best], ax=ax)
    ax.set_title(f"{best}: {ax.get_title()} (patients resampled)", fontsize="medium")
    saved.append(save(fig, boot))
    opt = fk.ThresholdOptimizer(n_classes=k).fit(y, np.asarray(score, dtype=np.float64))
    saved.append(save(_thresholds_figure(opt), curve))
    return saved
