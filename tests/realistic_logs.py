"""Logs as hardware writes them, made from MuJoCo runs (never from our own engine): the robot's
1 kHz samples read by a logging PC that polls at its own, jittering pace (stamps are the PC's,
some samples are read twice under a new stamp, some are missed), with encoder quantization,
velocity noise and torque-sensor noise."""

from __future__ import annotations

import numpy as np

ENCODER_STEP = 2 * np.pi / 2**19  # rad: a 19-bit absolute encoder
VELOCITY_NOISE = 2e-3  # rad/s
TORQUE_NOISE = 0.05  # N·m


def as_logged(t, Q, V, TAU, seed=0, rate=1000.0):
    """(stamps, q, q̇, τ) as a PC logger writes the robot's samples (t, Q, V, TAU) taken at
    ``rate``: it wakes every 1/rate s late by 0.2-0.5 ms, now and then by up to 7.5 ms (and
    then catches up, 20 µs apart), and logs the latest sample with its own clock's stamp: 0.02 to
    8 ms between stamps, about 3 % of samples logged twice and as many missed, as in a real 7-DoF
    arm's excitation log (0.7 to 8.8 ms, about 5 % twice)."""
    rng = np.random.default_rng(seed)
    K = len(t)
    late = rng.uniform(2e-4, 5e-4, K)
    stalls = rng.random(K) < 0.01
    late[stalls] += rng.uniform(2e-3, 7e-3, stalls.sum())
    wake = t[0] + np.arange(K) / rate + late
    wake = np.maximum.accumulate(wake)  # a late wake-up delays the next ones it overlaps
    taken = np.searchsorted(t, wake, side="right") - 1  # the latest sample at the wake-up
    taken = np.clip(taken, 0, K - 1)
    stamps = wake + rng.uniform(0, 5e-5, K)  # the PC's own clock, read after the copy: monotonic,
    for k in range(1, K):  # so a catch-up poll is stamped 20 µs after the one before
        stamps[k] = max(stamps[k], stamps[k - 1] + 2e-5)
    # the robot measures (with its noise) once per sample; a sample read twice repeats every value
    measured_qd = V + VELOCITY_NOISE * rng.normal(size=V.shape)
    measured_tau = TAU + TORQUE_NOISE * rng.normal(size=TAU.shape)
    q = np.round(Q[taken] / ENCODER_STEP) * ENCODER_STEP
    return stamps, q, measured_qd[taken], measured_tau[taken], taken
