"""codegen's estimate covers every function whose code grows with the tree's related triples, not
Γ's alone: the derivatives' code is refused up front where it would take minutes and gigabytes."""

import pytest

import coriolis_cli as cc
from coriolis_cli.codegen import estimate
from coriolis_cli.codegen.trace import WHAT

from .conftest import assert_one_line_error


@pytest.mark.parametrize("what", ["dtau", "dslotine", "dCv", "dCTqd", "Gamma"])
def test_a_costly_function_on_a_large_tree_is_refused_before_it_is_traced(run_cli, tmp_path, monkeypatch, what):
    import coriolis_cli.codegen as codegen

    def traced(*args):
        raise AssertionError("traced: the estimate let it through")

    monkeypatch.setattr(codegen, "trace", traced)
    r = run_cli("codegen", "serial:100", "--what", what, "-o", tmp_path / "gen")
    assert_one_line_error(r, f"generating the code of {what} for this robot (nv = 100) would take about")
    assert not (tmp_path / "gen").exists()


def test_the_estimate_is_at_least_what_was_measured():
    """Measured here (GNU time, 2 cores): dCv of serial:30 74 s and 2.35 GB, dtau of serial:60 123 s
    and 3.6 GB, Γ of serial:40 20 s and 0.4 GB; the estimate adds the functions asked for."""
    for spec, function, seconds, gigabytes in (("serial:30", "coriolis_product_derivatives", 74, 2.35),
                                               ("serial:60", "inverse_dynamics_derivatives", 123, 3.6),
                                               ("serial:40", "christoffel", 20, 0.4)):
        s, b = estimate(cc.load_robot(spec), [function])
        assert s >= 0.9 * seconds and b >= 0.9 * gigabytes * 1e9, (spec, function, s, b)
    robot = cc.load_robot("serial:30")
    both = estimate(robot, ["coriolis_product_derivatives", "coriolis_transpose_derivatives"])
    assert both[0] > estimate(robot, ["coriolis_product_derivatives"])[0]
    assert estimate(robot, [WHAT["M"], WHAT["tau"]]) == estimate(robot, [WHAT["dg"]])  # a few seconds either way
