"""The public functions of M, Ṁ, C, Γ, τ, g, q̈, the momentum terms and the Slotine–Li terms.

Every function accepts one state (``q`` of shape (nq,)) or a batch (shape (K, nq)), in which case
results gain a leading K axis and the K states are evaluated in parallel (Slotine–Li: one state).
With ``data=`` (from ``create_data(robot)``, one state at a time) the results are written into
the workspace's own arrays and returned, allocating nothing. With ``out=`` (one state or a batch)
they are written into the caller's arrays, of the shapes returned, and those are returned: in
place where they are what a previous call returned, else by a copy (engine.algorithms).

Each function is described here once: its signature and documentation, and under
``@algorithm`` its kernel in the compiled core, the block that kernel writes and what the caller
gets from it, its batch, and the fields of Data its ``data=`` form writes and returns.
engine.algorithms makes the function from that and holds the one path to the kernel;
engine.coordinates registers each function's form for robots in other coordinates.
"""

from __future__ import annotations

import numpy as np

from ..errors import StateError
from ..model.coordinates import ReducedRobot
from ..model.joints import FREE as FREE_CODE
from ..model.parameters import N_PARAMETERS
from . import compiled
from .algorithms import algorithm, gravity_for, named
from .calls import (
    QuaternionWarning,
    check_data,
    checked,
    finite_vectors,
    positive_definite,
    singular_mass_matrix,
)
from .conventions import FACTORIZATIONS, MOMENTUM_REGRESSORS, TRAJECTORY_OUTPUTS, TRAJECTORY_QUANTITIES, MomentumRegressors
from .data import (
    GAMMA_MAX_BYTES,
    Data,
    check_gamma_bytes,
    check_second_bytes,
    check_memory,
    gamma_bytes_for,
)
from .selection import largest_entries
from .workspaces import ReducedData, create_data


def _square(robot):
    return (robot.nv, robot.nv)


def _vector(robot):
    return (robot.nv,)


def _three(out):
    """M, Ṁ and C of Algorithm 1's block (3, nv, nv)."""
    return out[0], out[1], out[2]


def _three_of_each(out):
    """M, Ṁ and C of K states from the batch's block (K, 3, nv, nv)."""
    return out[:, 0], out[:, 1], out[:, 2]


def _gamma_guard(robot, K, data, force=False):
    """Γ holds nv³ doubles a state: refused above GAMMA_MAX_BYTES unless ``force``, and above what the
    machine has; with data= allocated in the workspace on its first use."""
    if data is not None:
        if data.Gamma is None:
            data.ensure_gamma(force)
        return
    check_gamma_bytes(robot.nv, K, force)
    check_memory(gamma_bytes_for(robot.nv, K), f"Γ of {K} states" if K > 1 else "Γ")


# ---- Algorithms 1 and 2 ------------------------------------------------------------------------
@algorithm(compiled.coriolis_matrix, key="C", shape=lambda r: (3, r.nv, r.nv), take=_three, batch=compiled.coriolis_matrix_batch,
           batch_take=_three_of_each, into="coriolis_block", returns="coriolis_outputs")
def coriolis_matrix(robot, q, qd, factorization: str = "christoffel", data: Data | None = None,
                    out: np.ndarray | tuple | None = None):
    """Algorithm 1: ``M, Mdot, C`` at (q, q̇). ``factorization`` selects the body-level B:
    ``christoffel`` (eq. 10, C = Σ_k Γ[:, :, k] q̇_k) or ``featherstone`` (eq. 9, admissible only).

    With ``data=create_data(robot)`` the results are ``data.M, data.Mdot, data.C`` themselves,
    overwritten on every call."""


@algorithm(compiled.christoffel, key="Gamma", shape=lambda r: (r.nv,) * 3, batch=compiled.christoffel_batch, into="gamma_out",
           returns="Gamma", guard=_gamma_guard)
def christoffel(robot, q, force: bool = False, data: Data | None = None, out: np.ndarray | tuple | None = None):
    """Algorithm 2: Christoffel symbols of the first kind, ``Gamma[i, j, k]`` with
    ``C[i, j] = Σ_k Gamma[i, j, k] q̇_k``. For a free joint ``Gamma[:, :, k] = C(q, e_k)``.

    Γ holds nv³ doubles: above 256 MiB it is refused unless ``force=True``. With ``data=`` the
    result is ``data.Gamma``, allocated on the first such call."""


def christoffel_slices(robot, q):
    """Γ one slice at a time, ``(k, Γ[:, :, k] = C(q, e_k))``, in O(nv²) memory whatever the robot."""
    if isinstance(robot, ReducedRobot):
        return christoffel_slices.in_other_coordinates(robot, q)
    return _tree_slices(robot, q)


