"""The robots and states on which the compiled engine is held equal, bit for bit, to the reference
it replaces: bundled, generated, multi-DoF (planar, spherical, a free joint under a floating root),
MuJoCo models with armature, and edge states (unnormalized and zero quaternions, NaN)."""

from __future__ import annotations

import os
import warnings

import numpy as np

import coriolis_cli as cc

from .conftest import BUNDLED
from .test_mujoco_models import BALL_AND_FREE, STRIKER_LIKE
from .test_real_robots import MIXED, SLED, SPHERICAL_YAML

GENERATED = ("serial:12", "binary:15", "quadruped:16", "biped:12:3")
FLOATING = ("panda.urdf", "quadruped.urdf", "humanoid.urdf")
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
        q = robot.random_configuration(rng)
        if k % 2:
            q = q * 1.5  # quaternions (and planar pairs) off unit norm: normalized with a warning
        yield q, rng.uniform(-3, 3, robot.nv), rng.uniform(-3, 3, robot.nv)
