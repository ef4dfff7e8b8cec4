"""Large-sample standard errors of kappa, built on its influence function.

Notation (Fleiss, Cohen & Everitt 1969): agreement weights
``a = 1 - w / max(w)``, cell proportions ``p = O / N``, margins ``p_i.`` and
``p_.j``, ``Po = sum(a p)``, ``Pe = sum(a_ij p_i. p_.j)``,
``abar_i. = sum_j p_.j a_ij`` and ``abar_.j = sum_i p_i. a_ij``.

* Influence of one row in cell (i, j) on kappa (Fleiss, Cohen & Everitt
  1969; the ASE of SAS PROC FREQ)::

      T_ij  = a_ij (1 - Pe) - (abar_i. + abar_.j)(1 - Po)
      Tbar  = Po Pe - 2 Pe + Po
      IF_ij = (T_ij - Tbar) / (1 - Pe)^2          # mean zero under p

  so that ``var = sum_ij p_ij IF_ij^2 / N``.
* Null influence (H0: kappa = 0, rows and columns independent)::

      IF0_ij = (a_ij - abar_i. - abar_.j + Pe) / (1 - Pe)

  whose variance under the product table ``e_ij = p_i. p_.j`` is the null
  variance of SAS and statsmodels: ``var0 = sum_ij e_ij IF0_ij^2 / N``.
* Rows with sample weights ``w_r`` and clusters ``c`` (cluster-robust, or
  "sandwich", variance)::

      var = sum_c (sum_{r in c} w_r IF_r)^2 / (sum_r w_r)^2

  with ``IF`` evaluated on the weighted table.  Without clusters each row
  is its own cluster (``sum_r w_r^2 IF_r^2 / W^2``); without weights and
  clusters this is exactly the FCE variance.
* The null variance under weights/clusters is the FCE null variance times
  the design effect of the null influence function measured on the data::

      var0 = [sum e IF0^2 / n] * var_robust(IF0 - kappa) / [sum p (IF0 - kappa)^2 / n]

  which reduces exactly to the FCE null variance for iid unweighted rows.
* A paired difference of two models scored on the same rows uses
  ``IF_a - IF_b`` per row in the same robust formula.

Every function here is plain NumPy and reusable by other modules (a paired
``compare`` uses :func:`cell_influence` per model, then
:func:`types_variance` on ``IF_a - IF_b``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "CellInfluence",
    "agreement_weights",
    "cell_influence",
    "fce_many",
    "robust_variances",
    "types_variance",
]


def agreement_weights(w: np.ndarray) -> np.ndarray:
    """Agreement weights ``a = 1 - w / max(w)`` from disagreement weights ``w``."""
    w = np.asarray(w, dtype=np.float64)
    wmax = w.max() if w.size else 0.0
    if not wmax > 0:
        return np.ones_like(w)
    return 1.0 - w / wmax


@dataclass(frozen=True, eq=False)
class CellInfluence:
    """Influence functions of kappa per cell of a (K, K) table.

    Attributes
    ----------
    kappa, po, pe : float
        Kappa and the weighted observed / expected agreement.
    n : float
        Total of the table (count or sum of weights).
    proportions : ndarray (K, K)
        ``p = O / N``.
    expected : ndarray (K, K)
        ``e = p_i. p_.j``.
    influence : ndarray (K, K)
        ``IF_ij`` (mean zero under ``p``).
    null_influence : ndarray (K, K)
        ``IF0_ij`` (mean zero under ``e``; its mean under ``p`` is kappa).
    """

    kappa: float
    po: float
    pe: float
    n: float
    proportions: np.ndarray
    expected: np.ndarray
    influence: np.ndarray
    null_influence: np.ndarray


def cell_influence(table: np.ndarray, w: np.ndarray) -> CellInfluence:
    """Influence functions of kappa for table ``table`` and disagreement weights ``w``.

    The arrays are nan when kappa is undefined (``Pe = 1``).
    """
    o = np.asarray(table, dtype=np.float64)
    n = float(o.sum())
    p = o / n
    pr = p.sum(axis=1)
    pc = p.sum(axis=0)
    a = agreement_weights(w)
    e = np.outer(pr, pc)
    po = float(np.sum(a * p))
    pe = float(np.sum(a * e))
    abar_row = a @ pc  # abar_i.
    abar_col = pr @ a  # abar_.j
    margin = abar_row[:, None] + abar_col[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = 1.0 - pe
        t = a * denom - margin * (1.0 - po)
        tbar = po * pe - 2.0 * pe + po
        influence = (t - tbar) / denom**2
        null_influence = (a - margin + pe) / denom
        kappa = (po - pe) / denom if denom > 0 else np.nan
    return CellInfluence(kappa=float(kappa), po=po, pe=pe, n=n, proportions=p, expected=e,
                         influence=influence, null_influence=null_influence)


def _fce_from_info(info: CellInfluence, n: float) -> tuple[float, float]:
    """Fleiss–Cohen–Everitt variance and null variance of kappa for iid rows, N = ``n``.

    Equal to statsmodels' ``cohens_kappa`` ``var_kappa`` / ``var_kappa0`` and
    SAS PROC FREQ's ASE^2 / (ASE under H0)^2.
    """
    var = float(np.sum(info.proportions * info.influence**2)) / n
    var0 = float(np.sum(info.expected * info.null_influence**2)) / n
    return var, var0


def fce_many(tables: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`cell_influence` and :func:`_fce_from_info` for G count tables at once.

    ``tables`` is (G, K, K); returns ``(kappa, se, defined)`` per table, where
    ``defined`` is the estimate's own test (expected disagreement
    ``r @ w @ c > 0`` on the counts and the raw weights ``w``; ``1 - pe`` can
    come out 1e-16 where that is exactly 0).  Sums run along axes, not
    through BLAS, so a table's values never depend on the other tables.
    """
    w = np.asarray(w, dtype=np.float64)
    a = agreement_weights(w)
    o = np.ascontiguousarray(tables, dtype=np.float64)
    g = len(o)
    with np.errstate(divide="ignore", invalid="ignore"):
        n = o.reshape(g, -1).sum(axis=1)
        p = o / n[:, None, None]
        pr, pc = p.sum(axis=2), p.sum(axis=1)
        po = (a[None] * p).reshape(g, -1).sum(axis=1)
        abar_row = (a[None] * pc[:, None, :]).sum(axis=2)  # (G, K): sum_l a_kl pc_l
        abar_col = (pr[:, :, None] * a[None]).sum(axis=1)  # (G, K): sum_k pr_k a_kl
        pe = (pr * abar_row).sum(axis=1)
        denom = 1.0 - pe
        margin = abar_row[:, :, None] + abar_col[:, None, :]
        t = a[None] * denom[:, None, None] - margin * (1.0 - po)[:, None, None]
        tbar = po * pe - 2.0 * pe + po
        infl = (t - tbar[:, None, None]) / (denom**2)[:, None, None]
        var = (p * infl * infl).reshape(g, -1).sum(axis=1) / n
        kappa = (po - pe) / denom
    expected = (o.sum(axis=2) * (w[None] * o.sum(axis=1)[:, None, :]).sum(axis=2)).sum(axis=1)
    defined = (expected > 0) & (denom > 0) & np.isfinite(kappa)
    return kappa, np.sqrt(np.maximum(var, 0.0)), defined


