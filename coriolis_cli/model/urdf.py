"""URDF reading (through yourdfpy, meshes never loaded) and writing.

yourdfpy is used rather than urdfpy: urdfpy's last release (0.0.22, 2020) pins networkx==2.2,
which fails to import on Python 3.10+, and calls ``np.float``, removed in NumPy 1.24.
"""

from __future__ import annotations

import copy
import io
import logging
import os
import xml.etree.ElementTree as ET

import numpy as np

from ..errors import ModelError
from .description import Inertial, JointSpec, Limits, LinkSpec, Mimic, RobotDescription
from .geometry import matrix_to_rpy
from .numbers import parse_number

_log = logging.getLogger("yourdfpy")


def _origin(T) -> tuple[tuple[float, ...], tuple[float, ...]]:
    if T is None:
        return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    T = np.asarray(T, dtype=float)
    return tuple(float(x) for x in T[:3, 3]), tuple(float(x) for x in matrix_to_rpy(T[:3, :3]))


def _xml_origin(el, source: str):
    if el is None:
        return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    out = []
    for key in ("xyz", "rpy"):
        text = el.get(key, "0 0 0")
        try:
            values = tuple(parse_number(v) for v in text.split())
        except ValueError:
            raise ModelError(f"{source}: origin {key}=\"{text}\" is not three numbers") from None
        if len(values) != 3:
            raise ModelError(f"{source}: origin {key}=\"{text}\" is not three numbers")
        out.append(values)
    return out[0], out[1]


# What dynamics reads from a URDF; everything else (visual, collision, material, transmission,
# gazebo, text) is dropped before the reader sees it.
_ESSENTIAL = {
    "robot": ("link", "joint"),
    "link": ("inertial",),
    "inertial": ("origin", "mass", "inertia"),
    "joint": ("parent", "child", "origin", "axis", "limit", "mimic", "dynamics"),
}


