"""Joint types, the engine side of the joint seam: placement, motion subspace, configuration.

Each function dispatches on the joint code of :mod:`coriolis_cli.model.joints`; adding a joint
type adds a branch here and a row there. Everything is in the computation frame (see
``ModelArrays``), angular-first: a column of S is [ω; v_O] for unit joint velocity.
Pinocchio's counterparts: ``joint-revolute.hpp``, ``joint-prismatic.hpp``, ``joint-free-flyer.hpp``.
"""

from __future__ import annotations

import math

from numba import njit

from ..model.joints import FLOATING, FREE, PLANAR, PRISMATIC, REVOLUTE, SPHERICAL
from ..model.tree import G_ARMATURE, G_PARENT_AXIS, G_ROT, G_ROT_HAT, G_ROT_HAT2
from .jit import helper

# A quaternion this far from unit norm is normalized with a warning.
QUATERNION_TOLERANCE = 1e-6

# Status codes returned by the kernels. 0: fine. k > 0: entry k - 1 of (q, q̇, q̈) laid end to end
# is not finite. RECHECK: an argument is not a contiguous vector of the right length, so the
# caller converts and checks it in full and calls again. Below that: -(2 + 2b) the quaternion of
# body b is zero (nothing computed), -(3 + 2b) it was normalized (results computed). SINGULAR + k:
# M is singular at DoF k (forward dynamics, nothing computed); above every entry number.
OK = 0
RECHECK = -1
SINGULAR = 1 << 40


@helper
def quaternion_matrix(x, y, z, w, out, o):
    """out[o:o+3, o:o+3] = the rotation of the unit quaternion (x, y, z, w)."""
    out[o, o] = 1 - 2 * (y * y + z * z)
    out[o, o + 1] = 2 * (x * y - z * w)
    out[o, o + 2] = 2 * (x * z + y * w)
    out[o + 1, o] = 2 * (x * y + z * w)
    out[o + 1, o + 1] = 1 - 2 * (x * x + z * z)
    out[o + 1, o + 2] = 2 * (y * z - x * w)
    out[o + 2, o] = 2 * (x * z - y * w)
    out[o + 2, o + 1] = 2 * (y * z + x * w)
    out[o + 2, o + 2] = 1 - 2 * (x * x + y * y)


@helper
def _place_multi_dof(jt, geom, q, qs, vs, p, i, X, S):
    """Spherical, planar and non-root free joints: the joint moves the child by (R_J(q), t_J(q))
    in the joint frame, and its motion subspace is constant in the child frame (Pinocchio's
    convention), so Ṡ = v × S holds as for the 1-DoF joints. Columns: spherical ω_x, ω_y, ω_z;
    planar v_x, v_y, ω_z; free v_x, v_y, v_z, ω_x, ω_y, ω_z (child axes)."""
    # L = E R_J into X[i, 0:3, 0:3]; R_J is built in X[i, 3:6, 3:6], unused in the 6x6 block
    tx, ty, tz = 0.0, 0.0, 0.0
    if jt == PLANAR:
        c, s = q[qs + 2], q[qs + 3]
        tx, ty = q[qs], q[qs + 1]
        J00, J01, J10, J11 = c, -s, s, c
        for r in range(3):  # L = E Rz: columns 0, 1 mix, column 2 is E's
            e0, e1, e2 = geom[i, G_ROT + 3 * r], geom[i, G_ROT + 3 * r + 1], geom[i, G_ROT + 3 * r + 2]
            X[i, r, 0] = e0 * J00 + e1 * J10
            X[i, r, 1] = e0 * J01 + e1 * J11
            X[i, r, 2] = e2
    else:
        o = qs + (3 if jt == FLOATING else 0)
        quaternion_matrix(q[o], q[o + 1], q[o + 2], q[o + 3], X[i], 3)
        if jt == FLOATING:
            tx, ty, tz = q[qs], q[qs + 1], q[qs + 2]
        for c in range(3):
            j0, j1, j2 = X[i, 3, 3 + c], X[i, 4, 3 + c], X[i, 5, 3 + c]
            for r in range(3):
                X[i, r, c] = geom[i, G_ROT + 3 * r] * j0 + geom[i, G_ROT + 3 * r + 1] * j1 + geom[i, G_ROT + 3 * r + 2] * j2
    # the joint's translation E t_J in the parent frame, added to the joint origin X[i, 3] = p_p + R_p t
    d0 = geom[i, G_ROT] * tx + geom[i, G_ROT + 1] * ty + geom[i, G_ROT + 2] * tz
    d1 = geom[i, G_ROT + 3] * tx + geom[i, G_ROT + 4] * ty + geom[i, G_ROT + 5] * tz
    d2 = geom[i, G_ROT + 6] * tx + geom[i, G_ROT + 7] * ty + geom[i, G_ROT + 8] * tz
    if p >= 0:  # R_i = R_p L, p_i += R_p d
        for c in range(3):
            l0, l1, l2 = X[i, 0, c], X[i, 1, c], X[i, 2, c]
            X[i, 0, c] = X[p, 0, 0] * l0 + X[p, 0, 1] * l1 + X[p, 0, 2] * l2
            X[i, 1, c] = X[p, 1, 0] * l0 + X[p, 1, 1] * l1 + X[p, 1, 2] * l2
            X[i, 2, c] = X[p, 2, 0] * l0 + X[p, 2, 1] * l1 + X[p, 2, 2] * l2
        X[i, 3, 0] += X[p, 0, 0] * d0 + X[p, 0, 1] * d1 + X[p, 0, 2] * d2
        X[i, 3, 1] += X[p, 1, 0] * d0 + X[p, 1, 1] * d1 + X[p, 1, 2] * d2
        X[i, 3, 2] += X[p, 2, 0] * d0 + X[p, 2, 1] * d1 + X[p, 2, 2] * d2
    else:
        X[i, 3, 0] += d0
        X[i, 3, 1] += d1
        X[i, 3, 2] += d2
    # columns: linear along child axis k: [0; R e_k]; angular about it: [R e_k; p × R e_k]
    k = vs
    if jt == FLOATING or jt == PLANAR:
        for axis in range(3 if jt == FLOATING else 2):
            _linear_column(X, i, axis, S, k)
            k += 1
    if jt == PLANAR:
        _angular_column(X, i, 2, S, k)
    else:
        for axis in range(3):
            _angular_column(X, i, axis, S, k)
            k += 1


