"""fastkappa: fast, trustworthy Cohen's kappa and quadratic-weighted kappa.

Importing fastkappa compiles nothing and does not import numba: kernels are
loaded and compiled (or read from numba's cache) at their first call.
"""

from . import files as files  # readers and the file scorer (fastkappa.files.score_file)
from .agreement import (
    Agreement,
    agreement,
    brennan_prediger,
    conger_kappa,
    fleiss_kappa,
    gwet_ac,
    krippendorff_alpha,
    light_kappa,
    percent_agreement,
)
from .agreement_categories import agreement_by_category
from .agreement_stream import AgreementAccumulator
from .bootstrap import kappa_ci, kappa_ci_from_confusion
from .compare import Comparison, PairDifference, compare
from .exceptions import DegenerateIntervalWarning, UndefinedKappaWarning
from .groups import KappaByGroup, kappa_by_group
from .metrics import (
    cohen_kappa,
    cohen_kappa_score,
    confusion_matrix,
    kappa_from_confusion,
    quadratic_weighted_kappa,
    weight_matrix,
)
from .results import KappaCI
from .streaming import CohenKappa
from .thresholds import (
    ThresholdOptimizer,
    Thresholds,
    apply_thresholds,
    continuous_qwk,
    optimize_thresholds,
)

__version__ = "0.2.0"

__all__ = [
    "Agreement",
    "AgreementAccumulator",
    "CohenKappa",
    "Comparison",
    "DegenerateIntervalWarning",
    "KappaByGroup",
    "KappaCI",
    "PairDifference",
    "ThresholdOptimizer",
    "Thresholds",
    "UndefinedKappaWarning",
    "__version__",
    "agreement",
    "agreement_by_category",
    "apply_thresholds",
    "brennan_prediger",
    "cohen_kappa",
    "cohen_kappa_score",
    "compare",
    "confusion_matrix",
    "conger_kappa",
    "continuous_qwk",
    "fleiss_kappa",
    "gwet_ac",
    "kappa_by_group",
    "kappa_ci",
    "kappa_ci_from_confusion",
    "kappa_from_confusion",
    "krippendorff_alpha",
    "light_kappa",
    "optimize_thresholds",
    "percent_agreement",
    "quadratic_weighted_kappa",
    "weight_matrix",
]
