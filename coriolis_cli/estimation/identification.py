"""Identification of a robot's inertial parameters from its recordings (``coriolis identify``).

The dynamics are linear in θ (10 per body, model.parameters' order) and in friction f (per 1-DoF
joint: viscous b, then Coulomb c): W [θ; f] = y, one of three forms:

- torque:   Y(q, q̇, q̇, q̈) θ + diag(q̇) b + diag(sign q̇) c = τ − τ_armature, q̈ differentiated;
- momentum: the low-pass filter F = λ/(s + λ) applied to Hamilton's equations ṗ = τ − τ_f + Cᵀq̇ − g
            (Wensing–Slotine App. B-B1), with F[ṗ] = λ (p − F[p]):
            (λ (Y_p − F[Y_p]) − F[Y_c − Y_g]) θ + F[diag(q̇)] b + F[diag(sign q̇)] c = F[τ] − λ(p_a − F[p_a]);
- energy:   the same filter on d/dt (T + V) = q̇ᵀτ (App. B-B2), one row per sample:
            (λ (Y_T − F[Y_T]) + F[Y_V̇]) θ + F[q̇ ∘ q̇]ᵀ b + F[|q̇|]ᵀ c = F[q̇ᵀτ] − λ(T_a − F[T_a]);

the last two need no q̈ (p_a, T_a: the joints' armature, no inertial parameter). The filters'
first 5/λ seconds are left out, while they forget where they started.

The normal equations WᵀW, Wᵀy are accumulated block by block, so memory does not grow with the
recording. Only combinations of θ (the base parameters) are identifiable; their number is the
rank of WᵀW with every column scaled by its parameter's size (``regressor_scales``), which also
gives the condition number. The fit keeps the prior (the file's parameters) in the directions the
data do not reach through a regularizer: ``weight`` × mean(diag WᵀW) × ‖(x − x_prior)/scale‖².
``consistent`` solves the same least squares with every body's pseudo-inertia positive
semi-definite (Wensing, Kim & Slotine, RA-L 2018) and friction ≥ 0, by cvxpy and Clarabel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import engine
from ..engine.compiled import low_pass
from ..errors import StateError
from ..model.description import listed
from ..model.parameters import N_PARAMETERS, inertial_parameters, parameter_names

FORMS = ("torque", "momentum", "energy")
METHODS = ("ols", "consistent")
FRICTION = ("none", "viscous", "coulomb-viscous")
EFFORTS = ("held", "sampled")  # a command held over the step after its stamp, or a measurement at it
DEFAULT_CUTOFF = 20.0  # λ of the momentum and energy forms' filter, 1/s
DEFAULT_WEIGHT = 1e-6
SETTLE = 5.0  # time constants of the filter left out at the start of a recording
RANK_TOLERANCE = 1e-10  # eigenvalues of the scaled WᵀW below this × the largest: directions not reached
BLOCK_VALUES = 1 << 21  # regressor entries per block (16 MB), whatever the robot
PER_JOINT_BYTES = 256 * 2**20  # the per-DoF normal equations (nv P² doubles) are kept up to this size
REWEIGHTING_PASSES = 3  # fits with the DoF weighed by their residual spread (the first: unweighted)
OFFSET_SHARE = 0.3  # a DoF's residual mean above this share of its RMS: an offset in its effort
CONSISTENCY_MARGIN = 1e-4  # the consistent fit's pseudo-inertias ⪰ this × their scale (see _consistent)
PARAMETER_NAMES = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")  # θ_i: what the dynamics are linear in


def _tree(robot):
    if getattr(robot, "is_reduced", False):
        raise StateError(f"robot '{robot.name}': identification runs on kinematic trees; this robot is in other "
                         "coordinates (mimic joints, closed loops or a base velocity)",
                         hint="load it without them, e.g. its joints free")
    return robot


def check_effort(effort: str) -> None:
    if effort not in EFFORTS:
        raise StateError(f"effort must be 'held' (a command held until the next sample) or 'sampled' (measured at "
                         f"its stamp), got '{effort}'")


def check_rows_options(form: str, cutoff: float, effort: str) -> None:
    """StateError for a form, a filter cutoff or an effort mode the rows cannot take (checked
    before any kernel is compiled or recording read)."""
    check_effort(effort)
    if form not in FORMS:
        raise StateError(f"form must be one of {', '.join(FORMS)}, got '{form}'")
    if not 0 < cutoff < float("inf"):
        raise StateError(f"the filter's cutoff λ must be positive and finite, got {cutoff}")


def friction_dofs(robot) -> np.ndarray:
    """The DoFs that get friction: those of 1-DoF joints (not a free or spherical joint's)."""
    out, v = [], 0
    for b in robot.bodies:
        if b.joint.nv == 1:
            out.append(v)
        v += b.joint.nv
    return np.array(out, dtype=np.int64)


def joint_terms(friction: str) -> tuple[str, bool]:
    """(friction kind, whether a constant offset per joint is fitted too) of ``friction``: one of
    FRICTION, optionally with ``+offset`` (or ``offset`` alone): τ_recorded = Y θ + τ_f + o, the
    offset o a torque sensor's or a current reading's."""
    kind, plus, extra = str(friction).partition("+")
    if kind == "offset" and not plus:
        kind, plus, extra = "none", "+", "offset"
    if kind not in FRICTION or (plus and extra != "offset"):
        raise StateError(f"friction must be one of {', '.join(FRICTION)}, optionally with +offset, got '{friction}'")
    return kind, bool(plus)


def identified_friction(robot, fit, friction: str) -> dict[str, tuple[float, float]]:
    """{joint: (viscous, Coulomb)} as fitted, for the robot file (model.friction): Coulomb 0 where
    only viscous friction was fitted; empty when none was."""
    tree = _tree(robot)
    dofs = friction_dofs(tree)
    m = len(dofs)
    friction, _ = joint_terms(friction)
    if friction == "none" or m == 0:
        return {}
    viscous = fit.friction[:m]
    coulomb = fit.friction[m : 2 * m] if friction == "coulomb-viscous" else np.zeros(m)
    return {tree.dof_names[d]: (float(b), float(c)) for d, b, c in zip(dofs, viscous, coulomb)}


def identified_offsets(robot, fit, friction: str) -> dict[str, float]:
    """{joint: o} as fitted (τ_recorded = τ + o), empty when no offset was."""
    tree = _tree(robot)
    kind, offset = joint_terms(friction)
    if not offset:
        return {}
    dofs = friction_dofs(tree)
    start = FRICTION.index(kind) * len(dofs)
    return {tree.dof_names[d]: float(fit.friction[start + k]) for k, d in enumerate(dofs)}


def friction_width(robot, friction: str, signed_only: bool = False) -> int:
    """Columns of the joint terms (friction, then offsets); ``signed_only``: those of friction
    alone, which the consistent fit keeps ≥ 0."""
    kind, offset = joint_terms(friction)
    m = len(friction_dofs(robot))
    return FRICTION.index(kind) * m + (m if offset and not signed_only else 0)


def friction_columns(robot, QD, friction: str) -> np.ndarray:
    """(k, nv, width): diag(q̇), then diag(sign q̇), then the offsets' identity, on the friction DoFs."""
    k, n = QD.shape
    kind, offset = joint_terms(friction)
    dofs = friction_dofs(robot)
    out = np.zeros((k, n, friction_width(robot, friction)))
    m = len(dofs)
    if kind != "none":
        out[:, dofs, np.arange(m)] = QD[:, dofs]
    if kind == "coulomb-viscous":
        out[:, dofs, m + np.arange(m)] = np.sign(QD[:, dofs])
    if offset:
        out[:, dofs, FRICTION.index(kind) * m + np.arange(m)] = 1.0
    return out


def friction_names(robot, friction: str) -> tuple[str, ...]:
    names = [robot.dof_names[d] for d in friction_dofs(robot)]
    friction, offset = joint_terms(friction)
    kinds = {"none": (), "viscous": ("viscous",), "coulomb-viscous": ("viscous", "coulomb")}[friction] + \
        (("offset",) if offset else ())
    return tuple(f"{n}.{k}" for k in kinds for n in names)


@dataclass
class NormalEquations:
    """WᵀW, Wᵀy and yᵀy of every row added so far (``A``, ``b``, ``yy``), how many rows, and how
    many samples of the recordings they came from. Rows that belong to one DoF (the torque and
    momentum forms') are kept per DoF (``joints``), with each DoF's column sums and Σy, from which
    the fit weighs the DoF by their residuals and tells a constant offset in a DoF's effort; the
    totals are their sums, each row's product formed once."""

    rest_A: np.ndarray  # the rows not kept per DoF
    rest_b: np.ndarray
    rest_yy: float = 0.0
    rows: int = 0
    samples: int = 0
    joints: "JointEquations | None" = None

    @classmethod
    def empty(cls, width: int, dofs: int = 0) -> "NormalEquations":
        per_joint = dofs and dofs * width * width * 8 <= PER_JOINT_BYTES
        return cls(np.zeros((width, width)), np.zeros(width), joints=JointEquations.empty(dofs, width) if per_joint else None)

    @property
    def A(self) -> np.ndarray:
        return self.rest_A if self.joints is None else self.rest_A + self.joints.A.sum(axis=0)

    @property
    def b(self) -> np.ndarray:
        return self.rest_b if self.joints is None else self.rest_b + self.joints.b.sum(axis=0)

    @property
    def yy(self) -> float:
        return self.rest_yy if self.joints is None else self.rest_yy + float(self.joints.yy.sum())

    def add(self, W: np.ndarray, y: np.ndarray, joint: np.ndarray | None = None) -> None:
        """Rows W, y; ``joint``: each row's DoF (None: rows of no one DoF, as the energy form's)."""
        self.rows += len(y)
        if joint is not None and self.joints is not None:
            self.joints.add(W, y, joint)
            return
        if joint is None and self.joints is not None:  # a form without rows per DoF: nothing to weigh by
            self.rest_A, self.rest_b, self.rest_yy, self.joints = self.A, self.b, self.yy, None
        self.rest_A += W.T @ W
        self.rest_b += W.T @ y
        self.rest_yy += float(y @ y)


@dataclass
class JointEquations:
    """NormalEquations' terms per DoF j: Aⱼ = WⱼᵀWⱼ, bⱼ = Wⱼᵀyⱼ, yyⱼ, nⱼ rows, and the column sums
    1ᵀWⱼ and Σyⱼ (a residual's mean, which a constant offset in the effort leaves)."""

    A: np.ndarray  # (nv, P, P)
    b: np.ndarray  # (nv, P)
    yy: np.ndarray  # (nv,)
    n: np.ndarray  # (nv,)
    column_sums: np.ndarray  # (nv, P)
    y_sums: np.ndarray  # (nv,)

    @classmethod
    def empty(cls, dofs: int, width: int) -> "JointEquations":
        return cls(np.zeros((dofs, width, width)), np.zeros((dofs, width)), np.zeros(dofs), np.zeros(dofs, dtype=np.int64),
                   np.zeros((dofs, width)), np.zeros(dofs))

    def add(self, W, y, joint) -> None:
        for j in np.unique(joint):
            rows = joint == j
            Wj, yj = W[rows], y[rows]
            self.A[j] += Wj.T @ Wj
            self.b[j] += Wj.T @ yj
            self.yy[j] += float(yj @ yj)
            self.n[j] += len(yj)
            self.column_sums[j] += Wj.sum(axis=0)
            self.y_sums[j] += float(yj.sum())

    def residuals(self, x) -> tuple[np.ndarray, np.ndarray]:
        """Each DoF's residual RMS and mean at x (rows W x − y)."""
        n = np.maximum(self.n, 1)
        rss = np.maximum(np.einsum("i,jik,k->j", x, self.A, x) - 2 * self.b @ x + self.yy, 0.0)
        return np.sqrt(rss / n), (self.column_sums @ x - self.y_sums) / n


class _Previous:
    """Each row's predecessor, the last row of one block carried to the next (the first row of a
    recording is its own predecessor)."""

    def __init__(self):
        self.last = None

    def __call__(self, X: np.ndarray) -> np.ndarray:
        first = X[:1] if self.last is None else self.last
        self.last = X[-1:].copy()
        return np.concatenate([first, X[:-1]])


def effort_at_samples(TAU, effort: str, previous: _Previous) -> np.ndarray:
    """τ at each stamp: a held command's mean over the steps before and after it (to second order
    what acts at the stamp, as the centred q̈ averages the two steps), or the sample itself."""
    return 0.5 * (previous(TAU) + TAU) if effort == "held" else TAU


class _LowPass:
    """The core's low_pass (engine/core/filters.hpp) with its state kept between blocks: ``__call__(t, X)`` for a signal
    that varies continuously (the trapezoid), ``held(t, start, end)`` for explicit ends."""

    def __init__(self, cutoff: float):
        self.cutoff, self.state, self.clock, self.previous = cutoff, None, np.zeros(2), _Previous()

    def __call__(self, t: np.ndarray, X: np.ndarray) -> np.ndarray:
        X = np.ascontiguousarray(X.reshape(len(t), -1))
        return self.held(t, self.previous(X), X)

    def held(self, t, start, end) -> np.ndarray:
        start = np.ascontiguousarray(start.reshape(len(t), -1))
        end = np.ascontiguousarray(end.reshape(len(t), -1))
        if self.state is None:
            self.state = np.zeros(end.shape[1])
        out = np.empty_like(end)
        low_pass(np.ascontiguousarray(t, dtype=float), start, end, float(self.cutoff), self.state, self.clock, out)
        return out


class Rows:
    """The rows W, y of one form for the samples of a recording, block after block (the filters
    of the momentum and energy forms keep their state from one block to the next). Rows whose
    effort is not recorded (NaN: a floating base's, a joint without effort) are left out."""

    def __init__(self, robot, form: str = "torque", friction: str = "none", cutoff: float = DEFAULT_CUTOFF,
                 effort: str = "held"):
        check_rows_options(form, cutoff, effort)
        self.robot, self.form, self.friction, self.cutoff = _tree(robot), form, friction, cutoff
        self.theta0 = inertial_parameters(robot)
        # the armature's torque and momentum, found as the model's less Y θ0: a second pass, taken
        # only when some joint has armature
        self.armature = any(any(b.joint.armature) for b in robot.bodies)
        self.width = len(self.theta0) + friction_width(robot, friction)
        self.filters = [_LowPass(cutoff) for _ in range(3)]
        self.effort, self.previous_tau, self.previous_qd = effort, _Previous(), _Previous()
        self.start = None  # the recording's first stamp

    def blocks(self, samples):
        """(W, y, each row's DoF) for each block of one chunk of recordings.Samples (effort = τ; q̈ for
        the torque form)."""
        step = max(1, BLOCK_VALUES // max(1, self.robot.nv * self.width))
        for s in range(0, len(samples.t), step):
            e = min(len(samples.t), s + step)
            qdd = samples.qdd[s:e] if samples.qdd is not None else None
            yield self._rows(samples.t[s:e], samples.q[s:e], samples.qd[s:e], qdd, samples.effort[s:e])

    def _rows(self, t, Q, QD, QDD, TAU):
        robot, P = self.robot, len(self.theta0)
        FR = friction_columns(robot, QD, self.friction)
        if self.form == "torque":
            Y = engine.regressor(robot, Q, QD, QD, QDD)
            armature = engine.inverse_dynamics(robot, Q, QD, QDD) - Y @ self.theta0 if self.armature else 0.0
            return self._keep(np.concatenate([Y, FR], axis=2), effort_at_samples(TAU, self.effort, self.previous_tau)
                              - armature)
        lam = self.cutoff
        R = engine.momentum_regressors(robot, Q, QD)
        p_a = (engine.generalized_momentum(robot, Q, QD) - R.p @ self.theta0 if self.armature  # M_a q̇
               else np.zeros(QD.shape))
        self.start = t[0] if self.start is None else self.start
        settled = t - self.start >= SETTLE / lam  # F[ṗ] = λ(p − F[p]) once the filters forget their start
        if self.form == "momentum":
            p = np.concatenate([R.p, p_a[:, :, None]], axis=2)
            Fp = self.filters[0](t, p).reshape(p.shape)
            Fcg = self.filters[1](t, np.concatenate([R.c - R.g, FR], axis=2)).reshape(FR.shape[:2] + (-1,))
            tau = np.nan_to_num(TAU)
            if self.effort == "held":  # τ_{k−1} acted over (t_{k−1}, t_k]
                before = self.previous_tau(tau)
                Ftau = self.filters[2].held(t, before, before)
            else:
                Ftau = self.filters[2](t, tau)
            Wp = lam * (p - Fp)
            W = np.concatenate([Wp[:, :, :P] - Fcg[:, :, :P], Fcg[:, :, P:]], axis=2)
            y = Ftau - Wp[:, :, P]
            return self._keep(W[settled], np.where(np.isnan(TAU), np.nan, y)[settled])
        if np.isnan(TAU).any():
            raise StateError("the energy form needs the effort of every DoF (q̇ᵀτ); this recording lacks some "
                             "(a floating base's, a joint's)", hint="use --form torque or momentum")
        T = np.concatenate([R.T, 0.5 * np.einsum("kn,kn->k", QD, p_a)[:, None]], axis=1)
        power = np.einsum("kn,knc->kc", QD, FR)  # q̇ᵀ diag(q̇) = q̇ ∘ q̇, q̇ᵀ diag(sign q̇) = |q̇|
        FT = self.filters[0](t, T)
        Fv = self.filters[1](t, np.concatenate([R.Vdot, power], axis=1))
        if self.effort == "held":  # over (t_{k−1}, t_k]: q̇ from q̇_{k−1} to q̇_k against the held τ_{k−1}
            before = self.previous_tau(TAU)
            Fpower = self.filters[2].held(t, np.einsum("kn,kn->k", self.previous_qd(QD), before),
                                          np.einsum("kn,kn->k", QD, before))[:, 0]
        else:
            Fpower = self.filters[2](t, np.einsum("kn,kn->k", QD, TAU))[:, 0]
        WT = lam * (T - FT)
        W = np.concatenate([WT[:, :P] + Fv[:, :P], Fv[:, P:]], axis=1)
        return self._keep(W[settled][:, None, :], (Fpower - WT[:, P])[settled][:, None])

    def _keep(self, W, y):
        """The rows (k·rows, width) whose measured side is known, and each row's DoF (None for the
        energy form's one row per sample)."""
        per_sample = y.shape[1]
        joint = None if self.form == "energy" else np.broadcast_to(np.arange(per_sample), y.shape).reshape(-1)
        W, y = W.reshape(-1, self.width), y.reshape(-1)
        known = np.isfinite(y)
        if known.all():
            return W, y, joint
        return W[known], y[known], None if joint is None else joint[known]


@dataclass
class Fit:
    """The identified parameters and what the data say about them."""

    theta: np.ndarray  # the bodies' parameters (10 N)
    friction: np.ndarray  # viscous b, then Coulomb c, per friction DoF (friction_names' order)
    names: tuple  # of [θ; f]
    base_parameters: int  # the rank of the scaled WᵀW: how many combinations the data identify
    condition: float  # of W, columns scaled, on its identifiable subspace
    residual_rms: float  # of W x − y over the rows fitted
    rows: int
    covariance: np.ndarray  # of [θ; f]: σ² H⁻¹ A H⁻¹ with σ² = RSS / (rows − rank) and H A regularized
    null_space: np.ndarray  # (P, P − rank), in scaled parameters: the directions the data do not reach
    scales: np.ndarray  # (P,) each parameter's size
    moved: np.ndarray  # (P,) bool: whether the parameter's column of W is not zero
    joint_weights: np.ndarray | None = None  # (nv,) each DoF's rows' weight, 1/σⱼ² normalized (None: unweighted)
    joint_rms: np.ndarray | None = None  # (nv,) each DoF's residual RMS at the fit, unweighted
    joint_mean: np.ndarray | None = None  # (nv,) each DoF's residual mean: an offset in its effort?

    def identifiable(self, gradient: np.ndarray, tol: float = 1e-6) -> bool:
        """Whether the linear function gradient · [θ; f] is fixed by the data (orthogonal to every
        direction the data do not reach)."""
        g = np.asarray(gradient, float) * self.scales
        norm = float(np.linalg.norm(g))
        return norm == 0.0 or float(np.linalg.norm(self.null_space.T @ g)) <= tol * norm

    def std(self, gradient: np.ndarray) -> float:
        """The standard deviation of gradient · [θ; f] (NaN where the data do not fix it)."""
        g = np.asarray(gradient, float)
        return float(np.sqrt(max(g @ self.covariance @ g, 0.0))) if self.identifiable(g) else float("nan")


def fit(robot, equations: NormalEquations, method: str = "ols", friction: str = "none",
        weight: float = DEFAULT_WEIGHT, reweight: bool = True) -> Fit:
    """θ and friction from the accumulated normal equations (see the module's docstring). With
    ``reweight`` (and rows per DoF), each DoF's rows are weighed by 1/σⱼ², σⱼ its residual RMS at
    the previous fit, over REWEIGHTING_PASSES fits: an unweighted fit is ruled by the joints of
    large torque (and by their sensors' offsets), and leaves a wrist's small torques unexplained."""
    if method not in METHODS:
        raise StateError(f"method must be one of {', '.join(METHODS)}, got '{method}'")
    if not 0 <= weight < float("inf"):
        raise StateError(f"the regularization weight must be ≥ 0 and finite, got {weight}")
    tree = _tree(robot)
    theta0 = inertial_parameters(tree)
    nf = friction_width(tree, friction)
    P = len(theta0) + nf
    A0, b0, yy0 = equations.A, equations.b, equations.yy  # sums over the DoF's terms: formed once
    if A0.shape != (P, P):
        raise StateError(f"the normal equations hold {A0.shape[0]} parameters; this robot and friction need {P}")
    if equations.rows == 0:
        raise StateError("no rows to fit: the recordings gave no samples with effort")
    if method == "consistent" and weight == 0:
        raise StateError("the consistent fit needs a regularization weight > 0", hint="e.g. --weight 1e-6")
    joints = equations.joints if reweight else None
    scale = regressor_scales(tree, theta0, nf)
    x0 = np.concatenate([theta0, np.zeros(nf)])
    A, b, yy, omega = A0, b0, yy0, None
    x, solved = _solve(tree, A, b, method, friction, weight, x0, scale, nf)
    for _ in range(REWEIGHTING_PASSES - 1 if joints is not None else 0):
        sigma, _ = joints.residuals(x)
        sigma = np.maximum(sigma, 1e-3 * max(float(sigma.max()), 1e-300))
        omega = 1.0 / sigma**2
        omega *= joints.n.sum() / max(float(omega @ joints.n), 1e-300)  # as many rows' worth as unweighted
        A, b, yy = np.einsum("j,jik->ik", omega, joints.A), omega @ joints.b, float(omega @ joints.yy)
        x, solved = _solve(tree, A, b, method, friction, weight, x0, scale, nf)
    rank, condition, reached, vec, Hs_inv, top = solved
    rss = max(float(x @ A @ x - 2 * b @ x + yy), 0.0)  # weighted, as the fit sees it
    sigma2 = rss / max(equations.rows - rank, 1)
    Hinv = Hs_inv * np.outer(scale, scale)
    names = parameter_names(tree) + friction_names(tree, friction)
    plain = max(float(x @ A0 @ x - 2 * b0 @ x + yy0), 0.0)
    joint_rms, joint_mean = equations.joints.residuals(x) if equations.joints is not None else (None, None)
    As = A * np.outer(scale, scale)
    return Fit(x[: len(theta0)], x[len(theta0):], names, rank, condition, float(np.sqrt(plain / equations.rows)),
               equations.rows, sigma2 * Hinv @ A @ Hinv, vec[:, ~reached], scale, np.diag(As) > RANK_TOLERANCE * top,
               omega, joint_rms, joint_mean)


def _solve(tree, A, b, method, friction, weight, x0, scale, nf):
    """x of one (weighted) least-squares fit, and what the scaled WᵀW says: (rank, condition,
    the directions reached, its eigenvectors, the scaled inverse of the regularized H, its top
    eigenvalue)."""
    As = A * np.outer(scale, scale)
    eig, vec = np.linalg.eigh(As)
    top = max(float(eig[-1]), 1e-300)
    reached = eig > RANK_TOLERANCE * top
    rank = int(np.sum(reached))
    kept = eig[reached]
    condition = float(np.sqrt(kept[-1] / kept[0])) if len(kept) else float("inf")
    w = weight * float(np.mean(np.diag(As)))
    # in scaled offsets from the prior, z = (x − x0)/scale: (S A S + w 1) z = S (b − A x0); with
    # w = 0, the least-norm z (the prior kept exactly where the data say nothing)
    inverse = np.where(reached, 1.0 / np.where(reached, eig + w, 1.0), 1.0 / w if w > 0 else 0.0)
    Hs_inv = (vec * inverse) @ vec.T
    if method == "ols":
        x = x0 + scale * (Hs_inv @ (scale * (b - A @ x0)))
    else:
        H = A + w * np.diag(1.0 / scale**2)
        x = _consistent(tree, H, b + w * x0 / scale**2, nf, friction_width(tree, friction, signed_only=True), scale)
    return x, (rank, condition, reached, vec, Hs_inv, top)


def regressor_scales(tree, theta0, nf) -> np.ndarray:
    """Each parameter's size: the body's mass, m·size, m·size² (size: 0.1 m at least, else its
    COM's distance), and 1 for friction (N·m·s, N·m)."""
    out = np.ones(len(theta0) + nf)
    for i in range(tree.n_bodies):
        o = N_PARAMETERS * i
        m = max(float(theta0[o]), 1e-3)
        size = max(0.1, float(np.linalg.norm(theta0[o + 1 : o + 4])) / m)
        out[o] = m
        out[o + 1 : o + 4] = m * size
        out[o + 4 : o + N_PARAMETERS] = m * size**2
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


def inconsistent_bodies(robot, theta) -> str:
    """The bodies whose parameters no mass distribution has, named with their mass, for a message."""
    tree = _tree(robot)
    bad = [f"{tree.bodies[k // N_PARAMETERS].name}: mass {theta[k]:.3g} kg" for k in range(0, len(theta), N_PARAMETERS)
           if not physically_consistent(theta[k : k + N_PARAMETERS])]
    return listed(bad, 3)


def fitted_dof_names(robot) -> tuple:
    """The DoF whose rows JointEquations keeps, in its order: the tree's."""
    return _tree(robot).dof_names


def offset_suspects(robot, fit) -> list[str]:
    """The DoF whose residual mean is OFFSET_SHARE of its RMS or more: a constant offset in the
    effort, which --fit-offset fits, more likely than a model that errs on one side."""
    if fit.joint_mean is None:
        return []
    names = fitted_dof_names(robot)
    return [names[j] for j in np.flatnonzero(np.abs(fit.joint_mean) >= OFFSET_SHARE * np.maximum(fit.joint_rms, 1e-300))]


def require_solver() -> None:
    """StateError, saying what to install, unless the consistent fit's cvxpy and Clarabel import."""
    try:
        import clarabel  # noqa: F401
        import cvxpy  # noqa: F401
    except ImportError:
        raise StateError("the consistent fit needs cvxpy and clarabel",
                         hint="pip install 'coriolis-cli[identify]', or use --method ols") from None


def _consistent(tree, H, g, nf, signed, scale) -> np.ndarray:
    """min xᵀHx − 2gᵀx with every body's pseudo-inertia J ⪰ CONSISTENCY_MARGIN · diag(m s², m s², m s², m)
    (m and s its scales: regressor_scales) and friction ≥ 0 (the first ``signed`` of the ``nf``
    joint terms; offsets take either sign). The margin keeps the fit inside the consistent set
    rather than on its boundary, where the solver's round-off left principal moments of −1e-11
    that MuJoCo refuses to compile and every later command warned about."""
    require_solver()
    import cvxpy as cp

    P = len(g)
    # xᵀHx − 2gᵀx = ‖Lᵀx − L⁻¹g‖² + const with H = L Lᵀ: a sum of squares the conic solver takes
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
        m_s, ms2 = float(scale[o]), float(scale[o + 4])
        constraints.append(0.5 * (J + J.T) >> CONSISTENCY_MARGIN * np.diag([ms2, ms2, ms2, m_s]))
    if signed:
        constraints.append(x[P - nf : P - nf + signed] >= 0)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(L.T @ x - target)), constraints)
    try:
        problem.solve(solver=cp.CLARABEL)
    except (cp.error.SolverError, ImportError) as e:
        raise StateError(f"the consistent fit failed in the solver: {str(e).splitlines()[0] if str(e) else e}",
                         hint="pip install 'coriolis-cli[identify]', or use --method ols") from None
    if x.value is None:
        raise StateError(f"the consistent fit found no solution ({problem.status})", hint="try --method ols")
    return np.asarray(x.value, float)


