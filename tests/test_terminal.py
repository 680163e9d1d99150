"""What a person sees at the terminal: tables that never cut a number or a name, at any width."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
from rich.cells import cell_len

import coriolis_cli as cc
from coriolis_cli.cli import common
from coriolis_cli.model.topologies import generate
from coriolis_cli.model.urdf import to_urdf

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
