"""Users' URDFs as CAD exports them: round-off and inconsistent inertias, massless joints, parsing
quirks, planar/floating/spherical joints (against Pinocchio), robots whose C vanishes, and the
bundled robots installed with the package."""

import json
import os
import subprocess
import sys
import warnings
import zipfile

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.model.urdf import parse_urdf
from coriolis_cli.peers import pinocchio as pinocchio_peer

from .conftest import ROOT, assert_one_line_error, robot_path

TWO_LINK = open(robot_path("planar_2link.urdf")).read()
needs_pin = pytest.mark.skipif(not pinocchio_peer.available(), reason="pin (Pinocchio) is not installed")


def _inertia(ixx, iyy, izz, ixy=0.0, ixz=0.0, iyz=0.0):
    return f'<inertia ixx="{ixx!r}" ixy="{ixy!r}" ixz="{ixz!r}" iyy="{iyy!r}" iyz="{iyz!r}" izz="{izz!r}"/>'


def _link(name, mass=None, inertia=None, xyz="0.1 0 0"):
    if mass is None:
        return f'<link name="{name}"/>'
    return (f'<link name="{name}"><inertial><origin xyz="{xyz}"/><mass value="{mass!r}"/>{inertia or _inertia(0.01, 0.01, 0.01)}'
            '</inertial></link>')


def _joint(name, parent, child, kind="revolute", axis="0 0 1", xyz="0.3 0 0", rpy="0 0 0"):
    body = f'<parent link="{parent}"/><child link="{child}"/><origin xyz="{xyz}" rpy="{rpy}"/>'
    if kind != "fixed":
        body += f'<axis xyz="{axis}"/>'
    return f'<joint name="{name}" type="{kind}">{body}</joint>'


def _robot(*parts, name="r"):
    return f'<robot name="{name}">' + "".join(parts) + "</robot>"


def _load(tmp_path, text, name="r.urdf", **kw):
    p = tmp_path / name
    p.write_text(text)
    return cc.load_robot(str(p), **kw)


