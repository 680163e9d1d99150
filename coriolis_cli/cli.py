"""Command-line interface: thin click commands that parse, call the layers, and render."""

from __future__ import annotations

import os
import sys
import warnings

import click
import numpy as np
from rich.console import Console
from rich.text import Text

from . import __version__
from .errors import CoriolisError, SizeError, StateError

# Piped output is not squeezed to 80 columns: wide matrices stay readable in files and logs.
_width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", "160"))
# Markup is off everywhere: every string, a robot's, a joint's, a path, is printed as written, and
# our own styling goes through rich Text and style= only. One path, nothing to escape by hand.
out = Console(highlight=False, markup=False, width=_width)
err = Console(stderr=True, highlight=False, markup=False, width=None if sys.stderr.isatty() else 200)


def _styled(*parts) -> Text:
    """Text from (string, style) pairs; strings are never read as markup."""
    return Text.assemble(*parts)

WHAT_CHOICES = ("M", "Mdot", "C", "Gamma", "g", "tau")
FORMATS = ("table", "json", "npz", "csv")
EXT_FORMAT = {".json": "json", ".npz": "npz", ".csv": "csv", ".txt": "table"}
# Above this condition number we warn that M is nearly singular.
COND_WARN = 1e10


def _strict() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.find_root().meta.get("coriolis.strict"))


def _load(robot: str, floating_base: bool):
    from .model import load_robot

    return load_robot(robot, floating_base=floating_base, strict=_strict())


def _warn_compile_once():
    from .engine.cache import kernels_cached

    if not kernels_cached():
        err.print(_styled(("compiling the numba kernels (first run only, 10-60 s; later runs load the cache)...", "dim")))


def _require_finite(record: dict, keys) -> None:
    """A result that overflowed is an error naming it, never written as a number."""
    for k in keys:
        value = record.get(k)
        if k == "Gamma" and value is None and "Gamma_largest" in record:
            value = [v for *_, v in record["Gamma_largest"][0]]
        if value is not None and not np.all(np.isfinite(value)):
            bad = int(np.size(value) - np.count_nonzero(np.isfinite(value)))
            raise StateError(f"{k} is not finite at this state ({bad} entr{'ies' if bad > 1 else 'y'} overflowed); "
                             "nothing was written")


def _resolve_format(fmt: str | None, output: str | None) -> str:
    if fmt:
        return fmt
    if output:
        return EXT_FORMAT.get(os.path.splitext(output)[1].lower(), "table")
    return "table"


def _emit_text(text: str, output: str | None, force: bool):
    from .report.output import write_atomic

    if output:
        write_atomic(output, text, force)
    else:
        sys.stdout.write(text)


def _render_to_text(renderable) -> str:
    console = Console(record=True, width=160, file=open(os.devnull, "w"), highlight=False, markup=False)
    console.print(renderable)
    return console.export_text()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="coriolis")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for unexpected errors.")
def cli(debug):
    """Mass matrix M, Ṁ, Coriolis matrix C and Christoffel symbols Γ of robots (URDF, YAML or
    generated TOPOLOGY:DOF specs such as quadruped:20) with the recursive algorithms of
    Echeandia & Wensing."""


robot_argument = click.argument("robot", metavar="ROBOT")
floating_option = click.option("--floating-base", is_flag=True, help="Put a free joint between the world and the root link.")


def _remember_strict(ctx, param, value):
    if value:
        ctx.find_root().meta["coriolis.strict"] = True


strict_option = click.option(
    "--strict", is_flag=True, expose_value=False, callback=_remember_strict,
    help="Refuse robots with inertias no rigid body has or joints that move no mass (default: warn and compute).")


# ---------------------------------------------------------------------------------------- info
@cli.command()
@robot_argument
@floating_option
@strict_option
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def info(robot, floating_base, fmt):
    """The kinematic tree, DoF, depth, mass and joints of ROBOT."""
    from .report.formats import to_json
    from .report.tables import info_record, info_renderable

    model = _load(robot, floating_base)
    if fmt == "json":
        sys.stdout.write(to_json(info_record(model)))
    else:
        out.print(info_renderable(model))


