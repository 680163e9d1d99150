"""Closed-loop simulation of trajectory tracking: what the factorization of C does to a controller
(Wensing–Slotine Sec. IV-A; Slotine–Li).

Reference: every 1-DoF joint follows q_d(t) = c + A sin(2π f t + φ_j) with c the middle of its
limits (0 without limits), A a quarter of its range (at most 0.5 rad or m), f = 0.5 Hz and phases
φ_j = j π/4. A spherical joint turns about a fixed axis of its own, R_d(t) = exp(θ_d(t) n̂) with
θ_d a sinusoid as above; planar and free joints add sinusoids of their position. The robot starts
at rest, 0.1 away from the reference along every velocity coordinate.

Errors live where the velocities do: e = q − q_d for 1-DoF joints and positions, e = log(R_dᵀR)
for orientations (ν = ω in the child frame, as Pinocchio's spherical and free joints), with
q̇_r = q̇_d − Λ e carried into the child frame and q̈_r its exact time derivative along the motion
(for a rotation: q̇_r = R̃ᵀω_d − λe, q̈_r = R̃ᵀω̇_d − ω × R̃ᵀω_d − λ J_r⁻¹(e)(ω − R̃ᵀω_d), R̃ = R_dᵀR).
That q̈_r is d/dt q̇_r is what makes V̇ = −sᵀK_D s hold on every joint type.

The gains are rates: Λ = λ 1 and K_D = κ M(q), scheduled on the model's mass matrix at the current
configuration, so that M⁻¹K_D = κ 1 all along: every mode, heavy or light, is damped at κ.
With e, q̇_r, q̈_r as above and s = q̇ − q̇_r:

- ``passivity``: τ = M q̈_r + C q̇_r + g − K_D s with the true parameters;
- ``slotine-li``: τ = Y θ̂ − K_D s and θ̂̇ = −Γ Yᵀ s, θ̂ starting at half the true parameters;
- ``computed-torque``: τ = M (q̈_d − Λ² e − 2Λ ė) + C q̇ + g (1-DoF coordinates only).

The adaptation gain Γ is scaled to the robot (see :func:`adaptation_gains`): per parameter by
the square of its body's own parameter magnitudes (Lee, Wensing & Park's log-det metric at the
true parameters), per body so that every body adapts at a comparable rate, and as a whole so that
the fastest adaptation mode of the linearized loop sits at 4κ for γ = 1.

C is the ``factorization``'s: ``christoffel`` and ``featherstone`` are admissible (Ṁ − 2C skew),
``nonadmissible`` is the Christoffel C plus S = −1.5 K_D (1 − q̇q̇ᵀ/q̇ᵀq̇): S q̇ = 0, so C + S gives the
same C q̇ and the same equations of motion, but S is not skew-symmetric. With
V = ½ sᵀ M s (+ ½ θ̃ᵀ Γ⁻¹ θ̃ when adapting), the closed loop gives V̇ = −sᵀ K_D s − sᵀ S s: with an
admissible C V never rises; with C + S it rises whenever s is far from q̇'s direction.

The plant is integrated with fixed-step RK4, step 1/rate, the control law evaluated at every
stage (a continuous-time controller sampled at the integration step); configurations move along
the exponential map of the stages' velocities. The joints' friction from the robot file follows
each step by implicit Euler (_ImplicitFriction): a light joint's friction is far too stiff for an
explicit step. The robot file is the controllers' model too, so by default they compensate that
friction at their reference velocity, τ_f(q̇_r): the plant's τ_f(q̇) less it is monotone in
s = q̇ − q̇_r (b s, and c (tanh(q̇/ε) − tanh(q̇_r/ε)) of the sign of s), so it only adds to
V̇ = −sᵀ K_D s a further −sᵀ(τ_f(q̇) − τ_f(q̇_r)) ≤ 0, and q̇_r, a function of t and q, keeps the
compensation smooth. Unknown to them (``friction_known=False``), the adaptive law drifts on it:
example-robot-data's Allegro hand diverged at 0.69 s. Before running, the step is held against the
stiffest mode of the linearized closed loop. A run whose state stops being finite is a result
(``diverged_at``), not an error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import SingularMassMatrixError, StateError
from ..model import joints as joint_types
from ..model.coordinates import coordinate_segments
from ..model.friction import STATIC_SPEED, friction_torque, has_friction
from ..model.geometry import axis_angle, quat_to_matrix
from ..model.parameters import N_PARAMETERS, inertial_parameters

CONTROLLERS = ("slotine-li", "passivity", "computed-torque")
FACTORIZATIONS = ("christoffel", "featherstone", "nonadmissible")
FREQUENCY = 0.5  # Hz
START_OFFSET = 0.1  # rad or m, along every velocity coordinate
ESTIMATE_START = 0.5  # θ̂(0) = ESTIMATE_START · θ
MAX_AMPLITUDE = 0.5
NONADMISSIBLE_SCALE = 1.5  # S = −1.5 K_D (1 − q̇q̇ᵀ/q̇ᵀq̇): enough to undo K_D across q̇'s direction
# RK4 is stable for h·|μ| up to 2.78 on the negative real axis and 2.83 on the imaginary one; the
# margin covers the modes the linearization leaves out (C's, which grow with the speed)
RK4_STEP_LIMIT = 2.5
# Smallest eigenvalue of the unit-diagonal M(q) on the reference below which a run is refused:
# accelerations along that motion would be 10⁹ times those of the other joints.
NEAR_SINGULAR = 1e-9
MAX_STEPS = 50_000_000  # about half an hour at the fastest a step goes
SAMPLES_PER_PERIOD = 8  # reference states on which the adaptation gain is scaled
# At γ = 1 the fastest adaptation mode of the linearized loop is at ADAPTATION_SPEED · κ. Every
# other body adapts more slowly (at about ω_i²/κ), so the fastest must lie well above κ for light
# bodies to adapt within a run: on a 16-DoF hand and a 44-DoF humanoid, κ/2 left the tracking error
# at 0.3 after 2 s and 4κ brings it to 0.02-0.04, at h·|μ| = 0.08 for RK4 at 1 kHz.
ADAPTATION_SPEED = 4.0


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
    diverged_at: float | None = None  # time of the first sample that was not finite
    diverged_because: str = ""
    # the trajectory itself, per sample: what `simulate -o run.npz` writes and recordings read back
    q: np.ndarray | None = None
    qd: np.ndarray | None = None
    tau: np.ndarray | None = None  # the control torque applied at each sample
    config_names: tuple = field(default_factory=tuple)

    @property
    def diverged(self) -> bool:
        return self.diverged_at is not None

    @property
    def largest_rise_of_V(self) -> float:
        """max over samples of V(t_k+1) − V(t_k), relative to V(0); 0 when V never rises."""
        return float(max(np.max(np.diff(self.V), initial=0.0), 0.0) / max(self.V[0], 1e-300))

    def as_dict(self) -> dict:
        return {"robot": self.robot, "settings": self.settings, "diverged": self.diverged,
                "diverged_at_s": self.diverged_at, "diverged_because": self.diverged_because or None,
                "t": self.t, "tracking_error": self.tracking_error, "V": self.V, "parameter_error": self.parameter_error,
                "theta_hat": self.theta_hat, "theta": self.theta, "largest_rise_of_V": self.largest_rise_of_V,
                "dof_names": list(self.dof_names), "config_names": list(self.config_names),
                "q": self.q, "qd": self.qd, "tau": self.tau}


# ---- the joints as the simulation sees them ------------------------------------------------------
@dataclass(frozen=True)
class _Segment:
    kind: str  # "scalar" (1-DoF), "spherical", "planar" or "free"
    q: slice
    v: slice
    index: int  # the joint's place among the robot's joints (phases, axes)


def _segments(robot) -> tuple[np.ndarray, np.ndarray, list[_Segment], list]:
    """(q indices, v indices) of the 1-DoF coordinates, the multi-DoF joints, and every 1-DoF
    coordinate's limits, in the robot's own coordinates (the independent joints of a robot in
    other coordinates)."""
    scalar_q, scalar_v, limits, multi = [], [], [], []
    qi = vi = 0
    for n, (_, type_name, joint_limits) in enumerate(coordinate_segments(robot)):
        jt = joint_types.joint_type(type_name)
        if jt.nv == 1:
            scalar_q.append(qi)
            scalar_v.append(vi)
            limits.append(joint_limits)
        else:
            kind = "free" if type_name in ("free", "floating") else type_name
            multi.append(_Segment(kind, slice(qi, qi + jt.nq), slice(vi, vi + jt.nv), n))
        qi += jt.nq
        vi += jt.nv
    return np.array(scalar_q, dtype=int), np.array(scalar_v, dtype=int), multi, limits


def _log_so3(R: np.ndarray) -> np.ndarray:
    """The rotation vector of R (|·| ≤ π)."""
    c = min(max(0.5 * (np.trace(R) - 1.0), -1.0), 1.0)
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    angle = math.acos(c)
    if angle < 1e-6:
        return 0.5 * w * (1.0 + angle * angle / 6.0)
    if angle > math.pi - 1e-6:  # near π: the axis from R + 1 (its largest column)
        B = 0.5 * (R + np.eye(3))
        k = int(np.argmax(np.diag(B)))
        axis = B[:, k] / math.sqrt(max(B[k, k], 1e-300))
        axis *= math.copysign(1.0, axis @ w) if np.any(w) else 1.0
        return angle * axis / np.linalg.norm(axis)
    return angle / (2.0 * math.sin(angle)) * w


def _right_jacobian_inverse(e: np.ndarray) -> np.ndarray:
    """J_r⁻¹(e): ė = J_r⁻¹(e) ω for R = exp(e) turning at ω in its own frame."""
    E = np.array([[0.0, -e[2], e[1]], [e[2], 0.0, -e[0]], [-e[1], e[0], 0.0]])
    th = float(np.linalg.norm(e))
    if th < 1e-4:
        k = 1.0 / 12.0 + th * th / 720.0
    else:
        k = 1.0 / (th * th) - (1.0 + math.cos(th)) / (2.0 * th * math.sin(th))
    return np.eye(3) + 0.5 * E + k * (E @ E)


class Reference:
    """The smooth reference within the joint limits and the tracking terms of every joint (see the
    module's docstring)."""

    def __init__(self, robot, lam: float):
        self.nq, self.nv, self.lam = robot.nq, robot.nv, lam
        self.sq, self.sv, self.multi, limits = _segments(robot)
        n = len(self.sv)
        self.center, self.amplitude = np.zeros(n), np.full(n, MAX_AMPLITUDE)
        for j, lim in enumerate(limits):
            bounds = joint_types.finite_limits(lim)
            if bounds is not None:
                self.center[j] = 0.5 * (bounds[0] + bounds[1])
                self.amplitude[j] = min(MAX_AMPLITUDE, 0.25 * (bounds[1] - bounds[0]))
        self.phase = self.sv * np.pi / 4
        self.w = 2 * np.pi * FREQUENCY
        # each orientation turns about its own fixed axis, different from joint to joint
        self.axes = {}
        for seg in self.multi:
            a = np.array([1.0, 2.0, 3.0])
            a = np.roll(a, seg.index % 3) * (1.0 if seg.index % 2 == 0 else -1.0)
            self.axes[seg.index] = a / np.linalg.norm(a)

    def _wave(self, t, phase):
        arg = self.w * t + phase
        s, c = np.sin(arg), np.cos(arg)
        return MAX_AMPLITUDE * s, MAX_AMPLITUDE * self.w * c, -MAX_AMPLITUDE * self.w**2 * s

    def configuration(self, t: float) -> np.ndarray:
        """q_d(t)."""
        q = np.zeros(self.nq)
        arg = self.w * t + self.phase
        q[self.sq] = self.center + self.amplitude * np.sin(arg)
        for seg in self.multi:
            base = seg.v.start * np.pi / 4
            th = self._wave(t, base)[0]
            quat = _quaternion(self.axes[seg.index], th)
            if seg.kind == "spherical":
                q[seg.q] = quat
            elif seg.kind == "free":
                q[seg.q.start : seg.q.start + 3] = self._wave(t, base + np.arange(1, 4) * np.pi / 4)[0]
                q[seg.q.start + 3 : seg.q.stop] = quat
            else:  # planar: x, y, cos θ, sin θ
                q[seg.q] = (*self._wave(t, base + np.arange(1, 3) * np.pi / 4)[0], math.cos(th), math.sin(th))
        return q

    def tracking(self, t: float, q: np.ndarray, qd: np.ndarray):
        """(e, q̇_r, q̈_r, s) at time t for the state (q, q̇)."""
        lam = self.lam
        e, qd_r, qdd_r = np.empty(self.nv), np.empty(self.nv), np.empty(self.nv)
        arg = self.w * t + self.phase
        sn, cs = np.sin(arg), np.cos(arg)
        x, xd, xdd = self.center + self.amplitude * sn, self.amplitude * self.w * cs, -self.amplitude * self.w**2 * sn
        es = q[self.sq] - x
        e[self.sv] = es
        qd_r[self.sv] = xd - lam * es
        qdd_r[self.sv] = xdd - lam * (qd[self.sv] - xd)
        for seg in self.multi:
            self._multi(seg, t, q[seg.q], qd[seg.v], e[seg.v], qd_r[seg.v], qdd_r[seg.v])
        return e, qd_r, qdd_r, qd - qd_r

    def _multi(self, seg, t, q, v, e, qd_r, qdd_r):
        lam = self.lam
        base = seg.v.start * np.pi / 4
        th, thd, thdd = self._wave(t, base)
        n = self.axes[seg.index]
        if seg.kind == "planar":
            x, xd, xdd = self._wave(t, base + np.arange(1, 3) * np.pi / 4)
            c, s = q[2:4] / math.hypot(q[2], q[3])
            R = np.array([[c, -s], [s, c]])
            ep = q[0:2] - x
            u = xd - lam * ep
            lin = R.T @ u
            turn = np.array([-lin[1], lin[0]]) * v[2]  # ω ẑ × (Rᵀu)
            e[0:2], qd_r[0:2] = ep, lin
            qdd_r[0:2] = R.T @ (xdd - lam * (R @ v[0:2] - xd)) - turn
            angle = math.atan2(s, c) - th
            angle = (angle + math.pi) % (2 * math.pi) - math.pi
            e[2], qd_r[2], qdd_r[2] = angle, thd - lam * angle, thdd - lam * (v[2] - thd)
            return
        rot = q if seg.kind == "spherical" else q[3:7]
        R = quat_to_matrix(rot / np.linalg.norm(rot))
        w = v if seg.kind == "spherical" else v[3:6]
        Rt = axis_angle(n, th).T @ R  # R̃ = R_dᵀ R
        er = _log_so3(Rt)
        u = Rt.T @ (thd * n)  # ω_d in the child frame
        w_r = u - lam * er
        a_r = Rt.T @ (thdd * n) - np.cross(w, u) - lam * (_right_jacobian_inverse(er) @ (w - u))
        if seg.kind == "spherical":
            e[:], qd_r[:], qdd_r[:] = er, w_r, a_r
            return
        x, xd, xdd = self._wave(t, base + np.arange(1, 4) * np.pi / 4)
        ep = q[0:3] - x
        lin = R.T @ (xd - lam * ep)
        e[0:3], qd_r[0:3] = ep, lin
        qdd_r[0:3] = R.T @ (xdd - lam * (R @ v[0:3] - xd)) - np.cross(w, lin)
        e[3:6], qd_r[3:6], qdd_r[3:6] = er, w_r, a_r

    def integrate(self, q: np.ndarray, dv: np.ndarray) -> np.ndarray:
        """q ⊕ dv: angles and positions add, orientations move along the exponential map."""
        out = q.copy()
        out[self.sq] += dv[self.sv]
        for seg in self.multi:
            joint_types.integrate(seg.kind, q[seg.q], dv[seg.v], 1.0, out[seg.q])
        return out


def _quaternion(axis, angle) -> np.ndarray:
    s = math.sin(0.5 * angle)
    return np.array([s * axis[0], s * axis[1], s * axis[2], math.cos(0.5 * angle)])


# ---- the adaptation gain ------------------------------------------------------------------------
def log_det_scales(theta: np.ndarray) -> np.ndarray:
    """σ (10 per body): the size each parameter of a body can have, from the body's own mass m and
    rotational inertia J about its frame's origin: m for the mass, √(m tr J / 2) for the first
    moments, tr J / 2 for the inertias. A physically consistent body has |θ_k| ≤ σ_k."""
    th = theta.reshape(-1, N_PARAMETERS)
    m = np.abs(th[:, 0])
    half_trace = 0.5 * np.abs(th[:, 4] + th[:, 6] + th[:, 9])
    sigma = np.empty_like(th)
    sigma[:, 0] = m
    sigma[:, 1:4] = np.sqrt(m * half_trace)[:, None]
    sigma[:, 4:] = half_trace[:, None]
    return np.maximum(sigma, np.abs(th)).ravel()


def sample_states(robot, reference: Reference, q0: np.ndarray) -> list[tuple]:
    """(q, q̇, q̇_r, q̈_r) on the reference (s = 0) at SAMPLES_PER_PERIOD instants of one period, and
    the start (at rest, off the reference): the states a run is checked and scaled on."""
    states = []
    zero = np.zeros(robot.nv)
    for t in np.arange(SAMPLES_PER_PERIOD) / (SAMPLES_PER_PERIOD * FREQUENCY):
        q = reference.configuration(t)
        qd = reference.tracking(t, q, zero)[1]  # q̇_d: e = 0 on the reference
        _, qd_r, qdd_r, _ = reference.tracking(t, q, qd)
        states.append((q, qd, qd_r, qdd_r))
    _, qd_r, qdd_r, _ = reference.tracking(0.0, q0, zero)
    states.append((q0, zero, qd_r, qdd_r))
    return states


def adaptation_gains(robot, states, masses, theta: np.ndarray, kappa: float) -> np.ndarray:
    """Γ₀ (diagonal, 10 per body) for θ̂̇ = −γ Γ₀ Yᵀ s.

    Units and sizes differ by orders of magnitude between parameters (kg, kg m, kg m²) and between
    bodies (a 1e-3 kg finger beside a 10 kg torso), so one scalar gain cannot suit them all. Γ₀ is
    diag(σ²) (σ from :func:`log_det_scales`: the inverse of the log-det Bregman divergence's
    Hessian at the true parameters, Lee, Wensing & Park 2018, in diagonal form), divided per body by
    the share that body has in the linearized loop's adaptation modes, then as a whole so that the
    fastest of them is ADAPTATION_SPEED · κ. The loop's adaptation modes solve μ² + κμ + ω² = 0 with
    ω² the eigenvalues of M⁻¹ Y Γ Yᵀ, taken on ``states`` (:func:`sample_states`) whose M are
    ``masses`` (:func:`check_invertible`'s).
    """
    from .. import engine

    sigma2 = log_det_scales(theta) ** 2
    n_bodies = sigma2.size // N_PARAMETERS
    whitened = []
    for (q, qd, qd_r, qdd_r), M in zip(states, masses):
        L = np.linalg.cholesky(M)
        whitened.append(np.linalg.solve(L, engine.regressor(robot, q, qd, qd_r, qdd_r)))  # L⁻¹ Y
    share = np.mean([(Z * Z).sum(axis=0) * sigma2 for Z in whitened], axis=0).reshape(n_bodies, N_PARAMETERS).sum(axis=1)
    if not np.any(share > 0):
        return np.zeros_like(sigma2)
    share = np.maximum(share, 1e-12 * share.max())
    gains = sigma2 / np.repeat(share, N_PARAMETERS)
    fastest = max(float(np.linalg.eigvalsh((Z * gains) @ Z.T)[-1]) for Z in whitened)
    return gains * (ADAPTATION_SPEED * kappa) ** 2 / fastest


def check_invertible(robot, q) -> np.ndarray:
    """M(q), or SingularMassMatrixError naming the joint to lock when M is singular or so nearly
    singular (smallest eigenvalue of the unit-diagonal M below NEAR_SINGULAR) that a run would
    see accelerations without bound: the leafmost joint of the null motion."""
    from .. import engine

    M = engine.mass_matrix(robot, q)
    d = np.sqrt(np.maximum(np.diag(M), 0.0))
    scaled = M / np.outer(np.where(d > 0, d, 1.0), np.where(d > 0, d, 1.0))
    w, vectors = np.linalg.eigh(scaled)
    if d.min() > 0 and w[0] > NEAR_SINGULAR:
        return M
    if d.min() <= 0:
        k = int(np.flatnonzero(d <= 0)[-1])
    else:
        null = np.abs(vectors[:, 0])
        k = int(np.flatnonzero(null > 0.3 * null.max())[-1])
    raise engine.singular_mass_matrix(getattr(robot, "full", robot), [_joint_of_dof(robot, k)])


def _joint_of_dof(robot, k: int) -> str:
    if getattr(robot, "is_reduced", False):
        return robot.dof_names[k]
    return robot.bodies[int(robot.col_body[k])].joint.name


# ---- the run ------------------------------------------------------------------------------------
def _check_robot(robot, controller: str) -> None:
    if robot.floating_base:
        raise StateError("simulate needs a fixed-base robot (every DoF actuated); a floating base is not")
    if controller == "computed-torque" and not robot.velocities_are_coordinates:
        raise StateError("computed-torque tracks 1-DoF coordinates only; use --controller passivity or slotine-li "
                         "for spherical, planar and free joints")


def simulation_steps(duration: float, rate: float) -> int:
    """The number of RK4 steps, or StateError for a duration or rate that cannot be simulated."""
    if not (np.isfinite(duration) and 0 < duration <= 3600) or not (np.isfinite(rate) and 1 <= rate <= 1e6):
        raise StateError("duration must be in (0, 3600] s and rate in [1, 1e6] Hz")
    steps = int(round(duration * rate))
    if steps < 1:
        raise StateError(f"a duration of {duration:g} s is shorter than one step at {rate:g} Hz")
    if steps > MAX_STEPS:  # each step evaluates the law four times, 40 µs at the least
        raise StateError(f"{steps:,} steps (duration × rate) would take {steps * 40e-6 / 3600:,.1f} h or more; at most "
                         f"{MAX_STEPS:,} (shorten --duration or lower --rate)")
    return steps


def stiffest_mode(controller: str, lam: float, kappa: float, adaptation_gain: float) -> float:
    """|μ| of the linearized closed loop's fastest mode (1/s): ė = −λe for the tracking error,
    M⁻¹K_D = κ for s (the nonadmissible S moves it to −κ/2), and the adaptation's μ² + κμ + ω² = 0
    with ω up to √γ · ADAPTATION_SPEED · κ."""
    if controller == "computed-torque":
        return lam
    fastest = max(lam, kappa)
    if controller == "slotine-li":
        fastest = max(fastest, math.sqrt(adaptation_gain) * ADAPTATION_SPEED * kappa)
    return fastest


def check_step(controller: str, lam: float, kappa: float, adaptation_gain: float, rate: float) -> None:
    """StateError for gains that are not positive and finite, or a rate too low for them."""
    if not all(np.isfinite(x) and x > 0 for x in (lam, kappa, adaptation_gain)):
        raise StateError("gains (λ, κ) and the adaptation gain must be positive and finite")
    mu = stiffest_mode(controller, lam, kappa, adaptation_gain)
    need = mu / RK4_STEP_LIMIT
    if rate < need:
        raise StateError(f"a rate of {rate:g} Hz is too low for these gains: the closed loop's fastest mode is "
                         f"{mu:,.0f} 1/s and RK4 is stable for rate ≥ {mu:,.0f}/{RK4_STEP_LIMIT:g} = {math.ceil(need):,} Hz",
                         hint=f"pass --rate {math.ceil(need)} or more, or lower --gains"
                         + (" or --adaptation-gain" if controller == "slotine-li" else ""))


class _ImplicitFriction:
    """The joints' friction τ_f = b q̇ + c tanh(q̇/ε) (model.friction), applied after each RK4 step
    by implicit Euler: q̇⁺ solves M (q̇⁺ − q̇) + h Aᵀ τ_f(A q̇⁺) = 0. Explicit steps are unstable on
    a light joint (TALOS's grippers: b + c/ε = 51 N·m·s over a small inertia, a mode of
    287,000 1/s against RK4's 2,500 at 1 kHz); implicit Euler is stable at any stiffness, and
    dissipates as friction does. q̇⁺ minimizes the strictly convex
    Φ(x) = ½ (x − q̇)ᵀ M (x − q̇) + h Σ_j (½ b_j y_j² + c_j ε log cosh(y_j/ε)), y = A x,
    found by Newton's method with backtracking."""

    def __init__(self, robot):
        tree = getattr(robot, "full", robot)
        self.robot, self.b, self.c = robot, tree.joint_friction[:, 0], tree.joint_friction[:, 1]
        self.reduced = getattr(robot, "is_reduced", False)

    def _phi(self, x, u, M, A, h, held):
        y = A @ x
        z = np.abs(y / STATIC_SPEED)
        log_cosh = z + np.log1p(np.exp(-2.0 * z)) - math.log(2.0)
        return 0.5 * (x - u) @ M @ (x - u) + h * np.sum(0.5 * self.b * y * y + self.c * STATIC_SPEED * log_cosh
                                                        - held * y)

    def __call__(self, q, u, h, compensated=None):
        """q̇⁺ after the joints' friction, less the controller's compensation τ_f(``compensated``)
        (the tree's velocities at which it is evaluated) where given: a force held over the step,
        taken here with the friction it cancels, so that the stiff pair is stepped implicitly."""
        from .. import engine

        M = engine.mass_matrix(self.robot, q)
        A = np.asarray(engine.coordinates.evaluation(self.robot).jacobian(q)) if self.reduced else np.eye(len(u))
        held = 0.0 if compensated is None else friction_torque(self.robot, compensated)
        x = u.copy()
        for _ in range(60):
            y = A @ x
            t = np.tanh(y / STATIC_SPEED)
            grad = M @ (x - u) + h * A.T @ (self.b * y + self.c * t - held)
            H = M + h * A.T @ ((self.b + self.c / STATIC_SPEED * (1.0 - t * t))[:, None] * A)
            step = -np.linalg.solve(H, grad)
            if np.abs(step).max() <= 1e-13 * (1.0 + np.abs(x).max()):
                return x + step
            phi, slope, alpha = self._phi(x, u, M, A, h, held), grad @ step, 1.0
            while alpha > 1e-12 and self._phi(x + alpha * step, u, M, A, h, held) > phi + 1e-4 * alpha * slope:
                alpha *= 0.5
            x = x + alpha * step
        return x


def simulate(robot, controller: str = "slotine-li", factorization: str = "christoffel", duration: float = 2.0,
             rate: float = 1000.0, gains=(10.0, 20.0), adaptation_gain: float = 1.0, progress=None,
             friction: bool = True, friction_known: bool = True) -> SimulationResult:
    """Track the reference for ``duration`` seconds; ``gains`` = (λ, κ) in 1/s, ``adaptation_gain``
    γ scales the robot's own Γ₀ (see the module's docstring). The simulated robot has the joints'
    friction its file gives (model.friction) unless ``friction`` is False; the controllers
    compensate it at their reference velocity unless ``friction_known`` is False.
    ``progress(k)`` is called with the number of steps done. M(q) singular at the start raises
    SingularMassMatrixError (lock the joints it names); a run that stops being finite returns
    with ``diverged_at`` set."""
    from .. import engine

    if controller not in CONTROLLERS:
        raise StateError(f"controller must be one of {', '.join(CONTROLLERS)}, got '{controller}'")
    if factorization not in FACTORIZATIONS:
        raise StateError(f"factorization must be one of {', '.join(FACTORIZATIONS)}, got '{factorization}'")
    lam, kappa = (float(g) for g in gains)
    check_step(controller, lam, kappa, adaptation_gain, rate)
    _check_robot(robot, controller)
    steps = simulation_steps(duration, rate)
    if steps * robot.nv > 5e8:
        raise StateError(f"{steps:,} steps of a {robot.nv}-DoF robot is too long a run")
    engine.check_memory((4 + robot.nq + 2 * robot.nv) * 8 * (steps + 1),
                        f"{steps:,} samples of t, q, q̇, τ, ‖e‖, V and the parameter error")
    h = 1.0 / rate
    n = robot.nv
    ref = Reference(robot, lam)
    theta = inertial_parameters(getattr(robot, "full", robot))
    kind = "christoffel" if factorization == "nonadmissible" else factorization
    adapting = controller == "slotine-li"
    workspace = engine.create_data(robot)
    plant_friction = friction and has_friction(robot)
    q0 = ref.integrate(ref.configuration(0.0), np.full(n, START_OFFSET))
    states = sample_states(robot, ref, q0)
    # M singular at the start or on the reference: the typed error, before running
    masses = [check_invertible(robot, state[0]) for state in states]
    friction_step = _ImplicitFriction(robot) if plant_friction else None
    compensated = plant_friction and friction_known
    A_of = engine.coordinates.evaluation(robot).jacobian if getattr(robot, "is_reduced", False) else None

    def reference_velocity(t, q, qd):
        """(the tree's velocities at q̇_r, A or None): where the controller evaluates the friction it
        knows (the law's torque plus τ_f(q̇_r); stepped with the plant's friction, _ImplicitFriction)."""
        qd_r = ref.tracking(t, q, qd)[1]
        if A_of is None:
            return qd_r, None
        A = np.asarray(A_of(q))
        return A @ qd_r, A

    def compensation(t, q, qd):
        """τ_f(q̇_r) in the robot's coordinates (Aᵀ τ_f(A q̇_r)), for the recorded control torque."""
        velocities, A = reference_velocity(t, q, qd)
        tau_f = friction_torque(robot, velocities)
        return tau_f if A is None else A.T @ tau_f

    gain = adaptation_gain * adaptation_gains(robot, states, masses, theta, kappa) if adapting else None
    adapted = gain > 0 if adapting else None

    def law(t, q, qd, theta_hat):
        """τ and θ̂̇ at one instant."""
        e, qd_r, qdd_r, s = ref.tracking(t, q, qd)
        if controller == "computed-torque":  # q̈_d − λ²e − 2λė = q̈_r − λė − λ²e, with ė = s − λe
            ed = s - lam * e
            return engine.inverse_dynamics(robot, q, qd, qdd_r - lam * ed - lam * lam * e), None
        kd = kappa * engine.mass_matrix(robot, q, data=workspace)  # K_D = κ M(q)
        tau = engine.slotine_li(robot, q, qd, qd_r, qdd_r, theta=theta_hat if adapting else None, factorization=kind)
        if factorization == "nonadmissible":
            tau = tau + _nonadmissible_S(qd, kd) @ qd_r
        tau = tau - kd @ s
        rate_hat = -gain * engine.adaptation_gradient(robot, q, qd, qd_r, qdd_r, factorization=kind) if adapting else None
        return tau, rate_hat

    def f(t, q, qd, theta_hat):
        """(q̇, q̈, θ̂̇) at one stage."""
        tau, rate_hat = law(t, q, qd, theta_hat)
        if not np.all(np.isfinite(tau)):
            raise _Diverged("the control torque is not finite")
        return qd, engine.forward_dynamics(robot, q, qd, tau), rate_hat

    t_out = np.arange(steps + 1) * h
    err, V, perr = np.zeros(steps + 1), np.zeros(steps + 1), np.zeros(steps + 1)
    Q, QD, TAU = np.zeros((steps + 1, robot.nq)), np.zeros((steps + 1, n)), np.zeros((steps + 1, n))
    norm_theta = max(np.linalg.norm(theta), 1e-300)

    def record(k, t, q, qd, theta_hat):
        """‖e‖, V = ½ sᵀMs (+ ½ θ̃ᵀΓ⁻¹θ̃ over the adapted parameters) and the parameter error."""
        e, _, _, s = ref.tracking(t, q, qd)
        Q[k], QD[k] = q, qd
        TAU[k] = law(t, q, qd, theta_hat)[0] + (compensation(t, q, qd) if compensated else 0.0)
        err[k] = np.linalg.norm(e)
        V[k] = 0.5 * s @ engine.mass_matrix(robot, q) @ s
        if adapting:
            theta_err = theta_hat - theta
            V[k] += 0.5 * np.sum(theta_err[adapted] ** 2 / gain[adapted])
            perr[k] = np.linalg.norm(theta_err) / norm_theta
        if not (np.isfinite(V[k]) and np.isfinite(err[k])):
            raise _Diverged("the state is not finite")

    q, qd = q0, np.zeros(n)
    theta_hat = ESTIMATE_START * theta if adapting else None
    record(0, 0.0, q, qd, theta_hat)
    diverged_at, because, done = None, "", steps
    with np.errstate(all="ignore"):  # a diverging run is reported once, as a result, not by NumPy
        for k in range(steps):
            t = k * h
            try:
                v1, a1, r1 = f(t, q, qd, theta_hat)
                v2, a2, r2 = f(t + h / 2, ref.integrate(q, h / 2 * v1), qd + h / 2 * a1, _step(theta_hat, h / 2, r1))
                v3, a3, r3 = f(t + h / 2, ref.integrate(q, h / 2 * v2), qd + h / 2 * a2, _step(theta_hat, h / 2, r2))
                v4, a4, r4 = f(t + h, ref.integrate(q, h * v3), qd + h * a3, _step(theta_hat, h, r3))
                q = ref.integrate(q, h / 6 * (v1 + 2 * v2 + 2 * v3 + v4))
                qd = qd + h / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
                if friction_step is not None:  # what the joints' friction takes, implicitly
                    qd = friction_step(q, qd, h, reference_velocity(t + h, q, qd)[0] if compensated else None)
                if adapting:
                    theta_hat = theta_hat + h / 6 * (r1 + 2 * r2 + 2 * r3 + r4)
                record(k + 1, t + h, q, qd, theta_hat)
            except (_Diverged, SingularMassMatrixError, StateError) as e:
                diverged_at, because, done = t + h, _why(e), k
                break
            if progress is not None and (k + 1) % 50 == 0:
                progress(k + 1)
    keep = done + 1
    settings = {"controller": controller, "factorization": factorization, "duration_s": duration, "rate_hz": rate,
                "lambda": lam, "kappa": kappa, "k_d": "κ M(q)", "adaptation_gain": adaptation_gain if adapting else None,
                "adaptation": f"Γ = γ Γ₀, Γ₀ scaled to the robot's bodies (fastest mode {ADAPTATION_SPEED:g} κ at γ = 1)" if adapting else None,
                "integrator": f"RK4, step {h:g} s, control law at every stage",
                "fastest_mode_per_s": stiffest_mode(controller, lam, kappa, adaptation_gain),
                "reference": f"c + A sin(2π·{FREQUENCY} t + j π/4), A ≤ {MAX_AMPLITUDE}, start {START_OFFSET} off",
                "theta_hat_start": f"{ESTIMATE_START} × θ" if adapting else None,
                "friction": ("the file's, compensated at q̇_r" if compensated else "the file's, unknown to the controller")
                if plant_friction else None}
    return SimulationResult(robot.name, settings, t_out[:keep], err[:keep], V[:keep], perr[:keep],
                            theta_hat.copy() if adapting else theta.copy(), theta, tuple(robot.dof_names),
                            diverged_at, because, Q[:keep], QD[:keep], TAU[:keep], tuple(robot.config_names))


class _Diverged(Exception):
    pass


def _why(error: Exception) -> str:
    if isinstance(error, SingularMassMatrixError):
        return "M(q) became singular"
    if isinstance(error, _Diverged):
        return str(error)
    return "the state is not finite"


def _step(theta_hat, dt, rate):
    return None if theta_hat is None else theta_hat + dt * rate


def _nonadmissible_S(qd, kd):
    """S = −1.5 K_D (1 − q̇q̇ᵀ/q̇ᵀq̇): S q̇ = 0 and S not skew-symmetric; zero at rest."""
    n = qd.shape[0]
    qq = qd @ qd
    if qq == 0.0:
        return np.zeros((n, n))
    return -NONADMISSIBLE_SCALE * (kd - np.outer(kd @ qd, qd) / qq)
