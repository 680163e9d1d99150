"""Forward dynamics by the articulated-body algorithm (Featherstone, RBDA Table 7.1) in body
coordinates, for the robots slotine_li_body.py serves: 1-DoF joints under at most a free root.

Each body's inertia is constant in its own frame and S_i is [a; 0] (revolute) or [0; a]
(prismatic), so no placement in a computation frame is formed:

    v_i = iX_p v_p + S_i q̇_i,   c_i = v_i × S_i q̇_i,   IA_i = I_i,   pA_i = v_i ×* I_i v_i
    U_i = IA_i S_i,   D_i = S_iᵀ U_i + armature_i,   u_i = τ_i − S_iᵀ pA_i                (leaves up)
    IA_p += pX_i* (IA_i − U_i U_iᵀ / D_i) iX_p,   pA_p += pX_i* (pA_i + Ia_i c_i + U_i u_i / D_i)
    a'_i = iX_p a_p + c_i,   q̈_i = (u_i − U_iᵀ a'_i) / D_i,   a_i = a'_i + S_i q̈_i         (root down)

with a_0 = −g. A free root's six equations are solved together: its S is the permutation P
between ν = [v; ω] and angular-first vectors, so (Pᵀ IA P + armature) ν̇ = τ − Pᵀ (pA + IA a_0).

It computes what forward_dynamics.py computes through M = LᵀDL, in O(N) and without forming M.
Anything it cannot settle (a note on q, a pivot too small to trust, a free joint's linear
armature) returns RECHECK, and the caller takes the general kernel, which says what is wrong.
"""

from __future__ import annotations

import math

from numba import njit

from ..model.joints import FREE, REVOLUTE
from ..model.tree import G_ARMATURE, G_AXIS
from .armature import armature_at
from .data import QDD_, unpack_at
from .jit import helper
from .joints import OK, RECHECK, load_state, root_acceleration
from .slotine_li import MODEL_THETA
from .slotine_li_body import add_parent_force, body_placement, child_rows, force_cross, inertia_times, local_parameters
from .slotine_li_world import complete_inertia

# A pivot D_i below this share of trace(IA_i) is left to the general kernel's LTDL, whose test
# against M_ii decides whether M is singular.
PIVOT_TRUST = 1e-9


@helper
def inertia_matrix(p, out):
    """out = [[J, ĥ], [ĥᵀ, m 1]] from the ten parameters (m, h, J)."""
    m, h0, h1, h2, J00, J01, J11, J02, J12, J22 = p
    out[0, 0], out[0, 1], out[0, 2] = J00, J01, J02
    out[1, 0], out[1, 1], out[1, 2] = J01, J11, J12
    out[2, 0], out[2, 1], out[2, 2] = J02, J12, J22
    complete_inertia(m, h0, h1, h2, out)


@helper
def _add_to_parent(Xb, i, Ia, W, out):
    """out += pX_i* Ia iX_p: Ia = [[A, B], [Bᵀ, C]] rotated by L (A' = L A Lᵀ, ...), then moved by
    r: [[A' + r̂B'ᵀ − B'r̂ − r̂C'r̂, B' + r̂C'], [·ᵀ, C']]. W is 6x6 scratch."""
    for r in range(6):  # W = Ia blockdiag(L)ᵀ
        for c in range(3):
            W[r, c] = Ia[r, 0] * Xb[i, c, 0] + Ia[r, 1] * Xb[i, c, 1] + Ia[r, 2] * Xb[i, c, 2]
            W[r, 3 + c] = Ia[r, 3] * Xb[i, c, 0] + Ia[r, 4] * Xb[i, c, 1] + Ia[r, 5] * Xb[i, c, 2]
    r0, r1, r2 = Xb[i, 3, 0], Xb[i, 3, 1], Xb[i, 3, 2]
    for c in range(6):  # column c of blockdiag(L) W: A' or B' (rows 0-2) and B'ᵀ or C' (rows 3-5)
        x0 = Xb[i, 0, 0] * W[0, c] + Xb[i, 0, 1] * W[1, c] + Xb[i, 0, 2] * W[2, c]
        x1 = Xb[i, 1, 0] * W[0, c] + Xb[i, 1, 1] * W[1, c] + Xb[i, 1, 2] * W[2, c]
        x2 = Xb[i, 2, 0] * W[0, c] + Xb[i, 2, 1] * W[1, c] + Xb[i, 2, 2] * W[2, c]
        y0 = Xb[i, 0, 0] * W[3, c] + Xb[i, 0, 1] * W[4, c] + Xb[i, 0, 2] * W[5, c]
        y1 = Xb[i, 1, 0] * W[3, c] + Xb[i, 1, 1] * W[4, c] + Xb[i, 1, 2] * W[5, c]
        y2 = Xb[i, 2, 0] * W[3, c] + Xb[i, 2, 1] * W[4, c] + Xb[i, 2, 2] * W[5, c]
        # the rows of T = [[1, r̂], [0, 1]] applied to the column: top += r × bottom
        W[0, c], W[1, c], W[2, c] = x0 + r1 * y2 - r2 * y1, x1 + r2 * y0 - r0 * y2, x2 + r0 * y1 - r1 * y0
        W[3, c], W[4, c], W[5, c] = y0, y1, y2
    for r in range(6):  # then Tᵀ on the right: each row's left half −= its right half r̂, i.e. += r × it
        z0, z1, z2 = W[r, 3], W[r, 4], W[r, 5]
        out[r, 0] += W[r, 0] + r1 * z2 - r2 * z1
        out[r, 1] += W[r, 1] + r2 * z0 - r0 * z2
        out[r, 2] += W[r, 2] + r0 * z1 - r1 * z0
        out[r, 3] += z0
        out[r, 4] += z1
        out[r, 5] += z2


