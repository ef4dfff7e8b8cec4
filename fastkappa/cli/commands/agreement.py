"""``fastkappa agreement``: agreement among many raters from a long or wide file."""

from __future__ import annotations

from ...agreement_files import accumulate_file, check_rated
from .._common import UsageError, _draw_seed, _interval_method, _progress, _weights
from ..output import Output

#: the library's wording of an ``agreement`` error as this command's options spell it
#: (after these, ``_cli_wording`` in main turns the shared names: ``labels=`` etc.)
_AGREEMENT_NAMES = (
    ("`item=`", "--item"), ("`rater=`", "--rater"), ("`label=`", "--label"),
    ("`item`", "--item"), ("`rater`", "--rater"), ("`label`", "--label"),
    ("mark it as missing with `missing=`", "leave the cell empty (a missing rating)"),
    ("use level='ordinal'", "use --level ordinal"),
    (" or pass a (K, K) disagreement matrix as `level`", ""),
    ("`coefficients=`", "--coefficients"), ("`level`", "--level"),
    (", or use an ordered pandas Categorical", ""),
)


def _agreement_wording(text: str) -> str:
    """A library message with this command's flags in place of Python keywords."""
    for py, cli in _AGREEMENT_NAMES:
        text = text.replace(py, cli)
    return text


def run(args) -> Output:
    """``fastkappa agreement`` from parsed arguments (usage checked here: exit 2)."""
    long_flags = {"--item": args.item, "--rater": args.rater, "--label": args.label}
    given = [flag for flag, col in long_flags.items() if col is not None]
    if args.wide is not None:
        if given:
            raise UsageError(f"--wide names one column per rater; it does not go with "
                             f"{' and '.join(given)} (those describe a long file).")
        if len(args.wide) < 2 or len(set(args.wide)) != len(args.wide):
            commas = len(args.wide) == 1 and "," in args.wide[0]
            raise UsageError("--wide needs two or more distinct rater columns; got "
                             f"{args.wide}."
                             + (" Separate them with spaces: --wide "
                                f"{' '.join(args.wide[0].split(','))}" if commas else ""))
    elif len(given) < 3:
        missing = [flag for flag in long_flags if flag not in given]
        raise UsageError(
            f"name the long file's columns with --item, --rater and --label (missing: "
            f"{', '.join(missing)}), or one column per rater with --wide COL COL ...")
    elif len(set(long_flags.values())) != 3:
        raise UsageError("--item, --rater and --label must name three different columns.")
    method = _interval_method(args) or "asymptotic"
    seed = _draw_seed(args, method)
    try:
        return agreement(args.file, item=args.item, rater=args.rater,
                         label=args.label,
                         wide=args.wide, coefficients=args.coefficients,
                         weights=_weights(args), level=args.level, labels=args.labels,
                         n_classes=args.n_classes, method=method,
                         confidence_level=args.confidence_level,
                         n_resamples=args.n_resamples, seed=seed, sep=args.sep,
                         progress=_progress(args))
    except ValueError as e:
        raise ValueError(_agreement_wording(str(e))) from None


def agreement(file: str, *, item: str | None = None, rater: str | None = None,
              label: str | None = None, wide: list[str] | None = None,
              coefficients: list[str] | None = None, weights: str | None = None,
              level: str | None = None, labels=None, n_classes: int | None = None,
              method: str = "asymptotic", confidence_level: float = 0.95,
              n_resamples: int = 10_000, seed: int | None = None, sep: str | None = None,
              progress: bool = False) -> Output:
    """Read ``file`` in batches into an :class:`~fastkappa.AgreementAccumulator`,
    compute the coefficients and lay them out."""
    acc = accumulate_file(file, item=item, rater=rater, label=label, wide=wide,
                          labels=labels, n_classes=n_classes, sep=sep, progress=progress)
    check_rated(acc)
    res = acc.compute(coefficients=coefficients, weights=weights, level=level,
                      method=method, confidence_level=confidence_level,
                      n_resamples=n_resamples, seed=seed)
    name = "stdin" if file == "-" else file
    layout = ({"format": "wide", "raters": list(wide)} if wide is not None else
              {"format": "long", "item": item, "rater": rater, "label": label})
    data = {"command": "agreement", **res.to_dict(), "file": name, **layout}
    data["seed"] = res.seed if method != "asymptotic" else None
    common = {"method": res.method, "confidence_level": res.confidence_level,
              "weights": data["weights"], "level": data["level"],
              "n_resamples": data["n_resamples"] if method != "asymptotic" else None,
              "seed": data["seed"]}
    rows = [{"coefficient": r.coefficient, "estimate": r.estimate,
             "standard_error": r.standard_error, "low": r.low, "high": r.high,
             "p_value": r.p_value, **common} for r in res.rows]
    how = (f"long file: items {item!r}, raters {rater!r}, labels {label!r}" if wide is None
           else f"wide file: raters {', '.join(repr(c) for c in wide)}")
    lines = [f"{name}: {how}", str(res)]
    if method != "asymptotic":
        lines.append(f"(seed {res.seed})")
    return Output("\n".join(lines), data, rows)
