"""Loop-closure constraints φ(q), their Jacobian K = ∂φ/∂q and its rate K̇ (engine.loops).

Closure c joins a frame fixed in body P (rotation RP, origin oP in P's frame) to one fixed in
body C. Rows per closure: the frames' origins coincide (3 rows: p_P - p_C), for a revolute
closure the axis a (in the frame) stays aligned: n_k · a_C = 0 for the two normals n_k = R_P n_k⁰
(2 rows), and a weld (MuJoCo's <weld>) also keeps the frames from turning about it: n_1 · n_2,C = 0
(1 row). Each orientation row is u_P · w_C, a direction of each frame. With ω_j, v_j the angular
and origin-linear parts of S_j (computation frame):

    ∂(p_P - p_C)/∂q_j = s_Pj (v_j + ω_j × p_P) - s_Cj (v_j + ω_j × p_C),
    ∂(u_P · w_C)/∂q_j = (s_Pj - s_Cj) ω_j · (u_P × w_C),

where s_Xj = 1 when joint j moves body X. Their rates follow from Ṡ_j = v_body(j) × S_j,
ṗ_X = v_X + ω_X × p_X, ṅ_k = ω_P × n_k and ȧ_C = ω_C × a_C (exact, no finite differences).

Packed closures: ``ci`` (C x 3) = body P, body C (N for the world), orientation rows (0
spherical, 2 revolute, 3 weld); ``cg`` (C x 33)
= RP (9), oP, RC (9), oC, axis, n1, n2; ``support`` ((N + 1) x nv) = s_Xj, row N all zero.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .jit import helper
from .joints import failed
from .kinematics import body_velocities, placement_kernel, views

_RP, _OP, _RC, _OC, _AXIS, _N1, _N2 = 0, 9, 12, 21, 24, 27, 30  # model.loops.CLOSURE_GEOM_WIDTH = 33 in all


@helper
def _directions(RP, RC, cg, c, k, u, w):
    """Orientation row k's directions: u in frame P, w in frame C (n_k, a for k < 2; n_1, n_2)."""
    _rotate(RP, cg, c, _N1 if k != 1 else _N2, u)
    _rotate(RC, cg, c, _AXIS if k < 2 else _N2, w)


@helper
def _frame(X, N, b, cg, c, R_off, o_off, R, p):
    """A closure frame's rotation R and origin p in the computation frame."""
    for r in range(3):
        if b >= N:  # welded to the world: stored in the computation frame
            p[r] = cg[c, o_off + r]
            for k in range(3):
                R[r, k] = cg[c, R_off + 3 * r + k]
        else:
            p[r] = X[b, 3, r]
            for k in range(3):
                p[r] += X[b, r, k] * cg[c, o_off + k]
                R[r, k] = 0.0
                for m in range(3):
                    R[r, k] += X[b, r, m] * cg[c, R_off + 3 * m + k]


@helper
def _rotate(R, cg, c, off, out):
    for r in range(3):
        out[r] = R[r, 0] * cg[c, off] + R[r, 1] * cg[c, off + 1] + R[r, 2] * cg[c, off + 2]


@helper
def _cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(cache=True)
def constraint_kernel(model, data, q, ci, cg, support, r, K):
    """φ(q) into r and K = ∂φ/∂q into K; returns the configuration's status code."""
    N = model.ints.shape[0]
    n = model.cols.shape[0]
    status = placement_kernel(model, data, q)
    if failed(status):
        return status
    parts = views(data, N, n)
    X, S = parts.X, parts.S
    RP, RC = np.empty((3, 3)), np.empty((3, 3))
    pP, pC, aC, nk, t = np.empty(3), np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    row = 0
    for c in range(ci.shape[0]):
        bP, bC = ci[c, 0], ci[c, 1]
        _frame(X, N, bP, cg, c, _RP, _OP, RP, pP)
        _frame(X, N, bC, cg, c, _RC, _OC, RC, pC)
        for k in range(3):
            r[row + k] = pP[k] - pC[k]
        for j in range(n):
            sP, sC = support[bP, j], support[bC, j]
            w0, w1, w2 = S[j, 0], S[j, 1], S[j, 2]
            K[row, j] = (sP - sC) * S[j, 3] + sP * (w1 * pP[2] - w2 * pP[1]) - sC * (w1 * pC[2] - w2 * pC[1])
            K[row + 1, j] = (sP - sC) * S[j, 4] + sP * (w2 * pP[0] - w0 * pP[2]) - sC * (w2 * pC[0] - w0 * pC[2])
            K[row + 2, j] = (sP - sC) * S[j, 5] + sP * (w0 * pP[1] - w1 * pP[0]) - sC * (w0 * pC[1] - w1 * pC[0])
        for k in range(ci[c, 2]):
            _directions(RP, RC, cg, c, k, nk, aC)
            r[row + 3 + k] = nk[0] * aC[0] + nk[1] * aC[1] + nk[2] * aC[2]
            _cross(nk, aC, t)
            for j in range(n):
                K[row + 3 + k, j] = (support[bP, j] - support[bC, j]) * (S[j, 0] * t[0] + S[j, 1] * t[1] + S[j, 2] * t[2])
        row += 3 + ci[c, 2]
    return status


