"""The result of :func:`fastkappa.agreement`: a frozen table, one row per coefficient."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._install import install_hint

__all__ = ["Agreement", "AgreementRow"]

_TITLES = {
    "percent_agreement": "percent agreement",
    "fleiss_kappa": "Fleiss' kappa",
    "conger_kappa": "Conger's kappa",
    "gwet_ac": "Gwet's AC1",
    "brennan_prediger": "Brennan-Prediger",
    "krippendorff_alpha": "Krippendorff's alpha",
    "light_kappa": "Light's kappa",
}


@dataclass(frozen=True, eq=False)
class AgreementRow:
    """One coefficient of an :class:`Agreement` table."""

    coefficient: str
    estimate: float
    standard_error: float
    low: float
    high: float
    p_value: float
    method: str
    n_undefined: int = 0
    distribution: np.ndarray = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        from .results import _json_float

        return {"coefficient": self.coefficient, "estimate": _json_float(self.estimate),
                "standard_error": _json_float(self.standard_error),
                "low": _json_float(self.low), "high": _json_float(self.high),
                "p_value": _json_float(self.p_value), "method": self.method,
                "n_undefined": int(self.n_undefined)}


@dataclass(frozen=True, eq=False)
class Agreement:
    """Agreement coefficients among many raters (returned by :func:`agreement`).

    Attributes
    ----------
    rows : tuple of AgreementRow
        One per coefficient: ``estimate``, ``standard_error`` (Gwet's for
        ``'asymptotic'``, the SD of the replicates for bootstrap methods),
        ``low``, ``high``, ``p_value`` (two-sided, H0: coefficient = 0, from
        Gwet's standard error for every method) and ``method`` (the one
        used: a BCa interval that had to fall back says ``'percentile'``).
    method, confidence_level, n_resamples, seed, weights, level
        The options. ``seed``: the entropy that reproduces the replicates
        (None for ``'asymptotic'``, which draws nothing). ``level``:
        Krippendorff's level, the weights when it follows them.
    n_items : int
        Items with at least one rating (the ones scored).
    n_unrated : int
        Input items without any rating (left out).
    n_raters : int
        Raters (columns, or distinct long-format ids; 0 for ``counts=``).
    classes : ndarray
        The classes in scale order.
    n_clusters : int or None
        Clusters resampled (``clusters=``).
    """

    rows: tuple
    method: str
    confidence_level: float
    n_resamples: int
    seed: Any
    weights: Any
    level: Any
    n_items: int
    n_unrated: int
    n_raters: int
    classes: np.ndarray = field(repr=False)
    n_clusters: int | None = None

    def __getitem__(self, name: str) -> AgreementRow:
        for row in self.rows:
            if row.coefficient == name:
                return row
        raise KeyError(name)

    def __iter__(self):
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def to_dict(self) -> dict[str, Any]:
        """Plain Python data (NaN as None, valid for ``json.dumps``), with provenance."""
        from . import __version__

        classes = [c.item() if isinstance(c, np.generic) else c for c in self.classes]
        return {
            "fastkappa_version": __version__, "method": self.method,
            "confidence_level": float(self.confidence_level),
            "n_resamples": int(self.n_resamples), "seed": self.seed,
            "weights": _describe(self.weights), "level": _describe(self.level),
            "n_items": self.n_items, "n_unrated": self.n_unrated,
            "n_raters": self.n_raters, "n_clusters": self.n_clusters, "classes": classes,
            "coefficients": [row.to_dict() for row in self.rows],
        }

    def to_dataframe(self):
        """One row per coefficient as a pandas DataFrame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas is installed in the test env
            raise ImportError(f"to_dataframe() needs pandas; {install_hint('pandas')}"
                              ) from None
        return pd.DataFrame([{k: getattr(r, k) for k in (
            "coefficient", "estimate", "standard_error", "low", "high", "p_value", "method")}
            for r in self.rows]).set_index("coefficient")

    def _table(self) -> list[list[str]]:
        from .results import _digits, _fmt, _fmt_p

        d = max([3, *(_digits(r.estimate, r.low, r.high, least=3, most=5) for r in self.rows)])
        out = [["coefficient", "estimate", "SE", "low", "high", "p", "method"]]
        for r in self.rows:
            out.append([_TITLES.get(r.coefficient, r.coefficient)
                        if r.coefficient != "gwet_ac" or self.weights is None else "Gwet's AC2",
                        _fmt(r.estimate, d), _fmt(r.standard_error, 4), _fmt(r.low, d),
                        _fmt(r.high, d), _fmt_p(r.p_value), r.method])
        return out

    def _head(self) -> str:
        from .results import _level

        how = {"asymptotic": "asymptotic (Gwet)", "bca": "BCa"}.get(self.method, self.method)
        if self.method != "asymptotic":
            how += f", {self.n_resamples:,} item resamples"
        if self.n_clusters is not None:
            how += f", {self.n_clusters} clusters"
        w = "" if self.weights is None else f", {_describe(self.weights)} weights"
        return (f"agreement among {self.n_raters or 'anonymous'} raters on {self.n_items} "
                f"items, {len(self.classes)} classes{w}; {_level(self.confidence_level)} "
                f"CI {how}")

    def __str__(self) -> str:
        rows = self._table()
        widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) if j in (0, 6) else c.rjust(w)
                           for j, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
                 for r in rows]
        return "\n".join([self._head(), *lines])

    def __repr__(self) -> str:
        return (f"Agreement(coefficients={[r.coefficient for r in self.rows]}, "
                f"method={self.method!r}, n_items={self.n_items})")

    def _repr_html_(self) -> str:
        import html as _html

        from .results import _html_table

        return f"<p>{_html.escape(self._head())}</p>" + _html_table(self._table())


def _describe(w):
    if w is None or isinstance(w, str):
        return w
    return "custom"


