"""Workspaces: made by the engine, kept with their robot.

``create_data(robot)`` is a caller's own workspace: a
:class:`~coriolis_cli.engine.data.Data` for a tree, a :class:`ReducedData` for a robot in other
coordinates. Calls made without ``data=`` use the robot's own: ``kernel_scratch`` when the kernel
writes into fresh arrays (the GIL is held while it runs, so one per robot serves every thread),
``shared_data`` for a robot in other coordinates, whose one-state functions keep the tree's
results and their scratch there while they write into fresh arrays (one per thread). Both are
kept in ``robot.caches``, which the model leaves out of pickles and copies.
"""

from __future__ import annotations

import threading

import numpy as np

from ..model.coordinates import ReducedRobot
from ..model.tree import RobotModel
from .data import BLOCKS, COMPOSED_OUTPUTS, SECOND_OUTPUTS, Data, former_names, lay_out_blocks

KERNEL_SCRATCH, PER_THREAD = "engine: kernel scratch", "engine: per-thread workspaces"


@former_names
class ReducedData:
    """Workspace of a robot in other coordinates (engine.coordinates): the tree's workspace
    (``full``) and the outputs in the robot's own coordinates, in Data's blocks and under Data's
    names (data.BLOCKS), so that a function's ``data=`` form writes the same block (its
    description's ``into``) and returns the same field (``returns``) for every robot; users read
    read-only views of them, as a tree's."""

    def __init__(self, robot):
        n = robot.nv
        self.robot = robot
        self.nq, self.nv = robot.nq, n
        self.full = Data(robot.full)
        lay_out_blocks(self, n)  # as Data lays them out
        self.gamma_out, self.Gamma = None, None  # nv³: on first use
        self.second_out, self.second_outputs = None, None  # 4 nv³: on first use
        for name in (*SECOND_OUTPUTS, *COMPOSED_OUTPUTS):
            object.__setattr__(self, name, None)
        self._tmp = np.zeros((robot.full.nv, n))  # scratch of the congruences Aᵀ X A
        self._sq = np.zeros((n, n))

    # as a tree's workspace: Γ (nv³) and the second derivatives (4 nv³) on first use, outputs never rebound
    ensure_gamma = Data.ensure_gamma
    ensure_second = Data.ensure_second
    __setattr__ = Data.__setattr__

    def _contents(self):
        return (self.full, *(getattr(self, b.name) for b in BLOCKS), self.gamma_out, self.second_out)

    def __copy__(self):
        """Another workspace for the same robot with the same contents (see Data.__copy__)."""
        return _restored(self.robot, self.full.__copy__(), *self._contents()[1:])

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __reduce__(self):
        return _restored, (self.robot,) + self._contents()

    def __repr__(self) -> str:
        return f"<coriolis ReducedData for '{self.robot.name}' ({self.robot.coordinates}): nq={self.nq}, nv={self.nv}>"


def _restored(robot, full, *contents):
    """A reduced robot's workspace holding ``contents`` (copies and unpickling)."""
    data = ReducedData(robot)
    data.full = full
    *blocks, gamma, second = contents
    for block, value in zip(BLOCKS, blocks):
        getattr(data, block.name)[...] = value
    if gamma is not None:
        data.ensure_gamma(force=True)
        data.gamma_out[...] = gamma
    if second is not None:
        data.ensure_second(force=True)
        data.second_out[...] = second
    return data


def create_data(robot: RobotModel | ReducedRobot) -> Data:
    """Create a workspace for repeated calls on one robot, as ``pinocchio.Data(model)`` does.

    Pass it as ``data=`` to the dynamics functions (one state at a time): each writes its results
    into the workspace's own arrays and returns them, the same objects on every call, allocating
    nothing, which suits a control loop. The arrays are read-only views: copy a result to keep or
    change it, since the next call overwrites it. A workspace belongs to one thread; create one per
    thread. Calls without ``data=`` need none.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].

    Returns
    -------
    data : Data
        A new [Data][coriolis_cli.Data] for a robot in its tree's coordinates; for a robot in other
        coordinates (a `ReducedRobot`) a workspace with the same fields, of the robot's own sizes.

    Raises
    ------
    TypeError
        If ``robot`` is not a robot from [load_robot][coriolis_cli.load_robot].
    SizeError
        If the workspace needs more memory than the machine has available.

    See Also
    --------
    - [`Data`][coriolis_cli.Data]: The workspace's fields, and which function writes each.

    Examples
    --------
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> data = cc.create_data(robot)
    >>> M = cc.mass_matrix(robot, robot.neutral_configuration(), data=data)
    >>> M is data.M, M.shape, M.flags.writeable
    (True, (7, 7), False)
    """
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
    """This thread's workspace of the robot, for the intermediate results of calls without data=."""
    try:
        return robot.caches[PER_THREAD].data
    except (KeyError, AttributeError):  # this robot's or this thread's first call
        local = robot.caches.setdefault(PER_THREAD, threading.local())
        local.data = create_data(robot)
        return local.data
