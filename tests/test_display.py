"""How results show themselves: ``str`` (text) and ``_repr_html_`` (Jupyter).

Every number is read back from the text or from the HTML table cells (parsed
with the standard library's ``html.parser``) and compared with the result's
own fields: it must be that field rounded to the decimals shown. Kappa itself
is checked against scikit-learn once, so a display that shows a wrong field
cannot pass either. Display must never warn (pytest turns warnings into
errors) nor raise, even for an empty accumulator or an undefined kappa.
"""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser

import numpy as np
import pytest

import fastkappa as fk
from fastkappa.compare import Comparison, PairDifference

sklearn_metrics = pytest.importorskip("sklearn.metrics")


class _Tables(HTMLParser):
    """Tables of an HTML fragment: a list of tables, each a list of rows of cell texts."""

    def __init__(self):
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.paragraphs: list[str] = []
        self.captions: list[str] = []
        self._cell: list[str] | None = None
        self._text: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag in ("p", "caption"):
            self._text = []

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "p":
            self.paragraphs.append("".join(self._text))
            self._text = None
        elif tag == "caption":
            self.captions.append("".join(self._text))
            self._text = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        elif self._text is not None:
            self._text.append(data)


def _parse(html_text: str) -> _Tables:
    parser = _Tables()
    parser.feed(html_text)
    parser.close()
    return parser


def _shows(text: str, value: float) -> None:
    """``text`` is ``value`` rounded to the decimals it shows (thousands separators allowed)."""
    text = text.strip().replace(",", "")
    if value is None or not math.isfinite(value):
        assert text == "nan", text
        return
    decimals = len(text.split(".")[1]) if "." in text else 0
    assert text == f"{value:.{decimals}f}", (text, value)
    assert abs(float(text) - value) <= 0.5 * 10.0 ** -decimals + 1e-15


def _shows_p(text: str, p: float, bound: bool = False) -> None:
    """A p-value written with three significant digits, or as a bound ``< 0.004``
    when it sits at its bootstrap floor (about 2/B)."""
    if bound:
        assert text == f"< {p:.2g}", (text, p)
        assert float(text[2:]) == pytest.approx(p, rel=0.05)
    else:
        assert text == f"{p:.3g}", (text, p)
        assert float(text) == pytest.approx(p, rel=5e-3)


def _graded(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 5, n)
    a = np.clip(y + rng.integers(-1, 2, n), 0, 4)
    b = np.clip(y + rng.integers(-2, 3, n), 0, 4)
    c = np.where(rng.random(n) < 0.7, y, rng.integers(0, 5, n))
    return y, {"a": a, "b": b, "c": c}


# --------------------------------------------------------------------------- KappaCI


STR_PATTERN = re.compile(
    r"^quadratic-weighted kappa = (\S+) \(([\d.]+)% CI (\S+) to (\S+), "
    r"(BCa|percentile|basic|asymptotic)\)$")


@pytest.mark.parametrize("method", ["bca", "percentile", "basic", "asymptotic"])
def test_kappa_ci_text_and_html_show_the_fields(method):
    y, preds = _graded()
    res = fk.kappa_ci(y, preds["a"], weights="quadratic", method=method,
                      n_resamples=500, seed=0, confidence_level=0.9)
    assert res.estimate == pytest.approx(
        sklearn_metrics.cohen_kappa_score(y, preds["a"], weights="quadratic"), rel=1e-12)
    m = STR_PATTERN.match(str(res))
    assert m, str(res)
    estimate, level, low, high, label = m.groups()
    _shows(estimate, res.estimate)
    _shows(low, res.low)
    _shows(high, res.high)
    assert float(level) == 100 * res.confidence_level
    assert label == {"bca": "BCa"}.get(method, method)
    # the fewest decimals (2 to 4) that tell the three numbers apart
    values = (res.estimate, res.low, res.high)
    fewest = next((d for d in (2, 3)
                   if len({f"{v:.{d}f}" for v in values}) == len(set(values))), 4)
    assert len(estimate.split(".")[1]) == fewest

    page = _parse(res._repr_html_())
    assert page.captions == ["KappaCI"]
    (table,) = page.tables
    rows = dict(table)
    assert all(len(r) == 2 for r in table)
    _shows(rows["kappa"], res.estimate)
    low_text, high_text = rows["90% CI"].split(" to ")
    _shows(low_text, res.low)
    _shows(high_text, res.high)
    assert rows["method"] == label
    _shows(rows["standard error"], res.standard_error)
    _shows(rows["SE under H0"], res.standard_error_null)
    _shows(rows["z"], res.z)
    p_text = rows["p-value (two-sided, H0: kappa = 0)"]
    if res.p_value == 0:
        assert p_text == "< 1e-300"
    else:
        assert p_text == f"{res.p_value:.3g}"
        assert float(p_text) == pytest.approx(res.p_value, rel=5e-3)
    if method == "asymptotic":
        assert "replicates" not in rows  # none were drawn
    else:
        assert rows["replicates"] == f"{res.n_resamples:,} ({res.n_undefined:,} undefined)"


