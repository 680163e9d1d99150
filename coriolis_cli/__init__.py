"""coriolis: M, Ṁ, C and Christoffel symbols of rigid-body trees with recursive algorithms.

The engine (a C++ core built with the package) is imported on first use of one of its functions,
so that loading a robot or running ``coriolis --help`` does not pay for it.
"""

from .errors import (CheckFailed, CoriolisError, InputError, ModelError, ModelWarning, OutputError, SingularMassMatrixError,
                     SizeError, SpecError, StateError)
from .model import RobotModel, load_robot
from .model.parameters import inertial_parameters, with_inertial_parameters

__version__ = "0.1.0"


def _load_engine():
    import importlib

    return importlib.import_module(".engine", __name__)


_ENGINE = ("christoffel", "christoffel_largest", "coriolis_matrix", "gravity_vector", "inverse_dynamics", "mass_matrix",
           "Data", "QuaternionWarning", "adaptation_gradient", "forward_dynamics", "regressor", "slotine_li",
           "generalized_momentum", "coriolis_transpose_velocity", "trajectory_dynamics", "momentum_regressors",
           "get_num_threads", "set_num_threads", "create_data", "integrate", "random_configuration")

__all__ = [
    "CheckFailed", "CoriolisError", "Data", "InputError", "ModelError", "ModelWarning", "OutputError", "QuaternionWarning", "RobotModel",
    "SingularMassMatrixError", "SizeError", "SpecError", "StateError", "christoffel", "christoffel_largest", "coriolis_matrix", "engine",
    "gravity_vector", "inverse_dynamics", "load_robot", "mass_matrix",
    "adaptation_gradient", "forward_dynamics", "inertial_parameters", "regressor", "slotine_li", "with_inertial_parameters",
    "generalized_momentum", "coriolis_transpose_velocity", "trajectory_dynamics", "momentum_regressors", "load_recording",
    "stream_recording", "get_num_threads", "set_num_threads", "create_data", "integrate", "random_configuration",
    "to_mujoco", "from_mujoco",
]


def __getattr__(name):
    if name in ("recordings", "load_recording", "stream_recording"):  # formats in, arrays out (no engine)
        import importlib

        module = importlib.import_module(".recordings", __name__)
        return module if name == "recordings" else getattr(module, name)
    if name in ("to_mujoco", "from_mujoco"):  # MuJoCo's qpos and qvel (peers.mujoco)
        import importlib

        return getattr(importlib.import_module(".peers.mujoco", __name__), name)
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
