"""The dynamics along a recording: g, C q̇, Cᵀq̇, p = M q̇, τ and the energies per sample, in
chunks (engine.trajectory_dynamics on recordings.stream_recording), for compute --recording,
the Dask runner and Python alike. Nothing here knows about files or Dask beyond the recording's
path."""

from __future__ import annotations

import numpy as np

from .. import engine
from ..engine.conventions import TRAJECTORY_OUTPUTS, TRAJECTORY_QUANTITIES
from ..errors import StateError
from ..model.friction import friction_torque, has_friction

WHAT = TRAJECTORY_OUTPUTS
DEFAULT_WHAT = tuple(w for w in WHAT if w != "tau")  # τ needs q̈
_ROW = {w: row for row, w in enumerate(WHAT[:TRAJECTORY_QUANTITIES])}


def parse_what(text) -> tuple[str, ...]:
    names = [w.strip() for w in (text.split(",") if isinstance(text, str) else text) if w.strip()]
    lowered = {w.lower(): w for w in WHAT}
    bad = [w for w in names if w.lower() not in lowered]
    if bad or not names:
        raise StateError(f"--what along a recording takes {', '.join(WHAT)}, got '{','.join(bad) or text}'")
    return tuple(dict.fromkeys(lowered[w.lower()] for w in names))


def columns(robot, what) -> list[str]:
    """The table's columns: time, then <quantity>/<dof> per quantity, energy/kinetic and /potential."""
    out = ["time"]
    for w in what:
        out += ["energy/kinetic", "energy/potential"] if w == "energy" else [f"{w}/{d}" for d in robot.dof_names]
    return out


def _reduced_state(robot, samples):
    """q̄, q̄̇ (and q̄̈) of a robot in other coordinates from the tree's samples: q̄ read off q,
    q̄̇ solving A q̄̇ = q̇ (least squares), q̄̈ solving A q̄̈ = q̈ − Ȧ q̄̇."""
    cmap, ev = robot.map, engine.coordinates.evaluation(robot)
    K = len(samples.t)
    Q, V = np.empty((K, robot.nq)), np.empty((K, robot.nv))
    A_ = None if samples.qdd is None else np.empty((K, robot.nv))
    for s in range(K):
        Q[s] = cmap.reduce_configuration(samples.q[s])
        A = ev.jacobian(Q[s])
        V[s] = np.linalg.lstsq(A, samples.qd[s], rcond=None)[0]
        if A_ is not None:
            rate = ev.jacobian_rate(Q[s], V[s])
            rest = samples.qdd[s] - (0.0 if rate is None else rate @ V[s])
            A_[s] = np.linalg.lstsq(A, rest, rcond=None)[0]
    return Q, V, A_


def table(robot, samples, what, friction: bool = True) -> np.ndarray:
    """One chunk's rows: [time, the quantities of ``what``] (see columns). τ is what the drives
    apply: the rigid bodies' τ plus the joints' friction (model.friction) unless ``friction`` is
    False."""
    if getattr(robot, "is_reduced", False):
        Q, V, A = _reduced_state(robot, samples)
    else:
        Q, V, A = samples.q, samples.qd, samples.qdd
    rows = engine.trajectory_dynamics(robot, Q, V, A if "tau" in what else None)
    n = robot.nv
    if friction and "tau" in what and has_friction(robot):
        # the tree's friction, carried to the robot's coordinates as its τ is (τ̄ = Aᵀ τ)
        tau_f = friction_torque(robot, samples.qd)
        if getattr(robot, "is_reduced", False):
            A = engine.coordinates.evaluation(robot).jacobian
            tau_f = np.stack([A(Q[s]).T @ tau_f[s] for s in range(len(Q))])
        rows[:, _ROW["tau"] * n : (_ROW["tau"] + 1) * n] += tau_f
    parts = [samples.t[:, None]]
    for w in what:
        parts.append(rows[:, TRAJECTORY_QUANTITIES * n :] if w == "energy" else rows[:, _ROW[w] * n : (_ROW[w] + 1) * n])
    return np.concatenate(parts, axis=1)


def along(robot, path, what=DEFAULT_WHAT, friction: bool = True, **options):
    """The table of ``what`` along the recording ``path``, chunk by chunk (recordings.stream_recording's
    options: topic, base_topic, strict, window, rows); ``friction``: τ includes the joints' friction."""
    from ..recordings import stream_recording

    for samples in stream_recording(path, robot, accelerations="tau" in what, **options):
        yield table(robot, samples, what, friction)
