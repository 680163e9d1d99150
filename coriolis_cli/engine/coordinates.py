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

Each public function's form here is one state's (see below); engine.algorithms.call gives every
robot the same checks, batches, data= and fresh outputs around it, so that a robot in other
coordinates takes each call as a tree does.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import StateError
from ..model.coordinates import BaseVelocityMap, MimicMap, ReducedRobot
from ..model.tree import RobotModel
from ..model.loops import LoopMap
from . import api, base_velocity, calls, loops
from .algorithms import in_other_coordinates
from .data import Data, check_memory, gamma_bytes_for
from .conventions import TRAJECTORY_QUANTITIES


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


def random_configuration(robot: RobotModel | ReducedRobot, rng: np.random.Generator | int | None = None) -> np.ndarray:
    """Draw a random configuration of a robot, within its joint limits.

    Each 1-DoF joint's coordinate is drawn uniformly within its limits where both are given, else
    in [0, 2π); free and planar joints' positions in [-1, 1] m, and orientations uniformly (unit
    quaternions x, y, z, w; a planar joint's (cos θ, sin θ)). For a robot in other coordinates the
    draw is in those coordinates: with mimic joints enforced, the independent joints'; with closed
    loops, a configuration where the loops close (drawn within the limits, then near the assembly).

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    rng : int, numpy.random.Generator or None, optional
        A seed or a generator; None draws from fresh entropy.

    Returns
    -------
    q : ndarray of shape (nq,)
        The configuration [rad or m; quaternions (x, y, z, w)].

    Raises
    ------
    StateError
        For a robot with closed loops, if no draw closes them (given up 10 s after the first failed
        draw).

    See Also
    --------
    - [`integrate`][coriolis_cli.integrate]: Move from a configuration with a velocity.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> q = cc.random_configuration(robot, 0)
    >>> rng = np.random.default_rng(0)
    >>> q.shape, bool(np.allclose(q, cc.random_configuration(robot, rng)))
    ((7,), True)
    >>> # a closed loop: one independent angle
    >>> cc.random_configuration(cc.load_robot("fourbar"), 1).shape
    (1,)
    """
    if not getattr(robot, "is_reduced", False):
        return robot.random_configuration(rng)
    return evaluation(robot).random_configuration(rng)


def integrate(robot: RobotModel | ReducedRobot, q: ArrayLike, v: ArrayLike, t: float = 1.0) -> np.ndarray:
    """Return the configuration reached by moving with constant velocity for a time, q ⊕ v t.

    Each joint moves by its own rule, as Pinocchio's ``integrate`` does: a revolute or prismatic
    coordinate by v t; free, spherical and planar joints along the exponential map of their
    velocity in the joint's own (child) frame, the rotation composed on the right, so that a
    quaternion or a (cos, sin) pair stays of unit norm. This is how finite differences of a configuration are
    taken on a robot with a free, spherical or planar joint, where q and v have different lengths.
    For a robot in other coordinates the tree moves with the velocity A(q̄) v̄ and the result is read
    back in the robot's coordinates.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    q : array_like of shape (nq,)
        Joint configuration [rad or m; a free or spherical joint's quaternion as x, y, z, w].
    v : array_like of shape (nv,)
        Joint velocity [rad/s or m/s; a free joint's as its body-frame twist [ᴮv; ᴮω]].
    t : float, optional
        The time to move for [s]; default 1, so that ``integrate(robot, q, dq)`` adds a
        displacement dq.

    Returns
    -------
    q_next : ndarray of shape (nq,)
        The configuration reached [rad or m].

    Raises
    ------
    StateError
        If ``q`` or ``v`` is not one state of the robot's sizes with finite entries, or ``t`` is not a
        finite number; for a robot with closed loops, if they cannot close at the configuration reached.

    See Also
    --------
    - [`random_configuration`][coriolis_cli.random_configuration]: A random configuration within the joint limits.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> # a free joint, then three revolute joints
    >>> robot = cc.load_robot("serial:3", floating_base=True)
    >>> robot.nq, robot.nv
    (10, 9)
    >>> v = np.zeros(robot.nv)
    >>> # 1 m/s forward while turning about z at π/2 rad/s
    >>> v[0], v[5] = 1.0, np.pi / 2
    >>> q = cc.integrate(robot, robot.neutral_configuration(), v, 1.0)
    >>> # on a quarter circle: x = y = 2/π, quaternion (x, y, z, w)
    >>> [round(float(x), 6) for x in q[:7]]
    [0.63662, 0.63662, 0.0, 0.0, 0.0, 0.707107, 0.707107]
    """
    q, v = calls.single_state("integrate", robot, q, ("v", v))
    if isinstance(t, bool) or not (np.isscalar(t) and np.isfinite(t)):
        raise StateError(f"t must be a finite number of seconds, got {t!r}")
    if not getattr(robot, "is_reduced", False):
        return robot.integrate(q, v, t)
    ev = evaluation(robot)
    moved = robot.full.integrate(ev.full_configuration(q), ev.jacobian(q) @ v, t)
    return robot.map.reduce_configuration(moved)


