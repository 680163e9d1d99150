"""The public calls on a kinematic tree (model.tree.RobotModel): the fast path for float64 vectors
and a workspace, the checks of engine.calls otherwise, batches in parallel. engine.api chooses
these or engine.coordinates's (robots in other coordinates) by the robot's type, and carries the
documentation; each function here is the tree's side of the one of the same name there.
"""

from __future__ import annotations

import numpy as np

from ..model.joints import FREE as FREE_CODE
from ..model.parameters import N_PARAMETERS, check_parameters
from ..model.tree import RobotModel
from . import compiled
from .calls import (F64, ND, as_states, check_data, checked, factorization_code, gravity_of, is_vector, run_batch, settle,
                    stacked_states, velocities_of, with_hint)
from .conventions import CHRISTOFFEL, FACTORIZATIONS, QUANTITIES, RECHECK, MomentumRegressors
from .data import Data, check_gamma_bytes, check_memory, gamma_bytes_for
from .workspaces import KERNEL_SCRATCH, kernel_scratch, shared_data

_zeros = np.zeros
DEFAULT_FACTORIZATION = "christoffel"  # the default argument itself (interned): tested with `is`


MODEL_THETA = np.zeros(0)  # θ of length zero: the model's own inertial parameters


# ---- Algorithm 1 ---------------------------------------------------------------------------
def coriolis_matrix(robot: RobotModel, q, qd, factorization: str = DEFAULT_FACTORIZATION, data: Data | None = None):
    if factorization is DEFAULT_FACTORIZATION:  # the default argument itself: skip the look-up
        kind = CHRISTOFFEL
    else:
        kind = FACTORIZATIONS.get(factorization) if type(factorization) is str else None
        if kind is None:
            kind = factorization_code(factorization)
    if data is not None:
        try:
            same = data.robot is robot
        except AttributeError:
            same = False
        if not (same and type(q) is ND and type(qd) is ND and q.dtype is F64 and qd.dtype is F64 and q.ndim == 1
                and qd.ndim == 1):
            check_data(robot, data)
            q, qd = checked(robot, q, ("qd", qd))
        status = compiled.coriolis_matrix(data.core, q, qd, kind, data.coriolis_block)
        if status:
            settle(robot, status, compiled.coriolis_matrix, data.core, q, (("qd", qd),), (kind, data.coriolis_block))
        return data.coriolis_outputs
    n = robot.nv
    if not (type(q) is ND and type(qd) is ND and q.dtype is F64 and qd.dtype is F64 and q.ndim == 1 and qd.ndim == 1):
        Q, (QD,), batch = stacked_states(robot, q, ("qd", qd))
        if batch:
            check_memory(24 * Q.shape[0] * n * n, f"M, Ṁ and C of {Q.shape[0]} states")
            out = run_batch(robot, compiled.coriolis_matrix_batch, np.zeros((Q.shape[0], 3, n, n)), Q, (QD, kind),
                                 ("qd", QD))
            return out[:, 0], out[:, 1], out[:, 2]  # M, Ṁ, C
        q, qd = Q[0], QD[0]
    shared = robot.caches.get(KERNEL_SCRATCH) or kernel_scratch(robot)  # the look-up inlined: 70 ns less
    out = _zeros(shared.coriolis_shape)  # written by the kernel itself: fresh outputs without a copy
    status = compiled.coriolis_matrix(shared.core, q, qd, kind, out)
    if status:
        settle(robot, status, compiled.coriolis_matrix, shared.core, q, (("qd", qd),), (kind, out))
    return out[0], out[1], out[2]  # M, Ṁ, C


