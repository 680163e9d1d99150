"""Recordings in: every format written by its own writer library (mcap-ros2-support, rosbags, pyarrow,
simulate's NPZ), read back and computed along, equal to Pinocchio sample by sample; the messes of
real recordings answered as README says; many recordings on two Dask workers equal to one process."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.engine.coordinates import evaluation

from .conftest import assert_one_line_error, stderr_lines

pytest.importorskip("pyarrow", reason="the recordings extra is not installed (pip install 'coriolis-cli[recordings]')")
pytest.importorskip("mcap_ros2", reason="the recordings extra is not installed")
pytest.importorskip("rosbags", reason="the recordings extra is not installed")

RATE = 200.0  # Hz


def _trajectory(robot, K=60, seed=0):
    """A smooth state trajectory: stamps, q (K, nq), q̇ (K, nv) consistent with it, effort."""
    rng = np.random.default_rng(seed)
    t = 1_700_000_000.0 + np.arange(K) / RATE
    s = t - t[0]
    n1 = [i for i, b in enumerate(robot.bodies) if b.joint.nq == 1]
    amp, freq, phase = rng.uniform(0.2, 0.8, len(n1)), rng.uniform(0.3, 1.5, len(n1)), rng.uniform(0, 6, len(n1))
    Q = np.tile(robot.neutral_configuration(), (K, 1))
    V = np.zeros((K, robot.nv))
    for k, i in enumerate(n1):
        qs, vs = robot.q_start[i], robot.v_start[i]
        Q[:, qs] = amp[k] * np.sin(2 * np.pi * freq[k] * s + phase[k])
        V[:, vs] = amp[k] * 2 * np.pi * freq[k] * np.cos(2 * np.pi * freq[k] * s + phase[k])
    if robot.floating_base:
        Q[:, 0:3] = np.stack([0.3 * s, 0.1 * np.sin(s), 0.5 + 0.02 * s], axis=1)
        angle = 0.4 * s
        Q[:, 3:7] = np.stack([np.sin(angle / 2) * 0.6, np.sin(angle / 2) * 0.8, 0 * s, np.cos(angle / 2)], axis=1)
        V[:, 0:6] = rng.normal(size=(K, 6)) * 0.1 + np.array([0.3, 0.0, 0.02, 0.24, 0.32, 0.0])
    effort = rng.normal(size=(K, robot.nv))
    return t, Q, V, effort


def _joints(robot):
    return [(b.joint.name, robot.q_start[i], robot.v_start[i]) for i, b in enumerate(robot.bodies) if b.joint.nq == 1]


# ---- writers of each format --------------------------------------------------------------------------
def _typestore(ros1=False):
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS1_NOETIC if ros1 else Stores.ROS2_HUMBLE)


def _messages(robot, t, Q, V, effort, store, shuffle=True):
    """(stamp ns, JointState, Odometry or None) per sample, joints in a different order each time."""
    JointState, Header, Time = (store.types[n] for n in ("sensor_msgs/msg/JointState", "std_msgs/msg/Header",
                                                          "builtin_interfaces/msg/Time"))
    joints = _joints(robot)
    rng = np.random.default_rng(1)
    for k in range(len(t)):
        ns = int(round(t[k] * 1e9))
        stamp = Time(sec=ns // 10**9, nanosec=ns % 10**9)
        extra = {"seq": k} if "seq" in Header.__dataclass_fields__ else {}  # ROS 1's header has one
        order = rng.permutation(len(joints)) if shuffle else np.arange(len(joints))
        names = [joints[i][0] for i in order] + ["not_in_the_robot"]
        msg = JointState(header=Header(stamp=stamp, frame_id="", **extra), name=names,
                         position=np.array([Q[k, joints[i][1]] for i in order] + [1.0]),
                         velocity=np.array([V[k, joints[i][2]] for i in order] + [0.0]),
                         effort=np.array([effort[k, joints[i][2]] for i in order] + [0.0]))
        odom = None
        if robot.floating_base:
            g = store.types
            pose = g["geometry_msgs/msg/Pose"](position=g["geometry_msgs/msg/Point"](x=Q[k, 0], y=Q[k, 1], z=Q[k, 2]),
                                               orientation=g["geometry_msgs/msg/Quaternion"](x=Q[k, 3], y=Q[k, 4], z=Q[k, 5],
                                                                                           w=Q[k, 6]))
            twist = g["geometry_msgs/msg/Twist"](linear=g["geometry_msgs/msg/Vector3"](x=V[k, 0], y=V[k, 1], z=V[k, 2]),
                                                 angular=g["geometry_msgs/msg/Vector3"](x=V[k, 3], y=V[k, 4], z=V[k, 5]))
            odom = g["nav_msgs/msg/Odometry"](
                header=Header(stamp=stamp, frame_id="odom", **extra), child_frame_id="base",
                pose=g["geometry_msgs/msg/PoseWithCovariance"](pose=pose, covariance=np.zeros(36)),
                twist=g["geometry_msgs/msg/TwistWithCovariance"](twist=twist, covariance=np.zeros(36)))
        yield ns, msg, odom


def write_mcap(path, robot, t, Q, V, effort):
    from mcap_ros2.writer import Writer

    store = _typestore()
    with open(path, "wb") as f:
        writer = Writer(f)
        js = writer.register_msgdef("sensor_msgs/msg/JointState", store.generate_msgdef("sensor_msgs/msg/JointState",
                                                                                      ros_version=2)[0])
        od = writer.register_msgdef("nav_msgs/msg/Odometry", store.generate_msgdef("nav_msgs/msg/Odometry", ros_version=2)[0])
        for ns, msg, odom in _messages(robot, t, Q, V, effort, store):
            if odom is not None:
                writer.write_message("/odom", od, _as_dict(odom), log_time=ns, publish_time=ns)
            writer.write_message("/joint_states", js, _as_dict(msg), log_time=ns, publish_time=ns)
        writer.finish()


def _as_dict(msg):
    """A rosbags message as the plain dict mcap-ros2-support serializes."""
    if hasattr(msg, "__dataclass_fields__"):
        return {k: _as_dict(getattr(msg, k)) for k in msg.__dataclass_fields__ if not k.startswith("__")}
    if isinstance(msg, np.ndarray):
        return msg.tolist()
    if isinstance(msg, list):
        return [_as_dict(x) for x in msg]
    return msg


def write_rosbag2(path, robot, t, Q, V, effort, storage="sqlite3"):
    from rosbags.rosbag2 import StoragePlugin, Writer

    store = _typestore()
    plugin = StoragePlugin.SQLITE3 if storage == "sqlite3" else StoragePlugin.MCAP
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        _write_bag(writer, store, store.serialize_cdr, robot, t, Q, V, effort)


def write_rosbag1(path, robot, t, Q, V, effort):
    from rosbags.rosbag1 import Writer

    store = _typestore(ros1=True)
    with Writer(path) as writer:
        _write_bag(writer, store, store.serialize_ros1, robot, t, Q, V, effort)


def _write_bag(writer, store, serialize, robot, t, Q, V, effort):
    """/joint_states (and /odom for a floating base) through an open rosbags writer, either version."""
    js = writer.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=store)
    od = writer.add_connection("/odom", "nav_msgs/msg/Odometry", typestore=store) if robot.floating_base else None
    for ns, msg, odom in _messages(robot, t, Q, V, effort, store):
        if odom is not None:
            writer.write(od, ns, serialize(odom, "nav_msgs/msg/Odometry"))
        writer.write(js, ns, serialize(msg, "sensor_msgs/msg/JointState"))


def _plotjuggler_columns(robot, t, Q, V, effort):
    cols = {"__time": t}
    for name, qs, vs in _joints(robot):
        cols[f"/joint_states/{name}/position"] = Q[:, qs]
        cols[f"/joint_states/{name}/velocity"] = V[:, vs]
        cols[f"/joint_states/{name}/effort"] = effort[:, vs]
    if robot.floating_base:
        for k, f in enumerate(("position/x", "position/y", "position/z")):
            cols[f"/odom/pose/pose/{f}"] = Q[:, k]
        for k, f in enumerate(("orientation/x", "orientation/y", "orientation/z", "orientation/w")):
            cols[f"/odom/pose/pose/{f}"] = Q[:, 3 + k]
        for k, f in enumerate(("linear/x", "linear/y", "linear/z", "angular/x", "angular/y", "angular/z")):
            cols[f"/odom/twist/twist/{f}"] = V[:, k]
    return cols


def write_parquet(path, robot, t, Q, V, effort):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(_plotjuggler_columns(robot, t, Q, V, effort)), path, row_group_size=17)


def write_csv(path, robot, t, Q, V, effort):
    import pyarrow as pa
    import pyarrow.csv as pcsv

    pcsv.write_csv(pa.table(_plotjuggler_columns(robot, t, Q, V, effort)), path)


WRITERS = {"mcap": (write_mcap, "run.mcap"), "rosbag2-sqlite3": (write_rosbag2, "bag_sqlite"),
           "rosbag2-mcap": (lambda *a: write_rosbag2(*a, storage="mcap"), "bag_mcap"),
           "rosbag1": (write_rosbag1, "run.bag"), "parquet": (write_parquet, "run.parquet"), "csv": (write_csv, "run.csv")}


def _pinocchio_along(robot, Q, V):
    """g, C q̇, Cᵀq̇, p, T from Pinocchio, per sample, in our DoF order."""
    pytest.importorskip("pinocchio")
    from coriolis_cli.peers.pinocchio import PinocchioPeer

    peer = PinocchioPeer(robot)
    out = []
    for q, v in zip(Q, V):
        M, C = peer.mass_matrix(q), peer.coriolis_matrix(q, v)
        g = peer.rnea(q, np.zeros(robot.nv), np.zeros(robot.nv))
        out.append(np.concatenate([g, C @ v, C.T @ v, M @ v, [0.5 * v @ M @ v]]))
    return np.array(out)


@pytest.mark.parametrize("fmt", list(WRITERS))
@pytest.mark.parametrize("robot_name,floating", [("panda", False), ("quadruped", True)])
def test_every_format_round_trips_and_equals_pinocchio(tmp_path, fmt, robot_name, floating):
    from coriolis_cli.along import along, columns

    robot = cc.load_robot(robot_name, floating_base=floating)
    t, Q, V, effort = _trajectory(robot)
    write, name = WRITERS[fmt]
    path = str(tmp_path / name)
    write(path, robot, t, Q, V, effort)
    base = "/odom" if floating else None
    with pytest.warns(cc.ModelWarning, match="not_in_the_robot") if fmt not in ("parquet", "csv") else warnings.catch_warnings():
        rec = cc.recordings.load_recording(path, robot, base_topic=base)
    # stamps: seconds since the epoch as float64 (0.24 µs apart there); every digit of a Parquet table
    assert np.array_equal(rec.t, t) if fmt == "parquet" else np.allclose(rec.t, t, rtol=0, atol=5e-7)
    tol = 0.0 if fmt != "csv" else 1e-15
    Qn = Q.copy()
    if floating:
        Qn[:, 3:7] /= np.linalg.norm(Qn[:, 3:7], axis=1, keepdims=True)
    assert np.abs(rec.q - Qn).max() <= tol + 1e-15 and np.abs(rec.qd - V).max() <= tol
    assert np.abs(rec.effort[:, [vs for *_, vs in _joints(robot)]] - effort[:, [vs for *_, vs in _joints(robot)]]).max() <= tol
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cc.ModelWarning)
        table = np.concatenate(list(along(robot, path, ("g", "Cqd", "CTqd", "p", "energy"), base_topic=base, rows=23)))
    assert table.shape == (len(t), len(columns(robot, ("g", "Cqd", "CTqd", "p", "energy"))))
    reference = _pinocchio_along(robot, rec.q, rec.qd)
    n = robot.nv
    ours = np.concatenate([table[:, 1 : 1 + 4 * n], table[:, 1 + 4 * n : 2 + 4 * n]], axis=1)
    scale = np.abs(reference).max(axis=0) + 1.0
    assert (np.abs(ours - reference) / scale).max() <= 1e-12


def test_compute_recording_writes_each_table_format_and_mcap_shows_in_foxglove_terms(tmp_path, run_cli):
    robot = cc.load_robot("panda")
    t, Q, V, effort = _trajectory(robot, K=40)
    path = str(tmp_path / "run.mcap")
    write_mcap(path, robot, t, Q, V, effort)
    outs = {}
    for ext in ("parquet", "csv", "npz", "mcap"):
        out = tmp_path / f"out.{ext}"
        r = run_cli("compute", "panda", "--recording", path, "--what", "g,Cqd,CTqd,p,tau,energy", "-o", out)
        assert r.code == 0 and "40 samples" in r.err, r
        outs[ext] = out
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    a, b = pq.read_table(outs["parquet"]), pcsv.read_csv(outs["csv"])
    assert a.column_names == b.column_names and a.column_names[0] == "time"
    for c in a.column_names:
        assert np.array_equal(a.column(c).to_numpy(), b.column(c).to_numpy()), c  # CSV keeps every digit
    z = np.load(outs["npz"])
    assert np.array_equal(z["p"], np.stack([a.column(f"p/{d}").to_numpy() for d in robot.dof_names], axis=1))
    assert list(z["p_names"]) == list(robot.dof_names)
    from mcap.reader import make_reader

    with open(outs["mcap"], "rb") as f:
        messages = list(make_reader(f).iter_messages(topics=["/coriolis"]))
    assert len(messages) == 40
    first = json.loads(messages[0][2].data)
    assert first["p"]["panda_joint1"] == a.column("p/panda_joint1")[0].as_py()
    assert messages[0][2].log_time == int(round(t[0] * 1e9))


def test_simulate_npz_reads_back_and_tau_from_differentiated_accelerations(tmp_path, run_cli):
    out = tmp_path / "sim.npz"
    assert run_cli("simulate", "panda", "--duration", "0.3", "-o", out).code == 0
    z = np.load(out)
    robot = cc.load_robot("panda")
    rec = cc.recordings.load_recording(str(out), robot, accelerations=True)
    assert np.array_equal(rec.q, z["q"]) and np.array_equal(rec.qd, z["qd"])
    from coriolis_cli.along import along

    # noiseless: a short window (11 samples) recovers the smooth applied torque from q̈
    table = np.concatenate(list(along(robot, str(out), ("tau",), rows=37, window=11)))
    tau = table[:, 1:]
    inner = slice(10, -10)
    assert np.abs(tau[inner] - z["tau"][inner]).max() <= 1e-3 * np.abs(z["tau"]).max()


def test_velocities_are_differentiated_when_missing_and_chunks_change_nothing(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    robot = cc.load_robot("planar_2link")
    t = np.arange(400) / 500.0
    q = np.stack([np.sin(2 * t), np.cos(3 * t)], axis=1)
    path = tmp_path / "positions.parquet"
    pq.write_table(pa.table({"time": t, "q/joint1": q[:, 0], "q/joint2": q[:, 1]}), path)
    # noiseless: an 11-sample window differentiates exactly to the cubic's truncation
    whole = cc.recordings.load_recording(str(path), robot, accelerations=True, window=11)
    assert np.abs(whole.qd - np.stack([2 * np.cos(2 * t), -3 * np.sin(3 * t)], axis=1)).max() < 1e-5
    assert np.abs(whole.qdd - np.stack([-4 * np.sin(2 * t), -9 * np.cos(3 * t)], axis=1)).max() < 1e-2
    parts = list(cc.recordings.stream_recording(str(path), robot, accelerations=True, rows=7, window=11))
    assert np.array_equal(np.concatenate([p.qd for p in parts]), whole.qd)
    assert np.array_equal(np.concatenate([p.qdd for p in parts]), whole.qdd)


def test_messy_recordings(tmp_path, run_cli):
    """Duplicate and backward stamps dropped and counted, NaN samples skipped or refused under
    --strict, missing joints refused by name unless locked, several topics listed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    robot = cc.load_robot("panda")
    t, Q, V, effort = _trajectory(robot, K=30)
    cols = _plotjuggler_columns(robot, t, Q, V, effort)
    cols["__time"] = cols["__time"].copy()
    cols["__time"][5] = cols["__time"][4]  # a duplicate
    cols["__time"][9] = cols["__time"][2]  # backward
    cols["/joint_states/panda_joint3/position"] = cols["/joint_states/panda_joint3/position"].copy()
    cols["/joint_states/panda_joint3/position"][12] = np.nan
    path = tmp_path / "messy.parquet"
    pq.write_table(pa.table(cols), path)
    with pytest.warns(cc.ModelWarning) as said:
        rec = cc.recordings.load_recording(str(path), robot)
    text = " ".join(str(w.message) for w in said)
    assert "2 samples with a stamp equal to or before the previous one, dropped" in text
    assert "1 sample with a missing or NaN value, skipped" in text and len(rec.t) == 27
    assert np.all(np.diff(rec.t) > 0)
    r = run_cli("compute", "panda", "--recording", path, "--strict", "-o", tmp_path / "o.parquet")
    assert r.code == 2 and "--strict refuses them" in r.err and not (tmp_path / "o.parquet").exists()
    del cols["/joint_states/panda_joint7/position"]
    lacking = tmp_path / "lacking.parquet"
    pq.write_table(pa.table(cols), lacking)
    assert_one_line_error(run_cli("compute", "panda", "--recording", lacking, "-o", tmp_path / "o.parquet"),
                          "lacks 1 joint the robot needs ('panda_joint7')", "--lock")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cc.ModelWarning)
        assert cc.load_robot("panda", lock=["panda_joint7"]).nv == 6
        rec = cc.recordings.load_recording(str(lacking), cc.load_robot("panda", lock=["panda_joint7"]))
    assert rec.q.shape[1] == 6
    two = dict(cols)
    for k, v in cols.items():
        if k.startswith("/joint_states/"):
            two["/other" + k[len("/joint_states"):]] = v
    both = tmp_path / "two.parquet"
    pq.write_table(pa.table(two), both)
    assert_one_line_error(run_cli("compute", "panda", "--recording", both, "-o", tmp_path / "o.parquet"),
                          "joint states of 2 topics (/joint_states, /other)", "--topic")


