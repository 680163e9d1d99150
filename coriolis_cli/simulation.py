"""Closed-loop simulation of trajectory tracking: what the factorization of C does to a controller
(Wensing–Slotine Sec. IV-A; Slotine–Li).

Reference: every joint follows q_d(t) = c + A sin(2π f t + φ_j) with c the middle of its limits
(0 without limits), A a quarter of its range (at most 0.5 rad or m), f = 0.5 Hz and phases
φ_j = j π/4; the robot starts at rest, 0.1 away from q_d(0) on every joint. The gains are rates:
Λ = λ 1 and K_D = κ M(q), scheduled on the model's mass matrix at the current configuration, so
that M⁻¹K_D = κ 1 all along: every mode, heavy or light, is damped at κ. Any symmetric positive
definite K_D(q) leaves V̇ = −sᵀK_D s below; a constant one does not keep the rates: K_D = κ 1 makes
an arm's light wrist joints stiff beyond any step size, and with K_D = κ M(q_d(0)) an eigenvalue
of M(q)⁻¹K_D on the 20-link serial20 reaches 5,900 1/s along the reference, past RK4's stability
limit at 1 kHz (2,800 1/s).
With e = q − q_d, q̇_r = q̇_d − Λ e, q̈_r = q̈_d − Λ ė and s = q̇ − q̇_r:

- ``passivity``: τ = M q̈_r + C q̇_r + g − K_D s with the true parameters;
- ``slotine-li``: τ = Y θ̂ − K_D s and θ̂̇ = −γ Yᵀ s, θ̂ starting at half the true parameters;
- ``computed-torque``: τ = M (q̈_d − Λ² e − 2Λ ė) + C q̇ + g.

C is the ``factorization``'s: ``christoffel`` and ``featherstone`` are admissible (Ṁ − 2C skew),
``nonadmissible`` is the Christoffel C plus S = −1.5 K_D (1 − q̇q̇ᵀ/q̇ᵀq̇): S q̇ = 0, so C + S gives the
same C q̇ and the same equations of motion, but S is not skew-symmetric. With
V = ½ sᵀ M s (+ ½ θ̃ᵀ θ̃ / γ when adapting), the closed loop gives V̇ = −sᵀ K_D s − sᵀ S s: with an
admissible C V never rises; with C + S it rises whenever s is far from q̇'s direction.

The plant is integrated with fixed-step RK4, step 1/rate, the control law evaluated at every
stage (a continuous-time controller sampled at the integration step).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import StateError
from .model.parameters import inertial_parameters

CONTROLLERS = ("slotine-li", "passivity", "computed-torque")
FACTORIZATIONS = ("christoffel", "featherstone", "nonadmissible")
FREQUENCY = 0.5  # Hz
START_OFFSET = 0.1  # rad or m, on every joint
ESTIMATE_START = 0.5  # θ̂(0) = ESTIMATE_START · θ
MAX_AMPLITUDE = 0.5
NONADMISSIBLE_SCALE = 1.5  # S = −1.5 K_D (1 − q̇q̇ᵀ/q̇ᵀq̇): enough to undo K_D across q̇'s direction


@dataclass
class SimulationResult:
    robot: str
    settings: dict
    t: np.ndarray
    tracking_error: np.ndarray  # ‖e‖ per sample
    V: np.ndarray  # Lyapunov function per sample
    parameter_error: np.ndarray  # ‖θ̂ − θ‖ / ‖θ‖ per sample (zero without adaptation)
    theta_hat: np.ndarray  # final estimate
    theta: np.ndarray  # true parameters
    dof_names: tuple = field(default_factory=tuple)

    @property
    def largest_rise_of_V(self) -> float:
        """max over samples of V(t_k+1) − V(t_k), relative to V(0)."""
        return float(np.max(np.diff(self.V), initial=0.0) / max(self.V[0], 1e-300))

    def as_dict(self) -> dict:
        return {"robot": self.robot, "settings": self.settings, "t": self.t, "tracking_error": self.tracking_error,
                "V": self.V, "parameter_error": self.parameter_error, "theta_hat": self.theta_hat, "theta": self.theta,
                "largest_rise_of_V": self.largest_rise_of_V, "dof_names": list(self.dof_names)}


class Reference:
    """The smooth reference within the joint limits (see the module's docstring)."""

    def __init__(self, robot):
        n = robot.nv
        self.center, self.amplitude = np.zeros(n), np.full(n, MAX_AMPLITUDE)
        bodies = [robot.bodies[i] for i in getattr(getattr(robot, "map", None), "independent_bodies", range(robot.n_bodies))]
        for j, b in enumerate(bodies):
            lim = b.joint.limits
            if lim is not None and lim.lower is not None and lim.upper is not None and np.isfinite(lim.upper - lim.lower):
                self.center[j] = 0.5 * (lim.lower + lim.upper)
                self.amplitude[j] = min(MAX_AMPLITUDE, 0.25 * (lim.upper - lim.lower))
        self.phase = np.arange(n) * np.pi / 4
        self.w = 2 * np.pi * FREQUENCY

    def __call__(self, t: float):
        arg = self.w * t + self.phase
        s, c = np.sin(arg), np.cos(arg)
        return (self.center + self.amplitude * s, self.amplitude * self.w * c, -self.amplitude * self.w**2 * s)


def _check_robot(robot) -> None:
    if robot.floating_base:
        raise StateError("simulate needs a fixed-base robot (every DoF actuated); a floating base is not")
    if not robot.velocities_are_coordinates:
        raise StateError("simulate needs joints whose velocities are coordinates (revolute, continuous, prismatic)")


def simulation_steps(duration: float, rate: float) -> int:
    """The number of RK4 steps, or StateError for a duration or rate that cannot be simulated."""
    if not (np.isfinite(duration) and 0 < duration <= 3600) or not (np.isfinite(rate) and 1 <= rate <= 1e6):
        raise StateError("duration must be in (0, 3600] s and rate in [1, 1e6] Hz")
    steps = int(round(duration * rate))
    if steps < 1:
        raise StateError(f"a duration of {duration:g} s is shorter than one step at {rate:g} Hz")
    return steps


def simulate(robot, controller: str = "slotine-li", factorization: str = "christoffel", duration: float = 2.0,
             rate: float = 1000.0, gains=(10.0, 20.0), adaptation_gain: float = 1.0, progress=None) -> SimulationResult:
    """Track the reference for ``duration`` seconds; ``gains`` = (λ, κ) in 1/s (see the module's
    docstring). ``progress(k)`` is called with the number of steps done."""
    from . import engine

    if controller not in CONTROLLERS:
        raise StateError(f"controller must be one of {', '.join(CONTROLLERS)}, got '{controller}'")
    if factorization not in FACTORIZATIONS:
        raise StateError(f"factorization must be one of {', '.join(FACTORIZATIONS)}, got '{factorization}'")
    lam, kappa = (float(g) for g in gains)
    if not all(np.isfinite(x) and x > 0 for x in (lam, kappa, adaptation_gain)):
        raise StateError("gains (λ, κ) and the adaptation gain must be positive and finite")
    _check_robot(robot)
    steps = simulation_steps(duration, rate)
    if steps * robot.nv > 5e8:
        raise StateError(f"{steps:,} steps of a {robot.nv}-DoF robot is too long a run")
    h = 1.0 / rate
    n = robot.nv
    ref = Reference(robot)
    theta = inertial_parameters(getattr(robot, "full", robot))
    kind = "christoffel" if factorization == "nonadmissible" else factorization
    adapting = controller == "slotine-li"
    workspace = robot.create_data()

    def tracking(t, q, qd):
        """e, ė, q̈_d, q̇_r, q̈_r, s at time t (one evaluation of the reference)."""
        q_d, qd_d, qdd_d = ref(t)
        e, ed = q - q_d, qd - qd_d
        qd_r = qd_d - lam * e
        return e, ed, qdd_d, qd_r, qdd_d - lam * ed, qd - qd_r

    def law(t, q, qd, theta_hat):
        """τ and θ̂̇ at one instant."""
        e, ed, qdd_d, qd_r, qdd_r, s = tracking(t, q, qd)
        if controller == "computed-torque":
            return engine.inverse_dynamics(robot, q, qd, qdd_d - lam * lam * e - 2 * lam * ed), None
        kd = kappa * engine.mass_matrix(robot, q, data=workspace)  # K_D = κ M(q)
        tau = engine.slotine_li(robot, q, qd, qd_r, qdd_r, theta=theta_hat if adapting else None, factorization=kind)
        if factorization == "nonadmissible":
            tau = tau + _nonadmissible_S(qd, kd) @ qd_r
        tau = tau - kd @ s
        rate_hat = -adaptation_gain * engine.adaptation_gradient(robot, q, qd, qd_r, qdd_r, factorization=kind) if adapting else None
        return tau, rate_hat

    def diverged(t, why=""):
        return StateError(f"the simulation diverged at t = {t:.4g} s{why} (try lower --gains, a lower "
                          "--adaptation-gain or a higher --rate)")

    def f(t, x):
        q, qd = x[:n], x[n : 2 * n]
        if not np.all(np.isfinite(x)):
            raise diverged(t)
        theta_hat = x[2 * n :] if adapting else None
        with np.errstate(all="ignore"):  # a diverging run is reported once, below, not by NumPy
            tau, rate_hat = law(t, q, qd, theta_hat)
        if not np.all(np.isfinite(tau)):
            raise diverged(t, ": the control torque is not finite")
        qdd = engine.forward_dynamics(robot, q, qd, tau)
        return np.concatenate([qd, qdd, rate_hat]) if adapting else np.concatenate([qd, qdd])

    q0 = ref(0.0)[0] + START_OFFSET
    x = np.concatenate([q0, np.zeros(n)] + ([ESTIMATE_START * theta] if adapting else []))
    t_out = np.arange(steps + 1) * h
    err, V, perr = np.zeros(steps + 1), np.zeros(steps + 1), np.zeros(steps + 1)
    norm_theta = max(np.linalg.norm(theta), 1e-300)

    def record(k, t, x):
        """‖e‖, V = ½ sᵀMs (+ ½ θ̃ᵀθ̃/γ) and the parameter error after step k."""
        q = x[:n]
        e, _, _, _, _, s = tracking(t, q, x[n : 2 * n])
        err[k] = np.linalg.norm(e)
        V[k] = 0.5 * s @ engine.mass_matrix(robot, q) @ s
        if adapting:
            theta_err = x[2 * n :] - theta
            V[k] += 0.5 * theta_err @ theta_err / adaptation_gain
            perr[k] = np.linalg.norm(theta_err) / norm_theta

    record(0, 0.0, x)
    for k in range(steps):
        t = k * h
        k1 = f(t, x)
        k2 = f(t + h / 2, x + h / 2 * k1)
        k3 = f(t + h / 2, x + h / 2 * k2)
        k4 = f(t + h, x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        if not np.all(np.isfinite(x)):
            raise diverged(t + h)
        record(k + 1, t + h, x)
        if progress is not None and (k + 1) % 50 == 0:
            progress(k + 1)
    settings = {"controller": controller, "factorization": factorization, "duration_s": duration, "rate_hz": rate,
                "lambda": lam, "kappa": kappa, "k_d": "κ M(q)", "adaptation_gain": adaptation_gain if adapting else None,
                "integrator": f"RK4, step {h:g} s, control law at every stage",
                "reference": f"c + A sin(2π·{FREQUENCY} t + j π/4), A ≤ {MAX_AMPLITUDE}, start {START_OFFSET} off",
                "theta_hat_start": f"{ESTIMATE_START} × θ" if adapting else None}
    return SimulationResult(robot.name, settings, t_out, err, V, perr, x[2 * n :].copy() if adapting else theta.copy(),
                            theta, tuple(robot.dof_names))


def _nonadmissible_S(qd, kd):
    """S = −1.5 K_D (1 − q̇q̇ᵀ/q̇ᵀq̇): S q̇ = 0 and S not skew-symmetric; zero at rest."""
    n = qd.shape[0]
    qq = qd @ qd
    if qq == 0.0:
        return np.zeros((n, n))
    return -NONADMISSIBLE_SCALE * (kd - np.outer(kd @ qd, qd) / qq)
