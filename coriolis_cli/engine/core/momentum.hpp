// Wensing–Slotine App. B-B, the part of Algorithm 4 a momentum observer reads: p = M q̇ and Cᵀq̇,
// each by one O(N) recursion that forms neither M nor C; and, for recordings, every quantity
// along a trajectory in one pass. In the computation frame, with h_i = I_i v_i and the subtree
// momentum H_i = Σ_{j ⪰ i} h_j,
//
//   p_k = S_kᵀ H_b(k),   (Cᵀq̇)_k = Ṡ_kᵀ H_b(k)        (eq. B-B1, Ṡ_k = v_b(k) × S_k)
//
// the second the same for every C with Ṁ = C + Cᵀ. Along a trajectory the RNEA's three force sums
// share that pass: f^C_i = I_i a^C_i + v_i ×* h_i with a^C_i = a^C_p + Ṡ_i q̇_i (C q̇),
// f^g_i = I_i a_0 (g), f^a_i = I_i a^a_i with a^a_i = a^a_p + S_i q̈_i (M q̈). The kinetic energy
// is ½ q̇ᵀp; the potential energy −gᵀ Σ m_i c_i is returned in the computation frame.
#pragma once

#include <limits>

#include "armature.hpp"
#include "kinematics.hpp"
#include "rnea.hpp"
#include "slotine_li.hpp"