def test_bad_recordings_are_one_line_and_leave_nothing(tmp_path, run_cli):
    robot = cc.load_robot("quadruped", floating_base=True)
    t, Q, V, effort = _trajectory(robot, K=50)
    good = tmp_path / "run.mcap"
    write_mcap(str(good), robot, t, Q, V, effort)
    data = good.read_bytes()
    broken = tmp_path / "broken.mcap"
    broken.write_bytes(data[: len(data) // 2])
    out = tmp_path / "o.parquet"
    r = run_cli("compute", "quadruped", "--floating-base", "--recording", broken, "--base-topic", "/odom", "-o", out)
    assert r.code == 2 and "broken.mcap" in r.err and not out.exists(), r
    r = run_cli("compute", "quadruped", "--floating-base", "--recording", good, "-o", out)
    assert r.code == 2 and "base's pose and twist" in r.err and "--base-topic" in r.err, r
    r = run_cli("compute", "quadruped", "--floating-base", "--recording", good, "--topic", "/nope", "--base-topic", "/odom",
                "-o", out)
    assert r.code == 2 and "no JointState topic '/nope'" in r.err, r
    r = run_cli("compute", "panda", "--recording", good, "-o", out)
    assert r.code == 2 and "lacks 7 joints" in r.err, r
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"PAR1" + os.urandom(200))
    assert_one_line_error(run_cli("compute", "panda", "--recording", corrupt, "-o", out), "corrupt.parquet")
    import pyarrow as pa
    import pyarrow.parquet as pq

    empty = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"time": np.zeros(0), "q/panda_joint1": np.zeros(0)}), empty)
    r = run_cli("compute", "planar_2link", "--recording", empty, "-o", out)
    assert r.code == 2 and not out.exists(), r
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".part")]


