"""QWK objectives for gradient boosting: gradient of 1 - continuous_qwk and a positive Hessian.

Oracles: central finite differences of ``n * (1 - fk.continuous_qwk)``
(itself checked against Lin's concordance correlation elsewhere) for the
gradient and the exact Hessian diagonal; real LightGBM and XGBoost training
runs for the call signatures and for the claim that the objective learns.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fastkappa as fk
from fastkappa.integrations import (
    continuous_qwk_gradient,
    lightgbm_eval_metric,
    lightgbm_qwk_objective,
    xgboost_qwk_objective,
)


def _loss(t, s, w=None):
    return len(t) * (1.0 - fk.continuous_qwk(t, s, sample_weight=w))


def _fd_gradient(t, s, w=None, h=1e-6):
    g = np.empty(len(s))
    for i in range(len(s)):
        up, down = s.copy(), s.copy()
        up[i] += h
        down[i] -= h
        g[i] = (_loss(t, up, w) - _loss(t, down, w)) / (2 * h)
    return g


def _fd_hessian_diag(t, s, w=None, h=1e-4):
    base = _loss(t, s, w)
    out = np.empty(len(s))
    for i in range(len(s)):
        up, down = s.copy(), s.copy()
        up[i] += h
        down[i] -= h
        out[i] = (_loss(t, up, w) - 2 * base + _loss(t, down, w)) / (h * h)
    return out


def _data(seed, n=40, noise=1.0, shift=0.0):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 5, n).astype(float)
    s = t * 0.7 + rng.normal(shift, noise, n)
    return t, s, rng.uniform(0.2, 3.0, n)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize(("noise", "shift"), [(0.3, 0.0), (1.0, 1.0), (5.0, -2.0)])
def test_gradient_matches_finite_differences(weighted, noise, shift):
    t, s, w = _data(1, noise=noise, shift=shift)
    w = w if weighted else None
    g, h = continuous_qwk_gradient(t, s, w)
    np.testing.assert_allclose(g, _fd_gradient(t, s, w), rtol=1e-6, atol=1e-8)
    assert np.all(h > 0)


@pytest.mark.parametrize("weighted", [False, True])
def test_hessian_is_the_documented_approximation(weighted):
    t, s, w = _data(2, noise=0.8)
    w = w if weighted else np.ones(len(t))
    g, h = continuous_qwk_gradient(t, s, w)
    exact = _fd_hessian_diag(t, s, w)
    # the exact diagonal, as the docstring derives it
    n, total = len(t), w.sum()
    d = t - (w @ t) / total
    a = s - t
    m = (w @ (a * a)) / total
    c = (w @ (d * s)) / total
    den = m + 2 * c
    ddens = (2 * w * a + 2 * w * d) / total  # dD/ds_i
    formula = n * (2 * w * (2 * c / den) / (total * den)) - 2 * ddens * g / den
    np.testing.assert_allclose(exact, formula, rtol=1e-4, atol=1e-6)
    # the returned Hessian: the leading term divided by continuous QWK (= 2C/D)
    np.testing.assert_allclose(h * (2 * c / den), n * 2 * w * (2 * c / den) / (total * den))
    assert 0 < 2 * c / den < 1 and np.all(h > 0)
    # and it bounds the exact diagonal from above (up to the O(1/n) cross term)
    assert np.all(h >= exact - np.abs(2 * ddens * g / den) - 1e-9)


def test_constant_prediction_start_and_perfect_fit():
    t = np.array([0.0, 1.0, 2.0, 3.0])
    g, h = continuous_qwk_gradient(t, np.zeros(4))
    np.testing.assert_allclose(g, _fd_gradient(t, np.zeros(4)), rtol=1e-6)
    g, h = continuous_qwk_gradient(t, t.copy())
    assert np.all(g == 0) and np.all(h > 0)


@pytest.mark.parametrize(("args", "match"), [
    (([1, 1, 1], [0.0, 1.0, 2.0]), r"`y_true` is constant: continuous QWK is 0"),
    (([0, 1, 2], [0.0, 1.0]), r"same length; got 3 and 2.*one regression output per row"),
    (([], []), "empty"),
    (([0, 1, np.nan], [0.0, 1.0, 2.0]), "must be finite"),
    (([0, 1, 2], [0.0, 1.0, 2.0], [1.0, -1.0, 1.0]), "non-negative weight per row"),
])
def test_objective_errors(args, match):
    with pytest.raises(ValueError, match=match):
        continuous_qwk_gradient(*args)


def test_call_forms_agree():
    t, s, w = _data(3)

    class Data:
        def get_label(self):
            return t

        def get_weight(self):
            return w

    class DMatrix(Data):
        def get_weight(self):
            return np.empty(0)

    ref_w = continuous_qwk_gradient(t, s, w)
    ref = continuous_qwk_gradient(t, s)
    lgb_obj, xgb_obj = lightgbm_qwk_objective(), xgboost_qwk_objective()
    for got, want in ((lgb_obj(s, Data()), ref_w), (lgb_obj(t, s, w), ref_w),
                      (lgb_obj(t, s, None), ref), (xgb_obj(s, DMatrix()), ref),
                      (xgb_obj(t, s, sample_weight=w), ref_w), (xgb_obj(t, s), ref)):
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


# --------------------------------------------------------------------------- real training


def _ordinal(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6))
    latent = x[:, 0] + 0.6 * x[:, 1] ** 2 - 0.5 * x[:, 2] * x[:, 3] + rng.normal(0, 0.5, n)
    y = np.digitize(latent, np.quantile(latent, [0.35, 0.6, 0.8, 0.93]))
    return x, y.astype(float)


def _heldout_qwk(y_fit, m_fit, y_test, m_test):
    cuts = fk.optimize_thresholds(y_fit, m_fit, n_classes=5)
    return fk.cohen_kappa(y_test, m_test, thresholds=cuts, n_classes=5, weights="quadratic")


def test_lightgbm_train_and_sklearn_api_learn():
    lgb = pytest.importorskip("lightgbm")
    x, y = _ordinal(0, 3000)
    xt, yt = _ordinal(1, 2000)
    params = {"objective": lightgbm_qwk_objective(), "learning_rate": 0.1, "num_leaves": 15,
              "verbose": -1, "num_threads": 1, "seed": 0}
    booster = lgb.train(params, lgb.Dataset(x, y), num_boost_round=60,
                        valid_sets=[lgb.Dataset(xt, yt)],
                        feval=lightgbm_eval_metric(thresholds=[0.5, 1.5, 2.5, 3.5]))
    first = booster.predict(xt, num_iteration=1)
    last = booster.predict(xt)
    assert fk.continuous_qwk(yt, last) > fk.continuous_qwk(yt, first) + 0.2
    q_first = _heldout_qwk(y, booster.predict(x, num_iteration=1), yt, first)
    q_last = _heldout_qwk(y, booster.predict(x), yt, last)
    assert q_last > q_first + 0.05 and q_last > 0.7
    model = lgb.LGBMRegressor(objective=lightgbm_qwk_objective(), n_estimators=60,
                              num_leaves=15, verbose=-1, n_jobs=1, random_state=0)
    model.fit(x, y, sample_weight=np.ones(len(y)))
    assert fk.continuous_qwk(yt, model.predict(xt)) == pytest.approx(
        fk.continuous_qwk(yt, last), abs=0.02)


def test_xgboost_train_and_sklearn_api_learn():
    xgb = pytest.importorskip("xgboost")
    x, y = _ordinal(2, 3000)
    xt, yt = _ordinal(3, 2000)
    dtrain, dtest = xgb.DMatrix(x, y), xgb.DMatrix(xt, yt)
    booster = xgb.train({"eta": 0.1, "max_depth": 4, "nthread": 1, "base_score": 0.0},
                        dtrain, num_boost_round=60, obj=xgboost_qwk_objective())
    first = booster.predict(dtest, iteration_range=(0, 1))
    last = booster.predict(dtest)
    assert fk.continuous_qwk(yt, last) > fk.continuous_qwk(yt, first) + 0.2
    q_first = _heldout_qwk(y, booster.predict(dtrain, iteration_range=(0, 1)), yt, first)
    q_last = _heldout_qwk(y, booster.predict(dtrain), yt, last)
    assert q_last > q_first + 0.05 and q_last > 0.7
    model = xgb.XGBRegressor(objective=xgboost_qwk_objective(), n_estimators=60, max_depth=4,
                             learning_rate=0.1, n_jobs=1, base_score=0.0)
    model.fit(x, y, sample_weight=np.full(len(y), 2.0))
    assert fk.continuous_qwk(yt, model.predict(xt)) > 0.7


def test_training_example_runs_small():
    # the script behind docs/training.md, on a tiny problem: it must keep running
    pytest.importorskip("torch")
    pytest.importorskip("lightgbm")
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "training_example.py"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(script.parents[1]), *filter(None, [env.get("PYTHONPATH")])])
    out = subprocess.run(
        [sys.executable, str(script), "--rows", "4000", "--epochs", "1", "--rounds", "5",
         "--n-resamples", "200"], check=True, capture_output=True, text=True, env=env).stdout
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    assert len(rows) == 1 + 7  # header and the seven models
    assert sum("(best)" in line for line in rows) == 1
