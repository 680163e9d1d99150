"""Each algorithm of the core described once, and the one path from its public function to its kernel.

engine.api declares every public function by its signature and documentation under
``@algorithm(...)``, which says the rest: the kernel of engine.compiled, the block it writes for one
state and what the caller gets from it, the batch kernel, and the fields of Data that the ``data=``
form writes and returns. A robot in other coordinates gets the function that engine.coordinates
registers for it (``in_other_coordinates``). From that description ``algorithm`` makes the public
function, as ``dataclasses`` makes an ``__init__``: with the declared signature, it sends a call
with a workspace of this robot straight to the core (which checks the vectors itself), and every
other call to ``call``, the one checked path: other types, batches, fresh outputs, the robots in
other coordinates and whatever the core reports. A control loop's call thus costs one Python frame.

A robot in other coordinates takes the same path: its function (registered by engine.coordinates)
is one state's, called as a kernel is, ``function(robot, workspace, *states, *options, out)``, and
``call`` gives it the same checks, refusals, data= and fresh outputs as a tree's kernel, and its
batches state by state, with the shapes the batch kernel's would have.

Every kernel is called as ``kernel(workspace, *states, *options, out)``: the states are the
parameters between ``robot`` and the first option (``q`` nq wide, the others nv wide), the
options are the keyword parameters that OPTIONS knows, in the signature's order, and ``out`` is
one output block. A batch kernel is called as ``batch(workspace, Q, *other states, *options, out,
status, threads)`` over (K, ·) arrays (calls.run_batch).
"""

from __future__ import annotations

import inspect
import linecache
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..errors import StateError
from ..model.coordinates import ReducedRobot
from ..model.parameters import check_parameters
from ..model.tree import RobotModel
from .calls import (
    F64,
    check_data,
    checked,
    factorization_code,
    finite_vectors,
    gravity_of,
    is_vector,
    run_batch,
    settle,
    stacked_states,
)
from .conventions import CHRISTOFFEL
from .data import ALLOCATED_ON_FIRST_USE, BLOCKS, Data, check_memory
from .workspaces import KERNEL_SCRATCH, ReducedData, kernel_scratch, shared_data

MODEL_THETA = np.zeros(0)  # θ of length zero: the model's own inertial parameters


class Option(NamedTuple):
    """A keyword parameter the kernels know: the fast paths' condition on it (None: any value), the
    argument they pass with data= and without (None: not an argument of the kernel), and its
    conversion on the checked path."""

    condition: str | None
    data_argument: str | None
    fresh_argument: str | None
    convert: Callable | None


def gravity_for(robot, gravity):
    return robot.gravity_array if gravity is True else gravity_of(gravity)


def factorization_for(robot, name):
    return CHRISTOFFEL if name == "christoffel" else factorization_code(name)


def parameters_for(robot, theta):
    return MODEL_THETA if theta is None else check_parameters(robot, theta)


OPTIONS = {
    "gravity": Option("gravity is True", "data.gravity", "robot.gravity_array", gravity_for),
    "factorization": Option("factorization is DEFAULT_FACTORIZATION", "CHRISTOFFEL", "CHRISTOFFEL", factorization_for),
    "theta": Option("(theta is None or theta.size)", "MODEL_THETA if theta is None else theta",
                    "MODEL_THETA if theta is None else theta", parameters_for),
    "force": Option(None, None, None, None),  # Γ's memory guard's, not the kernel's
}


def _whole(out):
    return out


class Names(NamedTuple):
    """A public function's names, one for each quantity and used alike everywhere: ``key``, the
    function's (bench's and codegen's --what), and ``outputs``, each output's in the order returned
    (the field of Data that holds it, compute's --what, the JSON, CSV and NPZ keys)."""

    key: str
    outputs: tuple


NAMED: dict = {}  # key → public function, in the order api declares them


def named(key: str, outputs=()) -> Callable:
    """Gives a public function its Names (``algorithm`` does it for the functions it makes)."""

    def register(function):
        if key in NAMED and NAMED[key].__name__ != function.__name__:
            raise TypeError(f"{function.__name__}: the key {key!r} is {NAMED[key].__name__}'s already")
        function.names = Names(key, tuple(outputs))
        NAMED[key] = function
        return function

    return register


