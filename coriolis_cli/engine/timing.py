"""Compiled timing loops: how C++ numbers such as the paper's Table 1 are taken (no interpreter
between evaluations). Used by ``coriolis bench``; they live here so that all compiled code, and
so numba's cache, depends on the engine alone."""

from __future__ import annotations

from numba import njit

from .christoffel import christoffel_kernel
from .coriolis import coriolis_kernel


@njit(cache=True)
def coriolis_loop(R, model, data, Q, QD, factorization):
    for s in range(R):
        k = s % Q.shape[0]
        coriolis_kernel(model, data, Q[k], QD[k], factorization, data.matrices)


@njit(cache=True)
def christoffel_loop(R, model, data, Q):
    for s in range(R):
        christoffel_kernel(model, data, Q[s % Q.shape[0]])
