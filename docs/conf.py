"""Sphinx configuration for the fastkappa documentation.

Build (from the repository root)::

    python -m pip install -e ".[docs]"
    sphinx-build -W --keep-going -b html docs docs/_build/html

The build needs no network: intersphinx is off and every page is local.
``tests/test_docs_build.py`` runs the same build with warnings as errors.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

# build from a clone without installing: the package sits one level up
ROOT = Path(__file__).resolve().parent.parent
if (ROOT / "fastkappa" / "__init__.py").is_file():
    sys.path.insert(0, str(ROOT))

import fastkappa  # noqa: E402

project = "fastkappa"
author = "the fastkappa developers"
copyright = "the fastkappa developers"
version = release = fastkappa.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]

# -- API reference ------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"          # the numpydoc Parameters section says it better
autodoc_member_order = "bysource"
numpydoc_show_class_members = False  # the class template lists members itself
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# docstring format errors that would render wrongly fail the build (-W):
# unknown or misplaced sections, a parameter without a description (often a
# paragraph numpydoc read as parameters), a Returns line that is not a type
numpydoc_validation_checks = {"GL06", "GL07", "GL09", "GL10", "PR03", "PR05", "PR06", "PR07",
                              "PR10", "RT02", "YD01"}

# fastkappa.torch and fastkappa.dask import torch and dask when they load;
# where those extras are not installed the pages are built from mocks
# (tests/test_docs_build.py builds that way too, with both hidden)
autodoc_mock_imports = []
for _optional in ("torch", "dask"):
    try:
        importlib.import_module(_optional)
    except ImportError:
        autodoc_mock_imports.append(_optional)

# -- Markdown guides ----------------------------------------------------------
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

# -- HTML -----------------------------------------------------------------------
html_theme = "alabaster"
html_title = f"fastkappa {release}"
html_static_path: list[str] = []
html_theme_options = {
    "description": "Fast, trustworthy Cohen's kappa and QWK",
    "fixed_sidebar": True,
}


# -- Command line reference ------------------------------------------------------
def setup(app):
    """Register ``.. fastkappa-cli-help::``: the help of ``fastkappa`` and each command."""
    import argparse
    import os

    from docutils import nodes
    from docutils.statemachine import StringList
    from sphinx.util.docutils import SphinxDirective
    from sphinx.util.nodes import nested_parse_with_titles

    def block(title: str, text: str) -> list[str]:
        return [title, "-" * len(title), "", ".. code-block:: text", "",
                *("   " + line if line else "" for line in text.splitlines()), ""]

    class CommandLineHelp(SphinxDirective):
        def run(self):
            from fastkappa.cli import make_parser

            saved = os.environ.get("COLUMNS")
            os.environ["COLUMNS"] = "88"    # argparse wraps help at the terminal width
            try:
                parser = make_parser()
                commands = next(a for a in parser._actions
                                if isinstance(a, argparse._SubParsersAction)).choices
                lines = block("``fastkappa``", parser.format_help())
                for name, command in commands.items():
                    lines += block(f"``fastkappa {name}``", command.format_help())
            finally:
                if saved is None:
                    del os.environ["COLUMNS"]
                else:
                    os.environ["COLUMNS"] = saved
            node = nodes.section()
            node.document = self.state.document
            nested_parse_with_titles(self.state, StringList(lines, "fastkappa --help"), node)
            return node.children

    app.add_directive("fastkappa-cli-help", CommandLineHelp)
    return {"parallel_read_safe": True}
