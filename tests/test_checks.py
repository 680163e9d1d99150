"""verify and skew: they pass on correct dynamics and catch corrupted ones."""

import json

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli import engine
from coriolis_cli.checks.skew import skew_report
from coriolis_cli.checks.verify import default_suite, verify_robot
from coriolis_cli.peers.safeea import christoffel_safeea

from .conftest import robot_path


@pytest.mark.parametrize("spec, fb", [("planar_2link.urdf", False), ("panda.urdf", False), ("humanoid.urdf", True)])
def test_verify_passes_on_bundled_robots(spec, fb):
    rec = verify_robot(cc.load_robot(robot_path(spec), floating_base=fb), trials=15, ref_trials=3)
    assert rec.passed, [c for c in rec.checks if c.passed is False]
    by_key = {c.key: c for c in rec.checks}
    if spec == "planar_2link.urdf":
        assert by_key["h"].passed is True and by_key["i"].passed is True
    if fb:
        assert by_key["e"].passed is None and by_key["f1"].passed is None


def test_verify_30_dof_chain_meets_the_paper():
    rec = verify_robot(cc.load_robot("serial:30"), trials=30, ref_trials=2, use_pinocchio=False)
    by_key = {c.key: c for c in rec.checks}
    assert by_key["a"].max_abs <= 1e-9  # N·m; the paper reports 1.4e-9 on 30 bodies
    assert by_key["c"].max_rel <= 1e-6 and by_key["e"].max_rel <= 1e-6
    assert rec.passed


def test_default_suite_covers_bundled_and_generated():
    labels = [label for label, _, _ in default_suite()]
    for needed in ("panda.urdf", "humanoid.urdf +floating", "serial:30", "quadruped:20 +floating", "binary:20"):
        assert needed in labels


def _corrupt(monkeypatch, how):
    real = engine.coriolis_matrix

    def corrupted(robot, q, qd, factorization="christoffel"):
        M, Mdot, C = real(robot, q, qd, factorization)
        return {"transpose": (M, Mdot, C.T), "scale": (M, Mdot, 1.0001 * C)}[how]

    monkeypatch.setattr(engine, "coriolis_matrix", corrupted)


@pytest.mark.parametrize("how", ["transpose", "scale"])
def test_verify_catches_a_corrupted_engine(run_cli, monkeypatch, how):
    _corrupt(monkeypatch, how)
    r = run_cli("verify", robot_path("panda.urdf"), "--trials", "5", "--ref-trials", "1")
    assert r.code == 1, r
    assert "FAIL" in r.out and "checks failed" in r.out


def test_verify_catches_a_corrupted_christoffel(run_cli, monkeypatch):
    real = engine.christoffel
    monkeypatch.setattr(engine, "christoffel", lambda robot, q, force=False: real(robot, q, force).transpose(1, 0, 2))
    r = run_cli("verify", robot_path("panda.urdf"), "--trials", "3", "--ref-trials", "1", "--format", "json")
    assert r.code == 1
    rec = json.loads(r.out)
    failed = {c["key"] for c in rec["robots"][0]["checks"] if c["passed"] is False}
    assert {"d", "e", "i"} <= failed


def test_verify_cli_json_and_exit_zero(run_cli):
    r = run_cli("verify", "binary:7", "--floating-base", "--trials", "4", "--ref-trials", "1", "--format", "json")
    assert r.code == 0, r
    rec = json.loads(r.out)
    assert rec["passed"] and rec["robots"][0]["floating_base"] and rec["robots"][0]["nv"] == 13


def test_safeea_is_independent_and_agrees(rng):
    for spec in ("serial:12", robot_path("panda.urdf")):
        robot = cc.load_robot(spec)
        q = cc.random_configuration(robot, rng)
        G = cc.christoffel(robot, q)
        assert np.abs(G - christoffel_safeea(robot, q)).max() <= 1e-13 * np.abs(G).max()
    with pytest.raises(ValueError):
        christoffel_safeea(cc.load_robot("binary:5"), np.zeros(5))


@pytest.mark.parametrize("spec, fb", [("panda.urdf", False), ("quadruped.urdf", True)])
def test_skew_tells_admissible_from_valid(spec, fb):
    rows = {r.factorization: r for r in skew_report(cc.load_robot(robot_path(spec), floating_base=fb), trials=5)}
    chris, feath, bad = rows["christoffel"], rows["featherstone"], rows["C + S, S q̇ = 0"]
    assert chris.valid and chris.admissible and chris.christoffel_consistent
    assert feath.valid and feath.admissible and not feath.christoffel_consistent
    assert bad.valid and not bad.admissible and bad.eta_max > 1e-3
    assert all(r.as_expected for r in rows.values())


def test_skew_cli(run_cli):
    r = run_cli("skew", robot_path("humanoid.urdf"), "--floating-base", "--trials", "3")
    assert r.code == 0, r
    assert "eq. (10)" in r.out and "not admissible" in r.out
