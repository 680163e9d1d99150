"""Bad states and command-line arguments (numbers in --q and state files, conflicting state sources,
a negative seed, --lock of every joint or of names with glob characters): one line with exit 2 or a
correct result, never exit 3."""

from __future__ import annotations

import pytest

import coriolis_cli as cc

from .conftest import assert_one_line_error, robot_path
from .input_helpers import TWO_LINK, needs_mujoco, write_file


# ---- states -------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["1_0", "0x1p3", "nan", "1e400"])
def test_state_numbers_are_decimal_and_finite(run_cli, value):
    r = run_cli("compute", TWO_LINK, "--q", f"0,{value}")
    assert_one_line_error(r, "--q:")


def test_state_file_with_a_400_digit_integer(run_cli, tmp_path):
    p = tmp_path / "s.json"
    p.write_text('{"q": {"joint1": 1' + "0" * 400 + "}}")
    assert_one_line_error(run_cli("compute", TWO_LINK, "--state", p), "must be a finite number")


def test_state_sources_do_not_conflict_silently(tmp_path, run_cli):
    state = tmp_path / "s.yaml"
    state.write_text("q: {panda_joint1: 0.1}\n")
    assert_one_line_error(run_cli("compute", robot_path("panda.urdf"), "--state", state, "--qd", "5,5"), "--state FILE gives")


# ---- arguments ----------------------------------------------------------------------------------
def test_negative_seed(run_cli):
    assert_one_line_error(run_cli("info", "serial:10:-1"), "seed must not be negative")


@needs_mujoco
def test_lock_every_joint_the_floating_base_and_names_with_glob_characters(tmp_path, run_cli):
    r = run_cli("info", "panda", "--floating-base", "--lock", "*", "--format", "json")
    assert r.code == 0 and "every joint of robot 'panda' is locked (7)" in r.err and '"nv": 6' in r.out, r
    assert_one_line_error(run_cli("info", "panda", "--lock", "*"), "every joint is locked (7")
    r = run_cli("info", "panda", "--floating-base", "--lock", "base", "--format", "json")
    assert r.code == 0 and '"nv": 7' in r.out, r
    text = open(robot_path("planar_2link.urdf")).read().replace('name="joint1"', 'name="hand[0]"')
    text = text.replace('joint="joint1"', 'joint="hand[0]"')
    path = write_file(tmp_path, "hand.urdf", text)
    assert cc.load_robot(path, lock=["hand[0]"]).nv == 1
    assert_one_line_error(run_cli("info", "panda", "--lock", "hand[0]"), "write [[] and []]")
