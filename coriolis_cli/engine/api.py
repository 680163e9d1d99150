"""The public functions of M, Ṁ, C, Γ, τ, g, q̈, the momentum terms and the Slotine–Li terms.

Every function accepts one state (``q`` of shape (nq,)) or a batch (shape (K, nq)), in which case
results gain a leading K axis and the K states are evaluated in parallel (Slotine–Li: one state).
With ``data=`` (from ``create_data(robot)``, one state at a time) the results are written into
the workspace's own arrays and returned, allocating nothing. With ``out=`` (one state or a batch)
they are written into the caller's arrays, of the shapes returned, and those are returned: in
place where they are what a previous call returned, else by a copy (engine.algorithms).

Each function is described here once: its signature and documentation, and under
``@algorithm`` its kernel in the compiled core, the block that kernel writes and what the caller
gets from it, its batch, and the fields of Data its ``data=`` form writes and returns.
engine.algorithms makes the function from that and holds the one path to the kernel;
engine.coordinates registers each function's form for robots in other coordinates.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike

from ..errors import StateError
from ..model.coordinates import ReducedRobot
from ..model.tree import RobotModel
from ..model.joints import FREE as FREE_CODE
from ..model.parameters import N_PARAMETERS
from . import compiled
from .algorithms import algorithm, gravity_for, named
from .calls import (
    QuaternionWarning,
    check_data,
    checked,
    finite_vectors,
    single_state,
)
from .conventions import MOMENTUM_REGRESSORS, TRAJECTORY_OUTPUTS, TRAJECTORY_QUANTITIES, MomentumRegressors
from .data import (
    Data,
    check_gamma_bytes,
    check_second_bytes,
    check_memory,
    gamma_bytes_for,
)
from .selection import largest_entries
from .workspaces import ReducedData, create_data


def _square(robot):
    return (robot.nv, robot.nv)


def _vector(robot):
    return (robot.nv,)


def _three(out):
    """M, Ṁ and C of Algorithm 1's block (3, nv, nv)."""
    return out[0], out[1], out[2]


def _three_of_each(out):
    """M, Ṁ and C of K states from the batch's block (K, 3, nv, nv)."""
    return out[:, 0], out[:, 1], out[:, 2]


def _gamma_guard(robot, K, data, force=False):
    """Γ holds nv³ doubles a state: refused above GAMMA_MAX_BYTES unless ``force``, and above what the
    machine has; with data= allocated in the workspace on its first use."""
    if data is not None:
        if data.Gamma is None:
            data.ensure_gamma(force)
        return
    check_gamma_bytes(robot.nv, K, force)
    check_memory(gamma_bytes_for(robot.nv, K), f"Γ of {K} states" if K > 1 else "Γ")


# ---- Algorithms 1 and 2 ------------------------------------------------------------------------
@algorithm(compiled.coriolis_matrix, key="C", shape=lambda r: (3, r.nv, r.nv), take=_three, batch=compiled.coriolis_matrix_batch,
           batch_take=_three_of_each, into="coriolis_block", returns="coriolis_outputs")
