"""The robot description shared by the URDF and YAML formats: links and joints as written.

A description is what a file says, checked for consistency; :mod:`coriolis_cli.model.tree`
turns it into the kinematic tree the engine runs on (fixed joints merged, bodies ordered).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import ModelError
from .geometry import inertia_from_6, rpy_to_matrix

MOVABLE_TYPES = ("revolute", "continuous", "prismatic")
SUPPORTED_TYPES = MOVABLE_TYPES + ("fixed",)

# Mass below which a link counts as massless when we look for joints that move nothing.
MASS_EPS = 1e-12


@dataclass(frozen=True)
class Inertial:
    """Inertial block of a link, as in URDF: COM frame (xyz, rpy) and inertia about the COM."""

    mass: float
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    # ixx, ixy, ixz, iyy, iyz, izz in the COM frame
    inertia: tuple[float, float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    def com_and_inertia(self) -> tuple[np.ndarray, np.ndarray]:
        """COM position and rotational inertia about the COM, both in the link frame."""
        R = rpy_to_matrix(self.rpy)
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
    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class LinkSpec:
    name: str
    inertial: Inertial | None = None


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


@dataclass(frozen=True)
class RobotDescription:
    name: str
    links: tuple[LinkSpec, ...]
    joints: tuple[JointSpec, ...]
    source: str = field(default="", compare=False)

    def link(self, name: str) -> LinkSpec:
        for link in self.links:
            if link.name == name:
                return link
        raise KeyError(name)


def _finite(values, what: str) -> None:
    for v in values:
        if v is None or not math.isfinite(float(v)):
            raise ModelError(f"{what} is not a finite number ({v})")


def _check_inertial(link: LinkSpec) -> None:
    inertial = link.inertial
    if inertial is None:
        return
    where = f"link '{link.name}'"
    m = inertial.mass
    if m is None or not math.isfinite(float(m)):
        raise ModelError(f"{where}: mass is not a finite number ({m})")
    if m < 0:
        raise ModelError(f"{where}: negative mass {m}")
    _finite(inertial.xyz, f"{where}: inertial origin")
    _finite(inertial.rpy, f"{where}: inertial rpy")
    _finite(inertial.inertia, f"{where}: inertia")
    Ic = inertia_from_6(*inertial.inertia)
    eig = np.linalg.eigvalsh(Ic)
    scale = max(1e-12, float(np.max(np.abs(eig))))
    if eig[0] < -1e-9 * scale:
        raise ModelError(
            f"{where}: inertia matrix is not positive semi-definite (eigenvalues {np.round(eig, 6).tolist()})"
        )
    a, b, c = sorted(float(e) for e in eig)
    if a + b < c - 1e-6 * scale:
        raise ModelError(
            f"{where}: principal moments {a:.6g}, {b:.6g}, {c:.6g} violate the triangle inequality "
            "(no rigid body has them)"
        )


def validate(desc: RobotDescription) -> RobotDescription:
    """Check a description and return it with normalized joint axes.

    Raises :class:`ModelError` naming the first problem found.
    """
    if not desc.links:
        raise ModelError("the robot has no links")
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
    for j in desc.joints:
        if not j.name:
            raise ModelError("a joint has no name")
        if j.name in joint_names:
            raise ModelError(f"joint '{j.name}' is defined twice")
        joint_names.add(j.name)
        if j.type not in SUPPORTED_TYPES:
            raise ModelError(
                f"joint '{j.name}': type '{j.type}' is not supported (use one of {', '.join(SUPPORTED_TYPES)}; "
                "a floating base is added with --floating-base)"
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
        axis = np.asarray(j.axis, dtype=float)
        if j.type in MOVABLE_TYPES:
            _finite(axis, f"joint '{j.name}': axis")
            norm = float(np.linalg.norm(axis))
            if norm < 1e-9:
                raise ModelError(f"joint '{j.name}': axis is zero")
            j = replace(j, axis=tuple(float(a) for a in axis / norm))
        if j.limits is not None and j.limits.lower is not None and j.limits.upper is not None:
            _finite((j.limits.lower, j.limits.upper), f"joint '{j.name}': limits")
            if j.limits.lower > j.limits.upper:
                raise ModelError(
                    f"joint '{j.name}': lower limit {j.limits.lower} is above upper limit {j.limits.upper}"
                )
        joints.append(j)
    for j in joints:
        if j.mimic is not None and j.mimic.joint not in joint_names:
            raise ModelError(f"joint '{j.name}' mimics joint '{j.mimic.joint}', which does not exist")
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
    return replace(desc, joints=tuple(joints))


def description_to_dict(desc: RobotDescription) -> dict:
    """Plain data (floats kept exactly) for caching parsed descriptions."""
    return {
        "name": desc.name,
        "links": [
            {"name": link.name, "inertial": None if link.inertial is None else
             {"mass": link.inertial.mass, "xyz": list(link.inertial.xyz), "rpy": list(link.inertial.rpy),
              "inertia": list(link.inertial.inertia)}}
            for link in desc.links
        ],
        "joints": [
            {"name": j.name, "type": j.type, "parent": j.parent, "child": j.child, "xyz": list(j.xyz), "rpy": list(j.rpy),
             "axis": list(j.axis), "limits": None if j.limits is None else vars(j.limits).copy(),
             "mimic": None if j.mimic is None else vars(j.mimic).copy()}
            for j in desc.joints
        ],
    }


def description_from_dict(data: dict, source: str = "") -> RobotDescription:
    links = tuple(
        LinkSpec(d["name"], None if d["inertial"] is None else Inertial(
            d["inertial"]["mass"], tuple(d["inertial"]["xyz"]), tuple(d["inertial"]["rpy"]), tuple(d["inertial"]["inertia"])))
        for d in data["links"]
    )
    joints = tuple(
        JointSpec(d["name"], d["type"], d["parent"], d["child"], tuple(d["xyz"]), tuple(d["rpy"]), tuple(d["axis"]),
                  None if d["limits"] is None else Limits(**d["limits"]), None if d["mimic"] is None else Mimic(**d["mimic"]))
        for d in data["joints"]
    )
    return RobotDescription(data["name"], links, joints, source=source)
