"""Whether numba's on-disk cache already holds the compiled kernels (to warn once before compiling)."""

from __future__ import annotations

import glob
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def kernels_cached() -> bool:
    dirs = [os.path.join(_HERE, "__pycache__")]
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        dirs.append(env)
    for d in dirs:
        if glob.glob(os.path.join(d, "**", "coriolis.coriolis_kernel-*.nbi"), recursive=True):
            return True
    return False
