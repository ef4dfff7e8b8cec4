"""asv suites for agreement among many raters, and a side-by-side comparison.

Run the suites with ``asv run --python=same --quick --bench bench_agreement``;
``python benchmarks/bench_agreement.py [n_items]`` prints one comparison
against ``krippendorff``, irrCAC and statsmodels at a modest size (default
20,000 items x 5 raters, K = 5, 10% missing), checking every peer's answer
against fastkappa's before reporting its time, so a fast wrong answer cannot
win.
"""

from __future__ import annotations

import os
import sys
import time
import warnings

# time the parallel bootstrap drivers whatever the kernel cache holds (a fresh
# cache runs mid-sized bootstraps on their serial twins; see fastkappa._core.units)
os.environ.setdefault("FASTKAPPA_COLD_SERIAL", "0")

import numpy as np

import fastkappa as fk

ALL = ("percent_agreement", "fleiss_kappa", "conger_kappa", "gwet_ac", "brennan_prediger",
       "krippendorff_alpha")


def panel(n_items: int, n_raters: int = 5, k: int = 5, p_missing: float = 0.1,
          seed: int = 0) -> np.ndarray:
    """Wide ratings (float, NaN missing): raters agree with a true grade 60% of the time."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n_items)
    x = np.where(rng.random((n_items, n_raters)) < 0.6, truth[:, None],
                 rng.integers(0, k, (n_items, n_raters))).astype(np.float64)
    x[rng.random(x.shape) < p_missing] = np.nan
    return x


class Agreement:
    """fk.agreement on a wide panel, by coefficient set, method and size."""

    params = (
        ["all", "fleiss_kappa", "krippendorff_alpha", "conger_kappa"],
        ["asymptotic", "bca"],
        [10_000, 100_000, 1_000_000],
    )
    param_names = ["coefficients", "method", "n_items"]
    timeout = 300

    def setup(self, coefficients, method, n_items):
        self.x = panel(n_items)
        self.names = None if coefficients == "all" else [coefficients]
        fk.agreement(self.x[:100], coefficients=self.names, method=method,
                     n_resamples=100, seed=0)  # compile / load the kernels

    def time_agreement(self, coefficients, method, n_items):
        fk.agreement(self.x, coefficients=self.names, method=method, seed=0)


class LongFormat:
    """Long-format input (item, rater, label) with integer and string ids."""

    params = (["int", "str"], [100_000, 1_000_000])
    param_names = ["ids", "n_items"]
    timeout = 300

    def setup(self, ids, n_items):
        x = panel(n_items)
        items, raters = np.nonzero(~np.isnan(x))
        order = np.random.default_rng(1).permutation(len(items))
        self.item = items[order]
        self.rater = raters[order] if ids == "int" else np.array(
            ["r1", "r2", "r3", "r4", "r5"], dtype=object)[raters[order]]
        self.label = x[items, raters][order].astype(np.int64)
        few = items[order] < 50  # compile on a few whole items
        fk.fleiss_kappa(item=self.item[few], rater=self.rater[few], label=self.label[few])

    def time_fleiss(self, ids, n_items):
        fk.fleiss_kappa(item=self.item, rater=self.rater, label=self.label)


class FirstCall:
    """Import plus first call in a fresh process (compilation or cache load)."""

    timeout = 300

    def time_first_call(self):
        import subprocess

        subprocess.run([sys.executable, "-c",
                        "import numpy as np, fastkappa as fk; "
                        "fk.agreement(np.array([[0, 1, 1], [1, 1, 0], [2, 2, 2.0]]))"],
                       check=True)


# --------------------------------------------------------------------------- comparison


def _time(f, repeat: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
    return best, out


def compare(n_items: int = 20_000) -> list[tuple[str, float, float | None]]:
    """(what, seconds, fastkappa seconds for the same thing) rows; peers checked first."""
    x = panel(n_items)
    fk.agreement(x[:100], method="bca", n_resamples=100, seed=0)
    rows = []
    t_read, _ = _time(lambda: np.array(x, copy=True))
    rows.append(("numpy: copy the ratings once", t_read, None))
    t_all, _ = _time(lambda: fk.agreement(x))
    rows.append((f"fk.agreement: 6 coefficients + Gwet SEs ({t_all / t_read:.1f}x the copy)",
                  t_all, None))
    t_bca, _ = _time(lambda: fk.agreement(x, method="bca", seed=0))
    rows.append(("fk.agreement: 6 coefficients, BCa 10,000 item resamples", t_bca, None))
    t_bca, _ = _time(lambda: fk.agreement(x, method="bca", seed=0,
                                          coefficients=[c for c in ALL if c != "conger_kappa"]))
    rows.append(("fk.agreement: 5 (no Conger), BCa 10,000 item resamples", t_bca, None))
    for name in ("conger_kappa", "light_kappa"):  # bootstrap over distinct rating rows
        t_rows, _ = _time(lambda name=name: fk.agreement(x, method="bca", seed=0,
                                                         coefficients=name))
        rows.append((f"fk.agreement: {name}, BCa 10,000 item resamples", t_rows, None))
    try:
        import krippendorff

        t_kd, b = _time(lambda: krippendorff.alpha(reliability_data=x.T,
                                                   level_of_measurement="nominal"), repeat=5)
        # each coefficient's own function against the one peer that covers the
        # many-rater case at this size (the "each coefficient at least 100x")
        for name in ("krippendorff_alpha", *(c for c in ALL if c != "krippendorff_alpha")):
            t_fk, a = _time(lambda name=name: getattr(fk, name)(x), repeat=11)
            if name == "krippendorff_alpha":
                assert abs(a - b) < 1e-10, (a, b)
                what = "krippendorff.alpha nominal"
            else:
                what = f"  the same, against fk.{name}"
            rows.append((what, t_kd, t_fk))
    except ImportError:
        pass
    try:
        from statsmodels.stats import inter_rater

        complete = x[~np.isnan(x).any(axis=1)]
        t_fk, a = _time(lambda: fk.fleiss_kappa(complete))
        t_sm, b = _time(lambda: inter_rater.fleiss_kappa(
            inter_rater.aggregate_raters(complete.astype(int))[0]))
        assert abs(a - b) < 1e-10, (a, b)
        rows.append(("statsmodels aggregate_raters + fleiss_kappa (complete rows)", t_sm, t_fk))
    except ImportError:
        pass
    try:
        import pandas as pd
        from irrCAC.raw import CAC

        # at the size asked for (1e6 items in the targets) and at 1e5, where
        # fastkappa's fixed costs weigh most; irrCAC's time includes building its
        # CAC object from the DataFrame, as a user's call does
        for m in sorted({n_items, min(n_items, 100_000)}, reverse=True):
            df = pd.DataFrame(x[:m]).dropna(how="all")
            for name, meth in (("gwet_ac", "gwet"), ("fleiss_kappa", "fleiss"),
                               ("conger_kappa", "conger"), ("brennan_prediger", "bp"),
                               ("krippendorff_alpha", "krippendorff")):
                def irr(meth=meth, df=df):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        return getattr(CAC(df, categories=list(range(5)), digits=20),
                                       meth)()["est"]
                t_irr, b = _time(irr, repeat=1)
                t_fk, a = _time(lambda name=name, m=m: fk.agreement(
                    x[:m], coefficients=name, n_classes=5)[name], repeat=11)
                assert abs(a.estimate - float(b["coefficient_value"])) < 1e-10
                assert abs(a.standard_error - float(b["se"])) < 1e-10
                rows.append((f"irrCAC {meth} with SE ({m:,} items)", t_irr, t_fk))
    except ImportError:
        pass
    return rows


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="fastkappa's many-rater functions "
                                     "against irrCAC, krippendorff and statsmodels.")
    parser.add_argument("n", nargs="?", type=int, default=20_000, help="items (20,000)")
    n = parser.parse_args(sys.argv[1:] if argv is None else argv).n
    print(f"{n:,} items x 5 raters, K = 5, 10% missing")
    print(f"{'what':62s} {'seconds':>9s} {'fastkappa':>10s} {'ratio':>7s}")
    for what, t, t_fk in compare(n):
        extra = "" if t_fk is None else f"{t_fk:10.4f} {t / t_fk:6.0f}x"
        print(f"{what:62s} {t:9.4f} {extra}")


if __name__ == "__main__":
    main()
