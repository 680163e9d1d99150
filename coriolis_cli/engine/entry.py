"""The kernels as Python calls them: each takes a Data's two flat arrays (``ints``, ``floats``, see
engine.data) instead of the model's and the workspace's separate arrays, names their parts with
``unpack`` at no cost, and runs the algorithm's kernel on them. Results land in the workspace
(``data.M``, ``data.tau``, ...) unless an output array is passed. Kernels called from compiled
code (batches, bench loops, loop closures) keep their own (model, data, ...) signature.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .christoffel import christoffel_kernel
from .coriolis import coriolis_kernel
from .crba import mass_matrix_kernel
from .data import G_, HEADER, QDD_, TAU_, ZERO_, KernelData, no_rows, unpack
from .forward_dynamics import forward_dynamics_kernel
from .joints import RECHECK, is_vector
from .kinematics import placement_kernel
from .rnea import rnea_kernel
from .slotine_li import (N_PARAMETERS, adaptation_gradient_local_kernel, regressor_kernel, slotine_li_kernel,
                         slotine_li_local_kernel)
from .spatial import CHRISTOFFEL, STANDARD_GRAVITY

MODEL_THETA = np.zeros(0)  # theta of length zero: the model's own inertial parameters


@njit(cache=True)
def coriolis(ints, floats, q, qd, factorization):
    model, data = unpack(ints, floats)
    return coriolis_kernel(model, data, q, qd, factorization, data.matrices)


@njit(cache=True)
def coriolis_into(ints, floats, q, qd, factorization, out):
    """M, Ṁ, C written into ``out`` (3, nv, nv), zeroed by the caller: fresh arrays without a copy."""
    model, data = unpack(ints, floats)
    return coriolis_kernel(model, data, q, qd, factorization, out)


@njit(cache=True)
def christoffel(ints, floats, q, Gamma):
    model, d = unpack(ints, floats)
    return christoffel_kernel(model, KernelData(d.blocks, d.rows, d.q, d.matrices, Gamma, d.vectors), q)


@njit(cache=True)
def mass_matrix(ints, floats, q):
    model, data = unpack(ints, floats)
    return mass_matrix_kernel(model, data, q)


@njit(cache=True)
def inverse_dynamics(ints, floats, q, qd, qdd, gravity):
    model, data = unpack(ints, floats)
    return rnea_kernel(model, data, q, qd, qdd, gravity, data.vectors[TAU_])


@njit(cache=True)
def gravity_vector(ints, floats, q, gravity):
    model, data = unpack(ints, floats)
    zero = data.vectors[ZERO_]
    return rnea_kernel(model, data, q, zero, zero, gravity, data.vectors[G_])


@njit(cache=True)
def forward_dynamics(ints, floats, q, qd, tau, gravity):
    model, data = unpack(ints, floats)
    return forward_dynamics_kernel(model, data, q, qd, tau, gravity, data.vectors[QDD_])


@njit(cache=True)
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
def slotine_li(ints, floats, q, qd, qd_r, qdd_r, gravity, theta, factorization):
    """τ into data.tau; ``theta`` of length zero means the model's own parameters."""
    model, data = unpack(ints, floats)
    if not _usable_parameters(theta, N_PARAMETERS * ints[0]):
        return RECHECK
    tau = data.vectors[TAU_]
    if ints[HEADER - 1]:  # 1-DoF joints under at most a free root: constant body-frame inertias
        return slotine_li_local_kernel(model, data, q, qd, qd_r, qdd_r, gravity, theta.size > 0, theta, factorization, tau)
    return slotine_li_kernel(model, data, q, qd, qd_r, qdd_r, gravity, theta.size > 0, theta, factorization, tau)


# slotine_li as a control loop calls it, on a robot of 1-DoF joints under at most a free root (the
# body-frame kernel), with the model's parameters or an estimate θ̂: standard gravity, the
# Christoffel-consistent C and whether θ is used are compiled in as constants. On a 7-DoF arm
# that takes 1.55 µs against 1.77 µs passing them; the price is two more compiled
# specializations of the kernel, about 3 s each on a first run.
@njit(cache=True)
def slotine_li_model(ints, floats, q, qd, qd_r, qdd_r):
    model, data = unpack(ints, floats)
    return slotine_li_local_kernel(model, data, q, qd, qd_r, qdd_r, STANDARD_GRAVITY, False, MODEL_THETA, CHRISTOFFEL,
                                   data.vectors[TAU_])


@njit(cache=True)
def slotine_li_estimate(ints, floats, q, qd, qd_r, qdd_r, theta):
    model, data = unpack(ints, floats)
    if not _usable_parameters(theta, N_PARAMETERS * ints[0]) or theta.size == 0:
        return RECHECK
    return slotine_li_local_kernel(model, data, q, qd, qd_r, qdd_r, STANDARD_GRAVITY, True, theta, CHRISTOFFEL,
                                   data.vectors[TAU_])


@njit(cache=True)
def adaptation_gradient(ints, floats, q, qd, qd_r, qdd_r, gravity, factorization, Yts):
    """Yᵀs into ``Yts``: in body coordinates where the body-frame kernels apply, else through the
    regressor kernel with a Y of zero rows (not computed)."""
    model, data = unpack(ints, floats)
    if ints[HEADER - 1]:
        return adaptation_gradient_local_kernel(model, data, q, qd, qd_r, qdd_r, gravity, factorization, Yts)
    return regressor_kernel(model, data, q, qd, qd_r, qdd_r, gravity, factorization, no_rows(floats, Yts.shape[0]), Yts)


@njit(cache=True)
def regressor(ints, floats, q, qd, qd_r, qdd_r, gravity, factorization, Y, Yts):
    model, data = unpack(ints, floats)
    return regressor_kernel(model, data, q, qd, qd_r, qdd_r, gravity, factorization, Y, Yts)


@njit(cache=True)
def placement(ints, floats, q):
    model, data = unpack(ints, floats)
    return placement_kernel(model, data, q)
