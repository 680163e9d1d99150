"""Joint types, the model side of the joint seam: codes, sizes, coordinate names, configurations.

What a joint type *is* lives here (pure NumPy, importable without the engine); how it moves in
compiled code lives in the engine's core (`engine/core/joints.hpp`). Adding a joint type touches these two
files and their tests. Conventions follow Pinocchio (``src/multibody/joint/joint-free-flyer.hpp``,
``joint-revolute.hpp``, ``joint-prismatic.hpp``): a free joint is ``q = [x, y, z, qx, qy, qz, qw]``
and ``ν = [v; ω]``, both in the child (base) frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .geometry import quat_to_matrix

# Codes stored in the model's packed arrays and read by the compiled kernels. FREE is a free joint
# that is the model's only root, computed in the base frame (its motion subspace is then made of
# unit vectors); FLOATING is a free joint anywhere else.
REVOLUTE, PRISMATIC, FREE, SPHERICAL, PLANAR, FLOATING = 0, 1, 2, 3, 4, 5
# Multi-DoF joints whose configuration holds a unit quaternion (x, y, z, w), at this offset in q,
# and the planar joint's unit (cos θ, sin θ) pair.
QUATERNION_OFFSET = {FREE: 3, FLOATING: 3, SPHERICAL: 0}
PLANAR_ANGLE_OFFSET = 2


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
    # URDF's floating joint is Pinocchio's free-flyer wherever it stands
    "floating": JointType(FREE, 7, 6, ("x", "y", "z", "qx", "qy", "qz", "qw"), ("vx", "vy", "vz", "wx", "wy", "wz"),
                          (3, 4, 5, 0, 1, 2)),
    # Pinocchio's JointModelSpherical: q a unit quaternion, ν = ω in the child frame
    "spherical": JointType(SPHERICAL, 4, 3, ("qx", "qy", "qz", "qw"), ("wx", "wy", "wz"), (-1, -1, -1)),
    # Pinocchio's JointModelPlanar: the xy plane of the joint frame, q = (x, y, cos θ, sin θ),
    # ν = (vx, vy, ω) in the child frame
    "planar": JointType(PLANAR, 4, 3, ("x", "y", "cos", "sin"), ("vx", "vy", "wz"), (-1, -1, -1)),
}
MULTI_DOF = ("free", "floating", "spherical", "planar")


def code_at(type_name: str, sole_root: bool) -> tuple[int, tuple[int, ...]]:
    """(code, unit columns) of a joint: a free joint is computed in the base frame only where it is
    the model's only root; anywhere else it is FLOATING, computed like the other multi-DoF joints."""
    jt = JOINT_TYPES[type_name]
    if jt.code == FREE and not sole_root:
        return FLOATING, (-1,) * jt.nv
    return jt.code, jt.unit_columns


def joint_type(name: str) -> JointType:
    return JOINT_TYPES[name]


def coordinate_names(joint_name: str, type_name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(configuration names, velocity names) of one joint."""
    jt = JOINT_TYPES[type_name]
    if not jt.q_suffixes:
        return (joint_name,), (joint_name,)
    return tuple(f"{joint_name}_{s}" for s in jt.q_suffixes), tuple(f"{joint_name}_{s}" for s in jt.v_suffixes)


# Limits wider than this are placeholders (URDFs write ±1e16 for "none"), not a range to draw from.
SENSIBLE_RANGE = 1e3


def finite_limits(limits) -> tuple[float, float] | None:
    """(lower, upper) when both are given, finite, ordered and of a sensible size."""
    if limits is None or limits.lower is None or limits.upper is None:
        return None
    lo, hi = float(limits.lower), float(limits.upper)
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo or max(abs(lo), abs(hi)) > SENSIBLE_RANGE:
        return None
    return lo, hi


def neutral(type_name: str, limits, out: np.ndarray) -> None:
    """The neutral configuration of one joint into ``out`` (length nq): zero angle clipped into
    the limits, identity orientation."""
    if type_name in ("free", "floating"):
        out[:] = (0, 0, 0, 0, 0, 0, 1)
        return
    if type_name == "spherical":
        out[:] = (0, 0, 0, 1)
        return
    if type_name == "planar":
        out[:] = (0, 0, 1, 0)
        return
    lim = finite_limits(limits)
    out[0] = 0.0 if lim is None else min(max(0.0, lim[0]), lim[1])


def _unit_quaternion(rng):
    quat = rng.normal(size=4)
    return quat / np.linalg.norm(quat)


def random(type_name: str, limits, rng: np.random.Generator, out: np.ndarray) -> None:
    """A random configuration of one joint into ``out``: within the limits where both are given
    and sensible (see finite_limits), else an angle in [0, 2π); positions of free and planar joints
    in [-1, 1], orientations uniform."""
    if type_name in ("free", "floating"):
        out[0:3] = rng.uniform(-1.0, 1.0, 3)
        out[3:7] = _unit_quaternion(rng)
        return
    if type_name == "spherical":
        out[:] = _unit_quaternion(rng)
        return
    if type_name == "planar":
        theta = rng.uniform(0.0, 2.0 * np.pi)
        out[:] = (*rng.uniform(-1.0, 1.0, 2), np.cos(theta), np.sin(theta))
        return
    if type_name == "continuous" or limits is None or limits.lower is None:
        out[0] = rng.uniform(0.0, 2.0 * np.pi)  # no limits: the paper's range
        return
    lim = finite_limits(limits)
    if lim is None:
        out[0] = rng.uniform(-np.pi, np.pi)  # placeholder or partial limits: a sensible range
    elif lim[1] > lim[0]:
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
    """q ⊕ (v t) for one joint (Pinocchio's ``integrate``): angles add; free, spherical and planar
    joints move along the exponential map of their velocity in the child frame (position in the
    parent frame, rotation composed on the right)."""
    if type_name in ("free", "floating"):
        quat = q[3:7] / np.linalg.norm(q[3:7])
        dq, dp = _exp_se3(v[0:3] * t, v[3:6] * t)
        out[0:3] = q[0:3] + quat_to_matrix(quat) @ dp
        out[3:7] = _quat_mul(quat, dq)
        return
    if type_name == "spherical":
        quat = q / np.linalg.norm(q)
        dq, _ = _exp_se3(np.zeros(3), v * t)
        out[:] = _quat_mul(quat, dq)
        return
    if type_name == "planar":
        c, s = q[2:4] / np.hypot(q[2], q[3])
        dq, dp = _exp_se3(np.array([v[0], v[1], 0.0]) * t, np.array([0.0, 0.0, v[2]]) * t)
        dth = 2.0 * np.arctan2(dq[2], dq[3])
        R = np.array([[c, -s], [s, c]])
        out[0:2] = q[0:2] + R @ dp[0:2]
        out[2:4] = c * np.cos(dth) - s * np.sin(dth), s * np.cos(dth) + c * np.sin(dth)
        return
    out[0] = q[0] + v[0] * t
