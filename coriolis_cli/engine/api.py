"""The public functions of M, Ṁ, C, Γ, τ, g, q̈ and the Slotine–Li terms: one state or a batch.

Every function accepts one state (``q`` of shape (nq,)) or a batch (shape (K, nq)), in which case
results gain a leading K axis and the K states are evaluated in parallel (Slotine–Li: one state).
With ``data=`` (from ``robot.create_data()``, one state at a time) the results are written into
the workspace's own arrays and returned, allocating nothing.

This is the front only. Each call is sent, by the robot's type and in this one table, to the
tree's implementation (engine.tree_calls: fast path, checks, batches) or to the robots in other
coordinates (engine.coordinates: mimic joints, base velocities, closed loops), as
RigidBodyDynamics.jl chooses a method from its argument's type.
"""

from __future__ import annotations

from ..model.coordinates import ReducedRobot
from ..model.tree import RobotModel
from . import compiled, coordinates, tree_calls
from .calls import QuaternionWarning, positive_definite, singular_mass_matrix
from .conventions import CHRISTOFFEL, FACTORIZATIONS, MomentumRegressors
from .data import GAMMA_MAX_BYTES, Data, check_gamma_bytes, check_memory, gamma_bytes_for
from .selection import largest_entries
from .tree_calls import DEFAULT_FACTORIZATION, MODEL_THETA
from .workspaces import create_data


# the control loop's calls, made here to spare them a Python frame: a workspace of this robot and
# float64 vectors go straight to the core, which checks them; anything else, or anything the core
# reports (a status other than 0), goes the checked path of tree_calls or coordinates
_coriolis, _mass_matrix, _inverse_dynamics, _gravity_vector, _forward_dynamics, _slotine_li = (
    compiled.coriolis_matrix, compiled.mass_matrix, compiled.inverse_dynamics, compiled.gravity_vector,
    compiled.forward_dynamics, compiled.slotine_li)
IMPLEMENTATIONS = {RobotModel: tree_calls, ReducedRobot: coordinates}  # the one choice, by the robot's type


def _by_type(name: str) -> dict:
    """{robot class: its implementation of ``name``}: one dict look-up per call, no attribute."""
    return {cls: getattr(module, name) for cls, module in IMPLEMENTATIONS.items()}


def not_a_robot(name: str, robot) -> TypeError:
    return TypeError(f"{name}() takes a robot from coriolis_cli.load_robot (a RobotModel or a ReducedRobot), "
                     f"got {type(robot).__name__}")


_CORIOLIS_MATRIX, _CHRISTOFFEL, _CHRISTOFFEL_SLICES, _MASS_MATRIX, _INVERSE_DYNAMICS, _GRAVITY_VECTOR, _FORWARD_DYNAMICS, \
    _SLOTINE_LI, _REGRESSOR, _ADAPTATION_GRADIENT, _MOMENTUM, _CT_VELOCITY, _TRAJECTORY, _MOMENTUM_REGRESSORS = (
        _by_type(name) for name in (
            "coriolis_matrix", "christoffel", "christoffel_slices", "mass_matrix", "inverse_dynamics", "gravity_vector",
            "forward_dynamics", "slotine_li", "regressor", "adaptation_gradient", "generalized_momentum",
            "coriolis_transpose_velocity", "trajectory_dynamics", "momentum_regressors"))


def coriolis_matrix(robot, q, qd, factorization: str = DEFAULT_FACTORIZATION, data: Data | None = None):
    """Algorithm 1: ``M, Mdot, C`` at (q, q̇). ``factorization`` selects the body-level B:
    ``christoffel`` (eq. 10, C = Σ_k Γ[:, :, k] q̇_k) or ``featherstone`` (eq. 9, admissible only).

    With ``data=robot.create_data()`` the results are ``data.M, data.Mdot, data.C`` themselves,
    overwritten on every call."""
    if data is not None:  # the control loop's call; without data=, no exception to pay for
        try:
            if factorization is DEFAULT_FACTORIZATION and data.robot is robot \
                    and not _coriolis(data.core, q, qd, CHRISTOFFEL, data.coriolis_block):
                return data.coriolis_outputs
        except (AttributeError, TypeError, ValueError):
            pass
    try:
        implementation = _CORIOLIS_MATRIX[robot.__class__]
    except KeyError:
        raise not_a_robot("coriolis_matrix", robot) from None
    return implementation(robot, q, qd, factorization, data)


