"""Agreement coefficients for many raters, from sums of per-item features.

Every coefficient (percent agreement, Fleiss, Conger, Gwet's AC1/AC2,
Brennan-Prediger, Krippendorff's alpha) is a smooth function of a few sums
over items of per-item *features*: ``S = sum_i F_i``.  So

* the estimate is ``value(S)``;
* an item bootstrap replicate is ``value(sum_t m_t F_t)`` with type counts
  ``m ~ Multinomial(n, counts / n)`` over the distinct feature rows (types);
  clusters of items are units whose features are the sums over their items;
* the leave-one-unit-out jackknife is ``value(S - F_u)``, one per type;
* Gwet's linearised variance is ``sum_u (F_u @ g)^2`` for a vector ``g``
  fixed by the full data (each item's influence term is linear in its
  features), so clusters use the same cluster sum as two-rater kappa.

Feature layout (``K`` classes, ``R`` raters)::

    ONE  1                                     items (with >= 1 rating)
    TWO  [r_i >= 2]                            items with a pair of ratings
    PA   sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1)) [r_i >= 2]
    PI   r_ik / r_i                            (K columns)
    KOA  sum_k r_ik (r^_ik - 1) / (r_i - 1) [r_i >= 2]   Krippendorff's sum o*a
    KN   r_i [r_i >= 2]                        pairable values
    KNK  r_ik [r_i >= 2]                       (K columns)
    O    coincidences of item i                (K*K columns; ordinal alpha only)
    C    [rater g put item i in class k]       (R*K columns; Conger only)
    L    [raters g, h put item i in k, l]      (P*K*K columns, P rater pairs; Light only)

O and L are wide (K^2 columns per type) but a type has few nonzero entries
in them: unless the per-type columns are needed (a bootstrap, the jackknife,
clusters), they are kept as totals only, the last columns of ``Model.total``
(``Model.pooled``), and a type's ``F_t @ g`` for Gwet's variance is computed
from its count vector or rating row (:func:`unit_scores`).

with ``r*_ik = sum_l a_kl r_il`` (kappa-family agreement weights ``a``) and
``r^`` the same with Krippendorff's agreement weights ``1 - d / max(d)``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ._core import weights as _weights
from ._core.config import POISSON_MIN_TYPES_PER_ROOT
from ._core.config import RATERS_TYPES_PER_UNIT_MAX as TYPES_PER_UNIT_MAX
from ._core.dispatch import raters_kernels
from ._raters_input import RatingsTable, distinct_rows

COEFFICIENTS = ("percent_agreement", "fleiss_kappa", "conger_kappa", "gwet_ac",
                "brennan_prediger", "krippendorff_alpha")
#: coefficients reported only when asked for by name (``coefficients=``)
ON_REQUEST = ("light_kappa",)
#: most (rating-row types) x (rater pairs) x K^2 cells of Light's features in agreement()
LIGHT_MAX_CELLS = 50_000_000
#: the most rating rows ((K + 1) ** n_raters) a bootstrap grid holds (two int64
#: grids per thread)
RATING_GRID_MAX = 1 << 20
LEVELS = ("nominal", "ordinal", "interval", "ratio")


# --------------------------------------------------------------------------- weights


def agreement_weights(n_classes: int, weights) -> np.ndarray:
    """Agreement weights ``a = 1 - w / max(w)`` from disagreement weights ``w``."""
    w = _weights.weight_matrix(n_classes, weights)
    if n_classes == 1:
        return np.ones((1, 1))
    return 1.0 - w / w.max()


def check_level(level) -> None:
    if isinstance(level, str):
        if level not in LEVELS:
            raise ValueError(
                "`level` must be 'nominal', 'ordinal', 'interval', 'ratio' or a (K, K) "
                f"matrix of disagreements; got '{level}'.")


def _class_values(table: RatingsTable, level: str) -> np.ndarray:
    if not table.numeric:
        raise ValueError(
            f"Krippendorff's {level} level measures distances between label values, but "
            "the labels are strings; use level='ordinal' (with `labels=` in scale order) "
            "or pass a (K, K) disagreement matrix as `level`.")
    return np.asarray(table.classes, dtype=np.float64)


def krippendorff_disagreement(table: RatingsTable, level) -> np.ndarray | None:
    """Fixed (K, K) disagreement ``d`` of a level; None for 'ordinal' (data-dependent)."""
    k = table.n_classes
    if isinstance(level, str):
        if level == "nominal":
            return 1.0 - np.eye(k)
        if level == "ordinal":
            return None
        v = _class_values(table, level)
        diff = v[:, None] - v[None, :]
        if level == "interval":
            return diff * diff
        if np.any(v < 0):
            raise ValueError("Krippendorff's ratio level needs non-negative label values "
                             "(a ratio scale has an absolute zero).")
        tot = v[:, None] + v[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            d = np.where(tot > 0, diff / np.where(tot > 0, tot, 1.0), 0.0)
        return d * d
    try:
        return _weights.weight_matrix(k, level)
    except ValueError as err:  # the shared checks name `weights`; here it is `level`
        raise ValueError(str(err).replace("`weights`", "`level`")) from None


def ordinal_disagreement(nk: np.ndarray) -> np.ndarray:
    """Krippendorff's ordinal ``d_kl = (sum_{g=k..l} n_g - (n_k + n_l) / 2)^2``.

    ``nk`` has shape (..., K); the result (..., K, K).
    """
    k = nk.shape[-1]
    cum = np.cumsum(nk, axis=-1)
    before = cum - nk  # sum_{g < k}
    idx = np.arange(k)
    hi = np.maximum(idx[:, None], idx[None, :])
    lo = np.minimum(idx[:, None], idx[None, :])
    span = cum[..., hi] - before[..., lo]
    half = (nk[..., :, None] + nk[..., None, :]) / 2.0
    return (span - half) ** 2


# --------------------------------------------------------------------------- layout


@dataclass(frozen=True, eq=False)
class Model:
    """Everything needed to evaluate coefficients on resampled feature sums."""

    names: tuple
    k: int
    n_raters: int
    a: np.ndarray            # kappa-family agreement weights (K, K)
    ka: np.ndarray | None    # Krippendorff agreement weights (fixed levels)
    ordinal: bool
    conger: bool
    features: np.ndarray     # (T, p) per type
    type_counts: np.ndarray  # (T,) items per type
    type_of: np.ndarray      # type of each distinct input row (-1: unrated)
    item_of: object          # (n_input,) distinct row of each item, or a function giving it
    pi: slice
    knk: slice
    o: slice | None
    c: slice | None
    light: slice | None = None
    #: (T, n_raters) codes of the rating-row types (-1: missing), when Conger's
    #: or Light's kappa is asked
    row_codes: np.ndarray | None = None
    #: totals of the feature columns after ``features`` (O, L kept as totals only)
    pooled: np.ndarray | None = None

    @property
    def item_type(self) -> np.ndarray:
        """(n_input,) type of each item, -1 for unrated items."""
        of = self.item_of() if callable(self.item_of) else self.item_of
        return self.type_of[of]

    @property
    def total(self) -> np.ndarray:
        built = self.type_counts @ self.features
        return built if self.pooled is None else np.concatenate([built, self.pooled])


ONE, TWO, PA = 0, 1, 2


def silent_raters(table: RatingsTable) -> list:
    """The raters without a rating: Conger's kappa, which averages each rater's
    class shares, is undefined while one is listed."""
    return [table.raters[j] for j in np.flatnonzero(np.asarray(table.rater_counts) == 0)]


def build_model(table: RatingsTable, names, weights=None, level="nominal", *,
                estimate_only: bool = False, per_type: bool = True) -> Model:
    """Types (distinct count vectors, or rating rows when Conger is asked) and features.

    The types come most frequent first, the order an item bootstrap draws
    them in.  ``estimate_only``: the model serves ``model.total`` alone, so
    the types keep the order they were found in and the features are
    column-major (each feature column written contiguously); the sums are
    the same.  ``per_type=False`` (and ``estimate_only``): ordinal alpha's
    coincidences and Light's pair cells are kept as totals (``Model.pooled``),
    not as K^2 columns per type; enough for the estimates and Gwet's
    variance of item types (:func:`unit_scores`), not for a bootstrap or
    clusters.
    """
    k = table.n_classes
    conger = "conger_kappa" in names
    if conger and not table.has_codes and not table.raters:
        raise ValueError(
            "Conger's kappa needs to know which rater gave which rating; `counts=` input "
            "has anonymous raters. Pass wide `ratings` or long `item=`, `rater=`, `label=`.")
    if conger and not table.has_codes:
        raise ValueError(
            f"Conger's kappa needs the items x raters table, and this panel is sparse "
            f"({table.n_input} items x {len(table.raters)} raters, most pairs unrated), "
            "which is not supported yet; use the other coefficients (`coefficients=`).")
    light = "light_kappa" in names
    if light:
        check_light_table(table)
    kripp = "krippendorff_alpha" in names
    a = agreement_weights(k, weights)
    ka = None
    ordinal = False
    if kripp:
        d = krippendorff_disagreement(table, level)
        ordinal = d is None
        if not ordinal:
            top = d.max()
            ka = np.ones((k, k)) if not top > 0 else 1.0 - d / top
    pat = table.patterns
    if conger or light:
        if pat is not None:  # the distinct rating rows are known already
            codes, r, type_counts = pat.codes, pat.counts, pat.n
            inverse, item_of = np.arange(len(pat.n)), pat.of_item
        else:
            first, item_of, type_counts = distinct_rows(table.codes, -1, k - 1)
            codes, r, inverse = table.codes[first], table.counts[first], None
        n_raters = codes.shape[1]
        if conger and silent_raters(table):  # callers leave Conger out then
            raise ValueError("internal error: Conger's kappa with a rater who has no rating")
    elif pat is not None:  # count vectors of the distinct rating rows
        first, inverse, _ = distinct_rows(pat.counts, 0, pat.codes.shape[1])
        type_counts = np.bincount(inverse, weights=pat.n, minlength=len(first)).astype(
            np.int64)
        codes, r, item_of, n_raters = None, pat.counts[first], pat.of_item, 0
    else:
        most = table.codes.shape[1] if table.has_codes else None
        first, item_of, type_counts = distinct_rows(table.counts, 0, most)
        codes, r, inverse, n_raters = None, table.counts[first], None, 0
    # items without a rating form one type (all-zero counts): not scored.  The
    # row sums go through a float matrix product: a sum along a short axis is
    # several times slower in NumPy, and this runs on every call
    layout = "F" if estimate_only else "C"
    rf = r.astype(np.float64, order=layout)
    rt_all = rf @ np.ones(k)
    scored = np.flatnonzero(rt_all > 0)
    if estimate_only:  # found order; a slice (no copies) when the unrated type comes first
        order = scored
        if len(scored) and scored[-1] - scored[0] + 1 == len(scored):
            order = slice(scored[0], scored[-1] + 1)
    else:
        order = scored[_descending(type_counts[scored])]
    rank = np.full(len(type_counts), -1, dtype=np.int64)
    rank[order] = np.arange(len(scored))
    # type of each item, built only when asked (clusters): from the type of each
    # distinct row and the row of each item
    type_of = rank if inverse is None else rank[inverse]
    r = rf[order]
    rt = rt_all[order]
    type_counts = type_counts[order]
    if codes is not None:
        codes = codes[order]
    t = len(r)
    two = rt >= 2
    twof = two.astype(np.float64)
    rt1 = np.where(two, rt - 1.0, 1.0)
    pi = slice(3, 3 + k)
    knk = slice(5 + k, 5 + 2 * k)
    p = 5 + 2 * k
    per_type = per_type and not estimate_only
    # the wide blocks kept per type come in their place; pooled ones after every
    # column written per type
    o = slice(p, p + k * k) if ordinal and per_type else None
    p += k * k if o is not None else 0
    c = slice(p, p + n_raters * k) if conger else None
    p += n_raters * k if conger else 0
    lt = None
    if light:
        gi, hi = rater_pairs(n_raters)
        width = len(gi) * k * k
        if per_type and t * width > LIGHT_MAX_CELLS:
            raise ValueError(
                f"Light's kappa with a bootstrap or clusters keeps {t} distinct rating "
                f"rows x {len(gi)} rater pairs x {k * k} class pairs, more than "
                f"{LIGHT_MAX_CELLS:,} cells; use method='asymptotic' without `clusters=` "
                "(which needs no such table), or leave 'light_kappa' out of "
                "`coefficients=`.")
        if per_type:
            lt = slice(p, p + width)
            p += width
    built = p
    if ordinal and o is None:
        o = slice(p, p + k * k)
        p += k * k
    if light and lt is None:
        lt = slice(p, p + width)
        p += width
    # written column block by column block into one array (no concatenation)
    features = np.empty((t, built), order=layout)
    features[:, ONE] = 1.0
    features[:, TWO] = twof
    # sum_k r_k (r*_k - 1) = r . (r a^T) - r_i, a row-wise dot product
    agree = _agreement_sums(r, None if np.array_equal(a, np.eye(k)) else a, rt,
                            estimate_only)
    features[:, PA] = np.where(two, agree / (rt * rt1), 0.0)
    np.divide(r, rt[:, None], out=features[:, pi])
    kagree = _agreement_sums(r, ka, rt, estimate_only)
    features[:, 3 + k] = np.where(two, kagree / rt1, 0.0)
    np.multiply(rt, twof, out=features[:, 4 + k])
    np.multiply(r, twof[:, None], out=features[:, knk])
    pooled = []
    if ordinal and o.start < built:
        co = (r[:, :, None] * r[:, None, :] - np.eye(k)[None] * r[:, :, None]) / rt1[:, None,
                                                                                    None]
        np.multiply(co.reshape(t, k * k), twof[:, None], out=features[:, o])
    elif ordinal:  # sum_t n_t (r_t r_t^T - diag r_t) / (r_t - 1): one (K, K) product
        rw = r * (type_counts * twof / rt1)[:, None]
        co = rw.T @ r
        co[np.diag_indices(k)] -= rw.sum(axis=0)
        pooled.append(co.reshape(-1))
    if conger:  # one-hot: [rater g put the row in class k], built column-major
        by_rater = np.ascontiguousarray(codes.T)
        onehot = by_rater[:, None, :] == np.arange(k)[None, :, None]  # (R, K, T)
        features[:, c] = onehot.reshape(n_raters * k, t).T
    if light and lt.start < built:
        features[:, lt] = _pair_cells(codes, gi, hi, k).reshape(t, width)
    elif light:
        pooled.append(pair_confusions(codes, k, type_counts).reshape(-1))
    return Model(names=tuple(names), k=k, n_raters=n_raters, a=a, ka=ka, ordinal=ordinal,
                 conger=conger, features=features, type_counts=type_counts,
                 type_of=type_of, item_of=item_of, pi=pi, knk=knk,
                 o=o, c=c, light=lt, row_codes=codes if (conger or light) else None,
                 pooled=np.concatenate(pooled) if pooled else None)


def _agreement_sums(r: np.ndarray, w: np.ndarray | None, rt: np.ndarray, fast: bool
                    ) -> np.ndarray:
    """``sum_k r_k (r*_k - 1)`` per row, ``r* = r w^T`` (``w`` None: the identity).

    ``fast``: through a matrix product (the one-coefficient functions).  Else
    in the arithmetic of earlier releases, bit for bit: a clustered bootstrap
    groups clusters by their exact feature values, so a seed keeps drawing
    the same replicates.
    """
    rw = r if w is None else r @ w.T
    if fast:
        return (r * rw) @ np.ones(r.shape[1]) - rt
    return (r * (rw - 1.0)).sum(axis=1)


def _descending(n: np.ndarray) -> np.ndarray:
    """Stable argsort of counts, largest first (a radix sort when they span < 2**16)."""
    if len(n) and int(n.max()) - int(n.min()) < (1 << 16):
        return np.argsort((n.max() - n).astype(np.uint16), kind="stable")
    return np.argsort(-n, kind="stable")


# --------------------------------------------------------------------------- Light


def check_light_table(table: RatingsTable) -> None:
    """Light's kappa needs rater identity: a ValueError for anonymous or sparse panels."""
    if not table.has_codes:
        what = ("`counts=` input has anonymous raters. Pass wide `ratings` or long "
                "`item=`, `rater=`, `label=`" if not table.raters else
                f"this panel is sparse ({table.n_input} items x {len(table.raters)} raters, "
                "most pairs unrated), which is not supported yet; score the other "
                "coefficients with fk.agreement(..., coefficients=[...])")
        raise ValueError(
            f"Light's kappa compares each pair of raters, so it needs the items x raters "
            f"table; {what}.")


