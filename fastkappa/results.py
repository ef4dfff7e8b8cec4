"""Result objects: frozen dataclasses that print well and turn into dicts."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _display
from ._install import install_hint

__all__ = ["Comparison", "GroupKappa", "KappaByGroup", "KappaCI", "PairDifference"]


def _renamed(old: str, new: str) -> property:
    """A read-only alias ``old`` of the field ``new``: the API contract's names
    (``KappaByGroup.kappa`` and ``.n``) keep answering, without a warning."""

    def get(self):
        return getattr(self, new)

    return property(get, doc=f"Alias of ``{new}`` (the same value).")


def _pandas():
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(f"to_dataframe() needs pandas: {install_hint('pandas')}") from None
    return pd


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
    seed : int, list of int, SeedSequence or None
        The seed that reproduces the bootstrap (pass it back as ``seed=``);
        ``seed=None`` drew one from the OS and it is recorded here.  None for
        ``"asymptotic"``, which draws nothing, or when not recorded.
    weights : str or None
        The name of the kappa weights the estimate used: ``"none"``
        (unweighted), ``"linear"``, ``"quadratic"`` or ``"custom"`` (a
        matrix); None when the producer did not record it.
    n_rows : int or None
        Rows scored (None when not recorded).
    n_clusters : int or None
        Clusters resampled with ``clusters=`` (None for independent rows).

    Examples
    --------
    >>> import fastkappa as fk
    >>> res = fk.kappa_ci_from_confusion([[20, 5], [3, 22]], method="asymptotic")
    >>> res
    kappa = 0.68 (95% CI 0.48 to 0.88, asymptotic)
    >>> f"{res:.4f}"
    'kappa = 0.6800 (95% CI 0.4774 to 0.8826, asymptotic)'
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
    seed: Any = field(default=None, compare=False)
    weights: Any = field(default=None, compare=False)
    n_rows: int | None = field(default=None, compare=False)
    n_clusters: int | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return _display.kappa_ci_text(self)

    def __format__(self, spec: str) -> str:
        # format(res, ".3f"): the line of str(res) with every number in that format
        return _display.kappa_ci_text(self, spec)

    def __repr__(self) -> str:
        # the line a REPL shows: the fields are attributes (and ``to_dict()``)
        return str(self)

    def _repr_html_(self) -> str:
        return _display.kappa_ci_html(self)

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
        ['confidence_level', 'estimate', 'fastkappa_version']
        >>> json.loads(json.dumps(res.to_dict()))["method"]
        'asymptotic'
        """
        return _display.kappa_ci_dict(self, distribution=distribution)

    def to_dataframe(self, name: Any = None):
        """One row of a results table as a pandas DataFrame (needs pandas).

        Columns: ``estimate``, ``low``, ``high``, ``standard_error``,
        ``method``, ``confidence_level``, ``n_resamples``, ``n_undefined``,
        ``standard_error_null``, ``z``, ``p_value``, then what was recorded
        of ``weights``, ``seed``, ``n_rows`` and ``n_clusters``.  Stack
        several with ``pandas.concat`` for a paper's table.

        Parameters
        ----------
        name : hashable, optional
            The row's index label (e.g. the model's name); default 0.

        Examples
        --------
        >>> import fastkappa as fk
        >>> res = fk.kappa_ci_from_confusion([[20, 5], [3, 22]], method="asymptotic")
        >>> df = res.to_dataframe("model a")
        >>> df.loc["model a", ["estimate", "low", "high"]].round(3).tolist()
        [0.68, 0.477, 0.883]
        """
        pd = _pandas()
        row = self.to_dict()
        for key in ("weights", "seed", "n_rows", "n_clusters"):
            value = getattr(self, key)
            if value is not None:
                row[key] = list(value) if isinstance(value, tuple) else value
        frame = pd.DataFrame([row], index=[0 if name is None else name])
        return frame.astype({k: float for k in ("estimate", "low", "high", "standard_error",
                                                 "standard_error_null", "z", "p_value")})

    def methods_text(self, *, cluster_unit: str = "cluster", subject: str = "items",
                     references: bool = True) -> str:
        """A methods paragraph for a paper, with the references it rests on.

        It names the coefficient and its weights, the interval method and
        level, the number of resamples, the resampled unit (with
        ``clusters=``), the seed, the result and the fastkappa version, and
        lists the papers the method comes from.  Edit it to fit your paper;
        every number in it comes from this result.

        Parameters
        ----------
        cluster_unit : str, default "cluster"
            What a cluster is, singular (e.g. ``"patient"``); used when the
            interval resampled clusters.
        subject : str, default "items"
            What the rows are (e.g. ``"eyes"``, ``"essays"``).
        references : bool, default True
            Append the reference list.

        Returns
        -------
        str

        Examples
        --------
        >>> import fastkappa as fk
        >>> res = fk.kappa_ci([0, 1, 2, 2, 1, 0, 2, 1], [0, 1, 2, 1, 1, 0, 2, 2],
        ...                   weights="quadratic", method="asymptotic")
        >>> print(res.methods_text(references=False))  # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
        Agreement was measured with quadratic-weighted Cohen's kappa (Cohen, 1968)
        on 8 items. The 95% confidence interval used the large-sample standard
        error of Fleiss, Cohen and Everitt (1969). Kappa was 0.79 (95% CI 0.50 to
        1.00). Computed with fastkappa ...
        """
        return _display.kappa_ci_methods_text(self, cluster_unit=cluster_unit,
                                              subject=subject, references=references)


