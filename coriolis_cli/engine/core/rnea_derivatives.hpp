// First-order derivatives of the inverse dynamics, ∂τ/∂q, ∂τ/∂q̇ and ∂τ/∂q̈ = M, in O(N d) by one
// forward and one backward pass (Carpentier & Mansard, "Analytical Derivatives of Rigid Body
// Dynamics Algorithms", RSS 2018, Alg. 1; the same passes as Pinocchio's computeRNEADerivatives),
// in the computation frame, for trees of any joints on a fixed or floating base.
//
// Forward, per body i with parent λ and per column (DoF) c of its joint, with S_c its motion
// subspace and a_i the acceleration less gravity (a_0 = −g):
//
//   Ṡ_c = v_i × S_c,   ∂v/∂q_c = v_λ × S_c,   ∂a/∂q_c = a_λ × S_c + v_λ × ∂v/∂q_c,
//   ∂a/∂q̇_c = Ṡ_c + ∂v/∂q_c,   f_i = I_i a_i + v_i ×* I_i v_i,
//   İ_i = v_i ×* I_i − I_i v_i× + (I_i v_i) ×̄* = 2 B(v_i, I_i)  (core paper eq. 10).
//
// Backward, with I, İ and f the composites of the subtree of i (c's body), and d the columns
// strictly below c in it:
//
//   τ_c = S_cᵀ f,   F^a_c = I S_c,   M[c, c..] = S_cᵀ F^a[c..],
//   F^q_c = İ ∂v/∂q_c + I ∂a/∂q_c,   Y_c = İᵀ S_c,
//   ∂τ_d/∂q_c = F^a_dᵀ ∂a/∂q_c + Y_dᵀ ∂v/∂q_c,   ∂τ_c/∂q[c..] = S_cᵀ F^q[c..],   then F^q_c += S_c ×* f,
//   F^v_c = İ S_c + I ∂a/∂q̇_c,
//   ∂τ_d/∂q̇_c = F^a_dᵀ ∂a/∂q̇_c + Y_dᵀ S_c,   ∂τ_c/∂q̇[c..] = S_cᵀ F^v[c..].
//
// On a multi-DoF joint (free, spherical, planar) q_c is a coordinate of the tangent space: the
// child moves by exp(S_c δ), S constant in the child frame, as Pinocchio's integrate(q, δ) does.
// The joint's own rows take F^q before the transport term S ×* f, which only the columns above
// the joint see (the torques of a joint turn with its child). A free root's S is constant in the
// computation frame, which moves with the base, so ∂/∂q of its columns is gravity turning
// relative to the robot: ∂a/∂q_c = a_0 × S_c.
#pragma once

#include <algorithm>

#include "armature.hpp"
#include "kinematics.hpp"
#include "rnea.hpp"

