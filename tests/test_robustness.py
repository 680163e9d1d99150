"""Robustness: random trees satisfy every identity; mutated inputs never end in a traceback;
outputs are never half-written; numerical edge cases warn instead of failing silently."""

import contextlib
import io
import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import coriolis_cli as cc
from coriolis_cli.cli import main
from coriolis_cli.errors import ModelError
from coriolis_cli.model.description import Inertial, JointSpec, LinkSpec, RobotDescription
from coriolis_cli.model.tree import build_model
from coriolis_cli.peers import finite_differences as fd

from .conftest import assert_one_line_error, robot_path

EPS = np.finfo(float).eps


def run(*args):
    """The real entry point, with stdout/stderr captured (usable inside hypothesis tests)."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 0
    return code, out.getvalue(), err.getvalue()


# ------------------------------------------------------------------ random trees (hypothesis)
finite = st.floats(-1.0, 1.0, allow_nan=False)
vec3 = st.tuples(finite, finite, finite)


@st.composite
def random_trees(draw):
    n = draw(st.integers(1, 7))
    links = [LinkSpec("root", Inertial(draw(st.floats(0.5, 5.0)), (0, 0, 0), (0, 0, 0), (0.1, 0, 0, 0.1, 0, 0.1)))]
    joints = []
    for i in range(n):
        parent = draw(st.integers(0, i))
        m = draw(st.floats(0.1, 5.0))
        a, b, c = draw(st.tuples(*(st.floats(0.05, 0.5),) * 3))
        inertia = (m / 12 * (b * b + c * c), 0, 0, m / 12 * (a * a + c * c), 0, m / 12 * (a * a + b * b))
        links.append(LinkSpec(f"l{i}", Inertial(m, draw(vec3), draw(vec3), inertia)))
        axis = draw(vec3)
        assume(np.linalg.norm(axis) > 0.1)
        joints.append(JointSpec(f"j{i}", draw(st.sampled_from(JOINT_KINDS)),
                                "root" if parent == 0 else f"l{parent - 1}", f"l{i}", draw(vec3), draw(vec3), axis))
    return RobotDescription("random", tuple(links), tuple(joints)), draw(st.booleans()), draw(st.integers(0, 2**31))


# multi-DoF joints (generalized speeds) are drawn less often than 1-DoF ones
JOINT_KINDS = ["revolute", "continuous", "prismatic"] * 3 + ["spherical", "planar", "floating"]


# Found once (on a fresh clone): Γ of a one-link tree is zero up to round-off, so a tolerance on
# Γ's own size vanished; Γ is measured against ‖M‖, as verify does.
ONE_LINK_FAR = (RobotDescription("random", (
    LinkSpec("root", Inertial(1.0, (0, 0, 0), (0, 0, 0), (0.1, 0, 0, 0.1, 0, 0.1))),
    LinkSpec("l0", Inertial(2.0, (1.17, 0.3, -0.2), (0.4, -0.7, 0.2), (0.02, 0, 0, 0.03, 0, 0.04)))),
    (JointSpec("j0", "revolute", "root", "l0", (0.9, -0.6, 0.3), (0.2, 0.1, -0.5), (0.3, -0.8, 0.5)),)), False, 7)


@pytest.mark.filterwarnings("ignore:planar joint")  # random axes on planar joints are ignored by design
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_trees())
@example(ONE_LINK_FAR)
def test_random_trees_satisfy_every_identity(case):
    desc, floating, seed = case
    robot = build_model(desc, floating_base=floating)
    rng = np.random.default_rng(seed)
    q = cc.random_configuration(robot, rng)
    qd = rng.uniform(-10, 10, robot.nv)
    M, Mdot, C = cc.coriolis_matrix(robot, q, qd)
    scale = np.abs(M).max() * max(1.0, np.abs(qd).max()) ** 2 * robot.nv
    tau = cc.inverse_dynamics(robot, q, qd, np.zeros(robot.nv), gravity=False)
    assert np.abs(C @ qd - tau).max() <= 1e3 * EPS * scale  # 1
    assert np.abs(Mdot - C - C.T).max() <= 1e3 * EPS * scale  # 2
    # finite differences against the natural scales: ‖M‖ ‖q̇‖ for Ṁ and ‖M‖ for Γ (Ṁ may vanish)
    assert np.abs(Mdot - fd.mdot_fd(robot, cc.mass_matrix, q, qd)).max() <= 1e-7 * np.abs(M).max() * max(1.0, np.abs(qd).max())
    G = cc.christoffel(robot, q)
    assert np.abs(C - G @ qd).max() <= 1e3 * EPS * scale  # 3
    if robot.velocities_are_coordinates:
        assert np.abs(G - G.transpose(0, 2, 1)).max() <= 1e3 * EPS * np.abs(M).max()
        Gfd = fd.christoffel_fd(robot, cc.mass_matrix, q)
        assert np.abs(G - Gfd).max() <= 1e-7 * np.abs(M).max()
    rel = robot.dof_related  # 4
    assert not M[~rel].any() and not C[~rel].any()
    assert np.array_equal(M, M.T) and np.linalg.eigvalsh(M)[0] > 0  # 5
    assert not np.any(cc.coriolis_matrix(robot, q, np.zeros(robot.nv))[2])  # q̇ = 0 gives C = 0 exactly


# ------------------------------------------------------------- mutated inputs (hypothesis)
PANDA = open(robot_path("panda.urdf"), encoding="utf-8").read()
NUMBERS = list(re.finditer(r'"(-?[0-9][0-9.e+-]*)"', PANDA))


def _check_clean(code, err):
    assert code in (0, 2), (code, err)
    assert "Traceback" not in err and "unexpected" not in err, err
    if code:
        assert len(err.strip().splitlines()) == 1 and err.startswith("error:"), err


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(min_size=0, max_size=64), st.integers(0, len(PANDA)), st.integers(0, 64))
def test_byte_mutations_never_trace_back(tmp_path_factory, blob, at, cut):
    data = PANDA.encode()[:at] + blob + PANDA.encode()[at + cut:]
    p = tmp_path_factory.mktemp("mut") / "r.urdf"
    p.write_bytes(data)
    _check_clean(*[run("info", p)[i] for i in (0, 2)])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, len(NUMBERS) - 1), st.sampled_from(["nan", "inf", "-1", "abc", "", "1e400", "0", "-0.5 2", "1 2 3 4"]),
       st.sampled_from(["info", "compute"]))
def test_xml_value_mutations_never_trace_back(tmp_path_factory, which, value, command):
    m = NUMBERS[which]
    text = PANDA[: m.start(1)] + value + PANDA[m.end(1):]
    p = tmp_path_factory.mktemp("mut") / "r.urdf"
    p.write_text(text)
    args = ["info", p] if command == "info" else ["compute", p, "--random", "--what", "M,C,g"]
    code, _, err = run(*args)
    _check_clean(code, err)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["<inertial>", "<mass", "<axis", "<origin", "<parent", "<child", "<joint", "<link", "<limit"]), st.integers(0, 20),
       st.sampled_from(["drop", "duplicate"]))
def test_xml_element_mutations_never_trace_back(tmp_path_factory, tag, nth, how):
    starts = [m.start() for m in re.finditer(re.escape(tag), PANDA)]
    assume(starts)
    s = starts[nth % len(starts)]
    line_end = PANDA.index("\n", s)
    line = PANDA[s:line_end]
    text = PANDA[:s] + ("" if how == "drop" else line + "\n" + line) + PANDA[line_end:]
    p = tmp_path_factory.mktemp("mut") / "r.urdf"
    p.write_text(text)
    _check_clean(*[run("info", p)[i] for i in (0, 2)])


# --------------------------------------------------------------------------- the error path
def test_unexpected_errors_point_to_debug(run_cli, monkeypatch):
    import coriolis_cli.cli.info as info_command

    def boom(*a, **k):
        raise RuntimeError("simulated failure")

    monkeypatch.setattr(info_command, "load", boom)
    r = run_cli("info", robot_path("panda.urdf"))
    assert r.code == 3 and "unexpected RuntimeError: simulated failure" in r.err and "--debug" in r.err
    assert "Traceback" not in r.err
    with pytest.raises(RuntimeError):
        main(["--debug", "info", robot_path("panda.urdf")])


def test_usage_errors_exit_2(run_cli):
    r = run_cli("compute")
    assert r.code == 2 and "Missing argument" in r.err
    assert run_cli("nonsense").code == 2


def test_no_inertial_anywhere(run_cli, tmp_path):
    p = tmp_path / "bare.urdf"
    p.write_text(PANDA.replace("<inertial>", "<!--").replace("</inertial>", "-->"))
    r = run_cli("info", p)
    assert r.code == 0, r
    warned = [line for line in r.err.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1 and "7 joints move no mass ('panda_joint1', 'panda_joint2', 'panda_joint3' and 4 more" \
        in warned[0], r.err
    assert len(warned[0]) < 300
    assert_one_line_error(run_cli("info", p, "--strict"), "move no mass")


def test_zero_mass_leaf_on_a_joint_warns_but_on_a_fixed_joint_is_merged(tmp_path):
    leaf = PANDA.replace('<link name="panda_link8" />', '<link name="panda_link8"><inertial><mass value="0"/>'
                         '<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>')
    p = tmp_path / "leaf.urdf"
    p.write_text(leaf)
    assert cc.load_robot(str(p)).nv == 7  # fixed joint: merged, nothing to move
    p.write_text(leaf.replace('<joint name="panda_joint8" type="fixed">', '<joint name="panda_joint8" type="revolute">')
                 .replace('<origin xyz="0.0 0.0 0.107"', '<axis xyz="0 0 1"/><origin xyz="0.0 0.0 0.107"'))
    with pytest.warns(cc.ModelWarning, match="joint 'panda_joint8' moves no mass"):
        assert cc.load_robot(str(p)).nv == 8
    with pytest.raises(ModelError, match="joint 'panda_joint8' moves no mass"):
        cc.load_robot(str(p), strict=True)


# ---------------------------------------------------------------------------- output safety
def test_failed_write_leaves_no_file(run_cli, tmp_path, monkeypatch):
    target = tmp_path / "out.json"

    def fail(*a, **k):
        raise OSError(28, "No space left on device")

    warm = run_cli("compute", robot_path("panda.urdf"), "--random")  # the parsed-URDF cache is saved with os.replace
    assert warm.code == 0, warm
    monkeypatch.setattr(os, "replace", fail)
    monkeypatch.setattr(os, "link", fail)  # the exclusive create of a new file (no --force)
    assert_one_line_error(run_cli("compute", robot_path("panda.urdf"), "--random", "-o", target), "No space left")
    assert os.listdir(tmp_path) == []


def test_interrupted_write_leaves_no_file(tmp_path, monkeypatch):
    from coriolis_cli.report.output import write_atomic

    def interrupt(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(str(tmp_path / "x.txt"), "data")
    assert os.listdir(tmp_path) == []


def test_existing_files_are_kept_without_force(run_cli, tmp_path):
    target = tmp_path / "keep.json"
    target.write_text("precious")
    assert_one_line_error(run_cli("compute", robot_path("panda.urdf"), "--random", "-o", target), "already exists", "--force")
    assert target.read_text() == "precious"
    assert run_cli("compute", robot_path("panda.urdf"), "--random", "-o", target, "--force").code == 0
    assert target.read_text().startswith("{")


# ----------------------------------------------------------------------- large and degenerate
def test_thousand_link_urdf(run_cli, tmp_path):
    u = tmp_path / "s1000.urdf"
    assert run_cli("generate", "serial:1000", "-o", u).code == 0
    r = run_cli("info", u, "--format", "json")
    assert r.code == 0 and '"nv": 1000' in r.out
    out = tmp_path / "mc.npz"
    assert run_cli("compute", u, "--random", "--what", "M,C", "-o", out).code == 0
    assert np.load(out)["C"].shape == (1000, 1000)
    assert_one_line_error(run_cli("compute", u, "--random", "--what", "Gamma", "--format", "json"), "MiB", "--allow-large")


def test_gamma_table_streams_largest_entries_above_the_guard(run_cli, monkeypatch):
    monkeypatch.setattr(cc.engine.data, "GAMMA_MAX_BYTES", 8 * 10**3)  # a 30-DoF Γ is now "too large"
    with pytest.raises(cc.SizeError):
        cc.christoffel(cc.load_robot("serial:30"), np.zeros(30))
    r = run_cli("compute", "serial:30", "--random", "--what", "Gamma", "--top", "3")
    assert r.code == 0, r
    robot = cc.load_robot("serial:30")
    q = cc.random_configuration(robot, np.random.default_rng(0))
    G = cc.christoffel(robot, q, force=True)
    assert f"{np.abs(G).max():.6g}" in r.out


def test_nearly_singular_M_warns_with_condition_number(run_cli, tmp_path):
    tiny = PANDA.replace('<mass value="0.735522" />', '<mass value="1e-8" />').replace(
        'ixx="0.012516" ixy="-0.000428" ixz="-0.001196" iyy="0.010027" iyz="-0.000741" izz="0.004815"',
        'ixx="1e-11" ixy="0" ixz="0" iyy="1e-11" iyz="0" izz="1e-11"')
    assert tiny != PANDA
    p = tmp_path / "tiny.urdf"
    p.write_text(tiny)
    r = run_cli("compute", p, "--random")
    assert r.code == 0
    assert "warning: M is nearly singular (condition number" in r.err