@dataclass
class BodyReport:
    name: str
    prior: np.ndarray  # θ_i (PARAMETER_NAMES: m, m·c, I about the body frame's origin)
    identified: np.ndarray
    std: np.ndarray  # NaN: not identifiable alone (the data fix only combinations with others)
    moves: bool  # whether any of its parameters moves the recorded efforts


def body_reports(robot, fit: Fit) -> list[BodyReport]:
    """Per body, its prior and identified parameters with their standard deviations. They are
    θ_i itself: the first moment m·c, not c, is what joint torques see (a payload's m·c about
    the last joint is identifiable when its mass is not)."""
    tree = _tree(robot)
    theta0 = inertial_parameters(tree)
    unit = np.eye(len(fit.scales))
    out = []
    for i, b in enumerate(tree.bodies):
        o = N_PARAMETERS * i
        std = np.array([fit.std(unit[o + k]) for k in range(N_PARAMETERS)])
        out.append(BodyReport(b.name, theta0[o : o + N_PARAMETERS], fit.theta[o : o + N_PARAMETERS], std,
                              bool(np.any(fit.moved[o : o + N_PARAMETERS]))))
    return out


def friction_reports(fit: Fit) -> list[tuple[str, str, float, float]]:
    """Per friction coefficient: (DoF, kind, identified, standard deviation)."""
    P, unit = len(fit.theta), np.eye(len(fit.scales))
    return [(*name.rsplit(".", 1), float(fit.friction[k]), fit.std(unit[P + k])) for k, name in enumerate(fit.names[P:])]


