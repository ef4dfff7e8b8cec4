"""Slow, obviously-correct oracles written straight from the definitions.

The only home of the test oracles.  Plain Python loops over rows, cells,
items, raters and pairs of ratings, written straight from the definitions in
the papers they cite; no code shared with fastkappa's kernels.  Exact rational arithmetic
(``fractions.Fraction``) wherever the inputs are integers, so a test can ask
for exact equality.  Many-rater ratings are lists of rows (one per item)
holding class *indices* 0..K-1 or None (missing); ``a`` is a K x K list of
agreement weights.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np


def item_counts(ratings, k):
    """r[i][c]: raters who put item i in class c (items with no rating dropped)."""
    out = []
    for row in ratings:
        r = [0] * k
        for v in row:
            if v is not None:
                r[v] += 1
        if sum(r):
            out.append(r)
    return out


def percent_agreement(ratings, k, a):
    """Mean over items with >= 2 ratings of the weighted share of agreeing ordered pairs."""
    total, n2 = 0.0, 0
    for row in ratings:
        vals = [v for v in row if v is not None]
        m = len(vals)
        if m < 2:
            continue
        n2 += 1
        s = 0.0
        for x in range(m):
            for y in range(m):
                if x != y:
                    s += a[vals[x]][vals[y]]
        total += s / (m * (m - 1))
    return total / n2


def class_shares(ratings, k):
    """pi_k: mean over rated items of the share of the item's ratings in class k."""
    rows = item_counts(ratings, k)
    return [sum(r[c] / sum(r) for r in rows) / len(rows) for c in range(k)]


def _kappa(pa, pe):
    return (pa - pe) / (1 - pe)


def fleiss_kappa(ratings, k, a):
    pi = class_shares(ratings, k)
    pe = sum(a[x][y] * pi[x] * pi[y] for x in range(k) for y in range(k))
    return _kappa(percent_agreement(ratings, k, a), pe)


def gwet_ac(ratings, k, a):
    pi = class_shares(ratings, k)
    t = sum(a[x][y] for x in range(k) for y in range(k))
    pe = t / (k * (k - 1)) * sum(p * (1 - p) for p in pi)
    return _kappa(percent_agreement(ratings, k, a), pe)


def brennan_prediger(ratings, k, a):
    t = sum(a[x][y] for x in range(k) for y in range(k))
    return _kappa(percent_agreement(ratings, k, a), t / k**2)


def conger_kappa(ratings, k, a):
    """Chance agreement as the mean over ordered rater pairs of Cohen's chance agreement."""
    n_raters = len(ratings[0])
    p = []
    for g in range(n_raters):
        vals = [row[g] for row in ratings if row[g] is not None]
        p.append([vals.count(c) / len(vals) for c in range(k)])
    pe, pairs = 0.0, 0
    for g in range(n_raters):
        for h in range(n_raters):
            if g != h:
                pairs += 1
                pe += sum(a[x][y] * p[g][x] * p[h][y] for x in range(k) for y in range(k))
    return _kappa(percent_agreement(ratings, k, a), pe / pairs)


def scott_pi(y1, y2, k):
    """Scott's pi of two complete raters: pooled class shares."""
    n = len(y1)
    po = sum(x == y for x, y in zip(y1, y2, strict=True)) / n
    pooled = [(y1.count(c) + y2.count(c)) / (2 * n) for c in range(k)]
    pe = sum(q * q for q in pooled)
    return (po - pe) / (1 - pe)


def krippendorff_alpha(ratings, k, d):
    """From pairs of values within units: 1 - D_o / D_e (Krippendorff 2011).

    ``d`` is a K x K disagreement list, or a function of the value counts
    ``n_c`` returning one (ordinal).
    """
    o = [[0.0] * k for _ in range(k)]
    for row in ratings:
        vals = [v for v in row if v is not None]
        m = len(vals)
        if m < 2:
            continue
        for x in range(m):
            for y in range(m):
                if x != y:
                    o[vals[x]][vals[y]] += 1.0 / (m - 1)
    nc = [sum(o[c]) for c in range(k)]
    n = sum(nc)
    if callable(d):
        d = d(nc)
    do = sum(o[x][y] * d[x][y] for x in range(k) for y in range(k)) / n
    de = sum(nc[x] * nc[y] * d[x][y] for x in range(k) for y in range(k)) / (n * (n - 1))
    return 1 - do / de


