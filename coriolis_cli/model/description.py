"""The robot description shared by the URDF and YAML formats: links and joints as written.

A description is what a file says, checked for consistency; :mod:`coriolis_cli.model.tree`
turns it into the kinematic tree the engine runs on (fixed joints merged, bodies ordered).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import ModelError, ModelWarning
from .geometry import frame_rotation, inertia_from_6
from .limits import max_bodies
from .numbers import check_magnitude

MOVABLE_TYPES = ("revolute", "continuous", "prismatic")  # one DoF along or about an axis
MULTI_DOF_TYPES = ("planar", "floating", "spherical")  # URDF has the first two; YAML all three
SUPPORTED_TYPES = MOVABLE_TYPES + MULTI_DOF_TYPES + ("fixed",)

# Mass below which a link counts as massless when we look for joints that move nothing.
MASS_EPS = 1e-12
STANDARD_GRAVITY = (0.0, 0.0, -9.81)  # m/s², world z up: a description's gravity when it names none


@dataclass(frozen=True)
class Inertial:
    """Inertial block of a link, as in URDF: COM frame (xyz, rpy) and inertia about the COM."""

    mass: float
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    # ixx, ixy, ixz, iyy, iyz, izz in the COM frame
    inertia: tuple[float, float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    # the COM frame's rotation exactly (9 numbers, row by row) where the format gives a matrix or
    # quaternion (MJCF); rpy then only shows it. None: from rpy (URDF, YAML)
    rotation: tuple[float, ...] | None = None

    def com_and_inertia(self) -> tuple[np.ndarray, np.ndarray]:
        """COM position and rotational inertia about the COM, both in the link frame."""
        R = frame_rotation(self.rpy, self.rotation)
        Ic = R @ inertia_from_6(*self.inertia) @ R.T
        return np.array(self.xyz, dtype=float), 0.5 * (Ic + Ic.T)


@dataclass(frozen=True)
class Limits:
    lower: float | None = None
    upper: float | None = None
    effort: float | None = None
    velocity: float | None = None


@dataclass(frozen=True)
class Mimic:
    """q = offset + multiplier · q_joint (URDF), or, when ``polynomial`` is given,
    q = Σ_k polynomial[k] · q_joint^k (MuJoCo's <equality><joint polycoef>, up to degree 4)."""

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0
    polynomial: tuple[float, ...] = ()

    @property
    def coefficients(self) -> tuple[float, ...]:
        """q = Σ_k c_k q_joint^k, lowest degree first."""
        return self.polynomial if self.polynomial else (self.offset, self.multiplier)

    def __call__(self, leader: float) -> float:
        return float(sum(c * leader**k for k, c in enumerate(self.coefficients)))


@dataclass(frozen=True)
class LinkSpec:
    name: str
    inertial: Inertial | None = None
    # URDF elements the dynamics does not read (<visual>, <collision>, ...), as XML text, carried
    # through convert unchanged
    extra: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class JointSpec:
    name: str
    type: str
    parent: str
    child: str
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    axis: tuple[float, float, float] = (1.0, 0.0, 0.0)
    limits: Limits | None = None
    mimic: Mimic | None = None
    extra: tuple[str, ...] = field(default=(), compare=False)  # <dynamics>, <calibration>, ... as XML text
    armature: tuple[float, ...] = ()  # per DoF: rotor inertia reflected on the joint (MJCF's armature)
    rotation: tuple[float, ...] | None = None  # the origin's rotation exactly, as Inertial.rotation
    # a 1-DoF joint's friction (viscous b in N·m·s/rad or N·s/m, Coulomb c in N·m or N): the torque
    # b q̇ + c sign q̇ the drive spends on it (URDF <dynamics damping friction>, MJCF damping and
    # frictionloss, YAML friction:); None: none given
    friction: tuple[float, float] | None = None

    def origin_rotation(self) -> np.ndarray:
        return frame_rotation(self.rpy, self.rotation)


LOOP_TYPES = ("revolute", "spherical", "fixed")
ORIENTATION_ROWS = {"spherical": 0, "revolute": 2, "fixed": 3}  # rows beyond the 3 of position
# a spherical joint on a loop moves by three angles along its axes (model.loops): a rod's (its third
# axis along its own line) are swung twice and turned about itself, any other's about its x, y, z
LOOP_ANGLE_SUFFIXES = {True: ("swing1", "swing2", "spin"), False: ("rx", "ry", "rz")}


@dataclass(frozen=True)
class LoopClosure:
    """A joint that closes a kinematic loop of the tree (YAML ``loops:``). ``xyz/rpy`` place the
    joint frame in the parent link, ``child_xyz/child_rpy`` the same frame in the child link. A
    revolute closure keeps the two frames' origins together and their ``axis`` aligned; a
    spherical one keeps the origins together only (MuJoCo's <connect>); a fixed one keeps the
    two frames together entirely (MuJoCo's <weld>)."""

    name: str
    type: str
    parent: str
    child: str
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    child_xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    child_rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    axis: tuple[float, float, float] = (0.0, 0.0, 1.0)
    # the frames' rotations exactly (9 numbers, row by row) where the format gives them (MJCF)
    rotation: tuple[float, ...] | None = None
    child_rotation: tuple[float, ...] | None = None


@dataclass(frozen=True)
class RobotDescription:
    name: str
    links: tuple[LinkSpec, ...]
    joints: tuple[JointSpec, ...]
    source: str = field(default="", compare=False)
    # closed kinematic loops: the closures, the minimal coordinates among the loops' joints, and
    # the starting point of the loop solve for the others ((joint, value) pairs; default 0)
    loops: tuple[LoopClosure, ...] = ()
    independent: tuple[str, ...] = ()
    guess: tuple[tuple[str, float], ...] = ()
    # top-level URDF elements other than links and joints (<material>, <transmission>, <gazebo>, ...)
    extra: tuple[str, ...] = field(default=(), compare=False)
    gravity: tuple[float, float, float] | None = None  # m/s² in the world frame; None: STANDARD_GRAVITY
    origin_format: str = field(default="", compare=False)  # "mjcf" for a model MuJoCo compiled
    # joints made fixed by --lock, (name, value; None for a multi-DoF joint's identity), so that
    # the model the file describes can still be compared with ours (MuJoCo's check m)
    locked: tuple[tuple[str, float | None], ...] = field(default=(), compare=False)
    # MJCF's actuated joints (<actuator> targets): a loop's preferred independent coordinates,
    # which are chosen when ``independent`` is empty (model.loops)
    actuated: tuple[str, ...] = field(default=(), compare=False)

    def link(self, name: str) -> LinkSpec:
        for link in self.links:
            if link.name == name:
                return link
        raise KeyError(name)


def _finite(values, what: str, bounded: bool = True) -> None:
    """Finite and, if ``bounded``, small enough that the dynamics cannot overflow
    (numbers.MAX_MAGNITUDE). Axes (directions) and limits (never in the dynamics) are not bounded."""
    for v in values:
        if v is None or not math.isfinite(float(v)):
            raise ModelError(f"{what} is not a finite number ({v})")
    if not bounded:
        return
    try:
        check_magnitude([float(v) for v in values], what)
    except ValueError as e:
        raise ModelError(str(e)) from None


def _check_inertial(link: LinkSpec) -> None:
    """Errors only for what cannot be computed: non-finite numbers, a negative mass. Inertias that
    no rigid body has are computed with and reported by :func:`inertia_issues`."""
    inertial = link.inertial
    if inertial is None:
        return
    where = f"link '{link.name}'"
    m = inertial.mass
    if m is None or not math.isfinite(float(m)):
        raise ModelError(f"{where}: mass is not a finite number ({m})")
    if m < 0:
        raise ModelError(f"{where}: negative mass {m}")
    _finite((m,), f"{where}: mass")
    _finite(inertial.xyz, f"{where}: inertial origin")
    _finite(inertial.rpy, f"{where}: inertial rpy")
    _finite(inertial.inertia, f"{where}: inertia")


# Principal moments below this fraction of the robot's inertia scale are round-off (CAD exports
# write 1e-20 for zero), never an error.
INERTIA_ROUND_OFF = 1e-12


@dataclass(frozen=True)
class InertiaIssue:
    """A link whose rotational inertia no rigid body has: ``shortfall`` is by how much, relative
    to its largest principal moment."""

    link: str
    problem: str  # "not positive semi-definite" | "triangle inequality"
    moments: tuple[float, float, float]
    shortfall: float

    def __str__(self) -> str:
        a, b, c = self.moment_texts()
        if self.problem == "triangle inequality":
            return (f"'{self.link}' principal moments {a}, {b}, {c} break the triangle inequality "
                    f"by {100 * self.shortfall:.3g} %")
        return f"'{self.link}' inertia not positive semi-definite (smallest principal moment {a})"

    def moment_texts(self) -> tuple[str, str, str]:
        """The principal moments at 4 digits, those below round-off of the largest as 0."""
        top = max(abs(m) for m in self.moments)
        return tuple("0" if abs(m) <= INERTIA_ROUND_OFF * top else f"{m:.4g}" for m in self.moments)


def inertia_scale(links) -> float:
    """The largest principal moment of any link (0 when none has inertia)."""
    scale = 0.0
    for link in links:
        if link.inertial is not None:
            scale = max(scale, float(np.max(np.abs(np.linalg.eigvalsh(inertia_from_6(*link.inertial.inertia))))))
    return scale


def inertia_issues(links, scale: float) -> list[InertiaIssue]:
    """Every link among ``links`` whose inertia about its COM is not that of a rigid body, beyond
    round-off (INERTIA_ROUND_OFF × ``scale``)."""
    issues = []
    tol = INERTIA_ROUND_OFF * scale
    for link in links:
        if link.inertial is None:
            continue
        a, b, c = (float(e) for e in np.linalg.eigvalsh(inertia_from_6(*link.inertial.inertia)))
        top = max(abs(c), 1e-300)
        if a < -tol:
            issues.append(InertiaIssue(link.name, "not positive semi-definite", (a, b, c), -a / top))
        elif c - a - b > tol:
            issues.append(InertiaIssue(link.name, "triangle inequality", (a, b, c), (c - a - b) / top))
    return issues


# A warning names this many links or joints in full, then counts the rest.
NAMED_IN_WARNINGS = 3


def listed(names, shown: int = NAMED_IN_WARNINGS) -> str:
    """The first ``shown`` of ``names`` (text as it is to appear), then a count of the rest:
    ``'a', 'b', 'c' and 2 more``."""
    names = list(names)
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def pinned_limits_summary(pinned) -> str:
    """The warning for revolute and prismatic joints whose lower limit equals the upper, given as
    (name, value) pairs: what the commands that move joints then do with them."""
    n = len(pinned)
    it = "them" if n > 1 else "it"
    shown = listed(f"'{name}' ({value:g})" for name, value in pinned)
    cad = " (CAD exports write 0 and 0 for limits never entered)" if any(value == 0 for _, value in pinned) else ""
    return (f"{n} joint{'s' if n > 1 else ''} whose lower limit equals the upper, leaving {it} no range{cad}: {shown}; "
            f"kept as given: simulate keeps {it} at that value, excite refuses {it}, random configurations ignore "
            "the range")


def validate(desc: RobotDescription) -> RobotDescription:
    """Check a description and return it with normalized joint axes.

    Raises :class:`ModelError` naming the first problem found.
    """
    if not desc.links:
        raise ModelError("the robot has no links")
    if len(desc.links) > max_bodies():
        raise ModelError(f"the robot has {len(desc.links):,} links, more than the {max_bodies():,} allowed "
                         "(set CORIOLIS_MAX_BODIES to raise the limit)")
    seen: set[str] = set()
    for link in desc.links:
        if not link.name:
            raise ModelError("a link has no name")
        if link.name in seen:
            raise ModelError(f"link '{link.name}' is defined twice")
        seen.add(link.name)
        _check_inertial(link)
    joint_names: set[str] = set()
    parent_of: dict[str, str] = {}
    joints = []
    unordered: list[str] = []
    pinned: list[tuple[str, float]] = []
    for j in desc.joints:
        if not j.name:
            raise ModelError("a joint has no name")
        if j.name in joint_names:
            raise ModelError(f"joint '{j.name}' is defined twice")
        joint_names.add(j.name)
        if j.type not in SUPPORTED_TYPES:
            raise ModelError(
                f"joint '{j.name}': type '{j.type}' is not supported (use one of {', '.join(SUPPORTED_TYPES)})"
            )
        for role, link in (("parent", j.parent), ("child", j.child)):
            if link not in seen:
                raise ModelError(f"joint '{j.name}' names {role} link '{link}', which does not exist")
        if j.parent == j.child:
            raise ModelError(f"joint '{j.name}' connects link '{j.parent}' to itself")
        if j.child in parent_of:
            raise ModelError(
                f"link '{j.child}' is the child of two joints ('{parent_of[j.child]}' and '{j.name}')"
            )
        parent_of[j.child] = j.name
        _finite(j.xyz, f"joint '{j.name}': origin xyz")
        _finite(j.rpy, f"joint '{j.name}': origin rpy")
        if j.type in MOVABLE_TYPES:
            j = replace(j, axis=_unit_axis(j.axis, f"joint '{j.name}'"))
        if j.limits is not None and j.limits.lower is not None and j.limits.upper is not None:
            _finite((j.limits.lower, j.limits.upper), f"joint '{j.name}': limits", bounded=False)
            if j.limits.lower > j.limits.upper:  # some simulators' way to say "no limit"; Pinocchio loads it
                unordered.append(f"'{j.name}' ({j.limits.lower:g} > {j.limits.upper:g})")
                j = replace(j, limits=replace(j.limits, lower=None, upper=None))
            elif j.limits.lower == j.limits.upper and j.type in ("revolute", "prismatic"):
                # CAD exporters' 0 and 0 for limits never entered; Pinocchio loads it, and the
                # dynamics does not read it, but the commands that move the joint do
                pinned.append((j.name, j.limits.lower))
        if j.mimic is not None:
            m = j.mimic
            if not m.joint:
                raise ModelError(f"joint '{j.name}': its <mimic> names no joint (joint=\"...\")")
            if not all(math.isfinite(c) for c in (m.multiplier, m.offset, *m.polynomial)):
                given = (f"polynomial coefficients {', '.join(f'{c:g}' for c in m.polynomial)}" if m.polynomial else
                         f"multiplier {m.multiplier:g}, offset {m.offset:g}")
                raise ModelError(f"joint '{j.name}': mimic of '{m.joint}' has a coefficient that is not a finite number "
                                 f"({given})")
        if any(not (a >= 0 and math.isfinite(a)) for a in j.armature):
            raise ModelError(f"joint '{j.name}': armature {', '.join(f'{a:g}' for a in j.armature)} must be finite and "
                             "not negative (a rotor inertia adds to M)")
        joints.append(j)
    if unordered:
        warnings.warn(ModelWarning(f"{len(unordered)} joint{'s' if len(unordered) > 1 else ''} with the lower limit above "
                                   f"the upper, read as no limit: {listed(unordered)}"), stacklevel=2)
    if pinned:
        warnings.warn(ModelWarning(pinned_limits_summary(pinned)), stacklevel=2)
    for k, j in enumerate(joints):
        if j.mimic is not None and j.mimic.joint not in joint_names:
            warnings.warn(ModelWarning(f"joint '{j.name}' mimics joint '{j.mimic.joint}', which does not exist; "
                                       "it is loaded as an independent joint"), stacklevel=2)
            joints[k] = replace(j, mimic=None)
        if j.type == "planar" and not np.allclose(np.abs(np.asarray(j.axis, float)), (0, 0, 1)):
            warnings.warn(ModelWarning(f"planar joint '{j.name}': axis {tuple(float(a) for a in j.axis)} is ignored; the "
                                       "joint moves in the xy plane of its frame (as in Pinocchio)"), stacklevel=2)
    roots = [link.name for link in desc.links if link.name not in parent_of]
    if not roots:
        raise ModelError("the joints form a cycle: every link has a parent joint")
    if len(roots) > 1:
        raise ModelError(
            f"several root links ({', '.join(roots[:5])}{', ...' if len(roots) > 5 else ''}); "
            "a robot must be one tree with a single root"
        )
    # With one root and at most one parent per link, a link not reachable from the root lies on a cycle.
    children: dict[str, list[str]] = {}
    for j in joints:
        children.setdefault(j.parent, []).append(j.child)
    reached = {roots[0]}
    stack = [roots[0]]
    while stack:
        for c in children.get(stack.pop(), []):
            if c not in reached:
                reached.add(c)
                stack.append(c)
    if len(reached) != len(desc.links):
        cyc = [link.name for link in desc.links if link.name not in reached]
        raise ModelError(f"the joints form a cycle through links {', '.join(cyc[:6])}")
    return replace(desc, joints=tuple(joints), loops=_validate_loops(desc, seen, {j.name: j for j in joints}))


def _unit_axis(axis, where: str) -> tuple[float, ...]:
    axis = np.asarray(axis, dtype=float)
    _finite(axis, f"{where}: axis", bounded=False)
    big = float(np.max(np.abs(axis)))
    if big == 0.0 or np.linalg.norm(axis / big) * big < 1e-9:
        raise ModelError(f"{where}: axis is zero")
    unit = axis / big  # scaled first, so that the norm cannot overflow
    return tuple(float(a) for a in unit / np.linalg.norm(unit))


def _validate_loops(desc: RobotDescription, links: set[str], joints: dict) -> tuple[LoopClosure, ...]:
    """Loop closures, independent coordinates and guesses that name what exists; axes normalized."""
    loops, names = [], set()
    for c in desc.loops:
        where = f"loop closure '{c.name}'"
        if not c.name:
            raise ModelError("a loop closure has no name")
        if c.name in names or c.name in joints:
            raise ModelError(f"{where}: the name is taken by {'another closure' if c.name in names else 'a joint'}")
        names.add(c.name)
        if c.type not in LOOP_TYPES:
            raise ModelError(f"{where}: type '{c.type}' is not supported (use one of {', '.join(LOOP_TYPES)})")
        for role, link in (("parent", c.parent), ("child", c.child)):
            if link not in links:
                raise ModelError(f"{where} names {role} link '{link}', which does not exist")
        if c.parent == c.child:
            raise ModelError(f"{where} connects link '{c.parent}' to itself")
        for what in ("xyz", "rpy", "child_xyz", "child_rpy"):
            _finite(getattr(c, what), f"{where}: {what}")
        loops.append(replace(c, axis=_unit_axis(c.axis, where)) if c.type == "revolute" else c)
    if not loops and (desc.independent or desc.guess):
        raise ModelError("'independent' and 'guess' need closed loops ('loops')")
    angles = {f"{n}_{s}" for n, j in joints.items() if j.type == "spherical"
              for suffixes in LOOP_ANGLE_SUFFIXES.values() for s in suffixes}
    for name in desc.independent:
        if name not in joints and name not in angles:
            raise ModelError(f"independent coordinate '{name}' is not a joint")
    if len(set(desc.independent)) != len(desc.independent):
        raise ModelError("a joint is listed twice in 'independent'")
    for name, value in desc.guess:
        if name not in joints and name not in angles:
            raise ModelError(f"guess names '{name}', which is not a joint")
        _finite(np.atleast_1d(value), f"guess for '{name}'")
    return tuple(loops)


def description_to_dict(desc: RobotDescription) -> dict:
    """Plain data (floats kept exactly) for caching parsed descriptions."""
    return {
        "name": desc.name,
        "links": [
            {"name": link.name, "inertial": None if link.inertial is None else
             {"mass": link.inertial.mass, "xyz": list(link.inertial.xyz), "rpy": list(link.inertial.rpy),
              "inertia": list(link.inertial.inertia)}, "extra": list(link.extra)}
            for link in desc.links
        ],
        "joints": [
            {"name": j.name, "type": j.type, "parent": j.parent, "child": j.child, "xyz": list(j.xyz), "rpy": list(j.rpy),
             "axis": list(j.axis), "limits": None if j.limits is None else vars(j.limits).copy(),
             "mimic": None if j.mimic is None else vars(j.mimic).copy(), "extra": list(j.extra),
             "armature": list(j.armature), "friction": None if j.friction is None else list(j.friction)}
            for j in desc.joints
        ],
        "extra": list(desc.extra),
    }


def _str_of(x) -> str:
    if not isinstance(x, str):
        raise ValueError(f"expected a string, got {type(x).__name__}")
    return x


def _num_of(x) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"expected a number, got {type(x).__name__}")
    return float(x)


