"""M, C, Γ, τ, g, q̈, C v, Cᵀq̇, p and the regressor as functions of CPU float64 tensors, over
PyTorch operators (``torch.ops.coriolis``): derivatives in reverse and forward mode from the
engine's analytic ones (autograd, and torch.func's grad, jacrev, jacfwd and hessian; τ's second
derivatives from its tensors), a fake implementation for ``torch.compile``, and vmap rules that
hand a batch to the batch kernels. PyTorch is not a dependency of the
package: install it beside it (a CPU build will do).

    import torch
    import coriolis_cli as cc, coriolis_cli.torch as ct

    robot = cc.load_robot("panda")
    q = torch.zeros(7, dtype=torch.float64, requires_grad=True)
    tau = ct.inverse_dynamics(robot, q, torch.ones(7, dtype=torch.float64), torch.zeros(7, dtype=torch.float64))
    tau.sum().backward()  # q.grad = (∂τ/∂q)ᵀ 1

States have shapes (..., nq) and (..., nv) and broadcast to one batch, computed in one call of
the batch kernels. Trees with every joint type: on free, spherical and planar joints the
gradient is with respect to q's own entries (the tangent space's, through the transposed map
from q̇ to the velocity that moves q as it does). Mimic joints, base velocities and closed loops
are refused in one line for now, as are tensors that are not float64 on the CPU. A state the
NumPy functions refuse raises their error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .engine import torch_ops
from .engine.torch_ops import robot_id

if TYPE_CHECKING:  # the annotations' names, for readers and the documentation; nothing is imported for them
    import torch
    from numpy.typing import ArrayLike

    from .model.tree import RobotModel

__all__ = ["christoffel", "coriolis_matrix", "coriolis_product", "coriolis_transpose_velocity", "forward_dynamics",
           "generalized_momentum", "gravity_vector", "inverse_dynamics", "mass_matrix", "regressor"]


def mass_matrix(robot: RobotModel, q: torch.Tensor) -> torch.Tensor:
    """Joint-space mass matrix M(q) as a function of PyTorch tensors.

    The compiled kernel of [coriolis_cli.mass_matrix][coriolis_cli.mass_matrix] (the same bits),
    applied through the operator `torch.ops.coriolis.mass_matrix` on CPU float64 tensors: a batch
    (q of shape (K, nq) or (..., nq), or `torch.vmap`) is one call of the batch kernels on
    [get_num_threads][coriolis_cli.get_num_threads] threads with the GIL released, and
    `torch.compile(fullgraph=True)` traces it, the robot a constant of the graph.

    Differentiable in `q` to first order, in reverse mode (`backward()`, `torch.autograd.grad`,
    `torch.func.grad`, `torch.func.jacrev`) and forward mode (`torch.func.jacfwd`,
    `torch.autograd.forward_ad`; not under `torch.compile`), by the analytic derivative
    ∂M_ij/∂q_k = Γ_ijk + Γ_jik; a second derivative raises `StateError`. On free, spherical and
    planar joints the gradient is with respect to q's own entries (the tangent space's, through the
    map from q̇ to the velocity that moves q as it does; a quaternion's own direction gets zero).

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included. Mimic joints, base velocities and closed loops are refused: pass
        `robot.full`.
    q : torch.Tensor of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize], float64 on the CPU.

    Returns
    -------
    M : torch.Tensor of shape (nv, nv), (K, nv, nv) or (..., nv, nv)
        Symmetric positive-definite mass matrix [kg·m², kg for prismatic rows and columns], float64.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, q is not float64 on the CPU, its last axis is not
        nq, an entry is not finite, or M is differentiated twice.
    TypeError
        If q is not a tensor.

    See Also
    --------
    - [`coriolis_matrix`][coriolis_cli.torch.coriolis_matrix]: M together with Ṁ and C.
    - [`christoffel`][coriolis_cli.torch.christoffel]: Γ, whose symmetrization is M's derivative.

    Examples
    --------
    >>> import torch
    >>> import coriolis_cli as cc, coriolis_cli.torch as ct
    >>> robot = cc.load_robot("panda")
    >>> q = torch.linspace(-1.0, 1.0, 7, dtype=torch.float64)
    >>> M = ct.mass_matrix(robot, q)
    >>> M.shape, bool(torch.allclose(M, M.mT))
    (torch.Size([7, 7]), True)
    >>> torch.func.jacfwd(lambda q: ct.mass_matrix(robot, q))(q).shape  # ∂M/∂q
    torch.Size([7, 7, 7])
    """
    return torch_ops.mass_matrix(robot_id(robot), q)


def inverse_dynamics(robot: RobotModel, q: torch.Tensor, qd: torch.Tensor, qdd: torch.Tensor,
                     gravity: bool | ArrayLike = True) -> torch.Tensor:
    """Joint torques τ = M(q) q̈ + C(q, q̇) q̇ + g(q) as a function of PyTorch tensors.

    The recursive Newton–Euler kernel of [coriolis_cli.inverse_dynamics][coriolis_cli.inverse_dynamics]
    (the same bits), applied through the operator `torch.ops.coriolis.inverse_dynamics` on CPU
    float64 tensors: the states broadcast to one batch (shapes (K, ·) or (..., ·), or `torch.vmap`),
    computed in one call of the batch kernels on [get_num_threads][coriolis_cli.get_num_threads]
    threads with the GIL released, and `torch.compile(fullgraph=True)` traces it, the robot and
    gravity constants of the graph.

    Differentiable in `q`, `qd` and `qdd`, in reverse mode (`backward()`, `torch.autograd.grad`,
    `torch.func.grad`, `torch.func.jacrev`) and forward mode (`torch.func.jacfwd`,
    `torch.autograd.forward_ad`; not under `torch.compile`), by ∂τ/∂q, ∂τ/∂q̇ and M from
    [inverse_dynamics_derivatives][coriolis_cli.inverse_dynamics_derivatives]. τ is the one
    function with second derivatives too (`torch.func.hessian`, `create_graph=True`,
    `gradgradcheck`), from [inverse_dynamics_second_derivatives][coriolis_cli.inverse_dynamics_second_derivatives];
    a third derivative raises `StateError`. `gravity` is not differentiated. On free, spherical and
    planar joints the gradient is with respect to q's own entries (the tangent space's, through the
    map from q̇ to the velocity that moves q as it does).

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included. Mimic joints, base velocities and closed loops are refused: pass
        `robot.full`.
    q : torch.Tensor of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize], float64 on the CPU.
    qd : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        Joint velocity [rad/s or m/s; a free joint's linear and angular velocity in the base frame].
    qdd : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        Joint acceleration [rad/s² or m/s²].
    gravity : bool or sequence of 3 floats, optional
        True (the default) for the robot's gravity, False for none, or a 3-vector of numbers
        [m/s²] in the world frame.

    Returns
    -------
    tau : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        Joint torques and forces [N·m or N], float64, with the states' broadcast batch shape.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, a state is not float64 on the CPU, its last axis
        is not nq (q) or nv, an entry is not finite, `gravity` is not True, False or a finite
        3-vector, or τ is differentiated three times.
    SizeError
        If τ's second derivatives (four nv³ tensors a state) need more memory than the machine has.
    ValueError
        If the states' batch shapes do not broadcast.
    TypeError
        If a state is not a tensor.

    See Also
    --------
    - [`forward_dynamics`][coriolis_cli.torch.forward_dynamics]: q̈ from τ, its inverse.
    - [`regressor`][coriolis_cli.torch.regressor]: τ as Y θ, linear in the inertial parameters.

    Examples
    --------
    >>> import torch
    >>> import coriolis_cli as cc, coriolis_cli.torch as ct
    >>> robot = cc.load_robot("panda")
    >>> q = torch.zeros(7, dtype=torch.float64, requires_grad=True)
    >>> qd = torch.ones(7, dtype=torch.float64)
    >>> qdd = torch.zeros(7, dtype=torch.float64)
    >>> # q.grad = (∂τ/∂q)ᵀ 1
    >>> ct.inverse_dynamics(robot, q, qd, qdd).sum().backward()
    >>> dtau_dq = cc.inverse_dynamics_derivatives(
    ...     robot, q.detach().numpy(), qd.numpy(), qdd.numpy())[0]
    >>> bool(torch.allclose(q.grad, torch.from_numpy(dtau_dq.sum(0))))
    True
    """
    return torch_ops.inverse_dynamics(robot_id(robot, gravity), q, qd, qdd)


def gravity_vector(robot: RobotModel, q: torch.Tensor, gravity: bool | ArrayLike = True) -> torch.Tensor:
    """Generalized gravity g(q), the torques that hold the robot still, as a function of PyTorch tensors.

    The compiled kernel of [coriolis_cli.gravity_vector][coriolis_cli.gravity_vector] (the same
    bits), applied through the operator `torch.ops.coriolis.gravity_vector` on CPU float64 tensors:
    a batch (q of shape (K, nq) or (..., nq), or `torch.vmap`) is one call of the batch kernels on
    [get_num_threads][coriolis_cli.get_num_threads] threads with the GIL released, and
    `torch.compile(fullgraph=True)` traces it, the robot and gravity constants of the graph.

    Differentiable in `q` to first order, in reverse mode (`backward()`, `torch.autograd.grad`,
    `torch.func.grad`, `torch.func.jacrev`) and forward mode (`torch.func.jacfwd`,
    `torch.autograd.forward_ad`; not under `torch.compile`), by ∂g/∂q from
    [gravity_derivatives][coriolis_cli.gravity_derivatives]; a second derivative raises
    `StateError`, and `gravity` is not differentiated. On free, spherical and planar joints the
    gradient is with respect to q's own entries (the tangent space's, through the map from q̇ to the
    velocity that moves q as it does).

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included. Mimic joints, base velocities and closed loops are refused: pass
        `robot.full`.
    q : torch.Tensor of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize], float64 on the CPU.
    gravity : bool or sequence of 3 floats, optional
        True (the default) for the robot's gravity, False for none, or a 3-vector of numbers
        [m/s²] in the world frame.

    Returns
    -------
    g : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        Gravity torques and forces [N·m or N], float64.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, q is not float64 on the CPU, its last axis is not
        nq, an entry is not finite, `gravity` is not True, False or a finite 3-vector, or g is
        differentiated twice.
    TypeError
        If q is not a tensor.

    See Also
    --------
    - [`inverse_dynamics`][coriolis_cli.torch.inverse_dynamics]: τ, of which g is the part at rest.

    Examples
    --------
    >>> import torch
    >>> import coriolis_cli as cc, coriolis_cli.torch as ct
    >>> robot = cc.load_robot("panda")
    >>> Q = torch.linspace(-1.0, 1.0, 35, dtype=torch.float64).reshape(5, 7)
    >>> (ct.gravity_vector(robot, Q).shape,
    ...  torch.vmap(lambda q: ct.gravity_vector(robot, q))(Q).shape)
    (torch.Size([5, 7]), torch.Size([5, 7]))
    >>> float(ct.gravity_vector(robot, Q, gravity=False).abs().max())
    0.0
    """
    return torch_ops.gravity_vector(robot_id(robot, gravity), q)


def forward_dynamics(robot: RobotModel, q: torch.Tensor, qd: torch.Tensor, tau: torch.Tensor,
                     gravity: bool | ArrayLike = True) -> torch.Tensor:
    """Joint accelerations q̈ = M(q)⁻¹ (τ − C(q, q̇) q̇ − g(q)) as a function of PyTorch tensors.

    The compiled kernel of [coriolis_cli.forward_dynamics][coriolis_cli.forward_dynamics] (the
    same bits), applied through the operator `torch.ops.coriolis.forward_dynamics` on CPU float64
    tensors: the states broadcast to one batch (shapes (K, ·) or (..., ·), or `torch.vmap`),
    computed in one call of the batch kernels on [get_num_threads][coriolis_cli.get_num_threads]
    threads with the GIL released, and `torch.compile(fullgraph=True)` traces it, the robot and
    gravity constants of the graph.

    Differentiable in `q`, `qd` and `tau` to first order, in reverse mode (`backward()`,
    `torch.autograd.grad`, `torch.func.grad`, `torch.func.jacrev`) and forward mode
    (`torch.func.jacfwd`, `torch.autograd.forward_ad`; not under `torch.compile`), by ∂q̈/∂q, ∂q̈/∂q̇
    and M⁻¹ from [forward_dynamics_derivatives][coriolis_cli.forward_dynamics_derivatives]: what a
    rollout differentiated through time takes. A second derivative raises `StateError`, and
    `gravity` is not differentiated. On free, spherical and planar joints the gradient is with
    respect to q's own entries (the tangent space's, through the map from q̇ to the velocity that
    moves q as it does).

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included. Mimic joints, base velocities and closed loops are refused: pass
        `robot.full`.
    q : torch.Tensor of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize], float64 on the CPU.
    qd : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        Joint velocity [rad/s or m/s; a free joint's linear and angular velocity in the base frame].
    tau : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        Joint torques and forces [N·m or N].
    gravity : bool or sequence of 3 floats, optional
        True (the default) for the robot's gravity, False for none, or a 3-vector of numbers
        [m/s²] in the world frame.

    Returns
    -------
    qdd : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        Joint accelerations [rad/s² or m/s²], float64, with the states' broadcast batch shape.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, a state is not float64 on the CPU, its last axis
        is not nq (q) or nv, an entry is not finite, `gravity` is not True, False or a finite
        3-vector, or q̈ is differentiated twice.
    SingularMassMatrixError
        If M is singular at a state (some joints move no mass); it names the joints to lock.
    ValueError
        If the states' batch shapes do not broadcast.
    TypeError
        If a state is not a tensor.

    See Also
    --------
    - [`inverse_dynamics`][coriolis_cli.torch.inverse_dynamics]: τ from q̈, its inverse.

    Examples
    --------
    >>> import torch
    >>> import coriolis_cli as cc, coriolis_cli.torch as ct
    >>> robot = cc.load_robot("panda")
    >>> q = torch.linspace(-1.0, 1.0, 7, dtype=torch.float64)
    >>> qd = tau = torch.ones_like(q)
    >>> dqdd_dtau = torch.func.jacrev(
    ...     lambda tau: ct.forward_dynamics(robot, q, qd, tau))(tau)
    >>> bool(torch.allclose(dqdd_dtau @ ct.mass_matrix(robot, q),
    ...                     torch.eye(7, dtype=torch.float64)))
    True
    """
    return torch_ops.forward_dynamics(robot_id(robot, gravity), q, qd, tau)


def coriolis_matrix(robot: RobotModel, q: torch.Tensor, qd: torch.Tensor
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Mass matrix M, its time derivative Ṁ and the Coriolis matrix C at (q, q̇) as PyTorch tensors.

    The compiled kernel of [coriolis_cli.coriolis_matrix][coriolis_cli.coriolis_matrix] (the same
    bits): C is the Christoffel-consistent factorization, C_ij = Σ_k Γ_ijk q̇_k, so that Ṁ − 2C is
    skew-symmetric, computed in one pass with M and Ṁ. It is applied through the operator
    `torch.ops.coriolis.coriolis_matrix` on CPU float64 tensors: the states broadcast to one batch
    (shapes (K, ·) or (..., ·), or `torch.vmap`), computed in one call of the batch kernels on
    [get_num_threads][coriolis_cli.get_num_threads] threads with the GIL released, and
    `torch.compile(fullgraph=True)` traces it.

    Differentiable in `q` and `qd` to first order, in reverse mode (`backward()`,
    `torch.autograd.grad`, `torch.func.grad`, `torch.func.jacrev`) and forward mode
    (`torch.func.jacfwd`, `torch.autograd.forward_ad`; not under `torch.compile`): M's derivative
    is Γ + Γᵀ, C's are ∂C/∂q (from [coriolis_matrix_derivatives][coriolis_cli.coriolis_matrix_derivatives])
    and ∂C/∂q̇ = Γ, and Ṁ's are C + Cᵀ's. A second derivative raises `StateError`. On free,
    spherical and planar joints the gradient is with respect to q's own entries (the tangent
    space's, through the map from q̇ to the velocity that moves q as it does).

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included. Mimic joints, base velocities and closed loops are refused: pass
        `robot.full`.
    q : torch.Tensor of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize], float64 on the CPU.
    qd : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        Joint velocity [rad/s or m/s; a free joint's linear and angular velocity in the base frame].

    Returns
    -------
    M : torch.Tensor of shape (nv, nv), (K, nv, nv) or (..., nv, nv)
        Mass matrix [kg·m², kg for prismatic rows and columns].
    Mdot : torch.Tensor of shape (nv, nv), (K, nv, nv) or (..., nv, nv)
        Its time derivative along q̇, Ṁ = C + Cᵀ [kg·m²/s].
    C : torch.Tensor of shape (nv, nv), (K, nv, nv) or (..., nv, nv)
        Coriolis and centrifugal matrix [kg·m²/s], whose C q̇ is in N·m or N.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, a state is not float64 on the CPU, its last axis
        is not nq (q) or nv, an entry is not finite, or the matrices are differentiated twice.
    ValueError
        If the states' batch shapes do not broadcast.
    TypeError
        If a state is not a tensor.

    See Also
    --------
    - [`christoffel`][coriolis_cli.torch.christoffel]: Γ, with C = Σ_k Γ[:, :, k] q̇_k.
    - [`coriolis_product`][coriolis_cli.torch.coriolis_product]: C v for a vector v.

    Examples
    --------
    >>> import torch
    >>> import coriolis_cli as cc, coriolis_cli.torch as ct
    >>> robot = cc.load_robot("panda")
    >>> q = torch.linspace(-1.0, 1.0, 7, dtype=torch.float64)
    >>> M, Mdot, C = ct.coriolis_matrix(robot, q, torch.ones_like(q))
    >>> N = Mdot - 2 * C
    >>> bool(torch.allclose(N, -N.mT))  # Ṁ − 2C is skew-symmetric
    True
    """
    return torch_ops.coriolis_matrix(robot_id(robot), q, qd)


def christoffel(robot: RobotModel, q: torch.Tensor) -> torch.Tensor:
    """Christoffel symbols of the first kind Γ(q) as a PyTorch tensor.

    The compiled kernel of [coriolis_cli.christoffel][coriolis_cli.christoffel] (the same bits):
    `Gamma[i, j, k]` with C_ij = Σ_k Γ_ijk q̇_k, the tensor from which C follows at any velocity. It
    is applied through the operator `torch.ops.coriolis.christoffel` on CPU float64 tensors: a
    batch (q of shape (K, nq) or (..., nq), or `torch.vmap`) is one call of the batch kernels on
    [get_num_threads][coriolis_cli.get_num_threads] threads with the GIL released, and
    `torch.compile(fullgraph=True)` traces it. Γ holds nv³ numbers a state; unlike the NumPy
    function, no 256 MiB limit applies, only the machine's memory.

    Not differentiable: a backward through Γ, or a forward-mode derivative of it, raises
    `StateError`, as it would take M's third derivatives; differentiate
    [coriolis_matrix][coriolis_cli.torch.coriolis_matrix] or the dynamics instead.

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included. Mimic joints, base velocities and closed loops are refused: pass
        `robot.full`.
    q : torch.Tensor of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize], float64 on the CPU.

    Returns
    -------
    Gamma : torch.Tensor of shape (nv, nv, nv), (K, nv, nv, nv) or (..., nv, nv, nv)
        Christoffel symbols [kg·m², kg for prismatic entries], indexed `[i, j, k]`.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, q is not float64 on the CPU, its last axis is not
        nq, an entry is not finite, or Γ is differentiated.
    SizeError
        If Γ needs more memory than the machine has.
    TypeError
        If q is not a tensor.

    See Also
    --------
    - [`coriolis_matrix`][coriolis_cli.torch.coriolis_matrix]: C at one velocity, differentiable.

    Examples
    --------
    >>> import torch
    >>> import coriolis_cli as cc, coriolis_cli.torch as ct
    >>> robot = cc.load_robot("panda")
    >>> q = torch.linspace(-1.0, 1.0, 7, dtype=torch.float64)
    >>> qd, Gamma = torch.ones_like(q), ct.christoffel(robot, q)
    >>> C = ct.coriolis_matrix(robot, q, qd)[2]
    >>> Gamma.shape, bool(torch.allclose(Gamma @ qd, C))
    (torch.Size([7, 7, 7]), True)
    """
    return torch_ops.christoffel(robot_id(robot), q)


def coriolis_product(robot: RobotModel, q: torch.Tensor, qd: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The product C(q, q̇) v of the Coriolis matrix with a vector as a PyTorch tensor.

    C from the kernel of [coriolis_cli.coriolis_matrix][coriolis_cli.coriolis_matrix], times v
    (equal to `C @ v` to round-off): the term C q̇_r of a Slotine–Li or passivity-based controller,
    where v is a reference velocity rather than q̇. It is applied through the operator
    `torch.ops.coriolis.coriolis_product` on CPU float64 tensors: the states broadcast to one batch
    (shapes (K, ·) or (..., ·), or `torch.vmap`), computed in one call of the batch kernels on
    [get_num_threads][coriolis_cli.get_num_threads] threads with the GIL released, and
    `torch.compile(fullgraph=True)` traces it.

    Differentiable in `q`, `qd` and `v` to first order, in reverse mode (`backward()`,
    `torch.autograd.grad`, `torch.func.grad`, `torch.func.jacrev`) and forward mode
    (`torch.func.jacfwd`, `torch.autograd.forward_ad`; not under `torch.compile`), by ∂(C v)/∂q and
    ∂(C v)/∂q̇ (from [coriolis_product_derivatives][coriolis_cli.coriolis_product_derivatives]) and
    C, without forming ∂C/∂q; a second derivative raises `StateError`. On free, spherical and planar
    joints the gradient is with respect to q's own entries (the tangent space's, through the map
    from q̇ to the velocity that moves q as it does).

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included. Mimic joints, base velocities and closed loops are refused: pass
        `robot.full`.
    q : torch.Tensor of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize], float64 on the CPU.
    qd : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        Joint velocity at which C is taken [rad/s or m/s; a free joint's linear and angular
        velocity in the base frame].
    v : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        The vector C multiplies, a velocity such as q̇_r [rad/s or m/s].

    Returns
    -------
    Cv : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        C(q, q̇) v [N·m or N], float64, with the states' broadcast batch shape.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, a state is not float64 on the CPU, its last axis
        is not nq (q) or nv, an entry is not finite, or C v is differentiated twice.
    ValueError
        If the states' batch shapes do not broadcast.
    TypeError
        If a state is not a tensor.

    See Also
    --------
    - [`coriolis_matrix`][coriolis_cli.torch.coriolis_matrix]: C itself, with M and Ṁ.

    Examples
    --------
    >>> import torch
    >>> import coriolis_cli as cc, coriolis_cli.torch as ct
    >>> robot = cc.load_robot("panda")
    >>> q = torch.linspace(-1.0, 1.0, 7, dtype=torch.float64)
    >>> qd, v = torch.ones_like(q), torch.arange(7.0, dtype=torch.float64)
    >>> Cv = ct.coriolis_product(robot, q, qd, v)
    >>> bool(torch.allclose(Cv, ct.coriolis_matrix(robot, q, qd)[2] @ v))
    True
    """
    return torch_ops.coriolis_product(robot_id(robot), q, qd, v)


def coriolis_transpose_velocity(robot: RobotModel, q: torch.Tensor, qd: torch.Tensor) -> torch.Tensor:
    """The product Cᵀ(q, q̇) q̇ as a PyTorch tensor, the term of the momentum observer.

    The compiled kernel of [coriolis_cli.coriolis_transpose_velocity][coriolis_cli.coriolis_transpose_velocity]
    (the same bits): the term of the generalized momentum's rate ṗ = τ + Cᵀq̇ − g that a
    momentum-based collision observer integrates. It is applied through the operator
    `torch.ops.coriolis.coriolis_transpose_velocity` on CPU float64 tensors: the states broadcast to
    one batch (shapes (K, ·) or (..., ·), or `torch.vmap`), computed in one call of the batch
    kernels on [get_num_threads][coriolis_cli.get_num_threads] threads with the GIL released, and
    `torch.compile(fullgraph=True)` traces it.

    Differentiable in `q` and `qd` to first order, in reverse mode (`backward()`,
    `torch.autograd.grad`, `torch.func.grad`, `torch.func.jacrev`) and forward mode
    (`torch.func.jacfwd`, `torch.autograd.forward_ad`; not under `torch.compile`), by ∂(Cᵀq̇)/∂q and
    ∂(Cᵀq̇)/∂q̇ from [coriolis_transpose_derivatives][coriolis_cli.coriolis_transpose_derivatives]; a
    second derivative raises `StateError`. On free, spherical and planar joints the gradient is
    with respect to q's own entries (the tangent space's, through the map from q̇ to the velocity
    that moves q as it does).

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included. Mimic joints, base velocities and closed loops are refused: pass
        `robot.full`.
    q : torch.Tensor of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize], float64 on the CPU.
    qd : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        Joint velocity [rad/s or m/s; a free joint's linear and angular velocity in the base frame].

    Returns
    -------
    CTqd : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        Cᵀ(q, q̇) q̇ [N·m or N], float64, with the states' broadcast batch shape.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, a state is not float64 on the CPU, its last axis
        is not nq (q) or nv, an entry is not finite, or Cᵀq̇ is differentiated twice.
    ValueError
        If the states' batch shapes do not broadcast.
    TypeError
        If a state is not a tensor.

    See Also
    --------
    - [`generalized_momentum`][coriolis_cli.torch.generalized_momentum]: p = M q̇, the observer's other term.

    Examples
    --------
    >>> import torch
    >>> import coriolis_cli as cc, coriolis_cli.torch as ct
    >>> robot = cc.load_robot("panda")
    >>> q = torch.linspace(-1.0, 1.0, 7, dtype=torch.float64)
    >>> qd = torch.ones_like(q)
    >>> C = ct.coriolis_matrix(robot, q, qd)[2]
    >>> bool(torch.allclose(
    ...     ct.coriolis_transpose_velocity(robot, q, qd), C.mT @ qd))
    True
    """
    return torch_ops.coriolis_transpose_velocity(robot_id(robot), q, qd)


def generalized_momentum(robot: RobotModel, q: torch.Tensor, qd: torch.Tensor) -> torch.Tensor:
    """Generalized momentum p = M(q) q̇ as a PyTorch tensor.

    The compiled kernel of [coriolis_cli.generalized_momentum][coriolis_cli.generalized_momentum]
    (the same bits): the momentum a momentum-based collision observer compares
    with the integral of τ + Cᵀq̇ − g. It is applied through the operator
    `torch.ops.coriolis.generalized_momentum` on CPU float64 tensors: the states broadcast to one
    batch (shapes (K, ·) or (..., ·), or `torch.vmap`), computed in one call of the batch kernels
    on [get_num_threads][coriolis_cli.get_num_threads] threads with the GIL released, and
    `torch.compile(fullgraph=True)` traces it.

    Differentiable in `q` and `qd` to first order, in reverse mode (`backward()`,
    `torch.autograd.grad`, `torch.func.grad`, `torch.func.jacrev`) and forward mode
    (`torch.func.jacfwd`, `torch.autograd.forward_ad`; not under `torch.compile`), by ∂p/∂q (from
    [momentum_derivatives][coriolis_cli.momentum_derivatives]) and ∂p/∂q̇ = M; a second derivative
    raises `StateError`. On free, spherical and planar joints the gradient is with respect to q's
    own entries (the tangent space's, through the map from q̇ to the velocity that moves q as it
    does).

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included. Mimic joints, base velocities and closed loops are refused: pass
        `robot.full`.
    q : torch.Tensor of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize], float64 on the CPU.
    qd : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        Joint velocity [rad/s or m/s; a free joint's linear and angular velocity in the base frame].

    Returns
    -------
    p : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        Generalized momentum [N·m·s or N·s], float64, with the states' broadcast batch shape.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, a state is not float64 on the CPU, its last axis
        is not nq (q) or nv, an entry is not finite, or p is differentiated twice.
    ValueError
        If the states' batch shapes do not broadcast.
    TypeError
        If a state is not a tensor.

    See Also
    --------
    - [`coriolis_transpose_velocity`][coriolis_cli.torch.coriolis_transpose_velocity]: Cᵀq̇, the observer's other term.
    - [`mass_matrix`][coriolis_cli.torch.mass_matrix]: M itself.

    Examples
    --------
    >>> import torch
    >>> import coriolis_cli as cc, coriolis_cli.torch as ct
    >>> robot = cc.load_robot("panda")
    >>> q = torch.linspace(-1.0, 1.0, 7, dtype=torch.float64)
    >>> qd = torch.ones_like(q)
    >>> dp_dqd = torch.func.jacrev(
    ...     lambda qd: ct.generalized_momentum(robot, q, qd))(qd)
    >>> bool(torch.allclose(dp_dqd, ct.mass_matrix(robot, q)))  # ∂p/∂q̇ = M
    True
    """
    return torch_ops.generalized_momentum(robot_id(robot), q, qd)


def regressor(robot: RobotModel, q: torch.Tensor, qd: torch.Tensor, qd_r: torch.Tensor, qdd_r: torch.Tensor,
              gravity: bool | ArrayLike = True) -> torch.Tensor:
    """Slotine–Li regressor Y(q, q̇, q̇_r, q̈_r), with Y θ = M q̈_r + C q̇_r + g, as a PyTorch tensor.

    The compiled kernel of [coriolis_cli.regressor][coriolis_cli.regressor] (the same bits): the
    torque is linear in the inertial parameters θ (10 a body: m, m c and the inertia about the
    body's origin, in [inertial_parameters][coriolis_cli.inertial_parameters]' order), the armature
    aside, and Y is its matrix. At q̇_r = q̇ and q̈_r = q̈, Y θ is the inverse dynamics τ, which is
    what fitting parameters to recorded torques takes. It is applied through the operator
    `torch.ops.coriolis.regressor` on CPU float64 tensors: the states broadcast to one batch
    (shapes (K, ·) or (..., ·), or `torch.vmap`), computed in one call of the batch kernels on
    [get_num_threads][coriolis_cli.get_num_threads] threads with the GIL released, and
    `torch.compile(fullgraph=True)` traces it.

    `Y @ theta` is differentiable in θ by PyTorch's own matmul (its gradient is Yᵀ), so
    parameters can be fitted by gradient descent or L-BFGS. Y itself is not differentiated in the
    states: a backward or forward-mode derivative into `q`, `qd`, `qd_r` or `qdd_r` raises
    `StateError` (for ∂τ/∂q use [inverse_dynamics][coriolis_cli.torch.inverse_dynamics]).

    Parameters
    ----------
    robot : RobotModel
        The robot, from [load_robot][coriolis_cli.load_robot]: a tree with any joints, floating
        bases included. Mimic joints, base velocities and closed loops are refused: pass
        `robot.full`.
    q : torch.Tensor of shape (nq,), (K, nq) or (..., nq)
        Joint configuration [rad or m; a free joint's position in m and quaternion (x, y, z, w),
        which the kernels normalize], float64 on the CPU.
    qd : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        Joint velocity [rad/s or m/s; a free joint's linear and angular velocity in the base frame].
    qd_r : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        Reference velocity q̇_r [rad/s or m/s] (q̇ for the inverse dynamics).
    qdd_r : torch.Tensor of shape (nv,), (K, nv) or (..., nv)
        Reference acceleration q̈_r [rad/s² or m/s²] (q̈ for the inverse dynamics).
    gravity : bool or sequence of 3 floats, optional
        True (the default) for the robot's gravity, False for none, or a 3-vector of numbers
        [m/s²] in the world frame.

    Returns
    -------
    Y : torch.Tensor of shape (nv, 10 N), (K, nv, 10 N) or (..., nv, 10 N)
        The regressor, N the robot's bodies; `Y @ theta` is in N·m or N, float64.

    Raises
    ------
    StateError
        If `robot` is not a tree from `load_robot`, a state is not float64 on the CPU, its last axis
        is not nq (q) or nv, an entry is not finite, `gravity` is not True, False or a finite
        3-vector, or Y is differentiated in the states.
    ValueError
        If the states' batch shapes do not broadcast.
    TypeError
        If a state is not a tensor.

    See Also
    --------
    - [`inverse_dynamics`][coriolis_cli.torch.inverse_dynamics]: τ itself, differentiable in the states.

    Examples
    --------
    >>> import torch
    >>> import coriolis_cli as cc, coriolis_cli.torch as ct
    >>> robot = cc.load_robot("panda")
    >>> q = torch.linspace(-1.0, 1.0, 7, dtype=torch.float64)
    >>> qd, qdd = torch.ones_like(q), torch.zeros_like(q)
    >>> theta = torch.from_numpy(cc.inertial_parameters(robot))
    >>> Y = ct.regressor(robot, q, qd, qd, qdd)
    >>> Y.shape, bool(torch.allclose(
    ...     Y @ theta, ct.inverse_dynamics(robot, q, qd, qdd)))
    (torch.Size([7, 70]), True)
    """
    return torch_ops.regressor(robot_id(robot, gravity), q, qd, qd_r, qdd_r)
