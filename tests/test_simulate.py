"""`coriolis simulate`: V never rises with an admissible C, rises with C + S; outputs and refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.errors import StateError
from coriolis_cli.control.simulation import simulate

from .conftest import assert_one_line_error, robot_path, stderr_lines


@pytest.fixture(scope="module")
def panda():
    return cc.load_robot(robot_path("panda.urdf"))


@pytest.mark.parametrize("controller", ["passivity", "slotine-li"])
@pytest.mark.parametrize("factorization", ["christoffel", "featherstone"])
def test_v_never_rises_with_an_admissible_factorization(panda, controller, factorization):
    res = simulate(panda, controller, factorization, duration=0.3)
    assert res.largest_rise_of_V < 1e-10  # RK4's error at a 1 ms step, relative to V(0)
    assert res.V[-1] < res.V[0]
    assert res.tracking_error[-1] < res.tracking_error[0]


def test_v_rises_with_c_plus_s(panda):
    """Same equations of motion (S q̇ = 0), but Ṁ − 2(C + S) is not skew: V rises.

    Where V ends is not asserted: this loop amplifies round-off. Two forward dynamics that agree
    to 7e-14 on every call (LᵀDL and the articulated-body algorithm) end this run at V = 12.0 and
    1.7 from V = 3.4, both with rises of 0.11-0.12."""
    res = simulate(panda, "passivity", "nonadmissible", duration=0.5)
    assert res.largest_rise_of_V > 1e-3


def test_passivity_with_true_parameters_converges_and_adaptation_moves_estimates(panda):
    exact = simulate(panda, "passivity", "christoffel", duration=1.0)
    assert exact.tracking_error[-1] < 5e-3 * exact.tracking_error[0]  # e decays at about λ = 10 1/s once s is small
    adaptive = simulate(panda, "slotine-li", "christoffel", duration=0.3)
    assert adaptive.parameter_error[0] == pytest.approx(0.5)
    assert not np.array_equal(adaptive.theta_hat, 0.5 * adaptive.theta)


def test_a_20_link_chain_tracks_at_the_default_rate():
    """K_D = κ M(q) damps every mode at κ all along the run. With the constant κ M(q_d(0)) an
    eigenvalue of M⁻¹K_D reached 5,900 1/s on this chain, and the run diverged at t = 0.47 s."""
    chain = cc.load_robot(robot_path("serial20.urdf"))
    res = simulate(chain, "passivity", "christoffel", duration=1.0)
    assert res.largest_rise_of_V < 1e-10
    assert res.tracking_error[-1] < 1e-3 * res.tracking_error[0]  # 0.45 → 6.7e-5 rad measured


def test_closed_loop_robots_simulate(tmp_path):
    """A reduced robot (the knee linkage) runs through the same path: M̄, C̄, ḡ carried by A."""
    knee = cc.load_robot(robot_path("knee_leg.yaml"))
    res = simulate(knee, "passivity", "christoffel", duration=0.2, rate=500)
    assert res.largest_rise_of_V < 1e-9 and res.V[-1] < res.V[0]


def test_cli_json_plot_and_refusals(tmp_path, run_cli):
    out, png = tmp_path / "run.json", tmp_path / "run.png"
    r = run_cli("simulate", robot_path("planar_2link.urdf"), "--duration", "0.2", "-o", out, "--plot", png)
    assert r.code == 0, r
    rec = json.loads(out.read_text())
    assert {"t", "tracking_error", "V", "theta_hat", "settings"} <= set(rec)
    assert len(rec["t"]) == len(rec["V"]) == 201 and rec["settings"]["controller"] == "slotine-li"
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width >= 600 and height >= 600
    assert_one_line_error(run_cli("simulate", robot_path("panda.urdf"), "--floating-base"), "--floating-base")
    assert_one_line_error(run_cli("simulate", robot_path("panda.urdf"), "--gains", "1"), "--gains")
    assert_one_line_error(run_cli("simulate", robot_path("panda.urdf"), "-o", tmp_path / "x.csv"),
                          "this command writes a table (.txt), JSON or NPZ, not csv")
    assert_one_line_error(run_cli("simulate", robot_path("panda.urdf"), "--duration", "nan"), "duration must be")
    assert_one_line_error(run_cli("simulate", robot_path("panda.urdf"), "--duration", "1e-9"), "shorter than one step")
    assert_one_line_error(run_cli("simulate", robot_path("panda.urdf"), "--adaptation-gain", "inf"), "positive and finite")
    with pytest.raises(StateError, match="controller must be"):
        simulate(cc.load_robot(robot_path("planar_2link.urdf")), "pid")


# ---- robots as users bring them ------------------------------------------------------------------
def _arm_with_fingers(finger_mass: float, finger_inertia: float, n_fingers: int = 4) -> str:
    """A 3 kg two-link arm carrying a palm and light two-joint fingers (1e-3 kg, 1e-7 kg m²: the
    parameters that made one unit adaptation gain diverge within milliseconds)."""
    def inertial(m, i, x="0.1 0 0"):
        if m == 0.0:
            return ""
        return (f'<inertial><origin xyz="{x}"/><mass value="{m!r}"/><inertia ixx="{i!r}" ixy="0" ixz="0" iyy="{i!r}" '
                f'iyz="0" izz="{i!r}"/></inertial>')

    links = ['<link name="base"/>', f'<link name="upper">{inertial(2.0, 0.02, "0.2 0 0")}</link>',
             f'<link name="fore">{inertial(1.0, 0.01, "0.2 0 0")}</link>', f'<link name="palm">{inertial(0.3, 3e-4, "0.03 0 0")}</link>']
    joints = ['<joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><axis xyz="0 1 0"/>'
              '<limit lower="-2" upper="2" effort="50" velocity="3"/></joint>',
              '<joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/><origin xyz="0.4 0 0"/>'
              '<axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="50" velocity="3"/></joint>',
              '<joint name="wrist" type="revolute"><parent link="fore"/><child link="palm"/><origin xyz="0.4 0 0"/>'
              '<axis xyz="1 0 0"/><limit lower="-2" upper="2" effort="50" velocity="3"/></joint>']
    for f in range(n_fingers):
        for k in (1, 2):
            parent = "palm" if k == 1 else f"finger_{f}_1"
            links.append(f'<link name="finger_{f}_{k}">{inertial(finger_mass, finger_inertia, "0.01 0 0")}</link>')
            joints.append(f'<joint name="finger_{f}_{k}" type="revolute"><parent link="{parent}"/>'
                          f'<child link="finger_{f}_{k}"/><origin xyz="{0.06 if k == 1 else 0.02} {0.02 * f - 0.03} 0"/>'
                          '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="3"/></joint>')
    return '<robot name="hand_arm">' + "".join(links + joints) + "</robot>"


def test_light_fingers_track_with_the_default_adaptation(tmp_path):
    """Γ scaled to the robot: the fingers adapt on their own scale, the 2 kg arm on its own."""
    path = tmp_path / "arm.urdf"
    path.write_text(_arm_with_fingers(1e-3, 1e-7))
    res = simulate(cc.load_robot(str(path)), duration=2.0)
    assert not res.diverged
    assert res.largest_rise_of_V < 1e-10 and res.V[-1] < 0.5 * res.V[0]
    assert res.tracking_error.max() < 3 * res.tracking_error[0]  # bounded all along (0.99 at t = 1.17 s)
    assert res.tracking_error[-1] < 0.3 * res.tracking_error[0]  # 0.33 → 0.072 measured


def test_massless_fingers_are_a_typed_error_naming_the_lock(tmp_path, run_cli):
    path = tmp_path / "arm.urdf"
    path.write_text(_arm_with_fingers(0.0, 0.0))
    with pytest.warns(cc.ModelWarning, match="8 joints move no mass"):
        robot = cc.load_robot(str(path))
    n = robot.nv
    with pytest.raises(cc.SingularMassMatrixError, match="move no mass") as caught:
        cc.forward_dynamics(robot, np.zeros(n), np.zeros(n), np.zeros(n))
    assert set(caught.value.joints) == {f"finger_{f}_{k}" for f in range(4) for k in (1, 2)}
    assert isinstance(caught.value, cc.InputError)
    with pytest.raises(cc.SingularMassMatrixError):  # a batch too, never a ZeroDivisionError
        cc.forward_dynamics(robot, np.zeros((3, n)), np.zeros((3, n)), np.zeros((3, n)))
    r = run_cli("simulate", path, "--duration", "0.05")
    assert_one_line_error(r, "move no mass")
    assert r.err.strip().endswith("--lock 'finger_*')"), r.err
    r = run_cli("simulate", path, "--duration", "0.05", "--lock", "finger_*")
    assert r.code == 0, r


GIMBAL = """<robot name="gimbal">
  <link name="base"/><link name="ring1"/><link name="ring2"/>
  <link name="head"><inertial><origin xyz="0.1 0.05 0.02"/><mass value="1.5"/>
    <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.005" iyz="0" izz="0.006"/></inertial></link>
  <joint name="yaw" type="revolute"><parent link="base"/><child link="ring1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="5" velocity="2"/></joint>
  <joint name="pitch" type="revolute"><parent link="ring1"/><child link="ring2"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="5" velocity="2"/></joint>
  <joint name="roll" type="revolute"><parent link="ring2"/><child link="head"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="5" velocity="2"/></joint>
