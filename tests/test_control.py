"""Forward dynamics, inertial parameters, the Slotine–Li recursion and its regressors, against
Pinocchio (aba, Inertia.toDynamicParameters, computeJointTorqueRegressor) and against the
matrices of Algorithm 1."""

from __future__ import annotations

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.errors import ModelError, StateError

from .conftest import robot_path

pin = pytest.importorskip("pinocchio")
from coriolis_cli.peers.pinocchio import PinocchioPeer  # noqa: E402

# every bundled robot, fixed and floating (the planar arm's massless root makes a floating M singular)
BUNDLED = ("panda", "planar_2link", "gripper", "quadruped", "humanoid", "serial20", "binary20", "biped20", "quadruped20")
ROBOTS = [(f"{name}.urdf", fb) for name in BUNDLED for fb in (False, True) if not (fb and name == "planar_2link")]


def test_every_bundled_robot_is_covered():
    import os

    assert {f[:-5] for f in os.listdir(robot_path("")) if f.endswith(".urdf")} == set(BUNDLED)


def _rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1.0)


@pytest.fixture(scope="module", params=ROBOTS, ids=[f"{p}{'+fb' if fb else ''}" for p, fb in ROBOTS])
def case(request):
    path, fb = request.param
    robot = cc.load_robot(robot_path(path), floating_base=fb)
    rng = np.random.default_rng(11)
    q = cc.random_configuration(robot, rng)
    v, vr, a, tau = (rng.standard_normal(robot.nv) for _ in range(4))
    return robot, PinocchioPeer(robot), q, v, vr, a, tau


def test_forward_dynamics_equals_pinocchio_aba(case):
    robot, peer, q, v, vr, a, tau = case
    qdd = cc.forward_dynamics(robot, q, v, tau)
    M = cc.mass_matrix(robot, q)
    # the scale of q̈'s round-off is cond(M) times that of τ − c
    scale = np.linalg.cond(M) * max(np.abs(qdd).max(), 1.0)
    assert np.abs(qdd - peer.aba(q, v, tau)).max() < 1e-14 * scale
    # and it inverts the RNEA
    assert _rel(cc.inverse_dynamics(robot, q, v, qdd), tau) < 1e-12


def test_inertial_parameters_are_pinocchios(case):
    robot, peer, *_ = case
    theta = cc.inertial_parameters(robot)
    assert theta.shape == (10 * robot.n_bodies,)
    assert np.abs(theta - peer.dynamic_parameters()).max() < 1e-14 * max(1.0, np.abs(theta).max())


def test_slotine_li_is_m_qdd_r_plus_c_qd_r_plus_g(case):
    robot, peer, q, v, vr, a, tau = case
    M, _, C = cc.coriolis_matrix(robot, q, v)
    expected = M @ a + C @ vr + cc.gravity_vector(robot, q)
    assert _rel(cc.slotine_li(robot, q, v, vr, a), expected) < 1e-13
    Mf, _, Cf = cc.coriolis_matrix(robot, q, v, factorization="featherstone")
    expected_f = Mf @ a + Cf @ vr + cc.gravity_vector(robot, q)
    assert _rel(cc.slotine_li(robot, q, v, vr, a, factorization="featherstone"), expected_f) < 1e-13
    # at q̇_r = q̇ it is the RNEA
    assert _rel(cc.slotine_li(robot, q, v, v, a), cc.inverse_dynamics(robot, q, v, a)) < 1e-13


def test_regressor_times_parameters_and_pinocchio_regressor(case):
    robot, peer, q, v, vr, a, tau = case
    theta = cc.inertial_parameters(robot)
    Y = cc.regressor(robot, q, v, vr, a)
    assert _rel(Y @ theta, cc.slotine_li(robot, q, v, vr, a)) < 1e-13
    # linear in θ: other parameters through slotine_li's theta= and through a rebuilt robot
    other = theta * np.linspace(0.5, 1.5, theta.size)
    tau_other = cc.slotine_li(robot, q, v, vr, a, theta=other)
    assert _rel(Y @ other, tau_other) < 1e-13
    assert _rel(cc.slotine_li(cc.with_inertial_parameters(robot, other), q, v, vr, a), tau_other) < 1e-12
    # at q̇_r = q̇: Pinocchio's computeJointTorqueRegressor
    Yp = peer.joint_torque_regressor(q, v, a)
    assert _rel(cc.regressor(robot, q, v, v, a), Yp) < 1e-13


