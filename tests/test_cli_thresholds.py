"""`fastkappa thresholds`: CSV keeps the kappas, --groups, and --apply CUTS.

Oracles: ThresholdOptimizer / optimize_thresholds in the library (themselves
checked against exhaustive search), ``np.searchsorted`` for applying cut
points, scikit-learn for the kappa.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

import fastkappa as fk
from fastkappa.cli import main

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    n_patients = 700
    patient = np.repeat(np.arange(n_patients), 2)
    grade = np.repeat(rng.integers(1, 6, n_patients), 2)  # grades 1-5
    score = grade + rng.normal(0, 0.8, len(grade))
    return {"id": np.array([f"eye-{i}" for i in range(len(grade))]), "grade": grade,
            "score": score, "patient": patient}


@pytest.fixture(scope="module")
def path(data, tmp_path_factory):
    p = tmp_path_factory.mktemp("thr") / "train.csv"
    pd.DataFrame(data).to_csv(p, index=False, float_format="%.17g")
    return str(p)


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def read_csv(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_csv_output_keeps_the_kappas(path, data, capsys):
    code, out, err = run(["thresholds", path, "--true", "grade", "--score", "score",
                          "--cv", "5", "--seed", "0", "--format", "csv"], capsys)
    assert code == 0, err
    rows = read_csv(out)
    opt = fk.ThresholdOptimizer(cv=5, seed=0).fit(data["grade"], data["score"])
    assert [float(r["threshold"]) for r in rows] == np.asarray(opt.thresholds_).tolist()
    assert [(int(r["below"]), int(r["above"])) for r in rows] == [(1, 2), (2, 3), (3, 4),
                                                                   (4, 5)]
    oracle = cohen_kappa_score(data["grade"], opt.predict(data["score"]), weights="quadratic")
    for r in rows:
        assert float(r["kappa"]) == pytest.approx(oracle, abs=1e-12)
        assert float(r["cv_kappa"]) == opt.cv_qwk_
    code, out, _ = run(["thresholds", path, "--true", "grade", "--score", "score",
                        "--format", "csv"], capsys)
    assert all(r["cv_kappa"] == "" for r in read_csv(out))  # no --cv: empty, not dropped


def test_groups_keep_patients_in_one_fold(path, data, capsys):
    code, out, err = run(["thresholds", path, "--true", "grade", "--score", "score",
                          "--cv", "5", "--groups", "patient", "--format", "json"], capsys)
    assert code == 0, err
    res = json.loads(out)
    opt = fk.ThresholdOptimizer(cv=5).fit(data["grade"], data["score"],
                                          groups=data["patient"])
    assert res["cv_kappa"] == opt.cv_qwk_ and res["groups"] == "patient"
    assert res["labels"] == [1, 2, 3, 4, 5] and res["seed"] is None
    code, out, _ = run(["thresholds", path, "--true", "grade", "--score", "score",
                        "--cv", "5", "--groups", "patient"], capsys)
    assert "in file order; groups of 'patient' kept whole)" in out
    # the folds' seed, when given, is in the JSON and the text: it moves cv_kappa
    argv = ["thresholds", path, "--true", "grade", "--score", "score", "--cv", "5",
            "--groups", "patient", "--seed", "7"]
    code, out, _ = run([*argv, "--format", "json"], capsys)
    res = json.loads(out)
    opt = fk.ThresholdOptimizer(cv=5, seed=7).fit(data["grade"], data["score"],
                                                  groups=data["patient"])
    assert res["seed"] == 7 and res["cv_kappa"] == opt.cv_qwk_
    code, out, _ = run(argv, capsys)
    assert "(folds from seed 7; groups of 'patient' kept whole)" in out


def test_apply_comma_separated_cuts(path, data, capsys):
    code, out, err = run(["thresholds", path, "--score", "score", "--apply",
                          "1.5, 2.5,3.5,4.5"], capsys)
    assert code == 0, err
    rows = read_csv(out)
    expected = np.searchsorted([1.5, 2.5, 3.5, 4.5], data["score"], side="right")
    assert [int(r["label"]) for r in rows] == expected.tolist()  # 0..K-1 without labels
    code, out, err = run(["thresholds", path, "--score", "score", "--apply", "1.5,2.5,3.5,4.5",
                          "--labels", "1,2,3,4,5", "--id", "id", "--format", "csv"], capsys)
    assert code == 0, err
    rows = read_csv(out)
    assert [r["id"] for r in rows] == data["id"].tolist()
    assert [int(r["label"]) for r in rows] == (expected + 1).tolist()
    code, out, err = run(["thresholds", path, "--score", "score", "--apply", "2.5",
                          "--labels", "low,high"], capsys)
    assert code == 0, err
    assert {r["label"] for r in read_csv(out)} == {"low", "high"}


def test_apply_the_json_that_thresholds_writes(path, data, capsys, tmp_path):
    code, out, err = run(["thresholds", path, "--true", "grade", "--score", "score",
                          "--format", "json"], capsys)
    assert code == 0, err
    cuts_file = tmp_path / "cuts.json"
    cuts_file.write_text(out)
    code, out, err = run(["thresholds", path, "--score", "score", "--apply", str(cuts_file),
                          "--id", "id"], capsys)
    assert code == 0, err
    rows = read_csv(out)
    cuts = fk.optimize_thresholds(data["grade"], data["score"])
    assert [int(r["label"]) for r in rows] == fk.apply_thresholds(data["score"], cuts).tolist()
    assert {int(r["label"]) for r in rows} <= {1, 2, 3, 4, 5}  # the grades, not indices
    # as JSON: the predictions with the cut points and classes used
    code, out, err = run(["thresholds", path, "--score", "score", "--apply", str(cuts_file),
                          "--format", "json"], capsys)
    res = json.loads(out)
    assert res["labels"] == [1, 2, 3, 4, 5] and res["n_rows"] == len(data["grade"])
    assert res["thresholds"] == np.asarray(cuts).tolist()
    assert [r["label"] for r in res["predictions"]] == [int(r["label"]) for r in rows]
    # a plain JSON list of numbers works too; --labels wins over the file's classes
    plain = tmp_path / "plain.json"
    plain.write_text("[1.5, 2.5]")
    code, out, err = run(["thresholds", path, "--score", "score", "--apply", str(plain),
                          "--labels", "a,b,c"], capsys)
    assert code == 0, err
    assert {r["label"] for r in read_csv(out)} <= {"a", "b", "c"}


def test_apply_through_the_console_entry_point(path, data):
    out = subprocess.run(
        [sys.executable, "-m", "fastkappa", "thresholds", path, "--score", "score",
         "--apply", "3"], capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    labels = [int(r["label"]) for r in read_csv(out.stdout)]
    assert labels == (data["score"] >= 3).astype(int).tolist()


@pytest.mark.parametrize(("argv", "message"), [
    (["--score", "score"], r"--true COL is required to tune cut points"),
    (["--true", "grade", "--score", "score", "--id", "id"], r"--id goes with --apply"),
    (["--true", "grade", "--score", "score", "--groups", "patient"], r"add --cv K"),
    (["--score", "score", "--apply", "1,2", "--true", "grade"],
     r"--true does not go with --apply"),
    (["--score", "score", "--apply", "1,2", "--cv", "3"], r"--cv does not go with --apply"),
    (["--score", "score", "--apply", "1,2", "--labels", "a,b"],
     r"2 cut points make 3 classes, but 2 class labels"),
    (["--score", "score", "--apply", "1,x"], r"cut points must be numbers"),
    (["--score", "score", "--apply", "2,1"], r"strictly increasing"),
    (["--score", "score", "--apply", "missing.json"], r"cannot read it as a JSON file"),
])
def test_thresholds_usage_errors(path, capsys, argv, message):
    import re

    code, out, err = run(["thresholds", path, *argv], capsys)
    assert code == 2 and out == ""
    assert re.search(message, err), err


def test_apply_json_without_thresholds_is_a_usage_error(path, capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"cuts": [1, 2]}')
    code, _, err = run(["thresholds", path, "--score", "score", "--apply", str(bad)], capsys)
    assert code == 2 and 'needs a "thresholds" list' in err


@pytest.mark.parametrize("bad", ["0.5", "99999999999999999999"])
def test_apply_id_column_that_holds_no_id_says_what_an_id_may_hold(tmp_path, capsys, bad):
    # a fraction, or a whole number beyond int64 (not "the range of integer class
    # labels": an id is no class label)
    p = tmp_path / "ids.csv"
    p.write_text(f"rid,score\n0,0.1\n{bad},2.2\n1,3.0\n")
    code, out, err = run(["thresholds", str(p), "--score", "score", "--apply", "1.5",
                          "--id", "rid"], capsys)
    assert code == 1 and out == ""
    assert (f"row 2: the --id column 'rid' holds '{bad}'; ids must be strings or whole "
            "numbers from -2**63 to 2**63 - 1") in err
    assert "class label" not in err
