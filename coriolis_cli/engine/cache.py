"""Where numba caches the compiled kernels, and dropping stale entries.

numba invalidates a cached function when its own file changes, not when a function it calls from
another file does; after an edit of the engine, a cached batch wrapper could keep running the old
kernel. A hash of the sources the kernels are compiled from is therefore stamped beside the cache.

By default the cache sits beside the engine's modules (numba's in-tree cache). A read-only install
cannot write there: the cache then goes to ``$XDG_CACHE_HOME/coriolis/numba/<source hash>`` (so
entries from other sources are never read), and if that is not writable either, to a temporary
directory removed at exit (every run compiles). Either fallback says so in one line on stderr.
This module does not import numba at its top, so the CLI can ask whether kernels are cached cheaply.

Several processes may compile into one cache at once: a first run's side-by-side compile, a
cluster's workers on one machine, two commands started together. numba updates a function's index
without a lock (numba.core.caching.IndexDataCacheFile.save reads the index, takes the first free
data-file number, writes the index, then the data): two processes saving different signatures of
one function can both take number 1, and the index can end up naming one signature with the
other's code. serialize_cache_writes() makes each save and load of the engine's entries hold a
lock on the cache directory.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import hashlib
import os
import shutil
import sys
import tempfile

_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = os.path.dirname(_HERE)
_STAMP = "coriolis-kernels.stamp"
_LOCK = "coriolis-kernels.lock"
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


def serialize_cache_writes() -> None:
    """Make numba save an entry of the engine's cache (index and data together) under an exclusive
    lock on the cache directory, and load one under a shared lock, so that processes compiling
    into one cache cannot mix up their entries. Other numba caches are left as they are."""
    from numba.core import caching

    cache_file = caching.IndexDataCacheFile
    if getattr(cache_file, "_coriolis_serialized", False):
        return
    # numba files every function of one source directory in the same place: this module's is the
    # engine's, for the directory prepare_kernel_cache() chose
    try:
        engine = os.path.realpath(caching.FunctionCache(serialize_cache_writes)._cache_path)
    except (RuntimeError, OSError):  # numba finds no cache for the engine: nothing to serialize
        return

    def under_lock(method, exclusive):
        def locked(self, *args):
            if os.path.realpath(self._cache_path) != engine:
                return method(self, *args)
            with _directory_lock(self._cache_path, exclusive):
                return method(self, *args)
        return locked

    cache_file.save = under_lock(cache_file.save, exclusive=True)
    cache_file.load = under_lock(cache_file.load, exclusive=False)
    cache_file._coriolis_serialized = True


@contextlib.contextmanager
def _directory_lock(directory: str, exclusive: bool):
    """An advisory lock on ``directory`` (released when the process ends, however it ends).
    Without fcntl (Windows) or a lock file (a read-only directory, which no one writes), none."""
    try:
        import fcntl

        fd = os.open(os.path.join(directory, _LOCK), os.O_RDWR | os.O_CREAT, 0o666)
    except (ImportError, OSError):
        fd = None
    try:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        if fd is not None:
            os.close(fd)