def test_two_dask_workers_equal_one_process(tmp_path, run_cli):
    pytest.importorskip("distributed")
    robot = cc.load_robot("panda")
    folder = tmp_path / "fleet"
    folder.mkdir()
    for k in range(3):
        t, Q, V, effort = _trajectory(robot, K=30 + 10 * k, seed=k)
        write_parquet(str(folder / f"robot{k}.parquet"), robot, t, Q, V, effort)
    one, two = tmp_path / "one", tmp_path / "two"
    r = run_cli("compute", "panda", "--recording", folder, "--what", "g,Cqd,CTqd,p,tau,energy", "-o", one)
    assert r.code == 0 and "3 parts" in r.err, r
    r = run_cli("compute", "panda", "--recording", str(folder / "*.parquet"), "--what", "g,Cqd,CTqd,p,tau,energy",
                "-o", two, "--workers", "2")
    assert r.code == 0 and "3 parts" in r.err, r
    for k in range(3):
        a, b = (p / f"part-{k:05d}.parquet" for p in (one, two))
        assert a.read_bytes() != b"" and _same_table(a, b)


def _same_table(a, b) -> bool:
    import pyarrow.parquet as pq

    x, y = pq.read_table(a), pq.read_table(b)
    return x.column_names == y.column_names and all(
        np.array_equal(x.column(c).to_numpy(), y.column(c).to_numpy(), equal_nan=True) for c in x.column_names)


