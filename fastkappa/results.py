"""Result objects: frozen dataclasses that print well and turn into dicts."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._install import install_hint

__all__ = ["Comparison", "GroupKappa", "KappaByGroup", "KappaCI", "PairDifference"]

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


def _version() -> str:
    """The fastkappa version, for provenance in ``to_dict()``."""
    from . import __version__

    return __version__


def seed_to_json(seed) -> Any:
    """A recorded seed as JSON data: an int, a list of ints, or a SeedSequence
    spawned from one as ``{"entropy": ..., "spawn_key": [...]}``."""
    if seed is None or isinstance(seed, (int, list)):
        return seed
    if isinstance(seed, np.random.SeedSequence):
        return {"entropy": seed.entropy, "spawn_key": list(seed.spawn_key)}
    return seed


def weights_to_json(weights) -> Any:
    """``weights`` as JSON data: None, a name, or a matrix as nested lists."""
    if weights is None or isinstance(weights, str):
        return weights
    return np.asarray(weights, dtype=np.float64).tolist()


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
    seed : int, list of int, SeedSequence or None
        The seed that reproduces the bootstrap (pass it back as ``seed=``);
        ``seed=None`` drew one from the OS and it is recorded here.  None for
        ``"asymptotic"``, which draws nothing, or when not recorded.
    weights : None, str or ndarray
        The kappa weights the estimate used (``"none"``, ``"linear"``,
        ``"quadratic"`` or the matrix); None when the producer did not record it.
    n_rows : int or None
        Rows scored (None when not recorded).
    n_clusters : int or None
        Clusters resampled with ``clusters=`` (None for independent rows).
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
        label = _METHOD_LABELS.get(self.method, self.method)
        d = _digits(self.estimate, self.low, self.high)
        return (f"kappa = {_fmt(self.estimate, d)} ({_level(self.confidence_level)} CI "
                f"{_fmt(self.low, d)} to {_fmt(self.high, d)}, {label})")

    def __repr__(self) -> str:
        # the line a REPL shows: the fields are attributes (and ``to_dict()``)
        return str(self)

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
            "seed": seed_to_json(self.seed),
            "weights": weights_to_json(self.weights),
            "version": _version(),
        }
        if distribution:
            out["distribution"] = [_json_float(v) for v in np.asarray(self.distribution)]
        return out

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
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(f"to_dataframe() needs pandas: {install_hint('pandas')}"
                              ) from None
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
        return _methods_text(self, cluster_unit=cluster_unit, subject=subject,
                             references=references)


_REFERENCES = {
    "cohen1960": "Cohen, J. (1960). A coefficient of agreement for nominal scales. "
                 "Educational and Psychological Measurement, 20(1), 37-46. "
                 "https://doi.org/10.1177/001316446002000104",
    "cohen1968": "Cohen, J. (1968). Weighted kappa: Nominal scale agreement provision for "
                 "scaled disagreement or partial credit. Psychological Bulletin, 70(4), "
                 "213-220. https://doi.org/10.1037/h0026256",
    "fce1969": "Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969). Large sample standard "
               "errors of kappa and weighted kappa. Psychological Bulletin, 72(5), 323-327. "
               "https://doi.org/10.1037/h0028106",
    "efron1987": "Efron, B. (1987). Better bootstrap confidence intervals. Journal of the "
                 "American Statistical Association, 82(397), 171-185. "
                 "https://doi.org/10.1080/01621459.1987.10478410",
    "efron1993": "Efron, B., & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. "
                 "Chapman & Hall. https://doi.org/10.1201/9780429246593",
    "field2007": "Field, C. A., & Welsh, A. H. (2007). Bootstrapping clustered data. "
                 "Journal of the Royal Statistical Society: Series B, 69(3), 369-390. "
                 "https://doi.org/10.1111/j.1467-9868.2007.00593.x",
    "holm1979": "Holm, S. (1979). A simple sequentially rejective multiple test procedure. "
                "Scandinavian Journal of Statistics, 6(2), 65-70.",
}

_METHOD_PROSE = {
    "bca": ("the bias-corrected and accelerated (BCa) bootstrap (Efron, 1987), with the "
            "acceleration from the exact jackknife", "efron1987"),
    "percentile": ("the percentile bootstrap (Efron & Tibshirani, 1993)", "efron1993"),
    "basic": ("the basic bootstrap (Efron & Tibshirani, 1993)", "efron1993"),
}


def _plural(word: str, n: int) -> str:
    return word if n == 1 or word.endswith("s") else word + "s"


def _coefficient_prose(weights: str | None) -> tuple[str, list[str]]:
    """How to name the coefficient, and what it cites."""
    if weights in ("linear", "quadratic"):
        return f"{weights}-weighted Cohen's kappa (Cohen, 1968)", ["cohen1968"]
    if weights == "custom":
        return ("weighted Cohen's kappa with a custom weight matrix (Cohen, 1968)",
                ["cohen1968"])
    if weights == "none":
        return "Cohen's kappa (Cohen, 1960)", ["cohen1960"]
    return "Cohen's kappa (Cohen, 1960, 1968)", ["cohen1960", "cohen1968"]  # not recorded


def _interval_prose(method: str, level: str, n_resamples: int, seed, n_clusters,
                    *, cluster_unit: str, subject: str, paired: bool) -> tuple[str, list[str]]:
    """The sentence on how the intervals were computed, and what it cites."""
    clustered = n_clusters is not None
    clusters = (f"{n_clusters:,} {_plural(cluster_unit, n_clusters)}" if clustered else "")
    intervals = ("The {level} confidence intervals" if paired
                 else "The {level} confidence interval").format(level=level)
    if method == "asymptotic":
        se = ("a cluster-robust version of the large-sample standard error of Fleiss, Cohen "
              f"and Everitt (1969), summing its influence values within each {cluster_unit} "
              f"({clusters})" if clustered else
              "the large-sample standard error of Fleiss, Cohen and Everitt (1969)")
        if paired:
            se += ", and for each difference the variance of the paired influence values"
        return f"{intervals} used {se}.", ["fce1969"]
    prose, ref = _METHOD_PROSE.get(method, (f"the {method} bootstrap", None))
    cited = [ref] if ref else []
    resampled = (f"resampling whole {_plural(cluster_unit, 2)} ({clusters}) to respect the "
                 "correlation of ratings within them (Field & Welsh, 2007)"
                 if clustered else f"resampling {subject} independently")
    if clustered:
        cited.append("field2007")
    draws = (f"{n_resamples:,} paired bootstrap resamples (every model scored on the same "
             "resamples)" if paired else f"{n_resamples:,} bootstrap resamples")
    seed_text = "" if seed is None else f", random seed {_seed_text(seed)}"
    return (f"{intervals} were computed with {prose}, from {draws}{seed_text}, {resampled}."
            if paired else
            f"{intervals} was computed with {prose}, from {draws}{seed_text}, {resampled}."
            ), cited


def _reference_list(cited: list[str]) -> str:
    keys = sorted(dict.fromkeys(cited), key=_REFERENCES_ORDER.index)
    return "\n\nReferences\n" + "\n".join(_REFERENCES[k] for k in keys)


def _methods_text(res: KappaCI, *, cluster_unit: str, subject: str, references: bool) -> str:
    from . import __version__

    coefficient, cited = _coefficient_prose(res.weights)
    on = "" if res.n_rows is None else f" on {res.n_rows:,} {subject}"
    level = _level(res.confidence_level)
    interval, refs = _interval_prose(res.method, level, res.n_resamples, res.seed,
                                     res.n_clusters, cluster_unit=cluster_unit,
                                     subject=subject, paired=False)
    parts = [f"Agreement was measured with {coefficient}{on}.", interval]
    if res.n_undefined and res.method != "asymptotic":
        parts.append(f"{res.n_undefined:,} resamples with an undefined kappa were excluded.")
    d = _digits(res.estimate, res.low, res.high)
    parts.append(f"Kappa was {_fmt(res.estimate, d)} ({level} CI {_fmt(res.low, d)} to "
                 f"{_fmt(res.high, d)}).")
    parts.append(f"Computed with fastkappa {__version__}.")
    text = " ".join(parts)
    return text + _reference_list(cited + refs) if references else text


_REFERENCES_ORDER = list(_REFERENCES)


def _seed_text(seed) -> str:
    return str(seed) if not isinstance(seed, (list, tuple)) else str(list(seed))


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
    distribution: np.ndarray = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        return {k: _clean(getattr(self, k)) for k in (
            "a", "b", "difference", "low", "high", "p_value", "p_adjusted", "standard_error")}


def _clean(v):
    v = v.item() if isinstance(v, np.generic) else v
    return None if isinstance(v, float) and not math.isfinite(v) else v


def _f(x: float, digits: int = 3) -> str:
    return "nan" if not math.isfinite(x) else f"{x:.{digits}f}"


def _p(x: float) -> str:
    if not math.isfinite(x):
        return "nan"
    return "<0.001" if x < 0.001 else f"{x:.3f}"


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
    weights : None, str or "custom"
    n : int
        Rows scored (the rows every model could be scored on).
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
    n: int
    classes: np.ndarray = field(repr=False)
    seed: Any = None
    n_clusters: int | None = None

    def pair(self, a: str, b: str) -> PairDifference:
        """The difference ``kappa[a] - kappa[b]`` (sign flipped if stored as (b, a))."""
        for pd_ in self.pairs:
            if (pd_.a, pd_.b) == (a, b):
                return pd_
            if (pd_.a, pd_.b) == (b, a):
                return PairDifference(a, b, -pd_.difference, -pd_.high, -pd_.low,
                                      pd_.p_value, pd_.p_adjusted, pd_.standard_error,
                                      None if pd_.distribution is None else -pd_.distribution)
        raise KeyError((a, b))

    def to_dict(self) -> dict:
        """Plain Python data (NaN as None, so ``json.dumps`` writes valid JSON)."""
        return {
            "method": self.method, "confidence_level": self.confidence_level,
            "n_resamples": self.n_resamples, "p_adjust": self.p_adjust,
            "reference": self.reference, "weights": self.weights, "n": self.n,
            "seed": seed_to_json(self.seed), "version": _version(),
            "models": {k: v.to_dict() for k, v in self.models.items()},
            "pairs": [p.to_dict() for p in self.pairs],
        }

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
        return _comparison_methods_text(self, cluster_unit=cluster_unit, subject=subject,
                                        references=references)

    def to_dataframe(self, which: str = "pairs"):
        """The pairs (default) or the models as a pandas DataFrame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(f"to_dataframe() needs pandas: {install_hint('pandas')}"
                              ) from None
        if which == "pairs":
            return pd.DataFrame([{**p.to_dict(), "difference": p.difference, "low": p.low,
                                  "high": p.high, "p_value": p.p_value,
                                  "p_adjusted": p.p_adjusted} for p in self.pairs])
        if which == "models":
            return pd.DataFrame([{"model": k, "kappa": v.estimate, "low": v.low,
                                  "high": v.high, "standard_error": v.standard_error}
                                 for k, v in self.models.items()])
        raise ValueError(f"`which` must be 'pairs' or 'models'; got {which!r}.")

    def _tables(self) -> tuple[list[list[str]], list[list[str]]]:
        """The models and the pairs as rows of text (first row: the column titles).

        Three decimals, more (up to five) where three would show an estimate
        and a bound as the same number. With ``p_adjust`` both the raw and the
        adjusted p-value are shown.
        """
        from .results import _digits

        d = max([3, *(_digits(v.estimate, v.low, v.high, least=3, most=5)
                      for v in self.models.values())])
        models = [["model", "kappa", "low", "high"]]
        for k, v in self.models.items():
            models.append([k, _f(v.estimate, d), _f(v.low, d), _f(v.high, d)])
        d = max([3, *(_digits(p.difference, p.low, p.high, least=3, most=5)
                      for p in self.pairs)])
        adjusted = self.p_adjust is not None
        label = {"holm": "Holm"}.get(self.p_adjust, self.p_adjust)
        pairs = [["a - b", "difference", "low", "high", "p"]
                 + ([f"p ({label})"] if adjusted else [])]
        for p in self.pairs:
            pairs.append([f"{p.a} - {p.b}", _f(p.difference, d), _f(p.low, d), _f(p.high, d),
                          _p(p.p_value)] + ([_p(p.p_adjusted)] if adjusted else []))
        return models, pairs

    def __str__(self) -> str:
        def fmt(rows):
            widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
            return ["  ".join(c.ljust(w) if j == 0 else c.rjust(w)
                              for j, (c, w) in enumerate(zip(r, widths, strict=True)))
                    for r in rows]

        models, pairs = self._tables()
        what = "kappa" if self.weights is None else f"{self.weights} kappa"
        head = (f"{what} of {len(self.models)} models on {self.n} rows, "
                f"{100 * self.confidence_level:g}% CI ({self.method}"
                + (f", {self.n_resamples} paired resamples" if self.method != "asymptotic"
                   else "") + ")"
                + (f"; each model against {self.reference}" if self.reference is not None
                   else ""))
        return "\n".join([head, *fmt(models), "", *fmt(pairs)])

    def __repr__(self) -> str:
        return (f"Comparison(models={list(self.models)}, n_pairs={len(self.pairs)}, "
                f"method={self.method!r}, reference={self.reference!r})")

    def _repr_html_(self) -> str:
        models, pairs = self._tables()
        return (f"<p>{html.escape(str(self).splitlines()[0])}</p>" + _html_table(models)
                + _html_table(pairs))


