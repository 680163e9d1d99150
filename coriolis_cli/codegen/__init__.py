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
from .c_source import check_prefix, default_prefix, header, source, stack_bytes
from .trace import FUNCTIONS, WHAT, casadi, trace


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
    """The C functions that hold the asked outputs (M, Mdot, C, Gamma, tau, slotine), in a fixed order."""
    if what is None:
        return FUNCTIONS
    names = [w.strip() for w in (what.split(",") if isinstance(what, str) else what) if w.strip()]
    unknown = [w for w in names if w not in WHAT]
    if unknown or not names:
        raise InputError(f"--what takes {', '.join(WHAT)} separated by commas, got '{','.join(unknown) or what}'")
    wanted = {WHAT[w] for w in names}
    return tuple(f for f in FUNCTIONS if f in wanted)


def c_files(prefix: str, robot, made: dict) -> tuple[str, str]:
    """The texts of P.h and P.c for the CasADi functions ``made`` (codegen.trace), in its order."""
    generator = casadi().CodeGenerator(f"{prefix}_casadi", {"with_header": False, "with_export": False, "main": False})
    for f in made.values():
        generator.add(f)
    return header(prefix, robot, tuple(made), stack_bytes(made)), source(prefix, made, generator.dump())


def generate_code(robot, directory, prefix: str | None = None, what=None, force: bool = False) -> GeneratedCode:
    """Write ``directory/P.h`` and ``directory/P.c`` for ``robot`` (a RobotModel, or a robot whose
    mimic joints follow their masters) and return what was written. Existing files are replaced
    only with ``force``; a failure leaves neither file half-written."""
    from ..report.output import check_writable, write_atomic

    started = time.perf_counter()
    prefix_name = check_prefix(prefix) if prefix is not None else default_prefix(robot.name)
    directory = os.fspath(directory)
    h_path, c_path = os.path.join(directory, f"{prefix_name}.h"), os.path.join(directory, f"{prefix_name}.c")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise InputError(f"-o {directory}: not a directory")
    if os.path.isdir(directory):  # else made below, once the code is ready
        for path in (h_path, c_path):
            check_writable(path, force)
    made = trace(robot, functions_for(what))
    h_text, c_text = c_files(prefix_name, robot, made)
    os.makedirs(directory, exist_ok=True)
    write_atomic(h_path, h_text, force)
    write_atomic(c_path, c_text, force)
    return GeneratedCode(directory, prefix_name, h_path, c_path, tuple(made), robot.nq, robot.nv,
                         time.perf_counter() - started, len(c_text.encode()),
                         {name: int(f.n_instructions()) for name, f in made.items()})


__all__ = ["GeneratedCode", "c_files", "functions_for", "generate_code"]
