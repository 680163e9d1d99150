// First-order derivatives of the forward dynamics q̈ = M⁻¹ (τ − C q̇ − g): with τ fixed, the
// inverse dynamics' derivatives taken at q̈ give them by the chain rule (Carpentier & Mansard,
// RSS 2018, Sec. IV-B: ID(q, q̇, FD(q, q̇, τ)) = τ, so ∂q̈/∂x = −M⁻¹ ∂τ/∂x):
//
//   ∂q̈/∂q = −M⁻¹ ∂τ/∂q,   ∂q̈/∂q̇ = −M⁻¹ ∂τ/∂q̇,   ∂q̈/∂τ = M⁻¹,
//
// with M = LᵀDL factored along the tree (forward_dynamics.hpp), all 3 n right-hand sides solved
// together in O(n² d).
#pragma once

#include "forward_dynamics.hpp"
#include "rnea_derivatives.hpp"

namespace coriolis {

// row_j −= h row_i over [from, to)
inline void subtract_row(double* __restrict xj, const double* __restrict xi, double h, int from, int to) {
    for (int c = from; c < to; ++c) xj[c] -= h * xi[c];
}

// A, B, X (n x n, row-major) = −H⁻¹ A, −H⁻¹ B, H⁻¹ X for M = LᵀDL held in H (forward_dynamics.hpp):
// ltdl_solve's sweeps applied to whole rows, all right-hand sides at once over contiguous memory.
// A row i of ∂τ/∂x (A, B) is zero outside i's ancestors and descendants, so until the last sweep
// it is zero beyond col_end[i]; a row of X = 1 also before i.
inline void ltdl_solve_rows(const Model& model, const double* H, double* A, double* B, double* X) {
    const int n = model.nv;
    for (int i = n - 1; i >= 0; --i) {  // Lᵀ Y = X
        const int64_t ri = int64_t(i) * n;
        const int to = model.col_end[i];
        for (int j = model.col_previous(i); j >= 0; j = model.col_previous(j)) {
            const double h = H[i * n + j];
            const int64_t rj = int64_t(j) * n;
            subtract_row(A + rj, A + ri, h, 0, to);
            subtract_row(B + rj, B + ri, h, 0, to);
            subtract_row(X + rj, X + ri, h, i, to);
        }
    }
    for (int i = 0; i < n; ++i) {
        const double d = 1.0 / H[i * n + i];
        const int64_t ri = int64_t(i) * n;
        for (int c = 0; c < model.col_end[i]; ++c) {  // and A, B negated: −H⁻¹ A, −H⁻¹ B
            A[ri + c] *= -d;
            B[ri + c] *= -d;
        }
        for (int c = i; c < model.col_end[i]; ++c) X[ri + c] *= d;
    }
    for (int i = 0; i < n; ++i) {  // L X = Y; X = M⁻¹ is symmetric: its rows from the diagonal on
        const int64_t ri = int64_t(i) * n;
        for (int j = model.col_previous(i); j >= 0; j = model.col_previous(j)) {
            const double h = H[i * n + j];
            const int64_t rj = int64_t(j) * n;
            subtract_row(A + ri, A + rj, h, 0, n);
            subtract_row(B + ri, B + rj, h, 0, n);
            subtract_row(X + ri, X + rj, h, i, n);  // j < i: X's row j is known from i on
        }
    }
    for (int i = 0; i < n; ++i)
        for (int c = 0; c < i; ++c) X[int64_t(i) * n + c] = X[int64_t(c) * n + i];
}

// dq, dv, Minv (nv x nv each, row-major) at (q, q̇, τ); returns a status code (SINGULAR + k: M
// singular at DoF k, nothing computed). ∂τ/∂q and ∂τ/∂q̇ at q̈ are written into dq and dv, then
// −M⁻¹ times them and M⁻¹ = M⁻¹ 1 are solved in place along the tree: O(n² d), no dense product.
inline int64_t forward_dynamics_derivatives(const Model& model, Data& data, const double* q, const double* qd,
                                            const double* tau, const double* gravity, double* dq, double* dv,
                                            double* Minv) {
    const int n = model.nv;
    double* qdd = data.qdd.data();
    // q̈ as forward_dynamics gives it (the articulated bodies where they apply; Minv is scratch)
    const int64_t status = compute_forward_dynamics(model, data, q, qd, tau, gravity, qdd, Minv);
    if (failed(status)) return status;
    const int64_t again = rnea_derivatives(model, data, q, qd, qdd, gravity, dq, dv, Minv);
    if (failed(again)) return again;
    // M (in Minv) factored as LᵀDL along the tree, into data.H
    double* H = data.H.data();
    copy_chains(model, Minv, H);
    const int64_t singular = ltdl_factor(model, H, Minv);
    if (singular != OK) return singular;
    const int64_t nn = int64_t(n) * n;
    std::fill(Minv, Minv + nn, 0.0);
    for (int i = 0; i < n; ++i) Minv[i * n + i] = 1.0;
    ltdl_solve_rows(model, H, dq, dv, Minv);
    return status;
}

}  // namespace coriolis
