"""Wensing–Slotine App. B-B, the part of Algorithm 4 a momentum observer reads: the generalized
momentum p = M q̇ and Cᵀq̇, each by one O(N) recursion that forms neither M nor C; and, for
recordings, every quantity along a trajectory in one pass.

World-frame form (the computation frame): with the body velocities v_i, h_i = I_i v_i and the
subtree momentum H_i = Σ_{j ⪰ i} h_j,

    p_k = S_kᵀ H_b(k),        (Cᵀq̇)_k = Ṡ_kᵀ H_b(k)        (eq. B-B1, Ṡ_k = v_b(k) × S_k)

the second the same for every C with Ṁ = C + Cᵀ (Cᵀq̇ = Ṁq̇ − Cq̇, and Cq̇ is unique). Along a
trajectory the RNEA's three force sums share that pass: f^C_i = I_i a^C_i + v_i ×* h_i with
a^C_i = a^C_p + Ṡ_i q̇_i (C q̇), f^g_i = I_i a_0 with a_0 = −g (g), f^a_i = I_i a^a_i with
a^a_i = a^a_p + S_i q̈_i (M q̈); τ = M q̈ + C q̇ + g. The kinetic energy is ½ q̇ᵀp; the potential
energy −gᵀ Σ m_i c_i is returned in the computation frame (api adds the frame's own height).
The joints' armature is added as engine.armature defines it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .armature import add_armature_force, add_armature_transpose
from .data import CT_, P_, ZERO_, kernel_data, unpack
from .jit import helper
from .joints import failed, root_acceleration
from .kinematics import forward_pass, views
from .rnea import accelerations, joint_torques
from .slotine_li_world import UNIT_PARAMETERS, parameter_inertia
from .spatial import crf_vec, dot6, matvec6


class MomentumRegressors(NamedTuple):
    """Algorithm 4's regressors other than Y (Wensing–Slotine App. B-B): for every θ (10 per body,
    inertial_parameters' order), p θ = M q̇, c θ = Cᵀq̇, g θ = g, T θ = ½ q̇ᵀMq̇ and Vdot θ = q̇ᵀg,
    the joints' armature apart (no inertial parameter)."""

    p: np.ndarray  # (nv, 10 N)
    c: np.ndarray  # (nv, 10 N)
    g: np.ndarray  # (nv, 10 N)
    T: np.ndarray  # (10 N,)
    Vdot: np.ndarray  # (10 N,)


# Columns of a trajectory row: g, C q̇, Cᵀq̇, p, τ (each nv), then T and V (computation frame).
G_COL, CQD_COL, CTQD_COL, P_COL, TAU_COL = 0, 1, 2, 3, 4
QUANTITIES = 5


@helper
def momentum_kernel(model, data, q, qd, p, ct):
    """p = M q̇ into ``p`` and Cᵀq̇ into ``ct``; returns a status code (engine.joints)."""
    status = forward_pass(model, data, q, qd, qd, qd, 1)
    if failed(status):
        return status
    N, n = model.ints.shape[0], model.cols.shape[0]
    parts = views(data, N, n)
    S, Sd, H = parts.S, parts.Sd, parts.f
    for i in range(N):
        matvec6(parts.IC[i], parts.v[i], H[i])
    joint_torques(model, S, H, p)  # p_k = S_kᵀ H, the subtree momenta H summed from the leaves
    for k in range(n):
        ct[k] = dot6(Sd[k], H[model.cols[k, 0]])
    zero = data.vectors[ZERO_]
    add_armature_force(model, data.q, qd, qd, zero, p, parts.T[0])  # M_a q̇
    add_armature_transpose(model, data.q, qd, ct, parts.T[0])
    return status