# ------------------------------------------------------------------------------------- convert
def _write_description(desc, output: str, force: bool):
    from .model import to_urdf, to_yaml
    from .model.loader import URDF_EXT, YAML_EXT
    from .report.output import write_atomic

    ext = os.path.splitext(output)[1].lower()
    if ext in YAML_EXT:
        text = to_yaml(desc)
    elif ext in URDF_EXT:
        text = to_urdf(desc)
    else:
        raise StateError(f"{output}: unknown extension '{ext}' (use .urdf or .yaml)")
    write_atomic(output, text, force)


@cli.command()
@robot_argument
@click.option("-o", "--output", required=True, help="Target file: .urdf or .yaml.")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def convert(robot, output, force):
    """Convert ROBOT between URDF and YAML (the format follows the extension of -o)."""
    from .model import build_model, load_description
    from .report.output import check_writable

    check_writable(output, force)
    desc = load_description(robot)
    build_model(desc)  # refuse to convert what we could not compute with
    _write_description(desc, output, force)
    err.print(f"wrote {output}")


@cli.command()
@click.argument("spec", metavar="TOPOLOGY:DOF")
@click.option("-o", "--output", required=True, help="Target file: .urdf or .yaml.")
@click.option("--seed", type=int, default=None, help="Seed of the random inertias and axes (default 0).")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def generate(spec, output, seed, force):
    """Write a generated topology (serial, binary, biped, quadruped) such as quadruped:20."""
    from .model.topologies import generate as make, parse_spec
    from .report.output import check_writable

    check_writable(output, force)
    topo, dof, spec_seed = parse_spec(spec)
    desc = make(topo, dof, spec_seed if seed is None else seed)
    _write_description(desc, output, force)
    err.print(f"wrote {output}")


# ------------------------------------------------------------------------------------- compute
def _state(model, q, qd, qdd, state, random, seed):
    from .model.state import parse_vector, random_state, read_state_file

    given = sum(x is not None and x is not False for x in (q, state, random or None))
    if given > 1:
        raise StateError("give the state one way: --q/--qd, --state FILE or --random")
    if random:
        qv, qdv = random_state(model, seed)
        if qd is not None:
            qdv = parse_vector(qd, model.nv, "--qd", model.dof_names)
    elif state is not None:
        qv, qdv = read_state_file(state, model)
    elif q is not None or qd is not None:
        qv = model.neutral_configuration() if q is None else parse_vector(q, model.nq, "--q", model.config_names)
        qdv = np.zeros(model.nv) if qd is None else parse_vector(qd, model.nv, "--qd", model.dof_names)
    else:
        raise StateError("no state given: use --q/--qd (comma lists), --state FILE or --random [--seed S]")
    qddv = np.zeros(model.nv) if qdd is None else parse_vector(qdd, model.nv, "--qdd", model.dof_names)
    return qv, qdv, qddv


def _parse_what(what: str):
    keys = [w.strip() for w in what.split(",") if w.strip()]
    lookup = {w.lower(): w for w in WHAT_CHOICES}
    out_keys = []
    for k in keys:
        if k.lower() not in lookup:
            raise StateError(f"--what: unknown quantity '{k}' (choose from {', '.join(WHAT_CHOICES)})")
        if lookup[k.lower()] not in out_keys:
            out_keys.append(lookup[k.lower()])
    if not out_keys:
        raise StateError("--what: nothing to compute")
    return out_keys


@cli.command()
@robot_argument
@floating_option
@strict_option
@click.option("--q", help="Configuration, comma separated (nq values; free joint: x,y,z,qx,qy,qz,qw).")
@click.option("--qd", help="Velocity, comma separated (nv values).")
@click.option("--qdd", help="Acceleration for tau, comma separated (default zero).")
@click.option("--state", type=click.Path(dir_okay=False), help="YAML/JSON file {q: {dof: value}, qd: {dof: value}}.")
@click.option("--random", is_flag=True, help="Random q within the joint limits (else [0, 2π]) and q̇ in [-10, 10].")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for --random.")
@click.option("--what", default="M,C", show_default=True, help=f"Comma list of {', '.join(WHAT_CHOICES)}.")
@click.option("--factorization", type=click.Choice(["christoffel", "featherstone"]), default="christoffel", show_default=True)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None, help="Default: from the -o extension, else table.")
@click.option("--top", type=int, default=20, show_default=True, help="Γ entries listed in tables (largest first).")
@click.option("-o", "--output", help="Write to this file instead of standard output.")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@click.option("--allow-large", is_flag=True,
              help="Write Γ above the 256 MiB guard (nv > 322), if the machine has the memory it needs.")
