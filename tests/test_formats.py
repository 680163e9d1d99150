"""Robots as users have them: xacro (expanded with the xacro package) and MJCF (compiled by MuJoCo)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.engine.coordinates import evaluation
from coriolis_cli.peers import mujoco as mujoco_peer

from .conftest import ROOT, assert_one_line_error

XACRO_DIR = os.path.join(ROOT, "tests", "data", "xacro")
DEMO = os.path.join(XACRO_DIR, "demo_description", "urdf", "robot.urdf.xacro")
RELATIVE = os.path.join(XACRO_DIR, "demo_description", "urdf", "relative.urdf.xacro")  # the same, no $(find)


def _xacro_command(path, *args) -> str:
    """What the xacro command (the package's own entry point) writes for ``path``."""
    exe = shutil.which("xacro", path=os.path.dirname(sys.executable)) or shutil.which("xacro")
    out = subprocess.run([exe, path, *args], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _same_robot(a, b):
    assert a.dof_names == b.dof_names
    rng = np.random.default_rng(0)
    for _ in range(3):
        q, qd = cc.random_configuration(a, rng), rng.normal(size=a.nv)
        for x, y in zip(cc.coriolis_matrix(a, q, qd), cc.coriolis_matrix(b, q, qd)):
            assert np.array_equal(x, y)


@pytest.mark.parametrize("args", [(), ("arm_length:=0.5",), ("arm_length:=0.5", "with_head:=false")])
def test_xacro_equals_what_the_xacro_command_expands(tmp_path, args):
    expanded = tmp_path / "demo.urdf"
    expanded.write_text(_xacro_command(RELATIVE, *args))
    mapping = dict(a.split(":=") for a in args)
    ours = cc.load_robot(DEMO, xacro_args=mapping, package_paths=[XACRO_DIR])
    _same_robot(ours, cc.load_robot(str(expanded)))
    assert ours.nv == (4 if mapping.get("with_head") == "false" else 5)


def test_find_resolves_from_ros_package_path_and_ament_prefix_path(tmp_path, monkeypatch):
    reference = cc.load_robot(DEMO, package_paths=[XACRO_DIR])
    monkeypatch.setenv("ROS_PACKAGE_PATH", XACRO_DIR)
    _same_robot(cc.load_robot(DEMO), reference)
    monkeypatch.delenv("ROS_PACKAGE_PATH")
    share = tmp_path / "install" / "share"
    share.mkdir(parents=True)
    os.symlink(os.path.join(XACRO_DIR, "demo_description"), share / "demo_description")
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path / "install"))
    _same_robot(cc.load_robot(DEMO), reference)


def test_xacro_on_the_command_line(run_cli, tmp_path, monkeypatch):
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    r = run_cli("info", DEMO, "--package-path", XACRO_DIR, "--xacro-arg", "with_head:=false", "--format", "json")
    assert r.code == 0, r
    assert '"nv": 4' in r.out
    assert_one_line_error(run_cli("info", DEMO), "package 'demo_description' not found", "--package-path")
    out = tmp_path / "demo.urdf"
    assert run_cli("convert", DEMO, "--package-path", XACRO_DIR, "-o", out).code == 0
    assert "<xacro:" not in out.read_text() and 'name="left_shoulder"' in out.read_text()
    _same_robot(cc.load_robot(str(out)), cc.load_robot(DEMO, package_paths=[XACRO_DIR]))
    undefined = tmp_path / "undefined.urdf.xacro"
    undefined.write_text(open(RELATIVE).read().replace("$(arg arm_length)", "$(arg reach)"))
    shutil.copy(os.path.join(os.path.dirname(RELATIVE), "arm.xacro"), tmp_path / "arm.xacro")
    assert_one_line_error(run_cli("info", undefined), "xacro argument 'reach' has no value", "--xacro-arg reach:=VALUE")
    unexpanded = tmp_path / "raw.urdf"
    unexpanded.write_text(open(RELATIVE).read())
    assert_one_line_error(run_cli("info", unexpanded), "needs expanding", "xacro")


def test_xacro_piped_into_standard_input(run_cli, monkeypatch):
    import io

    text = _xacro_command(RELATIVE, "arm_length:=0.5")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    r = run_cli("info", "-", "--format", "json")
    assert r.code == 0 and '"nv": 5' in r.out, r
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(open(RELATIVE, "rb").read())))
    assert_one_line_error(run_cli("info", "-"), "needs expanding", "xacro robot.xacro | coriolis info -")


# ---- MJCF ------------------------------------------------------------------------------------------------
def _gymnasium_models():
    try:
        import gymnasium
    except ImportError:
        return []
    folder = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets")
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".xml")) if os.path.isdir(folder) else []


