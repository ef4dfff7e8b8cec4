"""Figures of agreement: confusion heatmap, bootstrap distribution, forest plots, thresholds.

Import it explicitly (``import fastkappa.plot`` or ``from fastkappa import
plot``); ``import fastkappa`` does not load it. Every function imports
matplotlib when it is called (``pip install "fastkappa[plot]"``; from a clone
``pip install -e ".[plot]"``), draws on the
Axes passed as ``ax`` (or on a new figure), and returns that Axes.

The figures are meant to survive a black-and-white printer: greyscale
colormaps, black lines told apart by their line style and marker, and the
numbers written on the figure.

Every artist that carries a number has a ``gid`` (for example
``"fastkappa-estimate"``), so tests and downstream code can read the values
back from the figure.

Examples
--------
>>> import fastkappa as fk
>>> import fastkappa.plot
>>> ax = fastkappa.plot.confusion_matrix([0, 1, 2, 2], [0, 2, 2, 1],
...                                      weights="quadratic")  # doctest: +SKIP
>>> ax.figure.savefig("confusion.png")  # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from . import _display
from ._display import level as _level
from ._display import method_label as _method_label
from ._install import install_hint

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = [
    "bootstrap_distribution",
    "confusion_matrix",
    "differences",
    "forest",
    "threshold_curve",
]

_INSTALL = install_hint("plot")

#: line styles of successive curves (told apart without colour)
_LINESTYLES = ("-", "--", "-.", ":")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")

#: above this many classes the cell numbers (and weight annotations) are left out
_MAX_ANNOTATED = 20
_MAX_WEIGHT_ANNOTATED = 12


# --------------------------------------------------------------------------- helpers


def _pyplot():
    """matplotlib.pyplot, or an ImportError that says how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            f"fastkappa.plot needs matplotlib; install it with: {_INSTALL}") from None
    return plt


def _axes(ax, figsize: tuple[float, float]):
    """The Axes to draw on: ``ax`` itself, or a new (pyplot) figure's only Axes.

    With ``ax`` given, pyplot is not imported: drawing on the Axes of a bare
    ``matplotlib.figure.Figure`` touches no global plotting state.
    """
    if ax is None:
        _, ax = _pyplot().subplots(figsize=figsize, layout="constrained")
        return ax
    try:
        import matplotlib  # noqa: F401  (the same message whether or not ax is given)
    except ImportError:
        raise ImportError(
            f"fastkappa.plot needs matplotlib; install it with: {_INSTALL}") from None
    return ax


def _halo(width: float = 3.0) -> list:
    """Path effect: a white outline, so a black line stays visible on dark cells."""
    from matplotlib import patheffects

    return [patheffects.withStroke(linewidth=width, foreground="white")]


def _f(x: float, digits: int = 3, sign: bool = False) -> str:
    return _display.number(x, digits, f"+.{digits}f" if sign else "")


def _title_above_header(ax, title: str) -> None:
    """The panel title, raised above the column heading written at the Axes' top right
    (``_draw_rows(header=...)``), so that a long title never runs into it."""
    from matplotlib.font_manager import FontProperties

    heading = FontProperties(size="small").get_size_in_points()
    ax.set_title(title, loc="left", fontsize="medium", pad=6.0 + 1.5 * heading)


def _fmt_cell(v: float, normalized: bool) -> str:
    """Text written in a confusion cell."""
    if not math.isfinite(v):
        return "–"
    if normalized:
        return f"{v:.2f}"
    if float(v).is_integer():
        return f"{int(v):,}"
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"


def _fmt_weight(w: float) -> str:
    return f"{w:g}" if float(w).is_integer() else f"{w:.2g}"


# --------------------------------------------------------------------------- confusion


