"""The Slotine–Li recursion of slotine_li_world.py in local (body) coordinates: each body's inertia
is constant in its own frame, so neither placements in the computation frame nor rotated
inertias are formed. It applies to robots of 1-DoF joints under at most a free root (engine.data's
HEADER flag), where it is the faster of the two; engine.slotine_li chooses.
"""

from __future__ import annotations

import math

from ..model.joints import FREE, REVOLUTE
from ..model.tree import G_AXIS, G_COM, G_INERTIA, G_MASS, G_PARENT_AXIS, G_ROT, G_ROT_HAT, G_ROT_HAT2, G_TRANS
from .armature import add_armature_force
from .jit import helper
from .joints import failed, load_state, root_acceleration
from .slotine_li_world import N_PARAMETERS, UNIT_PARAMETERS
from .spatial import CHRISTOFFEL


@helper
def local_parameters(geom, use_theta, theta, i):
    """Body i's ten inertial parameters about its own origin in its own axes (no rotation to make):
    m, h = m c, and J = (J00, J01, J11, J02, J12, J22), from theta (Pinocchio's order) or from the
    model (mass, COM, inertia about the COM: J = I_c + m (c·c 1 − c cᵀ))."""
    if use_theta:
        o = N_PARAMETERS * i
        return (theta[o], theta[o + 1], theta[o + 2], theta[o + 3], theta[o + 4], theta[o + 5], theta[o + 6],
                theta[o + 7], theta[o + 8], theta[o + 9])
    m = geom[i, G_MASS]
    c0, c1, c2 = geom[i, G_COM], geom[i, G_COM + 1], geom[i, G_COM + 2]
    I = G_INERTIA
    return (m, m * c0, m * c1, m * c2,
            geom[i, I] + m * (c1 * c1 + c2 * c2), geom[i, I + 1] - m * c0 * c1, geom[i, I + 4] + m * (c0 * c0 + c2 * c2),
            geom[i, I + 2] - m * c0 * c2, geom[i, I + 5] - m * c1 * c2, geom[i, I + 8] + m * (c0 * c0 + c1 * c1))


@helper
def inertia_times(p, x0, x1, x2, y0, y1, y2):
    """I x = [J x_ω + h × x_u; x_ω × h + m x_u] for I's ten parameters ``p`` (local_parameters)
    and x = [x_ω; x_u], as six numbers."""
    m, h0, h1, h2, J00, J01, J11, J02, J12, J22 = p
    return (J00 * x0 + J01 * x1 + J02 * x2 + h1 * y2 - h2 * y1,
            J01 * x0 + J11 * x1 + J12 * x2 + h2 * y0 - h0 * y2,
            J02 * x0 + J12 * x1 + J22 * x2 + h0 * y1 - h1 * y0,
            x1 * h2 - x2 * h1 + m * y0,
            x2 * h0 - x0 * h2 + m * y1,
            x0 * h1 - x1 * h0 + m * y2)


@helper
def force_cross(w0, w1, w2, u0, u1, u2, n0, n1, n2, f0, f1, f2):
    """v ×* [n; f] = [ω × n + u × f; ω × f] for v = [ω; u], as six numbers."""
    return (w1 * n2 - w2 * n1 + u1 * f2 - u2 * f1,
            w2 * n0 - w0 * n2 + u2 * f0 - u0 * f2,
            w0 * n1 - w1 * n0 + u0 * f1 - u1 * f0,
            w1 * f2 - w2 * f1,
            w2 * f0 - w0 * f2,
            w0 * f1 - w1 * f0)


