"""One surface: every public entry point takes the shared keywords with one default.

The shared keywords of the design (input keywords, weights, interval options,
clusters, ``replace_undefined_by``) are checked on every public callable, on
``fastkappa.dask`` and on the command line's parser: each keyword exists,
has the one default, and has an entry in the numpydoc ``Parameters`` section.
Where an entry point differs on purpose, the difference is listed in
``EXCEPTIONS`` with its reason; an exception that no longer applies fails too,
so the list cannot go stale.
"""

from __future__ import annotations

import argparse
import inspect
import math

import pytest

import fastkappa as fk

numpydoc = pytest.importorskip("numpydoc.docscrape")

NAN = object()  # stands for the default nan (nan != nan)

#: the one default of each shared keyword
DEFAULTS = {
    "labels": None,
    "n_classes": None,
    "sample_weight": None,
    "ignore_index": None,
    "nan_policy": "raise",
    "thresholds": None,
    "weights": None,
    "method": "bca",
    "confidence_level": 0.95,
    "n_resamples": 10_000,
    "seed": None,
    "clusters": None,
    "replace_undefined_by": NAN,
}

INPUT = ("labels", "n_classes", "sample_weight", "ignore_index", "nan_policy", "thresholds")
INTERVAL = ("method", "confidence_level", "n_resamples", "seed")


def _dask():
    pytest.importorskip("dask")
    import fastkappa.dask as fkd

    return fkd


#: entry point -> (callable or a function returning it, the shared keywords it must take)
ENTRY_POINTS = {
    "confusion_matrix": (fk.confusion_matrix, INPUT),
    "cohen_kappa": (fk.cohen_kappa, (*INPUT, "weights", "replace_undefined_by")),
    "cohen_kappa_score": (fk.cohen_kappa_score,
                          ("labels", "weights", "sample_weight", "replace_undefined_by")),
    "kappa_from_confusion": (fk.kappa_from_confusion, ("weights", "replace_undefined_by")),
    "kappa_ci": (fk.kappa_ci, (*INPUT, "weights", *INTERVAL, "clusters")),
    "kappa_ci_from_confusion": (fk.kappa_ci_from_confusion, ("weights", *INTERVAL)),
    "compare": (fk.compare, (*INPUT, "weights", *INTERVAL, "clusters")),
    "kappa_by_group": (fk.kappa_by_group,
                       (*INPUT, "weights", *INTERVAL, "clusters", "replace_undefined_by")),
    "CohenKappa": (fk.CohenKappa, ("labels", "n_classes", "weights")),
    "CohenKappa.update": (fk.CohenKappa.update,
                          ("sample_weight", "ignore_index", "nan_policy", "thresholds")),
    "CohenKappa.compute": (fk.CohenKappa.compute, ("replace_undefined_by",)),
    "CohenKappa.ci": (fk.CohenKappa.ci, INTERVAL),
    "optimize_thresholds": (fk.optimize_thresholds,
                            ("labels", "n_classes", "weights", "sample_weight", "ignore_index",
                             "nan_policy")),
    "ThresholdOptimizer": (fk.ThresholdOptimizer,
                           ("labels", "n_classes", "weights", "seed", "ignore_index",
                            "nan_policy", "replace_undefined_by")),
    "ThresholdOptimizer.fit": (fk.ThresholdOptimizer.fit, ("sample_weight",)),
    "ThresholdOptimizer.score": (fk.ThresholdOptimizer.score, ("sample_weight",)),
    "apply_thresholds": (fk.apply_thresholds, ("labels",)),
    "continuous_qwk": (fk.continuous_qwk, ("sample_weight", "ignore_index", "nan_policy",
                                           "replace_undefined_by")),
    "agreement": (fk.agreement, ("labels", "n_classes", "weights", *INTERVAL, "clusters")),
    "agreement_by_category": (fk.agreement_by_category,
                              ("labels", "n_classes", *INTERVAL, "clusters")),
    **{name: (getattr(fk, name), ("labels", "n_classes", "weights", "replace_undefined_by"))
       for name in ("percent_agreement", "fleiss_kappa", "conger_kappa", "gwet_ac",
                    "brennan_prediger", "light_kappa")},
    "krippendorff_alpha": (fk.krippendorff_alpha,
                           ("labels", "n_classes", "replace_undefined_by")),
    "dask.confusion_matrix": (lambda: _dask().confusion_matrix, INPUT),
    "dask.cohen_kappa": (lambda: _dask().cohen_kappa,
                         (*INPUT, "weights", "replace_undefined_by")),
    "dask.accumulate": (lambda: _dask().accumulate, (*INPUT, "weights")),
    "dask.kappa_ci": (lambda: _dask().kappa_ci, (*INPUT, "weights", *INTERVAL, "clusters")),
    "dask.kappa_by_group": (lambda: _dask().kappa_by_group,
                            (*INPUT, "weights", *INTERVAL, "replace_undefined_by")),
}

