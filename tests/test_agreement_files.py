"""fastkappa.agreement_files: CSV and Parquet, long and wide, equal the in-memory result."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fastkappa as fk

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
import fastkappa.agreement_files as fkf  # noqa: E402  (pyarrow is there: a broken module fails)


@pytest.fixture
def panel(rng):
    n, n_raters = 400, 4
    truth = rng.integers(0, 5, n)
    x = np.where(rng.random((n, n_raters)) < 0.6, truth[:, None],
                 rng.integers(0, 5, (n, n_raters))).astype(float)
    x[rng.random(x.shape) < 0.2] = np.nan
    return x


def _same(a, b):
    for ra, rb in zip(a, b, strict=True):
        assert ra.coefficient == rb.coefficient
        assert ra.estimate == pytest.approx(rb.estimate, abs=1e-13), ra.coefficient
        assert ra.standard_error == pytest.approx(rb.standard_error, abs=1e-13), ra.coefficient


def _long(x, rng):
    items, raters = np.nonzero(~np.isnan(x))
    order = rng.permutation(len(items))
    return pd.DataFrame({"doc": items[order], "who": np.array(list("abcd"))[raters[order]],
                         "grade": x[items, raters][order].astype(int)})


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_long_file_matches_in_memory(panel, rng, tmp_path, fmt):
    df = _long(panel, rng)
    path = tmp_path / f"ratings.{fmt}"
    if fmt == "csv":
        df.to_csv(path, index=False)
    else:
        pq.write_table(pa.Table.from_pandas(df), path, row_group_size=300)
    want = fk.agreement(panel, weights="quadratic")
    got = fkf.agreement_file(str(path), item="doc", rater="who", label="grade",
                             weights="quadratic")
    _same(got, want)


def _write_wide(x, path):
    """Ratings (NaN missing) as a wide file, one nullable integer column per rater."""
    df = pd.DataFrame(x, columns=["r1", "r2", "r3", "r4"]).astype("Int64")
    if path.suffix == ".csv":
        df.to_csv(path, index=False)
    else:
        pq.write_table(pa.Table.from_pandas(df), path, row_group_size=128)
    return path


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_wide_file_matches_in_memory(panel, tmp_path, fmt):
    path = _write_wide(panel, tmp_path / f"wide.{fmt}")
    want = fk.agreement(panel, method="bca", n_resamples=300, seed=1)
    got = fkf.agreement_file(str(path), wide=["r1", "r2", "r3", "r4"], method="bca",
                             n_resamples=300, seed=1)
    _same(got, want)
    assert [v for r in got for v in (r.low, r.high)] == pytest.approx(
        [v for r in want for v in (r.low, r.high)])


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_wide_file_rows_without_a_rating_are_unrated_items(panel, tmp_path, fmt):
    # as in one call on the array: a row whose every rater column is empty is
    # an item without a rating (n_unrated), not a row that was never there
    x = panel.copy()
    x[[0, 7, 8, 399]] = np.nan
    path = _write_wide(x, tmp_path / f"wide.{fmt}")
    want = fk.agreement(x)
    got = fkf.agreement_file(str(path), wide=["r1", "r2", "r3", "r4"])
    assert (got.n_items, got.n_unrated) == (want.n_items, want.n_unrated)
    assert want.n_unrated >= 4
    _same(got, want)


def test_string_labels_with_declared_order(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("item,rater,label\n1,a,low\n1,b,mid\n2,a,high\n2,b,high\n3,a,low\n"
                    "3,b,low\n4,a,mid\n4,b,\n")
    got = fkf.agreement_file(str(path), item="item", rater="rater", label="label",
                             labels=["low", "mid", "high"], weights="linear",
                             coefficients="gwet_ac")
    want = fk.gwet_ac([["low", "mid"], ["high", "high"], ["low", "low"], ["mid", None]],
                      labels=["low", "mid", "high"], weights="linear")
    assert got["gwet_ac"].estimate == pytest.approx(want, abs=1e-14)


@pytest.mark.parametrize("kwargs, match", [
    (dict(item="item", rater="rater"), "name the long-format columns"),
    (dict(item="item", rater="rater", label="label", wide=["a", "b"]), "either `wide=`"),
    (dict(wide=["a"]), "at least two distinct"),
    (dict(item="item", rater="item", label="label"), "three different columns"),
    (dict(item="item", rater="rater", label="nope"), "no column 'nope'"),
])
def test_file_errors(tmp_path, kwargs, match):
    path = tmp_path / "e.csv"
    path.write_text("item,rater,label\n1,a,0\n1,b,1\n")
    with pytest.raises(ValueError, match=match):
        fkf.agreement_file(str(path), **kwargs)


def test_bad_label_names_its_row(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("item,rater,label\n1,a,0\n1,b,1\n2,a,1.5\n2,b,1\n")
    with pytest.raises(ValueError, match="row 3"):
        fkf.agreement_file(str(path), item="item", rater="rater", label="label")


def test_ordered_categorical_parquet_declares_the_scale(rng, tmp_path):
    # categories out of alphabetical order, one unused: the file's order is the
    # scale for weighted coefficients, wide and long, as in one call
    cats = ["lo", "mid", "unused", "hi"]
    n = 300
    x = rng.choice(["lo", "mid", "hi"], (n, 3)).astype(object)
    x[rng.random(x.shape) < 0.2] = None
    df = pd.DataFrame({f"r{i}": pd.Categorical(x[:, i], categories=cats, ordered=True)
                       for i in range(3)})
    pq.write_table(pa.Table.from_pandas(df), tmp_path / "w.parquet", row_group_size=64)
    items, raters = np.nonzero(pd.notna(x))
    long = pd.DataFrame({"i": items, "r": raters, "l": pd.Categorical(
        x[items, raters], categories=cats, ordered=True)})
    pq.write_table(pa.Table.from_pandas(long), tmp_path / "l.parquet", row_group_size=64)
    want = fk.agreement(df, weights="quadratic")
    assert want.classes.tolist() == cats
    for got in (fkf.agreement_file(str(tmp_path / "w.parquet"), wide=["r0", "r1", "r2"],
                                   weights="quadratic"),
                fkf.agreement_file(str(tmp_path / "l.parquet"), item="i", rater="r",
                                   label="l", weights="quadratic")):
        assert got.classes.tolist() == cats
        _same(got, want)


def test_csv_ids_that_write_one_number_are_one_id(tmp_path):
    """A CSV id column read as the numbers its words write, as pandas reads a
    numeric column: ``1``, ``1.0`` and ``01`` are one item (``2`` and ``2.0`` one
    rater), while words that are not numbers stay words."""
    text = ("item,rater,grade\n1,a,1\n1.0,b,1\n01,c,2\n2,a,2\n2,b,2\n2,c,2\n3,a,3\n3,b,3\n"
            "3,c,1\n4,a,1\n4,b,2\n5,a,3\n5,b,3\n5,c,3\nx,a,1\nx,b,1\n2.5,a,2\n2.50,b,3\n")
    path = tmp_path / "ids.csv"
    path.write_text(text)
    got = fkf.agreement_file(path, item="item", rater="rater", label="grade",
                             coefficients=["fleiss_kappa", "conger_kappa"])
    df = pd.read_csv(path, dtype={"item": str})
    df["item"] = [int(float(v)) if v not in ("x", "2.5", "2.50") else
                  (2.5 if v.startswith("2.5") else v) for v in df["item"]]
    want = fk.agreement(item=df["item"].to_numpy(object), rater=df["rater"],
                        label=df["grade"], coefficients=["fleiss_kappa", "conger_kappa"])
    assert got.n_items == want.n_items == 7
    for name in ("fleiss_kappa", "conger_kappa"):
        assert got[name].estimate == pytest.approx(want[name].estimate, abs=1e-12)
    # raters written two ways are one rater: its second row is a duplicate
    path.write_text("item,rater,grade\n1,2,1\n1,2.0,2\n")
    with pytest.raises(ValueError, match="rated more than once"):
        fkf.agreement_file(path, item="item", rater="rater", label="grade")


def test_csv_ids_that_are_not_plain_numbers_stay_words(tmp_path):
    """Only plain ASCII numbers are read as numbers: ``1_000`` and ``1000`` are two
    items (as pandas reads them), ids past int64 and huge exponents are kept, and a
    ``clusters`` dict may key items as the CSV writes them."""
    path = tmp_path / "ids.csv"
    path.write_text("item,rater,label\n1_000,a,0\n1_000,b,1\n1000,c,1\n1000,d,0\n"
                    "2,a,1\n2,b,1\n3,a,0\n3,b,0\n")
    got = fkf.agreement_file(path, item="item", rater="rater", label="label",
                             coefficients="fleiss_kappa")
    df = pd.read_csv(path, dtype={"item": str})
    want = fk.agreement(item=df["item"], rater=df["rater"], label=df["label"],
                        coefficients="fleiss_kappa")
    assert got.n_items == want.n_items == 4
    assert got["fleiss_kappa"].estimate == pytest.approx(want["fleiss_kappa"].estimate)
    path.write_text("item,rater,label\n9223372036854775808,a,0\n9223372036854775808,b,1\n"
                    "1e1000000,a,1\n1e1000000,b,1\n-9223372036854775809,a,0\n"
                    "-9223372036854775809,b,0\n")
    assert fkf.agreement_file(path, item="item", rater="rater", label="label").n_items == 3
    path.write_text("item,rater,label\n01,a,0\n01,b,1\n02,a,1\n02,b,1\n03,a,0\n03,b,0\n"
                    "04,a,1\n04,b,0\n")
    for clusters in ({"01": "x", "02": "x", "03": "y", "04": "y"},
                     {1: "x", 2: "x", 3: "y", 4: "y"}):
        with pytest.warns(fk.DegenerateIntervalWarning):
            res = fkf.agreement_file(path, item="item", rater="rater", label="label",
                                     clusters=clusters, method="asymptotic",
                                     coefficients="percent_agreement")
        assert res.n_clusters == 2
    with pytest.raises(ValueError, match="two clusters"):
        fkf.agreement_file(path, item="item", rater="rater", label="label",
                           clusters={"01": "x", "1": "y", 2: "x", 3: "y", 4: "y"})


def test_csv_ids_with_spaces_around_are_numbers(tmp_path):
    """`` 1`` is the id 1, as pandas reads a numeric column (a file written with
    ``", "`` between fields), and a ``clusters`` dict keyed by numbers finds
    it; a no-break space makes a word."""
    path = tmp_path / "sp.csv"
    path.write_text("i, r, l\n1, x, 1\n1, y, 1\n 1, z, 2\n2, x, 1\n2, y, 2\n2, z, 2\n"
                    "3, x, 2\n3, y, 2\n3, z, 1\n4, x, 1\n4, y, 1\n4, z, 1\n")
    df = pd.read_csv(path, skipinitialspace=True)
    want = fk.agreement(item=df.i, rater=df.r, label=df.l, coefficients="fleiss_kappa")
    res = fkf.agreement_file(path, item="i", rater="r", label="l",
                             coefficients="fleiss_kappa")
    assert res.n_items == want.n_items == 4
    assert res["fleiss_kappa"].estimate == pytest.approx(want["fleiss_kappa"].estimate)
    with pytest.warns(fk.DegenerateIntervalWarning):
        res = fkf.agreement_file(path, item="i", rater="r", label="l",
                                 clusters={1: "a", 2: "a", 3: "b", 4: "b"},
                                 coefficients="fleiss_kappa", method="asymptotic")
    assert res.n_clusters == 2
    path.write_text("i,r,l\n2,x,1\n2,y,2\n2\xa0,x,1\n2\xa0,y,1\n")
    assert fkf.agreement_file(path, item="i", rater="r", label="l",
                              coefficients="percent_agreement").n_items == 2


def test_missing_marker_among_an_ordered_categorical_columns_classes(tmp_path):
    # in one call the marker is no class of an ordered Categorical (it is left out of
    # the scale); agreement_file refused the same column read from a file
    rng = np.random.default_rng(2)
    labs = pd.Categorical.from_codes(rng.integers(0, 4, 900), categories=list("wxyz"),
                                     ordered=True)
    frame = pd.DataFrame({"item": np.repeat(np.arange(300), 3),
                          "rater": np.tile([0, 1, 2], 300), "labs": labs})
    path = tmp_path / "long.parquet"
    frame.to_parquet(path, index=False)
    want = fk.agreement(item=frame.item, rater=frame.rater, label=frame.labs, missing="w")
    got = fk.agreement_files.agreement_file(path, item="item", rater="rater", label="labs",
                                            missing="w")
    assert list(got.classes) == list(want.classes) == ["x", "y", "z"]
    for a, b in zip(got, want, strict=True):
        assert a.estimate == pytest.approx(b.estimate, abs=1e-12)
