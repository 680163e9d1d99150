"""`coriolis bench`: time M, Ṁ, C and Γ on robot files, over DoF sweeps, or as the paper's Table 1."""

from __future__ import annotations

import click

from ..errors import StateError
from .common import check_outputs, cli, emit, err, load, parse_list, progress, robot_options, styled

# What bench times, by the engine's keys (engine.NAMED): C is M, Ṁ and C together (Algorithm 1),
# M, tau and g alone are CRBA and RNEA
BENCH_KEYS = ("C", "Gamma", "M", "tau", "g", "qdd", "slotine", "dtau", "dqdd", "dg", "dslotine", "dCv", "dCTqd", "d2tau", "lam_d2tau",
              "d2qdd", "lam_d2qdd")
# the names 0.1.0 gave four of them, still taken
FORMER_NAMES = {"crba": "M", "rnea": "tau", "gravity": "g", "fd": "qdd", "slotine-li": "slotine"}


def what_names() -> dict[str, str]:
    """--what's names, case-insensitive, to keys: the keys, the public functions' names, the
    outputs' names (Mdot: C) and the former names."""
    from .. import engine

    functions = {key: engine.NAMED[key] for key in BENCH_KEYS}
    names = {key.lower(): key for key in BENCH_KEYS}
    names.update({f.__name__: key for key, f in functions.items()})
    for key, f in functions.items():
        for output in f.names.outputs:
            names.setdefault(output.lower(), key)
    return {**names, **FORMER_NAMES}


MAX_SWEEP = 200  # systems in one --dofs sweep


def parse_dofs(text: str) -> list[int]:
    """``5:40:5`` (start:stop:step, stop included) or a comma list ``10,20,30``, capped before any
    list is built."""
    from ..model.topologies import MAX_DOF

    try:
        if ":" in text:
            parts = [int(x) for x in text.split(":")]
            if len(parts) not in (2, 3):
                raise ValueError
            start, stop = parts[0], parts[1]
            step = parts[2] if len(parts) > 2 else 1
            if step <= 0:
                raise ValueError
            if start <= 0 or stop > MAX_DOF or (stop - start) // step + 1 > MAX_SWEEP:
                raise StateError(f"--dofs: '{text}' must stay within 1..{MAX_DOF} DoF and {MAX_SWEEP} systems")
            dofs = list(range(start, stop + 1, step))
        else:
            items = [x for x in text.split(",") if x.strip()]
            if len(items) > MAX_SWEEP:
                raise StateError(f"--dofs: at most {MAX_SWEEP} systems")
            dofs = [int(x) for x in items]
    except ValueError:
        raise StateError(f"--dofs: '{text}' is not START:STOP[:STEP] or a comma list of integers") from None
    if not dofs or min(dofs) <= 0:
        raise StateError(f"--dofs: '{text}' must give positive numbers of DoF")
    if max(dofs) > MAX_DOF:
        raise StateError(f"--dofs: at most {MAX_DOF} DoF can be generated")
    return dofs


def _render(report, peers: bool):
    from rich.console import Group

    from ..report.bench import slope_table, sweep_table, system_table, table1

    if report.mode == "robots":
        return Group(*(system_table(s) for s in report.systems))
    if report.mode == "table1":
        return Group(table1(report.systems), *(system_table(s) for s in report.systems if peers))
    return Group(*(sweep_table(t, ss) for t, ss in report.sweeps().items()), slope_table(report.slopes))


def _table2(conflict, budget, fmt, output, force):
    from ..bench.table2 import TABLE2_ROWS, run_table2
    from ..codegen.build import c_compiler
    from ..codegen.trace import casadi
    from ..report.bench import table2
    from ..report.formats import to_json

    if conflict:
        raise StateError("--table2 runs its own systems: use it without ROBOT, --table1, --codegen and --plot")
    casadi(), c_compiler()
    bar, task = progress(len(TABLE2_ROWS), "Table 2")
    with bar:
        done = iter(range(len(TABLE2_ROWS)))
        rows = run_table2(budget, advance=lambda label: bar.update(task, description=f"Table 2: {label}", completed=next(done)))
    emit(to_json({"mode": "table2", "budget_s": budget, "rows": [r.as_dict() for r in rows]}) if fmt == "json"
         else table2(rows), output, force)