def ordinal_distance(nc):
    k = len(nc)
    out = [[0.0] * k for _ in range(k)]
    for x in range(k):
        for y in range(k):
            lo, hi = min(x, y), max(x, y)
            out[x][y] = (sum(nc[lo:hi + 1]) - (nc[x] + nc[y]) / 2) ** 2
    return out


def percent_agreement_se(ratings, k, a, fpc=1.0):
    """Gwet's variance of p_a (Brennan-Prediger's with chance agreement 0), loops."""
    rows = [[v for v in row if v is not None] for row in ratings]
    rows = [r for r in rows if r]
    n = len(rows)
    n2 = sum(len(r) >= 2 for r in rows)
    pa = percent_agreement(ratings, k, a)
    total = 0.0
    for vals in rows:
        m = len(vals)
        pa_i = 0.0
        if m >= 2:
            pa_i = sum(a[vals[x]][vals[y]] for x in range(m) for y in range(m) if x != y) / (
                m * (m - 1))
        x_i = n / n2 * pa_i
        total += (x_i - pa) ** 2
    return math.sqrt(fpc * total / (n * (n - 1)))


def fleiss_influence(ratings, k, a):
    """Gwet's per-item terms x_i - kappa of Fleiss' kappa (irrCAC's formulas, as loops).

    Returns the list of centred terms, one per rated item; the variance is
    ``sum(d^2) / (n (n - 1))`` and for clusters ``C / (C - 1) / n^2 *
    sum_c (sum_{i in c} d_i)^2``.
    """
    rows = [[v for v in row if v is not None] for row in ratings]
    keep = [i for i, r in enumerate(rows) if r]
    n = len(keep)
    n2 = sum(len(rows[i]) >= 2 for i in keep)
    pi = class_shares(ratings, k)
    pe = sum(a[x][y] * pi[x] * pi[y] for x in range(k) for y in range(k))
    kappa = fleiss_kappa(ratings, k, a)
    piw = [sum((a[c][y] + a[y][c]) / 2 * pi[y] for y in range(k)) for c in range(k)]
    out = []
    for i in keep:
        vals = rows[i]
        m = len(vals)
        pa_i = 0.0
        if m >= 2:
            pa_i = sum(a[vals[x]][vals[y]] for x in range(m) for y in range(m) if x != y) / (
                m * (m - 1))
        kappa_i = n / n2 * (pa_i - (pe if m >= 2 else 0.0)) / (1 - pe)
        pe_i = sum(piw[v] for v in vals) / m
        x_i = kappa_i - 2 * (1 - kappa) * (pe_i - pe) / (1 - pe)
        out.append(x_i - kappa)
    return out


def _disagreement(k: int, weights=None) -> list[list[float]]:
    if weights is None:
        return [[float(i != j) for j in range(k)] for i in range(k)]
    if weights == "linear":
        return [[float(abs(i - j)) for j in range(k)] for i in range(k)]
    return [[float((i - j) ** 2) for j in range(k)] for i in range(k)]


def cluster_robust_se(t, p, clusters, k: int, weights=None) -> float:
    """Cluster-robust standard error of kappa: ``sqrt(sum_c (sum_{r in c} IF_r)^2) / N``.

    ``t`` and ``p`` are class indices 0..k-1; ``IF`` is the Fleiss-Cohen-Everitt
    influence value of a row's cell (:func:`fce_row_influence`).
    """
    return math.sqrt(robust_variance(fce_row_influence(t, p, k, weights), None, clusters))


