"""The per-caller workspace (Pinocchio's Data, RigidBodyDynamics.jl's state caches).

``robot.create_data()`` returns a :class:`Data`: scratch memory for the kernels and the output
arrays ``M``, ``Mdot``, ``C``, ``Gamma``, ``tau`` and ``g``. A function called with ``data=``
writes into these arrays and returns them, the same objects on every call, allocating nothing.

The kernels write only the structurally nonzero entries (DoF on one root-to-leaf path): the
outputs are zeroed once, here, and the zeros stay because the pattern depends on the robot only.
The arrays handed to users are read-only views so that the zeros cannot be overwritten by
mistake; copy an output before changing it.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np
from numba import njit

from ..errors import SizeError
from ..model.joints import FREE, PRISMATIC, REVOLUTE

# Γ holds nv³ doubles; above this many bytes we refuse unless asked with force=True.
GAMMA_MAX_BYTES = 256 * 2**20


class KernelData(NamedTuple):
    """The workspace as the compiled kernels see it. Few arrays, because each array argument
    costs time on every call from Python, and pre-shaped, because slicing one along its first
    axis is free in compiled code (see kinematics.views)."""

    blocks: np.ndarray  # (3N + 11, 6, 6): composite inertias IC, BC, body placements, scratch
    rows: np.ndarray  # (2nv + 4N, 6): S, Ṡ, body velocities, accelerations, forces, reference velocities
    q: np.ndarray  # (nq,): the configuration the kernels use (quaternions normalized)
    matrices: np.ndarray  # (4, nv, nv): M, Ṁ, C, and M's LTDL factors (forward dynamics)
    Gamma: np.ndarray  # (nv, nv, nv); (0, 0, 0) until christoffel is first called with this workspace
    vectors: np.ndarray  # (4, nv): τ, g, zeros (q̇ = q̈ = 0 for g(q)), q̈


M_, MDOT_, C_, LTDL_ = 0, 1, 2, 3  # rows of KernelData.matrices
TAU_, G_, ZERO_, QDD_ = 0, 1, 2, 3  # rows of KernelData.vectors
N_MATRICES, N_VECTORS, ROWS_PER_BODY = 4, 4, 4


@njit(cache=True)
def kernel_data(nq, nv, n_bodies):
    """A zeroed workspace (compiled, so that the parallel batches make theirs with the same code).
    Γ is (0, 0, 0) until christoffel is first called with it."""
    N = n_bodies
    return KernelData(np.zeros((3 * N + 11, 6, 6)), np.zeros((2 * nv + ROWS_PER_BODY * N, 6)), np.zeros(nq),
                      np.zeros((N_MATRICES, nv, nv)), np.zeros((0, 0, 0)), np.zeros((N_VECTORS, nv)))


def gamma_bytes_for(nv: int, K: int = 1) -> int:
    return 8 * K * nv**3


def check_gamma_bytes(nv: int, K: int = 1, force: bool = False) -> None:
    need = gamma_bytes_for(nv, K)
    if need > GAMMA_MAX_BYTES and not force:  # callers add how to go on (force=True, or the CLI's flags)
        raise SizeError(
            f"Γ of this robot holds nv³ = {nv}³ = {K * nv**3:,} doubles ({need / 2**20:,.0f} MiB), "
            f"above the {GAMMA_MAX_BYTES // 2**20} MiB limit"
        )


def available_memory() -> int | None:
    """Bytes the machine can still give (Linux MemAvailable), or None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


def check_memory(nbytes: int, what: str) -> None:
    """SizeError, before anything is allocated, when ``what`` needs more than the machine has."""
    have = available_memory()
    if have is not None and nbytes > have:
        raise SizeError(f"{what} needs about {nbytes / 2**30:,.1f} GiB and the machine has "
                        f"{have / 2**30:,.1f} GiB available")


def _read_only(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.setflags(write=False)
    return v


class Data:
    """Workspace and outputs for one robot, reused across calls (not shared between threads)."""

    def __init__(self, robot):
        nq, nv, N = robot.nq, robot.nv, robot.n_bodies
        need = 8 * (nq + (N_MATRICES + 1) * nv * nv + N_VECTORS * nv + 36 * (3 * N + 11) + 6 * (2 * nv + ROWS_PER_BODY * N))
        if need > 2**26:  # asking the system costs 50 µs: only where the answer can matter
            check_memory(need, "the workspace")
        self.robot = robot
        self.nq, self.nv = robot.nq, robot.nv
        self.kernel = kernel_data(robot.nq, robot.nv, robot.n_bodies)
        k = self.kernel
        self.M, self.Mdot, self.C = (_read_only(k.matrices[i]) for i in (M_, MDOT_, C_))
        self.tau, self.g, self.qdd = _read_only(k.vectors[TAU_]), _read_only(k.vectors[G_]), _read_only(k.vectors[QDD_])
        # the kernels' writable views of the same vectors, made once (a view costs 0.1 µs per call)
        self.tau_out, self.g_out, self.qdd_out, self.zeros = k.vectors[TAU_], k.vectors[G_], k.vectors[QDD_], k.vectors[ZERO_]
        self.Gamma = None  # allocated on first use: nv³ doubles
        self.coriolis_outputs = (self.M, self.Mdot, self.C)  # one tuple, returned on every call
        self.matrices = k.matrices  # the kernels' writable M, Ṁ, C (and LTDL) block
        self.coriolis_shape = (3, nv, nv)  # fresh M, Ṁ, C of a call without data=
        self.q_shape, self.v_shape = (robot.nq,), (robot.nv,)
        # 1-DoF joints under at most a free root: the body-frame Slotine–Li kernel applies
        codes = robot.arrays.ints[:, 1]
        self.body_frame_joints = bool(np.all((codes == REVOLUTE) | (codes == PRISMATIC) | (codes == FREE)))

    def ensure_gamma(self, force: bool = False) -> None:
        if self.Gamma is None:
            check_gamma_bytes(self.nv, 1, force)
            check_memory(gamma_bytes_for(self.nv), "Γ")
            G = np.zeros((self.nv, self.nv, self.nv))
            self.kernel = self.kernel._replace(Gamma=G)
            self.Gamma = _read_only(G)

    def __repr__(self) -> str:
        return f"<coriolis Data for '{self.robot.name}': nq={self.nq}, nv={self.nv}>"
