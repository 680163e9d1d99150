"""The tree's constants and its placements in the computation frame, for every backend.

A body's joint moves it by L(q) in its parent's frame: R_i = R_p E L_J(q), p_i = p_p + R_p (t + E
t_J(q)) (engine/joints.py's place_body, written once more as plain matrix algebra). Its motion
subspace S_i (6 x d_i) is the joint's columns, constant in the child frame, carried to the
computation frame; so Ṡ_i = v_i × S_i for every joint type.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..model.joints import FLOATING, FREE, PLANAR, PRISMATIC, REVOLUTE, SPHERICAL
from ..model.tree import G_ARMATURE, G_AXIS, G_COM, G_INERTIA, G_MASS, G_ROT, G_TRANS, RobotModel
from .spatial import crm, quaternion_matrix, skew, spatial_inertia

DOF = {REVOLUTE: 1, PRISMATIC: 1, FREE: 6, FLOATING: 6, SPHERICAL: 3, PLANAR: 3}


@dataclass(frozen=True)
class Backend:
    """Element type and scalar functions: ``NUMERIC`` (float64) or codegen's CasADi SX."""

    dtype: object
    sin: Callable
    cos: Callable
    sqrt: Callable

    def zeros(self, shape):
        return np.zeros(shape, dtype=self.dtype) if self.dtype is not object else np.full(shape, 0.0, dtype=object)

    def scale(self, s, array):
        """s · array, entry by entry for symbols (a CasADi scalar times a NumPy array would
        become one CasADi matrix, which NumPy arrays of symbols cannot hold)."""
        if self.dtype is not object:
            return s * array
        out = np.empty(np.shape(array), dtype=object)
        for index in np.ndindex(out.shape):
            out[index] = s * array[index]
        return out

    def combine(self, constant, terms):
        """constant + Σ s·A over the (scalar, numeric array) ``terms``, entry by entry. For symbols,
        entries of A that are 0 or ±1 add nothing or ±s: SX folds x·0 but keeps 1 − (1 − cos q)
        as written, so the form of a sum decides how many operations the C code does."""
        if self.dtype is not object:
            return constant + sum(s * A for s, A in terms)
        out = np.empty(np.shape(constant), dtype=object)
        for index in np.ndindex(out.shape):
            x = float(constant[index])
            for s, A in terms:
                a = float(A[index])
                if a != 0.0:
                    x = x + (s if a == 1.0 else -s if a == -1.0 else a * s)
            out[index] = x
        return out

    def array(self, rows):
        """A 1-D or 2-D array from nested lists (element by element, so that symbols stay scalars)."""
        if self.dtype is not object:
            return np.array(rows, dtype=self.dtype)
        shape = (len(rows), len(rows[0])) if isinstance(rows[0], (list, tuple)) else (len(rows),)
        out = np.empty(shape, dtype=object)
        for index in np.ndindex(shape):
            out[index] = rows[index[0]][index[1]] if len(shape) == 2 else rows[index[0]]
        return out


NUMERIC = Backend(np.float64, math.sin, math.cos, math.sqrt)


