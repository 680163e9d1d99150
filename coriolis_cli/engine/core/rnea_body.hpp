// The recursive Newton–Euler algorithm (rnea.hpp) in body coordinates, as Pinocchio's rnea and
// computeGeneralizedGravity run it, for robots of 1-DoF joints under at most a free root:
//
//   τ:    v_i = iX_p v_p + S_i q̇_i,  a_i = iX_p a_p + S_i q̈_i + v_i × S_i q̇_i  (a_0 = −g),
//         f_i = I_i a_i + v_i ×* I_i v_i,  τ_i = S_iᵀ f_i,  f_p += pX_i* f_i
//   g(q): the same at rest, where the velocity terms vanish: a_i = iX_p a_p, f_i = I_i a_i.
#pragma once

#include "slotine_li_body.hpp"

namespace coriolis {

// g(q) into g; returns a status code
inline int64_t gravity_vector_body(const Model& model, Data& data, const double* q, const double* gravity, double* g) {
    const int64_t status = load_configuration(model, q, data.q.data());
    if (failed(status)) return status;
    double *a = data.a.data(), *f = data.f.data(), *Xb = data.Xb.data();
    double a0[6];
    root_acceleration(model, data.q.data(), gravity, a0);
    for (int i = 0; i < model.N; ++i) {  // a_i = iX_p a_p, from a_0 = −g in the computation frame
        const int64_t jt = model.joint(i);
        const int p = model.parent(i);
        if (jt == FREE) {  // the root's frame is the computation frame
            for (int k = 0; k < 6; ++k) a[6 * i + k] = a0[k];
        } else {
            body_placement(model, jt, data.q[model.q_start(i)], i, Xb);
            child_motion(Xb, i, p >= 0 ? a + 6 * p : a0, a + 6 * i);
        }
        inertia_times(local_parameters(model, nullptr, i), a + 6 * i, f + 6 * i);
    }
    joint_forces(model, Xb, f, g);
    return status;
}

// τ = M q̈ + C q̇ + g into tau: Slotine–Li's motion at q̇_r = q̇, q̈_r = q̈; returns a status code
inline int64_t inverse_dynamics_body(const Model& model, Data& data, const double* q, const double* qd,
                                     const double* qdd, const double* gravity, double* tau) {
    const int n = model.nv;
    const int64_t status = local_motion(model, data, q, qd, qd, qdd, gravity);
    if (failed(status)) {  // q̈ is local_motion's third vector and the RNEA's second: numbered as there
        const int64_t m = model.nq;
        return m + 2 * n < status && status <= m + 3 * n ? status - n : status;
    }
    double* f = data.f.data();
    for (int i = 0; i < model.N; ++i) {
        const Parameters p = local_parameters(model, nullptr, i);
        const double* vi = data.v.data() + 6 * i;
        double Ia[6], Iv[6], c[6];
        inertia_times(p, data.a.data() + 6 * i, Ia);
        inertia_times(p, vi, Iv);
        force_cross(vi, Iv, c);
        for (int k = 0; k < 6; ++k) f[6 * i + k] = Ia[k] + c[k];
    }
    joint_forces(model, data.Xb.data(), f, tau);
    add_armature_force(model, data.q.data(), qd, qdd, qd, tau);
    return status;
}

}  // namespace coriolis