FRAMEWORK_ROBOTS = (("panda", False), ("humanoid", True))  # bench --jax/--torch without ROBOT


def _frameworks(robots, floating_base, jax_, torch_, peers, repeat, fmt, output, force, conflict):
    from rich.console import Group

    from ..bench.frameworks import bench_jax, bench_torch
    from ..report.bench import framework_tables
    from ..report.formats import to_json

    if conflict:
        raise StateError("--jax and --torch time their own forms: use them without --table1, --table2, --codegen, "
                         "--plot, --batch and --compiled-peers")
    install = {"jax": "pip install 'coriolis-cli[jax]'", "torch": "pip install torch (a CPU build will do)"}
    frameworks = [name for name, asked in (("jax", jax_), ("torch", torch_)) if asked]
    for name in frameworks:
        try:
            __import__(name)
        except ImportError:
            raise StateError(f"--{name} needs {name}: {install[name]}") from None
    plan = [(source, floating_base) for source in robots] if robots else list(FRAMEWORK_ROBOTS)
    models = [(source, load(source, fb)) for source, fb in plan]
    for source, robot in models:
        if getattr(robot, "is_reduced", False):
            raise StateError(f"{source}: --jax and --torch take trees for now (mimic joints, base velocities and "
                             "closed loops are not taken yet)")
    runs = [(framework, source, robot) for framework in frameworks for source, robot in models]
    timed = {"jax": bench_jax, "torch": bench_torch}
    bar, task = progress(len(runs), "timing")
    reports = []
    with bar:
        for done, (framework, source, robot) in enumerate(runs):
            bar.update(task, description=f"timing {framework} on {source}", completed=done)
            reports.append(timed[framework](robot, source, repeat, peers))
        bar.update(task, completed=len(runs))
    emit(to_json({"mode": "frameworks", "runs": [r.as_dict() for r in reports]}) if fmt == "json"
         else Group(*(framework_tables(r) for r in reports)), output, force)


@cli.command()
@click.argument("robots", nargs=-1, metavar="[ROBOT ...]")
@click.option("--topology", type=click.Choice(["serial", "binary", "biped", "quadruped", "all"]), default="all", show_default=True,
              help="Generated topologies of the DoF sweep (without ROBOT).")
@click.option("--dofs", default="5:40:5", show_default=True,
              help="Joint DoF of the sweep: START:STOP[:STEP] (stop included) or a comma list; at most 5000 DoF, 200 systems.")
@click.option("--what", default="C,Gamma", show_default=True, help="Comma list of C (M, Ṁ and C together), Gamma, qdd (forward dynamics, against Pinocchio's aba), "
              "slotine (the Slotine–Li torque, against Pinocchio's rnea), and M, tau and g (CRBA and RNEA alone, "
              "against crba, rnea and computeGeneralizedGravity), dtau and dqdd (the inverse and forward dynamics' "
              "derivatives, against computeRNEADerivatives and computeABADerivatives), dg (∂g/∂q, against "
              "computeGeneralizedGravityDerivatives), and dslotine, dCv and dCTqd (the derivatives of the Slotine–Li "
              "torque, of C v and of Cᵀq̇, which Pinocchio lacks: computeRNEADerivatives is their yardstick), and d2tau "
              "(the inverse dynamics' second derivatives, which Pinocchio's Python API lacks).")
@robot_options
@click.option("--repeat", type=click.IntRange(3, 1000), default=15, show_default=True, help="Timed rounds of about 0.1 s each; the median per call is reported (µs).")
@click.option("--peers", is_flag=True, help="Time Pinocchio and our own baselines in the same process.")
@click.option("--compiled-peers", is_flag=True, help="With --peers, also time Pinocchio's C++ derivatives (dtau, "
              "dqdd, d2tau) in a compiled loop: a small program built once against the pin wheel (about 40 s; "
              "needs a C++ compiler and cmeel-eigen, in the bench extra) and cached.")
@click.option("--jax", "jax_", is_flag=True, help="Time coriolis_cli.jax (M, C, the bias, τ, ∂τ/∂q; one state, batches "
              "of 64 and 4,096 under jit(vmap), a jitted scan over 1,000) on ROBOT, or on the Panda and a floating "
              "humanoid; with --peers, ADAM and jaxsim beside it, where installed.")
