"""The ways in, as a new user takes them.

- Without an extra, a command that needs it says in one line which extra to install (exit 2, no
  output written); the commands of the light install work. These run in every `make test`, with
  the extra's modules hidden from a fresh interpreter.
- `make test-install` (marked `install`): a wheel built here, installed into a fresh environment
  whose PATH has no compiler, runs `coriolis verify panda` and README's Python example; `make demo`
  from a fresh copy of the checkout installs no test-only dependency and every demo command works.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
import zipfile

import pytest

from .conftest import ROOT, robot_path

# The modules each extra brings: hidden, they stand for a light install without that extra.
EXTRA_MODULES = {
    "xacro": ["xacro"],
    "mujoco": ["mujoco"],
    "recordings": ["mcap", "mcap_ros2", "rosbags", "pyarrow", "dask", "distributed"],
    "identify": ["cvxpy", "clarabel"],
    "codegen": ["casadi"],
    "bench": ["pinocchio"],
}
# what a test environment has and a light install must not
TEST_ONLY = ["pin", "mujoco", "idyntree", "casadi", "cvxpy", "dask", "clarabel", "pyarrow", "mcap", "rosbags", "xacro",
             "pytest", "hypothesis"]

XACRO = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="arm">
  <xacro:property name="m" value="1.0"/>
  <link name="base"/>
  <link name="l1"><inertial><mass value="${m}"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>
"""


def run_without(extra: str, args: list[str], cwd) -> subprocess.CompletedProcess:
    """coriolis ARGS in a fresh interpreter where EXTRA's modules cannot be imported."""
    hide = "".join(f"sys.modules[{m!r}] = None\n" for m in EXTRA_MODULES[extra])
    code = f"import sys\n{hide}from coriolis_cli.cli import main\nmain({args!r})\n"
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def assert_names_the_extra(r: subprocess.CompletedProcess, extra: str):
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert f"pip install 'coriolis-cli[{extra}]'" in lines[0], lines[0]


def test_xacro_without_its_extra_names_it(tmp_path):
    (tmp_path / "arm.urdf.xacro").write_text(XACRO)
    assert_names_the_extra(run_without("xacro", ["info", "arm.urdf.xacro"], tmp_path), "xacro")


def test_mjcf_without_mujoco_names_its_extra(tmp_path):
    model = os.path.join(ROOT, "tests", "data", "mjcf", "slider_crank.xml")
    assert_names_the_extra(run_without("mujoco", ["info", model], tmp_path), "mujoco")


def test_a_bag_without_the_recordings_extra_names_it(tmp_path):
    (tmp_path / "run.mcap").write_bytes(b"\x89MCAP0\r\n")
    r = run_without("recordings", ["compute", "panda", "--recording", "run.mcap", "-o", "along.csv"], tmp_path)
    assert_names_the_extra(r, "recordings")
    assert not (tmp_path / "along.csv").exists()


def test_the_consistent_fit_without_its_extra_names_it(tmp_path):
    (tmp_path / "run.csv").write_text("t,q1\n0,0\n")
    assert_names_the_extra(run_without("identify", ["identify", "panda", "run.csv", "-o", "id.urdf"], tmp_path),
                           "identify")
    assert not (tmp_path / "id.urdf").exists()


def test_codegen_without_its_extra_names_it(tmp_path):
    r = run_without("codegen", ["codegen", "panda", "-o", "generated"], tmp_path)
    assert_names_the_extra(r, "codegen")
    assert not (tmp_path / "generated").exists()


