"""fastkappa.plot: every figure renders (Agg), and the numbers drawn are the result's numbers.

Values are read back from the matplotlib artists (cell texts, bar heights,
line and segment coordinates) by the ``gid`` each plotting function gives
them, and compared with the result objects and with independent oracles
(scikit-learn's confusion matrix, ``numpy.histogram``, scipy's normal pdf).

The forest and difference plots of models are tested on real
``fastkappa.compare`` results (every method, with and without Holm's
adjustment and a reference model), an asymptotic result without replicates
included.  One stand-in remains: an optimizer whose ``curve_`` cannot be read,
for the error path of ``threshold_curve``.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

import fastkappa as fk  # noqa: E402
import fastkappa.plot as fkplot  # noqa: E402

sklearn_metrics = pytest.importorskip("sklearn.metrics")
stats = pytest.importorskip("scipy.stats")

K = 5


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _data(n=3000, k=K, seed=0, noise=0.4):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, k, n)
    p = np.clip(t + rng.integers(-1, 2, n) * (rng.random(n) < noise), 0, k - 1)
    return t, p


def _render(ax, tmp_path, name="figure.png") -> np.ndarray:
    """Save the Axes' figure as PNG, read it back, check it is not blank."""
    path = tmp_path / name
    ax.figure.savefig(path, dpi=60)
    img = mpimg.imread(path)
    assert img.ndim == 3 and img.shape[0] > 50 and img.shape[1] > 50
    assert img[..., :3].var() > 0, "the rendered figure is blank"
    return img


def _texts(ax, prefix: str) -> dict[str, str]:
    return {t.get_gid(): t.get_text() for t in ax.texts
            if t.get_gid() and t.get_gid().startswith(prefix)}


def _lines(ax, gid: str):
    return [ln for ln in ax.lines if ln.get_gid() == gid]


def _collection(ax, gid: str):
    found = [c for c in ax.collections if c.get_gid() == gid]
    assert len(found) == 1, f"expected one collection {gid!r}, found {len(found)}"
    return found[0]


def _number(text: str) -> float:
    return float(text.replace(",", ""))


# --------------------------------------------------------------------------- import