def _comparison_methods_text(comp: Comparison, *, cluster_unit: str, subject: str,
                             references: bool) -> str:
    from . import __version__

    coefficient, cited = _coefficient_prose("none" if comp.weights is None else comp.weights)
    level = _level(comp.confidence_level)
    interval, refs = _interval_prose(comp.method, level, comp.n_resamples, comp.seed,
                                     comp.n_clusters, cluster_unit=cluster_unit,
                                     subject=subject, paired=True)
    cited += refs
    which = ("every pair of models" if comp.reference is None
             else f"each model and {comp.reference}")
    if comp.method == "asymptotic":
        how_p = "two-sided normal p-values from the paired influence values"
    else:
        how_p = ("a p-value as the smallest level at which its interval excludes 0 "
                 f"(at best about 2/{comp.n_resamples:,})")
    adjust = ""
    if comp.p_adjust == "holm":
        adjust = (f", adjusted for the {len(comp.pairs)} comparisons with Holm's method "
                  "(Holm, 1979)")
        cited.append("holm1979")
    parts = [f"Agreement with the reference labels was measured with {coefficient} for "
             f"{len(comp.models)} models on {comp.n:,} {subject}.", interval,
             f"The differences in kappa between {which} were estimated on the same "
             f"resamples, each with its interval and {how_p}{adjust}."]
    found = []
    for name, res in comp.models.items():
        d = _digits(res.estimate, res.low, res.high)
        found.append(f"{_fmt(res.estimate, d)} ({level} CI {_fmt(res.low, d)} to "
                     f"{_fmt(res.high, d)}) for {name}")
    parts.append("Kappa was " + "; ".join(found) + ".")
    diffs = []
    for pair in comp.pairs:
        d = _digits(pair.difference, pair.low, pair.high)
        diffs.append(f"{pair.a} - {pair.b}: {_fmt(pair.difference, d)} ({level} CI "
                     f"{_fmt(pair.low, d)} to {_fmt(pair.high, d)}, {_p_prose(pair, comp)})")
    parts.append("Differences: " + "; ".join(diffs) + ".")
    parts.append(f"Computed with fastkappa {__version__}.")
    text = " ".join(parts)
    return text + _reference_list(cited) if references else text


