"""Closed kinematic loops: the structure (model side: no engine).

The ``joints:`` of a description span a tree; each ``loops:`` entry is a joint that closes a loop
of it. Here the closures are resolved onto the tree's bodies, the loops' joints split into the
independent coordinates q̄ and the solved ones q_d, and the closures packed for the engine, which
solves the loops (engine.loops) when they are evaluated. Loading a robot with loops, or ``info``
on it, does not need the engine: where the description lists no independent coordinates (MJCF),
they are chosen from the constraint Jacobian at the guess, taken here from the linkage's geometry.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from .coordinates import ReducedRobot
from .description import ORIENTATION_ROWS
from .geometry import axis_angle, frame_rotation
from .tree import RobotModel

_ONE_DOF = ("revolute", "continuous", "prismatic")
RANK_TOL = 1e-9  # singular values of the loops' constraint Jacobian below this share of the largest: redundant rows
SINGULAR_PROBE = 0.05  # rad or m: the loop joints moved this much to see the linkage's rank near its assembly
CHOICE_RATIO = 1e-6  # the solved joints' Jacobian must keep σ_min/σ_max above this (engine.loops.SINGULAR_RATIO)

CLOSURE_GEOM_WIDTH = 33  # per closure: RP (9), oP, RC (9), oC, axis, n1, n2 (engine/core/closure.hpp)


def _rank(K) -> int:
    """The rank of the loops' constraint Jacobian: singular values above RANK_TOL of the largest."""
    sigma = np.linalg.svd(K, compute_uv=False)
    return int(np.sum(sigma > RANK_TOL * sigma[0])) if sigma.size and sigma[0] > 0 else 0


class _Closure:
    """One loop-closure joint, resolved onto the tree's bodies: frame (R, o) in each side's body
    (body -1: the world), and for a revolute closure the axis and two normals in the frame."""

    def __init__(self, robot: RobotModel, spec, world_offset: np.ndarray):
        self.name = spec.name
        self.orientation_rows = ORIENTATION_ROWS[spec.type]
        sides = []
        for link, xyz, rpy, rotation in ((spec.parent, spec.xyz, spec.rpy, spec.rotation),
                                         (spec.child, spec.child_xyz, spec.child_rpy, spec.child_rotation)):
            body, R_link, p_link = robot.link_frames[link]
            R = R_link @ frame_rotation(rpy, rotation)
            o = R_link @ np.asarray(xyz, float) + p_link
            if body < 0:  # welded to the world: placed once, in the computation frame
                o = o - world_offset
            sides.append((int(body), R, o))
        (self.bP, self.RP, self.oP), (self.bC, self.RC, self.oC) = sides
        a = np.asarray(spec.axis, float)
        e1 = np.cross(a, np.array([1.0, 0.0, 0.0] if abs(a[0]) < 0.9 else [0.0, 1.0, 0.0]))
        e1 /= np.linalg.norm(e1)
        self.axis, self.normals = a, np.stack([e1, np.cross(a, e1)])
        self.rows = 3 + self.orientation_rows  # 3 position rows, then n_k · a_C for k = 1, 2 (and n_1 · n_2,C)


