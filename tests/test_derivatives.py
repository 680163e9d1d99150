"""The first-order derivatives of the inverse and forward dynamics (engine/core/rnea_derivatives.hpp,
forward_dynamics_derivatives.hpp) against Pinocchio's computeRNEADerivatives and
computeABADerivatives, central finite differences of our own τ and q̈, and the identity
∂τ/∂q̇ = 2 C of the Christoffel-consistent C (core paper, Remark 3)."""

from __future__ import annotations

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.engine.coordinates import evaluation
from coriolis_cli.errors import StateError

from .conftest import robot_path

ROBOTS = ["panda.urdf", "serial20.urdf", "binary20.urdf", "planar_2link.urdf"]


def _state(robot, seed):
    rng = np.random.default_rng(seed)
    return cc.random_configuration(robot, rng), rng.standard_normal(robot.nv), rng.standard_normal(robot.nv)


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
    """Every form gives the same bits; on a branched tree a workspace reused for another state
    first (entries between branches are zero and the forward dynamics' solve fills them)."""
    tree = cc.load_robot(robot_path("binary20.urdf"))
    rng = np.random.default_rng(0)
    Q = np.array([cc.random_configuration(tree, rng) for _ in range(3)])
    V, A = rng.standard_normal((3, tree.nv)), rng.standard_normal((3, tree.nv))
    for function, args in ((cc.inverse_dynamics_derivatives, (Q, V, A)), (cc.forward_dynamics_derivatives, (Q, V, A)),
                           (cc.slotine_li_derivatives, (Q, V, A, V)), (cc.coriolis_product_derivatives, (Q, V, A)),
                           (cc.gravity_derivatives, (Q,)), (cc.coriolis_transpose_derivatives, (Q, V))):
        batch, data = function(tree, *args), cc.create_data(tree)
        for s in range(3):
            one = function(tree, *(x[s] for x in args))
            function(tree, *(x[s - 1] for x in args), data=data)
            into = function(tree, *(x[s] for x in args), data=data)
            if function is cc.gravity_derivatives:
                batch_s, one, into = (batch[s],), (one,), (into,)
            else:
                batch_s = tuple(x[s] for x in batch)
            assert all(np.array_equal(x, y) and np.array_equal(z, y) for x, y, z in zip(batch_s, one, into)), function
    robot = cc.load_robot("panda")
    rng = np.random.default_rng(2)
    Q = np.array([cc.random_configuration(robot, rng) for _ in range(5)])
    V, A = rng.standard_normal((5, 7)), rng.standard_normal((5, 7))
    dq, dv, M = cc.inverse_dynamics_derivatives(robot, Q, V, A)
    data = cc.create_data(robot)
    for s in range(5):
        one = cc.inverse_dynamics_derivatives(robot, Q[s], V[s], A[s])
        assert all(np.array_equal(x[s], y) for x, y in zip((dq, dv, M), one))
        into = cc.inverse_dynamics_derivatives(robot, Q[s], V[s], A[s], data=data)
        assert into[0] is data.dtau_dq and all(np.array_equal(x, y) for x, y in zip(into, one))
    loop = cc.load_robot(robot_path("fourbar.yaml"))
    for function in (cc.inverse_dynamics_derivatives, cc.forward_dynamics_derivatives):
        with pytest.raises(StateError, match="do not take closed loops yet"):
            function(loop, loop.neutral_configuration(), np.zeros(loop.nv), np.zeros(loop.nv))
    r = run_cli("bench", robot_path("fourbar.yaml"), "--what", "dtau", "--repeat", "3")
    assert r.code == 0 and "dtau not timed: the derivatives do not take closed loops" in r.err, r


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
    data = cc.create_data(robot)
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
    r = run_cli("bench", "panda", "--what", "d2tau", "--repeat", "3", "--format", "json")
    assert r.code == 0 and json.loads(r.out)["systems"][0]["timings"][0]["what"] == "d2tau", r


def test_verify_holds_the_derivatives_to_central_differences(run_cli):
    import json

    r = run_cli("verify", "panda", robot_path("quadruped.urdf"), "--trials", "3", "--ref-trials", "2", "--format", "json")
    assert r.code == 0, r
    checks = {rb["robot"]: {c["key"]: c for c in rb["checks"]} for rb in json.loads(r.out)["robots"]}
    assert checks["panda"]["o"]["passed"] is True and checks["panda"]["o"]["max_rel"] < 1e-8
    assert checks["panda"]["o"]["trials"] == 2


def _example_robot(relative):
    from .test_lock import example_robot

    return example_robot(relative)


PEERS = [("quadruped.urdf", None, True), ("humanoid.urdf", None, True),
         ("solo12", "solo_description/robots/solo12.urdf", True),
         ("anymal", "anymal_b_simple_description/robots/anymal.urdf", True),
         ("talos", "talos_data/robots/talos_full_v2.urdf", True), ("ur5", "ur_description/urdf/ur5_robot.urdf", False),
         ("panda", "panda_description/urdf/panda.urdf", False)]