def coriolis_matrix(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike, factorization: str = "christoffel",
                    data: Data | None = None, out: np.ndarray | tuple | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The mass matrix M, its derivative Ṁ and the Coriolis matrix C at (q, q̇).

    Algorithm 1 of Echeandia & Wensing: one O(N d) pass (N bodies, d the depth of the tree) gives M(q), Ṁ(q, q̇) and
    C(q, q̇) together, with Ṁ = C + Cᵀ. With the default factorization C is the Christoffel-consistent one, C = Σ_k
    Γ[:, :, k] q̇_k with Γ from [christoffel][coriolis_cli.christoffel].

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    factorization : {"christoffel", "featherstone"}, default "christoffel"
        The body-level factorization B(v, I) of the velocity-product forces: `"christoffel"` (eq. 10 of Echeandia &
        Wensing, the Christoffel-consistent C = Σ_k Γ[:, :, k] q̇_k) or `"featherstone"` (eq. 9, B = v ×* I: admissible,
        Ṁ = C + Cᵀ, but not Christoffel-consistent).
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the results are
        `data.M`, `data.Mdot` and `data.C`, written in place and returned as read-only views, overwritten by the next
        call (nothing is allocated). The fast form for a control loop.
    out : tuple of ndarray, optional
        The caller's writable float64 arrays of shapes (nv, nv) or (K, nv, nv), three of them, for one state or a batch:
        the result is written into them and they are returned, in place when they are what a previous call returned,
        else by a copy. Not together with `data`.

    Returns
    -------
    M : ndarray of shape (nv, nv) or (K, nv, nv)
        Joint-space mass matrix [kg·m² on rotational DoF, kg on prismatic ones].
    Mdot : ndarray of shape (nv, nv) or (K, nv, nv)
        Its time derivative Ṁ along q̇.
    C : ndarray of shape (nv, nv) or (K, nv, nv)
        The Coriolis matrix: C q̇ holds the Coriolis and centrifugal torques [N·m or N].

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples,
        `factorization` is not one of the two, `data` is not a workspace of this robot or comes with a batch, or `out`
        does not have the shape returned or comes with `data`.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`christoffel`][coriolis_cli.christoffel]: Γ, whose product with q̇ is C.
    - [`coriolis_matrix_derivatives`][coriolis_cli.coriolis_matrix_derivatives]: ∂C/∂q.
    - [`mass_matrix`][coriolis_cli.mass_matrix]: M alone.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> q = cc.random_configuration(robot, np.random.default_rng(0))
    >>> qd = np.full(robot.nv, 0.5)
    >>> M, Mdot, C = cc.coriolis_matrix(robot, q, qd)
    >>> bool(np.allclose(Mdot, C + C.T))
    True
    >>> cc.coriolis_matrix(robot, np.stack([q, q]), np.stack([qd, qd]))[2].shape
    (2, 7, 7)
    """


@algorithm(compiled.christoffel, key="Gamma", shape=lambda r: (r.nv,) * 3, batch=compiled.christoffel_batch, into="gamma_out",
           returns="Gamma", guard=_gamma_guard)
def christoffel(robot: RobotModel | ReducedRobot, q: ArrayLike, force: bool = False, data: Data | None = None,
                out: np.ndarray | tuple | None = None) -> np.ndarray:
    """The Christoffel symbols of the first kind, Γ(q), with C[i, j] = Σ_k Γ[i, j, k] q̇_k.

    Algorithm 2 of Echeandia & Wensing, in the index order of its eq. (3). Where the velocities are the derivatives of
    the coordinates, Γ[i, j, k] = Γ[i, k, j]. On free, spherical and planar joints, whose velocities are not, Γ is
    defined column by column as Γ[:, :, k] = C(q, e_k), so that C = Σ_k Γ[:, :, k] q̇_k still holds. Γ holds nv³
    doubles: for large robots prefer [christoffel_slices][coriolis_cli.christoffel_slices] or
    [christoffel_largest][coriolis_cli.christoffel_largest].

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    force : bool, default False
        Compute it even above the memory guard: Γ holds nv³ doubles a state, and above 256 MiB (for the whole batch) it
        is refused unless `force=True`.
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the result is
        `data.Gamma`, allocated on the first such call (under the same guard), then written in place and returned as a
        read-only view, overwritten by the next call.
    out : ndarray, optional
        The caller's writable float64 array of shape (nv, nv, nv) or (K, nv, nv, nv), for one state or a batch: the
        result is written into it and it is returned, in place when it is what a previous call returned, else by a copy.
        Not together with `data`.

    Returns
    -------
    Gamma : ndarray of shape (nv, nv, nv) or (K, nv, nv, nv)
        The Christoffel symbols Γ[i, j, k], in the units of M per rad or m of q_k.

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples, `data` is
        not a workspace of this robot or comes with a batch, or `out` does not have the shape returned or comes with
        `data`.
    SizeError
        If Γ (for all the states) would exceed 256 MiB and `force` is False, or needs more memory than the machine has
        available.

    See Also
    --------
    - [`coriolis_matrix`][coriolis_cli.coriolis_matrix]: C = Σ_k Γ[:, :, k] q̇_k, without Γ.
    - [`christoffel_slices`][coriolis_cli.christoffel_slices]: Γ one slice at a time, in O(nv²) memory.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> q = cc.random_configuration(robot, np.random.default_rng(0))
    >>> qd = np.full(robot.nv, 0.5)
    >>> Gamma = cc.christoffel(robot, q)
    >>> Gamma.shape
    (7, 7, 7)
    >>> bool(np.allclose(np.einsum("ijk,k->ij", Gamma, qd),
    ...                  cc.coriolis_matrix(robot, q, qd)[2]))
    True
    """


def christoffel_slices(robot: RobotModel | ReducedRobot, q: ArrayLike) -> Iterator[tuple[int, np.ndarray]]:
    """Γ one slice at a time, Γ[:, :, k] = C(q, e_k), in O(nv²) memory whatever the robot.

    A generator that yields the nv slices of [christoffel][coriolis_cli.christoffel] in order of k without ever holding
    Γ, for robots whose Γ would not fit in memory (no memory guard applies). `q` is checked when it is called, before the
    first slice.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    q : array_like of shape (nq,)
        Joint configuration [rad or m], one state. A free joint takes its position [m] then its unit quaternion (x, y,
        z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.

    Yields
    ------
    k : int
        The slice's index, 0 to nv − 1.
    Gamma_k : ndarray of shape (nv, nv)
        Γ[:, :, k]. On a robot without other coordinates it is a read-only array that the next slice overwrites: copy it
        (`Gamma_k.copy()`) to keep it.

    Raises
    ------
    StateError
        If `q` has the wrong length or a non-finite entry, or is a batch (one state only).

    See Also
    --------
    - [`christoffel`][coriolis_cli.christoffel]: Γ whole.
    - [`christoffel_largest`][coriolis_cli.christoffel_largest]: The largest entries of Γ, from these slices.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> q = cc.random_configuration(robot, np.random.default_rng(0))
    >>> Gamma = cc.christoffel(robot, q)
    >>> all(np.allclose(Gamma_k, Gamma[:, :, k])
    ...     for k, Gamma_k in cc.christoffel_slices(robot, q))
    True
    """
    (q,) = single_state("christoffel_slices", robot, q)  # here, not when the iteration starts
    if isinstance(robot, ReducedRobot):
        return christoffel_slices.in_other_coordinates(robot, q)
    return _tree_slices(robot, q)


def _tree_slices(robot, q):
    data = create_data(robot)
    e = np.zeros(robot.nv)
    for k in range(robot.nv):
        e[:] = 0.0
        e[k] = 1.0
        yield k, coriolis_matrix(robot, q, e, data=data)[2]


def christoffel_largest(robot: RobotModel | ReducedRobot, q: ArrayLike, top: int,
                        tiny: float = 0.0) -> tuple[list[tuple[int, int, int, float]], int]:
    """The `top` largest |Γ_ijk| at q, without holding Γ.

    Γ is streamed with [christoffel_slices][coriolis_cli.christoffel_slices], so this works in O(nv²) memory on any
    robot. It also counts the entries above `tiny`, e.g. to see how sparse Γ is.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    q : array_like of shape (nq,)
        Joint configuration [rad or m], one state. A free joint takes its position [m] then its unit quaternion (x, y,
        z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    top : int
        How many entries to return (at most; fewer when fewer entries exceed `tiny`).
    tiny : float, default 0.0
        Entries with |Γ_ijk| at or below it are neither listed nor counted.

    Returns
    -------
    entries : list of tuple (int, int, int, float)
        Up to `top` entries `(i, j, k, value)`, largest |value| first (ties in order of (i, j, k)).
    nonzero : int
        The number of entries with |Γ_ijk| > `tiny`.

    Raises
    ------
    StateError
        If `q` has the wrong length or a non-finite entry, or is a batch (one state only); if `top` is not a
        non-negative integer or `tiny` not a finite, non-negative number.

    See Also
    --------
    - [`christoffel_slices`][coriolis_cli.christoffel_slices]: The slices they are taken from.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> q = cc.random_configuration(robot, np.random.default_rng(0))
    >>> entries, nonzero = cc.christoffel_largest(robot, q, top=3, tiny=1e-9)
    >>> len(entries), nonzero
    (3, 294)
    >>> i, j, k, value = entries[0]
    >>> bool(np.isclose(value, cc.christoffel(robot, q)[i, j, k]))
    True
    """
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 0:
        raise StateError(f"top must be a non-negative integer, got {top!r}")
    if not (np.isscalar(tiny) and np.isfinite(tiny) and tiny >= 0):
        raise StateError(f"tiny must be a finite, non-negative number, got {tiny!r}")
    return largest_entries(christoffel_slices(robot, q), robot.nv, top, tiny)


# ---- CRBA and RNEA (in body coordinates where they apply: engine/core/engine.hpp chooses) -------
@algorithm(compiled.mass_matrix, key="M", shape=_square, batch=compiled.mass_matrix_batch, into="M_out", returns="M")
def mass_matrix(robot: RobotModel | ReducedRobot, q: ArrayLike, data: Data | None = None,
                out: np.ndarray | tuple | None = None) -> np.ndarray:
    """The joint-space mass matrix M(q).

    The composite-rigid-body algorithm, the joints' armature included. Robots of 1-DoF joints under at most a free root
    are computed in body coordinates.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the result is
        `data.M`, written in place and returned as a read-only view, overwritten by the next call (nothing is
        allocated). The fast form for a control loop.
    out : ndarray, optional
        The caller's writable float64 array of shape (nv, nv) or (K, nv, nv), for one state or a batch: the result is
        written into it and it is returned, in place when it is what a previous call returned, else by a copy. Not
        together with `data`.

    Returns
    -------
    M : ndarray of shape (nv, nv) or (K, nv, nv)
        Joint-space mass matrix, symmetric [kg·m² on rotational DoF, kg on prismatic ones].

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, `data` is not a workspace of this robot or comes with a
        batch, or `out` does not have the shape returned or comes with `data`.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`coriolis_matrix`][coriolis_cli.coriolis_matrix]: M, Ṁ and C together.
    - [`generalized_momentum`][coriolis_cli.generalized_momentum]: p = M q̇ without forming M.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> q = cc.random_configuration(robot, np.random.default_rng(0))
    >>> M = cc.mass_matrix(robot, q)
    >>> M.shape, bool(np.allclose(M, M.T)), bool(np.all(np.linalg.eigvalsh(M) > 0))
    ((7, 7), True, True)
    >>> data = cc.create_data(robot)
    >>> bool(np.allclose(cc.mass_matrix(robot, q, data=data), M))
    True
    """


@algorithm(compiled.inverse_dynamics, key="tau", shape=_vector, batch=compiled.inverse_dynamics_batch, into="tau_out",
           returns="tau")
def inverse_dynamics(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike,
                     gravity: bool | ArrayLike = True, data: Data | None = None, out: np.ndarray | tuple | None = None
                     ) -> np.ndarray:
    """The joint torques τ = M(q) q̈ + C(q, q̇) q̇ + g(q) that produce q̈ at (q, q̇).

    The recursive Newton–Euler algorithm (RNEA), the joints' armature included. Robots of 1-DoF joints under at most a
    free root are computed in body coordinates.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    qdd : array_like of shape (nv,) or (K, nv)
        Joint acceleration [rad/s² or m/s²], with as many states as `q`.
    gravity : bool or array_like of shape (3,), default True
        `True`: the robot's gravity (9.81 m/s² along −z of the world unless its file says otherwise, as MJCF can);
        `False`: none; or a 3-vector [m/s²] in the world frame.
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the result is
        `data.tau`, written in place and returned as a read-only view, overwritten by the next call (nothing is
        allocated). The fast form for a control loop.
    out : ndarray, optional
        The caller's writable float64 array of shape (nv,) or (K, nv), for one state or a batch: the result is written
        into it and it is returned, in place when it is what a previous call returned, else by a copy. Not together with
        `data`.

    Returns
    -------
    tau : ndarray of shape (nv,) or (K, nv)
        Joint torques and forces [N·m or N].

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples, `gravity`
        is not True, False or a finite 3-vector, `data` is not a workspace of this robot or comes with a batch, or `out`
        does not have the shape returned or comes with `data`.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`forward_dynamics`][coriolis_cli.forward_dynamics]: q̈ from τ.
    - [`inverse_dynamics_derivatives`][coriolis_cli.inverse_dynamics_derivatives]: ∂τ/∂q, ∂τ/∂q̇ and M.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> q = cc.random_configuration(robot, np.random.default_rng(0))
    >>> zero = np.zeros(robot.nv)
    >>> tau = cc.inverse_dynamics(robot, q, zero, zero)
    >>> bool(np.allclose(tau, cc.gravity_vector(robot, q)))
    True
    >>> bool(np.allclose(
    ...     cc.inverse_dynamics(robot, q, zero, zero, gravity=False), 0.0))
    True
    """


@algorithm(compiled.gravity_vector, key="g", shape=_vector, batch=compiled.gravity_vector_batch, into="g_out", returns="g")
def gravity_vector(robot: RobotModel | ReducedRobot, q: ArrayLike, gravity: bool | ArrayLike = True,
                   data: Data | None = None, out: np.ndarray | tuple | None = None) -> np.ndarray:
    """The generalized gravity g(q), the torques that hold the robot still at q.

    g(q) is the RNEA at rest, τ(q, 0, 0). Robots of 1-DoF joints under at most a free root are computed in body
    coordinates.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    gravity : bool or array_like of shape (3,), default True
        `True`: the robot's gravity (9.81 m/s² along −z of the world unless its file says otherwise, as MJCF can);
        `False`: none; or a 3-vector [m/s²] in the world frame.
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the result is
        `data.g`, written in place and returned as a read-only view, overwritten by the next call (nothing is
        allocated). The fast form for a control loop.
    out : ndarray, optional
        The caller's writable float64 array of shape (nv,) or (K, nv), for one state or a batch: the result is written
        into it and it is returned, in place when it is what a previous call returned, else by a copy. Not together with
        `data`.

    Returns
    -------
    g : ndarray of shape (nv,) or (K, nv)
        Generalized gravity [N·m or N].

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, `gravity` is not True, False or a finite 3-vector, `data`
        is not a workspace of this robot or comes with a batch, or `out` does not have the shape returned or comes with
        `data`.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`gravity_derivatives`][coriolis_cli.gravity_derivatives]: ∂g/∂q.
    - [`inverse_dynamics`][coriolis_cli.inverse_dynamics]: τ with q̇ and q̈.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> q = cc.random_configuration(robot, np.random.default_rng(0))
    >>> g = cc.gravity_vector(robot, q)
    >>> bool(np.allclose(
    ...     cc.gravity_vector(robot, q, gravity=[0.0, 0.0, -9.81 / 6]), g / 6))
    True
    >>> cc.gravity_vector(robot, np.stack([q, q])).shape
    (2, 7)
    """


# ---- derivatives (core/rnea_derivatives.hpp) -----------------------------------------------------
@algorithm(compiled.inverse_dynamics_derivatives, key="dtau", shape=lambda r: (3, r.nv, r.nv), take=_three,
           batch=compiled.inverse_dynamics_derivatives_batch, batch_take=_three_of_each, into="derivatives_block",
           returns="derivatives_outputs")
def inverse_dynamics_derivatives(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike,
                                 gravity: bool | ArrayLike = True, data: Data | None = None,
                                 out: np.ndarray | tuple | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first derivatives of the inverse dynamics: ∂τ/∂q, ∂τ/∂q̇ and M = ∂τ/∂q̈.

    Of τ = M q̈ + C q̇ + g at (q, q̇, q̈), analytically, by one forward and one backward pass in O(N d) (Carpentier &
    Mansard, RSS 2018), the joints' armature included. Each output is an nv x nv array with [i, j] = ∂y_i/∂x_j. On free,
    spherical and planar joints, q moves in the tangent space, as in Pinocchio: q ⊕ δ is `integrate(robot, q, δ)`, so
    ∂/∂q has nv columns, one per DoF (a free joint's: the base's linear then angular velocity in its own frame). A
    floating base's position has no effect on τ, so those three columns of ∂τ/∂q are zero. See the Derivatives page for
    the conventions.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot]. Robots with closed loops are refused: take the
        derivatives on `robot.full`.
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    qdd : array_like of shape (nv,) or (K, nv)
        Joint acceleration [rad/s² or m/s²], with as many states as `q`.
    gravity : bool or array_like of shape (3,), default True
        `True`: the robot's gravity (9.81 m/s² along −z of the world unless its file says otherwise, as MJCF can);
        `False`: none; or a 3-vector [m/s²] in the world frame.
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the results are
        `data.dtau_dq`, `data.dtau_dqd` and `data.dtau_dqdd`, written in place and returned as read-only views,
        overwritten by the next call (nothing is allocated). The fast form for a control loop.
    out : tuple of ndarray, optional
        The caller's writable float64 arrays of shape (nv, nv) or (K, nv, nv), three of them, for one state or a batch:
        the result is written into them and they are returned, in place when they are what a previous call returned,
        else by a copy. Not together with `data`.

    Returns
    -------
    dtau_dq : ndarray of shape (nv, nv) or (K, nv, nv)
        ∂τ/∂q [N·m/rad, N·m/m, N/rad or N/m].
    dtau_dqd : ndarray of shape (nv, nv) or (K, nv, nv)
        ∂τ/∂q̇.
    dtau_dqdd : ndarray of shape (nv, nv) or (K, nv, nv)
        ∂τ/∂q̈ = M(q) [kg·m² on rotational DoF, kg on prismatic ones].

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples, `gravity`
        is not True, False or a finite 3-vector, the robot has closed loops, `data` is not a workspace of this robot or
        comes with a batch, or `out` does not have the shape returned or comes with `data`.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`forward_dynamics_derivatives`][coriolis_cli.forward_dynamics_derivatives]: The derivatives of q̈.
    - [`inverse_dynamics_second_derivatives`][coriolis_cli.inverse_dynamics_second_derivatives]: The second derivatives of τ.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> rng = np.random.default_rng(0)
    >>> q = cc.random_configuration(robot, rng)
    >>> qd, qdd = rng.standard_normal(7), rng.standard_normal(7)
    >>> dtau_dq, dtau_dqd, M = cc.inverse_dynamics_derivatives(robot, q, qd, qdd)
    >>> dtau_dq.shape, bool(np.allclose(M, cc.mass_matrix(robot, q)))
    ((7, 7), True)

    On a floating base ∂τ/∂q has nv columns, and those of the base's position are zero:

    >>> base = cc.load_robot("quadruped:20", floating_base=True)
    >>> q, v = base.neutral_configuration(), np.zeros(base.nv)
    >>> dtau_dq = cc.inverse_dynamics_derivatives(base, q, v, v)[0]
    >>> (base.nq, base.nv), dtau_dq.shape, bool(np.allclose(dtau_dq[:, :3], 0.0))
    ((27, 26), (26, 26), True)
    """


@algorithm(compiled.forward_dynamics_derivatives, key="dqdd", shape=lambda r: (3, r.nv, r.nv), take=_three,
           batch=compiled.forward_dynamics_derivatives_batch, batch_take=_three_of_each, into="fd_derivatives_block",
           returns="fd_derivatives_outputs")
