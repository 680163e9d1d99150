"""Engine: identities 1-6 of docs/algorithms.md, closed forms, batches, and Pinocchio as an oracle."""

import os
import zlib

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.peers import finite_differences as fd
from coriolis_cli.peers.pinocchio import PinocchioPeer, available

from .conftest import BUNDLED, robot_path

EPS = np.finfo(float).eps
GENERATED = [f"{t}:{n}" for t in ("serial", "binary", "biped", "quadruped") for n in (10, 20, 30)]
ROBOTS = [(p, fb) for p in BUNDLED for fb in (False, True) if not (fb and p.endswith("planar_2link.urdf"))] + [(s, fb) for s in GENERATED for fb in (False, True)]
IDS = [f"{os.path.basename(p)}{'-floating' if fb else ''}" for p, fb in ROBOTS]


def state(robot, rng, vmax=10.0):
    return cc.random_configuration(robot, rng), rng.uniform(0.0, vmax, robot.nv)


def scale(M, qd):
    """Size of the velocity-product terms: ‖M‖ ‖q̇‖², with n for the accumulation of round-off."""
    return np.abs(M).max() * max(1.0, np.abs(qd).max()) ** 2 * M.shape[0]


@pytest.fixture(scope="module", params=ROBOTS, ids=IDS)
def case(request):
    path, fb = request.param
    robot = cc.load_robot(path, floating_base=fb)
    # a seed of the case's name, the same in every run (hash() of a str changes with each process)
    rng = np.random.default_rng(zlib.crc32(f"{os.path.basename(path)}:{fb}".encode()))
    q, qd = state(robot, rng)
    M, Mdot, C = cc.coriolis_matrix(robot, q, qd)
    return robot, q, qd, M, Mdot, C


def test_identity_1_C_qd_equals_rnea(case):
    robot, q, qd, M, Mdot, C = case
    tau = cc.inverse_dynamics(robot, q, qd, np.zeros(robot.nv), gravity=False)
    assert np.abs(C @ qd - tau).max() <= 100 * EPS * scale(M, qd)


def test_identity_2_Mdot_is_C_plus_CT_and_matches_finite_differences(case):
    robot, q, qd, M, Mdot, C = case
    assert np.abs(Mdot - C - C.T).max() <= 100 * EPS * scale(M, qd) / max(1.0, np.abs(qd).max())
    Mdot_fd = fd.mdot_fd(robot, cc.mass_matrix, q, qd)
    assert np.abs(Mdot - Mdot_fd).max() <= 1e-8 * np.abs(Mdot).max()


def test_identity_3_C_from_Gamma(case):
    robot, q, qd, M, Mdot, C = case
    G = cc.christoffel(robot, q)
    assert np.abs(C - G @ qd).max() <= 100 * EPS * scale(M, qd) / max(1.0, np.abs(qd).max())
    if not robot.floating_base:
        assert np.abs(G - G.transpose(0, 2, 1)).max() <= 100 * EPS * np.abs(G).max() * robot.nv
    else:
        # generalized speeds: Γ[:, :, k] = C(q, e_k) is the definition
        E = np.eye(robot.nv)
        for k in (0, 3, 5, robot.nv - 1):
            assert np.abs(G[:, :, k] - cc.coriolis_matrix(robot, q, E[k])[2]).max() <= 1e3 * EPS * np.abs(M).max()


def test_identity_3_Gamma_matches_eq4_finite_differences(case):
    robot, q, qd, M, Mdot, C = case
    if robot.floating_base or robot.nv > 20:
        pytest.skip("eq. (4) holds in coordinates; 30-DoF cases are covered by the verify suite")
    G = cc.christoffel(robot, q)
    G_fd = fd.christoffel_fd(robot, cc.mass_matrix, q)
    assert np.abs(G - G_fd).max() <= 1e-8 * np.abs(G).max()


def test_identity_4_branch_sparsity(case):
    robot, q, qd, M, Mdot, C = case
    unrelated = ~robot.dof_related
    assert np.all(M[unrelated] == 0) and np.all(C[unrelated] == 0) and np.all(Mdot[unrelated] == 0)
    G = cc.christoffel(robot, q)
    rel = robot.dof_related
    triple = rel[:, :, None] & rel[:, None, :] & rel[None, :, :]
    assert np.all(G[~triple] == 0)


def test_identity_5_M_symmetric_positive_definite(case):
    robot, q, qd, M, Mdot, C = case
    assert np.array_equal(M, M.T)
    assert np.linalg.eigvalsh(M)[0] > 0
    # Algorithm 1 in the world frame against the CRBA (in body coordinates where it applies)
    assert np.abs(M - cc.mass_matrix(robot, q)).max() <= 10 * EPS * np.abs(M).max() * robot.nv


def test_zero_velocity_gives_exactly_zero_C(case):
    robot, q, *_ = case
    _, Mdot, C = cc.coriolis_matrix(robot, q, np.zeros(robot.nv))
    assert not C.any() and not Mdot.any()


