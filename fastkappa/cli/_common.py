"""What the commands share: errors, option names, and reading ``args``."""

from __future__ import annotations

import sys
import warnings

import numpy as np

from .._core.caller import user_stacklevel


class UsageError(Exception):
    """The command line is wrong (exit code 2)."""


class OutputError(Exception):
    """The results cannot be written to standard output (exit code 1)."""


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
    ("`ignore_index=`", "--ignore-index"), ("`ignore_index`", "--ignore-index"),
    ("`frequency_weight`", "--frequency-weight"), ("`sample_weight`", "--sample-weight"),
)


def _cli_wording(text: str) -> str:
    """A library message with its Python option names turned into command-line flags."""
    for py, cli in _CLI_NAMES:
        text = text.replace(py, cli)
    return text.replace("`n_undefined`", "n_undefined (a field of --format json)")


def _weights(args) -> str | None:
    return None if args.weights == "none" else args.weights


def class_keywords(labels, n_classes) -> dict:
    """``labels=`` or ``n_classes=`` for the library, whichever was declared."""
    if labels is not None:
        return {"labels": labels}
    if n_classes is not None:
        return {"n_classes": n_classes}
    return {}


def _class_kw(args) -> dict:
    return class_keywords(args.labels, args.n_classes)


def _progress(args) -> bool:
    return not args.quiet and sys.stderr.isatty()



def _interval_method(args) -> str | None:
    """``--method``, or the deprecated ``--ci`` (with a warning saying so)."""
    alias = getattr(args, "ci_alias", None)
    if alias is None:
        return args.method
    if args.method is not None and args.method != alias:
        raise UsageError(f"--ci {alias} and --method {args.method} disagree; --ci is a "
                         "deprecated spelling of --method, so give --method alone.")
    warnings.warn(f"--ci is deprecated; use --method {alias} (the same choices).",
                  FutureWarning, stacklevel=user_stacklevel())
    return alias


def _draw_seed(args, method: str | None) -> int | None:
    """The seed of a bootstrap run: ``--seed``, or one drawn now (and reported)."""
    if method is None or method == "asymptotic":
        return args.seed
    if args.seed is None:
        from .._core.units import fresh_seed

        return fresh_seed()  # 53 bits: exact in any JSON reader
    return args.seed


def rows_labelled(columns: list, value) -> int:
    """Rows where any of ``columns`` (arrays read from the file) holds ``value``:
    those ``--ignore-index`` drops (0 without one)."""
    if value is None:
        return 0
    return int(np.count_nonzero(np.any([np.asarray(c) == value for c in columns], axis=0)))


def rows_read(n_rows, n_read: int, n_missing: int, n_ignored: int, ignore_index,
              counted: bool = False) -> str:
    """How many rows were scored, and, when any were dropped, of how many read and
    why: nothing is dropped silently.  With frequency weights (``counted``) the
    rows scored are the counts' sum and the file's lines are counted apart."""
    def num(k: int, one: str, many: str) -> str:
        return f"{k:,} {one if k == 1 else many}"

    gone = ([f"{n_missing:,} with a missing value"] if n_missing else []) + (
        [f"{n_ignored:,} labelled {ignore_index!r}"] if n_ignored else [])
    why = f" ({' and '.join(gone)} dropped)" if gone else ""
    if counted:
        return (f"{num(n_rows, 'row', 'rows')} counted from "
                f"{num(n_read, 'line', 'lines')}{why}")
    if not gone:
        return num(n_rows, "row", "rows")
    return f"{num(n_rows, 'row', 'rows')} of {n_read:,} read{why}"


def provenance(weights: str | None, method: str | None, confidence_level: float,
               n_resamples: int, seed: int | None) -> dict:
    """What a JSON result records so that it can be reproduced."""
    from .. import __version__

    boot = method is not None and method != "asymptotic"
    return {"fastkappa_version": __version__,
            "weights": weights or "none",  # as the results name it
            "method": method,
            "confidence_level": confidence_level if method is not None else None,
            "n_resamples": n_resamples if boot else None,
            "seed": seed if boot else None}