@click.option("--torch", "torch_", is_flag=True, help="The same for coriolis_cli.torch; with --peers, ADAM's "
              "PyTorch backend beside it.")
@click.option("--batch", is_flag=True, help="Also time a batch of 10,000 states (per state, in parallel).")
@click.option("--codegen", is_flag=True, help="Also time the C code 'coriolis codegen' writes for each ROBOT, built "
              "with -O2, in a compiled C loop (needs CasADi and a C compiler).")
@click.option("--table2", is_flag=True, help="The core paper's Table 2: Γ obtained symbolically by eq. (4) and by "
              "Algorithm 2 (CasADi), binary trees of 5, 10, 15 and serial chains of 5-20 bodies, with the code each gives.")
@click.option("--budget", type=click.FloatRange(1, 3600), default=120, show_default=True,
              help="--table2: seconds per route and system; a route past it is reported over budget.")
@click.option("--table1", is_flag=True, help="The core paper's Table 1 at 20 DoF beside the paper's numbers.")
@click.option("--plot", type=click.Path(dir_okay=False), help="Write a log-log plot of time vs DoF (PNG).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="table (rich, for people) or json (every number, for programs).")
@click.option("-o", "--output", help="Write the report to this file.")
@click.option("--force", is_flag=True, help="Overwrite existing files.")
def bench(robots, topology, dofs, what, floating_base, repeat, peers, compiled_peers, jax_, torch_, batch, codegen, table2,
          budget, table1, plot, fmt, output, force):
    """Time M, Ṁ, C and Γ: on ROBOT files, over a DoF sweep of generated topologies, or as Table 1.

    Example: coriolis bench robots/panda.urdf --peers
    """
    from ..bench.suite import TOPOLOGY_ORDER, plan_jobs, run_jobs
    from ..report.bench import sweep_plot
    from ..report.formats import to_json
    from ..report.output import figure_format

    whats = parse_list(what, what_names(), "--what")
    check_outputs(force, output, plot)
    if jax_ or torch_:
        return _frameworks(robots, floating_base, jax_, torch_, peers, repeat, fmt, output, force,
                           conflict=table1 or table2 or codegen or plot or batch or compiled_peers)
    if table2:
        return _table2(robots or table1 or plot or codegen, budget, fmt, output, force)
    topologies = list(TOPOLOGY_ORDER) if topology == "all" else [topology]
    sweep = [] if robots or table1 else parse_dofs(dofs)
    mode, jobs = plan_jobs(robots, topologies, sweep, floating_base, table1)
    if codegen:
        from ..codegen.build import c_compiler
        from ..codegen.trace import casadi

        if mode != "robots":
            raise StateError("--codegen times the code generated for ROBOT files: give one or more ROBOT")
        casadi(), c_compiler()
    if plot and mode != "sweep":
        raise StateError("--plot draws a DoF sweep: use it without ROBOT and without --table1")
    if mode != "robots" and set(whats) - {"C", "Gamma"}:
        other = ", ".join(w for w in whats if w not in ("C", "Gamma"))
        raise StateError(f"--what {other}: a DoF sweep and Table 1 time C and Gamma; name a ROBOT for the rest",
                         hint="e.g. coriolis bench panda --what " + ",".join(whats))
    if compiled_peers and not peers:
        raise StateError("--compiled-peers times Pinocchio's C++ beside its Python: add --peers")
    models = [(job, load(job.source, floating_base)) for job in jobs]
    if peers:
        from ..peers import pinocchio as pinocchio_peer

        if not pinocchio_peer.available():
            err.print(styled(("note:", "yellow"), " --peers: Pinocchio is not installed, so its rows are skipped "
                             "(pip install 'coriolis-cli[bench]'); our own baselines are timed"), soft_wrap=True)
    bar, task = progress(len(models), "timing")
    with bar:
        done = iter(range(len(models)))

        def advance(label):
            bar.update(task, description=f"timing {label}", completed=next(done))

        report = run_jobs(mode, models, whats, floating_base, "compiled" if compiled_peers else peers, repeat, batch,
                          advance, codegen)
    if plot:
        emit(sweep_plot(report.sweeps(), figure_format(plot)), plot, force)
    emit(to_json(report.as_dict()) if fmt == "json" else _render(report, peers), output, force)
