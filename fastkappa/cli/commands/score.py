"""``fastkappa score``: kappa of two label columns, streamed in bounded memory."""

from __future__ import annotations

from ... import files
from ..._display import kappa_name
from ...streaming import CohenKappa
from .._common import (
    UsageError,
    _class_kw,
    _cli_wording,
    _draw_seed,
    _interval_method,
    _progress,
    _weights,
    class_keywords,
    provenance,
)
from ..figures import MAX_PLOTTED_GROUPS, _add_plot, _check_plot_path, _score_figure
from ..output import (
    Output,
    _ci_dict,
    _ci_text,
    _fmt,
    _matrix_text,
    _resampling_note,
)


def run(args) -> Output:
    """``fastkappa score`` from parsed arguments."""
    method = _interval_method(args)
    return score(args.file, true=args.true, pred=args.pred, weights=_weights(args),
                 **_class_kw(args), method=method,
                 confidence_level=args.confidence_level, n_resamples=args.n_resamples,
                 seed=_draw_seed(args, method), clusters=args.clusters, by=args.by,
                 plot=args.plot, sep=args.sep, nan_policy=args.nan_policy,
                 progress=_progress(args), ignore_index=args.ignore_index,
                 sample_weight=args.sample_weight, frequency_weight=args.frequency_weight,
                 normalize=args.normalize, class_names=args.class_names)


def score(file: str, *, true: str, pred: str, weights: str | None = None, labels=None,
          n_classes: int | None = None, method: str | None = None,
          confidence_level: float = 0.95, n_resamples: int = 10_000,
          seed: int | None = None, clusters: str | None = None, by: str | None = None,
          plot: str | None = None, sep: str | None = None, nan_policy: str = "raise",
          progress: bool = False, ignore_index=None, sample_weight: str | None = None,
          frequency_weight: str | None = None, normalize: str | None = None,
          class_names: list | None = None) -> Output:
    """Score ``file`` with :func:`fastkappa.files.score_file` and lay out the result."""
    weight_flag = ("--sample-weight" if sample_weight is not None
                   else "--frequency-weight" if frequency_weight is not None else None)
    if weight_flag is not None and (by or clusters):
        raise UsageError(f"{weight_flag} does not go with {'--by' if by else '--clusters'} "
                         "in `fastkappa score` (its per-group and per-cluster tables count "
                         "rows); drop one of them, or score in Python with "
                         "fastkappa.kappa_by_group / fastkappa.kappa_ci.")
    if sample_weight is not None and method is not None:
        raise UsageError("--sample-weight with --method: a streamed interval needs "
                         "unweighted rows or whole-number counts; give counts with "
                         "--frequency-weight, or read the columns in Python and call "
                         "fastkappa.kappa_ci(..., sample_weight=...).")
    if (normalize is not None or class_names is not None) and plot is None:
        raise UsageError("--normalize and --class-names shape the figure; add --plot PATH.")
    plot = _check_plot_path(plot) if plot else None
    class_kw = class_keywords(labels, n_classes)
    try:  # a bad class declaration is the command line's fault: exit 2
        CohenKappa(weights=weights, **class_kw)
    except ValueError as e:
        raise UsageError(_cli_wording(str(e))) from None
    res = files._score(file, true=true, pred=pred, weights=weights, **class_kw, by=by,
                       clusters=clusters, method=method, confidence_level=confidence_level,
                       n_resamples=n_resamples, seed=seed, nan_policy=nan_policy, sep=sep,
                       progress=progress, ignore_index=ignore_index,
                       sample_weight=sample_weight, frequency_weight=frequency_weight)
    acc, ci, groups = res.accumulator, res.ci, res.by
    out = _score_output(res.name, acc, res.kappa, ci, groups, true=true, pred=pred,
                        weights=weights, by_col=by, clusters=clusters, method=method,
                        confidence_level=confidence_level, n_resamples=n_resamples,
                        seed=seed, ignore_index=ignore_index, sample_weight=sample_weight,
                        frequency_weight=frequency_weight)
    if plot is None:
        return out
    if groups is not None and len(groups.groups) > MAX_PLOTTED_GROUPS:
        out.text += (f"\n(the figure leaves out the {len(groups.groups):,} groups of "
                     f"{by!r}: a forest plot shows at most {MAX_PLOTTED_GROUPS})")
        groups = None
    shown = acc.labels.tolist()
    if class_names is not None:
        if len(class_names) != len(shown):
            raise UsageError(f"--class-names gives {len(class_names)} names, but the data "
                             f"hold {len(shown)} classes {shown[:20]}; give one name per "
                             "class, in class order.")
        shown = list(class_names)
    fig = _score_figure(acc.confusion, shown, weights, (true, pred), ci=ci, by=groups,
                        normalize=normalize)
    return _add_plot(out, plot, fig)


