"""The calling machinery under the public functions (engine.algorithms' one path, the robots in
other coordinates and the loop solver): the checks of states and workspaces, the turn of the core's
status code into an error, batches on threads, and the gravity and factorization arguments.
Pinocchio keeps the same apart from its algorithms (``check.hpp``).

Every argument goes to the compiled core as it is: a float64 vector of the right length and unit
stride is used in place, and the core checks finiteness and quaternion norms; anything else makes
the core return RECHECK, and the state is converted and checked in full here (``settle``), with
the messages that name the DoF. Both paths give the same results and messages.
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np

from ..errors import SingularMassMatrixError, StateError
from ..model.description import listed
from ..model.joints import PLANAR_ANGLE_OFFSET, QUATERNION_OFFSET, joint_type
from ..model.tree import RobotModel
from .conventions import FACTORIZATIONS, OVERFLOW, PIVOT_SHARE, RECHECK, SINGULAR, STANDARD_GRAVITY
from .data import Data
from .workspaces import kernel_scratch

NO_GRAVITY = np.zeros(3)
NO_GRAVITY.setflags(write=False)

F64 = np.dtype(np.float64)
ND = np.ndarray


class QuaternionWarning(UserWarning):
    """Warned when a joint's quaternion or (cos, sin) pair in q is not of unit norm and was normalized.

    A free or spherical joint's orientation in q is a quaternion (x, y, z, w) and a planar joint's
    angle a (cos θ, sin θ) pair. The dynamics functions accept one whose norm is off, normalize it
    and warn with this class, naming the joint and the norm found; the results are those at the
    normalized configuration. A zero quaternion cannot be normalized and raises a
    [StateError][coriolis_cli.StateError] instead. Derives from `UserWarning`; pass a unit
    quaternion to silence it.

    Examples
    --------
    >>> import warnings
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("serial:3", floating_base=True)
    >>> q = robot.neutral_configuration()
    >>> # the base's quaternion (x, y, z, w), of norm 2
    >>> q[3:7] = [0.0, 0.0, 0.0, 2.0]
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     M = cc.mass_matrix(robot, q)
    >>> caught[0].category.__name__, str(caught[0].message)
    ('QuaternionWarning', "the quaternion of joint 'base' has norm 2; normalized")
    """


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


def finite_vectors(robot, states) -> bool:
    """Whether the states are one state's float64 vectors, q nq wide and the others nv, every entry
    finite (x·x is finite exactly when every entry is, unless it overflows, and then the full check
    decides)."""
    width = robot.nq
    for x in states:
        if type(x) is not ND or x.dtype is not F64 or x.shape != (width,) or not math.isfinite(x @ x):
            return False
        width = robot.nv
    return True


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


def check_data(robot, data, kind=Data) -> None:
    """``data`` a workspace of this robot object: a ``kind`` (Data for a tree, ReducedData in other
    coordinates) whose robot is this one."""
    if not isinstance(data, kind):
        raise StateError("data must come from create_data(robot)")
    if data.robot is not robot:
        raise StateError(f"data was created for robot '{data.robot.name}', not for this robot object ('{robot.name}')")


def checked(robot: RobotModel, q, *velocities):
    """The slow path for one state: (q, q̇, ...) converted and checked in full, or StateError."""
    out = [one_state(robot, q, robot.nq, "q", robot.config_names)]
    out += [one_state(robot, v, robot.nv, what, robot.dof_names) for what, v in velocities]
    return out


def single_state(function: str, robot, q, *velocities):
    """One state for a function that takes no batch: a batch refused by name, then checked in full."""
    for what, x in (("q", q), *velocities):
        if np.ndim(x) == 2:
            raise StateError(f"{what}: {function} takes one state at a time, got a batch of {np.shape(x)[0]}")
    return checked(robot, q, *velocities)


def report_status(robot: RobotModel, status: int, q, *velocities) -> None:
    """Turn a kernel's status code (engine.joints) into the error or warning it stands for."""
    if status == OVERFLOW:  # the inputs were finite: say how large they are, not which is "not finite"
        sizes = ", ".join(f"|{what}| up to {np.max(np.abs(arr)):.3g}" for what, arr in (("q", q), *velocities)
                          if np.size(arr))
        raise StateError(f"the dynamics overflow at this state: every input is finite but the result is not ({sizes})")
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
    shown = listed((f"'{n}'" for n in names), 4)
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


def settle(robot: RobotModel, status: int, function, workspace, q, velocities=(), extra=()) -> None:
    """After ``function(workspace, q, *velocity values, *extra)`` (a call of the compiled core) did
    not return OK: on RECHECK (not a float64 vector of the right length and unit stride) the state
    converted and checked in full and the call made again; then what remains reported.
    ``velocities``: (name, value) pairs. (No closure is passed: a lambda would make the caller's
    locals cells, allocated on every call of the hot path.)"""
    if status == RECHECK:
        q, *values = checked(robot, q, *velocities)
        velocities = tuple((what, v) for (what, _), v in zip(velocities, values))
        status = function(workspace, q, *values, *extra)
    if status:
        report_status(robot, status, q, *velocities)


