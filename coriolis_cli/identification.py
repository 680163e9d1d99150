"""Identification of a robot's inertial parameters from its recordings (the library; the
``coriolis identify`` command is still to come).

The dynamics are linear in θ (10 per body, model.parameters' order) and in friction f (per DoF:
viscous b, Coulomb c): W(q, q̇, ...) [θ; f] = y. Two forms:

- torque:   Y(q, q̇, q̇, q̈) θ + diag(q̇) b + diag(sign q̇) c = τ − τ_armature,  q̈ differentiated;
- momentum: through the low-pass filter F = λ/(s + λ) applied to Hamilton's equations
            ṗ = τ − τ_f + Cᵀq̇ − g (Wensing–Slotine App. B-B), with F[ṗ] = λ (p − F[p]):
            (λ (Y_p − F[Y_p]) − F[Y_c] + F[Y_g]) θ + F[diag(q̇)] b + F[diag(sign q̇)] c = F[τ]
            (momentum_regressors), which needs no q̈.

The normal equations WᵀW and Wᵀy are accumulated chunk by chunk, so memory does not grow with
the recording. Only combinations of θ (the base parameters) are identifiable: the fit keeps the
prior (the file's parameters) in the directions the data do not reach, through a regularizer of
weight ``weight`` × mean(diag WᵀW) on the parameters scaled by their size. ``consistent`` solves
the same least squares with every body's pseudo-inertia positive semi-definite (Wensing, Kim &
Slotine, RA-L 2018) by cvxpy and Clarabel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import engine
from .errors import StateError
from .model.parameters import N_PARAMETERS, inertial_parameters, parameter_names

FORMS = ("torque", "momentum")
METHODS = ("ols", "consistent")
FRICTION = ("none", "viscous", "coulomb-viscous")
DEFAULT_CUTOFF = 20.0  # λ of the momentum form's filter, 1/s
DEFAULT_WEIGHT = 1e-6
SETTLE = 5.0  # time constants of the momentum form's filter left out at the start of a recording


def friction_width(robot, friction: str) -> int:
    if friction not in FRICTION:
        raise StateError(f"friction must be one of {', '.join(FRICTION)}, got '{friction}'")
    return {"none": 0, "viscous": 1, "coulomb-viscous": 2}[friction] * robot.nv


def _friction_columns(qd, friction: str) -> np.ndarray:
    """(nv, width) per sample: diag(q̇), then diag(sign q̇)."""
    parts = []
    if friction != "none":
        parts.append(np.diag(qd))
    if friction == "coulomb-viscous":
        parts.append(np.diag(np.sign(qd)))
    return np.concatenate(parts, axis=1) if parts else np.zeros((len(qd), 0))


@dataclass
class NormalEquations:
    """WᵀW, Wᵀy and yᵀy of every row added so far, and how many rows."""

    A: np.ndarray
    b: np.ndarray
    yy: float = 0.0
    rows: int = 0

    @classmethod
    def empty(cls, width: int) -> "NormalEquations":
        return cls(np.zeros((width, width)), np.zeros(width))

    def add(self, W: np.ndarray, y: np.ndarray) -> None:
        self.A += W.T @ W
        self.b += W.T @ y
        self.yy += float(y @ y)
        self.rows += len(y)


class _Filter:
    """F = λ/(s + λ), exact for inputs held over each step, its state carried across chunks."""

    def __init__(self, cutoff: float):
        self.cutoff, self.state, self.t = cutoff, None, None

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        if self.state is None:
            self.state, self.t = x.copy(), t  # starts in steady state: F[x] = x
            return self.state
        a = 1.0 - np.exp(-self.cutoff * (t - self.t))
        self.state += a * (x - self.state)
        self.t = t
        return self.state


class Rows:
    """The rows W, y of one form for the samples of a recording, chunk after chunk (the momentum
    form's filters keep their state between chunks)."""

    def __init__(self, robot, form: str = "torque", friction: str = "none", cutoff: float = DEFAULT_CUTOFF):
        if form not in FORMS:
            raise StateError(f"form must be one of {', '.join(FORMS)}, got '{form}'")
        friction_width(robot, friction)
        self.robot, self.form, self.friction, self.cutoff = robot, form, friction, cutoff
        self.theta0 = inertial_parameters(getattr(robot, "full", robot))
        self.filters = [_Filter(cutoff) for _ in range(3)]  # Y_p (and M_a q̇), Y_c − Y_g and friction, τ
        self.start = None  # the recording's first stamp: the filters' start is not used (see __call__)

    def __call__(self, samples) -> tuple[np.ndarray, np.ndarray]:
        """(W, y) for one chunk of recordings.Samples (effort = τ; q̈ for the torque form)."""
        robot, n = self.robot, self.robot.nv
        W, y = [], []
        for s in range(len(samples.t)):
            q, qd, tau = samples.q[s], samples.qd[s], np.nan_to_num(samples.effort[s])
            fr = _friction_columns(qd, self.friction)
            if self.form == "torque":
                qdd = samples.qdd[s]
                Y = engine.regressor(robot, q, qd, qd, qdd)
                armature = engine.inverse_dynamics(robot, q, qd, qdd) - Y @ self.theta0  # no parameter of θ
                W.append(np.concatenate([Y, fr], axis=1))
                y.append(tau - armature)
            else:
                R = engine.momentum_regressors(robot, q, qd)
                p0 = engine.generalized_momentum(robot, q, qd) - R.p @ self.theta0  # the armature's M_a q̇
                t = samples.t[s]
                Fp = self.filters[0](t, np.concatenate([R.p, p0[:, None]], axis=1))
                Fcg = self.filters[1](t, np.concatenate([R.c - R.g, fr], axis=1))
                Ftau = self.filters[2](t, tau)
                self.start = t if self.start is None else self.start
                if t - self.start < SETTLE / self.cutoff:
                    # F[ṗ] = λ(p − F[p]) once the filters forget where they started (e^{−λt})
                    continue
                lam = self.cutoff
                Wp = lam * (np.concatenate([R.p, p0[:, None]], axis=1) - Fp)
                W.append(np.concatenate([Wp[:, :-1] - Fcg[:, : R.p.shape[1]], Fcg[:, R.p.shape[1]:]], axis=1))
                y.append(Ftau - Wp[:, -1])
        if not W:
            width = len(self.theta0) + friction_width(robot, self.friction)
            return np.zeros((0, width)), np.zeros(0)
        return np.concatenate(W), np.concatenate(y)


@dataclass
class Fit:
    theta: np.ndarray  # the bodies' parameters (10 N)
    friction: np.ndarray  # per DoF: viscous, then Coulomb (by friction mode)
    base_parameters: int  # the rank of WᵀW
    condition: float  # of W on its identifiable subspace
    unidentifiable: tuple  # (body, parameter) pairs whose columns the data never move
    residual_rms: float  # of W x − y over the rows fitted


def fit(robot, equations: NormalEquations, method: str = "ols", friction: str = "none",
        weight: float = DEFAULT_WEIGHT) -> Fit:
    """θ and friction from the accumulated normal equations (see the module's docstring)."""
    if method not in METHODS:
        raise StateError(f"method must be one of {', '.join(METHODS)}, got '{method}'")
    tree = getattr(robot, "full", robot)
    theta0 = inertial_parameters(tree)
    nf = friction_width(robot, friction)
    P = len(theta0) + nf
    A, b = equations.A, equations.b
    if A.shape != (P, P) or equations.rows == 0:
        raise StateError("no rows to fit: the recording gave no samples")
    eig = np.linalg.eigvalsh(A)
    top = max(float(eig[-1]), 1e-300)
    rank = int(np.sum(eig > 1e-10 * top))
    kept = eig[eig > 1e-10 * top]
    condition = float(np.sqrt(kept[-1] / kept[0])) if len(kept) else np.inf
    names = parameter_names(tree)
    dead = tuple((names[k].split(".")[0], names[k].split(".")[-1]) for k in range(len(theta0))
                 if A[k, k] <= 1e-12 * top)
    x0 = np.concatenate([theta0, np.zeros(nf)])
    scale = _scales(tree, theta0, nf)
    w = weight * float(np.mean(np.diag(A)))
    D2 = np.diag(1.0 / scale**2)
    if method == "ols":
        x = np.linalg.solve(A + w * D2, b + w * D2 @ x0)
    else:
        x = _consistent(tree, A, b, x0, w, scale, nf)
    rss = float(x @ A @ x - 2 * b @ x + equations.yy)
    return Fit(x[: len(theta0)], x[len(theta0):], rank, condition, dead,
               float(np.sqrt(max(rss, 0.0) / equations.rows)))


def _scales(tree, theta0, nf) -> np.ndarray:
    """Each parameter's size, for the regularizer: the body's mass, m·size, m·size² (size: 0.1 m
    at least), and 1 for friction."""
    out = np.ones(len(theta0) + nf)
    for i in range(tree.n_bodies):
        m = max(float(theta0[N_PARAMETERS * i]), 1e-3)
        size = max(0.1, float(np.linalg.norm(theta0[N_PARAMETERS * i + 1 : N_PARAMETERS * i + 4])) / m)
        out[N_PARAMETERS * i] = m
        out[N_PARAMETERS * i + 1 : N_PARAMETERS * i + 4] = m * size
        out[N_PARAMETERS * i + 4 : N_PARAMETERS * (i + 1)] = m * size**2
    return out


def pseudo_inertia(theta_i) -> np.ndarray:
    """J = [[½ tr(I) 1 − I, h], [hᵀ, m]] of one body (I about its origin): J ⪰ 0 exactly when
    some mass distribution has these parameters (Wensing, Kim & Slotine 2018)."""
    m, h = theta_i[0], theta_i[1:4]
    Ixx, Ixy, Iyy, Ixz, Iyz, Izz = theta_i[4:10]
    I = np.array([[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]])
    J = np.zeros((4, 4))
    J[0:3, 0:3] = 0.5 * np.trace(I) * np.eye(3) - I
    J[0:3, 3] = J[3, 0:3] = h
    J[3, 3] = m
    return J


def physically_consistent(theta, tol: float = 1e-9) -> bool:
    return all(np.linalg.eigvalsh(pseudo_inertia(theta[k : k + N_PARAMETERS]))[0] >= -tol * max(1.0, abs(theta[k]))
               for k in range(0, len(theta), N_PARAMETERS))


def _consistent(tree, A, b, x0, w, scale, nf) -> np.ndarray:
    """min xᵀAx − 2bᵀx + w ‖(x − x0)/scale‖² with every body's pseudo-inertia ⪰ 0 and friction ≥ 0."""
    try:
        import cvxpy as cp
    except ImportError:
        raise StateError("the consistent fit needs cvxpy and clarabel",
                         hint="pip install 'coriolis-cli[identify]'") from None
    P = len(x0)
    H = A + w * np.diag(1.0 / scale**2)
    g = b + w * x0 / scale**2
    # xᵀHx − 2gᵀx = ‖L x − L⁻¹g‖² + const with H = L Lᵀ: a sum of squares the conic solver takes
    L = np.linalg.cholesky(H + 1e-12 * np.trace(H) / P * np.eye(P))
    target = np.linalg.solve(L, g)
    x = cp.Variable(P)
    constraints = []
    for i in range(tree.n_bodies):
        o = N_PARAMETERS * i
        m, hx, hy, hz = x[o], x[o + 1], x[o + 2], x[o + 3]
        Ixx, Ixy, Iyy, Ixz, Iyz, Izz = (x[o + k] for k in range(4, 10))
        tr = 0.5 * (Ixx + Iyy + Izz)
        J = cp.bmat([[tr - Ixx, -Ixy, -Ixz, hx], [-Ixy, tr - Iyy, -Iyz, hy], [-Ixz, -Iyz, tr - Izz, hz], [hx, hy, hz, m]])
        constraints.append(0.5 * (J + J.T) >> 0)
    if nf:
        constraints.append(x[P - nf :] >= 0)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(L.T @ x - target)), constraints)
    problem.solve(solver=cp.CLARABEL)
    if x.value is None:
        raise StateError(f"the consistent fit found no solution ({problem.status})")
    return np.asarray(x.value, float)


