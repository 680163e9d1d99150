"""One entry point for every way a user names a robot: a .urdf or .yaml file, or a spec."""

from __future__ import annotations

import os

from ..errors import ModelError
from .description import RobotDescription
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
    if b"\x00" in data:
        raise ModelError(f"{path}: not a text file (binary data)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelError(f"{path}: not a text file (invalid UTF-8)") from None


def load_description(path_or_spec: str) -> RobotDescription:
    text = str(path_or_spec)
    if os.path.exists(text):
        ext = os.path.splitext(text)[1].lower()
        content = read_text(text)
        if ext in YAML_EXT:
            return parse_yaml(content, text)
        if ext in URDF_EXT:
            return parse_urdf(content, text)
        # Unknown extension: decide by content
        if content.lstrip().startswith("<"):
            return parse_urdf(content, text)
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


def load_robot(path_or_spec: str, floating_base: bool = False) -> RobotModel:
    """Load a robot from a .urdf/.yaml file or a spec such as ``quadruped:20``.

    ``floating_base=True`` puts a free joint (Pinocchio's free-flyer convention) between the
    world and the root link.
    """
    return build_model(load_description(path_or_spec), floating_base=floating_base)
