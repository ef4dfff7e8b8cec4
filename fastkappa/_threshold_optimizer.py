"""The scikit-learn style estimator :class:`fastkappa.ThresholdOptimizer`:
the exact search of :mod:`fastkappa._threshold_search` plus out-of-fold kappa."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._core import weights as _weights
from ._core.options import check_nan_policy, check_replace_undefined_by
from ._core.rows import n_rows, omit_missing_ids
from ._threshold_cuts import Thresholds, _numeric_iv, apply_thresholds
from ._threshold_folds import (
    _check_cv,
    _grouped_folds,
    _groups_iv,
    _splitter_folds,
    _stratified_folds,
)
from ._threshold_search import _curve, _expand_counted, _kappa_of, _prepare, _problem_iv, _solve


def _is_quadratic(weights) -> bool:
    return isinstance(weights, str) and weights == "quadratic"


class ThresholdOptimizer:
    """Tune cut points for kappa, scikit-learn style (Kaggle's OptimizedRounder).

    ``fit`` finds the exact optimum with :func:`optimize_thresholds`;
    ``transform`` turns scores into class labels.

    Parameters
    ----------
    n_classes : int, optional
        Classes are ``0..n_classes-1``.
    labels : array_like, optional
        The classes in scale order.  With neither, the sorted distinct
        values of ``y_true`` passed to ``fit``.
    weights : None, 'linear', 'quadratic' or array_like of shape (K, K)
        Disagreement weights; the default tunes QWK.
    cv : None, int or splitter, optional
        Tuning cut points on the rows you score is optimistic (they are
        fitted to those rows' noise).  With ``cv=k`` the rows are split into
        ``k`` folds stratified by ``y_true``; for each fold the cut points
        are tuned on the other ``k - 1`` folds and applied to the held-out
        one, and ``cv_qwk_`` is the kappa of the pooled out-of-fold
        predictions: an honest estimate of the kappa to expect on new data.
        A scikit-learn splitter whose test folds partition the rows (e.g.
        ``KFold``) may be passed instead.  ``thresholds_`` are always tuned
        on all rows.
    seed : int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Shuffles the rows of each class before they are split into folds.
        Without a seed the folds take each class's rows in input order
        (contiguous blocks), so the split is deterministic either way.
    ignore_index : scalar, optional
        Rows whose true class equals this value are dropped, in ``fit`` and
        in ``score``, as in :func:`fastkappa.cohen_kappa` (scores are
        numbers, not labels: a score equal to it is kept).
    nan_policy : {'raise', 'omit'}, default 'raise'
        Rows with a missing value (NaN/None) in the true classes or in the
        scores: ``'raise'`` gives a ``ValueError`` that counts them,
        ``'omit'`` drops them, in ``fit`` (``n_dropped_`` says how many
        rows were dropped) and in ``score``.  ``transform`` returns one
        label per score, so a missing score is an error there either way.
        A row with a missing ``groups`` value (``fit``) counts as a row with
        a missing value.
    replace_undefined_by : float, default nan
        What ``score`` returns, with an :class:`UndefinedKappaWarning`, when
        kappa is undefined (e.g. ``y`` constant and every score in its
        class).

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        Class labels in index order.
    thresholds_ : Thresholds of shape (K - 1,)
        Optimal cut points on all rows; they know ``classes_``, so
        ``apply_thresholds(scores, opt.thresholds_)`` equals
        ``opt.transform(scores)``.
    qwk_ : float
        Kappa (with the chosen ``weights``; QWK by default) of the fitted
        cut points on the rows they were fitted to (in-sample, optimistic).
    cv_qwk_ : float or None
        Kappa of the pooled out-of-fold predictions (None without ``cv``).
    cv_thresholds_ : ndarray of shape (n_folds, K - 1) or None
        Cut points tuned in each fold.
    oof_predictions_ : ndarray of shape (n,) or None
        Out-of-fold class labels of the rows used, in input order (None
        without ``cv``).
    cv_folds_ : ndarray of shape (n,) or None
        Test fold of each row used (None without ``cv``).
    cv_groups_ : bool
        Whether the folds kept the ``groups`` passed to ``fit`` whole.
    curve_ : dict of ndarrays
        Data for a kappa-versus-threshold plot, in long format (``pandas.
        DataFrame(curve_)`` works): ``"cut"`` (int, the cut point ``c``
        between class ``c`` and ``c + 1``), ``"threshold"`` (a position of
        that cut point) and ``"kappa"`` (kappa with that cut point at that
        position and every other one at its optimum).  Each cut point is
        evaluated at 256 evenly spaced positions between its neighbours (the
        lowest/highest score for the outer ones), plus its optimum, in
        increasing order.
    n_iter_ : int
        Dinkelbach steps (dynamic programmes) of the final fit.
    n_rows_ : int
        Rows the cut points were tuned on.
    n_dropped_ : int
        Rows ``fit`` dropped: ``y_true`` equal to ``ignore_index``, or a
        missing value with ``nan_policy='omit'`` (0 otherwise).

    References
    ----------
    .. [1] Dinkelbach, W. (1967). On nonlinear fractional programming. Management
       Science, 13(7), 492-498. https://doi.org/10.1287/mnsc.13.7.492

    Examples
    --------
    >>> import numpy as np
    >>> import fastkappa as fk
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 5, 2000)
    >>> s = y + rng.normal(0, 0.7, 2000)
    >>> opt = fk.ThresholdOptimizer(cv=5, seed=0).fit(y, s)
    >>> opt.thresholds_.shape
    (4,)
    >>> bool(opt.qwk_ >= opt.cv_qwk_)
    True
    >>> opt.transform([0.1, 2.2, 9.0])
    array([0, 2, 4])
    """

    def __init__(self, *, n_classes: int | None = None, labels: ArrayLike | None = None,
                 weights: str | ArrayLike | None = "quadratic", cv: Any = None,
                 seed: Any = None, ignore_index: Any = None, nan_policy: str = "raise",
                 replace_undefined_by: float = np.nan) -> None:
        self.n_classes = n_classes
        self.labels = labels
        self.weights = weights
        self.cv = cv
        self.seed = seed
        self.ignore_index = ignore_index
        self.nan_policy = nan_policy
        self.replace_undefined_by = replace_undefined_by

    # scikit-learn's estimator protocol (clone, GridSearchCV), without importing it
    def get_params(self, deep: bool = True) -> dict:
        return {"n_classes": self.n_classes, "labels": self.labels, "weights": self.weights,
                "cv": self.cv, "seed": self.seed, "ignore_index": self.ignore_index,
                "nan_policy": self.nan_policy,
                "replace_undefined_by": self.replace_undefined_by}

    def set_params(self, **params) -> ThresholdOptimizer:
        valid = self.get_params()
        for key, value in params.items():
            if key not in valid:
                raise ValueError(
                    f"invalid parameter {key!r} for ThresholdOptimizer; valid parameters "
                    f"are {sorted(valid)}.")
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        defaults = {"n_classes": None, "labels": None, "weights": "quadratic", "cv": None,
                    "seed": None, "ignore_index": None, "nan_policy": "raise",
                    "replace_undefined_by": np.nan}

        def default(k, v) -> bool:  # a NaN equals nothing, a pickled one is a new object
            d = defaults[k]
            return (v is d or (isinstance(v, str) and v == d)
                    or (isinstance(v, float) and isinstance(d, float) and v != v and d != d))

        shown = [f"{k}={v!r}" for k, v in self.get_params().items() if not default(k, v)]
        head = f"ThresholdOptimizer({', '.join(shown)})"
        if not hasattr(self, "thresholds_"):
            return head
        # fitted: the cut points and the scores, as a reader of a notebook wants them
        what = "QWK" if _is_quadratic(self.weights) else "kappa"
        cuts = ", ".join(f"{v:.4g}" for v in np.asarray(self.thresholds_))
        lines = [head,
                 f"  thresholds_ = [{cuts}] between classes {self.classes_.tolist()!r}",
                 f"  qwk_ = {self.qwk_:.4f} (in-sample {what})"]
        if self.cv_qwk_ is not None:
            folds = len(self.cv_thresholds_)
            lines.append(f"  cv_qwk_ = {self.cv_qwk_:.4f} (out-of-fold {what}, {folds} folds"
                         + (", groups kept whole" if self.cv_groups_ else "") + ")")
        return "\n".join(lines)

    def fit(self, y_true: ArrayLike, scores: ArrayLike, *,
            sample_weight: ArrayLike | None = None,
            groups: ArrayLike | None = None,
            frequency_weight: ArrayLike | None = None) -> ThresholdOptimizer:
        """Tune the cut points on ``(y_true, scores)``; returns ``self``.

        Parameters
        ----------
        y_true : array_like of shape (n,)
            True classes.
        scores : array_like of shape (n,)
            Finite continuous predictions.
        sample_weight : array_like of shape (n,), optional
            Non-negative weight of each row (counts of identical rows belong
            in ``frequency_weight``).
        groups : array_like of shape (n,), optional
            Group of each row (patient, essay prompt, user...) for the
            cross-validation: every group lies in one fold, so rows of one
            patient never tune the cut points applied to another of its rows
            (grouped cross-validation; needs ``cv``).  With ``cv=k`` whole
            groups are spread over the folds keeping the classes balanced
            (largest groups first); a splitter gets ``groups`` in its
            ``split(X, y, groups)`` and must keep every group in one test fold.
        frequency_weight : array_like of shape (n,), optional
            Whole-number count of each row: a row with count c is c identical
            rows (of its group). The rows are expanded, so the fit, folds
            included, is that of the expanded rows. Not with ``sample_weight``.

        Examples
        --------
        >>> import numpy as np
        >>> import fastkappa as fk
        >>> rng = np.random.default_rng(0)
        >>> patient = np.repeat(np.arange(500), 2)            # two eyes per patient
        >>> y = np.repeat(rng.integers(0, 5, 500), 2)
        >>> s = y + rng.normal(0, 0.7, 1000)
        >>> opt = fk.ThresholdOptimizer(cv=5, seed=0).fit(y, s, groups=patient)
        >>> bool(np.all(opt.cv_folds_[0::2] == opt.cv_folds_[1::2]))  # eyes stay together
        True
        """
        check_replace_undefined_by(self.replace_undefined_by)
        cv = _check_cv(self.cv)
        y_true, scores, groups = _expand_counted(y_true, scores, sample_weight,
                                                 frequency_weight, groups)
        n_no_group = 0
        if groups is not None:
            if cv is None:
                raise ValueError(
                    "`groups` keeps each group in one cross-validation fold, so it needs "
                    "`cv`: use ThresholdOptimizer(cv=5) (or another number of folds).")
            # rows without a group follow nan_policy, as clusters do in kappa_ci
            n_given = n_rows(y_true, "y_true")
            groups, rows = omit_missing_ids(
                groups, "groups", check_nan_policy(self.nan_policy),
                {"y_true": y_true, "scores": scores, "sample_weight": sample_weight})
            y_true, scores, sample_weight = rows["y_true"], rows["scores"], rows["sample_weight"]
            n_no_group = n_given - n_rows(y_true, "y_true")
        prob = _problem_iv(y_true, scores, labels=self.labels, n_classes=self.n_classes,
                           weights=self.weights, sample_weight=sample_weight,
                           ignore_index=self.ignore_index, nan_policy=self.nan_policy)
        k = prob.n_classes
        n = len(prob.t)
        grp = None
        if groups is not None:
            grp = _groups_iv(groups, prob.n_input)
            if prob.rows is not None:  # the groups of the rows kept, renumbered
                grp = _groups_iv(grp[prob.rows], n)
        prep = _prepare(prob, need_perm=cv is not None)
        sol = _solve(prep, prob)
        self.classes_ = prob.classes
        self.thresholds_ = Thresholds(sol.thresholds, prob.classes)
        self.qwk_ = _weights.finish_kappa(sol.observed, sol.expected)
        self.n_iter_ = sol.n_iter
        self.n_rows_ = n
        self.n_dropped_ = prob.n_dropped + n_no_group
        self.curve_ = _curve(prep, prob, sol)
        self.cv_qwk_ = None
        self.cv_thresholds_ = None
        self.oof_predictions_ = None
        self.cv_folds_ = None
        self.cv_groups_ = grp is not None
        if cv is not None:
            if not isinstance(cv, int):
                fold, n_folds = _splitter_folds(cv, prob.t, grp)
            elif grp is not None:
                n_groups = int(grp.max()) + 1
                if cv > n_groups:
                    raise ValueError(f"`cv`={cv} folds need at least {cv} groups; `groups` "
                                     f"holds {n_groups}.")
                fold, n_folds = _grouped_folds(prob.t, grp, k, cv, self.seed), cv
            else:
                if cv > n:
                    raise ValueError(f"`cv`={cv} folds need at least {cv} rows; got {n}.")
                fold, n_folds = _stratified_folds(prob.t, k, cv, self.seed), cv
            fold_part = fold[prep.perm]
            oof = np.empty(n, dtype=np.intp)
            cuts = np.empty((n_folds, k - 1), dtype=np.float64)
            for f in range(n_folds):
                fs = _solve(prep, prob, fold_part != f, where=f" (the training rows of fold {f})")
                cuts[f] = fs.thresholds
                test = fold == f
                oof[test] = np.searchsorted(fs.thresholds, prob.scores[test], side="right")
            self.cv_thresholds_ = cuts
            self.cv_qwk_ = _kappa_of(prob.t, oof, prob.w, prob.sw)
            self.oof_predictions_ = prob.classes[oof]
            self.cv_folds_ = fold
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "thresholds_"):
            raise ValueError("this ThresholdOptimizer is not fitted yet; call "
                             "fit(y_true, scores) first.")

    def transform(self, scores: ArrayLike) -> np.ndarray:
        """Class labels (``classes_``) of ``scores`` under the fitted cut points."""
        self._check_fitted()
        # classes_ named explicitly: thresholds_ may have been replaced by a plain array
        return apply_thresholds(scores, self.thresholds_, labels=self.classes_)

    predict = transform

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
              ) -> float:
        """Kappa of ``predict(X)`` against ``y`` (scikit-learn's ``score(X, y)``).

        As scikit-learn expects of ``score``, the inputs come first and the
        truth second: ``X`` holds the continuous scores (shape (n,) or
        (n, 1)), ``y`` the true classes.  (``fit`` keeps fastkappa's
        ``fit(y_true, scores)`` order.)  Higher is better; the weights are
        the optimizer's (QWK by default), on the classes ``classes_``.
        Rows are handled by the optimizer's ``ignore_index`` and
        ``nan_policy``; an undefined kappa gives its ``replace_undefined_by``.

        Parameters
        ----------
        X : array_like of shape (n,) or (n, 1)
            Continuous scores (NaN/None: see ``nan_policy``).
        y : array_like of shape (n,)
            True classes, among ``classes_``.
        sample_weight : array_like of shape (n,), optional
            Non-negative weight of each row.

        Returns
        -------
        float

        Examples
        --------
        >>> import fastkappa as fk
        >>> opt = fk.ThresholdOptimizer().fit([1, 1, 2, 2, 3, 3], [0.1, 0.2, 1.1, 1.3, 2.2, 2.4])
        >>> opt.score([0.0, 1.2, 2.9, 0.5], [1, 2, 3, 2])
        0.8
        """
        self._check_fitted()
        from .metrics import cohen_kappa

        s = _numeric_iv(X, "X", "continuous scores", keep_nan=True)
        try:
            # the shared input layer cuts the scores and applies ignore_index/nan_policy
            return cohen_kappa(y, s, thresholds=np.asarray(self.thresholds_),
                               weights=self.weights, labels=self.classes_,
                               sample_weight=sample_weight, ignore_index=self.ignore_index,
                               nan_policy=self.nan_policy,
                               replace_undefined_by=self.replace_undefined_by)
        except ValueError as e:
            msg = (str(e).replace("`y_pred`", "`X`").replace("`y_true`", "`y`")
                   .replace("pass nan_policy='omit'", "use ThresholdOptimizer(nan_policy='omit')"))
            if "outside the declared classes" in msg:
                raise ValueError(
                    f"`y` holds classes this optimizer was not fitted on ({msg}). Fit it "
                    "with every class declared: ThresholdOptimizer(labels=[...]) or "
                    "ThresholdOptimizer(n_classes=K).") from None
            raise ValueError(msg) from None

    def fit_transform(self, y_true: ArrayLike, scores: ArrayLike, *,
                      sample_weight: ArrayLike | None = None) -> np.ndarray:
        """``fit(y_true, scores)`` then ``transform(scores)`` (in-sample labels)."""
        return self.fit(y_true, scores, sample_weight=sample_weight).transform(scores)
