"""The reference algorithms (coriolis_cli.reference) run on CasADi SX symbols: one CasADi function
per generated C function, with the robot's constants folded in (SX folds arithmetic on numbers
as it traces, so x·0 and structural zeros never reach the code) and common subexpressions merged.

Outputs are flat and row-major: M[i*nv + j], Gamma[(i*nv + j)*nv + k].
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import MissingToolError, ModelError
from ..model.coordinates import BaseVelocityMap, MimicMap, ReducedRobot
from ..reference import Backend, Tree, christoffel, coriolis_matrix, inverse_dynamics, slotine_li

FUNCTIONS = ("coriolis", "christoffel", "inverse_dynamics", "slotine_li")
# --what names → the functions that hold them
WHAT = {"M": "coriolis", "Mdot": "coriolis", "C": "coriolis", "Gamma": "christoffel", "tau": "inverse_dynamics",
        "slotine": "slotine_li"}


def casadi():
    try:
        import casadi as ca
    except ImportError:
        raise MissingToolError("code generation needs CasADi: pip install 'coriolis-cli[codegen]' (or: pip install casadi)") \
            from None
    return ca


def symbolic_backend():
    ca = casadi()

    def scalar(symbolic, numeric):
        return lambda x: symbolic(x) if isinstance(x, ca.SX) else numeric(x)

    return Backend(object, scalar(ca.sin, math.sin), scalar(ca.cos, math.cos), scalar(ca.sqrt, math.sqrt))


def symbols(name, n):
    ca = casadi()
    sym = ca.SX.sym(name, n)
    out = np.empty(n, dtype=object)
    for k in range(n):
        out[k] = sym[k]
    return sym, out


def flat(*arrays):
    """Row-major flattening of object arrays into one SX column per array."""
    ca = casadi()
    # dense: the C code writes every entry, as the header promises (a sparse output would be packed)
    return [ca.densify(ca.vertcat(*[ca.SX(x) if not isinstance(x, ca.SX) else x for x in np.asarray(a, dtype=object).ravel()]))
            if np.size(a) else ca.SX(0, 1) for a in arrays]


class Coordinates:
    """Where the generated code's coordinates come from: the tree's own, or q = Aq q̄ + b with
    q̇ = A q̄̇ for mimic joints that follow their masters affinely (A constant, Ȧ = 0)."""

    def __init__(self, robot):
        if isinstance(robot, ReducedRobot):
            cmap = robot.map
            if isinstance(cmap, BaseVelocityMap):
                raise ModelError(f"codegen writes the base velocity in the base frame only, not '{cmap.representation}' "
                                 "(use --base-velocity body and map the base velocity before the call)")
            if not isinstance(cmap, MimicMap):
                raise ModelError(f"codegen writes trees and robots with mimic joints, not {robot.coordinates.split(':')[0]}: "
                                 "the loops need a solve at every call (use the Python API or the other commands)")
            if cmap.curved:
                raise ModelError("codegen takes mimic joints that follow their masters affinely (q = a q_m + b); this robot "
                                 "has polynomial couplings (use --mimic independent)")
            self.tree, self.A, self.Aq, self.b = Tree(robot.full), np.asarray(cmap.A), np.asarray(cmap.Aq), np.asarray(cmap.bq)
        else:
            self.tree, self.A, self.Aq, self.b = Tree(robot), None, None, None
        self.nq, self.nv = robot.nq, robot.nv

    def configuration(self, qbar):
        return qbar if self.A is None else self.Aq @ qbar + self.b

    def velocity(self, vbar):
        return vbar if self.A is None else self.A @ vbar

    def matrix(self, X):
        return X if self.A is None else self.A.T @ X @ self.A

    def force(self, f):
        return f if self.A is None else self.A.T @ f

    def christoffel(self, G):
        """Γ̄_ijk = Σ A_αi A_βj A_γk Γ_αβγ (core paper eq. 27 with A constant)."""
        if self.A is None:
            return G
        G1 = G @ self.A  # contract γ
        out = np.empty((self.nv, self.nv, self.nv), dtype=object)
        for k in range(self.nv):
            out[:, :, k] = self.A.T @ G1[:, :, k] @ self.A
        return out


def trace(robot, functions=FUNCTIONS, cse=True) -> dict:
    """{name: casadi.Function} for the chosen functions, traced from the reference algorithms."""
    ca = casadi()
    bk = symbolic_backend()
    coords = Coordinates(robot)
    tree = coords.tree
    q_sym, q_bar = symbols("q", coords.nq)
    q = coords.configuration(q_bar)
    options = {"cse": cse}
    made = {}
    for name in functions:
        if name == "coriolis":
            qd_sym, qd = symbols("qd", coords.nv)
            M, Mdot, C = coriolis_matrix(tree, q, coords.velocity(qd), bk)
            made[name] = ca.Function(name, [q_sym, qd_sym], flat(*(coords.matrix(X) for X in (M, Mdot, C))),
                                     ["q", "qd"], ["M", "Mdot", "C"], options)
        elif name == "christoffel" and all(d == 1 for d in tree.dof):  # Algorithm 2
            G = coords.christoffel(christoffel(tree, q, bk))
            made[name] = ca.Function(name, [q_sym], flat(G), ["q"], ["Gamma"], options)
        elif name == "christoffel":  # generalized speeds: Γ[:, :, k] = C(q, e_k) = ∂C/∂q̇_k, C being linear in q̇
            qd_sym, qd = symbols("qd", coords.nv)
            C = flat(coords.matrix(coriolis_matrix(tree, q, coords.velocity(qd), bk)[2]))[0]
            G = ca.reshape(ca.jacobian(C, qd_sym).T, coords.nv ** 3, 1)  # row-major: ((i nv + j) nv + k)
            made[name] = ca.Function(name, [q_sym], [ca.densify(G)], ["q"], ["Gamma"], options)
        elif name == "inverse_dynamics":
            qd_sym, qd = symbols("qd", coords.nv)
            qdd_sym, qdd = symbols("qdd", coords.nv)
            tau = inverse_dynamics(tree, q, coords.velocity(qd), coords.velocity(qdd), bk)
            made[name] = ca.Function(name, [q_sym, qd_sym, qdd_sym], flat(coords.force(tau)), ["q", "qd", "qdd"], ["tau"],
                                     options)
        elif name == "slotine_li":
            syms = [symbols(s, coords.nv) for s in ("qd", "qd_r", "qdd_r")]
            tau = slotine_li(tree, q, *(coords.velocity(x) for _, x in syms), bk)
            made[name] = ca.Function(name, [q_sym] + [s for s, _ in syms], flat(coords.force(tau)),
                                     ["q", "qd", "qd_r", "qdd_r"], ["tau"], options)
        else:
            raise ValueError(name)
    return made