# ---- one state in the robot's coordinates ------------------------------------------------------
# Each function registered below is one state's, as a kernel is: ``function(robot, d, *states,
# *options, out)`` with the states float64 vectors already checked and the options as the caller
# gave them, ``d`` a ReducedData (the caller's with data=, else this thread's own, for the tree's
# workspace and the scratch), and ``out`` the block the tree's kernel writes (the workspace's own
# with data=, fresh arrays, or one state's row of a batch), which it writes in full.
# engine.algorithms.call does the rest, the same for trees and every map: checks, data=, fresh
# outputs and batches (state by state).


def _full_state(robot, qbar, vbar=None):
    """(q, A, Ȧ along q̄̇) of the tree; A and Ȧ support ``@`` and ``.T`` (a base velocity's are
    base_velocity.Block, which changes the base's six only)."""
    cmap = robot.map
    if isinstance(cmap, BaseVelocityMap):  # q = q̄; A = blockdiag(X, 1)
        X, Xdot = base_velocity.transform(cmap, qbar, None if vbar is None else vbar[0:6])
        return qbar, base_velocity.Block(X), None if vbar is None else base_velocity.Block(Xdot, 0.0)
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
def coriolis_matrix(robot, d, qbar, vbar, factorization, out):
    """M̄, Ṁ̄, C̄ (eqs. 24-25) into out[0], out[1], out[2]."""
    qf, A, Adot = _full_state(robot, qbar, vbar)
    M, Mdot, C = api.coriolis_matrix(robot.full, qf, A @ vbar, factorization, data=d.full)
    Mbar, Mdotbar, Cbar = out
    if type(A) is base_velocity.Block:  # the base's rows and columns only
        base_velocity.coriolis_kernel(A.X, Adot.X, M, Mdot, C, Mbar, Mdotbar, Cbar)
        return
    _congruence(A, M, d._tmp, Mbar)
    _congruence(A, C, d._tmp, Cbar)
    _congruence(A, Mdot, d._tmp, Mdotbar)
    if Adot is not None:
        AtMAdot = A.T @ M @ Adot
        Cbar += AtMAdot
        Mdotbar += AtMAdot + AtMAdot.T
    _symmetrize(Mbar, d._sq)
    _symmetrize(Mdotbar, d._sq)


@in_other_coordinates(api.christoffel)
def christoffel(robot, d, qbar, force, out):
    """Γ̄ (eq. 27): Γ transformed by A on each index, plus the term of φ's second derivatives."""
    qf, A, _ = _full_state(robot, qbar)
    G = api.christoffel(robot.full, qf, force=force, data=d.full)
    if type(A) is base_velocity.Block:  # the base's slices of each index only
        M = api.mass_matrix(robot.full, qf, data=d.full)
        base_velocity.christoffel_kernel(A.X, base_velocity.rate_basis(robot.map, qbar), M, G, out)
        return
    # Σ A_αi A_βj A_γk Γ_αβγ, one index at a time (a four-operand einsum costs 100 µs to plan)
    Gbar = np.tensordot(A, np.tensordot(np.tensordot(G, A, axes=(2, 0)), A, axes=(1, 0)), axes=(0, 0)).transpose(0, 2, 1)
    D = evaluation(robot).rate_basis(qbar)  # ∂²q/∂q̄_j∂q̄_k in coordinates; Ȧ(e_k) for generalized speeds
    if D is not None:
        Gbar += np.tensordot(A.T @ api.mass_matrix(robot.full, qf, data=d.full), D, axes=(1, 0))
    out[...] = Gbar