def christoffel(robot, q, force: bool = False, data: Data | None = None):
    """Algorithm 2: Christoffel symbols of the first kind, ``Gamma[i, j, k]`` with
    ``C[i, j] = Σ_k Gamma[i, j, k] q̇_k``. For a free joint ``Gamma[:, :, k] = C(q, e_k)``.

    Γ holds nv³ doubles: above 256 MiB it is refused unless ``force=True``. With ``data=`` the
    result is ``data.Gamma``, allocated on the first such call."""
    try:
        implementation = _CHRISTOFFEL[robot.__class__]
    except KeyError:
        raise not_a_robot("christoffel", robot) from None
    return implementation(robot, q, force, data)


def christoffel_slices(robot, q):
    """Γ one slice at a time, ``(k, Γ[:, :, k] = C(q, e_k))``, in O(nv²) memory whatever the robot."""
    try:
        implementation = _CHRISTOFFEL_SLICES[robot.__class__]
    except KeyError:
        raise not_a_robot("christoffel_slices", robot) from None
    return implementation(robot, q)


def christoffel_largest(robot, q, top: int, tiny: float = 0.0):
    """The ``top`` largest |Γ_ijk| without holding Γ: ``(entries, nonzero)`` with entries
    ``(i, j, k, value)`` largest first and the number of entries with |Γ_ijk| > ``tiny``."""
    return largest_entries(christoffel_slices(robot, q), robot.nv, top, tiny)


def mass_matrix(robot, q, data: Data | None = None):
    """Composite-rigid-body algorithm: M(q) (``data.M`` with ``data=``). Robots of 1-DoF joints under
    at most a free root take it in body coordinates (engine.crba_body)."""
    if data is not None:  # the control loop's call; without data=, no exception to pay for
        try:
            if data.robot is robot and not _mass_matrix(data.core, q, data.M_out):
                return data.M
        except (AttributeError, TypeError, ValueError):
            pass
    try:
        implementation = _MASS_MATRIX[robot.__class__]
    except KeyError:
        raise not_a_robot("mass_matrix", robot) from None
    return implementation(robot, q, data)


def inverse_dynamics(robot, q, qd, qdd, gravity=True, data: Data | None = None):
    """RNEA: τ = M q̈ + C q̇ + g. ``gravity``: True (the robot's: 9.81 m/s² along −z unless its
    file says otherwise, as MJCF can), False, or a 3-vector.
    With ``data=`` the result is ``data.tau``. Robots of 1-DoF joints under at most a free root take
    it in body coordinates (engine.rnea_body)."""
    if data is not None:  # the control loop's call; without data=, no exception to pay for
        try:
            if gravity is True and data.robot is robot \
                    and not _inverse_dynamics(data.core, q, qd, qdd, data.gravity, data.tau_out):
                return data.tau
        except (AttributeError, TypeError, ValueError):
            pass
    try:
        implementation = _INVERSE_DYNAMICS[robot.__class__]
    except KeyError:
        raise not_a_robot("inverse_dynamics", robot) from None
    return implementation(robot, q, qd, qdd, gravity, data)


def gravity_vector(robot, q, gravity=True, data: Data | None = None):
    """Generalized gravity g(q) = RNEA(q, 0, 0) (``data.g`` with ``data=``). Robots of 1-DoF joints
    under at most a free root take the RNEA at rest in body coordinates (engine.rnea_body)."""
    if data is not None:  # the control loop's call; without data=, no exception to pay for
        try:
            if gravity is True and data.robot is robot and not _gravity_vector(data.core, q, data.gravity, data.g_out):
                return data.g
        except (AttributeError, TypeError, ValueError):
            pass
    try:
        implementation = _GRAVITY_VECTOR[robot.__class__]
    except KeyError:
        raise not_a_robot("gravity_vector", robot) from None
    return implementation(robot, q, gravity, data)


