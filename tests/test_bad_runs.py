"""Runs that cannot go well end in one line and exit 2, write over no input, leave nothing behind
and stay bounded: outputs naming inputs, empty and ill-fitting files, values out of range,
worker counts and link loops, failed and interrupted runs on workers."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import coriolis_cli as cc  # noqa: E402


def _one_line(r, *fragments):
    assert r.code == 2, r
    lines = [x for x in r.err.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in r.err, r.err
    for fragment in fragments:
        assert fragment in r.err, (fragment, r.err)


@pytest.fixture()
def recording(tmp_path):
    robot = cc.load_robot("panda")
    t = np.arange(400) / 200.0
    rng = np.random.default_rng(0)
    cols = {"time": t}
    for j, name in enumerate(robot.dof_names):
        cols[f"q/{name}"] = 0.3 * np.sin(t + j)
        cols[f"qd/{name}"] = 0.3 * np.cos(t + j)
        cols[f"tau/{name}"] = rng.normal(size=len(t))
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table(cols), path)
    return path


def test_no_output_is_an_input_whatever_the_links(recording, tmp_path, run_cli):
    before = recording.read_bytes()
    link = tmp_path / "link.parquet"
    os.symlink(recording, link)
    robot_file = tmp_path / "p.urdf"
    shutil.copy(os.path.join(os.path.dirname(cc.__file__), "..", "robots", "panda.urdf"), robot_file)
    robot_before = robot_file.read_bytes()
    for args in (("compute", "panda", "--recording", recording, "-o", recording),
                 ("compute", "panda", "--recording", recording, "-o", link),
                 ("observe", "panda", recording, "-o", link),
                 ("identify", robot_file, recording, "--method", "ols", "-o", robot_file),
                 ("convert", robot_file, "-o", robot_file)):
        _one_line(run_cli(*args, "--force"), "is an input of this run")
    assert recording.read_bytes() == before and robot_file.read_bytes() == robot_before


def test_empty_and_ill_fitting_files_are_named(tmp_path, run_cli):
    (tmp_path / "empty.mcap").write_bytes(b"")
    (tmp_path / "junk.mcap").write_bytes(b"not an mcap")
    names = np.array([f"panda_joint{k}" for k in range(1, 8)])
    np.savez(tmp_path / "short.npz", t=np.arange(5.0), q=np.zeros((4, 7)), dof_names=names, config_names=names)
    np.savez(tmp_path / "text.npz", t=np.arange(4.0), q=np.full((4, 7), "x"), dof_names=names, config_names=names)
    for name, message in (("empty.mcap", "the file is empty"), ("junk.mcap", "not a readable MCAP file"),
                          ("short.npz", "'q' has shape (4, 7), but t holds 5 samples"),
                          ("text.npz", "'q' holds <U1 values, not numbers")):
        _one_line(run_cli("compute", "panda", "--recording", tmp_path / name, "-o", tmp_path / "o.parquet"), message)
        assert not (tmp_path / "o.parquet").exists()


def test_values_out_of_range_are_refused_before_any_work(recording, tmp_path, run_cli):
    from coriolis_cli.along.distributed import MAX_WORKERS_PER_CPU

    too_many = MAX_WORKERS_PER_CPU * (os.cpu_count() or 1) + 1  # 500 is allowed on a machine of 125 CPUs
    for args, message in (
            (("identify", "panda", recording, "--weight", "inf"), "--weight inf"),
            (("identify", "panda", recording, "--cutoff", "inf", "--form", "momentum"), "positive and finite"),
            (("identify", "panda", recording, "--cutoff", "1e-9", "--form", "momentum", "--method", "ols"),
             "forgets its start after 5/λ"),
            (("excite", "panda", "--harmonics", "1000000", "-o", tmp_path / "e.csv"), "at most 50"),
            (("excite", "panda", "--rate", "1e7", "-o", tmp_path / "e.csv"), "at most 10,000,000 samples"),
            (("excite", "panda", "--rate", "inf", "-o", tmp_path / "e.csv"), "positive rate"),
            (("compute", "panda", "--recording", recording, "--workers", too_many, "-o", tmp_path / "parts"),
             f"at most {too_many - 1} local workers")):
        start = time.monotonic()
        _one_line(run_cli(*args), message)
        assert time.monotonic() - start < 60  # bounded, even on a loaded machine
    assert not (tmp_path / "parts").exists() and not (tmp_path / "e.csv").exists()


def test_a_link_loop_under_a_recursive_pattern_gives_each_recording_once(recording, tmp_path):
    from coriolis_cli.along.distributed import expand_inputs

    (tmp_path / "a" / "b").mkdir(parents=True)
    shutil.copy(recording, tmp_path / "a" / "b" / "r.parquet")
    shutil.copy(recording, tmp_path / "a" / "top.parquet")
    os.symlink("..", tmp_path / "a" / "b" / "up")  # back to a: without end for glob's **
    os.symlink("../b", tmp_path / "a" / "b" / "again")
    found = expand_inputs(str(tmp_path / "a" / "**" / "*.parquet"))
    assert [os.path.relpath(p, tmp_path) for p in found] == ["a/b/r.parquet", "a/top.parquet"]


def test_a_failed_run_on_workers_leaves_no_folder(recording, tmp_path, run_cli):
    pytest.importorskip("dask.distributed")
    bad = tmp_path / "recordings"
    bad.mkdir()
    shutil.copy(recording, bad / "a.parquet")
    (bad / "b.csv").write_text("garbage\n")
    out = tmp_path / "parts"
    r = run_cli("compute", "panda", "--recording", bad, "-o", out)
    assert r.code == 2 and "b.csv" in r.err and not out.exists(), r
    r = run_cli("compute", "panda", "--recording", bad, "--scheduler", "tcp://127.0.0.1:9", "-o", out)
    assert r.code == 2 and "no Dask scheduler" in r.err and not out.exists(), r
    r = run_cli("compute", "panda", "--recording", recording, "--workers", "0", "-o", out)
    assert r.code == 2 and not out.exists(), r


def test_ctrl_c_during_a_run_on_two_workers_stops_it_and_leaves_nothing(recording, tmp_path):
    pytest.importorskip("dask.distributed")
    table = pq.read_table(recording).to_pydict()
    reps = 400  # 800 s of samples per recording: the run is still working when Ctrl-C comes
    big = {k: np.tile(np.array(v), reps) for k, v in table.items()}
    big["time"] = np.arange(len(big["time"])) / 200.0
    folder = tmp_path / "many"
    folder.mkdir()
    for k in range(4):
        pq.write_table(pa.table(big), folder / f"r{k}.parquet")
    out = tmp_path / "parts"
    command = [sys.executable, "-m", "coriolis_cli.cli", "compute", "panda", "--recording", str(folder), "--workers", "2",
               "-o", str(out), "--what", "tau"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (out.exists() and os.listdir(out)):  # the workers are writing
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and len([x for x in err.splitlines() if x.strip()]) <= 2, err
    assert not out.exists(), os.listdir(out)


def test_a_csv_whose_joint_columns_start_after_its_first_blocks_is_read(tmp_path, run_cli):
    """Another topic's rows first (8 MB of them, two of the reader's blocks), then the joints':
    the columns were typed from the first block and refused the numbers after it."""
    names = [f"panda_joint{k}" for k in range(1, 8)]
    path = tmp_path / "late.csv"
    with open(path, "w") as f:
        f.write("time,other," + ",".join(f"q/{n}" for n in names) + "\n")
        f.writelines(f"{k * 1e-3:.6f},{k}," + "," * 6 + "\n" for k in range(400_000))
        f.writelines(f"{k * 1e-3:.6f},{k}," + ",".join(f"{0.1 * np.sin(k * 1e-3 + j):.6f}" for j in range(7)) + "\n"
                     for k in range(400_000, 401_000))
    assert path.stat().st_size > 8 * 2**20
    recording = cc.recordings.load_recording(str(path), cc.load_robot("panda"))
    assert len(recording.t) == 1000 and np.allclose(recording.q[0, 0], 0.1 * np.sin(400.0), atol=1e-6)


def test_an_effort_of_zeros_is_no_torque_to_fit(recording, tmp_path, run_cli):
    table = pq.read_table(recording).to_pydict()
    table["tau/panda_joint4"] = [0.0] * len(table["time"])
    zero = tmp_path / "zero.parquet"
    pq.write_table(pa.table(table), zero)
    out = tmp_path / "identified.urdf"
    _one_line(run_cli("identify", "panda", zero, "--method", "ols", "-o", out),
              "the effort of panda_joint4 is 0 at every sample")
    assert not out.exists()


def test_excite_refuses_a_limit_without_its_range(tmp_path, run_cli):
    text = open(os.path.join(os.path.dirname(cc.__file__), "..", "robots", "panda.urdf")).read()
    import re

    found = re.search(r'<joint name="panda_joint3".*?(<limit[^>]*/>)', text, re.S)
    bare = re.sub(r'\s(lower|upper)="[^"]*"', "", found.group(1))
    path = tmp_path / "no_range.urdf"
    path.write_text(text[: found.start(1)] + bare + text[found.end(1) :])
    _one_line(run_cli("excite", path, "-o", tmp_path / "e.csv", "--seconds", "1"),
              "joint 'panda_joint3': its <limit> gives no lower and upper, which URDF reads as 0")


def _wait_forever():
    time.sleep(3600)


def test_ctrl_c_stops_this_runs_workers_at_once_and_no_other_process():
    """The local workers are killed rather than drained on Ctrl-C (the exit took 1.5 s, 1.4 of them
    the workers finishing their parts); a process the caller started itself is left alone."""
    import multiprocessing

    from coriolis_cli.along.distributed import _stop_workers_now

    theirs, ours = (multiprocessing.get_context("spawn").Process(target=_wait_forever) for _ in range(2))
    theirs.start()
    ours.start()
    try:
        _stop_workers_now({ours.pid})
        assert not ours.is_alive() and theirs.is_alive()
    finally:
        theirs.kill()
        theirs.join()
