"""Agreement among many raters: Fleiss, Conger, Gwet, Brennan-Prediger, Krippendorff.

Thin entry points: check options -> encode (``_raters_input``) -> item types
and features (``raters``) -> values, Gwet's variances or an item bootstrap ->
result.  The mathematics is in :mod:`fastkappa.raters`.

Input (one of three forms, the same keywords everywhere):

* wide ``ratings`` of shape (n_items, n_raters), missing ratings as
  NaN/None/pd.NA or ``missing=value``;
* long format ``item=``, ``rater=``, ``label=`` (one row per rating, any
  order, string or integer ids);
* ``counts=`` of shape (n_items, K): raters per item and class (anonymous
  raters; Conger's kappa is not available).

Items with no rating at all carry no information and are left out (the
:class:`Agreement` result reports how many).  Items with a single rating
count in the class shares ``pi_k`` of Fleiss, Gwet and Brennan-Prediger
(and in Conger's rater shares) but not in the observed agreement ``p_a``;
Krippendorff's alpha uses pairable values only (items with two or more).
"""

from __future__ import annotations

import difflib
import inspect
import math
import statistics
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import raters as _r
from ._agreement_result import _TITLES, Agreement, AgreementRow
from ._core.caller import user_stacklevel
from ._core.dispatch import raters_kernels
from ._core.options import check_replace_undefined_by
from ._core.units import seed_record
from ._raters_input import RatingsTable, distinct_float_rows, encode_ratings
from .exceptions import UndefinedKappaWarning

__all__ = ["Agreement", "AgreementRow", "agreement", "brennan_prediger", "conger_kappa",
           "fleiss_kappa", "gwet_ac", "krippendorff_alpha", "light_kappa",
           "percent_agreement"]

_NORMAL = statistics.NormalDist()


_DATA_KEYWORDS = ("item", "rater", "label", "counts", "labels", "n_classes", "missing")


