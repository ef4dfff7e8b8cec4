"""One name per concept across the result classes, and the renamed fields' aliases.

Every result class is walked (as a dataclass, or through its attributes for
``GroupKappa``): the point value of a result that holds one is ``estimate``,
the rows scored ``n_rows``, the weights a name (``"none"``, ``"linear"``,
``"quadratic"`` or ``"custom"``), the replicates an array (empty when nothing
was drawn). The old names (``kappa``, ``n``) are aliases that stay (the API
contract names them). Values are checked against scikit-learn.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import pickle
import warnings

import numpy as np
import pytest

import fastkappa as fk
from fastkappa import results
from fastkappa._agreement_result import Agreement, AgreementRow

sklearn_metrics = pytest.importorskip("sklearn.metrics")

WEIGHT_NAMES = {"none", "linear", "quadratic", "custom"}
#: names that must not appear as fields or attributes (the concept has one name)
RETIRED = {"kappa": "estimate", "n": "n_rows"}


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, n)
    a = np.where(rng.random(n) < 0.7, y, rng.integers(0, 4, n))
    b = np.where(rng.random(n) < 0.5, y, rng.integers(0, 4, n))
    g = rng.choice(["x", "y", "z"], n)
    return y, a, b, g


@functools.lru_cache(maxsize=1)
def _all_results():
    y, a, b, g = _data()
    ci = fk.kappa_ci(y, a, weights="quadratic", n_resamples=200, seed=0)
    comp = fk.compare(y, {"a": a, "b": b}, n_resamples=200, seed=0)
    comp_asym = fk.compare(y, {"a": a, "b": b}, method="asymptotic")
    by = fk.kappa_by_group(y, a, g, method="percentile", n_resamples=100, seed=0)
    agr = fk.agreement(np.stack([y, a, b], axis=1), method="asymptotic")
    return {"KappaCI": ci, "Comparison": comp, "Comparison (asymptotic)": comp_asym,
            "PairDifference": comp.pairs[0], "PairDifference (asymptotic)": comp_asym.pairs[0],
            "KappaByGroup": by, "GroupKappa": by["x"], "Agreement": agr,
            "AgreementRow": agr.rows[0]}


def test_every_result_class_is_walked():
    walked = {type(r) for r in _all_results().values()}
    public = {getattr(results, name) for name in results.__all__}
    assert public | {Agreement, AgreementRow} <= walked


@pytest.mark.parametrize("name", list(_all_results()))
def test_shared_field_names(name):
    res = _all_results()[name]
    fields = ({f.name for f in dataclasses.fields(res)} if dataclasses.is_dataclass(res)
              else {"group", "estimate", "n_rows", "low", "high"})
    assert not fields & set(RETIRED), f"{name} still has {fields & set(RETIRED)} as fields"
    # a result holding one point value calls it ``estimate`` (a pair's is its
    # ``difference``; a Comparison or an Agreement holds several)
    if not isinstance(res, (results.Comparison, Agreement, results.PairDifference)):
        assert "estimate" in fields, name
    if "weights" in fields:
        w = res.weights
        if isinstance(res, Agreement):
            assert w is None or w in WEIGHT_NAMES or not isinstance(w, str)
        else:
            assert w in WEIGHT_NAMES, (name, w)
    if "distribution" in fields:
        d = res.distribution
        assert isinstance(d, np.ndarray), (name, type(d))
        if "asymptotic" in name:
            assert d.shape == (0,)
    for holder in ("Comparison", "KappaByGroup", "GroupKappa"):
        if name.startswith(holder):
            assert hasattr(res, "n_rows")


def test_values_under_the_shared_names():
    y, a, _, g = _data()
    res = _all_results()
    assert res["KappaCI"].estimate == pytest.approx(
        sklearn_metrics.cohen_kappa_score(y, a, weights="quadratic"), rel=1e-12)
    assert res["KappaCI"].n_rows == res["Comparison"].n_rows == len(y)
    by = res["KappaByGroup"]
    for key in by.groups:
        m = g == key
        want = sklearn_metrics.cohen_kappa_score(y[m], a[m], labels=np.arange(4))
        assert by[key].estimate == pytest.approx(want, rel=1e-12)
        assert by.estimate[by._index(key)] == by[key].estimate
        assert by[key].n_rows == m.sum() == by.n_rows[by._index(key)]
    assert res["Comparison"].weights == res["KappaByGroup"].weights == "none"
    assert res["KappaCI"].weights == "quadratic"
    assert res["Comparison"].models["a"].weights == res["Comparison"].weights


def test_contract_names_answer_without_a_warning():
    # the API contract names KappaByGroup.kappa and .n: aliases of estimate and
    # n_rows that stay (they warned as deprecated)
    res = _all_results()
    by, group, comp = res["KappaByGroup"], res["GroupKappa"], res["Comparison"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(by.kappa, by.estimate)
        np.testing.assert_array_equal(by.n, by.n_rows)
        assert group.kappa == group.estimate == float(group)
        assert group.n == group.n_rows
        assert comp.n == comp.n_rows


def test_to_dict_and_dataframe_keys():
    pytest.importorskip("pandas")
    res = _all_results()
    by = res["KappaByGroup"].to_dict()
    assert set(by["groups"][0]) == {"group", "estimate", "n_rows", "low", "high"}
    assert list(res["KappaByGroup"].to_dataframe().columns) == [
        "group", "n_rows", "estimate", "low", "high"]
    comp = res["Comparison"].to_dict()
    assert comp["n_rows"] == 400 and "n" not in comp and comp["weights"] == "none"
    assert list(res["Comparison"].to_dataframe("models").columns) == [
        "model", "estimate", "low", "high", "standard_error"]
    for name, r in res.items():
        if name == "GroupKappa":  # a float with attributes; its row is in the parent's dict
            continue
        d = json.loads(json.dumps(r.to_dict()))  # valid JSON
        if name.startswith(("KappaCI", "Comparison", "KappaByGroup", "Agreement")) and (
                name != "AgreementRow"):
            # provenance under one key, as in the command line's JSON
            assert d["fastkappa_version"] == fk.__version__ and "version" not in d, name


def test_group_kappa_pickles_under_the_new_names():
    group = _all_results()["GroupKappa"]
    back = pickle.loads(pickle.dumps(group))
    assert (back.group, back.estimate, back.n_rows) == (group.group, group.estimate,
                                                         group.n_rows)
    assert math.isnan(back.low) == math.isnan(group.low)