def confusion_matrix(
    y_true: ArrayLike | None = None,
    y_pred: ArrayLike | None = None,
    *,
    confusion: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    normalize: str | None = None,
    weights: str | ArrayLike | None = None,
    ax: Axes | None = None,
    cmap: Any = "Greys",
    annotate: bool | None = None,
    show_weights: bool | None = None,
    colorbar: bool = True,
    names: tuple[str, str] = ("y_true", "y_pred"),
    n_classes: int | None = None,
    sample_weight: ArrayLike | None = None,
    ignore_index: Any = None,
    nan_policy: str = "raise",
    thresholds: ArrayLike | None = None,
) -> Axes:
    """Heatmap of a confusion matrix with its counts and its weight structure.

    Rows are ``y_true`` classes (top to bottom), columns ``y_pred`` classes
    (left to right), as in :func:`fastkappa.confusion_matrix`.

    How the disagreement weights are shown: every cell whose weight is zero
    (the agreement diagonal) is framed with a heavy black line on a white
    halo, and, when the off-diagonal weights are not all equal (linear,
    quadratic or a custom matrix), each off-diagonal cell carries its weight
    in small type in its top-left corner (``w=4``). The title names the
    weights.

    Parameters
    ----------
    y_true, y_pred : array_like of shape (n,), optional
        Labels of the two raters, as for :func:`fastkappa.confusion_matrix`
        (``y_pred`` may be (n, K) scores, or 1-D scores with
        ``thresholds``). Pass these or ``confusion``.
    confusion : array_like of shape (K, K), optional
        A confusion matrix (rows ``y_true``) instead of raw labels.
    labels : array_like, optional
        With raw labels: the classes in scale order (as everywhere in
        fastkappa). With ``confusion``: the K class names for the axes.
    normalize : {None, 'true', 'pred', 'all'}, default None
        None shows counts (sums of ``sample_weight`` when given); ``'true'``
        divides each row by its total (the share of each ``y_true`` class
        given each prediction); ``'pred'`` each column; ``'all'`` the whole
        table. A row or column with no rows shows a dash.
    weights : None, 'linear', 'quadratic' or array_like of shape (K, K)
        Disagreement weights to show (see :func:`fastkappa.weight_matrix`).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.
    cmap : str or matplotlib Colormap, default 'Greys'
        A colormap that reads in greyscale ('Greys', 'cividis', 'gray_r').
    annotate : bool, optional
        Write the value in each cell (default: when K <= 20).
    show_weights : bool, optional
        Write each off-diagonal weight in its cell's corner (default: when
        K <= 12 and the off-diagonal weights differ).
    colorbar : bool, default True
        Draw a colorbar.
    names : (str, str), default ('y_true', 'y_pred')
        Axis titles for the rows and the columns.
    n_classes, sample_weight, ignore_index, nan_policy, thresholds
        The input keywords of :func:`fastkappa.confusion_matrix` (only
        with raw labels).

    Returns
    -------
    matplotlib.axes.Axes
        The image is ``ax.images[0]`` (its array holds the shown values);
        cell texts have gid ``"fastkappa-cell-i-j"``, weight texts
        ``"fastkappa-weight-i-j"``.

    Examples
    --------
    >>> import fastkappa.plot as fkplot
    >>> ax = fkplot.confusion_matrix([0, 1, 2, 2, 1], [0, 2, 2, 2, 1],
    ...                              weights="quadratic", normalize="true")  # doctest: +SKIP
    >>> ax = fkplot.confusion_matrix(confusion=[[20, 5], [3, 22]],
    ...                              labels=["no", "yes"])  # doctest: +SKIP
    """
    from ._core import weights as _weights
    from ._core.encode import encode_pair
    from ._core.shapes import flatten_labels
    from .metrics import _check_confusion

    if normalize not in (None, "true", "pred", "all"):
        raise ValueError(
            f"`normalize` must be None, 'true', 'pred' or 'all'; got {normalize!r}.")
    if confusion is not None:
        if y_true is not None or y_pred is not None:
            raise ValueError("pass either `y_true` and `y_pred` or `confusion=`, not both.")
        given = {"n_classes": n_classes, "sample_weight": sample_weight,
                 "ignore_index": ignore_index, "thresholds": thresholds}
        extra = [k for k, v in given.items() if v is not None]
        if nan_policy != "raise":
            extra.append("nan_policy")
        if extra:
            raise ValueError(
                f"{', '.join(f'`{k}`' for k in extra)} can only be used with raw labels "
                "(`y_true`, `y_pred`); `confusion=` is already a table of counts.")
        o = _check_confusion(confusion)
        k = o.shape[0]
        if labels is None:
            classes = np.arange(k)
        else:
            classes = np.asarray(labels)
            if classes.ndim != 1 or len(classes) != k:
                raise ValueError(
                    f"with `confusion=` of shape ({k}, {k}), `labels` must name the {k} "
                    f"classes; got {np.shape(labels)}.")
        wmat = _weights.weight_matrix(k, weights)
    else:
        if y_true is None or y_pred is None:
            raise ValueError(
                "pass `y_true` and `y_pred` (raw labels) or `confusion=` (a (K, K) table).")
        y_true, y_pred, sample_weight = flatten_labels(y_true, y_pred, names=names,
                                                       sample_weight=sample_weight)
        enc = encode_pair(y_true, y_pred, labels=labels, n_classes=n_classes,
                          sample_weight=sample_weight, ignore_index=ignore_index,
                          nan_policy=nan_policy, thresholds=thresholds, weights=weights,
                          names=names)
        o = enc.confusion()
        classes = enc.classes
        wmat = enc.weights
    k = o.shape[0]

    counts = np.asarray(o, dtype=np.float64)
    shown = counts
    if normalize is not None:
        with np.errstate(invalid="ignore", divide="ignore"):
            if normalize == "true":
                shown = counts / counts.sum(axis=1, keepdims=True)
            elif normalize == "pred":
                shown = counts / counts.sum(axis=0, keepdims=True)
            else:
                shown = counts / counts.sum()

    side = min(9.0, 2.2 + 0.55 * k)
    ax = _axes(ax, (side + (1.2 if colorbar else 0.0), side))
    vmax = 1.0 if normalize is not None else float(counts.max())  # > 0: checked above
    from matplotlib import colormaps

    cm = (colormaps[cmap] if isinstance(cmap, str) else cmap).with_extremes(bad="white")
    im = ax.imshow(np.ma.masked_invalid(shown), cmap=cm, vmin=0.0, vmax=vmax,
                   interpolation="nearest", aspect="equal")
    im.set_gid("fastkappa-confusion")

    if annotate is None:
        annotate = k <= _MAX_ANNOTATED
    off = ~np.eye(k, dtype=bool)
    varying = k > 1 and np.unique(wmat[off]).size > 1
    if show_weights is None:
        show_weights = varying and k <= _MAX_WEIGHT_ANNOTATED
    size = max(6.0, min(11.0, 44.0 / max(k, 1)))

    def ink(v: float) -> str:  # text colour readable on the cell's shade
        return "white" if math.isfinite(v) and v / vmax > 0.55 else "black"

    for i in range(k):
        for j in range(k):
            v = float(shown[i, j])
            if annotate:
                ax.text(j, i, _fmt_cell(v, normalize is not None), ha="center",
                        va="center", fontsize=size, color=ink(v),
                        gid=f"fastkappa-cell-{i}-{j}")
            if show_weights and i != j:
                ax.text(j - 0.46, i - 0.44, f"w={_fmt_weight(wmat[i, j])}", ha="left",
                        va="top", fontsize=max(5.5, 0.7 * size), color=ink(v),
                        style="italic", gid=f"fastkappa-weight-{i}-{j}")

    from matplotlib.patches import Rectangle

    for i, j in zip(*np.nonzero(wmat == 0), strict=True):
        frame = Rectangle((j - 0.5, i - 0.5), 1.0, 1.0, fill=False, edgecolor="black",
                          linewidth=1.8, path_effects=_halo(4.0), gid="fastkappa-agreement",
                          zorder=3)
        ax.add_patch(frame)

    ax.set_xticks(np.arange(k), [str(c) for c in classes])
    ax.set_yticks(np.arange(k), [str(c) for c in classes])
    ax.set_xlabel(f"{names[1]} (predicted)")
    ax.set_ylabel(f"{names[0]} (reference)")
    ax.xaxis.set_ticks_position("bottom")
    if isinstance(weights, str):
        wname = f"{weights} weights"
    elif weights is None:
        wname = "unweighted"
    else:
        wname = "custom weights"
    what = {None: "counts", "true": "share of each row", "pred": "share of each column",
            "all": "share of all rows"}[normalize]
    ax.set_title(f"confusion matrix: {what}\n{wname}; framed cells = agreement",
                 fontsize="medium")
    if colorbar:
        bar = ax.figure.colorbar(im, ax=ax, shrink=0.8)
        bar.set_label("count" if normalize is None else "proportion")
    return ax


