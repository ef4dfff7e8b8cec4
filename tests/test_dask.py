"""fastkappa.dask on a real LocalCluster with worker processes."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

import dask.array as da  # noqa: E402

import fastkappa as fk  # noqa: E402
import fastkappa.dask as fkd  # noqa: E402


@pytest.fixture(scope="module")
def client():
    # a random dashboard port: with None, distributed tries 8787 first, and a busy
    # port leaves an unclosed socket behind (a ResourceWarning, an error here)
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=":0", memory_limit="1GiB")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    n = 20_000
    t = rng.integers(0, 5, n)
    p = np.clip(t + rng.integers(-2, 3, n), 0, 4)
    site = rng.choice(["a", "b", "c", "d"], n)
    patient = np.arange(n) // 2
    w = rng.random(n)
    frame = pd.DataFrame({"t": t, "p": p, "site": site, "patient": patient, "w": w})
    return frame, dd.from_pandas(frame, npartitions=6)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_dataframe_matches_in_memory(client, data, weights):
    frame, ddf = data
    got = fkd.cohen_kappa(ddf.t, ddf.p, weights=weights)
    assert got == fk.cohen_kappa(frame.t, frame.p, weights=weights)


def test_cohen_kappa_arrays_rechunked(client, data):
    frame, _ = data
    t = da.from_array(frame.t.to_numpy(), chunks=3000)
    p = da.from_array(frame.p.to_numpy(), chunks=7000)
    assert fkd.cohen_kappa(t, p, weights="quadratic", n_classes=6) == fk.cohen_kappa(
        frame.t, frame.p, weights="quadratic", n_classes=6)
    # a NumPy side is chunked like the dask one
    assert fkd.cohen_kappa(t, frame.p.to_numpy()) == fk.cohen_kappa(frame.t, frame.p)


def test_confusion_matrix_matches_in_memory(client, data):
    frame, ddf = data
    np.testing.assert_array_equal(fkd.confusion_matrix(ddf.t, ddf.p),
                                  fk.confusion_matrix(frame.t, frame.p))
    got = fkd.confusion_matrix(ddf.t, ddf.p, sample_weight=ddf.w, labels=[4, 3, 2, 1, 0])
    np.testing.assert_allclose(got, fk.confusion_matrix(
        frame.t, frame.p, sample_weight=frame.w, labels=[4, 3, 2, 1, 0]), rtol=1e-12)


def test_cohen_kappa_strings_learned_across_partitions(client):
    # each partition holds different classes: the merge aligns the label sets
    words = np.array(["ant", "bee", "cat", "dog", "eel"], dtype=object)
    rng = np.random.default_rng(3)
    t = np.sort(words[rng.integers(0, 5, 3000)])
    p = words[rng.integers(0, 5, 3000)]
    frame = pd.DataFrame({"t": t, "p": p})
    ddf = dd.from_pandas(frame, npartitions=5, sort=False)
    assert fkd.cohen_kappa(ddf.t, ddf.p) == pytest.approx(fk.cohen_kappa(t, p), rel=1e-12)
    acc = fkd.accumulate(ddf.t, ddf.p)
    assert acc.labels.tolist() == sorted(set(t) | set(p))


def test_kappa_ci_iid_matches_in_memory(client, data):
    frame, ddf = data
    for method in ("bca", "asymptotic"):
        got = fkd.kappa_ci(ddf.t, ddf.p, weights="quadratic", method=method,
                           n_resamples=500, seed=4)
        want = fk.kappa_ci(frame.t, frame.p, weights="quadratic", method=method,
                           n_resamples=500, seed=4)
        assert (got.estimate, got.low, got.high) == pytest.approx(
            (want.estimate, want.low, want.high), rel=1e-12)


def test_kappa_ci_clusters_matches_in_memory(client, data):
    frame, ddf = data
    got = fkd.kappa_ci(ddf.t, ddf.p, weights="quadratic", clusters=ddf.patient,
                       n_resamples=400, seed=9)
    want = fk.kappa_ci(frame.t, frame.p, weights="quadratic", clusters=frame.patient,
                       n_resamples=400, seed=9)
    assert (got.estimate, got.low, got.high, got.standard_error) == pytest.approx(
        (want.estimate, want.low, want.high, want.standard_error), rel=1e-12)
    # a cluster split across partitions is one cluster
    t = da.from_array(frame.t.to_numpy(), chunks=3333)
    p = da.from_array(frame.p.to_numpy(), chunks=3333)
    c = da.from_array(frame.patient.to_numpy(), chunks=3333)
    got = fkd.kappa_ci(t, p, weights="quadratic", clusters=c, method="asymptotic")
    want = fk.kappa_ci(frame.t, frame.p, weights="quadratic", clusters=frame.patient,
                       method="asymptotic")
    assert got.standard_error == pytest.approx(want.standard_error, rel=1e-12)


def test_kappa_by_group_matches_in_memory(client, data):
    frame, ddf = data
    got = fkd.kappa_by_group(ddf.t, ddf.p, ddf.site, weights="linear", method="bca",
                             seed=np.random.SeedSequence(2), n_resamples=300)
    want = fk.kappa_by_group(frame.t, frame.p, frame.site, weights="linear", method="bca",
                             seed=2, n_resamples=300)
    assert got.seed == want.seed == 2
    assert got.groups.tolist() == want.groups.tolist()
    np.testing.assert_allclose(got.estimate, want.estimate, rtol=1e-12)
    np.testing.assert_array_equal(got.n_rows, want.n_rows)
    np.testing.assert_allclose(got.low, want.low, rtol=1e-12)
    np.testing.assert_allclose(got.high, want.high, rtol=1e-12)
    np.testing.assert_array_equal(got.confusion, want.confusion)
    assert got.overall == pytest.approx(want.overall, rel=1e-12)


def test_kappa_by_group_weighted_rows(client, data):
    frame, ddf = data
    got = fkd.kappa_by_group(ddf.t, ddf.p, ddf.site, sample_weight=ddf.w)
    want = fk.kappa_by_group(frame.t, frame.p, frame.site, sample_weight=frame.w)
    np.testing.assert_allclose(got.estimate, want.estimate, rtol=1e-10)
    np.testing.assert_allclose(got.n_rows, want.n_rows, rtol=1e-12)
    with pytest.raises(ValueError, match="per-group intervals with `sample_weight`"):
        fkd.kappa_by_group(ddf.t, ddf.p, ddf.site, sample_weight=ddf.w, method="bca")


def test_dask_takes_the_input_keywords(client, data):
    frame, ddf = data
    t = frame.t.where(frame.index % 7 != 0, -1)
    p = frame.p.astype(float).where(frame.index % 11 != 0)
    other = dd.from_pandas(pd.DataFrame({"t": t, "p": p, "w": frame.w}), npartitions=6)
    kw = {"ignore_index": -1, "nan_policy": "omit"}
    assert fkd.cohen_kappa(other.t, other.p, weights="linear", **kw) == pytest.approx(
        fk.cohen_kappa(t, p, weights="linear", **kw), rel=1e-12)
    np.testing.assert_array_equal(fkd.confusion_matrix(other.t, other.p, **kw),
                                  fk.confusion_matrix(t, p, **kw))
    with pytest.raises(ValueError, match="nan_policy='omit'"):
        fkd.cohen_kappa(other.t, other.p, ignore_index=-1)
    scores = dd.from_pandas(pd.DataFrame({"t": frame.t, "s": frame.p + 0.3}), npartitions=6)
    cuts = [0.5, 1.5, 2.5, 3.5]
    assert fkd.cohen_kappa(scores.t, scores.s, thresholds=cuts) == pytest.approx(
        fk.cohen_kappa(frame.t, frame.p + 0.3, thresholds=cuts), rel=1e-12)
    got = fkd.kappa_ci(other.t, other.p, sample_weight=other.w, method="asymptotic", **kw)
    want = fk.kappa_ci(t, p, sample_weight=frame.w, method="asymptotic", **kw)
    assert (got.estimate, got.standard_error) == pytest.approx(
        (want.estimate, want.standard_error), rel=1e-10)
    res = fkd.kappa_by_group(other.t, other.p, ddf.site, method="percentile", seed=3,
                             n_resamples=200, **kw)
    ref = fk.kappa_by_group(t, p, frame.site, method="percentile", seed=3, n_resamples=200,
                            **kw)
    np.testing.assert_allclose(res.estimate, ref.estimate, rtol=1e-12)
    np.testing.assert_allclose(res.low, ref.low, rtol=1e-12)


def _with_missing(frame, column: str, dtype: str, rows: list[int]):
    """``frame`` with pd.NA in ``column`` at ``rows``, in memory and as 6 partitions."""
    values = pd.array(frame[column].to_numpy(), dtype=dtype)
    values[rows] = pd.NA
    with_na = frame.assign(**{column: values})
    return with_na, dd.from_pandas(with_na, npartitions=6)


def test_dask_kappa_by_group_missing_group_ids_follow_nan_policy(client, data):
    with_na, ddf = _with_missing(data[0], "site", "string", [3, 9000])
    with pytest.raises(ValueError, match=r"`groups` is missing .* on 2 rows; pass "
                                         r"nan_policy='omit'"):
        fkd.kappa_by_group(ddf.t, ddf.p, ddf.site)
    got = fkd.kappa_by_group(ddf.t, ddf.p, ddf.site, nan_policy="omit")
    want = fk.kappa_by_group(with_na.t, with_na.p, with_na.site, nan_policy="omit")
    assert got.groups.tolist() == want.groups.tolist()
    np.testing.assert_allclose(got.estimate, want.estimate, rtol=1e-12)
    np.testing.assert_array_equal(got.n_rows, want.n_rows)
    with pytest.warns(FutureWarning, match="`ci` is deprecated"):
        fkd.kappa_by_group(ddf.t, ddf.p, ddf.site, nan_policy="omit", ci="asymptotic")
    with pytest.raises(ValueError, match="`seed` must be None, a non-negative int"):
        fkd.kappa_by_group(ddf.t, ddf.p, ddf.site, seed=-1)


def test_dask_kappa_ci_missing_cluster_ids_follow_nan_policy(client, data):
    with_na, ddf = _with_missing(data[0], "patient", "Int64", [5, 12_000])
    with pytest.raises(ValueError, match=r"`clusters` holds 2 rows with a missing id.*"
                                         r"nan_policy='omit'"):
        fkd.kappa_ci(ddf.t, ddf.p, clusters=ddf.patient, method="asymptotic")
    got = fkd.kappa_ci(ddf.t, ddf.p, clusters=ddf.patient, method="asymptotic",
                       nan_policy="omit")
    want = fk.kappa_ci(with_na.t, with_na.p, clusters=with_na.patient, method="asymptotic",
                       nan_policy="omit")
    assert (got.estimate, got.standard_error) == pytest.approx(
        (want.estimate, want.standard_error), rel=1e-12)


def test_dask_errors(client, data):
    frame, ddf = data
    with pytest.raises(ValueError, match="outside the declared classes"):
        fkd.cohen_kappa(ddf.t, ddf.p, n_classes=3)
    with pytest.raises(TypeError, match="takes dask arrays or dask DataFrame columns"):
        fkd.cohen_kappa(frame.t.to_numpy(), frame.p.to_numpy())
    other = dd.from_pandas(frame, npartitions=3)
    with pytest.raises(ValueError, match="have 6 and 3 partitions"):
        fkd.cohen_kappa(ddf.t, other.p)
    with pytest.raises(TypeError, match="is a dask DataFrame column but `y_pred` is"):
        fkd.cohen_kappa(ddf.t, da.from_array(frame.p.to_numpy()))
    with pytest.raises(ValueError, match="same length"):
        fkd.cohen_kappa(da.arange(10), da.arange(11))
    with pytest.raises(ValueError, match="'quad'"):
        fkd.cohen_kappa(ddf.t, ddf.p, weights="quad")


def test_dask_missing_names_the_extra():
    code = ("import sys; sys.modules['dask'] = None\n"
            "try:\n    import fastkappa.dask\n"
            "except ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert 'pip install "fastkappa[dask]"' in out.stdout
    assert 'pip install -e ".[dask]"' in out.stdout


def test_import_fastkappa_does_not_import_dask():
    code = "import sys, fastkappa; print('dask' in sys.modules, 'fastkappa.dask' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.split() == ["False", "False"]


def test_one_column_frames_and_empty_partitions():
    # a one-column DataFrame is that column, as in memory; no row left is said plainly
    rng = np.random.default_rng(12)
    df = pd.DataFrame({"t": rng.integers(0, 3, 120), "p": rng.integers(0, 3, 120),
                       "g": rng.choice(["a", "b"], 120)})
    ddf = dd.from_pandas(df, npartitions=4)
    assert fkd.cohen_kappa(ddf[["t"]], ddf[["p"]]) == fk.cohen_kappa(df[["t"]], df[["p"]])
    with pytest.raises(ValueError, match="a dask DataFrame with 2 columns; pass one column"):
        fkd.cohen_kappa(ddf[["t", "g"]], ddf.p)
    empty = ddf[ddf.g == "none"]
    with pytest.raises(ValueError, match="no row to score: every partition"):
        fkd.cohen_kappa(empty.t, empty.p)


def test_a_partition_of_zero_weights_scores_as_in_memory(client, data):
    # a partition whose rows all weigh 0 adds its classes and no weight
    frame, _ = data
    frame = frame.assign(w=np.where(np.arange(len(frame)) < len(frame) // 3, 0.0, frame.w))
    ddf = dd.from_pandas(frame, npartitions=6)
    got = fkd.cohen_kappa(ddf.t, ddf.p, sample_weight=ddf.w, weights="quadratic")
    assert got == pytest.approx(fk.cohen_kappa(frame.t, frame.p, sample_weight=frame.w,
                                               weights="quadratic"), rel=1e-12)


# --------------------------------------------------------------------------- found by review

def _categorical_frame(dtype):
    t = [0, 0, 1, 1, 3, 3, 3, 1]
    p = [0, 1, 1, 3, 3, 1, 3, 0]
    names = list(dtype.categories)
    if isinstance(names[0], str):
        t, p = [names[min(v, 3)] for v in t], [names[min(v, 3)] for v in p]
    return pd.DataFrame({"t": pd.Series(t, dtype=dtype), "p": pd.Series(p, dtype=dtype),
                         "c": [0, 0, 1, 1, 2, 2, 3, 3], "g": list("aabbaabb")})


@pytest.mark.parametrize("categories", [[0, 1, 2, 3], ["none", "mild", "moderate", "severe"]])
@pytest.mark.filterwarnings("ignore::fastkappa.DegenerateIntervalWarning")
def test_ordered_categoricals_declare_the_classes_on_every_path(categories):
    # class 2 / "moderate" is declared but unused: in memory it is a class of the
    # weighted scale; the rows the partitions send must not lose it
    from sklearn.metrics import cohen_kappa_score

    frame = _categorical_frame(pd.CategoricalDtype(categories, ordered=True))
    ddf = dd.from_pandas(frame, npartitions=2)
    codes_t, codes_p = frame.t.cat.codes, frame.p.cat.codes
    want = cohen_kappa_score(codes_t, codes_p, weights="quadratic", labels=[0, 1, 2, 3])
    for kw in ({"clusters": "c"}, {"sample_weight": "c"}):
        name, col = next(iter(kw.items()))
        mem = fk.kappa_ci(frame.t, frame.p, weights="quadratic", method="asymptotic",
                          **{name: frame[col] + (name == "sample_weight")})
        got = fkd.kappa_ci(ddf.t, ddf.p, weights="quadratic", method="asymptotic",
                           **{name: ddf[col] + (name == "sample_weight")})
        assert got.estimate == pytest.approx(mem.estimate, abs=1e-12)
        assert (got.low, got.high) == pytest.approx((mem.low, mem.high), abs=1e-12)
    assert fkd.kappa_ci(ddf.t, ddf.p, weights="quadratic", clusters=ddf.c,
                        method="asymptotic").estimate == pytest.approx(want, abs=1e-12)
    mem = fk.kappa_by_group(frame.t, frame.p, frame.g, weights="quadratic")
    got = fkd.kappa_by_group(ddf.t, ddf.p, ddf.g, weights="quadratic")
    np.testing.assert_allclose(got.estimate, mem.estimate, atol=1e-12)
    a = frame.g == "a"
    assert got.estimate[0] == pytest.approx(cohen_kappa_score(
        codes_t[a], codes_p[a], weights="quadratic", labels=[0, 1, 2, 3]), abs=1e-12)


@pytest.mark.filterwarnings("ignore::fastkappa.DegenerateIntervalWarning")
def test_ordered_categoricals_with_different_categories_refused():
    frame = _categorical_frame(pd.CategoricalDtype([0, 1, 2, 3], ordered=True))
    frame["p"] = frame.p.cat.set_categories([0, 1, 3, 2])
    ddf = dd.from_pandas(frame, npartitions=2)
    with pytest.raises(ValueError, match="ordered categoricals with different categories"):
        fkd.kappa_ci(ddf.t, ddf.p, clusters=ddf.c, method="asymptotic")


@pytest.mark.parametrize("kw", [{"n_classes": 3}, {}, {"labels": [0, 1, 2]}])
@pytest.mark.parametrize("rows", ["clusters", "sample_weight", "frequency_weight"])
@pytest.mark.filterwarnings("ignore::fastkappa.DegenerateIntervalWarning")
def test_kappa_ci_rows_with_probability_predictions(kw, rows):
    # (n, K) scores with clusters or row weights: each partition sends the argmax
    rng = np.random.default_rng(0)
    t = np.array([0, 2, 0, 2, 1, 2, 0, 1, 2, 0, 1, 1])
    scores = rng.random((12, 3))
    scores /= scores.sum(axis=1, keepdims=True)
    extra = {"clusters": np.arange(12) // 2, "sample_weight": np.arange(12) % 3 + 1.0,
             "frequency_weight": np.arange(12) % 3 + 1}[rows]
    mem = fk.kappa_ci(t, scores, method="bca", seed=0, n_resamples=200, **{rows: extra}, **kw)
    got = fkd.kappa_ci(da.from_array(t, chunks=5), da.from_array(scores, chunks=(5, 3)),
                       method="bca", seed=0, n_resamples=200,
                       **{rows: da.from_array(extra, chunks=5)}, **kw)
    assert got.estimate == pytest.approx(mem.estimate, abs=1e-12)
    assert got.estimate == pytest.approx(fk.cohen_kappa(t, scores.argmax(axis=1),
                                                        **({rows: extra} if rows != "clusters"
                                                           else {})), abs=1e-12)


@pytest.mark.filterwarnings("ignore::fastkappa.DegenerateIntervalWarning")
def test_probability_predictions_with_partitions_lacking_classes():
    """(n, K) scores with undeclared classes: the K columns name the classes y_true
    holds over all partitions, as in memory, even when a partition lacks some
    (sorted labels); a count other than K is the in-memory error."""
    rng = np.random.default_rng(3)
    t = np.sort(rng.integers(0, 4, 60)).astype(float)
    t[[5, 40]] = -1  # ignored rows
    scores = rng.random((60, 4))
    scores[np.arange(60), np.maximum(t, 0).astype(int)] += 0.8
    g = np.arange(60) % 3
    T, S, G = (da.from_array(t, chunks=15), da.from_array(scores, chunks=(15, 4)),
               da.from_array(g, chunks=15))
    kw = {"weights": "quadratic", "ignore_index": -1}
    assert fkd.cohen_kappa(T, S, **kw) == pytest.approx(fk.cohen_kappa(t, scores, **kw),
                                                        abs=1e-12)
    np.testing.assert_array_equal(fkd.confusion_matrix(T, S, ignore_index=-1),
                                  fk.confusion_matrix(t, scores, ignore_index=-1))
    for extra in ({}, {"clusters": g}, {"frequency_weight": g + 1}):
        mem = fk.kappa_ci(t, scores, method="bca", seed=0, n_resamples=200, **extra, **kw)
        got = fkd.kappa_ci(T, S, method="bca", seed=0, n_resamples=200, **kw,
                           **{k: da.from_array(v, chunks=15) for k, v in extra.items()})
        assert (got.estimate, got.low, got.high) == pytest.approx(
            (mem.estimate, mem.low, mem.high), abs=1e-12)
    by = fkd.kappa_by_group(T, S, G, **kw)
    np.testing.assert_allclose(by.estimate, fk.kappa_by_group(t, scores, g, **kw).estimate,
                               atol=1e-12)
    with pytest.raises(ValueError, match="has 5 columns but the sorted classes observed"):
        fkd.cohen_kappa(T, da.from_array(rng.random((60, 5)), chunks=(15, 5)), **kw)


@pytest.mark.filterwarnings("ignore::fastkappa.DegenerateIntervalWarning")
def test_partitions_whose_rows_all_drop_are_empty():
    # torchmetrics' rule: a batch whose rows are all ignored adds nothing
    t = np.array([0, 1, 2, 1, -1, -1, -1, -1, 2, 0, 1, 2.0])
    p = np.array([0, 1, 1, 1, 0, 2, 1, 0, 2, 0, 2, 2.0])
    g = np.arange(12) % 2
    dt, dp, dg = (da.from_array(x, chunks=4) for x in (t, p, g))
    want = fk.cohen_kappa(t, p, ignore_index=-1)
    assert fkd.cohen_kappa(dt, dp, ignore_index=-1) == pytest.approx(want, abs=1e-12)
    assert fkd.kappa_ci(dt, dp, ignore_index=-1, method="asymptotic").estimate == \
        pytest.approx(want, abs=1e-12)
    assert fkd.kappa_ci(dt, dp, ignore_index=-1, clusters=dg, method="asymptotic").estimate \
        == pytest.approx(want, abs=1e-12)
    np.testing.assert_allclose(fkd.kappa_by_group(dt, dp, dg, ignore_index=-1).estimate,
                               fk.kappa_by_group(t, p, g, ignore_index=-1).estimate)
    t_nan = np.where(t < 0, np.nan, t)
    assert fkd.cohen_kappa(da.from_array(t_nan, chunks=4), dp, nan_policy="omit") == \
        pytest.approx(want, abs=1e-12)


@pytest.mark.filterwarnings("ignore::fastkappa.UndefinedKappaWarning")
def test_groups_of_dropped_partitions_are_listed_and_missing_values_raise():
    t = np.array([-1, -1, 0, 1, 1, 0])
    p = np.array([-1, 0, 0, 1, 1, 1])
    g = np.array(["z", "z", "a", "a", "b", "b"])
    dt, dp, dg = (da.from_array(x, chunks=2) for x in (t, p, g))
    mem = fk.kappa_by_group(t, p, g, ignore_index=-1)
    got = fkd.kappa_by_group(dt, dp, dg, ignore_index=-1)
    assert got.groups.tolist() == mem.groups.tolist() == ["a", "b", "z"]
    np.testing.assert_array_equal(got.n_rows, mem.n_rows)
    np.testing.assert_allclose(got.estimate, mem.estimate)
    with pytest.raises(ValueError, match="no rows left to score"):
        fkd.kappa_by_group(dt[:2], dp[:2], dg[:2], ignore_index=-1)
    # a partition of missing rows is an error under nan_policy='raise', as in memory
    tn = np.array([np.nan, np.nan, 0, 1, 2, 1])
    pn = np.array([np.nan, np.nan, 0, 1, 1, 1])
    for f in (fkd.cohen_kappa, fkd.confusion_matrix):
        with pytest.raises(ValueError, match="hold a missing value"):
            f(da.from_array(tn, chunks=2), da.from_array(pn, chunks=2))
    with pytest.raises(ValueError, match="hold a missing value"):
        fkd.kappa_by_group(da.from_array(tn, chunks=2), da.from_array(pn, chunks=2),
                           da.from_array(np.array([0, 0, 1, 1, 1, 1]), chunks=2))


@pytest.mark.filterwarnings("ignore::fastkappa.DegenerateIntervalWarning")
def test_ordered_categoricals_whose_categories_dask_does_not_know(tmp_path):
    """``dd.read_parquet`` of an ordered categorical leaves its categories unknown
    to dask: they are read from the partitions (which must agree), so the rows and
    group paths keep the declared scale, as in memory."""
    pytest.importorskip("pyarrow")
    cat = pd.CategoricalDtype(["none", "mild", "severe"], ordered=True)
    rng = np.random.default_rng(0)
    names = np.array(cat.categories)
    frames = []
    folder = tmp_path / "graded"
    folder.mkdir()
    for part in range(3):
        t = rng.integers(0, 3, 200)
        p = np.where(rng.random(200) < 0.7, t, rng.integers(0, 3, 200))
        frame = pd.DataFrame({"t": pd.Categorical(names[t], dtype=cat),
                              "p": pd.Categorical(names[p], dtype=cat),
                              "g": rng.integers(0, 3, 200)})
        frame.to_parquet(folder / f"part{part}.parquet")
        frames.append(frame)
    ddf = dd.read_parquet(folder)
    assert not ddf.t.cat.known and ddf.npartitions == 3
    mem = pd.concat(frames, ignore_index=True)
    kw = {"weights": "quadratic"}
    np.testing.assert_allclose(fkd.kappa_by_group(ddf.t, ddf.p, ddf.g, **kw).estimate,
                               fk.kappa_by_group(mem.t, mem.p, mem.g, **kw).estimate,
                               atol=1e-12)
    got = fkd.kappa_ci(ddf.t, ddf.p, clusters=ddf.g, method="asymptotic", **kw)
    want = fk.kappa_ci(mem.t, mem.p, clusters=mem.g, method="asymptotic", **kw)
    assert (got.estimate, got.standard_error) == pytest.approx(
        (want.estimate, want.standard_error), abs=1e-12)


def test_a_dataframe_column_with_a_dask_array_is_refused_clearly():
    t = dd.from_pandas(pd.Series(np.arange(30) % 3), npartitions=3)
    scores = da.from_array(np.random.default_rng(0).random((30, 3)), chunks=(10, 3))
    with pytest.raises(TypeError, match="pass columns of one dask DataFrame"):
        fkd.cohen_kappa(t, scores)


@pytest.mark.parametrize("bad", [5.0, "x", None])
def test_replace_undefined_by_is_checked_before_the_graph_runs(bad):
    t = da.from_array(np.array([0, 0, 1, 1, 0, 0]), chunks=2)
    p = da.from_array(np.array([0, 0, 1, 0, 0, 0]), chunks=2)
    g = da.from_array(np.array([1, 1, 2, 2, 3, 3]), chunks=2)
    with pytest.raises(ValueError, match="`replace_undefined_by` must be a number"):
        fkd.kappa_by_group(t, p, g, replace_undefined_by=bad)
    with pytest.raises(ValueError, match="`replace_undefined_by` must be a number"):
        fkd.cohen_kappa(t, p, replace_undefined_by=bad)


@pytest.mark.parametrize("with_clusters", [False, True])
def test_kappa_ci_with_a_weight_per_row_equals_in_memory(with_clusters):
    # many distinct weights (the row-draw path): the same seeded interval as in memory
    rng = np.random.default_rng(0)
    n = 2000
    t = rng.integers(0, 4, n)
    p = np.clip(t + rng.integers(-1, 2, n), 0, 3)
    w = rng.exponential(1.0, n)
    cl = rng.integers(0, 300, n) if with_clusters else None
    want = fk.kappa_ci(t, p, sample_weight=w, clusters=cl, method="bca", n_resamples=300,
                       seed=0)
    got = fkd.kappa_ci(da.from_array(t, chunks=700), da.from_array(p, chunks=700),
                       sample_weight=da.from_array(w, chunks=700),
                       clusters=None if cl is None else da.from_array(cl, chunks=700),
                       method="bca", n_resamples=300, seed=0)
    assert (got.low, got.high) == (want.low, want.high)


def test_a_row_count_in_a_partition_error_says_it_is_one_partitions():
    # the first partition that fails raises: its count (1 row) is not the
    # collection's (2 rows), and the message says so
    t = np.array([0.0, 1, np.nan, 1, 0, np.nan, 1, 0])
    p = np.array([0.0, 1, 1, 1, 0, 0, 1, 0])
    with pytest.raises(ValueError, match=r"holds a missing value .*counted in one partition "
                                         r"of the Dask collection; others may hold more"):
        fkd.cohen_kappa(da.from_array(t, chunks=4), da.from_array(p, chunks=4))
    with pytest.raises(ValueError, match="counted in one partition"):
        fkd.kappa_by_group(da.from_array(t, chunks=4), da.from_array(p, chunks=4),
                           da.from_array(np.arange(8) % 2, chunks=4))


def test_ignore_index_among_declared_classes_is_refused_before_any_task(data):
    _frame, ddf = data
    clash = r"`ignore_index` is 0, one of the declared classes"
    for call in (fkd.cohen_kappa, fkd.kappa_ci):
        with pytest.raises(ValueError, match=clash):
            call(ddf.t, ddf.p, n_classes=5, ignore_index=0)
    with pytest.raises(ValueError, match=clash):
        fkd.kappa_by_group(ddf.t, ddf.p, ddf.site, labels=[0, 1, 2, 3, 4], ignore_index=0)
