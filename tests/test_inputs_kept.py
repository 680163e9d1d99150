"""No output of a run replaces a file the run reads, whichever option names it and whatever links
lie between them: the state file, the robot file codegen reads, a recording."""

import os

from .conftest import assert_one_line_error, robot_path

STATE = "q: {panda_joint1: 0.1}\nqd: {panda_joint1: 0.2}\n"


def test_compute_never_writes_over_its_state_file(run_cli, tmp_path):
    state = tmp_path / "state.yaml"
    state.write_text(STATE)
    # --format: a .yaml name for a table is refused by its extension before its being an input
    r = run_cli("compute", "panda", "--state", state, "--what", "M", "--format", "json", "-o", state, "--force")
    assert_one_line_error(r, "is an input of this run")
    assert state.read_text() == STATE
    link = tmp_path / "link.yaml"  # through a link
    os.symlink(state, link)
    r = run_cli("compute", "panda", "--state", state, "--what", "M", "--format", "json", "-o", link, "--force")
    assert_one_line_error(r, "is an input of this run")
    assert state.read_text() == STATE
    assert run_cli("compute", "panda", "--state", state, "--what", "M", "-o", tmp_path / "M.txt").code == 0


def test_codegen_never_replaces_the_robot_file_it_reads(run_cli, tmp_path):
    robot = tmp_path / "pend.c"  # a URDF, whatever its name
    robot.write_text(open(robot_path("planar_2link.urdf")).read())
    before = robot.read_text()
    r = run_cli("codegen", robot, "-o", tmp_path, "--prefix", "pend", "--force")
    assert_one_line_error(r, "is an input of this run")
    assert robot.read_text() == before
    assert not (tmp_path / "pend.h").exists()


def test_a_run_that_read_a_file_leaves_library_writes_after_it_alone(run_cli, tmp_path):
    from coriolis_cli.report.output import READ, write_atomic

    state = tmp_path / "state.yaml"
    state.write_text(STATE)
    run_cli("compute", "panda", "--state", state, "--what", "M")
    assert not READ
    write_atomic(str(state), "q: {}\n", force=True)  # the run is over: its inputs bind nothing


def test_ctrl_c_after_one_output_removes_what_the_run_wrote(run_cli, tmp_path, monkeypatch):
    """click turns Ctrl-C into Abort: the run's files written before it are removed, as for any
    failure, and it says 'interrupted' (it said 'aborted' and left the picture)."""
    import coriolis_cli.report.formats as formats

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(formats, "to_json", interrupted)  # after the picture is written
    plot, out = tmp_path / "structure.png", tmp_path / "out.json"
    r = run_cli("compute", "panda", "--random", "--what", "M", "--plot", plot, "-o", out)
    assert r.code == 130, r
    lines = [line for line in r.err.splitlines() if line.strip()]
    assert lines[-1] == "interrupted" and "Traceback" not in r.err, r.err
    assert not plot.exists() and not out.exists()
