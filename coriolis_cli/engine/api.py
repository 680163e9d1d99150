"""Public functions: check states, run the compiled kernels, single states or batches.

Every function accepts one state (``q`` of shape (nq,)) or a batch (shape (K, nq)), in which case
results gain a leading K axis and the K states are evaluated in parallel. With ``data=`` (from
``robot.create_data()``, one state at a time) the results are written into the workspace's own
arrays and returned, allocating nothing.

A float64 1-D array takes the fast path: type, dtype and ndim tested here; length, stride,
finiteness and quaternion norms checked inside the compiled code (status RECHECK sends a wrong
length or stride back to the full checks). Anything else (lists, other dtypes, batches) is
converted and checked here first. Both paths give the same messages.
"""

from __future__ import annotations

import warnings

import numpy as np
from numba import typeof

from ..errors import SingularMassMatrixError, SizeError, StateError
from ..model.joints import PLANAR_ANGLE_OFFSET, QUATERNION_OFFSET, joint_type
from ..model.tree import RobotModel
from . import entry
from .batch import chunks, christoffel_batch, coriolis_batch, mass_matrix_batch, rnea_batch
from .data import C_, GAMMA_MAX_BYTES, M_, MDOT_, Data, check_gamma_bytes, check_memory, gamma_bytes_for
from .joints import RECHECK, SINGULAR
from .spatial import CHRISTOFFEL, FACTORIZATIONS, STANDARD_GRAVITY

NO_GRAVITY = np.zeros(3)
NO_GRAVITY.setflags(write=False)

_F64 = np.dtype(np.float64)
_ND = np.ndarray
_zeros = np.zeros
_DEFAULT_FACTORIZATION = "christoffel"  # the same object as coriolis_matrix's default (interned)


class QuaternionWarning(UserWarning):
    """A joint's quaternion (free, spherical) or (cos, sin) pair (planar) was not of unit norm and
    has been normalized."""


class _Compiled:
    """An engine.entry function called through its compiled entry point, past numba's per-call
    type dispatch (35 ns per array argument). The first call goes through the
    dispatcher, which compiles or loads the kernel for these argument types; later calls must
    pass the same types, which the checks in this module guarantee."""

    __slots__ = ("dispatcher", "call")

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self.call = self._first

    def _first(self, *args):
        args = tuple(a.copy() if isinstance(a, np.ndarray) and not a.flags.writeable and a.ndim == 1 else a for a in args)
        result = self.dispatcher(*args)
        compiled = self.dispatcher.overloads.get(tuple(typeof(a) for a in args))
        if compiled is not None:
            self.call = compiled.entry_point
        return result


_CORIOLIS = _Compiled(entry.coriolis)
_CORIOLIS_INTO = _Compiled(entry.coriolis_into)
_CHRISTOFFEL = _Compiled(entry.christoffel)
_MASS_MATRIX = _Compiled(entry.mass_matrix)
_INVERSE_DYNAMICS = _Compiled(entry.inverse_dynamics)
_GRAVITY = _Compiled(entry.gravity_vector)
_PLACEMENT = _Compiled(entry.placement)


# ---- checks -------------------------------------------------------------------------------
def _names_hint(names) -> str:
    return f"{', '.join(names[:8])}{', ...' if len(names) > 8 else ''}"