def _outputs_of(into, returns, outputs):
    """The names of what a data= form returns: the fields of its block (data.BLOCKS), where it
    returns a block's tuple of views, else the field it returns; those of a function without one,
    as given."""
    if into is None:
        return tuple(outputs)
    block = next((b for b in BLOCKS if b.outputs == returns), None)
    found = block.views if block is not None else ALLOCATED_ON_FIRST_USE.get(returns, (returns,))
    if outputs and tuple(outputs) != found:
        raise TypeError(f"outputs {outputs} differ from the names of Data's fields {found}")
    return found


@dataclass(eq=False)
class Algorithm:
    """One algorithm as the calling layer knows it (see the module's documentation)."""

    name: str
    states: tuple  # the state parameters' names: q, then velocities
    labels: tuple  # the same as messages name them (q, qd, ...)
    options: tuple  # the option parameters' names, in order
    kernel: Callable | None  # one state (None: batches only)
    shape: Callable  # robot → one state's output block
    take: Callable  # one state's block → what the caller gets
    batch: Callable | None  # K states (None: one state at a time)
    batch_shape: Callable  # robot → one state's part of the batch's block
    batch_take: Callable  # the batch's (K, ·) block → what the caller gets
    into: str | None  # the Data field the data= form writes (None: no data= form)
    returns: str | None  # the Data field it returns
    guard: Callable | None  # (robot, K, data, **options): refuses what is too large, readies data
    prepare: Callable | None  # (robot, states, options) → (states, kernel options), where not OPTIONS'
    finish: Callable | None  # (robot, result, states, kernel options) → what the caller gets
    names: Names | None = None  # its key and its outputs' names
    optional: tuple = ()  # the states that may be None (their default)
    reduced: Callable | None = None  # one state in other coordinates, public states and options as given (no
    # prepare): engine.coordinates's, called by call (_InOtherCoordinates)
    reduced_finish: bool = True  # whether ``finish`` applies to what ``reduced`` writes
    takes_out: bool = False  # whether the signature has out= (the caller's arrays, written in place)


def algorithm(kernel=None, *, key, outputs=(), shape, take=_whole, batch=None, batch_shape=None, batch_take=None,
              into=None, returns=None, guard=None, prepare=None, finish=None):
    """The decorator of engine.api: the public function of the declared signature and documentation,
    named ``key``; its outputs' names are the Data fields its data= form returns (data.BLOCKS), or
    ``outputs`` for a function without one."""

    def make(declared):
        parameters = list(inspect.signature(declared).parameters.values())
        names = [p.name for p in parameters]
        if names[0] != "robot":
            raise TypeError(f"{declared.__name__}: the first parameter is the robot")
        options = tuple(n for n in names if n in OPTIONS)
        states = tuple(n for n in names[1:] if n not in OPTIONS and n not in ("data", "out"))
        optional = tuple(p.name for p in parameters if p.name in states and p.default is None)
        description = Algorithm(
            declared.__name__, states, tuple(n.lower() for n in states), options, kernel, shape, take, batch, batch_shape or shape,
            batch_take or take, into, returns, guard, prepare, finish, Names(key, _outputs_of(into, returns, outputs)),
            optional, takes_out="out" in names)
        if description.takes_out and (batch is None or finish is not None or prepare is not None):
            raise TypeError(f"{declared.__name__}: out= needs a batch kernel whose block is what the caller gets")
        made = _function(description, parameters)
        made.__doc__, made.__module__, made.__qualname__ = declared.__doc__, declared.__module__, declared.__qualname__
        made.__wrapped__ = declared  # inspect.signature and the documentation read the declaration
        made.algorithm = description
        return named(key, description.names.outputs)(made)

    return make


