"""Changes of coordinates (core paper Sec. 3.3, eqs. 22-27, Theorem 1; Wensing–Slotine Sec. V).

With q = φ(q̄) and q̇ = A q̄̇:

    M̄ = AᵀMA,  C̄ = AᵀCA + AᵀMȦ,  Ṁ̄ = AᵀṀA + ȦᵀMA + AᵀMȦ (= C̄ + C̄ᵀ),  ḡ = Aᵀg,
    τ̄ = Aᵀ τ(q, A q̄̇, A q̄̈ + Ȧ q̄̇),
    Γ̄_ijk = Σ A_αi A_βj A_γk Γ_αβγ + Σ A_αi (∂²q_β/∂q̄_j∂q̄_k) M_αβ   (eq. 27, coordinates).

For generalized speeds (Remark 5), Γ̄[:, :, k] = C̄(q, e_k); as Ȧ is linear in q̄̇, this is the same
formula with Ȧ(e_k) in place of ∂²q/∂q̄_j∂q̄_k (the map's rate_basis serves both).

Theorem 1: the Christoffel-consistent C of the tree maps to the Christoffel-consistent C̄, so the
identities (Ṁ̄ = C̄ + C̄ᵀ, C̄ = Σ Γ̄ q̄̇) hold in the new coordinates. The map (model.coordinates,
model.loops) is the structure; its evaluation here (``evaluation``) gives φ, A, Ȧ and the second
derivatives: MimicEvaluation for mimic joints, engine.loops.LoopSolver for closed loops and
engine.base_velocity.Evaluation for a floating base's velocity.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import StateError
from ..model.coordinates import BaseVelocityMap, MimicMap
from ..model.loops import LoopMap
from . import api, base_velocity, calls, loops
from .algorithms import in_other_coordinates
from .data import Data
from .conventions import TRAJECTORY_QUANTITIES, MomentumRegressors
from .workspaces import ReducedData, shared_data


class MimicEvaluation:
    """q = P(q̄) of a MimicMap: A q̄ + b, each curved mimic by its polynomial P_i, A_im = P_i'(q̄_m)
    and, for curved ones, Ȧ_im = P_i''(q̄_m) q̄̇_m."""

    def __init__(self, cmap: MimicMap):
        self.map = cmap

    def full_configuration(self, qbar) -> np.ndarray:
        m = self.map
        q = m.Aq @ np.asarray(qbar, dtype=float) + m.bq
        for qs, _, rq, _, p, _, _ in m.curved:
            q[qs] = p(qbar[rq])
        return q

    def jacobian(self, qbar) -> np.ndarray:
        if not self.map.curved:
            return self.map.A
        A = self.map.A.copy()
        for _, vs, rq, rv, _, dp, _ in self.map.curved:
            A[vs, rv] = dp(qbar[rq])
        return A

    def jacobian_rate(self, qbar, vbar) -> np.ndarray | None:
        """Ȧ = Σ_k ∂A/∂q̄_k q̄̇_k, or None when it is zero."""
        if not self.map.curved:
            return None
        Adot = np.zeros_like(self.map.A)
        for _, vs, rq, rv, _, _, ddp in self.map.curved:
            Adot[vs, rv] = ddp(qbar[rq]) * vbar[rv]
        return Adot

    def rate_basis(self, qbar) -> np.ndarray | None:
        """D (nv, n̄v, n̄v) with Ȧ = Σ_k D[:, :, k] q̄̇_k: in coordinates ∂²q/∂q̄_j∂q̄_k; None when zero."""
        if not self.map.curved:
            return None
        D = np.zeros((self.map.A.shape[0], self.map.nv, self.map.nv))
        for _, vs, rq, rv, _, _, ddp in self.map.curved:
            D[vs, rv, rv] = ddp(qbar[rq])
        return D

    def random_configuration(self, rng) -> np.ndarray:
        return self.map.reduce_configuration(self.map.robot.random_configuration(rng))


_EVALUATIONS = {MimicMap: MimicEvaluation, LoopMap: loops.LoopSolver, BaseVelocityMap: base_velocity.Evaluation}
EVALUATION = "engine: coordinates"


def evaluation(robot):
    """The evaluation of a robot's coordinates, made on first use and kept with it: q(q̄)
    (``full_configuration``), A (``jacobian``), Ȧ (``jacobian_rate``), its basis
    (``rate_basis``) and ``random_configuration``."""
    try:
        return robot.caches[EVALUATION]
    except KeyError:
        pass
    if not getattr(robot, "is_reduced", False):
        raise TypeError(f"robot '{robot.name}' is in its tree's own coordinates: there is no map to evaluate")
    make = _EVALUATIONS.get(type(robot.map))
    if make is None:
        raise TypeError(f"robot '{robot.name}': no evaluation of a {type(robot.map).__name__}")
    return robot.caches.setdefault(EVALUATION, make(robot.map))


def random_configuration(robot, rng=None) -> np.ndarray:
    """A random configuration of any robot within its joint limits (``rng``: a seed or a
    numpy Generator): for a robot in other coordinates, one where its loops close."""
    if not getattr(robot, "is_reduced", False):
        return robot.random_configuration(rng)
    return evaluation(robot).random_configuration(rng)


def integrate(robot, q, v, t: float = 1.0) -> np.ndarray:
    """q ⊕ v t on any robot: each joint by its own rule (model.joints.integrate); in other
    coordinates the tree moves with the velocity A v, read back in them."""
    if not getattr(robot, "is_reduced", False):
        return robot.integrate(q, v, t)
    ev = evaluation(robot)
    qbar = np.asarray(q, dtype=float)
    moved = robot.full.integrate(ev.full_configuration(qbar), ev.jacobian(qbar) @ np.asarray(v, dtype=float), t)
    return robot.map.reduce_configuration(moved)


def _stacked(robot, q, *velocities):
    """q and each (name, value) as (K, ·) states with one K, else StateError."""
    Q = _one(robot, q, robot.nq, "q", robot.config_names)
    Vs = [_one(robot, x, robot.nv, what, robot.dof_names) for what, x in velocities]
    if any(V.shape[0] != Q.shape[0] for V in Vs):
        raise StateError(f"q, {' and '.join(what for what, _ in velocities)} hold different numbers of states")
    return Q, Vs


def _stacked_outputs(outputs, shape) -> np.ndarray:
    """A batch's results as one array, (0, *shape) for an empty batch, as the tree's functions give."""
    return np.stack(outputs) if outputs else np.zeros((0, *shape))


def _one(robot, x, width, what, names) -> np.ndarray:
    """(K, width) states; a float64 vector of the right length is taken as it is. x·x is finite
    exactly when every entry is, unless it overflows, and then the full check decides."""
    if type(x) is np.ndarray and x.dtype == np.float64 and x.shape == (width,) and math.isfinite(x @ x):
        return x[None]
    arr, batch = calls.as_states(x, width, what, names)
    return arr


def _data(robot, data):
    if data is None:  # the robot's shared workspace; outputs are copied for the caller
        return shared_data(robot), True
    if not isinstance(data, ReducedData) or data.robot is not robot:
        raise StateError("data must come from create_data(robot) of this robot")
    return data, False


class _BaseBlock:
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
        return _BaseBlock(self.X.T, self.rest)

    def inverse(self):
        """A⁻¹: X = [[Rᵀ, B], [0, Rᵀ]] (B = 0 or −Rᵀp̂) has X⁻¹ = [[R, Bᵀ], [0, R]], as
        (−Rᵀp̂)ᵀ = p̂R; cheaper than a 6 x 6 LAPACK solve (6 µs)."""
        Xinv = self.X.T.copy()
        Xinv[0:3, 3:6] = self.X[0:3, 3:6].T
        Xinv[3:6, 0:3] = 0.0
        return _BaseBlock(Xinv)


def _full_state(robot, qbar, vbar=None):
    """(q, A, Ȧ along q̄̇) of the tree; A and Ȧ support ``@`` and ``.T``."""
    cmap = robot.map
    if isinstance(cmap, BaseVelocityMap):  # q = q̄; A = blockdiag(X, 1)
        X, Xdot = base_velocity.transform(cmap, qbar, None if vbar is None else vbar[0:6])
        return qbar, _BaseBlock(X), None if vbar is None else _BaseBlock(Xdot, 0.0)
    ev = evaluation(robot)
    q = ev.full_configuration(qbar)
    A = ev.jacobian(qbar)
    Adot = None if vbar is None else ev.jacobian_rate(qbar, vbar)
    return q, A, Adot


def _congruence(A, X, tmp, out):
    """out = Aᵀ X A (tmp holds X A)."""
    np.matmul(X, A, out=tmp)
    np.matmul(A.T, tmp, out=out)


def _symmetrize(X, tmp):
    """X = ½ (X + Xᵀ): AᵀMA is symmetric by definition, its products only up to round-off."""
    np.add(X, X.T, out=tmp)
    np.multiply(tmp, 0.5, out=X)


@in_other_coordinates(api.coriolis_matrix)
def coriolis_matrix(robot, q, qd, factorization="christoffel", data=None):
    """M̄, Ṁ̄, C̄ in the reduced coordinates (eqs. 24-25)."""
    Q = _one(robot, q, robot.nq, "q", robot.config_names)
    V = _one(robot, qd, robot.nv, "qd", robot.dof_names)
    if Q.shape[0] != V.shape[0]:
        raise StateError(f"qd holds {V.shape[0]} states but q holds {Q.shape[0]}")
    if Q.shape[0] > 1 or np.ndim(q) == 2:
        return _state_by_state(coriolis_matrix, robot, (Q, V), (factorization,), data, 3, (robot.nv, robot.nv))
    d, fresh = _data(robot, data)
    qbar, vbar = Q[0], V[0]
    qf, A, Adot = _full_state(robot, qbar, vbar)
    M, Mdot, C = api.coriolis_matrix(robot.full, qf, A @ vbar, factorization, data=d.full)
    if type(A) is _BaseBlock:  # the base's rows and columns only
        base_velocity.coriolis_kernel(A.X, Adot.X, M, Mdot, C, d.M, d.Mdot, d.C)
        return (d.M.copy(), d.Mdot.copy(), d.C.copy()) if fresh else d.coriolis_outputs
    _congruence(A, M, d._tmp, d.M)
    _congruence(A, C, d._tmp, d.C)
    _congruence(A, Mdot, d._tmp, d.Mdot)
    if Adot is not None:
        AtMAdot = A.T @ M @ Adot
        d.C += AtMAdot
        d.Mdot += AtMAdot + AtMAdot.T
    _symmetrize(d.M, d._sq)
    _symmetrize(d.Mdot, d._sq)
    return (d.M.copy(), d.Mdot.copy(), d.C.copy()) if fresh else d.coriolis_outputs


@in_other_coordinates(api.christoffel)
def christoffel(robot, q, force=False, data=None):
    """Γ̄ (eq. 27): Γ transformed by A on each index, plus the term of φ's second derivatives."""
    Q = _one(robot, q, robot.nq, "q", robot.config_names)
    if Q.shape[0] > 1 or np.ndim(q) == 2:
        if data is not None:
            raise StateError("q: data= takes one state at a time; call without data= for batches")
        return _stacked_outputs([christoffel(robot, Q[s], force) for s in range(Q.shape[0])], (robot.nv,) * 3)
    d, fresh = _data(robot, data)
    qbar = Q[0]
    qf, A, _ = _full_state(robot, qbar)
    G = api.christoffel(robot.full, qf, force=force, data=d.full)
    if type(A) is _BaseBlock:  # the base's slices of each index only
        M = api.mass_matrix(robot.full, qf, data=d.full)
        Gbar = np.empty_like(G) if fresh or d.Gamma is None else d.Gamma
        base_velocity.christoffel_kernel(A.X, base_velocity.rate_basis(robot.map, qbar), M, G, Gbar)
        if not fresh:
            d.Gamma = Gbar
        return Gbar
    # Σ A_αi A_βj A_γk Γ_αβγ, one index at a time (a four-operand einsum costs 100 µs to plan)
    Gbar = np.tensordot(A, np.tensordot(np.tensordot(G, A, axes=(2, 0)), A, axes=(1, 0)), axes=(0, 0)).transpose(0, 2, 1)
    D = evaluation(robot).rate_basis(qbar)  # ∂²q/∂q̄_j∂q̄_k in coordinates; Ȧ(e_k) for generalized speeds
    if D is not None:
        Gbar += np.tensordot(A.T @ api.mass_matrix(robot.full, qf, data=d.full), D, axes=(1, 0))
    if fresh:
        return Gbar
    if d.Gamma is None or d.Gamma.shape != Gbar.shape:
        d.Gamma = np.zeros_like(Gbar)
    d.Gamma[...] = Gbar
    return d.Gamma