def rater_pairs(n_raters: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(g, h)``, ``g < h``, of every pair of raters."""
    return np.triu_indices(n_raters, 1)


def _pair_cells(codes: np.ndarray, gi: np.ndarray, hi: np.ndarray, k: int) -> np.ndarray:
    """One-hot (rows, P, K, K): row i has a 1 at (p, k, l) when pair p rated it k, l."""
    both = (codes[:, gi] >= 0) & (codes[:, hi] >= 0)
    out = np.zeros((len(codes), len(gi), k, k))
    ti, pi = np.nonzero(both)
    out[ti, pi, codes[ti, gi[pi]], codes[ti, hi[pi]]] = 1.0
    return out


def pair_confusions(codes: np.ndarray, k: int, counts: np.ndarray | None = None
                    ) -> np.ndarray:
    """Confusion matrix of every rater pair over the items both rated: (P, K, K).

    One ``bincount`` per pair over the items x raters code table (``-1``:
    missing), without collapsing items into types; ``counts``: the rows are
    types, each standing for that many items.
    """
    gi, hi = rater_pairs(codes.shape[1])
    out = np.empty((len(gi), k, k))
    for p, (g, h) in enumerate(zip(gi, hi, strict=True)):
        cg, ch = codes[:, g], codes[:, h]
        both = (cg >= 0) & (ch >= 0)
        cell = cg[both].astype(np.int64) * k + ch[both]
        out[p] = np.bincount(cell, weights=None if counts is None else counts[both],
                             minlength=k * k).reshape(k, k)
    return out


def _pair_terms(conf: np.ndarray, a: np.ndarray):
    """``(n_p, p_o, p_e, row shares, column shares)`` of confusions (..., K, K)."""
    rows = conf.sum(axis=-1)  # margins first, then one division each: (..., K)
    n = rows.sum(axis=-1)
    safe = np.where(n > 0, n, 1.0)
    row = rows / safe[..., None]
    col = conf.sum(axis=-2) / safe[..., None]
    po = np.einsum("...kl,kl->...", conf, a) / safe
    pe = ((row @ a) * col).sum(axis=-1)
    return n, po, pe, row, col


def light_value(conf: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Light's kappa: the mean Cohen's kappa of the rater pairs; conf (B, P, K, K) -> (B,).

    Pairs with no common item are left out; nan when no pair is left or a
    pair's kappa is undefined (chance agreement of 1).
    """
    n, po, pe, _, _ = _pair_terms(conf, a)
    used = n > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = np.where(1.0 - pe > 1e-14, (po - pe) / (1.0 - pe), np.nan)
    total = np.where(used, kappa, 0.0).sum(axis=-1)
    n_used = used.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_used > 0, total / n_used, np.nan)