def test_plot_import_does_not_load_matplotlib():
    code = ("import sys, fastkappa\n"
            "assert 'fastkappa.plot' not in sys.modules\n"
            "import fastkappa.plot\n"
            "from fastkappa import plot\n"
            "assert plot is sys.modules['fastkappa.plot']\n"
            "assert 'matplotlib' not in sys.modules, 'fastkappa.plot imported matplotlib'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def _calls(t, p):
    res = fk.kappa_ci(t, p, method="asymptotic")
    groups = fk.kappa_by_group(t, p, t % 2)
    comp = fk.compare(t, {"a": p, "b": t}, method="asymptotic")
    return [
        lambda: fkplot.confusion_matrix(t, p),
        lambda: fkplot.bootstrap_distribution(res),
        lambda: fkplot.forest(groups),
        lambda: fkplot.forest(comp),
        lambda: fkplot.differences(comp),
        lambda: fkplot.threshold_curve(fk.ThresholdOptimizer().fit(t, p + 0.1)),
    ]


def test_plot_missing_matplotlib_names_the_extra(monkeypatch):
    import re

    from fastkappa._install import install_hint

    t, p = _data(n=200)
    calls = _calls(t, p)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    for call in calls:
        with pytest.raises(ImportError, match=re.escape(install_hint("plot"))):
            call()


def test_plot_works_again_after_matplotlib_returns(tmp_path):
    # the previous test's monkeypatch is undone: matplotlib imports as usual
    t, p = _data(n=200)
    for call in _calls(t, p):
        ax = call()
        assert isinstance(ax, matplotlib.axes.Axes)
        _render(ax, tmp_path)
        plt.close(ax.figure)


# --------------------------------------------------------------------------- confusion


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_confusion_matrix_cell_texts_equal_counts(tmp_path, weights):
    t, p = _data()
    ax = fkplot.confusion_matrix(t, p, weights=weights)
    _render(ax, tmp_path)
    expected = sklearn_metrics.confusion_matrix(t, p)
    np.testing.assert_array_equal(expected, fk.confusion_matrix(t, p))
    cells = _texts(ax, "fastkappa-cell-")
    assert len(cells) == K * K
    for i in range(K):
        for j in range(K):
            assert _number(cells[f"fastkappa-cell-{i}-{j}"]) == expected[i, j]
    np.testing.assert_array_equal(np.asarray(ax.images[0].get_array()), expected)
    assert [tk.get_text() for tk in ax.get_yticklabels()] == [str(c) for c in range(K)]
    assert [tk.get_text() for tk in ax.get_xticklabels()] == [str(c) for c in range(K)]
    # weight structure: zero-weight cells framed; varying weights written in the cells
    frames = [pa for pa in ax.patches if pa.get_gid() == "fastkappa-agreement"]
    assert sorted((round(f.get_y() + 0.5), round(f.get_x() + 0.5)) for f in frames) == [
        (i, i) for i in range(K)]
    w = fk.weight_matrix(K, weights)
    wt = _texts(ax, "fastkappa-weight-")
    if weights is None:
        assert wt == {}  # all off-diagonal weights equal: nothing to tell apart
    else:
        assert len(wt) == K * (K - 1)
        for i in range(K):
            for j in range(K):
                if i != j:
                    assert wt[f"fastkappa-weight-{i}-{j}"] == f"w={w[i, j]:g}"


def test_confusion_matrix_normalize_true_matches_sklearn(tmp_path):
    t, p = _data(seed=1)
    ax = fkplot.confusion_matrix(t, p, normalize="true", weights="quadratic")
    _render(ax, tmp_path)
    expected = sklearn_metrics.confusion_matrix(t, p, normalize="true")
    np.testing.assert_allclose(np.asarray(ax.images[0].get_array()), expected, rtol=1e-12)
    cells = _texts(ax, "fastkappa-cell-")
    for i in range(K):
        for j in range(K):
            assert cells[f"fastkappa-cell-{i}-{j}"] == f"{expected[i, j]:.2f}"
    assert "share of each row" in ax.get_title()
    assert "quadratic" in ax.get_title()


@pytest.mark.parametrize("normalize", ["pred", "all"])
def test_confusion_matrix_other_normalizations_match_sklearn(normalize):
    t, p = _data(seed=2)
    ax = fkplot.confusion_matrix(t, p, normalize=normalize)
    expected = sklearn_metrics.confusion_matrix(t, p, normalize=normalize)
    np.testing.assert_allclose(np.asarray(ax.images[0].get_array()), expected, rtol=1e-12)


def test_confusion_matrix_from_table_with_named_classes(tmp_path):
    table = np.array([[20, 5, 0], [3, 22, 1], [0, 2, 1_234_567]])
    names = ["none", "mild", "severe"]
    ax = fkplot.confusion_matrix(confusion=table, labels=names, weights="linear",
                                 names=("reader", "model"))
    _render(ax, tmp_path)
    cells = _texts(ax, "fastkappa-cell-")
    assert cells["fastkappa-cell-2-2"] == "1,234,567"
    assert all(_number(cells[f"fastkappa-cell-{i}-{j}"]) == table[i, j]
               for i in range(3) for j in range(3))
    assert [tk.get_text() for tk in ax.get_yticklabels()] == names
    assert "reader" in ax.get_ylabel() and "model" in ax.get_xlabel()
    assert _texts(ax, "fastkappa-weight-")["fastkappa-weight-0-2"] == "w=2"


def test_confusion_matrix_declared_empty_class_shows_a_dash():
    # class 3 is declared but never occurs in y_true: its row share is undefined
    t = [0, 1, 2, 2, 1, 0]
    p = [0, 1, 2, 3, 1, 0]
    ax = fkplot.confusion_matrix(t, p, n_classes=4, normalize="true")
    cells = _texts(ax, "fastkappa-cell-")
    assert [cells[f"fastkappa-cell-3-{j}"] for j in range(4)] == ["–"] * 4
    assert np.ma.getmaskarray(ax.images[0].get_array())[3].all()
    assert cells["fastkappa-cell-2-3"] == "0.50"


def test_confusion_matrix_sample_weight_shows_weighted_sums():
    t, p = [0, 1, 1, 2], [0, 1, 2, 2]
    sw = [0.5, 2.0, 1.25, 3.0]
    ax = fkplot.confusion_matrix(t, p, sample_weight=sw)
    cells = _texts(ax, "fastkappa-cell-")
    expected = fk.confusion_matrix(t, p, sample_weight=sw)
    assert expected[1, 2] == 1.25
    for i in range(3):
        for j in range(3):
            assert _number(cells[f"fastkappa-cell-{i}-{j}"]) == pytest.approx(expected[i, j])


def test_confusion_matrix_draws_on_the_given_axes():
    _, (a1, a2) = plt.subplots(1, 2)
    t, p = _data(n=500)
    assert fkplot.confusion_matrix(t, p, ax=a2, colorbar=False) is a2
    assert len(a2.images) == 1 and len(a1.images) == 0


def test_confusion_matrix_many_classes_leave_out_cell_numbers():
    rng = np.random.default_rng(3)
    t = rng.integers(0, 25, 2000)
    ax = fkplot.confusion_matrix(t, t, weights="quadratic")
    assert _texts(ax, "fastkappa-cell-") == {}
    assert _texts(ax, "fastkappa-weight-") == {}
    ax = fkplot.confusion_matrix(t, t, annotate=True, show_weights=False)
    assert len(_texts(ax, "fastkappa-cell-")) == 25 * 25


def test_confusion_matrix_rejects_bad_arguments():
    t, p = _data(n=100)
    with pytest.raises(ValueError, match="`normalize` must be None, 'true'"):
        fkplot.confusion_matrix(t, p, normalize="rows")
    with pytest.raises(ValueError, match="either `y_true` and `y_pred` or `confusion=`"):
        fkplot.confusion_matrix(t, p, confusion=[[1, 0], [0, 1]])
    with pytest.raises(ValueError, match="pass `y_true` and `y_pred`"):
        fkplot.confusion_matrix(t)
    with pytest.raises(ValueError, match="`labels` must name the 2 classes"):
        fkplot.confusion_matrix(confusion=[[1, 0], [0, 1]], labels=["a", "b", "c"])
    with pytest.raises(ValueError, match="`sample_weight` can only be used with raw labels"):
        fkplot.confusion_matrix(confusion=[[1, 0], [0, 1]], sample_weight=[1, 2])
    with pytest.raises(ValueError, match="weighted kappa needs ordered classes"):
        fkplot.confusion_matrix(["a", "b"], ["b", "a"], weights="linear")
    with pytest.raises(ValueError, match="square"):
        fkplot.confusion_matrix(confusion=[[1, 2, 3]])


# --------------------------------------------------------------------------- bootstrap


@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_bootstrap_distribution_bars_and_lines_equal_result(tmp_path, method):
    t, p = _data(n=400)
    res = fk.kappa_ci(t, p, weights="quadratic", method=method, n_resamples=1500, seed=0)
    ax = fkplot.bootstrap_distribution(res, bins=40)
    _render(ax, tmp_path)
    bars = [pa for pa in ax.patches if pa.get_gid() == "fastkappa-replicates"]
    heights = np.array([b.get_height() for b in bars])
    assert len(bars) == 40
    assert heights.sum() == len(res.distribution) == res.n_resamples - res.n_undefined
    expected, edges = np.histogram(res.distribution, bins=40)
    np.testing.assert_array_equal(heights, expected)
    np.testing.assert_allclose([b.get_x() for b in bars], edges[:-1], rtol=1e-12)
    (est,) = _lines(ax, "fastkappa-estimate")
    (low,) = _lines(ax, "fastkappa-low")
    (high,) = _lines(ax, "fastkappa-high")
    assert list(est.get_xdata()) == [res.estimate, res.estimate]
    assert list(low.get_xdata()) == [res.low, res.low]
    assert list(high.get_xdata()) == [res.high, res.high]
    assert est.get_linestyle() != low.get_linestyle() == high.get_linestyle()
    legend = [tx.get_text() for tx in ax.get_legend().get_texts()]
    assert f"estimate {res.estimate:.3f}" in legend
    assert any(f"{res.low:.3f} to {res.high:.3f}" in s for s in legend)


def test_bootstrap_distribution_asymptotic_draws_the_normal_density(tmp_path):
    t, p = _data(n=400)
    res = fk.kappa_ci(t, p, weights="quadratic", method="asymptotic")
    assert res.distribution is None or len(res.distribution) == 0
    ax = fkplot.bootstrap_distribution(res)
    _render(ax, tmp_path)
    assert not [pa for pa in ax.patches if pa.get_gid() == "fastkappa-replicates"]
    (dens,) = _lines(ax, "fastkappa-density")
    x, y = dens.get_xdata(), dens.get_ydata()
    np.testing.assert_allclose(y, stats.norm.pdf(x, res.estimate, res.standard_error),
                               rtol=1e-12)
    assert x.min() >= -1 and x.max() <= 1
    assert np.trapezoid(y, x) == pytest.approx(1.0, abs=1e-3)  # +-4 SE inside [-1, 1]
    assert list(_lines(ax, "fastkappa-low")[0].get_xdata()) == [res.low, res.low]
    assert list(_lines(ax, "fastkappa-high")[0].get_xdata()) == [res.high, res.high]
    assert ax.get_ylabel() == "density"


def test_bootstrap_distribution_of_an_asymptotic_result_draws_the_normal_density():
    # an asymptotic KappaCI has no replicates (an empty distribution)
    res = fk.kappa_ci(*_data(n=300), method="asymptotic", confidence_level=0.9)
    assert res.distribution.size == 0
    ax = fkplot.bootstrap_distribution(res)
    assert len(_lines(ax, "fastkappa-density")) == 1
    assert any("90% asymptotic" in tx.get_text() for tx in ax.get_legend().get_texts())


# --------------------------------------------------------------------------- forest


def _segments(ax) -> np.ndarray:
    """(rows, 2, 2) interval segments, ordered by row (y)."""
    segs = np.array(_collection(ax, "fastkappa-interval").get_segments())
    return segs[np.argsort(segs[:, 0, 1])]


@pytest.mark.parametrize("sort", [False, True])
def test_forest_of_groups_points_and_intervals_equal_result(tmp_path, sort):
    t, p = _data(n=4000, seed=4)
    g = np.array(["north", "south", "east", "west"])[np.random.default_rng(5).integers(0, 4,
                                                                                        4000)]
    res = fk.kappa_by_group(t, p, g, weights="quadratic", method="percentile", n_resamples=500,
                            seed=0)
    ax = fkplot.forest(res, sort=sort)
    _render(ax, tmp_path)
    names = [tk.get_text() for tk in ax.get_yticklabels()]
    assert names[-1] == "overall"
    order = np.argsort(-res.estimate, kind="stable") if sort else np.arange(len(res))
    assert names[:-1] == [str(res.groups[i]) for i in order]
    (pts,) = _lines(ax, "fastkappa-estimate")
    np.testing.assert_array_equal(pts.get_ydata(), np.arange(len(res)))
    np.testing.assert_array_equal(pts.get_xdata(), res.estimate[order])
    segs = _segments(ax)
    np.testing.assert_array_equal(segs[:, 0, 0], res.low[order])
    np.testing.assert_array_equal(segs[:, 1, 0], res.high[order])
    (overall,) = _lines(ax, "fastkappa-overall")
    assert list(overall.get_xdata()) == [res.overall, res.overall]
    assert overall.get_linestyle() == "--"
    (opt,) = _lines(ax, "fastkappa-overall-point")
    assert list(opt.get_xdata()) == [res.overall]
    labels = _texts(ax, "fastkappa-label-")
    for i in range(len(res)):
        assert labels[f"fastkappa-label-{i}"] == (
            f"{res.estimate[i]:.3f} ({res.low[i]:.3f} to {res.high[i]:.3f})  "
            f"n={int(res.n_rows[i]):,}")
    assert "quadratic" in ax.get_xlabel()


def test_forest_of_groups_without_interval_and_with_undefined_group(tmp_path):
    t = np.array([0, 1, 2, 2, 1, 0, 1, 1, 1, 1])
    p = np.array([0, 1, 2, 1, 1, 0, 1, 1, 1, 1])
    g = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1, 1])  # group 1: both raters constant and equal
    with pytest.warns(fk.UndefinedKappaWarning):
        res = fk.kappa_by_group(t, p, g)
    ax = fkplot.forest(res)
    _render(ax, tmp_path)
    assert not [c for c in ax.collections if c.get_gid() == "fastkappa-interval"]
    (pts,) = _lines(ax, "fastkappa-estimate")
    assert list(pts.get_xdata()) == [res.estimate[0]] and list(pts.get_ydata()) == [0]
    labels = _texts(ax, "fastkappa-label-")
    assert labels["fastkappa-label-1"].startswith("undefined")


