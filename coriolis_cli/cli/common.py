"""What the commands share: the click group, the consoles, options, loading and output.

Markup is off on every console: a robot's, a joint's or a file's name is printed as written,
and our own styling goes through rich Text and style= only. One path, nothing to escape by hand.
"""

from __future__ import annotations

import os
import sys

import click
import numpy as np
from rich.console import Console
from rich.text import Text

from .. import __version__
from ..errors import OutputError, StateError

def _piped_width() -> int:
    """COLUMNS when it is a sensible width, else 160: piped output is not squeezed to 80 columns,
    and what does not fit is laid out in blocks, never cut."""
    text = os.environ.get("COLUMNS", "")
    return int(text) if text.isdigit() and 20 <= int(text) <= 10_000 else 160


_width = None if sys.stdout.isatty() else _piped_width()
out = Console(highlight=False, markup=False, width=_width)
err = Console(stderr=True, highlight=False, markup=False, width=None if sys.stderr.isatty() else 200)

FORMATS = ("table", "json", "npz", "csv")
EXT_FORMAT = {".json": "json", ".npz": "npz", ".csv": "csv", ".txt": "table"}


def styled(*parts) -> Text:
    """Text from strings and (string, style) pairs; strings are never read as markup."""
    return Text.assemble(*parts)