@pytest.mark.parametrize("name,options", [("gripper", {"mimic": "enforce"}), ("fourbar", {})])
def test_robots_in_other_coordinates_read_the_full_tree(tmp_path, name, options):
    """A recording holds every joint; a robot with its mimic joints enforced, or closed loops,
    computes in its independent coordinates (q̄ read off q, q̄̇ from A q̄̇ = q̇)."""
    from coriolis_cli.along import along

    robot = cc.load_robot(name, **options)
    rng = np.random.default_rng(0)
    qbar = np.stack([cc.random_configuration(robot, rng) for _ in range(12)])
    vbar = rng.normal(size=(12, robot.nv))
    Q = np.stack([evaluation(robot).full_configuration(q) for q in qbar])
    V = np.stack([evaluation(robot).jacobian(q) @ v for q, v in zip(qbar, vbar)])
    path = str(tmp_path / "run.parquet")
    write_parquet(path, robot.full, 5.0 + np.arange(12) / 100.0, Q, V, np.zeros_like(V))
    table = np.concatenate(list(along(robot, path, ("g", "Cqd", "p"))))
    for s in range(12):
        M, _, C = cc.coriolis_matrix(robot, qbar[s], vbar[s])
        reference = np.concatenate([cc.gravity_vector(robot, qbar[s]), C @ vbar[s], M @ vbar[s]])
        assert np.abs(table[s, 1:] - reference).max() <= 1e-13