@pytest.mark.parametrize(("weights", "subject"), [
    (None, "kappa"), ("linear", "linear-weighted kappa"),
    ("quadratic", "quadratic-weighted kappa"),
    (1 - np.eye(3), "custom-weighted kappa")])
def test_kappa_ci_text_names_its_weighting(weights, subject):
    y = np.array([0, 1, 2, 2, 1, 0, 2, 1, 0, 1] * 5)
    p = np.array([0, 1, 2, 1, 1, 0, 2, 2, 0, 0] * 5)
    res = fk.kappa_ci(y, p, weights=weights, method="asymptotic")
    assert str(res).startswith(f"{subject} = ")
    assert f"{res:.4f}".startswith(f"{subject} = {res.estimate:.4f} (95% CI ")


def test_kappa_ci_html_more_decimals_when_four_would_merge():
    res = fk.KappaCI(estimate=0.812341, low=0.812339, high=0.812349, standard_error=1e-6,
                     method="percentile", confidence_level=0.95, n_resamples=100,
                     distribution=np.zeros(100), p_value=0.0, z=float("inf"))
    rows = dict(_parse(res._repr_html_()).tables[0])
    assert rows["kappa"] == "0.812341"
    assert rows["95% CI"] == "0.812339 to 0.812349"
    assert rows["p-value (two-sided, H0: kappa = 0)"] == "< 1e-300"  # underflowed to 0
    assert rows["z"] == "nan"  # not finite


def test_kappa_ci_display_of_undefined_kappa():
    res = fk.KappaCI(estimate=float("nan"), low=float("nan"), high=float("nan"),
                     standard_error=float("nan"), method="bca", confidence_level=0.95,
                     n_resamples=200, distribution=np.empty(0), n_undefined=200)
    assert str(res) == "kappa = nan (95% CI nan to nan, BCa)"
    rows = dict(_parse(res._repr_html_()).tables[0])
    assert rows["kappa"] == "nan" and rows["95% CI"] == "nan to nan"
    assert rows["replicates"] == "200 (200 undefined)"


# --------------------------------------------------------------------------- Comparison


def _text_table(lines: list[str]) -> list[list[str]]:
    """Rows of a text table whose first column may hold ' - ' (split on 2+ spaces)."""
    return [re.split(r" {2,}", line.strip()) for line in lines]


@pytest.mark.parametrize("p_adjust, reference", [(None, None), ("holm", None),
                                                 ("holm", "b")])
def test_comparison_text_and_html_show_the_fields(p_adjust, reference):
    y, preds = _graded()
    comp = fk.compare(y, preds, weights="quadratic", n_resamples=500, seed=1,
                      p_adjust=p_adjust, reference=reference)
    for name, r in comp.models.items():
        assert r.estimate == pytest.approx(
            sklearn_metrics.cohen_kappa_score(y, preds[name], weights="quadratic"), rel=1e-12)
    text = str(comp).splitlines()
    head = text[0]
    assert head.startswith(f"quadratic-weighted kappa (QWK) of 3 models on {len(y):,} rows, "
                           "95% CI (bca, 500 paired resamples)")
    assert head.endswith(f"; each model against {reference}" if reference else ")")
    blank = text.index("")
    text_models, text_pairs = _text_table(text[1:blank]), _text_table(text[blank + 1:])

    page = _parse(comp._repr_html_())
    assert page.paragraphs == [head]
    html_models, html_pairs = page.tables
    assert html_models == text_models  # the same cells in both forms
    assert html_pairs == text_pairs

    assert html_models[0] == ["model", "kappa", "low", "high"]
    assert [r[0] for r in html_models[1:]] == list(comp.models)
    for row in html_models[1:]:
        r = comp.models[row[0]]
        _shows(row[1], r.estimate)
        _shows(row[2], r.low)
        _shows(row[3], r.high)

    titles = ["pair", "difference", "low", "high", "p"]
    assert html_pairs[0] == titles + (["p (Holm)"] if p_adjust else [])
    assert len(html_pairs) - 1 == len(comp.pairs) == (2 if reference else 3)
    for row, pr in zip(html_pairs[1:], comp.pairs, strict=True):
        assert row[0] == f"{pr.a} - {pr.b}"
        _shows(row[1], pr.difference)
        _shows(row[2], pr.low)
        _shows(row[3], pr.high)
        _shows_p(row[4], pr.p_value, pr.p_value_is_bound)
        if p_adjust:
            _shows_p(row[5], pr.p_adjusted, pr.p_value_is_bound)


