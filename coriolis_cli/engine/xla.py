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
from .api import free_armature_guard
from .data import check_second_bytes
from .calls import get_num_threads
from .workspaces import kernel_scratch

__all__ = ["christoffel", "coriolis_matrix", "coriolis_product", "coriolis_transpose_velocity", "forward_dynamics",
           "generalized_momentum", "gravity_vector", "inverse_dynamics", "mass_matrix"]

for _name, _capsule in compiled.xla_handlers().items():
    jax.ffi.register_ffi_target(_name, _capsule, platform="cpu")

_FUNCTIONS = "coriolis_cli.jax functions"  # robot.caches' key: the robot's functions, by gravity


def _tangent_map(robot):
    """The velocity in the tangent space (..., nv) that moves q as a coordinate velocity q̇ (..., nq)
    does: model.joints.integrate's exponential map read backwards, joint by joint, through the
    kernels' normalization of quaternions and (cos, sin) pairs (so that a q̇ along q itself moves
    nothing). A free joint: v = Rᵀṗ, ω = 2 Im(q̄ ⊗ q̇)/|q|²; a spherical joint: ω alone; a planar
    joint: (v_x, v_y) = R(θ)ᵀṗ, ω = (c ṡ − s ċ)/(c² + s²). None where q are coordinates."""
    if robot.nq == robot.nv:
        return None
    joints = [(body.joint.type, int(qs), int(vs)) for body, qs, vs in zip(robot.bodies, robot.q_start, robot.v_start)]
    assert all(a[2] < b[2] for a, b in zip(joints, joints[1:]))  # the pieces below concatenate in v's order

    def angular(quat, rate):  # 2 Im(q̄ ⊗ q̇)/|q|², quaternions (x, y, z, w)
        u, w = quat[..., :3], quat[..., 3:]
        du, dw = rate[..., :3], rate[..., 3:]
        return 2.0 * (w * du - dw * u - jnp.cross(u, du)) / jnp.sum(quat * quat, axis=-1, keepdims=True)

    def rotation_transposed_times(quat, x):  # R(q/|q|)ᵀ x
        u = quat / jnp.linalg.norm(quat, axis=-1, keepdims=True)
        v, w = u[..., :3], u[..., 3:]
        return x * (w * w - jnp.sum(v * v, axis=-1, keepdims=True)) + 2.0 * v * jnp.sum(v * x, axis=-1, keepdims=True) \
            - 2.0 * w * jnp.cross(v, x)

    def tangent(q, qdot):  # slices and concatenation only: reverse mode transposes them
        pieces = []
        for kind, qs, vs in joints:
            if kind in ("free", "floating"):
                quat = q[..., qs + 3:qs + 7]
                pieces += [rotation_transposed_times(quat, qdot[..., qs:qs + 3]), angular(quat, qdot[..., qs + 3:qs + 7])]
            elif kind == "spherical":
                pieces.append(angular(q[..., qs:qs + 4], qdot[..., qs:qs + 4]))
            elif kind == "planar":  # (x, y, cos θ, sin θ)
                c, s_ = q[..., qs + 2:qs + 3], q[..., qs + 3:qs + 4]
                r = jnp.hypot(c, s_)
                dx, dy, dc, ds = (qdot[..., qs + k:qs + k + 1] for k in range(4))
                pieces += [(c * dx + s_ * dy) / r, (-s_ * dx + c * dy) / r, (c * ds - s_ * dc) / (r * r)]
            else:
                pieces.append(qdot[..., qs:qs + 1])
        return jnp.concatenate(pieces, axis=-1)

    return tangent


