"""Public functions: validate states, run the compiled kernels, single states or batches.

Every function accepts one state (``q`` of shape (nq,)) or a batch (shape (K, nq)), in which case
results gain a leading K axis and the K states are evaluated in parallel.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import SizeError, StateError
from ..model.tree import FREE, RobotModel
from .batch import chunks, christoffel_batch, coriolis_batch, mass_matrix_batch, rnea_batch
from .christoffel import christoffel_kernel
from .coriolis import coriolis_kernel
from .crba import mass_matrix_kernel
from .layout import Workspace, pack, workspace_size
from .rnea import rnea_kernel
from .spatial import FACTORIZATIONS

STANDARD_GRAVITY = np.array([0.0, 0.0, -9.81])
# Γ holds nv³ doubles; above this many bytes we refuse unless asked with force=True.
GAMMA_MAX_BYTES = 256 * 2**20
QUATERNION_TOLERANCE = 1e-6


class QuaternionWarning(UserWarning):
    """A free joint's quaternion was not of unit norm and has been normalized."""


def _as_states(x, width: int, what: str, names) -> tuple[np.ndarray, bool]:
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise StateError(f"{what} must be numbers") from None
    if arr.ndim == 1:
        batch = False
        arr = arr[None, :]
    elif arr.ndim == 2:
        batch = True
    else:
        raise StateError(f"{what} must have shape ({width},) or (K, {width}), got {arr.shape}")
    if arr.shape[1] != width:
        raise StateError(f"{what} has {arr.shape[1]} values per state, the robot needs {width} ({', '.join(names[:8])}{', ...' if len(names) > 8 else ''})")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise StateError(f"{what}[{names[bad[1]]}] is not finite ({arr[tuple(bad)]})")
    return np.ascontiguousarray(arr), batch


def _normalize_quaternions(robot: RobotModel, Q: np.ndarray) -> np.ndarray:
    f = robot.flat
    for i in np.flatnonzero(f.jtype == FREE):
        qs = int(f.q_start[i])
        quat = Q[:, qs + 3 : qs + 7]
        norm = np.linalg.norm(quat, axis=1)
        if np.any(norm < 1e-12):
            raise StateError(f"the quaternion of joint '{robot.bodies[i].joint.name}' is zero")
        if np.any(np.abs(norm - 1.0) > QUATERNION_TOLERANCE):
            warnings.warn(
                f"the quaternion of joint '{robot.bodies[i].joint.name}' has norm {norm.max():.6g}; normalized",
                QuaternionWarning,
                stacklevel=3,
            )
            Q = Q.copy()
            Q[:, qs + 3 : qs + 7] = quat / norm[:, None]
    return Q


def _q(robot, q):
    Q, batch = _as_states(q, robot.nq, "q", robot.config_names)
    return _normalize_quaternions(robot, Q), batch


def _v(robot, x, what, K):
    X, _ = _as_states(x, robot.nv, what, robot.dof_names)
    if X.shape[0] != K:
        raise StateError(f"{what} holds {X.shape[0]} states but q holds {K}")
    return X


def _factorization(name: str) -> int:
    try:
        return FACTORIZATIONS[name]
    except KeyError:
        raise StateError(f"unknown factorization '{name}' (choose from {', '.join(FACTORIZATIONS)})") from None


def coriolis_matrix(robot: RobotModel, q, qd, factorization: str = "christoffel"):
    """Algorithm 1: ``M, Mdot, C`` at (q, q̇). ``factorization`` selects the body-level B:
    ``christoffel`` (eq. 10, C = Σ_k Γ[:, :, k] q̇_k) or ``featherstone`` (eq. 9, admissible only)."""
    kind = _factorization(factorization)
    Q, batch = _q(robot, q)
    QD = _v(robot, qd, "qd", Q.shape[0])
    p = pack(robot)
    K, n = Q.shape[0], robot.nv
    M, Mdot, C = (np.zeros((K, n, n)) for _ in range(3))
    if batch:
        coriolis_batch(p.ints, p.cols, p.geom, Q, QD, kind, workspace_size(p.n_bodies, n), chunks(K), M, Mdot, C)
        return M, Mdot, C
    ws = Workspace(robot).buffer
    coriolis_kernel(p.ints, p.cols, p.geom, Q[0], QD[0], kind, ws, M[0], Mdot[0], C[0], False)
    return M[0], Mdot[0], C[0]


def gamma_bytes(robot: RobotModel, K: int = 1) -> int:
    return 8 * K * robot.nv**3


def check_gamma_size(robot: RobotModel, K: int = 1, force: bool = False) -> None:
    need = gamma_bytes(robot, K)
    if need > GAMMA_MAX_BYTES and not force:
        raise SizeError(
            f"Γ of this robot holds nv³ = {robot.nv}³ = {K * robot.nv**3:,} doubles ({need / 2**20:,.0f} MiB), "
            f"above the {GAMMA_MAX_BYTES // 2**20} MiB limit; the table format lists its largest entries without "
            "holding it (coriolis compute --what Gamma --top N), or pass --force (force=True) to compute it anyway"
        )


