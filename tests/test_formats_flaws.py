"""xacro, MJCF and convert on hostile input (packages found by their manifest, xacro and replicate
bombs, MJCF without joints or with bad armature and polynomials, what URDF cannot hold, extras that
would change the dynamics): a correct result or one line with exit 2, never a traceback, a hang or a
silently changed number."""

from __future__ import annotations

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.peers import pinocchio as pinocchio_peer

from .conftest import assert_one_line_error, robot_path
from .input_helpers import needs_mujoco, write_file

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


@needs_mujoco
def test_package_path_finds_a_package_by_its_manifest_name(tmp_path, run_cli):
    """A workspace whose folder is not named as the package (ws/src/parts_pkg holds arm_parts)."""
    write_file(tmp_path, "ws/src/parts_pkg/package.xml", "<package><name>arm_parts</name></package>")
    write_file(tmp_path, "ws/src/parts_pkg/link.xacro", PART_XACRO)
    robot = write_file(tmp_path, "arm.urdf.xacro", ARM_XACRO)
    r = run_cli("info", robot, "--package-path", str(tmp_path / "ws" / "src"), "--format", "json")
    assert r.code == 0 and '"nv": 1' in r.out, r


@needs_mujoco
def test_xacro_bombs_are_bounded(tmp_path, run_cli, monkeypatch):
    monkeypatch.setenv("CORIOLIS_XACRO_SECONDS", "2")
    power = write_file(tmp_path, "power.urdf.xacro", """<?xml version="1.0"?>
<robot name="b" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:property name="big" value="${9**9**9}"/>
<link name="base"><inertial><mass value="${big}"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
</robot>""")
    bounded = run_cli("info", power)
    assert_one_line_error(bounded, "xacro ran out of its time (2 s)", "CORIOLIS_XACRO_SECONDS")
    # a busy machine can starve the child until the wall clock ends it before its CPU limit: the
    # same cause, the same line, and the same bound (it had 5 s of grace: 35.8 s for "30 s")
    import subprocess

    def starved(args, **kwargs):
        assert kwargs["timeout"] == 2
        raise subprocess.TimeoutExpired(args, kwargs["timeout"])

    monkeypatch.setattr(subprocess, "run", starved)
    assert run_cli("info", power).err == bounded.err


@needs_mujoco
def test_xacro_arguments_for_a_plain_urdf_are_said_to_be_ignored(run_cli):
    r = run_cli("info", robot_path("planar_2link.urdf"), "--xacro-arg", "length:=2")
    assert r.code == 0 and "--xacro-arg (length) does not apply" in r.err, r


# ---- MJCF ---------------------------------------------------------------------------------------------
@needs_mujoco
def test_mjcf_without_joints_gives_one_consistent_hint(tmp_path, run_cli):
    path = write_file(tmp_path, "still.xml", '<mujoco><worldbody><body><geom type="sphere" size="1" mass="1" '
                  'contype="0" conaffinity="0"/></body></worldbody></mujoco>')
    assert_one_line_error(run_cli("info", path), "has no joints", "<freejoint/>")
    r = run_cli("info", path)
    assert "--floating-base" not in r.err


@needs_mujoco
def test_mjcf_replicate_bomb_negative_armature_and_bad_polycoef(tmp_path, run_cli):
    body = '<body><joint/><geom type="sphere" size="0.01" mass="1" contype="0" conaffinity="0"/></body>'
    bomb = write_file(tmp_path, "bomb.xml", '<mujoco><worldbody>' + '<replicate count="1000" offset="0 0 0.1">' * 3 + body
                  + "</replicate>" * 3 + "</worldbody></mujoco>")
    assert_one_line_error(run_cli("info", bomb), "make 1,000,000,000 bodies", "CORIOLIS_MAX_BODIES")
    negative = write_file(tmp_path, "negative.xml", '<mujoco><worldbody><body><joint name="a" armature="-0.1"/>'
                      '<geom type="sphere" size="0.1" mass="1" contype="0" conaffinity="0"/></body></worldbody></mujoco>')
    r = run_cli("info", negative)
    assert r.code == 2 and "armature -0.1 must be finite and not negative" in r.err, r
    nan = write_file(tmp_path, "nan.xml", '<mujoco><worldbody><body><joint name="a"/><geom type="sphere" size="0.1" mass="1" '
                 'contype="0" conaffinity="0"/><body pos="0.2 0 0"><joint name="b"/><geom type="sphere" size="0.1" '
                 'mass="1" contype="0" conaffinity="0"/></body></body></worldbody>'
                 '<equality><joint joint1="b" joint2="a" polycoef="0 nan 0 0 0"/></equality></mujoco>')
    r = run_cli("info", nan)
    assert r.code == 2 and "polynomial coefficients 0, nan, 0, 0, 0" in r.err, r


