"""Hostile input, second round: every class answers quickly with a one-line error and exit 2, or
computes correctly; never a silently wrong number, never exit 3."""

import json
import os
import time

import numpy as np
import pytest

import coriolis_cli as cc

from .conftest import assert_one_line_error, robot_path

TWO_LINK = robot_path("planar_2link.urdf")
TWO_LINK_TEXT = open(TWO_LINK).read()


# ---- numbers ------------------------------------------------------------------------------------
def test_non_finite_results_are_refused_by_name(run_cli, tmp_path):
    out = tmp_path / "tau.json"
    r = run_cli("compute", TWO_LINK, "--q", "0,0", "--qd", "1e160,1e160", "--what", "tau", "-o", out)
    assert_one_line_error(r, "tau is not finite", "nothing was written")
    assert not out.exists()


def test_json_output_is_valid_json_even_for_non_finite_values():
    from coriolis_cli.report.formats import to_json

    text = to_json({"a": np.array([1.0, np.nan, np.inf]), "b": float("-inf"), "c": np.float64("nan")})
    assert json.loads(text) == {"a": [1.0, None, None], "b": None, "c": None}
    assert "NaN" not in text and "Infinity" not in text


@pytest.mark.parametrize("value", ["1_0", "0x10", "1,0", "infinity1", " "])
def test_urdf_numbers_are_decimal_only(tmp_path, value):
    p = tmp_path / "m.urdf"
    p.write_text(TWO_LINK_TEXT.replace('<mass value="1.0"', f'<mass value="{value}"', 1))
    assert f'"{value}"' in p.read_text()
    with pytest.raises(cc.ModelError, match="link 'link1' <mass value>"):
        cc.load_robot(str(p))


@pytest.mark.parametrize("value", ["1_0", "0x1p3", "nan", "1e400"])
def test_state_numbers_are_decimal_and_finite(run_cli, value):
    r = run_cli("compute", TWO_LINK, "--q", f"0,{value}")
    assert_one_line_error(r, "--q:")


def test_yaml_numbers(tmp_path):
    base = "name: x\nlinks:\n  - name: a\n  - {name: b, mass: MASS, com: [0.1, 0, 0], inertia: [1e-3, 0, 0, 1e-3, 0, 1e-3]}\n" \
           "joints:\n  - {name: j, type: revolute, parent: a, child: b, axis: [0, 0, 1]}\n"
    p = tmp_path / "r.yaml"
    p.write_text(base.replace("MASS", "1e-1"))  # YAML 1.1 reads this as a string: still a number here
    assert cc.load_robot(str(p)).bodies[0].mass == 0.1
    for bad, fragment in (('"1_0"', "must be a number"), ("1" + "0" * 400, "too large"), ("1.0e308", "too large")):
        p.write_text(base.replace("MASS", bad))
        with pytest.raises(cc.ModelError, match=fragment):
            cc.load_robot(str(p))


def test_huge_origins_are_refused_and_huge_axes_normalized(tmp_path):
    p = tmp_path / "r.yaml"
    text = "name: x\nlinks:\n  - name: a\n  - {name: b, mass: 1.0, com: [COM, 0, 0], inertia: [1.0, 0, 0, 1.0, 0, 1.0]}\n" \
           "joints:\n  - {name: j, type: revolute, parent: a, child: b, axis: [AX, AX, 0]}\n"
    p.write_text(text.replace("COM", "1.0e308").replace("AX", "1.0"))
    with pytest.raises(cc.ModelError, match="inertial origin 1e\\+308 is too large"):
        cc.load_robot(str(p))
    p.write_text(text.replace("COM", "0.1").replace("AX", "1.0e308"))
    axis = cc.load_robot(str(p)).bodies[0].joint.axis
    assert np.allclose(axis, [2**-0.5, 2**-0.5, 0])


# ---- exit 2, not 3 --------------------------------------------------------------------------------
def test_negative_seed(run_cli):
    assert_one_line_error(run_cli("info", "serial:10:-1"), "seed must not be negative")


def test_state_file_with_a_400_digit_integer(run_cli, tmp_path):
    p = tmp_path / "s.json"
    p.write_text('{"q": {"joint1": 1' + "0" * 400 + "}}")
    assert_one_line_error(run_cli("compute", TWO_LINK, "--state", p), "must be a finite number")


