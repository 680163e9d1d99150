"""The fourth hostile corpus (xacro, MJCF, codegen, --lock, robot names, standard input, convert):
each class ends in a correct result or one line with exit 2, never a traceback, exit 3, a hang or
a silently changed number."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import coriolis_cli as cc

from .conftest import assert_one_line_error, robot_path, stderr_lines

pytest.importorskip("mujoco", reason="mujoco is not installed (pip install 'coriolis-cli[mujoco]')")


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


# ---- xacro ----------------------------------------------------------------------------------------
ARM_XACRO = """<?xml version="1.0"?>
<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:include filename="$(find arm_parts)/link.xacro"/>
  <link name="base"/>
  <xacro:part name="upper" parent="base"/>
</robot>
"""
PART_XACRO = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:macro name="part" params="name parent">
    <link name="${name}"><inertial><mass value="1"/><origin xyz="0.1 0 0"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
    <joint name="${name}_joint" type="continuous"><parent link="${parent}"/><child link="${name}"/><axis xyz="0 0 1"/></joint>
  </xacro:macro>
</robot>
"""


def test_package_path_finds_a_package_by_its_manifest_name(tmp_path, run_cli):
    """A workspace whose folder is not named as the package (ws/src/parts_pkg holds arm_parts)."""
    _write(tmp_path, "ws/src/parts_pkg/package.xml", "<package><name>arm_parts</name></package>")
    _write(tmp_path, "ws/src/parts_pkg/link.xacro", PART_XACRO)
    robot = _write(tmp_path, "arm.urdf.xacro", ARM_XACRO)
    r = run_cli("info", robot, "--package-path", str(tmp_path / "ws" / "src"), "--format", "json")
    assert r.code == 0 and '"nv": 1' in r.out, r


def test_xacro_bombs_are_bounded(tmp_path, run_cli, monkeypatch):
    monkeypatch.setenv("CORIOLIS_XACRO_SECONDS", "2")
    power = _write(tmp_path, "power.urdf.xacro", """<?xml version="1.0"?>
<robot name="b" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:property name="big" value="${9**9**9}"/>
<link name="base"><inertial><mass value="${big}"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
</robot>""")
    assert_one_line_error(run_cli("info", power), "xacro ran out of its time", "CORIOLIS_XACRO_SECONDS")


def test_xacro_arguments_for_a_plain_urdf_are_said_to_be_ignored(run_cli):
    r = run_cli("info", robot_path("planar_2link.urdf"), "--xacro-arg", "length:=2")
    assert r.code == 0 and "--xacro-arg (length) does not apply" in r.err, r


# ---- MJCF ---------------------------------------------------------------------------------------------
def test_mjcf_without_joints_gives_one_consistent_hint(tmp_path, run_cli):
    path = _write(tmp_path, "still.xml", '<mujoco><worldbody><body><geom type="sphere" size="1" mass="1" '
                  'contype="0" conaffinity="0"/></body></worldbody></mujoco>')
    assert_one_line_error(run_cli("info", path), "has no joints", "<freejoint/>")
    r = run_cli("info", path)
    assert "--floating-base" not in r.err


def test_mjcf_replicate_bomb_negative_armature_and_bad_polycoef(tmp_path, run_cli):
    body = '<body><joint/><geom type="sphere" size="0.01" mass="1" contype="0" conaffinity="0"/></body>'
    bomb = _write(tmp_path, "bomb.xml", '<mujoco><worldbody>' + '<replicate count="1000" offset="0 0 0.1">' * 3 + body
                  + "</replicate>" * 3 + "</worldbody></mujoco>")
    assert_one_line_error(run_cli("info", bomb), "make 1,000,000,000 bodies", "CORIOLIS_MAX_BODIES")
    negative = _write(tmp_path, "negative.xml", '<mujoco><worldbody><body><joint name="a" armature="-0.1"/>'
                      '<geom type="sphere" size="0.1" mass="1" contype="0" conaffinity="0"/></body></worldbody></mujoco>')
    r = run_cli("info", negative)
    assert r.code == 2 and "armature -0.1 must be finite and not negative" in r.err, r
    nan = _write(tmp_path, "nan.xml", '<mujoco><worldbody><body><joint name="a"/><geom type="sphere" size="0.1" mass="1" '
                 'contype="0" conaffinity="0"/><body pos="0.2 0 0"><joint name="b"/><geom type="sphere" size="0.1" '
                 'mass="1" contype="0" conaffinity="0"/></body></body></worldbody>'
                 '<equality><joint joint1="b" joint2="a" polycoef="0 nan 0 0 0"/></equality></mujoco>')
    r = run_cli("info", nan)
    assert r.code == 2 and "polynomial coefficients 0, nan, 0, 0, 0" in r.err, r