def _p_prose(pair: PairDifference, comp: Comparison) -> str:
    """'p = 0.012'; a bound where a bootstrap p-value sits at its floor (about 2/B)."""
    adjusted = comp.p_adjust is not None
    p = pair.p_adjusted if adjusted else pair.p_value
    name = "adjusted p" if adjusted else "p"
    if not math.isfinite(p):
        return f"{name} = nan"
    if comp.method != "asymptotic" and pair.p_value <= 2.0 / comp.n_resamples:
        # the resamples cannot show a smaller p-value: report the bound, not a value
        return f"{name} <= {p:.2g}" if adjusted else f"p < {2.0 / comp.n_resamples:.2g}"
    return f"{name} < 0.001" if p < 0.001 else f"{name} = {p:.3f}"


def _html_table(rows: list[list[str]]) -> str:
    """An HTML table: the first row as column titles, numbers aligned right."""
    def cell(j: int, text: str) -> str:
        align = "left" if j == 0 else "right"
        return f"<td style='text-align:{align}'>{html.escape(text)}</td>"

    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(cell(j, c) for j, c in enumerate(r)) + "</tr>"
                   for r in rows[1:])
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


# --------------------------------------------------------------------------- helpers


# --------------------------------------------------------------------------- groups


class GroupKappa(float):
    """One group's kappa: a float (the kappa) that also carries its row.

    ``result["site-a"]`` compares and computes as the group's kappa, and has
    the attributes ``group``, ``kappa``, ``n``, ``low`` and ``high``.
    """

    group: Any
    n: float
    low: float
    high: float

    def __new__(cls, group, kappa: float, n, low: float, high: float):
        obj = super().__new__(cls, kappa)
        obj.group, obj.n, obj.low, obj.high = group, n, low, high
        return obj

    @property
    def kappa(self) -> float:
        return float(self)

    def _asdict(self) -> dict:
        return {"group": self.group, "kappa": float(self), "n": self.n, "low": self.low,
                "high": self.high}

    def __repr__(self) -> str:
        return (f"GroupKappa(group={self.group!r}, kappa={float(self)!r}, n={self.n!r}, "
                f"low={self.low!r}, high={self.high!r})")

    def __str__(self) -> str:
        return float.__repr__(self)

    def __reduce__(self):
        return (GroupKappa, (self.group, float(self), self.n, self.low, self.high))


