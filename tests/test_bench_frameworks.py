"""`coriolis bench --jax` and `--torch`: the JAX and PyTorch functions timed in their forms, beside
ADAM and jaxsim where they are installed (their values are held to ours here too)."""

import json

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.bench import frameworks

from .conftest import robot_path

jax = pytest.importorskip("jax")


@pytest.fixture
def small(monkeypatch):
    """Batches and scans short enough for a test; no peers, whether installed or not."""
    from coriolis_cli.peers import adam, jaxsim

    monkeypatch.setattr(frameworks, "BATCHES", (4, 8))
    monkeypatch.setattr(frameworks, "SCAN", 5)
    monkeypatch.setattr(adam, "available", lambda framework: False)
    monkeypatch.setattr(jaxsim, "available", lambda framework="jax": False)


def test_bench_jax_times_every_function_in_every_form(run_cli, small):
    r = run_cli("bench", robot_path("planar_2link.urdf"), "--jax", "--peers", "--repeat", "3", "--format", "json")
    assert r.code == 0, r.err
    (run,) = json.loads(r.out)["runs"]
    assert run["framework"] == "jax" and run["nv"] == 2
    forms = {(t["function"], t["form"]) for t in run["timings"] if t["library"] == "coriolis"}
    assert forms == {(f, k) for f in frameworks.FUNCTIONS for k in ("1", "4", "8", "scan", "numpy")}
    assert all(t["us_per_state"] > 0 for t in run["timings"])
    assert all(t["first_call_s"] > 0 for t in run["timings"] if t["form"] != "numpy")
    assert run["missing"] == {"ADAM": "not installed", "jaxsim": "not installed"}
    assert set(run["fresh_process_s"]) == {"import", "load", "first call"}
    table = run_cli("bench", robot_path("planar_2link.urdf"), "--jax", "--repeat", "3")
    assert table.code == 0 and "JAX, " in table.out and "∂τ/∂q" in table.out and "first jitted call" in table.out


def test_bench_torch_and_the_refusals(run_cli, small):
    for conflict in ("--table1", "--batch", "--codegen"):
        r = run_cli("bench", "--jax", conflict)
        assert r.code == 2 and "--jax and --torch time their own forms" in r.err and r.err.count("\n") == 1
    mimic = run_cli("bench", robot_path("gripper.urdf"), "--mimic", "enforce", "--jax")
    assert mimic.code == 2 and "take trees for now" in mimic.err
    pytest.importorskip("torch")
    r = run_cli("bench", robot_path("planar_2link.urdf"), "--torch", "--repeat", "3", "--format", "json")
    assert r.code == 0, r.err
    (run,) = json.loads(r.out)["runs"]
    forms = {(t["function"], t["form"]) for t in run["timings"]}
    assert forms == {(f, k) for f in frameworks.FUNCTIONS for k in ("1", "4", "8")}


@pytest.mark.parametrize("name, floating", [("panda", False), ("humanoid", True)])
def test_the_peers_compute_what_we_compute(name, floating):
    """ADAM's (JAX and PyTorch) and jaxsim's M, bias and τ, as the bench calls them, equal ours to
    round-off on the Panda and a floating humanoid (body-fixed base velocity). Runs where they are
    installed."""
    from coriolis_cli.peers import adam, jaxsim

    jax.config.update("jax_enable_x64", True)
    robot = cc.load_robot(name, floating_base=floating)
    Q, V, A = frameworks._states(robot, 4)
    ours = {"M": cc.mass_matrix(robot, Q), "bias": cc.inverse_dynamics(robot, Q, V, 0 * A),
            "tau": cc.inverse_dynamics(robot, Q, V, A)}
    peers = {}
    if adam.available("jax"):
        peers["ADAM, JAX"] = (adam.functions(robot, "jax", robot.gravity), "jax")
    if adam.available("torch"):
        peers["ADAM, PyTorch"] = (adam.functions(robot, "torch", robot.gravity), "torch")
    if jaxsim.available():
        peers["jaxsim"] = (jaxsim.functions(robot, robot.gravity), "jax")
    if not peers:
        pytest.skip("neither ADAM nor jaxsim is installed")
    for peer, (functions, framework) in peers.items():
        for key, expected in ours.items():
            states = {"M": (Q,), "bias": (Q, V), "tau": (Q, V, A)}[key]
            if framework == "torch":
                import torch

                got = functions[key](*(torch.from_numpy(x) for x in states)).numpy()
            else:
                got = np.asarray(jax.vmap(functions[key])(*(jax.numpy.asarray(x) for x in states)))
            assert np.abs(got - expected).max() <= 1e-13 * np.abs(expected).max(), (peer, key)
