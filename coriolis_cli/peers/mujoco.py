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

from ..errors import ModelError
from ..model.geometry import quat_to_matrix
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


def to_mujoco(robot, q, v=None) -> tuple[np.ndarray, np.ndarray]:
    """(qpos, qvel) of MuJoCo's model at our (q, ν) (ν default zero)."""
    nq, nv, lay = _mujoco_model(robot)
    q = np.asarray(q, dtype=float)
    v = np.zeros(robot.nv) if v is None else np.asarray(v, dtype=float)
    if getattr(robot, "is_reduced", False):
        ev = _coordinates(robot)
        q, v = ev.full_configuration(q), ev.jacobian(q) @ v
    qpos, qvel, _, _ = mujoco_state(lay, q, v, nq, nv)
    return qpos, qvel


def from_mujoco(robot, qpos, qvel=None) -> tuple[np.ndarray, np.ndarray]:
    """(q, ν) at MuJoCo's (qpos, qvel) (qvel default zero)."""
    nq, nv, lay = _mujoco_model(robot)
    qpos = np.asarray(qpos, dtype=float)
    qvel = np.zeros(nv) if qvel is None else np.asarray(qvel, dtype=float)
    if qpos.shape != (nq,) or qvel.shape != (nv,):
        raise ModelError(f"MuJoCo's state of this model is qpos ({nq},) and qvel ({nv},), got {qpos.shape} and {qvel.shape}")
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
