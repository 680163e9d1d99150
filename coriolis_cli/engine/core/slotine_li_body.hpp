// The Slotine–Li recursion (Wensing–Slotine App. B, Alg. 3) in body coordinates, for robots of
// 1-DoF joints under at most a free root (slotine_li.hpp holds it in the computation frame for
// the others): τ = M q̈_r + C q̇_r + g with the Christoffel-consistent C, never forming C.
#pragma once

#include "armature.hpp"
#include "body_frame.hpp"
#include "data.hpp"
#include "spatial.hpp"

namespace coriolis {

// Alg. 3, lines 2-6 in body coordinates: each body's placement in its parent (Xb), and v (true
// velocity), w (reference velocity) and a (reference acceleration, gravity included) in its own
// frame. Returns the status code.
inline int64_t local_motion(const Model& model, Data& data, const double* q, const double* qd, const double* qd_r,
                            const double* qdd_r, const double* gravity) {
    const int64_t status = load_state(model, q, data.q.data(), qd, qd_r, qdd_r, 3);
    if (failed(status)) return status;
    double *v = data.v.data(), *a = data.a.data(), *w = data.w.data(), *Xb = data.Xb.data();
    double a0[6];
    root_acceleration(model, data.q.data(), gravity, a0);
    for (int i = 0; i < model.N; ++i) {
        const int64_t jt = model.joint(i);
        const int qs = model.q_start(i), vs = model.v_start(i), p = model.parent(i);
        double *vi = v + 6 * i, *wi = w + 6 * i, *ai = a + 6 * i;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0;  // S q̇_r
        if (jt == FREE) {  // the root's frame is the base's: ν = [v; ω] is [ω; v] reordered
            for (int k = 0; k < 3; ++k) {
                vi[k] = qd[vs + 3 + k];
                vi[3 + k] = qd[vs + k];
                wi[k] = qd_r[vs + 3 + k];
                wi[3 + k] = qd_r[vs + k];
                ai[k] = a0[k] + qdd_r[vs + 3 + k];
                ai[3 + k] = a0[3 + k] + qdd_r[vs + k];
            }
            s0 = qd_r[vs + 3];
            s1 = qd_r[vs + 4];
            s2 = qd_r[vs + 5];
            s3 = qd_r[vs];
            s4 = qd_r[vs + 1];
            s5 = qd_r[vs + 2];
        } else {
            body_placement(model, jt, data.q[qs], i, Xb);
            if (p >= 0) {
                child_motion(Xb, i, v + 6 * p, vi);
                child_motion(Xb, i, w + 6 * p, wi);
                child_motion(Xb, i, a + 6 * p, ai);
            } else {
                for (int k = 0; k < 6; ++k) {
                    vi[k] = 0.0;
                    wi[k] = 0.0;
                }
                child_motion(Xb, i, a0, ai);  // a_0 = −g in the computation frame
            }
            const double* g = model.body_geom(i);
            const double x0 = g[G_AXIS], x1 = g[G_AXIS + 1], x2 = g[G_AXIS + 2];
            const int o = jt == REVOLUTE ? 0 : 3;  // S = [a; 0] or [0; a]
            vi[o] += x0 * qd[vs];
            vi[o + 1] += x1 * qd[vs];
            vi[o + 2] += x2 * qd[vs];
            wi[o] += x0 * qd_r[vs];
            wi[o + 1] += x1 * qd_r[vs];
            wi[o + 2] += x2 * qd_r[vs];
            ai[o] += x0 * qdd_r[vs];
            ai[o + 1] += x1 * qdd_r[vs];
            ai[o + 2] += x2 * qdd_r[vs];
            if (o == 0) {
                s0 = x0 * qd_r[vs];
                s1 = x1 * qd_r[vs];
                s2 = x2 * qd_r[vs];
            } else {
                s3 = x0 * qd_r[vs];
                s4 = x1 * qd_r[vs];
                s5 = x2 * qd_r[vs];
            }
        }
        // a += Ṡ q̇_r = v × S q̇_r
        const double w0 = vi[0], w1 = vi[1], w2 = vi[2], l0 = vi[3], l1 = vi[4], l2 = vi[5];
        ai[0] += w1 * s2 - w2 * s1;
        ai[1] += w2 * s0 - w0 * s2;
        ai[2] += w0 * s1 - w1 * s0;
        ai[3] += w1 * s5 - w2 * s4 + l1 * s2 - l2 * s1;
        ai[4] += w2 * s3 - w0 * s5 + l2 * s0 - l0 * s2;
        ai[5] += w0 * s4 - w1 * s3 + l0 * s1 - l1 * s0;
    }
    return status;
}

// f = I a + B(v, I) w (Alg. 3, line 8) from I's ten parameters, with no 6 x 6 matrix formed. B of
// eq. (10) in blocks needs w_ω only:
//   B w = [½(ω × J w_ω − J (ω × w_ω)) − ½(h (u·w_ω) + u (h·w_ω)) + (u·h) w_ω − ½ n × w_ω; w_ω × f]
// and for eq. (9), B w = v ×* (I w).
inline void body_force(const Parameters& p, const double* v, const double* w, const double* a, int factorization,
                       double* out) {
    const double w0 = v[0], w1 = v[1], w2 = v[2], u0 = v[3], u1 = v[4], u2 = v[5];
    const double x0 = w[0], x1 = w[1], x2 = w[2];
    inertia_times(p, a, out);  // I a
    if (factorization == CHRISTOFFEL) {
        const double k0 = p.J00 * x0 + p.J01 * x1 + p.J02 * x2;  // J w_ω
        const double k1 = p.J01 * x0 + p.J11 * x1 + p.J12 * x2;
        const double k2 = p.J02 * x0 + p.J12 * x1 + p.J22 * x2;
        const double e0 = w1 * x2 - w2 * x1;  // ω × w_ω
        const double e1 = w2 * x0 - w0 * x2;
        const double e2 = w0 * x1 - w1 * x0;
        double nf[6];
        inertia_times(p, v, nf);  // n and f of I v
        const double g0 = nf[0], g1 = nf[1], g2 = nf[2], l0 = nf[3], l1 = nf[4], l2 = nf[5];
        const double ux = u0 * x0 + u1 * x1 + u2 * x2;
        const double hx = p.h0 * x0 + p.h1 * x1 + p.h2 * x2;
        const double uh = u0 * p.h0 + u1 * p.h1 + u2 * p.h2;
        out[0] += 0.5 * ((w1 * k2 - w2 * k1) - (p.J00 * e0 + p.J01 * e1 + p.J02 * e2) - p.h0 * ux - u0 * hx -
                         (g1 * x2 - g2 * x1)) +
                  uh * x0;
        out[1] += 0.5 * ((w2 * k0 - w0 * k2) - (p.J01 * e0 + p.J11 * e1 + p.J12 * e2) - p.h1 * ux - u1 * hx -
                         (g2 * x0 - g0 * x2)) +
                  uh * x1;
        out[2] += 0.5 * ((w0 * k1 - w1 * k0) - (p.J02 * e0 + p.J12 * e1 + p.J22 * e2) - p.h2 * ux - u2 * hx -
                         (g0 * x1 - g1 * x0)) +
                  uh * x2;
        out[3] += x1 * l2 - x2 * l1;
        out[4] += x2 * l0 - x0 * l2;
        out[5] += x0 * l1 - x1 * l0;
    } else {
        double Iw[6], c[6];
        inertia_times(p, w, Iw);
        force_cross(v, Iw, c);
        for (int k = 0; k < 6; ++k) out[k] += c[k];
    }
}

// Alg. 3 in body coordinates: τ into tau; theta (10 per body) or null for the model's own
inline int64_t slotine_li_body(const Model& model, Data& data, const double* q, const double* qd, const double* qd_r,
                               const double* qdd_r, const double* gravity, const double* theta, int factorization,
                               double* tau) {
    const int64_t status = local_motion(model, data, q, qd, qd_r, qdd_r, gravity);
    if (failed(status)) return status;
    double* f = data.f.data();
    for (int i = 0; i < model.N; ++i)
        body_force(local_parameters(model, theta, i), data.v.data() + 6 * i, data.w.data() + 6 * i,
                   data.a.data() + 6 * i, factorization, f + 6 * i);
    joint_forces(model, data.Xb.data(), f, tau);
    add_armature_force(model, data.q.data(), qd, qdd_r, qd_r, tau);
    return status;
}

// Alg. 3, line 9 in body coordinates: Yts[10 j + k] = 𝒴_j[:, k] · (v_j − w_j), with
// 𝒴_j e_k = I_k a_j + B(v_j, I_k) w_j for the k-th unit parameter's inertia I_k
inline int64_t adaptation_gradient_body(const Model& model, Data& data, const double* q, const double* qd,
                                        const double* qd_r, const double* qdd_r, const double* gravity,
                                        int factorization, double* Yts) {
    const int64_t status = local_motion(model, data, q, qd, qd_r, qdd_r, gravity);
    if (failed(status)) return status;
    const double *v = data.v.data(), *w = data.w.data(), *a = data.a.data();
    for (int j = 0; j < model.N; ++j)
        for (int k = 0; k < N_PARAMETERS; ++k) {
            double unit[N_PARAMETERS] = {0.0};
            unit[k] = 1.0;
            double y[6];
            body_force(local_parameters(model, unit, 0), v + 6 * j, w + 6 * j, a + 6 * j, factorization, y);
            double s = 0.0;
            for (int r = 0; r < 6; ++r) s += y[r] * (v[6 * j + r] - w[6 * j + r]);
            Yts[N_PARAMETERS * j + k] = s;
        }
    return status;
}

}  // namespace coriolis