# --------------------------------------------------------------------------- bootstrap


def _normal_pdf(x: np.ndarray, mean: float, sd: float) -> np.ndarray:
    z = (x - mean) / sd
    return np.exp(-0.5 * z * z) / (sd * math.sqrt(2.0 * math.pi))


def bootstrap_distribution(result, *, ax: Axes | None = None, bins: int | Sequence | str = 50
                           ) -> Axes:
    """Histogram of the bootstrap replicates, with the estimate and interval marked.

    The estimate is a solid vertical line, the interval ends are dashed
    lines; the legend gives their values. An asymptotic result has no
    replicates: the normal density implied by ``estimate`` and
    ``standard_error`` is drawn instead (restricted to [-1, 1], where kappa
    lives).

    Parameters
    ----------
    result : KappaCI
        From :func:`fastkappa.kappa_ci` (or ``CohenKappa.ci``).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.
    bins : int, sequence or str, default 50
        Passed to :meth:`matplotlib.axes.Axes.hist`.

    Returns
    -------
    matplotlib.axes.Axes
        Histogram bars have gid ``"fastkappa-replicates"`` (counts, so their
        heights sum to the number of defined replicates); the density curve
        ``"fastkappa-density"``; the lines ``"fastkappa-estimate"``,
        ``"fastkappa-low"`` and ``"fastkappa-high"``.

    Examples
    --------
    >>> import numpy as np
    >>> import fastkappa as fk
    >>> import fastkappa.plot as fkplot
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 5, 1000)
    >>> res = fk.kappa_ci(y, np.clip(y + rng.integers(-1, 2, 1000), 0, 4),
    ...                   weights="quadratic", n_resamples=1000, seed=0)
    >>> ax = fkplot.bootstrap_distribution(res)  # doctest: +SKIP
    """
    if not all(hasattr(result, a) for a in ("estimate", "low", "high", "standard_error")):
        raise TypeError(
            "bootstrap_distribution() takes one interval (a KappaCI from fastkappa.kappa_ci, "
            "or one model of a comparison: comparison.models[name]); got "
            f"{type(result).__name__}.")
    ax = _axes(ax, (6.4, 4.0))
    dist = getattr(result, "distribution", None)
    dist = None if dist is None else np.asarray(dist, dtype=np.float64).ravel()
    est = float(result.estimate)
    low, high = float(result.low), float(result.high)
    se = float(result.standard_error)
    level = _level(getattr(result, "confidence_level", None))
    method = _method_label(getattr(result, "method", None))
    if dist is not None and dist.size:
        _, _, patches = ax.hist(dist, bins=bins, color="0.78", edgecolor="0.3",
                                linewidth=0.4, label=f"{dist.size:,} replicates")
        for p in patches:
            p.set_gid("fastkappa-replicates")
        ax.set_ylim(0, 1.35 * max(p.get_height() for p in patches))  # room for the legend
        ax.set_ylabel("replicates")
        n_undef = int(getattr(result, "n_undefined", 0) or 0)
        note = f" ({n_undef:,} undefined, left out)" if n_undef else ""
        ax.set_title(f"bootstrap distribution of kappa{note}", fontsize="medium")
    else:
        if math.isfinite(est) and math.isfinite(se) and se > 0:
            lo_x, hi_x = max(-1.0, est - 4.0 * se), min(1.0, est + 4.0 * se)
            x = np.linspace(lo_x, hi_x, 401)
            y = _normal_pdf(x, est, se)
            (line,) = ax.plot(x, y, color="black", linewidth=1.2,
                              label=f"normal, SE {_f(se, 4)}")
            line.set_gid("fastkappa-density")
            ax.fill_between(x, y, color="0.85", linewidth=0)
            ax.set_ylim(0, 1.35 * float(y.max()))  # room for the legend
        ax.set_ylabel("density")
        ax.set_title("large-sample (normal) distribution of kappa", fontsize="medium")
    ax.axvline(est, color="black", linestyle="-", linewidth=1.8,
               label=f"estimate {_f(est)}", gid="fastkappa-estimate")
    label = f"{level} {method} interval".strip().replace("  ", " ")
    ax.axvline(low, color="black", linestyle="--", linewidth=1.4,
               label=f"{label}: {_f(low)} to {_f(high)}", gid="fastkappa-low")
    ax.axvline(high, color="black", linestyle="--", linewidth=1.4, gid="fastkappa-high")
    ax.set_xlabel(_display.kappa_name(getattr(result, "weights", None)))
    ax.legend(loc="upper left", fontsize="small", frameon=True)
    return ax


