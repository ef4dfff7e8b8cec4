"""Figures for agreement among many raters (matplotlib, imported lazily).

``forest(result)`` draws one row per coefficient of an
:class:`~fastkappa.Agreement`, or one row per class of
:func:`fastkappa.agreement_by_category`'s result, each with its interval,
in the style of :func:`fastkappa.plot.forest` (whose drawing helpers it
uses).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ._agreement_result import _TITLES, Agreement

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["forest"]


def _rows(result, coefficient):
    """(names, estimates, lows, highs, template Agreement, what) of the rows to draw."""
    if isinstance(result, Agreement):
        rows = list(result)
        names = [_TITLES.get(r.coefficient, r.coefficient) for r in rows]
        if result.weights is not None:
            names = ["Gwet's AC2" if r.coefficient == "gwet_ac" else t
                     for r, t in zip(rows, names, strict=True)]
        return names, rows, result, "coefficient"
    if isinstance(result, dict) and result and all(
            isinstance(v, Agreement) for v in result.values()):
        first = next(iter(result.values()))
        computed = [r.coefficient for r in first]
        name = coefficient or ("fleiss_kappa" if "fleiss_kappa" in computed else computed[0])
        try:
            rows = [v[name] for v in result.values()]
        except KeyError:
            raise ValueError(
                f"`coefficient` {name!r} is not in the per-category results; pass one of "
                f"{[r.coefficient for r in first]}.") from None
        return [str(k) for k in result], rows, first, _TITLES.get(name, name)
    raise TypeError("forest() takes an Agreement (fk.agreement) or the dict returned by "
                    "fk.agreement_by_category.")


def forest(result, *, coefficient: str | None = None, ax: Axes | None = None,
           sort: bool = False) -> Axes:
    """Forest plot of agreement coefficients (or of one coefficient per class).

    Parameters
    ----------
    result : Agreement or dict
        From :func:`fastkappa.agreement` (one row per coefficient) or
        :func:`fastkappa.agreement_by_category` (one row per class).
    coefficient : str, optional
        For a per-category result: which coefficient to draw (default
        Fleiss' kappa when computed, else the first one).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.
    sort : bool, default False
        Order rows by estimate, highest at the top.

    Returns
    -------
    matplotlib.axes.Axes
        Points have gid ``"fastkappa-estimate"``, intervals
        ``"fastkappa-interval"``; each row's numbers are written at its right.

    Examples
    --------
    >>> import fastkappa as fk
    >>> import fastkappa.plot_agreement as fkpa
    >>> res = fk.agreement([[1, 1, 2], [2, 2, 2], [3, 3, 1], [1, 1, 1], [2, 3, 3]])
    >>> ax = fkpa.forest(res)  # doctest: +SKIP
    """
    from .plot import _axes, _draw_rows, _f, _level, _method_label, _title_above_header

    names, rows, template, what = _rows(result, coefficient)
    est = np.array([r.estimate for r in rows], dtype=np.float64)
    low = np.array([r.low for r in rows], dtype=np.float64)
    high = np.array([r.high for r in rows], dtype=np.float64)
    texts = [("undefined" if not math.isfinite(r.estimate) else
              f"{_f(r.estimate)} ({_f(r.low)} to {_f(r.high)})") for r in rows]
    ax = _axes(ax, (7.5, 1.4 + 0.38 * max(len(rows), 1)))
    _draw_rows(ax, names, est, low, high, sort=sort, texts=texts, marker="o",
               header=f"estimate ({_level(template.confidence_level)} CI)")
    ax.set_xlabel("agreement" if what == "coefficient" else f"{what}, class vs the rest")
    raters = template.n_raters or "anonymous"
    _title_above_header(ax, f"agreement among {raters} raters on {template.n_items} items, "
                            f"{_level(template.confidence_level)} "
                            f"{_method_label(template.method)} intervals")
    return ax
