"""Closed kinematic loops (engine.loops): the bundled four-bar and knee-linkage leg against closed
forms solved here by hand (circle intersections), energies computed from those closed forms, and
Pinocchio on the spanning tree."""

from __future__ import annotations

import os

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.engine.coordinates import evaluation
from coriolis_cli.checks.verify import BUNDLED_DIR, verify_robot
from coriolis_cli.errors import ModelError, StateError
from .conftest import assert_one_line_error

FOURBAR = os.path.join(BUNDLED_DIR, "fourbar.yaml")
KNEE = os.path.join(BUNDLED_DIR, "knee_leg.yaml")
CRANK, COUPLER, ROCKER, GROUND = 0.3, 0.9, 0.8, 1.0


def _wrap(x):
    return (np.asarray(x) + np.pi) % (2 * np.pi) - np.pi


def _circles(B, D, rb, rd, sign):
    """The point at distance rb from B and rd from D, on the side ``sign`` of B→D."""
    d = np.linalg.norm(D - B)
    x = (rb**2 - rd**2 + d**2) / (2 * d)
    h = np.sqrt(rb**2 - x**2)
    u = (D - B) / d
    return B + x * u + sign * h * np.array([-u[1], u[0]])


def fourbar_closed_form(theta):
    """Coupler and rocker joint angles of the bundled four-bar (the branch above the ground line)."""
    B = CRANK * np.array([np.cos(theta), np.sin(theta)])
    D = np.array([GROUND, 0.0])
    C = _circles(B, D, COUPLER, ROCKER, +1)
    return _wrap(np.arctan2(*(C - B)[::-1]) - theta), _wrap(np.arctan2(*(C - D)[::-1]))


def fourbar_energy_terms(theta, h=1e-5):
    """M̄(θ) = 2 T at θ̇ = 1 and the potential V(θ), from the closed form alone (COM velocities
    by central differences of the closed-form positions)."""
    def coms(t):
        cp, rk = fourbar_closed_form(t)
        B = CRANK * np.array([np.cos(t), np.sin(t)])
        D = np.array([GROUND, 0.0])
        return (0.15 * np.array([np.cos(t), np.sin(t)]),
                B + 0.45 * np.array([np.cos(t + cp), np.sin(t + cp)]),
                D + 0.4 * np.array([np.cos(rk), np.sin(rk)])), np.array([t, t + cp, rk])

    (c0, ang0) = coms(theta)
    cp_, ap = coms(theta + h)
    cm_, am = coms(theta - h)
    masses, izz = (1.0, 2.0, 1.5), (0.008, 0.136, 0.081)
    omega = _wrap(ap - am) / (2 * h)
    M = sum(m * np.dot((p - q) / (2 * h), (p - q) / (2 * h)) for m, p, q in zip(masses, cp_, cm_))
    M += sum(i * w * w for i, w in zip(izz, omega))
    V = 9.81 * sum(m * c[1] for m, c in zip(masses, c0))  # the mechanism's y axis is the world's z
    return M, V


@pytest.fixture(scope="module")
def fourbar():
    return cc.load_robot(FOURBAR)


@pytest.fixture(scope="module")
def knee():
    return cc.load_robot(KNEE)


@pytest.mark.parametrize("theta", [0.0, 0.4, 1.0, 2.5, np.pi, -2.0, 6.0, 12.0])
def test_fourbar_solves_the_closed_form_branch(fourbar, theta):
    q = evaluation(fourbar).full_configuration(np.array([theta]))
    cp, rk = fourbar_closed_form(theta)
    assert q[0] == theta
    assert abs(_wrap(q[1] - cp)) < 1e-12 and abs(_wrap(q[2] - rk)) < 1e-12


