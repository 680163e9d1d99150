"""M, Ṁ, C, Γ, τ, g, q̈, C v, Cᵀq̇ and p as JAX functions: under ``jax.jit``, ``jax.vmap``, ``jax.grad``, ``jax.jacfwd`` and
``jax.jacrev``, computed by the engine's compiled kernels and differentiated by its analytic
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

from .engine.xla import (
    christoffel,
    coriolis_matrix,
    coriolis_product,
    coriolis_transpose_velocity,
    forward_dynamics,
    generalized_momentum,
    gravity_vector,
    inverse_dynamics,
    mass_matrix,
)

__all__ = ["christoffel", "coriolis_matrix", "coriolis_product", "coriolis_transpose_velocity", "forward_dynamics",
           "generalized_momentum", "gravity_vector", "inverse_dynamics", "mass_matrix"]
