"""`coriolis info`: the kinematic tree, DoF, depth, mass, joints and physical consistency."""

from __future__ import annotations

import click

from .common import check_outputs, cli, emit, load, robot_options


@cli.command()
@click.argument("robot", metavar="ROBOT", required=False)
@robot_options
@click.option("--list", "list_bundled", is_flag=True, help="List the robots installed with coriolis, which can be given "
              "by name (coriolis info panda), with their DoF.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="table (rich, for people) or json (every number, for programs).")
@click.option("--plot", type=click.Path(dir_okay=False),
              help="Also draw the kinematic tree (bodies as nodes by depth, joints as labelled edges) to a PNG file.")
@click.option("--force", is_flag=True, help="Overwrite an existing plot file.")
def info(robot, floating_base, list_bundled, fmt, plot, force):
    """The kinematic tree, DoF, depth, mass and joints of ROBOT: a URDF or YAML file, - for
    standard input, a bundled robot's name (see --list) or a spec such as quadruped:20.

    Example: coriolis info humanoid --floating-base
    """
    from ..report.formats import to_json
    from ..report.output import figure_format
    from ..report.tables import bundled_record, bundled_table, info_record, info_renderable

    if list_bundled:
        if robot is not None:
            raise click.UsageError("--list takes no ROBOT")
        rec = bundled_record()
        emit(to_json(rec) if fmt == "json" else bundled_table(rec), None, False)
        return
    if robot is None:
        raise click.UsageError("Missing argument 'ROBOT'")
    check_outputs(force, None, plot)
    model = load(robot, floating_base)
    if plot:
        from ..report.plots import tree_plot

        emit(tree_plot(model, figure_format(plot)), plot, force)
    emit(to_json(info_record(model)) if fmt == "json" else info_renderable(model), None, False)
