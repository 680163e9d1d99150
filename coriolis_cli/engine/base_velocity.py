"""A floating base's velocity in another representation (model.coordinates.BaseVelocityMap),
block by block. The map is A = blockdiag(X, 1) with Ȧ = blockdiag(Ẋ, 0): only the base's six rows
and columns change, so eqs. 24-25 cost O(6 nv²) and eq. 27 O(6 nv³) here, where the dense
products of engine.coordinates cost O(nv³) and O(nv⁴).

Conventions as iDynTree's (iDynTree/core/include/iDynTree/Core/Twist.h, FrameVelocityRepresentation):
ν_body = X ν with, R and p the base's pose in the world, X = diag(Rᵀ, Rᵀ) for ``mixed``
(ν = [ṗ; ᴬω]) and X = [[Rᵀ, −Rᵀ p̂], [0, Rᵀ]] for ``inertial`` (ν = [ṗ − ᴬω × p; ᴬω]).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .jit import helper
from .joints import quaternion_matrix

BODY, MIXED, INERTIAL = 0, 1, 2
REPRESENTATIONS = {"body": BODY, "mixed": MIXED, "inertial": INERTIAL}
B = 6  # the base's velocity coordinates, first in ν


@helper
def _hat_into(v, out, r, c):
    """out[r:r+3, c:c+3] = v̂ (the cross-product matrix)."""
    out[r, c], out[r, c + 1], out[r, c + 2] = 0.0, -v[2], v[1]
    out[r + 1, c], out[r + 1, c + 1], out[r + 1, c + 2] = v[2], 0.0, -v[0]
    out[r + 2, c], out[r + 2, c + 1], out[r + 2, c + 2] = -v[1], v[0], 0.0


@njit(cache=True)
def transform_kernel(E, t, q, nu, representation, X, Xdot, W):
    """X, and Ẋ along the base velocity ν when nu has six entries. R = E R(quaternion q[3:7]),
    p = t + E q[0:3]. W: (5, 3, 3) scratch."""
    X[:, :] = 0.0
    Xdot[:, :] = 0.0
    if representation == BODY:
        for k in range(B):
            X[k, k] = 1.0
        return
    x, y, z, w = q[3], q[4], q[5], q[6]
    n = math.sqrt(x * x + y * y + z * z + w * w)
    Rq, Rt, Ph, Rd, T = W[0], W[1], W[2], W[3], W[4]
    quaternion_matrix(x / n, y / n, z / n, w / n, Rq, 0)
    p = np.empty(3)
    for r in range(3):
        p[r] = t[r] + E[r, 0] * q[0] + E[r, 1] * q[1] + E[r, 2] * q[2]
        for c in range(3):
            Rt[c, r] = E[r, 0] * Rq[0, c] + E[r, 1] * Rq[1, c] + E[r, 2] * Rq[2, c]  # Rᵀ
    _hat_into(p, Ph, 0, 0)
    for r in range(3):
        for c in range(3):
            X[r, c] = Rt[r, c]
            X[3 + r, 3 + c] = Rt[r, c]
            if representation == INERTIAL:
                X[r, 3 + c] = -(Rt[r, 0] * Ph[0, c] + Rt[r, 1] * Ph[1, c] + Rt[r, 2] * Ph[2, c])
    if nu.shape[0] < B:
        return
    wb = np.empty(3)  # ᴮω = Rᵀ ᴬω
    for r in range(3):
        wb[r] = Rt[r, 0] * nu[3] + Rt[r, 1] * nu[4] + Rt[r, 2] * nu[5]
    _hat_into(wb, T, 0, 0)
    for r in range(3):  # d/dt Rᵀ = −ᴮω̂ Rᵀ
        for c in range(3):
            Rd[r, c] = -(T[r, 0] * Rt[0, c] + T[r, 1] * Rt[1, c] + T[r, 2] * Rt[2, c])
            Xdot[r, c] = Rd[r, c]
            Xdot[3 + r, 3 + c] = Rd[r, c]
    if representation == INERTIAL:  # d/dt (−Rᵀ p̂) = −(d/dt Rᵀ) p̂ − Rᵀ ṗ̂, ṗ = v_I + ω × p
        pd = np.empty(3)
        for r in range(3):
            pd[r] = nu[r] - (Ph[r, 0] * nu[3] + Ph[r, 1] * nu[4] + Ph[r, 2] * nu[5])
        _hat_into(pd, T, 0, 0)
        for r in range(3):
            for c in range(3):
                Xdot[r, 3 + c] = -(Rd[r, 0] * Ph[0, c] + Rd[r, 1] * Ph[1, c] + Rd[r, 2] * Ph[2, c]) - (
                    Rt[r, 0] * T[0, c] + Rt[r, 1] * T[1, c] + Rt[r, 2] * T[2, c])


@helper
def _transform_rows(X, Y, out):
    """out = Aᵀ Y: the base's rows become Xᵀ Y[0:6], the others are copied."""
    n, m = Y.shape
    for j in range(m):
        for a in range(B):
            s = 0.0
            for b in range(B):
                s += X[b, a] * Y[b, j]
            out[a, j] = s
        for i in range(B, n):
            out[i, j] = Y[i, j]


@helper
def _transform_columns(X, Y):
    """Y = Y A in place: the base's columns become Y[:, 0:6] X."""
    t = np.empty(B)
    for i in range(Y.shape[0]):
        for a in range(B):
            s = 0.0
            for b in range(B):
                s += Y[i, b] * X[b, a]
            t[a] = s
        for a in range(B):
            Y[i, a] = t[a]