# numeric attributes of the essential elements: name -> how many numbers
_NUMERIC = {
    "origin": {"xyz": 3, "rpy": 3}, "mass": {"value": 1}, "axis": {"xyz": 3},
    "inertia": {k: 1 for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")},
    "limit": {k: 1 for k in ("lower", "upper", "effort", "velocity")},
    "mimic": {"multiplier": 1, "offset": 1}, "dynamics": {"damping": 1, "friction": 1},
}


def _essential(el: ET.Element, source: str, owner: str = "") -> ET.Element:
    """The element with only what dynamics reads; numbers checked as URDF writes them."""
    out = ET.Element(el.tag, dict(el.attrib))
    if el.tag in ("link", "joint"):
        owner = f"{el.tag} '{el.get('name')}'"
    for attr, count in _NUMERIC.get(el.tag, {}).items():
        text = el.get(attr)
        if text is None:
            continue
        parts = text.split()
        try:
            if len(parts) != count:
                raise ValueError(f"'{text}' is not {count} number{'s' if count > 1 else ''}")
            for p in parts:
                parse_number(p)
        except ValueError as e:
            raise ModelError(f"{source}: {owner} <{el.tag} {attr}>: {e}") from None
    for child in el:
        if isinstance(child.tag, str) and child.tag in _ESSENTIAL.get(el.tag, ()):
            out.append(_essential(child, source, owner))
    return out


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _unnamed(elements: list, k: int) -> str:
    """The k-th of ``elements`` (all <link> or all <joint>), which has no name, as a reader finds
    it in the file: by its place and what it says (a joint's type and links, a link's neighbours)."""
    el = elements[k]
    known = []
    if el.tag == "joint":
        known += [el.get("type")] if el.get("type") else []
        for role in ("parent", "child"):
            ref = el.find(role)
            if ref is not None and ref.get("link"):
                known.append(f"{role} link '{ref.get('link')}'")
    else:
        before = next((e.get("name") for e in reversed(elements[:k]) if e.get("name")), None)
        after = next((e.get("name") for e in elements[k + 1:] if e.get("name")), None)
        known += [f"after link '{before}'"] if before else [f"before link '{after}'"] if after else []
    described = f" ({', '.join(known)})" if known else ""
    return f"the {_ordinal(k + 1)} <{el.tag}>{described} has no name"


_INERTIA_ATTRIBUTES = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


def _check_required(root: ET.Element, source: str) -> None:
    """What urdfdom (and so ROS and Pinocchio) refuses a file without, refused here by the element
    at fault: names of links and joints, a joint's links, and an <inertial>'s mass and six moments
    (yourdfpy reads a missing one as 0, and an <inertial> without <inertia> as a point mass)."""
    for tag in ("link", "joint"):
        elements = root.findall(tag)
        for k, el in enumerate(elements):
            if not el.get("name"):
                raise ModelError(f"{source}: {_unnamed(elements, k)}")
    for el in root.findall("joint"):
        for role in ("parent", "child"):
            ref = el.find(role)
            if ref is None or not ref.get("link"):
                raise ModelError(f"{source}: joint '{el.get('name')}' has no <{role} link=\"...\"/>")
    for el in root.findall("link"):
        inertial = el.find("inertial")
        if inertial is None:
            continue
        where = f"{source}: link '{el.get('name')}'"
        mass, inertia = inertial.find("mass"), inertial.find("inertia")
        if mass is None or mass.get("value") is None:
            raise ModelError(f"{where}: its <inertial> has no <mass value=\"...\"/>, which URDF requires (urdfdom "
                             "refuses the file); give the link's mass, or remove the <inertial> of a massless link")
        if inertia is None:
            raise ModelError(f"{where}: its <inertial> has a <mass> but no <inertia>, which URDF requires (urdfdom "
                             "refuses the file); for a point mass write <inertia ixx=\"0\" ixy=\"0\" ixz=\"0\" "
                             "iyy=\"0\" iyz=\"0\" izz=\"0\"/>")
        missing = [a for a in _INERTIA_ATTRIBUTES if inertia.get(a) is None]
        if missing:
            raise ModelError(f"{where}: its <inertia> has no {', '.join(missing)}; URDF requires all six of "
                             f"{', '.join(_INERTIA_ATTRIBUTES)} (urdfdom refuses the file), 0 where a product of "
                             "inertia is zero")


def _opt(x):
    return None if x is None else float(x)


def parse_urdf(text: str, source: str = "<string>") -> RobotDescription:
    """Parse URDF text into a description. Mesh references are never resolved."""
    import yourdfpy  # imported lazily: it pulls in trimesh

    text = text.lstrip("\ufeff \t\r\n")  # urdfdom accepts blank lines or a BOM before <?xml
    if not text.strip():
        raise ModelError(f"{source}: the file is empty")
    from .xacro_format import needs_expanding_tree, unexpanded_message

    try:
        root = ET.fromstring(text)  # expat: no limit on text nodes, unlike libxml2's 10 MB
    except ET.ParseError as e:
        if "unbound prefix" in str(e) and "xacro:" in text:
            raise ModelError(unexpanded_message(source)) from None
        raise ModelError(f"{source}: malformed XML ({e})") from None
    if root.tag != "robot":
        raise ModelError(f"{source}: not a URDF file (root element is <{root.tag}>, expected <robot>)")
    from .limits import MAX_XML_DEPTH, xml_depth

    depth = xml_depth(root)
    if depth > MAX_XML_DEPTH:
        raise ModelError(f"{source}: its elements nest {depth} deep, more than the {MAX_XML_DEPTH} a robot file can "
                         "need (a URDF nests a few levels); flatten the element that nests so deep")
    if needs_expanding_tree(root):
        raise ModelError(unexpanded_message(source))
    if not root.get("name"):
        root.set("name", os.path.splitext(os.path.basename(source))[0] or "robot")
    _check_required(root, source)
    essential = _essential(root, source)
    # yourdfpy reads what dynamics needs and nothing else: geometry (whatever its tags), materials,
    # plugins and text never reach it. Silence its mesh warnings.
    previous = _log.level
    _log.setLevel(logging.ERROR)
    try:
        urdf = yourdfpy.URDF.load(
            io.BytesIO(ET.tostring(essential)),
            build_scene_graph=False,
            build_collision_scene_graph=False,
            load_meshes=False,
            load_collision_meshes=False,
        )
    except Exception as e:  # yourdfpy raises many kinds; all mean the file is not usable
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ModelError(f"{source}: cannot read URDF ({msg})") from None
    finally:
        _log.setLevel(previous)
    if (len(urdf.robot.links), len(urdf.robot.joints)) != (len(essential.findall("link")), len(essential.findall("joint"))):
        raise ModelError(f"{source}: the URDF reader returned {len(urdf.robot.links)} links and {len(urdf.robot.joints)} "
                         f"joints of {len(essential.findall('link'))} and {len(essential.findall('joint'))}; refusing a "
                         "partial robot")
    robot = urdf.robot
    # Origins as written (yourdfpy turns rpy into a matrix; reading the text keeps round trips exact)
    joint_origin = {el.get("name"): _xml_origin(el.find("origin"), source) for el in root.findall("joint")}
    inertial_origin = {}
    for el in root.findall("link"):
        inertial_el = el.find("inertial")
        if inertial_el is not None:
            inertial_origin[el.get("name")] = _xml_origin(inertial_el.find("origin"), source)
    extras = _extras(root)
    links = []
    for link in robot.links:
        inertial = None
        if link.inertial is not None:
            xyz, rpy = inertial_origin.get(link.name) or _origin(link.inertial.origin)
            I = np.zeros((3, 3)) if link.inertial.inertia is None else np.asarray(link.inertial.inertia, float)
            mass = 0.0 if link.inertial.mass is None else float(link.inertial.mass)
            inertial = Inertial(
                mass=mass,
                xyz=xyz,
                rpy=rpy,
                inertia=(I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2]),
            )
        links.append(LinkSpec(name=link.name, inertial=inertial, extra=extras.get(("link", link.name), ())))
    without_axis = {el.get("name") for el in root.findall("joint") if el.find("axis") is None}
    joints = []
    for j in robot.joints:
        xyz, rpy = joint_origin.get(j.name) or _origin(j.origin)
        if j.name in without_axis:  # URDF's default axis is x; a planar joint's plane is then still xy
            axis = (0.0, 0.0, 1.0) if j.type == "planar" else (1.0, 0.0, 0.0)
        else:
            axis = tuple(float(a) for a in np.asarray(j.axis).ravel()[:3])
        limits = None
        if j.limit is not None:
            limits = Limits(_opt(j.limit.lower), _opt(j.limit.upper), _opt(j.limit.effort), _opt(j.limit.velocity))
        mimic = None
        if j.mimic is not None:
            if not j.mimic.joint:
                raise ModelError(f"joint '{j.name}': its <mimic> names no joint (the 'joint' attribute is missing); name the joint it follows "
                                 "(<mimic joint=\"...\" multiplier=\"1\" offset=\"0\"/>)")
            mimic = Mimic(
                joint=j.mimic.joint,
                multiplier=1.0 if j.mimic.multiplier is None else float(j.mimic.multiplier),
                offset=0.0 if j.mimic.offset is None else float(j.mimic.offset),
            )
        if j.type is None:
            raise ModelError(f"{source}: joint '{j.name}' has no type")
        friction = None
        if j.dynamics is not None and (j.dynamics.damping or j.dynamics.friction):
            friction = (float(j.dynamics.damping or 0.0), float(j.dynamics.friction or 0.0))
            if min(friction) < 0 or not all(np.isfinite(friction)):
                raise ModelError(f"{source}: joint '{j.name}' <dynamics damping friction>: friction is finite and "
                                 f"not negative, got {friction[0]:g} and {friction[1]:g}")
        joints.append(
            JointSpec(
                name=j.name,
                type=j.type,
                parent=j.parent,
                child=j.child,
                xyz=xyz,
                rpy=rpy,
                axis=axis,
                limits=limits,
                mimic=mimic,
                extra=extras.get(("joint", j.name), ()),
                friction=friction,
            )
        )
    name = root.get("name")
    return RobotDescription(name=name, links=tuple(links), joints=tuple(joints), source=source,
                            extra=extras.get(("robot", None), ()))