def undefined_pairs(conf: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rater pairs (indices into :func:`rater_pairs`) whose Cohen's kappa makes
    Light's kappa undefined, and their common items: pairs sharing an item whose
    chance agreement is 1.  ``conf`` (P, K, K)."""
    n, _, pe, _, _ = _pair_terms(conf, a)
    bad = np.flatnonzero((n > 0) & ~(1.0 - pe > 1e-14))
    return bad, n[bad].astype(np.int64)


def _light_influence(m: Model, s: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, float]:
    """Light's linearisation: each pair's Cohen's kappa influence (the Fleiss, Cohen and
    Everitt 1969 terms) on the pair's cells, over the pairs in the mean."""
    k = m.k
    conf = s[m.light].reshape(-1, k, k)
    n_p, po, pe, row, col = _pair_terms(conf, m.a)
    used = n_p > 0
    kappa = (po - pe) / (1.0 - pe)
    a_row = col @ m.a.T          # sum_l a_kl c_l, for each k: (P, K)
    a_col = row @ m.a            # sum_k r_k a_kl, for each l: (P, K)
    inf = ((m.a[None] - po[:, None, None])
           - (1.0 - kappa)[:, None, None] * (a_row[:, :, None] + a_col[:, None, :]
                                            - 2.0 * pe[:, None, None]))
    inf /= (1.0 - pe)[:, None, None]
    n = float(s[TWO])
    scale = np.where(used, n / (used.sum() * np.where(used, n_p, 1.0)), 0.0)
    g[m.light] = (inf * scale[:, None, None]).reshape(-1)
    return g, n