def _tree_slices(robot, q):
    data = create_data(robot)
    (q,) = checked(robot, q)
    e = np.zeros(robot.nv)
    for k in range(robot.nv):
        e[:] = 0.0
        e[k] = 1.0
        yield k, coriolis_matrix(robot, q, e, data=data)[2]


def christoffel_largest(robot, q, top: int, tiny: float = 0.0):
    """The ``top`` largest |Γ_ijk| without holding Γ: ``(entries, nonzero)`` with entries
    ``(i, j, k, value)`` largest first and the number of entries with |Γ_ijk| > ``tiny``."""
    return largest_entries(christoffel_slices(robot, q), robot.nv, top, tiny)


# ---- CRBA and RNEA (in body coordinates where they apply: engine/core/engine.hpp chooses) -------
@algorithm(compiled.mass_matrix, key="M", shape=_square, batch=compiled.mass_matrix_batch, into="M_out", returns="M")
def mass_matrix(robot, q, data: Data | None = None, out: np.ndarray | tuple | None = None):
    """Composite-rigid-body algorithm: M(q) (``data.M`` with ``data=``). Robots of 1-DoF joints under
    at most a free root take it in body coordinates (engine/core/crba_body.hpp)."""


@algorithm(compiled.inverse_dynamics, key="tau", shape=_vector, batch=compiled.inverse_dynamics_batch, into="tau_out",
           returns="tau")
def inverse_dynamics(robot, q, qd, qdd, gravity=True, data: Data | None = None, out: np.ndarray | tuple | None = None):
    """RNEA: τ = M q̈ + C q̇ + g. ``gravity``: True (the robot's: 9.81 m/s² along −z unless its
    file says otherwise, as MJCF can), False, or a 3-vector.
    With ``data=`` the result is ``data.tau``. Robots of 1-DoF joints under at most a free root take
    it in body coordinates (engine/core/rnea_body.hpp)."""


@algorithm(compiled.gravity_vector, key="g", shape=_vector, batch=compiled.gravity_vector_batch, into="g_out", returns="g")
def gravity_vector(robot, q, gravity=True, data: Data | None = None, out: np.ndarray | tuple | None = None):
    """Generalized gravity g(q) = RNEA(q, 0, 0) (``data.g`` with ``data=``). Robots of 1-DoF joints
    under at most a free root take the RNEA at rest in body coordinates (engine/core/rnea_body.hpp)."""


# ---- derivatives (core/rnea_derivatives.hpp) -----------------------------------------------------
@algorithm(compiled.inverse_dynamics_derivatives, key="dtau", shape=lambda r: (3, r.nv, r.nv), take=_three,
           batch=compiled.inverse_dynamics_derivatives_batch, batch_take=_three_of_each, into="derivatives_block",
           returns="derivatives_outputs")
def inverse_dynamics_derivatives(robot, q, qd, qdd, gravity=True, data: Data | None = None,
                                 out: np.ndarray | tuple | None = None):
    """(∂τ/∂q, ∂τ/∂q̇, M = ∂τ/∂q̈) of τ = M q̈ + C q̇ + g at (q, q̇, q̈), by one forward and one
    backward pass in O(N d) (Carpentier & Mansard, RSS 2018; engine/core/rnea_derivatives.hpp),
    the joints' armature included. [i, j] = ∂τ_i/∂x_j; on free, spherical and planar joints q
    moves in the tangent space, as Pinocchio's does (q ⊕ δ = ``integrate(robot, q, δ)``). With
    ``data=`` the results are ``data.dtau_dq, data.dtau_dqd, data.dtau_dqdd``. Batches: q, qd, qdd
    of shape (K, ·), in parallel."""


@algorithm(compiled.forward_dynamics_derivatives, key="dqdd", shape=lambda r: (3, r.nv, r.nv), take=_three,
           batch=compiled.forward_dynamics_derivatives_batch, batch_take=_three_of_each, into="fd_derivatives_block",
           returns="fd_derivatives_outputs")
def forward_dynamics_derivatives(robot, q, qd, tau, gravity=True, data: Data | None = None,
                                 out: np.ndarray | tuple | None = None):
    """(∂q̈/∂q, ∂q̈/∂q̇, M⁻¹ = ∂q̈/∂τ) of q̈ = M⁻¹ (τ − C q̇ − g) at (q, q̇, τ): the inverse
    dynamics' derivatives at q̈, then ∂q̈/∂x = −M⁻¹ ∂τ/∂x with M = LᵀDL along the tree
    (engine/core/forward_dynamics_derivatives.hpp); q in the tangent space as above. With
    ``data=`` the results are ``data.dqdd_dq, data.dqdd_dqd, data.Minv``. Batches: q, qd, tau of
    shape (K, ·), in parallel."""