# the children of a link, a joint and the robot that the dynamics reads; every other is carried
READ = {"link": ("inertial",), "joint": ("origin", "parent", "child", "axis", "limit", "mimic", "dynamics"),
        "robot": ("link", "joint")}


def _xml(el) -> str:
    el = copy.deepcopy(el)
    el.tail = None
    ET.indent(el, space="  ")
    return ET.tostring(el, encoding="unicode")


def _extras(root) -> dict:
    """{(kind, name): XML texts of the children the dynamics does not read}, kind link, joint or
    robot (name None): visuals, collisions, materials, transmissions, plugins, as written."""
    out: dict = {}
    top = [_xml(el) for el in root if isinstance(el.tag, str) and el.tag not in READ["robot"]]
    if top:
        out[("robot", None)] = tuple(top)
    for kind in ("link", "joint"):
        for el in root.findall(kind):
            kept = tuple(_xml(c) for c in el if isinstance(c.tag, str) and c.tag not in READ[kind])
            if kept:
                out[(kind, el.get("name"))] = kept
    return out


def _append_xml(parent, texts, where: str) -> None:
    for text in texts:
        try:
            parent.append(ET.fromstring(text))
        except ET.ParseError as e:
            raise ModelError(f"{where}: an element carried from the source is not XML ({e})") from None


