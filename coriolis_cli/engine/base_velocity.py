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
