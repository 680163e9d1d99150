// The Slotine–Li recursion and its regressors (Wensing–Slotine App. B, Algs. 3 and 4; the listing
// and its line numbers are in docs/algorithms.md, Slotine–Li) in the computation frame
// (slotine_li_body.hpp holds the recursion in body coordinates):
// τ = M(q) q̈_r + C(q, q̇) q̇_r + g(q) with the Christoffel-consistent C, never forming C:
//
//   v_i = v_p(i) + S_i q̇_i                      (Alg. 3, line 3: true velocities)
//   w_i = w_p(i) + S_i q̇_r,i                    (line 4: reference velocities)
//   Ṡ_i = v_i × S_i                             (line 5: Φ̊ = 0 in this frame)
//   a_i = a_p(i) + Ṡ_i q̇_r,i + S_i q̈_r,i,  a_0 = −g   (line 6)
//   f_i = I_i a_i + B(v_i, I_i) w_i             (line 8, B of the core paper's eq. 10, or eq. 9)
//   τ_i = S_iᵀ Σ_{j ⪰ i} f_j                    (lines 11-13)
//
// f_i is linear in body i's inertial parameters θ_i: f_i = 𝒴_i θ_i. Then Y_ij = S_iᵀ 𝒴_j for the
// DoF i that support body j (Alg. 4), and Alg. 3's line 9 gives the adaptation term without
// forming Y: [Yᵀs]_j = 𝒴_jᵀ (v_j − w_j) with s = q̇ − q̇_r.
#pragma once

#include "armature.hpp"
#include "body_frame.hpp"
#include "kinematics.hpp"
#include "rnea.hpp"