def test_adaptation_gradient_by_recursion_equals_explicit_product(case):
    robot, peer, q, v, vr, a, tau = case
    Y = cc.regressor(robot, q, v, vr, a)
    assert _rel(cc.adaptation_gradient(robot, q, v, vr, a), Y.T @ (v - vr)) < 1e-13


def test_parameters_round_trip_and_refusals():
    robot = cc.load_robot(robot_path("panda.urdf"))
    theta = cc.inertial_parameters(robot)
    again = cc.with_inertial_parameters(robot, theta)
    q = cc.random_configuration(robot, 3)
    assert np.abs(cc.mass_matrix(again, q) - cc.mass_matrix(robot, q)).max() < 1e-14
    # the round trip takes NumPy's 3x3 products of the inertias: within a few ulps of the largest parameter
    # (rounding both sides to 12 decimals, as before, fails wherever an ulp crosses the last one kept)
    assert np.abs(cc.inertial_parameters(again) - theta).max() <= 4 * np.finfo(float).eps * np.abs(theta).max()
    with pytest.raises(StateError, match="10 parameters per body, 70"):
        cc.slotine_li(robot, q, q, q, q, theta=theta[:-1])
    bad = theta.copy()
    bad[13] = np.nan
    with pytest.raises(StateError, match=r"theta\[panda_link2.mcz\] is not finite"):
        cc.slotine_li(robot, q, q, q, q, theta=bad)
    massless = theta.copy()
    massless[0] = 0.0
    with pytest.raises(ModelError, match="zero mass has no COM"):
        cc.with_inertial_parameters(robot, massless)


@pytest.mark.parametrize("path", ["panda.urdf", "humanoid.urdf"])
def test_an_estimate_takes_the_fast_path_with_the_slow_paths_results_and_messages(tmp_path, path):
    """The adaptive controller's call, slotine_li(..., theta=θ̂, data=data), checks θ̂ inside the
    compiled code; a list, a strided array or another factorization take the full checks."""
    robot = cc.load_robot(robot_path(path))
    data = cc.create_data(robot)
    rng = np.random.default_rng(11)
    q = cc.random_configuration(robot, rng)
    v, vr, a = (rng.standard_normal(robot.nv) for _ in range(3))
    theta = cc.inertial_parameters(robot) * rng.uniform(0.5, 1.5, 10 * robot.n_bodies)
    M, _, C = cc.coriolis_matrix(cc.with_inertial_parameters(robot, theta), q, v)
    g = cc.gravity_vector(cc.with_inertial_parameters(robot, theta), q)
    want = M @ a + C @ vr + g
    fast = cc.slotine_li(robot, q, v, vr, a, theta=theta, data=data)
    assert fast is data.tau and _rel(fast, want) < 1e-13
    strided = np.repeat(theta, 2)[::2]
    for other in (list(theta), strided, theta.astype(np.float32).astype(float)):
        assert _rel(cc.slotine_li(robot, q, v, vr, a, theta=other, data=data), want) < 1e-6
    assert np.array_equal(cc.slotine_li(robot, q, v, vr, a, theta=strided, data=data), fast)
    assert np.array_equal(cc.slotine_li(robot, q, v, vr, a, theta=theta), fast)  # without data=
    bad = theta.copy()
    bad[13] = np.inf
    for wrong, message in ((theta[:-1], "10 parameters per body"), (bad, r"theta\[.*\] is not finite \(inf\)"),
                           (np.zeros(0), "10 parameters per body")):
        for arg in (wrong, list(wrong)):
            with pytest.raises(StateError, match=message):
                cc.slotine_li(robot, q, v, vr, a, theta=arg, data=data)
    # the model's own parameters again after an estimate: the same workspace, the model's τ
    M, _, C = cc.coriolis_matrix(robot, q, v)
    assert _rel(cc.slotine_li(robot, q, v, vr, a, data=data), M @ a + C @ vr + cc.gravity_vector(robot, q)) < 1e-13


def test_forward_dynamics_batches_and_workspace():
    robot = cc.load_robot(robot_path("quadruped.urdf"), floating_base=True)
    rng = np.random.default_rng(2)
    Q = np.stack([cc.random_configuration(robot, rng) for _ in range(5)])
    V, T = rng.standard_normal((5, robot.nv)), rng.standard_normal((5, robot.nv))
    batch = cc.forward_dynamics(robot, Q, V, T)
    data = cc.create_data(robot)
    for k in range(5):
        out = cc.forward_dynamics(robot, Q[k], V[k], T[k], data=data)
        assert out is data.qdd
        assert np.array_equal(out, batch[k])
    with pytest.raises(StateError, match=r"tau\[.*\] is not finite"):
        cc.forward_dynamics(robot, Q[0], V[0], np.full(robot.nv, np.inf))


