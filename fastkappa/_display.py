"""Every text, HTML and JSON format of fastkappa's results.

One number format (:func:`number`: fixed decimals, ``"nan"`` for an
undefined value, or any format spec, so ``format(result, ".3f")`` works on
every result), one p-value format (:func:`p_value`: a bootstrap p-value at its
floor of about 2/B prints as a bound, ``"p < 0.0002"``, and is flagged in
JSON), one way to name the weights and one way to make data JSON-ready. The
result classes (``results.py``, ``_agreement_result.py``), the command line
and the figures format through this module; it reads results by their
attributes and imports none of them.
"""

from __future__ import annotations

import html
import math
from typing import Any

import numpy as np

from ._core.units import DEFAULT_POOL_SIZE

# --------------------------------------------------------------------------- numbers


def number(x, digits: int = 3, spec: str = "") -> str:
    """``x`` with ``digits`` decimals (or formatted by ``spec``); ``"nan"`` when undefined."""
    if x is None or not math.isfinite(x):
        return "nan"
    return format(float(x), spec) if spec else f"{float(x):.{digits}f}"


def digits_for(*values, least: int = 2, most: int = 4) -> int:
    """Fewest decimals (from ``least`` to ``most``) that tell distinct values apart."""
    finite = [v for v in values if v is not None and math.isfinite(v)]

    def shown_as(v: float, d: int) -> str:  # "-0.00" and "0.00" read as the same number
        text = number(v, d)
        return text[1:] if text.startswith("-") and float(text) == 0 else text

    for d in range(least, most + 1):
        shown = [shown_as(v, d) for v in finite]
        if all((shown[i] != shown[j]) or (finite[i] == finite[j])
               for i in range(len(finite)) for j in range(i + 1, len(finite))):
            return d
    return most


def count(n) -> str:
    """Rows: an integer with thousands separators (two decimals if weighted)."""
    n = float(n)
    if not math.isfinite(n):
        return "nan"
    return f"{int(n):,}" if n.is_integer() else f"{n:,.2f}"


def level(confidence_level) -> str:
    """``0.95`` as ``"95%"`` (``""`` when not recorded)."""
    if confidence_level is None:
        return ""
    return f"{100 * float(confidence_level):.10g}%"


def method_label(method) -> str:
    """An interval method as printed (``"bca"`` as ``"BCa"``)."""
    return {"bca": "BCa"}.get(method, "" if method is None else str(method))


# --------------------------------------------------------------------------- weights


def weights_name(weights) -> str | None:
    """The name results record for ``weights``: ``"none"`` (None: unweighted),
    ``"linear"``, ``"quadratic"`` or ``"custom"`` (a matrix)."""
    if weights is None:
        return "none"
    if isinstance(weights, str):
        return weights
    return "custom"


def kappa_name(weights) -> str:
    """The coefficient as an axis label or a heading names it, with its weighting."""
    name = weights if weights is None or isinstance(weights, str) else "custom"
    return {None: "kappa", "none": "unweighted kappa",
            "linear": "linear-weighted kappa",
            "quadratic": "quadratic-weighted kappa (QWK)",
            "custom": "custom-weighted kappa"}.get(name, f"{name}-weighted kappa")


# --------------------------------------------------------------------------- p-values


def p_is_bound(p, n_replicates: int) -> bool:
    """Whether a bootstrap p-value sits at its floor (about 2 / B for B defined
    replicates), so that only a bound is known: the true p-value is at most that."""
    if p is None or not math.isfinite(p) or n_replicates < 2:
        return False
    return p <= 2.0 / n_replicates * (1 + 1e-9)


def p_value(p, *, bound: bool = False) -> str:
    """A p-value with three significant digits; a bound as ``"< 0.0002"``."""
    if p is None or not math.isfinite(p):
        return "nan"
    if p == 0:
        return "< 1e-300"
    return f"< {p:.2g}" if bound else f"{p:.3g}"


