"""numba's on-disk cache: whether the kernels are already compiled, and dropping stale entries.

numba invalidates a cached function when its own file changes, not when a function it calls from
another file does; after an edit of the engine, a cached batch wrapper could keep running the old
kernel. A hash of the engine's sources, stamped beside the cache, removes that risk.
"""

from __future__ import annotations

import glob
import hashlib
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = os.path.dirname(_HERE)
_STAMP = "coriolis-kernels.stamp"


def _source_hash() -> str:
    h = hashlib.sha256()
    for path in sorted(glob.glob(os.path.join(_PACKAGE, "engine", "*.py")) + glob.glob(os.path.join(_PACKAGE, "bench", "timing.py"))
                       + [os.path.join(_PACKAGE, "model", "tree.py")]):
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def drop_stale_cache() -> None:
    """Remove cached kernels compiled from other sources than the ones on disk now."""
    try:
        digest = _source_hash()
        for pycache in (os.path.join(_HERE, "__pycache__"), os.path.join(_PACKAGE, "bench", "__pycache__")):
            stamp = os.path.join(pycache, _STAMP)
            if os.path.exists(stamp):
                with open(stamp) as f:
                    if f.read().strip() == digest:
                        continue
            if not os.path.isdir(pycache):
                os.makedirs(pycache, exist_ok=True)
            for p in glob.glob(os.path.join(pycache, "*.nbi")) + glob.glob(os.path.join(pycache, "*.nbc")):
                os.unlink(p)
            with open(stamp, "w") as f:
                f.write(digest)
    except OSError:
        pass  # a read-only install keeps whatever cache numba manages to use


def kernels_cached() -> bool:
    dirs = [os.path.join(_HERE, "__pycache__")]
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        dirs.append(env)
    for d in dirs:
        if glob.glob(os.path.join(d, "**", "coriolis.coriolis_kernel-*.nbi"), recursive=True):
            return True
    return False
