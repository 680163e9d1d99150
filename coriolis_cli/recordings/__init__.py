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
from .align import DEFAULT_WINDOW, Aligner, Samples, said
from .calibration import effort_calibration
from .sources import blocks, is_npz, kind_of, refuse_topics, topics_of

DEFAULT_ROWS = 20_000  # samples per chunk: a few MB for a 44-DoF robot


@dataclass
class Recording:
    """A whole recording as arrays in a robot's DoF order, returned by `load_recording`.

    Samples are in time order, K of them: stamps that go backwards, repeated samples and (unless
    ``strict``) samples with a missing value are dropped when the recording is read. Values are in
    the coordinates of the robot's tree (``robot.full`` for a `ReducedRobot`).

    Attributes
    ----------
    t : ndarray of shape (K,)
        Time stamps [s], as recorded (not shifted to start at zero).
    q : ndarray of shape (K, nq)
        Joint configurations [rad or m; a floating base's quaternion as x, y, z, w].
    qd : ndarray of shape (K, nv)
        Joint velocities [rad/s or m/s]: recorded, or differentiated from q where the recording
        has none.
    qdd : ndarray of shape (K, nv), or None
        Joint accelerations [rad/s², m/s²], differentiated from qd; None unless
        ``accelerations=True`` was passed.
    effort : ndarray of shape (K, nv), or None
        The recorded effort [N·m or N], calibrated where ``effort_scale`` or ``effort_offset`` was
        given; NaN for DoF without one; None if the recording has none.
    config_names : tuple of str
        The names of q's columns (length nq).
    dof_names : tuple of str
        The names of qd's, qdd's and effort's columns (length nv).

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("planar_2link")
    >>> # 2 s at 100 Hz, in the format of `coriolis simulate -o run.npz`
    >>> t = np.linspace(0.0, 2.0, 201)
    >>> q = np.stack([np.sin(t), np.cos(t)], axis=1)
    >>> qd = np.stack([np.cos(t), -np.sin(t)], axis=1)
    >>> np.savez("run.npz", t=t, q=q, qd=qd, tau=np.zeros_like(q),
    ...          dof_names=robot.dof_names, config_names=robot.config_names)
    >>> rec = cc.load_recording("run.npz", robot)
    >>> rec.t.shape, rec.q.shape, rec.qd.shape, rec.effort.shape, rec.qdd is None
    ((201,), (201, 2), (201, 2), (201, 2), True)
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray | None
    effort: np.ndarray | None
    config_names: tuple
    dof_names: tuple


def check_base_topic(robot, base_topic: str | None, name: str = "base_topic=",
                     remedy: str = "load it with floating_base=True") -> None:
    """Refuse a base topic for a robot without a floating base: its odometry would be read and
    ignored. Named as ``name`` does, with ``remedy``: the parameter and load_robot's option for the
    library, the command's options for the command line."""
    tree = getattr(robot, "full", robot)
    if base_topic is None or any(b.joint.type in ("free", "floating") and b.parent < 0 for b in tree.bodies):
        return
    raise RecordingError(f"{said(name, base_topic)}: the robot has a fixed base, which takes no pose from odometry "
                         f"({remedy})")