@in_other_coordinates(api.christoffel_slices)
def christoffel_slices(robot, q):
    """Γ̄ one slice at a time without Γ̄ or the tree's Γ: Γ̄[:, :, k] = C̄(q̄, e_k) =
    Aᵀ C(q, A e_k) A + Aᵀ M D[:, :, k] (C linear in its velocity, Ȧ = Σ_k D[:, :, k] q̄̇_k), in
    O(nv²) memory as the tree's own slices are; q checked as the tree's are."""
    (qbar,) = calls.checked(robot, q)
    qf, A, _ = _full_state(robot, qbar)
    A = A @ np.eye(robot.nv) if type(A) is base_velocity.Block else np.asarray(A)
    D = evaluation(robot).rate_basis(qbar)
    data = Data(robot.full)
    AtM = A.T @ api.mass_matrix(robot.full, qf) if D is not None else None
    congruence = _sparse_congruence(A) or (lambda C: A.T @ C @ A)
    for k in range(robot.nv):
        C = api.coriolis_matrix(robot.full, qf, np.ascontiguousarray(A[:, k]), data=data)[2]
        S = congruence(C)
        if D is not None:
            S = S + AtM @ D[:, :, k]
        yield k, S


def _sparse_congruence(A):
    """C ↦ AᵀCA in O(nnz(A) nv) where A is mostly zeros (mimic joints: one entry a row but the
    followers'), or None: dense, each slice's congruence cost O(nv³), 20 s for the slices of an
    800-link chain with one mimic joint."""
    if A.size < 10_000 or np.count_nonzero(A) > 0.05 * A.size:
        return None
    from scipy.sparse import csr_matrix

    At = csr_matrix(A.T)
    return lambda C: np.asarray(At @ np.asarray(At @ C.T).T)


@in_other_coordinates(api.mass_matrix)
def mass_matrix(robot, d, qbar, out):
    """M̄ = AᵀMA."""
    qf, A, _ = _full_state(robot, qbar)
    M = api.mass_matrix(robot.full, qf, data=d.full)
    if type(A) is base_velocity.Block:
        base_velocity.mass_matrix_kernel(A.X, M, out)
        return
    _congruence(A, M, d._tmp, out)
    _symmetrize(out, d._sq)


@in_other_coordinates(api.inverse_dynamics)
def inverse_dynamics(robot, d, qbar, vbar, abar, gravity, out):
    """τ̄ = Aᵀ τ(q, A q̄̇, A q̄̈ + Ȧ q̄̇)."""
    qf, A, Adot = _full_state(robot, qbar, vbar)
    acc = A @ abar if Adot is None else A @ abar + Adot @ vbar
    out[...] = A.T @ api.inverse_dynamics(robot.full, qf, A @ vbar, acc, gravity, data=d.full)


@in_other_coordinates(api.gravity_vector)
def gravity_vector(robot, d, qbar, gravity, out):
    """ḡ = Aᵀ g."""
    qf, A, _ = _full_state(robot, qbar)
    out[...] = A.T @ api.gravity_vector(robot.full, qf, gravity, data=d.full)


@in_other_coordinates(api.generalized_momentum)
def generalized_momentum(robot, d, qbar, vbar, out):
    """p̄ = M̄ q̄̇ = Aᵀ p(q, A q̄̇), into out[0] (p's row of the momentum block)."""
    qf, A, _ = _full_state(robot, qbar)
    out[0] = A.T @ api.generalized_momentum(robot.full, qf, A @ vbar, data=d.full)