@in_other_coordinates(api.christoffel_slices)
def christoffel_slices(robot, q):
    """Γ̄ one slice at a time without Γ̄ or the tree's Γ: Γ̄[:, :, k] = C̄(q̄, e_k) =
    Aᵀ C(q, A e_k) A + Aᵀ M D[:, :, k] (C linear in its velocity, Ȧ = Σ_k D[:, :, k] q̄̇_k), in
    O(nv²) memory as the tree's own slices are."""
    Q = _one(robot, q, robot.nq, "q", robot.config_names)
    if Q.shape[0] != 1:
        raise StateError("q: one state at a time for Γ's slices")
    qbar = Q[0]
    qf, A, _ = _full_state(robot, qbar)
    A = A @ np.eye(robot.nv) if type(A) is _BaseBlock else np.asarray(A)
    D = evaluation(robot).rate_basis(qbar)
    data = Data(robot.full)
    AtM = A.T @ api.mass_matrix(robot.full, qf) if D is not None else None
    for k in range(robot.nv):
        C = api.coriolis_matrix(robot.full, qf, np.ascontiguousarray(A[:, k]), data=data)[2]
        S = A.T @ C @ A
        if D is not None:
            S = S + AtM @ D[:, :, k]
        yield k, S


@in_other_coordinates(api.mass_matrix)
def mass_matrix(robot, q, data=None):
    Q = _one(robot, q, robot.nq, "q", robot.config_names)
    if Q.shape[0] > 1 or np.ndim(q) == 2:
        return _stacked_outputs([mass_matrix(robot, Q[s]) for s in range(Q.shape[0])], (robot.nv, robot.nv))
    d, fresh = _data(robot, data)
    qf, A, _ = _full_state(robot, Q[0])
    M = api.mass_matrix(robot.full, qf, data=d.full)
    if type(A) is _BaseBlock:
        base_velocity.mass_matrix_kernel(A.X, M, d.M)
        return d.M.copy() if fresh else d.M
    _congruence(A, M, d._tmp, d.M)
    _symmetrize(d.M, d._sq)
    return d.M.copy() if fresh else d.M


