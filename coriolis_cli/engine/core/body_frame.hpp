// Body coordinates, for robots of 1-DoF joints under at most a free root: each body's inertia is
// constant in its own frame and S_i is [a; 0] (revolute) or [0; a] (prismatic), so neither
// placements in a computation frame nor rotated inertias are formed (Pinocchio's way). What the
// body-frame kernels share: ten inertial parameters, I x, v ×* f, a body's placement in its
// parent, and moving motions down and forces up the tree.
#pragma once

#include <cmath>

#include "joints.hpp"
#include "model.hpp"
#include "spatial.hpp"

namespace coriolis {

constexpr int N_PARAMETERS = 10;  // per body: m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz

// ten inertial parameters about the body's own origin in its own axes: m, h = m c and
// J = (J00, J01, J11, J02, J12, J22) (Pinocchio's order)
struct Parameters {
    double m, h0, h1, h2, J00, J01, J11, J02, J12, J22;
};

inline bool body_frame_joints(const Model& model) {
    for (int i = 0; i < model.N; ++i) {
        const int64_t jt = model.joint(i);
        if (jt != REVOLUTE && jt != PRISMATIC && jt != FREE) return false;
    }
    return true;
}

// body i's parameters from theta (10 per body) or, when theta is null, from the model (mass,
// COM, inertia about the COM: J = I_c + m (c·c 1 − c cᵀ))
inline Parameters local_parameters(const Model& model, const double* theta, int i) {
    if (theta) {
        const double* t = theta + N_PARAMETERS * i;
        return {t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9]};
    }
    const double* g = model.body_geom(i);
    const double m = g[G_MASS], c0 = g[G_COM], c1 = g[G_COM + 1], c2 = g[G_COM + 2];
    const double* I = g + G_INERTIA;
    return {m,
            m * c0,
            m * c1,
            m * c2,
            I[0] + m * (c1 * c1 + c2 * c2),
            I[1] - m * c0 * c1,
            I[4] + m * (c0 * c0 + c2 * c2),
            I[2] - m * c0 * c2,
            I[5] - m * c1 * c2,
            I[8] + m * (c0 * c0 + c1 * c1)};
}

// out = I x = [J x_ω + h × x_u; x_ω × h + m x_u] for x = [x0, x1, x2; y0, y1, y2]
inline void inertia_times(const Parameters& p, double x0, double x1, double x2, double y0, double y1, double y2,
                          double* out) {
    out[0] = p.J00 * x0 + p.J01 * x1 + p.J02 * x2 + p.h1 * y2 - p.h2 * y1;
    out[1] = p.J01 * x0 + p.J11 * x1 + p.J12 * x2 + p.h2 * y0 - p.h0 * y2;
    out[2] = p.J02 * x0 + p.J12 * x1 + p.J22 * x2 + p.h0 * y1 - p.h1 * y0;
    out[3] = x1 * p.h2 - x2 * p.h1 + p.m * y0;
    out[4] = x2 * p.h0 - x0 * p.h2 + p.m * y1;
    out[5] = x0 * p.h1 - x1 * p.h0 + p.m * y2;
}

inline void inertia_times(const Parameters& p, const double* x, double* out) {
    inertia_times(p, x[0], x[1], x[2], x[3], x[4], x[5], out);
}

// out = v ×* [n; f] = [ω × n + u × f; ω × f] for v = [ω; u]
inline void force_cross(const double* v, const double* nf, double* out) { crf_vec(v, nf, out); }

// out = [[J, ĥ], [ĥᵀ, m 1]] around the J already in out[0:3][0:3] (h = m c)
inline void complete_inertia(double m, double h0, double h1, double h2, double* out) {
    out[0 * 6 + 3] = 0.0;
    out[0 * 6 + 4] = -h2;
    out[0 * 6 + 5] = h1;
    out[1 * 6 + 3] = h2;
    out[1 * 6 + 4] = 0.0;
    out[1 * 6 + 5] = -h0;
    out[2 * 6 + 3] = -h1;
    out[2 * 6 + 4] = h0;
    out[2 * 6 + 5] = 0.0;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            out[(3 + r) * 6 + c] = out[c * 6 + 3 + r];
            out[(3 + r) * 6 + 3 + c] = r == c ? m : 0.0;
        }
}

