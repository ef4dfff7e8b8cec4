"""``fastkappa thresholds``: tune cut points for a continuous score, or apply known ones."""

from __future__ import annotations

import csv
import io
import json
import os
import re

import numpy as np

from ..._io import DataError, as_column_label, as_file_labels, open_source
from ...files import _declared, _file_scale, _unique
from ...files import _read_columns as _read_file_columns
from ...thresholds import ThresholdOptimizer, Thresholds, apply_thresholds
from .._common import (
    UsageError,
    _class_kw,
    _progress,
    _weights,
    class_keywords,
    rows_read,
)
from ..figures import _add_plot, _check_plot_path, _thresholds_figure
from ..output import Output, _csv_value, _fmt


def run(args) -> Output:
    """``fastkappa thresholds`` from parsed arguments."""
    if args.apply is not None:
        return _apply_from_args(args)
    if args.true is None:
        raise UsageError("--true COL is required to tune cut points (only --apply CUTS "
                         "works without it).")
    if args.id is not None:
        raise UsageError("--id goes with --apply (it labels the rows written out).")
    if args.groups is not None and not args.cv:
        raise UsageError("--groups keeps each group in one cross-validation fold; add "
                         "--cv K.")
    return tune(args.file, true=args.true, score=args.score, weights=_weights(args),
                **_class_kw(args), cv=args.cv, seed=args.seed, groups=args.groups,
                plot=args.plot, sep=args.sep, nan_policy=args.nan_policy,
                progress=_progress(args), sample_weight=args.sample_weight,
                frequency_weight=args.frequency_weight, ignore_index=args.ignore_index)


def tune(file: str, *, true: str, score: str, weights: str | None = "quadratic",
         labels=None, n_classes: int | None = None, cv: int | None = None,
         seed: int | None = None, groups: str | None = None, plot: str | None = None,
         sep: str | None = None, nan_policy: str = "raise", progress: bool = False,
         sample_weight: str | None = None, frequency_weight: str | None = None,
         ignore_index=None) -> Output:
    """Fit :class:`fastkappa.ThresholdOptimizer` on two columns and lay out the cut points.

    Rows with a missing value are handled by ``nan_policy`` as the file is read;
    rows whose ``true`` label equals ``ignore_index`` are dropped by the optimizer.
    """
    plot = _check_plot_path(plot) if plot else None
    src = open_source(file, sep=sep)
    labels, ignore_index = as_file_labels(src, [true], labels, ignore_index)
    if labels is None and n_classes is None:  # an ordered categorical declares the classes
        labels = _file_scale(src, [true], weights)
    weight = {"sample_weight": sample_weight, "frequency_weight": frequency_weight}
    weight = {k: v for k, v in weight.items() if v is not None}
    read: dict = {}
    cols = _read_file_columns(src, [true], score_cols=_unique([score, *weight.values()]),
                              extra_cols=[groups] if groups else [],
                              # the ignored label is no declared class: the optimizer
                              # checks the classes once those rows are dropped
                              declared=(_declared(labels, n_classes) if ignore_index is None
                                        else None),
                              nan_policy=nan_policy, progress=progress, tally=read)
    ignore_index = as_column_label(ignore_index, [cols[true]])
    opt = ThresholdOptimizer(weights=weights, cv=cv, seed=seed, ignore_index=ignore_index,
                             **class_keywords(labels, n_classes))
    opt.fit(cols[true], cols[score],
            groups=cols[groups] if groups else None,
            **{k: cols[v] for k, v in weight.items()})
    th = np.asarray(opt.thresholds_, dtype=np.float64)
    classes = opt.classes_.tolist()
    cv_qwk = getattr(opt, "cv_qwk_", None) if cv else None
    kappa = float(opt.qwk_)
    cv_kappa = None if cv_qwk is None else float(cv_qwk)
    n = opt.n_rows_
    data = {"command": "thresholds", "file": src.name, "y_true": true,
            "score": score, "n_rows": n, "ignore_index": ignore_index,
            "n_ignored": opt.n_dropped_, "n_read": read["n_read"],
            "n_missing": read["n_missing"],
            "weights": weights or "none",
            "thresholds": th, "labels": classes, "kappa": kappa,
            "cv": cv, "seed": seed if cv else None, "groups": groups, "cv_kappa": cv_kappa,
            "sample_weight": sample_weight, "frequency_weight": frequency_weight}
    # one row per cut point; the kappas repeat on each row so the CSV keeps them
    rows = [{"cut": i + 1, "threshold": float(v), "below": classes[i],
             "above": classes[i + 1], "kappa": kappa, "cv_kappa": cv_kappa}
            for i, v in enumerate(th)]
    shown_n = rows_read(n, read["n_read"], read["n_missing"], opt.n_dropped_, ignore_index,
                        frequency_weight is not None)
    lines = [f"{src.name}: {shown_n}; cut points for {score!r} against {true!r}",
             "thresholds: " + ", ".join(f"{v:.6g}" for v in th),
             f"classes: {', '.join(str(c) for c in classes)}",
             f"in-sample kappa = {_fmt(kappa)}"]
    if cv_qwk is not None:
        folds = ("folds from seed " + str(seed) if seed is not None
                 else "each class's rows dealt to the folds in file order")
        lines.append(f"{cv}-fold out-of-fold kappa = {_fmt(cv_kappa)} ({folds}"
                     + (f"; groups of {groups!r} kept whole)" if groups else ")"))
    out = Output("\n".join(lines), data, rows)
    return out if plot is None else _add_plot(out, plot, _thresholds_figure(opt))


