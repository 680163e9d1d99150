// Timing loops: a kernel evaluated R times over given states with no interpreter between
// evaluations, as C++ code such as the paper's Table 1 is timed (coriolis bench's "loop" column).
#pragma once

#include <string>
#include <vector>

#include "engine.hpp"

namespace coriolis {

// `what`: C (M, Ṁ and C), Gamma, M, tau, g, fd or slotine; states cycle through the K rows of Q, QD
// and QDD (q̈, and the torque of fd); false for an unknown name
inline bool kernel_loop(const Model& model, Data& data, const std::string& what, int64_t R, int64_t K, const double* Q,
                        const double* QD, const double* QDD) {
    static const double gravity[3] = {0.0, 0.0, -9.81};
    const int n = model.nv, nq = model.nq;
    std::vector<double> out(what == "Gamma" ? size_t(n) * n * n : size_t(3) * n * n);
    double* o = out.data();
    for (int64_t s = 0; s < R; ++s) {
        const int64_t k = s % K;
        const double *q = Q + k * nq, *qd = QD + k * n, *qdd = QDD + k * n;
        if (what == "C")
            coriolis_matrix(model, data, q, qd, CHRISTOFFEL, o, o + n * n, o + 2 * n * n);
        else if (what == "Gamma")
            christoffel(model, data, q, o);
        else if (what == "M")
            compute_mass_matrix(model, data, q, o);
        else if (what == "tau")
            compute_inverse_dynamics(model, data, q, qd, qdd, gravity, o);
        else if (what == "g")
            compute_gravity_vector(model, data, q, gravity, o);
        else if (what == "fd")
            compute_forward_dynamics(model, data, q, qd, qdd, gravity, o, o + n);
        else if (what == "slotine")
            compute_slotine_li(model, data, q, qd, qd, qdd, gravity, nullptr, CHRISTOFFEL, o);
        else
            return false;
    }
    return true;
}

}  // namespace coriolis
