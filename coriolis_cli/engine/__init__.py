"""The dynamics engine: spatial algebra and one algorithm per module, compiled with numba."""

from .cache import drop_stale_cache

drop_stale_cache()

# ruff: noqa: E402

from .api import (
    QuaternionWarning,
    Workspace,
    check_gamma_size,
    christoffel,
    christoffel_largest,
    coriolis_matrix,
    gamma_bytes,
    gravity_vector,
    inverse_dynamics,
    mass_matrix,
)

__all__ = [
    "QuaternionWarning", "Workspace", "check_gamma_size", "christoffel", "christoffel_largest", "coriolis_matrix", "gamma_bytes",
    "gravity_vector", "inverse_dynamics", "mass_matrix",
]