def unidentifiable(robot, fit: Fit) -> dict[str, tuple[str, ...]]:
    """Per body, the PARAMETER_NAMES the data do not fix (every one: the body moves no recorded effort)."""
    return {r.name: tuple(q for q, s in zip(PARAMETER_NAMES, r.std) if np.isnan(s)) for r in body_reports(robot, fit)
            if np.isnan(r.std).any()}


def _no_effort(path, purpose: str) -> StateError:
    return StateError(f"{path}: the recording has no effort (the applied τ){purpose}")


TO_FIT, TO_VALIDATE = ", which identification needs", " to validate against"


def require_effort(robot, fitted, validation=None, form: str = "torque", **options) -> None:
    """StateError for the first recording that has no effort, read no further than its first chunk
    (recordings.first_samples): the CLI asks before the kernels compile. ``options`` as accumulate's."""
    from ..recordings import first_samples

    for path, purpose in [(p, TO_FIT) for p in fitted] + ([(validation, TO_VALIDATE)] if validation else []):
        first = first_samples(path, _tree(robot), accelerations=form == "torque", **options)
        if first is not None and first.effort is None:
            raise _no_effort(path, purpose)


def _within(samples, span):
    """The samples whose stamps lie in [span[0], span[1]) (all of them for span None), or None."""
    if span is None:
        return samples
    keep = (samples.t >= span[0]) & (samples.t < span[1])
    if keep.all():
        return samples
    if not keep.any():
        return None
    from ..recordings import Samples

    return Samples(*(None if x is None else x[keep] for x in (samples.t, samples.q, samples.qd, samples.qdd,
                                                              samples.effort)))


