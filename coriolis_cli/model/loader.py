"""One entry point for every way a user names a robot: a .urdf or .yaml file, or a spec."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import warnings
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import ModelError, ModelWarning
from .description import RobotDescription, description_from_dict, description_to_dict
from .limits import read_bounded
from .topologies import TOPOLOGIES, generate, is_spec, parse_spec
from .tree import RobotModel, build_model
from .urdf import parse_urdf
from .yaml_format import parse_yaml

if TYPE_CHECKING:  # the return annotation's name, imported where the loader needs it (at most once per robot)
    from .coordinates import ReducedRobot

URDF_EXT = (".urdf", ".xml")
YAML_EXT = (".yaml", ".yml")


def read_text(path: str) -> str:
    if os.path.isdir(path):
        raise ModelError(f"{path}: is a directory, not a robot file")
    try:
        data = read_bounded(path)
    except FileNotFoundError:
        raise ModelError(f"{path}: no such file") from None
    except OSError as e:
        raise ModelError(f"{path}: cannot read ({e.strerror})") from None
    except ValueError as e:
        raise ModelError(f"{path}: {e}") from None
    data = data.rstrip(b"\x00")  # NUL padding at the end, as some tools write it
    if b"\x00" in data:
        raise ModelError(f"{path}: not a text file (binary data)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelError(f"{path}: not a text file (invalid UTF-8)") from None


def _cache_dir() -> str | None:
    if os.environ.get("CORIOLIS_NO_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "coriolis", "urdf")


CACHE_SCHEMA = 5  # bump when the cached layout or the parser's output changes
CACHE_MAX_BYTES = 64 * 2**20


# entries for the bundled robots, made by robots/build_bundled.py and installed with the package
SHIPPED_CACHE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "robots", "parsed")


def cache_key(content: str, version: str) -> str:
    return hashlib.sha256((version + "\0" + content).encode("utf-8")).hexdigest()


def cache_entry(content: str, source: str, version: str) -> tuple[str, dict]:
    """(key, entry) of the parsed-URDF cache for this text: what a first run writes."""
    key = cache_key(content, version)
    payload = description_to_dict(parse_urdf(content, source))
    return key, {"schema": CACHE_SCHEMA, "source_sha256": key, "payload_sha256": _payload_hash(payload),
                 "description": payload}


def _payload_hash(payload: dict) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()


def _read_cache_entry(path: str, key: str) -> dict | None:
    """The cached description for the source whose hash is ``key``, or None on any doubt: not a
    regular file, too large, not ours (schema, source hash), or altered (payload hash)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO put in its place must not block
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > CACHE_MAX_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            entry = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    finally:
        os.close(fd)
    if not isinstance(entry, dict) or entry.get("schema") != CACHE_SCHEMA or entry.get("source_sha256") != key:
        return None
    payload = entry.get("description")
    if not isinstance(payload, dict) or entry.get("payload_sha256") != _payload_hash(payload):
        return None
    return payload


def _parse_urdf_cached(content: str, source: str) -> RobotDescription:
    """Parse with yourdfpy once per file content; later runs read the parsed description back.

    yourdfpy imports trimesh, which alone takes most of a second. The key is a hash of the text,
    so an edited file is parsed again. An entry is used only if it proves it was made from this
    text by this schema and is unaltered; anything else is discarded and rebuilt, with results
    identical to an uncached run. Set CORIOLIS_NO_CACHE=1 to bypass the cache.
    """
    from .. import __version__

    directory = _cache_dir()
    key = cache_key(content, __version__)
    path = None if directory is None else os.path.join(directory, key + ".json")
    if path is not None:
        payload = _read_cache_entry(path, key)
        if payload is None:  # the bundled robots' entries ship with the package: their first run parses nothing
            payload = _read_cache_entry(os.path.join(SHIPPED_CACHE, key + ".json"), key)
        if payload is not None:
            try:
                return description_from_dict(payload, source)
            except Exception:  # noqa: BLE001 - a malformed entry of any kind is rebuilt, never trusted
                pass
    desc = parse_urdf(content, source)
    if path is not None:
        payload = description_to_dict(desc)
        entry = {"schema": CACHE_SCHEMA, "source_sha256": key, "payload_sha256": _payload_hash(payload),
                 "description": payload}
        tmp = path + f".{os.getpid()}.part"
        try:
            os.makedirs(directory, exist_ok=True)
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(entry, f)
            os.replace(tmp, path)  # replaces a FIFO or a corrupt entry too
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)  # a read-only home only costs the parse next time
    return desc