def _first_two(out):
    return out[0], out[1]


def _first_two_of_each(out):
    return out[:, 0], out[:, 1]


def _four(out):
    return out[0], out[1], out[2], out[3]


def _four_of_each(out):
    return out[:, 0], out[:, 1], out[:, 2], out[:, 3]


@algorithm(compiled.coriolis_product_derivatives, key="dCv", shape=lambda r: (2, r.nv, r.nv), take=_first_two,
           batch=compiled.coriolis_product_derivatives_batch, batch_take=_first_two_of_each,
           into="coriolis_product_block", returns="coriolis_product_outputs")
def coriolis_product_derivatives(robot, q, qd, v, factorization: str = "christoffel", data: Data | None = None,
                                 out: np.ndarray | tuple | None = None):
    """(∂(C v)/∂q, ∂(C v)/∂q̇) of C(q, q̇) v for a fixed v ≠ q̇, e.g. Slotine–Li's C q̇_r, in O(N d)
    (engine/core/slotine_li_derivatives.hpp; ∂(C v)/∂v is C itself). ``factorization`` as in
    coriolis_matrix. q in the tangent space as in inverse_dynamics_derivatives. With ``data=``
    the results are ``data.dCv_dq, data.dCv_dqd``. Batches: q, qd, v of shape (K, ·)."""


@algorithm(compiled.slotine_li_derivatives, key="dslotine", shape=lambda r: (4, r.nv, r.nv), take=_four,
           batch=compiled.slotine_li_derivatives_batch, batch_take=_four_of_each,
           into="slotine_derivatives_block", returns="slotine_derivatives_outputs")
def slotine_li_derivatives(robot, q, qd, qd_r, qdd_r, gravity=True, factorization: str = "christoffel",
                           data: Data | None = None, out: np.ndarray | tuple | None = None):
    """(∂τ/∂q, ∂τ/∂q̇, C = ∂τ/∂q̇_r, M = ∂τ/∂q̈_r) of the Slotine–Li torque τ = M q̈_r + C q̇_r + g
    at (q, q̇, q̇_r, q̈_r), in O(N d) (engine/core/slotine_li_derivatives.hpp), the armature
    included: what linearizing a passivity-based or adaptive controller needs. q in the tangent
    space as in inverse_dynamics_derivatives. With ``data=`` the results are ``data.dslotine_dq,
    data.dslotine_dqd, data.dslotine_dqd_r, data.dslotine_dqdd_r``. Batches: (K, ·) states."""


@algorithm(compiled.gravity_derivatives, key="dg", shape=lambda r: (r.nv, r.nv), batch=compiled.gravity_derivatives_batch,
           into="dg_block", returns="dg_dq")
def gravity_derivatives(robot, q, gravity=True, data: Data | None = None, out: np.ndarray | tuple | None = None):
    """∂g/∂q of the gravity vector, in O(N d) (engine/core/gravity_derivatives.hpp; Pinocchio's
    computeGeneralizedGravityDerivatives). q in the tangent space as in
    inverse_dynamics_derivatives. With ``data=`` the result is ``data.dg_dq``. Batches: q (K, nq)."""


@algorithm(compiled.coriolis_transpose_derivatives, key="dCTqd", shape=lambda r: (2, r.nv, r.nv), take=_first_two,
           batch=compiled.coriolis_transpose_derivatives_batch, batch_take=_first_two_of_each,
           into="coriolis_transpose_block", returns="coriolis_transpose_outputs")
def coriolis_transpose_derivatives(robot, q, qd, data: Data | None = None, out: np.ndarray | tuple | None = None):
    """(∂(Cᵀq̇)/∂q, ∂(Cᵀq̇)/∂q̇) of coriolis_transpose_velocity's Cᵀ(q, q̇) q̇, in O(N d)
    (engine/core/coriolis_transpose_derivatives.hpp), the armature included: what linearizing a
    momentum observer needs. q in the tangent space as in inverse_dynamics_derivatives. With
    ``data=`` the results are ``data.dCTqd_dq, data.dCTqd_dqd``. Batches: q, qd of shape (K, ·)."""


def free_armature_guard(robot, K=1, data=None, **options):
    """A free joint's unequal linear armature (M_a = Rᵀ A R turns with the base) is not derived in
    second order yet."""
    tree = getattr(robot, "full", robot)
    for body in tree.bodies:
        if body.joint.type in ("free", "floating") and len(set(body.joint.armature[:3])) > 1:
            raise StateError(f"the second-order derivatives take a free joint's armature when its three linear DoF "
                             f"share it; '{body.joint.name}' has {tuple(body.joint.armature[:3])}")


