"""Algorithm 2 of the core paper: Γ_ijk in O(Nd²), world-frame form (docs/algorithms.md,
Algorithm 2; the "line N" comments are that listing's lines)."""

from __future__ import annotations

from .coriolis import coriolis_matrix
from .kinematics import NUMERIC, Tree
from .spatial import body_coriolis, cross_bar_star


def christoffel(tree: Tree, q, bk=NUMERIC):
    """Γ with C_ij = Σ_k Γ_ijk q̇_k. Trees of 1-DoF joints take Algorithm 2; with a multi-DoF
    joint (generalized speeds) Γ[:, :, k] = C(q, e_k) is the definition (Wensing–Slotine eq. 9;
    docs/algorithms.md, Algorithm 2, multi-DoF joints)."""
    n = tree.nv
    if any(d != 1 for d in tree.dof):
        G = bk.zeros((n, n, n))
        for k in range(n):
            e = bk.zeros(n)
            e[k] = 1.0
            G[:, :, k] = coriolis_matrix(tree, q, e, bk)[2]
        return G
    G = bk.zeros((n, n, n))
    _, _, S, inertia = tree.placements(q, bk)
    IC = list(inertia)
    for k in reversed(range(tree.N)):  # Algorithm 2, lines 1-3 and 22, done first: IC_k = Σ_{l ⪰ k} I_l
        if tree.parent[k] >= 0:
            IC[tree.parent[k]] = IC[tree.parent[k]] + IC[k]
    for k in range(tree.N):
        Sk = S[:, k]
        Bt = body_coriolis(Sk, IC[k], bk)  # line 5: B̃ = B(S_k, IC_k)
        D = cross_bar_star(IC[k] @ Sk, bk) - Bt  # line 6: D = (IC_k S_k) ×̄* − B̃
        for j in tree.ancestors(k):  # lines 7-8 and 20 (lines 18-19: no transform)
            F1, F2, F3 = Bt @ S[:, j], Bt.T @ S[:, j], D @ S[:, j]  # line 9
            for i in tree.ancestors(j):  # lines 10-11 and 16 (line 15: no transform)
                G[i, j, k] = G[i, k, j] = S[:, i] @ F1  # line 12
                G[j, i, k] = G[j, k, i] = S[:, i] @ F2  # line 13
                G[k, i, j] = G[k, j, i] = S[:, i] @ F3  # line 14
    return G
