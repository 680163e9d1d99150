"""M, τ, g and q̈ as PyTorch operators (``torch.ops.coriolis``) on CPU float64 tensors: autograd
from the engine's analytic derivatives (``gradcheck``; ``gradgradcheck`` for τ, whose Jacobians
are differentiated by its second-order tensors), a fake implementation for ``torch.compile``,
and vmap rules that hand a batch to the batch kernels. PyTorch is not a dependency of the
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

from .engine.torch_ops import forward_dynamics_op, gravity_vector_op, inverse_dynamics_op, mass_matrix_op, robot_id

__all__ = ["forward_dynamics", "gravity_vector", "inverse_dynamics", "mass_matrix"]


def mass_matrix(robot, q):
    """M(q), shape (..., nv, nv); its gradient along q from Γ (∂M_ij/∂q_k = Γ_ijk + Γ_jik)."""
    return mass_matrix_op(robot_id(robot), q)


def inverse_dynamics(robot, q, qd, qdd, gravity=True):
    """τ = M q̈ + C q̇ + g, shape (..., nv); gradients from inverse_dynamics_derivatives, and their
    own from inverse_dynamics_second_derivatives. ``gravity``: True, False or a 3-vector."""
    return inverse_dynamics_op(robot_id(robot, gravity), q, qd, qdd)


def gravity_vector(robot, q, gravity=True):
    """g(q), shape (..., nv); its gradient from gravity_derivatives."""
    return gravity_vector_op(robot_id(robot, gravity), q)


def forward_dynamics(robot, q, qd, tau, gravity=True):
    """q̈ = M⁻¹(τ − C q̇ − g), shape (..., nv); gradients from forward_dynamics_derivatives."""
    return forward_dynamics_op(robot_id(robot, gravity), q, qd, tau)