@njit(cache=True)
def constraint_rate_kernel(model, data, q, u, ci, cg, support, Kdot):
    """K̇ along the joint velocity u into Kdot; returns the configuration's status code."""
    N = model.ints.shape[0]
    n = model.cols.shape[0]
    status = placement_kernel(model, data, q)
    if failed(status):
        return status
    parts = views(data, N, n)
    X, S, Sd, v = parts.X, parts.S, parts.Sd, parts.v
    body_velocities(model, S, u, v, Sd)  # v_b, and Ṡ_j = v_body(j) × S_j
    RP, RC = np.empty((3, 3)), np.empty((3, 3))
    pP, pC, dP, dC = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    aC, aCd, nk, nkd, t, td, wP, wC = (np.empty(3), np.empty(3), np.empty(3), np.empty(3), np.empty(3), np.empty(3),
                                      np.zeros(3), np.zeros(3))
    row = 0
    for c in range(ci.shape[0]):
        bP, bC = ci[c, 0], ci[c, 1]
        _frame(X, N, bP, cg, c, _RP, _OP, RP, pP)
        _frame(X, N, bC, cg, c, _RC, _OC, RC, pC)
        for k in range(3):  # the bodies' angular velocities, and ṗ = v_O + ω × p
            wP[k] = v[bP, k] if bP < N else 0.0
            wC[k] = v[bC, k] if bC < N else 0.0
        _cross(wP, pP, dP)
        _cross(wC, pC, dC)
        for k in range(3):
            dP[k] += v[bP, 3 + k] if bP < N else 0.0
            dC[k] += v[bC, 3 + k] if bC < N else 0.0
        for j in range(n):
            sP, sC = support[bP, j], support[bC, j]
            w0, w1, w2 = S[j, 0], S[j, 1], S[j, 2]
            e0, e1, e2 = Sd[j, 0], Sd[j, 1], Sd[j, 2]
            Kdot[row, j] = ((sP - sC) * Sd[j, 3] + sP * (e1 * pP[2] - e2 * pP[1] + w1 * dP[2] - w2 * dP[1])
                            - sC * (e1 * pC[2] - e2 * pC[1] + w1 * dC[2] - w2 * dC[1]))
            Kdot[row + 1, j] = ((sP - sC) * Sd[j, 4] + sP * (e2 * pP[0] - e0 * pP[2] + w2 * dP[0] - w0 * dP[2])
                                - sC * (e2 * pC[0] - e0 * pC[2] + w2 * dC[0] - w0 * dC[2]))
            Kdot[row + 2, j] = ((sP - sC) * Sd[j, 5] + sP * (e0 * pP[1] - e1 * pP[0] + w0 * dP[1] - w1 * dP[0])
                                - sC * (e0 * pC[1] - e1 * pC[0] + w0 * dC[1] - w1 * dC[0]))
        for k in range(ci[c, 2]):
            _directions(RP, RC, cg, c, k, nk, aC)
            _cross(wC, aC, aCd)
            _cross(wP, nk, nkd)
            _cross(nk, aC, t)  # d/dt (n × a_C) = ṅ × a_C + n × ȧ_C
            _cross(nkd, aC, td)
            _cross(nk, aCd, dP)
            for m in range(3):
                td[m] += dP[m]
            for j in range(n):
                Kdot[row + 3 + k, j] = (support[bP, j] - support[bC, j]) * (
                    S[j, 0] * td[0] + S[j, 1] * td[1] + S[j, 2] * td[2]
                    + Sd[j, 0] * t[0] + Sd[j, 1] * t[1] + Sd[j, 2] * t[2])
        row += 3 + ci[c, 2]
    return status