def christoffel_largest(robot: RobotModel, q, top: int):
    """The ``top`` largest |Γ_ijk| without holding Γ: slice by slice, Γ[:, :, k] = C(q, e_k).

    Returns ``(entries, nonzero)`` with entries ``(i, j, k, value)`` largest first and the number of
    entries that are not exactly zero. Memory is O(nv²) whatever the robot.
    """
    Q, batch = _q(robot, q)
    if batch:
        raise StateError("christoffel_largest takes one state")
    p = pack(robot)
    n = robot.nv
    ws = Workspace(robot).buffer
    M, Mdot, C = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    e = np.zeros(n)
    best_v = np.zeros(0)
    best_i = np.zeros((0, 3), dtype=np.int64)
    nonzero = 0
    for k in range(n):
        e[:] = 0.0
        e[k] = 1.0
        coriolis_kernel(p.ints, p.cols, p.geom, Q[0], e, 0, ws, M, Mdot, C, False)  # same zeros every k
        flat = C.ravel()
        nonzero += int(np.count_nonzero(flat))
        m = min(top, flat.size)
        idx = np.argpartition(-np.abs(flat), m - 1)[:m]
        ij = np.stack([idx // n, idx % n, np.full(m, k)], axis=1)
        best_v = np.concatenate([best_v, flat[idx]])
        best_i = np.concatenate([best_i, ij])
        if len(best_v) > top:
            keep = np.argpartition(-np.abs(best_v), top - 1)[:top]
            best_v, best_i = best_v[keep], best_i[keep]
    order = np.argsort(-np.abs(best_v), kind="stable")
    entries = [(int(best_i[o, 0]), int(best_i[o, 1]), int(best_i[o, 2]), float(best_v[o])) for o in order]
    return entries, nonzero


def christoffel(robot: RobotModel, q, force: bool = False):
    """Algorithm 2: Christoffel symbols of the first kind, ``Gamma[i, j, k]`` with
    ``C[i, j] = Σ_k Gamma[i, j, k] q̇_k``. For a free joint ``Gamma[:, :, k] = C(q, e_k)``."""
    Q, batch = _q(robot, q)
    check_gamma_size(robot, Q.shape[0], force)
    p = pack(robot)
    K, n = Q.shape[0], robot.nv
    G = np.zeros((K, n, n, n))  # calloc: pages of structural zeros are never touched
    if batch:
        christoffel_batch(p.ints, p.cols, p.geom, Q, workspace_size(p.n_bodies, n), chunks(K), G)
        return G
    ws = Workspace(robot).buffer
    christoffel_kernel(p.ints, p.cols, p.geom, Q[0], ws, G[0], False)
    return G[0]


def mass_matrix(robot: RobotModel, q):
    """Composite-rigid-body algorithm: M(q)."""
    Q, batch = _q(robot, q)
    p = pack(robot)
    K, n = Q.shape[0], robot.nv
    M = np.zeros((K, n, n))
    if batch:
        mass_matrix_batch(p.ints, p.cols, p.geom, Q, workspace_size(p.n_bodies, n), chunks(K), M)
        return M
    mass_matrix_kernel(p.ints, p.cols, p.geom, Q[0], Workspace(robot).buffer, M[0], False)
    return M[0]


def _gravity(gravity) -> np.ndarray:
    if gravity is True:
        return STANDARD_GRAVITY.copy()
    if gravity is False or gravity is None:
        return np.zeros(3)
    g = np.asarray(gravity, dtype=float)
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise StateError("gravity must be True, False or a finite 3-vector")
    return g


def inverse_dynamics(robot: RobotModel, q, qd, qdd, gravity=True):
    """RNEA: τ = M q̈ + C q̇ + g. ``gravity``: True (9.81 m/s² along −z), False, or a 3-vector."""
    Q, batch = _q(robot, q)
    K = Q.shape[0]
    QD = _v(robot, qd, "qd", K)
    QDD = _v(robot, qdd, "qdd", K)
    g = _gravity(gravity)
    p = pack(robot)
    tau = np.empty((K, robot.nv))
    if batch:
        rnea_batch(p.ints, p.cols, p.geom, Q, QD, QDD, g, workspace_size(p.n_bodies, robot.nv), chunks(K), tau)
        return tau
    rnea_kernel(p.ints, p.cols, p.geom, Q[0], QD[0], QDD[0], g, Workspace(robot).buffer, tau[0])
    return tau[0]


def gravity_vector(robot: RobotModel, q, gravity=True):
    """Generalized gravity g(q) = RNEA(q, 0, 0)."""
    Q, batch = _q(robot, q)
    Z = np.zeros((Q.shape[0], robot.nv))
    tau = inverse_dynamics(robot, Q, Z, Z, gravity=gravity)
    return tau if batch else tau[0]


__all__ = [
    "Workspace", "christoffel", "christoffel_largest", "check_gamma_size", "coriolis_matrix", "gamma_bytes", "gravity_vector",
    "inverse_dynamics", "mass_matrix",
]