class ExampleLast(click.Command):
    """A command whose --help ends with the example its docstring gives ("Example: ..."), after
    the options, where a reader looking for how to call it finishes."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.help and "Example:" in self.help:
            body, _, example = self.help.partition("Example:")
            self.help = body.rstrip()
            self.epilog = "\b\nExample: " + " ".join(example.split())  # \\b: click keeps it on one line


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="coriolis")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for unexpected errors.")
def cli(debug):
    """Mass matrix M, Ṁ, Coriolis matrix C and Christoffel symbols Γ of robots (URDF, YAML or
    generated TOPOLOGY:DOF specs such as quadruped:20) with the recursive algorithms of
    Echeandia & Wensing."""


cli.command_class = ExampleLast

robot_argument = click.argument("robot", metavar="ROBOT")
floating_option = click.option("--floating-base", is_flag=True, help="Put a free joint between the world and the root link.")


def _remember_strict(ctx, param, value):
    if value:
        ctx.find_root().meta["coriolis.strict"] = True


strict_option = click.option(
    "--strict", is_flag=True, expose_value=False, callback=_remember_strict,
    help="Refuse robots with inertias no rigid body has or joints that move no mass, and recordings' samples "
         "with a missing or NaN value (default: warn, compute, skip).")


def strict() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.find_root().meta.get("coriolis.strict"))


def _remembered_choice(name: str, choices, default: str, help: str):
    """An option every robot-loading command takes, kept for the loader: (option, getter)."""
    key = f"coriolis.{name}"

    def remember(ctx, param, value):
        ctx.find_root().meta[key] = value

    def get() -> str:
        ctx = click.get_current_context(silent=True)
        return (ctx.find_root().meta.get(key) if ctx else None) or default

    option = click.option(f"--{name.replace('_', '-')}", type=click.Choice(choices), default=default, show_default=True,
                          expose_value=False, callback=remember, help=help)
    return option, get


mimic_option, mimic = _remembered_choice(
    "mimic", ["independent", "enforce"], "independent",
    "independent: mimic joints are DoF of their own (Pinocchio's default); enforce: q_j = a·q_m + b, "
    "results in the independent joints' coordinates.")
base_velocity_option, base_velocity = _remembered_choice(
    "base_velocity", ["body", "mixed", "inertial"], "body",
    "Floating base velocity: body [ᴮv; ᴮω] (Pinocchio's), mixed [ṗ; ᴬω], inertial [ṗ − ᴬω × p; ᴬω] "
    "(iDynTree's BODY_FIXED, MIXED, INERTIAL_FIXED).")


dof_order_option, dof_order = _remembered_choice(
    "dof_order", ["file", "pinocchio"], "file",
    "file: DoF depth first with each link's children as the file writes them; pinocchio: children by "
    "joint name, Pinocchio's order (vectors and matrices equal Pinocchio's entry by entry).")


loops_option, loops_mode = _remembered_choice(
    "loops", ["closed", "open"], "closed",
    "closed: closed loops (MJCF <connect>/<weld>, YAML loops:) are solved for, results in independent "
    "coordinates; open: their closures are dropped (one warning names them), the spanning tree remains.")


def _remember_independent(ctx, param, value):
    names = tuple(n.strip() for item in value or () for n in item.split(",") if n.strip())
    ctx.find_root().meta["coriolis.independent"] = names


independent_option = click.option(
    "--independent", multiple=True, metavar="NAMES", expose_value=False, callback=_remember_independent,
    help="The closed loops' independent coordinates, comma-separated joint names (default: as the file lists "
         "them; for MJCF, the actuated joints when they number the loops' DoF, else chosen from the constraint "
         "Jacobian; info shows the choice).")


def _remember_lock(ctx, param, value):
    ctx.find_root().meta["coriolis.lock"] = parse_lock(value)


def parse_lock(items) -> dict[str, float | None]:
    """``--lock PATTERN[=VALUE]`` options as {pattern: value or None}."""
    from ..model.numbers import parse_number

    out: dict[str, float | None] = {}
    for item in items or ():
        pattern, eq, text = item.rpartition("=") if "=" in item else (item, "", "")
        if not pattern:
            raise StateError(f"--lock '{item}': give a joint name or pattern before '='")
        value = None
        if eq:
            try:
                value = parse_number(text)
            except ValueError:
                raise StateError(f"--lock '{item}': '{text}' is not a number (radians or metres)") from None
        if pattern in out and out[pattern] != value:
            raise StateError(f"--lock '{pattern}' is given twice with different values")
        out[pattern] = value
    return out


lock_option = click.option(
    "--lock", "lock", multiple=True, metavar="PATTERN[=VALUE]", expose_value=False, callback=_remember_lock,
    help="Hold the joints whose names match PATTERN (a shell glob, e.g. 'r_finger_*') fixed at VALUE (radians or "
         "metres; default: the joint's neutral value, 0 within its limits); their links merge into their parents. "
         "Repeatable; mimic joints follow the joint they mimic.")


def locked() -> dict[str, float | None]:
    ctx = click.get_current_context(silent=True)
    return (ctx.find_root().meta.get("coriolis.lock") if ctx else None) or {}


def _remember_xacro(ctx, param, value):
    args = {}
    for item in value or ():
        name, sep, val = item.partition(":=")
        if not sep or not name.strip():
            raise StateError(f"--xacro-arg '{item}': write NAME:=VALUE")
        args[name.strip()] = val
    ctx.find_root().meta["coriolis.xacro_args"] = args


def _remember_packages(ctx, param, value):
    ctx.find_root().meta["coriolis.package_paths"] = tuple(value or ())


xacro_arg_option = click.option(
    "--xacro-arg", multiple=True, metavar="NAME:=VALUE", expose_value=False, callback=_remember_xacro,
    help="An argument of a .xacro robot (repeatable), as xacro takes it on its command line.")
package_path_option = click.option(
    "--package-path", multiple=True, type=click.Path(file_okay=False), expose_value=False, callback=_remember_packages,
    help="A folder holding ROS packages, or a package, for a .xacro robot's $(find pkg) (repeatable; "
         "ROS_PACKAGE_PATH and AMENT_PREFIX_PATH are searched too).")


def _meta(key: str, default):
    ctx = click.get_current_context(silent=True)
    return (ctx.find_root().meta.get(key) if ctx else None) or default


def robot_options(f):
    """--floating-base, --strict, --mimic, --base-velocity and --lock: every command that loads robots."""
    return floating_option(fixed_robot_options(f))


def fixed_robot_options(f):
    """The robot options of a command that needs a fixed base (no --floating-base)."""
    return strict_option(mimic_option(base_velocity_option(lock_option(dof_order_option(
        loops_option(independent_option(xacro_arg_option(package_path_option(f)))))))))


def load(robot: str, floating_base: bool = False):
    from ..model import load_robot

    note_run_inputs()
    return load_robot(robot, floating_base=floating_base, **load_options())


# the options that name what a run writes; every other option or argument that names an existing
# file or folder is something the run reads
OUTPUT_PARAMETERS = frozenset({"output", "plot", "directory"})


def note_run_inputs() -> None:
    """The paths this command's arguments and options name (its robot, --state, --recording, ...)
    as the run's inputs, which no output of the run may replace (report.output.READ)."""
    from ..report.output import note_inputs

    ctx = click.get_current_context(silent=True)
    while ctx is not None:
        for name, value in ctx.params.items():
            if name in OUTPUT_PARAMETERS:
                continue
            for v in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(v, str) and v != "-" and os.path.exists(v):
                    note_inputs((v,))
        ctx = ctx.parent


