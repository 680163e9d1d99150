"""The robots installed with the package, which users can name instead of giving a path."""

from __future__ import annotations

import os

BUNDLED_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "robots")

# one line each, for `coriolis info --list`
DESCRIPTIONS = {
    "planar_2link": "textbook planar 2R arm with closed forms for M and C",
    "panda": "Franka Emika Panda with the identified inertial parameters of Gaz et al. (RA-L 2019)",
    "gripper": "a two-link arm with a parallel gripper whose right finger mimics the left",
    "quadruped": "a 41.6 kg quadruped (illustrative parameters), for --floating-base",
    "humanoid": "a 56.4 kg humanoid: legs, arms, waist, neck (illustrative), for --floating-base",
    "serial20": "the paper's Table 1: a 20-link serial chain",
    "binary20": "the paper's Table 1: a 20-body binary tree",
    "biped20": "the paper's Table 1: a trunk with two 10-DoF legs",
    "quadruped20": "the paper's Table 1: a trunk with four 5-DoF legs",
    "fourbar": "a crank-rocker four-bar linkage (closed loop; the crank is independent)",
    "knee_leg": "a hanging leg whose knee is driven through a four-bar from the hip",
}


def bundled_files() -> list[str]:
    """Paths of the bundled robot files, URDF then YAML, by name."""
    names = sorted(os.listdir(BUNDLED_DIR)) if os.path.isdir(BUNDLED_DIR) else []
    return [os.path.join(BUNDLED_DIR, n) for n in names if n.endswith(".urdf")] + \
        [os.path.join(BUNDLED_DIR, n) for n in names if n.endswith(".yaml")]


def bundled_path(name: str) -> str | None:
    """The bundled robot ``name`` ('panda', 'panda.urdf', 'fourbar.yaml'), or None."""
    if os.sep in name or (os.altsep and os.altsep in name):
        return None
    for path in bundled_files():
        base = os.path.basename(path)
        if name in (base, os.path.splitext(base)[0]):
            return path
    return None
