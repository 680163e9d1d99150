"""Recordings as they come: each format read in bounded blocks of samples, named as written.

A source yields ``Block``s: stamps (seconds), and per quantity (position, velocity, effort) a
(k, m) array over the joint names the block carries, NaN where a sample has no value; and, for a
floating base, the base's pose and twist. Nothing here knows the robot (recordings.align does).

Formats (picked by the path): ROS 2 ``sensor_msgs/msg/JointState`` in MCAP (``mcap`` with
``mcap-ros2-support``), ROS 2 bag folders (sqlite3 or MCAP storage) and ROS 1 ``.bag`` files
(``rosbags``, no ROS installation), CSV and Parquet (``pyarrow``, read in record batches: a time
column and one column per joint and quantity, as PlotJuggler exports them,
``/joint_states/<joint>/position``, or as this project writes them, ``q/<joint>``,
``qd/<joint>``, ``tau/<joint>``), and the NPZ of ``coriolis simulate -o run.npz``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import RecordingError

EXTRA = "pip install 'coriolis-cli[recordings]'"
JOINT_STATE = "sensor_msgs/msg/JointState"
ODOMETRY = "nav_msgs/msg/Odometry"
SIGNALS = ("position", "velocity", "effort")
TIME_COLUMNS = ("__time", "time", "t", "timestamp", "stamp", "time_s", "time_ms", "time_us", "time_ns", "stamp_ns",
                "timestamp_ns", "header.stamp_ns")
SECONDS_PER = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}  # Arrow's time units, and column names' suffixes
# a base's state: position (3), orientation quaternion x y z w (4), body-frame twist v (3), ω (3)
BASE_FIELDS = ("x", "y", "z", "qx", "qy", "qz", "qw", "vx", "vy", "vz", "wx", "wy", "wz")


@dataclass
class Block:
    t: np.ndarray  # (k,) seconds
    names: tuple[str, ...]
    values: dict  # quantity → (k, len(names)) float64, NaN where absent; absent quantities missing
    base: np.ndarray | None = None  # (k, 13) BASE_FIELDS, NaN where absent
    log_t: np.ndarray | None = None  # (k,) log time, where stamps come from headers


@dataclass
class Topics:
    """What a file holds: JointState topics and Odometry topics (by name)."""

    joint_states: list = field(default_factory=list)
    odometry: list = field(default_factory=list)


def _need(module: str, what: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise RecordingError(f"reading {what} needs the '{module.split('.')[0]}' package", hint=EXTRA) from None


KINDS = {".mcap": "mcap", ".bag": "rosbag1", ".db3": "rosbag2", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet",
         ".npz": "npz"}  # a recording's kind by its file's extension


def kind_of(path: str) -> str:
    """mcap, rosbag2, rosbag1, csv, parquet or npz, from the path (a bag folder has metadata.yaml)."""
    if os.path.isdir(path):
        if os.path.isfile(os.path.join(path, "metadata.yaml")):
            return "rosbag2"
        raise RecordingError(f"{path}: a folder that is not a ROS 2 bag (no metadata.yaml); name a recording file")
    ext = os.path.splitext(path)[1].lower()
    if ext not in KINDS:
        raise RecordingError(f"{path}: not a recording this tool reads (.mcap, ROS bag folder or .bag, .csv, .parquet, .npz)")
    if not os.path.exists(path):
        raise RecordingError(f"{path}: no such file")
    if os.path.isfile(path) and os.path.getsize(path) == 0:
        raise RecordingError(f"{path}: the file is empty")
    return KINDS[ext]


TOPICS = ("topic=", "base_topic=")  # what the library's errors name; the CLI passes its options


def refuse_topics(path: str, topic: str | None, base_topic: str | None, options=TOPICS) -> None:
    """An NPZ holds one robot's states, no topics: a topic given for it would do nothing, and is
    refused, named as ``options`` does (the parameters by default, the CLI's ``--topic`` and
    ``--base-topic`` when it checks them). MCAP and bags have topics, and so do tables, whose
    PlotJuggler columns are named by topic (``/joint_states/<joint>/position``, an odometry prefix)."""
    for value, name in zip((topic, base_topic), options):
        if value is not None:
            raise RecordingError(f"{path}: an .npz recording has no topics: {name} applies to MCAP, ROS bags and "
                                 "PlotJuggler's CSV and Parquet")


def is_npz(path: str) -> bool:
    """Whether kind_of would take ``path`` for an NPZ, without looking at the file."""
    return not os.path.isdir(path) and KINDS.get(os.path.splitext(path)[1].lower()) == "npz"


def blocks(path: str, topic: str | None, base_topic: str | None, rows: int):
    """The recording's Blocks of at most ``rows`` samples (see the module's docstring)."""
    kind = kind_of(path)
    if kind in ("csv", "parquet"):
        return _table_blocks(path, kind, topic, base_topic, rows)
    if kind == "npz":
        refuse_topics(path, topic, base_topic)
        return _npz_blocks(path, rows)
    return _message_blocks(path, kind, topic, base_topic, rows)


def estimated_samples(path: str, topic: str | None = None) -> int | None:
    """About how many samples the recording holds (for a progress bar), without reading it."""
    try:
        kind = kind_of(path)
        if kind == "parquet":
            import pyarrow.parquet as pq

            return pq.ParquetFile(path).metadata.num_rows
        if kind == "npz":
            with np.load(path, allow_pickle=False) as z:
                return int(z["t"].shape[0])
        if kind == "csv":
            size = os.path.getsize(path)
            with open(path, "rb") as f:
                head = f.read(1 << 20)
            lines = max(1, head.count(b"\n") - 1)
            return int(size / max(1, len(head)) * lines)
        if kind == "mcap":
            reader, f = _mcap_reader(path)
            with f:
                summary = reader.get_summary()
            if summary is None or summary.statistics is None:
                return None
            ids = [c.id for c in summary.channels.values() if topic is None or c.topic == topic]
            counts = summary.statistics.channel_message_counts
            return max((counts.get(i, 0) for i in ids), default=None)
        with _any_reader(path) as reader:
            return max((c.msgcount for c in reader.connections if c.msgtype == JOINT_STATE
                        and (topic is None or c.topic == topic)), default=None)
    except Exception:  # noqa: BLE001 - only an estimate: the read itself reports what is wrong
        return None


# ---- tables: CSV and Parquet ---------------------------------------------------------------------
def _table_batches(path: str, kind: str, rows: int):
    """pyarrow record batches of about ``rows`` rows, never the whole file."""
    pa = _need("pyarrow", "CSV and Parquet")
    try:
        if kind == "parquet":
            import pyarrow.parquet as pq

            f = pq.ParquetFile(path)
            # an iterator per row group: one over the whole file keeps what it read (pyarrow 26: RSS
            # grew by the file's size), one per group frees it when the group is done
            for group in range(f.metadata.num_row_groups):
                for batch in f.iter_batches(batch_size=rows, row_groups=[group]):
                    yield batch
        else:
            import pyarrow.csv as pcsv

            # the joint and base columns are numbers whatever the first block holds: a column empty
            # there (another topic's rows first) would be typed null and refuse the numbers after it
            numbers = {name: pa.float64() for name in _numeric_columns(path)}
            reader = pcsv.open_csv(path, read_options=pcsv.ReadOptions(block_size=1 << 22),
                                   convert_options=pcsv.ConvertOptions(strings_can_be_null=True, column_types=numbers))
            for batch in reader:
                yield batch
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as e:
        raise RecordingError(f"{path}: cannot read it as {kind.upper() if kind == 'csv' else 'Parquet'} "
                             f"({' '.join(str(e).split())[:200]})") from None


def _numeric_columns(path: str) -> list[str]:
    """The header's columns that hold joint or base values in either layout (see table_layout)."""
    import csv

    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            header = next(csv.reader(f), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return []  # pyarrow's reader says what is wrong with the file
    out = []
    for name in header:
        head, sep, rest = name.partition("/")
        if _PLOTJUGGLER.match(name) or (sep and head in _OURS and rest) or \
                any(name.endswith("/" + field) for field in _ODOM_FIELDS):
            out.append(name)
    return list(dict.fromkeys(out))


_PLOTJUGGLER = re.compile(r"^(?P<topic>.*)/(?P<joint>[^/]+)/(?P<quantity>position|velocity|effort)$")
_OURS = {"q": "position", "qd": "velocity", "tau": "effort", "effort": "effort"}
_ODOM_FIELDS = {"pose/pose/position/x": "x", "pose/pose/position/y": "y", "pose/pose/position/z": "z",
                "pose/pose/orientation/x": "qx", "pose/pose/orientation/y": "qy", "pose/pose/orientation/z": "qz",
                "pose/pose/orientation/w": "qw", "twist/twist/linear/x": "vx", "twist/twist/linear/y": "vy",
                "twist/twist/linear/z": "vz", "twist/twist/angular/x": "wx", "twist/twist/angular/y": "wy",
                "twist/twist/angular/z": "wz"}


@dataclass
class _Layout:
    time: str
    columns: dict  # (quantity, joint) → column name
    base: dict  # BASE_FIELDS entry → column name


def table_layout(path: str, names, topic: str | None, base_topic: str | None) -> _Layout:
    """Which column holds what: the time, (quantity, joint) per column in PlotJuggler's layout
    (``<topic>/<joint>/<quantity>``, one topic chosen) or ours (``q/<joint>`` ...), and the base."""
    names = list(names)
    twice = next((n for k, n in enumerate(names) if n in names[:k]), None)
    if twice is not None:  # the reader would take one of them without a word
        raise RecordingError(f"{path}: the column '{twice}' appears twice")
    lowered = {n.lower(): n for n in names}
    time = next((lowered[c] for c in TIME_COLUMNS if c in lowered), None)
    if time is None:
        raise RecordingError(f"{path}: no time column (one of {', '.join(TIME_COLUMNS)})")
    by_topic: dict = {}
    for n in names:
        m = _PLOTJUGGLER.match(n)
        if m and m.group("topic"):
            by_topic.setdefault(m.group("topic"), {})[(m.group("quantity"), m.group("joint"))] = n
    ours = {}
    for n in names:
        head, sep, joint = n.partition("/")
        if sep and head in _OURS and joint:
            ours[(_OURS[head], joint)] = n
    base = {}
    if base_topic is not None or not by_topic:
        prefix = (base_topic or "").rstrip("/")
        for n in names:
            if prefix and n.startswith(prefix + "/") and n[len(prefix) + 1:] in _ODOM_FIELDS:
                base[_ODOM_FIELDS[n[len(prefix) + 1:]]] = n
    if topic is not None:
        chosen = by_topic.get(topic.rstrip("/")) or by_topic.get("/" + topic.strip("/"))
        if chosen is None:
            raise RecordingError(f"{path}: no joint-state columns of topic '{topic}' (topics: "
                                 f"{', '.join(sorted(by_topic)) or 'none'})", hint="--topic names one of them")
        return _Layout(time, chosen, base)
    if len(by_topic) > 1:
        raise RecordingError(f"{path}: joint states of {len(by_topic)} topics ({', '.join(sorted(by_topic))})",
                             hint="--topic chooses one")
    columns = next(iter(by_topic.values())) if by_topic else ours
    if not columns:
        raise RecordingError(f"{path}: no joint columns (PlotJuggler's /joint_states/<joint>/position or "
                             "q/<joint>, qd/<joint>, tau/<joint>)")
    return _Layout(time, columns, base)


def _table_blocks(path, kind, topic, base_topic, rows):
    layout = None
    for batch in _table_batches(path, kind, rows):
        if layout is None:
            layout = table_layout(path, batch.schema.names, topic, base_topic)
            # a joint is in the table where its position is (velocity or effort alone make no sample)
            joints = tuple(dict.fromkeys(j for quantity, j in layout.columns if quantity == "position"))
        t = _seconds(batch, layout.time, path)
        values = {}
        for quantity in SIGNALS:
            present = [(k, layout.columns[(quantity, j)]) for k, j in enumerate(joints) if (quantity, j) in layout.columns]
            if not present:
                continue
            arr = np.full((len(t), len(joints)), np.nan)
            for k, col in present:
                arr[:, k] = _column(batch, col, path)
            values[quantity] = arr
        base = None
        if layout.base:
            base = np.full((len(t), len(BASE_FIELDS)), np.nan)
            for f, col in layout.base.items():
                base[:, BASE_FIELDS.index(f)] = _column(batch, col, path)
        yield Block(t, joints, values, base)


def _seconds(batch, name, path) -> np.ndarray:
    """The time column in seconds, whatever its type: an Arrow timestamp or duration in its unit, an
    integer column in the unit its name ends with (time_ns, stamp_us, ...), or, without one, by its
    size if it counts from the Unix epoch (ns from 10¹⁷, µs from 10¹⁴, ms from 10¹¹). Integers
    counted from another start say nothing of their unit, and are refused rather than guessed."""
    import pyarrow as pa

    col = batch.column(batch.schema.get_field_index(name))
    kind = col.type
    if pa.types.is_timestamp(kind) or pa.types.is_duration(kind):
        ticks = col.cast(pa.int64()).to_numpy(zero_copy_only=False)
        return np.asarray(ticks, dtype=float) * SECONDS_PER[kind.unit]
    if not pa.types.is_integer(kind):
        return _column(batch, name, path)
    ticks = np.asarray(col.to_numpy(zero_copy_only=False), dtype=float)
    suffix = name.lower().rpartition("_")[2]
    if suffix in SECONDS_PER and "_" in name:
        return ticks * SECONDS_PER[suffix]
    largest = np.nanmax(np.abs(ticks), initial=0.0)
    for unit, epoch in (("ns", 1e17), ("us", 1e14), ("ms", 1e11), ("s", 1e9)):
        if largest >= epoch:
            return ticks * SECONDS_PER[unit]
    raise RecordingError(f"{path}: the time column '{name}' holds integers with no unit",
                         hint="name it time_s, time_ms, time_us or time_ns, or store it as an Arrow timestamp or "
                              "duration")


def _column(batch, name, path) -> np.ndarray:
    col = batch.column(batch.schema.get_field_index(name))
    try:
        return np.asarray(col.to_numpy(zero_copy_only=False), dtype=float)
    except (ValueError, TypeError):
        raise RecordingError(f"{path}: column '{name}' is not numbers") from None


# ---- NPZ (coriolis simulate -o run.npz) --------------------------------------------------------------
def _npz_blocks(path, rows):
    import zipfile

    try:
        z = np.load(path, allow_pickle=False)
        keys = set(z.files)
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise RecordingError(f"{path}: not a readable NPZ file ({' '.join(str(e).split())[:160]})") from None
    need = {"t", "q", "dof_names", "config_names"}
    if not need <= keys:
        raise RecordingError(f"{path}: not an NPZ of 'coriolis simulate' (needs {', '.join(sorted(need - keys))})")
    try:
        t, q = z["t"], z["q"]
        qd = z["qd"] if "qd" in keys else None
        tau = z["tau"] if "tau" in keys else None
        config, dofs = tuple(str(n) for n in z["config_names"]), tuple(str(n) for n in z["dof_names"])
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise RecordingError(f"{path}: truncated or corrupt ({' '.join(str(e).split())[:160]})") from None
    if config != dofs:
        raise RecordingError(f"{path}: a simulation of a robot with multi-DoF joints; recordings read 1-DoF joints from NPZ")
    if len(set(dofs)) != len(dofs):
        raise RecordingError(f"{path}: dof_names names a joint twice")
    k = len(t) if t.ndim == 1 else -1
    for name, arr, shape in (("t", t, (k,)), ("q", q, (k, len(dofs))), ("qd", qd, (k, len(dofs))),
                             ("tau", tau, (k, len(dofs)))):
        if arr is None:
            continue
        if arr.dtype.kind not in "fiu":
            raise RecordingError(f"{path}: '{name}' holds {arr.dtype} values, not numbers")
        if arr.shape != shape:
            raise RecordingError(f"{path}: '{name}' has shape {arr.shape}, but t holds {max(k, 0)} samples of "
                                 f"{len(dofs)} joints (dof_names): the arrays do not fit their names")
    for s in range(0, len(t), rows):
        values = {"position": np.asarray(q[s : s + rows], float)}
        if qd is not None:
            values["velocity"] = np.asarray(qd[s : s + rows], float)
        if tau is not None:
            values["effort"] = np.asarray(tau[s : s + rows], float)
        yield Block(np.asarray(t[s : s + rows], float), dofs, values)


# ---- messages: MCAP, ROS 2 and ROS 1 bags ----------------------------------------------------------
def topics_of(path: str) -> Topics:
    """The JointState and Odometry topics of a message file."""
    kind = kind_of(path)
    out = Topics()
    for name, msgtype in _message_topics(path, kind):
        if msgtype == JOINT_STATE:
            out.joint_states.append(name)
        elif msgtype == ODOMETRY:
            out.odometry.append(name)
    return out


def _message_topics(path, kind):
    if kind == "mcap":
        reader, f = _mcap_reader(path)
        with f:
            try:
                summary = reader.get_summary()
            except Exception as e:  # noqa: BLE001 - the mcap package raises its own kinds for a broken file
                raise RecordingError(f"{path}: truncated or corrupt MCAP ({' '.join(str(e).split())[:160]})") from None
            if summary is None:
                raise RecordingError(f"{path}: an MCAP file without its summary (truncated?); rewrite it with 'mcap recover'")
            return [(c.topic, summary.schemas[c.schema_id].name if c.schema_id in summary.schemas else "")
                    for c in summary.channels.values()]
    with _any_reader(path) as reader:
        return [(c.topic, c.msgtype) for c in reader.connections]


def _mcap_reader(path):
    mcap_reader = _need("mcap.reader", "MCAP files")
    decoder = _need("mcap_ros2.decoder", "ROS 2 messages in MCAP")
    f = open(path, "rb")
    try:
        return mcap_reader.make_reader(f, decoder_factories=[decoder.DecoderFactory()]), f
    except Exception as e:  # noqa: BLE001 - the mcap package raises its own kinds for a file that is not MCAP
        f.close()
        raise RecordingError(f"{path}: not a readable MCAP file ({type(e).__name__}: "
                             f"{' '.join(str(e).split())[:160]})") from None


class _any_reader:
    """rosbags' AnyReader over one bag (ROS 1 .bag, ROS 2 folder), opened, errors in one line."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        from pathlib import Path

        highlevel = _need("rosbags.highlevel", "ROS bags")
        try:
            self.reader = highlevel.AnyReader([Path(self.path)])
            self.reader.open()
        except Exception as e:  # noqa: BLE001 - rosbags' errors for a broken bag
            raise RecordingError(f"{self.path}: cannot open the bag ({' '.join(str(e).split())[:200]})") from None
        return self.reader

    def __exit__(self, *exc):
        self.reader.close()
        return False


def _choose(path, names, topic, what, option):
    if topic is not None:
        if topic not in names:
            raise RecordingError(f"{path}: no {what} topic '{topic}' (its {what} topics: {', '.join(names) or 'none'})",
                                 hint=f"{option} names one of them")
        return topic
    if not names:
        return None
    if len(names) > 1:
        raise RecordingError(f"{path}: {len(names)} {what} topics ({', '.join(names)})", hint=f"{option} chooses one")
    return names[0]


def _message_blocks(path, kind, topic, base_topic, rows):
    topics = topics_of(path)
    joint_topic = _choose(path, topics.joint_states, topic, "JointState", "--topic")
    if joint_topic is None:
        raise RecordingError(f"{path}: no sensor_msgs/msg/JointState topic")
    odom = _choose(path, topics.odometry, base_topic, "Odometry", "--base-topic") if base_topic else None
    wanted = [joint_topic] + ([odom] if odom else [])
    builder = _Builder(rows, odom is not None, f"{path}: {joint_topic}")
    where = 0
    try:
        for topic_name, log_ns, msg in _messages(path, kind, wanted):
            where += 1
            if topic_name == odom:
                builder.odometry(msg)
            else:
                block = builder.joint_state(msg, log_ns)
                if block is not None:
                    yield block
    except RecordingError:
        raise
    except Exception as e:  # noqa: BLE001 - a decoder's or reader's error in the middle of a file
        raise RecordingError(f"{path}: truncated or corrupt after {where:,} messages "
                             f"({type(e).__name__}: {' '.join(str(e).split())[:160]})") from None
    last = builder.flush()
    if last is not None:
        yield last


def _messages(path, kind, topics):
    """(topic, log time ns, decoded message) in log-time order."""
    if kind == "mcap":
        reader, f = _mcap_reader(path)
        with f:
            for _, channel, message, decoded in reader.iter_decoded_messages(topics=topics):
                yield channel.topic, message.log_time, decoded
        return
    with _any_reader(path) as reader:
        connections = [c for c in reader.connections if c.topic in topics]
        for connection, timestamp, raw in reader.messages(connections=connections):
            yield connection.topic, timestamp, reader.deserialize(raw, connection.msgtype)


class _Builder:
    """JointState messages (any joint order, any subset) into Blocks. With Odometry, each joint
    sample takes the latest odometry sample whose stamp is at or before its own (zero-order hold,
    by stamp: a joint sample waits until an odometry sample stamped after it has arrived, or the
    recording ends), whatever order the log interleaves them in."""

    def __init__(self, rows, floating, where=""):
        from collections import deque

        self.rows, self.floating, self.where = rows, floating, where
        self.names: dict = {}  # joint name → column
        self.t, self.log_t, self.samples, self.bases = [], [], [], []
        self.history = deque(maxlen=256)  # (stamp, base state) of the latest odometry samples
        self.waiting = 0  # the first joint sample whose base is not known yet

    def odometry(self, msg):
        stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        v, w = msg.twist.twist.linear, msg.twist.twist.angular
        self.history.append((stamp, (p.x, p.y, p.z, o.x, o.y, o.z, o.w, v.x, v.y, v.z, w.x, w.y, w.z)))
        self._resolve(final=False)

    def _base_at(self, t):
        best = None
        for stamp, state in self.history:
            if stamp <= t:
                best = state
        return best if best is not None else (np.nan,) * len(BASE_FIELDS)

    def _resolve(self, final: bool):
        latest = self.history[-1][0] if self.history else -np.inf
        while self.waiting < len(self.t) and (final or self.t[self.waiting] < latest):
            self.bases[self.waiting] = self._base_at(self.t[self.waiting])
            self.waiting += 1

    def joint_state(self, msg, log_ns):
        stamp = msg.header.stamp
        t = stamp.sec + 1e-9 * stamp.nanosec
        self.t.append(t if t > 0 else 1e-9 * log_ns)  # the header's stamp, else the log time
        self.log_t.append(1e-9 * log_ns)
        cols = []
        for name in msg.name:
            if name not in self.names:
                self.names[name] = len(self.names)
            cols.append(self.names[name])
        self._check(msg, t if t > 0 else 1e-9 * log_ns, cols)
        self.samples.append((cols, msg.position, msg.velocity, msg.effort))
        if self.floating:
            self.bases.append(None)
            self._resolve(final=False)
        ready = self.waiting if self.floating else len(self.t)
        if ready >= self.rows:
            return self.flush(ready)
        return None

    def _check(self, msg, t, cols):
        """JointState leaves a quantity empty or fills it for every name; anything else, and a joint
        named twice, would make some joint take another's value or drop samples without a word."""
        if len(set(cols)) != len(cols):
            twice = next(n for k, n in enumerate(msg.name) if n in msg.name[:k])
            raise RecordingError(f"{self.where}: the message at t = {t:.6f} s names joint '{twice}' twice")
        for quantity, data in (("positions", msg.position), ("velocities", msg.velocity), ("efforts", msg.effort)):
            if len(data) not in (0, len(cols)):
                raise RecordingError(f"{self.where}: the message at t = {t:.6f} s has {len(cols)} joint names and "
                                     f"{len(data)} {quantity} (JointState gives a quantity for every name, or none)")

    def flush(self, count: int | None = None):
        """A Block of the first ``count`` samples (all of them, at the end of the recording)."""
        if count is None and self.floating:
            self._resolve(final=True)
        count = len(self.t) if count is None else count
        if count == 0:
            return None
        k, m = count, len(self.names)
        values = {q: np.full((k, m), np.nan) for q in SIGNALS}
        seen = set()
        for s, (cols, pos, vel, eff) in enumerate(self.samples[:count]):
            for quantity, data in (("position", pos), ("velocity", vel), ("effort", eff)):
                if len(data) == len(cols):  # JointState leaves a quantity empty, or fills it for every name
                    values[quantity][s, cols] = data
                    seen.add(quantity)
        names = tuple(sorted(self.names, key=self.names.get))
        block = Block(np.asarray(self.t[:count]), names, {q: v for q, v in values.items() if q in seen},
                      np.asarray(self.bases[:count], float) if self.floating else None, np.asarray(self.log_t[:count]))
        del self.t[:count], self.log_t[:count], self.samples[:count]
        if self.floating:
            del self.bases[:count]
            self.waiting -= count
        return block
