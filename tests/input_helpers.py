"""Helpers for the tests that hand the tool bad or unusual input: the two-link arm and its text, files
written on the spot (robot files, xacro, MJCF), and the mark of the tests that need MuJoCo."""

from __future__ import annotations

import pytest

from coriolis_cli.peers.mujoco import mujoco_available

from .conftest import robot_path

TWO_LINK = robot_path("planar_2link.urdf")
TWO_LINK_TEXT = open(TWO_LINK).read()

needs_mujoco = pytest.mark.skipif(not mujoco_available(),
                                  reason="mujoco is not installed (pip install 'coriolis-cli[mujoco]')")


def write_file(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)
