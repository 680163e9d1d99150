"""The composite-rigid-body algorithm (Featherstone, RBDA Table 6.2) in body coordinates, as
Pinocchio's crba runs it, for the robots slotine_li_body.py serves: 1-DoF joints under at most a
free root. Each body's inertia is constant in its own frame, and S_i is [a; 0] (revolute) or
[0; a] (prismatic), so no placement in a computation frame is formed:

    IC_i = I_i + Σ_children pX_c* IC_c cX_p                                      (leaves up)
    F = IC_i S_i,   M_ii = S_iᵀ F,   then up the ancestors j: F = pX_j* F, M_ji = S_jᵀ F

A free root's S is the permutation P between ν = [v; ω] and angular-first vectors: its block is
Pᵀ IC P, and its rows against a descendant's DoF are Pᵀ F. It computes what crba.py computes in
the world frame; the tests hold the two equal.
"""

from __future__ import annotations

from numba import njit, prange

from ..model.joints import FREE, REVOLUTE
from ..model.tree import G_AXIS
from .armature import add_armature_mass
from .data import M_, kernel_data, unpack_at
from .forward_dynamics_body import inertia_matrix
from .jit import helper
from .joints import failed, load_configuration
from .slotine_li import MODEL_THETA
from .slotine_li_body import add_parent_force, body_placement, inertia_times, local_parameters


@helper
def _free_index(k):
    """The angular-first index of ν's k-th entry (ν = [v; ω])."""
    return k + 3 if k < 3 else k - 3


@helper
def _parameters(IC, i):
    """Body i's composite inertia as its ten parameters (m, h, J as in local_parameters), kept in
    the first ten entries of its block."""
    return (IC[i, 0, 0], IC[i, 0, 1], IC[i, 0, 2], IC[i, 0, 3], IC[i, 0, 4], IC[i, 0, 5],
            IC[i, 1, 0], IC[i, 1, 1], IC[i, 1, 2], IC[i, 1, 3])


@helper
def _store(IC, i, p):
    for k in range(6):
        IC[i, 0, k] = p[k]
    for k in range(4):
        IC[i, 1, k] = p[6 + k]


@helper
def _add_to_parent(Xb, i, IC, p):
    """IC_p += pX_i* IC_i iX_p on the ten parameters: rotated by L (h' = L h, J' = L J Lᵀ), then
    taken about the parent's origin r: h_p = h' + m r, J_p = J' + m (r·r 1 − r rᵀ) + 2 (r·h') 1
    − r h'ᵀ − h' rᵀ. The mass block stays m 1 exactly, as Pinocchio keeps it."""
    m, h0, h1, h2, J00, J01, J11, J02, J12, J22 = _parameters(IC, i)
    L00, L01, L02 = Xb[i, 0, 0], Xb[i, 0, 1], Xb[i, 0, 2]
    L10, L11, L12 = Xb[i, 1, 0], Xb[i, 1, 1], Xb[i, 1, 2]
    L20, L21, L22 = Xb[i, 2, 0], Xb[i, 2, 1], Xb[i, 2, 2]
    r0, r1, r2 = Xb[i, 3, 0], Xb[i, 3, 1], Xb[i, 3, 2]
    g0 = L00 * h0 + L01 * h1 + L02 * h2  # h' = L h
    g1 = L10 * h0 + L11 * h1 + L12 * h2
    g2 = L20 * h0 + L21 * h1 + L22 * h2
    # K = J Lᵀ (columns: J times L's rows), then J' = L K
    k00, k10, k20 = J00 * L00 + J01 * L01 + J02 * L02, J01 * L00 + J11 * L01 + J12 * L02, J02 * L00 + J12 * L01 + J22 * L02
    k01, k11, k21 = J00 * L10 + J01 * L11 + J02 * L12, J01 * L10 + J11 * L11 + J12 * L12, J02 * L10 + J12 * L11 + J22 * L12
    k02, k12, k22 = J00 * L20 + J01 * L21 + J02 * L22, J01 * L20 + J11 * L21 + J12 * L22, J02 * L20 + J12 * L21 + J22 * L22
    rr = r0 * r0 + r1 * r1 + r2 * r2
    rg = 2.0 * (r0 * g0 + r1 * g1 + r2 * g2)
    IC[p, 0, 0] += m
    IC[p, 0, 1] += g0 + m * r0
    IC[p, 0, 2] += g1 + m * r1
    IC[p, 0, 3] += g2 + m * r2
    IC[p, 0, 4] += L00 * k00 + L01 * k10 + L02 * k20 + m * (rr - r0 * r0) + rg - 2.0 * r0 * g0  # J00
    IC[p, 0, 5] += L00 * k01 + L01 * k11 + L02 * k21 - m * r0 * r1 - r0 * g1 - g0 * r1  # J01
    IC[p, 1, 0] += L10 * k01 + L11 * k11 + L12 * k21 + m * (rr - r1 * r1) + rg - 2.0 * r1 * g1  # J11
    IC[p, 1, 1] += L00 * k02 + L01 * k12 + L02 * k22 - m * r0 * r2 - r0 * g2 - g0 * r2  # J02
    IC[p, 1, 2] += L10 * k02 + L11 * k12 + L12 * k22 - m * r1 * r2 - r1 * g2 - g1 * r2  # J12
    IC[p, 1, 3] += L20 * k02 + L21 * k12 + L22 * k22 + m * (rr - r2 * r2) + rg - 2.0 * r2 * g2  # J22