@pytest.mark.parametrize("theta", [0.3, 1.7, -2.2])
def test_fourbar_mass_matrix_gravity_and_coriolis_from_its_energy(fourbar, theta):
    """M̄ from the closed form's kinetic energy; ḡ = dV/dθ; for one DoF, C̄ = ½ M̄'(θ) θ̇."""
    q, qd, h = np.array([theta]), np.array([1.7]), 1e-4
    M, Mdot, C = cc.coriolis_matrix(fourbar, q, qd)
    M_ref, _ = fourbar_energy_terms(theta)
    assert abs(M[0, 0] - M_ref) < 1e-8 * M_ref
    V_plus, V_minus = fourbar_energy_terms(theta + h)[1], fourbar_energy_terms(theta - h)[1]
    g = cc.gravity_vector(fourbar, q)
    assert abs(g[0] - (V_plus - V_minus) / (2 * h)) < 1e-6 * max(1.0, abs(g[0]))
    dM = (fourbar_energy_terms(theta + h)[0] - fourbar_energy_terms(theta - h)[0]) / (2 * h)
    assert abs(C[0, 0] - 0.5 * dM * qd[0]) < 1e-5 * abs(M_ref)
    assert abs(Mdot[0, 0] - 2 * C[0, 0]) < 1e-14 * M_ref
    G = cc.christoffel(fourbar, q)
    assert abs(G[0, 0, 0] * qd[0] - C[0, 0]) < 1e-14 * M_ref


def test_fourbar_jacobian_and_its_rate_against_the_closed_form(fourbar):
    theta, h = 0.9, 1e-5
    A = evaluation(fourbar).jacobian(np.array([theta]))
    Adot = evaluation(fourbar).jacobian_rate(np.array([theta]), np.array([1.0]))

    def angles(t):
        return np.array([t, *fourbar_closed_form(t)])

    dq = _wrap(angles(theta + h) - angles(theta - h)) / (2 * h)
    d2q = _wrap(angles(theta + h) - 2 * angles(theta) + angles(theta - h)) / h**2
    assert np.allclose(A[:, 0], dq, rtol=0, atol=1e-8)
    assert np.allclose(Adot[:, 0], d2q, rtol=0, atol=1e-4)


@pytest.mark.parametrize("hip,crank", [(0.0, 0.0), (0.3, 1.0), (-1.0, 3.0), (0.8, -2.5)])
def test_knee_linkage_against_its_closed_form(knee, hip, crank):
    q = evaluation(knee).full_configuration(np.array([hip, crank]))
    names = knee.full.config_names
    knee_angle, rod = q[names.index("knee_joint")], q[names.index("rod_joint")]
    # in the thigh's xz plane; a rotation φ about y takes x to (cos φ, -sin φ)
    pivot, joint = np.array([0.0, -0.05]), np.array([0.0, -0.4])
    B = pivot + 0.06 * np.array([np.cos(crank), -np.sin(crank)])
    L = _circles(joint, B, 0.07, 0.350143, -1)
    assert abs(_wrap(knee_angle - np.arctan2(-(L - joint)[1], (L - joint)[0]))) < 1e-12
    rod_dir = (L - B) / np.linalg.norm(L - B)  # the rod hangs along -z of its frame at rod + crank = 0
    assert abs(_wrap(crank + rod - np.arctan2(-rod_dir[0], -rod_dir[1]))) < 1e-12
    assert q[names.index("hip_joint")] == hip


@pytest.mark.parametrize("path", [FOURBAR, KNEE])
def test_loop_robots_pass_every_check_including_pinocchio(path):
    rec = verify_robot(cc.load_robot(path), trials=8, seed=3)
    failed = [c.key for c in rec.checks if c.passed is False]
    assert not failed, failed
    assert {c.key for c in rec.checks if c.passed} >= {"a", "b", "c", "d", "e", "f1", "j", "l"}


