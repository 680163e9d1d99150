"""``coriolis bench --jax`` and ``--torch``: coriolis_cli.jax and coriolis_cli.torch beside ADAM and
jaxsim on the CPU in one process, float64, per state: M, C (ours alone: no peer has it), the bias
h = C q̇ + g, τ and ∂τ/∂q, on one state, batches of 64 and 4,096, and (JAX) a jitted lax.scan over
1,000 states one after another, so that JAX's dispatch is not what is measured; the first jitted
call's seconds; and how far each peer's values are from ours."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from ..model.tree import RobotModel
from .suite import median_loop_time

FUNCTIONS = ("M", "C", "bias", "tau", "dtau_dq")
ARGUMENTS = {"M": 1, "C": 2, "bias": 2, "tau": 3, "dtau_dq": 3}  # of (q, v, a)
BATCHES = (64, 4096)
SCAN = 1000
COMPARED = 16  # states whose values are compared with ours
SLOW_CALL = 0.5  # seconds: a call this long is timed three times, not ``repeat`` times
OURS, ADAM, JAXSIM = "coriolis", "ADAM", "jaxsim"


@dataclass
class FrameworkTiming:
    library: str
    function: str
    form: str  # "1", "64", "4096" (a batch) or "scan" (SCAN states one after another, jitted)
    us_per_state: float | None
    first_call_s: float | None = None  # the jitted call's first run (JAX), compilation included


@dataclass
class FrameworkBench:
    framework: str  # "jax" or "torch"
    robot: str
    nq: int
    nv: int
    floating_base: bool
    timings: list[FrameworkTiming] = field(default_factory=list)
    agreement: dict[str, float] = field(default_factory=dict)  # peer → max relative difference from ours
    missing: dict[str, str] = field(default_factory=dict)  # peer → why it is not timed
    fresh_process_s: dict[str, float] = field(default_factory=dict)  # import, load, first call of M

    def as_dict(self) -> dict:
        return asdict(self)


def _states(robot: RobotModel, count: int):
    from .. import engine

    rng = np.random.default_rng(0)
    Q = np.stack([engine.random_configuration(robot, rng) for _ in range(count)])
    return Q, rng.uniform(-1.0, 1.0, (count, robot.nv)), rng.uniform(-1.0, 1.0, (count, robot.nv))


def _median_seconds(call, repeat: int) -> float:
    """Median seconds of ``call()``: ``repeat`` rounds, or three where one call takes SLOW_CALL."""
    started = time.perf_counter()
    call()
    if time.perf_counter() - started > SLOW_CALL:
        samples = []
        for _ in range(3):
            started = time.perf_counter()
            call()
            samples.append(time.perf_counter() - started)
        return float(np.median(samples))

    def run(number):
        for _ in range(number):
            call()

    return median_loop_time(run, repeat, round_seconds=0.02)


def _relative(ours, theirs) -> float:
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    return float(np.abs(ours - theirs).max() / max(np.abs(ours).max(), 1e-300))


def _agreement(values, libraries) -> dict[str, float]:
    """Each peer's largest relative difference from ours over the functions both have."""
    return {library: max(_relative(values[OURS, n], values[library, n]) for n in FUNCTIONS if (library, n) in values)
            for library in libraries if library != OURS}


# ---- JAX ------------------------------------------------------------------------------------------
def _jax_functions(robot):
    import jax.numpy as jnp

    from .. import jax as cj

    def tau(q, v, a):  # at the robot's own gravity, which the peers are given
        return cj.inverse_dynamics(robot, q, v, a)

    return {"M": lambda q: cj.mass_matrix(robot, q), "C": lambda q, v: cj.coriolis_matrix(robot, q, v)[2],
            "bias": lambda q, v: tau(q, v, jnp.zeros_like(v)), "tau": tau}


def _with_jax_jacobian(functions):
    """∂τ/∂q by forward mode, jax.jacfwd of the library's τ, for every library alike."""
    import jax

    tau = functions["tau"]
    return {**functions, "dtau_dq": lambda q, v, a: jax.jacfwd(tau)(q, v, a)}


def _time_jax(library, name, f, states, repeat, out):
    """f's forms: a jitted call on one state, jit(vmap) on each batch, a jitted scan."""
    import jax

    n = ARGUMENTS[name]

    def first_and_median(jitted, arguments, count, form):
        started = time.perf_counter()
        result = jax.block_until_ready(jitted(*arguments))
        first = time.perf_counter() - started
        seconds = _median_seconds(lambda: jax.block_until_ready(jitted(*arguments)), repeat)
        out.append(FrameworkTiming(library, name, form, 1e6 * seconds / count, first))
        return result

    first_and_median(jax.jit(f), [x[0] for x in states[:n]], 1, "1")
    values = None
    for K in BATCHES:
        result = first_and_median(jax.jit(jax.vmap(f)), [x[:K] for x in states[:n]], K, str(K))
        values = result if values is None else values

    def scanned(*xs):
        return jax.lax.scan(lambda carry, x: (carry, f(*x)), None, xs)[1]

    first_and_median(jax.jit(scanned), [x[:SCAN] for x in states[:n]], SCAN, "scan")
    return np.asarray(values[:COMPARED])