# ---- codegen ------------------------------------------------------------------------------------------
def test_codegen_names_outputs_and_size(tmp_path, run_cli):
    pytest.importorskip("casadi", reason="casadi is not installed (pip install 'coriolis-cli[codegen]')")
    assert_one_line_error(run_cli("codegen", "planar_2link", "-o", tmp_path / "a", "--prefix", "_x"), "--prefix '_x'")
    evil = _write(tmp_path, "evil.yaml", "name: ../../_evil\nlinks:\n  - {name: a}\n  - {name: b, mass: 1, com: [0.3, 0, 0], "
                  "inertia: [0.01, 0, 0, 0.01, 0, 0.01]}\njoints:\n  - {name: j, type: revolute, parent: a, child: b, "
                  "axis: [0, 1, 0]}\n")
    r = run_cli("codegen", evil, "-o", tmp_path / "evil", "--what", "M")
    assert r.code == 0 and sorted(os.listdir(tmp_path / "evil")) == ["evil.c", "evil.h"], r
    assert_one_line_error(run_cli("codegen", "planar_2link", "-o", "", "--what", "M"), "-o: give the directory")
    os.symlink(tmp_path / "nowhere" / "x", tmp_path / "dangling")
    assert_one_line_error(run_cli("codegen", "planar_2link", "-o", tmp_path / "dangling", "--what", "M"), "symbolic link")
    assert_one_line_error(run_cli("codegen", "serial:150", "-o", tmp_path / "big"), "would take about", "Leave Gamma out")
    assert not (tmp_path / "big").exists()


def test_codegen_of_a_pendulum_compiles_without_a_warning(tmp_path, run_cli):
    """Γ of a 1-DoF pendulum reads no argument: no unused-parameter warning under -Wextra."""
    pytest.importorskip("casadi", reason="casadi is not installed (pip install 'coriolis-cli[codegen]')")
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    pendulum = _write(tmp_path, "pend.yaml", "name: pend\nlinks:\n  - {name: a}\n  - {name: b, mass: 1, com: [0.3, 0, 0], "
                      "inertia: [0.01, 0, 0, 0.01, 0, 0.01]}\njoints:\n  - {name: j, type: revolute, parent: a, child: b, "
                      "axis: [0, 1, 0]}\n")
    assert run_cli("codegen", pendulum, "-o", tmp_path / "gen").code == 0
    out = subprocess.run(["cc", "-std=c99", "-O0", "-Wall", "-Wextra", "-pedantic", "-c", str(tmp_path / "gen" / "pend.c"),
                          "-o", str(tmp_path / "pend.o")], capture_output=True, text=True)
    assert out.returncode == 0 and "warning" not in out.stderr, out.stderr


# ---- --lock -------------------------------------------------------------------------------------------
def test_lock_every_joint_the_floating_base_and_names_with_glob_characters(tmp_path, run_cli):
    r = run_cli("info", "panda", "--floating-base", "--lock", "*", "--format", "json")
    assert r.code == 0 and "every joint of robot 'panda' is locked (7)" in r.err and '"nv": 6' in r.out, r
    assert_one_line_error(run_cli("info", "panda", "--lock", "*"), "every joint is locked (7")
    r = run_cli("info", "panda", "--floating-base", "--lock", "base", "--format", "json")
    assert r.code == 0 and '"nv": 7' in r.out, r
    text = open(robot_path("planar_2link.urdf")).read().replace('name="joint1"', 'name="hand[0]"')
    text = text.replace('joint="joint1"', 'joint="hand[0]"')
    path = _write(tmp_path, "hand.urdf", text)
    assert cc.load_robot(path, lock=["hand[0]"]).nv == 1
    assert_one_line_error(run_cli("info", "panda", "--lock", "hand[0]"), "write [[] and []]")


