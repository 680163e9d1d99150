"""Forward dynamics through the joint-space inertia matrix (Featherstone, RBDA ch. 6; slides on
CRBA and branch-induced sparsity): q̈ = M⁻¹ (τ − c) with

    c = RNEA(q, q̇, 0)                    (bias: C q̇ + g)
    M by the composite-rigid-body algorithm
    M = Lᵀ D L                           (LTDL: L unit lower-triangular, D diagonal)

factored along the tree. With λ(i) the DoF before i toward the root (cols[i, 1]), row k of L
holds entries only at λ(k), λ(λ(k)), ...: factoring from the leaves up fills in nothing that M's
branch-induced sparsity leaves zero, so the cost is O(n d²) rather than O(n³) (RBDA Table 6.3),
and the two triangular solves walk the same chains (RBDA Table 6.4).
"""

from __future__ import annotations

from numba import njit, prange

from .armature import add_armature_mass
from .crba import composite_mass_matrix
from .data import LTDL_, M_, QDD_, ZERO_, kernel_data, unpack
from .forward_dynamics_body import forward_dynamics_local_kernel
from .jit import helper
from .joints import OK, SINGULAR, check_finite, failed
from .kinematics import views
from .rnea import rnea_kernel


# A pivot D_k that keeps less than this share of M_kk, or of M's largest diagonal entry, means M
# is singular to working precision (a joint that moves no mass): q̈ is not defined there.
PIVOT_SHARE = 1e-12
PIVOT_FLOOR = 1e-16


@helper
def ltdl_factor(lam, H, M):
    """H = Lᵀ D L in place, for H whose only nonzeros off the diagonal lie on λ-chains: D on the
    diagonal, L strictly below it (RBDA Table 6.3); M is H before factoring. Returns OK, or
    SINGULAR + k for the first (leafmost) DoF k whose pivot vanishes, before dividing by it."""
    n = H.shape[0]
    largest = 0.0
    for k in range(n):
        largest = max(largest, H[k, k])
    for k in range(n - 1, -1, -1):
        d = H[k, k]
        if not (d > PIVOT_SHARE * M[k, k] and d > PIVOT_FLOOR * largest):
            return SINGULAR + k
        i = lam[k, 1]
        while i >= 0:
            a = H[k, i] / H[k, k]
            j = i
            while j >= 0:
                H[i, j] -= a * H[k, j]
                j = lam[j, 1]
            H[k, i] = a
            i = lam[i, 1]
    return OK


@helper
def ltdl_solve(lam, H, x):
    """x = (Lᵀ D L)⁻¹ x in place (RBDA Table 6.4)."""
    n = H.shape[0]
    for i in range(n - 1, -1, -1):  # Lᵀ y = x
        j = lam[i, 1]
        while j >= 0:
            x[j] -= H[i, j] * x[i]
            j = lam[j, 1]
    for i in range(n):
        x[i] /= H[i, i]
    for i in range(n):  # L x = y
        j = lam[i, 1]
        while j >= 0:
            x[i] -= H[i, j] * x[j]
            j = lam[j, 1]


@njit(cache=True)
def forward_dynamics_kernel(model, data, q, qd, tau, gravity, qdd):
    """q̈ into ``qdd``; M(q) into data.M as a by-product. Returns a status code (engine.joints)."""
    cols = model.cols
    N = model.ints.shape[0]
    n = cols.shape[0]
    bad = check_finite(tau, n, q.shape[0] + n)  # numbered after q and q̇, as the RNEA numbers q̈
    # the bias c = RNEA(q, q̇, 0) into q̈ for now (it checks q and q̇), then τ − c
    status = rnea_kernel(model, data, q, qd, data.vectors[ZERO_], gravity, qdd)
    if failed(status):
        return status
    if bad != OK:
        return bad
    for j in range(n):
        qdd[j] = tau[j] - qdd[j]
    # M by CRBA on the RNEA's placements and inertias, and its copy to factor (the lower
    # triangle along the λ-chains is all LTDL reads)
    parts = views(data, N, n)
    S, IC, F = parts.S, parts.IC, parts.F
    M, H = data.matrices[M_], data.matrices[LTDL_]
    composite_mass_matrix(model, S, IC, F[1], M)
    add_armature_mass(model, data.q, M, parts.T[0])
    for j in range(n):
        H[j, j] = M[j, j]
        i = cols[j, 1]
        while i >= 0:
            H[j, i] = M[j, i]
            i = cols[i, 1]
    singular = ltdl_factor(cols, H, M)
    if singular != OK:
        return singular
    ltdl_solve(cols, H, qdd)
    return status


# ---- as Python and the batches call it (engine.data: a Data's two flat arrays, unpacked at no cost) ----
@njit(cache=True)
def forward_dynamics_entry(ints, floats, q, qd, tau, gravity):
    model, data = unpack(ints, floats)
    return forward_dynamics_kernel(model, data, q, qd, tau, gravity, data.vectors[QDD_])


@njit(cache=True, parallel=True)
def forward_dynamics_batch(model, Q, QD, TAU, gravity, local, nc, qdd, status):
    """Each state as a call with data= computes it: the articulated-body algorithm in body
    coordinates where it applies (``local``: Data.body_frame_joints), else or where it leaves
    the state (RECHECK) through M = LᵀDL, so that a batch equals its single calls to the last bit."""
    K = Q.shape[0]
    for t in prange(nc):
        d = kernel_data(Q.shape[1], model.cols.shape[0], model.ints.shape[0])
        for s in range(t * K // nc, (t + 1) * K // nc):
            done = local and forward_dynamics_local_kernel(model, d, Q[s], QD[s], TAU[s], gravity, qdd[s]) == OK
            status[s] = OK if done else forward_dynamics_kernel(model, d, Q[s], QD[s], TAU[s], gravity, qdd[s])
