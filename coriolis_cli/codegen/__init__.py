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


# Γ's code grows with the tree's related triples (i, j, k): serial:40 (64,000 of them) took 20 s and
# 0.4 GB here, the rest of the functions a few seconds; refused above the budget, say so up front.
SECONDS_PER_TRIPLE, BYTES_PER_TRIPLE = 20.0 / 64_000, 0.4e9 / 64_000


def estimate(robot, functions) -> tuple[float, float]:
    """(seconds, bytes of memory) that generating ``functions`` for ``robot`` takes, roughly (from
    the related triples of Γ, calibrated on serial chains)."""
    import numpy as np

    if "christoffel" not in functions:
        return 5.0, 0.2e9
    tree = getattr(robot, "full", robot)
    R = tree.dof_related.astype(np.float64)
    triples = float(np.sum((R @ R) * R))
    return 2.0 + SECONDS_PER_TRIPLE * triples, 0.1e9 + BYTES_PER_TRIPLE * triples


def check_size(robot, functions) -> None:
    """Refuse up front what would run past CORIOLIS_CODEGEN_SECONDS (default 300) or half the
    machine's memory."""
    from ..engine.data import available_memory
    from ..model.limits import env_int

    seconds, memory = estimate(robot, functions)
    budget = env_int("CORIOLIS_CODEGEN_SECONDS", 300)
    available = available_memory()
    if seconds > budget or (available and memory > available / 2):
        raise InputError(f"generating Γ's code for this robot (nv = {robot.nv}) would take about {seconds / 60:.0f} min and "
                         f"{memory / 1e9:.1f} GB; on a robot this size the engine's christoffel is faster than such code "
                         "(Table 2: past 15 bodies). Leave Gamma out (--what M,Mdot,C,tau,slotine), or set "
                         "CORIOLIS_CODEGEN_SECONDS to allow longer")


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