def _needs_mujoco():
    pytest.importorskip("mujoco", reason="mujoco is not installed (pip install 'coriolis-cli[mujoco]')")


# Written to exercise what gymnasium's models do not: balls, several joints in one body with
# their own anchors, ref, a slide, two free bodies in one world, armature and an unusual gravity.
HANDMADE = """<mujoco model="handmade">
  <option gravity="0.3 -0.2 -9.7"/>
  <worldbody>
    <body name="base" pos="0.1 0.2 0.5" quat="0.9 0.1 0.3 0.2">
      <joint name="yaw" type="hinge" axis="0 0 1" pos="0 0 0.05" ref="0.3" armature="0.02"/>
      <joint name="pitch" type="hinge" axis="0 1 0" pos="0.02 0 0.1" armature="0.01"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04" mass="1.5"/>
      <body name="upper" pos="0.3 0 0" euler="10 20 30">
        <joint name="shoulder" type="ball" pos="0.01 0.02 0" armature="0.005"/>
        <geom type="box" size="0.12 0.03 0.02" pos="0.12 0 0" mass="0.8"/>
        <body name="slider" pos="0.25 0 0">
          <joint name="slide" type="slide" axis="1 1 0" ref="0.05" armature="0.3"/>
          <geom type="sphere" size="0.05" pos="0.02 0.01 0" mass="0.4"/>
        </body>
      </body>
    </body>
    <body name="box" pos="1 0 1"><freejoint name="box_free"/>
      <inertial pos="0.01 0.02 0.03" mass="2" fullinertia="0.02 0.03 0.04 0.001 0.002 0.003"/></body>
    <body name="ball" pos="-1 0 1"><freejoint name="ball_free"/><geom type="sphere" size="0.1" mass="0.5"/></body>
  </worldbody>
</mujoco>
"""


def _against_mujoco(robot, path, trials=3):
    from coriolis_cli.model import mjcf

    m = mjcf.compile_model(path)
    assert robot.nv == m.nv and robot.nq == m.nq
    peer = mujoco_peer.MujocoPeer(robot)
    rng = np.random.default_rng(1)
    for _ in range(trials):
        q, v = cc.random_configuration(robot, rng), rng.normal(size=robot.nv)
        T, Mj, bias, rate = peer.mass_and_bias(q, v)
        M = cc.mass_matrix(robot, q)
        tau = cc.inverse_dynamics(robot, q, v, rate)
        assert np.abs(T.T @ M @ T - Mj).max() <= 1e-10 * np.abs(Mj).max()
        assert np.abs(T.T @ tau - bias).max() <= 1e-10 * max(1.0, np.abs(bias).max())


@pytest.mark.parametrize("path", _gymnasium_models() or ["(gymnasium is not installed)"], ids=os.path.basename)
def test_gymnasium_models_equal_mujoco(path, run_cli):
    _needs_mujoco()
    if not os.path.exists(path):
        pytest.skip("gymnasium is not installed (pip install gymnasium)")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cc.ModelWarning)  # actuators and contacts, left out
        robot = cc.load_robot(path)
    _against_mujoco(robot, path)
    r = run_cli("verify", path, "--trials", "5", "--ref-trials", "3", "--format", "json")
    assert r.code == 0, r
    import json

    checks = {c["key"]: c for c in json.loads(r.out)["robots"][0]["checks"]}
    assert checks["m"]["passed"] is True and checks["j"]["passed"] is True


def test_handmade_mjcf_equals_mujoco(tmp_path, run_cli):
    _needs_mujoco()
    path = tmp_path / "handmade.xml"
    path.write_text(HANDMADE)
    robot = cc.load_robot(str(path))
    assert [b.joint.type for b in robot.bodies] == ["revolute", "revolute", "spherical", "prismatic", "floating", "floating"]
    assert robot.gravity == (0.3, -0.2, -9.7)
    assert robot.bodies[0].joint.armature == (0.02,)
    _against_mujoco(robot, str(path), trials=5)
    r = run_cli("verify", path, "--trials", "5", "--ref-trials", "3")
    assert r.code == 0, r


def test_mjcf_on_standard_input_and_without_mujoco(tmp_path, run_cli, monkeypatch):
    _needs_mujoco()
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(HANDMADE.encode())))
    r = run_cli("info", "-", "--format", "json")
    assert r.code == 0 and '"nv": 18' in r.out, r
    path = tmp_path / "handmade.xml"
    path.write_text(HANDMADE)
    monkeypatch.setitem(sys.modules, "mujoco", None)  # as if it were not installed
    assert_one_line_error(run_cli("info", path), "reading MJCF needs MuJoCo", "pip install")