SPHERICAL_4R = """
name: spherical_4r
links:
  - {name: ground%s}
  - {name: l1, mass: 0.5, com: [0.1, 0.05, 0.3], inertia: [0.004, 0.0001, 0.0002, 0.005, 0.0003, 0.003]}
  - {name: l2, mass: 0.8, com: [0.05, 0.2, 0.25], inertia: [0.006, 0.0, 0.0, 0.004, 0.0, 0.005]}
  - {name: l3, mass: 0.6, com: [-0.1, 0.1, 0.3], inertia: [0.005, 0.0, 0.0, 0.005, 0.0, 0.002]}
joints:
  - {name: j1, type: continuous, parent: ground, child: l1, axis: [0, 0, 1]}
  - {name: j2, type: continuous, parent: l1, child: l2, rpy: [0.5236, 0, 0], axis: [0, 0, 1]}
  - {name: j3, type: continuous, parent: l2, child: l3, rpy: [1.3963, 0, 0], axis: [0, 0, 1]}
loops:
  - {name: j4, type: revolute, parent: l3, child: ground, rpy: [1.0472, 0, 0], child_rpy: [-1.2217, 0, 0], axis: [0, 0, 1]}
independent: [j1]
guess: {j2: 0.5, j3: 2.0}
"""


@pytest.mark.parametrize("floating", [False, True])
def test_a_spatial_loop(tmp_path, floating):
    """A spherical four-bar: every axis through one point, so the loop is not planar (the rotation
    rows carry the constraint, the position rows vanish). Its closure holds along the solution,
    A is the derivative of the solved configuration, and every check passes, on a fixed and a
    floating ground."""
    path = tmp_path / "sph4r.yaml"
    path.write_text(SPHERICAL_4R % (", mass: 3.0, com: [0, 0, -0.1], inertia: [0.03, 0, 0, 0.03, 0, 0.04]" if floating else ""))
    robot = cc.load_robot(str(path), floating_base=floating)
    q = cc.random_configuration(robot, 2)
    k = robot.config_names.index("j1")
    h = 1e-6
    up, down = q.copy(), q.copy()
    up[k] += h
    down[k] -= h
    dq = _wrap(evaluation(robot).full_configuration(up) - evaluation(robot).full_configuration(down)) / (2 * h)
    v = robot.dof_names.index("j1")
    A = evaluation(robot).jacobian(q)
    joints = [robot.full.config_names.index(n) for n in ("j2", "j3")]
    dofs = [robot.full.dof_names.index(n) for n in ("j2", "j3")]
    assert np.allclose(A[dofs, v], dq[joints], rtol=0, atol=1e-8)
    rec = verify_robot(robot, trials=10, seed=1)
    assert not [c.key for c in rec.checks if c.passed is False]
    assert {"a", "b", "c", "d", "j"} <= {c.key for c in rec.checks if c.passed}


# MJCF linkages: a four-bar, a weld, a slider-crank on a rotated base far from the origin, a pin to
# the world through a slide joint, a weld closed through a slide joint on an offset root
MJCF_LOOPS = [os.path.join(os.path.dirname(__file__), "data", "mjcf", name)
              for name in ("fourbar_connect.xml", "weld_4r.xml", "slider_crank.xml", "world_pin.xml", "weld_slide.xml")]


@pytest.mark.parametrize("path", [FOURBAR, KNEE, "spatial", *MJCF_LOOPS])
def test_the_jacobian_the_loader_chooses_coordinates_by_is_the_engines(tmp_path, path):
    """Where a file lists no independent coordinates (MJCF), the loader chooses them from the
    constraint Jacobian, which it takes from the linkage's geometry without the engine: it equals
    the engine's K (engine/core/closure.hpp) on every loop joint, at closed configurations."""
    from coriolis_cli.engine.coordinates import evaluation
    from coriolis_cli.engine.loops import constraints

    if path == "spatial":
        path = tmp_path / "sph4r.yaml"
        path.write_text(SPHERICAL_4R % "")
    robot = cc.load_robot(str(path))
    tree, loops, ev = robot.full, robot.map, evaluation(robot)
    for seed in range(3):
        q, _, _, _, x, _ = ev._solve(cc.random_configuration(robot, seed))
        K = constraints(tree, loops.packed, loops.n_rows, q)[1]
        Kx = K @ ev._spread(x, np.eye(len(x)))  # ∂φ/∂x = K E
        assert np.abs(loops.loop_jacobian(q, x) - Kx).max() <= 1e-14 * max(1.0, np.abs(K).max())


