// Forward dynamics, q̈ = M⁻¹ (τ − C q̇ − g), two ways:
//
// * forward_dynamics_body: the articulated-body algorithm (Featherstone, RBDA Table 7.1) in body
//   coordinates, O(N), for robots of 1-DoF joints under at most a free root:
//     v_i = iX_p v_p + S_i q̇_i,  c_i = v_i × S_i q̇_i,  IA_i = I_i,  pA_i = v_i ×* I_i v_i
//     U_i = IA_i S_i,  D_i = S_iᵀ U_i + armature_i,  u_i = τ_i − S_iᵀ pA_i               (leaves up)
//     IA_p += pX_i* (IA_i − U_i U_iᵀ / D_i) iX_p,  pA_p += pX_i* (pA_i + Ia_i c_i + U_i u_i / D_i)
//     a'_i = iX_p a_p + c_i,  q̈_i = (u_i − U_iᵀ a'_i) / D_i,  a_i = a'_i + S_i q̈_i       (root down)
//   A free root's six equations are solved together: (Pᵀ IA P + armature) ν̇ = τ − Pᵀ (pA + IA a_0).
//   Anything it cannot settle (a note on q, a pivot too small to trust, a free joint's linear
//   armature) returns RECHECK, and the caller takes the general kernel, which says what is wrong.
// * forward_dynamics: M by the CRBA factored as M = LᵀDL along the tree (RBDA Tables 6.3, 6.4):
//   with λ(i) the DoF before i toward the root, row k of L holds entries only at λ(k), λ(λ(k)),
//   ..., so the factorization fills in nothing M's branch-induced sparsity leaves zero: O(n d²).
#pragma once

#include <cmath>

#include "crba.hpp"
#include "rnea.hpp"
#include "slotine_li_body.hpp"

