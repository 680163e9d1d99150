"""`coriolis compute ROBOT --recording FILE`: the dynamics along a recording, streamed to a table;
many recordings (a folder, a glob) in one process or on Dask workers."""

from __future__ import annotations

import os

from ...errors import StateError
from ..common import err, load, progress, reading_options, say_note, styled


def run_recording(robot, floating_base, recording, what, topic, base_topic, window, workers, scheduler, fmt, output, force,
                  friction=True):
    from ...along import DEFAULT_WHAT, columns, parse_what
    from ...report.streams import TableWriter, table_format

    if not output:
        raise StateError("--recording writes a table: give -o FILE (.parquet, .csv, .npz or .mcap; a folder for many "
                         "recordings)")
    if fmt not in (None, "csv", "npz"):
        raise StateError("--format along a recording follows -o's extension (.parquet, .csv, .npz, .mcap)")
    quantities = parse_what(what) if what else DEFAULT_WHAT
    from ...along.distributed import expand_inputs

    inputs = expand_inputs(recording)
    from ...report.output import check_not_an_input

    check_not_an_input((output,), (robot, recording, *inputs))
    model = load(robot, floating_base)
    options = dict(reading_options(model, inputs, topic, base_topic, window), friction=friction)
    from ...model.friction import friction_note, has_friction

    if friction and "tau" in quantities and has_friction(model):
        say_note(friction_note(model, "τ includes"))
    if len(inputs) > 1 or workers is not None or scheduler is not None:
        from ...along.distributed import run_many

        parts = run_many(model, inputs, output, quantities, options, workers=workers, scheduler=scheduler, force=force)
        err.print(styled(("wrote", "green"), f" {output}: {len(parts)} part{'s' if len(parts) > 1 else ''}, "
                         f"{sum(n for _, n in parts):,} samples"), soft_wrap=True)
        return
    table_format(output)
    from ...along import along
    from ...recordings.sources import estimated_samples

    total = estimated_samples(inputs[0], topic)
    bar, task = progress(total, f"{os.path.basename(inputs[0])}", remaining=True)
    with bar, TableWriter(output, columns(model, quantities), force) as writer:
        for chunk in along(model, inputs[0], quantities, **options):
            writer.write(chunk)
            bar.update(task, completed=writer.rows)
    err.print(styled(("wrote", "green"), f" {output}: {writer.rows:,} samples"), soft_wrap=True)

