"""MJCF, MuJoCo's format: the model MuJoCo compiles, read back as a description of our tree.

MuJoCo compiles the file (includes, defaults, inertias derived from geoms, ``ref``), and the
compiled model is read: bodies in MuJoCo's order (so the DoF are MuJoCo's), each body's joints
in order, masses and inertias, ``dof_armature``. Conventions (MuJoCo's documentation, "MJCF
Reference", joint and ``mjModel``):

- body frame = parent frame ∘ (body_pos, body_quat); then each joint of the body in turn, about its
  anchor ``jnt_pos`` and along ``jnt_axis``, both in the body frame: hinge and slide by
  qpos − qpos0 (``ref``), ball by the quaternion qpos (w, x, y, z). A body with several joints gets
  a massless link after each joint but the last, the joints' anchors as their origins.
- here, q = qpos − qpos0 for hinge and slide joints, a ball joint's quaternion is (x, y, z, w)
  (Pinocchio's order; :func:`mujoco_state` converts), and a free joint's velocity is [ᴮv; ᴮω] (body
  frame, Pinocchio's), where MuJoCo's qvel is [ᴬv; ᴮω] (world-frame linear velocity).
- several bodies may hang from the world (free objects): the world is the fixed root link.

What is not the dynamics of a tree (contacts, tendons, actuators, equality constraints) is left
out and said in one warning.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError, ModelWarning
from .description import Inertial, JointSpec, Limits, LinkSpec, LoopClosure, Mimic, RobotDescription, listed
from .geometry import matrix_to_rpy, quat_to_matrix, rotation_tuple

FREE, BALL, SLIDE, HINGE = 0, 1, 2, 3  # mjtJoint
EQ_CONNECT, EQ_WELD, EQ_JOINT = 0, 1, 2  # mjtEq
OBJ_SITE = 6  # mjtObj
TRN_JOINT = 0  # mjtTrn
TYPES = {FREE: "floating", BALL: "spherical", SLIDE: "prismatic", HINGE: "revolute"}


def is_mjcf(text: str) -> bool:
    """Whether XML text is MJCF (its root element <mujoco>)."""
    head = text.lstrip()[:4096]
    import re

    return re.search(r"<mujoco[\s>/]", head) is not None and "<robot" not in head.split("<mujoco")[0]


def import_mujoco():
    try:
        import mujoco
    except ImportError:
        raise ModelError("reading MJCF needs MuJoCo", hint="pip install 'coriolis-cli[mujoco]' (or pip install mujoco)") from None
    return mujoco


def _wxyz_to_matrix(qw) -> np.ndarray:
    w, x, y, z = (float(a) for a in qw)
    n = math.sqrt(w * w + x * x + y * y + z * z) or 1.0
    return quat_to_matrix((x / n, y / n, z / n, w / n))


@dataclass
class MujocoLayout:
    """How our coordinates sit in MuJoCo's: per joint, (kind, our q index, our v index, MuJoCo's
    qpos index, MuJoCo's dof index, qpos0 of hinge and slide joints)."""

    joints: list = field(default_factory=list)
    nq: int = 0
    nv: int = 0
    held: list = field(default_factory=list)  # locked joints: (qpos index, values), held in qpos
    dofs: np.ndarray | None = None  # MuJoCo's DoF that are ours (the locked ones are not)


def _replicated_bodies(path: str, text: str | None) -> int:
    """How many bodies the file's <replicate> elements make (nested counts multiplied), read
    before MuJoCo expands them: a count of 10⁹ would hang its parser."""
    import xml.etree.ElementTree as ET

    from .limits import read_bounded

    try:
        root = ET.fromstring(text if text is not None else read_bounded(path))
    except (ET.ParseError, ValueError, OSError):
        return 0  # MuJoCo says what is wrong with the file

    def count(element, factor: int) -> int:
        total = 0
        for child in element:
            if child.tag == "replicate":
                try:
                    n = int(child.get("count", "1"))
                except ValueError:
                    n = 1
                total += count(child, factor * max(n, 0))
            elif child.tag == "body":
                total += factor + count(child, factor)
            else:
                total += count(child, factor)
            if total > 10**12:
                break
        return total

    return count(root, 1)


