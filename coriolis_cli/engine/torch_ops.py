"""The calling layer for PyTorch (coriolis_cli.torch): the engine's functions as ``torch.library``
custom operators on CPU float64 tensors, with autograd from the analytic derivatives, fake
implementations for ``torch.compile`` and vmap rules that hand a batch to the batch kernels.
Imported only by coriolis_cli.torch: the rest of the package never imports PyTorch.

An operator takes a robot by the id ``robot_id`` gives it and states of shape (..., nq) and
(..., nv); its implementation calls the NumPy function on the states as one batch (the batch
kernels, on get_num_threads() threads, with the GIL released), zero-copy both ways."""

from __future__ import annotations

import atexit
import itertools

import numpy as np

try:
    import torch
except ImportError:  # pragma: no cover (the extra is missing)
    raise ImportError("coriolis_cli.torch needs PyTorch: pip install torch (a CPU build will do)") from None

from ..errors import StateError
from ..model.tree import RobotModel
from . import api
from ..model.parameters import N_PARAMETERS
from .algorithms import gravity_for

_ROBOTS: dict = {}  # id → (robot, gravity), for the operators (which take numbers and tensors only)
# the operators' registrations, dropped at exit: PyTorch's registry would otherwise hold the
# functions (and through them the compiled module's objects) past the interpreter's teardown
_LIBRARY = torch.library.Library("coriolis", "DEF")


_NEXT = itertools.count()
_ID = "coriolis_cli.torch id"


@atexit.register
def _release() -> None:
    _ROBOTS.clear()
    _LIBRARY._destroy()


@torch.compiler.assume_constant_result  # torch.compile takes the id as a constant of the graph
def robot_id(robot, gravity=True) -> int:
    """The id of the robot at this gravity for the operators (a number, as torch.compile keeps
    them constant), given once per robot object and gravity; the robot is checked."""
    if not isinstance(robot, RobotModel):
        raise StateError(f"coriolis_cli.torch takes a tree from coriolis_cli.load_robot, got {type(robot).__name__} "
                         "(mimic joints, base velocities and closed loops are not taken yet; pass robot.full)")
    g = tuple(float(x) for x in gravity_for(robot, gravity))
    ids = robot.caches.setdefault(_ID, {})
    if g not in ids:
        ids[g] = next(_NEXT)
        _ROBOTS[ids[g]] = (robot, np.array(g))
    return ids[g]


def _numpy(x: torch.Tensor) -> np.ndarray:
    return x.detach().contiguous().numpy()


def _batched(function, robot, gravity, states):
    """``function(robot, gravity, *states (K, ·))`` on the states as one batch of K = their leading
    size (broadcast to one batch shape), each output with the batch's shape in front."""
    shape = torch.broadcast_shapes(*(s.shape[:-1] for s in states))
    arrays = [_numpy(s.expand(shape + s.shape[-1:])).reshape(-1, s.shape[-1]) for s in states]
    result = function(robot, gravity, *arrays)
    outputs = result if isinstance(result, tuple) else (result,)
    tensors = tuple(torch.from_numpy(np.ascontiguousarray(o)).reshape(shape + o.shape[1:]) for o in outputs)
    return tensors if isinstance(result, tuple) else tensors[0]


def _check(*states):
    for s in states:
        if s.dtype != torch.float64 or s.device.type != "cpu":
            raise StateError(f"coriolis_cli.torch takes float64 tensors on the CPU, got {s.dtype} on {s.device}")


