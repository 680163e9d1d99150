"""The calling layer for JAX (coriolis_cli.jax): the kernels as XLA foreign functions
(xla_handlers.hpp, registered with jax.ffi on import), wrapped per robot and gravity in custom_jvp
functions whose tangents are the analytic derivatives applied to the tangent vectors (linear in
them, so that reverse mode transposes them). Imported only by coriolis_cli.jax: the rest of the
package never imports JAX."""

from __future__ import annotations

import numpy as np

try:
    import jax
    import jax.numpy as jnp
except ImportError:  # pragma: no cover (the extra is missing)
    raise ImportError("coriolis_cli.jax needs JAX: pip install 'coriolis-cli[jax]'") from None

from ..errors import StateError
from ..model.tree import RobotModel
from . import compiled
from .algorithms import gravity_for
from .calls import get_num_threads
from .workspaces import kernel_scratch

__all__ = ["forward_dynamics", "gravity_vector", "inverse_dynamics", "mass_matrix"]

for _name, _capsule in compiled.xla_handlers().items():
    jax.ffi.register_ffi_target(_name, _capsule, platform="cpu")

_FUNCTIONS = "coriolis_cli.jax functions"  # robot.caches' key: the robot's functions, by gravity


def _check(robot) -> None:
    if not isinstance(robot, RobotModel):
        raise StateError(f"coriolis_cli.jax takes a robot from coriolis_cli.load_robot whose q are coordinates, got "
                         f"{type(robot).__name__} (mimic joints, base velocities and closed loops are not taken yet; "
                         "pass robot.full)")
    if robot.nq != robot.nv:
        kinds = sorted({b.joint.type for b in robot.bodies if b.joint.type not in ("revolute", "continuous",
                                                                                     "prismatic", "helical")})
        raise StateError(f"coriolis_cli.jax takes robots whose q are coordinates for now; '{robot.name}' has "
                         f"{', '.join(kinds)} joints (nq = {robot.nq}, nv = {robot.nv})")
    if not jax.config.jax_enable_x64:
        raise StateError("coriolis_cli.jax computes in float64: call jax.config.update('jax_enable_x64', True) "
                         "before creating arrays")


def _states(robot, q, *velocities):
    """q (..., nq) and the velocities (..., nv) as float64 arrays of one batch shape."""
    arrays = [jnp.asarray(q, dtype=jnp.float64), *(jnp.asarray(v, dtype=jnp.float64) for v in velocities)]
    for x, width, what in zip(arrays, (robot.nq,) + (robot.nv,) * len(velocities), ("q",) + ("a velocity",) * 9):
        if x.ndim < 1 or x.shape[-1] != width:
            raise StateError(f"{what} must have shape (..., {width}) for '{robot.name}', got {x.shape}")
    batch = jnp.broadcast_shapes(*(x.shape[:-1] for x in arrays))
    return batch, [jnp.broadcast_to(x, batch + x.shape[-1:]) for x in arrays]


