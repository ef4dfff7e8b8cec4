"""``fastkappa demo``: score the shipped retinopathy set, a published table, figures."""

from __future__ import annotations

import os
import sys

import numpy as np

from ... import __version__
from ...bootstrap import kappa_ci, kappa_ci_from_confusion
from ...compare import compare
from ...data import GRADE_NAMES, load_fleiss_1969, load_retinopathy
from ...metrics import confusion_matrix
from .._common import UsageError
from ..figures import _PLOT_INSTALL, _demo_figures, _has_matplotlib
from ..output import Output, _ci_dict, _ci_text, _matrix_text, _p_at_floor, _pair_dict, _pairs_text
from ..parser import DEMO_FIGURES


def run(args) -> Output:
    """``fastkappa demo`` from parsed arguments."""
    return demo(n_resamples=args.n_resamples, seed=args.seed, figures_dir=args.figures,
                no_figures=args.no_figures, fmt=args.format)


def demo(*, n_resamples: int = 10_000, seed: int = 0, figures_dir: str | None = None,
         no_figures: bool = False, fmt: str = "text") -> Output:
    """Score the shipped retinopathy set and a published table; save the figures in
    ``figures_dir`` (default ``DEMO_FIGURES``) unless ``no_figures``."""
    folder, why_none = _demo_folder(figures_dir, no_figures)
    d = load_retinopathy()
    y = d["y_true"]
    patient = d["patient_id"]
    models = {m: d[m] for m in ("model_a", "model_b", "model_c")}
    k = len(GRADE_NAMES)
    common = {"weights": "quadratic", "n_classes": k}
    boot = {"n_resamples": n_resamples, "seed": seed}
    results = {}
    for name, pred in models.items():
        results[name] = kappa_ci(y, pred, method="bca", clusters=patient, **common, **boot)
    best = max(results, key=lambda m: results[m].estimate)
    comp = compare(y, models, method="bca", clusters=patient, p_adjust="holm",
                      **common, **boot)
    cm = confusion_matrix(y, models[best], n_classes=k)
    table = load_fleiss_1969()
    pub = kappa_ci_from_confusion(table["table"], method="asymptotic")

    data = {
        "command": "demo",
        "fastkappa_version": __version__, "weights": "quadratic", "method": "bca",
        "confidence_level": 0.95, "n_resamples": n_resamples, "seed": seed,
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
    data["no_figures"] = why_none
    rows.append({"kind": "published", "name": "Fleiss, Cohen & Everitt 1969",
                 "estimate": pub.estimate, "low": pub.low, "high": pub.high, "p_value": "",
                 "p_value_is_bound": "", "weights": "none", "method": "asymptotic"})
    prev = ", ".join(f"{g} {100 * v:.1f}%" for g, v in zip(
        GRADE_NAMES, np.bincount(y, minlength=k) / len(y), strict=True))
    lines = [
        "fastkappa demo: simulated diabetic-retinopathy screening set (ships with fastkappa)",
        f"{len(y):,} eyes of {len(np.unique(patient)):,} patients, grades 0-4: {prev}",
        "",
        f"quadratic-weighted kappa (QWK), 95% BCa intervals, {n_resamples:,} resamples "
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
    elif not no_figures:
        lines += ["", f"no figures: {why_none}."]
        if fmt != "text":  # the note would be lost in JSON or CSV on stdout
            print(f"fastkappa demo: note: no figures: {why_none}.", file=sys.stderr)
    return Output("\n".join(lines), data, rows)


def _demo_folder(figures: str | None, no_figures: bool) -> tuple[str | None, str | None]:
    """The folder for the demo's figures (created), or None and why there are none.

    ``--figures DIR`` that cannot be honoured is a usage error (exit 2); the
    default folder only gives a note, so the demo runs without matplotlib or
    in a read-only folder.
    """
    if no_figures:
        return None, "--no-figures was given"
    explicit = figures is not None
    folder = figures if explicit else DEMO_FIGURES
    if not _has_matplotlib():
        if explicit:
            raise UsageError(f"--figures needs matplotlib, which is not installed; install "
                             f"it with: {_PLOT_INSTALL}")
        return None, f"matplotlib is not installed; add it with: {_PLOT_INSTALL}"
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

