"""Where numba caches the compiled kernels, and dropping stale entries.

numba invalidates a cached function when its own file changes, not when a function it calls from
another file does; after an edit of the engine, a cached batch wrapper could keep running the old
kernel. A hash of the sources the kernels are compiled from is therefore stamped beside the cache.

By default the cache sits beside the engine's modules (numba's in-tree cache). A read-only install
cannot write there: the cache then goes to ``$XDG_CACHE_HOME/coriolis/numba/<source hash>`` (so
entries from other sources are never read), and if that is not writable either, to a temporary
directory removed at exit (every run compiles). Either fallback says so in one line on stderr.
This module does not import numba, so the CLI can ask whether kernels are cached cheaply.
"""

from __future__ import annotations

import atexit
import glob
import hashlib
import os
import shutil
import sys
import tempfile

_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = os.path.dirname(_HERE)
_STAMP = "coriolis-kernels.stamp"
IN_TREE = os.path.join(_HERE, "__pycache__")

# the directory in effect once prepare_kernel_cache() has run
cache_dir: str | None = None


def source_hash() -> str:
    h = hashlib.sha256()
    sources = sorted(glob.glob(os.path.join(_HERE, "*.py"))) + [
        os.path.join(_PACKAGE, "model", "tree.py"), os.path.join(_PACKAGE, "model", "joints.py")]
    for path in sources:
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def _stamped(directory: str, digest: str) -> None:
    """Make ``directory`` a cache for these sources: create it, drop entries of other sources."""
    os.makedirs(directory, exist_ok=True)
    stamp = os.path.join(directory, _STAMP)
    if os.path.isfile(stamp):
        with open(stamp) as f:
            if f.read().strip() == digest:
                return
    for p in glob.glob(os.path.join(directory, "*.nbi")) + glob.glob(os.path.join(directory, "*.nbc")):
        os.unlink(p)
    with open(stamp, "w") as f:
        f.write(digest)
    # numba also needs to create files here
    with tempfile.TemporaryFile(dir=directory):
        pass


def _user_cache(digest: str) -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "coriolis", "numba", digest[:16])


def _use(directory: str) -> None:
    """Point numba at ``directory`` whether or not it is imported yet."""
    os.environ["NUMBA_CACHE_DIR"] = directory
    if "numba" in sys.modules:
        from numba.core import config

        config.CACHE_DIR = directory


def prepare_kernel_cache() -> str | None:
    """Choose the cache directory before any kernel is compiled; never raises."""
    global cache_dir
    if os.environ.get("NUMBA_CACHE_DIR"):  # the user's choice
        cache_dir = os.environ["NUMBA_CACHE_DIR"]
        return cache_dir
    try:
        digest = source_hash()
    except OSError:
        digest = "unknown"
    try:
        _stamped(IN_TREE, digest)
        cache_dir = IN_TREE
        return cache_dir
    except OSError:
        pass
    user = _user_cache(digest)
    try:
        new = not os.path.isdir(user)
        _stamped(user, digest)
        if new:
            print(f"coriolis: the package directory is not writable; compiled kernels are cached in {user}", file=sys.stderr)
        _use(user)
        cache_dir = user
        return cache_dir
    except OSError:
        pass
    try:
        tmp = tempfile.mkdtemp(prefix="coriolis-numba-")
        atexit.register(shutil.rmtree, tmp, True)
        print("coriolis: no writable cache directory; the kernels are compiled on every run (10-60 s)", file=sys.stderr)
        _use(tmp)
        cache_dir = tmp
    except OSError:
        cache_dir = None
    return cache_dir


def kernels_cached(kernel: str = "coriolis.coriolis_kernel") -> bool:
    """Whether ``kernel`` (module.function) is compiled on disk already (without importing numba):
    in the directory numba uses once prepare_kernel_cache() has run, else in any it may use."""
    if cache_dir is not None:
        return bool(glob.glob(os.path.join(cache_dir, "**", f"{kernel}-*.nbi"), recursive=True))
    dirs = [IN_TREE]
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        dirs.append(env)
    try:
        dirs.append(_user_cache(source_hash()))
    except OSError:
        pass
    return any(glob.glob(os.path.join(d, "**", f"{kernel}-*.nbi"), recursive=True) for d in dirs)
