"""Algorithm 1 of Echeandia & Wensing: M, Ṁ and C in O(Nd), world-frame form.

Variable names follow the listing: F1, F2, F3, IC (composite inertia), BC (composite body-level
factorization). In the world frame the composites are plain sums and the inner while-loop is dot
products only. Multi-DoF joints (the free joint) are handled column by column: the columns of a
joint form a chain, and every column of a body shares the body's IC and BC, which is exactly eq. (18).
"""

from __future__ import annotations

from numba import njit, prange

from .data import C_, M_, MDOT_, kernel_data, unpack, unpack_at
from .armature import add_armature_coriolis, add_armature_mass
from .jit import helper
from .joints import failed
from .kinematics import forward_pass, views
from .spatial import add_child_composite, body_factorization


@helper
def coriolis_kernel(model, data, q, qd, factorization, out):
    """M, Ṁ, C into out[0], out[1], out[2] (data.M, data.Mdot, data.C, or a caller's fresh
    zeros: the outputs are an argument of their own so that a call without data= needs no
    copy); returns a status code (engine.joints).

    Only entries of related DoF are written: the outputs hold zeros elsewhere (see engine.data)."""
    ints, cols = model.ints, model.cols
    N = ints.shape[0]
    n = cols.shape[0]
    # lines 1-7: forward sweep. v_i, Ṡ_i = v_i × S_i, IC_i = I_i, then BC_i = B(v_i, I_i)
    status = forward_pass(model, data, q, qd, qd, qd, 1)
    if failed(status):
        return status
    M, Mdot, C = out[M_], out[MDOT_], out[C_]
    parts = views(data, N, n)
    S, Sd, v, IC, BC, F, T = parts.S, parts.Sd, parts.v, parts.IC, parts.BC, parts.F, parts.T
    for i in range(N):
        body_factorization(v[i], IC[i], factorization, T, BC[i])
    F1, F2, F3 = F[0], F[1], F[2]
    # lines 8-26: backward sweep. Rows are indexed in place: sub-array views in these loops
    # would cost reference counting on every use.
    for j in range(n - 1, -1, -1):
        b = cols[j, 0]
        for r in range(6):
            s1 = 0.0
            s2 = 0.0
            s3 = 0.0
            for c in range(6):
                s1 += IC[b, r, c] * Sd[j, c] + BC[b, r, c] * S[j, c]  # line 9: F1 = IC_j Ṡ_j + BC_j S_j
                s2 += IC[b, r, c] * S[j, c]  # line 10: F2 = IC_j S_j
                s3 += BC[b, c, r] * S[j, c]  # line 11: F3 = BC_jᵀ S_j
            F1[r] = s1
            F2[r] = s2
            F3[r] = s3
        c_jj = 0.0
        m_jj = 0.0
        md_jj = 0.0
        for r in range(6):
            c_jj += S[j, r] * F1[r]  # line 12
            m_jj += S[j, r] * F2[r]  # line 13
            md_jj += Sd[j, r] * F2[r] + S[j, r] * (F1[r] + F3[r])  # line 14
        C[j, j] = c_jj
        M[j, j] = m_jj
        Mdot[j, j] = md_jj
        i = cols[j, 1]
        while i >= 0:  # lines 16-23, no transforms in the world frame
            u = cols[i, 2]
            cji = 0.0
            if u >= 0:  # S_i = e_u (free joint in the base frame): the products are picks
                cij = F1[u]
                mij = F2[u]
                for r in range(6):
                    cji += Sd[i, r] * F2[r]
                cji += F3[u]
            else:
                cij = 0.0
                mij = 0.0
                for r in range(6):
                    cij += S[i, r] * F1[r]  # line 19
                    cji += Sd[i, r] * F2[r] + S[i, r] * F3[r]  # line 20
                    mij += S[i, r] * F2[r]  # line 21
            C[i, j] = cij
            C[j, i] = cji
            M[i, j] = mij
            M[j, i] = mij
            Mdot[i, j] = cij + cji  # line 22: Ṁ_ij = C_ij + C_jiᵀ
            Mdot[j, i] = cij + cji
            i = cols[i, 1]
        # lines 24-25, once the body's first column is done: plain sums in the world frame
        if cols[j, 1] < 0 or cols[cols[j, 1], 0] != b:
            p = ints[b, 0]
            if p >= 0:
                add_child_composite(IC, p, b)
                add_child_composite(BC, p, b)
    add_armature_mass(model, data.q, M, T[0])
    add_armature_coriolis(model, data.q, qd, Mdot, C, T[0])
    return status


# ---- as Python and the batches call it (engine.data: a Data's two flat arrays, unpacked at no cost) ----
@njit(cache=True)
def coriolis_entry(ints, floats, q, qd, factorization):
    model, data = unpack(ints, floats)
    return coriolis_kernel(model, data, q, qd, factorization, data.matrices)


# The call engine.api makes for ``coriolis_matrix(robot, q, qd, data=data)``: the workspace as one
# address (data.unpack_at), so that the dispatcher's own type check replaces the Python one; the
# kernel compiled for coriolis_entry serves it too (``factorization`` stays a run-time integer).
@njit(cache=True)
def coriolis_at_entry(address, q, qd, factorization):
    model, data = unpack_at(address)
    return coriolis_kernel(model, data, q, qd, factorization, data.matrices)


@njit(cache=True)
def coriolis_into_entry(ints, floats, q, qd, factorization, out):
    """M, Ṁ, C written into ``out`` (3, nv, nv), zeroed by the caller: fresh arrays without a copy."""
    model, data = unpack(ints, floats)
    return coriolis_kernel(model, data, q, qd, factorization, out)


@njit(cache=True, parallel=True)
def coriolis_batch(model, Q, QD, factorization, nc, matrices, status):
    """matrices: (K, 3, nv, nv), M, Ṁ, C of each state; nc chunks, one workspace each."""
    K = Q.shape[0]
    for t in prange(nc):
        d = kernel_data(Q.shape[1], model.cols.shape[0], model.ints.shape[0])
        for s in range(t * K // nc, (t + 1) * K // nc):
            status[s] = coriolis_kernel(model, d, Q[s], QD[s], factorization, matrices[s])
