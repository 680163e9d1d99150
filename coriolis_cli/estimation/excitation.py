"""Excitation trajectories for identification (``coriolis excite``): a periodic trajectory per
joint, a finite Fourier series (Swevers et al., IEEE T-RA 1997),

    q_i(t) = q0_i + Σ_l  a_il/(ω l) sin(ω l t) − b_il/(ω l) cos(ω l t),   ω = 2π / period,

whose coefficients minimize the condition number of the stacked regressor W (the torque form's,
columns scaled by each parameter's size, restricted to the base parameters) over one period.
Limits hold by construction: any coefficients are scaled down until position (within the joint's
range, a margin kept), velocity and acceleration limits hold, with 1 % to spare, on a grid of
100 points per cycle of the highest harmonic. The trajectory is periodic."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .. import engine
from ..errors import StateError
from .identification import RANK_TOLERANCE, regressor_scales
from ..model.parameters import inertial_parameters

DEFAULT_VELOCITY = 2.0  # rad/s (m/s), where the file gives no velocity limit
MARGIN = 0.05  # of each joint's range, kept free at both ends


@dataclass
class Excitation:
    joint_names: tuple
    period: float
    harmonics: int
    q0: np.ndarray  # (n,)
    a: np.ndarray  # (n, harmonics)
    b: np.ndarray
    condition_start: float
    condition: float
    evaluations: int
    seconds: float

    def states(self, t: np.ndarray):
        """q, q̇, q̈ (k, n) at times t."""
        return _states(self.q0, self.a, self.b, self.period, np.asarray(t, float))


def _states(q0, a, b, period, t):
    w = 2 * np.pi / period
    lw = w * np.arange(1, a.shape[1] + 1)  # (L,)
    s, c = np.sin(np.outer(t, lw)), np.cos(np.outer(t, lw))  # (k, L)
    q = q0 + (s / lw) @ a.T - (c / lw) @ b.T
    qd = c @ a.T + s @ b.T
    qdd = -(s * lw) @ a.T + (c * lw) @ b.T
    return q, qd, qdd


def _bounds(robot, max_acceleration):
    """Per DoF: centre, half range (inf when the joint has none), velocity and acceleration limits."""
    centre, half, vel = [], [], []
    for body in robot.bodies:
        lim = body.joint.limits
        lo = lim.lower if lim is not None else None
        hi = lim.upper if lim is not None else None
        if body.joint.type in ("revolute", "prismatic") and lim is not None and (lo is None or hi is None or hi <= lo):
            # URDF reads a missing lower or upper as 0 (urdfdom, Pinocchio): such a joint cannot move
            given = "gives no lower and upper, which URDF reads as 0" if lo is None and hi is None else \
                f"gives the range [{0.0 if lo is None else lo:g}, {0.0 if hi is None else hi:g}] as URDF reads it"
            raise StateError(f"joint '{body.joint.name}': its <limit> {given}, so the joint cannot move; give its "
                             "lower and upper, make it continuous, or lock it (--lock)")
        if lo is not None and hi is not None and hi > lo:
            centre.append(0.5 * (lo + hi))
            half.append(0.5 * (hi - lo) * (1 - 2 * MARGIN))
        else:
            centre.append(0.0)
            half.append(np.inf)
        vel.append(lim.velocity if lim is not None and lim.velocity else DEFAULT_VELOCITY)
    n = len(centre)
    return np.array(centre), np.array(half), np.array(vel), np.full(n, float(max_acceleration))


MAX_HARMONICS = 50


def design(robot, period: float = 10.0, harmonics: int = 5, samples: int = 100, max_acceleration: float = 5.0,
           seed: int = 0, seconds: float = 60.0) -> Excitation:
    """The Fourier coefficients (see the module's docstring) that minimize cond(W), searched for
    at most ``seconds``; W stacks the regressor at ``samples`` instants of the period."""
    if getattr(robot, "is_reduced", False) or robot.floating_base or not robot.velocities_are_coordinates:
        raise StateError(f"robot '{robot.name}': excitation designs joint trajectories of a fixed-base robot of "
                         "1-DoF joints", hint="a floating base moves by its contacts, not by a trajectory")
    if not (period > 0 and harmonics >= 1 and samples >= 2 and max_acceleration > 0 and seconds > 0):
        raise StateError("period, harmonics, samples, max acceleration and time must be positive")
    if not all(np.isfinite(x) for x in (period, max_acceleration, seconds)):
        raise StateError("period, max acceleration and time must be finite")
    if harmonics > MAX_HARMONICS:
        raise StateError(f"{harmonics:,} harmonics: at most {MAX_HARMONICS} (each adds 2 coefficients per joint to "
                         "the search, and the limits of a real joint are met by a few)")
    from scipy.optimize import minimize

    n, L = robot.nv, harmonics
    centre, half, vel, acc = _bounds(robot, max_acceleration)
    # 100 points per cycle of the highest harmonic: the grid's peaks are within 0.05 % of the
    # true ones, which the 1 % kept below covers
    grid = np.linspace(0.0, period, 100 * L, endpoint=False)
    t = np.linspace(0.0, period, samples, endpoint=False)
    theta0 = inertial_parameters(robot)
    scale = regressor_scales(robot, theta0, 0)

    def feasible(x):
        a, b = x[: n * L].reshape(n, L), x[n * L :].reshape(n, L)
        q, qd, qdd = _states(np.zeros(n), a, b, period, grid)
        ratio = np.max([np.max(np.abs(q), axis=0) / half, np.max(np.abs(qd), axis=0) / vel,
                        np.max(np.abs(qdd), axis=0) / acc])
        k = 0.99 / ratio if ratio > 0 else 1.0
        return a * k, b * k

    def stacked(x):
        a, b = feasible(x)
        q, qd, qdd = _states(centre, a, b, period, t)
        Y = engine.regressor(robot, q, qd, qd, qdd)
        return Y.reshape(-1, Y.shape[2]) * scale

    rng = np.random.default_rng(seed)
    x = rng.normal(size=2 * n * L)
    W = stacked(x)
    eig, vec = np.linalg.eigh(W.T @ W)
    base = vec[:, eig > RANK_TOLERANCE * eig[-1]]  # the base parameters this robot's motion reaches

    def condition(x):
        s = np.linalg.svd(stacked(x) @ base, compute_uv=False)
        return float(s[0] / s[-1]) if s[-1] > 0 else 1e300

    start = time.perf_counter()
    first = condition(x)
    best = [first, x.copy(), 0]  # the best condition number seen, its coefficients, evaluations

    def objective(x):
        best[2] += 1
        if time.perf_counter() - start > seconds:
            raise _OutOfTime()
        value = condition(x)
        if value < best[0]:
            best[0], best[1] = value, x.copy()
        return np.log(value)

    try:
        minimize(objective, x, method="L-BFGS-B", options={"maxiter": 200})
    except _OutOfTime:
        pass
    a, b = feasible(best[1])
    return Excitation(tuple(robot.dof_names), period, L, centre, a, b, first, best[0], best[2],
                      time.perf_counter() - start)


class _OutOfTime(Exception):
    """The search's time is up: the best coefficients so far are the answer."""
