// Armature: rotor inertia reflected on the joints, as MuJoCo means it (dof_armature). For hinge,
// slide and ball joints our coordinates are MuJoCo's, so the armature is a constant diagonal that
// M gains and Ṁ, C, Γ do not see. On a free joint MuJoCo's linear velocity is ṗ = R ᴮv, so with
// A = diag(a) on ṗ, in our coordinates (the derivation is in docs and engine/armature.py's history):
//
//   M_a = Rᵀ A R on the linear DoF (a 1 when the three are equal),  C_a = M_a [ω]×,
//   Ṁ_a = C_a + C_aᵀ,  Γ_a[:, :, ω_k] = M_a [e_k]×
//
// Each function adds the armature's part to what a rigid-body kernel computed; the quaternion is
// read from the normalized q.
#pragma once

#include "joints.hpp"
#include "model.hpp"

namespace coriolis {

inline double armature_at(const Model& model, int j) {
    const int b = model.col_body(j);
    return model.body_geom(b)[G_ARMATURE + j - model.v_start(b)];
}

namespace detail {

inline bool is_free(const Model& model, int b) { return model.joint(b) == FREE || model.joint(b) == FLOATING; }

// Ma (3x3) = Rᵀ A R for the free joint of body b; false when its linear DoF have no armature
inline bool linear_armature(const Model& model, const double* q, int b, double* Ma) {
    const double* g = model.body_geom(b);
    const double a0 = g[G_ARMATURE], a1 = g[G_ARMATURE + 1], a2 = g[G_ARMATURE + 2];
    if (a0 == 0.0 && a1 == 0.0 && a2 == 0.0) return false;
    for (int k = 0; k < 9; ++k) Ma[k] = 0.0;
    if (a0 == a1 && a1 == a2) {
        for (int r = 0; r < 3; ++r) Ma[r * 3 + r] = a0;
        return true;
    }
    const int o = model.q_start(b) + 3;
    double W[36];
    quaternion_matrix(q[o], q[o + 1], q[o + 2], q[o + 3], W, 0);
    auto R = [&](int r, int c) { return W[r * 6 + c]; };
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            Ma[r * 3 + c] = a0 * R(0, r) * R(0, c) + a1 * R(1, r) * R(1, c) + a2 * R(2, r) * R(2, c);
    return true;
}

// DoF j's constant diagonal armature; 0 on a free joint's linear DoF (their M_a is a block)
inline double diagonal_armature(const Model& model, int j) {
    const int b = model.col_body(j);
    if (is_free(model, b) && j - model.v_start(b) < 3) return 0.0;
    return armature_at(model, j);
}

}  // namespace detail

// M += M_a
inline void add_armature_mass(const Model& model, const double* q, double* M) {
    const int n = model.nv;
    for (int j = 0; j < n; ++j) M[j * n + j] += detail::diagonal_armature(model, j);
    double Ma[9];
    for (int b = 0; b < model.N; ++b) {
        if (!(detail::is_free(model, b) && detail::linear_armature(model, q, b, Ma))) continue;
        const int s = model.v_start(b);
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) M[(s + r) * n + s + c] += Ma[r * 3 + c];
    }
}

// C += C_a and Ṁ += Ṁ_a (Mdot may be null) of the free joints (other joints' armature adds nothing)
inline void add_armature_coriolis(const Model& model, const double* q, const double* qd, double* Mdot, double* C) {
    const int n = model.nv;
    double Ma[9], dC[9];
    for (int b = 0; b < model.N; ++b) {
        if (!(detail::is_free(model, b) && detail::linear_armature(model, q, b, Ma))) continue;
        const int s = model.v_start(b);
        const double wx = qd[s + 3], wy = qd[s + 4], wz = qd[s + 5];
        for (int r = 0; r < 3; ++r) {  // (M_a [ω]×)[r, :]
            dC[r * 3 + 0] = Ma[r * 3 + 1] * wz - Ma[r * 3 + 2] * wy;
            dC[r * 3 + 1] = Ma[r * 3 + 2] * wx - Ma[r * 3 + 0] * wz;
            dC[r * 3 + 2] = Ma[r * 3 + 0] * wy - Ma[r * 3 + 1] * wx;
        }
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) {
                C[(s + r) * n + s + c] += dC[r * 3 + c];
                if (Mdot) Mdot[(s + r) * n + s + c] += dC[r * 3 + c] + dC[c * 3 + r];
            }
    }
}

// Γ[:, :, k] += C_a(q, e_k) of the free joints
inline void add_armature_christoffel(const Model& model, const double* q, double* Gamma) {
    const int n = model.nv;
    auto G = [&](int i, int j, int k) -> double& { return Gamma[(int64_t(i) * n + j) * n + k]; };
    double Ma[9];
    for (int b = 0; b < model.N; ++b) {
        if (!(detail::is_free(model, b) && detail::linear_armature(model, q, b, Ma))) continue;
        const int s = model.v_start(b);
        for (int r = 0; r < 3; ++r) {  // columns of M_a [e_x]×, [e_y]×, [e_z]×
            G(s + r, s + 1, s + 3) += Ma[r * 3 + 2];
            G(s + r, s + 2, s + 3) -= Ma[r * 3 + 1];
            G(s + r, s + 2, s + 4) += Ma[r * 3 + 0];
            G(s + r, s, s + 4) -= Ma[r * 3 + 2];
            G(s + r, s, s + 5) += Ma[r * 3 + 1];
            G(s + r, s + 1, s + 5) -= Ma[r * 3 + 0];
        }
    }
}

