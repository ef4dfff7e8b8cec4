"""Every ```python block of README.md and docs/*.md runs, and shows what it says.

How the blocks run (the documented setup):

- The blocks of one file run in order in one namespace, as a reader pasting
  them into one Python session would; each file starts from an empty one.
- The working directory is a fresh temporary folder holding ``grades/``: four
  Parquet files with the columns ``grade``, ``model_a``, ``patient`` and
  ``site`` (the files the Dask example reads); and ``grades.csv`` and
  ``grades.parquet``, 2,000 rows with ``grade`` (0-4), ``model_a``,
  ``model_b``, ``model_c``, ``regression_output``, ``patient`` and ``site``
  (the file the command-line examples name).
- Output: full-line comments directly below an expression statement are the
  output that statement shows, as in a REPL: for ``print(...)`` what it
  prints, otherwise the ``repr`` of its value.  A ``...`` line stands for any
  number of lines (doctest's ELLIPSIS).  Comments after other statements, and
  comments at the end of a line, are prose.

```bash blocks run too, line by line (``\\`` continues a line), with
``fastkappa`` meaning this checkout's ``python -m fastkappa``, in the same
folder (for a guide in docs/, after the guide's Python blocks, whose files
its commands read), which also holds ``grades.csv.gz``, ``new.csv`` (``id``,
``regression_output``), ``train.csv`` (``id``, ``grade``, ``score``,
``patient``) and ``test.csv`` (``id``, ``score``).  Each command must exit
with 0.  The exception is the bash Quickstart (``pip install``): it is checked
against ``.ci/run``, which CI runs.
"""

from __future__ import annotations

import ast
import contextlib
import doctest
import gzip
import io
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.M | re.S)


def code_blocks(path: Path, language: str = "python") -> list[tuple[int, str]]:
    """(first line number, code) of each fenced block in that language."""
    text = path.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 2, m.group(2)) for m in FENCE.finditer(text)
            if m.group(1) == language]


def _expected_outputs(code: str) -> list[tuple[ast.stmt, str | None]]:
    """Each top-level statement with the output its following comments claim."""
    lines = code.splitlines()
    out = []
    for stmt in ast.parse(code).body:
        claimed = []
        i = stmt.end_lineno  # 0-based index of the line after the statement
        while i < len(lines) and lines[i].startswith("#"):
            claimed.append(re.sub(r"^# ?", "", lines[i]))
            i += 1
        out.append((stmt, "\n".join(claimed) + "\n" if claimed else None))
    return out


def _is_print(stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == "print")


def run_block(code: str, namespace: dict, where: str) -> int:
    """Run one block statement by statement; return how many outputs were checked."""
    checker = doctest.OutputChecker()
    flags = doctest.ELLIPSIS
    checked = 0
    for stmt, claimed in _expected_outputs(code):
        module = ast.Module(body=[stmt], type_ignores=[])
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            if isinstance(stmt, ast.Expr) and not _is_print(stmt):
                value = eval(compile(ast.Expression(stmt.value), where, "eval"), namespace)
                shown = "" if value is None else repr(value) + "\n"
            else:
                exec(compile(module, where, "exec"), namespace)
                shown = buffer.getvalue()
        if claimed is None or not isinstance(stmt, ast.Expr):
            continue
        got = "\n".join(line.rstrip() for line in shown.splitlines()) + "\n"
        assert checker.check_output(claimed, got, flags), (
            f"{where}, line {stmt.lineno}: the document shows\n{claimed}but it gives\n{got}")
        checked += 1
    return checked


