// The core's entry points for one state, each choosing its kernel as Pinocchio would: in body
// coordinates for robots of 1-DoF joints under at most a free root (model.body_frame), in the
// computation frame otherwise. A C++ program includes this file alone.
#pragma once

#include <cmath>

#include "christoffel.hpp"
#include "coriolis.hpp"
#include "coriolis_transpose_derivatives.hpp"
#include "crba.hpp"
#include "crba_body.hpp"
#include "forward_dynamics.hpp"
#include "forward_dynamics_derivatives.hpp"
#include "forward_dynamics_second_derivatives.hpp"
#include "gravity_derivatives.hpp"
#include "momentum.hpp"
#include "momentum_derivatives.hpp"
#include "rnea.hpp"
#include "rnea_body.hpp"
#include "rnea_derivatives.hpp"
#include "rnea_second_derivatives.hpp"
#include "slotine_li.hpp"
#include "slotine_li_body.hpp"
#include "slotine_li_derivatives.hpp"

namespace coriolis {

inline int64_t compute_mass_matrix(const Model& model, Data& data, const double* q, double* M) {
    return model.body_frame ? mass_matrix_body(model, data, q, M) : mass_matrix(model, data, q, M);
}

// τ, or OVERFLOW where the state is finite and τ is not (q̇ of 1e200: its products overflow)
inline int64_t compute_inverse_dynamics(const Model& model, Data& data, const double* q, const double* qd,
                                        const double* qdd, const double* gravity, double* tau) {
    const int64_t status = model.body_frame ? inverse_dynamics_body(model, data, q, qd, qdd, gravity, tau)
                                            : rnea(model, data, q, qd, qdd, gravity, tau);
    if (failed(status)) return status;
    for (int i = 0; i < model.nv; ++i)
        if (!std::isfinite(tau[i])) return OVERFLOW;
    return status;
}

inline int64_t compute_gravity_vector(const Model& model, Data& data, const double* q, const double* gravity,
                                      double* g) {
    return model.body_frame ? gravity_vector_body(model, data, q, gravity, g)
                            : gravity_vector(model, data, q, gravity, g);
}

inline int64_t compute_slotine_li(const Model& model, Data& data, const double* q, const double* qd,
                                  const double* qd_r, const double* qdd_r, const double* gravity, const double* theta,
                                  int factorization, double* tau) {
    return model.body_frame ? slotine_li_body(model, data, q, qd, qd_r, qdd_r, gravity, theta, factorization, tau)
                            : slotine_li(model, data, q, qd, qd_r, qdd_r, gravity, theta, factorization, tau);
}

inline int64_t compute_adaptation_gradient(const Model& model, Data& data, const double* q, const double* qd,
                                           const double* qd_r, const double* qdd_r, const double* gravity,
                                           int factorization, double* Yts) {
    return model.body_frame
               ? adaptation_gradient_body(model, data, q, qd, qd_r, qdd_r, gravity, factorization, Yts)
               : regressor(model, data, q, qd, qd_r, qdd_r, gravity, factorization, nullptr, Yts);
}

}  // namespace coriolis