@njit(cache=True)
def coriolis_kernel(X, Xdot, M, Mdot, C, Mbar, Mdotbar, Cbar):
    """Eqs. 24-25: M̄ = AᵀMA, C̄ = AᵀCA + AᵀMȦ, Ṁ̄ = AᵀṀA + AᵀMȦ + (AᵀMȦ)ᵀ; M̄ and Ṁ̄ symmetrized
    (symmetric by definition, their products only up to round-off)."""
    n = M.shape[0]
    for Y, out in ((M, Mbar), (Mdot, Mdotbar), (C, Cbar)):
        _transform_rows(X, Y, out)
        _transform_columns(X, out)
    # AᵀMȦ: nonzero in the base's columns only, (AᵀM)[:, 0:6] Ẋ; Mbar's base columns are AᵀM[:, 0:6] X,
    # so take AᵀM[:, 0:6] from M directly
    K = np.empty((n, B))
    for i in range(n):
        for b in range(B):
            if i < B:
                s = 0.0
                for c in range(B):
                    s += X[c, i] * M[c, b]
                K[i, b] = s
            else:
                K[i, b] = M[i, b]
    for i in range(n):
        for a in range(B):
            s = 0.0
            for b in range(B):
                s += K[i, b] * Xdot[b, a]
            Cbar[i, a] += s
            Mdotbar[i, a] += s
            Mdotbar[a, i] += s
    for i in range(n):
        for j in range(i + 1, n):
            for Y in (Mbar, Mdotbar):
                s = 0.5 * (Y[i, j] + Y[j, i])
                Y[i, j] = s
                Y[j, i] = s


@helper
def _transform_first_index(X, G):
    """G[a, j, k] = Σ_b X[b, a] G[b, j, k] for the base's a < 6, in place (a transposed view of Γ
    transforms another index)."""
    t = np.empty(B)
    for j in range(G.shape[1]):
        for k in range(G.shape[2]):
            for a in range(B):
                s = 0.0
                for b in range(B):
                    s += X[b, a] * G[b, j, k]
                t[a] = s
            for a in range(B):
                G[a, j, k] = t[a]


@njit(cache=True)
def christoffel_kernel(X, Xdot_basis, M, Gamma, out):
    """Eq. 27 for generalized speeds: Γ̄_ijk = Σ A_αi A_βj A_γk Γ_αβγ + Σ_β (AᵀM)_iβ Ȧ(e_k)_βj, with
    Ȧ(e_k) = blockdiag(Xdot_basis[k], 0) for the base's k < 6 and zero for the joints'."""
    n = M.shape[0]
    out[:, :, :] = Gamma
    _transform_first_index(X, out)  # i
    _transform_first_index(X, out.transpose((1, 0, 2)))  # j
    _transform_first_index(X, out.transpose((2, 0, 1)))  # k
    for i in range(n):
        for b in range(B):  # (AᵀM)[i, b]
            if i < B:
                m = 0.0
                for c in range(B):
                    m += X[c, i] * M[c, b]
            else:
                m = M[i, b]
            if m != 0.0:
                for j in range(B):
                    for k in range(B):
                        out[i, j, k] += m * Xdot_basis[k, b, j]


@njit(cache=True)
def reference_kernel(X, Xdot, qd, qd_r, qdd_r, out):
    """The tree's reference state: out = (A q̄̇, A q̄̇_r, A q̄̈_r + Ȧ q̄̇_r) with A = blockdiag(X, 1)
    and Ȧ = blockdiag(Ẋ, 0)."""
    n = qd.shape[0]
    for k in range(B, n):
        out[0, k], out[1, k], out[2, k] = qd[k], qd_r[k], qdd_r[k]
    for a in range(B):
        v = vr = ar = 0.0
        for b in range(B):
            v += X[a, b] * qd[b]
            vr += X[a, b] * qd_r[b]
            ar += X[a, b] * qdd_r[b] + Xdot[a, b] * qd_r[b]
        out[0, a], out[1, a], out[2, a] = v, vr, ar


@njit(cache=True)
def mass_matrix_kernel(X, M, Mbar):
    """M̄ = AᵀMA, symmetrized."""
    _transform_rows(X, M, Mbar)
    _transform_columns(X, Mbar)
    n = M.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            s = 0.5 * (Mbar[i, j] + Mbar[j, i])
            Mbar[i, j] = s
            Mbar[j, i] = s


_NO_VELOCITY = np.zeros(0)


def transform(cmap, qbar, nu=None):
    """(X, Ẋ along ν) of a BaseVelocityMap at q̄; Ẋ is None without ν."""
    X, Xdot, W = np.empty((B, B)), np.empty((B, B)), np.empty((5, 3, 3))
    transform_kernel(cmap.E, cmap.t, np.ascontiguousarray(qbar, dtype=float),
                     _NO_VELOCITY if nu is None else np.ascontiguousarray(nu, dtype=float),
                     REPRESENTATIONS[cmap.representation], X, Xdot, W)
    return X, None if nu is None else Xdot


def rate_basis(cmap, qbar):
    """Ẋ(e_k) for the base's six velocity coordinates, shape (6, 6, 6)."""
    return np.stack([transform(cmap, qbar, e)[1] for e in np.eye(B)])