#: (entry point, keyword) -> (the entry point's own default, why it differs)
DEFAULT_EXCEPTIONS = {
    ("kappa_by_group", "method"): (
        None, "per-group kappa computes no interval unless a method is asked for"),
    ("dask.kappa_by_group", "method"): (
        None, "per-group kappa computes no interval unless a method is asked for"),
    ("optimize_thresholds", "weights"): ("quadratic", "threshold tuning optimises QWK"),
    ("ThresholdOptimizer", "weights"): ("quadratic", "threshold tuning optimises QWK"),
    ("agreement", "method"): (
        "asymptotic", "Gwet's closed-form standard errors are the many-rater default"),
    ("agreement_by_category", "method"): (
        "asymptotic", "Gwet's closed-form standard errors are the many-rater default"),
}

#: keywords the many-rater functions take through ``**keywords`` (documented, not in the
#: signature): their data come as a matrix, long columns or counts, chosen by keyword
KEYWORDS_VIA_KWARGS = {"agreement", "agreement_by_category", "percent_agreement",
                       "fleiss_kappa", "conger_kappa", "gwet_ac", "brennan_prediger",
                       "krippendorff_alpha", "light_kappa"}

#: shared keywords an entry point does not take, with the reason
MISSING_EXCEPTIONS = {
    ("kappa_ci", "replace_undefined_by"): (
        "an interval reports an undefined estimate as nan (UndefinedKappaWarning): a "
        "substitute estimate with nan bounds would be an interval of nothing"),
    ("compare", "replace_undefined_by"): (
        "each model's KappaCI reports an undefined estimate as nan, as kappa_ci"),
    ("dask.kappa_ci", "replace_undefined_by"): "as kappa_ci",
    ("dask.kappa_by_group", "clusters"): (
        "groups are scored partition by partition; a cluster may span partitions"),
    ("optimize_thresholds", "thresholds"): "it computes the cut points from the scores",
    ("ThresholdOptimizer", "thresholds"): "it computes the cut points from the scores",
    # scikit-learn keeps data-independent settings on the estimator (clone,
    # GridSearchCV); score(X, y) then applies the same row handling as fit
    ("ThresholdOptimizer.fit", "ignore_index"): "a ThresholdOptimizer parameter",
    ("ThresholdOptimizer.fit", "nan_policy"): "a ThresholdOptimizer parameter",
    ("ThresholdOptimizer.score", "ignore_index"): "a ThresholdOptimizer parameter",
    ("ThresholdOptimizer.score", "nan_policy"): "a ThresholdOptimizer parameter",
    ("ThresholdOptimizer.score", "replace_undefined_by"): "a ThresholdOptimizer parameter",
}


def _resolve(obj):
    if inspect.isfunction(obj) and obj.__name__ == "<lambda>":
        return obj()
    return obj


def _parameters(obj) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(obj).parameters)


def _documented(obj) -> set[str]:
    doc = numpydoc.ClassDoc(obj) if inspect.isclass(obj) else numpydoc.FunctionDoc(obj)
    names = set()
    for entry in doc["Parameters"]:
        names.update(part.strip().lstrip("*") for part in entry.name.split(","))
    return names


def _same_default(got, want) -> bool:
    if want is NAN:
        return isinstance(got, float) and math.isnan(got)
    return type(got) is type(want) and got == want


CASES = [(name, kw) for name, (_, kws) in ENTRY_POINTS.items() for kw in kws]


