"""`coriolis info`: the kinematic tree, DoF, depth, mass, joints and physical consistency."""

from __future__ import annotations

import click

from .common import cli, emit, load, robot_argument, robot_options


@cli.command()
@robot_argument
@robot_options
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="table (rich, for people) or json (every number, for programs).")
@click.option("--plot", type=click.Path(dir_okay=False),
              help="Also draw the kinematic tree (bodies as nodes by depth, joints as labelled edges) to a PNG file.")
@click.option("--force", is_flag=True, help="Overwrite an existing plot file.")
def info(robot, floating_base, fmt, plot, force):
    """The kinematic tree, DoF, depth, mass and joints of ROBOT.

    Example: coriolis info robots/humanoid.urdf --floating-base
    """
    from ..report.formats import to_json
    from ..report.output import check_writable
    from ..report.tables import info_record, info_renderable

    if plot:
        check_writable(plot, force)
    model = load(robot, floating_base)
    if plot:
        from ..report.plots import tree_plot

        emit(tree_plot(model), plot, force)
    emit(to_json(info_record(model)) if fmt == "json" else info_renderable(model), None, False)
