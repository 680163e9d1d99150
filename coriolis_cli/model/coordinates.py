"""Other coordinates for a robot: q = φ(q̄), q̇ = A(q̄) q̄̇ (core paper Sec. 3.3, eqs. 22-27).

A coordinate map says how the tree's coordinates follow from fewer ones; :class:`ReducedRobot`
is a robot in those coordinates, which every command and API function takes like any robot (the
engine transforms M, C, Γ, g and τ, see :mod:`coriolis_cli.engine.coordinates`). The maps here
are the structure only, as the tree is: which coordinates are kept and how the others follow. The
engine evaluates them (q(q̄), A(q̄), Ȧ: ``engine.coordinates.evaluation``). Here, the maps for mimic
joints (q_j = a·q_m + b for every ``<mimic joint="m" multiplier="a" offset="b"/>``, chains
resolved, so A is constant and Ȧ = 0; or MuJoCo's polynomials) and for a floating base's velocity.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..errors import ModelError
from .tree import Caches, RobotModel

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

    velocities_are_coordinates = True

    def jacobian_pattern(self) -> np.ndarray:
        """Which full DoF each reduced one can move: A's nonzero entries, and each curved mimic's."""
        P = self.A != 0
        for _, vs, _, rv, _, _, _ in self.curved:
            P[vs, rv] = True
        return P

    def reduce_configuration(self, q: np.ndarray) -> np.ndarray:
        """The reduced coordinates of a full configuration (the independent joints' entries)."""
        return np.concatenate([q[int(self.robot.q_start[i]) : int(self.robot.q_start[i]) + self.robot.bodies[i].joint.nq]
                               for i in self.independent_bodies]) if self.independent_bodies else np.zeros(0)


def _of_full(attribute: str) -> property:
    """A read-only attribute of a ReducedRobot that is its full model's."""
    return property(lambda self: getattr(self.full, attribute), doc=f"The full model's {attribute}.")


class ReducedRobot(Caches):
    """A robot in other coordinates than its tree's: mimic joints enforced, closed loops, or a base velocity.

    [load_robot][coriolis_cli.load_robot] returns one for ``mimic="enforce"``, for a robot with
    closed loops, and for ``base_velocity="mixed"`` or ``"inertial"``. Its tree's coordinates
    follow from its own, q = φ(q̄) and q̇ = A(q̄) q̄̇, and every function takes it as it takes a tree:
    M̄ = AᵀMA, C̄ = AᵀCA + AᵀMȦ, ḡ = Aᵀg, and Γ̄ consistent with them, so that Ṁ̄ = C̄ + C̄ᵀ still
    holds. Sizes, names and configurations are the reduced coordinates'; the tree, its bodies,
    description and physical checks are the tree's (``robot.full``). To move in these coordinates,
    use [integrate][coriolis_cli.integrate] and
    [random_configuration][coriolis_cli.random_configuration].

    Attributes
    ----------
    full : RobotModel
        The tree, in its own coordinates.
    coordinates : str
        What the coordinates are, in words (``"mimic: enforce (1 mimic joint)"``, ``"closed loops:
        ..."``, ``"base velocity: mixed"``).
    nq, nv : int
        The lengths of a configuration and of a velocity in these coordinates.
    config_names, dof_names : tuple of str
        The names of the coordinates (lengths nq and nv): the kept joints', and for closed loops
        the independent ones.
    name, bodies, n_bodies, depth, joint_names, floating_base, base_link, gravity, total_mass
        The tree's, as on [RobotModel][coriolis_cli.RobotModel].
    inertia_issues, massless_joints, singular_joints, description, dof_order
        The tree's, as on [RobotModel][coriolis_cli.RobotModel].

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> # a four-bar linkage: three joints, one independent
    >>> robot = cc.load_robot("fourbar")
    >>> type(robot).__name__, robot.nv, robot.full.nv, robot.dof_names
    ('ReducedRobot', 1, 3, ('crank_joint',))
    >>> M, Mdot, C = cc.coriolis_matrix(robot, [0.3], [1.0])
    >>> M.shape, bool(np.allclose(Mdot, C + C.T))
    ((1, 1), True)
    """

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
        """The names of the velocity coordinates (length nv), in order."""
        if hasattr(self.map, "dof_names"):  # a map whose coordinates are not whole joints (closed loops)
            return self.map.dof_names
        return tuple(n for i in self.map.independent_bodies for n in _names(self.full, i)[1])

    @cached_property
    def config_names(self) -> tuple[str, ...]:
        """The names of the configuration coordinates (length nq), in order."""
        if hasattr(self.map, "config_names"):
            return self.map.config_names
        return tuple(n for i in self.map.independent_bodies for n in _names(self.full, i)[0])

    @property
    def velocities_are_coordinates(self) -> bool:
        """Whether the velocity is the derivative of q (not with a free, planar or spherical joint)."""
        return self.full.velocities_are_coordinates and self.map.velocities_are_coordinates

    @cached_property
    def dof_related(self) -> np.ndarray:
        """Boolean, shape (nv, nv): DoF i and j move related DoF of the tree (else M̄_ij = C̄_ij = 0)."""
        # counts of related pairs in float64, so that BLAS forms the product (NumPy's integer
        # matmul took 45 s at 1,500 DoF); sums of nonnegative integers below 2⁵³ are exact
        nz = self.map.jacobian_pattern().astype(float)
        return (nz.T @ self.full.dof_related.astype(float) @ nz) > 0

    def neutral_configuration(self) -> np.ndarray:
        """Return the tree's neutral configuration in these coordinates.

        Returns
        -------
        q : ndarray of shape (nq,)
            The configuration [rad or m].

        Examples
        --------
        >>> import coriolis_cli as cc
        >>> cc.load_robot("gripper", mimic="enforce").neutral_configuration().shape
        (3,)
        """
        return self.map.reduce_configuration(self.full.neutral_configuration())

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

    def reduce_configuration(self, q):
        return np.asarray(q, dtype=float)

    def jacobian_pattern(self) -> np.ndarray:
        """A = blockdiag(X, 1): the base's six coordinates move one another, every other DoF itself."""
        P = np.eye(self.nv, dtype=bool)
        P[0:6, 0:6] = True
        return P


def with_base_velocity(robot: RobotModel, representation: str) -> ReducedRobot:
    """The robot with its floating base's velocity in ``representation`` (body, mixed, inertial)."""
    return ReducedRobot(robot, BaseVelocityMap(robot, representation), f"base velocity: {representation}")


def coordinate_segments(robot) -> tuple:
    """(body, joint type, limits) per joint-like piece of the robot's q, in order: every joint of a
    tree; in other coordinates, the kept joints, and a closed loop's independent angles one by one."""
    if not getattr(robot, "is_reduced", False):
        return tuple((i, b.joint.type, b.joint.limits) for i, b in enumerate(robot.bodies))
    if hasattr(robot.map, "segments"):
        return robot.map.segments
    return tuple((i, robot.full.bodies[i].joint.type, robot.full.bodies[i].joint.limits)
                 for i in robot.map.independent_bodies)


def _names(robot: RobotModel, i: int):
    from .joints import coordinate_names

    j = robot.bodies[i].joint
    return coordinate_names(j.name, j.type)


def enforce_mimic(robot: RobotModel) -> ReducedRobot:
    """The robot in the coordinates of its independent joints: mimic joints follow their masters."""
    cmap = MimicMap(robot)
    return ReducedRobot(robot, cmap, f"mimic: enforce ({cmap.mimic_count} mimic joint{'s' if cmap.mimic_count != 1 else ''})")
