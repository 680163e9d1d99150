"""The dynamics engine: the C++ core (engine/core, compiled when the package is built, bound in
engine/bindings.cpp as ``engine.compiled``) and the one calling layer over it (api → tree_calls or
coordinates → calls). The CLI imports it lazily so that ``coriolis --help`` and ``coriolis info``
start without it.
"""

from ..model import services
from . import base_velocity, loops
from .calls import get_num_threads, set_num_threads
from .conventions import FACTORIZATIONS
from .api import (
    GAMMA_MAX_BYTES,
    Data,
    QuaternionWarning,
    adaptation_gradient,
    check_gamma_size,
    check_memory,
    christoffel,
    christoffel_largest,
    coriolis_matrix,
    coriolis_transpose_velocity,
    create_data,
    forward_dynamics,
    gamma_bytes,
    generalized_momentum,
    gravity_vector,
    inverse_dynamics,
    largest_entries,
    mass_matrix,
    momentum_regressors,
    positive_definite,
    regressor,
    singular_mass_matrix,
    slotine_li,
    trajectory_dynamics,
)

# what robots hand out but the engine computes (model.services)
services.provide(create_data=create_data, loop_solver=loops.LoopSolver, loop_constraints=loops.constraints,
                 base_transform=base_velocity.transform, base_rate_basis=base_velocity.rate_basis)

__all__ = [
    "Data", "FACTORIZATIONS", "GAMMA_MAX_BYTES", "QuaternionWarning", "check_gamma_size", "check_memory", "christoffel", "christoffel_largest",
    "coriolis_matrix", "create_data", "gamma_bytes", "gravity_vector", "inverse_dynamics", "largest_entries", "mass_matrix",
    "positive_definite", "singular_mass_matrix", "adaptation_gradient", "forward_dynamics", "regressor", "slotine_li",
    "generalized_momentum", "coriolis_transpose_velocity", "trajectory_dynamics", "momentum_regressors",
    "get_num_threads", "set_num_threads",
]
