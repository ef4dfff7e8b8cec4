"""Arrow columns reach NumPy without pyarrow's pandas bridge.

``pyarrow.Array.to_numpy`` imports pandas at its first call when pandas is
installed (about 0.2 s of a fresh command-line run).  The file readers read
fixed-width numbers and booleans from the arrays' own buffers instead; the
values, dtypes and null masks must equal ``to_numpy`` and ``is_null`` for
every number type, with nulls, on sliced arrays (a non-zero offset) and on
chunked arrays.
"""

import subprocess
import sys

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import fastkappa as fk  # noqa: E402
from fastkappa._file_columns import arrow_nulls, arrow_numpy  # noqa: E402

TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
         "float32", "float64", "bool"]


def _same(x: np.ndarray, y: np.ndarray) -> bool:
    if x.dtype != y.dtype:
        return False
    if x.dtype.kind == "f":
        return np.array_equal(x, y, equal_nan=True)
    if x.dtype == object:
        return list(x) == list(y)
    return np.array_equal(x, y)


@pytest.mark.parametrize("offset", [0, 3, 13])
@pytest.mark.parametrize("nulls", [False, True])
@pytest.mark.parametrize("type_name", TYPES)
def test_values_and_nulls_equal_pyarrow(type_name, nulls, offset):
    rng = np.random.default_rng(len(type_name) * 31 + offset + nulls)
    t = pa.type_for_alias(type_name)
    raw = rng.integers(0, 100, 60)
    if type_name == "bool":
        values = [bool(v % 2) for v in raw]
    elif type_name.startswith("float"):
        values = [float(v) / 4 for v in raw]
    else:
        values = [int(v) for v in raw]
    null = rng.random(60) < 0.3 if nulls else np.zeros(60, dtype=bool)
    arr = pa.array([None if m else v for v, m in zip(values, null, strict=True)],
                   type=t).slice(offset, 40)
    assert _same(arrow_numpy(arr), arr.to_numpy(zero_copy_only=False))
    mask = arrow_nulls(arr)
    expected = arr.is_null().to_numpy(zero_copy_only=False)
    if expected.any():
        np.testing.assert_array_equal(mask, expected)
    else:
        assert mask is None
    chunked = pa.chunked_array([arr, arr.slice(5)])
    assert _same(arrow_numpy(chunked), chunked.to_numpy())


def test_empty_and_all_null_arrays():
    assert arrow_numpy(pa.array([], pa.int64())).dtype == np.int64
    out = arrow_numpy(pa.array([None, None], pa.int32()))
    assert out.dtype == np.float64 and np.isnan(out).all()
    np.testing.assert_array_equal(arrow_nulls(pa.array([None, 1], pa.int8())), [True, False])
    assert arrow_numpy(pa.array(["a", "b"])).tolist() == ["a", "b"]  # through to_numpy


def test_fill_and_dictionary_arrays():
    arr = pa.array([1, None, 3, None], pa.int16()).slice(1)
    out = arrow_numpy(arr, fill=0)
    assert out.dtype == np.int16 and out.tolist() == [0, 3, 0]
    flags = pa.array([True, None, False, True], pa.bool_())
    assert arrow_numpy(flags, fill=False).tolist() == [True, False, False, True]
    words = pa.array(["a", None, "b", "a", None, "c"]).dictionary_encode().slice(1, 4)
    np.testing.assert_array_equal(arrow_nulls(words),
                                  words.is_null().to_numpy(zero_copy_only=False))
    assert arrow_numpy(words.indices, fill=-1).tolist() == [-1, 1, 0, -1]
    # a null inside the dictionary itself is null in the rows that point at it
    d = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, 1], pa.int32()),
                                       pa.array(["x", None, "z"]))
    assert arrow_nulls(d).tolist() == [False, True, False, True]


CHILD = """
import runpy, sys
sys.argv = ["fastkappa", "score", sys.argv[1], "--true", "y", "--pred", "p",
            "--format", "json", "--nan-policy", "omit"]
try:
    runpy.run_module("fastkappa", run_name="__main__")
except SystemExit as e:
    assert not e.code, e.code
sys.stderr.write(f"pandas-imported {'pandas' in sys.modules}\\n")
"""


def test_scoring_a_parquet_file_does_not_import_pandas(tmp_path):
    pytest.importorskip("pandas")  # installed with the test extras: the check can fail
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, 5000)
    p = np.clip(y + rng.integers(-1, 2, 5000), 0, 4).astype(np.int32)
    p_null = pa.array(p, mask=rng.random(5000) < 0.01)
    path = tmp_path / "scores.parquet"
    pq.write_table(pa.table({"y": y, "p": p_null}), path, row_group_size=1000)
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True,
                         text=True, timeout=300)
    assert "pandas-imported False" in out.stderr, out.stderr
    assert '"n_rows"' in out.stdout or "kappa" in out.stdout


@pytest.mark.parametrize("index_type", ["uint8", "uint16", "uint32", "uint64", "int8"])
def test_dictionary_labels_with_unsigned_indices_and_nulls(tmp_path, index_type):
    """Parquet keeps a dictionary's unsigned index type (polars categoricals use
    uint32); a null label there used to end in an OverflowError traceback."""
    from fastkappa import agreement_files, files

    words = pa.array(["mild", "none", "severe"])
    t_idx = [0, 0, 1, None, 2, 2, 1, 0, 2, 1, 0, 0, 1, 1]
    p_idx = [0, 1, 1, 2, 2, 0, None, 1, 2, 1, 0, 2, 1, 0]
    it = pa.type_for_alias(index_type)
    table = pa.table({
        "t": pa.DictionaryArray.from_arrays(pa.array(t_idx, it), words),
        "p": pa.DictionaryArray.from_arrays(pa.array(p_idx, it), words),
        "item": pa.array(np.repeat(np.arange(7), 2)),
        "rater": pa.array([0, 1] * 7),
    })
    path = tmp_path / "dict.parquet"
    pq.write_table(table, path)
    assert pq.read_table(path).column("t").type.index_type == it
    res = files.score_file(str(path), true="t", pred="p", nan_policy="omit")
    keep = [i for i in range(14) if t_idx[i] is not None and p_idx[i] is not None]
    names = words.to_pylist()
    want = fk.cohen_kappa([names[t_idx[i]] for i in keep], [names[p_idx[i]] for i in keep])
    assert res == pytest.approx(want, abs=1e-12)
    ag = agreement_files.agreement_file(str(path), item="item", rater="rater", label="t")
    ratings = [[names[t_idx[2 * j]] if t_idx[2 * j] is not None else None,
                names[t_idx[2 * j + 1]] if t_idx[2 * j + 1] is not None else None]
               for j in range(7)]
    ref = fk.agreement(np.array(ratings, dtype=object), coefficients="fleiss_kappa")
    assert ag["fleiss_kappa"].estimate == pytest.approx(ref["fleiss_kappa"].estimate,
                                                        abs=1e-12)