def test_comparison_shows_more_decimals_when_three_would_merge():
    def ci(est, low, high):
        return fk.KappaCI(estimate=est, low=low, high=high, standard_error=1e-4,
                          method="asymptotic", confidence_level=0.95, n_resamples=0,
                          distribution=np.empty(0))

    comp = Comparison(
        models={"x": ci(0.80012, 0.80004, 0.80031), "y": ci(0.79, 0.7, 0.85)},
        pairs=[PairDifference("x", "y", 0.00012, -0.00041, 0.00062, 0.0004, 0.0004)],
        reference=None, method="asymptotic", confidence_level=0.95, n_resamples=0,
        p_adjust=None, weights=None, n_rows=10_000, classes=np.arange(3))
    models, pairs = _parse(comp._repr_html_()).tables
    assert models[1] == ["x", "0.8001", "0.8000", "0.8003"]
    assert models[2] == ["y", "0.7900", "0.7000", "0.8500"]
    assert pairs[1] == ["x - y", "0.0001", "-0.0004", "0.0006", "0.0004"]
    for row, name in ((models[1], "x"), (models[2], "y")):
        r = comp.models[name]
        for cell, value in zip(row[1:], (r.estimate, r.low, r.high), strict=True):
            _shows(cell, value)
    assert "asymptotic" in str(comp).splitlines()[0]
    assert "paired resamples" not in str(comp)


# --------------------------------------------------------------------------- KappaByGroup


@pytest.mark.parametrize("ci", [None, "percentile"])
def test_kappa_by_group_text_and_html_show_the_fields(ci):
    y, preds = _graded(n=3000, seed=2)
    groups = np.random.default_rng(3).choice(["north", "south", "east"], len(y))
    res = fk.kappa_by_group(y, preds["a"], groups, weights="quadratic", method=ci,
                            n_resamples=300, seed=0)
    for g in res.groups:
        sel = groups == g
        assert res[g].estimate == pytest.approx(sklearn_metrics.cohen_kappa_score(
            y[sel], preds["a"][sel], weights="quadratic", labels=np.arange(5)), rel=1e-12)
    text = str(res).splitlines()
    m = re.match(r"quadratic-weighted kappa \(QWK\) by group \(3 groups(.*)\); overall (\S+)$",
                 text[0])
    assert m, text[0]
    _shows(m.group(2), res.overall)
    if ci:
        assert m.group(1) == ", 95% CI by percentile"
    text_rows = [line.split() for line in text[1:]]

    page = _parse(res._repr_html_())
    assert page.paragraphs == [text[0]]
    (table,) = page.tables
    assert table == text_rows
    assert table[0] == ["group", "n", "kappa"] + (["low", "high"] if ci else [])
    assert [r[0] for r in table[1:]] == [str(g) for g in res.groups]
    for row, i in zip(table[1:], range(len(res)), strict=True):
        assert row[1] == f"{int(res.n_rows[i]):,}"
        _shows(row[2], res.estimate[i])
        if ci:
            _shows(row[3], res.low[i])
            _shows(row[4], res.high[i])


def test_kappa_by_group_large_and_weighted_n_are_written_out():
    y, preds = _graded(n=2000, seed=4)
    g = np.arange(2000) % 2
    big = fk.kappa_by_group(np.tile(y, 600), np.tile(preds["a"], 600), np.tile(g, 600))
    table = _parse(big._repr_html_()).tables[0]
    assert [r[1] for r in table[1:]] == ["600,000", "600,000"]  # not 6e+05
    assert "600,000" in str(big)
    sw = np.full(2000, 0.25)
    weighted = fk.kappa_by_group(y, preds["a"], g, sample_weight=sw)
    table = _parse(weighted._repr_html_()).tables[0]
    assert [r[1] for r in table[1:]] == ["250", "250"]
    sw[0] = 0.125
    weighted = fk.kappa_by_group(y, preds["a"], g, sample_weight=sw)
    row = _parse(weighted._repr_html_()).tables[0][1]
    assert weighted.n_rows[0] == 249.875 and row[1] == "249.88"


