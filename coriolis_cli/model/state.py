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


def parse_vector(text: str, expected: int, option: str, names) -> np.ndarray:
    parts = [p.strip() for p in text.replace(";", ",").split(",")]
    if parts == [""]:
        parts = []
    values = []
    for p in parts:
        try:
            x = parse_number(p)
        except ValueError:
            raise StateError(f"{option}: '{p}' is not a number") from None
        if not math.isfinite(x):
            raise StateError(f"{option}: '{p}' is not a finite number")
        values.append(x)
    if len(values) != expected:
        raise StateError(
            f"{option}: got {len(values)} values, the robot needs {expected} "
            f"({', '.join(names[:6])}{', ...' if len(names) > 6 else ''})"
        )
    return np.array(values)


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


def random_state(robot: RobotModel, seed: int | None, qd_range=(-10.0, 10.0)) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = robot.random_configuration(rng)
    qd = rng.uniform(qd_range[0], qd_range[1], robot.nv)
    return q, qd