def _second_guard(robot, K, data, force=False, **options):
    """Four nv³ tensors a state: Γ's guard (refused above GAMMA_MAX_BYTES unless ``force``, and above
    what the machine has), allocated in the workspace on first use; free_armature_guard's refusal."""
    free_armature_guard(robot)
    if data is not None:
        if data.second_out is None:
            data.ensure_second(force)
        return
    check_second_bytes(robot.nv, K, force)
    check_memory(gamma_bytes_for(robot.nv, 4 * K), "the second-order derivatives")


@algorithm(compiled.inverse_dynamics_second_derivatives, key="d2tau", shape=lambda r: (4, r.nv, r.nv, r.nv), take=_four,
           batch=compiled.inverse_dynamics_second_derivatives_batch, batch_take=_four_of_each, into="second_out",
           returns="second_outputs", guard=_second_guard)
def inverse_dynamics_second_derivatives(robot, q, qd, qdd, gravity=True, force: bool = False,
                                        data: Data | None = None, out: np.ndarray | tuple | None = None):
    """(∂²τ/∂q², ∂²τ/∂q̇², ∂²τ/∂q∂q̇, ∂²τ/∂q∂q̈) of τ = M q̈ + C q̇ + g at (q, q̇, q̈), each (nv, nv, nv)
    with ``[i, j, k] = ∂/∂x_j (∂τ_i/∂y_k)`` (engine/core/rnea_second_derivatives.hpp): the first
    derivatives' entries differentiated along each q_j, as their central differences along
    ``integrate(robot, q, δ)`` would be. ∂²τ/∂q̇² is Γ_ijk + Γ_ikj and ∂²τ/∂q∂q̈ is ∂M_ik/∂q_j. On free,
    spherical and planar joints q moves in the tangent space, where ∂²τ/∂q² is not symmetric in
    (j, k). Four nv³ tensors: above 256 MiB refused unless ``force=True``. With ``data=`` the
    results are ``data.second_outputs`` (``data.d2tau_dq2``, ``d2tau_dqd2``, ``d2tau_dqdqd``,
    ``d2tau_dqdqdd``), allocated on the first such call. Batches: (K, ·) states."""


@algorithm(compiled.inverse_dynamics_second_derivatives_contracted, key="lam_d2tau", shape=lambda r: (4, r.nv, r.nv),
           take=_four, batch=compiled.inverse_dynamics_second_derivatives_contracted_batch, batch_take=_four_of_each,
           into="contracted_block", returns="contracted_outputs", guard=free_armature_guard)
def inverse_dynamics_second_derivatives_contracted(robot, q, qd, qdd, lam, gravity=True, data: Data | None = None,
                                                   out: np.ndarray | tuple | None = None):
    """(λᵀ∂²τ/∂q², λᵀ∂²τ/∂q̇², λᵀ∂²τ/∂q∂q̇, λᵀ∂²τ/∂q∂q̈), each (nv, nv): Σ_i λ_i T[i, :, :] of
    inverse_dynamics_second_derivatives' four tensors T at (q, q̇, q̈), for a co-state λ (nv):
    the second-order terms full DDP adds to iLQR (Nganga & Wensing, RA-L 2021), [j, k] =
    ∂²(λᵀτ)/∂x_j∂y_k. Formed without the nv³ tensors (engine/core/rnea_second_derivatives.hpp),
    so no memory guard applies. q in the tangent space as there. With ``data=`` the results are
    ``data.contracted_outputs`` (``data.lam_d2tau_dq2``, ``lam_d2tau_dqd2``, ``lam_d2tau_dqdqd``,
    ``lam_d2tau_dqdqdd``). Batches: q, qd, qdd, lam of shape (K, ·)."""


def _one_state(robot, q, states):
    """One state of a composed function: float64 vectors of the robot's lengths, every entry finite,
    as they are (the functions it calls check them again on their fast paths); anything else
    converted and checked in full (calls.checked), with its messages."""
    given = (q, *(x for _, x in states))
    return given if finite_vectors(robot, given) else checked(robot, q, *states)


