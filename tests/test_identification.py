"""Identification (the library) on recordings of simulated robots made independently of this
project: MuJoCo simulates a Panda whose links 3 to 5 are 20 % heavier than the URDF says and whose
last link carries a 1 kg payload; the joint torques get noise. Fitted from the URDF's prior."""

from __future__ import annotations

import json

import numpy as np
import pytest

import coriolis_cli as cc

pytest.importorskip("mujoco", reason="mujoco is not installed")
pytest.importorskip("pyarrow", reason="the recordings extra is not installed")
pytest.importorskip("cvxpy", reason="the identify extra is not installed")

NOISE = 0.02  # N·m

import mujoco  # noqa: E402
from dataclasses import replace
from coriolis_cli.model.loader import load_description
from coriolis_cli.peers.mujoco import MujocoPeer

def true_panda():
    desc = load_description("panda")
    links = []
    for l in desc.links:
        i = l.inertial
        if i is not None and l.name in ("panda_link3", "panda_link4", "panda_link5"):
            i = replace(i, mass=1.2 * i.mass, inertia=tuple(1.2 * x for x in i.inertia))
        if i is not None and l.name == "panda_link7":  # a 1 kg payload 0.1 m out
            m0, c0 = i.mass, np.array(i.xyz); mp, cp = 1.0, np.array([0.05, 0.02, 0.15])
            m = m0 + mp; c = (m0 * c0 + mp * cp) / m
            I0 = np.array([[i.inertia[0], i.inertia[1], i.inertia[2]], [i.inertia[1], i.inertia[3], i.inertia[4]], [i.inertia[2], i.inertia[4], i.inertia[5]]])
            def shift(I, mm, d): return I + mm * (d @ d * np.eye(3) - np.outer(d, d))
            Ic = shift(I0, m0, c0 - c) + shift(np.eye(3) * 1e-3, mp, cp - c)
            i = replace(i, mass=m, xyz=tuple(c), inertia=(Ic[0,0], Ic[0,1], Ic[0,2], Ic[1,1], Ic[1,2], Ic[2,2]))
        links.append(replace(l, inertial=i))
    return replace(desc, links=tuple(links))

def simulate(desc, seconds=8.0, seed=0, noise=0.02, damping=None, armature=None, coulomb=None):
    """(t, q, q̇, τ + noise) of a PD-tracked multisine run: τ is held over each RK4 step. ``damping``
    (per joint) is MuJoCo's viscous joint damping, ``armature`` its dof_armature (the peer built
    from a URDF-like description carries none). ``coulomb`` (per joint) is dry friction
    c·tanh(q̇ / 1e-3 rad/s), applied with τ and held over the step as τ is (MuJoCo's frictionloss
    is a soft constraint, viscous at low speed, not Coulomb's law)."""
    from coriolis_cli.model.tree import build_model
    robot = build_model(desc)
    peer = MujocoPeer(robot)
    m, d = peer.m, peer.d
    m.opt.timestep = 1e-3
    m.opt.integrator = int(mujoco.mjtIntegrator.mjINT_RK4)  # continuous dynamics, τ held over each step
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT) | int(mujoco.mjtDisableBit.mjDSBL_LIMIT)
    order = [da for _, _, _, _, da, _ in peer.layout.joints]
    if damping is not None:
        m.dof_damping[order] = damping
    if armature is not None:
        m.dof_armature[order] = armature
    dry = np.zeros(m.nv)
    if coulomb is not None:
        dry[order] = coulomb
    rng = np.random.default_rng(seed)
    freqs = rng.uniform(0.1, 0.6, (m.nq, 3)); amps = rng.uniform(0.2, 0.5, (m.nq, 3)) / 2; ph = rng.uniform(0, 6, (m.nq, 3))
    steps = int(seconds / m.opt.timestep)
    t, Q, V, TAU = np.zeros(steps), np.zeros((steps, 7)), np.zeros((steps, 7)), np.zeros((steps, 7))
    q0 = m.qpos0.copy()
    mass = np.zeros((m.nv, m.nv))
    w = 2 * np.pi * freqs
    d.qpos[:] = q0 + np.sum(amps * np.sin(ph), axis=1)  # on the trajectory, as an excitation run starts
    d.qvel[:] = np.sum(amps * w * np.cos(ph), axis=1)
    for k in range(steps):
        s = k * m.opt.timestep
        w = 2 * np.pi * freqs
        target = q0 + np.sum(amps * np.sin(w * s + ph), axis=1)
        vt = np.sum(amps * w * np.cos(w * s + ph), axis=1)
        at = -np.sum(amps * w * w * np.sin(w * s + ph), axis=1)
        mujoco.mj_forward(m, d)
        mujoco.mj_fullM(m, d, mass)
        friction = dry * np.tanh(d.qvel / 1e-3)
        tau = mass @ (at + 100.0 * (target - d.qpos) + 20.0 * (vt - d.qvel)) + d.qfrc_bias + friction
        d.qfrc_applied[:] = tau - friction
        t[k], Q[k], V[k], TAU[k] = s, (d.qpos - q0)[order], d.qvel[order], tau[order]
        mujoco.mj_step(m, d)
    TAU_noisy = TAU + noise * rng.normal(size=TAU.shape)
    return t, Q, V, TAU_noisy

