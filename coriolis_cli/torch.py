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

from .engine import torch_ops
from .engine.torch_ops import robot_id

__all__ = ["christoffel", "coriolis_matrix", "coriolis_product", "coriolis_transpose_velocity", "forward_dynamics",
           "generalized_momentum", "gravity_vector", "inverse_dynamics", "mass_matrix", "regressor"]


def mass_matrix(robot, q):
    """M(q), shape (..., nv, nv); its gradient along q from Γ (∂M_ij/∂q_k = Γ_ijk + Γ_jik)."""
    return torch_ops.mass_matrix(robot_id(robot), q)


def inverse_dynamics(robot, q, qd, qdd, gravity=True):
    """τ = M q̈ + C q̇ + g, shape (..., nv); gradients from inverse_dynamics_derivatives, and their
    own from inverse_dynamics_second_derivatives. ``gravity``: True, False or a 3-vector."""
    return torch_ops.inverse_dynamics(robot_id(robot, gravity), q, qd, qdd)


def gravity_vector(robot, q, gravity=True):
    """g(q), shape (..., nv); its gradient from gravity_derivatives."""
    return torch_ops.gravity_vector(robot_id(robot, gravity), q)


def forward_dynamics(robot, q, qd, tau, gravity=True):
    """q̈ = M⁻¹(τ − C q̇ − g), shape (..., nv); gradients from forward_dynamics_derivatives."""
    return torch_ops.forward_dynamics(robot_id(robot, gravity), q, qd, tau)


def coriolis_matrix(robot, q, qd):
    """(M, Ṁ, C) at (q, q̇), each (..., nv, nv), C the Christoffel-consistent one (Algorithm 1);
    gradients from ∂M/∂q = Γ + Γᵀ, ∂C/∂q (coriolis_matrix_derivatives) and ∂C/∂q̇ = Γ, Ṁ's as
    C + Cᵀ's."""
    return torch_ops.coriolis_matrix(robot_id(robot), q, qd)


def christoffel(robot, q):
    """Γ (..., nv, nv, nv), ``C_ij = Σ_k Γ_ijk q̇_k``. Not differentiable (it would take M's third
    derivatives): a backward through it raises StateError."""
    return torch_ops.christoffel(robot_id(robot), q)


def coriolis_product(robot, q, qd, v):
    """C(q, q̇) v, shape (..., nv); gradients from ∂(C v)/∂q, ∂(C v)/∂q̇
    (coriolis_product_derivatives) and C."""
    return torch_ops.coriolis_product(robot_id(robot), q, qd, v)


def coriolis_transpose_velocity(robot, q, qd):
    """Cᵀ(q, q̇) q̇, shape (..., nv), the term of the momentum observer's ṗ = τ + Cᵀq̇ − g;
    gradients from coriolis_transpose_derivatives."""
    return torch_ops.coriolis_transpose_velocity(robot_id(robot), q, qd)


def generalized_momentum(robot, q, qd):
    """p = M q̇, shape (..., nv); gradients from ∂p/∂q (momentum_derivatives) and M."""
    return torch_ops.generalized_momentum(robot_id(robot), q, qd)


def regressor(robot, q, qd, qd_r, qdd_r, gravity=True):
    """Y (..., nv, 10 N) with ``Y @ θ`` the Slotine–Li torque M q̈_r + C q̇_r + g of the robot whose
    inertial parameters are θ (10 N, ``coriolis_cli.inertial_parameters``' order), armature aside;
    at q̇_r = q̇ and q̈_r = q̈ it is the inverse dynamics. ``Y @ θ`` is differentiable in θ (its
    gradient is Yᵀ), which is what fitting parameters takes; Y itself is not differentiated in the
    states (a backward into them raises StateError)."""
    return torch_ops.regressor(robot_id(robot, gravity), q, qd, qd_r, qdd_r)
