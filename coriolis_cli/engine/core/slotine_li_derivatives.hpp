// First-order derivatives of the Slotine–Li torque τ = M(q) q̈_r + C(q, q̇) q̇_r + g(q), with the
// Christoffel-consistent C (or Featherstone's), by one forward and one backward pass in O(N d):
// ∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̇_r = C and ∂τ/∂q̈_r = M. With q̈_r = 0 and no gravity they are the
// derivatives of C(q, q̇) v (v = q̇_r), which no peer offers.
//
// The recursion is slotine_li.hpp's (Wensing–Slotine Alg. 3): v_i = v_λ + S_i q̇_i,
// w_i = w_λ + S_i q̇_r,i, a_i = a_λ + Ṡ_i q̇_r,i + S_i q̈_r,i with Ṡ_i = v_i × S_i, a_0 = −g, and
// f_i = I_i a_i + B(v_i) w_i. The passes follow Carpentier & Mansard (RSS 2018) as
// rnea_derivatives.hpp does, derived here for two velocities. Moving q_c carries the subtree of
// c's body rigidly along S_c (the transport, seen only by the columns above the joint) and
// changes it intrinsically by
//
//   ∂v/∂q_c = v_λ × S_c,  ∂w/∂q_c = w_λ × S_c,  ∂a_i/∂q_c = a_λ × S_c + ∂v/∂q_c × (w_i − w_λ),
//
// and, with B linear in its velocity, B(u) w + I (u × w) = G(w) u, where G(w) = B(w) for the
// Christoffel factorization (B = ½ (v×* I − I v× + (I v)×̄*), core paper eq. 10) and
// G(w) = (I w)×̄* − I w× for Featherstone's (B = v×* I), the body-dependent part gathers into
// composites of the subtree (IC: I, BV: B(v_i), BW: G(w_i)):
//
//   F^q_c = BW ∂v/∂q_c + BV ∂w/∂q_c + IC (a_λ × S_c + w_λ × ∂v/∂q_c)      (then += S_c ×* f)
//   F^q̇_c = BW S_c + IC (w_λ × S_c),   F^r_c = BV S_c + IC Ṡ_c,   F^a_c = IC S_c.
//
// A column d below c reads them through Y^w_d = BWᵀ S_d, Y^v_d = BVᵀ S_d and F^a_d:
//   ∂τ_d/∂q_c = Y^w_d·∂v/∂q_c + Y^v_d·∂w/∂q_c + F^a_d·(a_λ × S_c + w_λ × ∂v/∂q_c),
//   ∂τ_d/∂q̇_c = Y^w_d·S_c + F^a_d·(w_λ × S_c),   ∂τ_d/∂q̇_r,c = Y^v_d·S_c + F^a_d·Ṡ_c.
// At q̇_r = q̇, ∂τ/∂q̇ + ∂τ/∂q̇_r is the inverse dynamics' ∂τ/∂q̇ (tests/test_derivatives.py).
#pragma once

#include <algorithm>

#include "armature.hpp"
#include "rnea_derivatives.hpp"
#include "slotine_li.hpp"

