"""The engine as a library: Model/Data workspaces, the two validation paths, no allocation on the
data= path, exact results far from the world origin, and an engine that starts anywhere."""

import os
import re
import shutil
import subprocess
import sys
import threading
import tracemalloc

import numpy as np
import pytest

import coriolis_cli as cc
from .conftest import ROOT, robot_path

PANDA = open(robot_path("panda.urdf")).read()


def _state(robot, seed=0):
    rng = np.random.default_rng(seed)
    return cc.random_configuration(robot, rng), rng.uniform(-3, 3, robot.nv), rng.uniform(-3, 3, robot.nv)


# ---- Model/Data ------------------------------------------------------------------------------
@pytest.mark.parametrize("path, fb", [("panda.urdf", False), ("humanoid.urdf", True)])
def test_data_calls_return_the_workspace_arrays_and_match_fresh_calls(path, fb):
    robot = cc.load_robot(robot_path(path), floating_base=fb)
    data = cc.create_data(robot)
    for seed in range(3):
        q, qd, qdd = _state(robot, seed)
        M, Mdot, C = cc.coriolis_matrix(robot, q, qd, data=data)
        assert M is data.M and Mdot is data.Mdot and C is data.C
        for mine, fresh in zip((M, Mdot, C), cc.coriolis_matrix(robot, q, qd)):
            assert np.array_equal(mine, fresh)
        assert cc.christoffel(robot, q, data=data) is data.Gamma
        assert np.array_equal(data.Gamma, cc.christoffel(robot, q))
        assert cc.mass_matrix(robot, q, data=data) is data.M
        assert np.array_equal(data.M, cc.mass_matrix(robot, q))
        assert cc.inverse_dynamics(robot, q, qd, qdd, data=data) is data.tau
        assert np.array_equal(data.tau, cc.inverse_dynamics(robot, q, qd, qdd))
        assert cc.gravity_vector(robot, q, data=data) is data.g
        assert np.array_equal(data.g, cc.gravity_vector(robot, q))
        # the identity the outputs must satisfy, on the workspace's own arrays
        M, Mdot, C = cc.coriolis_matrix(robot, q, qd, data=data)
        assert np.abs(Mdot - C - C.T).max() <= 1e-12 * np.abs(M).max() * max(1, np.abs(qd).max())


def test_workspace_outputs_are_read_only_so_structural_zeros_stay():
    robot = cc.load_robot("binary:7")
    data = cc.create_data(robot)
    q, qd, _ = _state(robot)
    M, _, C = cc.coriolis_matrix(robot, q, qd, data=data)
    with pytest.raises(ValueError, match="read-only"):
        M[0, 0] = 1.0
    assert np.count_nonzero(M == 0) > 0  # a binary tree has unrelated DoF
    fresh_M, _, _ = cc.coriolis_matrix(robot, q, qd)
    fresh_M[0, 0] = 1.0  # calls without data= hand out the caller's own arrays


def test_data_path_allocates_no_arrays():
    robot = cc.load_robot(robot_path("humanoid.urdf"), floating_base=True)  # M alone is 5.4 kB
    data = cc.create_data(robot)
    q, qd, qdd = _state(robot)

    def calls():
        cc.coriolis_matrix(robot, q, qd, data=data)
        cc.christoffel(robot, q, data=data)
        cc.mass_matrix(robot, q, data=data)
        cc.inverse_dynamics(robot, q, qd, qdd, data=data)
        cc.gravity_vector(robot, q, data=data)
        cc.forward_dynamics(robot, q, qd, qdd, data=data)
        cc.slotine_li(robot, q, qd, qd, qdd, data=data)

    calls()  # compile, allocate Γ once
    tracemalloc.start()
    try:
        calls()
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        for _ in range(200):
            calls()
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 1024, after - before
    assert peak - before < 1024, peak - before  # not even a transient array of nv² doubles


ROUNDS, SWITCH = 200, 1e-5


