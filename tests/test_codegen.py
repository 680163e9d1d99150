"""coriolis codegen: the reference algorithms equal the engine, and the C code generated from them,
compiled, equals the engine too (to 1e-12 relative, as `codegen --check` demands)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli import reference
from coriolis_cli.model.bundled import DESCRIPTIONS

from .conftest import ROOT, assert_one_line_error, robot_path

HAS_CC = any(shutil.which(c) for c in (os.environ.get("CC") or "cc", "gcc", "clang"))
needs_cc = pytest.mark.skipif(not HAS_CC, reason="no C compiler")
BUNDLED_TREES = [n for n in DESCRIPTIONS if n not in ("fourbar", "knee_leg")]  # these two have closed loops


def _relative(a, b):
    return np.abs(np.asarray(a) - b).max(initial=0.0) / max(np.abs(b).max(initial=0.0), 1e-300)


def _robots():
    for name in BUNDLED_TREES:
        yield name, False
    yield "quadruped", True
    yield "humanoid", True


@pytest.mark.parametrize("name, floating", list(_robots()))
def test_the_reference_algorithms_equal_the_engine(name, floating, rng):
    robot = cc.load_robot(name, floating_base=floating)
    tree = reference.Tree(robot)
    for _ in range(2):
        q = cc.random_configuration(robot, rng)
        qd, qd_r, qdd = (rng.uniform(-3, 3, robot.nv) for _ in range(3))
        for ours, engine in zip(reference.coriolis_matrix(tree, q, qd), cc.coriolis_matrix(robot, q, qd)):
            assert _relative(ours, engine) < 1e-13
        assert _relative(reference.christoffel(tree, q), cc.christoffel(robot, q)) < 1e-13
        assert _relative(reference.inverse_dynamics(tree, q, qd, qdd), cc.inverse_dynamics(robot, q, qd, qdd)) < 1e-13
        assert _relative(reference.slotine_li(tree, q, qd, qd_r, qdd), cc.slotine_li(robot, q, qd, qd_r, qdd)) < 1e-13


def test_algorithm_2_equals_the_columns_of_algorithm_1(rng):
    """The reference's two routes to Γ: Algorithm 2 on 1-DoF joints, and Γ[:, :, k] = C(q, e_k)."""
    robot = cc.load_robot("binary20")
    tree = reference.Tree(robot)
    q = cc.random_configuration(robot, rng)
    G = reference.christoffel(tree, q)
    for k in range(robot.nv):
        e = np.zeros(robot.nv)
        e[k] = 1.0
        assert _relative(G[:, :, k], reference.coriolis_matrix(tree, q, e)[2]) < 1e-13


@needs_cc
@pytest.mark.parametrize("name, floating", [(n, False) for n in BUNDLED_TREES])
def test_generated_coriolis_equals_the_engine_on_every_bundled_robot(name, floating, tmp_path):
    from coriolis_cli.checks.codegen import compare_generated
    from coriolis_cli.codegen import generate_code

    robot = cc.load_robot(name, floating_base=floating)
    generated = generate_code(robot, tmp_path, what="M,C")
    comparison = compare_generated(robot, generated, trials=3)
    assert comparison.errors["coriolis"] < 1e-12, comparison


@needs_cc
@pytest.mark.parametrize("name, options", [("panda", {}), ("quadruped", {"floating_base": True}),
                                           ("gripper", {"mimic": "enforce"})])
def test_all_four_generated_functions_equal_the_engine(name, options, tmp_path):
    from coriolis_cli.checks.codegen import compare_generated
    from coriolis_cli.codegen import generate_code

    robot = cc.load_robot(name, **options)
    generated = generate_code(robot, tmp_path, prefix="robot")
    comparison = compare_generated(robot, generated, trials=3)
    assert set(comparison.errors) == {"coriolis", "christoffel", "inverse_dynamics", "slotine_li"}
    assert comparison.passed, comparison


