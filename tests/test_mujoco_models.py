"""MuJoCo models as users have them: armature on free and ball joints, unnamed free joints,
frames kept as quaternions, loops closed by equality constraints, models without their meshes, and
the qpos/qvel converters. MuJoCo is the oracle throughout."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.engine.coordinates import evaluation

pytest.importorskip("mujoco", reason="mujoco is not installed (pip install 'coriolis-cli[mujoco]')")
import mujoco  # noqa: E402

from coriolis_cli.model import mjcf  # noqa: E402
from coriolis_cli.peers import mujoco as mujoco_peer  # noqa: E402


def _write(tmp_path, text, name="model.xml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _load(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cc.ModelWarning)
        return cc.load_robot(path, **options)


def _checks(run_cli, *args):
    r = run_cli("verify", *args, "--trials", "4", "--ref-trials", "2", "--format", "json")
    return r, {c["key"]: c for c in json.loads(r.out)["robots"][0]["checks"]} if r.out.strip() else {}


# ---- 1. armature as MuJoCo means it ----------------------------------------------------------------
# pybullet's striker.xml in six lines: every joint, the free one included, gets armature from <default>
STRIKER_LIKE = """<mujoco model="striker_like">
  <default><joint armature="0.04"/></default>
  <worldbody>
    <body name="puck" pos="0 0 1"><joint name="root" type="free"/><geom type="box" size="0.1 0.2 0.3" mass="2"/></body>
  </worldbody>
</mujoco>
"""

BALL_AND_FREE = """<mujoco model="ball_and_free">
  <worldbody>
    <body name="box" pos="0 0 1" quat="0.9 0.1 0.3 0.2">
      <joint type="free" name="root"/>
      <geom type="box" size="0.1 0.2 0.3" mass="2"/>
      <body name="arm" pos="0.1 0 0">
        <joint name="ball" type="ball" pos="0.02 0 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0.1 0" size="0.03" mass="0.5"/>
        <body name="tip" pos="0.3 0.1 0">
          <joint name="h" type="hinge" axis="0 1 1" ref="0.3" armature="0.02"/>
          <geom type="sphere" size="0.05" mass="0.2" pos="0.1 0 0"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_free_joint_armature_gives_mujocos_bias(tmp_path, run_cli):
    """Armature on a free joint acts on MuJoCo's world-frame ṗ: in body coordinates C gains a ω × v
    (before, the bias was off by 2.2e-2 relative on this model)."""
    path = _write(tmp_path, STRIKER_LIKE)
    robot = _load(path)
    assert robot.bodies[0].joint.armature == (0.04,) * 6
    peer = mujoco_peer.MujocoPeer(robot)
    q = np.array([0.3, -0.2, 1.1, 0.2, -0.4, 0.1, 0.87])
    q[3:] /= np.linalg.norm(q[3:])
    v = np.array([0.5, -1.0, 2.0, 3.0, -2.0, 1.5])
    T, Mj, bias, rate = peer.mass_and_bias(q, v)
    tau = cc.inverse_dynamics(robot, q, v, rate)
    assert np.abs(T.T @ tau - bias).max() <= 1e-14 * np.abs(bias).max()
    M, Mdot, C = cc.coriolis_matrix(robot, q, v)
    w = v[3:]
    # the body's mass m = 2 and the armature a = 0.04 alike: (m + a) [ω]× on the linear block
    assert np.allclose(C[:3, :3], 2.04 * np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]]), rtol=0, atol=1e-14)
    r, checks = _checks(run_cli, path)
    assert r.code == 0 and checks["m"]["passed"] is True and checks["j"]["passed"] is True, r


