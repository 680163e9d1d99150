"""Collision detection without torque sensors: the generalized-momentum observer (De Luca,
Albu-Schäffer, Haddadin & Hirzinger 2006; Haddadin, De Luca & Albu-Schäffer, IEEE T-RO 2017) and
the energy observer, on the O(N) p = M q̇ and Cᵀq̇ of Wensing–Slotine App. B-B.

With the model's τ + τ_ext = M q̈ + C q̇ + g, ṗ = τ + τ_ext + Cᵀq̇ − g, so the residual

    r(t) = K (p(t) − p(0) − ∫₀ᵗ (τ + Cᵀq̇ − g + r) ds)

obeys ṙ = K (τ_ext − r): a first-order filter of τ_ext at bandwidth K (1/s, per DoF) that needs
no q̈. The energy observer σ = k_E (T − T(0) − ∫ (q̇ᵀ(τ − g) + σ) ds) tracks q̇ᵀτ_ext, one scalar.
Where the robot file gives joint friction (model.friction), τ is the drives' torque less
τ_f = b q̇ + c sign q̇ (``friction=False`` takes the drives' torque as it is). Both observers are
stepped explicitly (K dt below 1, which observe checks). A floating base has no actuator: its residual
rows are the external wrench on the base in body coordinates (contacts included).

``MomentumObserver.step`` allocates nothing on a tree (the workspace's outputs and the
observer's own arrays are reused); ``observe`` runs both over a recording in chunks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from .. import engine
from ..errors import RecordingError, StateError
from ..model.coordinates import ReducedRobot
from ..model.friction import STATIC_SPEED, friction_torque, has_friction
from ..model.tree import RobotModel


def _gains(robot, bandwidth) -> np.ndarray:
    K = np.broadcast_to(np.asarray(bandwidth, dtype=float), (robot.nv,)).copy()
    if not np.all(np.isfinite(K)) or np.any(K <= 0):
        raise StateError(f"the observer's bandwidth must be positive and finite (1/s), got {bandwidth}")
    return K


def _torque(robot, tau, what="tau") -> np.ndarray:
    """τ as the observers take it: nv finite values (a length-1 τ would broadcast over every joint,
    and one NaN would stay in the integral for good)."""
    if tau is None:
        return np.zeros(robot.nv)
    if type(tau) is np.ndarray and tau.dtype == np.float64 and tau.shape == (robot.nv,) and math.isfinite(tau @ tau):
        return tau  # a control loop's step allocates nothing; τ·τ is finite exactly when τ is, or overflows
    try:
        arr = np.asarray(tau, dtype=float)
    except (TypeError, ValueError):
        raise StateError(f"{what} must be numbers") from None
    if arr.shape != (robot.nv,):
        raise StateError(f"{what} must hold one value per DoF, {robot.nv} for this robot, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        k = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise StateError(f"{what}[{robot.dof_names[k]}] is not finite ({arr[k]})")
    return arr


def _takes_friction(robot, friction: bool) -> bool:
    """Whether an observer takes the joints' friction (model.friction) off the drives' torque: asked
    for, given by the robot file, and on a tree (a tree's joint friction is not carried to other
    coordinates)."""
    return friction and not getattr(robot, "is_reduced", False) and has_friction(robot)


def _step_length(dt) -> float:
    if type(dt) is float and 0.0 <= dt < math.inf:
        return dt
    try:
        value = float(dt)
    except (TypeError, ValueError):
        raise StateError(f"dt must be a number of seconds, got {dt!r}") from None
    if not (np.isfinite(value) and value >= 0.0):
        raise StateError(f"dt must be a finite, non-negative number of seconds, got {dt!r}")
    return value


class MomentumObserver:
    """The generalized-momentum observer: an estimate of the external joint torques, without torque sensors.

    De Luca and Haddadin's collision-detection residual. With the model's
    τ + τ_ext = M q̈ + C q̇ + g, the momentum p = M q̇ obeys ṗ = τ + τ_ext + Cᵀq̇ − g, so the residual

        r(t) = K (p(t) − p(0) − ∫₀ᵗ (τ + Cᵀq̇ − g + r) ds)

    obeys ṙ = K (τ_ext − r): a first-order low-pass filter of τ_ext at bandwidth K per DoF, which
    needs q and q̇ but no q̈. Each step costs O(N) (p and Cᵀq̇ in one pass) and, on a tree,
    allocates nothing. Where the robot file gives joint friction, τ is the drives' torque less the
    friction torque b q̇ + c sign(q̇) (``friction=False`` takes it as it is). On a floating base the
    six base rows estimate the external wrench on the base in body coordinates. The integral is
    explicit Euler: keep K dt well below 1 (0.05 at 50/s and 1 kHz).

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    bandwidth : float or array_like of shape (nv,), optional
        The gain K [1/s]: one for every DoF or one per DoF, positive. Default 50.
    gravity : bool or array_like of shape (3,), optional
        The gravity of the model: True for the robot's, False for none, or a vector [m/s²].
    friction : bool, optional
        Take the joints' friction from the robot file off the applied torque; ignored for a robot
        in other coordinates.

    Attributes
    ----------
    r : ndarray of shape (nv,)
        The latest residual [N·m, N], the array `step` returns.
    K : ndarray of shape (nv,)
        The gains [1/s].
    p0 : ndarray of shape (nv,)
        The momentum at the last reset [kg·m²/s, kg·m/s].
    robot : RobotModel or ReducedRobot
        The robot.
    started : bool
        Whether `reset` (or a first `step`) has been called.

    Raises
    ------
    StateError
        If ``bandwidth`` is not positive and finite.

    See Also
    --------
    - [`EnergyObserver`][coriolis_cli.EnergyObserver]: One scalar, q̇ᵀτ_ext.

    Examples
    --------
    A push of 5 N·m on joint 4 of an arm held against gravity, observed at 1 kHz:

    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> q, qd = robot.neutral_configuration(), np.zeros(7)
    >>> dt, push = 0.001, np.array([0, 0, 0, 5.0, 0, 0, 0])
    >>> observer = cc.MomentumObserver(robot, bandwidth=50.0)
    >>> for _ in range(300):  # 0.3 s: the drives give g(q), the push moves the arm
    ...     tau = cc.gravity_vector(robot, q)
    ...     r = observer.step(q, qd, tau, dt)
    ...     qd = qd + dt * cc.forward_dynamics(robot, q, qd, tau + push)
    ...     q = cc.integrate(robot, q, qd, dt)
    >>> round(float(r[3]), 1), bool(np.all(np.abs(np.delete(r, 3)) < 0.1))
    (5.0, True)
    """

    def __init__(self, robot: RobotModel | ReducedRobot, bandwidth: float | ArrayLike = 50.0,
                 gravity: bool | ArrayLike = True, friction: bool = True):
        self.robot, self.K, self.gravity = robot, _gains(robot, bandwidth), gravity
        n = robot.nv
        # the joints' friction (model.friction) the drive's τ spends before it reaches the links
        self.friction = robot.joint_friction if _takes_friction(robot, friction) else None
        self._f = np.zeros(n)
        self.tree = not getattr(robot, "is_reduced", False)
        self.data = engine.create_data(robot) if self.tree else None
        self.p0, self.integral, self.r, self._u = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
        self.started = False

    def reset(self, q, qd, tau=None) -> None:
        """Start observing at (q, q̇), with the residual zero.

        Parameters
        ----------
        q : array_like of shape (nq,)
            Joint configuration [rad or m].
        qd : array_like of shape (nv,)
            Joint velocity [rad/s or m/s].
        tau : array_like of shape (nv,), optional
            The torque the drives apply from now on [N·m, N]; default zero.

        Raises
        ------
        StateError
            If a state or ``tau`` has the wrong length or a non-finite entry.
        """
        tau = _torque(self.robot, tau)
        self.p0[:] = engine.generalized_momentum(self.robot, q, qd, data=self.data)
        self.integral[:] = 0.0
        self.r[:] = 0.0
        self._drive(q, qd, tau)
        self.started = True

    def _drive(self, q, qd, tau) -> None:
        """u = τ + Cᵀq̇ − g at this sample: what drives p until the next one (engine.observer)."""
        data = self.data
        p = engine.generalized_momentum(self.robot, q, qd, data=data)
        ct = data.CTqd if data is not None else engine.coriolis_transpose_velocity(self.robot, q, qd)
        g = engine.gravity_vector(self.robot, q, gravity=self.gravity, data=data)
        np.add(tau, ct, out=self._u)
        np.subtract(self._u, g, out=self._u)
        if self.friction is not None:  # u −= b q̇ + c sign q̇, in place
            np.multiply(qd, self.friction[:, 0], out=self._f)
            np.subtract(self._u, self._f, out=self._u)
            np.divide(qd, STATIC_SPEED, out=self._f)
            np.tanh(self._f, out=self._f)
            np.multiply(self._f, self.friction[:, 1], out=self._f)
            np.subtract(self._u, self._f, out=self._u)
        return p

    def step(self, q, qd, tau, dt: float) -> np.ndarray:
        """Advance to (q, q̇), reached ``dt`` seconds after the previous step, and return the residual.

        The torque given at the previous step is taken to have acted over the step, as a
        controller's command does; ``tau`` is the one applied from now on. A first step, before
        any `reset`, resets and returns zeros.

        Parameters
        ----------
        q : array_like of shape (nq,)
            Joint configuration [rad or m].
        qd : array_like of shape (nv,)
            Joint velocity [rad/s or m/s].
        tau : array_like of shape (nv,)
            The torque the drives apply from now on [N·m, N].
        dt : float
            The time since the previous step [s], non-negative.

        Returns
        -------
        r : ndarray of shape (nv,)
            The estimate of the external torques [N·m, N]: the observer's own array, overwritten by
            the next step (copy it to keep it).

        Raises
        ------
        StateError
            If a state or ``tau`` has the wrong length or a non-finite entry, or ``dt`` is negative or
            not finite.
        """
        if not self.started:
            self.reset(q, qd, tau)
            return self.r
        tau, dt = _torque(self.robot, tau), _step_length(dt)
        u = self._u
        np.add(u, self.r, out=u)
        np.multiply(u, dt, out=u)
        np.add(self.integral, u, out=self.integral)
        p = self._drive(q, qd, tau)
        np.subtract(p, self.p0, out=self.r)
        np.subtract(self.r, self.integral, out=self.r)
        np.multiply(self.r, self.K, out=self.r)
        return self.r


class EnergyObserver:
    """The energy observer: an estimate of the power of the external torques, q̇ᵀτ_ext, one scalar.

    The kinetic energy T = ½ q̇ᵀM q̇ changes at the rate q̇ᵀ(τ + τ_ext − g), so

        σ(t) = k (T(t) − T(0) − ∫₀ᵗ (q̇ᵀ(τ − g) + σ) ds)

    obeys σ̇ = k (q̇ᵀτ_ext − σ): a first-order filter of the external power at bandwidth k. Cheaper
    than the [MomentumObserver][coriolis_cli.MomentumObserver] and blind to external torques that do
    no work (at rest, or orthogonal to q̇). Where the robot file gives joint friction, the friction's
    power is taken off (``friction=False`` keeps it).

    Parameters
    ----------
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    bandwidth : float, optional
        The gain k [1/s], positive. Default 50.
    gravity : bool or array_like of shape (3,), optional
        The gravity of the model: True for the robot's, False for none, or a vector [m/s²].
    friction : bool, optional
        Take the joints' friction from the robot file off the applied power; ignored for a robot
        in other coordinates (mimic joints enforced, closed loops), as by `MomentumObserver`.

    Attributes
    ----------
    sigma : float
        The latest estimate [W], what `step` returns.
    k : float
        The gain [1/s].
    T0 : float
        The kinetic energy at the last reset [J].
    robot : RobotModel or ReducedRobot
        The robot.
    started : bool
        Whether `reset` (or a first `step`) has been called.

    Raises
    ------
    StateError
        If ``bandwidth`` is not positive and finite.

    See Also
    --------
    - [`MomentumObserver`][coriolis_cli.MomentumObserver]: The external torque on every DoF.

    Examples
    --------
    A push of 5 N·m on joint 4 of an arm held against gravity, observed at 1 kHz:

    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> q, qd = robot.neutral_configuration(), np.zeros(7)
    >>> dt, push = 0.001, np.array([0, 0, 0, 5.0, 0, 0, 0])
    >>> observer = cc.EnergyObserver(robot, bandwidth=50.0)
    >>> for _ in range(300):  # 0.3 s: the drives give g(q), the push moves the arm
    ...     tau = cc.gravity_vector(robot, q)
    ...     sigma = observer.step(q, qd, tau, dt)
    ...     qd = qd + dt * cc.forward_dynamics(robot, q, qd, tau + push)
    ...     q = cc.integrate(robot, q, qd, dt)
    >>> round(sigma / float(qd @ push), 1)  # σ follows the push's power q̇ᵀτ_ext
    1.0
    """

    def __init__(self, robot: RobotModel | ReducedRobot, bandwidth: float = 50.0, gravity: bool | ArrayLike = True,
                 friction: bool = True):
        self.robot, self.gravity = robot, gravity
        self.friction = _takes_friction(robot, friction)
        self.k = float(_gains(robot, bandwidth)[0]) if robot.nv else float(bandwidth)
        self.data = engine.create_data(robot) if not getattr(robot, "is_reduced", False) else None
        self.T0 = self.J = self.sigma = 0.0
        self.started = False

    def reset(self, q, qd, tau=None) -> None:
        """Start observing at (q, q̇), with σ zero.

        Parameters
        ----------
        q : array_like of shape (nq,)
            Joint configuration [rad or m].
        qd : array_like of shape (nv,)
            Joint velocity [rad/s or m/s].
        tau : array_like of shape (nv,), optional
            The torque the drives apply from now on [N·m, N]; default zero.

        Raises
        ------
        StateError
            If a state or ``tau`` has the wrong length or a non-finite entry.
        """
        tau = _torque(self.robot, tau)
        p = engine.generalized_momentum(self.robot, q, qd, data=self.data)
        self.T0, self.J, self.sigma, self.started = 0.5 * float(np.dot(qd, p)), 0.0, 0.0, True
        self.power = self._power(q, qd, tau)

    def _power(self, q, qd, tau) -> float:
        g = engine.gravity_vector(self.robot, q, gravity=self.gravity, data=self.data)
        spent = float(np.dot(qd, friction_torque(self.robot, qd))) if self.friction else 0.0
        return float(np.dot(qd, tau)) - float(np.dot(qd, g)) - spent

    def step(self, q, qd, tau, dt: float) -> float:
        """Advance to (q, q̇), reached ``dt`` seconds after the previous step, and return σ.

        The torque given at the previous step is taken to have acted over the step; ``tau`` is the
        one applied from now on. A first step, before any `reset`, resets and returns zero.

        Parameters
        ----------
        q : array_like of shape (nq,)
            Joint configuration [rad or m].
        qd : array_like of shape (nv,)
            Joint velocity [rad/s or m/s].
        tau : array_like of shape (nv,)
            The torque the drives apply from now on [N·m, N].
        dt : float
            The time since the previous step [s], non-negative.

        Returns
        -------
        sigma : float
            The estimate of q̇ᵀτ_ext [W].

        Raises
        ------
        StateError
            If a state or ``tau`` has the wrong length or a non-finite entry, or ``dt`` is negative or
            not finite.
        """
        if not self.started:
            self.reset(q, qd, tau)
            return self.sigma
        tau, dt = _torque(self.robot, tau), _step_length(dt)
        self.J += dt * (self.power + self.sigma)
        p = engine.generalized_momentum(self.robot, q, qd, data=self.data)
        self.sigma = self.k * (0.5 * float(np.dot(qd, p)) - self.T0 - self.J)
        self.power = self._power(q, qd, tau)
        return self.sigma


# ---- over a recording --------------------------------------------------------------------------
# The automatic rule (threshold="auto") follows the residual's drift: static friction, unknown in
# [−c_j, c_j], holds the arm where each push leaves it, and the residual with it, at a new level
# after every push. Events are where |r_j − β_j| > θ_j, the baseline β (see _baseline) following
# the residual slowly between events (BASELINE_TIME, far slower than a push's 0.1-0.3 s ramp),
# held through an event's first HOLD_TIME, then following it again (CATCH_TIME), and closely for
# AFTER_TIME after it (an arm sliding back after a push); a level the residual keeps for
# STEADY_TIME is taken at once. The threshold is θ_j(t) = b_j + TORQUE_SHARE |τ_j(t)|, b_j the
# larger of NOISE_MARGIN σ_j and MARGIN times the largest |r_j| of the quiet stretch (the first
# second: it shows what the model lacks), with
# σ_j the robust spread (1.4826 × the median absolute deviation) of the residual's changes over
# SPREAD_LAG, divided by √2: steps from one rest to the next do not inflate it.
# The former automatic rule (threshold="friction") instead adds c_j while joint j is at rest
# (weighted by exp(−(q̇_j / 3 STATIC_SPEED)²)): on an arm whose shoulders hold tens of N·m of
# static friction, that hid pushes of that size. The quiet-stretch rule (threshold="quiet"):
# MARGIN times the largest |r_j| of a stretch known to be free of contact. Under every rule an
# event must stay over the threshold for MIN_EVENT: a brake's 10 ms torque blip is not a collision.
NOISE_MARGIN = 6.0  # times the robust spread σ_j
MARGIN = 3.0  # times the largest residual of the quiet stretch
TORQUE_SHARE = 0.05  # of the joint's recorded torque, added: model error grows with the motion
MIN_EVENT = 0.05  # s over the threshold before an event counts
ROBUST_SPREAD = 1.4826  # the median absolute deviation's factor to a normal spread
SPREAD_ROUNDS = 4  # of the spread recomputed without the samples beyond CLIP times it
CLIP = 3.0
JOIN = 0.25  # s: events closer than this are one (a push that dips under the threshold on its way)
BASELINE_TIME = 2.0  # s: the time constant with which the baseline follows the residual between events
STEADY_TIME = 0.3  # s: a residual that changes by less than half its threshold over this long ends an event
HOLD_TIME = 1.0  # s: the baseline held at an event's start: longer than a push, most often
CATCH_TIME = 0.15  # s: then the time constant with which it follows again
AFTER_TIME = 1.0  # s: after an event the baseline follows at AFTER_CATCH this long (an arm sliding back)
AFTER_CATCH = 0.05  # s: (the 50 ms average itself)
AVERAGE_TIME = 0.05  # s: the residual's average, from which the baseline takes its levels
SPREAD_LAG = 0.2  # s: the residual's changes over this lag give its spread (see above)
THRESHOLD_RULES = ("auto", "friction", "quiet")


@dataclass
class Event:
    start: float
    end: float
    joint: str  # the joint whose residual rose furthest past its threshold (relative to it)
    peak: float  # that joint's residual of largest magnitude during the event, from the baseline under the
    # automatic rule (N·m or N)
    link: str  # the isolated link: the child of the most distal joint whose residual crossed


@dataclass
class Observation:
    t: np.ndarray
    r: np.ndarray  # (K, nv)
    sigma: np.ndarray  # (K,)
    threshold: np.ndarray  # (K, nv)
    base: np.ndarray  # (nv,): the threshold's constant part (see the rules above)
    dof_names: tuple
    events: list = field(default_factory=list)
    bandwidth: np.ndarray | None = None
    quiet: tuple = (0.0, 1.0)
    rule: str = "auto"  # auto, quiet or fixed
    noise: np.ndarray | None = None  # (nv,) σ_j, the residual's robust spread (rules auto, friction)
    static: np.ndarray | None = None  # (nv,) c_j, the static friction allowed at rest (rule friction)
    baseline: np.ndarray | None = None  # (K, nv) β_j(t), what the residual is measured from (rule auto)


def _no_effort(path) -> RecordingError:
    return RecordingError(f"{path}: the recording has no effort (the applied τ), which the observers need")


def _tree_coordinates(robot) -> None:
    if getattr(robot, "is_reduced", False):
        raise StateError("observe runs on the tree's coordinates: load the robot without --mimic enforce or closed loops")


def require_observable(robot, path, **options) -> None:
    """What observe would refuse (a robot in other coordinates, a recording without effort),
    the recording read no further than its first chunk: the CLI asks before the kernels compile."""
    from ..recordings import first_samples

    _tree_coordinates(robot)
    first = first_samples(path, robot, **options)
    if first is not None and first.effort is None:
        raise _no_effort(path)


def observe(robot, path, bandwidth=50.0, threshold="auto", quiet=(None, None), friction: bool = True,
            **options) -> Observation:
    """Both observers along the recording ``path`` (its effort is the applied τ), then the
    events: where some |r_j| exceeds its threshold θ_j(t) = b_j + TORQUE_SHARE |τ_j(t)|, b_j
    being ``threshold`` or MARGIN × the largest |r_j| of the quiet stretch (``quiet`` = (start,
    end) in seconds from the first sample; default the first second)."""
    from ..engine.compiled import OBSERVER_SCALARS as STATE_SCALARS, momentum_energy_recursion
    from ..recordings import stream_recording

    tree = getattr(robot, "full", robot)
    _tree_coordinates(robot)
    K = _gains(robot, bandwidth)
    n = robot.nv
    p0, integral, r, u, scalars = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(STATE_SCALARS)
    ts, Rs, Ss, taus, rest = [], [], [], [], []
    for samples in stream_recording(path, robot, **options):
        if samples.effort is None:
            raise _no_effort(path)
        tau = _recorded_torque(robot, samples, path)
        if friction and has_friction(tree):  # what reaches the links: the drives' τ less the joints' friction
            tau = tau - friction_torque(tree, samples.qd)
        if not ts:
            _check_bandwidth(K, samples.t)
        rows = engine.trajectory_dynamics(robot, samples.q, samples.qd)
        P, CT, G = rows[:, 3 * n : 4 * n], rows[:, 2 * n : 3 * n], rows[:, 0:n]
        kinetic = rows[:, 5 * n].copy()
        R, S = np.empty((len(samples.t), n)), np.empty(len(samples.t))
        momentum_energy_recursion(*(np.ascontiguousarray(x, dtype=float) for x in (samples.t, P, CT, G, tau, samples.qd)),
                                  kinetic, np.ascontiguousarray(K, dtype=float), float(K[0]), p0, integral, r, u, scalars,
                                  R, S)
        ts.append(samples.t)
        Rs.append(R)
        Ss.append(S)
        taus.append(np.abs(tau))
        rest.append(np.exp(-((samples.qd / (3.0 * STATIC_SPEED)) ** 2)))  # 1 at rest, 0 in motion
    t, R, S, TAU = np.concatenate(ts), np.concatenate(Rs), np.concatenate(Ss), np.concatenate(taus)
    start, end = quiet
    given = start is not None or end is not None  # else 0:1, where the recording has it
    start = 0.0 if start is None else float(start)
    end = start + 1.0 if end is None else float(end)
    inside = (t - t[0] >= start) & (t - t[0] <= end)
    if given and inside.sum() < 2:
        raise StateError(f"the quiet stretch {start:g}:{end:g} s holds {int(inside.sum())} samples of the recording's "
                         f"{t[-1] - t[0]:.3g} s; give --quiet START:END within it")
    floor = 1e-9 * max(1.0, float(np.abs(R).max()))
    noise = static = baseline = None
    rule = threshold if isinstance(threshold, str) else "fixed"
    if rule == "auto":
        noise = _change_spread(t, R)
        base = np.maximum(NOISE_MARGIN * noise, floor)
        if inside.sum() >= 2:  # and what the quiet stretch shows: friction the robot file lacks, say
            base = np.maximum(base, MARGIN * np.abs(R[inside] - np.median(R[inside], axis=0)).max(axis=0))
        limit = base + TORQUE_SHARE * TAU
        baseline = _baseline(t, R, limit)
    elif rule == "friction":
        static = tree.joint_friction[:, 1] if friction else np.zeros(n)
        allowance = TORQUE_SHARE * TAU + static * np.concatenate(rest)
        noise = _robust_spread(R)  # of the residual itself
        base = np.maximum(NOISE_MARGIN * noise, floor)
        if inside.sum() >= 2:  # and what the quiet stretch shows: friction the robot file lacks, say
            base = np.maximum(base, MARGIN * np.abs(R[inside] - np.median(R, axis=0)).max(axis=0))
        limit = base + allowance
    elif rule == "quiet":
        if inside.sum() < 2:
            raise StateError(f"the quiet stretch {start:g}:{end:g} s holds {int(inside.sum())} samples; give --quiet "
                             "START:END within the recording, or --threshold VALUE")
        base = np.maximum(MARGIN * np.abs(R[inside]).max(axis=0), floor)
        limit = base + TORQUE_SHARE * TAU
    elif rule == "fixed":
        base = np.broadcast_to(np.asarray(threshold, float), (n,)).copy()
        limit = base + TORQUE_SHARE * TAU
    else:
        raise StateError(f"threshold: 'auto', 'friction', 'quiet' or a value (N·m or N), got '{threshold}'")
    obs = Observation(t, R, S, limit, base, tuple(robot.dof_names), bandwidth=K, quiet=(start, end), rule=rule,
                      noise=noise, static=static, baseline=baseline)
    obs.events = _events(tree, t, R if baseline is None else R - baseline, limit,
                         gap=JOIN if rule in ("auto", "friction") else 0.05, gains=K)
    return obs


def _robust_spread(X) -> np.ndarray:
    """Each column's spread, where what is not contact decides it: 1.4826 × the median absolute
    deviation, recomputed without the samples beyond CLIP times it (a push recording can be a
    quarter contact)."""
    deviation = np.abs(X - np.median(X, axis=0))
    calm = np.ones_like(deviation, dtype=bool)
    for _ in range(SPREAD_ROUNDS):
        spread = ROBUST_SPREAD * np.array([np.median(deviation[calm[:, j], j]) if calm[:, j].any() else 0.0
                                           for j in range(X.shape[1])])
        calm = deviation <= CLIP * spread
    return spread


def _change_spread(t, R) -> np.ndarray:
    """σ_j from the residual's changes over SPREAD_LAG: their robust spread / √2. Steps from one
    rest to the next are a few of the changes, where they make a large part of the residual's own
    deviation."""
    lag = np.searchsorted(t, t + SPREAD_LAG)
    ok = lag < len(t)
    change = R[lag[ok]] - R[ok] if ok.any() else np.zeros((1, R.shape[1]))
    return _robust_spread(change) / np.sqrt(2.0)


def _baseline(t, R, limit) -> np.ndarray:
    """β(t) of the automatic rule: the residual's 50 ms average followed with time constant
    BASELINE_TIME while no DoF is over its threshold, AFTER_CATCH for AFTER_TIME after one was;
    during an event held for HOLD_TIME, then followed with time constant CATCH_TIME; and where the
    average has changed by less than θ/2 over STEADY_TIME while standing more than θ/2 from β,
    taken as it is (the level a push leaves, where static friction holds the arm)."""
    from ..engine.compiled import drift_baseline

    R, limit = np.ascontiguousarray(R, dtype=float), np.ascontiguousarray(limit, dtype=float)
    back = np.ascontiguousarray(np.searchsorted(t, t - STEADY_TIME, side="right") - 1, dtype=np.int64)
    out, level = np.empty_like(R), np.empty_like(R)
    drift_baseline(np.ascontiguousarray(t, dtype=float), R, limit, back, JOIN, BASELINE_TIME, HOLD_TIME, CATCH_TIME,
                   AFTER_TIME, AFTER_CATCH, AVERAGE_TIME, level, out)
    return out


def _check_bandwidth(K, t) -> None:
    """The residual's recursion, r_k = K (p_k − p_0 − Σ (u + r) dt), feeds back −K dt r_{k−1}: it
    diverges once K dt ≥ 1, and rings from K dt = 0.5. Refused at the recording's median step
    rather than let thresholds come out NaN."""
    steps = np.diff(t)
    steps = steps[steps > 0]
    if steps.size == 0:
        return
    dt = float(np.median(steps))
    if float(np.max(K)) * dt >= 1.0:
        raise StateError(f"a bandwidth of {float(np.max(K)):g}/s is more than samples {dt * 1e3:.3g} ms apart can "
                         f"follow (K dt must stay below 1): choose at most {0.5 / dt:.3g}/s")


def _recorded_torque(robot, samples, path) -> np.ndarray:
    """The recording's effort as the applied τ: zero on a floating base's six DoF (no actuator), and
    every other value finite. A NaN there is a gap in the log and inf a broken sensor: read as
    zero or as 1.8e308 they would raise or hide events, so they are refused where they are."""
    tau = np.array(samples.effort, dtype=float)
    if getattr(getattr(robot, "full", robot), "floating_base", False):
        tau[:, :6] = np.nan_to_num(tau[:, :6])
    bad = ~np.isfinite(tau)
    if bad.any():
        s, k = (int(i) for i in np.argwhere(bad)[0])
        what = "missing (NaN)" if np.isnan(tau[s, k]) else f"not finite ({tau[s, k]})"
        raise RecordingError(f"{path}: the effort of joint '{robot.dof_names[k]}' at t = {samples.t[s]:.6f} s is "
                             f"{what}; the observers need the applied torque at every sample")
    return tau


def _events(tree, t, R, limit, gap: float = 0.05, shortest: float = MIN_EVENT, gains=None) -> list:
    """Stretches where some |r_j| > θ_j (joined across gaps shorter than ``gap`` s), those that last
    at least ``shortest`` s; with the observer's ``gains`` K, at least ``shortest`` s beyond the
    residual's own decay from its peak to the threshold, ln(peak/θ)/K (a 10 ms torque blip keeps r
    over a low threshold for 67 ms at K = 50/s: the blip lasted 10)."""
    over = np.abs(R) > limit
    anywhere = over.any(axis=1)
    if not anywhere.any():
        return []
    idx = np.flatnonzero(anywhere)
    runs, first, last = [], idx[0], idx[0]
    for k in idx[1:]:
        if t[k] - t[last] > gap:
            runs.append((first, last))
            first = k
        last = k
    runs.append((first, last))
    depth = {b.joint.name: tree.depth_of(i) if hasattr(tree, "depth_of") else _depth(tree, i) for i, b in enumerate(tree.bodies)}
    names = tree.dof_names
    body_of_dof = tree.col_body
    events = []
    for a, b in runs:
        ratio = np.abs(R[a : b + 1]) / limit[a : b + 1]
        top, j = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
        decay = 0.0 if gains is None else math.log(max(float(ratio[top, j]), 1.0)) / float(gains[j])
        if t[b] - t[a] - decay < shortest:
            continue
        k = int(np.argmax(np.abs(R[a : b + 1, j])))
        crossed = np.flatnonzero(over[a : b + 1].any(axis=0))
        distal = max(crossed, key=lambda c: depth[tree.bodies[body_of_dof[c]].joint.name])
        events.append(Event(float(t[a]), float(t[b]), names[j], float(R[a + k, j]), tree.bodies[body_of_dof[distal]].name))
    return events


def _depth(tree, i) -> int:
    d = 0
    while i >= 0:
        i = tree.bodies[i].parent
        d += 1
    return d
