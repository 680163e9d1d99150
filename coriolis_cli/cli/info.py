"""`coriolis info`: the kinematic tree, DoF, depth, mass, joints and physical consistency."""

from __future__ import annotations

import click

from .common import cli, emit, load, robot_argument, robot_options


@cli.command()
@robot_argument
@robot_options
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def info(robot, floating_base, fmt):
    """The kinematic tree, DoF, depth, mass and joints of ROBOT."""
    from ..report.formats import to_json
    from ..report.tables import info_record, info_renderable

    model = load(robot, floating_base)
    emit(to_json(info_record(model)) if fmt == "json" else info_renderable(model), None, False)