# --------------------------------------------------------------------------- forest


def _forest_rows(result) -> tuple[list[str], np.ndarray, np.ndarray | None,
                                  np.ndarray | None, dict]:
    """Names, estimates, lows, highs and plot metadata of a forest-plot input."""
    if hasattr(result, "models"):  # Comparison
        models = result.models
        names = [str(m) for m in models]
        cis = list(models.values())
        ref = getattr(result, "reference", None)
        meta = {"overall": None, "reference": None if ref is None else str(ref),
                "level": getattr(result, "confidence_level", None) or (
                    cis[0].confidence_level if cis else None),
                "method": getattr(result, "method", None) or (cis[0].method if cis else None),
                "n": None, "weights": getattr(result, "weights", None)}
    elif hasattr(result, "groups") and hasattr(result, "estimate"):  # KappaByGroup
        names = [str(g) for g in result.groups]
        est = np.asarray(result.estimate, dtype=np.float64)
        low = None if result.low is None else np.asarray(result.low, dtype=np.float64)
        high = None if result.high is None else np.asarray(result.high, dtype=np.float64)
        meta = {"overall": float(result.overall), "reference": None,
                "level": getattr(result, "confidence_level", None),
                "method": getattr(result, "method", None),
                "n": np.asarray(result.n_rows), "weights": getattr(result, "weights", None)}
        return names, est, low, high, meta
    elif isinstance(result, Mapping):  # {name: KappaCI}
        names = [str(m) for m in result]
        cis = list(result.values())
        for what, plural in (("weights", "weights"), ("confidence_level", "confidence levels"),
                             ("method", "methods")):
            seen = {str(getattr(c, what, None)) for c in cis}
            if len(seen) > 1:  # the title and axis name one setting for every row
                raise ValueError(
                    f"forest() draws a dict of KappaCI results with one title and axis, "
                    f"but their {plural} differ ({', '.join(sorted(seen))}); compute them "
                    f"with the same {what}, or draw them on separate axes.")
        meta = {"overall": None, "reference": None,
                "level": cis[0].confidence_level if cis else None,
                "method": cis[0].method if cis else None, "n": None,
                "weights": cis[0].weights if cis else None}
    else:
        raise TypeError(
            "forest() takes a Comparison (fastkappa.compare), a KappaByGroup "
            "(fastkappa.kappa_by_group) or a dict of KappaCI results; got "
            f"{type(result).__name__}.")
    est = np.array([float(c.estimate) for c in cis], dtype=np.float64)
    low = np.array([float(c.low) for c in cis], dtype=np.float64)
    high = np.array([float(c.high) for c in cis], dtype=np.float64)
    return names, est, low, high, meta


