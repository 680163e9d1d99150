"""Closed kinematic loops: the structure (model side: no engine).

The ``joints:`` of a description span a tree; each ``loops:`` entry is a joint that closes a loop
of it. Here the closures are resolved onto the tree's bodies, the loops' joints described by
scalar coordinates x, these split into the independent ones (in q̄) and the solved ones, and the
closures packed for the engine, which solves the loops (engine.loops) when they are evaluated.
A 1-DoF joint's coordinate is its value; a spherical joint's are three angles, R_J = B Rx(α)
Ry(β) Rz(γ) Bᵀ (engine/core/closure.hpp), with B's third axis along the line to the closure
point its body holds, so that a rod between two ball joints turns about its own line by γ
alone: the loops leave that turn free, and γ is an independent coordinate. Loading a robot with
loops, or ``info`` on it, does not need the engine: where the description lists no independent
coordinates (MJCF), they are chosen from the constraint Jacobian at the guess, taken here from
the linkage's geometry.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from .coordinates import ReducedRobot
from .description import LOOP_ANGLE_SUFFIXES, ORIENTATION_ROWS
from .geometry import axis_angle, frame_rotation, matrix_to_quaternion, quat_to_matrix
from .joints import coordinate_names as joint_coordinate_names
from .tree import RobotModel

_ONE_DOF = ("revolute", "continuous", "prismatic")
_ON_LOOPS = _ONE_DOF + ("spherical",)
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
    """q = q(q̄): the independent coordinates given, the loops' other coordinates solved for.

    q̄ holds, body by body, the joints off the loops as they are and the loops' independent
    coordinates; ``copied_q``/``copied_qbar`` (and ``_v``) say where the former go, ``loop_ind``
    (into x) and ``loop_ind_pos`` (into q̄, and v̄: one entry each) where the latter do."""

    velocities_are_coordinates = True  # q̄̇ = v̄ on the loops' coordinates (angles and lengths)

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
            if j.type not in _ON_LOOPS:
                raise ModelError(f"joint '{j.name}' lies on a closed loop and is {j.type}; loops are closed over "
                                 "revolute, continuous, prismatic and spherical joints only",
                                 hint="--loops open computes the tree, each closure named and left open")
        for c in self.closures:
            if c.bP == c.bC:
                raise ModelError(f"loop closure '{c.name}' joins two links of one rigid body (joined by fixed joints): "
                                 "it closes no loop")
        self._coordinates(np.flatnonzero(in_loop))
        for name in desc.independent:
            if name not in by_name and name not in self.coordinate_names:
                raise ModelError(f"independent coordinate '{name}' is a fixed joint")
        self.n_rows = sum(c.rows for c in self.closures)
        self.packed = _pack(robot, self.closures)
        self.guess_x = self._guess(dict(desc.guess))
        # joints outside the loops are independent whether listed or not
        self.choice = "listed"
        if desc.independent or desc.origin_format != "mjcf":
            chosen = {k for n in desc.independent for k in self.coordinates_named(n)}
        else:
            chosen = self._choose_independent(set(desc.actuated))
        self.loop_ind = np.array(sorted(chosen), dtype=np.int64)
        self.dep = np.array([k for k in range(len(self.coordinate_names)) if k not in chosen], dtype=np.int64)
        if not self.dep.size:
            raise ModelError("every joint of the loops is listed as independent: nothing is left to close them")
        self._layout(in_loop, chosen)
        if self.nv == 0:
            said = ("no joint is listed in 'independent:'" if not desc.independent
                    else "the loops leave no independent coordinate")
            raise ModelError(f"{said}: list the linkage's minimal coordinates among its joints there (loop joints: "
                             f"{', '.join(self.dependent_names)})")

    def coordinates_named(self, name: str) -> list[int]:
        """The loop coordinates a name stands for: a joint's (a spherical joint's three), or the one
        coordinate of that name (``JOINT_spin``); none for a joint off the loops."""
        joint = [k for k, b in enumerate(self.coordinate_body) if self.robot.bodies[b].joint.name == name]
        return joint or [k for k, n in enumerate(self.coordinate_names) if n == name]

    def solved_angles(self, joint_name: str) -> tuple[str, ...]:
        """The angles of a spherical joint on a loop that the loops solve for (their suffixes)."""
        solved = set(int(k) for k in self.dep)
        return tuple(self.coordinate_names[k][len(joint_name) + 1:] for k in self.coordinates_named(joint_name)
                     if k in solved and self.coordinate_table[k, 0] > 0)

    def _guess(self, guess: dict) -> np.ndarray:
        """x at the guess (default 0): a coordinate's value by its name, a spherical joint's
        quaternion (x, y, z, w) by the joint's (MJCF's keyframe)."""
        x = np.zeros(len(self.coordinate_names))
        for name, value in guess.items():
            value = np.atleast_1d(np.asarray(value, dtype=float))
            ks = self.coordinates_named(name)
            if not ks:
                raise ModelError(f"guess names '{name}', which is not a joint of the loops "
                                 f"(those are: {', '.join(self.coordinate_names)})")
            if len(ks) == 3 and value.size == 4 and np.linalg.norm(value) > 0:  # a spherical joint's quaternion
                B = self.coordinate_basis[ks[0]].reshape(3, 3)
                x[ks] = euler_angles(B.T @ quat_to_matrix(value / np.linalg.norm(value)) @ B)
            elif len(ks) == 1 and value.size == 1:
                x[ks[0]] = value[0]
            else:
                raise ModelError(f"guess for '{name}': one number for a coordinate, a quaternion (x, y, z, w) for a "
                                 "spherical joint")
        return x

    def _coordinates(self, loop_bodies) -> None:
        """The loops' joints as scalar coordinates (engine/core/closure.hpp's table and basis)."""
        robot = self.robot
        table, basis, body, names = [], [], [], []
        for i in loop_bodies:
            j = robot.bodies[i].joint
            qs, vs = int(robot.q_start[i]), int(robot.v_start[i])
            if j.nv == 1:
                table.append((0, qs, vs))
                basis.append(np.eye(3).ravel())
                body.append(i)
                names.append(j.name)
                continue
            B, rod = self._spherical_axes(i)
            for k, suffix in enumerate(LOOP_ANGLE_SUFFIXES[rod]):
                table.append((k + 1, qs, vs))
                basis.append(B.ravel())
                body.append(i)
                names.append(f"{j.name}_{suffix}")
        self.coordinate_table = np.array(table, dtype=np.int64).reshape(-1, 3)
        self.coordinate_basis = np.array(basis, dtype=float).reshape(-1, 9)
        self.coordinate_body = np.array(body, dtype=np.int64)
        self.coordinate_names = tuple(names)

    def _spherical_axes(self, i: int):
        """(B, along a rod) of the spherical joint of body i: B's third axis along the line from the
        joint to a point closed by a spherical closure on the body itself (a rod's own line),
        else the child frame's axes."""
        for c in self.closures:
            if c.orientation_rows:
                continue
            for b, o in ((c.bP, c.oP), (c.bC, c.oC)):
                length = float(np.linalg.norm(o))
                if b == i and length > 1e-9:
                    a3 = np.asarray(o, float) / length
                    a1 = np.cross(a3, np.eye(3)[int(np.argmin(np.abs(a3)))])
                    a1 /= np.linalg.norm(a1)
                    return np.column_stack([a1, np.cross(a3, a1), a3]), True
        return np.eye(3), False

    def _layout(self, in_loop, chosen) -> None:
        """q̄ and v̄: body by body, a joint off the loops as it is, a loop joint's independent coordinates."""
        robot = self.robot
        copied_q, copied_qbar, copied_v, copied_vbar, pos = [], [], [], [], {}
        config_names, dof_names, segments = [], [], []
        nq = nv = 0
        for i, b in enumerate(robot.bodies):
            j = b.joint
            if not in_loop[i]:
                qs, vs = int(robot.q_start[i]), int(robot.v_start[i])
                copied_q += range(qs, qs + j.nq)
                copied_qbar += range(nq, nq + j.nq)
                copied_v += range(vs, vs + j.nv)
                copied_vbar += range(nv, nv + j.nv)
                cn, dn = joint_coordinate_names(j.name, j.type)
                config_names += cn
                dof_names += dn
                segments.append((i, j.type, j.limits))
                nq, nv = nq + j.nq, nv + j.nv
                continue
            mine = [int(k) for k in np.flatnonzero(self.coordinate_body == i) if int(k) in chosen]
            for k in mine:
                pos[k] = (nq, nv)
                config_names.append(self.coordinate_names[k])
                dof_names.append(self.coordinate_names[k])
                segments.append((i, j.type if j.nv == 1 else "continuous", j.limits if j.nv == 1 else None))
                nq, nv = nq + 1, nv + 1
        as_index = lambda x: np.array(x, dtype=np.int64)  # noqa: E731
        self.copied_q, self.copied_qbar = as_index(copied_q), as_index(copied_qbar)
        self.copied_v, self.copied_vbar = as_index(copied_v), as_index(copied_vbar)
        self.loop_ind_pos = as_index([pos[int(k)][0] for k in self.loop_ind])
        self.loop_ind_vpos = as_index([pos[int(k)][1] for k in self.loop_ind])
        self.nq, self.nv = nq, nv
        self.config_names, self.dof_names = tuple(config_names), tuple(dof_names)
        self.segments = tuple(segments)  # (body, joint type of the coordinate, limits) per q̄ segment

    def _choose_independent(self, actuated: set) -> set:
        """The loops' independent coordinates where the description lists none (MJCF): the actuated
        joints when they number the loops' degrees of freedom and leave the constraint Jacobian's
        other columns well conditioned, else by pivoted Gram–Schmidt on the Jacobian at the guess
        (the best-conditioned columns are solved for, the rest are independent), the joints that
        are not actuated taken first unless that leaves the solved columns' σ_min/σ_max below
        CHOICE_RATIO."""
        q = self.configuration(self.robot.neutral_configuration(), self.guess_x)
        n = len(self.coordinate_names)
        KL = self.loop_jacobian(q, self.guess_x)
        rank = _rank(KL)
        self._refuse_a_singular_assembly(q, rank)
        preferred = [k for k in range(n) if self.coordinate_names[k] in actuated]
        if len(preferred) == n - rank:
            rest = KL[:, [k for k in range(n) if k not in preferred]]
            s = np.linalg.svd(rest, compute_uv=False) if rest.size else np.zeros(0)
            if rank == 0 or (len(s) >= rank and s[rank - 1] > CHOICE_RATIO * s[0]):
                self.choice = "actuated"
                return set(preferred)
        solved = _pivoted_columns(KL, rank, [k not in preferred for k in range(n)])
        s = np.linalg.svd(KL[:, solved], compute_uv=False) if solved else np.zeros(0)
        if preferred and rank and not s[-1] > CHOICE_RATIO * s[0]:
            solved = _pivoted_columns(KL, rank, [True] * n)
        self.choice = "from the constraint Jacobian"
        return {k for k in range(n) if k not in solved}

    def _refuse_a_singular_assembly(self, q, rank: int) -> None:
        """ModelError where the file's assembly is a singular pose of the linkage (links in line,
        say): its rows have a lower rank there than at any pose nearby, so the joints counted free
        there cannot move freely anywhere else (MuJoCo's four-bar with its links drawn in line)."""
        rng, n = np.random.default_rng(0), len(self.coordinate_names)
        nearby = rank
        for _ in range(3):
            moved = self.guess_x + SINGULAR_PROBE * rng.standard_normal(n)
            nearby = max(nearby, _rank(self.loop_jacobian(self.configuration(q, moved), moved)))
        if nearby > rank:
            raise ModelError(
                f"the loops are assembled at a singular pose of the linkage (closure rows of rank {rank} there, "
                f"{nearby} at every pose nearby: links in line, say), where {n - rank} of their joints "
                f"would count as free against {n - nearby} anywhere else",
                hint="assemble the file away from it, in the bodies' placement or a first keyframe, or open the loops "
                     "with --loops open")

    @property
    def independent_names(self) -> tuple[str, ...]:
        """The loops' independent coordinates (listed, or chosen: see _choose_independent)."""
        return tuple(self.coordinate_names[k] for k in self.loop_ind)

    @property
    def dependent_names(self) -> tuple[str, ...]:
        return tuple(self.coordinate_names[k] for k in self.dep)

    def configuration(self, q, x) -> np.ndarray:
        """q with the loops' joints at the coordinates x (a copy)."""
        q = np.array(q, dtype=float)
        for k, (kind, qs, _) in enumerate(self.coordinate_table):
            if kind == 0:
                q[qs] = x[k]
            elif kind == 1:
                B = self.coordinate_basis[k].reshape(3, 3)
                q[qs : qs + 4] = matrix_to_quaternion(B @ euler_matrix(x[k : k + 3]) @ B.T)
        return q

    def coordinates_of(self, q) -> np.ndarray:
        """x of the loops' joints in q (a spherical joint's angles with |β| ≤ π/2)."""
        x = np.zeros(len(self.coordinate_names))
        for k, (kind, qs, _) in enumerate(self.coordinate_table):
            if kind == 0:
                x[k] = q[qs]
            elif kind == 1:
                B = self.coordinate_basis[k].reshape(3, 3)
                x[k : k + 3] = euler_angles(B.T @ quat_to_matrix(q[qs : qs + 4]) @ B)
        return x

    def reduce_configuration(self, q) -> np.ndarray:
        q = np.asarray(q, dtype=float)
        qbar = np.zeros(self.nq)
        qbar[self.copied_qbar] = q[self.copied_q]
        qbar[self.loop_ind_pos] = self.coordinates_of(q)[self.loop_ind]
        return qbar

    def jacobian_pattern(self) -> np.ndarray:
        """Which full DoF each reduced one can move: its own, and every dependent loop joint."""
        P = np.zeros((self.robot.nv, self.nv), dtype=bool)
        P[self.copied_v, self.copied_vbar] = True
        for k, vbar in zip(self.loop_ind, self.loop_ind_vpos):
            kind, _, vs = self.coordinate_table[k]
            P[vs : vs + (1 if kind == 0 else 3), vbar] = True
        for kind, _, vs in self.coordinate_table[self.dep]:
            P[vs : vs + (1 if kind == 0 else 3)] = True
        return P

    def describe(self) -> str:
        n = len(self.closures)
        how = {"listed": "", "actuated": ", the actuated joints"}.get(self.choice, f", chosen {self.choice}")
        return (f"closed loops: {n} closure{'s' if n != 1 else ''} (independent: "
                f"{', '.join(self.independent_names) or 'none'}{how}; solved: {', '.join(self.dependent_names)})")

    def loop_jacobian(self, q, x) -> np.ndarray:
        """∂φ/∂x at q (whose loop joints are at x), φ the closures' rows as the core writes them
        (engine/core/closure.hpp): p_P − p_C, then u_P · w_C per orientation row. A coordinate turning
        the body of joint j about ω through its origin o moves a point p at ω × (p − o) and turns a
        direction d at ω × d, so ∂(p_P − p_C)/∂x_k = s_Pj ṗ_P − s_Cj ṗ_C and ∂(u_P · w_C)/∂x_k =
        (s_Pj − s_Cj) ω · (u_P × w_C); a spherical joint's ω is its body's axes times B J(θ)'s column."""
        robot = self.robot
        R, p = _placements(robot, q, self.world_offset)
        anc = robot.body_ancestors
        K = np.zeros((self.n_rows, len(self.coordinate_names)))
        row = 0
        for c in self.closures:
            frames = []
            for b, Rc, oc in ((c.bP, c.RP, c.oP), (c.bC, c.RC, c.oC)):
                frames.append((Rc, oc) if b < 0 else (R[b] @ Rc, R[b] @ oc + p[b]))
            (RP, pP), (RC, pC) = frames
            u = (RP @ c.normals[0], RP @ c.normals[1], RP @ c.normals[0])
            w = (RC @ c.axis, RC @ c.axis, RC @ c.normals[1])
            for col, ((kind, _, _), j) in enumerate(zip(self.coordinate_table, self.coordinate_body)):
                joint = robot.bodies[j].joint
                s_P = float(c.bP >= 0 and anc[j, c.bP])
                s_C = float(c.bC >= 0 and anc[j, c.bC])
                if kind == 0:
                    axis = R[j] @ np.asarray(joint.axis, float)
                else:
                    first = col - (kind - 1)
                    axis = R[j] @ self.coordinate_basis[col].reshape(3, 3) @ euler_rates(x[first : first + 3])[:, kind - 1]
                if joint.type == "prismatic":
                    K[row : row + 3, col] = (s_P - s_C) * axis
                    continue
                K[row : row + 3, col] = s_P * np.cross(axis, pP - p[j]) - s_C * np.cross(axis, pC - p[j])
                for k in range(c.orientation_rows):
                    K[row + 3 + k, col] = (s_P - s_C) * axis @ np.cross(u[k], w[k])
            row += c.rows
        return K


def _pivoted_columns(K, rank: int, first) -> list[int]:
    """``rank`` columns of K by pivoted Gram–Schmidt (the largest residual next), among the columns
    marked ``first`` while one of them is left independent of those taken, then among all."""
    residual, taken = K.copy(), []
    scale = RANK_TOL * max(float(np.linalg.norm(K, axis=0).max(initial=0.0)), 1e-300)
    first = np.asarray(first, bool)
    for _ in range(rank):
        norms = np.linalg.norm(residual, axis=0)
        pool = norms * first
        k = int(np.argmax(pool if pool.max(initial=0.0) > scale else norms))
        u = residual[:, k] / norms[k]
        residual -= np.outer(u, u @ residual)
        residual[:, k] = 0.0
        taken.append(k)
    return taken


def euler_matrix(theta) -> np.ndarray:
    """Rx(α) Ry(β) Rz(γ)."""
    a, b, g = theta
    return axis_angle((1.0, 0.0, 0.0), a) @ axis_angle((0.0, 1.0, 0.0), b) @ axis_angle((0.0, 0.0, 1.0), g)


def euler_angles(E) -> np.ndarray:
    """(α, β, γ) with Rx(α) Ry(β) Rz(γ) = E, |β| ≤ π/2."""
    return np.array([np.arctan2(-E[1, 2], E[2, 2]), np.arctan2(E[0, 2], np.hypot(E[1, 2], E[2, 2])),
                     np.arctan2(-E[0, 1], E[0, 0])])


def euler_rates(theta) -> np.ndarray:
    """J(θ): the body angular velocity of Rx(α) Ry(β) Rz(γ) is J θ̇ (engine/core/closure.hpp)."""
    _, b, g = theta
    cb, sb, cg, sg = np.cos(b), np.sin(b), np.cos(g), np.sin(g)
    return np.array([[cb * cg, sg, 0.0], [-cb * sg, cg, 0.0], [sb, 0.0, 1.0]])


def euler_rates_rate(theta, rate) -> np.ndarray:
    """J̇ = ∂J/∂β β̇ + ∂J/∂γ γ̇."""
    _, b, g = theta
    _, db, dg = rate
    cb, sb, cg, sg = np.cos(b), np.sin(b), np.cos(g), np.sin(g)
    return np.array([[-sb * cg * db - cb * sg * dg, cg * dg, 0.0],
                     [sb * sg * db - cb * cg * dg, -sg * dg, 0.0],
                     [cb * db, 0.0, 0.0]])


def _placements(robot: RobotModel, q, offset):
    """Each body's rotation and origin in the computation frame (the world's, less ``offset``) at q,
    for a q whose free and planar joints are at their neutral values (the loops' guess)."""
    R, p = [], []
    for i, b in enumerate(robot.bodies):
        j = b.joint
        Rp, pp = (np.eye(3), -offset) if b.parent < 0 else (R[b.parent], p[b.parent])
        E = Rp @ np.asarray(j.rotation, float)
        origin = pp + Rp @ np.asarray(j.translation, float)
        qs = int(robot.q_start[i])
        x = float(q[qs]) if j.nq == 1 else 0.0
        if j.type == "prismatic":
            R.append(E)
            p.append(origin + E @ (np.asarray(j.axis, float) * x))
        elif j.type == "spherical":
            R.append(E @ quat_to_matrix(q[qs : qs + 4]))
            p.append(origin)
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