@helper
def _body_force(p, v, w, a, i, factorization):
    """f_i = I a + B(v, I) w (Alg. 3, line 8) from I's ten parameters ``p``, with no 6 x 6 matrix
    formed: with I = [[J, ĥ], [ĥᵀ, m 1]], I x = [J x_ω + h × x_u; x_ω × h + m x_u], and B of eq.
    (10) in blocks (spatial.body_factorization: [[P, 0], [−f̂, 0]], n and f of I v) needs w_ω only:

        B w = [½(ω × J w_ω − J (ω × w_ω)) − ½(h (u·w_ω) + u (h·w_ω)) + (u·h) w_ω − ½ n × w_ω;
               w_ω × f]

    or for eq. (9), B w = v ×* (I w) = [ω × n_w + u × f_w; ω × f_w]. Returns f_i as six numbers."""
    m, h0, h1, h2, J00, J01, J11, J02, J12, J22 = p
    w0, w1, w2, u0, u1, u2 = v[i, 0], v[i, 1], v[i, 2], v[i, 3], v[i, 4], v[i, 5]
    x0, x1, x2, y0, y1, y2 = w[i, 0], w[i, 1], w[i, 2], w[i, 3], w[i, 4], w[i, 5]
    n0, n1, n2, f0, f1, f2 = inertia_times(p, a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5])  # I a
    if factorization == CHRISTOFFEL:
        k0 = J00 * x0 + J01 * x1 + J02 * x2  # J w_ω
        k1 = J01 * x0 + J11 * x1 + J12 * x2
        k2 = J02 * x0 + J12 * x1 + J22 * x2
        e0 = w1 * x2 - w2 * x1  # ω × w_ω
        e1 = w2 * x0 - w0 * x2
        e2 = w0 * x1 - w1 * x0
        g0, g1, g2, l0, l1, l2 = inertia_times(p, w0, w1, w2, u0, u1, u2)  # n and f of I v
        ux = u0 * x0 + u1 * x1 + u2 * x2
        hx = h0 * x0 + h1 * x1 + h2 * x2
        uh = u0 * h0 + u1 * h1 + u2 * h2
        n0 += 0.5 * ((w1 * k2 - w2 * k1) - (J00 * e0 + J01 * e1 + J02 * e2) - h0 * ux - u0 * hx
                     - (g1 * x2 - g2 * x1)) + uh * x0
        n1 += 0.5 * ((w2 * k0 - w0 * k2) - (J01 * e0 + J11 * e1 + J12 * e2) - h1 * ux - u1 * hx
                     - (g2 * x0 - g0 * x2)) + uh * x1
        n2 += 0.5 * ((w0 * k1 - w1 * k0) - (J02 * e0 + J12 * e1 + J22 * e2) - h2 * ux - u2 * hx
                     - (g0 * x1 - g1 * x0)) + uh * x2
        f0 += x1 * l2 - x2 * l1
        f1 += x2 * l0 - x0 * l2
        f2 += x0 * l1 - x1 * l0
    else:
        g0, g1, g2, l0, l1, l2 = inertia_times(p, x0, x1, x2, y0, y1, y2)  # I w
        c0, c1, c2, c3, c4, c5 = force_cross(w0, w1, w2, u0, u1, u2, g0, g1, g2, l0, l1, l2)
        n0 += c0
        n1 += c1
        n2 += c2
        f0 += c3
        f1 += c4
        f2 += c5
    return n0, n1, n2, f0, f1, f2


@helper
def body_placement(geom, jt, x, i, Xb):
    """Xb[i] = body i's placement in its parent (L, child axes in the parent's, in Xb[i, 0:3, 0:3]
    and r, its origin, in Xb[i, 3, 0:3]) for a revolute or prismatic joint at x."""
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


@helper
def add_parent_force(Xb, i, src, j, dst, p):
    """dst[p] += pX_i* src[j] for a force [n; f] of body i: f' = L f, n' = L n + r × f' (L, r in
    Xb[i] as body_placement writes them)."""
    r0, r1, r2 = Xb[i, 3, 0], Xb[i, 3, 1], Xb[i, 3, 2]
    g0 = Xb[i, 0, 0] * src[j, 3] + Xb[i, 0, 1] * src[j, 4] + Xb[i, 0, 2] * src[j, 5]
    g1 = Xb[i, 1, 0] * src[j, 3] + Xb[i, 1, 1] * src[j, 4] + Xb[i, 1, 2] * src[j, 5]
    g2 = Xb[i, 2, 0] * src[j, 3] + Xb[i, 2, 1] * src[j, 4] + Xb[i, 2, 2] * src[j, 5]
    for k in range(3):
        dst[p, k] += Xb[i, k, 0] * src[j, 0] + Xb[i, k, 1] * src[j, 1] + Xb[i, k, 2] * src[j, 2]
    dst[p, 0] += r1 * g2 - r2 * g1
    dst[p, 1] += r2 * g0 - r0 * g2
    dst[p, 2] += r0 * g1 - r1 * g0
    dst[p, 3] += g0
    dst[p, 4] += g1
    dst[p, 5] += g2