@needs_cc
def test_the_generated_file_exports_its_four_functions_only(tmp_path):
    from coriolis_cli.codegen import generate_code

    generated = generate_code(cc.load_robot("planar_2link"), tmp_path, prefix="arm")
    obj = tmp_path / "arm.o"
    done = subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-pedantic", "-c", generated.source_path, "-I",
                           str(tmp_path), "-o", str(obj)], capture_output=True, text=True)
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr
    symbols = subprocess.run(["nm", "-g", "--defined-only", str(obj)], capture_output=True, text=True).stdout
    assert sorted(line.split()[-1] for line in symbols.splitlines()) == \
        ["arm_christoffel", "arm_coriolis", "arm_inverse_dynamics", "arm_slotine_li"]
    text = open(generated.source_path).read()
    assert "malloc" not in text and not re.search(r"^(?!static)[a-z_ ]*\bstatic\b", text, re.M)


@needs_cc
def test_the_c_example_compiles_runs_and_prints_the_engine_s_numbers(tmp_path, run_cli):
    """docs/commands/codegen.md's C example, as written."""
    readme = open(os.path.join(ROOT, "docs", "commands", "codegen.md"), encoding="utf-8").read()
    program = re.search(r"```c\n(.*?)```", readme, re.S).group(1)
    (tmp_path / "main.c").write_text(program)
    r = run_cli("codegen", "panda", "-o", str(tmp_path / "gen"), "--what", "M,C")
    assert r.code == 0, r
    exe = tmp_path / "main"
    built = subprocess.run(["cc", "-O2", "-std=c99", "-I", str(tmp_path / "gen"), str(tmp_path / "main.c"),
                            str(tmp_path / "gen" / "panda.c"), "-lm", "-o", str(exe)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    printed = subprocess.run([str(exe)], capture_output=True, text=True).stdout
    robot = cc.load_robot("panda")
    M, _, C = cc.coriolis_matrix(robot, np.zeros(7), np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]))
    assert printed.split() == ["M[0][0]", "=", f"{M[0, 0]:.6f},", "C[0][1]", "=", f"{C[0, 1]:.6f}"]
    assert f"it prints `{printed.strip()}`" in " ".join(readme.split())


# ---- what a user gets wrong ----------------------------------------------------------------------
def test_codegen_refuses_what_it_cannot_write_in_one_line(run_cli, tmp_path):
    assert_one_line_error(run_cli("codegen", robot_path("fourbar.yaml"), "-o", str(tmp_path / "g")), "closed loops")
    assert_one_line_error(run_cli("codegen", "quadruped", "--floating-base", "--base-velocity", "mixed", "-o",
                                  str(tmp_path / "g")), "--base-velocity body")
    assert_one_line_error(run_cli("codegen", "panda", "-o", str(tmp_path / "g"), "--prefix", "my-robot"), "C identifier")
    assert_one_line_error(run_cli("codegen", "panda", "-o", str(tmp_path / "g"), "--what", "M,Coriolis"), "--what")
    (tmp_path / "file").write_text("x")
    assert_one_line_error(run_cli("codegen", "panda", "-o", str(tmp_path / "file")), "file")
    assert not (tmp_path / "g").exists()


def test_codegen_keeps_existing_files_unless_forced(run_cli, tmp_path):
    (tmp_path / "panda.h").write_text("mine")
    assert_one_line_error(run_cli("codegen", "planar_2link", "-o", str(tmp_path), "--prefix", "panda"), "--force")
    assert (tmp_path / "panda.h").read_text() == "mine" and not (tmp_path / "panda.c").exists()
    assert run_cli("codegen", "planar_2link", "-o", str(tmp_path), "--prefix", "panda", "--force").code == 0
    assert "panda_coriolis" in (tmp_path / "panda.h").read_text()


def test_without_casadi_codegen_says_how_to_install_it(run_cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "casadi", None)
    assert_one_line_error(run_cli("codegen", "panda", "-o", str(tmp_path / "g")), "pip install 'coriolis-cli[codegen]'")
    assert not (tmp_path / "g").exists()


def test_without_a_c_compiler_the_loader_says_so(tmp_path, monkeypatch):
    from coriolis_cli.codegen import generate_code
    from coriolis_cli.errors import MissingToolError

    generated = generate_code(cc.load_robot("planar_2link"), tmp_path, what="M")
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(MissingToolError, match="no C compiler found"):
        generated.compile()


