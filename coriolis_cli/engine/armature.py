"""Armature: rotor inertia reflected on the joints, as MuJoCo means it (``dof_armature``).

MuJoCo adds ``diag(a)`` to M in its own velocity coordinates and nothing to the bias: the
armature's generalized force is ``diag(a) q̈_mj``. Our coordinates are MuJoCo's for hinge, slide
and ball joints, so there the armature is a constant diagonal: M gains it, while Ṁ, C and Γ do
not see it. A free joint differs in one place: MuJoCo's linear velocity is the body origin's
ṗ = R ᴮv in the joint's parent frame, ours is ᴮv. With A = diag(a_x, a_y, a_z) on ṗ, the
armature's kinetic energy ½ ṗᵀ A ṗ = ½ ᴮvᵀ (Rᵀ A R) ᴮv is, in our coordinates,

    M_a = Rᵀ A R                        on the linear DoF (a I when the three are equal)
    C_a = M_a [ω]×                      on the linear rows and columns (ω: the joint's angular DoF)
    Ṁ_a = M_a [ω]× − [ω]× M_a = C_a + C_aᵀ
    Γ_a[:, :, ω_k] = M_a [e_k]×         (Γ[:, :, k] = C(q, e_k) for generalized speeds)

the same C that Algorithm 1 gives a point mass a at the body origin (B of eq. (10)), and what
τ_ours = T⁻ᵀ A T⁻¹ (ν̇ + ...) gives when MuJoCo's equation is mapped through ν = T qvel. A planar
joint (not MuJoCo's) keeps the constant diagonal on its child-frame velocities.

Each function adds the armature's part to what the rigid-body kernel computed; the quaternion
is read from the workspace's normalized q.
"""

from __future__ import annotations


from ..model.joints import FLOATING, FREE
from ..model.tree import G_ARMATURE
from .jit import helper
from .joints import quaternion_matrix


@helper
def armature_at(model, j):
    """The armature of DoF j (its diagonal entry in MuJoCo's coordinates)."""
    b = model.cols[j, 0]
    return model.geom[b, G_ARMATURE + j - model.ints[b, 3]]


@helper
def _linear_armature(model, q, b, W):
    """W[0:3, 3:6] = M_a = Rᵀ A R for the free joint of body b (W[0:3, 0:3] holds R); False when
    its linear DoF have no armature. W is 6x6 scratch."""
    R, Ma = W[0:3, 0:3], W[0:3, 3:6]
    g = model.geom
    a0, a1, a2 = g[b, G_ARMATURE], g[b, G_ARMATURE + 1], g[b, G_ARMATURE + 2]
    if a0 == 0.0 and a1 == 0.0 and a2 == 0.0:
        return False
    for r in range(3):
        for c in range(3):
            Ma[r, c] = 0.0
    if a0 == a1 and a1 == a2:
        for r in range(3):
            Ma[r, r] = a0
        return True
    o = model.ints[b, 2] + 3
    quaternion_matrix(q[o], q[o + 1], q[o + 2], q[o + 3], R, 0)
    for r in range(3):
        for c in range(3):
            Ma[r, c] = a0 * R[0, r] * R[0, c] + a1 * R[1, r] * R[1, c] + a2 * R[2, r] * R[2, c]
    return True


@helper
def _is_free(model, b):
    code = model.ints[b, 1]
    return code == FREE or code == FLOATING


@helper
def _diagonal_armature(model, j):
    """DoF j's constant diagonal armature; 0 on a free joint's linear DoF (their M_a is a block)."""
    b = model.cols[j, 0]
    if _is_free(model, b) and j - model.ints[b, 3] < 3:
        return 0.0
    return armature_at(model, j)


@helper
def add_armature_mass(model, q, M, W):
    """M += the armature's M_a; W is 6x6 scratch."""
    ints = model.ints
    for j in range(model.cols.shape[0]):
        M[j, j] += _diagonal_armature(model, j)
    for b in range(ints.shape[0]):
        if _is_free(model, b) and _linear_armature(model, q, b, W):
            s = ints[b, 3]
            for r in range(3):
                for c in range(3):
                    M[s + r, s + c] += W[r, 3 + c]


