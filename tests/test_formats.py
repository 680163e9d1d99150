"""Robots as users have them: xacro (expanded with the xacro package) and MJCF (compiled by MuJoCo)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import coriolis_cli as cc

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
        q, qd = a.random_configuration(rng), rng.normal(size=a.nv)
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
