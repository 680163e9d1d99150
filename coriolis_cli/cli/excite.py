"""`coriolis excite ROBOT -o trajectory.csv`: a periodic excitation trajectory for identification."""

from __future__ import annotations

import click

from ..errors import StateError
from .common import check_outputs, cli, err, fixed_robot_options, load, robot_argument, styled


MAX_SAMPLES = 1e7  # of the trajectory written: 10,000 s at 1 kHz


@cli.command()
@robot_argument
@fixed_robot_options
@click.option("-o", "--output", required=True, help="The trajectory: .csv or .parquet (time, q/<joint>, qd/<joint>, qdd/<joint>).")
@click.option("--period", type=float, default=10.0, show_default=True, help="Seconds; the trajectory repeats.")
@click.option("--harmonics", type=int, default=5, show_default=True, help="Fourier terms per joint.")
@click.option("--rate", type=float, default=1000.0, show_default=True, help="Samples per second written.")
@click.option("--max-acceleration", type=float, default=5.0, show_default=True,
              help="rad/s² (m/s²) for every joint: URDF gives none.")
@click.option("--seconds", type=float, default=60.0, show_default=True, help="Longest search for the coefficients.")
@click.option("--seed", type=int, default=0, show_default=True, help="The search's random start.")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def excite(robot, output, period, harmonics, rate, max_acceleration, seconds, seed, force):
    """Design a periodic trajectory within ROBOT's joint position and velocity limits and
    --max-acceleration that minimizes the condition number of the identification regressor.

    Example: coriolis excite panda -o excitation.csv --period 10
    """
    import numpy as np

    from ..estimation.excitation import DEFAULT_VELOCITY, design
    from ..report.streams import TableWriter, table_format

    table_format(output)
    if not (0 < rate < float("inf") and 0 < period < float("inf")) or period * rate > MAX_SAMPLES:
        raise StateError(f"--rate {rate:g} over a period of {period:g} s: give a positive rate and period, at most "
                         f"{MAX_SAMPLES:,.0f} samples")
    check_outputs(force, output, inputs=(robot,))
    model = load(robot)
    found = design(model, period, harmonics, max_acceleration=max_acceleration, seed=seed, seconds=seconds)
    t = np.arange(int(round(period * rate))) / rate
    q, qd, qdd = found.states(t)
    names = found.joint_names
    columns = ["time"] + [f"q/{n}" for n in names] + [f"qd/{n}" for n in names] + [f"qdd/{n}" for n in names]
    with TableWriter(output, columns, force) as w:
        w.write(np.concatenate([t[:, None], q, qd, qdd], axis=1))
    unlimited = [b.joint.name for b in model.bodies if b.joint.limits is None or not b.joint.limits.velocity]
    click.echo(f"condition number {found.condition:.4g} (from {found.condition_start:.4g} at the random start; "
               f"{found.evaluations} evaluations in {found.seconds:.1f} s); {len(t):,} samples over {period:g} s, "
               f"{harmonics} harmonics")
    if unlimited:
        err.print(styled(("note:", "yellow"), f" {len(unlimited)} joint(s) have no velocity limit in the file "
                         f"({', '.join(unlimited[:3])}{', ...' if len(unlimited) > 3 else ''}): "
                         f"{DEFAULT_VELOCITY:g} rad/s used"), soft_wrap=True)
    err.print(styled(("wrote", "green"), f" {output}"), soft_wrap=True)
