"""MuJoCo as a peer: its M and bias forces in our coordinates (``MujocoPeer``, an oracle for
``verify`` and the tests), and its state of a robot loaded from MJCF, and back:
``to_mujoco(robot, q, v)`` and ``from_mujoco(robot, qpos, qvel)``.

MuJoCo's qpos holds quaternions w first and hinge and slide joints from qpos0 (``ref`` offsets);
its qvel holds a free joint's linear velocity in world axes. Ours: q with quaternions x, y, z, w
last and q = qpos − qpos0, and ν with a free joint's [ᴮv; ᴮω]. A robot in other coordinates
(closed loops, mimic joints enforced) converts through its tree: q̄ is read off q, and ν̄ solves
A ν̄ = ν, A evaluated by the engine.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelError, StateError
from ..model.geometry import quat_to_matrix
from ..model.coordinates import ReducedRobot
from ..model.tree import RobotModel
from ..model.mjcf import BALL, HINGE, SLIDE, compile_description, import_mujoco, layout, mujoco_state

STATES = "mujoco: states"


def _mujoco_model(robot):
    """(nq, nv, layout) of MuJoCo's model of the robot's MJCF file, made once per robot."""
    tree = getattr(robot, "full", robot)
    cached = robot.caches.get(STATES)
    if cached is None:
        desc = tree.description
        if desc.origin_format != "mjcf":
            raise ModelError(f"robot '{tree.name}' was not loaded from MJCF: it has no MuJoCo qpos to convert",
                             hint="load the .xml model")
        m = compile_description(desc)
        cached = robot.caches[STATES] = (m.nq, m.nv, layout(tree, m))
    return cached


def _coordinates(robot):
    from ..engine.coordinates import evaluation

    return evaluation(robot)


def to_mujoco(robot: RobotModel | ReducedRobot, q: ArrayLike, v: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Convert a state of a robot loaded from MJCF to MuJoCo's ``qpos`` and ``qvel``.

    Three conventions differ from MuJoCo's (they are Pinocchio's): a quaternion in q is
    (x, y, z, w), where MuJoCo writes w first; a hinge or slide joint's q is measured from
    MuJoCo's ``qpos0`` (its ``ref``), so ``qpos = q + qpos0``; and a free joint's velocity is its
    body-frame twist [ᴮv; ᴮω], where MuJoCo's ``qvel`` holds the linear velocity in world axes. A
    robot in other coordinates (closed loops, mimic joints enforced) is converted through its tree.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        A robot loaded from an MJCF file by [load_robot][coriolis_cli.load_robot].
    q : array_like of shape (nq,)
        Joint configuration [rad or m; quaternions as x, y, z, w].
    v : array_like of shape (nv,), optional
        Joint velocity [rad/s or m/s; a free joint's as [ᴮv; ᴮω]]; default zero.

    Returns
    -------
    qpos : ndarray of shape (model.nq,)
        MuJoCo's configuration of the model compiled from the same file.
    qvel : ndarray of shape (model.nv,)
        MuJoCo's velocity.

    Raises
    ------
    ModelError
        If the robot was not loaded from MJCF, or MuJoCo is not installed.
    StateError
        If ``q`` or ``v`` is not one state of the robot's sizes with finite entries.

    See Also
    --------
    - [`from_mujoco`][coriolis_cli.from_mujoco]: The inverse conversion.

    Examples
    --------
    >>> from pathlib import Path
    >>> import coriolis_cli as cc
    >>> # a free box with a hinged arm whose ref is 0.5 rad
    >>> _ = Path("box.xml").write_text(
    ...     '<mujoco><compiler angle="radian"/><worldbody>'
    ...     '<body name="box"><freejoint name="base"/>'
    ...     '<inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>'
    ...     '<body name="arm" pos="0 0 0.2">'
    ...     '<joint name="hinge" axis="0 1 0" ref="0.5"/>'
    ...     '<inertial pos="0 0 0.1" mass="0.5" diaginertia="0.001 0.001 0.001"/>'
    ...     '</body></body></worldbody></mujoco>')
    >>> robot = cc.load_robot("box.xml")
    >>> q = robot.neutral_configuration()
    >>> q[7] = 0.2  # the hinge, from its ref
    >>> qpos, qvel = cc.to_mujoco(robot, q)
    >>> # the quaternion w first, the hinge at ref + 0.2
    >>> [round(float(x), 6) for x in qpos]
    [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.7]
    """
    nq, nv, lay = _mujoco_model(robot)
    from ..engine import single_state

    q, v = single_state("to_mujoco", robot, q, ("v", np.zeros(robot.nv) if v is None else v))
    if getattr(robot, "is_reduced", False):
        ev = _coordinates(robot)
        q, v = ev.full_configuration(q), ev.jacobian(q) @ v
    qpos, qvel, _, _ = mujoco_state(lay, q, v, nq, nv)
    return qpos, qvel


