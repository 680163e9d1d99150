"""Γ̄'s slices of a long chain with a mimic joint (its A mostly zeros, taken sparse) are Γ̄'s."""

import re

import numpy as np

import coriolis_cli as cc
from coriolis_cli.engine import api


def test_the_slices_of_a_long_chain_with_a_mimic_joint_are_its_christoffel_symbols(tmp_path, run_cli):
    path = tmp_path / "s120.urdf"
    assert run_cli("generate", "serial:120", "-o", path).code == 0
    text = path.read_text()
    leader, follower = re.findall(r'<joint name="([^"]+)"', text)[:2]
    text = re.sub(r'(<joint name="%s"[^>]*>)(.*?)(</joint>)' % re.escape(follower),
                  lambda m: m.group(1) + m.group(2) + f'<mimic joint="{leader}" multiplier="1.5" offset="0.1"/>'
                  + m.group(3), text, count=1, flags=re.S)
    path.write_text(text)
    robot = cc.load_robot(str(path), mimic="enforce")
    assert robot.nv == 119
    q = cc.random_configuration(robot, 1)
    G = cc.christoffel(robot, q)
    scale = np.abs(G).max()
    # NumPy's and SciPy's products in other orders: round-off apart, growing as √nv for sums of nv
    # terms (10 eps of the scale seen at nv = 399)
    for k, S in api.christoffel_slices(robot, q):
        assert np.abs(S - G[:, :, k]).max() <= 16 * np.finfo(float).eps * scale * np.sqrt(robot.nv), k
