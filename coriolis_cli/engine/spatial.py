"""Spatial algebra on flat arrays, angular-first (Featherstone): v = [ω; v_O], f = [n_O; f].

crm(v) = [[ω×, 0], [v×, ω×]]   (motion cross)
crf(v) = -crm(v)ᵀ = [[ω×, v×], [0, ω×]]   (force cross, v×*)
(f ×̄*) = [[-n×, -f×], [-f×, 0]]   so that (f ×̄*) w = w ×* f
B(v, I) = ½ [crf(v) I + (I v) ×̄* - I crm(v)]   (core paper eq. 10, Christoffel-consistent)
B(v, I) = crf(v) I                              (eq. 9, admissible only)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .jit import helper

CHRISTOFFEL, FEATHERSTONE = 0, 1
FACTORIZATIONS = {"christoffel": CHRISTOFFEL, "featherstone": FEATHERSTONE}
STANDARD_GRAVITY = np.array([0.0, 0.0, -9.81])  # m/s², world z up; gravity=True everywhere
STANDARD_GRAVITY.setflags(write=False)


@njit(cache=True)  # tests call it from Python
def crm_mat(v, out):
    """out (6x6) = crm(v)."""
    for r in range(6):
        for c in range(6):
            out[r, c] = 0.0
    w0, w1, w2, l0, l1, l2 = v[0], v[1], v[2], v[3], v[4], v[5]
    for o in (0, 3):
        out[o + 0, o + 1] = -w2
        out[o + 0, o + 2] = w1
        out[o + 1, o + 0] = w2
        out[o + 1, o + 2] = -w0
        out[o + 2, o + 0] = -w1
        out[o + 2, o + 1] = w0
    out[3, 1] = -l2
    out[3, 2] = l1
    out[4, 0] = l2
    out[4, 2] = -l0
    out[5, 0] = -l1
    out[5, 1] = l0


@helper
def crm_vec(v, w, out):
    """out = v × w (motion cross product)."""
    w0, w1, w2, l0, l1, l2 = v[0], v[1], v[2], v[3], v[4], v[5]
    a0, a1, a2, b0, b1, b2 = w[0], w[1], w[2], w[3], w[4], w[5]
    out[0] = w1 * a2 - w2 * a1
    out[1] = w2 * a0 - w0 * a2
    out[2] = w0 * a1 - w1 * a0
    out[3] = w1 * b2 - w2 * b1 + l1 * a2 - l2 * a1
    out[4] = w2 * b0 - w0 * b2 + l2 * a0 - l0 * a2
    out[5] = w0 * b1 - w1 * b0 + l0 * a1 - l1 * a0


@njit(cache=True)
def crf_vec(v, f, out):
    """out = v ×* f (force cross product)."""
    w0, w1, w2, l0, l1, l2 = v[0], v[1], v[2], v[3], v[4], v[5]
    n0, n1, n2, f0, f1, f2 = f[0], f[1], f[2], f[3], f[4], f[5]
    out[0] = w1 * n2 - w2 * n1 + l1 * f2 - l2 * f1
    out[1] = w2 * n0 - w0 * n2 + l2 * f0 - l0 * f2
    out[2] = w0 * n1 - w1 * n0 + l0 * f1 - l1 * f0
    out[3] = w1 * f2 - w2 * f1
    out[4] = w2 * f0 - w0 * f2
    out[5] = w0 * f1 - w1 * f0


@helper
def matvec6(A, x, out):
    for r in range(6):
        s = 0.0
        for c in range(6):
            s += A[r, c] * x[c]
        out[r] = s


@helper
def dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit(cache=True)
def spatial_inertia(m, c, Ic, IC, i):
    """IC[i] = the 6x6 inertia about the frame origin from mass, COM c and rotational inertia Ic
    about the COM (indexed in place: no view of IC[i])."""
    # [[Ic + m cx cxᵀ, m cx], [m cxᵀ, m 1]]
    cx, cy, cz = c[0], c[1], c[2]
    # m * cx cxᵀ = m (|c|² 1 - c cᵀ)
    cc = cx * cx + cy * cy + cz * cz
    for r in range(3):
        for s in range(3):
            IC[i, r, s] = Ic[r, s] - m * c[r] * c[s]
        IC[i, r, r] += m * cc
    # m * skew(c)
    IC[i, 0, 3] = 0.0
    IC[i, 0, 4] = -m * cz
    IC[i, 0, 5] = m * cy
    IC[i, 1, 3] = m * cz
    IC[i, 1, 4] = 0.0
    IC[i, 1, 5] = -m * cx
    IC[i, 2, 3] = -m * cy
    IC[i, 2, 4] = m * cx
    IC[i, 2, 5] = 0.0
    for r in range(3):
        for s in range(3):
            IC[i, 3 + r, s] = IC[i, s, 3 + r]
            IC[i, 3 + r, 3 + s] = 0.0
        IC[i, 3 + r, 3 + r] = m


@helper
def add_bar_crf(h, out):
    """out += (h ×̄*) = [[-n×, -f×], [-f×, 0]] for h = [n; f]."""
    n0, n1, n2, f0, f1, f2 = h[0], h[1], h[2], h[3], h[4], h[5]
    out[0, 1] += n2
    out[0, 2] -= n1
    out[1, 0] -= n2
    out[1, 2] += n0
    out[2, 0] += n1
    out[2, 1] -= n0
    for o1, o2 in ((0, 3), (3, 0)):
        out[o1 + 0, o2 + 1] += f2
        out[o1 + 0, o2 + 2] -= f1
        out[o1 + 1, o2 + 0] -= f2
        out[o1 + 1, o2 + 2] += f0
        out[o1 + 2, o2 + 0] += f1
        out[o1 + 2, o2 + 1] -= f0


@helper
def add_child_composite(A, p, b):
    """A[p] += A[b] for 6x6 composites (indices, not views: no reference counting in loops)."""
    for r in range(6):
        for c in range(6):
            A[p, r, c] += A[b, r, c]


@njit(cache=True)
def body_factorization(v, I, kind, work, out):
    """out = B(v, I); ``work`` is 6x6x2 scratch (no allocation).

    Christoffel (eq. 10) in blocks: with I = [[J, ĥ], [ĥᵀ, m 1]] (h = m c) and v = [ω; u],
    n = J ω + h × u and f = ω × h + m u (so I v = [n; f]),

        B = [[½(ω̂J − Jω̂) − ½(h uᵀ + u hᵀ − 2 (u·h) 1) − ½ n̂,  0],
             [−f̂,                                                0]]

    The right half vanishes, which makes this about 60 multiplications instead of 500.
    """
    if kind == FEATHERSTONE:
        X = work[0]
        crm_mat(v, X)
        # crf(v) I = -crm(v)ᵀ I
        for r in range(6):
            for c in range(6):
                s = 0.0
                for k in range(6):
                    s -= X[k, r] * I[k, c]
                out[r, c] = s
        return
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    m = I[5, 5]
    h0, h1, h2 = I[2, 4], I[0, 5], I[1, 3]  # ĥ = I[0:3, 3:6]
    # A = ω̂ J (rows: ω × column)
    A = work[0]
    for c in range(3):
        j0, j1, j2 = I[0, c], I[1, c], I[2, c]
        A[0, c] = w1 * j2 - w2 * j1
        A[1, c] = w2 * j0 - w0 * j2
        A[2, c] = w0 * j1 - w1 * j0
    n0 = I[0, 0] * w0 + I[0, 1] * w1 + I[0, 2] * w2 + h1 * u2 - h2 * u1
    n1 = I[1, 0] * w0 + I[1, 1] * w1 + I[1, 2] * w2 + h2 * u0 - h0 * u2
    n2 = I[2, 0] * w0 + I[2, 1] * w1 + I[2, 2] * w2 + h0 * u1 - h1 * u0
    f0 = w1 * h2 - w2 * h1 + m * u0
    f1 = w2 * h0 - w0 * h2 + m * u1
    f2 = w0 * h1 - w1 * h0 + m * u2
    uh = u0 * h0 + u1 * h1 + u2 * h2
    hh = (h0, h1, h2)
    uu = (u0, u1, u2)
    for r in range(3):
        for c in range(3):
            # ½(ω̂J − Jω̂) = ½(A + Aᵀ) since Jω̂ = −(ω̂J)ᵀ
            out[r, c] = 0.5 * (A[r, c] + A[c, r]) - 0.5 * (hh[r] * uu[c] + uu[r] * hh[c])
            out[r, 3 + c] = 0.0
            out[3 + r, 3 + c] = 0.0
        out[r, r] += uh
    # − ½ n̂
    out[0, 1] += 0.5 * n2
    out[0, 2] -= 0.5 * n1
    out[1, 0] -= 0.5 * n2
    out[1, 2] += 0.5 * n0
    out[2, 0] += 0.5 * n1
    out[2, 1] -= 0.5 * n0
    # − f̂
    out[3, 0] = 0.0
    out[3, 1] = f2
    out[3, 2] = -f1
    out[4, 0] = -f2
    out[4, 1] = 0.0
    out[4, 2] = f0
    out[5, 0] = f1
    out[5, 1] = -f0
    out[5, 2] = 0.0


@njit(cache=True)
def body_factorization_dense(v, I, work, out):
    """Eq. (10) term by term with 6x6 products: the reference the block form is tested against."""
    body_factorization(v, I, FEATHERSTONE, work, out)  # crf(v) I, leaves crm(v) in work[0]
    X = work[0]
    for r in range(6):
        for c in range(6):
            s = 0.0
            for k in range(6):
                s += I[r, k] * X[k, c]
            out[r, c] -= s  # − I crm(v)
    h = work[1, 0]
    matvec6(I, v, h)
    add_bar_crf(h, out)
    for r in range(6):
        for c in range(6):
            out[r, c] *= 0.5


@helper
def bar_crf_minus(h, B, out):
    """out = (h ×̄*) - B  (the D of Algorithm 2, line 6)."""
    for r in range(6):
        for c in range(6):
            out[r, c] = -B[r, c]
    add_bar_crf(h, out)