@pytest.mark.parametrize("path", ["panda.urdf", "fourbar.yaml"])
def test_calls_without_data_from_several_threads_get_their_own_results(path):
    """Most calls without data= copy their results out of a workspace after the kernel returns: a
    thread switch in between once handed one thread another's M (7% of calls on the Panda). Each
    thread now has its own; coriolis_matrix and christoffel share one, used only inside the kernel."""
    robot = cc.load_robot(robot_path(path))
    rng = np.random.default_rng(5)
    states = [(cc.random_configuration(robot, rng), rng.standard_normal(robot.nv)) for _ in range(2)]
    calls = (lambda q, v: cc.mass_matrix(robot, q), lambda q, v: cc.inverse_dynamics(robot, q, v, v),
             lambda q, v: cc.gravity_vector(robot, q), lambda q, v: cc.forward_dynamics(robot, q, v, v),
             lambda q, v: cc.slotine_li(robot, q, v, v, v), lambda q, v: cc.coriolis_matrix(robot, q, v)[2],
             lambda q, v: cc.christoffel(robot, q))
    expected = [[f(q, v).copy() for f in calls] for q, v in states]
    wrong = []

    def work(k):
        q, v = states[k]
        for _ in range(ROUNDS):
            for f, want in zip(calls, expected[k]):
                if not np.array_equal(f(q, v), want):
                    wrong.append(k)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not wrong


@pytest.mark.parametrize("path,kw", [("panda.urdf", {}), ("humanoid.urdf", {"floating_base": True, "base_velocity": "mixed"})])
def test_a_copied_workspace_is_independent_and_keeps_working(path, kw):
    """copy.copy, copy.deepcopy and pickling of a Data give another workspace: same contents,
    outputs that follow its own calls, nothing shared with the original. (Unpickled, the outputs
    had been stale copies: data.M stayed zero while calls returned it.)"""
    import copy
    import pickle

    robot = cc.load_robot(robot_path(path), **kw)
    data = cc.create_data(robot)
    q, qd, _ = _state(robot)
    cc.coriolis_matrix(robot, q, qd)  # calls without data= give the robot workspaces of its own,
    cc.mass_matrix(robot, q)  # which neither pickle nor copy (a thread-local store) and are left out
    M0 = cc.mass_matrix(robot, q, data=data).copy()
    G0 = cc.christoffel(robot, q, data=data).copy()
    unpickled = pickle.loads(pickle.dumps(data))
    assert unpickled.robot is not robot and unpickled.robot.name == robot.name  # an equal robot of its own
    for other in (copy.copy(data), copy.deepcopy(data), unpickled):
        own = other.robot
        assert own is robot or other is unpickled
        assert np.array_equal(other.M, M0) and np.array_equal(other.Gamma, G0)
        q2 = cc.random_configuration(own, np.random.default_rng(9))
        M2 = cc.mass_matrix(own, q2, data=other)
        assert M2 is other.M and np.array_equal(M2, cc.mass_matrix(robot, q2))
        assert np.array_equal(data.M, M0)  # the original is untouched
        M, Mdot, C = cc.coriolis_matrix(own, q2, qd, data=other)
        assert np.abs(Mdot - C - C.T).max() < 1e-12 * np.abs(M).max() * max(1.0, np.abs(qd).max())
    for twin in (pickle.loads(pickle.dumps(robot)), copy.deepcopy(robot)):
        assert np.array_equal(cc.mass_matrix(twin, q), M0)


def test_data_rejects_batches_and_other_robots():
    a, b = cc.load_robot("serial:3"), cc.load_robot("serial:3")
    data = cc.create_data(a)
    with pytest.raises(cc.StateError, match="created for robot"):
        cc.mass_matrix(b, np.zeros(3), data=data)
    with pytest.raises(cc.StateError, match="one state at a time"):
        cc.mass_matrix(a, np.zeros((2, 3)), data=data)
    with pytest.raises(cc.StateError, match="create_data"):
        cc.mass_matrix(a, np.zeros(3), data="nope")


def test_gamma_workspace_respects_the_memory_guard():
    robot = cc.load_robot("serial:400")
    data = cc.create_data(robot)
    with pytest.raises(cc.SizeError, match="MiB"):
        cc.christoffel(robot, np.zeros(400), data=data)
    assert data.Gamma is None


# ---- fast and slow validation paths ------------------------------------------------------------
def _error(fn):
    with pytest.raises(cc.StateError) as e:
        fn()
    return str(e.value)