def _check(robot) -> None:
    if not isinstance(robot, RobotModel):
        raise StateError(f"coriolis_cli.jax takes a tree from coriolis_cli.load_robot, got "
                         f"{type(robot).__name__} (mimic joints, base velocities and closed loops are not taken yet; "
                         "pass robot.full)")
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

        to_tangent = _tangent_map(robot)

        def first_order(name, what):
            """The handler ``name``'s outputs (Jacobians) as a function of the states, with no
            derivative of its own yet: differentiating it (a second derivative of ``what``) raises."""
            count, shapes = len(SHAPES[name]), SHAPES[name]

            @jax.custom_jvp
            def jacobians(*states):
                return tuple(call(name, shapes, states[0].shape[:-1], *states))

            @jacobians.defjvp
            def _(primals, tangents):
                raise StateError(f"coriolis_cli.jax has no second derivatives of {what} yet (τ's exist: "
                                 "differentiate inverse_dynamics twice)")

            return (lambda *states: jacobians(*states)) if count > 1 else (lambda *states: jacobians(*states)[0])

        SHAPES = {"coriolis_christoffel": [(n, n, n)], "coriolis_forward_dynamics_derivatives": [(n, n)] * 3,
                  "coriolis_gravity_derivatives": [(n, n)], "coriolis_coriolis_matrix_derivatives": [(n, n, n)],
                  "coriolis_coriolis_product_derivatives": [(n, n)] * 2, "coriolis_momentum_derivatives": [(n, n)],
                  "coriolis_coriolis_transpose_derivatives": [(n, n)] * 2, "coriolis_mass_matrix": [(n, n)],
                  "coriolis_coriolis_matrix": [(n, n)] * 3,
                  "coriolis_inverse_dynamics_second_derivatives": [(n, n, n)] * 4}
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
            return tuple(call("coriolis_inverse_dynamics_derivatives", [(n, n)] * 3, q.shape[:-1], q, qd, qdd))

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

        def along(q, t):  # q's tangent as the kernels' derivatives take it (a velocity in the tangent space)
            return t if to_tangent is None else to_tangent(q, jnp.broadcast_to(t, q.shape))

        @jax.custom_jvp
        def mass_matrix(q):
            batch, (q,) = _states(robot, q)
            return call("coriolis_mass_matrix", [(n, n)], batch, q)[0]

        @mass_matrix.defjvp
        def _(primals, tangents):
            (q,), (t,) = primals, tangents
            _, (q,) = _states(robot, q)
            Gamma = Gamma_of(q)
            return mass_matrix(q), jnp.einsum("...ijk,...k->...ij", Gamma + jnp.swapaxes(Gamma, -3, -2), along(q, t))

        def dynamics(name, jacobians):
            """τ(q, q̇, q̈) or q̈(q, q̇, τ): the handler's value, and its tangent J_q δ + J_q̇ t_q̇ + J t
            from the three Jacobians."""

            @jax.custom_jvp
            def value(q, qd, third):
                batch, states = _states(robot, q, qd, third)
                return call(name, [(n,)], batch, *states)[0]

            @value.defjvp
            def _(primals, tangents):
                _, states = _states(robot, *primals)
                J_q, J_v, J_third = jacobians(*states)
                tq, tv, t_third = tangents
                return value(*primals), times(J_q, along(states[0], tq)) + times(J_v, tv) + times(J_third, t_third)

            return value

        inverse_dynamics = dynamics("coriolis_inverse_dynamics", tau_jacobians)
        forward_dynamics = dynamics("coriolis_forward_dynamics", forward_jacobians)

        @jax.custom_jvp
        def gravity_vector(q):
            batch, (q,) = _states(robot, q)
            return call("coriolis_gravity_vector", [(n,)], batch, q)[0]

        @gravity_vector.defjvp
        def _(primals, tangents):
            (q,), (t,) = primals, tangents
            _, (q,) = _states(robot, q)
            return gravity_vector(q), times(gravity_jacobian(q), along(q, t))

        def swap(X):  # Xᵀ of each matrix of a batch
            return jnp.swapaxes(X, -1, -2)

        @jax.custom_jvp
        def coriolis_matrix(q, qd):
            batch, states = _states(robot, q, qd)
            return tuple(call("coriolis_coriolis_matrix", [(n, n)] * 3, batch, *states))

        @coriolis_matrix.defjvp
        def _(primals, tangents):
            _, (q, qd) = _states(robot, *primals)
            Gamma, dC_dq = Gamma_of(q), dC_dq_of(q, qd)
            delta, tv = along(q, tangents[0]), tangents[1]
            dM = jnp.einsum("...ijk,...k->...ij", Gamma + jnp.swapaxes(Gamma, -3, -2), delta)
            dC = jnp.einsum("...ijk,...k->...ij", dC_dq, delta) + jnp.einsum("...ijk,...k->...ij", Gamma, tv)
            return coriolis_matrix(*primals), (dM, dC + swap(dC), dC)

        @jax.custom_jvp
        def christoffel(q):
            batch, (q,) = _states(robot, q)
            return call("coriolis_christoffel", [(n, n, n)], batch, q)[0]

        @christoffel.defjvp
        def _(primals, tangents):
            raise StateError("coriolis_cli.jax does not differentiate Γ (it would need M's third derivatives); "
                             "differentiate coriolis_matrix or the dynamics instead")

        @jax.custom_jvp
        def coriolis_product(q, qd, v):
            batch, (q, qd, v) = _states(robot, q, qd, v)
            return times(call("coriolis_coriolis_matrix", [(n, n)] * 3, batch, q, qd)[2], v)

        @coriolis_product.defjvp
        def _(primals, tangents):
            _, (q, qd, v) = _states(robot, *primals)
            C = coriolis_matrix_of(q, qd)[2]
            dq, dv = product_jacobians(q, qd, v)
            tq, tv, tw = tangents
            return times(C, v), times(dq, along(q, tq)) + times(dv, tv) + times(C, tw)

        @jax.custom_jvp
        def momentum_terms(q, qd):  # p = M q̇ and Cᵀq̇, one pass of the RNEA
            batch, states = _states(robot, q, qd)
            return tuple(call("coriolis_momentum", [(n,)] * 2, batch, *states))

        @momentum_terms.defjvp
        def _(primals, tangents):
            _, (q, qd) = _states(robot, *primals)
            dp_dq, M = momentum_jacobian(q, qd), M_of(q)
            dc_dq, dc_dv = transpose_jacobians(q, qd)
            delta, tv = along(q, tangents[0]), tangents[1]
            return momentum_terms(*primals), (times(dp_dq, delta) + times(M, tv), times(dc_dq, delta) + times(dc_dv, tv))

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
