"""Compiling generated code with the system's C compiler and calling it from Python (ctypes), so
that tests and users can hold it against the engine; and a C timing loop for ``bench --codegen``."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import tempfile

import numpy as np

from ..errors import MissingToolError, StateError
from .c_source import SIGNATURES

TIMING_LOOP = r"""
#include <time.h>
#include "{prefix}.h"
/* Median-free timing: the caller repeats and takes the median. Inputs are perturbed each call by
   a term the compiler cannot prove zero, so that no call is hoisted out of the loop. */
double {prefix}_time_{name}(long reps, double *in0, double *in1, double *in2, double *in3, double *out0, double *out1,
                            double *out2) {{
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long r = 0; r < reps; ++r) {{
    {call};
    in0[0] += out0[0] * 1e-300;
  }}
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return ((t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec)) / reps;
}}
"""


def c_compiler() -> str:
    for candidate in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    raise MissingToolError("no C compiler found (set CC, or install one: apt install gcc, xcode-select --install)")


def _timing_source(prefix, functions) -> str:
    calls = {
        "coriolis": f"{prefix}_coriolis(in0, in1, out0, out1, out2)",
        "christoffel": f"{prefix}_christoffel(in0, out0)",
        "inverse_dynamics": f"{prefix}_inverse_dynamics(in0, in1, in2, out0)",
        "slotine_li": f"{prefix}_slotine_li(in0, in1, in2, in3, out0)",
        "inverse_dynamics_derivatives": f"{prefix}_inverse_dynamics_derivatives(in0, in1, in2, out0, out1)",
        "gravity_derivatives": f"{prefix}_gravity_derivatives(in0, out0)",
        "slotine_li_derivatives": f"{prefix}_slotine_li_derivatives(in0, in1, in2, in3, out0, out1, out2, 0)",
        "coriolis_product_derivatives": f"{prefix}_coriolis_product_derivatives(in0, in1, in2, out0, out1)",
        "coriolis_transpose_derivatives": f"{prefix}_coriolis_transpose_derivatives(in0, in1, out0, out1)",
    }
    return "".join(TIMING_LOOP.format(prefix=prefix, name=name, call=calls[name]) for name in functions)


class CompiledCode:
    """The generated functions, compiled and callable with NumPy arrays. Same outputs as the
    engine's coriolis_matrix, christoffel, inverse_dynamics and slotine_li (model's parameters)."""

    def __init__(self, directory, prefix, functions, nq, nv, optimization="-O2", timeout=None):
        self.prefix, self.functions, self.nq, self.nv = prefix, tuple(functions), nq, nv
        self._build = tempfile.mkdtemp(prefix=f"coriolis-{prefix}-")
        timing = os.path.join(self._build, f"{prefix}_timing.c")
        with open(timing, "w", encoding="utf-8") as f:
            f.write(_timing_source(prefix, self.functions))
        library = os.path.join(self._build, f"lib{prefix}.so")
        command = [c_compiler(), optimization, "-std=c99", "-D_POSIX_C_SOURCE=199309L", "-shared", "-fPIC",
                   "-I", str(directory), os.path.join(str(directory), f"{prefix}.c"), timing, "-o", library, "-lm"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            shutil.rmtree(self._build, ignore_errors=True)
            raise TimeoutError(f"the C compiler took more than {timeout:g} s") from None
        if done.returncode:
            raise MissingToolError(f"the C compiler failed on {prefix}.c: {(done.stderr.strip().splitlines() or ['?'])[0]}")
        self._lib = ctypes.CDLL(library)
        pointer = np.ctypeslib.ndpointer(np.float64, flags="C_CONTIGUOUS")
        for name in self.functions:
            n_args = len(SIGNATURES[name][0].split(","))
            getattr(self._lib, f"{prefix}_{name}").argtypes = [pointer] * n_args
            getattr(self._lib, f"{prefix}_{name}").restype = None
            timer = getattr(self._lib, f"{prefix}_time_{name}")
            timer.argtypes = [ctypes.c_long] + [pointer] * 7
            timer.restype = ctypes.c_double

    def close(self):
        if getattr(self, "_build", None):
            shutil.rmtree(self._build, ignore_errors=True)

    def __del__(self):
        self.close()

    def _vector(self, x, n, what):
        a = np.ascontiguousarray(x, dtype=np.float64)
        if a.shape != (n,):
            raise StateError(f"{what} must hold {n} numbers, got shape {a.shape}")
        return a

    def _call(self, name, inputs, outputs):
        if name not in self.functions:
            raise StateError(f"{self.prefix}_{name} was not generated (see --what)")
        getattr(self._lib, f"{self.prefix}_{name}")(*inputs, *outputs)

    def coriolis(self, q, qd):
        n = self.nv
        out = [np.zeros((n, n)) for _ in range(3)]
        self._call("coriolis", [self._vector(q, self.nq, "q"), self._vector(qd, n, "qd")], out)
        return tuple(out)

    def christoffel(self, q):
        G = np.zeros((self.nv,) * 3)
        self._call("christoffel", [self._vector(q, self.nq, "q")], [G])
        return G

    def inverse_dynamics(self, q, qd, qdd):
        tau = np.zeros(self.nv)
        self._call("inverse_dynamics", [self._vector(q, self.nq, "q"), self._vector(qd, self.nv, "qd"),
                                        self._vector(qdd, self.nv, "qdd")], [tau])
        return tau

    def slotine_li(self, q, qd, qd_r, qdd_r):
        tau = np.zeros(self.nv)
        self._call("slotine_li", [self._vector(q, self.nq, "q")] + [self._vector(x, self.nv, w) for x, w in
                                                                     ((qd, "qd"), (qd_r, "qd_r"), (qdd_r, "qdd_r"))], [tau])
        return tau

    def inverse_dynamics_derivatives(self, q, qd, qdd):
        n = self.nv
        out = [np.zeros((n, n)) for _ in range(2)]
        self._call("inverse_dynamics_derivatives", [self._vector(q, self.nq, "q"), self._vector(qd, n, "qd"),
                                                    self._vector(qdd, n, "qdd")], out)
        return tuple(out)

    def derivatives(self, name, q, *velocities):
        """The nv x nv outputs of one of the derivative functions (codegen.trace.DERIVATIVES)."""
        n = self.nv
        out = [np.zeros((n, n)) for _ in range(len(SIGNATURES[name][0].split(",")) - 1 - len(velocities))]
        self._call(name, [self._vector(q, self.nq, "q")] + [self._vector(v, n, "velocity") for v in velocities], out)
        return tuple(out)

    def seconds_per_call(self, name, q, reps=10000):
        """One timed C loop of ``reps`` calls: the seconds per call."""
        n = self.nv
        ins = [np.array(q, dtype=float)] + [np.linspace(0.1, 1.0, n) for _ in range(3)]
        outs = [np.zeros(n ** 3 if name == "christoffel" else n * n) for _ in range(3)]
        return getattr(self._lib, f"{self.prefix}_time_{name}")(reps, *ins, *outs)
