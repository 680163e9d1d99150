"""The commands as a user runs them: outputs, formats, and one-line errors for bad input."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import coriolis_cli as cc

from .conftest import BUNDLED, assert_one_line_error, robot_path


# --------------------------------------------------------------------------------- info
@pytest.mark.parametrize("path", BUNDLED, ids=os.path.basename)
@pytest.mark.parametrize("fb", [[], ["--floating-base"]], ids=["fixed", "floating"])
def test_info_on_every_bundled_robot(run_cli, path, fb):
    r = run_cli("info", path, *fb, "--format", "json")
    if fb and path.endswith("planar_2link.urdf"):  # singular M: computed, with a warning
        assert r.code == 0 and "warning: M is singular: the floating base's root link 'base'" in r.err, r
        assert_one_line_error(run_cli("info", path, *fb, "--strict"), "M is singular")
        return
    assert r.code == 0, r
    rec = json.loads(r.out)
    model = cc.load_robot(path, floating_base=bool(fb))
    assert rec["nv"] == model.nv and rec["nq"] == model.nq and rec["depth"] == model.depth
    assert rec["dof_names"] == list(model.dof_names)
    assert abs(rec["total_mass"] - model.total_mass) < 1e-12


@pytest.mark.parametrize("spec", ["serial:10", "binary:20", "biped:20", "quadruped:20"])
@pytest.mark.parametrize("fb", [[], ["--floating-base"]], ids=["fixed", "floating"])
def test_info_on_generated_topologies(run_cli, spec, fb):
    r = run_cli("info", spec, *fb)
    assert r.code == 0, r
    assert "depth d" in r.out and "joint1" in r.out and "nv =" in r.out


def test_info_table_draws_the_tree(run_cli):
    r = run_cli("info", robot_path("quadruped.urdf"), "--floating-base")
    assert r.code == 0
    assert "base [free] → trunk" in r.out
    assert "LF_foot_joint [fixed] → LF_foot" in r.out
    assert "5 fixed joints merged into 13 bodies" in r.out


# ---------------------------------------------------------------------- convert / generate
def test_convert_and_generate(run_cli, tmp_path):
    y = tmp_path / "panda.yaml"
    r = run_cli("convert", robot_path("panda.urdf"), "-o", y)
    assert r.code == 0, r and y.exists()
    u = tmp_path / "back.urdf"
    assert run_cli("convert", y, "-o", u).code == 0
    a, b = cc.load_robot(robot_path("panda.urdf")), cc.load_robot(str(u))
    q = cc.random_configuration(a, 1)
    assert np.array_equal(cc.mass_matrix(a, q), cc.mass_matrix(b, q))
    g = tmp_path / "q20.urdf"
    assert run_cli("generate", "quadruped:20", "-o", g).code == 0
    assert cc.load_robot(str(g)).nv == 20
    # refusing to overwrite, then overwriting with --force
    assert_one_line_error(run_cli("generate", "quadruped:20", "-o", g), "already exists")
    assert run_cli("generate", "quadruped:20", "-o", g, "--force").code == 0


# ----------------------------------------------------------------------------- compute
def test_compute_json_has_the_documented_keys(run_cli):
    r = run_cli("compute", robot_path("panda.urdf"), "--random", "--seed", "3", "--what", "M,Mdot,C,Gamma,g,tau", "--format", "json")
    assert r.code == 0, r
    rec = json.loads(r.out)
    for key in ("robot", "dof_names", "q", "qd", "factorization", "M", "Mdot", "C", "Gamma", "g", "tau"):
        assert key in rec
    robot = cc.load_robot(robot_path("panda.urdf"))
    q, qd = np.array(rec["q"]), np.array(rec["qd"])
    M, Mdot, C = cc.coriolis_matrix(robot, q, qd)
    assert np.array_equal(np.array(rec["C"]), C)
    assert np.allclose(np.array(rec["C"]), np.einsum("ijk,k->ij", np.array(rec["Gamma"]), qd), atol=1e-12)
    # random q within joint limits, q̇ in [-10, 10]
    lims = [(b.joint.limits.lower, b.joint.limits.upper) for b in robot.bodies]
    assert all(lo <= x <= hi for x, (lo, hi) in zip(q, lims))
    assert np.all(np.abs(qd) <= 10)


def test_compute_from_comma_lists_and_state_file(run_cli, tmp_path):
    robot = robot_path("planar_2link.urdf")
    r = run_cli("compute", robot, "--q", "0.3,0.5", "--qd", "1,2", "--format", "json")
    rec = json.loads(r.out)
    h = -0.7 * 1.0 * 0.4 * np.sin(0.5)
    assert np.allclose(rec["C"], [[h * 2, h * 3], [-h * 1, 0]], atol=1e-14)
    s = tmp_path / "s.yaml"
    s.write_text("q: {joint1: 0.3, joint2: 0.5}\nqd: {joint1: 1, joint2: 2}\n")
    rec2 = json.loads(run_cli("compute", robot, "--state", s, "--format", "json").out)
    assert rec2["C"] == rec["C"]


def test_compute_table_shows_names_and_sparsity(run_cli):
    r = run_cli("compute", "binary:5", "--random", "--what", "M,Gamma", "--top", "5")
    assert r.code == 0, r
    assert "joint1" in r.out and "·" in r.out  # unrelated DoF show as a dot
    assert "largest first" in r.out


@pytest.mark.parametrize("fmt, ext", [("csv", ".csv"), ("npz", ".npz"), ("json", ".json"), ("table", ".txt")])
def test_compute_writes_files(run_cli, tmp_path, fmt, ext):
    out = tmp_path / f"r{ext}"
    r = run_cli("compute", robot_path("quadruped.urdf"), "--floating-base", "--random", "--what", "M,C,Gamma", "-o", out)
    assert r.code == 0, r
    assert out.exists() and "wrote" in r.err
    if fmt == "npz":
        data = np.load(out)
        assert data["Gamma"].shape == (18, 18, 18) and list(data["dof_names"])[:1] == ["base_vx"]
    if fmt == "csv":
        head = out.read_text().splitlines()[:2]
        assert head[0] == "quantity,i,j,k,value" and head[1].startswith("M,base_vx,base_vx,,")
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".coriolis-")]


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["--q", "1,2,3"], ["--q: got 3 values", "needs 2"]),
        (["--q", "1,x"], ["'x' is not a number"]),
        (["--q", "1,nan"], ["not a finite number"]),
        (["--q", "1,inf"], ["not a finite number"]),
        (["--q", "1,2", "--qd", "1"], ["--qd: got 1 value, the robot needs 2"]),
        ([], ["no state given"]),
        (["--random", "--what", "M,Foo"], ["unknown quantity 'Foo'"]),
        (["--random", "--format", "npz"], ["needs -o FILE"]),
    ],
)
def test_compute_bad_input_one_line(run_cli, args, fragments):
    assert_one_line_error(run_cli("compute", robot_path("planar_2link.urdf"), *args), *fragments)


def test_compute_unknown_dof_in_state_file(run_cli, tmp_path):
    s = tmp_path / "s.yaml"
    s.write_text("q: {elbow: 1.0}\n")
    assert_one_line_error(run_cli("compute", robot_path("planar_2link.urdf"), "--state", s), "unknown DoF name 'elbow'")


def test_compute_unwritable_output_leaves_nothing(run_cli, tmp_path):
    target = tmp_path / "missing_dir" / "x.json"
    assert_one_line_error(run_cli("compute", robot_path("panda.urdf"), "--random", "-o", target), "does not exist")
    assert not target.exists()


def test_compute_gamma_guard(run_cli, tmp_path):
    # full-tensor formats are refused above the guard (tables stream; see test_robustness)
    r = run_cli("compute", "serial:400", "--random", "--what", "Gamma", "--format", "json")
    assert_one_line_error(r, "--allow-large", "MiB")
    out = tmp_path / "g.npz"
    assert_one_line_error(run_cli("compute", "serial:400", "--random", "--what", "Gamma", "-o", out, "--force"), "--allow-large")
    assert not out.exists()


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["info", "missing.urdf"], ["no such file"]),
        (["info", "quadruped:0"], ["must be positive"]),
        (["info", "serial:-3"], ["must be positive"]),
        (["info", "foo:10"], ["unknown topology"]),
        (["compute", "nosuch"], ["neither a robot file"]),
        (["generate", "serial:0", "-o", "x.urdf"], ["must be positive"]),
    ],
)
def test_errors_are_one_line(run_cli, args, fragments, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert_one_line_error(run_cli(*args), *fragments)


def test_real_process_error_has_no_traceback(tmp_path):
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'>")
    p = subprocess.run([sys.executable, "-m", "coriolis_cli.cli", "info", str(bad)], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.strip().startswith("error:") and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_bench_runs_and_reports(run_cli, tmp_path):
    r = run_cli("bench", "--topology", "binary", "--dofs", "4,8", "--repeat", "3", "--format", "json")
    assert r.code == 0, r
    import json

    rec = json.loads(r.out)
    assert rec["mode"] == "sweep" and [s["dof"] for s in rec["systems"]] == [4, 8]
    assert rec["slopes"]["binary"]["C"] is not None
    assert all(t["us"] > 0 for s in rec["systems"] for t in s["timings"])
    plot = tmp_path / "p.png"
    assert run_cli("bench", "--topology", "serial", "--dofs", "3,6", "--repeat", "3", "--plot", plot).code == 0
    assert plot.read_bytes()[:4] == b"\x89PNG"
    assert_one_line_error(run_cli("bench", robot_path("panda.urdf"), "--plot", tmp_path / "x.png"), "--plot draws a DoF sweep")
    assert_one_line_error(run_cli("bench", "--dofs", "a:b"), "--dofs")
    assert_one_line_error(run_cli("bench", "--what", "Foo"), "unknown quantity 'Foo'")


def test_bench_robot_with_peers(run_cli):
    r = run_cli("bench", robot_path("planar_2link.urdf"), "--peers", "--repeat", "3")
    assert r.code == 0, r
    assert "coriolis (compiled loop)" in r.out and "finite differences of M" in r.out
