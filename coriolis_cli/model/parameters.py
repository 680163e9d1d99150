"""Inertial parameters: 10 per body in Pinocchio's order (``Inertia.toDynamicParameters``),

    θ_i = [m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz],

c the COM and I the rotational inertia about the body frame's origin, both in the body frame;
bodies in model order. The dynamics are linear in θ, which is what adaptive control and
identification use (engine.slotine_li).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelError, StateError
from .description import Inertial
from .tree import RobotModel, frozen_array

N_PARAMETERS = 10


def _about_origin(mass, com, inertia_com) -> np.ndarray:
    """I about the body origin from I about the COM (parallel axes)."""
    c = np.asarray(com, float)
    return np.asarray(inertia_com, float) + mass * (c @ c * np.eye(3) - np.outer(c, c))


def inertial_parameters(robot: RobotModel) -> np.ndarray:
    """Return the robot's inertial parameters θ, 10 per body.

    The dynamics are linear in θ, which is what identification and adaptive control use
    (`regressor`, `slotine_li`, `momentum_regressors`). Each body's ten are Pinocchio's
    (``Inertia.toDynamicParameters``):

        [m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]

    with m the mass [kg], c the centre of mass [m] and I the rotational inertia about the body
    frame's origin [kg·m²], both in the body frame. Bodies are in model order, the links that fixed
    joints merge into a body counted in it. For a robot in other coordinates they are its tree's
    bodies'.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].

    Returns
    -------
    theta : ndarray of shape (10 N,)
        The parameters, N = ``robot.n_bodies``.

    See Also
    --------
    - [`with_inertial_parameters`][coriolis_cli.with_inertial_parameters]: The robot with other parameters.

    Examples
    --------
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("planar_2link")
    >>> theta = cc.inertial_parameters(robot)
    >>> theta.shape
    (20,)
    >>> # the upper arm: m = 1 kg, its COM 0.5 m along x
    >>> [round(float(x), 6) for x in theta[:4]]
    [1.0, 0.5, 0.0, 0.0]
    """
    theta = np.zeros(N_PARAMETERS * robot.n_bodies)
    for i, b in enumerate(robot.bodies):
        J = _about_origin(b.mass, b.com, b.inertia)
        theta[N_PARAMETERS * i : N_PARAMETERS * (i + 1)] = (
            b.mass, *(b.mass * np.asarray(b.com)), J[0, 0], J[0, 1], J[1, 1], J[0, 2], J[1, 2], J[2, 2])
    return theta


def parameter_names(robot: RobotModel) -> tuple[str, ...]:
    names = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
    return tuple(f"{b.name}.{n}" for b in robot.bodies for n in names)


def check_parameters(robot: RobotModel, theta) -> np.ndarray:
    """θ as a contiguous float64 vector of the robot's length, every entry finite."""
    full = getattr(robot, "full", robot)
    try:
        th = np.ascontiguousarray(theta, dtype=float)
    except (TypeError, ValueError):
        raise StateError("theta must be numbers") from None
    need = N_PARAMETERS * full.n_bodies
    if th.shape != (need,):
        raise StateError(f"theta must hold 10 parameters per body, {need} for this robot, got shape {th.shape}")
    if not np.all(np.isfinite(th)):
        k = int(np.flatnonzero(~np.isfinite(th))[0])
        raise StateError(f"theta[{parameter_names(full)[k]}] is not finite ({th[k]})")
    return th


