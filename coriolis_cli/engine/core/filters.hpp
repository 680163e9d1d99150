// The low-pass filter F = λ/(s + λ) of identification's momentum and energy forms (Wensing–Slotine
// App. B-B) along a recording. Over each step (t_{k−1}, t_k] the input is the mean of its values
// at the step's two ends, start[k] (just after t_{k−1}) and end[k] (just before t_k): the
// trapezoid for a signal that varies continuously, the held value for a command held over the
// step. With a_k = 1 − exp(−λ (t_k − t_{k−1})),  F_k = F_{k−1} + a_k (½ (start_k + end_k) − F_{k−1}),
// for any spacing of the stamps; the filter starts in steady state, F_0 = end_0.
#pragma once

#include <cmath>
#include <cstdint>

namespace coriolis {

// out (k x m) = F for one chunk; state (m) and clock (2) = (last stamp, started) are updated in place
inline void low_pass(int64_t k, int64_t m, const double* t, const double* start, const double* end, double cutoff,
                     double* state, double* clock, double* out) {
    for (int64_t s = 0; s < k; ++s) {
        const int64_t o = s * m;
        if (clock[1] == 0.0) {
            for (int64_t j = 0; j < m; ++j) state[j] = end[o + j];
            clock[1] = 1.0;
        } else {
            const double a = 1.0 - std::exp(-cutoff * (t[s] - clock[0]));
            for (int64_t j = 0; j < m; ++j) state[j] += a * (0.5 * (start[o + j] + end[o + j]) - state[j]);
        }
        clock[0] = t[s];
        for (int64_t j = 0; j < m; ++j) out[o + j] = state[j];
    }
}

}  // namespace coriolis
