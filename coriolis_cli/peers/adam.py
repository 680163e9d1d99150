"""ADAM (``adam-robotics``), through its JAX and PyTorch backends, as a peer of coriolis_cli.jax and
coriolis_cli.torch in ``coriolis bench --jax/--torch``: M, the bias h = C q̇ + g and τ = M q̈ + h
of the same robot (the URDF text ``to_urdf`` writes for it, gravity as ours), in our coordinates and
the body-fixed base velocity (ADAM's default is the mixed one). ADAM's robots float: a fixed base
is its base held at the identity, the joints' block taken. ADAM has no inverse dynamics with
accelerations, so τ is its M q̈ plus its bias, as its users compute it."""

from __future__ import annotations

import dataclasses
import importlib

from ..model.tree import RobotModel
from ..model.urdf import to_urdf


def available(framework: str) -> bool:
    try:
        importlib.import_module("adam.jax" if framework == "jax" else "adam.pytorch")
    except Exception:  # noqa: BLE001 - any import failure means the peer is absent
        return False
    return True


def _joint_names(robot: RobotModel) -> list[str]:
    return list(robot.dof_names[6:] if robot.floating_base else robot.dof_names)


def functions(robot: RobotModel, framework: str, gravity) -> dict:
    """{"M": M(q), "bias": h(q, v), "tau": τ(q, v, a)} on the framework's arrays of one state or a
    batch (..., ·), our q (a free joint's (x, y, z, qx, qy, qz, qw)) and ν."""
    from adam import Representations

    if framework == "jax":
        import jax.numpy as xp
        from adam.jax import KinDynComputations

        _allow_vmap()
        g = xp.array([*gravity, 0.0, 0.0, 0.0])
        kd = KinDynComputations(to_urdf(robot.description), _joint_names(robot), gravity=g)
        stack, zeros, norm = xp.stack, xp.zeros, lambda x: xp.linalg.norm(x, axis=-1, keepdims=True)
        identity = lambda batch: xp.broadcast_to(xp.eye(4), batch + (4, 4))  # noqa: E731
        matvec = lambda A, x: xp.einsum("...ij,...j->...i", A, x)  # noqa: E731
    else:
        import torch
        from adam.pytorch import KinDynComputations

        g = torch.tensor([*gravity, 0.0, 0.0, 0.0], dtype=torch.float64)
        kd = KinDynComputations(to_urdf(robot.description), _joint_names(robot), dtype=torch.float64,
                                gravity=g)
        stack = torch.stack
        zeros = lambda shape: torch.zeros(shape, dtype=torch.float64)  # noqa: E731
        norm = lambda x: x.norm(dim=-1, keepdim=True)  # noqa: E731
        identity = lambda batch: torch.eye(4, dtype=torch.float64).expand(batch + (4, 4))  # noqa: E731
        matvec = lambda A, x: torch.einsum("...ij,...j->...i", A, x)  # noqa: E731
    kd.set_frame_velocity_representation(Representations.BODY_FIXED_REPRESENTATION)

    def pose(q):  # the base's 4x4 transform from our (x, y, z, qx, qy, qz, qw)
        x, y, z, w = (q[..., 3 + k] for k in range(4))
        s = 1.0 / norm(q[..., 3:7])[..., 0] ** 2
        one, nil = x * 0 + 1, x * 0
        rows = [[1 - 2 * s * (y * y + z * z), 2 * s * (x * y - z * w), 2 * s * (x * z + y * w), q[..., 0]],
                [2 * s * (x * y + z * w), 1 - 2 * s * (x * x + z * z), 2 * s * (y * z - x * w), q[..., 1]],
                [2 * s * (x * z - y * w), 2 * s * (y * z + x * w), 1 - 2 * s * (x * x + y * y), q[..., 2]],
                [nil, nil, nil, one]]
        return stack([stack(r, -1) for r in rows], -2)

    if robot.floating_base:
        def M(q):
            return kd.mass_matrix(pose(q), q[..., 7:])

        def bias(q, v):
            return kd.bias_force(pose(q), q[..., 7:], v[..., :6], v[..., 6:])
    else:
        def M(q):
            return kd.mass_matrix(identity(q.shape[:-1]), q)[..., 6:, 6:]

        def bias(q, v):
            return kd.bias_force(identity(q.shape[:-1]), q, zeros(q.shape[:-1] + (6,)), v)[..., 6:]

    def tau(q, v, a):
        return matvec(M(q), a) + bias(q, v)

    return {"M": M, "bias": bias, "tau": tau}


def _allow_vmap() -> None:
    """ADAM 0.5 passes its reference array's device to ``jnp.asarray(..., device=...)``, which JAX
    0.7 and later refuse under vmap ('SingleDeviceSharding' object has no attribute 'spec'): the
    device is dropped (every array here is on the CPU)."""
    import adam.jax.computations as computations

    if getattr(computations, "_coriolis_vmap", False) or not hasattr(computations, "spec_from_reference"):
        return
    original = computations.spec_from_reference
    computations.spec_from_reference = lambda reference: dataclasses.replace(original(reference), device=None)
    computations._coriolis_vmap = True
