"""What reads recordings never gives a silently wrong number: time columns in any unit Arrow or a
column's name states, and malformed joint states (a joint twice, fewer values than names) refused
in one line naming where."""

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.errors import RecordingError

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

T = np.round(np.arange(50) * 0.01, 9)  # 100 Hz, 0.5 s
EPOCH = 1_764_000_000  # 2025-11-24, in seconds


def _joint_columns(robot, K):
    rng = np.random.default_rng(3)
    return {f"q/{b.joint.name}": rng.uniform(-1, 1, K) for b in robot.bodies}


def _read_seconds(path, robot):
    recording = cc.load_recording(path, robot)
    return np.asarray(recording.t, float)


@pytest.mark.parametrize("form", ["timestamp_ns", "duration_ms", "int64_ns_epoch", "int64_us_epoch", "time_ns",
                                  "time_ms", "float_seconds"])
def test_a_parquet_time_column_is_read_in_its_own_unit(tmp_path, form):
    robot = cc.load_robot("panda")
    columns = _joint_columns(robot, len(T))
    name, ticks = "time", None
    if form == "timestamp_ns":
        ticks = pa.array(((EPOCH + T) * 1e9).round().astype(np.int64), type=pa.timestamp("ns"))
    elif form == "duration_ms":
        ticks = pa.array((T * 1e3).round().astype(np.int64), type=pa.duration("ms"))
    elif form == "int64_ns_epoch":
        ticks = pa.array(((EPOCH + T) * 1e9).round().astype(np.int64))
    elif form == "int64_us_epoch":
        ticks = pa.array(((EPOCH + T) * 1e6).round().astype(np.int64))
    elif form in ("time_ns", "time_ms"):
        name = form
        ticks = pa.array((T / cc.recordings.sources.SECONDS_PER[form[5:]]).round().astype(np.int64))
    else:
        ticks = pa.array(T)
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({name: ticks, **columns}), path)
    t = _read_seconds(str(path), robot)
    steps = np.diff(t)  # seconds, not ns or ms read as seconds; epoch seconds in float64 carry 0.24 µs
    assert np.allclose(steps, 0.01, rtol=0, atol=1e-6), (form, steps[:3])


def test_integers_counted_from_another_start_with_no_unit_are_refused_not_guessed(tmp_path):
    robot = cc.load_robot("panda")
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"time": pa.array((T * 1e9).astype(np.int64)), **_joint_columns(robot, len(T))}), path)
    with pytest.raises(RecordingError, match="the time column 'time' holds integers with no unit") as e:
        cc.load_recording(str(path), robot)
    assert "time_ns" in e.value.hint


def test_a_column_written_twice_is_refused_rather_than_one_taken(tmp_path, run_cli):
    robot = cc.load_robot("panda")
    names = [f"q/{b.joint.name}" for b in robot.bodies]
    path = tmp_path / "twice.csv"
    rows = ["time," + ",".join(names + [names[2]])]
    rows += [f"{t:.2f}," + ",".join(["0.1"] * len(names) + ["0.5"]) for t in T]
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(RecordingError, match=f"the column '{names[2]}' appears twice"):
        cc.load_recording(str(path), robot)
    r = run_cli("compute", "panda", "--recording", str(path), "-o", str(tmp_path / "out.parquet"))
    assert r.code == 2 and "appears twice" in r.err and "Traceback" not in r.err


def _joint_state_mcap(path, messages):
    """An MCAP of JointState messages given as (names, positions, velocities, efforts) per sample."""
    from mcap_ros2.writer import Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    with open(path, "wb") as f:
        writer = Writer(f)
        schema = writer.register_msgdef("sensor_msgs/msg/JointState",
                                        store.generate_msgdef("sensor_msgs/msg/JointState", ros_version=2)[0])
        for k, (names, pos, vel, eff) in enumerate(messages):
            ns = int(1e9 + k * 1e7)
            msg = {"header": {"stamp": {"sec": ns // 10**9, "nanosec": ns % 10**9}, "frame_id": ""}, "name": names,
                   "position": list(pos), "velocity": list(vel), "effort": list(eff)}
            writer.write_message("/joint_states", schema, msg, log_time=ns, publish_time=ns)
        writer.finish()


@pytest.mark.parametrize("fault", ["six_positions", "joint_twice", "five_efforts"])
def test_a_malformed_joint_state_is_refused_with_its_time(tmp_path, run_cli, fault):
    pytest.importorskip("mcap_ros2")
    robot = cc.load_robot("panda")
    names = [b.joint.name for b in robot.bodies]
    good = (names, [0.1] * 7, [0.0] * 7, [1.0] * 7)
    bad = {"six_positions": (names, [0.1] * 6, [0.0] * 7, [1.0] * 7),
           "joint_twice": (names[:6] + [names[0]], [0.1] * 7, [0.0] * 7, [1.0] * 7),
           "five_efforts": (names, [0.1] * 7, [0.0] * 7, [1.0] * 5)}[fault]
    path = tmp_path / "run.mcap"
    _joint_state_mcap(path, [good] * 20 + [bad] + [good] * 20)
    expected = {"six_positions": "has 7 joint names and 6 positions", "joint_twice": f"names joint '{names[0]}' twice",
                "five_efforts": "has 7 joint names and 5 efforts"}[fault]
    with pytest.raises(RecordingError, match=f"at t = 1.200000 s {expected}"):
        cc.load_recording(str(path), robot)
    r = run_cli("compute", "panda", "--recording", str(path), "-o", str(tmp_path / "out.parquet"))
    assert r.code == 2 and expected in r.err and "Traceback" not in r.err


def test_empty_quantities_are_still_read_as_absent(tmp_path):
    pytest.importorskip("mcap_ros2")
    robot = cc.load_robot("panda")
    names = [b.joint.name for b in robot.bodies]
    path = tmp_path / "run.mcap"
    _joint_state_mcap(path, [(names, [0.1 + 0.01 * k] * 7, [], []) for k in range(30)])
    recording = cc.load_recording(str(path), robot)
    assert np.allclose(np.asarray(recording.t)[:2], [1.0, 1.01])
