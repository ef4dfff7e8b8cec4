"""Parquet string label columns are read from the file's own dictionary pages.

The reader asks pyarrow for dictionary arrays (``read_dictionary``) for every
string label column, so no per-row Python string is built and nothing is
hashed.  The results must equal scikit-learn on the same rows whatever the
file does: row groups holding different subsets of the labels (so each
batch has its own dictionary), a column that falls back to plain encoding,
missing values, string group columns, and the serial and the parallel
(row-group) engines.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

import fastkappa as fk

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
numba = pytest.importorskip("numba")

from fastkappa import _io  # noqa: E402

LABELS = ["none", "mild", "moderate", "severe", "proliferative"]


@pytest.fixture(scope="module")
def text_rows():
    rng = np.random.default_rng(5)
    n = 3000
    t = rng.integers(0, 5, n)
    p = np.clip(t + rng.integers(-1, 2, n), 0, 4)
    t[:700] = np.minimum(t[:700], 1)  # the first row groups hold only two labels
    p[:700] = np.minimum(p[:700], 1)
    names = np.array(LABELS, dtype=object)
    return {"y": names[t], "p": names[p], "site": rng.choice(["north", "south", "east"], n),
            "id": np.arange(n)}


@pytest.fixture(scope="module")
def text_file(text_rows, tmp_path_factory):
    path = tmp_path_factory.mktemp("text") / "graded.parquet"
    # "p" without a dictionary (plain-encoded strings), "y" and "site" with one
    pq.write_table(pa.table(text_rows), path, row_group_size=256,
                   use_dictionary=["y", "site"])
    return str(path)


@pytest.fixture(params=["serial", "row groups"])
def engine(request, monkeypatch):
    """Run score_file on one thread (batches) or on two (row groups in parallel)."""
    monkeypatch.setattr(_io, "PARQUET_BATCH_ROWS", 300)  # several units in a small file
    threads = 1 if request.param == "serial" else 2
    if threads > numba.config.NUMBA_NUM_THREADS:
        # numba has one thread here (one core, or NUMBA_NUM_THREADS=1), fixed at
        # its import: run this test again in a process given two, which must pass
        # (the body below then runs on the one thread too)
        env = dict(os.environ, NUMBA_NUM_THREADS="2")
        out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              request.node.nodeid], cwd=request.config.rootpath, env=env,
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stdout[-3000:]
        threads = 1
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    yield request.param
    numba.set_num_threads(before)


def test_text_labels_read_as_dictionaries(text_file):
    src = _io.open_source(text_file)
    batch = next(iter(src._open(["y", "p", "site"], {})))
    assert all(pa.types.is_dictionary(batch.column(i).type) for i in range(3))
    read = src.group_reader()
    batches = list(read(1, [0, 1], ["y", "p"]))
    assert all(pa.types.is_dictionary(b.column(0).type) for b in batches)
    assert sum(b.num_rows for b in batches) == 512
    # a column read as numbers (a weight) keeps its own type
    batch = next(iter(src._open(["y", "p"], {"p": "score"})))
    assert pa.types.is_string(batch.column(1).type)


@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_text_labels_match_sklearn(text_rows, text_file, engine, weights):
    got = fk.files.score_file(text_file, true="y", pred="p", weights=weights, labels=LABELS)
    ref = cohen_kappa_score(text_rows["y"], text_rows["p"], labels=LABELS, weights=weights)
    assert got == pytest.approx(ref, rel=1e-12)


def test_text_labels_learned_in_any_row_group_order(text_rows, text_file, engine):
    """No ``labels=``: the classes come from the batches' different dictionaries."""
    res = fk.files._score(text_file, true="y", pred="p")
    assert sorted(res.accumulator.labels.tolist()) == sorted(LABELS)
    assert res.kappa == pytest.approx(cohen_kappa_score(text_rows["y"], text_rows["p"]),
                                      rel=1e-12)


