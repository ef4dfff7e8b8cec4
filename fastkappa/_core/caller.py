"""Where a warning points: the user's line, however deep inside fastkappa it is raised.

A fixed ``stacklevel`` is right for one call path only: the many-rater
warnings are raised under :func:`fastkappa.agreement`, under
:meth:`fastkappa.AgreementAccumulator.compute` and under
:func:`fastkappa.agreement_files.agreement_file`, each a different number of
frames below the user's code.  :func:`user_stacklevel` counts the frames
instead (as ``warnings.warn(..., skip_file_prefixes=...)`` does from Python
3.12 on).  The command line is a caller like any other: a warning raised
under it points at its own frame, which is how it knows the warning for one of
fastkappa's (and prints it as ``fastkappa <command>: warning: ...``).  The
frames of ``torch.nn.Module.__call__`` are passed over too, so a warning of
:class:`fastkappa.torch.KappaLoss` points at ``criterion(input, target)``.
"""

from __future__ import annotations

import os
import sys

#: the package folder: frames whose file lies under it are fastkappa's own
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
#: the command line's folder: a caller of the library, not part of it here
_CLI = _PACKAGE + "cli" + os.sep
#: a module that only forwards the call (``torch.nn.Module.__call__``)
_FORWARDER = os.sep + os.path.join("torch", "nn", "modules", "module.py")


def _inside(name: str) -> bool:
    """Whether a frame of file ``name`` is fastkappa's own (or forwards to it)."""
    if name.startswith(_PACKAGE):
        return not name.startswith(_CLI)
    return name.endswith(_FORWARDER)


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning raised by the calling function
    point at the first frame outside the fastkappa package (the user's line),
    or at the command line's frame when the call comes from it.

    Call it in the function that calls :func:`warnings.warn`, as its
    ``stacklevel`` argument.
    """
    frame = sys._getframe(1)
    level = 1
    while frame is not None and _inside(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level