def test_armature_adds_to_the_diagonal_only(tmp_path):
    """A constant diagonal: M gains it, τ gains a q̈, C, Ṁ and Γ do not change."""
    from .conftest import robot_path

    base = cc.load_robot(robot_path("panda.urdf"))
    desc = base.description
    from dataclasses import replace

    a = np.linspace(0.1, 0.7, 7)
    joints = tuple(replace(j, armature=(float(a[k]),)) for k, j in enumerate(j for j in desc.joints if j.type != "fixed"))
    joints = joints + tuple(j for j in desc.joints if j.type == "fixed")
    from coriolis_cli.model.tree import build_model

    armed = build_model(replace(desc, joints=joints))
    rng = np.random.default_rng(2)
    q, qd, qdd = cc.random_configuration(base, rng), rng.normal(size=7), rng.normal(size=7)
    M0, Md0, C0 = cc.coriolis_matrix(base, q, qd)
    M1, Md1, C1 = cc.coriolis_matrix(armed, q, qd)
    assert np.allclose(M1 - M0, np.diag(a), rtol=0, atol=1e-15) and np.array_equal(C1, C0) and np.array_equal(Md1, Md0)
    assert np.abs(cc.mass_matrix(armed, q) - M1).max() <= 1e-15 * np.abs(M1).max()  # the CRBA in body coordinates
    assert np.allclose(cc.mass_matrix(armed, q) - cc.mass_matrix(base, q), np.diag(a), rtol=0, atol=1e-15)
    assert np.allclose(cc.inverse_dynamics(armed, q, qd, qdd) - cc.inverse_dynamics(base, q, qd, qdd), a * qdd, atol=1e-13)
    assert np.array_equal(cc.christoffel(armed, q), cc.christoffel(base, q))
    tau = cc.inverse_dynamics(armed, q, qd, qdd)
    assert np.allclose(cc.forward_dynamics(armed, q, qd, tau), qdd, atol=1e-10)
    sl = cc.slotine_li(armed, q, qd, qd, qdd)
    assert np.allclose(sl, tau, atol=1e-12)
    Y = cc.regressor(armed, q, qd, qd, qdd)
    assert np.allclose(Y @ cc.inertial_parameters(armed) + a * qdd, sl, atol=1e-12)


COUPLED = """<mujoco model="coupled">
  <worldbody>
    <body name="a" pos="0 0 1">
      <joint name="drive" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03" mass="1"/>
      <body name="b" pos="0.4 0 0">
        <joint name="follow" type="hinge" axis="0 1 0" ref="0.2"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="0.6"/>
        <body name="c" pos="0.3 0 0">
          <joint name="wrist" type="hinge" axis="1 0 0"/>
          <geom type="box" size="0.05 0.04 0.03" pos="0.05 0 0" mass="0.3"/>
        </body>
      </body>
    </body>
  </worldbody>
  <equality><joint joint1="follow" joint2="drive" polycoef="0.1 0.5 0.8 -0.3 0"/></equality>
</mujoco>
"""


def test_a_curved_coupling_flat_at_the_neutral_pose_still_relates_the_branches():
    """q3 = 0.5 q1² couples two branches, and its slope is zero at q1 = 0. The reduced DoF are
    related (M̄_13 ≠ 0 elsewhere), which the relation pattern must say for every q̄, not only where
    it was once sampled: a pattern read off A at the neutral pose made check f2 fail (4.14)."""
    _needs_mujoco()
    from coriolis_cli.checks.verify import verify_robot

    path = os.path.join(os.path.dirname(__file__), "data", "mjcf", "curved_mimic_across_branches.xml")
    robot = cc.load_robot(path, mimic="enforce")
    assert robot.dof_related.all()
    rec = verify_robot(robot, trials=5, ref_trials=2, seed=0)
    assert [c.key for c in rec.checks if c.passed is False] == []


