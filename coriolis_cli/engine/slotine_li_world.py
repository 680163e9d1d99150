"""The Slotine–Li recursion and its regressors (Wensing–Slotine App. B, Algs. 3 and 4), world frame
(the computation frame; slotine_li_body.py holds the same recursion in body coordinates).

τ = M(q) q̈_r + C(q, q̇) q̇_r + g(q) with the Christoffel-consistent C, never forming C:

    v_i = v_p(i) + S_i q̇_i              (Alg. 3, line 3: true velocities)
    w_i = w_p(i) + S_i q̇_r,i            (line 4: reference velocities)
    Ṡ_i = v_i × S_i                     (line 5: Φ̊ = 0 in this frame)
    a_i = a_p(i) + Ṡ_i q̇_r,i + S_i q̈_r,i,  a_0 = −g   (line 6)
    f_i = I_i a_i + B(v_i, I_i) w_i     (line 8, B of the core paper's eq. 10, or eq. 9)
    τ_i = S_iᵀ Σ_{j ⪰ i} f_j            (lines 11-13)

f_i is linear in body i's inertial parameters θ_i (Pinocchio's order, see parameter_inertia):
f_i = 𝒴_i(a_i, v_i, w_i) θ_i, whose columns are the same formula with the unit parameters. Then
Y_ij = S_iᵀ 𝒴_j for the DoF i that support body j (Alg. 4, lines 15-25), and Alg. 3's line 9
gives the adaptation term without forming Y: [Yᵀs]_j = 𝒴_jᵀ (v_j − w_j) with s = q̇ − q̇_r.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .armature import add_armature_force
from .jit import helper
from .joints import failed, root_acceleration
from .kinematics import forward_pass, propagate, views
from .rnea import accelerations, joint_torques
from .spatial import body_factorization, dot6, matvec6

N_PARAMETERS = 10  # per body: m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz


@helper
def complete_inertia(m, h0, h1, h2, out):
    """Fill out = [[J, ĥ], [ĥᵀ, m 1]] around the J already in out[0:3, 0:3] (h = m c)."""
    out[0, 3], out[0, 4], out[0, 5] = 0.0, -h2, h1
    out[1, 3], out[1, 4], out[1, 5] = h2, 0.0, -h0
    out[2, 3], out[2, 4], out[2, 5] = -h1, h0, 0.0
    for r in range(3):
        for c in range(3):
            out[3 + r, c] = out[c, 3 + r]
            out[3 + r, 3 + c] = m if r == c else 0.0


@helper
def parameter_inertia(theta, o, X, i, out):
    """out = body i's spatial inertia in the computation frame from theta[o : o + 10], given in
    body i's frame (Pinocchio's Inertia.toDynamicParameters: h = m c, I about the body origin).
    With R, p body i's placement, g = R h: h_w = g + m p and J_w = R J Rᵀ − m p̂p̂ − p̂ĝ − ĝp̂."""
    m = theta[o]
    hb0, hb1, hb2 = theta[o + 1], theta[o + 2], theta[o + 3]
    J00, J01, J11, J02, J12, J22 = theta[o + 4], theta[o + 5], theta[o + 6], theta[o + 7], theta[o + 8], theta[o + 9]
    p0, p1, p2 = X[i, 3, 0], X[i, 3, 1], X[i, 3, 2]
    g = (X[i, 0, 0] * hb0 + X[i, 0, 1] * hb1 + X[i, 0, 2] * hb2,
         X[i, 1, 0] * hb0 + X[i, 1, 1] * hb1 + X[i, 1, 2] * hb2,
         X[i, 2, 0] * hb0 + X[i, 2, 1] * hb1 + X[i, 2, 2] * hb2)
    p = (p0, p1, p2)
    # R J Rᵀ, element by element (J symmetric)
    for r in range(3):
        a0 = J00 * X[i, r, 0] + J01 * X[i, r, 1] + J02 * X[i, r, 2]
        a1 = J01 * X[i, r, 0] + J11 * X[i, r, 1] + J12 * X[i, r, 2]
        a2 = J02 * X[i, r, 0] + J12 * X[i, r, 1] + J22 * X[i, r, 2]
        for c in range(r, 3):
            out[r, c] = a0 * X[i, c, 0] + a1 * X[i, c, 1] + a2 * X[i, c, 2]
    pg = p0 * g[0] + p1 * g[1] + p2 * g[2]
    pp = p0 * p0 + p1 * p1 + p2 * p2
    for r in range(3):
        # −m p̂p̂ = m (|p|² 1 − p pᵀ);  −(p̂ĝ + ĝp̂) = 2 (p·g) 1 − p gᵀ − g pᵀ
        for c in range(r, 3):
            e = -m * p[r] * p[c] - p[r] * g[c] - g[r] * p[c]
            if r == c:
                e += m * pp + 2.0 * pg
            out[r, c] += e
            out[c, r] = out[r, c]
    complete_inertia(m, g[0] + m * p0, g[1] + m * p1, g[2] + m * p2, out)


