"""The YAML robot format: the same links and joints as URDF, in a form people can write by hand.

    name: planar_2link
    links:
      - name: base                      # no mass: a link without inertia
      - name: upper_arm
        mass: 1.0                       # kg
        com: [0.5, 0.0, 0.0]            # COM in the link frame (m)
        com_rpy: [0.0, 0.0, 0.0]        # optional: orientation of the inertia axes
        inertia: [0.01, 0, 0, 0.09, 0, 0.09]   # ixx ixy ixz iyy iyz izz about the COM (kg m^2)
    joints:
      - name: shoulder
        type: revolute                  # revolute | continuous | prismatic | fixed
        parent: base
        child: upper_arm
        xyz: [0, 0, 0]                  # joint frame in the parent link frame
        rpy: [0, 0, 0]
        axis: [0, 0, 1]
        limits: {lower: -3.1416, upper: 3.1416, effort: 50, velocity: 3}
        mimic: {joint: other_joint, multiplier: 1.0, offset: 0.0}   # optional
    # optional, closed kinematic loops (engine.loops; robots/fourbar.yaml in full):
    # loops:
    #   - {name: pin, type: revolute, parent: coupler, child: rocker, xyz: [0.9, 0, 0], rpy: [0, 0, 0],
    #      child_xyz: [0.8, 0, 0], child_rpy: [0, 0, 0], axis: [0, 0, 1]}   # revolute | spherical | fixed
    # independent: [crank_joint]        # the minimal coordinates; other joints of a loop are solved for
    # guess: {coupler_joint: 1.0, rocker_joint: 1.9}   # optional, default 0: the assembly branch
    # gravity: [0, 0, -9.81]            # optional, m/s² in the world frame (MJCF's <option gravity>)
"""

from __future__ import annotations

import math

import yaml

from ..errors import ModelError
from .description import STANDARD_GRAVITY, Inertial, JointSpec, Limits, LinkSpec, LoopClosure, Mimic, RobotDescription
from .limits import load_yaml
from .numbers import as_float, parse_number


TOP_LEVEL_KEYS = ("name", "links", "joints", "loops", "independent", "guess", "gravity", "urdf")
LOOP_KEYS = ("name", "type", "parent", "child", "xyz", "rpy", "child_xyz", "child_rpy", "axis")


