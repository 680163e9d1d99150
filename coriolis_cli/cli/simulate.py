"""`coriolis simulate`: closed-loop trajectory tracking with a choice of controller and of C."""

from __future__ import annotations

import click

from ..errors import StateError
from .common import cli, emit, load, progress, resolve_format, robot_argument, robot_options, warn_compile_once


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
@robot_options
@click.option("--controller", type=click.Choice(["slotine-li", "passivity", "computed-torque"]), default="slotine-li",
              show_default=True, help="slotine-li: adaptive, estimates start at half the true parameters; passivity: the "
              "same law with the true parameters; computed-torque: M (q̈_d − λ²e − 2λė) + C q̇ + g.")
@click.option("--factorization", type=click.Choice(["christoffel", "featherstone", "nonadmissible"]), default="christoffel",
              show_default=True, help="The C in the control law; nonadmissible: C + S with S q̇ = 0, S not skew-symmetric.")
@click.option("--duration", type=click.FloatRange(min=0, min_open=True, max=3600), default=2.0, show_default=True,
              help="Simulated time in seconds.")
@click.option("--rate", type=click.FloatRange(1, 1e6), default=1000.0, show_default=True,
              help="Control and integration rate in Hz (RK4 step 1/rate, the law evaluated at every stage).")
@click.option("--gains", default="10,20", show_default=True,
              help="LAMBDA,KAPPA in 1/s: Λ = λ·1 and K_D = κ·M(q), so every mode is damped at κ.")
@click.option("--adaptation-gain", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="γ in θ̂̇ = −γ Yᵀ s (slotine-li).")
@click.option("--plot", type=click.Path(dir_okay=False), help="Write tracking error, V and parameter error against time (PNG).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default=None,
              help="Default: from the -o extension, else table. JSON holds every sample.")
@click.option("-o", "--output", help="Write to this file instead of standard output.")
@click.option("--force", is_flag=True, help="Overwrite existing files.")
def simulate(robot, floating_base, controller, factorization, duration, rate, gains, adaptation_gain, plot, fmt, output, force):
    """Simulate ROBOT tracking a smooth reference under a passivity-based controller.

    With an admissible C (christoffel, featherstone) the Lyapunov function V never rises; with the
    nonadmissible one it can, although the equations of motion are the same.

    Example: coriolis simulate robots/panda.urdf --controller slotine-li --plot out.png
    """
    from ..report.formats import to_json
    from ..report.output import check_writable
    from ..report.simulation import simulation_plot, simulation_table
    from ..simulation import simulate as run, simulation_steps

    fmt = resolve_format(fmt, output)
    if fmt not in ("table", "json"):
        raise StateError(f"-o: simulate writes a table or JSON, not {fmt}")
    for path in (plot, output):
        if path:
            check_writable(path, force)
    lam, kappa = _gains(gains)
    steps = simulation_steps(duration, rate)
    model = load(robot, floating_base)
    warn_compile_once("forward_dynamics.forward_dynamics_kernel")
    bar, task = progress(steps, f"simulating {steps:,} steps")
    with bar:
        result = run(model, controller, factorization, duration, rate, (lam, kappa), adaptation_gain,
                     progress=lambda k: bar.update(task, completed=k))
    if plot:
        emit(simulation_plot(result), plot, force)
    if fmt == "json":
        emit(to_json(result.as_dict()), output, force)
    else:
        emit(simulation_table(result), output, force)