@pytest.mark.parametrize("command, extra, purpose", [
    ("identify", (), "which identification needs"),
    ("identify", ("--validate", "{without}"), "to validate against"),
    ("observe", (), "which the observers need"),
])
def test_a_recording_without_effort_is_refused_in_one_line(command, extra, purpose, run_cli, tmp_path):
    """A recording the command cannot use is refused from its first chunk, in one line."""

    import pyarrow as pa
    import pyarrow.parquet as pq

    robot = cc.load_robot("panda")
    t = np.arange(100) * 1e-3
    q = {f"q/{n}": 0.1 * np.sin(t + k) for k, n in enumerate(robot.dof_names)}
    without, with_effort = tmp_path / "no_effort.parquet", tmp_path / "run.parquet"
    pq.write_table(pa.table({"time": t, **q}), without)
    pq.write_table(pa.table({"time": t, **q, **{f"tau/{n}": np.cos(t) for n in robot.dof_names}}), with_effort)

    fitted = with_effort if extra else without
    options = ("--method", "ols") if command == "identify" else ()
    r = run_cli(command, "panda", fitted, *(str(a).format(without=without) for a in extra), *options)
    assert_one_line_error(r, "no effort", purpose, str(without))


def test_on_a_realistic_log_the_default_derivatives_hold_where_eleven_samples_did_not(tmp_path):
    """A MuJoCo excitation run logged as a PC logs it (tests/realistic_logs.py): stamps jittering
    by up to 7.9 ms, samples logged twice or missed, encoder steps, velocity noise. The default
    (a cubic over 0.1 s fitted on the stamps, repeats dropped) gives τ from q̈ within 0.1 N·m
    RMS of the applied torque on every joint; 11 samples gave up to 2 N·m."""
    pytest.importorskip("mujoco")
    import warnings

    from coriolis_cli.along import along
    from coriolis_cli.model.tree import build_model

    from .realistic_logs import as_logged
    from .test_identification import simulate, true_panda, write

    truth = build_model(true_panda())
    t, Q, V, TAU = simulate(true_panda(), seconds=4.0, seed=0, noise=0.0)
    stamps, q, qd, tau, taken = as_logged(t, Q, V, TAU)
    path = str(tmp_path / "logged.parquet")
    write(path, truth, stamps, q, qd, tau)
    repeats = int(np.sum(np.diff(taken) == 0))
    errors = {}
    for window in (None, 11):
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            table = np.concatenate(list(along(truth, path, ("tau",), window=window, rows=997)))
        text = " ".join(str(w.message) for w in said)
        assert f"{repeats} samples repeating the previous one's values exactly under a new stamp" in text
        assert ("cubic over 101 samples" if window is None else "cubic over 11 samples") in text
        applied = TAU[taken[np.searchsorted(stamps, table[:, 0])]]
        errors[window] = np.sqrt(np.mean((table[:, 1:] - applied) ** 2, axis=0))
    assert np.all(errors[None] < 0.1), errors[None]
    assert np.all(errors[None] < 0.15 * errors[11]), errors[None] / errors[11]


