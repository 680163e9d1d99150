"""``coriolis codegen``: C code of M, Ṁ, C, Γ, τ and the Slotine–Li torque for one robot.

The reference algorithms (coriolis_cli.reference) are traced with CasADi SX symbols
(codegen.trace) and written as C99 by CasADi's code generator with common subexpressions merged
(codegen.c_source); codegen.build compiles the result to call it from Python. CasADi is an
optional extra: ``pip install 'coriolis-cli[codegen]'``.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from ..errors import InputError
from .c_source import check_prefix, default_prefix, header, source
from .trace import ALL_FUNCTIONS, FUNCTIONS, WHAT, casadi, trace


@dataclass(frozen=True)
class GeneratedCode:
    """What ``generate_code`` wrote: the two files, the functions, and what it took."""

    directory: str
    prefix: str
    header_path: str
    source_path: str
    functions: tuple[str, ...]
    nq: int
    nv: int
    seconds: float  # tracing and writing
    source_bytes: int
    operations: dict  # CasADi instructions per function, after common-subexpression elimination

    def compile(self, optimization: str = "-O2"):
        """The generated functions compiled with the system's C compiler (codegen.build.CompiledCode)."""
        from .build import CompiledCode

        return CompiledCode(self.directory, self.prefix, self.functions, self.nq, self.nv, optimization)


def functions_for(what) -> tuple[str, ...]:
    """The C functions that hold the asked outputs (M, Mdot, C, Gamma, tau, slotine, dtau), in a fixed order."""
    if what is None:
        return FUNCTIONS
    names = [w.strip() for w in (what.split(",") if isinstance(what, str) else what) if w.strip()]
    unknown = [w for w in names if w not in WHAT]
    if unknown or not names:
        raise InputError(f"--what takes {', '.join(WHAT)} separated by commas, got '{','.join(unknown) or what}'")
    wanted = {WHAT[w] for w in names}
    return tuple(f for f in ALL_FUNCTIONS if f in wanted)


def c_files(prefix: str, robot, made: dict) -> tuple[str, str]:
    """The texts of P.h and P.c for the CasADi functions ``made`` (codegen.trace), in its order."""
    generator = casadi().CodeGenerator(f"{prefix}_casadi", {"with_header": False, "with_export": False, "main": False})
    for f in made.values():
        generator.add(f)
    c_text, stack = source(prefix, made, generator.dump())
    return header(prefix, robot, tuple(made), stack), c_text


def generate_code(robot, directory, prefix: str | None = None, what=None, force: bool = False) -> GeneratedCode:
    """Write ``directory/P.h`` and ``directory/P.c`` for ``robot`` (a RobotModel, or a robot whose
    mimic joints follow their masters) and return what was written. Existing files are replaced
    only with ``force``; a failure leaves neither file half-written."""
    from ..report.output import check_writable, write_atomic

    started = time.perf_counter()
    prefix_name = check_prefix(prefix) if prefix is not None else default_prefix(robot.name)
    directory = os.fspath(directory)
    if not directory.strip():
        raise InputError("-o: give the directory to write P.h and P.c in")
    if os.path.islink(directory) and not os.path.exists(directory):
        raise InputError(f"-o {directory}: a symbolic link to {os.readlink(directory)}, which does not exist")
    h_path, c_path = os.path.join(directory, f"{prefix_name}.h"), os.path.join(directory, f"{prefix_name}.c")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise InputError(f"-o {directory}: not a directory")
    if os.path.isdir(directory):  # else made below, once the code is ready
        for path in (h_path, c_path):
            check_writable(path, force)
    functions = functions_for(what)
    check_size(robot, functions)
    with _killable():
        made = trace(robot, functions)
        h_text, c_text = c_files(prefix_name, robot, made)
    os.makedirs(directory, exist_ok=True)
    write_atomic(h_path, h_text, force)
    write_atomic(c_path, c_text, force)
    return GeneratedCode(directory, prefix_name, h_path, c_path, tuple(made), robot.nq, robot.nv,
                         time.perf_counter() - started, len(c_text.encode()),
                         {name: int(f.n_instructions()) for name, f in made.items()})


