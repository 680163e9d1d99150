"""`coriolis codegen`: C99 code of M, Ṁ, C, Γ, τ and the Slotine–Li torque for one robot."""

from __future__ import annotations

import click

from .common import ExampleLast, cli, emit, err, load, robot_options, styled


@cli.command(cls=ExampleLast)
@click.argument("robot", metavar="ROBOT")
@robot_options
@click.option("-o", "--output", "directory", required=True, type=click.Path(file_okay=False),
              help="Directory for P.h and P.c (made if missing).")
@click.option("--prefix", help="Name of the files and prefix of the functions (a C identifier; default: the robot's name).")
@click.option("--what", default="M,Mdot,C,Gamma,tau,slotine", show_default=True,
              help="What to generate: M, Mdot, C (P_coriolis), Gamma (P_christoffel), tau (P_inverse_dynamics), "
                   "slotine (P_slotine_li), dtau, dg, dslotine, dCv, dCTqd (P_inverse_dynamics_derivatives, "
                   "P_gravity_derivatives, P_slotine_li_derivatives, P_coriolis_product_derivatives, "
                   "P_coriolis_transpose_derivatives).")
@click.option("--derivatives", is_flag=True, help="Also generate the first derivatives: of τ, g, the Slotine–Li torque, "
              "C v and Cᵀq̇ (as --what ...,dtau,dg,dslotine,dCv,dCTqd), q in the tangent space as the engine's.")
@click.option("--check", is_flag=True, help="Compile the code with the system's C compiler (-O0: a quick build, the "
              "same numbers) and compare it with the engine at 10 random states.")
@click.option("--force", is_flag=True, help="Replace existing P.h and P.c.")
def codegen(robot, floating_base, directory, prefix, what, derivatives, check, force):
    """Write C code of M, Ṁ, C, Γ, τ and the Slotine–Li torque for ROBOT: plain C99, libm only,
    no allocation, no global state, the robot's constants folded in (traced with CasADi, which
    'pip install coriolis-cli[codegen]' installs). P.h documents the functions and the DoF order.

    Example: coriolis codegen panda -o gen && cc -O2 -c gen/panda.c -I gen
    """
    from ..codegen import functions_for, generate_code
    from ..codegen.trace import casadi
    from ..report.tables import codegen_renderable

    if derivatives:
        what += "".join(f",{w}" for w in ("dtau", "dg", "dslotine", "dCv", "dCTqd") if w not in [x.strip() for x in what.split(",")])
    functions_for(what)  # a bad --what before anything is loaded or traced
    casadi()
    model = load(robot, floating_base)
    generated = generate_code(model, directory, prefix, what, force)
    comparison = None
    if check:
        from ..checks.codegen import compare_generated

        comparison = compare_generated(model, generated)
    emit(codegen_renderable(generated, comparison), None, False)
    _say_which_route_is_faster(model, generated)
    if comparison is not None and not comparison.passed:
        from ..errors import CheckFailed

        raise CheckFailed(f"the generated code differs from the engine by more than {comparison.tolerance:.0e}")


def _say_which_route_is_faster(model, generated) -> None:
    """For each large function: its estimated time against the engine's, timed on this robot
    (Table 2 found the engine faster for Γ past 15 bodies)."""
    from ..bench.generated import ENGINE_FUNCTIONS, large_functions, route_speeds

    large = large_functions(generated.operations)
    if not large:
        return
    for r in route_speeds(model, large):
        faster = "the engine is the faster route here" if r.engine_faster else "the code is the faster route"
        err.print(styled(("note:", "yellow"), f" {generated.prefix}_{r.function}: about {r.code_microseconds:,.0f} µs a call "
                         f"estimated ({r.operations:,} operations, cc -O2); the engine's {ENGINE_FUNCTIONS[r.function]} "
                         f"takes {r.engine_microseconds:,.0f} µs with data= on this robot: {faster}"), soft_wrap=True)