@pytest.mark.parametrize("name,relative,floating", PEERS)
def test_example_robot_data_s_robots_equal_pinocchio_s_in_the_tangent_space(name, relative, floating):
    """Free-flyer derivatives are Pinocchio's, column for column in the tangent space (nv columns);
    example-robot-data's robots as their files are, the Panda with its two finger joints."""
    pytest.importorskip("pinocchio")
    import warnings

    from coriolis_cli.peers.pinocchio import PinocchioPeer

    path = robot_path(name) if relative is None else _example_robot(relative)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cc.ModelWarning)
        robot = cc.load_robot(path, floating_base=floating)
    peer = PinocchioPeer(robot)
    peer._gravity(True)
    for seed in range(2):
        q, v, a = _state(robot, seed)
        dq, dv, M = cc.inverse_dynamics_derivatives(robot, q, v, a)
        assert dq.shape == (robot.nv, robot.nv) and robot.nq == robot.nv + floating
        peer.pin.computeRNEADerivatives(peer.model, peer.data, peer.q(q), peer.v(v), peer.v(a))
        for ours, theirs in ((dq, peer.data.dtau_dq), (dv, peer.data.dtau_dv)):
            theirs = peer.to_ours_matrix(np.array(theirs))
            assert np.abs(ours - theirs).max() <= 1e-12 * max(1.0, np.abs(theirs).max())
        tau = 10 * np.random.default_rng(seed).standard_normal(robot.nv)
        fq, fv, _ = cc.forward_dynamics_derivatives(robot, q, v, tau)
        peer.pin.computeABADerivatives(peer.model, peer.data, peer.q(q), peer.v(v), peer.v(tau))
        tolerance = 1e-14 * np.linalg.cond(M)  # TALOS: 1e7, from its fingers
        for ours, theirs in ((fq, peer.data.ddq_dq), (fv, peer.data.ddq_dv)):
            theirs = peer.to_ours_matrix(np.array(theirs))
            assert np.abs(ours - theirs).max() <= tolerance * max(1.0, np.abs(theirs).max())


def _slopes_agree(robot, gravity=(0.3, -1.0, -9.0)):
    """Both derivatives against central differences along robot.integrate, as verify's check o."""
    from coriolis_cli.checks.verify import FORWARD_STEPS

    q, v, a = _state(robot, 5)
    dq, dv, M = cc.inverse_dynamics_derivatives(robot, q, v, a, gravity=gravity)
    tau = cc.inverse_dynamics(robot, q, v, a, gravity=gravity)
    fq, fv, Minv = cc.forward_dynamics_derivatives(robot, q, v, tau, gravity=gravity)
    scale, fscale = max(1.0, np.abs(dq).max(), np.abs(dv).max()), max(1.0, np.abs(fq).max(), np.abs(fv).max())
    tau_of = lambda q_, v_: cc.inverse_dynamics(robot, q_, v_, a, gravity=gravity)
    qdd_of = lambda q_, v_: cc.forward_dynamics(robot, q_, v_, tau, gravity=gravity)
    for k in range(robot.nv):
        e = np.zeros(robot.nv)
        e[k] = 1e-6
        slope_q = (tau_of(cc.integrate(robot, q, e), v) - tau_of(cc.integrate(robot, q, -e), v)) / 2e-6
        slope_v = (tau_of(q, v + e) - tau_of(q, v - e)) / 2e-6
        assert np.abs(dq[:, k] - slope_q).max() <= 1e-6 * scale, k
        assert np.abs(dv[:, k] - slope_v).max() <= 1e-6 * scale, k
        for ours, at in ((fq[:, k], lambda e: (cc.integrate(robot, q, e), v)), (fv[:, k], lambda e: (q, v + e))):
            best = np.inf
            for h in FORWARD_STEPS:
                e[k] = h
                best = min(best, np.abs(ours - (qdd_of(*at(e)) - qdd_of(*at(-e))) / (2 * h)).max())
            assert best <= 1e-6 * fscale, k
    assert np.abs(Minv @ M - np.eye(robot.nv)).max() <= 1e-12 * np.linalg.cond(M)


def test_every_joint_type_and_free_joint_armature_match_central_differences(tmp_path):
    """Spherical, planar, free joints under a floating root, and MuJoCo's armature on a free joint
    (M_a = Rᵀ A R turns with the base): the engine cases' trees, each in the tangent space."""
    from .engine_cases import robots

    seen = set()
    for name, robot in robots(tmp_path):
        try:
            cc.forward_dynamics(robot, *_state(robot, 5)[:2], np.zeros(robot.nv))
        except cc.SingularMassMatrixError:  # a massless base on a floating root: q̈ is not defined, nor ∂q̈
            with pytest.raises(cc.SingularMassMatrixError):
                cc.forward_dynamics_derivatives(robot, *_state(robot, 5)[:2], np.zeros(robot.nv))
            continue
        _slopes_agree(robot)
        seen |= {b.joint.type for b in robot.bodies}
        seen |= {"armature on a free joint"} if any(b.joint.type in ("free", "floating") and any(b.joint.armature)
                                                    for b in robot.bodies) else set()
    assert {"free", "floating", "spherical", "planar", "prismatic", "revolute", "armature on a free joint"} <= seen


def test_mimic_joints_go_through_the_chain_rule():
    """τ̄ = Aᵀ τ(q, A q̄̇, A q̄̈) with A constant: Aᵀ ∂τ/∂q A, and the forward dynamics' from it."""
    robot = cc.load_robot(robot_path("gripper.urdf"), mimic="enforce")
    _slopes_agree(robot)
    q, v, a = _state(robot, 2)
    A = evaluation(robot).jacobian(q)
    full = cc.inverse_dynamics_derivatives(robot.full, evaluation(robot).full_configuration(q), A @ v, A @ a)
    ours = cc.inverse_dynamics_derivatives(robot, q, v, a)
    for x, y in zip(ours, full):
        assert np.abs(x - A.T @ y @ A).max() <= 1e-14 * max(1.0, np.abs(y).max())
    data = cc.create_data(robot)
    into = cc.forward_dynamics_derivatives(robot, q, v, a, data=data)
    assert into[2] is data.Minv and all(np.array_equal(x, y) for x, y in zip(into, cc.forward_dynamics_derivatives(robot, q, v, a)))
    Q, V, X = (np.array([x, x]) for x in (q, v, a))
    assert all(np.array_equal(x[1], y) for x, y in zip(cc.inverse_dynamics_derivatives(robot, Q, V, X), ours))


