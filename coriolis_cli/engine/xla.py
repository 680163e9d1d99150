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
from . import compiled, tangent_map
from .algorithms import gravity_for
from .api import free_armature_guard
from .data import check_second_bytes
from .calls import get_num_threads
from .workspaces import kernel_scratch

__all__ = ["christoffel", "coriolis_matrix", "coriolis_product", "coriolis_transpose_velocity", "forward_dynamics",
           "generalized_momentum", "gravity_vector", "inverse_dynamics", "mass_matrix"]

_HANDLERS = compiled.xla_handlers()  # name → (capsule, each output's power of nv per state)
for _name, (_capsule, _) in _HANDLERS.items():
    jax.ffi.register_ffi_target(_name, _capsule, platform="cpu")

_FUNCTIONS = "coriolis_cli.jax functions"  # robot.caches' key: the robot's functions, by gravity


_OPS = tangent_map.ArrayOps(jnp.cross, lambda xs: jnp.concatenate(xs, axis=-1),
                            lambda x: jnp.sum(x, axis=-1, keepdims=True),
                            lambda x: jnp.linalg.norm(x, axis=-1, keepdims=True), jnp.hypot)


def _tangent_map(robot):
    """(q, q̇) → T(q) q̇ (engine.tangent_map), or None where q are coordinates."""
    found = tangent_map.joints(robot)
    return None if found is None else (lambda q, qdot: tangent_map.to_tangent(_OPS, found, q, qdot))


def _check(robot) -> None:
    if not isinstance(robot, RobotModel):
        raise StateError(f"coriolis_cli.jax takes a tree from coriolis_cli.load_robot, got "
                         f"{type(robot).__name__} (mimic joints, base velocities and closed loops are not taken yet; "
                         "pass robot.full)")
    if not jax.config.jax_enable_x64:
        raise StateError("coriolis_cli.jax computes in float64: call jax.config.update('jax_enable_x64', True) "
                         "before creating arrays")


def _on_the_cpu(arguments) -> None:
    """The handlers are registered for the CPU only: arrays elsewhere (and, under a
    transformation, a default backend elsewhere) are refused, never copied."""
    where = set()
    for x in arguments:
        if isinstance(x, jax.core.Tracer):
            device = jax.config.jax_default_device
            where.add(jax.default_backend() if device is None else getattr(device, "platform", str(device)))
        elif isinstance(x, jax.Array):
            where |= {d.platform for d in x.devices()}
    if where - {"cpu"}:
        raise StateError(f"coriolis_cli.jax computes on the CPU, got arrays on {', '.join(sorted(where - {'cpu'}))}: "
                         "jax.device_put them to jax.devices('cpu')[0] and run under "
                         "jax.default_device(jax.devices('cpu')[0])")