@helper
def _linear_column(X, i, axis, S, k):
    S[k, 0] = 0.0
    S[k, 1] = 0.0
    S[k, 2] = 0.0
    S[k, 3] = X[i, 0, axis]
    S[k, 4] = X[i, 1, axis]
    S[k, 5] = X[i, 2, axis]


@helper(inline="always")
def _rotation_column(X, i, w0, w1, w2, S, k):
    """S[k] = [w; p_i × w]: rotation about the axis w through body i's origin."""
    S[k, 0] = w0
    S[k, 1] = w1
    S[k, 2] = w2
    S[k, 3] = X[i, 3, 1] * w2 - X[i, 3, 2] * w1
    S[k, 4] = X[i, 3, 2] * w0 - X[i, 3, 0] * w2
    S[k, 5] = X[i, 3, 0] * w1 - X[i, 3, 1] * w0


@helper
def _angular_column(X, i, axis, S, k):
    _rotation_column(X, i, X[i, 0, axis], X[i, 1, axis], X[i, 2, axis], S, k)


@helper(inline="always")
def _place_free_root(vs, i, X, S):
    """The free root joint: the computation frame is the base frame at this instant."""
    for r in range(3):
        X[i, 3, r] = 0.0
        for c in range(3):
            X[i, r, c] = 1.0 if r == c else 0.0
    for k in range(6):
        for r in range(6):
            S[vs + k, r] = 0.0
    for k in range(3):  # ν = [v; ω]: S = P = [[0, I3], [I3, 0]]
        S[vs + k, 3 + k] = 1.0
        S[vs + 3 + k, k] = 1.0


@helper
def place_body(jt, geom, q, qs, vs, p, i, X, S):
    """Body i's rotation X[i, 0:3] (from its parent's, X[p, 0:3], or the identity when p < 0) and
    its position X[i, 3] (the joint origin on entry), and the joint's columns of S."""
    if jt != REVOLUTE and jt != PRISMATIC:  # the 1-DoF joints first: most bodies have one
        if jt == FREE:
            _place_free_root(vs, i, X, S)
        else:
            _place_multi_dof(jt, geom, q, qs, vs, p, i, X, S)
        return
    # the joint's rotation in the parent frame, L = E Rot(a, q), into X[i] for now; geom is
    # indexed in place because a row view per body would cost reference counting
    if jt == PRISMATIC:
        for r in range(3):
            for c in range(3):
                X[i, r, c] = geom[i, G_ROT + 3 * r + c]
    else:
        sn, cs = math.sin(q[qs]), 1.0 - math.cos(q[qs])
        for r in range(3):
            for c in range(3):
                k = 3 * r + c
                X[i, r, c] = geom[i, G_ROT + k] + sn * geom[i, G_ROT_HAT + k] + cs * geom[i, G_ROT_HAT2 + k]
    a0, a1, a2 = geom[i, G_PARENT_AXIS], geom[i, G_PARENT_AXIS + 1], geom[i, G_PARENT_AXIS + 2]
    if p >= 0:  # R_i = R_p L, w = R_p (E a)
        for r in range(3):
            l0, l1, l2 = X[i, 0, r], X[i, 1, r], X[i, 2, r]  # column r of L: R_i[:, r] = R_p L[:, r]
            X[i, 0, r], X[i, 1, r], X[i, 2, r] = (X[p, 0, 0] * l0 + X[p, 0, 1] * l1 + X[p, 0, 2] * l2,
                                                  X[p, 1, 0] * l0 + X[p, 1, 1] * l1 + X[p, 1, 2] * l2,
                                                  X[p, 2, 0] * l0 + X[p, 2, 1] * l1 + X[p, 2, 2] * l2)
        w0 = X[p, 0, 0] * a0 + X[p, 0, 1] * a1 + X[p, 0, 2] * a2
        w1 = X[p, 1, 0] * a0 + X[p, 1, 1] * a1 + X[p, 1, 2] * a2
        w2 = X[p, 2, 0] * a0 + X[p, 2, 1] * a1 + X[p, 2, 2] * a2
    else:
        w0, w1, w2 = a0, a1, a2
    if jt == PRISMATIC:
        X[i, 3, 0] += w0 * q[qs]
        X[i, 3, 1] += w1 * q[qs]
        X[i, 3, 2] += w2 * q[qs]
        S[vs, 0] = 0.0
        S[vs, 1] = 0.0
        S[vs, 2] = 0.0
        S[vs, 3] = w0
        S[vs, 4] = w1
        S[vs, 5] = w2
        return
    _rotation_column(X, i, w0, w1, w2, S, vs)  # revolute (and continuous)


