"""observe's --quiet stretch is checked against the recording it refers to: reversed, negative or
outside the recording, it is one line and exit 2, never a run that silently ignores it."""

import pytest

from .conftest import assert_one_line_error


@pytest.fixture(scope="module")
def run_npz(tmp_path_factory):
    """2 s of the Panda from simulate (no extra needed to read it)."""
    from coriolis_cli.cli import main

    path = tmp_path_factory.mktemp("observe") / "run.npz"
    try:
        main(["simulate", "panda", "--duration", "2", "-o", str(path)])
    except SystemExit as e:
        assert e.code in (0, None)
    assert path.exists()
    return str(path)


@pytest.mark.parametrize("quiet, said", [
    ("5:1", "0 <= START < END"),
    ("1:1", "0 <= START < END"),
    ("-1:0.5", "0 <= START < END"),
    ("nan:1", "0 <= START < END"),
    ("100:101", "holds 0 samples of the recording's 2 s"),
])
def test_a_quiet_stretch_that_cannot_be_the_recordings_is_refused(run_cli, run_npz, quiet, said):
    for threshold in ("auto", "quiet"):
        r = run_cli("observe", "panda", run_npz, "--quiet", quiet, "--threshold", threshold)
        assert_one_line_error(r, said)


def test_the_default_stretch_and_one_within_the_recording_run(run_cli, run_npz):
    assert run_cli("observe", "panda", run_npz).code == 0
    assert run_cli("observe", "panda", run_npz, "--quiet", "0.5:1.5").code == 0