# --------------------------------------------------------------------------- values


def _ratio(num, den):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _chance(name: str, m: Model, s: np.ndarray) -> np.ndarray:
    """Chance agreement ``p_e`` of a kappa-type coefficient, for feature sums (B, p)."""
    k = m.k
    n = s[:, ONE]
    if name == "percent_agreement":
        return np.zeros(len(s))
    if name == "brennan_prediger":
        return np.full(len(s), m.a.sum() / k**2)
    if name == "gwet_ac":
        if k < 2:
            return np.ones(len(s))
        pi = s[:, m.pi] / n[:, None]
        return m.a.sum() / (k * (k - 1)) * (pi * (1.0 - pi)).sum(axis=1)
    if name == "fleiss_kappa":
        pi = s[:, m.pi] / n[:, None]
        return np.einsum("bk,kl,bl->b", pi, m.a, pi)
    if name == "conger_kappa":
        rk = m.n_raters
        cg = s[:, m.c].reshape(len(s), rk, k)
        ng = cg.sum(axis=2)
        with np.errstate(invalid="ignore", divide="ignore"):
            pg = cg / ng[:, :, None]
        pbar = pg.mean(axis=1)
        # sum_kl a_kl (pbar_k pbar_l - s_kl / R) as quadratic forms x a x^T, one
        # (B, R, K) product: no (B, K, K) outer products or covariances
        # (sum_kl a_kl s_kl = (sum_g p_g a p_g^T - R pbar a pbar^T) / (R - 1))
        between = ((pbar @ m.a.T) * pbar).sum(axis=1)
        if rk < 2:
            return between
        within = ((pg @ m.a.T) * pg).sum(axis=2).sum(axis=1)
        return between - (within - rk * between) / (rk * (rk - 1))
    raise AssertionError(name)