def forward_dynamics_derivatives(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike, tau: ArrayLike,
                                 gravity: bool | ArrayLike = True, data: Data | None = None,
                                 out: np.ndarray | tuple | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first derivatives of the forward dynamics: ∂q̈/∂q, ∂q̈/∂q̇ and M⁻¹ = ∂q̈/∂τ.

    Of q̈ = M⁻¹ (τ − C q̇ − g) at (q, q̇, τ): the inverse dynamics' derivatives at q̈, then ∂q̈/∂x = −M⁻¹ ∂τ/∂x with M =
    LᵀDL factored along the tree. What linearizing ẋ = f(x, u) for LQR or iLQR needs. Each output is an nv x nv array
    with [i, j] = ∂y_i/∂x_j. On free, spherical and planar joints, q moves in the tangent space, as in Pinocchio: q ⊕ δ
    is `integrate(robot, q, δ)`, so ∂/∂q has nv columns, one per DoF (a free joint's: the base's linear then angular
    velocity in its own frame).

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot]. Robots with closed loops are refused: take the
        derivatives on `robot.full`.
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    tau : array_like of shape (nv,) or (K, nv)
        Joint torque or force [N·m or N], with as many states as `q`.
    gravity : bool or array_like of shape (3,), default True
        `True`: the robot's gravity (9.81 m/s² along −z of the world unless its file says otherwise, as MJCF can);
        `False`: none; or a 3-vector [m/s²] in the world frame.
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the results are
        `data.dqdd_dq`, `data.dqdd_dqd` and `data.Minv`, written in place and returned as read-only views, overwritten
        by the next call (nothing is allocated). The fast form for a control loop.
    out : tuple of ndarray, optional
        The caller's writable float64 arrays of shape (nv, nv) or (K, nv, nv), three of them, for one state or a batch:
        the result is written into them and they are returned, in place when they are what a previous call returned,
        else by a copy. Not together with `data`.

    Returns
    -------
    dqdd_dq : ndarray of shape (nv, nv) or (K, nv, nv)
        ∂q̈/∂q.
    dqdd_dqd : ndarray of shape (nv, nv) or (K, nv, nv)
        ∂q̈/∂q̇.
    Minv : ndarray of shape (nv, nv) or (K, nv, nv)
        ∂q̈/∂τ = M(q)⁻¹.

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples, `gravity`
        is not True, False or a finite 3-vector, the robot has closed loops, `data` is not a workspace of this robot or
        comes with a batch, or `out` does not have the shape returned or comes with `data`.
    SingularMassMatrixError
        If M(q) is singular (joints that move no mass): q̈ is then not defined. Its `joints` name them.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`inverse_dynamics_derivatives`][coriolis_cli.inverse_dynamics_derivatives]: The derivatives of τ.
    - [`forward_dynamics_second_derivatives`][coriolis_cli.forward_dynamics_second_derivatives]: The second derivatives of q̈.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> rng = np.random.default_rng(0)
    >>> q = cc.random_configuration(robot, rng)
    >>> qd, tau = rng.standard_normal(7), rng.standard_normal(7)
    >>> dqdd_dq, dqdd_dqd, Minv = cc.forward_dynamics_derivatives(robot, q, qd, tau)
    >>> bool(np.allclose(Minv @ cc.mass_matrix(robot, q), np.eye(7)))
    True
    """


def _first_two(out):
    return out[0], out[1]


def _first_two_of_each(out):
    return out[:, 0], out[:, 1]


def _four(out):
    return out[0], out[1], out[2], out[3]


def _four_of_each(out):
    return out[:, 0], out[:, 1], out[:, 2], out[:, 3]


@algorithm(compiled.coriolis_product_derivatives, key="dCv", shape=lambda r: (2, r.nv, r.nv), take=_first_two,
           batch=compiled.coriolis_product_derivatives_batch, batch_take=_first_two_of_each,
           into="coriolis_product_block", returns="coriolis_product_outputs")
def coriolis_product_derivatives(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike, v: ArrayLike,
                                 factorization: str = "christoffel", data: Data | None = None,
                                 out: np.ndarray | tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    """∂(C v)/∂q and ∂(C v)/∂q̇ of the product C(q, q̇) v, for a v that does not vary.

    E.g. the C q̇_r of the Slotine–Li torque; ∂(C v)/∂v is C itself. In O(N d). Each output is an nv x nv array with
    [i, j] = ∂y_i/∂x_j. On free, spherical and planar joints, q moves in the tangent space, as in Pinocchio: q ⊕ δ is
    `integrate(robot, q, δ)`, so ∂/∂q has nv columns, one per DoF (a free joint's: the base's linear then angular
    velocity in its own frame).

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot]. Robots with closed loops are refused: take the
        derivatives on `robot.full`.
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    v : array_like of shape (nv,) or (K, nv)
        The vector C multiplies [rad/s or m/s], with as many states as `q`.
    factorization : {"christoffel", "featherstone"}, default "christoffel"
        The body-level factorization B(v, I) of the velocity-product forces: `"christoffel"` (eq. 10 of Echeandia &
        Wensing, the Christoffel-consistent C = Σ_k Γ[:, :, k] q̇_k) or `"featherstone"` (eq. 9, B = v ×* I: admissible,
        Ṁ = C + Cᵀ, but not Christoffel-consistent).
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the results are
        `data.dCv_dq` and `data.dCv_dqd`, written in place and returned as read-only views, overwritten by the next call
        (nothing is allocated). The fast form for a control loop.
    out : tuple of ndarray, optional
        The caller's writable float64 arrays of shape (nv, nv) or (K, nv, nv), two of them, for one state or a batch:
        the result is written into them and they are returned, in place when they are what a previous call returned,
        else by a copy. Not together with `data`.

    Returns
    -------
    dCv_dq : ndarray of shape (nv, nv) or (K, nv, nv)
        ∂(C v)/∂q.
    dCv_dqd : ndarray of shape (nv, nv) or (K, nv, nv)
        ∂(C v)/∂q̇, which is Σ_j Γ[:, j, :] v_j since C is linear in q̇.

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples,
        `factorization` is not one of the two, the robot has closed loops, `data` is not a workspace of this robot or
        comes with a batch, or `out` does not have the shape returned or comes with `data`.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`coriolis_matrix_derivatives`][coriolis_cli.coriolis_matrix_derivatives]: ∂C/∂q whole.
    - [`slotine_li_derivatives`][coriolis_cli.slotine_li_derivatives]: The derivatives of the whole Slotine–Li torque.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> rng = np.random.default_rng(0)
    >>> q, qd, v = cc.random_configuration(robot, rng), *rng.standard_normal((2, 7))
    >>> dCv_dq, dCv_dqd = cc.coriolis_product_derivatives(robot, q, qd, v)
    >>> bool(np.allclose(
    ...     dCv_dqd, np.einsum("ijk,j->ik", cc.christoffel(robot, q), v)))
    True
    """


@algorithm(compiled.slotine_li_derivatives, key="dslotine", shape=lambda r: (4, r.nv, r.nv), take=_four,
           batch=compiled.slotine_li_derivatives_batch, batch_take=_four_of_each,
           into="slotine_derivatives_block", returns="slotine_derivatives_outputs")
def slotine_li_derivatives(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike, qd_r: ArrayLike,
                           qdd_r: ArrayLike, gravity: bool | ArrayLike = True, factorization: str = "christoffel",
                           data: Data | None = None, out: np.ndarray | tuple | None = None
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The derivatives of the Slotine–Li torque: ∂τ/∂q, ∂τ/∂q̇, C = ∂τ/∂q̇_r and M = ∂τ/∂q̈_r.

    Of τ = M q̈_r + C q̇_r + g at (q, q̇, q̇_r, q̈_r), in O(N d), the joints' armature included: what linearizing a
    passivity-based or adaptive controller needs. Each output is an nv x nv array with [i, j] = ∂y_i/∂x_j. On free,
    spherical and planar joints, q moves in the tangent space, as in Pinocchio: q ⊕ δ is `integrate(robot, q, δ)`, so
    ∂/∂q has nv columns, one per DoF (a free joint's: the base's linear then angular velocity in its own frame). At q̇_r
    = q̇, ∂τ/∂q̇ + C is the inverse dynamics' ∂τ/∂q̇.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot]. Robots with closed loops are refused: take the
        derivatives on `robot.full`.
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    qd_r : array_like of shape (nv,) or (K, nv)
        Reference velocity q̇_r [rad/s or m/s], with as many states as `q`.
    qdd_r : array_like of shape (nv,) or (K, nv)
        Reference acceleration q̈_r [rad/s² or m/s²], with as many states as `q`.
    gravity : bool or array_like of shape (3,), default True
        `True`: the robot's gravity (9.81 m/s² along −z of the world unless its file says otherwise, as MJCF can);
        `False`: none; or a 3-vector [m/s²] in the world frame.
    factorization : {"christoffel", "featherstone"}, default "christoffel"
        The body-level factorization B(v, I) of the velocity-product forces: `"christoffel"` (eq. 10 of Echeandia &
        Wensing, the Christoffel-consistent C = Σ_k Γ[:, :, k] q̇_k) or `"featherstone"` (eq. 9, B = v ×* I: admissible,
        Ṁ = C + Cᵀ, but not Christoffel-consistent).
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the results are
        `data.dslotine_dq`, `data.dslotine_dqd`, `data.dslotine_dqd_r` and `data.dslotine_dqdd_r`, written in place and
        returned as read-only views, overwritten by the next call (nothing is allocated). The fast form for a control
        loop.
    out : tuple of ndarray, optional
        The caller's writable float64 arrays of shape (nv, nv) or (K, nv, nv), four of them, for one state or a batch:
        the result is written into them and they are returned, in place when they are what a previous call returned,
        else by a copy. Not together with `data`.

    Returns
    -------
    dtau_dq : ndarray of shape (nv, nv) or (K, nv, nv)
        ∂τ/∂q.
    dtau_dqd : ndarray of shape (nv, nv) or (K, nv, nv)
        ∂τ/∂q̇.
    dtau_dqd_r : ndarray of shape (nv, nv) or (K, nv, nv)
        ∂τ/∂q̇_r = C(q, q̇).
    dtau_dqdd_r : ndarray of shape (nv, nv) or (K, nv, nv)
        ∂τ/∂q̈_r = M(q).

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples, `gravity`
        or `factorization` is not one the function knows, the robot has closed loops, `data` is not a workspace of this
        robot or comes with a batch, or `out` does not have the shape returned or comes with `data`.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`slotine_li`][coriolis_cli.slotine_li]: τ itself.
    - [`coriolis_product_derivatives`][coriolis_cli.coriolis_product_derivatives]: The derivatives of C v alone.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> rng = np.random.default_rng(0)
    >>> q = cc.random_configuration(robot, rng)
    >>> qd, qd_r, qdd_r = rng.standard_normal((3, 7))
    >>> dq, dqd, C, M = cc.slotine_li_derivatives(robot, q, qd, qd_r, qdd_r)
    >>> (bool(np.allclose(C, cc.coriolis_matrix(robot, q, qd)[2])),
    ...  bool(np.allclose(M, cc.mass_matrix(robot, q))))
    (True, True)
    """


@algorithm(compiled.gravity_derivatives, key="dg", shape=lambda r: (r.nv, r.nv), batch=compiled.gravity_derivatives_batch,
           into="dg_block", returns="dg_dq")
