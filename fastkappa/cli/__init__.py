"""The ``fastkappa`` command line: score files bigger than memory.

Subcommands::

    fastkappa demo [--figures DIR]       score the shipped retinopathy set, save figures
    fastkappa warmup                     compile and cache every kernel ahead of use
    fastkappa score FILE --true C --pred C [--weights W] [--method M] [--by C] ...
    fastkappa compare FILE --true C --pred C1 C2 ... [--reference C1]
    fastkappa thresholds FILE --true C --score C [--cv K [--groups C]]
    fastkappa thresholds FILE --score C --apply CUTS [--id C]
    fastkappa agreement FILE --item C --rater C --label C | --wide C C ... [--method M]

``score``, ``compare`` and ``thresholds`` take ``--plot PATH`` (``.png``,
``.svg`` or ``.pdf``) to save a figure as well; ``demo`` saves its figures in
a folder (``fastkappa-demo-figures`` unless ``--figures DIR`` names another)
and names it in its output. Figures need matplotlib (``pip install
"fastkappa[plot]"``, or ``pip install -e ".[plot]"`` from a clone); they are
drawn on a bare ``matplotlib.figure.Figure``, so no pyplot state or window is
involved.

FILE is CSV (plain or gzip, told apart by its first bytes, so ``-`` reads
standard input either way) or Parquet. ``score`` streams the file in record
batches with :func:`fastkappa.files.score_file`, so its memory does not grow
with the file; ``--by`` and ``--clusters`` add one sparse table per group or
cluster, never the rows. ``agreement`` streams the file into a
:class:`fastkappa.AgreementAccumulator`. ``compare`` and ``thresholds``
resample rows and hold the columns they need (a few bytes per row).

Options have the Python API's names and defaults (``--weights`` none,
``--method``, ``--n-resamples`` 10,000); the same ``--seed`` gives the same
numbers as the API, and a seed is drawn and reported when none is given.

Exit codes: 0 on success; 1 when the data cannot be scored (unreadable,
truncated or corrupt file, missing column, bad value) or the results cannot
be written (closed pipe, full disk); 2 when the command line is wrong; 130
when interrupted.  Every failure is one line on standard error.

Layout: :mod:`~fastkappa.cli.main` parses and dispatches (exit codes,
signals, pipes), :mod:`~fastkappa.cli.parser` builds the parser,
:mod:`~fastkappa.cli.output` writes text/JSON/CSV,
:mod:`~fastkappa.cli.figures` draws, and ``commands/<name>.py`` holds each
command as plain functions.
"""

from .figures import DEMO_FIGURE_FILES
from .main import main
from .parser import DEMO_FIGURES, make_parser

__all__ = ["DEMO_FIGURES", "DEMO_FIGURE_FILES", "main", "make_parser"]
