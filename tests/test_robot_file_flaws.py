"""Robot files with flaws (URDF and YAML numbers, duplicate keys, mimic joints, joint limits, URDF
elements without a name or an inertia, --strict's refusal, deep nesting, names nearly right, standard
input given twice): each is read correctly or refused in one line with exit 2, never a traceback,
exit 3 or a silently wrong number."""

from __future__ import annotations

import re
import shutil
import warnings

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



def test_limits_with_the_lower_equal_to_the_upper_are_said_at_load(tmp_path, run_cli):
    """lower="0" upper="0", CAD exporters' limits never entered: kept as given (Pinocchio's range),
    with a warning saying what the commands that move joints do with them."""
    from coriolis_cli.control.simulation import Reference

    from .test_lock import GRIPPER

    path = write_file(tmp_path, "g.urdf", GRIPPER.replace(
        '<limit lower="-2" upper="2" effort="10" velocity="2"/></joint>\n  <joint name="wrist"',
        '<limit lower="0" upper="0" effort="0" velocity="0"/></joint>\n  <joint name="wrist"'))
    said = ("1 joint whose lower limit equals the upper, leaving it no range (CAD exports write 0 and 0 for limits "
            "never entered): 'shoulder' (0); kept as given: simulate keeps it at that value, excite refuses it, "
            "random configurations ignore the range")
    with pytest.warns(cc.ModelWarning, match=re.escape(said)):
        r = cc.load_robot(path)
    assert (r.bodies[0].joint.limits.lower, r.bodies[0].joint.limits.upper) == (0.0, 0.0)
    assert Reference(r, 1.0).amplitude[0] == 0.0  # what the warning says simulate does
    info = run_cli("info", path)
    assert info.code == 0 and f"warning: {said}" in " ".join(info.err.split()), info
    assert_one_line_error(run_cli("excite", path, "-o", tmp_path / "t.csv"), "joint 'shoulder'", "range [0, 0]")
    # a range of one value elsewhere than 0 is said without the CAD remark; continuous and fixed
    # joints read no range, so their 0 and 0 say nothing
    with pytest.warns(cc.ModelWarning, match=r"leaving it no range: 'shoulder' \(0.5\); kept as given"):
        cc.load_robot(write_file(tmp_path, "half.urdf", open(path).read().replace(
            'lower="0" upper="0" effort="0"', 'lower="0.5" upper="0.5" effort="0"')))
    quiet = TWO_LINK_TEXT.replace('<axis xyz="0.0 0.0 1.0" />', '<axis xyz="0.0 0.0 1.0" /><limit lower="0" upper="0" '
                                  'effort="1" velocity="1"/>')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cc.load_robot(write_file(tmp_path, "continuous.urdf", quiet))
        cc.load_robot(write_file(tmp_path, "fixed.urdf", quiet.replace('name="joint2" type="continuous"',
                                                                        'name="joint2" type="fixed"')))


# ---- URDF elements urdfdom refuses, --strict ----------------------------------------------------
@pytest.mark.parametrize("old,new,message", [
    ('<joint name="joint2" type="continuous">', '<joint type="continuous">',
     "the 2nd <joint> (continuous, parent link 'link1', child link 'link2') has no name"),
    ('<link name="link2">', '<link name="">', "the 3rd <link> (after link 'link1') has no name"),
    ('<link name="base" />', "<link/>", "the 1st <link> (before link 'link1') has no name"),
    ('<parent link="link1" />', "", "joint 'joint2' has no <parent link=\"...\"/>"),
])
def test_a_link_or_joint_without_its_name_is_found_by_its_place(tmp_path, run_cli, old, new, message):
    assert old in TWO_LINK_TEXT
    path = write_file(tmp_path, "m.urdf", TWO_LINK_TEXT.replace(old, new, 1))
    with pytest.raises(cc.ModelError, match=re.escape(message)):
        cc.load_robot(path)
    assert_one_line_error(run_cli("info", path), f"m.urdf: {message}")


INERTIA2 = '<inertia ixx="0.001" ixy="0.0" ixz="0.0" iyy="0.04" iyz="0.0" izz="0.04" />'


@pytest.mark.parametrize("old,new,message", [
    (INERTIA2, "", ("link 'link2': its <inertial> has a <mass> but no <inertia>, which URDF requires (urdfdom refuses "
                    'the file); for a point mass write <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>')),
    ('<mass value="0.7" />', "", "link 'link2': its <inertial> has no <mass value=\"...\"/>"),
    ('<mass value="0.7" />', "<mass />", "link 'link2': its <inertial> has no <mass value=\"...\"/>"),
    (INERTIA2, INERTIA2.replace(' ixy="0.0"', "").replace(' iyz="0.0"', ""),
     "link 'link2': its <inertia> has no ixy, iyz; URDF requires all six"),
])
def test_an_inertial_urdfdom_refuses_is_refused_not_read_as_zeros(tmp_path, run_cli, old, new, message):
    """urdfdom's parseInertial (urdf_parser/src/link.cpp) refuses an <inertial> without <mass value>,
    without <inertia> or without one of its six attributes; yourdfpy reads what is missing as 0 (a
    point mass, a massless body with an inertia)."""
    assert old in TWO_LINK_TEXT
    path = write_file(tmp_path, "m.urdf", TWO_LINK_TEXT.replace(old, new, 1))
    with pytest.raises(cc.ModelError, match=re.escape(message)):
        cc.load_robot(path)
    assert_one_line_error(run_cli("info", path), f"m.urdf: {message}")


def test_strict_says_in_one_sentence_what_it_refused(tmp_path, run_cli):
    path = write_file(tmp_path, "m.urdf", TWO_LINK_TEXT.replace('iyy="0.04" iyz="0.0" izz="0.04"',
                                                                'iyy="0.001" iyz="0.0" izz="0.01"'))
    said = "; strict refuses the robot, which is otherwise computed as given, with a warning"
    with pytest.raises(cc.ModelError) as refused:
        cc.load_robot(path, strict=True)
    assert str(refused.value).endswith("triangle inequality by 80 %" + said) and refused.value.hint is None
    r = run_cli("info", path, "--strict")
    assert_one_line_error(r, "1 link with an inertia no rigid body has: 'link2'")
    assert stderr_lines(r.err)[0].endswith(said), r.err
    with pytest.warns(cc.ModelWarning, match="by 80 %; computed as given$"):
        cc.load_robot(path)

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