@pytest.mark.parametrize("kind", ["json state", "yaml state", "yaml robot"])
def test_deeply_nested_documents(run_cli, tmp_path, kind):
    deep = "[" * 100_000 + "]" * 100_000
    if kind == "json state":
        p = tmp_path / "s.json"
        p.write_text(deep)
        r = run_cli("compute", TWO_LINK, "--state", p)
    elif kind == "yaml state":
        p = tmp_path / "s.yaml"
        p.write_text("q: " + deep)
        r = run_cli("compute", TWO_LINK, "--state", p)
    else:
        p = tmp_path / "r.yaml"
        p.write_text("links: " + deep)
        r = run_cli("info", p)
    assert_one_line_error(r, "nested too deeply")


def test_yaml_alias_bomb_is_refused_in_milliseconds(run_cli, tmp_path):
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcdef", "bcdefg"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    p = tmp_path / "bomb.yaml"
    p.write_text("\n".join(lines) + "\nlinks: *g\njoints: []\n")
    t = time.perf_counter()
    r = run_cli("info", p)
    assert time.perf_counter() - t < 15  # seconds, not minutes, on a loaded machine
    assert_one_line_error(r, "aliases expand to more than")
    s = tmp_path / "bomb_state.yaml"
    s.write_text("\n".join(lines) + "\nq: *g\n")
    assert_one_line_error(run_cli("compute", TWO_LINK, "--state", s), "aliases expand to more than")


def test_inputs_are_bounded(run_cli, tmp_path, monkeypatch):
    assert_one_line_error(run_cli("info", "/dev/zero"), "larger than 64 MiB", "CORIOLIS_MAX_FILE_MB")
    assert_one_line_error(run_cli("compute", TWO_LINK, "--state", "/dev/zero"), "larger than 64 MiB")
    monkeypatch.setenv("CORIOLIS_MAX_BODIES", "5")
    assert_one_line_error(run_cli("info", robot_path("panda.urdf")), "more than the 5 allowed", "CORIOLIS_MAX_BODIES")
    monkeypatch.setenv("CORIOLIS_MAX_FILE_MB", "1")
    big = tmp_path / "big.urdf"
    big.write_text(TWO_LINK_TEXT.replace("<robot", "<!--" + "x" * 2**20 + "-->\n<robot", 1))
    assert_one_line_error(run_cli("info", big), "larger than 1 MiB")


@pytest.mark.parametrize("argv, fragment", [
    (["bench", "--dofs", "1:100000000000"], "must stay within"),
    (["bench", "--dofs", "1:6000"], "must stay within"),
    (["bench", "--dofs", ",".join(["5"] * 300)], "at most 200 systems"),
])
def test_caps_are_checked_before_anything_is_built(run_cli, argv, fragment):
    t = time.perf_counter()
    assert_one_line_error(run_cli(*argv), fragment)
    assert time.perf_counter() - t < 15  # seconds, not minutes, on a loaded machine


def test_trial_counts_are_capped(run_cli):
    r = run_cli("verify", "--trials", "100000000000000000000")
    assert r.code == 2 and "1000000" in r.err


# ---- memory --------------------------------------------------------------------------------------
def test_gamma_size_has_its_own_flag_and_a_memory_check(run_cli, tmp_path, monkeypatch):
    out = tmp_path / "g.npz"
    out.write_bytes(b"old")
    r = run_cli("compute", "serial:400", "--random", "--what", "Gamma", "-o", out, "--force")
    assert_one_line_error(r, "MiB", "--allow-large")  # --force overwrites, it does not lift the guard
    assert out.read_bytes() == b"old"
    monkeypatch.setattr(cc.engine.data, "available_memory", lambda: 2**28)  # a 256 MiB machine
    r = run_cli("compute", "serial:400", "--random", "--what", "Gamma", "-o", out, "--force", "--allow-large")
    assert_one_line_error(r, "needs about", "GiB available")
    assert out.read_bytes() == b"old"
    with pytest.raises(cc.SizeError, match="force=True"):  # the library speaks API, not CLI flags
        cc.christoffel(cc.load_robot("serial:400"), np.zeros(400))


# ---- user text is printed as written ---------------------------------------------------------------
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


# ---- files ----------------------------------------------------------------------------------------
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
