"""∂p/∂q of the generalized momentum p = M(q) q̇ (engine/core/momentum_derivatives.hpp) against
central differences of generalized_momentum along integrate, on every joint type and MuJoCo's
armature on a free joint; against Pinocchio's computeRNEADerivatives at rest with q̈ = q̇ and no
gravity; and against two identities: (∂p/∂q) q̇ = Ṁ q̇ (Algorithm 1's Ṁ) and [i, j] = Σ_k
∂M_ik/∂q_j q̇_k (the second derivatives' ∂²τ/∂q∂q̈). Its forms (batches, data=, robots in other
coordinates) are held by tests/test_forms.py with every public function."""

from __future__ import annotations

import numpy as np
import pytest

import coriolis_cli as cc

from .conftest import robot_path


def _state(robot, seed):
    rng = np.random.default_rng(seed)
    return cc.random_configuration(robot, rng), rng.standard_normal(robot.nv)


def _slopes(robot, q, qd, h=1e-6):
    out = np.empty((robot.nv, robot.nv))
    for j in range(robot.nv):
        e = np.zeros(robot.nv)
        e[j] = h
        out[:, j] = (cc.generalized_momentum(robot, cc.integrate(robot, q, e), qd)
                     - cc.generalized_momentum(robot, cc.integrate(robot, q, -e), qd)) / (2 * h)
    return out


def test_every_joint_type_and_free_joint_armature_match_central_differences(tmp_path):
    from .engine_cases import robots

    seen = set()
    for name, robot in robots(tmp_path):
        q, qd = _state(robot, 4)
        ours = cc.momentum_derivatives(robot, q, qd)
        assert np.abs(ours - _slopes(robot, q, qd)).max() <= 1e-6 * max(1.0, np.abs(ours).max()), name
        seen |= {b.joint.type for b in robot.bodies}
        seen |= {"armature on a free joint"} if any(b.joint.type in ("free", "floating") and any(b.joint.armature)
                                                    for b in robot.bodies) else set()
    assert {"free", "floating", "spherical", "planar", "prismatic", "revolute", "armature on a free joint"} <= seen


@pytest.mark.parametrize("name", ["panda.urdf", "serial20.urdf", "binary20.urdf", "quadruped.urdf"])
def test_it_equals_pinocchio_s_rnea_derivatives_at_rest_without_gravity(name):
    pytest.importorskip("pinocchio")
    from coriolis_cli.peers.pinocchio import PinocchioPeer

    robot = cc.load_robot(robot_path(name), floating_base=name == "quadruped.urdf")
    peer = PinocchioPeer(robot)
    peer._gravity(False)
    for seed in range(3):
        q, qd = _state(robot, seed)
        peer.pin.computeRNEADerivatives(peer.model, peer.data, peer.q(q), peer.v(np.zeros(robot.nv)), peer.v(qd))
        theirs = peer.to_ours_matrix(np.array(peer.data.dtau_dq))
        ours = cc.momentum_derivatives(robot, q, qd)
        assert np.abs(ours - theirs).max() <= 1e-12 * max(1.0, np.abs(theirs).max())


@pytest.mark.parametrize("name,floating", [("panda.urdf", False), ("binary20.urdf", False), ("humanoid.urdf", True)])
def test_it_carries_the_mass_matrix_rate_and_its_slope(name, floating):
    robot = cc.load_robot(robot_path(name), floating_base=floating)
    for seed in range(3):
        q, qd = _state(robot, seed)
        ours = cc.momentum_derivatives(robot, q, qd)
        _, Mdot, _ = cc.coriolis_matrix(robot, q, qd)
        assert np.abs(ours @ qd - Mdot @ qd).max() <= 1e-12 * max(1.0, np.abs(Mdot @ qd).max())
        dM = cc.inverse_dynamics_second_derivatives(robot, q, qd, qd)[3]  # [i, j, k] = ∂M_ik/∂q_j
        assert np.abs(ours - dM @ qd).max() <= 1e-12 * max(1.0, np.abs(ours).max())


def test_a_bad_velocity_is_named_as_qd():
    robot = cc.load_robot("panda")
    q, qd = _state(robot, 0)
    qd[3] = np.nan
    with pytest.raises(cc.StateError, match="qd"):
        cc.momentum_derivatives(robot, q, qd)
    with pytest.raises(cc.StateError, match="qd"):
        cc.momentum_derivatives(robot, q, qd, data=cc.create_data(robot))


@pytest.mark.parametrize("name,options", [("gripper.urdf", {"mimic": "enforce"}),
                                          ("quadruped.urdf", {"floating_base": True, "base_velocity": "mixed"}),
                                          ("quadruped.urdf", {"floating_base": True, "base_velocity": "inertial"})])
def test_robots_in_other_coordinates_match_central_differences_of_their_momentum(name, options):
    """p̄ = M̄ q̄̇ differentiated along integrate(robot, q̄, δ) in the robot's own coordinates."""
    robot = cc.load_robot(robot_path(name), **options)
    assert robot.is_reduced
    for seed in range(2):
        q, qd = _state(robot, seed)
        ours = cc.momentum_derivatives(robot, q, qd)
        assert np.abs(ours - _slopes(robot, q, qd)).max() <= 1e-6 * max(1.0, np.abs(ours).max()), seed


def test_closed_loops_are_refused_as_every_derivative_refuses_them():
    robot = cc.load_robot(robot_path("fourbar.yaml"))
    q, qd = _state(robot, 0)
    with pytest.raises(cc.StateError) as ours:
        cc.momentum_derivatives(robot, q, qd)
    with pytest.raises(cc.StateError) as theirs:
        cc.inverse_dynamics_derivatives(robot, q, qd, qd)
    assert str(ours.value) == str(theirs.value) and "closed loops" in str(ours.value)
