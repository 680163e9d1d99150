"""The calling machinery under the public functions (engine.tree_calls, the robots in other
coordinates and the loop solver): the compiled-entry wrapper, the checks of states and
workspaces, the turn of a kernel's status code into an error, batches, and the gravity and
factorization arguments. Pinocchio keeps the same apart from its algorithms (``check.hpp``).

A float64 1-D array takes the fast path: type, dtype and ndim tested by the callers; length,
stride, finiteness and quaternion norms checked inside the compiled code (status RECHECK sends a
wrong length or stride back to the full checks here). Anything else (lists, other dtypes,
batches) is converted and checked here first. Both paths give the same messages.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
from numba import get_num_threads, typeof

from ..errors import SingularMassMatrixError, SizeError, StateError
from ..model.joints import PLANAR_ANGLE_OFFSET, QUATERNION_OFFSET, joint_type
from ..model.tree import RobotModel
from .data import Data
from .forward_dynamics import PIVOT_SHARE
from .joints import RECHECK, SINGULAR
from .spatial import FACTORIZATIONS, STANDARD_GRAVITY
from .workspaces import kernel_scratch

NO_GRAVITY = np.zeros(3)
NO_GRAVITY.setflags(write=False)

F64 = np.dtype(np.float64)
ND = np.ndarray


class QuaternionWarning(UserWarning):
    """A joint's quaternion (free, spherical) or (cos, sin) pair (planar) was not of unit norm and
    has been normalized."""


class Compiled:
    """A kernel's ``*_entry`` function (e.g. coriolis.coriolis_entry) called through its compiled entry point, past numba's per-call
    type dispatch (35 ns per array argument). The first call goes through the
    dispatcher, which compiles or loads the kernel for these argument types; later calls must
    pass the same types, which the checks in this module guarantee.

    ``strict`` is for the control calls, where those checks in Python cost more than the kernel's
    own work on a small arm: the dispatcher checks the argument types in compiled code and calls
    the one compiled kernel, and anything else (another dtype, a stride, a read-only array, a
    list) raises TypeError instead of compiling, for the caller's checked path to take over."""

    __slots__ = ("dispatcher", "call", "strict")

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self.call = self._first
        self.strict = self._first_strict

    def _first(self, *args):
        args = tuple(a.copy() if isinstance(a, np.ndarray) and not a.flags.writeable and a.ndim == 1 else a for a in args)
        result = self.dispatcher(*args)
        compiled = self.dispatcher.overloads.get(tuple(typeof(a) for a in args))
        if compiled is not None:
            self.call = compiled.entry_point
        return result

    def _first_strict(self, address, *arguments):
        """Before the kernel is compiled: the type checks in Python, once, for the types the
        checked path gives (vectors of float64, contiguous, writable; integer codes and flags). Then the
        dispatcher checks them, and may never compile another specialization; entries only ever
        called through ``call`` keep theirs compiling."""
        for x in arguments:
            if type(x) is int or type(x) is bool:
                continue
            if not (is_contiguous_vector(x) and x.flags.writeable):
                raise TypeError("not the compiled kernel's types")
        result = self._first(address, *arguments)
        if len(self.dispatcher.overloads) == 1:
            self.dispatcher.disable_compile()
            self.strict = self.dispatcher
        return result


# ---- checks -------------------------------------------------------------------------------
def names_hint(names) -> str:
    return f"{', '.join(names[:8])}{', ...' if len(names) > 8 else ''}"


def as_states(x, width: int, what: str, names) -> tuple[np.ndarray, bool]:
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
        raise StateError(f"{what} has {arr.shape[1]} values per state, the robot needs {width} ({names_hint(names)})")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise StateError(not_finite(what, names[bad[1]], arr[tuple(bad)]))
    return np.ascontiguousarray(arr), batch


def not_finite(what, name, value) -> str:
    return f"{what}[{name}] is not finite ({value})"


def is_vector(x) -> bool:
    """What the fast path tests here; length and stride are tested in the compiled code."""
    return type(x) is ND and x.dtype is F64 and x.ndim == 1


