"""Closed kinematic loops as a change of coordinates (core paper Sec. 3.3; Featherstone ch. 8).

The ``joints:`` of a description span a tree; each ``loops:`` entry is a joint that closes a loop
of it, which the tree does not hold: the constraint φ(q) = 0 (the closure's two frames coincide,
up to rotation about a revolute closure's axis). The joints of the loops split into the
independent coordinates q̄ (listed by the user) and the dependent ones q_d, which are solved for,
so that q = q(q̄) and q̇ = A(q̄) q̄̇ with

    K = ∂φ/∂q,   K_d A_d = -K_i   (so K A = 0),   A = [I; -K_d⁺ K_i]   (rows reordered),
    K_d Ȧ_d = -K̇ A            (from d/dt (K A) = 0; Ȧ is zero on the independent rows).

K_d⁺ is an SVD pseudo-inverse: a planar loop gives redundant rows (a revolute closure's five
rows have rank two), which a rank-revealing solve handles where a square solve would not. K̇ is
exact: the columns of K are built from the motion subspaces S_j, whose rate is Ṡ_j = v_j × S_j. The change
of coordinates itself is engine.coordinates': M̄ = AᵀMA, C̄ = AᵀCA + AᵀMȦ, Γ̄ with ∂²q/∂q̄_j∂q̄_k
= ∂A[:, j]/∂q̄_k = Ȧ(e_k)[:, j].

The assembly is picked once: Newton's method from the description's ``guess`` at the independent
coordinates' neutral values. Each evaluation follows that assembly from there to q̄ by
continuation (engine.closure, compiled), never from the previous call, so a result depends on q̄
alone. The loops count as closed when the residual is below CLOSURE_TOL times the robot's size
(in metres; rotation residuals are sines of angles); Newton stops well below it, at round-off.
Where K_d's σ_min/σ_max falls below SINGULAR_RATIO (near a dead point, where A grows without
bound) the evaluation is refused.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..errors import ModelError, StateError
from ..model.coordinates import ReducedRobot
from ..model.geometry import rpy_to_matrix
from ..model.tree import RobotModel
from . import api
from .closure import (CLOSURE_GEOM_WIDTH, constraint_rate_kernel, continuation_kernel, dependent_jacobian_kernel,
                      newton_kernel)
from .joints import failed

CLOSURE_TOL = 1e-10  # residual accepted as closed, relative to the robot's size (at least 1 m)
SINGULAR_RATIO = 1e-6  # σ_min/σ_max of K_d below which q̄ no longer determines q_d to a trustworthy precision
MAX_NEWTON_STEPS = 60
MAX_PATH_STEP = 0.5  # largest change of an independent loop coordinate per continuation step (rad or m)
MAX_RANDOM_DRAWS = 200
_ONE_DOF = ("revolute", "continuous", "prismatic")
_CONSTRAINT_RATE = api._Compiled(constraint_rate_kernel)
_NEWTON = api._Compiled(newton_kernel)
_CONTINUATION = api._Compiled(continuation_kernel)
_DEPENDENT_JACOBIAN = api._Compiled(dependent_jacobian_kernel)


class _Closure:
    """One loop-closure joint, resolved onto the tree's bodies: frame (R, o) in each side's body
    (body -1: the world), and for a revolute closure the axis and two normals in the frame."""

    def __init__(self, robot: RobotModel, spec, world_offset: np.ndarray):
        self.name, self.revolute = spec.name, spec.type == "revolute"
        sides = []
        for link, xyz, rpy in ((spec.parent, spec.xyz, spec.rpy), (spec.child, spec.child_xyz, spec.child_rpy)):
            body, R_link, p_link = robot.link_frames[link]
            R = R_link @ rpy_to_matrix(rpy)
            o = R_link @ np.asarray(xyz, float) + p_link
            if body < 0:  # welded to the world: placed once, in the computation frame
                o = o - world_offset
            sides.append((int(body), R, o))
        (self.bP, self.RP, self.oP), (self.bC, self.RC, self.oC) = sides
        a = np.asarray(spec.axis, float)
        e1 = np.cross(a, np.array([1.0, 0.0, 0.0] if abs(a[0]) < 0.9 else [0.0, 1.0, 0.0]))
        e1 /= np.linalg.norm(e1)
        self.axis, self.normals = a, np.stack([e1, np.cross(a, e1)])
        self.rows = 5 if self.revolute else 3  # 3 position rows, then n_k · a_C for k = 1, 2


class LoopMap:
    """q = q(q̄): the independent coordinates given, the loops' other joints solved for."""

    velocities_are_coordinates = True  # loop joints are 1-DoF; a floating base stays as it is

    def __init__(self, robot: RobotModel):
        desc = robot.description
        by_name = {b.joint.name: i for i, b in enumerate(robot.bodies)}
        root = robot.bodies[0]
        offset = np.asarray(root.joint.translation, float) if root.parent < 0 and root.joint.type != "free" else np.zeros(3)
        self.robot = robot
        self.closures = [_Closure(robot, c, offset) for c in desc.loops]
        anc = robot.body_ancestors
        in_loop = np.zeros(robot.n_bodies, dtype=bool)
        for c in self.closures:
            side_p = anc[:, c.bP] if c.bP >= 0 else np.zeros(robot.n_bodies, bool)
            side_c = anc[:, c.bC] if c.bC >= 0 else np.zeros(robot.n_bodies, bool)
            in_loop |= side_p ^ side_c  # the path between the two sides, common ancestors excluded
        for i in np.flatnonzero(in_loop):
            j = robot.bodies[i].joint
            if j.type not in _ONE_DOF:
                raise ModelError(f"joint '{j.name}' lies on a closed loop and is {j.type}; loop joints must be "
                                 "revolute, continuous or prismatic")
        for name in desc.independent:
            if name not in by_name:
                raise ModelError(f"independent coordinate '{name}' is a fixed joint")
        # joints outside the loops are independent whether listed or not
        chosen = {by_name[n] for n in desc.independent if in_loop[by_name[n]]}
        for c in self.closures:
            if c.bP == c.bC:
                raise ModelError(f"loop closure '{c.name}' joins two links of one rigid body (joined by fixed joints): "
                                 "it closes no loop")
        dependent = [i for i in np.flatnonzero(in_loop) if i not in chosen]
        self._chosen = chosen
        if not dependent:
            raise ModelError("every joint of the loops is listed as independent: nothing is left to close them")
        self.dependent_bodies = tuple(int(i) for i in dependent)
        self.independent_bodies = tuple(i for i in range(robot.n_bodies) if i not in set(dependent))
        self.dep_v = np.array([robot.v_start[i] for i in dependent], dtype=np.int64)
        self.dep_q = np.array([robot.q_start[i] for i in dependent], dtype=np.int64)
        self.ind_q = np.array([int(robot.q_start[i]) + k for i in self.independent_bodies
                               for k in range(robot.bodies[i].joint.nq)], dtype=np.int64)
        self.ind_v = np.array([int(robot.v_start[i]) + k for i in self.independent_bodies
                               for k in range(robot.bodies[i].joint.nv)], dtype=np.int64)
        self.nq, self.nv = len(self.ind_q), len(self.ind_v)
        if self.nv == 0:
            raise ModelError("the loops leave no independent coordinate: list the minimal coordinates among the "
                             f"loops' joints in 'independent:' (loop joints: {', '.join(self.dependent_names)})")
        loop_ind = sorted(chosen)  # 1-DoF: one q and one v entry each
        self.loop_ind_q = np.array([robot.q_start[i] for i in loop_ind], dtype=np.int64)
        self.loop_ind_v = np.array([robot.v_start[i] for i in loop_ind], dtype=np.int64)
        self.loop_ind_pos = np.searchsorted(self.ind_q, self.loop_ind_q)  # their places in q̄
        guess = dict(desc.guess)
        for name in guess:
            if name not in by_name or by_name[name] not in set(dependent):
                raise ModelError(f"guess names '{name}', which is not a joint solved for by the loops "
                                 f"(those are: {', '.join(self.dependent_names)})")
        self.guess = np.array([guess.get(robot.bodies[i].joint.name, 0.0) for i in dependent])
        self.n_rows = sum(c.rows for c in self.closures)
        self._packed = _pack(robot, self.closures)
        self._kdata = robot.create_data().kernel
        self._last = None  # (q̄ bytes, solution): repeated calls at one q̄ solve once

    @property
    def dependent_names(self) -> tuple[str, ...]:
        return tuple(self.robot.bodies[i].joint.name for i in self.dependent_bodies)

    @cached_property
    def size(self) -> float:
        """The robot's size in metres (at least 1): the scale of position residuals."""
        _, p, _ = api.placements(self.robot, self.robot.neutral_configuration())
        return max(1.0, float(np.max(np.linalg.norm(p, axis=1), initial=0.0)),
                   *(float(np.linalg.norm(c.oP)) + float(np.linalg.norm(c.oC)) for c in self.closures))

    # ---- the constraint and its Jacobian (engine.closure) ---------------------------------
    def _rate(self, q, u):
        """K̇ along the full joint velocity u."""
        Kdot = np.zeros((self.n_rows, self.robot.nv))
        status = _CONSTRAINT_RATE.call(self.robot.arrays, self._kdata, q, np.ascontiguousarray(u, dtype=float),
                                       *self._packed, Kdot)
        if failed(status):
            api._report(self.robot, status, q)
        return Kdot

    # ---- the solve (compiled: engine.closure) ---------------------------------------------------
    def _newton(self, q, goal):
        """Newton's method on the dependent joints from q, in place: (q, r, K)."""
        r, K = np.zeros(self.n_rows), np.zeros((self.n_rows, self.robot.nv))
        status = _NEWTON.call(self.robot.arrays, self._kdata, *self._packed, q, self.dep_q, self.dep_v, r, K, goal,
                              MAX_NEWTON_STEPS)
        if failed(status):
            api._report(self.robot, status, q)
        return q, r, K

    @cached_property
    def _reference(self):
        """The assembly the guess picks: the loops solved by Newton from the guess at the
        independent coordinates' neutral values. Every evaluation starts from here."""
        q = self.robot.neutral_configuration()
        q[self.dep_q] = self.guess
        tol = CLOSURE_TOL * self.size
        q, r, K = self._newton(q, 1e-5 * tol)
        if not np.linalg.norm(r) <= tol:
            raise ModelError(f"the loops do not close from the guess at the neutral configuration (closure "
                             f"'{self._worst_closure(r)}' stays {np.linalg.norm(r):.3g} apart); give a 'guess' "
                             "of the solved joints for an assembled linkage at zero independent coordinates")
        return q[self.loop_ind_q].copy(), q[self.dep_q].copy()

    def _solve(self, qbar):
        """Follow the assembly branch from the reference to q̄ (engine.closure.continuation_kernel),
        then A from the constraint Jacobian there."""
        qbar = np.asarray(qbar, dtype=float)
        key = qbar.tobytes()
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        tol = CLOSURE_TOL * self.size
        x0, dep0 = self._reference
        q = self.robot.neutral_configuration()
        q[self.ind_q] = qbar
        q[self.loop_ind_q], q[self.dep_q] = x0, dep0
        r, K = np.zeros(self.n_rows), np.zeros((self.n_rows, self.robot.nv))
        target = np.ascontiguousarray(qbar[self.loop_ind_pos])
        code = _CONTINUATION.call(self.robot.arrays, self._kdata, *self._packed, q, self.dep_q, self.dep_v,
                                  self.loop_ind_q, self.loop_ind_v, x0, target, tol, MAX_PATH_STEP, r, K)
        if code != 0:
            raise StateError(f"the loops cannot close at this configuration ({self._state_text(qbar)}): following "
                             f"the assembly from the guess, closure '{self._worst_closure(r)}' cannot be kept closed "
                             "(the linkage cannot reach it, or passes a singularity on the way)")
        A, Kd_pinv = self._jacobian_from(K)
        sol = (q, A, Kd_pinv)
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
        names = self.robot.config_names
        return ", ".join(f"{names[i]}={qbar[k]:.6g}" for k, i in enumerate(self.ind_q) if i < len(names))[:200]

    def _jacobian_from(self, K):
        """A = [I; −K_d⁺ K_i] (rows reordered) and K_d⁺ (engine.closure.dependent_jacobian_kernel)."""
        A = np.zeros((self.robot.nv, self.nv))
        A[self.ind_v, np.arange(self.nv)] = 1.0
        Kd_pinv = np.zeros((len(self.dep_v), self.n_rows))
        ratio, leak = _DEPENDENT_JACOBIAN.call(K, self.dep_v, self.ind_v, A, Kd_pinv)
        if not ratio > SINGULAR_RATIO:
            raise StateError(f"the linkage is singular at this configuration: the independent coordinates do not "
                             f"determine {', '.join(self.dependent_names)} (rank of ∂φ/∂q_d below "
                             f"{len(self.dep_v)})")
        if leak > 1e-8:
            raise ModelError("the loops constrain the independent coordinates themselves: they cannot all move "
                             "freely (list fewer, or other, joints as independent)")
        return A, Kd_pinv

    # ---- the map's interface (engine.coordinates) -----------------------------------------
    def full_configuration(self, qbar) -> np.ndarray:
        return self._solve(qbar)[0].copy()

    def jacobian(self, qbar) -> np.ndarray:
        return self._solve(qbar)[1]

    def jacobian_rate(self, qbar, vbar) -> np.ndarray:
        """Ȧ = Σ_k ∂A/∂q̄_k q̄̇_k: zero on the independent rows, -K_d⁺ K̇ A on the dependent ones."""
        q, A, Kd_pinv = self._solve(qbar)
        Kdot = self._rate(q, A @ np.asarray(vbar, dtype=float))
        Adot = np.zeros_like(A)
        Adot[self.dep_v] = -Kd_pinv @ (Kdot @ A)
        return Adot

    def rate_basis(self, qbar) -> np.ndarray:
        """D[:, j, k] = ∂²q/∂q̄_j∂q̄_k = Ȧ(e_k)[:, j] (Ȧ is linear in q̄̇)."""
        D = np.zeros((self.robot.nv, self.nv, self.nv))
        for k in range(self.nv):
            e = np.zeros(self.nv)
            e[k] = 1.0
            D[:, :, k] = self.jacobian_rate(qbar, e)
        return D

    def reduce_configuration(self, q) -> np.ndarray:
        return np.asarray(q, dtype=float)[self.ind_q].copy()

    def jacobian_pattern(self) -> np.ndarray:
        """Which full DoF each reduced one can move: its own, and every dependent loop joint."""
        P = np.zeros((self.robot.nv, self.nv), dtype=bool)
        P[self.ind_v, np.arange(self.nv)] = True
        P[self.dep_v] = True
        return P

    def random_configuration(self, rng) -> np.ndarray:
        """Random independent coordinates (within the joint limits) at which the loops close."""
        rng = np.random.default_rng(rng)
        for _ in range(MAX_RANDOM_DRAWS):
            qbar = self.reduce_configuration(self.robot.random_configuration(rng))
            try:
                self._solve(qbar)
            except StateError:
                continue
            return qbar
        raise StateError(f"no random configuration within the joint limits closes the loops ({MAX_RANDOM_DRAWS} "
                         "draws); narrow the independent joints' limits to where the linkage assembles")

    def describe(self) -> str:
        n = len(self.closures)
        loop_ind = [self.robot.bodies[i].joint.name for i in self.independent_bodies if i in self._chosen]
        return (f"closed loops: {n} closure{'s' if n != 1 else ''} (independent: {', '.join(loop_ind) or 'none'}; "
                f"solved: {', '.join(self.dependent_names)})")


def _pack(robot: RobotModel, closures) -> tuple:
    """The closures as engine.closure's arrays: (ci, cg, support)."""
    N = robot.n_bodies
    ci = np.zeros((len(closures), 3), dtype=np.int64)
    cg = np.zeros((len(closures), CLOSURE_GEOM_WIDTH))
    for k, c in enumerate(closures):
        ci[k] = (c.bP if c.bP >= 0 else N, c.bC if c.bC >= 0 else N, int(c.revolute))
        cg[k] = np.concatenate([c.RP.ravel(), c.oP, c.RC.ravel(), c.oC, c.axis, c.normals[0], c.normals[1]])
    # joint j moves body b when j's body is an ancestor of b or b itself; row N is the world
    support = np.vstack([robot.body_ancestors[robot.col_body, :].T.astype(float), np.zeros((1, robot.nv))])
    return ci, cg, np.ascontiguousarray(support)


def close_loops(robot: RobotModel) -> ReducedRobot:
    """The robot in the independent coordinates of its closed loops (description ``loops:``)."""
    cmap = LoopMap(robot)
    return ReducedRobot(robot, cmap, cmap.describe())
