"""M, Ṁ, C, Γ, τ, g, q̈, C v, Cᵀq̇ and p as JAX functions: under ``jax.jit``, ``jax.vmap``, ``jax.grad``,
``jax.jacfwd`` and ``jax.jacrev``, computed by the engine's compiled kernels and differentiated by its analytic
derivatives (the extra ``coriolis-cli[jax]``; the rest of the package never imports JAX).

    import jax
    jax.config.update("jax_enable_x64", True)
    import coriolis_cli as cc, coriolis_cli.jax as cj

    robot = cc.load_robot("panda")
    tau = jax.jit(lambda q, qd, qdd: cj.inverse_dynamics(robot, q, qd, qdd))

Each call reaches the kernels through XLA's foreign-function interface (``jax.ffi``, on the CPU),
with no Python in a jitted program's loop; a batch (``vmap``, or states of shape (K, ·)) is one
call of the batch kernels, on ``coriolis_cli.get_num_threads()`` threads. Derivatives follow the
NumPy functions' analytic ones: ∂τ/∂(q, q̇, q̈) (inverse_dynamics_derivatives), ∂q̈/∂(q, q̇, τ)
(forward_dynamics_derivatives), ∂g/∂q (gravity_derivatives) and ∂M_ij/∂q_k = Γ_ijk + Γ_jik
(christoffel), and the others' listed on the API page. τ has second derivatives as well (its
Jacobians' from inverse_dynamics_second_derivatives); a second derivative of the others raises.

The robot is a Python constant of the traced function (a program is compiled once per robot);
its gravity is the robot's unless ``gravity`` gives a 3-vector of numbers. Every joint type:
on free, spherical and planar joints a tangent of q (nq entries, a quaternion's four among them)
stands for the velocity in the tangent space that moves q as it does, the one the NumPy
functions' derivatives take (``integrate``'s direction); a tangent along a quaternion itself
moves nothing, as the kernels normalize it. Trees only for now: mimic joints, base velocities
and closed loops are refused in one line. float64 only. A state the NumPy functions refuse (not
finite, a singular M) gives NaN here, as JAX's own functions do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .engine import xla

if TYPE_CHECKING:  # the annotations' names, for readers and the documentation; nothing is imported for them
    import jax
    from numpy.typing import ArrayLike

    from .model.tree import RobotModel

__all__ = ["christoffel", "coriolis_matrix", "coriolis_product", "coriolis_transpose_velocity", "forward_dynamics",
           "generalized_momentum", "gravity_vector", "inverse_dynamics", "mass_matrix"]


def mass_matrix(robot: RobotModel, q: jax.Array) -> jax.Array:
    """Joint-space mass matrix M(q) as a JAX function.

    The compiled kernel of [coriolis_cli.mass_matrix][coriolis_cli.mass_matrix] (the same bits),
    called through XLA's foreign-function interface on the CPU: it runs inside `jax.jit` with no
    Python in the loop, and a batch (q of shape (K, nq) or (..., nq), or `jax.vmap`) is one call of
    the batch kernels on [get_num_threads][coriolis_cli.get_num_threads] threads.

    Differentiable in `q` to first order under `jax.jvp`, `jax.vjp`, `jax.grad`, `jax.jacfwd` and
    `jax.jacrev`, composed with `jit` and `vmap`, by the analytic derivative
    ∂M_ij/∂q_k = Γ_ijk + Γ_jik (Γ from [christoffel][coriolis_cli.jax.christoffel]); a second
    derivative raises `StateError`. On free, spherical and planar joints a tangent of q stands for
    the tangent-space velocity that moves q as it does (a change along a quaternion itself moves
    nothing). A q that is not finite gives NaN, as JAX's own functions do.

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included, and a constant of the traced program (compiled once per robot). Mimic
        joints, base velocities and closed loops are refused: pass `robot.full`.
    q : array_like of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize]. A JAX or NumPy array on the CPU, computed in float64.

    Returns
    -------
    M : jax.Array of shape (nv, nv), (K, nv, nv) or (..., nv, nv)
        Symmetric positive-definite mass matrix [kg·m², kg for prismatic rows and columns], float64.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, `jax_enable_x64` is off, q's last axis is not
        nq, q is on a device other than the CPU, or M is differentiated twice.

    See Also
    --------
    - [`coriolis_matrix`][coriolis_cli.jax.coriolis_matrix]: M together with Ṁ and C.
    - [`christoffel`][coriolis_cli.jax.christoffel]: Γ, whose symmetrization is M's derivative.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> jax.config.update("jax_enable_x64", True)
    >>> import coriolis_cli as cc, coriolis_cli.jax as cj
    >>> robot = cc.load_robot("panda")
    >>> M = jax.jit(lambda q: cj.mass_matrix(robot, q))(jnp.zeros(7))
    >>> M.shape, bool(jnp.allclose(M, M.T))
    ((7, 7), True)
    >>> jax.jacfwd(lambda q: cj.mass_matrix(robot, q))(jnp.zeros(7)).shape  # ∂M/∂q
    (7, 7, 7)
    """
    return xla.mass_matrix(robot, q)


def inverse_dynamics(robot: RobotModel, q: jax.Array, qd: jax.Array, qdd: jax.Array, gravity: bool | ArrayLike = True
                     ) -> jax.Array:
    """Joint torques τ = M(q) q̈ + C(q, q̇) q̇ + g(q) as a JAX function.

    The recursive Newton–Euler kernel of [coriolis_cli.inverse_dynamics][coriolis_cli.inverse_dynamics]
    (the same bits), called through XLA's foreign-function interface on the CPU: it runs inside
    `jax.jit` with no Python in the loop, and a batch (states of shape (K, ·) or (..., ·), which
    broadcast against each other, or `jax.vmap`) is one call of the batch kernels on
    [get_num_threads][coriolis_cli.get_num_threads] threads.

    Differentiable in `q`, `qd` and `qdd` under `jax.jvp`, `jax.vjp`, `jax.grad`, `jax.jacfwd` and
    `jax.jacrev`, composed with `jit` and `vmap`: the first derivatives are ∂τ/∂q, ∂τ/∂q̇ and M
    (those of [inverse_dynamics_derivatives][coriolis_cli.inverse_dynamics_derivatives]), and τ is
    the one function with second derivatives too (`jax.hessian`, `jacfwd(jacrev(...))`, from
    [inverse_dynamics_second_derivatives][coriolis_cli.inverse_dynamics_second_derivatives]); a
    third derivative raises `StateError`. `gravity` is not differentiated. On free, spherical and
    planar joints a tangent of q stands for the tangent-space velocity that moves q as it does. A
    state that is not finite gives NaN, as JAX's own functions do.

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included, and a constant of the traced program (compiled once per robot and gravity).
        Mimic joints, base velocities and closed loops are refused: pass `robot.full`.
    q : array_like of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize]. A JAX or NumPy array on the CPU, computed in float64.
    qd : array_like of shape (nv,), (K, nv) or (..., nv)
        Joint velocity [rad/s or m/s; a free joint's linear and angular velocity in the base frame].
    qdd : array_like of shape (nv,), (K, nv) or (..., nv)
        Joint acceleration [rad/s² or m/s²].
    gravity : bool or array_like of 3 floats, optional
        True (the default) for the robot's gravity, False for none, or a 3-vector of numbers
        [m/s²] in the world frame. A constant of the program, not a traced value.

    Returns
    -------
    tau : jax.Array of shape (nv,), (K, nv) or (..., nv)
        Joint torques and forces [N·m or N], float64, with the states' broadcast batch shape.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, `jax_enable_x64` is off, a state's last axis is
        not nq (q) or nv, a state is on a device other than the CPU, `gravity` is not True, False
        or a finite 3-vector, or τ is differentiated three times.
    SizeError
        If a second derivative would hold more than 256 MiB (four nv³ tensors a state).
    ValueError
        If the states' batch shapes do not broadcast.

    See Also
    --------
    - [`forward_dynamics`][coriolis_cli.jax.forward_dynamics]: q̈ from τ, its inverse.
    - [`gravity_vector`][coriolis_cli.jax.gravity_vector]: g(q) alone.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> jax.config.update("jax_enable_x64", True)
    >>> import coriolis_cli as cc, coriolis_cli.jax as cj
    >>> robot = cc.load_robot("panda")
    >>> q, qd, qdd = jnp.zeros(7), jnp.ones(7), jnp.zeros(7)
    >>> dtau_dq = jax.jit(jax.jacrev(
    ...     lambda q: cj.inverse_dynamics(robot, q, qd, qdd)))(q)
    >>> bool(jnp.allclose(
    ...     dtau_dq, cc.inverse_dynamics_derivatives(robot, q, qd, qdd)[0]))
    True
    """
    return xla.inverse_dynamics(robot, q, qd, qdd, gravity)


def gravity_vector(robot: RobotModel, q: jax.Array, gravity: bool | ArrayLike = True) -> jax.Array:
    """Generalized gravity g(q), the torques that hold the robot still, as a JAX function.

    The compiled kernel of [coriolis_cli.gravity_vector][coriolis_cli.gravity_vector] (the same
    bits), called through XLA's foreign-function interface on the CPU: it runs inside `jax.jit`
    with no Python in the loop, and a batch (q of shape (K, nq) or (..., nq), or `jax.vmap`) is one
    call of the batch kernels on [get_num_threads][coriolis_cli.get_num_threads] threads.

    Differentiable in `q` to first order under `jax.jvp`, `jax.vjp`, `jax.grad`, `jax.jacfwd` and
    `jax.jacrev`, composed with `jit` and `vmap`, by ∂g/∂q from
    [gravity_derivatives][coriolis_cli.gravity_derivatives]; a second derivative raises
    `StateError`, and `gravity` is not differentiated. On free, spherical and planar joints a
    tangent of q stands for the tangent-space velocity that moves q as it does. A q that is not
    finite gives NaN, as JAX's own functions do.

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included, and a constant of the traced program (compiled once per robot and gravity).
        Mimic joints, base velocities and closed loops are refused: pass `robot.full`.
    q : array_like of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize]. A JAX or NumPy array on the CPU, computed in float64.
    gravity : bool or array_like of 3 floats, optional
        True (the default) for the robot's gravity, False for none, or a 3-vector of numbers
        [m/s²] in the world frame. A constant of the program, not a traced value.

    Returns
    -------
    g : jax.Array of shape (nv,), (K, nv) or (..., nv)
        Gravity torques and forces [N·m or N], float64.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, `jax_enable_x64` is off, q's last axis is not
        nq, q is on a device other than the CPU, `gravity` is not True, False or a finite 3-vector,
        or g is differentiated twice.

    See Also
    --------
    - [`inverse_dynamics`][coriolis_cli.jax.inverse_dynamics]: τ, of which g is the part at rest.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> jax.config.update("jax_enable_x64", True)
    >>> import coriolis_cli as cc, coriolis_cli.jax as cj
    >>> robot = cc.load_robot("panda")
    >>> Q = jnp.linspace(-1.0, 1.0, 35).reshape(5, 7)
    >>> (cj.gravity_vector(robot, Q).shape,
    ...  jax.vmap(lambda q: cj.gravity_vector(robot, q))(Q).shape)
    ((5, 7), (5, 7))
    >>> float(jnp.abs(cj.gravity_vector(robot, Q, gravity=False)).max())
    0.0
    """
    return xla.gravity_vector(robot, q, gravity)


def forward_dynamics(robot: RobotModel, q: jax.Array, qd: jax.Array, tau: jax.Array, gravity: bool | ArrayLike = True
                     ) -> jax.Array:
    """Joint accelerations q̈ = M(q)⁻¹ (τ − C(q, q̇) q̇ − g(q)) as a JAX function.

    The compiled kernel of [coriolis_cli.forward_dynamics][coriolis_cli.forward_dynamics] (the
    same bits), called through XLA's foreign-function interface on the CPU: it runs inside
    `jax.jit` and `jax.lax.scan` with no Python in the loop, which is what a rollout or a
    trajectory optimization takes, and a batch (states of shape (K, ·) or (..., ·), which broadcast
    against each other, or `jax.vmap`) is one call of the batch kernels on
    [get_num_threads][coriolis_cli.get_num_threads] threads.

    Differentiable in `q`, `qd` and `tau` to first order under `jax.jvp`, `jax.vjp`, `jax.grad`,
    `jax.jacfwd` and `jax.jacrev`, composed with `jit` and `vmap`, by ∂q̈/∂q, ∂q̈/∂q̇ and M⁻¹ from
    [forward_dynamics_derivatives][coriolis_cli.forward_dynamics_derivatives]; a second derivative
    raises `StateError`, and `gravity` is not differentiated. On free, spherical and planar joints
    a tangent of q stands for the tangent-space velocity that moves q as it does. A state that is
    not finite, or a singular M, gives NaN, as JAX's own functions do (`jax.debug_nans` finds it).

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included, and a constant of the traced program (compiled once per robot and gravity).
        Mimic joints, base velocities and closed loops are refused: pass `robot.full`.
    q : array_like of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize]. A JAX or NumPy array on the CPU, computed in float64.
    qd : array_like of shape (nv,), (K, nv) or (..., nv)
        Joint velocity [rad/s or m/s; a free joint's linear and angular velocity in the base frame].
    tau : array_like of shape (nv,), (K, nv) or (..., nv)
        Joint torques and forces [N·m or N].
    gravity : bool or array_like of 3 floats, optional
        True (the default) for the robot's gravity, False for none, or a 3-vector of numbers
        [m/s²] in the world frame. A constant of the program, not a traced value.

    Returns
    -------
    qdd : jax.Array of shape (nv,), (K, nv) or (..., nv)
        Joint accelerations [rad/s² or m/s²], float64, with the states' broadcast batch shape.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, `jax_enable_x64` is off, a state's last axis is
        not nq (q) or nv, a state is on a device other than the CPU, `gravity` is not True, False
        or a finite 3-vector, or q̈ is differentiated twice.
    ValueError
        If the states' batch shapes do not broadcast.

    See Also
    --------
    - [`inverse_dynamics`][coriolis_cli.jax.inverse_dynamics]: τ from q̈, its inverse.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> jax.config.update("jax_enable_x64", True)
    >>> import coriolis_cli as cc, coriolis_cli.jax as cj
    >>> robot = cc.load_robot("panda")
    >>> q, qd, tau = jnp.linspace(-1.0, 1.0, 7), jnp.ones(7), jnp.ones(7)
    >>> qdd = jax.jit(lambda tau: cj.forward_dynamics(robot, q, qd, tau))(tau)
    >>> bool(jnp.allclose(cj.inverse_dynamics(robot, q, qd, qdd), tau))
    True
    """
    return xla.forward_dynamics(robot, q, qd, tau, gravity)


def coriolis_matrix(robot: RobotModel, q: jax.Array, qd: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Mass matrix M, its time derivative Ṁ and the Coriolis matrix C at (q, q̇) as a JAX function.

    The compiled kernel of [coriolis_cli.coriolis_matrix][coriolis_cli.coriolis_matrix] (the same
    bits): C is the Christoffel-consistent factorization, C_ij = Σ_k Γ_ijk q̇_k, so that Ṁ − 2C is
    skew-symmetric, computed in one pass with M and Ṁ. It is called through XLA's
    foreign-function interface on the CPU: it runs inside `jax.jit` with no Python in the loop, and
    a batch (states of shape (K, ·) or (..., ·), which broadcast against each other, or `jax.vmap`)
    is one call of the batch kernels on [get_num_threads][coriolis_cli.get_num_threads] threads.

    Differentiable in `q` and `qd` to first order under `jax.jvp`, `jax.vjp`, `jax.grad`,
    `jax.jacfwd` and `jax.jacrev`, composed with `jit` and `vmap`: M's derivative is Γ + Γᵀ, C's
    are ∂C/∂q (from [coriolis_matrix_derivatives][coriolis_cli.coriolis_matrix_derivatives]) and
    ∂C/∂q̇ = Γ, and Ṁ's are C + Cᵀ's. A second derivative raises `StateError`. On free, spherical
    and planar joints a tangent of q stands for the tangent-space velocity that moves q as it does.
    A state that is not finite gives NaN, as JAX's own functions do.

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included, and a constant of the traced program (compiled once per robot). Mimic
        joints, base velocities and closed loops are refused: pass `robot.full`.
    q : array_like of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize]. A JAX or NumPy array on the CPU, computed in float64.
    qd : array_like of shape (nv,), (K, nv) or (..., nv)
        Joint velocity [rad/s or m/s; a free joint's linear and angular velocity in the base frame].

    Returns
    -------
    M : jax.Array of shape (nv, nv), (K, nv, nv) or (..., nv, nv)
        Mass matrix [kg·m², kg for prismatic rows and columns].
    Mdot : jax.Array of shape (nv, nv), (K, nv, nv) or (..., nv, nv)
        Its time derivative along q̇, Ṁ = C + Cᵀ [kg·m²/s].
    C : jax.Array of shape (nv, nv), (K, nv, nv) or (..., nv, nv)
        Coriolis and centrifugal matrix [kg·m²/s], whose C q̇ is in N·m or N.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, `jax_enable_x64` is off, a state's last axis is
        not nq (q) or nv, a state is on a device other than the CPU, or the matrices are
        differentiated twice.
    ValueError
        If the states' batch shapes do not broadcast.

    See Also
    --------
    - [`christoffel`][coriolis_cli.jax.christoffel]: Γ, with C = Σ_k Γ[:, :, k] q̇_k.
    - [`coriolis_product`][coriolis_cli.jax.coriolis_product]: C v without forming C in the derivatives.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> jax.config.update("jax_enable_x64", True)
    >>> import coriolis_cli as cc, coriolis_cli.jax as cj
    >>> robot = cc.load_robot("panda")
    >>> M, Mdot, C = cj.coriolis_matrix(
    ...     robot, jnp.linspace(-1.0, 1.0, 7), jnp.ones(7))
    >>> N = Mdot - 2 * C
    >>> bool(jnp.allclose(N, -N.T))  # Ṁ − 2C is skew-symmetric
    True
    """
    return xla.coriolis_matrix(robot, q, qd)


def christoffel(robot: RobotModel, q: jax.Array) -> jax.Array:
    """Christoffel symbols of the first kind Γ(q) as a JAX function.

    The compiled kernel of [coriolis_cli.christoffel][coriolis_cli.christoffel] (the same bits):
    `Gamma[i, j, k]` with C_ij = Σ_k Γ_ijk q̇_k, the tensor from which C follows at any velocity. It
    is called through XLA's foreign-function interface on the CPU: it runs inside `jax.jit` with no
    Python in the loop, and a batch (q of shape (K, nq) or (..., nq), or `jax.vmap`) is one call of
    the batch kernels on [get_num_threads][coriolis_cli.get_num_threads] threads. Γ holds nv³
    numbers a state.

    Not differentiable: any derivative of Γ (`jax.jvp`, `jax.grad`, `jax.jacfwd`, `jax.jacrev`)
    raises `StateError`, as it would take M's third derivatives; differentiate
    [coriolis_matrix][coriolis_cli.jax.coriolis_matrix] or the dynamics instead. A q that is not
    finite gives NaN, as JAX's own functions do.

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included, and a constant of the traced program (compiled once per robot). Mimic
        joints, base velocities and closed loops are refused: pass `robot.full`.
    q : array_like of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize]. A JAX or NumPy array on the CPU, computed in float64.

    Returns
    -------
    Gamma : jax.Array of shape (nv, nv, nv), (K, nv, nv, nv) or (..., nv, nv, nv)
        Christoffel symbols [kg·m², kg for prismatic entries], indexed `[i, j, k]`.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, `jax_enable_x64` is off, q's last axis is not
        nq, q is on a device other than the CPU, or Γ is differentiated.

    See Also
    --------
    - [`coriolis_matrix`][coriolis_cli.jax.coriolis_matrix]: C at one velocity, differentiable.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> jax.config.update("jax_enable_x64", True)
    >>> import coriolis_cli as cc, coriolis_cli.jax as cj
    >>> robot = cc.load_robot("panda")
    >>> q, qd = jnp.linspace(-1.0, 1.0, 7), jnp.ones(7)
    >>> Gamma = cj.christoffel(robot, q)
    >>> C = cj.coriolis_matrix(robot, q, qd)[2]
    >>> Gamma.shape, bool(jnp.allclose(Gamma @ qd, C))
    ((7, 7, 7), True)
    """
    return xla.christoffel(robot, q)


def coriolis_product(robot: RobotModel, q: jax.Array, qd: jax.Array, v: jax.Array) -> jax.Array:
    """The product C(q, q̇) v of the Coriolis matrix with a vector as a JAX function.

    C from the kernel of [coriolis_cli.coriolis_matrix][coriolis_cli.coriolis_matrix], times v in
    XLA (equal to NumPy's `C @ v` to round-off): the term C q̇_r of a Slotine–Li or passivity-based
    controller, where v is a reference velocity rather than q̇. It runs inside `jax.jit` with no
    Python in the loop, and a batch (states of shape (K, ·) or (..., ·), which broadcast against
    each other, or `jax.vmap`) is one call of the batch kernels on
    [get_num_threads][coriolis_cli.get_num_threads] threads.

    Differentiable in `q`, `qd` and `v` to first order under `jax.jvp`, `jax.vjp`, `jax.grad`,
    `jax.jacfwd` and `jax.jacrev`, composed with `jit` and `vmap`, by ∂(C v)/∂q and ∂(C v)/∂q̇ (from
    [coriolis_product_derivatives][coriolis_cli.coriolis_product_derivatives]) and C, without
    forming ∂C/∂q; a second derivative raises `StateError`. On free, spherical and planar joints a
    tangent of q stands for the tangent-space velocity that moves q as it does. A state that is not
    finite gives NaN, as JAX's own functions do.

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included, and a constant of the traced program (compiled once per robot). Mimic
        joints, base velocities and closed loops are refused: pass `robot.full`.
    q : array_like of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize]. A JAX or NumPy array on the CPU, computed in float64.
    qd : array_like of shape (nv,), (K, nv) or (..., nv)
        Joint velocity at which C is taken [rad/s or m/s; a free joint's linear and angular
        velocity in the base frame].
    v : array_like of shape (nv,), (K, nv) or (..., nv)
        The vector C multiplies, a velocity such as q̇_r [rad/s or m/s].

    Returns
    -------
    Cv : jax.Array of shape (nv,), (K, nv) or (..., nv)
        C(q, q̇) v [N·m or N], float64, with the states' broadcast batch shape.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, `jax_enable_x64` is off, a state's last axis is
        not nq (q) or nv, a state is on a device other than the CPU, or C v is differentiated
        twice.
    ValueError
        If the states' batch shapes do not broadcast.

    See Also
    --------
    - [`coriolis_matrix`][coriolis_cli.jax.coriolis_matrix]: C itself, with M and Ṁ.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> jax.config.update("jax_enable_x64", True)
    >>> import coriolis_cli as cc, coriolis_cli.jax as cj
    >>> robot = cc.load_robot("panda")
    >>> q, qd, v = jnp.linspace(-1.0, 1.0, 7), jnp.ones(7), jnp.arange(7.0)
    >>> Cv = cj.coriolis_product(robot, q, qd, v)
    >>> bool(jnp.allclose(Cv, cj.coriolis_matrix(robot, q, qd)[2] @ v))
    True
    """
    return xla.coriolis_product(robot, q, qd, v)


def coriolis_transpose_velocity(robot: RobotModel, q: jax.Array, qd: jax.Array) -> jax.Array:
    """The product Cᵀ(q, q̇) q̇ as a JAX function, the term of the momentum observer.

    The compiled kernel of [coriolis_cli.coriolis_transpose_velocity][coriolis_cli.coriolis_transpose_velocity]
    (the same bits, computed in one pass with the momentum p = M q̇): the term of the generalized
    momentum's rate ṗ = τ + Cᵀq̇ − g that a momentum-based collision observer integrates. It is
    called through XLA's foreign-function interface on the CPU: it runs inside `jax.jit` with no
    Python in the loop, and a batch (states of shape (K, ·) or (..., ·), which broadcast against
    each other, or `jax.vmap`) is one call of the batch kernels on
    [get_num_threads][coriolis_cli.get_num_threads] threads.

    Differentiable in `q` and `qd` to first order under `jax.jvp`, `jax.vjp`, `jax.grad`,
    `jax.jacfwd` and `jax.jacrev`, composed with `jit` and `vmap`, by ∂(Cᵀq̇)/∂q and ∂(Cᵀq̇)/∂q̇ from
    [coriolis_transpose_derivatives][coriolis_cli.coriolis_transpose_derivatives]; a second
    derivative raises `StateError`. On free, spherical and planar joints a tangent of q stands for
    the tangent-space velocity that moves q as it does. A state that is not finite gives NaN, as
    JAX's own functions do.

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included, and a constant of the traced program (compiled once per robot). Mimic
        joints, base velocities and closed loops are refused: pass `robot.full`.
    q : array_like of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize]. A JAX or NumPy array on the CPU, computed in float64.
    qd : array_like of shape (nv,), (K, nv) or (..., nv)
        Joint velocity [rad/s or m/s; a free joint's linear and angular velocity in the base frame].

    Returns
    -------
    CTqd : jax.Array of shape (nv,), (K, nv) or (..., nv)
        Cᵀ(q, q̇) q̇ [N·m or N], float64, with the states' broadcast batch shape.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, `jax_enable_x64` is off, a state's last axis is
        not nq (q) or nv, a state is on a device other than the CPU, or Cᵀq̇ is differentiated
        twice.
    ValueError
        If the states' batch shapes do not broadcast.

    See Also
    --------
    - [`generalized_momentum`][coriolis_cli.jax.generalized_momentum]: p = M q̇, the observer's other term.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> jax.config.update("jax_enable_x64", True)
    >>> import coriolis_cli as cc, coriolis_cli.jax as cj
    >>> robot = cc.load_robot("panda")
    >>> q, qd = jnp.linspace(-1.0, 1.0, 7), jnp.ones(7)
    >>> C = cj.coriolis_matrix(robot, q, qd)[2]
    >>> bool(jnp.allclose(cj.coriolis_transpose_velocity(robot, q, qd), C.T @ qd))
    True
    """
    return xla.coriolis_transpose_velocity(robot, q, qd)


def generalized_momentum(robot: RobotModel, q: jax.Array, qd: jax.Array) -> jax.Array:
    """Generalized momentum p = M(q) q̇ as a JAX function.

    The compiled kernel of [coriolis_cli.generalized_momentum][coriolis_cli.generalized_momentum]
    (the same bits, computed in one pass with Cᵀq̇): the momentum a
    momentum-based collision observer compares with the integral of τ + Cᵀq̇ − g. It is called
    through XLA's foreign-function interface on the CPU: it runs inside `jax.jit` with no Python in
    the loop, and a batch (states of shape (K, ·) or (..., ·), which broadcast against each other,
    or `jax.vmap`) is one call of the batch kernels on [get_num_threads][coriolis_cli.get_num_threads]
    threads.

    Differentiable in `q` and `qd` to first order under `jax.jvp`, `jax.vjp`, `jax.grad`,
    `jax.jacfwd` and `jax.jacrev`, composed with `jit` and `vmap`, by ∂p/∂q (from
    [momentum_derivatives][coriolis_cli.momentum_derivatives]) and ∂p/∂q̇ = M; a second derivative
    raises `StateError`. On free, spherical and planar joints a tangent of q stands for the
    tangent-space velocity that moves q as it does. A state that is not finite gives NaN, as JAX's
    own functions do.

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included, and a constant of the traced program (compiled once per robot). Mimic
        joints, base velocities and closed loops are refused: pass `robot.full`.
    q : array_like of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize]. A JAX or NumPy array on the CPU, computed in float64.
    qd : array_like of shape (nv,), (K, nv) or (..., nv)
        Joint velocity [rad/s or m/s; a free joint's linear and angular velocity in the base frame].

    Returns
    -------
    p : jax.Array of shape (nv,), (K, nv) or (..., nv)
        Generalized momentum [N·m·s or N·s], float64, with the states' broadcast batch shape.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, `jax_enable_x64` is off, a state's last axis is
        not nq (q) or nv, a state is on a device other than the CPU, or p is differentiated twice.
    ValueError
        If the states' batch shapes do not broadcast.

    See Also
    --------
    - [`coriolis_transpose_velocity`][coriolis_cli.jax.coriolis_transpose_velocity]: Cᵀq̇, the observer's other term.
    - [`mass_matrix`][coriolis_cli.jax.mass_matrix]: M itself.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> jax.config.update("jax_enable_x64", True)
    >>> import coriolis_cli as cc, coriolis_cli.jax as cj
    >>> robot = cc.load_robot("panda")
    >>> q, qd = jnp.linspace(-1.0, 1.0, 7), jnp.ones(7)
    >>> dp_dqd = jax.jacfwd(lambda qd: cj.generalized_momentum(robot, q, qd))(qd)
    >>> bool(jnp.allclose(dp_dqd, cj.mass_matrix(robot, q)))  # ∂p/∂q̇ = M
    True
    """
    return xla.generalized_momentum(robot, q, qd)
