"""``fastkappa compare``: paired comparison of several prediction columns."""

from __future__ import annotations

from ..._io import open_source
from ...compare import compare as compare_models
from .._common import (
    UsageError,
    _class_kw,
    _draw_seed,
    _provenance,
    _read_columns,
    _unique,
    _weights,
)
from ..figures import _add_plot, _check_plot_path, _comparison_figure
from ..output import (
    _METHOD_NAMES,
    _WEIGHT_NAMES,
    Output,
    _ci_dict,
    _ci_text,
    _p_at_floor,
    _pair_dict,
    _pairs_text,
    _resampling_note,
    _shown,
)


def run(args) -> Output:
    """``fastkappa compare`` from parsed arguments."""
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
    comp = compare_models(
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