# --------------------------------------------------------------------------- compare


@dataclass(frozen=True, eq=False)
class PairDifference:
    """``kappa[a] - kappa[b]`` on the same rows, with its interval and p-value.

    ``p_value`` inverts the interval of the difference (the smallest level at
    which it excludes 0); ``p_adjusted`` is the Holm-adjusted value when
    ``p_adjust="holm"``, else equal to ``p_value``.
    """

    a: str
    b: str
    difference: float
    low: float
    high: float
    p_value: float
    p_adjusted: float
    standard_error: float = math.nan
    distribution: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False,
                                     compare=False)

    def __post_init__(self):
        if self.distribution is None:  # asymptotic: no replicates, as in KappaCI
            object.__setattr__(self, "distribution", np.empty(0))

    @property
    def p_value_is_bound(self) -> bool:
        """Whether ``p_value`` sits at its bootstrap floor (about 2/B): then the
        true p-value is at most that, and it prints as a bound (``p < 0.0002``)."""
        return _display.p_is_bound(self.p_value, len(self.distribution))

    def to_dict(self) -> dict:
        """Plain Python data, with ``p_value_is_bound`` (and ``p_adjusted_is_bound``)."""
        return _display.pair_dict(self)


@dataclass(frozen=True, eq=False)
class Comparison:
    """Result of :func:`fastkappa.compare`.

    Attributes
    ----------
    models : dict
        Model name -> :class:`KappaCI`, every model on the same rows and resamples.
    pairs : list of PairDifference
        Every pair (``a`` before ``b`` in the order given), or every model
        against ``reference`` (``difference = kappa[model] - kappa[reference]``).
    reference : str or None
    method : str
    confidence_level : float
    n_resamples : int
    p_adjust : None or "holm"
    weights : str
        ``"none"`` (unweighted), ``"linear"``, ``"quadratic"`` or ``"custom"``.
    n_rows : int
        Rows scored (the rows every model could be scored on). ``n`` is an
        alias.
    classes : ndarray
    seed : int, list of int, SeedSequence or None
        The seed that reproduces the resamples (None for ``"asymptotic"``).
    n_clusters : int or None
        Clusters resampled with ``clusters=`` (None for independent rows).
    """

    models: dict[str, KappaCI]
    pairs: list[PairDifference]
    reference: str | None
    method: str
    confidence_level: float
    n_resamples: int
    p_adjust: str | None
    weights: str | None
    n_rows: int
    classes: np.ndarray = field(repr=False)
    seed: Any = None
    n_clusters: int | None = None

    n = _renamed("n", "n_rows")

    def __post_init__(self):
        object.__setattr__(self, "weights", _display.weights_name(self.weights))

    def pair(self, a: str, b: str) -> PairDifference:
        """The difference ``kappa[a] - kappa[b]`` (sign flipped if stored as (b, a))."""
        for pd_ in self.pairs:
            if (pd_.a, pd_.b) == (a, b):
                return pd_
            if (pd_.a, pd_.b) == (b, a):
                return PairDifference(a, b, -pd_.difference, -pd_.high, -pd_.low,
                                      pd_.p_value, pd_.p_adjusted, pd_.standard_error,
                                      -pd_.distribution)
        raise KeyError((a, b))

    def to_dict(self) -> dict:
        """Plain Python data (NaN as None, so ``json.dumps`` writes valid JSON).

        A pair's ``p_value_is_bound`` says its p-value sits at the bootstrap
        floor (the true p-value is at most that)."""
        return _display.comparison_dict(self)

    def methods_text(self, *, cluster_unit: str = "cluster", subject: str = "items",
                     references: bool = True) -> str:
        """A methods paragraph for a paper on this comparison, with its references.

        It names the coefficient and weights, the number of models and rows,
        the interval method, the paired resamples, the resampled unit, the
        seed, how the p-values of the differences were computed (and
        adjusted), every model's kappa and every difference with its
        interval and p-value, and the fastkappa version.

        Parameters
        ----------
        cluster_unit : str, default "cluster"
            What a cluster is, singular (e.g. ``"patient"``).
        subject : str, default "items"
            What the rows are (e.g. ``"eyes"``).
        references : bool, default True
            Append the reference list.

        Returns
        -------
        str

        Examples
        --------
        >>> import numpy as np
        >>> import fastkappa as fk
        >>> rng = np.random.default_rng(0)
        >>> y = rng.integers(0, 3, 300)
        >>> a = np.where(rng.random(300) < 0.8, y, rng.integers(0, 3, 300))
        >>> b = np.where(rng.random(300) < 0.6, y, rng.integers(0, 3, 300))
        >>> comp = fk.compare(y, {"a": a, "b": b}, method="asymptotic")
        >>> print(comp.methods_text(references=False))  # doctest: +ELLIPSIS
        Agreement with the reference labels was measured with Cohen's kappa (Cohen, 1960) \
for 2 models on 300 items. ...
        """
        return _display.comparison_methods_text(self, cluster_unit=cluster_unit,
                                                subject=subject, references=references)

    def to_dataframe(self, which: str = "pairs"):
        """The pairs (default) or the models as a pandas DataFrame (needs pandas).

        Pairs: ``a``, ``b``, ``difference``, ``low``, ``high``, ``p_value``,
        ``p_adjusted``, ``standard_error`` and the bound flags; models:
        ``model``, ``estimate``, ``low``, ``high``, ``standard_error``.
        """
        pd = _pandas()
        if which == "pairs":
            return pd.DataFrame([{**p.to_dict(), "difference": p.difference, "low": p.low,
                                  "high": p.high, "p_value": p.p_value,
                                  "p_adjusted": p.p_adjusted} for p in self.pairs])
        if which == "models":
            return pd.DataFrame([{"model": k, "estimate": v.estimate, "low": v.low,
                                  "high": v.high, "standard_error": v.standard_error}
                                 for k, v in self.models.items()])
        raise ValueError(f"`which` must be 'pairs' or 'models'; got {which!r}.")

    def __str__(self) -> str:
        return _display.comparison_text(self)

    def __format__(self, spec: str) -> str:
        return _display.comparison_text(self, spec) if spec else str(self)

    def __repr__(self) -> str:
        return (f"Comparison(models={list(self.models)}, n_pairs={len(self.pairs)}, "
                f"method={self.method!r}, reference={self.reference!r})")

    def _repr_html_(self) -> str:
        return _display.comparison_html(self)


