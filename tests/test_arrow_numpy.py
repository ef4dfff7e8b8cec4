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
