"""One entry point for every way a user names a robot: a .urdf or .yaml file, or a spec."""

from __future__ import annotations

import hashlib
import json
import os

from ..errors import ModelError
from .description import RobotDescription, description_from_dict, description_to_dict
from .topologies import TOPOLOGIES, generate, is_spec, parse_spec
from .tree import RobotModel, build_model
from .urdf import parse_urdf
from .yaml_format import parse_yaml

URDF_EXT = (".urdf", ".xml")
YAML_EXT = (".yaml", ".yml")


def read_text(path: str) -> str:
    if os.path.isdir(path):
        raise ModelError(f"{path}: is a directory, not a robot file")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise ModelError(f"{path}: no such file") from None
    except OSError as e:
        raise ModelError(f"{path}: cannot read ({e.strerror})") from None
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


def _parse_urdf_cached(content: str, source: str) -> RobotDescription:
    """Parse with yourdfpy once per file content; later runs read the parsed description back.

    yourdfpy imports trimesh, which alone takes most of a second. The key is a hash of the text,
    so an edited file is parsed again. Set CORIOLIS_NO_CACHE=1 to bypass the cache.
    """
    from .. import __version__

    directory = _cache_dir()
    key = hashlib.sha256((__version__ + "\0" + content).encode("utf-8")).hexdigest()
    path = None if directory is None else os.path.join(directory, key + ".json")
    if path is not None:
        try:
            with open(path, encoding="utf-8") as f:
                return description_from_dict(json.load(f), source)
        except (OSError, ValueError, KeyError, TypeError):
            pass
    desc = parse_urdf(content, source)
    if path is not None:
        try:
            os.makedirs(directory, exist_ok=True)
            tmp = path + f".{os.getpid()}.part"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(description_to_dict(desc), f)
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only home only costs the parse next time
    return desc


def load_description(path_or_spec: str) -> RobotDescription:
    text = str(path_or_spec)
    if os.path.exists(text):
        ext = os.path.splitext(text)[1].lower()
        content = read_text(text)
        if ext in YAML_EXT:
            return parse_yaml(content, text)
        if ext in URDF_EXT or (ext not in YAML_EXT and content.lstrip().startswith("<")):
            return _parse_urdf_cached(content, text)
        return parse_yaml(content, text)
    if is_spec(text):
        topo, dof, seed = parse_spec(text)
        return generate(topo, dof, seed)
    if os.path.splitext(text)[1].lower() in URDF_EXT + YAML_EXT or os.sep in text:
        raise ModelError(f"{text}: no such file")
    raise ModelError(
        f"'{text}' is neither a robot file (.urdf, .yaml) nor a spec TOPOLOGY:DOF "
        f"(topologies: {', '.join(TOPOLOGIES)})"
    )


def load_robot(path_or_spec: str, floating_base: bool = False, strict: bool = False) -> RobotModel:
    """Load a robot from a .urdf/.yaml file or a spec such as ``quadruped:20``.

    ``floating_base=True`` puts a free joint (Pinocchio's free-flyer convention) between the
    world and the root link. Inertias that no rigid body has and joints that move no mass are
    computed with and reported in one warning each; ``strict=True`` refuses them.
    """
    return build_model(load_description(path_or_spec), floating_base=floating_base, strict=strict)
