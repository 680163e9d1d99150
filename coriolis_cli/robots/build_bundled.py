"""Regenerate the bundled robots in this folder: python robots/build_bundled.py (robots/ links to coriolis_cli/robots/),
and their parsed-URDF cache entries in parsed/ (alone: python robots/build_bundled.py --parsed), which ship with the
package so that a first run on a bundled robot parses nothing; a test fails when they are stale.

planar_2link: textbook two-link planar arm (closed forms for M and C exist).
panda: Franka Emika Panda kinematics (franka_description) with the inertial parameters identified by
  C. Gaz, M. Cognetti, A. Oliva, P. Robuffo Giordano, A. De Luca, "Dynamic Identification of the
  Franka Emika Panda Robot With Retrieval of Feasible Parameters Using Penalty-Based Optimization",
  IEEE Robotics and Automation Letters 4(4), 2019.
quadruped, humanoid: illustrative legged robots (masses and sizes of a 40 kg quadruped and a
  45 kg humanoid, not any vendor's robot), meant to be loaded with --floating-base. They carry
  mesh references that are never loaded, fixed frames, and a link without <inertial>.
serial20, binary20, biped20, quadruped20: the generated 20-DoF systems of the paper's Table 1.
"""

from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

from coriolis_cli.model import generate, to_urdf  # noqa: E402
from coriolis_cli.model.description import Inertial, JointSpec, Limits, LinkSpec, RobotDescription  # noqa: E402


def box(m, x, y, z, com=(0, 0, 0)):
    return Inertial(m, tuple(com), (0, 0, 0), (m / 12 * (y * y + z * z), 0, 0, m / 12 * (x * x + z * z), 0, m / 12 * (x * x + y * y)))


def rod_z(m, length, r, com):
    ixx = m * (3 * r * r + length * length) / 12
    return Inertial(m, tuple(com), (0, 0, 0), (ixx, 0, 0, ixx, 0, m * r * r / 2))


class Builder:
    def __init__(self, name):
        self.name, self.links, self.joints = name, [], []

    def link(self, name, inertial=None):
        self.links.append(LinkSpec(name, inertial))
        return name

    def joint(self, name, type_, parent, child, xyz=(0, 0, 0), rpy=(0, 0, 0), axis=(1, 0, 0), lim=None):
        limits = None
        if lim is not None:
            limits = Limits(*lim)
        self.joints.append(JointSpec(name, type_, parent, child, tuple(map(float, xyz)), tuple(map(float, rpy)),
                                     tuple(map(float, axis)), limits))

    def description(self):
        return RobotDescription(self.name, tuple(self.links), tuple(self.joints))


def planar_2link():
    # l1 = 1.0, l2 = 0.8, m1 = 1.0, m2 = 0.7, lc1 = 0.5, lc2 = 0.4, Izz1 = 0.08, Izz2 = 0.04 (about the COM)
    b = Builder("planar_2link")
    b.link("base")
    b.link("link1", Inertial(1.0, (0.5, 0, 0), (0, 0, 0), (0.001, 0, 0, 0.08, 0, 0.08)))
    b.link("link2", Inertial(0.7, (0.4, 0, 0), (0, 0, 0), (0.001, 0, 0, 0.04, 0, 0.04)))
    b.joint("joint1", "continuous", "base", "link1", axis=(0, 0, 1))
    b.joint("joint2", "continuous", "link1", "link2", xyz=(1.0, 0, 0), axis=(0, 0, 1))
    return b.description()


GAZ_2019 = [  # COM in the link frame, mass, inertia about the COM (ixx, ixy, ixz, iyy, iyz, izz)
    ((3.875e-03, 2.081e-03, 0.0), 4.970684, (7.0337e-01, -1.3900e-04, 6.7720e-03, 7.0661e-01, 1.9169e-02, 9.1170e-03)),
    ((-3.141e-03, -2.872e-02, 3.495e-03), 0.646926, (7.9620e-03, -3.9250e-03, 1.0254e-02, 2.8110e-02, 7.0400e-04, 2.5995e-02)),
    ((2.7518e-02, 3.9252e-02, -6.6502e-02), 3.228604, (3.7242e-02, -4.7610e-03, -1.1396e-02, 3.6155e-02, -1.2805e-02, 1.0830e-02)),
    ((-5.317e-02, 1.04419e-01, 2.7454e-02), 3.587895, (2.5853e-02, 7.7960e-03, -1.3320e-03, 1.9552e-02, 8.6410e-03, 2.8323e-02)),
    ((-1.1953e-02, 4.1065e-02, -3.8437e-02), 1.225946, (3.5549e-02, -2.1170e-03, -4.0370e-03, 2.9474e-02, 2.2900e-04, 8.6270e-03)),
    ((6.0149e-02, -1.4117e-02, -1.0517e-02), 1.666555, (1.9640e-03, 1.0900e-04, -1.1580e-03, 4.3540e-03, 3.4100e-04, 5.4330e-03)),
    ((1.0517e-02, -4.252e-03, 6.1597e-02), 0.735522, (1.2516e-02, -4.2800e-04, -1.1960e-03, 1.0027e-02, -7.4100e-04, 4.8150e-03)),
]


