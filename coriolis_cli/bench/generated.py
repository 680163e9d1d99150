"""Generated code or the engine: which is faster for each function codegen writes, on this robot.

The code's time is estimated from its operation count, at NS_PER_OPERATION as measured with
cc -O2 (BENCHMARKS.md: the 9-DoF Panda's M, Ṁ, C 1.15 µs for 5,117 operations, TALOS's Γ
36-59 µs for 123,912). Straight-line code that outgrows the caches runs slower per operation,
so large functions get the upper figure. The engine is timed, with data=, on this robot. Code
below SMALL_MICROSECONDS is not compared: the engine's call from Python alone costs about that.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

NS_PER_OPERATION = 0.22  # code that stays in cache
NS_PER_OPERATION_LARGE = 0.45  # past LARGE_OPERATIONS (TALOS's Γ, the slower of its runs)
LARGE_OPERATIONS = 50_000
SMALL_MICROSECONDS = 3.0
ENGINE_FUNCTIONS = {"coriolis": "coriolis_matrix", "christoffel": "christoffel", "inverse_dynamics": "inverse_dynamics",
                    "slotine_li": "slotine_li", "inverse_dynamics_derivatives": "inverse_dynamics_derivatives",
                    "gravity_derivatives": "gravity_derivatives", "slotine_li_derivatives": "slotine_li_derivatives",
                    "coriolis_product_derivatives": "coriolis_product_derivatives",
                    "coriolis_transpose_derivatives": "coriolis_transpose_derivatives"}


@dataclass(frozen=True)
class RouteSpeed:
    function: str  # the generated function, without the prefix
    operations: int
    code_microseconds: float  # estimated
    engine_microseconds: float  # measured, median

    @property
    def engine_faster(self) -> bool:
        return self.engine_microseconds < self.code_microseconds


def code_microseconds(operations: int) -> float:
    per = NS_PER_OPERATION_LARGE if operations > LARGE_OPERATIONS else NS_PER_OPERATION
    return operations * per * 1e-3


def large_functions(operations: dict) -> dict:
    """The generated functions (name → operations) whose code takes SMALL_MICROSECONDS or more."""
    return {name: n for name, n in operations.items() if code_microseconds(n) >= SMALL_MICROSECONDS}


def route_speeds(robot, operations: dict, budget: float = 0.3) -> list[RouteSpeed]:
    """For each of the generated functions ``operations`` names: its code's estimated time and
    the engine's median time on this robot, timed for about ``budget`` seconds each."""
    import coriolis_cli as cc

    out = []
    rng = np.random.default_rng(0)
    data = cc.create_data(robot)
    q = cc.random_configuration(robot, rng)
    qd, qdd = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
    for name, count in operations.items():
        call = {"coriolis": lambda: cc.coriolis_matrix(robot, q, qd, data=data),
                "christoffel": lambda: cc.christoffel(robot, q, data=data),
                "inverse_dynamics": lambda: cc.inverse_dynamics(robot, q, qd, qdd, data=data),
                "slotine_li": lambda: cc.slotine_li(robot, q, qd, qd, qdd, data=data),
                "inverse_dynamics_derivatives": lambda: cc.inverse_dynamics_derivatives(robot, q, qd, qdd, data=data),
                "gravity_derivatives": lambda: cc.gravity_derivatives(robot, q, data=data),
                "slotine_li_derivatives": lambda: cc.slotine_li_derivatives(robot, q, qd, qd, qdd, data=data),
                "coriolis_product_derivatives": lambda: cc.coriolis_product_derivatives(robot, q, qd, qdd, data=data),
                "coriolis_transpose_derivatives": lambda: cc.coriolis_transpose_derivatives(robot, q, qd, data=data)}[name]
        call()  # compiled or loaded from the cache here
        times, stop = [], time.perf_counter() + budget
        while time.perf_counter() < stop or len(times) < 5:
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        out.append(RouteSpeed(name, count, code_microseconds(count), float(np.median(times)) * 1e6))
    return out
