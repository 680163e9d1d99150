"""`coriolis bench`: time M+Ṁ+C (Algorithm 1) and Γ (Algorithm 2) and their peers.

Peers, measured in the same process: Pinocchio's computeCoriolisMatrix (and crba for the same
outputs, dccrba for reference), Pinocchio's best route to Γ (nv calls of computeCoriolisMatrix(q, e_k)),
Γ by finite differences of M, and the Safeea recursion (serial chains).
"""

from __future__ import annotations

import os
import time
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np

from .. import engine
from ..engine.coordinates import derivatives_refusal
from ..errors import InputError, Note, SizeError
from ..engine.compiled import kernel_loop
from ..model.parameters import inertial_parameters
from ..model.tree import RobotModel
from ..peers import finite_differences as fd
from ..peers import pinocchio as pinocchio_peer
from ..peers.safeea import christoffel_safeea, is_serial_revolute

# Core paper, Table 1 (C++ on RBDL, Intel i7 3.2 GHz), µs per evaluation at 20 DoF
PAPER_TABLE1 = {"serial": (18.0, 122.0), "binary": (10.0, 33.0), "biped": (13.0, 64.0), "quadruped": (10.0, 37.0)}
N_STATES = 64
# our implementations as the report names them
OURS_DATA = "coriolis, data= (public API)"
OURS_PLAIN = "coriolis, fresh outputs (public API)"
OURS_LOOP = "coriolis (compiled loop)"
OURS_ESTIMATE = "coriolis, data=, estimated parameters (public API)"
GENERATED = "generated C, cc -O2 (compiled loop)"
GENERATED_OUTPUTS = ("C", "Gamma", "slotine")  # bench's names that are codegen's --what names too
BATCH = 10_000


@dataclass
class Timing:
    what: str  # "C" (M, Ṁ, C) or "Gamma"
    implementation: str
    us: float  # median µs per evaluation
    note: str = ""


@dataclass
class SystemBench:
    label: str
    topology: str | None
    dof: int
    nv: int
    n_bodies: int
    depth: int
    floating_base: bool
    timings: list[Timing] = field(default_factory=list)

    def get(self, what, impl):
        for t in self.timings:
            if t.what == what and t.implementation == impl:
                return t.us
        return None

    def as_dict(self):
        return asdict(self)


def _states(robot: RobotModel, seed: int = 0):
    rng = np.random.default_rng(seed)
    Q = np.stack([engine.random_configuration(robot, rng) for _ in range(N_STATES)])
    QD = rng.uniform(-10.0, 10.0, (N_STATES, robot.nv))
    return np.ascontiguousarray(Q), np.ascontiguousarray(QD)


ROUND_SECONDS = 2e-3


def median_loop_time(run, repeat: int = 15, round_seconds: float = ROUND_SECONDS, max_per_round: int = 1 << 22) -> float:
    """Median seconds per evaluation of ``run(R)``, which evaluates R states: each round runs
    enough evaluations to last about ``round_seconds``."""
    run(1)
    R = 1
    while True:
        t = time.perf_counter()
        run(R)
        dt = time.perf_counter() - t
        if dt >= round_seconds or R >= max_per_round:
            break
        R *= 2
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        run(R)
        times.append((time.perf_counter() - t) / R)
    return float(np.median(times))


def median_call_time(fn, repeat: int = 15, round_seconds: float = ROUND_SECONDS) -> float:
    """Median seconds per call of ``fn()``."""

    def run(number):
        for _ in range(number):
            fn()

    return median_loop_time(run, repeat, round_seconds, max_per_round=1 << 20)


