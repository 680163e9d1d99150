"""The collision observers' recursions over a recording, compiled (observers.py holds their
meaning). The applied torque of sample k acts over [t_k, t_k+1] (a controller's command, held),
so with dt_k = t_k − t_{k−1} and u = τ + Cᵀq̇ − g:

    momentum:  I_k = I_{k−1} + dt_k (u_{k−1} + r_{k−1}),                 r_k = K (p_k − p_0 − I_k)
    energy:    J_k = J_{k−1} + dt_k (q̇_{k−1}ᵀ(τ_{k−1} − g_{k−1}) + σ_{k−1}),  σ_k = k_E (T_k − T_0 − J_k)

explicit in r and σ, each sample O(nv); the state (p_0, I, r, u_{k−1}, T_0, J, σ, power_{k−1},
t_{k−1}) is carried from one chunk to the next."""

from __future__ import annotations

from numba import njit

STATE_SCALARS = 6  # T_0, J, σ, t_{k−1}, started, q̇ᵀ(τ − g) at k − 1


@njit(cache=True)
def momentum_energy_recursion(t, P, CT, G, TAU, QD, kinetic, K, kE, p0, integral, r, u, scalars, R, SIGMA):
    """Fill R (k, nv) and SIGMA (k,) for one chunk; p0, integral, r, u (nv) and scalars
    (STATE_SCALARS) are the state, updated in place."""
    n = P.shape[1]
    for s in range(t.shape[0]):
        if scalars[4] == 0.0:  # the first sample: the observers start at rest there
            for j in range(n):
                p0[j] = P[s, j]
                integral[j] = 0.0
                r[j] = 0.0
            scalars[0], scalars[1], scalars[2], scalars[4] = kinetic[s], 0.0, 0.0, 1.0
        else:
            dt = t[s] - scalars[3]
            for j in range(n):
                integral[j] += dt * (u[j] + r[j])
            for j in range(n):
                r[j] = K[j] * (P[s, j] - p0[j] - integral[j])
            scalars[1] += dt * (scalars[5] + scalars[2])
            scalars[2] = kE * (kinetic[s] - scalars[0] - scalars[1])
        power = 0.0
        for j in range(n):
            u[j] = TAU[s, j] + CT[s, j] - G[s, j]
            power += QD[s, j] * (TAU[s, j] - G[s, j])
        scalars[5] = power
        scalars[3] = t[s]
        for j in range(n):
            R[s, j] = r[j]
        SIGMA[s] = scalars[2]
