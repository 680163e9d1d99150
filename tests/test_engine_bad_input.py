"""The compiled core on bad input: a typed Python error or a status code, never a crash of the
interpreter (make sanitize runs this under AddressSanitizer and UBSan)."""

from __future__ import annotations

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.engine import compiled

RECHECK = compiled.RECHECK


@pytest.fixture(scope="module")
def panda():
    robot = cc.load_robot("panda", floating_base=True)
    a = robot.arrays
    return robot, compiled.Workspace(a.ints, a.cols, a.geom, robot.nq)


def test_malformed_model_tables_are_refused(panda):
    robot, _ = panda
    a = robot.arrays
    bad = []
    for column, value in ((0, 5), (1, 9), (2, 10**6), (3, -4), (2, robot.nq)):  # parent, joint, q and v starts
        ints = a.ints.copy()
        ints[3, column] = value
        bad.append((ints, a.cols, a.geom, robot.nq))
    for column, value in ((0, 99), (1, 50), (2, 6)):  # body, previous column, unit column
        cols = a.cols.copy()
        cols[4, column] = value
        bad.append((a.ints, cols, a.geom, robot.nq))
    bad += [(a.ints, a.cols, a.geom[:-1], robot.nq), (a.ints, a.cols[:-1], a.geom, robot.nq), (a.ints, a.cols, a.geom, 3)]
    for args in bad:
        with pytest.raises(ValueError):
            compiled.Workspace(*args)
    with pytest.raises((TypeError, ValueError)):
        compiled.Workspace(None, a.cols, a.geom, robot.nq)
    with pytest.raises((TypeError, ValueError)):
        compiled.Workspace(a.ints, a.cols, "geom", robot.nq)


def test_arguments_of_the_wrong_kind_ask_for_a_recheck(panda):
    robot, w = panda
    n, q = robot.nv, robot.neutral_configuration()
    M, out = np.zeros((n, n)), np.zeros((3, n, n))
    for bad in ("q", list(q), q.astype(np.float32), q.astype(">f8"), q[:-1], np.repeat(q, 2)[::2], q[None]):
        assert compiled.mass_matrix(w, bad, M) == RECHECK
    qd = np.ones(n)
    for bad in ("qd", list(qd), qd.astype(np.float32), qd.astype(">f8"), qd[:-1], np.repeat(qd, 2)[::2], qd[None]):
        assert compiled.coriolis_matrix(w, q, bad, 0, out) == RECHECK
    with pytest.raises(TypeError):  # None is no array at all: nanobind refuses it before the core
        compiled.mass_matrix(w, None, M)
    assert compiled.mass_matrix(w, q, M) == 0


def test_outputs_of_the_wrong_shape_are_refused(panda):
    robot, w = panda
    n, q = robot.nv, robot.neutral_configuration()
    for bad in (np.zeros((n, n + 1)), np.zeros((n, n), dtype=np.float32), np.zeros((n, 2 * n))[:, ::2],
                np.zeros((n + 1, n)).T, np.frombuffer(bytes(8 * n * n)).reshape(n, n), np.zeros(n * n), "M"):
        with pytest.raises(ValueError):
            compiled.mass_matrix(w, q, bad)
    with pytest.raises(ValueError):
        compiled.coriolis_matrix(w, q, np.zeros(n), 7, np.zeros((3, n, n)))
    with pytest.raises(ValueError):
        compiled.christoffel(w, q, np.zeros((n, n)))


def test_batches_refuse_what_does_not_fit(panda):
    robot, w = panda
    n, nq = robot.nv, robot.nq
    Q = np.tile(robot.neutral_configuration(), (4, 1))
    with pytest.raises(ValueError):
        compiled.mass_matrix_batch(w, Q[:, :-1], np.zeros((4, n, n)), np.zeros(4, dtype=np.int64), 2)
    with pytest.raises(ValueError):
        compiled.mass_matrix_batch(w, Q, np.zeros((3, n, n)), np.zeros(4, dtype=np.int64), 2)
    with pytest.raises(ValueError):
        compiled.mass_matrix_batch(w, Q, np.zeros((4, n, n)), np.zeros(4), 2)
    with pytest.raises(ValueError):
        compiled.coriolis_matrix_batch(w, Q, np.zeros((4, n + 1)), 0, np.zeros((4, 3, n, n)), np.zeros(4, dtype=np.int64), 2)
    status = np.zeros(4, dtype=np.int64)
    Q[1, 0] = np.nan
    Q[2, 3:7] = 0.0  # a zero quaternion
    compiled.mass_matrix_batch(w, Q, np.zeros((4, n, n)), status, 0)  # no thread asked for: one
    assert status[0] == 0 and status[1] == 1 and status[2] == -2 and status[3] == 0
    assert nq == Q.shape[1]


