"""Pinocchio (the ``pin`` package) as an external oracle: the same robot, states mapped by joint name.

Pinocchio is linear-first and parametrizes continuous joints by (cos θ, sin θ); its free-flyer uses
the same q = [x, y, z, qx, qy, qz, qw] and ν = [v; ω] in the base frame as we do.
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import replace

import numpy as np

from ..model.tree import RobotModel
from ..model.urdf import to_urdf


def available() -> bool:
    try:
        import pinocchio  # noqa: F401
    except Exception:  # noqa: BLE001 - any import failure means the peer is absent
        return False
    return True


def _to_origin(model) -> None:
    """Translate the whole robot so that its first root joint is at the world origin. Pinocchio
    computes in the world frame, which loses digits far from the origin (a Panda mounted 1 km away:
    ∂τ/∂q̇ off by 1e-9 relative); joint-space M, C, τ and their derivatives do not change under a
    translation of the whole robot (gravity is uniform), so the reference stays exact."""
    roots = [j for j in range(1, model.njoints) if model.parents[j] == 0]
    if not roots:
        return
    shift = np.array(model.jointPlacements[roots[0]].translation)
    for j in roots:
        placement = model.jointPlacements[j]
        placement.translation = np.array(placement.translation) - shift
        model.jointPlacements[j] = placement


@contextlib.contextmanager
def _quiet_stderr():
    """Silence file descriptor 2 (not just sys.stderr) for the duration."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _build_directly(pin, robot: RobotModel):
    """Pinocchio's model from our kinematic tree, joint by joint (for joint types URDF lacks)."""
    model = pin.Model()
    ids = []
    for b in robot.bodies:
        t = b.joint.type
        if t in ("free", "floating"):
            jm = pin.JointModelFreeFlyer()
        elif t == "spherical":
            jm = pin.JointModelSpherical()
        elif t == "planar":
            jm = pin.JointModelPlanar()
        elif t == "prismatic":
            jm = pin.JointModelPrismaticUnaligned(np.asarray(b.joint.axis, float))
        else:
            jm = pin.JointModelRevoluteUnaligned(np.asarray(b.joint.axis, float))
        parent = 0 if b.parent < 0 else ids[b.parent]
        placement = pin.SE3(np.asarray(b.joint.rotation, float), np.asarray(b.joint.translation, float))
        jid = model.addJoint(parent, jm, placement, b.joint.name)
        model.appendBodyToJoint(jid, pin.Inertia(b.mass, np.asarray(b.com, float), np.asarray(b.inertia, float)), pin.SE3.Identity())
        ids.append(jid)
    return model


class PeerUnavailable(RuntimeError):
    """Pinocchio cannot model this robot as we do; the message says why."""


