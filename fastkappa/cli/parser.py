"""The argument parser of the ``fastkappa`` command (types, options, help)."""

from __future__ import annotations

import argparse
import copy

from .._core.intervals import METHODS as _API_METHODS
from .._io import CommandLineInt

FORMATS = ("text", "json", "csv")
WEIGHTS = ("none", "linear", "quadratic")
#: interval methods, as the library lists them
METHODS = _API_METHODS
#: the library's default number of bootstrap replicates (fastkappa.kappa_ci)
N_RESAMPLES = 10_000
#: where ``fastkappa demo`` saves its figures unless ``--figures DIR`` is given
DEMO_FIGURES = "fastkappa-demo-figures"
#: many-rater coefficients, as :func:`fastkappa.agreement` names them
COEFFICIENTS = ("percent_agreement", "fleiss_kappa", "conger_kappa", "gwet_ac",
                "brennan_prediger", "krippendorff_alpha", "light_kappa")
#: Krippendorff's levels of measurement
LEVELS = ("nominal", "ordinal", "interval", "ratio")


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


def _split_labels(text: str) -> list[str] | None:
    """``text`` split at its commas, CSV-style: a label in double quotes keeps its
    commas and spaces (``""`` is a quote), others are stripped; None when a quote
    is not closed or text follows one."""
    out, i, n = [], 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i < n and text[i] == '"':
            j, piece = i + 1, []
            while True:
                k = text.find('"', j)
                if k < 0:
                    return None
                piece.append(text[j:k])
                if text.startswith('"', k + 1):  # "" inside quotes: a quote
                    piece.append('"')
                    j = k + 2
                    continue
                break
            i = k + 1
            while i < n and text[i].isspace():
                i += 1
            if i < n and text[i] != ",":
                return None
            out.append("".join(piece))
        else:
            k = text.find(",", i)
            k = n if k < 0 else k
            out.append(text[i:k].strip())
            i = k
        if i >= n:
            return out
        i += 1  # the comma


def _label_list(text: str) -> list:
    items = _split_labels(text)
    if items is None:
        raise argparse.ArgumentTypeError(
            f"a quote in {text!r} is not closed, or text follows it; put a label that "
            'holds commas in double quotes, e.g. \'"a,b",c\'')
    if not text.strip() or any(s == "" for s in items):
        raise argparse.ArgumentTypeError(
            f"expected comma-separated class labels such as 0,1,2,3,4; got {text!r}")
    if len(set(items)) != len(items):
        twice = next(s for s in items if items.count(s) > 1)
        raise argparse.ArgumentTypeError(f"each class may appear once; {twice!r} is repeated "
                                         f"in {text!r}")
    try:
        values = [CommandLineInt(s) for s in items]
    except ValueError:
        return items
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"each class may appear once; got {text!r}")
    return values