def _define(name, arguments, function, outputs):
    """The operator ``coriolis::name``: (robot_id, *states) → one tensor or a tuple, computed by
    ``function(robot, gravity, *states)``; ``outputs(nv, columns)`` gives each output's per-state
    shape (columns: the regressor's, 10 per body)."""
    count = len(outputs(1, 1))
    signature = f"(int robot_id, {', '.join(f'Tensor {a}' for a in arguments)}) -> " + (
        "Tensor" if count == 1 else "(" + ", ".join(["Tensor"] * count) + ")")
    _LIBRARY.define(name + signature)

    @torch.library.impl(f"coriolis::{name}", "cpu", lib=_LIBRARY)
    def _(robot_id, *states):
        _check(*states)
        robot, gravity = _ROBOTS[robot_id]
        return _batched(function, robot, gravity, states)

    @torch.library.register_fake(f"coriolis::{name}", lib=_LIBRARY)
    def _(robot_id, *states):
        shape = torch.broadcast_shapes(*(s.shape[:-1] for s in states))
        robot = _ROBOTS[robot_id][0]
        made = tuple(states[0].new_empty(shape + per) for per in outputs(robot.nv, N_PARAMETERS * robot.n_bodies))
        return made if count > 1 else made[0]

    def vmap_rule(info, in_dims, robot_id, *states):
        size = info.batch_size
        moved = [s.expand((size,) + s.shape) if d is None else s.movedim(d, 0) for s, d in zip(states, in_dims[1:])]
        result = getattr(torch.ops.coriolis, name)(robot_id, *moved)
        return result, ((0,) * count if count > 1 else 0)

    torch.library.register_vmap(f"coriolis::{name}", vmap_rule, lib=_LIBRARY)
    return getattr(torch.ops.coriolis, name)


mass_matrix_op = _define("mass_matrix", ["q"], lambda r, g, q: api.mass_matrix(r, q), lambda n, _: [(n, n)])
christoffel_op = _define("christoffel", ["q"], lambda r, g, q: api.christoffel(r, q, force=True), lambda n, _: [(n, n, n)])
inverse_dynamics_op = _define("inverse_dynamics", ["q", "qd", "qdd"],
                              lambda r, g, q, v, a: api.inverse_dynamics(r, q, v, a, gravity=g), lambda n, _: [(n,)])
gravity_vector_op = _define("gravity_vector", ["q"], lambda r, g, q: api.gravity_vector(r, q, gravity=g),
                            lambda n, _: [(n,)])
forward_dynamics_op = _define("forward_dynamics", ["q", "qd", "tau"],
                              lambda r, g, q, v, t: api.forward_dynamics(r, q, v, t, gravity=g), lambda n, _: [(n,)])
tau_jacobians_op = _define("tau_jacobians", ["q", "qd", "qdd"],
                           lambda r, g, q, v, a: api.inverse_dynamics_derivatives(r, q, v, a, gravity=g),
                           lambda n, _: [(n, n)] * 3)
tau_second_op = _define("tau_second", ["q", "qd", "qdd"],
                        lambda r, g, q, v, a: api.inverse_dynamics_second_derivatives(r, q, v, a, gravity=g, force=True),
                        lambda n, _: [(n, n, n)] * 4)
forward_jacobians_op = _define("forward_jacobians", ["q", "qd", "tau"],
                               lambda r, g, q, v, t: api.forward_dynamics_derivatives(r, q, v, t, gravity=g),
                               lambda n, _: [(n, n)] * 3)
gravity_jacobian_op = _define("gravity_jacobian", ["q"], lambda r, g, q: api.gravity_derivatives(r, q, gravity=g),
                              lambda n, _: [(n, n)])
regressor_op = _define("regressor", ["q", "qd", "qd_r", "qdd_r"],
                       lambda r, g, q, v, vr, ar: api.regressor(r, q, v, vr, ar, gravity=g), lambda n, c: [(n, c)])
coriolis_matrix_op = _define("coriolis_matrix", ["q", "qd"], lambda r, g, q, v: api.coriolis_matrix(r, q, v),
                             lambda n, _: [(n, n)] * 3)
coriolis_product_op = _define("coriolis_product", ["q", "qd", "v"],
                              lambda r, g, q, v, w: np.einsum("kij,kj->ki", api.coriolis_matrix(r, q, v)[2], w),
                              lambda n, _: [(n,)])