def load_options() -> dict:
    """The robot options given on the command line, as load_robot's keyword arguments."""
    return dict(strict=strict(), mimic=mimic(), base_velocity=base_velocity(), lock=locked(), dof_order=dof_order(),
                xacro_args=_meta("coriolis.xacro_args", {}), package_paths=_meta("coriolis.package_paths", ()),
                loops=loops_mode(), independent=_meta("coriolis.independent", ()))


def parse_list(text: str, choices: dict[str, str], option: str) -> list[str]:
    """A comma list of names, case-insensitive, each mapped through ``choices``, without repeats."""
    picked: list[str] = []
    for item in text.split(","):
        key = item.strip().lower()
        if not key:
            continue
        if key not in choices:
            names = ", ".join(dict.fromkeys(choices.values()))
            raise StateError(f"{option}: unknown quantity '{item.strip()}' (choose from {names})")
        if choices[key] not in picked:
            picked.append(choices[key])
    if not picked:
        raise StateError(f"{option}: nothing to compute")
    return picked


# extensions that name a format of their own, which a table, JSON, NPZ or CSV under that name is not
OTHER_FORMATS = (".parquet", ".pq", ".arrow", ".feather", ".mcap", ".bag", ".db3", ".png", ".svg", ".pdf", ".jpg",
                 ".jpeg", ".h5", ".hdf5", ".mat", ".pkl", ".pickle", ".npy", ".xlsx", ".yaml", ".yml", ".urdf", ".xml")


def resolve_format(fmt: str | None, output: str | None, formats=FORMATS) -> str:
    """--format, else the format -o's extension names (a text table for no extension or .txt); an
    extension that names another format is refused, never written over with something else."""
    if fmt:
        return fmt
    if output:
        ext = os.path.splitext(output)[1].lower()
        fmt = EXT_FORMAT.get(ext, "table")
        if ext in OTHER_FORMATS or fmt not in formats:
            names = {"table": "a table (.txt)", "json": "JSON", "npz": "NPZ", "csv": "CSV"}
            said = ", ".join(names[f] for f in formats[:-1]) + f" or {names[formats[-1]]}"
            raise OutputError(f"-o {output}: this command writes {said}, not {ext[1:]}",
                              hint="name the file by its format, or give --format")
        return fmt
    return "table"


def render_to_text(renderable) -> str:
    console = Console(record=True, width=160, file=open(os.devnull, "w"), highlight=False, markup=False)
    console.print(renderable)
    return console.export_text()


def check_outputs(force: bool, output: str | None = None, plot: str | None = None, inputs=()) -> None:
    """Every output path of a run checked before any work: writable, two different files, none of
    them one of the run's ``inputs`` (files it reads), and a --plot extension that names a picture
    format."""
    from ..report.output import check_distinct, check_not_an_input, check_writable, figure_format

    note_run_inputs()
    if plot:
        figure_format(plot)
    check_distinct(output, plot)
    check_not_an_input((output, plot), inputs)
    for path in (output, plot):
        if path:
            check_writable(path, force)


