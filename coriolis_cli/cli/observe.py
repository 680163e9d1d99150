"""`coriolis observe ROBOT RECORDING`: collisions found by the momentum and energy observers."""

from __future__ import annotations

import math

import click

from ..errors import StateError
from .common import (check_outputs, cli, emit, err, load, reading_options, recording_options, robot_argument, robot_options,
                     say_note, styled)


def _quiet(text: str | None):
    """(start, end) in seconds, None where not given; a stretch that cannot hold a sample is refused."""
    if text is None:  # the default, 0:1, taken where the recording has it
        return None, None
    start, sep, end = text.partition(":")
    try:
        span = (float(start) if start else None, float(end) if end else None) if sep else (float(start), None)
    except ValueError:
        raise StateError(f"--quiet '{text}': give START:END in seconds from the first sample (e.g. 0:1)") from None
    first = 0.0 if span[0] is None else span[0]
    if not all(x is None or math.isfinite(x) for x in span) or first < 0 or (span[1] is not None and span[1] <= first):
        raise StateError(f"--quiet '{text}': give START:END with 0 <= START < END, in seconds from the first sample")
    return span


@cli.command()
@robot_argument
@click.argument("recording", metavar="RECORDING")
@robot_options
@click.option("--bandwidth", type=float, default=50.0, show_default=True,
              help="The observer's gain K as a bandwidth (1/s): r follows τ_ext with time constant 1/K.")
@click.option("--threshold", default="auto", show_default=True,
              help="auto: 6 × the residual's robust spread, measured from a baseline that follows the residual's "
              "drift between events (where static friction leaves the arm after a push); friction: 6 × the spread "
              "plus each joint's Coulomb friction while it is at rest (the former auto); quiet: 3 × the largest |r| "
              "of the --quiet stretch; or a value (N·m or N) for every DoF. 5 % of the joint's recorded |τ| is added "
              "either way, and an event lasts 50 ms beyond the residual's own decay.")
@click.option("--quiet", "quiet", default=None, help="START:END (s from the first sample) of motion without contact, "
              "which sets the threshold of --threshold quiet and raises auto's where the residual is larger there "
              "(default 0:1, where the recording has it; a stretch given must lie within the recording).")
@recording_options
@click.option("--no-friction", is_flag=True,
              help="Take the recorded τ as what reaches the links, without the joints' friction the robot file gives.")
@click.option("--plot", type=click.Path(dir_okay=False), help="Residual per DoF, threshold band, events shaded (PNG, SVG, PDF).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="table: the events; json: the events, thresholds and settings.")
@click.option("-o", "--output", help="The residual per sample: .parquet, .csv or .mcap (r/<dof>, threshold/<dof>, "
              "baseline/<dof> under --threshold auto, energy/sigma).")
@click.option("--force", is_flag=True, help="Overwrite existing files.")
def observe(robot, recording, floating_base, bandwidth, threshold, quiet, topic, base_topic, effort_scale, effort_offset,
            window, no_friction, plot, fmt, output, force):
    """Find collisions along RECORDING (its effort is the applied τ) with the generalized-momentum
    observer r = K (p − p(0) − ∫ (τ + Cᵀq̇ − g + r)), which follows τ_ext, and the energy observer.

    Example: coriolis observe panda run.mcap --plot residual.png
    """
    from ..estimation.observers import observe as run
    from ..estimation.observers import require_observable
    from ..report.output import figure_format
    from ..report.streams import table_format

    from ..estimation.observers import THRESHOLD_RULES

    limit = threshold
    if threshold not in THRESHOLD_RULES:
        try:
            limit = float(threshold)
        except ValueError:
            raise StateError(f"--threshold '{threshold}': {', '.join(THRESHOLD_RULES)} or a number (N·m or N)") from None
        if not (limit > 0 and limit < float("inf")):
            raise StateError("--threshold must be positive and finite")
    if output:
        table_format(output)
    if plot:
        figure_format(plot)
    check_outputs(force, output, plot, inputs=(robot, recording))
    model = load(robot, floating_base)
    options = reading_options(model, (recording,), topic, base_topic, window, effort_scale=effort_scale,
                              effort_offset=effort_offset)
    require_observable(model, recording, **options)  # at once, not after the compile
    obs = run(model, recording, bandwidth, limit, _quiet(quiet), friction=not no_friction, **options)
    from ..model.friction import friction_note, has_friction

    if not no_friction and has_friction(model):
        say_note(friction_note(model, "the residual takes away"))
    if plot:
        from ..report.plots import residual_plot

        emit(residual_plot(obs, figure_format(plot)), plot, force)
    if output:
        import numpy as np

        from ..report.streams import TableWriter

        columns = (["time"] + [f"r/{d}" for d in obs.dof_names] + [f"threshold/{d}" for d in obs.dof_names]
                   + ([f"baseline/{d}" for d in obs.dof_names] if obs.baseline is not None else []) + ["energy/sigma"])
        parts = [obs.t[:, None], obs.r, obs.threshold] + ([obs.baseline] if obs.baseline is not None else [])
        with TableWriter(output, columns, force) as w:
            w.write(np.concatenate(parts + [obs.sigma[:, None]], axis=1))
    from ..report.observe import observation_json, observation_table

    if fmt == "json":
        from ..report.formats import to_json

        emit(to_json(observation_json(obs)), None, False)
    else:
        emit(observation_table(obs), None, False)
    if output:
        err.print(styled(("wrote", "green"), f" {output}: {len(obs.t):,} samples"), soft_wrap=True)
