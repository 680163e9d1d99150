// ∂(Cᵀq̇)/∂q and ∂(Cᵀq̇)/∂q̇ of momentum.hpp's (Cᵀq̇)_k = Ṡ_k·H_b (eq. B-B1; b the body of DoF k,
// H_b = Σ_{i ⪰ b} I_i v_i its subtree's momentum, Ṡ_k = v_b × S_k): what a momentum observer's
// linearization (an extended Kalman filter on r = p − ∫(τ + Cᵀq̇ − g)) needs, in O(N d).
//
// Moving q_j carries the subtree of j's body J rigidly along S_j, which leaves a scalar of that
// subtree unchanged, and changes it intrinsically by ∂v/∂q_j = v_λ × S_j (λ: J's parent). For j in
// b's joint or above it, everything in Ṡ_k·H_b moves, and with Z_k = S_k ×* H_b + I_b Ṡ_k
// (I_b: the subtree's inertia)
//
//   ∂(Cᵀq̇)_k/∂q_j = Z_k·∂v/∂q_j,   ∂(Cᵀq̇)_k/∂q̇_j = Z_k·S_j;
//
// for j below b only H_b moves, by H_J's transport S_j ×* H_J and I_J ∂v/∂q_j:
//
//   ∂(Cᵀq̇)_k/∂q_j = Ṡ_k·(S_j ×* H_J + I_J ∂v/∂q_j),   ∂(Cᵀq̇)_k/∂q̇_j = Ṡ_k·(I_J S_j).
#pragma once

#include <algorithm>

#include "armature.hpp"
#include "kinematics.hpp"
#include "rnea_derivatives.hpp"

namespace coriolis {

// the free joints' armature term −ω × (M_a v) of Cᵀq̇ (armature.hpp), differentiated: ∂/∂v_k =
// −ω × (M_a e_k), ∂/∂ω_k = −e_k × (M_a v), ∂/∂δ_k = −ω × (M_a (e_k × v) − e_k × (M_a v))
inline void add_armature_transpose_derivatives(const Model& model, const double* q, const double* qd, double* dq,
                                               double* dqd) {
    const int n = model.nv;
    double Ma[9];
    auto cross = [](const double* a, const double* b, double* out) {
        out[0] = a[1] * b[2] - a[2] * b[1];
        out[1] = a[2] * b[0] - a[0] * b[2];
        out[2] = a[0] * b[1] - a[1] * b[0];
    };
    auto times = [&](const double* x, double* out) {
        for (int r = 0; r < 3; ++r) out[r] = Ma[3 * r] * x[0] + Ma[3 * r + 1] * x[1] + Ma[3 * r + 2] * x[2];
    };
    for (int b = 0; b < model.N; ++b) {
        if (!(detail::is_free(model, b) && detail::linear_armature(model, q, b, Ma))) continue;
        const int s = model.v_start(b);
        const double v[3] = {qd[s], qd[s + 1], qd[s + 2]}, w[3] = {qd[s + 3], qd[s + 4], qd[s + 5]};
        double Mv[3];
        times(v, Mv);
        for (int k = 0; k < 3; ++k) {
            double e[3] = {0.0, 0.0, 0.0}, Me[3], ev[3], Mev[3], eMv[3], t[3];
            e[k] = 1.0;
            times(e, Me);
            cross(w, Me, t);  // ∂/∂v_k
            for (int r = 0; r < 3; ++r) dqd[(s + r) * n + s + k] -= t[r];
            cross(e, Mv, t);  // ∂/∂ω_k
            for (int r = 0; r < 3; ++r) dqd[(s + r) * n + s + 3 + k] -= t[r];
            cross(e, v, ev);  // ∂/∂δ_k
            times(ev, Mev);
            cross(e, Mv, eMv);
            for (int r = 0; r < 3; ++r) Mev[r] -= eMv[r];
            cross(w, Mev, t);
            for (int r = 0; r < 3; ++r) dq[(s + r) * n + s + 3 + k] -= t[r];
        }
    }
}

inline int64_t coriolis_transpose_derivatives(const Model& model, Data& data, const double* q, const double* qd,
                                              double* dq, double* dqd) {
    const int64_t status = forward_pass(model, data, q, qd, qd, qd, 1);
    if (failed(status)) return status;
    const int n = model.nv, N = model.N;
    std::fill(dq, dq + int64_t(n) * n, 0.0);  // entries of DoF in different branches stay zero
    std::fill(dqd, dqd + int64_t(n) * n, 0.0);
    const double *S = data.S.data(), *Sdot = data.Sdot.data(), *v = data.v.data();
    double *H = data.h.data(), *IC = data.IC.data();
    for (int i = 0; i < N; ++i) matvec6(IC + 36 * i, v + 6 * i, H + 6 * i);
    for (int i = N - 1; i > 0; --i) {  // subtree inertias and momenta (parents come first)
        const int p = model.parent(i);
        if (p < 0) continue;
        add_composite(IC + 36 * p, IC + 36 * i);
        for (int r = 0; r < 6; ++r) H[6 * p + r] += H[6 * i + r];
    }
    // per column j: ∂v/∂q_j, F^a_j = I_J S_j, T_j = S_j ×* H_J + I_J ∂v/∂q_j; Z_j (as a row k)
    double *dV = data.dVdq.data(), *Fa = data.dFda.data(), *T = data.dFdq.data(), *Z = data.dFdv.data();
    for (int j = 0; j < n; ++j) {
        const int b = model.col_body(j), p = model.parent(b);
        const double *I = IC + 36 * b, *Sj = S + 6 * j;
        double t[6];
        if (p >= 0) {
            crm_vec(v + 6 * p, Sj, dV + 6 * j);
        } else {
            for (int r = 0; r < 6; ++r) dV[6 * j + r] = 0.0;
        }
        matvec6(I, Sj, Fa + 6 * j);
        crf_vec(Sj, H + 6 * b, T + 6 * j);
        matvec6(I, dV + 6 * j, t);
        for (int r = 0; r < 6; ++r) T[6 * j + r] += t[r];
        matvec6(I, Sdot + 6 * j, Z + 6 * j);
        crf_vec(Sj, H + 6 * b, t);
        for (int r = 0; r < 6; ++r) Z[6 * j + r] += t[r];
    }
    for (int k = 0; k < n; ++k) {
        const int b = model.col_body(k);
        const double *Zk = Z + 6 * k, *Sdk = Sdot + 6 * k;
        int last = k;  // b's columns, then those above them
        while (last + 1 < n && model.col_body(last + 1) == b) ++last;
        for (int j = last; j >= 0; j = model.col_previous(j)) {
            dq[k * n + j] = dot6(Zk, dV + 6 * j);
            dqd[k * n + j] = dot6(Zk, S + 6 * j);
        }
        for (int j = last + 1; j < model.col_end[k]; ++j) {  // below b
            dq[k * n + j] = dot6(Sdk, T + 6 * j);
            dqd[k * n + j] = dot6(Sdk, Fa + 6 * j);
        }
    }
    add_armature_transpose_derivatives(model, data.q.data(), qd, dq, dqd);
    return status;
}

}  // namespace coriolis
