"""Finite-difference references for Ṁ and Γ, independent of Algorithms 1 and 2.

Central differences with Richardson extrapolation, D = (4 D(h/2) − D(h)) / 3, whose error is
O(h⁴) + O(ε/h): with joints moving h = 1e-3 rad both terms sit near 1e-12 relative in float64. Motion of a free
joint follows the exponential map of ν (position in the base frame, quaternion on the right).
"""

from __future__ import annotations

import numpy as np

from ..model.tree import RobotModel

DEFAULT_STEP = 1e-3


def integrate(robot: RobotModel, q: np.ndarray, v: np.ndarray, t: float) -> np.ndarray:
    """q ⊕ (v t), each joint moved by its own rule (see coriolis_cli.model.joints); a robot in other
    coordinates moves its tree by A v (the engine evaluates A)."""
    from .. import engine

    return engine.integrate(robot, q, v, t)


def _richardson(fun, h):
    d1 = (fun(h) - fun(-h)) / (2 * h)
    d2 = (fun(h / 2) - fun(-h / 2)) / h
    return (4 * d2 - d1) / 3


def mdot_fd(robot: RobotModel, mass_matrix, q, v, h: float = DEFAULT_STEP) -> np.ndarray:
    """d/dt M(q(t)) along q̇ = v, by differences of M (time step scaled so joints move ≤ h rad)."""
    h = h / max(1.0, float(np.max(np.abs(v))))
    return _richardson(lambda t: mass_matrix(robot, integrate(robot, q, v, t)), h)


def dM_dq(robot: RobotModel, mass_matrix, q, h: float = DEFAULT_STEP) -> np.ndarray:
    """∂M/∂q_k stacked on the last axis (coordinates of 1-DoF joints only)."""
    n = robot.nv
    E = np.eye(n)
    return np.stack([mdot_fd(robot, mass_matrix, q, E[k], h) for k in range(n)], axis=2)


def christoffel_fd(robot: RobotModel, mass_matrix, q, h: float = DEFAULT_STEP) -> np.ndarray:
    """Eq. (4): Γ_ijk = ½ (∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i), from differences of M."""
    D = dM_dq(robot, mass_matrix, q, h)  # D[i, j, k] = ∂M_ij/∂q_k
    return 0.5 * (D + np.transpose(D, (0, 2, 1)) - np.transpose(D, (2, 0, 1)))