def _as_states(x, width: int, what: str, names) -> tuple[np.ndarray, bool]:
    """The slow path: any array-like to a C-contiguous float64 (K, width) array, checked."""
    if x is None:
        raise StateError(f"{what} must be numbers, got None")
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError, OverflowError):
        raise StateError(f"{what} must be numbers, in a list of equal rows") from None
    if raw.dtype.kind == "c":  # NumPy would drop the imaginary part with a warning only
        raise StateError(f"{what} must be real numbers, got complex ones")
    if raw.dtype.kind in "USV":
        raise StateError(f"{what} must be numbers, got text")
    try:
        arr = np.array(raw, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise StateError(f"{what} must be numbers") from None
    if arr.ndim == 1:
        batch = False
        arr = arr[None, :]
    elif arr.ndim == 2:
        batch = True
    else:
        raise StateError(f"{what} must have shape ({width},) or (K, {width}), got {arr.shape}")
    if arr.shape[1] != width:
        raise StateError(f"{what} has {arr.shape[1]} values per state, the robot needs {width} ({_names_hint(names)})")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise StateError(_not_finite(what, names[bad[1]], arr[tuple(bad)]))
    return np.ascontiguousarray(arr), batch


def _not_finite(what, name, value) -> str:
    return f"{what}[{name}] is not finite ({value})"


def _is_vector(x) -> bool:
    """What the fast path tests here; length and stride are tested in the compiled code."""
    return type(x) is _ND and x.dtype is _F64 and x.ndim == 1


def _one_state(robot, x, width, what, names) -> np.ndarray:
    arr, batch = _as_states(x, width, what, names)
    if batch:
        raise StateError(f"{what}: data= takes one state at a time, got a batch of {arr.shape[0]}; call without data= for batches")
    return arr[0]


def _factorization(name: str) -> int:
    try:
        return FACTORIZATIONS[name]
    except (KeyError, TypeError):
        raise StateError(f"unknown factorization '{name}' (choose from {', '.join(FACTORIZATIONS)})") from None


def _check_data(robot, data) -> None:
    if not isinstance(data, Data):
        raise StateError("data must come from robot.create_data()")
    if data.robot is not robot:
        raise StateError(f"data was created for robot '{data.robot.name}', not for this robot object ('{robot.name}')")


def _checked(robot: RobotModel, q, *velocities):
    """The slow path for one state: (q, q̇, ...) converted and checked in full, or StateError."""
    out = [_one_state(robot, q, robot.nq, "q", robot.config_names)]
    out += [_one_state(robot, v, robot.nv, what, robot.dof_names) for what, v in velocities]
    return out


def _report(robot: RobotModel, status: int, q, *velocities) -> None:
    """Turn a kernel's status code (engine.joints) into the error or warning it stands for."""
    if status >= SINGULAR:
        raise singular_mass_matrix(robot, [robot.bodies[robot.col_body[status - SINGULAR]].joint.name])
    if status > 0:
        k = status - 1
        for what, arr, names in (("q", q, robot.config_names),) + tuple(
            (w, v, robot.dof_names) for w, v in velocities
        ):
            if k < len(names):
                raise StateError(_not_finite(what, names[k], arr[k]))
            k -= len(names)
        raise StateError("a state is not finite")  # unreachable: the code names an entry
    b = (-status - 2) // 2
    joint = robot.bodies[b].joint.name
    qs, jt = int(robot.q_start[b]), robot.bodies[b].joint.type
    Q = np.atleast_2d(q)
    if jt == "planar":
        what, part = "(cos, sin) pair", Q[:, qs + PLANAR_ANGLE_OFFSET : qs + PLANAR_ANGLE_OFFSET + 2]
    else:
        what, part = "quaternion", Q[:, qs + QUATERNION_OFFSET[joint_type(jt).code] :][:, :4]
    if status % 2 == 0:
        raise StateError(f"the {what} of joint '{joint}' is zero")
    norm = np.linalg.norm(part, axis=1)
    worst = norm[np.argmax(np.abs(norm - 1.0))]
    warnings.warn(f"the {what} of joint '{joint}' has norm {worst:.6g}; normalized", QuaternionWarning, stacklevel=3)


def singular_mass_matrix(robot, joints) -> SingularMassMatrixError:
    """The error for an M(q) that cannot be inverted: the joints found, and every joint the model
    knows to move no mass, with the lock that makes the robot computable as the CLI's hint."""
    from ..model.lock import lock_option, lock_patterns

    structural = set(joints) <= set(robot.singular_joints)
    names = tuple(dict.fromkeys([*robot.singular_joints, *joints])) if structural else tuple(dict.fromkeys(joints))
    movable = [b.joint.name for b in robot.bodies]
    shown = ", ".join(f"'{n}'" for n in names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    one = len(names) == 1
    patterns = lock_patterns(names, movable)
    if structural:
        why = f"joint{'' if one else 's'} {shown} {'moves' if one else 'move'} no mass"
        remedy = "or give the links they carry an inertia"
    else:
        why = (f"at this configuration joint{'' if one else 's'} {shown} {'moves' if one else 'move'} only what "
               "other joints move (aligned axes with no inertia between them)")
        remedy = "or give the links between them an inertia"
    return SingularMassMatrixError(
        f"M(q) is singular: {why}, so q̈ = M⁻¹(τ − C q̇ − g) is not defined; lock {'it' if one else 'them'} "
        f"(lock={patterns!r}) {remedy}", joints=names, hint="pass " + lock_option(patterns))


def _settle(robot: RobotModel, status: int, kernel, data, q, velocities=(), extra=()) -> None:
    """After ``kernel.call(data.ints, data.floats, q, *velocity values, *extra)`` (engine.entry) did
    not return OK: on RECHECK
    (a wrong length or stride) convert and check the state in full and call again; then report
    what remains. ``velocities``: (name, value) pairs. (No closure is passed: a lambda would make
    the caller's locals cells, allocated on every call of the hot path.)"""
    if status == RECHECK:
        q, *values = _checked(robot, q, *velocities)
        velocities = tuple((what, v) for (what, _), v in zip(velocities, values))
        status = kernel.call(data.ints, data.floats, q, *values, *extra)
    if status:
        _report(robot, status, q, *velocities)


def _report_batch(robot, status: np.ndarray, Q, *velocities) -> None:
    bad = np.flatnonzero((status > 0) | ((status < 0) & (status % 2 == 0)))
    if bad.size:
        s = int(bad[0])
        _report(robot, int(status[s]), Q[s], *((w, v[s]) for w, v in velocities))
    warned = np.flatnonzero(status < 0)
    if warned.size:
        _report(robot, int(status[warned[0]]), Q)


# A batch runs in calls of about this many floating-point operations (≈ 0.1 s), returning to
# Python between them, so that Ctrl-C and SIGTERM end even a batch of millions of states promptly.
BATCH_CALL_WORK = 2e8


def _batch(robot, batch_kernel, out, Q, inputs, *velocities):
    """K states in parallel: ``batch_kernel(model, Q, *inputs, chunks, out, status)`` over slices
    of the states (BATCH_CALL_WORK), then the first failure or warning reported as for one state.
    Read-only inputs (the gravity constants) are passed as copies: numba types them apart, and the
    kernels would be compiled twice. ``velocities`` are (name, array) pairs of per-state inputs."""
    K = Q.shape[0]
    status = np.zeros(K, dtype=np.int64)
    inputs = tuple(x.copy() if type(x) is _ND and not x.flags.writeable else x for x in inputs)
    per_state = {id(v) for _, v in velocities}
    step = max(1, int(BATCH_CALL_WORK / (50.0 * max(out[0].size if K else 1, robot.nv ** 2))))
    model = robot.kernel_scratch.model
    for s in range(0, K, step):
        e = min(K, s + step)
        part = tuple(x[s:e] if id(x) in per_state else x for x in inputs)
        batch_kernel(model, Q[s:e], *part, chunks(e - s), out[s:e], status[s:e])
    if status.any():
        _report_batch(robot, status, Q, *velocities)
    return out


def _velocities(robot, x, what, K):
    X, _ = _as_states(x, robot.nv, what, robot.dof_names)
    if X.shape[0] != K:
        raise StateError(f"{what} holds {X.shape[0]} states but q holds {K}")
    return X


def _stacked(robot, q, *velocities):
    """The slow path of the calls that take batches: q as (K, nq) and each (name, value) as
    (K, nv), converted and checked, and whether q was a batch."""
    Q, batch = _as_states(q, robot.nq, "q", robot.config_names)
    return Q, [_velocities(robot, x, what, Q.shape[0]) for what, x in velocities], batch


def _gravity(gravity) -> np.ndarray:
    if gravity is True:
        return STANDARD_GRAVITY
    if gravity is False or gravity is None:
        return NO_GRAVITY
    try:
        g = np.array(gravity, dtype=float)
    except (TypeError, ValueError, OverflowError):
        g = None
    if g is None or g.shape != (3,) or not np.all(np.isfinite(g)):
        raise StateError("gravity must be True, False or a finite 3-vector")
    return g


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
            kind = _factorization(factorization)
    if data is not None:
        try:
            same = data.robot is robot
        except AttributeError:
            same = False
        if not (same and type(q) is _ND and type(qd) is _ND and q.dtype is _F64 and qd.dtype is _F64 and q.ndim == 1
                and qd.ndim == 1):
            _check_data(robot, data)
            q, qd = _checked(robot, q, ("qd", qd))
        status = _CORIOLIS.call(data.ints, data.floats, q, qd, kind)
        if status:
            _settle(robot, status, _CORIOLIS, data, q, (("qd", qd),), (kind,))
        return data.coriolis_outputs
    n = robot.nv
    if not (type(q) is _ND and type(qd) is _ND and q.dtype is _F64 and qd.dtype is _F64 and q.ndim == 1 and qd.ndim == 1):
        Q, (QD,), batch = _stacked(robot, q, ("qd", qd))
        if batch:
            check_memory(24 * Q.shape[0] * n * n, f"M, Ṁ and C of {Q.shape[0]} states")
            out = _batch(robot, coriolis_batch, np.zeros((Q.shape[0], 3, n, n)), Q, (QD, kind), ("qd", QD))
            return out[:, M_], out[:, MDOT_], out[:, C_]
        q, qd = Q[0], QD[0]
    shared = robot.kernel_scratch
    out = _zeros(shared.coriolis_shape)  # written by the kernel itself: fresh outputs without a copy
    status = _CORIOLIS_INTO.call(shared.ints, shared.floats, q, qd, kind, out)
    if status:
        _settle(robot, status, _CORIOLIS_INTO, shared, q, (("qd", qd),), (kind, out))
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
            _check_data(robot, data)
            _with_hint(data.ensure_gamma, force)
        if not (type(q) is _ND and q.dtype is _F64 and q.ndim == 1):
            (q,) = _checked(robot, q)
        status = _CHRISTOFFEL.call(data.ints, data.floats, q, data.gamma_out)
        if status:
            _settle(robot, status, _CHRISTOFFEL, data, q, (), (data.gamma_out,))
        return data.Gamma
    n = robot.nv
    if not _is_vector(q):
        Q, batch = _as_states(q, robot.nq, "q", robot.config_names)
        if batch:
            _with_hint(check_gamma_bytes, n, Q.shape[0], force)
            check_memory(gamma_bytes_for(n, Q.shape[0]), f"Γ of {Q.shape[0]} states")
            # calloc: pages of structural zeros are never touched
            return _batch(robot, christoffel_batch, np.zeros((Q.shape[0], n, n, n)), Q, ())
        q = Q[0]
    _with_hint(check_gamma_bytes, n, 1, force)
    check_memory(gamma_bytes_for(n), "Γ")
    G = np.zeros((n, n, n))
    shared = robot.kernel_scratch
    status = _CHRISTOFFEL.call(shared.ints, shared.floats, q, G)
    if status:
        _settle(robot, status, _CHRISTOFFEL, shared, q, (), (G,))
    return G


def _with_hint(check, *args):
    try:
        check(*args)
    except SizeError as e:
        raise SizeError(f"{e}; pass force=True to compute it anyway, or list its largest entries with "
                        "christoffel_largest") from None


def _single(robot, kernel, data, q, result):
    """One state through an entry that takes (ints, floats, q); ``result`` is what it fills."""
    status = kernel.call(data.ints, data.floats, q)
    if status:
        _settle(robot, status, kernel, data, q)
    return result


def largest_entries(slices, n: int, top: int, tiny: float = 0.0):
    """The ``top`` largest |Γ_ijk| from Γ's slices ``(k, Γ[:, :, k])``, largest first, and the number
    of entries with |Γ_ijk| > ``tiny`` (entries at or below it are not listed). The one selection
    for dense and streamed Γ alike."""
    best_v = np.zeros(0)
    best_i = np.zeros((0, 3), dtype=np.int64)
    nonzero = 0
    for k, slice_k in slices:
        flat = np.ravel(slice_k)
        nonzero += int(np.count_nonzero(np.abs(flat) > tiny))
        m = min(top, flat.size)
        idx = np.argpartition(-np.abs(flat), m - 1)[:m]
        ij = np.stack([idx // n, idx % n, np.full(m, k)], axis=1)
        best_v = np.concatenate([best_v, flat[idx]])
        best_i = np.concatenate([best_i, ij])
        if len(best_v) > top:
            keep = np.argpartition(-np.abs(best_v), top - 1)[:top]
            best_v, best_i = best_v[keep], best_i[keep]
    keep = np.abs(best_v) > tiny
    best_v, best_i = best_v[keep], best_i[keep]
    order = np.lexsort((best_i[:, 2], best_i[:, 1], best_i[:, 0], -np.abs(best_v)))
    entries = [(int(best_i[o, 0]), int(best_i[o, 1]), int(best_i[o, 2]), float(best_v[o])) for o in order]
    return entries, nonzero


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
    (q,) = _checked(robot, q)
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
            _check_data(robot, data)
        if not _is_vector(q):
            (q,) = _checked(robot, q)
        return _single(robot, _MASS_MATRIX, data, q, data.M)
    n = robot.nv
    if not _is_vector(q):
        Q, batch = _as_states(q, robot.nq, "q", robot.config_names)
        if batch:
            return _batch(robot, mass_matrix_batch, np.zeros((Q.shape[0], n, n)), Q, ())
        q = Q[0]
    return mass_matrix(robot, q, robot.shared_data).copy()


def inverse_dynamics(robot: RobotModel, q, qd, qdd, gravity=True, data: Data | None = None):
    """RNEA: τ = M q̈ + C q̇ + g. ``gravity``: True (the robot's: 9.81 m/s² along −z unless its
    file says otherwise, as MJCF can), False, or a 3-vector.
    With ``data=`` the result is ``data.tau``."""
    if robot.__class__ is not RobotModel:  # other coordinates (engine.coordinates)
        from . import coordinates

        return coordinates.inverse_dynamics(robot, q, qd, qdd, gravity, data)
    g = robot.gravity_array if gravity is True else _gravity(gravity)
    if data is not None:
        if getattr(data, "robot", None) is not robot:
            _check_data(robot, data)
        if not (_is_vector(q) and _is_vector(qd) and _is_vector(qdd)):
            q, qd, qdd = _checked(robot, q, ("qd", qd), ("qdd", qdd))
        status = _INVERSE_DYNAMICS.call(data.ints, data.floats, q, qd, qdd, g)
        if status:
            _settle(robot, status, _INVERSE_DYNAMICS, data, q, (("qd", qd), ("qdd", qdd)), (g,))
        return data.tau
    n = robot.nv
    if not (_is_vector(q) and _is_vector(qd) and _is_vector(qdd)):
        Q, (QD, QDD), batch = _stacked(robot, q, ("qd", qd), ("qdd", qdd))
        if batch:
            return _batch(robot, rnea_batch, np.zeros((Q.shape[0], n)), Q, (QD, QDD, g), ("qd", QD), ("qdd", QDD))
        q, qd, qdd = Q[0], QD[0], QDD[0]
    return inverse_dynamics(robot, q, qd, qdd, gravity, robot.shared_data).copy()


def gravity_vector(robot: RobotModel, q, gravity=True, data: Data | None = None):
    """Generalized gravity g(q) = RNEA(q, 0, 0) (``data.g`` with ``data=``)."""
    if robot.__class__ is not RobotModel:  # other coordinates (engine.coordinates)
        from . import coordinates

        return coordinates.gravity_vector(robot, q, gravity, data)
    g = robot.gravity_array if gravity is True else _gravity(gravity)
    if data is not None:
        if getattr(data, "robot", None) is not robot:
            _check_data(robot, data)
        if not _is_vector(q):
            (q,) = _checked(robot, q)
        status = _GRAVITY.call(data.ints, data.floats, q, g)
        if status:
            _settle(robot, status, _GRAVITY, data, q, (), (g,))
        return data.g
    if not _is_vector(q):
        Q, batch = _as_states(q, robot.nq, "q", robot.config_names)
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
    if not _is_vector(q):
        (q,) = _checked(robot, q)
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
