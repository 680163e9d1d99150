// The collision observers' recursions over a recording (estimation/observers.py holds their meaning). The
// applied torque of sample k acts over [t_k, t_k+1] (a controller's command, held), so with
// dt_k = t_k − t_{k−1} and u = τ + Cᵀq̇ − g:
//
//   momentum:  I_k = I_{k−1} + dt_k (u_{k−1} + r_{k−1}),   r_k = K (p_k − p_0 − I_k)
//   energy:    J_k = J_{k−1} + dt_k (q̇_{k−1}ᵀ(τ_{k−1} − g_{k−1}) + σ_{k−1}),  σ_k = k_E (T_k − T_0 − J_k)
//
// explicit in r and σ, each sample O(nv); the state (p_0, I, r, u_{k−1}, and the scalars T_0, J,
// σ, t_{k−1}, started, q̇ᵀ(τ − g) at k − 1) is carried from one chunk to the next.
#pragma once

#include <cstdint>

namespace coriolis {

constexpr int OBSERVER_SCALARS = 6;

// R (k x n) and SIGMA (k) for one chunk of k samples; p0, integral, r, u (n) and scalars are the
// state, updated in place
inline void momentum_energy_recursion(int64_t k, int n, const double* t, const double* P, const double* CT,
                                      const double* G, const double* TAU, const double* QD, const double* kinetic,
                                      const double* K, double kE, double* p0, double* integral, double* r, double* u,
                                      double* scalars, double* R, double* SIGMA) {
    for (int64_t s = 0; s < k; ++s) {
        const int64_t o = s * n;
        if (scalars[4] == 0.0) {  // the first sample: the observers start at rest there
            for (int j = 0; j < n; ++j) {
                p0[j] = P[o + j];
                integral[j] = 0.0;
                r[j] = 0.0;
            }
            scalars[0] = kinetic[s];
            scalars[1] = 0.0;
            scalars[2] = 0.0;
            scalars[4] = 1.0;
        } else {
            const double dt = t[s] - scalars[3];
            for (int j = 0; j < n; ++j) integral[j] += dt * (u[j] + r[j]);
            for (int j = 0; j < n; ++j) r[j] = K[j] * (P[o + j] - p0[j] - integral[j]);
            scalars[1] += dt * (scalars[5] + scalars[2]);
            scalars[2] = kE * (kinetic[s] - scalars[0] - scalars[1]);
        }
        double power = 0.0;
        for (int j = 0; j < n; ++j) {
            u[j] = TAU[o + j] + CT[o + j] - G[o + j];
            power += QD[o + j] * (TAU[o + j] - G[o + j]);
        }
        scalars[5] = power;
        scalars[3] = t[s];
        for (int j = 0; j < n; ++j) R[o + j] = r[j];
        SIGMA[s] = scalars[2];
    }
}

}  // namespace coriolis
