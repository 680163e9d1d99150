"""The model as the few flat arrays the kernels take, and the reusable workspace (Model/Data split).

Few arguments keep the per-call overhead of compiled kernels low: ``ints`` (N x 4: parent, joint
type, q start, v start), ``cols`` (nv x 3: body of each velocity column, previous column toward
the root) and ``geom`` (N x 28: joint rotation 9, joint translation 3, axis 3, mass 1, COM 3,
inertia about the COM 9).
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np

from ..model.tree import FREE, RobotModel

GEOM_WIDTH = 28
# geom column offsets
G_ROT, G_TRANS, G_AXIS, G_MASS, G_COM, G_INERTIA = 0, 9, 12, 15, 16, 19


class Packed(NamedTuple):
    ints: np.ndarray
    cols: np.ndarray
    geom: np.ndarray
    n_bodies: int
    nq: int
    nv: int


_cache: "weakref.WeakKeyDictionary[RobotModel, Packed]" = weakref.WeakKeyDictionary()


def pack(model: RobotModel) -> Packed:
    packed = _cache.get(model)
    if packed is None:
        f = model.flat
        N = model.n_bodies
        ints = np.ascontiguousarray(np.stack([f.parent, f.jtype, f.q_start, f.v_start], axis=1).astype(np.int64))
        unit = np.full(model.nv, -1, dtype=np.int64)
        for i in np.flatnonzero(f.jtype == FREE):
            vs = int(f.v_start[i])
            unit[vs : vs + 3] = [3, 4, 5]  # ν = [v; ω]: linear columns are e_3..e_5 angular-first
            unit[vs + 3 : vs + 6] = [0, 1, 2]
        cols = np.ascontiguousarray(np.stack([f.col_body, f.col_parent, unit], axis=1).astype(np.int64))
        geom = np.zeros((N, GEOM_WIDTH))
        geom[:, G_ROT:G_TRANS] = f.rot.reshape(N, 9)
        geom[:, G_TRANS:G_AXIS] = f.trans
        geom[:, G_AXIS:G_MASS] = f.axis
        geom[:, G_MASS] = f.mass
        geom[:, G_COM:G_INERTIA] = f.com
        geom[:, G_INERTIA:] = f.inertia.reshape(N, 9)
        packed = Packed(ints, cols, geom, N, model.nq, model.nv)
        _cache[model] = packed
    return packed


def workspace_size(n_bodies: int, nv: int) -> int:
    """Doubles needed by :func:`coriolis_cli.engine.kinematics.views`."""
    N, n = n_bodies, nv
    return N * 9 + N * 3 + n * 6 + n * 6 + N * 6 + N * 36 + N * 36 + N * 6 + N * 6 + 6 * 6 + 4 * 36 + 6 * 6 * 6


class Workspace:
    """Reusable scratch memory for one evaluation at a time (Pinocchio's Data)."""

    def __init__(self, model: RobotModel):
        self.packed = pack(model)
        self.buffer = np.zeros(workspace_size(self.packed.n_bodies, self.packed.nv))