# ---- the loop solve: Newton's method and continuation, compiled ---------------------------------
@helper
def _norm(x):
    s = 0.0
    for k in range(x.shape[0]):
        s += x[k] * x[k]
    return s**0.5


@helper
def _dependent_solve(K, dep_v, rhs):
    """argmin ‖K_d x − rhs‖ through the normal equations K_dᵀK_d x = K_dᵀ rhs, which a planar
    loop's redundant rows leave well posed as long as K_d has full column rank; Gaussian
    elimination with partial pivoting (a few unknowns: LAPACK's set-up would cost more than the
    solve). NaN where K_d loses rank, which the callers treat as a failed step."""
    nd, m = dep_v.shape[0], K.shape[0]
    A = np.empty((nd, nd + 1))
    for i in range(nd):
        for j in range(nd):
            acc = 0.0
            for k in range(m):
                acc += K[k, dep_v[i]] * K[k, dep_v[j]]
            A[i, j] = acc
        acc = 0.0
        for k in range(m):
            acc += K[k, dep_v[i]] * rhs[k]
        A[i, nd] = acc
    scale = 0.0
    for i in range(nd):
        scale = max(scale, abs(A[i, i]))
    x = np.empty(nd)
    for c in range(nd):
        p = c
        for i in range(c + 1, nd):
            if abs(A[i, c]) > abs(A[p, c]):
                p = i
        if not abs(A[p, c]) > 1e-24 * scale:
            x[:] = np.nan
            return x
        for j in range(nd + 1):
            A[c, j], A[p, j] = A[p, j], A[c, j]
        for i in range(c + 1, nd):
            f = A[i, c] / A[c, c]
            for j in range(c, nd + 1):
                A[i, j] -= f * A[c, j]
    for i in range(nd - 1, -1, -1):
        acc = A[i, nd]
        for j in range(i + 1, nd):
            acc -= A[i, j] * x[j]
        x[i] = acc / A[i, i]
    return x


@njit(cache=True)
def newton_kernel(model, data, ci, cg, support, q, dep_q, dep_v, r, K, goal, max_steps):
    """Newton's method on the dependent joints (q[dep_q]) of φ(q) = 0, in place, until ‖φ‖ ≤ goal
    or the steps stall at round-off; every step halved until it does not raise ‖φ‖. r and K end
    as φ and ∂φ/∂q at the final q. Returns the status code of the configuration."""
    status = constraint_kernel(model, data, q, ci, cg, support, r, K)
    if failed(status):
        return status
    trial = np.empty_like(q)
    r2, K2 = np.empty_like(r), np.empty_like(K)
    for _ in range(max_steps):
        base = _norm(r)
        if not base > goal:
            break
        step = _dependent_solve(K, dep_v, -r)
        finite = True
        for k in range(step.shape[0]):
            finite = finite and np.isfinite(step[k])
        if not finite:
            break
        t = 1.0
        while True:
            trial[:] = q
            for k in range(dep_q.shape[0]):
                trial[dep_q[k]] += t * step[k]
            constraint_kernel(model, data, trial, ci, cg, support, r2, K2)
            if _norm(r2) <= base or t < 1e-6:
                break
            t *= 0.5
        q[:] = trial
        r[:] = r2
        K[:, :] = K2
        size = 0.0
        for k in range(dep_q.shape[0]):
            size += q[dep_q[k]] ** 2
        if t * _norm(step) <= 1e-15 * (1.0 + size**0.5):
            break
    return status


