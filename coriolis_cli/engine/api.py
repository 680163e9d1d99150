"""Public functions of M, Ṁ, C, Γ, τ and g: one state or a batch, through the compiled kernels.

Every function accepts one state (``q`` of shape (nq,)) or a batch (shape (K, nq)), in which case
results gain a leading K axis and the K states are evaluated in parallel. With ``data=`` (from
``robot.create_data()``, one state at a time) the results are written into the workspace's own
arrays and returned, allocating nothing. The checks, status codes and batches they share are
engine.calls; the fast path for float64 vectors is described there.
"""

from __future__ import annotations

import numpy as np

from ..model.tree import RobotModel
from . import entry
from .batch import christoffel_batch, coriolis_batch, mass_matrix_batch, rnea_batch
from .calls import (F64, ND, Compiled, QuaternionWarning, as_states, check_data, checked, factorization_code, gravity_of,
                    is_vector, positive_definite, run_batch, settle, singular_mass_matrix, stacked_states, with_hint)
from .data import C_, GAMMA_MAX_BYTES, M_, MDOT_, Data, check_gamma_bytes, check_memory, gamma_bytes_for
from .selection import largest_entries
from .spatial import CHRISTOFFEL, FACTORIZATIONS

__all__ = ["QuaternionWarning", "positive_definite", "singular_mass_matrix", "largest_entries", "FACTORIZATIONS", "GAMMA_MAX_BYTES",
           "check_memory"]

_zeros = np.zeros
_DEFAULT_FACTORIZATION = "christoffel"  # the same object as coriolis_matrix's default (interned)


_CORIOLIS = Compiled(entry.coriolis)
_CORIOLIS_INTO = Compiled(entry.coriolis_into)
_CHRISTOFFEL = Compiled(entry.christoffel)
_MASS_MATRIX = Compiled(entry.mass_matrix)
_INVERSE_DYNAMICS = Compiled(entry.inverse_dynamics)
_GRAVITY = Compiled(entry.gravity_vector)
_PLACEMENT = Compiled(entry.placement)


# ---- Algorithm 1 ---------------------------------------------------------------------------
def coriolis_matrix(robot: RobotModel, q, qd, factorization: str = _DEFAULT_FACTORIZATION, data: Data | None = None):
    """Algorithm 1: ``M, Mdot, C`` at (q, q̇). ``factorization`` selects the body-level B:
    ``christoffel`` (eq. 10, C = Σ_k Γ[:, :, k] q̇_k) or ``featherstone`` (eq. 9, admissible only).

    With ``data=robot.create_data()`` the results are ``data.M, data.Mdot, data.C`` themselves,
    overwritten on every call."""
    if robot.__class__ is not RobotModel:  # other coordinates (engine.coordinates)
        from . import coordinates

        return coordinates.coriolis_matrix(robot, q, qd, factorization, data)
    if factorization is _DEFAULT_FACTORIZATION:  # the default argument itself: skip the look-up
        kind = CHRISTOFFEL
    else:
        kind = FACTORIZATIONS.get(factorization) if type(factorization) is str else None
        if kind is None:
            kind = factorization_code(factorization)
    if data is not None:
        try:
            same = data.robot is robot
        except AttributeError:
            same = False
        if not (same and type(q) is ND and type(qd) is ND and q.dtype is F64 and qd.dtype is F64 and q.ndim == 1
                and qd.ndim == 1):
            check_data(robot, data)
            q, qd = checked(robot, q, ("qd", qd))
        status = _CORIOLIS.call(data.ints, data.floats, q, qd, kind)
        if status:
            settle(robot, status, _CORIOLIS, data, q, (("qd", qd),), (kind,))
        return data.coriolis_outputs
    n = robot.nv
    if not (type(q) is ND and type(qd) is ND and q.dtype is F64 and qd.dtype is F64 and q.ndim == 1 and qd.ndim == 1):
        Q, (QD,), batch = stacked_states(robot, q, ("qd", qd))
        if batch:
            check_memory(24 * Q.shape[0] * n * n, f"M, Ṁ and C of {Q.shape[0]} states")
            out = run_batch(robot, coriolis_batch, np.zeros((Q.shape[0], 3, n, n)), Q, (QD, kind), ("qd", QD))
            return out[:, M_], out[:, MDOT_], out[:, C_]
        q, qd = Q[0], QD[0]
    shared = robot.kernel_scratch
    out = _zeros(shared.coriolis_shape)  # written by the kernel itself: fresh outputs without a copy
    status = _CORIOLIS_INTO.call(shared.ints, shared.floats, q, qd, kind, out)
    if status:
        settle(robot, status, _CORIOLIS_INTO, shared, q, (("qd", qd),), (kind, out))
    return out[0], out[1], out[2]  # M, Ṁ, C (M_, MDOT_, C_)


