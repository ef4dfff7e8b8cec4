"""Train on QWK, cut with optimize_thresholds, report QWK with an interval.

    python benchmarks/training_example.py [--rows 200000] [--epochs 15] [--rounds 300]

needs the `test` extra (torch, lightgbm). Generated ordinal data (5 grades,
imbalanced like retinopathy grading, 10% of labels moved one grade), split
60/20/20 into train / validation / test. Each model is trained on train;
cut points are tuned with :func:`fastkappa.optimize_thresholds` on the
validation scores; the table reports test QWK with a 95% BCa interval
(:func:`fastkappa.kappa_ci`) and the paired difference to the best model
(:func:`fastkappa.compare`). Prints a Markdown table (docs/training.md holds
its output).

Models: a small PyTorch MLP trained with cross-entropy, with
``fastkappa.torch.kappa_loss`` (soft QWK, log form) and with MSE on the grade;
LightGBM with its L2 objective and with
``fastkappa.integrations.lightgbm_qwk_objective``. Classifiers are scored
twice: by argmax, and by their expected grade cut at tuned thresholds.
"""

from __future__ import annotations

import argparse
import os
import time

# time the parallel bootstrap drivers whatever the kernel cache holds (a fresh
# cache runs mid-sized bootstraps on their serial twins; see fastkappa._core.units)
os.environ.setdefault("FASTKAPPA_COLD_SERIAL", "0")

import numpy as np

import fastkappa as fk

K = 5
FEATURES = 10


def make_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Features and noisy ordinal grades 0..4 (about 45/20/17/11/7 %)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, FEATURES)).astype(np.float32)
    latent = (x[:, 0] + 0.8 * np.tanh(2 * x[:, 1]) + 0.5 * x[:, 2] * x[:, 3]
              - 0.4 * x[:, 4] ** 2 + 0.3 * np.sin(3 * x[:, 5]) + rng.normal(0, 0.6, n))
    y = np.digitize(latent, np.quantile(latent, [0.45, 0.65, 0.82, 0.93]))
    noisy = rng.random(n) < 0.10
    y[noisy] = np.clip(y[noisy] + rng.choice([-1, 1], noisy.sum()), 0, K - 1)
    return x, y.astype(np.int64)


# --------------------------------------------------------------------------- PyTorch


def train_mlp(x, y, loss_name: str, epochs: int, seed: int):
    import torch

    import fastkappa.torch as fkt

    torch.manual_seed(seed)
    out = 1 if loss_name == "mse" else K
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, out))
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    batch = 1024
    for _ in range(epochs):
        order = torch.randperm(len(xt))
        for i in range(0, len(xt), batch):
            idx = order[i:i + batch]
            pred = model(xt[idx])
            if loss_name == "cross-entropy":
                loss = torch.nn.functional.cross_entropy(pred, yt[idx])
            elif loss_name == "kappa_loss":
                loss = fkt.kappa_loss(pred, yt[idx], weights="quadratic", form="log")
            else:
                loss = torch.nn.functional.mse_loss(pred[:, 0], yt[idx].float())
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()

    def predict(features):
        with torch.no_grad():
            return model(torch.from_numpy(features)).numpy().astype(np.float64)

    return predict


# --------------------------------------------------------------------------- LightGBM


def train_lgbm(x, y, objective: str, rounds: int, seed: int, threads: int):
    import lightgbm as lgb

    from fastkappa.integrations import lightgbm_qwk_objective

    params = {"objective": lightgbm_qwk_objective() if objective == "qwk" else "regression",
              "learning_rate": 0.05, "num_leaves": 31, "min_data_in_leaf": 50,
              "num_threads": threads, "verbose": -1, "seed": seed}
    booster = lgb.train(params, lgb.Dataset(x, y.astype(np.float64)), num_boost_round=rounds)
    return booster.predict


# --------------------------------------------------------------------------- scoring


def expected_grade(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    return p @ np.arange(K, dtype=np.float64)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--n-resamples", type=int, default=2000)
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    x, y = make_data(args.rows, args.seed)
    a, b = int(0.6 * args.rows), int(0.8 * args.rows)
    train, valid, test = slice(0, a), slice(a, b), slice(b, None)
    y_valid, y_test = y[valid], y[test]

    preds: dict[str, np.ndarray] = {}  # test-set grade per model
    times: dict[str, float] = {}

    def cut(name, valid_scores, test_scores, seconds):
        cuts = fk.optimize_thresholds(y_valid, valid_scores, n_classes=K)
        preds[name] = fk.apply_thresholds(test_scores, cuts)
        times[name] = seconds

    for loss_name in ("cross-entropy", "kappa_loss", "mse"):
        t0 = time.perf_counter()
        predict = train_mlp(x[train], y[train], loss_name, args.epochs, args.seed)
        seconds = time.perf_counter() - t0
        sv, st = predict(x[valid]), predict(x[test])
        if loss_name == "mse":
            cut("MLP, MSE + thresholds", sv[:, 0], st[:, 0], seconds)
        else:
            preds[f"MLP, {loss_name}, argmax"] = st.argmax(axis=1)
            times[f"MLP, {loss_name}, argmax"] = seconds
            cut(f"MLP, {loss_name}, E[grade] + thresholds", expected_grade(sv),
                expected_grade(st), seconds)
    for objective, label in (("l2", "LightGBM, L2 + thresholds"),
                             ("qwk", "LightGBM, QWK objective + thresholds")):
        t0 = time.perf_counter()
        predict = train_lgbm(x[train], y[train], objective, args.rounds, args.seed,
                             args.threads)
        cut(label, predict(x[valid]), predict(x[test]), time.perf_counter() - t0)

    cis = {name: fk.kappa_ci(y_test, p, weights="quadratic", n_classes=K,
                             n_resamples=args.n_resamples, seed=args.seed)
           for name, p in preds.items()}
    best = max(cis, key=lambda name: cis[name].estimate)
    comparison = fk.compare(y_test, preds, weights="quadratic", n_classes=K,
                            reference=best, method="asymptotic")
    diffs = {pair.b if pair.a == best else pair.a: pair for pair in comparison.pairs}

    print(f"{args.rows:,} rows (train {a:,} / validation {b - a:,} / test "
          f"{args.rows - b:,}), {args.epochs} epochs, {args.rounds} boosting rounds, "
          f"{args.threads} threads, seed {args.seed}\n")
    print("| model | test QWK | 95% CI (BCa) | best - model (95% CI) | train s |")
    print("|---|---:|---|---|---:|")
    for name, ci in sorted(cis.items(), key=lambda item: -item[1].estimate):
        if name == best:
            diff = "(best)"
        else:
            d = diffs[name]
            sign = 1.0 if d.a == best else -1.0  # report best - model
            lo, hi = sorted((sign * d.low, sign * d.high))
            diff = f"{sign * d.difference:+.4f} ({lo:+.4f} to {hi:+.4f})"
        print(f"| {name} | {ci.estimate:.4f} | {ci.low:.4f} to {ci.high:.4f} | {diff} | "
              f"{times[name]:.1f} |")


if __name__ == "__main__":
    main()