def gravity_derivatives(robot: RobotModel | ReducedRobot, q: ArrayLike, gravity: bool | ArrayLike = True,
                        data: Data | None = None, out: np.ndarray | tuple | None = None) -> np.ndarray:
    """∂g/∂q, the derivative of the generalized gravity.

    In O(N d), as Pinocchio's `computeGeneralizedGravityDerivatives`. Each output is an nv x nv array with [i, j] =
    ∂y_i/∂x_j. On free, spherical and planar joints, q moves in the tangent space, as in Pinocchio: q ⊕ δ is
    `integrate(robot, q, δ)`, so ∂/∂q has nv columns, one per DoF (a free joint's: the base's linear then angular
    velocity in its own frame).

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot]. Robots with closed loops are refused: take the
        derivatives on `robot.full`.
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    gravity : bool or array_like of shape (3,), default True
        `True`: the robot's gravity (9.81 m/s² along −z of the world unless its file says otherwise, as MJCF can);
        `False`: none; or a 3-vector [m/s²] in the world frame.
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the result is
        `data.dg_dq`, written in place and returned as a read-only view, overwritten by the next call (nothing is
        allocated). The fast form for a control loop.
    out : ndarray, optional
        The caller's writable float64 array of shape (nv, nv) or (K, nv, nv), for one state or a batch: the result is
        written into it and it is returned, in place when it is what a previous call returned, else by a copy. Not
        together with `data`.

    Returns
    -------
    dg_dq : ndarray of shape (nv, nv) or (K, nv, nv)
        ∂g/∂q [N·m/rad, N·m/m, N/rad or N/m].

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, `gravity` is not True, False or a finite 3-vector, the
        robot has closed loops, `data` is not a workspace of this robot or comes with a batch, or `out` does not have
        the shape returned or comes with `data`.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`gravity_vector`][coriolis_cli.gravity_vector]: g itself.
    - [`inverse_dynamics_derivatives`][coriolis_cli.inverse_dynamics_derivatives]: ∂τ/∂q, which is ∂g/∂q at rest.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> q = cc.random_configuration(robot, np.random.default_rng(0))
    >>> zero = np.zeros(7)
    >>> dg_dq = cc.gravity_derivatives(robot, q)
    >>> bool(np.allclose(
    ...     dg_dq, cc.inverse_dynamics_derivatives(robot, q, zero, zero)[0]))
    True
    """


@algorithm(compiled.coriolis_transpose_derivatives, key="dCTqd", shape=lambda r: (2, r.nv, r.nv), take=_first_two,
           batch=compiled.coriolis_transpose_derivatives_batch, batch_take=_first_two_of_each,
           into="coriolis_transpose_block", returns="coriolis_transpose_outputs")
def coriolis_transpose_derivatives(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike,
                                   data: Data | None = None, out: np.ndarray | tuple | None = None
                                   ) -> tuple[np.ndarray, np.ndarray]:
    """∂(Cᵀq̇)/∂q and ∂(Cᵀq̇)/∂q̇ of Cᵀ(q, q̇) q̇.

    The derivatives of [coriolis_transpose_velocity][coriolis_cli.coriolis_transpose_velocity], in O(N d), the joints'
    armature included: what linearizing a momentum observer needs. Each output is an nv x nv array with [i, j] =
    ∂y_i/∂x_j. On free, spherical and planar joints, q moves in the tangent space, as in Pinocchio: q ⊕ δ is
    `integrate(robot, q, δ)`, so ∂/∂q has nv columns, one per DoF (a free joint's: the base's linear then angular
    velocity in its own frame).

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot]. Robots with closed loops are refused: take the
        derivatives on `robot.full`.
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the results are
        `data.dCTqd_dq` and `data.dCTqd_dqd`, written in place and returned as read-only views, overwritten by the next
        call (nothing is allocated). The fast form for a control loop.
    out : tuple of ndarray, optional
        The caller's writable float64 arrays of shape (nv, nv) or (K, nv, nv), two of them, for one state or a batch:
        the result is written into them and they are returned, in place when they are what a previous call returned,
        else by a copy. Not together with `data`.

    Returns
    -------
    dCTqd_dq : ndarray of shape (nv, nv) or (K, nv, nv)
        ∂(Cᵀq̇)/∂q.
    dCTqd_dqd : ndarray of shape (nv, nv) or (K, nv, nv)
        ∂(Cᵀq̇)/∂q̇.

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples, the robot
        has closed loops, `data` is not a workspace of this robot or comes with a batch, or `out` does not have the
        shape returned or comes with `data`.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`coriolis_transpose_velocity`][coriolis_cli.coriolis_transpose_velocity]: Cᵀq̇ itself.
    - [`momentum_derivatives`][coriolis_cli.momentum_derivatives]: ∂p/∂q.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> q = cc.random_configuration(robot, np.random.default_rng(0))
    >>> qd, e = np.full(7, 0.5), np.eye(7)[2]
    >>> dCTqd_dqd = cc.coriolis_transpose_derivatives(robot, q, qd)[1]
    >>> # quadratic in q̇: exact central differences
    >>> f = lambda v: cc.coriolis_transpose_velocity(robot, q, v)
    >>> bool(np.allclose((f(qd + e) - f(qd - e)) / 2, dCTqd_dqd[:, 2]))
    True
    """


def free_armature_guard(robot, K=1, data=None, **options):
    """A free joint's unequal linear armature (M_a = Rᵀ A R turns with the base) is not derived in
    second order yet."""
    tree = getattr(robot, "full", robot)
    for body in tree.bodies:
        if body.joint.type in ("free", "floating") and len(set(body.joint.armature[:3])) > 1:
            raise StateError(f"the second-order derivatives take a free joint's armature when its three linear DoF "
                             f"share it; '{body.joint.name}' has {tuple(body.joint.armature[:3])}")


def _second_guard(robot, K, data, force=False, **options):
    """Four nv³ tensors a state: Γ's guard (refused above GAMMA_MAX_BYTES unless ``force``, and above
    what the machine has), allocated in the workspace on first use; free_armature_guard's refusal."""
    free_armature_guard(robot)
    if data is not None:
        if data.second_out is None:
            data.ensure_second(force)
        return
    check_second_bytes(robot.nv, K, force)
    check_memory(gamma_bytes_for(robot.nv, 4 * K), "the second-order derivatives")


@algorithm(compiled.inverse_dynamics_second_derivatives, key="d2tau", shape=lambda r: (4, r.nv, r.nv, r.nv), take=_four,
           batch=compiled.inverse_dynamics_second_derivatives_batch, batch_take=_four_of_each, into="second_out",
           returns="second_outputs", guard=_second_guard)
