// Algorithm 2 of Echeandia & Wensing: Christoffel symbols of the first kind in O(Nd²) (the
// world-frame form of docs/algorithms.md, Algorithm 2; each "line N" below is a line of that listing),
//
//   Γ_ijk = ½ (∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i),  so that C_ij = Σ_k Γ_ijk q̇_k.
//
// In the computation frame composite inertias are plain sums, and B̃, D need no transforms down
// the tree. For a free joint (generalized speeds ν) Γ[:, :, k] = C(q, e_k): the entries whose last
// two indices are two columns of one multi-DoF joint are not symmetric; they are
// Γ_abc = S_aᵀ B(S_b, IC) S_c with IC the composite of the deeper of a's body and the joint's body,
// and are set after the sweep.
#pragma once

#include "armature.hpp"
#include "kinematics.hpp"

namespace coriolis {

namespace detail {

// a ⪯ b: body a lies on the path from b to the root
inline bool is_ancestor(const Model& model, int a, int b) {
    for (; b >= 0; b = model.parent(b))
        if (b == a) return true;
    return false;
}

}  // namespace detail

// Γ into `Gamma` (nv x nv x nv); only entries of mutually related DoF are written (clearing nv³
// entries would cost more than the algorithm on branched trees). Returns a status code.
inline int64_t christoffel(const Model& model, Data& data, const double* q, double* Gamma) {
    const int N = model.N, n = model.nv;
    auto G = [&](int i, int j, int k) -> double& { return Gamma[(int64_t(i) * n + j) * n + k]; };
    const int64_t status = placements(model, data, q);
    if (failed(status)) return status;
    const double* S = data.S.data();
    double* IC = data.IC.data();
    for (int i = N - 1; i >= 0; --i) {  // Algorithm 2, lines 1-3 and 22: IC_k = Σ_{l ⪰ k} I_l
        const int p = model.parent(i);
        if (p >= 0) add_composite(IC + 36 * p, IC + 36 * i);
    }
    double Bt[36], D[36], F1[6], F2[6], F3[6], h[6];
    for (int k = n - 1; k >= 0; --k) {
        const double *Sk = S + 6 * k, *ICk = IC + 36 * model.col_body(k);
        body_factorization(Sk, ICk, CHRISTOFFEL, Bt);  // line 5: B̃ = B(S_k, IC_k)
        matvec6(ICk, Sk, h);
        bar_crf_minus(h, Bt, D);  // line 6: D = (IC_k S_k) ×̄* − B̃
        for (int j = k; j >= 0; j = model.col_previous(j)) {  // lines 8-21
            const int uj = model.col_unit(j);
            const double* Sj = S + 6 * j;
            for (int r = 0; r < 6; ++r) {
                if (uj >= 0) {  // S_j = e_u: columns and rows are picks
                    F1[r] = Bt[r * 6 + uj];
                    F2[r] = Bt[uj * 6 + r];
                    F3[r] = D[r * 6 + uj];
                    continue;
                }
                double s1 = 0.0, s2 = 0.0, s3 = 0.0;
                for (int c = 0; c < 6; ++c) {
                    s1 += Bt[r * 6 + c] * Sj[c];  // line 9: F1 = B̃ S_j
                    s2 += Bt[c * 6 + r] * Sj[c];  // F2 = B̃ᵀ S_j
                    s3 += D[r * 6 + c] * Sj[c];   // F3 = D S_j
                }
                F1[r] = s1;
                F2[r] = s2;
                F3[r] = s3;
            }
            for (int i = j; i >= 0; i = model.col_previous(i)) {
                const int ui = model.col_unit(i);
                double g1, g2, g3;
                if (ui >= 0) {
                    g1 = F1[ui];
                    g2 = F2[ui];
                    g3 = F3[ui];
                } else {
                    const double* Si = S + 6 * i;
                    g1 = 0.0;
                    g2 = 0.0;
                    g3 = 0.0;
                    for (int r = 0; r < 6; ++r) {
                        g1 += Si[r] * F1[r];  // line 12
                        g2 += Si[r] * F2[r];  // line 13
                        g3 += Si[r] * F3[r];  // line 14
                    }
                }
                G(i, j, k) = g1;
                G(i, k, j) = g1;
                G(j, i, k) = g2;
                G(j, k, i) = g2;
                G(k, i, j) = g3;
                G(k, j, i) = g3;
            }
        }
    }
    // generalized speeds of multi-DoF joints: Γ_abc = S_aᵀ B(S_b, IC) S_c for b, c in one joint
    // (docs/algorithms.md, Algorithm 2, "Multi-DoF joints and generalized speeds")
    double Bb[36], U[6 * 6];  // U[c − c0] = B(S_b, IC) S_c
    for (int c0 = 0, c1 = 0; c0 < n; c0 = c1) {
        const int J = model.col_body(c0);
        for (c1 = c0; c1 < n && model.col_body(c1) == J;) ++c1;
        if (c1 - c0 <= 1) continue;
        for (int A = 0; A < N; ++A) {
            int deep;
            if (detail::is_ancestor(model, J, A))
                deep = A;
            else if (detail::is_ancestor(model, A, J))
                deep = J;
            else
                continue;
            for (int b = c0; b < c1; ++b) {
                body_factorization(S + 6 * b, IC + 36 * deep, CHRISTOFFEL, Bb);
                for (int c = c0; c < c1; ++c) {
                    const int uc = model.col_unit(c);
                    for (int r = 0; r < 6; ++r) {
                        if (uc >= 0) {  // S_c = e_u
                            U[(c - c0) * 6 + r] = Bb[r * 6 + uc];
                            continue;
                        }
                        double br = 0.0;
                        for (int t = 0; t < 6; ++t) br += Bb[r * 6 + t] * S[6 * c + t];
                        U[(c - c0) * 6 + r] = br;
                    }
                }
                for (int x = 0; x < n; ++x) {
                    if (model.col_body(x) != A) continue;
                    for (int c = c0; c < c1; ++c) {
                        double g = 0.0;
                        for (int r = 0; r < 6; ++r) g += S[6 * x + r] * U[(c - c0) * 6 + r];
                        G(x, b, c) = g;
                    }
                }
            }
        }
    }
    add_armature_christoffel(model, data.q.data(), Gamma);
    return status;
}

}  // namespace coriolis