def test_featherstone_factorization_is_admissible_not_christoffel(case):
    robot, q, qd, M, Mdot, C = case
    _, Mdot_f, Cf = cc.coriolis_matrix(robot, q, qd, factorization="featherstone")
    s = scale(M, qd)
    assert np.abs(Cf @ qd - C @ qd).max() <= 100 * EPS * s
    assert np.abs(Mdot_f - Cf - Cf.T).max() <= 100 * EPS * s
    if robot.name != "planar_2link":  # in planar motion both factorizations coincide
        assert np.abs(Cf - C).max() > 1e-6 * np.abs(C).max()


# ------------------------------------------------------------------------- closed form
def test_identity_6_planar_two_link_closed_form(rng):
    robot = cc.load_robot(robot_path("planar_2link.urdf"))
    m1, m2, l1, lc1, lc2, I1, I2 = 1.0, 0.7, 1.0, 0.5, 0.4, 0.08, 0.04
    for _ in range(20):
        q = rng.uniform(0, 2 * np.pi, 2)
        qd = rng.uniform(-10, 10, 2)
        c2, s2 = np.cos(q[1]), np.sin(q[1])
        M_ref = np.array(
            [
                [I1 + I2 + m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2), I2 + m2 * (lc2**2 + l1 * lc2 * c2)],
                [I2 + m2 * (lc2**2 + l1 * lc2 * c2), I2 + m2 * lc2**2],
            ]
        )
        h = -m2 * l1 * lc2 * s2
        C_ref = np.array([[h * qd[1], h * (qd[0] + qd[1])], [-h * qd[0], 0.0]])
        G_ref = np.zeros((2, 2, 2))
        G_ref[0, 0, 1] = G_ref[0, 1, 0] = G_ref[0, 1, 1] = h
        G_ref[1, 0, 0] = -h
        M, Mdot, C = cc.coriolis_matrix(robot, q, qd)
        assert np.allclose(M, M_ref, rtol=0, atol=1e-14)
        assert np.allclose(C, C_ref, rtol=0, atol=1e-13)
        assert np.allclose(cc.christoffel(robot, q), G_ref, rtol=0, atol=1e-14)
        g = cc.gravity_vector(robot, q)
        assert np.allclose(g, 0, atol=1e-14)  # the arm moves in the horizontal plane


def test_gravity_of_a_pendulum():
    from coriolis_cli.model.description import Inertial, JointSpec, LinkSpec, RobotDescription
    from coriolis_cli.model.tree import build_model

    d = RobotDescription(
        "pendulum",
        (LinkSpec("base"), LinkSpec("bob", Inertial(2.0, (0.5, 0, 0), (0, 0, 0), (1e-4, 0, 0, 1e-4, 0, 1e-4)))),
        (JointSpec("j", "revolute", "base", "bob", axis=(0, 1, 0)),),
    )
    r = build_model(d)
    for th in (0.0, 0.4, 1.2):
        # the bob sits at l (cos θ, 0, -sin θ); gravity's torque about +y is m g l cos θ,
        # and g(q) is the torque that holds it: -m g l cos θ
        assert np.isclose(cc.gravity_vector(r, [th])[0], -2.0 * 9.81 * 0.5 * np.cos(th), rtol=1e-13)


# ------------------------------------------------------------------------------ batches
@pytest.mark.parametrize("spec, fb", [("quadruped:12", True), ("serial:9", False)])
def test_batches_match_single_states(spec, fb, rng):
    robot = cc.load_robot(spec, floating_base=fb)
    K = 17
    Q = np.stack([cc.random_configuration(robot, rng) for _ in range(K)])
    QD = rng.uniform(-10, 10, (K, robot.nv))
    M, Mdot, C = cc.coriolis_matrix(robot, Q, QD)
    G = cc.christoffel(robot, Q)
    tau = cc.inverse_dynamics(robot, Q, QD, QD)
    g = cc.gravity_vector(robot, Q)
    assert M.shape == (K, robot.nv, robot.nv) and G.shape == (K,) + (robot.nv,) * 3
    for s in (0, 8, K - 1):
        m1, md1, c1 = cc.coriolis_matrix(robot, Q[s], QD[s])
        assert np.array_equal(M[s], m1) and np.array_equal(Mdot[s], md1) and np.array_equal(C[s], c1)
        assert np.array_equal(G[s], cc.christoffel(robot, Q[s]))
        assert np.array_equal(tau[s], cc.inverse_dynamics(robot, Q[s], QD[s], QD[s]))
        assert np.array_equal(g[s], cc.gravity_vector(robot, Q[s]))
        assert np.array_equal(cc.mass_matrix(robot, Q)[s], cc.mass_matrix(robot, Q[s]))


def test_large_velocities_keep_identities_in_relative_terms(rng):
    robot = cc.load_robot("serial:20")
    q = cc.random_configuration(robot, rng)
    qd = rng.uniform(-1e3, 1e3, robot.nv)
    M, Mdot, C = cc.coriolis_matrix(robot, q, qd)
    tau = cc.inverse_dynamics(robot, q, qd, np.zeros(robot.nv), gravity=False)
    assert np.abs(C @ qd - tau).max() <= 1e-12 * np.abs(tau).max() * robot.nv
    assert np.abs(Mdot - C - C.T).max() <= 1e-13 * np.abs(Mdot).max() * robot.nv


