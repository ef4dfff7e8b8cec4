"""Published kappa values (point estimates) from the reference file.

Each case of ``known_values.json`` is checked against its printed value
within the stated tolerance and against its exact rational value.  The tests
carry a copy of the project's shared reference file in ``tests/data`` so that
they run from any clone; where the shared file sits beside the repository,
the copy must equal it.  Standard errors and intervals in the same file are
the bootstrap module's tests.
"""

from __future__ import annotations

import json
import math
import os
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from naive import confusion_dict, kappa_from_table

import fastkappa as fk

VENDORED = Path(__file__).parent / "data" / "known_values.json"


def _shared_reference() -> Path | None:
    here = Path(__file__).resolve()
    for parent in here.parents:
        for candidate in (parent / "shared" / "reference" / "known_values.json",
                          parent / "reference" / "known_values.json"):
            if candidate.is_file():
                return candidate
    return None


CASES = json.loads(VENDORED.read_text())["cases"]


def test_vendored_copy_equals_the_shared_reference():
    shared = _shared_reference()
    if shared is None:
        # CI always has the shared folder beside the repository: missing there is an error
        assert not os.environ.get("CI"), "shared/reference/known_values.json not found"
    else:
        assert json.loads(shared.read_text()) == json.loads(VENDORED.read_text())
    assert len(CASES) >= 10 and all(c["source"] for c in CASES)


def _by_kind(*kinds):
    return [pytest.param(c, id=c["id"]) for c in CASES if c["kind"] in kinds]


def _check(got: float, case: dict) -> None:
    exact = Fraction(case["exact"]["kappa"])
    assert math.isclose(got, float(exact), rel_tol=1e-12, abs_tol=1e-14), (got, exact)
    expected = case["expected"].get("kappa")
    if expected is not None:
        tol = case.get("tolerance", {})
        if "abs" in tol or "kappa_abs" in tol:
            assert abs(got - expected) <= tol.get("abs", tol.get("kappa_abs"))
        if "kappa_rel" in tol:
            assert math.isclose(got, expected, rel_tol=tol["kappa_rel"])


def test_known_values_file_has_every_kind():
    kinds = {c["kind"] for c in CASES}
    assert {"table", "arrays", "probs"} <= kinds
    assert all("exact" in c and "kappa" in c["exact"] for c in CASES)


@pytest.mark.parametrize("case", _by_kind("table"))
def test_kappa_from_confusion_known_tables(case):
    table = case["table"]
    weights = case["weights"]
    exact = Fraction(case["exact"]["kappa"])
    assert kappa_from_table(table, weights) == exact  # the oracle agrees, exactly
    _check(fk.kappa_from_confusion(table, weights), case)
    _check(fk.kappa_from_confusion(np.array(table, dtype=np.int64), weights), case)
    _check(fk.kappa_from_confusion(np.array(table, dtype=np.float64), weights), case)
    # the same table as rows: y_true = row index, y_pred = column index
    k = len(table)
    t = np.repeat(np.repeat(np.arange(k), k), np.ravel(table))
    p = np.repeat(np.tile(np.arange(k), k), np.ravel(table))
    np.testing.assert_array_equal(fk.confusion_matrix(t, p, n_classes=k), table)
    _check(fk.cohen_kappa(t, p, weights=weights, n_classes=k), case)
    # a transposed table (raters swapped) has the same kappa for symmetric weights
    _check(fk.kappa_from_confusion(np.array(table).T, weights), case)


@pytest.mark.parametrize("case", _by_kind("arrays"))
def test_cohen_kappa_known_arrays(case):
    y_true, y_pred = case["y_true"], case["y_pred"]
    weights = case["weights"]
    kw = {}
    if case.get("labels") is not None:
        kw["labels"] = case["labels"]
    if case.get("n_classes") is not None:
        kw["n_classes"] = case["n_classes"]
    classes = kw.get("labels") or (list(range(kw["n_classes"])) if "n_classes" in kw
                                   else sorted(set(y_true) | set(y_pred)))
    table = confusion_dict(y_true, y_pred, classes)
    assert kappa_from_table(table, weights) == Fraction(case["exact"]["kappa"])
    _check(fk.cohen_kappa(y_true, y_pred, weights=weights, **kw), case)
    _check(fk.cohen_kappa(np.array(y_true, dtype=np.int8), np.array(y_pred, dtype=np.uint16),
                          weights=weights, **kw), case)
    if "n_classes" not in kw:
        _check(fk.cohen_kappa_score(y_true, y_pred, weights=weights, labels=kw.get("labels")),
               case)
    if weights == "quadratic":
        _check(fk.quadratic_weighted_kappa(y_true, y_pred, **kw), case)
    if case.get("symmetric"):
        _check(fk.cohen_kappa(y_pred, y_true, weights=weights, **kw), case)


@pytest.mark.parametrize("case", _by_kind("probs"))
def test_cohen_kappa_known_probabilities(case):
    y_true = case["y_true"]
    probs = np.array(case["probs"])
    kw = {"n_classes": case["n_classes"]} if case.get("n_classes") is not None else {}
    _check(fk.cohen_kappa(y_true, probs, weights=case["weights"], **kw), case)
    _check(fk.cohen_kappa(y_true, probs.astype(np.float32), weights=case["weights"]), case)
    _check(fk.cohen_kappa(y_true, np.log(probs), weights=case["weights"], **kw), case)
    pred = probs.argmax(axis=1)
    _check(fk.cohen_kappa(y_true, pred, weights=case["weights"], **kw), case)