def _function(description: Algorithm, parameters) -> Callable:
    """The public function's code, written out from the declared signature: the fast paths hold no
    loop, no unpacking and no call but the kernel's."""
    namespace = {"call": call, "kernel": description.kernel, "description": description, "CHRISTOFFEL": CHRISTOFFEL,
                 "MODEL_THETA": MODEL_THETA, "ND": np.ndarray, "F64": np.dtype(np.float64), "zeros": np.zeros,
                 "shape": description.shape, "take": description.take, "guard": description.guard,
                 "RobotModel": RobotModel, "SCRATCH": KERNEL_SCRATCH, "kernel_scratch": kernel_scratch}
    signature = []
    for p in parameters:
        if p.default is inspect.Parameter.empty:
            signature.append(p.name)
        else:
            namespace[f"default_{p.name}"] = p.default
            signature.append(f"{p.name}=default_{p.name}")
    namespace["DEFAULT_FACTORIZATION"] = namespace.get("default_factorization")
    options = [OPTIONS[o] for o in description.options]
    states, option_names = ", ".join(description.states), ", ".join(description.options)
    conditions = "".join(f" and {o.condition}" for o in options if o.condition)
    if description.takes_out:  # the caller's arrays take the checked path
        conditions += " and out is None"
    given_out = ", out" if description.takes_out else ""
    body = [f"def {description.name}({', '.join(signature)}):"]
    if description.into and description.kernel:  # a workspace of this robot: straight to the core
        arguments = "".join(f"{o.data_argument}, " for o in options if o.data_argument)
        body += [
            "    if data is not None:",
            "        try:",
            f"            if data.robot is robot{conditions} and not kernel(data.core, {states}, {arguments}"
            f"data.{description.into}):",
            f"                return data.{description.returns}",
            "        except (AttributeError, TypeError, ValueError):  # not a Data, a list, None, ...: checked below",
            "            pass",
            f"        return call(description, robot, ({states},), ({option_names}{',' if options else ''}), data"
            f"{given_out})",
        ]
    if description.kernel and not description.prepare and not description.finish:
        # float64 vectors of a tree: into fresh arrays, with the robot's own workspace (the GIL is
        # held while the kernel runs); lengths, strides and finiteness are checked in the core
        vectors = " and ".join(f"type({x}) is ND and {x}.dtype is F64 and {x}.ndim == 1" for x in description.states)
        arguments = "".join(f"{o.fresh_argument}, " for o in options if o.fresh_argument)
        body += [f"    if robot.__class__ is RobotModel and {vectors}{conditions}:"]
        if description.guard:
            body += [f"        guard(robot, 1, None{''.join(f', {o}={o}' for o in description.options)})"]
        body += [
            "        fresh = zeros(shape(robot))",
            "        if not kernel((robot.caches.get(SCRATCH) or kernel_scratch(robot)).core, "
            f"{states}, {arguments}fresh):",
            "            return fresh" if description.take is _whole else "            return take(fresh)",
        ]
    data = "data" if description.into else "None"
    body.append(f"    return call(description, robot, ({states},), ({option_names}{',' if options else ''}), {data}"
                f"{given_out})")
    source = "\n".join(body) + "\n"
    filename = f"<coriolis_cli.engine.algorithms: {description.name}>"
    # the source kept where tracebacks, inspect.getsource and debuggers look for a file's lines
    # (mtime None: linecache.checkcache keeps an entry that has no file on disk)
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 (our own text, made from the declared signature)
    return namespace[description.name]


def in_other_coordinates(public: Callable, *, finish: bool = True) -> Callable:
    """engine.coordinates's decorator: ``public``'s function for robots in other coordinates, one
    state's, called as a kernel is (see call); ``finish=False`` where the tree's ``finish`` does not
    apply to the block it writes. A function composed of others (christoffel_slices) is registered
    as it is and looks for it itself."""

    def register(function):
        if hasattr(public, "algorithm"):
            public.algorithm.reduced = function
            public.algorithm.reduced_finish = finish
        else:
            public.in_other_coordinates = function
        return function

    return register