# ---- convert: what it writes reads back, and nothing it carries changes the dynamics --------------------
def test_convert_refuses_what_urdf_cannot_hold(tmp_path, run_cli):
    from .test_real_robots import SPHERICAL_YAML

    src = tmp_path / "sph.yaml"
    src.write_text(SPHERICAL_YAML.replace("  - {name: slide, type: planar, parent: base, child: sled, xyz: [0.5, 0, 0]}\n", ""))
    out = tmp_path / "sph.urdf"
    assert_one_line_error(run_cli("convert", src, "-o", out), "URDF has no spherical joint")
    assert not out.exists()
    weird = tmp_path / "weird.yaml"
    weird.write_text(open(robot_path("fourbar.yaml")).read().split("loops:")[0].replace("name: crank_joint", 'name: "crank\\x07joint"'))


@pytest.mark.skipif(not pinocchio_peer.available(), reason="pin (Pinocchio) is not installed")
@pytest.mark.parametrize("name", ["panda", "humanoid", "gripper", "quadruped"])
def test_urdfdom_reads_back_what_convert_writes(tmp_path, run_cli, name):
    import pinocchio as pin

    yaml_path, urdf_path = tmp_path / f"{name}.yaml", tmp_path / f"{name}.urdf"
    assert run_cli("convert", name, "-o", yaml_path).code == 0
    assert run_cli("convert", yaml_path, "-o", urdf_path).code == 0
    model = pin.buildModelFromXML(urdf_path.read_text())
    assert model.nv == cc.load_robot(name).nv


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


@needs_mujoco
@pytest.mark.parametrize("extra,message", [
    ('"<inertial><mass value=\\"65\\"/></inertial>"', "is a <inertial>, which the dynamics reads"),
    ('"<visual>' + "<a>" * 1000 + "</a>" * 1000 + '</visual>"', "nests 1001 deep"),
])
def test_yaml_extras_cannot_change_the_dynamics(tmp_path, run_cli, extra, message):
    path = write_file(tmp_path, "pend.yaml", PENDULUM.replace("EXTRA", extra))
    assert_one_line_error(run_cli("convert", path, "-o", tmp_path / "out.urdf"), message)
    assert not (tmp_path / "out.urdf").exists()
    robot_level = write_file(tmp_path, "top.yaml", PENDULUM.replace("    urdf: [EXTRA]\n", "") +
                         'urdf: ["<joint name=\\"x\\" type=\\"fixed\\"><parent link=\\"a\\"/><child link=\\"b\\"/></joint>"]\n')
    assert_one_line_error(run_cli("info", robot_level), "is a <joint>, which the dynamics reads")


@needs_mujoco
def test_convert_carries_gravity_and_armature_to_yaml_and_names_them_lost_in_urdf(tmp_path, run_cli):
    moon = write_file(tmp_path, "moon.xml", '<mujoco model="moon"><option gravity="0.3 -0.2 -1.77"/><worldbody><body>'
                  '<joint name="a" armature="0.3"/><geom type="sphere" size="0.1" mass="1" pos="0.2 0 0" contype="0" '
                  'conaffinity="0"/></body></worldbody></mujoco>')
    assert run_cli("convert", moon, "-o", tmp_path / "moon.yaml").code == 0
    a, b = cc.load_robot(moon), cc.load_robot(str(tmp_path / "moon.yaml"))
    q = np.array([0.4])
    assert np.array_equal(cc.mass_matrix(a, q), cc.mass_matrix(b, q))
    assert np.array_equal(cc.gravity_vector(a, q), cc.gravity_vector(b, q))
    r = run_cli("convert", moon, "-o", tmp_path / "moon.urdf")
    assert r.code == 0 and "no place for the armature of 1 joint (a) and the gravity (0.3, -0.2, -1.77)" in r.err, r