def _read_cuts(text: str) -> tuple[list[float], list | None]:
    """Cut points (and the classes, when a JSON file names them) from ``--apply CUTS``."""
    if text.lower().endswith(".json") or os.path.isfile(text):
        try:
            with open(text, encoding="utf-8") as fh:
                spec = json.load(fh)
        except (OSError, ValueError) as e:
            raise UsageError(f"--apply {text!r}: cannot read it as a JSON file ({e}).") from None
        if isinstance(spec, list):
            spec = {"thresholds": spec}
        if not isinstance(spec, dict) or "thresholds" not in spec:
            raise UsageError(
                f"--apply {text!r}: the JSON file needs a \"thresholds\" list (as written by "
                "`fastkappa thresholds --format json`) or is a list of numbers.")
        cuts, labels = spec["thresholds"], spec.get("labels")
    else:
        cuts, labels = [c.strip() for c in text.split(",")], None
    try:
        values = [float(c) for c in cuts]
    except (TypeError, ValueError):
        raise UsageError(
            f"--apply {text!r}: cut points must be numbers, comma-separated (0.5,1.5,2.5) or "
            "in a JSON file.") from None
    if not values:
        raise UsageError(f"--apply {text!r}: no cut points.")
    return values, labels


def _apply_from_args(args) -> Output:
    """``thresholds --apply``: the cut points checked here (a usage error exits 2)."""
    for flag, value in (("--true", args.true), ("--cv", args.cv), ("--groups", args.groups),
                        ("--plot", args.plot), ("--sample-weight", args.sample_weight),
                        ("--frequency-weight", args.frequency_weight),
                        ("--ignore-index", args.ignore_index)):
        if value is not None:
            raise UsageError(
                f"{flag} does not go with --apply, which only cuts --score into classes "
                "(to score the labels against a reference, run `fastkappa score` on them).")
    cuts, labels = _read_cuts(args.apply)
    if args.labels is not None:
        labels = args.labels
    elif args.n_classes is not None:
        labels = list(range(args.n_classes))
    if labels is None:
        labels = list(range(len(cuts) + 1))
    if len(labels) != len(cuts) + 1:
        raise UsageError(
            f"--apply: {len(cuts)} cut points make {len(cuts) + 1} classes, but "
            f"{len(labels)} class labels were given ({labels!r}); give one label per class.")
    try:
        th = Thresholds(cuts, labels)
    except ValueError as e:
        raise UsageError(f"--apply {args.apply!r}: {e}") from None
    return apply(args.file, score=args.score, thresholds=th, id_col=args.id, sep=args.sep,
                 nan_policy=args.nan_policy, progress=_progress(args))


def apply(file: str, *, score: str, thresholds, id_col: str | None = None,
          sep: str | None = None, nan_policy: str = "raise", progress: bool = False
          ) -> Output:
    """Cut the ``score`` column with :class:`fastkappa.Thresholds`; one label per row (CSV)."""
    th = thresholds
    labels = np.asarray(th.labels).tolist()
    src = open_source(file, sep=sep)
    try:
        # the ids are echoed: read like a label column (whole numbers or words, each
        # written back as read), not as a group id (where 1.5 is an id)
        cols = _read_file_columns(src, [id_col] if id_col else [], score_cols=[score],
                                  nan_policy=nan_policy, progress=progress)
    except DataError as e:
        # say what an id may hold
        where = re.match(r"(row \d+): column (.+?) holds (.+?), which is (?:not a class "
                         r"label|outside the range of integer class labels)", str(e))
        if id_col is None or where is None or where.group(2) != repr(id_col):
            raise
        raise DataError(
            f"{where.group(1)}: the --id column {id_col!r} holds {where.group(3)}; ids "
            "must be strings or whole numbers from -2**63 to 2**63 - 1 (write others as "
            "text in the file, e.g. with a letter in front).") from None
    predicted = apply_thresholds(cols[score], th)
    ids = cols[id_col] if id_col else None
    name = "label" if id_col != "label" else "predicted_label"
    if ids is None:
        rows = [{name: v} for v in predicted.tolist()]
    else:
        rows = [{id_col: i, name: v} for i, v in zip(ids.tolist(), predicted.tolist(),
                                                       strict=True)]
    data = {"command": "thresholds", "file": src.name, "score": score,
            "n_rows": len(predicted), "thresholds": np.asarray(th), "labels": list(labels),
            "id": id_col, "predictions": rows}
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _csv_value(v) for k, v in row.items()})
    return Output(buf.getvalue(), data, rows)