@pytest.mark.parametrize("factorization", ["christoffel", "featherstone"])
def test_slotine_li_derivatives_are_the_slopes_of_its_torque_on_every_joint_type(tmp_path, factorization):
    """∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̇_r, ∂τ/∂q̈_r of the Slotine–Li torque against central differences of
    slotine_li along robot.integrate, and the identities: ∂τ/∂q̇_r = C (of that factorization),
    ∂τ/∂q̈_r = M, and at q̇_r = q̇ (Christoffel) ∂τ/∂q = the inverse dynamics', ∂τ/∂q̇ + C = its ∂τ/∂q̇."""
    from .engine_cases import robots

    gravity = np.array([0.3, -1.0, -9.0])
    for name, robot in robots(tmp_path):
        rng = np.random.default_rng(5)
        q = cc.random_configuration(robot, rng)
        v, v_r, a_r = (rng.standard_normal(robot.nv) for _ in range(3))
        dq, dv, C, M = cc.slotine_li_derivatives(robot, q, v, v_r, a_r, gravity=gravity, factorization=factorization)
        tau = lambda *x, robot=robot: cc.slotine_li(robot, *x, gravity=gravity, factorization=factorization)
        scale = max(1.0, np.abs(dq).max(), np.abs(dv).max())
        for k in range(robot.nv):
            e = np.zeros(robot.nv)
            e[k] = 1e-6
            for ours, plus, minus in ((dq, (cc.integrate(robot, q, e), v, v_r, a_r), (cc.integrate(robot, q, -e), v, v_r, a_r)),
                                      (dv, (q, v + e, v_r, a_r), (q, v - e, v_r, a_r)),
                                      (C, (q, v, v_r + e, a_r), (q, v, v_r - e, a_r)),
                                      (M, (q, v, v_r, a_r + e), (q, v, v_r, a_r - e))):
                assert np.abs(ours[:, k] - (tau(*plus) - tau(*minus)) / 2e-6).max() <= 1e-6 * scale, (name, k)
        C_alg1 = cc.coriolis_matrix(robot, q, v, factorization=factorization)[2]
        assert np.abs(C - C_alg1).max() <= 1e-13 * max(1.0, np.abs(C_alg1).max()), name
        assert np.abs(M - cc.mass_matrix(robot, q)).max() <= 1e-13 * np.abs(M).max(), name
        if factorization == "christoffel":
            id_dq, id_dv, _ = cc.inverse_dynamics_derivatives(robot, q, v, a_r, gravity=gravity)
            same = cc.slotine_li_derivatives(robot, q, v, v, a_r, gravity=gravity)
            assert np.abs(same[0] - id_dq).max() <= 1e-13 * max(1.0, np.abs(id_dq).max()), name
            assert np.abs(same[1] + same[2] - id_dv).max() <= 1e-13 * max(1.0, np.abs(id_dv).max()), name


def test_the_coriolis_product_derivatives_are_those_of_c_times_v():
    """∂(C v)/∂q and ∂(C v)/∂q̇ against central differences of coriolis_matrix(q, q̇)[2] @ v, on a
    floating humanoid; they are Slotine–Li's at q̈_r = 0 without gravity; batches, data= and mimic
    joints (Aᵀ X A) give the same."""
    robot = cc.load_robot(robot_path("humanoid.urdf"), floating_base=True)
    rng = np.random.default_rng(8)
    q, qd, v = cc.random_configuration(robot, rng), rng.standard_normal(robot.nv), rng.standard_normal(robot.nv)
    dq, dv = cc.coriolis_product_derivatives(robot, q, qd, v)
    Cv = lambda q_, qd_: cc.coriolis_matrix(robot, q_, qd_)[2] @ v
    for k in range(robot.nv):
        e = np.zeros(robot.nv)
        e[k] = 1e-6
        assert np.abs(dq[:, k] - (Cv(cc.integrate(robot, q, e), qd) - Cv(cc.integrate(robot, q, -e), qd)) / 2e-6).max() <= 1e-7
        assert np.abs(dv[:, k] - (Cv(q, qd + e) - Cv(q, qd - e)) / 2e-6).max() <= 1e-7
    sl = cc.slotine_li_derivatives(robot, q, qd, v, np.zeros(robot.nv), gravity=False)
    assert np.array_equal(sl[0], dq) and np.array_equal(sl[1], dv)
    G = cc.christoffel(robot, q)  # C v = Σ_jk Γ_ijk v_j q̇_k: ∂(C v)/∂q̇_k = Σ_j Γ_ijk v_j
    assert np.abs(dv - np.einsum("ijk,j->ik", G, v)).max() <= 1e-12 * max(1.0, np.abs(dv).max())
    data = cc.create_data(robot)
    into = cc.coriolis_product_derivatives(robot, q, qd, v, data=data)
    assert into[0] is data.dCv_dq and np.array_equal(into[0], dq) and np.array_equal(into[1], dv)
    batch = cc.coriolis_product_derivatives(robot, np.array([q, q]), np.array([qd, qd]), np.array([v, v]))
    assert np.array_equal(batch[0][1], dq) and np.array_equal(batch[1][0], dv)
    mimic = cc.load_robot(robot_path("gripper.urdf"), mimic="enforce")
    q, qd, v = cc.random_configuration(mimic, rng), rng.standard_normal(mimic.nv), rng.standard_normal(mimic.nv)
    A = evaluation(mimic).jacobian(q)
    full = cc.coriolis_product_derivatives(mimic.full, evaluation(mimic).full_configuration(q), A @ qd, A @ v)
    for ours, tree in zip(cc.coriolis_product_derivatives(mimic, q, qd, v), full):
        assert np.abs(ours - A.T @ tree @ A).max() <= 1e-14 * max(1.0, np.abs(tree).max())
    for ours, tree in zip(cc.slotine_li_derivatives(mimic, q, qd, v, qd),
                          cc.slotine_li_derivatives(mimic.full, evaluation(mimic).full_configuration(q), A @ qd, A @ v, A @ qd)):
        assert np.abs(ours - A.T @ tree @ A).max() <= 1e-14 * max(1.0, np.abs(tree).max())


