"""Every kernel body run as plain Python (NUMBA_DISABLE_JIT=1), on small data.

This reaches the code inside the kernels that compiled runs hide from
Python-level tools, and checks that it computes the same point estimates.
Random streams differ without the JIT, so intervals are only checked to be
well formed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np

SCRIPT = textwrap.dedent("""
    import json, warnings
    import numpy as np
    import fastkappa as fk
    warnings.simplefilter("ignore", RuntimeWarning)
    rng = np.random.default_rng(0)
    n = 300
    y = rng.integers(0, 4, n)
    a = np.where(rng.random(n) < 0.7, y, rng.integers(0, 4, n))
    b = np.where(rng.random(n) < 0.5, y, rng.integers(0, 4, n))
    g = rng.integers(0, 3, n)
    w = rng.random(n)
    ids = np.arange(n) // 2
    out = {
        "unweighted": fk.cohen_kappa(y, a),
        "quadratic_declared": fk.cohen_kappa(y.astype(np.int8), a.astype(np.int8),
                                              weights="quadratic", n_classes=4),
        "quadratic_wide": fk.cohen_kappa(y, a, weights="quadratic", labels=[0, 1, 2, 3]),
        "weighted": fk.cohen_kappa(y, a, weights="linear", sample_weight=w),
        "strings": fk.cohen_kappa(np.array(list("abcd"))[y], np.array(list("abcd"))[a]),
        "confusion": fk.confusion_matrix(y, a).tolist(),
        "confusion_gaps": fk.confusion_matrix(3 * y, 3 * a).tolist(),  # through the LUTs
        "groups": fk.kappa_by_group(y, a, g).estimate.tolist(),
        "groups_weighted": fk.kappa_by_group(y, a, g, sample_weight=w).estimate.tolist(),
        "thresholds": fk.optimize_thresholds(y, y + rng.normal(0, 0.6, n)).tolist(),
        # 700 classes on 300 rows: summed without a (K, K) table
        "table_free": fk.cohen_kappa(y, a, n_classes=700, weights="linear"),
        "table_free_weighted": fk.cohen_kappa(3 * y, 3 * a, n_classes=700, sample_weight=w),
        "counted": fk.confusion_matrix(y, a, frequency_weight=ids % 3).tolist(),
        "table_free_counted": fk.cohen_kappa(y, a, n_classes=700, frequency_weight=ids % 3),
    }
    intervals = [
        fk.kappa_ci(y, a, n_resamples=50, seed=0),
        fk.kappa_ci(y, a, n_resamples=50, seed=0, method="percentile", clusters=ids),
        fk.kappa_ci(y, a, n_resamples=50, seed=0, method="basic", sample_weight=w),
    ]
    cmp = fk.compare(y, {"a": a, "b": b}, n_resamples=50, seed=0)
    out["estimates"] = [r.estimate for r in intervals] + [cmp.pairs[0].difference]
    out["ordered"] = all(r.low <= r.estimate <= r.high for r in intervals) and (
        cmp.pairs[0].low <= cmp.pairs[0].difference <= cmp.pairs[0].high)
    print(json.dumps(out))
""")


def _run(disable_jit: bool) -> dict:
    env = dict(os.environ, NUMBA_DISABLE_JIT="1" if disable_jit else "0")
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, check=True, timeout=600)
    return json.loads(proc.stdout)


def test_kernels_as_plain_python_give_the_compiled_results():
    plain = _run(True)
    compiled = _run(False)
    assert plain["ordered"] and compiled["ordered"]
    for key, value in compiled.items():
        if key == "ordered":
            continue
        np.testing.assert_allclose(plain[key], value, rtol=0, atol=1e-12, err_msg=key)
