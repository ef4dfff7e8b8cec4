"""Paired comparison of several models' kappa on one test set."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import _asymptotic
from ._core import weights as _weights
from ._core.caller import user_stacklevel
from ._core.columns import materialize
from ._core.encode import declared_scale, encode_pair
from ._core.intervals import (
    _NORMAL,
    _kappa_ci_iv,
    bca_acceleration,
    bootstrap_interval,
    holm,
    inverted_p_value,
    kappa_interval,
    with_provenance,
)
from ._core.options import check_nan_policy
from ._core.rows import expand_frequency, omit_missing_ids
from ._core.shapes import flatten_labels
from ._core.units import (
    bootstrap_kappas,
    bootstrap_kappas_rows,
    encode_clusters,
    full_kappas,
    jackknife_kappas,
    row_cells,
    units_from_clusters,
    units_from_counts,
    units_from_rows,
    use_row_tables,
)
from .bootstrap import model_variances
from .exceptions import UndefinedKappaWarning
from .results import Comparison, KappaCI, PairDifference

__all__ = ["Comparison", "PairDifference", "compare"]

P_ADJUST = (None, "holm")


def _joint_cells(t_idx: np.ndarray, p_idx: np.ndarray, k: int):
    """Joint cell of each row over (y_true, model 1, ..., model M).

    Returns ``(cells, cell_t, cell_p)``: a code per row in 0..J-1, and for
    each joint cell its y_true class and (J, M) model classes.
    """
    n_models = p_idx.shape[0]
    code = t_idx.astype(np.int64)
    span = k
    for m in range(n_models):
        if span * k >= 2**62:
            code = np.unique(code, return_inverse=True)[1].astype(np.int64)
            span = int(code.max()) + 1
        code = code * k + p_idx[m]
        span *= k
    _, first, cells = np.unique(code, return_index=True, return_inverse=True)
    cell_t = t_idx[first].astype(np.int64)
    cell_p = np.ascontiguousarray(p_idx[:, first].T.astype(np.int64))
    return cells.astype(np.int64), cell_t, cell_p


# --------------------------------------------------------------------------- public


def _models_of(predictions) -> Mapping:
    """``predictions`` as a mapping of model name -> predictions: a mapping as it
    is, a pandas or polars DataFrame as its columns."""
    if isinstance(predictions, Mapping):
        return predictions
    columns = getattr(predictions, "columns", None)
    if columns is not None and type(predictions).__module__.split(".")[0] in (
            "pandas", "polars"):
        names = list(columns)
        if len(set(names)) != len(names) or len({str(nm) for nm in names}) != len(names):
            raise ValueError("the DataFrame of predictions repeats a column name (as a "
                             "model name, 1 and '1' are one); give each model its own "
                             "column.")
        return {nm if isinstance(nm, str) else str(nm): predictions[nm] for nm in names}
    raise ValueError("`predictions` must be a dict of model name -> predictions, e.g. "
                     "{'model_a': y_a, 'model_b': y_b}, or a DataFrame with one column "
                     "per model.")


def compare(
    y_true: ArrayLike,
    predictions: Mapping[str, ArrayLike],
    *,
    weights: str | ArrayLike | None = None,
    method: str = "bca",
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | np.random.SeedSequence | np.random.Generator | None = None,
    clusters: ArrayLike | None = None,
    reference: str | None = None,
    p_adjust: str | None = None,
    labels: ArrayLike | None = None,
    n_classes: int | None = None,
    sample_weight: ArrayLike | None = None,
    ignore_index: Any = None,
    nan_policy: str = "raise",
    thresholds: ArrayLike | None = None,
    frequency_weight: ArrayLike | None = None,
) -> Comparison:
    """Compare several models' kappa on the same rows: "is model B really better?".

    Every model is scored on the same bootstrap resamples (paired), so the
    interval of a difference reflects that the models share the test set.
    One set of resampled units feeds all models: the joint cells of
    ``y_true`` and every model's class (a multinomial over the joint cells,
    exact, when there are few), or, when the joint cells are many (models
    erring independently), rows drawn with replacement straight into each
    model's table; whole clusters with ``clusters``.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        Reference labels.
    predictions : mapping of str to array_like, or a DataFrame
        At least two models: name -> predictions (labels, (n, K) scores, or
        1-D scores with ``thresholds``), or a pandas / polars DataFrame whose
        columns are the models (one column of labels or scores each).
    weights : None, 'linear', 'quadratic' or (K, K) array
        Disagreement weights.
    method : {'bca', 'percentile', 'basic', 'asymptotic'}, default 'bca'
        Interval method for every model and every difference.
        ``'asymptotic'`` uses the Fleiss–Cohen–Everitt SE per model and the
        paired influence functions ``IF_a - IF_b`` for differences, with
        normal-theory p-values.
    confidence_level : float, default 0.95
        Strictly between 0 and 1.
    n_resamples : int, default 10_000
        Paired bootstrap replicates (ignored by ``'asymptotic'``).
    seed : None, int, SeedSequence or Generator
        The same seed gives the same result whatever the number of threads.
    clusters : array_like of shape (n,), optional
        Cluster ids (e.g. patients); whole clusters are resampled.
    reference : str, optional
        Compare every model with this one only (``difference = kappa[model] -
        kappa[reference]``); by default every pair is compared.
    p_adjust : None or 'holm'
        Holm's adjustment over the pairs reported in ``p_adjusted``.
    labels, n_classes, sample_weight, ignore_index, nan_policy, thresholds
        As in :func:`fastkappa.cohen_kappa`. Without ``labels`` or
        ``n_classes`` the classes are the union of ``y_true`` and every
        model's labels. A row dropped for one model (missing, ignored) is
        dropped for all, so every model is scored on the same rows.
        ``sample_weight`` rows stay one sampled unit each.
    frequency_weight : array_like of shape (n,), optional
        Whole-number count of each row: a row with count c is c identical
        rows (of its cluster, with ``clusters``). The rows are expanded, so
        the result, resamples included, is exactly that of the expanded rows
        (memory grows with the total count). Not with ``sample_weight``.

    Returns
    -------
    Comparison

    Warns
    -----
    UserWarning
        With ``p_adjust='holm'`` when ``n_resamples`` is too small for any
        adjusted p-value to reach 0.05 (the smallest bootstrap p is about
        2 / B, so B must be at least 2 m / 0.05 for m pairs).

    References
    ----------
    .. [1] Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969). Large sample standard
       errors of kappa and weighted kappa. Psychological Bulletin, 72(5),
       323-327. https://doi.org/10.1037/h0028106
    .. [2] Efron, B. (1987). Better bootstrap confidence intervals. Journal of the
       American Statistical Association, 82(397), 171-185.
       https://doi.org/10.1080/01621459.1987.10478410
    .. [3] Holm, S. (1979). A simple sequentially rejective multiple test
       procedure. Scandinavian Journal of Statistics, 6(2), 65-70.
    .. [4] Davison, A. C., & Hinkley, D. V. (1997). Bootstrap Methods and their
       Application. Cambridge University Press.
       https://doi.org/10.1017/CBO9780511802843
    .. [5] Field, C. A., & Welsh, A. H. (2007). Bootstrapping clustered data.
       Journal of the Royal Statistical Society: Series B (Statistical
       Methodology), 69(3), 369-390.
       https://doi.org/10.1111/j.1467-9868.2007.00593.x

    Examples
    --------
    >>> import numpy as np, fastkappa as fk
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 5, 2000)
    >>> good = np.clip(y + rng.integers(-1, 2, 2000), 0, 4)
    >>> poor = np.clip(y + rng.integers(-2, 3, 2000), 0, 4)
    >>> res = fk.compare(y, {"good": good, "poor": poor}, weights="quadratic",
    ...                  n_resamples=2000, seed=0)
    >>> pair = res.pair("good", "poor")
    >>> bool(pair.difference > 0 and pair.low > 0 and pair.p_value < 0.01)
    True
    """
    method, cl, n_resamples, seq = _kappa_ci_iv(method, confidence_level, n_resamples, seed)
    predictions = _models_of(predictions)
    names = list(predictions)
    if len(names) < 2:
        raise ValueError(f"compare() needs at least two models; got {len(names)}. Use "
                         "fastkappa.kappa_ci for one model.")
    if any(not isinstance(nm, str) for nm in names):
        raise ValueError("model names (the keys of `predictions`) must be strings.")
    shown: dict[str, str] = {}
    for nm in names:
        key = " ".join(nm.split())
        if key in shown:
            raise ValueError(
                f"model names {shown[key]!r} and {nm!r} differ only in whitespace, so they "
                "would print as the same model; rename one of them.")
        shown[key] = nm
    if reference is not None and not isinstance(reference, str):
        raise ValueError(
            f"`reference` names one model: pass one of the model names {names} (a "
            f"string); got {type(reference).__name__}.")
    if reference is not None and reference not in predictions:
        raise ValueError(f"`reference` {reference!r} is not one of the models {names}.")
    if p_adjust not in P_ADJUST:
        raise ValueError(f"`p_adjust` must be None or 'holm'; got {p_adjust!r}.")

    check_nan_policy(nan_policy)
    # iterators are read once: every model (and a second encoding) sees the same rows
    y_true, sample_weight, clusters, frequency_weight = (
        materialize(v) for v in (y_true, sample_weight, clusters, frequency_weight))
    predictions = {nm: materialize(v) for nm, v in predictions.items()}
    y_true, predictions, sample_weight, clusters, frequency_weight = flatten_labels(
        y_true, predictions, names=("y_true", "predictions"), sample_weight=sample_weight,
        clusters=clusters, frequency_weight=frequency_weight)
    clusters, rows = omit_missing_ids(clusters, "clusters", nan_policy, {
        "y_true": y_true, "predictions": predictions, "sample_weight": sample_weight,
        "frequency_weight": frequency_weight})
    sample_weight = rows["sample_weight"]
    # counted rows are expanded: every draw below is then over the expanded rows
    rows = expand_frequency(rows["frequency_weight"], sample_weight, {
        "y_true": rows["y_true"], "predictions": rows["predictions"], "clusters": clusters})
    y_true, predictions, clusters = rows["y_true"], rows["predictions"], rows["clusters"]

    def encode(lab, ncls):
        return [encode_pair(y_true, predictions[nm], labels=lab, n_classes=ncls,
                            sample_weight=sample_weight, ignore_index=ignore_index,
                            nan_policy=nan_policy, thresholds=thresholds, weights=weights,
                            names=("y_true", f"predictions[{nm!r}]")) for nm in names]

    encs = encode(labels, n_classes)
    for enc in encs:
        enc.counts()  # validates every model's values (bad values, missing values)
    if labels is None and n_classes is None:
        # each model was checked against y_true; ordered models must also agree
        # with one another (else each would be scored on its own scale)
        declared_scale([("y_true", encs[0].t.source)] + [
            (f"predictions[{nm!r}]", e.p.source) for nm, e in zip(names, encs, strict=True)])
        sets = [list(e.classes) for e in encs]
        if any(s != sets[0] for s in sets[1:]):
            union = sorted(set().union(*map(set, sets)))
            encs = encode(np.asarray(union, dtype=encs[0].classes.dtype), None)
            for enc in encs:
                enc.counts()
    k = encs[0].n_classes
    wmat = encs[0].weights
    n_input = encs[0].n_input
    t_slots = encs[0].slots(encs[0].t)
    p_slots = np.stack([e.slots(e.p) for e in encs])
    keep_mask = (t_slots < k) & np.all(p_slots < k, axis=0)
    keep = None if keep_mask.all() else keep_mask
    if not keep_mask.any():
        raise ValueError("no row can be scored for every model (each row is missing or "
                         "ignored for at least one model).")
    t_idx = t_slots[keep_mask] if keep is not None else t_slots
    p_idx = p_slots[:, keep_mask] if keep is not None else p_slots
    sw = _weights.scale_free(encs[0].sample_weight)  # intervals are scale-free in it
    if sw is not None and keep is not None:
        sw = sw[keep_mask]
    uniform = sw is None or float(sw.min()) == float(sw.max())
    # joint cells in a canonical model order (by name), so the resamples, and so every
    # interval, do not depend on the order the models are given in
    canon = sorted(range(len(names)), key=lambda i: names[i])
    cells, cell_t, cell_p_canon = _joint_cells(t_idx, p_idx[canon], k)
    cell_p = np.empty_like(cell_p_canon)
    cell_p[:, canon] = cell_p_canon
    if clusters is not None:
        codes, n_clusters = encode_clusters(clusters, n_input, keep)
        units = units_from_clusters(cells, None if uniform else sw, codes, n_clusters,
                                    cell_t, cell_p, k, sample_weights=not uniform)
    elif uniform:
        counts = np.bincount(cells, minlength=len(cell_t))
        units = units_from_counts(counts, cell_t, cell_p, n_classes=k)
    else:
        units = units_from_rows(cells, sw, cell_t, cell_p, k)

    estimates, joint = full_kappas(units, wmat)
    n_models = len(names)
    infos, ses, se0s = [], [], []
    for m in range(n_models):
        if not math.isfinite(float(estimates[m])):
            warnings.warn(
                f"kappa of model {names[m]!r} is undefined: the expected disagreement is "
                "zero (y_true and the model use a single, identical class); its estimate, "
                "interval and every pair with it are nan.",
                UndefinedKappaWarning, stacklevel=user_stacklevel())
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            # an undefined kappa has nan influence values: no raw NumPy warning
            info, var, var0 = model_variances(units, wmat, m)
        infos.append(info)
        ses.append(math.sqrt(max(var, 0.0)) if math.isfinite(var) else math.nan)
        se0s.append(math.sqrt(max(var0, 0.0)) if math.isfinite(var0) else math.nan)

    if reference is None:
        pair_idx = [(a, b) for a in range(n_models) for b in range(a + 1, n_models)]
    else:
        r = names.index(reference)
        pair_idx = [(a, r) for a in range(n_models) if a != r]

    reps = jack = None
    if method != "asymptotic":
        if clusters is None and use_row_tables(units.n_types, len(t_idx), k, n_models):
            # nearly a joint type per row: draw rows straight into per-model tables,
            # in the order of their joint row (models by name) and weight: the draws
            # depend neither on the row order nor on the order the models are given
            rc = row_cells(t_idx, p_idx, k)
            w = None if uniform else np.asarray(sw, dtype=np.float64)
            by_name = sorted(range(n_models), key=lambda m: str(names[m]))
            keys = [rc[:, m] for m in reversed(by_name)]
            order = np.lexsort(keys if w is None else [w, *keys])
            reps = bootstrap_kappas_rows(rc[order], None if w is None else w[order], k, wmat,
                                         n_resamples, seq)
        else:
            reps = bootstrap_kappas(units, wmat, n_resamples, seq)
        if method == "bca":
            jack = jackknife_kappas(units, wmat, joint)
    counts_t = units.type_counts

    models: dict[str, KappaCI] = {}
    for m, nm in enumerate(names):
        models[nm] = kappa_interval(
            float(estimates[m]), method, cl, standard_error=ses[m],
            standard_error_null=se0s[m], replicates=None if reps is None else reps[:, m],
            jackknife=None if jack is None else jack[:, m], jackknife_counts=counts_t,
            what=f"kappa of model {nm!r}", warn=False, weights=weights)

    raw = []
    for a, b in pair_idx:
        diff = float(estimates[a] - estimates[b])
        what = f"kappa[{names[a]!r}] - kappa[{names[b]!r}]"
        if method == "asymptotic":
            values = (infos[a].influence[cell_t, cell_p[:, a]]
                      - infos[b].influence[cell_t, cell_p[:, b]])
            se = math.sqrt(max(_asymptotic.types_variance(
                values, units.type_counts, units.type_ptr, units.type_cell, units.type_val),
                0.0))
            half = _NORMAL.inv_cdf(0.5 + cl / 2.0) * se
            if not (math.isfinite(diff) and math.isfinite(se)):
                p = math.nan  # a model's kappa is undefined (warned above)
            else:
                p = math.erfc(abs(diff) / se / math.sqrt(2.0)) if se > 0 else (
                    1.0 if diff == 0 else 0.0)
            raw.append((a, b, diff, diff - half, diff + half, p, se, None))
            continue
        d = reps[:, a] - reps[:, b]
        d = d[np.isfinite(d)]
        jd = None if jack is None else jack[:, a] - jack[:, b]
        # the jackknife holds a value per type (170K for 10 models on noisy data):
        # its acceleration is computed once for the interval and the p-value
        acc = None if jd is None else bca_acceleration(jd, counts_t)
        if len(d) and d.min() == d.max() == diff:
            low = high = diff  # identical predictions on every resample: nothing varies
        else:
            low, high, _ = bootstrap_interval(diff, d, method, cl, acceleration=acc, what=what,
                                              bounds=(-2.0, 2.0))
        p = inverted_p_value(diff, d, method, acceleration=acc)
        se = float(np.std(d, ddof=1)) if len(d) > 1 else math.nan
        raw.append((a, b, diff, low, high, p, se, d))

    p_values = np.array([r[5] for r in raw])
    adjusted = holm(p_values) if p_adjust == "holm" else p_values
    if p_adjust == "holm" and method != "asymptotic":
        m_pairs = len(raw)
        if n_resamples < 2 * m_pairs / 0.05:
            warnings.warn(
                f"with n_resamples={n_resamples} the smallest bootstrap p-value is about "
                f"2/{n_resamples}, so Holm's adjustment over {m_pairs} pairs cannot reach "
                f"0.05; use n_resamples >= {math.ceil(2 * m_pairs / 0.05)}.",
                UserWarning, stacklevel=user_stacklevel())
    pairs = [PairDifference(names[a], names[b], diff, low, high, float(p), float(pa), se, d)
             for (a, b, diff, low, high, p, se, d), pa in zip(raw, adjusted, strict=True)]
    weights = _weights.canonical(weights)
    spec = weights if (weights is None or isinstance(weights, str)) else "custom"
    # what a methods section needs, on every model's result too (weights, seed, clusters)
    models = {nm: with_provenance(res, seq, weights, units) for nm, res in models.items()}
    first = next(iter(models.values()))
    return Comparison(models=models, pairs=pairs, reference=reference, method=method,
                      confidence_level=cl, n_resamples=0 if method == "asymptotic"
                      else n_resamples, p_adjust=p_adjust, weights=spec, n_rows=len(t_idx),
                      classes=encs[0].classes, seed=first.seed, n_clusters=first.n_clusters)
