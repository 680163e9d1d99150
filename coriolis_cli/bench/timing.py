"""Median time per call: each round runs enough calls to last about 2 ms, over ``repeat`` rounds.

Two ways to time the engine: ``call`` (one Python call per evaluation, as Pinocchio is called from
Python, so their ratio is fair) and ``loop`` (a compiled loop over pre-drawn states, which is how
C++ numbers such as the paper's Table 1 are taken). Output buffers are reused, as a control loop
would: structural zeros are written once, not on every call.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from ..engine.christoffel import christoffel_kernel
from ..engine.coriolis import coriolis_kernel

ROUND_SECONDS = 2e-3


def median_call_time(fn, repeat: int = 15, round_seconds: float = ROUND_SECONDS) -> float:
    """Median seconds per call of ``fn()``."""

    def run(number):
        for _ in range(number):
            fn()

    return median_loop_time(run, repeat, round_seconds, max_per_round=1 << 20)


@njit(cache=True)
def coriolis_loop(R, ints, cols, geom, Q, QD, kind, ws, M, Mdot, C):
    for s in range(R):
        k = s % Q.shape[0]
        coriolis_kernel(ints, cols, geom, Q[k], QD[k], kind, ws, M, Mdot, C, False)


@njit(cache=True)
def christoffel_loop(R, ints, cols, geom, Q, ws, G):
    for s in range(R):
        christoffel_kernel(ints, cols, geom, Q[s % Q.shape[0]], ws, G, False)


def median_loop_time(run, repeat: int = 15, round_seconds: float = ROUND_SECONDS, max_per_round: int = 1 << 22) -> float:
    """Median seconds per evaluation of ``run(R)``, which evaluates R states."""
    run(1)
    R = 1
    while True:
        t = time.perf_counter()
        run(R)
        dt = time.perf_counter() - t
        if dt >= round_seconds or R >= max_per_round:
            break
        R *= 2
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        run(R)
        times.append((time.perf_counter() - t) / R)
    return float(np.median(times))