@in_other_coordinates(api.inverse_dynamics)
def inverse_dynamics(robot, q, qd, qdd, gravity=True, data=None):
    """τ̄ = Aᵀ τ(q, A q̄̇, A q̄̈ + Ȧ q̄̇)."""
    Q, (V, VD) = _stacked(robot, q, ("qd", qd), ("qdd", qdd))
    if Q.shape[0] > 1 or np.ndim(q) == 2:
        return _stacked_outputs([inverse_dynamics(robot, Q[s], V[s], VD[s], gravity) for s in range(Q.shape[0])], (robot.nv,))
    d, fresh = _data(robot, data)
    qf, A, Adot = _full_state(robot, Q[0], V[0])
    acc = A @ VD[0] if Adot is None else A @ VD[0] + Adot @ V[0]
    tau = api.inverse_dynamics(robot.full, qf, A @ V[0], acc, gravity, data=d.full)
    d.tau[...] = A.T @ tau
    return d.tau.copy() if fresh else d.tau


@in_other_coordinates(api.gravity_vector)
def gravity_vector(robot, q, gravity=True, data=None):
    Q = _one(robot, q, robot.nq, "q", robot.config_names)
    if Q.shape[0] > 1 or np.ndim(q) == 2:
        return _stacked_outputs([gravity_vector(robot, Q[s], gravity) for s in range(Q.shape[0])], (robot.nv,))
    d, fresh = _data(robot, data)
    qf, A, _ = _full_state(robot, Q[0])
    d.g[...] = A.T @ api.gravity_vector(robot.full, qf, gravity, data=d.full)
    return d.g.copy() if fresh else d.g


@in_other_coordinates(api.generalized_momentum)
def generalized_momentum(robot, q, qd, data=None):
    """p̄ = M̄ q̄̇ = Aᵀ p(q, A q̄̇)."""
    Q, (V,) = _stacked(robot, q, ("qd", qd))
    if Q.shape[0] > 1 or np.ndim(q) == 2:
        return _stacked_outputs([generalized_momentum(robot, Q[s], V[s]) for s in range(Q.shape[0])], (robot.nv,))
    qf, A, _ = _full_state(robot, Q[0])
    return A.T @ api.generalized_momentum(robot.full, qf, A @ V[0])


@in_other_coordinates(api.coriolis_transpose_velocity)
def coriolis_transpose_velocity(robot, q, qd, data=None):
    """C̄ᵀq̄̇ = Aᵀ Cᵀ(q, v) v + Ȧᵀ p(q, v) with v = A q̄̇ (C̄ = AᵀCA + AᵀMȦ)."""
    Q, (V,) = _stacked(robot, q, ("qd", qd))
    if Q.shape[0] > 1 or np.ndim(q) == 2:
        return _stacked_outputs([coriolis_transpose_velocity(robot, Q[s], V[s]) for s in range(Q.shape[0])], (robot.nv,))
    qf, A, Adot = _full_state(robot, Q[0], V[0])
    v = A @ V[0]
    out = A.T @ api.coriolis_transpose_velocity(robot.full, qf, v)
    return out if Adot is None else out + Adot.T @ api.generalized_momentum(robot.full, qf, v)


