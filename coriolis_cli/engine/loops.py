"""Closed kinematic loops as a change of coordinates: the solve (core paper Sec. 3.3;
Featherstone ch. 8). The structure (closures on the tree's bodies, q̄ and q_d, the packed
closures) is model.loops'.

The ``joints:`` of a description span a tree; each ``loops:`` entry is a joint that closes a loop
of it, which the tree does not hold: the constraint φ(q) = 0 (the closure's two frames coincide,
up to rotation about a revolute closure's axis). The loops' joints are described by scalar
coordinates x (a 1-DoF joint's value, a spherical joint's three angles: model.loops), whose rates
give the joints' velocities as v = E(x) ẋ (E = B J(θ) on a spherical joint, 1 on a 1-DoF one).
The coordinates split into the independent ones (in q̄, listed by the user or chosen) and the
dependent ones x_d, which are solved for, so that q = q(q̄) and q̇ = A(q̄) q̄̇ with

    K = ∂φ/∂q,  K_x = K E,  X_d = -(K_x)_d⁺ K_i  (ẋ = X q̄̇; K_i: K_x's independent columns
    and K's columns off the loops),  A = E X  (and the identity on the joints off the loops),
    (K_x)_d Ẋ_d = -(K̇ A + K Ė X)   (from d/dt (K A) = 0),   Ȧ = Ė X + E Ẋ.

On 1-DoF joints E = 1, so A = [I; -K_d⁺ K_i] and Ȧ_d = -K_d⁺ K̇ A.

K_d⁺ is an SVD pseudo-inverse: a planar loop gives redundant rows (a revolute closure's five
rows have rank two), which a rank-revealing solve handles where a square solve would not. K̇ is
exact: the columns of K are built from the motion subspaces S_j, whose rate is Ṡ_j = v_j × S_j.
The change of coordinates itself is engine.coordinates': M̄ = AᵀMA, C̄ = AᵀCA + AᵀMȦ, Γ̄ with ∂²q/∂q̄_j∂q̄_k
= ∂A[:, j]/∂q̄_k = Ȧ(e_k)[:, j].

The assembly is picked once: Newton's method from the description's ``guess`` at the independent
coordinates' neutral values. Each evaluation follows that assembly from there to q̄ by
continuation (engine/core/closure.hpp), never from the previous call, so a result depends on q̄
alone. The loops count as closed when the residual is below CLOSURE_TOL times the robot's size
(in metres; rotation residuals are sines of angles); Newton stops well below it, at round-off.
Where K_d's σ_min/σ_max falls below SINGULAR_RATIO (near a dead point, where A grows without
bound) the evaluation is refused.
"""

from __future__ import annotations

import time
from functools import cached_property

import numpy as np

from ..errors import ModelError, StateError
from ..model.loops import LoopMap, euler_rates, euler_rates_rate
from . import calls, compiled
from .conventions import failed
from .data import Data

CLOSURE_TOL = 1e-10  # residual accepted as closed, relative to the robot's size (at least 1 m)
SINGULAR_RATIO = 1e-6  # σ_min/σ_max of K_d below which q̄ no longer determines q_d to a trustworthy precision
MAX_NEWTON_STEPS = 60
MAX_PATH_STEP = 0.5  # largest change of an independent loop coordinate per continuation step (rad or m)
MAX_RANDOM_DRAWS = 200
RANDOM_DRAW_SECONDS = 10.0  # a random closed configuration is refused after this long


def constraints(robot, packed, n_rows: int, q):
    """φ(q) and K = ∂φ/∂q of packed closures (model.loops) on the robot's tree, as the loop solve
    computes them: the reference the loader's geometric K (LoopMap.loop_jacobian) is held to."""
    data = Data(robot)
    r, K = np.zeros(n_rows), np.zeros((n_rows, robot.nv))
    status = compiled.loop_constraints(data.core, np.ascontiguousarray(q, dtype=float), None, *packed, r, K)
    if failed(status):
        calls.report_status(robot, status, q)
    return r, K


