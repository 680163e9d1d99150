"""The functions coriolis_cli.jax and coriolis_cli.torch share with the NumPy API, paired with
it, for their tests: each pair takes the same states (q, q̇, and a third vector, q̈ or τ)."""

import numpy as np

import coriolis_cli as cc

NUMPY = {
    "M": lambda robot, q, v, a: cc.mass_matrix(robot, q),
    "tau": lambda robot, q, v, a: cc.inverse_dynamics(robot, q, v, a),
    "g": lambda robot, q, v, a: cc.gravity_vector(robot, q),
    "qdd": lambda robot, q, v, a: cc.forward_dynamics(robot, q, v, a),
    "M, Mdot, C": lambda robot, q, v, a: cc.coriolis_matrix(robot, q, v),
    "C": lambda robot, q, v, a: cc.coriolis_matrix(robot, q, v)[2],
    "Gamma": lambda robot, q, v, a: cc.christoffel(robot, q),
    "p": lambda robot, q, v, a: cc.generalized_momentum(robot, q, v),
    "CTqd": lambda robot, q, v, a: cc.coriolis_transpose_velocity(robot, q, v),
    "C v": lambda robot, q, v, a: np.einsum("...ij,...j->...i", cc.coriolis_matrix(robot, q, v)[2], a),
}


def pairs(robot, module, keys):
    """{key: (module's function, the NumPy function)} of ``keys``, both of (q, v, a)."""
    ours = {
        "M": lambda q, v, a: module.mass_matrix(robot, q),
        "tau": lambda q, v, a: module.inverse_dynamics(robot, q, v, a),
        "g": lambda q, v, a: module.gravity_vector(robot, q),
        "qdd": lambda q, v, a: module.forward_dynamics(robot, q, v, a),
        "M, Mdot, C": lambda q, v, a: module.coriolis_matrix(robot, q, v),
        "C": lambda q, v, a: module.coriolis_matrix(robot, q, v)[2],
        "Gamma": lambda q, v, a: module.christoffel(robot, q),
        "p": lambda q, v, a: module.generalized_momentum(robot, q, v),
        "CTqd": lambda q, v, a: module.coriolis_transpose_velocity(robot, q, v),
        "C v": lambda q, v, a: module.coriolis_product(robot, q, v, a),
    }
    return {k: (ours[k], lambda q, v, a, k=k: NUMPY[k](robot, q, v, a)) for k in keys}
