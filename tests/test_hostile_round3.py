"""A third hostile corpus, aimed at what was added last (closed loops, mimic joints, base velocities,
simulate, --state, --plot, convert, robots in other coordinates): each class of failure found by
running the tool, with its general fix tested here."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.errors import OutputError
from coriolis_cli.peers import pinocchio as pinocchio_peer

from .conftest import ROOT, assert_one_line_error, robot_path


# ---- 1. bounded work ---------------------------------------------------------------------------------------
def test_a_loop_far_round_its_crank_is_solved_at_the_equivalent_angle():
    fourbar = cc.load_robot(robot_path("fourbar.yaml"))
    near = cc.coriolis_matrix(fourbar, np.array([0.3]), np.array([1.0]))
    for turns in (1e3, 1e8):  # 1e9 rad walked in 0.5 rad steps ran for hours, deaf to SIGTERM
        q = np.array([0.3 + 2 * np.pi * turns])
        far = cc.coriolis_matrix(fourbar, q, np.array([1.0]))
        for a, b in zip(near, far):
            assert np.allclose(a, b, rtol=1e-6, atol=0)
        assert fourbar.map.full_configuration(q)[0] == q[0]  # the angle as given


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


def test_huge_trees_are_not_drawn(run_cli, tmp_path):
    r = run_cli("info", "serial:1000", "--plot", tmp_path / "t.png")
    assert_one_line_error(r, "draws trees of up to 400 bodies")
    assert not (tmp_path / "t.png").exists()


def test_simulate_checks_memory_in_bytes(run_cli):
    """500 s at 1 MHz of a 1-DoF linkage: 5e8 steps passed the steps × DoF guard and ended in
    MemoryError (16 GB of samples); now the steps are bounded by the time they take, and the
    samples counted in bytes against the machine's memory."""
    r = run_cli("simulate", robot_path("fourbar.yaml"), "--duration", "500", "--rate", "1e6")
    assert_one_line_error(r, "500,000,000 steps (duration × rate) would take", "lower --rate")
    from coriolis_cli.engine import check_memory

    with pytest.raises(cc.SizeError, match="samples"):
        check_memory(2**60, "the samples")


# ---- 2. files --------------------------------------------------------------------------------------------
def test_a_file_created_meanwhile_is_not_replaced(tmp_path, monkeypatch):
    """The existence check and the write are one step: link() fails on an existing name."""
    from coriolis_cli.report import output

    target = tmp_path / "out.json"
    monkeypatch.setattr(output, "check_writable", lambda path, force=False: None)  # the other run's window
    target.write_text("the other run's result")
    with pytest.raises(OutputError, match="already exists"):
        output.write_atomic(str(target), "ours", force=False)
    assert target.read_text() == "the other run's result"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary file left
    output.write_atomic(str(target), "ours", force=True)
    assert target.read_text() == "ours"


def test_outputs_are_checked_before_any_work(run_cli, tmp_path):
    same = tmp_path / "same.json"
    assert_one_line_error(run_cli("compute", robot_path("panda.urdf"), "--random", "-o", same, "--plot", same),
                          "--plot", ".png, .svg or .pdf")
    same = tmp_path / "same.png"
    assert_one_line_error(run_cli("compute", robot_path("panda.urdf"), "--random", "-o", same, "--plot", same),
                          "given twice")
    assert not same.exists()


@pytest.mark.parametrize("ext, magic", [(".png", b"\x89PNG"), (".svg", b"<?xml"), (".pdf", b"%PDF")])
def test_plot_honours_its_extension(run_cli, tmp_path, ext, magic):
    path = tmp_path / f"tree{ext}"
    assert run_cli("info", robot_path("planar_2link.urdf"), "--plot", path).code == 0
    assert path.read_bytes().startswith(magic)


def test_a_failed_run_removes_what_it_wrote(run_cli, tmp_path, monkeypatch):
    from coriolis_cli.report import output

    written = tmp_path / "first.png"
    output.WRITTEN.append(str(written))
    written.write_bytes(b"x")
    output.remove_written()
    assert not written.exists()