@pytest.mark.parametrize("use_data", [False, True])
def test_fast_and_slow_paths_give_the_same_messages(use_data):
    robot = cc.load_robot("serial:3", floating_base=True)
    data = cc.create_data(robot) if use_data else None
    q, qd, qdd = _state(robot)
    names = robot.config_names
    for k in (0, 4, 9):  # position, quaternion, joint angle
        bad = q.copy()
        bad[k] = np.nan
        fast = _error(lambda: cc.mass_matrix(robot, bad, data=data))
        slow = _error(lambda: cc.mass_matrix(robot, bad.tolist(), data=data))
        assert fast == slow == f"q[{names[k]}] is not finite (nan)"
    bad = qd.copy()
    bad[7] = -np.inf
    for fn in (cc.coriolis_matrix, lambda r, q_, v, data=None: cc.inverse_dynamics(r, q_, v, qdd, data=data)):
        fast = _error(lambda: fn(robot, q, bad, data=data))
        slow = _error(lambda: fn(robot, q, list(bad), data=data))
        assert fast == slow == f"qd[{robot.dof_names[7]}] is not finite (-inf)"
    bad = qdd.copy()
    bad[2] = np.nan
    assert _error(lambda: cc.inverse_dynamics(robot, q, qd, bad, data=data)) == \
        _error(lambda: cc.inverse_dynamics(robot, q, qd, bad.astype(np.float32), data=data)) == \
        f"qdd[{robot.dof_names[2]}] is not finite (nan)"
    zero = q.copy()
    zero[3:7] = 0
    assert _error(lambda: cc.christoffel(robot, zero, data=data)) == \
        _error(lambda: cc.christoffel(robot, list(zero), data=data)) == "the quaternion of joint 'base' is zero"
    for arg in (q[:-1], list(q[:-1])):
        assert "q has 9 values per state, the robot needs 10" in _error(lambda: cc.mass_matrix(robot, arg, data=data))


@pytest.mark.parametrize("use_data", [False, True])
def test_quaternions_are_normalized_in_the_kernel_with_the_same_warning(use_data):
    robot = cc.load_robot("binary:4", floating_base=True)
    data = cc.create_data(robot) if use_data else None
    q, qd, _ = _state(robot)
    ref = [a.copy() for a in cc.coriolis_matrix(robot, q, qd)]
    scaled = q.copy()
    scaled[3:7] *= 2.0
    for arg in (scaled, scaled.tolist()):
        with pytest.warns(cc.QuaternionWarning, match=r"joint 'base' has norm 2; normalized"):
            out = cc.coriolis_matrix(robot, arg, qd, data=data)
        for a, b in zip(out, ref):
            assert np.allclose(a, b, rtol=0, atol=1e-13 * np.abs(ref[0]).max())
    assert scaled[6] == 2.0 * q[6]  # the caller's array is not modified


def test_non_contiguous_and_other_dtypes_take_the_slow_path():
    robot = cc.load_robot(robot_path("panda.urdf"))
    q, qd, _ = _state(robot)
    data = cc.create_data(robot)
    ref = [a.copy() for a in cc.coriolis_matrix(robot, q, qd, data=data)]
    wide = np.zeros((7, 2))
    wide[:, 0] = q
    for arg in (wide[:, 0], q.astype(">f8"), tuple(q)):
        for a, b in zip(cc.coriolis_matrix(robot, arg, qd, data=data), ref):
            assert np.array_equal(a, b)
    q32 = q.astype(np.float32)
    assert np.array_equal(cc.mass_matrix(robot, q32, data=data), cc.mass_matrix(robot, q32.astype(np.float64)))
    readonly = q.copy()
    readonly.setflags(write=False)
    fast = cc.mass_matrix(robot, q, data=data).copy()
    assert np.array_equal(cc.mass_matrix(robot, readonly, data=data), fast)
    assert np.array_equal(cc.mass_matrix(robot, wide[:, 0], data=data), fast)
    # M by the composite-rigid-body algorithm in body coordinates, and by Algorithm 1 in the world frame
    assert np.abs(fast - ref[0]).max() <= 1e-15 * np.abs(ref[0]).max()


# ---- exact far from the world origin -----------------------------------------------------------
def _mounted(offset, rpy="0.3 -0.2 0.1"):
    """The Panda on a fixed mount whose origin is ``offset`` metres from the world origin."""
    mount = (f'<link name="world"/><joint name="mount" type="fixed"><parent link="world"/><child link="panda_link0"/>'
             f'<origin xyz="{offset} {-offset / 2} {offset / 3}" rpy="{rpy}"/></joint>')
    return PANDA.replace('<robot name="panda">', '<robot name="panda">' + mount)


