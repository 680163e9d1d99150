"""The documentation site (mkdocs.yml, docs/): it builds strictly, every command has its page, and
the pages show what the code says (the option tables come from the click commands themselves)."""

from __future__ import annotations

import os
import subprocess
import sys

import click
import pytest

from .conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "docs"))
from hooks import SHARED  # noqa: E402  (the options that load a robot, listed once on the robot files page)


def test_the_site_builds_strictly_with_a_page_per_command(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    # not -q: a quiet build drops the warnings that --strict counts, and passes with them
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0 and "WARNING" not in done.stderr, done.stderr
    from coriolis_cli.cli import main  # noqa: F401  (registers the commands)
    from coriolis_cli.cli.common import cli

    for name in cli.commands:
        page = tmp_path / "site" / "commands" / name / "index.html"
        assert page.exists(), name
        text = page.read_text(encoding="utf-8")
        assert f"coriolis {name}" in text, name
        for option in cli.commands[name].params:  # every option of the command, from the command itself
            if isinstance(option, click.Option) and option.name not in SHARED:
                assert f"<code>{option.opts[0]}" in text, (name, option.opts[0])
    robots = (tmp_path / "site" / "robots" / "index.html").read_text(encoding="utf-8")
    assert all(f"<code>--{name.replace('_', '-')}" in robots for name in SHARED)
    derivatives = (tmp_path / "site" / "api" / "derivatives" / "index.html").read_text(encoding="utf-8")
    assert "inverse_dynamics_derivatives" in derivatives and "tangent space" in derivatives
