"""Figures of the commands (``--plot PATH``, ``demo``), on bare matplotlib Figures."""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence

import numpy as np

from .._install import install_hint
from .._io import DataError
from ._common import UsageError
from .output import Output

#: file formats ``--plot`` writes (told by the file name's suffix)
PLOT_SUFFIXES = (".png", ".svg", ".pdf")
#: resolution of the PNG figures (small files that stay sharp on a screen)
FIGURE_DPI = 110
#: above this many groups ``score --by --plot`` leaves the forest plot out
MAX_PLOTTED_GROUPS = 60
_PLOT_INSTALL = install_hint("plot")

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
                  ci=None, by=None, normalize=None):
    """Confusion heatmap; below it the bootstrap distribution (``ci``), the groups (``by``)."""
    from .. import plot as fkplot

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
                            names=names, ax=axes[0], normalize=normalize)
    if ci is not None:
        fkplot.bootstrap_distribution(ci, ax=axes[1])
    if by is not None:
        fkplot.forest(by, ax=axes[-1])
    return fig


def _comparison_figure(comp):
    """Each model's kappa (forest plot) above the paired differences."""
    from .. import plot as fkplot

    fig, (top, bottom) = _figure([1.6 + 0.36 * len(comp.models),
                                  1.6 + 0.36 * len(comp.pairs)])
    fkplot.forest(comp, ax=top)
    fkplot.differences(comp, ax=bottom)
    return fig


def _thresholds_figure(opt):
    from .. import plot as fkplot

    fig, (ax,) = _figure([4.2], width=7.5)
    fkplot.threshold_curve(opt, ax=ax)
    return fig


def _add_plot(out: Output, path: str, fig) -> Output:
    """Save ``fig`` at ``path`` and say so in the output."""
    _save_figure(fig, path)
    out.data["plot"] = path
    out.text = out.text.rstrip("\n") + f"\nfigure: {path}"
    return out



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
    from .. import plot as fkplot
    from ..data import GRADE_NAMES
    from ..thresholds import ThresholdOptimizer

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
    opt = ThresholdOptimizer(n_classes=k).fit(y, np.asarray(score, dtype=np.float64))
    saved.append(save(_thresholds_figure(opt), curve))
    return saved