def _composed(robot, q, states, one_state, fields, guard, data):
    """A function composed of the public ones, in each form the compiled ones take: one state
    (checked), a batch (state by state, into arrays whose size ``guard(K)`` checks first) and
    ``data=`` (one state, into the workspace's ``fields``, each allocated on the first such call).
    ``states``: the (name, array) pairs after q; ``one_state(q, *states)``: a tuple of arrays."""
    try:
        batch = np.ndim(q) == 2
    except ValueError:  # a ragged list: the checked path says what is wrong with it, as everywhere
        checked(robot, q, *states)
        raise
    single = len(fields) == 1
    if data is not None:
        if batch:
            raise StateError(f"q: data= takes one state at a time, got a batch of {len(q)}; call without data= "
                             "for batches")
        check_data(robot, data, ReducedData if isinstance(robot, ReducedRobot) else Data)
        guard(1)
        results = one_state(*_one_state(robot, q, states))
        for name, result in zip(fields, results):
            if getattr(data, name) is None:
                setattr(data, name, np.empty_like(result))
            getattr(data, name)[...] = result
        out = tuple(getattr(data, name) for name in fields)
        return out[0] if single else out
    if batch:
        if any(np.ndim(x) != 2 or len(x) != len(q) for _, x in states):
            raise StateError(f"q and {', '.join(name for name, _ in states)} hold different numbers of states")
        guard(len(q))
        outs = None
        for s_ in range(len(q)):
            results = one_state(*_one_state(robot, q[s_], tuple((name, x[s_]) for name, x in states)))
            if outs is None:
                outs = tuple(np.empty((len(q), *r.shape)) for r in results)
            for o, r in zip(outs, results):
                o[s_] = r
        if outs is None:  # no states: the shapes one state would give
            probe = one_state(*checked(robot, robot.neutral_configuration(), *((n, np.zeros(robot.nv)) for n, _ in states)))
            outs = tuple(np.empty((0, *r.shape)) for r in probe)
        return outs[0] if single else outs
    guard(1)
    results = one_state(*_one_state(robot, q, states))
    return results[0] if single else results


@named("dC", ("dC_dq",))
def coriolis_matrix_derivatives(robot, q, qd, factorization: str = "christoffel", force: bool = False,
                                data: Data | None = None):
    """∂C/∂q, shape (nv, nv, nv) with ``[i, j, k] = ∂C_ij/∂q_k`` (q in the tangent space as in
    inverse_dynamics_derivatives): column j of C is C(q, q̇) e_j, so ``[:, j, :]`` is
    coriolis_product_derivatives' ∂(C e_j)/∂q, all nv of them in one batch, O(nv N d). (∂C/∂q̇ is
    Γ: C is linear in q̇.) nv³ doubles: Γ's guard, above 256 MiB refused unless ``force=True``.
    Batches: q, qd of shape (K, ·) give (K, nv, nv, nv). With ``data=`` (one state) the result is
    ``data.dC_dq``, allocated on the first such call."""
    n = robot.nv

    def guard(K):
        check_gamma_bytes(n, K, force, "∂C/∂q")
        check_memory(gamma_bytes_for(n, K + 2), f"∂C/∂q of {K} states" if K > 1 else "∂C/∂q")

    def one_state(q, qd):  # [j] = ∂(C e_j)/∂q, (nv, nv), for the nv unit vectors at once
        columns = coriolis_product_derivatives(robot, np.repeat(q[None], n, axis=0), np.repeat(qd[None], n, axis=0),
                                               np.eye(n), factorization)[0]
        return (np.ascontiguousarray(columns.transpose(1, 0, 2)),)

    return _composed(robot, q, (("qd", qd),), one_state, ("dC_dq",), guard, data)


def forward_second_order(robot, q, qd, tau, gravity, lam=None):
    """∂²q̈ (lam None: the four nv³ tensors) or λᵀ∂²q̈ (four nv x nv) at one checked state, from
    τ's: ID(q, q̇, FD(q, q̇, τ)) = τ differentiated twice gives, with a = q̈, T τ's tensors at a
    and [i, j, k] = ∂/∂x_j (∂·_i/∂y_k),

        M ∂²a/∂x_j∂y_k = −(T_xy[:, j, k] + [y = q] T_qa[:, k, :] a_x[:, j] + [x = q] T_qa[:, j, :] a_y[:, k]),
        M ∂²a/∂q_j∂τ_k = −T_qa[:, j, :] M⁻¹[:, k],

    and contracted with λ, τ's contraction with μ = M⁻¹ λ (M is symmetric)."""
    a = forward_dynamics(robot, q, qd, tau, gravity)
    a_q, a_v, Minv = forward_dynamics_derivatives(robot, q, qd, tau, gravity)
    if lam is not None:
        Cqq, Cvv, Cqv, Cqa = inverse_dynamics_second_derivatives_contracted(robot, q, qd, a, Minv @ lam, gravity)
        Cqa_aq = Cqa @ a_q
        return -(Cqq + Cqa_aq.T + Cqa_aq), -Cvv, -(Cqv + Cqa @ a_v), -(Cqa @ Minv)
    Tqq, Tvv, Tqv, Tqa = inverse_dynamics_second_derivatives(robot, q, qd, a, gravity, force=True)
    by_Minv = lambda T: -np.tensordot(Minv, T, axes=(1, 0))  # noqa: E731 (−M⁻¹ on the first index)
    Tqa_aq = np.tensordot(Tqa, a_q, axes=(2, 0))  # [i, j, k] = Σ_l T_qa[i, j, l] a_q[l, k]
    return (by_Minv(Tqq + Tqa_aq + Tqa_aq.transpose(0, 2, 1)), by_Minv(Tvv),
            by_Minv(Tqv + np.tensordot(Tqa, a_v, axes=(2, 0))), by_Minv(np.tensordot(Tqa, Minv, axes=(2, 0))))


