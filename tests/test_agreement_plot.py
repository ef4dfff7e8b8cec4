"""fastkappa.plot_agreement: the figure renders and shows the result's numbers."""

from __future__ import annotations

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

import fastkappa as fk  # noqa: E402
import fastkappa.plot_agreement as fkpa  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _ratings(rng, n=200):
    truth = rng.integers(0, 3, n)
    x = np.where(rng.random((n, 4)) < 0.6, truth[:, None], rng.integers(0, 3, (n, 4)))
    return x.astype(float)


def _render(ax, path):
    ax.figure.savefig(path, dpi=60)
    img = mpimg.imread(path)
    assert img[..., :3].var() > 0, "the rendered figure is blank"


def _labels(ax):
    return {t.get_gid(): t.get_text() for t in ax.texts if (t.get_gid() or "").startswith(
        "fastkappa-label-")}


@pytest.mark.parametrize("sort", [False, True])
def test_forest_of_coefficients_shows_the_result(rng, tmp_path, sort):
    res = fk.agreement(_ratings(rng), weights="linear", method="percentile",
                       n_resamples=300, seed=0)
    ax = fkpa.forest(res, sort=sort)
    _render(ax, tmp_path / "forest.png")
    labels = _labels(ax)
    for i, row in enumerate(res):
        assert labels[f"fastkappa-label-{i}"] == (
            f"{row.estimate:.3f} ({row.low:.3f} to {row.high:.3f})")
    points = next(line for line in ax.lines if line.get_gid() == "fastkappa-estimate")
    assert sorted(points.get_xdata()) == pytest.approx(sorted(r.estimate for r in res))
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert "Gwet's AC2" in ticks and "Krippendorff's alpha" in ticks


def test_forest_by_category(rng, tmp_path):
    res = fk.agreement_by_category(_ratings(rng), coefficients=["fleiss_kappa", "gwet_ac"])
    ax = fkpa.forest(res, coefficient="gwet_ac")
    _render(ax, tmp_path / "categories.png")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0", "1", "2"]
    points = next(line for line in ax.lines if line.get_gid() == "fastkappa-estimate")
    assert list(points.get_xdata()) == pytest.approx([r["gwet_ac"].estimate
                                                      for r in res.values()])
    with pytest.raises(ValueError, match="not in the per-category results"):
        fkpa.forest(res, coefficient="conger_kappa")
    with pytest.raises(TypeError, match="takes an Agreement"):
        fkpa.forest({"a": 1})
