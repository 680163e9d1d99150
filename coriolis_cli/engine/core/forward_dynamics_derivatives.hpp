// First-order derivatives of the forward dynamics q̈ = M⁻¹ (τ − C q̇ − g): with τ fixed, the
// inverse dynamics' derivatives taken at q̈ give them by the chain rule (Carpentier & Mansard,
// RSS 2018, Sec. IV-B: ID(q, q̇, FD(q, q̇, τ)) = τ, so ∂q̈/∂x = −M⁻¹ ∂τ/∂x):
//
//   ∂q̈/∂q = −M⁻¹ ∂τ/∂q,   ∂q̈/∂q̇ = −M⁻¹ ∂τ/∂q̇,   ∂q̈/∂τ = M⁻¹,
//
// with M = LᵀDL factored along the tree (forward_dynamics.hpp), each column solved in O(n d).
#pragma once

#include "forward_dynamics.hpp"
#include "rnea_derivatives.hpp"

namespace coriolis {

// dq, dv, Minv (nv x nv each, row-major) at (q, q̇, τ); returns a status code (SINGULAR + k: M
// singular at DoF k, nothing computed)
inline int64_t forward_dynamics_derivatives(const Model& model, Data& data, const double* q, const double* qd,
                                            const double* tau, const double* gravity, double* dq, double* dv,
                                            double* Minv) {
    const int n = model.nv;
    double *Tq = data.dtau_dq.data(), *Tv = data.dtau_dv.data(), *qdd = data.qdd.data(), *column = data.column.data();
    // q̈, and M factored in data.H (Minv holds M meanwhile)
    const int64_t status = forward_dynamics(model, data, q, qd, tau, gravity, qdd, Minv);
    if (failed(status)) return status;
    const int64_t again = rnea_derivatives(model, data, q, qd, qdd, gravity, Tq, Tv, Minv);
    if (failed(again)) return again;
    const double* H = data.H.data();
    for (int j = 0; j < n; ++j) {  // M⁻¹ column by column: n solves along the tree
        for (int i = 0; i < n; ++i) column[i] = i == j ? 1.0 : 0.0;
        ltdl_solve(model, H, column);
        for (int i = 0; i < n; ++i) Minv[i * n + j] = column[i];
    }
    for (int i = 0; i < n; ++i) {  // −M⁻¹ ∂τ/∂q and −M⁻¹ ∂τ/∂q̇, row by row
        double *rq = dq + i * n, *rv = dv + i * n;
        for (int j = 0; j < n; ++j) rq[j] = rv[j] = 0.0;
        for (int k = 0; k < n; ++k) {
            const double m = -Minv[i * n + k];
            const double *tq = Tq + k * n, *tv = Tv + k * n;
            for (int j = 0; j < n; ++j) {
                rq[j] += m * tq[j];
                rv[j] += m * tv[j];
            }
        }
    }
    return status;
}

}  // namespace coriolis