def types_variance(values: np.ndarray, type_counts: np.ndarray, type_ptr: np.ndarray,
                   type_cell: np.ndarray, type_val: np.ndarray) -> float:
    """Robust variance of a per-joint-cell influence ``values`` over resampling units.

    Units (rows or clusters) are given as types (see
    ``fastkappa._kernels.resampling``): unit sums ``S_t = sum_e val_e
    values[cell_e]``, ``W = sum_t n_t sum_e val_e`` and the variance is
    ``sum_t n_t S_t^2 / W^2``.
    """
    n_types = len(type_counts)
    owner = np.repeat(np.arange(n_types), np.diff(type_ptr))
    sums = np.bincount(owner, weights=type_val * values[type_cell], minlength=n_types)
    mass = np.bincount(owner, weights=type_val, minlength=n_types)
    total = float(np.dot(type_counts, mass))
    return float(np.dot(type_counts, sums * sums)) / total**2


def robust_variances(info: CellInfluence, cell_t: np.ndarray, cell_p: np.ndarray,
                     type_counts: np.ndarray, type_ptr: np.ndarray, type_cell: np.ndarray,
                     type_val: np.ndarray, n_rows: int) -> tuple[float, float]:
    """Weighted / cluster-robust variance and null variance of kappa (one model).

    ``cell_t`` and ``cell_p`` (1-D) map the joint cells to the table of
    ``info``; ``n_rows`` is the number of scored rows.  See the module
    docstring for the null variance's design-effect form.
    """
    infl = info.influence[cell_t, cell_p]
    var = types_variance(infl, type_counts, type_ptr, type_cell, type_val)
    centred = info.null_influence[cell_t, cell_p] - info.kappa
    model = float(np.sum(info.proportions * (info.null_influence - info.kappa) ** 2))
    null_iid = float(np.sum(info.expected * info.null_influence**2))
    if model > 0 and np.isfinite(model):
        robust0 = types_variance(centred, type_counts, type_ptr, type_cell, type_val)
        var0 = null_iid * robust0 / model
    else:
        var0 = null_iid / n_rows
    return var, var0