@helper
def trajectory_kernel(model, data, q, qd, qdd, use_qdd, gravity, row):
    """One sample of a trajectory into ``row`` (QUANTITIES nv + 2): g, C q̇, Cᵀq̇, p, τ (NaN
    without q̈), T and the potential energy in the computation frame. Returns a status code."""
    status = forward_pass(model, data, q, qd, qdd, qdd, 2)
    if failed(status):
        return status
    ints, cols = model.ints, model.cols
    N, n = ints.shape[0], cols.shape[0]
    parts = views(data, N, n)
    S, Sd, v, IC, a, f, F, T = parts.S, parts.Sd, parts.v, parts.IC, parts.a, parts.f, parts.F, parts.T
    a0, h, tmp, rest = F[0], F[1], F[2], F[3]
    root_acceleration(model, data.q, gravity, a0)
    # per body: a^C (velocity products) in a, forces f^C in f, a^a (q̈) in the rows of the
    # Slotine–Li reference velocities, and in the unused composite Coriolis factors BC the
    # momenta (row 0), f^g (row 1) and f^a (row 2)
    aq = data.rows[2 * n + 3 * N : 2 * n + 4 * N]
    BC = parts.BC
    Hm, fg, fa = BC[:, 0], BC[:, 1], BC[:, 2]
    zero = data.vectors[ZERO_]
    for r in range(6):
        rest[r] = 0.0
    accelerations(model, S, Sd, qd, zero, rest, a)  # a^C from rest, without q̈
    accelerations(model, S, Sd, zero, qdd, rest, aq)  # a^a: q̈ alone
    mc0 = 0.0
    mc1 = 0.0
    mc2 = 0.0
    for i in range(N):
        matvec6(IC[i], v[i], h)
        for r in range(6):
            Hm[i, r] = h[r]
        matvec6(IC[i], a[i], f[i])
        crf_vec(v[i], h, tmp)
        for r in range(6):
            f[i, r] += tmp[r]
        matvec6(IC[i], a0, fg[i])
        matvec6(IC[i], aq[i], fa[i])
        # m c in the computation frame, from the world-frame inertia's m [c]× block
        mc0 += IC[i, 2, 4]
        mc1 += IC[i, 0, 5]
        mc2 += IC[i, 1, 3]
    # the RNEA's backward sweep for each force sum; the subtree momenta then give Cᵀq̇ as well
    joint_torques(model, S, fg, row[G_COL * n : (G_COL + 1) * n])
    joint_torques(model, S, f, row[CQD_COL * n : (CQD_COL + 1) * n])
    joint_torques(model, S, Hm, row[P_COL * n : (P_COL + 1) * n])
    joint_torques(model, S, fa, row[TAU_COL * n : (TAU_COL + 1) * n])
    for j in range(n):
        row[CTQD_COL * n + j] = dot6(Sd[j], Hm[cols[j, 0]])
    W = T[0]
    add_armature_force(model, data.q, qd, zero, qd, row[CQD_COL * n : (CQD_COL + 1) * n], W)  # C_a q̇
    add_armature_transpose(model, data.q, qd, row[CTQD_COL * n : (CTQD_COL + 1) * n], W)
    add_armature_force(model, data.q, qd, qd, zero, row[P_COL * n : (P_COL + 1) * n], W)  # M_a q̇
    add_armature_force(model, data.q, qd, qdd, zero, row[TAU_COL * n : (TAU_COL + 1) * n], W)  # M_a q̈
    kinetic = 0.0
    for j in range(n):
        kinetic += 0.5 * qd[j] * row[P_COL * n + j]
        if use_qdd:
            row[TAU_COL * n + j] += row[CQD_COL * n + j] + row[G_COL * n + j]
        else:
            row[TAU_COL * n + j] = np.nan
    row[QUANTITIES * n] = kinetic
    row[QUANTITIES * n + 1] = a0[3] * mc0 + a0[4] * mc1 + a0[5] * mc2
    return status


