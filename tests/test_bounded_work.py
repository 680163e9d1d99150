"""Bounded work: deep documents, alias bombs, huge files, too many bodies, systems or trials, Γ and
simulations too large for memory, trees too large to draw, and long batches are refused quickly in
one line with exit 2 before anything is built, or stop promptly on SIGTERM."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

import coriolis_cli as cc

from .conftest import ROOT, assert_one_line_error, robot_path
from .input_helpers import TWO_LINK, TWO_LINK_TEXT


# ---- input size and depth -----------------------------------------------------------------------
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


# ---- caps on what is asked for ------------------------------------------------------------------
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


def test_huge_trees_are_not_drawn(run_cli, tmp_path):
    r = run_cli("info", "serial:1000", "--plot", tmp_path / "t.png")
    assert_one_line_error(r, "draws trees of up to 400 bodies")
    assert not (tmp_path / "t.png").exists()


# ---- memory -------------------------------------------------------------------------------------
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
    with pytest.raises(cc.SizeError, match="above the 256 MiB limit") as refused:
        cc.christoffel(cc.load_robot("serial:400"), np.zeros(400))
    assert "force=True" in refused.value.hint  # the library speaks API, not CLI flags


def test_simulate_checks_memory_in_bytes(run_cli):
    """500 s at 1 MHz of a 1-DoF linkage: 5e8 steps passed the steps × DoF guard and ended in
    MemoryError (16 GB of samples); now the steps are bounded by the time they take, and the
    samples counted in bytes against the machine's memory."""
    r = run_cli("simulate", robot_path("fourbar.yaml"), "--duration", "500", "--rate", "1e6")
    assert_one_line_error(r, "500,000,000 steps (duration × rate) would take", "lower --rate")
    from coriolis_cli.engine import check_memory

    with pytest.raises(cc.SizeError, match="samples"):
        check_memory(2**60, "the samples")


# ---- interruption -------------------------------------------------------------------------------
SIGTERM_SCRIPT = r"""
import signal, sys, time
import numpy as np
import coriolis_cli as cc

def stop(signum, frame):
    raise SystemExit(143)

signal.signal(signal.SIGTERM, stop)  # as the CLI does: Python runs it between two bytecodes
robot = cc.load_robot("serial:100")
cc.set_num_threads(1)  # the batch's length is its states', not the machine's cores' (64 would end it in about 0.1 s)
rng = np.random.default_rng(0)
cc.forward_dynamics(robot, np.zeros((2, 100)), np.zeros((2, 100)), np.zeros((2, 100)))  # compiled now
K = 300_000
Q = rng.uniform(-3, 3, (K, 100))
print("ready", flush=True)
cc.forward_dynamics(robot, Q, Q, Q)  # several seconds of compiled work on one thread
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
    assert waited < 5.0  # a slice (about 0.1 s of work), not the batch
