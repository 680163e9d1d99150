"""Effort as a drive logs it, made joint torque: τ = scale · effort + offset per DoF.

Industrial drives log motor current; the torque is current × torque constant × gear ratio, and
torque sensors carry offsets. ``effort_scale`` and ``effort_offset`` (the CLI's ``--effort-scale``
and ``--effort-offset``) take:

- a number, for every joint;
- ``NAME=VALUE,NAME=VALUE``, for those joints (the others keep 1 and 0);
- a YAML file of drive gains, one entry per joint::

      joint1: 8.2                                        # the scale itself
      joint2: {torque_constant: 0.082, gear_ratio: 100}  # their product is the scale
      joint3: {scale: 9.1, offset: -0.35}                # with an offset (N·m), as --effort-offset

A joint the robot does not have is refused by name, as is a value that is not finite or a scale of
zero (which would erase the effort). An error names the option as its caller does: the parameter
for the library, the command's option for the command line (``options``).
"""

from __future__ import annotations

import math
import os

import numpy as np

from ..errors import RecordingError


def _number(text, what: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise RecordingError(f"{what}: '{text}' is not a number") from None
    if not math.isfinite(value):
        raise RecordingError(f"{what}: {text} is not finite")
    return value


def _entries(spec, what: str) -> dict:
    """{joint or '*': (scale or None, offset or None)} of one option's text, or of a YAML file."""
    if isinstance(spec, (int, float)):
        return {"*": (float(spec), None)}
    text = str(spec).strip()
    if text.lower().endswith((".yaml", ".yml")) or os.path.isfile(text):
        import yaml

        try:
            with open(text, encoding="utf-8") as f:
                data = yaml.safe_load(f)
        except OSError as e:
            raise RecordingError(f"{what}: cannot read '{text}' ({e.strerror or e})") from None
        except yaml.YAMLError as e:
            raise RecordingError(f"{what}: '{text}' is not YAML ({' '.join(str(e).split())[:160]})") from None
        if not isinstance(data, dict):
            raise RecordingError(f"{what}: '{text}' must map each joint to its scale or its drive gains")
        out = {}
        for joint, value in data.items():
            where = f"{what}: {text}: {joint}"
            if isinstance(value, dict):
                unknown = set(value) - {"scale", "torque_constant", "gear_ratio", "offset"}
                if unknown:
                    raise RecordingError(f"{where}: unknown key '{sorted(unknown)[0]}' (scale, torque_constant, "
                                         "gear_ratio, offset)")
                if "scale" in value and ("torque_constant" in value or "gear_ratio" in value):
                    raise RecordingError(f"{where}: give the scale or the torque constant and gear ratio, not both")
                scale = None
                if "scale" in value:
                    scale = _number(value["scale"], where)
                elif "torque_constant" in value or "gear_ratio" in value:
                    scale = _number(value.get("torque_constant", 1.0), where) * _number(value.get("gear_ratio", 1.0), where)
                offset = _number(value["offset"], where) if "offset" in value else None
                out[str(joint)] = (scale, offset)
            else:
                out[str(joint)] = (_number(value, where), None)
        return out
    if "=" not in text:
        return {"*": (_number(text, what), None)}
    out = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        if not sep or not name.strip():
            raise RecordingError(f"{what}: '{part}' is not NAME=VALUE")
        out[name.strip()] = (_number(value, f"{what} {name.strip()}"), None)
    return out


PARAMETERS = ("effort_scale", "effort_offset")  # what the library's errors name; the CLI passes its options


def effort_calibration(robot, scale=None, offset=None, options=PARAMETERS) -> tuple[np.ndarray, np.ndarray] | None:
    """(scale, offset) per DoF of the robot's tree from the two options' values (None: not given),
    or None when neither changes anything. An error names the option as ``options`` does: the
    parameters (``effort_scale``, ``effort_offset``) by default, the CLI's own options when it
    checks them (``("--effort-scale", "--effort-offset")``)."""
    tree = getattr(robot, "full", robot)
    names = list(tree.dof_names)
    k, b = np.ones(len(names)), np.zeros(len(names))
    for spec, what, is_offset in ((scale, options[0], False), (offset, options[1], True)):
        if spec is None:
            continue
        for joint, (s, o) in _entries(spec, what).items():
            if joint != "*" and joint not in names:
                raise RecordingError(f"{what}: the robot has no joint '{joint}' (its joints: {', '.join(names[:8])}"
                                     f"{', ...' if len(names) > 8 else ''})")
            where = slice(None) if joint == "*" else names.index(joint)
            if is_offset:
                b[where] = s  # the value given is an offset
            else:
                if s is not None:
                    if s == 0.0:
                        whose = "the effort" if joint == "*" else f"the effort of '{joint}'"
                        raise RecordingError(f"{what}: a scale of 0 would erase {whose}")
                    k[where] = s
                if o is not None:
                    b[where] = o
    if np.all(k == 1.0) and not np.any(b):
        return None
    return k, b