def bench_system(robot: RobotModel, label: str, topology: str | None, what=("C", "Gamma"), peers: bool | str = False,
                 repeat: int = 15, batch: bool = False, slow_baselines: bool = True, codegen: bool = False) -> SystemBench:
    """Times through the public API (``data=`` and plain calls), and compiled loops as C++ is timed.
    A robot in other coordinates has no compiled loop of its own; its peers run on the tree.
    ``peers``: False, True (Pinocchio's Python and our baselines) or "compiled" (Pinocchio's C++ too)."""
    n = robot.nv
    Q, QD = _states(robot)
    data = engine.create_data(robot)
    out = SystemBench(label, topology, n - (6 if robot.floating_base else 0), n, robot.n_bodies, robot.depth, robot.floating_base)
    q, qd = Q[0], QD[0]
    reduced = getattr(robot, "is_reduced", False)
    how = f"{robot.coordinates}, " if reduced else ""
    if "C" in what:
        out.timings.append(Timing("C", OURS_DATA, 1e6 * median_call_time(
            lambda: engine.coriolis_matrix(robot, q, qd, data=data), repeat), how + "create_data(robot) reused"))
        out.timings.append(Timing("C", OURS_PLAIN, 1e6 * median_call_time(
            lambda: engine.coriolis_matrix(robot, q, qd), repeat), how + "public API, fresh outputs"))
        if not reduced:
            out.timings.append(Timing("C", OURS_LOOP, 1e6 * median_loop_time(
                lambda R: kernel_loop(data.core, "C", R, Q, QD, QD), repeat),
                "as C++ is timed"))
        if batch and not reduced:
            K = BATCH
            QB = np.ascontiguousarray(np.resize(Q, (K, robot.nq)))
            QDB = np.ascontiguousarray(np.resize(QD, (K, n)))
            t = median_call_time(lambda: engine.coriolis_matrix(robot, QB, QDB), repeat=max(5, repeat // 2), round_seconds=0.0)
            out.timings.append(Timing("C", f"coriolis_matrix, batch of {K}", 1e6 * t / K, "per state, parallel"))
            into = engine.coriolis_matrix(robot, QB, QDB)  # a previous call's arrays: written in place
            t = median_call_time(lambda: engine.coriolis_matrix(robot, QB, QDB, out=into), repeat=max(5, repeat // 2),
                                 round_seconds=0.0)
            out.timings.append(Timing("C", f"coriolis_matrix, batch of {K}, out=", 1e6 * t / K,
                                      "per state, parallel, into the caller's arrays"))
    if "Gamma" in what and engine.gamma_bytes(robot.full if reduced else robot) <= engine.GAMMA_MAX_BYTES:
        out.timings.append(Timing("Gamma", OURS_DATA, 1e6 * median_call_time(
            lambda: engine.christoffel(robot, q, data=data), repeat), how + "create_data(robot) reused"))
        if not reduced:
            out.timings.append(Timing("Gamma", OURS_LOOP, 1e6 * median_loop_time(
                lambda R: kernel_loop(data.core, "Gamma", R, Q, QD, QD), repeat), "as C++ is timed"))
    _control_timings(robot, out, what, q, qd, data, repeat)
    if codegen:
        _generated_timings(robot, out, what, q, repeat)
    if peers and reduced:  # what Pinocchio offers: the tree, mimic joints as DoF of their own
        ev = engine.coordinates.evaluation(robot)
        Qf = np.stack([ev.full_configuration(x) for x in Q])
        QDf = np.stack([ev.jacobian(x) @ v for x, v in zip(Q, QD)])
        _peer_timings(robot.full, out, what, Qf, QDf, repeat, slow_baselines=False, compiled=peers == "compiled")
        for t in out.timings:
            if t.implementation.startswith("pinocchio"):
                t.note += " (on the tree: coordinates not enforced)"
    elif peers:
        _peer_timings(robot, out, what, Q, QD, repeat, slow_baselines, compiled=peers == "compiled")
    return out


DERIVATIVE_OUTPUTS = ("dtau", "dqdd", "dg", "dslotine", "dCv", "dCTqd", "d2tau", "lam_d2tau", "d2qdd", "lam_d2qdd")


def _control_timings(robot, out, what, q, qd, data, repeat):
    """M, τ, g, forward dynamics and the Slotine–Li torque through the public API with data=."""
    rng = np.random.default_rng(1)
    tau, qd_r, qdd_r = (rng.standard_normal(robot.nv) for _ in range(3))
    frame = "body coordinates" if getattr(data, "full", data).body_frame_joints else "world frame"  # a tree's workspace

    def timed(key, call, how):
        out.timings.append(Timing(key, OURS_DATA, 1e6 * median_call_time(call, repeat), f"{how}create_data(robot) reused"))

    if "M" in what:
        timed("M", lambda: engine.mass_matrix(robot, q, data=data), f"CRBA in {frame}, ")
    if "tau" in what:
        timed("tau", lambda: engine.inverse_dynamics(robot, q, qd, qdd_r, data=data), f"RNEA in {frame}, ")
    if "g" in what:
        timed("g", lambda: engine.gravity_vector(robot, q, data=data), f"RNEA at rest in {frame}, ")
    if "qdd" in what:
        timed("qdd", lambda: engine.forward_dynamics(robot, q, qd, tau, data=data),
              f"{'ABA in body coordinates' if frame == 'body coordinates' else 'CRBA + LᵀDL'}, ")
    if "slotine" in what:
        timed("slotine", lambda: engine.slotine_li(robot, q, qd, qd_r, qdd_r, data=data), "Alg. 3, ")
        theta_hat = 0.9 * inertial_parameters(robot.full if hasattr(robot, "full") else robot)
        out.timings.append(Timing("slotine", OURS_ESTIMATE, 1e6 * median_call_time(
            lambda: engine.slotine_li(robot, q, qd, qd_r, qdd_r, theta=theta_hat, data=data), repeat),
            "theta=θ̂, as an adaptive controller calls it"))
    asked = [key for key in DERIVATIVE_OUTPUTS if key in what]
    refusal = derivatives_refusal(robot) if asked else None
    if refusal is not None:
        warnings.warn(Note(f"{robot.name}: {', '.join(asked)} not timed: {refusal}"), stacklevel=2)
        asked = []
    v_r = qd + 0.1 * qdd_r  # a reference velocity near q̇, as a tracking controller's
    derivative_calls = (
        ("dg", lambda: engine.gravity_derivatives(robot, q, data=data), "at rest, "),
        ("dslotine", lambda: engine.slotine_li_derivatives(robot, q, qd, v_r, qdd_r, data=data), "two velocities, "),
        ("dCv", lambda: engine.coriolis_product_derivatives(robot, q, qd, v_r, data=data), "v = q̇_r, "),
        ("d2tau", lambda: engine.inverse_dynamics_second_derivatives(robot, q, qd, qdd_r, data=data), "four nv³ tensors, "),
        ("lam_d2tau", lambda: engine.inverse_dynamics_second_derivatives_contracted(robot, q, qd, qdd_r, tau, data=data),
         "λᵀ of the four, nv² each, "),
        ("d2qdd", lambda: engine.forward_dynamics_second_derivatives(robot, q, qd, tau, data=data),
         "four nv³ tensors, from τ's; "),
        ("lam_d2qdd", lambda: engine.forward_dynamics_second_derivatives_contracted(robot, q, qd, tau, qdd_r, data=data),
         "λᵀ of the four, nv² each, "),
        ("dCTqd", lambda: engine.coriolis_transpose_derivatives(robot, q, qd, data=data), ""),
        ("dtau", lambda: engine.inverse_dynamics_derivatives(robot, q, qd, qdd_r, data=data), "RNEA derivatives, "),
        ("dqdd", lambda: engine.forward_dynamics_derivatives(robot, q, qd, tau, data=data), "at q̈, then −M⁻¹ ∂τ/∂x; "),
    )
    for key, call, how in derivative_calls:
        if key not in asked:
            continue
        if key in ("d2tau", "d2qdd"):
            try:
                call()  # allocates its tensors
            except InputError as e:  # too large for the memory guard, or coordinates it does not take
                # the hint of a refusal for the robot's coordinates is the command line's (--loops
                # open); a size refusal's is the library's force=True, which bench has no flag for
                hint = f" ({e.hint})" if e.hint and not isinstance(e, SizeError) else ""
                warnings.warn(Note(f"{robot.name}: {key} not timed: {e}{hint}"), stacklevel=2)
                continue
        timed(key, call, how)
    # the same kernels in a compiled loop (the call's overhead is the difference)
    if not getattr(robot, "is_reduced", False):
        Q, QD = np.ascontiguousarray(q[None]), np.ascontiguousarray(qd[None])
        for key, kernel, second in (("M", "M", QD), ("tau", "tau", qdd_r[None]), ("g", "g", QD),
                                    ("qdd", "fd", tau[None]), ("slotine", "slotine", qdd_r[None])):
            if key in what:
                X = np.ascontiguousarray(second)
                out.timings.append(Timing(key, OURS_LOOP, 1e6 * median_loop_time(
                    lambda R, kernel=kernel, X=X: kernel_loop(data.core, kernel, R, Q, QD, X), repeat), "as C++ is timed"))


def _generated_timings(robot, out, what, q, repeat):
    """The code ``coriolis codegen`` writes for this robot, compiled with -O2 and timed in a C loop
    (codegen.build's timing harness), as a controller would call it."""
    import tempfile

    from ..codegen import generate_code
    from ..codegen.trace import WHAT

    chosen = [w for w in GENERATED_OUTPUTS if w in what]
    if not chosen:
        return
    with tempfile.TemporaryDirectory(prefix="coriolis-bench-") as directory:
        generated = generate_code(robot, directory, prefix="bench", what=",".join(chosen))
        compiled = generated.compile("-O2")
        try:
            for w in chosen:
                name = WHAT[w]
                seconds = median_loop_time(lambda R, name=name: compiled.seconds_per_call(name, q, R), repeat)
                out.timings.append(Timing(w, GENERATED, 1e6 * seconds, f"{generated.operations[name]:,} operations"))
        finally:
            compiled.close()


def _peer_timings(robot, out, what, Q, QD, repeat, slow_baselines, compiled=False):
    q, qd = Q[0], QD[0]
    n = robot.nv
    if pinocchio_peer.available():
        import pinocchio as pin

        peer = pinocchio_peer.PinocchioPeer(robot)
        model, data = peer.model, peer.data
        pq, pv = peer.q(q), peer.v(qd)
        if "C" in what:
            out.timings.append(Timing("C", "pinocchio computeCoriolisMatrix", 1e6 * median_call_time(
                lambda: pin.computeCoriolisMatrix(model, data, pq, pv), repeat), "C only"))

            def same_outputs():
                pin.crba(model, data, pq)
                pin.computeCoriolisMatrix(model, data, pq, pv)

            out.timings.append(Timing("C", "pinocchio crba + computeCoriolisMatrix", 1e6 * median_call_time(same_outputs, repeat),
                                      "M and C (Ṁ = C + Cᵀ)"))
            out.timings.append(Timing("centroidal", "pinocchio dccrba", 1e6 * median_call_time(
                lambda: pin.dccrba(model, data, pq, pv), repeat), "centroidal Ag and its derivative"))
        if {"qdd", "slotine", "tau", "dqdd", *DERIVATIVE_OUTPUTS} & set(what):
            rng = np.random.default_rng(1)
            ptau, pa = peer.v(rng.standard_normal(n)), peer.v(rng.standard_normal(n))
        if "M" in what:
            out.timings.append(Timing("M", "pinocchio crba", 1e6 * median_call_time(
                lambda: pin.crba(model, data, pq), repeat), "composite rigid bodies"))
        if "tau" in what:
            out.timings.append(Timing("tau", "pinocchio rnea", 1e6 * median_call_time(
                lambda: pin.rnea(model, data, pq, pv, pa), repeat), "Newton-Euler"))
        if "g" in what:
            out.timings.append(Timing("g", "pinocchio computeGeneralizedGravity", 1e6 * median_call_time(
                lambda: pin.computeGeneralizedGravity(model, data, pq), repeat), "g(q)"))
        if "qdd" in what:
            out.timings.append(Timing("qdd", "pinocchio aba", 1e6 * median_call_time(
                lambda: pin.aba(model, data, pq, pv, ptau), repeat), "articulated-body algorithm, O(n)"))
        derivatives = not any(key in what for key in DERIVATIVE_OUTPUTS) or derivatives_refusal(robot) is None
        if "dg" in what and derivatives:
            out.timings.append(Timing("dg", "pinocchio computeGeneralizedGravityDerivatives", 1e6 * median_call_time(
                lambda: pin.computeGeneralizedGravityDerivatives(model, data, pq), repeat), "Carpentier & Mansard"))
        yardstick = [key for key in ("dslotine", "dCv", "dCTqd") if key in what]
        if ("dtau" in what or yardstick) and derivatives:
            rnea_derivatives = 1e6 * median_call_time(lambda: pin.computeRNEADerivatives(model, data, pq, pv, pa), repeat)
            if "dtau" in what:
                out.timings.append(Timing("dtau", "pinocchio computeRNEADerivatives", rnea_derivatives, "Carpentier & Mansard"))
            for key in yardstick:  # Pinocchio has no such function: its nearest, for scale
                out.timings.append(Timing(key, "pinocchio computeRNEADerivatives", rnea_derivatives,
                                          "no such function; ∂τ/∂q, ∂τ/∂q̇ for scale"))
        if "dqdd" in what and derivatives:
            out.timings.append(Timing("dqdd", "pinocchio computeABADerivatives", 1e6 * median_call_time(
                lambda: pin.computeABADerivatives(model, data, pq, pv, ptau), repeat), "Carpentier & Mansard"))
        if compiled and {"dtau", "dqdd", "d2tau"} & set(what) and derivatives:
            _compiled_peer_timings(robot, out, what, Q, QD, repeat, peer)
        if "slotine" in what:
            out.timings.append(Timing("slotine", "pinocchio rnea", 1e6 * median_call_time(
                lambda: pin.rnea(model, data, pq, pv, pa), repeat), "τ = M q̈ + C q̇ + g (q̇_r = q̇ only)"))
        if "Gamma" in what:
            E = [np.ascontiguousarray(e) for e in np.eye(n)]

            def pin_gamma():
                for e in E:
                    pin.computeCoriolisMatrix(model, data, pq, e)

            out.timings.append(Timing("Gamma", "pinocchio nv × computeCoriolisMatrix(q, e_k)",
                                      1e6 * median_call_time(pin_gamma, repeat), "best route Pinocchio offers"))
    if "Gamma" in what and slow_baselines:
        if not robot.floating_base:
            out.timings.append(Timing("Gamma", "finite differences of M", 1e6 * median_call_time(
                lambda: fd.christoffel_fd(robot, engine.mass_matrix, q), repeat=3, round_seconds=0.0), "eq. (4), Richardson"))
        if is_serial_revolute(robot) and not robot.floating_base:
            out.timings.append(Timing("Gamma", "Safeea recursion (NumPy)", 1e6 * median_call_time(
                lambda: christoffel_safeea(robot, q), repeat=3, round_seconds=0.0), "O(n³), Python"))


PINOCCHIO_CPP = {"dtau": "computeRNEADerivatives", "dqdd": "computeABADerivatives",
                 "d2tau": "ComputeRNEASecondOrderDerivatives"}


def _compiled_peer_timings(robot, out, what, Q, QD, repeat, peer):
    """Pinocchio's C++ derivatives in a compiled loop at the bench's states (peers/pinocchio_cpp),
    built once per machine; where it cannot be built or run, one note saying why."""
    from ..peers import pinocchio_cpp

    rng = np.random.default_rng(2)
    A, TAU = rng.standard_normal((2, len(Q), robot.nv))
    try:
        times, _ = pinocchio_cpp.run(robot, Q, QD, A, TAU, repeat=max(repeat, 20), peer=peer)
    except pinocchio_peer.PeerUnavailable as e:
        warnings.warn(Note(f"{robot.name}: Pinocchio's C++ not timed: {e}"), stacklevel=2)
        return
    for key, function in PINOCCHIO_CPP.items():
        if key in what:
            out.timings.append(Timing(key, f"pinocchio C++ {function} (compiled loop)", times[key],
                                      "g++ -O3, the pin wheel's headers"))


def fit_slope(dofs, times) -> float | None:
    """Slope of log(time) against log(DoF): ≈ 2 for C on chains (O(N²)), ≈ 3 for Γ."""
    x = np.log(np.asarray(dofs, dtype=float))
    y = np.log(np.asarray(times, dtype=float))
    if len(x) < 2:
        return None
    return float(np.polyfit(x, y, 1)[0])


TOPOLOGY_ORDER = ("serial", "binary", "biped", "quadruped")


@dataclass
class BenchJob:
    label: str
    source: str  # a robot file or a spec
    topology: str | None


@dataclass
class BenchReport:
    mode: str  # "robots", "table1" or "sweep"
    floating_base: bool
    systems: list[SystemBench]
    slopes: dict = field(default_factory=dict)  # sweep: topology -> output -> log-log slope

    def as_dict(self) -> dict:
        d = {"mode": self.mode, "floating_base": self.floating_base, "systems": [s.as_dict() for s in self.systems]}
        if self.mode == "sweep":
            d["slopes"] = self.slopes
        return d

    def sweeps(self) -> dict:
        """topology -> its systems, in DoF order (sweep mode)."""
        return {t: [s for s in self.systems if s.topology == t] for t in dict.fromkeys(s.topology for s in self.systems)}


def plan_jobs(robots, topologies, dofs, floating_base: bool, table1: bool) -> tuple[str, list[BenchJob]]:
    """What to time: ROBOT files, the paper's Table 1 systems, or a DoF sweep of generated topologies."""
    if robots:
        return "robots", [BenchJob(bench_label(r) + (" +floating" if floating_base else ""), r, None) for r in robots]
    if table1:
        return "table1", [BenchJob(f"{t}:20", f"{t}:20", t) for t in TOPOLOGY_ORDER]
    return "sweep", [BenchJob(f"{t}:{d}", f"{t}:{d}", t) for t in topologies for d in dofs]


def run_jobs(mode: str, models, whats, floating_base: bool, peers: bool | str, repeat: int, batch: bool,
             advance=None, codegen: bool = False) -> BenchReport:
    """Time each (job, model); ``advance(label)`` is called before each one (progress)."""
    systems = []
    for job, model in models:
        if advance is not None:
            advance(job.label)
        systems.append(bench_system(model, job.label, job.topology, tuple(whats), peers, repeat,
                                    batch=batch, slow_baselines=mode != "sweep", codegen=codegen))
    report = BenchReport(mode, floating_base, systems)
    if mode == "sweep":
        report.slopes = {t: {w: fit_slope([s.dof for s in ss], [s.get(w, OURS_LOOP) for s in ss])
                             for w in whats if all(s.get(w, OURS_LOOP) is not None for s in ss)}
                         for t, ss in report.sweeps().items()}
    return report


def bench_label(src: str) -> str:
    return os.path.basename(src) if os.sep in src or src.endswith((".urdf", ".yaml", ".yml")) else src