def generalized_momentum(robot, q, qd, data: Data | None = None):
    """p = M(q) q̇ by one O(N) recursion that forms no M (Wensing–Slotine App. B-B; engine.momentum),
    armature included. With ``data=`` the result is ``data.p``. Batches: q, qd of shape (K, ·)."""
    try:
        implementation = _MOMENTUM[robot.__class__]
    except KeyError:
        raise not_a_robot("generalized_momentum", robot) from None
    return implementation(robot, q, qd, data)


def coriolis_transpose_velocity(robot, q, qd, data: Data | None = None):
    """C(q, q̇)ᵀ q̇ by one O(N) recursion that forms no C (eq. B-B1), the same for every C with
    Ṁ = C + Cᵀ: what a momentum observer needs. With ``data=`` the result is ``data.CTqd``."""
    try:
        implementation = _CT_VELOCITY[robot.__class__]
    except KeyError:
        raise not_a_robot("coriolis_transpose_velocity", robot) from None
    return implementation(robot, q, qd, data)


def momentum_regressors(robot, q, qd, gravity=True) -> MomentumRegressors:
    """Y_p, Y_c, Y_g, Y_T and Y_V̇ at (q, q̇) (see MomentumRegressors), by one O(N d) pass with
    10 unit parameters per body, as ``regressor`` computes Y; for identification from momentum
    and energy, which need no q̈ (coriolis identify --form momentum|energy). Batches: q, qd of
    shape (K, ·) give each array with a leading K, in parallel."""
    try:
        implementation = _MOMENTUM_REGRESSORS[robot.__class__]
    except KeyError:
        raise not_a_robot("momentum_regressors", robot) from None
    return implementation(robot, q, qd, gravity)


def trajectory_dynamics(robot, Q, QD, QDD=None, gravity=True):
    """Along K samples (Q: (K, nq), QD, QDD: (K, nv)), one array (K, 5 nv + 2) whose columns are
    g, C q̇, Cᵀq̇, p = M q̇, τ = M q̈ + C q̇ + g (NaN without QDD), each nv wide, then the kinetic
    energy ½ q̇ᵀM q̇ and the potential energy −gᵀ Σ m_i c_i (world frame). One pass per sample,
    in parallel: what ``compute --recording`` streams."""
    try:
        implementation = _TRAJECTORY[robot.__class__]
    except KeyError:
        raise not_a_robot("trajectory_dynamics", robot) from None
    return implementation(robot, Q, QD, QDD, gravity)


def forward_dynamics(robot, q, qd, tau, gravity=True, data: Data | None = None):
    """q̈ = M(q)⁻¹ (τ − C(q, q̇) q̇ − g(q)). Robots of 1-DoF joints under at most a free root take
    the articulated-body algorithm in body coordinates (engine.forward_dynamics_body), others
    CRBA, then M = LᵀDL factored along the tree with its branch-induced sparsity
    (engine.forward_dynamics). With ``data=`` the result is ``data.qdd``; ``data.M`` is not
    written (``mass_matrix(robot, q, data=data)`` gives it). Batches: q, qd, tau of shape (K, ·)."""
    if data is not None:  # the control loop's call; without data=, no exception to pay for
        try:
            if gravity is True and data.robot is robot \
                    and not _forward_dynamics(data.core, q, qd, tau, data.gravity, data.qdd_out):
                return data.qdd
        except (AttributeError, TypeError, ValueError):  # no Data, other types: below, checked
            pass
    try:
        implementation = _FORWARD_DYNAMICS[robot.__class__]
    except KeyError:
        raise not_a_robot("forward_dynamics", robot) from None
    return implementation(robot, q, qd, tau, gravity, data)