@in_other_coordinates(api.coriolis_transpose_velocity)
def coriolis_transpose_velocity(robot, d, qbar, vbar, out):
    """C̄ᵀq̄̇ = Aᵀ Cᵀ(q, v) v + Ȧᵀ p(q, v) with v = A q̄̇ (C̄ = AᵀCA + AᵀMȦ), into out[1]; the tree's
    one pass gives Cᵀv and p."""
    qf, A, Adot = _full_state(robot, qbar, vbar)
    h = api.coriolis_transpose_velocity(robot.full, qf, A @ vbar, data=d.full)
    out[1] = A.T @ h if Adot is None else A.T @ h + Adot.T @ d.full.p


@in_other_coordinates(api.momentum_regressors)
def momentum_regressors(robot, d, qbar, vbar, gravity, out):
    """Ȳ_p = AᵀY_p(q, v), Ȳ_c = AᵀY_c(q, v) + ȦᵀY_p(q, v) (C̄ᵀq̄̇ = AᵀCᵀv + Ȧᵀp), Ȳ_g = AᵀY_g and
    Y_T the tree's (T is), v = A q̄̇, into the block; Ȳ_V̇ = q̄̇ᵀȲ_g follows from it as a tree's."""
    n = robot.nv
    qf, A, Adot = _full_state(robot, qbar, vbar)
    full = api.momentum_regressors(robot.full, qf, A @ vbar, gravity)
    out[:n] = A.T @ full.p
    out[n : 2 * n] = A.T @ full.c if Adot is None else A.T @ full.c + Adot.T @ full.p
    out[2 * n : 3 * n] = A.T @ full.g
    out[3 * n] = full.T


@in_other_coordinates(api.trajectory_dynamics, finish=False)
def trajectory_dynamics(robot, d, qbar, vbar, abar, gravity, out):
    """api.trajectory_dynamics's row in the robot's coordinates: ḡ = Aᵀg, C̄ q̄̇ = Aᵀ(C v + M Ȧ q̄̇),
    C̄ᵀq̄̇, p̄ = Aᵀp, τ̄ = Aᵀτ(q, v, A q̄̈ + Ȧ q̄̇) (NaN without q̄̈); T and V are the tree's (its
    potential's offset included: the tree's call finishes its row)."""
    n, nf = robot.nv, robot.full.nv
    qf, A, Adot = _full_state(robot, qbar, vbar)
    v = A @ vbar
    rate = np.zeros(nf) if Adot is None else Adot @ vbar
    row = api.trajectory_dynamics(robot.full, qf, v, A @ (np.zeros(n) if abar is None else abar) + rate, gravity)[0]
    full = row[: TRAJECTORY_QUANTITIES * nf].reshape(TRAJECTORY_QUANTITIES, nf)
    p = full[3]
    Mrate = api.inverse_dynamics(robot.full, qf, np.zeros(nf), rate, gravity=False) if Adot is not None else 0.0
    out[0:n] = A.T @ full[0]
    out[n : 2 * n] = A.T @ (full[1] + Mrate)
    out[2 * n : 3 * n] = A.T @ full[2] + (Adot.T @ p if Adot is not None else 0.0)
    out[3 * n : 4 * n] = A.T @ p
    out[4 * n : 5 * n] = A.T @ full[4] if abar is not None else np.nan
    out[-2:] = row[-2:]


@in_other_coordinates(api.forward_dynamics)
def forward_dynamics(robot, d, qbar, vbar, tau, gravity, out):
    """q̄̈ = M̄⁻¹ (τ̄ − C̄ q̄̇ − ḡ), with M̄, C̄, ḡ carried by A (a dense solve: M̄ has no tree); M̄, Ṁ̄, C̄
    and ḡ are left in the workspace."""
    if isinstance(robot.map, BaseVelocityMap):
        # A square and invertible: the tree's forward dynamics at τ = A⁻ᵀ τ̄, then q̄̈ = A⁻¹ (q̈ − Ȧ q̄̇)
        _, A, Adot = _full_state(robot, qbar, vbar)
        Ainv = A.inverse()
        qdd = api.forward_dynamics(robot.full, qbar, A @ vbar, Ainv.T @ tau, gravity, data=d.full)
        out[...] = Ainv @ (qdd - Adot @ vbar)
        return
    coriolis_matrix(robot, d, qbar, vbar, "christoffel", d.coriolis_block)
    gravity_vector(robot, d, qbar, gravity, d.g_out)
    M, _, C = d.coriolis_block
    if not calls.positive_definite(M):  # as the tree's LTDL judges its pivots
        k = int(np.argmax(np.abs(np.linalg.eigh(M)[1][:, 0])))  # the DoF the null motion moves most
        raise calls.singular_mass_matrix(robot, [robot.dof_names[k]])
    out[...] = np.linalg.solve(M, tau - C @ vbar - d.g_out)


