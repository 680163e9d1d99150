// ∂g/∂q of the gravity vector g(q) = τ(q, 0, 0): rnea_derivatives.hpp's passes at rest, where v = 0
// leaves only gravity's terms (the computation of Pinocchio's computeGeneralizedGravityDerivatives):
//
//   forward:  f_i = I_i a_0,   ∂a/∂q_c = a_0 × S_c  (a_0 = −g, every body at rest)
//   backward: F^a_c = I S_c,  F^q_c = I ∂a/∂q_c,  ∂g_d/∂q_c = F^a_d·∂a/∂q_c (d below c),
//             ∂g_c/∂q[c..] = S_c·F^q[c..], then F^q_c += S_c ×* f once the joint's columns are done.
#pragma once

#include <algorithm>

#include "kinematics.hpp"
#include "rnea_derivatives.hpp"

namespace coriolis {

// The backward pass at rest, into out (nv x nv, zeroed): with ∂a/∂q_c in data.dAdq, the bodies'
// forces f_i = I_i a_i in data.f and their inertias in data.IC (both made composites here).
inline void derivatives_at_rest(const Model& model, Data& data, double* out) {
    const int n = model.nv;
    const double* S = data.S.data();
    double *dA = data.dAdq.data(), *Fa = data.dFda.data(), *Fq = data.dFdq.data(), *f = data.f.data();
    for (int c = n - 1; c >= 0; --c) {
        const int b = model.col_body(c), end = model.col_end[c];
        const double *I = data.IC.data() + 36 * b, *Sc = S + 6 * c;
        matvec6(I, Sc, Fa + 6 * c);
        matvec6(I, dA + 6 * c, Fq + 6 * c);
        for (int d = c + 1; d < end; ++d) out[d * n + c] = dot6(Fa + 6 * d, dA + 6 * c);
        for (int d = c; d < end; ++d) out[c * n + d] = dot6(Sc, Fq + 6 * d);
        if (model.is_first_column(c)) {
            transport_force(model, S, c, b, f, Fq);
            if (model.parent(b) >= 0) add_composite(data.IC.data() + 36 * model.parent(b), I);
        }
    }
}

inline int64_t gravity_derivatives(const Model& model, Data& data, const double* q, const double* gravity,
                                   double* dg) {
    const int64_t status = placements(model, data, q);
    if (failed(status)) return status;
    const int n = model.nv, N = model.N;
    std::fill(dg, dg + int64_t(n) * n, 0.0);  // entries of DoF in different branches stay zero
    const double* S = data.S.data();
    double a0[6];
    root_acceleration(model, data.q.data(), gravity, a0);
    for (int c = 0; c < n; ++c) crm_vec(a0, S + 6 * c, data.dAdq.data() + 6 * c);
    for (int i = 0; i < N; ++i) matvec6(data.IC.data() + 36 * i, a0, data.f.data() + 6 * i);
    derivatives_at_rest(model, data, dg);
    return status;
}

}  // namespace coriolis
