"""Result objects: frozen dataclasses that print well and turn into dicts."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["KappaCI"]

_METHOD_LABELS = {
    "percentile": "percentile",
    "basic": "basic",
    "bca": "BCa",
    "asymptotic": "asymptotic",
}


def _json_float(x) -> float | None:
    """A float for JSON: nan and inf become None."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _fmt(x: float, digits: int = 2) -> str:
    return "nan" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _fmt_p(p: float) -> str:
    """A p-value with three significant digits; one that underflowed to 0 as a bound."""
    if p is None or not math.isfinite(p):
        return "nan"
    return "< 1e-300" if p == 0 else f"{p:.3g}"


def _digits(*values: float, least: int = 2, most: int = 4) -> int:
    """Fewest decimals (from ``least`` to ``most``) that tell distinct values apart."""
    finite = [v for v in values if v is not None and math.isfinite(v)]

    def shown_as(v: float, d: int) -> str:  # "-0.00" and "0.00" read as the same number
        text = _fmt(v, d)
        return text[1:] if text.startswith("-") and float(text) == 0 else text

    for d in range(least, most + 1):
        shown = [shown_as(v, d) for v in finite]
        if all((shown[i] != shown[j]) or (finite[i] == finite[j])
               for i in range(len(finite)) for j in range(i + 1, len(finite))):
            return d
    return most


def _level(confidence_level: float) -> str:
    return f"{100 * confidence_level:.10g}%"


@dataclass(frozen=True, repr=False)
class KappaCI:
    """Cohen's kappa with a confidence interval (returned by :func:`fastkappa.kappa_ci`).

    Attributes
    ----------
    estimate : float
        Kappa on the full data.
    low, high : float
        Interval bounds, clipped to [-1, 1].
    standard_error : float
        Bootstrap methods: standard deviation (ddof=1) of the defined
        replicates.  ``"asymptotic"``: the Fleiss–Cohen–Everitt large-sample
        SE (weighted / cluster-robust when sample weights or clusters are
        given).
    method : str
        The method that produced ``low`` and ``high``: ``"percentile"``,
        ``"basic"``, ``"bca"`` or ``"asymptotic"``.  A BCa interval that had
        to fall back (see :func:`fastkappa.kappa_ci`) says ``"percentile"``.
    confidence_level : float
        For example 0.95.
    n_resamples : int
        Bootstrap replicates drawn (0 for ``"asymptotic"``).
    distribution : ndarray
        The defined bootstrap replicates, in draw order (empty for
        ``"asymptotic"``).  Not compared by ``==``.
    n_undefined : int
        Replicates whose kappa was undefined (zero expected disagreement),
        excluded from ``distribution`` and from the interval.
    standard_error_null : float
        Large-sample SE under H0: kappa = 0 (FCE; weighted / cluster-robust
        when sample weights or clusters are given), for every method.
    z : float
        ``estimate / standard_error_null``.
    p_value : float
        Two-sided normal p-value for H0: kappa = 0.
    """

    estimate: float
    low: float
    high: float
    standard_error: float
    method: str
    confidence_level: float
    n_resamples: int
    distribution: np.ndarray = field(compare=False, hash=False)
    n_undefined: int = 0
    standard_error_null: float = float("nan")
    z: float = float("nan")
    p_value: float = float("nan")

    def __str__(self) -> str:
        label = _METHOD_LABELS.get(self.method, self.method)
        d = _digits(self.estimate, self.low, self.high)
        return (f"kappa = {_fmt(self.estimate, d)} ({_level(self.confidence_level)} CI "
                f"{_fmt(self.low, d)} to {_fmt(self.high, d)}, {label})")

    def __repr__(self) -> str:
        dist = self.distribution
        n = 0 if dist is None else len(dist)
        return (
            f"KappaCI(estimate={self.estimate!r}, low={self.low!r}, high={self.high!r}, "
            f"standard_error={self.standard_error!r}, method={self.method!r}, "
            f"confidence_level={self.confidence_level!r}, n_resamples={self.n_resamples!r}, "
            f"distribution=<{n} replicates>, n_undefined={self.n_undefined!r}, "
            f"standard_error_null={self.standard_error_null!r}, z={self.z!r}, "
            f"p_value={self.p_value!r})"
        )

    def _repr_html_(self) -> str:
        d = _digits(self.estimate, self.low, self.high, least=4, most=6)
        rows = [
            ("kappa", _fmt(self.estimate, d)),
            (f"{_level(self.confidence_level)} CI",
             f"{_fmt(self.low, d)} to {_fmt(self.high, d)}"),
            ("method", _METHOD_LABELS.get(self.method, self.method)),
            ("standard error", _fmt(self.standard_error, 4)),
        ]
        if self.method != "asymptotic" or self.n_resamples:
            rows.append(("replicates", f"{self.n_resamples:,} ({self.n_undefined:,} undefined)"))
        rows += [
            ("SE under H0", _fmt(self.standard_error_null, 4)),
            ("z", _fmt(self.z, 3)),
            ("p-value (two-sided, H0: kappa = 0)", _fmt_p(self.p_value)),
        ]
        body = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
            f"<td style='text-align:left'>{html.escape(v)}</td></tr>" for k, v in rows)
        return f"<table><caption>KappaCI</caption>{body}</table>"

    def to_dict(self, *, distribution: bool = False) -> dict[str, Any]:
        """Fields as plain Python values, nan as None (valid for ``json.dumps``).

        Parameters
        ----------
        distribution : bool, default False
            Include the bootstrap replicates as a list.

        Examples
        --------
        >>> import json
        >>> import fastkappa as fk
        >>> res = fk.kappa_ci_from_confusion([[20, 5], [3, 22]], method="asymptotic")
        >>> sorted(res.to_dict())[:3]
        ['confidence_level', 'estimate', 'high']
        >>> json.loads(json.dumps(res.to_dict()))["method"]
        'asymptotic'
        """
        out: dict[str, Any] = {
            "estimate": _json_float(self.estimate),
            "low": _json_float(self.low),
            "high": _json_float(self.high),
            "standard_error": _json_float(self.standard_error),
            "method": self.method,
            "confidence_level": float(self.confidence_level),
            "n_resamples": int(self.n_resamples),
            "n_undefined": int(self.n_undefined),
            "standard_error_null": _json_float(self.standard_error_null),
            "z": _json_float(self.z),
            "p_value": _json_float(self.p_value),
        }
        if distribution:
            out["distribution"] = [_json_float(v) for v in np.asarray(self.distribution)]
        return out