def values(m: Model, s: np.ndarray) -> dict[str, np.ndarray]:
    """Every coefficient of ``m.names`` for feature sums ``s`` (B, p): name -> (B,).

    nan marks an undefined value (no item with two ratings, or chance
    agreement of 1).
    """
    s = np.atleast_2d(s)
    out = {}
    pa = _ratio(s[:, PA], s[:, TWO])
    for name in m.names:
        if name == "krippendorff_alpha":
            out[name] = _alpha(m, s)
            continue
        if name == "light_kappa":
            out[name] = light_value(s[:, m.light].reshape(len(s), -1, m.k, m.k), m.a)
            continue
        # rows without a rated item (a jackknife of one item) give nan shares: the
        # nan is the result, reported by the caller, not a NumPy warning
        with np.errstate(invalid="ignore", divide="ignore"):
            pe = _chance(name, m, s)
        if name == "percent_agreement":
            out[name] = pa
        else:
            out[name] = _ratio(pa - pe, 1.0 - pe) * np.where(1.0 - pe > 1e-14, 1.0, np.nan)
    return out


def _alpha(m: Model, s: np.ndarray) -> np.ndarray:
    n_pair = s[:, m.knk.start - 1]
    nk = s[:, m.knk]
    if m.ordinal:
        d = ordinal_disagreement(nk)
        o = s[:, m.o].reshape(len(s), m.k, m.k)
        observed = np.einsum("bkl,bkl->b", o, d)
        expected = np.einsum("bk,bkl,bl->b", nk, d, nk)
    else:
        observed = n_pair - s[:, m.knk.start - 2]
        expected = n_pair * n_pair - np.einsum("bk,kl,bl->b", nk, m.ka, nk)
    scale = np.maximum(n_pair * n_pair, 1.0)
    ok = expected / scale > 1e-14
    return np.where(ok, 1.0 - (n_pair - 1.0) * _ratio(observed, np.where(ok, expected, 1.0)),
                    np.nan)