MODELS = ("model_a", "model_b", "model_c")


def _predictions(n=1500, seed=6):
    t, p = _data(n=n, seed=seed)
    rng = np.random.default_rng(seed + 1)
    preds = {"model_a": p,
             "model_b": np.where(rng.random(n) < 0.8, p, rng.integers(0, K, n)),
             "model_c": np.where(rng.random(n) < 0.6, p, rng.integers(0, K, n))}
    return t, preds


@pytest.fixture(scope="module")
def comparisons():
    """Real fk.compare results: {(method, p_adjust, reference): Comparison}."""
    t, preds = _predictions()
    out = {}
    for method, p_adjust, reference in [("bca", None, None), ("bca", "holm", None),
                                        ("percentile", "holm", "model_b"),
                                        ("asymptotic", None, None)]:
        out[method, p_adjust, reference] = fk.compare(
            t, preds, weights="quadratic", method=method, n_resamples=400, seed=0,
            p_adjust=p_adjust, reference=reference)
    return t, preds, out


def test_forest_of_comparison_points_and_intervals_equal_models(tmp_path, comparisons):
    t, preds, results = comparisons
    comp = results["bca", None, None]
    ax = fkplot.forest(comp)
    _render(ax, tmp_path)
    assert [tk.get_text() for tk in ax.get_yticklabels()] == list(MODELS)
    (pts,) = _lines(ax, "fastkappa-estimate")
    np.testing.assert_array_equal(pts.get_xdata(), [comp.models[m].estimate for m in MODELS])
    np.testing.assert_array_equal(pts.get_ydata(), [0, 1, 2])
    # the points are each model's QWK (scikit-learn as the oracle)
    np.testing.assert_allclose(
        pts.get_xdata(), [sklearn_metrics.cohen_kappa_score(t, preds[m], weights="quadratic")
                          for m in MODELS], rtol=1e-12)
    segs = _segments(ax)
    np.testing.assert_array_equal(segs[:, 0, 0], [comp.models[m].low for m in MODELS])
    np.testing.assert_array_equal(segs[:, 1, 0], [comp.models[m].high for m in MODELS])
    labels = _texts(ax, "fastkappa-label-")
    for i, m in enumerate(MODELS):
        r = comp.models[m]
        assert labels[f"fastkappa-label-{i}"] == f"{r.estimate:.3f} ({r.low:.3f} to {r.high:.3f})"
    assert labels["fastkappa-label-header"] == "kappa (95% CI)"
    assert not _lines(ax, "fastkappa-overall")
    assert not _lines(ax, "fastkappa-reference")
    assert ax.get_title(loc="left") == "kappa by model, 95% BCa intervals"
    assert "quadratic" in ax.get_xlabel()


