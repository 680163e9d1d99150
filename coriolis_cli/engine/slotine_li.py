"""The Slotine–Li recursion and its regressors (Wensing–Slotine App. B, Algs. 3 and 4), world frame.

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

import math

import numpy as np
from numba import njit

from ..model.joints import FREE, REVOLUTE
from ..model.tree import G_AXIS, G_COM, G_INERTIA, G_MASS, G_PARENT_AXIS, G_ROT, G_ROT_HAT, G_ROT_HAT2, G_TRANS
from .joints import add_armature, failed, load_state, root_acceleration
from .kinematics import body_velocities, forward_kinematics, propagate, views
from .rnea import accelerations, joint_torques
from .spatial import body_factorization, dot6, matvec6

N_PARAMETERS = 10  # per body: m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz


@njit(cache=True)
def _complete_inertia(m, h0, h1, h2, out):
    """Fill out = [[J, ĥ], [ĥᵀ, m 1]] around the J already in out[0:3, 0:3] (h = m c)."""
    out[0, 3], out[0, 4], out[0, 5] = 0.0, -h2, h1
    out[1, 3], out[1, 4], out[1, 5] = h2, 0.0, -h0
    out[2, 3], out[2, 4], out[2, 5] = -h1, h0, 0.0
    for r in range(3):
        for c in range(3):
            out[3 + r, c] = out[c, 3 + r]
            out[3 + r, 3 + c] = m if r == c else 0.0


@njit(cache=True)
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
    _complete_inertia(m, g[0] + m * p0, g[1] + m * p1, g[2] + m * p2, out)


@njit(cache=True)
def _reference_motion(model, data, q, qd, qd_r, qdd_r, gravity, use_theta, theta, w):
    """Lines 2-6 for every body: placements, inertias (the model's or theta's), v, Ṡ, w, a.
    Returns the status code."""
    ints, cols = model.ints, model.cols
    N = ints.shape[0]
    n = cols.shape[0]
    qn = data.q
    status = load_state(model, q, qn, qd, qd_r, qdd_r, 3)
    if failed(status):
        return status
    X, S, Sd, v, IC, BC, a, f, F, T, G = views(data, N, n)
    forward_kinematics(model, qn, X, S, IC, T)
    if use_theta:
        for i in range(N):
            parameter_inertia(theta, N_PARAMETERS * i, X, i, IC[i])
    body_velocities(model, S, qd, v, Sd)  # lines 3 and 5: v and Ṡ under the true velocity
    propagate(model, S, qd_r, w)  # line 4
    a0 = F[0]
    root_acceleration(model, qn, gravity, a0)
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
    X, S, Sd, v, IC, BC, a, f, F, T, G = views(data, N, n)
    Bw = F[1]
    for i in range(N):  # line 8: f_i = I_i a_i + B(v_i, I_i) w_i
        body_factorization(v[i], IC[i], factorization, T[2:4], BC[i])
        matvec6(IC[i], a[i], f[i])
        matvec6(BC[i], w[i], Bw)
        for r in range(6):
            f[i, r] += Bw[r]
    joint_torques(model, S, f, tau)  # lines 11-13
    add_armature(model, qdd_r, tau)  # known, not a parameter: the regressor leaves it out
    return status


_UNIT_PARAMETERS = np.eye(N_PARAMETERS)  # row k: the k-th unit parameter vector of one body


@njit(cache=True)
def regressor_kernel(model, data, q, qd, qd_r, qdd_r, gravity, factorization, Y, Yts):
    """Alg. 4: Y (nv x 10N) with Y θ = τ of slotine_li_kernel, and Alg. 3's line 9:
    Yts[10 j + k] = 𝒴_j[:, k] · (v_j − w_j). A Y of zero rows skips Y (the adaptation term alone).
    Returns a status code."""
    ints, cols = model.ints, model.cols
    N = ints.shape[0]
    n = cols.shape[0]
    w = data.rows[2 * n + 3 * N : 2 * n + 4 * N]
    unit = _UNIT_PARAMETERS
    fill = Y.shape[0] > 0
    status = _reference_motion(model, data, q, qd, qd_r, qdd_r, gravity, False, unit[0], w)
    if failed(status):
        return status
    X, S, Sd, v, IC, BC, a, f, F, T, G = views(data, N, n)
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


# ---- the same recursion in local (body) coordinates -----------------------------------------------
@njit(cache=True)
def _local_parameter_inertia(theta, o, out):
    """The spatial inertia of theta[o : o + 10] about the body origin, in body axes."""
    m, h0, h1, h2 = theta[o], theta[o + 1], theta[o + 2], theta[o + 3]
    out[0, 0], out[0, 1], out[1, 1], out[0, 2], out[1, 2], out[2, 2] = (
        theta[o + 4], theta[o + 5], theta[o + 6], theta[o + 7], theta[o + 8], theta[o + 9])
    out[1, 0], out[2, 0], out[2, 1] = out[0, 1], out[0, 2], out[1, 2]
    _complete_inertia(m, h0, h1, h2, out)


@njit(cache=True)
def _local_inertia(geom, use_theta, theta, i, out):
    """Body i's spatial inertia about its own origin in its own axes (no rotation to make): from
    the model (mass, COM, inertia about the COM) or from theta."""
    if use_theta:
        _local_parameter_inertia(theta, N_PARAMETERS * i, out)
        return
    m = geom[i, G_MASS]
    c0, c1, c2 = geom[i, G_COM], geom[i, G_COM + 1], geom[i, G_COM + 2]
    h0, h1, h2 = m * c0, m * c1, m * c2
    cc = c0 * c0 + c1 * c1 + c2 * c2
    c = (c0, c1, c2)
    for r in range(3):
        for s in range(3):
            out[r, s] = geom[i, G_INERTIA + 3 * r + s] - m * c[r] * c[s]
        out[r, r] += m * cc
    _complete_inertia(m, h0, h1, h2, out)


@njit(cache=True)
def _child_rows(Xb, i, src, j, dst):
    """dst[i] = iX_p src[j] for a parent's motion vector [ω; v_O]: ω' = Lᵀω, v' = Lᵀ(v + ω × r),
    with L (child axes in the parent's) and r (the child origin in the parent) in Xb[i]. Rows are
    indexed in place: a view per row would cost reference counting."""
    w0, w1, w2 = src[j, 0], src[j, 1], src[j, 2]
    r0, r1, r2 = Xb[i, 3, 0], Xb[i, 3, 1], Xb[i, 3, 2]
    u0 = src[j, 3] + w1 * r2 - w2 * r1
    u1 = src[j, 4] + w2 * r0 - w0 * r2
    u2 = src[j, 5] + w0 * r1 - w1 * r0
    for k in range(3):
        dst[i, k] = Xb[i, 0, k] * w0 + Xb[i, 1, k] * w1 + Xb[i, 2, k] * w2
        dst[i, 3 + k] = Xb[i, 0, k] * u0 + Xb[i, 1, k] * u1 + Xb[i, 2, k] * u2

@njit(cache=True, inline="always")
def _local_motion(model, data, q, qd, qd_r, qdd_r, gravity):
    """Alg. 3, lines 2-6 in body coordinates: each body's placement in its parent (Xb), and v
    (true velocity), w (reference velocity) and a (reference acceleration, gravity included) in
    its own frame. Returns the status code."""
    ints, geom = model.ints, model.geom
    N = ints.shape[0]
    n = model.cols.shape[0]
    qn = data.q
    status = load_state(model, q, qn, qd, qd_r, qdd_r, 3)
    if failed(status):
        return status
    B, V = data.blocks, data.rows
    Xb = B[2 * N : 3 * N]
    v, a, w = V[2 * n : 2 * n + N], V[2 * n + N : 2 * n + 2 * N], V[2 * n + 3 * N : 2 * n + 4 * N]
    F = B[3 * N]
    root_acceleration(model, qn, gravity, F[0])
    for i in range(N):
        jt, qs, vs, p = ints[i, 1], ints[i, 2], ints[i, 3], ints[i, 0]
        s0 = s1 = s2 = s3 = s4 = s5 = 0.0  # S q̇_r
        if jt == FREE:  # the root's frame is the base's: ν = [v; ω] is [ω; v] reordered
            for k in range(3):
                v[i, k], v[i, 3 + k] = qd[vs + 3 + k], qd[vs + k]
                w[i, k], w[i, 3 + k] = qd_r[vs + 3 + k], qd_r[vs + k]
                a[i, k] = F[0, k] + qdd_r[vs + 3 + k]
                a[i, 3 + k] = F[0, 3 + k] + qdd_r[vs + k]
            s0, s1, s2, s3, s4, s5 = qd_r[vs + 3], qd_r[vs + 4], qd_r[vs + 5], qd_r[vs], qd_r[vs + 1], qd_r[vs + 2]
        else:
            x = qn[qs]
            if jt == REVOLUTE:  # L = E + sin q E â + (1 − cos q) E â², r = the joint origin
                sn, cs = math.sin(x), 1.0 - math.cos(x)
                for r in range(3):
                    for c in range(3):
                        k = 3 * r + c
                        Xb[i, r, c] = geom[i, G_ROT + k] + sn * geom[i, G_ROT_HAT + k] + cs * geom[i, G_ROT_HAT2 + k]
                    Xb[i, 3, r] = geom[i, G_TRANS + r]
            else:  # prismatic: L = E, r = the joint origin moved along E a
                for r in range(3):
                    for c in range(3):
                        Xb[i, r, c] = geom[i, G_ROT + 3 * r + c]
                    Xb[i, 3, r] = geom[i, G_TRANS + r] + geom[i, G_PARENT_AXIS + r] * x
            if p >= 0:
                _child_rows(Xb, i, v, p, v)
                _child_rows(Xb, i, w, p, w)
                _child_rows(Xb, i, a, p, a)
            else:
                for k in range(6):
                    v[i, k] = 0.0
                    w[i, k] = 0.0
                _child_rows(Xb, i, F, 0, a)  # a_0 = −g in the computation frame
            a0_, a1_, a2_ = geom[i, G_AXIS], geom[i, G_AXIS + 1], geom[i, G_AXIS + 2]
            o = 0 if jt == REVOLUTE else 3  # S = [a; 0] or [0; a]
            v[i, o] += a0_ * qd[vs]
            v[i, o + 1] += a1_ * qd[vs]
            v[i, o + 2] += a2_ * qd[vs]
            w[i, o] += a0_ * qd_r[vs]
            w[i, o + 1] += a1_ * qd_r[vs]
            w[i, o + 2] += a2_ * qd_r[vs]
            a[i, o] += a0_ * qdd_r[vs]
            a[i, o + 1] += a1_ * qdd_r[vs]
            a[i, o + 2] += a2_ * qdd_r[vs]
            if o == 0:
                s0, s1, s2 = a0_ * qd_r[vs], a1_ * qd_r[vs], a2_ * qd_r[vs]
            else:
                s3, s4, s5 = a0_ * qd_r[vs], a1_ * qd_r[vs], a2_ * qd_r[vs]
        # a += Ṡ q̇_r = v × S q̇_r (motion cross product, angular first)
        w0, w1, w2, l0, l1, l2 = v[i, 0], v[i, 1], v[i, 2], v[i, 3], v[i, 4], v[i, 5]
        a[i, 0] += w1 * s2 - w2 * s1
        a[i, 1] += w2 * s0 - w0 * s2
        a[i, 2] += w0 * s1 - w1 * s0
        a[i, 3] += w1 * s5 - w2 * s4 + l1 * s2 - l2 * s1
        a[i, 4] += w2 * s3 - w0 * s5 + l2 * s0 - l0 * s2
        a[i, 5] += w0 * s4 - w1 * s3 + l0 * s1 - l1 * s0
    return status


@njit(cache=True)
def slotine_li_local_kernel(model, data, q, qd, qd_r, qdd_r, gravity, use_theta, theta, factorization, tau):
    """Alg. 3 in body coordinates, as Pinocchio's RNEA runs: each body's inertia is constant in its
    own frame, and S_i of a revolute ([a; 0]) or prismatic ([0; a]) joint and of a free root (the
    unit columns) too, so Ṡ_i q̇_r,i = v_i × S_i q̇_r,i. For robots of those joints only (the callers
    check); the world-frame slotine_li_kernel serves the others, and the tests hold the two equal.
    Returns a status code."""
    status = _local_motion(model, data, q, qd, qd_r, qdd_r, gravity)
    if failed(status):
        return status
    ints, geom = model.ints, model.geom
    N = ints.shape[0]
    n = model.cols.shape[0]
    B, V = data.blocks, data.rows
    IC, BC, Xb = B[0:N], B[N : 2 * N], B[2 * N : 3 * N]
    work = B[3 * N + 2 : 3 * N + 4]
    v, a, f, w = V[2 * n : 2 * n + N], V[2 * n + N : 2 * n + 2 * N], V[2 * n + 2 * N : 2 * n + 3 * N], V[2 * n + 3 * N : 2 * n + 4 * N]
    for i in range(N):
        _local_inertia(geom, use_theta, theta, i, IC[i])
        body_factorization(v[i], IC[i], factorization, work, BC[i])
        for r in range(6):  # f = I a + B(v, I) w
            acc = 0.0
            for c in range(6):
                acc += IC[i, r, c] * a[i, c] + BC[i, r, c] * w[i, c]
            f[i, r] = acc
    for i in range(N - 1, -1, -1):  # τ_i = S_iᵀ f_i, f_p += pX_i* f_i
        jt, vs, p = ints[i, 1], ints[i, 3], ints[i, 0]
        if jt == FREE:
            for k in range(3):
                tau[vs + k] = f[i, 3 + k]
                tau[vs + 3 + k] = f[i, k]
        else:
            o = 0 if jt == REVOLUTE else 3
            tau[vs] = geom[i, G_AXIS] * f[i, o] + geom[i, G_AXIS + 1] * f[i, o + 1] + geom[i, G_AXIS + 2] * f[i, o + 2]
        if p >= 0:  # f = L f', n = L n' + r × f
            r0, r1, r2 = Xb[i, 3, 0], Xb[i, 3, 1], Xb[i, 3, 2]
            g0 = Xb[i, 0, 0] * f[i, 3] + Xb[i, 0, 1] * f[i, 4] + Xb[i, 0, 2] * f[i, 5]
            g1 = Xb[i, 1, 0] * f[i, 3] + Xb[i, 1, 1] * f[i, 4] + Xb[i, 1, 2] * f[i, 5]
            g2 = Xb[i, 2, 0] * f[i, 3] + Xb[i, 2, 1] * f[i, 4] + Xb[i, 2, 2] * f[i, 5]
            for k in range(3):
                f[p, k] += Xb[i, k, 0] * f[i, 0] + Xb[i, k, 1] * f[i, 1] + Xb[i, k, 2] * f[i, 2]
            f[p, 0] += r1 * g2 - r2 * g1
            f[p, 1] += r2 * g0 - r0 * g2
            f[p, 2] += r0 * g1 - r1 * g0
            f[p, 3] += g0
            f[p, 4] += g1
            f[p, 5] += g2
    add_armature(model, qdd_r, tau)
    return status


@njit(cache=True)
def adaptation_gradient_local_kernel(model, data, q, qd, qd_r, qdd_r, gravity, factorization, Yts):
    """Alg. 3, line 9 in body coordinates: Yts[10 j + k] = 𝒴_j[:, k] · (v_j − w_j), with 𝒴_j e_k
    = I_k a_j + B(v_j, I_k) w_j for the k-th unit parameter's inertia I_k, constant in body j's
    frame. Same robots as slotine_li_local_kernel. Returns a status code."""
    status = _local_motion(model, data, q, qd, qd_r, qdd_r, gravity)
    if failed(status):
        return status
    N = model.ints.shape[0]
    n = model.cols.shape[0]
    B, V = data.blocks, data.rows
    Ik, Bk, work = B[0], B[N], B[3 * N + 2 : 3 * N + 4]
    v, a, w = V[2 * n : 2 * n + N], V[2 * n + N : 2 * n + 2 * N], V[2 * n + 3 * N : 2 * n + 4 * N]
    for j in range(N):
        for k in range(N_PARAMETERS):
            _local_parameter_inertia(_UNIT_PARAMETERS[k], 0, Ik)
            body_factorization(v[j], Ik, factorization, work, Bk)
            s = 0.0
            for r in range(6):
                fr = 0.0
                for c in range(6):
                    fr += Ik[r, c] * a[j, c] + Bk[r, c] * w[j, c]
                s += fr * (v[j, r] - w[j, r])
            Yts[N_PARAMETERS * j + k] = s
    return status