def from_mujoco(robot: RobotModel | ReducedRobot, qpos: ArrayLike, qvel: ArrayLike | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """Convert MuJoCo's ``qpos`` and ``qvel`` to a state of a robot loaded from MJCF.

    The inverse of [to_mujoco][coriolis_cli.to_mujoco]: quaternions are reordered to (x, y, z, w),
    hinge and slide joints measured from ``qpos0``, and a free joint's linear velocity turned from
    world axes to its body frame. For a robot in other coordinates q̄ is read off the tree's q, and
    the velocity is the least-squares solution of A(q̄) v̄ = v.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        A robot loaded from an MJCF file by [load_robot][coriolis_cli.load_robot].
    qpos : array_like of shape (model.nq,)
        MuJoCo's configuration of the model compiled from the same file.
    qvel : array_like of shape (model.nv,), optional
        MuJoCo's velocity; default zero.

    Returns
    -------
    q : ndarray of shape (nq,)
        Joint configuration [rad or m; quaternions as x, y, z, w].
    v : ndarray of shape (nv,)
        Joint velocity [rad/s or m/s; a free joint's as [ᴮv; ᴮω]].

    Raises
    ------
    ModelError
        If the robot was not loaded from MJCF, or MuJoCo is not installed.
    StateError
        If ``qpos`` and ``qvel`` do not have MuJoCo's sizes, or hold a non-finite entry.

    See Also
    --------
    - [`to_mujoco`][coriolis_cli.to_mujoco]: The inverse conversion.

    Examples
    --------
    >>> from pathlib import Path
    >>> import coriolis_cli as cc
    >>> # a free box with a hinged arm whose ref is 0.5 rad
    >>> _ = Path("box.xml").write_text(
    ...     '<mujoco><compiler angle="radian"/><worldbody>'
    ...     '<body name="box"><freejoint name="base"/>'
    ...     '<inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>'
    ...     '<body name="arm" pos="0 0 0.2">'
    ...     '<joint name="hinge" axis="0 1 0" ref="0.5"/>'
    ...     '<inertial pos="0 0 0.1" mass="0.5" diaginertia="0.001 0.001 0.001"/>'
    ...     '</body></body></worldbody></mujoco>')
    >>> robot = cc.load_robot("box.xml")
    >>> # 1 m up, quaternion w first, the hinge at its ref
    >>> qpos = [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.5]
    >>> q, v = cc.from_mujoco(robot, qpos)
    >>> [round(float(x), 6) for x in q]
    [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    """
    nq, nv, lay = _mujoco_model(robot)
    qpos = np.asarray(qpos, dtype=float)
    qvel = np.zeros(nv) if qvel is None else np.asarray(qvel, dtype=float)
    if qpos.shape != (nq,) or qvel.shape != (nv,):
        raise StateError(f"MuJoCo's state of this model is qpos ({nq},) and qvel ({nv},), got {qpos.shape} and {qvel.shape}")
    if not (np.all(np.isfinite(qpos)) and np.all(np.isfinite(qvel))):
        raise StateError("qpos and qvel must be finite")
    tree = getattr(robot, "full", robot)
    q, v = np.zeros(tree.nq), np.zeros(tree.nv)
    for kind, qs, vs, qa, da, q0 in lay.joints:
        if kind in (HINGE, SLIDE):
            q[qs], v[vs] = qpos[qa] - q0, qvel[da]
        elif kind == BALL:
            w, x, y, z = qpos[qa : qa + 4]
            q[qs : qs + 4], v[vs : vs + 3] = (x, y, z, w), qvel[da : da + 3]
        else:
            w, x, y, z = qpos[qa + 3 : qa + 7]
            R = quat_to_matrix(np.array([x, y, z, w]) / np.linalg.norm([x, y, z, w]))
            q[qs : qs + 3], q[qs + 3 : qs + 7] = qpos[qa : qa + 3], (x, y, z, w)
            v[vs : vs + 3], v[vs + 3 : vs + 6] = R.T @ qvel[da : da + 3], qvel[da + 3 : da + 6]
    if getattr(robot, "is_reduced", False):
        qbar = robot.map.reduce_configuration(q)
        return qbar, np.linalg.lstsq(_coordinates(robot).jacobian(qbar), v, rcond=None)[0]
    return q, v


class MujocoPeer:
    """MuJoCo as a reference: M (mj_fullM) and the bias C q̇ + g (qfrc_bias) of the model an MJCF
    robot came from, in our coordinates (M = T⁻ᵀ M_mj T⁻¹ where ν = T qvel; see mujoco_state)."""

    def __init__(self, robot):
        mujoco = import_mujoco()
        self.m = compile_description(robot.description)
        self.mujoco = mujoco
        self.d = mujoco.MjData(self.m)
        self.layout = layout(robot, self.m)

    def mass_and_bias(self, q, v):
        """(T, M_mj, bias_mj, Ṫ qvel) at our (q, ν), on MuJoCo's DoF that are ours (a locked
        joint is held at its value and its rows left out)."""
        qpos, qvel, T, acc = mujoco_state(self.layout, q, v, self.m.nq, self.m.nv)
        self.d.qpos[:], self.d.qvel[:] = qpos, qvel
        self.mujoco.mj_forward(self.m, self.d)
        M = np.zeros((self.m.nv, self.m.nv))
        self.mujoco.mj_fullM(self.m, self.d, M)
        k = self.layout.dofs
        return T[:, k], M[np.ix_(k, k)], self.d.qfrc_bias[k].copy(), acc


def mujoco_available() -> bool:
    try:
        import mujoco  # noqa: F401
    except Exception:  # noqa: BLE001 - any import failure means the peer is absent
        return False
    return True
