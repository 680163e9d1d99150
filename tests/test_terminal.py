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
        q = ours.random_configuration(rng)
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
    assert np.array_equal(M, cc.mass_matrix(robot, np.array([0.0, 0.5])))
    assert_one_line_error(run_cli("compute", robot_path("planar_2link.urdf"), "--q", "joint2=0.5,1"), "not name=value")
    assert_one_line_error(run_cli("compute", robot_path("planar_2link.urdf"), "--q", "elbow=1"), "unknown DoF name 'elbow'")
    assert_one_line_error(run_cli("compute", robot_path("planar_2link.urdf"), "--q", "joint1=1,joint1=2"), "twice")