def _score_output(name, acc, kappa, ci, by, *, true, pred, weights, by_col, clusters,
                  method, confidence_level, n_resamples, seed, ignore_index=None,
                  sample_weight=None, frequency_weight=None) -> Output:
    labels = acc.labels
    group_results = [] if by is None else [
        (key, int(by.n_rows[i]), float(by.estimate[i]),
         None if by.low is None else (float(by.low[i]), float(by.high[i])))
        for i, key in enumerate(by.groups.tolist())]
    data = {
        "command": "score",
        **provenance(weights, method, confidence_level, n_resamples, seed),
        "file": name,
        "y_true": true,
        "y_pred": pred,
        "n_rows": acc.n_rows,
        "labels": labels,
        "kappa": kappa,
        "ci": _ci_dict(ci) if ci is not None else None,
        "clusters": clusters,
        "confusion": acc.confusion,
        "ignore_index": ignore_index,
        "sample_weight": sample_weight,
        "frequency_weight": frequency_weight,
    }
    if by_col:
        data["by"] = by_col
        data["groups"] = [
            {"group": key, "n_rows": n, "kappa": k,
             "ci": None if c is None else {"low": c[0], "high": c[1], "method": method,
                                           "confidence_level": confidence_level}}
            for key, n, k, c in group_results]

    def row(level, group, n, k, low, high, se):
        r = {"level": level, "group": group, "n_rows": n, "kappa": k, "weights": weights,
             "method": method}
        if method is not None:
            r.update(low=low, high=high, standard_error=se,
                     confidence_level=confidence_level)
        return r

    overall = (ci.low, ci.high, ci.standard_error) if ci is not None else (None,) * 3
    rows = [row("overall", "", acc.n_rows, kappa, *overall)]
    rows += [row("group", key, n, k, *(c if c is not None else (None, None)), None)
             for key, n, k, c in group_results]
    lines = [f"{name}: {acc.n_rows:,} rows, {len(labels)} classes {labels.tolist()[:20]}"
             f"{' ...' if len(labels) > 20 else ''}",
             f"{kappa_name(weights or 'none')} of {pred!r} against {true!r}"
             + (f", rows weighted by {sample_weight!r}" if sample_weight else "")
             + (f", rows counted {frequency_weight!r} times" if frequency_weight else "")
             + (f", rows labelled {ignore_index!r} dropped" if ignore_index is not None
                else "")]
    lines.append(_ci_text(ci) if ci is not None else f"kappa = {_fmt(kappa)}")
    note = _resampling_note(method, n_resamples, seed)
    if ci is not None and (note or clusters):
        parts = [note] if note else []
        if clusters:
            parts.append(f"clusters of {clusters!r} resampled")
        lines.append(f"({'; '.join(parts)})")
    if len(labels) <= 12:
        lines += ["", f"confusion matrix (rows: {true}, columns: {pred}):",
                  _matrix_text(acc.confusion, labels.tolist())]
    if group_results:
        lines += ["", f"by {by_col!r}:"]
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