generalized_momentum_op = _define("generalized_momentum", ["q", "qd"],
                                  lambda r, g, q, v: api.generalized_momentum(r, q, v), lambda n, _: [(n,)])
coriolis_transpose_velocity_op = _define("coriolis_transpose_velocity", ["q", "qd"],
                                         lambda r, g, q, v: api.coriolis_transpose_velocity(r, q, v), lambda n, _: [(n,)])
coriolis_derivatives_op = _define("coriolis_derivatives", ["q", "qd"],
                                  lambda r, g, q, v: api.coriolis_matrix_derivatives(r, q, v), lambda n, _: [(n, n, n)])
product_jacobians_op = _define("product_jacobians", ["q", "qd", "v"],
                               lambda r, g, q, v, w: api.coriolis_product_derivatives(r, q, v, w),
                               lambda n, _: [(n, n)] * 2)
momentum_jacobian_op = _define("momentum_jacobian", ["q", "qd"], lambda r, g, q, v: api.momentum_derivatives(r, q, v),
                               lambda n, _: [(n, n)])
transpose_jacobians_op = _define("transpose_jacobians", ["q", "qd"],
                                 lambda r, g, q, v: api.coriolis_transpose_derivatives(r, q, v), lambda n, _: [(n, n)] * 2)


# ---- autograd: the gradients from the analytic derivatives ------------------------------------
def _to_coordinates(robot_id, q, g):
    """The gradient with respect to q (..., nq) of what has gradient ``g`` (..., nv) with respect
    to the velocity in the tangent space: Tᵀ g, T the map from a coordinate velocity q̇ to the
    tangent velocity that moves q as it does (engine.xla's, read transposed; kept in torch
    operations on q, so that a second backward differentiates it): a free joint's Rᵀṗ and
    2 Im(q̄ ⊗ q̇)/|q|², a spherical joint's second part, a planar joint's R(θ)ᵀṗ and
    (c ṡ − s ċ)/(c² + s²)."""
    robot = _ROBOTS[robot_id][0]
    if robot.nq == robot.nv:
        return g
    pieces = []
    for body, qs, vs in zip(robot.bodies, robot.q_start, robot.v_start):
        kind, qs, vs = body.joint.type, int(qs), int(vs)

        def quaternion(quat, g_w):  # (2/|q|²) Eᵀ g, E = [w 1 − u×, −u]
            u, w = quat[..., :3], quat[..., 3:]
            scale = 2.0 / (quat * quat).sum(-1, keepdim=True)
            return torch.cat([scale * (w * g_w + torch.cross(u, g_w, dim=-1)),
                              -scale * (u * g_w).sum(-1, keepdim=True)], dim=-1)

        if kind in ("free", "floating"):
            quat = q[..., qs + 3:qs + 7]
            unit = quat / quat.norm(dim=-1, keepdim=True)
            u, w = unit[..., :3], unit[..., 3:]
            g_v = g[..., vs:vs + 3]  # R g_v: the position's share
            rotated = g_v * (w * w - (u * u).sum(-1, keepdim=True)) + 2.0 * u * (u * g_v).sum(-1, keepdim=True) \
                + 2.0 * w * torch.cross(u, g_v, dim=-1)
            pieces += [rotated, quaternion(quat, g[..., vs + 3:vs + 6])]
        elif kind == "spherical":
            pieces.append(quaternion(q[..., qs:qs + 4], g[..., vs:vs + 3]))
        elif kind == "planar":
            c, s_ = q[..., qs + 2:qs + 3], q[..., qs + 3:qs + 4]
            r = torch.hypot(c, s_)
            gx, gy, gw = g[..., vs:vs + 1], g[..., vs + 1:vs + 2], g[..., vs + 2:vs + 3]
            pieces += [(c * gx - s_ * gy) / r, (s_ * gx + c * gy) / r, -s_ * gw / (r * r), c * gw / (r * r)]
        else:
            pieces.append(g[..., vs:vs + 1])
    return torch.cat(pieces, dim=-1)


