"""Every public function of the engine in each of its forms, on a tree and on robots in other
coordinates (mimic joints, a floating base's mixed and inertial velocities, a closed loop): one
state into fresh arrays, a batch, data= for one state and data= with a batch.

A batch is its states one by one, each output with a leading K; data= gives the fresh result in
the workspace's own field, the one the tree's data= form returns; a fresh result is the caller's
own; and whatever one form refuses, the others refuse in the same words (data= with a batch as
the tree refuses it). The functions are read from engine.api, so that a new one is held here as
soon as it is public."""

from __future__ import annotations

import functools
import inspect
import os
import warnings

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.engine import api

K = 3
STATE_NAMES = ("q", "qd", "qdd", "tau", "qd_r", "qdd_r", "v", "lam")  # lower-cased: Q, QD, QDD are trajectories'
EXTRA = {"top": 5}  # what the functions take besides states and options


def _public():
    """engine.api's functions of a robot's state: (robot, q, ...)."""
    out = []
    for name in api.__all__:
        function = getattr(api, name)
        if not callable(function) or isinstance(function, type):
            continue
        parameters = list(inspect.signature(function).parameters)
        if parameters[:1] == ["robot"] and parameters[1:2] and parameters[1].lower() == "q":
            out.append(name)
    return out


FUNCTIONS = _public()

ROBOTS = {
    "panda": lambda: cc.load_robot("panda"),
    "quadruped": lambda: cc.load_robot("quadruped", floating_base=True),
    "gripper (mimic)": lambda: cc.load_robot("gripper", mimic="enforce"),
    "quadruped (mixed)": lambda: cc.load_robot("quadruped", floating_base=True, base_velocity="mixed"),
    "quadruped (inertial)": lambda: cc.load_robot("quadruped", floating_base=True, base_velocity="inertial"),
    "fourbar (loop)": lambda: cc.load_robot("fourbar"),
    "rod leg (loops through a ball joint)": lambda: cc.load_robot(os.path.join(os.path.dirname(__file__), "data", "mjcf",
                                                                               "rod_leg.xml")),
}


def test_every_described_function_is_held_here():
    described = {n for n in api.__all__ if hasattr(getattr(api, n), "algorithm")}
    assert described <= set(FUNCTIONS) and len(FUNCTIONS) >= 23, sorted(set(FUNCTIONS) ^ described)
    assert {"christoffel_slices", "christoffel_largest", "coriolis_matrix_derivatives"} <= set(FUNCTIONS)


@functools.cache
def _robot(key):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ROBOTS[key]()


@functools.cache
def _states(key):
    """K random states: (K, nq) configurations and (K, nv) velocities, one per state parameter."""
    robot = _robot(key)
    rng = np.random.default_rng(7)
    Q = np.array([cc.random_configuration(robot, rng) for _ in range(K)])
    return Q, [rng.uniform(-1.0, 1.0, (K, robot.nv)) for _ in range(len(STATE_NAMES) - 1)]


def _arguments(name, key, index=None):
    """The positional arguments of ``name`` at state ``index`` (None: the batch of K)."""
    Q, V = _states(key)
    pick = (lambda X: X) if index is None else (lambda X: X[index])
    args, velocities = [], iter(V)
    for p in list(inspect.signature(getattr(api, name)).parameters.values())[1:]:
        if p.name.lower() in STATE_NAMES:
            args.append(pick(Q) if p.name.lower() == "q" else pick(next(velocities)))
        elif p.name in EXTRA:
            args.append(EXTRA[p.name])
        elif p.default is inspect.Parameter.empty:
            raise AssertionError(f"{name}: give the test a value of its parameter '{p.name}' (EXTRA)")
    return args


def _outcome(call):
    """("ok", result) or ("refused", type, message); a generator is run to its end."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a warning in one form and not another is a difference too
            result = call()
            if inspect.isgenerator(result):
                result = list(result)
        return ("ok", result)
    except Exception as e:  # noqa: BLE001 (the refusal is what is compared)
        return ("refused", type(e), str(e))


def _arrays(result):
    """A result as its arrays: one array, a tuple (or NamedTuple) of them, Γ's slices, largest entries."""
    if isinstance(result, np.ndarray):
        return [result]
    if isinstance(result, list):  # christoffel_slices: (k, Γ[:, :, k]) pairs
        return [np.array([k for k, _ in result]), np.array([S for _, S in result])]
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], list):  # christoffel_largest
        return [np.array(result[0], dtype=float).reshape(-1, 4), np.array(result[1])]
    assert isinstance(result, tuple), type(result)
    return [np.asarray(x) for x in result]