@helper
def momentum_regressor_kernel(model, data, q, qd, gravity, Yp, Yc, Yg, YT):
    """Algorithm 4's other regressors (App. B-B), column 10 j + k for the k-th unit parameter of
    body j (I_jk its inertia, h = I_jk v_j): Y_p = S_cᵀh, Y_c = Ṡ_cᵀh, Y_g = S_cᵀ I_jk a_0 for the
    DoF c that support body j, Y_T = ½ v_jᵀh; so that Y_p θ = p, Y_c θ = Cᵀq̇, Y_g θ = g and
    Y_T θ = T, the armature apart. Returns a status code."""
    status = forward_pass(model, data, q, qd, qd, qd, 1)
    if failed(status):
        return status
    ints, cols = model.ints, model.cols
    N, n = ints.shape[0], cols.shape[0]
    parts = views(data, N, n)
    X, S, Sd, v, F, T = parts.X, parts.S, parts.Sd, parts.v, parts.F, parts.T
    a0, h, fg = F[0], F[1], F[2]
    root_acceleration(model, data.q, gravity, a0)
    Ik = T[1]
    for j in range(N):
        last = (ints[j + 1, 3] if j + 1 < N else n) - 1  # body j's last column
        for k in range(UNIT_PARAMETERS.shape[0]):
            parameter_inertia(UNIT_PARAMETERS[k], 0, X, j, Ik)
            matvec6(Ik, v[j], h)
            matvec6(Ik, a0, fg)
            col = UNIT_PARAMETERS.shape[0] * j + k
            YT[col] = 0.5 * dot6(v[j], h)
            c = last
            while c >= 0:  # every DoF that supports body j
                Yp[c, col] = dot6(S[c], h)
                Yc[c, col] = dot6(Sd[c], h)
                Yg[c, col] = dot6(S[c], fg)
                c = cols[c, 1]
    return status


# ---- as Python and the batches call it (engine.data: a Data's two flat arrays, unpacked at no cost) ----
@njit(cache=True)
def momentum_entry(ints, floats, q, qd):
    model, data = unpack(ints, floats)
    return momentum_kernel(model, data, q, qd, data.vectors[P_], data.vectors[CT_])


@njit(cache=True)
def momentum_into_entry(ints, floats, q, qd, p, ct):
    model, data = unpack(ints, floats)
    return momentum_kernel(model, data, q, qd, p, ct)


@njit(cache=True)
def momentum_regressor_entry(ints, floats, q, qd, gravity, Yp, Yc, Yg, YT):
    model, data = unpack(ints, floats)
    return momentum_regressor_kernel(model, data, q, qd, gravity, Yp, Yc, Yg, YT)


@njit(cache=True, parallel=True)
def momentum_batch(model, Q, QD, nc, out, status):
    """out: (K, 2, nv), p and Cᵀq̇ of each state."""
    K = Q.shape[0]
    for t in prange(nc):
        d = kernel_data(Q.shape[1], model.cols.shape[0], model.ints.shape[0])
        for s in range(t * K // nc, (t + 1) * K // nc):
            status[s] = momentum_kernel(model, d, Q[s], QD[s], out[s, 0], out[s, 1])


@njit(cache=True, parallel=True)
def momentum_regressor_batch(model, Q, QD, gravity, nc, out, status):
    """out: (K, 3 nv + 1, 10 N), zeroed: the rows Y_p, Y_c, Y_g, then Y_T, of each state."""
    K = Q.shape[0]
    n = model.cols.shape[0]
    for t in prange(nc):
        d = kernel_data(Q.shape[1], n, model.ints.shape[0])
        for s in range(t * K // nc, (t + 1) * K // nc):
            o = out[s]
            status[s] = momentum_regressor_kernel(model, d, Q[s], QD[s], gravity, o[0:n], o[n : 2 * n],
                                                  o[2 * n : 3 * n], o[3 * n])


@njit(cache=True, parallel=True)
def trajectory_batch(model, Q, QD, QDD, use_qdd, gravity, nc, out, status):
    """out: (K, QUANTITIES nv + 2), trajectory_kernel's row of each sample."""
    K = Q.shape[0]
    for t in prange(nc):
        d = kernel_data(Q.shape[1], model.cols.shape[0], model.ints.shape[0])
        for s in range(t * K // nc, (t + 1) * K // nc):
            status[s] = trajectory_kernel(model, d, Q[s], QD[s], QDD[s], use_qdd, gravity, out[s])
