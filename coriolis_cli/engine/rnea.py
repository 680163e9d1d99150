"""Recursive Newton-Euler inverse dynamics (Featherstone ch. 5), world-frame form.

a_0 = −g, a_i = a_p(i) + S_i q̈_i + Ṡ_i q̇_i, f_i = I_i a_i + v_i ×* I_i v_i, τ_i = S_iᵀ f_i,
f_p(i) += f_i. With a floating base the computation frame is the base frame, so gravity is
rotated into it with the base quaternion (joints.root_acceleration).
"""

from __future__ import annotations

from numba import njit

from .joints import add_armature, failed, load_state, root_acceleration
from .kinematics import body_velocities, forward_kinematics, views
from .spatial import crf_vec, dot6, matvec6


@njit(cache=True)
def accelerations(model, S, Sd, qd, qdd, a0, a):
    """a_i = a_p(i) + S_i q̈_i + Ṡ_i q̇_i, from a_0 at the roots."""
    ints, cols = model.ints, model.cols
    for c in range(cols.shape[0]):
        b = cols[c, 0]
        if c == 0 or cols[c - 1, 0] != b:
            p = ints[b, 0]
            for r in range(6):
                a[b, r] = a[p, r] if p >= 0 else a0[r]
        for r in range(6):
            a[b, r] += S[c, r] * qdd[c] + Sd[c, r] * qd[c]


@njit(cache=True)
def inertial_forces(IC, v, a, f, h, g):
    """f_i = I_i a_i + v_i ×* I_i v_i (h, g: 6-vector scratch)."""
    for i in range(IC.shape[0]):
        matvec6(IC[i], a[i], f[i])
        matvec6(IC[i], v[i], h)
        crf_vec(v[i], h, g)
        for r in range(6):
            f[i, r] += g[r]


@njit(cache=True)
def joint_torques(model, S, f, tau):
    """τ_i = S_iᵀ Σ_{j ⪰ i} f_j: each body's force added to its parent's once its columns are done."""
    ints, cols = model.ints, model.cols
    for j in range(cols.shape[0] - 1, -1, -1):
        b = cols[j, 0]
        tau[j] = dot6(S[j], f[b])
        if cols[j, 1] < 0 or cols[cols[j, 1], 0] != b:
            p = ints[b, 0]
            if p >= 0:
                for r in range(6):
                    f[p, r] += f[b, r]


@njit(cache=True)
def rnea_kernel(model, data, q, qd, qdd, gravity, tau):
    """τ into ``tau`` (data.tau, or data.g for g(q)); returns a status code (engine.joints)."""
    ints, cols = model.ints, model.cols
    N = ints.shape[0]
    n = cols.shape[0]
    qn = data.q
    status = load_state(model, q, qn, qd, qdd, qdd, 2)
    if failed(status):
        return status
    X, S, Sd, v, IC, BC, a, f, F, T, G = views(data, N, n)
    forward_kinematics(model, qn, X, S, IC, T)
    body_velocities(model, S, qd, v, Sd)
    a0 = F[0]
    root_acceleration(model, qn, gravity, a0)  # a_0 = −g, in the computation frame
    accelerations(model, S, Sd, qd, qdd, a0, a)
    inertial_forces(IC, v, a, f, F[1], F[2])
    joint_torques(model, S, f, tau)
    add_armature(model, qdd, tau)
    return status
