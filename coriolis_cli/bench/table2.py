"""The core paper's Table 2, measured: Γ obtained symbolically, by eq. (4) (the mass matrix traced
symbolically, then CasADi's Jacobians: Γ_ijk = ½ (∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i)) and by
Algorithm 2 run on symbolic inputs; the C code each gives, compiled and timed; and Algorithm 2 on
numbers (the engine). Each row runs in a child process under a time budget, as the paper's
symbolic runs past 15 bodies took hours.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field

import numpy as np

# Core paper, Table 2 (MATLAB symbolic toolbox, binary trees): seconds to obtain Γ symbolically
PAPER_TABLE2 = {("binary", 5): (1.23, 0.97), ("binary", 10): (7.83, 3.11), ("binary", 15): (27.1, 5.88)}
TABLE2_ROWS = (("binary", 5), ("binary", 10), ("binary", 15), ("serial", 5), ("serial", 10), ("serial", 15), ("serial", 20))
ROUTES = ("eq4", "alg2")
DEFAULT_BUDGET = 120.0  # seconds per route and row: symbolic work, then the build of its code


@dataclass
class RouteResult:
    symbolic_s: float | None = None  # None: over budget
    operations: int | None = None
    code_kib: float | None = None
    compiled_us: float | None = None  # the generated function in a C loop (-O1)
    note: str = ""


@dataclass
class Table2Row:
    topology: str
    bodies: int
    numeric_us: float  # Algorithm 2 on numbers: the engine, data= call
    routes: dict = field(default_factory=dict)  # "eq4" / "alg2" → RouteResult
    paper_s: tuple | None = None  # (eq. 4, Algorithm 2) in the paper, seconds

    def as_dict(self):
        return asdict(self)


def symbolic_gamma(robot, route):
    """A CasADi function q ↦ Γ (row-major) by one route, and the seconds it took to obtain."""
    import casadi as ca

    from ..codegen.trace import flat, symbols, symbolic_backend
    from ..reference import Tree, christoffel, coriolis_matrix

    started = time.perf_counter()
    bk, tree, n = symbolic_backend(), Tree(robot), robot.nv
    q_sym, q = symbols("q", robot.nq)
    if route == "alg2":
        G = flat(christoffel(tree, q, bk))[0]
    else:  # eq. (4): M symbolically (q̇ = 0 folds the velocity terms away), then its partials
        M = flat(coriolis_matrix(tree, q, np.zeros(n), bk)[0])[0]
        dM = ca.jacobian(M, q_sym)  # row i n + j, column k: ∂M_ij/∂q_k
        entries = [0.5 * (dM[i * n + j, k] + dM[i * n + k, j] - dM[j * n + k, i])
                   for i in range(n) for j in range(n) for k in range(n)]
        G = ca.densify(ca.vertcat(*entries))
    function = ca.Function("christoffel", [q_sym], [G], ["q"], ["Gamma"], {"cse": True})
    return function, time.perf_counter() - started


def _route_in_child(topology, bodies, route, connection):
    """Child process: the symbolic route, then its C code written (text sent back)."""
    from ..codegen import c_files
    from ..model import build_model
    from ..model.topologies import generate

    robot = build_model(generate(topology, bodies))
    function, seconds = symbolic_gamma(robot, route)
    h_text, c_text = c_files("t2", robot, {"christoffel": function})
    connection.send((seconds, int(function.n_instructions()), h_text, c_text))
    connection.close()


def _run_route(topology, bodies, route, budget, robot) -> RouteResult:
    from ..codegen.build import CompiledCode
    from .suite import median_loop_time

    context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_route_in_child, args=(topology, bodies, route, send), daemon=True)
    started = time.perf_counter()
    child.start()
    send.close()
    try:
        ready = receive.poll(budget)
        if not ready:
            return RouteResult(note=f"over budget ({budget:g} s)")
        seconds, operations, h_text, c_text = receive.recv()
    except EOFError:
        return RouteResult(note="failed (out of memory?)")
    finally:
        if child.is_alive():
            child.kill()
        child.join()
    result = RouteResult(seconds, operations, len(c_text.encode()) / 1024)
    remaining = budget - (time.perf_counter() - started)
    with tempfile.TemporaryDirectory(prefix="coriolis-table2-") as directory:
        for name, text in (("t2.h", h_text), ("t2.c", c_text)):
            with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
                f.write(text)
        try:
            compiled = CompiledCode(directory, "t2", ("christoffel",), robot.nq, robot.nv, "-O1", timeout=max(remaining, 1.0))
        except TimeoutError:
            result.note = "code not built within the budget"
            return result
        try:
            q = robot.random_configuration(0)
            result.compiled_us = 1e6 * median_loop_time(lambda R: compiled.seconds_per_call("christoffel", q, R), 7)
        finally:
            compiled.close()
    return result


def run_table2(budget: float = DEFAULT_BUDGET, rows=TABLE2_ROWS, advance=None) -> list[Table2Row]:
    from .. import engine
    from ..model import build_model
    from ..model.topologies import generate
    from .suite import median_call_time

    out = []
    for topology, bodies in rows:
        if advance is not None:
            advance(f"{topology}:{bodies}")
        robot = build_model(generate(topology, bodies))
        data, q = engine.create_data(robot), engine.random_configuration(robot, 0)
        row = Table2Row(topology, bodies, 1e6 * median_call_time(lambda: engine.christoffel(robot, q, data=data), 7),
                        paper_s=PAPER_TABLE2.get((topology, bodies)))
        for route in ROUTES:
            row.routes[route] = _run_route(topology, bodies, route, budget, robot)
        out.append(row)
    return out