# ---- Algorithm 2 ---------------------------------------------------------------------------
def christoffel(robot: RobotModel, q, force: bool = False, data: Data | None = None):
    if data is not None:
        try:
            ready = data.robot is robot and data.Gamma is not None
        except AttributeError:
            ready = False
        if not ready:
            check_data(robot, data)
            with_hint(data.ensure_gamma, force)
        if not (type(q) is ND and q.dtype is F64 and q.ndim == 1):
            (q,) = checked(robot, q)
        status = compiled.christoffel(data.core, q, data.gamma_out)
        if status:
            settle(robot, status, compiled.christoffel, data.core, q, (), (data.gamma_out,))
        return data.Gamma
    n = robot.nv
    if not is_vector(q):
        Q, batch = as_states(q, robot.nq, "q", robot.config_names)
        if batch:
            with_hint(check_gamma_bytes, n, Q.shape[0], force)
            check_memory(gamma_bytes_for(n, Q.shape[0]), f"Γ of {Q.shape[0]} states")
            # calloc: pages of structural zeros are never touched
            return run_batch(robot, compiled.christoffel_batch, np.zeros((Q.shape[0], n, n, n)), Q, ())
        q = Q[0]
    with_hint(check_gamma_bytes, n, 1, force)
    check_memory(gamma_bytes_for(n), "Γ")
    G = np.zeros((n, n, n))
    shared = robot.caches.get(KERNEL_SCRATCH) or kernel_scratch(robot)  # the look-up inlined: 70 ns less
    status = compiled.christoffel(shared.core, q, G)
    if status:
        settle(robot, status, compiled.christoffel, shared.core, q, (), (G,))
    return G


def christoffel_slices(robot: RobotModel, q):
    data = Data(robot)
    (q,) = checked(robot, q)
    e = np.zeros(robot.nv)
    for k in range(robot.nv):
        e[:] = 0.0
        e[k] = 1.0
        yield k, coriolis_matrix(robot, q, e, data=data)[2]


# ---- CRBA and RNEA (in body coordinates where they apply: engine/core/engine.hpp chooses) ----------
def mass_matrix(robot: RobotModel, q, data: Data | None = None):
    if data is not None:
        if getattr(data, "robot", None) is not robot:
            check_data(robot, data)
        status = compiled.mass_matrix(data.core, q, data.M_out)
        if status:
            settle(robot, status, compiled.mass_matrix, data.core, q, (), (data.M_out,))
        return data.M
    if not is_vector(q):
        Q, batch = as_states(q, robot.nq, "q", robot.config_names)
        if batch:
            return run_batch(robot, compiled.mass_matrix_batch, np.zeros((Q.shape[0], robot.nv, robot.nv)), Q, ())
        q = Q[0]
    return mass_matrix(robot, q, shared_data(robot)).copy()


def inverse_dynamics(robot: RobotModel, q, qd, qdd, gravity=True, data: Data | None = None):
    if data is not None:
        if getattr(data, "robot", None) is not robot:
            check_data(robot, data)
        g = data.gravity if gravity is True else gravity_of(gravity)
        status = compiled.inverse_dynamics(data.core, q, qd, qdd, g, data.tau_out)
        if status:
            settle(robot, status, compiled.inverse_dynamics, data.core, q, (("qd", qd), ("qdd", qdd)),
                        (g, data.tau_out))
        return data.tau
    if not (is_vector(q) and is_vector(qd) and is_vector(qdd)):
        Q, (QD, QDD), batch = stacked_states(robot, q, ("qd", qd), ("qdd", qdd))
        if batch:
            g = robot.gravity_array if gravity is True else gravity_of(gravity)
            return run_batch(robot, compiled.inverse_dynamics_batch, np.zeros((Q.shape[0], robot.nv)), Q,
                                  (QD, QDD, g), ("qd", QD), ("qdd", QDD))
        q, qd, qdd = Q[0], QD[0], QDD[0]
    return inverse_dynamics(robot, q, qd, qdd, gravity, shared_data(robot)).copy()