def call(description: Algorithm, robot, states: tuple, options: tuple, data, out=None):
    """The checked path of every public function, for trees and for robots in other coordinates
    alike: the robot's route (_Tree or _InOtherCoordinates), the options converted, then one state
    with data=, a batch, or one state into fresh arrays or the caller's (``out``)."""
    kind = robot.__class__
    if kind is RobotModel:
        route = _Tree
    elif isinstance(robot, ReducedRobot):
        if description.reduced is None:
            raise StateError(f"{description.name} does not take robots in other coordinates (mimic joints, "
                             "base velocities, closed loops) yet; call it on robot.full")
        route = _InOtherCoordinates
    else:
        raise TypeError(f"{description.name}() takes a robot from coriolis_cli.load_robot (a RobotModel or a "
                        f"ReducedRobot), got {type(robot).__name__}")
    named = dict(zip(description.options, options))
    if description.prepare is not None:  # only trees' functions prepare (trajectory_dynamics)
        states, arguments = description.prepare(robot, states, named)
    else:  # converted for the kernel, and so refused as for a tree before any state
        arguments = tuple(OPTIONS[o].convert(robot, v) for o, v in named.items() if OPTIONS[o].convert)
    finish = description.finish if route is _Tree or description.reduced_finish else None
    if out is not None and data is not None:
        raise StateError(f"{description.name}: pass data= or out=, not both (data= writes into the workspace's "
                         "own arrays)")
    if data is not None:
        check_data(robot, data, route.workspace_kind)
        if description.guard is not None:
            description.guard(robot, 1, data, **named)
        route.one(description, robot, data, states, arguments, options, getattr(data, description.into))
        return getattr(data, description.returns)
    if description.kernel is None or not route.vectors(robot, description, states):
        Q, rest, batch = stacked_states(robot, states[0], *_given(description, states))
        rest = _with_none(states, (Q, *rest))[1:]
        if batch or description.kernel is None:
            if description.batch is None:
                raise StateError(f"q: {description.name} takes one state at a time, got a batch of {Q.shape[0]}")
            K = Q.shape[0]
            if description.guard is not None:
                description.guard(robot, K, None, **named)
            shape = (K, *description.batch_shape(robot))
            if out is not None:
                return _into_callers(description, robot, route, out, shape, description.batch_take, (Q, *rest),
                                     lambda block, clear: route.batch(description, robot, Q, rest, arguments, options,
                                                                      block, clear))
            check_memory(8 * int(np.prod(shape)), f"{description.name} of {K} states")
            # calloc'd zeros: the kernels write only the related entries, and untouched pages cost nothing
            block = route.batch(description, robot, Q, rest, arguments, options, np.zeros(shape))
            result = description.batch_take(block)
            return result if finish is None else finish(robot, result, (Q, *rest), arguments)
        states = (Q[0], *(None if x is None else x[0] for x in rest))
    if description.guard is not None:
        description.guard(robot, 1, None, **named)
    if out is not None:
        def one(block, clear):
            if clear:
                block.fill(0.0)
            route.one(description, robot, None, states, arguments, options, block)
            return block

        return _into_callers(description, robot, route, out, description.shape(robot), description.take, states, one)
    block = np.zeros(description.shape(robot))  # written by the kernel itself: fresh outputs, no copy
    route.one(description, robot, None, states, arguments, options, block)
    result = description.take(block)
    return result if finish is None else finish(robot, result, states, arguments)


def _into_callers(description: Algorithm, robot, route, out, shape, take, states, compute):
    """``out=``: the result written into the caller's arrays and returned as they were given.
    ``compute(block, clear)`` fills a block of ``shape``; where the arrays are that block's views as
    the function returns them (a previous call's result), it writes them in place, after clearing
    them (``clear``: they may hold anything; the kernels write only the entries the robot can fill);
    otherwise into fresh zeros, copied into the arrays."""
    expected = take(np.broadcast_to(np.zeros(()), shape))  # the returned arrays' shapes, nothing allocated
    single = not isinstance(expected, tuple)
    expected = (expected,) if single else expected
    given = (out,) if single and type(out) is np.ndarray else out
    shapes = " and ".join(str(e.shape) for e in expected)
    what = "a writable float64 array" if single else f"a tuple of {len(expected)} writable float64 arrays"
    if (not isinstance(given, (tuple, list)) or len(given) != len(expected)
            or any(type(g) is not np.ndarray or g.dtype != F64 or g.shape != e.shape or not g.flags.writeable
                   for g, e in zip(given, expected))):
        raise StateError(f"out: {description.name} needs {what} of shape {shapes} (what it returns)")
    block = _block_of(given, shape, take)
    if block is not None and not any(np.may_share_memory(block, x) for x in states if x is not None):
        compute(block, True)
    else:  # the caller's own arrays, or arrays that share memory with the states: by a fresh block
        check_memory(8 * int(np.prod(shape)), f"{description.name} of {shape[0]} states")
        fresh = take(compute(np.zeros(shape), False))
        for g, r in zip(given, (fresh,) if single else fresh):
            np.copyto(g, r)
    return given[0] if single else tuple(given)


