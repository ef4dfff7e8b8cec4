"""``fastkappa score``: kappa of two label columns, streamed in bounded memory."""

from __future__ import annotations

import numpy as np

from ... import files
from ..._display import kappa_name, weights_name
from ..._io import CommandLineInt
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
    rows_labelled,
    rows_read,
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
    if (normalize is not None or class_names is not None) and plot is None:
        raise UsageError("--normalize and --class-names shape the figure; add --plot PATH.")
    plot = _check_plot_path(plot) if plot else None
    class_kw = class_keywords(labels, n_classes)
    try:  # a bad class declaration is the command line's fault: exit 2
        CohenKappa(weights=weights, **class_kw)
    except ValueError as e:
        raise UsageError(_cli_wording(str(e))) from None
    kw = dict(true=true, pred=pred, weights=weights, **class_kw, by=by, clusters=clusters,
              method=method, confidence_level=confidence_level, n_resamples=n_resamples,
              seed=seed, nan_policy=nan_policy, sep=sep, progress=progress,
              ignore_index=ignore_index, sample_weight=sample_weight,
              frequency_weight=frequency_weight)
    weighted = sample_weight is not None or frequency_weight is not None
    if weighted and (by or clusters or (sample_weight is not None and method is not None)):
        res = _score_in_memory(file, **kw)
    else:
        res = files._score(file, **kw)
    acc, ci, groups = res.accumulator, res.ci, res.by
    if isinstance(ignore_index, CommandLineInt) and acc.labels.dtype == object:
        ignore_index = ignore_index.text  # the file's labels are text: it matched "10"
    out = _score_output(res.name, acc, res.kappa, ci, groups, true=true, pred=pred,
                        weights=weights, by_col=by, clusters=clusters, method=method,
                        confidence_level=confidence_level, n_resamples=n_resamples,
                        seed=seed, ignore_index=ignore_index, sample_weight=sample_weight,
                        frequency_weight=frequency_weight,
                        dropped=(res.n_read, res.n_missing, res.n_ignored))
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


def _score_in_memory(file, *, true, pred, weights, labels=None, n_classes=None, by, clusters,
                     method, confidence_level, n_resamples, seed, nan_policy, sep, progress,
                     ignore_index, sample_weight, frequency_weight) -> files.FileScore:
    """Row weights with ``--by`` / ``--clusters``, or ``--sample-weight`` with
    ``--method``: the columns are read into memory (as ``compare`` reads them) and
    scored by the Python API, so the numbers are those of
    :func:`fastkappa.kappa_by_group` and :func:`fastkappa.kappa_ci` with the same
    keywords (a weighted row's interval resamples the rows themselves, which a
    streamed table cannot hold)."""
    from ... import bootstrap, groups
    from ..._io import as_column_label, as_file_labels, open_source

    src = open_source(file, sep=sep)
    labels, ignore_index = as_file_labels(src, [true, pred], labels, ignore_index)
    if labels is None and n_classes is None:  # ordered categoricals declare the classes
        labels = files._file_scale(src, files._unique([true, pred]), weights)
    weight = {"sample_weight": sample_weight, "frequency_weight": frequency_weight}
    weight = {k: v for k, v in weight.items() if v is not None}
    class_kw = class_keywords(labels, n_classes)
    read: dict = {}
    cols = files._read_columns(
        src, files._unique([true, pred]), score_cols=list(weight.values()),
        extra_cols=files._unique([by, clusters]),
        # the ignored label may lie outside the declared classes: the API checks them
        declared=files._declared(labels, n_classes) if ignore_index is None else None,
        nan_policy=nan_policy, progress=progress, tally=read)
    ignore_index = as_column_label(ignore_index, [cols[true], cols[pred]])
    rows = {k: cols[v] for k, v in weight.items()}
    acc = CohenKappa(weights=weights, **class_kw)
    acc.update(cols[true], cols[pred], ignore_index=ignore_index, **rows)
    kappa = acc.compute()
    common = dict(weights=weights, ignore_index=ignore_index, **class_kw, **rows)
    ci = None
    if method is not None:
        ci = bootstrap.kappa_ci(cols[true], cols[pred], method=method,
                                confidence_level=confidence_level, n_resamples=n_resamples,
                                seed=seed, clusters=cols[clusters] if clusters else None,
                                **common)
    by_res = None
    if by:  # the API's own warnings (undefined groups, few clusters) are printed
        by_res = groups.kappa_by_group(
            cols[true], cols[pred], cols[by], method=method,
            confidence_level=confidence_level, n_resamples=n_resamples, seed=seed,
            clusters=cols[clusters] if clusters and method else None, **common)
    n_ignored = rows_labelled([cols[true], cols[pred]], ignore_index)
    return files.FileScore(src.name, acc, kappa, ci, by_res, read["n_read"],
                           read["n_missing"], n_ignored)