def _draw_rows(ax, names, est, low, high, *, sort: bool, texts: list[str], marker: str,
               header: str = "", special: int | None = None,
               summary: tuple[str, float, str] | None = None) -> np.ndarray:
    """Points and intervals, one row per entry, first row at the top; returns the order.

    ``summary = (name, value, text)`` adds a last row below a rule: a filled
    diamond at ``value`` and a dashed vertical line through every row.
    """
    n = len(names)
    order = np.arange(n)
    if sort:
        key = np.where(np.isfinite(est), est, -np.inf)
        order = np.argsort(-key, kind="stable")
    y = np.arange(n, dtype=np.float64)
    e, nm = est[order], [names[i] for i in order]
    if low is not None:
        lo, hi = low[order], high[order]
        ok = np.isfinite(lo) & np.isfinite(hi)
        ax.hlines(y[ok], lo[ok], hi[ok], colors="black", linewidth=1.6,
                  gid="fastkappa-interval")
        cap = 0.18
        ax.vlines(np.concatenate([lo[ok], hi[ok]]),
                  np.concatenate([y[ok], y[ok]]) - cap, np.concatenate([y[ok], y[ok]]) + cap,
                  colors="black", linewidth=1.2, gid="fastkappa-caps")
    fin = np.isfinite(e)
    (pts,) = ax.plot(e[fin], y[fin], linestyle="none", marker=marker, markersize=7,
                     markerfacecolor="white", markeredgecolor="black", markeredgewidth=1.5,
                     zorder=4)
    pts.set_gid("fastkappa-estimate")
    if special is not None:
        pos = int(np.flatnonzero(order == special)[0])
        (ref,) = ax.plot([e[pos]], [y[pos]], linestyle="none", marker=marker, markersize=7,
                         markerfacecolor="black", markeredgecolor="black", zorder=5)
        ref.set_gid("fastkappa-reference")
    for yi, i in zip(y, order, strict=True):
        ax.text(1.02, yi, texts[i], transform=ax.get_yaxis_transform(), ha="left",
                va="center", fontsize="small", family="monospace", clip_on=False,
                gid=f"fastkappa-label-{i}")
    if header:
        ax.text(1.02, 1.0, header, transform=ax.transAxes, ha="left", va="bottom",
                fontsize="small", family="monospace", clip_on=False,
                gid="fastkappa-label-header")
    rows = n
    if summary is not None:
        name, value, text = summary
        ax.axhline(n - 0.5, color="0.6", linewidth=0.8)
        ax.axvline(value, color="black", linestyle="--", linewidth=1.1, zorder=2,
                   gid="fastkappa-overall")
        (pt,) = ax.plot([value], [n], linestyle="none", marker="D", markersize=8,
                        color="black", zorder=5)
        pt.set_gid("fastkappa-overall-point")
        ax.text(1.02, n, text, transform=ax.get_yaxis_transform(), ha="left", va="center",
                fontsize="small", family="monospace", clip_on=False,
                gid="fastkappa-label-overall")
        y = np.append(y, n)
        nm = [*nm, name]
        rows += 1
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(nbins=6))
    ax.set_yticks(y, nm)
    if rows == 0:
        ax.text(0.5, 0.5, "nothing to show", transform=ax.transAxes, ha="center",
                va="center", color="0.4")
    ax.set_ylim(max(rows, 1) - 0.5, -0.5)
    ax.grid(axis="x", color="0.85", linewidth=0.6)
    ax.set_axisbelow(True)
    return order