def write(path, robot, t, Q, V, TAU):
    import pyarrow as pa, pyarrow.parquet as pq
    cols = {"time": t}
    for j, name in enumerate(robot.dof_names):
        cols[f"q/{name}"], cols[f"qd/{name}"], cols[f"tau/{name}"] = Q[:, j], V[:, j], TAU[:, j]
    pq.write_table(pa.table(cols), path)


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    from coriolis_cli.model.tree import build_model

    prior = cc.load_robot("panda")
    folder = tmp_path_factory.mktemp("identify")
    paths = {}
    # one scalar row per sample: the energy form needs a longer run for the same spread (8 s give 1.4-2.2x)
    for seed, name, seconds in ((0, "fit", 8.0), (1, "validate", 4.0), (2, "long", 32.0)):
        paths[name] = str(folder / f"{name}.parquet")
        write(paths[name], prior, *simulate(true_panda(), seconds=seconds, seed=seed, noise=NOISE))
    return prior, build_model(true_panda()), paths


@pytest.fixture(scope="module")
def fits(recordings):
    from coriolis_cli.estimation import identification as ID

    prior, truth, paths = recordings
    out = {}
    for form in ID.FORMS:
        equations = ID.accumulate(prior, paths["long" if form == "energy" else "fit"], form=form)
        out[form] = {method: ID.fit(prior, equations, method) for method in ID.METHODS}
    return out


@pytest.mark.parametrize("form", ["torque", "momentum", "energy"])
def test_fits_explain_validation_torques_and_recover_what_is_identifiable(recordings, fits, form):
    from coriolis_cli.estimation import identification as ID
    from coriolis_cli.model.parameters import inertial_parameters

    prior, truth, paths = recordings
    theta_true = inertial_parameters(truth)
    truth_rms = ID.torque_rms(prior, paths["validate"], theta_true)  # the noise as validation sees it
    assert np.all(truth_rms <= 1.05 * NOISE / np.sqrt(2))  # a held τ is the mean of two samples
    prior_rms = ID.torque_rms(prior, paths["validate"], inertial_parameters(prior))
    for method, fit in fits[form].items():
        assert fit.base_parameters < len(theta_true)  # not every parameter is identifiable
        rms = ID.torque_rms(prior, paths["validate"], fit.theta)
        assert np.all(rms <= 1.2 * truth_rms), (form, method, rms / truth_rms)
        assert np.all(rms < 0.2 * prior_rms + 2 * NOISE)
        if method == "consistent":
            assert ID.physically_consistent(fit.theta)
        # the payload's first moment about the last joint's axis (z), within 5 %: identifiable
        h, h_true = fit.theta[61:63], theta_true[61:63]
        assert np.linalg.norm(h - h_true) <= 0.05 * np.linalg.norm(h_true), (form, method)
        g = np.zeros(len(fit.scales))
        g[61] = 1.0
        assert fit.identifiable(g) and np.isfinite(fit.std(g))