def _reference_state(robot, qbar, vbar, vbar_r, abar_r):
    """The tree's (q, q̇, q̇_r, q̈_r) for reduced ones: q̇ = A q̄̇, q̇_r = A q̄̇_r, q̈_r = A q̄̈_r + Ȧ q̄̇_r,
    with Ȧ along the true motion, so that Aᵀ τ_SL(tree) = M̄ q̄̈_r + C̄ q̄̇_r + ḡ."""
    qf, A, Adot = _full_state(robot, qbar, vbar)
    if type(A) is base_velocity.Block:  # the three products in one compiled call
        tree = np.empty((3, robot.nv))
        base_velocity.reference_kernel(A.X, Adot.X, vbar, vbar_r, abar_r, tree)
        return qf, A, tree[0], tree[1], tree[2]
    acc = A @ abar_r + (0.0 if Adot is None else Adot @ vbar_r)
    return qf, A, A @ vbar, A @ vbar_r, acc


@in_other_coordinates(api.slotine_li)
def slotine_li(robot, d, qbar, vbar, vbar_r, abar_r, theta, gravity, factorization, out):
    """τ̄ = Aᵀ τ_SL(q, A q̄̇, A q̄̇_r, A q̄̈_r + Ȧ q̄̇_r)."""
    qf, A, v, v_r, a_r = _reference_state(robot, qbar, vbar, vbar_r, abar_r)
    out[...] = A.T @ api.slotine_li(robot.full, qf, v, v_r, a_r, theta, gravity, factorization, data=d.full)


@in_other_coordinates(api.regressor)
def regressor(robot, d, qbar, vbar, vbar_r, abar_r, gravity, factorization, out):
    """Ȳ = Aᵀ Y, into out's first nv rows (one state's block has a row more, a batch's does not)."""
    qf, A, v, v_r, a_r = _reference_state(robot, qbar, vbar, vbar_r, abar_r)
    out[: robot.nv] = A.T @ api.regressor(robot.full, qf, v, v_r, a_r, gravity, factorization)


@in_other_coordinates(api.adaptation_gradient)
def adaptation_gradient(robot, d, qbar, vbar, vbar_r, abar_r, gravity, factorization, out):
    """Ȳᵀ s̄ = Yᵀ A s̄: the tree's recursion at q̇ = A q̄̇ and q̇_r = A q̄̇_r."""
    qf, A, v, v_r, a_r = _reference_state(robot, qbar, vbar, vbar_r, abar_r)
    out[...] = api.adaptation_gradient(robot.full, qf, v, v_r, a_r, gravity, factorization)


# ---- derivatives: congruences where A is constant, chain rules for a moving base ---------------
def _moving_base(robot) -> bool:
    """A floating base's velocity in the mixed or inertial representation: A = blockdiag(X(q), 1),
    whose derivatives are base_velocity's chain rules."""
    return isinstance(robot.map, BaseVelocityMap) and robot.map.representation != "body"


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


def _congruent(A, d, blocks, out, symmetric=None):
    """out[i] = Aᵀ X_i A of each of the tree's blocks; out[symmetric], M̄ where one is, made exactly
    symmetric."""
    for block, o in zip(blocks, out):
        _congruence(A, block, d._tmp, o)
    if symmetric is not None:
        _symmetrize(out[symmetric], d._sq)


@in_other_coordinates(api.inverse_dynamics_derivatives)
def inverse_dynamics_derivatives(robot, d, qbar, vbar, abar, gravity, out):
    """Aᵀ ∂τ/∂q A, Aᵀ ∂τ/∂q̇ A, Aᵀ M A of τ̄ = Aᵀ τ(q, A q̄̇, A q̄̈) (A constant); q̄ moves by
    integrate(robot, q̄, δ̄), the tree by A δ̄."""
    if _moving_base(robot):
        base_velocity.inverse_dynamics_derivatives(robot, qbar, vbar, abar, gravity, d, out)
        return
    qf, A = _constant_map(robot, qbar)
    full = api.inverse_dynamics_derivatives(robot.full, qf, A @ vbar, A @ abar, gravity, data=d.full)
    _congruent(A, d, full, out, symmetric=2)