# ---- measured: bench --codegen and the paper's Table 2 ------------------------------------------
@pytest.mark.parametrize("route", ["eq4", "alg2"])
def test_both_symbolic_routes_of_table2_give_the_engine_s_gamma(route, rng):
    from coriolis_cli.bench.table2 import symbolic_gamma
    from coriolis_cli.model import build_model
    from coriolis_cli.model.topologies import generate

    robot = build_model(generate("binary", 4))
    function, seconds = symbolic_gamma(robot, route)
    assert seconds > 0
    for _ in range(3):
        q = cc.random_configuration(robot, rng)
        G = np.array(function(q)).reshape((robot.nv,) * 3)
        assert _relative(G, cc.christoffel(robot, q)) < 1e-12


@needs_cc
def test_table2_rows_report_each_route_or_say_over_budget():
    from coriolis_cli.bench.table2 import run_table2

    (row,) = run_table2(budget=60, rows=(("binary", 3),))
    for route in row.routes.values():
        assert route.symbolic_s > 0 and route.operations > 0 and route.code_kib > 0 and route.compiled_us > 0, route
    assert row.numeric_us > 0 and row.paper_s is None
    (row,) = run_table2(budget=1e-3, rows=(("serial", 3),))
    assert all(r.symbolic_s is None and "over budget" in r.note for r in row.routes.values())


@needs_cc
def test_bench_codegen_times_the_generated_code_beside_the_engine(run_cli):
    r = run_cli("bench", "planar_2link", "--what", "C,Gamma", "--codegen", "--repeat", "3", "--format", "json")
    assert r.code == 0, r
    import json

    (system,) = json.loads(r.out)["systems"]
    generated = [t for t in system["timings"] if t["implementation"].startswith("generated C")]
    assert {t["what"] for t in generated} == {"C", "Gamma"} and all(t["us"] > 0 for t in generated)


def test_table2_and_codegen_refuse_what_they_do_not_time(run_cli):
    assert_one_line_error(run_cli("bench", "panda", "--table2"), "--table2 runs its own systems")
    assert_one_line_error(run_cli("bench", "--codegen"), "--codegen times the code generated for ROBOT")


@needs_cc
@pytest.mark.parametrize("relative, floating", [("ur_description/urdf/ur5_robot.urdf", False),
                                                ("solo_description/robots/solo12.urdf", True)])
def test_generated_code_equals_the_engine_on_real_robots(relative, floating, tmp_path):
    from coriolis_cli.checks.codegen import compare_generated
    from coriolis_cli.codegen import generate_code

    from .test_lock import example_robot

    robot = cc.load_robot(example_robot(relative), floating_base=floating)
    comparison = compare_generated(robot, generate_code(robot, tmp_path, prefix="real"), trials=3)
    assert comparison.passed, comparison


@needs_cc
def test_split_functions_compute_every_number_the_whole_function_does(tmp_path, monkeypatch, rng):
    """Long functions are cut into parts (codegen.straight_line) so that compilers build them in
    linear time; the parts run the same operations in the same order: equal to the last bit.
    Structural zeros are cleared, not stored one by one, in both."""
    from coriolis_cli.codegen import generate_code, straight_line

    robot = cc.load_robot("panda")
    whole = generate_code(robot, tmp_path / "whole", prefix="robot")
    monkeypatch.setattr(straight_line, "SPLIT_ABOVE", 300)
    monkeypatch.setattr(straight_line, "PART_STATEMENTS", 200)
    split = generate_code(robot, tmp_path / "split", prefix="robot")
    text = open(split.source_path).read()
    assert text.count("_part") > 4 * 20
    assert all("res[0][k]=0.;" in open(g.source_path).read() for g in (whole, split))
    done = subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-pedantic", "-c", split.source_path, "-I",
                           str(tmp_path / "split"), "-o", str(tmp_path / "split.o")], capture_output=True, text=True)
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr
    symbols = subprocess.run(["nm", "-g", "--defined-only", str(tmp_path / "split.o")], capture_output=True, text=True)
    assert len(symbols.stdout.splitlines()) == 4
    a, b = whole.compile("-O0"), split.compile("-O0")  # ISO C: the same bits at every level
    for _ in range(3):
        q = cc.random_configuration(robot, rng)
        qd, qd_r, qdd_r = (rng.normal(size=robot.nv) for _ in range(3))
        for x, y in zip(a.coriolis(q, qd), b.coriolis(q, qd)):
            assert np.array_equal(x, y)
        assert np.array_equal(a.christoffel(q), b.christoffel(q))
        assert np.array_equal(a.inverse_dynamics(q, qd, qdd_r), b.inverse_dynamics(q, qd, qdd_r))
        assert np.array_equal(a.slotine_li(q, qd, qd_r, qdd_r), b.slotine_li(q, qd, qd_r, qdd_r))


