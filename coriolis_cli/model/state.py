"""Robot states from the command line: comma lists, YAML/JSON files keyed by DoF name, random draws."""

from __future__ import annotations

import math

import numpy as np
import yaml

from ..errors import StateError
from ..errors import ModelError
from .limits import load_json, load_yaml
from .loader import read_text
from .numbers import as_float, parse_number
from .tree import RobotModel


def _float(value) -> float:
    try:
        return as_float(value)
    except ValueError:
        return math.inf  # reported as not a finite number


def parse_vector(text: str, expected: int, option: str, names, default=None) -> np.ndarray:
    """A comma list of ``expected`` numbers, or of ``name=value`` pairs (the other entries keep
    ``default``, zeros if None)."""
    parts = [p.strip() for p in text.replace(";", ",").split(",")]
    if parts == [""]:
        parts = []
    if any("=" in p for p in parts):
        return _by_name(parts, expected, option, names, default)
    values = [_number(p, option) for p in parts]
    if len(values) != expected:
        raise StateError(
            f"{option}: got {len(values)} value{'' if len(values) == 1 else 's'}, the robot needs {expected} "
            f"({', '.join(names[:6])}{', ...' if len(names) > 6 else ''}), or give name=value pairs"
        )
    return np.array(values)


def _number(text: str, option: str, name: str | None = None) -> float:
    where = f"{option} {name}" if name else option
    try:
        x = parse_number(text)
    except ValueError:
        raise StateError(f"{where}: '{text}' is not a number") from None
    if not math.isfinite(x):
        raise StateError(f"{where}: '{text}' is not a finite number")
    return x


def _by_name(parts, expected: int, option: str, names, default) -> np.ndarray:
    out = np.zeros(expected) if default is None else np.array(default, dtype=float)
    index = {n: i for i, n in enumerate(names)}
    seen = set()
    for p in parts:
        name, eq, value = p.partition("=")
        name = name.strip()
        if not eq:
            raise StateError(f"{option}: '{p}' is not name=value; give every entry by name, or all {expected} in order")
        if name not in index:
            raise StateError(f"{option}: unknown DoF name '{name}' (known: {', '.join(names[:8])}"
                             f"{', ...' if len(names) > 8 else ''})")
        if name in seen:
            raise StateError(f"{option}: '{name}' is given twice")
        seen.add(name)
        out[index[name]] = _number(value.strip(), option, name)
    return out


def _fill(target: np.ndarray, mapping, names, what: str, path: str) -> None:
    if mapping is None:
        return
    if not isinstance(mapping, dict):
        raise StateError(f"{path}: '{what}' must map DoF names to numbers")
    index = {n: i for i, n in enumerate(names)}
    for key, value in mapping.items():
        if key not in index:
            raise StateError(f"{path}: unknown DoF name '{key}' in '{what}' (known: {', '.join(names[:8])}{', ...' if len(names) > 8 else ''})")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(_float(value)):
            shown = repr(value) if isinstance(value, float) or not isinstance(value, int) else "an integer too large for a double"
            raise StateError(f"{path}: {what}.{key} must be a finite number, got {shown[:40]}")
        target[index[key]] = _float(value)


def read_state_file(path: str, robot: RobotModel) -> tuple[np.ndarray, np.ndarray]:
    """A YAML or JSON mapping ``{q: {name: value}, qd: {name: value}}``; missing entries take the
    neutral configuration and zero velocity."""
    try:
        text = read_text(path)
    except ModelError as e:
        raise StateError(str(e)) from None
    try:
        data = load_json(text) if path.lower().endswith(".json") else load_yaml(text)
    except (ValueError, yaml.YAMLError) as e:
        raise StateError(f"{path}: cannot parse ({(str(e).splitlines() or ['syntax error'])[0]})") from None
    if not isinstance(data, dict) or not set(data) <= {"q", "qd"}:
        raise StateError(f"{path}: expected a mapping with keys 'q' and/or 'qd'")
    q = robot.neutral_configuration()
    qd = np.zeros(robot.nv)
    _fill(q, data.get("q"), robot.config_names, "q", path)
    _fill(qd, data.get("qd"), robot.dof_names, "qd", path)
    return q, qd
