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
    """Algorithm 4's regressors other than Y (Wensing–Slotine App. B-B): for every θ (10 per body,
    inertial_parameters' order), p θ = M q̇, c θ = Cᵀq̇, g θ = g, T θ = ½ q̇ᵀMq̇ and Vdot θ = q̇ᵀg,
    the joints' armature apart (no inertial parameter)."""

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
