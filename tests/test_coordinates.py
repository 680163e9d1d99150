"""Changes of coordinates (core paper Sec. 3.3): mimic joints enforced, q_j = a·q_m + b."""

import json

import numpy as np
import pytest

import coriolis_cli as cc
from coriolis_cli.engine.coordinates import evaluation
from coriolis_cli.peers import pinocchio as pinocchio_peer

from .conftest import assert_one_line_error, robot_path

needs_pin = pytest.mark.skipif(not pinocchio_peer.available(), reason="pin (Pinocchio) is not installed")


def _link(name, mass, xyz, i=(0.01, 0.02, 0.02)):
    return (f'<link name="{name}"><inertial><origin xyz="{xyz}"/><mass value="{mass}"/>'
            f'<inertia ixx="{i[0]}" ixy="0" ixz="0" iyy="{i[1]}" iyz="0" izz="{i[2]}"/></inertial></link>')


def _joint(name, parent, child, axis, xyz, mimic="", kind="revolute"):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="0.1 0.2 0.3"/><axis xyz="{axis}"/>'
            f'<limit lower="-1" upper="1" effort="1" velocity="1"/>{mimic}</joint>')


# an arm whose wrist drives a two-finger gripper; finger_r mimics finger_l (a = -1, b = 0.01),
# and tip mimics finger_r (a chain: tip = 0.5 * finger_r + 0.2)
GRIPPER = ("<robot name=\"gripper\">" + '<link name="base"/>' + _link("upper", 2.0, "0.2 0 0") + _link("palm", 0.5, "0.05 0 0")
           + _link("fl", 0.1, "0.02 0.01 0", (1e-4, 2e-4, 2e-4)) + _link("fr", 0.1, "0.02 -0.01 0", (1e-4, 2e-4, 2e-4))
           + _link("tip", 0.05, "0.01 0 0", (5e-5, 5e-5, 5e-5))
           + _joint("shoulder", "base", "upper", "0 0 1", "0 0 0.3") + _joint("wrist", "upper", "palm", "0 1 0", "0.4 0 0")
           + _joint("finger_l", "palm", "fl", "0 1 0", "0.1 0.02 0", kind="prismatic")
           + _joint("finger_r", "palm", "fr", "0 1 0", "0.1 -0.02 0", '<mimic joint="finger_l" multiplier="-1" offset="0.01"/>',
                    kind="prismatic")
           + _joint("tip_joint", "fr", "tip", "0 0 1", "0.04 0 0", '<mimic joint="finger_r" multiplier="0.5" offset="0.2"/>')
           + "</robot>")


@pytest.fixture
def gripper(tmp_path):
    p = tmp_path / "gripper.urdf"
    p.write_text(GRIPPER)
    return str(p)


def _a_matrix():
    A = np.zeros((5, 3))
    A[0, 0] = A[1, 1] = A[2, 2] = 1.0
    A[3, 2] = -1.0  # finger_r = -finger_l + 0.01
    A[4, 2] = -0.5  # tip = 0.5 finger_r + 0.2 = -0.5 finger_l + 0.205
    return A


def test_mimic_enforced_is_the_congruence_of_the_tree(gripper):
    full = cc.load_robot(gripper)
    r = cc.load_robot(gripper, mimic="enforce")
    assert (r.nq, r.nv) == (3, 3) and r.dof_names == ("shoulder", "wrist", "finger_l")
    assert r.coordinates == "mimic: enforce (2 mimic joints)"
    A = _a_matrix()
    assert np.array_equal(evaluation(r).jacobian(None), A)
    rng = np.random.default_rng(0)
    for _ in range(5):
        qb, vb, ab = rng.uniform(-1, 1, 3), rng.uniform(-3, 3, 3), rng.uniform(-3, 3, 3)
        q = np.array([qb[0], qb[1], qb[2], -qb[2] + 0.01, 0.5 * (-qb[2] + 0.01) + 0.2])
        assert np.allclose(evaluation(r).full_configuration(qb), q, atol=1e-15)
        M, Mdot, C = cc.coriolis_matrix(full, q, A @ vb)
        Mb, Mdotb, Cb = cc.coriolis_matrix(r, qb, vb)
        for ours, ref in ((Mb, A.T @ M @ A), (Cb, A.T @ C @ A), (Mdotb, A.T @ Mdot @ A)):
            assert np.abs(ours - ref).max() <= 1e-14 * np.abs(M).max() * 9
        assert np.abs(Mdotb - Cb - Cb.T).max() <= 1e-14 * np.abs(M).max() * 9  # Theorem 1
        G = cc.christoffel(r, qb)
        assert np.abs(np.einsum("ijk,k->ij", G, vb) - Cb).max() <= 1e-14 * np.abs(M).max() * 9
        assert np.abs(G - np.einsum("ai,bj,abg,gk->ijk", A, A, cc.christoffel(full, q), A)).max() <= 1e-15
        tau = cc.inverse_dynamics(full, q, A @ vb, A @ ab)
        assert np.allclose(cc.inverse_dynamics(r, qb, vb, ab), A.T @ tau, rtol=0, atol=1e-13)
        assert np.allclose(cc.gravity_vector(r, qb), A.T @ cc.gravity_vector(full, q), rtol=0, atol=1e-13)


