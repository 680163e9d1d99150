"""What a person sees at the terminal: tables that never cut a number or a name, at any width."""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import replace

import numpy as np
import pytest
from rich.cells import cell_len

import coriolis_cli as cc
from coriolis_cli.cli import common
from coriolis_cli.model.topologies import generate
from coriolis_cli.model.urdf import to_urdf
from coriolis_cli.peers import pinocchio as pinocchio_peer

from .conftest import assert_one_line_error, robot_path

SIDES = ("left_front_leg", "right_front_leg", "left_hind_leg", "right_hind_leg")


@pytest.fixture(scope="module")
def long_names(tmp_path_factory):
    """A 44-DoF legged robot whose joint names are long and alike (as real humanoids' are)."""
    desc = generate("quadruped", 44, 3)
    joints, k = [], 0
    for j in desc.joints:
        if j.type != "fixed":
            j = replace(j, name=f"{SIDES[k % 4]}_actuator_joint_{k:02d}")
            k += 1
        joints.append(j)
    path = tmp_path_factory.mktemp("robots") / "long44.urdf"
    path.write_text(to_urdf(replace(desc, name="long_names_44", joints=tuple(joints))))
    return str(path)


def _numbers_in_rows(text: str) -> list[str]:
    """The numeric cells of every table row in ``text``."""
    out = []
    for line in text.splitlines():
        if line.startswith("│"):
            for cell in line.strip("│").split("│")[1:]:
                cell = cell.strip()
                if re.fullmatch(r"-?[0-9.]+(e[+-][0-9]+)?", cell):
                    out.append(cell)
    return out


@pytest.mark.parametrize("width", [80, 120, 160])
def test_matrices_are_printed_in_blocks_that_cut_nothing(long_names, run_cli, monkeypatch, width):
    monkeypatch.setattr(common.out, "width", width)  # 160: piped output's fixed width
    robot = cc.load_robot(long_names)
    q = np.linspace(-1.0, 1.0, robot.nq)
    qd = np.linspace(2.0, -2.0, robot.nv)
    r = run_cli("compute", long_names, "--q", ",".join(repr(float(x)) for x in q), "--qd", ",".join(repr(float(x)) for x in qd), "--what", "M,C")
    assert r.code == 0, r
    assert "…" not in r.out
    assert max(cell_len(line) for line in r.out.splitlines()) <= width
    for name in robot.dof_names:
        assert name in r.out
    M, _, C = cc.coriolis_matrix(robot, q, qd)
    related = robot.dof_related
    printed = _numbers_in_rows(r.out.split("C (")[0].split("M (mass matrix)", 1)[1])
    expected = [f"{M[i, j]: .5g}".strip() for i in range(robot.nv) for j in range(robot.nv) if related[i, j]]
    assert sorted(printed) == sorted(expected)  # every entry, each parsing back to its value at 5 digits
    for text in printed:
        value = float(text)
        assert np.min(np.abs(M[related] - value)) <= 5e-5 * abs(value) + 1e-300


@pytest.mark.parametrize("command", [("info",), ("verify", "--trials", "2", "--ref-trials", "0")])
@pytest.mark.parametrize("width", [80, 120])
def test_info_and_verify_wrap_instead_of_cutting(long_names, run_cli, monkeypatch, command, width):
    monkeypatch.setattr(common.out, "width", width)
    r = run_cli(command[0], long_names, *command[1:])
    assert r.code == 0, r
    assert "…" not in r.out
    # piped, verify says "verified ..." on one unwrapped line per robot as each finishes
    assert max(cell_len(line) for line in r.out.splitlines() if not line.startswith("verified ")) <= width
    if command[0] == "info":
        text = r.out.replace("\n", "")
        for name in cc.load_robot(long_names).dof_names:
            assert name in r.out or name in text