def test_forest_of_comparison_sorted_with_reference_marked(comparisons):
    comp = comparisons[2]["percentile", "holm", "model_b"]
    ax = fkplot.forest(comp, sort=True)
    est = {m: r.estimate for m, r in comp.models.items()}
    ranked = sorted(est, key=lambda m: -est[m])
    assert [tk.get_text() for tk in ax.get_yticklabels()] == [
        f"{m} (reference)" if m == "model_b" else m for m in ranked]
    (pts,) = _lines(ax, "fastkappa-estimate")
    np.testing.assert_array_equal(pts.get_xdata(), [est[m] for m in ranked])
    np.testing.assert_array_equal(_segments(ax)[:, 0, 0], [comp.models[m].low for m in ranked])
    (ref,) = _lines(ax, "fastkappa-reference")
    assert list(ref.get_xdata()) == [est["model_b"]]
    assert list(ref.get_ydata()) == [ranked.index("model_b")]
    assert "percentile" in ax.get_title(loc="left")


def test_forest_of_a_dict_of_results(comparisons):
    comp = comparisons[2]["bca", None, None]
    ax = fkplot.forest(dict(comp.models))
    (pts,) = _lines(ax, "fastkappa-estimate")
    np.testing.assert_array_equal(pts.get_xdata(), [r.estimate for r in comp.models.values()])
    np.testing.assert_array_equal(_segments(ax)[:, 1, 0], [r.high for r in comp.models.values()])


