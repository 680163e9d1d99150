"""`coriolis simulate`: V never rises with an admissible C, rises with C + S; outputs and refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.errors import StateError
from coriolis_cli.simulation import simulate

from .conftest import assert_one_line_error, robot_path


@pytest.fixture(scope="module")
def panda():
    return cc.load_robot(robot_path("panda.urdf"))


@pytest.mark.parametrize("controller", ["passivity", "slotine-li"])
@pytest.mark.parametrize("factorization", ["christoffel", "featherstone"])
def test_v_never_rises_with_an_admissible_factorization(panda, controller, factorization):
    res = simulate(panda, controller, factorization, duration=0.3)
    assert res.largest_rise_of_V < 1e-10  # RK4's error at a 1 ms step, relative to V(0)
    assert res.V[-1] < res.V[0]
    assert res.tracking_error[-1] < res.tracking_error[0]


def test_v_rises_with_c_plus_s(panda):
    """Same equations of motion (S q̇ = 0), but Ṁ − 2(C + S) is not skew: V grows."""
    res = simulate(panda, "passivity", "nonadmissible", duration=0.5)
    assert res.largest_rise_of_V > 1e-3
    assert res.V[-1] > res.V[0]


def test_passivity_with_true_parameters_converges_and_adaptation_moves_estimates(panda):
    exact = simulate(panda, "passivity", "christoffel", duration=1.0)
    assert exact.tracking_error[-1] < 5e-3 * exact.tracking_error[0]  # e decays at about λ = 10 1/s once s is small
    adaptive = simulate(panda, "slotine-li", "christoffel", duration=0.3)
    assert adaptive.parameter_error[0] == pytest.approx(0.5)
    assert not np.array_equal(adaptive.theta_hat, 0.5 * adaptive.theta)


def test_a_20_link_chain_tracks_at_the_default_rate():
    """K_D = κ M(q) damps every mode at κ all along the run. With the constant κ M(q_d(0)) an
    eigenvalue of M⁻¹K_D reached 5,900 1/s on this chain, and the run diverged at t = 0.47 s."""
    chain = cc.load_robot(robot_path("serial20.urdf"))
    res = simulate(chain, "passivity", "christoffel", duration=1.0)
    assert res.largest_rise_of_V < 1e-10
    assert res.tracking_error[-1] < 1e-3 * res.tracking_error[0]  # 0.45 → 6.7e-5 rad measured


def test_closed_loop_robots_simulate(tmp_path):
    """A reduced robot (the knee linkage) runs through the same path: M̄, C̄, ḡ carried by A."""
    knee = cc.load_robot(robot_path("knee_leg.yaml"))
    res = simulate(knee, "passivity", "christoffel", duration=0.2, rate=500)
    assert res.largest_rise_of_V < 1e-9 and res.V[-1] < res.V[0]


def test_cli_json_plot_and_refusals(tmp_path, run_cli):
    out, png = tmp_path / "run.json", tmp_path / "run.png"
    r = run_cli("simulate", robot_path("planar_2link.urdf"), "--duration", "0.2", "-o", out, "--plot", png)
    assert r.code == 0, r
    rec = json.loads(out.read_text())
    assert {"t", "tracking_error", "V", "theta_hat", "settings"} <= set(rec)
    assert len(rec["t"]) == len(rec["V"]) == 201 and rec["settings"]["controller"] == "slotine-li"
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width >= 600 and height >= 600
    assert_one_line_error(run_cli("simulate", robot_path("panda.urdf"), "--floating-base"), "fixed-base")
    assert_one_line_error(run_cli("simulate", robot_path("panda.urdf"), "--gains", "1"), "--gains")
    assert_one_line_error(run_cli("simulate", robot_path("panda.urdf"), "-o", tmp_path / "x.npz"), "simulate writes")
    assert_one_line_error(run_cli("simulate", robot_path("panda.urdf"), "--duration", "nan"), "duration must be")
    assert_one_line_error(run_cli("simulate", robot_path("panda.urdf"), "--duration", "1e-9"), "shorter than one step")
    assert_one_line_error(run_cli("simulate", robot_path("panda.urdf"), "--adaptation-gain", "inf"), "positive and finite")
    with pytest.raises(StateError, match="controller must be"):
        simulate(cc.load_robot(robot_path("planar_2link.urdf")), "pid")