# ---- Algorithm 2 ---------------------------------------------------------------------------
def christoffel(robot: RobotModel, q, force: bool = False, data: Data | None = None):
    """Algorithm 2: Christoffel symbols of the first kind, ``Gamma[i, j, k]`` with
    ``C[i, j] = Σ_k Gamma[i, j, k] q̇_k``. For a free joint ``Gamma[:, :, k] = C(q, e_k)``.

    Γ holds nv³ doubles: above 256 MiB it is refused unless ``force=True``. With ``data=`` the
    result is ``data.Gamma``, allocated on the first such call."""
    if robot.__class__ is not RobotModel:  # other coordinates (engine.coordinates)
        from . import coordinates

        return coordinates.christoffel(robot, q, force, data)
    if data is not None:
        try:
            ready = data.robot is robot and data.Gamma is not None
        except AttributeError:
            ready = False
        if not ready:
            check_data(robot, data)
            with_hint(data.ensure_gamma, force)
        if not (type(q) is ND and q.dtype is F64 and q.ndim == 1):
            (q,) = checked(robot, q)
        status = _CHRISTOFFEL.call(data.ints, data.floats, q, data.gamma_out)
        if status:
            settle(robot, status, _CHRISTOFFEL, data, q, (), (data.gamma_out,))
        return data.Gamma
    n = robot.nv
    if not is_vector(q):
        Q, batch = as_states(q, robot.nq, "q", robot.config_names)
        if batch:
            with_hint(check_gamma_bytes, n, Q.shape[0], force)
            check_memory(gamma_bytes_for(n, Q.shape[0]), f"Γ of {Q.shape[0]} states")
            # calloc: pages of structural zeros are never touched
            return run_batch(robot, christoffel_batch, np.zeros((Q.shape[0], n, n, n)), Q, ())
        q = Q[0]
    with_hint(check_gamma_bytes, n, 1, force)
    check_memory(gamma_bytes_for(n), "Γ")
    G = np.zeros((n, n, n))
    shared = robot.kernel_scratch
    status = _CHRISTOFFEL.call(shared.ints, shared.floats, q, G)
    if status:
        settle(robot, status, _CHRISTOFFEL, shared, q, (), (G,))
    return G


def _single(robot, kernel, data, q, result):
    """One state through an entry that takes (ints, floats, q); ``result`` is what it fills."""
    status = kernel.call(data.ints, data.floats, q)
    if status:
        settle(robot, status, kernel, data, q)
    return result


def christoffel_slices(robot: RobotModel, q):
    """Γ one slice at a time, ``(k, Γ[:, :, k] = C(q, e_k))``, in O(nv²) memory whatever the robot."""
    if robot.__class__ is not RobotModel:  # other coordinates (engine.coordinates)
        from . import coordinates

        return coordinates.christoffel_slices(robot, q)
    return _tree_slices(robot, q)


def _tree_slices(robot: RobotModel, q):
    """The generator behind christoffel_slices (a function with ``yield`` cannot also return
    another robot's generator: the return would only end it)."""
    data = Data(robot)
    (q,) = checked(robot, q)
    e = np.zeros(robot.nv)
    for k in range(robot.nv):
        e[:] = 0.0
        e[k] = 1.0
        yield k, coriolis_matrix(robot, q, e, data=data)[2]


def christoffel_largest(robot: RobotModel, q, top: int, tiny: float = 0.0):
    """The ``top`` largest |Γ_ijk| without holding Γ: ``(entries, nonzero)`` with entries
    ``(i, j, k, value)`` largest first and the number of entries with |Γ_ijk| > ``tiny``."""
    return largest_entries(christoffel_slices(robot, q), robot.nv, top, tiny)


# ---- CRBA and RNEA -------------------------------------------------------------------------
def mass_matrix(robot: RobotModel, q, data: Data | None = None):
    """Composite-rigid-body algorithm: M(q) (``data.M`` with ``data=``)."""
    if robot.__class__ is not RobotModel:  # other coordinates (engine.coordinates)
        from . import coordinates

        return coordinates.mass_matrix(robot, q, data)
    if data is not None:
        if getattr(data, "robot", None) is not robot:
            check_data(robot, data)
        if not is_vector(q):
            (q,) = checked(robot, q)
        return _single(robot, _MASS_MATRIX, data, q, data.M)
    n = robot.nv
    if not is_vector(q):
        Q, batch = as_states(q, robot.nq, "q", robot.config_names)
        if batch:
            return run_batch(robot, mass_matrix_batch, np.zeros((Q.shape[0], n, n)), Q, ())
        q = Q[0]
    return mass_matrix(robot, q, robot.shared_data).copy()