def weights_ref(k, weights):
    i = np.arange(k)[:, None]
    j = np.arange(k)[None, :]
    if weights is None:
        return (i != j).astype(float)
    if not isinstance(weights, str):
        return np.asarray(weights, dtype=float)
    if weights == "linear":
        return np.abs(i - j).astype(float)
    if weights == "quadratic":
        return ((i - j) ** 2).astype(float)
    raise AssertionError(weights)


def kappa_ref(t, p, k, weights=None, sw=None):
    """1 - sum(w O) / sum(w E) from an np.add.at table; nan when undefined."""
    o = np.zeros((k, k))
    np.add.at(o, (np.asarray(t), np.asarray(p)), 1.0 if sw is None else np.asarray(sw, float))
    w = weights_ref(k, weights)
    n = o.sum()
    e = np.outer(o.sum(1), o.sum(0)) / n
    den = (w * e).sum()
    return np.nan if den <= 0 else 1.0 - (w * o).sum() / den


def brute_force(t, s, k, weights=None, sw=None):
    """Best kappa over every monotone assignment of the distinct scores.

    A choice of K-1 cut positions p_1 <= ... <= p_{K-1} in 0..D gives
    distinct value d the class #{j : p_j <= d}; repeats and the ends make
    empty classes.  Returns (best kappa, list of best class-per-value tuples).
    """
    u, inv = np.unique(s, return_inverse=True)
    d = len(u)
    best, arg = -np.inf, []
    for cuts in itertools.combinations_with_replacement(range(d + 1), k - 1):
        cls = np.searchsorted(np.asarray(cuts), np.arange(d), side="right")
        kap = kappa_ref(t, cls[inv], k, weights, sw)
        if np.isnan(kap):
            continue
        if kap > best + 1e-12:
            best, arg = kap, [tuple(cls)]
        elif abs(kap - best) <= 1e-12:
            arg.append(tuple(cls))
    return best, arg


def brute_force_cuts(t, s, k, weights=None, sw=None):
    """:func:`brute_force` over the assignments that strictly increasing float cut
    points can give: the cuts between two distinct scores a < c are distinct
    floats in (a, c], so a gap of a few ulps holds only a few of them."""
    u, inv = np.unique(s, return_inverse=True)
    d = len(u)
    room = [None] + [_floats_between(u[i - 1], u[i]) for i in range(1, d)]
    best = -np.inf
    for cuts in itertools.combinations_with_replacement(range(d + 1), k - 1):
        if any(0 < p < d and cuts.count(p) > room[p] for p in set(cuts)):
            continue
        cls = np.searchsorted(np.asarray(cuts), np.arange(d), side="right")
        kap = kappa_ref(t, cls[inv], k, weights, sw)
        if not np.isnan(kap):
            best = max(best, kap)
    return best


def _floats_between(a: float, c: float, most: int = 64) -> int:
    """How many floats lie in (a, c] (counted up to ``most``)."""
    n, x = 0, a
    while n < most:
        x = np.nextafter(x, np.inf)
        if x > c:
            break
        n += 1
    return n


