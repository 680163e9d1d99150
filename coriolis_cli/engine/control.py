"""Public functions for control: forward dynamics, the Slotine–Li torque, its regressor and the
adaptation term. Same conventions as engine.api: one state or (forward dynamics) a batch, and
``data=`` to reuse a workspace's buffers and outputs."""

from __future__ import annotations

import numpy as np

from ..model.parameters import N_PARAMETERS, check_parameters
from ..model.tree import RobotModel
from . import entry
from .calls import (F64, ND, Compiled, check_data, checked, factorization_code, gravity_of, is_vector, run_batch,
                    settle, stacked_states)
from .batch import forward_dynamics_batch
from .data import Data
from .joints import RECHECK
from .spatial import CHRISTOFFEL

_FORWARD = Compiled(entry.forward_dynamics)
_SLOTINE_LI = Compiled(entry.slotine_li)
_SLOTINE_LI_MODEL = Compiled(entry.slotine_li_model)
_SLOTINE_LI_ESTIMATE = Compiled(entry.slotine_li_estimate)
_REGRESSOR = Compiled(entry.regressor)
_ADAPTATION = Compiled(entry.adaptation_gradient)
_CHRISTOFFEL_NAME = "christoffel"  # slotine_li's default argument itself (interned): tested with `is`


def _reduced(robot):
    if robot.__class__ is not RobotModel:  # other coordinates (engine.coordinates)
        from . import coordinates

        return coordinates
    return None


def forward_dynamics(robot: RobotModel, q, qd, tau, gravity=True, data: Data | None = None):
    """q̈ = M(q)⁻¹ (τ − C(q, q̇) q̇ − g(q)): CRBA, then M = LᵀDL factored along the tree with its
    branch-induced sparsity (engine.forward_dynamics). With ``data=`` the result is ``data.qdd``
    (and ``data.M`` holds M(q)). Batches: q, qd, tau of shape (K, ·)."""
    other = _reduced(robot)
    if other is not None:
        return other.forward_dynamics(robot, q, qd, tau, gravity, data)
    g = robot.gravity_array if gravity is True else gravity_of(gravity)
    if data is not None:
        if getattr(data, "robot", None) is not robot:
            check_data(robot, data)
        if not (type(q) is ND and type(qd) is ND and type(tau) is ND and q.dtype is F64 and qd.dtype is F64
                and tau.dtype is F64 and q.ndim == 1 and qd.ndim == 1 and tau.ndim == 1):
            q, qd, tau = checked(robot, q, ("qd", qd), ("tau", tau))
        status = _FORWARD.call(data.ints, data.floats, q, qd, tau, g)
        if status:
            settle(robot, status, _FORWARD, data, q, (("qd", qd), ("tau", tau)), (g,))
        return data.qdd
    if not (is_vector(q) and is_vector(qd) and is_vector(tau)):
        Q, (QD, TAU), batch = stacked_states(robot, q, ("qd", qd), ("tau", tau))
        if batch:
            return run_batch(robot, forward_dynamics_batch, np.zeros((Q.shape[0], robot.nv)), Q, (QD, TAU, g), ("qd", QD),
                          ("tau", TAU))
        q, qd, tau = Q[0], QD[0], TAU[0]
    return forward_dynamics(robot, q, qd, tau, gravity, robot.shared_data).copy()


