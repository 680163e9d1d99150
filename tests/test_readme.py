"""README's examples are what the tool really prints and loads."""

import os
import re

import numpy as np
import pytest

import coriolis_cli as cc

from .conftest import ROOT, robot_path

def _pages() -> str:
    """README and the documentation site's pages, as one text: the examples and the numbers they
    state are the commands' own, wherever they are written (ARCHITECTURE.md's code illustrates the
    code base; it is not an example to run). The tutorials (docs/tutorials/) are not here: each runs
    as one session, its blocks sharing a namespace and a working folder (tests/test_tutorials.py)."""
    paths = [os.path.join(ROOT, "README.md")]
    tutorials = os.path.join(ROOT, "docs", "tutorials")
    for folder, _, files in sorted(os.walk(os.path.join(ROOT, "docs"))):
        if folder == tutorials or folder.startswith(tutorials + os.sep):
            continue
        paths += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".md") and f != "ARCHITECTURE.md"]
    return "\n\n".join(open(p, encoding="utf-8").read() for p in paths)


README = _pages()


def test_compute_example_matches_real_output(run_cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    cmd = "coriolis compute robots/planar_2link.urdf --q 0.3,0.5 --qd 1,2 --what M,C,Gamma --top 4"
    block = README.split(f"$ {cmd}\n", 1)[1].split("```", 1)[0]
    args = cmd.split()[1:]
    args[1] = robot_path("planar_2link.urdf")
    r = run_cli(*args)
    assert r.code == 0
    strip = lambda text: "\n".join(line.rstrip() for line in text.strip().splitlines())  # noqa: E731
    assert strip(r.out) == strip(block)


def test_yaml_example_is_the_bundled_two_link_arm(tmp_path, rng):
    yaml_text = re.search(r"```yaml\n(.*?)```", README, re.S).group(1)
    p = tmp_path / "arm.yaml"
    p.write_text(yaml_text)
    a, b = cc.load_robot(str(p)), cc.load_robot(robot_path("planar_2link.urdf"))
    for _ in range(5):
        q, qd = rng.uniform(-3, 3, 2), rng.uniform(-10, 10, 2)
        for x, y in zip(cc.coriolis_matrix(a, q, qd), cc.coriolis_matrix(b, q, qd)):
            assert np.allclose(x, y, rtol=0, atol=1e-14)


def test_python_api_examples_run(monkeypatch, tmp_path):
    """Every ```python block of README and the pages runs as written, in an empty folder: outside
    the checkout, as a user of the wheel runs it."""
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert len(blocks) >= 2
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})


def test_interactive_examples_print_what_the_pages_show(monkeypatch, tmp_path):
    """Every ```pycon block on the site is a doctest: each line's output is the one shown, in an
    empty folder."""
    import doctest

    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```pycon\n(.*?)```", README, re.S)
    assert blocks
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for k, block in enumerate(blocks):
        runner.run(parser.get_doctest(block, {}, f"pycon block {k}", "docs", 0))
    assert runner.failures == 0, runner.summarize()


# ---- every command README shows runs, and its numbers are the commands' own ----------------------------
def _readme_commands() -> list[str]:
    joined = re.sub(r" \\\n\s*", " ", README)  # a command continued on the next line with " \"
    shown = re.findall(r"^\$ (coriolis .*)$", joined, re.M) + [" ".join(c.split()) for c in re.findall(r"`(coriolis [^`]*)`", joined)]
    placeholders = ("ROBOT", "FILE", "[", "...", "TOPOLOGY")
    out = [c for c in dict.fromkeys(shown) if not any(p in c for p in placeholders) or ".../talos_data/" in c]
    return [c for c in out if c.strip() != "coriolis info"]  # the usage error README quotes


def test_readme_shows_commands():
    assert len(_readme_commands()) >= 15


RECORDING_STAND_INS = ("run.mcap", "rosbag2_2026_11_23/", "run.bag", "plotjuggler.csv", "run.parquet", "run.npz")


def _recording(name, tmp_path, run_cli) -> str:
    """README's example recordings of the Panda, written by each format's own library."""
    pytest.importorskip("pyarrow", reason="the recordings extra is not installed")
    pytest.importorskip("rosbags", reason="the recordings extra is not installed")
    pytest.importorskip("mcap_ros2", reason="the recordings extra is not installed")
    from .test_recordings import _trajectory, write_csv, write_mcap, write_parquet, write_rosbag1, write_rosbag2

    path = str(tmp_path / name.rstrip("/"))
    if name == "run.npz":
        assert run_cli("simulate", "panda", "--duration", "0.1", "-o", path).code == 0
        return path
    robot = cc.load_robot("panda")
    write = {"run.mcap": write_mcap, "rosbag2_2026_11_23/": write_rosbag2, "run.bag": write_rosbag1,
             "plotjuggler.csv": write_csv, "run.parquet": write_parquet}[name]
    write(path, robot, *_trajectory(robot, K=20))
    return path


