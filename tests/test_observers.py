"""Collision observers on data simulated by MuJoCo (never by our own engine): the Panda under PD
control with MuJoCo's own bias compensation, pushed by an external force (xfrc_applied) on one
link; the momentum residual must equal τ_ext = Jᵀ F there, the event be found and isolated."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest

import coriolis_cli as cc

from .conftest import robot_path

pytest.importorskip("mujoco", reason="mujoco is not installed")
pytest.importorskip("pyarrow", reason="the recordings extra is not installed")

PUSH = (1.5, 1.8)  # s
FORCE = np.array([0.0, 25.0, 10.0])  # N, world frame, at the link's centre of mass
LINK = "panda_link5"


@pytest.fixture(scope="module")
def pushed_panda(tmp_path_factory):
    """(robot, recording path, t, expected τ_ext per sample) from a MuJoCo simulation at 1 kHz."""
    import mujoco
    import pyarrow as pa
    import pyarrow.parquet as pq

    from coriolis_cli.peers.mujoco import MujocoPeer

    robot = cc.load_robot(robot_path("panda.urdf"))
    peer = MujocoPeer(robot)  # MuJoCo's own URDF compiler on our description (no geometry)
    m, d = peer.m, peer.d
    m.opt.timestep = 1e-3
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT) | int(mujoco.mjtDisableBit.mjDSBL_LIMIT)
    lay = peer.layout
    order = [da for _, _, _, _, da, _ in lay.joints]  # MuJoCo's DoF of our DoF 0, 1, ...
    body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, LINK)
    steps = 3000
    q0 = m.qpos0.copy()
    t, Q, V, TAU, EXT = (np.zeros(steps),) + tuple(np.zeros((steps, 7)) for _ in range(4))
    jac = np.zeros((3, m.nv))
    for k in range(steps):
        s = k * m.opt.timestep
        target = q0 + 0.3 * np.sin(2 * np.pi * 0.5 * s + np.arange(m.nq))
        d.xfrc_applied[:] = 0.0
        if PUSH[0] <= s < PUSH[1]:
            d.xfrc_applied[body, 0:3] = FORCE
        mujoco.mj_forward(m, d)
        mass = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, mass)
        # computed torque on MuJoCo's own M and C q̇ + g (10 rad/s, critically damped)
        tau = mass @ (100.0 * (target - d.qpos) - 20.0 * d.qvel) + d.qfrc_bias
        d.qfrc_applied[:] = tau
        mujoco.mj_jacBodyCom(m, d, jac, None, body)
        ext = jac.T @ d.xfrc_applied[body, 0:3]
        t[k], Q[k], V[k], TAU[k], EXT[k] = s, (d.qpos - q0)[order], d.qvel[order], tau[order], ext[order]
        mujoco.mj_step(m, d)
    cols = {"time": t}
    for j, name in enumerate(robot.dof_names):
        cols[f"q/{name}"], cols[f"qd/{name}"], cols[f"tau/{name}"] = Q[:, j], V[:, j], TAU[:, j]
    path = tmp_path_factory.mktemp("pushed") / "pushed.parquet"
    pq.write_table(pa.table(cols), path)
    return robot, str(path), t, EXT


def test_the_momentum_residual_follows_the_external_torque(pushed_panda):
    from coriolis_cli.estimation.observers import observe

    robot, path, t, ext = pushed_panda
    K = 50.0
    obs = observe(robot, path, bandwidth=K)
    # ṙ = K (τ_ext − r): the residual is τ_ext through a first-order filter at K (the arm moves,
    # so τ_ext = Jᵀ F changes and r lags it by about τ̇_ext / K); the force of step k acts until k + 1
    filtered = np.zeros_like(ext)
    for k in range(1, len(t)):
        filtered[k] = filtered[k - 1] + K * (t[k] - t[k - 1]) * (ext[k - 1] - filtered[k - 1])
    settled = (t >= PUSH[0] + 0.1) & (t < PUSH[1])
    scale = np.abs(ext).max()
    assert np.abs(obs.r - filtered).max() <= 0.02 * scale
    assert np.abs(obs.r[settled] - ext[settled]).max() <= 0.1 * scale
    free = (t > PUSH[1] + 0.2) | (t < PUSH[0])
    assert np.abs(obs.r[free]).max() <= 0.02 * scale
    assert np.abs(obs.r[settled, 5:]).max() <= 0.02 * scale  # joints past the pushed link feel nothing
    # the energy observer tracks q̇ᵀτ_ext
    qd = cc.load_recording(path, robot).qd
    power = np.einsum("kj,kj->k", qd, ext)
    power_filtered = np.zeros_like(power)
    for k in range(1, len(t)):
        power_filtered[k] = power_filtered[k - 1] + K * (t[k] - t[k - 1]) * (power[k - 1] - power_filtered[k - 1])
    after_start = t > 0.3  # the explicit energy balance errs while the controller's first transient lasts
    assert np.abs(obs.sigma - power_filtered)[after_start].max() <= 0.05 * np.abs(power).max()
    # one event, over the push, isolated to the pushed link
    assert len(obs.events) == 1
    e = obs.events[0]
    assert PUSH[0] <= e.start - t[0] + 1e-9 <= PUSH[0] + 0.05 and PUSH[1] <= e.end - t[0] <= PUSH[1] + 0.15
    assert e.link == LINK


def test_observe_command_table_json_plot_and_residual_file(pushed_panda, run_cli, tmp_path):
    robot, path, t, ext = pushed_panda
    r = run_cli("observe", "panda", path, "--format", "json", "--plot", tmp_path / "r.png", "-o", tmp_path / "r.parquet")
    assert r.code == 0, r
    found = json.loads(r.out)
    assert len(found["events"]) == 1 and found["events"][0]["link"] == LINK
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "r.parquet")
    assert table.num_rows == len(t) and "r/panda_joint1" in table.column_names and "energy/sigma" in table.column_names
    r = run_cli("observe", "panda", path)
    assert r.code == 0 and "1 event" in r.out and LINK in r.out, r
    r = run_cli("observe", "panda", path, "--threshold", "1000")
    assert r.code == 0 and "0 events" in r.out, r


def test_the_observer_step_allocates_nothing():
    from coriolis_cli.estimation.observers import MomentumObserver

    robot = cc.load_robot(robot_path("panda.urdf"))
    obs = MomentumObserver(robot, bandwidth=50.0)
    rng = np.random.default_rng(0)
    q, qd, tau = cc.random_configuration(robot, rng), rng.normal(size=7), rng.normal(size=7)
    obs.reset(q, qd)
    for _ in range(3):  # compiled and warm
        obs.step(q, qd, tau, 1e-3)
    tracemalloc.start()
    try:
        obs.step(q, qd, tau, 1e-3)
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        for _ in range(100):
            obs.step(q, qd, tau, 1e-3)
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 1024 and peak - before < 1024  # as test_api's data= calls: not one array of nv doubles per step


@pytest.mark.parametrize("value, message", [(np.nan, "missing \\(NaN\\)"), (np.inf, "not finite \\(inf\\)")])
def test_a_gap_or_a_broken_value_in_the_effort_is_refused_where_it_is(pushed_panda, run_cli, tmp_path, value, message):
    import pyarrow.parquet as pq

    robot, path, t, _ = pushed_panda
    table = pq.read_table(path).to_pydict()
    table["tau/panda_joint3"][1234] = value  # read as 0 or 1.8e308 it hid every event
    bad = tmp_path / "gap.parquet"
    import pyarrow as pa

    pq.write_table(pa.table(table), bad)
    r = run_cli("observe", "panda", bad)
    assert r.code == 2 and "Traceback" not in r.err, r
    assert f"the effort of joint 'panda_joint3' at t = {t[1234]:.6f} s is" in r.err and len(r.err.strip().splitlines()) == 1


@pytest.mark.parametrize("bandwidth", ["1000", "5000", "1e9"])
def test_a_bandwidth_the_samples_cannot_follow_is_refused_not_given_nan_thresholds(pushed_panda, run_cli, bandwidth):
    _, path, _, _ = pushed_panda  # 1 kHz: K dt reaches 1 at K = 1000/s
    r = run_cli("observe", "panda", path, "--bandwidth", bandwidth)
    assert r.code == 2 and "more than samples 1 ms apart can follow" in r.err and "at most 500/s" in r.err, r
    assert run_cli("observe", "panda", path, "--bandwidth", "400").code == 0


def test_the_observers_step_refuses_a_short_or_non_finite_torque_and_step():
    from coriolis_cli.estimation.observers import EnergyObserver, MomentumObserver

    robot = cc.load_robot("panda")
    q, qd = np.zeros(7), np.zeros(7)
    for observer in (MomentumObserver(robot), EnergyObserver(robot)):
        observer.reset(q, qd, np.zeros(7))
        with pytest.raises(cc.StateError, match=r"tau must hold one value per DoF, 7 for this robot, got shape \(1,\)"):
            observer.step(q, qd, np.ones(1), 1e-3)  # once broadcast over every joint
        with pytest.raises(cc.StateError, match=r"tau\[panda_joint2\] is not finite \(nan\)"):
            observer.step(q, qd, np.array([0, np.nan, 0, 0, 0, 0, 0.0]), 1e-3)
        with pytest.raises(cc.StateError, match="dt must be a finite, non-negative number of seconds"):
            observer.step(q, qd, np.zeros(7), float("nan"))
        with pytest.raises(cc.StateError, match="tau must hold one value per DoF"):
            observer.reset(q, qd, np.zeros(3))  # a bare numpy ValueError before
        r = observer.step(q, qd, np.zeros(7), 1e-3)
        assert np.all(np.isfinite(r))  # nothing refused has entered its state


# a Panda held by a soft joint PD, pushed by a person four times; large dry friction holds it where each
# push leaves it, so the holding torque (and the residual) shifts by up to 10 N·m from rest to rest
PUSHES = [(2.0, 0.8, "panda_link5", (0, 40, 15)), (4.5, 0.5, "panda_link7", (25, 0, -15)),
          (7.0, 1.0, "panda_link4", (-35, 15, 0)), (9.5, 0.6, "panda_link6", (0, -30, 25))]
DRY = np.array([12.0, 12.0, 8.0, 6.0, 2.0, 2.0, 1.0])
VISCOUS = np.array([1.0, 1.0, 0.8, 0.8, 0.3, 0.3, 0.2])


@pytest.fixture(scope="module")
def pushed_with_static_friction(tmp_path_factory):
    from coriolis_cli.model.friction import with_joint_friction
    from coriolis_cli.model.tree import build_model

    from .realistic_logs import as_logged, pushed_while_holding
    from .test_identification import write

    prior = cc.load_robot("panda")
    t, Q, V, TAU, _ = pushed_while_holding(PUSHES, seconds=12.0, frictionloss=DRY, damping=VISCOUS, stiffness=150.0)
    stamps, q, qd, tau, _ = as_logged(t, Q, V, TAU)
    folder = tmp_path_factory.mktemp("pushes")
    path = str(folder / "pushes.parquet")
    write(path, prior, stamps, q, qd, tau)
    robot_file = folder / "panda_friction.urdf"  # the friction as identify --friction coulomb-viscous writes it
    from coriolis_cli.model.urdf import to_urdf

    robot_file.write_text(to_urdf(with_joint_friction(prior.description, dict(zip(prior.dof_names, zip(VISCOUS, DRY))))))
    return prior, build_model(with_joint_friction(prior.description, dict(zip(prior.dof_names, zip(VISCOUS, DRY))))), \
        path, str(robot_file), (stamps, q, qd, tau)


def _misplaced(events, t0=0.0):
    """(pushes found late or not at all, events outside every push and the second after it)."""
    late = [s for s, d, _, _ in PUSHES if not any(s <= e.start - t0 <= s + 0.4 for e in events)]
    outside = [e for e in events if not any(s <= e.start - t0 and e.end - t0 <= s + d + 1.0 for s, d, _, _ in PUSHES)]
    return late, outside


def test_every_push_is_found_within_0_4_s_and_nothing_else_despite_static_friction(pushed_with_static_friction, run_cli):
    import warnings

    from coriolis_cli.estimation.observers import observe

    prior, robot, path, robot_file, _ = pushed_with_static_friction
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = observe(robot, path)  # the defaults, with the friction the robot file gives
        old = observe(prior, path, threshold="quiet")  # the quiet-stretch rule on a file without friction
    late, outside = _misplaced(found.events)
    assert len(found.events) == len(PUSHES) and not late and not outside, [(e.start, e.end) for e in found.events]
    late, outside = _misplaced(old.events)
    assert outside, "the quiet-stretch rule without friction raised no event between pushes"  # what the rule mends
    r = run_cli("observe", robot_file, path, "--format", "json")
    assert r.code == 0 and len(json.loads(r.out)["events"]) == len(PUSHES), r
    assert json.loads(r.out)["threshold_rule"] == "auto"


def test_a_brake_s_10_ms_torque_blip_is_not_a_collision(pushed_with_static_friction, tmp_path):
    import warnings

    from coriolis_cli.estimation.observers import observe

    from .test_identification import write

    prior, robot, _, _, (stamps, q, qd, tau) = pushed_with_static_friction
    quiet = stamps < 1.9  # before the first push: the arm at rest
    blipped = tau[quiet].copy()
    blip = (stamps[quiet] >= 1.0) & (stamps[quiet] < 1.01)
    blipped[blip, 5] += 25.0  # 10 ms, on the wrist
    path = str(tmp_path / "blip.parquet")
    write(path, prior, stamps[quiet], q[quiet], qd[quiet], blipped)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seen = observe(robot, path)
    assert not seen.events
    from coriolis_cli.estimation.observers import _events

    # without the 50 ms rule the blip is one stretch over the threshold, at the blip; it outlasts the
    # blip only by the residual's own decay from its peak to the threshold, ln(peak/θ)/K
    D = seen.r - seen.baseline
    blips = _events(robot, seen.t, D, seen.threshold, gap=0.25, shortest=0.0)
    assert len(blips) == 1 and 1.0 <= blips[0].start <= 1.05
    k = np.searchsorted(seen.t, blips[0].start)
    decay = np.log(np.abs(D[:, 5]).max() / seen.threshold[k, 5]) / seen.bandwidth[5]
    assert blips[0].end - blips[0].start - decay < 0.05


# a big arm's shoulders: tens of N·m of static friction, which holds the arm where each push leaves
# it; pushed by a person six times, ramps of 0.1-0.3 s, 10-15 N·m at the shoulder joints
BIG_DRY = np.array([40.0, 40.0, 30.0, 30.0, 4.0, 4.0, 2.0])
BIG_VISCOUS = np.array([2.0, 2.0, 1.0, 1.0, 0.3, 0.3, 0.2])
SHOULDER_PUSHES = [(1.5, 0.5, "panda_link3", (0, 60, 18), 0.2), (3.5, 0.4, "panda_link4", (54, 0, -12), 0.3),
                   (5.5, 0.6, "panda_link3", (-48, 36, 0), 0.1), (7.5, 0.5, "panda_link4", (0, -54, 24), 0.25),
                   (9.5, 0.4, "panda_link3", (-42, -36, 0), 0.15), (11.5, 0.5, "panda_link4", (36, 42, 0), 0.2)]


def test_pushes_on_a_big_arm_at_rest_are_found_though_its_shoulders_hold_tens_of_n_m(tmp_path, run_cli):
    """The residual measured from a baseline that follows the drift static friction leaves finds
    every push within 0.4 s of its onset and nothing else; the former rule, which adds each
    joint's Coulomb friction to the threshold at rest (30-40 N·m here), finds 2 of the 6."""
    import warnings

    from coriolis_cli.estimation.observers import observe
    from coriolis_cli.model.friction import with_joint_friction
    from coriolis_cli.model.tree import build_model
    from coriolis_cli.model.urdf import to_urdf

    from .realistic_logs import as_logged, pushed_while_holding
    from .test_identification import write

    prior = cc.load_robot("panda")
    t, Q, V, TAU, EXT = pushed_while_holding(SHOULDER_PUSHES, seconds=14.0, frictionloss=BIG_DRY, damping=BIG_VISCOUS,
                                             stiffness=600.0)
    assert all(np.abs(EXT[(t >= s) & (t <= s + d)]).max() <= 16 for s, d, *_ in SHOULDER_PUSHES)
    stamps, q, qd, tau, _ = as_logged(t, Q, V, TAU)
    path = str(tmp_path / "shoulders.parquet")
    write(path, prior, stamps, q, qd, tau)
    friction = dict(zip(prior.dof_names, zip(BIG_VISCOUS, BIG_DRY)))
    robot = build_model(with_joint_friction(prior.description, friction))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = observe(robot, path)
        former = observe(robot, path, threshold="friction")

    def misplaced(events):
        t0 = stamps[0]
        late = [s for s, d, *_ in SHOULDER_PUSHES if not any(s <= e.start - t0 <= s + 0.4 for e in events)]
        outside = [e for e in events if not any(s <= e.start - t0 and e.end - t0 <= s + d + 1.0
                                                for s, d, *_ in SHOULDER_PUSHES)]
        return late, outside

    assert misplaced(found.events) == ([], []), [(e.start, e.end) for e in found.events]
    late, outside = misplaced(former.events)
    assert len(late) >= 3 and not outside
    robot_file = tmp_path / "big_arm.urdf"
    robot_file.write_text(to_urdf(with_joint_friction(prior.description, friction)))
    r = run_cli("observe", robot_file, path, "--format", "json")
    assert r.code == 0 and len(json.loads(r.out)["events"]) == len(SHOULDER_PUSHES), r
    assert json.loads(r.out)["threshold_rule"] == "auto"


def test_both_observers_step_on_enforced_mimic_joints_with_friction_in_the_file(tmp_path):
    """A gripper whose joints have friction, its mimic enforced: both observers run (the energy
    observer raised NumPy's shape error there) and, at rest under gravity's torque, see nothing."""
    text = open(robot_path("gripper.urdf"), encoding="utf-8").read()
    text = text.replace('<joint name="wrist" type="revolute">',
                        '<joint name="wrist" type="revolute"><dynamics damping="0.2" friction="0.1"/>')
    path = tmp_path / "gripper_friction.urdf"
    path.write_text(text)
    robot = cc.load_robot(str(path), mimic="enforce")
    q, qd = np.array([0.3, -0.2, 0.01]), np.zeros(robot.nv)
    tau = cc.gravity_vector(robot, q)
    for observer in (cc.MomentumObserver(robot), cc.EnergyObserver(robot)):
        observer.reset(q, qd, tau)
        for _ in range(5):
            r = observer.step(q, qd, tau, 0.001)
        assert np.allclose(r, 0.0, atol=1e-12)