def test_unequal_armature_on_free_and_ball_joints_equals_mujoco(tmp_path):
    """Per-DoF armature (YAML's armature: list) on a free and a ball joint, set in MuJoCo's
    dof_armature: M, the bias, Γ, Ṁ = C + Cᵀ, forward dynamics and the reference code agree."""
    from coriolis_cli.model.loader import load_description
    from coriolis_cli.model.tree import build_model
    from coriolis_cli.reference import coriolis as ref_coriolis
    from coriolis_cli.reference import rnea as ref_rnea
    from coriolis_cli.reference.kinematics import Tree

    path = _write(tmp_path, BALL_AND_FREE)
    armature = {"root": (0.01, 0.02, 0.05, 0.03, 0.07, 0.11), "ball": (0.02, 0.05, 0.09)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cc.ModelWarning)
        desc = load_description(path)
    robot = build_model(replace(desc, joints=tuple(replace(j, armature=armature.get(j.name, j.armature)) for j in desc.joints)))
    peer = mujoco_peer.MujocoPeer(robot)
    for body in robot.bodies:
        j = mujoco.mj_name2id(peer.m, mujoco.mjtObj.mjOBJ_JOINT, body.joint.name)
        peer.m.dof_armature[peer.m.jnt_dofadr[j] : peer.m.jnt_dofadr[j] + len(body.joint.armature)] = body.joint.armature
    tree = Tree(robot)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v, a = cc.random_configuration(robot, rng), 3 * rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        T, Mj, bias, rate = peer.mass_and_bias(q, v)
        M, Mdot, C = cc.coriolis_matrix(robot, q, v)
        g = cc.gravity_vector(robot, q)
        assert np.abs(T.T @ M @ T - Mj).max() <= 1e-14 * np.abs(Mj).max()
        assert np.abs(T.T @ (C @ v + g + M @ rate) - bias).max() <= 1e-14 * np.abs(bias).max()
        assert np.abs(np.einsum("ijk,k->ij", cc.christoffel(robot, q), v) - C).max() <= 1e-14 * np.abs(C).max()
        assert np.abs(Mdot - C - C.T).max() <= 1e-14 * np.abs(Mdot).max()
        tau = M @ a + C @ v + g
        assert np.abs(cc.inverse_dynamics(robot, q, v, a) - tau).max() <= 1e-14 * np.abs(tau).max()
        assert np.abs(cc.forward_dynamics(robot, q, v, tau) - a).max() <= 1e-12
        Mr, Mdr, Cr = ref_coriolis.coriolis_matrix(tree, q, v)
        assert np.abs(Mr - M).max() <= 1e-14 and np.abs(Cr - C).max() <= 1e-13 and np.abs(Mdr - Mdot).max() <= 1e-13
        assert np.abs(ref_rnea.inverse_dynamics(tree, q, v, a) - tau).max() <= 1e-13 * np.abs(tau).max()
    # Ṁ is the derivative of M along the motion (the free joint's M_a = Rᵀ A R turns with it)
    q, v = cc.random_configuration(robot, rng), rng.normal(size=robot.nv)
    from coriolis_cli.peers import finite_differences as fd

    assert np.abs(fd.mdot_fd(robot, cc.mass_matrix, q, v) - cc.coriolis_matrix(robot, q, v)[1]).max() <= 1e-7


# ---- 2. the oracle runs on every MJCF robot, or fails saying why -----------------------------------
UNNAMED_FREE = """<mujoco model="unnamed_free">
  <worldbody>
    <body name="trunk" pos="0 0 1"><freejoint/><geom type="box" size="0.1 0.2 0.3" mass="2"/>
      <body name="leg" pos="0.1 0 0"><joint name="hip" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02" mass="0.3"/></body>
    </body>
  </worldbody>
</mujoco>
"""


def test_check_m_runs_on_an_unnamed_free_joint_and_on_locked_joints(tmp_path, run_cli):
    """go2, anymal_c, h1, cassie, ...: an unnamed <freejoint/> is matched to MuJoCo's joint by
    index (check m said n/a and 'all checks passed' before); a locked joint is held in qpos."""
    path = _write(tmp_path, UNNAMED_FREE)
    for extra in ((), ("--lock", "hip=0.7")):
        r, checks = _checks(run_cli, path, *extra)
        assert r.code == 0 and checks["m"]["passed"] is True and checks["m"]["max_rel"] < 1e-14, (extra, r)


