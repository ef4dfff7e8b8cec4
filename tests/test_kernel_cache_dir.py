"""The rules that pick fastkappa's kernel cache folder (``fastkappa._kernels._cache``).

In-process and cheap: the platform, the environment and the user name are
patched; ``test_install.py`` checks end to end that compiled kernels land in
the folder chosen here and are read back by a new process.
"""

from __future__ import annotations

import getpass
import os
import tempfile
from pathlib import Path

import pytest

from fastkappa._kernels import _cache


@pytest.fixture
def clean_env(monkeypatch):
    for var in (_cache.ENV_VAR, "NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "LOCALAPPDATA"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(_cache.config, "CACHE_DIR", "")
    return monkeypatch


def test_user_cache_dir_on_each_platform(clean_env, tmp_path):
    mp = clean_env
    mp.setattr(_cache.os.path, "expanduser", lambda p: str(tmp_path / "home"))
    mp.setattr(_cache.sys, "platform", "linux")
    assert _cache.user_cache_dir() == tmp_path / "home" / ".cache" / "fastkappa"
    mp.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _cache.user_cache_dir() == tmp_path / "xdg" / "fastkappa"
    mp.setenv("XDG_CACHE_HOME", "relative/path")  # ignored: not absolute (XDG spec)
    assert _cache.user_cache_dir() == tmp_path / "home" / ".cache" / "fastkappa"
    mp.setattr(_cache.sys, "platform", "darwin")
    assert _cache.user_cache_dir() == tmp_path / "home" / "Library" / "Caches" / "fastkappa"
    mp.setattr(_cache.sys, "platform", "win32")
    assert _cache.user_cache_dir() == Path(
        os.path.join(str(tmp_path / "home"), "AppData", "Local")) / "fastkappa" / "Cache"
    mp.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    assert _cache.user_cache_dir() == tmp_path / "local" / "fastkappa" / "Cache"


def test_temporary_folder_names_the_user_or_the_uid(monkeypatch):
    monkeypatch.setattr(getpass, "getuser", lambda: "alice")
    assert _cache._temp_cache_dir() == Path(tempfile.gettempdir()) / "fastkappa-alice"

    def no_user():
        raise KeyError("no user")

    monkeypatch.setattr(getpass, "getuser", no_user)
    name = _cache._temp_cache_dir().name
    assert name == (f"fastkappa-{os.getuid()}" if hasattr(os, "getuid") else "fastkappa-user")


def test_cache_dir_order_fastkappa_then_numba_then_user(clean_env, tmp_path):
    mp = clean_env
    mp.setattr(_cache, "user_cache_dir", lambda: tmp_path / "user")
    assert _cache.cache_dir() == tmp_path / "user"
    assert list(_cache._candidate_roots())[-1] == _cache._temp_cache_dir()
    mp.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    assert _cache.cache_dir() == tmp_path / "numba"
    mp.setenv(_cache.ENV_VAR, str(tmp_path / "own"))
    assert _cache.cache_dir() == tmp_path / "own"
    assert list(_cache._candidate_roots()) == [tmp_path / "own", tmp_path / "numba",
                                               tmp_path / "user", _cache._temp_cache_dir()]


def _kernel_source():
    return _cache.__file__  # any existing source file will do


def test_locator_uses_its_candidate_folder_and_skips_unusable_ones(clean_env, tmp_path):
    mp = clean_env
    mp.setenv(_cache.ENV_VAR, str(tmp_path / "own"))
    mp.setattr(_cache, "user_cache_dir", lambda: tmp_path / "user")

    def f():
        return 1

    first = _cache._rank_locator(0).from_function(f, _kernel_source())
    assert first is not None
    assert Path(first.get_cache_path()).is_relative_to(tmp_path / "own")
    assert Path(first.get_cache_path()).is_dir()
    # the third candidate (the temporary folder) is the last of three here
    assert _cache._rank_locator(3).from_function(f, _kernel_source()) is None
    # a source file that does not exist (e.g. a frozen app) has no locator
    assert _cache._rank_locator(0).from_function(f, str(tmp_path / "missing.py")) is None
    # a folder that cannot be created: the next candidate is used instead
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    mp.setenv(_cache.ENV_VAR, str(blocker / "sub"))
    assert _cache._rank_locator(0).from_function(f, _kernel_source()) is None
    second = _cache._rank_locator(1).from_function(f, _kernel_source())
    assert second is not None
    assert Path(second.get_cache_path()).is_relative_to(tmp_path / "user")


def test_enable_is_a_no_op_without_a_dispatcher():
    def plain():
        return 1

    _cache.enable(plain)  # NUMBA_DISABLE_JIT=1 hands the plain function: nothing to do
    assert not hasattr(plain, "_cache")


def test_cache_stamp_covers_the_sibling_kernel_modules(tmp_path):
    """Kernels inline helpers from sibling modules (``sampling.py``): the cache's
    source stamp hashes the whole folder, so a change in a sibling invalidates them."""
    from fastkappa._kernels import _cache

    (tmp_path / "resampling.py").write_text("def f():\n    return 1\n")
    (tmp_path / "sampling.py").write_text("def g():\n    return 2\n")
    (tmp_path / "notes.txt").write_text("not a module")
    before = _cache._folder_stamp(str(tmp_path))
    assert before == _cache._folder_stamp(str(tmp_path))
    (tmp_path / "notes.txt").write_text("still not a module")
    assert _cache._folder_stamp(str(tmp_path)) == before
    (tmp_path / "sampling.py").write_text("def g():\n    return 3\n")
    assert _cache._folder_stamp(str(tmp_path)) != before


def test_kernel_locator_uses_the_folder_stamp():
    from fastkappa._kernels import _cache, resampling

    kernel = resampling._bootstrap_kappa_types_serial
    disp = getattr(kernel, "dispatcher", kernel)
    func = getattr(disp, "py_func", disp)  # a plain function under NUMBA_DISABLE_JIT=1
    py_file = func.__code__.co_filename
    locator = _cache._UserFolderLocator(func, py_file, _cache.cache_dir())
    assert locator.get_source_stamp() == _cache._folder_stamp(os.path.dirname(py_file))


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners and modes")
def test_shared_temporary_folder_is_used_only_when_private(clean_env, tmp_path):
    # numba unpickles the cache's index files: a folder another user made first in
    # the shared temporary folder (or one others may write to) let them run code as
    # the current user. It is now created 0700 and used only while private.
    mp = clean_env
    temp = tmp_path / "fastkappa-someone"
    mp.setattr(_cache, "_temp_cache_dir", lambda: temp)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    mp.setattr(_cache, "user_cache_dir", lambda: blocker / "sub")  # not creatable

    def f():
        return 1

    assert list(_cache._candidate_roots()) == [blocker / "sub", temp]  # rank 1: temporary
    assert _cache._rank_locator(1).from_function(f, _kernel_source()) is not None
    assert temp.stat().st_mode & 0o777 == 0o700 and _cache.cache_dir() == temp
    temp.chmod(0o777)  # the user's own, writable by others (umask 002): made private
    assert _cache._rank_locator(1).from_function(f, _kernel_source()) is not None
    assert temp.stat().st_mode & 0o777 == 0o700
    uid = os.getuid()
    mp.setattr(_cache.os, "getuid", lambda: uid + 1)  # another user's folder
    assert _cache._rank_locator(1).from_function(f, _kernel_source()) is None
    assert _cache.cache_dir() is None
    mp.undo()
    mp.setattr(_cache.config, "CACHE_DIR", "")
    for var in (_cache.ENV_VAR, "NUMBA_CACHE_DIR"):
        mp.delenv(var, raising=False)
    link = tmp_path / "link"
    link.symlink_to(temp, target_is_directory=True)  # a link, even to our folder
    mp.setattr(_cache, "_temp_cache_dir", lambda: link)
    mp.setattr(_cache, "user_cache_dir", lambda: blocker / "sub")
    assert _cache._rank_locator(1).from_function(f, _kernel_source()) is None
    # cache_dir() names the folder in use, not the first candidate
    mp.setenv(_cache.ENV_VAR, str(blocker / "own"))
    mp.setattr(_cache, "user_cache_dir", lambda: tmp_path / "user")
    assert _cache.cache_dir() == tmp_path / "user"
