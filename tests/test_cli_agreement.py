"""``fastkappa agreement``: long and wide files equal fk.agreement in memory; exit codes."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pandas as pd
import pytest

import fastkappa as fk
from fastkappa.cli import main

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

RATERS = ["r1", "r2", "r3", "r4"]


@pytest.fixture
def panel():
    """400 items x 4 raters, grades 0-4, a fifth of the ratings missing."""
    rng = np.random.default_rng(21)
    n = 400
    truth = rng.integers(0, 5, n)
    x = np.where(rng.random((n, 4)) < 0.6, truth[:, None],
                 rng.integers(0, 5, (n, 4))).astype(float)
    x[rng.random(x.shape) < 0.2] = np.nan
    x[np.isnan(x).all(axis=1), 0] = 2.0  # every item rated at least once
    return x


def _long_frame(x):
    items, raters = np.nonzero(~np.isnan(x))
    order = np.random.default_rng(3).permutation(len(items))  # any row order
    return pd.DataFrame({"doc": items[order], "who": np.array(RATERS)[raters[order]],
                         "grade": x[items, raters][order].astype(int)})


def _write(df, path):
    if path.suffix == ".csv":
        df.to_csv(path, index=False)
    else:
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path,
                       row_group_size=250)
    return str(path)


@pytest.fixture
def long_files(panel, tmp_path):
    df = _long_frame(panel)
    return {fmt: _write(df, tmp_path / f"long.{fmt}") for fmt in ("csv", "parquet")}


@pytest.fixture
def wide_files(panel, tmp_path):
    df = pd.DataFrame(panel, columns=RATERS).astype("Int64")
    return {fmt: _write(df, tmp_path / f"wide.{fmt}") for fmt in ("csv", "parquet")}


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def run_json(argv, capsys):
    code, out, err = run([*argv, "--format", "json"], capsys)
    assert code == 0, err
    return json.loads(out)


def _same(got: dict, want: fk.Agreement):
    rows = {r["coefficient"]: r for r in got["coefficients"]}
    assert list(rows) == [r.coefficient for r in want.rows]
    for r in want.rows:
        for key in ("estimate", "standard_error", "low", "high", "p_value"):
            assert rows[r.coefficient][key] == pytest.approx(getattr(r, key), abs=1e-12), (
                r.coefficient, key)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("weights", ["none", "quadratic"])
def test_long_file_equals_agreement(panel, long_files, capsys, fmt, weights):
    got = run_json(["agreement", long_files[fmt], "--item", "doc", "--rater", "who",
                    "--label", "grade", "--weights", weights], capsys)
    df = _long_frame(panel)
    want = fk.agreement(item=df["doc"], rater=df["who"], label=df["grade"],
                        weights=None if weights == "none" else weights)
    _same(got, want)
    # the long call agrees with the wide matrix too (an independent path through the API)
    _same(got, fk.agreement(panel, weights=None if weights == "none" else weights))
    assert got["command"] == "agreement" and got["format"] == "long"
    assert got["n_items"] == len(panel) and got["n_raters"] == 4


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_light_kappa_on_request(panel, long_files, capsys, fmt):
    got = run_json(["agreement", long_files[fmt], "--item", "doc", "--rater", "who",
                    "--label", "grade", "--coefficients", "light_kappa", "fleiss_kappa"],
                   capsys)
    df = _long_frame(panel)
    want = fk.agreement(item=df["doc"], rater=df["who"], label=df["grade"],
                        coefficients=["light_kappa", "fleiss_kappa"])
    _same(got, want)
    assert [r["coefficient"] for r in got["coefficients"]] == ["light_kappa", "fleiss_kappa"]
    assert got["coefficients"][0]["estimate"] == pytest.approx(fk.light_kappa(panel), abs=1e-12)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_wide_file_equals_agreement(panel, wide_files, capsys, fmt):
    got = run_json(["agreement", wide_files[fmt], "--wide", *RATERS, "--coefficients",
                    "fleiss_kappa", "krippendorff_alpha", "--level", "ordinal"], capsys)
    want = fk.agreement(panel, coefficients=["fleiss_kappa", "krippendorff_alpha"],
                        level="ordinal")
    _same(got, want)
    assert got["format"] == "wide" and got["raters"] == RATERS


def test_json_provenance_and_bootstrap_seed(wide_files, capsys):
    argv = ["agreement", wide_files["csv"], "--wide", *RATERS, "--method", "percentile",
            "--n-resamples", "200", "--coefficients", "gwet_ac", "--weights", "linear"]
    first = run_json(argv, capsys)  # no --seed: one is drawn and recorded
    assert first["fastkappa_version"] == fk.__version__
    assert first["method"] == "percentile" and first["n_resamples"] == 200
    assert first["weights"] == "linear" and isinstance(first["seed"], int)
    again = run_json([*argv, "--seed", str(first["seed"])], capsys)
    assert again["coefficients"] == first["coefficients"]  # the seed reproduces it
    asym = run_json(["agreement", wide_files["csv"], "--wide", *RATERS], capsys)
    assert asym["method"] == "asymptotic" and asym["seed"] is None
    assert asym["weights"] == "none"


def test_text_and_csv_output(wide_files, capsys):
    code, out, err = run(["agreement", wide_files["csv"], "--wide", *RATERS], capsys)
    assert code == 0 and err == ""
    assert "wide file: raters 'r1', 'r2', 'r3', 'r4'" in out
    assert "Fleiss' kappa" in out and "Krippendorff's alpha" in out
    code, out, _ = run(["agreement", wide_files["csv"], "--wide", *RATERS,
                        "--format", "csv"], capsys)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and [r["coefficient"] for r in rows] == [
        "percent_agreement", "fleiss_kappa", "conger_kappa", "gwet_ac", "brennan_prediger",
        "krippendorff_alpha"]
    assert all(r["method"] == "asymptotic" for r in rows)


@pytest.mark.parametrize(("argv", "flag"), [
    (["--wide", "r1", "r2", "--item", "doc"], "--wide names one column per rater; it does "
                                              "not go with --item"),
    (["--item", "doc", "--label", "grade"], "(missing: --rater)"),
    ([], "name the long file's columns with --item, --rater and --label"),
    (["--wide", "r1"], "--wide needs two or more distinct rater columns"),
    (["--wide", "r1", "r1"], "--wide needs two or more distinct rater columns"),
    (["--wide", "r1,r2"], "Separate them with spaces: --wide r1 r2"),
    (["--item", "doc", "--rater", "doc", "--label", "grade"],
     "--item, --rater and --label must name three different columns"),
])
def test_usage_errors_exit_2(long_files, capsys, argv, flag):
    code, out, err = run(["agreement", long_files["csv"], *argv], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("fastkappa agreement: error: ")
    assert flag in err


def test_parser_errors_exit_2(long_files, capsys):
    code, _, err = run(["agreement", long_files["csv"], "--wide", "r1", "r2", "--method",
                        "normal"], capsys)
    assert code == 2 and "--method" in err
    code, _, err = run(["agreement", long_files["csv"], "--wide", "r1", "r2",
                        "--coefficients", "cohen"], capsys)
    assert code == 2 and "--coefficients" in err


def test_data_errors_exit_1_on_one_line(long_files, tmp_path, capsys):
    code, _, err = run(["agreement", long_files["csv"], "--item", "doc", "--rater", "who",
                        "--label", "score"], capsys)
    assert code == 1 and err.count("\n") == 1
    assert "has no column 'score'; its columns are 'doc', 'who', 'grade'" in err
    bad = tmp_path / "bad.csv"
    bad.write_text("doc,who,grade\n1,a,0\n1,b,2.5\n")
    code, _, err = run(["agreement", str(bad), "--item", "doc", "--rater", "who",
                        "--label", "grade"], capsys)
    assert code == 1 and err.count("\n") == 1
    assert err.startswith("fastkappa agreement: error: row 2: column 'grade' holds '2.5', "
                          "which is not a class label")
    code, _, err = run(["agreement", str(tmp_path / "absent.csv"), "--wide", "a", "b"],
                       capsys)
    assert code == 1 and "no such file" in err and err.count("\n") == 1


def test_declared_classes(tmp_path, capsys):
    path = tmp_path / "two.csv"
    path.write_text("a,b,c\nlow,low,high\nhigh,high,high\nlow,low,low\n")
    got = run_json(["agreement", str(path), "--wide", "a", "b", "c", "--labels",
                    "low,mid,high", "--coefficients", "brennan_prediger"], capsys)
    x = np.array([["low", "low", "high"], ["high", "high", "high"], ["low", "low", "low"]],
                 dtype=object)
    want = fk.agreement(x, labels=["low", "mid", "high"], coefficients="brennan_prediger")
    _same(got, want)
    assert got["classes"] == ["low", "mid", "high"]


@pytest.mark.parametrize(("layout", "text", "extra", "message"), [
    ("long", "doc,who,grade\n1,a,0\n,b,1\n2,a,1\n2,b,1\n", [],
     "--item holds 1 missing ids (NaN/None); every row of long-format data needs an id "
     "in --item."),
    ("long", "doc,who,grade\n1,a,0\n1,,1\n2,a,1\n2,b,1\n", [],
     "--rater holds 1 missing ids (NaN/None); every row of long-format data needs an id "
     "in --rater."),
    ("long", "doc,who,grade\n1,a,0\n1,b,7\n2,a,1\n2,b,1\n", ["--n-classes", "3"],
     "--label holds 7 (1 rating), which is not one of the declared classes; declare it "
     "in --labels / --n-classes, or leave the cell empty (a missing rating)."),
    ("wide", "a,b\n0,7\n1,1\n", ["--n-classes", "3"],
     "column 'b' holds 7 (1 rating), which is not one of the declared classes; declare it "
     "in --labels / --n-classes, or leave the cell empty (a missing rating)."),
    ("wide", "a,b\nx,y\nx,x\n", ["--level", "interval", "--labels", "x,y"],
     "the labels are strings; use --level ordinal (with --labels in scale order)."),
    ("wide", "a,b\nx,y\nx,x\n", ["--level", "ratio"],
     "meaningless number). Pass --labels in scale order."),
    ("long", "doc,who,grade\n", [],
     "the file holds no rating: it has no data row, or every label is missing."),
    ("long", "doc,who,grade\n1,a,\n1,b,\n", [],
     "the file holds no rating: it has no data row, or every label is missing."),
])
def test_data_errors_name_the_command_line_options(tmp_path, capsys, layout, text, extra,
                                                   message):
    path = tmp_path / "f.csv"
    path.write_text(text)
    cols = (["--item", "doc", "--rater", "who", "--label", "grade"] if layout == "long"
            else ["--wide", "a", "b"])
    code, out, err = run(["agreement", str(path), *cols, *extra], capsys)
    assert code == 1 and out == "" and err.count("\n") == 1
    assert err == f"fastkappa agreement: error: {message}\n" or message in err
    for python_name in ("`item`", "`rater`", "`label`", "`level`", "`missing=`", "level=",
                        "update()", "Categorical", "matrix"):
        assert python_name not in err


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_row_with_an_empty_label_is_the_raters_row_in_files_too(tmp_path, capsys, fmt):
    """As in one call on all the rows: a second row of a (doc, rater) pair whose
    first label is empty is a duplicate, a doc with only empty labels is an item
    without a rating, and an empty rater id is an error even where the label is
    empty."""
    df = pd.DataFrame({"doc": ["d1", "d1", "d2", "d2", "d3", "d3", "d4", "d5", "d5"],
                       "who": ["a", "b", "a", "b", "a", "b", "a", "a", "b"],
                       "grade": [0, 1, 1, 1, 2, 2, None, 0, 0]}).astype({"grade": "Int64"})
    cols = ["--item", "doc", "--rater", "who", "--label", "grade"]
    ok = _write(df, tmp_path / f"ok.{fmt}")
    want = fk.agreement(item=df.doc, rater=df.who, label=df.grade.astype(float))
    got = fk.agreement_files.agreement_file(ok, item="doc", rater="who", label="grade")
    assert got.n_unrated == want.n_unrated == 1 and got.n_items == want.n_items == 4
    _same(run_json(["agreement", ok, *cols], capsys), want)
    dup = pd.concat([df, pd.DataFrame({"doc": ["d4"], "who": ["a"], "grade": [2]})],
                    ignore_index=True).astype({"grade": "Int64"})
    with pytest.raises(ValueError, match="more than once"):
        fk.agreement(item=dup.doc, rater=dup.who, label=dup.grade.astype(float))
    path = _write(dup, tmp_path / f"dup.{fmt}")
    code, out, err = run(["agreement", path, *cols], capsys)
    assert code == 1 and out == "" and "more than once" in err
    assert "item 'd4' with rater 'a'" in err
    no_rater = df.copy()
    no_rater.loc[6, "who"] = None
    with pytest.raises(ValueError, match="missing ids"):
        fk.agreement(item=no_rater.doc, rater=no_rater.who,
                     label=no_rater.grade.astype(float))
    code, _, err = run(["agreement", _write(no_rater, tmp_path / f"nr.{fmt}"), *cols],
                       capsys)
    assert code == 1 and "--rater holds 1 missing ids" in err


def test_agreement_takes_ci_as_a_deprecated_spelling_of_method(long_files, capsys):
    argv = ["agreement", long_files["csv"], "--item", "doc", "--rater", "who", "--label",
            "grade", "--seed", "3", "--n-resamples", "200", "--format", "json"]
    code, out, err = run([*argv, "--ci", "percentile"], capsys)
    assert code == 0 and "--ci is deprecated; use --method percentile" in err
    assert json.loads(out) == run_json([*argv, "--method", "percentile"], capsys)
    code, _, err = run([*argv, "--ci", "bca", "--method", "basic"], capsys)
    assert code == 2 and "--ci bca and --method basic disagree" in err


@pytest.mark.parametrize("ordered", [False, True])
def test_unused_dictionary_words_are_no_classes_unless_ordered(tmp_path, ordered):
    """An unordered Categorical's unused categories (and dictionary words of rows
    dropped as missing) are no classes, as in one call; an ordered Categorical
    written to Parquet keeps its scale, unused categories included."""
    df = pd.DataFrame({"doc": [1, 1, 2, 2, 3, 3], "who": list("xyxyxy"),
                       "grade": pd.Categorical(list("aabbab"), categories=["a", "b", "z"],
                                               ordered=ordered)})
    path = tmp_path / "cat.parquet"
    df.to_parquet(path)
    want = fk.agreement(item=df.doc, rater=df.who, label=df.grade)
    got = fk.agreement_files.agreement_file(str(path), item="doc", rater="who", label="grade")
    assert len(want.classes) == (3 if ordered else 2)
    for a, b in zip(got, want, strict=True):
        assert a.estimate == pytest.approx(b.estimate, abs=1e-12)


def test_a_batch_of_missing_words_adds_no_class(tmp_path):
    """A CSV block (1 MiB) whose labels are all a missing word (" NA", which the
    reader takes for missing) leaves no class behind; it used to become a class
    of its own, or a "strings after numbers" error."""
    n = 60_000  # about 1.3 MB of graded rows, then as much of missing ones
    rows = ["doc,who,grade"] + [f"{i},{r},{i % (2 if r == 'a' else 3) % 2}"
                                for i in range(n) for r in "ab"]
    rows += [f"{n + i},{r}, NA" for i in range(n) for r in "ab"]
    path = tmp_path / "na.csv"
    path.write_text("\n".join(rows) + "\n")
    got = fk.agreement_files.agreement_file(str(path), item="doc", rater="who", label="grade")
    assert got.classes.tolist() == [0, 1] and got.n_unrated == n


def test_a_parquet_label_column_of_nulls_only_is_all_missing(tmp_path, capsys):
    """Arrow types a column holding only None as `null`: every label is missing (no
    rating), as for the one-shot call, not a type error."""
    path = tmp_path / "null.parquet"
    pq.write_table(pa.table({"doc": [1, 1, 2, 2], "who": ["a", "b", "a", "b"],
                             "grade": pa.array([None] * 4, type=pa.null())}), path)
    with pytest.raises(ValueError, match="no rating"):
        fk.agreement_files.agreement_file(str(path), item="doc", rater="who", label="grade")
    code, _, err = run(["agreement", str(path), "--item", "doc", "--rater", "who",
                        "--label", "grade"], capsys)
    assert code == 1 and "holds no rating" in err
