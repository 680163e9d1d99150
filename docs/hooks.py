"""MkDocs hook: a command's usage and options, taken from the click command itself.

``<!-- command: NAME -->`` in a page becomes the command's description, its usage line and its
options as a definition list, which wraps on a phone (mkdocs-click's plain style is an 80-column
block that does not, and its table style shows click's internal defaults). The options that load a
robot, shared by most commands, are listed once, on the robot files page (``<!-- robot options
-->``), and named with a link on each command's page.

``<!-- BENCHMARKS.md -->`` becomes the repository's BENCHMARKS.md (every timing, with the command
that measured it) below its title, its picture paths made relative to the page;
``<!-- CHANGELOG.md -->`` the repository's CHANGELOG.md below its title; ``<!-- LICENSE -->`` the
licence's text; ``{{ version }}`` the package's version (coriolis_cli.__version__), which the
footer shows too. An API entry is also the target of the name users import (``coriolis_cli.NAME``).
"""

from __future__ import annotations

import html
import inspect
import os
import re

import click

COMMAND = re.compile(r"^<!-- command: ([\w-]+) -->$", re.M)
ROBOT_OPTIONS = re.compile(r"^<!-- robot options -->$", re.M)
BENCHMARKS = re.compile(r"^<!-- BENCHMARKS.md -->$", re.M)
CHANGELOG = re.compile(r"^<!-- CHANGELOG.md -->$", re.M)
LICENSE = re.compile(r"^<!-- LICENSE -->$", re.M)
SHARED = ("floating_base", "strict", "mimic", "base_velocity", "lock", "dof_order", "loops", "independent",
          "xacro_arg", "package_path")


def _cli():
    from coriolis_cli.cli import cli

    return cli


def _text(help_text: str) -> str:
    """click's help as Markdown: HTML and Markdown's emphasis and code marks kept as written."""
    text = html.escape(" ".join(help_text.split()), quote=False)
    return re.sub(r"([\\`*_\[\]])", r"\\\1", text)


def _options(command: click.Command, ctx: click.Context, names) -> list[str]:
    lines = []
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None or param.name not in names or "--help" in param.opts:
            continue
        flags, help_text = record
        lines += [f"`{flags}`", f":   {_text(help_text) or '&nbsp;'}", ""]
    return lines


def _command(name: str) -> str:
    command = _cli().commands[name]
    ctx = click.Context(command, info_name=f"coriolis {name}")
    params = [p.name for p in command.get_params(ctx) if isinstance(p, click.Option)]
    shared = [n for n in SHARED if n in params]
    own = [n for n in params if n not in shared]
    paragraphs = [_text(part) for part in inspect.cleandoc(command.help or "").split("\n\n") if part.strip()]
    lines = [*(x for part in paragraphs for x in (part, "")), "```text", command.get_usage(ctx), "```", ""]
    lines += _options(command, ctx, own)
    if shared:
        flags = ", ".join(f"`--{n.replace('_', '-')}`" for n in shared)
        lines += [f"and the [robot options](../robots.md#robot-options): {flags}.", ""]
    return "\n".join(lines)


def _robot_options() -> str:
    command = _cli().commands["info"]
    return "\n".join(_options(command, click.Context(command, info_name="coriolis info"), SHARED))


def _repository_file(config, name: str) -> str:
    with open(os.path.join(os.path.dirname(config["config_file_path"]), name), encoding="utf-8") as f:
        return f.read()


def _below_title(config, name: str) -> str:
    """The repository's file NAME without its first line (its title: the page has its own)."""
    return _repository_file(config, name).split("\n", 1)[1]


def _benchmarks(config) -> str:
    return _below_title(config, "BENCHMARKS.md").replace("](docs/", "](")


def _version() -> str:
    from coriolis_cli import __version__

    return __version__


def on_config(config):
    config["copyright"] = f"coriolis {_version()} · BSD-3-Clause licence"
    return config


def _licence(config) -> str:
    return _repository_file(config, "LICENSE").strip()  # paragraphs and a numbered list: Markdown as it stands


def on_page_markdown(markdown, page, config, files):
    markdown = markdown.replace("{{ version }}", _version())
    markdown = LICENSE.sub(lambda m: _licence(config), markdown)
    markdown = COMMAND.sub(lambda m: _command(m.group(1)), markdown)
    markdown = BENCHMARKS.sub(lambda m: _benchmarks(config), markdown)
    markdown = CHANGELOG.sub(lambda m: _below_title(config, "CHANGELOG.md"), markdown)
    return ROBOT_OPTIONS.sub(lambda m: _robot_options(), markdown)


ENTRY = re.compile(r"^::: ([\w.]+)\s*$", re.M)


def on_page_content(content, page, config, files):
    """An API entry documented where it is defined (``::: coriolis_cli.engine.api.mass_matrix``) is
    also the target of the name users import, ``coriolis_cli.mass_matrix``, in cross-references."""
    import coriolis_cli

    autorefs = config.plugins["autorefs"]
    for path in ENTRY.findall(page.markdown or ""):
        name = path.rpartition(".")[2]
        framework = path.startswith(("coriolis_cli.jax.", "coriolis_cli.torch."))  # their own names already
        if name in coriolis_cli.__all__ and not framework and path != f"coriolis_cli.{name}":
            autorefs.register_anchor(page, f"coriolis_cli.{name}", anchor=path, primary=True)
    return content
