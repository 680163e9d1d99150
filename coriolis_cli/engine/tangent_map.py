"""The map T(q) from a coordinate velocity q̇ (..., nq) to the velocity in the tangent space
(..., nv) that moves q as it does, and its transpose, for the JAX and PyTorch calling layers: the
analytic derivatives are with respect to the tangent space, a framework's q keeps its nq entries.
Written once over the few array operations each framework supplies (``ArrayOps``).

T is model.joints.integrate's exponential map read backwards, joint by joint, through the
kernels' normalization of quaternions and (cos, sin) pairs (so that a q̇ along q itself moves
nothing). A free joint: v = Rᵀṗ, ω = 2 Im(q̄ ⊗ q̇)/|q|²; a spherical joint: ω alone; a planar
joint: (v_x, v_y) = R(θ)ᵀṗ, ω = (c ṡ − s ċ)/(c² + s²); any other joint: its own entry. Both maps
are slices, products and concatenations of the framework's arrays, so that its autodiff can
differentiate them again."""

from __future__ import annotations

from typing import Callable, NamedTuple


class ArrayOps(NamedTuple):
    """A framework's operations on the last axis: cross product, concatenation, sum and norm
    (keeping the axis), and hypot."""

    cross: Callable
    concatenate: Callable
    sum: Callable
    norm: Callable
    hypot: Callable


def joints(robot) -> list[tuple[str, int, int]] | None:
    """(type, first q, first v) of each joint, in v's order; None where q are coordinates."""
    if robot.nq == robot.nv:
        return None
    found = [(body.joint.type, int(qs), int(vs)) for body, qs, vs in zip(robot.bodies, robot.q_start, robot.v_start)]
    assert all(a[2] < b[2] for a, b in zip(found, found[1:]))  # the pieces below concatenate in v's order
    return found


def _rotate(ops, quat, x, transposed):
    """R(q/|q|) x, or Rᵀ x, for quaternions (x, y, z, w)."""
    unit = quat / ops.norm(quat)
    u, w = unit[..., :3], unit[..., 3:]
    sign = -1.0 if transposed else 1.0
    return x * (w * w - ops.sum(u * u)) + 2.0 * u * ops.sum(u * x) + sign * 2.0 * w * ops.cross(u, x)


def to_tangent(ops: ArrayOps, joints, q, qdot):
    """T(q) q̇: the tangent velocity (..., nv) that moves q (..., nq) as q̇ (..., nq) does."""

    def angular(quat, rate):  # 2 Im(q̄ ⊗ q̇)/|q|²
        u, w = quat[..., :3], quat[..., 3:]
        du, dw = rate[..., :3], rate[..., 3:]
        return 2.0 * (w * du - dw * u - ops.cross(u, du)) / ops.sum(quat * quat)

    pieces = []
    for kind, qs, vs in joints:
        if kind in ("free", "floating"):
            quat = q[..., qs + 3:qs + 7]
            pieces += [_rotate(ops, quat, qdot[..., qs:qs + 3], True), angular(quat, qdot[..., qs + 3:qs + 7])]
        elif kind == "spherical":
            pieces.append(angular(q[..., qs:qs + 4], qdot[..., qs:qs + 4]))
        elif kind == "planar":  # (x, y, cos θ, sin θ)
            c, s = q[..., qs + 2:qs + 3], q[..., qs + 3:qs + 4]
            r = ops.hypot(c, s)
            dx, dy, dc, ds = (qdot[..., qs + k:qs + k + 1] for k in range(4))
            pieces += [(c * dx + s * dy) / r, (-s * dx + c * dy) / r, (c * ds - s * dc) / (r * r)]
        else:
            pieces.append(qdot[..., qs:qs + 1])
    return ops.concatenate(pieces)


def to_coordinates(ops: ArrayOps, joints, q, g):
    """T(q)ᵀ g: the gradient with respect to q (..., nq) of what has gradient g (..., nv) with
    respect to the tangent velocity."""

    def angular(quat, g_w):  # (2/|q|²) Eᵀ g, E = [w 1 − u×, −u]
        u, w = quat[..., :3], quat[..., 3:]
        scale = 2.0 / ops.sum(quat * quat)
        return ops.concatenate([scale * (w * g_w + ops.cross(u, g_w)), -scale * ops.sum(u * g_w)])

    pieces = []
    for kind, qs, vs in joints:
        if kind in ("free", "floating"):
            quat = q[..., qs + 3:qs + 7]
            pieces += [_rotate(ops, quat, g[..., vs:vs + 3], False), angular(quat, g[..., vs + 3:vs + 6])]
        elif kind == "spherical":
            pieces.append(angular(q[..., qs:qs + 4], g[..., vs:vs + 3]))
        elif kind == "planar":
            c, s = q[..., qs + 2:qs + 3], q[..., qs + 3:qs + 4]
            r = ops.hypot(c, s)
            gx, gy, gw = g[..., vs:vs + 1], g[..., vs + 1:vs + 2], g[..., vs + 2:vs + 3]
            pieces += [(c * gx - s * gy) / r, (s * gx + c * gy) / r, -s * gw / (r * r), c * gw / (r * r)]
        else:
            pieces.append(g[..., vs:vs + 1])
    return ops.concatenate(pieces)