def test_streamed_gamma_of_a_reduced_robot_is_its_gamma(gripper, run_cli, monkeypatch):
    """Γ listed slice by slice (the table above the memory guard) is Γ̄, not the tree's or nothing."""
    r = cc.load_robot(gripper, mimic="enforce")
    q = cc.random_configuration(r, 2)
    G = cc.christoffel(r, q)
    entries, nonzero = cc.christoffel_largest(r, q, 5)
    assert nonzero == np.count_nonzero(G) and len(entries) == 5
    # streamed slices are computed otherwise than the held Γ̄: equal to round-off, not bit for bit
    expected = sorted((abs(v) for v in G.ravel() if v), reverse=True)[:5]
    assert np.allclose([abs(v) for *_, v in entries], expected, rtol=1e-13, atol=0)
    monkeypatch.setattr(cc.engine.data, "GAMMA_MAX_BYTES", 8)  # every Γ is now "too large": streamed
    r_table = run_cli("compute", gripper, "--mimic", "enforce", "--random", "--what", "Gamma", "--top", "3")
    assert r_table.code == 0 and "0 nonzero" not in r_table.out, r_table.out


def test_reduced_robot_data_path_and_batches(gripper):
    r = cc.load_robot(gripper, mimic="enforce")
    data = cc.create_data(r)
    Q = np.stack([cc.random_configuration(r, k) for k in range(4)])
    V = np.ones((4, 3))
    Ms, _, Cs = cc.coriolis_matrix(r, Q, V)
    for k in range(4):
        M, _, C = cc.coriolis_matrix(r, Q[k], V[k], data=data)
        assert M is data.M and np.array_equal(M, Ms[k]) and np.array_equal(C, Cs[k])
    assert cc.christoffel(r, Q[0], data=data) is data.Gamma
    assert cc.mass_matrix(r, Q).shape == (4, 3, 3)


@needs_pin
def test_verify_and_skew_hold_in_the_reduced_coordinates(gripper, run_cli):
    v = run_cli("verify", gripper, "--mimic", "enforce", "--trials", "10", "--ref-trials", "3", "--format", "json")
    assert v.code == 0, v.out
    checks = {c["key"]: c for c in json.loads(v.out)["robots"][0]["checks"]}
    for key in ("a", "b", "c", "d", "e", "f1", "f2", "g", "j", "l"):
        assert checks[key]["passed"] is True, checks[key]
    s = run_cli("skew", gripper, "--mimic", "enforce", "--format", "json")
    assert s.code == 0 and json.loads(s.out)["as_expected"]


def test_every_command_takes_a_reduced_robot(gripper, run_cli):
    info = run_cli("info", gripper, "--mimic", "enforce", "--format", "json")
    rec = json.loads(info.out)
    assert rec["coordinates"] == "mimic: enforce (2 mimic joints)" and rec["nv"] == 3
    assert json.loads(run_cli("info", gripper, "--format", "json").out)["coordinates"] == "mimic: independent"
    c = run_cli("compute", gripper, "--mimic", "enforce", "--random", "--what", "M,C,Gamma,g,tau", "--format", "json")
    assert c.code == 0 and np.array(json.loads(c.out)["Gamma"]).shape == (3, 3, 3)
    assert run_cli("compute", gripper, "--mimic", "enforce", "--random", "--what", "Gamma").code == 0
    b = run_cli("bench", gripper, "--mimic", "enforce", "--repeat", "3", "--format", "json")
    assert b.code == 0 and json.loads(b.out)["systems"][0]["nv"] == 3


def test_mimic_errors_in_enforce_mode(tmp_path, run_cli):
    p = tmp_path / "ghost.urdf"
    p.write_text(GRIPPER.replace('<mimic joint="finger_l"', '<mimic joint="ghost"'))
    assert_one_line_error(run_cli("info", p, "--mimic", "enforce"), "mimics joint 'ghost', which does not exist")
    assert run_cli("info", p).code == 0  # independent: a warning, loaded as a DoF of its own
    cyc = tmp_path / "cycle.urdf"
    cyc.write_text(GRIPPER.replace('<limit lower="-1" upper="1" effort="1" velocity="1"/></joint><joint name="finger_r"',
                                   '<limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="tip_joint"/></joint>'
                                   '<joint name="finger_r"', 1))
    assert cyc.read_text() != GRIPPER
    assert_one_line_error(run_cli("info", cyc, "--mimic", "enforce"), "mimic joints form a cycle")
    with pytest.raises(cc.ModelError, match="mimic must be one of"):
        cc.load_robot(str(p), mimic="sometimes")