@njit(cache=True)
def continuation_kernel(model, data, ci, cg, support, q, dep_q, dep_v, ind_q, ind_v, x0, target, tol, max_step, r, K):
    """Follow the assembly from q (closed, its independent loop joints q[ind_q] = x0) to
    q[ind_q] = target: predictor q_d += −K_d⁺ K_i Δx, Newton corrector, steps doubled after a
    success and halved where the corrector fails or jumps further than the step could explain.
    On the way the corrector stops near the branch (1e3 tol), at the end at round-off. q, r, K
    are updated in place. Returns 0 when closed at the target, 1 when not."""
    ni = ind_q.shape[0]
    span = 0.0
    for i in range(ni):
        span = max(span, abs(target[i] - x0[i]))
    largest = min(1.0, max_step / span) if span > 0.0 else 1.0
    s, ds = 0.0, largest
    status = constraint_kernel(model, data, q, ci, cg, support, r, K)
    if failed(status):
        return 1
    trial = np.empty_like(q)
    r2, K2 = np.empty_like(r), np.empty_like(K)
    dx = np.empty(ni)
    while s < 1.0:
        h = min(ds, 1.0 - s)
        # the last step ends exactly at the target: steps of 1/6 add up to 0.9999999999999999, and a
        # step of 1e-16 after them would have to explain the loose corrector's whole remainder
        last = 1.0 - s - h <= 1e-9
        if last:
            h = 1.0 - s
        rhs = np.zeros(r.shape[0])
        for i in range(ni):
            dx[i] = x0[i] + (s + h) * (target[i] - x0[i]) - q[ind_q[i]]
            for k in range(r.shape[0]):
                rhs[k] += K[k, ind_v[i]] * dx[i]
        predicted = _dependent_solve(K, dep_v, rhs)
        trial[:] = q
        for i in range(ni):
            trial[ind_q[i]] = x0[i] + (s + h) * (target[i] - x0[i])
        for k in range(dep_q.shape[0]):
            trial[dep_q[k]] -= predicted[k]
        before = trial[dep_q]  # fancy indexing copies
        goal = tol * 1e-5 if last else tol * 1e3
        newton_kernel(model, data, ci, cg, support, trial, dep_q, dep_v, r2, K2, goal, 60 if last else 12)
        jump = 0.0
        for k in range(dep_q.shape[0]):
            jump += (trial[dep_q[k]] - before[k]) ** 2
        if _norm(r2) <= (tol if last else 1e3 * tol) and jump**0.5 <= 0.5 * (_norm(predicted) + _norm(dx)) + tol:
            q[:] = trial
            r[:] = r2
            K[:, :] = K2
            s = 1.0 if last else s + h
            ds = min(2.0 * h, largest)
        else:
            ds = 0.5 * h
            if ds < 1e-7:
                return 1
    return 0 if _norm(r) <= tol else 1


@njit(cache=True)
def dependent_jacobian_kernel(K, dep_v, ind_v, A, Kd_pinv):
    """A's dependent rows −K_d⁺ K_i into A[dep_v] (A's independent rows are the caller's) and
    K_d⁺ into Kd_pinv, from one SVD of K_d. Returns σ_min/σ_max of K_d and ‖K A‖/(‖K‖‖A‖),
    which say whether the independent coordinates determine the dependent ones and whether the
    loops leave the independent ones free."""
    m, nd, ni = K.shape[0], dep_v.shape[0], ind_v.shape[0]
    Kd = np.empty((m, nd))
    for i in range(m):
        for j in range(nd):
            Kd[i, j] = K[i, dep_v[j]]
    U, s, Vt = np.linalg.svd(Kd, full_matrices=False)
    if s.shape[0] < nd or not s[-1] > 0.0:
        return 0.0, 0.0
    for a in range(nd):  # K_d⁺ = V Σ⁻¹ Uᵀ
        for b in range(m):
            acc = 0.0
            for k in range(nd):
                acc += Vt[k, a] * U[b, k] / s[k]
            Kd_pinv[a, b] = acc
    for a in range(nd):
        for c in range(ni):
            acc = 0.0
            for b in range(m):
                acc -= Kd_pinv[a, b] * K[b, ind_v[c]]
            A[dep_v[a], c] = acc
    KA, nK, nA = 0.0, 0.0, 0.0
    for i in range(m):
        for c in range(A.shape[1]):
            acc = 0.0
            for j in range(K.shape[1]):
                acc += K[i, j] * A[j, c]
            KA += acc * acc
        for j in range(K.shape[1]):
            nK += K[i, j] ** 2
    for j in range(A.shape[0]):
        for c in range(A.shape[1]):
            nA += A[j, c] ** 2
    return s[-1] / s[0], (KA / (max(nK, 1.0) * max(nA, 1.0))) ** 0.5
