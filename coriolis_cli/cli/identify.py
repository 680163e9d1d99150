"""`coriolis identify ROBOT RECORDING...`: inertial parameters (and friction) fitted to recordings."""

from __future__ import annotations

import os

import click

from ..errors import StateError
from .common import (check_outputs, cli, emit, err, load, reading_options, recording_options, robot_argument, robot_options,
                     say_note, styled)


@cli.command()
@robot_argument
@click.argument("recordings", nargs=-1, required=True, metavar="RECORDING...")
@robot_options
@click.option("-o", "--output", help="The identified robot: .urdf or .yaml, everything but the inertias (and the friction "
              "fitted, as <dynamics damping friction>) as in ROBOT.")
@click.option("--form", type=click.Choice(["torque", "momentum", "energy"]), default="torque", show_default=True,
              help="torque: Y θ = τ with q̈ differentiated; momentum, energy: filtered forms that need no q̈.")
@click.option("--method", type=click.Choice(["ols", "consistent"]), default="consistent", show_default=True,
              help="consistent: every body's pseudo-inertia ⪰ 0 (cvxpy, Clarabel); ols: plain least squares.")
@click.option("--friction", type=click.Choice(["none", "viscous", "coulomb-viscous"]), default="none",
              show_default=True, help="Friction fitted per 1-DoF joint alongside the inertias.")
@click.option("--fit-offset", is_flag=True,
              help="Also fit a constant offset per 1-DoF joint in the recorded effort (a torque sensor's, a current "
                   "reading's); observe takes it with --effort-offset.")
@click.option("--equal-weights", is_flag=True,
              help="Weigh every DoF's rows alike; by default each DoF's are weighed by 1/σ² of its residual "
                   "(3 fits), so that the joints of large torque do not rule the fit of a wrist's small ones.")
@click.option("--allow-inconsistent", is_flag=True,
              help="With --method ols, write the model to -o even where a body is not physically consistent "
                   "(inertias no rigid body has, a negative mass), which MuJoCo refuses and other tools misread.")
@click.option("--weight", type=float, default=1e-6, show_default=True,
              help="Pull towards ROBOT's parameters, relative to the data's mean column weight (see the identify page of the documentation).")
@click.option("--cutoff", type=float, default=20.0, show_default=True, help="λ (1/s) of the momentum and energy forms' filter.")
@click.option("--effort", type=click.Choice(["held", "sampled"]), default="held", show_default=True,
              help="held: each τ is a command held until the next sample; sampled: measured at its stamp.")
@click.option("--validate", "validation", metavar="RECORDING",
              help="Torque RMS per joint on a recording not fitted (default: the first fitted one).")
@click.option("--validate-split", "split", type=float, metavar="FRACTION",
              help="Hold out the last FRACTION (0 to 1, e.g. 0.33) of the last recording: fitted on the rest, "
                   "validated on it, when one run is all there is.")
