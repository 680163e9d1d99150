"""The Slotine–Li torque, its regressor and the adaptation term (Wensing–Slotine App. B, Algs. 3
and 4) as Python calls them: each entry chooses the recursion in body coordinates
(slotine_li_body.py) where it applies, robots of 1-DoF joints under at most a free root, and the
world-frame one (slotine_li_world.py) otherwise.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .data import BODY_FRAME_, TAU_, kernel_data, no_rows, unpack, unpack_at
from .jit import helper
from .joints import RECHECK, is_vector
from .slotine_li_body import adaptation_gradient_local_kernel, slotine_li_local_kernel
from .slotine_li_world import N_PARAMETERS, regressor_kernel, slotine_li_kernel
from .spatial import CHRISTOFFEL, STANDARD_GRAVITY

MODEL_THETA = np.zeros(0)  # theta of length zero: the model's own inertial parameters


@helper
def _usable_parameters(theta, n):
    """θ of length zero (the model's own) or n contiguous finite doubles; else the caller gets
    RECHECK and checks θ in full (model.parameters.check_parameters) for the message."""
    if theta.size == 0:
        return True
    if not is_vector(theta, n):
        return False
    for k in range(n):
        if not math.isfinite(theta[k]):
            return False
    return True


@njit(cache=True)
def slotine_li_entry(ints, floats, q, qd, qd_r, qdd_r, gravity, theta, factorization):
    """τ into data.tau; ``theta`` of length zero means the model's own parameters."""
    model, data = unpack(ints, floats)
    if not _usable_parameters(theta, N_PARAMETERS * ints[0]):
        return RECHECK
    tau = data.vectors[TAU_]
    if ints[BODY_FRAME_]:  # 1-DoF joints under at most a free root: constant body-frame inertias
        return slotine_li_local_kernel(model, data, q, qd, qd_r, qdd_r, gravity, theta.size > 0, theta, factorization, tau)
    return slotine_li_kernel(model, data, q, qd, qd_r, qdd_r, gravity, theta.size > 0, theta, factorization, tau)


# slotine_li as a control loop calls it, on a robot of 1-DoF joints under at most a free root (the
# body-frame kernel), with the model's parameters or an estimate θ̂: standard gravity, the
# Christoffel-consistent C and whether θ is used are compiled in as constants, and the workspace
# comes as one address (data.unpack_at). On a 7-DoF arm that took 1.55 µs against 1.77 µs passing
# them; the price is two more compiled specializations of the kernel, about 3 s each on a first run.
@njit(cache=True)
def slotine_li_model_entry(address, q, qd, qd_r, qdd_r):
    model, data = unpack_at(address)
    return slotine_li_local_kernel(model, data, q, qd, qd_r, qdd_r, STANDARD_GRAVITY, False, MODEL_THETA, CHRISTOFFEL,
                                   data.vectors[TAU_])


@njit(cache=True)
def slotine_li_estimate_entry(address, q, qd, qd_r, qdd_r, theta):
    model, data = unpack_at(address)
    if not _usable_parameters(theta, N_PARAMETERS * model.ints.shape[0]) or theta.size == 0:
        return RECHECK
    return slotine_li_local_kernel(model, data, q, qd, qd_r, qdd_r, STANDARD_GRAVITY, True, theta, CHRISTOFFEL,
                                   data.vectors[TAU_])


@njit(cache=True)
def adaptation_gradient_entry(ints, floats, q, qd, qd_r, qdd_r, gravity, factorization, Yts):
    """Yᵀs into ``Yts``: in body coordinates where the body-frame kernels apply, else through the
    regressor kernel with a Y of zero rows (not computed)."""
    model, data = unpack(ints, floats)
    if ints[BODY_FRAME_]:
        return adaptation_gradient_local_kernel(model, data, q, qd, qd_r, qdd_r, gravity, factorization, Yts)
    return regressor_kernel(model, data, q, qd, qd_r, qdd_r, gravity, factorization, no_rows(floats, Yts.shape[0]), Yts)


@njit(cache=True)
def regressor_entry(ints, floats, q, qd, qd_r, qdd_r, gravity, factorization, Y, Yts):
    model, data = unpack(ints, floats)
    return regressor_kernel(model, data, q, qd, qd_r, qdd_r, gravity, factorization, Y, Yts)


@njit(cache=True, parallel=True)
def regressor_batch(model, Q, QD, QD_R, QDD_R, gravity, factorization, nc, out, status):
    """out: (K, nv, 10 N), zeroed: Y of each state (what identification's torque form stacks)."""
    K = Q.shape[0]
    for t in prange(nc):
        d = kernel_data(Q.shape[1], model.cols.shape[0], model.ints.shape[0])
        Yts = np.empty(out.shape[2])
        for s in range(t * K // nc, (t + 1) * K // nc):
            status[s] = regressor_kernel(model, d, Q[s], QD[s], QD_R[s], QDD_R[s], gravity, factorization, out[s], Yts)
