"""Batched evaluation: stacked states, evaluated in parallel over K (one workspace per chunk).

Outputs must come zeroed (np.zeros): the kernels write the structurally nonzero entries only.
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, prange

from .christoffel import christoffel_kernel
from .coriolis import coriolis_kernel
from .crba import mass_matrix_kernel
from .rnea import rnea_kernel


def chunks(K: int) -> int:
    """Work items for prange: a few per thread so uneven states still balance."""
    return max(1, min(K, 4 * get_num_threads()))


@njit(cache=True, parallel=True)
def coriolis_batch(ints, cols, geom, Q, QD, kind, wsize, nc, M, Mdot, C):
    K = Q.shape[0]
    for t in prange(nc):
        ws = np.zeros(wsize)
        for s in range(t * K // nc, (t + 1) * K // nc):
            coriolis_kernel(ints, cols, geom, Q[s], QD[s], kind, ws, M[s], Mdot[s], C[s], False)


@njit(cache=True, parallel=True)
def christoffel_batch(ints, cols, geom, Q, wsize, nc, Gamma):
    K = Q.shape[0]
    for t in prange(nc):
        ws = np.zeros(wsize)
        for s in range(t * K // nc, (t + 1) * K // nc):
            christoffel_kernel(ints, cols, geom, Q[s], ws, Gamma[s], False)


@njit(cache=True, parallel=True)
def mass_matrix_batch(ints, cols, geom, Q, wsize, nc, M):
    K = Q.shape[0]
    for t in prange(nc):
        ws = np.zeros(wsize)
        for s in range(t * K // nc, (t + 1) * K // nc):
            mass_matrix_kernel(ints, cols, geom, Q[s], ws, M[s], False)


@njit(cache=True, parallel=True)
def rnea_batch(ints, cols, geom, Q, QD, QDD, gravity, wsize, nc, tau):
    K = Q.shape[0]
    for t in prange(nc):
        ws = np.zeros(wsize)
        for s in range(t * K // nc, (t + 1) * K // nc):
            rnea_kernel(ints, cols, geom, Q[s], QD[s], QDD[s], gravity, ws, tau[s])
