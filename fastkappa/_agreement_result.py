"""The result of :func:`fastkappa.agreement`: a frozen table, one row per coefficient."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _display
from ._install import install_hint

__all__ = ["Agreement", "AgreementRow"]

_TITLES = _display.AGREEMENT_TITLES


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
    distribution: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False,
                                     compare=False)

    def __post_init__(self):
        if self.distribution is None:  # asymptotic: no replicates, as in KappaCI
            object.__setattr__(self, "distribution", np.empty(0))

    def to_dict(self) -> dict[str, Any]:
        return _display.agreement_row_dict(self)


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
        The options. ``seed``: what reproduces the replicates as ``seed=``
        (the entropy, or the SeedSequence when it was spawned; None for
        ``'asymptotic'``, which draws nothing). ``level``:
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
        return _display.agreement_dict(self)

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

    def __str__(self) -> str:
        return _display.agreement_text(self)

    def __format__(self, spec: str) -> str:
        return _display.agreement_text(self, spec) if spec else str(self)

    def __repr__(self) -> str:
        return (f"Agreement(coefficients={[r.coefficient for r in self.rows]}, "
                f"method={self.method!r}, n_items={self.n_items})")

    def _repr_html_(self) -> str:
        return _display.agreement_html(self)
