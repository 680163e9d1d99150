"""What the tool writes and shows: no non-finite number written, valid JSON, output files that keep
the umask and modes, never replace special files or a file created meanwhile, are checked before any
work and leave nothing half-written; plots and generated C code as asked; names that look like
markup or math printed and drawn as written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time

import numpy as np
import pytest

from coriolis_cli.errors import OutputError

from .conftest import assert_one_line_error, robot_path
from .input_helpers import TWO_LINK, needs_mujoco, write_file


# ---- numbers ------------------------------------------------------------------------------------
def test_non_finite_results_are_refused(run_cli, tmp_path):
    """τ of q̇ = 1e160 overflows: the engine says so (the command checked τ by name after the
    fact), and nothing is written."""
    out = tmp_path / "tau.json"
    r = run_cli("compute", TWO_LINK, "--q", "0,0", "--qd", "1e160,1e160", "--what", "tau", "-o", out)
    assert_one_line_error(r, "the dynamics overflow at this state", "|qd| up to 1e+160")
    assert not out.exists()


def test_json_output_is_valid_json_even_for_non_finite_values():
    from coriolis_cli.report.formats import to_json

    text = to_json({"a": np.array([1.0, np.nan, np.inf]), "b": float("-inf"), "c": np.float64("nan")})
    assert json.loads(text) == {"a": [1.0, None, None], "b": None, "c": None}
    assert "NaN" not in text and "Infinity" not in text


# ---- files --------------------------------------------------------------------------------------
def test_output_files_honour_the_umask_and_keep_an_existing_mode(run_cli, tmp_path):
    old = os.umask(0o022)
    try:
        new = tmp_path / "new.json"
        assert run_cli("compute", TWO_LINK, "--random", "-o", new).code == 0
        assert (new.stat().st_mode & 0o777) == 0o644
        os.umask(0o077)
        kept = tmp_path / "kept.json"
        kept.write_text("{}")
        kept.chmod(0o640)
        assert run_cli("compute", TWO_LINK, "--random", "-o", kept, "--force").code == 0
        assert (kept.stat().st_mode & 0o777) == 0o640 and json.loads(kept.read_text())["robot"] == "planar_2link"
    finally:
        os.umask(old)


def test_force_never_replaces_a_special_file_and_writes_through_symlinks(run_cli, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert_one_line_error(run_cli("compute", TWO_LINK, "--random", "-o", fifo, "--force", "--format", "json"),
                          "not a regular file")
    assert fifo.is_fifo()
    assert_one_line_error(run_cli("compute", TWO_LINK, "--random", "-o", "/dev/null", "--force", "--format", "json"),
                          "not a regular file")
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert run_cli("compute", TWO_LINK, "--random", "-o", link, "--force").code == 0
    assert link.is_symlink() and json.loads(real.read_text())["robot"] == "planar_2link"
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "later.json")
    assert_one_line_error(run_cli("compute", TWO_LINK, "--random", "-o", dangling), "already exists")
    assert run_cli("compute", TWO_LINK, "--random", "-o", dangling, "--force").code == 0
    assert dangling.is_symlink() and (tmp_path / "later.json").is_file()


def test_sigterm_leaves_no_temporary_file(tmp_path):
    import signal
    import subprocess
    import sys

    out = tmp_path / "gamma.npz"
    for delay in (1.5, 2.5, 3.5):
        proc = subprocess.Popen([sys.executable, "-m", "coriolis_cli.cli", "compute", "serial:300", "--random", "--what",
                                 "Gamma", "--format", "npz", "-o", str(out), "--force"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
        time.sleep(delay)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
        # 143: our handler cleaned up; -15: killed while Python was still starting, before writing anything
        assert proc.returncode in (0, 143, -signal.SIGTERM), proc.stderr.read()
        assert not list(tmp_path.glob(".coriolis-*.part")), delay
        if out.exists():  # finished before the signal: the file is whole
            assert np.load(out)["Gamma"].shape == (300, 300, 300)


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
    same = tmp_path / "same.png"  # a picture's name for the table: --format says what it is
    assert_one_line_error(run_cli("compute", robot_path("panda.urdf"), "--random", "--format", "json", "-o", same,
                                  "--plot", same), "given twice")
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


# ---- generated C code ---------------------------------------------------------------------------
@needs_mujoco
def test_codegen_names_outputs_and_size(tmp_path, run_cli):
    pytest.importorskip("casadi", reason="casadi is not installed (pip install 'coriolis-cli[codegen]')")
    assert_one_line_error(run_cli("codegen", "planar_2link", "-o", tmp_path / "a", "--prefix", "_x"), "--prefix '_x'")
    evil = write_file(tmp_path, "evil.yaml", "name: ../../_evil\nlinks:\n  - {name: a}\n  - {name: b, mass: 1, com: [0.3, 0, 0], "
                  "inertia: [0.01, 0, 0, 0.01, 0, 0.01]}\njoints:\n  - {name: j, type: revolute, parent: a, child: b, "
                  "axis: [0, 1, 0]}\n")
    r = run_cli("codegen", evil, "-o", tmp_path / "evil", "--what", "M")
    assert r.code == 0 and sorted(os.listdir(tmp_path / "evil")) == ["evil.c", "evil.h"], r
    assert_one_line_error(run_cli("codegen", "planar_2link", "-o", "", "--what", "M"), "-o: give the directory")
    os.symlink(tmp_path / "nowhere" / "x", tmp_path / "dangling")
    assert_one_line_error(run_cli("codegen", "planar_2link", "-o", tmp_path / "dangling", "--what", "M"), "symbolic link")
    assert_one_line_error(run_cli("codegen", "serial:150", "-o", tmp_path / "big"), "would take about",
                          "leave it out (--what M,Mdot,C,tau,slotine)")
    assert not (tmp_path / "big").exists()


@needs_mujoco
def test_codegen_of_a_pendulum_compiles_without_a_warning(tmp_path, run_cli):
    """Γ of a 1-DoF pendulum reads no argument: no unused-parameter warning under -Wextra."""
    pytest.importorskip("casadi", reason="casadi is not installed (pip install 'coriolis-cli[codegen]')")
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    pendulum = write_file(tmp_path, "pend.yaml", "name: pend\nlinks:\n  - {name: a}\n  - {name: b, mass: 1, com: [0.3, 0, 0], "
                      "inertia: [0.01, 0, 0, 0.01, 0, 0.01]}\njoints:\n  - {name: j, type: revolute, parent: a, child: b, "
                      "axis: [0, 1, 0]}\n")
    assert run_cli("codegen", pendulum, "-o", tmp_path / "gen").code == 0
    out = subprocess.run(["cc", "-std=c99", "-O0", "-Wall", "-Wextra", "-pedantic", "-c", str(tmp_path / "gen" / "pend.c"),
                          "-o", str(tmp_path / "pend.o")], capture_output=True, text=True)
    assert out.returncode == 0 and "warning" not in out.stderr, out.stderr


# ---- user text is printed and drawn as written --------------------------------------------------
MARKUP_ROBOT = """<robot name="[/r]">
  <link name="[bold red]base[/bold red]"/>
  <link name="[/x]"><inertial><origin xyz="0.2 0 0"/><mass value="1.0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <link name="l2"><inertial><origin xyz="0.1 0 0"/><mass value="0.5"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="[bold red]j1[/bold red]" type="revolute"><parent link="[bold red]base[/bold red]"/><child link="[/x]"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="[/j2]" type="revolute"><parent link="[/x]"/><child link="l2"/><origin xyz="0.4 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>