# --------------------------------------------------------------------------- helpers


# --------------------------------------------------------------------------- groups


class GroupKappa(float):
    """One group's kappa: a float (the kappa) that also carries its row.

    ``result["site-a"]`` compares and computes as the group's kappa, and has
    the attributes ``group``, ``estimate``, ``n_rows``, ``low`` and ``high``
    (``kappa`` and ``n`` are aliases of ``estimate`` and ``n_rows``).
    """

    group: Any
    n_rows: float
    low: float
    high: float

    def __new__(cls, group, estimate: float, n_rows, low: float, high: float):
        obj = super().__new__(cls, estimate)
        obj.group, obj.n_rows, obj.low, obj.high = group, n_rows, low, high
        return obj

    @property
    def estimate(self) -> float:
        return float(self)

    kappa = _renamed("kappa", "estimate")
    n = _renamed("n", "n_rows")

    def _asdict(self) -> dict:
        return {"group": self.group, "estimate": float(self), "n_rows": self.n_rows,
                "low": self.low, "high": self.high}

    def __repr__(self) -> str:
        return (f"GroupKappa(group={self.group!r}, estimate={float(self)!r}, "
                f"n_rows={self.n_rows!r}, low={self.low!r}, high={self.high!r})")

    def __str__(self) -> str:
        return float.__repr__(self)

    def __reduce__(self):
        return (GroupKappa, (self.group, float(self), self.n_rows, self.low, self.high))