def inverse_dynamics(robot: RobotModel, q, qd, qdd, gravity=True, data: Data | None = None):
    """RNEA: τ = M q̈ + C q̇ + g. ``gravity``: True (the robot's: 9.81 m/s² along −z unless its
    file says otherwise, as MJCF can), False, or a 3-vector.
    With ``data=`` the result is ``data.tau``."""
    if robot.__class__ is not RobotModel:  # other coordinates (engine.coordinates)
        from . import coordinates

        return coordinates.inverse_dynamics(robot, q, qd, qdd, gravity, data)
    g = robot.gravity_array if gravity is True else gravity_of(gravity)
    if data is not None:
        if getattr(data, "robot", None) is not robot:
            check_data(robot, data)
        if not (is_vector(q) and is_vector(qd) and is_vector(qdd)):
            q, qd, qdd = checked(robot, q, ("qd", qd), ("qdd", qdd))
        status = _INVERSE_DYNAMICS.call(data.ints, data.floats, q, qd, qdd, g)
        if status:
            settle(robot, status, _INVERSE_DYNAMICS, data, q, (("qd", qd), ("qdd", qdd)), (g,))
        return data.tau
    n = robot.nv
    if not (is_vector(q) and is_vector(qd) and is_vector(qdd)):
        Q, (QD, QDD), batch = stacked_states(robot, q, ("qd", qd), ("qdd", qdd))
        if batch:
            return run_batch(robot, rnea_batch, np.zeros((Q.shape[0], n)), Q, (QD, QDD, g), ("qd", QD), ("qdd", QDD))
        q, qd, qdd = Q[0], QD[0], QDD[0]
    return inverse_dynamics(robot, q, qd, qdd, gravity, robot.shared_data).copy()


def gravity_vector(robot: RobotModel, q, gravity=True, data: Data | None = None):
    """Generalized gravity g(q) = RNEA(q, 0, 0) (``data.g`` with ``data=``)."""
    if robot.__class__ is not RobotModel:  # other coordinates (engine.coordinates)
        from . import coordinates

        return coordinates.gravity_vector(robot, q, gravity, data)
    g = robot.gravity_array if gravity is True else gravity_of(gravity)
    if data is not None:
        if getattr(data, "robot", None) is not robot:
            check_data(robot, data)
        if not is_vector(q):
            (q,) = checked(robot, q)
        status = _GRAVITY.call(data.ints, data.floats, q, g)
        if status:
            settle(robot, status, _GRAVITY, data, q, (), (g,))
        return data.g
    if not is_vector(q):
        Q, batch = as_states(q, robot.nq, "q", robot.config_names)
        if batch:
            Z = np.zeros((Q.shape[0], robot.nv))
            return inverse_dynamics(robot, Q, Z, Z, gravity=gravity)
        q = Q[0]
    return gravity_vector(robot, q, gravity, robot.shared_data).copy()


def placements(robot: RobotModel, q):
    """Every body's placement and every DoF's motion subspace in the computation frame (world axes
    at the first root joint; for a floating base, the base frame at this instant), fresh arrays:
    R (N, 3, 3) and p (N, 3) with a point x of body i at p_i + R_i x, and S (nv, 6) = [ω; v_O] per
    unit joint velocity. Loop closures (engine.loops) are built from these."""
    if not is_vector(q):
        (q,) = checked(robot, q)
    data = robot.shared_data
    _single(robot, _PLACEMENT, data, q, None)
    N, n = robot.n_bodies, robot.nv
    X = data.kernel.blocks[2 * N : 3 * N]
    return X[:, 0:3, 0:3].copy(), X[:, 3, 0:3].copy(), data.kernel.rows[0:n].copy()


def gamma_bytes(robot: RobotModel, K: int = 1) -> int:
    """Bytes of Γ for K states of this robot."""
    return gamma_bytes_for(robot.nv, K)


def check_gamma_size(robot: RobotModel, K: int = 1, force: bool = False) -> None:
    """SizeError when Γ for K states would exceed the memory guard, unless ``force``."""
    check_gamma_bytes(robot.nv, K, force)


__all__ = [
    "Data", "GAMMA_MAX_BYTES", "QuaternionWarning", "check_gamma_size", "check_memory", "christoffel", "christoffel_largest",
    "largest_entries",
    "coriolis_matrix", "gamma_bytes", "gravity_vector", "inverse_dynamics", "mass_matrix",
]