def bench_jax(robot: RobotModel, label: str, repeat: int = 15, peers: bool = True, fresh_process: bool = True) \
        -> FrameworkBench:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    gravity = tuple(float(x) for x in robot.gravity)
    report = FrameworkBench("jax", label, robot.nq, robot.nv, robot.floating_base)
    states = [jnp.asarray(x) for x in _states(robot, max(max(BATCHES), SCAN))]
    libraries = {OURS: _jax_functions(robot)}
    if peers:
        from ..peers import adam, jaxsim

        for name, module, build in ((ADAM, adam, lambda: adam.functions(robot, "jax", gravity)),
                                    (JAXSIM, jaxsim, lambda: jaxsim.functions(robot, gravity))):
            if not module.available("jax"):
                report.missing[name] = "not installed"
                continue
            try:
                libraries[name] = build()
            except Exception as e:  # noqa: BLE001 - a peer that cannot take this robot is reported, not fatal
                report.missing[name] = f"cannot build this robot: {type(e).__name__}: {str(e).splitlines()[0][:80]}"
    values = {}
    for library, functions in libraries.items():
        functions = _with_jax_jacobian(functions)
        for name in FUNCTIONS:
            if name in functions:
                values[library, name] = _time_jax(library, name, functions[name], states, repeat, report.timings)
    report.agreement = _agreement(values, libraries)
    _time_numpy(robot, [np.asarray(x) for x in states], repeat, report.timings)
    if fresh_process:
        report.fresh_process_s = first_call_in_a_fresh_process(robot)
    return report


def _time_numpy(robot, states, repeat, out):
    """The NumPy functions on one state with ``data=``, the call a jitted scan's step is held to
    (∂τ/∂q: inverse_dynamics_derivatives, which gives ∂τ/∂q̇ and M too)."""
    from .. import engine

    data = engine.create_data(robot)
    q, v, a = (x[0] for x in states)
    zero = np.zeros_like(v)
    calls = {"M": lambda: engine.mass_matrix(robot, q, data=data),
             "C": lambda: engine.coriolis_matrix(robot, q, v, data=data),
             "bias": lambda: engine.inverse_dynamics(robot, q, v, zero, data=data),
             "tau": lambda: engine.inverse_dynamics(robot, q, v, a, data=data),
             "dtau_dq": lambda: engine.inverse_dynamics_derivatives(robot, q, v, a, data=data)}
    for name, call in calls.items():
        out.append(FrameworkTiming(OURS, name, "numpy", 1e6 * _median_seconds(call, repeat)))


FRESH = r"""
import sys, time, json
started = time.perf_counter()
import jax
jax.config.update("jax_enable_x64", True)
import coriolis_cli as cc, coriolis_cli.jax as cj
imported = time.perf_counter()
robot = cc.load_robot(sys.argv[1], floating_base=sys.argv[2] == "1")
loaded = time.perf_counter()
q = jax.numpy.asarray(robot.neutral_configuration())
jax.block_until_ready(jax.jit(lambda q: cj.mass_matrix(robot, q))(q))
called = time.perf_counter()
print(json.dumps({"import": imported - started, "load": loaded - imported, "first call": called - loaded}))
"""


def first_call_in_a_fresh_process(robot: RobotModel) -> dict[str, float]:
    """Seconds a new Python process takes to import JAX and coriolis_cli.jax, load the robot, and
    run its first jitted M (compilation included)."""
    import json

    source = robot.description.source
    try:
        done = subprocess.run([sys.executable, "-c", FRESH, source, "1" if robot.floating_base else "0"],
                              capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONWARNINGS": "ignore"})
        return json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else {}
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return {}


# ---- PyTorch --------------------------------------------------------------------------------------
def _torch_functions(robot):
    import torch

    from .. import torch as ct

    def tau(q, v, a):  # at the robot's own gravity, which the peers are given
        return ct.inverse_dynamics(robot, q, v, a)

    return {"M": lambda q: ct.mass_matrix(robot, q), "C": lambda q, v: ct.coriolis_matrix(robot, q, v)[2],
            "bias": lambda q, v: tau(q, v, torch.zeros_like(v)), "tau": tau}


def _torch_jacobian(tau):
    """∂τ/∂q by reverse mode: torch.func.jacrev on one state, vmap(jacrev) on a batch."""
    import torch

    single = torch.func.jacrev(tau)
    batch = torch.func.vmap(single)
    return lambda q, v, a: single(q, v, a) if q.dim() == 1 else batch(q, v, a)


def bench_torch(robot: RobotModel, label: str, repeat: int = 15, peers: bool = True) -> FrameworkBench:
    import torch

    gravity = tuple(float(x) for x in robot.gravity)
    report = FrameworkBench("torch", label, robot.nq, robot.nv, robot.floating_base)
    states = [torch.from_numpy(x) for x in _states(robot, max(BATCHES))]
    libraries = {OURS: _torch_functions(robot)}
    if peers:
        from ..peers import adam

        if adam.available("torch"):
            libraries[ADAM] = adam.functions(robot, "torch", gravity)
        else:
            report.missing[ADAM] = "not installed"
    values = {}
    for library, functions in libraries.items():
        functions = {**functions, "dtau_dq": _torch_jacobian(functions["tau"])}
        for name in FUNCTIONS:
            if name not in functions:
                continue
            f, n = functions[name], ARGUMENTS[name]
            for K in (1,) + BATCHES:
                arguments = [x[0] if K == 1 else x[:K] for x in states[:n]]
                seconds = _median_seconds(lambda: f(*arguments), repeat)
                report.timings.append(FrameworkTiming(library, name, str(K), 1e6 * seconds / K))
            values[library, name] = f(*[x[:COMPARED] for x in states[:n]]).detach().numpy()
    report.agreement = _agreement(values, libraries)
    return report