@pytest.fixture
def grades_folder(tmp_path, monkeypatch):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(1)
    (tmp_path / "grades").mkdir()
    for part in range(4):
        n = 500
        grade = rng.integers(0, 5, n)
        pd.DataFrame({
            "grade": grade,
            "model_a": np.clip(grade + rng.integers(-1, 2, n), 0, 4),
            "patient": part * n // 2 + np.arange(n) // 2,
            "site": rng.choice(["north", "south", "east"], n),
        }).to_parquet(tmp_path / "grades" / f"part-{part}.parquet")
    n = 2000
    grade = rng.integers(0, 5, n)
    table = pd.DataFrame({
        "grade": grade,
        **{f"model_{m}": np.clip(grade + rng.integers(-s, s + 1, n), 0, 4)
           for m, s in (("a", 1), ("b", 2), ("c", 1))},
        "regression_output": grade + rng.normal(0, 0.8, n),
        "patient": np.arange(n) // 2,
        "site": rng.choice(["north", "south", "east"], n),
    })
    table.to_csv(tmp_path / "grades.csv", index=False)
    table.to_parquet(tmp_path / "grades.parquet")
    (tmp_path / "grades.csv.gz").write_bytes(
        gzip.compress((tmp_path / "grades.csv").read_bytes()))
    ids = [f"row-{i}" for i in range(n)]
    pd.DataFrame({"id": ids, "regression_output": table["regression_output"]}).to_csv(
        tmp_path / "new.csv", index=False)
    pd.DataFrame({"id": ids, "grade": grade, "score": table["regression_output"],
                  "patient": table["patient"]}).to_csv(tmp_path / "train.csv", index=False)
    pd.DataFrame({"id": ids, "score": table["regression_output"]}).to_csv(
        tmp_path / "test.csv", index=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_extraction_finds_the_readme_blocks_and_their_outputs():
    blocks = code_blocks(ROOT / "README.md")
    assert len(blocks) >= 4
    claimed = [c for _, code in blocks for _, c in _expected_outputs(code) if c]
    assert any(c.startswith("quadratic-weighted kappa = ") for c in claimed)
    # the checker fails on a wrong claim (so the test above can fail)
    with pytest.raises(AssertionError, match="the document shows"):
        run_block("1 + 1\n# 3\n", {}, "example")
    assert run_block("print('a\\nb\\nc')\n# a\n# ...\n", {}, "example") == 1


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_document_code_blocks_run_and_show_what_they_say(path, grades_folder):
    blocks = code_blocks(path)
    if not blocks:
        assert path != ROOT / "README.md"
        return
    namespace: dict = {"__name__": "__readme__"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for line, code in blocks:
            run_block(code, namespace, f"{path.name}:{line}")


def test_ci_runs_both_quickstart_commands_as_written():
    quickstart = ROOT.joinpath("README.md").read_text(encoding="utf-8").split(
        "## Quickstart", 1)[1]
    bash = code_blocks_in(quickstart, "bash")[0]
    commands = [line for line in bash.splitlines() if line and not line.startswith("#")]
    assert len(commands) == 2
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert "set -euo pipefail" in ci
    run = [line.removeprefix("quickstart '").removesuffix("'") for line in ci
           if line.startswith("quickstart '")]
    assert run == commands


@pytest.mark.parametrize(("failing", "reached"), [
    ("false && true", False),        # the left side of && fails: the job stops
    ("true && false", False),
    ("true && exit 5", False),       # pytest's "no tests collected" is a failure too
    ("true && true", True),
])
def test_ci_stops_when_any_part_of_a_command_fails(tmp_path, failing, reached):
    import subprocess

    bash = _bash()
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    head = text.split("\nquickstart '", 1)[0].replace('cd "$(dirname "$0")/.."', "")
    script = tmp_path / "run"
    script.write_text(head + f"\nquickstart '{failing}'\necho reached\n")
    out = subprocess.run([bash, str(script)], capture_output=True, text=True, timeout=60)
    assert ("reached" in out.stdout) == reached
    assert (out.returncode == 0) == reached


def _bash() -> str:
    """The bash that runs the README's commands and ``.ci/run``: a failure, not a
    skip, where there is none (the Quickstart itself needs it)."""
    bash = shutil.which("bash")
    assert bash is not None, (
        "these tests run the README's bash commands and .ci/run; install bash "
        "(on Windows, Git for Windows ships one) and put it on PATH")
    return bash


def code_blocks_in(text: str, language: str) -> list[str]:
    return [m.group(2) for m in FENCE.finditer(text) if m.group(1) == language]


def shell_commands(code: str) -> list[str]:
    """The commands of a bash block: continuation lines joined, comment lines left out."""
    commands, current = [], ""
    for line in code.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        commands.append(current + line)
        current = ""
    return commands


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_document_shell_blocks_run(path, grades_folder):
    bash = _bash()
    blocks = [code for _, code in code_blocks(path, "bash") if "pip install" not in code]
    if not blocks:
        return
    if path != ROOT / "README.md":
        # a guide's commands read the files its Python blocks wrote, as for a
        # reader following the page: run those first, in the same folder
        namespace: dict = {"__name__": "__readme__"}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for line, code in code_blocks(path):
                run_block(code, namespace, f"{path.name}:{line}")
    shim = grades_folder / "bin"
    shim.mkdir(exist_ok=True)
    (shim / "fastkappa").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m fastkappa "$@"\n')
    (shim / "fastkappa").chmod(0o755)
    env = dict(os.environ, PATH=f"{shim}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    for code in blocks:
        for command in shell_commands(code):
            out = subprocess.run([bash, "-euo", "pipefail", "-c", command], env=env,
                                 cwd=grades_folder, capture_output=True, text=True,
                                 timeout=900)
            assert out.returncode == 0, f"{path.name}: {command}\n{out.stderr}"


def test_shell_commands_join_continuations_and_skip_comments():
    code = "# a comment\nfastkappa a \\\n    --b c   # trailing\n\nfastkappa d\n"
    assert shell_commands(code) == ["fastkappa a      --b c   # trailing", "fastkappa d"]