def accumulate(robot, path, form: str = "torque", friction: str = "none", cutoff: float = DEFAULT_CUTOFF,
               equations: NormalEquations | None = None, effort: str = "held", span=None,
               **options) -> NormalEquations:
    """The normal equations of the recording ``path`` (recordings.stream_recording's options),
    added to ``equations`` (several recordings fit one robot; each starts its filters afresh).
    ``span`` = (start, end) in the recording's stamps: only the samples in [start, end)."""
    from ..recordings import stream_recording

    rows = Rows(robot, form, friction, cutoff, effort)
    equations = equations or NormalEquations.empty(rows.width, 0 if form == "energy" else _tree(robot).nv)
    last = None
    moved = np.zeros(_tree(robot).nv, dtype=bool)  # which DoF's effort is ever other than 0
    for samples in stream_recording(path, robot, accelerations=form == "torque", **options):
        if samples.effort is None:
            raise _no_effort(path, TO_FIT)
        moved |= np.any(np.nan_to_num(samples.effort, nan=1.0) != 0.0, axis=0)
        samples = _within(samples, span)
        if samples is None:
            continue
        for W, y, joint in rows.blocks(samples):
            equations.add(W, y, joint)
        equations.samples += len(samples.t)
        last = samples.t[-1]
    if last is not None and not moved.all():
        names = [_tree(robot).dof_names[k] for k in np.flatnonzero(~moved)]
        raise StateError(f"{path}: the effort of {', '.join(names[:4])}{' and more' if len(names) > 4 else ''} is 0 at "
                         "every sample: not a recorded torque (a topic without effort, a drive switched off); fit on "
                         "a recording of the applied torques, or lock those joints")
    if form != "torque" and last is not None and rows.start is not None and last - rows.start < SETTLE / cutoff:
        raise StateError(f"{path}: the {form} form's filter at λ = {cutoff:g}/s forgets its start after 5/λ = "
                         f"{SETTLE / cutoff:.3g} s, longer than the recording ({last - rows.start:.3g} s): no rows",
                         hint=f"give --cutoff {SETTLE / max(last - rows.start, 1e-9) * 4:.3g} or more, or --form torque")
    return equations