def test_spherical_closure_of_a_planar_loop_gives_the_revolute_results(tmp_path, fourbar):
    """A planar loop's motion is planar whatever the closure: a spherical pin changes nothing."""
    text = open(FOURBAR).read().replace("type: revolute, parent: coupler", "type: spherical, parent: coupler")
    path = tmp_path / "fourbar_spherical.yaml"
    path.write_text(text)
    other = cc.load_robot(str(path))
    q, qd = np.array([1.1]), np.array([-0.8])
    for a, b in zip(cc.coriolis_matrix(fourbar, q, qd), cc.coriolis_matrix(other, q, qd)):
        assert np.allclose(a, b, rtol=1e-13, atol=0)


def test_results_depend_on_the_state_only(knee):
    q1, q2 = np.array([0.2, 2.0]), np.array([-0.5, -2.7])
    first = cc.christoffel(knee, q1).copy()
    cc.christoffel(knee, q2)
    fresh = cc.load_robot(KNEE)
    assert np.array_equal(cc.christoffel(fresh, q1), first)
    assert np.array_equal(cc.christoffel(knee, q1), first)


def test_data_path_and_random_configurations(knee):
    data = cc.create_data(knee)
    rng = np.random.default_rng(5)
    q = cc.random_configuration(knee, rng)
    qd = rng.standard_normal(knee.nv)
    M, Mdot, C = cc.coriolis_matrix(knee, q, qd, data=data)
    assert M is data.M and np.allclose(Mdot, C + C.T, rtol=0, atol=1e-14)
    # the tree's M by Algorithm 1 (world frame) and by the CRBA in body coordinates, reduced alike
    assert np.allclose(M, cc.mass_matrix(knee, q), rtol=0, atol=1e-15 * np.abs(M).max())
    assert np.array_equal(cc.mass_matrix(knee, q, data=data), cc.mass_matrix(knee, q))


def test_a_linkage_that_cannot_reach_says_so(tmp_path, run_cli):
    """Rocker 0.3 m: at θ = π the crank pin is 1.3 m from the rocker's pivot, beyond 0.9 + 0.3."""
    text = open(FOURBAR).read().replace("child_xyz: [0.8, 0, 0]", "child_xyz: [0.3, 0, 0]")
    text = text.replace("guess: {coupler_joint: 1.0, rocker_joint: 1.9}", "guess: {coupler_joint: 0.3, rocker_joint: 1.0}")
    path = tmp_path / "stuck.yaml"
    path.write_text(text)
    robot = cc.load_robot(str(path))
    cc.mass_matrix(robot, np.array([0.0]))
    with pytest.raises(StateError, match="cannot close at this configuration.*crank_joint=3.14159"):
        cc.mass_matrix(robot, np.array([np.pi]))
    assert_one_line_error(run_cli("compute", path, "--q", "3.14159", "--qd", "0"), "cannot close")


def test_approaching_a_dead_point(tmp_path, run_cli):
    """With a 0.3 m rocker the linkage reaches its limit where coupler and rocker align (|BD| = 1.2):
    there ∂φ/∂q_d loses rank, the dependent rates grow as 1/√(θ* − θ), so M̄ as 1/(θ* − θ), and at
    the limit itself a one-line error instead of a number."""
    text = open(FOURBAR).read().replace("child_xyz: [0.8, 0, 0]", "child_xyz: [0.3, 0, 0]")
    path = tmp_path / "limit.yaml"
    path.write_text(text.replace("guess: {coupler_joint: 1.0, rocker_joint: 1.9}", "guess: {coupler_joint: 0.3, rocker_joint: 1.0}"))
    robot = cc.load_robot(str(path))
    limit = np.arccos((1.09 - 1.44) / 0.6)
    far, near = (cc.mass_matrix(robot, np.array([limit - d]))[0, 0] for d in (1e-4, 1e-6))
    assert 80 < near / far < 120
    with pytest.raises(StateError, match="cannot close|singular"):
        cc.mass_matrix(robot, np.array([limit]))