@pytest.mark.parametrize("offset", [1e3, 1e6, 1e9])
def test_a_robot_mounted_far_away_gives_the_results_at_the_origin(tmp_path, offset):
    near, far = tmp_path / "near.urdf", tmp_path / "far.urdf"
    near.write_text(_mounted(0.0))
    far.write_text(_mounted(offset))
    a, b = cc.load_robot(str(near)), cc.load_robot(str(far))
    for seed in range(5):
        q, qd, qdd = _state(a, seed)
        for x, y in zip(cc.coriolis_matrix(a, q, qd), cc.coriolis_matrix(b, q, qd)):
            assert np.abs(x - y).max() <= 1e-14 * np.abs(x).max() + 1e-300
        G = cc.christoffel(a, q)
        assert np.abs(G - cc.christoffel(b, q)).max() <= 1e-14 * np.abs(G).max()
        tau = cc.inverse_dynamics(a, q, qd, qdd)
        assert np.abs(tau - cc.inverse_dynamics(b, q, qd, qdd)).max() <= 1e-14 * np.abs(tau).max()
        assert np.linalg.eigvalsh(cc.mass_matrix(b, q)).min() > 0


def test_verify_passes_on_a_robot_mounted_a_kilometre_away(run_cli, tmp_path):
    far = tmp_path / "far.urdf"
    far.write_text(_mounted(1e3))
    r = run_cli("verify", far, "--trials", "10", "--ref-trials", "3")
    assert r.code == 0, r.out
    assert "FAIL" not in r.out


# ---- structure: the compiled core is reached through the engine's calling layer -------------------
# (bench's timing loop, and the recursions over recordings: the observers', identification's and the
# derivative fit of recordings.align, excepted)
KERNEL_MODULES = ("compiled", "calls", "algorithms", "api")
CORE_USERS = ("suite.py", "observers.py", "identification.py", "align.py")


def test_nothing_outside_the_engine_imports_the_core_or_its_calling_layer():
    package = os.path.join(ROOT, "coriolis_cli")
    pattern = re.compile(r"^\s*(from|import)\s+(numba|\S*engine\.(%s))\b" % "|".join(KERNEL_MODULES), re.M)
    offenders = []
    for folder, _, files in os.walk(package):
        if os.path.basename(folder) == "engine" or "__pycache__" in folder:
            continue
        for name in files:
            if name.endswith(".py"):
                text = open(os.path.join(folder, name)).read()
                offenders += [f"{name}: {m.group(0).strip()}" for m in pattern.finditer(text)
                              if not (name in CORE_USERS and m.group(0).strip().endswith("engine.compiled"))]
    assert offenders == []


# ---- startup ------------------------------------------------------------------------------------
def _python(code, env=None, cwd=ROOT):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def test_help_info_and_usage_errors_do_not_import_the_engine():
    code = """
import sys
from coriolis_cli.cli import main
for argv in (['--help'], ['info', 'robots/panda.urdf'], ['info', 'robots/knee_leg.yaml'], ['compute', '--bogus']):
    try:
        main(argv)
    except SystemExit:
        pass
loaded = [m for m in ('coriolis_cli.engine', 'coriolis_cli.engine.compiled') if m in sys.modules]
print('LOADED', loaded, file=sys.stderr)
"""
    r = _python(code)
    assert "LOADED []" in r.stderr, r.stderr


def test_a_first_call_with_strided_vectors_keeps_the_control_calls_bits():
    """Strided views take the checked path, which converts them and calls the same kernel as the
    control loop's call: the same q̈ to the last bit (once, in an earlier engine, the views' q̈ came
    from the LᵀDL route, 1e-14 off). A fresh process, so that this call is the first."""
    code = """
import numpy as np
import coriolis_cli as cc
robot = cc.load_robot('robots/panda.urdf')
data = cc.create_data(robot)
rng = np.random.default_rng(0)
q = cc.random_configuration(robot, rng)
qd, tau = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
strided = lambda x: np.repeat(x, 2)[::2]
first = cc.forward_dynamics(robot, strided(q), strided(qd), strided(tau), data=data).copy()
contiguous = cc.forward_dynamics(robot, q, qd, tau, data=data).copy()
print('SAME', np.array_equal(first, contiguous))
"""
    r = _python(code)
    assert "SAME True" in r.stdout, (r.stdout, r.stderr)