def test_check_m_that_cannot_run_fails_with_its_reason(tmp_path, run_cli, monkeypatch):
    path = _write(tmp_path, UNNAMED_FREE)
    robot = _load(path)

    def refuse(*args, **kwargs):
        raise cc.ModelError("MuJoCo cannot compile it (Error: a stand-in refusal)")

    from coriolis_cli.checks import verify

    monkeypatch.setattr(mujoco_peer, "MujocoPeer", refuse)
    result = verify.verify_robot(robot, trials=2, ref_trials=1)
    m = next(c for c in result.checks if c.key == "m")
    assert m.passed is False and "stand-in refusal" in m.note


# ---- 3. rotations kept as MuJoCo gives them -------------------------------------------------------
def test_frames_near_ninety_degrees_pitch_keep_every_digit(tmp_path):
    """Quaternions at RPY's singularity (the LEAP hand: 2.9e-11 before; a chain of such frames
    agreed with MuJoCo only to 2e-8 through RPY)."""
    import math

    def quat(pitch):
        cz, sz, cy, sy, cx, sx = math.cos(-0.6), math.sin(-0.6), math.cos(pitch / 2), math.sin(pitch / 2), math.cos(0.35), math.sin(0.35)
        w, x, y, z = cy * cx, cy * sx, sy * cx, -sy * sx  # Ry(pitch) Rx(0.7)
        return (cz * w - sz * z, cz * x - sz * y, cz * y + sz * x, cz * z + sz * w)  # Rz(-1.2) first

    bodies = "".join(
        f'<body name="l{k}" pos="0.05 0.01 0.02" quat="{" ".join(map(repr, quat(p)))}"><joint name="j{k}" axis="0.3 1 0.2"/>'
        f'<inertial pos="0.03 0.01 0" quat="{" ".join(map(repr, quat(p)))}" mass="0.1" diaginertia="1e-4 2e-4 2.5e-4"/>'
        for k, p in enumerate((math.pi / 2 - 1e-7, -math.pi / 2 + 3e-9, math.pi / 2, -math.pi / 2 - 2e-8)))
    path = _write(tmp_path, f'<mujoco model="pitch90"><worldbody>{bodies}{"</body>" * 4}</worldbody></mujoco>')
    robot = _load(path)
    peer = mujoco_peer.MujocoPeer(robot)
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, v = cc.random_configuration(robot, rng), rng.normal(size=robot.nv)
        T, Mj, bias, rate = peer.mass_and_bias(q, v)
        assert np.abs(T.T @ cc.mass_matrix(robot, q) @ T - Mj).max() <= 1e-14 * np.abs(Mj).max()
        assert np.abs(T.T @ cc.inverse_dynamics(robot, q, v, rate) - bias).max() <= 1e-14 * np.abs(bias).max()