def test_kappa_by_group_undefined_group_shows_nan():
    t = np.array([0, 1, 2, 2, 1, 0, 1, 1])
    p = np.array([0, 1, 2, 1, 1, 0, 1, 1])
    g = np.array([0, 0, 0, 0, 0, 0, 1, 1])
    with pytest.warns(fk.UndefinedKappaWarning):
        res = fk.kappa_by_group(t, p, g)
    table = _parse(res._repr_html_()).tables[0]
    assert table[2] == ["1", "2", "nan"]
    assert str(res).splitlines()[-1].split() == ["1", "2", "nan"]


# --------------------------------------------------------------------------- CohenKappa


def _matrix_from_text(lines: list[str]) -> tuple[list[str], np.ndarray]:
    rows = [line.split() for line in lines]
    return rows[0], np.array([[float(c.replace(",", "")) for c in r[1:]] for r in rows[1:]])


def test_cohen_kappa_text_and_html_show_kappa_and_confusion():
    y, preds = _graded(n=2500, seed=5)
    acc = fk.CohenKappa(weights="quadratic")
    for lo in range(0, len(y), 1000):
        acc.update(y[lo:lo + 1000], preds["b"][lo:lo + 1000])
    expected = sklearn_metrics.cohen_kappa_score(y, preds["b"], weights="quadratic")
    assert acc.compute() == pytest.approx(expected, rel=1e-12)
    text = str(acc).splitlines()
    m = re.match(r"CohenKappa: quadratic-weighted kappa \(QWK\) = (\S+) on ([\d,]+) rows, "
                 r"(\d+) classes$", text[0])
    assert m, text[0]
    _shows(m.group(1), acc.compute())
    assert int(m.group(2).replace(",", "")) == acc.n_rows == 2500
    assert int(m.group(3)) == len(acc.labels) == 5
    assert text[1] == "confusion matrix (rows: y_true, columns: y_pred):"
    names, matrix = _matrix_from_text(text[2:])
    assert names == [str(v) for v in acc.labels]
    np.testing.assert_array_equal(matrix, acc.confusion)
    np.testing.assert_array_equal(acc.confusion,
                                  sklearn_metrics.confusion_matrix(y, preds["b"]))

    page = _parse(acc._repr_html_())
    assert page.paragraphs == [text[0]]
    assert page.captions == ["confusion matrix (rows: y_true, columns: y_pred)"]
    (table,) = page.tables
    assert table[0] == ["", *names]
    assert [r[0] for r in table[1:]] == names
    np.testing.assert_array_equal(
        [[int(c.replace(",", "")) for c in r[1:]] for r in table[1:]], acc.confusion)
    assert repr(acc) == "CohenKappa(labels=[0, 1, 2, 3, 4], weights='quadratic', n_rows=2500)"


def test_cohen_kappa_display_of_string_labels_and_weighted_counts():
    acc = fk.CohenKappa(labels=["none", "mild", "severe"], weights="linear")
    acc.update(["none", "mild", "severe", "mild"], ["none", "severe", "severe", "mild"],
               sample_weight=[1.5, 0.25, 2.0, 1_000_000.0])
    text = str(acc).splitlines()
    assert text[0].startswith("CohenKappa: linear-weighted kappa = ")
    assert "on 4 rows (weighted: 1.00000e+06)" not in text[0]
    assert f"(weighted: {acc.confusion.sum():,.6g})" in text[0]
    _shows(text[0].split(" = ")[1].split()[0], acc.compute())
    table = _parse(acc._repr_html_()).tables[0]
    assert table[0] == ["", "none", "mild", "severe"]
    cells = np.array([[float(c.replace(",", "")) for c in r[1:]] for r in table[1:]])
    np.testing.assert_allclose(cells, acc.confusion, rtol=1e-5)
    assert table[2][2] == "1e+06"