def fce_variances_exact(table, weights=None):
    """Fleiss-Cohen-Everitt (1969) variances of kappa, exactly, as Fractions.

    ``(var, var0, cancellation)`` for an integer (K, K) table, straight from
    the formulas of Fleiss, Cohen & Everitt (1969) with agreement weights ``a = 1 - w / max(w)``:

        var  = (sum p_ij [a_ij (1-Pe) - (abar_i. + abar_.j)(1-Po)]^2
                - (Po Pe - 2 Pe + Po)^2) / (N (1-Pe)^4)
        var0 = (sum p_i. p_.j [a_ij - (abar_i. + abar_.j)]^2 - Pe^2) / (N (1-Pe)^2)

    ``cancellation`` is the larger of ``first term / difference`` over the
    two numerators: how many times a floating-point evaluation of the
    difference magnifies the rounding of its terms (1 when nothing cancels,
    inf when the variance is 0).
    """

    o = [[int(v) for v in row] for row in table]
    k = len(o)
    if weights is None:
        w = [[Fraction(int(i != j)) for j in range(k)] for i in range(k)]
    elif isinstance(weights, str):
        power = {"linear": 1, "quadratic": 2}[weights]
        w = [[Fraction(abs(i - j) ** power) for j in range(k)] for i in range(k)]
    else:
        w = [[Fraction(v) for v in row] for row in weights]
    wmax = max(max(row) for row in w)
    a = [[1 - w[i][j] / wmax for j in range(k)] for i in range(k)]
    n = sum(sum(row) for row in o)
    p = [[Fraction(o[i][j], n) for j in range(k)] for i in range(k)]
    pr = [sum(p[i]) for i in range(k)]
    pc = [sum(p[i][j] for i in range(k)) for j in range(k)]
    po = sum(a[i][j] * p[i][j] for i in range(k) for j in range(k))
    pe = sum(a[i][j] * pr[i] * pc[j] for i in range(k) for j in range(k))
    ar = [sum(pc[j] * a[i][j] for j in range(k)) for i in range(k)]
    ac = [sum(pr[i] * a[i][j] for i in range(k)) for j in range(k)]
    s1 = sum(p[i][j] * (a[i][j] * (1 - pe) - (ar[i] + ac[j]) * (1 - po)) ** 2
             for i in range(k) for j in range(k))
    t1 = (po * pe - 2 * pe + po) ** 2
    s0 = sum(pr[i] * pc[j] * (a[i][j] - (ar[i] + ac[j])) ** 2
             for i in range(k) for j in range(k))
    t0 = pe**2
    var = (s1 - t1) / (n * (1 - pe) ** 4)
    var0 = (s0 - t0) / (n * (1 - pe) ** 2)
    cancellation = max(float(s1 / (s1 - t1)) if s1 != t1 else float("inf"),
                       float(s0 / (s0 - t0)) if s0 != t0 else float("inf"))
    return var, var0, cancellation


# ------------------------------------------------------------------- two-rater kappa, exact
def is_missing(v) -> bool:
    """True for None, NaN and pandas' NA (the values nan_policy is about)."""
    if v is None:
        return True
    try:
        if v != v:  # NaN (float, np.floating)
            return True
    except TypeError:  # pd.NA refuses bool()
        return True
    return type(v).__name__ == "NAType"


def weight_matrix_ref(k: int, weights=None) -> list[list[Fraction]]:
    """Disagreement weights w[i][j] by class index (exact)."""
    if weights is None:
        return [[Fraction(int(i != j)) for j in range(k)] for i in range(k)]
    if weights == "linear":
        return [[Fraction(abs(i - j)) for j in range(k)] for i in range(k)]
    if weights == "quadratic":
        return [[Fraction((i - j) ** 2) for j in range(k)] for i in range(k)]
    return [[_exact(weights[i][j]) for j in range(k)] for i in range(k)]


def _exact(x) -> Fraction:
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int) or (hasattr(x, "is_integer") and float(x).is_integer()
                              and abs(float(x)) < 2**53):
        return Fraction(int(x))
    return Fraction(float(x))


def confusion_dict(y_true, y_pred, classes, sample_weight=None) -> list[list]:
    """Confusion table by a dict loop: rows y_true, columns y_pred, in ``classes`` order.

    Counts are Python ints (Fractions of the weights when ``sample_weight``).
    Raises KeyError for a value that is not a class.
    """
    index = {c: i for i, c in enumerate(classes)}
    k = len(classes)
    table = [[0] * k for _ in range(k)]
    for r, (a, b) in enumerate(zip(y_true, y_pred, strict=True)):
        w = 1 if sample_weight is None else _exact(sample_weight[r])
        table[index[a]][index[b]] += w
    return table


