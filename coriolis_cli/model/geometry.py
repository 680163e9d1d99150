"""Rotation helpers used by the model layer (rpy, axis-angle, quaternions)."""

from __future__ import annotations

import numpy as np


def rpy_to_matrix(rpy) -> np.ndarray:
    """URDF convention: R = Rz(yaw) @ Ry(pitch) @ Rx(roll)."""
    r, p, y = (float(a) for a in rpy)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def frame_rotation(rpy, rotation=None) -> np.ndarray:
    """A frame's rotation: ``rotation`` (9 numbers, row by row) when a format gives it exactly
    (MJCF's quaternions), else from URDF's ``rpy``. RPY is ill-conditioned near ±90° pitch, so a
    rotation read as a matrix or quaternion is never passed through it."""
    if rotation is not None:
        return np.array(rotation, dtype=float).reshape(3, 3)
    return rpy_to_matrix(rpy)


def rotation_tuple(R) -> tuple[float, ...]:
    return tuple(float(x) for x in np.asarray(R, dtype=float).ravel())


def matrix_to_rpy(R: np.ndarray) -> np.ndarray:
    """Inverse of :func:`rpy_to_matrix` (pitch in [-pi/2, pi/2])."""
    sp, cp = -R[2, 0], np.hypot(R[0, 0], R[1, 0])
    if cp < 1e-12:  # pitch ±π/2: only roll − yaw (or their sum) is defined; put it all in yaw
        pitch = np.copysign(np.pi / 2, sp)
        roll = 0.0
        yaw = np.arctan2(-R[0, 1], R[1, 1])
    else:
        pitch = np.arctan2(sp, cp)  # arcsin(sp) loses digits near ±π/2
        roll = np.arctan2(R[2, 1], R[2, 2])
        yaw = np.arctan2(R[1, 0], R[0, 0])
    return np.array([roll, pitch, yaw])


def axis_angle(axis, angle: float) -> np.ndarray:
    """Rodrigues' formula for a unit axis."""
    x, y, z = axis
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    return np.array(
        [
            [t * x * x + c, t * x * y - s * z, t * x * z + s * y],
            [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
            [t * x * z - s * y, t * y * z + s * x, t * z * z + c],
        ]
    )


def quat_to_matrix(quat) -> np.ndarray:
    """Unit quaternion (x, y, z, w), scalar last as in Pinocchio's free-flyer, to a rotation."""
    x, y, z, w = quat
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_quaternion(R) -> np.ndarray:
    """The unit quaternion (x, y, z, w) of a rotation, from its largest component (the core's
    matrix_quaternion in engine/core/closure.hpp)."""
    t = R[0, 0] + R[1, 1] + R[2, 2]
    if t >= max(R[0, 0], R[1, 1], R[2, 2]):
        w = 0.5 * np.sqrt(1.0 + t)
        return np.array([(R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w), (R[1, 0] - R[0, 1]) / (4 * w), w])
    if R[0, 0] >= R[1, 1] and R[0, 0] >= R[2, 2]:
        x = 0.5 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        return np.array([x, (R[0, 1] + R[1, 0]) / (4 * x), (R[0, 2] + R[2, 0]) / (4 * x), (R[2, 1] - R[1, 2]) / (4 * x)])
    if R[1, 1] >= R[2, 2]:
        y = 0.5 * np.sqrt(1.0 - R[0, 0] + R[1, 1] - R[2, 2])
        return np.array([(R[0, 1] + R[1, 0]) / (4 * y), y, (R[1, 2] + R[2, 1]) / (4 * y), (R[0, 2] - R[2, 0]) / (4 * y)])
    z = 0.5 * np.sqrt(1.0 - R[0, 0] - R[1, 1] + R[2, 2])
    return np.array([(R[0, 2] + R[2, 0]) / (4 * z), (R[1, 2] + R[2, 1]) / (4 * z), z, (R[1, 0] - R[0, 1]) / (4 * z)])


def skew(v) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def inertia_from_6(ixx, ixy, ixz, iyy, iyz, izz) -> np.ndarray:
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)
