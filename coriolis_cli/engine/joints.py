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
from ..model.tree import G_AXIS

# A quaternion this far from unit norm is normalized with a warning.
QUATERNION_TOLERANCE = 1e-6

# Status codes returned by the kernels. 0: fine. k > 0: entry k - 1 of (q, q̇, q̈) laid end to end
# is not finite. Negative: -(1 + 2b) the quaternion of body b is zero (nothing computed),
# -(2 + 2b) it was normalized (results computed).
OK = 0


@njit(cache=True)
def _rodrigues(x, y, z, angle, out):
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    out[0, 0] = t * x * x + c
    out[0, 1] = t * x * y - s * z
    out[0, 2] = t * x * z + s * y
    out[1, 0] = t * x * y + s * z
    out[1, 1] = t * y * y + c
    out[1, 2] = t * y * z - s * x
    out[2, 0] = t * x * z - s * y
    out[2, 1] = t * y * z + s * x
    out[2, 2] = t * z * z + c


@njit(cache=True)
def place_body(jt, geom, q, qs, vs, Rj, i, R, pos, S, Rq):
    """Body i's rotation R[i] and position pos[i] from its joint frame (Rj, pos[i] on entry) and
    the joint's configuration; the joint's columns of S. Rq is 3x3 scratch."""
    if jt == FREE:  # the computation frame is the base frame at this instant
        for r in range(3):
            pos[i, r] = 0.0
            for c in range(3):
                R[i, r, c] = 1.0 if r == c else 0.0
        for k in range(6):
            for r in range(6):
                S[vs + k, r] = 0.0
        for k in range(3):  # ν = [v; ω]: S = P = [[0, I3], [I3, 0]]
            S[vs + k, 3 + k] = 1.0
            S[vs + 3 + k, k] = 1.0
        return
    # geom is indexed in place: a row view per body would cost reference counting
    a0, a1, a2 = geom[i, G_AXIS], geom[i, G_AXIS + 1], geom[i, G_AXIS + 2]
    w0 = Rj[0, 0] * a0 + Rj[0, 1] * a1 + Rj[0, 2] * a2
    w1 = Rj[1, 0] * a0 + Rj[1, 1] * a1 + Rj[1, 2] * a2
    w2 = Rj[2, 0] * a0 + Rj[2, 1] * a1 + Rj[2, 2] * a2
    if jt == PRISMATIC:
        pos[i, 0] += w0 * q[qs]
        pos[i, 1] += w1 * q[qs]
        pos[i, 2] += w2 * q[qs]
        for r in range(3):
            for c in range(3):
                R[i, r, c] = Rj[r, c]
        S[vs, 0] = 0.0
        S[vs, 1] = 0.0
        S[vs, 2] = 0.0
        S[vs, 3] = w0
        S[vs, 4] = w1
        S[vs, 5] = w2
        return
    # revolute (and continuous): R = Rj Rot(axis, q), S = [w; pos × w]
    _rodrigues(a0, a1, a2, q[qs], Rq)
    for r in range(3):
        for c in range(3):
            R[i, r, c] = Rj[r, 0] * Rq[0, c] + Rj[r, 1] * Rq[1, c] + Rj[r, 2] * Rq[2, c]
    S[vs, 0] = w0
    S[vs, 1] = w1
    S[vs, 2] = w2
    S[vs, 3] = pos[i, 1] * w2 - pos[i, 2] * w1
    S[vs, 4] = pos[i, 2] * w0 - pos[i, 0] * w2
    S[vs, 5] = pos[i, 0] * w1 - pos[i, 1] * w0


@njit(cache=True)
def load_configuration(model, q, out):
    """Copy q into ``out`` as the kernels use it: every entry finite, quaternions of unit norm.
    Returns a status code (see the module's OK)."""
    ints = model.ints
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
                return -(1 + 2 * b)
            if abs(nrm - 1.0) > QUATERNION_TOLERANCE:
                for k in range(3, 7):
                    out[qs + k] = q[qs + k] / nrm
                if status == OK:
                    status = -(2 + 2 * b)
    return status


@njit(cache=True)
def check_finite(x, offset):
    """Status k + 1 + offset for the first non-finite x[k], else OK."""
    for k in range(x.shape[0]):
        if not math.isfinite(x[k]):
            return offset + k + 1
    return OK


@njit(cache=True)
def failed(status):
    """True for the status codes after which nothing was computed."""
    return status > 0 or (status < 0 and status % 2 != 0)