def kappa_from_table(table, weights=None, *, exact: bool = True):
    """kappa_w = 1 - sum(w O) / sum(w E), E_ij = r_i c_j / N, cell by cell.

    Returns a Fraction (``exact=True``) or a float; None when undefined
    (sum(w E) == 0).
    """
    k = len(table)
    conv = _exact if exact else float
    o = [[conv(table[i][j]) for j in range(k)] for i in range(k)]
    w = weight_matrix_ref(k, weights)
    if not exact:
        w = [[float(x) for x in row] for row in w]
    n = sum(sum(row) for row in o)
    r = [sum(o[i]) for i in range(k)]
    c = [sum(o[i][j] for i in range(k)) for j in range(k)]
    num = sum(w[i][j] * o[i][j] for i in range(k) for j in range(k))
    den = sum(w[i][j] * r[i] * c[j] / n for i in range(k) for j in range(k))
    if den == 0:
        return None
    return 1 - num / den


def qwk_five_sums(x_idx, y_idx):
    """QWK from the five running sums of class indices (exact Fraction).

    sum(wO) = Sx2 + Sy2 - 2 Sxy and sum(wE) = Sx2 + Sy2 - 2 Sx Sy / N.
    """
    n = sx = sy = sxx = syy = sxy = 0
    for x, y in zip(x_idx, y_idx, strict=True):
        x, y = int(x), int(y)
        n += 1
        sx += x
        sy += y
        sxx += x * x
        syy += y * y
        sxy += x * y
    den = Fraction(n * (sxx + syy) - 2 * sx * sy, n)
    if den == 0:
        return None
    return 1 - Fraction(sxx + syy - 2 * sxy) / den