@named("d2qdd", ("d2qdd_dq2", "d2qdd_dqd2", "d2qdd_dqdqd", "d2qdd_dqdtau"))
def forward_dynamics_second_derivatives(robot, q, qd, tau, gravity=True, force: bool = False,
                                        data: Data | None = None):
    """(∂²q̈/∂q², ∂²q̈/∂q̇², ∂²q̈/∂q∂q̇, ∂²q̈/∂q∂τ) of the forward dynamics q̈ = M⁻¹(τ − C q̇ − g), each
    (nv, nv, nv) with ``[i, j, k] = ∂/∂x_j (∂q̈_i/∂y_k)`` as for τ (inverse_dynamics_second_derivatives,
    whose tensors at q̈ and forward_dynamics_derivatives give them: see forward_second_order). q in
    the tangent space. Four nv³ tensors: the second derivatives' guard, above 256 MiB refused unless
    ``force=True``. Batches: q, qd, tau of shape (K, ·). With ``data=`` (one state) the results are
    ``data.d2qdd_dq2``, ``d2qdd_dqd2``, ``d2qdd_dqdqd``, ``d2qdd_dqdtau``, allocated on the first such call."""
    n = robot.nv
    gravity_for(robot, gravity)  # refused before any state; passed on as given (True: the fast paths)

    def guard(K):
        free_armature_guard(robot)
        check_second_bytes(n, K, force)
        check_memory(gamma_bytes_for(n, 4 * K + 8), "the forward dynamics' second-order derivatives")

    return _composed(robot, q, (("qd", qd), ("tau", tau)),
                     lambda q_, qd_, tau_: forward_second_order(robot, q_, qd_, tau_, gravity),
                     forward_dynamics_second_derivatives.names.outputs, guard, data)


@algorithm(compiled.forward_dynamics_second_derivatives_contracted, key="lam_d2qdd", shape=lambda r: (4, r.nv, r.nv),
           take=_four, batch=compiled.forward_dynamics_second_derivatives_contracted_batch, batch_take=_four_of_each,
           into="fd_contracted_block", returns="fd_contracted_outputs", guard=free_armature_guard)
def forward_dynamics_second_derivatives_contracted(robot, q, qd, tau, lam, gravity=True, data: Data | None = None,
                                                   out: np.ndarray | tuple | None = None):
    """(λᵀ∂²q̈/∂q², λᵀ∂²q̈/∂q̇², λᵀ∂²q̈/∂q∂q̇, λᵀ∂²q̈/∂q∂τ), each (nv, nv): Σ_i λ_i F[i, :, :] of
    forward_dynamics_second_derivatives' tensors F, from τ's contraction with μ = M⁻¹λ at q̈ and the
    first derivatives (engine/core/forward_dynamics_second_derivatives.hpp), without an nv³ array:
    what DDP on forward dynamics adds to iLQR. Batches: q, qd, tau, lam of shape (K, ·). With
    ``data=`` (one state) the results are ``data.fd_contracted_outputs`` (``data.lam_d2qdd_dq2``,
    ``lam_d2qdd_dqd2``, ``lam_d2qdd_dqdqd``, ``lam_d2qdd_dqdtau``)."""


# ---- Algorithm 4's momentum terms (core/momentum.hpp): p and Cᵀq̇ in one pass --------------------
@algorithm(compiled.momentum, key="p", shape=lambda r: (2, r.nv), take=lambda out: out[0], batch=compiled.momentum_batch,
           batch_take=lambda out: out[:, 0].copy(), into="momentum_block", returns="p")
def generalized_momentum(robot, q, qd, data: Data | None = None, out: np.ndarray | tuple | None = None):
    """p = M(q) q̇ by one O(N) recursion that forms no M (Wensing–Slotine App. B-B; core/momentum.hpp),
    armature included. With ``data=`` the result is ``data.p``. Batches: q, qd of shape (K, ·)."""


@algorithm(compiled.momentum, key="CTqd", shape=lambda r: (2, r.nv), take=lambda out: out[1], batch=compiled.momentum_batch,
           batch_take=lambda out: out[:, 1].copy(), into="momentum_block", returns="CTqd")