def dependent_rates(Kx_d, K_i):
    """(X_d = −(K_x)_d⁺ K_i, (K_x)_d⁺, σ_min/σ_max of (K_x)_d) from one SVD of (K_x)_d; the ratio says
    whether the independent coordinates determine the dependent ones (0 where they do not). (A
    few unknowns, once per solve: NumPy's LAPACK is the right tool.)"""
    U, s, Vt = np.linalg.svd(Kx_d, full_matrices=False)
    if s.shape[0] < Kx_d.shape[1] or not s[-1] > 0.0:
        return None, None, 0.0
    pinv = (Vt.T / s) @ U.T  # V Σ⁻¹ Uᵀ
    return -pinv @ K_i, pinv, s[-1] / s[0]


# A sliding independent coordinate this many times the linkage's size away from the assembly is
# refused before the solve walks there (the walk is bounded by it).
MAX_SLIDE = 1e3


def placements(robot, q):
    """Every body's placement and every DoF's motion subspace in the computation frame (world axes
    at the first root joint; for a floating base, the base frame at this instant), fresh arrays:
    R (N, 3, 3) and p (N, 3) with a point x of body i at p_i + R_i x, and S (nv, 6) = [ω; v_O] per
    unit joint velocity. The closures' placements are measured from these."""
    R, p, S = np.zeros((robot.n_bodies, 3, 3)), np.zeros((robot.n_bodies, 3)), np.zeros((robot.nv, 6))
    core = Data(robot).core
    status = compiled.placements(core, q, R, p, S)
    if status:
        calls.settle(robot, status, compiled.placements, core, q, (), (R, p, S))
    return R, p, S


