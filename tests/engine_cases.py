"""The robots and states on which the compiled engine was held equal, bit for bit, to the numba
engine it replaced, and is now held to that engine's golden outputs: bundled, generated, multi-DoF (planar, spherical, a free joint under a floating root),
MuJoCo models with armature, and edge states (unnormalized and zero quaternions, NaN)."""

from __future__ import annotations

import os
import warnings

import numpy as np

import coriolis_cli as cc
from coriolis_cli.engine import compiled

from .conftest import BUNDLED, robot_path
from .test_mujoco_models import BALL_AND_FREE, STRIKER_LIKE
from .test_real_robots import MIXED, SLED, SPHERICAL_YAML

GENERATED = ("serial:12", "binary:15", "quadruped:16", "biped:12:3")
FLOATING = ("panda.urdf", "quadruped.urdf", "humanoid.urdf")
GRAVITY = np.array([0.0, 0.0, -9.81])
ARMATURE = BALL_AND_FREE.replace("<worldbody>", '<default><joint armature="0.03"/></default><worldbody>', 1)


def _quiet(load):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load()


def robots(tmp_path) -> list[tuple[str, object]]:
    """(name, tree) pairs: every kernel runs on trees, so robots in other coordinates give theirs."""
    out = []
    for path in BUNDLED:
        out.append((os.path.basename(path), _quiet(lambda: cc.load_robot(path))))
        if os.path.basename(path) in FLOATING:
            out.append((os.path.basename(path) + "+free", _quiet(lambda: cc.load_robot(path, floating_base=True))))
    for spec in GENERATED:
        out.append((spec, _quiet(lambda: cc.load_robot(spec, floating_base=spec.startswith(("quadruped", "biped"))))))
    files = {"mixed.urdf": MIXED, "sph.yaml": SPHERICAL_YAML.replace("joints:", SLED.rstrip("\n") + "\njoints:"),
             "striker.xml": STRIKER_LIKE, "ball_and_free.xml": ARMATURE}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        for floating in (False, True) if name in ("mixed.urdf", "sph.yaml") else (False,):
            robot = _quiet(lambda: cc.load_robot(str(tmp_path / name), floating_base=floating))
            out.append((name + ("+free" if floating else ""), getattr(robot, "full", robot)))
    return out


def states(robot, count: int, seed: int):
    """(q, q̇, q̈) triples: random within the limits, then with every quaternion scaled off unit norm."""
    rng = np.random.default_rng(seed)
    for k in range(count):
        q = cc.random_configuration(robot, rng)
        if k % 2:
            q = q * 1.5  # quaternions (and planar pairs) off unit norm: normalized with a warning
        yield q, rng.uniform(-3, 3, robot.nv), rng.uniform(-3, 3, robot.nv)


THETA_SEED = 11


def theta_for(n_bodies):
    """Inertial parameters other than the model's (10 per body): what an adaptive controller passes."""
    return np.random.default_rng(THETA_SEED).uniform(0.1, 1.0, 10 * n_bodies)


def workspace(arrays, nq, body_frame=-1):
    return compiled.Workspace(arrays.ints, arrays.cols, arrays.geom, nq, body_frame)