class PinocchioPeer:
    """Pinocchio's model and data for one of our robots, with the index maps between the two."""

    def __init__(self, robot: RobotModel):
        import pinocchio as pin

        self.pin = pin
        self.robot = robot
        self.model = None
        self._point_masses = []  # (Pinocchio joint, inertia) standing for free joints' armature
        if not any(b.joint.type == "spherical" for b in robot.bodies):  # URDF has no spherical joint
            # through Pinocchio's own URDF parser: fixed joints merged by it, not by us
            # the spanning tree: a robot with closed loops is compared in its tree coordinates
            # (mimic joints are DoF of their own there, as Pinocchio's parser loads them)
            desc = robot.description
            xml = to_urdf(replace(desc, loops=(), independent=(), guess=(),
                                  joints=tuple(replace(j, mimic=None) for j in desc.joints)))
            try:
                with _quiet_stderr():  # urdfdom prints its refusals from C++
                    if robot.floating_base:
                        self.model = pin.buildModelFromXML(xml, pin.JointModelFreeFlyer())
                    else:
                        self.model = pin.buildModelFromXML(xml)
            except (ValueError, RuntimeError):  # urdfdom is stricter (e.g. revolute joints need <limit>)
                self.model = None
        self.route = "urdf" if self.model is not None else "tree"
        if self.model is None:
            self.model = _build_directly(pin, robot)
        _to_origin(self.model)
        self.data = self.model.createData()
        if self.model.nv != robot.nv:
            raise RuntimeError(f"Pinocchio sees nv = {self.model.nv}, we see {robot.nv}")
        perm = np.zeros(robot.nv, dtype=int)  # perm[pinocchio v index] = our v index
        self._q_map = []  # (pin idx_q, pin nq, our q index)
        self._body_of_joint = []  # our body of Pinocchio's joints 1, 2, ...
        for jid in range(1, self.model.njoints):
            j = self.model.joints[jid]
            if robot.floating_base and jid == 1:
                b = 0
            else:
                b = robot.joint_names.index(self.model.names[jid])
            self._body_of_joint.append(b)
            qs, vs = int(robot.q_start[b]), int(robot.v_start[b])
            for k in range(j.nv):
                perm[j.idx_v + k] = vs + k
            self._q_map.append((j.idx_q, j.nq, qs))
            armature = robot.bodies[b].joint.armature
            if any(armature):  # rotor inertia on M's diagonal, which URDF cannot carry
                values = np.array(self.model.armature)
                values[j.idx_v : j.idx_v + j.nv] = armature
                if robot.bodies[b].joint.type in ("free", "floating") and any(armature[:3]):
                    values[j.idx_v : j.idx_v + 3] = 0.0
                    self._free_armature_as_mass(pin, jid, b, armature[:3])
                self.model.armature = values
        self.perm = perm
        self._bare = None
        if self._point_masses:  # gravity does not pull on armature: g of the model without them
            self._bare = self.model.copy()
            for jid, inertia in self._point_masses:
                self._bare.inertias[jid] = self._bare.inertias[jid] - inertia
            self._bare_data = self._bare.createData()

    def _free_armature_as_mass(self, pin, jid: int, b: int, linear) -> None:
        """MuJoCo's armature on a free joint's linear DoF acts on ṗ in world axes
        (engine/armature.py); Pinocchio's acts on ᴮv. Equal on the three, on a joint whose parent
        is fixed, it is the kinetic energy of a point mass at the body origin, which is how the
        peer carries it (less its weight: see rnea)."""
        if not (linear[0] == linear[1] == linear[2]) or self.robot.bodies[b].parent >= 0:
            raise PeerUnavailable(f"joint '{self.robot.bodies[b].joint.name}': Pinocchio has no counterpart of "
                                  "MuJoCo's armature on a free joint's linear DoF unless the three are equal "
                                  "and the joint hangs from the world")
        inertia = pin.Inertia(float(linear[0]), np.zeros(3), np.zeros((3, 3)))
        self.model.inertias[jid] = self.model.inertias[jid] + inertia
        self._point_masses = self._point_masses + [(jid, inertia)]

    @property
    def carries_free_armature(self) -> bool:
        """Whether a free joint's armature rides on point masses (which only this peer knows)."""
        return bool(self._point_masses)

    def _weight_of_armature(self, q_pin) -> np.ndarray:
        """The generalized gravity of the point masses standing for free joints' armature."""
        if self._bare is None:
            return np.zeros(self.model.nv)
        pin = self.pin
        return pin.computeGeneralizedGravity(self.model, self.data, q_pin) - \
            pin.computeGeneralizedGravity(self._bare, self._bare_data, q_pin)

    def q(self, q: np.ndarray) -> np.ndarray:
        out = np.zeros(self.model.nq)
        for iq, nq, qs in self._q_map:
            if nq == 2:  # continuous joint
                out[iq : iq + 2] = np.cos(q[qs]), np.sin(q[qs])
            else:
                out[iq : iq + nq] = q[qs : qs + nq]
        return out

    def v(self, v: np.ndarray) -> np.ndarray:
        return np.asarray(v)[self.perm]

    def to_ours_matrix(self, A: np.ndarray) -> np.ndarray:
        out = np.empty_like(A)
        out[np.ix_(self.perm, self.perm)] = A
        return out

    def to_ours_vector(self, x: np.ndarray) -> np.ndarray:
        out = np.empty_like(x)
        out[self.perm] = x
        return out

    # results in our DoF order
    def mass_matrix(self, q):
        M = self.pin.crba(self.model, self.data, self.q(q))
        M = np.triu(M) + np.triu(M, 1).T
        return self.to_ours_matrix(M)

    def coriolis_matrix(self, q, v):
        return self.to_ours_matrix(self.pin.computeCoriolisMatrix(self.model, self.data, self.q(q), self.v(v)).copy())

    def rnea_velocity_derivative(self, q, v):
        """∂τ/∂q̇ from computeRNEADerivatives (joint coordinates), in our DoF order."""
        zeros = np.zeros(self.model.nv)
        self.pin.computeRNEADerivatives(self.model, self.data, self.q(q), self.v(v), zeros)
        return self.to_ours_matrix(np.array(self.data.dtau_dv))

    def _gravity(self, on: bool) -> None:
        for model in (self.model, self._bare) if self._bare is not None else (self.model,):
            model.gravity.linear = np.array(self.robot.gravity, dtype=float) if on else np.zeros(3)

    def rnea(self, q, v, a, gravity=True):
        self._gravity(gravity)
        qp = self.q(q)
        weight = self._weight_of_armature(qp)
        tau = self.pin.rnea(self.model, self.data, qp, self.v(v), self.v(a)) - weight
        return self.to_ours_vector(tau.copy())

    def aba(self, q, v, tau, gravity=True):
        self._gravity(gravity)
        qp = self.q(q)
        weight = self._weight_of_armature(qp)
        return self.to_ours_vector(self.pin.aba(self.model, self.data, qp, self.v(v), self.v(tau) + weight).copy())

    def _parameter_columns(self) -> np.ndarray:
        """cols[k]: Pinocchio's parameter column for our parameter k (10 per body, our body order)."""
        cols = np.zeros(10 * len(self._body_of_joint), dtype=int)
        for k, b in enumerate(self._body_of_joint):
            cols[10 * b : 10 * b + 10] = np.arange(10 * k, 10 * k + 10)
        return cols

    def dynamic_parameters(self):
        """Inertia.toDynamicParameters of every joint's body, in our body order."""
        theta = np.concatenate([self.model.inertias[jid].toDynamicParameters() for jid in range(1, self.model.njoints)])
        return theta[self._parameter_columns()]

    def joint_torque_regressor(self, q, v, a, gravity=True):
        """computeJointTorqueRegressor: rows in our DoF order, columns in our parameter order."""
        self._gravity(gravity)
        Y = np.array(self.pin.computeJointTorqueRegressor(self.model, self.data, self.q(q), self.v(v), self.v(a)))
        out = np.empty_like(Y)
        out[self.perm] = Y
        return out[:, self._parameter_columns()]