def test_a_polynomial_joint_coupling_is_a_curved_change_of_coordinates(tmp_path, run_cli):
    """MuJoCo's <equality><joint polycoef>: with --mimic enforce, q_follow = 0.1 + 0.5 x + 0.8 x² − 0.3 x³
    of the drive's x, so A depends on q̄ and Ȧ ≠ 0; verify's finite-difference and reduced-RNEA
    checks hold C̄ = AᵀCA + AᵀMȦ, and Pinocchio's tree carried by A agrees."""
    _needs_mujoco()
    import json
    import warnings

    path = tmp_path / "coupled.xml"
    path.write_text(COUPLED)
    with pytest.warns(cc.ModelWarning, match="1 joint coupling"):
        r = cc.load_robot(str(path), mimic="enforce")
    assert r.dof_names == ("drive", "wrist")
    qbar, vbar = np.array([0.7, -0.4]), np.array([1.3, 0.5])
    x = 0.7
    assert evaluation(r).full_configuration(qbar)[1] == pytest.approx(0.1 + 0.5 * x + 0.8 * x**2 - 0.3 * x**3, abs=1e-15)
    Adot = evaluation(r).jacobian_rate(qbar, vbar)
    assert Adot[1, 0] == pytest.approx((1.6 - 1.8 * x) * 1.3, abs=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cc.ModelWarning)
        v = run_cli("verify", path, "--mimic", "enforce", "--trials", "20", "--format", "json")
    assert v.code == 0, v
    checks = {c["key"]: c for c in json.loads(v.out)["robots"][0]["checks"]}
    for key in ("a", "b", "c", "d", "e", "j", "l"):
        assert checks[key]["passed"] is True, (key, checks[key])
    with pytest.warns(cc.ModelWarning):
        independent = cc.load_robot(str(path))
    assert independent.nv == 3  # loaded as MuJoCo would without the equality, as URDF's mimic is


def test_substitutions_in_comments_and_plugins_are_not_xacro(tmp_path):
    """Expanded URDFs keep ${...} in commented-out blocks and plugins keep $(arg ...) in their text
    (TALOS, TIAGo, PR2 and 15 more of example-robot-data do): only what the dynamics reads counts."""
    text = open(os.path.join(ROOT, "robots", "panda.urdf")).read().replace(
        "</robot>", '<!-- <safety_controller soft_lower_limit="${-15.0 * deg_to_rad}"/> -->'
                    '<gazebo><plugin name="p"><robotNamespace>$(arg ns)</robotNamespace></plugin></gazebo></robot>')
    path = tmp_path / "expanded.urdf"
    path.write_text(text)
    assert cc.load_robot(str(path)).nv == 7
    path.write_text(text.replace('effort="87.0"', 'effort="${87}"', 1))
    with pytest.raises(cc.ModelError, match="needs expanding"):
        cc.load_robot(str(path))


def test_a_model_s_own_gravity_reaches_every_call(tmp_path):
    """MJCF's <option gravity>: the control loop's fast entry, which compiles standard gravity in,
    must not serve such a robot; every call uses the model's gravity."""
    _needs_mujoco()
    path = tmp_path / "moon.xml"
    path.write_text(COUPLED.replace('<mujoco model="coupled">', '<mujoco model="moon"><option gravity="0.4 0 -1.62"/>')
                    .split("<equality>")[0] + "</mujoco>")
    r = cc.load_robot(str(path))
    assert r.gravity == (0.4, 0.0, -1.62)
    data = cc.create_data(r)
    q, qd, qdd = np.array([0.3, -0.2, 0.5]), np.array([0.7, -1.1, 0.4]), np.array([0.2, 0.1, -0.3])
    tau = cc.inverse_dynamics(r, q, qd, qdd)
    assert np.allclose(cc.slotine_li(r, q, qd, qd, qdd, data=data), tau, rtol=1e-12, atol=1e-12)
    assert np.allclose(cc.gravity_vector(r, q), cc.inverse_dynamics(r, q, 0 * qd, 0 * qdd), atol=1e-14)
    _against_mujoco(r, str(path))


def test_the_bundled_robots_parsed_entries_ship_fresh():
    """The parsed-URDF cache entries of the bundled robots (robots/parsed, installed with the
    package) exist for every bundled URDF as it reads now and give what parsing gives, so that a
    first run on a bundled robot parses nothing (python robots/build_bundled.py --parsed)."""
    import glob
    import json

    from coriolis_cli import __version__
    from coriolis_cli.model.description import description_to_dict
    from coriolis_cli.model.loader import SHIPPED_CACHE, _read_cache_entry, cache_key
    from coriolis_cli.model.urdf import parse_urdf

    from .conftest import BUNDLED

    keys = set()
    for path in BUNDLED:
        text = open(path, encoding="utf-8").read()
        key = cache_key(text, __version__)
        keys.add(key + ".json")
        payload = _read_cache_entry(os.path.join(SHIPPED_CACHE, key + ".json"), key)
        assert payload is not None, f"{path}: no parsed entry (python robots/build_bundled.py --parsed)"
        assert json.dumps(payload, sort_keys=True) == json.dumps(description_to_dict(parse_urdf(text, path)), sort_keys=True)
    assert {os.path.basename(p) for p in glob.glob(os.path.join(SHIPPED_CACHE, "*.json"))} == keys
