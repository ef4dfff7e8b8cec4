"""What a paper needs from a KappaCI: a table row (to_dataframe) and a methods paragraph.

Oracles: the result's own attributes (the table must not change a number),
a re-run with the recorded seed (the seed must reproduce the interval), and
the reference list checked against the citations in the text.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest

import fastkappa as fk


@pytest.fixture
def study(rng):
    n = 1200
    y = rng.integers(0, 5, n)
    pred = np.clip(y + rng.integers(-1, 2, n), 0, 4)
    patient = np.arange(n) // 2
    return y, pred, patient


def test_to_dataframe_is_the_result_as_one_row(study):
    pd = pytest.importorskip("pandas")
    y, pred, patient = study
    res = fk.kappa_ci(y, pred, weights="quadratic", clusters=patient, seed=0,
                      n_resamples=2000)
    df = res.to_dataframe("model a")
    assert list(df.index) == ["model a"]
    row = df.loc["model a"]
    for key, value in res.to_dict().items():
        assert row[key] == value, key
    assert row["weights"] == "quadratic" and row["seed"] == 0
    assert row["n_rows"] == len(y) and row["n_clusters"] == len(np.unique(patient))
    # a paper's table: stack the models
    with pytest.warns(fk.DegenerateIntervalWarning):
        other = fk.kappa_ci(y, y, weights="quadratic", method="asymptotic")
    table = pd.concat([res.to_dataframe("a"), other.to_dataframe("perfect")])
    assert list(table.index) == ["a", "perfect"]
    assert table["estimate"].tolist() == [res.estimate, 1.0]
    assert table["estimate"].dtype == np.float64
    assert pd.isna(table.loc["perfect", "n_clusters"])
    assert list(res.to_dataframe().index) == [0]


def test_to_dataframe_without_pandas_names_the_extra(monkeypatch):
    from fastkappa._install import install_hint

    res = fk.kappa_ci_from_confusion([[20, 5], [3, 22]], method="asymptotic")
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=re.escape(install_hint("pandas"))):
        res.to_dataframe()


@pytest.mark.parametrize("seed", [None, 7, np.random.SeedSequence(123)])
def test_recorded_seed_reproduces_the_interval(study, seed):
    y, pred, _ = study
    res = fk.kappa_ci(y, pred, weights="linear", seed=seed, n_resamples=500)
    assert res.seed is not None
    again = fk.kappa_ci(y, pred, weights="linear", seed=res.seed, n_resamples=500)
    assert (again.low, again.high) == (res.low, res.high)
    np.testing.assert_array_equal(again.distribution, res.distribution)


def test_recorded_context(study):
    y, pred, patient = study
    res = fk.kappa_ci(y, pred, method="asymptotic", clusters=patient)
    assert res.weights == "none" and res.seed is None  # nothing random
    assert res.n_rows == len(y) and res.n_clusters == 600
    custom = 1 - np.eye(5)
    assert fk.kappa_ci(y, pred, weights=custom, method="percentile", seed=0,
                       n_resamples=200).weights == "custom"
    kept = fk.kappa_ci(y, pred, ignore_index=4, method="asymptotic")
    assert kept.n_rows == int(np.sum((y != 4) & (pred != 4)))
    assert kept.n_clusters is None
    table = fk.kappa_ci_from_confusion([[20, 5], [3, 22]], weights="linear", seed=3,
                                       n_resamples=300)
    assert (table.weights, table.seed, table.n_rows) == ("linear", 3, 50)


def _citations(text: str) -> set[tuple[str, str]]:
    body = text.split("\n\nReferences\n")[0]
    found = set()
    for names, years in re.findall(r"\(([A-Z][A-Za-z &,]+?), (\d{4}(?:, \d{4})*)\)", body):
        for year in years.split(", "):
            found.add((names.split(",")[0].split(" &")[0], year))
    for names, year in re.findall(r"of ([A-Z][a-z]+), [A-Z][a-z]+ and [A-Z][a-z]+ \((\d{4})\)",
                                  body):
        found.add((names, year))
    return found


def _listed(text: str) -> set[tuple[str, str]]:
    refs = text.split("\n\nReferences\n")[1].splitlines()
    return {(re.match(r"([A-Z][a-z]+),", r).group(1), re.search(r"\((\d{4})\)", r).group(1))
            for r in refs}


@pytest.mark.parametrize("method", ["bca", "percentile", "basic", "asymptotic"])
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("clustered", [False, True])
def test_methods_text_says_what_was_done_and_cites_it(study, method, weights, clustered):
    y, pred, patient = study
    res = fk.kappa_ci(y, pred, weights=weights, method=method, seed=5, n_resamples=300,
                      clusters=patient if clustered else None)
    text = res.methods_text(cluster_unit="patient", subject="eyes")
    coefficient = {None: "Cohen's kappa (Cohen, 1960)",
                   "linear": "linear-weighted Cohen's kappa (Cohen, 1968)",
                   "quadratic": "quadratic-weighted Cohen's kappa (Cohen, 1968)"}[weights]
    assert f"measured with {coefficient} on 1,200 eyes." in text
    d = 2 if round(res.low, 2) != round(res.high, 2) else 4
    assert f"Kappa was {res.estimate:.{d}f} (95% CI {res.low:.{d}f} to {res.high:.{d}f})" \
        in text
    assert f"Computed with fastkappa {fk.__version__}." in text
    if method == "asymptotic":
        assert "Fleiss, Cohen and Everitt (1969)" in text and "resamples" not in text
        assert ("cluster-robust" in text) == clustered
    else:
        assert "300 bootstrap resamples, random seed 5" in text
        assert {"bca": "(BCa) bootstrap (Efron, 1987)", "percentile": "percentile bootstrap",
                "basic": "basic bootstrap"}[method] in text
    assert ("600 patients" in text) == clustered
    assert ("Field & Welsh, 2007" in text) == (clustered and method != "asymptotic")
    assert _citations(text) == _listed(text)
    assert "References" not in res.methods_text(references=False)


def test_methods_text_when_the_weights_were_not_recorded(study):
    import dataclasses

    y, pred, _ = study
    res = dataclasses.replace(fk.kappa_ci(y, pred, method="asymptotic"), weights=None,
                              n_rows=None)
    text = res.methods_text()
    assert "Cohen's kappa (Cohen, 1960, 1968)" in text
    assert _citations(text) == _listed(text)
    assert " on " not in text.split(".")[0]  # the row count was not recorded either


# --------------------------------------------------------------------------- Comparison


@pytest.mark.parametrize("method", ["bca", "asymptotic"])
@pytest.mark.parametrize("clustered", [False, True])
@pytest.mark.parametrize("p_adjust", [None, "holm"])
def test_comparison_methods_text(study, rng, method, clustered, p_adjust):
    y, pred, patient = study
    other = np.clip(y + rng.integers(-2, 3, len(y)), 0, 4)
    comp = fk.compare(y, {"a": pred, "b": other}, weights="quadratic", method=method,
                      seed=3, n_resamples=400, p_adjust=p_adjust,
                      clusters=patient if clustered else None)
    text = comp.methods_text(cluster_unit="patient", subject="eyes")
    assert ("measured with quadratic-weighted Cohen's kappa (Cohen, 1968) for 2 models on "
            "1,200 eyes.") in text
    for name, res in comp.models.items():
        assert f"{res.estimate:.2f} (95% CI {res.low:.2f} to {res.high:.2f}) for {name}" \
            in text
        assert (res.weights, res.n_rows) == ("quadratic", 1200)
        assert res.n_clusters == (600 if clustered else None)
    pair = comp.pairs[0]
    assert f"a - b: {pair.difference:.2f} (95% CI {pair.low:.2f} to {pair.high:.2f}, " in text
    if method == "asymptotic":
        assert comp.seed is None and "paired influence values" in text
    else:
        assert comp.seed == 3
        assert "400 paired bootstrap resamples (every model scored on the same resamples), "\
               "random seed 3" in text
        # a p-value at the floor of 400 resamples is a bound, never a value
        assert pair.p_value <= 2 / 400
        assert ("adjusted p < 0.005" if p_adjust else "p < 0.005") in text
    assert ("600 patients" in text) == clustered
    assert ("(Holm, 1979)" in text) == (p_adjust == "holm")
    assert _citations(text) == _listed(text)
    assert f"Computed with fastkappa {fk.__version__}." in text


def test_comparison_seed_reproduces_the_resamples(study, rng):
    y, pred, _ = study
    other = np.clip(y + rng.integers(-2, 3, len(y)), 0, 4)
    comp = fk.compare(y, {"a": pred, "b": other}, n_resamples=300)
    assert comp.seed is not None
    again = fk.compare(y, {"a": pred, "b": other}, n_resamples=300, seed=comp.seed)
    assert [(p.low, p.high, p.p_value) for p in again.pairs] == [
        (p.low, p.high, p.p_value) for p in comp.pairs]
