"""coriolis: M, Ṁ, C and Christoffel symbols of rigid-body trees with recursive algorithms."""

from .errors import CheckFailed, CoriolisError, InputError, ModelError, OutputError, SizeError, SpecError, StateError
from . import engine
from .engine import christoffel, coriolis_matrix, gravity_vector, inverse_dynamics, mass_matrix
from .model import RobotModel, load_robot

__version__ = "0.1.0"

__all__ = [
    "CheckFailed", "CoriolisError", "InputError", "ModelError", "OutputError", "RobotModel", "SizeError",
    "SpecError", "StateError", "christoffel", "coriolis_matrix", "gravity_vector", "inverse_dynamics",
    "load_robot", "mass_matrix",
]