@pytest.mark.parametrize("edit,message", [
    (("independent: [crank_joint]", "independent: [crank_joint, coupler_joint, rocker_joint]"), "nothing is left"),
    (("guess: {coupler_joint: 1.0, rocker_joint: 1.9}", "guess: {upright: 1.0}"), "not a joint of the loops"),
    (("parent: coupler, child: rocker", "parent: coupler, child: nowhere"), "link 'nowhere', which does not exist"),
    (("type: revolute, parent: coupler", "type: prismatic, parent: coupler"), "type 'prismatic' is not supported"),
    (("axis: [0, 0, 1]}\nindependent", "axis: [0, 0, 1], color: red}\nindependent"), "unknown key 'color'"),
    (("name: pin,", "name: crank_joint,"), "name is taken by a joint"),
    (("parent: coupler, child: rocker", "parent: ground, child: frame"), "closes no loop"),
    (("independent: [crank_joint]", "independent: []"), "no joint is listed in 'independent:'"),
    (("guess: {coupler_joint: 1.0, rocker_joint: 1.9}", "guess: {coupler_joint: 3.0, rocker_joint: -2.0}"),
     None),  # converges to the other assembly: allowed, a branch is the user's choice
])
def test_malformed_loops_are_refused_clearly(tmp_path, run_cli, edit, message):
    text = open(FOURBAR).read()
    assert edit[0] in text
    path = tmp_path / "bad.yaml"
    path.write_text(text.replace(edit[0], edit[1]))
    if message is None:
        robot = cc.load_robot(str(path))
        assert np.all(np.isfinite(cc.mass_matrix(robot, np.array([0.5]))))
        return
    with pytest.raises(ModelError, match=message):
        cc.load_robot(str(path))
    assert_one_line_error(run_cli("info", path), message.split("'")[0])


def test_loops_refuse_a_second_change_of_coordinates_and_urdf(tmp_path, run_cli):
    with pytest.raises(ModelError, match="one change of coordinates at a time"):
        cc.load_robot(FOURBAR, mimic="enforce")
    out = tmp_path / "fourbar.urdf"
    assert_one_line_error(run_cli("convert", FOURBAR, "-o", out), "URDF cannot hold closed loops")
    assert not out.exists()


def test_yaml_round_trip_keeps_the_loops(tmp_path, run_cli, knee):
    out = tmp_path / "knee.yaml"
    assert run_cli("convert", KNEE, "-o", out).code == 0
    again = cc.load_robot(str(out))
    q = np.array([0.4, 1.3])
    assert np.array_equal(cc.mass_matrix(again, q), cc.mass_matrix(knee, q))


def test_info_shows_the_loops(run_cli):
    import json

    r = run_cli("info", KNEE)
    assert r.code == 0 and "revolute (solved)" in r.out and "knee_pin" in r.out and "loop closures" in r.out
    rec = json.loads(run_cli("info", KNEE, "--format", "json").out)
    assert [c["name"] for c in rec["loops"]] == ["knee_pin"]
    assert {j["name"] for j in rec["joints"] if j["solved_by_loops"]} == {"knee_joint", "rod_joint"}
    assert rec["nv"] == 2 and rec["dof_names"] == ["hip_joint", "crank_joint"]


def _ring(n: int, length: float = 0.1) -> str:
    """A closed planar ring of n links (n − 2 DoF), assembled as a regular polygon by its guess."""
    import cmath
    import math

    turn = 2 * math.pi / (n + 1)
    links = ["  - name: ground"] + [f"  - {{name: l{i}, mass: 0.1, com: [{length / 2}, 0, 0], inertia: [1e-5, 0, 0, 1e-4, 0, 1e-4]}}"
                                   for i in range(n)]
    joints = [f"  - {{name: j{i}, type: continuous, parent: {'ground' if i == 0 else f'l{i - 1}'}, child: l{i}, "
              f"xyz: [{0 if i == 0 else length}, 0, 0], axis: [0, 0, 1]}}" for i in range(n)]
    end, heading = 0j, 0.0
    for i in range(n):
        heading += turn if i else 0.0
        end += length * cmath.exp(1j * heading)
    return "\n".join(["name: ring", "links:", *links, "joints:", *joints, "loops:",
                      f"  - {{name: close, type: revolute, parent: l{n - 1}, child: ground, xyz: [{length}, 0, 0], "
                      f"child_xyz: [{end.real!r}, {end.imag!r}, 0], axis: [0, 0, 1]}}",
                      "independent: [" + ", ".join(f"j{i}" for i in range(n - 2)) + "]",
                      "guess: {" + ", ".join(f"j{i}: {turn!r}" for i in range(1, n)) + "}"]) + "\n"


