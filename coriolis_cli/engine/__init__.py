"""The dynamics engine: spatial algebra and one algorithm per module, compiled with numba.

Only this package holds compiled code. Importing it imports numba; the CLI imports it lazily so
that ``coriolis --help`` and ``coriolis info`` start without it.
"""

from .cache import prepare_kernel_cache

prepare_kernel_cache()

# ruff: noqa: E402

from .spatial import FACTORIZATIONS
from .api import (
    GAMMA_MAX_BYTES,
    Data,
    QuaternionWarning,
    check_gamma_size,
    check_memory,
    christoffel,
    christoffel_largest,
    coriolis_matrix,
    gamma_bytes,
    gravity_vector,
    inverse_dynamics,
    largest_entries,
    mass_matrix,
    positive_definite,
    singular_mass_matrix,
)
from .control import adaptation_gradient, forward_dynamics, regressor, slotine_li

__all__ = [
    "Data", "FACTORIZATIONS", "GAMMA_MAX_BYTES", "QuaternionWarning", "check_gamma_size", "check_memory", "christoffel", "christoffel_largest",
    "coriolis_matrix", "gamma_bytes", "gravity_vector", "inverse_dynamics", "largest_entries", "mass_matrix", "positive_definite", "singular_mass_matrix",
    "adaptation_gradient", "forward_dynamics", "regressor", "slotine_li",
]
