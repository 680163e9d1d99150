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

# public function → the compiled entry whose cache file tells whether it is compiled already (on
# a robot of 1-DoF joints under at most a free root, as the warm-up chain is)
ENTRIES = {
    # compiled ahead of time in the C++ core (engine/core): nothing to compile at first use
    "coriolis_matrix": None,
    "christoffel": None,
    "mass_matrix": None,
    "inverse_dynamics": None,
    "gravity_vector": None,
    "forward_dynamics": None,
    "slotine_li": None,
    "adaptation_gradient": None,
    "regressor": None,
    "trajectory_dynamics": None,
    "generalized_momentum": None,
    "momentum_regressors": None,
    # identification's batches (with the RNEA's batch and the filter)
    "identification_torque": None,
    "identification_filtered": None,
    # robots in other coordinates: the loop solve, and the tree's calls with a workspace
    "closed_loops": None,
    "other_coordinates": None,
}
# The functions whose kernels for robots of other joints (spherical, planar, ...) are others, in
# the world frame: warm-up item "function:world", compiled on a chain with a spherical joint.
WORLD = ":world"
WORLD_ENTRIES = {
    "mass_matrix": None,
    "inverse_dynamics": None,
    "gravity_vector": None,
    "forward_dynamics": None,
    "identification_torque": None,
}


def items_for(functions, robots=()) -> list[str]:
    """The warm-up items ``functions`` need on ``robots``: each function's kernels for robots of
    1-DoF joints (also when no robot is given), and "function:world" for the functions of
    WORLD_ENTRIES where a robot has other joints."""
    from .data import body_frame_joints

    kinds = {body_frame_joints(r) for r in robots} or {True}
    items = []
    for f in functions:
        if True in kinds or f not in WORLD_ENTRIES:
            items.append(f)
        if False in kinds and f in WORLD_ENTRIES:
            items.append(f + WORLD)
    return items


def _entry(item: str) -> str:
    return WORLD_ENTRIES[item[: -len(WORLD)]] if item.endswith(WORLD) else ENTRIES[item]


def missing(items) -> list[str]:
    """The warm-up items (items_for) whose compiled entry is not in the cache."""
    from .cache import kernels_cached

    return [f for f in items if _entry(f) is not None and not kernels_cached(_entry(f))]


def warm_up(items) -> None:
    """Call each warm-up item's function once on a two-body chain (compiling or loading its entries):
    of revolute joints, or for "function:world" with a spherical joint."""
    from dataclasses import replace

    from .. import engine
    from ..model.bundled import bundled_path
    from ..model.coordinates import with_base_velocity
    from ..model.loader import load_robot
    from ..model.topologies import generate
    from ..model.tree import build_model

    chain = generate("serial", 2, 0)
    robots = {"": build_model(chain),
              WORLD: build_model(replace(chain, joints=(chain.joints[0], replace(chain.joints[1], type="spherical"))))}
    calls = {
        "coriolis_matrix": lambda robot, q, z: engine.coriolis_matrix(robot, q, z),
        "christoffel": lambda robot, q, z: engine.christoffel(robot, q),
        "mass_matrix": lambda robot, q, z: engine.mass_matrix(robot, q),
        "inverse_dynamics": lambda robot, q, z: engine.inverse_dynamics(robot, q, z, z),
        "gravity_vector": lambda robot, q, z: engine.gravity_vector(robot, q),
        "forward_dynamics": lambda robot, q, z: engine.forward_dynamics(robot, q, z, z),
        "slotine_li": lambda robot, q, z: engine.slotine_li(robot, q, z, z, z),
        "adaptation_gradient": lambda robot, q, z: engine.adaptation_gradient(robot, q, z, z, z),
        "regressor": lambda robot, q, z: engine.regressor(robot, q, z, z, z),
        "trajectory_dynamics": lambda robot, q, z: engine.trajectory_dynamics(robot, q[None], z[None], z[None]),
        "generalized_momentum": lambda robot, q, z: engine.generalized_momentum(robot, q, z),
        "momentum_regressors": lambda robot, q, z: engine.momentum_regressors(robot, q, z),
        "identification_torque": lambda robot, q, z: (engine.regressor(robot, q[None], z[None], z[None], z[None]),
                                                      engine.inverse_dynamics(robot, q[None], z[None], z[None])),
        "identification_filtered": lambda robot, q, z: _filtered(robot, q, z),
        "closed_loops": lambda robot, q, z: _in_other_coordinates(load_robot(bundled_path("fourbar"))),
        "other_coordinates": lambda robot, q, z: _in_other_coordinates(
            with_base_velocity(build_model(generate("serial", 2, 0), floating_base=True), "mixed")),
    }
    for item in items:
        kind = WORLD if item.endswith(WORLD) else ""
        robot = robots[kind]
        calls[item[: len(item) - len(kind)]](robot, robot.neutral_configuration(), np.zeros(robot.nv))


# seconds each entry took to compile alone on an empty cache (BENCHMARKS.md), to share them out.
# Kernels share helpers, so the best split is found by trying: for simulate's five, these give
# {slotine_li, regressor} and {forward_dynamics, mass_matrix, adaptation_gradient}, 14.7-15.0 s,
# against 16.3-16.7 and 19.5-19.9 s for two other splits and 19.9-24.0 s with the Slotine–Li
# kernels' items kept in one process (alternating runs).
_COST = {"coriolis_matrix": 8.1, "christoffel": 7.0, "inverse_dynamics": 7.9, "mass_matrix": 6.0, "gravity_vector": 3.8,
         "forward_dynamics": 6.8, "slotine_li": 13.2}


def shares_for(items, n: int) -> list[list[str]]:
    """``items`` shared out among ``n`` processes: longest first, to the least loaded."""
    shares = [[] for _ in range(n)]
    load = [0.0] * n
    for cost, f in sorted(((_COST.get(f.removesuffix(WORLD), 5.0), f) for f in items), key=lambda c: -c[0]):
        k = load.index(min(load))
        shares[k].append(f)
        load[k] += cost
    return shares


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
    shares = shares_for(functions, n)
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
    from .compiled import low_pass

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