def p_text(p, *, bound: bool = False, name: str = "p") -> str:
    """``"p = 0.0123"``, or ``"p < 0.0002"`` for a p-value at its bootstrap floor."""
    shown = p_value(p, bound=bound)
    return f"{name} {shown}" if shown.startswith("<") else f"{name} = {shown}"


# --------------------------------------------------------------------------- JSON


def json_float(x) -> float | None:
    """A float for JSON: nan and inf become None."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def clean(x: Any) -> Any:
    """JSON-ready: NaN/inf as None, NumPy scalars and arrays as Python values."""
    if isinstance(x, dict):
        return {str(k): clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [clean(v) for v in x]
    if isinstance(x, np.ndarray):
        return clean(x.tolist())
    if isinstance(x, np.generic):
        return clean(x.item())
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def seed_to_json(seed) -> Any:
    """A recorded seed as JSON data: an int, a list of ints, or a SeedSequence
    spawned from one as ``{"entropy": ..., "spawn_key": [...]}`` (and its
    ``pool_size`` when not numpy's default); ``seed=`` takes each form back."""
    if seed is None or isinstance(seed, (int, list)):
        return seed
    if isinstance(seed, np.random.SeedSequence):
        out = {"entropy": seed.entropy, "spawn_key": list(seed.spawn_key)}
        if seed.pool_size != DEFAULT_POOL_SIZE:
            out["pool_size"] = seed.pool_size
        return out
    return seed


def weights_to_json(weights) -> Any:
    """``weights`` as JSON data: None, a name, or a matrix as nested lists."""
    if weights is None or isinstance(weights, str):
        return weights
    return np.asarray(weights, dtype=np.float64).tolist()


def version() -> str:
    """The fastkappa version, for provenance in ``to_dict()`` and JSON output."""
    from . import __version__

    return __version__


# --------------------------------------------------------------------------- tables


def text_table(rows: list[list[str]], left: tuple[int, ...] = (0,)) -> list[str]:
    """Rows of cells as aligned lines: columns in ``left`` flush left, the rest right."""
    if not rows:
        return []
    widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if j in left else c.rjust(w)
                      for j, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
            for r in rows]


def html_table(rows: list[list[str]]) -> str:
    """An HTML table: the first row as column titles, numbers aligned right."""
    def cell(j: int, text: str) -> str:
        align = "left" if j == 0 else "right"
        return f"<td style='text-align:{align}'>{html.escape(text)}</td>"

    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(cell(j, c) for j, c in enumerate(r)) + "</tr>"
                   for r in rows[1:])
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html_fields(caption: str, rows: list[tuple[str, str]]) -> str:
    """A two-column HTML table of ``(name, value)`` rows under a caption."""
    body = "".join(
        f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
        f"<td style='text-align:left'>{html.escape(v)}</td></tr>" for k, v in rows)
    return f"<table><caption>{html.escape(caption)}</caption>{body}</table>"


def html_with_heading(heading: str, *tables: str) -> str:
    return f"<p>{html.escape(heading)}</p>" + "".join(tables)


# --------------------------------------------------------------------------- KappaCI


def _ci_subject(weights) -> str:
    """What a KappaCI line names: ``kappa`` unweighted, else the weighting too."""
    name = weights_name(weights)
    if name in (None, "none"):
        return "kappa"
    return {"quadratic": "quadratic-weighted kappa"}.get(name, kappa_name(name))


def kappa_ci_text(res, spec: str = "") -> str:
    """``kappa = 0.68 (95% CI 0.48 to 0.88, asymptotic)``, or
    ``quadratic-weighted kappa = 0.86 (...)`` with weights; decimals from ``spec``
    or the fewest (two to four) that tell the three numbers apart."""
    d = digits_for(res.estimate, res.low, res.high)
    return (f"{_ci_subject(res.weights)} = {number(res.estimate, d, spec)} "
            f"({level(res.confidence_level)} CI "
            f"{number(res.low, d, spec)} to {number(res.high, d, spec)}, "
            f"{method_label(res.method)})")