namespace coriolis {

// out = G(w) of the factorization for body inertia I (see above)
inline void velocity_factor(const double* w, const double* I, int factorization, double* out) {
    body_factorization(w, I, CHRISTOFFEL, out);
    if (factorization == CHRISTOFFEL) return;
    double F[36];  // (I w)×̄* − I w× = 2 B_C(w) − w×* I
    body_factorization(w, I, FEATHERSTONE, F);
    for (int k = 0; k < 36; ++k) out[k] = 2.0 * out[k] - F[k];
}

// dq, dqd (∂τ/∂q, ∂τ/∂q̇), C (∂τ/∂q̇_r) and M (∂τ/∂q̈_r), nv x nv row-major; C and M may be null
inline int64_t slotine_li_derivatives(const Model& model, Data& data, const double* q, const double* qd,
                                      const double* qd_r, const double* qdd_r, const double* gravity,
                                      int factorization, double* dq, double* dqd, double* C, double* M) {
    const int64_t status = reference_motion(model, data, q, qd, qd_r, qdd_r, gravity, nullptr);
    if (failed(status)) return status;
    const int n = model.nv, N = model.N;
    for (double* out : {dq, dqd, C, M})  // entries of DoF in different branches are zero, never written below
        if (out) std::fill(out, out + int64_t(n) * n, 0.0);
    const double *S = data.S.data(), *Sdot = data.Sdot.data(), *v = data.v.data(), *w = data.w.data();
    const double* a = data.a.data();
    double a0[6];
    root_acceleration(model, data.q.data(), gravity, a0);
    double *dV = data.dVdq.data(), *dW = data.dWdq.data(), *dA = data.dAdq.data();
    for (int c = 0; c < n; ++c) {  // the columns' intrinsic changes
        const int p = model.parent(model.col_body(c));
        const double* Sc = S + 6 * c;
        crm_vec(p >= 0 ? a + 6 * p : a0, Sc, dA + 6 * c);
        if (p < 0) {
            for (int r = 0; r < 6; ++r) dV[6 * c + r] = dW[6 * c + r] = 0.0;
            continue;
        }
        double t[6];
        crm_vec(v + 6 * p, Sc, dV + 6 * c);
        crm_vec(w + 6 * p, Sc, dW + 6 * c);
        crm_vec(w + 6 * p, dV + 6 * c, t);
        for (int r = 0; r < 6; ++r) dA[6 * c + r] += t[r];
    }
    // per body: f_i, BV_i = B(v_i) (in BC), BW_i = G(w_i) (in BW); IC holds I_i. All become composites.
    double* f = data.f.data();
    for (int i = 0; i < N; ++i) {
        const double* Ii = data.IC.data() + 36 * i;
        double* BVi = data.BC.data() + 36 * i;
        double Bw[6];
        body_factorization(v + 6 * i, Ii, factorization, BVi);
        velocity_factor(w + 6 * i, Ii, factorization, data.BW.data() + 36 * i);
        matvec6(Ii, a + 6 * i, f + 6 * i);
        matvec6(BVi, w + 6 * i, Bw);
        for (int r = 0; r < 6; ++r) f[6 * i + r] += Bw[r];
    }
    double *Fa = data.dFda.data(), *Fq = data.dFdq.data(), *Fv = data.dFdv.data(), *Fr = data.dFdy.data();
    double *Yw = data.dYtJ.data(), *Yv = data.dYv.data();
    for (int c = n - 1; c >= 0; --c) {
        const int b = model.col_body(c), end = subtree_end_column(model, b);
        const double *I = data.IC.data() + 36 * b, *BV = data.BC.data() + 36 * b, *BW = data.BW.data() + 36 * b;
        const double *Sc = S + 6 * c, *dv = dV + 6 * c, *dw = dW + 6 * c, *da = dA + 6 * c;
        double t[6];
        matvec6(I, Sc, Fa + 6 * c);
        matvec6(BW, dv, Fq + 6 * c);  // F^q
        matvec6(BV, dw, t);
        for (int r = 0; r < 6; ++r) Fq[6 * c + r] += t[r];
        matvec6(I, da, t);
        for (int r = 0; r < 6; ++r) Fq[6 * c + r] += t[r];
        matvec6(BW, Sc, Fv + 6 * c);  // F^q̇
        matvec6(I, dw, t);
        for (int r = 0; r < 6; ++r) Fv[6 * c + r] += t[r];
        matvec6(BV, Sc, Fr + 6 * c);  // F^r
        matvec6(I, Sdot + 6 * c, t);
        for (int r = 0; r < 6; ++r) Fr[6 * c + r] += t[r];
        for (int r = 0; r < 6; ++r) {  // Y^w = BWᵀ S_c, Y^v = BVᵀ S_c
            double sw = 0.0, sv = 0.0;
            for (int k = 0; k < 6; ++k) {
                sw += BW[6 * k + r] * Sc[k];
                sv += BV[6 * k + r] * Sc[k];
            }
            Yw[6 * c + r] = sw;
            Yv[6 * c + r] = sv;
        }
        for (int d = c; d < end; ++d) {  // row c
            dq[c * n + d] = dot6(Sc, Fq + 6 * d);
            dqd[c * n + d] = dot6(Sc, Fv + 6 * d);
            if (C) C[c * n + d] = dot6(Sc, Fr + 6 * d);
            if (M) M[c * n + d] = M[d * n + c] = dot6(Sc, Fa + 6 * d);
        }
        for (int d = c + 1; d < end; ++d) {  // column c below it
            const double *Ywd = Yw + 6 * d, *Yvd = Yv + 6 * d, *Fad = Fa + 6 * d;
            dq[d * n + c] = dot6(Ywd, dv) + dot6(Yvd, dw) + dot6(Fad, da);
            dqd[d * n + c] = dot6(Ywd, Sc) + dot6(Fad, dw);
            if (C) C[d * n + c] = dot6(Yvd, Sc) + dot6(Fad, Sdot + 6 * c);
        }
        if (model.is_first_column(c)) {  // transport, then the composites into the parent's
            transport_force(model, S, c, b, f, Fq);
            const int p = model.parent(b);
            if (p >= 0) {
                add_composite(data.IC.data() + 36 * p, I);
                add_composite(data.BC.data() + 36 * p, BV);
                add_composite(data.BW.data() + 36 * p, BW);
            }
        }
    }
    if (M) add_armature_mass(model, data.q.data(), M);
    if (C) add_armature_coriolis(model, data.q.data(), qd, nullptr, C);
    add_armature_derivatives(model, data.q.data(), qd, qdd_r, qd_r, dq, dqd, nullptr);
    return status;
}

}  // namespace coriolis
