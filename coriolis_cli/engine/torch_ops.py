"""The calling layer for PyTorch (coriolis_cli.torch): the engine's functions as ``torch.library``
custom operators on CPU float64 tensors (fake implementations for ``torch.compile``, vmap rules
that hand a batch to the batch kernels), applied through torch.autograd.Functions whose backward
and jvp are the analytic derivatives. Imported only by coriolis_cli.torch: the rest of the
package never imports PyTorch.

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
from . import api, tangent_map
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
    ids = robot.caches.setdefault(_ID, {})
    if gravity is True and True in ids:  # the robot's own gravity, as most calls take it
        return ids[True]
    g = tuple(float(x) for x in gravity_for(robot, gravity))
    if g not in ids:
        ids[g] = next(_NEXT)  # the robot's own gravity passed on as True: the NumPy functions' fast path
        _ROBOTS[ids[g]] = (robot, True if np.array_equal(g, robot.gravity_array) else np.array(g))
    if gravity is True:
        ids[True] = ids[g]
    return ids[g]


def _numpy(x: torch.Tensor) -> np.ndarray:
    return x.detach().contiguous().numpy()


def _tensor(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(x))


def _batched(function, robot, gravity, states):
    """``function(robot, gravity, *states)`` on the states as one batch of K (broadcast to one batch
    shape), each output with the batch's shape in front; one state (no batch shape) goes to the
    single-state kernels, which start no threads."""
    shapes = [s.shape[:-1] for s in states]
    shape = shapes[0]
    if any(x != shape for x in shapes[1:]):
        shape = torch.Size(np.broadcast_shapes(*shapes))
    if not shape:
        result = function(robot, gravity, *(s.detach().numpy() for s in states))
        return tuple(map(_tensor, result)) if isinstance(result, tuple) else _tensor(result)
    arrays = [_numpy(s.expand(shape + s.shape[-1:])).reshape(-1, s.shape[-1]) for s in states]
    result = function(robot, gravity, *arrays)
    outputs = result if isinstance(result, tuple) else (result,)
    tensors = tuple(_tensor(o).reshape(shape + o.shape[1:]) for o in outputs)
    return tensors if isinstance(result, tuple) else tensors[0]


def _check(*states):
    for s in states:
        if s.dtype != torch.float64 or s.device.type != "cpu":
            raise StateError(f"coriolis_cli.torch takes float64 tensors on the CPU, got {s.dtype} on {s.device}")


_COMPUTE: dict = {}  # name → the operators' CPU implementation


def _define(name, arguments, function, outputs):
    """The operator ``coriolis::name``: (robot_id, *states) → one tensor or a tuple, computed by
    ``function(robot, gravity, *states)``; ``outputs(nv, columns)`` gives each output's per-state
    shape (columns: the regressor's, 10 per body)."""
    count = len(outputs(1, 1))
    signature = f"(int robot_id, {', '.join(f'Tensor {a}' for a in arguments)}) -> " + (
        "Tensor" if count == 1 else "(" + ", ".join(["Tensor"] * count) + ")")
    _LIBRARY.define(name + signature)

    def compute(robot_id, *states):
        _check(*states)
        robot, gravity = _ROBOTS[robot_id]
        return _batched(function, robot, gravity, states)

    torch.library.impl(f"coriolis::{name}", "cpu", lib=_LIBRARY)(compute)
    _COMPUTE[name] = compute

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

    def undifferentiated(robot_id, *states):  # the operator alone: its derivatives are the Functions' below
        if torch.is_grad_enabled() and any(s.requires_grad for s in states) or any(
                torch.autograd.forward_ad.unpack_dual(s).tangent is not None for s in states):
            raise StateError(f"torch.ops.coriolis.{name} has no derivatives of its own: call coriolis_cli.torch's "
                             "functions, which differentiate it")
        with torch._C._AutoDispatchBelowAutograd():
            return getattr(torch.ops.coriolis, name)(robot_id, *states)

    _LIBRARY.impl(name, undifferentiated, "Autograd")


_define("mass_matrix", ["q"], lambda r, g, q: api.mass_matrix(r, q), lambda n, _: [(n, n)])
_define("christoffel", ["q"], lambda r, g, q: api.christoffel(r, q, force=True), lambda n, _: [(n, n, n)])
_define("inverse_dynamics", ["q", "qd", "qdd"],
        lambda r, g, q, v, a: api.inverse_dynamics(r, q, v, a, gravity=g), lambda n, _: [(n,)])
_define("gravity_vector", ["q"], lambda r, g, q: api.gravity_vector(r, q, gravity=g),
        lambda n, _: [(n,)])
_define("forward_dynamics", ["q", "qd", "tau"],
        lambda r, g, q, v, t: api.forward_dynamics(r, q, v, t, gravity=g), lambda n, _: [(n,)])
_define("tau_jacobians", ["q", "qd", "qdd"],
        lambda r, g, q, v, a: api.inverse_dynamics_derivatives(r, q, v, a, gravity=g),
        lambda n, _: [(n, n)] * 3)
_define("tau_second", ["q", "qd", "qdd"],
        lambda r, g, q, v, a: api.inverse_dynamics_second_derivatives(r, q, v, a, gravity=g, force=True),
        lambda n, _: [(n, n, n)] * 4)
_define("forward_jacobians", ["q", "qd", "tau"],
        lambda r, g, q, v, t: api.forward_dynamics_derivatives(r, q, v, t, gravity=g),
        lambda n, _: [(n, n)] * 3)
_define("gravity_jacobian", ["q"], lambda r, g, q: api.gravity_derivatives(r, q, gravity=g),
        lambda n, _: [(n, n)])
_define("regressor", ["q", "qd", "qd_r", "qdd_r"],
        lambda r, g, q, v, vr, ar: api.regressor(r, q, v, vr, ar, gravity=g), lambda n, c: [(n, c)])
_define("coriolis_matrix", ["q", "qd"], lambda r, g, q, v: api.coriolis_matrix(r, q, v),
        lambda n, _: [(n, n)] * 3)
_define("coriolis_product", ["q", "qd", "v"],
        lambda r, g, q, v, w: np.einsum("...ij,...j->...i", api.coriolis_matrix(r, q, v)[2], w),
        lambda n, _: [(n,)])
_define("generalized_momentum", ["q", "qd"],
        lambda r, g, q, v: api.generalized_momentum(r, q, v), lambda n, _: [(n,)])
_define("coriolis_transpose_velocity", ["q", "qd"],
        lambda r, g, q, v: api.coriolis_transpose_velocity(r, q, v), lambda n, _: [(n,)])
_define("coriolis_derivatives", ["q", "qd"],
        lambda r, g, q, v: api.coriolis_matrix_derivatives(r, q, v), lambda n, _: [(n, n, n)])
_define("product_jacobians", ["q", "qd", "v"],
        lambda r, g, q, v, w: api.coriolis_product_derivatives(r, q, v, w),
        lambda n, _: [(n, n)] * 2)
_define("momentum_jacobian", ["q", "qd"], lambda r, g, q, v: api.momentum_derivatives(r, q, v),
        lambda n, _: [(n, n)])
_define("transpose_jacobians", ["q", "qd"],
        lambda r, g, q, v: api.coriolis_transpose_derivatives(r, q, v), lambda n, _: [(n, n)] * 2)


# ---- derivatives: torch.autograd.Function wrappers -------------------------------------------
# Each operator is applied through a torch.autograd.Function whose backward (reverse mode) and jvp
# (forward mode) are the analytic derivatives, and whose vmap goes through the operator's own rule
# (generate_vmap_rule): so torch.func's grad, jacrev, jacfwd, hessian and vmap compose with them,
# which register_autograd's functions do not (forward mode would see a tangent of zero). Under
# torch.compile, which traces no custom jvp, the same Function without it: reverse mode only.
_OPS = tangent_map.ArrayOps(lambda a, b: torch.cross(a, b, dim=-1), lambda xs: torch.cat(xs, dim=-1),
                            lambda x: x.sum(-1, keepdim=True), lambda x: x.norm(dim=-1, keepdim=True), torch.hypot)


def _joints(robot_id):
    return tangent_map.joints(_ROBOTS[robot_id][0])


def _along(robot_id, q, gradient):
    """A gradient in the tangent space as one with respect to q (T(q)ᵀ g), q broadcast to its batch."""
    joints = _joints(robot_id)
    if joints is None:
        return gradient
    return tangent_map.to_coordinates(_OPS, joints, q.expand(gradient.shape[:-1] + q.shape[-1:]), gradient)


def _delta(robot_id, q, t):
    """q's tangent t as the kernels' derivatives take it: the tangent velocity T(q) t."""
    joints = _joints(robot_id)
    if joints is None:
        return t
    shape = torch.broadcast_shapes(q.shape, t.shape)
    return tangent_map.to_tangent(_OPS, joints, q.expand(shape), t.expand(shape))


def _vector_times(g, J):  # gᵀ J over a batch: (..., n) (..., n, m) → (..., m); matmul, a fifth of einsum's time
    return (g.unsqueeze(-2) @ J).squeeze(-2)


def _times(J, t):  # J t over a batch
    return (J @ t.unsqueeze(-1)).squeeze(-1)


def _matrix_times(g, T):  # Σ_ij g_ij T_ijk over a batch: (..., n, n) (..., n, n, m) → (..., m)
    return (g.flatten(-2).unsqueeze(-2) @ T.flatten(-3, -2)).squeeze(-2)


def _tensor_times(T, d):  # Σ_k T_ijk d_k over a batch: (..., n, n, m) (..., m) → (..., n, n)
    return (T @ d[..., None, :, None]).squeeze(-1)


def _reduce(grad, like):
    """A gradient of a state broadcast to the batch, summed back to the state's own shape."""
    while grad.dim() > like.dim():
        grad = grad.sum(0)
    for axis, size in enumerate(like.shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis, keepdim=True)
    return grad


def _tracking(states) -> str:
    """How the states are tracked: "none"; "reverse" (autograd's reverse mode alone); or
    "transforms" (forward mode's dual level, torch.func's wrappers, vmap's batches)."""
    if torch.autograd.forward_ad._current_level >= 0 or any(
            torch._C._functorch.is_functorch_wrapped_tensor(s) for s in states):
        return "transforms"
    return "reverse" if torch.is_grad_enabled() and any(s.requires_grad for s in states) else "none"


def _differentiable(name, backward, tangent):
    """``coriolis::name`` applied through a torch.autograd.Function: ``backward(ctx, *grads)``
    gives the states' gradients, ``tangent(robot_id, states, tangents)`` the outputs' tangents."""
    op, compute = getattr(torch.ops.coriolis, name), _COMPUTE[name]

    class Function(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(robot_id, *states):  # the operator: torch.compile traces it, vmap batches it by its rule
            return op(robot_id, *states)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.robot_id = inputs[0]
            ctx.save_for_backward(*inputs[1:])
            ctx.save_for_forward(*inputs[1:])

        @staticmethod
        def backward(ctx, *grads):
            return (None,) + tuple(backward(ctx.robot_id, ctx.saved_tensors, grads))

    class WithTangents(Function):
        @staticmethod
        def jvp(ctx, _, *tangents):
            states = ctx.saved_tensors
            tangents = [torch.zeros_like(s) if t is None else t for s, t in zip(states, tangents)]
            return tangent(ctx.robot_id, states, tangents)

    class ReverseOnly(torch.autograd.Function):  # ctx in forward: a quarter of the others' cost a call
        @staticmethod
        def forward(ctx, robot_id, *states):
            ctx.robot_id = robot_id
            ctx.save_for_backward(*states)
            return compute(robot_id, *states)

        @staticmethod
        def backward(ctx, *grads):
            return (None,) + tuple(backward(ctx.robot_id, ctx.saved_tensors, grads))

    for cls in (Function, WithTangents, ReverseOnly):
        cls.__name__ = cls.__qualname__ = name

    def apply(robot_id, *states):
        if not torch.compiler.is_compiling():
            tracking = _tracking(states)
            if tracking == "none":  # the operator's implementation, without the dispatcher's two
                return compute(robot_id, *states)  # passes into Python (~60 µs)
            return (ReverseOnly if tracking == "reverse" else WithTangents).apply(robot_id, *states)
        # torch.compile traces no custom jvp (reverse mode only there), nor a Function within a
        # Function's backward (which it traces without grad mode) or where nothing needs a
        # gradient: there, the operator itself
        if torch.is_grad_enabled() and any(s.requires_grad for s in states):
            return Function.apply(robot_id, *states)
        return op(robot_id, *states)

    return apply


def _refusing(name, message):
    """``coriolis::name`` whose derivatives raise StateError(message) in either mode."""
    def refuse(*_):
        raise StateError(message)

    return _differentiable(name, refuse, refuse)


_SECOND = "coriolis_cli.torch has no second derivatives of {} yet (τ's exist: differentiate inverse_dynamics twice)"
christoffel = _refusing("christoffel", "coriolis_cli.torch does not differentiate Γ, nor M and C twice (it would "
                        "need M's third derivatives); τ's second derivatives exist: differentiate inverse_dynamics twice")
regressor = _refusing("regressor", "coriolis_cli.torch does not differentiate the regressor Y in the states (Y θ is "
                      "differentiable in θ; for ∂τ/∂q take inverse_dynamics's)")
forward_jacobians = _refusing("forward_jacobians", _SECOND.format("q̈"))
gravity_jacobian = _refusing("gravity_jacobian", _SECOND.format("g"))
coriolis_derivatives = _refusing("coriolis_derivatives", _SECOND.format("C"))
product_jacobians = _refusing("product_jacobians", _SECOND.format("C v"))
momentum_jacobian = _refusing("momentum_jacobian", _SECOND.format("p"))
transpose_jacobians = _refusing("transpose_jacobians", _SECOND.format("Cᵀq̇"))
tau_second = _refusing("tau_second", _SECOND.format("τ beyond the second"))


def _mass_matrix_along(Gamma, delta):  # Σ_k ∂M/∂q_k δ_k, ∂M_ij/∂q_k = Γ_ijk + Γ_jik
    return _tensor_times(Gamma + Gamma.transpose(-3, -2), delta)


def _from_jacobians(jacobians):
    """The derivatives of a function of the states from ``jacobians(robot_id, *states)``, its
    Jacobian with respect to each state in turn (q's in the tangent space)."""

    def backward(robot_id, states, grads):
        pulled = [_vector_times(grads[0], J) for J in jacobians(robot_id, *states)]
        pulled[0] = _along(robot_id, states[0], pulled[0])
        return tuple(_reduce(g, s) for g, s in zip(pulled, states))

    def tangent(robot_id, states, tangents):
        steps = [_delta(robot_id, states[0], tangents[0]), *tangents[1:]]
        return sum(_times(J, t) for J, t in zip(jacobians(robot_id, *states), steps))

    return backward, tangent


def _tau_jacobians_derivatives():
    """∂τ/∂q, ∂τ/∂q̇ and M differentiated by τ's second-order tensors."""

    def tensors(robot_id, states):
        return tau_second(robot_id, *states)  # [i, j, k] = ∂/∂x_j (∂τ_i/∂y_k): T_qq, T_vv, T_qv, T_qa

    def backward(robot_id, states, grads):
        q, qd, qdd = states
        T_qq, T_vv, T_qv, T_qa = tensors(robot_id, states)
        g_dq, g_dv, g_M = grads
        # dq[i, k] moves with q_j by T_qq[i, j, k], with q̇_j by T_qv[i, k, j], with q̈_j by T_qa[i, k, j];
        # dv[i, k] with q_j by T_qv[i, j, k], with q̇_j by T_vv[i, j, k]; M[i, k] with q_j by T_qa[i, j, k]
        e = torch.einsum
        grad_q = (e("...ik,...ijk->...j", g_dq, T_qq) + e("...ik,...ijk->...j", g_dv, T_qv)
                  + e("...ik,...ijk->...j", g_M, T_qa))
        grad_v = e("...ik,...ikj->...j", g_dq, T_qv) + e("...ik,...ijk->...j", g_dv, T_vv)
        grad_a = e("...ik,...ikj->...j", g_dq, T_qa)
        return _reduce(_along(robot_id, q, grad_q), q), _reduce(grad_v, qd), _reduce(grad_a, qdd)

    def tangent(robot_id, states, tangents):
        T_qq, T_vv, T_qv, T_qa = tensors(robot_id, states)
        delta, tv, ta = _delta(robot_id, states[0], tangents[0]), tangents[1], tangents[2]
        e = torch.einsum
        d_dq = e("...ijk,...j->...ik", T_qq, delta) + e("...ikj,...j->...ik", T_qv, tv) + e("...ikj,...j->...ik", T_qa, ta)
        d_dv = e("...ijk,...j->...ik", T_qv, delta) + e("...ijk,...j->...ik", T_vv, tv)
        d_M = e("...ijk,...j->...ik", T_qa, delta)
        return d_dq, d_dv, d_M

    return backward, tangent


tau_jacobians = _differentiable("tau_jacobians", *_tau_jacobians_derivatives())
inverse_dynamics = _differentiable("inverse_dynamics", *_from_jacobians(tau_jacobians))
forward_dynamics = _differentiable("forward_dynamics", *_from_jacobians(forward_jacobians))


def _mass_matrix_backward(robot_id, states, grads):
    (q,) = states
    g = grads[0]
    # Σ_ij g_ij (Γ_ijk + Γ_jik) = Σ_ij (g + gᵀ)_ij Γ_ijk
    return (_reduce(_along(robot_id, q, _matrix_times(g + g.transpose(-1, -2), christoffel(robot_id, q))), q),)


mass_matrix = _differentiable("mass_matrix", _mass_matrix_backward, lambda robot_id, states, tangents: _mass_matrix_along(
    christoffel(robot_id, states[0]), _delta(robot_id, states[0], tangents[0])))
gravity_vector = _differentiable("gravity_vector", *_from_jacobians(
    lambda robot_id, q: (gravity_jacobian(robot_id, q),)))


def _coriolis_backward(robot_id, states, grads):
    q, qd = states
    g_M, g_Mdot, g_C = grads
    Gamma, dC_dq = christoffel(robot_id, q), coriolis_derivatives(robot_id, q, qd)
    g = g_C + g_Mdot + g_Mdot.transpose(-1, -2)  # Ṁ = C + Cᵀ; ∂C_ij/∂q̇_k = Γ_ijk
    grad_q = _matrix_times(g, dC_dq) + _matrix_times(g_M + g_M.transpose(-1, -2), Gamma)
    return _reduce(_along(robot_id, q, grad_q), q), _reduce(_matrix_times(g, Gamma), qd)


def _coriolis_tangent(robot_id, states, tangents):
    q, qd = states
    Gamma, dC_dq = christoffel(robot_id, q), coriolis_derivatives(robot_id, q, qd)
    delta = _delta(robot_id, q, tangents[0])
    dC = _tensor_times(dC_dq, delta) + _tensor_times(Gamma, tangents[1])
    return _mass_matrix_along(Gamma, delta), dC + dC.transpose(-1, -2), dC


coriolis_matrix = _differentiable("coriolis_matrix", _coriolis_backward, _coriolis_tangent)


coriolis_product = _differentiable("coriolis_product", *_from_jacobians(  # ∂(C v)/∂q, ∂(C v)/∂q̇ and C
    lambda robot_id, q, qd, v: (*product_jacobians(robot_id, q, qd, v), coriolis_matrix(robot_id, q, qd)[2])))
generalized_momentum = _differentiable("generalized_momentum", *_from_jacobians(
    lambda robot_id, q, qd: (momentum_jacobian(robot_id, q, qd), mass_matrix(robot_id, q))))
coriolis_transpose_velocity = _differentiable("coriolis_transpose_velocity", *_from_jacobians(transpose_jacobians))