def _key(v):
    """Class key of a label: whole-number floats are their integer."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if hasattr(v, "item") and not isinstance(v, str):  # NumPy scalars
        return _key(v.item())
    return v


def kept_rows(y_true, y_pred, *, ignore_index=None, sample_weight=None):
    """Rows left after dropping missing values and ``ignore_index`` on either side."""
    t, p, w = [], [], []
    for r, (a, b) in enumerate(zip(y_true, y_pred, strict=True)):
        if is_missing(a) or is_missing(b):
            continue
        a, b = _key(a), _key(b)
        if ignore_index is not None and (a == ignore_index or b == ignore_index):
            continue
        t.append(a)
        p.append(b)
        if sample_weight is not None:
            w.append(sample_weight[r])
    return t, p, (w if sample_weight is not None else None)


def reference_kappa(y_true, y_pred, *, weights=None, labels=None, sample_weight=None,
                    ignore_index=None, exact=True):
    """Kappa computed the slow way on the rows that should be kept.

    Drops rows with a missing value or ``ignore_index`` on either side, takes
    the classes as ``labels`` or the sorted union of the kept values, builds
    the table with :func:`confusion_dict` and applies the definition.
    Returns None when kappa is undefined.
    """
    t, p, w = kept_rows(y_true, y_pred, ignore_index=ignore_index,
                        sample_weight=sample_weight)
    classes = list(labels) if labels is not None else sorted(set(t) | set(p))
    table = confusion_dict(t, p, classes, w)
    return kappa_from_table(table, weights, exact=exact)


def close(a, b, *, rel: float = 1e-9, abs_: float = 1e-12) -> bool:
    """Float comparison for oracle values (None and nan mean undefined)."""
    if b is None:
        return a is None or (isinstance(a, float) and math.isnan(a))
    return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=abs_)


# --------------------------------------------------------------------------- counting kernels


def slot_counts(t, t_off, t_lut, p, p_off, p_lut, s):
    """The counting kernels' documented rule, one row at a time: slot = lut[clamp(v - off)].

    Returns the flat (s * s,) int64 table of slot pairs.
    """
    out = np.zeros(s * s, dtype=np.int64)
    for a, b in zip(t.tolist(), p.tolist(), strict=True):
        i = t_lut[min(max(a - t_off, 0), len(t_lut) - 1)]
        j = p_lut[min(max(b - p_off, 0), len(p_lut) - 1)]
        out[i * s + j] += 1
    return out


# --------------------------------------------------------------------------- resampling


def row_bootstrap_kappas(t, p, k, weights, n_rep, seed, sample_weight=None):
    """The row-index bootstrap: draw N row indices with replacement, rebuild the table.

    O(N) per replicate (what the fast paths avoid); rows carry their
    ``sample_weight``.  Returns (n_rep,) kappas, nan for an undefined replicate.
    """
    t, p = np.asarray(t), np.asarray(p)
    n = len(t)
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    gen = np.random.default_rng(seed)
    out = np.empty(n_rep)
    for b in range(n_rep):
        idx = gen.integers(0, n, n)
        out[b] = kappa_ref(t[idx], p[idx], k, weights, sw[idx])
    return out


def jackknife_acceleration(t, p, k, weights, sample_weight=None, clusters=None):
    """BCa acceleration: leave one row (or one cluster) out, kappa recomputed from scratch."""
    units = np.arange(len(t)) if clusters is None else np.asarray(clusters)
    jack = []
    for u in np.unique(units):
        keep = units != u
        sw = None if sample_weight is None else np.asarray(sample_weight)[keep]
        jack.append(kappa_ref(np.asarray(t)[keep], np.asarray(p)[keep], k, weights, sw))
    jack = np.array(jack)
    d = jack.mean() - jack
    return np.sum(d**3) / (6 * np.sum(d**2) ** 1.5)


# --------------------------------------------------------------------------- asymptotic


def fce_row_influence(t, p, k, weights=None, sample_weight=None):
    """Per-row FCE influence value ``(T_ij - Tbar) / (1 - Pe)^2`` of each row's cell.

    Loops over rows with weights ``sample_weight`` (Fleiss, Cohen & Everitt 1969).
    """
    n = len(t)
    sw = [1.0] * n if sample_weight is None else [float(x) for x in sample_weight]
    total = sum(sw)
    w = _disagreement(k, weights) if weights is None or isinstance(weights, str) else [
        [float(x) for x in row] for row in weights]
    wmax = max(max(row) for row in w)
    a = [[1.0 - w[i][j] / wmax for j in range(k)] for i in range(k)]
    pi, pj, po = [0.0] * k, [0.0] * k, 0.0
    for x, y, s in zip(t, p, sw, strict=True):
        pi[x] += s / total
        pj[y] += s / total
        po += a[x][y] * s / total
    pe = sum(a[i][j] * pi[i] * pj[j] for i in range(k) for j in range(k))
    abar_i = [sum(pj[j] * a[i][j] for j in range(k)) for i in range(k)]
    abar_j = [sum(pi[i] * a[i][j] for i in range(k)) for j in range(k)]
    tbar = po * pe - 2 * pe + po
    return [(a[x][y] * (1 - pe) - (abar_i[x] + abar_j[y]) * (1 - po) - tbar) / (1 - pe) ** 2
            for x, y in zip(t, p, strict=True)]


def robust_variance(values, sample_weight=None, clusters=None):
    """``sum_c (sum_{r in c} w_r v_r)^2 / (sum_r w_r)^2`` by a loop (each row its own
    cluster when ``clusters`` is None)."""
    n = len(values)
    sw = [1.0] * n if sample_weight is None else [float(x) for x in sample_weight]
    ids = range(n) if clusters is None else clusters
    sums: dict = {}
    for v, s, c in zip(values, sw, ids, strict=True):
        sums[c] = sums.get(c, 0.0) + s * float(v)
    return sum(x * x for x in sums.values()) / sum(sw) ** 2


def paired_difference_variance(t, pa, pb, k, weights=None, sample_weight=None, clusters=None):
    """Var(kappa_a - kappa_b) for two models on the same rows: ``IF_a - IF_b`` per row."""
    ia = fce_row_influence(t, pa, k, weights, sample_weight)
    ib = fce_row_influence(t, pb, k, weights, sample_weight)
    return robust_variance([x - y for x, y in zip(ia, ib, strict=True)], sample_weight,
                           clusters)


# --------------------------------------------------------------------------- training losses


def soft_kappa_ratio(p, y, w):
    """``sum(w O) / sum(w E)`` of the soft confusion matrix ``O_kj = sum_n [y_n = k] P_nj``
    (de la Torre, Puig & Valls 2018), by a loop over rows."""
    n, k = p.shape
    o = np.zeros((k, k))
    for i in range(n):
        o[y[i]] += p[i]
    e = np.outer(o.sum(axis=1), o.sum(axis=0)) / n
    return (w * o).sum() / (w * e).sum()


def light_kappa(ratings, k, weights=None, item_weight=None):
    """Light (1971): mean over rater pairs of scikit-learn's Cohen's kappa on the items
    both rated (pairs with no common item left out); ``weights`` as scikit-learn's
    (None, 'linear', 'quadratic'); ``item_weight`` one weight per item."""
    from sklearn.metrics import cohen_kappa_score

    n_raters = len(ratings[0])
    w = [1.0] * len(ratings) if item_weight is None else item_weight
    kappas = []
    for g, h in itertools.combinations(range(n_raters), 2):
        both = [i for i, row in enumerate(ratings)
                if row[g] is not None and row[h] is not None]
        if not both:
            continue
        kappas.append(cohen_kappa_score([ratings[i][g] for i in both],
                                        [ratings[i][h] for i in both], labels=list(range(k)),
                                        weights=weights, sample_weight=[w[i] for i in both]))
    return sum(kappas) / len(kappas)


def light_kappa_se(ratings, k, weights=None, step=1e-5):
    """Linearised SE of Light's kappa from numerical derivatives: item i's influence is
    dL/dw_i at unit item weights (central differences); SE^2 = U/(U-1) sum_i (dL/dw_i)^2
    over the U items with two or more ratings."""
    n = len(ratings)
    pairable = [i for i, row in enumerate(ratings) if sum(v is not None for v in row) >= 2]
    total = 0.0
    for i in pairable:
        up, down = [1.0] * n, [1.0] * n
        up[i], down[i] = 1.0 + step, 1.0 - step
        d = (light_kappa(ratings, k, weights, up) - light_kappa(ratings, k, weights, down)) / (
            2 * step)
        total += d * d
    u = len(pairable)
    return math.sqrt(u / (u - 1) * total)


# --------------------------------------------------------------------------- sampler drivers
# Not oracles: loops that call fastkappa's own samplers so that tests can
# compare their draws with SciPy's distributions (they live here, not in the
# package, because only tests need them).


def binomial_draws(n, p, size, seed):
    """``size`` draws of the block generator's exact binomial, from ``seed``."""
    from fastkappa._kernels import sampling

    state = np.empty(4, dtype=np.uint64)
    sampling._rng_init(np.uint32(seed), state)
    return np.array([sampling._binomial(np.int64(n), float(p), state) for _ in range(size)],
                    dtype=np.int64)