def gravity_vector(robot: RobotModel, q, gravity=True, data: Data | None = None):
    if data is not None:
        if getattr(data, "robot", None) is not robot:
            check_data(robot, data)
        g = data.gravity if gravity is True else gravity_of(gravity)
        status = compiled.gravity_vector(data.core, q, g, data.g_out)
        if status:
            settle(robot, status, compiled.gravity_vector, data.core, q, (), (g, data.g_out))
        return data.g
    if not is_vector(q):
        Q, batch = as_states(q, robot.nq, "q", robot.config_names)
        if batch:
            g = robot.gravity_array if gravity is True else gravity_of(gravity)
            return run_batch(robot, compiled.gravity_vector_batch, np.zeros((Q.shape[0], robot.nv)), Q, (g,))
        q = Q[0]
    return gravity_vector(robot, q, gravity, shared_data(robot)).copy()


# ---- Algorithm 4's momentum terms (core/momentum.hpp) ----------------------------------------
def _momentum(robot: RobotModel, q, qd, data, which: int):
    """p (which 0) or Cᵀq̇ (which 1): one state, with or without data=, or a batch."""
    if data is not None:
        if getattr(data, "robot", None) is not robot:
            check_data(robot, data)
        status = compiled.momentum(data.core, q, qd, data.p_out, data.ct_out)
        if status:
            settle(robot, status, compiled.momentum, data.core, q, (("qd", qd),), (data.p_out, data.ct_out))
        return data.p if which == 0 else data.CTqd
    n = robot.nv
    if not (is_vector(q) and is_vector(qd)):
        Q, (QD,), batch = stacked_states(robot, q, ("qd", qd))
        if batch:
            return run_batch(robot, compiled.momentum_batch, np.zeros((Q.shape[0], 2, n)), Q, (QD,),
                                  ("qd", QD))[:, which].copy()
        q, qd = Q[0], QD[0]
    shared = robot.caches.get(KERNEL_SCRATCH) or kernel_scratch(robot)
    out = _zeros((2, n))
    status = compiled.momentum(shared.core, q, qd, out[0], out[1])
    if status:
        settle(robot, status, compiled.momentum, shared.core, q, (("qd", qd),), (out[0], out[1]))
    return out[which]


def generalized_momentum(robot: RobotModel, q, qd, data: Data | None = None):
    return _momentum(robot, q, qd, data, 0)


def coriolis_transpose_velocity(robot: RobotModel, q, qd, data: Data | None = None):
    return _momentum(robot, q, qd, data, 1)


def momentum_regressors(robot: RobotModel, q, qd, gravity=True):
    """(Y_p, Y_c, Y_g, Y_T, Y_V̇) at one state or a batch (core/momentum.hpp);
    Y_V̇ = q̇ᵀ Y_g, so that Y_V̇ θ = q̇ᵀg."""
    g = robot.gravity_array if gravity is True else gravity_of(gravity)
    n, width = robot.nv, N_PARAMETERS * robot.n_bodies
    if not is_vector(q):
        Q, (QD,), batch = stacked_states(robot, q, ("qd", qd))
        if batch:
            out = run_batch(robot, compiled.momentum_regressor_batch, np.zeros((Q.shape[0], 3 * n + 1, width)), Q,
                                 (QD, g), ("qd", QD))
            Yg = out[:, 2 * n : 3 * n]
            return MomentumRegressors(out[:, :n], out[:, n : 2 * n], Yg, out[:, 3 * n], np.einsum("kr,krc->kc", QD, Yg))
    q, qd = checked(robot, q, ("qd", qd))
    Yp, Yc, Yg, YT = np.zeros((n, width)), np.zeros((n, width)), np.zeros((n, width)), np.zeros(width)
    data = shared_data(robot)
    status = compiled.momentum_regressors(data.core, q, qd, g, Yp, Yc, Yg, YT)
    if status:
        settle(robot, status, compiled.momentum_regressors, data.core, q, (("qd", qd),), (g, Yp, Yc, Yg, YT))
    return MomentumRegressors(Yp, Yc, Yg, YT, qd @ Yg)