class Tree:
    """A RobotModel's constants as the reference algorithms read them: parent, joint code, first q
    and v index and DoF count per body; joint placements, inertias and armature as numbers."""

    def __init__(self, robot: RobotModel):
        ints, _, geom = robot.arrays
        self.parent = [int(p) for p in ints[:, 0]]
        self.code = [int(c) for c in ints[:, 1]]
        self.q_start = [int(s) for s in ints[:, 2]]
        self.v_start = [int(s) for s in ints[:, 3]]
        self.dof = [DOF[c] for c in self.code]
        self.geom = np.asarray(geom)
        self.N, self.nq, self.nv = robot.n_bodies, robot.nq, robot.nv
        self.armature = np.concatenate([geom[i, G_ARMATURE : G_ARMATURE + d] for i, d in enumerate(self.dof)]) \
            if self.N else np.zeros(0)
        # a free joint's linear armature is Rᵀ A R, not diagonal (engine/armature.py): apart
        self.free_linear_armature = {i: np.array(geom[i, G_ARMATURE : G_ARMATURE + 3]) for i in range(self.N)
                                     if self.code[i] in (FREE, FLOATING) and np.any(geom[i, G_ARMATURE : G_ARMATURE + 3])}
        for i in self.free_linear_armature:
            self.armature[self.v_start[i] : self.v_start[i] + 3] = 0.0
        self.gravity = np.asarray(robot.gravity_array, dtype=float)

    def free_armature(self, q, bk):
        """(linear columns, angular columns, M_a = Rᵀ A R) of each free joint whose linear DoF
        have armature (engine/armature.py: MuJoCo's armature on the world-frame ṗ)."""
        out = []
        for i, a in self.free_linear_armature.items():
            s, qs = self.v_start[i], self.q_start[i]
            if a[0] == a[1] == a[2]:
                Ma = bk.array([[float(a[0]) if r == c else 0.0 for c in range(3)] for r in range(3)])
            else:
                R = quaternion_matrix(*[q[qs + k] for k in range(3, 7)], bk)
                Ma = R.T @ bk.array([[float(a[r]) * R[r, c] for c in range(3)] for r in range(3)])
            out.append((slice(s, s + 3), slice(s + 3, s + 6), Ma))
        return out

    def columns(self, i) -> slice:
        return slice(self.v_start[i], self.v_start[i] + self.dof[i])

    def ancestors(self, i):
        """i, p(i), p(p(i)), … up to a root."""
        while i >= 0:
            yield i
            i = self.parent[i]

    def gravity_in_computation_frame(self, q, bk):
        """g in the computation frame: world axes, or the base's for a free root, (E R)ᵀ g with E
        the root joint's frame in the world (a URDF floating joint with an rpy origin) and R its
        quaternion's rotation."""
        if self.N and self.code[0] == FREE:
            E = self.geom[0, G_ROT : G_ROT + 9].reshape(3, 3)
            R = quaternion_matrix(*[q[k] for k in range(3, 7)], bk)
            return R.T @ (E.T @ self.gravity)
        return self.gravity

    def placements(self, q, bk):
        """R_i, p_i per body, S (6 x nv) and the spatial inertias I_i (6 x 6), all in the
        computation frame."""
        g = self.geom
        R, p, inertia = [None] * self.N, [None] * self.N, [None] * self.N
        S = bk.zeros((6, self.nv))
        for i in range(self.N):
            par, code, qs, cols = self.parent[i], self.code[i], self.q_start[i], self.columns(i)
            E = g[i, G_ROT : G_ROT + 9].reshape(3, 3)
            Rp, pp = (R[par], p[par]) if par >= 0 else (np.eye(3), np.zeros(3))
            origin = pp + Rp @ g[i, G_TRANS : G_TRANS + 3]
            axis = g[i, G_AXIS : G_AXIS + 3]
            if code == REVOLUTE:  # L = E Rot(a, q) = E (1 + sin q â + (1 − cos q) â²), the numbers gathered
                hat = skew(axis, NUMERIC)
                E1, E2 = E @ hat, E @ hat @ hat
                R[i] = Rp @ bk.combine(E + E2, ((bk.sin(q[qs]), E1), (bk.cos(q[qs]), -E2)))
                p[i] = origin
                w = Rp @ (E @ axis)
                S[0:3, cols] = w[:, None]
                S[3:6, cols] = (skew(p[i], bk) @ w)[:, None]
            elif code == PRISMATIC:
                R[i] = Rp @ E
                w = Rp @ (E @ axis)
                p[i] = origin + bk.scale(q[qs], w)
                S[3:6, cols] = w[:, None]
            elif code == FREE:  # the sole free root: the computation frame is the base frame now
                R[i], p[i] = np.eye(3), np.zeros(3)
                S[3:6, cols.start : cols.start + 3] = np.eye(3)  # ν = [v; ω]
                S[0:3, cols.start + 3 : cols.stop] = np.eye(3)
            else:  # spherical, planar, free anywhere else: columns fixed in the child's axes
                if code == PLANAR:
                    norm = bk.sqrt(q[qs + 2] * q[qs + 2] + q[qs + 3] * q[qs + 3])
                    c, s = q[qs + 2] / norm, q[qs + 3] / norm
                    RJ, tJ = bk.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]), bk.array([q[qs], q[qs + 1], 0.0])
                    linear, angular = (0, 1), (2,)
                elif code == SPHERICAL:
                    RJ, tJ = quaternion_matrix(*[q[qs + k] for k in range(4)], bk), np.zeros(3)
                    linear, angular = (), (0, 1, 2)
                else:
                    RJ, tJ = quaternion_matrix(*[q[qs + k] for k in range(3, 7)], bk), bk.array([q[qs + k] for k in range(3)])
                    linear, angular = (0, 1, 2), (0, 1, 2)
                R[i] = Rp @ E @ RJ
                p[i] = origin + Rp @ (E @ tJ)
                column = cols.start
                for k in linear:
                    S[3:6, column] = R[i][:, k]
                    column += 1
                for k in angular:
                    S[0:3, column] = R[i][:, k]
                    S[3:6, column] = skew(p[i], bk) @ R[i][:, k]
                    column += 1
            com = p[i] + R[i] @ g[i, G_COM : G_COM + 3]
            inertia[i] = spatial_inertia(g[i, G_MASS], com, R[i] @ g[i, G_INERTIA : G_INERTIA + 9].reshape(3, 3) @ R[i].T, bk)
        return R, p, S, inertia

    def velocities(self, S, qd, bk):
        """v_i = v_p(i) + S_i q̇_i and Ṡ = [v_i × S_i] column by column."""
        v, Sdot = [None] * self.N, bk.zeros((6, self.nv))
        for i in range(self.N):
            cols, par = self.columns(i), self.parent[i]
            v[i] = (v[par] if par >= 0 else bk.zeros(6)) + S[:, cols] @ qd[cols]
            Sdot[:, cols] = crm(v[i], bk) @ S[:, cols]
        return v, Sdot

    def joint_torques(self, S, f, acceleration, bk, q=None, qd=None, w=None):
        """τ_i = S_iᵀ Σ_{j ⪰ i} f_j, the joints' armature force added (M_a x + C_a(q, q̇) w at
        acceleration x, C multiplying w): the backward sweep RNEA and Slotine–Li share (f is
        consumed)."""
        tau = bk.zeros(self.nv)
        for i in reversed(range(self.N)):
            cols, par = self.columns(i), self.parent[i]
            tau[cols] = S[:, cols].T @ f[i] + self.armature[cols] * acceleration[cols]
            if par >= 0:
                f[par] = f[par] + f[i]
        for lin, ang, Ma in self.free_armature(q, bk):
            om, u = qd[ang], w[lin]
            turn = bk.array([om[1] * u[2] - om[2] * u[1], om[2] * u[0] - om[0] * u[2], om[0] * u[1] - om[1] * u[0]])
            tau[lin] = tau[lin] + Ma @ (acceleration[lin] + turn)
        return tau