def emit(renderable_or_text, output: str | None, force: bool) -> None:
    """Bytes (a file format such as NPZ or PNG, ``output`` required), text or a rich renderable to
    ``output`` (written atomically) or to standard output; says what was written."""
    from ..report.output import write_atomic

    if isinstance(renderable_or_text, bytes):
        write_atomic(output, renderable_or_text, force)
    elif isinstance(renderable_or_text, str):
        if output:
            write_atomic(output, renderable_or_text, force)
        else:
            sys.stdout.write(renderable_or_text)
    elif output:
        write_atomic(output, render_to_text(renderable_or_text), force)
    else:
        out.print(renderable_or_text)
    if output:
        err.print(f"wrote {output}")


def progress(total: int, what: str, remaining: bool = False):
    """A progress bar on stderr when it is a terminal (one per long command); ``remaining`` adds
    the estimate of the time left."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    columns = [TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    if remaining:
        columns += [TextColumn("left"), TimeRemainingColumn()]
    bar = Progress(*columns, console=err, transient=True, disable=not err.is_terminal)
    task = bar.add_task(what, total=total)
    return bar, task


def say_note(text: str) -> None:
    """A choice made for the user, said once after the command's output if it succeeds."""
    import warnings

    from ..errors import Note

    warnings.warn(Note(text), stacklevel=2)


def effort_options(f):
    """--effort-scale and --effort-offset: the recorded effort made joint torque (recordings.calibration)."""
    f = click.option("--effort-offset", metavar="N|NAME=V,...|FILE.yaml",
                     help="Added to the scaled effort, per joint (N·m or N): a torque sensor's offset.")(f)
    f = click.option("--effort-scale", metavar="K|NAME=K,...|FILE.yaml",
                     help="τ = K · effort + offset: a number for every joint, NAME=K pairs, or a YAML of drive gains "
                          "(torque_constant × gear_ratio, offset) when the log holds motor currents.")(f)
    return f


def recording_options(f):
    """What reading a recording takes: --topic, --base-topic, the effort's scale and offset, and
    the differentiation --window (recordings.stream_recording's options)."""
    f = click.option("--window", default=None, show_default="0.1s", metavar="DURATION|SAMPLES",
                     help="Differentiation window for what the recording lacks (q̇, q̈): a cubic fitted on the "
                          "stamps over a duration (0.1s, 50ms) or an odd number of samples.")(f)
    f = effort_options(f)
    f = click.option("--base-topic", help="A floating base's Odometry topic.")(f)
    return click.option("--topic", help="The JointState topic (see compute --recording).")(f)


def reading_options(model, recordings, topic, base_topic, window, **effort) -> dict:
    """The options of reading ``recordings`` (recordings.stream_recording's: topic, base_topic,
    window, strict and, for commands that take them, effort_scale and effort_offset), checked before
    anything is read, as the library checks them but named by this command's options
    (``--window abc: ...``), where the library's errors name its parameters (``window='abc'``).
    Also for the recordings a command hands to its workers."""
    from ..recordings import check_base_topic
    from ..recordings.align import parse_window
    from ..recordings.calibration import effort_calibration
    from ..recordings.sources import is_npz, refuse_topics

    for path in recordings:  # an NPZ has no topics (told by its name, nothing is read)
        if path and is_npz(path):
            refuse_topics(path, topic, base_topic, ("--topic", "--base-topic"))
    check_base_topic(model, base_topic, "--base-topic", "pass --floating-base")
    if window is not None:
        parse_window(window, "--window")
    if effort:
        effort_calibration(model, effort.get("effort_scale"), effort.get("effort_offset"),
                           ("--effort-scale", "--effort-offset"))
    return dict(topic=topic, base_topic=base_topic, window=window, strict=strict(), **effort)


def random_state(robot, seed: int | None, qd_range=(-10.0, 10.0)):
    """compute --random's state: a configuration within the joint limits (where a robot's loops
    close) and velocities uniform in ``qd_range``."""
    from .. import engine

    rng = np.random.default_rng(seed)
    q = engine.random_configuration(robot, rng)
    return q, rng.uniform(qd_range[0], qd_range[1], robot.nv)
