"""Recursive Newton–Euler (Featherstone ch. 5) in the computation frame: τ = M q̈ + C q̇ + g
(docs/algorithms.md, RNEA and the gravity vector)."""

from __future__ import annotations

from .kinematics import NUMERIC, Tree
from .spatial import crf


def inverse_dynamics(tree: Tree, q, qd, qdd, bk=NUMERIC, gravity=True):
    """τ(q, q̇, q̈) with the robot's gravity (or none), the joints' armature included."""
    _, _, S, inertia = tree.placements(q, bk)
    v, Sdot = tree.velocities(S, qd, bk)
    a0 = bk.zeros(6)
    if gravity:
        a0[3:6] = -tree.gravity_in_computation_frame(q, bk)  # a_0 = −g: gravity as a base acceleration
    f = [None] * tree.N
    a = [None] * tree.N
    for i in range(tree.N):
        cols, par = tree.columns(i), tree.parent[i]
        a[i] = (a[par] if par >= 0 else a0) + S[:, cols] @ qdd[cols] + Sdot[:, cols] @ qd[cols]
        f[i] = inertia[i] @ a[i] + crf(v[i], bk) @ (inertia[i] @ v[i])
    return tree.joint_torques(S, f, qdd, bk, q, qd, qd)