</robot>"""


def test_m_singular_at_some_configurations_names_the_joint_to_lock(tmp_path, run_cli):
    """Three axes through one point with massless rings between them (a neck): where the middle
    joint is 0 the outer two make the same motion and M is singular. The reference passes there;
    the joint to lock is named before running."""
    path = tmp_path / "gimbal.urdf"
    path.write_text(GIMBAL)
    robot = cc.load_robot(str(path))
    with pytest.raises(cc.SingularMassMatrixError, match="'roll'"):
        simulate(robot, duration=0.05)
    r = run_cli("simulate", path, "--duration", "0.05")
    assert_one_line_error(r, "aligned axes")
    assert r.err.strip().endswith("--lock roll)")
    assert run_cli("simulate", path, "--duration", "0.05", "--lock", "roll").code == 0


def test_spherical_planar_and_free_joints_track_on_their_manifold(tmp_path):
    from .test_real_robots import MIXED, SLED, SPHERICAL_YAML

    (tmp_path / "sph.yaml").write_text(SPHERICAL_YAML.replace("joints:", SLED.rstrip("\n") + "\njoints:"))
    (tmp_path / "mixed.urdf").write_text(MIXED)
    for name in ("sph.yaml", "mixed.urdf"):
        robot = cc.load_robot(str(tmp_path / name))
        assert not robot.velocities_are_coordinates
        exact = simulate(robot, "passivity", duration=1.0)
        assert not exact.diverged
        assert exact.largest_rise_of_V < 1e-10, name  # q̈_r = d/dt q̇_r on SO(3) too
        assert exact.tracking_error[-1] < 5e-3 * exact.tracking_error[0], name
        adaptive = simulate(robot, "slotine-li", duration=0.5)
        assert adaptive.largest_rise_of_V < 1e-10 and adaptive.V[-1] < adaptive.V[0], name
    with pytest.raises(StateError, match="1-DoF coordinates only"):
        simulate(robot, "computed-torque", duration=0.1)


def test_the_reference_terms_are_exact_derivatives_on_so3(tmp_path):
    """q̈_r = d/dt q̇_r along the motion (what makes V̇ = −sᵀK_D s): central differences of q̇_r
    along a trajectory q(t) = q₀ ⊕ t ν agree with q̈_r computed at q̇ = ν."""
    from coriolis_cli.control.simulation import Reference

    from .test_real_robots import SLED, SPHERICAL_YAML

    (tmp_path / "sph.yaml").write_text(SPHERICAL_YAML.replace("joints:", SLED.rstrip("\n") + "\njoints:"))
    robot = cc.load_robot(str(tmp_path / "sph.yaml"))
    ref = Reference(robot, 10.0)
    rng = np.random.default_rng(0)
    for _ in range(5):  # within 1.5 rad of the reference: the log map is smooth there
        t0, nu = rng.uniform(0, 2), rng.normal(size=robot.nv)
        q0 = ref.integrate(ref.configuration(t0), rng.uniform(-0.8, 0.8, robot.nv))
        h = 1e-5
        plus = ref.tracking(t0 + h, ref.integrate(q0, h * nu), nu)[1]
        minus = ref.tracking(t0 - h, ref.integrate(q0, -h * nu), nu)[1]
        exact = ref.tracking(t0, q0, nu)[2]
        assert np.abs((plus - minus) / (2 * h) - exact).max() < 1e-6 * max(1.0, np.abs(exact).max())


def test_a_divergence_is_a_result(tmp_path, run_cli):
    """An adaptation mode just inside RK4's linear limit (γ = 900: 2,400 1/s at 1 kHz) that the
    nonlinear loop pushes past it: the run stops at the first sample that is not finite, reports
    what it has (table, JSON marked as diverged, plot) and exits 1 (0.798 s measured)."""
    out, png = tmp_path / "run.json", tmp_path / "run.png"
    args = ("simulate", robot_path("panda.urdf"), "--adaptation-gain", "900", "--duration", "1")
    r = run_cli(*args, "-o", out, "--plot", png)
    assert r.code == 1, r
    rec = json.loads(out.read_text())
    assert rec["diverged"] is True and 0 < rec["diverged_at_s"] < 1
    assert len(rec["t"]) == len(rec["V"]) and rec["t"][-1] < rec["diverged_at_s"]
    assert all(np.isfinite(rec["V"]))
    assert png.read_bytes()[:4] == b"\x89PNG"
    lines = stderr_lines(r.err)
    assert len(lines) == 3 and lines[2].startswith("diverged: the control torque is not finite at t = 0.7")
    r = run_cli(*args)
    assert r.code == 1 and "DIVERGED" in r.out


def test_a_rate_too_low_for_the_gains_is_refused_before_running(run_cli):
    r = run_cli("simulate", robot_path("panda.urdf"), "--gains", "10,5000")
    assert_one_line_error(r, "too low for these gains", "fastest mode is 20,000 1/s", "--rate 8000")
    with pytest.raises(StateError, match="too low"):
        simulate(cc.load_robot(robot_path("planar_2link.urdf")), adaptation_gain=1e6, duration=0.1)


def test_simulate_offers_only_options_that_run(run_cli):
    r = run_cli("simulate", "--help")
    assert r.code == 0 and "--floating-base" not in r.out and "--lock" in r.out
    with pytest.raises(StateError, match="fixed-base"):
        simulate(cc.load_robot(robot_path("quadruped.urdf"), floating_base=True), duration=0.1)


@pytest.mark.parametrize("name, lock", [
    ("talos_data/robots/talos_full_v2.urdf", None),
    ("allegro_hand_description/urdf/allegro_right_hand.urdf", None),
    ("romeo_description/urdf/romeo.urdf", ["LFinger*", "LHand", "LThumb*", "RFinger*", "RHand", "RThumb*"]),
    ("icub_description/robots/icub.urdf", ["neck_yaw"])])
def test_real_robots_simulate_with_their_defaults(run_cli, name, lock):
    """example-robot-data's humanoids and hand: the defaults run, or the one-line refusal names
    the --lock options that make them run. Their files' friction reaches the plant by implicit
    Euler: TALOS's grippers (b + c/0.02 = 51 N·m·s over a small inertia, a mode of 287,000 1/s)
    no longer blow up RK4 at 1 kHz (before: DIVERGED at t = 0.005 s). The controller knows that
    friction from the same file and compensates it at q̇_r, which keeps V from rising; kept from
    it (--friction-unknown), the Allegro hand's 5-10 N·m of dry friction on each finger joint
    makes the adaptation drift until the run diverges at 0.69 s, a result (exit 1), not an error."""
    from .test_lock import example_robot

    path = example_robot(name)
    args = [a for p in lock or () for a in ("--lock", p)]
    if lock is not None:
        r = run_cli("simulate", path, "--duration", "0.2")
        assert r.code == 2 and r.err.strip().endswith(" ".join(f"--lock {p!r}" if "*" in p else f"--lock {p}"
                                                               for p in lock) + ")"), r.err
    hand = "allegro" in name
    r = run_cli("simulate", path, "--duration", "1" if hand else "0.2", "--format", "json", *args)
    assert r.code == 0, r
    rec = json.loads(r.out)
    assert np.all(np.isfinite(rec["V"])) and rec["largest_rise_of_V"] < 1e-10 and rec["V"][-1] < rec["V"][0]
    if hand:
        r = run_cli("simulate", path, "--duration", "1", "--format", "json", "--friction-unknown")
        assert r.code == 1 and "compensat" not in r.err and "does not know it" in r.err, r
    r = run_cli("simulate", path, "--duration", "0.2", "--format", "json", "--no-friction", *args)
    assert r.code == 0, r
    rec = json.loads(r.out)
    assert rec["largest_rise_of_V"] < 1e-10 and rec["V"][-1] < rec["V"][0]




def test_a_hint_naming_an_option_the_command_lacks_is_left_out(tmp_path, run_cli):
    """The loader's 'pass --floating-base' for a robot with no movable joint (example-robot-data's
    quadrotor) fits compute, which has the option, not simulate, which takes fixed bases only."""
    from .conftest import assert_one_line_error

    path = tmp_path / "drone.urdf"
    path.write_text('<robot name="drone"><link name="base"><inertial><mass value="1"/><inertia ixx="1" ixy="0" '
                    'ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link></robot>')
    assert_one_line_error(run_cli("compute", path), "no movable joints", "(pass --floating-base)")
    r = run_cli("simulate", path)
    assert_one_line_error(r, "no movable joints")
    assert "--floating-base" not in r.err
