"""Safeea, Neto & Bearee (2019): Christoffel symbols of serial revolute chains by a backward
recursion of forces and moments ("frame injection"). An O(n³) method that shares nothing with
Algorithm 2: plain 3D vectors, homogeneous transforms, inertias about the centres of mass.

Their c^k_ji (torque at joint k per unit q̇_j q̇_i) is our Γ[k, j, i]. For j < i, with unit rates at
joints j and i (j before i), link l ⪰ i carries half the Coriolis force and moment

    f = m_l k_j × (k_i × p_Cli)            (eq. 27)
    h = ½ (L_l k_j) × k_i,  L_l = tr(I_l) 1 − 2 I_l      (eqs. 16, 26)

and for j = i the centrifugal force m_l k_j × (k_j × p_Clj) and moment ½ (L_l k_j) × k_j.
Sums run from the tip: F^k = F^{k+1} + f^k, H^k = H^{k+1} + h^k + p_Ckk × f^k + l_k × F^{k+1},
and c^k_ji = k_kᵀ H^k (eqs. 28-30), all in world coordinates.
"""

from __future__ import annotations

import numpy as np

from ..model.geometry import axis_angle
from ..model.tree import RobotModel


def is_serial_revolute(robot: RobotModel) -> bool:
    return all(b.parent == i - 1 and b.joint.type in ("revolute", "continuous") for i, b in enumerate(robot.bodies))


def _world_geometry(robot: RobotModel, q: np.ndarray):
    """Joint axes k, joint origins o, COMs c, masses m and world inertias about the COM."""
    n = robot.n_bodies
    k, o, c = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3))
    m, I = np.zeros(n), np.zeros((n, 3, 3))
    T = np.eye(4)
    for i, b in enumerate(robot.bodies):
        J = np.eye(4)
        J[:3, :3], J[:3, 3] = b.joint.rotation, b.joint.translation
        T = T @ J  # joint frame
        k[i] = T[:3, :3] @ b.joint.axis
        o[i] = T[:3, 3]
        Q = np.eye(4)
        Q[:3, :3] = axis_angle(b.joint.axis, q[i])
        T = T @ Q  # link frame
        c[i] = T[:3, :3] @ b.com + T[:3, 3]
        m[i] = b.mass
        I[i] = T[:3, :3] @ b.inertia @ T[:3, :3].T
    return k, o, c, m, I


def christoffel_safeea(robot: RobotModel, q: np.ndarray) -> np.ndarray:
    """Γ (n x n x n) of a fixed-base serial chain of revolute joints."""
    if not is_serial_revolute(robot):
        raise ValueError("the Safeea recursion covers fixed-base serial chains of revolute joints")
    n = robot.n_bodies
    k, o, c, m, I = _world_geometry(robot, np.asarray(q, dtype=float))
    L = np.trace(I, axis1=1, axis2=2)[:, None, None] * np.eye(3) - 2.0 * I
    lever = np.zeros((n, 3))  # l_k: from joint k to joint k+1
    lever[:-1] = o[1:] - o[:-1]
    pCkk = c - o
    G = np.zeros((n, n, n))
    for j in range(n):
        for i in range(j, n):
            links = np.arange(i, n)
            p = c[links] - o[i]
            if i == j:
                f = m[links, None] * np.cross(k[j], np.cross(k[j], p))
            else:
                f = m[links, None] * np.cross(k[j], np.cross(k[i], p))
            h = 0.5 * np.cross(L[links] @ k[j], k[i])
            F = np.zeros(3)
            H = np.zeros(3)
            for kk in range(n - 1, -1, -1):
                Hn = H + np.cross(lever[kk], F)
                if kk >= i:
                    fl, hl = f[kk - i], h[kk - i]
                    H = Hn + hl + np.cross(pCkk[kk], fl)
                    F = F + fl
                else:
                    H = Hn
                G[kk, j, i] = G[kk, i, j] = k[kk] @ H
    return G