# The code of Γ and of the derivatives grows with the tree's related triples (i, j, k); each
# function's seconds and bytes a triple, measured with `coriolis codegen serial:N --what W` (GNU
# time, 2 cores) where the triples dominate: Γ serial:40 (64,000 triples) 20 s and 0.4 GB; dtau
# serial:60 (216,000) 123 s and 3.6 GB; dslotine serial:30 (27,000) 21 s and 0.8 GB; dCv and dCTqd
# serial:30 74 s and 2.35 GB (serial:15 and 20 gave 2.1e-3 s a triple: slightly less). M, Ṁ, C,
# τ, g, Slotine–Li and ∂g/∂q take a few seconds at these sizes (serial:30: 4.5 s and 2.1 s).
COST_PER_TRIPLE = {  # function: (seconds, bytes)
    "christoffel": (20.0 / 64_000, 0.4e9 / 64_000),
    "inverse_dynamics_derivatives": (123.0 / 216_000, 3.6e9 / 216_000),
    "slotine_li_derivatives": (21.0 / 27_000, 0.8e9 / 27_000),
    "coriolis_product_derivatives": (74.0 / 27_000, 2.35e9 / 27_000),
    "coriolis_transpose_derivatives": (74.0 / 27_000, 2.35e9 / 27_000),
}
BASE_SECONDS, BASE_BYTES = 5.0, 0.2e9


def _triples(robot) -> float:
    import numpy as np

    tree = getattr(robot, "full", robot)
    R = tree.dof_related.astype(np.float64)
    return float(np.sum((R @ R) * R))


def estimate(robot, functions) -> tuple[float, float]:
    """(seconds, bytes of memory) that generating ``functions`` for ``robot`` takes, roughly: each
    function's cost a related triple (COST_PER_TRIPLE, calibrated on serial chains), added up."""
    costly = [f for f in functions if f in COST_PER_TRIPLE]
    if not costly:
        return BASE_SECONDS, BASE_BYTES
    triples = _triples(robot)
    return (BASE_SECONDS + triples * sum(COST_PER_TRIPLE[f][0] for f in costly),
            BASE_BYTES + triples * sum(COST_PER_TRIPLE[f][1] for f in costly))


def check_size(robot, functions) -> None:
    """Refuse up front what would run past CORIOLIS_CODEGEN_SECONDS (default 300) or half the
    machine's memory, naming the functions that cost most and how to leave them out."""
    from ..engine.data import available_memory
    from ..model.limits import env_int
    from .trace import WHAT

    seconds, memory = estimate(robot, functions)
    budget = env_int("CORIOLIS_CODEGEN_SECONDS", 300)
    available = available_memory()
    if seconds > budget or (available and memory > available / 2):
        costly = sorted((f for f in functions if f in COST_PER_TRIPLE), key=lambda f: -COST_PER_TRIPLE[f][0])
        names = [next(k for k, v in WHAT.items() if v == f) for f in costly]
        kept = [k for k, v in WHAT.items() if v in functions and v not in COST_PER_TRIPLE]
        leave = f"--what {','.join(kept)}" if kept else "a smaller --what"
        faster = (" (Table 2: past 15 bodies the engine's christoffel is faster than Γ's code)"
                  if "christoffel" in costly else "")
        raise InputError(f"generating the code of {', '.join(names)} for this robot (nv = {robot.nv}) would take about "
                         f"{seconds / 60:.0f} min and {memory / 1e9:.1f} GB{faster}; leave {'them' if len(names) > 1 else 'it'} "
                         f"out ({leave}), call the engine instead, or set CORIOLIS_CODEGEN_SECONDS to allow longer")


class _killable:
    """SIGTERM and Ctrl-C end the process at once while CasADi works: its long C++ calls (common
    subexpressions, code generation) do not return to Python, where the CLI's handlers would run,
    and nothing has been written yet (the files are written atomically afterwards)."""

    def __enter__(self):
        import signal
        import threading

        self.saved = None
        if threading.current_thread() is threading.main_thread():
            self.saved = {s: signal.signal(s, signal.SIG_DFL) for s in (signal.SIGTERM, signal.SIGINT)}
        return self

    def __exit__(self, *exc):
        import signal

        for s, handler in (self.saved or {}).items():
            signal.signal(s, handler)
        return False


__all__ = ["GeneratedCode", "c_files", "check_size", "estimate", "functions_for", "generate_code"]