@pytest.mark.parametrize("path,kw", [("knee_leg.yaml", {}), ("humanoid.urdf", {"floating_base": True, "base_velocity": "mixed"}),
                                     ("quadruped.urdf", {"floating_base": True, "base_velocity": "inertial"})])
def test_control_functions_in_other_coordinates(path, kw):
    """Reduced robots: τ̄ = M̄ q̄̈_r + C̄ q̄̇_r + ḡ, Ȳ θ = τ̄, Ȳᵀ s̄, and q̄̈ inverting τ̄."""
    robot = cc.load_robot(robot_path(path), **kw)
    rng = np.random.default_rng(4)
    q = cc.random_configuration(robot, rng)
    v, vr, a, tau = (rng.standard_normal(robot.nv) for _ in range(4))
    M, _, C = cc.coriolis_matrix(robot, q, v)
    g = cc.gravity_vector(robot, q)
    t = cc.slotine_li(robot, q, v, vr, a)
    assert _rel(t, M @ a + C @ vr + g) < 1e-12
    theta = cc.inertial_parameters(robot.full)
    Y = cc.regressor(robot, q, v, vr, a)
    assert _rel(Y @ theta, t) < 1e-12
    assert _rel(cc.adaptation_gradient(robot, q, v, vr, a), Y.T @ (v - vr)) < 1e-12
    qdd = cc.forward_dynamics(robot, q, v, tau)
    assert _rel(M @ qdd + C @ v + g, tau) < 1e-10
    data = cc.create_data(robot)
    out = cc.forward_dynamics(robot, q, v, tau, data=data)
    assert out is data.qdd and np.array_equal(out, qdd)  # the workspace's own array, as for every data= call


PRISMATIC_ARM = """
name: slider_arm
links:
  - {name: base, mass: 5.0, com: [0, 0, -0.05], inertia: [0.05, 0, 0, 0.05, 0, 0.08]}
  - {name: carriage, mass: 2.0, com: [0.0, 0.05, 0.0], inertia: [0.02, 0.001, 0, 0.03, 0, 0.02]}
  - {name: upper, mass: 1.2, com: [0.2, 0.0, 0.01], inertia: [0.002, 0, 0, 0.02, 0.001, 0.02]}
  - {name: slider, mass: 0.5, com: [0.0, 0.0, 0.1], inertia: [0.004, 0, 0, 0.004, 0, 0.001]}
  - {name: wrist, mass: 0.3, com: [0.02, 0.01, 0.03], inertia: [0.001, 0, 0, 0.001, 0, 0.0005]}
joints:
  - {name: rail, type: prismatic, parent: base, child: carriage, rpy: [0.1, 0.2, 0.3], axis: [1, 0, 0]}
  - {name: shoulder, type: revolute, parent: carriage, child: upper, xyz: [0, 0.1, 0.2], axis: [0, 1, 0]}
  - {name: extend, type: prismatic, parent: upper, child: slider, xyz: [0.4, 0, 0], rpy: [0, 0.3, 0], axis: [0.6, 0, 0.8]}
  - {name: twist, type: continuous, parent: slider, child: wrist, xyz: [0, 0, 0.2], axis: [0, 0, 1]}
"""


def _body_frame_robot(tmp_path, spec, floating):
    """A robot of 1-DoF joints: a bundled one, or the slider arm of prismatic joints."""
    if spec == "prismatic":
        path = tmp_path / "slider.yaml"
        path.write_text(PRISMATIC_ARM)
    else:
        path = robot_path(spec + ".urdf")
    return cc.load_robot(str(path), floating_base=floating)


@pytest.mark.parametrize("spec,floating", [("panda", False), ("quadruped", True), ("humanoid", False), ("binary20", True),
                                           ("prismatic", False), ("prismatic", True)])