def test_verify_and_bench_without_pinocchio_run_and_name_its_extra(tmp_path):
    r = run_without("bench", ["verify", robot_path("planar_2link.urdf"), "--trials", "3"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "pin (Pinocchio) is not installed (pip install 'coriolis-cli[bench]')" in r.stdout
    r = run_without("bench", ["bench", robot_path("planar_2link.urdf"), "--what", "C", "--peers", "--repeat", "3"],
                    tmp_path)
    assert r.returncode == 0, r.stderr
    assert "pip install 'coriolis-cli[bench]'" in r.stderr


def cibuildwheel_config() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["tool"]["cibuildwheel"]


@pytest.mark.parametrize("platform, expected", [
    ("linux", {f"cp3{v}-manylinux_{a}" for v in range(10, 15) for a in ("x86_64", "aarch64")}),
    ("macos", {f"cp3{v}-macosx_{a}" for v in range(10, 15) for a in ("x86_64", "arm64")}),
    ("windows", {f"cp3{v}-win_amd64" for v in range(10, 15)}),
])
def test_cibuildwheel_builds_every_platform_the_readme_names(platform, expected):
    """The configuration a CI service runs unchanged: which wheels it builds (asking cibuildwheel,
    which validates the configuration without building)."""
    if shutil.which("cibuildwheel", path=os.path.dirname(sys.executable)) is None:
        pytest.skip("cibuildwheel is not installed")
    r = subprocess.run([os.path.join(os.path.dirname(sys.executable), "cibuildwheel"), "--print-build-identifiers",
                        "--platform", platform, ROOT], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert set(r.stdout.split()) == expected
    config = cibuildwheel_config()
    for rel in config["test-sources"]:
        assert os.path.exists(os.path.join(ROOT, rel)), rel


def test_the_wheels_workflow_builds_on_each_platform_with_that_configuration():
    """What cannot run here (macOS, Windows, aarch64 Linux) runs unchanged on a CI service."""
    import yaml

    with open(os.path.join(ROOT, ".github", "workflows", "wheels.yml"), encoding="utf-8") as f:
        workflow = yaml.safe_load(f)
    jobs = workflow["jobs"]
    systems = jobs["wheels"]["strategy"]["matrix"]["os"]
    assert {s.split("-")[0] for s in systems} == {"ubuntu", "macos", "windows"}, systems
    assert any("arm" in s for s in systems if s.startswith("ubuntu")), "aarch64 Linux is built natively"
    runs = [step.get("run", "") for step in jobs["wheels"]["steps"]]
    assert any("cibuildwheel --output-dir" in r for r in runs), runs
    assert any("abi3audit --strict" in step.get("run", "") for step in jobs["abi3"]["steps"])


# ---------------------------------------------------------------------------------------------
# make test-install


def _interpreters() -> list[str]:
    """This interpreter, and a Python >= 3.12 when the Makefile found one (its wheel is the
    stable-ABI one, which serves every later Python)."""
    found = [sys.executable]
    extra = os.environ.get("ABI3_PYTHON", "").strip()
    if extra:
        found.append(extra)
    return found


def _no_compiler_path(venv: str) -> str:
    """A PATH with the environment's own scripts and nothing else: no cc, c++, g++, clang, make."""
    bindir = os.path.join(venv, "Scripts" if os.name == "nt" else "bin")
    for tool in ("cc", "c++", "gcc", "g++", "clang", "clang++", "make", "cmake"):
        assert shutil.which(tool, path=bindir) is None, tool
    return bindir


@pytest.mark.install
@pytest.mark.parametrize("python", _interpreters(), ids=["this-python", "stable-abi-python"][:len(_interpreters())])
def test_the_wheel_installs_and_runs_without_a_compiler(tmp_path, python):
    dist = tmp_path / "dist"
    build = subprocess.run(["make", "-C", ROOT, "wheel", f"PYTHON={python}", f"DIST={dist}"], capture_output=True,
                           text=True, timeout=900)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    wheels = glob.glob(str(dist / "*.whl"))
    assert len(wheels) == 1, wheels
    wheel = wheels[0]
    name = os.path.basename(wheel)
    if sys.platform.startswith("linux"):
        assert "manylinux" in name, name
    version = subprocess.run([python, "-c", "import sys; print(sys.version_info >= (3, 12))"], capture_output=True,
                             text=True).stdout.strip()
    assert ("-abi3-" in name) == (version == "True"), name
    # the package, the robots and the core's headers; no sources of the build (the one C++ source is
    # Pinocchio's peer, which `bench --compiled-peers` compiles on the user's machine)
    with zipfile.ZipFile(wheel) as z:
        files = z.namelist()
    assert any(f.startswith("coriolis_cli/engine/compiled") for f in files), files
    assert any(f.startswith("coriolis_cli/robots/") for f in files)
    assert "coriolis_cli/peers/pinocchio_cpp/peer.cpp" in files
    assert not any(f.endswith((".cpp", ".o")) and f != "coriolis_cli/peers/pinocchio_cpp/peer.cpp" or "__pycache__" in f
                   for f in files)

    # README's route, line by line, in a home of its own whose PATH has python3 and no compiler
    home = tmp_path / "home"
    tools = home / "tools"
    os.makedirs(tools)
    os.symlink(python, tools / "python3")
    assert not any(shutil.which(t, path=str(tools)) for t in ("cc", "c++", "gcc", "g++", "clang", "make", "cmake"))
    shutil.copytree(dist, home / "dist")
    env = {"PATH": str(tools), "HOME": str(home), "CC": "no-compiler", "CXX": "no-compiler",
           "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR", os.path.expanduser("~/.cache/pip"))}
    for key in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_CERT", "SSL_CERT_FILE", "PIP_CONFIG_FILE",
                "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "SYSTEMROOT", "TMPDIR"):
        if key in os.environ:
            env[key] = os.environ[key]
    route = readme_wheel_route()
    started = time.monotonic()
    r = subprocess.run([shutil.which("bash"), "-eu", "-c", route], cwd=home, env=env, capture_output=True, text=True,
                       timeout=1200)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "checks passed" in r.stdout, r.stdout
    print(f"{name}: {os.path.getsize(wheel) / 1e6:.2f} MB; README's route (venv, install, verify) "
          f"{time.monotonic() - started:.1f} s")
    venv = str(home / "coriolis-env")
    bindir = _no_compiler_path(venv)
    env["PATH"] = bindir
    vpy = os.path.join(bindir, "python")
    listed = subprocess.run([vpy, "-m", "pip", "list", "--format", "freeze"], env=env, capture_output=True, text=True)
    names = {line.split("==")[0].lower() for line in listed.stdout.splitlines()}
    assert not names & set(TEST_ONLY), sorted(names & set(TEST_ONLY))

    # cibuildwheel's test step as a CI service runs it: its sources copied apart, its command run there
    config = cibuildwheel_config()
    testdir = tmp_path / "wheel-test"
    for rel in config["test-sources"]:
        os.makedirs(testdir / os.path.dirname(rel), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, rel), testdir / os.path.basename(rel))
    words = shlex.split(config["test-command"])
    assert words[0] == "python", words
    smoke = subprocess.run([vpy, *words[1:]], cwd=testdir, env=env, capture_output=True, text=True, timeout=600)
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    assert "README example(s) ran" in smoke.stdout, smoke.stdout
    # an extra this install lacks is named, in one line
    gen = subprocess.run([os.path.join(bindir, "coriolis"), "codegen", "panda", "-o", "generated"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300)
    assert gen.returncode == 2 and "pip install 'coriolis-cli[codegen]'" in gen.stderr, gen.stderr


def readme_wheel_route() -> str:
    """The commands README gives for the wheel, as written; the docs' getting-started page gives
    the same."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    block = re.search(r"\*\*From a wheel\.\*\*.*?```[^\n]*\n(.*?)```", readme, flags=re.S).group(1)
    with open(os.path.join(ROOT, "docs", "getting-started.md"), encoding="utf-8") as f:
        assert block in f.read(), "getting started shows README's wheel route"
    return block


def _fresh_copy(target: str) -> None:
    """The checkout's files as a fresh clone of them would have them (tracked and new files, what
    .gitignore leaves out left out), so that uncommitted work is what is tested."""
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = os.path.join(ROOT, rel)
        if not os.path.exists(src):  # deleted in the work tree
            continue
        dst = os.path.join(target, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.islink(src):  # robots/ is a link to the bundled robots, as git keeps it
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst)


@pytest.mark.install
def test_make_demo_from_a_fresh_checkout_installs_only_what_the_demo_uses(tmp_path):
    checkout = str(tmp_path / "coriolis")
    _fresh_copy(checkout)
    started = time.monotonic()
    demo = subprocess.run(["make", "demo", f"PYTHON={sys.executable}"], cwd=checkout, capture_output=True, text=True,
                          timeout=1200)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    print(f"make demo from a fresh copy: {time.monotonic() - started:.1f} s")
    for said in ("panda", "checks passed"):
        assert said in demo.stdout, demo.stdout[-3000:]
    bindir = os.path.join(checkout, ".venv", "bin")
    listed = subprocess.run([os.path.join(bindir, "python"), "-m", "pip", "list", "--format", "freeze"],
                            capture_output=True, text=True, check=True)
    names = {line.split("==")[0].lower() for line in listed.stdout.splitlines()}
    assert not names & set(TEST_ONLY), sorted(names & set(TEST_ONLY))
    # README: after make demo the command is .venv/bin/coriolis
    version = subprocess.run([os.path.join(bindir, "coriolis"), "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and "coriolis, version" in version.stdout, version
    snippet = textwrap.dedent("""
        import coriolis_cli as cc
        robot = cc.load_robot("panda")
        print(cc.mass_matrix(robot, robot.neutral_configuration()).shape)
    """)
    r = subprocess.run([os.path.join(bindir, "python"), "-c", snippet], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0 and "(7, 7)" in r.stdout, r