def test_gravity_and_coriolis_transpose_derivatives_are_their_slopes_on_every_joint_type(tmp_path):
    """∂g/∂q (equal, bit for bit, to the inverse dynamics' ∂τ/∂q at rest) and ∂(Cᵀq̇)/∂q, ∂(Cᵀq̇)/∂q̇
    against central differences of gravity_vector and coriolis_transpose_velocity, on every joint
    type and MuJoCo's armature on free joints."""
    from .engine_cases import robots

    gravity = np.array([0.3, -1.0, -9.0])
    for name, robot in robots(tmp_path):
        rng = np.random.default_rng(5)
        q, v = cc.random_configuration(robot, rng), rng.standard_normal(robot.nv)
        dg = cc.gravity_derivatives(robot, q, gravity=gravity)
        zeros = np.zeros(robot.nv)
        assert np.array_equal(dg, cc.inverse_dynamics_derivatives(robot, q, zeros, zeros, gravity=gravity)[0]), name
        dq, dv = cc.coriolis_transpose_derivatives(robot, q, v)
        ct = cc.coriolis_transpose_velocity
        for k in range(robot.nv):
            e = np.zeros(robot.nv)
            e[k] = 1e-6
            plus, minus = cc.integrate(robot, q, e), cc.integrate(robot, q, -e)
            slope_g = (cc.gravity_vector(robot, plus, gravity=gravity) - cc.gravity_vector(robot, minus, gravity=gravity)) / 2e-6
            assert np.abs(dg[:, k] - slope_g).max() <= 1e-6 * max(1.0, np.abs(dg).max()), (name, k)
            assert np.abs(dq[:, k] - (ct(robot, plus, v) - ct(robot, minus, v)) / 2e-6).max() <= 1e-6 * max(1.0, np.abs(dq).max())
            assert np.abs(dv[:, k] - (ct(robot, q, v + e) - ct(robot, q, v - e)) / 2e-6).max() <= 1e-6 * max(1.0, np.abs(dv).max())


def test_gravity_derivatives_equal_pinocchio_s_and_take_mimic_joints():
    pytest.importorskip("pinocchio")
    from coriolis_cli.peers.pinocchio import PinocchioPeer

    robot = cc.load_robot(robot_path("humanoid.urdf"), floating_base=True)
    peer = PinocchioPeer(robot)
    peer._gravity(True)
    q = cc.random_configuration(robot, np.random.default_rng(3))
    theirs = peer.to_ours_matrix(np.array(peer.pin.computeGeneralizedGravityDerivatives(peer.model, peer.data, peer.q(q))))
    assert np.abs(cc.gravity_derivatives(robot, q) - theirs).max() <= 1e-12 * np.abs(theirs).max()
    mimic = cc.load_robot(robot_path("gripper.urdf"), mimic="enforce")
    rng = np.random.default_rng(4)
    q, v = cc.random_configuration(mimic, rng), rng.standard_normal(mimic.nv)
    A, qf = evaluation(mimic).jacobian(q), evaluation(mimic).full_configuration(q)
    assert np.abs(cc.gravity_derivatives(mimic, q) - A.T @ cc.gravity_derivatives(mimic.full, qf) @ A).max() <= 1e-14
    for ours, tree in zip(cc.coriolis_transpose_derivatives(mimic, q, v), cc.coriolis_transpose_derivatives(mimic.full, qf, A @ v)):
        assert np.abs(ours - A.T @ tree @ A).max() <= 1e-14 * max(1.0, np.abs(tree).max())


def test_compute_gives_the_derivatives_labelled_and_equal_to_the_library_s(run_cli):
    """--what dtau_dq,...: tables titled by quantity, JSON equal to the library's calls at the same
    state (the forward dynamics' at the τ that gives --qdd), and a loop refused in one line."""
    import json

    names = "dtau_dq,dtau_dqd,dqdd_dq,dqdd_dqd,Minv,dg_dq,dCTqd_dq,dCTqd_dqd"
    args = ("compute", robot_path("quadruped.urdf"), "--floating-base", "--random", "--seed", "3", "--qdd",
            ",".join(["0.5"] * 18), "--what", names)
    r = run_cli(*args)
    assert r.code == 0, r
    for title in ("∂τ/∂q (inverse dynamics)", "∂q̈/∂q̇ (forward dynamics)", "M⁻¹ = ∂q̈/∂τ", "∂g/∂q", "∂(Cᵀq̇)/∂q̇"):
        assert title in r.out, title
    r = run_cli(*args, "--format", "json")
    record = json.loads(r.out)
    robot = cc.load_robot(robot_path("quadruped.urdf"), floating_base=True)
    q, qd, qdd = (np.array(record[k]) for k in ("q", "qd", "qdd"))
    dq, dv, _ = cc.inverse_dynamics_derivatives(robot, q, qd, qdd)
    fq, fv, Minv = cc.forward_dynamics_derivatives(robot, q, qd, cc.inverse_dynamics(robot, q, qd, qdd))
    ct = cc.coriolis_transpose_derivatives(robot, q, qd)
    expected = {"dtau_dq": dq, "dtau_dqd": dv, "dqdd_dq": fq, "dqdd_dqd": fv, "Minv": Minv,
                "dg_dq": cc.gravity_derivatives(robot, q), "dCTqd_dq": ct[0], "dCTqd_dqd": ct[1]}
    for key, value in expected.items():
        assert np.array_equal(np.array(record[key]), value), key
    r = run_cli("compute", robot_path("fourbar.yaml"), "--random", "--what", "dtau_dq")
    assert r.code == 2 and r.err.count("\n") == 1 and "pass --loops open" in r.err, r


def test_a_sweep_asked_for_what_it_does_not_time_says_so(run_cli):
    r = run_cli("bench", "--what", "C,dtau", "--dofs", "10")
    assert r.code == 2 and "a DoF sweep and Table 1 time C and Gamma; name a ROBOT" in r.err, r