def compile_model(path: str, text: str | None = None):
    """MuJoCo's compiled model of the file ``path`` (or of ``text``, named ``path``)."""
    mujoco = import_mujoco()
    from .limits import max_bodies

    made = _replicated_bodies(path, text)
    if made > max_bodies():
        raise ModelError(f"{path}: its <replicate> elements make {made:,} bodies, more than the {max_bodies():,} allowed "
                         "(set CORIOLIS_MAX_BODIES to raise the limit)")
    said: list[str] = []  # MuJoCo's own warnings: printed and logged to MUJOCO_LOG.TXT in the user's directory
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(said.append)
    try:
        try:
            return mujoco.MjModel.from_xml_path(path) if text is None else mujoco.MjModel.from_xml_string(text)
        except Exception as e:  # noqa: BLE001 - MuJoCo's compiler errors are the file's
            message = " ".join(str(e).split())
            if "opening file" not in message:
                raise ModelError(f"{path}: MuJoCo cannot compile it ({message})") from None
        return _compile_without_missing_assets(mujoco, path, text)
    finally:
        mujoco.set_mju_user_warning(previous)
        for message in dict.fromkeys(said):  # once each, as ours
            warnings.warn(ModelWarning(f"{path}: MuJoCo: {' '.join(message.split())}"), stacklevel=3)


def body_names(m) -> list[str]:
    """Our name of each MuJoCo body: its own, else ``body<id>``."""
    import mujoco

    return ["world"] + [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}" for b in range(1, m.nbody)]


def joint_names(m) -> list[str]:
    """Our name of each MuJoCo joint: its own, else ``<body>_joint<k>`` (an unnamed
    ``<freejoint/>``, as most Menagerie robots have), so that the two models can be matched."""
    import mujoco

    bodies = body_names(m)
    out = []
    for j in range(m.njnt):
        b = int(m.jnt_bodyid[j])
        out.append(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) or f"{bodies[b]}_joint{j - int(m.body_jntadr[b])}")
    return out


def _compile_without_missing_assets(mujoco, path: str, text: str | None):
    """The model without the meshes, textures and height fields whose files are missing (a model
    copied without its assets, or piped): the dynamics never reads them where a body's inertia is
    given. Refused, naming body and file, where a missing mesh carries inertia (a body without
    <inertial> whose inertia MuJoCo derives from its geoms)."""
    import os

    try:
        spec = mujoco.MjSpec.from_file(path) if text is None else mujoco.MjSpec.from_string(text)
    except Exception as e:  # noqa: BLE001 - the parser's errors are the file's
        raise ModelError(f"{path}: MuJoCo cannot read it ({' '.join(str(e).split())})") from None
    base = os.path.dirname(os.path.abspath(path)) if text is None else os.getcwd()

    def missing(file: str, folder: str) -> bool:
        if not file:
            return False  # inline data (vertices, a builtin texture)
        if spec.strippath:
            file = os.path.basename(file)
        return not os.path.exists(os.path.join(base, folder or "", file))

    lost_meshes = {m.name: m.file for m in spec.meshes if missing(m.file, spec.meshdir)}
    lost_textures = {t.name: t.file for t in spec.textures if missing(t.file, spec.texturedir)}
    lost_hfields = {h.name: h.file for h in spec.hfields if missing(h.file, spec.meshdir)}
    if not (lost_meshes or lost_textures or lost_hfields):
        raise ModelError(f"{path}: MuJoCo cannot open a file it needs; check the paths of its includes and assets")
    rule = spec.compiler.inertiafromgeom
    low, high = (int(x) for x in spec.compiler.inertiagrouprange)
    for geom in list(spec.geoms):
        if geom.meshname not in lost_meshes and geom.hfieldname not in lost_hfields:
            continue
        body = geom.parent
        weighs = (rule == mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_TRUE
                  or (rule == mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_AUTO and not body.explicitinertial))
        if weighs and low <= geom.group <= high and not geom.mass == 0:
            file = lost_meshes.get(geom.meshname) or lost_hfields.get(geom.hfieldname)
            raise ModelError(f"{path}: body '{body.name}' takes its inertia from mesh '{geom.meshname or geom.hfieldname}', "
                             f"whose file '{file}' is missing; put the file where the model expects it, or give the "
                             "body an <inertial>")
        spec.delete(geom)
    for material in spec.materials:
        material.textures = ["" if t in lost_textures else t for t in material.textures]
    for collection, lost in ((spec.meshes, lost_meshes), (spec.textures, lost_textures), (spec.hfields, lost_hfields)):
        for asset in list(collection):
            if asset.name in lost:
                spec.delete(asset)
    for skin in list(spec.skins):  # skins are visual only and may name a lost texture
        spec.delete(skin)
    try:
        m = spec.compile()
    except Exception as e:  # noqa: BLE001 - MuJoCo's compiler errors are the file's
        raise ModelError(f"{path}: MuJoCo cannot compile it ({' '.join(str(e).split())})") from None
    files = sorted(set(lost_meshes.values()) | set(lost_textures.values()) | set(lost_hfields.values()))
    warnings.warn(ModelWarning(f"{path}: {len(files)} asset file{'s' if len(files) > 1 else ''} missing ({listed(files, 4)}): loaded "
                               "without them, as every body whose geoms they shape has its <inertial> (the dynamics "
                               "reads no geometry)"), stacklevel=4)
    return m