def kappa_ci_html(res) -> str:
    d = digits_for(res.estimate, res.low, res.high, least=4, most=6)
    rows = [
        ("kappa", number(res.estimate, d)),
        (f"{level(res.confidence_level)} CI", f"{number(res.low, d)} to {number(res.high, d)}"),
        ("method", method_label(res.method)),
        ("standard error", number(res.standard_error, 4)),
    ]
    if res.method != "asymptotic" or res.n_resamples:
        rows.append(("replicates", f"{res.n_resamples:,} ({res.n_undefined:,} undefined)"))
    rows += [
        ("SE under H0", number(res.standard_error_null, 4)),
        ("z", number(res.z, 3)),
        ("p-value (two-sided, H0: kappa = 0)", p_value(res.p_value)),
    ]
    return html_fields("KappaCI", rows)


def kappa_ci_dict(res, *, distribution: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "estimate": json_float(res.estimate),
        "low": json_float(res.low),
        "high": json_float(res.high),
        "standard_error": json_float(res.standard_error),
        "method": res.method,
        "confidence_level": float(res.confidence_level),
        "n_resamples": int(res.n_resamples),
        "n_undefined": int(res.n_undefined),
        "standard_error_null": json_float(res.standard_error_null),
        "z": json_float(res.z),
        "p_value": json_float(res.p_value),
        "seed": seed_to_json(res.seed),
        "weights": weights_to_json(res.weights),
        "fastkappa_version": version(),
    }
    if distribution:
        out["distribution"] = [json_float(v) for v in np.asarray(res.distribution)]
    return out


# --------------------------------------------------------------------------- Comparison


def pair_p_texts(pair) -> tuple[str, str]:
    """The raw and the adjusted p-value of a pair as table cells (bounds as ``< x``)."""
    bound = pair.p_value_is_bound
    return p_value(pair.p_value, bound=bound), p_value(pair.p_adjusted, bound=bound)


def pair_dict(pair) -> dict[str, Any]:
    """A paired difference for JSON; a p-value at its bootstrap floor is flagged as a
    bound (the true p-value is at most that)."""
    out = {k: clean(getattr(pair, k)) for k in (
        "a", "b", "difference", "low", "high", "p_value", "p_adjusted", "standard_error")}
    out["p_value_is_bound"] = out["p_adjusted_is_bound"] = bool(pair.p_value_is_bound)
    return out


def pair_line(pair, spec: str = "+.4f") -> str:
    """``a - b: +0.0123 (-0.0100 to +0.0300), p = 0.0412`` (and the adjusted p)."""
    bound = pair.p_value_is_bound
    adjusted = ("" if pair.p_adjusted is None or pair.p_adjusted == pair.p_value
                else f", adjusted {p_text(pair.p_adjusted, bound=bound)}")
    return (f"{shown_name(pair.a)} - {shown_name(pair.b)}: {number(pair.difference, spec=spec)}"
            f" ({number(pair.low, spec=spec)} to {number(pair.high, spec=spec)}), "
            f"{p_text(pair.p_value, bound=bound)}{adjusted}")


def shown_name(name: str) -> str:
    """A name as printed: quoted when spaces at its ends (or nothing) would hide it."""
    name = str(name)
    return repr(name) if name != name.strip() or not name else name