def test_unidentifiable_parameters_are_named_not_invented(recordings, fits):
    from coriolis_cli.estimation import identification as ID

    prior, truth, paths = recordings
    fit = fits["torque"]["ols"]
    missing = ID.unidentifiable(prior, fit)
    # the last link's mass alone: a payload there or on the link before moves the same torques
    assert "m" in missing["panda_link7"]
    assert set(missing["panda_link1"]) >= {"m", "mcx", "mcy", "mcz"}  # the first joint turns about the vertical
    g = np.zeros(len(fit.scales))
    g[60] = 1.0  # m of panda_link7
    assert not fit.identifiable(g) and np.isnan(fit.std(g))


def test_torque_and_momentum_forms_agree_within_the_noise(recordings, fits):
    """The two fits predict the same torques on the validation run to within the noise, and
    their identifiable combinations agree to within a few standard deviations."""
    from coriolis_cli.estimation import identification as ID

    prior, truth, paths = recordings
    a, b = fits["torque"]["ols"], fits["momentum"]["ols"]
    v = ID.validate(prior, paths["validate"], {"torque": (a.theta, None), "momentum": (b.theta, None)})
    gap = np.sqrt(np.mean((v.predicted["torque"] - v.predicted["momentum"]) ** 2, axis=0))
    assert np.all(gap <= NOISE), gap
def test_pseudo_inertia_tells_consistent_parameters():
    from coriolis_cli.estimation.identification import physically_consistent
    from coriolis_cli.model.parameters import inertial_parameters

    theta = inertial_parameters(cc.load_robot("panda"))
    assert physically_consistent(theta)
    bad = theta.copy()
    bad[0] = -1.0  # a negative mass
    assert not physically_consistent(bad)
    bad = theta.copy()
    bad[4] = 10 * (bad[6] + bad[9])  # Ixx beyond Iyy + Izz: the triangle inequality broken
    assert not physically_consistent(bad)


def test_identify_command_writes_a_robot_that_verifies_and_reports_json(recordings, run_cli, tmp_path):
    import json

    prior, truth, paths = recordings
    out, plot = tmp_path / "identified.yaml", tmp_path / "torque.png"
    # the plain least squares leave two bodies' inertias inconsistent: written only when asked
    r = run_cli("identify", "panda", paths["fit"], "--validate", paths["validate"], "--method", "ols", "-o", out,
                "--plot", plot, "--format", "json", "--allow-inconsistent")
    assert r.code == 0, r.err
    report = json.loads(r.out)
    assert report["base_parameters"] == 43 and report["parameters"] == 70
    identified = np.array(report["validation"]["rms_identified"])
    assert np.all(identified <= 1.2 * NOISE / np.sqrt(2) * 1.05)
    assert "m" in report["not_identifiable"]["panda_link7"]
    assert plot.stat().st_size > 10_000
    assert run_cli("verify", out).code == 0
    # the written robot predicts the validation torques as the fit did
    from coriolis_cli.estimation import identification as ID
    from coriolis_cli.model.parameters import inertial_parameters

    written = cc.load_robot(str(out))
    rms = ID.torque_rms(written, paths["validate"], inertial_parameters(written))
    assert np.allclose(rms, identified, rtol=1e-6)