def test_body_frame_slotine_li_equals_the_world_frame_recursion(tmp_path, spec, floating):
    """Robots of 1-DoF joints (under a free root) take the body-frame kernel; it must give what the
    world-frame kernel and Algorithm 1 give, with the model's parameters and with other ones."""
    from coriolis_cli.engine import FACTORIZATIONS, compiled
    from coriolis_cli.engine.conventions import STANDARD_GRAVITY

    robot = _body_frame_robot(tmp_path, spec, floating)
    world_frame = _world_frame_workspace(robot)
    data = cc.create_data(robot)
    assert data.body_frame_joints
    rng = np.random.default_rng(8)
    q = cc.random_configuration(robot, rng)
    v, vr, a = (rng.standard_normal(robot.nv) for _ in range(3))
    theta = cc.inertial_parameters(robot) * np.linspace(0.7, 1.3, 10 * robot.n_bodies)
    for th, kind in ((None, "christoffel"), (theta, "christoffel"), (theta, "featherstone")):
        body = cc.slotine_li(robot, q, v, vr, a, theta=th, factorization=kind, data=data).copy()
        world = np.zeros(robot.nv)
        assert compiled.slotine_li(world_frame, q, v, vr, a, np.zeros(0) if th is None else th, STANDARD_GRAVITY,
                                   FACTORIZATIONS[kind], world) == 0
        assert _rel(body, world) < 1e-13
    M, _, C = cc.coriolis_matrix(robot, q, v)
    assert _rel(cc.slotine_li(robot, q, v, vr, a), M @ a + C @ vr + cc.gravity_vector(robot, q)) < 1e-13


def _world_frame_workspace(robot):
    """The compiled core's workspace for this robot, held to the kernels of the computation frame
    (body_frame=0), which every other robot takes."""
    from coriolis_cli.engine import compiled

    a = robot.arrays
    return compiled.Workspace(a.ints, a.cols, a.geom, robot.nq, 0)


def _with_and_without_armature(plain, floating):
    """The robot, and the same with armature on each 1-DoF joint (0.1, 0.15, ...)."""
    from dataclasses import replace

    from coriolis_cli.model.tree import build_model

    joints = tuple(replace(j, armature=(0.1 + 0.05 * k,)) if j.type in ("revolute", "continuous", "prismatic") else j
                   for k, j in enumerate(plain.description.joints))
    return plain, build_model(replace(plain.description, joints=joints), floating_base=floating)


@pytest.mark.parametrize("spec,floating", [("panda", False), ("quadruped", True), ("humanoid", False), ("binary20", True),
                                           ("prismatic", False), ("prismatic", True)])
def test_articulated_body_forward_dynamics_equals_the_factored_mass_matrix(tmp_path, spec, floating):
    """Robots of 1-DoF joints (under a free root) take the articulated-body algorithm in body
    coordinates; it must give what M = LᵀDL gives (core/forward_dynamics.hpp), with armature on
    the joints too, and lists (the checked path) the same bits as arrays."""
    from coriolis_cli.engine import compiled
    from coriolis_cli.engine.conventions import STANDARD_GRAVITY

    for robot in _with_and_without_armature(_body_frame_robot(tmp_path, spec, floating), floating):
        data = cc.create_data(robot)
        assert data.body_frame_joints
        rng = np.random.default_rng(9)
        q = cc.random_configuration(robot, rng)
        v, tau = (rng.standard_normal(robot.nv) for _ in range(2))
        qdd = cc.forward_dynamics(robot, q, v, tau, data=data).copy()
        factored = np.zeros(robot.nv)
        assert compiled.forward_dynamics(_world_frame_workspace(robot), q, v, tau, STANDARD_GRAVITY, factored) == 0
        scale = np.linalg.cond(cc.mass_matrix(robot, q)) * max(np.abs(qdd).max(), 1.0)
        assert np.abs(qdd - factored).max() < 1e-14 * scale
        # and it solves M q̈ = τ − C q̇ − g, to a solve's backward error
        M, _, C = cc.coriolis_matrix(robot, q, v)
        residual = M @ qdd + C @ v + cc.gravity_vector(robot, q) - tau
        assert np.abs(residual).max() < 1e-14 * robot.nv * (np.abs(M).sum(1).max() * np.abs(qdd).max() + np.abs(tau).max())
        assert np.array_equal(cc.forward_dynamics(robot, list(q), list(v), list(tau), data=data), qdd)


def _unrelated(robot):
    """The entries of M that no kernel writes: DoF of bodies neither of which supports the other."""
    def chain(b):
        while b >= 0:
            yield b
            b = robot.bodies[b].parent
    ancestors = [set(chain(robot.col_body[j])) for j in range(robot.nv)]
    return np.array([[robot.col_body[i] not in ancestors[j] and robot.col_body[j] not in ancestors[i]
                      for j in range(robot.nv)] for i in range(robot.nv)])