def inverse_dynamics_second_derivatives(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike,
                                        gravity: bool | ArrayLike = True, force: bool = False,
                                        data: Data | None = None, out: np.ndarray | tuple | None = None
                                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The second derivatives of the inverse dynamics: ∂²τ/∂q², ∂²τ/∂q̇², ∂²τ/∂q∂q̇ and ∂²τ/∂q∂q̈.

    Of τ = M q̈ + C q̇ + g at (q, q̇, q̈), four nv³ tensors with [i, j, k] = ∂/∂x_j (∂τ_i/∂y_k): the entry [i, k] of
    [inverse_dynamics_derivatives][coriolis_cli.inverse_dynamics_derivatives]' ∂τ/∂y differentiated along x_j, as
    central differences along `integrate(robot, q, ±h e_j)` approach it. ∂²τ/∂q̇² is Γ_ijk + Γ_ikj and ∂²τ/∂q∂q̈ is
    ∂M_ik/∂q_j. On free, spherical and planar joints q moves in the tangent space, where ∂²τ/∂q² is not symmetric in (j,
    k). For Pinocchio's index order see the Derivatives page.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot]. Robots with closed loops are refused: take the
        derivatives on `robot.full`.
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    qdd : array_like of shape (nv,) or (K, nv)
        Joint acceleration [rad/s² or m/s²], with as many states as `q`.
    gravity : bool or array_like of shape (3,), default True
        `True`: the robot's gravity (9.81 m/s² along −z of the world unless its file says otherwise, as MJCF can);
        `False`: none; or a 3-vector [m/s²] in the world frame.
    force : bool, default False
        Compute them even above the memory guard: the four tensors hold 4 nv³ doubles a state, and above 256 MiB (for
        the whole batch) they are refused unless `force=True`.
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the results are
        `data.d2tau_dq2`, `data.d2tau_dqd2`, `data.d2tau_dqdqd` and `data.d2tau_dqdqdd` (`data.second_outputs`),
        allocated on the first such call (under the same guard), then written in place and returned as read-only views,
        overwritten by the next call.
    out : tuple of ndarray, optional
        The caller's writable float64 arrays of shape (nv, nv, nv) or (K, nv, nv, nv), four of them, for one state or a
        batch: the result is written into them and they are returned, in place when they are what a previous call
        returned, else by a copy. Not together with `data`.

    Returns
    -------
    d2tau_dq2 : ndarray of shape (nv, nv, nv) or (K, nv, nv, nv)
        ∂²τ/∂q².
    d2tau_dqd2 : ndarray of shape (nv, nv, nv) or (K, nv, nv, nv)
        ∂²τ/∂q̇².
    d2tau_dqdqd : ndarray of shape (nv, nv, nv) or (K, nv, nv, nv)
        ∂²τ/∂q∂q̇, [i, j, k] = ∂/∂q_j (∂τ_i/∂q̇_k).
    d2tau_dqdqdd : ndarray of shape (nv, nv, nv) or (K, nv, nv, nv)
        ∂²τ/∂q∂q̈, [i, j, k] = ∂M_ik/∂q_j.

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples, `gravity`
        is not True, False or a finite 3-vector, the robot has closed loops, a free joint's three linear DoF have
        unequal armature (not differentiated to second order yet), `data` is not a workspace of this robot or comes with
        a batch, or `out` does not have the shape returned or comes with `data`.
    SizeError
        If the four tensors (for all the states) would exceed 256 MiB and `force` is False, or need more memory than the
        machine has available.

    See Also
    --------
    - [`inverse_dynamics_second_derivatives_contracted`][coriolis_cli.inverse_dynamics_second_derivatives_contracted]: λᵀ of them, in nv² memory.
    - [`forward_dynamics_second_derivatives`][coriolis_cli.forward_dynamics_second_derivatives]: The same for q̈.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> rng = np.random.default_rng(0)
    >>> q = cc.random_configuration(robot, rng)
    >>> qd, qdd = rng.standard_normal((2, 7))
    >>> d2q, d2qd, dqdqd, dqdqdd = cc.inverse_dynamics_second_derivatives(
    ...     robot, q, qd, qdd)
    >>> Gamma = cc.christoffel(robot, q)
    >>> d2q.shape, bool(np.allclose(d2qd, Gamma + Gamma.transpose(0, 2, 1)))
    ((7, 7, 7), True)
    """


@algorithm(compiled.inverse_dynamics_second_derivatives_contracted, key="lam_d2tau", shape=lambda r: (4, r.nv, r.nv),
           take=_four, batch=compiled.inverse_dynamics_second_derivatives_contracted_batch, batch_take=_four_of_each,
           into="contracted_block", returns="contracted_outputs", guard=free_armature_guard)
def inverse_dynamics_second_derivatives_contracted(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike,
                                                   qdd: ArrayLike, lam: ArrayLike, gravity: bool | ArrayLike = True,
                                                   data: Data | None = None, out: np.ndarray | tuple | None = None
                                                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The inverse dynamics' second derivatives contracted with a co-state λ, each nv x nv.

    λᵀ∂²τ/∂q², λᵀ∂²τ/∂q̇², λᵀ∂²τ/∂q∂q̇ and λᵀ∂²τ/∂q∂q̈: Σ_i λ_i T[i, :, :] of each tensor T of
    [inverse_dynamics_second_derivatives][coriolis_cli.inverse_dynamics_second_derivatives] at (q, q̇, q̈), [j, k] =
    ∂²(λᵀτ)/∂x_j∂y_k: the second-order terms full DDP adds to iLQR (Nganga & Wensing, RA-L 2021). Formed without the nv³
    tensors, so no memory guard applies. q moves in the tangent space as there.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot]. Robots with closed loops are refused: take the
        derivatives on `robot.full`.
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    qdd : array_like of shape (nv,) or (K, nv)
        Joint acceleration [rad/s² or m/s²], with as many states as `q`.
    lam : array_like of shape (nv,) or (K, nv)
        The co-state λ, with as many states as `q`.
    gravity : bool or array_like of shape (3,), default True
        `True`: the robot's gravity (9.81 m/s² along −z of the world unless its file says otherwise, as MJCF can);
        `False`: none; or a 3-vector [m/s²] in the world frame.
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the results are
        `data.lam_d2tau_dq2`, `data.lam_d2tau_dqd2`, `data.lam_d2tau_dqdqd` and `data.lam_d2tau_dqdqdd`
        (`data.contracted_outputs`), written in place and returned as read-only views, overwritten by the next call
        (nothing is allocated). The fast form for a control loop.
    out : tuple of ndarray, optional
        The caller's writable float64 arrays of shape (nv, nv) or (K, nv, nv), four of them, for one state or a batch:
        the result is written into them and they are returned, in place when they are what a previous call returned,
        else by a copy. Not together with `data`.

    Returns
    -------
    lam_d2tau_dq2 : ndarray of shape (nv, nv) or (K, nv, nv)
        λᵀ∂²τ/∂q².
    lam_d2tau_dqd2 : ndarray of shape (nv, nv) or (K, nv, nv)
        λᵀ∂²τ/∂q̇².
    lam_d2tau_dqdqd : ndarray of shape (nv, nv) or (K, nv, nv)
        λᵀ∂²τ/∂q∂q̇.
    lam_d2tau_dqdqdd : ndarray of shape (nv, nv) or (K, nv, nv)
        λᵀ∂²τ/∂q∂q̈.

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples, `gravity`
        is not True, False or a finite 3-vector, the robot has closed loops, a free joint's three linear DoF have
        unequal armature (not differentiated to second order yet), `data` is not a workspace of this robot or comes with
        a batch, or `out` does not have the shape returned or comes with `data`.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`inverse_dynamics_second_derivatives`][coriolis_cli.inverse_dynamics_second_derivatives]: The four tensors.
    - [`forward_dynamics_second_derivatives_contracted`][coriolis_cli.forward_dynamics_second_derivatives_contracted]: The same for q̈.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> rng = np.random.default_rng(0)
    >>> q = cc.random_configuration(robot, rng)
    >>> qd, qdd, lam = rng.standard_normal((3, 7))
    >>> contracted = cc.inverse_dynamics_second_derivatives_contracted(
    ...     robot, q, qd, qdd, lam)
    >>> tensors = cc.inverse_dynamics_second_derivatives(robot, q, qd, qdd)
    >>> all(np.allclose(c, np.einsum("i,ijk->jk", lam, T))
    ...     for c, T in zip(contracted, tensors))
    True
    """


def _one_state(robot, q, states):
    """One state of a composed function: float64 vectors of the robot's lengths, every entry finite,
    as they are (the functions it calls check them again on their fast paths); anything else
    converted and checked in full (calls.checked), with its messages."""
    given = (q, *(x for _, x in states))
    return given if finite_vectors(robot, given) else checked(robot, q, *states)


def _composed(robot, q, states, one_state, fields, guard, data):
    """A function composed of the public ones, in each form the compiled ones take: one state
    (checked), a batch (state by state, into arrays whose size ``guard(K)`` checks first) and
    ``data=`` (one state, into the workspace's ``fields``, each allocated on the first such call).
    ``states``: the (name, array) pairs after q; ``one_state(q, *states)``: a tuple of arrays."""
    try:
        batch = np.ndim(q) == 2
    except ValueError:  # a ragged list: the checked path says what is wrong with it, as everywhere
        checked(robot, q, *states)
        raise
    single = len(fields) == 1
    if data is not None:
        if batch:
            raise StateError(f"q: data= takes one state at a time, got a batch of {len(q)}; call without data= "
                             "for batches")
        check_data(robot, data, ReducedData if isinstance(robot, ReducedRobot) else Data)
        guard(1)
        results = one_state(*_one_state(robot, q, states))
        for name, result in zip(fields, results):
            if getattr(data, name) is None:  # a read-only view, as every other field is, of the workspace's own array
                view = np.empty_like(result).view()
                view.flags.writeable = False
                setattr(data, name, view)
            np.copyto(getattr(data, name).base, result)
        out = tuple(getattr(data, name) for name in fields)
        return out[0] if single else out
    if batch:
        if any(np.ndim(x) != 2 or len(x) != len(q) for _, x in states):
            raise StateError(f"q and {', '.join(name for name, _ in states)} hold different numbers of states")
        guard(len(q))
        outs = None
        for s_ in range(len(q)):
            results = one_state(*_one_state(robot, q[s_], tuple((name, x[s_]) for name, x in states)))
            if outs is None:
                outs = tuple(np.empty((len(q), *r.shape)) for r in results)
            for o, r in zip(outs, results):
                o[s_] = r
        if outs is None:  # no states: the shapes one state would give
            probe = one_state(*checked(robot, robot.neutral_configuration(), *((n, np.zeros(robot.nv)) for n, _ in states)))
            outs = tuple(np.empty((0, *r.shape)) for r in probe)
        return outs[0] if single else outs
    guard(1)
    results = one_state(*_one_state(robot, q, states))
    return results[0] if single else results


@named("dC", ("dC_dq",))
def coriolis_matrix_derivatives(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike,
                                factorization: str = "christoffel", force: bool = False, data: Data | None = None
                                ) -> np.ndarray:
    """∂C/∂q, the derivative of the Coriolis matrix, an nv³ tensor with [i, j, k] = ∂C_ij/∂q_k.

    Column j of C is C(q, q̇) e_j, so `[:, j, :]` is
    [coriolis_product_derivatives][coriolis_cli.coriolis_product_derivatives]' ∂(C e_j)/∂q; all nv of them are computed
    as one batch, in O(nv N d). ∂C/∂q̇ is Γ ([christoffel][coriolis_cli.christoffel]), as C is linear in q̇. On free,
    spherical and planar joints, q moves in the tangent space, as in Pinocchio: q ⊕ δ is `integrate(robot, q, δ)`, so
    ∂/∂q has nv columns, one per DoF (a free joint's: the base's linear then angular velocity in its own frame).

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot]. Robots with closed loops are refused: take the
        derivatives on `robot.full`.
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    factorization : {"christoffel", "featherstone"}, default "christoffel"
        The body-level factorization B(v, I) of the velocity-product forces: `"christoffel"` (eq. 10 of Echeandia &
        Wensing, the Christoffel-consistent C = Σ_k Γ[:, :, k] q̇_k) or `"featherstone"` (eq. 9, B = v ×* I: admissible,
        Ṁ = C + Cᵀ, but not Christoffel-consistent).
    force : bool, default False
        Compute it even above the memory guard: ∂C/∂q holds nv³ doubles a state, and above 256 MiB (for the whole batch)
        it is refused unless `force=True`.
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the result is
        written into `data.dC_dq`, allocated on the first such call, and returned as a read-only view that the next
        call overwrites.

    Returns
    -------
    dC_dq : ndarray of shape (nv, nv, nv) or (K, nv, nv, nv)
        ∂C/∂q, [i, j, k] = ∂C_ij/∂q_k.

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples,
        `factorization` is not one of the two, the robot has closed loops, or `data` is not a workspace of this robot or
        comes with a batch.
    SizeError
        If ∂C/∂q (for all the states) would exceed 256 MiB and `force` is False, or needs more memory than the machine
        has available.

    See Also
    --------
    - [`coriolis_product_derivatives`][coriolis_cli.coriolis_product_derivatives]: ∂(C v)/∂q for one v, in nv² memory.
    - [`christoffel`][coriolis_cli.christoffel]: ∂C/∂q̇ = Γ.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> rng = np.random.default_rng(0)
    >>> q, qd, v = cc.random_configuration(robot, rng), *rng.standard_normal((2, 7))
    >>> dC_dq = cc.coriolis_matrix_derivatives(robot, q, qd)
    >>> dC_dq.shape
    (7, 7, 7)
    >>> bool(np.allclose(np.einsum("ijk,j->ik", dC_dq, v),
    ...                  cc.coriolis_product_derivatives(robot, q, qd, v)[0]))
    True
    """
    n = robot.nv

    def guard(K):
        check_gamma_bytes(n, K, force, "∂C/∂q")
        check_memory(gamma_bytes_for(n, K + 2), f"∂C/∂q of {K} states" if K > 1 else "∂C/∂q")

    def one_state(q, qd):  # [j] = ∂(C e_j)/∂q, (nv, nv), for the nv unit vectors at once
        columns = coriolis_product_derivatives(robot, np.repeat(q[None], n, axis=0), np.repeat(qd[None], n, axis=0),
                                               np.eye(n), factorization)[0]
        return (np.ascontiguousarray(columns.transpose(1, 0, 2)),)

    return _composed(robot, q, (("qd", qd),), one_state, ("dC_dq",), guard, data)


def forward_second_order(robot, q, qd, tau, gravity, lam=None):
    """∂²q̈ (lam None: the four nv³ tensors) or λᵀ∂²q̈ (four nv x nv) at one checked state, from
    τ's: ID(q, q̇, FD(q, q̇, τ)) = τ differentiated twice gives, with a = q̈, T τ's tensors at a
    and [i, j, k] = ∂/∂x_j (∂·_i/∂y_k),

        M ∂²a/∂x_j∂y_k = −(T_xy[:, j, k] + [y = q] T_qa[:, k, :] a_x[:, j] + [x = q] T_qa[:, j, :] a_y[:, k]),
        M ∂²a/∂q_j∂τ_k = −T_qa[:, j, :] M⁻¹[:, k],

    and contracted with λ, τ's contraction with μ = M⁻¹ λ (M is symmetric)."""
    a = forward_dynamics(robot, q, qd, tau, gravity)
    a_q, a_v, Minv = forward_dynamics_derivatives(robot, q, qd, tau, gravity)
    if lam is not None:
        Cqq, Cvv, Cqv, Cqa = inverse_dynamics_second_derivatives_contracted(robot, q, qd, a, Minv @ lam, gravity)
        Cqa_aq = Cqa @ a_q
        return -(Cqq + Cqa_aq.T + Cqa_aq), -Cvv, -(Cqv + Cqa @ a_v), -(Cqa @ Minv)
    Tqq, Tvv, Tqv, Tqa = inverse_dynamics_second_derivatives(robot, q, qd, a, gravity, force=True)
    by_Minv = lambda T: -np.tensordot(Minv, T, axes=(1, 0))  # noqa: E731 (−M⁻¹ on the first index)
    Tqa_aq = np.tensordot(Tqa, a_q, axes=(2, 0))  # [i, j, k] = Σ_l T_qa[i, j, l] a_q[l, k]
    return (by_Minv(Tqq + Tqa_aq + Tqa_aq.transpose(0, 2, 1)), by_Minv(Tvv),
            by_Minv(Tqv + np.tensordot(Tqa, a_v, axes=(2, 0))), by_Minv(np.tensordot(Tqa, Minv, axes=(2, 0))))


@named("d2qdd", ("d2qdd_dq2", "d2qdd_dqd2", "d2qdd_dqdqd", "d2qdd_dqdtau"))
def forward_dynamics_second_derivatives(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike, tau: ArrayLike,
                                        gravity: bool | ArrayLike = True, force: bool = False,
                                        data: Data | None = None
                                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The second derivatives of the forward dynamics: ∂²q̈/∂q², ∂²q̈/∂q̇², ∂²q̈/∂q∂q̇ and ∂²q̈/∂q∂τ.

    Of q̈ = M⁻¹ (τ − C q̇ − g) at (q, q̇, τ), four nv³ tensors with [i, j, k] = ∂/∂x_j (∂q̈_i/∂y_k), as for τ
    ([inverse_dynamics_second_derivatives][coriolis_cli.inverse_dynamics_second_derivatives]): differentiating ID(q, q̇,
    FD(q, q̇, τ)) = τ twice gives them from τ's tensors at q̈ and
    [forward_dynamics_derivatives][coriolis_cli.forward_dynamics_derivatives]. q moves in the tangent space.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot]. Robots with closed loops are refused: take the
        derivatives on `robot.full`.
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    tau : array_like of shape (nv,) or (K, nv)
        Joint torque or force [N·m or N], with as many states as `q`.
    gravity : bool or array_like of shape (3,), default True
        `True`: the robot's gravity (9.81 m/s² along −z of the world unless its file says otherwise, as MJCF can);
        `False`: none; or a 3-vector [m/s²] in the world frame.
    force : bool, default False
        Compute them even above the memory guard: the four tensors hold 4 nv³ doubles a state, and above 256 MiB (for
        the whole batch) they are refused unless `force=True`.
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the results are
        written into `data.d2qdd_dq2`, `data.d2qdd_dqd2`, `data.d2qdd_dqdqd` and `data.d2qdd_dqdtau`, allocated on the
        first such call, and returned as read-only views that the next call overwrites.

    Returns
    -------
    d2qdd_dq2 : ndarray of shape (nv, nv, nv) or (K, nv, nv, nv)
        ∂²q̈/∂q².
    d2qdd_dqd2 : ndarray of shape (nv, nv, nv) or (K, nv, nv, nv)
        ∂²q̈/∂q̇².
    d2qdd_dqdqd : ndarray of shape (nv, nv, nv) or (K, nv, nv, nv)
        ∂²q̈/∂q∂q̇.
    d2qdd_dqdtau : ndarray of shape (nv, nv, nv) or (K, nv, nv, nv)
        ∂²q̈/∂q∂τ.

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples, `gravity`
        is not True, False or a finite 3-vector, the robot has closed loops, a free joint's three linear DoF have
        unequal armature (not differentiated to second order yet), or `data` is not a workspace of this robot or comes
        with a batch.
    SingularMassMatrixError
        If M(q) is singular (joints that move no mass): q̈ is then not defined. Its `joints` name them.
    SizeError
        If the four tensors (for all the states) would exceed 256 MiB and `force` is False, or need more memory than the
        machine has available.

    See Also
    --------
    - [`forward_dynamics_second_derivatives_contracted`][coriolis_cli.forward_dynamics_second_derivatives_contracted]: λᵀ of them, in nv² memory.
    - [`inverse_dynamics_second_derivatives`][coriolis_cli.inverse_dynamics_second_derivatives]: The same for τ.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> rng = np.random.default_rng(0)
    >>> q = cc.random_configuration(robot, rng)
    >>> qd, tau = rng.standard_normal((2, 7))
    >>> F = cc.forward_dynamics_second_derivatives(robot, q, qd, tau)
    >>> Gamma = cc.christoffel(robot, q)
    >>> Minv = np.linalg.inv(cc.mass_matrix(robot, q))
    >>> F[1].shape, bool(np.allclose(
    ...     F[1],
    ...     -np.einsum("il,ljk->ijk", Minv, Gamma + Gamma.transpose(0, 2, 1))))
    ((7, 7, 7), True)
    """
    n = robot.nv
    gravity_for(robot, gravity)  # refused before any state; passed on as given (True: the fast paths)

    def guard(K):
        free_armature_guard(robot)
        check_second_bytes(n, K, force)
        check_memory(gamma_bytes_for(n, 4 * K + 8), "the forward dynamics' second-order derivatives")

    return _composed(robot, q, (("qd", qd), ("tau", tau)),
                     lambda q_, qd_, tau_: forward_second_order(robot, q_, qd_, tau_, gravity),
                     forward_dynamics_second_derivatives.names.outputs, guard, data)


@algorithm(compiled.forward_dynamics_second_derivatives_contracted, key="lam_d2qdd", shape=lambda r: (4, r.nv, r.nv),
           take=_four, batch=compiled.forward_dynamics_second_derivatives_contracted_batch, batch_take=_four_of_each,
           into="fd_contracted_block", returns="fd_contracted_outputs", guard=free_armature_guard)
def forward_dynamics_second_derivatives_contracted(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike,
                                                   tau: ArrayLike, lam: ArrayLike, gravity: bool | ArrayLike = True,
                                                   data: Data | None = None, out: np.ndarray | tuple | None = None
                                                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The forward dynamics' second derivatives contracted with a co-state λ, each nv x nv.

    λᵀ∂²q̈/∂q², λᵀ∂²q̈/∂q̇², λᵀ∂²q̈/∂q∂q̇ and λᵀ∂²q̈/∂q∂τ: Σ_i λ_i F[i, :, :] of each tensor F of
    [forward_dynamics_second_derivatives][coriolis_cli.forward_dynamics_second_derivatives], from τ's contraction with μ
    = M⁻¹λ at q̈ and the first derivatives, without an nv³ array (no memory guard applies): what DDP on forward dynamics
    adds to iLQR. q moves in the tangent space.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot]. Robots with closed loops are refused: take the
        derivatives on `robot.full`.
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    tau : array_like of shape (nv,) or (K, nv)
        Joint torque or force [N·m or N], with as many states as `q`.
    lam : array_like of shape (nv,) or (K, nv)
        The co-state λ, with as many states as `q`.
    gravity : bool or array_like of shape (3,), default True
        `True`: the robot's gravity (9.81 m/s² along −z of the world unless its file says otherwise, as MJCF can);
        `False`: none; or a 3-vector [m/s²] in the world frame.
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the results are
        `data.lam_d2qdd_dq2`, `data.lam_d2qdd_dqd2`, `data.lam_d2qdd_dqdqd` and `data.lam_d2qdd_dqdtau`
        (`data.fd_contracted_outputs`), written in place and returned as read-only views, overwritten by the next call
        (nothing is allocated). The fast form for a control loop.
    out : tuple of ndarray, optional
        The caller's writable float64 arrays of shape (nv, nv) or (K, nv, nv), four of them, for one state or a batch:
        the result is written into them and they are returned, in place when they are what a previous call returned,
        else by a copy. Not together with `data`.

    Returns
    -------
    lam_d2qdd_dq2 : ndarray of shape (nv, nv) or (K, nv, nv)
        λᵀ∂²q̈/∂q².
    lam_d2qdd_dqd2 : ndarray of shape (nv, nv) or (K, nv, nv)
        λᵀ∂²q̈/∂q̇².
    lam_d2qdd_dqdqd : ndarray of shape (nv, nv) or (K, nv, nv)
        λᵀ∂²q̈/∂q∂q̇.
    lam_d2qdd_dqdtau : ndarray of shape (nv, nv) or (K, nv, nv)
        λᵀ∂²q̈/∂q∂τ.

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples, `gravity`
        is not True, False or a finite 3-vector, the robot has closed loops, a free joint's three linear DoF have
        unequal armature (not differentiated to second order yet), `data` is not a workspace of this robot or comes with
        a batch, or `out` does not have the shape returned or comes with `data`.
    SingularMassMatrixError
        If M(q) is singular (joints that move no mass): q̈ is then not defined. Its `joints` name them.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`forward_dynamics_second_derivatives`][coriolis_cli.forward_dynamics_second_derivatives]: The four tensors.
    - [`inverse_dynamics_second_derivatives_contracted`][coriolis_cli.inverse_dynamics_second_derivatives_contracted]: The same for τ.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> rng = np.random.default_rng(0)
    >>> q = cc.random_configuration(robot, rng)
    >>> qd, tau, lam = rng.standard_normal((3, 7))
    >>> contracted = cc.forward_dynamics_second_derivatives_contracted(
    ...     robot, q, qd, tau, lam)
    >>> tensors = cc.forward_dynamics_second_derivatives(robot, q, qd, tau)
    >>> all(np.allclose(c, np.einsum("i,ijk->jk", lam, F))
    ...     for c, F in zip(contracted, tensors))
    True
    """


# ---- Algorithm 4's momentum terms (core/momentum.hpp): p and Cᵀq̇ in one pass --------------------
@algorithm(compiled.momentum, key="p", shape=lambda r: (2, r.nv), take=lambda out: out[0], batch=compiled.momentum_batch,
           batch_take=lambda out: out[:, 0].copy(), into="momentum_block", returns="p")
def generalized_momentum(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike, data: Data | None = None,
                         out: np.ndarray | tuple | None = None) -> np.ndarray:
    """The generalized momentum p = M(q) q̇, without forming M.

    One O(N) recursion (Wensing & Slotine, App. B-B), the joints' armature included: what a momentum observer needs at
    every sample.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the result is
        `data.p`, written in place and returned as a read-only view, overwritten by the next call (nothing is
        allocated). The fast form for a control loop.
    out : ndarray, optional
        The caller's writable float64 array of shape (nv,) or (K, nv), for one state or a batch: the result is written
        into it and it is returned, in place when it is what a previous call returned, else by a copy. Not together with
        `data`.

    Returns
    -------
    p : ndarray of shape (nv,) or (K, nv)
        Generalized momentum [N·m·s or N·s].

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples, `data` is
        not a workspace of this robot or comes with a batch, or `out` does not have the shape returned or comes with
        `data`.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`coriolis_transpose_velocity`][coriolis_cli.coriolis_transpose_velocity]: Cᵀ q̇, the observer's other term.
    - [`momentum_derivatives`][coriolis_cli.momentum_derivatives]: ∂p/∂q.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> q = cc.random_configuration(robot, np.random.default_rng(0))
    >>> qd = np.full(robot.nv, 0.5)
    >>> p = cc.generalized_momentum(robot, q, qd)
    >>> bool(np.allclose(p, cc.mass_matrix(robot, q) @ qd))
    True
    """


@algorithm(compiled.momentum, key="CTqd", shape=lambda r: (2, r.nv), take=lambda out: out[1], batch=compiled.momentum_batch,
           batch_take=lambda out: out[:, 1].copy(), into="momentum_block", returns="CTqd")
def coriolis_transpose_velocity(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike,
                                data: Data | None = None, out: np.ndarray | tuple | None = None) -> np.ndarray:
    """C(q, q̇)ᵀ q̇, without forming C.

    One O(N) recursion (Wensing & Slotine, eq. B-B1). The result is the same for every C with Ṁ = C + Cᵀ, since Cᵀq̇ = Ṁ
    q̇ − C q̇: the term a momentum observer needs (ṗ = τ + Cᵀq̇ − g).

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the result is
        `data.CTqd`, written in place and returned as a read-only view, overwritten by the next call (nothing is
        allocated). The fast form for a control loop.
    out : ndarray, optional
        The caller's writable float64 array of shape (nv,) or (K, nv), for one state or a batch: the result is written
        into it and it is returned, in place when it is what a previous call returned, else by a copy. Not together with
        `data`.

    Returns
    -------
    CTqd : ndarray of shape (nv,) or (K, nv)
        Cᵀ q̇ [N·m or N].

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples, `data` is
        not a workspace of this robot or comes with a batch, or `out` does not have the shape returned or comes with
        `data`.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`generalized_momentum`][coriolis_cli.generalized_momentum]: p = M q̇.
    - [`coriolis_transpose_derivatives`][coriolis_cli.coriolis_transpose_derivatives]: Its derivatives.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> q = cc.random_configuration(robot, np.random.default_rng(0))
    >>> qd = np.full(robot.nv, 0.5)
    >>> M, Mdot, C = cc.coriolis_matrix(robot, q, qd)
    >>> bool(np.allclose(cc.coriolis_transpose_velocity(robot, q, qd), C.T @ qd))
    True
    """


@algorithm(compiled.momentum_derivatives, key="dp", shape=_square, batch=compiled.momentum_derivatives_batch,
           into="dp_block", returns="dp_dq")
def momentum_derivatives(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike, data: Data | None = None,
                         out: np.ndarray | tuple | None = None) -> np.ndarray:
    """∂p/∂q of the generalized momentum p = M(q) q̇.

    In O(N d): the inverse dynamics' ∂τ/∂q at rest with q̈ = q̇ and no gravity, as M(q) u = τ(q, 0, u). For a momentum
    observer's or a trajectory optimizer's linearization; (∂p/∂q) q̇ = Ṁ q̇. Each output is an nv x nv array with [i, j]
    = ∂y_i/∂x_j. On free, spherical and planar joints, q moves in the tangent space, as in Pinocchio: q ⊕ δ is
    `integrate(robot, q, δ)`, so ∂/∂q has nv columns, one per DoF (a free joint's: the base's linear then angular
    velocity in its own frame).

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot]. Robots with closed loops are refused: take the
        derivatives on `robot.full`.
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the result is
        `data.dp_dq`, written in place and returned as a read-only view, overwritten by the next call (nothing is
        allocated). The fast form for a control loop.
    out : ndarray, optional
        The caller's writable float64 array of shape (nv, nv) or (K, nv, nv), for one state or a batch: the result is
        written into it and it is returned, in place when it is what a previous call returned, else by a copy. Not
        together with `data`.

    Returns
    -------
    dp_dq : ndarray of shape (nv, nv) or (K, nv, nv)
        ∂p/∂q, [i, j] = ∂p_i/∂q_j.

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples, the robot
        has closed loops, `data` is not a workspace of this robot or comes with a batch, or `out` does not have the
        shape returned or comes with `data`.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`generalized_momentum`][coriolis_cli.generalized_momentum]: p itself.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> q = cc.random_configuration(robot, np.random.default_rng(0))
    >>> qd = np.full(7, 0.5)
    >>> dp_dq = cc.momentum_derivatives(robot, q, qd)
    >>> bool(np.allclose(dp_dq @ qd, cc.coriolis_matrix(robot, q, qd)[1] @ qd))
    True
    """


def _momentum_regressors(robot, out, states, arguments) -> MomentumRegressors:
    """The block (3 nv + 1, 10 N) (or (K, ·) of them) as its parts, and Y_V̇ = q̇ᵀ Y_g."""
    n, qd = robot.nv, states[1]
    Yg = out[..., 2 * n : 3 * n, :]
    return MomentumRegressors(out[..., :n, :], out[..., n : 2 * n, :], Yg, out[..., 3 * n, :],
                              np.einsum("...r,...rc->...c", qd, Yg))


@algorithm(compiled.momentum_regressors, key="Y_momentum",
           outputs=MOMENTUM_REGRESSORS, shape=lambda r: (3 * r.nv + 1, N_PARAMETERS * r.n_bodies),
           batch=compiled.momentum_regressor_batch, finish=_momentum_regressors)
def momentum_regressors(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike,
                        gravity: bool | ArrayLike = True) -> MomentumRegressors:
    """The regressors of p, Cᵀq̇, g, the kinetic energy and the potential energy's rate at (q, q̇).

    One O(N d) pass with 10 unit inertial parameters per body, as [regressor][coriolis_cli.regressor] computes Y
    (Wensing & Slotine, Algorithm 4 and App. B-B): for every θ (10 per body, in the order of
    [inertial_parameters][coriolis_cli.inertial_parameters]), `p @ θ` = M q̇, `c @ θ` = Cᵀq̇, `g @ θ` = g, `T @ θ` = ½
    q̇ᵀM q̇ and `Vdot @ θ` = q̇ᵀg, the joints' armature apart (it is no inertial parameter). For identification from
    momentum or energy, which needs no q̈ (`coriolis identify --form momentum|energy`).

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    gravity : bool or array_like of shape (3,), default True
        `True`: the robot's gravity (9.81 m/s² along −z of the world unless its file says otherwise, as MJCF can);
        `False`: none; or a 3-vector [m/s²] in the world frame.

    Returns
    -------
    MomentumRegressors
        A named tuple of `p`, `c`, `g`, arrays of shape (nv, 10 N) or (K, nv, 10 N), and `T`, `Vdot`, of shape (10 N,)
        or (K, 10 N); N is the number of bodies.

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples, or
        `gravity` is not True, False or a finite 3-vector.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`regressor`][coriolis_cli.regressor]: The regressor of the Slotine–Li torque.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> q = cc.random_configuration(robot, np.random.default_rng(0))
    >>> qd = np.full(robot.nv, 0.5)
    >>> Y = cc.momentum_regressors(robot, q, qd)
    >>> theta = cc.inertial_parameters(robot)
    >>> Y.p.shape, Y.T.shape
    ((7, 70), (70,))
    >>> bool(np.allclose(Y.p @ theta, cc.generalized_momentum(robot, q, qd)))
    True
    """


def _trajectory_states(robot, states, options):
    """Without q̈ the kernel's q̈ terms are computed and discarded (τ is NaN): q̇ stands in for it, as
    fresh zeros would cost a page fault per 4 KiB."""
    Q, QD, QDD = states
    return (Q, QD, QD if QDD is None else QDD), (QDD is not None, gravity_for(robot, options["gravity"]))


def _potential_offset(robot, out, states, arguments):
    """V from the computation frame's origin o to the world's: −m gᵀo (o: the first root joint's
    place; for a free root, the base's position in the world, which moves)."""
    Q, g = states[0], arguments[1]
    root = robot.bodies[0].joint
    if robot.arrays.ints[0, 1] == FREE_CODE:
        qs = int(robot.q_start[0])
        origin = np.asarray(root.translation) + Q[:, qs : qs + 3] @ np.asarray(root.rotation).T
    else:
        origin = np.broadcast_to(np.asarray(root.translation, float), (Q.shape[0], 3))
    out[:, -1] -= robot.total_mass * (origin @ np.asarray(g, float))
    return out


@algorithm(key="trajectory", outputs=TRAJECTORY_OUTPUTS, shape=lambda r: (TRAJECTORY_QUANTITIES * r.nv + 2,), batch=compiled.trajectory_batch, prepare=_trajectory_states,
           finish=_potential_offset)
def trajectory_dynamics(robot: RobotModel | ReducedRobot, Q: ArrayLike, QD: ArrayLike, QDD: ArrayLike | None = None,
                        gravity: bool | ArrayLike = True) -> np.ndarray:
    """g, C q̇, Cᵀq̇, p, τ and the two energies along K samples of a trajectory, in one array.

    One pass per sample, the samples in parallel: what `coriolis compute --recording` streams. Without `QDD` the τ
    columns are NaN.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    Q : array_like of shape (K, nq)
        Joint configurations [rad or m], one row per sample (a single (nq,) state is taken as K = 1). A free joint takes
        its position [m] then its unit quaternion (x, y, z, w).
    QD : array_like of shape (K, nv)
        Joint velocities [rad/s or m/s].
    QDD : array_like of shape (K, nv), optional
        Joint accelerations [rad/s² or m/s²]. None: τ is not computed (NaN).
    gravity : bool or array_like of shape (3,), default True
        `True`: the robot's gravity (9.81 m/s² along −z of the world unless its file says otherwise, as MJCF can);
        `False`: none; or a 3-vector [m/s²] in the world frame.

    Returns
    -------
    ndarray, shape (K, 5 nv + 2)
        Per sample, in columns of nv each: g [N·m or N], C q̇, Cᵀq̇, p = M q̇ [N·m·s or N·s] and τ = M q̈ + C q̇ + g;
        then the kinetic energy ½ q̇ᵀM q̇ [J] and the potential energy −gᵀ Σ m_i c_i [J], c_i the bodies' centres of
        mass in the world frame.

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples, or
        `gravity` is not True, False or a finite 3-vector.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`inverse_dynamics`][coriolis_cli.inverse_dynamics]: τ alone.
    - [`generalized_momentum`][coriolis_cli.generalized_momentum]: p alone.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> rng = np.random.default_rng(0)
    >>> Q = np.array([cc.random_configuration(robot, rng) for _ in range(4)])
    >>> QD, QDD = rng.standard_normal((2, 4, 7))
    >>> out = cc.trajectory_dynamics(robot, Q, QD, QDD)
    >>> out.shape, bool(np.allclose(
    ...     out[:, 28:35], cc.inverse_dynamics(robot, Q, QD, QDD)))
    ((4, 37), True)
    """


# ---- control: forward dynamics, Slotine–Li ---------------------------------------------------------
@algorithm(compiled.forward_dynamics, key="qdd", shape=_vector, batch=compiled.forward_dynamics_batch, into="qdd_out",
           returns="qdd")
def forward_dynamics(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike, tau: ArrayLike,
                     gravity: bool | ArrayLike = True, data: Data | None = None, out: np.ndarray | tuple | None = None
                     ) -> np.ndarray:
    """The joint accelerations q̈ = M(q)⁻¹ (τ − C(q, q̇) q̇ − g(q)).

    Robots of 1-DoF joints under at most a free root take the articulated-body algorithm in body coordinates; others the
    composite-rigid-body algorithm, then M = LᵀDL factored along the tree, with the sparsity its branches induce.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    tau : array_like of shape (nv,) or (K, nv)
        Joint torque or force [N·m or N], with as many states as `q`.
    gravity : bool or array_like of shape (3,), default True
        `True`: the robot's gravity (9.81 m/s² along −z of the world unless its file says otherwise, as MJCF can);
        `False`: none; or a 3-vector [m/s²] in the world frame.
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the result is
        `data.qdd`, written in place and returned as a read-only view, overwritten by the next call (nothing is
        allocated). `data.M` is not written: `mass_matrix(robot, q, data=data)` gives it.
    out : ndarray, optional
        The caller's writable float64 array of shape (nv,) or (K, nv), for one state or a batch: the result is written
        into it and it is returned, in place when it is what a previous call returned, else by a copy. Not together with
        `data`.

    Returns
    -------
    qdd : ndarray of shape (nv,) or (K, nv)
        Joint accelerations [rad/s² or m/s²].

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples, `gravity`
        is not True, False or a finite 3-vector, `data` is not a workspace of this robot or comes with a batch, or `out`
        does not have the shape returned or comes with `data`.
    SingularMassMatrixError
        If M(q) is singular (joints that move no mass): q̈ is then not defined. Its `joints` name them.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`inverse_dynamics`][coriolis_cli.inverse_dynamics]: τ from q̈.
    - [`forward_dynamics_derivatives`][coriolis_cli.forward_dynamics_derivatives]: ∂q̈/∂q, ∂q̈/∂q̇ and M⁻¹.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> rng = np.random.default_rng(0)
    >>> q = cc.random_configuration(robot, rng)
    >>> qd, qdd = rng.standard_normal(7), rng.standard_normal(7)
    >>> tau = cc.inverse_dynamics(robot, q, qd, qdd)
    >>> bool(np.allclose(cc.forward_dynamics(robot, q, qd, tau), qdd))
    True
    """


@algorithm(compiled.slotine_li, key="slotine", shape=_vector, into="tau_out", returns="tau")
def slotine_li(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike, qd_r: ArrayLike, qdd_r: ArrayLike,
               theta: ArrayLike | None = None, gravity: bool | ArrayLike = True, factorization: str = "christoffel",
               data: Data | None = None) -> np.ndarray:
    """The Slotine–Li torque τ = M(q) q̈_r + C(q, q̇) q̇_r + g(q), without forming C.

    The O(N) recursion of Wensing & Slotine's Algorithm 3, for passivity-based and adaptive controllers: q̇_r and q̈_r
    are the reference velocity and acceleration (e.g. q̇_r = q̇_d − Λ (q − q_d)). One state at a time.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    q : array_like of shape (nq,)
        Joint configuration [rad or m], one state. A free joint takes its position [m] then its unit quaternion (x, y,
        z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame).
    qd_r : array_like of shape (nv,)
        Reference velocity q̇_r [rad/s or m/s].
    qdd_r : array_like of shape (nv,)
        Reference acceleration q̈_r [rad/s² or m/s²].
    theta : array_like of shape (10 N,), optional
        Inertial parameters (10 per body, in the order of [inertial_parameters][coriolis_cli.inertial_parameters]) that
        replace the model's, e.g. an adaptive controller's estimate θ̂. None: the model's own.
    gravity : bool or array_like of shape (3,), default True
        `True`: the robot's gravity (9.81 m/s² along −z of the world unless its file says otherwise, as MJCF can);
        `False`: none; or a 3-vector [m/s²] in the world frame.
    factorization : {"christoffel", "featherstone"}, default "christoffel"
        The body-level factorization B(v, I) of the velocity-product forces: `"christoffel"` (eq. 10 of Echeandia &
        Wensing, the Christoffel-consistent C = Σ_k Γ[:, :, k] q̇_k) or `"featherstone"` (eq. 9, B = v ×* I: admissible,
        Ṁ = C + Cᵀ, but not Christoffel-consistent).
    data : Data, optional
        A workspace from [create_data][coriolis_cli.create_data] for this robot, one state at a time: the result is
        `data.tau`, written in place and returned as a read-only view, overwritten by the next call (nothing is
        allocated). The fast form for a control loop.

    Returns
    -------
    tau : ndarray of shape (nv,)
        Joint torques and forces [N·m or N].

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, `theta` does not hold 10 parameters per body, `gravity`
        or `factorization` is not one the function knows, `q` is a batch (one state at a time), or `data` is not a
        workspace of this robot or comes with a batch.

    See Also
    --------
    - [`regressor`][coriolis_cli.regressor]: Y with Y θ = τ.
    - [`adaptation_gradient`][coriolis_cli.adaptation_gradient]: Yᵀ s, the adaptation law's gradient.
    - [`slotine_li_derivatives`][coriolis_cli.slotine_li_derivatives]: Its derivatives.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> rng = np.random.default_rng(0)
    >>> q = cc.random_configuration(robot, rng)
    >>> qd, qdd = rng.standard_normal(7), rng.standard_normal(7)
    >>> # q̇_r = q̇, q̈_r = q̈: the inverse dynamics
    >>> tau = cc.slotine_li(robot, q, qd, qd, qdd)
    >>> bool(np.allclose(tau, cc.inverse_dynamics(robot, q, qd, qdd)))
    True
    """


@algorithm(compiled.regressor, key="Y", outputs=("Y",), shape=lambda r: (r.nv + 1, N_PARAMETERS * r.n_bodies), take=lambda out: out[:-1],
           batch=compiled.regressor_batch, batch_shape=lambda r: (r.nv, N_PARAMETERS * r.n_bodies),
           batch_take=lambda out: out)
def regressor(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike, qd_r: ArrayLike, qdd_r: ArrayLike,
              gravity: bool | ArrayLike = True, factorization: str = "christoffel",
              out: np.ndarray | tuple | None = None) -> np.ndarray:
    """The Slotine–Li regressor Y(q, q̇, q̇_r, q̈_r), with Y θ = M q̈_r + C q̇_r + g for every θ.

    Wensing & Slotine's Algorithm 4: τ of [slotine_li][coriolis_cli.slotine_li] is linear in the inertial parameters θ
    (10 per body), and Y θ gives it for every θ, less the joints' armature, which is no inertial parameter: `slotine_li`
    = Y θ + diag(a) q̈_r on joints other than free ones. At q̇_r = q̇ it is Pinocchio's
    `computeJointTorqueRegressor(q, q̇, q̈_r)`. For identification and adaptive control.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    q : array_like of shape (nq,) or (K, nq)
        Joint configuration [rad or m], one state or a batch of K. A free joint takes its position [m] then its unit
        quaternion (x, y, z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,) or (K, nv)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame), with
        as many states as `q`.
    qd_r : array_like of shape (nv,) or (K, nv)
        Reference velocity q̇_r [rad/s or m/s], with as many states as `q`.
    qdd_r : array_like of shape (nv,) or (K, nv)
        Reference acceleration q̈_r [rad/s² or m/s²], with as many states as `q`.
    gravity : bool or array_like of shape (3,), default True
        `True`: the robot's gravity (9.81 m/s² along −z of the world unless its file says otherwise, as MJCF can);
        `False`: none; or a 3-vector [m/s²] in the world frame.
    factorization : {"christoffel", "featherstone"}, default "christoffel"
        The body-level factorization B(v, I) of the velocity-product forces: `"christoffel"` (eq. 10 of Echeandia &
        Wensing, the Christoffel-consistent C = Σ_k Γ[:, :, k] q̇_k) or `"featherstone"` (eq. 9, B = v ×* I: admissible,
        Ṁ = C + Cᵀ, but not Christoffel-consistent).
    out : ndarray, optional
        The caller's writable float64 array of shape (nv, 10 N) or (K, nv, 10 N), for one state or a batch: the result
        is written into it and it is returned, in place when it is what a previous call returned, else by a copy.

    Returns
    -------
    Y : ndarray of shape (nv, 10 N) or (K, nv, 10 N)
        The regressor, N the number of bodies, columns in the order of
        [inertial_parameters][coriolis_cli.inertial_parameters].

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, the states hold different numbers of samples, `gravity`
        or `factorization` is not one the function knows, or `out` does not have the shape returned.
    SizeError
        If a batch's result needs more memory than the machine has available.

    See Also
    --------
    - [`slotine_li`][coriolis_cli.slotine_li]: Y θ in O(N), without Y.
    - [`adaptation_gradient`][coriolis_cli.adaptation_gradient]: Yᵀ s without Y.
    - [`momentum_regressors`][coriolis_cli.momentum_regressors]: The regressors of p, Cᵀq̇, g and the energies.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> rng = np.random.default_rng(0)
    >>> q = cc.random_configuration(robot, rng)
    >>> qd, qd_r, qdd_r = rng.standard_normal((3, 7))
    >>> Y = cc.regressor(robot, q, qd, qd_r, qdd_r)
    >>> theta = cc.inertial_parameters(robot)
    >>> Y.shape, bool(np.allclose(
    ...     Y @ theta, cc.slotine_li(robot, q, qd, qd_r, qdd_r)))
    ((7, 70), True)
    """


@algorithm(compiled.adaptation_gradient, key="YTs", outputs=("YTs",), shape=lambda r: (N_PARAMETERS * r.n_bodies,))
def adaptation_gradient(robot: RobotModel | ReducedRobot, q: ArrayLike, qd: ArrayLike, qd_r: ArrayLike,
                        qdd_r: ArrayLike, gravity: bool | ArrayLike = True, factorization: str = "christoffel"
                        ) -> np.ndarray:
    """Yᵀ s with s = q̇ − q̇_r, the gradient of the Slotine–Li adaptation law, without forming Y.

    The recursion of Wensing & Slotine's Algorithm 3, line 9 ([Yᵀs]_j = 𝒴_jᵀ (v_j − w_j)), without the nv x 10 N
    product: the adaptive controller updates its estimate as θ̂̇ = −P Yᵀ s. One state at a time.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    q : array_like of shape (nq,)
        Joint configuration [rad or m], one state. A free joint takes its position [m] then its unit quaternion (x, y,
        z, w); a quaternion off unit norm is normalized with a `QuaternionWarning`.
    qd : array_like of shape (nv,)
        Joint velocity [rad/s or m/s] (a free joint's: the base's linear then angular velocity, in the base frame).
    qd_r : array_like of shape (nv,)
        Reference velocity q̇_r [rad/s or m/s].
    qdd_r : array_like of shape (nv,)
        Reference acceleration q̈_r [rad/s² or m/s²].
    gravity : bool or array_like of shape (3,), default True
        `True`: the robot's gravity (9.81 m/s² along −z of the world unless its file says otherwise, as MJCF can);
        `False`: none; or a 3-vector [m/s²] in the world frame.
    factorization : {"christoffel", "featherstone"}, default "christoffel"
        The body-level factorization B(v, I) of the velocity-product forces: `"christoffel"` (eq. 10 of Echeandia &
        Wensing, the Christoffel-consistent C = Σ_k Γ[:, :, k] q̇_k) or `"featherstone"` (eq. 9, B = v ×* I: admissible,
        Ṁ = C + Cᵀ, but not Christoffel-consistent).

    Returns
    -------
    YTs : ndarray of shape (10 N,)
        Yᵀ s, one entry per inertial parameter, in the order of [inertial_parameters][coriolis_cli.inertial_parameters].

    Raises
    ------
    StateError
        If a state has the wrong length or a non-finite entry, `gravity` or `factorization` is not one the function
        knows, or `q` is a batch (one state at a time).

    See Also
    --------
    - [`regressor`][coriolis_cli.regressor]: Y itself.
    - [`slotine_li`][coriolis_cli.slotine_li]: The torque Y θ.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> rng = np.random.default_rng(0)
    >>> q = cc.random_configuration(robot, rng)
    >>> qd, qd_r, qdd_r = rng.standard_normal((3, 7))
    >>> YTs = cc.adaptation_gradient(robot, q, qd, qd_r, qdd_r)
    >>> bool(np.allclose(
    ...     YTs, cc.regressor(robot, q, qd, qd_r, qdd_r).T @ (qd - qd_r)))
    True
    """


def gamma_bytes(robot, K: int = 1) -> int:
    """Bytes of Γ for K states of this robot."""
    return gamma_bytes_for(robot.nv, K)


def check_gamma_size(robot, K: int = 1, force: bool = False) -> None:
    """SizeError when Γ for K states would exceed the memory guard, unless ``force``."""
    check_gamma_bytes(robot.nv, K, force)


__all__ = [
    "Data",
    "QuaternionWarning",
    "adaptation_gradient",
    "christoffel",
    "christoffel_largest",
    "christoffel_slices",
    "coriolis_matrix",
    "coriolis_matrix_derivatives",
    "coriolis_product_derivatives",
    "coriolis_transpose_derivatives",
    "coriolis_transpose_velocity",
    "create_data",
    "forward_dynamics",
    "forward_dynamics_derivatives",
    "generalized_momentum",
    "gravity_derivatives",
    "gravity_vector",
    "inverse_dynamics",
    "inverse_dynamics_derivatives",
    "inverse_dynamics_second_derivatives",
    "inverse_dynamics_second_derivatives_contracted",
    "forward_dynamics_second_derivatives",
    "forward_dynamics_second_derivatives_contracted",
    "mass_matrix",
    "momentum_derivatives",
    "momentum_regressors",
    "regressor",
    "slotine_li",
    "slotine_li_derivatives",
    "trajectory_dynamics",
]