def test_random_states_of_a_long_closed_chain_are_found_near_its_assembly(tmp_path, run_cli):
    """A 60-link ring closes at almost no draw over the joint limits (the hostile corpus's
    1,500-link chain took 140 s to refuse): after one failed draw, draws near the assembly."""
    path = tmp_path / "ring.yaml"
    path.write_text(_ring(60))
    robot = cc.load_robot(str(path))
    rng = np.random.default_rng(1)
    for _ in range(3):
        qbar = cc.random_configuration(robot, rng)
        assert np.abs(evaluation(robot).jacobian(qbar)).max() < np.inf
    r = run_cli("compute", path, "--random", "--seed", "1", "--what", "g", "--format", "json")
    assert r.code == 0, r


ROD_LEG = os.path.join(os.path.dirname(__file__), "data", "mjcf", "rod_leg.xml")


def _rotation(quat):
    from coriolis_cli.model.geometry import quat_to_matrix

    return quat_to_matrix(np.asarray(quat) / np.linalg.norm(quat))


def _log(R):
    """The rotation vector of R (angle below π)."""
    angle = np.arccos(np.clip((np.trace(R) - 1) / 2, -1.0, 1.0))
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    return w * (0.5 if angle < 1e-12 else angle / (2 * np.sin(angle)))


def _velocity(tree, q_from, q_to, h):
    """(q_to ⊖ q_from) / h in the tree's velocities: hinges' differences, a ball's angular velocity
    in its child frame."""
    v = np.zeros(tree.nv)
    for i, b in enumerate(tree.bodies):
        qs, vs = int(tree.q_start[i]), int(tree.v_start[i])
        if b.joint.type == "spherical":
            v[vs : vs + 3] = _log(_rotation(q_from[qs : qs + 4]).T @ _rotation(q_to[qs : qs + 4])) / h
        elif b.joint.nv == 1:
            v[vs] = (q_to[qs] - q_from[qs]) / h
    return v


@pytest.fixture(scope="module")
def rod_leg():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cc.load_robot(ROD_LEG)


def test_a_rod_between_ball_joints_leaves_its_spin_free(rod_leg):
    """Cassie's achilles rod: a ball joint at one end, a connect at the other. The loops fix the
    rod's line, not its turn about it, so the rod's spin is an independent coordinate beside the
    leg's four: two of the ball's angles are solved, with the shin and the toe's four-bar."""
    from coriolis_cli.engine.loops import constraints

    assert (rod_leg.nq, rod_leg.nv) == (5, 5)
    assert rod_leg.config_names == ("rod_spin", "knee", "tarsus", "heel", "foot")  # foot: actuated
    assert set(rod_leg.map.dependent_names) == {"rod_swing1", "rod_swing2", "shin", "crank", "plantar"}
    ev, tree = evaluation(rod_leg), rod_leg.full
    q_bar = cc.random_configuration(rod_leg, 4)
    q = ev.full_configuration(q_bar)
    assert np.linalg.norm(constraints(tree, rod_leg.map.packed, rod_leg.map.n_rows, q)[0]) < 1e-12
    turned = q_bar.copy()
    turned[0] += 0.7
    q_turned = ev.full_configuration(turned)
    ball = slice(int(tree.q_start[tree.joint_names.index("rod")]), int(tree.q_start[tree.joint_names.index("rod")]) + 4)
    others = np.ones(tree.nq, bool)
    others[ball] = False
    assert np.abs(q_turned[others] - q[others]).max() < 1e-12  # the spin moves the rod alone
    B = rod_leg.map.coordinate_basis[rod_leg.map.coordinate_names.index("rod_spin")].reshape(3, 3)
    turn = _log(_rotation(q[ball]).T @ _rotation(q_turned[ball]))
    assert np.allclose(turn, 0.7 * B[:, 2], rtol=0, atol=1e-12)  # about the rod's own line


