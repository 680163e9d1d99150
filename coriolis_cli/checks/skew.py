"""`coriolis skew`: the skew-symmetry of Ṁ − 2C for each factorization, and a counter-example.

Admissible factorizations (eq. 9 and eq. 10) make N = Ṁ − 2C skew-symmetric: ηᵀ N η = 0 for all η.
Only eq. (10) also gives the Christoffel-consistent C = Σ_k Γ[:, :, k] q̇_k. A factorization can be
valid (C q̇ right, so the equations of motion are right) yet not admissible: C + S with S q̇ = 0 and
S not skew-symmetric (Wensing & Slotine, Sec. III-IV). Passivity-based controllers need admissible.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .. import engine
from ..model.tree import RobotModel

TOL = 1e-10


@dataclass
class SkewRow:
    factorization: str
    description: str
    # sizes never below the scales of verify, m = max |M| and w = max(1, max |q̇|)
    valid_error: float  # max |C q̇ − RNEA| / max(max |RNEA|, m w²)
    eta_max: float  # max |ηᵀ (Ṁ − 2C) η| / (|η|² max(max |Ṁ|, m w))
    symmetric_part: float  # max |N + Nᵀ| / max(max |Ṁ|, m w)
    christoffel_error: float  # max |C − Σ Γ q̇| / max(max |C|, m w)
    valid: bool
    admissible: bool
    christoffel_consistent: bool
    expected_admissible: bool

    @property
    def as_expected(self) -> bool:
        return self.valid and self.admissible == self.expected_admissible

    def as_dict(self):
        d = asdict(self)
        d["as_expected"] = self.as_expected
        return d


def _non_admissible(size, qd, rng):
    """S with S q̇ = 0 (C + S stays valid) and S + Sᵀ ≠ 0 (not admissible), entries up to ``size``."""
    n = len(qd)
    w = rng.normal(size=n)
    w -= (w @ qd) / (qd @ qd) * qd
    u = rng.normal(size=n)
    S = np.outer(u, w)
    return S * (size / max(np.abs(S).max(), 1e-300))


def skew_report(robot: RobotModel, trials: int = 20, seed: int = 0, etas: int = 20) -> list[SkewRow]:
    """The rows of the comparison; with one DoF there is no counter-example (S q̇ = 0 forces
    S = 0), and its row is left out."""
    rng = np.random.default_rng(seed)
    n = robot.nv
    keys = ("christoffel", "featherstone", "valid-only") if n >= 2 else ("christoffel", "featherstone")
    stats = {k: np.zeros(4) for k in keys}
    zeros = np.zeros(n)
    for _ in range(trials):
        q = engine.random_configuration(robot, rng)
        qd = rng.uniform(-10.0, 10.0, n)
        tau = engine.inverse_dynamics(robot, q, qd, zeros, gravity=False)
        G = engine.christoffel(robot, q)
        Cs = G @ qd
        M, Mdot, Cc = engine.coriolis_matrix(robot, q, qd, "christoffel")
        _, _, Cf = engine.coriolis_matrix(robot, q, qd, "featherstone")
        m, w = float(np.abs(M).max()), max(1.0, float(np.abs(qd).max()))
        Cv = Cc + _non_admissible(max(np.abs(Cc).max(), m * w), qd, rng) if n >= 2 else None
        eta = rng.normal(size=(etas, n))
        scale_m = max(np.abs(Mdot).max(), m * w, 1e-300)
        for key, C in (("christoffel", Cc), ("featherstone", Cf), ("valid-only", Cv))[: len(keys)]:
            N = Mdot - 2.0 * C
            quad = np.abs(np.einsum("ei,ij,ej->e", eta, N, eta)) / np.einsum("ei,ei->e", eta, eta)
            row = np.array([
                np.abs(C @ qd - tau).max() / max(np.abs(tau).max(), m * w * w, 1e-300),
                quad.max() / scale_m,
                np.abs(N + N.T).max() / scale_m,
                np.abs(C - Cs).max() / max(np.abs(Cs).max(), m * w, 1e-300),
            ])
            stats[key] = np.maximum(stats[key], row)
    rows = []
    text = {
        "christoffel": ("christoffel", "eq. (10): ½[v×* I + (I v)×̄* − I v×]", True),
        "featherstone": ("featherstone", "eq. (9): v×* I", True),
        "valid-only": ("C + S, S q̇ = 0", "valid, not admissible: S not skew-symmetric", False),
    }
    for key, (name, desc, expected) in text.items():
        if key not in stats:
            continue
        v, eta_max, sym, cons = stats[key]
        rows.append(SkewRow(name, desc, float(v), float(eta_max), float(sym), float(cons), bool(v <= TOL),
                            bool(sym <= TOL), bool(cons <= TOL), expected))
    return rows