// out += C_aᵀ q̇: −ω × (M_a v) on a free joint's linear DoF (C_aᵀ = −[ω]× M_a)
inline void add_armature_transpose(const Model& model, const double* q, const double* qd, double* out) {
    double Ma[9];
    for (int b = 0; b < model.N; ++b) {
        if (!(detail::is_free(model, b) && detail::linear_armature(model, q, b, Ma))) continue;
        const int s = model.v_start(b);
        const double wx = qd[s + 3], wy = qd[s + 4], wz = qd[s + 5];
        const double m0 = Ma[0] * qd[s] + Ma[1] * qd[s + 1] + Ma[2] * qd[s + 2];
        const double m1 = Ma[3] * qd[s] + Ma[4] * qd[s + 1] + Ma[5] * qd[s + 2];
        const double m2 = Ma[6] * qd[s] + Ma[7] * qd[s + 1] + Ma[8] * qd[s + 2];
        out[s] -= wy * m2 - wz * m1;
        out[s + 1] -= wz * m0 - wx * m2;
        out[s + 2] -= wx * m1 - wy * m0;
    }
}

// τ += M_a x + C_a(q, q̇) w: the armature's force at acceleration x (q̈, or Slotine–Li's q̈_r) with
// C multiplying w (q̇, or q̇_r)
inline void add_armature_force(const Model& model, const double* q, const double* qd, const double* x,
                               const double* w, double* tau) {
    for (int j = 0; j < model.nv; ++j) tau[j] += detail::diagonal_armature(model, j) * x[j];
    double Ma[9];
    for (int b = 0; b < model.N; ++b) {
        if (!(detail::is_free(model, b) && detail::linear_armature(model, q, b, Ma))) continue;
        const int s = model.v_start(b);
        const double wx = qd[s + 3], wy = qd[s + 4], wz = qd[s + 5];
        const double cx = wy * w[s + 2] - wz * w[s + 1];  // ω × w_v
        const double cy = wz * w[s] - wx * w[s + 2];
        const double cz = wx * w[s + 1] - wy * w[s];
        for (int r = 0; r < 3; ++r)
            tau[s + r] +=
                Ma[r * 3 + 0] * (x[s] + cx) + Ma[r * 3 + 1] * (x[s + 1] + cy) + Ma[r * 3 + 2] * (x[s + 2] + cz);
    }
}

// The derivatives of the free joints' τ_a = M_a(q) u, u = x_v + ω × y_v (ω from q̇; x, y: q̈ and q̇
// in the inverse dynamics, q̈_r and q̇_r in Slotine–Li), added: ∂τ_a/∂ω = M_a (e_k × y_v) to dqd,
// ∂τ_a/∂y_v = M_a (ω × e_k) to dy (dqd, dy null: left out) and, as the child turns by exp(δ)
// (R → R (1 + [δ]×)), ∂τ_a/∂δ_k = M_a (e_k × u) − e_k × (M_a u) to dq. The diagonal armature's
// a_c x_c has none.
inline void add_armature_derivatives(const Model& model, const double* q, const double* qd, const double* x,
                                     const double* y, double* dq, double* dqd, double* dy) {
    const int n = model.nv;
    double Ma[9];
    for (int b = 0; b < model.N; ++b) {
        if (!(detail::is_free(model, b) && detail::linear_armature(model, q, b, Ma))) continue;
        const int s = model.v_start(b);
        const double v[3] = {y[s], y[s + 1], y[s + 2]}, w[3] = {qd[s + 3], qd[s + 4], qd[s + 5]};
        const double u[3] = {x[s] + w[1] * v[2] - w[2] * v[1], x[s + 1] + w[2] * v[0] - w[0] * v[2],
                             x[s + 2] + w[0] * v[1] - w[1] * v[0]};
        double Mu[3];
        for (int r = 0; r < 3; ++r) Mu[r] = Ma[r * 3] * u[0] + Ma[r * 3 + 1] * u[1] + Ma[r * 3 + 2] * u[2];
        for (int k = 0; k < 3; ++k) {
            double e[3] = {0.0, 0.0, 0.0};
            e[k] = 1.0;
            const double we[3] = {w[1] * e[2] - w[2] * e[1], w[2] * e[0] - w[0] * e[2], w[0] * e[1] - w[1] * e[0]};
            const double ev[3] = {e[1] * v[2] - e[2] * v[1], e[2] * v[0] - e[0] * v[2], e[0] * v[1] - e[1] * v[0]};
            const double eu[3] = {e[1] * u[2] - e[2] * u[1], e[2] * u[0] - e[0] * u[2], e[0] * u[1] - e[1] * u[0]};
            const double eMu[3] = {e[1] * Mu[2] - e[2] * Mu[1], e[2] * Mu[0] - e[0] * Mu[2],
                                   e[0] * Mu[1] - e[1] * Mu[0]};
            for (int r = 0; r < 3; ++r) {
                const double* m = Ma + 3 * r;
                if (dy) dy[(s + r) * n + s + k] += m[0] * we[0] + m[1] * we[1] + m[2] * we[2];
                if (dqd) dqd[(s + r) * n + s + 3 + k] += m[0] * ev[0] + m[1] * ev[1] + m[2] * ev[2];
                dq[(s + r) * n + s + 3 + k] += m[0] * eu[0] + m[1] * eu[1] + m[2] * eu[2] - eMu[r];
            }
        }
    }
}

}  // namespace coriolis