def is_contiguous_vector(x) -> bool:
    """is_vector, contiguous: the one layout an entry that ``Compiled.strict`` serves is compiled for."""
    return type(x) is ND and x.dtype is F64 and x.ndim == 1 and x.flags.c_contiguous


def one_state(robot, x, width, what, names) -> np.ndarray:
    arr, batch = as_states(x, width, what, names)
    if batch:
        raise StateError(f"{what}: data= takes one state at a time, got a batch of {arr.shape[0]}; call without data= for batches")
    return arr[0]


def factorization_code(name: str) -> int:
    try:
        return FACTORIZATIONS[name]
    except (KeyError, TypeError):
        raise StateError(f"unknown factorization '{name}' (choose from {', '.join(FACTORIZATIONS)})") from None


def check_data(robot, data) -> None:
    if not isinstance(data, Data):
        raise StateError("data must come from robot.create_data()")
    if data.robot is not robot:
        raise StateError(f"data was created for robot '{data.robot.name}', not for this robot object ('{robot.name}')")


def checked(robot: RobotModel, q, *velocities):
    """The slow path for one state: (q, q̇, ...) converted and checked in full, or StateError."""
    out = [one_state(robot, q, robot.nq, "q", robot.config_names)]
    out += [one_state(robot, v, robot.nv, what, robot.dof_names) for what, v in velocities]
    return out


def report_status(robot: RobotModel, status: int, q, *velocities) -> None:
    """Turn a kernel's status code (engine.joints) into the error or warning it stands for."""
    if status >= SINGULAR:
        raise singular_mass_matrix(robot, [robot.bodies[robot.col_body[status - SINGULAR]].joint.name])
    if status > 0:
        k = status - 1
        for what, arr, names in (("q", q, robot.config_names),) + tuple(
            (w, v, robot.dof_names) for w, v in velocities
        ):
            if k < len(names):
                raise StateError(not_finite(what, names[k], arr[k]))
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


def settle(robot: RobotModel, status: int, kernel, data, q, velocities=(), extra=(), address: bool = False) -> None:
    """After ``kernel.call(data.ints, data.floats, q, *velocity values, *extra)`` (a kernel's
    ``*_entry``; with ``address``, ``kernel.call(data.address, q, ...)``) did not return OK: on
    RECHECK (a wrong length or stride) convert and check the state in full and call again; then
    report what remains. ``velocities``: (name, value) pairs. (No closure is passed: a lambda would
    make the caller's locals cells, allocated on every call of the hot path.)"""
    if status == RECHECK:
        q, *values = checked(robot, q, *velocities)
        velocities = tuple((what, v) for (what, _), v in zip(velocities, values))
        head = (data.address,) if address else (data.ints, data.floats)
        status = kernel.call(*head, q, *values, *extra)
    if status:
        report_status(robot, status, q, *velocities)


def settle_core(robot: RobotModel, status: int, function, workspace, q, velocities=(), extra=()) -> None:
    """settle for the compiled core's functions, called as ``function(workspace, q, *velocity
    values, *extra)``: on RECHECK the state converted and checked in full and the call made again,
    then what remains reported."""
    if status == RECHECK:
        q, *values = checked(robot, q, *velocities)
        velocities = tuple((what, v) for (what, _), v in zip(velocities, values))
        status = function(workspace, q, *values, *extra)
    if status:
        report_status(robot, status, q, *velocities)


def batch_threads() -> int:
    """Threads a batch runs on: CORIOLIS_THREADS, else numba's count (NUMBA_NUM_THREADS)."""
    value = os.environ.get("CORIOLIS_THREADS", "")
    return max(1, int(value)) if value.isdigit() else get_num_threads()


def run_core_batch(robot, function, out, Q, inputs, *velocities):
    """run_batch for the compiled core: ``function(workspace, Q, *inputs, out, status, threads)``
    over slices of the states (BATCH_CALL_WORK), returning to Python between them for Ctrl-C."""
    K = Q.shape[0]
    status = np.zeros(K, dtype=np.int64)
    Q = np.ascontiguousarray(Q)
    inputs = tuple(np.ascontiguousarray(x) if type(x) is ND else x for x in inputs)
    step = max(1, int(BATCH_CALL_WORK / (50.0 * max(out[0].size if K else 1, robot.nv ** 2))))
    workspace, threads = kernel_scratch(robot).core, batch_threads()
    for s in range(0, K, step):
        e = min(K, s + step)
        part = tuple(x[s:e] if type(x) is ND and x.ndim == 2 else x for x in inputs)  # per state: (K, nv)
        function(workspace, Q[s:e], *part, out[s:e], status[s:e], threads)
    if status.any():
        report_batch(robot, status, Q, *velocities)
    return out