@pytest.mark.parametrize(("name", "keyword"), CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_shared_keyword_exists_with_the_one_default_and_is_documented(name, keyword):
    obj = _resolve(ENTRY_POINTS[name][0])
    params = _parameters(obj)
    assert keyword in _documented(obj), f"{name}: no docstring entry for `{keyword}`"
    if keyword not in params:
        kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
        assert name in KEYWORDS_VIA_KWARGS and kwargs, f"{name} does not take `{keyword}`"
        return
    param = params[keyword]
    assert param.kind is param.KEYWORD_ONLY or name in (
        "kappa_from_confusion", "CohenKappa.update",
        "ThresholdOptimizer.score",  # scikit-learn's score(X, y, sample_weight=None)
    ), f"{name}: `{keyword}` is positional"
    want = DEFAULTS[keyword]
    if (name, keyword) in DEFAULT_EXCEPTIONS:
        want = DEFAULT_EXCEPTIONS[name, keyword][0]
    assert _same_default(param.default, want), (
        f"{name}: `{keyword}` defaults to {param.default!r}, not {want!r}")


@pytest.mark.parametrize(("name", "keyword"), sorted(MISSING_EXCEPTIONS))
def test_listed_exceptions_still_apply(name, keyword):
    """A keyword listed as not taken is indeed not taken (else drop the exception)."""
    params = _parameters(_resolve(ENTRY_POINTS[name][0]))
    assert keyword not in params, f"{name} now takes `{keyword}`: remove the exception"


@pytest.mark.parametrize(("name", "keyword"), sorted(DEFAULT_EXCEPTIONS))
def test_listed_default_exceptions_are_checked(name, keyword):
    assert keyword in ENTRY_POINTS[name][1]


def test_every_public_callable_is_walked():
    public = {n for n in fk.__all__ if callable(getattr(fk, n))
              and not (inspect.isclass(getattr(fk, n))
                       and issubclass(getattr(fk, n), Warning))}
    results = {"Agreement", "AgreementAccumulator", "Comparison", "KappaByGroup", "KappaCI",
               "PairDifference", "Thresholds"}  # result and accumulator types, no data keywords
    aliases = {"quadratic_weighted_kappa": "forwards its keywords to cohen_kappa",
               "weight_matrix": "builds a weight matrix from (n_classes, weights)"}
    assert public - results - set(aliases) <= set(ENTRY_POINTS)


def test_quadratic_weighted_kappa_forwards_the_input_keywords(rng):
    t = rng.integers(0, 4, 200)
    p = rng.integers(0, 4, 200)
    t[:5] = -1
    kw = {"ignore_index": -1, "n_classes": 4, "sample_weight": rng.random(200)}
    assert fk.quadratic_weighted_kappa(t, p, **kw) == fk.cohen_kappa(
        t, p, weights="quadratic", **kw)


# --------------------------------------------------------------------------- command line


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    from fastkappa.cli import make_parser

    parser = make_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def _option(sub: argparse.ArgumentParser, dest: str) -> argparse.Action:
    (action,) = [a for a in sub._actions if a.dest == dest]
    return action


#: command -> the Python function whose defaults its options follow
COMMANDS = {"score": fk.kappa_by_group, "compare": fk.compare}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("dest", ["weights", "method", "n_resamples", "confidence_level",
                                  "seed"])
def test_command_line_defaults_equal_the_python_defaults(command, dest):
    action = _option(_subparsers()[command], dest)
    python = _parameters(COMMANDS[command])[dest].default
    got = action.default
    if dest == "weights":
        got = None if got == "none" else got  # the command line spells None "none"
    assert got == python, f"fastkappa {command} {action.option_strings[0]}: {got!r} != {python!r}"
    assert "default" in (action.help or ""), f"{action.option_strings[0]} names no default"


def test_command_line_defaults_are_the_documented_ones():
    subs = _subparsers()
    assert _option(subs["compare"], "weights").default == "none"
    assert _option(subs["score"], "weights").default == "none"
    assert _option(subs["compare"], "method").default == "bca"
    # `score` adds an interval only when --method is given (kappa_by_group's method=None)
    assert _option(subs["score"], "method").default is None
    for command in ("score", "compare", "demo"):
        assert _option(subs[command], "n_resamples").default == 10_000
    for command in ("score", "compare"):
        assert _option(subs[command], "confidence_level").default == 0.95
    assert _option(subs["thresholds"], "weights").default == "quadratic"  # as optimize_thresholds


@pytest.mark.parametrize("dest", ["ignore_index", "nan_policy"])
def test_thresholds_command_takes_the_row_options_of_score(dest):
    subs = _subparsers()
    action = _option(subs["thresholds"], dest)
    assert action.option_strings == _option(subs["score"], dest).option_strings
    assert action.default == _parameters(fk.optimize_thresholds)[dest].default
