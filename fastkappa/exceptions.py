"""Warnings raised by fastkappa."""


class UndefinedKappaWarning(RuntimeWarning):
    """Kappa is undefined for the data (expected disagreement is zero).

    The function returns its ``replace_undefined_by`` value instead (nan by
    default).  Silence it with ``warnings.simplefilter("ignore",
    fastkappa.UndefinedKappaWarning)``.
    """


class DegenerateIntervalWarning(RuntimeWarning):
    """A confidence interval had to fall back (constant bootstrap distribution,
    BCa guard, too few finite replicates)."""