class LoopMap:
    """q = q(q̄): the independent coordinates given, the loops' other joints solved for."""

    velocities_are_coordinates = True  # loop joints are 1-DoF; a floating base stays as it is

    def __init__(self, robot: RobotModel):
        desc = robot.description
        by_name = {b.joint.name: i for i, b in enumerate(robot.bodies)}
        root = robot.bodies[0]
        offset = np.asarray(root.joint.translation, float) if root.parent < 0 and root.joint.type != "free" else np.zeros(3)
        self.robot, self.world_offset = robot, offset
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
                raise ModelError(f"joint '{j.name}' lies on a closed loop and is {j.type}; loops are closed over "
                                 "revolute, continuous and prismatic joints only",
                                 hint="--loops open computes the tree, each closure named and left open")
        for name in desc.independent:
            if name not in by_name:
                raise ModelError(f"independent coordinate '{name}' is a fixed joint")
        for c in self.closures:
            if c.bP == c.bC:
                raise ModelError(f"loop closure '{c.name}' joins two links of one rigid body (joined by fixed joints): "
                                 "it closes no loop")
        guess = dict(desc.guess)
        self.n_rows = sum(c.rows for c in self.closures)
        self.packed = _pack(robot, self.closures)
        # joints outside the loops are independent whether listed or not
        self.choice = "listed"
        if desc.independent or desc.origin_format != "mjcf":
            chosen = {by_name[n] for n in desc.independent if in_loop[by_name[n]]}
        else:
            chosen = self._choose_independent(np.flatnonzero(in_loop), guess, set(desc.actuated))
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
            said = ("no joint is listed in 'independent:'" if not desc.independent
                    else "the loops leave no independent coordinate")
            raise ModelError(f"{said}: list the linkage's minimal coordinates among its joints there (loop joints: "
                             f"{', '.join(self.dependent_names)})")
        loop_ind = sorted(chosen)  # 1-DoF: one q and one v entry each
        self.loop_ind_q = np.array([robot.q_start[i] for i in loop_ind], dtype=np.int64)
        self.loop_ind_v = np.array([robot.v_start[i] for i in loop_ind], dtype=np.int64)
        self.loop_ind_pos = np.searchsorted(self.ind_q, self.loop_ind_q)  # their places in q̄
        for name in guess:
            if name not in by_name or not in_loop[by_name[name]]:
                raise ModelError(f"guess names '{name}', which is not a joint of the loops "
                                 f"(those are: {', '.join(robot.bodies[i].joint.name for i in np.flatnonzero(in_loop))})")
        self.guess = np.array([guess.get(robot.bodies[i].joint.name, 0.0) for i in dependent])
        # where the loops' independent coordinates start the assembly (a guess for them: MJCF's keyframe)
        self.reference_independent = np.array([guess.get(robot.bodies[i].joint.name, 0.0) for i in loop_ind])

    def _choose_independent(self, loop_bodies, guess: dict, actuated: set) -> set:
        """The loops' independent coordinates where the description lists none (MJCF): the actuated
        joints when they number the loops' degrees of freedom and leave the constraint Jacobian's
        other columns well conditioned, else by pivoted Gram–Schmidt on the Jacobian at the guess
        (the best-conditioned columns are solved for, the rest are independent)."""
        robot = self.robot
        q = robot.neutral_configuration()
        for i in loop_bodies:
            q[robot.q_start[i]] = guess.get(robot.bodies[i].joint.name, 0.0)
        KL = self.loop_jacobian(q, loop_bodies)
        rank = _rank(KL)
        self._refuse_a_singular_assembly(q, loop_bodies, rank)
        preferred = [k for k, i in enumerate(loop_bodies) if robot.bodies[i].joint.name in actuated]
        if len(preferred) == len(loop_bodies) - rank:
            rest = KL[:, [k for k in range(len(loop_bodies)) if k not in preferred]]
            s = np.linalg.svd(rest, compute_uv=False) if rest.size else np.zeros(0)
            if rank == 0 or (len(s) >= rank and s[rank - 1] > CHOICE_RATIO * s[0]):
                self.choice = "actuated"
                return {int(loop_bodies[k]) for k in preferred}
        residual, solved = KL.copy(), []
        for _ in range(rank):
            k = int(np.argmax(np.linalg.norm(residual, axis=0)))
            u = residual[:, k] / np.linalg.norm(residual[:, k])
            residual -= np.outer(u, u @ residual)
            residual[:, k] = 0.0
            solved.append(k)
        self.choice = "from the constraint Jacobian"
        return {int(loop_bodies[k]) for k in range(len(loop_bodies)) if k not in solved}

    def _refuse_a_singular_assembly(self, q, loop_bodies, rank: int) -> None:
        """ModelError where the file's assembly is a singular pose of the linkage (links in line,
        say): its rows have a lower rank there than at any pose nearby, so the joints counted free
        there cannot move freely anywhere else (MuJoCo's four-bar with its links drawn in line)."""
        robot, rng = self.robot, np.random.default_rng(0)
        columns = [robot.q_start[i] for i in loop_bodies]
        nearby = rank
        for _ in range(3):
            moved = q.copy()
            moved[columns] += SINGULAR_PROBE * rng.standard_normal(len(columns))
            nearby = max(nearby, _rank(self.loop_jacobian(moved, loop_bodies)))
        if nearby > rank:
            raise ModelError(
                f"the loops are assembled at a singular pose of the linkage (closure rows of rank {rank} there, "
                f"{nearby} at every pose nearby: links in line, say), where {len(loop_bodies) - rank} of their joints "
                f"would count as free against {len(loop_bodies) - nearby} anywhere else",
                hint="assemble the file away from it, in the bodies' placement or a first keyframe, or open the loops "
                     "with --loops open")

    @property
    def independent_names(self) -> tuple[str, ...]:
        """The loops' independent coordinates (listed, or chosen: see _choose_independent)."""
        return tuple(self.robot.bodies[i].joint.name for i in sorted(self._chosen))

    @property
    def dependent_names(self) -> tuple[str, ...]:
        return tuple(self.robot.bodies[i].joint.name for i in self.dependent_bodies)

    def reduce_configuration(self, q) -> np.ndarray:
        return np.asarray(q, dtype=float)[self.ind_q].copy()

    def jacobian_pattern(self) -> np.ndarray:
        """Which full DoF each reduced one can move: its own, and every dependent loop joint."""
        P = np.zeros((self.robot.nv, self.nv), dtype=bool)
        P[self.ind_v, np.arange(self.nv)] = True
        P[self.dep_v] = True
        return P

    def describe(self) -> str:
        n = len(self.closures)
        loop_ind = [self.robot.bodies[i].joint.name for i in self.independent_bodies if i in self._chosen]
        how = {"listed": "", "actuated": ", the actuated joints"}.get(self.choice, f", chosen {self.choice}")
        return (f"closed loops: {n} closure{'s' if n != 1 else ''} (independent: {', '.join(loop_ind) or 'none'}{how}; "
                f"solved: {', '.join(self.dependent_names)})")

    def loop_jacobian(self, q, bodies) -> np.ndarray:
        """∂φ/∂q on the columns of ``bodies`` (1-DoF joints) at q, φ the closures' rows as the core
        writes them (engine/core/closure.hpp): p_P − p_C, then u_P · w_C per orientation row. A joint
        turning about ω through o moves a point p at ω × (p − o) and turns a direction d at ω × d,
        so ∂(p_P − p_C)/∂q_j = s_Pj ṗ_P − s_Cj ṗ_C and ∂(u_P · w_C)/∂q_j = (s_Pj − s_Cj) ω_j · (u_P × w_C)."""
        robot = self.robot
        R, p = _placements(robot, q, self.world_offset)
        anc = robot.body_ancestors
        K = np.zeros((self.n_rows, len(bodies)))
        row = 0
        for c in self.closures:
            frames = []
            for b, Rc, oc in ((c.bP, c.RP, c.oP), (c.bC, c.RC, c.oC)):
                frames.append((Rc, oc) if b < 0 else (R[b] @ Rc, R[b] @ oc + p[b]))
            (RP, pP), (RC, pC) = frames
            u = (RP @ c.normals[0], RP @ c.normals[1], RP @ c.normals[0])
            w = (RC @ c.axis, RC @ c.axis, RC @ c.normals[1])
            for col, j in enumerate(bodies):
                joint = robot.bodies[j].joint
                s_P = float(c.bP >= 0 and anc[j, c.bP])
                s_C = float(c.bC >= 0 and anc[j, c.bC])
                axis = R[j] @ np.asarray(joint.axis, float)
                if joint.type == "prismatic":
                    K[row : row + 3, col] = (s_P - s_C) * axis
                    continue
                K[row : row + 3, col] = s_P * np.cross(axis, pP - p[j]) - s_C * np.cross(axis, pC - p[j])
                for k in range(c.orientation_rows):
                    K[row + 3 + k, col] = (s_P - s_C) * axis @ np.cross(u[k], w[k])
            row += c.rows
        return K


