"""The per-caller workspace (Pinocchio's Data, RigidBodyDynamics.jl's state caches).

``create_data(robot)`` returns a :class:`Data`: the compiled core's workspace (engine/core/data.hpp) and the output
arrays ``M``, ``Mdot``, ``C``, ``Gamma``, ``tau``, ``g``, ``qdd``, ``p``, ``CTqd``, ``dtau_dq``, ``dtau_dv``,
``dtau_da``, ``dqdd_dq``, ``dqdd_dv`` and ``Minv``. A function called with ``data=``
writes into these arrays and returns them, the same objects on every call, allocating nothing.

The kernels write only the structurally nonzero entries (DoF on one root-to-leaf path): the
outputs are zeroed once, here, and the zeros stay because the pattern depends on the robot only.
The arrays handed to users are read-only views so that the zeros cannot be overwritten by
mistake; copy an output before changing it.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import SizeError
from . import compiled

# Γ holds nv³ doubles; above this many bytes we refuse unless asked with force=True.
GAMMA_MAX_BYTES = 256 * 2**20


def gamma_bytes_for(nv: int, K: int = 1) -> int:
    return 8 * K * nv**3


def check_gamma_bytes(nv: int, K: int = 1, force: bool = False) -> None:
    need = gamma_bytes_for(nv, K)
    if need > GAMMA_MAX_BYTES and not force:  # callers add how to go on (force=True, or the CLI's flags)
        raise SizeError(
            f"Γ of this robot holds nv³ = {nv}³ = {K * nv**3:,} doubles ({need / 2**20:,.0f} MiB), "
            f"above the {GAMMA_MAX_BYTES // 2**20} MiB limit"
        )


def check_second_bytes(nv: int, K: int = 1, force: bool = False) -> None:
    """Γ's guard for the second-order derivatives: four nv³ tensors a state."""
    need = gamma_bytes_for(nv, 4 * K)
    if need > GAMMA_MAX_BYTES and not force:
        raise SizeError(
            f"the second-order derivatives of this robot hold 4 nv³ = 4 x {nv}³ = {4 * K * nv**3:,} doubles "
            f"({need / 2**20:,.0f} MiB), above the {GAMMA_MAX_BYTES // 2**20} MiB limit"
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


# Below this an allocation is not worth a look at /proc/meminfo (a system call on every call of a
# hot path: 70 % of a plain christoffel call on a 7-DoF arm); the machine has it to spare.
MEMORY_CHECK_BYTES = 64 * 2**20


def check_memory(nbytes: int, what: str) -> None:
    """SizeError, before anything is allocated, when ``what`` needs more than the machine has
    (looked up only for allocations above MEMORY_CHECK_BYTES)."""
    if nbytes <= MEMORY_CHECK_BYTES:
        return
    have = available_memory()
    if have is not None and nbytes > have:
        raise SizeError(f"{what} needs about {nbytes / 2**30:,.1f} GiB and the machine has "
                        f"{have / 2**30:,.1f} GiB available")


def _read_only(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.setflags(write=False)
    return v


class Data:
    """Workspace and outputs for one robot, reused across calls (not shared between threads): the
    compiled core's model and workspace (``core``), and the output arrays the calls with data=
    write and return, named by quantity. M, Ṁ and C are one block, as Algorithm 1 writes them."""

    def __init__(self, robot):
        nq, nv, N = robot.nq, robot.nv, robot.n_bodies
        # engine/core/data.hpp's vectors (244 N + 6 nv² + 85 nv + nq), and the outputs here (18 nv² + 5 nv)
        need = 8 * (244 * N + 24 * nv * nv + 90 * nv + nq)
        if need > 2**26:  # asking the system costs 50 µs: only where the answer can matter
            check_memory(need, "the workspace")
        self.robot = robot
        self.nq, self.nv = robot.nq, robot.nv
        model = robot.arrays
        self.core = compiled.Workspace(model.ints, model.cols, model.geom, nq)
        # 1-DoF joints under at most a free root: M, τ, g, q̈ and Slotine–Li in body coordinates
        # (the core decides: core/body_frame.hpp)
        self.body_frame_joints = self.core.body_frame
        # the robot's gravity as the calls with data= pass it
        self.gravity = np.array(robot.gravity_array, dtype=float)
        # what the core writes (writable) and what users read (read-only views of the same memory)
        self.coriolis_block = np.zeros((3, nv, nv))
        self.M_out, self.Mdot_out, self.C_out = self.coriolis_block
        self.tau_out, self.g_out, self.qdd_out = np.zeros((3, nv))
        self.momentum_block = np.zeros((2, nv))  # p and Cᵀq̇: one pass writes both
        self.p_out, self.ct_out = self.momentum_block
        self.M, self.Mdot, self.C = (_read_only(x) for x in (self.M_out, self.Mdot_out, self.C_out))
        self.tau, self.g, self.qdd = _read_only(self.tau_out), _read_only(self.g_out), _read_only(self.qdd_out)
        self.p, self.CTqd = _read_only(self.p_out), _read_only(self.ct_out)
        self.Gamma = None  # allocated on first use: nv³ doubles
        self.second_out, self.second_outputs = None, None
        self.dC_dq = None  # ∂C/∂q (coriolis_matrix_derivatives): nv³, on first use  # the second-order derivatives: 4 nv³, on first use
        self.gamma_out = None  # the core's writable Γ
        self.coriolis_outputs = (self.M, self.Mdot, self.C)  # one tuple, returned on every call
        self.derivatives_block = np.zeros((3, nv, nv))  # ∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̈ = M
        self.derivatives_outputs = tuple(_read_only(x) for x in self.derivatives_block)
        self.dtau_dq, self.dtau_dv, self.dtau_da = self.derivatives_outputs
        self.fd_derivatives_block = np.zeros((3, nv, nv))  # ∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ = M⁻¹
        self.fd_derivatives_outputs = tuple(_read_only(x) for x in self.fd_derivatives_block)
        self.dqdd_dq, self.dqdd_dv, self.Minv = self.fd_derivatives_outputs
        self.slotine_derivatives_block = np.zeros((4, nv, nv))  # ∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̇_r = C, ∂τ/∂q̈_r = M
        self.slotine_derivatives_outputs = tuple(_read_only(x) for x in self.slotine_derivatives_block)
        self.dslotine_dq, self.dslotine_dv, self.dslotine_dvr, self.dslotine_dar = self.slotine_derivatives_outputs
        self.coriolis_product_block = np.zeros((2, nv, nv))  # ∂(C v)/∂q, ∂(C v)/∂q̇
        self.coriolis_product_outputs = tuple(_read_only(x) for x in self.coriolis_product_block)
        self.dCv_dq, self.dCv_dv = self.coriolis_product_outputs
        self.dg_block = np.zeros((nv, nv))  # ∂g/∂q
        self.dg_dq = _read_only(self.dg_block)
        self.coriolis_transpose_block = np.zeros((2, nv, nv))  # ∂(Cᵀq̇)/∂q, ∂(Cᵀq̇)/∂q̇
        self.coriolis_transpose_outputs = tuple(_read_only(x) for x in self.coriolis_transpose_block)
        self.dCTqd_dq, self.dCTqd_dv = self.coriolis_transpose_outputs

    def ensure_second(self, force: bool = False) -> None:
        """The second-order derivatives' four nv³ tensors, allocated on first use (Γ's guard, four times)."""
        if self.second_out is None:
            check_second_bytes(self.nv, 1, force)
            check_memory(gamma_bytes_for(self.nv, 4), "the second-order derivatives")
            block = np.zeros((4, self.nv, self.nv, self.nv))
            self.second_out = block
            self.second_outputs = tuple(_read_only(x) for x in block)

    def ensure_gamma(self, force: bool = False) -> None:
        if self.Gamma is None:
            check_gamma_bytes(self.nv, 1, force)
            check_memory(gamma_bytes_for(self.nv), "Γ")
            G = np.zeros((self.nv, self.nv, self.nv))
            self.gamma_out, self.Gamma = G, _read_only(G)

    def _contents(self):
        return (self.coriolis_block, self.tau_out, self.g_out, self.qdd_out, self.momentum_block, self.derivatives_block,
                self.fd_derivatives_block, self.slotine_derivatives_block, self.coriolis_product_block, self.dg_block,
                self.coriolis_transpose_block)

    def __copy__(self) -> Data:
        """Another workspace for the same robot with the same outputs; the robot, immutable, is
        shared, as a Pinocchio Data copy shares its Model."""
        return _restored(self.robot, self._contents(), self.gamma_out)

    def __deepcopy__(self, memo) -> Data:
        return self.__copy__()

    def __reduce__(self):
        """Pickled as its robot and outputs, rebuilt with outputs that are views of its own arrays."""
        return _restored, (self.robot, self._contents(), self.gamma_out)

    def __repr__(self) -> str:
        return f"<coriolis Data for '{self.robot.name}': nq={self.nq}, nv={self.nv}>"


def _restored(robot, contents, gamma) -> Data:
    """A workspace for ``robot`` holding ``contents`` (and Γ): copies and unpickling."""
    data = Data(robot)
    for mine, theirs in zip(data._contents(), contents):
        mine[...] = theirs
    if gamma is not None:
        data.ensure_gamma(force=True)
        data.gamma_out[...] = gamma
    return data
