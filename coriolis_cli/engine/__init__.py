"""The dynamics engine: spatial algebra and one algorithm per module, compiled with numba.

Only this package holds compiled code. Importing it imports numba; the CLI imports it lazily so
that ``coriolis --help`` and ``coriolis info`` start without it.
"""

from .cache import prepare_kernel_cache, serialize_cache_writes

prepare_kernel_cache()
serialize_cache_writes()

# ruff: noqa: E402

from .spatial import FACTORIZATIONS
from ..model import services
# the modules named as public functions are imported first, so that a later import of one of
# them (bench's compiled loops, the equality tests) cannot replace the function with the module
from . import base_velocity, christoffel as _christoffel_module, loops  # noqa: F401
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
]