def forest(result, *, ax: Axes | None = None, sort: bool = False) -> Axes:
    """Forest plot: one row per model or group, its kappa and interval.

    Parameters
    ----------
    result : Comparison, KappaByGroup or dict of KappaCI
        From :func:`fastkappa.compare` (one row per model; the reference
        model, if any, is drawn with a filled marker), from
        :func:`fastkappa.kappa_by_group` (one row per group, the interval when
        ``method`` was given, and the overall kappa as a dashed vertical line), or
        a dict ``{name: KappaCI}``. Each row's numbers are written at its
        right.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.
    sort : bool, default False
        Order rows by estimate, highest at the top (undefined ones last).
        Otherwise rows keep their order (models as given, groups sorted).

    Returns
    -------
    matplotlib.axes.Axes
        Points have gid ``"fastkappa-estimate"``, intervals
        ``"fastkappa-interval"`` (a LineCollection, one segment per row with
        a finite interval), the overall line ``"fastkappa-overall"``.

    Examples
    --------
    >>> import numpy as np
    >>> import fastkappa as fk
    >>> import fastkappa.plot as fkplot
    >>> rng = np.random.default_rng(0)
    >>> t = rng.integers(0, 3, 300)
    >>> p = np.where(rng.random(300) < 0.7, t, rng.integers(0, 3, 300))
    >>> res = fk.kappa_by_group(t, p, rng.integers(0, 4, 300), method="percentile", seed=0)
    >>> ax = fkplot.forest(res, sort=True)  # doctest: +SKIP
    """
    names, est, low, high, meta = _forest_rows(result)
    n = len(names)
    ax = _axes(ax, (7.5, 1.4 + 0.38 * max(n, 1)))
    texts = []
    for i in range(n):
        t = _f(est[i]) if math.isfinite(est[i]) else "undefined"
        if low is not None and math.isfinite(est[i]):
            t += f" ({_f(low[i])} to {_f(high[i])})"
        if meta["n"] is not None:
            t += f"  n={_fmt_cell(float(meta['n'][i]), False)}"
        texts.append(t)
    special = None
    if meta["reference"] is not None and meta["reference"] in names:
        special = names.index(meta["reference"])
        names = [f"{m} (reference)" if i == special else m for i, m in enumerate(names)]
    header = "kappa" + (f" ({_level(meta['level'])} CI)".replace("( ", "(")
                        if low is not None else "")
    summary = None
    if meta["overall"] is not None and math.isfinite(meta["overall"]):
        total = float(np.sum(meta["n"]))
        summary = ("overall", meta["overall"],
                   f"{_f(meta['overall'])}  n={_fmt_cell(total, False)}")
    _draw_rows(ax, names, est, low, high, sort=sort, texts=texts,
               marker="s" if meta["n"] is not None else "o", header=header, special=special,
               summary=summary)
    ax.set_xlabel(_display.kappa_name(meta["weights"]))
    what = "groups" if meta["n"] is not None else "models"
    if low is not None and meta["level"] is not None:
        _title_above_header(ax, f"kappa by {what[:-1]}, {_level(meta['level'])} "
                                f"{_method_label(meta['method'])} intervals".replace("  ", " "))
    else:
        _title_above_header(ax, f"kappa by {what[:-1]}")
    return ax


