"""Forward pass shared by the algorithms: everything expressed once in one inertial frame.

Fixed base: the world frame. Floating base: the frame that coincides with the base body at this
instant (M, C and Γ of a free-flyer do not depend on the base pose), so the free joint's motion
subspace is the constant P = [[0, I3], [I3, 0]] and its Φ̊ = 0.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..model.tree import FREE, PRISMATIC
from .layout import G_AXIS, G_COM, G_INERTIA, G_MASS, G_ROT, G_TRANS
from .spatial import crm_vec, spatial_inertia


@njit(cache=True)
def views(ws, N, n):
    """Slice the workspace buffer into named arrays (views, no allocation)."""
    o = 0
    R = ws[o : o + 9 * N].reshape((N, 3, 3))
    o += 9 * N
    pos = ws[o : o + 3 * N].reshape((N, 3))
    o += 3 * N
    S = ws[o : o + 6 * n].reshape((n, 6))
    o += 6 * n
    Sd = ws[o : o + 6 * n].reshape((n, 6))
    o += 6 * n
    v = ws[o : o + 6 * N].reshape((N, 6))
    o += 6 * N
    IC = ws[o : o + 36 * N].reshape((N, 6, 6))
    o += 36 * N
    BC = ws[o : o + 36 * N].reshape((N, 6, 6))
    o += 36 * N
    a = ws[o : o + 6 * N].reshape((N, 6))
    o += 6 * N
    f = ws[o : o + 6 * N].reshape((N, 6))
    o += 6 * N
    F = ws[o : o + 36].reshape((6, 6))
    o += 36
    T = ws[o : o + 4 * 36].reshape((4, 6, 6))
    o += 4 * 36
    G = ws[o : o + 216].reshape((6, 6, 6))
    return R, pos, S, Sd, v, IC, BC, a, f, F, T, G


@njit(cache=True)
def _rodrigues(axis, angle, out):
    x, y, z = axis[0], axis[1], axis[2]
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    out[0, 0] = t * x * x + c
    out[0, 1] = t * x * y - s * z
    out[0, 2] = t * x * z + s * y
    out[1, 0] = t * x * y + s * z
    out[1, 1] = t * y * y + c
    out[1, 2] = t * y * z - s * x
    out[2, 0] = t * x * z - s * y
    out[2, 1] = t * y * z + s * x
    out[2, 2] = t * z * z + c


@njit(cache=True)
def forward_kinematics(ints, cols, geom, q, R, pos, S, IC, T):
    """Body rotations/positions, world motion subspaces S (nv x 6) and world inertias into IC.

    T is 6x6x2 scratch from the workspace (no allocation per call).
    """
    N = ints.shape[0]
    Rj = T[0, 0:3, 0:3]
    Rq = T[0, 3:6, 0:3]
    tmp = T[0, 0:3, 3:6]
    Icw = T[0, 3:6, 3:6]
    w = T[1, 0, 0:3]
    cw = T[1, 1, 0:3]
    for i in range(N):
        p = ints[i, 0]
        jt = ints[i, 1]
        qs = ints[i, 2]
        vs = ints[i, 3]
        g = geom[i]
        if jt == FREE:
            for r in range(3):
                pos[i, r] = 0.0
                for c in range(3):
                    R[i, r, c] = 1.0 if r == c else 0.0
            for k in range(6):
                for r in range(6):
                    S[vs + k, r] = 0.0
            # ν = [v; ω]: linear columns first, S = P in angular-first coordinates
            for k in range(3):
                S[vs + k, 3 + k] = 1.0
                S[vs + 3 + k, k] = 1.0
        else:
            # joint frame in world: Rj = R_p rot, pj = p_p + R_p trans
            for r in range(3):
                for c in range(3):
                    s = 0.0
                    if p >= 0:
                        for k in range(3):
                            s += R[p, r, k] * g[G_ROT + 3 * k + c]
                    else:
                        s = g[G_ROT + 3 * r + c]
                    Rj[r, c] = s
                s = g[G_TRANS + r] if p < 0 else pos[p, r]
                if p >= 0:
                    for k in range(3):
                        s += R[p, r, k] * g[G_TRANS + k]
                pos[i, r] = s
            for r in range(3):
                w[r] = Rj[r, 0] * g[G_AXIS] + Rj[r, 1] * g[G_AXIS + 1] + Rj[r, 2] * g[G_AXIS + 2]
            if jt == PRISMATIC:
                for r in range(3):
                    pos[i, r] += w[r] * q[qs]
                    for c in range(3):
                        R[i, r, c] = Rj[r, c]
                for r in range(3):
                    S[vs, r] = 0.0
                    S[vs, 3 + r] = w[r]
            else:
                _rodrigues(g[G_AXIS : G_AXIS + 3], q[qs], Rq)
                for r in range(3):
                    for c in range(3):
                        R[i, r, c] = Rj[r, 0] * Rq[0, c] + Rj[r, 1] * Rq[1, c] + Rj[r, 2] * Rq[2, c]
                # S = [w; pos × w]
                S[vs, 0] = w[0]
                S[vs, 1] = w[1]
                S[vs, 2] = w[2]
                S[vs, 3] = pos[i, 1] * w[2] - pos[i, 2] * w[1]
                S[vs, 4] = pos[i, 2] * w[0] - pos[i, 0] * w[2]
                S[vs, 5] = pos[i, 0] * w[1] - pos[i, 1] * w[0]
        # world inertia: COM cw = pos + R com, Icw = R Ic Rᵀ
        for r in range(3):
            s = pos[i, r]
            for k in range(3):
                s += R[i, r, k] * g[G_COM + k]
            cw[r] = s
        for r in range(3):
            for c in range(3):
                s = 0.0
                for k in range(3):
                    s += R[i, r, k] * g[G_INERTIA + 3 * k + c]
                tmp[r, c] = s
        for r in range(3):
            for c in range(3):
                s = 0.0
                for k in range(3):
                    s += tmp[r, k] * R[i, c, k]
                Icw[r, c] = s
        spatial_inertia(g[G_MASS], cw, Icw, IC[i])


@njit(cache=True)
def body_velocities(ints, cols, S, qd, v, Sd):
    """v_i = v_p(i) + S_i q̇_i and Ṡ_i = v_i × S_i (world frame, Φ̊ = 0 for every joint here)."""
    n = cols.shape[0]
    for c in range(n):
        b = cols[c, 0]
        if c == 0 or cols[c - 1, 0] != b:  # first column of body b: start from the parent
            p = ints[b, 0]
            for r in range(6):
                v[b, r] = v[p, r] if p >= 0 else 0.0
        for r in range(6):
            v[b, r] += S[c, r] * qd[c]
    for c in range(n):
        crm_vec(v[cols[c, 0]], S[c], Sd[c])
