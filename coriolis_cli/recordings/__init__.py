"""Recordings in: joint states from ROS bags, MCAP, CSV, Parquet and simulate's NPZ, as arrays in a
robot's coordinates (formats in, arrays out; no engine). recordings.sources reads the formats,
recordings.align matches them to the robot.

    rec = load_recording("run.mcap", robot, topic="/joint_states")
    rec.t, rec.q, rec.qd, rec.effort      # (K,), (K, nq), (K, nv), (K, nv) or None

``stream_recording`` yields the same in chunks of bounded size, for recordings of any length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import RecordingError
from .align import DEFAULT_WINDOW, Aligner, Samples
from .calibration import effort_calibration
from .sources import blocks, kind_of, topics_of

DEFAULT_ROWS = 20_000  # samples per chunk: a few MB for a 44-DoF robot


@dataclass
class Recording:
    """A whole recording in the robot's coordinates."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray | None
    effort: np.ndarray | None
    config_names: tuple
    dof_names: tuple


def stream_recording(path: str, robot, topic: str | None = None, base_topic: str | None = None, strict: bool = False,
                     window=None, accelerations: bool = False, rows: int = DEFAULT_ROWS, effort_scale=None,
                     effort_offset=None):
    """Samples (t, q, q̇, q̈ when ``accelerations``, effort) of ``path`` in chunks of about
    ``rows``, in the coordinates of ``robot``'s tree (``robot.full`` for a robot in other
    coordinates; recordings.align says how each mess of a real recording is answered). ``window``:
    how what the recording lacks (q̇, q̈) is differentiated: None for DEFAULT_WINDOW seconds, a
    duration (a float in seconds, or text such as ``"50ms"``) or an odd number of samples (an int).
    ``effort_scale``, ``effort_offset``: τ = scale · effort + offset (recordings.calibration: a
    number, ``NAME=VALUE,...`` or a YAML file of drive gains)."""
    tree = getattr(robot, "full", robot)
    calibration = effort_calibration(tree, effort_scale, effort_offset)
    aligner = Aligner(tree, str(path), strict=strict, window=window, need_qdd=accelerations, calibration=calibration)
    for block in blocks(str(path), topic, base_topic, rows):
        out = aligner.feed(block)
        if out is not None and len(out.t):
            yield out
    out = aligner.finish()
    if out is not None and len(out.t):
        yield out


def time_span(path: str, topic: str | None = None, base_topic: str | None = None, rows: int = DEFAULT_ROWS,
              **_) -> tuple[float, float]:
    """The first and last stamps of ``path`` (as read, before any sample is dropped): one pass over
    the file that decodes the stamps but computes nothing. The other stream options are ignored."""
    first, last = np.inf, -np.inf
    for block in blocks(str(path), topic, base_topic, rows):
        t = np.asarray(block.t, float)
        t = t[np.isfinite(t)]
        if t.size:
            first, last = min(first, float(t.min())), max(last, float(t.max()))
    if not np.isfinite(first):
        raise RecordingError(f"{path}: no samples")
    return first, last


def first_samples(path: str, robot, **options) -> Samples | None:
    """The first chunk stream_recording(path, robot, **options) yields, or None for a recording
    of no samples; nothing further is read. A command checks it (is there an effort?) before its
    kernels compile, so that a recording it cannot use is refused at once."""
    stream = stream_recording(path, robot, **options)
    try:
        return next(stream, None)
    finally:
        stream.close()


def load_recording(path: str, robot, topic: str | None = None, base_topic: str | None = None, strict: bool = False,
                   window=None, accelerations: bool = False, effort_scale=None, effort_offset=None) -> Recording:
    """The whole recording ``path`` for ``robot`` (see stream_recording), in its DoF order."""
    parts = list(stream_recording(path, robot, topic, base_topic, strict, window, accelerations,
                                  effort_scale=effort_scale, effort_offset=effort_offset))
    tree = getattr(robot, "full", robot)

    def join(name):
        xs = [getattr(p, name) for p in parts]
        return None if any(x is None for x in xs) else np.concatenate(xs)

    return Recording(join("t"), join("q"), join("qd"), join("qdd"), join("effort"), tuple(tree.config_names),
                     tuple(tree.dof_names))


__all__ = ["DEFAULT_ROWS", "DEFAULT_WINDOW", "Recording", "RecordingError", "Samples", "first_samples", "kind_of", "time_span",
           "load_recording", "stream_recording", "topics_of"]