@helper
def _root_solve(model, i, vs, IA, pA, a0, tau, qdd, K):
    """A free root: (Pᵀ IA P + armature) ν̇ = τ − Pᵀ (pA + IA a_0) by Cholesky; K is 6x6 scratch.
    Returns False if a pivot is too small to trust."""
    g = model.geom
    if g[i, G_ARMATURE] != 0.0 or g[i, G_ARMATURE + 1] != 0.0 or g[i, G_ARMATURE + 2] != 0.0:
        return False  # the linear armature's M_a depends on the base orientation (engine.armature)
    trace = 0.0
    for r in range(6):
        trace += IA[i, r, r]
    for r in range(6):  # ν = [v; ω] is angular-first index (k + 3) % 6
        pr = (r + 3) % 6
        s = pA[i, pr]
        for c in range(6):
            K[r, c] = IA[i, pr, (c + 3) % 6]
            s += IA[i, pr, c] * a0[c]
        qdd[vs + r] = tau[vs + r] - s
    for k in range(3, 6):
        K[k, k] += armature_at(model, vs + k)
    for k in range(6):  # K = L Lᵀ in place (lower triangle)
        d = K[k, k]
        for j in range(k):
            d -= K[k, j] * K[k, j]
        if not d > PIVOT_TRUST * trace:
            return False
        d = math.sqrt(d)
        K[k, k] = d
        for r in range(k + 1, 6):
            s = K[r, k]
            for j in range(k):
                s -= K[r, j] * K[k, j]
            K[r, k] = s / d
    for r in range(6):
        s = qdd[vs + r]
        for j in range(r):
            s -= K[r, j] * qdd[vs + j]
        qdd[vs + r] = s / K[r, r]
    for r in range(5, -1, -1):
        s = qdd[vs + r]
        for j in range(r + 1, 6):
            s -= K[j, r] * qdd[vs + j]
        qdd[vs + r] = s / K[r, r]
    return True