def test_codegen_says_whether_the_code_or_the_engine_is_faster_for_large_functions(run_cli, tmp_path, monkeypatch):
    """Each function above the size where the engine's call costs about as much is compared: the
    code's time estimated from its operations, the engine's timed on this robot with data=."""
    from coriolis_cli.bench import generated

    r = run_cli("codegen", "planar_2link", "-o", tmp_path / "small", "--what", "C,Gamma")
    assert r.code == 0 and "faster route" not in r.err  # a few hundred operations: nothing to say
    monkeypatch.setattr(generated, "SMALL_MICROSECONDS", 0.0)
    monkeypatch.setattr(generated, "NS_PER_OPERATION", 1e6)  # as if the code took a millisecond an operation
    r = run_cli("codegen", "planar_2link", "-o", tmp_path / "slow", "--what", "C,Gamma")
    assert r.code == 0, r.err
    notes = [line for line in r.err.splitlines() if line.startswith("note: planar_2link_")]
    assert [n.split(":")[1].strip() for n in notes] == ["planar_2link_coriolis", "planar_2link_christoffel"]
    assert all(n.endswith("the engine is the faster route here") for n in notes), notes
    speeds = generated.route_speeds(cc.load_robot("planar_2link"), {"christoffel": 100}, budget=0.05)
    assert 0 < speeds[0].engine_microseconds < 1e3 and speeds[0].code_microseconds == 100 * 1e6 * 1e-3


@needs_cc
def test_generated_derivatives_equal_the_engine_in_the_tangent_space(tmp_path, run_cli):
    """--what dtau,dg,dslotine,dCv,dCTqd (or --derivatives): CasADi's Jacobians of the traced
    reference, ∂/∂q taken through ∂(q ⊕ δ)/∂δ, equal the engine's derivatives on a fixed chain, a
    floating base, mimic joints and spherical, planar and non-root free joints."""
    from coriolis_cli.checks.codegen import compare_generated
    from coriolis_cli.codegen import generate_code

    from .engine_cases import robots

    cases = [("panda", cc.load_robot("panda")), ("quadruped", cc.load_robot("quadruped", floating_base=True)),
             ("gripper", cc.load_robot("gripper", mimic="enforce"))]
    cases += [(name, robot) for name, robot in robots(tmp_path) if name in ("sph.yaml+free", "mixed.urdf")]
    assert len(cases) == 5
    everything = {"inverse_dynamics_derivatives", "gravity_derivatives", "slotine_li_derivatives",
                  "coriolis_product_derivatives", "coriolis_transpose_derivatives"}
    for name, robot in cases:
        what = "dtau,dg,dslotine,dCv,dCTqd" if name in ("quadruped", "sph.yaml+free") else "dtau"
        generated = generate_code(robot, tmp_path / name.replace(".", "_").replace("+", "_"), prefix="robot", what=what)
        comparison = compare_generated(robot, generated, trials=3)
        expected = everything if what != "dtau" else {"inverse_dynamics_derivatives"}
        assert set(comparison.errors) == expected and comparison.passed, (name, comparison)
    r = run_cli("codegen", "planar_2link", "-o", str(tmp_path / "flag"), "--what", "tau", "--derivatives")
    assert r.code == 0 and "planar_2link_inverse_dynamics_derivatives(const double *q" in (tmp_path / "flag" / "planar_2link.h").read_text()


def test_the_reference_torques_equal_the_engine_s_on_every_joint_type(tmp_path):
    """The code is traced from the reference: its τ and Slotine–Li torque equal the engine's on
    every engine case. A URDF floating root joint with an rpy origin (mixed.urdf) had its gravity
    turned by the quaternion alone, 15 N·m off, and so had the generated code."""
    from .engine_cases import robots

    for name, robot in robots(tmp_path):
        tree = reference.Tree(robot)
        rng = np.random.default_rng(0)
        q = cc.random_configuration(robot, rng)
        v, v_r, a = rng.standard_normal((3, robot.nv))
        tau = cc.inverse_dynamics(robot, q, v, a)
        assert np.abs(reference.inverse_dynamics(tree, q, v, a) - tau).max() <= 1e-12 * max(1.0, np.abs(tau).max()), name
        sl = cc.slotine_li(robot, q, v, v_r, a)
        assert np.abs(reference.slotine_li(tree, q, v, v_r, a) - sl).max() <= 1e-12 * max(1.0, np.abs(sl).max()), name


