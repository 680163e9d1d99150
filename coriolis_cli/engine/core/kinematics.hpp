// The forward pass the algorithms share, everything expressed once in the computation frame.
// Fixed base: a frame at the root joint, with world axes. Floating base: the frame that coincides
// with the base body at this instant (M, C and Γ of a free-flyer do not depend on the base pose),
// so the free joint's motion subspace is the constant P = [[0, 1], [1, 0]] and its Φ̊ = 0.
#pragma once

#include "data.hpp"
#include "joints.hpp"
#include "spatial.hpp"

namespace coriolis {

// body placements X, motion subspaces S and the bodies' inertias IC, in the computation frame
inline void forward_kinematics(const Model& model, const double* q, double* X, double* S, double* IC) {
    for (int i = 0; i < model.N; ++i) {
        const int p = model.parent(i);
        const double* geom = model.body_geom(i);
        double* Xi = X + 36 * i;
        for (int r = 0; r < 3; ++r) {  // joint origin: p_i = p_p + R_p trans
            if (p >= 0) {
                const double* Xp = X + 36 * p;
                Xi[3 * 6 + r] = Xp[3 * 6 + r] + Xp[r * 6 + 0] * geom[G_TRANS] + Xp[r * 6 + 1] * geom[G_TRANS + 1] +
                                Xp[r * 6 + 2] * geom[G_TRANS + 2];
            } else {
                Xi[3 * 6 + r] = geom[G_TRANS + r];
            }
        }
        place_body(model, q, i, X, S);
        // inertia in the computation frame: COM cw = p + R com, Icw = R Ic Rᵀ
        double cw[3], tmp[9], Icw[9];
        for (int r = 0; r < 3; ++r)
            cw[r] = Xi[3 * 6 + r] + Xi[r * 6 + 0] * geom[G_COM] + Xi[r * 6 + 1] * geom[G_COM + 1] +
                    Xi[r * 6 + 2] * geom[G_COM + 2];
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c)
                tmp[r * 3 + c] = Xi[r * 6 + 0] * geom[G_INERTIA + c] + Xi[r * 6 + 1] * geom[G_INERTIA + 3 + c] +
                                 Xi[r * 6 + 2] * geom[G_INERTIA + 6 + c];
        for (int r = 0; r < 3; ++r)
            for (int c = r; c < 3; ++c) {
                const double s =
                    tmp[r * 3 + 0] * Xi[c * 6 + 0] + tmp[r * 3 + 1] * Xi[c * 6 + 1] + tmp[r * 3 + 2] * Xi[c * 6 + 2];
                Icw[r * 3 + c] = s;
                Icw[c * 3 + r] = s;
            }
        spatial_inertia(geom[G_MASS], cw, Icw, IC + 36 * i);
    }
}

// out_i = out_p(i) + S_i x_i, zero above the roots: body velocities for x = q̇
inline void propagate(const Model& model, const double* S, const double* x, double* out) {
    for (int c = 0; c < model.nv; ++c) {
        const int b = model.col_body(c);
        if (c == 0 || model.col_body(c - 1) != b) {  // first column of body b: start from the parent
            const int p = model.parent(b);
            for (int r = 0; r < 6; ++r) out[6 * b + r] = p >= 0 ? out[6 * p + r] : 0.0;
        }
        for (int r = 0; r < 6; ++r) out[6 * b + r] += S[6 * c + r] * x[c];
    }
}

// v_i = v_p(i) + S_i q̇_i and Ṡ_i = v_i × S_i (Φ̊ = 0 for every joint in this frame)
inline void body_velocities(const Model& model, const double* S, const double* qd, double* v, double* Sdot) {
    propagate(model, S, qd, v);
    for (int c = 0; c < model.nv; ++c) crm_vec(v + 6 * model.col_body(c), S + 6 * c, Sdot + 6 * c);
}

// The prologue of Algorithm 1, the RNEA and Slotine–Li: the state loaded and checked (`count`
// velocity-like vectors), then X, S, IC, v and Ṡ. Returns the status code; on a failure nothing
// else is done.
inline int64_t forward_pass(const Model& model, Data& data, const double* q, const double* qd, const double* second,
                            const double* third, int count) {
    const int64_t status = load_state(model, q, data.q.data(), qd, second, third, count);
    if (failed(status)) return status;
    forward_kinematics(model, data.q.data(), data.X.data(), data.S.data(), data.IC.data());
    body_velocities(model, data.S.data(), qd, data.v.data(), data.Sdot.data());
    return status;
}

// placements and motion subspaces only: what loop closures need
inline int64_t placements(const Model& model, Data& data, const double* q) {
    const int64_t status = load_configuration(model, q, data.q.data());
    if (failed(status)) return status;
    forward_kinematics(model, data.q.data(), data.X.data(), data.S.data(), data.IC.data());
    return status;
}

}  // namespace coriolis