def accumulate(robot, path, form: str = "torque", friction: str = "none", cutoff: float = DEFAULT_CUTOFF,
               equations: NormalEquations | None = None, **options) -> NormalEquations:
    """The normal equations of the recording ``path`` (recordings.stream_recording's options),
    added to ``equations`` (several recordings fit one robot)."""
    from .recordings import stream_recording

    rows = Rows(robot, form, friction, cutoff)
    width = len(rows.theta0) + friction_width(robot, friction)
    equations = equations or NormalEquations.empty(width)
    for samples in stream_recording(path, robot, accelerations=form == "torque", **options):
        if samples.effort is None:
            raise StateError(f"{path}: the recording has no effort (the applied τ), which identification needs")
        W, y = rows(samples)
        equations.add(W, y)
    return equations


def torque_rms(robot, path, theta, friction_coefficients=None, friction: str = "none", **options) -> np.ndarray:
    """Per DoF, the RMS of τ predicted by (θ, friction) minus the recorded τ along ``path``."""
    from .model.parameters import with_inertial_parameters
    from .recordings import stream_recording

    model = with_inertial_parameters(robot, theta)
    total, count = np.zeros(robot.nv), 0
    for samples in stream_recording(path, robot, accelerations=True, **options):
        tau = engine.inverse_dynamics(model, samples.q, samples.qd, samples.qdd)
        if friction != "none" and friction_coefficients is not None:
            tau = tau + np.stack([_friction_columns(v, friction) @ friction_coefficients for v in samples.qd])
        total += np.sum((tau - np.nan_to_num(samples.effort)) ** 2, axis=0)
        count += len(samples.t)
    return np.sqrt(total / max(count, 1))
