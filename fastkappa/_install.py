"""How to install an optional extra, in words that work wherever the user stands."""

from __future__ import annotations


def install_hint(extra: str) -> str:
    """The pip command that adds the extra ``extra``, from an index and from a clone.

    The extra is quoted (``fastkappa[io]`` unquoted is a glob in zsh), and
    ``pip install "fastkappa[io]"`` would fetch fastkappa from PyPI instead of
    the checkout a developer is working in, so the clone's command comes too.

    Examples
    --------
    >>> install_hint("io")
    'pip install "fastkappa[io]" (from a clone of the repository: pip install -e ".[io]")'
    """
    return (f'pip install "fastkappa[{extra}]" '
            f'(from a clone of the repository: pip install -e ".[{extra}]")')