# ---- 5. models without their meshes ---------------------------------------------------------------
NO_MESHES = """<mujoco model="no_meshes">
  <compiler meshdir="assets"/>
  <asset><mesh name="base" file="base_0.obj"/><mesh name="link" file="link_0.obj"/>
    <texture name="t" type="2d" file="wood.png"/><material name="wood" texture="t"/></asset>
  <worldbody>
    <body name="base" pos="0 0 0.5">
      <inertial pos="0 0 0.1" mass="3" diaginertia="0.1 0.2 0.3"/>
      <joint name="yaw" axis="0 0 1"/>
      <geom type="mesh" mesh="base" material="wood"/>
      <body name="link" pos="0.2 0 0">
        <inertial pos="0.1 0 0" mass="1" diaginertia="0.01 0.02 0.02"/>
        <joint name="pitch" axis="0 1 0"/>
        <geom type="mesh" mesh="link"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_missing_meshes_load_when_every_body_has_its_inertial(tmp_path, run_cli):
    from .conftest import assert_one_line_error

    path = _write(tmp_path, NO_MESHES)
    r, checks = _checks(run_cli, path)
    assert r.code == 0 and checks["m"]["passed"] is True, r
    said = [line for line in r.err.splitlines() if "missing" in line]
    assert len(said) == 1 and "base_0.obj, link_0.obj, wood.png" in said[0], r.err
    robot = _load(path)
    assert robot.nv == 2 and abs(robot.bodies[0].mass - 3.0) < 1e-15
    heavy = _write(tmp_path, NO_MESHES.replace('<inertial pos="0.1 0 0" mass="1" diaginertia="0.01 0.02 0.02"/>', ""), "heavy.xml")
    assert_one_line_error(run_cli("info", heavy), "body 'link' takes its inertia from mesh 'link'", "give the body an <inertial>")


# ---- 4. MJCF loops as loops ------------------------------------------------------------------------
def _data(name):
    import os

    return os.path.join(os.path.dirname(__file__), "data", "mjcf", name)


def test_four_bar_closed_by_connect_equals_the_yaml_four_bar():
    """The crank (actuated) is the independent coordinate; M̄, C̄ and ḡ equal the bundled YAML
    four-bar's around the whole turn, and the solved joints keep MuJoCo's own constraint closed."""
    from .conftest import robot_path

    mj = _load(_data("fourbar_connect.xml"))
    yaml = cc.load_robot(robot_path("fourbar.yaml"))
    assert mj.nv == 1 and "independent: crank_joint, the actuated joints" in mj.map.describe()
    for angle in np.linspace(-np.pi, np.pi, 9):  # 3.0 once failed the continuation's last step (fixed)
        q, v = np.array([angle]), np.array([1.7])
        Ma, _, Ca = cc.coriolis_matrix(mj, q, v)
        Mb, _, Cb = cc.coriolis_matrix(yaml, q, v)
        assert np.abs(Ma - Mb).max() <= 1e-14 and np.abs(Ca - Cb).max() <= 1e-14
        assert np.abs(cc.gravity_vector(mj, q) - cc.gravity_vector(yaml, q)).max() <= 1e-13
    _closed_in_mujoco(mj, _data("fourbar_connect.xml"))


FOURBAR_IN_LINE = """<mujoco model="fourbar_in_line"><compiler angle="radian"/>
<worldbody><body name="frame" euler="1.5707963267948966 0 0">
 <body name="crank"><joint name="crank_joint" type="hinge" axis="0 0 1"/>
  <inertial pos="0.15 0 0" mass="1" diaginertia="0.0005 0.008 0.008"/>
  <body name="coupler" pos="0.3 0 0"><joint name="coupler_joint" type="hinge" axis="0 0 1" ref="1.019479357663014"/>
   <inertial pos="0.45 0 0" mass="2" diaginertia="0.001 0.136 0.136"/></body></body>
 <body name="rocker" pos="1 0 0"><joint name="rocker_joint" type="hinge" axis="0 0 1" ref="1.8605480282309441"/>
  <inertial pos="0.4 0 0" mass="1.5" diaginertia="0.0008 0.081 0.081"/></body></body></worldbody>