def trajectory_dynamics(robot: RobotModel, Q, QD, QDD=None, gravity=True):
    """(K, QUANTITIES nv + 2): g, C q̇, Cᵀq̇, p, τ (NaN without q̈), T and V of K samples, in
    parallel; V = −gᵀ Σ m_i c_i in the world frame."""
    g = robot.gravity_array if gravity is True else gravity_of(gravity)
    Q, (QD,), _ = stacked_states(robot, Q, ("qd", QD))
    use_qdd = QDD is not None
    # without q̈ the kernel's q̈ terms are computed and discarded (τ is NaN): q̇ stands in for it,
    # as fresh zeros would cost a page fault per 4 KiB
    QDD = velocities_of(robot, QDD, "qdd", Q.shape[0]) if use_qdd else QD
    n = robot.nv
    out = run_batch(robot, compiled.trajectory_batch, np.empty((Q.shape[0], QUANTITIES * n + 2)), Q,
                         (QD, QDD, use_qdd, g), ("qd", QD), ("qdd", QDD))
    out[:, -1] += potential_offset(robot, Q, g)
    return out


def potential_offset(robot: RobotModel, Q, g) -> np.ndarray:
    """−M gᵀ o: the potential energy the computation frame's origin o adds (the first root joint's
    place; for a free root, the base's position in the world, which moves)."""
    root = robot.bodies[0].joint
    if robot.arrays.ints[0, 1] == FREE_CODE:
        qs = int(robot.q_start[0])
        origin = np.asarray(root.translation) + Q[:, qs : qs + 3] @ np.asarray(root.rotation).T
    else:
        origin = np.broadcast_to(np.asarray(root.translation, float), (Q.shape[0], 3))
    return -robot.total_mass * (origin @ np.asarray(g, float))


def placements(robot: RobotModel, q):
    """Every body's placement and every DoF's motion subspace in the computation frame (world axes
    at the first root joint; for a floating base, the base frame at this instant), fresh arrays:
    R (N, 3, 3) and p (N, 3) with a point x of body i at p_i + R_i x, and S (nv, 6) = [ω; v_O] per
    unit joint velocity. Loop closures (engine.loops) are built from these."""
    R, p, S = np.zeros((robot.n_bodies, 3, 3)), np.zeros((robot.n_bodies, 3)), np.zeros((robot.nv, 6))
    data = shared_data(robot)
    status = compiled.placements(data.core, q, R, p, S)
    if status:
        settle(robot, status, compiled.placements, data.core, q, (), (R, p, S))
    return R, p, S


# ---- control: forward dynamics, Slotine–Li -------------------------------------------------
def forward_dynamics(robot: RobotModel, q, qd, tau, gravity=True, data: Data | None = None):
    if data is not None:
        if getattr(data, "robot", None) is not robot:
            check_data(robot, data)
        g = data.gravity if gravity is True else gravity_of(gravity)
        status = compiled.forward_dynamics(data.core, q, qd, tau, g, data.qdd_out)
        if status:
            settle(robot, status, compiled.forward_dynamics, data.core, q, (("qd", qd), ("tau", tau)),
                        (g, data.qdd_out))
        return data.qdd
    g = robot.gravity_array if gravity is True else gravity_of(gravity)
    if not (is_vector(q) and is_vector(qd) and is_vector(tau)):
        Q, (QD, TAU), batch = stacked_states(robot, q, ("qd", qd), ("tau", tau))
        if batch:
            return run_batch(robot, compiled.forward_dynamics_batch, np.zeros((Q.shape[0], robot.nv)), Q,
                                  (QD, TAU, g), ("qd", QD), ("tau", TAU))
        q, qd, tau = Q[0], QD[0], TAU[0]
    return forward_dynamics(robot, q, qd, tau, gravity, shared_data(robot)).copy()


