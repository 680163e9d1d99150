"""The workspace's memory estimate is the bytes it allocates: the core's fields and the output
blocks are each described once (core/data.hpp's table, data.BLOCKS), and the estimate is read from
those descriptions, not mirrored by hand."""

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.engine import compiled
from coriolis_cli.engine.data import BLOCKS, Data, workspace_bytes


@pytest.mark.parametrize("spec, floating", [("panda", False), ("quadruped:20", False), ("humanoid", True)])
def test_the_estimate_is_the_bytes_the_workspace_allocates(spec, floating):
    robot = cc.load_robot(spec, floating_base=floating)
    data = Data(robot)
    assert workspace_bytes(robot) == data.bytes
    outputs = sum(getattr(data, b.name).nbytes for b in BLOCKS)
    assert data.bytes == data.core.bytes + outputs
    # the core's share is its model and its table's fields, known before it is made
    assert data.core.bytes == compiled.workspace_bytes(robot.nq, robot.n_bodies, robot.nv)


def test_every_output_block_is_written_by_a_public_function_and_read_through_its_views():
    """Each block's views are views of the block (no copy), read-only; the data= functions
    return them."""
    robot = cc.load_robot("panda")
    data = Data(robot)
    for block in BLOCKS:
        array = getattr(data, block.name)
        for name in block.views:
            view = getattr(data, name)
            assert np.shares_memory(view, array) and not view.flags.writeable, name
    q, v = robot.neutral_configuration(), np.full(robot.nv, 0.3)
    assert cc.coriolis_matrix(robot, q, v, data=data) is data.coriolis_outputs
    assert cc.mass_matrix(robot, q, data=data) is data.M
    assert cc.inverse_dynamics(robot, q, v, v, data=data) is data.tau


def test_a_workspace_too_large_for_the_machine_is_refused_before_it_is_made(monkeypatch):
    from coriolis_cli.engine import data as data_module

    robot = cc.load_robot("quadruped:20")
    monkeypatch.setattr(data_module, "workspace_bytes", lambda r: 2**30)  # a robot of 1 GiB
    monkeypatch.setattr(data_module, "available_memory", lambda: 2**29)  # on a machine with half that
    with pytest.raises(cc.SizeError, match="the workspace needs about 1.0 GiB"):
        Data(robot)


def test_an_output_cannot_be_replaced_and_detached_from_the_calls_that_write_it():
    robot = cc.load_robot("panda")
    data = Data(robot)
    q, v = robot.neutral_configuration(), np.full(robot.nv, 0.3)
    written = cc.inverse_dynamics_derivatives(robot, q, v, v, data=data)[0]
    for name in ("dtau_dq", "M", "derivatives_block", "coriolis_outputs"):
        with pytest.raises(AttributeError, match=f"data.{name} is an output that the data= calls write in place"):
            setattr(data, name, np.zeros((7, 7)))
    cc.christoffel(robot, q, data=data)  # allocated on first use, then kept as well
    with pytest.raises(AttributeError, match="data.Gamma is an output"):
        data.Gamma = np.zeros((7, 7, 7))
    again = cc.inverse_dynamics_derivatives(robot, q, 2 * v, v, data=data)[0]
    assert again is written and data.dtau_dq is written  # still the array the calls write


def test_the_composed_functions_data_outputs_are_read_only_views_as_every_other_is():
    """∂C/∂q and the forward dynamics' second-order tensors, which are composed of other functions,
    write into fields of the workspace that, as every field, the caller cannot write."""
    robot = cc.load_robot("panda")
    data = cc.create_data(robot)
    q, v = robot.neutral_configuration(), np.full(robot.nv, 0.3)
    first = cc.coriolis_matrix_derivatives(robot, q, v, data=data)
    again = cc.coriolis_matrix_derivatives(robot, q + 0.1, v, data=data)
    assert first is again and not again.flags.writeable
    assert np.array_equal(again, cc.coriolis_matrix_derivatives(robot, q + 0.1, v))
    tensors = cc.forward_dynamics_second_derivatives(robot, q, v, np.zeros(robot.nv), data=data)
    assert all(not t.flags.writeable for t in tensors)
    later = cc.forward_dynamics_second_derivatives(robot, q, v, np.ones(robot.nv), data=data)
    assert all(a is b for a, b in zip(tensors, later))
