"""The low-pass filter F = λ/(s + λ) of identification's momentum and energy forms (Wensing–Slotine
App. B-B) along a recording, compiled. Over each step (t_{k−1}, t_k] the input is taken as the
mean of its values at the step's two ends, ``start[k]`` (just after t_{k−1}) and ``end[k]`` (just
before t_k): the trapezoid for a signal that varies continuously, and the held value for a command
held over the step (start = end). With a_k = 1 − exp(−λ (t_k − t_{k−1})),

    F_k = F_{k−1} + a_k (½ (start_k + end_k) − F_{k−1}),

for any spacing of the stamps. The state (F, the last stamp, whether it started) is carried from
one chunk to the next; the filter starts in steady state, F_0 = end_0."""

from __future__ import annotations

import math

from numba import njit


@njit(cache=True)
def low_pass(t, start, end, cutoff, state, clock, out):
    """out (k, m) = F for one chunk (t: (k,), start and end: (k, m)); state (m,) and clock (2,) =
    (last stamp, started) are updated in place."""
    m = end.shape[1]
    for s in range(t.shape[0]):
        if clock[1] == 0.0:
            for j in range(m):
                state[j] = end[s, j]
            clock[1] = 1.0
        else:
            a = 1.0 - math.exp(-cutoff * (t[s] - clock[0]))
            for j in range(m):
                state[j] += a * (0.5 * (start[s, j] + end[s, j]) - state[j])
        clock[0] = t[s]
        for j in range(m):
            out[s, j] = state[j]
