"""What the compiled core's numbers mean, for the Python layer: status codes, factorization
codes, gravity, the columns of a trajectory row and the momentum regressors' record. The numbers
are the core's own (engine/core: joints.hpp, spatial.hpp, momentum.hpp, forward_dynamics.hpp),
exported by the binding; this module says what they mean."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import compiled

# Status codes of the core's calls (core/joints.hpp). 0: fine. k > 0: entry k − 1 of (q, q̇, q̈)
# laid end to end is not finite. RECHECK: an argument is not a float64 vector of the right length
# and unit stride, to convert and check in full. Below that: −(2 + 2b) the quaternion of body b is
# zero (nothing computed), −(3 + 2b) it was normalized (results computed). SINGULAR + k: M is
# singular at DoF k (forward dynamics, nothing computed). OVERFLOW: every input finite, a result
# not (a state too large to compute with).
OK, RECHECK, SINGULAR, OVERFLOW = compiled.OK, compiled.RECHECK, compiled.SINGULAR, compiled.OVERFLOW

CHRISTOFFEL, FEATHERSTONE = compiled.CHRISTOFFEL, compiled.FEATHERSTONE
FACTORIZATIONS = {"christoffel": CHRISTOFFEL, "featherstone": FEATHERSTONE}

STANDARD_GRAVITY = np.array([0.0, 0.0, -9.81])  # m/s², world z up; gravity=True everywhere
STANDARD_GRAVITY.setflags(write=False)

# A pivot of M's LᵀDL below this share of M_kk means M is singular to working precision
# (core/forward_dynamics.hpp's PIVOT_SHARE).
PIVOT_SHARE = compiled.PIVOT_SHARE

# Columns of a trajectory row: g, C q̇, Cᵀq̇, p, τ (each nv), then T and V (computation frame).
G_COL, CQD_COL, CTQD_COL, P_COL, TAU_COL = compiled.TRAJECTORY_COLUMNS
TRAJECTORY_QUANTITIES = compiled.TRAJECTORY_QUANTITIES
# their names (trajectory_dynamics's outputs, compute --recording's --what and columns), the nv-wide
# ones in the core's order (tests/test_names.py), then the two energies as one
TRAJECTORY_OUTPUTS = ("g", "Cqd", "CTqd", "p", "tau", "energy")


class MomentumRegressors(NamedTuple):
    """The regressors of the momentum, Cᵀq̇, gravity and energy terms, returned by `momentum_regressors`.

    The dynamics are linear in the inertial parameters θ (10 per body, in the order of
    [inertial_parameters][coriolis_cli.inertial_parameters]); these matrices give, for any θ, the
    quantities that momentum-based observers and identification use, without q̈ (Wensing and
    Slotine's momentum regressors, computed in one O(N) pass by
    [momentum_regressors][coriolis_cli.momentum_regressors]). A joint's armature (rotor inertia) is
    not an inertial parameter and is left out. A named tuple: unpack it or read its fields. With a
    batch of K states, each field gains a leading K axis.

    Attributes
    ----------
    p : ndarray of shape (nv, 10 N) or (K, nv, 10 N)
        Momentum regressor: ``p @ theta`` is the generalized momentum M q̇ [kg·m²/s, kg·m/s].
    c : ndarray of shape (nv, 10 N) or (K, nv, 10 N)
        ``c @ theta`` is Cᵀq̇ [N·m, N].
    g : ndarray of shape (nv, 10 N) or (K, nv, 10 N)
        ``g @ theta`` is the gravity torque g(q) [N·m, N].
    T : ndarray of shape (10 N,) or (K, 10 N)
        ``T @ theta`` is the kinetic energy ½ q̇ᵀM q̇ [J].
    Vdot : ndarray of shape (10 N,) or (K, 10 N)
        ``Vdot @ theta`` is the rate of the potential energy, q̇ᵀg [W].

    N is the number of bodies of the robot's tree (``robot.n_bodies``), nv the robot's own number
    of velocities.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("planar_2link")
    >>> q, qd = [0.3, -0.5], [1.0, 2.0]
    >>> Y = cc.momentum_regressors(robot, q, qd)
    >>> Y.p.shape, Y.T.shape
    ((2, 20), (20,))
    >>> theta = cc.inertial_parameters(robot)
    >>> bool(np.allclose(Y.p @ theta, cc.generalized_momentum(robot, q, qd)))
    True
    """

    p: np.ndarray  # (nv, 10 N)
    c: np.ndarray  # (nv, 10 N)
    g: np.ndarray  # (nv, 10 N)
    T: np.ndarray  # (10 N,)
    Vdot: np.ndarray  # (10 N,)


# their names as momentum_regressors's outputs (Y_p, ...: p names the momentum itself)
MOMENTUM_REGRESSORS = tuple(f"Y_{field}" for field in MomentumRegressors._fields)


def failed(status: int) -> bool:
    """True for the status codes after which nothing was computed."""
    return status > 0 or status == RECHECK or (status < 0 and status % 2 == 0)