# ---- floating-base velocity representations --------------------------------------------------------
@pytest.mark.parametrize("representation", ["mixed", "inertial"])
def test_base_velocity_representations_are_the_body_twist_mapped(representation):
    from coriolis_cli.model.geometry import quat_to_matrix
    from coriolis_cli.peers import finite_differences as fd

    body = cc.load_robot(robot_path("quadruped.urdf"), floating_base=True)
    r = cc.load_robot(robot_path("quadruped.urdf"), floating_base=True, base_velocity=representation)
    assert r.coordinates == f"base velocity: {representation}" and (r.nq, r.nv) == (body.nq, body.nv)
    rng = np.random.default_rng(1)
    for _ in range(4):
        q, nu = cc.random_configuration(r, rng), rng.uniform(-2, 2, r.nv)
        R, p = quat_to_matrix(q[3:7]), q[0:3]
        v, w = nu[0:3], nu[3:6]
        # the body twist of the same motion: ᴮω = Rᵀ ᴬω; ᴮv = Rᵀ ṗ with ṗ = v (mixed) or v + ω × p (inertial)
        pdot = v if representation == "mixed" else v + np.cross(w, p)
        nu_body = np.concatenate([R.T @ pdot, R.T @ w, nu[6:]])
        A = evaluation(r).jacobian(q)
        assert np.allclose(A @ nu, nu_body, atol=1e-14)
        M, Mdot, C = cc.coriolis_matrix(r, q, nu)
        Mb, _, Cb = cc.coriolis_matrix(body, q, nu_body)
        scale = np.abs(M).max() * max(1.0, np.abs(nu).max())
        assert np.abs(M - A.T @ Mb @ A).max() <= 1e-13 * np.abs(M).max()
        assert np.abs(C @ nu - A.T @ Cb @ nu_body - A.T @ Mb @ evaluation(r).jacobian_rate(q, nu) @ nu).max() <= 1e-12 * scale
        assert np.abs(Mdot - C - C.T).max() <= 1e-13 * scale
        # Ṁ is the true time derivative of M along the motion (integrated pose), not only C + Cᵀ
        assert np.abs(Mdot - fd.mdot_fd(r, cc.mass_matrix, q, nu)).max() <= 1e-8 * scale
        G = cc.christoffel(r, q)  # generalized speeds: Γ[:, :, k] = C(q, e_k)
        assert np.abs(G - np.stack([cc.coriolis_matrix(r, q, e)[2] for e in np.eye(r.nv)], axis=2)).max() <= 1e-12 * np.abs(M).max()
        # the equations of motion do not depend on the representation: τ̄ = Aᵀ τ
        tau = cc.inverse_dynamics(r, q, nu, np.zeros(r.nv))
        tau_b = cc.inverse_dynamics(body, q, nu_body, evaluation(r).jacobian_rate(q, nu) @ nu)
        assert np.abs(tau - A.T @ tau_b).max() <= 1e-12 * scale * max(1.0, np.abs(nu).max())


@pytest.mark.parametrize("representation", ["mixed", "inertial"])
def test_base_velocity_block_path_equals_the_dense_formulas(representation):
    """engine.base_velocity changes only the base's rows and columns; the dense eqs. 24-27 with
    the map's A and Ȧ(e_k) must give the same M̄, Ṁ̄, C̄ and Γ̄ entry by entry."""
    body = cc.load_robot(robot_path("humanoid.urdf"), floating_base=True)
    r = cc.load_robot(robot_path("humanoid.urdf"), floating_base=True, base_velocity=representation)
    rng = np.random.default_rng(4)
    q, nu = cc.random_configuration(r, rng), rng.uniform(-2, 2, r.nv)
    A, Adot, D = evaluation(r).jacobian(q), evaluation(r).jacobian_rate(q, nu), evaluation(r).rate_basis(q)
    assert np.allclose(Adot, D @ nu, rtol=0, atol=1e-14)  # Ȧ is linear in ν
    M, Mdot, C = cc.coriolis_matrix(body, q, A @ nu)
    G = cc.christoffel(body, q)
    want = {"M": A.T @ M @ A, "C": A.T @ C @ A + A.T @ M @ Adot,
            "Mdot": A.T @ Mdot @ A + A.T @ M @ Adot + (A.T @ M @ Adot).T,
            "Gamma": (np.einsum("ai,bj,ck,abc->ijk", A, A, A, G, optimize=True)
                      + np.einsum("ai,ab,bjk->ijk", A, M, D, optimize=True))}
    got = dict(zip(("M", "Mdot", "C"), cc.coriolis_matrix(r, q, nu)))
    got["Gamma"] = cc.christoffel(r, q)
    data = cc.create_data(r)
    assert np.array_equal(cc.christoffel(r, q, data=data), got["Gamma"])
    scale = np.abs(want["M"]).max() * max(1.0, np.abs(nu).max())
    for key in want:
        assert np.abs(got[key] - want[key]).max() <= 1e-13 * scale, key