def with_inertial_parameters(robot: RobotModel, theta: ArrayLike) -> RobotModel:
    """Return the robot with every body's inertial parameters replaced by θ.

    The inverse of [inertial_parameters][coriolis_cli.inertial_parameters]: e.g. an adaptive
    controller's or an identification's estimate, to compute M, C, Γ and τ with it. The kinematics,
    joints and names are unchanged; each body's mass, centre of mass and inertia follow from its
    ten parameters, and are written on the body's link (the links merged into it lose theirs), so
    that the robot's description agrees with its bodies. The physical-consistency checks made at
    loading are not repeated: θ is used as given. For a robot in other coordinates (mimic joints
    enforced, a base velocity representation, closed loops) θ holds its tree's bodies' parameters,
    and the result is in the same coordinates.

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    theta : array_like of shape (10 N,)
        The parameters in the order of [inertial_parameters][coriolis_cli.inertial_parameters]
        [kg, kg·m, kg·m²], N = ``robot.n_bodies``.

    Returns
    -------
    robot : RobotModel or ReducedRobot
        A new robot of the same kind; ``robot`` itself is unchanged.

    Raises
    ------
    StateError
        If ``theta`` does not hold 10 numbers per body, or holds one that is not finite.
    ModelError
        If a body has zero mass and a nonzero first moment m c.

    See Also
    --------
    - [`inertial_parameters`][coriolis_cli.inertial_parameters]: The robot's parameters.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("planar_2link")
    >>> heavier = cc.with_inertial_parameters(
    ...     robot, 1.5 * cc.inertial_parameters(robot))
    >>> q = [0.3, -0.5]
    >>> bool(np.allclose(
    ...     cc.mass_matrix(heavier, q), 1.5 * cc.mass_matrix(robot, q)))
    True
    """
    if getattr(robot, "is_reduced", False):
        from .coordinates import BaseVelocityMap, MimicMap, enforce_mimic, with_base_velocity
        from .loops import LoopMap, close_loops

        full = _with_parameters(robot.full, theta)
        if isinstance(robot.map, MimicMap):
            return enforce_mimic(full)
        if isinstance(robot.map, BaseVelocityMap):
            return with_base_velocity(full, robot.map.representation)
        if isinstance(robot.map, LoopMap):
            return close_loops(full)
        raise ModelError(f"robot '{robot.name}': no parameters can be set in its coordinates")
    return _with_parameters(robot, theta)


def _with_parameters(robot: RobotModel, theta) -> RobotModel:
    """The robot with every body's inertial parameters replaced by θ (the inverse of
    inertial_parameters): e.g. an adaptive controller's estimate, to compute M, C, Γ with it.
    Each body's inertia is written on its own link and the links merged into it lose theirs, so
    that the description and every peer built from it see the same bodies."""
    th = check_parameters(robot, theta)
    bodies, links = [], {link.name: link for link in robot.description.links}
    for i, b in enumerate(robot.bodies):
        m, h = th[N_PARAMETERS * i], th[N_PARAMETERS * i + 1 : N_PARAMETERS * i + 4]
        Ixx, Ixy, Iyy, Ixz, Iyz, Izz = th[N_PARAMETERS * i + 4 : N_PARAMETERS * (i + 1)]
        J = np.array([[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]])
        if m == 0.0 and np.any(h):
            raise ModelError(f"body '{b.name}': a first moment m·c = {tuple(h)} with zero mass has no COM")
        com = h / m if m != 0.0 else np.zeros(3)
        Ic = J - m * (com @ com * np.eye(3) - np.outer(com, com))
        bodies.append(replace(b, mass=float(m), com=frozen_array(com), inertia=frozen_array(0.5 * (Ic + Ic.T))))
        links[b.name] = replace(links[b.name], inertial=Inertial(
            mass=float(m), xyz=tuple(float(x) for x in com),
            inertia=(Ic[0, 0], Ic[0, 1], Ic[0, 2], Ic[1, 1], Ic[1, 2], Ic[2, 2])))
        for name in b.merged_links:
            links[name] = replace(links[name], inertial=None)
        bodies[-1] = replace(bodies[-1], merged_links=())
    desc = replace(robot.description, links=tuple(links[link.name] for link in robot.description.links))
    return replace(robot, bodies=tuple(bodies), description=desc, inertia_issues=(), massless_joints=(),
                   singular_joints=())

