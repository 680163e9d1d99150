"""Forward pass shared by the algorithms: everything expressed once in the computation frame.

Fixed base: a frame at the root joint, with world axes. Floating base: the frame that coincides
with the base body at this instant (M, C and Γ of a free-flyer do not depend on the base pose), so
the free joint's motion subspace is the constant P = [[0, I3], [I3, 0]] and its Φ̊ = 0.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ..model.tree import G_COM, G_INERTIA, G_MASS, G_TRANS
from .data import unpack
from .jit import helper
from .joints import failed, load_configuration, load_state, place_body
from .spatial import crm_vec, spatial_inertia


class Parts(NamedTuple):
    """The workspace's parts under the names the listings use. Every part is a slice along the
    first axis of a pre-shaped array (engine.data.KernelData): such views cost nothing, where
    reshaping a flat buffer cost 20 ns each per call."""

    X: np.ndarray  # (N, 6, 6): X[i, 0:3, 0:3] = R_i and X[i, 3, 0:3] = p_i, body i's placement
    S: np.ndarray  # (nv, 6): motion subspace columns
    Sd: np.ndarray  # (nv, 6): Ṡ = v × S
    v: np.ndarray  # (N, 6): body velocities
    IC: np.ndarray  # (N, 6, 6): (composite) spatial inertias
    BC: np.ndarray  # (N, 6, 6): (composite) body-level Coriolis factors B(v_i, I_i)
    a: np.ndarray  # (N, 6): body accelerations
    f: np.ndarray  # (N, 6): body forces
    F: np.ndarray  # (6, 6): six 6-vectors of scratch (F1, F2, F3, ...)
    T: np.ndarray  # (4, 6, 6): 6 x 6 scratch
    G: np.ndarray  # (6, 6, 6): 6 x 6 scratch for Algorithm 2


@helper
def views(data, N, n):
    """The workspace's parts, named (see Parts); blocks = IC, BC, X, F, T, G and rows = S, Ṡ, v,
    a, f (then the Slotine–Li reference velocities), the layout engine.data.workspace_shapes sizes."""
    B, V = data.blocks, data.rows
    return Parts(X=B[2 * N : 3 * N], S=V[0:n], Sd=V[n : 2 * n], v=V[2 * n : 2 * n + N], IC=B[0:N], BC=B[N : 2 * N],
                 a=V[2 * n + N : 2 * n + 2 * N], f=V[2 * n + 2 * N : 2 * n + 3 * N], F=B[3 * N],
                 T=B[3 * N + 1 : 3 * N + 5], G=B[3 * N + 5 : 3 * N + 11])


@helper
def forward_pass(model, data, q, qd, second, third, mode):
    """The prologue Algorithm 1, RNEA and Slotine–Li share: q and the velocities loaded and
    checked (engine.joints.load_state, ``mode`` says which), then in the computation frame the
    placements X, motion subspaces S and inertias IC, the body velocities v and Ṡ = v × S.
    Returns the status code; on a failure nothing else is done."""
    status = load_state(model, q, data.q, qd, second, third, mode)
    if failed(status):
        return status
    parts = views(data, model.ints.shape[0], model.cols.shape[0])
    forward_kinematics(model, data.q, parts.X, parts.S, parts.IC, parts.T)
    body_velocities(model, parts.S, qd, parts.v, parts.Sd)
    return status


@helper
def forward_kinematics(model, q, X, S, IC, T):
    """Body placements X (see views), motion subspaces S (nv x 6) and inertias into IC, all in
    the computation frame. T is 6x6x4 scratch from the workspace (no allocation per call)."""
    ints, geom = model.ints, model.geom
    N = ints.shape[0]
    tmp = T[0, 0:3, 3:6]
    Icw = T[0, 3:6, 3:6]
    cw = T[1, 1, 0:3]
    for i in range(N):  # geom and the outputs are indexed in place (no row views in this loop)
        p = ints[i, 0]
        # joint origin: pos_i = p_p + R_p trans
        for r in range(3):
            if p >= 0:
                X[i, 3, r] = (X[p, 3, r] + X[p, r, 0] * geom[i, G_TRANS] + X[p, r, 1] * geom[i, G_TRANS + 1]
                              + X[p, r, 2] * geom[i, G_TRANS + 2])
            else:
                X[i, 3, r] = geom[i, G_TRANS + r]
        place_body(ints[i, 1], geom, q, ints[i, 2], ints[i, 3], p, i, X, S)
        # inertia in the computation frame: COM cw = pos + R com, Icw = R Ic Rᵀ
        for r in range(3):
            cw[r] = X[i, 3, r] + X[i, r, 0] * geom[i, G_COM] + X[i, r, 1] * geom[i, G_COM + 1] + X[i, r, 2] * geom[i, G_COM + 2]
        for r in range(3):
            for c in range(3):
                tmp[r, c] = (X[i, r, 0] * geom[i, G_INERTIA + c] + X[i, r, 1] * geom[i, G_INERTIA + 3 + c]
                             + X[i, r, 2] * geom[i, G_INERTIA + 6 + c])
        for r in range(3):
            for c in range(r, 3):
                s = tmp[r, 0] * X[i, c, 0] + tmp[r, 1] * X[i, c, 1] + tmp[r, 2] * X[i, c, 2]
                Icw[r, c] = s
                Icw[c, r] = s
        spatial_inertia(geom[i, G_MASS], cw, Icw, IC, i)


@helper
def propagate(model, S, x, out):
    """out_i = out_p(i) + S_i x_i, zero above the roots: body velocities for x = q̇ (and the
    reference velocities of the Slotine–Li recursion for x = q̇_r)."""
    ints, cols = model.ints, model.cols
    n = cols.shape[0]
    for c in range(n):
        b = cols[c, 0]
        if c == 0 or cols[c - 1, 0] != b:  # first column of body b: start from the parent
            p = ints[b, 0]
            for r in range(6):
                out[b, r] = out[p, r] if p >= 0 else 0.0
        for r in range(6):
            out[b, r] += S[c, r] * x[c]


@helper
def body_velocities(model, S, qd, v, Sd):
    """v_i = v_p(i) + S_i q̇_i and Ṡ_i = v_i × S_i (Φ̊ = 0 for every joint in this frame)."""
    cols = model.cols
    propagate(model, S, qd, v)
    for c in range(cols.shape[0]):
        crm_vec(v[cols[c, 0]], S[c], Sd[c])


@helper
def placement_kernel(model, data, q):
    """Body placements and motion subspaces only (see views): what loop closures need."""
    ints, cols = model.ints, model.cols
    N = ints.shape[0]
    n = cols.shape[0]
    status = load_configuration(model, q, data.q)
    if failed(status):
        return status
    parts = views(data, N, n)
    X, S, IC, T = parts.X, parts.S, parts.IC, parts.T
    forward_kinematics(model, data.q, X, S, IC, T)
    return status


@njit(cache=True)
def placement_entry(ints, floats, q):
    """placement_kernel as Python calls it (engine.data's two flat arrays)."""
    model, data = unpack(ints, floats)
    return placement_kernel(model, data, q)