<equality><connect body1="coupler" body2="rocker" anchor="0.9 0 0"/></equality>
<actuator><motor joint="crank_joint"/></actuator></mujoco>"""


def test_a_linkage_assembled_with_its_links_in_line_is_refused_with_the_reason(tmp_path, run_cli):
    """The bodies drawn in line, with joint refs: MuJoCo closes <connect> where the file draws the
    bodies (qpos0 = ref), so this is a four-bar with its links in line and a 0.2 m rocker arm, at
    the change point where the rows have rank 1 (2 nearby). Counting 2 free joints there, as the
    loader did, gave coordinates that could move nowhere; it is refused, saying why."""
    from .conftest import assert_one_line_error

    path = _write(tmp_path, FOURBAR_IN_LINE)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)  # at qpos0: closed, the anchor where the links meet in line
    assert np.abs(d.efc_pos[: d.nefc]).max() <= 1e-12
    assert np.allclose(d.xpos[m.body("rocker").id] + d.xmat[m.body("rocker").id].reshape(3, 3) @ m.eq_data[0][3:6],
                       d.xpos[m.body("frame").id] + d.xmat[m.body("frame").id].reshape(3, 3) @ [1.2, 0, 0])
    assert_one_line_error(run_cli("info", path), "singular pose of the linkage", "rank 1 there, 2 at every pose nearby",
                          "--loops open")
    with pytest.warns(cc.ModelWarning):
        assert cc.load_robot(str(path), loops="open").nv == 3


def _closed_in_mujoco(robot, path, trials=4):
    """MuJoCo's equality rows at our solved configurations: residual at round-off, and A in the
    null space of their Jacobian (the loops closed as MuJoCo means them)."""
    m = mjcf.compile_model(path)
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    d = mujoco.MjData(m)
    lay = mjcf.layout(robot.full, m)
    rng = np.random.default_rng(5)
    for _ in range(trials):
        qbar = cc.random_configuration(robot, rng)
        q, A = evaluation(robot).full_configuration(qbar), evaluation(robot).jacobian(qbar)
        qpos, _, T, _ = mjcf.mujoco_state(lay, q, np.zeros(robot.full.nv), m.nq, m.nv)
        d.qpos[:] = qpos
        mujoco.mj_forward(m, d)
        rows = d.efc_type[: d.nefc] == int(mujoco.mjtConstraint.mjCNSTR_EQUALITY)
        J = np.asarray(d.efc_J).reshape(d.nefc, m.nv)[rows]
        assert np.abs(d.efc_pos[: d.nefc][rows]).max() <= 1e-12
        assert np.abs(J @ np.linalg.pinv(T) @ A).max() <= 1e-12 * max(1.0, np.abs(J).max() * np.abs(A).max())


def test_weld_closes_a_loop_with_redundant_rows(tmp_path, run_cli):
    """A planar 4R chain welded to the world: six rows, rank three, one DoF; chosen from the
    constraint Jacobian without actuators, the actuated joint with one, --independent over both."""
    path = _data("weld_4r.xml")
    robot = _load(path)
    assert robot.nv == 1 and "chosen from the constraint Jacobian" in robot.map.describe()
    _closed_in_mujoco(robot, path)
    r, checks = _checks(run_cli, path)
    assert r.code == 0 and all(c["passed"] is not False for c in checks.values()), r
    assert checks["m"]["passed"] is True and checks["j"]["passed"] is True and checks["c"]["passed"] is True
    actuated = _write(tmp_path, open(path).read().replace("</equality>", '</equality><actuator><motor joint="j4"/></actuator>'))
    assert "independent: j4, the actuated joints" in _load(actuated).map.describe()
    assert "independent: j3;" in _load(actuated, independent=("j3",)).map.describe()
    r = run_cli("info", actuated, "--independent", "j1")
    assert r.code == 0 and "independent: j1;" in r.out, r


def test_loops_open_keeps_the_tree_and_names_each_closure(tmp_path, run_cli):
    from .conftest import assert_one_line_error

    path = _data("fourbar_connect.xml")
    with pytest.warns(cc.ModelWarning, match=r"1 loop closure opened \('pin'\)"):
        tree = cc.load_robot(path, loops="open")
    assert tree.nv == 3 and not getattr(tree, "is_reduced", False)
    from .conftest import robot_path

    assert_one_line_error(run_cli("info", robot_path("fourbar.yaml"), "--loops", "open", "--independent", "crank_joint"),
                          "--independent names the coordinates of closed loops", "drop one")
    assert_one_line_error(run_cli("info", robot_path("panda.urdf"), "--independent", "joint1"),
                          "this robot has none")


# ---- qpos ↔ q -------------------------------------------------------------------------------------
CASSIE_LIKE = """<mujoco model="cassie_like">
  <compiler angle="radian"/>
  <worldbody>
    <body name="pelvis" pos="0 0 1" quat="0.9 0 0.1 0.3"><freejoint/>
      <inertial pos="0.05 0 0" mass="10" diaginertia="0.1 0.2 0.25"/>
      <body name="hip" pos="0.02 0.1 -0.05" euler="0.1 0.2 0.3">
        <joint name="hip_roll" axis="1 0 0" ref="0.0045" armature="0.04"/>
        <joint name="hip_yaw" axis="0 0 1" ref="0.3" pos="0 0 0.02"/>
        <inertial pos="0 0 -0.05" mass="1.5" diaginertia="0.01 0.01 0.005"/>
        <body name="knee" pos="0 0 -0.3"><joint name="knee" type="ball" armature="0.01"/>
          <inertial pos="0 0 -0.15" mass="0.8" diaginertia="0.008 0.008 0.001"/>
          <body name="foot" pos="0 0 -0.3"><joint name="toe" type="slide" axis="0 1 1" ref="-0.02"/>
            <inertial pos="0 0 0" mass="0.2" diaginertia="0.001 0.001 0.001"/></body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_converters_between_qpos_and_q_against_mujoco(tmp_path):
    """ref offsets, several joints in a body, a ball and an unnamed free joint: the round trip is
    exact and MuJoCo's kinetic energy, M and bias are ours at the converted state."""
    path = _write(tmp_path, CASSIE_LIKE)
    robot = _load(path)
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(6)
    for _ in range(3):
        qpos = m.qpos0 + 0.4 * rng.normal(size=m.nq)
        for a in (3, 7 + 2):  # the free joint's and the ball's quaternions (after hip_roll, hip_yaw)
            qpos[a : a + 4] /= np.linalg.norm(qpos[a : a + 4])
        qvel = rng.normal(size=m.nv)
        q, v = cc.from_mujoco(robot, qpos, qvel)
        back = cc.to_mujoco(robot, q, v)
        assert np.abs(back[0] - qpos).max() <= 1e-15 and np.abs(back[1] - qvel).max() <= 1e-14
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_forward(m, d)
        Mj = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, Mj)
        M = cc.mass_matrix(robot, q)
        assert abs(0.5 * v @ M @ v - 0.5 * qvel @ Mj @ qvel) <= 1e-14 * (qvel @ Mj @ qvel)
    assert q[0:3].tolist() == qpos[0:3].tolist() and q[6] == qpos[3]  # position as is, w last


def test_converters_on_a_closed_loop_and_on_a_urdf_robot():
    from .conftest import robot_path

    robot = _load(_data("fourbar_connect.xml"))
    qbar, vbar = np.array([0.8]), np.array([1.5])
    qpos, qvel = cc.to_mujoco(robot, qbar, vbar)
    q, v = cc.from_mujoco(robot, qpos, qvel)
    assert np.abs(q - qbar).max() <= 1e-15 and np.abs(v - vbar).max() <= 1e-13
    with pytest.raises(cc.ModelError, match="was not loaded from MJCF"):
        cc.to_mujoco(cc.load_robot(robot_path("panda.urdf")), np.zeros(7))


def test_disabled_gravity_is_no_gravity(tmp_path, run_cli):
    """dm_control's finger and fish: <flag gravity="disable"/> keeps opt.gravity and sets a flag
    (check m failed by 0.45 and 0.099 relative before)."""
    path = _write(tmp_path, STRIKER_LIKE.replace("<worldbody>", '<option><flag gravity="disable"/></option><worldbody>'))
    robot = _load(path)
    assert robot.gravity == (0.0, 0.0, 0.0)
    r, checks = _checks(run_cli, path)
    assert r.code == 0 and checks["m"]["passed"] is True, r