def _num(value, where: str) -> float:
    if isinstance(value, str):  # YAML 1.1 reads 1e-3 (no decimal point) as a string
        try:
            value = parse_number(value)
        except ValueError:
            raise ModelError(f"{where} must be a number, got {value[:40]!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ModelError(f"{where} must be a number, got {str(value)[:40]!r}")
    try:
        return as_float(value)
    except ValueError as e:
        raise ModelError(f"{where}: {e}") from None


def _vec(value, n: int, where: str) -> tuple[float, ...]:
    if not isinstance(value, (list, tuple)) or len(value) != n:
        raise ModelError(f"{where} must be a list of {n} numbers, got {value!r}")
    return tuple(_num(v, f"{where}[{i}]") for i, v in enumerate(value))


def _str(value, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ModelError(f"{where} must be a non-empty string, got {value!r}")
    return value


def _mapping(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise ModelError(f"{where} must be a mapping, got {type(value).__name__}")
    return value


def _where(error) -> str:
    """' at line L, column C: what (while ...)' of a YAML syntax error, or its first line."""
    mark, problem, context = (getattr(error, x, None) for x in ("problem_mark", "problem", "context"))
    if mark is None or not problem:
        first = str(error).splitlines()[0] if str(error) else "syntax error"
        return f" ({first})"
    return f" at line {mark.line + 1}, column {mark.column + 1}: {problem}" + (f" ({context})" if context else "")


def parse_yaml(text: str, source: str = "<string>") -> RobotDescription:
    if not text.strip():
        raise ModelError(f"{source}: the file is empty")
    try:
        data = load_yaml(text)
    except yaml.YAMLError as e:
        raise ModelError(f"{source}: malformed YAML{_where(e)}") from None
    except ValueError as e:
        raise ModelError(f"{source}: refused: {e}") from None
    data = _mapping(data, f"{source}: the document")
    for key in ("links", "joints"):
        if key not in data:
            raise ModelError(f"{source}: missing key '{key}'")
    unknown = [str(k) for k in data if k not in TOP_LEVEL_KEYS]
    if unknown:  # a section we do not read must not be ignored silently
        raise ModelError(f"{source}: unknown top-level key{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(repr(k) for k in unknown[:5])} (known: {', '.join(TOP_LEVEL_KEYS)})")
    links_in = data["links"]
    joints_in = data["joints"] or []
    if not isinstance(links_in, list) or not isinstance(joints_in, list):
        raise ModelError(f"{source}: 'links' and 'joints' must be lists")
    links = []
    for i, raw in enumerate(links_in):
        where = f"{source}: links[{i}]"
        raw = _mapping(raw, where)
        name = _str(raw.get("name"), f"{where}.name")
        inertial = None
        if "mass" in raw:
            inertial = Inertial(
                mass=_num(raw["mass"], f"{where}.mass"),
                xyz=_vec(raw.get("com", [0, 0, 0]), 3, f"{where}.com"),
                rpy=_vec(raw.get("com_rpy", [0, 0, 0]), 3, f"{where}.com_rpy"),
                inertia=_vec(raw.get("inertia", [0] * 6), 6, f"{where}.inertia"),
            )
        elif any(k in raw for k in ("com", "inertia", "com_rpy")):
            raise ModelError(f"{where}: has com/inertia but no mass")
        links.append(LinkSpec(name=name, inertial=inertial, extra=_urdf(raw.get("urdf"), f"{where}.urdf", "link")))
    joints = []
    for i, raw in enumerate(joints_in):
        where = f"{source}: joints[{i}]"
        raw = _mapping(raw, where)
        limits = None
        if raw.get("limits") is not None:
            lim = _mapping(raw["limits"], f"{where}.limits")
            limits = Limits(
                **{
                    k: (None if lim.get(k) is None else _num(lim[k], f"{where}.limits.{k}"))
                    for k in ("lower", "upper", "effort", "velocity")
                }
            )
        mimic = None
        if raw.get("mimic") is not None:
            mm = _mapping(raw["mimic"], f"{where}.mimic")
            mimic = Mimic(
                joint=_str(mm.get("joint"), f"{where}.mimic.joint"),
                multiplier=_num(mm.get("multiplier", 1.0), f"{where}.mimic.multiplier"),
                offset=_num(mm.get("offset", 0.0), f"{where}.mimic.offset"),
                polynomial=tuple(_num(c, f"{where}.mimic.polynomial") for c in (mm.get("polynomial") or [])),
            )
        joints.append(
            JointSpec(
                name=_str(raw.get("name"), f"{where}.name"),
                type=_str(raw.get("type"), f"{where}.type"),
                parent=_str(raw.get("parent"), f"{where}.parent"),
                child=_str(raw.get("child"), f"{where}.child"),
                xyz=_vec(raw.get("xyz", [0, 0, 0]), 3, f"{where}.xyz"),
                rpy=_vec(raw.get("rpy", [0, 0, 0]), 3, f"{where}.rpy"),
                # a planar joint's plane is its frame's xy plane: its axis is z unless written
                axis=_vec(raw.get("axis", [0, 0, 1] if raw.get("type") == "planar" else [1, 0, 0]), 3, f"{where}.axis"),
                limits=limits,
                mimic=mimic,
                extra=_urdf(raw.get("urdf"), f"{where}.urdf", "joint"),
                armature=_armature(raw.get("armature"), f"{where}.armature"),
                friction=_friction(raw.get("friction"), f"{where}.friction"),
            )
        )
    name = data.get("name", "robot")
    loops, independent, guess = _loops(data, source)
    gravity = _vec(data["gravity"], 3, f"{source}: gravity") if data.get("gravity") is not None else None
    return RobotDescription(name=str(name), links=tuple(links), joints=tuple(joints), source=source, loops=loops,
                            independent=independent, guess=guess, extra=_urdf(data.get("urdf"), f"{source}: urdf"),
                            gravity=gravity)


def _friction(value, where: str) -> tuple[float, float] | None:
    """``friction: {viscous: b, coulomb: c}`` of a 1-DoF joint, each ≥ 0 (either may be left out)."""
    if value is None:
        return None
    raw = _mapping(value, where)
    unknown = set(raw) - {"viscous", "coulomb"}
    if unknown:
        raise ModelError(f"{where}: unknown key '{sorted(unknown)[0]}' (viscous, coulomb)")
    out = tuple(_num(raw.get(k, 0.0), f"{where}.{k}") for k in ("viscous", "coulomb"))
    if min(out) < 0:
        raise ModelError(f"{where}: friction is not negative, got {out[0]:g} and {out[1]:g}")
    return out if any(out) else None


def _armature(value, where: str) -> tuple[float, ...]:
    """``armature:`` a number (a 1-DoF joint) or one per DoF, ≥ 0 (kg m² or kg)."""
    if value is None:
        return ()
    values = value if isinstance(value, list) else [value]
    out = tuple(_num(v, where) for v in values)
    if any(not (x >= 0 and math.isfinite(x)) for x in out):
        raise ModelError(f"{where} must be finite and not negative")
    return out


def _urdf(value, where: str, scope: str = "robot") -> tuple[str, ...]:
    """``urdf:``, URDF elements the dynamics does not read (geometry, materials, ...), carried to
    URDF by convert: a list of XML texts, each one element. Elements the dynamics reads are
    refused: an <inertial> of a link's extras would change M in the URDF convert writes."""
    import xml.etree.ElementTree as ET

    from .limits import MAX_XML_DEPTH, xml_depth
    from .urdf import READ  # what the dynamics reads: an extra that held one would change it in the URDF

    if value is None:
        return ()
    if not isinstance(value, list):
        raise ModelError(f"{where} must be a list of URDF elements (XML text)")
    out = []
    for k, text in enumerate(value):
        if not isinstance(text, str):
            raise ModelError(f"{where}[{k}] must be XML text")
        try:
            element = ET.fromstring(text)
        except ET.ParseError as e:
            raise ModelError(f"{where}[{k}] is not one XML element ({e})") from None
        if element.tag in READ[scope]:
            raise ModelError(f"{where}[{k}] is a <{element.tag}>, which the dynamics reads: write it as YAML "
                             f"({'the link' if scope == 'link' else 'the joint' if scope == 'joint' else 'links: and joints:'}), "
                             "not as a URDF extra")
        depth = xml_depth(element)
        if depth > MAX_XML_DEPTH:
            raise ModelError(f"{where}[{k}] nests {depth} deep, more than the {MAX_XML_DEPTH} a robot file can need")
        out.append(text)
    return tuple(out)


def _loops(data: dict, source: str):
    """The ``loops``, ``independent`` and ``guess`` sections (all optional)."""
    raw_loops = data.get("loops") or []
    if not isinstance(raw_loops, list):
        raise ModelError(f"{source}: 'loops' must be a list")
    loops = []
    for i, raw in enumerate(raw_loops):
        where = f"{source}: loops[{i}]"
        raw = _mapping(raw, where)
        unknown = [str(k) for k in raw if k not in LOOP_KEYS]
        if unknown:
            raise ModelError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(LOOP_KEYS)})")
        loops.append(LoopClosure(
            name=_str(raw.get("name"), f"{where}.name"),
            type=_str(raw.get("type"), f"{where}.type"),
            parent=_str(raw.get("parent"), f"{where}.parent"),
            child=_str(raw.get("child"), f"{where}.child"),
            **{k: _vec(raw.get(k, [0, 0, 0]), 3, f"{where}.{k}") for k in ("xyz", "rpy", "child_xyz", "child_rpy")},
            axis=_vec(raw.get("axis", [0, 0, 1]), 3, f"{where}.axis"),
        ))
    raw_ind = data.get("independent") or []
    if not isinstance(raw_ind, list):
        raise ModelError(f"{source}: 'independent' must be a list of joint names")
    independent = tuple(_str(v, f"{source}: independent[{i}]") for i, v in enumerate(raw_ind))
    raw_guess = _mapping(data.get("guess") or {}, f"{source}: guess")
    guess = tuple((_str(k, f"{source}: guess key"),
                   _vec(v, 4, f"{source}: guess.{k}") if isinstance(v, list) else _num(v, f"{source}: guess.{k}"))
                  for k, v in raw_guess.items())  # a number, or a spherical joint's quaternion (x, y, z, w)
    return tuple(loops), independent, guess


def _clean(values):
    return [float(v) if math.isfinite(v) else v for v in values]


def to_yaml(desc: RobotDescription) -> str:
    links = []
    for link in desc.links:
        d: dict = {"name": link.name}
        if link.inertial is not None:
            d["mass"] = float(link.inertial.mass)
            d["com"] = _clean(link.inertial.xyz)
            if any(link.inertial.rpy):
                d["com_rpy"] = _clean(link.inertial.rpy)
            d["inertia"] = _clean(link.inertial.inertia)
        if link.extra:
            d["urdf"] = list(link.extra)
        links.append(d)
    joints = []
    for j in desc.joints:
        d = {"name": j.name, "type": j.type, "parent": j.parent, "child": j.child,
             "xyz": _clean(j.xyz), "rpy": _clean(j.rpy)}
        if j.type != "fixed":
            d["axis"] = _clean(j.axis)
        if j.limits is not None:
            d["limits"] = {k: v for k, v in vars(j.limits).items() if v is not None}
        if j.mimic is not None:
            d["mimic"] = {"joint": j.mimic.joint, "multiplier": j.mimic.multiplier, "offset": j.mimic.offset}
            if j.mimic.polynomial:
                d["mimic"] = {"joint": j.mimic.joint, "polynomial": [float(c) for c in j.mimic.polynomial]}
        if any(j.armature):
            d["armature"] = [float(x) for x in j.armature] if len(j.armature) > 1 else float(j.armature[0])
        if j.friction is not None:
            d["friction"] = {"viscous": float(j.friction[0]), "coulomb": float(j.friction[1])}
        if j.extra:
            d["urdf"] = list(j.extra)
        joints.append(d)
    doc = {"name": desc.name, "links": links, "joints": joints}
    if desc.gravity is not None and tuple(desc.gravity) != STANDARD_GRAVITY:
        doc["gravity"] = _clean(desc.gravity)  # m/s² in the world frame (MJCF's <option gravity>)
    if desc.extra:
        doc["urdf"] = list(desc.extra)
    if desc.loops:
        doc["loops"] = [{"name": c.name, "type": c.type, "parent": c.parent, "child": c.child, "xyz": _clean(c.xyz),
                         "rpy": _clean(c.rpy), "child_xyz": _clean(c.child_xyz), "child_rpy": _clean(c.child_rpy),
                         "axis": _clean(c.axis)} for c in desc.loops]
        doc["independent"] = list(desc.independent)
        if desc.guess:
            doc["guess"] = {k: [float(x) for x in v] if isinstance(v, tuple) else float(v) for k, v in desc.guess}
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=None, allow_unicode=True)


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (carried URDF elements) as literal blocks, readable and exact."""


def _str_representer(dumper, text):
    style = "|" if "\n" in text and not text.endswith(" ") and "\t" not in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _str_representer)