# --------------------------------------------------------------------------- variance


def influence_vector(name: str, m: Model, s: np.ndarray, estimate: float) -> tuple[np.ndarray,
                                                                                     float]:
    """``(g, n)``: item ``i``'s centred influence term is ``F_i @ g`` (Gwet 2008).

    The variance is ``(1 - f) U / (U - 1) / n^2 * sum_u (F_u @ g)^2`` over
    the ``U`` resampling units (items, or clusters of items) — for items,
    irrCAC's ``(1 - f) / (n (n - 1)) * sum_i (x_i - coefficient)^2``.
    """
    g = np.zeros(len(s))  # the pooled columns too
    n = float(s[ONE])
    n2 = float(s[TWO])
    if name == "krippendorff_alpha":
        return _alpha_influence(m, s, g)
    if name == "light_kappa":
        return _light_influence(m, s, g)
    pe = float(_chance(name, m, s[None])[0])
    coef = estimate
    g[PA] = (n / n2) / (1.0 - pe)
    g[TWO] = -(n / n2) * pe / (1.0 - pe)
    g[ONE] = -coef
    if name in ("percent_agreement", "brennan_prediger"):
        return g, n
    lead = -2.0 * (1.0 - coef) / (1.0 - pe)
    g[ONE] += -lead * pe
    k = m.k
    pi = s[m.pi] / n
    if name == "fleiss_kappa":
        g[m.pi] = lead * (m.a @ pi + m.a.T @ pi) / 2.0
    elif name == "gwet_ac":
        g[m.pi] = lead * m.a.sum() / (k * (k - 1)) * (1.0 - pi)
    elif name == "conger_kappa":
        rk = m.n_raters
        cg = s[m.c].reshape(rk, k)
        ng = cg.sum(axis=1)
        pg = cg / ng[:, None]
        pbar = pg.mean(axis=0)
        cgk = (n / ng)[:, None] * (rk * pbar[None, :] - pg)
        big_m = cgk @ m.a                      # M[g, l] = sum_k c_gk a_kl
        small_s = (cgk * (pg @ m.a.T)).sum(axis=1)  # s_g = sum_k c_gk sum_l a_kl p_gl
        scale = lead / (rk * (rk - 1))
        g[m.c] = (scale * (big_m - small_s[:, None])).reshape(-1)
        g[ONE] += scale * float(np.dot(ng / n, small_s))
    return g, n


def _alpha_influence(m: Model, s: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, float]:
    """irrCAC's linearisation of Krippendorff's alpha (items with >= 2 ratings)."""
    n = float(s[TWO])
    big_n = float(s[m.knk.start - 1])
    nk = s[m.knk]
    rbar = big_n / n
    if m.ordinal:
        d = ordinal_disagreement(nk)
        ka = 1.0 - d / d.max() if d.max() > 0 else np.ones_like(d)
        oa = float((s[m.o].reshape(m.k, m.k) * ka).sum())
    else:
        ka = m.ka
        oa = float(s[m.knk.start - 2])
    pa_prime = oa / big_n
    eps = 1.0 / big_n
    pa = (1.0 - eps) * pa_prime + eps
    pi = nk / big_n
    pe = float(pi @ ka @ pi)
    alpha_prime = (pa_prime - pe) / (1.0 - pe)
    lead = -2.0 * (1.0 - alpha_prime) / (1.0 - pe)
    koa = 1.0 / (rbar * (1.0 - pe))
    if m.ordinal:
        g[m.o] = (koa * ka).reshape(-1)
    else:
        g[m.knk.start - 2] = koa
    g[m.knk.start - 1] = -pa / (rbar * (1.0 - pe)) - lead * pe / rbar
    g[m.knk] = lead * ((ka @ pi + ka.T @ pi) / 2.0) / rbar
    g[TWO] = (pa - pe) / (1.0 - pe) - alpha_prime
    return g, n


def unit_scores(m: Model, units: Units, g: np.ndarray) -> np.ndarray:
    """``F_u @ g`` of every unit; the pooled blocks (:attr:`Model.pooled`, item types
    only) from each type's count vector (coincidences) or rating row (pair cells)."""
    built = units.features.shape[1]
    d = units.features @ g[:built]
    if built == len(g):
        return d
    if units.n_clusters is not None or units.features is not m.features:
        raise AssertionError("pooled feature blocks serve item types only")
    k = m.k
    if m.o is not None and m.o.start >= built:
        # sum_kl o_kl G_kl = (r G r^T - sum_k r_k G_kk) / (r - 1) over pairable types
        gg = g[m.o].reshape(k, k)
        r = m.features[:, m.knk]
        rt = m.features[:, m.knk.start - 1]
        quad = ((r @ gg.T) * r) @ np.ones(k) - r @ np.diag(gg)
        d += np.where(rt >= 2, quad / np.where(rt >= 2, rt - 1.0, 1.0), 0.0)
    if m.light is not None and m.light.start >= built:
        gi, hi = rater_pairs(m.n_raters)
        cells = g[m.light].reshape(len(gi), k * k)
        for p, (gr, hr) in enumerate(zip(gi, hi, strict=True)):  # O(T) memory per pair
            cg, ch = m.row_codes[:, gr], m.row_codes[:, hr]
            both = (cg >= 0) & (ch >= 0)
            d += np.where(both, cells[p][np.where(both, cg.astype(np.int64) * k + ch, 0)], 0.0)
    return d


