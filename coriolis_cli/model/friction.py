"""Joint friction as robot files give it (URDF ``<dynamics damping friction>``, MJCF ``damping`` and
``frictionloss``, YAML ``friction:``, or what ``coriolis identify --friction`` wrote): the torque
τ_f = b q̇ + c sign(q̇) that a 1-DoF joint's drive spends on friction, so that the rigid bodies
receive τ − τ_f.

Below about STATIC_SPEED a joint is at rest as far as its dry friction goes: static friction takes
any value in [−c, c] there, which no model of q̇ can tell, and sign(q̇) of a measured velocity
would flip with its noise. So the Coulomb term is c tanh(q̇ / STATIC_SPEED): c sign(q̇) in motion,
0 at rest; the observers allow for the static friction they cannot know (observers.observe).
Identification fits c against sign(q̇), which differs only below that speed."""

from __future__ import annotations

import numpy as np

from .description import listed

STATIC_SPEED = 0.02  # rad/s or m/s: below it, the joint's dry friction is static


def has_friction(robot) -> bool:
    return bool(np.any(getattr(robot, "full", robot).joint_friction))


def friction_torque(robot, qd) -> np.ndarray:
    """τ_f at joint velocities ``qd`` (nv,) or (K, nv) of the robot's tree (Coulomb smoothed below
    STATIC_SPEED, see the module)."""
    F = getattr(robot, "full", robot).joint_friction
    qd = np.asarray(qd, dtype=float)
    return qd * F[:, 0] + np.tanh(qd / STATIC_SPEED) * F[:, 1]


def friction_note(robot, what: str) -> str:
    """One line: which joints' friction ``what`` (the command's use of it) includes."""
    tree = getattr(robot, "full", robot)
    F = tree.joint_friction
    joints = [tree.dof_names[k] for k in np.flatnonzero(np.any(F != 0, axis=1))]
    kinds = " and ".join(k for k, col in (("viscous", 0), ("Coulomb", 1)) if np.any(F[:, col]))
    return f"{what} the joints' {kinds} friction from the robot file ({listed(joints, 4)}); --no-friction leaves it out"


def with_joint_friction(desc, friction: dict):
    """The description with ``friction`` ({joint: (viscous, Coulomb)}) on those joints."""
    from dataclasses import replace

    return replace(desc, joints=tuple(replace(j, friction=tuple(friction[j.name])) if j.name in friction else j
                                      for j in desc.joints))