def test_the_worked_example_in_the_docs_runs_and_says_what_it_claims():
    """docs/derivatives.md's LQR example, run as written: the regulator is stable and the analytic
    A and B agree with central differences as the page says (its timings are not asserted)."""
    import os
    import re
    import subprocess
    import sys

    page = open(os.path.join(os.path.dirname(__file__), "..", "docs", "derivatives.md"), encoding="utf-8").read()
    code = re.search(r"```python\n(.*?)```", page, re.S).group(1)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    eigenvalue = float(re.search(r"slowest closed-loop eigenvalue: (\S+)", out.stdout).group(1))
    a, b = (float(x) for x in re.search(r"largest difference: A (\S+), B (\S+)", out.stdout).groups())
    # printed to 2 decimals: LAPACK's Riccati and eigenvalue solves move the 14th digit on another CPU
    assert eigenvalue < 0 and f"slowest closed-loop eigenvalue: {eigenvalue}" in page
    assert a < 1e-7 and b < 1e-7


@pytest.mark.parametrize("representation", ["mixed", "inertial"])
def test_base_velocities_go_through_the_chain_rule(representation):
    """iDynTree's mixed and inertial base velocities: A = blockdiag(X(q), 1) and Ȧ differentiated
    along the base, so that every derivative is the slope of its function in those coordinates
    (q moving as robot.integrate moves it)."""
    robot = cc.load_robot(robot_path("humanoid.urdf"), floating_base=True, base_velocity=representation)
    gravity = np.array([0.3, -1.0, -9.0])
    q, v, a = _state(robot, 2)
    dq, dv, M = cc.inverse_dynamics_derivatives(robot, q, v, a, gravity=gravity)
    tau = cc.inverse_dynamics(robot, q, v, a, gravity=gravity)
    fq, fv, Minv = cc.forward_dynamics_derivatives(robot, q, v, tau, gravity=gravity)
    dg = cc.gravity_derivatives(robot, q, gravity=gravity)
    ID = lambda *x: cc.inverse_dynamics(robot, *x, gravity=gravity)  # noqa: E731
    FD = lambda *x: cc.forward_dynamics(robot, *x, gravity=gravity)  # noqa: E731
    for k in range(robot.nv):
        e = np.zeros(robot.nv)
        e[k] = 1e-6
        plus, minus = cc.integrate(robot, q, e), cc.integrate(robot, q, -e)
        for ours, slope in ((dq, ID(plus, v, a) - ID(minus, v, a)), (dv, ID(q, v + e, a) - ID(q, v - e, a)),
                            (M, ID(q, v, a + e) - ID(q, v, a - e)), (fq, FD(plus, v, tau) - FD(minus, v, tau)),
                            (fv, FD(q, v + e, tau) - FD(q, v - e, tau)),
                            (dg, cc.gravity_vector(robot, plus, gravity=gravity) - cc.gravity_vector(robot, minus, gravity=gravity))):
            assert np.abs(ours[:, k] - slope / 2e-6).max() <= 1e-6 * max(1.0, np.abs(ours).max()), k
    assert np.abs(Minv @ M - np.eye(robot.nv)).max() < 1e-10
    v_r, a_r = v[::-1].copy(), 0.5 * a
    sl = cc.slotine_li_derivatives(robot, q, v, v_r, a_r, gravity=gravity)
    cv = cc.coriolis_product_derivatives(robot, q, v, v_r)
    ct = cc.coriolis_transpose_derivatives(robot, q, v)
    SL = lambda *x: cc.slotine_li(robot, *x, gravity=gravity)  # noqa: E731
    CV = lambda q_, v_: cc.coriolis_matrix(robot, q_, v_)[2] @ v_r  # noqa: E731
    CT = lambda q_, v_: cc.coriolis_transpose_velocity(robot, q_, v_)  # noqa: E731
    for k in range(robot.nv):
        e = np.zeros(robot.nv)
        e[k] = 1e-6
        plus, minus = cc.integrate(robot, q, e), cc.integrate(robot, q, -e)
        for ours, slope in ((sl[0], SL(plus, v, v_r, a_r) - SL(minus, v, v_r, a_r)),
                            (sl[1], SL(q, v + e, v_r, a_r) - SL(q, v - e, v_r, a_r)),
                            (sl[2], SL(q, v, v_r + e, a_r) - SL(q, v, v_r - e, a_r)),
                            (sl[3], SL(q, v, v_r, a_r + e) - SL(q, v, v_r, a_r - e)),
                            (cv[0], CV(plus, v) - CV(minus, v)), (cv[1], CV(q, v + e) - CV(q, v - e)),
                            (ct[0], CT(plus, v) - CT(minus, v)), (ct[1], CT(q, v + e) - CT(q, v - e))):
            assert np.abs(ours[:, k] - slope / 2e-6).max() <= 1e-6 * max(1.0, np.abs(ours).max()), k
    data = cc.create_data(robot)
    into = cc.inverse_dynamics_derivatives(robot, q, v, a, gravity=gravity, data=data)
    assert into[0] is data.dtau_dq and all(np.array_equal(x, y) for x, y in zip(into, (dq, dv, M)))


def _second_order_slopes(robot, first, q, v, step):
    """For each DoF k, (k, slopes): the central differences over 2·step of ``first(q, v)``'s outputs
    along integrate(q, ±step e_k) (the [.., k, ..] of ∂²/∂q² ∂q∂q̇, ∂q∂(the third)) and of its
    second output along v ± step e_k (∂²/∂q̇²), as the four second-order outputs order them."""
    for k in range(robot.nv):
        e = np.zeros(robot.nv)
        e[k] = step
        plus, minus = first(cc.integrate(robot, q, e), v), first(cc.integrate(robot, q, -e), v)
        faster, slower = first(q, v + e), first(q, v - e)
        yield k, [(x - y) / (2 * step) for x, y in ((plus[0], minus[0]), (faster[1], slower[1]), (plus[1], minus[1]),
                                                    (plus[2], minus[2]))]