def slotine_li(robot, q, qd, qd_r, qdd_r, theta=None, gravity=True, factorization: str = DEFAULT_FACTORIZATION,
               data: Data | None = None):
    """τ = M(q) q̈_r + C(q, q̇) q̇_r + g(q) by the O(N) recursion of Wensing–Slotine Alg. 3, never
    forming C. ``theta`` (10 per body, see inertial_parameters) replaces the model's inertial
    parameters, e.g. an adaptive controller's estimate. ``factorization``: ``christoffel`` (the
    Christoffel-consistent C) or ``featherstone`` (admissible only). With ``data=`` the result
    is ``data.tau``."""
    if data is not None:  # the control loop's call; without data=, no exception to pay for
        try:  # with the model's parameters or an estimate
            if gravity is True and factorization is DEFAULT_FACTORIZATION and data.robot is robot \
                    and (theta is None or theta.size) and not _slotine_li(
                        data.core, q, qd, qd_r, qdd_r, data.gravity, MODEL_THETA if theta is None else theta, CHRISTOFFEL,
                        data.tau_out):
                return data.tau
        except (AttributeError, TypeError, ValueError):
            pass
    try:
        implementation = _SLOTINE_LI[robot.__class__]
    except KeyError:
        raise not_a_robot("slotine_li", robot) from None
    return implementation(robot, q, qd, qd_r, qdd_r, theta, gravity, factorization, data)


def regressor(robot, q, qd, qd_r, qdd_r, gravity=True, factorization: str = DEFAULT_FACTORIZATION):
    """Y (nv x 10 N) with Y θ = slotine_li(robot, q, qd, qd_r, qdd_r, θ) for every θ (Wensing–Slotine
    Alg. 4), less the joints' armature, which is no inertial parameter (engine.armature): Y θ + diag(a) q̈_r
    on joints other than free ones. At
    qd_r = qd it is Pinocchio's computeJointTorqueRegressor(q, qd, qdd_r). Batches: every state
    argument of shape (K, ·) gives Y of shape (K, nv, 10 N), in parallel."""
    try:
        implementation = _REGRESSOR[robot.__class__]
    except KeyError:
        raise not_a_robot("regressor", robot) from None
    return implementation(robot, q, qd, qd_r, qdd_r, gravity, factorization)


def adaptation_gradient(robot, q, qd, qd_r, qdd_r, gravity=True, factorization: str = DEFAULT_FACTORIZATION):
    """Yᵀ s with s = q̇ − q̇_r, by the recursion of Alg. 3, line 9 ([Yᵀs]_j = 𝒴_jᵀ (v_j − w_j)),
    without the nv x 10N product: the Slotine–Li update is θ̂̇ = −P Yᵀ s."""
    try:
        implementation = _ADAPTATION_GRADIENT[robot.__class__]
    except KeyError:
        raise not_a_robot("adaptation_gradient", robot) from None
    return implementation(robot, q, qd, qd_r, qdd_r, gravity, factorization)


def gamma_bytes(robot, K: int = 1) -> int:
    """Bytes of Γ for K states of this robot."""
    return gamma_bytes_for(robot.nv, K)


def check_gamma_size(robot, K: int = 1, force: bool = False) -> None:
    """SizeError when Γ for K states would exceed the memory guard, unless ``force``."""
    check_gamma_bytes(robot.nv, K, force)


__all__ = [
    "Data", "FACTORIZATIONS", "GAMMA_MAX_BYTES", "QuaternionWarning", "adaptation_gradient", "check_gamma_size", "check_memory",
    "christoffel", "christoffel_largest", "christoffel_slices", "coriolis_matrix", "create_data", "forward_dynamics",
    "gamma_bytes", "gravity_vector", "inverse_dynamics", "largest_entries", "mass_matrix", "positive_definite", "regressor",
    "singular_mass_matrix", "slotine_li",
]
