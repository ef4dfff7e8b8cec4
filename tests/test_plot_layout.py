"""Figures drawn with ``ax=`` into the user's own grid keep their text apart.

Every figure of ``fastkappa.plot`` and ``fastkappa.plot_agreement`` is drawn
into a 2 x 2 ``subplots`` grid with constrained layout and rendered with Agg;
then the window extents (``Text.get_window_extent``) of every visible text are
compared: a panel's title must not touch any other text of its panel (the
column heading of a forest plot was once written under it), and no text of a
panel may reach into another panel's text or plot area, or leave the figure.
"""

from __future__ import annotations

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import fastkappa as fk  # noqa: E402
import fastkappa.plot as fkplot  # noqa: E402
import fastkappa.plot_agreement as fkpa  # noqa: E402

#: pixels two boxes may share before they count as overlapping (anti-aliasing)
TOLERANCE = 0.5


def _data(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 5, n)
    preds = {"model_a": np.clip(y + rng.integers(-1, 2, n), 0, 4),
             "model_b": np.clip(y + rng.integers(-2, 3, n), 0, 4),
             "model_c": np.where(rng.random(n) < 0.7, y, rng.integers(0, 5, n))}
    site = rng.choice(["Leeds", "Porto", "Lyon", "Graz"], n)
    return y, preds, site


def _overlap(a, b) -> bool:
    return (a.x0 < b.x1 - TOLERANCE and b.x0 < a.x1 - TOLERANCE
            and a.y0 < b.y1 - TOLERANCE and b.y0 < a.y1 - TOLERANCE)


def _texts(ax, renderer) -> list[tuple[Text, object]]:
    """The visible, non-empty texts drawn by one panel, with their window extents."""
    out = []
    for t in ax.findobj(Text):
        if t.get_visible() and t.get_text().strip() and t.figure is not None:
            out.append((t, t.get_window_extent(renderer)))
    return out


def _title(ax, texts):
    titles = [(t, box) for t, box in texts
              if t.get_text() in {ax.get_title(loc=loc) for loc in ("left", "center", "right")}
              and t.get_text()]
    assert titles, "every fastkappa figure has a title"
    return titles


def _render(fig):
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _check_grid(fig) -> None:
    renderer = _render(fig)
    figure_box = fig.bbox
    axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    panels = {ax: _texts(ax, renderer) for ax in axes}
    for ax, texts in panels.items():
        for title, box in _title(ax, texts):
            for other, other_box in texts:
                if other is title:
                    continue
                assert not _overlap(box, other_box), (
                    f"title {title.get_text()!r} runs into {other.get_text()!r}")
        for t, box in texts:
            assert (box.x0 >= figure_box.x0 - TOLERANCE and box.x1 <= figure_box.x1 + TOLERANCE
                    and box.y0 >= figure_box.y0 - TOLERANCE
                    and box.y1 <= figure_box.y1 + TOLERANCE), (
                f"{t.get_text()!r} leaves the figure")
    for ax, texts in panels.items():
        for other_ax, other_texts in panels.items():
            if other_ax is ax or other_ax in ax.child_axes:
                continue
            area = other_ax.get_window_extent(renderer)
            for t, box in texts:
                assert not _overlap(box, area), (
                    f"{t.get_text()!r} reaches into another panel")
                for o, other_box in other_texts:
                    assert not _overlap(box, other_box), (
                        f"{t.get_text()!r} runs into {o.get_text()!r} of another panel")


def _grid(figsize=(12, 8)):
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots(2, 2)


@pytest.mark.parametrize("p_adjust", [None, "holm"])
def test_comparison_figures_in_a_two_by_two_grid(p_adjust):
    y, preds, site = _data()
    comp = fk.compare(y, preds, weights="quadratic", n_resamples=300, seed=0,
                      p_adjust=p_adjust)
    by_site = fk.kappa_by_group(y, preds["model_a"], site, weights="quadratic",
                                method="percentile", n_resamples=200, seed=1)
    fig, axs = _grid()
    fkplot.forest(comp, ax=axs[0, 0])
    fkplot.differences(comp, ax=axs[0, 1])
    fkplot.forest(by_site, ax=axs[1, 0], sort=True)
    fkplot.confusion_matrix(y, preds["model_a"], weights="quadratic", ax=axs[1, 1])
    _check_grid(fig)
    for ax in (axs[0, 0], axs[1, 0]):  # the axis names the weighting
        assert ax.get_xlabel().startswith("quadratic-weighted kappa")
    assert axs[0, 1].get_xlabel() == "difference in quadratic-weighted kappa (QWK) (a − b)"


def test_other_figures_in_a_two_by_two_grid():
    y, preds, _ = _data()
    res = fk.kappa_ci(y, preds["model_b"], weights="linear", n_resamples=300, seed=0)
    scores = y + np.random.default_rng(3).normal(0, 0.7, len(y))
    opt = fk.ThresholdOptimizer(n_classes=5).fit(y, scores)
    ratings = np.stack([y, preds["model_a"], preds["model_b"]], axis=1)[:300]
    agreement = fk.agreement(ratings, method="asymptotic")
    fig, axs = _grid()
    fkplot.bootstrap_distribution(res, ax=axs[0, 0])
    fkplot.threshold_curve(opt, ax=axs[0, 1])
    fkpa.forest(agreement, ax=axs[1, 0])
    fkplot.forest({"model_a": fk.kappa_ci(y, preds["model_a"], weights="linear",
                                          n_resamples=300, seed=0),
                   "model_b": res}, ax=axs[1, 1])
    _check_grid(fig)
    assert axs[0, 0].get_xlabel() == "linear-weighted kappa"
    assert axs[0, 1].get_ylabel().startswith("quadratic-weighted kappa")


def test_the_title_of_a_narrow_forest_clears_its_column_heading():
    # the regression: a title wider than its Axes was drawn over the heading
    y, preds, _ = _data()
    comp = fk.compare(y, preds, method="asymptotic", weights="quadratic")
    fig = Figure(figsize=(6, 3), layout="constrained")
    ax = fig.subplots()
    fkplot.differences(comp, ax=ax)
    renderer = _render(fig)
    (header,) = [t for t in ax.texts if t.get_gid() == "fastkappa-label-header"]
    title = ax.get_title(loc="left")
    (title_text,) = [t for t in ax.findobj(Text) if t.get_text() == title]
    assert not _overlap(title_text.get_window_extent(renderer),
                        header.get_window_extent(renderer))
    assert title_text.get_window_extent(renderer).y0 >= (
        header.get_window_extent(renderer).y1 - TOLERANCE)