def _copy_package(tmp_path):
    """The package as an installer lays it out in a directory of its own: its sources and the
    compiled engine, which an editable install keeps apart."""
    from coriolis_cli.engine import compiled

    dst = tmp_path / "site"
    shutil.copytree(os.path.join(ROOT, "coriolis_cli"), dst / "coriolis_cli",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(compiled.__file__, dst / "coriolis_cli" / "engine")
    return dst


def _python_from(site, code, env, cwd):
    """_python with the package imported from ``site`` alone: -S skips the .pth files, and so the
    editable install's import hook that would send ``coriolis_cli`` back to the source tree; the
    environment's packages are put on the path after ``site``."""
    import site as site_module

    path = os.pathsep.join([str(site)] + site_module.getsitepackages())
    return subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                          env=dict(env, PYTHONPATH=path), cwd=cwd, timeout=300)


CHECK_M = """
import numpy as np, coriolis_cli as cc
r = cc.load_robot('serial:3')
print('M00', repr(float(cc.mass_matrix(r, np.array([0.1, 0.2, 0.3]))[0, 0])))
"""


def test_a_read_only_install_runs_and_writes_nothing(tmp_path):
    """The package as an installer lays it out, made read-only: the compiled core loads from there
    and nothing is compiled or cached at first use (no file appears anywhere under it)."""
    site = _copy_package(tmp_path)
    before = sorted(str(p) for p in site.rglob("*"))
    for path in site.rglob("*"):
        path.chmod(path.stat().st_mode & ~0o222)
    # (root, as CI runs, ignores the mode bits: Python's own bytecode is kept out of the count)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONDONTWRITEBYTECODE="1")
    try:
        r = _python_from(site, CHECK_M, env, cwd=tmp_path)
    finally:
        for path in site.rglob("*"):
            path.chmod(path.stat().st_mode | 0o200)
    ref = float(cc.mass_matrix(cc.load_robot("serial:3"), np.array([0.1, 0.2, 0.3]))[0, 0])
    assert r.returncode == 0 and f"M00 {ref!r}" in r.stdout, r.stderr
    assert r.stderr.strip() == ""
    assert sorted(str(p) for p in site.rglob("*")) == before



def test_small_gamma_asks_the_system_nothing(monkeypatch):
    """The memory guard looks at /proc/meminfo only for allocations above 64 MiB: a plain
    christoffel call on the Panda spent 70 % of its 36 µs there (now 3.6 µs against 2.8 with data=)."""
    from coriolis_cli.engine import data as engine_data

    def asked():
        raise AssertionError("available_memory() on the hot path")

    monkeypatch.setattr(engine_data, "available_memory", asked)
    r = cc.load_robot(robot_path("panda.urdf"))
    q = r.neutral_configuration()
    assert cc.christoffel(r, q).shape == (7, 7, 7)
    assert cc.christoffel(r, np.stack([q, q])).shape == (2, 7, 7, 7)
    with pytest.raises(AssertionError, match="hot path"):
        engine_data.check_memory(engine_data.MEMORY_CHECK_BYTES + 1, "a large Γ")


def test_what_needs_the_engine_is_a_function_and_the_robot_says_which():
    """The model is plain data: workspaces, moves in other coordinates and MuJoCo's states are
    functions of the package, and a robot asked for one as a method names the function."""
    gripper = cc.load_robot(robot_path("gripper.urdf"), mimic="enforce")
    with pytest.raises(AttributeError, match=r"coriolis_cli\.random_configuration\(robot, rng\)"):
        gripper.random_configuration(0)
    with pytest.raises(AttributeError, match=r"coriolis_cli\.create_data\(robot\)"):
        cc.load_robot(robot_path("panda.urdf")).create_data()
    q = cc.random_configuration(gripper, 0)
    assert q.shape == (gripper.nq,) and np.array_equal(cc.integrate(gripper, q, np.zeros(gripper.nv)), q)
    assert isinstance(cc.create_data(gripper), cc.engine.workspaces.ReducedData)