class _Functions:
    """One robot's functions at one gravity: custom_jvp wrappers of its handlers."""

    def __init__(self, robot, gravity):
        n = robot.nv
        self.robot = robot
        attributes = {"robot": np.int64(_robot_id(robot)), "gx": np.float64(gravity[0]),
                      "gy": np.float64(gravity[1]), "gz": np.float64(gravity[2])}

        def call(name, shapes, batch, *arrays):
            outputs = tuple(jax.ShapeDtypeStruct(batch + s, jnp.float64) for s in shapes)
            return jax.ffi.ffi_call(name, outputs, vmap_method="broadcast_all")(
                *arrays, threads=np.int64(get_num_threads()), **attributes)

        def times(J, t):  # J t over the batch: linear in t, so reverse mode transposes it
            return jnp.einsum("...ij,...j->...i", J, t)

        @jax.custom_jvp
        def mass_matrix(q):
            batch, (q,) = _states(robot, q)
            return call("coriolis_mass_matrix", [(n, n)], batch, q)[0]

        @mass_matrix.defjvp
        def _(primals, tangents):
            (q,), (t,) = primals, tangents
            batch, (q,) = _states(robot, q)
            Gamma = call("coriolis_christoffel", [(n, n, n)], batch, q)[0]
            return mass_matrix(q), jnp.einsum("...ijk,...k->...ij", Gamma + jnp.swapaxes(Gamma, -3, -2), t)

        @jax.custom_jvp
        def inverse_dynamics(q, qd, qdd):
            batch, states = _states(robot, q, qd, qdd)
            return call("coriolis_inverse_dynamics", [(n,)], batch, *states)[0]

        @inverse_dynamics.defjvp
        def _(primals, tangents):
            batch, states = _states(robot, *primals)
            dq, dv, M = call("coriolis_inverse_dynamics_derivatives", [(n, n)] * 3, batch, *states)
            tq, tv, ta = tangents
            return inverse_dynamics(*primals), times(dq, tq) + times(dv, tv) + times(M, ta)

        @jax.custom_jvp
        def gravity_vector(q):
            batch, (q,) = _states(robot, q)
            return call("coriolis_gravity_vector", [(n,)], batch, q)[0]

        @gravity_vector.defjvp
        def _(primals, tangents):
            (q,), (t,) = primals, tangents
            batch, (q,) = _states(robot, q)
            return gravity_vector(q), times(call("coriolis_gravity_derivatives", [(n, n)], batch, q)[0], t)

        @jax.custom_jvp
        def forward_dynamics(q, qd, tau):
            batch, states = _states(robot, q, qd, tau)
            return call("coriolis_forward_dynamics", [(n,)], batch, *states)[0]

        @forward_dynamics.defjvp
        def _(primals, tangents):
            batch, states = _states(robot, *primals)
            dq, dv, Minv = call("coriolis_forward_dynamics_derivatives", [(n, n)] * 3, batch, *states)
            tq, tv, tt = tangents
            return forward_dynamics(*primals), times(dq, tq) + times(dv, tv) + times(Minv, tt)

        self.mass_matrix, self.inverse_dynamics = mass_matrix, inverse_dynamics
        self.gravity_vector, self.forward_dynamics = gravity_vector, forward_dynamics


def _robot_id(robot) -> int:
    """The robot's id among the handlers' robots, registered once per robot object."""
    key = "coriolis_cli.jax id"
    if key not in robot.caches:
        robot.caches[key] = compiled.xla_register(kernel_scratch(robot).core)
    return robot.caches[key]


def _functions(robot, gravity=True) -> _Functions:
    _check(robot)
    g = tuple(float(x) for x in gravity_for(robot, gravity))
    table = robot.caches.setdefault(_FUNCTIONS, {})
    if g not in table:
        table[g] = _Functions(robot, g)
    return table[g]


def mass_matrix(robot, q):
    """M(q), shape (..., nv, nv) for q of shape (..., nq); its derivative along q is Γ's
    (∂M_ij/∂q_k = Γ_ijk + Γ_jik)."""
    return _functions(robot).mass_matrix(q)


def inverse_dynamics(robot, q, qd, qdd, gravity=True):
    """τ = M q̈ + C q̇ + g, shape (..., nv); states of shapes (..., nq), (..., nv), (..., nv),
    broadcast to one batch. ``gravity``: True (the robot's), False, or a 3-vector of numbers."""
    return _functions(robot, gravity).inverse_dynamics(q, qd, qdd)


def gravity_vector(robot, q, gravity=True):
    """g(q), shape (..., nv)."""
    return _functions(robot, gravity).gravity_vector(q)


def forward_dynamics(robot, q, qd, tau, gravity=True):
    """q̈ = M⁻¹(τ − C q̇ − g), shape (..., nv)."""
    return _functions(robot, gravity).forward_dynamics(q, qd, tau)
