"""Forward pass shared by the algorithms: everything expressed once in the computation frame.

Fixed base: a frame at the root joint, with world axes. Floating base: the frame that coincides
with the base body at this instant (M, C and Γ of a free-flyer do not depend on the base pose), so
the free joint's motion subspace is the constant P = [[0, I3], [I3, 0]] and its Φ̊ = 0.
"""

from __future__ import annotations

from numba import njit

from ..model.tree import G_COM, G_INERTIA, G_MASS, G_ROT, G_TRANS
from .joints import place_body
from .spatial import crm_vec, spatial_inertia


@njit(cache=True)
def configuration(work, nq):
    """The configuration as the kernels use it (see joints.load_configuration): the first nq doubles."""
    return work[0:nq]


@njit(cache=True)
def views(work, N, n, nq):
    """Slice the workspace buffer into named arrays (views, no allocation)."""
    o = nq
    R = work[o : o + 9 * N].reshape((N, 3, 3))
    o += 9 * N
    pos = work[o : o + 3 * N].reshape((N, 3))
    o += 3 * N
    S = work[o : o + 6 * n].reshape((n, 6))
    o += 6 * n
    Sd = work[o : o + 6 * n].reshape((n, 6))
    o += 6 * n
    v = work[o : o + 6 * N].reshape((N, 6))
    o += 6 * N
    IC = work[o : o + 36 * N].reshape((N, 6, 6))
    o += 36 * N
    BC = work[o : o + 36 * N].reshape((N, 6, 6))
    o += 36 * N
    a = work[o : o + 6 * N].reshape((N, 6))
    o += 6 * N
    f = work[o : o + 6 * N].reshape((N, 6))
    o += 6 * N
    F = work[o : o + 36].reshape((6, 6))
    o += 36
    T = work[o : o + 4 * 36].reshape((4, 6, 6))
    o += 4 * 36
    G = work[o : o + 216].reshape((6, 6, 6))
    return R, pos, S, Sd, v, IC, BC, a, f, F, T, G


@njit(cache=True)
def forward_kinematics(model, q, R, pos, S, IC, T):
    """Body rotations/positions, motion subspaces S (nv x 6) and inertias into IC, all in the
    computation frame. T is 6x6x4 scratch from the workspace (no allocation per call)."""
    ints, geom = model.ints, model.geom
    N = ints.shape[0]
    Rj = T[0, 0:3, 0:3]
    Rq = T[0, 3:6, 0:3]
    tmp = T[0, 0:3, 3:6]
    Icw = T[0, 3:6, 3:6]
    cw = T[1, 1, 0:3]
    for i in range(N):  # geom and the outputs are indexed in place (no row views in this loop)
        p = ints[i, 0]
        # joint frame: Rj = R_p rot, pos_i = p_p + R_p trans
        for r in range(3):
            for c in range(3):
                if p >= 0:
                    Rj[r, c] = (R[p, r, 0] * geom[i, G_ROT + c] + R[p, r, 1] * geom[i, G_ROT + 3 + c]
                                + R[p, r, 2] * geom[i, G_ROT + 6 + c])
                else:
                    Rj[r, c] = geom[i, G_ROT + 3 * r + c]
            if p >= 0:
                pos[i, r] = (pos[p, r] + R[p, r, 0] * geom[i, G_TRANS] + R[p, r, 1] * geom[i, G_TRANS + 1]
                             + R[p, r, 2] * geom[i, G_TRANS + 2])
            else:
                pos[i, r] = geom[i, G_TRANS + r]
        place_body(ints[i, 1], geom, q, ints[i, 2], ints[i, 3], Rj, i, R, pos, S, Rq)
        # inertia in the computation frame: COM cw = pos + R com, Icw = R Ic Rᵀ
        for r in range(3):
            cw[r] = pos[i, r] + R[i, r, 0] * geom[i, G_COM] + R[i, r, 1] * geom[i, G_COM + 1] + R[i, r, 2] * geom[i, G_COM + 2]
        for r in range(3):
            for c in range(3):
                tmp[r, c] = (R[i, r, 0] * geom[i, G_INERTIA + c] + R[i, r, 1] * geom[i, G_INERTIA + 3 + c]
                             + R[i, r, 2] * geom[i, G_INERTIA + 6 + c])
        for r in range(3):
            for c in range(r, 3):
                s = tmp[r, 0] * R[i, c, 0] + tmp[r, 1] * R[i, c, 1] + tmp[r, 2] * R[i, c, 2]
                Icw[r, c] = s
                Icw[c, r] = s
        spatial_inertia(geom[i, G_MASS], cw, Icw, IC, i)


@njit(cache=True)
def body_velocities(model, S, qd, v, Sd):
    """v_i = v_p(i) + S_i q̇_i and Ṡ_i = v_i × S_i (Φ̊ = 0 for every joint in this frame)."""
    ints, cols = model.ints, model.cols
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
