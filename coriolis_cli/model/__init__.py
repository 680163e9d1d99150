"""Robot models: the kinematic tree, its loaders and generated topologies."""

from .description import RobotDescription
from .loader import load_description, load_robot
from .topologies import TOPOLOGIES, generate
from .tree import Body, Joint, RobotModel, build_model
from .urdf import parse_urdf, to_urdf
from .yaml_format import parse_yaml, to_yaml

__all__ = [
    "Body", "Joint", "RobotDescription", "RobotModel", "TOPOLOGIES", "build_model", "generate",
    "load_description", "load_robot", "parse_urdf", "parse_yaml", "to_urdf", "to_yaml",
]