// out = [[J, ĥ], [ĥᵀ, m 1]] from ten parameters
inline void inertia_matrix(const Parameters& p, double* out) {
    out[0] = p.J00;
    out[1] = p.J01;
    out[2] = p.J02;
    out[6] = p.J01;
    out[7] = p.J11;
    out[8] = p.J12;
    out[12] = p.J02;
    out[13] = p.J12;
    out[14] = p.J22;
    complete_inertia(p.m, p.h0, p.h1, p.h2, out);
}

// Xb[i] = body i in its parent (L = child axes in the parent's, r = its origin) for a revolute
// or prismatic joint at x
inline void body_placement(const Model& model, int64_t jt, double x, int i, double* Xb) {
    const double* g = model.body_geom(i);
    double* X = Xb + 36 * i;
    if (jt == REVOLUTE) {  // L = E + sin q E â + (1 − cos q) E â², r = the joint origin
        const double sn = std::sin(x), cs = 1.0 - std::cos(x);
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 3; ++c) {
                const int k = 3 * r + c;
                X[r * 6 + c] = g[G_ROT + k] + sn * g[G_ROT_HAT + k] + cs * g[G_ROT_HAT2 + k];
            }
            X[3 * 6 + r] = g[G_TRANS + r];
        }
    } else {  // prismatic: L = E, r = the joint origin moved along E a
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 3; ++c) X[r * 6 + c] = g[G_ROT + 3 * r + c];
            X[3 * 6 + r] = g[G_TRANS + r] + g[G_PARENT_AXIS + r] * x;
        }
    }
}

// dst += pX_i* src for a force [n; f] of body i: f' = L f, n' = L n + r × f'
inline void add_parent_force(const double* Xb, int i, const double* src, double* dst) {
    const double* X = Xb + 36 * i;
    const double r0 = X[18], r1 = X[19], r2 = X[20];
    const double g0 = X[0] * src[3] + X[1] * src[4] + X[2] * src[5];
    const double g1 = X[6] * src[3] + X[7] * src[4] + X[8] * src[5];
    const double g2 = X[12] * src[3] + X[13] * src[4] + X[14] * src[5];
    for (int k = 0; k < 3; ++k) dst[k] += X[k * 6 + 0] * src[0] + X[k * 6 + 1] * src[1] + X[k * 6 + 2] * src[2];
    dst[0] += r1 * g2 - r2 * g1;
    dst[1] += r2 * g0 - r0 * g2;
    dst[2] += r0 * g1 - r1 * g0;
    dst[3] += g0;
    dst[4] += g1;
    dst[5] += g2;
}

// dst = iX_p src for a parent's motion [ω; v_O]: ω' = Lᵀω, v' = Lᵀ(v + ω × r)
inline void child_motion(const double* Xb, int i, const double* src, double* dst) {
    const double* X = Xb + 36 * i;
    const double w0 = src[0], w1 = src[1], w2 = src[2];
    const double r0 = X[18], r1 = X[19], r2 = X[20];
    const double u0 = src[3] + w1 * r2 - w2 * r1;
    const double u1 = src[4] + w2 * r0 - w0 * r2;
    const double u2 = src[5] + w0 * r1 - w1 * r0;
    for (int k = 0; k < 3; ++k) {
        dst[k] = X[0 * 6 + k] * w0 + X[1 * 6 + k] * w1 + X[2 * 6 + k] * w2;
        dst[3 + k] = X[0 * 6 + k] * u0 + X[1 * 6 + k] * u1 + X[2 * 6 + k] * u2;
    }
}

// τ_i = S_iᵀ f_i from the leaves up, each body's force added to its parent's (f_p += pX_i* f_i)
// once its joint's is taken (a free root's S is [v; ω] reordered)
inline void joint_forces(const Model& model, const double* Xb, double* f, double* tau) {
    for (int i = model.N - 1; i >= 0; --i) {
        const int64_t jt = model.joint(i);
        const int vs = model.v_start(i), p = model.parent(i);
        const double* fi = f + 6 * i;
        if (jt == FREE) {
            for (int k = 0; k < 3; ++k) {
                tau[vs + k] = fi[3 + k];
                tau[vs + 3 + k] = fi[k];
            }
        } else {
            const double* g = model.body_geom(i);
            const int o = jt == REVOLUTE ? 0 : 3;
            tau[vs] = g[G_AXIS] * fi[o] + g[G_AXIS + 1] * fi[o + 1] + g[G_AXIS + 2] * fi[o + 2];
        }
        if (p >= 0) add_parent_force(Xb, i, fi, f + 6 * p);
    }
}

}  // namespace coriolis