# ---- Pinocchio's DoF order ------------------------------------------------------------------------
def _pinocchio_order_matches(path: str, floating: bool, rng) -> None:
    import pinocchio as pin

    text = open(path).read()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cc.ModelWarning)  # real robots' CAD inertias, computed as given
        ours = cc.load_robot(path, floating_base=floating, dof_order="pinocchio")
    model = pin.buildModelFromXML(text, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromXML(text)
    if model.nq != ours.nq:
        pytest.skip("continuous joints: Pinocchio's q holds (cos, sin)")
    names = [n for n in model.names[1:] if n != "root_joint"]
    assert [n for n in ours.joint_names if n != "base"] == names
    data = model.createData()
    for _ in range(2):
        q = cc.random_configuration(ours, rng)
        qd, qdd = rng.normal(size=ours.nv), rng.normal(size=ours.nv)
        M, _, C = cc.coriolis_matrix(ours, q, qd)
        Mp = pin.crba(model, data, q)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        scale = np.abs(Mp).max()
        assert np.abs(M - Mp).max() <= 1e-12 * scale  # no permutation
        assert np.abs(C - pin.computeCoriolisMatrix(model, data, q, qd)).max() <= 1e-12 * scale * np.abs(qd).max()
        taup = pin.rnea(model, data, q, qd, qdd)
        assert np.abs(cc.inverse_dynamics(ours, q, qd, qdd) - taup).max() <= 1e-11 * max(1.0, np.abs(taup).max())


@pytest.mark.skipif(not pinocchio_peer.available(), reason="pin (Pinocchio) is not installed")
@pytest.mark.parametrize("floating", [False, True])
@pytest.mark.parametrize("name", ["humanoid.urdf", "quadruped.urdf", "biped20.urdf", "binary20.urdf"])
def test_dof_order_pinocchio_equals_pinocchio_entry_by_entry(name, floating, rng):
    _pinocchio_order_matches(robot_path(name), floating, rng)
    if name == "humanoid.urdf":  # the file's order is another: the legs come after the arms there
        assert cc.load_robot(robot_path(name)).dof_names != cc.load_robot(robot_path(name), dof_order="pinocchio").dof_names


@pytest.mark.skipif(not pinocchio_peer.available(), reason="pin (Pinocchio) is not installed")
@pytest.mark.parametrize("name", ["talos_data/robots/talos_full_v2.urdf", "g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf",
                                  "romeo_description/urdf/romeo.urdf", "tiago_description/robots/tiago_dual.urdf",
                                  "pr2_description/urdf/pr2.urdf", "icub_description/robots/icub.urdf"])
def test_dof_order_pinocchio_on_real_robots(name, rng):
    from .test_lock import example_robot

    _pinocchio_order_matches(example_robot(name), True, rng)


def test_state_by_name(run_cli):
    r = run_cli("compute", robot_path("planar_2link.urdf"), "--q", "joint2=0.5", "--qd", "joint1=1", "--what", "M",
                "--format", "json")
    assert r.code == 0, r
    M = np.array(json.loads(r.out)["M"])
    robot = cc.load_robot(robot_path("planar_2link.urdf"))
    assert np.array_equal(M, cc.coriolis_matrix(robot, np.array([0.0, 0.5]), np.array([1.0, 0.0]))[0])  # compute's M
    assert_one_line_error(run_cli("compute", robot_path("planar_2link.urdf"), "--q", "joint2=0.5,1"), "not name=value")
    assert_one_line_error(run_cli("compute", robot_path("planar_2link.urdf"), "--q", "elbow=1"), "unknown DoF name 'elbow'")
    assert_one_line_error(run_cli("compute", robot_path("planar_2link.urdf"), "--q", "joint1=1,joint1=2"), "twice")


# ---- robots by name, and from standard input --------------------------------------------------------
def test_bundled_robots_by_name_from_any_directory(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run_cli("info", "panda", "--format", "json")
    assert r.code == 0 and json.loads(r.out)["nv"] == 7, r
    assert run_cli("info", "fourbar.yaml").code == 0
    v = run_cli("verify", "humanoid", "--trials", "2", "--ref-trials", "0")
    assert v.code == 0 and "humanoid" in v.out
    (tmp_path / "panda").write_text(open(robot_path("planar_2link.urdf")).read())  # a file of that name wins
    assert json.loads(run_cli("info", "panda", "--format", "json").out)["nv"] == 2
    listed = run_cli("info", "--list", "--format", "json")
    rows = {r["name"]: r for r in json.loads(listed.out)}
    assert rows["panda"]["nv"] == 7 and rows["gripper"]["nv"] == 4 and rows["fourbar"]["nv"] == 1
    assert all(r["description"] for r in rows.values())
    assert_one_line_error(run_cli("info", "pandax"), "bundled robot ('coriolis info --list')")


def test_a_robot_from_standard_input(run_cli, monkeypatch):
    import io
    import sys

    for name in ("humanoid.urdf", "fourbar.yaml"):
        text = open(robot_path(name), "rb").read()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
        r = run_cli("info", "-", "--format", "json")
        assert r.code == 0, r
        assert json.loads(r.out)["nv"] == cc.load_robot(robot_path(name)).nv
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert_one_line_error(run_cli("info", "-"), "standard input is empty")


# ---- convert keeps what it does not model -------------------------------------------------------------
DRESSED = """<?xml version="1.0"?>
<robot name="dressed" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <!-- a comment, which no parsed description keeps -->
  <material name="blue"><color rgba="0 0 0.8 1"/></material>
  <link name="base">
    <visual><geometry><box size="0.1 0.2 0.3"/></geometry><material name="blue"/></visual>
    <collision name="hull"><origin xyz="0 0 0.1"/><geometry><mesh filename="package://x/base.stl" scale="1 1 1"/></geometry></collision>
  </link>
  <link name="arm">
    <inertial><origin xyz="0.1 0 0"/><mass value="1.5"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial>
    <visual><geometry><cylinder radius="0.02" length="0.3"/></geometry></visual>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="10" velocity="2"/>
    <dynamics damping="0.5" friction="0.1"/><safety_controller soft_lower_limit="-0.9" soft_upper_limit="0.9" k_velocity="1"/>
  </joint>
  <transmission name="t1"><type>transmission_interface/SimpleTransmission</type>
    <joint name="shoulder"><hardwareInterface>EffortJointInterface</hardwareInterface></joint></transmission>
  <gazebo reference="arm"><material>Gazebo/Blue</material></gazebo>
</robot>
"""


def _elements(text: str) -> list[str]:
    """Every element of a URDF other than what the dynamics reads, canonical XML, in order."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(text)
    out = []
    for el in root:
        if el.tag in ("link", "joint"):
            out += [f"{el.tag} {el.get('name')}: " + ET.canonicalize(ET.tostring(c), strip_text=True) for c in el
                    if c.tag not in ("inertial", "origin", "parent", "child", "axis", "limit", "mimic")]
        else:
            out.append(ET.canonicalize(ET.tostring(el), strip_text=True))
    return sorted(out)


def test_convert_round_trip_keeps_every_element(tmp_path, run_cli):
    src = tmp_path / "dressed.urdf"
    src.write_text(DRESSED)
    r = run_cli("convert", src, "-o", tmp_path / "d.yaml")
    assert r.code == 0, r
    assert "1 XML comment" in r.err and "not carried" in r.err
    assert run_cli("convert", tmp_path / "d.yaml", "-o", tmp_path / "d.urdf").code == 0
    back = (tmp_path / "d.urdf").read_text()
    assert _elements(back) == _elements(DRESSED) and len(_elements(DRESSED)) == 8
    a, b = cc.load_robot(str(src)), cc.load_robot(str(tmp_path / "d.urdf"))
    q, qd = np.array([0.4]), np.array([1.0])
    assert np.array_equal(cc.coriolis_matrix(a, q, qd)[0], cc.coriolis_matrix(b, q, qd)[0])
    bad = (tmp_path / "d.yaml").read_text().replace("<visual>", "<visual", 1)
    (tmp_path / "bad.yaml").write_text(bad)
    assert_one_line_error(run_cli("info", tmp_path / "bad.yaml"), "urdf[0] is not one XML element")


def test_bench_peers_without_pinocchio_says_so(run_cli, monkeypatch):
    monkeypatch.setattr(pinocchio_peer, "available", lambda: False)
    r = run_cli("bench", robot_path("planar_2link.urdf"), "--what", "C", "--peers", "--repeat", "3")
    assert r.code == 0, r
    assert "Pinocchio is not installed, so its rows are skipped (pip install 'coriolis-cli[bench]')" in r.err


@pytest.mark.parametrize("robot, least", [("planar_2link.urdf", (1600, 1100))])
def test_structure_picture_grows_with_nv(long_names, run_cli, tmp_path, robot, least):
    from PIL import Image

    small, big = tmp_path / "small.png", tmp_path / "big.png"
    assert run_cli("compute", robot_path(robot), "--random", "--what", "M", "--plot", small).code == 0
    assert run_cli("compute", long_names, "--random", "--what", "M,Gamma", "--plot", big, "--allow-large").code == 0
    assert Image.open(small).size == least
    width, height = Image.open(big).size
    # 44 DoF: every label at 7 pt needs 44 · 7 · 1.7 / 72 = 7.3 in of axis, twice across
    assert width >= 2 * 7.3 * 100 and height >= 2 * 7.3 * 100
    tree = tmp_path / "tree.png"
    assert run_cli("info", long_names, "--plot", tree).code == 0
    assert Image.open(tree).size[0] >= 4 * 100 * 30 * 8 * 0.6 / 72  # four legs' leaves, 30-character labels


@pytest.mark.parametrize("width", [80, 50])
def test_skew_reads_whole_at_80_columns(run_cli, monkeypatch, width):
    """skew's nine columns once left one character for the factorizations' names at 80 columns
    and hid the last column; one column per factorization keeps every word and number."""
    monkeypatch.setattr(common.out, "width", width)
    r = run_cli("skew", robot_path("humanoid.urdf"), "--floating-base", "--trials", "2")
    assert r.code == 0, r
    assert max(cell_len(line) for line in r.out.splitlines()) <= width
    rows = {line.strip("│").split("│")[0].strip(): line for line in r.out.splitlines() if line.startswith("│")}
    if width == 80:
        assert all(name in r.out for name in ("christoffel", "featherstone", "C + S, S q̇ = 0"))
        assert [c.strip() for c in rows["Christoffel-consistent"].split("│")[2:5]] == ["yes", "no", "no"]
    assert len(_numbers_in_rows(r.out)) == 12