class _LazyOutput(Output):
    """An :class:`Output` whose text, dict and rows are built on first use: with many
    groups (``--by``), only the format written is laid out."""

    def __init__(self, text, data, rows) -> None:
        self._make = {"text": text, "data": data, "rows": rows}
        self._made: dict = {}

    def _get(self, name):
        if name not in self._made:
            self._made[name] = self._make[name]()
        return self._made[name]

    def _set(self, name, value) -> None:
        self._made[name] = value

    text = property(lambda self: self._get("text"), lambda self, v: self._set("text", v))
    data = property(lambda self: self._get("data"), lambda self, v: self._set("data", v))
    rows = property(lambda self: self._get("rows"), lambda self, v: self._set("rows", v))


def _group_columns(by) -> tuple[list, list, list, list | None, list | None]:
    """Keys, row counts, kappas and interval bounds of every group, as Python values."""
    keys = by.groups.tolist()
    n = np.asarray(by.n_rows)  # row counts; sums of weights with --sample-weight
    n = (n.astype(np.int64) if n.dtype.kind in "iub" else n.astype(np.float64)).tolist()
    kappa = np.asarray(by.estimate, dtype=np.float64).tolist()
    if by.low is None:
        return keys, n, kappa, None, None
    return (keys, n, kappa, np.asarray(by.low, dtype=np.float64).tolist(),
            np.asarray(by.high, dtype=np.float64).tolist())


def _score_output(name, acc, kappa, ci, by, *, true, pred, weights, by_col, clusters,
                  method, confidence_level, n_resamples, seed, ignore_index=None,
                  sample_weight=None, frequency_weight=None, dropped=(0, 0, 0)) -> Output:
    labels = acc.labels
    n_read, n_missing, n_ignored = dropped
    cols = None if by is None else _group_columns(by)

    def make_data() -> dict:
        data = {
            "command": "score",
            **provenance(weights, method, confidence_level, n_resamples, seed),
            "file": name,
            "y_true": true,
            "y_pred": pred,
            "n_rows": acc.n_rows,
            "n_read": n_read,
            "n_missing": n_missing,
            "n_ignored": n_ignored,
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
            keys, n, kap, low, high = cols
            clean = [None if k != k else k for k in kap]  # JSON: nan -> null
            if low is None:
                groups = [{"group": g, "n_rows": m, "kappa": k, "ci": None}
                          for g, m, k in zip(keys, n, clean, strict=True)]
            else:
                groups = [{"group": g, "n_rows": m, "kappa": k,
                           "ci": {"low": lo, "high": hi, "method": method,
                                  "confidence_level": confidence_level}}
                          for g, m, k, lo, hi in zip(keys, n, clean, low, high, strict=True)]
            data["by"] = by_col
            data["groups"] = groups
        return data

    def make_rows() -> list[dict]:
        base = {"weights": weights_name(weights), "method": method}  # as JSON names them
        overall = {"level": "overall", "group": "", "n_rows": acc.n_rows, "kappa": kappa,
                   **base}
        if method is not None:
            overall.update(low=ci.low, high=ci.high, standard_error=ci.standard_error,
                           confidence_level=confidence_level)
        rows = [overall]
        if cols is None:
            return rows
        keys, n, kap, low, high = cols
        if method is None:
            rows += [{"level": "group", "group": g, "n_rows": m, "kappa": k, **base}
                     for g, m, k in zip(keys, n, kap, strict=True)]
        else:
            low = low if low is not None else [None] * len(keys)
            high = high if high is not None else [None] * len(keys)
            rows += [{"level": "group", "group": g, "n_rows": m, "kappa": k, **base,
                      "low": lo, "high": hi, "standard_error": None,
                      "confidence_level": confidence_level}
                     for g, m, k, lo, hi in zip(keys, n, kap, low, high, strict=True)]
        return rows

    def make_text() -> str:
        n_rows = rows_read(acc.n_rows, n_read, n_missing, n_ignored, ignore_index,
                           frequency_weight is not None)
        n_classes = f"{len(labels)} {'class' if len(labels) == 1 else 'classes'}"
        lines = [f"{name}: {n_rows}, {n_classes} "
                 f"{labels.tolist()[:20]}{' ...' if len(labels) > 20 else ''}",
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
        if cols is not None and cols[0]:
            keys, n, kap, low, high = cols
            names = [str(k) for k in keys]
            width = max(5, max(map(len, names)))
            whole = all(isinstance(m, int) for m in n[:1])
            head = (f"{'group'.ljust(width)}  {'rows' if whole else 'weight':>10}  "
                    f"{'kappa':>7}")
            # f"{x:7.4f}" writes nan as "nan", as _fmt does
            count = "{:>10,}" if whole else "{:>10,.2f}"
            body = [f"{g:<{width}}  {count.format(m)}  {k:7.4f}"
                    for g, m, k in zip(names, n, kap, strict=True)]
            if low is not None:
                head += f"  {'low':>7}  {'high':>7}"
                body = [f"{line}  {lo:7.4f}  {hi:7.4f}"
                        for line, lo, hi in zip(body, low, high, strict=True)]
            lines += ["", f"by {by_col!r}:", head, *body]
        return "\n".join(lines)

    return _LazyOutput(make_text, make_data, make_rows)