def _nums(x, n: int) -> tuple[float, ...]:
    if not isinstance(x, list) or len(x) != n:
        raise ValueError(f"expected {n} numbers")
    return tuple(_num_of(v) for v in x)


def _opt_num(x):
    return None if x is None else _num_of(x)


def description_from_dict(data: dict, source: str = "") -> RobotDescription:
    """The inverse of description_to_dict; ValueError (or KeyError, TypeError) on anything else."""
    links = tuple(
        LinkSpec(_str_of(d["name"]), None if d["inertial"] is None else Inertial(
            _num_of(d["inertial"]["mass"]), _nums(d["inertial"]["xyz"], 3), _nums(d["inertial"]["rpy"], 3),
            _nums(d["inertial"]["inertia"], 6)), _strs(d["extra"]))
        for d in data["links"]
    )
    joints = []
    for d in data["joints"]:
        lim, mim = d["limits"], d["mimic"]
        joints.append(JointSpec(
            _str_of(d["name"]), _str_of(d["type"]), _str_of(d["parent"]), _str_of(d["child"]), _nums(d["xyz"], 3),
            _nums(d["rpy"], 3), _nums(d["axis"], 3),
            None if lim is None else Limits(*(_opt_num(lim[k]) for k in ("lower", "upper", "effort", "velocity"))),
            None if mim is None else Mimic(_str_of(mim["joint"]), _num_of(mim["multiplier"]), _num_of(mim["offset"]),
                                           tuple(_num_of(x) for x in mim.get("polynomial", []))),
            _strs(d["extra"]), tuple(_num_of(x) for x in d["armature"]),
            friction=None if d["friction"] is None else _nums(d["friction"], 2)))
    return RobotDescription(_str_of(data["name"]), links, tuple(joints), source=source, extra=_strs(data["extra"]))


def _strs(x) -> tuple[str, ...]:
    if not isinstance(x, list):
        raise ValueError("expected a list of strings")
    return tuple(_str_of(v) for v in x)
