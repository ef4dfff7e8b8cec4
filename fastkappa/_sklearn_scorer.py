"""The scorer :func:`fastkappa.integrations.make_qwk_scorer` builds for a list of
response methods.  Imports scikit-learn (this module is imported only by
``make_qwk_scorer``); module level, so a fitted search that holds one pickles."""

from __future__ import annotations

from sklearn.metrics._scorer import _Scorer

from .integrations import qwk_score


class FirstMethodScorer(_Scorer):
    """A scikit-learn scorer given a list of response methods.

    scikit-learn calls the first method of the list that the estimator has,
    but passes the score function only the predictions; a binary
    classifier's probability and margin are both one column, cut at 0.5 and
    at 0.  This scorer finds the method as scikit-learn does and scores
    with the scorer built for that method alone.

    Parameters
    ----------
    by_method : dict
        One scikit-learn scorer per method name, in order of preference.
    kwargs : dict
        Their options (shown by ``repr``).
    """

    def __init__(self, by_method: dict, kwargs: dict) -> None:
        super().__init__(qwk_score, 1, kwargs, list(by_method))
        self._by_method = by_method

    def _score(self, method_caller, estimator, X, y_true, **kwargs):
        for name, scorer in self._by_method.items():
            if getattr(estimator, name, None) is not None:  # scikit-learn's rule
                return scorer._score(method_caller, estimator, X, y_true, **kwargs)
        return super()._score(method_caller, estimator, X, y_true, **kwargs)  # its error