def core_outputs(arrays, nq, q, qd, qdd):
    """Every output of the compiled core at one state, keyed as the golden files are."""
    n, width = arrays.cols.shape[0], 10 * arrays.ints.shape[0]
    qd_r, theta = qd[::-1].copy(), theta_for(arrays.ints.shape[0])
    out = {}
    for frame in ("world", "auto"):
        w = workspace(arrays, nq, 0 if frame == "world" else -1)
        M, tau, g, qdd_out = np.zeros((n, n)), np.zeros(n), np.zeros(n), np.zeros(n)
        out["M", frame] = (compiled.mass_matrix(w, q, M), M)
        out["tau", frame] = (compiled.inverse_dynamics(w, q, qd, qdd, GRAVITY, tau), tau)
        out["g", frame] = (compiled.gravity_vector(w, q, GRAVITY, g), g)
        out["qdd", frame] = (compiled.forward_dynamics(w, q, qd, qdd, GRAVITY, qdd_out), qdd_out)
        for f in (0, 1):
            for th in (np.zeros(0), theta):
                t = np.zeros(n)
                out["slotine", frame, f, th.size] = (compiled.slotine_li(w, q, qd, qd_r, qdd, th, GRAVITY, f, t), t)
            Yts = np.zeros(width)
            out["Yts", frame, f] = (compiled.adaptation_gradient(w, q, qd, qd_r, qdd, GRAVITY, f, Yts), Yts)
    for f in (0, 1):
        block = np.zeros((n + 1, width))  # Y, then Yᵀs
        out["Y", f] = (compiled.regressor(workspace(arrays, nq), q, qd, qd_r, qdd, GRAVITY, f, block), (block[:n], block[n]))
        MMC = np.zeros((3, n, n))
        out["coriolis", f] = (compiled.coriolis_matrix(workspace(arrays, nq), q, qd, f, MMC), MMC)
    G = np.zeros((n,) * 3)
    out["Gamma"] = (compiled.christoffel(workspace(arrays, nq), q, G), G)
    block = np.zeros((2, n))  # p, Cᵀq̇
    out["momentum"] = (compiled.momentum(workspace(arrays, nq), q, qd, block), (block[0], block[1]))
    block = np.zeros((3 * n + 1, width))  # Y_p, Y_c, Y_g, Y_T
    Y = (block[:n], block[n : 2 * n], block[2 * n : 3 * n], block[3 * n])
    out["momentum_regressors"] = (compiled.momentum_regressors(workspace(arrays, nq), q, qd, GRAVITY, block), Y)
    for use_qdd in (True, False) if q.size == nq and qd.size == qdd.size == n else ():  # batches take whole states
        row, status = np.zeros((1, 5 * n + 2)), np.zeros(1, dtype=np.int64)
        compiled.trajectory_batch(workspace(arrays, nq), *(np.ascontiguousarray(x)[None] for x in (q, qd, qdd)), use_qdd, GRAVITY, row, status, 1)
        out["trajectory", use_qdd] = (int(status[0]), row)
    return out


def key_name(key) -> str:
    """An output's key as a golden file names it: ("slotine", "auto", 0, 10) → "slotine/auto/0/10"."""
    return "/".join(str(part) for part in key) if isinstance(key, tuple) else key


# ---- robots in other coordinates: base velocities, mimic joints, closed loops ----------------
def coordinate_robots() -> list[tuple[str, object]]:
    """(name, robot) pairs whose engine work includes the base-velocity maps and the loop solve."""
    from .conftest import ROOT

    out = []
    for rep in ("mixed", "inertial"):
        out.append((f"quadruped_{rep}", _quiet(lambda: cc.load_robot(robot_path("quadruped.urdf"), floating_base=True,
                                                                      base_velocity=rep))))
    out.append(("gripper_mimic", _quiet(lambda: cc.load_robot(robot_path("gripper.urdf"), mimic="enforce"))))
    for name in ("fourbar.yaml", "knee_leg.yaml"):
        out.append((name, _quiet(lambda: cc.load_robot(robot_path(name)))))
    out.append(("fourbar_connect.xml", _quiet(lambda: cc.load_robot(os.path.join(ROOT, "tests", "data", "mjcf",
                                                                                  "fourbar_connect.xml")))))
    return out


def coordinate_state(robot, seed: int):
    """(q, q̇, q̇_r, q̈_r): a random state of a robot in other coordinates."""
    rng = np.random.default_rng(seed)
    q = cc.random_configuration(robot, rng)
    return (q, *(rng.uniform(-2, 2, robot.nv) for _ in range(3)))


def coordinate_outputs(robot, seed: int, q=None, qd=None) -> dict:
    """The public functions' outputs on a robot in other coordinates at a random state, or at the
    given q and q̇ (with the random state's q̇_r and q̈_r)."""
    q0, qd0, qd_r, qdd_r = coordinate_state(robot, seed)
    q, qd = q0 if q is None else q, qd0 if qd is None else qd
    M, Mdot, C = cc.coriolis_matrix(robot, q, qd)
    return {"q": q, "qd": qd, "M": M, "Mdot": Mdot, "C": C, "Gamma": cc.christoffel(robot, q),
            "Mcrba": cc.mass_matrix(robot, q), "tau": cc.inverse_dynamics(robot, q, qd, qdd_r),
            "slotine": cc.slotine_li(robot, q, qd, qd_r, qdd_r)}
