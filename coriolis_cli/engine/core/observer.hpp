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

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

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

// The baseline β (k x n) from which observe's automatic rule measures the residual R (k x n)
// against the threshold L (k x n), sample by sample (estimation/observers.py says why):
//   level ← level + (1 − e^(−dt/0.05)) (r − level)                      r's 50 ms average
//   an event is open from the first sample with some |r − β| > θ until `join` s pass without one;
//   if the level has changed by less than θ/2 since sample back[s] (STEADY_TIME before) while some DoF
//   stands more than θ/2 from β, β ← level                               (a new rest)
//   else β follows the level with time constant `slow` (no event; `after_catch` within `after` s
//   of one), not at all for the first `hold` s of an event, then `catch_up`.
// `level` (k x n) is scratch for the average's history.
inline void drift_baseline(int64_t k, int n, const double* t, const double* R, const double* L, const int64_t* back,
                           double join, double slow, double hold, double catch_up, double after, double after_catch,
                           double average, double* level, double* beta_out) {
    if (k == 0) return;
    std::vector<double> beta(R, R + n), lvl(R, R + n);
    bool open = false;
    double opened = 0.0, last_over = -std::numeric_limits<double>::infinity();
    for (int64_t s = 0; s < k; ++s) {
        const int64_t o = s * n;
        const double dt = s ? t[s] - t[s - 1] : 0.0;
        const double a = 1.0 - std::exp(-dt / average);
        bool over = false;
        for (int j = 0; j < n; ++j) {
            lvl[j] += a * (R[o + j] - lvl[j]);
            level[o + j] = lvl[j];
            over = over || std::fabs(R[o + j] - beta[j]) > L[o + j];
        }
        if (over) {
            if (!open) opened = t[s];
            open = true;
            last_over = t[s];
        } else if (t[s] - last_over > join) {
            open = false;
        }
        bool settled = back[s] >= 0, apart = false;
        for (int j = 0; settled && j < n; ++j) {
            settled = std::fabs(lvl[j] - level[back[s] * n + j]) <= 0.5 * L[o + j];
            apart = apart || std::fabs(lvl[j] - beta[j]) > 0.5 * L[o + j];
        }
        double rate = -1.0;  // the time constant β follows with (< 0: held)
        if (settled && apart) {
            for (int j = 0; j < n; ++j) beta[j] = lvl[j];
        } else if (!open) {
            rate = t[s] - last_over <= after ? after_catch : slow;
        } else if (t[s] - opened > hold) {
            rate = catch_up;
        }
        if (rate > 0.0) {
            const double b = 1.0 - std::exp(-dt / rate);
            for (int j = 0; j < n; ++j) beta[j] += b * (lvl[j] - beta[j]);
        }
        for (int j = 0; j < n; ++j) beta_out[o + j] = beta[j];
    }
}

}  // namespace coriolis
