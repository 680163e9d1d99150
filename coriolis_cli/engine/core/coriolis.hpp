// Algorithm 1 of Echeandia & Wensing: M, Ṁ and C in O(Nd), in the computation frame (the world-frame
// form of docs/algorithms.md, Algorithm 1; each "line N" below is a line of that listing).
//
// Names follow the listing: F1, F2, F3, IC (composite inertia), BC (composite body-level
// factorization). In this frame the composites are plain sums and the inner while-loop is dot
// products only. A multi-DoF joint is handled column by column: its columns form a chain and
// share the body's IC and BC, which is eq. (18).
#pragma once

#include "armature.hpp"
#include "kinematics.hpp"

namespace coriolis {

// M, Ṁ, C into the three nv x nv outputs (related DoF only: the rest keeps the zeros it holds);
// returns a status code
inline int64_t coriolis_matrix(const Model& model, Data& data, const double* q, const double* qd, int factorization,
                               double* M, double* Mdot, double* C) {
    const int N = model.N, n = model.nv;
    // Algorithm 1, lines 1-7: forward sweep. v_i, Ṡ_i = v_i × S_i, IC_i = I_i, then BC_i = B(v_i, I_i)
    const int64_t status = forward_pass(model, data, q, qd, qd, qd, 1);
    if (failed(status)) return status;
    const double *S = data.S.data(), *Sd = data.Sdot.data();
    double *IC = data.IC.data(), *BC = data.BC.data();
    for (int i = 0; i < N; ++i) body_factorization(data.v.data() + 6 * i, IC + 36 * i, factorization, BC + 36 * i);
    double F1[6], F2[6], F3[6];
    // Algorithm 1, lines 8-26: backward sweep
    for (int j = n - 1; j >= 0; --j) {
        const int b = model.col_body(j);
        const double *ICb = IC + 36 * b, *BCb = BC + 36 * b, *Sj = S + 6 * j, *Sdj = Sd + 6 * j;
        for (int r = 0; r < 6; ++r) {
            double s1 = 0.0, s2 = 0.0, s3 = 0.0;
            for (int c = 0; c < 6; ++c) {
                s1 += ICb[r * 6 + c] * Sdj[c] + BCb[r * 6 + c] * Sj[c];  // line 9: F1 = IC_j Ṡ_j + BC_j S_j
                s2 += ICb[r * 6 + c] * Sj[c];                            // line 10: F2 = IC_j S_j
                s3 += BCb[c * 6 + r] * Sj[c];                            // line 11: F3 = BC_jᵀ S_j
            }
            F1[r] = s1;
            F2[r] = s2;
            F3[r] = s3;
        }
        double c_jj = 0.0, m_jj = 0.0, md_jj = 0.0;
        for (int r = 0; r < 6; ++r) {
            c_jj += Sj[r] * F1[r];                                 // line 12
            m_jj += Sj[r] * F2[r];                                 // line 13
            md_jj += Sdj[r] * F2[r] + Sj[r] * (F1[r] + F3[r]);  // line 14
        }
        C[j * n + j] = c_jj;
        M[j * n + j] = m_jj;
        Mdot[j * n + j] = md_jj;
        for (int i = model.col_previous(j); i >= 0; i = model.col_previous(i)) {  // lines 16-23
            const int u = model.col_unit(i);
            const double *Si = S + 6 * i, *Sdi = Sd + 6 * i;
            double cij, mij, cji = 0.0;
            if (u >= 0) {  // S_i = e_u (free joint in the base frame): the products are picks
                cij = F1[u];
                mij = F2[u];
                for (int r = 0; r < 6; ++r) cji += Sdi[r] * F2[r];
                cji += F3[u];
            } else {
                cij = 0.0;
                mij = 0.0;
                for (int r = 0; r < 6; ++r) {
                    cij += Si[r] * F1[r];                   // line 19
                    cji += Sdi[r] * F2[r] + Si[r] * F3[r];  // line 20
                    mij += Si[r] * F2[r];                   // line 21
                }
            }
            C[i * n + j] = cij;
            C[j * n + i] = cji;
            M[i * n + j] = mij;
            M[j * n + i] = mij;
            Mdot[i * n + j] = cij + cji;  // line 22: Ṁ_ij = C_ij + C_jiᵀ
            Mdot[j * n + i] = cij + cji;
        }
        // lines 24-25, once the body's first column is done: plain sums in this frame
        if (model.is_first_column(j)) {
            const int p = model.parent(b);
            if (p >= 0) {
                add_composite(IC + 36 * p, IC + 36 * b);
                add_composite(BC + 36 * p, BC + 36 * b);
            }
        }
    }
    add_armature_mass(model, data.q.data(), M);
    add_armature_coriolis(model, data.q.data(), qd, Mdot, C);
    return status;
}

}  // namespace coriolis
