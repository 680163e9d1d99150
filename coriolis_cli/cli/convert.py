"""`coriolis convert` and `coriolis generate`: robot descriptions to URDF or YAML files."""

from __future__ import annotations

import os

import click

from ..errors import StateError
from .common import (cli, emit, err, load_options, lock_option, locked, package_path_option, robot_argument, styled,
                     xacro_arg_option)


def write_description(desc, output: str, force: bool):
    from ..model import to_urdf, to_yaml
    from ..model.loader import URDF_EXT, YAML_EXT
    from ..model.description import STANDARD_GRAVITY

    ext = os.path.splitext(output)[1].lower()
    if ext in YAML_EXT:
        text = to_yaml(desc)
    elif ext in URDF_EXT:
        text = to_urdf(desc)
        lost = []
        armed = [j.name for j in desc.joints if any(j.armature)]
        if armed:
            lost.append(f"the armature of {len(armed)} joint{'s' if len(armed) > 1 else ''} ({', '.join(armed[:3])}"
                        f"{', ...' if len(armed) > 3 else ''})")
        if desc.gravity is not None and tuple(desc.gravity) != STANDARD_GRAVITY:
            lost.append(f"the gravity ({', '.join(f'{g:g}' for g in desc.gravity)}) m/s²")
        if lost:
            import warnings

            from ..errors import ModelWarning

            warnings.warn(ModelWarning(f"{output}: URDF has no place for {' and '.join(lost)}, so a tool reading it will "
                                       "not have them; the .yaml format carries both"), stacklevel=2)
    else:
        raise StateError(f"{output}: unknown extension '{ext}' (use .urdf or .yaml)")
    emit(text, output, force)


@cli.command()
@robot_argument
@click.option("-o", "--output", required=True, help="Target file: .urdf or .yaml.")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@lock_option
@xacro_arg_option
@package_path_option
def convert(robot, output, force):
    """Convert ROBOT between URDF and YAML (the format follows the extension of -o). Elements the
    dynamics does not read (visuals, collisions, materials, transmissions, plugins) are carried as
    they are written (YAML's urdf: lists). With --lock, the locked joints are written as fixed
    joints at their values.

    Example: coriolis convert robots/panda.urdf -o panda.yaml
    """
    from ..model import build_model, load_description
    from ..model.lock import lock_joints
    from ..model.xacro_format import is_xacro_path
    from ..report.output import check_not_an_input, check_writable

    check_not_an_input((output,), (robot,))
    check_writable(output, force)
    options = load_options()
    desc = lock_joints(load_description(robot, options["xacro_args"], options["package_paths"]), locked())
    tree = build_model(desc)  # refuse to convert what we could not compute with
    if desc.loops and not desc.independent:  # MJCF's loops: the coordinates load_robot chooses, written out
        from dataclasses import replace

        from ..model.loops import LoopMap

        desc = replace(desc, independent=LoopMap(tree).independent_names)
    if is_xacro_path(robot) and not locked() and output.lower().endswith((".urdf", ".xml")):
        from ..model.xacro_format import expand

        emit(expand(robot, options["xacro_args"], options["package_paths"]), output, force)  # xacro's own text
        return
    write_description(desc, output, force)
    dropped = _comments(robot) if desc.origin_format != "mjcf" else 0  # MJCF's elements are not carried either
    if dropped:
        err.print(styled(("note:", "yellow"), f" {dropped} XML comment{'s' if dropped > 1 else ''} of {robot} "
                         "not carried (every element is)"), soft_wrap=True)


def _comments(robot: str) -> int:
    """The XML comments in a URDF file, which no parsed description keeps."""
    from ..model.loader import read_text

    if not os.path.isfile(robot):
        return 0
    try:
        text = read_text(robot)
    except Exception:  # noqa: BLE001 - it was read a moment ago; a note is not worth an error
        return 0
    return text.count("<!--") if text.lstrip().startswith("<") else 0


@cli.command()
@click.argument("spec", metavar="TOPOLOGY:DOF")
@click.option("-o", "--output", required=True, help="Target file: .urdf or .yaml.")
@click.option("--seed", type=int, default=None, help="Seed of the random inertias and axes (default 0; or TOPOLOGY:DOF:SEED).")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def generate(spec, output, seed, force):
    """Write a generated topology (serial, binary, biped, quadruped) such as quadruped:20.

    Example: coriolis generate quadruped:20:7 -o q20.urdf
    """
    from ..model.topologies import generate as make, parse_spec
    from ..report.output import check_writable

    topo, dof, spec_seed = parse_spec(spec)
    if seed is not None and spec.count(":") == 2 and seed != spec_seed:
        raise StateError(f"two seeds: {spec} says {spec_seed}, --seed says {seed}; give one")
    check_writable(output, force)
    write_description(make(topo, dof, spec_seed if seed is None else seed), output, force)
