"""Compiling the kernels a command needs before it runs, so that the wait can be announced.

numba compiles an entry point on its first call for a given argument type, and caches it on disk.
The type depends on the arrays, never on the robot's size, so a two-body chain compiles exactly
what the user's robot will run: a command compiles (or loads from the cache) its entries here, in
well under a second when cached, then runs.
"""

from __future__ import annotations

import contextlib
import os
import signal

import numpy as np

# public function → the compiled entry whose cache file tells whether it is compiled already
ENTRIES = {
    "coriolis_matrix": "coriolis.coriolis_into_entry",  # the call without data= writes into fresh arrays
    "christoffel": "christoffel.christoffel_entry",
    "mass_matrix": "crba.mass_matrix_entry",
    "inverse_dynamics": "rnea.inverse_dynamics_entry",
    "gravity_vector": "rnea.gravity_vector_entry",
    "forward_dynamics": "forward_dynamics.forward_dynamics_entry",
    "slotine_li": "slotine_li.slotine_li_entry",
    "adaptation_gradient": "slotine_li.adaptation_gradient_entry",
    "regressor": "slotine_li.regressor_entry",
    "trajectory_dynamics": "momentum.trajectory_batch",
    "generalized_momentum": "momentum.momentum_into_entry",
    "momentum_regressors": "momentum.momentum_regressor_entry",
    # identification's batches (with rnea's batch and the filter)
    "identification_torque": "slotine_li.regressor_batch",
    "identification_filtered": "momentum.momentum_regressor_batch",
    # robots in other coordinates: the loop solve, and the tree's calls with a workspace
    "closed_loops": "closure.continuation_kernel",
    "other_coordinates": "base_velocity.coriolis_kernel",
}


def missing(functions) -> list[str]:
    """The functions among ``functions`` whose compiled entry is not in the cache."""
    from .cache import kernels_cached

    return [f for f in functions if not kernels_cached(ENTRIES[f])]


def warm_up(functions) -> None:
    """Call each of ``functions`` once on a two-body chain (compiling or loading its entry)."""
    from .. import engine
    from ..model.bundled import bundled_path
    from ..model.coordinates import with_base_velocity
    from ..model.loader import load_robot
    from ..model.topologies import generate
    from ..model.tree import build_model

    robot = build_model(generate("serial", 2, 0))
    q, z = robot.neutral_configuration(), np.zeros(robot.nv)
    calls = {
        "coriolis_matrix": lambda: engine.coriolis_matrix(robot, q, z),
        "christoffel": lambda: engine.christoffel(robot, q),
        "mass_matrix": lambda: engine.mass_matrix(robot, q),
        "inverse_dynamics": lambda: engine.inverse_dynamics(robot, q, z, z),
        "gravity_vector": lambda: engine.gravity_vector(robot, q),
        "forward_dynamics": lambda: engine.forward_dynamics(robot, q, z, z),
        "slotine_li": lambda: engine.slotine_li(robot, q, z, z, z),
        "adaptation_gradient": lambda: engine.adaptation_gradient(robot, q, z, z, z),
        "regressor": lambda: engine.regressor(robot, q, z, z, z),
        "trajectory_dynamics": lambda: engine.trajectory_dynamics(robot, q[None], z[None], z[None]),
        "generalized_momentum": lambda: engine.generalized_momentum(robot, q, z),
        "momentum_regressors": lambda: engine.momentum_regressors(robot, q, z),
        "identification_torque": lambda: (engine.regressor(robot, q[None], z[None], z[None], z[None]),
                                          engine.inverse_dynamics(robot, q[None], z[None], z[None])),
        "identification_filtered": lambda: _filtered(robot, q, z),
    }
    calls["closed_loops"] = lambda: _in_other_coordinates(load_robot(bundled_path("fourbar")))
    calls["other_coordinates"] = lambda: _in_other_coordinates(
        with_base_velocity(build_model(generate("serial", 2, 0), floating_base=True), "mixed"))
    for f in functions:
        calls[f]()


# seconds each entry takes to compile alone on an empty cache (BENCHMARKS.md), to share them out
_COST = {"coriolis_matrix": 8.1, "christoffel": 7.0, "inverse_dynamics": 7.9, "mass_matrix": 6.0,
         "forward_dynamics": 6.8, "slotine_li": 13.2}


def processes_for(functions) -> int:
    """How many processes warm_up_side_by_side would use: one per function, at most one per CPU
    this process may run on."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(len(functions), cpus))


def warm_up_side_by_side(functions) -> None:
    """warm_up(functions), shared out among processes_for(functions) new processes that compile
    into the cache side by side, then loaded here from the cache. They share the cache directory
    under the engine's lock (cache.serialize_cache_writes) and compile the helpers their shares
    have in common once each. Interrupted, the processes are
    stopped; if one fails, the rest is compiled here (and fails here with its message)."""
    import multiprocessing

    n = processes_for(functions)
    if n < 2:
        return warm_up(functions)
    shares = [[] for _ in range(n)]
    load = [0.0] * n
    costs = [(_COST.get(f, 5.0), f) for f in functions]
    for cost, f in sorted(costs, key=lambda c: -c[0]):  # longest first, to the least loaded
        k = load.index(min(load))
        shares[k].append(f)
        load[k] += cost
    context = multiprocessing.get_context("spawn")  # a fork would copy numba's threads and locks
    started = []
    try:
        with _interrupts_not_inherited():
            for share in shares:
                p = context.Process(target=_compile_share, args=(share,), daemon=True)
                p.start()
                started.append(p)
        for p in started:  # an interrupt ends the wait
            p.join()
    except OSError:  # no new process here (a sandbox, no semaphores): all of it in this one
        pass
    finally:
        for p in started:
            if p.is_alive():
                p.terminate()
            p.join()
    warm_up(functions)


@contextlib.contextmanager
def _interrupts_not_inherited():
    """Processes started inside ignore SIGINT from birth (an ignored signal stays ignored across
    exec, and Python then installs no KeyboardInterrupt handler): Ctrl-C reaches the whole process
    group, and a process still importing numba would print a traceback. This process takes the
    interrupt and stops them."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: the handler is not ours to change
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _compile_share(functions) -> None:
    """One process's share: compile quietly; any failure only ends the process, and the caller
    compiles what is left itself."""
    try:
        warm_up(functions)
    except BaseException:  # noqa: BLE001 - reported by the caller, which compiles the rest itself
        os._exit(1)


def _filtered(robot, q, z) -> None:
    from .. import engine
    from .filters import low_pass

    engine.momentum_regressors(robot, q[None], z[None])
    engine.generalized_momentum(robot, q[None], z[None])
    x = np.zeros((1, 1))
    low_pass(np.zeros(1), x, x, 1.0, np.zeros(1), np.zeros(2), np.zeros((1, 1)))


def _in_other_coordinates(robot) -> None:
    from .. import engine

    q, z = robot.neutral_configuration(), np.zeros(robot.nv)
    engine.coriolis_matrix(robot, q, z)
    engine.christoffel(robot, q)
    engine.inverse_dynamics(robot, q, z, z)
