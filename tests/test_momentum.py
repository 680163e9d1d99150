"""Algorithm 4's momentum terms (Wensing–Slotine App. B-B): p = M q̇ and Cᵀq̇ by O(N) recursions,
and the regressors Y_p, Y_c, Y_g, Y_T, Y_V̇, against Pinocchio and against each other, for every θ."""

from __future__ import annotations

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.engine.coordinates import evaluation
from coriolis_cli.model.parameters import inertial_parameters, with_inertial_parameters

ROBOTS = [("panda", False, {}), ("quadruped", True, {}), ("gripper", False, {"mimic": "enforce"}), ("fourbar", False, {})]


@pytest.mark.parametrize("name,floating,options", ROBOTS, ids=[r[0] for r in ROBOTS])
def test_momentum_and_ct_velocity_equal_pinocchio_in_every_call_form(name, floating, options):
    pytest.importorskip("pinocchio")
    from coriolis_cli.peers.pinocchio import PinocchioPeer

    robot = cc.load_robot(name, floating_base=floating, **options)
    rng = np.random.default_rng(3)
    Q = np.stack([cc.random_configuration(robot, rng) for _ in range(4)])
    V = rng.normal(size=(4, robot.nv)) * 2
    tree = getattr(robot, "full", robot)
    peer = PinocchioPeer(tree)
    P, CT = cc.generalized_momentum(robot, Q, V), cc.coriolis_transpose_velocity(robot, Q, V)
    data = cc.create_data(robot)
    for s in range(4):
        if tree is robot:
            M, C = peer.mass_matrix(Q[s]), peer.coriolis_matrix(Q[s], V[s])
        else:  # in other coordinates: M̄ = AᵀMA, C̄ = AᵀCA + AᵀMȦ on Pinocchio's tree
            qf, A = evaluation(robot).full_configuration(Q[s]), evaluation(robot).jacobian(Q[s])
            Adot = evaluation(robot).jacobian_rate(Q[s], V[s])
            Mf = peer.mass_matrix(qf)
            M, C = A.T @ Mf @ A, A.T @ peer.coriolis_matrix(qf, A @ V[s]) @ A + (0 if Adot is None else A.T @ Mf @ Adot)
        scale = 1.0 + np.abs(M @ V[s]).max() + np.abs(C.T @ V[s]).max()
        for p, ct in ((P[s], CT[s]), (cc.generalized_momentum(robot, Q[s], V[s]), cc.coriolis_transpose_velocity(robot, Q[s], V[s]))):
            assert np.abs(p - M @ V[s]).max() <= 1e-13 * scale and np.abs(ct - C.T @ V[s]).max() <= 1e-13 * scale
        if tree is robot:
            p = cc.generalized_momentum(robot, Q[s], V[s], data=data)
            assert p is data.p and np.abs(data.CTqd - C.T @ V[s]).max() <= 1e-13 * scale


@pytest.mark.parametrize("name,floating,options", ROBOTS, ids=[r[0] for r in ROBOTS])
def test_the_momentum_regressors_hold_for_every_theta(name, floating, options):
    robot = cc.load_robot(name, floating_base=floating, **options)
    tree = getattr(robot, "full", robot)
    rng = np.random.default_rng(4)
    q, v = cc.random_configuration(robot, rng), rng.normal(size=robot.nv)
    Y = cc.momentum_regressors(robot, q, v)
    theta = inertial_parameters(tree) * rng.uniform(0.5, 1.5, inertial_parameters(tree).shape)  # other masses, same robot
    other = with_inertial_parameters(robot, theta)
    M, _, C = cc.coriolis_matrix(other, q, v)
    g = cc.gravity_vector(other, q)
    for got, want in ((Y.p @ theta, M @ v), (Y.c @ theta, C.T @ v), (Y.g @ theta, g), (Y.T @ theta, 0.5 * v @ M @ v),
                      (Y.Vdot @ theta, v @ g)):
        assert np.abs(got - want).max() <= 1e-12 * (1.0 + np.abs(want).max())