def test_forest_rejects_other_objects():
    with pytest.raises(TypeError, match="forest\\(\\) takes a Comparison"):
        fkplot.forest([0.5, 0.6])
    rng = np.random.default_rng(1)
    t = rng.integers(0, 3, 200)
    p = np.where(rng.random(200) < 0.7, t, rng.integers(0, 3, 200))
    a = fk.kappa_ci(t, p, weights="quadratic", method="asymptotic")
    b = fk.kappa_ci(t, p, method="asymptotic")
    c = fk.kappa_ci(t, p, weights="quadratic", method="asymptotic", confidence_level=0.9)
    # one title and axis name the weights and level: rows that differ are an error
    with pytest.raises(ValueError, match="their weights differ \\(none, quadratic\\)"):
        fkplot.forest({"a": a, "b": b})
    with pytest.raises(ValueError, match="their confidence levels differ"):
        fkplot.forest({"a": a, "c": c})
    with pytest.raises(TypeError, match="bootstrap_distribution\\(\\) takes one interval"):
        fkplot.bootstrap_distribution(fk.compare(t, {"a": p, "b": t}, method="asymptotic"))
    with pytest.raises(TypeError, match="differences\\(\\) takes a Comparison"):
        fkplot.differences({"a": 1})


@pytest.mark.parametrize("key", [("bca", None, None), ("bca", "holm", None),
                                 ("percentile", "holm", "model_b"),
                                 ("asymptotic", None, None)])