class LoopSolver:
    """The loop solve of one LoopMap: q(q̄), A(q̄), Ȧ, ∂²q/∂q̄², random closed configurations."""

    _SHARED = ("robot", "closures", "coordinate_table", "coordinate_basis", "dep", "loop_ind", "copied_q",
               "copied_qbar", "copied_v", "copied_vbar", "loop_ind_pos", "loop_ind_vpos", "nq", "nv", "n_rows",
               "guess_x", "packed", "dependent_names", "config_names")

    def __init__(self, structure: LoopMap):
        for name in self._SHARED:  # plain attributes: the solve reads them on every call
            setattr(self, name, getattr(structure, name))
        self.structure = structure
        self._core = Data(self.robot).core
        self._loops = (self.coordinate_table, self.coordinate_basis)
        self._last = None  # (q̄ bytes, solution): repeated calls at one q̄ solve once
        self._near_first = False  # once a draw over the limits has failed, later calls draw near the assembly

    @cached_property
    def size(self) -> float:
        """The robot's size in metres (at least 1): the scale of position residuals."""
        _, p, _ = placements(self.robot, self.robot.neutral_configuration())
        return max(1.0, float(np.max(np.linalg.norm(p, axis=1), initial=0.0)),
                   *(float(np.linalg.norm(c.oP)) + float(np.linalg.norm(c.oC)) for c in self.closures))

    # ---- the constraint and its Jacobian (engine.closure) ---------------------------------
    def _rate(self, q, u):
        """K̇ along the full joint velocity u."""
        Kdot = np.zeros((self.n_rows, self.robot.nv))
        status = compiled.loop_constraints(self._core, q, np.ascontiguousarray(u, dtype=float), *self.packed, None, Kdot)
        if failed(status):
            calls.report_status(self.robot, status, q)
        return Kdot

    # ---- the solve (compiled: engine/core/closure.hpp) -------------------------------------------
    @cached_property
    def _reference(self) -> np.ndarray:
        """The loops' coordinates x at the assembly the guess picks: solved by Newton's method from
        the guess at the independent coordinates' neutral values. Every evaluation starts here."""
        x = self.guess_x.copy()
        q = self.structure.configuration(self.robot.neutral_configuration(), x)
        tol = CLOSURE_TOL * self.size
        r, K = np.zeros(self.n_rows), np.zeros((self.n_rows, self.robot.nv))
        status = compiled.loop_newton(self._core, *self.packed, *self._loops, q, x, self.dep, r, K, 1e-5 * tol,
                                      MAX_NEWTON_STEPS)
        if failed(status):
            calls.report_status(self.robot, status, q)
        if not np.linalg.norm(r) <= tol:
            raise ModelError(f"the loops do not close from the guess at the neutral configuration (closure "
                             f"'{self._worst_closure(r)}' stays {np.linalg.norm(r):.3g} apart); give a 'guess' "
                             "of the solved joints for an assembled linkage at zero independent coordinates")
        x.setflags(write=False)
        return x

    @property
    def _turning(self) -> np.ndarray:
        """Which of the loops' independent coordinates are angles (of revolute or spherical joints)."""
        kinds = {int(self.robot.q_start[i]): b.joint.type for i, b in enumerate(self.robot.bodies)}
        return np.array([kind > 0 or kinds[int(qs)] in ("revolute", "continuous")
                         for kind, qs, _ in self.coordinate_table[self.loop_ind]], dtype=bool)

    def _solve(self, qbar):
        """Follow the assembly branch from the reference to q̄ (engine/core/closure.hpp),
        then A from the constraint Jacobian there: (q, A, (K_x)_d⁺, X, x, K)."""
        qbar = np.asarray(qbar, dtype=float)
        key = qbar.tobytes()
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        tol = CLOSURE_TOL * self.size
        x = self._reference.copy()
        x0 = x[self.loop_ind].copy()
        q = self.robot.neutral_configuration()
        q[self.copied_q] = qbar[self.copied_qbar]
        r, K = np.zeros(self.n_rows), np.zeros((self.n_rows, self.robot.nv))
        target = np.array(qbar[self.loop_ind_pos], dtype=float)
        # a revolute coordinate turns the linkage back into itself every 2π: follow the branch to the
        # nearest equivalent angle, so that q̄ = 1e9 rad costs what q̄ = 0.3 does, then put it back
        turning = self._turning
        target[turning] = x0[turning] + np.remainder(target[turning] - x0[turning] + np.pi, 2 * np.pi) - np.pi
        far = np.abs(target - x0)[~turning]
        if far.size and far.max() > MAX_SLIDE * self.size:
            raise StateError(f"the loops cannot close at this configuration ({self._state_text(qbar)}): a sliding "
                             f"coordinate {far.max():.3g} m from the assembly, beyond {MAX_SLIDE:g} times the "
                             "linkage's size, which no linkage reaches")
        code = compiled.loop_continuation(self._core, *self.packed, *self._loops, q, x, self.dep, self.loop_ind,
                                          x0, target, tol, MAX_PATH_STEP, r, K)
        if code != 0:
            raise StateError(f"the loops cannot close at this configuration ({self._state_text(qbar)}): following "
                             f"the assembly from the guess, closure '{self._worst_closure(r)}' cannot be kept closed "
                             "(the linkage cannot reach it, or passes a singularity on the way)")
        x[self.loop_ind] = qbar[self.loop_ind_pos]  # the same pose: angles as given
        scalar = self.coordinate_table[self.loop_ind, 0] == 0
        q[self.coordinate_table[self.loop_ind[scalar], 1]] = qbar[self.loop_ind_pos[scalar]]
        A, pinv, X = self._jacobian_from(K, x)
        for a in (q, A, pinv, X, x, K):  # cached and handed out: read-only, so no caller can change the cache
            a.setflags(write=False)
        sol = (q, A, pinv, X, x, K)
        self._last = (key, sol)
        return sol

    def _worst_closure(self, r) -> str:
        row, worst, name = 0, -1.0, self.closures[0].name
        for c in self.closures:
            e = float(np.linalg.norm(r[row : row + c.rows]))
            if e > worst:
                worst, name = e, c.name
            row += c.rows
        return name

    def _state_text(self, qbar) -> str:
        return ", ".join(f"{n}={v:.6g}" for n, v in zip(self.config_names, qbar))[:200]

    def _spread(self, x, X, rates=None):
        """E X (rows of the full v), or Ė X given the coordinates' rates ẋ: E = B J(θ) on a
        spherical joint's three columns (J̇ for Ė), 1 (0) on a 1-DoF joint's."""
        out = np.zeros((self.robot.nv, X.shape[1]))
        for k, (kind, _, vs) in enumerate(self.coordinate_table):
            if kind == 0:
                if rates is None:
                    out[vs] = X[k]
            elif kind == 1:
                B = self.coordinate_basis[k].reshape(3, 3)
                J = euler_rates(x[k : k + 3]) if rates is None else euler_rates_rate(x[k : k + 3], rates[k : k + 3])
                out[vs : vs + 3] = B @ J @ X[k : k + 3]
        return out

    def _jacobian_from(self, K, x):
        """A = E X with X_d = −(K_x)_d⁺ K_i, (K_x)_d⁺, and X (the head of this module)."""
        X = np.zeros((len(x), self.nv))
        X[self.loop_ind, self.loop_ind_vpos] = 1.0
        Kx = K @ self._spread(x, np.eye(len(x)))
        K_i = np.zeros((self.n_rows, self.nv))
        K_i[:, self.copied_vbar] = K[:, self.copied_v]
        K_i += Kx @ X
        X[self.dep], pinv, ratio = dependent_rates(Kx[:, self.dep], K_i)
        if not ratio > SINGULAR_RATIO:
            raise StateError(f"the linkage is singular at this configuration: the independent coordinates do not "
                             f"determine {', '.join(self.dependent_names)} (rank of ∂φ/∂x_d below "
                             f"{len(self.dep)})")
        A = self._spread(x, X)
        A[self.copied_v, self.copied_vbar] = 1.0
        KA = K @ A
        nK, nA = float(np.sum(K * K)), float(np.sum(A * A))
        if (float(np.sum(KA * KA)) / (max(nK, 1.0) * max(nA, 1.0))) ** 0.5 > 1e-8:
            raise ModelError("the loops constrain the independent coordinates themselves: they cannot all move "
                             "freely (list fewer, or other, joints as independent)")
        return A, pinv, X

    # ---- the map's interface (engine.coordinates) -----------------------------------------
    def full_configuration(self, qbar) -> np.ndarray:
        return self._solve(qbar)[0].copy()

    def jacobian(self, qbar) -> np.ndarray:
        return self._solve(qbar)[1]

    def jacobian_rate(self, qbar, vbar) -> np.ndarray:
        """Ȧ = Σ_k ∂A/∂q̄_k q̄̇_k = Ė X + E Ẋ, Ẋ zero on the independent rows and −(K_x)_d⁺ (K̇ A + K Ė X)
        on the dependent ones."""
        q, A, pinv, X, x, K = self._solve(qbar)
        vbar = np.asarray(vbar, dtype=float)
        Kdot = self._rate(q, A @ vbar)
        EdotX = self._spread(x, X, rates=X @ vbar)
        Xdot = np.zeros_like(X)
        Xdot[self.dep] = -pinv @ (Kdot @ A + K @ EdotX)
        return EdotX + self._spread(x, Xdot)

    def rate_basis(self, qbar) -> np.ndarray:
        """D[:, j, k] = ∂²q/∂q̄_j∂q̄_k = Ȧ(e_k)[:, j] (Ȧ is linear in q̄̇)."""
        D = np.zeros((self.robot.nv, self.nv, self.nv))
        for k in range(self.nv):
            e = np.zeros(self.nv)
            e[k] = 1.0
            D[:, :, k] = self.jacobian_rate(qbar, e)
        return D

    def random_configuration(self, rng) -> np.ndarray:
        """Random independent coordinates (within the joint limits) at which the loops close: drawn
        over the limits, and once such a draw has failed, near the assembly (the loops'
        independent coordinates within 1/n, 0.5/n, 0.25/n, ... of it), so that a linkage that closes
        only near its assembly (a long closed chain) answers in a few solves. Bounded by
        RANDOM_DRAW_SECONDS as well as by MAX_RANDOM_DRAWS."""
        rng = np.random.default_rng(rng)
        x0 = self._reference[self.loop_ind]
        deadline = None  # from the first failed draw: the first solve may compile the kernels
        for k in range(MAX_RANDOM_DRAWS):
            qbar = self.structure.reduce_configuration(self.robot.random_configuration(rng))
            near = k > 0 or self._near_first
            if near:
                radius = 0.5 ** max(0, k - 1) / max(1, len(x0))  # n coordinates add their errors up
                qbar[self.loop_ind_pos] = x0 + rng.uniform(-radius, radius, len(x0))
            try:
                self._solve(qbar)
            except StateError:
                self._near_first = True
                if deadline is None:
                    deadline = time.monotonic() + RANDOM_DRAW_SECONDS
                elif time.monotonic() > deadline:
                    raise StateError(f"no random configuration closes the loops ({k + 1} draws in "
                                     f"{RANDOM_DRAW_SECONDS:g} s, over the joint limits and near the assembly); give "
                                     "the state with --q, or narrow the independent joints' limits to where the "
                                     "linkage assembles") from None
                continue
            return qbar
        raise StateError(f"no random configuration within the joint limits closes the loops ({MAX_RANDOM_DRAWS} "
                         "draws); narrow the independent joints' limits to where the linkage assembles")