def test_cohen_kappa_display_never_warns_or_raises():
    empty = fk.CohenKappa(n_classes=3, weights="quadratic")
    assert str(empty).splitlines()[0] == (
        "CohenKappa: no rows yet; quadratic-weighted kappa (QWK), 3 classes")
    assert "no rows yet" in _parse(empty._repr_html_()).paragraphs[0]
    learning = fk.CohenKappa()
    assert str(learning) == "CohenKappa: no rows yet; kappa, classes learned from the data"
    assert _parse(learning._repr_html_()).tables == []
    # both raters constant and equal: kappa undefined, shown as such without a warning
    same = fk.CohenKappa(labels=["a", "b"]).update(["a", "a"], ["a", "a"])
    assert "kappa = nan (undefined: zero expected disagreement) on 2 rows" in str(same)
    with pytest.warns(fk.UndefinedKappaWarning):
        assert math.isnan(same.compute())
    # many classes: the summary, not a 30 x 30 table
    wide = fk.CohenKappa(n_classes=30).update(np.arange(30), np.arange(30))
    assert str(wide) == ("CohenKappa: kappa = 1.0000 on 30 rows, 30 classes\n"
                         "(the 30 x 30 confusion matrix is not shown)")
    assert _parse(wide._repr_html_()).tables == []


# --------------------------------------------------------------------------- one format


def _at_floor():
    """Two models far apart: every paired bootstrap difference is positive, so the
    p-value sits at its floor, 2/B."""
    y, preds = _graded(n=2000, seed=7)
    comp = fk.compare(y, {"a": preds["a"], "c": preds["c"]}, weights="quadratic",
                      n_resamples=500, seed=0, p_adjust="holm")
    (pair,) = comp.pairs
    assert np.all(pair.distribution > 0) and len(pair.distribution) == 500
    return comp, pair


def test_p_value_at_its_floor_is_a_bound_everywhere():
    comp, pair = _at_floor()
    assert pair.p_value == pytest.approx(2 / 500) and pair.p_value_is_bound
    # the table, the methods paragraph, JSON, the command line's lines and the figure
    pairs = _parse(comp._repr_html_()).tables[1]
    assert pairs[1][4] == pairs[1][5] == "< 0.004"
    assert str(comp).splitlines()[-1].split()[-2:] == ["<", "0.004"]
    assert "adjusted p < 0.004" in comp.methods_text()
    d = comp.to_dict()["pairs"][0]
    assert d["p_value"] == pytest.approx(0.004) and d["p_value_is_bound"] is True
    assert d["p_adjusted_is_bound"] is True
    from fastkappa.cli.output import _pairs_text

    assert _pairs_text(comp)[0].endswith("p < 0.004")
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    import fastkappa.plot as fkplot

    ax = Figure().subplots()
    fkplot.differences(comp, ax=ax)
    (label,) = [t for t in ax.texts if t.get_gid() == "fastkappa-label-0"]
    assert label.get_text().endswith("< 0.004")


def test_p_value_above_its_floor_or_asymptotic_is_a_value():
    y, preds = _graded()
    comp = fk.compare(y, {"a": preds["a"], "b": preds["b"]}, method="asymptotic")
    (pair,) = comp.pairs
    assert pair.distribution.shape == (0,) and not pair.p_value_is_bound
    assert comp.to_dict()["pairs"][0]["p_value_is_bound"] is False
    near = PairDifference("a", "b", 0.01, -0.02, 0.04, 0.4, 0.4, 0.01,
                          np.linspace(-0.05, 0.05, 100))
    assert not near.p_value_is_bound


def test_format_spec_works_on_every_result():
    y, preds = _graded(n=600)
    ci = fk.kappa_ci(y, preds["a"], method="asymptotic")
    assert format(ci, ".3f") == (f"kappa = {ci.estimate:.3f} (95% CI {ci.low:.3f} to "
                                 f"{ci.high:.3f}, asymptotic)")
    assert f"{ci}" == str(ci)
    comp = fk.compare(y, preds, method="asymptotic")
    comp_tables = format(comp, ".5f").split("\n\n")
    models = comp_tables[0]
    for line, (name, r) in zip(models.splitlines()[2:], comp.models.items(), strict=True):
        assert line.split() == [name, f"{r.estimate:.5f}", f"{r.low:.5f}", f"{r.high:.5f}"]
    assert f"{comp}" == str(comp) and len(comp_tables) == 2
    groups = np.arange(600) % 3
    by = fk.kappa_by_group(y, preds["a"], groups)
    rows = [line.split() for line in format(by, ".2f").splitlines()[2:]]
    assert [r[2] for r in rows] == [f"{v:.2f}" for v in by.estimate]
    assert format(by[0], ".3f") == f"{by.estimate[0]:.3f}"  # a GroupKappa is a float
    agr = fk.agreement(np.stack([y, preds["a"], preds["b"]], axis=1))
    line = format(agr, ".2f").splitlines()[2]
    assert f"{agr.rows[0].estimate:.2f}" in line.split()
