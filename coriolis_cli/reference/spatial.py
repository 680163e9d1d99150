"""Spatial algebra, angular first (docs/algorithms.md, Spatial conventions), on arrays of any
element type: float64 for numbers, ``object`` holding CasADi SX scalars for tracing."""

from __future__ import annotations

import numpy as np


def skew(x, bk):
    """x× as a 3 x 3 matrix."""
    return bk.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def crm(v, bk):
    """Motion cross product v× = [[ω×, 0], [v_O×, ω×]]."""
    out = bk.zeros((6, 6))
    w = skew(v[0:3], bk)
    out[0:3, 0:3] = w
    out[3:6, 3:6] = w
    out[3:6, 0:3] = skew(v[3:6], bk)
    return out


def crf(v, bk):
    """Force cross product v×* = −(v×)ᵀ."""
    return -crm(v, bk).T


def cross_bar_star(f, bk):
    """f ×̄* with (f ×̄*) v = v ×* f: [[−n×, −f×], [−f×, 0]] for f = [n; f]."""
    out = bk.zeros((6, 6))
    fl = skew(f[3:6], bk)
    out[0:3, 0:3] = -skew(f[0:3], bk)
    out[0:3, 3:6] = -fl
    out[3:6, 0:3] = -fl
    return out


def body_coriolis_definition(v, inertia, bk):
    """B(v, I) of eq. (10), the Christoffel-consistent factorization, as the paper writes it:
    ½ [crf(v) I + (I v) ×̄* − I crm(v)]."""
    return 0.5 * (crf(v, bk) @ inertia + cross_bar_star(inertia @ v, bk) - inertia @ crm(v, bk))


def body_coriolis(v, inertia, bk):
    """B(v, I) of eq. (10) in blocks: with I = [[J, ĥ], [ĥᵀ, m 1]] and v = [ω; u], I v = [n; f],
    B = [[½(ω̂J − Jω̂) − ½(h uᵀ + u hᵀ) + (u·h) 1 − ½ n̂, 0], [−f̂, 0]] (engine.spatial derives it;
    tests hold it to the definition). Its right half vanishes exactly: on symbols the generic
    products leave it as expressions that cancel only in value, which generated code computes."""
    w, u = v[0:3], v[3:6]
    J, m = inertia[0:3, 0:3], inertia[5, 5]
    h = bk.array([inertia[2, 4], inertia[0, 5], inertia[1, 3]])
    n = J @ w + skew(h, bk) @ u
    f = skew(w, bk) @ h + bk.scale(m, u)
    A, N = skew(w, bk) @ J, skew(n, bk)
    uh = u @ h
    out = bk.zeros((6, 6))
    for r in range(3):
        for c in range(3):
            out[r, c] = 0.5 * (A[r, c] + A[c, r]) - 0.5 * (h[r] * u[c] + u[r] * h[c]) - 0.5 * N[r, c] + (uh if r == c else 0.0)
    out[3:6, 0:3] = -skew(f, bk)
    return out


def spatial_inertia(mass, com, inertia_com, bk):
    """[[I_c − m ĉĉ, m ĉ], [−m ĉ, m 1]] about the origin, for a body of mass m with its COM at c
    and rotational inertia I_c about the COM (all in one frame's axes)."""
    c = skew(com, bk)
    out = bk.zeros((6, 6))
    out[0:3, 0:3] = inertia_com - mass * (c @ c)
    out[0:3, 3:6] = mass * c
    out[3:6, 0:3] = -mass * c
    out[3:6, 3:6] = mass * np.eye(3)
    return out


def quaternion_matrix(x, y, z, w, bk):
    """The rotation of the unit quaternion (x, y, z, w) (scalar last, Pinocchio's order),
    normalized here as the engine does."""
    norm = bk.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    return bk.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])
