"""``fastkappa compare``: paired comparison of several prediction columns."""

from __future__ import annotations

from ..._display import kappa_name, method_label, weights_name
from ..._io import as_column_label, as_file_labels, open_source
from ...compare import compare as compare_models
from ...files import _declared, _file_scale, _unique
from ...files import _read_columns as _read_file_columns
from .._common import (
    UsageError,
    _class_kw,
    _draw_seed,
    _progress,
    _weights,
    class_keywords,
    provenance,
    rows_labelled,
    rows_read,
)
from ..figures import _add_plot, _check_plot_path, _comparison_figure
from ..output import (
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
    return compare(args.file, true=args.true, pred=args.pred, reference=args.reference,
                   weights=_weights(args), **_class_kw(args), method=method,
                   confidence_level=args.confidence_level, n_resamples=args.n_resamples,
                   seed=_draw_seed(args, method), clusters=args.clusters,
                   p_adjust=None if args.p_adjust == "none" else args.p_adjust,
                   plot=args.plot, sep=args.sep, nan_policy=args.nan_policy,
                   progress=_progress(args), ignore_index=args.ignore_index,
                   sample_weight=args.sample_weight, frequency_weight=args.frequency_weight)


def compare(file: str, *, true: str, pred: list[str], reference: str | None = None,
            weights: str | None = None, labels=None, n_classes: int | None = None,
            method: str = "bca", confidence_level: float = 0.95, n_resamples: int = 10_000,
            seed: int | None = None, clusters: str | None = None,
            p_adjust: str | None = None, plot: str | None = None, sep: str | None = None,
            nan_policy: str = "raise", progress: bool = False, ignore_index=None,
            sample_weight: str | None = None, frequency_weight: str | None = None) -> Output:
    """Read the columns, run :func:`fastkappa.compare` and lay out the result."""
    plot = _check_plot_path(plot) if plot else None
    src = open_source(file, sep=sep)
    label_cols = _unique([true, *pred])
    labels, ignore_index = as_file_labels(src, label_cols, labels, ignore_index)
    if labels is None and n_classes is None:  # ordered categoricals declare the classes
        labels = _file_scale(src, label_cols, weights)
    class_kw = class_keywords(labels, n_classes)
    weight = {"sample_weight": sample_weight, "frequency_weight": frequency_weight}
    weight = {k: v for k, v in weight.items() if v is not None}
    read: dict = {}
    cols = _read_file_columns(src, label_cols, score_cols=list(weight.values()),
                              extra_cols=_unique([clusters]),
                              # the ignored label may lie outside the declared classes:
                              # then fastkappa.compare checks the classes, after dropping
                              declared=(_declared(labels, n_classes) if ignore_index is None
                                        else None), nan_policy=nan_policy,
                              progress=progress, tally=read)
    ignore_index = as_column_label(ignore_index, [cols[c] for c in label_cols])
    n_ignored = rows_labelled([cols[c] for c in label_cols], ignore_index)
    preds = {name: cols[name] for name in pred}
    comp = compare_models(
        cols[true], preds, weights=weights, method=method,
        confidence_level=confidence_level, n_resamples=n_resamples,
        seed=seed, clusters=cols[clusters] if clusters else None,
        reference=reference, p_adjust=p_adjust, ignore_index=ignore_index,
        **{k: cols[v] for k, v in weight.items()}, **class_kw)
    n = comp.n_rows  # the rows scored (after --ignore-index; counted rows expanded)
    data = {
        "command": "compare",
        **provenance(weights, method, confidence_level, n_resamples, seed),
        "p_adjust": p_adjust,
        "file": src.name, "y_true": true, "n_rows": n, "n_read": read["n_read"],
        "n_missing": read["n_missing"], "n_ignored": n_ignored,
        "clusters": clusters,
        "ignore_index": ignore_index, "sample_weight": sample_weight,
        "frequency_weight": frequency_weight,
        "models": {name: _ci_dict(res) for name, res in comp.models.items()},
        "pairs": [_pair_dict(pr, method) for pr in comp.pairs],
    }
    rows = [{"kind": "model", "model": name, "estimate": res.estimate, "low": res.low,
             "high": res.high, "p_value": "", "p_value_is_bound": "", "p_adjusted": "",
             "weights": weights_name(weights), "method": res.method,
             "confidence_level": res.confidence_level}
            for name, res in comp.models.items()]
    rows += [{"kind": "difference", "model": f"{pr.a} - {pr.b}", "estimate": pr.difference,
              "low": pr.low, "high": pr.high, "p_value": pr.p_value,
              "p_value_is_bound": _p_at_floor(pr, method), "p_adjusted": pr.p_adjusted,
              "weights": weights_name(weights), "method": method,
              "confidence_level": confidence_level}
             for pr in comp.pairs]
    note = _resampling_note(method, n_resamples, seed)
    shown_n = rows_read(n, read["n_read"], read["n_missing"], n_ignored, ignore_index,
                        frequency_weight is not None)
    lines = [f"{src.name}: {shown_n}; {kappa_name(weights or 'none')} against "
             f"{true!r}, {method_label(method)} intervals"
             + (f" ({note})" if note else "")
             + (f", clusters {clusters!r}" if clusters else "")
             + (f", rows weighted by {sample_weight!r}" if sample_weight else "")
             + (f", rows counted {frequency_weight!r} times" if frequency_weight else "")
             + (f", rows labelled {ignore_index!r} dropped" if ignore_index is not None
                else "")]
    width = max(len(_shown(m)) for m in comp.models)
    for name, res in comp.models.items():
        lines.append(f"  {_shown(name).ljust(width)}  {_ci_text(res)}")
    lines += ["paired differences:", *_pairs_text(comp, method)]
    out = Output("\n".join(lines), data, rows)
    return out if plot is None else _add_plot(out, plot, _comparison_figure(comp))