def test_the_window_is_a_duration_or_samples_and_never_longer_than_the_recording(tmp_path, run_cli):
    from coriolis_cli.errors import RecordingError
    import pyarrow as pa
    import pyarrow.parquet as pq

    robot = cc.load_robot("planar_2link")
    t = np.arange(300) / 1000.0
    q = np.stack([np.sin(2 * t), np.cos(3 * t)], axis=1)
    path = tmp_path / "short.parquet"
    pq.write_table(pa.table({"time": t, "q/joint1": q[:, 0], "q/joint2": q[:, 1]}), path)
    same = [cc.recordings.load_recording(str(path), robot, window=w).qd for w in (0.05, "50ms", "0.05s", 51)]
    assert all(np.array_equal(same[0], x) for x in same[1:])
    for bad, message in (("0.5s", "window of 501 samples \\(0.50. s\\) is longer than the recording's 300 samples"),
                         ("10", "an odd number, at least 5"), ("0.1", "give a duration with its unit")):
        with pytest.raises(RecordingError, match=message):
            cc.recordings.load_recording(str(path), robot, window=bad)
        r = run_cli("compute", "planar_2link", "--recording", path, "--window", bad, "-o", tmp_path / "o.parquet")
        assert r.code == 2 and len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err, r
    short = tmp_path / "shorter.parquet"  # the default window, longer than the recording, fits all of it and says so
    pq.write_table(pa.table({"time": t[:60], "q/joint1": q[:60, 0], "q/joint2": q[:60, 1]}), short)
    r = run_cli("compute", "planar_2link", "--recording", short, "-o", tmp_path / "o.parquet")
    assert r.code == 0 and "cubic over 59 samples, the whole recording" in r.err, r