@click.option("--plot", type=click.Path(dir_okay=False), help="Measured against predicted torque (PNG, SVG, PDF).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="table: the report; json: the same with every number.")
@recording_options
@click.option("--force", is_flag=True, help="Overwrite existing files.")
def identify(robot, recordings, floating_base, output, form, method, friction, fit_offset, equal_weights,
             allow_inconsistent, weight, cutoff, effort, validation, split, plot, fmt, topic, base_topic, effort_scale,
             effort_offset, window, force):
    """Fit ROBOT's inertial parameters to RECORDINGs (their effort is the applied τ), starting from
    and regularized towards the file's own, and report what the data identify.

    Example: coriolis identify panda run1.mcap run2.mcap --validate run3.mcap -o panda_identified.urdf
    """
    from ..estimation import identification as ID
    from ..model.loader import URDF_EXT, YAML_EXT
    from ..model.parameters import inertial_parameters, with_inertial_parameters
    from ..report.output import figure_format

    if output and os.path.splitext(output)[1].lower() not in URDF_EXT + YAML_EXT:
        raise StateError(f"{output}: unknown extension '{os.path.splitext(output)[1]}' (use .urdf or .yaml)")
    if plot:
        figure_format(plot)
    check_outputs(force, output, plot, inputs=(robot, *recordings, validation))
    ID.check_rows_options(form, cutoff, effort)  # before the kernels compile
    if not 0 <= weight < float("inf"):
        raise StateError(f"--weight {weight:g}: a regularization weight ≥ 0 and finite")
    if split is not None:
        if validation:
            raise StateError("--validate and --validate-split both name what to validate on; give one")
        if not 0.0 < split < 1.0:
            raise StateError(f"--validate-split {split:g}: a fraction of the recording, between 0 and 1 (e.g. 0.33)")
    if method == "consistent":
        ID.require_solver()  # before the recordings are read
    terms = f"{friction}+offset" if fit_offset else friction  # what is fitted besides the inertias
    import numpy as np

    model = load(robot, floating_base)
    options = reading_options(model, (*recordings, validation), topic, base_topic, window, effort_scale=effort_scale,
                              effort_offset=effort_offset)
    ID.require_effort(model, recordings, validation, form, **options)  # at once, not after the compile
    spans = {}  # the last recording's fitted and held-out stamps, with --validate-split
    if split is not None:
        from ..recordings import time_span

        first, last = time_span(recordings[-1], **options)
        cut = last - split * (last - first)
        spans = {"fit": (-np.inf, cut), "validate": (cut, np.inf)}
    equations = None
    for k, path in enumerate(recordings):
        span = spans.get("fit") if k == len(recordings) - 1 else None
        equations = ID.accumulate(model, path, form, terms, cutoff, equations, effort, span=span, **options)
    fit = ID.fit(model, equations, method, terms, weight, reweight=not equal_weights)
    consistent = bool(ID.physically_consistent(fit.theta))
    if output and not consistent and not allow_inconsistent:
        raise StateError(f"{output}: not written: the {method} fit is not physically consistent ("
                         + ID.inconsistent_bodies(model, fit.theta) + "): no rigid body has those inertias, MuJoCo "
                         "refuses such a file and other tools misread it", hint="use --method consistent, or "
                         "--allow-inconsistent to write it anyway")
    bodies, friction_rows = ID.body_reports(model, fit), ID.friction_reports(fit)
    check = validation or (recordings[-1] if spans else recordings[0])
    models = {"prior": (inertial_parameters(model), np.zeros(len(fit.friction))), "identified": (fit.theta, fit.friction)}
    v = ID.validate(model, check, models, terms, effort=effort, span=spans.get("validate"), **options)
    if validation:
        label = check
    elif spans:
        label = f"{check}, its last {split:.0%} ({last - cut:.3g} s from t = {cut:.6g} s), not fitted"
    else:
        label = f"{check} (fitted; give --validate or --validate-split for data not fitted)"
    report = {"label": label, "samples": v.samples, "dof_names": v.dof_names, "prior": v.rms["prior"],
              "identified": v.rms["identified"]}
    summary = {"robot": model.name, "recordings": list(recordings), "form": form, "method": method, "friction_model": friction, "offset": fit_offset,
               "weight": weight, "effort": effort, "rows": equations.rows, "samples": equations.samples,
               "physically_consistent": consistent, "joint_weights": "residual" if fit.joint_weights is not None else "equal",
               "dof_names": list(ID.fitted_dof_names(model))}
    if output:
        from .convert import write_description

        from ..model.friction import with_joint_friction

        identified = with_inertial_parameters(model, fit.theta)
        # the friction fitted goes into the file, where observe, compute --recording and simulate use it
        write_description(with_joint_friction(identified.description, ID.identified_friction(model, fit, terms)),
                          output, force)
    if plot:
        from ..report.identification import torque_plot

        emit(torque_plot(v, figure_format(plot)), plot, force)
    from ..report.identification import identification_json, identification_table

    if fmt == "json":
        from ..report.formats import to_json

        emit(to_json(identification_json(summary, fit, bodies, friction_rows, report)), None, False)
    else:
        emit(identification_table(summary, fit, bodies, friction_rows, report), None, False)
    offsets = ID.identified_offsets(model, fit, terms)
    if offsets:
        say_note("the offsets fitted are the recording's, not the robot's; observe takes them with --effort-offset "
                 + ",".join(f"{j}={-o:.6g}" for j, o in offsets.items()))
    biased = ID.offset_suspects(model, fit) if not fit_offset else []
    if biased:
        say_note("the residuals of " + ", ".join(biased) + " have a mean of a third of their RMS or more: a constant "
                 "offset in the recorded effort (a torque sensor's, a current reading's)? --fit-offset fits it")
    if not summary["physically_consistent"]:
        err.print(styled(("note:", "yellow"), " some identified bodies are not physically consistent (a pseudo-inertia "
                         "is not ⪰ 0); --method consistent prevents it"), soft_wrap=True)