@in_other_coordinates(api.forward_dynamics_derivatives)
def forward_dynamics_derivatives(robot, d, qbar, vbar, tau, gravity, out):
    """∂q̄̈/∂x̄ = −M̄⁻¹ ∂τ̄/∂x̄ at q̄̈ = FD(q̄, q̄̇, τ̄), and M̄⁻¹ (a dense Cholesky: M̄ has no tree); q̄̈
    and ∂τ̄/∂x̄ are left in the workspace."""
    if not _moving_base(robot):
        _constant_map(robot, qbar)  # refused before any work
    forward_dynamics(robot, d, qbar, vbar, tau, gravity, d.qdd_out)
    inverse_dynamics_derivatives(robot, d, qbar, vbar, d.qdd_out, gravity, d.derivatives_block)
    dq, dv, M = d.derivatives_block
    L = np.linalg.cholesky(M)  # M̄ is positive definite: forward_dynamics said so
    Minv = out[2]
    Minv[...] = np.linalg.solve(L.T, np.linalg.solve(L, np.eye(robot.nv)))
    _symmetrize(Minv, d._sq)
    np.matmul(Minv, dq, out=out[0])
    np.matmul(Minv, dv, out=out[1])
    out[0] *= -1.0
    out[1] *= -1.0


@in_other_coordinates(api.slotine_li_derivatives)
def slotine_li_derivatives(robot, d, qbar, vbar, vbar_r, abar_r, gravity, factorization, out):
    """Aᵀ X A of the tree's four (A constant: τ̄ = Aᵀ τ(q, A q̄̇, A q̄̇_r, A q̄̈_r))."""
    if _moving_base(robot):
        base_velocity.slotine_li_derivatives(robot, qbar, vbar, vbar_r, abar_r, gravity, factorization, d, out)
        return
    qf, A = _constant_map(robot, qbar)
    full = api.slotine_li_derivatives(robot.full, qf, A @ vbar, A @ vbar_r, A @ abar_r, gravity, factorization,
                                      data=d.full)
    _congruent(A, d, full, out, symmetric=3)


@in_other_coordinates(api.coriolis_product_derivatives)
def coriolis_product_derivatives(robot, d, qbar, vbar, w, factorization, out):
    """Aᵀ X A of the tree's two (A constant: C̄ v̄ = Aᵀ C(q, A q̄̇) A v̄)."""
    if _moving_base(robot):  # C̄ v̄ = Aᵀ (C(q, A ν) A v̄ + M Ȧ(ν) v̄): Slotine–Li at q̄̈_r = 0 without gravity
        n = robot.nv
        base_velocity.slotine_li_derivatives(robot, qbar, vbar, w, np.zeros(n), False, factorization, d,
                                             (out[0], out[1], np.zeros((n, n)), np.zeros((n, n))))
        return
    qf, A = _constant_map(robot, qbar)
    full = api.coriolis_product_derivatives(robot.full, qf, A @ vbar, A @ w, factorization, data=d.full)
    _congruent(A, d, full, out)


@in_other_coordinates(api.gravity_derivatives)
def gravity_derivatives(robot, d, qbar, gravity, out):
    """Aᵀ ∂g/∂q A (A constant: ḡ = Aᵀ g(q))."""
    if _moving_base(robot):
        base_velocity.gravity_derivatives(robot, qbar, gravity, d, out)
        return
    qf, A = _constant_map(robot, qbar)
    _congruent(A, d, (api.gravity_derivatives(robot.full, qf, gravity, data=d.full),), (out,))


