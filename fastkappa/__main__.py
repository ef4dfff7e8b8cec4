"""``python -m fastkappa``: the command line (see :mod:`fastkappa.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