def slotine_li(robot: RobotModel, q, qd, qd_r, qdd_r, theta=None, gravity=True, factorization: str = "christoffel",
               data: Data | None = None):
    """τ = M(q) q̈_r + C(q, q̇) q̇_r + g(q) by the O(N) recursion of Wensing–Slotine Alg. 3, never
    forming C. ``theta`` (10 per body, see inertial_parameters) replaces the model's inertial
    parameters, e.g. an adaptive controller's estimate. ``factorization``: ``christoffel`` (the
    Christoffel-consistent C) or ``featherstone`` (admissible only). With ``data=`` the result
    is ``data.tau``."""
    if robot.__class__ is not RobotModel:  # other coordinates (engine.coordinates)
        return _reduced(robot).slotine_li(robot, q, qd, qd_r, qdd_r, theta, gravity, factorization, data)
    if (gravity is True and factorization is _CHRISTOFFEL_NAME and data is not None
            and type(q) is ND and type(qd) is ND and type(qd_r) is ND and type(qdd_r) is ND and q.dtype is F64
            and qd.dtype is F64 and qd_r.dtype is F64 and qdd_r.dtype is F64 and q.ndim == 1 and qd.ndim == 1
            and qd_r.ndim == 1 and qdd_r.ndim == 1 and getattr(data, "robot", None) is robot and data.control_entry):
        # the control-loop call (a workspace, float64 vectors, the model's parameters or an
        # estimate): straight to the kernel; anything it reports is sorted out below
        if theta is None:
            if not _SLOTINE_LI_MODEL.call(data.ints, data.floats, q, qd, qd_r, qdd_r):
                return data.tau
        elif type(theta) is ND and theta.dtype is F64 and theta.ndim == 1:
            if not _SLOTINE_LI_ESTIMATE.call(data.ints, data.floats, q, qd, qd_r, qdd_r, theta):
                return data.tau
    g = robot.gravity_array if gravity is True else gravity_of(gravity)
    if theta is None:
        th = entry.MODEL_THETA
    else:  # length, stride and finiteness are checked in the kernel; length zero would mean the model's
        th = theta if is_vector(theta) and theta.size else check_parameters(robot, theta)
    kind = CHRISTOFFEL if factorization == "christoffel" else factorization_code(factorization)
    fresh = data is None
    if fresh:
        data = robot.shared_data
    elif getattr(data, "robot", None) is not robot:
        check_data(robot, data)
    if not (is_vector(q) and is_vector(qd) and is_vector(qd_r) and is_vector(qdd_r)):  # the fast path's test, above
        q, qd, qd_r, qdd_r = checked(robot, q, ("qd", qd), ("qd_r", qd_r), ("qdd_r", qdd_r))
    status = _SLOTINE_LI.call(data.ints, data.floats, q, qd, qd_r, qdd_r, g, th, kind)
    if status == RECHECK and theta is not None:  # θ of another length, a stride or not finite
        th = check_parameters(robot, theta)  # its message, or a contiguous copy
        status = _SLOTINE_LI.call(data.ints, data.floats, q, qd, qd_r, qdd_r, g, th, kind)
    if status:
        settle(robot, status, _SLOTINE_LI, data, q, (("qd", qd), ("qd_r", qd_r), ("qdd_r", qdd_r)), (g, th, kind))
    return data.tau.copy() if fresh else data.tau


def _states(robot, gravity, factorization, q, qd, qd_r, qdd_r):
    g = robot.gravity_array if gravity is True else gravity_of(gravity)
    kind = factorization_code(factorization)
    if not (is_vector(q) and is_vector(qd) and is_vector(qd_r) and is_vector(qdd_r)):
        q, qd, qd_r, qdd_r = checked(robot, q, ("qd", qd), ("qd_r", qd_r), ("qdd_r", qdd_r))
    return g, kind, q, qd, qd_r, qdd_r


def regressor(robot: RobotModel, q, qd, qd_r, qdd_r, gravity=True, factorization: str = "christoffel"):
    """Y (nv x 10 N) with Y θ = slotine_li(robot, q, qd, qd_r, qdd_r, θ) for every θ (Wensing–Slotine
    Alg. 4), less the joints' armature, which is no inertial parameter: Y θ + diag(a) q̈_r. At
    qd_r = qd it is Pinocchio's computeJointTorqueRegressor(q, qd, qdd_r)."""
    other = _reduced(robot)
    if other is not None:
        return other.regressor(robot, q, qd, qd_r, qdd_r, gravity, factorization)
    g, kind, q, qd, qd_r, qdd_r = _states(robot, gravity, factorization, q, qd, qd_r, qdd_r)
    Y = np.zeros((robot.nv, N_PARAMETERS * robot.n_bodies))
    Yts = np.zeros(N_PARAMETERS * robot.n_bodies)
    shared = robot.kernel_scratch
    status = _REGRESSOR.call(shared.ints, shared.floats, q, qd, qd_r, qdd_r, g, kind, Y, Yts)
    if status:
        settle(robot, status, _REGRESSOR, shared, q, (("qd", qd), ("qd_r", qd_r), ("qdd_r", qdd_r)), (g, kind, Y, Yts))
    return Y


def adaptation_gradient(robot: RobotModel, q, qd, qd_r, qdd_r, gravity=True, factorization: str = "christoffel"):
    """Yᵀ s with s = q̇ − q̇_r, by the recursion of Alg. 3, line 9 ([Yᵀs]_j = 𝒴_jᵀ (v_j − w_j)),
    without the nv x 10N product: the Slotine–Li update is θ̂̇ = −P Yᵀ s."""
    other = _reduced(robot)
    if other is not None:
        return other.adaptation_gradient(robot, q, qd, qd_r, qdd_r, gravity, factorization)
    g, kind, q, qd, qd_r, qdd_r = _states(robot, gravity, factorization, q, qd, qd_r, qdd_r)
    Yts = np.zeros(N_PARAMETERS * robot.n_bodies)
    shared = robot.kernel_scratch
    status = _ADAPTATION.call(shared.ints, shared.floats, q, qd, qd_r, qdd_r, g, kind, Yts)
    if status:
        settle(robot, status, _ADAPTATION, shared, q, (("qd", qd), ("qd_r", qd_r), ("qdd_r", qdd_r)), (g, kind, Yts))
    return Yts