namespace coriolis {

// one past the last column of the subtree rooted at body b: in preorder its bodies are b and those
// after it whose parent is not before b, and its columns are contiguous
inline int subtree_end_column(const Model& model, int b) {
    int after = b + 1;
    while (after < model.N && model.parent(after) >= b) ++after;
    return after < model.N ? model.v_start(after) : model.nv;
}

// Once body b's columns (from its first, c) are done: the subtree moved by q_k carries its force f_b
// with it, F^q_k += S_k ×* f_b, which the columns above the joint see but not the joint's own (S of
// the joint moves with the child too); then b's force into its parent's. The composites of inertia
// the callers add themselves.
inline void transport_force(const Model& model, const double* S, int c, int b, double* f, double* Fq) {
    double t[6];
    for (int k = c; k < model.nv && model.col_body(k) == b; ++k) {
        crf_vec(S + 6 * k, f + 6 * b, t);
        for (int r = 0; r < 6; ++r) Fq[6 * k + r] += t[r];
    }
    const int p = model.parent(b);
    if (p >= 0)
        for (int r = 0; r < 6; ++r) f[6 * p + r] += f[6 * b + r];
}

inline int64_t rnea_derivatives(const Model& model, Data& data, const double* q, const double* qd, const double* qdd,
                                const double* gravity, double* dtau_dq, double* dtau_dv, double* M) {
    const int64_t status = forward_pass(model, data, q, qd, qdd, qdd, 2);
    if (failed(status)) return status;
    const int n = model.nv, N = model.N;
    // entries of DoF in different branches are zero and never written below
    std::fill(dtau_dq, dtau_dq + int64_t(n) * n, 0.0);
    std::fill(dtau_dv, dtau_dv + int64_t(n) * n, 0.0);
    std::fill(M, M + int64_t(n) * n, 0.0);
    const double *S = data.S.data(), *Sdot = data.Sdot.data(), *v = data.v.data();
    double* a = data.a.data();
    double a0[6];
    root_acceleration(model, data.q.data(), gravity, a0);  // a_0 = −g
    accelerations(model, S, Sdot, qd, qdd, a0, a);
    double *dVdq = data.dVdq.data(), *dAdq = data.dAdq.data(), *dAdv = data.dAdv.data();
    for (int c = 0; c < n; ++c) {
        const int b = model.col_body(c), p = model.parent(b);
        const double* ap = p >= 0 ? a + 6 * p : a0;
        double* dv = dVdq + 6 * c;
        double* da = dAdq + 6 * c;
        if (p >= 0) {
            crm_vec(v + 6 * p, S + 6 * c, dv);
        } else {
            for (int r = 0; r < 6; ++r) dv[r] = 0.0;
        }
        crm_vec(ap, S + 6 * c, da);
        if (p >= 0) {
            double t[6];
            crm_vec(v + 6 * p, dv, t);
            for (int r = 0; r < 6; ++r) da[r] += t[r];
        }
        for (int r = 0; r < 6; ++r) dAdv[6 * c + r] = Sdot[6 * c + r] + dv[r];
    }
    // per body: f_i and İ_i (into f and BC), I_i stays in IC; all three become composites below
    inertial_forces(N, data.IC.data(), v, a, data.f.data());
    for (int i = 0; i < N; ++i) {
        body_factorization(v + 6 * i, data.IC.data() + 36 * i, 0, data.BC.data() + 36 * i);
        for (int k = 0; k < 36; ++k) data.BC[36 * i + k] *= 2.0;
    }
    double *Fa = data.dFda.data(), *Fq = data.dFdq.data(), *Fv = data.dFdv.data(), *Y = data.dYtJ.data();
    double* f = data.f.data();
    for (int c = n - 1; c >= 0; --c) {
        const int b = model.col_body(c);
        const double *I = data.IC.data() + 36 * b, *Id = data.BC.data() + 36 * b, *Sc = S + 6 * c;
        const int end = subtree_end_column(model, b);
        // τ and M
        data.tau[c] = dot6(Sc, f + 6 * b);
        matvec6(I, Sc, Fa + 6 * c);
        for (int d = c; d < end; ++d) {
            const double m = dot6(Sc, Fa + 6 * d);
            M[c * n + d] = m;
            M[d * n + c] = m;
        }
        // ∂τ/∂q
        double t[6];
        matvec6(Id, dVdq + 6 * c, Fq + 6 * c);
        matvec6(I, dAdq + 6 * c, t);
        for (int r = 0; r < 6; ++r) Fq[6 * c + r] += t[r];
        for (int r = 0; r < 6; ++r) {  // Y_c = İᵀ S_c
            double s = 0.0;
            for (int k = 0; k < 6; ++k) s += Id[6 * k + r] * Sc[k];
            Y[6 * c + r] = s;
        }
        for (int d = c + 1; d < end; ++d)
            dtau_dq[d * n + c] = dot6(Fa + 6 * d, dAdq + 6 * c) + dot6(Y + 6 * d, dVdq + 6 * c);
        for (int d = c; d < end; ++d) dtau_dq[c * n + d] = dot6(Sc, Fq + 6 * d);
        // ∂τ/∂q̇
        matvec6(Id, Sc, Fv + 6 * c);
        matvec6(I, dAdv + 6 * c, t);
        for (int r = 0; r < 6; ++r) Fv[6 * c + r] += t[r];
        for (int d = c + 1; d < end; ++d)
            dtau_dv[d * n + c] = dot6(Fa + 6 * d, dAdv + 6 * c) + dot6(Y + 6 * d, Sc);
        for (int d = c; d < end; ++d) dtau_dv[c * n + d] = dot6(Sc, Fv + 6 * d);
        if (model.is_first_column(c)) {  // the body done: transport, and its composites into its parent's
            transport_force(model, S, c, b, f, Fq);
            const int p = model.parent(b);
            if (p >= 0) {
                add_composite(data.IC.data() + 36 * p, I);
                add_composite(data.BC.data() + 36 * p, Id);
            }
        }
    }
    add_armature_mass(model, data.q.data(), M);
    add_armature_derivatives(model, data.q.data(), qd, qdd, qd, dtau_dq, dtau_dv, dtau_dv);
    return status;
}

}  // namespace coriolis
