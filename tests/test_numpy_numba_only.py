"""The core API runs with numpy and numba alone (the only hard dependencies).

A subprocess installs a meta-path finder that refuses every optional
dependency (pandas, pyarrow, polars, scipy, matplotlib, scikit-learn, dask,
torch, ...), then runs the core entry points on small data.  Any import of
those libraries, direct or through a third package, fails the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

BLOCKED = ("pandas", "pyarrow", "polars", "scipy", "matplotlib", "sklearn", "dask",
           "distributed", "torch", "statsmodels", "tqdm", "lightgbm", "xgboost")

BLOCKER = textwrap.dedent("""
    import sys

    BLOCKED = set({blocked!r})

    class Blocker:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{{name}} is blocked: fastkappa must run on numpy + numba")
            return None

    sys.meta_path.insert(0, Blocker())
""")

SCRIPT = textwrap.dedent("""
    import json
    import warnings

    import numpy as np

    import fastkappa as fk

    warnings.simplefilter("error")
    rng = np.random.default_rng(0)
    n = 400
    y = rng.integers(0, 4, n)
    a = np.where(rng.random(n) < 0.7, y, rng.integers(0, 4, n))
    b = np.where(rng.random(n) < 0.5, y, rng.integers(0, 4, n))
    g = rng.integers(0, 3, n)
    scores = y + rng.normal(0, 0.6, n)
    out = {}
    out["kappa"] = fk.cohen_kappa(y, a, weights="quadratic")
    out["kappa_strings"] = fk.cohen_kappa(np.array(list("abcd"))[y], np.array(list("abcd"))[a])
    out["ci"] = [fk.kappa_ci(y, a, method=m, n_resamples=200, seed=0).estimate
                 for m in ("bca", "percentile", "basic", "asymptotic")]
    cmp = fk.compare(y, {"a": a, "b": b}, n_resamples=200, seed=0, p_adjust="holm")
    out["compare"] = cmp.pairs[0].difference
    out["compare_text"] = str(cmp)
    out["groups"] = fk.kappa_by_group(y, a, g, method="percentile", n_resamples=100,
                                      seed=0).estimate.tolist()
    acc = fk.CohenKappa(n_classes=4, weights="quadratic")
    acc.update(y[:200], a[:200]).update(y[200:], a[200:])
    out["stream"] = acc.compute()
    out["stream_ci"] = acc.ci(method="asymptotic").estimate
    out["cuts"] = np.asarray(fk.optimize_thresholds(y, scores, n_classes=4)).tolist()
    opt = fk.ThresholdOptimizer(n_classes=4).fit(y, scores)
    out["optimizer"] = float(opt.qwk_)
    ratings = np.stack([y, a, b], axis=1)
    agr = fk.agreement(ratings, n_classes=4)
    out["agreement"] = {row.coefficient: row.estimate for row in agr.rows}
    out["fleiss"] = fk.fleiss_kappa(ratings, n_classes=4)
    import sys
    out["loaded"] = sorted({m.split(".")[0] for m in sys.modules})
    print(json.dumps(out))
""")


def _run(block: bool) -> dict:
    code = (BLOCKER.format(blocked=BLOCKED) if block else "") + SCRIPT
    proc = subprocess.run([sys.executable, "-c", code], env=dict(os.environ),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_blocker_refuses_the_optional_libraries():
    """The blocker works: importing one of the blocked libraries fails under it."""
    code = BLOCKER.format(blocked=BLOCKED) + "import scipy.stats\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0
    assert "scipy.stats is blocked" in proc.stderr or "scipy is blocked" in proc.stderr


@pytest.mark.timeout(1800)
def test_core_api_runs_on_numpy_and_numba_alone():
    blocked = _run(block=True)
    assert not set(blocked.pop("loaded")) & set(BLOCKED)
    free = _run(block=False)
    free.pop("loaded")
    # the same numbers as in a normal environment
    assert blocked.pop("compare_text") == free.pop("compare_text")
    for key, value in free.items():
        if isinstance(value, dict):
            assert blocked[key].keys() == value.keys(), key
            np.testing.assert_allclose(list(blocked[key].values()), list(value.values()),
                                       rtol=1e-12, err_msg=key)
        else:
            np.testing.assert_allclose(blocked[key], value, rtol=1e-12, err_msg=key)