@pytest.mark.parametrize("spec,floating", [("panda", False), ("quadruped", True), ("humanoid", False), ("binary20", True),
                                           ("prismatic", False), ("prismatic", True)])
def test_body_frame_mass_matrix_and_inverse_dynamics_equal_the_world_frame_ones(tmp_path, spec, floating):
    """Robots of 1-DoF joints (under a free root) take M, τ and g in body coordinates
    (core/crba_body.hpp, core/rnea_body.hpp); they must give what the world-frame CRBA and RNEA give,
    with armature on the joints too, with the same structural zeros in M, and every path (data=,
    fresh, lists, batches, another gravity, a quaternion to normalize) the same bits."""
    from coriolis_cli.engine import compiled

    for robot in _with_and_without_armature(_body_frame_robot(tmp_path, spec, floating), floating):
        data = cc.create_data(robot)
        world = _world_frame_workspace(robot)
        Mw, tw, gw = np.zeros((robot.nv, robot.nv)), np.zeros(robot.nv), np.zeros(robot.nv)
        assert data.body_frame_joints
        rng = np.random.default_rng(10)
        Q = np.stack([cc.random_configuration(robot, rng) for _ in range(3)])
        V, A = rng.standard_normal((3, robot.nv)), rng.standard_normal((3, robot.nv))
        q, v, a = Q[0], V[0], A[0]
        lifted = np.array([0.3, -1.2, -9.0])
        M = cc.mass_matrix(robot, q, data=data).copy()
        tau = cc.inverse_dynamics(robot, q, v, a, data=data).copy()
        g = cc.gravity_vector(robot, q, data=data).copy()
        g_lifted = cc.gravity_vector(robot, q, gravity=lifted, data=data).copy()
        assert compiled.mass_matrix(world, q, Mw) == 0
        assert _rel(M, Mw) < 1e-14 and np.all(M[_unrelated(robot)] == 0) and np.all(Mw[_unrelated(robot)] == 0)
        assert compiled.inverse_dynamics(world, q, v, a, data.gravity, tw) == 0
        assert _rel(tau, tw) < 1e-14
        assert compiled.gravity_vector(world, q, data.gravity, gw) == 0
        assert _rel(g, gw) < 1e-14
        assert compiled.gravity_vector(world, q, lifted, gw) == 0
        assert _rel(g_lifted, gw) < 1e-14
        for same in (cc.mass_matrix(robot, list(q)), cc.mass_matrix(robot, Q)[0]):
            assert np.array_equal(same, M)
        for same in (cc.inverse_dynamics(robot, list(q), list(v), list(a)), cc.inverse_dynamics(robot, Q, V, A)[0]):
            assert np.array_equal(same, tau)
        for same in (cc.gravity_vector(robot, list(q)), cc.gravity_vector(robot, Q)[0]):
            assert np.array_equal(same, g)
        if floating:  # a base quaternion of norm 2: normalized with a warning, then the same bits
            q2 = q.copy()
            q2[3:7] *= 2.0
            with pytest.warns(cc.engine.QuaternionWarning):
                assert np.array_equal(cc.mass_matrix(robot, q2, data=data), M)
            with pytest.warns(cc.engine.QuaternionWarning):
                assert np.array_equal(cc.inverse_dynamics(robot, q2, v, a, data=data), tau)
            with pytest.warns(cc.engine.QuaternionWarning):
                assert np.array_equal(cc.gravity_vector(robot, q2), g)


def test_other_joints_take_the_world_frame_recursion(tmp_path):
    text = PRISMATIC_ARM.replace("type: continuous, parent: slider", "type: spherical, parent: slider")
    path = tmp_path / "ball.yaml"
    path.write_text(text)
    robot = cc.load_robot(str(path))
    assert not cc.create_data(robot).body_frame_joints
    rng = np.random.default_rng(3)
    q = cc.random_configuration(robot, rng)
    v, vr, a = (rng.standard_normal(robot.nv) for _ in range(3))
    M, _, C = cc.coriolis_matrix(robot, q, v)
    assert _rel(cc.slotine_li(robot, q, v, vr, a), M @ a + C @ vr + cc.gravity_vector(robot, q)) < 1e-13
    # Yᵀs through the world-frame regressor kernel (its Y skipped) against the explicit product
    Y = cc.regressor(robot, q, v, vr, a)
    assert _rel(cc.adaptation_gradient(robot, q, v, vr, a), Y.T @ (v - vr)) < 1e-12
