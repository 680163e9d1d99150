"""Pinocchio's C++ derivatives as a peer of the bench: ``peer.cpp`` beside this file, compiled once
against the installed ``pin`` wheel's headers and library (Eigen's headers from ``cmeel-eigen``, a
build-only package) and cached, then run on the model and states of the Python peer
(peers/pinocchio.py), so that both are timed in compiled loops on the same robot and states.

What it needs, and says in one line when it lacks: pin, cmeel-eigen and a C++17 compiler. The
first build takes about 40 s; later runs reuse the binary while the source, pin's version and
the compiler stay the same."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from ..pinocchio import PeerUnavailable, PinocchioPeer

SOURCE = Path(__file__).with_name("peer.cpp")
# Pinocchio's own interface definitions (its CMake targets'): boost's MPL lists long enough for its
# joint variant, and the algorithms instantiated in libpinocchio_default rather than here
DEFINES = ("BOOST_MPL_LIMIT_LIST_SIZE=30", "BOOST_MPL_LIMIT_VECTOR_SIZE=30", "BOOST_MPL_CFG_NO_PREPROCESSED_HEADERS",
           "BOOST_FUSION_INVOKE_MAX_ARITY=12", "PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION")
BUILD_SECONDS = 600  # a compiler that takes longer than this is stopped
RUN_SECONDS = 600
KINDS = {"JointModelRX": "RX", "JointModelRY": "RY", "JointModelRZ": "RZ", "JointModelRUBX": "RUBX",
         "JointModelRUBY": "RUBY", "JointModelRUBZ": "RUBZ", "JointModelPX": "PX", "JointModelPY": "PY",
         "JointModelPZ": "PZ", "JointModelRevoluteUnaligned": "R", "JointModelPrismaticUnaligned": "P",
         "JointModelFreeFlyer": "F", "JointModelSpherical": "S", "JointModelPlanar": "PL"}


def _cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "coriolis" / "pinocchio-peer"


def _prefix() -> Path:
    """The pin wheel's install prefix (headers in include/, libraries in lib/)."""
    try:
        import pinocchio
    except ImportError as e:
        raise PeerUnavailable("pin (Pinocchio) is not installed (pip install pin)") from e
    here = Path(pinocchio.__file__).resolve()
    for parent in here.parents:
        candidate = parent / "cmeel.prefix"
        if (candidate / "include" / "pinocchio").is_dir():
            return candidate
    raise PeerUnavailable(f"Pinocchio's C++ headers are not beside its Python package ({here.parent})")


def binary() -> Path:
    """The compiled peer, built on first use (PeerUnavailable saying why it cannot be)."""
    import pinocchio

    prefix = _prefix()
    eigen = prefix / "include" / "eigen3"
    if not (eigen / "Eigen" / "Core").is_file():
        raise PeerUnavailable("Eigen's headers are missing: pip install cmeel-eigen (build-only, headers)")
    compiler = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if not compiler:
        raise PeerUnavailable("no C++ compiler on PATH (set CXX)")
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
    key = hashlib.sha256("\n".join([SOURCE.read_text(), pinocchio.__version__, str(prefix), *version]).encode())
    target = _cache_dir() / f"peer-{key.hexdigest()[:16]}"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        built = Path(tmp) / "peer"
        command = [compiler, "-O3", "-std=c++17", "-DNDEBUG", *(f"-D{d}" for d in DEFINES), f"-I{prefix / 'include'}",
                   f"-I{eigen}", str(SOURCE), "-o", str(built), f"-L{prefix / 'lib'}", "-lpinocchio_default",
                   f"-Wl,-rpath,{prefix / 'lib'}"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_SECONDS)
        except subprocess.TimeoutExpired as e:
            raise PeerUnavailable(f"building Pinocchio's C++ peer took over {BUILD_SECONDS} s") from e
        if done.returncode != 0:
            first = next((line for line in done.stderr.splitlines() if "error" in line), done.stderr.strip()[:200])
            raise PeerUnavailable(f"Pinocchio's C++ peer does not build: {first}")
        os.replace(built, target)  # whole or not at all, whoever builds it at the same time
    return target


def _model_text(peer: PinocchioPeer) -> str:
    """The peer's model joint by joint, as peer.cpp reads it."""
    model, lines = peer.model, []
    for jid in range(1, model.njoints):
        joint = model.joints[jid]
        kind = KINDS.get(joint.shortname())
        if kind is None:
            raise PeerUnavailable(f"Pinocchio's C++ peer does not build joints of type {joint.shortname()}")
        axis = np.asarray(getattr(joint.extract(), "axis", np.zeros(3)), float) if kind in ("R", "P") else np.zeros(3)
        placement, inertia = model.jointPlacements[jid], model.inertias[jid]
        armature = np.asarray(model.armature)[joint.idx_v : joint.idx_v + joint.nv]
        numbers = [*axis, *np.asarray(placement.rotation).ravel(), *placement.translation, inertia.mass,
                   *inertia.lever, *np.asarray(inertia.inertia).ravel(), *armature]
        lines.append(f"{model.parents[jid]} {kind} " + " ".join(repr(float(x)) for x in numbers))
    return "\n".join(lines) + "\n"


def run(robot, Q, V, A, TAU, repeat: int = 100, peer: PinocchioPeer | None = None):
    """Pinocchio's C++ on the robot at the K states (our coordinates, rows of Q, V, A, TAU):
    ({name: median µs per call} for dtau, dqdd and d2tau, and its four second-order tensors at the
    first state in our DoF order, as Pinocchio indexes them). ``peer``: the robot's Python peer,
    where the caller has it already."""
    peer = PinocchioPeer(robot) if peer is None else peer
    if peer.carries_free_armature:
        raise PeerUnavailable("Pinocchio's C++ peer does not carry a free joint's armature")
    program = binary()
    with tempfile.TemporaryDirectory() as tmp:
        model, states, tensors = (Path(tmp) / name for name in ("model.txt", "states.bin", "tensors.bin"))
        model.write_text(_model_text(peer))
        rows = [np.concatenate([peer.q(q), peer.v(v), peer.v(a), peer.v(t)]) for q, v, a, t in zip(Q, V, A, TAU)]
        np.concatenate([[float(len(rows))], *rows]).astype(float).tofile(states)
        try:
            done = subprocess.run([str(program), str(model), str(states), str(tensors), str(repeat)],
                                  capture_output=True, text=True, timeout=RUN_SECONDS)
        except subprocess.TimeoutExpired as e:
            raise PeerUnavailable(f"Pinocchio's C++ peer ran over {RUN_SECONDS} s") from e
        if done.returncode != 0:
            raise PeerUnavailable(f"Pinocchio's C++ peer failed: {done.stderr.strip()[:200]}")
        n = robot.nv
        raw = np.fromfile(tensors, dtype=float).reshape(4, n, n, n).transpose(0, 3, 2, 1)  # (i, j, k), C order
    times = {name: float(value) for name, value in (line.split() for line in done.stdout.splitlines())}
    order = np.argsort(peer.perm)  # our DoF d is Pinocchio's DoF order[d]
    return times, [T[np.ix_(order, order, order)] for T in raw]