@helper
def add_armature_coriolis(model, q, qd, Mdot, C, W):
    """C += C_a and Ṁ += Ṁ_a of the free joints (other joints' armature adds nothing to them)."""
    ints = model.ints
    for b in range(ints.shape[0]):
        if not (_is_free(model, b) and _linear_armature(model, q, b, W)):
            continue
        Ma, s = W[0:3, 3:6], ints[b, 3]
        wx, wy, wz = qd[s + 3], qd[s + 4], qd[s + 5]
        dC = W[3:6, 0:3]
        for r in range(3):  # (M_a [ω]×)[r, :] = [m_r1 wz − m_r2 wy, m_r2 wx − m_r0 wz, m_r0 wy − m_r1 wx]
            dC[r, 0] = Ma[r, 1] * wz - Ma[r, 2] * wy
            dC[r, 1] = Ma[r, 2] * wx - Ma[r, 0] * wz
            dC[r, 2] = Ma[r, 0] * wy - Ma[r, 1] * wx
        for r in range(3):
            for c in range(3):
                C[s + r, s + c] += dC[r, c]
                Mdot[s + r, s + c] += dC[r, c] + dC[c, r]


@helper
def add_armature_christoffel(model, q, Gamma, W):
    """Γ[:, :, k] += C_a(q, e_k) of the free joints."""
    ints = model.ints
    for b in range(ints.shape[0]):
        if not (_is_free(model, b) and _linear_armature(model, q, b, W)):
            continue
        Ma, s = W[0:3, 3:6], ints[b, 3]
        for r in range(3):  # [e_x]×, [e_y]×, [e_z]× columns of M_a [e_k]×
            Gamma[s + r, s + 1, s + 3] += Ma[r, 2]
            Gamma[s + r, s + 2, s + 3] -= Ma[r, 1]
            Gamma[s + r, s + 2, s + 4] += Ma[r, 0]
            Gamma[s + r, s, s + 4] -= Ma[r, 2]
            Gamma[s + r, s, s + 5] += Ma[r, 1]
            Gamma[s + r, s + 1, s + 5] -= Ma[r, 0]


@helper
def add_armature_transpose(model, q, qd, out, W):
    """out += C_aᵀ q̇: −ω × (M_a v) on a free joint's linear DoF (C_aᵀ = −[ω]× M_a)."""
    ints = model.ints
    for b in range(ints.shape[0]):
        if not (_is_free(model, b) and _linear_armature(model, q, b, W)):
            continue
        Ma, s = W[0:3, 3:6], ints[b, 3]
        wx, wy, wz = qd[s + 3], qd[s + 4], qd[s + 5]
        m0 = Ma[0, 0] * qd[s] + Ma[0, 1] * qd[s + 1] + Ma[0, 2] * qd[s + 2]
        m1 = Ma[1, 0] * qd[s] + Ma[1, 1] * qd[s + 1] + Ma[1, 2] * qd[s + 2]
        m2 = Ma[2, 0] * qd[s] + Ma[2, 1] * qd[s + 1] + Ma[2, 2] * qd[s + 2]
        out[s] -= wy * m2 - wz * m1
        out[s + 1] -= wz * m0 - wx * m2
        out[s + 2] -= wx * m1 - wy * m0


@helper
def add_armature_force(model, q, qd, x, w, tau, W):
    """τ += M_a x + C_a(q, q̇) w: the armature's force at acceleration x (q̈, or Slotine–Li's q̈_r)
    with C multiplying w (q̇, or q̇_r)."""
    ints = model.ints
    for j in range(model.cols.shape[0]):
        tau[j] += _diagonal_armature(model, j) * x[j]
    for b in range(ints.shape[0]):
        if not (_is_free(model, b) and _linear_armature(model, q, b, W)):
            continue
        Ma, s = W[0:3, 3:6], ints[b, 3]
        wx, wy, wz = qd[s + 3], qd[s + 4], qd[s + 5]
        cx = wy * w[s + 2] - wz * w[s + 1]  # ω × w_v
        cy = wz * w[s] - wx * w[s + 2]
        cz = wx * w[s + 1] - wy * w[s]
        for r in range(3):
            tau[s + r] += (Ma[r, 0] * (x[s] + cx) + Ma[r, 1] * (x[s + 1] + cy) + Ma[r, 2] * (x[s + 2] + cz))
