"""Slow, obviously-correct oracles for the core engine.

Plain Python loops over rows and cells, written straight from the
definitions in DESIGN.md, with no NumPy tricks and no shared code with
fastkappa. Exact rational arithmetic (``fractions.Fraction``) wherever the
inputs are integers, so a test can ask for exact equality.
"""

from __future__ import annotations

import math
from fractions import Fraction


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