@pytest.mark.parametrize("name", ["panda", "gripper"])
def test_second_derivatives_equal_casadi_s_automatic_differentiation(name):
    """The engine's second-order derivatives against CasADi's Jacobians of Jacobians of the traced
    reference RNEA (robots whose q are coordinates, where the tangent space is q's own)."""
    ca = pytest.importorskip("casadi")
    from coriolis_cli.codegen.trace import flat, symbolic_backend, symbols

    robot = cc.load_robot(name)
    tree, n = reference.Tree(robot), robot.nv
    (qs, q), (vs, v), (as_, a) = symbols("q", n), symbols("v", n), symbols("a", n)
    tau = flat(reference.inverse_dynamics(tree, q, v, a, symbolic_backend()))[0]
    dq, dv, da = ca.jacobian(tau, qs), ca.jacobian(tau, vs), ca.jacobian(tau, as_)
    F = ca.Function("F", [qs, vs, as_], [ca.jacobian(ca.vec(dq), qs), ca.jacobian(ca.vec(dv), vs),
                                        ca.jacobian(ca.vec(dv), qs), ca.jacobian(ca.vec(da), qs)])
    rng = np.random.default_rng(0)
    q0 = cc.random_configuration(robot, rng)
    v0, a0 = rng.standard_normal((2, n))
    theirs = [np.array(x).reshape(n, n, n, order="F").transpose(0, 2, 1) for x in F(q0, v0, a0)]  # [i, j, k]
    ours = cc.inverse_dynamics_second_derivatives(robot, q0, v0, a0)
    for x, y in zip(ours, theirs):
        assert np.abs(x - y).max() <= 1e-12 * max(1.0, np.abs(y).max())


@pytest.mark.parametrize("name", ["panda", "gripper"])
def test_forward_second_derivatives_equal_casadi_s_automatic_differentiation(name):
    """The forward dynamics' second-order derivatives (and their contraction) against CasADi's
    Jacobians of Jacobians of q̈ = M⁻¹(τ − h) built from the traced reference RNEA (M its Jacobian
    in q̈, h its value at q̈ = 0), solved symbolically."""
    ca = pytest.importorskip("casadi")
    from coriolis_cli.codegen.trace import flat, symbolic_backend, symbols

    robot = cc.load_robot(name)
    tree, n = reference.Tree(robot), robot.nv
    (qs, q), (vs, v), (as_, a), (ts, _) = symbols("q", n), symbols("v", n), symbols("a", n), symbols("t", n)
    tau = flat(reference.inverse_dynamics(tree, q, v, a, symbolic_backend()))[0]
    M, h = ca.jacobian(tau, as_), ca.substitute(tau, as_, ca.DM.zeros(n))
    qdd = ca.solve(M, ts - h)
    dq, dv, dt = ca.jacobian(qdd, qs), ca.jacobian(qdd, vs), ca.jacobian(qdd, ts)
    F = ca.Function("F", [qs, vs, ts], [ca.jacobian(ca.vec(dq), qs), ca.jacobian(ca.vec(dv), vs),
                                        ca.jacobian(ca.vec(dv), qs), ca.jacobian(ca.vec(dt), qs)])
    rng = np.random.default_rng(0)
    q0 = cc.random_configuration(robot, rng)
    v0, t0, lam = rng.standard_normal((3, n))
    theirs = [np.array(x).reshape(n, n, n, order="F").transpose(0, 2, 1) for x in F(q0, v0, t0)]  # [i, j, k]
    ours = cc.forward_dynamics_second_derivatives(robot, q0, v0, t0)
    contracted = cc.forward_dynamics_second_derivatives_contracted(robot, q0, v0, t0, lam)
    for x, c, y in zip(ours, contracted, theirs):
        assert np.abs(x - y).max() <= 1e-11 * max(1.0, np.abs(y).max())
        expected = np.einsum("i,ijk->jk", lam, y)
        assert np.abs(c - expected).max() <= 1e-11 * max(1.0, np.abs(expected).max())