namespace coriolis {

// columns of a trajectory row: g, C q̇, Cᵀq̇, p, τ (each nv), then T and V
enum TrajectoryColumn : int { G_COL = 0, CQD_COL = 1, CTQD_COL = 2, P_COL = 3, TAU_COL = 4, TRAJECTORY_QUANTITIES = 5 };

// p = M q̇ into p and Cᵀq̇ into ct; returns a status code
inline int64_t momentum(const Model& model, Data& data, const double* q, const double* qd, double* p, double* ct) {
    const int64_t status = forward_pass(model, data, q, qd, qd, qd, 1);
    if (failed(status)) return status;
    double* H = data.h.data();
    for (int i = 0; i < model.N; ++i) matvec6(data.IC.data() + 36 * i, data.v.data() + 6 * i, H + 6 * i);
    joint_torques(model, data.S.data(), H, p);  // p_k = S_kᵀ H, the subtree momenta summed from the leaves
    for (int k = 0; k < model.nv; ++k) ct[k] = dot6(data.Sdot.data() + 6 * k, H + 6 * model.col_body(k));
    add_armature_force(model, data.q.data(), qd, qd, data.zero.data(), p);  // M_a q̇
    add_armature_transpose(model, data.q.data(), qd, ct);
    return status;
}

// one sample of a trajectory into row (TRAJECTORY_QUANTITIES nv + 2): g, C q̇, Cᵀq̇, p, τ (NaN without q̈),
// T and the potential energy in the computation frame. Returns a status code.
inline int64_t trajectory(const Model& model, Data& data, const double* q, const double* qd, const double* qdd,
                          bool use_qdd, const double* gravity, double* row) {
    const int n = model.nv;
    const int64_t status = forward_pass(model, data, q, qd, qdd, qdd, 2);
    if (failed(status)) return status;
    const double *S = data.S.data(), *Sd = data.Sdot.data(), *v = data.v.data(), *IC = data.IC.data(),
                 *zero = data.zero.data();
    double *a = data.a.data(), *f = data.f.data(), *Hm = data.h.data(), *fg = data.f_gravity.data(),
           *fa = data.f_acceleration.data(), *aq = data.a_acceleration.data();
    double a0[6], h[6], tmp[6];
    const double rest[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    root_acceleration(model, data.q.data(), gravity, a0);
    accelerations(model, S, Sd, qd, zero, rest, a);   // a^C from rest, without q̈
    accelerations(model, S, Sd, zero, qdd, rest, aq);  // a^a: q̈ alone
    double mc0 = 0.0, mc1 = 0.0, mc2 = 0.0;
    for (int i = 0; i < model.N; ++i) {
        const double* ICi = IC + 36 * i;
        matvec6(ICi, v + 6 * i, h);
        for (int r = 0; r < 6; ++r) Hm[6 * i + r] = h[r];
        matvec6(ICi, a + 6 * i, f + 6 * i);
        crf_vec(v + 6 * i, h, tmp);
        for (int r = 0; r < 6; ++r) f[6 * i + r] += tmp[r];
        matvec6(ICi, a0, fg + 6 * i);
        matvec6(ICi, aq + 6 * i, fa + 6 * i);
        mc0 += ICi[2 * 6 + 4];  // m c in the computation frame, from the inertia's m [c]× block
        mc1 += ICi[0 * 6 + 5];
        mc2 += ICi[1 * 6 + 3];
    }
    // the RNEA's backward sweep for each force sum; the subtree momenta then give Cᵀq̇ as well
    joint_torques(model, S, fg, row + G_COL * n);
    joint_torques(model, S, f, row + CQD_COL * n);
    joint_torques(model, S, Hm, row + P_COL * n);
    joint_torques(model, S, fa, row + TAU_COL * n);
    for (int j = 0; j < n; ++j) row[CTQD_COL * n + j] = dot6(Sd + 6 * j, Hm + 6 * model.col_body(j));
    add_armature_force(model, data.q.data(), qd, zero, qd, row + CQD_COL * n);  // C_a q̇
    add_armature_transpose(model, data.q.data(), qd, row + CTQD_COL * n);
    add_armature_force(model, data.q.data(), qd, qd, zero, row + P_COL * n);   // M_a q̇
    add_armature_force(model, data.q.data(), qd, qdd, zero, row + TAU_COL * n);  // M_a q̈
    double kinetic = 0.0;
    for (int j = 0; j < n; ++j) {
        kinetic += 0.5 * qd[j] * row[P_COL * n + j];
        if (use_qdd)
            row[TAU_COL * n + j] += row[CQD_COL * n + j] + row[G_COL * n + j];
        else
            row[TAU_COL * n + j] = std::numeric_limits<double>::quiet_NaN();
    }
    row[TRAJECTORY_QUANTITIES * n] = kinetic;
    row[TRAJECTORY_QUANTITIES * n + 1] = a0[3] * mc0 + a0[4] * mc1 + a0[5] * mc2;
    return status;
}

// Algorithm 4's other regressors (App. B-B), column 10 j + k for the k-th unit parameter of body j
// (I_jk its inertia, h = I_jk v_j): Y_p = S_cᵀh, Y_c = Ṡ_cᵀh, Y_g = S_cᵀ I_jk a_0 for the DoF c that
// support body j, Y_T = ½ v_jᵀh (related entries only). Returns a status code.
inline int64_t momentum_regressors(const Model& model, Data& data, const double* q, const double* qd,
                                   const double* gravity, double* Yp, double* Yc, double* Yg, double* YT) {
    const int N = model.N, n = model.nv, width = N_PARAMETERS * N;
    const int64_t status = forward_pass(model, data, q, qd, qd, qd, 1);
    if (failed(status)) return status;
    const double *S = data.S.data(), *Sd = data.Sdot.data(), *v = data.v.data();
    double a0[6], h[6], fg[6], Ik[36];
    root_acceleration(model, data.q.data(), gravity, a0);
    for (int j = 0; j < N; ++j) {
        const int last = (j + 1 < N ? model.v_start(j + 1) : n) - 1;  // body j's last column
        for (int k = 0; k < N_PARAMETERS; ++k) {
            double unit[N_PARAMETERS] = {0.0};
            unit[k] = 1.0;
            parameter_inertia(unit, data.X.data() + 36 * j, Ik);
            matvec6(Ik, v + 6 * j, h);
            matvec6(Ik, a0, fg);
            const int col = N_PARAMETERS * j + k;
            YT[col] = 0.5 * dot6(v + 6 * j, h);
            for (int c = last; c >= 0; c = model.col_previous(c)) {  // every DoF that supports body j
                const int64_t at = int64_t(c) * width + col;
                Yp[at] = dot6(S + 6 * c, h);
                Yc[at] = dot6(Sd + 6 * c, h);
                Yg[at] = dot6(S + 6 * c, fg);
            }
        }
    }
    return status;
}

}  // namespace coriolis