# ---- how the options are named: the parameters from Python, the flags on the command line ----------
def _npz(tmp_path, robot):
    """2 s at 100 Hz of planar_2link, in the format of `coriolis simulate -o run.npz`."""
    t = np.linspace(0.0, 2.0, 201)
    q, qd = np.stack([np.sin(t), np.cos(t)], axis=1), np.stack([np.cos(t), -np.sin(t)], axis=1)
    path = tmp_path / "run.npz"
    np.savez(path, t=t, q=q, qd=qd, tau=np.zeros_like(q), dof_names=robot.dof_names, config_names=robot.config_names)
    return str(path)


@pytest.mark.parametrize("given, python, flags, cli", [
    ({"window": "abc"}, "window='abc': give a duration with its unit", ("--window", "abc"),
     "--window abc: give a duration with its unit"),
    ({"window": 4}, "window=4: a window of samples is an odd number, at least 5", ("--window", "4"),
     "--window 4: a window of samples is an odd number, at least 5"),
    ({"window": 0.0}, "window=0.0: a duration is positive and finite", ("--window", "0s"),
     "--window 0.0: a duration is positive and finite"),
    ({"window": [1]}, "window=[1]: a duration in seconds or a number of samples", None, None),
    ({"effort_scale": "x"}, "effort_scale: 'x' is not a number", ("--effort-scale", "x"),
     "--effort-scale: 'x' is not a number"),
    ({"effort_scale": "joint1=y"}, "effort_scale joint1: 'y' is not a number", ("--effort-scale", "joint1=y"),
     "--effort-scale joint1: 'y' is not a number"),
    ({"effort_offset": "nope=1"}, "effort_offset: the robot has no joint 'nope' (its joints: joint1, joint2)",
     ("--effort-offset", "nope=1"), "--effort-offset: the robot has no joint 'nope' (its joints: joint1, joint2)"),
    ({"effort_scale": 0}, "effort_scale: a scale of 0 would erase the effort", ("--effort-scale", "0"),
     "--effort-scale: a scale of 0 would erase the effort"),
])
def test_a_malformed_option_is_named_as_the_caller_gave_it(tmp_path, run_cli, given, python, flags, cli):
    """load_recording and stream_recording name their parameters (window=, effort_scale, effort_offset);
    the commands name their options (--window, --effort-scale, --effort-offset), in one line."""
    robot = cc.load_robot("planar_2link")
    path = _npz(tmp_path, robot)
    for read in (lambda: cc.load_recording(path, robot, **given), lambda: next(cc.stream_recording(path, robot, **given))):
        with pytest.raises(cc.RecordingError) as refused:
            read()
        assert python in str(refused.value) and "--" not in str(refused.value), refused.value
    if flags is None:  # the command line gives text only
        return
    commands = [("observe", "planar_2link", path), ("identify", "planar_2link", path, "--method", "ols")]
    if flags[0] == "--window":
        commands.append(("compute", "planar_2link", "--recording", path, "-o", tmp_path / "o.parquet"))
    for command in commands:
        assert_one_line_error(run_cli(*command, *flags), f"error: {cli}")
        assert not (tmp_path / "o.parquet").exists()