def comparison_tables(comp, spec: str = "") -> tuple[list[list[str]], list[list[str]]]:
    """The models and the pairs as rows of text (first row: the column titles).

    Three decimals, more (up to five) where three would show an estimate and a
    bound as the same number, or as ``spec`` says. With ``p_adjust`` both the raw
    and the adjusted p-value are shown.
    """
    d = max([3, *(digits_for(v.estimate, v.low, v.high, least=3, most=5)
                  for v in comp.models.values())])
    models = [["model", "kappa", "low", "high"]]
    for k, v in comp.models.items():
        models.append([str(k), number(v.estimate, d, spec), number(v.low, d, spec),
                       number(v.high, d, spec)])
    d = max([3, *(digits_for(p.difference, p.low, p.high, least=3, most=5)
                  for p in comp.pairs)])
    adjusted = comp.p_adjust is not None
    label = {"holm": "Holm"}.get(comp.p_adjust, comp.p_adjust)
    pairs = [["pair", "difference", "low", "high", "p"]
             + ([f"p ({label})"] if adjusted else [])]
    for p in comp.pairs:
        raw, adj = pair_p_texts(p)
        pairs.append([f"{p.a} - {p.b}", number(p.difference, d, spec), number(p.low, d, spec),
                      number(p.high, d, spec), raw] + ([adj] if adjusted else []))
    return models, pairs


def comparison_heading(comp) -> str:
    return (f"{kappa_name(comp.weights)} of {len(comp.models)} models on {comp.n_rows:,} rows, "
            f"{level(comp.confidence_level)} CI ({comp.method}"
            + (f", {comp.n_resamples:,} paired resamples" if comp.method != "asymptotic"
               else "") + ")"
            + (f"; each model against {comp.reference}" if comp.reference is not None
               else ""))


def comparison_text(comp, spec: str = "") -> str:
    models, pairs = comparison_tables(comp, spec)
    return "\n".join([comparison_heading(comp), *text_table(models), "", *text_table(pairs)])


def comparison_html(comp) -> str:
    models, pairs = comparison_tables(comp)
    return html_with_heading(comparison_heading(comp), html_table(models), html_table(pairs))


def comparison_dict(comp) -> dict[str, Any]:
    return {
        "method": comp.method, "confidence_level": comp.confidence_level,
        "n_resamples": comp.n_resamples, "p_adjust": comp.p_adjust,
        "reference": comp.reference, "weights": weights_to_json(comp.weights),
        "n_rows": comp.n_rows, "n_clusters": comp.n_clusters,
        "seed": seed_to_json(comp.seed), "fastkappa_version": version(),
        "models": {k: kappa_ci_dict(v) for k, v in comp.models.items()},
        "pairs": [pair_dict(p) for p in comp.pairs],
    }


# --------------------------------------------------------------------------- KappaByGroup


def by_group_rows(res, spec: str = "") -> list[list[str]]:
    head = ["group", "n", "kappa"] + (["low", "high"] if res.low is not None else [])
    out = [head]
    for r in res:
        row = [str(r.group), count(r.n_rows), number(r.estimate, 4, spec)]
        if res.low is not None:
            row += [number(r.low, 4, spec), number(r.high, 4, spec)]
        out.append(row)
    return out


def by_group_heading(res) -> str:
    ci = "" if res.method is None else (
        f", {level(res.confidence_level)} CI by {method_label(res.method)}")
    return (f"{kappa_name(res.weights)} by group ({len(res)} groups{ci}); overall "
            f"{number(res.overall, 4)}")


def by_group_text(res, spec: str = "") -> str:
    return "\n".join([by_group_heading(res), *text_table(by_group_rows(res, spec), left=())])


def by_group_html(res) -> str:
    return html_with_heading(by_group_heading(res), html_table(by_group_rows(res)))


def by_group_dict(res) -> dict[str, Any]:
    rows = []
    for r in res:
        row = {"group": clean(r.group), "estimate": json_float(r.estimate),
               "n_rows": clean(r.n_rows)}
        if res.low is not None:
            row.update(low=json_float(r.low), high=json_float(r.high))
        rows.append(row)
    return {"overall": json_float(res.overall), "weights": weights_to_json(res.weights),
            "method": res.method, "confidence_level": res.confidence_level,
            "n_resamples": res.n_resamples, "seed": seed_to_json(res.seed),
            "fastkappa_version": version(), "groups": rows}


# --------------------------------------------------------------------------- Agreement