def test_text_groups_match_kappa_by_group(text_rows, text_file, engine):
    got = fk.files.score_file(text_file, true="y", pred="p", by="site", labels=LABELS,
                              weights="linear")
    ref = fk.kappa_by_group(text_rows["y"], text_rows["p"], text_rows["site"],
                            labels=LABELS, weights="linear")
    assert got.groups.tolist() == ref.groups.tolist() == ["east", "north", "south"]
    np.testing.assert_allclose(got.estimate, ref.estimate, rtol=1e-12)
    np.testing.assert_array_equal(got.n_rows, ref.n_rows)


def test_missing_text_labels_name_their_row(text_rows, tmp_path, engine):
    y = list(text_rows["y"])
    p = list(text_rows["p"])
    y[1500] = None  # in the sixth row group
    p[2000] = None
    path = tmp_path / "holes.parquet"
    pq.write_table(pa.table({"y": y, "p": p}), path, row_group_size=256)
    with pytest.raises(ValueError, match=r"row 1501: column 'y' is missing .*nan_policy='omit'"):
        fk.files.score_file(path, true="y", pred="p")
    got = fk.files.score_file(path, true="y", pred="p", nan_policy="omit", labels=LABELS)
    keep = [i for i in range(len(y)) if y[i] is not None and p[i] is not None]
    ref = cohen_kappa_score([y[i] for i in keep], [p[i] for i in keep], labels=LABELS)
    assert got == pytest.approx(ref, rel=1e-12)


def test_text_label_outside_declared_classes_names_its_row(text_rows, tmp_path, engine):
    p = list(text_rows["p"])
    p[2100] = "ungradable"
    path = tmp_path / "odd.parquet"
    pq.write_table(pa.table({"y": text_rows["y"], "p": p}), path, row_group_size=256)
    with pytest.raises(ValueError, match=r"row 2101: column 'p' holds 'ungradable'.*`labels=`"):
        fk.files.score_file(path, true="y", pred="p", labels=LABELS)


def test_all_missing_text_batch_then_values(tmp_path, engine):
    """A row group whose label column is entirely missing leaves the kind open."""
    y = [None] * 300 + ["a", "b"] * 150
    p = [None] * 300 + ["a", "a", "b", "b"] * 75
    path = tmp_path / "late.parquet"
    pq.write_table(pa.table({"y": pa.array(y, pa.string()), "p": pa.array(p, pa.string())}),
                   path, row_group_size=300)
    got = fk.files.score_file(path, true="y", pred="p", nan_policy="omit")
    assert got == pytest.approx(cohen_kappa_score(y[300:], p[300:]), rel=1e-12)


def _ordered_file(path, t_cats, p_cats, rows):
    """Two ordered Categorical columns (pandas' Parquet form) in small row groups."""
    import pandas as pd

    df = pd.DataFrame({"y": pd.Categorical(rows["y"], categories=t_cats, ordered=True),
                       "p": pd.Categorical(rows["p"], categories=p_cats, ordered=True)})
    pq.write_table(pa.Table.from_pandas(df), path, row_group_size=256)
    return str(path)


def test_ordered_categorical_columns_declare_the_scale(text_rows, tmp_path, engine):
    # as in one call on the Categoricals: their categories are the classes, in their
    # order, unused ones included (an unused class in the middle changes QWK)
    scale = ["none", "mild", "unused", "moderate", "severe", "proliferative"]
    path = _ordered_file(tmp_path / "ordered.parquet", scale, scale, text_rows)
    assert _io.open_source(path).ordered_categories("y") == scale
    assert _io.open_source(path).ordered_categories("site") is None
    res = fk.files._score(path, true="y", pred="p", weights="quadratic")
    assert res.accumulator.labels.tolist() == scale
    want = cohen_kappa_score(text_rows["y"], text_rows["p"], labels=scale, weights="quadratic")
    assert res.kappa == pytest.approx(want, rel=1e-12)
    assert res.kappa != pytest.approx(cohen_kappa_score(
        text_rows["y"], text_rows["p"], labels=LABELS, weights="quadratic"), rel=1e-6)


