"""Bad states and command-line arguments (numbers in --q and state files, conflicting state sources,
a negative seed, --lock of every joint or of names with glob characters): one line with exit 2 or a
correct result, never exit 3."""

from __future__ import annotations

import numpy as np
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


def test_streamed_christoffel_refuses_a_batch_and_bad_selections_at_the_call():
    """christoffel_slices checks q when called (not at the first slice) and names the batch; the
    selection's top and tiny are typed errors, not NumPy's."""
    robot = cc.load_robot("panda")
    with pytest.raises(cc.StateError, match="christoffel_slices takes one state at a time, got a batch of 3"):
        cc.christoffel_slices(robot, np.zeros((3, 7)))
    with pytest.raises(cc.StateError, match="6 values"):
        cc.christoffel_slices(robot, np.zeros(6))
    with pytest.raises(cc.StateError, match="takes one state at a time"):
        cc.christoffel_largest(robot, np.zeros((2, 7)), 3)
    for top in (-1, 2.5, True):
        with pytest.raises(cc.StateError, match="top must be"):
            cc.christoffel_largest(robot, np.zeros(7), top)
    with pytest.raises(cc.StateError, match="tiny must be"):
        cc.christoffel_largest(robot, np.zeros(7), 3, float("nan"))


def test_integrate_and_mujocos_states_are_checked_as_every_state_is(tmp_path):
    """integrate, to_mujoco and from_mujoco: a wrong length, a batch or a NaN is a StateError naming
    it, not NumPy's IndexError or a NaN returned."""
    robot = cc.load_robot("panda")
    q, v = np.zeros(7), np.ones(7)
    for bad_q, bad_v, message in ((np.zeros(6), v, "6 values"), (q, np.ones(8), "8 values"),
                                  (np.zeros((2, 7)), np.ones((2, 7)), "integrate takes one state at a time"),
                                  (q, np.r_[np.nan, np.ones(6)], "not finite")):
        with pytest.raises(cc.StateError, match=message):
            cc.integrate(robot, bad_q, bad_v)
    with pytest.raises(cc.StateError, match="t must be"):
        cc.integrate(robot, q, v, float("inf"))
    pytest.importorskip("mujoco", reason="mujoco is not installed")
    path = tmp_path / "hinge.xml"
    path.write_text('<mujoco><worldbody><body><joint name="a" axis="0 1 0"/>'
                    '<inertial pos="0 0 0.1" mass="1" diaginertia="0.01 0.01 0.01"/></body></worldbody></mujoco>')
    arm = cc.load_robot(str(path))
    with pytest.raises(cc.StateError, match="2 values"):
        cc.to_mujoco(arm, np.zeros(2))
    with pytest.raises(cc.StateError, match="qpos"):
        cc.from_mujoco(arm, np.zeros(2))
    with pytest.raises(cc.StateError, match="finite"):
        cc.from_mujoco(arm, [np.nan])
