"""How the engine compiles a function that only compiled code calls.

numba gives every ``njit`` function a Python wrapper and a C wrapper, and compiles both with it;
the entries, batches and timing loops need them, since Python calls those. The spatial helpers,
the joint seam, the passes and the kernels under an entry are called from compiled code only, and
``helper`` compiles them without the two wrappers: a third less compile time on a fresh install
(the Coriolis kernel's 32 functions in 7.8 s instead of 11.2). Compiled code calls a helper as
any njit function; Python cannot (with no wrapper to enter it, the interpreter would crash), and
test_structure checks that no Python code imports one.
"""

from numba import njit


def helper(func=None, /, **options):
    """``njit(cache=True)`` for a function only compiled code calls (without the Python and C
    wrappers); ``options`` are njit's (``inline``, ...)."""
    decorate = njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True, **options)
    return decorate if func is None else decorate(func)
