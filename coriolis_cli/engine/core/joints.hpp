// Joint types, the engine side of the joint seam (model/joints.py holds the other): placement,
// motion subspace, configuration. Everything is in the computation frame, angular-first: a
// column of S is [ω; v_O] for unit joint velocity. Pinocchio's counterparts: joint-revolute.hpp,
// joint-prismatic.hpp, joint-free-flyer.hpp.
//
// Body i's placement is kept as a 6x6 block X[i]: X[i][0:3][0:3] = R_i, X[i][3][0:3] = p_i; the
// multi-DoF joints build their own rotation in X[i][3:6][3:6] on the way.
#pragma once

#include <cmath>
#include <cstdint>

#include "model.hpp"

namespace coriolis {

// Status codes. 0: fine. k > 0: entry k − 1 of (q, q̇, q̈) laid end to end is not finite. Below
// −1: −(2 + 2b) the quaternion of body b is zero (nothing computed), −(3 + 2b) it was normalized
// (results computed). SINGULAR + k: M is singular at DoF k; above every entry number. OVERFLOW:
// every input is finite and a result is not (a state too large to compute with).
constexpr int64_t OK = 0;
constexpr int64_t SINGULAR = int64_t(1) << 40;
constexpr int64_t OVERFLOW = SINGULAR - 1;

// A quaternion this far from unit norm is normalized with a warning.
constexpr double QUATERNION_TOLERANCE = 1e-6;

// true for the status codes after which nothing was computed
inline bool failed(int64_t status) { return status > 0 || status == -1 || (status < 0 && status % 2 == 0); }

// out[o:o+3][o:o+3] of a 6x6 block = the rotation of the unit quaternion (x, y, z, w)
inline void quaternion_matrix(double x, double y, double z, double w, double* out, int o) {
    auto at = [&](int r, int c) -> double& { return out[(o + r) * 6 + o + c]; };
    at(0, 0) = 1 - 2 * (y * y + z * z);
    at(0, 1) = 2 * (x * y - z * w);
    at(0, 2) = 2 * (x * z + y * w);
    at(1, 0) = 2 * (x * y + z * w);
    at(1, 1) = 1 - 2 * (x * x + z * z);
    at(1, 2) = 2 * (y * z - x * w);
    at(2, 0) = 2 * (x * z - y * w);
    at(2, 1) = 2 * (y * z + x * w);
    at(2, 2) = 1 - 2 * (x * x + y * y);
}

namespace detail {

inline void linear_column(const double* Xi, int axis, double* Sk) {
    Sk[0] = 0.0;
    Sk[1] = 0.0;
    Sk[2] = 0.0;
    Sk[3] = Xi[0 * 6 + axis];
    Sk[4] = Xi[1 * 6 + axis];
    Sk[5] = Xi[2 * 6 + axis];
}

// S_k = [w; p_i × w]: rotation about the axis w through body i's origin
inline void rotation_column(const double* Xi, double w0, double w1, double w2, double* Sk) {
    Sk[0] = w0;
    Sk[1] = w1;
    Sk[2] = w2;
    Sk[3] = Xi[3 * 6 + 1] * w2 - Xi[3 * 6 + 2] * w1;
    Sk[4] = Xi[3 * 6 + 2] * w0 - Xi[3 * 6 + 0] * w2;
    Sk[5] = Xi[3 * 6 + 0] * w1 - Xi[3 * 6 + 1] * w0;
}

inline void angular_column(const double* Xi, int axis, double* Sk) {
    rotation_column(Xi, Xi[0 * 6 + axis], Xi[1 * 6 + axis], Xi[2 * 6 + axis], Sk);
}

// the free root joint: the computation frame is the base frame at this instant, S = P = [[0, 1], [1, 0]]
inline void place_free_root(int vs, double* Xi, double* S) {
    for (int r = 0; r < 3; ++r) {
        Xi[3 * 6 + r] = 0.0;
        for (int c = 0; c < 3; ++c) Xi[r * 6 + c] = r == c ? 1.0 : 0.0;
    }
    for (int k = 0; k < 6; ++k)
        for (int r = 0; r < 6; ++r) S[(vs + k) * 6 + r] = 0.0;
    for (int k = 0; k < 3; ++k) {  // ν = [v; ω]
        S[(vs + k) * 6 + 3 + k] = 1.0;
        S[(vs + 3 + k) * 6 + k] = 1.0;
    }
}

// Spherical, planar and non-root free joints: the joint moves the child by (R_J(q), t_J(q)) in the
// joint frame, and its motion subspace is constant in the child frame (Pinocchio's convention), so
// Ṡ = v × S holds as for the 1-DoF joints. Columns: spherical ω_x, ω_y, ω_z; planar v_x, v_y, ω_z;
// free v_x, v_y, v_z, ω_x, ω_y, ω_z (child axes).
inline void place_multi_dof(int64_t jt, const double* geom, const double* q, int qs, int vs, const double* Xp,
                            double* Xi, double* S) {
    // L = E R_J into Xi[0:3][0:3]; R_J is built in Xi[3:6][3:6], unused in the 6x6 block
    double tx = 0.0, ty = 0.0, tz = 0.0;
    if (jt == PLANAR) {
        const double c = q[qs + 2], s = q[qs + 3];
        tx = q[qs];
        ty = q[qs + 1];
        const double J00 = c, J01 = -s, J10 = s, J11 = c;
        for (int r = 0; r < 3; ++r) {  // L = E Rz: columns 0, 1 mix, column 2 is E's
            const double e0 = geom[G_ROT + 3 * r], e1 = geom[G_ROT + 3 * r + 1], e2 = geom[G_ROT + 3 * r + 2];
            Xi[r * 6 + 0] = e0 * J00 + e1 * J10;
            Xi[r * 6 + 1] = e0 * J01 + e1 * J11;
            Xi[r * 6 + 2] = e2;
        }
    } else {
        const int o = qs + (jt == FLOATING ? 3 : 0);
        quaternion_matrix(q[o], q[o + 1], q[o + 2], q[o + 3], Xi, 3);
        if (jt == FLOATING) {
            tx = q[qs];
            ty = q[qs + 1];
            tz = q[qs + 2];
        }
        for (int c = 0; c < 3; ++c) {
            const double j0 = Xi[3 * 6 + 3 + c], j1 = Xi[4 * 6 + 3 + c], j2 = Xi[5 * 6 + 3 + c];
            for (int r = 0; r < 3; ++r)
                Xi[r * 6 + c] = geom[G_ROT + 3 * r] * j0 + geom[G_ROT + 3 * r + 1] * j1 + geom[G_ROT + 3 * r + 2] * j2;
        }
    }
    // the joint's translation E t_J in the parent frame, added to the joint origin p_p + R_p t
    const double d0 = geom[G_ROT] * tx + geom[G_ROT + 1] * ty + geom[G_ROT + 2] * tz;
    const double d1 = geom[G_ROT + 3] * tx + geom[G_ROT + 4] * ty + geom[G_ROT + 5] * tz;
    const double d2 = geom[G_ROT + 6] * tx + geom[G_ROT + 7] * ty + geom[G_ROT + 8] * tz;
    if (Xp) {  // R_i = R_p L, p_i += R_p d
        for (int c = 0; c < 3; ++c) {
            const double l0 = Xi[0 * 6 + c], l1 = Xi[1 * 6 + c], l2 = Xi[2 * 6 + c];
            Xi[0 * 6 + c] = Xp[0 * 6 + 0] * l0 + Xp[0 * 6 + 1] * l1 + Xp[0 * 6 + 2] * l2;
            Xi[1 * 6 + c] = Xp[1 * 6 + 0] * l0 + Xp[1 * 6 + 1] * l1 + Xp[1 * 6 + 2] * l2;
            Xi[2 * 6 + c] = Xp[2 * 6 + 0] * l0 + Xp[2 * 6 + 1] * l1 + Xp[2 * 6 + 2] * l2;
        }
        Xi[3 * 6 + 0] += Xp[0 * 6 + 0] * d0 + Xp[0 * 6 + 1] * d1 + Xp[0 * 6 + 2] * d2;
        Xi[3 * 6 + 1] += Xp[1 * 6 + 0] * d0 + Xp[1 * 6 + 1] * d1 + Xp[1 * 6 + 2] * d2;
        Xi[3 * 6 + 2] += Xp[2 * 6 + 0] * d0 + Xp[2 * 6 + 1] * d1 + Xp[2 * 6 + 2] * d2;
    } else {
        Xi[3 * 6 + 0] += d0;
        Xi[3 * 6 + 1] += d1;
        Xi[3 * 6 + 2] += d2;
    }
    // columns: linear along child axis k: [0; R e_k]; angular about it: [R e_k; p × R e_k]
    int k = vs;
    if (jt == FLOATING || jt == PLANAR) {
        for (int axis = 0; axis < (jt == FLOATING ? 3 : 2); ++axis) linear_column(Xi, axis, S + 6 * k++);
    }
    if (jt == PLANAR) {
        angular_column(Xi, 2, S + 6 * k);
    } else {
        for (int axis = 0; axis < 3; ++axis) angular_column(Xi, axis, S + 6 * k++);
    }
}

}  // namespace detail

// Body i's rotation (from its parent's, or the identity at a root) and position (the joint origin
// on entry), and the joint's columns of S.
inline void place_body(const Model& model, const double* q, int i, double* X, double* S) {
    const int64_t jt = model.joint(i);
    const int p = model.parent(i), qs = model.q_start(i), vs = model.v_start(i);
    const double* geom = model.body_geom(i);
    double* Xi = X + 36 * i;
    const double* Xp = p >= 0 ? X + 36 * p : nullptr;
    if (jt != REVOLUTE && jt != PRISMATIC) {
        if (jt == FREE)
            detail::place_free_root(vs, Xi, S);
        else
            detail::place_multi_dof(jt, geom, q, qs, vs, Xp, Xi, S);
        return;
    }
    // the joint's rotation in the parent frame, L = E Rot(a, q) = E + sin q (E â) + (1 − cos q) (E â²)
    if (jt == PRISMATIC) {
        for (int k = 0; k < 9; ++k) Xi[(k / 3) * 6 + k % 3] = geom[G_ROT + k];
    } else {
        const double sn = std::sin(q[qs]), cs = 1.0 - std::cos(q[qs]);
        for (int k = 0; k < 9; ++k)
            Xi[(k / 3) * 6 + k % 3] = geom[G_ROT + k] + sn * geom[G_ROT_HAT + k] + cs * geom[G_ROT_HAT2 + k];
    }
    const double a0 = geom[G_PARENT_AXIS], a1 = geom[G_PARENT_AXIS + 1], a2 = geom[G_PARENT_AXIS + 2];
    double w0 = a0, w1 = a1, w2 = a2;
    if (Xp) {  // R_i = R_p L, w = R_p (E a)
        for (int r = 0; r < 3; ++r) {
            const double l0 = Xi[0 * 6 + r], l1 = Xi[1 * 6 + r], l2 = Xi[2 * 6 + r];
            Xi[0 * 6 + r] = Xp[0 * 6 + 0] * l0 + Xp[0 * 6 + 1] * l1 + Xp[0 * 6 + 2] * l2;
            Xi[1 * 6 + r] = Xp[1 * 6 + 0] * l0 + Xp[1 * 6 + 1] * l1 + Xp[1 * 6 + 2] * l2;
            Xi[2 * 6 + r] = Xp[2 * 6 + 0] * l0 + Xp[2 * 6 + 1] * l1 + Xp[2 * 6 + 2] * l2;
        }
        w0 = Xp[0 * 6 + 0] * a0 + Xp[0 * 6 + 1] * a1 + Xp[0 * 6 + 2] * a2;
        w1 = Xp[1 * 6 + 0] * a0 + Xp[1 * 6 + 1] * a1 + Xp[1 * 6 + 2] * a2;
        w2 = Xp[2 * 6 + 0] * a0 + Xp[2 * 6 + 1] * a1 + Xp[2 * 6 + 2] * a2;
    }
    double* Sv = S + 6 * vs;
    if (jt == PRISMATIC) {
        Xi[3 * 6 + 0] += w0 * q[qs];
        Xi[3 * 6 + 1] += w1 * q[qs];
        Xi[3 * 6 + 2] += w2 * q[qs];
        Sv[0] = 0.0;
        Sv[1] = 0.0;
        Sv[2] = 0.0;
        Sv[3] = w0;
        Sv[4] = w1;
        Sv[5] = w2;
        return;
    }
    detail::rotation_column(Xi, w0, w1, w2, Sv);  // revolute (and continuous)
}

// q into out as the kernels use it: every entry finite, quaternions (and planar (cos, sin) pairs)
// of unit norm. Returns a status code.
inline int64_t load_configuration(const Model& model, const double* q, double* out) {
    for (int k = 0; k < model.nq; ++k) {
        const double x = q[k];
        if (!std::isfinite(x)) return k + 1;
        out[k] = x;
    }
    int64_t status = OK;
    for (int b = 0; b < model.N; ++b) {
        const int64_t jt = model.joint(b);
        int o, size;
        if (jt == FREE || jt == FLOATING) {
            o = model.q_start(b) + 3;
            size = 4;
        } else if (jt == SPHERICAL) {
            o = model.q_start(b);
            size = 4;
        } else if (jt == PLANAR) {
            o = model.q_start(b) + 2;  // (cos θ, sin θ)
            size = 2;
        } else {
            continue;
        }
        double nrm = 0.0;
        for (int k = 0; k < size; ++k) nrm += q[o + k] * q[o + k];
        nrm = std::sqrt(nrm);
        if (nrm < 1e-12) return -(2 + 2 * int64_t(b));
        if (std::fabs(nrm - 1.0) > QUATERNION_TOLERANCE) {
            for (int k = 0; k < size; ++k) out[o + k] = q[o + k] / nrm;
            if (status == OK) status = -(3 + 2 * int64_t(b));
        }
    }
    return status;
}

// status offset + k + 1 for the first non-finite x[k] of n; else OK
inline int64_t check_finite(const double* x, int n, int64_t offset) {
    for (int k = 0; k < n; ++k)
        if (!std::isfinite(x[k])) return offset + k + 1;
    return OK;
}

// Every kernel's first step: q loaded (load_configuration), then the first `count` of the
// velocity-like vectors v1, v2, v3 checked, their entries numbered after q's in the status code.
inline int64_t load_state(const Model& model, const double* q, double* out, const double* v1, const double* v2,
                          const double* v3, int count) {
    const int64_t status = load_configuration(model, q, out);
    if (failed(status)) return status;
    const int n = model.nv, m = model.nq;
    int64_t bad = count >= 1 ? check_finite(v1, n, m) : OK;
    if (bad == OK && count >= 2) bad = check_finite(v2, n, m + n);
    if (bad == OK && count >= 3) bad = check_finite(v3, n, m + 2 * n);
    return bad == OK ? status : bad;
}

// no gravity: what the Coriolis terms' derivatives take (Slotine–Li's at q̈_r = 0)
constexpr double NO_GRAVITY[3] = {0.0, 0.0, 0.0};

// out = a_0 = [0; −g] in the computation frame. With a free root joint that frame is the base's,
// whose rotation is E R(quaternion) (E: the joint frame in the world), so g is rotated by its
// transpose.
inline void root_acceleration(const Model& model, const double* q, const double* gravity, double* out) {
    double gx = gravity[0], gy = gravity[1], gz = gravity[2];
    if (model.N > 0 && model.joint(0) == FREE) {
        const int qs = model.q_start(0);
        const double* geom = model.body_geom(0);
        const double x = q[qs + 3], y = q[qs + 4], z = q[qs + 5], w = q[qs + 6];
        const double r00 = 1 - 2 * (y * y + z * z), r01 = 2 * (x * y - z * w), r02 = 2 * (x * z + y * w);
        const double r10 = 2 * (x * y + z * w), r11 = 1 - 2 * (x * x + z * z), r12 = 2 * (y * z - x * w);
        const double r20 = 2 * (x * z - y * w), r21 = 2 * (y * z + x * w), r22 = 1 - 2 * (x * x + y * y);
        // g_E = Eᵀ g, then g_base = Rᵀ g_E
        const double e0 = geom[G_ROT] * gx + geom[G_ROT + 3] * gy + geom[G_ROT + 6] * gz;
        const double e1 = geom[G_ROT + 1] * gx + geom[G_ROT + 4] * gy + geom[G_ROT + 7] * gz;
        const double e2 = geom[G_ROT + 2] * gx + geom[G_ROT + 5] * gy + geom[G_ROT + 8] * gz;
        gx = r00 * e0 + r10 * e1 + r20 * e2;
        gy = r01 * e0 + r11 * e1 + r21 * e2;
        gz = r02 * e0 + r12 * e1 + r22 * e2;
    }
    out[0] = 0.0;
    out[1] = 0.0;
    out[2] = 0.0;
    out[3] = -gx;
    out[4] = -gy;
    out[5] = -gz;
}

}  // namespace coriolis