def _encode(ratings, keywords: dict, weighted: bool, func=None) -> RatingsTable:
    """Encode the ratings; a keyword that is neither a data keyword nor an option of
    ``func`` (the public function called) is a ``TypeError`` naming the closest."""
    unknown = sorted(set(keywords) - set(_DATA_KEYWORDS))
    if unknown:
        options = ([p for p in inspect.signature(func).parameters
                    if p not in ("ratings", "keywords")] if func is not None else [])
        close = difflib.get_close_matches(unknown[0], [*options, *_DATA_KEYWORDS], n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        if not close and unknown[0] in inspect.signature(agreement).parameters:
            hint = (f" ({unknown[0]!r} is an option of fastkappa.agreement, which gives "
                    "standard errors and intervals)")
        takes = (f"{func.__name__}() takes {', '.join(options)} and the data keywords "
                 if options else "the data keywords are ")
        raise TypeError(
            f"unexpected keyword argument {unknown[0]!r}{hint}; {takes}"
            f"{', '.join(_DATA_KEYWORDS[:-1])} and {_DATA_KEYWORDS[-1]}.")
    return encode_ratings(ratings, weighted=weighted, **keywords)


def _is_weighted(weights) -> bool:
    return not (weights is None or (isinstance(weights, str) and weights == "none"))


def _norm_weights(weights):
    """``"none"`` as None; unknown weight names raise before the data are read."""
    if isinstance(weights, str):
        if weights == "none":
            return None
        _r._weights.is_named(weights)  # ValueError for unknown names
    return weights


def _level_weighted(level) -> bool:
    return not (isinstance(level, str) and level == "nominal")


def _undefined(name: str, replace_undefined_by: Any = None, why: str | None = None
               ) -> float:
    """Warn that coefficient ``name`` is undefined; return its stand-in (nan by default).

    ``why``: the reason and what to do, in place of the generic ones."""
    returned = ("nan" if replace_undefined_by is None
                else f"replace_undefined_by={replace_undefined_by!r}")
    if why is None:
        why = ("(no item has two ratings, or the chance agreement is 1, e.g. every rating "
               "in one class); returning {returned}. If the data lack classes of the "
               "scale, declaring the full scale (`labels=` or `n_classes=`) counts them.")
    warnings.warn(f"{_TITLES[name]} is undefined for these data {why.format(returned=returned)}",
                  UndefinedKappaWarning, stacklevel=user_stacklevel())
    return math.nan if replace_undefined_by is None else replace_undefined_by


def _light_undefined_why(table: RatingsTable, conf: np.ndarray, a: np.ndarray) -> str:
    """The rater pairs that make Light's kappa undefined, named with their common items
    (``conf``: the (P, K, K) confusions of :func:`fastkappa.raters.rater_pairs`)."""
    bad, common = _r.undefined_pairs(conf, a)
    gi, hi = _r.rater_pairs(table.codes.shape[1])
    shown = [f"raters {table.raters[gi[p]]!r} and {table.raters[hi[p]]!r} ({c} common "
             f"item{'' if c == 1 else 's'})" for p, c in zip(bad[:3], common[:3], strict=True)]
    more = f" and {len(bad) - 3} more pairs" if len(bad) > 3 else ""
    return (f"(the chance agreement of {'; '.join(shown)}{more} is 1, e.g. both raters "
            "put every item they share in the same class, so that pair's Cohen's kappa, "
            "hence the mean over pairs, is undefined); returning {returned}. Declaring "
            "more classes does not change this: rate such a pair on more items, drop one "
            "of its raters, or use a coefficient that pools the raters (Fleiss' kappa, "
            "Krippendorff's alpha).")


def _silent_conger(table: RatingsTable) -> bool:
    """Whether a rater has no rating, so that Conger's kappa is undefined (warned)."""
    silent = _r.silent_raters(table) if table.has_codes else []
    if silent:
        warnings.warn(
            f"rater {silent[0]!r} has no rating ({len(silent)} such), so Conger's kappa, "
            "which averages over raters, is undefined; returning nan for it. Drop that "
            "rater's column to score it.", UndefinedKappaWarning,
            stacklevel=user_stacklevel())
    return bool(silent)


def _check_pairs(table: RatingsTable) -> None:
    pairable = table.n_pairable
    if pairable is None:
        pairable = int(np.count_nonzero(table.counts.sum(axis=1) >= 2))
    if not pairable:
        raise ValueError(
            "no item has two or more ratings, so agreement cannot be measured; each item "
            "needs ratings from at least two raters.")


def _one(name: str, ratings, weights, level, keywords, replace_undefined_by) -> float:
    replace_undefined_by = check_replace_undefined_by(replace_undefined_by)
    weights = _norm_weights(weights)
    if name == "krippendorff_alpha":
        _r.check_level(level)
        table = _encode(ratings, keywords, _level_weighted(level), globals()[name])
    else:
        table = _encode(ratings, keywords, _is_weighted(weights), globals()[name])
    _check_pairs(table)
    if name == "conger_kappa" and _silent_conger(table):
        return math.nan if replace_undefined_by is None else replace_undefined_by
    model = _r.build_model(table, (name,), weights, level, estimate_only=True)
    v = float(_r.values(model, model.total)[name][0])
    return v if math.isfinite(v) else _undefined(name, replace_undefined_by)


_KEYWORDS_DOC = """    ratings : array_like of shape (n_items, n_raters), optional
        One row per item, one column per rater (NumPy, lists, pandas,
        polars or pyarrow tables); missing ratings as NaN/None/pd.NA or
        ``missing=``.
    item, rater, label : array_like of shape (n_rows,), optional
        Long format instead of ``ratings``: one row per rating.  Ids are
        integers or strings, compared as Python values: ``0`` and ``"0"`` are
        two ids.
    counts : array_like of shape (n_items, K), optional
        Raters per item and class instead of ``ratings``.
    labels : array_like, optional
        The classes in scale order.
    n_classes : int, optional
        Classes are ``0..n_classes-1``.
    missing : scalar, optional
        A label value that marks a missing rating (e.g. -1 or ""), of the
        ratings' kind: a number on string ratings is a ``ValueError``, and so
        is a marker among the declared classes (``labels``, ``n_classes``)."""

_UNDEFINED_DOC = """    replace_undefined_by : float, default nan
        Returned, with an :class:`~fastkappa.UndefinedKappaWarning`, when the
        coefficient is undefined (chance agreement of 1, e.g. every rating in
        one class), as in :func:`fastkappa.cohen_kappa`."""


def percent_agreement(ratings: ArrayLike | None = None, *,
                      weights: str | ArrayLike | None = None,
                      replace_undefined_by: float = np.nan, **keywords: Any) -> float:
    """Observed agreement ``p_a``: the share of agreeing rater pairs per item, averaged.

    Parameters
    ----------
    {keywords}
    weights : None, 'linear', 'quadratic' or array_like of shape (K, K)
        Disagreement weights by class index (as :func:`fastkappa.cohen_kappa`);
        pairs of ratings count with agreement weight ``1 - w / max(w)``.
    {undefined}

    Returns
    -------
    float
        ``p_a = (1/n') sum_i sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1))`` over
        the ``n'`` items with at least two ratings.

    Notes
    -----
    Items with a single rating do not enter ``p_a`` (no pair to compare).

    References
    ----------
    .. [1] Fleiss, J. L. (1971). Measuring nominal scale agreement among many
       raters. Psychological Bulletin, 76(5), 378-382.
       https://doi.org/10.1037/h0031619 (``P_bar``, the mean pairwise agreement).
    .. [2] Gwet, K. L. (2014). Handbook of Inter-Rater Reliability (4th ed.),
       chapter 2. Advanced Analytics (the weighted form, with missing ratings).

    Examples
    --------
    >>> import fastkappa as fk
    >>> ratings = [[1, 1, 1], [1, 2, 2], [3, 3, 3], [2, 2, None]]
    >>> round(fk.percent_agreement(ratings), 4)
    0.8333
    """
    return _one("percent_agreement", ratings, weights, None, keywords, replace_undefined_by)


def fleiss_kappa(ratings: ArrayLike | None = None, *,
                 weights: str | ArrayLike | None = None,
                 replace_undefined_by: float = np.nan, **keywords: Any) -> float:
    """Fleiss' kappa (a generalised Scott's pi), weighted when ``weights`` is given.

    Parameters
    ----------
    {keywords}
    weights : None, 'linear', 'quadratic' or array_like of shape (K, K)
        Disagreement weights by class index.
    {undefined}

    Returns
    -------
    float
        ``(p_a - p_e) / (1 - p_e)`` with ``p_e = sum_kl a_kl pi_k pi_l`` and
        ``pi_k`` the mean share of class k over the rated items. With two
        raters and no missing rating it equals Scott's pi. nan (with an
        :class:`~fastkappa.UndefinedKappaWarning`) when ``p_e = 1``.

    Notes
    -----
    Items with a single rating count in the class shares ``pi_k`` but not in
    ``p_a``; items with no rating are left out.

    References
    ----------
    .. [1] Fleiss, J. L. (1971). Measuring nominal scale agreement among many
       raters. Psychological Bulletin, 76(5), 378-382.
    .. [2] Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed.

    Examples
    --------
    >>> import fastkappa as fk
    >>> ratings = [[1, 1, 1], [1, 2, 2], [3, 3, 3], [2, 2, None]]
    >>> round(fk.fleiss_kappa(ratings), 4)
    0.7447
    """
    return _one("fleiss_kappa", ratings, weights, None, keywords, replace_undefined_by)


def conger_kappa(ratings: ArrayLike | None = None, *,
                 weights: str | ArrayLike | None = None,
                 replace_undefined_by: float = np.nan, **keywords: Any) -> float:
    """Conger's kappa (a generalised Cohen's kappa), weighted when ``weights`` is given.

    Needs rater identity: wide ``ratings`` or long format (not ``counts=``).

    Parameters
    ----------
    {keywords}
    weights : None, 'linear', 'quadratic' or array_like of shape (K, K)
        Disagreement weights by class index.
    {undefined}

    Returns
    -------
    float
        ``(p_a - p_e) / (1 - p_e)`` with ``p_e = sum_kl a_kl (pbar_k pbar_l -
        s_kl / R)``, ``p_gk`` the share of rater g's items in class k. With
        two raters and no missing rating it equals Cohen's kappa.

    Notes
    -----
    Items with a single rating count in the raters' class shares ``p_gk``
    but not in ``p_a``; items with no rating are left out.  A rater with no
    rating at all has no class shares: the coefficient is undefined then
    (``replace_undefined_by``, with a warning naming the rater; in
    :func:`agreement` the other coefficients are still scored).

    References
    ----------
    .. [1] Conger, A. J. (1980). Integration and generalization of kappas for
       multiple raters. Psychological Bulletin, 88(2), 322-328.

    Examples
    --------
    >>> import fastkappa as fk
    >>> ratings = [[1, 1, 1], [1, 2, 2], [3, 3, 3], [2, 2, None]]
    >>> round(fk.conger_kappa(ratings), 4)
    0.7526
    """
    return _one("conger_kappa", ratings, weights, None, keywords, replace_undefined_by)


def gwet_ac(ratings: ArrayLike | None = None, *,
            weights: str | ArrayLike | None = None,
            replace_undefined_by: float = np.nan, **keywords: Any) -> float:
    """Gwet's AC1 (unweighted) or AC2 (weighted) agreement coefficient.

    Parameters
    ----------
    {keywords}
    weights : None, 'linear', 'quadratic' or array_like of shape (K, K)
        Disagreement weights by class index (AC2 when given).
    {undefined}

    Returns
    -------
    float
        ``(p_a - p_e) / (1 - p_e)`` with ``p_e = T_a / (K (K - 1)) sum_k
        pi_k (1 - pi_k)``, ``T_a`` the sum of the agreement weights.

    Notes
    -----
    Items with a single rating count in the class shares ``pi_k`` but not in
    ``p_a``; items with no rating are left out. ``K`` is the number of
    classes, so declare the scale (``labels=`` / ``n_classes=``).

    References
    ----------
    .. [1] Gwet, K. L. (2008). Computing inter-rater reliability and its
       variance in the presence of high agreement. British Journal of
       Mathematical and Statistical Psychology, 61, 29-48.

    Examples
    --------
    >>> import fastkappa as fk
    >>> ratings = [[1, 1, 1], [1, 2, 2], [3, 3, 3], [2, 2, None]]
    >>> round(fk.gwet_ac(ratings), 4)
    0.7526
    """
    return _one("gwet_ac", ratings, weights, None, keywords, replace_undefined_by)


def brennan_prediger(ratings: ArrayLike | None = None, *,
                     weights: str | ArrayLike | None = None,
                     replace_undefined_by: float = np.nan, **keywords: Any) -> float:
    """Brennan and Prediger's coefficient (chance agreement ``T_a / K^2``).

    Parameters
    ----------
    {keywords}
    weights : None, 'linear', 'quadratic' or array_like of shape (K, K)
        Disagreement weights by class index.
    {undefined}

    Returns
    -------
    float

    Notes
    -----
    Items with a single rating do not enter ``p_a``; ``K`` is the number of
    classes, so declare the scale (``labels=`` / ``n_classes=``).

    References
    ----------
    .. [1] Brennan, R. L., & Prediger, D. J. (1981). Coefficient kappa: some
       uses, misuses, and alternatives. Educational and Psychological
       Measurement, 41, 687-699.

    Examples
    --------
    >>> import fastkappa as fk
    >>> ratings = [[1, 1, 1], [1, 2, 2], [3, 3, 3], [2, 2, None]]
    >>> round(fk.brennan_prediger(ratings), 4)
    0.75
    """
    return _one("brennan_prediger", ratings, weights, None, keywords, replace_undefined_by)


def krippendorff_alpha(ratings: ArrayLike | None = None, *,
                       level: str | ArrayLike = "nominal",
                       replace_undefined_by: float = np.nan, **keywords: Any) -> float:
    """Krippendorff's alpha from the coincidence matrix.

    Parameters
    ----------
    {keywords}
    level : {{'nominal', 'ordinal', 'interval', 'ratio'}} or array_like of shape (K, K)
        Level of measurement: the disagreement ``d_kl`` between classes.
        ``'interval'`` and ``'ratio'`` use the label *values* (numbers);
        ``'ordinal'`` uses the class order and marginal frequencies; a matrix
        gives the disagreements directly (zero diagonal).
    {undefined}

    Returns
    -------
    float
        ``1 - (n - 1) sum o_kl d_kl / sum_kl n_k n_l d_kl``.

    Notes
    -----
    Only pairable values count: items with a single rating are left out
    entirely, as Krippendorff defines alpha.

    References
    ----------
    .. [1] Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability.
       Annenberg School for Communication Departmental Papers 43.

    Examples
    --------
    >>> import fastkappa as fk
    >>> ratings = [[1, 1, 1], [1, 2, 2], [3, 3, 3], [2, 2, None]]
    >>> round(fk.krippendorff_alpha(ratings), 4)
    0.75
    """
    return _one("krippendorff_alpha", ratings, None, level, keywords, replace_undefined_by)


def light_kappa(ratings: ArrayLike | None = None, *,
                weights: str | ArrayLike | None = None,
                replace_undefined_by: float = np.nan, **keywords: Any) -> float:
    """Light's kappa: Cohen's kappa of every pair of raters, averaged.

    Needs rater identity: wide ``ratings`` or long format (not ``counts=``).

    Parameters
    ----------
    {keywords}
    weights : None, 'linear', 'quadratic' or array_like of shape (K, K)
        Disagreement weights by class index: each pair's weighted kappa, as
        :func:`fastkappa.cohen_kappa` computes it.
    {undefined}

    Returns
    -------
    float
        ``(1/P) sum_{g<h} kappa_gh``, with ``kappa_gh`` Cohen's kappa of
        raters g and h on the items both rated, over the ``P`` pairs of
        raters that share an item. With two raters it is Cohen's kappa.

    Notes
    -----
    Each pair uses the items both raters rated (pairwise deletion); a pair
    with no common item is left out of the mean. The coefficient is
    undefined (nan, or ``replace_undefined_by``, with a warning naming the
    pair and its number of common items) when a pair's chance agreement is
    1, e.g. a pair sharing a single item on which they agree. In :func:`fastkappa.agreement`
    (``coefficients=["light_kappa", ...]``) its standard error is the
    linearised variance of the mean, conditional on the raters: each
    item's influence is the sum over pairs of Cohen's kappa influence
    terms (Fleiss, Cohen and Everitt 1969), from each pair's total table.
    Its bootstrap intervals, and ``clusters=``, need a table per distinct
    rating row, which :func:`fastkappa.agreement` caps at 50 million cells
    (rows x rater pairs x K^2, ``fastkappa.raters.LIGHT_MAX_CELLS``).

    References
    ----------
    .. [1] Light, R. J. (1971). Measures of response agreement for qualitative
       data: some generalizations and alternatives. Psychological Bulletin,
       76(5), 365-377. https://doi.org/10.1037/h0031643
    .. [2] Conger, A. J. (1980). Integration and generalization of kappas for
       multiple raters. Psychological Bulletin, 88(2), 322-328.
       https://doi.org/10.1037/0033-2909.88.2.322
    .. [3] Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969). Large sample
       standard errors of kappa and weighted kappa. Psychological Bulletin,
       72(5), 323-327. https://doi.org/10.1037/h0028106

    Examples
    --------
    >>> import fastkappa as fk
    >>> ratings = [[1, 1, 1], [1, 2, 2], [3, 3, 3], [2, 2, None], [1, 3, 3]]
    >>> round(fk.light_kappa(ratings), 4)
    0.5724
    """
    replace_undefined_by = check_replace_undefined_by(replace_undefined_by)
    weights = _norm_weights(weights)
    table = _encode(ratings, keywords, _is_weighted(weights), light_kappa)
    _check_pairs(table)
    _r.check_light_table(table)
    a = _r.agreement_weights(table.n_classes, weights)
    conf = _r.pair_confusions(table.codes, table.n_classes)
    v = float(_r.light_value(conf[None], a)[0])
    if math.isfinite(v):
        return v
    return _undefined("light_kappa", replace_undefined_by, _light_undefined_why(table, conf, a))


for _f in (percent_agreement, fleiss_kappa, conger_kappa, gwet_ac, brennan_prediger,
           krippendorff_alpha, light_kappa):
    _f.__doc__ = _f.__doc__.replace("{keywords}", _KEYWORDS_DOC.strip()).replace(
        "{undefined}", _UNDEFINED_DOC.strip()).replace("{{", "{").replace("}}", "}")
del _f



# --------------------------------------------------------------------------- agreement


def _check_options(coefficients, population_size, table: RatingsTable):
    if coefficients is None:
        names = [c for c in _r.COEFFICIENTS if c != "conger_kappa" or table.has_codes]
    else:
        names = [coefficients] if isinstance(coefficients, str) else list(coefficients)
        known = _r.COEFFICIENTS + _r.ON_REQUEST
        for c in names:
            if c not in known:
                raise ValueError(
                    f"unknown coefficient {c!r}; `coefficients` takes names from "
                    f"{', '.join(known)}.")
        if len(set(names)) != len(names) or not names:
            raise ValueError("`coefficients` must name each coefficient once (at least one).")
    fpc = 1.0
    if population_size is not None:
        if isinstance(population_size, bool) or not isinstance(
                population_size, (int, float, np.integer, np.floating)) or not (
                population_size >= table.n_items):
            raise ValueError(
                "`population_size` must be a number of items at least the number scored "
                f"({table.n_items}), or None for an infinite population; got "
                f"{population_size!r}.")
        fpc = 1.0 - table.n_items / float(population_size)
    return names, fpc


def _units(model: _r.Model, table: RatingsTable, clusters):
    """Resampling units: item types, or clusters of items grouped into types."""
    if clusters is None:
        return _r.Units(model.features, model.type_counts, None)
    from ._core.units import encode_clusters
    kern = raters_kernels()

    item_type = model.item_type
    scored = item_type >= 0
    if table.row_item is not None and len(clusters) == len(table.row_item) != table.n_input:
        clusters = _item_clusters(clusters, table.row_item, table.n_input)
    elif table.row_item is not None and len(clusters) != table.n_input:
        raise ValueError(
            "`clusters` must have one id per row of the long-format data "
            f"({len(table.row_item)}) or one per item in sorted item-id order "
            f"({table.n_input}); got {len(clusters)}.")
    codes, n_clusters = encode_clusters(clusters, table.n_input, scored, omit=False)
    feats = kern._cluster_features(codes, item_type[scored], model.features,
                                   np.int64(n_clusters))
    uniq, cnt = distinct_float_rows(feats)
    order = np.argsort(-cnt, kind="stable")
    return _r.Units(np.ascontiguousarray(uniq[order]), cnt[order].astype(np.int64),
                    n_clusters)


def _item_clusters(clusters, row_item: np.ndarray, n_items: int) -> np.ndarray:
    """One cluster code per item from one id per long-format row (constant per item)."""
    from ._core.units import encode_clusters

    codes, _ = encode_clusters(clusters, len(row_item), None, omit=False)
    per_item = np.full(n_items, -1, dtype=np.int64)
    per_item[row_item] = codes
    clash = int(np.count_nonzero(per_item[row_item] != codes))
    if clash:
        raise ValueError(
            f"`clusters` gives {clash} rows a cluster different from another row of the same "
            "item; every rating of an item must carry the item's cluster id.")
    return per_item


def agreement(
    ratings: ArrayLike | None = None,
    *,
    coefficients: str | list[str] | None = None,
    weights: str | ArrayLike | None = None,
    level: str | ArrayLike | None = None,
    method: str = "asymptotic",
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | np.random.SeedSequence | np.random.Generator | None = None,
    clusters: ArrayLike | None = None,
    population_size: float | None = None,
    **keywords: Any,
) -> Agreement:
    """Agreement coefficients among many raters with standard errors and intervals.

    Parameters
    ----------
    {keywords}
    coefficients : str or list of str, optional
        Any of ``'percent_agreement'``, ``'fleiss_kappa'``, ``'conger_kappa'``,
        ``'gwet_ac'``, ``'brennan_prediger'``, ``'krippendorff_alpha'``, and
        ``'light_kappa'`` (only when named). Default: the first six (without
        Conger's kappa for ``counts=`` input and for a sparse long-format
        panel, which carry no items x raters table).
    weights : None, 'linear', 'quadratic' or array_like of shape (K, K)
        Disagreement weights of the kappa family (Gwet's AC2 when given).
    level : {{'nominal', 'ordinal', 'interval', 'ratio'}} or (K, K) array, optional
        Krippendorff's level; default 'nominal' without ``weights``, else the
        same disagreement weights as the kappa family.
    method : {{'asymptotic', 'percentile', 'basic', 'bca'}}, default 'asymptotic'
        ``'asymptotic'``: estimate ± z * SE with Gwet's variance, conditional
        on the raters (as irrCAC computes it). The bootstrap methods resample
        items (or clusters), all coefficients on the same resamples.
    confidence_level : float, default 0.95
        Strictly between 0 and 1.
    n_resamples : int, default 10_000
        Bootstrap replicates (ignored by ``'asymptotic'``).
    seed : None, int, SeedSequence or Generator
        The same seed gives the same interval at any thread count.
    clusters : array_like, optional
        Cluster id of each input item (patients, documents), or for long
        format one per row (constant within an item): the bootstrap
        resamples whole clusters and the standard errors sum each cluster's
        influence terms.
    population_size : float, optional
        Items in the population, for Gwet's finite-population factor
        ``1 - n / population_size``.

    Returns
    -------
    Agreement
        One row per coefficient; ``str()`` prints a table, ``to_dict()`` and
        ``to_dataframe()`` export it.

    Notes
    -----
    Items with equal count vectors (equal rating rows for Conger's kappa)
    are interchangeable, so estimates, variances, the jackknife and the
    item bootstrap (a multinomial over these types) cost O(types), not
    O(items).

    For one ``seed``, a coefficient's bootstrap interval depends on which
    coefficients are requested: with Conger's or Light's kappa the items
    are resampled as rating-row types, otherwise as count-vector types, and
    the same seed draws different (equally valid) replicates over the two;
    request the same ``coefficients`` to reproduce an interval.

    Light's kappa with a bootstrap method or ``clusters=`` keeps a table of
    (distinct rating rows) x (rater pairs) x K^2 cells and refuses more than
    50 million of them (``fastkappa.raters.LIGHT_MAX_CELLS``; e.g. 100,000
    items x 12 raters x 3 classes) with a ``ValueError``;
    ``method='asymptotic'`` without clusters needs only the pairs' total
    tables, whatever the panel. Likewise a bootstrap of ordinal
    Krippendorff's alpha adds up K^2 coincidences per replicate (memory
    about 8 * n_resamples * K^2 bytes); its estimate and asymptotic
    interval need one (K, K) table.

    The p-value tests H0: coefficient = 0 with Gwet's standard
    error and a normal reference (irrCAC uses a t distribution with n - 1
    degrees of freedom; the standard errors are the same). Interval bounds
    are clipped to [-1, 1] ([0, 1] for percent agreement), except that the
    lower bound is not clipped when the estimate itself is below -1 (Fleiss'
    kappa on partly rated items can be), as in irrCAC.

    References
    ----------
    .. [1] Gwet, K. L. (2008). Computing inter-rater reliability and its
       variance in the presence of high agreement. British Journal of
       Mathematical and Statistical Psychology, 61, 29-48.
    .. [2] Gwet, K. L. (2014). Handbook of Inter-Rater Reliability (4th ed.).
       Advanced Analytics, LLC.
    .. [3] Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability.
       Departmental Papers (ASC) 43, Annenberg School for Communication,
       University of Pennsylvania.
    .. [4] Efron, B. (1987). Better bootstrap confidence intervals. Journal of
       the American Statistical Association, 82(397), 171-185.
       https://doi.org/10.1080/01621459.1987.10478410
    .. [5] Field, C. A., & Welsh, A. H. (2007). Bootstrapping clustered data.
       Journal of the Royal Statistical Society: Series B (Statistical
       Methodology), 69(3), 369-390.

    Examples
    --------
    >>> import fastkappa as fk
    >>> ratings = [[1, 1, 1], [1, 2, 2], [3, 3, 3], [2, 2, None], [1, 1, 2],
    ...            [3, 3, None], [2, 2, 2], [1, 3, 3]]
    >>> res = fk.agreement(ratings, coefficients=["fleiss_kappa", "gwet_ac"])
    >>> round(res["fleiss_kappa"].estimate, 4), round(res["fleiss_kappa"].standard_error, 4)
    (0.623, 0.1816)
    """
    from ._core.intervals import _kappa_ci_iv

    method, cl, n_resamples, seq = _kappa_ci_iv(method, confidence_level, n_resamples, seed)
    weights = _norm_weights(weights)
    if level is not None:
        _r.check_level(level)
    table = _encode(ratings, keywords, _any_weighted(weights, level), agreement)
    return agreement_from_table(table, coefficients, weights, level, method, cl, n_resamples,
                                seq, clusters, population_size)


def _any_weighted(weights, level) -> bool:
    return _is_weighted(weights) or (level is not None and _level_weighted(level))


def agreement_from_table(table: RatingsTable, coefficients, weights, level, method: str,
                         cl: float, n_resamples: int, seq: np.random.SeedSequence, clusters,
                         population_size) -> Agreement:
    """:func:`agreement` on encoded data, with validated interval options."""
    _check_pairs(table)
    names, fpc = _check_options(coefficients, population_size, table)
    level_shown = level if level is not None else (
        "nominal" if weights is None else weights)
    if level is None:
        level = "nominal" if weights is None else _r._weights.weight_matrix(
            table.n_classes, weights)
    undefined = (["conger_kappa"] if "conger_kappa" in names and _silent_conger(table)
                 else [])
    scored = [n for n in names if n not in undefined]
    # nothing defined to score: the model still checks the clusters and counts them
    # ordinal alpha's coincidences and Light's pair cells per type serve the
    # bootstrap and clusters only
    per_type = method != "asymptotic" or clusters is not None
    model = _r.build_model(table, scored or ["percent_agreement"], weights, level,
                           per_type=per_type)
    total = model.total
    est = {k: float(v[0]) for k, v in _r.values(model, total).items()}
    units = _units(model, table, clusters)
    feats, counts, n_clusters = units.features, units.counts, units.n_clusters
    ses = {}
    for name in scored:
        if not math.isfinite(est[name]):
            ses[name] = math.nan
            continue
        g, n = _r.influence_vector(name, model, total, est[name])
        n_units = n_clusters
        if name in ("krippendorff_alpha", "light_kappa"):  # units holding a pairable item
            n_units = float(counts[feats[:, _r.TWO] > 0].sum())
        d = _r.unit_scores(model, units, g)
        ses[name] = math.sqrt(max(_r.gwet_variance(d, counts, n, fpc, n_units), 0.0))
    reps = jack = None
    if method != "asymptotic" and scored:
        reps = _r.values(model, _r.bootstrap_moments(model, units, n_resamples, seq))
        if method == "bca":
            jack = _r.values(model, total[None, :] - feats)
    why = {}
    if "light_kappa" in scored and not math.isfinite(est["light_kappa"]):
        conf = total[model.light].reshape(-1, model.k, model.k)
        why["light_kappa"] = _light_undefined_why(table, conf, model.a)
    rows = [AgreementRow(name, *[math.nan] * 5, method) if name in undefined
            else _row(name, est[name], ses[name], method, cl, reps, jack, counts,
                      why.get(name))
            for name in names]
    return _agreement(rows, table, method, cl, n_resamples, seq, weights, level_shown,
                      n_clusters)


def _agreement(rows, table: RatingsTable, method, cl, n_resamples, seq, weights, level_shown,
               n_clusters) -> Agreement:
    return Agreement(rows=tuple(rows), method=method, confidence_level=cl,
                     n_resamples=0 if method == "asymptotic" else n_resamples,
                     seed=None if method == "asymptotic" else seed_record(seq),
                     weights=weights, level=level_shown,
                     n_items=table.n_items, n_unrated=table.n_unrated,
                     n_raters=len(table.raters), classes=table.classes,
                     n_clusters=n_clusters)


def _row(name, estimate, se, method, cl, reps, jack, counts, why=None) -> AgreementRow:
    from ._core.intervals import bootstrap_interval

    if not math.isfinite(estimate):
        _undefined(name, why=why)
        return AgreementRow(name, math.nan, math.nan, math.nan, math.nan, math.nan, method)
    # an estimate below -1 (Fleiss' kappa on partly rated items can be) keeps an
    # unclipped lower bound, as in irrCAC: clipped at -1 the interval would exclude it
    bounds = (0.0, 1.0) if name == "percent_agreement" else (
        -1.0 if estimate >= -1.0 else -math.inf, 1.0)
    z0 = estimate / se if se > 0 else math.nan
    p = math.erfc(abs(z0) / math.sqrt(2.0)) if math.isfinite(z0) else math.nan
    if method == "asymptotic":
        half = _NORMAL.inv_cdf(0.5 + cl / 2.0) * se
        if not math.isfinite(se):
            warnings.warn(
                f"Gwet's standard error of {_TITLES[name]} is undefined (e.g. with a single "
                "item: the variance divides by the number of items minus one), so its "
                "interval and p-value are nan; report the estimate together with the "
                "number of items.", _degenerate(), stacklevel=user_stacklevel())
        elif not half > 0:
            warnings.warn(
                f"Gwet's standard error of {_TITLES[name]} is zero (e.g. every item's raters "
                "agree perfectly), so the asymptotic interval has zero width at the "
                "estimate; report the estimate together with the number of items.",
                _degenerate(), stacklevel=user_stacklevel())
        lo = min(max(estimate - half, bounds[0]), bounds[1])
        hi = min(max(estimate + half, bounds[0]), bounds[1])
        return AgreementRow(name, estimate, se, lo, hi, p, method)
    r = reps[name]
    finite = r[np.isfinite(r)]
    n_undefined = len(r) - len(finite)
    if n_undefined:
        warnings.warn(
            f"{n_undefined} of {len(r)} bootstrap replicates of {_TITLES[name]} are "
            "undefined (e.g. every resampled rating in one class); they are excluded from "
            "the interval and counted in `n_undefined`.", _degenerate(),
            stacklevel=user_stacklevel())
    jk = None if jack is None else jack[name]
    lo, hi, used = bootstrap_interval(estimate, finite, method, cl, jackknife=jk,
                                      jackknife_counts=None if jk is None else counts,
                                      what=_TITLES[name], bounds=bounds)
    sd = float(np.std(finite, ddof=1)) if len(finite) > 1 else math.nan
    return AgreementRow(name, estimate, sd, lo, hi, p, used, n_undefined, finite)


def _degenerate():
    from .exceptions import DegenerateIntervalWarning

    return DegenerateIntervalWarning


agreement.__doc__ = agreement.__doc__.replace("{keywords}", _KEYWORDS_DOC.strip()).replace(
    "{{", "{").replace("}}", "}")