def panda():
    b = Builder("panda")
    b.link("panda_link0", Inertial(0.629769, (-0.041018, -0.00014, 0.049974), (0, 0, 0), (0.00315, 8.2904e-07, 0.00015, 0.00388, 8.2299e-06, 0.004285)))
    for i, (com, m, inertia) in enumerate(GAZ_2019, start=1):
        b.link(f"panda_link{i}", Inertial(m, com, (0, 0, 0), inertia))
    b.link("panda_link8")
    pi2 = np.pi / 2
    origins = [((0, 0, 0.333), (0, 0, 0)), ((0, 0, 0), (-pi2, 0, 0)), ((0, -0.316, 0), (pi2, 0, 0)),
               ((0.0825, 0, 0), (pi2, 0, 0)), ((-0.0825, 0.384, 0), (-pi2, 0, 0)), ((0, 0, 0), (pi2, 0, 0)),
               ((0.088, 0, 0), (pi2, 0, 0))]
    limits = [(-2.8973, 2.8973), (-1.7628, 1.7628), (-2.8973, 2.8973), (-3.0718, -0.0698), (-2.8973, 2.8973),
              (-0.0175, 3.7525), (-2.8973, 2.8973)]
    effort = [87, 87, 87, 87, 12, 12, 12]
    velocity = [2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61]
    for i in range(7):
        xyz, rpy = origins[i]
        b.joint(f"panda_joint{i + 1}", "revolute", f"panda_link{i}", f"panda_link{i + 1}", xyz, rpy, (0, 0, 1),
                (limits[i][0], limits[i][1], effort[i], velocity[i]))
    b.joint("panda_joint8", "fixed", "panda_link7", "panda_link8", (0, 0, 0.107))
    return b.description()


def quadruped():
    b = Builder("quadruped")
    b.link("trunk", box(20.0, 0.6, 0.3, 0.15))
    b.link("imu_link")  # a sensor frame without inertia
    b.joint("imu_joint", "fixed", "trunk", "imu_link", (0.1, 0, 0.05))
    for leg, (sx, sy) in {"LF": (1, 1), "RF": (1, -1), "LH": (-1, 1), "RH": (-1, -1)}.items():
        hip, thigh, shank, foot = (f"{leg}_{p}" for p in ("hip", "thigh", "shank", "foot"))
        b.link(hip, box(2.0, 0.1, 0.08, 0.08, com=(0.04 * sx, 0.0, 0.0)))
        b.link(thigh, rod_z(2.5, 0.3, 0.03, (0, 0.01 * sy, -0.12)))
        b.link(shank, rod_z(0.8, 0.3, 0.02, (0, 0, -0.14)))
        b.link(foot, Inertial(0.1, (0, 0, 0), (0, 0, 0), (2.5e-5, 0, 0, 2.5e-5, 0, 2.5e-5)))
        b.joint(f"{leg}_HAA", "revolute", "trunk", hip, (0.3 * sx, 0.12 * sy, 0), axis=(1, 0, 0), lim=(-0.7, 0.7, 80, 8))
        b.joint(f"{leg}_HFE", "revolute", hip, thigh, (0.06 * sx, 0.08 * sy, 0), axis=(0, 1, 0), lim=(-1.6, 1.6, 80, 8))
        b.joint(f"{leg}_KFE", "revolute", thigh, shank, (0, 0, -0.3), axis=(0, 1, 0), lim=(-2.7, -0.1, 80, 8))
        b.joint(f"{leg}_foot_joint", "fixed", shank, foot, (0, 0, -0.3))
    return b.description()