def _no_warnings(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn()


# ---- the inertia policy --------------------------------------------------------------------------
@pytest.mark.parametrize("inertia", [
    _inertia(0.0, 0.0, 0.0, ixz=1.35525e-20),  # round-off off the diagonal of a point mass
    _inertia(-5.42101e-20, 0.0, 0.0),  # round-off below zero
])
def test_round_off_inertias_are_noise(tmp_path, inertia):
    text = _robot(_link("base"), _link("a", 1.0), _link("tip", 0.2, inertia), _joint("j1", "base", "a"),
                  _joint("j2", "a", "tip", axis="0 1 0"))
    r = _no_warnings(lambda: _load(tmp_path, text, strict=True))
    assert r.inertia_issues == () and r.nv == 2


def test_a_dummy_root_welded_to_the_world_is_not_checked(tmp_path):
    dummy = _link("dummy", 1e-6, _inertia(1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6), xyz="0 0 0")
    text = _robot(dummy, _link("a", 1.0), _joint("j1", "dummy", "a"))
    assert _no_warnings(lambda: _load(tmp_path, text, strict=True)).inertia_issues == ()
    with pytest.warns(cc.ModelWarning) as caught:  # with a floating base it moves
        _load(tmp_path, text, floating_base=True)
    messages = " | ".join(str(w.message) for w in caught)
    # its 1e-6 kg m² about j1's axis keep M invertible: light, not singular
    assert "'dummy' principal moments" in messages and "no inertia of its own" not in messages


def test_a_massless_root_with_rotational_inertia_passes_check_g(tmp_path):
    """A 7-DoF arm whose root link has no mass but a rotational inertia, on a floating base: M is
    positive definite (smallest eigenvalue 1e-3 of the largest), so check g passes and nothing says
    the root has no inertia of its own."""
    root = _link("root", 0.0, _inertia(0.02, 0.03, 0.04), xyz="0 0 0").replace('<mass value="0.0"/>', '<mass value="0"/>')
    parts = [root] + [_link(f"l{k}", 1.0 + 0.2 * k) for k in range(1, 8)]
    parts += [_joint(f"j{k}", "root" if k == 1 else f"l{k - 1}", f"l{k}", axis=("0 0 1", "0 1 0")[k % 2]) for k in range(1, 8)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        robot = _load(tmp_path, _robot(*parts), floating_base=True)
    assert robot.massless_joints == ()
    from coriolis_cli.checks.verify import verify_robot

    record = verify_robot(robot, trials=5, ref_trials=1, use_pinocchio=False)
    g = next(c for c in record.checks if c.key == "g")
    assert g.passed is True and g.max_rel > 1e-6, g


def test_check_g_fails_where_m_is_singular(tmp_path):
    from coriolis_cli.engine import positive_definite

    M = np.diag([10.0, 1e-7, 2.0])  # a light finger beside a torso: definite
    assert positive_definite(M)
    M[0, 2] = M[2, 0] = np.sqrt(20.0) * (1 - 1e-15)  # rank 2 to working precision
    assert not positive_definite(M)
    assert not positive_definite(np.diag([1.0, 0.0]))


CAD = {  # link: principal moments about the COM; the shortfall (c − a − b)/c is 80 %, 100 %, 0.18 %, ...
    "sensor_mount": (0.001, 0.001, 0.01),
    "fingertip": (0.0, 0.0, 1e-6),
    "s018": (1.0, 1.0, 2.0036),
    "s074": (1.0, 1.0, 2.0149),
    "s42": (1.0, 1.0, 2.0877),
    "s20": (1.0, 1.0, 2.5),
}


def _cad_robot():
    links, joints, parent = [_link("base")], [], "base"
    for k, (name, (a, b, c)) in enumerate(CAD.items()):
        links.append(_link(name, 0.5, _inertia(a, b, c)))
        joints.append(_joint(f"j{k}", parent, name, axis=("0 0 1", "0 1 0", "1 0 0")[k % 3]))
        parent = name
    return _robot(*links, *joints, name="cad")


def test_cad_inconsistencies_are_computed_with_one_short_warning(tmp_path, run_cli):
    with pytest.warns(cc.ModelWarning) as caught:
        r = _load(tmp_path, _cad_robot(), "cad.urdf")
    messages = [str(w.message) for w in caught if issubclass(w.category, cc.ModelWarning)]
    assert len(messages) == 1 and messages[0].startswith("6 links with inertias no rigid body has")
    for name in list(CAD)[:3]:  # a few names, the count of the rest and the worst; info lists them all
        assert f"'{name}'" in messages[0]
    assert "and 3 more" in messages[0] and "worst: 'fingertip'" in messages[0] and len(messages[0]) < 400
    shortfall = {i.link: i.shortfall for i in r.inertia_issues}
    for name, (a, b, c) in CAD.items():
        assert shortfall[name] == pytest.approx((c - a - b) / c, rel=1e-9)
    assert shortfall["s018"] == pytest.approx(0.0018, rel=0.01) and shortfall["s20"] == pytest.approx(0.2)
    q = cc.random_configuration(r, 0)
    assert np.allclose(cc.mass_matrix(r, q), cc.mass_matrix(r, q).T)  # computed with as given
    with pytest.raises(cc.ModelError, match="6 links with inertias no rigid body has") as e:
        _load(tmp_path, _cad_robot(), "cad.urdf", strict=True)
    assert all(f"'{name}'" in str(e.value) for name in list(CAD)[:3])
    p = str(tmp_path / "cad.urdf")
    info = run_cli("info", p, "--format", "json")
    assert info.code == 0 and sum(line.startswith("warning:") for line in info.err.splitlines()) == 1
    rec = json.loads(info.out)["physical_consistency"]
    assert not rec["consistent"] and {i["link"] for i in rec["inertia_issues"]} == set(CAD)
    assert "physical consistency" in run_cli("info", p).out
    assert_one_line_error(run_cli("info", p, "--strict"), "6 links with inertias no rigid body has")
    v = run_cli("verify", p, "--trials", "3", "--ref-trials", "1", "--format", "json")
    assert v.code == 0, v.out
    k = next(c for c in json.loads(v.out)["robots"][0]["checks"] if c["key"] == "k")
    assert k["warning"] and k["passed"] is None and k["max_abs"] == pytest.approx(1.0)


def test_a_joint_that_moves_no_mass_warns_and_verify_names_it(tmp_path, run_cli):
    hand = _robot(_link("palm"), _link("finger", 0.1), _link("nail"), _joint("j1", "palm", "finger"),
                  _joint("j2", "finger", "nail", axis="0 1 0"), name="hand")
    with pytest.warns(cc.ModelWarning, match="M is singular: joint 'j2' moves no mass"):
        r = _load(tmp_path, hand, "hand.urdf")
    q, qd = np.array([0.3, 0.2]), np.array([1.0, -2.0])
    M, Mdot, C = cc.coriolis_matrix(r, q, qd)
    assert np.linalg.matrix_rank(M) == 1 and np.allclose(Mdot, C + C.T)
    v = run_cli("verify", tmp_path / "hand.urdf", "--trials", "3", "--ref-trials", "1", "--format", "json")
    g = next(c for c in json.loads(v.out)["robots"][0]["checks"] if c["key"] == "g")
    assert g["passed"] is False and "at q = 0, 1 joint moves no mass" in g["note"]


# ---- parsing what urdfdom parses -----------------------------------------------------------------
@pytest.mark.parametrize("case", ["blank lines", "no name", "capsule", "nul padding", "ghost mimic", "huge text"])
def test_files_pinocchio_loads_are_loaded(tmp_path, case, monkeypatch):
    monkeypatch.setenv("CORIOLIS_NO_CACHE", "1")
    text = TWO_LINK
    p = tmp_path / "arm.urdf"
    if case == "blank lines":
        text = "\n\n  \n" + text
    elif case == "no name":
        text = text.replace('<robot name="planar_2link">', "<robot>")
    elif case == "capsule":
        text = text.replace("</link>", '<collision><geometry><capsule radius="0.1" length="0.3"/></geometry></collision></link>')
    elif case == "ghost mimic":
        text = text.replace('<joint name="joint2" type="continuous">', '<joint name="joint2" type="continuous"><mimic joint="ghost"/>')
    elif case == "huge text":  # over libxml2's 10 MB text-node limit, where a recovering parser stops
        text = text.replace('<link name="link1">', '<link name="link1">' + "z" * (11 * 2**20), 1)
    data = text.encode() + (b"\0" * 16 if case == "nul padding" else b"")
    p.write_bytes(data)
    if case == "ghost mimic":
        with pytest.warns(cc.ModelWarning, match="mimics joint 'ghost', which does not exist; it is loaded as an independent"):
            r = cc.load_robot(str(p))
    else:
        r = _no_warnings(lambda: cc.load_robot(str(p)))
    ref = cc.load_robot(robot_path("planar_2link.urdf"))
    assert r.name == ("arm" if case == "no name" else "planar_2link")
    assert r.joint_names == ref.joint_names
    q, qd = np.array([0.3, 0.5]), np.array([1.0, 2.0])
    assert np.array_equal(cc.coriolis_matrix(r, q, qd)[2], cc.coriolis_matrix(ref, q, qd)[2])


def test_nul_bytes_inside_a_file_are_still_binary(tmp_path):
    p = tmp_path / "bin.urdf"
    p.write_bytes(TWO_LINK.encode().replace(b"<link", b"\0<link", 1))
    with pytest.raises(cc.ModelError, match="not a text file"):
        cc.load_robot(str(p))


# ---- planar, floating and spherical joints against Pinocchio --------------------------------------
def _box(name, mass, xyz, sizes, rpy="0 0 0"):
    a, b, c = sizes
    ixx, iyy, izz = mass * (b * b + c * c) / 12, mass * (a * a + c * c) / 12, mass * (a * a + b * b) / 12
    return (f'<link name="{name}"><inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
            f'{_inertia(ixx, iyy, izz)}</inertial></link>')


MIXED = _robot(
    '<link name="world"/>',
    _box("base", 3.0, "0.05 -0.02 0.1", (0.4, 0.3, 0.2), "0.1 0.2 0.3"),
    _box("slider", 1.5, "0.1 0.05 0", (0.2, 0.1, 0.1)),
    _box("arm", 0.8, "0.2 0 0.01", (0.4, 0.05, 0.05)),
    _box("float2", 0.5, "0 0.1 0", (0.1, 0.2, 0.1)),
    _joint("root", "world", "base", "floating", xyz="1 2 0.5", rpy="0.3 -0.2 0.5"),
    _joint("plane", "base", "slider", "planar", xyz="0.1 0 0.2", rpy="0.2 0.1 0"),
    _joint("elbow", "slider", "arm", axis="0 1 0", rpy="0 0.3 0"),
    _joint("loose", "arm", "float2", "floating", xyz="0.4 0 0", rpy="0 0 0.4"),
    name="mixed",
)

SPHERICAL_YAML = """
name: spherical_chain
links:
  - name: base
  - {name: upper, mass: 2.0, com: [0.0, 0.0, -0.3], com_rpy: [0.1, 0.0, 0.2], inertia: [0.05, 0.001, 0.0, 0.04, 0.002, 0.02]}
  - {name: lower, mass: 1.2, com: [0.1, 0.0, -0.25], inertia: [0.03, 0.0, 0.001, 0.02, 0.0, 0.015]}
  - {name: hand, mass: 0.4, com: [0.0, 0.05, -0.05], inertia: [0.002, 0, 0, 0.003, 0, 0.002]}
joints:
  - {name: shoulder, type: spherical, parent: base, child: upper, xyz: [0, 0, 1.0], rpy: [0.1, 0.2, 0.3]}
  - {name: elbow, type: revolute, parent: upper, child: lower, xyz: [0, 0, -0.6], axis: [0, 1, 0]}
  - {name: wrist, type: spherical, parent: lower, child: hand, xyz: [0.1, 0, -0.5]}
  - {name: slide, type: planar, parent: base, child: sled, xyz: [0.5, 0, 0]}
"""
SLED = "  - {name: sled, mass: 0.7, com: [0.05, 0.0, 0.0], inertia: [0.002, 0, 0, 0.003, 0, 0.004]}\n"


def _multi_dof_robots(tmp_path, floating):
    (tmp_path / "mixed.urdf").write_text(MIXED)
    (tmp_path / "sph.yaml").write_text(SPHERICAL_YAML.replace("joints:", SLED.rstrip("\n") + "\njoints:"))
    robots = [_no_warnings(lambda: cc.load_robot(str(tmp_path / "sph.yaml"), floating_base=floating))]
    if not floating:
        robots.append(_no_warnings(lambda: cc.load_robot(str(tmp_path / "mixed.urdf"))))
    else:  # a free joint above its own floating root: two free joints, M singular but C defined
        with pytest.warns(cc.ModelWarning, match="M is singular"):
            robots.append(cc.load_robot(str(tmp_path / "mixed.urdf"), floating_base=True))
    return robots


@needs_pin
@pytest.mark.parametrize("floating", [False, True])
def test_planar_floating_and_spherical_joints_match_pinocchio(tmp_path, floating):
    for r in _multi_dof_robots(tmp_path, floating):
        peer = pinocchio_peer.PinocchioPeer(r)
        rng = np.random.default_rng(3)
        for _ in range(4):
            q, qd, qdd = cc.random_configuration(r, rng), rng.uniform(-2, 2, r.nv), rng.uniform(-2, 2, r.nv)
            M, Mdot, C = cc.coriolis_matrix(r, q, qd)
            tau = cc.inverse_dynamics(r, q, qd, qdd)
            for ours, theirs in ((M, peer.mass_matrix(q)), (C, peer.coriolis_matrix(q, qd)), (tau, peer.rnea(q, qd, qdd))):
                assert np.abs(ours - theirs).max() <= 1e-12 * max(1.0, np.abs(theirs).max())
            assert np.abs(Mdot - C - C.T).max() <= 1e-13 * np.abs(M).max() * 4


@pytest.mark.parametrize("floating", [False, True])
def test_multi_dof_gamma_follows_the_generalized_speed_definition(tmp_path, floating):
    for r in _multi_dof_robots(tmp_path, floating):
        q = cc.random_configuration(r, 5)
        G = cc.christoffel(r, q)
        by_columns = np.stack([cc.coriolis_matrix(r, q, e)[2] for e in np.eye(r.nv)], axis=2)
        assert np.abs(G - by_columns).max() <= 1e-13 * np.abs(G).max()


def test_verify_checks_generalized_speeds_without_coordinate_checks(tmp_path, run_cli):
    (tmp_path / "mixed.urdf").write_text(MIXED)
    v = run_cli("verify", tmp_path / "mixed.urdf", "--trials", "5", "--ref-trials", "2", "--format", "json")
    assert v.code == 0, v.out
    checks = {c["key"]: c for c in json.loads(v.out)["robots"][0]["checks"]}
    assert checks["e"]["passed"] is None and checks["f1"]["passed"] is None
    assert all(checks[k]["passed"] for k in ("a", "b", "c", "d", "f2", "g"))
    assert checks["j"]["passed"] in (True, None)


def test_multi_dof_configurations_are_valid_and_normalized_with_a_warning(tmp_path):
    (r,) = _multi_dof_robots(tmp_path, False)[:1]
    q = cc.random_configuration(r, 7)
    names = r.config_names
    sh, sl = names.index("shoulder_qx"), names.index("slide_cos")
    assert np.linalg.norm(q[sh : sh + 4]) == pytest.approx(1) and np.hypot(*q[sl : sl + 2]) == pytest.approx(1)
    assert r.dof_names[:3] == ("shoulder_wx", "shoulder_wy", "shoulder_wz")
    bad = q.copy()
    bad[sl : sl + 2] *= 3.0
    with pytest.warns(cc.QuaternionWarning, match=r"\(cos, sin\) pair of joint 'slide' has norm 3; normalized"):
        M = cc.mass_matrix(r, bad)
    assert np.allclose(M, cc.mass_matrix(r, q), atol=1e-14)
    bad[sh : sh + 4] = 0.0
    with pytest.raises(cc.StateError, match="the quaternion of joint 'shoulder' is zero"):
        cc.mass_matrix(r, bad)


def test_planar_axis_other_than_z_is_ignored_with_a_warning(tmp_path):
    text = MIXED.replace('type="planar"><parent link="base"/><child link="slider"/><origin xyz="0.1 0 0.2" rpy="0.2 0.1 0"/>'
                         '<axis xyz="0 0 1"/>', 'type="planar"><parent link="base"/><child link="slider"/>'
                         '<origin xyz="0.1 0 0.2" rpy="0.2 0.1 0"/><axis xyz="1 0 0"/>')
    assert text != MIXED
    with pytest.warns(cc.ModelWarning, match="planar joint 'plane': axis .* is ignored"):
        _load(tmp_path, text)


# ---- checks that mean what they print --------------------------------------------------------------
def _racecar():
    """Wheels spinning about their symmetry axes on rotated mounts: M is constant, so C = 0, Γ = 0
    exactly, while round-off leaves entries near 1e-18."""
    wheel = _inertia(0.02, 0.035, 0.02)
    parts = [_box("chassis", 20.0, "0 0 0", (1.0, 0.5, 0.2))]
    for k, (x, y) in enumerate(((0.4, 0.3), (0.4, -0.3), (-0.4, 0.3), (-0.4, -0.3))):
        parts.append(f'<link name="wheel{k}"><inertial><origin xyz="0 0 0"/><mass value="1.5"/>{wheel}</inertial></link>')
        parts.append(_joint(f"axle{k}", "chassis", f"wheel{k}", "continuous", axis="0 1 0", xyz=f"{x} {y} 0",
                            rpy=f"{0.1 * k} 0.7 {0.3 * k}"))
    return _robot(*parts, name="racecar")


def test_verify_and_skew_pass_on_a_robot_whose_C_vanishes(tmp_path, run_cli):
    p = tmp_path / "racecar.urdf"
    p.write_text(_racecar())
    r = cc.load_robot(str(p))
    q, qd = cc.random_configuration(r, 1), np.full(r.nv, 10.0)
    C = cc.coriolis_matrix(r, q, qd)[2]
    assert np.abs(C).max() < 1e-12  # zero up to round-off
    v = run_cli("verify", p, "--trials", "20", "--ref-trials", "3", "--format", "json")
    assert v.code == 0, v.out
    for c in json.loads(v.out)["robots"][0]["checks"]:
        assert c["max_rel"] is None or (0 <= c["max_rel"] <= 1), c
    s = run_cli("skew", p, "--format", "json")
    assert s.code == 0, s.out
    rows = json.loads(s.out)["rows"]
    assert all(row["as_expected"] for row in rows)
    for row in rows:
        for key in ("valid_error", "eta_max", "symmetric_part", "christoffel_error"):
            assert 0 <= row[key] < 10, row
    valid_only = next(row for row in rows if not row["expected_admissible"])
    assert not valid_only["admissible"]  # the counter-example stays a counter-example


def test_checks_without_trials_are_skipped_not_passed(run_cli):
    v = run_cli("verify", robot_path("panda.urdf"), "--trials", "2", "--ref-trials", "0", "--format", "json")
    checks = {c["key"]: c for c in json.loads(v.out)["robots"][0]["checks"]}
    for key in ("c", "e", "i", "j"):
        assert checks[key]["passed"] is None and checks[key]["trials"] == 0 and checks[key]["note"].startswith("skipped")
    assert "skipped" in run_cli("verify", robot_path("panda.urdf"), "--trials", "2", "--ref-trials", "0").out


def test_random_configurations_ignore_placeholder_limits(tmp_path):
    text = _robot(_link("base"), _link("a", 1.0), _link("b", 1.0), _joint("j1", "base", "a"), _joint("j2", "a", "b"))
    text = text.replace('<axis xyz="0 0 1"/></joint>', '<axis xyz="0 0 1"/><limit lower="-1e16" upper="1e16" effort="1" velocity="1"/></joint>', 1)
    r = _load(tmp_path, text)
    Q = np.stack([cc.random_configuration(r, k) for k in range(200)])
    assert np.abs(Q[:, 0]).max() <= np.pi
    assert Q[:, 1].min() >= 0 and Q[:, 1].max() <= 2 * np.pi  # no limits: the paper's [0, 2π]


# ---- bundled robots installed with the package ----------------------------------------------------
def test_bundled_robots_are_package_data(tmp_path):
    wheel_dir = tmp_path / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheel_dir), ROOT],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = wheel_dir.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    bundled = sorted(os.path.basename(p) for p in os.listdir(robot_path("")) if p.endswith(".urdf"))
    linkages = sorted(os.path.basename(p) for p in os.listdir(robot_path("")) if p.endswith(".yaml"))
    assert sorted(os.path.basename(n) for n in names if n.startswith("coriolis_cli/robots/") and n.endswith(".urdf")) == bundled
    assert sorted(os.path.basename(n) for n in names if n.startswith("coriolis_cli/robots/") and n.endswith(".yaml")) == linkages
    assert len(linkages) == 2
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)  # a wheel is installed by unpacking it
    code = "from coriolis_cli.checks.verify import default_suite; print(len(default_suite()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(site)))
    # URDF robots fixed and floating (the planar arm fixed only), the linkages fixed, 12 generated
    assert out.stdout.strip() == str(2 * len(bundled) - 1 + len(linkages) + 12), out.stderr


def test_a_robot_without_movable_joints_is_told_about_the_floating_base(tmp_path, run_cli):
    """A quadrotor described as one body (as in public robot-description packages)."""
    p = tmp_path / "quadrotor.urdf"
    p.write_text(_robot(_link("base", 1.5, _inertia(0.02, 0.02, 0.04), xyz="0 0 0"), _link("rotor", 0.01),
                        _joint("mount", "base", "rotor", "fixed"), name="quadrotor"))
    assert_one_line_error(run_cli("info", p), "no movable joints", "needs a floating base", "(pass --floating-base)")
    r = cc.load_robot(str(p), floating_base=True)
    assert r.nv == 6 and run_cli("verify", p, "--floating-base", "--trials", "3", "--ref-trials", "1").code == 0
