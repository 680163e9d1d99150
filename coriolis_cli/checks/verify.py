"""`coriolis verify`: random trials against identities and independent references.

Each check reports its largest absolute error over the trials, the same relative to the size of
the quantity, and passes when the relative error is within its tolerance. The size is that of the
reference or, when larger, a scale that cannot vanish: ‖M‖·max(1, ‖q̇‖)^k with k the number of
velocities in the quantity (0 for M and Γ, 1 for C and Ṁ, 2 for C q̇ and τ). A robot whose C is
physically zero (a gripper, a racecar) is then not failed for round-off divided by round-off. The engine is
reached through ``coriolis_cli.engine`` at call time, so a corrupted engine is caught.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field

import numpy as np

from .. import engine
from ..engine.coordinates import derivatives_refusal, evaluation
from ..model import load_robot
from ..model.parameters import inertial_parameters
from ..model.bundled import BUNDLED_DIR  # installed with the package (robots/ in a checkout links here)
from ..model.tree import RobotModel
from ..peers import finite_differences as fd
from ..peers import pinocchio as pinocchio_peer
from ..peers.safeea import christoffel_safeea, is_serial_revolute

TINY = 1e-300

CHECKS = {
    "a": ("C q̇ = RNEA (gravity off)", 1e-10),
    "b": ("Ṁ = C + Cᵀ", 1e-10),
    "c": ("Ṁ = d/dt M (finite differences)", 1e-6),
    "d": ("C = Σ_k Γ[:, :, k] q̇_k", 1e-10),
    "e": ("Γ = eq. (4) from finite differences of M", 1e-6),
    "f1": ("Γ_ijk = Γ_ikj (coordinates)", 1e-10),
    "f2": ("branch sparsity of M, C, Γ (exact zeros)", 0.0),
    "g": ("M symmetric positive definite", 0.0),
    "h": ("planar 2-link closed form", 1e-12),
    "i": ("Γ = Safeea recursion", 1e-10),
    "j": ("M, C, RNEA = Pinocchio", 1e-10),
    "k": ("inertias of rigid bodies (PSD, triangle inequality)", 0.0),
    "l": ("∂τ/∂q̇ = 2C (Remark 3) = Pinocchio's RNEA derivative", 1e-10),
    "m": ("M, C q̇ + g = MuJoCo (mj_fullM, qfrc_bias)", 1e-10),
    "n": ("p, Cᵀq̇ (O(N)); Y_p, Y_c, Y_g, Y_T, Y_V̇ θ (Alg. 4)", 1e-10),
    "o": ("derivatives of τ (1st, 2nd), q̈, g, Slotine–Li, Cᵀq̇ = central differences", 1e-6),
}


@dataclass
class CheckResult:
    key: str
    name: str
    max_abs: float | None
    max_rel: float | None
    tolerance: float
    trials: int
    passed: bool | None  # None: not applicable to this robot, or skipped
    note: str = ""
    warning: bool = False  # something is wrong with the robot, not with the numbers: does not fail


@dataclass
class RobotVerification:
    label: str
    robot: str
    nv: int
    floating_base: bool
    trials: int
    checks: list[CheckResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(c.passed is not False for c in self.checks)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["passed"] = self.passed
        return d


class _Acc:
    """Running max of absolute errors and of reference sizes for one check."""

    def __init__(self):
        self.err = 0.0
        self.ref = 0.0
        self.n = 0

    def add(self, err, ref, floor: float = 0.0):
        """``floor``: the scale below which the size of ``ref`` is not trusted (see the module)."""
        err = np.asarray(err)
        ref = np.asarray(ref)
        e = float(np.max(np.abs(err))) if err.size else 0.0
        self.err = max(self.err, e if np.isfinite(e) else np.inf)
        self.ref = max(self.ref, float(np.max(np.abs(ref))) if ref.size else 0.0, floor)
        self.n += 1

    def result(self, key, note=""):
        name, tol = CHECKS[key]
        if self.n == 0:
            return CheckResult(key, name, None, None, tol, 0, None, note or "skipped: no trials")
        rel = self.err / max(self.ref, TINY) if self.ref > 0 else self.err
        return CheckResult(key, name, self.err, rel, tol, self.n, bool(rel <= tol), note)


def _na(key, note) -> CheckResult:
    name, tol = CHECKS[key]
    return CheckResult(key, name, None, None, tol, 0, None, note)


def planar_two_link_params(robot: RobotModel):
    """(m1, m2, l1, lc1, lc2, Izz1, Izz2) when ROBOT is a planar 2R arm about z, else None."""
    if robot.nv != 2 or robot.floating_base or robot.n_bodies != 2:
        return None
    b1, b2 = robot.bodies
    z = np.array([0.0, 0.0, 1.0])
    for b in (b1, b2):
        if b.joint.type not in ("revolute", "continuous") or not np.allclose(b.joint.axis, z) or not np.allclose(b.joint.rotation, np.eye(3)):
            return None
        if abs(b.com[1]) > 0 or abs(b.com[2]) > 0 or abs(b.inertia[0, 2]) + abs(b.inertia[1, 2]) > 0:
            return None
    if b2.parent != 0 or abs(b2.joint.translation[1]) + abs(b2.joint.translation[2]) > 0 or np.any(b1.joint.translation):
        return None
    return b1.mass, b2.mass, b2.joint.translation[0], b1.com[0], b2.com[0], b1.inertia[2, 2], b2.inertia[2, 2]


def two_link_closed_form(params, q, qd):
    m1, m2, l1, lc1, lc2, I1, I2 = params
    c2, s2 = np.cos(q[1]), np.sin(q[1])
    M = np.array(
        [
            [I1 + I2 + m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2), I2 + m2 * (lc2**2 + l1 * lc2 * c2)],
            [I2 + m2 * (lc2**2 + l1 * lc2 * c2), I2 + m2 * lc2**2],
        ]
    )
    h = -m2 * l1 * lc2 * s2
    C = np.array([[h * qd[1], h * (qd[0] + qd[1])], [-h * qd[0], 0.0]])
    return M, C


def verify_robot(robot: RobotModel, label: str | None = None, trials: int = 100, seed: int = 0,
                 ref_trials: int = 10, use_pinocchio: bool = True, progress=None) -> RobotVerification:
    """Run checks a-j on ``trials`` random states (q in [0, 2π] or the joint limits, q̇ in [0, 10]).

    The finite-difference, Safeea and Pinocchio references run on the first ``ref_trials`` states.
    """
    rng = np.random.default_rng(seed)
    n = robot.nv
    acc = {k: _Acc() for k in CHECKS}
    rel = robot.dof_related
    triple = rel[:, :, None] & rel[:, None, :] & rel[None, :, :]
    reduced = getattr(robot, "is_reduced", False)  # other coordinates: references are on the full tree
    tree = robot.full if reduced else robot
    params = None if reduced else planar_two_link_params(robot)
    serial = not reduced and is_serial_revolute(robot) and not robot.floating_base
    coordinates = robot.velocities_are_coordinates  # else generalized speeds (free, planar, spherical)
    mj_peer, mj_why = _mujoco_peer(robot, reduced)
    pin_ok = use_pinocchio and pinocchio_peer.available()
    peer, pin_why = None, "pin (Pinocchio) is not installed (pip install 'coriolis-cli[bench]')" if use_pinocchio else "skipped"
    if pin_ok:
        try:
            peer = pinocchio_peer.PinocchioPeer(tree)
        except pinocchio_peer.PeerUnavailable as e:
            pin_why = str(e)
    armed = any(any(b.joint.armature) for b in tree.bodies)
    derivatives_why = derivatives_refusal(robot)  # None where the derivatives apply
    derivatives = derivatives_why is None
    derivative_rng = np.random.default_rng(seed + 1)  # its own draws: the other checks' states stay as they were
    theta = inertial_parameters(tree)
    min_eig_ratio = np.inf
    sym_M = 0.0
    definite = True
    zeros = np.zeros(n)
    for t in range(trials):
        q = engine.random_configuration(robot, rng)
        qd = rng.uniform(0.0, 10.0, n)
        M, Mdot, C = engine.coriolis_matrix(robot, q, qd)
        G = engine.christoffel(robot, q)
        tau = engine.inverse_dynamics(robot, q, qd, zeros, gravity=False)
        m = float(np.max(np.abs(M)))  # > 0 for any robot with mass
        w = max(1.0, float(np.max(np.abs(qd))))
        acc["a"].add(C @ qd - tau, tau, m * w * w)
        acc["b"].add(Mdot - C - C.T, Mdot, m * w)
        acc["d"].add(C - G @ qd, C, m * w)
        if coordinates:
            acc["f1"].add(G - G.transpose(0, 2, 1), G, m)
        acc["f2"].add(np.concatenate([M[~rel], C[~rel], Mdot[~rel], G[~triple]]), M)
        sym_M = max(sym_M, float(np.abs(M - M.T).max()))
        eig = np.linalg.eigvalsh(0.5 * (M + M.T))
        min_eig_ratio = min(min_eig_ratio, eig[0] / eig[-1])
        definite = definite and engine.positive_definite(M)
        if params is not None:
            Mr, Cr = two_link_closed_form(params, q, qd)
            acc["h"].add(np.concatenate([(M - Mr).ravel(), (C - Cr).ravel()]), np.concatenate([Mr.ravel(), Cr.ravel()]), m * w)
        if t < ref_trials:
            acc["c"].add(Mdot - fd.mdot_fd(robot, engine.mass_matrix, q, qd), Mdot, m * w)
            if coordinates:
                acc["e"].add(G - fd.christoffel_fd(robot, engine.mass_matrix, q), G, m)
            if serial:
                acc["i"].add(G - christoffel_safeea(robot, q), G, m)
            if peer is not None:
                tg = engine.inverse_dynamics(robot, q, qd, zeros)
                Mp, Cp, tp, dtau = _pinocchio_reference(robot, peer, q, qd, coordinates)
                err = np.concatenate([(M - Mp).ravel(), (C - Cp).ravel(), tg - tp])
                acc["j"].add(err, np.concatenate([M.ravel(), C.ravel(), tg]), m * w * w)
                if dtau is not None:
                    acc["l"].add(dtau - 2.0 * C, C, m * w)
            p, ct = engine.generalized_momentum(robot, q, qd), engine.coriolis_transpose_velocity(robot, q, qd)
            err, ref = [p - M @ qd, ct - C.T @ qd], [M @ qd, C.T @ qd]
            if not armed:  # the regressors leave armature out: compared where there is none
                Y = engine.momentum_regressors(robot, q, qd)
                g = engine.inverse_dynamics(robot, q, zeros, zeros)
                T = 0.5 * qd @ M @ qd
                err += [Y.p @ theta - M @ qd, Y.c @ theta - C.T @ qd, Y.g @ theta - g, [Y.T @ theta - T],
                        [Y.Vdot @ theta - qd @ g]]
                ref += [g, [T], [qd @ g]]
            acc["n"].add(np.concatenate(err), np.concatenate(ref), m * w * w)
            if derivatives:
                qdd = derivative_rng.uniform(-10.0, 10.0, n)
                err, ref = _derivative_errors(robot, q, qd, qdd)
                acc["o"].add(err, ref, 1.0)
            if mj_peer is not None:
                qt, vt = (evaluation(robot).full_configuration(q), evaluation(robot).jacobian(q) @ qd) if reduced else (q, qd)
                T, Mj, bias, rate = mj_peer.mass_and_bias(qt, vt)
                Mt = engine.mass_matrix(tree, qt) if reduced else M
                tb = engine.inverse_dynamics(tree, qt, vt, rate)  # τ(q, ν, Ṫ qvel): MuJoCo's bias before Tᵀ
                err = np.concatenate([(T.T @ Mt @ T - Mj).ravel(), T.T @ tb - bias])
                acc["m"].add(err, np.concatenate([Mj.ravel(), bias]), float(np.max(np.abs(Mt))) * w * w)
        if progress is not None:
            progress()
    out = RobotVerification(label or robot.name, robot.name, n, robot.floating_base, trials)
    for key in ("a", "b", "c", "d"):
        out.checks.append(acc[key].result(key))
    out.checks.append(acc["e"].result("e") if coordinates else
                      _na("e", "generalized speeds: Γ[:, :, k] = C(q, e_k) is checked by (d)"))
    out.checks.append(acc["f1"].result("f1") if coordinates else
                      _na("f1", "not symmetric for generalized speeds (Wensing–Slotine eq. 9-10)"))
    f2 = acc["f2"].result("f2")
    f2.max_rel = f2.max_abs
    f2.passed = f2.max_abs == 0.0
    out.checks.append(f2)
    name, tol = CHECKS["g"]
    note = "max_rel holds min λ(M)/max λ(M); judged by Cholesky of the unit-diagonal M"
    if robot.massless_joints:
        n = len(robot.massless_joints)
        note += f"; at q = 0, {n} joint{'s move' if n > 1 else ' moves'} no mass (see the warning above)"
    out.checks.append(CheckResult("g", name, sym_M, float(min_eig_ratio), tol, trials, bool(sym_M == 0.0 and definite),
                                  note, warning=bool(robot.massless_joints) and definite))
    out.checks.append(acc["h"].result("h") if params is not None else _na("h", "not a planar 2R arm"))
    out.checks.append(acc["i"].result("i") if serial else _na("i", "the Safeea recursion covers fixed-base serial revolute chains"))
    out.checks.append(acc["j"].result("j") if peer is not None else _na("j", pin_why))
    name, tol = CHECKS["k"]
    issues = robot.inertia_issues
    worst = max((i.shortfall for i in issues), default=0.0)
    out.checks.append(CheckResult("k", name, worst, worst, tol, len(robot.bodies), True if not issues else None,
                                  f"{len(issues)} link{'s' if len(issues) > 1 else ''}, worst "
                                  f"{max(issues, key=lambda i: i.shortfall)} (computed as given; see the warning above)"
                                  if issues else "",
                                  warning=bool(issues)))
    out.checks.append(acc["l"].result("l") if peer is not None and coordinates else
                      _na("l", pin_why if peer is None else
                          "generalized speeds: ∂τ/∂ν ≠ 2C (Remark 3 holds in coordinates)"))
    if mj_peer is not None:
        out.checks.append(acc["m"].result("m", "on the tree before the change of coordinates" if reduced else ""))
    elif robot.description.origin_format == "mjcf":  # MuJoCo's own model: an oracle that cannot run fails
        name, tol = CHECKS["m"]
        out.checks.append(CheckResult("m", name, None, None, tol, 0, False, mj_why))
    else:
        out.checks.append(_na("m", mj_why))
    out.checks.append(acc["n"].result("n", "armature: p and Cᵀq̇ only (the regressors leave it out)" if armed else ""))
    out.checks.append(acc["o"].result("o") if derivatives else
                      _na("o", derivatives_why))
    return out


DERIVATIVE_STEP = 1e-6  # of τ's central differences, in rad or m (and per second)


FORWARD_STEPS = (1e-6, 1e-4)  # of q̈'s: round-off grows as cond(M)/h, truncation as h²


def _derivative_errors(robot, q, qd, qdd):
    """The analytic first derivatives of τ(q, q̇, q̈) and of q̈(q, q̇, τ) at τ = τ(q, q̇, q̈), each
    column less its central difference along integrate(robot, q, δ) (the tangent space on free, spherical
    and planar joints), and the derivatives themselves (for the scale)."""
    from ..errors import SingularMassMatrixError

    dtau_dq, dtau_dv, _ = engine.inverse_dynamics_derivatives(robot, q, qd, qdd)
    tau = engine.inverse_dynamics(robot, q, qd, qdd)
    try:
        forward = engine.forward_dynamics_derivatives(robot, q, qd, tau)[:2]
    except SingularMassMatrixError:  # q̈ is not defined, nor its derivatives: the inverse dynamics' alone
        forward = None
    h, n = DERIVATIVE_STEP, robot.nv
    err, ref = [], [dtau_dq.ravel(), dtau_dv.ravel()]
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        err.append(dtau_dq[:, k] - (engine.inverse_dynamics(robot, engine.integrate(robot, q, e), qd, qdd)
                                    - engine.inverse_dynamics(robot, engine.integrate(robot, q, -e), qd, qdd)) / (2 * h))
        err.append(dtau_dv[:, k] - (engine.inverse_dynamics(robot, q, qd + e, qdd)
                                    - engine.inverse_dynamics(robot, q, qd - e, qdd)) / (2 * h))
        if forward is not None:  # the closer of two steps: q̈ carries round-off ε cond(M) that τ does not
            for analytic, slope in ((forward[0][:, k], lambda e: (engine.forward_dynamics(robot, engine.integrate(robot, q, e), qd, tau)
                                                                  - engine.forward_dynamics(robot, engine.integrate(robot, q, -e), qd, tau))),
                                    (forward[1][:, k], lambda e: (engine.forward_dynamics(robot, q, qd + e, tau)
                                                                  - engine.forward_dynamics(robot, q, qd - e, tau)))):
                errors = []
                for hf in FORWARD_STEPS:
                    e[k] = hf
                    errors.append(analytic - slope(e) / (2 * hf))
                err.append(min(errors, key=lambda x: np.abs(x).max()))
    if forward is not None:
        ref += [forward[0].ravel(), forward[1].ravel()]
    # ∂g/∂q is the inverse dynamics' ∂τ/∂q at rest; Slotine–Li's and Cᵀq̇'s by their own differences
    zeros = np.zeros(n)
    err.append((engine.gravity_derivatives(robot, q) - engine.inverse_dynamics_derivatives(robot, q, zeros, zeros)[0]).ravel())
    qd_r = qd + 0.5 * qdd / 10.0  # a reference velocity off q̇
    sl_dq, sl_dv, _, _ = engine.slotine_li_derivatives(robot, q, qd, qd_r, qdd)
    ct_dq, ct_dv = engine.coriolis_transpose_derivatives(robot, q, qd)
    second = engine.inverse_dynamics_second_derivatives(robot, q, qd, qdd, force=True)  # of the first derivatives
    ref += [sl_dq.ravel(), sl_dv.ravel(), ct_dq.ravel(), ct_dv.ravel()]
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        plus, minus = engine.integrate(robot, q, e), engine.integrate(robot, q, -e)
        err.append(sl_dq[:, k] - (engine.slotine_li(robot, plus, qd, qd_r, qdd) - engine.slotine_li(robot, minus, qd, qd_r, qdd)) / (2 * h))
        err.append(sl_dv[:, k] - (engine.slotine_li(robot, q, qd + e, qd_r, qdd) - engine.slotine_li(robot, q, qd - e, qd_r, qdd)) / (2 * h))
        err.append(ct_dq[:, k] - (engine.coriolis_transpose_velocity(robot, plus, qd)
                                  - engine.coriolis_transpose_velocity(robot, minus, qd)) / (2 * h))
        err.append(ct_dv[:, k] - (engine.coriolis_transpose_velocity(robot, q, qd + e)
                                  - engine.coriolis_transpose_velocity(robot, q, qd - e)) / (2 * h))
        d2q, d2v, dqv, dqa = second
        up = engine.inverse_dynamics_derivatives(robot, plus, qd, qdd)
        down = engine.inverse_dynamics_derivatives(robot, minus, qd, qdd)
        faster = engine.inverse_dynamics_derivatives(robot, q, qd + e, qdd)[1]
        slower = engine.inverse_dynamics_derivatives(robot, q, qd - e, qdd)[1]
        err += [(d2q[:, k, :] - (up[0] - down[0]) / (2 * h)).ravel(), (dqv[:, k, :] - (up[1] - down[1]) / (2 * h)).ravel(),
                (dqa[:, k, :] - (up[2] - down[2]) / (2 * h)).ravel(), (d2v[:, k, :] - (faster - slower) / (2 * h)).ravel()]
    ref += [x.ravel() for x in second]
    return np.concatenate(err), np.concatenate(ref)


def _mujoco_peer(robot, reduced: bool):
    """(MuJoCo's model of the robot, or None; why not): MJCF models as MuJoCo compiled them, URDF
    and YAML robots of 1-DoF joints through MuJoCo's URDF compiler."""
    from ..errors import ModelError
    from ..peers.mujoco import MujocoPeer, mujoco_available

    if not mujoco_available():
        return None, "mujoco is not installed (pip install 'coriolis-cli[mujoco]')"
    mjcf = robot.description.origin_format == "mjcf"
    if reduced and not mjcf:
        return None, "compared on the full tree by check j; one change of coordinates at a time"
    tree = robot.full if reduced else robot  # an MJCF robot in other coordinates: its tree is MuJoCo's model
    if not mjcf and (tree.floating_base or not tree.velocities_are_coordinates or robot.description.loops):
        return None, "MuJoCo's URDF compiler takes fixed-base robots of 1-DoF joints"
    try:
        return MujocoPeer(tree), ""
    except ModelError as e:  # MuJoCo refuses what it cannot simulate (e.g. a massless moving body)
        return None, f"MuJoCo does not compile this robot ({str(e).split('(', 1)[-1].rstrip(')')[:160]})"


def _pinocchio_reference(robot, peer, q, qd, coordinates):
    """Pinocchio's M, C, τ (gravity on) and ∂τ/∂q̇ in ROBOT's coordinates: on the full tree, then
    transformed by A (M̄ = AᵀMA, C̄ = AᵀCA + AᵀMȦ, τ̄ = Aᵀτ) for a robot in other coordinates."""
    zeros = np.zeros(robot.nv)
    if not getattr(robot, "is_reduced", False):
        dtau = peer.rnea_velocity_derivative(q, qd) if coordinates else None
        return peer.mass_matrix(q), peer.coriolis_matrix(q, qd), peer.rnea(q, qd, zeros), dtau
    ev = evaluation(robot)
    qf, A = ev.full_configuration(q), ev.jacobian(q)
    Adot = ev.jacobian_rate(q, qd)
    vf = A @ qd
    Mf = peer.mass_matrix(qf)
    M, C = A.T @ Mf @ A, A.T @ peer.coriolis_matrix(qf, vf) @ A
    af = np.zeros(len(vf)) if Adot is None else Adot @ qd
    if Adot is not None:
        C = C + A.T @ Mf @ Adot
    tau = A.T @ peer.rnea(qf, vf, af)
    dtau = None
    if coordinates:  # ∂τ̄/∂q̄̇ = Aᵀ (∂τ/∂q̇) A + 2 AᵀMȦ, as ∂(Ȧ q̄̇)/∂q̄̇ = 2Ȧ when ∂²q/∂q̄_j∂q̄_k is symmetric
        dtau = A.T @ peer.rnea_velocity_derivative(qf, vf) @ A
        if Adot is not None:
            dtau = dtau + 2.0 * A.T @ Mf @ Adot
    return M, C, tau, dtau


def default_suite() -> list[tuple[str, str, bool]]:
    """Every bundled robot and the paper's generated topologies, fixed and floating base.

    The planar 2-link arm and the closed-loop linkages (YAML) stay fixed: their root links are
    massless, so a floating base would make M singular (the model refuses it)."""
    import glob

    robots = sorted(glob.glob(os.path.join(BUNDLED_DIR, "*.urdf"))) + sorted(glob.glob(os.path.join(BUNDLED_DIR, "*.yaml")))
    specs = ["serial:10", "serial:20", "serial:30", "binary:20", "biped:20", "quadruped:20"]
    suite = []
    for src in robots + specs:
        for fb in (False, True):
            if fb and (src.endswith("planar_2link.urdf") or src.endswith(".yaml")):
                continue
            label = (os.path.basename(src) if os.sep in src else src) + (" +floating" if fb else "")
            suite.append((label, src, fb))
    return suite


def load_suite_robot(src: str, fb: bool, **options):
    """A robot of the suite (or given), with load_robot's ``options``."""
    if not fb and options.get("base_velocity", "body") != "body":
        options = dict(options, base_velocity="body")  # the suite's fixed-base robots have no base velocity
    return load_robot(src, floating_base=fb, **options)