namespace coriolis {

// out = body i's spatial inertia in the computation frame from theta's ten parameters, given in
// body i's frame (h = m c, I about the body origin). With R, p body i's placement and g = R h:
// h_w = g + m p and J_w = R J Rᵀ − m p̂p̂ − p̂ĝ − ĝp̂.
inline void parameter_inertia(const double* t, const double* Xi, double* out) {
    const double m = t[0], hb0 = t[1], hb1 = t[2], hb2 = t[3];
    const double J00 = t[4], J01 = t[5], J11 = t[6], J02 = t[7], J12 = t[8], J22 = t[9];
    const double p[3] = {Xi[18], Xi[19], Xi[20]};
    const double g[3] = {Xi[0] * hb0 + Xi[1] * hb1 + Xi[2] * hb2, Xi[6] * hb0 + Xi[7] * hb1 + Xi[8] * hb2,
                         Xi[12] * hb0 + Xi[13] * hb1 + Xi[14] * hb2};
    for (int r = 0; r < 3; ++r) {  // R J Rᵀ, element by element (J symmetric)
        const double a0 = J00 * Xi[r * 6 + 0] + J01 * Xi[r * 6 + 1] + J02 * Xi[r * 6 + 2];
        const double a1 = J01 * Xi[r * 6 + 0] + J11 * Xi[r * 6 + 1] + J12 * Xi[r * 6 + 2];
        const double a2 = J02 * Xi[r * 6 + 0] + J12 * Xi[r * 6 + 1] + J22 * Xi[r * 6 + 2];
        for (int c = r; c < 3; ++c) out[r * 6 + c] = a0 * Xi[c * 6 + 0] + a1 * Xi[c * 6 + 1] + a2 * Xi[c * 6 + 2];
    }
    const double pg = p[0] * g[0] + p[1] * g[1] + p[2] * g[2];
    const double pp = p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
    for (int r = 0; r < 3; ++r)  // −m p̂p̂ = m (|p|² 1 − p pᵀ);  −(p̂ĝ + ĝp̂) = 2 (p·g) 1 − p gᵀ − g pᵀ
        for (int c = r; c < 3; ++c) {
            double e = -m * p[r] * p[c] - p[r] * g[c] - g[r] * p[c];
            if (r == c) e += m * pp + 2.0 * pg;
            out[r * 6 + c] += e;
            out[c * 6 + r] = out[r * 6 + c];
        }
    complete_inertia(m, g[0] + m * p[0], g[1] + m * p[1], g[2] + m * p[2], out);
}

// lines 2-6 for every body: placements, inertias (the model's or theta's), v, Ṡ, w, a
inline int64_t reference_motion(const Model& model, Data& data, const double* q, const double* qd, const double* qd_r,
                                const double* qdd_r, const double* gravity, const double* theta) {
    const int64_t status = forward_pass(model, data, q, qd, qd_r, qdd_r, 3);
    if (failed(status)) return status;
    if (theta)
        for (int i = 0; i < model.N; ++i)
            parameter_inertia(theta + N_PARAMETERS * i, data.X.data() + 36 * i, data.IC.data() + 36 * i);
    propagate(model, data.S.data(), qd_r, data.w.data());  // line 4
    double a0[6];
    root_acceleration(model, data.q.data(), gravity, a0);
    accelerations(model, data.S.data(), data.Sdot.data(), qd_r, qdd_r, a0, data.a.data());  // line 6
    return status;
}

// Alg. 3, lines 1-14: τ into tau; theta (10 per body) or null for the model's own
inline int64_t slotine_li(const Model& model, Data& data, const double* q, const double* qd, const double* qd_r,
                          const double* qdd_r, const double* gravity, const double* theta, int factorization,
                          double* tau) {
    const int64_t status = reference_motion(model, data, q, qd, qd_r, qdd_r, gravity, theta);
    if (failed(status)) return status;
    double Bw[6];
    for (int i = 0; i < model.N; ++i) {  // line 8: f_i = I_i a_i + B(v_i, I_i) w_i
        const double* ICi = data.IC.data() + 36 * i;
        double *BCi = data.BC.data() + 36 * i, *fi = data.f.data() + 6 * i;
        body_factorization(data.v.data() + 6 * i, ICi, factorization, BCi);
        matvec6(ICi, data.a.data() + 6 * i, fi);
        matvec6(BCi, data.w.data() + 6 * i, Bw);
        for (int r = 0; r < 6; ++r) fi[r] += Bw[r];
    }
    joint_torques(model, data.S.data(), data.f.data(), tau);  // lines 11-13
    add_armature_force(model, data.q.data(), qd, qdd_r, qd_r, tau);  // known, not a parameter
    return status;
}

// Alg. 4: Y (nv x 10N, related entries only) with Y θ = τ of slotine_li, and Alg. 3's line 9:
// Yts[10 j + k] = 𝒴_j[:, k] · (v_j − w_j). A null Y skips Y (the adaptation term alone).
inline int64_t regressor(const Model& model, Data& data, const double* q, const double* qd, const double* qd_r,
                         const double* qdd_r, const double* gravity, int factorization, double* Y, double* Yts) {
    const int N = model.N, n = model.nv, width = N_PARAMETERS * N;
    const int64_t status = reference_motion(model, data, q, qd, qd_r, qdd_r, gravity, nullptr);
    if (failed(status)) return status;
    const double *v = data.v.data(), *w = data.w.data(), *a = data.a.data(), *S = data.S.data();
    double Ik[36], Bk[36], fk[6], Bw[6];
    for (int j = 0; j < N; ++j) {
        const int last = (j + 1 < N ? model.v_start(j + 1) : n) - 1;  // body j's last column
        for (int k = 0; k < N_PARAMETERS; ++k) {
            double unit[N_PARAMETERS] = {0.0};
            unit[k] = 1.0;
            parameter_inertia(unit, data.X.data() + 36 * j, Ik);  // the k-th unit parameter of body j
            body_factorization(v + 6 * j, Ik, factorization, Bk);
            matvec6(Ik, a + 6 * j, fk);
            matvec6(Bk, w + 6 * j, Bw);
            double s = 0.0;
            for (int r = 0; r < 6; ++r) {
                fk[r] += Bw[r];
                s += fk[r] * (v[6 * j + r] - w[6 * j + r]);
            }
            const int col = N_PARAMETERS * j + k;
            Yts[col] = s;
            if (!Y) continue;
            for (int c = last; c >= 0; c = model.col_previous(c)) Y[int64_t(c) * width + col] = dot6(S + 6 * c, fk);
        }
    }
    return status;
}

}  // namespace coriolis
