"""Batched evaluation: stacked states, evaluated in parallel over K (one workspace per chunk).

Outputs must come zeroed (np.zeros): the kernels write the structurally nonzero entries only.
Each kernel returns a status per state into ``status``; the caller reports the first failure.
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, prange

from .christoffel import christoffel_kernel
from .coriolis import coriolis_kernel
from .crba import mass_matrix_kernel
from .data import M_, KernelData, kernel_data
from .forward_dynamics import forward_dynamics_kernel
from .rnea import rnea_kernel


def chunks(K: int) -> int:
    """Work items for prange: a few per thread so uneven states still balance."""
    return max(1, min(K, 4 * get_num_threads()))


@njit(cache=True, parallel=True)
def coriolis_batch(model, Q, QD, factorization, nc, matrices, status):
    """matrices: (K, 3, nv, nv), M, Ṁ, C of each state."""
    K = Q.shape[0]
    for t in prange(nc):
        d = kernel_data(Q.shape[1], model.cols.shape[0], model.ints.shape[0])
        for s in range(t * K // nc, (t + 1) * K // nc):
            status[s] = coriolis_kernel(model, d, Q[s], QD[s], factorization, matrices[s])


@njit(cache=True, parallel=True)
def christoffel_batch(model, Q, nc, Gamma, status):
    K = Q.shape[0]
    for t in prange(nc):
        d = kernel_data(Q.shape[1], model.cols.shape[0], model.ints.shape[0])
        for s in range(t * K // nc, (t + 1) * K // nc):
            status[s] = christoffel_kernel(model, KernelData(d.blocks, d.rows, d.q, d.matrices, Gamma[s], d.vectors), Q[s])


@njit(cache=True, parallel=True)
def mass_matrix_batch(model, Q, nc, M, status):
    K = Q.shape[0]
    for t in prange(nc):
        d = kernel_data(Q.shape[1], model.cols.shape[0], model.ints.shape[0])
        for s in range(t * K // nc, (t + 1) * K // nc):
            status[s] = mass_matrix_kernel(model, d, Q[s])
            M[s] = d.matrices[M_]


@njit(cache=True, parallel=True)
def rnea_batch(model, Q, QD, QDD, gravity, nc, tau, status):
    K = Q.shape[0]
    for t in prange(nc):
        d = kernel_data(Q.shape[1], model.cols.shape[0], model.ints.shape[0])
        for s in range(t * K // nc, (t + 1) * K // nc):
            status[s] = rnea_kernel(model, d, Q[s], QD[s], QDD[s], gravity, tau[s])


@njit(cache=True, parallel=True)
def forward_dynamics_batch(model, Q, QD, TAU, gravity, nc, qdd, status):
    K = Q.shape[0]
    for t in prange(nc):
        d = kernel_data(Q.shape[1], model.cols.shape[0], model.ints.shape[0])
        for s in range(t * K // nc, (t + 1) * K // nc):
            status[s] = forward_dynamics_kernel(model, d, Q[s], QD[s], TAU[s], gravity, qdd[s])
