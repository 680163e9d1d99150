"""Composite-rigid-body algorithm (Featherstone ch. 6) in the world frame: M only."""

from __future__ import annotations

from numba import njit

from .kinematics import forward_kinematics, views
from .spatial import add_child_composite, dot6, matvec6


@njit(cache=True)
def mass_matrix_kernel(ints, cols, geom, q, ws, M, clear=True):
    N = ints.shape[0]
    n = cols.shape[0]
    R, pos, S, Sd, v, IC, BC, a, f, F, T, G = views(ws, N, n)
    forward_kinematics(ints, cols, geom, q, R, pos, S, IC, T)
    if clear:
        for r in range(n):
            for c in range(n):
                M[r, c] = 0.0
    F2 = F[0]
    for j in range(n - 1, -1, -1):
        b = cols[j, 0]
        matvec6(IC[b], S[j], F2)  # IC_b S_j, IC_b already holds the whole subtree
        M[j, j] = dot6(S[j], F2)
        i = cols[j, 1]
        while i >= 0:
            mij = dot6(S[i], F2)
            M[i, j] = mij
            M[j, i] = mij
            i = cols[i, 1]
        if cols[j, 1] < 0 or cols[cols[j, 1], 0] != b:
            p = ints[b, 0]
            if p >= 0:
                add_child_composite(IC, p, b)