def _fmt(values) -> str:
    return " ".join(repr(float(v)) for v in values)


def to_urdf(desc: RobotDescription) -> str:
    """Serialize a description to URDF text (full float precision; the elements the dynamics does
    not read, such as geometry, as they were read)."""
    if desc.loops:
        raise ModelError(f"URDF cannot hold closed loops ({len(desc.loops)} in '{desc.name}'); convert to YAML instead")
    spherical = [j.name for j in desc.joints if j.type == "spherical"]
    if spherical:  # urdfdom knows no such type: what we wrote could not be read back by ROS tools
        raise ModelError(f"URDF has no spherical joint ('{spherical[0]}'{f' and {len(spherical) - 1} more' if len(spherical) > 1 else ''}); "
                         "convert to YAML, or write three revolute joints")
    for kind, names in (("robot", [desc.name]), ("link", [link.name for link in desc.links]),
                        ("joint", [j.name for j in desc.joints])):
        for name in names:
            if any(ord(c) < 32 or 0xFFFE <= ord(c) <= 0xFFFF or 0xD800 <= ord(c) <= 0xDFFF for c in name):
                raise ModelError(f"{kind} name {name!r} holds a control character, which XML cannot carry; rename it")
    robot = ET.Element("robot", name=desc.name)
    _append_xml(robot, desc.extra, f"robot '{desc.name}'")
    for link in desc.links:
        el = ET.SubElement(robot, "link", name=link.name)
        if link.inertial is not None:
            inn = link.inertial
            ie = ET.SubElement(el, "inertial")
            ET.SubElement(ie, "origin", xyz=_fmt(inn.xyz), rpy=_fmt(inn.rpy))
            ET.SubElement(ie, "mass", value=repr(float(inn.mass)))
            ixx, ixy, ixz, iyy, iyz, izz = (repr(float(v)) for v in inn.inertia)
            ET.SubElement(ie, "inertia", ixx=ixx, ixy=ixy, ixz=ixz, iyy=iyy, iyz=iyz, izz=izz)
        _append_xml(el, link.extra, f"link '{link.name}'")
    for j in desc.joints:
        el = ET.SubElement(robot, "joint", name=j.name, type=j.type)
        ET.SubElement(el, "parent", link=j.parent)
        ET.SubElement(el, "child", link=j.child)
        ET.SubElement(el, "origin", xyz=_fmt(j.xyz), rpy=_fmt(j.rpy))
        if j.type != "fixed":
            ET.SubElement(el, "axis", xyz=_fmt(j.axis))
        if j.limits is not None:
            attrs = {k: repr(float(v)) for k, v in vars(j.limits).items() if v is not None}
            ET.SubElement(el, "limit", **attrs)
        if j.mimic is not None:
            if j.mimic.polynomial and any(j.mimic.polynomial[2:]):
                degree = max(k for k, c in enumerate(j.mimic.polynomial) if c)
                raise ModelError(f"joint '{j.name}' follows '{j.mimic.joint}' by a polynomial of degree {degree}, "
                                 "which URDF's <mimic> cannot hold; convert to YAML")
            c = j.mimic.coefficients + (0.0, 0.0)
            ET.SubElement(el, "mimic", joint=j.mimic.joint, multiplier=repr(float(c[1])), offset=repr(float(c[0])))
        if j.friction is not None:
            ET.SubElement(el, "dynamics", damping=repr(float(j.friction[0])), friction=repr(float(j.friction[1])))
        _append_xml(el, j.extra, f"joint '{j.name}'")
    ET.indent(robot, space="  ")
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"