@helper
def child_rows(Xb, i, src, j, dst):
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

@helper
def joint_forces(model, Xb, f, tau):
    """τ_i = S_iᵀ f_i from the leaves up, each body's force f_i (in its own frame) added to its
    parent's, f_p += pX_i* f_i, once its joint's is taken (a free root's S is [v; ω] reordered)."""
    ints, geom = model.ints, model.geom
    for i in range(ints.shape[0] - 1, -1, -1):
        jt, vs, p = ints[i, 1], ints[i, 3], ints[i, 0]
        if jt == FREE:
            for k in range(3):
                tau[vs + k] = f[i, 3 + k]
                tau[vs + 3 + k] = f[i, k]
        else:
            o = 0 if jt == REVOLUTE else 3
            tau[vs] = geom[i, G_AXIS] * f[i, o] + geom[i, G_AXIS + 1] * f[i, o + 1] + geom[i, G_AXIS + 2] * f[i, o + 2]
        if p >= 0:
            add_parent_force(Xb, i, f, i, f, p)


@helper(inline="always")
def local_motion(model, data, q, qd, qd_r, qdd_r, gravity):
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
            body_placement(geom, jt, qn[qs], i, Xb)
            if p >= 0:
                child_rows(Xb, i, v, p, v)
                child_rows(Xb, i, w, p, w)
                child_rows(Xb, i, a, p, a)
            else:
                for k in range(6):
                    v[i, k] = 0.0
                    w[i, k] = 0.0
                child_rows(Xb, i, F, 0, a)  # a_0 = −g in the computation frame
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


@helper
def slotine_li_local_kernel(model, data, q, qd, qd_r, qdd_r, gravity, use_theta, theta, factorization, tau):
    """Alg. 3 in body coordinates, as Pinocchio's RNEA runs: each body's inertia is constant in its
    own frame, and S_i of a revolute ([a; 0]) or prismatic ([0; a]) joint and of a free root (the
    unit columns) too, so Ṡ_i q̇_r,i = v_i × S_i q̇_r,i. For robots of those joints only (the callers
    check); the world-frame slotine_li_kernel serves the others, and the tests hold the two equal.
    Returns a status code."""
    status = local_motion(model, data, q, qd, qd_r, qdd_r, gravity)
    if failed(status):
        return status
    ints, geom = model.ints, model.geom
    N = ints.shape[0]
    n = model.cols.shape[0]
    B, V = data.blocks, data.rows
    Xb = B[2 * N : 3 * N]
    v, a, f, w = V[2 * n : 2 * n + N], V[2 * n + N : 2 * n + 2 * N], V[2 * n + 2 * N : 2 * n + 3 * N], V[2 * n + 3 * N : 2 * n + 4 * N]
    for i in range(N):
        f[i, 0], f[i, 1], f[i, 2], f[i, 3], f[i, 4], f[i, 5] = _body_force(
            local_parameters(geom, use_theta, theta, i), v, w, a, i, factorization)
    joint_forces(model, Xb, f, tau)
    add_armature_force(model, data.q, qd, qdd_r, qd_r, tau, data.blocks[3 * N + 1])
    return status


@helper
def adaptation_gradient_local_kernel(model, data, q, qd, qd_r, qdd_r, gravity, factorization, Yts):
    """Alg. 3, line 9 in body coordinates: Yts[10 j + k] = 𝒴_j[:, k] · (v_j − w_j), with 𝒴_j e_k
    = I_k a_j + B(v_j, I_k) w_j for the k-th unit parameter's inertia I_k, constant in body j's
    frame. Same robots as slotine_li_local_kernel. Returns a status code."""
    status = local_motion(model, data, q, qd, qd_r, qdd_r, gravity)
    if failed(status):
        return status
    N = model.ints.shape[0]
    n = model.cols.shape[0]
    V = data.rows
    v, a, w = V[2 * n : 2 * n + N], V[2 * n + N : 2 * n + 2 * N], V[2 * n + 3 * N : 2 * n + 4 * N]
    for j in range(N):
        for k in range(N_PARAMETERS):
            y = _body_force(local_parameters(model.geom, True, UNIT_PARAMETERS[k], 0), v, w, a, j, factorization)
            s = 0.0
            for r in range(6):
                s += y[r] * (v[j, r] - w[j, r])
            Yts[N_PARAMETERS * j + k] = s
    return status