def test_a_topic_given_for_a_recording_without_topics_is_refused(tmp_path, run_cli):
    """An NPZ holds no topics: topic= (--topic) and base_topic= (--base-topic) would do nothing, and
    are refused in one line naming the format; a base topic for a fixed-base robot too."""
    robot = cc.load_robot("planar_2link")
    path = _npz(tmp_path, robot)
    for option, flag in (("topic", "--topic"), ("base_topic", "--base-topic")):
        given = {option: "/x"}
        for read in (lambda g=given: cc.load_recording(path, robot, **g),
                     lambda g=given: next(cc.stream_recording(path, robot, **g))):
            with pytest.raises(cc.RecordingError) as refused:
                read()
            assert str(refused.value) == (f"{path}: an .npz recording has no topics: {option}= applies to MCAP, ROS "
                                          "bags and PlotJuggler's CSV and Parquet"), refused.value
        said = f"error: {path}: an .npz recording has no topics: {flag} applies to MCAP, ROS bags and PlotJuggler's CSV"
        out = tmp_path / "o.parquet"
        assert_one_line_error(run_cli("compute", "planar_2link", "--recording", path, flag, "/x", "-o", out), said)
        assert not out.exists()
        assert_one_line_error(run_cli("observe", "planar_2link", path, flag, "/x"), said)
        assert_one_line_error(run_cli("identify", "planar_2link", path, "--method", "ols", flag, "/x"), said)
        # many recordings: refused before any worker starts, naming the one without topics
        assert_one_line_error(run_cli("compute", "planar_2link", "--recording", tmp_path / "*.npz", flag, "/x",
                                      "-o", tmp_path / "many"), said)
        assert not (tmp_path / "many").exists()
    # a table has topics (PlotJuggler's columns): topic= chooses among them, as before
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = np.linspace(0.0, 1.0, 101)
    table = tmp_path / "run.parquet"
    pq.write_table(pa.table({"time": t, "q/joint1": np.sin(t), "q/joint2": np.cos(t)}), table)
    with pytest.raises(cc.RecordingError, match="no joint-state columns of topic '/x'"):
        cc.load_recording(str(table), robot, topic="/x")
    # a base topic for a robot without a floating base would be read and ignored
    with pytest.raises(cc.RecordingError) as refused:
        cc.load_recording(str(table), robot, base_topic="/odom")
    assert str(refused.value) == ("base_topic='/odom': the robot has a fixed base, which takes no pose from odometry "
                                  "(load it with floating_base=True)"), refused.value
    assert_one_line_error(run_cli("compute", "planar_2link", "--recording", table, "--base-topic", "/odom",
                                  "-o", tmp_path / "o.parquet"),
                          "error: --base-topic /odom: the robot has a fixed base, which takes no pose from odometry "
                          "(pass --floating-base)")


def test_how_the_derivatives_were_taken_is_a_note_python_can_filter(tmp_path, run_cli):
    """The cubic fitted on the stamps is information, not a problem: a RecordingNote (a documented
    UserWarning) that names window= and points at the caller's line, filtered by its class; the
    command line says it as before, '--window sets it', after its output."""
    robot = cc.load_robot("planar_2link")
    path = _npz(tmp_path, robot)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        cc.load_recording(path, robot, accelerations=True)
    assert [w.category for w in said] == [cc.RecordingNote], said
    assert issubclass(cc.RecordingNote, UserWarning) and "RecordingNote" in cc.__all__
    assert str(said[0].message) == (f"{path}: q̈ fitted on the stamps: cubic over 11 samples (0.11 s at 100 Hz; −3 dB "
                                    "at 9.88 Hz; window= sets it)")
    assert said[0].filename == __file__, said[0].filename  # the caller's line, not the library's
    for read in (lambda: cc.load_recording(path, robot, accelerations=True),
                 lambda: list(cc.stream_recording(path, robot, accelerations=True))):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.simplefilter("ignore", cc.RecordingNote)
            read()  # nothing else is said
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            read()
        assert [w.filename for w in said] == [__file__]
    r = run_cli("compute", "planar_2link", "--recording", path, "--what", "tau", "-o", tmp_path / "o.parquet")
    assert r.code == 0 and stderr_lines(r.err)[-1] == (f"note: {path}: q̈ fitted on the stamps: cubic over 11 samples "
                                                        "(0.11 s at 100 Hz; −3 dB at 9.88 Hz; --window sets it)"), r.err