def stream_recording(path: str, robot, topic: str | None = None, base_topic: str | None = None, strict: bool = False,
                     window=None, accelerations: bool = False, rows: int = DEFAULT_ROWS, effort_scale=None,
                     effort_offset=None):
    """Read a recording of joint states in chunks, as arrays in a robot's DoF order.

    The same as [load_recording][coriolis_cli.load_recording], chunk by chunk, so that a recording
    of any length is read in bounded memory: the chunks, joined, equal what `load_recording`
    returns. Streaming delays a chunk's last rows by half a differentiation window.

    Parameters
    ----------
    path : str or os.PathLike
        The recording: an MCAP file, a ROS 2 bag folder, a ROS 1 ``.bag``, a ``.csv`` or
        ``.parquet`` table, or the ``.npz`` that ``coriolis simulate -o`` writes.
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot]; its joints are matched to the
        recording's by name.
    topic : str, optional
        The ``sensor_msgs/JointState`` topic, where a message file (or a PlotJuggler table) holds
        several; an ``.npz`` has none and refuses it.
    base_topic : str, optional
        The ``nav_msgs/Odometry`` topic (a table's column prefix) giving a floating base's pose and
        twist; refused for an ``.npz`` and for a robot without a floating base.
    strict : bool, optional
        Refuse samples with a missing value (NaN) instead of skipping and counting them.
    window : float, int, str or None, optional
        How missing velocities (and accelerations) are differentiated, by a cubic fitted over a
        window: a duration in seconds (a float, or text such as ``"50ms"``), an odd number of
        samples of at least 5 (an int), or None for 0.1 s.
    accelerations : bool, optional
        Also give q̈, differentiated from the velocities.
    rows : int, optional
        About how many samples a chunk holds (default 20,000).
    effort_scale, effort_offset : float, str or None, optional
        Calibrate the effort to a torque, τ = scale · effort + offset: one number for every DoF,
        ``"NAME=VALUE,..."`` per joint, or a YAML file of drive gains.

    Yields
    ------
    samples : Samples
        A chunk of k samples with the fields of [Recording][coriolis_cli.Recording] but the names:
        ``t`` (k,), ``q`` (k, nq), ``qd`` (k, nv), ``qdd`` (k, nv) or None, ``effort`` (k, nv) or None.

    Raises
    ------
    RecordingError
        If the file cannot be read (not a recording, truncated or corrupt, no samples), does not
        fit the robot (a joint the robot needs is missing, several topics and no ``topic``), an
        option does not apply to it (``topic`` or ``base_topic`` for an ``.npz``, which has no
        topics; ``base_topic`` for a robot without a floating base), or ``window``,
        ``effort_scale`` or ``effort_offset`` is malformed: the message names the parameter
        (``window='abc': ...``, ``effort_scale: 'x' is not a number``). Raised when the first
        chunk is asked for. A [RecordingError][coriolis_cli.RecordingError] is an
        [InputError][coriolis_cli.InputError].

    Warns
    -----
    ModelWarning
        Once per recording, after its last chunk, for what was dropped or ignored: joints the robot
        lacks, stamps at or before the previous one, samples logged twice, samples with a NaN.
    RecordingNote
        Once per recording, after its last chunk, how the missing velocities (and the
        accelerations) were differentiated: the window in samples and seconds, the sample rate, the
        smoothing's −3 dB frequency. Information, not a problem; filter it with
        ``warnings.simplefilter("ignore", cc.RecordingNote)``.

    See Also
    --------
    - [`load_recording`][coriolis_cli.load_recording]: The whole recording at once.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("planar_2link")
    >>> # 2 s at 100 Hz, in the format of `coriolis simulate -o run.npz`
    >>> t = np.linspace(0.0, 2.0, 201)
    >>> q = np.stack([np.sin(t), np.cos(t)], axis=1)
    >>> qd = np.stack([np.cos(t), -np.sin(t)], axis=1)
    >>> np.savez("run.npz", t=t, q=q, qd=qd, tau=np.zeros_like(q),
    ...          dof_names=robot.dof_names, config_names=robot.config_names)
    >>> [len(chunk.t) for chunk in cc.stream_recording("run.npz", robot, rows=50)]
    [50, 50, 50, 50, 1]
    """
    tree = getattr(robot, "full", robot)
    if is_npz(str(path)):  # no topics: refused as such before the robot's base is asked about
        refuse_topics(str(path), topic, base_topic)
    check_base_topic(tree, base_topic)
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
    """Read a recording of joint states as arrays in a robot's DoF order.

    Joints are matched to the robot's by name, in any order and any subset: joints the robot lacks
    are ignored with one warning, joints it needs and the recording lacks are refused by name. Stamps
    come from the message headers, else the log time; a stamp at or before the previous one is
    dropped, as is a sample repeating the previous one. Velocities the recording lacks, and
    accelerations, are differentiated by a cubic fitted by least squares on the actual stamps over
    ``window``. A floating base takes its pose and body-frame twist from an odometry topic
    (``base_topic``) or from columns. The values are in the coordinates of the robot's tree
    (``robot.full`` for a `ReducedRobot`). The readers of MCAP, bags, CSV and Parquet are an
    optional extra (``pip install 'coriolis-cli[recordings]'``); NPZ needs none.

    Parameters
    ----------
    path : str or os.PathLike
        The recording: an MCAP file, a ROS 2 bag folder, a ROS 1 ``.bag``, a ``.csv`` or
        ``.parquet`` table (PlotJuggler's export, or columns ``q/<joint>``, ``qd/<joint>``,
        ``tau/<joint>`` and a time column), or the ``.npz`` that ``coriolis simulate -o`` writes.
    robot : RobotModel or ReducedRobot
        The robot, from [load_robot][coriolis_cli.load_robot].
    topic : str, optional
        The ``sensor_msgs/JointState`` topic, where a message file (or a PlotJuggler table) holds
        several; an ``.npz`` has none and refuses it.
    base_topic : str, optional
        The ``nav_msgs/Odometry`` topic (a table's column prefix) giving a floating base's pose and
        twist; refused for an ``.npz`` and for a robot without a floating base.
    strict : bool, optional
        Refuse samples with a missing value (NaN) instead of skipping and counting them.
    window : float, int, str or None, optional
        How missing velocities (and accelerations) are differentiated: a duration in seconds (a
        float, or text such as ``"50ms"``), an odd number of samples of at least 5 (an int), or
        None for 0.1 s.
    accelerations : bool, optional
        Also give q̈, differentiated from the velocities.
    effort_scale, effort_offset : float, str or None, optional
        Calibrate the effort to a torque, τ = scale · effort + offset: one number for every DoF,
        ``"NAME=VALUE,..."`` per joint, or a YAML file of drive gains.

    Returns
    -------
    recording : Recording
        The samples: ``t`` (K,), ``q`` (K, nq), ``qd`` (K, nv), ``qdd`` and ``effort`` (K, nv) or
        None, and the column names.

    Raises
    ------
    RecordingError
        If the file cannot be read (not a recording, truncated or corrupt, no samples), does not
        fit the robot (a joint the robot needs is missing, several topics and no ``topic``), an
        option does not apply to it (``topic`` or ``base_topic`` for an ``.npz``, which has no
        topics; ``base_topic`` for a robot without a floating base), or ``window``,
        ``effort_scale`` or ``effort_offset`` is malformed: the message names the parameter
        (``window='abc': ...``, ``effort_scale: 'x' is not a number``). A
        [RecordingError][coriolis_cli.RecordingError] is an [InputError][coriolis_cli.InputError].

    Warns
    -----
    ModelWarning
        Once per recording, for what was dropped or ignored: joints the robot lacks, stamps at or
        before the previous one, samples logged twice, samples with a NaN (unless ``strict``).
    RecordingNote
        Once per recording where velocities or accelerations were differentiated, how: the window
        in samples and seconds, the sample rate and the smoothing's −3 dB frequency
        (``run.npz: q̈ fitted on the stamps: cubic over 11 samples (0.11 s at 100 Hz; −3 dB at
        9.88 Hz; window= sets it)``). Information, not a problem; it points at the line that
        called, and ``warnings.simplefilter("ignore", cc.RecordingNote)`` silences it.

    See Also
    --------
    - [`stream_recording`][coriolis_cli.stream_recording]: The same in chunks of bounded size.
    - [`trajectory_dynamics`][coriolis_cli.trajectory_dynamics]: g, C q̇, Cᵀq̇, p, τ and the energies along the samples.

    Examples
    --------
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("planar_2link")
    >>> # 2 s at 100 Hz, in the format of `coriolis simulate -o run.npz`
    >>> t = np.linspace(0.0, 2.0, 201)
    >>> q = np.stack([np.sin(t), np.cos(t)], axis=1)
    >>> qd = np.stack([np.cos(t), -np.sin(t)], axis=1)
    >>> np.savez("run.npz", t=t, q=q, qd=qd, tau=np.zeros_like(q),
    ...          dof_names=robot.dof_names, config_names=robot.config_names)
    >>> rec = cc.load_recording("run.npz", robot)
    >>> rec.q.shape, rec.effort.shape, rec.dof_names
    ((201, 2), (201, 2), ('joint1', 'joint2'))
    >>> bool(np.allclose(rec.qd, qd))
    True
    """
    parts = list(stream_recording(path, robot, topic, base_topic, strict, window, accelerations,
                                  effort_scale=effort_scale, effort_offset=effort_offset))
    tree = getattr(robot, "full", robot)

    def join(name):
        xs = [getattr(p, name) for p in parts]
        return None if any(x is None for x in xs) else np.concatenate(xs)

    return Recording(join("t"), join("q"), join("qd"), join("qdd"), join("effort"), tuple(tree.config_names),
                     tuple(tree.dof_names))


__all__ = ["DEFAULT_ROWS", "DEFAULT_WINDOW", "Recording", "RecordingError", "Samples", "check_base_topic", "first_samples",
           "kind_of", "time_span", "load_recording", "stream_recording", "topics_of"]
