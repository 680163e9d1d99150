"""The one calling layer: every public function is made from its description in engine.api, and
its forms (one state fresh, data=, a batch, a robot in other coordinates) agree with each other."""

import inspect
import warnings

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.engine import api
from coriolis_cli.errors import StateError

from .conftest import robot_path

DESCRIBED = [name for name in api.__all__ if hasattr(getattr(api, name), "algorithm")]
NOT_YET_IN_OTHER_COORDINATES: set[str] = set()
# made of the described functions rather than of one kernel
COMPOSED = {"christoffel_slices", "christoffel_largest", "coriolis_matrix_derivatives", "forward_dynamics_second_derivatives"}


def test_every_kernel_function_is_described_once_and_keeps_its_declared_signature():
    of_a_state = [name for name in api.__all__ if inspect.isfunction(getattr(api, name))
                  and list(inspect.signature(getattr(api, name)).parameters)[:1] == ["robot"]
                  and name not in ("check_gamma_size", "create_data", "gamma_bytes", "positive_definite",
                                   "singular_mass_matrix")]
    assert sorted(DESCRIBED) == sorted(set(of_a_state) - COMPOSED) and len(DESCRIBED) >= 20
    for name in DESCRIBED:
        function = getattr(api, name)
        declared = function.__wrapped__
        assert inspect.signature(function) == inspect.signature(declared), name
        assert function.__doc__ and function.__doc__ == declared.__doc__, name
        code = function.__code__  # the made function's own parameters, not only what __wrapped__ shows
        assert list(code.co_varnames[: code.co_argcount]) == list(inspect.signature(declared).parameters), name
        assert function.__defaults__ == declared.__defaults__, name
        assert (function.algorithm.reduced is not None) != (name in NOT_YET_IN_OTHER_COORDINATES), name
        assert getattr(cc, name) is function


def _states(robot, rng, K=None):
    shape = () if K is None else (K,)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = np.array([cc.random_configuration(robot, rng) for _ in range(K or 1)])
    q = q[0] if K is None else q
    return q, *(rng.standard_normal(shape + (robot.nv,)) for _ in range(3))


CALLS = {  # name: the public call at (q, v1, v2, v3)
    "coriolis_matrix": lambda r, q, a, b, c, **k: cc.coriolis_matrix(r, q, a, **k),
    "christoffel": lambda r, q, a, b, c, **k: cc.christoffel(r, q, **k),
    "mass_matrix": lambda r, q, a, b, c, **k: cc.mass_matrix(r, q, **k),
    "inverse_dynamics": lambda r, q, a, b, c, **k: cc.inverse_dynamics(r, q, a, b, **k),
    "gravity_vector": lambda r, q, a, b, c, **k: cc.gravity_vector(r, q, **k),
    "generalized_momentum": lambda r, q, a, b, c, **k: cc.generalized_momentum(r, q, a, **k),
    "coriolis_transpose_velocity": lambda r, q, a, b, c, **k: cc.coriolis_transpose_velocity(r, q, a, **k),
    "forward_dynamics": lambda r, q, a, b, c, **k: cc.forward_dynamics(r, q, a, b, **k),
    "slotine_li": lambda r, q, a, b, c, **k: cc.slotine_li(r, q, a, b, c, **k),
    "regressor": lambda r, q, a, b, c, **k: cc.regressor(r, q, a, b, c, **k),
    "adaptation_gradient": lambda r, q, a, b, c, **k: cc.adaptation_gradient(r, q, a, b, c, **k),
    "momentum_regressors": lambda r, q, a, b, c, **k: cc.momentum_regressors(r, q, a, **k),
}


def _arrays(result):
    return [np.asarray(x) for x in (result if isinstance(result, tuple) else (result,))]


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("robot_file", ["panda.urdf", "quadruped.urdf"])
def test_fresh_data_and_batch_forms_give_the_same_bits(name, robot_file):
    robot = cc.load_robot(robot_path(robot_file), floating_base=robot_file == "quadruped.urdf")
    rng = np.random.default_rng(5)
    call = CALLS[name]
    states = _states(robot, rng, K=3)
    has_data = "data" in inspect.signature(getattr(api, name)).parameters
    batch = getattr(api, name).algorithm.batch is not None
    whole = _arrays(call(robot, *states)) if batch else None
    data = cc.create_data(robot)
    for s in range(3):
        one = [states[0][s], *(x[s] for x in states[1:])]
        fresh = _arrays(call(robot, *one))
        lists = _arrays(call(robot, *(x.tolist() for x in one)))  # the checked path
        assert all(np.array_equal(a, b) for a, b in zip(fresh, lists)), name
        if has_data:
            into = _arrays(call(robot, *one, data=data))
            assert all(np.array_equal(a, b) for a, b in zip(fresh, into)), name
        if batch:
            assert all(np.array_equal(a[s], b) for a, b in zip(whole, fresh)), name
    if not batch:
        with pytest.raises(StateError, match=f"q: {name} takes one state at a time, got a batch of 3"):
            call(robot, *states)


def test_a_robot_in_other_coordinates_takes_the_registered_form_with_or_without_data():
    robot = cc.load_robot(robot_path("quadruped.urdf"), floating_base=True, base_velocity="mixed")
    q, a, b, c = _states(robot, np.random.default_rng(2))
    data = cc.create_data(robot)
    for name in ("coriolis_matrix", "mass_matrix", "inverse_dynamics", "gravity_vector", "forward_dynamics", "slotine_li"):
        fresh = _arrays(CALLS[name](robot, q, a, b, c))
        into = _arrays(CALLS[name](robot, q, a, b, c, data=data))
        assert all(np.array_equal(x, y) for x, y in zip(fresh, into)), name
    full = robot.full  # the tree: M̄ differs from M in its base block only
    assert not np.allclose(cc.mass_matrix(robot, q)[:6, :6], cc.mass_matrix(full, q)[:6, :6])


def test_a_workspace_of_another_robot_or_another_kind_is_refused_in_one_line():
    panda, other = cc.load_robot("panda"), cc.load_robot("panda")
    q = np.zeros(panda.nq)
    with pytest.raises(StateError, match="data was created for robot 'panda', not for this robot object"):
        cc.mass_matrix(panda, q, data=cc.create_data(other))
    with pytest.raises(StateError, match=r"data must come from create_data\(robot\)"):
        cc.inverse_dynamics(panda, q, q, q, data={"M": 1})


def test_the_public_functions_show_their_lines_in_tracebacks_and_to_inspect():
    """The functions engine.algorithms writes from their declarations keep their source where
    tracebacks, inspect and debuggers read a file's lines."""
    import inspect
    import linecache
    import traceback

    robot = cc.load_robot("panda")
    data = cc.create_data(robot)
    linecache.checkcache()  # as a long session's tracebacks do: the generated source stays
    try:
        cc.coriolis_matrix(robot, np.zeros(3), np.zeros(7), data=data)
    except cc.StateError as e:
        frames = traceback.extract_tb(e.__traceback__)
    generated = next(f for f in frames if f.name == "coriolis_matrix")
    assert generated.filename.startswith("<coriolis_cli.engine.algorithms")
    assert generated.line.startswith("return call(description, robot, (q, qd,)")
    source = inspect.getsource(cc.coriolis_matrix.__code__)
    assert source.startswith("def coriolis_matrix(robot, q, qd, factorization=")
    assert "kernel(data.core, q, qd, CHRISTOFFEL, data.coriolis_block)" in source
