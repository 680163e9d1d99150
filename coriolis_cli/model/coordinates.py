"""Other coordinates for a robot: q = φ(q̄), q̇ = A(q̄) q̄̇ (core paper Sec. 3.3, eqs. 22-27).

A coordinate map says how the tree's coordinates follow from fewer ones; :class:`ReducedRobot`
is a robot in those coordinates, which every command and API function takes like any robot (the
engine transforms M, C, Γ, g and τ, see :mod:`coriolis_cli.engine.coordinates`). Here, the map
for mimic joints: q_j = a·q_m + b for every ``<mimic joint="m" multiplier="a" offset="b"/>``,
chains resolved, so A is constant and Ȧ = 0.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..errors import ModelError
from . import services
from .mjcf import MujocoStates
from .tree import EngineCaches, RobotModel

MIMIC_MODES = ("independent", "enforce")
BASE_VELOCITIES = ("body", "mixed", "inertial")


class MimicMap:
    """q_i = P_i(q̄_m) on the configuration, q̇ = A(q̄) q̄̇ with A_im = P_i'(q̄_m): mimic joints follow
    their masters, P_i(x) = a x + b for URDF's <mimic>, a polynomial for MuJoCo's joint equalities
    (then A changes with q̄: Ȧ_im = P_i''(q̄_m) q̄̇_m and ∂²q_i/∂q̄_m² = P_i''(q̄_m)).

    Every mimic and master is a 1-DoF joint; other joints (free, planar, spherical) are copied."""

    def __init__(self, robot: RobotModel):
        from numpy.polynomial import Polynomial

        by_name = {b.joint.name: i for i, b in enumerate(robot.bodies)}
        mimic = {}
        for i, b in enumerate(robot.bodies):
            m = b.joint.mimic
            if m is None:
                continue
            if m.joint not in by_name:
                raise ModelError(f"joint '{b.joint.name}' mimics joint '{m.joint}', which does not exist or is fixed "
                                 "(it cannot be enforced)")
            for who in (i, by_name[m.joint]):
                if robot.bodies[who].joint.nv != 1:
                    raise ModelError(f"mimic joints must be 1-DoF joints; '{robot.bodies[who].joint.name}' is "
                                     f"{robot.bodies[who].joint.type}")
            mimic[i] = (by_name[m.joint], Polynomial([float(c) for c in m.coefficients]))

        def resolve(i, seen=()):
            """(master body, P) with q_i = P(q_master), through chains of mimics."""
            if i not in mimic:
                return i, Polynomial([0.0, 1.0])
            if i in seen:
                raise ModelError("mimic joints form a cycle: " + " -> ".join(robot.bodies[k].joint.name for k in seen + (i,)))
            m, p = mimic[i]
            root, inner = resolve(m, seen + (i,))
            return root, p(inner)  # composition: P_i(P_m(x))

        independent = [i for i in range(robot.n_bodies) if i not in mimic]
        self.robot = robot
        self.independent_bodies = tuple(independent)
        self.mimic_count = len(mimic)
        # reduced coordinates: the independent joints' own, in model order
        q_of, v_of = {}, {}
        nq = nv = 0
        for i in independent:
            q_of[i], v_of[i] = nq, nv
            nq += robot.bodies[i].joint.nq
            nv += robot.bodies[i].joint.nv
        self.nq, self.nv = nq, nv
        A = np.zeros((robot.nv, nv))
        Aq = np.zeros((robot.nq, nq))
        bq = np.zeros(robot.nq)
        curved = []  # (q index, v index, reduced q index, reduced v index, P, P', P'') of nonlinear mimics
        for i, body in enumerate(robot.bodies):
            qs, vs = int(robot.q_start[i]), int(robot.v_start[i])
            if i in mimic:
                root, p = resolve(i)
                c = np.trim_zeros(np.asarray(p.coef, float), "b")
                if c.size <= 2:  # affine: a constant column
                    c = np.concatenate([c, np.zeros(2 - c.size)])
                    A[vs, v_of[root]] = c[1]
                    Aq[qs, q_of[root]] = c[1]
                    bq[qs] = c[0]
                else:
                    curved.append((qs, vs, q_of[root], v_of[root], p, p.deriv(), p.deriv(2)))
            else:
                for k in range(body.joint.nv):
                    A[vs + k, v_of[i] + k] = 1.0
                for k in range(body.joint.nq):
                    Aq[qs + k, q_of[i] + k] = 1.0
        for arr in (A, Aq, bq):
            arr.setflags(write=False)
        self.A, self.Aq, self.bq, self.curved = A, Aq, bq, tuple(curved)

    # the map's interface, as engine.coordinates reads it
    velocities_are_coordinates = True

    def full_configuration(self, qbar: np.ndarray) -> np.ndarray:
        q = self.Aq @ qbar + self.bq
        for qs, _, rq, _, p, _, _ in self.curved:
            q[qs] = p(qbar[rq])
        return q

    def jacobian(self, qbar) -> np.ndarray:
        if not self.curved:
            return self.A
        A = self.A.copy()
        for _, vs, rq, rv, _, dp, _ in self.curved:
            A[vs, rv] = dp(qbar[rq])
        return A

    def jacobian_rate(self, qbar, vbar) -> np.ndarray | None:
        """Ȧ = Σ_k ∂A/∂q̄_k q̄̇_k, or None when it is zero."""
        if not self.curved:
            return None
        Adot = np.zeros_like(self.A)
        for _, vs, rq, rv, _, _, ddp in self.curved:
            Adot[vs, rv] = ddp(qbar[rq]) * vbar[rv]
        return Adot

    def rate_basis(self, qbar) -> np.ndarray | None:
        """D (nv, n̄v, n̄v) with Ȧ = Σ_k D[:, :, k] q̄̇_k: in coordinates ∂²q/∂q̄_j∂q̄_k; None when zero."""
        if not self.curved:
            return None
        D = np.zeros((self.A.shape[0], self.nv, self.nv))
        for _, vs, rq, rv, _, _, ddp in self.curved:
            D[vs, rv, rv] = ddp(qbar[rq])
        return D

    def reduce_configuration(self, q: np.ndarray) -> np.ndarray:
        """The reduced coordinates of a full configuration (the independent joints' entries)."""
        return np.concatenate([q[int(self.robot.q_start[i]) : int(self.robot.q_start[i]) + self.robot.bodies[i].joint.nq]
                               for i in self.independent_bodies]) if self.independent_bodies else np.zeros(0)


def _of_full(attribute: str) -> property:
    """A read-only attribute of a ReducedRobot that is its full model's."""
    return property(lambda self: getattr(self.full, attribute), doc=f"The full model's {attribute}.")


class ReducedRobot(EngineCaches, MujocoStates):
    """A robot in other coordinates. Sizes, names and configurations are the reduced ones; the
    tree, its description and physical checks are the full model's. The full model's packed
    arrays are not exposed: the engine must go through the change of coordinates."""

    is_reduced = True

    def __init__(self, full: RobotModel, cmap, mode: str):
        self.full = full
        self.map = cmap
        self.coordinates = mode  # e.g. "mimic: enforce"
        self.nq, self.nv = cmap.nq, cmap.nv

    # what is the full model's: the tree, its description and its physical checks
    name = _of_full("name")
    bodies = _of_full("bodies")
    description = _of_full("description")
    base_link = _of_full("base_link")
    floating_base = _of_full("floating_base")
    n_bodies = _of_full("n_bodies")
    depth = _of_full("depth")
    total_mass = _of_full("total_mass")
    inertia_issues = _of_full("inertia_issues")
    massless_joints = _of_full("massless_joints")
    singular_joints = _of_full("singular_joints")
    dof_order = _of_full("dof_order")
    gravity = _of_full("gravity")
    gravity_array = _of_full("gravity_array")
    standard_gravity = _of_full("standard_gravity")
    joint_names = _of_full("joint_names")

    # what is the reduced coordinates'
    @cached_property
    def dof_names(self) -> tuple[str, ...]:
        idx = self.map.independent_bodies
        return tuple(n for i in idx for n in _names(self.full, i)[1])

    @cached_property
    def config_names(self) -> tuple[str, ...]:
        idx = self.map.independent_bodies
        return tuple(n for i in idx for n in _names(self.full, i)[0])

    @property
    def velocities_are_coordinates(self) -> bool:
        return self.full.velocities_are_coordinates and self.map.velocities_are_coordinates

    @cached_property
    def dof_related(self) -> np.ndarray:
        """Reduced DoF i, j are related when full DoF they move are (else M̄_ij = C̄_ij = 0)."""
        pattern = getattr(self.map, "jacobian_pattern", None)  # a map whose A has no fixed pattern says which
        nz = (pattern() if pattern else np.abs(self.map.jacobian(self.neutral_configuration())) > 0).astype(int)
        return (nz.T @ self.full.dof_related.astype(int) @ nz) > 0

    def neutral_configuration(self) -> np.ndarray:
        return self.map.reduce_configuration(self.full.neutral_configuration())

    def random_configuration(self, rng=None) -> np.ndarray:
        if hasattr(self.map, "random_configuration"):  # e.g. closed loops: only where they close
            return self.map.random_configuration(rng)
        return self.map.reduce_configuration(self.full.random_configuration(rng))

    def integrate(self, qbar, vbar, t: float = 1.0) -> np.ndarray:
        """q̄ ⊕ q̄̇ t: the tree moves with the velocity A q̄̇ (each joint by its own rule, see
        model.joints.integrate), read back in the reduced coordinates."""
        q = self.map.full_configuration(np.asarray(qbar, dtype=float))
        v = self.map.jacobian(qbar) @ np.asarray(vbar, dtype=float)
        return self.map.reduce_configuration(self.full.integrate(q, v, t))


class BaseVelocityMap:
    """The free root joint's velocity in another representation; q is unchanged.

    iDynTree's names: ``body`` ν = [ᴮv; ᴮω] (BODY_FIXED, Pinocchio's, ours by default);
    ``mixed`` ν = [ṗ; ᴬω] (MIXED: the base origin's velocity and the angular velocity, world axes);
    ``inertial`` ν = [ṗ − ᴬω × p; ᴬω] (INERTIAL_FIXED, the right-trivialized twist). With R, p the
    base's pose in the world, ν_body = X ν: mixed X = diag(Rᵀ, Rᵀ); inertial X = [[Rᵀ, −Rᵀ p̂],
    [0, Rᵀ]]. Ȧ is linear in ν (Ṙᵀ = −ᴮω̂ Rᵀ), so Γ follows the generalized-speed definition."""

    velocities_are_coordinates = False

    def __init__(self, robot: RobotModel, representation: str):
        if representation not in BASE_VELOCITIES:
            raise ModelError(f"base velocity must be one of {', '.join(BASE_VELOCITIES)}, got '{representation}'")
        root = robot.bodies[0] if robot.n_bodies else None
        if root is None or root.parent >= 0 or root.joint.type not in ("free", "floating") or \
                sum(1 for b in robot.bodies if b.parent < 0) != 1:
            raise ModelError("base velocity representations need a floating base (use --floating-base, or a URDF "
                             "whose root joint is floating)")
        self.robot, self.representation = robot, representation
        self.nq, self.nv = robot.nq, robot.nv
        self.independent_bodies = tuple(range(robot.n_bodies))
        self.E, self.t = np.asarray(root.joint.rotation, float), np.asarray(root.joint.translation, float)

    def full_configuration(self, qbar):
        return np.asarray(qbar, dtype=float)

    def reduce_configuration(self, q):
        return np.asarray(q, dtype=float)

    # the evaluation is compiled (engine.base_velocity, through model.services); this class holds the structure
    block_base = True  # A = blockdiag(X, 1): engine.coordinates takes the block path

    def base_transform(self, qbar, nu=None):
        """X and, given the base's velocity ν (6) in this representation, Ẋ (else None): A is
        blockdiag(X, 1) and Ȧ blockdiag(Ẋ, 0)."""
        return services.engine("base_transform")(self, qbar, nu)

    def base_rate_basis(self, qbar):
        """Ẋ(e_k) for k < 6, shape (6, 6, 6)."""
        return services.engine("base_rate_basis")(self, qbar)

    def jacobian(self, qbar):
        A = np.eye(self.nv)
        A[0:6, 0:6] = self.base_transform(qbar)[0]
        return A

    def rate_basis(self, qbar):
        """Ȧ(e_k) for every k (nv x nv x nv); only the base's six are nonzero."""
        if self.representation == "body":
            return None
        D = np.zeros((self.nv, self.nv, self.nv))
        D[0:6, 0:6, 0:6] = self.base_rate_basis(qbar).transpose(1, 2, 0)
        return D

    def jacobian_rate(self, qbar, vbar):
        if self.representation == "body":
            return None
        Adot = np.zeros((self.nv, self.nv))
        Adot[0:6, 0:6] = self.base_transform(qbar, np.asarray(vbar, dtype=float)[0:6])[1]
        return Adot


def with_base_velocity(robot: RobotModel, representation: str) -> ReducedRobot:
    """The robot with its floating base's velocity in ``representation`` (body, mixed, inertial)."""
    return ReducedRobot(robot, BaseVelocityMap(robot, representation), f"base velocity: {representation}")


def _names(robot: RobotModel, i: int):
    from .joints import coordinate_names

    j = robot.bodies[i].joint
    return coordinate_names(j.name, j.type)


def enforce_mimic(robot: RobotModel) -> ReducedRobot:
    """The robot in the coordinates of its independent joints: mimic joints follow their masters."""
    cmap = MimicMap(robot)
    return ReducedRobot(robot, cmap, f"mimic: enforce ({cmap.mimic_count} mimic joint{'s' if cmap.mimic_count != 1 else ''})")
