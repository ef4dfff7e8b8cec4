"""The documentation builds with warnings as errors and documents every public name.

The HTML build runs Sphinx in a subprocess (``python -m sphinx -W --keep-going``)
on a copy of ``docs/``, so the generated API stubs never land in the working
tree, and checks that each name in the ``__all__`` of fastkappa and its optional
modules got a page. A second, small build hides torch and dask to prove that
``fastkappa.torch`` and ``fastkappa.dask`` are documented from mocks where those
extras are not installed.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

#: modules whose ``__all__`` the API reference must cover
MODULES = ("fastkappa", "fastkappa.data", "fastkappa.files", "fastkappa.agreement_files",
           "fastkappa.plot",
           "fastkappa.plot_agreement", "fastkappa.dask", "fastkappa.dask_agreement",
           "fastkappa.integrations", "fastkappa.torch")


def _sphinx_env(*front: Path) -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(p) for p in front] + [str(ROOT)]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.pop("PYTHONWARNINGS", None)
    return env


def _build(src: Path, out: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    pytest.importorskip("sphinx", reason='the docs build needs pip install -e ".[docs]"')
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(out / ".doctrees"), str(src), str(out)],
        env=env, capture_output=True, text=True, timeout=600, check=False)


def _copy_docs(dest: Path) -> Path:
    src = dest / "docs"
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns("_build", "generated"))
    return src


@pytest.fixture(scope="module")
def html(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("docs")
    out = tmp / "html"
    run = _build(_copy_docs(tmp), out, _sphinx_env())
    assert run.returncode == 0, f"sphinx-build failed:\n{run.stdout}\n{run.stderr}"
    return out


def public_names() -> list[str]:
    names = []
    for mod_name in MODULES:
        mod = importlib.import_module(mod_name)
        names += [f"{mod_name}.{n}" for n in mod.__all__ if not n.startswith("__")]
    return names


def test_every_public_name_has_an_api_page(html):
    pages = html / "api" / "generated"
    missing = [n for n in public_names() if not (pages / f"{n}.html").is_file()]
    assert not missing, (
        f"no API page for {missing}: add them to an autosummary table in docs/api/index.rst")


def test_guides_and_api_pages_are_linked_from_the_index(html):
    index = (html / "index.html").read_text(encoding="utf-8")
    for page in ("clinical", "kaggle", "big_files", "dask", "many_raters", "training",
                 "coverage", "api/index", "api/cli"):
        assert (html / f"{page}.html").is_file(), page
        assert f'href="{page}.html' in index, f"{page} is not in the index's toctree"


def test_command_line_page_shows_every_command(html):
    import argparse

    from fastkappa.cli import make_parser

    parser = make_parser()
    commands = next(a for a in parser._actions
                    if isinstance(a, argparse._SubParsersAction)).choices
    page = (html / "api" / "cli.html").read_text(encoding="utf-8")
    for name, command in commands.items():
        assert f"usage: fastkappa {name} " in page, name
        for action in command._actions:  # every option of every command
            for flag in action.option_strings:
                assert flag in page, (name, flag)


def test_api_pages_render_numpydoc_sections(html):
    page = (html / "api" / "generated" / "fastkappa.kappa_ci.html").read_text(encoding="utf-8")
    for section in ("Parameters", "Returns", "References", "Examples"):
        assert f">{section}<" in page, section
    assert "Efron" in page  # the BCa reference
    # a class page lists its methods
    page = (html / "api" / "generated" / "fastkappa.CohenKappa.html").read_text(encoding="utf-8")
    for method in ("update", "compute", "merge", "ci"):
        assert f"fastkappa.CohenKappa.{method}" in page, method


def test_optional_modules_build_without_torch_and_dask(tmp_path):
    """Where the extras are missing, conf.py mocks them and the pages still build."""
    src = tmp_path / "src"
    shutil.copytree(DOCS / "_templates", src / "_templates")
    shutil.copy(DOCS / "conf.py", src / "conf.py")
    (src / "index.rst").write_text(
        "Optional modules\n================\n\n"
        ".. currentmodule:: fastkappa.torch\n\n"
        ".. autosummary::\n   :toctree: generated\n\n   kappa_loss\n   KappaLoss\n\n"
        ".. currentmodule:: fastkappa.dask\n\n"
        ".. autosummary::\n   :toctree: generated\n\n   kappa_ci\n", encoding="utf-8")
    hidden = tmp_path / "hide"
    for name in ("torch", "dask"):
        (hidden / name).mkdir(parents=True)
        (hidden / name / "__init__.py").write_text(
            f'raise ImportError("{name} is hidden for this test")\n', encoding="utf-8")
    out = tmp_path / "html"
    run = _build(src, out, _sphinx_env(hidden))
    assert run.returncode == 0, f"sphinx-build failed:\n{run.stdout}\n{run.stderr}"
    page = (out / "generated" / "fastkappa.torch.kappa_loss.html").read_text(encoding="utf-8")
    assert "de la Torre" in page
    assert (out / "generated" / "fastkappa.torch.KappaLoss.html").is_file()
    page = (out / "generated" / "fastkappa.dask.kappa_ci.html").read_text(encoding="utf-8")
    assert "Efron" in page