@helper
def mass_matrix_local_kernel(model, data, q, M):
    """M into ``M`` (related DoF only); returns a status code (engine.joints)."""
    ints, geom = model.ints, model.geom
    N = ints.shape[0]
    qn = data.q
    status = load_configuration(model, q, qn)
    if failed(status):
        return status
    B = data.blocks
    IC, Xb, F, W = B[0:N], B[2 * N : 3 * N], B[3 * N], B[3 * N + 1]
    for i in range(N):
        jt = ints[i, 1]
        if jt != FREE:
            body_placement(geom, jt, qn[ints[i, 2]], i, Xb)
        _store(IC, i, local_parameters(geom, False, MODEL_THETA, i))
    for i in range(N - 1, -1, -1):  # IC_i holds its whole subtree once its children are done
        jt, vs, p = ints[i, 1], ints[i, 3], ints[i, 0]
        if jt == FREE:  # the root: M's block Pᵀ IC P
            inertia_matrix(_parameters(IC, i), W)
            for r in range(6):
                for c in range(6):
                    M[vs + r, vs + c] = W[_free_index(r), _free_index(c)]
            continue
        x0, x1, x2 = geom[i, G_AXIS], geom[i, G_AXIS + 1], geom[i, G_AXIS + 2]
        if jt == REVOLUTE:  # F = IC_i S_i, in row 0 of the scratch block
            F[0, 0], F[0, 1], F[0, 2], F[0, 3], F[0, 4], F[0, 5] = inertia_times(_parameters(IC, i), x0, x1, x2, 0.0, 0.0, 0.0)
            o = 0
        else:
            F[0, 0], F[0, 1], F[0, 2], F[0, 3], F[0, 4], F[0, 5] = inertia_times(_parameters(IC, i), 0.0, 0.0, 0.0, x0, x1, x2)
            o = 3
        M[vs, vs] = x0 * F[0, o] + x1 * F[0, o + 1] + x2 * F[0, o + 2]
        j, k = i, 0
        while ints[j, 0] >= 0:  # F = pX_j* F, into the other scratch row
            for r in range(6):
                F[1 - k, r] = 0.0
            add_parent_force(Xb, j, F, k, F, 1 - k)
            j, k = ints[j, 0], 1 - k
            js = ints[j, 3]
            if ints[j, 1] == FREE:
                for r in range(6):
                    m = F[k, _free_index(r)]
                    M[js + r, vs] = m
                    M[vs, js + r] = m
            else:
                oj = 0 if ints[j, 1] == REVOLUTE else 3
                m = geom[j, G_AXIS] * F[k, oj] + geom[j, G_AXIS + 1] * F[k, oj + 1] + geom[j, G_AXIS + 2] * F[k, oj + 2]
                M[js, vs] = m
                M[vs, js] = m
        if p >= 0:
            _add_to_parent(Xb, i, IC, p)
    add_armature_mass(model, qn, M, W)
    return status


# ---- as Python calls it: the workspace as one address (data.unpack_at), for the control loop's
# call with data= and the checked one alike, so that both give the same bits
@njit(cache=True)
def mass_matrix_local_entry(address, q):
    model, data = unpack_at(address)
    return mass_matrix_local_kernel(model, data, q, data.matrices[M_])


@njit(cache=True, parallel=True)
def mass_matrix_local_batch(model, Q, nc, M, status):
    """Each state as a call with data= computes it, so that a batch equals its single calls to the
    last bit."""
    K = Q.shape[0]
    for t in prange(nc):
        d = kernel_data(Q.shape[1], model.cols.shape[0], model.ints.shape[0])
        for s in range(t * K // nc, (t + 1) * K // nc):
            status[s] = mass_matrix_local_kernel(model, d, Q[s], d.matrices[M_])
            M[s] = d.matrices[M_]
