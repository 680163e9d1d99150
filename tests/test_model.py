"""Model layer: loaders, generated topologies, conversion round trips, and bad descriptions."""

import json
import math
import os

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.errors import ModelError, SpecError
from coriolis_cli.model import generate, load_description, parse_urdf, parse_yaml, to_urdf, to_yaml
from coriolis_cli.model.description import Inertial, JointSpec, LinkSpec, RobotDescription, description_to_dict
from coriolis_cli.model.tree import build_model

from .conftest import BUNDLED, robot_path


def urdf(body: str, name="t") -> str:
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n{body}\n</robot>\n'


def link(name, mass=1.0, inertia="0.01 0.01 0.01", xyz="0 0 0", rpy="0 0 0"):
    ixx, iyy, izz = inertia.split()
    return (
        f'<link name="{name}"><inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
        f'<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial></link>'
    )


def joint(name, parent, child, type_="revolute", axis="0 0 1", xyz="0 0 0", rpy="0 0 0", extra=""):
    return (
        f'<joint name="{name}" type="{type_}"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>'
        f'<limit lower="-1" upper="1" effort="1" velocity="1"/>{extra}</joint>'
    )


CHAIN = urdf(link("base") + link("a", xyz="0.1 0 0") + link("b", xyz="0.2 0 0") + joint("j1", "base", "a") + joint("j2", "a", "b", axis="0 1 0", xyz="0.3 0 0"))


# ------------------------------------------------------------------------------ bundled robots
@pytest.mark.parametrize("path", BUNDLED, ids=os.path.basename)
@pytest.mark.parametrize("floating", [False, True])
def test_bundled_robots_load(path, floating):
    if floating and path.endswith("planar_2link.urdf"):
        with pytest.raises(ModelError, match="root link 'base' has no inertia of its own"):
            cc.load_robot(path, floating_base=True, strict=True)
        with pytest.warns(cc.ModelWarning, match="M is singular"):
            cc.load_robot(path, floating_base=True)
        return
    r = cc.load_robot(path, floating_base=floating)
    assert all(b.parent < i for i, b in enumerate(r.bodies))
    assert r.nv == len(r.dof_names) == r.col_body.shape[0]
    assert r.nq == len(r.config_names) == r.nv + (1 if floating else 0)
    assert r.total_mass > 0


def test_bundled_panda_matches_publication():
    r = cc.load_robot(robot_path("panda.urdf"))
    assert (r.nq, r.nv, r.depth, r.n_bodies) == (7, 7, 7, 7)
    # Gaz et al. 2019 link masses
    assert [round(b.mass, 6) for b in r.bodies] == [4.970684, 0.646926, 3.228604, 3.587895, 1.225946, 1.666555, 0.735522]
    assert r.bodies[3].joint.limits.upper == -0.0698


def test_bundled_legged_robots_shapes():
    q = cc.load_robot(robot_path("quadruped.urdf"), floating_base=True)
    assert (q.nq, q.nv, q.depth, q.n_bodies) == (19, 18, 4, 13)
    assert q.dof_names[:6] == ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz")
    # the foot and the IMU frame are merged through fixed joints
    assert "LF_foot" in q.bodies[q.joint_names.index("LF_KFE")].merged_links
    h = cc.load_robot(robot_path("humanoid.urdf"), floating_base=True)
    assert (h.nv, h.depth) == (26, 7)


# ----------------------------------------------------------------------------- topologies
@pytest.mark.parametrize("topology", ["serial", "binary", "biped", "quadruped"])
@pytest.mark.parametrize("dof", [4, 10, 20, 30])
def test_generated_topologies(topology, dof):
    r = cc.load_robot(f"{topology}:{dof}")
    assert r.nv == dof and r.n_bodies == dof
    expected_depth = {
        "serial": dof,
        "binary": math.floor(math.log2(dof)) + 1,
        "biped": math.ceil(dof / 2),
        "quadruped": math.ceil(dof / 4),
    }[topology]
    assert r.depth == expected_depth
    assert all(b.parent < i for i, b in enumerate(r.bodies))
    for b in r.bodies:
        eig = np.sort(np.linalg.eigvalsh(b.inertia))
        assert eig[0] > 0 and eig[0] + eig[1] >= eig[2] - 1e-12
        assert abs(np.linalg.norm(b.joint.axis) - 1) < 1e-12
    fb = cc.load_robot(f"{topology}:{dof}", floating_base=True)
    assert fb.nv == dof + 6 and fb.depth == expected_depth + 1