@helper
def _reference_motion(model, data, q, qd, qd_r, qdd_r, gravity, use_theta, theta, w):
    """Lines 2-6 for every body: placements, inertias (the model's or theta's), v, Ṡ, w, a.
    Returns the status code."""
    ints, cols = model.ints, model.cols
    N = ints.shape[0]
    n = cols.shape[0]
    status = forward_pass(model, data, q, qd, qd_r, qdd_r, 3)  # lines 2, 3, 5: X, S, I, v and Ṡ under the true velocity
    if failed(status):
        return status
    parts = views(data, N, n)
    X, S, Sd, IC, a, F = parts.X, parts.S, parts.Sd, parts.IC, parts.a, parts.F
    if use_theta:
        for i in range(N):
            parameter_inertia(theta, N_PARAMETERS * i, X, i, IC[i])
    propagate(model, S, qd_r, w)  # line 4
    a0 = F[0]
    root_acceleration(model, data.q, gravity, a0)
    accelerations(model, S, Sd, qd_r, qdd_r, a0, a)  # line 6
    return status


@njit(cache=True)
def slotine_li_kernel(model, data, q, qd, qd_r, qdd_r, gravity, use_theta, theta, factorization, tau):
    """Alg. 3, lines 1-14: τ into ``tau``; returns a status code (engine.joints)."""
    ints, cols = model.ints, model.cols
    N = ints.shape[0]
    n = cols.shape[0]
    w = data.rows[2 * n + 3 * N : 2 * n + 4 * N]
    status = _reference_motion(model, data, q, qd, qd_r, qdd_r, gravity, use_theta, theta, w)
    if failed(status):
        return status
    parts = views(data, N, n)
    S, v, IC, BC, a, f, F, T = parts.S, parts.v, parts.IC, parts.BC, parts.a, parts.f, parts.F, parts.T
    Bw = F[1]
    for i in range(N):  # line 8: f_i = I_i a_i + B(v_i, I_i) w_i
        body_factorization(v[i], IC[i], factorization, T[2:4], BC[i])
        matvec6(IC[i], a[i], f[i])
        matvec6(BC[i], w[i], Bw)
        for r in range(6):
            f[i, r] += Bw[r]
    joint_torques(model, S, f, tau)  # lines 11-13
    add_armature_force(model, data.q, qd, qdd_r, qd_r, tau, T[0])  # known, not a parameter: the regressor leaves it out
    return status


UNIT_PARAMETERS = np.eye(N_PARAMETERS)  # row k: the k-th unit parameter vector of one body


@helper
def regressor_kernel(model, data, q, qd, qd_r, qdd_r, gravity, factorization, Y, Yts):
    """Alg. 4: Y (nv x 10N) with Y θ = τ of slotine_li_kernel, and Alg. 3's line 9:
    Yts[10 j + k] = 𝒴_j[:, k] · (v_j − w_j). A Y of zero rows skips Y (the adaptation term alone).
    Returns a status code."""
    ints, cols = model.ints, model.cols
    N = ints.shape[0]
    n = cols.shape[0]
    w = data.rows[2 * n + 3 * N : 2 * n + 4 * N]
    unit = UNIT_PARAMETERS
    fill = Y.shape[0] > 0
    status = _reference_motion(model, data, q, qd, qd_r, qdd_r, gravity, False, unit[0], w)
    if failed(status):
        return status
    parts = views(data, N, n)
    X, S, v, BC, a, F, T = parts.X, parts.S, parts.v, parts.BC, parts.a, parts.F, parts.T
    Ik, Bk, fk, Bw = T[1], BC[0], F[1], F[2]
    for j in range(N):
        last = (ints[j + 1, 3] if j + 1 < N else n) - 1  # body j's last column
        for k in range(N_PARAMETERS):
            parameter_inertia(unit[k], 0, X, j, Ik)  # the k-th unit parameter of body j
            body_factorization(v[j], Ik, factorization, T[2:4], Bk)
            matvec6(Ik, a[j], fk)
            matvec6(Bk, w[j], Bw)
            s = 0.0
            for r in range(6):
                fk[r] += Bw[r]
                s += fk[r] * (v[j, r] - w[j, r])
            col = N_PARAMETERS * j + k
            Yts[col] = s
            c = last if fill else -1
            while c >= 0:  # every DoF that supports body j
                Y[c, col] = dot6(S[c], fk)
                c = cols[c, 1]
    return status
