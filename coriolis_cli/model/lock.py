"""Locked joints: a joint held at one value becomes a fixed joint, and the bodies it carried merge
into its parent (Pinocchio's ``buildReducedModel``, ``src/algorithm/model.hxx``). The results are
the full robot's rows and columns of the other DoF at that configuration.

Patterns are shell globs on joint names (``r_finger_*``), matched case-sensitively. A joint is
locked at the value given (radians or metres), else at its neutral value (0 clipped into its
limits; identity for multi-DoF joints, which lock only there). A mimic joint follows the joint it
mimics: locking the leader locks it where the mimic puts it (``multiplier · value + offset``).
"""

from __future__ import annotations

import fnmatch
import math
import warnings
from dataclasses import replace

import numpy as np

from ..errors import ModelError, ModelWarning
from .description import MOVABLE_TYPES, RobotDescription
from .geometry import axis_angle, matrix_to_rpy, rotation_tuple
from .joints import finite_limits


def normalize_lock(lock) -> dict[str, float | None]:
    """``lock`` as {pattern: value or None}: a mapping, or an iterable of patterns (neutral values)."""
    if lock is None:
        return {}
    if isinstance(lock, str):
        lock = [lock]
    items = lock.items() if hasattr(lock, "items") else ((p, None) for p in lock)
    out: dict[str, float | None] = {}
    for pattern, value in items:
        if not isinstance(pattern, str) or not pattern:
            raise ModelError(f"lock: a joint name or pattern must be a non-empty string, got {pattern!r}")
        if value is not None:
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ModelError(f"lock '{pattern}': the value must be a number, got {value!r}") from None
            if not math.isfinite(value):
                raise ModelError(f"lock '{pattern}': the value must be finite, got {value}")
        out[pattern] = value
    return out


def _locked_values(desc: RobotDescription, lock: dict[str, float | None]) -> dict[str, float | None]:
    """{joint name: value or None (neutral)} for every joint the patterns lock."""
    movable = [j for j in desc.joints if j.type != "fixed"]
    chosen: dict[str, tuple[str, float | None]] = {}
    for pattern, value in lock.items():
        # a joint's exact name is itself, glob characters and all (hand[0]); else a shell glob
        hits = [j for j in movable if j.name == pattern] or [j for j in movable if fnmatch.fnmatchcase(j.name, pattern)]
        if not hits:
            special = any(ch in pattern for ch in "*?[]")
            raise ModelError(f"lock '{pattern}' matches no movable joint of robot '{desc.name}'",
                             hint="'coriolis info ROBOT' lists the joints" + (
                                 "; in a pattern, [ and ] enclose a set of characters: write [[] and []] for the "
                                 "characters themselves" if special else ""))
        for j in hits:
            if j.name in chosen and chosen[j.name][1] != value:
                other = chosen[j.name][0]
                raise ModelError(f"joint '{j.name}' is locked twice with different values (by '{other}' and "
                                 f"'{pattern}')")
            chosen[j.name] = (pattern, value)
    values = {name: v for name, (_, v) in chosen.items()}
    for j in movable:
        if j.name in values and values[j.name] is not None and j.type not in MOVABLE_TYPES:
            raise ModelError(f"joint '{j.name}' is {j.type}: it locks at its neutral configuration only "
                             f"(lock '{j.name}' without a value)")
    return values


def _follow_mimics(desc: RobotDescription, values: dict[str, float | None]) -> dict[str, float | None]:
    """Mimic joints of locked joints, locked where their leader puts them (chains resolved)."""
    by_name = {j.name: j for j in desc.joints}
    changed = True
    while changed:
        changed = False
        for j in desc.joints:
            if j.name in values or j.mimic is None or j.mimic.joint not in values:
                continue
            leader = by_name.get(j.mimic.joint)
            lead = values[j.mimic.joint]
            if lead is None:
                lead = _neutral(leader)
            values[j.name] = j.mimic(lead)
            changed = True
    return values


def _neutral(joint) -> float:
    lim = finite_limits(joint.limits)
    return 0.0 if lim is None else min(max(0.0, lim[0]), lim[1])


