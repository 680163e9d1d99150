"""A floating base's velocity in another representation (model.coordinates.BaseVelocityMap),
block by block (engine/core/base_velocity.hpp). The map is A = blockdiag(X, 1) with Ȧ = blockdiag(Ẋ, 0): only the base's six rows
and columns change, so eqs. 24-25 cost O(6 nv²) and eq. 27 O(6 nv³) here, where the dense
products of engine.coordinates cost O(nv³) and O(nv⁴).

Conventions as iDynTree's (iDynTree/core/include/iDynTree/Core/Twist.h, FrameVelocityRepresentation):
ν_body = X ν with, R and p the base's pose in the world, X = diag(Rᵀ, Rᵀ) for ``mixed``
(ν = [ṗ; ᴬω]) and X = [[Rᵀ, −Rᵀ p̂], [0, Rᵀ]] for ``inertial`` (ν = [ṗ − ᴬω × p; ᴬω]).
"""

from __future__ import annotations

import numpy as np

from . import compiled

BODY, MIXED, INERTIAL = 0, 1, 2
REPRESENTATIONS = {"body": BODY, "mixed": MIXED, "inertial": INERTIAL}
B = 6  # the base's velocity coordinates, first in ν
_NO_VELOCITY = np.zeros(0)


def _c(x):
    return np.ascontiguousarray(x, dtype=float)


def transform(cmap, qbar, nu=None):
    """(X, Ẋ along ν) of a BaseVelocityMap at q̄; Ẋ is None without ν."""
    X, Xdot = np.empty((B, B)), np.empty((B, B))
    compiled.base_transform(_c(cmap.E), _c(cmap.t), _c(qbar), _NO_VELOCITY if nu is None else _c(nu),
                            REPRESENTATIONS[cmap.representation], X, Xdot)
    return X, None if nu is None else Xdot


def rate_basis(cmap, qbar):
    """Ẋ(e_k) for the base's six velocity coordinates, shape (6, 6, 6)."""
    return np.stack([transform(cmap, qbar, e)[1] for e in np.eye(B)])


class Evaluation:
    """A BaseVelocityMap evaluated: q = q̄, A = blockdiag(X, 1), Ȧ = blockdiag(Ẋ, 0) as full
    matrices (engine.coordinates takes the block path where it can and these where it cannot)."""

    def __init__(self, cmap):
        self.map = cmap

    def full_configuration(self, qbar) -> np.ndarray:
        return np.asarray(qbar, dtype=float)

    def jacobian(self, qbar) -> np.ndarray:
        A = np.eye(self.map.nv)
        A[0:B, 0:B] = transform(self.map, qbar)[0]
        return A

    def jacobian_rate(self, qbar, vbar):
        if self.map.representation == "body":
            return None
        Adot = np.zeros((self.map.nv, self.map.nv))
        Adot[0:B, 0:B] = transform(self.map, qbar, np.asarray(vbar, dtype=float)[0:B])[1]
        return Adot

    def rate_basis(self, qbar):
        """Ȧ(e_k) for every k (nv x nv x nv); only the base's six are nonzero."""
        if self.map.representation == "body":
            return None
        n = self.map.nv
        D = np.zeros((n, n, n))
        D[0:B, 0:B, 0:B] = rate_basis(self.map, qbar).transpose(1, 2, 0)
        return D

    def random_configuration(self, rng) -> np.ndarray:
        return self.map.robot.random_configuration(rng)


def coriolis_kernel(X, Xdot, M, Mdot, C, Mbar, Mdotbar, Cbar):
    """Eqs. 24-25: M̄ = AᵀMA, C̄ = AᵀCA + AᵀMȦ, Ṁ̄ = AᵀṀA + AᵀMȦ + (AᵀMȦ)ᵀ, into Mbar, Mdotbar, Cbar."""
    compiled.base_coriolis(_c(X), _c(Xdot), _c(M), _c(Mdot), _c(C), Mbar, Mdotbar, Cbar)


def christoffel_kernel(X, Xdot_basis, M, Gamma, out):
    """Eq. 27 for generalized speeds into out."""
    compiled.base_christoffel(_c(X), _c(Xdot_basis), _c(M), _c(Gamma), out)


def reference_kernel(X, Xdot, qd, qd_r, qdd_r, out):
    """The tree's reference state: out = (A q̄̇, A q̄̇_r, A q̄̈_r + Ȧ q̄̇_r)."""
    compiled.base_reference(_c(X), _c(Xdot), _c(qd), _c(qd_r), _c(qdd_r), out)


def mass_matrix_kernel(X, M, Mbar):
    """M̄ = AᵀMA, symmetrized, into Mbar."""
    compiled.base_mass_matrix(_c(X), _c(M), Mbar)