def _placements(robot: RobotModel, q, offset):
    """Each body's rotation and origin in the computation frame (the world's, less ``offset``) at q,
    for a q whose multi-DoF joints are at their neutral values (the loops' guess)."""
    R, p = [], []
    for i, b in enumerate(robot.bodies):
        j = b.joint
        Rp, pp = (np.eye(3), -offset) if b.parent < 0 else (R[b.parent], p[b.parent])
        E = Rp @ np.asarray(j.rotation, float)
        origin = pp + Rp @ np.asarray(j.translation, float)
        x = float(q[robot.q_start[i]]) if j.nq == 1 else 0.0
        if j.type == "prismatic":
            R.append(E)
            p.append(origin + E @ (np.asarray(j.axis, float) * x))
        else:
            R.append(E @ axis_angle(j.axis, x) if j.nq == 1 else E)
            p.append(origin)
    return R, p


def _pack(robot: RobotModel, closures) -> tuple:
    """The closures as the core's closure.hpp reads them: (ci, cg, support)."""
    N = robot.n_bodies
    ci = np.zeros((len(closures), 3), dtype=np.int64)
    cg = np.zeros((len(closures), CLOSURE_GEOM_WIDTH))
    for k, c in enumerate(closures):
        ci[k] = (c.bP if c.bP >= 0 else N, c.bC if c.bC >= 0 else N, c.orientation_rows)
        cg[k] = np.concatenate([c.RP.ravel(), c.oP, c.RC.ravel(), c.oC, c.axis, c.normals[0], c.normals[1]])
    # joint j moves body b when j's body is an ancestor of b or b itself; row N is the world
    support = np.vstack([robot.body_ancestors[robot.col_body, :].T.astype(float), np.zeros((1, robot.nv))])
    return ci, cg, np.ascontiguousarray(support)


def close_loops(robot: RobotModel) -> ReducedRobot:
    """The robot in the independent coordinates of its closed loops (description ``loops:``)."""
    cmap = LoopMap(robot)
    return ReducedRobot(robot, cmap, cmap.describe())