def test_differences_points_intervals_and_p_values_equal_result(tmp_path, comparisons, key):
    _, _, results = comparisons
    comp = results[key]
    _, (a1, a2) = plt.subplots(1, 2, figsize=(12, 3), layout="constrained")
    assert fkplot.forest(comp, ax=a1) is a1
    ax = fkplot.differences(comp, ax=a2)
    assert ax is a2
    _render(ax, tmp_path)
    pairs = comp.pairs
    assert len(pairs) == (2 if comp.reference else 3)
    assert [tk.get_text() for tk in ax.get_yticklabels()] == [f"{pr.a} − {pr.b}"
                                                               for pr in pairs]
    (pts,) = _lines(ax, "fastkappa-estimate")
    np.testing.assert_array_equal(pts.get_xdata(), [pr.difference for pr in pairs])
    for pr in pairs:  # a difference is kappa[a] - kappa[b] on the same rows
        assert pr.difference == pytest.approx(
            comp.models[pr.a].estimate - comp.models[pr.b].estimate, abs=1e-12)
    segs = _segments(ax)
    np.testing.assert_array_equal(segs[:, 0, 0], [pr.low for pr in pairs])
    np.testing.assert_array_equal(segs[:, 1, 0], [pr.high for pr in pairs])
    (zero,) = _lines(ax, "fastkappa-zero")
    assert list(zero.get_xdata()) == [0, 0]
    # the p-value written at the right of each row is the result's (adjusted when asked)
    labels = _texts(ax, "fastkappa-label-")
    shown = [pr.p_adjusted if comp.p_adjust else pr.p_value for pr in pairs]
    for i, (pr, p) in enumerate(zip(pairs, shown, strict=True)):
        words = labels[f"fastkappa-label-{i}"].split()
        assert words[-1] == f"{p:.3g}"
        assert float(words[-1]) == pytest.approx(p, rel=5e-3)
        assert float(words[0]) == pytest.approx(pr.difference, abs=5e-4)
        assert float(words[1].lstrip("(")) == pytest.approx(pr.low, abs=5e-4)
        assert float(words[3].rstrip(")")) == pytest.approx(pr.high, abs=5e-4)
    header = labels["fastkappa-label-header"]
    assert header.startswith("difference (95% CI)")
    assert header.endswith("p (Holm)" if comp.p_adjust == "holm" else "  p")
    if comp.p_adjust == "holm":  # statsmodels as the oracle of Holm's adjustment
        multitest = pytest.importorskip("statsmodels.stats.multitest")
        expected = multitest.multipletests([pr.p_value for pr in pairs], method="holm")[1]
        np.testing.assert_allclose([pr.p_adjusted for pr in pairs], expected, rtol=1e-12)
    else:
        assert all(pr.p_adjusted == pr.p_value for pr in pairs)
    method = {"bca": "BCa"}.get(comp.method, comp.method)
    assert ax.get_title(loc="left") == f"paired differences, 95% {method} intervals"


