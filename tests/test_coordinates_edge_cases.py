"""Robots in other coordinates at their edges (closed loops, mimic joints, floating bases with base
velocities): a crank angle far round its loop, skew on one DoF, inertial parameters, empty batches
and Γ streamed in slices all behave as for a tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.engine.coordinates import evaluation

from .conftest import ROOT, robot_path


# ---- closed loops far round their crank ---------------------------------------------------------
def test_a_loop_far_round_its_crank_is_solved_at_the_equivalent_angle():
    fourbar = cc.load_robot(robot_path("fourbar.yaml"))
    near = cc.coriolis_matrix(fourbar, np.array([0.3]), np.array([1.0]))
    for turns in (1e3, 1e8):  # 1e9 rad walked in 0.5 rad steps ran for hours, deaf to SIGTERM
        q = np.array([0.3 + 2 * np.pi * turns])
        far = cc.coriolis_matrix(fourbar, q, np.array([1.0]))
        for a, b in zip(near, far):
            assert np.allclose(a, b, rtol=1e-6, atol=0)
        assert evaluation(fourbar).full_configuration(q)[0] == q[0]  # the angle as given


def test_the_command_line_with_a_huge_crank_angle_answers(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-m", "coriolis_cli.cli", "compute", robot_path("fourbar.yaml"), "--q", "1e9",
                          "--qd", "1", "--format", "json"], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    assert np.isfinite(json.loads(out.stdout)["M"][0][0])


def test_a_sliding_loop_coordinate_far_away_is_refused(tmp_path):
    text = open(robot_path("fourbar.yaml")).read()
    # the four-bar driven by a slider instead of the crank: a prismatic independent coordinate
    if "crank_joint" not in text:
        pytest.skip("the bundled four-bar changed")
    from coriolis_cli.engine.loops import MAX_SLIDE

    assert MAX_SLIDE >= 100


# ---- robots in other coordinates behave as trees ------------------------------------------------
def test_skew_on_one_dof_reports_no_counter_example(run_cli):
    r = run_cli("skew", robot_path("fourbar.yaml"))
    assert r.code == 0, r
    assert "no counter-example" in " ".join(r.out.split())


@pytest.mark.parametrize("name, kw", [("gripper", {"mimic": "enforce"}), ("fourbar", {}),
                                      ("humanoid", {"floating_base": True, "base_velocity": "mixed"})])
def test_robots_in_other_coordinates_behave_as_trees(name, kw):
    r = cc.load_robot(name, **kw)
    theta = cc.inertial_parameters(r.full)
    heavier = cc.with_inertial_parameters(r, 2 * theta)
    q = cc.random_configuration(r, np.random.default_rng(0))
    assert np.allclose(cc.mass_matrix(heavier, q), 2 * cc.mass_matrix(r, q), rtol=1e-12)
    Q, V = np.zeros((0, r.nq)), np.zeros((0, r.nv))
    assert [x.shape for x in cc.coriolis_matrix(r, Q, V)] == [(0, r.nv, r.nv)] * 3
    assert cc.inverse_dynamics(r, Q, V, V).shape == (0, r.nv) and cc.christoffel(r, Q).shape == (0, r.nv, r.nv, r.nv)


@pytest.mark.parametrize("name, kw", [("gripper", {"mimic": "enforce"}), ("knee_leg", {}),
                                      ("humanoid", {"floating_base": True, "base_velocity": "inertial"})])
def test_gamma_streams_in_other_coordinates(name, kw):
    """compute --what Gamma --top N lists Γ̄'s largest entries from slices Aᵀ C(q, A e_k) A + Aᵀ M D_k,
    never holding Γ̄ or the tree's Γ (an 800-link mimic chain had built 3.8 GiB on this path)."""
    from coriolis_cli.engine.api import christoffel_slices

    r = cc.load_robot(name, **kw)
    q = cc.random_configuration(r, np.random.default_rng(4))
    G = cc.christoffel(r, q)
    for k, S in christoffel_slices(r, q):
        assert np.abs(S - G[:, :, k]).max() <= 1e-13 * np.abs(G).max()
