"""A floating base's velocity in another representation (model.coordinates.BaseVelocityMap),
block by block (engine/core/base_velocity.hpp). The map is A = blockdiag(X, 1) with Ȧ = blockdiag(Ẋ, 0): only the base's six rows
and columns change, so eqs. 24-25 cost O(6 nv²) and eq. 27 O(6 nv³) here, where the dense
products of engine.coordinates cost O(nv³) and O(nv⁴). The derivatives in the mixed and inertial
representations are chain rules through A(q) and Ȧ(q, ν) (``Chain``: X computed once a state), here
too; engine.coordinates sends each one state's call to them.

Conventions as iDynTree's (iDynTree/core/include/iDynTree/Core/Twist.h, FrameVelocityRepresentation):
ν_body = X ν with, R and p the base's pose in the world, X = diag(Rᵀ, Rᵀ) for ``mixed``
(ν = [ṗ; ᴬω]) and X = [[Rᵀ, −Rᵀ p̂], [0, Rᵀ]] for ``inertial`` (ν = [ṗ − ᴬω × p; ᴬω]).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from . import api, compiled

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


class Block:
    """A = blockdiag(X, 1) of a floating-base velocity map (or Ȧ = blockdiag(Ẋ, 0), ``rest`` 0),
    applied with ``@`` to vectors and matrices without forming the nv x nv matrix."""

    __slots__ = ("X", "rest")

    def __init__(self, X, rest=1.0):
        self.X, self.rest = X, rest

    def __matmul__(self, x):
        y = x.copy() if self.rest else np.zeros_like(x)
        y[0:6] = self.X @ x[0:6]
        return y

    @property
    def T(self):
        return Block(self.X.T, self.rest)

    def inverse(self):
        """A⁻¹: X = [[Rᵀ, B], [0, Rᵀ]] (B = 0 or −Rᵀp̂) has X⁻¹ = [[R, Bᵀ], [0, R]], as
        (−Rᵀp̂)ᵀ = p̂R; cheaper than a 6 x 6 LAPACK solve (6 µs)."""
        Xinv = self.X.T.copy()
        Xinv[0:3, 3:6] = self.X[0:3, 3:6].T
        Xinv[3:6, 0:3] = 0.0
        return Block(Xinv)


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


def map_derivatives(cmap, qbar, nu, X=None, pose=None):
    """(dX, dẊ), each (6, 6, 6): [k] the derivative of X and of Ẋ along ν as the base moves along
    its body twist e_k (the tree's tangent), for the chain rule of the derivatives. ``X`` and
    ``pose`` (R, p): the state's, where the caller has them."""
    R, p = _pose(cmap, qbar) if pose is None else pose
    X = transform(cmap, qbar)[0] if X is None else X
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


def map_second_derivatives(cmap, qbar, nu, X=None, pose=None):
    """(d²X, d²Ẋ), each (6, 6, 6, 6): [m2, m] the derivative along e_m2 of X's (and Ẋ's along ν)
    derivative along e_m, for the second-order chain rule (``X``, ``pose`` as map_derivatives')."""
    R, p = _pose(cmap, qbar) if pose is None else pose
    rep = cmap.representation
    X = transform(cmap, qbar)[0] if X is None else X
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


# ---- the derivatives' chain rules through A(q) and Ȧ(q, ν) (mixed and inertial) ------------------
class Chain:
    """One state (q, ν) as the chain rules take it, X computed once: A = blockdiag(X, 1) and
    Ȧ = blockdiag(Ẋ, 0) along ν as n x n matrices, and on first use the rates Ẋ(e_j) (``rates``),
    X's derivatives along the base (``derivatives``: dX, and dẊ along ν) and the base's pose."""

    def __init__(self, cmap, q, nu, n):
        self.map, self.q, self.nu = cmap, q, nu[:B]
        self.X, Xdot = transform(cmap, q, self.nu)
        self.A, self.Adot = np.eye(n), np.zeros((n, n))
        self.A[:B, :B], self.Adot[:B, :B] = self.X, Xdot

    @cached_property
    def pose(self):
        return _pose(self.map, self.q)

    @cached_property
    def rates(self):
        return rate_basis(self.map, self.q)

    @cached_property
    def derivatives(self):
        return map_derivatives(self.map, self.q, self.nu, self.X, self.pose)


def _symmetrize(X, tmp):
    """X = ½ (X + Xᵀ): AᵀMA is symmetric by definition, its products only up to round-off."""
    np.add(X, X.T, out=tmp)
    np.multiply(tmp, 0.5, out=X)


def _rates_applied(rates, x):
    """The matrix whose column j is Ȧ(e_j) x (zero past the base's six): ∂(Ȧ(ν) x)/∂ν."""
    n = len(x)
    out = np.zeros((n, n))
    for j in range(B):
        out[:B, j] = rates[j] @ x[:B]
    return out


def _block(block, n):
    """blockdiag(block, 0), n x n, for a 6 x 6 block."""
    out = np.zeros((n, n))
    out[:B, :B] = block
    return out


def _lifted(block, x):
    """blockdiag(block, 0) @ x for a 6 x 6 block."""
    out = np.zeros(len(x))
    out[:B] = block @ x[:B]
    return out


def inverse_dynamics_derivatives(robot, q, nu, nudot, gravity, d, out):
    """The chain rule through A = blockdiag(X(q), 1), Ȧ = blockdiag(Ẋ(q, ν), 0), with τ̄ = Aᵀ τ(q, v, a),
    v = A ν, a = A ν̇ + Ȧ ν:

        ∂τ̄/∂ν̇ = Aᵀ M A,   ∂τ̄/∂ν = Aᵀ (∂τ/∂q̇ A + M [Ȧ(e_j) ν + Ȧ e_j]_j),
        ∂τ̄/∂δ_k = ∂Aᵀ/∂δ_k τ + Aᵀ (∂τ/∂q e_k + ∂τ/∂q̇ ∂A/∂δ_k ν + M (∂A/∂δ_k ν̇ + ∂Ȧ/∂δ_k ν)),

    δ the tree's tangent (only the base's six move A), and ∂τ̄/∂q̄ = ∂τ̄/∂δ A as q̄ ⊕ δ̄ = q ⊕ A δ̄
    (integrate). X's derivatives: map_derivatives. Into out[0], out[1], out[2]; ``d`` the
    ReducedData whose tree workspace and scratch it uses."""
    c = Chain(robot.map, q, nu, robot.nv)
    A, Adot = c.A, c.Adot
    dX, dXdot = c.derivatives
    v, a = A @ nu, A @ nudot + Adot @ nu
    dq, dv, M = api.inverse_dynamics_derivatives(robot.full, q, v, a, gravity, data=d.full)
    tau = api.inverse_dynamics(robot.full, q, v, a, gravity)
    out[2][...] = A.T @ M @ A
    _symmetrize(out[2], d._sq)
    out[1][...] = A.T @ (dv @ A + M @ (_rates_applied(c.rates, nu) + Adot))
    T = A.T @ dq
    for k in range(B):
        T[:, k] += A.T @ (dv @ _lifted(dX[k], nu) + M @ (_lifted(dX[k], nudot) + _lifted(dXdot[k], nu)))
        T[:B, k] += dX[k].T @ tau[:B]
    np.matmul(T, A, out=out[0])


def slotine_li_derivatives(robot, q, nu, nu_r, nudot_r, gravity, factorization, d, outs):
    """τ̄ = Aᵀ τ_SL(q, A ν, A ν_r, A ν̇_r + Ȧ(ν) ν_r) (Ȧ along the true motion, as slotine_li takes it):

        ∂τ̄/∂ν̇_r = Aᵀ M A,   ∂τ̄/∂ν_r = Aᵀ (C A + M Ȧ),   ∂τ̄/∂ν = Aᵀ (∂τ/∂q̇ A + M [Ȧ(e_j) ν_r]_j),
        ∂τ̄/∂δ_k = ∂Aᵀ/∂δ_k τ + Aᵀ (∂τ/∂q e_k + ∂τ/∂q̇ ∂A_k ν + C ∂A_k ν_r + M (∂A_k ν̇_r + ∂Ȧ_k ν_r)),

    then · A (q̄ moves by integrate(robot, q̄, δ̄)). Into the four arrays ``outs``."""
    c = Chain(robot.map, q, nu, robot.nv)
    A, Adot = c.A, c.Adot
    dX, dXdot = c.derivatives
    v, v_r, a_r = A @ nu, A @ nu_r, A @ nudot_r + Adot @ nu_r
    dq, dv, C, M = api.slotine_li_derivatives(robot.full, q, v, v_r, a_r, gravity, factorization, data=d.full)
    tau = api.slotine_li(robot.full, q, v, v_r, a_r, gravity=gravity, factorization=factorization)
    outs[1][...] = A.T @ (dv @ A + M @ _rates_applied(c.rates, nu_r))
    outs[2][...] = A.T @ (C @ A + M @ Adot)
    outs[3][...] = A.T @ M @ A
    _symmetrize(outs[3], d._sq)
    T = A.T @ dq
    for k in range(B):
        T[:, k] += A.T @ (dv @ _lifted(dX[k], nu) + C @ _lifted(dX[k], nu_r)
                          + M @ (_lifted(dX[k], nudot_r) + _lifted(dXdot[k], nu_r)))
        T[:B, k] += dX[k].T @ tau[:B]
    np.matmul(T, A, out=outs[0])


def gravity_derivatives(robot, q, gravity, d, out):
    """ḡ = Aᵀ g(q): ∂ḡ/∂δ_k = ∂Aᵀ/∂δ_k g + Aᵀ ∂g/∂q e_k, then · A; into out."""
    c = Chain(robot.map, q, np.zeros(robot.nv), robot.nv)
    dX = c.derivatives[0]
    T = c.A.T @ api.gravity_derivatives(robot.full, q, gravity, data=d.full)
    g = api.gravity_vector(robot.full, q, gravity)
    for k in range(B):
        T[:B, k] += dX[k].T @ g[:B]
    np.matmul(T, c.A, out=out)


def coriolis_transpose_derivatives(robot, q, nu, d, out):
    """C̄ᵀν = Aᵀ h + Ȧ(ν)ᵀ p with h = Cᵀ(q, v) v, p = M(q) v, v = A ν:

        ∂/∂ν = Aᵀ ∂h/∂q̇ A + [Ȧ(e_j)ᵀ p]_j + Ȧᵀ M A,
        ∂/∂δ_k = ∂Aᵀ/∂δ_k h + Aᵀ (∂h/∂q e_k + ∂h/∂q̇ ∂A_k ν) + ∂Ȧ_kᵀ p + Ȧᵀ (∂p/∂q e_k + M ∂A_k ν),

    ∂p/∂q being the inverse dynamics' ∂τ/∂q at q̇ = 0, q̈ = v without gravity; then · A. Into
    out[0], out[1]."""
    n = robot.nv
    c = Chain(robot.map, q, nu, n)
    A, Adot, rates = c.A, c.Adot, c.rates
    dX, dXdot = c.derivatives
    v = A @ nu
    dh_dq, dh_dv = api.coriolis_transpose_derivatives(robot.full, q, v, data=d.full)
    h = api.coriolis_transpose_velocity(robot.full, q, v)
    dp_dq, _, M = api.inverse_dynamics_derivatives(robot.full, q, np.zeros(n), v, False)
    p = M @ v
    G = A.T @ dh_dv @ A + Adot.T @ M @ A
    for j in range(B):
        G[:B, j] += rates[j].T @ p[:B]
    out[1][...] = G
    T = A.T @ dh_dq + Adot.T @ dp_dq
    for k in range(B):
        dA_nu = _lifted(dX[k], nu)
        T[:, k] += A.T @ (dh_dv @ dA_nu) + Adot.T @ (M @ dA_nu)
        T[:B, k] += dX[k].T @ h[:B] + dXdot[k].T @ p[:B]
    np.matmul(T, A, out=out[0])


def second_derivatives(robot, q, nu, nudot, gravity, force, out):
    """The second-order chain rule through A = blockdiag(X(q), 1) and Ȧ(q, ν), τ̄ = Aᵀ τ(q, A ν,
    A ν̇ + Ȧ(ν) ν), with the tree's first (τ_q, τ_v, M) and second (T_qq, T_vv, T_qv, T_qa)
    derivatives at (q, v, a) and X's derivatives along the base (first and second:
    map_derivatives, map_second_derivatives). D_m is the total derivative as the tree moves along
    its tangent e_m (A moves only for the base's six); ∂/∂q̄_j = Σ_m A_mj D_m as q̄ moves by
    integrate(robot, q̄, δ̄). With W[:, k] = Ȧ(e_k) ν + Ȧ(ν) e_k (= ∂(Ȧ ν)/∂ν_k):

        ∂²τ̄/∂ν_j∂ν_k = Aᵀ (T_vv[:, A e_j, A e_k] + M (Ȧ(e_k) e_j + Ȧ(e_j) e_k)),
        D_m M̄ = ∂A_mᵀ M A + Aᵀ T_qa[:, m] A + Aᵀ M ∂A_m,
        D_m (∂τ̄/∂ν) = ∂A_mᵀ (τ_v A + M W) + Aᵀ ((T_qv[:, m] + T_vv[:, ∂A_m ν]) A + τ_v ∂A_m + T_qa[:, m] W + M D_m W),
        ∂τ̄/∂q̄ = P A with P[:, m] = D_m τ̄, so D_m' (P A) = (D_m' P) A + P ∂A_m'.

    Into out[0:4]: ∂²τ̄/∂q̄², ∂²τ̄/∂ν², ∂²τ̄/∂q̄∂ν, ∂²τ̄/∂q̄∂ν̇."""
    cmap, n, b = robot.map, robot.nv, B
    c = Chain(cmap, q, nu, n)
    A, Adot, rates = c.A, c.Adot, c.rates
    dX, dXdot = c.derivatives  # along e_m: X's, Ȧ(ν)'s
    v, a = A @ nu, A @ nudot + Adot @ nu
    tau = api.inverse_dynamics(robot.full, q, v, a, gravity)
    tq, tv, M = api.inverse_dynamics_derivatives(robot.full, q, v, a, gravity)
    Tqq, Tvv, Tqv, Tqa = api.inverse_dynamics_second_derivatives(robot.full, q, v, a, gravity, force)
    d2X, d2Xdot = map_second_derivatives(cmap, q, nu[:b], c.X, c.pose)
    dXdot_e = [map_derivatives(cmap, q, np.eye(b)[k], c.X, c.pose)[1] for k in range(b)]  # [k][m]: D_m Ȧ(e_k)
    dA = [_block(dX[m], n) if m < b else None for m in range(n)]
    dAdot = [_block(dXdot[m], n) if m < b else None for m in range(n)]
    W = _rates_applied(rates, nu) + Adot
    # ∂²τ̄/∂ν²
    E = np.zeros((n, n, n))
    for j in range(b):
        for k in range(b):
            E[:b, j, k] = rates[k][:, j] + rates[j][:, k]
    # one index at a time, O(nv⁴): the three-operand einsum summed over b and c at once, O(nv⁵),
    # 15 s on quadruped:100, uninterruptible
    TvvAA = np.tensordot(np.tensordot(Tvv, A, axes=(1, 0)), A, axes=(1, 0))  # [a, j, k]
    out[1][...] = np.tensordot(A, TvvAA + np.tensordot(M, E, axes=(1, 0)), axes=(0, 0))
    # D_m τ of the tree along the map, column m, and P = ∂τ̄/∂δ
    Dtau = tq.copy()
    for m in range(b):
        Dtau[:, m] += tv @ (dA[m] @ nu) + M @ (dA[m] @ nudot + dAdot[m] @ nu)
    P = A.T @ Dtau
    for m in range(b):
        P[:, m] += dA[m].T @ tau
    # the tree-direction derivatives, then · A on the direction index
    G, H, Dp = np.zeros((n, n, n)), np.zeros((n, n, n)), np.zeros((n, n, n))  # [m] = D_m of M̄, ∂τ̄/∂ν, P
    for m in range(n):
        Tvv_m = np.zeros((n, n)) if m >= b else np.einsum("ibk,b->ik", Tvv, dA[m] @ nu)
        G[m] = A.T @ Tqa[:, m, :] @ A
        DW = np.zeros((n, n))
        if m < b:
            G[m] += dA[m].T @ M @ A + A.T @ M @ dA[m]
            for k in range(n):
                DW[:, k] = (_lifted(dXdot_e[k][m], nu) if k < b else 0.0) + dAdot[m][:, k]
        H[m] = A.T @ ((Tqv[:, m, :] + Tvv_m) @ A + Tqa[:, m, :] @ W + M @ DW)
        if m < b:
            H[m] += dA[m].T @ (tv @ A + M @ W) + A.T @ tv @ dA[m]
        # D_m of P[:, m2] for every m2
        for m2 in range(n):
            inner = Tqq[:, m, m2].copy()
            if m < b:
                moved_v, moved_a = dA[m] @ nu, dA[m] @ nudot + dAdot[m] @ nu
                inner += Tqv[:, m2, :] @ moved_v + Tqa[:, m2, :] @ moved_a
            if m2 < b:
                inner += (Tqv[:, m, :] + Tvv_m) @ (dA[m2] @ nu) + Tqa[:, m, :] @ (dA[m2] @ nudot + dAdot[m2] @ nu)
            if m < b and m2 < b:
                inner += tv @ _lifted(d2X[m, m2], nu) + M @ (_lifted(d2X[m, m2], nudot) + _lifted(d2Xdot[m, m2], nu))
            col = A.T @ inner
            if m2 < b:
                col += dA[m2].T @ Dtau[:, m]
            if m < b:
                col += dA[m].T @ Dtau[:, m2]
                if m2 < b:
                    col[:b] += d2X[m, m2].T @ tau[:b]
            Dp[m][:, m2] = col
    qq = np.zeros((n, n, n))
    for m in range(n):
        step = Dp[m] @ A + (P @ dA[m] if m < b else 0.0)
        qq += np.einsum("j,ik->ijk", A[m], step)
    out[0][...] = qq
    out[2][...] = np.einsum("mj,mik->ijk", A, H)
    out[3][...] = np.einsum("mj,mik->ijk", A, G)
