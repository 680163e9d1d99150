"""The kinematic tree: immutable, bodies numbered so that parent(i) < i.

Fixed joints are merged into the parent body's inertia (as Pinocchio and RBDL do). With a fixed
base the root link is the world; with ``floating_base=True`` it becomes body 0 behind a free joint.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import NamedTuple

import numpy as np

from ..errors import ModelError, ModelWarning
from . import joints
from .description import (MASS_EPS, STANDARD_GRAVITY, InertiaIssue, Limits, Mimic, RobotDescription, inertia_issues, inertia_scale,
                          listed, validate)
from .joints import joint_type

# Column offsets of ModelArrays.geom: joint rotation E (9), joint translation 3, axis a (3), mass 1,
# COM 3, inertia about the COM 9; then, so that a revolute joint's rotation in its parent frame is
# E Rot(a, q) = E + sin q (E â) + (1 − cos q) (E â²) without building Rot, E â (9), E â² (9) and
# the axis in the parent frame E a (3); last, the armature of each of the joint's DoF (6: rotor
# inertia reflected on the joint, MuJoCo's dof_armature: see engine/armature.py).
G_ROT, G_TRANS, G_AXIS, G_MASS, G_COM, G_INERTIA, G_ROT_HAT, G_ROT_HAT2, G_PARENT_AXIS, G_ARMATURE, GEOM_WIDTH = (
    0, 9, 12, 15, 16, 19, 28, 37, 46, 49, 55)


def frozen_array(a) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Joint:
    """The joint between a body and its parent.

    ``rotation``/``translation`` place the joint frame (= the body frame at q = 0) in the parent
    body's frame; ``axis`` is a unit vector in the joint frame.
    """

    name: str
    type: str  # revolute | continuous | prismatic | free
    axis: np.ndarray
    rotation: np.ndarray
    translation: np.ndarray
    limits: Limits | None = None
    mimic: Mimic | None = None
    armature: tuple[float, ...] = ()  # per DoF, MuJoCo's dof_armature (empty: none; engine/armature.py)
    friction: tuple[float, float] | None = None  # a 1-DoF joint's (viscous, Coulomb), as JointSpec's

    @property
    def nq(self) -> int:
        return joint_type(self.type).nq

    @property
    def nv(self) -> int:
        return joint_type(self.type).nv


@dataclass(frozen=True, eq=False)
class Body:
    name: str
    parent: int  # -1: the world
    joint: Joint
    mass: float
    com: np.ndarray  # in the body frame
    inertia: np.ndarray  # 3x3 about the COM, body-frame axes
    merged_links: tuple[str, ...] = ()


class ModelArrays(NamedTuple):
    """The model as the three flat arrays the compiled kernels read (Pinocchio's Model).

    ``ints`` (N x 4): parent (-1: the world), joint type code, first q index, first v index.
    ``cols`` (nv x 3): body of each velocity column, previous column toward the root (-1 at the
    root), unit-column index (see :class:`coriolis_cli.model.joints.JointType`).
    ``geom`` (N x GEOM_WIDTH): see the ``G_*`` offsets.

    The computation frame is placed at the first root joint, not at the world origin: the
    world-frame recursions handle m·|p|², so a robot mounted far from the origin would lose
    precision as |p|² grows. Joint-space M, Ṁ, C, Γ and τ do not depend on this choice.
    """

    ints: np.ndarray
    cols: np.ndarray
    geom: np.ndarray


class _AFunction:
    """A name a robot does not have as a method because the package has it as a function (it
    needs the engine, which the model does not import): asked for, it says which to call. A class
    below that defines the method (a tree's integrate) keeps its own."""

    def __init__(self, call: str):
        self.call = call

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, robot, owner=None):
        raise AttributeError(f"'{owner.__name__}' object has no attribute '{self.name}': call coriolis_cli.{self.call}")


class Caches:
    """The store every robot (a tree, or a robot in other coordinates) keeps for the layers above
    it: what they derive from the robot once (the engine's workspaces, the evaluation of other
    coordinates), so that the model itself stays plain data."""

    create_data = _AFunction("create_data(robot)")
    integrate = _AFunction("integrate(robot, q, v)")
    random_configuration = _AFunction("random_configuration(robot, rng)")
    to_mujoco = _AFunction("to_mujoco(robot, q, v)")
    from_mujoco = _AFunction("from_mujoco(robot, qpos, qvel)")

    @cached_property
    def caches(self) -> dict:
        """What other layers derive from this robot and keep with it (the engine's workspaces
        for calls without ``data=``); not pickled, not copied."""
        return {}

    def __getstate__(self):
        """The state for pickling and copying without ``caches`` (made again on first use): a
        thread-local store cannot be pickled, and a workspace holds the robot."""
        return {k: v for k, v in self.__dict__.items() if k != "caches"}


@dataclass(frozen=True, eq=False)
class RobotModel(Caches):
    """A robot as an immutable tree of bodies, as Pinocchio's ``Model``.

    [load_robot][coriolis_cli.load_robot] makes it, and every function of the package takes it.
    Bodies are numbered depth first, so that a parent comes before its children; each is one moving
    link with the links that fixed joints weld to it merged in, behind the joint that moves it. A
    configuration q has ``nq`` coordinates and a velocity ``nv``: they differ where a joint's
    orientation is a quaternion (a free joint: 7 and 6). The robot is immutable plain data: copy
    and pickle it freely, and share it between threads.

    Attributes
    ----------
    name : str
        The robot's name, from its file.
    nq : int
        Length of a configuration q.
    nv : int
        Length of a velocity, and the size of M, C and each side of Γ.
    config_names : tuple of str
        The names of q's coordinates (length nq): joint names, and for a free joint ``base_x``,
        ``base_y``, ``base_z``, ``base_qx`` ... ``base_qw``.
    dof_names : tuple of str
        The names of the velocity coordinates (length nv): joint names, and for a free joint
        ``base_vx`` ... ``base_vz``, ``base_wx`` ... ``base_wz``.
    joint_names : tuple of str
        Each body's joint, in body order.
    n_bodies : int
        The number of moving bodies, N.
    depth : int
        The largest number of bodies on a path from the root to a leaf, d.
    bodies : tuple
        The bodies in order, each with its ``name``, ``parent`` (index; -1 for the world),
        ``joint`` (``name``, ``type``, ``axis``, ``limits``, ``mimic``), ``mass`` [kg], ``com``
        (shape (3,), in the body frame [m]) and ``inertia`` (shape (3, 3), about the COM [kg·m²]).
    floating_base : bool
        Whether a free joint was added between the world and the root link.
    base_link : str
        The root link's name.
    gravity : tuple of float
        The gravity in the world frame [m/s²]: (0, 0, −9.81) unless an MJCF file sets another.
    total_mass : float
        The sum of the bodies' masses [kg].
    dof_order : str
        ``"file"`` or ``"pinocchio"``, as loaded.
    inertia_issues : tuple
        The links whose inertia no rigid body has, one record each (empty for a consistent robot).
    massless_joints : tuple of str
        One sentence per joint that moves no mass (M singular).
    singular_joints : tuple of str
        The names of those joints.
    description : RobotDescription
        The description as read from the file, everything the dynamics does not use included.

    Examples
    --------
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("humanoid", floating_base=True)
    >>> robot.nq, robot.nv, robot.n_bodies
    (27, 26, 21)
    >>> robot.config_names[:4]
    ('base_x', 'base_y', 'base_z', 'base_qx')
    >>> robot.dof_names[:4]
    ('base_vx', 'base_vy', 'base_vz', 'base_wx')
    >>> round(robot.total_mass, 6), robot.gravity
    (56.4, (0.0, 0.0, -9.81))
    """

    name: str
    bodies: tuple[Body, ...]
    floating_base: bool
    base_link: str
    description: RobotDescription
    # what is physically wrong but computable (see build_model)
    inertia_issues: tuple[InertiaIssue, ...] = ()
    massless_joints: tuple[str, ...] = ()  # sentences, one per joint that moves no mass
    dof_order: str = "file"  # see build_model
    gravity: tuple[float, float, float] = STANDARD_GRAVITY  # the world's, m/s² (MJCF may set another)
    singular_joints: tuple[str, ...] = ()  # the names of those joints (M singular at q = 0)
    # every link's frame: (body, R, p) with the link frame's axes R and origin p in that body's
    # frame; body -1 is the world (links welded to a fixed base)
    link_frames: dict = field(default_factory=dict)

    # ---- sizes -------------------------------------------------------------------------
    @property
    def n_bodies(self) -> int:
        """The number of moving bodies (fixed joints merged), N."""
        return len(self.bodies)

    @cached_property
    def nq(self) -> int:
        """The length of a configuration q (a free joint takes 7: position and quaternion)."""
        return sum(b.joint.nq for b in self.bodies)

    @cached_property
    def nv(self) -> int:
        """The length of a velocity, and the size of M, C and each side of Γ."""
        return sum(b.joint.nv for b in self.bodies)

    @cached_property
    def depth(self) -> int:
        """The largest number of bodies on a path from the root to a leaf, d."""
        level = []
        for b in self.bodies:
            level.append(1 if b.parent < 0 else level[b.parent] + 1)
        return max(level, default=0)

    @cached_property
    def velocities_are_coordinates(self) -> bool:
        """Whether the velocity is the derivative of q (1-DoF joints only).

        Free, planar and spherical joints have generalized speeds instead (a body-frame twist):
        then Γ is defined by Γ[:, :, k] = C(q, e_k), and is not symmetric in its last two indices.
        """
        return all(b.joint.type in ("revolute", "continuous", "prismatic") for b in self.bodies)

    @cached_property
    def gravity_array(self) -> np.ndarray:
        """The robot's gravity as an array, shape (3,) [m/s²]: what ``gravity=True`` means."""
        return frozen_array(self.gravity)

    @cached_property
    def standard_gravity(self) -> bool:
        return tuple(self.gravity) == STANDARD_GRAVITY

    @cached_property
    def joint_friction(self) -> np.ndarray:
        """Each DoF's viscous and Coulomb friction coefficients, shape (nv, 2).

        Zero where the file gives none; only 1-DoF joints have them. The observers take the
        friction torque b q̇ + c sign(q̇) off the drives' torque.
        """
        out = np.zeros((self.nv, 2))
        for i, b in enumerate(self.bodies):
            if b.joint.friction is not None:
                out[int(self.v_start[i])] = b.joint.friction
        return frozen_array(out)

    @cached_property
    def total_mass(self) -> float:
        """The sum of the bodies' masses [kg]."""
        return float(sum(b.mass for b in self.bodies))

    # ---- names -------------------------------------------------------------------------
    @cached_property
    def dof_names(self) -> tuple[str, ...]:
        """The names of the velocity coordinates (length nv), in order."""
        return tuple(n for b in self.bodies for n in joints.coordinate_names(b.joint.name, b.joint.type)[1])

    @cached_property
    def config_names(self) -> tuple[str, ...]:
        """The names of the configuration coordinates (length nq), in order."""
        return tuple(n for b in self.bodies for n in joints.coordinate_names(b.joint.name, b.joint.type)[0])

    @cached_property
    def joint_names(self) -> tuple[str, ...]:
        """Each body's joint name, in body order."""
        return tuple(b.joint.name for b in self.bodies)

    # ---- structure ---------------------------------------------------------------------
    @cached_property
    def body_ancestors(self) -> np.ndarray:
        """Boolean, shape (N, N): ``[a, b]`` is True when body a lies on the path from body b to the root."""
        N = self.n_bodies
        anc = np.zeros((N, N), dtype=bool)
        for i, b in enumerate(self.bodies):
            if b.parent >= 0:
                anc[:, i] = anc[:, b.parent]
            anc[i, i] = True
        return anc

    @cached_property
    def dof_related(self) -> np.ndarray:
        """Boolean, shape (nv, nv): DoF i and j lie on one path from the root (else M_ij = C_ij = 0)."""
        anc = self.body_ancestors
        cb = self.col_body
        return anc[np.ix_(cb, cb)] | anc[np.ix_(cb, cb)].T

    @cached_property
    def arrays(self) -> ModelArrays:
        """The robot packed into the read-only integer and float arrays the compiled engine reads."""
        N, nv = self.n_bodies, self.nv
        ints = np.zeros((N, 4), dtype=np.int64)
        cols = np.zeros((nv, 3), dtype=np.int64)
        geom = np.zeros((N, GEOM_WIDTH))
        last_col = {-1: -1}
        qi = vi = 0
        n_roots = sum(1 for b in self.bodies if b.parent < 0)
        for i, b in enumerate(self.bodies):
            jt = joint_type(b.joint.type)
            code, unit = joints.code_at(b.joint.type, sole_root=b.parent < 0 and n_roots == 1)
            ints[i] = (b.parent, code, qi, vi)
            prev = last_col[b.parent]
            for k in range(jt.nv):
                cols[vi + k] = (i, prev, unit[k])
                prev = vi + k
            last_col[i] = prev
            qi += jt.nq
            vi += jt.nv
            geom[i, G_ROT:G_TRANS] = b.joint.rotation.ravel()
            geom[i, G_TRANS:G_AXIS] = b.joint.translation
            geom[i, G_AXIS:G_MASS] = b.joint.axis
            geom[i, G_MASS] = b.mass
            geom[i, G_COM:G_INERTIA] = b.com
            geom[i, G_INERTIA:G_ROT_HAT] = b.inertia.ravel()
            a = b.joint.axis
            hat = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
            E = b.joint.rotation
            geom[i, G_ROT_HAT:G_ROT_HAT2] = (E @ hat).ravel()
            geom[i, G_ROT_HAT2:G_PARENT_AXIS] = (E @ hat @ hat).ravel()
            geom[i, G_PARENT_AXIS:G_ARMATURE] = E @ a
            geom[i, G_ARMATURE : G_ARMATURE + len(b.joint.armature)] = b.joint.armature
        if N:
            roots = ints[:, 0] < 0
            geom[roots, G_TRANS:G_AXIS] -= geom[0, G_TRANS:G_AXIS]  # computation frame at the root joint
        for a in (ints, cols, geom):
            a.setflags(write=False)
        return ModelArrays(ints, cols, geom)

    @property
    def q_start(self) -> np.ndarray:
        return self.arrays.ints[:, 2]

    @property
    def v_start(self) -> np.ndarray:
        return self.arrays.ints[:, 3]

    @property
    def col_body(self) -> np.ndarray:
        """The body each DoF moves, shape (nv,)."""
        return self.arrays.cols[:, 0]

    # ---- configurations ----------------------------------------------------------------
    def neutral_configuration(self) -> np.ndarray:
        """Return the neutral configuration: zero joint values, the identity orientation.

        Joint values are clipped into their limits where zero lies outside them; a free joint sits at
        the origin with the quaternion (0, 0, 0, 1).

        Returns
        -------
        q : ndarray of shape (nq,)
            The configuration [rad or m].

        Examples
        --------
        >>> import coriolis_cli as cc
        >>> robot = cc.load_robot("panda")
        >>> # joint 4's limits exclude 0
        >>> [round(float(x), 6) for x in robot.neutral_configuration()]
        [0.0, 0.0, 0.0, -0.0698, 0.0, 0.0, 0.0]
        """
        q = np.zeros(self.nq)
        for b, qs in zip(self.bodies, self.q_start):
            joints.neutral(b.joint.type, b.joint.limits, q[qs : qs + b.joint.nq])
        return q

    def random_configuration(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Draw a random configuration within the joint limits.

        The same as [random_configuration][coriolis_cli.random_configuration], which takes a robot
        in other coordinates too.

        Parameters
        ----------
        rng : int, numpy.random.Generator or None, optional
            A seed or a generator; None draws from fresh entropy.

        Returns
        -------
        q : ndarray of shape (nq,)
            The configuration [rad or m; quaternions (x, y, z, w)].

        Examples
        --------
        >>> import coriolis_cli as cc
        >>> robot = cc.load_robot("panda")
        >>> robot.random_configuration(0).shape
        (7,)
        """
        rng = np.random.default_rng(rng)
        q = np.zeros(self.nq)
        for b, qs in zip(self.bodies, self.q_start):
            joints.random(b.joint.type, b.joint.limits, rng, q[qs : qs + b.joint.nq])
        return q

    def integrate(self, q: np.ndarray, v: np.ndarray, t: float = 1.0) -> np.ndarray:
        """Return q ⊕ v t, the configuration reached by moving with constant velocity v for time t.

        The same as [integrate][coriolis_cli.integrate], which takes a robot in other coordinates
        too.

        Parameters
        ----------
        q : array_like of shape (nq,)
            Joint configuration [rad or m; quaternions as x, y, z, w].
        v : array_like of shape (nv,)
            Joint velocity [rad/s or m/s; a free joint's as its body-frame twist].
        t : float, optional
            The time to move for [s]; default 1.

        Returns
        -------
        q_next : ndarray of shape (nq,)
            The configuration reached.

        Examples
        --------
        >>> import coriolis_cli as cc
        >>> robot = cc.load_robot("planar_2link")
        >>> [round(float(x), 6) for x in robot.integrate([0.0, 1.0], [2.0, -1.0], 0.5)]
        [1.0, 0.5]
        """
        out = np.array(q, dtype=float)
        for b, qs, vs in zip(self.bodies, self.q_start, self.v_start):
            seg = out[qs : qs + b.joint.nq]
            joints.integrate(b.joint.type, seg.copy(), np.asarray(v)[vs : vs + b.joint.nv], t, seg)
        return out


# ---------------------------------------------------------------------------------------
def _add_inertia(m1, c1, I1, m2, c2, I2):
    """Combine two rigid bodies given in one frame (COM positions, inertias about own COM)."""
    m = m1 + m2
    if m <= 0.0:
        return 0.0, np.zeros(3), I1 + I2
    c = (m1 * c1 + m2 * c2) / m
    out = I1 + I2
    for mi, ci in ((m1, c1), (m2, c2)):
        d = ci - c
        out = out + mi * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
    return m, c, out


DOF_ORDERS = ("file", "pinocchio")


def _friction_of(j) -> tuple[float, float] | None:
    if j.friction is None:
        return None
    if joint_type(j.type).nv != 1:
        raise ModelError(f"joint '{j.name}': friction is given per 1-DoF joint, not for a {j.type} joint")
    return (float(j.friction[0]), float(j.friction[1]))


def build_model(desc: RobotDescription, floating_base: bool = False, strict: bool = False,
                dof_order: str = "file") -> RobotModel:
    """Turn a description into the tree the engine runs on.

    Bodies, and so the DoF, are numbered depth first. ``dof_order="file"`` visits a link's child
    joints in the order the file writes them; ``"pinocchio"`` in the order of their names, as
    Pinocchio's URDF parser does (urdfdom keeps a link's child joints in a map keyed by name), so
    that q, M, C and τ line up with Pinocchio's entry by entry.

    Computes with the inertias as given. Links whose inertia no rigid body has (beyond round-off)
    and joints that move no mass (M singular) give one :class:`ModelWarning` each, listing every
    case; ``strict=True`` makes them a :class:`ModelError`. Links welded to a fixed world are not
    checked: they cannot affect M."""
    desc = validate(desc)
    parent_of = {j.child for j in desc.joints}
    root = next(link.name for link in desc.links if link.name not in parent_of)
    if dof_order not in DOF_ORDERS:
        raise ModelError(f"dof_order must be one of {', '.join(DOF_ORDERS)}, got '{dof_order}'")
    children: dict[str, list] = {}
    for j in desc.joints:
        children.setdefault(j.parent, []).append(j)
    if dof_order == "pinocchio":
        for siblings in children.values():
            siblings.sort(key=lambda j: j.name.encode("utf-8"))  # std::string's order: bytes
    links = {link.name: link for link in desc.links}

    bodies: list[dict] = []

    def link_inertia(name):
        inertial = links[name].inertial
        if inertial is None:
            return 0.0, np.zeros(3), np.zeros((3, 3))
        com, Ic = inertial.com_and_inertia()
        return float(inertial.mass), com, Ic

    def merge_into(b: int, name: str, R: np.ndarray, p: np.ndarray):
        m2, c2, I2 = link_inertia(name)
        if m2 == 0.0 and not np.any(I2):
            return
        body = bodies[b]
        body["mass"], body["com"], body["inertia"] = _add_inertia(
            body["mass"], body["com"], body["inertia"], m2, R @ c2 + p, R @ I2 @ R.T
        )
        body["merged"].append(name)

    def new_body(name, parent, joint):
        m, c, Ic = link_inertia(name)
        bodies.append(dict(name=name, parent=parent, joint=joint, mass=m, com=c, inertia=Ic, merged=[]))
        return len(bodies) - 1

    if floating_base:
        free = Joint(
            name="base",
            type="free",
            axis=frozen_array(np.zeros(3)),
            rotation=frozen_array(np.eye(3)),
            translation=frozen_array(np.zeros(3)),
        )
        owner = new_body(root, -1, free)
    else:
        owner = -1
    # Depth-first preorder, so parent(i) < i and every subtree is contiguous.
    # Stack entries: (link, joint that reaches it, owning body, link frame in that body's frame)
    stack = [(root, None, owner, np.eye(3), np.zeros(3))]
    welded = [] if floating_base else [root]  # links fixed to the world
    frames = {}
    while stack:
        name, j, b, R, p = stack.pop()
        if j is not None:
            if j.type == "fixed":
                if b >= 0:
                    merge_into(b, name, R, p)
                else:
                    welded.append(name)
            else:
                if len(j.armature) not in (0, joint_type(j.type).nv):
                    raise ModelError(f"joint '{j.name}': {len(j.armature)} armature values for its "
                                     f"{joint_type(j.type).nv} DoF")
                joint = Joint(
                    name=j.name,
                    type=j.type,
                    axis=frozen_array(j.axis),
                    rotation=frozen_array(R),
                    translation=frozen_array(p),
                    limits=j.limits,
                    mimic=j.mimic,
                    armature=tuple(float(x) for x in j.armature),
                    friction=_friction_of(j),
                )
                b, R, p = new_body(name, b, joint), np.eye(3), np.zeros(3)
        frames[name] = (b, frozen_array(R), frozen_array(p))
        for cj in reversed(children.get(name, [])):
            stack.append((cj.child, cj, b, R @ cj.origin_rotation(), R @ np.array(cj.xyz, dtype=float) + p))

    model = RobotModel(
        name=desc.name,
        bodies=tuple(
            Body(
                name=b["name"],
                parent=b["parent"],
                joint=b["joint"],
                mass=float(b["mass"]),
                com=frozen_array(b["com"]),
                inertia=frozen_array(0.5 * (b["inertia"] + b["inertia"].T)),
                merged_links=tuple(b["merged"]),
            )
            for b in bodies
        ),
        floating_base=floating_base,
        base_link=root,
        description=desc,
        link_frames=frames,
        dof_order=dof_order,
        gravity=tuple(float(x) for x in desc.gravity) if desc.gravity is not None else STANDARD_GRAVITY,
    )
    if model.nv == 0:
        if desc.origin_format == "mjcf":  # --floating-base does not apply: the model says which bodies float
            raise ModelError("the MJCF model has no joints: every body is welded to the world, so nothing moves; a "
                             "body that flies freely needs a <freejoint/> in the model")
        if desc.locked:
            raise ModelError(f"every joint is locked ({len(desc.locked)}: {', '.join(n for n, _ in desc.locked[:4])}"
                             f"{', ...' if len(desc.locked) > 4 else ''}), so nothing moves; lock fewer joints")
        raise ModelError("the robot has no movable joints (all joints are fixed); a body that flies freely, such as "
                         "a quadrotor, needs a floating base (floating_base=True)", hint="pass --floating-base")
    moving = [link for link in desc.links if link.name not in set(welded)]
    issues = tuple(inertia_issues(moving, inertia_scale(moving)))
    singular = _massless_joints(model)
    massless = [sentence for _, sentence in singular]
    problems = []
    if issues:
        problems.append(inertia_summary(issues))
    if massless:
        problems.append(massless_summary(singular))
    if strict and problems:
        raise ModelError(" and ".join(problems) + "; strict refuses the robot, which is otherwise computed as given, with a warning")
    for text in problems:
        warnings.warn(ModelWarning(text + "; computed as given"), stacklevel=2)
    return replace(model, inertia_issues=issues, massless_joints=tuple(massless),
                   singular_joints=tuple(dict.fromkeys(name for name, _ in singular)))


def inertia_summary(issues) -> str:
    """The links whose inertia no rigid body has, in one short sentence: a few names and the worst."""
    n = len(issues)
    if n == 1:
        return f"1 link with an inertia no rigid body has: {issues[0]}"
    names = listed(f"'{i.link}'" for i in issues)
    worst = max(issues, key=lambda i: i.shortfall)
    return (f"{n} links with inertias no rigid body has ({names}; worst: {worst}; listed by `coriolis info` "
            "and robot.inertia_issues)")


def massless_summary(singular) -> str:
    """The joints that move no mass, in one short sentence (``singular``: (name, sentence) pairs)."""
    if len(singular) == 1:
        return "M is singular: " + singular[0][1]
    root = [sentence for name, sentence in singular if "root link" in sentence]
    names = [name for name, sentence in singular if "root link" not in sentence]
    parts = list(root)
    if names:
        shown = listed(f"'{n}'" for n in names)
        parts.append(f"{len(names)} joint{'s' if len(names) > 1 else ''} move{'s' if len(names) == 1 else ''} no mass "
                     f"({shown}: the links they carry have no mass or inertia about their axes; listed by "
                     "`coriolis info` and robot.massless_joints)")
    return "M is singular: " + "; ".join(parts)


def _massless_joints(model: RobotModel) -> list[tuple[str, str]]:
    """Joints that move no mass, so M is singular: (joint name, sentence) pairs. Checked at q = 0."""
    out = []
    N = model.n_bodies
    if model.floating_base:
        root = model.bodies[0]
        children = [b for b in model.bodies if b.parent == 0]
        if len(children) == 1 and _alone(root, children[0].joint) <= MASS_EPS:
            out.append((children[0].joint.name,
                        f"the floating base's root link '{root.name}' has no inertia of its own along the motion of "
                        f"the single joint '{children[0].joint.name}' it carries, so the two make the same motion"))
    # world placement of each body at q = 0
    Rw = [np.eye(3)] * N
    pw = [np.zeros(3)] * N
    for i, b in enumerate(model.bodies):
        Rp = np.eye(3) if b.parent < 0 else Rw[b.parent]
        pp = np.zeros(3) if b.parent < 0 else pw[b.parent]
        Rw[i] = Rp @ b.joint.rotation
        pw[i] = pp + Rp @ b.joint.translation
    # subtree composite (mass, COM, inertia about COM) in world coordinates
    comp = [(b.mass, pw[i] + Rw[i] @ b.com, Rw[i] @ b.inertia @ Rw[i].T) for i, b in enumerate(model.bodies)]
    for i in range(N - 1, -1, -1):
        p = model.bodies[i].parent
        if p >= 0:
            comp[p] = _add_inertia(*comp[p], *comp[i])
    for i, b in enumerate(model.bodies):
        m, c, Ic = comp[i]
        d = c - pw[i]
        about_joint = Ic + m * (np.dot(d, d) * np.eye(3) - np.outer(d, d))  # rotational inertia about the joint
        t = b.joint.type
        if t == "prismatic":
            moved = m
        elif t in ("free", "floating"):
            moved = min(m, float(np.linalg.eigvalsh(Ic)[0]))
        elif t == "spherical":
            moved = float(np.linalg.eigvalsh(about_joint)[0])
        elif t == "planar":
            z = Rw[i][:, 2]
            moved = min(m, float(z @ about_joint @ z))
        else:
            a = Rw[i] @ b.joint.axis
            moved = float(a @ about_joint @ a)
        if not moved > MASS_EPS:
            out.append((b.joint.name, f"joint '{b.joint.name}' moves no mass (the links it carries have no mass or "
                                      "inertia about its axis)"))
    return out


def _alone(root: Body, joint: Joint) -> float:
    """The root body's own inertia along the motion of the joint it carries: the base moving
    that way with the joint moving back moves the root alone. A revolute joint needs the root's
    rotational inertia about the joint's axis line, a prismatic one its mass; multi-DoF joints
    all of both."""
    d = joint.translation - root.com  # a point of the axis, from the root's COM
    about_axis = root.inertia + root.mass * (d @ d * np.eye(3) - np.outer(d, d))
    if joint.type in ("revolute", "continuous"):
        a = joint.rotation @ joint.axis
        return float(a @ about_axis @ a)
    if joint.type == "prismatic":
        return root.mass
    return min(root.mass, float(np.linalg.eigvalsh(root.inertia)[0]))