@dataclass
class Validation:
    """Measured and predicted τ along a recording: RMS per DoF for each model, and up to
    ``keep`` samples of each for a plot."""

    dof_names: tuple
    rms: dict  # model name → (nv,)
    t: np.ndarray
    measured: np.ndarray  # (k, nv)
    predicted: dict  # model name → (k, nv)
    samples: int


def validate(robot, path, models: dict, friction: str = "none", keep: int = 4000, effort: str = "held", span=None,
             **options) -> Validation:
    """τ predicted by each of ``models`` (name → (θ, friction coefficients)) against the recorded
    τ of ``path`` (q̈ differentiated as recordings do; a held τ as Rows takes it); DoF without
    effort are NaN. ``span`` = (start, end): only the samples stamped in [start, end)."""
    from ..model.parameters import with_inertial_parameters
    from ..recordings import stream_recording

    tree = _tree(robot)
    check_effort(effort)
    previous = _Previous()
    built = {name: (with_inertial_parameters(tree, theta), f) for name, (theta, f) in models.items()}
    n = tree.nv
    total = {name: np.zeros(n) for name in models}
    count, samples_seen = np.zeros(n), 0
    stride, kept = 1, []  # every stride-th sample kept for a plot; the stride doubles past 2 × keep
    for samples in stream_recording(path, tree, accelerations=True, **options):
        if samples.effort is None:
            raise _no_effort(path, TO_VALIDATE)
        measured = effort_at_samples(samples.effort, effort, previous)  # the held τ needs each sample's predecessor
        if span is not None:
            inside = (samples.t >= span[0]) & (samples.t < span[1])
            if not inside.any():
                continue
            samples, measured = _within(samples, span), measured[inside]
        FR = friction_columns(tree, samples.qd, friction)
        known = np.isfinite(measured)
        count += known.sum(axis=0)
        predicted = {}
        for name, (model, f) in built.items():
            tau = engine.inverse_dynamics(model, samples.q, samples.qd, samples.qdd)
            if f is not None and len(f):
                tau = tau + FR @ f
            predicted[name] = tau
            total[name] += np.sum(np.where(known, tau - measured, 0.0) ** 2, axis=0)
        pick = slice((-samples_seen) % stride, None, stride)
        samples_seen += len(samples.t)
        kept.append((samples.t[pick], measured[pick], {k: v[pick] for k, v in predicted.items()}))
        if sum(len(k[0]) for k in kept) > 2 * keep:
            stride *= 2
            kept = [(a[::2], b[::2], {k: v[::2] for k, v in c.items()}) for a, b, c in kept]
    if not samples_seen:
        raise StateError(f"{path}: no samples to validate against")
    rms = {name: np.where(count > 0, np.sqrt(v / np.maximum(count, 1)), np.nan) for name, v in total.items()}
    return Validation(tuple(tree.dof_names), rms, np.concatenate([k[0] for k in kept]),
                      np.concatenate([k[1] for k in kept]),
                      {name: np.concatenate([k[2][name] for k in kept]) for name in models}, samples_seen)


def torque_rms(robot, path, theta, friction_coefficients=None, friction: str = "none", effort: str = "held",
               **options) -> np.ndarray:
    """Per DoF, the RMS of τ predicted by (θ, friction) minus the recorded τ along ``path``."""
    return validate(robot, path, {"model": (theta, friction_coefficients)}, friction, keep=1, effort=effort,
                    **options).rms["model"]