@needs_pin
@pytest.mark.parametrize("representation", ["mixed", "inertial"])
def test_verify_passes_in_every_base_velocity_representation(run_cli, representation):
    v = run_cli("verify", robot_path("humanoid.urdf"), "--floating-base", "--base-velocity", representation,
                "--trials", "8", "--ref-trials", "3", "--format", "json")
    assert v.code == 0, v.out
    checks = {c["key"]: c for c in json.loads(v.out)["robots"][0]["checks"]}
    for key in ("a", "b", "c", "d", "f2", "g", "j"):
        assert checks[key]["passed"] is True, checks[key]


def test_base_velocity_needs_a_floating_base(run_cli):
    assert_one_line_error(run_cli("info", robot_path("panda.urdf"), "--base-velocity", "mixed"), "need a floating base")
    assert_one_line_error(run_cli("info", robot_path("quadruped.urdf"), "--floating-base", "--base-velocity", "mixed",
                                  "--mimic", "enforce"), "one change of coordinates at a time")


def test_unknown_top_level_yaml_keys_are_errors(tmp_path):
    """A section we do not read (here a misspelt `loops:`) must not be ignored silently."""
    p = tmp_path / "loop.yaml"
    p.write_text("name: x\nlinks:\n  - name: a\n  - {name: b, mass: 1.0, com: [0.1, 0, 0], inertia: [0.01, 0, 0, 0.01, 0, 0.01]}\n"
                 "joints:\n  - {name: j, type: revolute, parent: a, child: b, axis: [0, 0, 1]}\n"
                 "loop:\n  - {name: pin, type: revolute, parent: b, child: a}\n")
    with pytest.raises(cc.ModelError, match="unknown top-level key 'loop'"):
        cc.load_robot(str(p))


def _idyntree_available() -> bool:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", "import idyntree.bindings"], capture_output=True, timeout=60).returncode == 0


@pytest.mark.parametrize("representation", ["body", "mixed", "inertial"])
def test_base_velocity_representations_match_idyntree(tmp_path, representation):
    """iDynTree's free-floating M and bias forces (C ν + g) in BODY_FIXED, MIXED, INERTIAL_FIXED."""
    import os
    import subprocess
    import sys

    from coriolis_cli.model.geometry import quat_to_matrix
    from coriolis_cli.model.urdf import to_urdf

    if not _idyntree_available():
        pytest.skip("idyntree is not installed")
    r = cc.load_robot(robot_path("quadruped.urdf"), floating_base=True, base_velocity=representation)
    urdf = tmp_path / "q.urdf"
    urdf.write_text(to_urdf(r.description))
    joints = list(r.dof_names[6:])
    rng = np.random.default_rng(3)
    for _ in range(2):
        q, nu = cc.random_configuration(r, rng), rng.uniform(-1, 1, r.nv)
        H = np.eye(4)
        H[:3, :3], H[:3, 3] = quat_to_matrix(q[3:7]), q[:3]
        request = {"urdf": str(urdf), "base": r.base_link, "representation": representation, "H": H.tolist(),
                   "joints": joints, "s": {n: float(q[r.config_names.index(n)]) for n in joints},
                   "ds": {n: float(nu[r.dof_names.index(n)]) for n in joints}, "base_velocity": nu[:6].tolist(),
                   "gravity": [0.0, 0.0, -9.81]}
        out = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "idyntree_reference.py")],
                             input=json.dumps(request), capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        ref = json.loads(out.stdout)
        order = list(range(6)) + [r.dof_names.index(n) for n in ref["names"]]
        M = cc.mass_matrix(r, q)[np.ix_(order, order)]
        bias = cc.inverse_dynamics(r, q, nu, np.zeros(r.nv))[order]  # C ν + g
        assert np.abs(M - np.array(ref["M"])).max() <= 1e-13 * np.abs(M).max()
        assert np.abs(bias - np.array(ref["bias"])).max() <= 1e-13 * np.abs(bias).max()
