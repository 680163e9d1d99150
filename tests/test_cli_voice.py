"""The CLI as users meet it: usage errors in one voice, help for every option, the state a result
was computed at, conflicting seeds, piped verify, and the structure pictures."""

from __future__ import annotations

import click
import pytest

from coriolis_cli.cli import cli

from .conftest import assert_one_line_error, robot_path


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.mark.parametrize("args,fragment", [
    (["compute"], "Missing argument 'ROBOT' (see 'coriolis compute --help')"),
    (["nosuch"], "No such command 'nosuch'"),
    (["compute", "robots/panda.urdf", "--factorization", "bad"], "'--factorization'"),
    (["verify", "--trials", "x"], "'--trials'"),
    (["simulate", "robots/panda.urdf", "--rate", "0"], "'--rate'"),
    (["info", "robots/panda.urdf", "--bogus"], "No such option '--bogus' (see 'coriolis info --help')"),
])
def test_usage_errors_speak_like_every_other_error(run_cli, args, fragment):
    r = run_cli(*args)
    assert_one_line_error(r, fragment, "--help")
    assert r.err.startswith("error: ") and "Usage:" not in r.err


def _has_default(p: click.Option) -> bool:
    """A value the option takes when not given (click 8.2+ marks 'none' with a sentinel)."""
    return p.default is not None and p.default is not False and "UNSET" not in repr(p.default)


def test_every_option_has_help_with_its_default_and_every_command_an_example():
    missing, no_example = [], []
    for name, cmd in cli.commands.items():
        for p in cmd.params:
            if isinstance(p, click.Option):
                if not p.help:
                    missing.append(f"{name} {p.opts[0]}")
                elif _has_default(p) and not p.is_flag and not p.show_default and "default" not in p.help.lower():
                    missing.append(f"{name} {p.opts[0]} (default not shown)")
        if not (cmd.epilog or "").lstrip("\b\n").startswith("Example: coriolis " + name):
            no_example.append(name)
    assert not missing, missing
    assert not no_example, no_example


def test_help_ends_with_a_real_example(run_cli):
    for name in cli.commands:
        r = run_cli(name, "--help")
        last = [line for line in r.out.splitlines() if line.strip()][-1]
        assert r.code == 0 and last.strip().startswith(f"Example: coriolis {name}"), (name, last)


def test_random_state_is_shown_by_dof_name(run_cli):
    r = run_cli("compute", robot_path("planar_2link.urdf"), "--random", "--seed", "1", "--what", "M")
    assert r.code == 0, r
    head = r.out.split("M (mass matrix)")[0]
    assert "random state (--seed 1)" in head and "joint1" in head and "joint2" in head and "q̇" in head
    import coriolis_cli as cc
    from coriolis_cli.cli.common import random_state

    q, qd = random_state(cc.load_robot(robot_path("planar_2link.urdf")), 1)
    for value in (*q, *qd):
        assert f"{value: .6g}".strip() in head


def test_generate_refuses_conflicting_seeds(run_cli, tmp_path):
    out = tmp_path / "s.urdf"
    assert_one_line_error(run_cli("generate", "serial:5:7", "--seed", "3", "-o", out), "two seeds", "7", "3")
    assert not out.exists()
    assert run_cli("generate", "serial:5:7", "--seed", "7", "-o", out).code == 0
    same = tmp_path / "same.urdf"
    assert run_cli("generate", "serial:5", "--seed", "7", "-o", same).code == 0
    assert out.read_text() == same.read_text()


def test_piped_verify_says_each_robot_as_it_finishes(run_cli):
    r = run_cli("verify", robot_path("planar_2link.urdf"), robot_path("serial20.urdf"), "--trials", "3", "--ref-trials", "1")
    assert r.code == 0, r
    lines = r.out.splitlines()
    first = [k for k, line in enumerate(lines) if line.startswith("verified ")]
    assert len(first) == 2 and first == [0, 1]
    assert "planar_2link.urdf (nv = 2, 3 trials" in lines[0] and "applicable checks passed" in lines[0]


def test_structure_pictures(run_cli, tmp_path):
    png = tmp_path / "m.png"
    r = run_cli("compute", robot_path("quadruped.urdf"), "--floating-base", "--random", "--what", "M", "--plot", png)
    assert r.code == 0, r
    data = png.read_bytes()
    w, h = _png_size(data)
    assert w >= 1200 and h >= 800 and len(data) > 50_000
    tree = tmp_path / "tree.png"
    r = run_cli("info", robot_path("quadruped.urdf"), "--floating-base", "--plot", tree)
    assert r.code == 0, r
    w, h = _png_size(tree.read_bytes())
    assert w >= 600 and h >= 400 and len(tree.read_bytes()) > 20_000
    assert_one_line_error(run_cli("info", robot_path("quadruped.urdf"), "--plot", tree), "exists")


def test_gamma_pattern_marks_exactly_the_triples_on_one_path():
    import numpy as np

    import coriolis_cli as cc
    from coriolis_cli.report.plots import gamma_montage

    robot = cc.load_robot(robot_path("binary20.urdf"))
    q = cc.random_configuration(robot, 1)
    G = cc.christoffel(robot, q)
    R = robot.dof_related
    pattern = gamma_montage(G, R, 1e-12 * np.abs(cc.mass_matrix(robot, q)).max())
    n = robot.nv
    cols = int(np.ceil(np.sqrt(n)))
    for k in (0, 7, n - 1):
        r, c = divmod(k, cols)
        cell = pattern[r * (n + 1) : r * (n + 1) + n, c * (n + 1) : c * (n + 1) + n]
        allowed = R & R[:, k][:, None] & R[:, k][None, :]
        assert np.array_equal(cell > 0, allowed)  # nothing drawn outside a common path
        assert np.all(G[:, :, k][~allowed] == 0.0)  # and there Γ is exactly zero
