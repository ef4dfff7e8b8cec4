"""The compiled kernels are cached per user, never inside the installed package.

numba's default for ``cache=True`` writes beside the source
(``site-packages/fastkappa/_kernels/__pycache__``); pip does not remove those
files on uninstall, and the leftover folder shadows a later editable install.
Each test runs fastkappa in a fresh process with its own cache folders.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import fastkappa

PACKAGE = Path(fastkappa.__file__).resolve().parent

# numba is imported BEFORE fastkappa: the cache location must not depend on
# the order (numba reads NUMBA_CACHE_DIR once, at its own import)
SCRIPT = textwrap.dedent("""
    import json, sys
    import numba
    import numpy as np
    import fastkappa as fk
    from fastkappa._kernels import counting, resampling
    y = np.array([0, 1, 2, 3, 4, 4, 1, 0])
    p = np.array([0, 1, 2, 3, 3, 4, 2, 0])
    kappa = fk.cohen_kappa(y, p, weights="quadratic")
    fk.kappa_ci(y, p, n_resamples=50, seed=0, method="percentile")
    stats = {}
    for mod in (counting, resampling):
        for name in dir(mod):
            d = getattr(mod, name)
            if hasattr(d, "stats") and d.signatures:
                stats[name] = [len(d.stats.cache_hits), len(d.stats.cache_misses),
                               d.stats.cache_path]
    print(json.dumps({"kappa": kappa, "stats": stats}))
""")


def _kernel_cache_files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.suffix in (".nbi", ".nbc")}


def _run(tmp_path: Path, **env_vars: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "FASTKAPPA_CACHE_DIR", "NUMBA_DISABLE_JIT")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    env["HOME"] = str(tmp_path / "home")      # macOS / a missing XDG: never the real one
    env["LOCALAPPDATA"] = str(tmp_path / "localappdata")
    env.update(env_vars)
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture
def package_files_before():
    return _kernel_cache_files(PACKAGE)


def test_kernel_cache_lands_in_the_user_cache_folder_not_the_package(
        tmp_path, package_files_before):
    first = _run(tmp_path)
    sklearn = pytest.importorskip("sklearn.metrics")
    y, p = [0, 1, 2, 3, 4, 4, 1, 0], [0, 1, 2, 3, 3, 4, 2, 0]
    assert first["kappa"] == pytest.approx(
        sklearn.cohen_kappa_score(y, p, weights="quadratic"), rel=1e-12)
    cached = _kernel_cache_files(tmp_path / "xdg" / "fastkappa")
    assert cached, "no kernel was cached under XDG_CACHE_HOME/fastkappa"
    # nothing new inside the package directory, whatever the checkout holds already
    assert _kernel_cache_files(PACKAGE) == package_files_before
    for _hits, _misses, path in first["stats"].values():
        assert Path(path).resolve().is_relative_to((tmp_path / "xdg").resolve())
        assert not Path(path).resolve().is_relative_to(PACKAGE)
    # a new process reads the kernels back instead of compiling them again
    second = _run(tmp_path)
    assert second["kappa"] == first["kappa"]
    assert second["stats"], "no kernel ran"
    for name, (hits, misses, _path) in second["stats"].items():
        assert hits >= 1 and misses == 0, (name, hits, misses)
    assert _kernel_cache_files(PACKAGE) == package_files_before


def test_fastkappa_cache_dir_then_numba_cache_dir_move_the_cache(tmp_path):
    own, numba_dir = tmp_path / "own", tmp_path / "numba"
    _run(tmp_path, FASTKAPPA_CACHE_DIR=str(own), NUMBA_CACHE_DIR=str(numba_dir))
    assert _kernel_cache_files(own)
    assert not _kernel_cache_files(numba_dir)
    assert not (tmp_path / "xdg").exists()
    _run(tmp_path, NUMBA_CACHE_DIR=str(numba_dir))
    assert _kernel_cache_files(numba_dir)
    assert not (tmp_path / "xdg").exists()


def test_an_unusable_cache_folder_falls_back_to_the_next(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    _run(tmp_path, FASTKAPPA_CACHE_DIR=str(blocker / "cache"))
    assert _kernel_cache_files(tmp_path / "xdg" / "fastkappa")


def test_user_cache_dir_follows_the_platform_rules(monkeypatch, tmp_path):
    from fastkappa._kernels import _cache

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _cache.user_cache_dir() == tmp_path / "xdg" / "fastkappa"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/paths/are/ignored")  # XDG spec
    assert _cache.user_cache_dir() == tmp_path / ".cache" / "fastkappa"
    monkeypatch.setattr(sys, "platform", "darwin")
    assert _cache.user_cache_dir() == tmp_path / "Library" / "Caches" / "fastkappa"
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    assert _cache.user_cache_dir() == tmp_path / "local" / "fastkappa" / "Cache"
    monkeypatch.setenv("FASTKAPPA_CACHE_DIR", str(tmp_path / "mine"))
    assert _cache.cache_dir() == tmp_path / "mine"


# --------------------------------------------------------------------------- install hints


def test_install_hint_works_from_an_index_and_from_a_clone():
    from fastkappa._install import install_hint

    hint = install_hint("io")
    assert 'pip install "fastkappa[io]"' in hint     # quoted: zsh globs [io] otherwise
    assert 'pip install -e ".[io]"' in hint          # from a clone: the checkout, not PyPI


def test_every_install_command_in_the_package_comes_from_the_hint():
    # an unquoted `pip install fastkappa[x]` fails in zsh and, from a clone,
    # installs PyPI's fastkappa: every message goes through install_hint()
    import re

    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        bare = re.findall(r"pip install fastkappa\[", text)
        assert not bare, f"{path.name}: unquoted `pip install fastkappa[...]`"
        for match in re.finditer(r'pip install "fastkappa\[(\w+)\]"', text):
            if path.name == "_install.py":
                continue
            # docstrings that name the extra name the clone's command next to it
            near = text[match.end():match.end() + 120]
            assert f'pip install -e ".[{match.group(1)}]"' in near, path.name


def test_to_dataframe_without_pandas_names_the_extra(monkeypatch):
    import re

    import numpy as np

    import fastkappa as fk
    from fastkappa._install import install_hint

    res = fk.kappa_by_group([0, 1, 1, 0], [0, 1, 0, 0], np.array([0, 0, 1, 1]))
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=re.escape(install_hint("pandas"))):
        res.to_dataframe()


def test_qwk_scorer_without_scikit_learn_names_the_extra(monkeypatch):
    import re

    from fastkappa._install import install_hint
    from fastkappa.integrations import make_qwk_scorer

    monkeypatch.setitem(sys.modules, "sklearn.metrics", None)
    with pytest.raises(ImportError, match=re.escape(install_hint("sklearn"))):
        make_qwk_scorer(n_classes=5)