@in_other_coordinates(api.momentum_regressors)
def momentum_regressors(robot, q, qd, gravity=True):
    """Ȳ_p = AᵀY_p(q, v), Ȳ_c = AᵀY_c(q, v) + ȦᵀY_p(q, v) (C̄ᵀq̄̇ = AᵀCᵀv + Ȧᵀp), Ȳ_g = AᵀY_g,
    Y_T the tree's (T is), Ȳ_V̇ = q̄̇ᵀȲ_g; v = A q̄̇."""
    Q, (V,) = _stacked(robot, q, ("qd", qd))
    qf, A, Adot = _full_state(robot, Q[0], V[0])
    full = api.momentum_regressors(robot.full, qf, A @ V[0], gravity)
    Yc = A.T @ full.c if Adot is None else A.T @ full.c + Adot.T @ full.p
    Yg = A.T @ full.g
    return MomentumRegressors(A.T @ full.p, Yc, Yg, full.T, V[0] @ Yg)


@in_other_coordinates(api.trajectory_dynamics)
def trajectory_dynamics(robot, Q, QD, QDD=None, gravity=True):
    """api.trajectory_dynamics's row in the robot's coordinates, state by state: ḡ = Aᵀg,
    C̄ q̄̇ = Aᵀ(C v + M Ȧ q̄̇), C̄ᵀq̄̇, p̄ = Aᵀp, τ̄ = Aᵀτ(q, v, A q̄̈ + Ȧ q̄̇); T and V are the tree's."""

    Q, (V,) = _stacked(robot, Q, ("qd", QD))
    use_qdd = QDD is not None
    QDD = _stacked(robot, Q, ("qdd", QDD))[1][0] if use_qdd else np.zeros_like(V)
    n, nf = robot.nv, robot.full.nv
    out = np.empty((Q.shape[0], TRAJECTORY_QUANTITIES * n + 2))
    for s in range(Q.shape[0]):
        qf, A, Adot = _full_state(robot, Q[s], V[s])
        v = A @ V[s]
        rate = np.zeros(nf) if Adot is None else Adot @ V[s]
        row = api.trajectory_dynamics(robot.full, qf, v, A @ QDD[s] + rate, gravity)[0]
        full = row[: TRAJECTORY_QUANTITIES * nf].reshape(TRAJECTORY_QUANTITIES, nf)
        p = full[3]
        Mrate = api.inverse_dynamics(robot.full, qf, np.zeros(nf), rate, gravity=False) if Adot is not None else 0.0
        out[s, 0:n] = A.T @ full[0]
        out[s, n : 2 * n] = A.T @ (full[1] + Mrate)
        out[s, 2 * n : 3 * n] = A.T @ full[2] + (Adot.T @ p if Adot is not None else 0.0)
        out[s, 3 * n : 4 * n] = A.T @ p
        out[s, 4 * n : 5 * n] = A.T @ full[4] if use_qdd else np.nan
        out[s, -2:] = row[-2:]
    return out


@in_other_coordinates(api.forward_dynamics)
def forward_dynamics(robot, q, qd, tau, gravity=True, data=None):
    """q̄̈ = M̄⁻¹ (τ̄ − C̄ q̄̇ − ḡ), with M̄, C̄, ḡ carried by A (a dense solve: M̄ has no tree)."""
    Q, (V, T) = _stacked(robot, q, ("qd", qd), ("tau", tau))
    if Q.shape[0] > 1 or np.ndim(q) == 2:
        return _stacked_outputs([forward_dynamics(robot, Q[s], V[s], T[s], gravity) for s in range(Q.shape[0])], (robot.nv,))
    d, fresh = _data(robot, data)
    if isinstance(robot.map, BaseVelocityMap):
        # A square and invertible: the tree's forward dynamics at τ = A⁻ᵀ τ̄, then q̄̈ = A⁻¹ (q̈ − Ȧ q̄̇)
        _, A, Adot = _full_state(robot, Q[0], V[0])
        Ainv = A.inverse()
        qdd = api.forward_dynamics(robot.full, Q[0], A @ V[0], Ainv.T @ T[0], gravity, data=d.full)
        d.qdd[...] = Ainv @ (qdd - Adot @ V[0])
        return d.qdd.copy() if fresh else d.qdd
    M, _, C = coriolis_matrix(robot, Q[0], V[0], data=d)
    g = gravity_vector(robot, Q[0], gravity, data=d)
    if not calls.positive_definite(M):  # as the tree's LTDL judges its pivots
        k = int(np.argmax(np.abs(np.linalg.eigh(M)[1][:, 0])))  # the DoF the null motion moves most
        raise calls.singular_mass_matrix(robot, [robot.dof_names[k]])
    d.qdd[...] = np.linalg.solve(M, T[0] - C @ V[0] - g)
    return d.qdd.copy() if fresh else d.qdd


def _reference_state(robot, q, qd, qd_r, qdd_r):
    """The tree's (q, q̇, q̇_r, q̈_r) for reduced ones: q̇ = A q̄̇, q̇_r = A q̄̇_r, q̈_r = A q̄̈_r + Ȧ q̄̇_r,
    with Ȧ along the true motion, so that Aᵀ τ_SL(tree) = M̄ q̄̈_r + C̄ q̄̇_r + ḡ."""
    Q = _one(robot, q, robot.nq, "q", robot.config_names)
    states = [_one(robot, x, robot.nv, what, robot.dof_names) for what, x in (("qd", qd), ("qd_r", qd_r), ("qdd_r", qdd_r))]
    if Q.shape[0] != 1 or any(s.shape[0] != 1 for s in states):
        raise StateError("q: one state at a time for robots in other coordinates")
    qf, A, Adot = _full_state(robot, Q[0], states[0][0])
    if type(A) is _BaseBlock:  # the three products in one compiled call
        tree = np.empty((3, robot.nv))
        base_velocity.reference_kernel(A.X, Adot.X, states[0][0], states[1][0], states[2][0], tree)
        return qf, A, tree[0], tree[1], tree[2]
    acc = A @ states[2][0] + (0.0 if Adot is None else Adot @ states[1][0])
    return qf, A, A @ states[0][0], A @ states[1][0], acc


