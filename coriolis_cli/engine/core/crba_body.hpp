// The composite-rigid-body algorithm (Featherstone, RBDA Table 6.2) in body coordinates, as
// Pinocchio's crba runs it, for robots of 1-DoF joints under at most a free root:
//
//   IC_i = I_i + Σ_children pX_c* IC_c cX_p                                     (leaves up)
//   F = IC_i S_i,  M_ii = S_iᵀ F,  then up the ancestors j: F = pX_j* F, M_ji = S_jᵀ F
//
// A free root's S is the permutation P between ν = [v; ω] and angular-first vectors: its block is
// Pᵀ IC P, and its rows against a descendant's DoF are Pᵀ F. Composites are kept as ten
// parameters, so the mass block stays m 1 exactly, as Pinocchio keeps it.
#pragma once

#include "armature.hpp"
#include "body_frame.hpp"
#include "data.hpp"

namespace coriolis {

namespace detail {

// the angular-first index of ν's k-th entry (ν = [v; ω])
inline int free_index(int k) { return k < 3 ? k + 3 : k - 3; }

inline Parameters stored(const double* P) { return {P[0], P[1], P[2], P[3], P[4], P[5], P[6], P[7], P[8], P[9]}; }

// IC_p += pX_i* IC_i iX_p on ten parameters: rotated by L (h' = L h, J' = L J Lᵀ), then taken
// about the parent's origin r: h_p = h' + m r, J_p = J' + m (r·r 1 − r rᵀ) + 2 (r·h') 1 − r h'ᵀ − h' rᵀ
inline void add_composite_parameters(const double* Xb, int i, const double* Pi, double* Pp) {
    const double* X = Xb + 36 * i;
    const double m = Pi[0], h0 = Pi[1], h1 = Pi[2], h2 = Pi[3], J00 = Pi[4], J01 = Pi[5], J11 = Pi[6], J02 = Pi[7],
                 J12 = Pi[8], J22 = Pi[9];
    const double L00 = X[0], L01 = X[1], L02 = X[2], L10 = X[6], L11 = X[7], L12 = X[8], L20 = X[12], L21 = X[13],
                 L22 = X[14];
    const double r0 = X[18], r1 = X[19], r2 = X[20];
    const double g0 = L00 * h0 + L01 * h1 + L02 * h2;  // h' = L h
    const double g1 = L10 * h0 + L11 * h1 + L12 * h2;
    const double g2 = L20 * h0 + L21 * h1 + L22 * h2;
    // K = J Lᵀ, then J' = L K
    const double k00 = J00 * L00 + J01 * L01 + J02 * L02, k10 = J01 * L00 + J11 * L01 + J12 * L02,
                 k20 = J02 * L00 + J12 * L01 + J22 * L02;
    const double k01 = J00 * L10 + J01 * L11 + J02 * L12, k11 = J01 * L10 + J11 * L11 + J12 * L12,
                 k21 = J02 * L10 + J12 * L11 + J22 * L12;
    const double k02 = J00 * L20 + J01 * L21 + J02 * L22, k12 = J01 * L20 + J11 * L21 + J12 * L22,
                 k22 = J02 * L20 + J12 * L21 + J22 * L22;
    const double rr = r0 * r0 + r1 * r1 + r2 * r2;
    const double rg = 2.0 * (r0 * g0 + r1 * g1 + r2 * g2);
    Pp[0] += m;
    Pp[1] += g0 + m * r0;
    Pp[2] += g1 + m * r1;
    Pp[3] += g2 + m * r2;
    Pp[4] += L00 * k00 + L01 * k10 + L02 * k20 + m * (rr - r0 * r0) + rg - 2.0 * r0 * g0;  // J00
    Pp[5] += L00 * k01 + L01 * k11 + L02 * k21 - m * r0 * r1 - r0 * g1 - g0 * r1;        // J01
    Pp[6] += L10 * k01 + L11 * k11 + L12 * k21 + m * (rr - r1 * r1) + rg - 2.0 * r1 * g1;  // J11
    Pp[7] += L00 * k02 + L01 * k12 + L02 * k22 - m * r0 * r2 - r0 * g2 - g0 * r2;        // J02
    Pp[8] += L10 * k02 + L11 * k12 + L12 * k22 - m * r1 * r2 - r1 * g2 - g1 * r2;        // J12
    Pp[9] += L20 * k02 + L21 * k12 + L22 * k22 + m * (rr - r2 * r2) + rg - 2.0 * r2 * g2;  // J22
}

}  // namespace detail

// M into `M` (related DoF only); returns a status code
inline int64_t mass_matrix_body(const Model& model, Data& data, const double* q, double* M) {
    const int n = model.nv;
    const int64_t status = load_configuration(model, q, data.q.data());
    if (failed(status)) return status;
    double *P = data.params.data(), *Xb = data.Xb.data();
    for (int i = 0; i < model.N; ++i) {
        const int64_t jt = model.joint(i);
        if (jt != FREE) body_placement(model, jt, data.q[model.q_start(i)], i, Xb);
        const Parameters p = local_parameters(model, nullptr, i);
        const double values[N_PARAMETERS] = {p.m, p.h0, p.h1, p.h2, p.J00, p.J01, p.J11, p.J02, p.J12, p.J22};
        for (int k = 0; k < N_PARAMETERS; ++k) P[N_PARAMETERS * i + k] = values[k];
    }
    double F[2][6], W[36];
    for (int i = model.N - 1; i >= 0; --i) {  // IC_i holds its whole subtree once its children are done
        const int64_t jt = model.joint(i);
        const int vs = model.v_start(i), p = model.parent(i);
        const Parameters Pi = detail::stored(P + N_PARAMETERS * i);
        if (jt == FREE) {  // the root: M's block Pᵀ IC P
            inertia_matrix(Pi, W);
            for (int r = 0; r < 6; ++r)
                for (int c = 0; c < 6; ++c) M[(vs + r) * n + vs + c] = W[detail::free_index(r) * 6 + detail::free_index(c)];
            continue;
        }
        const double* g = model.body_geom(i);
        const double x0 = g[G_AXIS], x1 = g[G_AXIS + 1], x2 = g[G_AXIS + 2];
        int o;
        if (jt == REVOLUTE) {  // F = IC_i S_i
            inertia_times(Pi, x0, x1, x2, 0.0, 0.0, 0.0, F[0]);
            o = 0;
        } else {
            inertia_times(Pi, 0.0, 0.0, 0.0, x0, x1, x2, F[0]);
            o = 3;
        }
        M[vs * n + vs] = x0 * F[0][o] + x1 * F[0][o + 1] + x2 * F[0][o + 2];
        int j = i, k = 0;
        while (model.parent(j) >= 0) {  // F = pX_j* F, into the other row
            for (int r = 0; r < 6; ++r) F[1 - k][r] = 0.0;
            add_parent_force(Xb, j, F[k], F[1 - k]);
            j = model.parent(j);
            k = 1 - k;
            const int js = model.v_start(j);
            if (model.joint(j) == FREE) {
                for (int r = 0; r < 6; ++r) {
                    const double m = F[k][detail::free_index(r)];
                    M[(js + r) * n + vs] = m;
                    M[vs * n + js + r] = m;
                }
            } else {
                const double* gj = model.body_geom(j);
                const int oj = model.joint(j) == REVOLUTE ? 0 : 3;
                const double m = gj[G_AXIS] * F[k][oj] + gj[G_AXIS + 1] * F[k][oj + 1] + gj[G_AXIS + 2] * F[k][oj + 2];
                M[js * n + vs] = m;
                M[vs * n + js] = m;
            }
        }
        if (p >= 0) detail::add_composite_parameters(Xb, i, P + N_PARAMETERS * i, P + N_PARAMETERS * p);
    }
    add_armature_mass(model, data.q.data(), M);
    return status;
}

}  // namespace coriolis
