"""The first-order derivatives of the inverse and forward dynamics (engine/core/rnea_derivatives.hpp,
forward_dynamics_derivatives.hpp) against Pinocchio's computeRNEADerivatives and
computeABADerivatives, central finite differences of our own τ and q̈, and the identity
∂τ/∂q̇ = 2 C of the Christoffel-consistent C (core paper, Remark 3)."""

from __future__ import annotations

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.errors import StateError

from .conftest import robot_path

ROBOTS = ["panda.urdf", "serial20.urdf", "binary20.urdf", "planar_2link.urdf"]


def _state(robot, seed):
    rng = np.random.default_rng(seed)
    return robot.random_configuration(rng), rng.standard_normal(robot.nv), rng.standard_normal(robot.nv)


@pytest.mark.parametrize("name", ROBOTS)
def test_the_derivatives_equal_pinocchio_s(name):
    pytest.importorskip("pinocchio")
    from coriolis_cli.peers.pinocchio import PinocchioPeer

    robot = cc.load_robot(robot_path(name))
    peer = PinocchioPeer(robot)
    peer._gravity(True)
    for seed in range(3):
        q, v, a = _state(robot, seed)
        dq, dv, M = cc.inverse_dynamics_derivatives(robot, q, v, a)
        peer.pin.computeRNEADerivatives(peer.model, peer.data, peer.q(q), peer.v(v), peer.v(a))
        for ours, theirs in ((dq, peer.data.dtau_dq), (dv, peer.data.dtau_dv)):
            theirs = peer.to_ours_matrix(np.array(theirs))
            assert np.abs(ours - theirs).max() <= 1e-12 * max(1.0, np.abs(theirs).max())
        assert np.array_equal(M, M.T) and np.abs(M - cc.mass_matrix(robot, q)).max() <= 1e-12 * np.abs(M).max()


@pytest.mark.parametrize("name", ["panda.urdf", "binary20.urdf"])
def test_the_derivatives_are_the_slopes_of_tau(name):
    robot = cc.load_robot(robot_path(name))
    q, v, a = _state(robot, 7)
    dq, dv, _ = cc.inverse_dynamics_derivatives(robot, q, v, a, gravity=[0.3, -1.0, -9.0])
    h = 1e-6
    for k in range(robot.nv):
        e = np.zeros(robot.nv)
        e[k] = h
        slope_q = (cc.inverse_dynamics(robot, q + e, v, a, gravity=[0.3, -1.0, -9.0])
                   - cc.inverse_dynamics(robot, q - e, v, a, gravity=[0.3, -1.0, -9.0])) / (2 * h)
        slope_v = (cc.inverse_dynamics(robot, q, v + e, a, gravity=[0.3, -1.0, -9.0])
                   - cc.inverse_dynamics(robot, q, v - e, a, gravity=[0.3, -1.0, -9.0])) / (2 * h)
        assert np.abs(dq[:, k] - slope_q).max() <= 1e-6 * max(1.0, np.abs(dq).max()), k
        assert np.abs(dv[:, k] - slope_v).max() <= 1e-6 * max(1.0, np.abs(dv).max()), k


def test_the_velocity_derivative_is_twice_the_christoffel_consistent_c():
    robot = cc.load_robot("panda")
    q, v, a = _state(robot, 3)
    _, dv, _ = cc.inverse_dynamics_derivatives(robot, q, v, a)
    C = cc.coriolis_matrix(robot, q, v)[2]
    assert np.abs(dv - 2 * C).max() <= 1e-13 * np.abs(C).max()


def test_batches_are_each_state_s_and_other_robots_are_refused_in_one_line(run_cli):
    robot = cc.load_robot("panda")
    rng = np.random.default_rng(2)
    Q = np.array([robot.random_configuration(rng) for _ in range(5)])
    V, A = rng.standard_normal((5, 7)), rng.standard_normal((5, 7))
    dq, dv, M = cc.inverse_dynamics_derivatives(robot, Q, V, A)
    data = robot.create_data()
    for s in range(5):
        one = cc.inverse_dynamics_derivatives(robot, Q[s], V[s], A[s])
        assert all(np.array_equal(x[s], y) for x, y in zip((dq, dv, M), one))
        into = cc.inverse_dynamics_derivatives(robot, Q[s], V[s], A[s], data=data)
        assert into[0] is data.dtau_dq and all(np.array_equal(x, y) for x, y in zip(into, one))
    floating = cc.load_robot(robot_path("quadruped.urdf"), floating_base=True)
    with pytest.raises(StateError, match="trees of 1-DoF joints on a fixed base so far; 'quadruped' has free joints"):
        cc.inverse_dynamics_derivatives(floating, *_state(floating, 0))
    mimic = cc.load_robot(robot_path("gripper.urdf"), mimic="enforce")
    with pytest.raises(StateError, match="does not take robots in other coordinates"):
        cc.inverse_dynamics_derivatives(mimic, *_state(mimic, 0))