def parse_mjcf(path: str, text: str | None = None) -> RobotDescription:
    """The description of the MJCF file ``path`` (or ``text``) as MuJoCo compiles it (see the
    module's docstring)."""
    mujoco = import_mujoco()
    m = compile_model(path, text)

    bodies, names = body_names(m), joint_names(m)
    couplings = {}  # follower joint id → Mimic: <equality><joint joint1 joint2 polycoef>
    for e in range(m.neq):
        j1, j2 = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
        if int(m.eq_type[e]) == EQ_JOINT and m.eq_active0[e] and j2 >= 0 \
                and int(m.jnt_type[j1]) in (HINGE, SLIDE) and int(m.jnt_type[j2]) in (HINGE, SLIDE):
            couplings[j1] = Mimic(names[j2], polynomial=tuple(float(c) for c in m.eq_data[e][:5]))
    links, joints = [LinkSpec("world")], []
    offset = {0: np.zeros(3)}  # where each body's frame sits in its last link's frame (−anchor)
    for b in range(1, m.nbody):
        parent = int(m.body_parentid[b])
        parent_link = bodies[parent]
        R = _wxyz_to_matrix(m.body_quat[b])
        p = np.asarray(m.body_pos[b], float) + offset[parent]
        jids = range(int(m.body_jntadr[b]), int(m.body_jntadr[b]) + int(m.body_jntnum[b]))
        anchor = np.zeros(3)
        if len(jids) == 0:
            joints.append(JointSpec(f"{bodies[b]}_weld", "fixed", parent_link, bodies[b],
                                    tuple(map(float, p)), tuple(map(float, matrix_to_rpy(R))), rotation=rotation_tuple(R)))
        previous = parent_link
        for k, j in enumerate(jids):
            kind = int(m.jnt_type[j])
            jname = names[j]
            child = bodies[b] if k == len(jids) - 1 else f"{bodies[b]}__{jname}"
            a = np.zeros(3) if kind in (FREE, SLIDE) else np.asarray(m.jnt_pos[j], float)
            if kind == FREE:
                if parent != 0 or k != 0:
                    raise ModelError(f"{path}: free joint '{jname}' is not the first joint of a body on the world")
                origin, rot = np.zeros(3), np.eye(3)  # qpos is the body's pose in the world
            elif k == 0:
                origin, rot = p + R @ a, R
            else:
                origin, rot = a - anchor, np.eye(3)
            limits = None
            if kind in (HINGE, SLIDE) and m.jnt_limited[j]:
                lo, hi = (float(x) - float(m.qpos0[m.jnt_qposadr[j]]) for x in m.jnt_range[j])
                limits = Limits(lo, hi)
            dof = int(m.jnt_dofadr[j])
            width = {FREE: 6, BALL: 3}.get(kind, 1)
            armature = tuple(float(x) for x in m.dof_armature[dof : dof + width])
            friction = None  # MuJoCo's viscous damping and dry frictionloss, of a 1-DoF joint
            if kind in (HINGE, SLIDE) and (m.dof_damping[dof] or m.dof_frictionloss[dof]):
                friction = (float(m.dof_damping[dof]), float(m.dof_frictionloss[dof]))
            joints.append(JointSpec(jname, TYPES[kind], previous, child, tuple(map(float, origin)),
                                    tuple(map(float, matrix_to_rpy(rot))),
                                    tuple(float(x) for x in m.jnt_axis[j]) if kind in (HINGE, SLIDE) else (0.0, 0.0, 1.0),
                                    limits, mimic=couplings.get(j), armature=armature if any(armature) else (),
                                    rotation=rotation_tuple(rot), friction=friction))
            if child != bodies[b]:
                links.append(LinkSpec(child))
            previous, anchor = child, a
        offset[b] = -anchor
        Ri = _wxyz_to_matrix(m.body_iquat[b])
        inertial = None
        if m.body_mass[b] > 0 or np.any(m.body_inertia[b]):
            Ixx, Iyy, Izz = (float(x) for x in m.body_inertia[b])
            inertial = Inertial(float(m.body_mass[b]), tuple(map(float, np.asarray(m.body_ipos[b]) - anchor)),
                                tuple(map(float, matrix_to_rpy(Ri))), (Ixx, 0.0, 0.0, Iyy, 0.0, Izz), rotation_tuple(Ri))
        links.append(LinkSpec(bodies[b], inertial))
    loops = _loop_closures(m, bodies, offset)
    _say_what_is_left_out(m, path, len(couplings), len(loops))
    guess, actuated = (), ()
    if loops:
        on_loops = _joints_on_loops(m, loops, bodies)
        key = m.key_qpos[0] if m.nkey else m.qpos0  # the assembly nearest the first keyframe, else qpos0
        guess = tuple((names[j], float(key[m.jnt_qposadr[j]] - m.qpos0[m.jnt_qposadr[j]])) if int(m.jnt_type[j]) != BALL
                      else (names[j], tuple(float(key[m.jnt_qposadr[j] + k]) for k in (1, 2, 3, 0)))  # (x, y, z, w)
                      for j in on_loops)
        actuated = tuple(names[int(m.actuator_trnid[a, 0])] for a in range(m.nu)
                         if int(m.actuator_trntype[a]) == TRN_JOINT and int(m.actuator_trnid[a, 0]) in on_loops)
    # <flag gravity="disable"/> keeps opt.gravity and sets a flag: the model's gravity is then none
    gravity = (0.0, 0.0, 0.0) if int(m.opt.disableflags) & int(mujoco.mjtDisableBit.mjDSBL_GRAVITY) else \
        tuple(float(x) for x in m.opt.gravity)
    return RobotDescription(_model_name(m, path), tuple(links), tuple(joints), source=path, loops=tuple(loops),
                            guess=guess, gravity=gravity, origin_format="mjcf",
                            extra=(text,) if text is not None else (), actuated=actuated)


