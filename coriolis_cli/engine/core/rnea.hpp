// Recursive Newton–Euler inverse dynamics (Featherstone ch. 5) in the computation frame:
//
//   a_0 = −g, a_i = a_p(i) + S_i q̈_i + Ṡ_i q̇_i, f_i = I_i a_i + v_i ×* I_i v_i, τ_i = S_iᵀ f_i,
//   f_p(i) += f_i.
//
// With a floating base the computation frame is the base frame, so gravity is rotated into it
// with the base quaternion (root_acceleration).
#pragma once

#include "armature.hpp"
#include "kinematics.hpp"

namespace coriolis {

// a_i = a_p(i) + S_i q̈_i + Ṡ_i q̇_i, from a_0 at the roots
inline void accelerations(const Model& model, const double* S, const double* Sdot, const double* qd,
                          const double* qdd, const double* a0, double* a) {
    for (int c = 0; c < model.nv; ++c) {
        const int b = model.col_body(c);
        if (c == 0 || model.col_body(c - 1) != b) {
            const int p = model.parent(b);
            for (int r = 0; r < 6; ++r) a[6 * b + r] = p >= 0 ? a[6 * p + r] : a0[r];
        }
        for (int r = 0; r < 6; ++r) a[6 * b + r] += S[6 * c + r] * qdd[c] + Sdot[6 * c + r] * qd[c];
    }
}

// f_i = I_i a_i + v_i ×* I_i v_i
inline void inertial_forces(int N, const double* IC, const double* v, const double* a, double* f) {
    double h[6], g[6];
    for (int i = 0; i < N; ++i) {
        matvec6(IC + 36 * i, a + 6 * i, f + 6 * i);
        matvec6(IC + 36 * i, v + 6 * i, h);
        crf_vec(v + 6 * i, h, g);
        for (int r = 0; r < 6; ++r) f[6 * i + r] += g[r];
    }
}

// τ_i = S_iᵀ Σ_{j ⪰ i} f_j: each body's force added to its parent's once its columns are done
inline void joint_torques(const Model& model, const double* S, double* f, double* tau) {
    for (int j = model.nv - 1; j >= 0; --j) {
        const int b = model.col_body(j);
        tau[j] = dot6(S + 6 * j, f + 6 * b);
        if (model.is_first_column(j)) {
            const int p = model.parent(b);
            if (p >= 0)
                for (int r = 0; r < 6; ++r) f[6 * p + r] += f[6 * b + r];
        }
    }
}

// τ into `tau`; returns a status code
inline int64_t rnea(const Model& model, Data& data, const double* q, const double* qd, const double* qdd,
                    const double* gravity, double* tau) {
    const int64_t status = forward_pass(model, data, q, qd, qdd, qdd, 2);
    if (failed(status)) return status;
    double a0[6];
    root_acceleration(model, data.q.data(), gravity, a0);  // a_0 = −g, in the computation frame
    accelerations(model, data.S.data(), data.Sdot.data(), qd, qdd, a0, data.a.data());
    inertial_forces(model.N, data.IC.data(), data.v.data(), data.a.data(), data.f.data());
    joint_torques(model, data.S.data(), data.f.data(), tau);
    add_armature_force(model, data.q.data(), qd, qdd, qd, tau);
    return status;
}

// g(q): the RNEA at rest, into `g`
inline int64_t gravity_vector(const Model& model, Data& data, const double* q, const double* gravity, double* g) {
    const double* zero = data.zero.data();
    return rnea(model, data, q, zero, zero, gravity, g);
}

}  // namespace coriolis
