"""The per-caller workspace (Pinocchio's Data, RigidBodyDynamics.jl's state caches).

``create_data(robot)`` returns a :class:`Data`: the compiled core's workspace (engine/core/data.hpp) and the output
arrays named as the functions name their outputs (``M``, ``Mdot``, ``C``, ``Gamma``, ``tau``, ``g``, ``qdd``,
``p``, ``CTqd``, ``dtau_dq``, ``dtau_dqd``, ...: BLOCKS). A function called with ``data=``
writes into these arrays and returns them, the same objects on every call, allocating nothing.

The kernels write only the structurally nonzero entries (DoF on one root-to-leaf path): the
outputs are zeroed once, here, and the zeros stay because the pattern depends on the robot only.
The arrays handed to users are read-only views so that the zeros cannot be overwritten by
mistake; copy an output before changing it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..errors import SizeError
from . import compiled

if TYPE_CHECKING:  # the annotation's name
    from ..model.tree import RobotModel

# Γ holds nv³ doubles; above this many bytes we refuse unless asked with force=True.
GAMMA_MAX_BYTES = 256 * 2**20


def gamma_bytes_for(nv: int, K: int = 1) -> int:
    return 8 * K * nv**3


# what the library says to do about a refused nv³ result (the commands say their own: compute's
# --allow-large, bench's note)
FORCE_HINT = "pass force=True to compute it anyway, or list Γ's largest entries with christoffel_largest"


def check_gamma_bytes(nv: int, K: int = 1, force: bool = False, what: str = "Γ") -> None:
    """SizeError for nv³ doubles a state (Γ, ∂C/∂q) above GAMMA_MAX_BYTES, unless ``force``."""
    need = gamma_bytes_for(nv, K)
    if need > GAMMA_MAX_BYTES and not force:
        raise SizeError(
            f"{what} of this robot holds nv³ = {nv}³ = {K * nv**3:,} doubles ({need / 2**20:,.0f} MiB), "
            f"above the {GAMMA_MAX_BYTES // 2**20} MiB limit", hint=FORCE_HINT)


def check_second_bytes(nv: int, K: int = 1, force: bool = False) -> None:
    """Γ's guard for the second-order derivatives: four nv³ tensors a state."""
    need = gamma_bytes_for(nv, 4 * K)
    if need > GAMMA_MAX_BYTES and not force:
        raise SizeError(
            f"the second-order derivatives of this robot hold 4 nv³ = 4 x {nv}³ = {4 * K * nv**3:,} doubles "
            f"({need / 2**20:,.0f} MiB), above the {GAMMA_MAX_BYTES // 2**20} MiB limit",
            hint="pass force=True to compute them anyway")


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


class Block(NamedTuple):
    """One output block of Data: the array the core writes (``count`` outputs of nv x nv, or nv
    entries, side by side; count 0: one nv x nv output, the block itself), the core's writable
    names for its outputs, the read-only views users read, and the tuple of them a data= call
    returns."""

    name: str
    count: int
    square: bool
    writable: tuple
    views: tuple
    outputs: str | None

    def shape(self, nv: int) -> tuple:
        one = (nv, nv) if self.square else (nv,)
        return (self.count, *one) if self.count else one


# Every output block of Data, once: its allocation, its views, copies and pickling, and the memory
# estimate are made from this table (the core's own fields: core/data.hpp's table).
BLOCKS = (
    Block("coriolis_block", 3, True, ("M_out", "Mdot_out", "C_out"), ("M", "Mdot", "C"), "coriolis_outputs"),
    Block("vector_block", 3, False, ("tau_out", "g_out", "qdd_out"), ("tau", "g", "qdd"), None),
    Block("momentum_block", 2, False, ("p_out", "ct_out"), ("p", "CTqd"), None),  # one pass writes both
    Block("derivatives_block", 3, True, (), ("dtau_dq", "dtau_dqd", "dtau_dqdd"), "derivatives_outputs"),
    Block("fd_derivatives_block", 3, True, (), ("dqdd_dq", "dqdd_dqd", "Minv"), "fd_derivatives_outputs"),
    Block("slotine_derivatives_block", 4, True, (), ("dslotine_dq", "dslotine_dqd", "dslotine_dqd_r", "dslotine_dqdd_r"),
          "slotine_derivatives_outputs"),
    Block("coriolis_product_block", 2, True, (), ("dCv_dq", "dCv_dqd"), "coriolis_product_outputs"),
    Block("dg_block", 0, True, (), ("dg_dq",), None),
    Block("coriolis_transpose_block", 2, True, (), ("dCTqd_dq", "dCTqd_dqd"), "coriolis_transpose_outputs"),
    Block("dp_block", 0, True, (), ("dp_dq",), None),
    Block("contracted_block", 4, True, (), ("lam_d2tau_dq2", "lam_d2tau_dqd2", "lam_d2tau_dqdqd", "lam_d2tau_dqdqdd"),
          "contracted_outputs"),
    Block("fd_contracted_block", 4, True, (), ("lam_d2qdd_dq2", "lam_d2qdd_dqd2", "lam_d2qdd_dqdqd", "lam_d2qdd_dqdtau"),
          "fd_contracted_outputs"),
)