def _along(robot_id, q, tangent):
    """A gradient in the tangent space as one with respect to q, at q broadcast to its batch."""
    return _to_coordinates(robot_id, q.expand(tangent.shape[:-1] + q.shape[-1:]), tangent)


def _vector_times(g, J):  # gᵀ J over a batch: (..., n) (..., n, m) → (..., m)
    return torch.einsum("...i,...ik->...k", g, J)


def _reduce(grad, like):
    """A gradient of a state broadcast to the batch, summed back to the state's own shape."""
    while grad.dim() > like.dim():
        grad = grad.sum(0)
    for axis, size in enumerate(like.shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis, keepdim=True)
    return grad


def _first_order_only(what):
    def backward(ctx, *grads):
        raise StateError(f"coriolis_cli.torch has no second derivatives of {what} yet (τ's exist: differentiate "
                         "inverse_dynamics twice)")
    return backward


def _setup(ctx, inputs, output):
    ctx.robot_id = inputs[0]
    ctx.save_for_backward(*inputs[1:])


def _mass_matrix_backward(ctx, grad):
    (q,) = ctx.saved_tensors
    Gamma = christoffel_op(ctx.robot_id, q)
    # ∂M_ij/∂q_k = Γ_ijk + Γ_jik: Σ_ij g_ij (Γ_ijk + Γ_jik) = Σ_ij (g + gᵀ)_ij Γ_ijk
    return None, _reduce(_along(ctx.robot_id, q, torch.einsum("...ij,...ijk->...k", grad + grad.transpose(-1, -2),
                                                                Gamma)), q)


def _tau_backward(ctx, grad):
    q, qd, qdd = ctx.saved_tensors
    dq, dv, M = tau_jacobians_op(ctx.robot_id, q, qd, qdd)
    return (None, _reduce(_along(ctx.robot_id, q, _vector_times(grad, dq)), q), _reduce(_vector_times(grad, dv), qd),
            _reduce(_vector_times(grad, M), qdd))


def _tau_jacobians_backward(ctx, g_dq, g_dv, g_M):
    q, qd, qdd = ctx.saved_tensors
    T_qq, T_vv, T_qv, T_qa = tau_second_op(ctx.robot_id, q, qd, qdd)  # [i, j, k] = ∂/∂x_j (∂τ_i/∂y_k)
    n = T_qq.shape[-1]
    zero = lambda g: T_qq.new_zeros(T_qq.shape[:-3] + (n, n)) if g is None else g  # noqa: E731
    g_dq, g_dv, g_M = zero(g_dq), zero(g_dv), zero(g_M)
    # dq[i, k] moves with q_j by T_qq[i, j, k], with q̇_j by T_qv[i, k, j], with q̈_j by T_qa[i, k, j];
    # dv[i, k] with q_j by T_qv[i, j, k], with q̇_j by T_vv[i, j, k]; M[i, k] with q_j by T_qa[i, j, k]
    e = torch.einsum
    grad_q = e("...ik,...ijk->...j", g_dq, T_qq) + e("...ik,...ijk->...j", g_dv, T_qv) + e("...ik,...ijk->...j", g_M, T_qa)
    grad_v = e("...ik,...ikj->...j", g_dq, T_qv) + e("...ik,...ijk->...j", g_dv, T_vv)
    grad_a = e("...ik,...ikj->...j", g_dq, T_qa)
    return None, _reduce(_along(ctx.robot_id, q, grad_q), q), _reduce(grad_v, qd), _reduce(grad_a, qdd)


def _gravity_backward(ctx, grad):
    (q,) = ctx.saved_tensors
    return None, _reduce(_along(ctx.robot_id, q, _vector_times(grad, gravity_jacobian_op(ctx.robot_id, q))), q)


def _forward_backward(ctx, grad):
    q, qd, tau = ctx.saved_tensors
    dq, dv, Minv = forward_jacobians_op(ctx.robot_id, q, qd, tau)
    return (None, _reduce(_along(ctx.robot_id, q, _vector_times(grad, dq)), q), _reduce(_vector_times(grad, dv), qd),
            _reduce(_vector_times(grad, Minv), tau))