def compute(robot, floating_base, q, qd, qdd, state, random, seed, what, factorization, fmt, top, output, force, allow_large):
    """Compute M, Ṁ, C, Γ, g or τ of ROBOT at one state."""
    from . import engine
    from .report.formats import compute_to_csv, to_json, to_npz
    from .report.output import check_writable, write_atomic
    from .report.tables import gamma_entries, gamma_table, matrix_table, vector_table

    fmt = _resolve_format(fmt, output)
    if fmt == "npz" and not output:
        raise StateError("--format npz needs -o FILE")
    if top < 1:
        raise StateError("--top must be at least 1")
    if output:
        check_writable(output, force)
    keys = _parse_what(what)
    model = _load(robot, floating_base)
    qv, qdv, qddv = _state(model, q, qd, qdd, state, random, seed)
    stream_gamma = False
    if "Gamma" in keys:
        try:
            engine.check_gamma_size(model, 1, allow_large)
        except SizeError as e:
            if fmt != "table":
                raise SizeError(f"{e}; the table format lists its largest entries without holding it "
                                "(--what Gamma --top N), or pass --allow-large") from None
            stream_gamma = True  # a table shows the largest entries only: never hold Γ
        if not stream_gamma:
            # Γ itself, plus its text (JSON, CSV: about 60 bytes an entry) or its compressed copy (NPZ)
            per_entry = 8 + (60 if fmt in ("json", "csv") else 8 if fmt == "npz" else 0)
            engine.check_memory(per_entry * model.nv**3, f"Γ ({model.nv}³ entries) in {fmt} format")
    _warn_compile_once()
    record: dict = {
        "robot": model.name,
        "dof_names": list(model.dof_names),
        "q": qv,
        "qd": qdv,
        "factorization": factorization,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        if {"M", "Mdot", "C"} & set(keys):
            M, Mdot, C = engine.coriolis_matrix(model, qv, qdv, factorization)
            record.update(M=M, Mdot=Mdot, C=C)
            _require_finite(record, ("M", "Mdot", "C"))
            cond = np.linalg.cond(M)
            if not cond < COND_WARN:
                warnings.warn(f"M is nearly singular (condition number {cond:.3g}); results may be inaccurate")
        if "Gamma" in keys:
            if stream_gamma:
                record["Gamma_largest"] = engine.christoffel_largest(model, qv, top)
            else:
                record["Gamma"] = engine.christoffel(model, qv, force=True)  # sizes checked above
        if "g" in keys:
            record["g"] = engine.gravity_vector(model, qv)
        if "tau" in keys:
            record["qdd"] = qddv
            record["tau"] = engine.inverse_dynamics(model, qv, qdv, qddv)
    _require_finite(record, keys)
    for k in ("M", "Mdot", "C"):
        if k not in keys:
            record.pop(k, None)
    if fmt == "json":
        _emit_text(to_json(record), output, force)
    elif fmt == "csv":
        _emit_text(compute_to_csv(record, keys), output, force)
    elif fmt == "npz":
        write_atomic(output, to_npz(record), force)
    else:
        titles = {"M": "M (mass matrix)", "Mdot": "Ṁ", "C": f"C ({factorization} factorization)", "g": "g (generalized gravity)", "tau": "τ (inverse dynamics)"}
        parts = []
        related = model.dof_related
        for k in keys:
            if k == "Gamma" and stream_gamma:
                entries, total = record["Gamma_largest"]
                parts.append(gamma_table(entries, total, model.dof_names, model.nv**3))
            elif k == "Gamma":
                G = record["Gamma"]
                entries, total = gamma_entries(G, top, tiny=1e-12 * float(np.abs(G).max(initial=0.0)))
                parts.append(gamma_table(entries, total, model.dof_names, model.nv**3))
            elif k in ("g", "tau"):
                parts.append(vector_table(titles[k], record[k], model.dof_names))
            else:
                parts.append(matrix_table(titles[k], record[k], model.dof_names, related))
        from rich.console import Group

        group = Group(*parts)
        if output:
            write_atomic(output, _render_to_text(group), force)
        else:
            out.print(group)
    if output:
        err.print(f"wrote {output}")


# -------------------------------------------------------------------------------------- verify
@cli.command()
@click.argument("robots", nargs=-1, metavar="[ROBOT ...]")
@floating_option
@strict_option
@click.option("--trials", type=click.IntRange(1, 1_000_000), default=100, show_default=True, help="Random states per robot.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--ref-trials", type=click.IntRange(0, 10_000), default=10, show_default=True,
              help="States on which the finite-difference, Safeea and Pinocchio references run.")
@click.option("--no-pinocchio", is_flag=True, help="Skip check (j) even when pin is installed.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def verify(robots, floating_base, trials, seed, ref_trials, no_pinocchio, fmt):
    """Check M, Ṁ, C and Γ of ROBOT(s) against identities and independent references.

    Without ROBOT: every bundled robot and the paper's generated topologies, fixed and floating.
    Exits with 1 if any check fails."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .checks.verify import default_suite, load_suite_robot, verify_robot
    from .report.checks import verification_table
    from .report.formats import to_json

    if robots:
        suite = [(r + (" +floating" if floating_base else ""), r, floating_base) for r in robots]
    else:
        suite = default_suite()
    models = [(label, load_suite_robot(src, fb, _strict())) for label, src, fb in suite]
    _warn_compile_once()
    records = []
    with Progress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True, disable=not err.is_terminal) as progress:
        task = progress.add_task("verifying", total=len(models) * trials)
        for label, model in models:
            progress.update(task, description=f"verifying {label}")
            records.append(verify_robot(model, label, trials, seed, ref_trials, not no_pinocchio,
                                        progress=lambda: progress.advance(task)))
    failed = [(r.label, c.key) for r in records for c in r.checks if c.passed is False]
    if fmt == "json":
        sys.stdout.write(to_json({"passed": not failed, "robots": [r.as_dict() for r in records]}))
    else:
        for r in records:
            out.print(verification_table(r))
        n_checks = sum(1 for r in records for c in r.checks if c.passed is not None)
        if failed:
            out.print(_styled((f"{len(failed)} of {n_checks} checks failed", "bold red"),
                              ": " + ", ".join(f"{label} ({key})" for label, key in failed)))
        else:
            out.print(_styled((f"all {n_checks} applicable checks passed", "green"), f" on {len(records)} robot(s)"))
    if failed:
        sys.exit(1)


# ---------------------------------------------------------------------------------------- skew
@cli.command()
@robot_argument
@floating_option
@strict_option
@click.option("--trials", type=click.IntRange(1, 100_000), default=20, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def skew(robot, floating_base, trials, seed, fmt):
    """Skew-symmetry of Ṁ − 2C for each factorization, beside a valid but non-admissible one."""
    from .checks.skew import skew_report
    from .report.checks import skew_table
    from .report.formats import to_json

    model = _load(robot, floating_base)
    _warn_compile_once()
    rows = skew_report(model, trials, seed)
    ok = all(r.as_expected for r in rows)
    if fmt == "json":
        sys.stdout.write(to_json({"robot": model.name, "trials": trials, "as_expected": ok, "rows": [r.as_dict() for r in rows]}))
    else:
        out.print(skew_table(model.name + (" +floating" if floating_base else ""), rows, trials))
    if not ok:
        sys.exit(1)


# --------------------------------------------------------------------------------------- bench
@cli.command()
@click.argument("robots", nargs=-1, metavar="[ROBOT ...]")
@click.option("--topology", type=click.Choice(["serial", "binary", "biped", "quadruped", "all"]), default="all", show_default=True)
@click.option("--dofs", default="5:40:5", show_default=True, help="START:STOP[:STEP] or a comma list.")
@click.option("--what", default="C,Gamma", show_default=True, help="C (M, Ṁ and C together), Gamma, or both.")
@floating_option
@strict_option
@click.option("--repeat", type=click.IntRange(3, 1000), default=15, show_default=True, help="Timed rounds; the median is reported.")
@click.option("--peers", is_flag=True, help="Time Pinocchio and our own baselines in the same process.")
@click.option("--batch", is_flag=True, help="Also time a batch of 10,000 states (per state, in parallel).")
@click.option("--table1", is_flag=True, help="The core paper's Table 1 at 20 DoF beside the paper's numbers.")
@click.option("--plot", type=click.Path(dir_okay=False), help="Write a log-log plot of time vs DoF (PNG).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("-o", "--output", help="Write the report to this file.")
@click.option("--force", is_flag=True, help="Overwrite existing files.")
def bench(robots, topology, dofs, what, floating_base, repeat, peers, batch, table1, plot, fmt, output, force):
    """Time M, Ṁ, C and Γ: on ROBOT files, over a DoF sweep of generated topologies, or as Table 1."""
    from rich.console import Group
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .bench.suite import OURS_LOOP, bench_label, bench_system, fit_slope, parse_dofs
    from .report.bench import slope_table, sweep_plot, sweep_table, system_table, table1 as table1_render
    from .report.formats import to_json
    from .report.output import check_writable, write_atomic

    whats = []
    for w in what.split(","):
        w = w.strip()
        if w.lower() in ("c", "m", "mdot"):
            w = "C"
        elif w.lower() == "gamma":
            w = "Gamma"
        else:
            raise StateError(f"--what: unknown output '{w}' (C or Gamma)")
        if w not in whats:
            whats.append(w)
    for path in (plot, output):
        if path:
            check_writable(path, force)
    topologies = ["serial", "binary", "biped", "quadruped"] if topology == "all" else [topology]
    if robots:
        jobs = [(bench_label(r) + (" +floating" if floating_base else ""), r, None, None) for r in robots]
        mode = "robots"
    elif table1:
        jobs = [(f"{t}:20", f"{t}:20", t, 20) for t in ("serial", "binary", "biped", "quadruped")]
        mode = "table1"
    else:
        jobs = [(f"{t}:{d}", f"{t}:{d}", t, d) for t in topologies for d in parse_dofs(dofs)]
        mode = "sweep"
    if plot and mode != "sweep":
        raise StateError("--plot draws a DoF sweep: use it without ROBOT and without --table1")
    models = [(label, _load(src, floating_base), topo) for label, src, topo, _ in jobs]
    _warn_compile_once()
    results = []
    with Progress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True, disable=not err.is_terminal) as progress:
        task = progress.add_task("timing", total=len(models))
        for label, model, topo in models:
            progress.update(task, description=f"timing {label}")
            results.append(bench_system(model, label, topo, tuple(whats), peers, repeat,
                                        batch=batch or (peers and mode == "robots"), slow_baselines=mode != "sweep"))
            progress.advance(task)
    record: dict = {"mode": mode, "floating_base": floating_base, "systems": [s.as_dict() for s in results]}
    parts = []
    if mode == "robots":
        parts = [system_table(s) for s in results]
    elif mode == "table1":
        parts = [table1_render(results)]
        if peers:
            parts += [system_table(s) for s in results]
    else:
        sweeps = {t: [s for s in results if s.topology == t] for t in topologies}
        slopes = {t: {w: fit_slope([s.dof for s in ss], [s.get(w, OURS_LOOP) for s in ss])
                      for w in whats if all(s.get(w, OURS_LOOP) is not None for s in ss)}
                  for t, ss in sweeps.items()}
        record["slopes"] = slopes
        parts = [sweep_table(t, ss) for t, ss in sweeps.items()] + [slope_table(slopes)]
        if plot:
            write_atomic(plot, sweep_plot(sweeps), force)
            err.print(f"wrote {plot}")
    if fmt == "json":
        _emit_text(to_json(record), output, force)
    elif output:
        write_atomic(output, _render_to_text(Group(*parts)), force)
    else:
        out.print(Group(*parts))
    if output:
        err.print(f"wrote {output}")


# -------------------------------------------------------------------------------------- main
def _show_warning(message, category, filename, lineno, file=None, line=None):
    err.print(_styled(("warning:", "yellow"), f" {message}"), soft_wrap=True)


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that clean-up (temporary files) runs as for Ctrl-C."""


def _on_sigterm(signum, frame):
    raise Terminated()


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    warnings.showwarning = _show_warning
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        rv = cli.main(args=argv, prog_name="coriolis", standalone_mode=False)
    except click.exceptions.Abort:
        err.print("aborted")
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except CoriolisError as e:
        err.print(_styled(("error:", "red"), f" {e}"), soft_wrap=True)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    except Terminated:
        err.print("terminated")
        sys.exit(143)
    except Exception as e:  # noqa: BLE001 - the one place unexpected errors are turned into a message
        if debug:
            raise
        msg = str(e).splitlines()[0] if str(e) else ""
        err.print(_styled(("error:", "red"), f" unexpected {type(e).__name__}: {msg} (run with --debug for the traceback)"),
                  soft_wrap=True)
        sys.exit(3)
    if isinstance(rv, int) and rv != 0:
        sys.exit(rv)


if __name__ == "__main__":
    main()
