// ∂p/∂q of the generalized momentum p = M(q) q̇, q in the tangent space. M(q) u is the inverse
// dynamics τ(q, 0, u) without gravity, so ∂p/∂q is rnea_derivatives.hpp's ∂τ/∂q (Carpentier &
// Mansard, RSS 2018, Alg. 1) at v = 0, q̈ = q̇, g = 0, where every velocity term vanishes:
//
//   forward:  a_i = a_λ + S_i q̇_i (a_0 = 0),   f_i = I_i a_i,   ∂a/∂q_c = a_λ × S_c
//   backward: F^a_c = I S_c,   F^q_c = I ∂a/∂q_c,   ∂p_d/∂q_c = F^a_d·∂a/∂q_c (d below c),
//             ∂p_c/∂q[c..] = S_c·F^q[c..], then F^q_c += S_c ×* f once the joint's columns are done
//
// with I and f the composites of c's subtree: gravity_derivatives.hpp's backward pass
// (derivatives_at_rest), with a_λ for its a_0.
// A free joint's armature Rᵀ A R turns with the base (armature.hpp); the others' are constant.
#pragma once

#include <algorithm>

#include "armature.hpp"
#include "gravity_derivatives.hpp"
#include "kinematics.hpp"

namespace coriolis {

inline int64_t momentum_derivatives(const Model& model, Data& data, const double* q, const double* qd, double* dp) {
    const int64_t status = placements(model, data, q);
    if (failed(status)) return status;
    const int64_t bad = check_finite(qd, model.nv, model.nq);  // q̇ named as the first velocity
    if (bad != OK) return bad;
    const int n = model.nv, N = model.N;
    std::fill(dp, dp + int64_t(n) * n, 0.0);  // entries of DoF in different branches stay zero
    const double* S = data.S.data();
    double* a = data.a.data();
    const double a0[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    for (int c = 0; c < n; ++c) {  // a_i = a_λ + S_i q̇_i: the state at rest whose q̈ is q̇
        const int b = model.col_body(c);
        if (c == 0 || model.col_body(c - 1) != b) {
            const int p = model.parent(b);
            for (int r = 0; r < 6; ++r) a[6 * b + r] = p >= 0 ? a[6 * p + r] : 0.0;
        }
        for (int r = 0; r < 6; ++r) a[6 * b + r] += S[6 * c + r] * qd[c];
    }
    for (int c = 0; c < n; ++c) {
        const int p = model.parent(model.col_body(c));
        crm_vec(p >= 0 ? a + 6 * p : a0, S + 6 * c, data.dAdq.data() + 6 * c);
    }
    for (int i = 0; i < N; ++i) matvec6(data.IC.data() + 36 * i, a + 6 * i, data.f.data() + 6 * i);
    derivatives_at_rest(model, data, dp);
    // M_a(q) q̇ of a free joint's armature (x = q̇, no ω): its ∂/∂δ, the rest nothing
    add_armature_derivatives(model, data.q.data(), data.zero.data(), qd, data.zero.data(), dp, nullptr, nullptr);
    return status;
}

}  // namespace coriolis