_STDIN_READ: dict = {}  # the standard input stream read already: it holds one robot


def read_stdin() -> str:
    """The robot description piped to standard input (``-``), bounded as a file is."""
    import sys

    from .limits import max_file_bytes

    limit = max_file_bytes()
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise ModelError("-: no standard input to read a robot from")
    if _STDIN_READ.get("stream") is stream:
        raise ModelError("-: standard input holds one robot and was read already; give '-' once, and the other "
                         "robots as files")
    _STDIN_READ["stream"] = stream
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise ModelError(f"-: larger than {limit // 2**20} MiB (set CORIOLIS_MAX_FILE_MB to raise the limit)")
    data = data.rstrip(b"\x00")
    if not data.strip():
        raise ModelError("-: standard input is empty; pipe a URDF or YAML robot into it (xacro robot.xacro | coriolis info -)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelError("-: not a text file (invalid UTF-8)") from None


def load_description(path_or_spec: str, xacro_args: dict | None = None, package_paths=()) -> RobotDescription:
    """A robot's description from a file (URDF, xacro with ``xacro_args`` and ``package_paths``
    for $(find), YAML), ``-`` (standard input, URDF or YAML by its content), a bundled robot's name
    (``panda``; a file of that name in the working directory wins) or a generated topology's spec
    (``quadruped:20``)."""
    from .bundled import bundled_path
    from .xacro_format import expand, is_xacro_path

    text = str(path_or_spec)
    from .mjcf import is_mjcf, parse_mjcf

    if text == "-":
        content = read_stdin()
        if is_mjcf(content):
            return parse_mjcf("<stdin>", content)
        if content.lstrip().startswith("<"):
            return _parse_urdf_cached(content, "<stdin>")
        return parse_yaml(content, "<stdin>")
    if is_xacro_path(text) and os.path.isfile(text):
        read_text(text)  # the same refusals as any file: size, binary, encoding
        return _parse_urdf_cached(expand(text, xacro_args, package_paths), text)
    bundled = None if is_spec(text) else bundled_path(text)
    if bundled and (not os.path.exists(text) or os.path.isdir(text)):  # a folder ./panda/ is no robot file
        text = bundled
    elif bundled and os.path.isfile(text):
        warnings.warn(ModelWarning(f"'{text}' is the file {os.path.join('.', text)} in the working directory, not the "
                                   f"bundled robot of that name ({bundled})"), stacklevel=2)
    if os.path.isdir(text):
        raise ModelError(f"{text}: a folder, not a robot file (.urdf, .xacro, .xml, .yaml)")
    if xacro_args:
        names = ", ".join(sorted(xacro_args))
        warnings.warn(ModelWarning(f"{text}: not a .xacro file, so --xacro-arg ({names}) does not apply and is "
                                   "ignored"), stacklevel=2)
    if os.path.exists(text):
        ext = os.path.splitext(text)[1].lower()
        content = read_text(text)
        if ext in YAML_EXT:
            return parse_yaml(content, text)
        if ext != ".urdf" and is_mjcf(content):
            return parse_mjcf(text)
        if ext in URDF_EXT or (ext not in YAML_EXT and content.lstrip().startswith("<")):
            return _parse_urdf_cached(content, text)
        return parse_yaml(content, text)
    if is_spec(text):
        topo, dof, seed = parse_spec(text)
        return generate(topo, dof, seed)
    if os.path.splitext(text)[1].lower() in URDF_EXT + YAML_EXT or os.sep in text:
        raise ModelError(f"{text}: no such file (bundled robots: 'coriolis info --list')")
    raise ModelError(
        f"'{text}' is neither a robot file (.urdf, .yaml), a bundled robot ('coriolis info --list') nor a spec "
        f"TOPOLOGY:DOF (topologies: {', '.join(TOPOLOGIES)})" + _did_you_mean(text)
    )


def _did_you_mean(text: str) -> str:
    """'; did you mean 'panda'?' for a bundled robot's or topology's name written nearly right."""
    import difflib

    from .bundled import bundled_files

    names = sorted({os.path.splitext(os.path.basename(p))[0] for p in bundled_files()} | set(TOPOLOGIES))
    lowered = {n.lower(): n for n in names}
    close = difflib.get_close_matches(text.lower(), list(lowered), n=1, cutoff=0.6)
    return f"; did you mean '{lowered[close[0]]}'?" if close else ""


def load_robot(path_or_spec: str, floating_base: bool = False, strict: bool = False, mimic: str = "independent",
               base_velocity: str = "body", lock: dict | list[str] | str | None = None, dof_order: str = "file",
               xacro_args: dict | None = None, package_paths: Sequence[str] = (), loops: str = "closed",
               independent: Sequence[str] | str = ()) -> RobotModel | ReducedRobot:
    """Load a robot from a robot file, a bundled robot's name or a generated-robot spec.

    ``path_or_spec`` is read as, in this order:

    * ``"-"``: a URDF, MJCF or YAML description read from standard input (by its content);
    * a ``.xacro`` file (``robot.urdf.xacro``): expanded by the ``xacro`` package with
      ``xacro_args`` and ``package_paths``, then read as URDF;
    * a bundled robot's name, with or without its extension: ``"panda"``, ``"planar_2link"``,
      ``"gripper"``, ``"quadruped"``, ``"humanoid"``, ``"fourbar"``, ``"knee_leg"``, and the 20-DoF
      ``"serial20"``, ``"binary20"``, ``"biped20"``, ``"quadruped20"`` (a file of that name in the
      working directory wins, with a warning);
    * a file: ``.yaml``/``.yml`` is coriolis's YAML format; an ``.xml`` whose root is ``<mujoco>`` is
      MJCF, compiled by MuJoCo (an optional dependency) so that the robot is the model MuJoCo
      simulates; ``.urdf``, ``.xml`` and any other file starting with ``<`` is URDF; anything else
      is tried as YAML;
    * a generated robot's spec ``TOPOLOGY:DOF`` or ``TOPOLOGY:DOF:SEED`` (``"serial:7"``,
      ``"quadruped:20"``, ``"binary:30:7"``): a ``serial`` chain, a ``binary`` tree, a ``biped`` or a
      ``quadruped`` of revolute joints with random, physically consistent inertias drawn from the
      seed (default 0).

    Fixed joints are merged into their parent bodies. Inertias are used as given: links whose
    inertia no rigid body has and joints that move no mass (M singular) give one
    [ModelWarning][coriolis_cli.ModelWarning] each, listing every case, unless ``strict=True``.

    A robot whose mimic joints are enforced, whose closed loops are solved or whose floating base
    has another velocity representation is returned in those coordinates, as a `ReducedRobot` (its
    tree is ``robot.full``); every function takes it as it takes a tree.

    Parameters
    ----------
    path_or_spec : str or os.PathLike
        A robot file, ``"-"`` for standard input, a bundled robot's name or a spec, as above.
    floating_base : bool, optional
        Put a free joint named ``base`` between the world and the root link, as Pinocchio's
        free-flyer: q gains 7 coordinates (position [m] and quaternion x, y, z, w) and v gains 6
        (the body-frame twist [ᴮv; ᴮω]). Not for MJCF, whose model says itself which bodies float.
    strict : bool, optional
        Refuse, with a [ModelError][coriolis_cli.ModelError], inertias that no rigid body has and
        joints that move no mass, instead of warning.
    mimic : {"independent", "enforce"}, optional
        ``"independent"`` (the default, as Pinocchio's URDF parser) loads mimic joints as DoF of
        their own; ``"enforce"`` returns the robot in its independent joints' coordinates, each
        mimic following its leader, q_j = a·q_m + b (a polynomial for MJCF joint equalities).
    base_velocity : {"body", "mixed", "inertial"}, optional
        A floating base's velocity representation (iDynTree's names): ``"body"`` [ᴮv; ᴮω] (the
        default, Pinocchio's), ``"mixed"`` [ṗ; ᴬω] or ``"inertial"`` [ṗ − ᴬω × p; ᴬω].
    lock : dict, list of str, str or None, optional
        Joints to hold fixed, their links merged into their parents (Pinocchio's
        ``buildReducedModel``): ``{pattern: value}``, with shell-glob patterns on joint names and
        values in rad or m (None for the joint's neutral value), or patterns alone. A mimic joint
        follows its leader; ``"base"`` with ``floating_base=True`` fixes the added base.
    dof_order : {"file", "pinocchio"}, optional
        The order of the DoF, depth first: ``"file"`` (the default) visits a link's child joints as
        the file writes them; ``"pinocchio"`` by name, as Pinocchio's URDF parser, so that vectors
        and matrices equal Pinocchio's entry by entry.
    xacro_args : dict of str to str, optional
        The arguments of a ``.xacro`` file (``{"arm_length": "0.5"}``).
    package_paths : sequence of str, optional
        Folders where a ``.xacro`` file's ``$(find pkg)`` looks for packages, before
        ``ROS_PACKAGE_PATH`` and ``AMENT_PREFIX_PATH``.
    loops : {"closed", "open"}, optional
        ``"closed"`` (the default) solves closed loops (YAML ``loops:``, MJCF ``<connect>`` and
        ``<weld>`` between bodies) at every evaluation and returns the robot in independent
        coordinates; ``"open"`` drops the closures, with a warning naming each, leaving the
        spanning tree.
    independent : sequence of str or str, optional
        Joint names (a list, or one comma-separated string) that replace the closed loops'
        independent coordinates.

    Returns
    -------
    robot : RobotModel or ReducedRobot
        A [RobotModel][coriolis_cli.RobotModel], or a `ReducedRobot` for a robot in other
        coordinates (enforced mimic joints, closed loops, a base velocity other than ``"body"``).

    Raises
    ------
    ModelError
        If the file cannot be found, read or parsed, the description is not one tree of supported
        joints, an option does not apply to the robot, or ``strict=True`` refuses its inertias.
    SpecError
        If a spec is not valid (a subclass of ModelError).

    Warns
    -----
    ModelWarning
        For inertias that no rigid body has, joints that move no mass, and parts of a file that are
        left out (an MJCF model's contacts, loop closures opened with ``loops="open"``).

    Examples
    --------
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> robot.nq, robot.nv, robot.dof_names[0]
    (7, 7, 'panda_joint1')
    >>> cc.load_robot("quadruped:20").nv  # a generated 20-DoF quadruped
    20
    >>> humanoid = cc.load_robot("humanoid", floating_base=True)
    >>> # 20 joints, and the base's 7 coordinates and 6 velocities
    >>> humanoid.nq, humanoid.nv
    (27, 26)
    >>> cc.load_robot("panda", lock={"panda_joint7": 0.0}).nv
    6
    >>> # the right finger follows the left
    >>> gripper = cc.load_robot("gripper", mimic="enforce")
    >>> type(gripper).__name__, gripper.nv, gripper.full.nv
    ('ReducedRobot', 3, 4)

    A YAML file (a one-line flow mapping here; block style reads the same):

    >>> from pathlib import Path
    >>> _ = Path("pendulum.yaml").write_text(
    ...     "{name: pendulum, links: [{name: base},"
    ...     " {name: rod, mass: 1.0, com: [0, 0, -0.5],"
    ...     " inertia: [0.01, 0, 0, 0.01, 0, 0.001]}],"
    ...     " joints: [{name: hinge, type: continuous, parent: base, child: rod,"
    ...     " axis: [0, 1, 0]}]}")
    >>> pendulum = cc.load_robot("pendulum.yaml")
    >>> g = cc.gravity_vector(pendulum, [1.5707963267948966])
    >>> pendulum.dof_names, round(float(g[0]), 6)
    (('hinge',), 4.905)
    """
    from .coordinates import BASE_VELOCITIES, MIMIC_MODES, enforce_mimic, with_base_velocity

    if mimic not in MIMIC_MODES:
        raise ModelError(f"mimic must be one of {', '.join(MIMIC_MODES)}, got '{mimic}'")
    if base_velocity not in BASE_VELOCITIES:
        raise ModelError(f"base velocity must be one of {', '.join(BASE_VELOCITIES)}, got '{base_velocity}'")
    desc = load_description(path_or_spec, xacro_args, package_paths)
    if floating_base and desc.origin_format == "mjcf":
        raise ModelError("an MJCF model says itself which bodies float (a <freejoint> to the world); floating_base "
                         "does not apply to it", hint="drop --floating-base")
    if loops not in ("closed", "open"):
        raise ModelError(f"loops must be 'closed' or 'open', got '{loops}'")
    if independent and loops == "open":
        raise ModelError("--independent names the coordinates of closed loops, which --loops open opens; drop one")
    if desc.loops and loops == "open":
        names = ", ".join(f"'{c.name}'" for c in desc.loops)
        warnings.warn(ModelWarning(f"{desc.source or desc.name}: {len(desc.loops)} loop closure"
                                   f"{'s' if len(desc.loops) > 1 else ''} opened ({names}): computed on the spanning "
                                   "tree, as if the linkage were cut there"), stacklevel=2)
        desc = replace(desc, loops=(), independent=(), guess=())
    if independent:
        if isinstance(independent, str):
            independent = tuple(n.strip() for n in independent.split(",") if n.strip())
        if not desc.loops:
            raise ModelError("--independent names the coordinates of closed loops, and this robot has none")
        desc = replace(desc, independent=tuple(independent))
    if lock:
        from .lock import lock_floating_base, lock_joints

        if floating_base:
            lock, base_locked = lock_floating_base(desc, lock)
            floating_base = not base_locked
        if lock:
            desc = lock_joints(desc, lock, mimic)
        movable = [j for j in desc.joints if j.type != "fixed"]
        if desc.locked and not movable and floating_base:
            warnings.warn(ModelWarning(f"every joint of robot '{desc.name}' is locked ({len(desc.locked)}): only the "
                                       "floating base moves"), stacklevel=2)
    if desc.loops:
        if mimic != "independent" or base_velocity != "body":
            raise ModelError("one change of coordinates at a time: this robot has closed loops, which are solved "
                             "for already; --mimic enforce and base velocity representations cannot be added")
        from .loops import close_loops

        return close_loops(build_model(desc, floating_base=floating_base, strict=strict, dof_order=dof_order))
    if base_velocity != "body":
        if mimic != "independent":
            raise ModelError("one change of coordinates at a time: --mimic enforce or a base velocity representation")
        return with_base_velocity(build_model(desc, floating_base=floating_base, strict=strict, dof_order=dof_order), base_velocity)
    if mimic == "independent":
        return build_model(desc, floating_base=floating_base, strict=strict, dof_order=dof_order)
    names = {j.name for j in desc.joints if j.type != "fixed"}
    for j in desc.joints:
        if j.mimic is not None and j.mimic.joint not in names:
            raise ModelError(f"joint '{j.name}' mimics joint '{j.mimic.joint}', which does not exist or is fixed, "
                             "so the mimic cannot be enforced")
    return enforce_mimic(build_model(desc, floating_base=floating_base, strict=strict, dof_order=dof_order))