def humanoid():
    b = Builder("humanoid")
    b.link("pelvis", box(8.0, 0.2, 0.3, 0.15))
    b.link("torso", box(14.0, 0.22, 0.34, 0.4, com=(0, 0, 0.22)))
    b.link("head", box(3.0, 0.18, 0.16, 0.22, com=(0, 0, 0.12)))
    b.joint("waist_yaw", "revolute", "pelvis", "torso", (0, 0, 0.1), axis=(0, 0, 1), lim=(-1.0, 1.0, 150, 6))
    b.joint("neck_yaw", "revolute", "torso", "head", (0, 0, 0.45), axis=(0, 0, 1), lim=(-1.2, 1.2, 20, 6))
    for side, s in (("l", 1), ("r", -1)):
        # arm: shoulder pitch, roll, elbow
        b.link(f"{side}_shoulder", box(0.8, 0.08, 0.08, 0.08))
        b.link(f"{side}_upper_arm", rod_z(1.8, 0.28, 0.04, (0, 0, -0.14)))
        b.link(f"{side}_forearm", rod_z(1.2, 0.26, 0.035, (0, 0, -0.12)))
        b.link(f"{side}_hand", Inertial(0.4, (0, 0, -0.05), (0, 0, 0), (4e-4, 0, 0, 4e-4, 0, 2e-4)))
        b.joint(f"{side}_shoulder_pitch", "revolute", "torso", f"{side}_shoulder", (0, 0.2 * s, 0.38), axis=(0, 1, 0), lim=(-3.0, 3.0, 60, 6))
        b.joint(f"{side}_shoulder_roll", "revolute", f"{side}_shoulder", f"{side}_upper_arm", (0, 0.05 * s, 0), axis=(1, 0, 0), lim=(-1.5, 1.5, 60, 6))
        b.joint(f"{side}_elbow", "revolute", f"{side}_upper_arm", f"{side}_forearm", (0, 0, -0.28), axis=(0, 1, 0), lim=(-2.5, 0.0, 40, 6))
        b.joint(f"{side}_wrist", "fixed", f"{side}_forearm", f"{side}_hand", (0, 0, -0.26))
        # leg: hip yaw, roll, pitch, knee, ankle pitch, roll
        parts = ["hip_yaw_link", "hip_roll_link", "thigh", "shank", "ankle_link", "foot"]
        inert = [box(1.0, 0.08, 0.08, 0.08), box(1.2, 0.1, 0.08, 0.08), rod_z(5.0, 0.4, 0.06, (0, 0, -0.18)),
                 rod_z(3.0, 0.4, 0.05, (0, 0, -0.18)), box(0.3, 0.05, 0.05, 0.05),
                 box(1.0, 0.22, 0.1, 0.04, com=(0.04, 0, -0.04))]
        for p, ine in zip(parts, inert):
            b.link(f"{side}_{p}", ine)
        specs = [("hip_yaw", "pelvis", (0, 0.1 * s, -0.08), (0, 0, 1), (-0.8, 0.8)),
                 ("hip_roll", f"{side}_hip_yaw_link", (0, 0, -0.06), (1, 0, 0), (-0.5, 0.5)),
                 ("hip_pitch", f"{side}_hip_roll_link", (0, 0, 0), (0, 1, 0), (-2.0, 1.0)),
                 ("knee", f"{side}_thigh", (0, 0, -0.4), (0, 1, 0), (0.0, 2.5)),
                 ("ankle_pitch", f"{side}_shank", (0, 0, -0.4), (0, 1, 0), (-1.0, 1.0)),
                 ("ankle_roll", f"{side}_ankle_link", (0, 0, 0), (1, 0, 0), (-0.5, 0.5))]
        for (jname, parent, xyz, axis, (lo, hi)), p in zip(specs, parts):
            b.joint(f"{side}_{jname}", "revolute", parent, f"{side}_{p}", xyz, (0, 0, 0), axis, (lo, hi, 200, 8))
        b.link(f"{side}_sole")
        b.joint(f"{side}_sole_joint", "fixed", f"{side}_foot", f"{side}_sole", (0.04, 0, -0.06))
    return b.description()


MESH = '    <visual>\n      <geometry>\n        <mesh filename="package://coriolis_robots/meshes/{name}.stl"/>\n      </geometry>\n    </visual>\n'


def with_meshes(text: str, names) -> str:
    """Add visual mesh references (never loaded) to show that loading never touches them."""
    for n in names:
        text = text.replace(f'<link name="{n}">\n', f'<link name="{n}">\n' + MESH.format(name=n), 1)
    return text


def main():
    out = {
        "planar_2link.urdf": to_urdf(planar_2link()),
        "panda.urdf": with_meshes(to_urdf(panda()), [f"panda_link{i}" for i in range(8)]),
        "quadruped.urdf": with_meshes(to_urdf(quadruped()), ["trunk", "LF_thigh", "RF_thigh", "LH_thigh", "RH_thigh"]),
        "humanoid.urdf": with_meshes(to_urdf(humanoid()), ["pelvis", "torso", "head"]),
    }
    for topo in ("serial", "binary", "biped", "quadruped"):
        out[f"{topo}20.urdf"] = to_urdf(generate(topo, 20, 0))
    for name, text in out.items():
        with open(os.path.join(HERE, name), "w") as f:
            f.write(text)
        print("wrote", name)
    write_parsed_cache()


def write_parsed_cache():
    """parsed/<key>.json for every bundled URDF, as a first run would cache it; stale entries go."""
    import json

    from coriolis_cli import __version__
    from coriolis_cli.model.loader import SHIPPED_CACHE, cache_entry

    os.makedirs(SHIPPED_CACHE, exist_ok=True)
    keep = set()
    for name in sorted(os.listdir(HERE)):
        if name.endswith(".urdf"):
            with open(os.path.join(HERE, name), encoding="utf-8") as f:
                key, entry = cache_entry(f.read(), os.path.join(HERE, name), __version__)
            with open(os.path.join(SHIPPED_CACHE, key + ".json"), "w", encoding="utf-8") as f:
                json.dump(entry, f, sort_keys=True)
            keep.add(key + ".json")
            print("wrote parsed/" + key[:12] + "….json for", name)
    for name in os.listdir(SHIPPED_CACHE):
        if name not in keep:
            os.unlink(os.path.join(SHIPPED_CACHE, name))


if __name__ == "__main__":
    if sys.argv[1:] == ["--parsed"]:
        write_parsed_cache()
    else:
        main()