def test_ordered_categoricals_with_different_categories_are_an_error(text_rows, tmp_path):
    path = _ordered_file(tmp_path / "mixed.parquet", LABELS, LABELS[::-1], text_rows)
    with pytest.raises(_io.DataError, match="ordered categoricals with different categories"):
        fk.files.score_file(path, true="y", pred="p", weights="quadratic")
    # declared labels take precedence over the file's order
    got = fk.files.score_file(path, true="y", pred="p", weights="quadratic", labels=LABELS)
    assert got == pytest.approx(cohen_kappa_score(text_rows["y"], text_rows["p"],
                                                  labels=LABELS, weights="quadratic"))


def test_plain_encoded_ordered_columns_declare_nothing(tmp_path):
    # without dictionary pages each batch rebuilds its dictionary from its own
    # values: the file does not hold the categories, so none are declared
    import pandas as pd

    c = ["lo", "mid", "hi", "top"]
    pd.DataFrame({"t": pd.Categorical(["hi", "lo", "mid"] * 5, categories=c, ordered=True)}
                 ).to_parquet(tmp_path / "plain.parquet", use_dictionary=False)
    assert _io.open_source(str(tmp_path / "plain.parquet")).ordered_categories("t") is None


def test_one_ordered_column_declares_the_scale_as_in_memory(text_rows, tmp_path):
    import pandas as pd

    scale = ["none", "mild", "unused", "moderate", "severe", "proliferative"]
    t = pd.Categorical(text_rows["y"], categories=scale, ordered=True)
    path = tmp_path / "one.parquet"
    pq.write_table(pa.table({"y": pa.array(t), "p": text_rows["p"]}), path)
    got = fk.files.score_file(str(path), true="y", pred="p", weights="quadratic")
    assert got == pytest.approx(fk.cohen_kappa(t, text_rows["p"], weights="quadratic"))


def test_a_repeated_label_column_name_is_a_clear_error(tmp_path):
    path = tmp_path / "dup.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array([0, 1, 2]), pa.array([0, 1, 1]),
                                         pa.array([0, 1, 2])], names=["a", "a", "b"]), path)
    with pytest.raises(_io.DataError, match="more than one column named 'a'"):
        fk.files.score_file(str(path), true="a", pred="b")


def test_arrow_streams_with_string_views_and_ordered_dictionaries(text_rows):
    # polars exports text as string_view, a Categorical as a dictionary of them and
    # an Enum as an ordered one: the Enum's categories are the scale
    pl = pytest.importorskip("polars")
    import pandas as pd

    df = pl.DataFrame({"y": list(text_rows["y"]), "p": list(text_rows["p"])})
    assert fk.files.score_file(df, true="y", pred="p") == pytest.approx(
        cohen_kappa_score(text_rows["y"], text_rows["p"]))
    cat = df.with_columns(pl.col("y").cast(pl.Categorical), pl.col("p").cast(pl.Categorical))
    assert fk.files.score_file(cat, true="y", pred="p") == pytest.approx(
        cohen_kappa_score(text_rows["y"], text_rows["p"]))
    enum = df.with_columns(pl.col("y").cast(pl.Enum(LABELS)), pl.col("p").cast(pl.Enum(LABELS)))
    assert fk.files.score_file(enum, true="y", pred="p", weights="quadratic") == pytest.approx(
        cohen_kappa_score(text_rows["y"], text_rows["p"], labels=LABELS, weights="quadratic"))
    scale = ["none", "mild", "unused", "moderate", "severe", "proliferative"]
    table = pa.table({c: pa.array(pd.Categorical(text_rows[c], categories=scale,
                                                 ordered=True)) for c in ("y", "p")})
    assert fk.files.score_file(table, true="y", pred="p", weights="quadratic") == pytest.approx(
        cohen_kappa_score(text_rows["y"], text_rows["p"], labels=scale, weights="quadratic"))