def _same_bits(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@functools.cache
def _tree_refusals(name):
    """How the tree refuses a batch, and a batch with data=: what every robot's forms must say."""
    tree = _robot("quadruped")
    function = getattr(api, name)
    batch = _outcome(lambda: function(tree, *_arguments(name, "quadruped")))
    into = None
    if "data" in inspect.signature(function).parameters:
        data = cc.create_data(tree)
        into = _outcome(lambda: function(tree, *_arguments(name, "quadruped"), data=data))
        assert into[0] == "refused", (name, "the tree takes a batch with data=")
    return (batch if batch[0] == "refused" else None), into


@functools.cache
def _tree_field(name):
    """The name of the Data field the tree's data= form returns, or None where it returns no field."""
    tree = _robot("quadruped")
    data = cc.create_data(tree)
    result = getattr(api, name)(tree, *_arguments(name, "quadruped", 0), data=data)
    names = [n for n, value in vars(data).items() if value is result]
    return names[0] if names else None


@pytest.mark.parametrize("key", list(ROBOTS))
@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_form_agrees_with_one_state(name, key):
    robot = _robot(key)
    function = getattr(api, name)
    has_data = "data" in inspect.signature(function).parameters
    batch_only = getattr(getattr(function, "algorithm", None), "kernel", 1) is None  # one state is a batch of one
    batch_refusal, data_batch_refusal = _tree_refusals(name)

    one = [_outcome(lambda s=s: function(robot, *_arguments(name, key, s))) for s in range(K)]
    refused = [o for o in one if o[0] == "refused"]
    if refused:  # a function this robot's coordinates do not take: refused alike at every state and in every form
        assert all(o == refused[0] for o in one), (name, one)
        assert refused[0][1] is not TypeError, refused[0]  # a refusal, not a bug
    # a batch: its states one by one, each output (K, *one state's shape)
    batch = _outcome(lambda: function(robot, *_arguments(name, key)))
    if batch_refusal is not None:
        assert batch == batch_refusal, (name, batch, batch_refusal)
    elif refused:
        assert batch == refused[0], (name, batch)
    else:
        assert batch[0] == "ok", (name, batch)
        whole, parts = batch[1], [o[1] for o in one]
        assert type(whole) is type(parts[0]), (name, type(whole), type(parts[0]))
        # bit for bit: every form computes each state by the same code (the tree's batch kernels
        # run the one-state kernels' arithmetic; other coordinates loop over the one-state function)
        for s in range(K):
            for i, (w, p) in enumerate(zip(_arrays(whole), _arrays(parts[s]))):
                p = p[0] if batch_only else p
                assert w.shape == (K, *p.shape), (name, i, w.shape, p.shape)
                assert _same_bits(w[s], p), (name, i, s, np.abs(w[s] - p).max())
        # and a batch of no states, (0, *one state's shape) for each output
        empty = _outcome(lambda: function(robot, *(x[:0] if isinstance(x, np.ndarray) else x
                                                   for x in _arguments(name, key))))
        assert empty[0] == "ok" and type(empty[1]) is type(whole), (name, empty)
        for w, e in zip(_arrays(whole), _arrays(empty[1])):
            assert e.shape == (0, *w.shape[1:]), (name, e.shape, w.shape)
    if has_data:
        # data=: the fresh result, in the field of the workspace that the tree's data= form returns
        data = cc.create_data(robot)
        field = _tree_field(name)
        for s in range(K):
            into = _outcome(lambda s=s: function(robot, *_arguments(name, key, s), data=data))
            if refused:
                assert into == refused[0], (name, into)
                continue
            assert into[0] == "ok", (name, into)
            assert type(into[1]) is type(one[s][1]), name
            assert all(_same_bits(a, b) for a, b in zip(_arrays(into[1]), _arrays(one[s][1]))), (name, s)
            if field is not None:
                assert into[1] is getattr(data, field), (name, field)
        # data= with a batch: refused as the tree refuses it
        assert _outcome(lambda: function(robot, *_arguments(name, key), data=data)) == data_batch_refusal, name
    # a fresh result is the caller's own: the calls since have left it as it was
    if not refused:
        again = _outcome(lambda: function(robot, *_arguments(name, key, 0)))
        assert all(_same_bits(a, b) for a, b in zip(_arrays(again[1]), _arrays(one[0][1]))), name


TAKE_OUT = [name for name in FUNCTIONS if "out" in inspect.signature(getattr(api, name)).parameters]


def _filled(arrays, value=np.nan):
    """Writable arrays of the shapes of ``arrays``, holding ``value`` (what a caller's may hold)."""
    return tuple(np.full(a.shape, value) for a in arrays)


def test_out_is_taken_wherever_a_batch_kernel_gives_what_the_caller_gets():
    assert len(TAKE_OUT) >= 18 and {"coriolis_matrix", "mass_matrix", "inverse_dynamics"} <= set(TAKE_OUT)
    for name in TAKE_OUT:
        assert getattr(api, name).algorithm.batch is not None, name


@pytest.mark.parametrize("key", list(ROBOTS))
@pytest.mark.parametrize("name", TAKE_OUT)
def test_out_writes_the_fresh_result_into_the_callers_arrays(name, key):
    """out=: a batch's and one state's result in the caller's arrays, whatever they held (NaN here,
    where the kernels leave the entries the robot cannot fill), and the same arrays returned; a
    previous call's result is written in place; refused where the fresh call is refused."""
    robot, function = _robot(key), getattr(api, name)
    for index in (None, 0):
        arguments = _arguments(name, key, index)
        fresh = _outcome(lambda: function(robot, *arguments))
        if fresh[0] == "refused":  # the arrays it would return, of the robot's shapes
            described = function.algorithm
            shape = described.shape(robot) if index is not None else (K, *described.batch_shape(robot))
            take = described.take if index is not None else described.batch_take
            given = _filled(_arrays(take(np.zeros(shape))))
            given = given[0] if len(given) == 1 else given
            assert _outcome(lambda: function(robot, *arguments, out=given)) == fresh, name
            continue
        expected = _arrays(fresh[1])
        single = isinstance(fresh[1], np.ndarray)
        given = _filled(expected)
        result = _outcome(lambda: function(robot, *arguments, out=given[0] if single else given))
        assert result[0] == "ok", (name, result)
        got = (result[1],) if single else result[1]
        assert all(g is a for g, a in zip(got, given)), name
        assert all(_same_bits(a, b) for a, b in zip(given, expected)), (name, index)
        # a previous call's arrays, poisoned: written in place, the same objects back
        previous = function(robot, *arguments)
        for a in _arrays(previous):
            a[...] = np.nan
        again = function(robot, *arguments, out=previous)
        assert again is previous if single else all(x is y for x, y in zip(again, previous)), name
        assert all(_same_bits(a, b) for a, b in zip(_arrays(again), expected)), (name, index)


@pytest.mark.parametrize("name", ["mass_matrix", "coriolis_matrix", "inverse_dynamics"])
def test_out_refuses_arrays_it_cannot_fill_in_one_line(name):
    robot, function = _robot("quadruped"), getattr(api, name)
    arguments = _arguments(name, "quadruped")
    expected = _arrays(function(robot, *arguments))
    single = len(expected) == 1
    pack = (lambda arrays: arrays[0]) if single else tuple
    wrong = [
        pack([np.zeros(a.shape[:-1] + (a.shape[-1] + 1,)) for a in expected]),  # a shape too wide
        pack([np.zeros(a.shape, dtype=np.float32) for a in expected]),          # float32
        tuple(np.zeros(a.shape) for a in expected) + (np.zeros(expected[0].shape),),  # one array too many
        [1.0, 2.0],
    ]
    read_only = [np.zeros(a.shape) for a in expected]
    read_only[0].setflags(write=False)
    wrong.append(pack(read_only))
    for out in wrong:
        outcome = _outcome(lambda: function(robot, *arguments, out=out))
        assert outcome[0] == "refused" and outcome[1] is cc.StateError, (name, outcome)
        assert outcome[2].startswith(f"out: {name} needs ") and "\n" not in outcome[2], outcome
    data = cc.create_data(robot)
    one = _arguments(name, "quadruped", 0)
    outcome = _outcome(lambda: function(robot, *one, data=data, out=pack([np.zeros(a.shape[1:]) for a in expected])))
    assert outcome[:2] == ("refused", cc.StateError) and "not both" in outcome[2], outcome


def test_out_that_shares_memory_with_a_state_gets_the_result_of_the_state_as_given():
    """τ written over the q̇ it is computed from: the kernel must not read what it has written."""
    robot = _robot("panda")
    q, qd, qdd = (_states("panda")[0][0], *_states("panda")[1][0][:2])
    qd, qdd = _states("panda")[1][0][0].copy(), _states("panda")[1][1][0].copy()
    expected = cc.inverse_dynamics(robot, q, qd, qdd)
    result = cc.inverse_dynamics(robot, q, qd, qdd, out=qd)
    assert result is qd and _same_bits(qd, expected)
    Qd = _states("panda")[1][0].copy()
    expected = cc.inverse_dynamics(robot, _states("panda")[0], Qd, _states("panda")[1][1])
    assert _same_bits(cc.inverse_dynamics(robot, _states("panda")[0], Qd, _states("panda")[1][1], out=Qd), expected)