namespace coriolis {

constexpr int64_t RECHECK_STATUS = -1;

// A pivot D_k that keeps less than this share of M_kk, or of M's largest diagonal entry, means M
// is singular to working precision (a joint that moves no mass): q̈ is not defined there.
constexpr double PIVOT_SHARE = 1e-12, PIVOT_FLOOR = 1e-16;
// An ABA pivot D_i below this share of trace(IA_i) is left to the LTDL, whose test decides.
constexpr double PIVOT_TRUST = 1e-9;

namespace detail {

// out += pX_i* Ia iX_p: Ia = [[A, B], [Bᵀ, C]] rotated by L, then moved by r
inline void add_articulated_inertia(const double* Xb, int i, const double* Ia, double* out) {
    const double* X = Xb + 36 * i;
    double W[36];
    for (int r = 0; r < 6; ++r)  // W = Ia blockdiag(L)ᵀ
        for (int c = 0; c < 3; ++c) {
            W[r * 6 + c] = Ia[r * 6 + 0] * X[c * 6 + 0] + Ia[r * 6 + 1] * X[c * 6 + 1] + Ia[r * 6 + 2] * X[c * 6 + 2];
            W[r * 6 + 3 + c] = Ia[r * 6 + 3] * X[c * 6 + 0] + Ia[r * 6 + 4] * X[c * 6 + 1] + Ia[r * 6 + 5] * X[c * 6 + 2];
        }
    const double r0 = X[18], r1 = X[19], r2 = X[20];
    for (int c = 0; c < 6; ++c) {  // column c of blockdiag(L) W, then top += r × bottom
        const double x0 = X[0] * W[0 * 6 + c] + X[1] * W[1 * 6 + c] + X[2] * W[2 * 6 + c];
        const double x1 = X[6] * W[0 * 6 + c] + X[7] * W[1 * 6 + c] + X[8] * W[2 * 6 + c];
        const double x2 = X[12] * W[0 * 6 + c] + X[13] * W[1 * 6 + c] + X[14] * W[2 * 6 + c];
        const double y0 = X[0] * W[3 * 6 + c] + X[1] * W[4 * 6 + c] + X[2] * W[5 * 6 + c];
        const double y1 = X[6] * W[3 * 6 + c] + X[7] * W[4 * 6 + c] + X[8] * W[5 * 6 + c];
        const double y2 = X[12] * W[3 * 6 + c] + X[13] * W[4 * 6 + c] + X[14] * W[5 * 6 + c];
        W[0 * 6 + c] = x0 + r1 * y2 - r2 * y1;
        W[1 * 6 + c] = x1 + r2 * y0 - r0 * y2;
        W[2 * 6 + c] = x2 + r0 * y1 - r1 * y0;
        W[3 * 6 + c] = y0;
        W[4 * 6 + c] = y1;
        W[5 * 6 + c] = y2;
    }
    for (int r = 0; r < 6; ++r) {  // then Tᵀ on the right: each row's left half += r × its right half
        const double z0 = W[r * 6 + 3], z1 = W[r * 6 + 4], z2 = W[r * 6 + 5];
        out[r * 6 + 0] += W[r * 6 + 0] + r1 * z2 - r2 * z1;
        out[r * 6 + 1] += W[r * 6 + 1] + r2 * z0 - r0 * z2;
        out[r * 6 + 2] += W[r * 6 + 2] + r0 * z1 - r1 * z0;
        out[r * 6 + 3] += z0;
        out[r * 6 + 4] += z1;
        out[r * 6 + 5] += z2;
    }
}

// a free root: (Pᵀ IA P + armature) ν̇ = τ − Pᵀ (pA + IA a_0) by Cholesky; false if a pivot is too
// small to trust
inline bool root_solve(const Model& model, int i, int vs, const double* IA, const double* pA, const double* a0,
                       const double* tau, double* qdd) {
    const double* g = model.body_geom(i);
    if (g[G_ARMATURE] != 0.0 || g[G_ARMATURE + 1] != 0.0 || g[G_ARMATURE + 2] != 0.0)
        return false;  // the linear armature's M_a depends on the base orientation
    double trace = 0.0, K[36];
    for (int r = 0; r < 6; ++r) trace += IA[r * 6 + r];
    for (int r = 0; r < 6; ++r) {  // ν = [v; ω] is angular-first index (k + 3) % 6
        const int pr = (r + 3) % 6;
        double s = pA[pr];
        for (int c = 0; c < 6; ++c) {
            K[r * 6 + c] = IA[pr * 6 + (c + 3) % 6];
            s += IA[pr * 6 + c] * a0[c];
        }
        qdd[vs + r] = tau[vs + r] - s;
    }
    for (int k = 3; k < 6; ++k) K[k * 6 + k] += armature_at(model, vs + k);
    for (int k = 0; k < 6; ++k) {  // K = L Lᵀ in place (lower triangle)
        double d = K[k * 6 + k];
        for (int j = 0; j < k; ++j) d -= K[k * 6 + j] * K[k * 6 + j];
        if (!(d > PIVOT_TRUST * trace)) return false;
        d = std::sqrt(d);
        K[k * 6 + k] = d;
        for (int r = k + 1; r < 6; ++r) {
            double s = K[r * 6 + k];
            for (int j = 0; j < k; ++j) s -= K[r * 6 + j] * K[k * 6 + j];
            K[r * 6 + k] = s / d;
        }
    }
    for (int r = 0; r < 6; ++r) {
        double s = qdd[vs + r];
        for (int j = 0; j < r; ++j) s -= K[r * 6 + j] * qdd[vs + j];
        qdd[vs + r] = s / K[r * 6 + r];
    }
    for (int r = 5; r >= 0; --r) {
        double s = qdd[vs + r];
        for (int j = r + 1; j < 6; ++j) s -= K[j * 6 + r] * qdd[vs + j];
        qdd[vs + r] = s / K[r * 6 + r];
    }
    return true;
}

}  // namespace detail

// q̈ into qdd by the articulated-body algorithm; OK, or RECHECK_STATUS for the general kernel
inline int64_t forward_dynamics_body(const Model& model, Data& data, const double* q, const double* qd,
                                     const double* tau, const double* gravity, double* qdd) {
    if (load_state(model, q, data.q.data(), qd, tau, tau, 2) != OK) return RECHECK_STATUS;
    double *IA = data.IC.data(), *Xb = data.Xb.data(), *U = data.U.data(), *v = data.v.data(), *a = data.a.data(),
           *pA = data.f.data(), *c = data.c.data();
    double a0[6];
    root_acceleration(model, data.q.data(), gravity, a0);
    for (int i = 0; i < model.N; ++i) {  // v, c, IA = I and pA = v ×* I v
        const int64_t jt = model.joint(i);
        const int qs = model.q_start(i), vs = model.v_start(i), p = model.parent(i);
        double *vi = v + 6 * i, *ci = c + 6 * i;
        for (int k = 0; k < 6; ++k) ci[k] = 0.0;
        if (jt == FREE) {  // the root's frame is the base's: ν = [v; ω] reordered, and c = 0
            for (int k = 0; k < 3; ++k) {
                vi[k] = qd[vs + 3 + k];
                vi[3 + k] = qd[vs + k];
            }
        } else {
            body_placement(model, jt, data.q[qs], i, Xb);
            if (p >= 0) {
                child_motion(Xb, i, v + 6 * p, vi);
            } else {
                for (int k = 0; k < 6; ++k) vi[k] = 0.0;
            }
            const double* g = model.body_geom(i);
            const int o = jt == REVOLUTE ? 0 : 3;  // S q̇ = [a q̇; 0] or [0; a q̇]
            const double s0 = g[G_AXIS] * qd[vs], s1 = g[G_AXIS + 1] * qd[vs], s2 = g[G_AXIS + 2] * qd[vs];
            vi[o] += s0;
            vi[o + 1] += s1;
            vi[o + 2] += s2;
            const double w0 = vi[0], w1 = vi[1], w2 = vi[2];
            ci[o] = w1 * s2 - w2 * s1;  // c = v × S q̇
            ci[o + 1] = w2 * s0 - w0 * s2;
            ci[o + 2] = w0 * s1 - w1 * s0;
            if (o == 0) {
                const double l0 = vi[3], l1 = vi[4], l2 = vi[5];
                ci[3] = l1 * s2 - l2 * s1;
                ci[4] = l2 * s0 - l0 * s2;
                ci[5] = l0 * s1 - l1 * s0;
            }
        }
        const Parameters par = local_parameters(model, nullptr, i);
        inertia_matrix(par, IA + 36 * i);
        double Iv[6];
        inertia_times(par, vi, Iv);
        force_cross(vi, Iv, pA + 6 * i);  // v ×* (I v)
    }
    for (int i = model.N - 1; i >= 0; --i) {  // articulated inertias and bias forces, leaves up
        const int64_t jt = model.joint(i);
        const int vs = model.v_start(i), p = model.parent(i);
        if (jt == FREE) continue;  // the root: solved below
        const int o = jt == REVOLUTE ? 0 : 3;
        const double* g = model.body_geom(i);
        const double x0 = g[G_AXIS], x1 = g[G_AXIS + 1], x2 = g[G_AXIS + 2];
        double* Ia = IA + 36 * i;
        double* Ui = U + 6 * vs;
        double trace = 0.0;
        for (int r = 0; r < 6; ++r) {
            Ui[r] = Ia[r * 6 + o] * x0 + Ia[r * 6 + o + 1] * x1 + Ia[r * 6 + o + 2] * x2;
            trace += Ia[r * 6 + r];
        }
        const double D = x0 * Ui[o] + x1 * Ui[o + 1] + x2 * Ui[o + 2] + armature_at(model, vs);
        if (!(D > PIVOT_TRUST * trace)) return RECHECK_STATUS;
        const double* pAi = pA + 6 * i;
        const double u = tau[vs] - (x0 * pAi[o] + x1 * pAi[o + 1] + x2 * pAi[o + 2]);
        data.D[vs] = D;
        data.u[vs] = u;
        if (p < 0) continue;
        for (int r = 0; r < 6; ++r) {  // Ia = IA − U Uᵀ / D, and pa = pA + Ia c + U u / D
            const double ur = Ui[r] / D;
            for (int k = 0; k < 6; ++k) Ia[r * 6 + k] -= ur * Ui[k];
        }
        double pa[6];
        for (int r = 0; r < 6; ++r) {
            double s = pAi[r] + Ui[r] * u / D;
            for (int k = 0; k < 6; ++k) s += Ia[r * 6 + k] * c[6 * i + k];
            pa[r] = s;
        }
        detail::add_articulated_inertia(Xb, i, Ia, IA + 36 * p);
        add_parent_force(Xb, i, pa, pA + 6 * p);  // pA_p += pX_i* pa
    }
    for (int i = 0; i < model.N; ++i) {  // accelerations, root down
        const int64_t jt = model.joint(i);
        const int vs = model.v_start(i), p = model.parent(i);
        double* ai = a + 6 * i;
        if (jt == FREE) {
            if (!detail::root_solve(model, i, vs, IA + 36 * i, pA + 6 * i, a0, tau, qdd)) return RECHECK_STATUS;
            for (int k = 0; k < 3; ++k) {
                ai[k] = a0[k] + qdd[vs + 3 + k];
                ai[3 + k] = a0[3 + k] + qdd[vs + k];
            }
            continue;
        }
        child_motion(Xb, i, p >= 0 ? a + 6 * p : a0, ai);
        double s = data.u[vs];
        for (int k = 0; k < 6; ++k) {
            ai[k] += c[6 * i + k];
            s -= U[6 * vs + k] * ai[k];
        }
        const double x = s / data.D[vs];
        qdd[vs] = x;
        const double* g = model.body_geom(i);
        const int o = jt == REVOLUTE ? 0 : 3;
        ai[o] += g[G_AXIS] * x;
        ai[o + 1] += g[G_AXIS + 1] * x;
        ai[o + 2] += g[G_AXIS + 2] * x;
    }
    return OK;
}

// H = M on the diagonal and along the λ-chains below it: all that ltdl_factor reads
inline void copy_chains(const Model& model, const double* M, double* H) {
    const int n = model.nv;
    for (int j = 0; j < n; ++j) {
        H[j * n + j] = M[j * n + j];
        for (int i = model.col_previous(j); i >= 0; i = model.col_previous(i)) H[j * n + i] = M[j * n + i];
    }
}

// H = Lᵀ D L in place for H whose only nonzeros off the diagonal lie on λ-chains: D on the
// diagonal, L strictly below it (RBDA Table 6.3); M is H before factoring. OK, or SINGULAR + k for
// the first (leafmost) DoF k whose pivot vanishes, before dividing by it.
inline int64_t ltdl_factor(const Model& model, double* H, const double* M) {
    const int n = model.nv;
    double largest = 0.0;
    for (int k = 0; k < n; ++k) largest = H[k * n + k] > largest ? H[k * n + k] : largest;
    for (int k = n - 1; k >= 0; --k) {
        const double d = H[k * n + k];
        if (!(d > PIVOT_SHARE * M[k * n + k] && d > PIVOT_FLOOR * largest)) return SINGULAR + k;
        for (int i = model.col_previous(k); i >= 0; i = model.col_previous(i)) {
            const double a = H[k * n + i] / H[k * n + k];
            for (int j = i; j >= 0; j = model.col_previous(j)) H[i * n + j] -= a * H[k * n + j];
            H[k * n + i] = a;
        }
    }
    return OK;
}

// x = (Lᵀ D L)⁻¹ x in place (RBDA Table 6.4)
inline void ltdl_solve(const Model& model, const double* H, double* x) {
    const int n = model.nv;
    for (int i = n - 1; i >= 0; --i)  // Lᵀ y = x
        for (int j = model.col_previous(i); j >= 0; j = model.col_previous(j)) x[j] -= H[i * n + j] * x[i];
    for (int i = 0; i < n; ++i) x[i] /= H[i * n + i];
    for (int i = 0; i < n; ++i)  // L x = y
        for (int j = model.col_previous(i); j >= 0; j = model.col_previous(j)) x[i] -= H[i * n + j] * x[j];
}

// q̈ into qdd through M = LᵀDL; M(q) into M as a by-product. Returns a status code.
inline int64_t forward_dynamics(const Model& model, Data& data, const double* q, const double* qd, const double* tau,
                                const double* gravity, double* qdd, double* M) {
    const int n = model.nv;
    const int64_t bad = check_finite(tau, n, model.nq + n);  // numbered after q and q̇, as the RNEA numbers q̈
    // the bias RNEA(q, q̇, 0) into q̈ for now (it checks q and q̇), then τ − bias
    const int64_t status = rnea(model, data, q, qd, data.zero.data(), gravity, qdd);
    if (failed(status)) return status;
    if (bad != OK) return bad;
    for (int j = 0; j < n; ++j) qdd[j] = tau[j] - qdd[j];
    // M by the CRBA on the RNEA's placements and inertias, and its copy to factor (the lower
    // triangle along the λ-chains is all the LTDL reads)
    composite_mass_matrix(model, data.S.data(), data.IC.data(), M);
    add_armature_mass(model, data.q.data(), M);
    double* H = data.H.data();
    copy_chains(model, M, H);
    const int64_t singular = ltdl_factor(model, H, M);
    if (singular != OK) return singular;
    ltdl_solve(model, H, qdd);
    return status;
}

// q̈ by the articulated-body algorithm where it applies and settles the state, else through
// M = LᵀDL (which then also leaves M(q) in M, and says what is wrong with the state); OVERFLOW
// where the inputs were finite and q̈ is not, which nothing after it may take for a state's entry
inline int64_t compute_forward_dynamics(const Model& model, Data& data, const double* q, const double* qd,
                                        const double* tau, const double* gravity, double* qdd, double* M) {
    const int64_t status = model.body_frame && forward_dynamics_body(model, data, q, qd, tau, gravity, qdd) == OK
                               ? OK
                               : forward_dynamics(model, data, q, qd, tau, gravity, qdd, M);
    if (failed(status)) return status;
    for (int i = 0; i < model.nv; ++i)
        if (!std::isfinite(qdd[i])) return OVERFLOW;
    return status;
}

}  // namespace coriolis
