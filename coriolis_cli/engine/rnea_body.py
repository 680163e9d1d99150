"""The recursive Newton-Euler algorithm (rnea.py) in body coordinates, as Pinocchio's rnea and
computeGeneralizedGravity run it, for robots of 1-DoF joints under at most a free root
(engine.data.body_frame_joints): each body's inertia is constant in its own frame and S_i a unit
column (slotine_li_body.py), so no placement in a computation frame nor rotated inertia is formed.

    τ:    v_i = iX_p v_p + S_i q̇_i,  a_i = iX_p a_p + S_i q̈_i + v_i × S_i q̇_i  (a_0 = −g),
          f_i = I_i a_i + v_i ×* I_i v_i,  τ_i = S_iᵀ f_i,  f_p += pX_i* f_i
    g(q): the same at rest, where the velocity terms vanish: a_i = iX_p a_p, f_i = I_i a_i.

rnea.py serves other robots; the tests hold the two equal.
"""

from __future__ import annotations

from numba import njit, prange

from ..model.joints import FREE
from .data import G_, TAU_, kernel_data, unpack_at
from .armature import add_armature_force
from .jit import helper
from .joints import failed, load_configuration, root_acceleration
from .slotine_li import MODEL_THETA
from .slotine_li_body import body_placement, child_rows, force_cross, inertia_times, joint_forces, local_motion, local_parameters


@helper
def gravity_local_kernel(model, data, q, gravity, g):
    """g(q) into ``g``; returns a status code (engine.joints)."""
    ints, geom = model.ints, model.geom
    N = ints.shape[0]
    n = model.cols.shape[0]
    qn = data.q
    status = load_configuration(model, q, qn)
    if failed(status):
        return status
    B, V = data.blocks, data.rows
    Xb = B[2 * N : 3 * N]
    a, f = V[2 * n + N : 2 * n + 2 * N], V[2 * n + 2 * N : 2 * n + 3 * N]
    F = B[3 * N]
    root_acceleration(model, qn, gravity, F[0])
    for i in range(N):  # a_i = iX_p a_p, from a_0 = −g in the computation frame
        jt, p = ints[i, 1], ints[i, 0]
        if jt == FREE:  # the root's frame is the computation frame
            for k in range(6):
                a[i, k] = F[0, k]
        else:
            body_placement(geom, jt, qn[ints[i, 2]], i, Xb)
            if p >= 0:
                child_rows(Xb, i, a, p, a)
            else:
                child_rows(Xb, i, F, 0, a)
        f[i, 0], f[i, 1], f[i, 2], f[i, 3], f[i, 4], f[i, 5] = inertia_times(
            local_parameters(geom, False, MODEL_THETA, i), a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5])
    joint_forces(model, Xb, f, g)
    return status


@helper
def rnea_local_kernel(model, data, q, qd, qdd, gravity, tau):
    """τ = M q̈ + C q̇ + g into ``tau``: Slotine–Li's motion in body coordinates at q̇_r = q̇, q̈_r = q̈
    (slotine_li_body.local_motion), f_i = I_i a_i + v_i ×* I_i v_i, then the joints' forces and the
    armature's. Returns a status code (engine.joints)."""
    ints, geom = model.ints, model.geom
    N = ints.shape[0]
    n = model.cols.shape[0]
    status = local_motion(model, data, q, qd, qd, qdd, gravity)
    if failed(status):  # q̈ is local_motion's third vector and rnea.py's second: its entries numbered as there
        m = q.shape[0]
        return status - n if m + 2 * n < status <= m + 3 * n else status
    B, V = data.blocks, data.rows
    Xb = B[2 * N : 3 * N]
    v, a, f = V[2 * n : 2 * n + N], V[2 * n + N : 2 * n + 2 * N], V[2 * n + 2 * N : 2 * n + 3 * N]
    for i in range(N):
        p = local_parameters(geom, False, MODEL_THETA, i)
        w0, w1, w2, u0, u1, u2 = v[i, 0], v[i, 1], v[i, 2], v[i, 3], v[i, 4], v[i, 5]
        n0, n1, n2, f0, f1, f2 = inertia_times(p, a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5])
        g0, g1, g2, l0, l1, l2 = inertia_times(p, w0, w1, w2, u0, u1, u2)  # I v
        c0, c1, c2, c3, c4, c5 = force_cross(w0, w1, w2, u0, u1, u2, g0, g1, g2, l0, l1, l2)
        f[i, 0], f[i, 1], f[i, 2], f[i, 3], f[i, 4], f[i, 5] = n0 + c0, n1 + c1, n2 + c2, f0 + c3, f1 + c4, f2 + c5
    joint_forces(model, Xb, f, tau)
    add_armature_force(model, data.q, qd, qdd, qd, tau, B[3 * N + 1])
    return status


# ---- as Python calls it: the workspace as one address (data.unpack_at), for the control loop's
# call with data= and the checked one alike, so that both give the same bits
@njit(cache=True)
def inverse_dynamics_local_entry(address, q, qd, qdd, gravity):
    model, data = unpack_at(address)
    return rnea_local_kernel(model, data, q, qd, qdd, gravity, data.vectors[TAU_])


@njit(cache=True)
def gravity_local_entry(address, q, gravity):
    model, data = unpack_at(address)
    return gravity_local_kernel(model, data, q, gravity, data.vectors[G_])


@njit(cache=True, parallel=True)
def inverse_dynamics_local_batch(model, Q, QD, QDD, gravity, nc, tau, status):
    """Each state as a call with data= computes it, so that a batch equals its single calls to the
    last bit."""
    K = Q.shape[0]
    for t in prange(nc):
        d = kernel_data(Q.shape[1], model.cols.shape[0], model.ints.shape[0])
        for s in range(t * K // nc, (t + 1) * K // nc):
            status[s] = rnea_local_kernel(model, d, Q[s], QD[s], QDD[s], gravity, tau[s])


@njit(cache=True, parallel=True)
def gravity_local_batch(model, Q, gravity, nc, g, status):
    """As inverse_dynamics_local_batch, for g(q)."""
    K = Q.shape[0]
    for t in prange(nc):
        d = kernel_data(Q.shape[1], model.cols.shape[0], model.ints.shape[0])
        for s in range(t * K // nc, (t + 1) * K // nc):
            status[s] = gravity_local_kernel(model, d, Q[s], gravity, g[s])