@helper
def is_vector(x, n):
    """x holds n contiguous doubles. Callers from Python check type, dtype and ndim only: arrays
    reach the kernels typed as contiguous, and the stride is read before any entry."""
    return x.shape[0] == n and (n < 2 or x.strides[0] == 8)


@helper
def load_configuration(model, q, out):
    """Copy q into ``out`` as the kernels use it: every entry finite, quaternions of unit norm.
    Returns a status code (see the module's OK)."""
    ints = model.ints
    if not is_vector(q, out.shape[0]):
        return RECHECK
    for k in range(q.shape[0]):
        x = q[k]
        if not math.isfinite(x):
            return k + 1
        out[k] = x
    status = OK
    for b in range(ints.shape[0]):
        jt = ints[b, 1]
        if jt == FREE or jt == FLOATING:
            o, size = ints[b, 2] + 3, 4
        elif jt == SPHERICAL:
            o, size = ints[b, 2], 4
        elif jt == PLANAR:
            o, size = ints[b, 2] + 2, 2  # (cos θ, sin θ)
        else:
            continue
        nrm = 0.0
        for k in range(size):
            nrm += q[o + k] ** 2
        nrm = math.sqrt(nrm)
        if nrm < 1e-12:
            return -(2 + 2 * b)
        if abs(nrm - 1.0) > QUATERNION_TOLERANCE:
            for k in range(size):
                out[o + k] = q[o + k] / nrm
            if status == OK:
                status = -(3 + 2 * b)
    return status


@helper
def check_finite(x, n, offset):
    """RECHECK unless x holds n contiguous doubles; status k + 1 + offset for the first
    non-finite x[k]; else OK."""
    if not is_vector(x, n):
        return RECHECK
    for k in range(x.shape[0]):
        if not math.isfinite(x[k]):
            return offset + k + 1
    return OK


@helper
def load_state(model, q, out, v1, v2, v3, count):
    """Every kernel's first step: q into ``out`` (load_configuration), then the first ``count`` of
    the velocity-like vectors v1, v2, v3 checked (nv doubles each, their entries numbered after
    q's in the status code). Returns the status code."""
    status = load_configuration(model, q, out)
    if failed(status):
        return status
    n, m = model.cols.shape[0], q.shape[0]
    bad = check_finite(v1, n, m) if count >= 1 else OK
    if bad == OK and count >= 2:
        bad = check_finite(v2, n, m + n)
    if bad == OK and count >= 3:
        bad = check_finite(v3, n, m + 2 * n)
    return status if bad == OK else bad


@njit(cache=True)
def failed(status):
    """True for the status codes after which nothing was computed."""
    return status > 0 or status == RECHECK or (status < 0 and status % 2 == 0)


@helper
def root_acceleration(model, q, gravity, out):
    """out = a_0 = [0; −g] in the computation frame. With a free root joint that frame is the
    base's, whose rotation is E R(quaternion) (E: the joint frame in the world; the quaternion has
    unit norm, see load_configuration), so g is rotated by its transpose."""
    gx, gy, gz = gravity[0], gravity[1], gravity[2]
    ints, geom = model.ints, model.geom
    if ints.shape[0] > 0 and ints[0, 1] == FREE:
        qs = ints[0, 2]
        x, y, z, w = q[qs + 3], q[qs + 4], q[qs + 5], q[qs + 6]
        r00, r01, r02 = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
        r10, r11, r12 = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
        r20, r21, r22 = 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
        # g_E = Eᵀ g, then g_base = Rᵀ g_E
        e0 = geom[0, G_ROT] * gx + geom[0, G_ROT + 3] * gy + geom[0, G_ROT + 6] * gz
        e1 = geom[0, G_ROT + 1] * gx + geom[0, G_ROT + 4] * gy + geom[0, G_ROT + 7] * gz
        e2 = geom[0, G_ROT + 2] * gx + geom[0, G_ROT + 5] * gy + geom[0, G_ROT + 8] * gz
        gx, gy, gz = (r00 * e0 + r10 * e1 + r20 * e2,
                      r01 * e0 + r11 * e1 + r21 * e2,
                      r02 * e0 + r12 * e1 + r22 * e2)
    out[0] = 0.0
    out[1] = 0.0
    out[2] = 0.0
    out[3] = -gx
    out[4] = -gy
    out[5] = -gz
