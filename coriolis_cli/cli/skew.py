"""`coriolis skew`: skew-symmetry of Ṁ − 2C for each factorization and a counter-example."""

from __future__ import annotations

import sys

import click

from .common import cli, emit, load, robot_argument, robot_options


@cli.command()
@robot_argument
@robot_options
@click.option("--trials", type=click.IntRange(1, 100_000), default=20, show_default=True, help="Random states per factorization.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random states and of S.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="table (rich, for people) or json (every number, for programs).")
def skew(robot, floating_base, trials, seed, fmt):
    """Skew-symmetry of Ṁ − 2C for each factorization, beside a valid but non-admissible one.

    Example: coriolis skew robots/humanoid.urdf --floating-base
    """
    from ..checks.skew import skew_report
    from ..report.checks import skew_table
    from ..report.formats import to_json

    model = load(robot, floating_base)
    rows = skew_report(model, trials, seed)
    ok = all(r.as_expected for r in rows)
    if fmt == "json":
        emit(to_json({"robot": model.name, "trials": trials, "as_expected": ok, "rows": [r.as_dict() for r in rows]}), None, False)
    else:
        emit(skew_table(model.name + (" +floating" if floating_base else ""), rows, trials), None, False)
    if not ok:
        sys.exit(1)