@pytest.mark.parametrize("command", _readme_commands())
def test_every_command_in_readme_runs(command, run_cli, tmp_path):
    import shlex

    args = shlex.split(command)[1:]
    stand_ins = {"robot.urdf.xacro": os.path.join(ROOT, "tests", "data", "xacro", "demo_description", "urdf",
                                                  "robot.urdf.xacro"),
                 "~/ws/src": os.path.join(ROOT, "tests", "data", "xacro")}
    out = []
    for k, a in enumerate(args):
        if k > 0 and args[k - 1] in ("-o", "--plot"):  # an output, even one named as a recording
            a = str(tmp_path / os.path.basename(a))
        elif a in stand_ins:  # README's examples of a user's files: ours
            a = stand_ins[a]
        elif a == "ant.xml":
            gymnasium = pytest.importorskip("gymnasium", reason="gymnasium is not installed")
            pytest.importorskip("mujoco", reason="mujoco is not installed")
            a = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", "ant.xml")
        elif a in RECORDING_STAND_INS:
            a = _recording(a, tmp_path, run_cli)
        elif a.startswith("robots/"):
            a = robot_path(a[len("robots/"):])
        elif a.startswith(".../"):
            from .test_lock import example_robot

            a = example_robot(a[len(".../"):])
        out.append(a)
    if out and out[0] == "bench":
        out += ["--repeat", "3"]
    if out and out[0] == "verify" and "--trials" not in out:
        out += ["--trials", "2", "--ref-trials", "1"]
    r = run_cli(*out)
    assert r.code == 0, r


def _number(pattern: str) -> float:
    m = re.search(pattern, " ".join(README.split()))
    assert m, pattern
    return float(m.group(1))


@pytest.fixture(scope="module")
def panda_runs():
    from coriolis_cli.control.simulation import simulate

    panda = cc.load_robot(robot_path("panda.urdf"))
    return {k: simulate(panda, *k) for k in (("slotine-li", "christoffel"), ("passivity", "christoffel"),
                                              ("passivity", "nonadmissible"))}


def test_readme_simulate_numbers_are_the_commands(panda_runs):
    adaptive = panda_runs[("slotine-li", "christoffel")]
    assert f"{adaptive.tracking_error[0]:.3g}" == f"{_number(r'tracking error from ([0-9.]+) to [0-9.]+ rad in 2 s'):g}"
    assert f"{adaptive.tracking_error[-1]:.2g}" == f"{_number(r'tracking error from [0-9.]+ to ([0-9.]+) rad in 2 s'):g}"
    v_end = _number(r"rad in 2 s [(]V from [0-9.]+ to ([0-9.]+)[)]")
    assert f"{adaptive.V[-1]:.2g}" == f"{v_end:g}"
    exact = panda_runs[("passivity", "christoffel")]
    assert f"{exact.tracking_error[-1]:.2g}" == f"{_number(r'error falls to ([0-9.e-]+) rad'):g}"
    # C + S divides by q̇ᵀq̇: once q̇ passes near zero the run amplifies round-off (its peak of V was
    # 32-, 35- and 64-fold on three BLAS kernels), so the page states what comes before, and bounds
    bad = panda_runs[("passivity", "nonadmissible")]
    early = _number(r"V climbs [0-9.]+-fold in the first ([0-9.]+) s")
    k = int(np.argmin(np.abs(bad.t - early)))
    assert f"{bad.V[k] / bad.V[0]:.3g}" == f"{_number(r'V climbs ([0-9.]+)-fold in the first'):g}"
    assert bad.V.max() / bad.V[0] > _number(r"and more than ([0-9]+)-fold over the run")
    assert bad.tracking_error.max() > _number(r"the error passes ([0-9.]+) rad")
    speed = np.linalg.norm(bad.qd, axis=1)
    window = (bad.t > early / 2) & (bad.t < 2 * early)  # q̇ starts at rest: its first pass near zero after
    assert f"{bad.t[window][np.argmin(speed[window])]:.2g}" == f"{_number(r'as q̇ passes near zero, at t = ([0-9.]+) s'):g}"


def test_readme_verify_suite_size_is_the_suites(run_cli):
    r = run_cli("verify", "--trials", "1", "--ref-trials", "1")
    assert r.code == 0, r
    m = re.search(r"all ([0-9]+) applicable checks passed on ([0-9]+) robot", r.out)
    assert int(m.group(1)) == _number(r"the suite runs ([0-9,]+) checks on")
    assert int(m.group(2)) == _number(r"the suite runs [0-9,]+ checks on ([0-9]+) robots")