def slotine_li(robot: RobotModel, q, qd, qd_r, qdd_r, theta=None, gravity=True, factorization: str = DEFAULT_FACTORIZATION,
               data: Data | None = None):
    g = robot.gravity_array if gravity is True else gravity_of(gravity)
    if theta is None:
        th = MODEL_THETA
    else:  # length, stride and finiteness are checked in the core; length zero would mean the model's
        th = theta if is_vector(theta) and theta.size else check_parameters(robot, theta)
    kind = CHRISTOFFEL if factorization == "christoffel" else factorization_code(factorization)
    fresh = data is None
    if fresh:
        data = shared_data(robot)
    elif getattr(data, "robot", None) is not robot:
        check_data(robot, data)
    status = compiled.slotine_li(data.core, q, qd, qd_r, qdd_r, g, th, kind, data.tau_out)
    if status == RECHECK and theta is not None:  # θ of another length, a stride or not finite
        th = check_parameters(robot, theta)  # its message, or a contiguous copy
        status = compiled.slotine_li(data.core, q, qd, qd_r, qdd_r, g, th, kind, data.tau_out)
    if status:
        settle(robot, status, compiled.slotine_li, data.core, q, (("qd", qd), ("qd_r", qd_r), ("qdd_r", qdd_r)),
                    (g, th, kind, data.tau_out))
    return data.tau.copy() if fresh else data.tau


def _states(robot, gravity, factorization, q, qd, qd_r, qdd_r):
    g = robot.gravity_array if gravity is True else gravity_of(gravity)
    kind = factorization_code(factorization)
    if not (is_vector(q) and is_vector(qd) and is_vector(qd_r) and is_vector(qdd_r)):
        q, qd, qd_r, qdd_r = checked(robot, q, ("qd", qd), ("qd_r", qd_r), ("qdd_r", qdd_r))
    return g, kind, q, qd, qd_r, qdd_r


def regressor(robot: RobotModel, q, qd, qd_r, qdd_r, gravity=True, factorization: str = DEFAULT_FACTORIZATION):
    if not is_vector(q):
        Q, (QD, QDR, QDDR), batch = stacked_states(robot, q, ("qd", qd), ("qd_r", qd_r), ("qdd_r", qdd_r))
        if batch:
            g = robot.gravity_array if gravity is True else gravity_of(gravity)
            out = np.zeros((Q.shape[0], robot.nv, N_PARAMETERS * robot.n_bodies))
            return run_batch(robot, compiled.regressor_batch, out, Q, (QD, QDR, QDDR, g, factorization_code(factorization)),
                                  ("qd", QD), ("qd_r", QDR), ("qdd_r", QDDR))
    g, kind, q, qd, qd_r, qdd_r = _states(robot, gravity, factorization, q, qd, qd_r, qdd_r)
    Y = np.zeros((robot.nv, N_PARAMETERS * robot.n_bodies))
    Yts = np.zeros(N_PARAMETERS * robot.n_bodies)
    shared = robot.caches.get(KERNEL_SCRATCH) or kernel_scratch(robot)  # the look-up inlined: 70 ns less
    status = compiled.regressor(shared.core, q, qd, qd_r, qdd_r, g, kind, Y, Yts)
    if status:
        settle(robot, status, compiled.regressor, shared.core, q, (("qd", qd), ("qd_r", qd_r), ("qdd_r", qdd_r)),
                    (g, kind, Y, Yts))
    return Y


def adaptation_gradient(robot: RobotModel, q, qd, qd_r, qdd_r, gravity=True, factorization: str = DEFAULT_FACTORIZATION):
    g, kind, q, qd, qd_r, qdd_r = _states(robot, gravity, factorization, q, qd, qd_r, qdd_r)
    Yts = np.zeros(N_PARAMETERS * robot.n_bodies)
    shared = robot.caches.get(KERNEL_SCRATCH) or kernel_scratch(robot)  # the look-up inlined: 70 ns less
    status = compiled.adaptation_gradient(shared.core, q, qd, qd_r, qdd_r, g, kind, Yts)
    if status:
        settle(robot, status, compiled.adaptation_gradient, shared.core, q,
                    (("qd", qd), ("qd_r", qd_r), ("qdd_r", qdd_r)), (g, kind, Yts))
    return Yts