def test_the_derivative_fit_equals_savitzky_golay_on_even_stamps_and_refuses_what_it_cannot_fit():
    from scipy.signal import savgol_filter

    n, w, dt = 400, 21, 2e-3
    t = np.arange(n) * dt
    X = np.column_stack([np.sin(3 * t), np.cos(5 * t) + t**2])
    for deriv in (0, 1, 2):
        out = np.empty((n, 2))
        assert compiled.local_polynomial(t, X, w, deriv, 0, n, (w // 2) * dt, out)
        sg = savgol_filter(X, w, 3, deriv=deriv, delta=dt, axis=0, mode="interp")
        assert np.allclose(out, sg, rtol=1e-9, atol=1e-9 * np.abs(sg).max()), (deriv, np.abs(out - sg).max())
    part = np.empty((50, 2))  # rows lo..hi alone: the same numbers
    assert compiled.local_polynomial(t, X, w, 1, 100, 150, (w // 2) * dt, part)
    whole = np.empty((n, 2))
    compiled.local_polynomial(t, X, w, 1, 0, n, (w // 2) * dt, whole)
    assert np.array_equal(part, whole[100:150])
    same = np.zeros(n)  # one stamp for every row: no cubic through it
    assert not compiled.local_polynomial(same, X, w, 1, 0, n, 1.0, np.empty((n, 2)))
    for args in ((t, X, n + 1, 1, 0, n, 1.0, np.empty((n, 2))), (t, X, w, 4, 0, n, 1.0, np.empty((n, 2))),
                 (t, X, w, 1, 0, n + 1, 1.0, np.empty((n, 2))), (t, X, w, 1, 0, n, 0.0, np.empty((n, 2))),
                 (t, X, w, 1, 0, n, 1.0, np.empty((n, 3))), (t[:-1], X, w, 1, 0, n, 1.0, np.empty((n, 2))),
                 (t, X.astype(np.float32), w, 1, 0, n, 1.0, np.empty((n, 2)))):
        with pytest.raises(ValueError):
            compiled.local_polynomial(*args)


def test_loop_coordinates_that_are_not_the_tree_s_are_refused():
    """The loop solve's coordinate table names q and v entries the core follows without checks: a
    kind out of range, a spherical joint's three rows incomplete or out of order, an index past q
    or past the coordinates are one ValueError each, never a read out of bounds."""
    import os

    robot = cc.load_robot(os.path.join(os.path.dirname(__file__), "data", "mjcf", "rod_leg.xml"))
    loops, tree = robot.map, robot.full
    data = cc.create_data(tree)
    q, r, K = tree.neutral_configuration(), np.zeros(loops.n_rows), np.zeros((loops.n_rows, tree.nv))
    last = tree.nq - 2  # a quaternion from here would run past q
    for table in ([[4, 0, 0]], [[2, 0, 0]], [[1, 0, 0], [2, 0, 0]], [[0, tree.nq, 0]], [[0, 0, tree.nv]],
                  [[1, last, 0], [2, last, 0], [3, last, 0]], [[1, 0, 0], [3, 0, 0], [2, 0, 0]]):
        table = np.array(table, dtype=np.int64)
        with pytest.raises(ValueError, match="table: not the loop coordinates of this tree"):
            compiled.loop_newton(data.core, *loops.packed, table, np.zeros((len(table), 9)), q, np.zeros(len(table)),
                                 np.zeros(0, dtype=np.int64), r, K, 1e-12, 5)
    with pytest.raises(ValueError, match="dep: an index out of range"):
        compiled.loop_newton(data.core, *loops.packed, loops.coordinate_table, loops.coordinate_basis, q,
                             loops.guess_x.copy(), np.array([len(loops.guess_x)]), r, K, 1e-12, 5)