# the outputs allocated on first use (nv³ doubles each), by the tuple a data= call returns
SECOND_OUTPUTS = ("d2tau_dq2", "d2tau_dqd2", "d2tau_dqdqd", "d2tau_dqdqdd")
ALLOCATED_ON_FIRST_USE = {"second_outputs": SECOND_OUTPUTS}

# the outputs of the functions composed of others (engine.api's _composed), each allocated on the
# first data= call that writes it
COMPOSED_OUTPUTS = ("dC_dq", "d2qdd_dq2", "d2qdd_dqd2", "d2qdd_dqdqd", "d2qdd_dqdtau")

# every name under which Data holds an output (BLOCKS', and those allocated on first use)
_OUTPUTS = frozenset(
    [b.name for b in BLOCKS] + [n for b in BLOCKS for n in (*b.writable, *b.views)] + [b.outputs for b in BLOCKS if b.outputs]
    + ["Gamma", "gamma_out", "second_out", "second_outputs", *COMPOSED_OUTPUTS, *SECOND_OUTPUTS])

# Data's fields as 0.1.0 named them, read for one more release with a DeprecationWarning: the
# velocity is qd everywhere now, as the functions' parameters and compute's --what name it
# (dCv_dv was ∂(C v)/∂q̇, not ∂(C v)/∂v)
RENAMED = {"dtau_dv": "dtau_dqd", "dtau_da": "dtau_dqdd", "dqdd_dv": "dqdd_dqd", "dslotine_dv": "dslotine_dqd",
           "dslotine_dvr": "dslotine_dqd_r", "dslotine_dar": "dslotine_dqdd_r", "dCv_dv": "dCv_dqd",
           "dCTqd_dv": "dCTqd_dqd"}


def former_names(cls):
    """Gives a workspace class RENAMED's names as read-only properties that warn and return the
    field. Properties, not ``__getattr__``: a class with ``__getattr__`` pays a slower lookup on
    every attribute (0.09 µs on each data= call)."""

    def former(old, new):
        def read(self):
            import warnings

            warnings.warn(f"data.{old} is data.{new} now; the old name goes in the next release", DeprecationWarning,
                          stacklevel=2)
            return getattr(self, new)

        return property(read, doc=f"Deprecated: data.{new}.")

    for old, new in RENAMED.items():
        setattr(cls, old, former(old, new))
    return cls


def lay_out_blocks(workspace, nv: int) -> None:
    """BLOCKS' arrays on ``workspace`` (a Data, or a ReducedData in other coordinates): what the
    core writes (writable) and what users read (read-only views of the same memory), and each
    block's tuple of views, returned on every call."""
    for block in BLOCKS:
        array = np.zeros(block.shape(nv))
        setattr(workspace, block.name, array)
        parts = list(array) if block.count else [array]
        for name, part in zip(block.writable, parts):
            setattr(workspace, name, part)
        views = tuple(_read_only(x) for x in parts)
        for name, view in zip(block.views, views):
            setattr(workspace, name, view)
        if block.outputs:
            setattr(workspace, block.outputs, views)


def workspace_bytes(robot) -> int:
    """The bytes create_data(robot) allocates, before it does: the core's model and workspace
    (core/data.hpp's table, through the binding) and the output blocks (BLOCKS). Γ and the
    second-order derivatives, allocated on first use, are not counted."""
    nq, nv, N = robot.nq, robot.nv, robot.n_bodies
    return compiled.workspace_bytes(nq, N, nv) + sum(8 * int(np.prod(b.shape(nv))) for b in BLOCKS)


