"""The exact threshold search behind :func:`fastkappa.optimize_thresholds`.

Regression-style models output continuous scores; kappa needs classes.
:func:`optimize_thresholds` finds the increasing cut points that maximise
kappa between ``y_true`` and ``apply_thresholds(scores, cuts)``, exactly.

How: with ``y_true`` fixed, ``sum(w * O)`` and ``sum(w * E)`` are both sums
over rows of a term that depends only on the row's predicted class, so kappa
is ``1 - A / B`` with ``A`` and ``B`` sums over the sorted scores.  Dinkelbach
iterations minimise the ratio, each one a dynamic programme over the sorted
distinct scores (ties kept together) in ``O(D K)``.  Scores are sorted once,
per y_true class, and reused.  The search visits every monotone assignment of
the distinct scores to the classes implicitly, so the result is the global
optimum, not a local one, and it does not depend on a starting point.

Conventions (documented on the public functions too):

- class index = number of cut points ``<= score``
  (``np.searchsorted(cuts, score, side="right")``);
- a cut point between two adjacent distinct scores ``a < b`` sits midway,
  ``(a + b) / 2``;
- classes may end up empty when that scores higher.  The ``m`` cut points
  falling into one gap ``(a, b)`` sit at ``a + (b - a) * i / (m + 1)``,
  ``i = 1..m`` (evenly spread, so cut points are always strictly
  increasing).  Cut points of empty classes below the lowest (above the
  highest) score are spread the same way over one mean gap below (above)
  it, so a single one sits half a mean gap away; the mean gap is
  ``(max - min) / (D - 1)`` over the ``D`` distinct scores (1 when all
  scores are equal);
- which of several assignments with the same kappa is returned depends on
  the data only (deterministic; ties in the programme go to the lower
  class).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._core import weights as _weights
from ._core.columns import CodesColumn, FloatColumn, MatrixColumn, as_column
from ._core.dispatch import threshold_kernels
from ._core.encode import encode_pair
from ._core.encoding import rows_text
from ._core.options import check_nan_policy, check_sample_weight
from ._core.rows import expand_frequency, take_rows
from ._core.shapes import flatten_labels
from ._threshold_cuts import _numeric_iv

#: most Dinkelbach steps (each a dynamic programme); a handful suffice in practice
MAX_ITER = 100
#: positions per cut point in ``ThresholdOptimizer.curve_``
CURVE_POINTS = 256


_kernels = threshold_kernels


# --------------------------------------------------------------------------- validation


def _length(col) -> int:
    return len(col.codes) if isinstance(col, CodesColumn) else len(col.values)


@dataclass
class _Problem:
    """Validated ``(y_true, scores)``: class indices, scores, weights of the rows kept."""

    classes: np.ndarray
    w: np.ndarray
    weights_spec: Any
    t: np.ndarray  # int16/int32 class index per row
    scores: np.ndarray  # float64
    sw: np.ndarray | None
    n_input: int  # rows given (after flattening and frequency_weight expansion)
    rows: np.ndarray | None  # input row of each kept row; None when every row is kept

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def n_dropped(self) -> int:
        """Rows dropped by ``ignore_index`` or ``nan_policy='omit'``."""
        return self.n_input - len(self.t)


def _expand_counted(y_true, scores, sample_weight, frequency_weight, groups=None):
    """``(y_true, scores, groups)`` with each row repeated by its ``frequency_weight``
    count (unchanged without one): the result is that of the expanded rows."""
    if frequency_weight is None:
        return y_true, scores, groups
    y_true, scores, frequency_weight, groups = flatten_labels(
        y_true, scores, names=("y_true", "scores"), frequency_weight=frequency_weight,
        groups=groups)
    rows = expand_frequency(frequency_weight, sample_weight,
                            {"y_true": y_true, "scores": scores, "groups": groups})
    return rows["y_true"], rows["scores"], rows["groups"]


def _missing_labels(col) -> np.ndarray | None:
    """Rows of ``y_true`` holding NaN/None (None when the column cannot hold any)."""
    if isinstance(col, FloatColumn):
        return np.isnan(col.values)
    if isinstance(col, CodesColumn):
        return col.codes < 0
    return None


def _kept_rows(t_missing: np.ndarray | None, s: np.ndarray,
               nan_policy: str) -> np.ndarray | None:
    """Apply ``nan_policy`` to rows with a missing label (``t_missing``) or a NaN
    score: an error naming ``nan_policy='omit'``, or the rows to keep (None: all)."""
    missing = np.isnan(s)
    n_scores = int(missing.sum())
    n_labels = 0 if t_missing is None else int(t_missing.sum())
    if not (n_scores or n_labels):
        return None
    if nan_policy == "raise":
        where = [f"`{name}` holds missing values (NaN/None) in {rows_text(count)}"
                 for name, count in (("y_true", n_labels), ("scores", n_scores)) if count]
        raise ValueError(f"{' and '.join(where)}; pass nan_policy='omit' to drop those rows.")
    if n_labels:
        missing |= t_missing
    rows = np.flatnonzero(~missing)
    if len(rows) == 0:
        raise ValueError("every row holds a missing value (NaN/None) in `y_true` or "
                         "`scores`; no row is left to score.")
    return rows


def _check_order_of_arguments(tcol, s: np.ndarray) -> None:
    """A ValueError that says so when ``y_true`` holds continuous values and
    ``scores`` whole numbers: the two were most likely passed the other way round
    (scikit-learn's ``fit(X, y)`` puts the scores first)."""
    if not isinstance(tcol, FloatColumn) or len(tcol.values) != len(s):
        return
    t = tcol.values
    with np.errstate(invalid="ignore"):
        t_whole = np.all((t == np.floor(t)) | np.isnan(t))
        s_whole = np.all((s == np.floor(s)) | np.isnan(s))
    if not t_whole and s_whole:
        raise ValueError(
            "`y_true` holds continuous values and `scores` whole numbers: were they "
            "passed the other way round? The labels come first: "
            "optimize_thresholds(y_true, scores) and ThresholdOptimizer().fit(y_true, "
            "scores).")


def _problem_iv(y_true, scores, *, labels, n_classes, weights, sample_weight,
                ignore_index=None, nan_policy: str = "raise") -> _Problem:
    """Check and encode the rows; ``ignore_index`` and ``nan_policy`` as in
    :func:`fastkappa.cohen_kappa` (``ignore_index`` matches ``y_true`` only: scores
    are numbers, not labels)."""
    check_nan_policy(nan_policy)
    y_true, scores, sample_weight = flatten_labels(
        y_true, scores, names=("y_true", "scores"), sample_weight=sample_weight)
    tcol = as_column(y_true, "y_true")
    if (isinstance(tcol, CodesColumn) and tcol.kind == "str" and not tcol.ordered
            and labels is None and n_classes is None):
        raise ValueError(
            "cut points map increasing scores to classes in scale order, but `y_true` "
            "holds strings with no declared order; pass `labels=[...]` in scale order "
            "(or use an ordered pandas Categorical).")
    s = _numeric_iv(scores, "scores", "continuous scores", keep_nan=True)
    _check_order_of_arguments(tcol, s)
    n = _length(tcol) if not isinstance(tcol, MatrixColumn) else tcol.values.shape[0]
    if n != len(s):
        raise ValueError(
            f"`y_true` and `scores` must have the same length; got {n} and {len(s)}.")
    if n == 0:
        raise ValueError("`y_true` and `scores` are empty; thresholds need at least one row.")
    rows = _kept_rows(_missing_labels(tcol), s, nan_policy)
    if rows is not None:
        sw = check_sample_weight(sample_weight, n)
        tcol, s = take_rows(tcol, rows, "y_true"), s[rows]
        sample_weight = None if sw is None else sw[rows]
    # y_true against itself: the shared encoder fixes the classes, drops the
    # ignore_index rows and checks the labels and weights
    enc = encode_pair(tcol, tcol, labels=labels, n_classes=n_classes,
                      sample_weight=sample_weight, weights=weights,
                      ignore_index=ignore_index, names=("y_true", "y_true"))
    t, _, sw = enc.indices()
    kept = enc.keep()
    if kept is not None:
        s = s[kept]
        rows = np.flatnonzero(kept) if rows is None else rows[kept]
    return _Problem(classes=enc.classes, w=enc.weights, weights_spec=weights, t=t, scores=s,
                    sw=sw, n_input=n, rows=rows)


# --------------------------------------------------------------------------- solving


@dataclass
class _Prepared:
    """Scores partitioned by y_true class, sorted within each class."""

    s_part: np.ndarray
    offsets: np.ndarray
    sw_part: np.ndarray  # empty when unweighted
    perm: np.ndarray  # input row of each position of s_part


def _partition_by_class(t: np.ndarray, s: np.ndarray, k: int
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stable partition of the rows by y_true class.

    Returns ``(s_part, perm, offsets)``: ``s_part = s[perm]`` holds the
    scores of class 0, then class 1, ... (each in input order) and
    ``offsets`` (k + 1,) the segment bounds.  NumPy's stable sort of one- or
    two-byte keys is a radix sort, one pass; a kernel would be about as fast
    warm but cost half a second of compiling in a fresh process.
    """
    small = np.int8 if k <= 127 else np.int16 if k <= 32767 else np.int64
    perm = np.argsort(t.astype(small, copy=False), kind="stable")
    offsets = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(np.bincount(t, minlength=k), out=offsets[1:])
    return s[perm], perm, offsets


def _prepare(prob: _Problem, *, need_perm: bool) -> _Prepared:
    k = prob.n_classes
    s_part, perm, offsets = _partition_by_class(prob.t, prob.scores, k)
    if prob.sw is None and not need_perm:
        for i in range(k):
            s_part[offsets[i]:offsets[i + 1]].sort()
        sw_part = np.empty(0, dtype=np.float64)
    else:
        for i in range(k):
            a, b = offsets[i], offsets[i + 1]
            o = np.argsort(s_part[a:b])
            s_part[a:b] = s_part[a:b][o]
            perm[a:b] = perm[a:b][o]
        sw_part = (np.empty(0, dtype=np.float64) if prob.sw is None
                   else np.ascontiguousarray(prob.sw[perm]))
    return _Prepared(s_part=s_part, offsets=offsets, sw_part=sw_part, perm=perm)


@dataclass
class _Solution:
    thresholds: np.ndarray
    observed: float  # A = sum(w * O)
    expected: float  # B = sum(w * E)
    n_iter: int
    v: np.ndarray


def _merge_blocks(kern, s_part, offsets, sw_part, w, merge: bool):
    """The kernel's K-way merge into cost blocks (``_kernels.thresholds``):
    ``(g, h, lo, hi, r, n_distinct)``, the per-block arrays cut to the blocks."""
    out = kern._merge_scratch(offsets, w.shape[0], len(s_part))
    nb, n_distinct = kern._merge_blocks(s_part, offsets, sw_part, w, merge, *out)
    if nb < 0:
        raise RuntimeError("internal error: the merge kernel's arrays have the wrong shape")
    g, h, lo, hi, r = out[:5]
    return g[:nb], h[:nb], lo[:nb], hi[:nb], r, n_distinct


def _solve(prep: _Prepared, prob: _Problem, keep: np.ndarray | None = None,
           where: str = "") -> _Solution:
    kern = _kernels()
    k = prob.n_classes
    s_part, offsets, sw_part = prep.s_part, prep.offsets, prep.sw_part
    if keep is not None:  # a bool mask in s_part order: the kept rows, still sorted
        offsets = np.concatenate(([0], np.cumsum(keep)))[offsets]
        s_part = s_part[keep]
        sw_part = sw_part[keep] if len(sw_part) else sw_part
    g, h, lo, hi, r, n_distinct = _merge_blocks(kern, s_part, offsets, sw_part, prob.w, True)
    cap = _gap_steps(lo, hi, k)
    if np.any(cap < k - 1):
        # scores a few floats apart limit the class step between them; a run merged
        # into one block may then need a step inside it: one block per score
        g, h, lo, hi, r, n_distinct = _merge_blocks(kern, s_part, offsets, sw_part, prob.w,
                                                    False)
        cap = _gap_steps(lo, hi, k)
    present = np.flatnonzero(r > 0)
    if len(present) < 2:
        what = (f"a single class with positive weight ({prob.classes[present].tolist()[0]!r})"
                if len(present) else "no row with positive weight")
        raise ValueError(
            f"`y_true`{where} holds {what}; kappa is 0 or undefined for every choice of "
            "cut points, so there is nothing to optimise. Thresholds need at least two "
            "classes in `y_true`.")
    v = (r @ prob.w) / r.sum()
    assign = np.empty(len(h), dtype=np.int16)
    a, b, n_iter = _dinkelbach(kern, g, h, v, r, MAX_ITER, assign, cap)
    starts = np.searchsorted(assign, np.arange(1, k), side="left")
    with np.errstate(over="ignore", invalid="ignore"):  # beyond the largest float
        cuts = _place_cuts(starts, lo, hi, n_distinct)
    if not np.all(np.isfinite(cuts)):
        raise ValueError(
            f"`scores`{where} reach the largest float (about ±1.8e308), and the best cut "
            "points leave a class empty beyond them, where no finite cut point fits; "
            "rescale the scores (e.g. divide them by a constant).")
    return _Solution(thresholds=cuts, observed=float(a), expected=float(b),
                     n_iter=int(n_iter), v=v)


def _ratio_terms(g: np.ndarray, h: np.ndarray, v: np.ndarray, assign: np.ndarray
                 ) -> tuple[float, float]:
    """``(A, B)`` of one assignment, each summed one block after the other in
    increasing score order (``cumsum`` adds in that order; ``sum`` would pair)."""
    if len(h) == 0:
        return 0.0, 0.0
    a = np.cumsum(g[np.arange(len(h)), assign])[-1]
    b = np.cumsum(h * v[assign])[-1]
    return float(a), float(b)


def _float_keys(x: np.ndarray) -> np.ndarray:
    """int64 keys in the order of the floats ``x`` (``-0.0`` and ``0.0`` alike), so that
    ``keys(c) - keys(a)`` counts the floats in ``(a, c]``."""
    bits = np.ascontiguousarray(x, dtype=np.float64).view(np.int64)
    return np.where(bits < 0, -(bits & np.int64(0x7FFF_FFFF_FFFF_FFFF)), bits)


def _floats_in(a: float, c: float) -> int:
    """How many floats lie in ``(a, c]`` (Python integers: no overflow)."""
    ka, kc = _float_keys(np.array([a, c])).tolist()
    return kc - ka


def _gap_steps(lo: np.ndarray, hi: np.ndarray, k: int) -> np.ndarray:
    """The largest class step each block can take from the one before (int64, K - 1
    when any): its cut points are distinct floats in ``(hi[b - 1], lo[b]]``, so a
    gap of fewer than K - 1 floats between two distinct scores holds fewer cuts."""
    cap = np.full(len(lo), k - 1, dtype=np.int64)
    if len(lo) > 1:
        with np.errstate(over="ignore"):
            span = _float_keys(lo[1:]) - _float_keys(hi[:-1])  # >= 1; wraps below 0 if huge
        narrow = (span > 0) & (span < k - 1)
        cap[1:][narrow] = span[narrow]
    return cap


def _programme(kern, g: np.ndarray, h: np.ndarray, v: np.ndarray, lam: float,
               cap: np.ndarray, choice: np.ndarray, assign: np.ndarray
               ) -> tuple[float, float, int]:
    """One dynamic programme (the kernel ``_dp``, module docstring of
    ``fastkappa._kernels.thresholds``): ``(A, B, j)`` of the minimiser of
    ``A - lam * B``.  At a block whose gap to the previous one holds fewer than
    K - 1 floats (``cap``, :func:`_gap_steps`; rare) the kernel stops and the
    bounded step is taken here, then the kernel goes on."""
    n_d, k = g.shape
    cost, pa, pb = np.empty(k), np.empty(k), np.empty(k)
    d0 = 0
    for d in np.flatnonzero(cap < k - 1).tolist():
        kern._dp(g, h, v, lam, d0, d, cost, pa, pb, choice, assign)
        _narrow_step(g, h, v, lam, d, int(cap[d]), cost, pa, pb, choice)
        d0 = d + 1
    return kern._dp(g, h, v, lam, d0, n_d, cost, pa, pb, choice, assign)


def _narrow_step(g, h, v, lam: float, d: int, c: int, cost, pa, pb, choice) -> None:
    """The kernel's step into block ``d`` with the previous class one of ``j - c ..
    j`` (not ``0 .. j``): the same sums in the same order, ties to the smallest."""
    k = len(cost)
    prev = np.arange(k)[None, :] - np.arange(c, -1, -1)[:, None]  # rows: j - c .. j
    cand = np.where(prev >= 0, cost[np.maximum(prev, 0)], np.inf)
    row = np.argmin(cand, axis=0)  # the first minimum: the smallest previous class
    arg = prev[row, np.arange(k)]
    best = cand[row, np.arange(k)]
    gd, hb = g[d], h[d] * v
    cost[:], pa[:], pb[:] = best + gd - lam * hb, pa[arg] + gd, pb[arg] + hb
    if choice.shape[0]:
        choice[d] = arg


def _dinkelbach(kern, g: np.ndarray, h: np.ndarray, v: np.ndarray, r: np.ndarray,
                max_iter: int, assign: np.ndarray, cap: np.ndarray
                ) -> tuple[float, float, int]:
    """Minimise ``A / B`` over monotone assignments (module docstring of
    ``fastkappa._kernels.thresholds``); each step is one dynamic programme.

    Starts from the classes in y_true's proportions: block ``b`` takes the
    first class whose cumulative y_true weight ``r`` exceeds the midpoint of
    the block's cumulative weight ``h`` (the last class if none does).
    Writes the optimal assignment into ``assign`` and returns
    ``(A, B, n_iter)``.  ``lam`` decreases strictly at every accepted step;
    the loop stops when the programme finds nothing strictly better (then
    ``lam`` is optimal) or after ``max_iter`` programmes.  An assignment with
    ``B <= 0`` (kappa undefined) is never accepted.  ``cap``: the largest class
    step into each block (:func:`_gap_steps`); the start keeps to it too.
    """
    k = g.shape[1]
    # cumulative sums add one term after the other, as a loop over the blocks would
    before = np.concatenate(([0.0], np.cumsum(h)[:-1]))
    mid = before + 0.5 * h
    start = np.searchsorted(np.cumsum(r)[:k - 1], mid, side="right")
    if np.any(cap[1:] < k - 1):  # y[b] = min(x[b], y[b - 1] + cap[b]), cap[0] = 0
        reach = np.cumsum(np.concatenate(([0], cap[1:])))
        start = np.minimum.accumulate(start - reach) + reach
    assign[:] = start
    a0, b0 = _ratio_terms(g, h, v, assign)
    have = b0 > 0
    lam = a0 / b0 if have else 1.0  # any single class with B > 0 has ratio 1 (kappa 0)
    best_lam_from = None  # lam whose programme produced the best assignment
    no_choice = np.empty((0, k), dtype=np.int16)
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        a, b, _ = _programme(kern, g, h, v, lam, cap, no_choice, assign)
        if b > 0 and a / b < lam:
            best_lam_from = lam
            lam = a / b
            have = True
        else:
            break
    if best_lam_from is not None:  # the minimiser, traced back into `assign`
        _programme(kern, g, h, v, best_lam_from, cap, np.empty((len(h), k), dtype=np.int16),
                   assign)
    elif not have:
        # nothing with B > 0 found: every block in the class with the largest v
        # (ratio 1, kappa 0, whenever that v is positive)
        assign[:] = int(np.argmax(v))
    # else the start was best: `assign` holds it
    a, b = _ratio_terms(g, h, v, assign)
    return a, b, n_iter


def _place_cuts(starts: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                n_distinct: int) -> np.ndarray:
    """Cut points from the first block of each class ``>= j`` (see module doc)."""
    nb = len(lo)
    n_cuts = len(starts)
    u0, u1 = float(lo[0]), float(hi[-1])
    scale = max(abs(u0), abs(u1))
    step = (u1 - u0) / (n_distinct - 1) if n_distinct > 1 else 1.0
    step = max(step, scale * 2.0**-40)  # never absorbed by the scores' magnitude
    if not np.isfinite(step):
        step = scale
    cuts = np.empty(n_cuts, dtype=np.float64)
    j = 0
    while j < n_cuts:
        b = int(starts[j])
        m = 1
        while j + m < n_cuts and starts[j + m] == b:
            m += 1
        if b == 0:
            a, c = u0 - step, u0  # cuts <= the lowest score: empty classes below
        elif b == nb:
            a, c = u1, u1 + step  # cuts > the highest score: empty classes above
        else:
            a, c = float(hi[b - 1]), float(lo[b])
        if _floats_in(a, c) < 4 * m:
            # a gap of a few floats (between two scores, :func:`_gap_steps` left
            # room for the m cuts; below the lowest score, subnormal scores):
            # consecutive floats, where interpolating could round two cuts onto one
            x = a if b > 0 else c
            for i in range(m):
                if b > 0:
                    x = np.nextafter(x, np.inf)
                cuts[j + (i if b > 0 else m - 1 - i)] = x
                if b == 0:
                    x = np.nextafter(x, -np.inf)
            j += m
            continue
        for i in range(m):
            f = (i + 1) / (m + 1)
            x = a * (1.0 - f) + c * f
            if b > 0 and x <= a:
                x = np.nextafter(a, np.inf)
            if b < nb and x > c:
                x = c
            cuts[j + i] = x
        j += m
    for i in range(1, n_cuts):
        if cuts[i] <= cuts[i - 1]:
            cuts[i] = np.nextafter(cuts[i - 1], np.inf)
    return cuts


def _kappa_of(t: np.ndarray, p: np.ndarray, w: np.ndarray, sw: np.ndarray | None) -> float:
    k = w.shape[0]
    flat = np.bincount(t.astype(np.int64) * k + p, weights=sw, minlength=k * k)
    terms = _weights.kappa_terms(flat.reshape(k, k), w)
    return _weights.finish_kappa(*terms)


def _curve(prep: _Prepared, prob: _Problem, sol: _Solution) -> dict:
    """Kappa as each cut point moves between its neighbours (see curve_)."""
    k = prob.n_classes
    cuts = sol.thresholds
    segs = [prep.s_part[prep.offsets[i]:prep.offsets[i + 1]] for i in range(k)]
    if len(prep.sw_part):
        cws = [np.concatenate(([0.0], np.cumsum(prep.sw_part[prep.offsets[i]:
                                                             prep.offsets[i + 1]])))
               for i in range(k)]
    else:
        cws = None
    smin = min(seg[0] for seg in segs if len(seg))
    smax = max(seg[-1] for seg in segs if len(seg))

    def below(x: np.ndarray) -> np.ndarray:
        """(K, m) weight of each y_true class with score < x."""
        out = np.empty((k, len(x)), dtype=np.float64)
        for i, seg in enumerate(segs):
            p = np.searchsorted(seg, x, side="left")
            out[i] = p if cws is None else cws[i][p]
        return out

    cut_col, x_col, kappa_col = [], [], []
    for c in range(k - 1):
        lower = cuts[c - 1] if c > 0 else smin
        upper = cuts[c + 1] if c < k - 2 else smax
        lower, upper = min(lower, cuts[c]), max(upper, cuts[c])
        x = np.unique(np.concatenate((np.linspace(lower, upper, CURVE_POINTS), [cuts[c]])))
        delta = below(x) - below(np.array([cuts[c]]))
        a = sol.observed + (prob.w[:, c] - prob.w[:, c + 1]) @ delta
        b = sol.expected + (sol.v[c] - sol.v[c + 1]) * delta.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            kap = np.where(b > 0, 1.0 - a / np.where(b > 0, b, 1.0), np.nan)
        cut_col.append(np.full(len(x), c, dtype=np.intp))
        x_col.append(x)
        kappa_col.append(kap)
    if k < 2:
        return {"cut": np.empty(0, np.intp), "threshold": np.empty(0), "kappa": np.empty(0)}
    return {"cut": np.concatenate(cut_col), "threshold": np.concatenate(x_col),
            "kappa": np.concatenate(kappa_col)}