AGREEMENT_TITLES = {
    "percent_agreement": "percent agreement",
    "fleiss_kappa": "Fleiss' kappa",
    "conger_kappa": "Conger's kappa",
    "gwet_ac": "Gwet's AC1",
    "brennan_prediger": "Brennan-Prediger",
    "krippendorff_alpha": "Krippendorff's alpha",
    "light_kappa": "Light's kappa",
}


def agreement_row_dict(row) -> dict[str, Any]:
    return {"coefficient": row.coefficient, "estimate": json_float(row.estimate),
            "standard_error": json_float(row.standard_error),
            "low": json_float(row.low), "high": json_float(row.high),
            "p_value": json_float(row.p_value), "method": row.method,
            "n_undefined": int(row.n_undefined)}


def agreement_table(res, spec: str = "") -> list[list[str]]:
    d = max([3, *(digits_for(r.estimate, r.low, r.high, least=3, most=5) for r in res.rows)])
    out = [["coefficient", "estimate", "SE", "low", "high", "p", "method"]]
    for r in res.rows:
        title = ("Gwet's AC2" if r.coefficient == "gwet_ac" and res.weights is not None
                 else AGREEMENT_TITLES.get(r.coefficient, r.coefficient))
        out.append([title, number(r.estimate, d, spec), number(r.standard_error, 4),
                    number(r.low, d, spec), number(r.high, d, spec), p_value(r.p_value),
                    r.method])
    return out


def agreement_heading(res) -> str:
    how = {"asymptotic": "asymptotic (Gwet)", "bca": "BCa"}.get(res.method, res.method)
    if res.method != "asymptotic":
        how += f", {res.n_resamples:,} item resamples"
    if res.n_clusters is not None:
        how += f", {res.n_clusters} clusters"
    w = "" if res.weights is None else f", {weights_name(res.weights)} weights"
    # items without any rating are left out of every coefficient: say so
    unrated = getattr(res, "n_unrated", 0) or 0
    left = (f" ({unrated:,} more without a rating, left out)" if unrated else "")
    raters = f"{res.n_raters} {_plural('rater', res.n_raters)}" if res.n_raters else (
        "anonymous raters")
    return (f"agreement among {raters} on {res.n_items:,} {_plural('item', res.n_items)}"
            f"{left}, {len(res.classes)} {'class' if len(res.classes) == 1 else 'classes'}{w}; "
            f"{level(res.confidence_level)} "
            f"CI {how}")


#: under a bootstrap table: its SE column is not what the p-values use
_BOOTSTRAP_SE_NOTE = ("SE: standard deviation of the bootstrap replicates; p: from Gwet's "
                      "asymptotic standard error (normal reference).")


def agreement_text(res, spec: str = "") -> str:
    note = [] if res.method == "asymptotic" else [_BOOTSTRAP_SE_NOTE]
    return "\n".join([agreement_heading(res),
                      *text_table(agreement_table(res, spec), left=(0, 6)), *note])


def agreement_html(res) -> str:
    html = html_with_heading(agreement_heading(res), html_table(agreement_table(res)))
    return html if res.method == "asymptotic" else f"{html}<p>{_BOOTSTRAP_SE_NOTE}</p>"


def agreement_dict(res) -> dict[str, Any]:
    classes = [c.item() if isinstance(c, np.generic) else c for c in res.classes]
    return {
        "fastkappa_version": version(), "method": res.method,
        "confidence_level": float(res.confidence_level),
        "n_resamples": int(res.n_resamples), "seed": seed_to_json(res.seed),
        "weights": weights_name(res.weights),  # "none" when unweighted, as elsewhere
        "level": None if res.level is None else weights_name(res.level),
        "n_items": res.n_items, "n_unrated": res.n_unrated,
        "n_raters": res.n_raters, "n_clusters": res.n_clusters, "classes": classes,
        "coefficients": [agreement_row_dict(row) for row in res.rows],
    }


# --------------------------------------------------------------------------- methods text

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