def gwet_variance(d: np.ndarray, unit_counts: np.ndarray, n: float, fpc: float,
                  n_units: int | None = None) -> float:
    """``fpc * U / (U - 1) / n^2 * sum_u count_u d_u^2``, ``d_u = F_u @ g``
    (:func:`unit_scores`)."""
    units = float(unit_counts.sum()) if n_units is None else float(n_units)
    if units < 2 or not n > 0:
        return math.nan
    return fpc * units / (units - 1.0) / (n * n) * float(np.dot(unit_counts, d * d))


# --------------------------------------------------------------------------- bootstrap


@dataclass(frozen=True, eq=False)
class Units:
    """Resampling units (items, or clusters of items) collapsed into types.

    ``features`` (T, p) and ``counts`` (T,) per type, most frequent first;
    ``n_clusters`` (None for items).
    """

    features: np.ndarray
    counts: np.ndarray
    n_clusters: int | None




def _sparse_tail(features: np.ndarray, start: int):
    """Columns from ``start`` on as (index, value) pairs per row (-1: none).

    Indices are int32 (small enough to stay in cache while a replicate walks
    every type); when every value is 1 (one-hot columns) the values come back
    with no columns, which the kernel reads as ones.
    """
    tail = features[:, start:]
    nnz = np.count_nonzero(tail, axis=1)
    q = int(nnz.max()) if len(nnz) else 0
    idx = np.full((len(tail), q), -1, dtype=np.int32)
    rows, cols = np.nonzero(tail)
    slot = np.arange(len(rows)) - np.repeat(np.cumsum(nnz) - nnz, nnz)
    idx[rows, slot] = cols + start
    values = tail[rows, cols]
    if np.all(values == 1.0):
        return idx, np.empty((len(tail), 0))
    val = np.zeros((len(tail), q))
    val[rows, slot] = values
    return idx, val


def rating_grid(m: Model, units: Units, *, force: bool = False
                ) -> tuple[np.ndarray, np.ndarray]:
    """``(grid_key, grid_spec)`` of the bootstrap kernel: the key of each rating-row
    type on the grid of every rating row, when Conger's and Light's columns are
    cheaper to add up from that grid than type by type (empty otherwise).

    A replicate then fills the grid (one write per type) and sums it out axis by
    axis, a few sequential passes, instead of one scattered add per type and
    rater (Conger) or rater pair (Light).  Only for item types (not clusters,
    whose rater columns are sums over their items).  ``force``: whenever the
    grid is possible, cheaper or not (tests).
    """
    none = np.empty(0, dtype=np.int64), np.zeros(5, dtype=np.int64)
    if m.row_codes is None or units.n_clusters is not None or (m.c is None and m.light is None):
        return none
    t, r = m.row_codes.shape
    base = m.k + 1
    size = base ** r
    if size > RATING_GRID_MAX:
        return none
    rated = m.row_codes >= 0
    per_type = 0.0  # scattered adds per type, each about three sequential steps
    if m.c is not None:
        per_type += rated.sum() / t
    if m.light is not None:
        per_type += (rated.sum(axis=1) * (rated.sum(axis=1) - 1) / 2).sum() / t
    passes = 2.0 + (2.4 if m.c is not None else 0.0) + (3.5 if m.light is not None else 0.0)
    if passes * size >= 3.0 * per_type * t and not force:
        return none
    key = (m.row_codes.astype(np.int64) + 1) @ (base ** np.arange(r - 1, -1, -1, dtype=np.int64))
    spec = np.array([base, r, m.k, m.c.start if m.c is not None else -1,
                     m.light.start if m.light is not None else -1], dtype=np.int64)
    return key, spec