def coriolis_transpose_velocity(robot, q, qd, data: Data | None = None, out: np.ndarray | tuple | None = None):
    """C(q, q̇)ᵀ q̇ by one O(N) recursion that forms no C (eq. B-B1), the same for every C with
    Ṁ = C + Cᵀ: what a momentum observer needs. With ``data=`` the result is ``data.CTqd``."""


@algorithm(compiled.momentum_derivatives, key="dp", shape=_square, batch=compiled.momentum_derivatives_batch,
           into="dp_block", returns="dp_dq")
def momentum_derivatives(robot, q, qd, data: Data | None = None, out: np.ndarray | tuple | None = None):
    """∂p/∂q of the generalized momentum p = M(q) q̇, ``[i, j] = ∂p_i/∂q_j`` with q in the tangent
    space as in inverse_dynamics_derivatives, in O(N d) (engine/core/momentum_derivatives.hpp): the
    inverse dynamics' ∂τ/∂q at rest with q̈ = q̇ and no gravity, as M(q) u = τ(q, 0, u). For a
    momentum observer's or a trajectory optimizer's linearization; (∂p/∂q) q̇ = Ṁ q̇. With
    ``data=`` the result is ``data.dp_dq``. Batches: q, qd of shape (K, ·)."""


def _momentum_regressors(robot, out, states, arguments) -> MomentumRegressors:
    """The block (3 nv + 1, 10 N) (or (K, ·) of them) as its parts, and Y_V̇ = q̇ᵀ Y_g."""
    n, qd = robot.nv, states[1]
    Yg = out[..., 2 * n : 3 * n, :]
    return MomentumRegressors(out[..., :n, :], out[..., n : 2 * n, :], Yg, out[..., 3 * n, :],
                              np.einsum("...r,...rc->...c", qd, Yg))


@algorithm(compiled.momentum_regressors, key="Y_momentum",
           outputs=MOMENTUM_REGRESSORS, shape=lambda r: (3 * r.nv + 1, N_PARAMETERS * r.n_bodies),
           batch=compiled.momentum_regressor_batch, finish=_momentum_regressors)
def momentum_regressors(robot, q, qd, gravity=True) -> MomentumRegressors:
    """Y_p, Y_c, Y_g, Y_T and Y_V̇ at (q, q̇) (see MomentumRegressors), by one O(N d) pass with
    10 unit parameters per body, as ``regressor`` computes Y; for identification from momentum
    and energy, which need no q̈ (coriolis identify --form momentum|energy). Batches: q, qd of
    shape (K, ·) give each array with a leading K, in parallel."""


def _trajectory_states(robot, states, options):
    """Without q̈ the kernel's q̈ terms are computed and discarded (τ is NaN): q̇ stands in for it, as
    fresh zeros would cost a page fault per 4 KiB."""
    Q, QD, QDD = states
    return (Q, QD, QD if QDD is None else QDD), (QDD is not None, gravity_for(robot, options["gravity"]))


def _potential_offset(robot, out, states, arguments):
    """V from the computation frame's origin o to the world's: −m gᵀo (o: the first root joint's
    place; for a free root, the base's position in the world, which moves)."""
    Q, g = states[0], arguments[1]
    root = robot.bodies[0].joint
    if robot.arrays.ints[0, 1] == FREE_CODE:
        qs = int(robot.q_start[0])
        origin = np.asarray(root.translation) + Q[:, qs : qs + 3] @ np.asarray(root.rotation).T
    else:
        origin = np.broadcast_to(np.asarray(root.translation, float), (Q.shape[0], 3))
    out[:, -1] -= robot.total_mass * (origin @ np.asarray(g, float))
    return out


@algorithm(key="trajectory", outputs=TRAJECTORY_OUTPUTS, shape=lambda r: (TRAJECTORY_QUANTITIES * r.nv + 2,), batch=compiled.trajectory_batch, prepare=_trajectory_states,
           finish=_potential_offset)
def trajectory_dynamics(robot, Q, QD, QDD=None, gravity=True):
    """Along K samples (Q: (K, nq), QD, QDD: (K, nv)), one array (K, 5 nv + 2) whose columns are
    g, C q̇, Cᵀq̇, p = M q̇, τ = M q̈ + C q̇ + g (NaN without QDD), each nv wide, then the kinetic
    energy ½ q̇ᵀM q̇ and the potential energy −gᵀ Σ m_i c_i (world frame). One pass per sample,
    in parallel: what ``compute --recording`` streams."""


# ---- control: forward dynamics, Slotine–Li ---------------------------------------------------------
@algorithm(compiled.forward_dynamics, key="qdd", shape=_vector, batch=compiled.forward_dynamics_batch, into="qdd_out",
           returns="qdd")
