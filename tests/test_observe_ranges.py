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


def test_the_baseline_takes_a_new_rest_level_and_refuses_what_it_cannot_read():
    """A residual that steps to a new level and stays there (static friction holding the arm where a
    push left it) is one short event, then the baseline; the compiled loop refuses bad indices in
    one typed error rather than read outside its arrays."""
    import numpy as np

    from coriolis_cli.engine.compiled import drift_baseline
    from coriolis_cli.estimation import observers

    t = np.arange(3000) * 1e-3
    R = np.zeros((3000, 2))
    R[1000:, 0] = 10.0
    limit = np.ones_like(R)
    beta = observers._baseline(t, R, limit)
    assert np.all(beta[:1000] == 0.0) and abs(beta[2000, 0] - 10.0) < 0.5 and np.all(beta[:, 1] == 0.0)
    over = np.flatnonzero(np.abs(R - beta).max(axis=1) > 1.0)
    assert t[over[0]] == 1.0 and t[over[-1]] < 1.6
    back = np.full(3000, -1, dtype=np.int64)
    back[5] = 7  # after its own sample
    with pytest.raises(ValueError, match="back"):
        drift_baseline(t, R, limit, back, 0.25, 2.0, 1.0, 0.15, 1.0, 0.05, 0.05, np.empty_like(R), np.empty_like(R))
    with pytest.raises(ValueError, match="back"):
        drift_baseline(t, R, limit, back[:10], 0.25, 2.0, 1.0, 0.15, 1.0, 0.05, 0.05, np.empty_like(R), np.empty_like(R))
