"""Each surface gives its own remedy for a result above the nv³ guard: the library force=True,
compute --allow-large (whose help names every nv³ quantity), bench a note without a Python
argument; and a refusal for the robot's coordinates keeps its remedy on every surface."""

import numpy as np
import pytest

import coriolis_cli as cc

from .conftest import assert_one_line_error


@pytest.mark.parametrize("spec, what, said", [("serial:210", "d2tau_dq2", "the second-order derivatives of this robot"),
                                              ("serial:330", "dC_dq", "∂C/∂q of this robot holds nv³ = 330³")])
def test_compute_names_its_own_flag(run_cli, spec, what, said):
    r = run_cli("compute", spec, "--random", "--what", what)
    assert_one_line_error(r, said, "above the 256 MiB limit (pass --allow-large")
    assert "force=True" not in r.err and "christoffel_largest" not in r.err


def test_allow_large_names_every_nv3_quantity(run_cli):
    text = " ".join(run_cli("compute", "--help").out.split())
    for name in ("Gamma", "dC_dq", "d2tau_*"):
        assert name in text.split("--allow-large", 1)[1].split("--", 1)[0], name


def test_the_library_says_force_true_as_its_hint():
    robot = cc.load_robot("serial:210")
    q = np.zeros(robot.nv)
    with pytest.raises(cc.SizeError) as refused:
        cc.inverse_dynamics_second_derivatives(robot, q, q, q)
    assert "force=True" in refused.value.hint and "force=True" not in str(refused.value)
    with pytest.raises(cc.SizeError, match="∂C/∂q of 20,000 states|∂C/∂q of this robot") as refused:
        cc.coriolis_matrix_derivatives(cc.load_robot("serial:100"), np.zeros((20_000, 100)), np.zeros((20_000, 100)))


def test_a_forced_batch_of_dC_dq_is_refused_before_it_runs_out_of_memory(monkeypatch):
    from coriolis_cli.engine import data as data_module

    monkeypatch.setattr(data_module, "available_memory", lambda: 2**30)
    robot = cc.load_robot("serial:100")
    with pytest.raises(cc.SizeError, match="∂C/∂q of 20000 states needs about"):
        cc.coriolis_matrix_derivatives(robot, np.zeros((20_000, 100)), np.zeros((20_000, 100)), force=True)


def test_a_ragged_state_is_a_state_error():
    robot = cc.load_robot("panda")
    with pytest.raises(cc.StateError, match="q must be numbers, in a list of equal rows"):
        cc.coriolis_matrix_derivatives(robot, [[0.0] * 7, [0.0] * 3], np.zeros(7))


def test_bench_keeps_the_remedy_of_a_refusal_for_the_coordinates_and_drops_the_librarys(run_cli):
    r = run_cli("bench", "fourbar", "--what", "dtau", "--repeat", "3")
    assert r.code == 0
    assert "dtau not timed: the derivatives do not take closed loops yet" in r.err and "--loops open" in r.err


def test_bench_notes_a_size_refusal_without_a_python_argument(run_cli):
    r = run_cli("bench", "serial:210", "--what", "d2tau", "--repeat", "3")
    assert r.code == 0
    assert "d2tau not timed: the second-order derivatives of this robot hold" in r.err
    assert "force=True" not in r.err
