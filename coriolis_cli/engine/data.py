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
from numba import carray, njit, types
from numba.extending import intrinsic

from ..errors import SizeError
from ..model.joints import FREE, PRISMATIC, REVOLUTE
from ..model.tree import GEOM_WIDTH, ModelArrays
from . import compiled
from .jit import helper

# Γ holds nv³ doubles; above this many bytes we refuse unless asked with force=True.
GAMMA_MAX_BYTES = 256 * 2**20


class KernelData(NamedTuple):
    """The workspace as the compiled kernels see it: pre-shaped parts, because slicing one along
    its first axis is free in compiled code (see kinematics.views)."""

    blocks: np.ndarray  # (3N + 11, 6, 6): composite inertias IC, BC, body placements, scratch
    rows: np.ndarray  # (2nv + 4N, 6): S, Ṡ, body velocities, accelerations, forces, reference velocities
    q: np.ndarray  # (nq,): the configuration the kernels use (quaternions normalized)
    matrices: np.ndarray  # (4, nv, nv): M, Ṁ, C, and M's LTDL factors (forward dynamics)
    Gamma: np.ndarray  # (nv, nv, nv); (0, 0, 0) until christoffel is first called with this workspace
    vectors: np.ndarray  # (6, nv): τ, g, zeros (q̇ = q̈ = 0 for g(q)), q̈, p = M q̇, Cᵀq̇


M_, MDOT_, C_, LTDL_ = 0, 1, 2, 3  # rows of KernelData.matrices
TAU_, G_, ZERO_, QDD_, P_, CT_ = 0, 1, 2, 3, 4, 5  # rows of KernelData.vectors
N_MATRICES, N_VECTORS, ROWS_PER_BODY = 4, 6, 4

# A Data also holds the model and the workspace as two flat arrays, for calls from Python (see
# each kernel's ``*_entry`` function): numba unboxes each array argument, about 45 ns apiece, and a call that passed the
# model's three arrays and the workspace's six paid that nine times. ``ints`` = HEADER, then the
# model's ints (N x 4) and cols (nv x 3); ``floats`` = the model's geom, then the workspace parts
# in KernelData's order (Γ apart: it is allocated on demand).
HEADER = 6  # ints[0:6] = N, nv, nq, 1 when the body-frame kernels apply, floats' address and size
BODY_FRAME_, FLOATS_AT_, FLOATS_SIZE_ = 3, 4, 5


@njit(cache=True)
def workspace_shapes(N, nv, nq):
    """Shapes of the model's geom and of the workspace parts (blocks, rows, q, matrices, vectors):
    the one place that fixes them, for the flat workspace and for kernel_data alike."""
    return ((N, GEOM_WIDTH), (3 * N + 11, 6, 6), (2 * nv + ROWS_PER_BODY * N, 6), (nq,), (N_MATRICES, nv, nv),
            (N_VECTORS, nv))


@helper
def kernel_data(nq, nv, n_bodies):
    """A zeroed workspace of separate arrays (compiled, so that the parallel batches make theirs
    with the same code). Γ is (0, 0, 0) until christoffel is first called with it."""
    _, blocks, rows, q, matrices, vectors = workspace_shapes(n_bodies, nv, nq)
    return KernelData(np.zeros(blocks), np.zeros(rows), np.zeros(q), np.zeros(matrices), np.zeros((0, 0, 0)),
                      np.zeros(vectors))


@intrinsic
def _element_pointer(typingctx, array, index):
    """A pointer to ``array.flat[index]`` of a contiguous array, for numba.carray."""
    sig = types.CPointer(array.dtype)(array, index)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.gep(ary.data, [args[1]])

    return sig, codegen


@helper
def _part(flat, offset, shape):
    """The part of ``flat`` at ``offset`` with ``shape``, and the offset after it. A carray view
    has no reference count to keep, so naming a part costs nothing, where slicing and reshaping
    cost 20-30 ns each per call."""
    size = 1
    for s in shape:
        size *= s
    return carray(_element_pointer(flat, offset), shape), offset + size


@helper
def no_rows(flat, columns):
    """A (0, columns) view of ``flat``: an output of no rows, for kernels told to skip it."""
    return carray(_element_pointer(flat, 0), (0, columns))


@intrinsic
def _at(typingctx, address, example):
    """A pointer to the dtype of the array ``example`` at the integer ``address``."""
    sig = types.CPointer(example.dtype)(address, example)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))

    return sig, codegen


@helper
def unpack_at(address):
    """unpack of the Data whose ``ints`` start at ``address`` (Data.address; floats' address is in
    its header). One integer argument instead of two arrays: numba unboxes an array in about
    60 ns, an integer in 10, and the control calls take a few hundred."""
    head = carray(_at(address, _INT_EXAMPLE), (HEADER,))
    ints = carray(_at(address, _INT_EXAMPLE), (HEADER + 4 * head[0] + 3 * head[1],))
    return unpack(ints, carray(_at(head[FLOATS_AT_], _FLOAT_EXAMPLE), (head[FLOATS_SIZE_],)))


_INT_EXAMPLE = np.zeros(0, dtype=np.int64)
_FLOAT_EXAMPLE = np.zeros(0)