def test_generated_axes_vary_and_seed_reproduces():
    a = cc.load_robot("serial:12")
    axes = np.array([b.joint.axis for b in a.bodies])
    assert np.linalg.matrix_rank(axes) == 3
    assert len({tuple(np.round(x, 6)) for x in axes}) == 12
    b = cc.load_robot("serial:12")
    assert np.array_equal(a.arrays.geom, b.arrays.geom)
    c = cc.load_robot("serial:12:7")
    assert not np.array_equal(a.arrays.geom, c.arrays.geom)


@pytest.mark.parametrize(
    "spec, fragment",
    [
        ("quadruped:0", "must be positive"),
        ("serial:-3", "must be positive"),
        ("foo:10", "unknown topology 'foo'"),
        ("serial:abc", "must be an integer"),
        ("quadruped:3", "at least 4 DoF"),
        ("nosuchrobot", "neither a robot file"),
        ("missing.urdf", "no such file"),
    ],
)
def test_bad_specs(spec, fragment):
    with pytest.raises(ModelError, match=fragment):
        cc.load_robot(spec)


def test_spec_error_is_model_error():
    assert issubclass(SpecError, ModelError)


# ----------------------------------------------------------------------------- URDF features
def test_urdf_axes_are_normalized_and_signs_kept():
    text = CHAIN.replace('<axis xyz="0 0 1"/>', '<axis xyz="0 0 -2"/>', 1)
    r = build_model(parse_urdf(text))
    assert np.allclose(r.bodies[0].joint.axis, [0, 0, -1])
    off = build_model(parse_urdf(CHAIN.replace('<axis xyz="0 1 0"/>', '<axis xyz="1 1 1"/>')))
    assert np.allclose(off.bodies[1].joint.axis, np.ones(3) / np.sqrt(3))


def test_urdf_meshes_are_never_loaded(tmp_path):
    text = CHAIN.replace(
        '<link name="a">',
        '<link name="a"><visual><geometry><mesh filename="package://nowhere/missing.stl"/></geometry></visual>'
        '<collision><geometry><mesh filename="/does/not/exist.dae"/></geometry></collision>',
    )
    p = tmp_path / "m.urdf"
    p.write_text(text)
    assert cc.load_robot(str(p)).nv == 2


def test_links_without_inertial_are_allowed_when_mass_moves():
    text = urdf(link("base") + '<link name="a"/>' + link("b", xyz="0.2 0 0") + joint("j1", "base", "a") + joint("j2", "a", "b", axis="0 1 0", xyz="0.3 0 0"))
    r = build_model(parse_urdf(text))
    assert r.bodies[0].mass == 0.0 and r.nv == 2
    M = cc.mass_matrix(r, np.array([0.2, 0.3]))
    assert np.all(np.linalg.eigvalsh(M) > 0)


def test_massless_subtree_is_computed_with_a_warning_naming_the_joint():
    text = urdf(link("base") + link("a") + '<link name="b"/><link name="c"/>' + joint("j1", "base", "a") + joint("j2", "a", "b", axis="0 1 0") + joint("j3", "b", "c", "fixed"))
    with pytest.warns(cc.ModelWarning, match="M is singular: joint 'j2' moves no mass"):
        r = build_model(parse_urdf(text))
    assert r.massless_joints and np.linalg.matrix_rank(cc.mass_matrix(r, np.zeros(2))) == 1
    with pytest.raises(ModelError, match="joint 'j2' moves no mass"):
        build_model(parse_urdf(text), strict=True)


def test_mimic_joint_is_an_independent_dof():
    text = CHAIN.replace('<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>\n</robot>', "") if False else CHAIN
    text = text.replace("</joint>\n</robot>", '<mimic joint="j1" multiplier="2" offset="0.1"/></joint>\n</robot>')
    r = build_model(parse_urdf(text))
    assert r.nv == 2
    assert r.bodies[1].joint.mimic.joint == "j1" and r.bodies[1].joint.mimic.multiplier == 2.0


def test_fixed_joints_merge_inertia():
    # a 1 kg point at 0.5 m through a fixed joint equals a body with its COM there
    merged = urdf(link("base") + link("a", mass=1.0, inertia="0 0 0") + link("b", mass=1.0, inertia="0 0 0") + joint("j1", "base", "a") + joint("f", "a", "b", "fixed", xyz="1 0 0"))
    r = build_model(parse_urdf(merged))
    assert r.n_bodies == 1
    b = r.bodies[0]
    assert b.mass == 2.0 and np.allclose(b.com, [0.5, 0, 0])
    # about the z axis: 2 point masses at 0 and 1 m
    assert np.isclose(cc.mass_matrix(r, np.zeros(1))[0, 0], 1.0)


