"""`coriolis verify`: checks a-k on random states, one robot or the built-in suite."""

from __future__ import annotations

import sys
import time

import click

from .common import cli, emit, load_options, out, progress, robot_options, styled


def _duration(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds >= 0.1 else f"{1000 * seconds:.0f} ms"


def _one_line(record, seconds: float) -> str:
    checks = [c for c in record.checks if c.passed is not None]
    failed = [c.key for c in checks if c.passed is False]
    verdict = f"{len(failed)} of {len(checks)} checks failed ({', '.join(failed)})" if failed else \
        f"all {len(checks)} applicable checks passed"
    return f"verified {record.label} (nv = {record.nv}, {record.trials} trials, {_duration(seconds)}): {verdict}"


@cli.command()
@click.argument("robots", nargs=-1, metavar="[ROBOT ...]")
@robot_options
@click.option("--trials", type=click.IntRange(1, 1_000_000), default=100, show_default=True, help="Random states per robot.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random states (same seed, same states).")
@click.option("--ref-trials", type=click.IntRange(0, 10_000), default=10, show_default=True,
              help="States on which the finite-difference, Safeea and Pinocchio references run.")
@click.option("--no-pinocchio", is_flag=True, help="Skip check (j) even when pin is installed.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="table (rich, for people) or json (every number, for programs).")
def verify(robots, floating_base, trials, seed, ref_trials, no_pinocchio, fmt):
    """Check M, Ṁ, C and Γ of ROBOT(s) against identities and independent references.

    Without ROBOT: every bundled robot and the paper's generated topologies, fixed and floating.
    Exits with 1 if any check fails.

    Example: coriolis verify robots/panda.urdf robots/fourbar.yaml --trials 20
    """
    from ..checks.verify import default_suite, load_suite_robot, verify_robot
    from ..report.checks import verification_table
    from ..report.formats import to_json

    if robots:
        suite = [(r + (" +floating" if floating_base else ""), r, floating_base) for r in robots]
    else:
        suite = default_suite()
    models = [(label, load_suite_robot(src, fb, **load_options())) for label, src, fb in suite]
    records = []
    stream = fmt == "table" and not out.is_terminal  # piped: say as each robot finishes
    bar, task = progress(len(models) * trials, "verifying")
    with bar:
        for label, model in models:
            bar.update(task, description=f"verifying {label}")
            start = time.perf_counter()
            records.append(verify_robot(model, label, trials, seed, ref_trials, not no_pinocchio,
                                        progress=lambda: bar.advance(task)))
            if stream:
                out.print(_one_line(records[-1], time.perf_counter() - start), soft_wrap=True)
                out.file.flush()
    failed = [(r.label, c.key) for r in records for c in r.checks if c.passed is False]
    if fmt == "json":
        emit(to_json({"passed": not failed, "robots": [r.as_dict() for r in records]}), None, False)
    else:
        for r in records:
            out.print(verification_table(r))
        n_checks = sum(1 for r in records for c in r.checks if c.passed is not None)
        if failed:
            out.print(styled((f"{len(failed)} of {n_checks} checks failed", "bold red"),
                             ": " + ", ".join(f"{label} ({key})" for label, key in failed)))
        else:
            out.print(styled((f"all {n_checks} applicable checks passed", "green"), f" on {len(records)} robot(s)"))
    if failed:
        sys.exit(1)
