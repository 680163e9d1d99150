"""Locked joints (``--lock``, ``load_robot(..., lock=...)``): the locked joints become fixed at their
values and their bodies merge into their parents, as Pinocchio's buildReducedModel does; M, C and
τ are the full robot's rows and columns of the other DoF at that configuration."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.model.lock import lock_patterns
from coriolis_cli.peers import pinocchio as pinocchio_peer

from .conftest import assert_one_line_error, robot_path

needs_pin = pytest.mark.skipif(not pinocchio_peer.available(), reason="pin (Pinocchio) is not installed")

# a parallel gripper on a two-link arm: the right finger mimics the left one (a·q + b)
GRIPPER = """<robot name="gripper">
  <link name="base"/>
  <link name="upper"><inertial><origin xyz="0.2 0 0"/><mass value="2.0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
  <link name="palm"><inertial><origin xyz="0.05 0.01 0"/><mass value="0.6"/>
    <inertia ixx="0.002" ixy="0.0001" ixz="0" iyy="0.002" iyz="0" izz="0.003"/></inertial></link>
  <link name="left"><inertial><origin xyz="0.02 0 0.01"/><mass value="0.1"/>
    <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>
  <link name="right"><inertial><origin xyz="0.02 0 -0.01"/><mass value="0.12"/>
    <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1.2e-4" iyz="0" izz="1e-4"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="10" velocity="2"/></joint>
  <joint name="wrist" type="revolute"><parent link="upper"/><child link="palm"/><origin xyz="0.4 0 0" rpy="0.3 0 0"/>
    <axis xyz="1 0 0"/><limit lower="-2" upper="2" effort="10" velocity="2"/></joint>
  <joint name="finger_left" type="prismatic"><parent link="palm"/><child link="left"/><origin xyz="0.1 0.02 0"/>
    <axis xyz="0 1 0"/><limit lower="0" upper="0.04" effort="10" velocity="0.1"/></joint>
  <joint name="finger_right" type="prismatic"><parent link="palm"/><child link="right"/><origin xyz="0.1 -0.02 0"/>
    <axis xyz="0 -1 0"/><limit lower="0" upper="0.04" effort="10" velocity="0.1"/>
    <mimic joint="finger_left" multiplier="0.9" offset="0.002"/></joint>