def test_second_derivatives_are_the_slopes_of_the_first_on_every_joint_type(tmp_path):
    """∂²τ/∂q², ∂²τ/∂q∂q̇, ∂²τ/∂q∂q̈ against central differences of inverse_dynamics_derivatives
    along robot.integrate ([i, j, k] = ∂/∂q_j of the first derivatives' [i, k]), ∂²τ/∂q̇² against
    those in q̇, and the identities ∂²τ/∂q̇² = Γ_ijk + Γ_ikj, ∂²τ/∂q∂q̈ = ∂M_ik/∂q_j = Γ_ikj + Γ_kij."""
    from .engine_cases import robots

    gravity = np.array([0.3, -1.0, -9.0])
    for name, robot in robots(tmp_path):
        q, v, a = _state(robot, 3)
        qq, vv, qv, qa = cc.inverse_dynamics_second_derivatives(robot, q, v, a, gravity=gravity)
        first = lambda q_, v_: cc.inverse_dynamics_derivatives(robot, q_, v_, a, gravity=gravity)  # noqa: E731
        for k, slopes in _second_order_slopes(robot, first, q, v, 1e-6):
            for ours, slope in zip((qq, vv, qv, qa), slopes):
                assert np.abs(ours[:, k, :] - slope).max() <= 1e-6 * max(1.0, np.abs(ours).max()), (name, k)
        G = cc.christoffel(robot, q)
        assert np.abs(vv - (G + G.transpose(0, 2, 1))).max() <= 1e-12 * max(1.0, np.abs(G).max()), name
        dM = np.einsum("ikj->ijk", G) + np.einsum("kij->ijk", G)  # ∂M_ik/∂q_j = Γ_ikj + Γ_kij
        assert np.abs(qa - dM).max() <= 1e-12 * max(1.0, np.abs(G).max()), name


def test_second_derivatives_forms_guard_and_refusals():
    """Batches, data= and mimic joints (T̄ = T contracted with A on each index) give the same; the
    memory guard is Γ's on four tensors; an unequal free-joint armature and the mixed base
    velocity are refused in one line."""
    robot = cc.load_robot("panda")
    rng = np.random.default_rng(1)
    Q = np.array([cc.random_configuration(robot, rng) for _ in range(3)])
    V, A = rng.standard_normal((3, 7)), rng.standard_normal((3, 7))
    batch, data = cc.inverse_dynamics_second_derivatives(robot, Q, V, A), cc.create_data(robot)
    for s in range(3):
        one = cc.inverse_dynamics_second_derivatives(robot, Q[s], V[s], A[s])
        into = cc.inverse_dynamics_second_derivatives(robot, Q[s], V[s], A[s], data=data)
        assert into[0] is data.second_outputs[0]
        assert all(np.array_equal(x[s], y) and np.array_equal(z, y) for x, y, z in zip(batch, one, into))
    mimic = cc.load_robot(robot_path("gripper.urdf"), mimic="enforce")
    q, v, a = _state(mimic, 2)
    Am = evaluation(mimic).jacobian(q)
    full = cc.inverse_dynamics_second_derivatives(mimic.full, evaluation(mimic).full_configuration(q), Am @ v, Am @ a)
    for ours, tree in zip(cc.inverse_dynamics_second_derivatives(mimic, q, v, a), full):
        expected = np.einsum("abc,ai,bj,ck->ijk", tree, Am, Am, Am)
        assert np.abs(ours - expected).max() <= 1e-14 * max(1.0, np.abs(expected).max())
    big = cc.load_robot("serial:330")
    with pytest.raises(cc.SizeError, match="second-order derivatives of this robot hold 4 nv³"):
        cc.inverse_dynamics_second_derivatives(big, *_state(big, 0))


@pytest.mark.parametrize("representation", ["mixed", "inertial"])
def test_second_derivatives_go_through_the_chain_rule_of_base_velocities(representation):
    """A = blockdiag(X(q), 1) and Ȧ with their first and second derivatives along the base: the
    four tensors are the slopes of the first derivatives in those coordinates too."""
    robot = cc.load_robot(robot_path("quadruped.urdf"), floating_base=True, base_velocity=representation)
    gravity = np.array([0.3, -1.0, -9.0])
    q, v, a = _state(robot, 2)
    qq, vv, qv, qa = cc.inverse_dynamics_second_derivatives(robot, q, v, a, gravity=gravity)
    first = lambda q_, v_: cc.inverse_dynamics_derivatives(robot, q_, v_, a, gravity=gravity)  # noqa: E731
    for k in range(robot.nv):
        e = np.zeros(robot.nv)
        e[k] = 1e-6
        plus, minus, faster, slower = first(cc.integrate(robot, q, e), v), first(cc.integrate(robot, q, -e), v), \
            first(q, v + e), first(q, v - e)
        for ours, slope in ((qq, plus[0] - minus[0]), (qv, plus[1] - minus[1]), (qa, plus[2] - minus[2]),
                            (vv, faster[1] - slower[1])):
            assert np.abs(ours[:, k, :] - slope / 2e-6).max() <= 1e-6 * max(1.0, np.abs(ours).max()), k


def test_the_base_velocities_second_order_chain_rule_contracts_one_index_at_a_time(monkeypatch):
    """Each product of its chain rule sums over one index (tensordot, or einsum of two operands):
    a three-operand einsum without a path summed over two at once, O(nv⁵), 22 s on quadruped:100
    where the rest takes 1.6 s. Counted here, not timed."""
    from coriolis_cli.engine import base_velocity

    seen = []
    einsum = np.einsum

    def counted(subscripts, *operands, **kwargs):
        seen.append(len(operands))
        return einsum(subscripts, *operands, **kwargs)

    monkeypatch.setattr(base_velocity.np, "einsum", counted)
    robot = cc.load_robot(robot_path("quadruped.urdf"), floating_base=True, base_velocity="mixed")
    cc.inverse_dynamics_second_derivatives(robot, *_state(robot, 1))
    assert seen and max(seen) <= 2, seen


