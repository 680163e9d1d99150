"""Algorithm 1 of the core paper (M, Ṁ and C in O(Nd)), world-frame form (ALGORITHMS.md):
composites are plain sums and the inner loop is dot products."""

from __future__ import annotations

from .kinematics import NUMERIC, Tree
from .spatial import body_coriolis, skew


def coriolis_matrix(tree: Tree, q, qd, bk=NUMERIC):
    """M, Ṁ and the Christoffel-consistent C at (q, q̇), with the joints' armature on M's diagonal."""
    n = tree.nv
    M, Mdot, C = bk.zeros((n, n)), bk.zeros((n, n)), bk.zeros((n, n))
    _, _, S, inertia = tree.placements(q, bk)
    v, Sdot = tree.velocities(S, qd, bk)
    IC = list(inertia)  # composite inertias, filled from the leaves
    BC = [body_coriolis(v[i], inertia[i], bk) for i in range(tree.N)]  # lines 5-7: IC_i = I_i, BC_i = B(v_i, I_i)
    for j in reversed(range(tree.N)):  # line 9
        J = tree.columns(j)
        F1 = IC[j] @ Sdot[:, J] + BC[j] @ S[:, J]  # line 10
        F2 = IC[j] @ S[:, J]
        F3 = BC[j].T @ S[:, J]
        C[J, J] = S[:, J].T @ F1  # line 11
        M[J, J] = S[:, J].T @ F2
        Mdot[J, J] = Sdot[:, J].T @ F2 + S[:, J].T @ (F1 + F3)
        for i in list(tree.ancestors(j))[1:]:  # lines 13-17: up the path to the root
            I = tree.columns(i)
            C[I, J] = S[:, I].T @ F1
            C[J, I] = (Sdot[:, I].T @ F2 + S[:, I].T @ F3).T
            M[I, J] = S[:, I].T @ F2
            M[J, I] = M[I, J].T
            Mdot[I, J] = C[I, J] + C[J, I].T
            Mdot[J, I] = Mdot[I, J].T
        par = tree.parent[j]
        if par >= 0:  # line 18
            IC[par] = IC[par] + IC[j]
            BC[par] = BC[par] + BC[j]
    for k in range(n):
        M[k, k] = M[k, k] + tree.armature[k]
    for lin, ang, Ma in tree.free_armature(q, bk):  # engine/armature.py: C_a = M_a [ω]×
        Ca = Ma @ skew(qd[ang], bk)
        M[lin, lin] = M[lin, lin] + Ma
        C[lin, lin] = C[lin, lin] + Ca
        Mdot[lin, lin] = Mdot[lin, lin] + Ca + Ca.T
    return M, Mdot, C