# ---- robots by name -----------------------------------------------------------------------------------
def test_robot_names_nearly_right_files_and_folders_of_that_name(tmp_path, run_cli, monkeypatch):
    for wrong, right in (("pandaa", "panda"), ("PANDA", "panda"), ("humanoi", "humanoid")):
        assert_one_line_error(run_cli("info", wrong), f"did you mean '{right}'?")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "panda").mkdir()
    r = run_cli("info", "panda", "--format", "json")
    assert r.code == 0 and '"nv": 7' in r.out, r
    shutil.copy(robot_path("planar_2link.urdf"), tmp_path / "humanoid")
    r = run_cli("info", "humanoid", "--format", "json")
    assert r.code == 0 and '"nv": 2' in r.out and "not the bundled robot of that name" in r.err, r


# ---- convert ------------------------------------------------------------------------------------------
PENDULUM = """name: pend
links:
  - {name: a}
  - name: b
    mass: 0.02
    com: [0.3, 0, 0]
    inertia: [0.001, 0, 0, 0.001, 0, 0.001]
    urdf: [EXTRA]
joints:
  - {name: j, type: revolute, parent: a, child: b, axis: [0, 1, 0]}
"""


@pytest.mark.parametrize("extra,message", [
    ('"<inertial><mass value=\\"65\\"/></inertial>"', "is a <inertial>, which the dynamics reads"),
    ('"<visual>' + "<a>" * 1000 + "</a>" * 1000 + '</visual>"', "nests 1001 deep"),
])
def test_yaml_extras_cannot_change_the_dynamics(tmp_path, run_cli, extra, message):
    path = _write(tmp_path, "pend.yaml", PENDULUM.replace("EXTRA", extra))
    assert_one_line_error(run_cli("convert", path, "-o", tmp_path / "out.urdf"), message)
    assert not (tmp_path / "out.urdf").exists()
    robot_level = _write(tmp_path, "top.yaml", PENDULUM.replace("    urdf: [EXTRA]\n", "") +
                         'urdf: ["<joint name=\\"x\\" type=\\"fixed\\"><parent link=\\"a\\"/><child link=\\"b\\"/></joint>"]\n')
    assert_one_line_error(run_cli("info", robot_level), "is a <joint>, which the dynamics reads")


def test_deep_urdf_is_refused_in_one_line(tmp_path, run_cli):
    text = open(robot_path("planar_2link.urdf")).read().replace("</link>", "<visual>" + "<a>" * 3000 + "</a>" * 3000
                                                                    + "</visual></link>", 1)
    assert_one_line_error(run_cli("info", _write(tmp_path, "deep.urdf", text)), "nest 3003 deep")


def test_convert_carries_gravity_and_armature_to_yaml_and_names_them_lost_in_urdf(tmp_path, run_cli):
    moon = _write(tmp_path, "moon.xml", '<mujoco model="moon"><option gravity="0.3 -0.2 -1.77"/><worldbody><body>'
                  '<joint name="a" armature="0.3"/><geom type="sphere" size="0.1" mass="1" pos="0.2 0 0" contype="0" '
                  'conaffinity="0"/></body></worldbody></mujoco>')
    assert run_cli("convert", moon, "-o", tmp_path / "moon.yaml").code == 0
    a, b = cc.load_robot(moon), cc.load_robot(str(tmp_path / "moon.yaml"))
    q = np.array([0.4])
    assert np.array_equal(cc.mass_matrix(a, q), cc.mass_matrix(b, q))
    assert np.array_equal(cc.gravity_vector(a, q), cc.gravity_vector(b, q))
    r = run_cli("convert", moon, "-o", tmp_path / "moon.urdf")
    assert r.code == 0 and "no place for the armature of 1 joint (a) and the gravity (0.3, -0.2, -1.77)" in r.err, r


# ---- standard input, mimic ------------------------------------------------------------------------------
def test_standard_input_twice_and_a_mimic_without_its_joint(tmp_path, run_cli, monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(open(robot_path("planar_2link.urdf"), "rb").read())))
    r = run_cli("verify", "-", "-", "--trials", "2")
    assert r.code == 2 and "read already; give '-' once" in " ".join(stderr_lines(r.err)), r
    text = open(robot_path("gripper.urdf")).read()
    start = text.index("<mimic")
    end = text.index("/>", start) + 2
    path = _write(tmp_path, "nomimic.urdf", text[:start] + '<mimic multiplier="0.9"/>' + text[end:])
    assert_one_line_error(run_cli("info", path), "<mimic> names no joint (the 'joint' attribute is missing)")
