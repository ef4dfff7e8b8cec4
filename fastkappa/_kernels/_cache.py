"""Where numba keeps the compiled kernels of fastkappa: a per-user cache folder.

numba's own default (``cache=True`` without ``NUMBA_CACHE_DIR``) writes next
to the source, in ``site-packages/fastkappa/_kernels/__pycache__``.  pip does
not know those files, so uninstalling leaves the folder behind, and the empty
``site-packages/fastkappa`` then shadows a later editable install
(``import fastkappa`` fails outside the repository).  fastkappa's kernels
therefore never cache inside the installed package.  The folder is, first
found wins:

1. ``FASTKAPPA_CACHE_DIR``, when set (fastkappa's kernels only);
2. ``NUMBA_CACHE_DIR``, when set (numba's own override, for every package);
3. the per-user cache folder: ``$XDG_CACHE_HOME/fastkappa`` or
   ``~/.cache/fastkappa`` on Linux and other Unix systems,
   ``~/Library/Caches/fastkappa`` on macOS, ``%LOCALAPPDATA%\\fastkappa\\Cache``
   on Windows;
4. ``<temporary folder>/fastkappa-<user>`` when the one above is not writable.
   The temporary folder is shared by every user, and numba reads its index
   files with ``pickle``: this folder is created private (mode 0700) and used
   only while it is a folder of the current user that no one else may write
   to (one of theirs that others may write to is made private first; a
   folder someone else made first is never used).

When none is usable the kernels still run, compiled in each new process.
Inside the folder numba keeps one sub-folder per source folder (its name plus
a hash of its path), so two installs of fastkappa never share entries, and an
entry is used only while its source file's content is unchanged.

The locators hook into ``numba.core.caching`` (``FunctionCache`` with its own
locator list), the same classes numba uses for ``cache=True``; a test checks
that the files land here and are read back by a new process.
"""

from __future__ import annotations

import getpass
import hashlib
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import ClassVar

from numba.core import caching, config

#: environment variable that moves fastkappa's kernel cache (numba's
#: ``NUMBA_CACHE_DIR`` moves it too, for every package)
ENV_VAR = "FASTKAPPA_CACHE_DIR"


def user_cache_dir() -> Path:
    """The per-user cache folder of fastkappa on this platform (not created)."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(
            os.path.expanduser("~"), "AppData", "Local")
        return Path(base) / "fastkappa" / "Cache"
    if sys.platform == "darwin":
        return Path(os.path.expanduser("~")) / "Library" / "Caches" / "fastkappa"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fastkappa"


def _temp_cache_dir() -> Path:
    try:
        user = getpass.getuser()
    except Exception:  # no user name (some containers): fall back on the uid
        user = str(os.getuid()) if hasattr(os, "getuid") else "user"
    return Path(tempfile.gettempdir()) / f"fastkappa-{user}"


def cache_dir() -> Path | None:
    """The folder fastkappa's kernels are cached in now: the first candidate (rules
    in the module docstring) that can be used, or None when none can."""
    for root in _candidate_roots():
        if _usable(root):
            return root
    return None


def _usable(root: Path) -> bool:
    """Whether kernels can be cached under ``root``: creatable and writable and,
    for the shared temporary candidate, private to the current user."""
    if root == _temp_cache_dir() and not _private_folder(root):
        return False
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(root, os.W_OK | os.X_OK)


def _private_folder(root: Path) -> bool:
    """``root`` created with mode 0700 if missing; True only when it is a real
    folder (not a link) owned by the current user, writable by no one else."""
    if not hasattr(os, "getuid"):  # Windows: the temporary folder is per user
        return True
    try:
        root.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        st = os.lstat(root)
        if not (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()):
            return False
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            # the user's own folder, made writable to others by a umask such as 002
            # (an older fastkappa created it so): made private again
            os.chmod(root, 0o700, follow_symlinks=False)
            st = os.lstat(root)
    except (OSError, NotImplementedError):
        return False
    return not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _candidate_roots():
    own = os.environ.get(ENV_VAR, "")
    if own:
        yield Path(own)
    numba_dir = os.environ.get("NUMBA_CACHE_DIR", "") or config.CACHE_DIR
    if numba_dir:
        yield Path(numba_dir)
    yield user_cache_dir()
    yield _temp_cache_dir()


class _UserFolderLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """Cache a kernel under one of the candidate folders, never beside its source."""

    #: which candidate folder this locator class uses (0: the first, ...)
    _rank = 0

    def __init__(self, py_func, py_file, root):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(str(root), self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        """A hash of every module of the kernel's folder, not of its own file only:
        kernels inline helpers from their siblings (``sampling.py``), so a change
        there must invalidate them too."""
        return _folder_stamp(os.path.dirname(os.path.abspath(self._py_file)))

    @classmethod
    def from_function(cls, py_func, py_file):
        roots = list(_candidate_roots())
        if cls._rank >= len(roots) or not os.path.exists(py_file):
            return None
        if not _usable(roots[cls._rank]):  # as cache_dir() decides: the next candidate
            return None
        self = cls(py_func, py_file, roots[cls._rank])
        try:
            self.ensure_cache_path()
        except OSError:  # not creatable or not writable: the next candidate
            return None
        return self


def _folder_stamp(folder: str) -> bytes:
    """SHA-256 over the content hashes of the ``.py`` files in ``folder`` (numba's
    own per-file hash, memoised on each file's mtime and size)."""
    digest = hashlib.sha256()
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            path = os.path.join(folder, name)
            st = os.stat(path)
            digest.update(name.encode())
            digest.update(caching._hash_source_file(path, st.st_mtime, st.st_size))
    return digest.digest()


def _rank_locator(rank: int) -> type:
    return type(f"_UserFolderLocator{rank}", (_UserFolderLocator,), {"_rank": rank})


class _KernelCacheImpl(caching.CompileResultCacheImpl):
    # one locator per candidate folder, in order; numba tries each in turn
    _locator_classes: ClassVar[list] = [_rank_locator(r) for r in range(4)]


class KernelCache(caching.FunctionCache):
    """numba's per-function cache, with fastkappa's locators."""

    _impl_class = _KernelCacheImpl


def enable(dispatcher) -> None:
    """Give a numba dispatcher fastkappa's on-disk cache (no-op without the JIT).

    With ``NUMBA_DISABLE_JIT=1`` the decorator returns the plain function;
    when no candidate folder is writable the kernel compiles in each process.
    """
    py_func = getattr(dispatcher, "py_func", None)
    if py_func is None or not hasattr(dispatcher, "_cache"):
        return
    try:
        dispatcher._cache = KernelCache(py_func)
    except RuntimeError:  # numba found no usable locator: run uncached
        return