# ---- 3. one number grammar, duplicate keys, conflicting sources ---------------------------------------------
@pytest.mark.parametrize("bad", ["0x10", "1_0", "1:30", "0o10"])
def test_yaml_numbers_are_decimal(tmp_path, run_cli, bad):
    text = open(robot_path("fourbar.yaml")).read()
    first = text.index("mass: ")
    end = text.index(",", first) if text.index(",", first) < text.index("\n", first) else text.index("\n", first)
    path = tmp_path / "r.yaml"
    path.write_text(text[:first] + f"mass: {bad}" + text[end:])
    assert_one_line_error(run_cli("info", path), f"'{bad}'")


def test_duplicate_keys_are_refused_by_name(tmp_path, run_cli):
    path = tmp_path / "r.yaml"
    path.write_text(open(robot_path("fourbar.yaml")).read().replace("name: fourbar", "name: fourbar\nname: other", 1))
    assert_one_line_error(run_cli("info", path), "key 'name' is given twice")
    state = tmp_path / "s.yaml"
    state.write_text("q: {panda_joint1: 0.1, panda_joint1: 0.9}\n")
    assert_one_line_error(run_cli("compute", robot_path("panda.urdf"), "--state", state), "'panda_joint1' is given twice")
    state.write_text('{"q": {"panda_joint1": 0.1}, "q": {}}')
    assert_one_line_error(run_cli("compute", robot_path("panda.urdf"), "--state", state), "'q' is given twice")


def test_state_sources_do_not_conflict_silently(tmp_path, run_cli):
    state = tmp_path / "s.yaml"
    state.write_text("q: {panda_joint1: 0.1}\n")
    assert_one_line_error(run_cli("compute", robot_path("panda.urdf"), "--state", state, "--qd", "5,5"), "--state FILE gives")


def test_mimic_parameters_are_checked_at_load(tmp_path):
    from .test_lock import GRIPPER

    for attrs, words in (('multiplier="nan"', "not a finite number"), ('offset="inf"', "not a finite number")):
        p = tmp_path / "g.urdf"
        p.write_text(GRIPPER.replace('multiplier="0.9"', attrs if "multiplier" in attrs else f'multiplier="0.9" {attrs}')
                     .replace('offset="0.002"', "" if "offset" in attrs else 'offset="0.002"'))
        with pytest.raises(cc.ModelError, match=words):
            cc.load_robot(str(p))
    p.write_text(GRIPPER.replace('<mimic joint="finger_left" ', "<mimic "))
    with pytest.raises(cc.ModelError, match="names no joint"):
        cc.load_robot(str(p))


def test_a_lower_limit_above_the_upper_means_no_limit(tmp_path):
    from .test_lock import GRIPPER

    p = tmp_path / "g.urdf"
    p.write_text(GRIPPER.replace('<limit lower="-2" upper="2" effort="10" velocity="2"/></joint>\n  <joint name="wrist"',
                                 '<limit lower="1" upper="-1" effort="10" velocity="2"/></joint>\n  <joint name="wrist"'))
    with pytest.warns(cc.ModelWarning, match="lower limit above the upper, read as no limit"):
        r = cc.load_robot(str(p))
    assert r.bodies[0].joint.limits.lower is None


# ---- 4. what convert writes reads back ----------------------------------------------------------------------
def test_convert_refuses_what_urdf_cannot_hold(tmp_path, run_cli):
    from .test_real_robots import SPHERICAL_YAML

    src = tmp_path / "sph.yaml"
    src.write_text(SPHERICAL_YAML.replace("  - {name: slide, type: planar, parent: base, child: sled, xyz: [0.5, 0, 0]}\n", ""))
    out = tmp_path / "sph.urdf"
    assert_one_line_error(run_cli("convert", src, "-o", out), "URDF has no spherical joint")
    assert not out.exists()
    weird = tmp_path / "weird.yaml"
    weird.write_text(open(robot_path("fourbar.yaml")).read().split("loops:")[0].replace("name: crank_joint", 'name: "crank\\x07joint"'))


@pytest.mark.skipif(not pinocchio_peer.available(), reason="pin (Pinocchio) is not installed")
@pytest.mark.parametrize("name", ["panda", "humanoid", "gripper", "quadruped"])
def test_urdfdom_reads_back_what_convert_writes(tmp_path, run_cli, name):
    import pinocchio as pin

    yaml_path, urdf_path = tmp_path / f"{name}.yaml", tmp_path / f"{name}.urdf"
    assert run_cli("convert", name, "-o", yaml_path).code == 0
    assert run_cli("convert", yaml_path, "-o", urdf_path).code == 0
    model = pin.buildModelFromXML(urdf_path.read_text())
    assert model.nv == cc.load_robot(name).nv


