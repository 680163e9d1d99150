"""Joint types, the model side of the joint seam: codes, sizes, coordinate names, configurations.

What a joint type *is* lives here (pure NumPy, importable without the engine); how it moves in
compiled code lives in :mod:`coriolis_cli.engine.joints`. Adding a joint type touches these two
files and their tests. Conventions follow Pinocchio (``src/multibody/joint/joint-free-flyer.hpp``,
``joint-revolute.hpp``, ``joint-prismatic.hpp``): a free joint is ``q = [x, y, z, qx, qy, qz, qw]``
and ``ν = [v; ω]``, both in the child (base) frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .geometry import quat_to_matrix

# Codes stored in the model's packed arrays and read by the compiled kernels.
REVOLUTE, PRISMATIC, FREE = 0, 1, 2


@dataclass(frozen=True)
class JointType:
    code: int
    nq: int
    nv: int
    q_suffixes: tuple[str, ...] = ()  # names of the configuration coordinates (multi-DoF joints)
    v_suffixes: tuple[str, ...] = ()  # names of the velocity coordinates
    # For each velocity column, the index u of the unit vector e_u (angular-first, computation
    # frame) it equals, or -1. Lets the kernels pick entries instead of taking dot products.
    unit_columns: tuple[int, ...] = ()


JOINT_TYPES = {
    "revolute": JointType(REVOLUTE, 1, 1, unit_columns=(-1,)),
    "continuous": JointType(REVOLUTE, 1, 1, unit_columns=(-1,)),
    "prismatic": JointType(PRISMATIC, 1, 1, unit_columns=(-1,)),
    # the free joint is the root of a floating-base model, computed in the base frame, where its
    # motion subspace is the constant P = [[0, I3], [I3, 0]]: ν = [v; ω] picks e_3..e_5, e_0..e_2
    "free": JointType(FREE, 7, 6, ("x", "y", "z", "qx", "qy", "qz", "qw"), ("vx", "vy", "vz", "wx", "wy", "wz"),
                      (3, 4, 5, 0, 1, 2)),
}


def joint_type(name: str) -> JointType:
    return JOINT_TYPES[name]


def coordinate_names(joint_name: str, type_name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(configuration names, velocity names) of one joint."""
    jt = JOINT_TYPES[type_name]
    if not jt.q_suffixes:
        return (joint_name,), (joint_name,)
    return tuple(f"{joint_name}_{s}" for s in jt.q_suffixes), tuple(f"{joint_name}_{s}" for s in jt.v_suffixes)


def finite_limits(limits) -> tuple[float, float] | None:
    """(lower, upper) when both are given, finite and usable for drawing configurations."""
    if limits is None or limits.lower is None or limits.upper is None:
        return None
    lo, hi = float(limits.lower), float(limits.upper)
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo:
        return None
    return lo, hi


def neutral(type_name: str, limits, out: np.ndarray) -> None:
    """The neutral configuration of one joint into ``out`` (length nq): zero angle clipped into
    the limits, identity orientation."""
    if type_name == "free":
        out[:] = (0, 0, 0, 0, 0, 0, 1)
        return
    lim = finite_limits(limits)
    out[0] = 0.0 if lim is None else min(max(0.0, lim[0]), lim[1])


def random(type_name: str, limits, rng: np.random.Generator, out: np.ndarray) -> None:
    """A random configuration of one joint into ``out``: within the limits where both are given,
    else an angle in [0, 2π); free joints: position in [-1, 1]³ and a uniform unit quaternion."""
    if type_name == "free":
        out[0:3] = rng.uniform(-1.0, 1.0, 3)
        quat = rng.normal(size=4)
        out[3:7] = quat / np.linalg.norm(quat)
        return
    lim = finite_limits(limits) if type_name != "continuous" else None
    if lim is not None and lim[1] > lim[0]:
        out[0] = rng.uniform(lim[0], lim[1])
    else:
        out[0] = rng.uniform(0.0, 2.0 * np.pi)


# ---- integration of the configuration along a velocity ------------------------------------
def _quat_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ])


def _exp_se3(v, w):
    """Exponential of the body twist (v, ω): rotation as a quaternion and translation, body frame."""
    th = np.linalg.norm(w)
    W = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    if th < 1e-12:
        V = np.eye(3) + 0.5 * W
        quat = np.array([0.5 * w[0], 0.5 * w[1], 0.5 * w[2], 1.0])
    else:
        V = np.eye(3) + (1 - np.cos(th)) / th**2 * W + (th - np.sin(th)) / th**3 * W @ W
        s = np.sin(th / 2) / th
        quat = np.array([s * w[0], s * w[1], s * w[2], np.cos(th / 2)])
    return quat / np.linalg.norm(quat), V @ v


def integrate(type_name: str, q: np.ndarray, v: np.ndarray, t: float, out: np.ndarray) -> None:
    """q ⊕ (v t) for one joint (Pinocchio's ``integrate``): angles add; a free joint moves along
    the exponential map of its body twist (position in the base frame, quaternion on the right)."""
    if type_name == "free":
        quat = q[3:7]
        dq, dp = _exp_se3(v[0:3] * t, v[3:6] * t)
        out[0:3] = q[0:3] + quat_to_matrix(quat / np.linalg.norm(quat)) @ dp
        out[3:7] = _quat_mul(quat, dq)
        return
    out[0] = q[0] + v[0] * t
