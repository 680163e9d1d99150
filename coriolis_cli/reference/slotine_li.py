"""The Slotine–Li torque τ = M q̈_r + C q̇_r + g by Wensing–Slotine Alg. 3, never forming C
(docs/algorithms.md, Slotine–Li; the "line N" comments are that listing's lines)."""

from __future__ import annotations

from .kinematics import NUMERIC, Tree
from .spatial import body_coriolis


def slotine_li(tree: Tree, q, qd, qd_r, qdd_r, bk=NUMERIC):
    """v_i from q̇, w_i from q̇_r, a_i from q̈_r with the Ṡ of the true motion; f_i = I_i a_i +
    B(v_i, I_i) w_i (eq. 10's B, so that the C it stands for is Christoffel-consistent)."""
    _, _, S, inertia = tree.placements(q, bk)
    v, Sdot = tree.velocities(S, qd, bk)  # Algorithm 3, lines 3 and 5: true velocities, Ṡ
    a0 = bk.zeros(6)
    a0[3:6] = -tree.gravity_in_computation_frame(q, bk)  # line 1: a_0 = −g
    w, a, f = [None] * tree.N, [None] * tree.N, [None] * tree.N
    for i in range(tree.N):
        cols, par = tree.columns(i), tree.parent[i]
        w[i] = (w[par] if par >= 0 else bk.zeros(6)) + S[:, cols] @ qd_r[cols]  # line 4
        a[i] = (a[par] if par >= 0 else a0) + S[:, cols] @ qdd_r[cols] + Sdot[:, cols] @ qd_r[cols]  # line 6
        f[i] = inertia[i] @ a[i] + body_coriolis(v[i], inertia[i], bk) @ w[i]  # line 8
    return tree.joint_torques(S, f, qdd_r, bk, q, qd, qd_r)  # lines 11-14
