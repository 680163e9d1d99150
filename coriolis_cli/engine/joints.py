"""Joint types, the engine side of the joint seam: placement, motion subspace, configuration.

Each function dispatches on the joint code of :mod:`coriolis_cli.model.joints`; adding a joint
type adds a branch here and a row there. Everything is in the computation frame (see
``ModelArrays``), angular-first: a column of S is [ω; v_O] for unit joint velocity.
Pinocchio's counterparts: ``joint-revolute.hpp``, ``joint-prismatic.hpp``, ``joint-free-flyer.hpp``.
"""

from __future__ import annotations

import math

from numba import njit

from ..model.joints import FREE, PRISMATIC
from ..model.tree import G_PARENT_AXIS, G_ROT, G_ROT_HAT, G_ROT_HAT2

# A quaternion this far from unit norm is normalized with a warning.
QUATERNION_TOLERANCE = 1e-6

# Status codes returned by the kernels. 0: fine. k > 0: entry k - 1 of (q, q̇, q̈) laid end to end
# is not finite. RECHECK: an argument is not a contiguous vector of the right length, so the
# caller converts and checks it in full and calls again. Below that: -(2 + 2b) the quaternion of
# body b is zero (nothing computed), -(3 + 2b) it was normalized (results computed).
OK = 0
RECHECK = -1


@njit(cache=True)
def place_body(jt, geom, q, qs, vs, p, i, X, S):
    """Body i's rotation X[i, 0:3] (from its parent's, X[p, 0:3], or the identity when p < 0) and
    its position X[i, 3] (the joint origin on entry), and the joint's columns of S."""
    if jt == FREE:  # the computation frame is the base frame at this instant
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
    # revolute (and continuous): S = [w; pos × w]
    S[vs, 0] = w0
    S[vs, 1] = w1
    S[vs, 2] = w2
    S[vs, 3] = X[i, 3, 1] * w2 - X[i, 3, 2] * w1
    S[vs, 4] = X[i, 3, 2] * w0 - X[i, 3, 0] * w2
    S[vs, 5] = X[i, 3, 0] * w1 - X[i, 3, 1] * w0


@njit(cache=True)
def is_vector(x, n):
    """x holds n contiguous doubles. Callers from Python check type, dtype and ndim only: arrays
    reach the kernels typed as contiguous, and the stride is read before any entry."""
    return x.shape[0] == n and (n < 2 or x.strides[0] == 8)


@njit(cache=True)
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
        if ints[b, 1] == FREE:
            qs = ints[b, 2]
            nrm = math.sqrt(q[qs + 3] ** 2 + q[qs + 4] ** 2 + q[qs + 5] ** 2 + q[qs + 6] ** 2)
            if nrm < 1e-12:
                return -(2 + 2 * b)
            if abs(nrm - 1.0) > QUATERNION_TOLERANCE:
                for k in range(3, 7):
                    out[qs + k] = q[qs + k] / nrm
                if status == OK:
                    status = -(3 + 2 * b)
    return status


@njit(cache=True)
def check_finite(x, n, offset):
    """RECHECK unless x holds n contiguous doubles; status k + 1 + offset for the first
    non-finite x[k]; else OK."""
    if not is_vector(x, n):
        return RECHECK
    for k in range(x.shape[0]):
        if not math.isfinite(x[k]):
            return offset + k + 1
    return OK


@njit(cache=True)
def failed(status):
    """True for the status codes after which nothing was computed."""
    return status > 0 or status == RECHECK or (status < 0 and status % 2 == 0)


@njit(cache=True)
def root_acceleration(model, q, gravity, out):
    """out = a_0 = [0; −g] in the computation frame. With a free root joint that frame is the
    base's, so g is rotated by Rᵀ of the base quaternion (unit norm: see load_configuration)."""
    gx, gy, gz = gravity[0], gravity[1], gravity[2]
    ints = model.ints
    if ints.shape[0] > 0 and ints[0, 1] == FREE:
        qs = ints[0, 2]
        x, y, z, w = q[qs + 3], q[qs + 4], q[qs + 5], q[qs + 6]
        r00, r01, r02 = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
        r10, r11, r12 = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
        r20, r21, r22 = 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
        gx, gy, gz = (r00 * gravity[0] + r10 * gravity[1] + r20 * gravity[2],
                      r01 * gravity[0] + r11 * gravity[1] + r21 * gravity[2],
                      r02 * gravity[0] + r12 * gravity[1] + r22 * gravity[2])
    out[0] = 0.0
    out[1] = 0.0
    out[2] = 0.0
    out[3] = -gx
    out[4] = -gy
    out[5] = -gz
