"""Intervals from replicates: percentile, basic, BCa and asymptotic bounds, inverted
p-values, Holm's adjustment, and the one function that builds a :class:`KappaCI`.

Every entry point that reports an interval (``kappa_ci``, ``compare``, the
per-group and Dask paths, the streaming class) validates its options with
:func:`_kappa_ci_iv` and builds its result with :func:`kappa_interval`.
"""

from __future__ import annotations

import dataclasses
import math
import os
import statistics
import warnings
from typing import TYPE_CHECKING

import numpy as np

from .._core import weights as _weights
from ..exceptions import DegenerateIntervalWarning
from ..results import KappaCI
from . import config
from .caller import user_stacklevel
from .units import resolve_seed, seed_record

if TYPE_CHECKING:
    from .units import Units

METHODS = ("percentile", "basic", "bca", "asymptotic")

_NORMAL = statistics.NormalDist()


# --------------------------------------------------------------------------- options


def _kappa_ci_iv(method, confidence_level, n_resamples, seed):
    """Validate the interval options; return them normalised."""
    if not isinstance(method, str) or method not in METHODS:
        shown = f"'{method}'" if isinstance(method, str) else repr(method)
        raise ValueError(
            "`method` must be 'percentile', 'basic', 'bca' or 'asymptotic'; "
            f"got {shown}.")
    if isinstance(confidence_level, bool) or not isinstance(
            confidence_level, (int, float, np.integer, np.floating)):
        raise ValueError(
            "`confidence_level` must be a number strictly between 0 and 1 (e.g. 0.95); "
            f"got {confidence_level!r}.")
    cl = float(confidence_level)
    if not 0.0 < cl < 1.0:
        hint = f" For a {cl:g}% interval pass {cl / 100:g}." if 1.0 < cl < 100.0 else ""
        raise ValueError(
            "`confidence_level` must be strictly between 0 and 1 (e.g. 0.95); "
            f"got {confidence_level!r}.{hint}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)):
        raise ValueError(
            "`n_resamples` must be an integer of at least 2 (e.g. 10_000); "
            f"got {n_resamples!r}.")
    if n_resamples < 2:
        raise ValueError(
            "`n_resamples` must be an integer of at least 2 (e.g. 10_000); "
            f"got {n_resamples}.")
    check_resample_memory(int(n_resamples))
    return method, cl, int(n_resamples), resolve_seed(seed)


def _physical_memory() -> int | None:
    """Bytes of memory this machine has, or None where the OS does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # Windows, or an unknown name
        return None


def check_resample_memory(n_resamples: int) -> None:
    """Refuse more replicates than can be held (B float64 values) before anything
    is compiled or drawn: at most ``config.MAX_RESAMPLES``, and no more than the
    machine's memory holds."""
    memory = _physical_memory()
    limit = config.MAX_RESAMPLES if memory is None else min(
        config.MAX_RESAMPLES, memory // 8)
    if n_resamples > limit:
        where = (f"the {limit:,} that fit in this machine's memory"
                 if limit < config.MAX_RESAMPLES else f"the {limit:,} supported")
        raise ValueError(
            f"`n_resamples` is {n_resamples:,}, more than {where} (the replicates alone "
            f"take {8 * n_resamples / 2**30:,.1f} GiB, 8 bytes each); pass fewer (10_000 is "
            "usual, 10**6 plenty for small p-values).")


def with_provenance(res: KappaCI, seq: np.random.SeedSequence | None, weights,
                    units: Units | None = None) -> KappaCI:
    """``res`` with what reproduces it and what a methods section needs: the seed
    (when it drew resamples), the weights (``"none"`` for unweighted), and, from
    ``units``, the rows scored and the clusters resampled."""
    seed = seed_record(seq) if seq is not None and res.n_resamples else None
    weights = _weights.canonical(weights)
    if weights is None:
        weights = "none"
    elif not isinstance(weights, str):
        weights = "custom"  # a matrix: named, so that results compare and print
    extra = {} if units is None else {
        "n_rows": int(units.n_rows),
        "n_clusters": int(units.n_units) if units.kind == "clusters" else None}
    return dataclasses.replace(res, seed=seed, weights=weights, **extra)


# --------------------------------------------------------------------------- intervals


def bca_acceleration(jackknife: np.ndarray, counts: np.ndarray | None = None) -> float:
    """BCa acceleration ``sum(n d^3) / (6 (sum(n d^2))^1.5)`` from jackknife values.

    ``d = mean(jack) - jack_i`` with every value weighted by ``counts`` (the
    number of units it stands for); undefined values are left out.  0 when
    the jackknife values are all equal.
    """
    jack = np.asarray(jackknife, dtype=np.float64)
    n = np.ones(len(jack)) if counts is None else np.asarray(counts, dtype=np.float64)
    ok = np.isfinite(jack)
    jack, n = jack[ok], n[ok]
    if n.sum() <= 0:
        return 0.0
    d = np.dot(n, jack) / n.sum() - jack
    s2 = float(np.dot(n, d * d))
    if not s2 > 0:
        return 0.0
    return float(np.dot(n, d * d * d) / (6.0 * s2**1.5))


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def bootstrap_interval(estimate: float, replicates: np.ndarray, method: str,
                       confidence_level: float, *, jackknife: np.ndarray | None = None,
                       jackknife_counts: np.ndarray | None = None,
                       acceleration: float | None = None, what: str = "kappa",
                       bounds: tuple[float, float] | None = (-1.0, 1.0)
                       ) -> tuple[float, float, str]:
    """``(low, high, method_used)`` from the *defined* bootstrap replicates.

    Percentile and basic use linear-interpolated quantiles.  BCa: bias
    ``z0 = Phi^-1((#{t* < t} + #{t* = t} / 2) / B')`` and the jackknife
    acceleration; when ``z0`` is infinite or ``1 - a (z0 + z_alpha) <= 0`` it
    falls back to the percentile interval with a
    :class:`DegenerateIntervalWarning`.  ``acceleration``, when given, is used
    as it is (a caller that needs it twice computes :func:`bca_acceleration`
    once).  A constant distribution gives
    ``(estimate, estimate)`` with a warning; no replicate gives nan.  Bounds
    are clipped to ``bounds``.
    """
    reps = np.asarray(replicates, dtype=np.float64)
    if len(reps) == 0:
        warnings.warn(
            f"no bootstrap replicate of {what} is defined, so there is no interval; "
            "returning nan bounds.", DegenerateIntervalWarning, stacklevel=user_stacklevel())
        return math.nan, math.nan, method
    lo_rep, hi_rep = float(reps.min()), float(reps.max())
    if lo_rep == hi_rep:
        warnings.warn(
            f"every bootstrap replicate of {what} equals {lo_rep!r} (e.g. perfect "
            "agreement in every resample), so the bootstrap distribution is constant; "
            "returning a zero-width interval at the estimate.",
            DegenerateIntervalWarning, stacklevel=user_stacklevel())
        low = high = float(estimate)
        return _clip(low, bounds), _clip(high, bounds), method
    alpha = (1.0 - confidence_level) / 2.0
    used = method
    if method == "bca":
        b = len(reps)
        below = float(np.count_nonzero(reps < estimate))
        ties = float(np.count_nonzero(reps == estimate))
        prop = (below + 0.5 * ties) / b
        a = (acceleration if acceleration is not None
             else bca_acceleration(jackknife, jackknife_counts) if jackknife is not None
             else 0.0)
        z_lo, z_hi = _NORMAL.inv_cdf(alpha), _NORMAL.inv_cdf(1.0 - alpha)
        reason = None
        if not 0.0 < prop < 1.0:
            reason = (f"the estimate lies {'below' if prop == 0 else 'above'} every "
                      "replicate, so the bias correction is infinite")
        else:
            z0 = _NORMAL.inv_cdf(prop)
            den_lo, den_hi = 1.0 - a * (z0 + z_lo), 1.0 - a * (z0 + z_hi)
            if den_lo <= 0 or den_hi <= 0:
                reason = (f"1 - a (z0 + z_alpha) <= 0 with bias z0 = {z0:.3g} and "
                          f"acceleration a = {a:.3g}")
        if reason is not None:
            warnings.warn(
                f"the BCa interval of {what} is not defined here ({reason}); "
                "returning the percentile interval instead (method='percentile').",
                DegenerateIntervalWarning, stacklevel=user_stacklevel())
            used = "percentile"
        else:
            q_lo = _phi(z0 + (z0 + z_lo) / den_lo)
            q_hi = _phi(z0 + (z0 + z_hi) / den_hi)
            low, high = np.quantile(reps, [q_lo, q_hi])
    if used in ("percentile", "basic"):
        q_lo, q_hi = np.quantile(reps, [alpha, 1.0 - alpha])
        if used == "basic":
            low, high = 2.0 * estimate - q_hi, 2.0 * estimate - q_lo
        else:
            low, high = q_lo, q_hi
    return _clip(float(low), bounds), _clip(float(high), bounds), used


def _clip(x: float, bounds) -> float:
    if bounds is None or not math.isfinite(x):
        return x
    return min(max(x, bounds[0]), bounds[1])


def _z_and_p(estimate: float, se0: float) -> tuple[float, float]:
    if not (math.isfinite(se0) and se0 > 0 and math.isfinite(estimate)):
        return math.nan, math.nan
    z = estimate / se0
    return z, math.erfc(abs(z) / math.sqrt(2.0))


def _p_from_position(q: float, b: int) -> float:
    """Two-sided p from the position ``q`` of the null value in the replicates."""
    q = min(max(q, 1.0 / b), 1.0 - 1.0 / b) if b > 1 else q
    return float(min(1.0, 2.0 * min(q, 1.0 - q)))


def _position(reps: np.ndarray, value: float) -> float:
    below = np.count_nonzero(reps < value)
    ties = np.count_nonzero(reps == value)
    return (below + 0.5 * ties) / len(reps)


def inverted_p_value(estimate: float, reps: np.ndarray, method: str, *,
                     jackknife: np.ndarray | None = None,
                     jackknife_counts: np.ndarray | None = None,
                     acceleration: float | None = None, null: float = 0.0) -> float:
    """Smallest ``1 - confidence_level`` at which the interval excludes ``null``.

    Ties count half.  With B replicates the smallest attainable p is about
    2 / B.  A constant distribution equal to ``null`` gives 1.  BCa uses
    ``acceleration`` when given, else computes it from the jackknife.
    """
    b = len(reps)
    if b == 0:
        return math.nan
    if reps.min() == reps.max():
        return 1.0 if reps[0] == null else 2.0 / b
    if method == "basic":
        return _p_from_position(_position(reps, 2.0 * estimate - null), b)
    q0 = _position(reps, null)
    if method == "bca":
        prop = _position(reps, estimate)
        if 0.0 < prop < 1.0 and 0.0 < q0 < 1.0:
            z0 = _NORMAL.inv_cdf(prop)
            a = (acceleration if acceleration is not None
                 else bca_acceleration(jackknife, jackknife_counts) if jackknife is not None
                 else 0.0)
            v = _NORMAL.inv_cdf(q0) - z0
            if 1.0 + a * v > 0:
                z_alpha = v / (1.0 + a * v) - z0
                tail = _NORMAL.cdf(z_alpha)
                return _p_from_position(tail, b)
    return _p_from_position(q0, b)


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment (monotone, capped at 1)."""
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adj = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        val = p[i] * (m - rank) if math.isfinite(p[i]) else math.nan
        running = max(running, val) if math.isfinite(val) else running
        adj[i] = min(1.0, running) if math.isfinite(val) else math.nan
    return adj


# --------------------------------------------------------------------------- the result


def kappa_interval(estimate: float, method: str, confidence_level: float, *,
                   standard_error_null: float, standard_error: float = math.nan,
                   replicates: np.ndarray | None = None, jackknife: np.ndarray | None = None,
                   jackknife_counts: np.ndarray | None = None, what: str = "kappa",
                   warn: bool = True, **fields) -> KappaCI:
    """The one place a :class:`KappaCI` is built from an estimate and its interval.

    ``method="asymptotic"``: ``estimate +- z * standard_error``.  Otherwise
    ``replicates`` are all the bootstrap replicates (nan where undefined:
    left out and counted in ``n_undefined``) and the bounds come from
    :func:`bootstrap_interval` (BCa with ``jackknife`` weighted by
    ``jackknife_counts``); the standard error is the replicates' SD.  Every
    method carries ``standard_error_null``, ``z`` and the two-sided
    ``p_value``; bounds are clipped to [-1, 1].  ``warn`` adds the
    :class:`DegenerateIntervalWarning` of a zero asymptotic SE and of
    undefined replicates (``kappa_ci``); ``fields`` are further result fields
    (e.g. ``weights``, ``seed``).
    """
    cl = confidence_level
    z, p_value = _z_and_p(estimate, standard_error_null)
    if method == "asymptotic":
        half = _NORMAL.inv_cdf(0.5 + cl / 2.0) * standard_error
        if warn and not half > 0:
            warnings.warn(
                f"the large-sample standard error of {what} is zero (e.g. perfect "
                "agreement, every row on the diagonal, or perfect disagreement), so the "
                "asymptotic interval has zero width at the estimate; the data show no "
                "variation to estimate an error from, so report the estimate together "
                "with n.", DegenerateIntervalWarning, stacklevel=user_stacklevel())
        return KappaCI(estimate=estimate, low=_clip(estimate - half, (-1.0, 1.0)),
                       high=_clip(estimate + half, (-1.0, 1.0)),
                       standard_error=standard_error, method=method, confidence_level=cl,
                       n_resamples=0, distribution=np.empty(0), n_undefined=0,
                       standard_error_null=standard_error_null, z=z, p_value=p_value,
                       **fields)
    reps = np.asarray(replicates, dtype=np.float64)
    finite = reps[np.isfinite(reps)]
    n_undefined = len(reps) - len(finite)
    if warn and n_undefined:
        warnings.warn(
            f"{n_undefined} of {len(reps)} bootstrap replicates have an undefined {what} "
            "(every resampled row in one class, identical for both raters); they are "
            "excluded from the interval and counted in `n_undefined`.",
            DegenerateIntervalWarning, stacklevel=user_stacklevel())
    if not len(finite):
        jackknife = None
    low, high, used = bootstrap_interval(estimate, finite, method, cl, jackknife=jackknife,
                                         jackknife_counts=jackknife_counts, what=what)
    sd = float(np.std(finite, ddof=1)) if len(finite) > 1 else math.nan
    return KappaCI(estimate=estimate, low=low, high=high, standard_error=sd, method=used,
                   confidence_level=cl, n_resamples=len(reps), distribution=finite,
                   n_undefined=n_undefined, standard_error_null=standard_error_null, z=z,
                   p_value=p_value, **fields)


def undefined_interval(method: str, confidence_level: float) -> KappaCI:
    """The result when kappa itself is undefined: every field nan, with the
    :class:`UndefinedKappaWarning` of :func:`fastkappa._core.weights.finish_kappa`."""
    _weights.finish_kappa(0.0, 0.0)  # warns
    return KappaCI(estimate=math.nan, low=math.nan, high=math.nan, standard_error=math.nan,
                   method=method, confidence_level=confidence_level, n_resamples=0,
                   distribution=np.empty(0), n_undefined=0)
