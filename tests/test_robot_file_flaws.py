"""Robot files with flaws (URDF and YAML numbers, duplicate keys, mimic joints, joint limits, deep
nesting, names nearly right, standard input given twice): each is read correctly or refused in one
line with exit 2, never a traceback, exit 3 or a silently wrong number."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import coriolis_cli as cc

from .conftest import assert_one_line_error, robot_path, stderr_lines
from .input_helpers import TWO_LINK_TEXT, needs_mujoco, write_file


# ---- one number grammar -------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["1_0", "0x10", "1,0", "infinity1", " "])
def test_urdf_numbers_are_decimal_only(tmp_path, value):
    p = tmp_path / "m.urdf"
    p.write_text(TWO_LINK_TEXT.replace('<mass value="1.0"', f'<mass value="{value}"', 1))
    assert f'"{value}"' in p.read_text()
    with pytest.raises(cc.ModelError, match="link 'link1' <mass value>"):
        cc.load_robot(str(p))


def test_yaml_numbers(tmp_path):
    base = "name: x\nlinks:\n  - name: a\n  - {name: b, mass: MASS, com: [0.1, 0, 0], inertia: [1e-3, 0, 0, 1e-3, 0, 1e-3]}\n" \
           "joints:\n  - {name: j, type: revolute, parent: a, child: b, axis: [0, 0, 1]}\n"
    p = tmp_path / "r.yaml"
    p.write_text(base.replace("MASS", "1e-1"))  # YAML 1.1 reads this as a string: still a number here
    assert cc.load_robot(str(p)).bodies[0].mass == 0.1
    for bad, fragment in (('"1_0"', "must be a number"), ("1" + "0" * 400, "too large"), ("1.0e308", "too large")):
        p.write_text(base.replace("MASS", bad))
        with pytest.raises(cc.ModelError, match=fragment):
            cc.load_robot(str(p))


def test_huge_origins_are_refused_and_huge_axes_normalized(tmp_path):
    p = tmp_path / "r.yaml"
    text = "name: x\nlinks:\n  - name: a\n  - {name: b, mass: 1.0, com: [COM, 0, 0], inertia: [1.0, 0, 0, 1.0, 0, 1.0]}\n" \
           "joints:\n  - {name: j, type: revolute, parent: a, child: b, axis: [AX, AX, 0]}\n"
    p.write_text(text.replace("COM", "1.0e308").replace("AX", "1.0"))
    with pytest.raises(cc.ModelError, match="inertial origin 1e\\+308 is too large"):
        cc.load_robot(str(p))
    p.write_text(text.replace("COM", "0.1").replace("AX", "1.0e308"))
    axis = cc.load_robot(str(p)).bodies[0].joint.axis
    assert np.allclose(axis, [2**-0.5, 2**-0.5, 0])


@pytest.mark.parametrize("bad", ["0x10", "1_0", "1:30", "0o10"])
def test_yaml_numbers_are_decimal(tmp_path, run_cli, bad):
    text = open(robot_path("fourbar.yaml")).read()
    first = text.index("mass: ")
    end = text.index(",", first) if text.index(",", first) < text.index("\n", first) else text.index("\n", first)
    path = tmp_path / "r.yaml"
    path.write_text(text[:first] + f"mass: {bad}" + text[end:])
    assert_one_line_error(run_cli("info", path), f"'{bad}'")


# ---- duplicate keys, mimic joints, limits -------------------------------------------------------
def test_duplicate_keys_are_refused_by_name(tmp_path, run_cli):
    path = tmp_path / "r.yaml"
    path.write_text(open(robot_path("fourbar.yaml")).read().replace("name: fourbar", "name: fourbar\nname: other", 1))
    assert_one_line_error(run_cli("info", path), "key 'name' is given twice")
    state = tmp_path / "s.yaml"
    state.write_text("q: {panda_joint1: 0.1, panda_joint1: 0.9}\n")
    assert_one_line_error(run_cli("compute", robot_path("panda.urdf"), "--state", state), "'panda_joint1' is given twice")
    state.write_text('{"q": {"panda_joint1": 0.1}, "q": {}}')
    assert_one_line_error(run_cli("compute", robot_path("panda.urdf"), "--state", state), "'q' is given twice")


def test_mimic_parameters_are_checked_at_load(tmp_path):
    from .test_lock import GRIPPER

    for attrs, words in (('multiplier="nan"', "not a finite number"), ('offset="inf"', "not a finite number")):
        p = tmp_path / "g.urdf"
        p.write_text(GRIPPER.replace('multiplier="0.9"', attrs if "multiplier" in attrs else f'multiplier="0.9" {attrs}')
                     .replace('offset="0.002"', "" if "offset" in attrs else 'offset="0.002"'))
        with pytest.raises(cc.ModelError, match=words):
            cc.load_robot(str(p))
    p.write_text(GRIPPER.replace('<mimic joint="finger_left" ', "<mimic "))
    with pytest.raises(cc.ModelError, match="names no joint"):
        cc.load_robot(str(p))


def test_a_lower_limit_above_the_upper_means_no_limit(tmp_path):
    from .test_lock import GRIPPER

    p = tmp_path / "g.urdf"
    p.write_text(GRIPPER.replace('<limit lower="-2" upper="2" effort="10" velocity="2"/></joint>\n  <joint name="wrist"',
                                 '<limit lower="1" upper="-1" effort="10" velocity="2"/></joint>\n  <joint name="wrist"'))
    with pytest.warns(cc.ModelWarning, match="lower limit above the upper, read as no limit"):
        r = cc.load_robot(str(p))
    assert r.bodies[0].joint.limits.lower is None


# ---- nesting, robots by name, standard input ----------------------------------------------------
@needs_mujoco
def test_deep_urdf_is_refused_in_one_line(tmp_path, run_cli):
    text = open(robot_path("planar_2link.urdf")).read().replace("</link>", "<visual>" + "<a>" * 3000 + "</a>" * 3000
                                                                    + "</visual></link>", 1)
    assert_one_line_error(run_cli("info", write_file(tmp_path, "deep.urdf", text)), "nest 3003 deep")


@needs_mujoco
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


@needs_mujoco
def test_standard_input_twice_and_a_mimic_without_its_joint(tmp_path, run_cli, monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(open(robot_path("planar_2link.urdf"), "rb").read())))
    r = run_cli("verify", "-", "-", "--trials", "2")
    assert r.code == 2 and "read already; give '-' once" in " ".join(stderr_lines(r.err)), r
    text = open(robot_path("gripper.urdf")).read()
    start = text.index("<mimic")
    end = text.index("/>", start) + 2
    path = write_file(tmp_path, "nomimic.urdf", text[:start] + '<mimic multiplier="0.9"/>' + text[end:])
    assert_one_line_error(run_cli("info", path), "<mimic> names no joint (the 'joint' attribute is missing)")
