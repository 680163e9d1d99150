"""`coriolis identify ROBOT RECORDING...`: inertial parameters (and friction) fitted to recordings."""

from __future__ import annotations

import os

import click

from ..errors import StateError
from .common import check_outputs, cli, compile_first, emit, err, load, robot_argument, robot_options, strict, styled


@cli.command()
@robot_argument
@click.argument("recordings", nargs=-1, required=True, metavar="RECORDING...")
@robot_options
@click.option("-o", "--output", help="The identified robot: .urdf or .yaml, everything but the inertias as in ROBOT.")
@click.option("--form", type=click.Choice(["torque", "momentum", "energy"]), default="torque", show_default=True,
              help="torque: Y θ = τ with q̈ differentiated; momentum, energy: filtered forms that need no q̈.")
@click.option("--method", type=click.Choice(["ols", "consistent"]), default="consistent", show_default=True,
              help="consistent: every body's pseudo-inertia ⪰ 0 (cvxpy, Clarabel); ols: plain least squares.")
@click.option("--friction", type=click.Choice(["none", "viscous", "coulomb-viscous"]), default="none",
              show_default=True, help="Friction fitted per 1-DoF joint alongside the inertias.")
@click.option("--weight", type=float, default=1e-6, show_default=True,
              help="Pull towards ROBOT's parameters, relative to the data's mean column weight (see README).")
@click.option("--cutoff", type=float, default=20.0, show_default=True, help="λ (1/s) of the momentum and energy forms' filter.")
@click.option("--effort", type=click.Choice(["held", "sampled"]), default="held", show_default=True,
              help="held: each τ is a command held until the next sample; sampled: measured at its stamp.")
@click.option("--validate", "validation", multiple=True, metavar="RECORDING",
              help="Torque RMS per joint on a recording not fitted (repeatable; default: the first fitted one).")
@click.option("--plot", type=click.Path(dir_okay=False), help="Measured against predicted torque (PNG, SVG, PDF).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--topic", help="The JointState topic (see compute --recording).")
@click.option("--base-topic", help="A floating base's Odometry topic.")
@click.option("--window", type=int, default=11, show_default=True, help="Savitzky–Golay window for q̇, q̈.")
@click.option("--force", is_flag=True, help="Overwrite existing files.")
def identify(robot, recordings, floating_base, output, form, method, friction, weight, cutoff, effort, validation, plot,
             fmt, topic, base_topic, window, force):
    """Fit ROBOT's inertial parameters to RECORDINGs (their effort is the applied τ), starting from
    and regularized towards the file's own, and report what the data identify.

    Example: coriolis identify panda run1.mcap run2.mcap --validate run3.mcap -o panda_identified.urdf
    """
    from .. import identification as ID
    from ..model.loader import URDF_EXT, YAML_EXT
    from ..model.parameters import inertial_parameters, with_inertial_parameters
    from ..report.output import figure_format

    if output and os.path.splitext(output)[1].lower() not in URDF_EXT + YAML_EXT:
        raise StateError(f"{output}: unknown extension '{os.path.splitext(output)[1]}' (use .urdf or .yaml)")
    if plot:
        figure_format(plot)
    check_outputs(force, output, plot)
    if method == "consistent":
        try:
            import clarabel  # noqa: F401
            import cvxpy  # noqa: F401
        except ImportError:
            raise StateError("--method consistent needs cvxpy and clarabel",
                             hint="pip install 'coriolis-cli[identify]', or use --method ols") from None
    model = load(robot, floating_base)
    compile_first("identification_torque" if form == "torque" else "identification_filtered")
    options = dict(topic=topic, base_topic=base_topic, window=window, strict=strict())
    equations = None
    samples = 0
    for path in recordings:
        before = equations.rows if equations else 0
        equations = ID.accumulate(model, path, form, friction, cutoff, equations, effort, **options)
        samples += equations.rows - before
    fit = ID.fit(model, equations, method, friction, weight)
    bodies = ID.body_reports(model, fit)
    friction_rows = []
    P = len(fit.theta)
    for k, name in enumerate(fit.names[P:]):
        g = [0.0] * len(fit.scales)
        g[P + k] = 1.0
        dof, kind = name.rsplit(".", 1)
        friction_rows.append((dof, kind, float(fit.friction[k]), fit.std(g)))
    import numpy as np

    checks = list(validation) or [recordings[0]]
    models = {"prior": (inertial_parameters(model), np.zeros(len(fit.friction))), "identified": (fit.theta, fit.friction)}
    v = None
    for path in checks:
        v = ID.validate(model, path, models, friction, effort=effort, **options)
        if path == checks[0]:
            first = v
    label = checks[0] if validation else f"{checks[0]} (fitted; give --validate for data not fitted)"
    report = {"label": label, "samples": first.samples, "dof_names": first.dof_names, "prior": first.rms["prior"],
              "identified": first.rms["identified"]}
    summary = {"robot": model.name, "recordings": list(recordings), "form": form, "method": method, "friction": friction,
               "weight": weight, "effort": effort, "rows": equations.rows, "samples": _samples(form, model, equations),
               "physically_consistent": bool(ID.physically_consistent(fit.theta))}
    if output:
        from .convert import write_description

        identified = with_inertial_parameters(model, fit.theta)
        write_description(identified.description, output, force)
    if plot:
        from ..report.identification import torque_plot

        emit(torque_plot(first, figure_format(plot)), plot, force)
    from ..report.identification import identification_json, identification_table

    if fmt == "json":
        from ..report.formats import to_json

        emit(to_json(identification_json(summary, fit, bodies, friction_rows, report)), None, False)
    else:
        emit(identification_table(summary, fit, bodies, friction_rows, report), None, False)
    if not summary["physically_consistent"]:
        err.print(styled(("note:", "yellow"), " some identified bodies are not physically consistent (a pseudo-inertia "
                         "is not ⪰ 0); --method consistent prevents it"), soft_wrap=True)
    if output:
        err.print(styled(("wrote", "green"), f" {output}"), soft_wrap=True)


def _samples(form, model, equations) -> int:
    """Samples behind the rows: one row per sample in the energy form, one per DoF with effort otherwise."""
    return equations.rows if form == "energy" else equations.rows // max(1, model.nv)