def _hat(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def _pose(cmap, qbar):
    """(R, p) of the base in the world: R = E R(quaternion), p = t + E q[0:3]."""
    x, y, z, w = np.asarray(qbar[3:7], dtype=float) / np.linalg.norm(qbar[3:7])
    Rq = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                   [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                   [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    return cmap.E @ Rq, cmap.t + cmap.E @ np.asarray(qbar[0:3], dtype=float)


def _rate(representation, R, p, w):
    """D_X[w]: the change of X as the base moves by the body twist w = [w_v; w_ω] (R → R(1 + [w_ω]×),
    p → p + R w_v): −[w_ω]× Rᵀ on the diagonal blocks, and for ``inertial`` [w_ω]× Rᵀ p̂ − [w_v]× Rᵀ
    beside them. Ẋ along ν is D_X[X ν]."""
    out = np.zeros((B, B))
    Rt = R.T
    out[0:3, 0:3] = out[3:6, 3:6] = -_hat(w[3:6]) @ Rt
    if representation == "inertial":
        out[0:3, 3:6] = _hat(w[3:6]) @ Rt @ _hat(p) - _hat(w[0:3]) @ Rt
    return out


def _second_rate(representation, R, p, w, d):
    """d/dε D_X(q ⊕ ε d)[w] for a fixed body twist w."""
    out = np.zeros((B, B))
    Rt = R.T
    out[0:3, 0:3] = out[3:6, 3:6] = _hat(w[3:6]) @ _hat(d[3:6]) @ Rt
    if representation == "inertial":
        out[0:3, 3:6] = (_hat(w[3:6]) @ (-_hat(d[3:6]) @ Rt @ _hat(p) + _hat(d[0:3]) @ Rt)
                         + _hat(w[0:3]) @ _hat(d[3:6]) @ Rt)
    return out


def map_derivatives(cmap, qbar, nu):
    """(dX, dẊ), each (6, 6, 6): [k] the derivative of X and of Ẋ along ν as the base moves along
    its body twist e_k (the tree's tangent), for the chain rule of the derivatives."""
    R, p = _pose(cmap, qbar)
    X = transform(cmap, qbar)[0]
    w = X @ nu
    dX, dXdot = np.zeros((B, B, B)), np.zeros((B, B, B))
    for k in range(B):
        d = np.zeros(B)
        d[k] = 1.0
        dX[k] = _rate(cmap.representation, R, p, d)
        dXdot[k] = _second_rate(cmap.representation, R, p, w, d) + _rate(cmap.representation, R, p, dX[k] @ nu)
    return dX, dXdot


def _third_rate(representation, R, p, w, d, e):
    """d/dε of _second_rate(w, d) as the base moves along the body twist e (w and d fixed)."""
    out = np.zeros((B, B))
    Rt = R.T
    out[0:3, 0:3] = out[3:6, 3:6] = -_hat(w[3:6]) @ _hat(d[3:6]) @ _hat(e[3:6]) @ Rt
    if representation == "inertial":
        dRtp = -_hat(e[3:6]) @ Rt @ _hat(p) + _hat(e[0:3]) @ Rt  # d(Rᵀ p̂) along e
        out[0:3, 3:6] = (_hat(w[3:6]) @ (-_hat(d[3:6]) @ dRtp - _hat(d[0:3]) @ _hat(e[3:6]) @ Rt)
                         - _hat(w[0:3]) @ _hat(d[3:6]) @ _hat(e[3:6]) @ Rt)
    return out


def map_second_derivatives(cmap, qbar, nu):
    """(d²X, d²Ẋ), each (6, 6, 6, 6): [m2, m] the derivative along e_m2 of X's (and Ẋ's along ν)
    derivative along e_m, for the second-order chain rule."""
    R, p = _pose(cmap, qbar)
    rep = cmap.representation
    X = transform(cmap, qbar)[0]
    w = X @ nu
    eye = np.eye(B)
    dX = np.array([_rate(rep, R, p, eye[m]) for m in range(B)])
    d2X, d2Xdot = np.zeros((B, B, B, B)), np.zeros((B, B, B, B))
    for m2 in range(B):
        for m in range(B):
            d2X[m2, m] = _second_rate(rep, R, p, eye[m], eye[m2])
    for m2 in range(B):
        for m in range(B):
            # dẊ_m = S2(w, e_m) + R1(dX_m ν); along e_m2: S3 + S2(dX_m2 ν, e_m) + S2(dX_m ν, e_m2) + R1(d²X ν)
            d2Xdot[m2, m] = (_third_rate(rep, R, p, w, eye[m], eye[m2]) + _second_rate(rep, R, p, dX[m2] @ nu, eye[m])
                             + _second_rate(rep, R, p, dX[m] @ nu, eye[m2]) + _rate(rep, R, p, d2X[m2, m] @ nu))
    return d2X, d2Xdot