def report_batch(robot, status: np.ndarray, Q, *velocities) -> None:
    bad = np.flatnonzero((status > 0) | ((status < 0) & (status % 2 == 0)))
    if bad.size:
        s = int(bad[0])
        report_status(robot, int(status[s]), Q[s], *((w, v[s]) for w, v in velocities))
    warned = np.flatnonzero(status < 0)
    if warned.size:
        report_status(robot, int(status[warned[0]]), Q)


# A batch runs in calls of about this many floating-point operations (≈ 0.1 s), returning to
# Python between them, so that Ctrl-C and SIGTERM end even a batch of millions of states promptly.
def chunks(K: int) -> int:
    """Work items for a batch's prange: a few per thread so uneven states still balance."""
    return max(1, min(K, 4 * get_num_threads()))


BATCH_CALL_WORK = 2e8


def run_batch(robot, batch_kernel, out, Q, inputs, *velocities):
    """K states in parallel: ``batch_kernel(model, Q, *inputs, chunks, out, status)`` over slices
    of the states (BATCH_CALL_WORK), then the first failure or warning reported as for one state.
    Read-only inputs (the gravity constants) are passed as copies: numba types them apart, and the
    kernels would be compiled twice. ``velocities`` are (name, array) pairs of per-state inputs."""
    K = Q.shape[0]
    status = np.zeros(K, dtype=np.int64)
    inputs = tuple(x.copy() if type(x) is ND and not x.flags.writeable else x for x in inputs)
    per_state = {id(v) for _, v in velocities}
    step = max(1, int(BATCH_CALL_WORK / (50.0 * max(out[0].size if K else 1, robot.nv ** 2))))
    model = kernel_scratch(robot).model
    for s in range(0, K, step):
        e = min(K, s + step)
        part = tuple(x[s:e] if id(x) in per_state else x for x in inputs)
        batch_kernel(model, Q[s:e], *part, chunks(e - s), out[s:e], status[s:e])
    if status.any():
        report_batch(robot, status, Q, *velocities)
    return out


def velocities_of(robot, x, what, K):
    X, _ = as_states(x, robot.nv, what, robot.dof_names)
    if X.shape[0] != K:
        raise StateError(f"{what} holds {X.shape[0]} states but q holds {K}")
    return X


def stacked_states(robot, q, *velocities):
    """The slow path of the calls that take batches: q as (K, nq) and each (name, value) as
    (K, nv), converted and checked, and whether q was a batch."""
    Q, batch = as_states(q, robot.nq, "q", robot.config_names)
    return Q, [velocities_of(robot, x, what, Q.shape[0]) for what, x in velocities], batch


def gravity_of(gravity) -> np.ndarray:
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


def with_hint(check, *args):
    try:
        check(*args)
    except SizeError as e:
        raise SizeError(f"{e}; pass force=True to compute it anyway, or list its largest entries with "
                        "christoffel_largest") from None


def positive_definite(M: np.ndarray) -> bool:
    """M positive definite to working precision: Cholesky of D^-½ M D^-½ (D = diag M) with every
    pivot above PIVOT_SHARE, the rule the tree's LTDL applies to its own pivots. The scaling makes
    the test independent of units and of how heavy each DoF is (a 1e-7 kg m² finger beside a
    10 kg m² torso)."""
    d = np.diag(M)
    if not np.all(d > 0):
        return False
    s = 1.0 / np.sqrt(d)
    try:
        L = np.linalg.cholesky(M * np.outer(s, s))
    except np.linalg.LinAlgError:
        return False
    return bool(np.min(np.diag(L)) ** 2 > PIVOT_SHARE)
