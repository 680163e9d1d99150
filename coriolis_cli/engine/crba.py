"""Composite-rigid-body algorithm (Featherstone ch. 6) in the world frame: M only."""

from __future__ import annotations

from numba import njit, prange

from .data import M_, kernel_data, unpack
from .armature import add_armature_mass
from .jit import helper
from .joints import failed
from .kinematics import placement_kernel, views
from .spatial import add_child_composite, dot6, matvec6


@helper
def composite_mass_matrix(model, S, IC, F2, M):
    """M_ij = S_iᵀ IC_j S_j for related DoF, IC accumulated from the leaves (IC is overwritten
    with the composites); F2 is 6-vector scratch. The rigid bodies' M: the callers add the
    armature (engine.armature)."""
    ints, cols = model.ints, model.cols
    for j in range(cols.shape[0] - 1, -1, -1):
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


@helper
def mass_matrix_kernel(model, data, q):
    """M into data.M (related DoF only); returns a status code (engine.joints)."""
    status = placement_kernel(model, data, q)  # placements, S and the bodies' inertias
    if failed(status):
        return status
    N = model.ints.shape[0]
    parts = views(data, N, model.cols.shape[0])
    S, IC, F = parts.S, parts.IC, parts.F
    composite_mass_matrix(model, S, IC, F[0], data.matrices[M_])
    add_armature_mass(model, data.q, data.matrices[M_], parts.T[0])
    return status


# ---- as Python and the batches call it (engine.data: a Data's two flat arrays, unpacked at no cost) ----
@njit(cache=True)
def mass_matrix_entry(ints, floats, q):
    model, data = unpack(ints, floats)
    return mass_matrix_kernel(model, data, q)


@njit(cache=True, parallel=True)
def mass_matrix_batch(model, Q, nc, M, status):
    K = Q.shape[0]
    for t in prange(nc):
        d = kernel_data(Q.shape[1], model.cols.shape[0], model.ints.shape[0])
        for s in range(t * K // nc, (t + 1) * K // nc):
            status[s] = mass_matrix_kernel(model, d, Q[s])
            M[s] = d.matrices[M_]
