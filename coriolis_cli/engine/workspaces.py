"""Workspaces: made by the engine, kept with their robot.

``create_data(robot)`` is a caller's own workspace: a
:class:`~coriolis_cli.engine.data.Data` for a tree, a :class:`ReducedData` for a robot in other
coordinates. Calls made without ``data=`` use the robot's own: ``kernel_scratch`` when the kernel
writes into fresh arrays (the GIL is held while it runs, so one per robot serves every thread),
``shared_data`` when results are copied out afterwards (one per thread). Both are kept in
``robot.caches``, which the model leaves out of pickles and copies.
"""

from __future__ import annotations

import threading

import numpy as np

from ..model.coordinates import ReducedRobot
from ..model.tree import RobotModel
from .data import Data

KERNEL_SCRATCH, PER_THREAD = "engine: kernel scratch", "engine: per-thread workspaces"


class ReducedData:
    """Workspace of a reduced robot: the full robot's workspace and the reduced outputs."""

    def __init__(self, robot):
        n = robot.nv
        self.robot = robot
        self.full = Data(robot.full)
        self.M, self.Mdot, self.C = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
        self.tau, self.g, self.qdd = np.zeros(n), np.zeros(n), np.zeros(n)
        self.dtau_dq, self.dtau_dv, self.dtau_da = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
        self.dqdd_dq, self.dqdd_dv, self.Minv = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
        self.dslotine_dq, self.dslotine_dv, self.dslotine_dvr, self.dslotine_dar = (np.zeros((n, n)) for _ in range(4))
        self.dCv_dq, self.dCv_dv = np.zeros((n, n)), np.zeros((n, n))
        self.dg_dq, self.dCTqd_dq, self.dCTqd_dv = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
        self.Gamma = None
        self.dC_dq = None  # ∂C/∂q: nv³, on first use
        self._tmp = np.zeros((robot.full.nv, n))
        self._sq = np.zeros((n, n))
        self.coriolis_outputs = (self.M, self.Mdot, self.C)

    def _contents(self):
        return (self.full,) + tuple(getattr(self, name) for name in _REDUCED_OUTPUTS) + (self.Gamma,)

    def __copy__(self):
        """Another workspace for the same robot with the same contents (see Data.__copy__)."""
        return _restored(self.robot, self.full.__copy__(), *self._contents()[1:])

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __reduce__(self):
        return _restored, (self.robot,) + self._contents()


_REDUCED_OUTPUTS = ("M", "Mdot", "C", "tau", "g", "qdd", "dtau_dq", "dtau_dv", "dtau_da", "dqdd_dq", "dqdd_dv", "Minv",
                    "dslotine_dq", "dslotine_dv", "dslotine_dvr", "dslotine_dar", "dCv_dq", "dCv_dv",
                    "dg_dq", "dCTqd_dq", "dCTqd_dv")


def _restored(robot, full, *contents):
    """A reduced robot's workspace holding ``contents`` (copies and unpickling)."""
    data = ReducedData(robot)
    data.full = full
    for name, value in zip(_REDUCED_OUTPUTS, contents):
        getattr(data, name)[...] = value
    data.Gamma = None if contents[-1] is None else np.array(contents[-1])
    return data


def create_data(robot):
    """A new workspace for ``robot`` (Pinocchio's ``pinocchio.Data(model)``)."""
    maker = _MAKERS.get(robot.__class__)
    if maker is None:
        raise TypeError(f"create_data takes a robot from coriolis_cli.load_robot, got {type(robot).__name__}")
    return maker(robot)


_MAKERS = {RobotModel: Data, ReducedRobot: ReducedData}


def kernel_scratch(robot):
    """The robot's workspace for kernels that write their results into fresh arrays."""
    caches = robot.caches
    try:
        return caches[KERNEL_SCRATCH]
    except KeyError:
        return caches.setdefault(KERNEL_SCRATCH, create_data(robot))


def shared_data(robot):
    """This thread's workspace of the robot, for calls that copy their results out of it."""
    try:
        return robot.caches[PER_THREAD].data
    except (KeyError, AttributeError):  # this robot's or this thread's first call
        local = robot.caches.setdefault(PER_THREAD, threading.local())
        local.data = create_data(robot)
        return local.data
