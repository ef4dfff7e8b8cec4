"""fastkappa: fast, trustworthy Cohen's kappa and quadratic-weighted kappa.

Importing fastkappa compiles nothing and does not import numba: kernels are
loaded and compiled (or read from numba's cache) at their first call.
"""

from .exceptions import DegenerateIntervalWarning, UndefinedKappaWarning
from .metrics import (
    cohen_kappa,
    cohen_kappa_score,
    confusion_matrix,
    kappa_from_confusion,
    quadratic_weighted_kappa,
    weight_matrix,
)

__version__ = "0.1.0"

__all__ = [
    "DegenerateIntervalWarning",
    "UndefinedKappaWarning",
    "__version__",
    "cohen_kappa",
    "cohen_kappa_score",
    "confusion_matrix",
    "kappa_from_confusion",
    "quadratic_weighted_kappa",
    "weight_matrix",
]