def _loop_closures(m, bodies, offset) -> list[LoopClosure]:
    """<equality><connect> and <weld> between bodies (or sites) as loop closures, in our links'
    frames (a body's frame sits at −offset in its last link's). MuJoCo's semantics
    (engine_core_constraint.c, mj_instantiateEquality): connect keeps eq_data[0:3] in body 1 and
    eq_data[3:6] in body 2 together; weld keeps body 1's frame at (eq_data[3:6], eq_data[6:10])
    and body 2's at (eq_data[0:3], identity) together, position and orientation."""
    import mujoco

    out = []
    for e in range(m.neq):
        kind = int(m.eq_type[e])
        if kind not in (EQ_CONNECT, EQ_WELD) or not m.eq_active0[e]:
            continue
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_EQUALITY, e) or f"{'connect' if kind == EQ_CONNECT else 'weld'}{e}"
        data = np.asarray(m.eq_data[e], float)
        ids = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
        if int(m.eq_objtype[e]) == OBJ_SITE:
            sides = [(int(m.site_bodyid[s]), np.asarray(m.site_pos[s], float), _wxyz_to_matrix(m.site_quat[s])) for s in ids]
        elif kind == EQ_CONNECT:
            sides = [(ids[0], data[0:3], np.eye(3)), (ids[1], data[3:6], np.eye(3))]
        else:
            sides = [(ids[0], data[3:6], _wxyz_to_matrix(data[6:10])), (ids[1], data[0:3], np.eye(3))]
        (b1, p1, R1), (b2, p2, R2) = sides
        p1, p2 = p1 + offset[b1], p2 + offset[b2]
        out.append(LoopClosure(name, "spherical" if kind == EQ_CONNECT else "fixed", bodies[b1], bodies[b2],
                               tuple(map(float, p1)), tuple(map(float, matrix_to_rpy(R1))), tuple(map(float, p2)),
                               tuple(map(float, matrix_to_rpy(R2))), rotation=rotation_tuple(R1),
                               child_rotation=rotation_tuple(R2)))
    return out