def test_identify_refuses_what_it_cannot_use_in_one_line(recordings, run_cli, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    prior, truth, paths = recordings
    no_effort = tmp_path / "no_effort.parquet"
    t = np.arange(100) * 1e-3
    pq.write_table(pa.table({"time": t, **{f"q/{n}": 0.1 * np.sin(t) for n in prior.dof_names}}), no_effort)
    for args, words in (((no_effort,), "no effort"),
                        ((paths["fit"], "-o", tmp_path / "x.txt"), "unknown extension"),
                        ((paths["fit"], "--form", "energy", "--cutoff", "-1"), "cutoff")):
        r = run_cli("identify", "panda", *args, "--method", "ols")
        assert r.code == 2 and words in r.err and len(r.err.strip().splitlines()) == 1, r.err
    assert not (tmp_path / "x.txt").exists()


def test_friction_is_identified_with_the_inertias(tmp_path):
    """MuJoCo's joint damping and a dry friction on the true robot: the Coulomb-viscous fit
    recovers both per joint with the inertias, in the torque and the momentum form; it explains
    the torques as well as the true parameters do (sign(q̇) differs from the run's smooth dry
    friction only where q̇ crosses zero); fits with less friction cannot."""
    from coriolis_cli.estimation import identification as ID
    from coriolis_cli.model.parameters import inertial_parameters
    from coriolis_cli.model.tree import build_model

    prior = cc.load_robot("panda")
    damping, dry = np.linspace(0.3, 0.9, 7), np.linspace(0.5, 1.5, 7)
    path = str(tmp_path / "friction.parquet")
    write(path, prior, *simulate(true_panda(), seconds=8.0, seed=3, noise=NOISE, damping=damping, coulomb=dry))
    truth = ID.torque_rms(prior, path, inertial_parameters(build_model(true_panda())), np.r_[damping, dry],
                          "coulomb-viscous")
    # the torque form's q̈ is a Savitzky-Golay fit, which smooths the jump in q̈ where the dry
    # friction flips with q̇: on joint 7 (least inertia, most friction) b comes 8 % high, 1 % in
    # the momentum form, which needs no q̈
    for form, b_tolerance in (("torque", 0.10), ("momentum", 0.02)):
        fit = ID.fit(prior, ID.accumulate(prior, path, form=form, friction="coulomb-viscous"), "ols",
                     "coulomb-viscous")
        b, c = fit.friction[:7], fit.friction[7:]
        assert np.allclose(b, damping, rtol=b_tolerance), (form, b / damping)
        assert np.allclose(c, dry, rtol=0.02), (form, c / dry)
        rms = ID.torque_rms(prior, path, fit.theta, fit.friction, "coulomb-viscous")
        assert np.all(rms <= 1.02 * truth), (form, rms / truth)
    viscous = ID.fit(prior, ID.accumulate(prior, path, friction="viscous"), "ols", "viscous")
    assert np.all(ID.torque_rms(prior, path, viscous.theta, viscous.friction, "viscous") > 2 * rms)
    without = ID.fit(prior, ID.accumulate(prior, path), "ols")
    assert np.all(ID.torque_rms(prior, path, without.theta) > 2 * rms)


def test_identified_friction_travels_through_the_robot_file_to_observe_compute_and_simulate(tmp_path, run_cli):
    """identify --friction coulomb-viscous -o writes <dynamics damping friction>; observe, compute
    --recording and simulate then use it and say so, and --no-friction leaves it out. On a
    contact-free run of a robot with joint friction, the momentum residual without friction is
    the friction itself (up to 1.6 N·m), which the thresholds must then clear, so a push of that
    size would pass unseen."""
    from coriolis_cli.model.friction import STATIC_SPEED
    from coriolis_cli.estimation.observers import observe

    prior = cc.load_robot("panda")
    damping, dry = np.array([0.5, 0.5, 0.4, 0.4, 0.2, 0.2, 0.1]), np.array([1.0, 1.0, 0.8, 0.8, 0.4, 0.4, 0.2])
    fit_path, quiet_path = str(tmp_path / "fit.parquet"), str(tmp_path / "quiet.parquet")
    write(fit_path, prior, *simulate(true_panda(), seconds=8.0, seed=0, noise=NOISE, damping=damping, coulomb=dry))
    write(quiet_path, prior, *simulate(true_panda(), seconds=6.0, seed=1, noise=NOISE, damping=damping, coulomb=dry))
    out = tmp_path / "identified.urdf"
    r = run_cli("identify", "panda", fit_path, "--friction", "coulomb-viscous", "-o", out)
    assert r.code == 0, r
    robot = cc.load_robot(str(out))
    assert np.allclose(robot.joint_friction[:, 0], damping, rtol=0.10), robot.joint_friction[:, 0] / damping
    assert np.allclose(robot.joint_friction[:, 1], dry, rtol=0.02), robot.joint_friction[:, 1] / dry
    again = tmp_path / "identified.yaml"  # the same through YAML
    assert run_cli("convert", out, "-o", again).code == 0
    assert np.array_equal(cc.load_robot(str(again)).joint_friction, robot.joint_friction)

    with_friction, without = observe(robot, quiet_path), observe(robot, quiet_path, friction=False)
    assert not with_friction.events and not without.events
    qd = cc.recordings.load_recording(quiet_path, robot).qd
    moving = np.abs(qd) > 5 * STATIC_SPEED  # kinetic friction, modelled; below, static friction, allowed for
    assert len(qd) == len(with_friction.r) and np.abs(with_friction.r)[moving].max() < 0.1
    assert np.all(np.abs(with_friction.r) <= 0.1 + robot.joint_friction[:, 1])
    assert np.all(np.abs(without.r).max(axis=0) > 0.7 * dry)  # the unmodelled dry friction, on every joint
    assert np.all(without.base > 3 * with_friction.base) and np.all(without.base > dry)  # thresholds: N·m
    r = run_cli("observe", out, quiet_path)
    assert r.code == 0 and "0 events" in r.out and "note: the residual takes away the joints' viscous and Coulomb" \
        " friction from the robot file" in r.err, r

    table = tmp_path / "tau.parquet"
    import pyarrow.parquet as pq

    recorded = pq.read_table(quiet_path).to_pydict()
    rms = {}
    for extra in ((), ("--no-friction",)):
        r = run_cli("compute", out, "--recording", quiet_path, "--what", "tau", "-o", table, "--force", *extra)
        assert r.code == 0 and (("τ includes the joints' viscous and Coulomb friction" in r.err) == (not extra)), r
        computed = pq.read_table(table).to_pydict()
        rms[extra] = np.sqrt(np.mean([(np.array(computed[f"tau/{j}"]) - np.array(recorded[f"tau/{j}"])) ** 2
                                       for j in robot.dof_names], axis=1))
    assert np.all(rms[()] < 0.15) and np.all(rms[("--no-friction",)] > 3 * rms[()]), rms

    runs = [run_cli("simulate", out, "--duration", "0.5", "--format", "json", *extra)
            for extra in ((), ("--no-friction",))]
    assert all(r.code == 0 for r in runs) and "note: the simulated robot has" in runs[0].err
    assert "note:" not in runs[1].err
    assert json.loads(runs[0].out)["tau"] != json.loads(runs[1].out)["tau"]


def test_motor_currents_with_drive_gains_identify_as_the_torques_do(recordings, run_cli, tmp_path):
    """A log of motor currents (τ = k_t · N · i + offset per joint), read with --effort-scale as a
    YAML of drive gains: the same fit and the same validation as the torques themselves."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    prior, _, paths = recordings
    torque_constant = np.array([0.08, 0.08, 0.06, 0.06, 0.04, 0.04, 0.03])
    gear_ratio = np.array([100, 100, 100, 100, 50, 50, 50])
    offset = np.array([0.3, -0.2, 0.0, 0.1, 0.0, -0.05, 0.02])
    gains = tmp_path / "drives.yaml"
    gains.write_text("".join(f"{j}: {{torque_constant: {k}, gear_ratio: {n}, offset: {o}}}\n"
                             for j, k, n, o in zip(prior.dof_names, torque_constant, gear_ratio, offset)))
    currents = {}
    for name in ("fit", "validate"):
        table = pq.read_table(paths[name]).to_pydict()
        for j, joint in enumerate(prior.dof_names):
            table[f"tau/{joint}"] = (np.array(table[f"tau/{joint}"]) - offset[j]) / (torque_constant[j] * gear_ratio[j])
        currents[name] = str(tmp_path / f"{name}_currents.parquet")
        pq.write_table(pa.table(table), currents[name])
    reports = []
    for fit_path, val_path, extra in ((paths["fit"], paths["validate"], ()),
                                      (currents["fit"], currents["validate"], ("--effort-scale", gains))):
        r = run_cli("identify", "panda", fit_path, "--validate", val_path, "--method", "ols", "--format", "json", *extra)
        assert r.code == 0, r
        reports.append(json.loads(r.out))
    torques, scaled = (np.array(rep["validation"]["rms_identified"]) for rep in reports)
    assert np.allclose(scaled, torques, rtol=1e-6), (scaled, torques)
    r = run_cli("identify", "panda", currents["fit"], "--method", "ols", "--effort-scale", "panda_joint9=2")
    assert r.code == 2 and "the robot has no joint 'panda_joint9'" in r.err and len(r.err.strip().splitlines()) == 1
    r = run_cli("observe", "panda", currents["validate"], "--effort-scale", gains, "--format", "json")
    assert r.code == 0 and json.loads(r.out)["events"] == [], r
    # the scales alone, and the offsets fitted: what observe then takes with --effort-offset
    scales = ",".join(f"{j}={k * n}" for j, k, n in zip(prior.dof_names, torque_constant, gear_ratio))
    r = run_cli("identify", "panda", currents["fit"], "--method", "ols", "--effort-scale", scales, "--fit-offset")
    assert r.code == 0, r
    said = r.err.split("--effort-offset ")[1].split()[0]
    fitted = np.array([float(part.split("=")[1]) for part in said.split(",")])
    assert np.allclose(fitted, offset, atol=NOISE), (fitted, offset)  # within the torque noise: 0.017 N·m on joint 2
    r = run_cli("observe", "panda", currents["validate"], "--effort-scale", scales, "--effort-offset", said,
                "--format", "json")
    assert r.code == 0 and json.loads(r.out)["events"] == [], r


def test_one_run_is_fitted_on_its_first_part_and_validated_on_the_rest(recordings, run_cli):
    """--validate-split 0.33: the last third of the one recording is held out, not fitted; its
    torques are explained as well as a separate validation run's."""
    prior, _, paths = recordings
    r = run_cli("identify", "panda", paths["fit"], "--validate-split", "0.33", "--method", "ols", "--format", "json")
    assert r.code == 0, r
    report = json.loads(r.out)
    held_out, fitted = report["validation"]["samples"], report["samples"]
    assert held_out + fitted == 8000 and abs(held_out - 0.33 * 8000) <= 2, (held_out, fitted)
    assert "its last 33% (2.64 s from t = 5.359" in report["validation"]["recording"]
    rms = np.array(report["validation"]["rms_identified"])
    assert np.all(rms <= 1.2 * NOISE / np.sqrt(2) * 1.05), rms  # as on a separate run: the noise, no more
    for bad, message in (("1.5", "between 0 and 1"), ("0", "between 0 and 1")):
        r = run_cli("identify", "panda", paths["fit"], "--validate-split", bad)
        assert r.code == 2 and message in r.err and len(r.err.strip().splitlines()) == 1, r
    r = run_cli("identify", "panda", paths["fit"], "--validate-split", "0.3", "--validate", paths["validate"])
    assert r.code == 2 and "give one" in r.err


def test_on_a_log_with_jitter_and_repeats_the_torque_form_does_not_lose_to_the_momentum_form(run_cli, tmp_path):
    """A run logged as a PC logs it (tests/realistic_logs.py): with the defaults (q̈ fitted on the
    stamps over 0.1 s, repeats dropped) the torque form validates as well as the momentum form,
    which needs no q̈, both at the torque noise; 11 samples made the torque form up to 21 times worse."""
    from .realistic_logs import TORQUE_NOISE, as_logged

    prior = cc.load_robot("panda")
    paths = {}
    for seed, name, seconds in ((0, "fit", 8.0), (1, "validate", 4.0)):
        t, Q, V, TAU = simulate(true_panda(), seconds=seconds, seed=seed, noise=0.0)
        stamps, q, qd, tau, _ = as_logged(t, Q, V, TAU, seed=seed)
        paths[name] = str(tmp_path / f"{name}.parquet")
        write(paths[name], prior, stamps, q, qd, tau)
    rms = {}
    for form in ("torque", "momentum"):
        r = run_cli("identify", "panda", paths["fit"], "--validate", paths["validate"], "--form", form, "--method", "ols",
                    "--format", "json")
        assert r.code == 0, r
        rms[form] = np.array(json.loads(r.out)["validation"]["rms_identified"])
    assert np.all(rms["torque"] <= 1.1 * rms["momentum"]), rms
    assert np.all(rms["torque"] < 2.5 * TORQUE_NOISE), rms  # the noise (0.05 N·m), about


class _EvaluationClock:
    """excite's search clock, read as a count: each reading is a second later, so that --seconds N
    stops the search after N evaluations of the condition number, whatever the machine's load (on
    the wall clock, 8 s gave 172 evaluations on one run and 326 on the next)."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        self.now += 1.0
        return self.now


def test_excite_designs_a_trajectory_within_the_limits_that_lowers_the_condition_number(run_cli, tmp_path, monkeypatch):
    import re

    import pyarrow.csv as pcsv

    from coriolis_cli.estimation import excitation

    monkeypatch.setattr(excitation, "time", _EvaluationClock())
    out = tmp_path / "excitation.csv"
    r = run_cli("excite", "panda", "-o", out, "--period", "4", "--rate", "250", "--harmonics", "3", "--seconds", "60")
    assert r.code == 0, r.err
    reached, start = (float(x) for x in re.search(r"condition number (\S+) \(from (\S+) ", r.out).groups())
    # 60 evaluations: the gradient in the 42 coefficients (43), then the line search along it, whose
    # first step takes the condition number from 3.3e4 to 5.2e3 with every BLAS kernel tried
    assert reached < start / 2, (reached, start)
    table = pcsv.read_csv(out).to_pydict()
    robot = cc.load_robot("panda")
    assert len(table["time"]) == 1000
    for body in robot.bodies:
        lim, name = body.joint.limits, body.joint.name
        q, qd, qdd = (np.array(table[f"{k}/{name}"]) for k in ("q", "qd", "qdd"))
        assert lim.lower < q.min() and q.max() < lim.upper
        assert np.abs(qd).max() <= lim.velocity * (1 + 1e-9) and np.abs(qdd).max() <= 5.0 * (1 + 1e-9)
        assert np.allclose(np.gradient(q, 1 / 250)[5:-5], qd[5:-5], atol=1e-3)
    # the file is a recording this project reads (its q̈ columns aside)
    from coriolis_cli.recordings import load_recording

    assert load_recording(str(out), robot).q.shape == (1000, 7)


def test_armature_is_known_not_fitted(tmp_path):
    """Joints with rotor inertia (MuJoCo's armature, in the prior and the true robot alike): the
    torque and momentum forms take it as known, and the fits still explain the torques."""
    from coriolis_cli.estimation import identification as ID
    from coriolis_cli.model.parameters import inertial_parameters
    from coriolis_cli.model.tree import build_model

    def with_armature(desc):
        return replace(desc, joints=tuple(replace(j, armature=(0.1,)) if j.type == "revolute" else j
                                          for j in desc.joints))

    prior, truth = build_model(with_armature(load_description("panda"))), build_model(with_armature(true_panda()))
    path = str(tmp_path / "armature.parquet")
    write(path, prior, *simulate(true_panda(), seconds=8.0, seed=4, noise=NOISE, armature=0.1))
    truth_rms = ID.torque_rms(prior, path, inertial_parameters(truth))
    assert np.all(truth_rms <= 1.05 * NOISE / np.sqrt(2))
    for form in ("torque", "momentum"):
        fit = ID.fit(prior, ID.accumulate(prior, path, form=form), "ols")
        assert np.all(ID.torque_rms(prior, path, fit.theta) <= 1.2 * truth_rms), form