def lock_joints(desc: RobotDescription, lock, mimic: str = "independent") -> RobotDescription:
    """The description with the joints that ``lock`` names made fixed at their values (see the
    module's docstring). ``mimic="enforce"`` refuses to lock a mimic joint whose leader moves."""
    lock = normalize_lock(lock)
    if not lock:
        return desc
    values = _follow_mimics(desc, _locked_values(desc, lock))
    if mimic == "enforce":
        for j in desc.joints:
            if j.name in values and j.mimic is not None and j.mimic.joint not in values:
                raise ModelError(f"joint '{j.name}' mimics joint '{j.mimic.joint}', which is not locked: with the mimic "
                                 f"enforced, lock '{j.mimic.joint}' instead")
    on_loops = _loop_joints(desc)
    if on_loops & set(values):
        name = sorted(on_loops & set(values))[0]
        raise ModelError(f"joint '{name}' lies on a closed loop, which locking cannot cut; lock joints off the loops")
    outside = []
    joints = []
    locked = []
    for j in desc.joints:
        if j.name not in values:
            # a mimic of a locked joint is locked above; one whose leader is locked cannot remain
            joints.append(j)
            continue
        value = values[j.name]
        if value is None:
            value = _neutral(j) if j.type in MOVABLE_TYPES else 0.0
        else:
            lim = finite_limits(j.limits) if j.type != "continuous" else None
            if lim is not None and not (lim[0] - 1e-12 <= value <= lim[1] + 1e-12):
                outside.append(f"'{j.name}' at {value:g} (limits {lim[0]:g} to {lim[1]:g})")
        locked.append((j.name, float(value) if j.type in MOVABLE_TYPES else None))
        R, p = j.origin_rotation(), np.asarray(j.xyz, dtype=float)
        axis = np.asarray(j.axis, float)
        axis = axis / np.linalg.norm(axis) if np.any(axis) else axis
        if j.type in ("revolute", "continuous"):
            R = R @ axis_angle(axis, value)
        elif j.type == "prismatic":
            p = p + R @ axis * value
        joints.append(replace(j, type="fixed", xyz=tuple(float(x) for x in p),
                              rpy=tuple(float(x) for x in matrix_to_rpy(R)), rotation=rotation_tuple(R), limits=None,
                              mimic=None))
    if outside:
        warnings.warn(ModelWarning(f"{len(outside)} joint{'s' if len(outside) > 1 else ''} locked outside "
                                   f"{'their' if len(outside) > 1 else 'its'} limits: " + ", ".join(outside)
                                   + " (radians or metres)"), stacklevel=3)
    return replace(desc, joints=tuple(joints), locked=desc.locked + tuple(locked))


def lock_floating_base(desc: RobotDescription, lock: dict[str, float | None], name: str = "base"):
    """(lock without the pattern that names the added floating base, whether the base is locked):
    --floating-base --lock base locks the free joint at the identity, a fixed base."""
    lock = normalize_lock(lock)
    movable = {j.name for j in desc.joints if j.type != "fixed"}
    if name in movable:  # the robot's own joint of that name is the one meant
        return lock, False
    hits = {p: v for p, v in lock.items() if p == name}  # named, not globbed: '*' means the robot's joints
    for pattern, value in hits.items():
        if value is not None:
            raise ModelError(f"lock '{pattern}={value:g}': the floating base is a free joint; it locks at the identity "
                             f"only (lock '{pattern}' without a value)")
    return {p: v for p, v in lock.items() if p not in hits}, bool(hits)


def _loop_joints(desc: RobotDescription) -> set[str]:
    """Names of the tree joints on a path between the two sides of a loop closure."""
    if not desc.loops:
        return set()
    parent_joint = {j.child: j for j in desc.joints}

    def path(link):
        out = []
        while link in parent_joint:
            out.append(parent_joint[link].name)
            link = parent_joint[link].parent
        return out

    names: set[str] = set()
    for c in desc.loops:
        a, b = path(c.parent), path(c.child)
        names |= set(a) ^ set(b)
    return names


def lock_patterns(names, movable_names) -> list[str]:
    """Few glob patterns that together match exactly ``names`` among ``movable_names``: a shared
    prefix with ``*`` where no other joint starts with it, else smaller groups, else the names."""
    targets = set(names)
    others = [n for n in movable_names if n not in targets]
    out: list[str] = []

    def cover(group: list[str]) -> None:
        if len(group) == 1:
            out.append(_escape(group[0]))
            return
        prefix = _common_prefix(group)
        if prefix and not any(o.startswith(prefix) for o in others):
            out.append(_escape(prefix) + "*")
            return
        buckets: dict[str, list[str]] = {}  # by the character after the prefix: at least two
        for n in group:
            buckets.setdefault(n[len(prefix) : len(prefix) + 1], []).append(n)
        for key in sorted(buckets):
            if key == "":
                out.extend(_escape(n) for n in buckets[key])
            else:
                cover(buckets[key])

    if targets:
        cover(sorted(targets))
    return out


def _escape(name: str) -> str:
    """A joint name as a glob that matches only itself."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _common_prefix(names: list[str]) -> str:
    lo, hi = min(names), max(names)
    k = 0
    while k < len(lo) and k < len(hi) and lo[k] == hi[k]:
        k += 1
    return lo[:k]


def lock_option(patterns) -> str:
    """The command-line options that lock ``patterns``, quoted for a POSIX shell."""
    import shlex

    return " ".join(f"--lock {shlex.quote(p)}" for p in patterns)