def _joints_on_loops(m, loops, bodies) -> list[int]:
    """MuJoCo's joints on the paths the closures close (each side's ancestors, common ones out)."""
    index = {name: b for b, name in enumerate(bodies)}

    def chain(b):
        out = set()
        while b > 0:
            out.add(b)
            b = int(m.body_parentid[b])
        return out

    on = set()
    for c in loops:
        on |= chain(index[c.parent]) ^ chain(index[c.child])
    return [j for j in range(m.njnt) if int(m.jnt_bodyid[j]) in on and int(m.jnt_type[j]) in (HINGE, SLIDE, BALL)]


def _model_name(m, path: str) -> str:
    """<mujoco model="...">: the first name in MuJoCo's names buffer; else the file's name."""
    import os

    raw = bytes(m.names).split(b"\0", 1)[0].decode(errors="ignore")
    return raw or os.path.splitext(os.path.basename(path))[0] or "mjcf"


def _say_what_is_left_out(m, path: str, couplings: int = 0, loops: int = 0) -> None:
    parts = []
    if m.nu:
        parts.append(f"{m.nu} actuator{'s' if m.nu > 1 else ''}")
    if m.ntendon:
        parts.append(f"{m.ntendon} tendon{'s' if m.ntendon > 1 else ''}")
    colliding = int(np.count_nonzero((m.geom_contype != 0) | (m.geom_conaffinity != 0)))
    if colliding:
        parts.append(f"contacts of {colliding} geom{'s' if colliding > 1 else ''}")
    others = m.neq - couplings - loops
    if others:
        parts.append(f"{others} equality constraint{'s' if others > 1 else ''}")
    text = f"not the dynamics of a tree, so left out: {', '.join(parts)}" if parts else ""
    if couplings:
        text += ("; " if text else "") + (f"{couplings} joint coupling{'s' if couplings > 1 else ''} "
                                          "(<equality><joint>) loaded as mimic joints: --mimic enforce enforces them")
    if text:
        warnings.warn(ModelWarning(f"{path}: {text}"), stacklevel=4)


