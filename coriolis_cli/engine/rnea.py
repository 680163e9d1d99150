"""Recursive Newton-Euler inverse dynamics (Featherstone ch. 5), world-frame form.

a_0 = −g, a_i = a_p(i) + S_i q̈_i + Ṡ_i q̇_i, f_i = I_i a_i + v_i ×* I_i v_i, τ_i = S_iᵀ f_i,
f_p(i) += f_i. With a floating base the computation frame is the base frame, so gravity is
rotated into it with the base quaternion (joints.root_acceleration).
"""

from __future__ import annotations

from numba import njit, prange

from .data import G_, TAU_, ZERO_, kernel_data, unpack
from .armature import add_armature_force
from .jit import helper
from .joints import failed, root_acceleration
from .kinematics import forward_pass, views
from .spatial import crf_vec, dot6, matvec6


@helper
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


@helper
def inertial_forces(IC, v, a, f, h, g):
    """f_i = I_i a_i + v_i ×* I_i v_i (h, g: 6-vector scratch)."""
    for i in range(IC.shape[0]):
        matvec6(IC[i], a[i], f[i])
        matvec6(IC[i], v[i], h)
        crf_vec(v[i], h, g)
        for r in range(6):
            f[i, r] += g[r]


@helper
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


@helper
def rnea_kernel(model, data, q, qd, qdd, gravity, tau):
    """τ into ``tau`` (data.tau, or data.g for g(q)); returns a status code (engine.joints)."""
    ints, cols = model.ints, model.cols
    N = ints.shape[0]
    n = cols.shape[0]
    status = forward_pass(model, data, q, qd, qdd, qdd, 2)
    if failed(status):
        return status
    parts = views(data, N, n)
    S, Sd, v, IC, a, f, F = parts.S, parts.Sd, parts.v, parts.IC, parts.a, parts.f, parts.F
    a0 = F[0]
    root_acceleration(model, data.q, gravity, a0)  # a_0 = −g, in the computation frame
    accelerations(model, S, Sd, qd, qdd, a0, a)
    inertial_forces(IC, v, a, f, F[1], F[2])
    joint_torques(model, S, f, tau)
    add_armature_force(model, data.q, qd, qdd, qd, tau, parts.T[0])
    return status


# ---- as Python and the batches call it (engine.data: a Data's two flat arrays, unpacked at no cost) ----
@njit(cache=True)
def inverse_dynamics_entry(ints, floats, q, qd, qdd, gravity):
    model, data = unpack(ints, floats)
    return rnea_kernel(model, data, q, qd, qdd, gravity, data.vectors[TAU_])


@njit(cache=True)
def gravity_vector_entry(ints, floats, q, gravity):
    model, data = unpack(ints, floats)
    zero = data.vectors[ZERO_]
    return rnea_kernel(model, data, q, zero, zero, gravity, data.vectors[G_])


@njit(cache=True, parallel=True)
def rnea_batch(model, Q, QD, QDD, gravity, nc, tau, status):
    K = Q.shape[0]
    for t in prange(nc):
        d = kernel_data(Q.shape[1], model.cols.shape[0], model.ints.shape[0])
        for s in range(t * K // nc, (t + 1) * K // nc):
            status[s] = rnea_kernel(model, d, Q[s], QD[s], QDD[s], gravity, tau[s])
