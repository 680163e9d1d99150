"""Algorithm 2 of Echeandia & Wensing: Christoffel symbols of the first kind in O(Nd²).

Γ_ijk = ½ (∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i), so that C_ij = Σ_k Γ_ijk q̇_k.

World-frame form: composite inertias are plain sums, and B̃, D need no transforms down the tree.
For a free joint (generalized speeds ν) Γ[:, :, k] = C(q, e_k): the entries whose last two indices
are two columns of the same multi-DoF joint are not symmetric; they are Γ_abc = S_aᵀ B(S_b, IC) S_c
with IC the composite of the deeper of a's body and the joint's body, and are set after the sweep.
"""

from __future__ import annotations

from numba import njit, prange

from .armature import add_armature_christoffel
from .data import KernelData, kernel_data, unpack
from .jit import helper
from .joints import failed, load_configuration
from .kinematics import forward_kinematics, views
from .spatial import CHRISTOFFEL, add_child_composite, bar_crf_minus, body_factorization, matvec6


@helper
def _composite_inertias(ints, IC):
    for i in range(ints.shape[0] - 1, -1, -1):
        p = ints[i, 0]
        if p >= 0:
            add_child_composite(IC, p, i)


@helper
def _is_ancestor(ints, a, b):
    """a ⪯ b: body a lies on the path from b to the root."""
    while b >= 0:
        if b == a:
            return True
        b = ints[b, 0]
    return False


@helper
def christoffel_kernel(model, data, q):
    """Γ into data.Gamma; returns a status code (engine.joints). Only entries of mutually related
    DoF are written: clearing nv³ entries would cost O(N³), more than the algorithm on branched
    trees, so the workspace holds zeros elsewhere (see engine.data)."""
    ints, cols = model.ints, model.cols
    N = ints.shape[0]
    n = cols.shape[0]
    qn = data.q
    status = load_configuration(model, q, qn)
    if failed(status):
        return status
    Gamma = data.Gamma
    parts = views(data, N, n)
    X, S, IC, F, T, G = parts.X, parts.S, parts.IC, parts.F, parts.T, parts.G
    forward_kinematics(model, qn, X, S, IC, T)
    _composite_inertias(ints, IC)  # lines 1-3 and 22: IC_k = Σ_{l ⪰ k} I_l
    Bt, D = T[2], T[3]
    F1, F2, F3, h = F[0], F[1], F[2], F[3]
    for k in range(n - 1, -1, -1):
        K = cols[k, 0]
        # line 5: B̃ = B(S_k, IC_k). The code goes as a run-time integer (int()): numba compiles a callee
        # again for each constant argument, and the Coriolis kernel passes a variable
        body_factorization(S[k], IC[K], int(CHRISTOFFEL), T, Bt)
        matvec6(IC[K], S[k], h)
        bar_crf_minus(h, Bt, D)  # line 6: D = (IC_k S_k) ×̄* − B̃
        j = k
        while j >= 0:  # lines 8-21; rows indexed in place (no views in the loops)
            uj = cols[j, 2]
            for r in range(6):
                if uj >= 0:  # S_j = e_u: columns and rows are picks
                    F1[r] = Bt[r, uj]
                    F2[r] = Bt[uj, r]
                    F3[r] = D[r, uj]
                    continue
                s1 = 0.0
                s2 = 0.0
                s3 = 0.0
                for c in range(6):
                    s1 += Bt[r, c] * S[j, c]  # line 9: F1 = B̃ S_j
                    s2 += Bt[c, r] * S[j, c]  # F2 = B̃ᵀ S_j
                    s3 += D[r, c] * S[j, c]  # F3 = D S_j
                F1[r] = s1
                F2[r] = s2
                F3[r] = s3
            i = j
            while i >= 0:
                ui = cols[i, 2]
                if ui >= 0:
                    g1 = F1[ui]
                    g2 = F2[ui]
                    g3 = F3[ui]
                else:
                    g1 = 0.0
                    g2 = 0.0
                    g3 = 0.0
                    for r in range(6):
                        g1 += S[i, r] * F1[r]  # line 12
                        g2 += S[i, r] * F2[r]  # line 13
                        g3 += S[i, r] * F3[r]  # line 14
                Gamma[i, j, k] = g1
                Gamma[i, k, j] = g1
                Gamma[j, i, k] = g2
                Gamma[j, k, i] = g2
                Gamma[k, i, j] = g3
                Gamma[k, j, i] = g3
                i = cols[i, 1]
            j = cols[j, 1]
    # generalized speeds of multi-DoF joints: Γ_abc = S_aᵀ B(S_b, IC) S_c for b, c in one joint
    Bb = T[2]
    U = G[0]  # U[c - c0] = B(S_b, IC) S_c
    c0 = 0
    while c0 < n:
        J = cols[c0, 0]
        c1 = c0
        while c1 < n and cols[c1, 0] == J:
            c1 += 1
        if c1 - c0 > 1:
            for A in range(N):
                if _is_ancestor(ints, J, A):
                    deep = A
                elif _is_ancestor(ints, A, J):
                    deep = J
                else:
                    continue
                for b in range(c0, c1):
                    body_factorization(S[b], IC[deep], int(CHRISTOFFEL), T[0:2], Bb)  # int(): see line 5
                    for c in range(c0, c1):
                        uc = cols[c, 2]
                        for r in range(6):
                            if uc >= 0:  # S_c = e_u
                                U[c - c0, r] = Bb[r, uc]
                                continue
                            br = 0.0
                            for t in range(6):
                                br += Bb[r, t] * S[c, t]
                            U[c - c0, r] = br
                    for x in range(n):
                        if cols[x, 0] != A:
                            continue
                        for c in range(c0, c1):
                            g = 0.0
                            for r in range(6):
                                g += S[x, r] * U[c - c0, r]
                            Gamma[x, b, c] = g
        c0 = c1
    add_armature_christoffel(model, qn, Gamma, T[0])
    return status


# ---- as Python and the batches call it (engine.data: a Data's two flat arrays, unpacked at no cost) ----
@njit(cache=True)
def christoffel_entry(ints, floats, q, Gamma):
    model, d = unpack(ints, floats)
    return christoffel_kernel(model, KernelData(d.blocks, d.rows, d.q, d.matrices, Gamma, d.vectors), q)


@njit(cache=True, parallel=True)
def christoffel_batch(model, Q, nc, Gamma, status):
    K = Q.shape[0]
    for t in prange(nc):
        d = kernel_data(Q.shape[1], model.cols.shape[0], model.ints.shape[0])
        for s in range(t * K // nc, (t + 1) * K // nc):
            status[s] = christoffel_kernel(model, KernelData(d.blocks, d.rows, d.q, d.matrices, Gamma[s], d.vectors), Q[s])