"""


@pytest.mark.parametrize("argv", [
    ["info"], ["info", "--format", "json"], ["compute", "--random", "--what", "M,C,Gamma,g"],
    ["verify", "--trials", "2", "--ref-trials", "1"], ["skew", "--trials", "2"],
    ["bench", "--what", "C", "--repeat", "3"],
])
def test_names_that_look_like_markup_are_printed_as_written(run_cli, tmp_path, argv):
    folder = tmp_path / "[" / "x]"  # the path contains [/x]
    folder.mkdir(parents=True)
    p = folder / "[bold]r.urdf"
    p.write_text(MARKUP_ROBOT)
    r = run_cli(argv[0], p, *argv[1:])
    assert r.code == 0, r
    text = r.out + r.err
    assert "Traceback" not in text and "MarkupError" not in text
    if argv[0] in ("info", "compute"):
        assert "[bold red]j1[/bold red]" in text and "[/j2]" in text
    if argv == ["info"]:
        assert "[/x]" in text and "[bold red]base[/bold red]" in text


def test_markup_in_errors_and_specs_is_printed_as_written(run_cli, tmp_path):
    assert_one_line_error(run_cli("info", "[/x]:3"), "[/x]:3")
    assert_one_line_error(run_cli("info", "[bold]serial[/bold]:3"), "[bold]serial[/bold]:3")
    assert_one_line_error(run_cli("info", str(tmp_path / "[" / "x]" / "[red]r.urdf")), "x]/[red]r.urdf: no such file")
    p = tmp_path / "w.urdf"
    p.write_text(MARKUP_ROBOT.replace("<inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.02\"", "<inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.05\"", 1))
    r = run_cli("info", p)
    assert r.code == 0 and "warning: 1 link with an inertia no rigid body has: '[/x]'" in r.err, r.err


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