@helper
def unpack(ints, floats):
    """(ModelArrays, KernelData) named over a Data's two flat arrays; valid while they live."""
    N, nv, nq = ints[0], ints[1], ints[2]
    geom_s, blocks_s, rows_s, q_s, matrices_s, vectors_s = workspace_shapes(N, nv, nq)
    body_ints, o = _part(ints, HEADER, (N, 4))
    cols, o = _part(ints, o, (nv, 3))
    geom, o = _part(floats, 0, geom_s)
    blocks, o = _part(floats, o, blocks_s)
    rows, o = _part(floats, o, rows_s)
    q, o = _part(floats, o, q_s)
    matrices, o = _part(floats, o, matrices_s)
    vectors, o = _part(floats, o, vectors_s)
    no_gamma, o = _part(floats, 0, (0, 0, 0))
    return ModelArrays(body_ints, cols, geom), KernelData(blocks, rows, q, matrices, no_gamma, vectors)


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


def body_frame_joints(robot) -> bool:
    """Whether a robot (its tree, for one in other coordinates) has 1-DoF joints under at most a
    free root, where the kernels in body coordinates apply (slotine_li_body, forward_dynamics_body,
    crba_body, rnea_body): each body's inertia is constant in its own frame and S_i a unit column."""
    codes = getattr(robot, "full", robot).arrays.ints[:, 1]
    return bool(np.all((codes == REVOLUTE) | (codes == PRISMATIC) | (codes == FREE)))


class Data:
    """Workspace and outputs for one robot, reused across calls (not shared between threads)."""

    def __init__(self, robot):
        nq, nv, N = robot.nq, robot.nv, robot.n_bodies
        shapes = workspace_shapes(N, nv, nq)
        sizes = [int(np.prod(s)) for s in shapes]
        need = 8 * (sum(sizes) + nv * nv)
        if need > 2**26:  # asking the system costs 50 µs: only where the answer can matter
            check_memory(need, "the workspace")
        self.robot = robot
        self.nq, self.nv = robot.nq, robot.nv
        model = robot.arrays
        self.body_frame_joints = body_frame_joints(robot)
        # the control loop's compiled entry: that kernel, with standard gravity compiled in
        self.control_entry = self.body_frame_joints and bool(getattr(robot, "standard_gravity", True))
        self.floats = np.zeros(sum(sizes))
        header = [N, nv, nq, int(self.body_frame_joints), self.floats.ctypes.data, self.floats.size]
        self.ints = np.concatenate([header, model.ints.ravel(), model.cols.ravel()]).astype(np.int64)
        self.address = self.ints.ctypes.data  # valid while this Data lives (see unpack_at)
        # the robot's gravity as the control calls pass it (writable like any gravity given, so
        # that both take one compiled specialization)
        self.gravity = np.array(robot.gravity_array, dtype=float)
        geom, blocks, rows, q, matrices, vectors = (
            part.reshape(shape) for part, shape in zip(np.split(self.floats, np.cumsum(sizes)[:-1]), shapes))
        geom[:] = model.geom
        # the same memory as separate arrays, for the kernels' own signature (batches, loops, bench);
        # writable like unpack's views, so that every caller shares one compiled specialization
        body_ints = self.ints[HEADER : HEADER + 4 * N].reshape(N, 4)
        self.model = ModelArrays(body_ints, self.ints[HEADER + 4 * N :].reshape(nv, 3), geom)
        self.kernel = KernelData(blocks, rows, q, matrices, np.zeros((0, 0, 0)), vectors)
        # the compiled core's model and workspace, and the outputs it writes into (M, Ṁ, C as one block)
        self.core = compiled.Workspace(model.ints, model.cols, model.geom, nq)
        self.coriolis_block = matrices[:3]
        self.M_out, self.tau_out, self.g_out, self.qdd_out = matrices[M_], vectors[TAU_], vectors[G_], vectors[QDD_]
        self.p_out, self.ct_out = vectors[P_], vectors[CT_]
        self.M, self.Mdot, self.C = (_read_only(matrices[i]) for i in (M_, MDOT_, C_))
        self.tau, self.g, self.qdd = _read_only(vectors[TAU_]), _read_only(vectors[G_]), _read_only(vectors[QDD_])
        self.p, self.CTqd = _read_only(vectors[P_]), _read_only(vectors[CT_])
        self.Gamma = None  # allocated on first use: nv³ doubles
        self.gamma_out = None  # the kernels' writable Γ
        self.coriolis_outputs = (self.M, self.Mdot, self.C)  # one tuple, returned on every call
        self.coriolis_shape = (3, nv, nv)  # fresh M, Ṁ, C of a call without data=

    def ensure_gamma(self, force: bool = False) -> None:
        if self.Gamma is None:
            check_gamma_bytes(self.nv, 1, force)
            check_memory(gamma_bytes_for(self.nv), "Γ")
            G = np.zeros((self.nv, self.nv, self.nv))
            self.kernel = self.kernel._replace(Gamma=G)
            self.gamma_out, self.Gamma = G, _read_only(G)

    def __copy__(self) -> Data:
        """Another workspace for the same robot with the same contents. Its outputs are views of
        its own buffer (a copy of the arrays alone would leave data.M a stale copy); the robot,
        immutable, is shared, as a Pinocchio Data copy shares its Model."""
        return _restored(self.robot, self.floats, self.gamma_out)

    def __deepcopy__(self, memo) -> Data:
        return self.__copy__()

    def __reduce__(self):
        """Pickled as its robot and contents, rebuilt with outputs that are views of its buffer."""
        return _restored, (self.robot, self.floats, self.gamma_out)

    def __repr__(self) -> str:
        return f"<coriolis Data for '{self.robot.name}': nq={self.nq}, nv={self.nv}>"


def _restored(robot, floats, gamma) -> Data:
    """A workspace for ``robot`` holding ``floats`` (and Γ): copies and unpickling."""
    data = Data(robot)
    data.floats[:] = floats
    if gamma is not None:
        data.ensure_gamma(force=True)
        data.gamma_out[...] = gamma
    return data