def _label_value(text: str):
    """One class label: an integer when it reads as one (the typed text kept for a
    file that stores its labels as text), else the string."""
    try:
        return CommandLineInt(text)
    except ValueError:
        return text


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

    rows = argparse.ArgumentParser(add_help=False)
    rows.add_argument("--ignore-index", type=_label_value, metavar="VALUE",
                      help="drop the rows where either label equals VALUE (as ignore_index=)")
    true_rows = argparse.ArgumentParser(add_help=False)  # thresholds: one label column
    true_rows.add_argument("--ignore-index", type=_label_value, metavar="VALUE",
                           help="drop the rows whose --true label equals VALUE (as "
                                "ThresholdOptimizer(ignore_index=))")
    row_weights = argparse.ArgumentParser(add_help=False)
    wgt = row_weights.add_mutually_exclusive_group()
    wgt.add_argument("--sample-weight", metavar="COL",
                     help="column of row weights (as sample_weight=)")
    wgt.add_argument("--frequency-weight", metavar="COL",
                     help="column of whole-number row counts: a row stands for that many "
                          "rows (as frequency_weight=)")

    classes = argparse.ArgumentParser(add_help=False)
    grp = classes.add_mutually_exclusive_group()
    grp.add_argument("--labels", type=_label_list, metavar="L1,L2,...",
                     help="the classes in scale order (declares unobserved ones too); "
                          "a class holding commas goes in double quotes: '\"a,b\",c'")
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
    from .. import __version__
    from .commands import agreement as cmd_agreement
    from .commands import compare as cmd_compare
    from .commands import demo as cmd_demo
    from .commands import score as cmd_score
    from .commands import thresholds as cmd_thresholds
    from .commands import warmup as cmd_warmup

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
    demo.set_defaults(func=cmd_demo.run)

    warm = sub.add_parser(
        "warmup", parents=[common],
        help="compile and cache every kernel now (for Docker images and CI caches)",
        description="Run every entry point on small synthetic data so that numba compiles "
                    "every kernel and stores it in fastkappa's cache folder "
                    "($FASTKAPPA_CACHE_DIR, $NUMBA_CACHE_DIR, or the per-user cache folder); "
                    "later processes load the kernels instead of compiling them. Prints "
                    "what it compiled and how long each step took.")
    warm.set_defaults(func=cmd_warmup.run)

    score = sub.add_parser(
        "score", parents=[file_opts, rows, row_weights, classes, interval, common],
        help="kappa of two label columns, streamed in constant memory",
        description="Kappa between two label columns of a file, read in batches.")
    score.add_argument("--pred", required=True, metavar="COL", help="column of predictions")
    score.add_argument("--weights", type=str.lower, choices=WEIGHTS, default="none",
                       help="disagreement weights (default: none; quadratic gives QWK)")
    score.add_argument("--method", type=str.lower, choices=METHODS, metavar="METHOD",
                       help=f"add a confidence interval: {', '.join(METHODS)} (default: "
                            "none)")
    score.add_argument("--ci", type=str.lower, choices=METHODS, metavar="METHOD", dest="ci_alias",
                       help="deprecated spelling of --method")
    score.add_argument("--clusters", metavar="COL",
                       help="cluster column (e.g. patient id) for the interval")
    score.add_argument("--by", metavar="COL", help="also score each group of this column")
    score.add_argument("--plot", metavar="PATH",
                       help="also save a figure (.png, .svg or .pdf): the confusion matrix, "
                            "the bootstrap distribution with --method, the groups with --by")
    score.add_argument("--normalize", choices=("true", "pred", "all"),
                       help="with --plot: show the confusion matrix as shares of each true "
                            "class (true), predicted class (pred) or the total (all)")
    score.add_argument("--class-names", type=_label_list, metavar="A,B,...",
                       help="with --plot: names of the classes on the confusion matrix's "
                            "axes, in class order")
    score.set_defaults(func=cmd_score.run)

    compare = sub.add_parser(
        "compare", parents=[file_opts, rows, row_weights, classes, interval, common],
        help="paired comparison of several prediction columns",
        description="Kappa of each prediction column and paired differences, resampled "
                    "jointly.")
    compare.add_argument("--pred", required=True, nargs="+", metavar="COL",
                         help="two or more prediction columns")
    compare.add_argument("--reference", metavar="COL",
                         help="compare each model with this one only")
    compare.add_argument("--weights", type=str.lower, choices=WEIGHTS, default="none",
                         help="disagreement weights (default: none, as in fastkappa.compare; "
                              "quadratic gives QWK)")
    compare.add_argument("--method", type=str.lower, choices=METHODS, default="bca",
                         help="interval method (default: bca)")
    compare.add_argument("--clusters", metavar="COL", help="cluster column for resampling")
    compare.add_argument("--p-adjust", choices=("none", "holm"), default="none",
                         help="multiplicity adjustment of the paired p-values")
    compare.add_argument("--plot", metavar="PATH",
                         help="also save a figure (.png, .svg or .pdf): each model's kappa "
                              "and each paired difference with its interval")
    compare.set_defaults(func=cmd_compare.run)

    # `thresholds --apply` cuts a score column with known cut points: no --true needed
    thresholds_file = copy.deepcopy(file_opts)
    for action in thresholds_file._actions:
        if action.dest == "true":
            action.required = False
            action.help = "column of reference labels (required unless --apply)"
    thresholds = sub.add_parser(
        "thresholds", parents=[thresholds_file, true_rows, row_weights, classes, common],
        help="cut points that maximise QWK for a continuous score, or apply known ones",
        description="Exact optimal cut points turning a continuous score into classes; "
                    "with --apply, the classes of each row under known cut points.")
    thresholds.add_argument("--score", required=True, metavar="COL",
                            help="column of continuous scores")
    thresholds.add_argument("--weights", type=str.lower, choices=WEIGHTS, default="quadratic",
                            help="disagreement weights (default: quadratic)")
    thresholds.add_argument("--cv", type=_at_least(2, "folds"), metavar="K",
                            help="also report the K-fold out-of-fold kappa")
    thresholds.add_argument("--seed", type=_seed, default=None, metavar="N",
                            help="random seed for the folds")
    thresholds.add_argument("--groups", metavar="COL",
                            help="with --cv: keep each group of this column (e.g. patient) "
                                 "in one fold")
    thresholds.add_argument("--apply", metavar="CUTS",
                            help="cut the --score column with known cut points instead of "
                                 "tuning them: comma-separated numbers such as 0.5,1.5,2.5, "
                                 "or a JSON file written by `fastkappa thresholds --format "
                                 "json`; writes one label per row as CSV (the classes come "
                                 "from --labels, --n-classes, the JSON file, or are 0..K-1)")
    thresholds.add_argument("--id", metavar="COL",
                            help="with --apply: copy this column (e.g. a row id) beside each "
                                 "label")
    thresholds.add_argument("--plot", metavar="PATH",
                            help="also save a figure (.png, .svg or .pdf): kappa as each cut "
                                 "point moves")
    thresholds.set_defaults(func=cmd_thresholds.run)

    agree = sub.add_parser(
        "agreement", parents=[classes, interval, common],
        help="agreement among many raters (Fleiss, Conger, Gwet, Krippendorff, ...)",
        description="Agreement coefficients among many raters with standard errors and "
                    "intervals, from a long file (one row per rating: --item, --rater, "
                    "--label) or a wide one (one column per rater: --wide), read in "
                    "batches (memory: one batch plus the items x raters table).")
    agree.add_argument("file", metavar="FILE",
                       help="CSV (optionally gzip-compressed) or Parquet file; - for stdin")
    agree.add_argument("--item", metavar="COL", help="long format: column of item ids")
    agree.add_argument("--rater", metavar="COL", help="long format: column of rater ids")
    agree.add_argument("--label", metavar="COL", help="long format: column of labels")
    agree.add_argument("--wide", nargs="+", metavar="COL",
                       help="wide format instead: one label column per rater (two or more); "
                            "an empty cell is a missing rating")
    agree.add_argument("--sep", metavar="CHAR",
                       help="CSV field separator (default: , or tab for .tsv)")
    agree.add_argument("--coefficients", nargs="+", choices=COEFFICIENTS, metavar="NAME",
                       help=f"coefficients to report: {', '.join(COEFFICIENTS)} (default: "
                            "all but light_kappa)")
    agree.add_argument("--weights", type=str.lower, choices=WEIGHTS, default="none",
                       help="disagreement weights of the kappa family (default: none)")
    agree.add_argument("--level", type=str.lower, choices=LEVELS, metavar="LEVEL",
                       help="Krippendorff's level of measurement: "
                            f"{', '.join(LEVELS)} (default: nominal without --weights, "
                            "else the same weights)")
    agree.add_argument("--method", type=str.lower, choices=METHODS, metavar="METHOD",
                       help=f"interval method: {', '.join(METHODS)} (default: asymptotic, "
                            "Gwet's variance)")
    agree.add_argument("--ci", type=str.lower, choices=METHODS, metavar="METHOD", dest="ci_alias",
                       help="deprecated spelling of --method, as for score")
    agree.set_defaults(func=cmd_agreement.run)
    return parser
