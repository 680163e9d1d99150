"""coriolis: M, Ṁ, C and Christoffel symbols of rigid-body trees with recursive algorithms.

The engine (a C++ core built with the package) is imported on first use of one of its functions,
so that loading a robot or running ``coriolis --help`` does not pay for it.
"""

from .errors import (CheckFailed, CoriolisError, InputError, ModelError, ModelWarning, OutputError, RecordingError,
                     RecordingNote, SingularMassMatrixError, SizeError, SpecError, StateError)
from .model import RobotModel, load_robot
from .model.coordinates import ReducedRobot
from .model.parameters import inertial_parameters, with_inertial_parameters

__version__ = "0.1.0"


def _load_engine():
    import importlib

    return importlib.import_module(".engine", __name__)


_ENGINE = ("christoffel", "christoffel_largest", "coriolis_matrix", "gravity_vector", "inverse_dynamics", "mass_matrix",
           "Data", "QuaternionWarning", "adaptation_gradient", "forward_dynamics", "regressor", "slotine_li",
           "generalized_momentum", "coriolis_transpose_velocity", "trajectory_dynamics", "momentum_regressors",
           "get_num_threads", "set_num_threads", "create_data", "integrate", "random_configuration")

# The public API: every name documented on the site (tests/test_api_reference.py holds the two together).
__all__ = [
    # robots
    "load_robot", "RobotModel", "ReducedRobot", "inertial_parameters", "with_inertial_parameters", "to_mujoco", "from_mujoco",
    "random_configuration", "integrate",
    # dynamics
    "coriolis_matrix", "christoffel", "christoffel_slices", "christoffel_largest", "mass_matrix", "inverse_dynamics",
    "gravity_vector", "forward_dynamics", "slotine_li", "regressor", "adaptation_gradient", "generalized_momentum",
    "coriolis_transpose_velocity", "momentum_regressors", "MomentumRegressors", "trajectory_dynamics",
    # derivatives
    "inverse_dynamics_derivatives", "forward_dynamics_derivatives", "gravity_derivatives", "slotine_li_derivatives",
    "coriolis_product_derivatives", "coriolis_transpose_derivatives", "momentum_derivatives",
    "coriolis_matrix_derivatives", "inverse_dynamics_second_derivatives",
    "inverse_dynamics_second_derivatives_contracted", "forward_dynamics_second_derivatives",
    "forward_dynamics_second_derivatives_contracted",
    # workspaces and threads
    "create_data", "Data", "get_num_threads", "set_num_threads",
    # recordings and observers
    "load_recording", "stream_recording", "Recording", "MomentumObserver", "EnergyObserver",
    # errors and warnings
    "CoriolisError", "InputError", "ModelError", "SpecError", "StateError", "SizeError", "OutputError", "RecordingError",
    "SingularMassMatrixError", "CheckFailed", "ModelWarning", "QuaternionWarning", "RecordingNote",
]


def __getattr__(name):
    if name in ("recordings", "load_recording", "stream_recording", "Recording"):  # formats in, arrays out (no engine)
        import importlib

        module = importlib.import_module(".recordings", __name__)
        return module if name == "recordings" else getattr(module, name)
    if name in ("to_mujoco", "from_mujoco"):  # MuJoCo's qpos and qvel (peers.mujoco)
        import importlib

        return getattr(importlib.import_module(".peers.mujoco", __name__), name)
    if name in ("MomentumObserver", "EnergyObserver"):  # collision observers, on the engine
        import importlib

        return getattr(importlib.import_module(".estimation.observers", __name__), name)
    if name == "engine" or name in _ENGINE:
        engine = _load_engine()
        for attr in _ENGINE:  # later look-ups are plain module attributes
            globals()[attr] = getattr(engine, attr)
        return engine if name == "engine" else globals()[name]
    if not name.startswith("_"):  # a public function of the engine not listed above (engine.api's __all__)
        engine = _load_engine()
        if name in engine.__all__:
            globals()[name] = getattr(engine, name)
            return globals()[name]
    raise AttributeError(f"module 'coriolis_cli' has no attribute '{name}'")