def test_the_coriolis_matrix_derivatives_are_its_slopes_and_guarded_as_gamma():
    """∂C/∂q[i, j, k] = ∂C_ij/∂q_k against central differences of coriolis_matrix along
    robot.integrate, on the floating humanoid and through mimic joints; batches; Γ's guard."""
    for robot in (cc.load_robot(robot_path("humanoid.urdf"), floating_base=True),
                  cc.load_robot(robot_path("gripper.urdf"), mimic="enforce")):
        q, v, _ = _state(robot, 1)
        T = cc.coriolis_matrix_derivatives(robot, q, v)
        for k in range(robot.nv):
            e = np.zeros(robot.nv)
            e[k] = 1e-6
            slope = (cc.coriolis_matrix(robot, cc.integrate(robot, q, e), v)[2]
                     - cc.coriolis_matrix(robot, cc.integrate(robot, q, -e), v)[2]) / 2e-6
            assert np.abs(T[:, :, k] - slope).max() <= 1e-6 * max(1.0, np.abs(T).max()), k
        assert np.array_equal(cc.coriolis_matrix_derivatives(robot, np.array([q, q]), np.array([v, v]))[1], T)
        data = cc.create_data(robot)
        assert cc.coriolis_matrix_derivatives(robot, q, v, data=data) is data.dC_dq and np.array_equal(data.dC_dq, T)
    big = cc.load_robot("serial:330")
    with pytest.raises(cc.SizeError, match="above the 256 MiB limit"):
        cc.coriolis_matrix_derivatives(big, *_state(big, 0)[:2])


def test_compute_gives_the_tensors_as_it_gives_gamma(run_cli):
    """--what d2tau_dq2,...,dC_dq: tables of the largest entries titled by quantity, JSON equal to
    the library's at the state."""
    import json

    args = ("compute", "panda", "--random", "--seed", "1", "--qdd", "1,0,0,0,0,0,0", "--what",
            "d2tau_dq2,d2tau_dqd2,d2tau_dqdqd,d2tau_dqdqdd,dC_dq")
    r = run_cli(*args, "--top", "3")
    assert r.code == 0, r
    for title in ("∂²τ/∂q² (i, j, k)", "∂²τ/∂q̇² (i, j, k)", "∂²τ/∂q∂q̇ (i, j, k)", "∂²τ/∂q∂q̈ (i, j, k)", "∂C/∂q (i, j, k)"):
        assert title in r.out, title
    record = json.loads(run_cli(*args, "--format", "json").out)
    robot = cc.load_robot("panda")
    q, qd, qdd = (np.array(record[k]) for k in ("q", "qd", "qdd"))
    second = cc.inverse_dynamics_second_derivatives(robot, q, qd, qdd)
    for key, value in zip(("d2tau_dq2", "d2tau_dqd2", "d2tau_dqdqd", "d2tau_dqdqdd"), second):
        assert np.array_equal(np.array(record[key]), value), key
    assert np.array_equal(np.array(record["dC_dq"]), cc.coriolis_matrix_derivatives(robot, q, qd))


def test_second_derivatives_into_a_reused_workspace_equal_fresh_ones(tmp_path):
    """The kernel assigns every entry a tree can fill on every call and leaves the zeros to the
    outputs' owner: a workspace's tensors after calls at other states hold the fresh call's bits
    (free-joint armature, whose terms are added to assigned entries, included)."""
    from .engine_cases import robots

    for name, robot in robots(tmp_path):
        data = cc.create_data(robot)
        rng = np.random.default_rng(3)
        for _ in range(3):
            q, v, a = _state(robot, int(rng.integers(1000)))
            into = cc.inverse_dynamics_second_derivatives(robot, q, v, a, data=data, force=True)
            fresh = cc.inverse_dynamics_second_derivatives(robot, q, v, a, force=True)
            assert all(np.array_equal(x, y) for x, y in zip(into, fresh)), name


def test_contracted_second_derivatives_are_the_tensors_contracted_on_every_joint_type(tmp_path):
    """Σ_i λ_i T[i, :, :] of each of the four tensors, formed without them, on every joint type (a
    tolerance: the tensors contracted here are NumPy's sums), and the slopes of λᵀ times the first
    derivatives by central differences, an oracle that owes the second-order kernel nothing."""
    from .engine_cases import robots

    gravity = np.array([0.3, -1.0, -9.0])
    rng = np.random.default_rng(4)
    for name, robot in robots(tmp_path):
        q, v, a = _state(robot, 3)
        lam = rng.standard_normal(robot.nv)
        contracted = cc.inverse_dynamics_second_derivatives_contracted(robot, q, v, a, lam, gravity=gravity)
        tensors = cc.inverse_dynamics_second_derivatives(robot, q, v, a, gravity=gravity)
        for ours, T in zip(contracted, tensors):
            expected = np.einsum("i,ijk->jk", lam, T)
            assert np.abs(ours - expected).max() <= 1e-12 * max(1.0, np.abs(expected).max()), name
        first = lambda q_, v_: [lam @ d for d in cc.inverse_dynamics_derivatives(robot, q_, v_, a, gravity=gravity)]  # noqa: E731
        for k, slopes in _second_order_slopes(robot, first, q, v, 1e-6):
            for ours, slope in zip(contracted, slopes):
                assert np.abs(ours[k] - slope).max() <= 1e-6 * max(1.0, np.abs(ours).max()), (name, k)