def _states(robot, q, *velocities):
    """q (..., nq) and the velocities (..., nv) as float64 arrays of one batch shape."""
    _on_the_cpu((q, *velocities))
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
        shapes_of = {name: [(n,) * power for power in powers] for name, (_, powers) in _HANDLERS.items()}
        attributes = {"robot": np.int64(_robot_id(robot)), "gx": np.float64(gravity[0]),
                      "gy": np.float64(gravity[1]), "gz": np.float64(gravity[2])}

        def call(name, batch, *arrays):
            outputs = tuple(jax.ShapeDtypeStruct(batch + s, jnp.float64) for s in shapes_of[name])
            return jax.ffi.ffi_call(name, outputs, vmap_method="broadcast_all")(
                *arrays, threads=np.int64(get_num_threads()), **attributes)

        def times(J, t):  # J t over the batch: linear in t, so reverse mode transposes it
            return jnp.einsum("...ij,...j->...i", J, t)

        to_tangent = _tangent_map(robot)

        def first_order(name, what):
            """The handler ``name``'s outputs (Jacobians) as a function of the states, with no
            derivative of its own yet: differentiating it (a second derivative of ``what``) raises."""
            @jax.custom_jvp
            def jacobians(*states):
                return tuple(call(name, states[0].shape[:-1], *states))

            @jacobians.defjvp
            def _(primals, tangents):
                raise StateError(f"coriolis_cli.jax has no second derivatives of {what} yet (τ's exist: "
                                 "differentiate inverse_dynamics twice)")

            return jacobians if len(shapes_of[name]) > 1 else (lambda *states: jacobians(*states)[0])

        Gamma_of = first_order("coriolis_christoffel", "M and C")
        forward_jacobians = first_order("coriolis_forward_dynamics_derivatives", "q̈")
        gravity_jacobian = first_order("coriolis_gravity_derivatives", "g")
        dC_dq_of = first_order("coriolis_coriolis_matrix_derivatives", "C")
        product_jacobians = first_order("coriolis_coriolis_product_derivatives", "C v")
        momentum_jacobian = first_order("coriolis_momentum_derivatives", "p")
        transpose_jacobians = first_order("coriolis_coriolis_transpose_derivatives", "Cᵀq̇")
        M_of = first_order("coriolis_mass_matrix", "p and C v")
        coriolis_matrix_of = first_order("coriolis_coriolis_matrix", "C v")
        tensors_of = first_order("coriolis_inverse_dynamics_second_derivatives", "τ beyond the second")

        @jax.custom_jvp
        def tau_jacobians(q, qd, qdd):  # ∂τ/∂q, ∂τ/∂q̇, M: their own derivatives are τ's second ones
            return tuple(call("coriolis_inverse_dynamics_derivatives", q.shape[:-1], q, qd, qdd))

        @tau_jacobians.defjvp
        def _(primals, tangents):
            free_armature_guard(robot)
            check_second_bytes(n)
            q = primals[0]
            T_qq, T_vv, T_qv, T_qa = tensors_of(*primals)  # [i, j, k] = ∂/∂x_j (∂τ_i/∂y_k)
            delta, tv, ta = along(q, tangents[0]), tangents[1], tangents[2]

            def contract(spec, T, t):
                return jnp.einsum(spec, T, t)

            d_dq = (contract("...ijk,...j->...ik", T_qq, delta) + contract("...ikj,...j->...ik", T_qv, tv)
                    + contract("...ikj,...j->...ik", T_qa, ta))
            d_dv = contract("...ijk,...j->...ik", T_qv, delta) + contract("...ijk,...j->...ik", T_vv, tv)
            d_M = contract("...ijk,...j->...ik", T_qa, delta)
            return tau_jacobians(*primals), (d_dq, d_dv, d_M)

        def mass_matrix_along(Gamma, delta):  # Σ_k ∂M/∂q_k δ_k, ∂M_ij/∂q_k = Γ_ijk + Γ_jik
            return jnp.einsum("...ijk,...k->...ij", Gamma + jnp.swapaxes(Gamma, -3, -2), delta)

        def along(q, t):  # q's tangent as the kernels' derivatives take it (a velocity in the tangent space)
            return t if to_tangent is None else to_tangent(q, jnp.broadcast_to(t, q.shape))

        def made(name, tangent, take=lambda outputs: outputs[0]):
            """A function of the states (broadcast to one batch): ``take`` of the handler ``name``'s
            outputs, with ``tangent(states, tangents)`` as its derivative rule."""

            @jax.custom_jvp
            def value(*arguments):
                batch, states = _states(robot, *arguments)
                return take(call(name, batch, *states))

            @value.defjvp
            def _(primals, tangents):
                _, states = _states(robot, *primals)
                return value(*primals), tangent(states, tangents)

            return value

        def from_jacobians(jacobians):
            """The tangent Σ_k J_k t_k of a function of the states from ``jacobians(*states)``, its
            Jacobian with respect to each state in turn (q's tangent taken into the tangent space)."""

            def tangent(states, tangents):
                steps = [along(states[0], tangents[0]), *tangents[1:]]
                return sum(times(J, t) for J, t in zip(jacobians(*states), steps))

            return tangent

        def coriolis_tangent(states, tangents):  # of (M, Ṁ, C): Γ + Γᵀ, ∂C/∂q and Γ, Ṁ's as C + Cᵀ's
            q, qd = states
            Gamma, dC_dq = Gamma_of(q), dC_dq_of(q, qd)
            delta = along(q, tangents[0])
            dC = jnp.einsum("...ijk,...k->...ij", dC_dq, delta) + jnp.einsum("...ijk,...k->...ij", Gamma, tangents[1])
            return mass_matrix_along(Gamma, delta), dC + jnp.swapaxes(dC, -1, -2), dC

        def momentum_tangent(states, tangents):  # of (p, Cᵀq̇): ∂p/∂q and M, ∂(Cᵀq̇)/∂q and ∂(Cᵀq̇)/∂q̇
            q, qd = states
            dc_dq, dc_dv = transpose_jacobians(q, qd)
            delta, tv = along(q, tangents[0]), tangents[1]
            return (times(momentum_jacobian(q, qd), delta) + times(M_of(q), tv),
                    times(dc_dq, delta) + times(dc_dv, tv))

        def refuse_gamma(states, tangents):
            raise StateError("coriolis_cli.jax does not differentiate Γ (it would need M's third derivatives); "
                             "differentiate coriolis_matrix or the dynamics instead")

        mass_matrix = made("coriolis_mass_matrix",
                           lambda states, t: mass_matrix_along(Gamma_of(states[0]), along(states[0], t[0])))
        gravity_vector = made("coriolis_gravity_vector", from_jacobians(lambda q: (gravity_jacobian(q),)))
        inverse_dynamics = made("coriolis_inverse_dynamics", from_jacobians(tau_jacobians))
        forward_dynamics = made("coriolis_forward_dynamics", from_jacobians(forward_jacobians))
        coriolis_matrix = made("coriolis_coriolis_matrix", coriolis_tangent, take=tuple)
        christoffel = made("coriolis_christoffel", refuse_gamma)
        momentum_terms = made("coriolis_momentum", momentum_tangent, take=tuple)  # p = M q̇ and Cᵀq̇, one pass

        @jax.custom_jvp
        def coriolis_product(q, qd, v):
            batch, (q, qd, v) = _states(robot, q, qd, v)
            return times(call("coriolis_coriolis_matrix", batch, q, qd)[2], v)

        @coriolis_product.defjvp
        def _(primals, tangents):
            _, (q, qd, v) = _states(robot, *primals)
            C = coriolis_matrix_of(q, qd)[2]
            dq, dv = product_jacobians(q, qd, v)
            tq, tv, tw = tangents
            return times(C, v), times(dq, along(q, tq)) + times(dv, tv) + times(C, tw)

        self.mass_matrix, self.inverse_dynamics = mass_matrix, inverse_dynamics
        self.gravity_vector, self.forward_dynamics = gravity_vector, forward_dynamics
        self.coriolis_matrix, self.christoffel, self.coriolis_product = coriolis_matrix, christoffel, coriolis_product
        self.momentum_terms = momentum_terms


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