def _shown_p_values(comparison, pairs) -> tuple[list, str]:
    """The p-value written for each pair, and the column's title.

    The adjusted p-value (``p_adjusted``) when the comparison was adjusted
    (``comparison.p_adjust``, e.g. ``"holm"``), else the raw ``p_value``.
    """
    how = getattr(comparison, "p_adjust", None)
    if how is None:
        return [p.p_value for p in pairs], "p"
    label = {"holm": "Holm"}.get(how, str(how))
    return [p.p_adjusted for p in pairs], f"p ({label})"


def differences(comparison, *, ax: Axes | None = None, sort: bool = False) -> Axes:
    """Forest plot of the paired differences of a comparison, with a zero line.

    Parameters
    ----------
    comparison : Comparison
        From :func:`fastkappa.compare`; one row per pair ``a - b``, its
        difference ``kappa_a - kappa_b`` and interval. The p-value is written
        at the right: the adjusted one when ``p_adjust`` was given (the column
        title then says so, e.g. ``p (Holm)``), else the raw one.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.
    sort : bool, default False
        Order rows by difference, largest at the top.

    Returns
    -------
    matplotlib.axes.Axes
        Points have gid ``"fastkappa-estimate"``, intervals
        ``"fastkappa-interval"``, the zero line ``"fastkappa-zero"``; the
        text of pair ``i`` (in the order of ``comparison.pairs``) has gid
        ``"fastkappa-label-i"`` and ends with its p-value, the column titles
        ``"fastkappa-label-header"``.

    Examples
    --------
    >>> import numpy as np
    >>> import fastkappa as fk
    >>> import fastkappa.plot as fkplot
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 3, 300)
    >>> pred_a = np.where(rng.random(300) < 0.8, y, rng.integers(0, 3, 300))
    >>> pred_b = np.where(rng.random(300) < 0.6, y, rng.integers(0, 3, 300))
    >>> comp = fk.compare(y, {"a": pred_a, "b": pred_b}, n_resamples=1000, seed=0)
    >>> ax = fkplot.differences(comp)  # doctest: +SKIP
    """
    if not hasattr(comparison, "pairs"):
        raise TypeError("differences() takes a Comparison from fastkappa.compare; got "
                        f"{type(comparison).__name__}.")
    pairs = list(comparison.pairs)
    n = len(pairs)
    ax = _axes(ax, (7.5, 1.4 + 0.38 * max(n, 1)))
    names = [f"{p.a} − {p.b}" for p in pairs]
    est = np.array([float(p.difference) for p in pairs], dtype=np.float64)
    low = np.array([float(p.low) for p in pairs], dtype=np.float64)
    high = np.array([float(p.high) for p in pairs], dtype=np.float64)
    p_shown, p_head = _shown_p_values(comparison, pairs)
    level = _level(getattr(comparison, "confidence_level", None))
    left = [f"{_f(est[i], sign=True)} ({_f(low[i], sign=True)} to {_f(high[i], sign=True)})"
            for i in range(n)]
    head = f"difference ({level} CI)".replace("( ", "(")
    width = max([len(head), *map(len, left)])
    texts = [f"{t:<{width}}  {_display.p_value(pv, bound=p.p_value_is_bound)}"
             for t, pv, p in zip(left, p_shown, pairs, strict=True)]
    ax.axvline(0.0, color="0.35", linestyle="-", linewidth=1.0, gid="fastkappa-zero",
               zorder=1)
    _draw_rows(ax, names, est, low, high, sort=sort, texts=texts, marker="D",
               header=f"{head:<{width}}  {p_head}")
    ax.set_xlabel(f"difference in {_display.kappa_name(getattr(comparison, 'weights', None))}"
                  " (a − b)")
    method = _method_label(getattr(comparison, "method", None))
    _title_above_header(ax, f"paired differences, {level} {method} intervals".replace("  ", " "))
    return ax


# --------------------------------------------------------------------------- thresholds

def _field(obj, names: tuple[str, ...]):
    """``obj[name]`` (a dict or DataFrame) or ``obj.name``, for the first name present."""
    for name in names:
        if isinstance(obj, Mapping) or hasattr(obj, "columns"):
            if name in obj:
                return obj[name]
        elif hasattr(obj, name):
            return getattr(obj, name)
    return None