@helper
def forward_dynamics_local_kernel(model, data, q, qd, tau, gravity, qdd):
    """q̈ into ``qdd`` by the articulated-body algorithm; returns OK, or RECHECK for the general
    kernel (data.M is not computed here)."""
    ints, geom = model.ints, model.geom
    N = ints.shape[0]
    n = model.cols.shape[0]
    qn = data.q
    if load_state(model, q, qn, qd, tau, tau, 2) != OK:
        return RECHECK
    B, V = data.blocks, data.rows
    IA, Xb, a0, W = B[0:N], B[2 * N : 3 * N], B[3 * N, 0], B[3 * N + 1]
    U, v, a, pA, c = V[0:n], V[2 * n : 2 * n + N], V[2 * n + N : 2 * n + 2 * N], V[2 * n + 2 * N : 2 * n + 3 * N], \
        V[2 * n + 3 * N : 2 * n + 4 * N]
    Du = V[n : 2 * n]  # Du[j, 0] = D_j, Du[j, 1] = u_j
    root_acceleration(model, qn, gravity, a0)
    for i in range(N):  # v, c, IA = I and pA = v ×* I v
        jt, qs, vs, p = ints[i, 1], ints[i, 2], ints[i, 3], ints[i, 0]
        for k in range(6):
            c[i, k] = 0.0
        if jt == FREE:  # the root's frame is the base's: ν = [v; ω] reordered, and c = 0
            for k in range(3):
                v[i, k], v[i, 3 + k] = qd[vs + 3 + k], qd[vs + k]
        else:
            body_placement(geom, jt, qn[qs], i, Xb)
            if p >= 0:
                child_rows(Xb, i, v, p, v)
            else:
                for k in range(6):
                    v[i, k] = 0.0
            o = 0 if jt == REVOLUTE else 3  # S q̇ = [a q̇; 0] or [0; a q̇]
            s0, s1, s2 = geom[i, G_AXIS] * qd[vs], geom[i, G_AXIS + 1] * qd[vs], geom[i, G_AXIS + 2] * qd[vs]
            v[i, o] += s0
            v[i, o + 1] += s1
            v[i, o + 2] += s2
            w0, w1, w2 = v[i, 0], v[i, 1], v[i, 2]
            c[i, o] = w1 * s2 - w2 * s1  # c = v × S q̇
            c[i, o + 1] = w2 * s0 - w0 * s2
            c[i, o + 2] = w0 * s1 - w1 * s0
            if o == 0:
                l0, l1, l2 = v[i, 3], v[i, 4], v[i, 5]
                c[i, 3] = l1 * s2 - l2 * s1
                c[i, 4] = l2 * s0 - l0 * s2
                c[i, 5] = l0 * s1 - l1 * s0
        par = local_parameters(geom, False, MODEL_THETA, i)
        inertia_matrix(par, IA[i])
        w0, w1, w2, u0, u1, u2 = v[i, 0], v[i, 1], v[i, 2], v[i, 3], v[i, 4], v[i, 5]
        n0, n1, n2, f0, f1, f2 = inertia_times(par, w0, w1, w2, u0, u1, u2)  # I v = [n; f]
        pA[i, 0], pA[i, 1], pA[i, 2], pA[i, 3], pA[i, 4], pA[i, 5] = force_cross(
            w0, w1, w2, u0, u1, u2, n0, n1, n2, f0, f1, f2)  # v ×* (I v)
    for i in range(N - 1, -1, -1):  # articulated inertias and bias forces, leaves up
        jt, vs, p = ints[i, 1], ints[i, 3], ints[i, 0]
        if jt == FREE:
            continue  # the root: solved below
        o = 0 if jt == REVOLUTE else 3
        x0, x1, x2 = geom[i, G_AXIS], geom[i, G_AXIS + 1], geom[i, G_AXIS + 2]
        trace = 0.0
        for r in range(6):
            U[vs, r] = IA[i, r, o] * x0 + IA[i, r, o + 1] * x1 + IA[i, r, o + 2] * x2
            trace += IA[i, r, r]
        D = x0 * U[vs, o] + x1 * U[vs, o + 1] + x2 * U[vs, o + 2] + armature_at(model, vs)
        if not D > PIVOT_TRUST * trace:
            return RECHECK
        u = tau[vs] - (x0 * pA[i, o] + x1 * pA[i, o + 1] + x2 * pA[i, o + 2])
        Du[vs, 0], Du[vs, 1] = D, u
        if p < 0:
            continue
        Ia = IA[i]
        for r in range(6):  # Ia = IA − U Uᵀ / D, and pa = pA + Ia c + U u / D into pA
            ur = U[vs, r] / D
            for k in range(6):
                Ia[r, k] -= ur * U[vs, k]
        for r in range(6):
            s = pA[i, r] + U[vs, r] * u / D
            for k in range(6):
                s += Ia[r, k] * c[i, k]
            W[0, r] = s
        _add_to_parent(Xb, i, Ia, B[3 * N + 2], IA[p])
        add_parent_force(Xb, i, W, 0, pA, p)  # pA_p += pX_i* pa
    for i in range(N):  # accelerations, root down
        jt, vs, p = ints[i, 1], ints[i, 3], ints[i, 0]
        if jt == FREE:
            if not _root_solve(model, i, vs, IA, pA, a0, tau, qdd, B[3 * N + 2]):
                return RECHECK
            for k in range(3):
                a[i, k] = a0[k] + qdd[vs + 3 + k]
                a[i, 3 + k] = a0[3 + k] + qdd[vs + k]
            continue
        if p >= 0:
            child_rows(Xb, i, a, p, a)
        else:
            child_rows(Xb, i, B[3 * N], 0, a)  # a_0, the first row of that block
        s = Du[vs, 1]
        for k in range(6):
            a[i, k] += c[i, k]
            s -= U[vs, k] * a[i, k]
        x = s / Du[vs, 0]
        qdd[vs] = x
        o = 0 if jt == REVOLUTE else 3
        a[i, o] += geom[i, G_AXIS] * x
        a[i, o + 1] += geom[i, G_AXIS + 1] * x
        a[i, o + 2] += geom[i, G_AXIS + 2] * x
    return OK


@njit(cache=True)
def forward_dynamics_local_entry(address, q, qd, tau, gravity):
    """The control loop's call (a workspace, float64 vectors): q̈ into data.qdd, or RECHECK."""
    model, data = unpack_at(address)
    return forward_dynamics_local_kernel(model, data, q, qd, tau, gravity, data.vectors[QDD_])