def bootstrap_moments(m: Model, units: Units, n_resamples: int,
                      seed: np.random.SeedSequence, *, by_index: bool | None = None
                      ) -> np.ndarray:
    """Feature sums of ``n_resamples`` unit-bootstrap replicates: (B, p).

    A multinomial over the unit types, or uniform unit draws when almost
    every unit is its own type and the multinomial has no Poisson tables
    (``by_index`` forces one or the other);
    Conger's rater columns (one-hot, mostly zero) are added as sparse
    entries.
    """
    from ._core.units import block_seeds, poisson_tables, run_driver
    kern = raters_kernels()

    feats, counts = units.features, units.counts
    n_units = int(counts.sum())
    tail = m.c if m.c is not None else m.light
    grid_key, grid_spec = rating_grid(m, units)
    if tail is not None:
        dense = np.ascontiguousarray(feats[:, :tail.start])
        if len(grid_key):  # the rater columns come from the grid
            idx, val = np.empty((len(feats), 0), np.int32), np.empty((len(feats), 0))
        else:
            idx, val = _sparse_tail(feats, tail.start)
    else:
        dense, idx, val = feats, np.empty((len(feats), 0), np.int32), np.empty((len(feats), 0))
    # many types: one Poisson table look-up per type instead of a binomial (the
    # ~sqrt(n) top-up draws per replicate pay off from about 2 sqrt(n) types)
    many = len(counts) >= POISSON_MIN_TYPES_PER_ROOT * math.sqrt(n_units)
    tables = poisson_tables(counts, n_units) if many and by_index is not True else None
    if by_index is None:
        # uniform unit draws only where no Poisson tables exist: with them the
        # multinomial was faster even at 0.94 types per unit (sequential writes
        # against one random increment per unit)
        by_index = tables is None and len(counts) > TYPES_PER_UNIT_MAX * n_units
    if by_index:
        tables = None
    # units listed type by type: interchangeable within a type, so this order
    # is as good as the data's and does not depend on it
    unit_type = (np.repeat(np.arange(len(counts), dtype=np.int64), counts) if by_index
                 else np.empty(0, dtype=np.int64))
    if tail is not None and not by_index:
        # rating-row types share the dense features of their count vector: add the
        # draws up per distinct dense row first, then each dense row once
        # (rows compared as bytes: ten times faster than ``np.unique(axis=0)``; a
        # row written two ways, 0.0 and -0.0, would only split a group)
        rows = np.ascontiguousarray(dense)
        as_bytes = rows.view(np.dtype((np.void, rows.shape[1] * rows.itemsize))).ravel()
        _, first, dense_of = np.unique(as_bytes, return_index=True, return_inverse=True)
        dense, dense_of = rows[first], dense_of.reshape(-1).astype(np.int64)
    else:
        dense_of = np.arange(len(dense), dtype=np.int64)
    if tables is None:
        # (tab_of, lo, ptr, prob, alias, cell_prob, cell_alias) of no table
        tables = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(1, np.int64),
                  np.empty(0), np.empty(0, np.int64), np.empty(0), np.empty(0, np.int64))
    per_rep = (n_units if by_index else len(counts)) + dense.shape[1] + idx.shape[1]
    # without the kernels compiled, the blocks run from Python with the rater
    # columns as sparse entries (no grid, the same integer sums)
    sparse = _sparse_tail(feats, tail.start) if len(grid_key) else (idx, val)
    return run_driver(kern._bootstrap_type_moments, kern._bootstrap_type_moments_serial,
                      n_resamples * per_rep, counts, dense_of, np.ascontiguousarray(dense),
                      idx, val, np.int64(feats.shape[1]), unit_type, tables, grid_key,
                      grid_spec, np.int64(n_units), n_resamples,
                      block_seeds(seed, n_resamples),
                      blocks=functools.partial(_moment_blocks, sparse=sparse))


def _moment_blocks(type_counts, dense_of, dense, sp_idx, sp_val, n_feat, unit_type, poisson,
                   grid_key, grid_spec, n_units, n_rep, block_seeds, *, sparse) -> np.ndarray:
    """``_bootstrap_type_moments_serial`` as a Python loop over its blocks (the
    same blocks and seeds, so the same replicates), with the scratch allocated
    here: a fresh kernel cache then compiles the block alone, not the driver
    and its allocations (see :func:`fastkappa._core.units.run_driver`).

    ``sparse`` = ``(sp_idx, sp_val)`` of every column after the dense ones:
    they replace the grid, whose kernels need not compile then.  Conger's and
    Light's columns are counts either way, sums of whole numbers, so they come
    out the same.
    """
    kern = raters_kernels()
    sp_idx, sp_val = sparse
    total = np.int64(type_counts.sum())
    out = np.zeros((n_rep, int(n_feat)), dtype=np.float64)
    n_blocks = len(block_seeds)
    step = -(-n_rep // n_blocks)
    state = np.empty(4, dtype=np.uint64)
    block = (kern._moments_block_units if len(unit_type)
             else kern._moments_block_poisson if len(poisson[0])
             else kern._moments_block_binomial)  # only the draw in use compiles
    draws = np.zeros(len(type_counts), dtype=np.int64)
    group_draws = np.zeros(dense.shape[0], dtype=np.int64)
    for b in range(n_blocks):
        lo = min(n_rep, b * step)
        hi = min(n_rep, lo + step)
        block(type_counts, total, n_units, unit_type, poisson, dense_of, dense, sp_idx, sp_val,
              np.int64(lo), np.int64(hi), draws, group_draws, block_seeds[b], True, state, out)
    return out


__all__ = ["COEFFICIENTS", "LEVELS", "ON_REQUEST", "Model", "Units", "agreement_weights",
           "bootstrap_moments", "build_model", "gwet_variance", "influence_vector",
           "light_value", "pair_confusions", "undefined_pairs", "unit_scores", "values"]