def test_inertial_rpy_is_applied():
    a = urdf(link("base") + link("a", inertia="0.01 0.02 0.03", xyz="0.1 0 0", rpy="0 0 1.5707963267948966") + joint("j1", "base", "a", axis="1 0 0"))
    r = build_model(parse_urdf(a))
    # rotated by 90° about z, the x-inertia becomes the former y-inertia
    assert np.isclose(cc.mass_matrix(r, np.zeros(1))[0, 0], 0.02)


# ---------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("name", ["panda.urdf", "humanoid.urdf", "quadruped20.urdf"])
def test_urdf_yaml_urdf_round_trip_gives_identical_dynamics(name, tmp_path, rng):
    d0 = load_description(robot_path(name))
    y = tmp_path / "r.yaml"
    y.write_text(to_yaml(d0))
    u = tmp_path / "r.urdf"
    u.write_text(to_urdf(load_description(str(y))))
    for fb in (False, True):
        r0 = cc.load_robot(robot_path(name), floating_base=fb)
        r1 = cc.load_robot(str(u), floating_base=fb)
        assert r0.dof_names == r1.dof_names
        q = cc.random_configuration(r0, rng)
        qd = rng.uniform(-10, 10, r0.nv)
        M0, _, C0 = cc.coriolis_matrix(r0, q, qd)
        M1, _, C1 = cc.coriolis_matrix(r1, q, qd)
        assert np.array_equal(M0, M1) and np.array_equal(C0, C1)


def test_yaml_example_in_module_docstring_loads():
    from coriolis_cli.model import yaml_format

    text = yaml_format.__doc__.split("\n\n", 1)[1]
    text = text.replace("other_joint", "shoulder")
    text = "\n".join(line[4:] for line in text.splitlines())
    r = build_model(parse_yaml(text))
    assert r.nv == 1


# ----------------------------------------------------------------------------- bad input
BAD_URDF = {
    "empty": ("", "empty"),
    "malformed": ("<robot name='x'><link name='a'>", "malformed XML"),
    "not_urdf": ("<html><body/></html>", "not a URDF"),
    "cycle": (urdf(link("a") + link("b") + link("c") + joint("j1", "a", "b") + joint("j2", "b", "c") + joint("j3", "c", "b")), "child of two joints"),
    "pure_cycle": (urdf(link("a") + link("b") + joint("j1", "a", "b") + joint("j2", "b", "a")), "cycle"),
    "missing_link": (urdf(link("a") + joint("j1", "a", "ghost")), "'ghost', which does not exist"),
    "nan_mass": (CHAIN.replace('<mass value="1.0"/>', '<mass value="nan"/>', 1), "mass is not a finite number"),
    "negative_mass": (CHAIN.replace('<mass value="1.0"/>', '<mass value="-2"/>', 1), "negative mass"),
    "twice": (urdf(link("a") + link("a")), "link 'a' is defined twice"),
    "zero_axis": (CHAIN.replace('<axis xyz="0 0 1"/>', '<axis xyz="0 0 0"/>', 1), "axis is zero"),
    "two_roots": (urdf(link("a") + link("b") + link("c") + joint("j", "a", "b")), "several root links"),
    "screw": (CHAIN.replace('type="revolute"', 'type="screw"', 1), "not supported"),
}


@pytest.mark.parametrize("case", sorted(BAD_URDF))
def test_bad_urdf_raises_model_error(case, tmp_path):
    text, fragment = BAD_URDF[case]
    p = tmp_path / f"{case}.urdf"
    p.write_text(text)
    with pytest.raises(ModelError, match=fragment):
        cc.load_robot(str(p))


def test_binary_garbage_and_directories(tmp_path):
    p = tmp_path / "g.urdf"
    p.write_bytes(os.urandom(256) + b"\x00\xff")
    with pytest.raises(ModelError, match="not a text file"):
        cc.load_robot(str(p))
    with pytest.raises(ModelError, match="a folder, not a robot file"):
        cc.load_robot(str(tmp_path))


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("links: 3\njoints: []\n", "must be lists"),
        ("name: x\nlinks:\n  - name: a\n    mass: heavy\njoints: []\n", "mass must be a number"),
        ("links:\n  - {name: a}\n  - {name: b, mass: 1, inertia: [1, 0, 0, 1, 0]}\njoints: []\n", "list of 6 numbers"),
        ("links: [{name: a}]\n", "missing key 'joints'"),
        ("- just\n- a list\n", "must be a mapping"),
        ("links: [{name: a}\n", "malformed YAML"),
    ],
)
def test_bad_yaml(text, fragment, tmp_path):
    p = tmp_path / "r.yaml"
    p.write_text(text)
    with pytest.raises(ModelError, match=fragment):
        cc.load_robot(str(p))


