"""Generated benchmark topologies matching the core paper's Figs. 2-4 and Table 1.

``serial``: a chain; ``binary``: body i hangs from body (i-1)//2; ``biped``: a trunk with two
serial legs; ``quadruped``: a trunk with four legs. Revolute joints with varied axes and offsets,
physically consistent random inertias, all drawn from one seed.
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import SpecError
from .description import Inertial, JointSpec, Limits, LinkSpec, RobotDescription

TOPOLOGIES = ("serial", "binary", "biped", "quadruped")
LEGS = {"biped": 2, "quadruped": 4}
DEFAULT_SEED = 0
MAX_DOF = 5000

_SPEC = re.compile(r"^([A-Za-z_]+):([^:]*)(?::([^:]*))?$")


def is_spec(text: str) -> bool:
    return bool(_SPEC.match(text)) and "/" not in text and "\\" not in text


def parse_spec(text: str) -> tuple[str, int, int]:
    """``TOPOLOGY:DOF`` or ``TOPOLOGY:DOF:SEED`` -> (topology, dof, seed)."""
    m = _SPEC.match(text.strip())
    if not m:
        raise SpecError(f"'{text}' is not a spec of the form TOPOLOGY:DOF (e.g. quadruped:20)")
    topo, dof_s, seed_s = m.group(1).lower(), m.group(2), m.group(3)
    if topo not in TOPOLOGIES:
        raise SpecError(f"unknown topology '{m.group(1)}' (choose from {', '.join(TOPOLOGIES)})")
    try:
        dof = int(dof_s)
    except ValueError:
        raise SpecError(f"'{text}': the number of DoF must be an integer, got '{dof_s}'") from None
    if dof <= 0:
        raise SpecError(f"'{text}': the number of DoF must be positive, got {dof}")
    if dof > MAX_DOF:
        raise SpecError(f"'{text}': at most {MAX_DOF} DoF can be generated")
    legs = LEGS.get(topo, 1)
    if dof < legs:
        raise SpecError(f"'{text}': a {topo} needs at least {legs} DoF (one per leg)")
    seed = DEFAULT_SEED
    if seed_s is not None:
        try:
            seed = int(seed_s)
        except ValueError:
            raise SpecError(f"'{text}': the seed must be an integer, got '{seed_s}'") from None
        if seed < 0:
            raise SpecError(f"'{text}': the seed must not be negative, got {seed}")
    return topo, dof, seed


def _random_rotation_rpy(rng) -> tuple[float, float, float]:
    return tuple(float(a) for a in rng.uniform(-np.pi, np.pi, 3))


def _random_inertial(rng, length: float) -> Inertial:
    """A box-shaped body of random size and density: always physically consistent."""
    dims = rng.uniform(0.04, 0.12, 3)
    dims[0] = length * rng.uniform(0.7, 1.0) + 0.02
    mass = float(rng.uniform(0.5, 3.0))
    a, b, c = dims
    ixx, iyy, izz = mass / 12 * (b * b + c * c), mass / 12 * (a * a + c * c), mass / 12 * (a * a + b * b)
    com = (float(0.5 * length + rng.uniform(-0.02, 0.02)), float(rng.uniform(-0.02, 0.02)), float(rng.uniform(-0.02, 0.02)))
    return Inertial(mass=mass, xyz=com, rpy=_random_rotation_rpy(rng), inertia=(ixx, 0.0, 0.0, iyy, 0.0, izz))


def _random_axis(rng, k: int) -> tuple[float, float, float]:
    """Cycle through the principal axes, tilted at random, so axes vary but stay well spread."""
    base = np.eye(3)[k % 3]
    a = base + 0.3 * rng.normal(size=3)
    if rng.uniform() < 0.5:
        a = -a
    return tuple(float(x) for x in a / np.linalg.norm(a))


def generate(topology: str, dof: int, seed: int = DEFAULT_SEED) -> RobotDescription:
    if topology not in TOPOLOGIES:
        raise SpecError(f"unknown topology '{topology}' (choose from {', '.join(TOPOLOGIES)})")
    rng = np.random.default_rng(seed)
    length = 0.3
    links = [LinkSpec(name="base", inertial=Inertial(mass=5.0, xyz=(0, 0, 0), inertia=(0.05, 0, 0, 0.05, 0, 0.05)))]
    joints: list[JointSpec] = []

    def add(parent: str, name: str, offset) -> str:
        k = len(joints)
        link = f"link{k + 1}" if not name else name
        links.append(LinkSpec(name=link, inertial=_random_inertial(rng, length)))
        joints.append(
            JointSpec(
                name=f"joint{k + 1}",
                type="revolute",
                parent=parent,
                child=link,
                xyz=tuple(float(x) for x in offset),
                rpy=_random_rotation_rpy(rng),
                axis=_random_axis(rng, k),
                limits=Limits(lower=-np.pi, upper=np.pi, effort=100.0, velocity=10.0),
            )
        )
        return link

    def jitter():
        return rng.uniform(-0.03, 0.03, 3)

    if topology == "serial":
        parent = "base"
        for _ in range(dof):
            parent = add(parent, "", np.array([length, 0, 0]) * (parent != "base") + jitter())
    elif topology == "binary":
        names = []
        for i in range(dof):
            parent = "base" if i == 0 else names[(i - 1) // 2]
            names.append(add(parent, "", np.array([length, 0, 0]) * (i > 0) + jitter()))
    else:
        legs = LEGS[topology]
        per_leg = [dof // legs + (1 if i < dof % legs else 0) for i in range(legs)]
        hips = {
            2: [(0.0, 0.1, -0.2), (0.0, -0.1, -0.2)],
            4: [(0.3, 0.15, 0.0), (0.3, -0.15, 0.0), (-0.3, 0.15, 0.0), (-0.3, -0.15, 0.0)],
        }[legs]
        for leg, n in enumerate(per_leg):
            parent = "base"
            for s in range(n):
                offset = np.array(hips[leg]) if s == 0 else np.array([length, 0, 0])
                parent = add(parent, f"leg{leg + 1}_link{s + 1}", offset + jitter())
    return RobotDescription(name=f"{topology}{dof}", links=tuple(links), joints=tuple(joints), source=f"{topology}:{dof}")