def test_contracted_second_derivatives_forms_and_coordinates():
    """Batches and data= give the single calls' bits; robots in other coordinates contract their
    own tensors (mimic joints: Aᵀ X(A λ̄) A; a mixed base velocity: through its chain rule); no
    nv³ guard applies (330 DoF answer); loops are refused as the tensors are."""
    robot = cc.load_robot("panda")
    rng = np.random.default_rng(2)
    Q = np.array([cc.random_configuration(robot, rng) for _ in range(3)])
    V, A, L = rng.standard_normal((3, 3, 7))
    batch, data = cc.inverse_dynamics_second_derivatives_contracted(robot, Q, V, A, L), cc.create_data(robot)
    for s in range(3):
        one = cc.inverse_dynamics_second_derivatives_contracted(robot, Q[s], V[s], A[s], L[s])
        into = cc.inverse_dynamics_second_derivatives_contracted(robot, Q[s], V[s], A[s], L[s], data=data)
        assert into[0] is data.lam_d2tau_dq2 and into[3] is data.contracted_outputs[3]
        assert all(np.array_equal(x[s], y) and np.array_equal(z, y) for x, y, z in zip(batch, one, into))
    for other in (cc.load_robot(robot_path("gripper.urdf"), mimic="enforce"),
                  cc.load_robot(robot_path("quadruped.urdf"), floating_base=True, base_velocity="mixed")):
        q, v, a = _state(other, 2)
        lam = rng.standard_normal(other.nv)
        tensors = cc.inverse_dynamics_second_derivatives(other, q, v, a)
        for ours, T in zip(cc.inverse_dynamics_second_derivatives_contracted(other, q, v, a, lam), tensors):
            expected = np.einsum("i,ijk->jk", lam, T)
            assert np.abs(ours - expected).max() <= 1e-12 * max(1.0, np.abs(expected).max())
    big = cc.load_robot("serial:330")
    q, v, a = _state(big, 0)
    assert cc.inverse_dynamics_second_derivatives_contracted(big, q, v, a, np.ones(330))[0].shape == (330, 330)
    loops = cc.load_robot("fourbar")
    with pytest.raises(cc.StateError, match="closed loops"):
        cc.inverse_dynamics_second_derivatives_contracted(loops, *_state(loops, 0), np.ones(loops.nv))
    nan = np.full(7, np.nan)  # a co-state that is not finite: refused, as a velocity is, never NaN outputs
    for f in (cc.inverse_dynamics_second_derivatives_contracted, cc.forward_dynamics_second_derivatives_contracted):
        with pytest.raises(cc.StateError, match=r"lam\[panda_joint1\] is not finite"):
            f(robot, Q[0], V[0], A[0], nan)


def test_forward_second_derivatives_are_the_slopes_of_the_first_on_every_joint_type(tmp_path):
    """∂²q̈/∂q², ∂²q̈/∂q∂q̇, ∂²q̈/∂q∂τ against central differences of forward_dynamics_derivatives
    along robot.integrate, ∂²q̈/∂q̇² against those in q̇, and the contracted form against the
    tensors contracted, on every joint type. The step is 1e-4: q̈'s derivatives carry M⁻¹, whose
    condition number (1.5e4 on mixed.urdf) multiplies the differences' round-off at smaller steps."""
    from .engine_cases import robots

    gravity = np.array([0.3, -1.0, -9.0])
    rng = np.random.default_rng(6)
    for name, robot in robots(tmp_path):
        q, v, tau = _state(robot, 5)
        lam = rng.standard_normal(robot.nv)
        try:
            cc.forward_dynamics(robot, q, v, tau)
        except cc.SingularMassMatrixError:  # a massless base on a floating root: q̈ is not defined, nor ∂²q̈
            for f in (lambda: cc.forward_dynamics_second_derivatives(robot, q, v, tau),
                      lambda: cc.forward_dynamics_second_derivatives_contracted(robot, q, v, tau, lam)):
                with pytest.raises(cc.SingularMassMatrixError):
                    f()
            continue
        F = cc.forward_dynamics_second_derivatives(robot, q, v, tau, gravity=gravity)
        for ours, T in zip(cc.forward_dynamics_second_derivatives_contracted(robot, q, v, tau, lam, gravity=gravity), F):
            expected = np.einsum("i,ijk->jk", lam, T)
            assert np.abs(ours - expected).max() <= 1e-11 * max(1.0, np.abs(expected).max()), name
        first = lambda q_, v_: cc.forward_dynamics_derivatives(robot, q_, v_, tau, gravity=gravity)  # noqa: E731
        for k, slopes in _second_order_slopes(robot, first, q, v, 1e-4):
            for ours, slope in zip(F, slopes):
                assert np.abs(ours[:, k, :] - slope).max() <= 1e-6 * max(1.0, np.abs(ours).max()), (name, k)


def test_the_ddp_example_in_the_docs_runs_and_says_what_it_claims():
    """docs/derivatives.md's full DDP against iLQR, run as written: both reach the same optimum,
    DDP in fewer backward passes and, near the optimum, in a few steps where iLQR takes many (the
    page's claims; its counts and times are the machine's it was written on, not asserted)."""
    import os
    import re
    import subprocess
    import sys

    page = open(os.path.join(os.path.dirname(__file__), "..", "docs", "derivatives.md"), encoding="utf-8").read()
    code = next(b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "def backward(" in b)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    found = {name: re.search(rf"^{name} +(\d+) backward passes, \S+ s, cost (\S+); 1e-3 to 1e-8 of it in (\d+) steps$",
                             out.stdout, re.M) for name in ("iLQR", "DDP")}
    assert all(found.values()), out.stdout
    (ilqr_passes, ilqr_cost, ilqr_tail), (ddp_passes, ddp_cost, ddp_tail) = (
        (int(m.group(1)), float(m.group(2)), int(m.group(3))) for m in found.values())
    assert abs(ilqr_cost - ddp_cost) <= 1.5e-6  # printed to 6 decimals: the same optimum
    assert 1.5 * ddp_passes < ilqr_passes and ddp_tail <= 3 and ilqr_tail >= 10, out.stdout
    assert f"cost {ddp_cost:.6f}" in page  # the optimum the page shows (its counts are this machine's)
    assert "second-order terms at a knot: contracted" in out.stdout