def _fmt_kappa(x: float) -> str:
    return "nan" if not np.isfinite(x) else f"{x:.4f}"


def _fmt_n(n) -> str:
    """Rows in a group: an integer with thousands separators (two decimals if weighted)."""
    n = float(n)
    return f"{int(n):,}" if n.is_integer() else f"{n:,.2f}"


@dataclass(frozen=True, eq=False)
class KappaByGroup:
    """Kappa of every group, on the global class scale, plus the overall value.

    Attributes
    ----------
    groups : ndarray
        Sorted group keys.
    kappa : ndarray
        Kappa of each group (nan where undefined or where no row is left).
    n : ndarray
        Rows scored in each group (sum of ``sample_weight`` when weighted).
    low, high : ndarray or None
        Interval bounds per group when ``ci`` was a method.
    overall : float
        Kappa of all scored rows together.
    confusion : ndarray of shape (G, K, K)
        Each group's confusion matrix.
    classes : ndarray
        The classes (global, fixed from the full data).
    method, confidence_level, n_resamples : optional
        The interval options (None without intervals).
    seed : int, list of int, SeedSequence or None
        The seed that reproduces the intervals (one child per group is
        spawned from it); None when nothing was drawn.
    """

    groups: np.ndarray = field(repr=False)
    kappa: np.ndarray = field(repr=False)
    n: np.ndarray = field(repr=False)
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
        return GroupKappa(self.groups[i].item() if isinstance(self.groups[i], np.generic)
                          else self.groups[i], float(self.kappa[i]), self.n[i].item(), low, high)

    def __iter__(self):
        return (self[g] for g in self.groups)

    def to_dict(self) -> dict:
        """Plain Python data (NaN as None, so ``json.dumps`` writes valid JSON)."""

        def clean(v):
            v = v.item() if isinstance(v, np.generic) else v
            return None if isinstance(v, float) and not np.isfinite(v) else v

        rows = [{k: clean(v) for k, v in r._asdict().items()} for r in self]
        if self.low is None:
            for r in rows:
                del r["low"], r["high"]
        return {"overall": clean(self.overall), "weights": weights_to_json(self.weights),
                "method": self.method, "confidence_level": self.confidence_level,
                "n_resamples": self.n_resamples, "seed": seed_to_json(self.seed),
                "version": _version(), "groups": rows}

    def to_dataframe(self):
        """A pandas DataFrame with one row per group (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(f"to_dataframe() needs pandas: {install_hint('pandas')}"
                              ) from None
        data = {"group": self.groups, "n": self.n, "kappa": self.kappa}
        if self.low is not None:
            data["low"], data["high"] = self.low, self.high
        return pd.DataFrame(data)

    def _rows(self) -> list[list[str]]:
        head = ["group", "n", "kappa"] + (["low", "high"] if self.low is not None else [])
        out = [head]
        for r in self:
            row = [str(r.group), _fmt_n(r.n), _fmt_kappa(r.kappa)]
            if self.low is not None:
                row += [_fmt_kappa(r.low), _fmt_kappa(r.high)]
            out.append(row)
        return out

    def __str__(self) -> str:
        rows = self._rows()
        widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
        lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
        what = "kappa" if self.weights is None else f"{self.weights} kappa"
        ci = "" if self.method is None else (
            f", {100 * self.confidence_level:g}% CI by {self.method}")
        return "\n".join([f"{what} by group ({len(self)} groups{ci}); overall "
                          f"{_fmt_kappa(self.overall)}", *lines])

    def __repr__(self) -> str:
        return (f"KappaByGroup(n_groups={len(self)}, overall={self.overall:.4f}, "
                f"weights={self.weights!r}, method={self.method!r})")

    def _repr_html_(self) -> str:
        import html

        rows = self._rows()
        head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
        body = "".join(
            "<tr>" + "".join(f"<td style='text-align:{'left' if j == 0 else 'right'}'>"
                             f"{html.escape(c)}</td>" for j, c in enumerate(r)) + "</tr>"
            for r in rows[1:])
        return (f"<p>{html.escape(str(self).splitlines()[0])}</p>"
                f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