def test_a_loop_through_a_ball_joint_has_the_derivatives_of_its_solution(rod_leg):
    """A is the derivative of the solved configuration (a ball's rows: its angular velocity, from
    the quaternions by central differences), and Ȧ that of A along q̄̇."""
    ev, tree = evaluation(rod_leg), rod_leg.full
    rng = np.random.default_rng(5)
    for seed in range(3):
        q_bar = cc.random_configuration(rod_leg, seed)
        A = ev.jacobian(q_bar)
        h = 1e-6
        for k in range(rod_leg.nv):
            up, down = q_bar.copy(), q_bar.copy()
            up[k] += h
            down[k] -= h
            column = _velocity(tree, ev.full_configuration(down), ev.full_configuration(up), 2 * h)
            assert np.abs(column - A[:, k]).max() <= 1e-7 * max(1.0, np.abs(A).max())
        v_bar = rng.standard_normal(rod_leg.nv)
        rate = (np.array(ev.jacobian(q_bar + h * v_bar)) - np.array(ev.jacobian(q_bar - h * v_bar))) / (2 * h)
        assert np.abs(ev.jacobian_rate(q_bar, v_bar) - rate).max() <= 1e-7 * max(1.0, np.abs(rate).max())


def test_a_loop_through_a_ball_joint_passes_every_check(rod_leg):
    """Pinocchio (j) and MuJoCo (m) on the tree through A, and the identities; Γ̄ follows the
    tree's factorization of the ball's angular velocity (generalized speeds)."""
    rec = verify_robot(rod_leg, trials=8, seed=2)
    assert not [c.key for c in rec.checks if c.passed is False]
    assert {"a", "b", "c", "d", "f2", "g", "j", "m", "n"} <= {c.key for c in rec.checks if c.passed}


def test_a_loop_through_a_ball_joint_batches_as_single_states(rod_leg):
    data = cc.create_data(rod_leg)
    Q = np.stack([cc.random_configuration(rod_leg, k) for k in range(3)])
    V = np.random.default_rng(1).standard_normal((3, rod_leg.nv))
    Ms, _, Cs = cc.coriolis_matrix(rod_leg, Q, V)
    taus = cc.inverse_dynamics(rod_leg, Q, V, V)
    for k in range(3):
        M, _, C = cc.coriolis_matrix(rod_leg, Q[k], V[k], data=data)
        assert np.array_equal(M, Ms[k]) and np.array_equal(C, Cs[k])
        assert np.array_equal(cc.inverse_dynamics(rod_leg, Q[k], V[k], V[k]), taus[k])


def test_a_loop_through_a_ball_joint_converts_to_yaml_and_back(rod_leg, tmp_path, run_cli):
    """convert writes the chosen coordinates (the rod's spin by name) and the ball's guess as a
    quaternion; the YAML robot is the MJCF one."""
    out = tmp_path / "rod_leg.yaml"
    assert run_cli("convert", ROD_LEG, "-o", str(out)).code == 0
    again = cc.load_robot(str(out))
    assert again.config_names == rod_leg.config_names
    q = cc.random_configuration(rod_leg, 7)
    assert np.allclose(cc.mass_matrix(again, q), cc.mass_matrix(rod_leg, q), rtol=0, atol=1e-12)


def test_info_says_which_of_a_ball_joint_s_angles_the_loops_solve(run_cli):
    import json

    r = run_cli("info", ROD_LEG, "--format", "json")
    joints = {j["name"]: j for j in json.loads(r.out)["joints"]}
    assert joints["rod"]["solved_angles"] == ["swing1", "swing2"] and not joints["rod"]["solved_by_loops"]
    assert joints["shin"]["solved_by_loops"] and joints["shin"]["solved_angles"] is None
