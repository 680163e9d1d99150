"""One validated thread count, from 1 to 4 per CPU, for set_num_threads and CORIOLIS_THREADS:
set_num_threads(2**40) was accepted and every later batch failed; CORIOLIS_THREADS=99999999999
ended compute --recording with exit 3 (a nanobind TypeError)."""

import subprocess
import sys

import pytest

import coriolis_cli as cc
from coriolis_cli.engine import calls

from .conftest import ROOT


@pytest.mark.parametrize("n", [0, -1, 2**40, 1.5, "2", True, None])
def test_set_num_threads_takes_a_count_from_one_to_four_per_cpu(n):
    before = cc.get_num_threads()
    with pytest.raises(cc.StateError, match="set_num_threads: the number of threads must be a whole number from 1 to"):
        cc.set_num_threads(n)
    assert cc.get_num_threads() == before


def test_the_bound_is_taken_and_one_past_it_refused():
    before = cc.get_num_threads()
    try:
        cc.set_num_threads(calls.max_threads())
        assert cc.get_num_threads() == calls.max_threads()
        with pytest.raises(cc.StateError):
            cc.set_num_threads(calls.max_threads() + 1)
    finally:
        cc.set_num_threads(before)


@pytest.mark.parametrize("value", ["99999999999", "0", "two", "-3"])
def test_a_bad_coriolis_threads_is_one_line_and_exit_2(tmp_path, value):
    import os

    from coriolis_cli.cli import main

    run = tmp_path / "run.npz"
    try:
        main(["simulate", "panda", "--duration", "0.2", "-o", str(run)])
    except SystemExit as e:
        assert e.code in (0, None)
    env = dict(os.environ, CORIOLIS_THREADS=value)
    r = subprocess.run([sys.executable, "-m", "coriolis_cli.cli", "compute", "panda", "--recording", str(run), "-o",
                        str(tmp_path / "out.npz")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: CORIOLIS_THREADS: the number of threads"), r.stderr
    assert not (tmp_path / "out.npz").exists()