def test_floating_base_pose_does_not_change_M_C_Gamma(rng):
    robot = cc.load_robot(robot_path("humanoid.urdf"), floating_base=True)
    q = cc.random_configuration(robot, rng)
    qd = rng.uniform(-5, 5, robot.nv)
    q2 = q.copy()
    q2[:7] = cc.random_configuration(robot, rng)[:7]
    for a, b in zip(cc.coriolis_matrix(robot, q, qd), cc.coriolis_matrix(robot, q2, qd)):
        assert np.array_equal(a, b)
    # ... but gravity does depend on the base orientation
    assert not np.allclose(cc.gravity_vector(robot, q), cc.gravity_vector(robot, q2))


# ------------------------------------------------------------------------------ Pinocchio
pin_only = pytest.mark.skipif(not available(), reason="pin (Pinocchio) is not installed")


@pin_only
@pytest.mark.parametrize("path", BUNDLED, ids=os.path.basename)
@pytest.mark.parametrize("fb", [False, True], ids=["fixed", "floating"])
def test_agrees_with_pinocchio_entry_by_entry(path, fb, rng):
    if fb and path.endswith("planar_2link.urdf"):
        pytest.skip("singular as a floating base (refused by the model)")
    robot = cc.load_robot(path, floating_base=fb)
    peer = PinocchioPeer(robot)
    for _ in range(5):
        q, qd = state(robot, rng)
        qdd = rng.uniform(-10, 10, robot.nv)
        M, Mdot, C = cc.coriolis_matrix(robot, q, qd)
        s = scale(M, qd)
        assert np.abs(M - peer.mass_matrix(q)).max() <= 100 * EPS * np.abs(M).max() * robot.nv
        assert np.abs(C - peer.coriolis_matrix(q, qd)).max() <= 100 * EPS * s
        tau = cc.inverse_dynamics(robot, q, qd, qdd)
        assert np.abs(tau - peer.rnea(q, qd, qdd)).max() <= 100 * EPS * (s + np.abs(tau).max())
        assert np.abs(cc.gravity_vector(robot, q) - peer.rnea(q, 0 * qd, 0 * qd)).max() <= 1e-12 * max(1, np.abs(tau).max())


# ------------------------------------------------------------------------------ bad states
def test_state_validation_errors():
    robot = cc.load_robot("serial:3")
    with pytest.raises(cc.StateError, match="has 2 values per state"):
        cc.coriolis_matrix(robot, [0, 0], [0, 0, 0])
    with pytest.raises(cc.StateError, match="not finite"):
        cc.coriolis_matrix(robot, [0, np.nan, 0], [0, 0, 0])
    with pytest.raises(cc.StateError, match="not finite"):
        cc.christoffel(robot, [0, np.inf, 0])
    with pytest.raises(cc.StateError, match="must be numbers"):
        cc.mass_matrix(robot, ["a", "b", "c"])
    with pytest.raises(cc.StateError, match="unknown factorization"):
        cc.coriolis_matrix(robot, [0, 0, 0], [0, 0, 0], factorization="nope")


def test_quaternions_are_normalized_with_a_warning():
    robot = cc.load_robot("serial:2", floating_base=True)
    q = robot.neutral_configuration()
    q[3:7] = [0, 0, 0, 2.0]
    with pytest.warns(cc.engine.QuaternionWarning, match="normalized"):
        g2 = cc.gravity_vector(robot, q)
    assert np.array_equal(g2, cc.gravity_vector(robot, robot.neutral_configuration()))
    q[3:7] = 0
    with pytest.raises(cc.StateError, match="quaternion .* is zero"):
        cc.gravity_vector(robot, q)


def test_gamma_memory_guard():
    robot = cc.load_robot("serial:400")
    with pytest.raises(cc.SizeError, match="MiB"):
        cc.christoffel(robot, np.zeros(400))


@pytest.mark.parametrize("spec, fb", [("binary:12", True), ("biped:10", False)])
def test_reused_workspace_matches_fresh_results(spec, fb, rng):
    """The kernels write the same (structurally nonzero) entries for every state, so a reused
    workspace gives exactly the results of fresh zeroed outputs."""
    robot = cc.load_robot(spec, floating_base=fb)
    data = cc.create_data(robot)
    for _ in range(4):
        q, qd = cc.random_configuration(robot, rng), rng.uniform(-10, 10, robot.nv)
        reused = cc.coriolis_matrix(robot, q, qd, data=data)
        fresh = cc.coriolis_matrix(robot, q, qd)
        for a, b in zip(reused, fresh):
            assert np.array_equal(a, b)
        assert np.array_equal(cc.christoffel(robot, q, data=data), cc.christoffel(robot, q))
        assert np.array_equal(cc.mass_matrix(robot, q, data=data), cc.mass_matrix(robot, q))
        assert np.array_equal(cc.inverse_dynamics(robot, q, qd, qd, data=data), cc.inverse_dynamics(robot, q, qd, qd))
        assert np.array_equal(cc.gravity_vector(robot, q, data=data), cc.gravity_vector(robot, q))