def _available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def max_threads() -> int:
    """The most threads a batch may ask for: four per CPU this process may use (more only wait
    for a CPU, and each holds a workspace)."""
    return 4 * _available_cpus()


def _thread_count(value, source: str) -> int:
    """``value`` as a thread count from 1 to max_threads(), or StateError saying ``source``."""
    bound, given = max_threads(), value
    if isinstance(value, str) and source == "CORIOLIS_THREADS":  # the environment's text
        value = int(value.strip()) if value.strip().isdigit() else None
    if type(value) is not int or not 1 <= value <= bound:
        raise StateError(f"{source}: the number of threads must be a whole number from 1 to {bound} (4 per CPU "
                         f"this process may use), got {given!r}")
    return value


def _threads_from_environment() -> int:
    value = os.environ.get("CORIOLIS_THREADS", "")
    return _thread_count(value, "CORIOLIS_THREADS") if value.strip() else _available_cpus()


_threads: list = [None]  # set_num_threads's, else read from the environment on first use


def get_num_threads() -> int:
    """Return the number of threads a batch of states runs on.

    The functions that take a batch of K states (q of shape (K, nq)) split it over this many
    threads, with the GIL released. The count is the one given to
    [set_num_threads][coriolis_cli.set_num_threads], else the environment variable
    ``CORIOLIS_THREADS``, else the number of CPUs this process may use. It applies to the whole
    process.

    Returns
    -------
    n : int
        The number of threads, from 1 to four per CPU this process may use.

    Raises
    ------
    StateError
        If ``CORIOLIS_THREADS`` is set and is not a whole number in that range.

    See Also
    --------
    - [`set_num_threads`][coriolis_cli.set_num_threads]: Change it.

    Examples
    --------
    >>> import coriolis_cli as cc
    >>> n = cc.get_num_threads()
    >>> isinstance(n, int) and n >= 1
    True
    """
    if _threads[0] is None:
        _threads[0] = _threads_from_environment()
    return _threads[0]


def set_num_threads(n: int) -> None:
    """Set the number of threads batches of states run on, from now on.

    Applies to every robot in the process, and overrides ``CORIOLIS_THREADS``. One thread suits a
    process that runs beside others on the same CPUs, such as a Dask worker whose cluster runs
    the other workers.

    Parameters
    ----------
    n : int
        The number of threads, a whole number from 1 to four per CPU this process may use.

    Raises
    ------
    StateError
        If ``n`` is not a whole number in that range.

    See Also
    --------
    - [`get_num_threads`][coriolis_cli.get_num_threads]: The number in use.

    Examples
    --------
    >>> import coriolis_cli as cc
    >>> before = cc.get_num_threads()
    >>> cc.set_num_threads(1)
    >>> cc.get_num_threads()
    1
    >>> cc.set_num_threads(before)
    """
    _threads[0] = _thread_count(n, "set_num_threads")


# A batch runs in calls of about this many floating-point operations (≈ 0.1 s), returning to
# Python between them, so that Ctrl-C and SIGTERM end even a batch of millions of states promptly.
BATCH_CALL_WORK = 2e8


def run_batch(robot, function, out, Q, inputs, *velocities, clear=False):
    """K states on get_num_threads() threads with the GIL released: ``function(workspace, Q, *inputs,
    out, status, threads, clear)`` (a batch of the compiled core) over slices of the states
    (BATCH_CALL_WORK), then the first failure or warning reported as for one state. Per-state
    inputs are (K, ·) arrays; ``velocities`` are their (name, array) pairs for the messages.
    ``clear``: ``out`` is a caller's (out=), zeroed by the core state by state before its kernel
    writes the entries the robot can fill (fresh outputs are zeros already)."""
    K = Q.shape[0]
    status = np.zeros(K, dtype=np.int64)
    Q = np.ascontiguousarray(Q)
    inputs = tuple(np.ascontiguousarray(x) if type(x) is ND else x for x in inputs)
    step = max(1, int(BATCH_CALL_WORK / (50.0 * max(out[0].size if K else 1, robot.nv ** 2))))
    workspace, threads = kernel_scratch(robot).core, get_num_threads()
    for s in range(0, K, step):
        e = min(K, s + step)
        part = tuple(x[s:e] if type(x) is ND and x.ndim == 2 else x for x in inputs)  # per state: (K, ·)
        function(workspace, Q[s:e], *part, out[s:e], status[s:e], threads, *((True,) if clear else ()))
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
