"""Algorithm 1 of the core paper (M, Ṁ and C in O(Nd)), world-frame form (docs/algorithms.md,
Algorithm 1; the "line N" comments are that listing's lines): composites are plain sums and the
inner loop is dot products."""

from __future__ import annotations

from .kinematics import NUMERIC, Tree
from .spatial import body_coriolis, skew


def coriolis_matrix(tree: Tree, q, qd, bk=NUMERIC):
    """M, Ṁ and the Christoffel-consistent C at (q, q̇), with the joints' armature on M's diagonal."""
    n = tree.nv
    M, Mdot, C = bk.zeros((n, n)), bk.zeros((n, n)), bk.zeros((n, n))
    _, _, S, inertia = tree.placements(q, bk)
    v, Sdot = tree.velocities(S, qd, bk)  # Algorithm 1, lines 1-4: v_i = v_p(i) + S_i q̇_i, Ṡ_i = v_i × S_i
    IC = list(inertia)  # line 5: IC_i = I_i (the composites, completed from the leaves)
    BC = [body_coriolis(v[i], inertia[i], bk) for i in range(tree.N)]  # line 6: BC_i = B(v_i, I_i)
    for j in reversed(range(tree.N)):  # line 8
        J = tree.columns(j)
        F1 = IC[j] @ Sdot[:, J] + BC[j] @ S[:, J]  # line 9: F1 = IC_j Ṡ_j + BC_j S_j
        F2 = IC[j] @ S[:, J]  # line 10
        F3 = BC[j].T @ S[:, J]  # line 11
        C[J, J] = S[:, J].T @ F1  # line 12
        M[J, J] = S[:, J].T @ F2  # line 13
        Mdot[J, J] = Sdot[:, J].T @ F2 + S[:, J].T @ (F1 + F3)  # line 14
        for i in list(tree.ancestors(j))[1:]:  # lines 15-18, 23: up to the root (17: no transform)
            I = tree.columns(i)
            C[I, J] = S[:, I].T @ F1  # line 19
            C[J, I] = (Sdot[:, I].T @ F2 + S[:, I].T @ F3).T  # line 20
            M[I, J] = S[:, I].T @ F2  # line 21
            M[J, I] = M[I, J].T
            Mdot[I, J] = C[I, J] + C[J, I].T  # line 22: Ṁ_ij = C_ij + C_jiᵀ
            Mdot[J, I] = Mdot[I, J].T
        par = tree.parent[j]
        if par >= 0:  # lines 24-25: plain sums in this frame
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