@dataclass(frozen=True, eq=False)
class KappaByGroup:
    """Kappa of every group, on the global class scale, plus the overall value.

    Attributes
    ----------
    groups : ndarray
        Sorted group keys.
    estimate : ndarray
        Kappa of each group (nan where undefined or where no row is left).
        ``kappa`` is an alias (the API contract's name).
    n_rows : ndarray
        Rows scored in each group (sum of ``sample_weight`` when weighted).
        ``n`` is an alias (the API contract's name).
    low, high : ndarray or None
        Interval bounds per group when ``method`` was given.
    overall : float
        Kappa of all scored rows together.
    confusion : ndarray of shape (G, K, K)
        Each group's confusion matrix.
    classes : ndarray
        The classes (global, fixed from the full data).
    weights : str
        ``"none"`` (unweighted), ``"linear"``, ``"quadratic"`` or ``"custom"``.
    method, confidence_level, n_resamples : optional
        The interval options (None without intervals).
    seed : int, list of int, SeedSequence or None
        The seed that reproduces the intervals (one child per group is
        spawned from it); None when nothing was drawn.
    """

    groups: np.ndarray = field(repr=False)
    estimate: np.ndarray = field(repr=False)
    n_rows: np.ndarray = field(repr=False)
    overall: float
    confusion: np.ndarray = field(repr=False)
    classes: np.ndarray = field(repr=False)
    weights: str | None = None
    low: np.ndarray | None = field(default=None, repr=False)
    high: np.ndarray | None = field(default=None, repr=False)
    method: str | None = None
    confidence_level: float | None = None
    n_resamples: int | None = None
    seed: Any = None

    kappa = _renamed("kappa", "estimate")
    n = _renamed("n", "n_rows")

    def __post_init__(self):
        object.__setattr__(self, "weights", _display.weights_name(self.weights))

    def __len__(self) -> int:
        return len(self.groups)

    def _index(self, group) -> int:
        hits = np.flatnonzero(self.groups == group) if len(self.groups) else []
        if len(hits) == 0:
            raise KeyError(group)
        return int(hits[0])

    def __getitem__(self, group) -> GroupKappa:
        i = self._index(group)
        low = float(self.low[i]) if self.low is not None else float("nan")
        high = float(self.high[i]) if self.high is not None else float("nan")
        key = self.groups[i]
        return GroupKappa(key.item() if isinstance(key, np.generic) else key,
                          float(self.estimate[i]), self.n_rows[i].item(), low, high)

    def __iter__(self):
        return (self[g] for g in self.groups)

    def to_dict(self) -> dict:
        """Plain Python data (NaN as None, so ``json.dumps`` writes valid JSON).

        One entry per group under ``"groups"``: ``group``, ``estimate``,
        ``n_rows`` (and ``low``, ``high`` with intervals).
        """
        return _display.by_group_dict(self)

    def to_dataframe(self):
        """A pandas DataFrame with one row per group (needs pandas).

        Columns ``group``, ``n_rows``, ``estimate`` (and ``low``, ``high``).
        """
        pd = _pandas()
        data = {"group": self.groups, "n_rows": self.n_rows, "estimate": self.estimate}
        if self.low is not None:
            data["low"], data["high"] = self.low, self.high
        return pd.DataFrame(data)

    def __str__(self) -> str:
        return _display.by_group_text(self)

    def __format__(self, spec: str) -> str:
        return _display.by_group_text(self, spec) if spec else str(self)

    def __repr__(self) -> str:
        return (f"KappaByGroup(n_groups={len(self)}, overall={_display.number(self.overall, 4)}"
                f", weights={self.weights!r}, method={self.method!r})")

    def _repr_html_(self) -> str:
        return _display.by_group_html(self)