def poisson_multinomial_draws(counts, n_rep, seed, margin=None):
    """``n_rep`` draws (n_rep, T) of the Poisson-and-top-up Multinomial(N, counts / N),
    with the tables built as ``fastkappa.bootstrap`` builds them (one per cell).

    ``margin``: the Poisson means sum to ``N - margin sqrt(N)``; by default the
    margin the package chooses (``fastkappa._core.units.poisson_margin``).
    """
    from fastkappa._core.units import poisson_margin
    from fastkappa._kernels import sampling

    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    if margin is None:
        margin = poisson_margin(len(counts), n)
    lam = counts * ((n - margin * math.sqrt(n)) / n)
    lo, ptr, prob, alias = sampling._poisson_tables(lam)
    cell_prob = np.empty(len(counts))
    cell_alias = np.empty(len(counts), dtype=np.int64)
    sampling._alias_table(counts.astype(np.float64), cell_prob, cell_alias)
    tab_of = np.arange(len(counts), dtype=np.int64)
    state = np.empty(4, dtype=np.uint64)
    sampling._rng_init(np.uint32(seed), state)
    out = np.empty((n_rep, len(counts)), dtype=np.int64)
    for rep in range(n_rep):
        sampling._draw_multinomial_poisson(tab_of, lo, ptr, prob, alias, cell_prob,
                                           cell_alias, np.int64(n), out[rep], state)
    return out