def test_plain_encoded_ordered_columns_score_unweighted_and_explain_weighted(
        text_rows, tmp_path, engine):
    # each batch's dictionary is in the order its values appear: that order is no
    # scale, so the columns are plain text (unweighted kappa as scikit-learn), and
    # weighted kappa says the file does not hold the categories' order
    import pandas as pd

    df = pd.DataFrame({c: pd.Categorical(text_rows[c], categories=LABELS, ordered=True)
                       for c in ("y", "p")})
    path = str(tmp_path / "plain.parquet")
    pq.write_table(pa.Table.from_pandas(df), path, use_dictionary=False, row_group_size=256)
    assert fk.files.score_file(path, true="y", pred="p") == pytest.approx(
        cohen_kappa_score(text_rows["y"], text_rows["p"]), rel=1e-12)
    with pytest.raises(_io.DataError, match=r"without the categories.*pass `labels=`"):
        fk.files.score_file(path, true="y", pred="p", weights="quadratic")
    got = fk.files.score_file(path, true="y", pred="p", weights="quadratic", labels=LABELS)
    assert got == pytest.approx(cohen_kappa_score(text_rows["y"], text_rows["p"],
                                                  labels=LABELS, weights="quadratic"))


def test_ordered_categorical_beyond_the_class_limit_names_its_column(tmp_path):
    import pandas as pd

    from fastkappa._core.config import MAX_CLASSES

    cats = [f"c{i}" for i in range(MAX_CLASSES + 1)]
    y = pd.Categorical(cats[:40] * 3, categories=cats, ordered=True)
    path = str(tmp_path / "wide_scale.parquet")
    pd.DataFrame({"y": y, "p": y}).to_parquet(path)
    with pytest.raises(_io.DataError, match=f"column 'y' is an ordered categorical with "
                       f"{MAX_CLASSES + 1} categories"):
        fk.files.score_file(path, true="y", pred="p")


def test_digit_strings_in_a_text_column(tmp_path):
    # "10", "2", "3" stored as text: the Python API takes them as strings, and a
    # number for ignore_index is an error rather than a filter that drops nothing
    y = np.array(["10", "2", "3", "10", "2", "3", "2"], dtype=object)
    p = np.array(["10", "2", "2", "10", "3", "3", "2"], dtype=object)
    path = str(tmp_path / "digits.parquet")
    pq.write_table(pa.table({"y": y, "p": p}), path)
    keep = (y != "10") & (p != "10")
    assert fk.files.score_file(path, true="y", pred="p", ignore_index="10") == pytest.approx(
        cohen_kappa_score(y[keep], p[keep]))
    with pytest.raises(_io.DataError, match=r"is the number 10, but column 'y' holds text; "
                       r"give the label as a string \('10'\)"):
        fk.files.score_file(path, true="y", pred="p", ignore_index=10)


def test_string_view_columns_in_a_parquet_file(tmp_path, engine):
    # the test extra pins pyarrow >= 16, which writes string views
    y = ["a", "b", "c", "a", "b", "c", "a"]
    p = ["a", "b", "b", "a", "c", "c", "b"]
    path = str(tmp_path / "views.parquet")
    pq.write_table(pa.table({"y": pa.array(y, pa.string_view()),
                             "p": pa.array(p, pa.string_view())}), path)
    assert fk.files.score_file(path, true="y", pred="p") == pytest.approx(
        cohen_kappa_score(y, p), rel=1e-12)


def test_numbers_declared_for_a_text_column_say_so(tmp_path):
    path = str(tmp_path / "digits.parquet")
    pq.write_table(pa.table({"y": ["10", "2", "3"], "p": ["10", "2", "2"]}), path)
    with pytest.raises(_io.DataError, match="the column holds text, the classes are numbers: "
                       "declare them as strings"):
        fk.files.score_file(path, true="y", pred="p", labels=[2, 3, 10])


def test_ignore_index_checks_wait_for_a_value(tmp_path):
    # a column whose every value is missing holds neither text nor numbers
    path = tmp_path / "allna.csv"
    path.write_text("y,p\nNA,NA\n,\nNA,\n")
    with pytest.raises(_io.DataError, match="holds no rows to score after dropping"):
        fk.files.score_file(str(path), true="y", pred="p", ignore_index=10, nan_policy="omit")
    text = tmp_path / "digits.parquet"
    pq.write_table(pa.table({"y": ["10", "2"], "p": ["10", "2"]}), text)
    with pytest.raises(_io.DataError, match=r"is the number 10, but column 'y' holds text"):
        fk.files.score_file(str(text), true="y", pred="p", ignore_index=np.int64(10))