def _interval_prose(method: str, shown_level: str, n_resamples: int, seed, n_clusters,
                    *, cluster_unit: str, subject: str, paired: bool) -> tuple[str, list[str]]:
    """The sentence on how the intervals were computed, and what it cites."""
    clustered = n_clusters is not None
    clusters = (f"{n_clusters:,} {_plural(cluster_unit, n_clusters)}" if clustered else "")
    intervals = ("The {level} confidence intervals" if paired
                 else "The {level} confidence interval").format(level=shown_level)
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


def kappa_ci_methods_text(res, *, cluster_unit: str, subject: str, references: bool) -> str:
    """The methods paragraph of :meth:`KappaCI.methods_text`."""
    coefficient, cited = _coefficient_prose(res.weights)
    on = "" if res.n_rows is None else f" on {res.n_rows:,} {subject}"
    shown_level = level(res.confidence_level)
    interval, refs = _interval_prose(res.method, shown_level, res.n_resamples, res.seed,
                                     res.n_clusters, cluster_unit=cluster_unit,
                                     subject=subject, paired=False)
    parts = [f"Agreement was measured with {coefficient}{on}.", interval]
    if res.n_undefined and res.method != "asymptotic":
        parts.append(f"{res.n_undefined:,} resamples with an undefined kappa were excluded.")
    d = digits_for(res.estimate, res.low, res.high)
    parts.append(f"Kappa was {number(res.estimate, d)} ({shown_level} CI {number(res.low, d)} to "
                 f"{number(res.high, d)}).")
    parts.append(f"Computed with fastkappa {version()}.")
    text = " ".join(parts)
    return text + _reference_list(cited + refs) if references else text


_REFERENCES_ORDER = list(_REFERENCES)


def _seed_text(seed) -> str:
    """A recorded seed in prose: ``5``, ``[1, 2]``, or ``5 (spawn key [1])``."""
    if isinstance(seed, np.random.SeedSequence):
        return f"{_seed_text(seed.entropy)} (spawn key {list(seed.spawn_key)})"
    return str(seed) if not isinstance(seed, (list, tuple)) else str(list(seed))



def comparison_methods_text(comp, *, cluster_unit: str, subject: str,
                            references: bool) -> str:
    """The methods paragraph of :meth:`Comparison.methods_text`."""
    coefficient, cited = _coefficient_prose(comp.weights)
    shown_level = level(comp.confidence_level)
    interval, refs = _interval_prose(comp.method, shown_level, comp.n_resamples, comp.seed,
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
             f"{len(comp.models)} models on {comp.n_rows:,} {subject}.", interval,
             f"The differences in kappa between {which} were estimated on the same "
             f"resamples, each with its interval and {how_p}{adjust}."]
    found = []
    for name, res in comp.models.items():
        d = digits_for(res.estimate, res.low, res.high)
        found.append(f"{number(res.estimate, d)} ({shown_level} CI {number(res.low, d)} to "
                     f"{number(res.high, d)}) for {name}")
    parts.append("Kappa was " + "; ".join(found) + ".")
    diffs = []
    for pair in comp.pairs:
        d = digits_for(pair.difference, pair.low, pair.high)
        diffs.append(f"{pair.a} - {pair.b}: {number(pair.difference, d)} ({shown_level} CI "
                     f"{number(pair.low, d)} to {number(pair.high, d)}, {_p_prose(pair, comp)})")
    parts.append("Differences: " + "; ".join(diffs) + ".")
    parts.append(f"Computed with fastkappa {version()}.")
    text = " ".join(parts)
    return text + _reference_list(cited) if references else text


def _p_prose(pair, comp) -> str:
    """'p = 0.0123', the adjusted p-value with ``p_adjust``; a bound (``p < 0.0002``)
    where a bootstrap p-value sits at its floor (about 2/B)."""
    adjusted = comp.p_adjust is not None
    return p_text(pair.p_adjusted if adjusted else pair.p_value, bound=pair.p_value_is_bound,
                  name="adjusted p" if adjusted else "p")
