"""One evaluation at one state, as `coriolis compute` makes it: the policy between the engine and
the output formats, returned as a typed record.

The policy: Γ is held only where the output needs every entry (JSON, CSV, NPZ) and it fits, within
the 256 MiB guard (unless allowed) and the memory the machine has; a table lists the largest
entries, streamed slice by slice above the guard. A nearly singular M is a warning; a result that
overflowed is an error naming it, never a number.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ... import engine
from ...errors import SizeError, StateError
from ...model.tree import RobotModel

# what compute says to do about an nv³ result above the guard
ALLOW_LARGE_HINT = "pass --allow-large to compute it anyway, if the machine has the memory"

# What compute evaluates at one state, by the engine's keys; --what takes their outputs' names
# (∂τ/∂q̈ is M, asked for as M), and the JSON, CSV and NPZ keys are the same names.
COMPUTE_FUNCTIONS = ("C", "Gamma", "g", "tau", "dtau", "dqdd", "dg", "dCTqd", "d2tau", "dC")
DERIVATIVE_FUNCTIONS = ("dtau", "dqdd", "dg", "dCTqd")  # [i, j] = ∂y_i/∂x_j
# nv³ tensors beside Γ: the second derivatives of τ ([i, j, k] = ∂/∂x_j (∂τ_i/∂y_k)) and ∂C/∂q
TENSOR_FUNCTIONS = ("d2tau", "dC")


def _outputs(keys) -> tuple:
    return tuple(n for k in keys for n in engine.NAMED[k].names.outputs if n != "dtau_dqdd")


COMPUTE_QUANTITIES = _outputs(COMPUTE_FUNCTIONS)
DERIVATIVES = _outputs(DERIVATIVE_FUNCTIONS)
TENSORS = _outputs(TENSOR_FUNCTIONS)
USES_QDD = {"tau", *_outputs(("dtau", "dqdd", "d2tau"))}  # the quantities taken at q̈
# Above this condition number M is reported as nearly singular.
COND_WARN = 1e10
# Γ entries below this fraction of max |M| are round-off, not counted as nonzero in tables.
GAMMA_ROUND_OFF = 1e-12
# Bytes an entry of Γ needs beyond its 8 in memory: its text (JSON, CSV) or compressed copy (NPZ).
EXTRA_BYTES_PER_ENTRY = {"json": 60, "csv": 60, "npz": 8}


@dataclass
class GammaEntries:
    """The largest |Γ_ijk| (largest first) and how many exceed round-off (GAMMA_ROUND_OFF·max |M|)."""

    entries: list[tuple[int, int, int, float]]
    nonzero: int
    size: int  # nv³
    streamed: bool  # True: Γ was never held, slices were computed one at a time


@dataclass
class Evaluation:
    robot: str
    dof_names: tuple[str, ...]
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    factorization: str
    quantities: list[str]
    values: dict[str, np.ndarray] = field(default_factory=dict)  # M, Mdot, C, Gamma (if held), g, tau
    gamma: GammaEntries | None = None
    tensors: dict = field(default_factory=dict)  # name → (largest entries, nonzero count) of TENSORS

    def as_dict(self) -> dict:
        """The record the formats write: the state, then each quantity asked for."""
        d = {"robot": self.robot, "dof_names": list(self.dof_names), "q": self.q, "qd": self.qd,
             "factorization": self.factorization}
        if USES_QDD & set(self.quantities):
            d["qdd"] = self.qdd
        for k in self.quantities:
            if k in self.values:
                d[k] = self.values[k]
        return d


def _require_finite(name: str, value) -> None:
    if not np.all(np.isfinite(value)):
        bad = int(np.size(value) - np.count_nonzero(np.isfinite(value)))
        raise StateError(f"{name} is not finite at this state ({bad} entr{'ies' if bad > 1 else 'y'} overflowed); "
                         "nothing was written")


def evaluate(robot: RobotModel, q, qd, qdd, quantities, factorization: str = "christoffel", top: int = 20,
             output_format: str = "table", allow_large: bool = False) -> Evaluation:
    """Compute ``quantities`` (names from COMPUTE_QUANTITIES) at (q, q̇, q̈) for ``output_format``."""
    if top < 1:
        raise StateError("top must be at least 1")
    result = Evaluation(robot.name, robot.dof_names, q, qd, qdd, factorization, list(quantities))
    hold_gamma = True
    if "Gamma" in quantities:
        try:
            engine.check_gamma_size(robot, 1, allow_large)
        except SizeError as e:
            if output_format != "table":
                raise SizeError(str(e), hint="the table format lists its largest entries without holding it "
                                "(--what Gamma --top N), or pass --allow-large") from None
            hold_gamma = False
        if hold_gamma:
            per_entry = 8 + EXTRA_BYTES_PER_ENTRY.get(output_format, 0)
            engine.check_memory(per_entry * robot.nv**3, f"Γ ({robot.nv}³ entries) in {output_format} format")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        if {"M", "Mdot", "C"} & set(quantities):
            M, Mdot, C = engine.coriolis_matrix(robot, q, qd, factorization)
            for name, value in (("M", M), ("Mdot", Mdot), ("C", C)):
                if name in quantities:
                    _require_finite(name, value)
                    result.values[name] = value
            cond = np.linalg.cond(M)
            if not cond < COND_WARN:
                warnings.warn(f"M is nearly singular (condition number {cond:.3g}); results may be inaccurate")
        if "Gamma" in quantities:
            n = robot.nv
            # round-off in Γ scales with M: entries below this are not counted or listed
            tiny = GAMMA_ROUND_OFF * float(np.abs(engine.mass_matrix(robot, q)).max())
            if hold_gamma:
                G = engine.christoffel(robot, q, force=True)  # sizes checked above
                _require_finite("Gamma", G)
                result.values["Gamma"] = G
                entries, nonzero = engine.largest_entries(((k, G[:, :, k]) for k in range(n)), n, top, tiny)
            else:
                entries, nonzero = engine.christoffel_largest(robot, q, top, tiny)
                _require_finite("Gamma", [v for *_, v in entries])
            result.gamma = GammaEntries(entries, nonzero, n**3, streamed=not hold_gamma)
        if "g" in quantities:
            result.values["g"] = engine.gravity_vector(robot, q)
            _require_finite("g", result.values["g"])
        if "tau" in quantities:
            result.values["tau"] = engine.inverse_dynamics(robot, q, qd, qdd)
            _require_finite("tau", result.values["tau"])
        _derivatives(robot, q, qd, qdd, quantities, result.values)
        _tensors(robot, q, qd, qdd, quantities, result, top, allow_large)
    return result


def _tensors(robot, q, qd, qdd, quantities, result, top, allow_large) -> None:
    """The nv³ tensors asked for, held (Γ's guard: above it refused unless allow_large), and their
    largest entries for tables."""
    asked = [k for k in TENSORS if k in quantities]
    if not asked:
        return
    values = {}
    try:
        second = engine.inverse_dynamics_second_derivatives.names.outputs
        if set(asked) & set(second):
            for name, T in zip(second, engine.inverse_dynamics_second_derivatives(robot, q, qd, qdd,
                                                                                      force=allow_large)):
                values[name] = T
        if "dC_dq" in asked:
            values["dC_dq"] = engine.coriolis_matrix_derivatives(robot, q, qd, result.factorization, force=allow_large)
    except SizeError as e:  # the command's remedy, not the library's force=True
        raise SizeError(str(e), hint=ALLOW_LARGE_HINT) from None
    tiny = GAMMA_ROUND_OFF * float(np.abs(engine.mass_matrix(robot, q)).max())
    n = robot.nv
    for name in asked:
        _require_finite(name, values[name])
        result.values[name] = values[name]
        result.tensors[name] = engine.largest_entries(((k, values[name][:, :, k]) for k in range(n)), n, top, tiny)


def _derivatives(robot, q, qd, qdd, quantities, values) -> None:
    """The derivatives asked for: of τ at q̈, of q̈ at the τ that gives q̈ (so the state is one), of
    g, and of Cᵀq̇."""
    asked = set(quantities)
    if asked & {"dtau_dq", "dtau_dqd"}:
        values["dtau_dq"], values["dtau_dqd"], _ = engine.inverse_dynamics_derivatives(robot, q, qd, qdd)
    if asked & {"dqdd_dq", "dqdd_dqd", "Minv"}:
        tau = engine.inverse_dynamics(robot, q, qd, qdd)
        values["dqdd_dq"], values["dqdd_dqd"], values["Minv"] = engine.forward_dynamics_derivatives(robot, q, qd, tau)
    if "dg_dq" in asked:
        values["dg_dq"] = engine.gravity_derivatives(robot, q)
    if asked & {"dCTqd_dq", "dCTqd_dqd"}:
        values["dCTqd_dq"], values["dCTqd_dqd"] = engine.coriolis_transpose_derivatives(robot, q, qd)
    for name in [k for k in values if k in DERIVATIVES]:
        if name not in asked:
            del values[name]
        else:
            _require_finite(name, values[name])
