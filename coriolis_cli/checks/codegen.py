"""Generated code against the engine: the same outputs at random states, to round-off."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CODEGEN_TOLERANCE = 1e-12  # relative to the largest entry of each output


@dataclass(frozen=True)
class CodegenComparison:
    trials: int
    errors: dict  # function → the largest relative difference over the trials
    tolerance: float = CODEGEN_TOLERANCE

    @property
    def passed(self) -> bool:
        return all(e <= self.tolerance for e in self.errors.values())


def _relative(a, b) -> float:
    scale = max(float(np.abs(b).max(initial=0.0)), 1e-300)
    return float(np.abs(np.asarray(a) - np.asarray(b)).max(initial=0.0)) / scale


CHECK_OPTIMIZATION = "-O0"  # the numbers are those of -O2 (no contraction into FMA in ISO C), built 20x faster


def compare_generated(robot, generated, trials: int = 10, seed: int = 0) -> CodegenComparison:
    """Compile ``generated`` (codegen.GeneratedCode) and hold each of its functions against the
    engine at ``trials`` random states."""
    from .. import engine

    compiled = generated.compile(CHECK_OPTIMIZATION)
    try:
        rng = np.random.default_rng(seed)
        errors = {name: 0.0 for name in compiled.functions}
        for _ in range(trials):
            q = engine.random_configuration(robot, rng)
            qd, qd_r, qdd = (rng.uniform(-3, 3, robot.nv) for _ in range(3))
            if "coriolis" in errors:
                ours = compiled.coriolis(q, qd)
                theirs = engine.coriolis_matrix(robot, q, qd)
                errors["coriolis"] = max(errors["coriolis"], *(_relative(a, b) for a, b in zip(ours, theirs)))
            if "christoffel" in errors:
                errors["christoffel"] = max(errors["christoffel"], _relative(compiled.christoffel(q), engine.christoffel(robot, q)))
            if "inverse_dynamics" in errors:
                errors["inverse_dynamics"] = max(errors["inverse_dynamics"], _relative(
                    compiled.inverse_dynamics(q, qd, qdd), engine.inverse_dynamics(robot, q, qd, qdd)))
            derivatives = {  # name → (the engine's outputs, the velocities the C function takes)
                "inverse_dynamics_derivatives": (lambda: engine.inverse_dynamics_derivatives(robot, q, qd, qdd)[:2], (qd, qdd)),
                "gravity_derivatives": (lambda: (engine.gravity_derivatives(robot, q),), ()),
                "slotine_li_derivatives": (lambda: engine.slotine_li_derivatives(robot, q, qd, qd_r, qdd), (qd, qd_r, qdd)),
                "coriolis_product_derivatives": (lambda: engine.coriolis_product_derivatives(robot, q, qd, qd_r), (qd, qd_r)),
                "coriolis_transpose_derivatives": (lambda: engine.coriolis_transpose_derivatives(robot, q, qd), (qd,)),
            }
            for name, (theirs, velocities) in derivatives.items():
                if name in errors:
                    ours = compiled.derivatives(name, q, *velocities)
                    errors[name] = max(errors[name], *(_relative(a, b) for a, b in zip(ours, theirs())))
            if "slotine_li" in errors:
                errors["slotine_li"] = max(errors["slotine_li"], _relative(
                    compiled.slotine_li(q, qd, qd_r, qdd), engine.slotine_li(robot, q, qd, qd_r, qdd)))
    finally:
        compiled.close()
    return CodegenComparison(trials, errors)
