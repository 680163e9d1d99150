"""The compiled engine (C++, engine/core) against the numba kernels it replaces, bit for bit, on
every robot and edge state of tests/engine_cases.py; status codes included."""

from __future__ import annotations

import numpy as np
import pytest

from coriolis_cli.engine import compiled
from coriolis_cli.engine import coriolis as coriolis_module
from coriolis_cli.engine import crba, rnea
from coriolis_cli.engine.christoffel import christoffel_entry
from coriolis_cli.engine.data import Data
from coriolis_cli.model.joints import FLOATING, FREE, PLANAR, SPHERICAL

from . import engine_cases

GRAVITY = np.array([0.0, 0.0, -9.81])


@pytest.fixture(scope="module")
def robots(tmp_path_factory):
    return engine_cases.robots(tmp_path_factory.mktemp("robots"))


def workspace(robot):
    a = robot.arrays
    return compiled.Workspace(a.ints, a.cols, a.geom, robot.nq)


def same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def reference(robot, q, qd, qdd):
    """Every world-frame output of the numba kernels at one state, and their status codes."""
    d = Data(robot)
    out = {"M": (crba.mass_matrix_entry(d.ints, d.floats, q), d.M.copy())}
    out["tau"] = (rnea.inverse_dynamics_entry(d.ints, d.floats, q, qd, qdd, GRAVITY), d.tau.copy())
    out["g"] = (rnea.gravity_vector_entry(d.ints, d.floats, q, GRAVITY), d.g.copy())
    for f in (0, 1):
        d = Data(robot)
        s = coriolis_module.coriolis_entry(d.ints, d.floats, q, qd, f)
        out[f"coriolis{f}"] = (s, np.stack([d.M, d.Mdot, d.C]))
    G = np.zeros((robot.nv,) * 3)
    d = Data(robot)
    out["Gamma"] = (christoffel_entry(d.ints, d.floats, q, G), G)
    return out


def core_outputs(robot, q, qd, qdd):
    w, n = workspace(robot), robot.nv
    M, tau, g = np.zeros((n, n)), np.zeros(n), np.zeros(n)
    out = {"M": (compiled.mass_matrix(w, q, M), M)}
    out["tau"] = (compiled.inverse_dynamics(w, q, qd, qdd, GRAVITY, tau), tau)
    out["g"] = (compiled.gravity_vector(w, q, GRAVITY, g), g)
    for f in (0, 1):
        MMC = np.zeros((3, n, n))
        out[f"coriolis{f}"] = (compiled.coriolis_matrix(workspace(robot), q, qd, f, MMC), MMC)
    G = np.zeros((n,) * 3)
    out["Gamma"] = (compiled.christoffel(workspace(robot), q, G), G)
    return out


def assert_equal(robot_name, ref, new):
    for key, (status, value) in ref.items():
        s, v = new[key]
        assert s == status, (robot_name, key, s, status)
        if status == 0 or status < -1 and status % 2:  # computed (with or without a warning)
            assert same_bits(v, value), (robot_name, key, np.abs(v - value).max())


def test_every_output_equals_the_reference_bit_for_bit(robots):
    for name, robot in robots:
        for q, qd, qdd in engine_cases.states(robot, 4, seed=len(name)):
            assert_equal(name, reference(robot, q, qd, qdd), core_outputs(robot, q, qd, qdd))


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
            assert_equal(name, reference(robot, q_, qd_, qdd_), core_outputs(robot, q_, qd_, qdd_))