# ---- 5. no exit 3 on valid input ------------------------------------------------------------------------------
def test_dollar_signs_in_names_are_drawn_as_written(tmp_path, run_cli):
    src = open(robot_path("planar_2link.urdf")).read().replace('name="planar_2link"', 'name="arm $x_1$ ($5)"')
    p = tmp_path / "dollar.urdf"
    p.write_text(src.replace('joint name="joint1"', 'joint name="j$1"').replace('joint="joint1"', 'joint="j$1"'))
    for cmd in (("info", p, "--plot", tmp_path / "t.png"), ("compute", p, "--random", "--plot", tmp_path / "c.png"),
                ("simulate", p, "--duration", "0.05", "--plot", tmp_path / "s.png")):
        r = run_cli(*cmd)
        assert r.code == 0, r


def test_log_tick_labels_are_drawn_as_text_not_as_math_source():
    """Names are drawn as written (math mode off), so the log axes and the M, Ṁ, C colour bars
    label their ticks in plain text: 10⁻², −10¹, 2×10⁻¹, never ``$\\mathdefault{10^{-2}}$``."""
    import numpy as np
    from matplotlib.colors import SymLogNorm

    from coriolis_cli.report.plots import offscreen_pyplot, plain_log_ticks

    plt = offscreen_pyplot()
    fig, (wide, narrow, heat) = plt.subplots(1, 3)
    wide.semilogy([0, 1], [1e-3, 1e3])
    narrow.semilogy([0, 1], [0.2, 0.9])  # less than a decade: the minor ticks are labelled too
    image = heat.imshow(np.array([[-50.0, 0.0], [0.01, 50.0]]), norm=SymLogNorm(linthresh=0.05, vmin=-50, vmax=50))
    bar = fig.colorbar(image, ax=heat)
    plain_log_ticks(wide.yaxis, narrow.yaxis, bar)
    fig.canvas.draw()
    labels = [t.get_text() for ax in (wide, narrow, bar.ax) for axis in (ax.yaxis,)
              for t in axis.get_majorticklabels() + axis.get_minorticklabels() if t.get_text()]
    plt.close(fig)
    assert not [x for x in labels if "$" in x or "\\" in x], labels
    assert {"10⁻²", "10⁰", "10²", "−10¹", "10¹"} <= set(labels), labels
    assert any("×10⁻¹" in x for x in labels), labels


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
    q = r.random_configuration(np.random.default_rng(0))
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
    q = r.random_configuration(np.random.default_rng(4))
    G = cc.christoffel(r, q)
    for k, S in christoffel_slices(r, q):
        assert np.abs(S - G[:, :, k]).max() <= 1e-13 * np.abs(G).max()


SIGTERM_SCRIPT = r"""
import signal, sys, time
import numpy as np
import coriolis_cli as cc

def stop(signum, frame):
    raise SystemExit(143)

signal.signal(signal.SIGTERM, stop)  # as the CLI does: Python runs it between two bytecodes
robot = cc.load_robot("serial:100")
rng = np.random.default_rng(0)
cc.forward_dynamics(robot, np.zeros((2, 100)), np.zeros((2, 100)), np.zeros((2, 100)))  # compiled now
K = 300_000
Q = rng.uniform(-3, 3, (K, 100))
print("ready", flush=True)
cc.forward_dynamics(robot, Q, Q, Q)  # several seconds of compiled work
print("finished", flush=True)
"""


def test_sigterm_ends_a_long_batch_promptly(tmp_path):
    """A batch returns to Python between slices of about 0.1 s, so a handler for SIGTERM (or
    Ctrl-C) runs within a fraction of a second instead of when the whole batch is done."""
    import signal
    import time

    script = tmp_path / "batch.py"
    script.write_text(SIGTERM_SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        time.sleep(0.5)
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        waited = time.monotonic() - sent
    finally:
        proc.kill()
    assert proc.returncode == 143 and "finished" not in out, (proc.returncode, out, err)
    assert waited < 5.0  # a slice, not the batch (10-20 s on this machine)