def test_differences_sorted_largest_first(comparisons):
    comp = comparisons[2]["bca", "holm", None]
    ax = fkplot.differences(comp, sort=True)
    ranked = sorted(comp.pairs, key=lambda pr: -pr.difference)
    (pts,) = _lines(ax, "fastkappa-estimate")
    np.testing.assert_array_equal(pts.get_xdata(), [pr.difference for pr in ranked])
    np.testing.assert_array_equal(_segments(ax)[:, 1, 0], [pr.high for pr in ranked])
    # each text stays with its pair: label i is comp.pairs[i], drawn at its sorted row
    for i, pr in enumerate(comp.pairs):
        (text,) = [tx for tx in ax.texts if tx.get_gid() == f"fastkappa-label-{i}"]
        assert text.get_position()[1] == ranked.index(pr)
        assert text.get_text().split()[-1] == f"{pr.p_adjusted:.3g}"


# --------------------------------------------------------------------------- thresholds


def test_threshold_curve_lines_equal_curve_and_cut_points(tmp_path):
    rng = np.random.default_rng(8)
    y = rng.integers(0, 4, 3000)
    opt = fk.ThresholdOptimizer().fit(y, y + rng.normal(0, 0.8, 3000))
    ax = fkplot.threshold_curve(opt)
    _render(ax, tmp_path)
    curve = opt.curve_
    cuts = np.unique(curve["cut"])
    assert list(cuts) == [0, 1, 2]
    for c in cuts:
        (line,) = _lines(ax, f"fastkappa-curve-{c}")
        sel = curve["cut"] == c
        order = np.argsort(curve["threshold"][sel], kind="stable")
        np.testing.assert_array_equal(line.get_xdata(), curve["threshold"][sel][order])
        np.testing.assert_array_equal(line.get_ydata(), curve["kappa"][sel][order])
        (cut_line,) = _lines(ax, f"fastkappa-cut-{c}")
        assert list(cut_line.get_xdata()) == [opt.thresholds_[c]] * 2
        assert line.get_linestyle() == cut_line.get_linestyle()
    styles = {_lines(ax, f"fastkappa-curve-{c}")[0].get_linestyle() for c in cuts}
    assert len(styles) == 3  # told apart without colour
    (best,) = _lines(ax, "fastkappa-optimum")
    np.testing.assert_array_equal(best.get_xdata(), opt.thresholds_)
    np.testing.assert_array_equal(best.get_ydata(), [opt.qwk_] * 3)
    # the optimum is the top of each curve (exact search)
    assert np.nanmax(curve["kappa"]) == pytest.approx(opt.qwk_, abs=1e-12)
    legend = [tx.get_text() for tx in ax.get_legend().get_texts()]
    assert legend[0] == f"cut 0|1 (optimum {opt.thresholds_[0]:.4g})"


def test_threshold_curve_needs_a_fitted_optimizer():
    with pytest.raises(ValueError, match=r"call `\.fit\(y_true, scores\)` first"):
        fkplot.threshold_curve(fk.ThresholdOptimizer())


def test_threshold_curve_rejects_an_unreadable_curve():
    @dataclass
    class StandInOptimizer:
        curve_: dict
        thresholds_: np.ndarray
        qwk_: float

    bad = StandInOptimizer({"x": [0.0, 1.0]}, np.array([0.5]), 0.3)
    with pytest.raises(ValueError, match="'threshold' and 'kappa'"):
        fkplot.threshold_curve(bad)
    bad = StandInOptimizer({"cut": [0], "threshold": [0.0, 1.0], "kappa": [0.1, 0.2]},
                           np.array([0.5]), 0.3)
    with pytest.raises(ValueError, match="must have one length"):
        fkplot.threshold_curve(bad)