@former_names
class Data:
    """A workspace for one robot: the output arrays that calls with ``data=`` write and return.

    Made by [create_data][coriolis_cli.create_data] (Pinocchio's ``Data``). A dynamics function
    called with ``data=data`` (one state at a time) writes its results into the fields below and
    returns them, the same arrays on every call, so that a control loop allocates nothing. The
    fields are read-only views, zero where the robot's structure makes an entry zero: copy a result
    to keep or change it, since the next call overwrites it, and do not share a workspace between
    threads. Fields cannot be rebound (``data.M = ...`` raises `AttributeError`). Copies and
    pickles hold the same values for the same robot.

    Attributes
    ----------
    robot : RobotModel
        The robot the workspace was made for.
    nq, nv : int
        The robot's numbers of configuration and velocity coordinates.
    gravity : ndarray of shape (3,)
        The robot's gravity in the world frame [m/s²].
    M, Mdot, C : ndarray of shape (nv, nv)
        M, Ṁ and C [kg·m², kg; per second for Ṁ and C]: `coriolis_matrix` writes all three,
        `mass_matrix` writes M.
    Gamma : ndarray of shape (nv, nv, nv), or None
        Γ, written by `christoffel`; None until its first call with this workspace (nv³ doubles).
    tau : ndarray of shape (nv,)
        τ [N·m, N], written by `inverse_dynamics` and by `slotine_li`.
    g : ndarray of shape (nv,)
        g(q) [N·m, N], written by `gravity_vector`.
    qdd : ndarray of shape (nv,)
        q̈ [rad/s², m/s²], written by `forward_dynamics`.
    p, CTqd : ndarray of shape (nv,)
        The generalized momentum M q̇ and Cᵀq̇, written together by `generalized_momentum` and by
        `coriolis_transpose_velocity` (each returns its own).
    dtau_dq, dtau_dqd, dtau_dqdd : ndarray of shape (nv, nv)
        ∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̈, written by `inverse_dynamics_derivatives`.
    dqdd_dq, dqdd_dqd, Minv : ndarray of shape (nv, nv)
        ∂q̈/∂q, ∂q̈/∂q̇ and M⁻¹ (= ∂q̈/∂τ), written by `forward_dynamics_derivatives`.
    dslotine_dq, dslotine_dqd, dslotine_dqd_r, dslotine_dqdd_r : ndarray of shape (nv, nv)
        The Slotine–Li torque's derivatives, written by `slotine_li_derivatives`.
    dCv_dq, dCv_dqd : ndarray of shape (nv, nv)
        ∂(C v)/∂q and ∂(C v)/∂q̇, written by `coriolis_product_derivatives`.
    dg_dq : ndarray of shape (nv, nv)
        ∂g/∂q, written by `gravity_derivatives`.
    dCTqd_dq, dCTqd_dqd : ndarray of shape (nv, nv)
        ∂(Cᵀq̇)/∂q and ∂(Cᵀq̇)/∂q̇, written by `coriolis_transpose_derivatives`.
    dp_dq : ndarray of shape (nv, nv)
        ∂p/∂q, written by `momentum_derivatives`.
    lam_d2tau_dq2, lam_d2tau_dqd2, lam_d2tau_dqdqd, lam_d2tau_dqdqdd : ndarray of shape (nv, nv)
        τ's second derivatives contracted with a co-state λ, written by
        `inverse_dynamics_second_derivatives_contracted`.
    lam_d2qdd_dq2, lam_d2qdd_dqd2, lam_d2qdd_dqdqd, lam_d2qdd_dqdtau : ndarray of shape (nv, nv)
        q̈'s second derivatives contracted with λ, written by
        `forward_dynamics_second_derivatives_contracted`.
    d2tau_dq2, d2tau_dqd2, d2tau_dqdqd, d2tau_dqdqdd : ndarray of shape (nv, nv, nv), or None
        τ's second derivatives, written by `inverse_dynamics_second_derivatives`; None until its
        first call with this workspace.
    d2qdd_dq2, d2qdd_dqd2, d2qdd_dqdqd, d2qdd_dqdtau : ndarray of shape (nv, nv, nv), or None
        q̈'s second derivatives, written by `forward_dynamics_second_derivatives`; None until its
        first call with this workspace.
    dC_dq : ndarray of shape (nv, nv, nv), or None
        ∂C/∂q, written by `coriolis_matrix_derivatives`; None until its first call with this
        workspace.
    bytes : int
        The memory the workspace holds, Γ and the second derivatives apart.

    Each function's page gives its outputs' index order. `regressor`, `adaptation_gradient`,
    `momentum_regressors`, `trajectory_dynamics`, `christoffel_slices` and `christoffel_largest`
    take no workspace.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> data = cc.create_data(robot)
    >>> q, qd = robot.neutral_configuration(), np.full(robot.nv, 0.1)
    >>> M, Mdot, C = cc.coriolis_matrix(robot, q, qd, data=data)
    >>> M is data.M, C is data.C, data.Gamma is None
    (True, True, True)
    >>> bool(np.allclose(Mdot, C + C.T))
    True
    """

    def __init__(self, robot: RobotModel):
        nq, nv = robot.nq, robot.nv
        need = workspace_bytes(robot)
        if need > 2**26:  # asking the system costs 50 µs: only where the answer can matter
            check_memory(need, "the workspace")
        self.robot = robot
        self.nq, self.nv = nq, nv
        model = robot.arrays
        self.core = compiled.Workspace(model.ints, model.cols, model.geom, nq)
        # 1-DoF joints under at most a free root: M, τ, g, q̈ and Slotine–Li in body coordinates
        # (the core decides: core/body_frame.hpp)
        self.body_frame_joints = self.core.body_frame
        # the robot's gravity as the calls with data= pass it
        self.gravity = np.array(robot.gravity_array, dtype=float)
        lay_out_blocks(self, nv)
        self.Gamma = None  # allocated on first use: nv³ doubles
        self.gamma_out = None  # the core's writable Γ
        self.second_out, self.second_outputs = None, None  # the second-order derivatives: 4 nv³, on first use
        for name in (*SECOND_OUTPUTS, *COMPOSED_OUTPUTS):
            object.__setattr__(self, name, None)

    def __setattr__(self, name, value):
        """An output, once there, stays the array the data= calls write: rebinding it (data.M = ...)
        would detach it silently, later calls writing the old array. Outputs allocated on first use
        (Γ, the second derivatives, ∂C/∂q) are set once."""
        if name in _OUTPUTS and self.__dict__.get(name) is not None:
            raise AttributeError(f"data.{name} is an output that the data= calls write in place: it cannot be "
                                 f"replaced; copy it to keep or change its values (data.{name}.copy())")
        object.__setattr__(self, name, value)

    @property
    def bytes(self) -> int:
        """The memory this workspace holds, in bytes: its compiled part and its output arrays (Γ and
        the second derivatives, once allocated, apart)."""
        return self.core.bytes + sum(getattr(self, b.name).nbytes for b in BLOCKS)

    def ensure_second(self, force: bool = False) -> None:
        """Allocate the four (nv, nv, nv) outputs of `inverse_dynamics_second_derivatives`, if not yet done.

        The first call of that function with this workspace does it; call this beforehand to
        allocate outside a control loop.

        Parameters
        ----------
        force : bool, optional
            Allocate above the 256 MiB limit on the four tensors' size.

        Raises
        ------
        SizeError
            If the tensors exceed the limit without ``force``, or the memory the machine has.
        """
        if self.second_out is None:
            check_second_bytes(self.nv, 1, force)
            check_memory(gamma_bytes_for(self.nv, 4), "the second-order derivatives")
            block = np.zeros((4, self.nv, self.nv, self.nv))
            self.second_out = block
            self.second_outputs = tuple(_read_only(x) for x in block)
            for name, view in zip(SECOND_OUTPUTS, self.second_outputs):
                setattr(self, name, view)

    def ensure_gamma(self, force: bool = False) -> None:
        """Allocate Γ's (nv, nv, nv) output, ``data.Gamma``, if not yet done.

        The first call of `christoffel` with this workspace does it; call this beforehand to
        allocate outside a control loop.

        Parameters
        ----------
        force : bool, optional
            Allocate above the 256 MiB limit on Γ's size.

        Raises
        ------
        SizeError
            If Γ exceeds the limit without ``force``, or the memory the machine has.
        """
        if self.Gamma is None:
            check_gamma_bytes(self.nv, 1, force)
            check_memory(gamma_bytes_for(self.nv), "Γ")
            G = np.zeros((self.nv, self.nv, self.nv))
            self.gamma_out, self.Gamma = G, _read_only(G)

    def _contents(self):
        return tuple(getattr(self, b.name) for b in BLOCKS)

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
