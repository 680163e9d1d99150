"""A batch whose threads the system will not all start runs on fewer, with the same results and
one warning, and never ends the process (std::thread's destructor used to call std::terminate:
SIGABRT)."""

import os
import subprocess
import sys
import textwrap

import pytest

from .conftest import ROOT

STARVED = textwrap.dedent("""
    import os, resource, warnings
    import numpy as np
    import coriolis_cli as cc

    robot = cc.load_robot("panda")
    Q = np.random.default_rng(0).uniform(-1, 1, (2000, 7))
    cc.set_num_threads(1)
    reference = cc.inverse_dynamics_derivatives(robot, Q, Q, Q)
    if os.geteuid() == 0:  # root starts threads past any limit: run as nobody
        os.setgid(65534)
        os.setuid(65534)
    uid, tasks = os.getuid(), 0  # the threads this user runs now, this process's among them
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/status") as f:
                    tasks += any(line.startswith("Uid:") and int(line.split()[1]) == uid for line in f)
        except OSError:
            pass
    resource.setrlimit(resource.RLIMIT_NPROC, (tasks + 2, tasks + 2))  # two more threads, no more
    cc.set_num_threads(cc.engine.calls.max_threads())  # 4 per CPU: at least 4, more than the 2 allowed
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        first = cc.inverse_dynamics_derivatives(robot, Q, Q, Q)
        second = cc.inverse_dynamics_derivatives(robot, Q, Q, Q)
    for out in (first, second):
        assert all(np.array_equal(a, b) for a, b in zip(out, reference))
    print(len(said), said[0].message if said else "")
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_NPROC and /proc are Linux's")
def test_a_batch_the_system_gives_fewer_threads_runs_on_them(tmp_path):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")  # no pools of their own to start
    site = ["-S"] if sys.flags.no_site else []  # as this run imports coriolis (make sanitize's build)
    r = subprocess.run([sys.executable, *site, "-c", STARVED], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr[-2000:])
    count, message = r.stdout.strip().split(" ", 1)
    assert count == "1", r.stdout  # said once, for the first batch
    assert message.startswith("the system started ") and "threads asked for" in message, message
