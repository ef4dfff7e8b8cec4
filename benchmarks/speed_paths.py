"""Side-by-side ratios for the data-dependent resampling paths (issue 16).

    python -m benchmarks.speed_paths              # the issue's sizes (a few minutes)
    python -m benchmarks.speed_paths --quick      # smaller, for a smoke run
    python -m benchmarks.speed_paths --only ratios   # K = 5, 100, 1000 side by side
    python -m benchmarks.speed_paths --only clusters # kappa_ci(..., clusters=)

Many classes: ``kappa_ci`` (BCa, 10^4 resamples, 10^6 rows, banded errors:
predictions within +-2 of the truth) at K = 5, 100 and 1000, the current
path against the dense path of earlier releases (forced in the same process
by raising ``SPARSE_MIN_CLASSES``).

Paired comparison: ``compare`` (10 models, 10^6 rows, QWK, 2,000 paired
resamples, BCa) on models that err independently on every row, and on the
README's data (models that copy the truth on 50-95% of rows), against the
naive paired loop (row indices + scikit-learn per model per replicate),
timed on 3 replicates and extrapolated to 2,000.  The joint-type path of
earlier releases on the independent data is timed on a few hundred
replicates and reported per replicate.

Clusters: ``kappa_ci(..., clusters=)`` (QWK, BCa, 10^4 resamples, 10^6 rows)
with clusters of about 10 rows (nearly every cluster's table is its own
type: unit-index resampling) and of about 2 rows (few types: a multinomial
over types), against the naive loop over cluster indices (resample cluster
ids, gather their rows, scikit-learn), timed on 3 replicates and
extrapolated.

Every timing is the median of interleaved repetitions (each repetition runs
every implementation once, in rotating order), and every comparison checks
its answer inside the run: estimates against scikit-learn, the new path's
replicates against the old path's in distribution (means within 4 standard
errors of a difference, SDs within 5 / sqrt(B) in log ratio), so a fast wrong
answer cannot win.
The load average is printed: on a shared machine, read ratios with it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time

# time the parallel bootstrap drivers whatever the kernel cache holds (a fresh
# cache runs mid-sized bootstraps on their serial twins; see fastkappa._core.units)
os.environ.setdefault("FASTKAPPA_COLD_SERIAL", "0")

import numpy as np

import fastkappa as fk
from fastkappa._core import units as fku


def banded(n: int, k: int, seed: int = 0, width: int = 2):
    """Truth 0..k-1 and a prediction within +-width of it (clipped): ~5K cells at K=1000."""
    rng = np.random.default_rng(seed)
    t = rng.integers(0, k, n)
    return t, np.clip(t + rng.integers(-width, width + 1, n), 0, k - 1)


def independent_models(n: int, n_models: int = 10, k: int = 5, seed: int = 0):
    """Models whose errors are independent noise on every row (-1, 0, +1 grades)."""
    rng = np.random.default_rng(seed)
    t = rng.integers(0, k, n)
    return t, {f"model_{m:02d}": np.clip(t + rng.integers(-1, 2, n), 0, k - 1)
               for m in range(n_models)}


@contextlib.contextmanager
def _setting(name: str, value):
    old = getattr(fku, name)
    setattr(fku, name, value)
    try:
        yield
    finally:
        setattr(fku, name, old)


def _load() -> str:
    try:
        return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:
        return "load average unknown"


def _interleaved(funcs: dict, repeats: int) -> dict:
    """Median seconds of each function over ``repeats`` rounds in rotating order."""
    names = list(funcs)
    times: dict = {nm: [] for nm in names}
    for r in range(repeats):
        for nm in names[r % len(names):] + names[:r % len(names)]:
            t0 = time.perf_counter()
            funcs[nm]()
            times[nm].append(time.perf_counter() - t0)
    return {nm: statistics.median(v) for nm, v in times.items()}


def _check_same_distribution(a: np.ndarray, b: np.ndarray, what: str) -> None:
    """Means within 4 SE of a difference; SDs within 5 SD of their log-ratio
    (about 1 / sqrt(B) for B replicates each)."""
    se = np.sqrt(a.var() / len(a) + b.var() / len(b))
    tol = 5.0 / np.sqrt(min(len(a), len(b)))
    if abs(a.mean() - b.mean()) > 4 * se or abs(np.log(b.std() / a.std())) > tol:
        raise AssertionError(f"{what}: the two paths disagree in distribution "
                             f"(means {a.mean():.6g} vs {b.mean():.6g}, "
                             f"SDs {a.std():.4g} vs {b.std():.4g})")


def many_classes(n: int, ks, n_resamples: int, repeats: int) -> list[str]:
    from sklearn.metrics import cohen_kappa_score

    rows = []
    base = None
    for k in ks:
        t, p = banded(n, k)
        new = fk.kappa_ci(t, p, n_classes=k, n_resamples=n_resamples, seed=0)  # warm
        with _setting("SPARSE_MIN_CLASSES", 1 << 62):
            old = fk.kappa_ci(t, p, n_classes=k, n_resamples=n_resamples, seed=0)
        ref = cohen_kappa_score(t, p, labels=np.arange(k))
        assert abs(new.estimate - ref) < 1e-12 and abs(old.estimate - ref) < 1e-12
        _check_same_distribution(old.distribution, new.distribution, f"kappa_ci K={k}")

        def run_new(t=t, p=p, k=k):
            fk.kappa_ci(t, p, n_classes=k, n_resamples=n_resamples, seed=1)

        def run_old(t=t, p=p, k=k):
            with _setting("SPARSE_MIN_CLASSES", 1 << 62):
                fk.kappa_ci(t, p, n_classes=k, n_resamples=n_resamples, seed=1)

        nnz = int(np.count_nonzero(fk.confusion_matrix(t, p, n_classes=k)))
        med = _interleaved({"new": run_new, "dense": run_old},
                           repeats if k < 1000 else max(1, repeats // 2))
        base = med["new"] if base is None else base
        rows.append(f"| kappa_ci BCa K={k} ({nnz} cells) | {med['new'] * 1e3:.0f} ms | "
                    f"{med['dense'] * 1e3:.0f} ms | {med['dense'] / med['new']:.1f}x | "
                    f"{med['new'] / base:.2f}x of K={ks[0]} |")
        print(rows[-1], "|", _load(), flush=True)
    return rows


def class_ratios(n: int, ks, n_resamples: int, repeats: int) -> list[str]:
    """Issue 16's many-classes targets, side by side: ``kappa_ci`` (BCa) at every K
    interleaved in one loop (each repetition runs every K once, in rotating
    order), seconds and the ratios to the first K (K = 1000 under 0.5 s; K = 100
    within 2x of K = 5).  Estimates are checked against scikit-learn."""
    from sklearn.metrics import cohen_kappa_score

    data = {k: banded(n, k) for k in ks}
    funcs = {}
    for k, (t, p) in data.items():
        res = fk.kappa_ci(t, p, n_classes=k, n_resamples=n_resamples, seed=0)  # warm
        assert abs(res.estimate - cohen_kappa_score(t, p, labels=np.arange(k))) < 1e-12
        assert res.low < res.estimate < res.high

        def run(t=t, p=p, k=k):
            fk.kappa_ci(t, p, n_classes=k, n_resamples=n_resamples, seed=1)

        funcs[k] = run
    med = _interleaved(funcs, repeats)
    base = med[ks[0]]
    rows = []
    for k, (t, p) in data.items():
        nnz = int(np.count_nonzero(fk.confusion_matrix(t, p, n_classes=k)))
        rows.append(f"| kappa_ci BCa K={k} ({nnz} cells), {n_resamples} resamples | "
                    f"{med[k]:.3f} s | {med[k] / base:.1f}x of K={ks[0]} |")
        print(rows[-1], flush=True)
    return rows


def compare_paths(n: int, n_models: int, n_resamples: int, old_resamples: int,
                  repeats: int) -> list[str]:
    from sklearn.metrics import cohen_kappa_score

    from benchmarks.bench_compare import naive_compare, noisy_models

    rows = []
    naive_reps = 3
    kw = dict(weights="quadratic", n_classes=5, seed=0)
    for label, (t, models) in (("independent errors", independent_models(n, n_models)),
                               ("README data", noisy_models(n, n_models))):
        n_types = np.unique(np.stack([t, *models.values()]), axis=1).shape[1]
        fk.compare(t, models, n_resamples=20, **kw)  # warm the kernels
        new = fk.compare(t, models, n_resamples=old_resamples, **kw)
        with _setting("ROWS_MIN_TYPES_PER_ROW", float("inf")):
            old = fk.compare(t, models, n_resamples=old_resamples, **kw)
        for nm, p in models.items():
            ref = cohen_kappa_score(t, p, labels=range(5), weights="quadratic")
            assert abs(new.models[nm].estimate - ref) < 1e-12, nm
            _check_same_distribution(old.models[nm].distribution,
                                     new.models[nm].distribution, f"{label} {nm}")
        d_new, d_old = new.pairs[0].distribution, old.pairs[0].distribution
        _check_same_distribution(d_old, d_new, f"{label} {new.pairs[0].a} - {new.pairs[0].b}")

        def run_full(t=t, models=models):
            fk.compare(t, models, n_resamples=n_resamples, **kw)

        def run_old(t=t, models=models):
            with _setting("ROWS_MIN_TYPES_PER_ROW", float("inf")):
                fk.compare(t, models, n_resamples=old_resamples, **kw)

        def run_new_short(t=t, models=models):
            fk.compare(t, models, n_resamples=old_resamples, **kw)

        def run_naive(t=t, models=models):
            naive_compare(t, models, naive_reps)

        med = _interleaved({"full": run_full, "old": run_old, "short": run_new_short,
                            "naive": run_naive}, repeats)
        naive_full = med["naive"] * n_resamples / naive_reps
        rows.append(
            f"| compare {n_models} models, {label} ({n_types} joint types) | "
            f"{med['full']:.1f} s | {naive_full:.0f} s (3 reps x {n_resamples}/3) | "
            f"{naive_full / med['full']:.0f}x | per replicate ({old_resamples} resamples): "
            f"{med['short'] / old_resamples * 1e3:.1f} ms now, "
            f"{med['old'] / old_resamples * 1e3:.1f} ms joint types |")
        print(rows[-1], "|", _load(), flush=True)
    return rows


def naive_cluster_bootstrap(t, p, clusters, n_rep, seed=0):
    """Index resampling of clusters + scikit-learn per replicate (the reference loop)."""
    from sklearn.metrics import cohen_kappa_score

    order = np.argsort(clusters, kind="stable")
    bounds = np.flatnonzero(np.diff(clusters[order])) + 1
    rows_of = np.split(order, bounds)
    gen = np.random.default_rng(seed)
    out = np.empty(n_rep)
    for b in range(n_rep):
        rows = np.concatenate([rows_of[c] for c in gen.integers(0, len(rows_of), len(rows_of))])
        out[b] = cohen_kappa_score(t[rows], p[rows], labels=range(5), weights="quadratic")
    return out


def cluster_paths(n: int, sizes, n_resamples: int, repeats: int) -> list[str]:
    """``kappa_ci(..., clusters=)`` (BCa) when the clusters' tables are nearly all
    distinct (clusters of ~10 rows: unit-index resampling) and when they are few
    types (clusters of ~2 rows), against the naive loop over cluster indices."""
    from sklearn.metrics import cohen_kappa_score

    rows = []
    naive_reps = 3
    rng = np.random.default_rng(0)
    t = rng.integers(0, 5, n)
    p = np.clip(t + rng.integers(-1, 2, n), 0, 4)
    for size in sizes:
        clusters = rng.integers(0, n // size, n)
        kw = dict(weights="quadratic", clusters=clusters, seed=0)
        res = fk.kappa_ci(t, p, n_resamples=200, **kw)  # warm the kernels
        assert abs(res.estimate - cohen_kappa_score(t, p, weights="quadratic")) < 1e-12
        cell_t, cell_p = fku._single_model_cells(5)
        codes = np.unique(clusters, return_inverse=True)[1]
        units = fku.units_from_clusters(t * 5 + p, None, codes, codes.max() + 1, cell_t,
                                        cell_p, 5)

        def run(kw=kw):
            fk.kappa_ci(t, p, n_resamples=n_resamples, **kw)

        def run_naive(clusters=clusters):
            naive_cluster_bootstrap(t, p, clusters, naive_reps)

        med = _interleaved({"fk": run, "naive": run_naive}, repeats)
        naive_full = med["naive"] * n_resamples / naive_reps
        path = "unit index" if units.by_index else "types"
        rows.append(f"| kappa_ci clusters of ~{size} rows ({units.n_units} clusters, "
                    f"{units.n_types} types, {path}) | {med['fk']:.2f} s | "
                    f"{naive_full:.0f} s ({naive_reps} reps x {n_resamples}/{naive_reps}) | "
                    f"{naive_full / med['fk']:.0f}x |")
        print(rows[-1], "|", _load(), flush=True)
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes, one repetition")
    ap.add_argument("--only", choices=["ratios", "classes", "compare", "clusters"],
                    default=None)
    args = ap.parse_args(argv)
    if args.quick:
        n, ks, b, repeats = 10**5, (5, 100, 1000), 2_000, 1
        cmp = (10**5, 10, 200, 100, 1)
        clu = (10**5, (10, 2), 500, 1)
    else:
        n, ks, b, repeats = 10**6, (5, 100, 1000), 10_000, 3
        cmp = (10**6, 10, 2_000, 200, 3)
        clu = (10**6, (10, 2), 10_000, 3)
    print(_load())
    if args.only in (None, "ratios"):
        print("| case | seconds (median) | ratio |")
        class_ratios(n, ks, b, max(repeats, 5))
    if args.only in (None, "classes"):
        print("| case | now | dense path | speed-up | vs K=5 |")
        many_classes(n, ks, b, repeats)
    if args.only in (None, "compare"):
        print("| case | fastkappa | naive loop | ratio | per replicate |")
        compare_paths(*cmp)
    if args.only in (None, "clusters"):
        print("| case | fastkappa | naive loop | ratio |")
        cluster_paths(*clu)
    print(_load())


if __name__ == "__main__":
    main()