def test_description_api_builds_models():
    d = RobotDescription(
        "api",
        (LinkSpec("base"), LinkSpec("a", Inertial(1.0, (0.1, 0, 0), (0, 0, 0), (0.01, 0, 0, 0.01, 0, 0.01)))),
        (JointSpec("j", "prismatic", "base", "a", axis=(0, 0, 3)),),
    )
    r = build_model(d)
    assert r.bodies[0].joint.type == "prismatic" and np.allclose(r.bodies[0].joint.axis, [0, 0, 1])
    assert np.isclose(cc.mass_matrix(r, np.zeros(1))[0, 0], 1.0)


def test_generate_module_names_joints_uniquely():
    d = generate("quadruped", 20, 0)
    assert len({j.name for j in d.joints}) == 20


def test_parsed_urdf_cache_follows_the_file_content(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    p = tmp_path / "r.urdf"
    p.write_text(CHAIN)
    first = load_description(str(p))
    assert len(list((tmp_path / "cache" / "coriolis" / "urdf").glob("*.json"))) == 1
    assert load_description(str(p)) == first == parse_urdf(CHAIN, str(p))
    p.write_text(CHAIN.replace('<axis xyz="0 1 0"/>', '<axis xyz="1 0 0"/>'))  # an edit is parsed again
    assert load_description(str(p)).joints[1].axis == (1.0, 0.0, 0.0)
    monkeypatch.setenv("CORIOLIS_NO_CACHE", "1")
    p.write_text(CHAIN.replace('name="j1"', 'name="k1"'))
    assert load_description(str(p)).joints[0].name == "k1"
    assert len(list((tmp_path / "cache" / "coriolis" / "urdf").glob("*.json"))) == 2


def _cache_entries(tmp_path):
    return sorted((tmp_path / "cache" / "coriolis" / "urdf").glob("*.json"))


@pytest.mark.parametrize("tamper", ["other robot", "wrong types", "fifo", "edited number", "not json", "directory"])
def test_a_cache_entry_that_cannot_prove_its_origin_is_rebuilt(tmp_path, monkeypatch, tamper):
    """Every kind of doubtful entry gives the uncached result, and is replaced by a good one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    a, b = tmp_path / "a.urdf", tmp_path / "b.urdf"
    a.write_text(CHAIN)
    heavier = '<link name="a"><inertial><origin xyz="0.1 0 0" rpy="0 0 0"/><mass value="2.0"/>'
    b.write_text(CHAIN.replace('<link name="a"><inertial><origin xyz="0.1 0 0" rpy="0 0 0"/><mass value="1.0"/>', heavier))
    assert heavier in b.read_text()
    truth = parse_urdf(CHAIN, str(a))
    load_description(str(a))
    load_description(str(b))
    entry_a = next(p for p in _cache_entries(tmp_path) if json.loads(p.read_text())["description"] == description_to_dict(truth))
    entry_b = next(p for p in _cache_entries(tmp_path) if p != entry_a)
    if tamper == "other robot":  # a copy of b's entry over a's
        entry_a.write_bytes(entry_b.read_bytes())
    elif tamper == "wrong types":
        data = json.loads(entry_a.read_text())
        data["description"]["links"][1]["inertial"]["mass"] = "2"
        entry_a.write_text(json.dumps(data))
    elif tamper == "edited number":
        entry_a.write_text(entry_a.read_text().replace('"mass": 1.0', '"mass": 1.5', 1))
    elif tamper == "not json":
        entry_a.write_text("{")
    elif tamper == "fifo":
        entry_a.unlink()
        os.mkfifo(entry_a)
    elif tamper == "directory":
        entry_a.unlink()
        entry_a.mkdir()
    got = load_description(str(a))
    assert got == truth
    assert np.array_equal(cc.mass_matrix(build_model(got), np.zeros(2)), cc.mass_matrix(build_model(truth), np.zeros(2)))
    if tamper != "directory":
        assert entry_a.is_file() and json.loads(entry_a.read_text())["description"] == description_to_dict(truth)