</robot>"""


def _pin_reduced(urdf_text, floating, locked: dict[str, float], rng):
    """Pinocchio's model of the URDF with ``locked`` joints (name: value) reduced away, and a
    function mapping (q, qd, qdd) by our DoF names into it."""
    import pinocchio as pin

    model = pin.buildModelFromXML(urdf_text, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromXML(urdf_text)
    q_ref = pin.neutral(model)
    ids = []
    for name, value in locked.items():
        jid = model.getJointId(name)
        q_ref[model.joints[jid].idx_q] = value
        ids.append(jid)
    reduced = pin.buildReducedModel(model, ids, q_ref)
    return reduced


def _compare(robot, urdf_text, floating, locked, rng, trials=3):
    import pinocchio as pin

    red = _pin_reduced(urdf_text, floating, locked, rng)
    data = red.createData()
    # our DoF (by name) in Pinocchio's order
    where = {}
    for jid in range(1, red.njoints):
        j = red.joints[jid]
        name = red.names[jid]
        if j.nv == 6:
            for k in range(6):
                where[("base", k)] = (j.idx_q, j.idx_v + k)
        else:
            where[(name, 0)] = (j.idx_q, j.idx_v)
    assert red.nv == robot.nv
    for _ in range(trials):
        q = cc.random_configuration(robot, rng)
        qd, qdd = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        qp, vp, ap = pin.neutral(red), np.zeros(red.nv), np.zeros(red.nv)
        perm = np.zeros(robot.nv, dtype=int)
        tree = getattr(robot, "full", robot)  # no mimic left: the same coordinates
        assert tree.nq == robot.nq
        k = 0
        for i, b in enumerate(tree.bodies):
            if b.joint.type in ("free", "floating"):
                qp[0:7] = q[0:7]
                for c in range(6):
                    perm[k + c] = where[("base", c)][1]
                k += 6
            else:
                iq, iv = where[(b.joint.name, 0)]
                angle = q[int(tree.q_start[i])]
                if red.joints[red.getJointId(b.joint.name)].nq == 2:  # Pinocchio's continuous joint: (cos, sin)
                    qp[iq : iq + 2] = np.cos(angle), np.sin(angle)
                else:
                    qp[iq] = angle
                perm[k] = iv
                k += 1
        vp[perm], ap[perm] = qd, qdd
        M = cc.mass_matrix(robot, q)
        Mp = pin.crba(red, data, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        Cp = pin.computeCoriolisMatrix(red, data, qp, vp)
        taup = pin.rnea(red, data, qp, vp, ap)
        _, _, C = cc.coriolis_matrix(robot, q, qd)
        tau = cc.inverse_dynamics(robot, q, qd, qdd)
        scale = np.abs(Mp).max()
        assert np.abs(M - Mp[np.ix_(perm, perm)]).max() <= 1e-12 * scale
        assert np.abs(C - Cp[np.ix_(perm, perm)]).max() <= 1e-12 * scale * max(1, np.abs(qd).max())
        assert np.abs(tau - taup[perm]).max() <= 1e-11 * max(1.0, np.abs(taup).max())


@needs_pin
def test_lock_equals_pinocchio_build_reduced_model_fixed_base(rng):
    text = open(robot_path("panda.urdf")).read()
    r = cc.load_robot(robot_path("panda.urdf"), lock={"panda_joint2": 0.4, "panda_joint[67]": 0.3})
    assert r.nv == 4 and "panda_joint2" not in r.dof_names
    _compare(r, text, False, {"panda_joint2": 0.4, "panda_joint6": 0.3, "panda_joint7": 0.3}, rng)


@needs_pin
def test_lock_equals_pinocchio_build_reduced_model_floating_base(rng):
    text = open(robot_path("humanoid.urdf")).read()
    r = cc.load_robot(robot_path("humanoid.urdf"), floating_base=True, lock={"l_*": None, "r_elbow": -0.7, "neck_yaw": 0.2})
    assert r.nv == 6 + 20 - 11
    l_joints = [j.name for j in r.description.joints if j.name.startswith("l_")]
    assert l_joints and all(j.type == "fixed" for j in r.description.joints if j.name.startswith("l_"))
    _compare(r, text, True, {"l_shoulder_pitch": 0.0, "l_shoulder_roll": 0.0, "l_elbow": 0.0, "l_hip_yaw": 0.0,
                             "l_hip_roll": 0.0, "l_hip_pitch": 0.0, "l_knee": 0.0, "l_ankle_pitch": 0.0,
                             "l_ankle_roll": 0.0, "r_elbow": -0.7, "neck_yaw": 0.2}, rng)


@needs_pin
@pytest.mark.parametrize("mimic", ["independent", "enforce"])
def test_a_mimic_joint_follows_its_locked_leader(tmp_path, rng, mimic):
    path = tmp_path / "gripper.urdf"
    path.write_text(GRIPPER)
    r = cc.load_robot(str(path), lock={"finger_left": 0.03}, mimic=mimic)
    assert r.dof_names == ("shoulder", "wrist")
    # Pinocchio's parser loads the mimic as a joint of its own: lock it where the mimic puts it
    _compare(r, GRIPPER, False, {"finger_left": 0.03, "finger_right": 0.9 * 0.03 + 0.002}, rng)
    # and the full robot's rows and columns at that configuration are the same numbers
    full = cc.load_robot(str(path))
    q = np.array([0.3, -0.2])
    qf = np.array([0.3, -0.2, 0.03, 0.029])
    assert np.allclose(cc.mass_matrix(r, q), cc.mass_matrix(full, qf)[:2, :2], rtol=0, atol=1e-15)


def example_robot(relative: str):
    """A file of the example-robot-data package, or a skip when it is not installed."""
    import importlib.metadata

    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed (pip install example-robot-data)")
    for f in dist.files or ():
        if str(f).endswith(relative):
            return str(dist.locate_file(f))
    pytest.skip(f"{relative} is not in this version of example-robot-data")


@needs_pin
@pytest.mark.parametrize("floating", [False, True])
def test_lock_on_a_real_humanoid_with_mimic_joints_equals_pinocchio(rng, floating):
    """TALOS (44 DoF, 12 mimic joints in its grippers): lock both grippers' leaders, their mimics
    follow; Pinocchio locks every gripper joint where the mimics put them."""
    path = example_robot("talos_data/robots/talos_full_v2.urdf")
    text = open(path).read()
    lock = {"gripper_left_joint": -0.3, "gripper_right_joint": -0.2, "head_*": 0.1}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every value within its limits: nothing to say
        r = cc.load_robot(path, floating_base=floating, lock=lock)
    full = cc.load_robot(path, floating_base=floating)
    mimics = {b.joint.name: b.joint.mimic for b in full.bodies if b.joint.mimic is not None}
    assert len(mimics) == 12
    values = {"gripper_left_joint": -0.3, "gripper_right_joint": -0.2, "head_1_joint": 0.1, "head_2_joint": 0.1}
    for name, m in mimics.items():
        values[name] = m.multiplier * values[m.joint] + m.offset
    assert r.nv == full.nv - len(values)
    _compare(r, text, floating, values, rng, trials=2)
    enforced = cc.load_robot(path, floating_base=floating, lock=lock, mimic="enforce")
    q = cc.random_configuration(r, rng)
    # every mimic's leader is locked: enforced's A is the identity, whose products are exact on any BLAS
    assert np.array_equal(cc.mass_matrix(enforced, q), cc.mass_matrix(r, q))


def test_lock_refusals(tmp_path, run_cli):
    path = tmp_path / "gripper.urdf"
    path.write_text(GRIPPER)
    with pytest.raises(cc.ModelError, match="matches no movable joint"):
        cc.load_robot(str(path), lock=["elbow*"])
    with pytest.raises(cc.ModelError, match="which is not locked"):
        cc.load_robot(str(path), lock=["finger_right"], mimic="enforce")
    assert cc.load_robot(str(path), lock=["finger_right"]).nv == 3  # a mimic alone, loaded independent
    with pytest.raises(cc.ModelError, match="locked twice"):
        cc.load_robot(str(path), lock={"finger_*": 0.01, "finger_left": 0.02})
    with pytest.warns(cc.ModelWarning, match="outside its limits"):
        cc.load_robot(str(path), lock={"wrist": 3.0})
    assert_one_line_error(run_cli("info", path, "--lock", "nope"), "matches no movable joint")
    assert_one_line_error(run_cli("info", path, "--lock", "wrist=abc"), "not a number")
    r = run_cli("info", path, "--lock", "finger_*=0.01", "--format", "json")
    assert r.code == 0, r


def test_every_robot_command_takes_lock(run_cli):
    for command in ("info", "compute", "verify", "skew", "bench", "simulate", "convert"):
        r = run_cli(command, "--help")
        assert "--lock" in r.out, command


def test_locking_a_loop_joint_is_refused():
    with pytest.raises(cc.ModelError, match="closed loop"):
        cc.load_robot(robot_path("fourbar.yaml"), lock=["crank_joint"])


def test_lock_patterns_match_exactly_the_joints_named():
    movable = ["l_finger_1", "l_finger_2", "l_finger_10", "l_wrist", "r_finger_1", "r_finger_2", "neck", "a[1]"]
    for names in (["l_finger_1", "l_finger_2", "l_finger_10"], ["l_finger_1", "r_finger_1"], ["neck"], ["a[1]"],
                  ["l_finger_1", "l_finger_2", "l_finger_10", "r_finger_1", "r_finger_2"]):
        import fnmatch

        patterns = lock_patterns(names, movable)
        matched = {m for m in movable if any(fnmatch.fnmatchcase(m, p) for p in patterns)}
        assert matched == set(names), (names, patterns)
    assert lock_patterns(["l_finger_1", "l_finger_2", "l_finger_10"], movable) == ["l_finger_*"]