@in_other_coordinates(api.slotine_li)
def slotine_li(robot, q, qd, qd_r, qdd_r, theta=None, gravity=True, factorization="christoffel", data=None):
    d, fresh = _data(robot, data)
    qf, A, v, v_r, a_r = _reference_state(robot, q, qd, qd_r, qdd_r)
    d.tau[...] = A.T @ api.slotine_li(robot.full, qf, v, v_r, a_r, theta, gravity, factorization, data=d.full)
    return d.tau.copy() if fresh else d.tau


@in_other_coordinates(api.regressor)
def regressor(robot, q, qd, qd_r, qdd_r, gravity=True, factorization="christoffel"):
    qf, A, v, v_r, a_r = _reference_state(robot, q, qd, qd_r, qdd_r)
    return A.T @ api.regressor(robot.full, qf, v, v_r, a_r, gravity, factorization)


@in_other_coordinates(api.adaptation_gradient)
def adaptation_gradient(robot, q, qd, qd_r, qdd_r, gravity=True, factorization="christoffel"):
    """Ȳᵀ s̄ = Yᵀ A s̄: the tree's recursion at q̇ = A q̄̇ and q̇_r = A q̄̇_r."""
    qf, A, v, v_r, a_r = _reference_state(robot, q, qd, qd_r, qdd_r)
    return api.adaptation_gradient(robot.full, qf, v, v_r, a_r, gravity, factorization)


def _constant_map(robot, qbar):
    """(q, A) of a map with Ȧ = 0 (mimic joints with constant ratios, the body base velocity):
    there τ̄ = Aᵀ τ(q, A q̄̇, A q̄̈) and the derivatives are congruences. Closed loops and curved
    mimic joints need ∂A/∂q̄, which their maps do not give yet: StateError."""
    cmap, ev = robot.map, evaluation(robot)
    # the body base velocity has Ȧ = 0 (the mixed and inertial ones take _moving_base's path)
    if not isinstance(cmap, BaseVelocityMap) and ev.rate_basis(qbar) is not None:
        if isinstance(cmap, LoopMap):
            raise StateError("the derivatives do not take closed loops yet (their A depends on q̄); take them on the "
                             "spanning tree, robot.full", hint="pass --loops open for the spanning tree")
        raise StateError("the derivatives take mimic joints of constant ratio (q_j = a·q_m + b) only so far; "
                         "these have non-linear functions; take them on robot.full", hint="pass --mimic independent")
    return ev.full_configuration(qbar), np.asarray(ev.jacobian(qbar))


def _state_by_state(function, robot, states, options, data, count, shape):
    """A batch in other coordinates, state by state, its ``count`` outputs stacked as the tree's
    functions give them."""
    if data is not None:
        raise StateError("q: data= takes one state at a time; call without data= for batches")
    outs = [function(robot, *(x[s] for x in states), *options) for s in range(states[0].shape[0])]
    return tuple(_stacked_outputs([o[i] for o in outs], shape) for i in range(count))


def _derivatives_states(robot, q, qd, x, what):
    Q, (V, X) = _stacked(robot, q, ("qd", qd), (what, x))
    return Q, V, X, Q.shape[0] > 1 or np.ndim(q) == 2


@in_other_coordinates(api.inverse_dynamics_derivatives)
def inverse_dynamics_derivatives(robot, q, qd, qdd, gravity=True, data=None):
    """Aᵀ ∂τ/∂q A, Aᵀ ∂τ/∂q̇ A, Aᵀ M A of τ̄ = Aᵀ τ(q, A q̄̇, A q̄̈) (A constant); q̄ moves by
    integrate(robot, q̄, δ̄), the tree by A δ̄."""
    Q, V, X, batch = _derivatives_states(robot, q, qd, qdd, "qdd")
    if batch:
        return _state_by_state(inverse_dynamics_derivatives, robot, (Q, V, X), (gravity,), data, 3, (robot.nv, robot.nv))
    d, fresh = _data(robot, data)
    if _moving_base(robot):
        outs = _base_inverse_dynamics_derivatives(robot, Q[0], V[0], X[0], gravity, d)
        return tuple(x.copy() for x in outs) if fresh else outs
    qf, A = _constant_map(robot, Q[0])
    full = api.inverse_dynamics_derivatives(robot.full, qf, A @ V[0], A @ X[0], gravity, data=d.full)
    return _congruent_outputs(A, d, fresh, full, ("dtau_dq", "dtau_dv", "dtau_da"))


def _moving_base(robot) -> bool:
    """A floating base's velocity in the mixed or inertial representation: A = blockdiag(X(q), 1)."""
    return isinstance(robot.map, BaseVelocityMap) and robot.map.representation != "body"


def _base_inverse_dynamics_derivatives(robot, q, nu, nudot, gravity, d):
    """The chain rule through A = blockdiag(X(q), 1), Ȧ = blockdiag(Ẋ(q, ν), 0), with τ̄ = Aᵀ τ(q, v, a),
    v = A ν, a = A ν̇ + Ȧ ν:

        ∂τ̄/∂ν̇ = Aᵀ M A,   ∂τ̄/∂ν = Aᵀ (∂τ/∂q̇ A + M [Ȧ(e_j) ν + Ȧ e_j]_j),
        ∂τ̄/∂δ_k = ∂Aᵀ/∂δ_k τ + Aᵀ (∂τ/∂q e_k + ∂τ/∂q̇ ∂A/∂δ_k ν + M (∂A/∂δ_k ν̇ + ∂Ȧ/∂δ_k ν)),

    δ the tree's tangent (only the base's six move A), and ∂τ̄/∂q̄ = ∂τ̄/∂δ A as q̄ ⊕ δ̄ = q ⊕ A δ̄
    (integrate). X's derivatives: base_velocity.map_derivatives."""
    b = base_velocity.B
    A, Adot, rates, dX, dXdot = _base_maps(robot, q, nu)
    v, a = A @ nu, A @ nudot + Adot @ nu
    dq, dv, M = api.inverse_dynamics_derivatives(robot.full, q, v, a, gravity, data=d.full)
    tau = api.inverse_dynamics(robot.full, q, v, a, gravity)
    d.dtau_da[...] = A.T @ M @ A
    _symmetrize(d.dtau_da, d._sq)
    d.dtau_dv[...] = A.T @ (dv @ A + M @ (_rates_applied(rates, nu) + Adot))
    T = A.T @ dq
    for k in range(b):
        T[:, k] += A.T @ (dv @ _lifted(dX[k], nu) + M @ (_lifted(dX[k], nudot) + _lifted(dXdot[k], nu)))
        T[:b, k] += dX[k].T @ tau[:b]
    np.matmul(T, A, out=d.dtau_dq)
    return d.dtau_dq, d.dtau_dv, d.dtau_da


