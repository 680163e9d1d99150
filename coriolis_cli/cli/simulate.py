"""`coriolis simulate`: closed-loop trajectory tracking with a choice of controller and of C."""

from __future__ import annotations

import sys
import warnings

import click

from ..errors import ModelWarning, StateError
from .common import (check_outputs, cli, emit, err, fixed_robot_options, load, progress, resolve_format, robot_argument,
                     say_note, styled)


def _gains(text: str):
    try:
        values = [float(x) for x in text.split(",")]
    except ValueError:
        values = []
    if len(values) != 2:
        raise StateError(f"--gains takes two numbers LAMBDA,KAPPA (1/s), got '{text}'")
    return values


@cli.command()
@robot_argument
@fixed_robot_options
@click.option("--controller", type=click.Choice(["slotine-li", "passivity", "computed-torque"]), default="slotine-li",
              show_default=True, help="slotine-li: adaptive, estimates start at half the true parameters; passivity: the "
              "same law with the true parameters; computed-torque: M (q̈_d − λ²e − 2λė) + C q̇ + g.")
@click.option("--factorization", type=click.Choice(["christoffel", "featherstone", "nonadmissible"]), default="christoffel",
              show_default=True, help="The C in the control law; nonadmissible: C + S with S q̇ = 0, S not skew-symmetric.")
@click.option("--duration", type=click.FloatRange(min=0, min_open=True, max=3600), default=2.0, show_default=True,
              help="Simulated time in seconds.")
@click.option("--rate", type=click.FloatRange(1, 1e6), default=1000.0, show_default=True,
              help="Control and integration rate in Hz (RK4 step 1/rate, the law evaluated at every stage); "
              "refused when too low for the gains.")
@click.option("--gains", default="10,20", show_default=True,
              help="LAMBDA,KAPPA in 1/s: Λ = λ·1 and K_D = κ·M(q), so every mode is damped at κ.")
@click.option("--adaptation-gain", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="γ in θ̂̇ = −γ Γ₀ Yᵀ s (slotine-li), Γ₀ scaled to the robot's bodies so that at γ = 1 the fastest "
              "adaptation mode is at 4κ.")
@click.option("--no-friction", is_flag=True, help="Simulate without the joints' friction the robot file gives.")
@click.option("--friction-unknown", is_flag=True, help="Keep the file's friction from the controller, which otherwise "
              "compensates it at its reference velocity q̇_r (the robot file is its model too).")
@click.option("--plot", type=click.Path(dir_okay=False), help="Write tracking error, V and parameter error against time (PNG).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "npz"]), default=None,
              help="Default: from the -o extension, else table. JSON and NPZ hold every sample, q, q̇ and τ "
              "included (NPZ: what compute --recording reads back).")
@click.option("-o", "--output", help="Write to this file instead of standard output.")
@click.option("--force", is_flag=True, help="Overwrite existing files.")
def simulate(robot, controller, factorization, duration, rate, gains, adaptation_gain, no_friction, friction_unknown,
             plot, fmt, output, force):
    """Simulate ROBOT (fixed base) tracking a smooth reference under a passivity-based controller.

    With an admissible C (christoffel, featherstone) the Lyapunov function V never rises; with the
    nonadmissible one it can, although the equations of motion are the same. A run that diverges
    is reported up to its last finite sample (summary, plot, JSON) and exits with 1.

    Example: coriolis simulate robots/panda.urdf --controller slotine-li --plot out.png
    """
    from ..report.formats import to_json
    from ..report.output import figure_format
    from ..report.simulation import simulation_plot, simulation_table
    from ..control.simulation import check_step, simulate as run, simulation_steps

    fmt = resolve_format(fmt, output, ("table", "json", "npz"))
    check_outputs(force, output, plot, inputs=(robot,))
    lam, kappa = _gains(gains)
    steps = simulation_steps(duration, rate)
    check_step(controller, lam, kappa, adaptation_gain, rate)
    with warnings.catch_warnings():  # a singular M is refused below, in one line with the lock that helps
        warnings.filterwarnings("ignore", message="M is singular", category=ModelWarning)
        model = load(robot)
    bar, task = progress(steps, f"simulating {steps:,} steps")
    with bar:
        result = run(model, controller, factorization, duration, rate, (lam, kappa), adaptation_gain,
                     progress=lambda k: bar.update(task, completed=k), friction=not no_friction,
                     friction_known=not friction_unknown)
    from ..model.friction import friction_note, has_friction

    if not no_friction and has_friction(model):
        say_note(friction_note(model, "the simulated robot has")
                 + ("; the controller does not know it (--friction-unknown)" if friction_unknown
                    else "; the controller compensates it at q̇_r"))
    if plot:
        emit(simulation_plot(result, figure_format(plot)), plot, force)
    if fmt == "json":
        emit(to_json(result.as_dict()), output, force)
    elif fmt == "npz":
        from ..report.formats import to_npz

        emit(to_npz(result.as_dict()), output, force)
    else:
        emit(simulation_table(result), output, force)
    if result.diverged:
        err.print(styled(("diverged:", "red"), f" {result.diverged_because} at t = {result.diverged_at:.4g} s; "
                         "the summary above stops at the last finite sample"), soft_wrap=True)
        sys.exit(1)
