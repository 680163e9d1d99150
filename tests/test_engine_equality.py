"""The compiled engine (C++, engine/core) against the numba kernels it replaces, bit for bit, on
every robot and edge state of tests/engine_cases.py; status codes included."""

from __future__ import annotations

import numpy as np
import pytest

from coriolis_cli.engine import compiled
from coriolis_cli.engine import coriolis as coriolis_module
from coriolis_cli.engine import crba, rnea
from coriolis_cli.engine.christoffel import christoffel_entry
from coriolis_cli.engine.crba_body import mass_matrix_local_entry
from coriolis_cli.engine.data import BODY_FRAME_
from coriolis_cli.engine.forward_dynamics import forward_dynamics_entry
from coriolis_cli.engine.forward_dynamics_body import forward_dynamics_local_entry
from coriolis_cli.engine.momentum import momentum_entry, momentum_regressor_entry, trajectory_batch
from coriolis_cli.engine.rnea_body import gravity_local_entry, inverse_dynamics_local_entry
from coriolis_cli.engine.slotine_li import adaptation_gradient_entry, regressor_entry, slotine_li_entry
from coriolis_cli.engine.data import Data
from coriolis_cli.model.joints import FLOATING, FREE, PLANAR, SPHERICAL

from . import engine_cases
from .engine_cases import GRAVITY, core_outputs, theta_for

@pytest.fixture(scope="module")
def robots(tmp_path_factory):
    return engine_cases.robots(tmp_path_factory.mktemp("robots"))


def same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def reference(robot, q, qd, qdd):
    """Every output of the numba kernels at one state, world frame and (where they apply) body
    coordinates, and their status codes. q̈ is also the torque of forward dynamics and q̈_r of
    Slotine–Li; q̇ reversed is q̇_r."""
    qd_r, theta = qd[::-1].copy(), theta_for(robot.n_bodies)
    out = {}
    for frame in ("world", "auto"):
        d = Data(robot)
        if frame == "world":
            d.ints[BODY_FRAME_] = 0
        local = frame == "auto" and d.body_frame_joints
        if local:
            out["M", frame] = (mass_matrix_local_entry(d.address, q), d.M.copy())
            out["tau", frame] = (inverse_dynamics_local_entry(d.address, q, qd, qdd, GRAVITY), d.tau.copy())
            out["g", frame] = (gravity_local_entry(d.address, q, GRAVITY), d.g.copy())
            s = forward_dynamics_local_entry(d.address, q, qd, qdd, GRAVITY)
            if s != 0:
                s = forward_dynamics_entry(d.ints, d.floats, q, qd, qdd, GRAVITY)
            out["qdd", frame] = (s, d.qdd.copy())
        else:
            out["M", frame] = (crba.mass_matrix_entry(d.ints, d.floats, q), d.M.copy())
            out["tau", frame] = (rnea.inverse_dynamics_entry(d.ints, d.floats, q, qd, qdd, GRAVITY), d.tau.copy())
            out["g", frame] = (rnea.gravity_vector_entry(d.ints, d.floats, q, GRAVITY), d.g.copy())
            out["qdd", frame] = (forward_dynamics_entry(d.ints, d.floats, q, qd, qdd, GRAVITY), d.qdd.copy())
        for f in (0, 1):
            for th in (np.zeros(0), theta):
                s = slotine_li_entry(d.ints, d.floats, q, qd, qd_r, qdd, GRAVITY, th, f)
                out["slotine", frame, f, th.size] = (s, d.tau.copy())
            Yts = np.zeros(10 * robot.n_bodies)
            out["Yts", frame, f] = (adaptation_gradient_entry(d.ints, d.floats, q, qd, qd_r, qdd, GRAVITY, f, Yts), Yts)
    for f in (0, 1):
        d = Data(robot)
        Y, Yts = np.zeros((robot.nv, 10 * robot.n_bodies)), np.zeros(10 * robot.n_bodies)
        out["Y", f] = (regressor_entry(d.ints, d.floats, q, qd, qd_r, qdd, GRAVITY, f, Y, Yts), (Y, Yts))
        d = Data(robot)
        s = coriolis_module.coriolis_entry(d.ints, d.floats, q, qd, f)
        out["coriolis", f] = (s, np.stack([d.M, d.Mdot, d.C]))
    G = np.zeros((robot.nv,) * 3)
    d = Data(robot)
    out["Gamma"] = (christoffel_entry(d.ints, d.floats, q, G), G)
    d = Data(robot)
    out["momentum"] = (momentum_entry(d.ints, d.floats, q, qd), (d.p.copy(), d.CTqd.copy()))
    n, width = robot.nv, 10 * robot.n_bodies
    Y = tuple(np.zeros((n, width)) for _ in range(3)) + (np.zeros(width),)
    out["momentum_regressors"] = (momentum_regressor_entry(d.ints, d.floats, q, qd, GRAVITY, *Y), Y)
    for use_qdd in (True, False) if q.size == robot.nq and qd.size == qdd.size == n else ():  # batches take whole states
        row, status = np.zeros((1, 5 * n + 2)), np.zeros(1, dtype=np.int64)
        trajectory_batch(d.model, *(np.ascontiguousarray(x)[None] for x in (q, qd, qdd)), use_qdd, GRAVITY.copy(), 1, row, status)
        out["trajectory", use_qdd] = (int(status[0]), row)
    return out


def assert_equal(robot_name, ref, new):
    for key, (status, value) in ref.items():
        s, v = new[key]
        assert s == status, (robot_name, key, s, status)
        if status == 0 or status < -1 and status % 2:  # computed (with or without a warning)
            for mine, theirs in zip(v, value) if isinstance(v, tuple) else ((v, value),):
                assert same_bits(mine, theirs), (robot_name, key, np.abs(mine - theirs).max())


def test_every_output_equals_the_reference_bit_for_bit(robots):
    for name, robot in robots:
        for q, qd, qdd in engine_cases.states(robot, 4, seed=len(name)):
            assert_equal(name, reference(robot, q, qd, qdd), core_outputs(robot.arrays, robot.nq, q, qd, qdd))


def test_edge_states_give_the_same_status_codes(robots):
    for name, robot in robots:
        q, qd, qdd = next(engine_cases.states(robot, 1, seed=1))
        cases = [(np.full_like(q, np.nan), qd, qdd), (q, np.where(np.arange(robot.nv) == robot.nv - 1, np.inf, qd), qdd),
                 (q, qd, np.full_like(qdd, np.nan)), (q[:-1], qd, qdd), (q, qd[::-1].copy()[:-1], qdd),
                 (np.repeat(q, 2)[::2], qd, qdd)]  # NaN in each vector, wrong lengths, a stride
        for b in range(robot.n_bodies):
            code, qs = robot.arrays.ints[b, 1], robot.arrays.ints[b, 2]
            if code in (FREE, FLOATING, SPHERICAL, PLANAR):
                o = qs + {FREE: 3, FLOATING: 3, SPHERICAL: 0, PLANAR: 2}[code]
                zero = q.copy()
                zero[o : o + (2 if code == PLANAR else 4)] = 0.0
                cases.append((zero, qd, qdd))
        for q_, qd_, qdd_ in cases:
            assert_equal(name, reference(robot, q_, qd_, qdd_), core_outputs(robot.arrays, robot.nq, q_, qd_, qdd_))