@in_other_coordinates(api.forward_dynamics_derivatives)
def forward_dynamics_derivatives(robot, q, qd, tau, gravity=True, data=None):
    """∂q̄̈/∂x̄ = −M̄⁻¹ ∂τ̄/∂x̄ at q̄̈ = FD(q̄, q̄̇, τ̄), and M̄⁻¹ (a dense Cholesky: M̄ has no tree)."""
    Q, V, T, batch = _derivatives_states(robot, q, qd, tau, "tau")
    if batch:
        return _state_by_state(forward_dynamics_derivatives, robot, (Q, V, T), (gravity,), data, 3, (robot.nv, robot.nv))
    d, fresh = _data(robot, data)
    if not _moving_base(robot):
        _constant_map(robot, Q[0])  # refused before any work
    qdd = forward_dynamics(robot, Q[0], V[0], T[0], gravity, data=d)
    dq, dv, M = inverse_dynamics_derivatives(robot, Q[0], V[0], qdd, gravity, data=d)
    L = np.linalg.cholesky(M)  # M̄ is positive definite: forward_dynamics said so
    d.Minv[...] = np.linalg.solve(L.T, np.linalg.solve(L, np.eye(robot.nv)))
    _symmetrize(d.Minv, d._sq)
    np.matmul(d.Minv, dq, out=d.dqdd_dq)
    np.matmul(d.Minv, dv, out=d.dqdd_dv)
    d.dqdd_dq *= -1.0
    d.dqdd_dv *= -1.0
    outs = (d.dqdd_dq, d.dqdd_dv, d.Minv)
    return tuple(x.copy() for x in outs) if fresh else outs


def _congruent_outputs(A, d, fresh, blocks, names):
    """Aᵀ X A of each tree block into the workspace's fields ``names``, as one call returns them;
    the last, M̄ where it is one (names ending in ``_da``, ``_dar``), made exactly symmetric."""
    outs = []
    for name, block in zip(names, blocks):
        out = getattr(d, name)
        _congruence(A, block, d._tmp, out)
        if name.endswith(("_da", "_dar")):
            _symmetrize(out, d._sq)
        outs.append(out)
    return tuple(x.copy() for x in outs) if fresh else tuple(outs)


@in_other_coordinates(api.slotine_li_derivatives)
def slotine_li_derivatives(robot, q, qd, qd_r, qdd_r, gravity=True, factorization="christoffel", data=None):
    """Aᵀ X A of the tree's four (A constant: τ̄ = Aᵀ τ(q, A q̄̇, A q̄̇_r, A q̄̈_r))."""
    Q, (V, VR, AR) = _stacked(robot, q, ("qd", qd), ("qd_r", qd_r), ("qdd_r", qdd_r))
    if Q.shape[0] > 1 or np.ndim(q) == 2:
        return _state_by_state(slotine_li_derivatives, robot, (Q, V, VR, AR), (gravity, factorization), data, 4, (robot.nv, robot.nv))
    d, fresh = _data(robot, data)
    if _moving_base(robot):
        outs = _base_slotine_li_derivatives(robot, Q[0], V[0], VR[0], AR[0], gravity, factorization, d,
                                            ("dslotine_dq", "dslotine_dv", "dslotine_dvr", "dslotine_dar"))
        return tuple(x.copy() for x in outs) if fresh else outs
    qf, A = _constant_map(robot, Q[0])
    full = api.slotine_li_derivatives(robot.full, qf, A @ V[0], A @ VR[0], A @ AR[0], gravity, factorization, data=d.full)
    return _congruent_outputs(A, d, fresh, full, ("dslotine_dq", "dslotine_dv", "dslotine_dvr", "dslotine_dar"))


@in_other_coordinates(api.coriolis_product_derivatives)
def coriolis_product_derivatives(robot, q, qd, v, factorization="christoffel", data=None):
    """Aᵀ X A of the tree's two (A constant: C̄ v̄ = Aᵀ C(q, A q̄̇) A v̄)."""
    Q, (V, W) = _stacked(robot, q, ("qd", qd), ("v", v))
    if Q.shape[0] > 1 or np.ndim(q) == 2:
        return _state_by_state(coriolis_product_derivatives, robot, (Q, V, W), (factorization,), data, 2, (robot.nv, robot.nv))
    d, fresh = _data(robot, data)
    if _moving_base(robot):  # C̄ v̄ = Aᵀ (C(q, A ν) A v̄ + M Ȧ(ν) v̄): Slotine–Li at q̄̈_r = 0 without gravity
        outs = _base_slotine_li_derivatives(robot, Q[0], V[0], W[0], np.zeros(robot.nv), False, factorization, d,
                                            ("dCv_dq", "dCv_dv", None, None))
        return tuple(x.copy() for x in outs[:2]) if fresh else outs[:2]
    qf, A = _constant_map(robot, Q[0])
    full = api.coriolis_product_derivatives(robot.full, qf, A @ V[0], A @ W[0], factorization, data=d.full)
    return _congruent_outputs(A, d, fresh, full, ("dCv_dq", "dCv_dv"))


