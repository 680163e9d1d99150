// The forward dynamics' second-order derivatives contracted with a co-state λ: the terms full DDP
// on q̈ = FD(q, q̇, τ) adds to iLQR. Differentiating ID(q, q̇, FD(q, q̇, τ)) = τ twice gives, with
// a = q̈, T τ's tensors at a ([i, j, k] = ∂/∂x_j (∂τ_i/∂y_k)) and a_x = ∂a/∂x,
//
//   M ∂²a/∂x_j∂y_k = −(T_xy[:, j, k] + [y = q] T_qa[:, k, :] a_x[:, j] + [x = q] T_qa[:, j, :] a_y[:, k]),
//   M ∂²a/∂q_j∂τ_k = −T_qa[:, j, :] M⁻¹[:, k].
//
// Contracted with λ, M⁻¹ on the left becomes μᵀ with μ = M⁻¹ λ (M is symmetric), so τ's own
// contractions with μ, X = Σ_i μ_i T[i] (rnea_second_derivatives.hpp, no nv³ array), stand for
// the tensors:
//
//   λᵀ∂²a/∂q² = −(X_qq + X_qa a_q + (X_qa a_q)ᵀ),   λᵀ∂²a/∂q̇² = −X_q̇q̇,
//   λᵀ∂²a/∂q∂q̇ = −(X_qq̇ + X_qa a_q̇),             λᵀ∂²a/∂q∂τ = −X_qa M⁻¹.
#pragma once

#include <algorithm>

#include "forward_dynamics_derivatives.hpp"
#include "rnea_second_derivatives.hpp"

namespace coriolis {

namespace detail {

// out = A B (n x n, row-major), row by row over contiguous rows of B
inline void matmul(int n, const double* A, const double* B, double* out) {
    for (int i = 0; i < n; ++i) {
        double* o = out + int64_t(i) * n;
        std::fill(o, o + n, 0.0);
        for (int l = 0; l < n; ++l) {
            const double x = A[int64_t(i) * n + l];
            if (x == 0.0) continue;
            const double* b = B + int64_t(l) * n;
            for (int c = 0; c < n; ++c) o[c] += x * b[c];
        }
    }
}

}  // namespace detail

// c2q, c2v, cqv, cqt (nv x nv each): λᵀ∂²q̈/∂q², λᵀ∂²q̈/∂q̇², λᵀ∂²q̈/∂q∂q̇, λᵀ∂²q̈/∂q∂τ at (q, q̇, τ).
// Returns a status code; entries of λ count after those of (q, q̇, τ).
inline int64_t forward_dynamics_second_derivatives_contracted(const Model& model, Data& data, const double* q,
                                                              const double* qd, const double* tau, const double* lam,
                                                              const double* gravity, double* c2q, double* c2v,
                                                              double* cqv, double* cqt) {
    const int n = model.nv;
    double *a_q = data.fd2_dq.data(), *a_v = data.fd2_dv.data(), *Minv = data.fd2_Minv.data();
    double *X_qa = data.fd2_Xqa.data(), *P = data.fd2_product.data(), *mu = data.fd2_mu.data(), *a = data.fd2_qdd.data();
    const int64_t status = forward_dynamics_derivatives(model, data, q, qd, tau, gravity, a_q, a_v, Minv);
    if (failed(status)) return status;
    const int64_t bad = check_finite(lam, n, model.nq + 2 * n);
    if (bad != OK) return bad;
    std::copy(data.qdd.begin(), data.qdd.end(), a);  // q̈, before the second order's passes reuse the workspace
    for (int i = 0; i < n; ++i) {
        double s = 0.0;
        for (int j = 0; j < n; ++j) s += Minv[int64_t(i) * n + j] * lam[j];
        mu[i] = s;
    }
    const int64_t again = rnea_second_derivatives_contracted(model, data, q, qd, a, mu, gravity, c2q, c2v, cqv, X_qa);
    if (failed(again)) return again;
    detail::matmul(n, X_qa, a_q, P);
    for (int j = 0; j < n; ++j)
        for (int k = 0; k < n; ++k) {
            const int64_t at = int64_t(j) * n + k;
            c2q[at] = -(c2q[at] + P[at] + P[int64_t(k) * n + j]);
            c2v[at] = -c2v[at];
        }
    detail::matmul(n, X_qa, a_v, P);
    for (int64_t at = 0; at < int64_t(n) * n; ++at) cqv[at] = -(cqv[at] + P[at]);
    detail::matmul(n, X_qa, Minv, cqt);
    for (int64_t at = 0; at < int64_t(n) * n; ++at) cqt[at] = -cqt[at];
    return status;
}

}  // namespace coriolis