def coriolis_matrix(robot, q, qd):
    """(M, Ṁ, C) at (q, q̇), each (..., nv, nv), C the Christoffel-consistent one (Algorithm 1);
    derivatives ∂M/∂q = Γ + Γᵀ, ∂C/∂q (coriolis_matrix_derivatives) and ∂C/∂q̇ = Γ, Ṁ's as C + Cᵀ's."""
    return _functions(robot).coriolis_matrix(q, qd)


def christoffel(robot, q):
    """Γ (..., nv, nv, nv), ``C_ij = Σ_k Γ_ijk q̇_k``. Not differentiable here (it would take M's
    third derivatives): differentiating it raises StateError."""
    return _functions(robot).christoffel(q)


def coriolis_product(robot, q, qd, v):
    """C(q, q̇) v, shape (..., nv); derivatives ∂(C v)/∂q, ∂(C v)/∂q̇
    (coriolis_product_derivatives) and C."""
    return _functions(robot).coriolis_product(q, qd, v)


def coriolis_transpose_velocity(robot, q, qd):
    """Cᵀ(q, q̇) q̇, shape (..., nv), the term of the momentum observer's ṗ = τ + Cᵀq̇ − g;
    derivatives from coriolis_transpose_derivatives."""
    return _functions(robot).momentum_terms(q, qd)[1]


def generalized_momentum(robot, q, qd):
    """p = M q̇, shape (..., nv); derivatives ∂p/∂q (momentum_derivatives) and M."""
    return _functions(robot).momentum_terms(q, qd)[0]