@in_other_coordinates(api.gravity_derivatives)
def gravity_derivatives(robot, q, gravity=True, data=None):
    """Aᵀ ∂g/∂q A (A constant: ḡ = Aᵀ g(q))."""
    Q = _one(robot, q, robot.nq, "q", robot.config_names)
    if Q.shape[0] > 1 or np.ndim(q) == 2:
        return _state_by_state(gravity_derivatives, robot, (Q,), (gravity,), data, 1, (robot.nv, robot.nv))[0]
    d, fresh = _data(robot, data)
    if _moving_base(robot):  # ḡ = Aᵀ g(q): ∂ḡ/∂δ_k = ∂Aᵀ/∂δ_k g + Aᵀ ∂g/∂q e_k, then · A
        b = base_velocity.B
        A, _, _, dX, _ = _base_maps(robot, Q[0], np.zeros(robot.nv))
        T = A.T @ api.gravity_derivatives(robot.full, Q[0], gravity, data=d.full)
        g = api.gravity_vector(robot.full, Q[0], gravity)
        for k in range(b):
            T[:b, k] += dX[k].T @ g[:b]
        np.matmul(T, A, out=d.dg_dq)
        return d.dg_dq.copy() if fresh else d.dg_dq
    qf, A = _constant_map(robot, Q[0])
    full = api.gravity_derivatives(robot.full, qf, gravity, data=d.full)
    return _congruent_outputs(A, d, fresh, (full,), ("dg_dq",))[0]


@in_other_coordinates(api.coriolis_transpose_derivatives)
def coriolis_transpose_derivatives(robot, q, qd, data=None):
    """Aᵀ X A of the tree's two (A constant: C̄ᵀq̄̇ = Aᵀ Cᵀ(q, A q̄̇) A q̄̇)."""
    Q, (V,) = _stacked(robot, q, ("qd", qd))
    if Q.shape[0] > 1 or np.ndim(q) == 2:
        return _state_by_state(coriolis_transpose_derivatives, robot, (Q, V), (), data, 2, (robot.nv, robot.nv))
    d, fresh = _data(robot, data)
    if _moving_base(robot):
        outs = _base_coriolis_transpose_derivatives(robot, Q[0], V[0], d)
        return tuple(x.copy() for x in outs) if fresh else outs
    qf, A = _constant_map(robot, Q[0])
    full = api.coriolis_transpose_derivatives(robot.full, qf, A @ V[0], data=d.full)
    return _congruent_outputs(A, d, fresh, full, ("dCTqd_dq", "dCTqd_dv"))


def _base_maps(robot, q, nu):
    """A, Ȧ along ν, the rates Ȧ(e_j) (j < 6) and X's derivatives along the base (dX, dẊ along ν)."""
    cmap, n, b = robot.map, robot.nv, base_velocity.B
    X, Xdot = base_velocity.transform(cmap, q, nu[:b])
    A, Adot = np.eye(n), np.zeros((n, n))
    A[:b, :b], Adot[:b, :b] = X, Xdot
    dX, dXdot = base_velocity.map_derivatives(cmap, q, nu[:b])
    return A, Adot, base_velocity.rate_basis(cmap, q), dX, dXdot


def _rates_applied(rates, x):
    """The matrix whose column j is Ȧ(e_j) x (zero past the base's six): ∂(Ȧ(ν) x)/∂ν."""
    n, b = len(x), base_velocity.B
    out = np.zeros((n, n))
    for j in range(b):
        out[:b, j] = rates[j] @ x[:b]
    return out


def _block(block, n):
    """blockdiag(block, 0), n x n, for a 6 x 6 block."""
    out = np.zeros((n, n))
    out[:base_velocity.B, :base_velocity.B] = block
    return out


def _lifted(block, x):
    """blockdiag(block, 0) @ x for a 6 x 6 block."""
    out = np.zeros(len(x))
    out[:base_velocity.B] = block @ x[:base_velocity.B]
    return out


def _base_slotine_li_derivatives(robot, q, nu, nu_r, nudot_r, gravity, factorization, d, names):
    """τ̄ = Aᵀ τ_SL(q, A ν, A ν_r, A ν̇_r + Ȧ(ν) ν_r) (Ȧ along the true motion, as slotine_li takes it):

        ∂τ̄/∂ν̇_r = Aᵀ M A,   ∂τ̄/∂ν_r = Aᵀ (C A + M Ȧ),   ∂τ̄/∂ν = Aᵀ (∂τ/∂q̇ A + M [Ȧ(e_j) ν_r]_j),
        ∂τ̄/∂δ_k = ∂Aᵀ/∂δ_k τ + Aᵀ (∂τ/∂q e_k + ∂τ/∂q̇ ∂A_k ν + C ∂A_k ν_r + M (∂A_k ν̇_r + ∂Ȧ_k ν_r)),

    then · A (q̄ moves by integrate(robot, q̄, δ̄)). Into the workspace fields ``names`` (None: not kept)."""
    n, b = robot.nv, base_velocity.B
    A, Adot, rates, dX, dXdot = _base_maps(robot, q, nu)
    v, v_r, a_r = A @ nu, A @ nu_r, A @ nudot_r + Adot @ nu_r
    dq, dv, C, M = api.slotine_li_derivatives(robot.full, q, v, v_r, a_r, gravity, factorization, data=d.full)
    tau = api.slotine_li(robot.full, q, v, v_r, a_r, gravity=gravity, factorization=factorization)
    outs = [np.zeros((n, n)) if name is None else getattr(d, name) for name in names]
    outs[1][...] = A.T @ (dv @ A + M @ _rates_applied(rates, nu_r))
    outs[2][...] = A.T @ (C @ A + M @ Adot)
    outs[3][...] = A.T @ M @ A
    _symmetrize(outs[3], d._sq)
    T = A.T @ dq
    for k in range(b):
        T[:, k] += A.T @ (dv @ _lifted(dX[k], nu) + C @ _lifted(dX[k], nu_r)
                          + M @ (_lifted(dX[k], nudot_r) + _lifted(dXdot[k], nu_r)))
        T[:b, k] += dX[k].T @ tau[:b]
    np.matmul(T, A, out=outs[0])
    return tuple(outs)