@in_other_coordinates(api.momentum_derivatives)
def momentum_derivatives(robot, d, qbar, vbar, out):
    """∂τ̄/∂q̄ at rest with q̄̈ = q̄̇ and no gravity, as on the tree: τ̄(q̄, 0, u) = Aᵀ τ(q, 0, A u) = M̄ u
    (Ȧ multiplies q̄̇ = 0), so p̄ = M̄ q̄̇ is the same function of q̄ (into a block of its own, so that
    data.dtau_dq stays what the last inverse_dynamics_derivatives gave)."""
    block = np.empty((3, robot.nv, robot.nv))
    inverse_dynamics_derivatives(robot, d, qbar, np.zeros(robot.nv), vbar, False, block)
    out[...] = block[0]


@in_other_coordinates(api.coriolis_transpose_derivatives)
def coriolis_transpose_derivatives(robot, d, qbar, vbar, out):
    """Aᵀ X A of the tree's two (A constant: C̄ᵀq̄̇ = Aᵀ Cᵀ(q, A q̄̇) A q̄̇)."""
    if _moving_base(robot):
        base_velocity.coriolis_transpose_derivatives(robot, qbar, vbar, d, out)
        return
    qf, A = _constant_map(robot, qbar)
    full = api.coriolis_transpose_derivatives(robot.full, qf, A @ vbar, data=d.full)
    _congruent(A, d, full, out)


@in_other_coordinates(api.inverse_dynamics_second_derivatives)
def inverse_dynamics_second_derivatives(robot, d, qbar, vbar, abar, gravity, force, out):
    """T̄_ijk = Σ A_αi A_βj A_γk T_αβγ of each of the tree's four (A constant: τ̄ = Aᵀ τ(q, A q̄̇, A q̄̈))."""
    if _moving_base(robot):
        base_velocity.second_derivatives(robot, qbar, vbar, abar, gravity, force, out)
        return
    qf, A = _constant_map(robot, qbar)
    full = api.inverse_dynamics_second_derivatives(robot.full, qf, A @ vbar, A @ abar, gravity, force, data=d.full)
    for T, o in zip(full, out):
        o[...] = np.einsum("abc,ai,bj,ck->ijk", T, A, A, A, optimize=True)


@in_other_coordinates(api.inverse_dynamics_second_derivatives_contracted)
def inverse_dynamics_second_derivatives_contracted(robot, d, qbar, vbar, abar, lam, gravity, out):
    """Aᵀ X(A λ̄) A of each of the tree's four (A constant: Σ_i λ̄_i T̄_ijk = Σ A_βj A_γk (A λ̄)_α T_αβγ); a
    moving base's from its tensors (base_velocity.second_derivatives), contracted."""
    if _moving_base(robot):  # the four tensors exist on this route: what the machine has is checked
        check_memory(gamma_bytes_for(robot.nv, 4), "the second-order derivatives in a moving base's coordinates")
        tensors = np.empty((4, robot.nv, robot.nv, robot.nv))
        base_velocity.second_derivatives(robot, qbar, vbar, abar, gravity, True, tensors)
        out[...] = np.einsum("i,tijk->tjk", lam, tensors)
        return
    qf, A = _constant_map(robot, qbar)
    full = api.inverse_dynamics_second_derivatives_contracted(robot.full, qf, A @ vbar, A @ abar, A @ lam, gravity,
                                                              data=d.full)
    _congruent(A, d, full, out)


@in_other_coordinates(api.forward_dynamics_second_derivatives_contracted)
def forward_dynamics_second_derivatives_contracted(robot, d, qbar, vbar, tau, lam, gravity, out):
    """The tree's formulas (api.forward_second_order) on this robot's own functions: τ̄'s contraction
    with μ̄ = M̄⁻¹λ̄ at q̄̈ and the first derivatives."""
    out[...] = api.forward_second_order(robot, qbar, vbar, tau, gravity, lam)


def derivatives_refusal(robot) -> str | None:
    """Why the derivatives do not take this robot (closed loops, non-linear mimic functions), or
    None: what verify and bench ask before checking or timing them."""
    zeros = np.zeros(robot.nv)
    try:
        api.inverse_dynamics_derivatives(robot, robot.neutral_configuration(), zeros, zeros)
    except StateError as e:  # with its remedy, as compute says it (--loops open, --mimic independent)
        return f"{e} ({e.hint})" if e.hint else str(e)
    return None
