// Second-order derivatives of the inverse dynamics τ(q, q̇, q̈), each an nv x nv x nv tensor with
// [i, j, k] = ∂/∂x_j (∂τ_i/∂y_k):
//
//   ∂²τ/∂q² (x = y = q),  ∂²τ/∂q̇² (x = y = q̇),  ∂²τ/∂q∂q̇ (x = q, y = q̇),  ∂²τ/∂q∂q̈ = ∂M/∂q.
//
// Derived here by differentiating rnea_derivatives.hpp's first-order entries along each q_k
// (Singh, Russell & Wensing, RA-L 2022 and arXiv 2203.01497, take the same route to O(N d²)). For a
// pair (i, j) of related columns, with X the body of the deeper of the two and composites I, İ, f
// of X's subtree,
//
//   ∂τ_i/∂q_j  = S_i·(İ_X ∂v/∂q_j + I_X ∂a/∂q_j) + [i above j's joint] S_i·(S_j ×* f_J),
//   ∂τ_i/∂q̇_j = S_i·(İ_X S_j + I_X ∂a/∂q̇_j),   M_ij = S_i·(I_X S_j).
//
// Moving q_k (body K, parent λ) carries the subtree of K rigidly along S_k and changes it
// intrinsically; what each factor does (Y a body, Z = the bodies of X's subtree also in K's):
//
//   ∂S_y = [Y ⪰ K] S_k × S_y,   ∂v_Y = [Y ⪰ K] (S_k × v_Y + ∂v/∂q_k),
//   ∂a_Y = [Y ⪰ K] (S_k × a_Y + a_λ × S_k + ∂v/∂q_k × (v_Y − v_λ)),
//   ∂I_X = [S_k, I_Z],   ∂İ_X = [S_k, İ_Z] + 2 B(∂v/∂q_k, I_Z),   ∂f_X = S_k ×* f_Z + İ_Z ∂v/∂q_k + I_Z ∂a/∂q_k,
//
// with [S, Y] = S ×* Y − Y S× and B the body-level Christoffel factor (core paper eq. 10); the
// per-column ∂v/∂q_j = v_λ × S_j, ∂a/∂q_j = a_λ × S_j + v_λ × ∂v/∂q_j, ∂a/∂q̇_j = v_J × S_j + ∂v/∂q_j
// follow by the product rule. In q̇ only İ and ∂a/∂q̇ move: ∂İ_X/∂q̇_k = 2 B(S_k, I_Z) and
// ∂(∂a/∂q̇_j)/∂q̇_k = ([J ⪰ K] + [λ_J ⪰ K]) S_k × S_j. On free, spherical and planar joints q moves in
// the tangent space (q ⊕ δ); ∂²τ/∂q² is then not symmetric in (j, k). A free joint's armature
// enters when it is the same on its three linear DoF (M_a = a 1: its a (ω × v) term); engine.hpp
// refuses unequal ones (M_a = Rᵀ A R turns with the base).
//
// Contracted with a co-state λ (Nganga & Wensing, RA-L 2021: the terms full DDP adds to iLQR), the
// four become nv x nv, Σ_i λ_i T[i, :, :]. Each entry above is a row's S_i (or ∂S_i) dotted with a
// factor of the pair, so the rows' sums Λ = Σ λ_i S_i over X's joint and over the joints above it
// (and their ∂/∂q_k, S_k × the part of Λ in K's subtree) replace the walk up the rows; the entries
// whose row is the deeper column d sum λ_d times its factors over the bodies below each column.
// Per direction k that is O(N + nv) instead of O(N d), and no nv³ tensor is formed.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "armature.hpp"
#include "rnea_derivatives.hpp"