# ---- our state in MuJoCo's coordinates -----------------------------------------------------------
def layout(robot, m) -> MujocoLayout:
    """Where each of the robot's joints sits in MuJoCo's qpos and qvel (matched by our names of
    MuJoCo's joints, see joint_names)."""
    out = MujocoLayout(nq=robot.nq, nv=robot.nv)
    index = {name: j for j, name in enumerate(joint_names(m))}
    for i, b in enumerate(robot.bodies):
        j = index.get(b.joint.name, -1)
        if j < 0:
            raise ModelError(f"joint '{b.joint.name}' is not in the MuJoCo model")
        kind = int(m.jnt_type[j])
        qa, da = int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])
        out.joints.append((kind, int(robot.q_start[i]), int(robot.v_start[i]), qa, da, float(m.qpos0[qa])))
    ours = np.zeros(m.nv, dtype=bool)
    for kind, _, _, _, da, _ in out.joints:
        ours[da : da + {FREE: 6, BALL: 3}.get(kind, 1)] = True
    out.dofs = np.flatnonzero(ours)
    for name, value in robot.description.locked:
        j = index.get(name, -1)
        if j >= 0:  # hinge and slide at their value (from qpos0, as q); ball and free at the identity
            qa, kind = int(m.jnt_qposadr[j]), int(m.jnt_type[j])
            held = {FREE: (0, 0, 0, 1, 0, 0, 0), BALL: (1, 0, 0, 0)}.get(kind, (float(m.qpos0[qa]) + (value or 0.0),))
            out.held.append((qa, held))
    return out


def mujoco_state(lay: MujocoLayout, q, v, m_nq: int, m_nv: int):
    """(qpos, qvel, T, a) for our (q, ν): MuJoCo's state, the map ν = T qvel, and Ṫ qvel (the
    free joints' −ω × ᴮv), so that MuJoCo's M is Tᵀ M T and its bias Tᵀ τ(q, ν, Ṫ qvel)."""
    qpos, qvel = np.zeros(m_nq), np.zeros(m_nv)
    for qa, held in lay.held:
        qpos[qa : qa + len(held)] = held
    T = np.zeros((len(v), m_nv))
    acc = np.zeros(len(v))
    for kind, qs, vs, qa, da, q0 in lay.joints:
        if kind in (HINGE, SLIDE):
            qpos[qa] = q[qs] + q0
            qvel[da] = v[vs]
            T[vs, da] = 1.0
        elif kind == BALL:
            x, y, z, w = q[qs : qs + 4]
            qpos[qa : qa + 4] = (w, x, y, z)
            qvel[da : da + 3] = v[vs : vs + 3]
            T[vs : vs + 3, da : da + 3] = np.eye(3)
        else:  # free: [x y z qx qy qz qw], ν = [ᴮv; ᴮω]; MuJoCo [x y z qw qx qy qz], [ᴬv; ᴮω]
            x, y, z, w = q[qs + 3 : qs + 7]
            R = quat_to_matrix(np.array([x, y, z, w]) / np.linalg.norm([x, y, z, w]))
            qpos[qa : qa + 3] = q[qs : qs + 3]
            qpos[qa + 3 : qa + 7] = (w, x, y, z)
            qvel[da : da + 3] = R @ v[vs : vs + 3]
            qvel[da + 3 : da + 6] = v[vs + 3 : vs + 6]
            T[vs : vs + 3, da : da + 3] = R.T
            T[vs + 3 : vs + 6, da + 3 : da + 6] = np.eye(3)
            acc[vs : vs + 3] = -np.cross(v[vs + 3 : vs + 6], v[vs : vs + 3])
    return qpos, qvel, T, acc


def compile_description(desc):
    """MuJoCo's model of a robot's description: the MJCF file it came from (or the text that was
    piped), else MuJoCo's URDF compiler on our description without geometry (meshes are not at
    hand). Quiet: MuJoCo's warnings were said once already, when the robot was loaded."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        if desc.origin_format == "mjcf":
            return compile_model(desc.source, desc.extra[0] if desc.source == "<stdin>" and desc.extra else None)
        return compile_model(desc.source or desc.name, urdf_for_mujoco(desc))


def urdf_for_mujoco(desc) -> str:
    """URDF text of ``desc`` for MuJoCo's URDF compiler: no geometry, no mimic, fixed links fused."""
    import re
    from dataclasses import replace

    from .urdf import to_urdf

    bare = replace(desc, extra=(), links=tuple(replace(link, extra=()) for link in desc.links),
                   joints=tuple(replace(j, extra=(), mimic=None) for j in desc.joints))
    return re.sub(r"(<robot[^>]*>)", r'\1<mujoco><compiler discardvisual="true" fusestatic="true"/></mujoco>',
                  to_urdf(bare), count=1)