def _base_coriolis_transpose_derivatives(robot, q, nu, d):
    """C̄ᵀν = Aᵀ h + Ȧ(ν)ᵀ p with h = Cᵀ(q, v) v, p = M(q) v, v = A ν:

        ∂/∂ν = Aᵀ ∂h/∂q̇ A + [Ȧ(e_j)ᵀ p]_j + Ȧᵀ M A,
        ∂/∂δ_k = ∂Aᵀ/∂δ_k h + Aᵀ (∂h/∂q e_k + ∂h/∂q̇ ∂A_k ν) + ∂Ȧ_kᵀ p + Ȧᵀ (∂p/∂q e_k + M ∂A_k ν),

    ∂p/∂q being the inverse dynamics' ∂τ/∂q at q̇ = 0, q̈ = v without gravity; then · A."""
    n, b = robot.nv, base_velocity.B
    A, Adot, rates, dX, dXdot = _base_maps(robot, q, nu)
    v = A @ nu
    dh_dq, dh_dv = api.coriolis_transpose_derivatives(robot.full, q, v, data=d.full)
    h = api.coriolis_transpose_velocity(robot.full, q, v)
    dp_dq, _, M = api.inverse_dynamics_derivatives(robot.full, q, np.zeros(n), v, False)
    p = M @ v
    G = A.T @ dh_dv @ A + Adot.T @ M @ A
    for j in range(b):
        G[:b, j] += rates[j].T @ p[:b]
    d.dCTqd_dv[...] = G
    T = A.T @ dh_dq + Adot.T @ dp_dq
    for k in range(b):
        dA_nu = _lifted(dX[k], nu)
        T[:, k] += A.T @ (dh_dv @ dA_nu) + Adot.T @ (M @ dA_nu)
        T[:b, k] += dX[k].T @ h[:b] + dXdot[k].T @ p[:b]
    np.matmul(T, A, out=d.dCTqd_dq)
    return d.dCTqd_dq, d.dCTqd_dv


@in_other_coordinates(api.inverse_dynamics_second_derivatives)
def inverse_dynamics_second_derivatives(robot, q, qd, qdd, gravity=True, force=False, data=None):
    """T̄_ijk = Σ A_αi A_βj A_γk T_αβγ of each of the tree's four (A constant: τ̄ = Aᵀ τ(q, A q̄̇, A q̄̈))."""
    Q, V, X, batch = _derivatives_states(robot, q, qd, qdd, "qdd")
    if batch:
        return _state_by_state(inverse_dynamics_second_derivatives, robot, (Q, V, X), (gravity, force), data, 4, (robot.nv,) * 3)
    if _moving_base(robot):
        return _base_second_derivatives(robot, Q[0], V[0], X[0], gravity, force)
    qf, A = _constant_map(robot, Q[0])
    full = api.inverse_dynamics_second_derivatives(robot.full, qf, A @ V[0], A @ X[0], gravity, force,
                                                   data=None if data is None else _data(robot, data)[0].full)
    return tuple(np.einsum("abc,ai,bj,ck->ijk", T, A, A, A, optimize=True) for T in full)


def _base_second_derivatives(robot, q, nu, nudot, gravity, force):
    """The second-order chain rule through A = blockdiag(X(q), 1) and Ȧ(q, ν) (mixed and inertial base
    velocities), τ̄ = Aᵀ τ(q, A ν, A ν̇ + Ȧ(ν) ν), with the tree's first (τ_q, τ_v, M) and second
    (T_qq, T_vv, T_qv, T_qa) derivatives at (q, v, a) and X's derivatives along the base (first and
    second: base_velocity.map_derivatives, map_second_derivatives). D_m is the total derivative as
    the tree moves along its tangent e_m (A moves only for the base's six); ∂/∂q̄_j = Σ_m A_mj D_m as
    q̄ moves by integrate(robot, q̄, δ̄). With W[:, k] = Ȧ(e_k) ν + Ȧ(ν) e_k (= ∂(Ȧ ν)/∂ν_k):

        ∂²τ̄/∂ν_j∂ν_k = Aᵀ (T_vv[:, A e_j, A e_k] + M (Ȧ(e_k) e_j + Ȧ(e_j) e_k)),
        D_m M̄ = ∂A_mᵀ M A + Aᵀ T_qa[:, m] A + Aᵀ M ∂A_m,
        D_m (∂τ̄/∂ν) = ∂A_mᵀ (τ_v A + M W) + Aᵀ ((T_qv[:, m] + T_vv[:, ∂A_m ν]) A + τ_v ∂A_m + T_qa[:, m] W + M D_m W),
        ∂τ̄/∂q̄ = P A with P[:, m] = D_m τ̄, so D_m' (P A) = (D_m' P) A + P ∂A_m'."""
    cmap, n, b = robot.map, robot.nv, base_velocity.B
    A, Adot, rates, dX, dXdot = _base_maps(robot, q, nu)  # dX, dẊ along e_m: X's, Ȧ(ν)'s
    v, a = A @ nu, A @ nudot + Adot @ nu
    tau = api.inverse_dynamics(robot.full, q, v, a, gravity)
    tq, tv, M = api.inverse_dynamics_derivatives(robot.full, q, v, a, gravity)
    Tqq, Tvv, Tqv, Tqa = api.inverse_dynamics_second_derivatives(robot.full, q, v, a, gravity, force)
    d2X, d2Xdot = base_velocity.map_second_derivatives(cmap, q, nu[:b])
    dXdot_e = [base_velocity.map_derivatives(cmap, q, np.eye(b)[k])[1] for k in range(b)]  # [k][m]: D_m Ȧ(e_k)
    dA = [_block(dX[m], n) if m < b else None for m in range(n)]
    dAdot = [_block(dXdot[m], n) if m < b else None for m in range(n)]
    W = _rates_applied(rates, nu) + Adot
    # ∂²τ̄/∂ν²
    E = np.zeros((n, n, n))
    for j in range(b):
        for k in range(b):
            E[:b, j, k] = rates[k][:, j] + rates[j][:, k]
    vv = np.einsum("ai,ajk->ijk", A, np.einsum("abc,bj,ck->ajk", Tvv, A, A) + np.einsum("ab,bjk->ajk", M, E))
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
    qa = np.einsum("mj,mik->ijk", A, G)
    qv = np.einsum("mj,mik->ijk", A, H)
    return qq, vv, qv, qa


def derivatives_refusal(robot) -> str | None:
    """Why the derivatives do not take this robot (closed loops, non-linear mimic functions), or
    None: what verify and bench ask before checking or timing them."""
    zeros = np.zeros(robot.nv)
    try:
        api.inverse_dynamics_derivatives(robot, robot.neutral_configuration(), zeros, zeros)
    except StateError as e:
        return str(e)
    return None