@pytest.mark.parametrize("name", ROBOTS)
def test_the_forward_dynamics_derivatives_equal_pinocchio_s(name):
    pytest.importorskip("pinocchio")
    from coriolis_cli.peers.pinocchio import PinocchioPeer

    robot = cc.load_robot(robot_path(name))
    peer = PinocchioPeer(robot)
    peer._gravity(True)
    for seed in range(3):
        q, v, tau = _state(robot, seed)
        dq, dv, Minv = cc.forward_dynamics_derivatives(robot, q, v, tau)
        peer.pin.computeABADerivatives(peer.model, peer.data, peer.q(q), peer.v(v), peer.v(tau))
        theirs_Minv = peer.to_ours_matrix(np.array(peer.data.Minv))
        theirs_Minv = np.triu(theirs_Minv) + np.triu(theirs_Minv, 1).T
        # M of the 20-link chain has a condition number near 1e5: both factorizations lose as much
        tolerance = 1e-14 * np.linalg.cond(cc.mass_matrix(robot, q))
        for ours, theirs in ((dq, peer.data.ddq_dq), (dv, peer.data.ddq_dv), (Minv, theirs_Minv)):
            theirs = peer.to_ours_matrix(np.array(theirs)) if theirs is not theirs_Minv else theirs
            assert np.abs(ours - theirs).max() <= tolerance * max(1.0, np.abs(theirs).max())
        assert np.abs(Minv @ cc.mass_matrix(robot, q) - np.eye(robot.nv)).max() <= tolerance


def test_the_forward_dynamics_derivatives_are_the_slopes_of_qdd():
    robot = cc.load_robot("panda")
    q, v, tau = _state(robot, 11)
    dq, dv, Minv = cc.forward_dynamics_derivatives(robot, q, v, tau)
    h = 1e-6
    for k in range(robot.nv):
        e = np.zeros(robot.nv)
        e[k] = h
        for ours, (plus, minus) in ((dq[:, k], (cc.forward_dynamics(robot, q + e, v, tau), cc.forward_dynamics(robot, q - e, v, tau))),
                                    (dv[:, k], (cc.forward_dynamics(robot, q, v + e, tau), cc.forward_dynamics(robot, q, v - e, tau))),
                                    (Minv[:, k], (cc.forward_dynamics(robot, q, v, tau + e), cc.forward_dynamics(robot, q, v, tau - e)))):
            slope = (plus - minus) / (2 * h)
            assert np.abs(ours - slope).max() <= 1e-6 * max(1.0, np.abs(slope).max()), k
    data = robot.create_data()
    into = cc.forward_dynamics_derivatives(robot, q, v, tau, data=data)
    assert into[2] is data.Minv and all(np.array_equal(x, y) for x, y in zip(into, (dq, dv, Minv)))


def test_bench_times_the_derivatives_against_pinocchio_and_says_where_it_cannot(run_cli):
    pytest.importorskip("pinocchio")
    import json

    r = run_cli("bench", "panda", "--what", "dtau,dqdd", "--peers", "--repeat", "3", "--format", "json")
    assert r.code == 0, r
    timings = {(t["what"], t["implementation"]) for system in json.loads(r.out)["systems"] for t in system["timings"]}
    assert {("dtau", "pinocchio computeRNEADerivatives"), ("dqdd", "pinocchio computeABADerivatives")} <= timings
    assert {("dtau", "coriolis, data= (public API)"), ("dqdd", "coriolis, data= (public API)")} <= timings
    r = run_cli("bench", robot_path("quadruped.urdf"), "--floating-base", "--what", "C,dtau", "--repeat", "3")
    assert r.code == 0 and "not timed" in r.err, r


def test_verify_holds_the_derivatives_to_central_differences(run_cli):
    import json

    r = run_cli("verify", "panda", robot_path("quadruped.urdf"), "--trials", "3", "--ref-trials", "2", "--format", "json")
    assert r.code == 0, r
    checks = {rb["robot"]: {c["key"]: c for c in rb["checks"]} for rb in json.loads(r.out)["robots"]}
    assert checks["panda"]["o"]["passed"] is True and checks["panda"]["o"]["max_rel"] < 1e-8
    assert checks["panda"]["o"]["trials"] == 2