def _curve_segments(curve) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """``(cut, thresholds, kappa)`` per cut point from ``ThresholdOptimizer.curve_``."""
    x = _field(curve, ("threshold",))
    y = _field(curve, ("kappa", "qwk"))
    if x is None or y is None:
        raise ValueError(
            "cannot read the threshold curve: `curve_` should hold 'threshold' and "
            f"'kappa' arrays (and 'cut'); got {type(curve).__name__}.")
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    cut = _field(curve, ("cut",))
    cut = np.zeros(len(x), dtype=np.intp) if cut is None else np.asarray(cut).ravel()
    if not len(x) == len(y) == len(cut):
        raise ValueError(
            "cannot read the threshold curve: 'cut', 'threshold' and 'kappa' must have one "
            f"length; got {len(cut)}, {len(x)} and {len(y)}.")
    out = []
    for c in np.unique(cut):
        sel = cut == c
        order = np.argsort(x[sel], kind="stable")
        out.append((int(c), x[sel][order], y[sel][order]))
    return out


def threshold_curve(optimizer, *, ax: Axes | None = None) -> Axes:
    """Kappa against each cut point of a fitted ``ThresholdOptimizer``, optimum marked.

    Draws one curve per cut point from ``optimizer.curve_`` (kappa as that cut
    moves while the others stay at their optimum), each in its own line
    style and labelled by the two classes it separates (``cut 1|2``), a
    thin vertical line in the same style at each chosen cut point
    (``optimizer.thresholds_``) and a filled marker at the best kappa
    (``optimizer.qwk_``) on each.

    ``curve_`` is the long-format dict the optimizer stores: ``"cut"`` (the
    cut point's index ``c``, between class ``c`` and ``c + 1``),
    ``"threshold"`` (a position of that cut point) and ``"kappa"`` (kappa
    with the cut point there and the others at their optimum). A pandas
    DataFrame with these columns works too.

    Parameters
    ----------
    optimizer : ThresholdOptimizer
        Fitted (``fit`` was called).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The curve of cut ``c`` (0-based) has gid ``"fastkappa-curve-c"``, its
        line at the optimum ``"fastkappa-cut-c"``; the optimum markers
        ``"fastkappa-optimum"``.

    Examples
    --------
    >>> import numpy as np
    >>> import fastkappa as fk
    >>> import fastkappa.plot as fkplot
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 4, 2000)
    >>> opt = fk.ThresholdOptimizer().fit(y, y + rng.normal(0, 0.7, 2000))
    >>> ax = fkplot.threshold_curve(opt)  # doctest: +SKIP
    """
    curve = getattr(optimizer, "curve_", None)
    if curve is None:
        raise ValueError(
            "threshold_curve() needs a fitted ThresholdOptimizer (with `curve_`); call "
            "`.fit(y_true, scores)` first.")
    segments = _curve_segments(curve)
    cuts = np.atleast_1d(np.asarray(getattr(optimizer, "thresholds_", []), dtype=np.float64))
    best = getattr(optimizer, "qwk_", None)
    best = None if best is None else float(best)
    classes = [str(v) for v in getattr(optimizer, "classes_", [])]
    ax = _axes(ax, (7.0, 4.2))
    for n_drawn, (c, x, y) in enumerate(segments):
        style = _LINESTYLES[n_drawn % len(_LINESTYLES)]
        name = (f"cut {classes[c]}|{classes[c + 1]}" if c + 1 < len(classes)
                else f"cut {c}")
        if c < len(cuts):
            name += f" (optimum {cuts[c]:.4g})"
            ax.axvline(cuts[c], color="0.45", linewidth=0.9, linestyle=style,
                       gid=f"fastkappa-cut-{c}", zorder=1)
        (line,) = ax.plot(x, y, color="black", linewidth=1.3, linestyle=style, label=name)
        line.set_gid(f"fastkappa-curve-{c}")
    if best is not None and math.isfinite(best) and len(cuts):
        (opt,) = ax.plot(cuts, np.full(len(cuts), best), linestyle="none", marker="o",
                         markersize=6, color="black", zorder=5,
                         label=f"optimum: kappa {_f(best, 4)}")
        opt.set_gid("fastkappa-optimum")
    ax.set_xlabel("cut point (score)")
    weights = getattr(optimizer, "weights", "quadratic")
    ax.set_ylabel(_display.kappa_name(weights))
    ax.set_title("kappa as each cut point moves (others at their optimum)", loc="left",
                 fontsize="medium")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small", loc="best")
    ax.grid(color="0.9", linewidth=0.6)
    return ax