def forward_dynamics(robot, q, qd, tau, gravity=True, data: Data | None = None, out: np.ndarray | tuple | None = None):
    """q̈ = M(q)⁻¹ (τ − C(q, q̇) q̇ − g(q)). Robots of 1-DoF joints under at most a free root take
    the articulated-body algorithm in body coordinates (engine/core/forward_dynamics.hpp), others
    CRBA, then M = LᵀDL factored along the tree with its branch-induced sparsity. With ``data=``
    the result is ``data.qdd``; ``data.M`` is not written (``mass_matrix(robot, q, data=data)``
    gives it). Batches: q, qd, tau of shape (K, ·)."""


@algorithm(compiled.slotine_li, key="slotine", shape=_vector, into="tau_out", returns="tau")
def slotine_li(robot, q, qd, qd_r, qdd_r, theta=None, gravity=True, factorization: str = "christoffel",
               data: Data | None = None):
    """τ = M(q) q̈_r + C(q, q̇) q̇_r + g(q) by the O(N) recursion of Wensing–Slotine Alg. 3, never
    forming C. ``theta`` (10 per body, see inertial_parameters) replaces the model's inertial
    parameters, e.g. an adaptive controller's estimate. ``factorization``: ``christoffel`` (the
    Christoffel-consistent C) or ``featherstone`` (admissible only). With ``data=`` the result
    is ``data.tau``."""


@algorithm(compiled.regressor, key="Y", outputs=("Y",), shape=lambda r: (r.nv + 1, N_PARAMETERS * r.n_bodies), take=lambda out: out[:-1],
           batch=compiled.regressor_batch, batch_shape=lambda r: (r.nv, N_PARAMETERS * r.n_bodies),
           batch_take=lambda out: out)
def regressor(robot, q, qd, qd_r, qdd_r, gravity=True, factorization: str = "christoffel", out: np.ndarray | tuple | None = None):
    """Y (nv x 10 N) with Y θ = slotine_li(robot, q, qd, qd_r, qdd_r, θ) for every θ (Wensing–Slotine
    Alg. 4), less the joints' armature, which is no inertial parameter (core/armature.hpp):
    Y θ + diag(a) q̈_r on joints other than free ones. At qd_r = qd it is Pinocchio's
    computeJointTorqueRegressor(q, qd, qdd_r). Batches: every state argument of shape (K, ·) gives
    Y of shape (K, nv, 10 N), in parallel."""


@algorithm(compiled.adaptation_gradient, key="YTs", outputs=("YTs",), shape=lambda r: (N_PARAMETERS * r.n_bodies,))
def adaptation_gradient(robot, q, qd, qd_r, qdd_r, gravity=True, factorization: str = "christoffel"):
    """Yᵀ s with s = q̇ − q̇_r, by the recursion of Alg. 3, line 9 ([Yᵀs]_j = 𝒴_jᵀ (v_j − w_j)),
    without the nv x 10N product: the Slotine–Li update is θ̂̇ = −P Yᵀ s."""


def gamma_bytes(robot, K: int = 1) -> int:
    """Bytes of Γ for K states of this robot."""
    return gamma_bytes_for(robot.nv, K)


def check_gamma_size(robot, K: int = 1, force: bool = False) -> None:
    """SizeError when Γ for K states would exceed the memory guard, unless ``force``."""
    check_gamma_bytes(robot.nv, K, force)


__all__ = [
    "FACTORIZATIONS",
    "GAMMA_MAX_BYTES",
    "Data",
    "QuaternionWarning",
    "adaptation_gradient",
    "check_gamma_size",
    "check_memory",
    "christoffel",
    "christoffel_largest",
    "christoffel_slices",
    "coriolis_matrix",
    "coriolis_matrix_derivatives",
    "coriolis_product_derivatives",
    "coriolis_transpose_derivatives",
    "coriolis_transpose_velocity",
    "create_data",
    "forward_dynamics",
    "forward_dynamics_derivatives",
    "gamma_bytes",
    "generalized_momentum",
    "gravity_derivatives",
    "gravity_vector",
    "inverse_dynamics",
    "inverse_dynamics_derivatives",
    "inverse_dynamics_second_derivatives",
    "inverse_dynamics_second_derivatives_contracted",
    "forward_dynamics_second_derivatives",
    "forward_dynamics_second_derivatives_contracted",
    "largest_entries",
    "mass_matrix",
    "momentum_derivatives",
    "momentum_regressors",
    "positive_definite",
    "regressor",
    "singular_mass_matrix",
    "slotine_li",
    "slotine_li_derivatives",
    "trajectory_dynamics",
]
