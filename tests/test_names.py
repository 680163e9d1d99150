"""One quantity, one name: each public function's key and its outputs' names (engine.NAMED, from
``@algorithm``) are the names of Data's fields, compute's --what and its JSON keys, bench's and
codegen's --what and the recording's columns. The commands' tables are read from the engine's,
so a name changed there changes everywhere or fails here."""

from __future__ import annotations

import inspect
import json
import warnings

import numpy as np
import pytest
from click.testing import CliRunner

import coriolis_cli as cc
from coriolis_cli import engine
from coriolis_cli.engine import api, compiled
from coriolis_cli.engine.conventions import TRAJECTORY_OUTPUTS
from coriolis_cli.engine.data import RENAMED

# Γ's streamed forms: Γ by other means, not quantities of their own
UNNAMED = {"christoffel_slices", "christoffel_largest"}


def _functions_of_a_state():
    for name in api.__all__:
        f = getattr(api, name)
        if callable(f) and not isinstance(f, type):
            parameters = list(inspect.signature(f).parameters)
            if parameters[:1] == ["robot"] and parameters[1:2] and parameters[1].lower() == "q":
                yield name, f


def test_every_function_of_a_state_has_one_key_and_its_outputs_names():
    keys = {}
    for name, f in _functions_of_a_state():
        if name in UNNAMED:
            continue
        assert hasattr(f, "names"), f"{name} has no Names: give it a key in @algorithm (or @named)"
        assert f.names.key not in keys, f"{name} and {keys.get(f.names.key)} share the key {f.names.key}"
        keys[f.names.key] = name
        assert engine.NAMED[f.names.key] is f
        assert f.names.outputs and all(isinstance(n, str) and n for n in f.names.outputs)
    assert set(engine.NAMED) == set(keys)


def test_one_name_is_one_quantity_whatever_function_returns_it():
    """Where two functions return the same name, they return the same numbers."""
    robot = cc.load_robot("panda")
    rng = np.random.default_rng(3)
    q, qd = robot.random_configuration(rng), rng.standard_normal(robot.nv)
    M, Mdot, C = cc.coriolis_matrix(robot, q, qd)
    same = {"M": [M, cc.mass_matrix(robot, q)], "g": [cc.gravity_vector(robot, q), cc.trajectory_dynamics(
        robot, q[None], qd[None])[0, : robot.nv]], "p": [cc.generalized_momentum(robot, q, qd), cc.trajectory_dynamics(
            robot, q[None], qd[None])[0, 3 * robot.nv : 4 * robot.nv]]}
    for name, (a, b) in same.items():
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(a).max(), err_msg=name)


def test_data_fields_are_the_outputs_names():
    """A data= call returns the fields named by its outputs, the same arrays."""
    robot = cc.load_robot("panda")
    d = cc.create_data(robot)
    rng = np.random.default_rng(0)
    q = robot.random_configuration(rng)
    x = [rng.standard_normal(robot.nv) for _ in range(4)]
    for key, f in engine.NAMED.items():
        if getattr(getattr(f, "algorithm", None), "into", None) is None and key != "dC":
            continue
        states = [q, *x][: len([p for p in f.algorithm.states])] if hasattr(f, "algorithm") else [q, x[0]]
        result = f(robot, *states, data=d)
        results = result if isinstance(result, tuple) else (result,)
        assert len(results) == len(f.names.outputs), key
        for name, array in zip(f.names.outputs, results):
            assert getattr(d, name) is array, f"{key}: data.{name} is not what the data= call returned"


def test_the_former_field_names_still_read_with_a_warning():
    robot = cc.load_robot("panda")
    d = cc.create_data(robot)
    for old, new in RENAMED.items():
        with pytest.warns(DeprecationWarning, match=f"data.{old} is data.{new}"):
            assert getattr(d, old) is getattr(d, new)
    with pytest.raises(AttributeError):
        d.no_such_field  # noqa: B018
    reduced = cc.load_robot("robots/quadruped.urdf", floating_base=True, base_velocity="mixed")
    with pytest.warns(DeprecationWarning):
        assert cc.create_data(reduced).dtau_dv.shape == (reduced.nv, reduced.nv)


def test_compute_takes_and_writes_the_engines_names(tmp_path):
    from coriolis_cli.cli import cli
    from coriolis_cli.cli.compute.evaluation import COMPUTE_QUANTITIES, DERIVATIVES, TENSORS

    outputs = {n for f in engine.NAMED.values() for n in f.names.outputs}
    assert set(COMPUTE_QUANTITIES) <= outputs and set(DERIVATIVES) | set(TENSORS) <= set(COMPUTE_QUANTITIES)
    help_text = " ".join(CliRunner().invoke(cli, ["compute", "--help"], terminal_width=400).output.split())
    for name in COMPUTE_QUANTITIES:
        assert name in help_text, f"compute --help does not list {name}"
    out = tmp_path / "out.json"
    r = CliRunner().invoke(cli, ["compute", "panda", "--random", "--what", ",".join(COMPUTE_QUANTITIES), "-o", str(out)])
    assert r.exit_code == 0, r.output
    keys = set(json.loads(out.read_text()))
    assert set(COMPUTE_QUANTITIES) <= keys


def test_bench_and_codegen_name_what_they_time_and_write_by_the_engines_names():
    from coriolis_cli.cli.bench import BENCH_KEYS, FORMER_NAMES, what_names
    from coriolis_cli.codegen.trace import WHAT
    from coriolis_cli.report.bench import OUTPUT_LABELS

    assert set(BENCH_KEYS) <= set(engine.NAMED)
    assert set(what_names().values()) == set(BENCH_KEYS)
    assert set(OUTPUT_LABELS) - {"centroidal"} == set(BENCH_KEYS)  # Pinocchio's centroidal map, for scale
    assert what_names()["m"] == "M" and what_names()["mdot"] == "C" and what_names()["minv"] == "dqdd"
    assert all(what_names()[old] == new for old, new in FORMER_NAMES.items())
    outputs = {n for f in engine.NAMED.values() for n in f.names.outputs}
    for name in WHAT:  # codegen: a key, or an output's name (M, Ṁ and C are its coriolis function's)
        assert name in engine.NAMED or name in outputs, name


def test_a_recordings_columns_are_trajectory_dynamics_outputs_in_the_cores_order():
    from coriolis_cli.along import dynamics

    assert engine.trajectory_dynamics.names.outputs == TRAJECTORY_OUTPUTS == dynamics.WHAT
    columns = dict(zip(TRAJECTORY_OUTPUTS, compiled.TRAJECTORY_COLUMNS))
    assert columns == {w: row for w, row in dynamics._ROW.items()}
    robot = cc.load_robot("panda")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dynamics.columns(robot, ("CTqd",)) == ["time", *(f"CTqd/{d}" for d in robot.dof_names)]


def test_the_former_names_cost_the_data_calls_nothing():
    """They are properties: a class with __getattr__ looks every attribute up the slow way, which
    cost each data= call 0.09 µs (measured against the calls before the names changed)."""
    from coriolis_cli.engine.data import Data
    from coriolis_cli.engine.workspaces import ReducedData

    for cls in (Data, ReducedData):
        assert "__getattr__" not in vars(cls) and "__getattribute__" not in vars(cls)
        assert all(isinstance(vars(cls)[old], property) for old in RENAMED)
