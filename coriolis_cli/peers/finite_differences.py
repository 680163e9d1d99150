"""Finite-difference references for Ṁ and Γ, independent of Algorithms 1 and 2.

Central differences with Richardson extrapolation, D = (4 D(h/2) − D(h)) / 3, whose error is
O(h⁴) + O(ε/h): with joints moving h = 1e-3 rad both terms sit near 1e-12 relative in float64. Motion of a free
joint follows the exponential map of ν (position in the base frame, quaternion on the right).
"""

from __future__ import annotations

import numpy as np

from ..model.geometry import quat_to_matrix
from ..model.tree import FREE, RobotModel

DEFAULT_STEP = 1e-3


def _quat_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ]
    )


def _exp_se3(v, w):
    """Exponential of the body twist (v, ω): rotation as a quaternion and translation, in the body frame."""
    th = np.linalg.norm(w)
    W = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    if th < 1e-12:
        V = np.eye(3) + 0.5 * W
        quat = np.array([0.5 * w[0], 0.5 * w[1], 0.5 * w[2], 1.0])
    else:
        V = np.eye(3) + (1 - np.cos(th)) / th**2 * W + (th - np.sin(th)) / th**3 * W @ W
        s = np.sin(th / 2) / th
        quat = np.array([s * w[0], s * w[1], s * w[2], np.cos(th / 2)])
    return quat / np.linalg.norm(quat), V @ v


def integrate(robot: RobotModel, q: np.ndarray, v: np.ndarray, t: float) -> np.ndarray:
    """q ⊕ (v t): joint angles add, a free joint moves along the exponential map of its body twist."""
    f = robot.flat
    out = np.array(q, dtype=float)
    for i in range(robot.n_bodies):
        qs, vs = int(f.q_start[i]), int(f.v_start[i])
        if f.jtype[i] == FREE:
            quat = out[qs + 3 : qs + 7]
            dq, dp = _exp_se3(v[vs : vs + 3] * t, v[vs + 3 : vs + 6] * t)
            out[qs : qs + 3] = out[qs : qs + 3] + quat_to_matrix(quat) @ dp
            out[qs + 3 : qs + 7] = _quat_mul(quat, dq)
        else:
            out[qs] += v[vs] * t
    return out


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