def _coriolis_backward(ctx, g_M, g_Mdot, g_C):
    q, qd = ctx.saved_tensors
    Gamma, dC_dq = christoffel_op(ctx.robot_id, q), coriolis_derivatives_op(ctx.robot_id, q, qd)
    # Ṁ = C + Cᵀ: Ṁ's gradient reaches C as g + gᵀ; ∂C_ij/∂q̇_k = Γ_ijk
    g = torch.zeros_like(Gamma[..., 0]) if g_C is None else g_C
    if g_Mdot is not None:
        g = g + g_Mdot + g_Mdot.transpose(-1, -2)
    grad_q = torch.einsum("...ij,...ijk->...k", g, dC_dq)
    if g_M is not None:
        grad_q = grad_q + torch.einsum("...ij,...ijk->...k", g_M + g_M.transpose(-1, -2), Gamma)
    return None, _reduce(_along(ctx.robot_id, q, grad_q), q), _reduce(torch.einsum("...ij,...ijk->...k", g, Gamma), qd)


def _product_backward(ctx, grad):
    q, qd, v = ctx.saved_tensors
    dq, dv = product_jacobians_op(ctx.robot_id, q, qd, v)
    C = coriolis_matrix_op(ctx.robot_id, q, qd)[2]
    return (None, _reduce(_along(ctx.robot_id, q, _vector_times(grad, dq)), q), _reduce(_vector_times(grad, dv), qd),
            _reduce(_vector_times(grad, C), v))


def _momentum_backward(ctx, grad):  # ∂p/∂q and M
    q, qd = ctx.saved_tensors
    dq, M = momentum_jacobian_op(ctx.robot_id, q, qd), mass_matrix_op(ctx.robot_id, q)
    return None, _reduce(_along(ctx.robot_id, q, _vector_times(grad, dq)), q), _reduce(_vector_times(grad, M), qd)


def _transpose_backward(ctx, grad):
    q, qd = ctx.saved_tensors
    dq, dv = transpose_jacobians_op(ctx.robot_id, q, qd)
    return None, _reduce(_along(ctx.robot_id, q, _vector_times(grad, dq)), q), _reduce(_vector_times(grad, dv), qd)


def _refuse_regressor(ctx, grad):
    raise StateError("coriolis_cli.torch does not differentiate the regressor Y in the states (Y θ is "
                     "differentiable in θ; for ∂τ/∂q take inverse_dynamics's)")


def _refuse_gamma(ctx, grad):
    raise StateError("coriolis_cli.torch does not differentiate Γ, nor M and C twice (it would need M's third "
                     "derivatives); τ's second derivatives exist: differentiate inverse_dynamics twice")


for _name, _backward in (("mass_matrix", _mass_matrix_backward), ("inverse_dynamics", _tau_backward),
                         ("tau_jacobians", _tau_jacobians_backward), ("gravity_vector", _gravity_backward),
                         ("forward_dynamics", _forward_backward), ("coriolis_matrix", _coriolis_backward),
                         ("coriolis_product", _product_backward), ("generalized_momentum", _momentum_backward),
                         ("coriolis_transpose_velocity", _transpose_backward), ("christoffel", _refuse_gamma),
                         ("regressor", _refuse_regressor)):
    torch.library.register_autograd(f"coriolis::{_name}", _backward, setup_context=_setup, lib=_LIBRARY)
for _name, _what in (("forward_jacobians", "q̈"), ("gravity_jacobian", "g"), ("coriolis_derivatives", "C"),
                     ("product_jacobians", "C v"), ("momentum_jacobian", "p"), ("transpose_jacobians", "Cᵀq̇"),
                     ("tau_second", "τ beyond the second")):
    torch.library.register_autograd(f"coriolis::{_name}", _first_order_only(_what), setup_context=_setup, lib=_LIBRARY)
