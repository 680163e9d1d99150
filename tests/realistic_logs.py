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


def pushed_while_holding(pushes, seconds=12.0, seed=0, frictionloss=None, damping=None, stiffness=400.0):
    """A MuJoCo Panda holding a pose under a stiff joint PD with gravity compensation, pushed by a
    person: each push (start s, duration s, link, force N in the world[, ramp s]) ramps up over its
    ramp (0.1 s unless given), holds and ramps down over it. The joints have dry friction (MuJoCo's frictionloss, which holds the
    arm where a push leaves it: the holding torque then drifts from push to push) and damping.
    (t, Q, V, TAU, EXT): TAU the drives' torque, EXT the push's joint torque Jᵀ F, per 1 ms sample."""
    import mujoco

    import coriolis_cli as cc
    from coriolis_cli.peers.mujoco import MujocoPeer

    robot = cc.load_robot("panda")
    peer = MujocoPeer(robot)
    m, d = peer.m, peer.d
    m.opt.timestep = 1e-3
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT) | int(mujoco.mjtDisableBit.mjDSBL_LIMIT)
    order = [da for _, _, _, _, da, _ in peer.layout.joints]
    m.dof_frictionloss[order] = [2.0, 2.0, 1.5, 1.5, 0.8, 0.8, 0.4] if frictionloss is None else frictionloss
    m.dof_damping[order] = [0.5, 0.5, 0.4, 0.4, 0.2, 0.2, 0.1] if damping is None else damping
    rng = np.random.default_rng(seed)
    steps = int(seconds / m.opt.timestep)
    hold = m.qpos0.copy() + np.array([0.0, -0.4, 0.0, -1.8, 0.0, 1.4, 0.6])[: m.nq]
    d.qpos[:] = hold
    t, Q, V, TAU, EXT = (np.zeros(steps),) + tuple(np.zeros((steps, 7)) for _ in range(4))
    jac = np.zeros((3, m.nv))
    damping_gain = 2.0 * np.sqrt(stiffness)
    for k in range(steps):
        s = k * m.opt.timestep
        d.xfrc_applied[:] = 0.0
        for start, duration, link, force, *rise in pushes:
            ramp = np.clip(min(s - start, start + duration - s) / (rise[0] if rise else 0.1), 0.0, 1.0)
            if ramp > 0:
                body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, link)
                d.xfrc_applied[body, 0:3] += ramp * np.asarray(force, float)
        mujoco.mj_forward(m, d)
        tau = stiffness * (hold - d.qpos) - damping_gain * d.qvel + d.qfrc_bias  # PD + gravity (and C q̇)
        d.qfrc_applied[:] = tau
        ext = np.zeros(m.nv)
        for b in range(m.nbody):
            if np.any(d.xfrc_applied[b, 0:3]):
                mujoco.mj_jacBodyCom(m, d, jac, None, b)
                ext += jac.T @ d.xfrc_applied[b, 0:3]
        t[k], Q[k], V[k], TAU[k], EXT[k] = s, (d.qpos - m.qpos0)[order], d.qvel[order], tau[order], ext[order]
        mujoco.mj_step(m, d)
    return t, Q, V, TAU, EXT