namespace coriolis {

namespace detail {

// out = [S, Y] = S ×* Y − Y S× for a 6x6 Y (inertia-like: a motion in, a force out), by cross
// products: S ×* Y column by column, and as (S×)ᵀ = −S ×*, row r of Y S× is −(S ×* Y[r, :])ᵀ
inline void bracket(const double* s, const double* Y, double* out) {
    double col[6], x[6];
    for (int c = 0; c < 6; ++c) {
        for (int r = 0; r < 6; ++r) col[r] = Y[r * 6 + c];
        crf_vec(s, col, x);
        for (int r = 0; r < 6; ++r) out[r * 6 + c] = x[r];
    }
    for (int r = 0; r < 6; ++r) {
        crf_vec(s, Y + 6 * r, x);
        for (int c = 0; c < 6; ++c) out[r * 6 + c] += x[c];
    }
}

inline void add6(double* x, const double* y) {
    for (int r = 0; r < 6; ++r) x[r] += y[r];
}

// out = B(v, I)ᵀ y (B the Christoffel factor, core paper eq. 10: B m = ½[v ×* I m + m ×* I v − I (v × m)]),
// given I y and I v: ½[−I (v × y) − y ×* I v + v ×* I y]
inline void factor_transposed(const double* v, const double* I, const double* y, const double* Iy, const double* Iv,
                              double* out) {
    double a[6], b[6], c[6];
    crm_vec(v, y, a);
    matvec6(I, a, b);
    crf_vec(y, Iv, c);
    crf_vec(v, Iy, a);
    for (int r = 0; r < 6; ++r) out[r] = 0.5 * (a[r] - b[r] - c[r]);
}

// Contracted, for a body X strictly below K (Z = X, and ∂S_d = S_k × S_d on X's own columns, so
// ∂Λ_J = S_k × Λ_J): with [S, Y]ᵀ y = S ×* (Yᵀ y) − Yᵀ (S × y) and B(v, I)ᵀ by factor_transposed,
//   h1 = ∂İ_Xᵀ Λ = S_k ×* g1 − İ_Xᵀ (S_k × Λ) + 2 B(∂v/∂q_k, I_X)ᵀ Λ,   h2 = ∂I_X Λ = S_k ×* g2 − I_X (S_k × Λ),
//   h3 = B(S_k, I_X)ᵀ Λ, and the rows-below factors P13 = S_k ×* (İ_Xᵀ Λ_J) + 2 B(∂v/∂q_k, I_X)ᵀ Λ_J,
//   P25 = S_k ×* (I_X Λ_J), P7 = 2 B(S_k, I_X)ᵀ Λ_J (W: P13, P25, then P7 at 24; 12-23 are the caller's)
inline void moved_products(const double* sk, const double* dvk, const double* I, const double* Bc, const double* L,
                           const double* g1, const double* g2, const double* LJ, const double* BcLJ, const double* ILJ,
                           double* h1, double* h2, double* h3, double* W) {
    double sL[6], t[6], Is[6], Idv[6], x[6];
    crm_vec(sk, L, sL);
    matvec6(I, sk, Is);
    matvec6(I, dvk, Idv);
    crf_vec(sk, g2, h2);  // h2
    matvec6(I, sL, t);
    for (int r = 0; r < 6; ++r) h2[r] -= t[r];
    crf_vec(sk, g1, h1);  // h1
    matvec6_transposed(Bc, sL, t);
    for (int r = 0; r < 6; ++r) h1[r] -= t[r];
    factor_transposed(dvk, I, L, g2, Idv, x);
    for (int r = 0; r < 6; ++r) h1[r] += 2.0 * x[r];
    factor_transposed(sk, I, L, g2, Is, h3);  // h3
    crf_vec(sk, BcLJ, W);  // P13
    factor_transposed(dvk, I, LJ, ILJ, Idv, x);
    for (int r = 0; r < 6; ++r) W[r] += 2.0 * x[r];
    crf_vec(sk, ILJ, W + 6);  // P25
    factor_transposed(sk, I, LJ, ILJ, Is, W + 24);  // P7
    for (int r = 0; r < 6; ++r) W[24 + r] *= 2.0;
}

}  // namespace detail

// the free joints' a (ω × v) term, M_a = a 1: ∂²/∂v_j∂ω_k and ∂²/∂ω_k∂v_j of a ε_r·· into d2v
// (nv³), or, given λ, λ_r times them into its contraction (nv x nv)
inline void add_armature_second_derivatives(const Model& model, double* d2v, const double* lam = nullptr) {
    const int64_t n = model.nv;
    for (int b = 0; b < model.N; ++b) {
        if (!detail::is_free(model, b)) continue;
        const double a = armature_at(model, model.v_start(b));
        if (a == 0.0) continue;
        const int s = model.v_start(b);
        // (ω × v)_r = ε_rkj ω_k v_j
        for (int r = 0; r < 3; ++r)
            for (int k = 0; k < 3; ++k)
                for (int j = 0; j < 3; ++j) {
                    const int e = (r == k || k == j || r == j) ? 0 : ((k - r + 3) % 3 == 1 ? 1 : -1);
                    if (e == 0) continue;
                    if (lam) {
                        d2v[(s + 3 + k) * n + s + j] += lam[s + r] * a * e;
                        d2v[(s + j) * n + s + 3 + k] += lam[s + r] * a * e;
                        continue;
                    }
                    d2v[((s + r) * n + s + 3 + k) * n + s + j] += a * e;
                    d2v[((s + r) * n + s + j) * n + s + 3 + k] += a * e;
                }
    }
}

namespace detail {

// the four tensors (lam null) or their contractions with λ (the head of this file)
inline int64_t second_derivatives(const Model& model, Data& data, const double* q, const double* qd,
                                  const double* qdd, const double* gravity, const double* lam, double* d2q,
                                  double* d2v, double* dqv, double* dqa) {
    const int64_t status = forward_pass(model, data, q, qd, qdd, lam ? lam : qdd, lam ? 3 : 2);  // λ checked too
    if (failed(status)) return status;
    const int n = model.nv, N = model.N;
    // Every entry the robot's tree can fill is assigned below on every call, so the outputs are
    // zeroed once, by their owner (Data's block, fresh or batch arrays: calloc'd), as the first
    // derivatives' are: filling 4 nv³ doubles a call was 13 % of a reduced TALOS's time.
    const double *S = data.S.data(), *Sdot = data.Sdot.data(), *v = data.v.data();
    double* a = data.a.data();
    double a0[6], zero[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    root_acceleration(model, data.q.data(), gravity, a0);
    accelerations(model, S, Sdot, qd, qdd, a0, a);
    // composites I, İ = 2 B(v, I) and f of every body's subtree
    double *IC = data.IC.data(), *BC = data.BC.data(), *f = data.f.data();
    inertial_forces(N, IC, v, a, f);
    for (int i = 0; i < N; ++i) {
        body_factorization(v + 6 * i, IC + 36 * i, CHRISTOFFEL, BC + 36 * i);
        for (int k = 0; k < 36; ++k) BC[36 * i + k] *= 2.0;
    }
    for (int i = N - 1; i >= 0; --i) {
        const int p = model.parent(i);
        if (p < 0) continue;
        add_composite(IC + 36 * p, IC + 36 * i);
        add_composite(BC + 36 * p, BC + 36 * i);
        detail::add6(f + 6 * p, f + 6 * i);
    }
    auto v_of = [&](int Y) { return Y >= 0 ? v + 6 * Y : zero; };
    auto a_of = [&](int Y) { return Y >= 0 ? a + 6 * Y : a0; };
    double *dV = data.dVdq.data(), *dA = data.dAdq.data(), *dAv = data.dAdv.data();
    for (int j = 0; j < n; ++j) {  // ∂v/∂q_j, ∂a/∂q_j, ∂a/∂q̇_j
        const int L = model.parent(model.col_body(j));
        double t[6];
        crm_vec(v_of(L), S + 6 * j, dV + 6 * j);
        crm_vec(a_of(L), S + 6 * j, dA + 6 * j);
        crm_vec(v_of(L), dV + 6 * j, t);
        detail::add6(dA + 6 * j, t);
        for (int r = 0; r < 6; ++r) dAv[6 * j + r] = Sdot[6 * j + r] + dV[6 * j + r];
    }
    // contracted: per body X, Λ_J = Σ λ_s S_s over X's joint, Λ_A over the joints above it, and
    // their ∂/∂q_k (Lam: N x [Λ_J, Λ_A, ∂Λ_J, ∂Λ_A]); W: the rows' factors at X and summed below X
    // and what of the pairs' factors does not move with q_k, dotted with Λ once per call: per
    // body g1 = İ_Xᵀ Λ, g2 = I_X Λ (Λ = Λ_J + Λ_A), İ_Xᵀ Λ_J and I_X Λ_J; per column d (Pre) the
    // factors F_q, F_q̇, F_q̈ and the transport T of the head of the d loop, and Λ_A × S_d
    double *Lam = data.d2Lam.data(), *W = data.d2W.data(), *Pre = data.d2Pre.data();
    auto columns_of = [&](int X) { return std::pair<int, int>(model.v_start(X), X + 1 < N ? model.v_start(X + 1) : n); };
    // the factors of the columns that no direction moves, once per call (both modes): per column d
    // in body X, F_q, F_q̇, F_q̈, the transport T = S_d ×* f_X, and İ_Xᵀ S_d (tensors) or Λ_A × S_d
    if (!lam) {
        for (int X = 0; X < N; ++X) {
            const auto [first, end] = columns_of(X);
            for (int d = first; d < end; ++d) {
                double* F = Pre + 30 * d;
                const double* sd = S + 6 * d;
                double t[6];
                matvec6(BC + 36 * X, dV + 6 * d, F);
                matvec6(IC + 36 * X, dA + 6 * d, t);
                detail::add6(F, t);
                matvec6(BC + 36 * X, sd, F + 6);
                matvec6(IC + 36 * X, dAv + 6 * d, t);
                detail::add6(F + 6, t);
                matvec6(IC + 36 * X, sd, F + 12);
                crf_vec(sd, f + 6 * X, F + 18);
                matvec6_transposed(BC + 36 * X, sd, F + 24);
            }
        }
    }
    if (lam) {
        std::fill(Lam, Lam + 48 * N, 0.0);
        for (int X = 0; X < N; ++X) {
            double* LX = Lam + 48 * X;
            const auto [first, end] = columns_of(X);
            for (int s_ = first; s_ < end; ++s_)
                for (int r = 0; r < 6; ++r) LX[r] += lam[s_] * S[6 * s_ + r];
            const int P = model.parent(X);
            if (P >= 0)
                for (int r = 0; r < 6; ++r) LX[6 + r] = Lam[48 * P + 6 + r] + Lam[48 * P + r];
            double L[6], t[6];
            for (int r = 0; r < 6; ++r) L[r] = LX[r] + LX[6 + r];
            matvec6_transposed(BC + 36 * X, L, LX + 24);
            matvec6(IC + 36 * X, L, LX + 30);
            matvec6_transposed(BC + 36 * X, LX, LX + 36);
            matvec6(IC + 36 * X, LX, LX + 42);
            for (int d = first; d < end; ++d) {
                double* F = Pre + 30 * d;
                const double* sd = S + 6 * d;
                matvec6(BC + 36 * X, dV + 6 * d, F);  // F_q = İ_X ∂v/∂q_d + I_X ∂a/∂q_d
                matvec6(IC + 36 * X, dA + 6 * d, t);
                detail::add6(F, t);
                matvec6(BC + 36 * X, sd, F + 6);  // F_q̇ = İ_X S_d + I_X ∂a/∂q̇_d
                matvec6(IC + 36 * X, dAv + 6 * d, t);
                detail::add6(F + 6, t);
                matvec6(IC + 36 * X, sd, F + 12);  // F_q̈ = I_X S_d
                crf_vec(sd, f + 6 * X, F + 18);    // T = S_d ×* f_X
                crm_vec(LX + 6, sd, F + 24);       // Λ_A × S_d
            }
        }
    }
    auto in_subtree = [&](int Y, int K) { return Y >= K && Y < model.body_end[K]; };  // Y ⪰ K
    std::vector<int> order(N);  // per direction: the bodies related to it
    double *dS = data.d2S.data(), *ddV = data.d2V.data(), *ddA = data.d2A.data(), *ddAv = data.d2Av.data();
    double *dIC = data.d2IC.data(), *dBC = data.d2BC.data(), *dBv = data.d2Bv.data(), *df = data.d2f.data();
    double dvY[6], daY[6], dvJ[6], t[6], u[6];
    for (int k = 0; k < n; ++k) {  // the direction q_k (and q̇_k)
        const int K = model.col_body(k), LK = model.parent(K);
        const double *sk = S + 6 * k, *dvk = dV + 6 * k;
        // the motion of a body Y as q_k moves: ∂v_Y, ∂a_Y (zero outside K's subtree)
        auto body_motion = [&](int Y, double* dv_out, double* da_out) {
            if (Y < 0 || !in_subtree(Y, K)) {
                std::fill(dv_out, dv_out + 6, 0.0);
                if (da_out) std::fill(da_out, da_out + 6, 0.0);
                return;
            }
            crm_vec(sk, v + 6 * Y, dv_out);
            detail::add6(dv_out, dvk);
            if (!da_out) return;
            double w[6], x[6];
            crm_vec(sk, a + 6 * Y, da_out);
            crm_vec(a_of(LK), sk, x);
            detail::add6(da_out, x);
            const double* vl = v_of(LK);
            for (int r = 0; r < 6; ++r) w[r] = v[6 * Y + r] - vl[r];
            crm_vec(dvk, w, x);
            detail::add6(da_out, x);
        };
        for (int j = 0; j < n; ++j) {  // ∂S_j, ∂(∂v/∂q_j), ∂(∂a/∂q_j), ∂(∂a/∂q̇_j)
            const int J = model.col_body(j), L = model.parent(J);
            const double* sj = S + 6 * j;
            double* dsj = dS + 6 * j;
            if (!in_subtree(J, K)) {  // then J's parent is not in it either: nothing of column j moves
                if (in_subtree(K, J))  // read as a column above K's pairs; the unrelated are never read
                    for (double* x : {dsj, ddV + 6 * j, ddA + 6 * j, ddAv + 6 * j}) std::fill(x, x + 6, 0.0);
                continue;
            }
            crm_vec(sk, sj, dsj);
            body_motion(L, dvY, daY);
            crm_vec(dvY, sj, ddV + 6 * j);  // ∂v_λ × S_j + v_λ × ∂S_j
            crm_vec(v_of(L), dsj, t);
            detail::add6(ddV + 6 * j, t);
            crm_vec(daY, sj, ddA + 6 * j);  // ∂a_λ × S_j + a_λ × ∂S_j + ∂v_λ × ∂v/∂q_j + v_λ × ∂(∂v/∂q_j)
            crm_vec(a_of(L), dsj, t);
            detail::add6(ddA + 6 * j, t);
            crm_vec(dvY, dV + 6 * j, t);
            detail::add6(ddA + 6 * j, t);
            crm_vec(v_of(L), ddV + 6 * j, t);
            detail::add6(ddA + 6 * j, t);
            body_motion(J, dvJ, nullptr);  // ∂(v_J × S_j) + ∂(∂v/∂q_j)
            crm_vec(dvJ, sj, ddAv + 6 * j);
            crm_vec(v + 6 * J, dsj, t);
            detail::add6(ddAv + 6 * j, t);
            detail::add6(ddAv + 6 * j, ddV + 6 * j);
        }
        // the bodies related to K, the only ones whose entries move: its ancestors, then its subtree
        int related = 0;
        for (int Y = model.parent(K); Y >= 0; Y = model.parent(Y)) order[related++] = Y;
        for (int Y = K; Y < model.body_end[K]; ++Y) order[related++] = Y;
        if (lam) {  // ∂Λ_J, ∂Λ_A along q_k (zero above K: ∂S_s is zero outside K's subtree), and W cleared
            for (int i = 0; i < related; ++i) {
                const int X = order[i];
                double* LX = Lam + 48 * X;
                std::fill(LX + 12, LX + 24, 0.0);
                std::fill(W + 60 * X, W + 60 * X + 60, 0.0);
                if (X < K) continue;
                const auto [first, end] = columns_of(X);
                for (int s_ = first; s_ < end; ++s_)
                    for (int r = 0; r < 6; ++r) LX[12 + r] += lam[s_] * dS[6 * s_ + r];
                const int P = model.parent(X);
                if (X > K)
                    for (int r = 0; r < 6; ++r) LX[18 + r] = Lam[48 * P + 18 + r] + Lam[48 * P + 12 + r];
            }
        }
        // the composites' changes: Z = K's subtree within X's, i.e. X if X ⪰ K, K if K ⪰ X, else none;
        // only bodies X related to K have any, and only pairs whose deeper body is such an X move
        for (int Z = K; Z < model.body_end[K]; ++Z) {  // what depends on Z alone, kept at Z (K's for K's ancestors)
            double B2[36];
            // ∂f_Z always; contracted, the 6x6 changes below K are only ever applied to a vector
            crf_vec(sk, f + 6 * Z, df + 6 * Z);
            matvec6(BC + 36 * Z, dvk, t);
            detail::add6(df + 6 * Z, t);
            matvec6(IC + 36 * Z, dA + 6 * k, t);
            detail::add6(df + 6 * Z, t);
            if (lam && Z != K) continue;
            detail::bracket(sk, IC + 36 * Z, dIC + 36 * Z);
            detail::bracket(sk, BC + 36 * Z, dBC + 36 * Z);
            body_factorization(dvk, IC + 36 * Z, CHRISTOFFEL, B2);
            for (int r = 0; r < 36; ++r) dBC[36 * Z + r] += 2.0 * B2[r];
            body_factorization(sk, IC + 36 * Z, CHRISTOFFEL, dBv + 36 * Z);  // B(S_k, I_Z), for q̇_k
        }
        for (int i = 0; i < related; ++i) {
            const int X = order[i], Z = X < K ? K : X;
            const double *ICx = IC + 36 * X, *BCx = BC + 36 * X, *dICx = dIC + 36 * Z, *dBCx = dBC + 36 * Z;
            const double* dBvx = dBv + 36 * Z;
            const int first = model.v_start(X), end = first + (X + 1 < N ? model.v_start(X + 1) : n) - first;
            if (lam) {  // contracted: the rows of X's joint and above it at once; those below, per body
                const double *LX = Lam + 48 * X, *LJ = LX, *LA = LX + 6, *dLJ = LX + 12, *dLA = LX + 18;
                const double *g1 = LX + 24, *g2 = LX + 30, *dfZ = df + 6 * Z, *fX = f + 6 * X;
                double L[6], dL[6], h1[6], h2[6], h3[6];
                for (int r = 0; r < 6; ++r) {
                    L[r] = LJ[r] + LA[r];
                    dL[r] = dLJ[r] + dLA[r];
                }
                double* WX = W + 60 * X;  // Σ_d λ_d of the rows-below factors: P13, P25, P4, F_q̈, P7
                std::copy(LX + 36, LX + 48, WX + 12);
                if (Z == K) {  // K and its ancestors: ∂İ_Xᵀ Λ, ∂I_X Λ, B(S_k, I_Z)ᵀ Λ from K's matrices
                    matvec6_transposed(dBCx, L, h1);
                    matvec6(dICx, L, h2);
                    matvec6_transposed(dBvx, L, h3);
                    matvec6_transposed(BCx, dLJ, WX);
                    matvec6_transposed(dBCx, LJ, t);
                    detail::add6(WX, t);
                    matvec6(ICx, dLJ, WX + 6);
                    matvec6(dICx, LJ, t);
                    detail::add6(WX + 6, t);
                    matvec6_transposed(dBvx, LJ, WX + 24);
                    for (int r = 0; r < 6; ++r) WX[24 + r] *= 2.0;
                } else {  // below K the same products without the matrices (the head's contraction note)
                    detail::moved_products(sk, dvk, ICx, BCx, L, g1, g2, LJ, LX + 36, LX + 42, h1, h2, h3, WX);
                }
                const int LX_ = model.parent(X);
                const int count = int(in_subtree(X, K)) + int(LX_ >= 0 && in_subtree(LX_, K));
                for (int d = first; d < end; ++d) {
                    const double *sd = S + 6 * d, *dsd = dS + 6 * d, *F = Pre + 30 * d;
                    const int64_t at = int64_t(k) * n + d;
                    crm_vec(LA, dsd, t);  // Λ_A · ∂T = f_X · (Λ_A × ∂S_d) + ∂f_Z · (Λ_A × S_d)
                    d2q[at] += dot6(dL, F) + dot6(dLA, F + 18) + dot6(g1, ddV + 6 * d) + dot6(g2, ddA + 6 * d) +
                               dot6(h1, dV + 6 * d) + dot6(h2, dA + 6 * d) + dot6(fX, t) + dot6(dfZ, F + 24);
                    dqv[at] += dot6(dL, F + 6) + dot6(g1, dsd) + dot6(g2, ddAv + 6 * d) + dot6(h1, sd) +
                               dot6(h2, dAv + 6 * d);
                    dqa[at] += dot6(dL, F + 12) + dot6(g2, dsd) + dot6(h2, sd);
                    double e = 2.0 * dot6(h3, sd);
                    if (count) {
                        crm_vec(sk, sd, u);
                        e += count * dot6(g2, u);
                    }
                    d2v[at] += e;
                }
                continue;
            }
            for (int d = first; d < end; ++d) {  // d: the deeper column of the pairs, in X
                const double *sd = S + 6 * d, *dsd = dS + 6 * d, *F = Pre + 30 * d;
                // as the column j of a pair with a row s above or beside it (X = d's body):
                // F = İ_X ∂v/∂q_d + I_X ∂a/∂q_d (Pre) and its change dF, likewise for q̇, M and q̇q̇
                const double *Fq = F, *Fv = F + 6, *Fa = F + 12, *T = F + 18, *P4 = F + 24;
                double dFq[6], dFv[6], dFa[6], Fvv[6], dT[6];
                matvec6(BCx, ddV + 6 * d, dFq);
                matvec6(ICx, ddA + 6 * d, t);
                detail::add6(dFq, t);
                matvec6(dBCx, dV + 6 * d, t);
                detail::add6(dFq, t);
                matvec6(dICx, dA + 6 * d, t);
                detail::add6(dFq, t);
                matvec6(BCx, dsd, dFv);
                matvec6(ICx, ddAv + 6 * d, t);
                detail::add6(dFv, t);
                matvec6(dBCx, sd, t);
                detail::add6(dFv, t);
                matvec6(dICx, dAv + 6 * d, t);
                detail::add6(dFv, t);
                matvec6(ICx, dsd, dFa);
                matvec6(dICx, sd, t);
                detail::add6(dFa, t);
                matvec6(dBvx, sd, Fvv);
                for (int r = 0; r < 6; ++r) Fvv[r] *= 2.0;
                const int LX = model.parent(X);
                const int count = int(in_subtree(X, K)) + int(LX >= 0 && in_subtree(LX, K));
                if (count) {
                    crm_vec(sk, sd, u);
                    matvec6(ICx, u, t);
                    for (int r = 0; r < 6; ++r) Fvv[r] += count * t[r];
                }
                crf_vec(dsd, f + 6 * X, dT);  // the transport term's change, for rows above X's joint
                crf_vec(sd, df + 6 * Z, t);
                detail::add6(dT, t);
                // as the row i of a pair with a column s above X (X = d's body): the transposed factors
                double P13[6], P7[6];
                for (int r = 0; r < 6; ++r) {
                    double p1 = 0.0, p3 = 0.0, p7 = 0.0;
                    for (int c = 0; c < 6; ++c) {
                        p1 += BCx[6 * c + r] * dsd[c];
                        p3 += dBCx[6 * c + r] * sd[c];
                        p7 += dBvx[6 * c + r] * sd[c];
                    }
                    P13[r] = p1 + p3;
                    P7[r] = 2.0 * p7;
                }
                const double* P25 = dFa;  // I_X ∂S_d + ∂I_X S_d transposed is itself: both are symmetric
                // rows s in X's joint (j = d, no transport), then the columns above X's joint
                for (int s_ = first; s_ < end; ++s_) {
                    const double *ss = S + 6 * s_, *dss = dS + 6 * s_;
                    const int64_t at = (int64_t(s_) * n + k) * n + d;
                    d2q[at] = dot6(dss, Fq) + dot6(ss, dFq);
                    dqv[at] = dot6(dss, Fv) + dot6(ss, dFv);
                    dqa[at] = dot6(dss, Fa) + dot6(ss, dFa);
                    d2v[at] = dot6(ss, Fvv);
                }
                for (int s_ = model.col_previous(first); s_ >= 0; s_ = model.col_previous(s_)) {
                    const double *ss = S + 6 * s_, *dss = dS + 6 * s_;
                    const int64_t above = (int64_t(s_) * n + k) * n + d;  // row s, column d
                    d2q[above] = dot6(dss, Fq) + dot6(dss, T) + dot6(ss, dFq) + dot6(ss, dT);
                    dqv[above] = dot6(dss, Fv) + dot6(ss, dFv);
                    dqa[above] = dot6(dss, Fa) + dot6(ss, dFa);
                    d2v[above] = dot6(ss, Fvv);
                    const int64_t below = (int64_t(d) * n + k) * n + s_;  // row d, column s
                    const double *dvs = dV + 6 * s_, *das = dA + 6 * s_, *dAvs = dAv + 6 * s_;
                    d2q[below] = dot6(P13, dvs) + dot6(P25, das) + dot6(P4, ddV + 6 * s_) + dot6(Fa, ddA + 6 * s_);
                    dqv[below] = dot6(P13, ss) + dot6(P25, dAvs) + dot6(P4, dss) + dot6(Fa, ddAv + 6 * s_);
                    dqa[below] = dot6(P25, ss) + dot6(Fa, dss);
                    const int S_body = model.col_body(s_), LS = model.parent(S_body);
                    const int count_s = int(in_subtree(S_body, K)) + int(LS >= 0 && in_subtree(LS, K));
                    double e = dot6(P7, ss);
                    if (count_s) {
                        crm_vec(sk, ss, u);
                        e += count_s * dot6(Fa, u);
                    }
                    d2v[below] = e;
                }
            }
        }
        if (!lam) continue;
        // contracted: the rows below each column s (the deeper columns d of its pairs), by the
        // factors summed over the bodies below s's body
        const int ancestors = related - (model.body_end[K] - K);
        auto pass_up = [&](int X) {
            const int P = model.parent(X);
            if (P < 0) return;
            double *below = W + 60 * P + 30, *at = W + 60 * X;
            for (int r = 0; r < 30; ++r) below[r] += at[r] + at[30 + r];
        };
        for (int i = related - 1; i >= ancestors; --i) pass_up(order[i]);  // the subtree, from its leaves
        for (int i = 0; i < ancestors; ++i) pass_up(order[i]);              // then K's ancestors, deepest first
        for (int i = 0; i < related; ++i) {
            const auto [first_s, end_s] = columns_of(order[i]);
            for (int s_ = first_s; s_ < end_s; ++s_) {
            const int Y = model.col_body(s_), LY = model.parent(Y);
            const double *B = W + 60 * Y + 30, *ss = S + 6 * s_, *dss = dS + 6 * s_;
            const double *B13 = B, *B25 = B + 6, *B4 = B + 12, *BFa = B + 18, *B7 = B + 24;
            const int64_t at = int64_t(k) * n + s_;
            d2q[at] += dot6(B13, dV + 6 * s_) + dot6(B25, dA + 6 * s_) + dot6(B4, ddV + 6 * s_) + dot6(BFa, ddA + 6 * s_);
            dqv[at] += dot6(B13, ss) + dot6(B25, dAv + 6 * s_) + dot6(B4, dss) + dot6(BFa, ddAv + 6 * s_);
            dqa[at] += dot6(B25, ss) + dot6(BFa, dss);
            double e = dot6(B7, ss);
            const int count_s = int(in_subtree(Y, K)) + int(LY >= 0 && in_subtree(LY, K));
            if (count_s) {
                crm_vec(sk, ss, u);
                e += count_s * dot6(BFa, u);
            }
            d2v[at] += e;
            }
        }
    }
    add_armature_second_derivatives(model, d2v, lam);
    return status;
}

}  // namespace detail

// d2q, d2v, dqv, dqa: nv³ each, [i, j, k] = ∂/∂x_j (∂τ_i/∂y_k) as above. Returns a status code.
inline int64_t rnea_second_derivatives(const Model& model, Data& data, const double* q, const double* qd,
                                       const double* qdd, const double* gravity, double* d2q, double* d2v, double* dqv,
                                       double* dqa) {
    return detail::second_derivatives(model, data, q, qd, qdd, gravity, nullptr, d2q, d2v, dqv, dqa);
}

// their contractions Σ_i λ_i T[i, :, :] into c2q, c2v, cqv, cqa (nv x nv each), without the tensors
inline int64_t rnea_second_derivatives_contracted(const Model& model, Data& data, const double* q, const double* qd,
                                                  const double* qdd, const double* lam, const double* gravity,
                                                  double* c2q, double* c2v, double* cqv, double* cqa) {
    const int64_t n2 = int64_t(model.nv) * model.nv;
    for (double* o : {c2q, c2v, cqv, cqa}) std::fill(o, o + n2, 0.0);
    return detail::second_derivatives(model, data, q, qd, qdd, gravity, lam, c2q, c2v, cqv, cqa);
}

}  // namespace coriolis