def _block_of(given, shape, take):
    """The C-contiguous block of ``shape`` whose views, as ``take`` makes them, are ``given``
    exactly (the same memory, shapes and strides), or None."""
    first = given[0]
    block = first if first.shape == shape else first.base
    if (type(block) is not np.ndarray or block.shape != shape or block.dtype != F64 or not block.flags.c_contiguous
            or not block.flags.writeable):
        return None
    views = take(block)
    views = views if isinstance(views, tuple) else (views,)
    same = all(v.__array_interface__["data"][0] == g.__array_interface__["data"][0] and v.strides == g.strides
               for v, g in zip(views, given))
    return block if same else None


class _Tree:
    """A tree's states reach its kernels, which check the vectors themselves (RECHECK: converted
    and checked in full, calls.settle), and its batches the batch kernel on threads."""

    workspace_kind = Data

    @staticmethod
    def vectors(robot, description, states) -> bool:
        return all(is_vector(x) for x in states)

    @staticmethod
    def one(description, robot, data, states, arguments, options, out) -> None:
        workspace = (kernel_scratch(robot) if data is None else data).core
        status = description.kernel(workspace, *states, *arguments, out)
        if status:
            velocities = tuple(zip(description.labels[1:], states[1:]))
            settle(robot, status, description.kernel, workspace, states[0], velocities, (*arguments, out))

    @staticmethod
    def batch(description, robot, Q, rest, arguments, options, out, clear=False):
        velocities = tuple(zip(description.labels[1:], rest))
        return run_batch(robot, description.batch, out, Q, (*rest, *arguments), *velocities, clear=clear)


class _InOtherCoordinates:
    """A robot in other coordinates: its one-state function (``description.reduced(robot,
    workspace, *states, *options, out)``, engine.coordinates) in place of the kernel, on states
    checked here in full, with the options as the caller gave them; its batches state by state
    into the block the batch kernel would fill."""

    workspace_kind = ReducedData

    @staticmethod
    def vectors(robot, description, states) -> bool:
        return _vectors(robot, description, states)

    @staticmethod
    def one(description, robot, data, states, arguments, options, out) -> None:
        if data is not None and not _vectors(robot, description, states):
            states = _with_none(states, checked(robot, states[0], *_given(description, states)))  # a batch refused
        description.reduced(robot, shared_data(robot) if data is None else data, *states, *options, out)

    @staticmethod
    def batch(description, robot, Q, rest, arguments, options, out, clear=False):
        if clear:
            out.fill(0.0)
        workspace = shared_data(robot)
        for k in range(Q.shape[0]):
            description.reduced(robot, workspace, Q[k], *(None if x is None else x[k] for x in rest), *options, out[k])
        return out


def _vectors(robot, description: Algorithm, states) -> bool:
    """calls.finite_vectors, where a state may also be None if it is optional."""
    if any(x is None for x in states):
        return _vectors_but_none(robot, description, states)
    return finite_vectors(robot, states)


def _vectors_but_none(robot, description: Algorithm, states) -> bool:
    """_vectors where a state is None: only an optional one may be."""
    if any(x is None and name not in description.optional for name, x in zip(description.states, states)):
        return False
    return _vectors(robot, description, tuple(x for x in states if x is not None))


def _given(description: Algorithm, states):
    """(label, value) of each velocity-like state given (an optional one left out is not), for the checks."""
    return [(label, x) for name, label, x in zip(description.states[1:], description.labels[1:], states[1:])
            if x is not None or name not in description.optional]


def _with_none(states, converted):
    """``converted`` (the states given, checked) with None again where an optional state was left out."""
    values = iter(converted)
    return tuple(None if x is None else next(values) for x in states)
