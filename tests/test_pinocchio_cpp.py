"""Pinocchio's C++ second-order derivatives (the compiled peer of the bench, peers/pinocchio_cpp)
against ours, with the index mapping the Derivatives page states: coriolis [i, j, k] equals
Pinocchio's d2tau_dqdq(i, k, j), d2tau_dvdv(i, j, k), dtau_dqdv(i, j, k) and dtau_dadq(i, k, j).
A floating base tells (i, j, k) from (i, k, j) apart: its ∂²τ/∂q² is not symmetric in (j, k)."""

from __future__ import annotations

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.peers import pinocchio_cpp
from coriolis_cli.peers.pinocchio import PeerUnavailable, available

from .conftest import robot_path

pytestmark = pytest.mark.skipif(not available(), reason="pin (Pinocchio) is not installed")

# ours -> Pinocchio's: which of its tensors, and the order of its indices
MAPPING = ((0, (0, 2, 1)), (1, (0, 1, 2)), (2, (0, 1, 2)), (3, (0, 2, 1)))


@pytest.fixture(scope="module")
def built():
    try:
        return pinocchio_cpp.binary()
    except PeerUnavailable as e:  # the bench extra brings cmeel-eigen; a compiler is the machine's
        pytest.skip(str(e))


@pytest.mark.parametrize("name, floating", [("panda.urdf", False), ("quadruped.urdf", True), ("humanoid.urdf", True)])
def test_pinocchio_s_second_order_tensors_are_ours_under_the_stated_mapping(built, name, floating):
    robot = cc.load_robot(robot_path(name), floating_base=floating)
    rng = np.random.default_rng(3)
    Q = np.array([cc.random_configuration(robot, rng) for _ in range(2)])
    V, A, T = rng.standard_normal((3, 2, robot.nv))
    times, theirs = pinocchio_cpp.run(robot, Q, V, A, T, repeat=1)
    assert set(times) == {"dtau", "dqdd", "d2tau"} and all(t > 0 for t in times.values())
    ours = cc.inverse_dynamics_second_derivatives(robot, Q[0], V[0], A[0])
    for k, (which, order) in enumerate(MAPPING):
        expected = theirs[which].transpose(order)
        assert np.abs(ours[k] - expected).max() <= 1e-12 * max(1.0, np.abs(expected).max()), k
    if floating:  # the mapping is not the identity: the other order differs
        swapped = theirs[0].transpose(0, 1, 2)
        assert np.abs(ours[0] - swapped).max() > 1e-6 * max(1.0, np.abs(swapped).max())


def test_bench_times_pinocchio_s_cpp_beside_ours(built, run_cli):
    """--compiled-peers adds Pinocchio's C++ rows (the binary built above, reused); without --peers
    it is refused in one line."""
    import json

    r = run_cli("bench", "panda", "--what", "dtau,d2tau", "--peers", "--compiled-peers", "--repeat", "3",
                "--format", "json")
    assert r.code == 0, r.out
    rows = {t["implementation"] for s in json.loads(r.out)["systems"] for t in s["timings"]}
    assert {"pinocchio C++ computeRNEADerivatives (compiled loop)",
            "pinocchio C++ ComputeRNEASecondOrderDerivatives (compiled loop)"} <= rows
    refused = run_cli("bench", "panda", "--compiled-peers")
    assert refused.code == 2 and "add --peers" in refused.err
