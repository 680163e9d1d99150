"""coriolis_cli.jax: the kernels inside jitted, vmapped and differentiated JAX programs, through
XLA's foreign-function interface. Values are the NumPy functions' bits (the same kernels);
derivatives are the engine's analytic ones, held to central differences as well."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

import coriolis_cli as cc  # noqa: E402
import coriolis_cli.jax as cj  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from .conftest import robot_path  # noqa: E402
from .framework_pairs import pairs  # noqa: E402

ROBOTS = {"panda": lambda: cc.load_robot("panda"), "quadruped, fixed base": lambda: cc.load_robot(robot_path("quadruped.urdf"))}


def _states(robot, seed=0, K=None):
    rng = np.random.default_rng(seed)
    shape = (robot.nv,) if K is None else (K, robot.nv)
    return rng.uniform(-1.0, 1.0, shape), rng.uniform(-1.0, 1.0, shape), rng.uniform(-1.0, 1.0, shape)


def _pairs(robot):
    """(JAX function, NumPy function) of the same states."""
    return pairs(robot, cj, ("M", "tau", "g", "qdd", "M, Mdot, C", "Gamma", "p", "CTqd"))


def _same_bits(a, b):
    if isinstance(b, tuple):
        return isinstance(a, tuple) and len(a) == len(b) and all(_same_bits(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("key", list(ROBOTS))
def test_jitted_calls_and_batches_give_the_numpy_functions_bits(key):
    robot = ROBOTS[key]()
    one, batch = _states(robot), _states(robot, 1, K=5)
    for name, (ours, numpy_form) in _pairs(robot).items():
        assert _same_bits(jax.jit(ours)(*one), numpy_form(*one)), name
        assert _same_bits(jax.jit(ours)(*batch), numpy_form(*batch)), name  # (K, ·) states: one call
        assert _same_bits(jax.jit(jax.vmap(ours))(*batch), numpy_form(*batch)), name
        # a batch over two axes, and a state broadcast against a batch
        Q, V, A = (x.reshape(5, 1, -1).repeat(2, axis=1) for x in batch)
        twice = jax.jit(ours)(Q, V, A)
        first = tuple(x[:, 0] for x in twice) if isinstance(twice, tuple) else twice[:, 0]
        assert _same_bits(first, numpy_form(*batch)), name
        assert _same_bits(jax.jit(ours)(batch[0], one[1], one[2]),
                          numpy_form(batch[0], np.tile(one[1], (5, 1)), np.tile(one[2], (5, 1)))), name


@pytest.mark.parametrize("key", list(ROBOTS))
def test_derivatives_are_the_analytic_ones_and_the_slopes_of_central_differences(key):
    robot = ROBOTS[key]()
    q, v, a = _states(robot, 2)
    n = robot.nv
    dq, dv, M = cc.inverse_dynamics_derivatives(robot, q, v, a)
    fq, fv, Minv = cc.forward_dynamics_derivatives(robot, q, v, a)
    Gamma = cc.christoffel(robot, q)
    analytic = {
        ("tau", 0): dq, ("tau", 1): dv, ("tau", 2): M,
        ("qdd", 0): fq, ("qdd", 1): fv, ("qdd", 2): Minv,
        ("g", 0): cc.gravity_derivatives(robot, q),
        ("M", 0): Gamma + Gamma.transpose(1, 0, 2),  # [i, j, k] = ∂M_ij/∂q_k
        ("p", 0): cc.momentum_derivatives(robot, q, v), ("p", 1): M,
        ("CTqd", 0): cc.coriolis_transpose_derivatives(robot, q, v)[0],
        ("CTqd", 1): cc.coriolis_transpose_derivatives(robot, q, v)[1],
        ("C v", 0): cc.coriolis_product_derivatives(robot, q, v, a)[0],
        ("C v", 1): cc.coriolis_product_derivatives(robot, q, v, a)[1],
        ("C v", 2): cc.coriolis_matrix(robot, q, v)[2],
        ("C", 0): cc.coriolis_matrix_derivatives(robot, q, v),  # [i, j, k] = ∂C_ij/∂q_k
        ("C", 1): Gamma,
    }
    forms = pairs(robot, cj, ("M", "tau", "g", "qdd", "p", "CTqd", "C"))
    forms["C v"] = (lambda q, v, a: cj.coriolis_product(robot, q, v, a),
                    lambda q, v, a: cc.coriolis_matrix(robot, q, v)[2] @ a)
    for (name, argument), expected in analytic.items():
        ours, numpy_form = forms[name]
        for jacobian in (jax.jacfwd, jax.jacrev):
            got = np.asarray(jax.jit(jacobian(ours, argnums=argument))(q, v, a))
            assert np.abs(got - expected).max() <= 1e-13 * max(1.0, np.abs(expected).max()), (name, argument)
        h, states = 1e-6, [q, v, a]
        slopes = []
        for k in range(n):
            plus, minus = [x.copy() for x in states], [x.copy() for x in states]
            plus[argument][k] += h
            minus[argument][k] -= h
            slopes.append((np.asarray(numpy_form(*plus)) - np.asarray(numpy_form(*minus))) / (2 * h))
        slopes = np.stack(slopes, axis=-1)
        assert np.abs(expected - slopes).max() <= 1e-7 * max(1.0, np.abs(expected).max()), (name, argument)


def test_gradients_compose_with_jit_and_vmap():
    robot = cc.load_robot("panda")
    Q, V, A = _states(robot, 3, K=4)

    def effort(q, v, a):
        return 0.5 * cj.inverse_dynamics(robot, q, v, a) @ cj.inverse_dynamics(robot, q, v, a)

    batched = jax.jit(jax.vmap(jax.grad(effort, argnums=(0, 1, 2))))(Q, V, A)
    for s in range(4):
        tau = cc.inverse_dynamics(robot, Q[s], V[s], A[s])
        for got, D in zip(batched, cc.inverse_dynamics_derivatives(robot, Q[s], V[s], A[s])):
            assert np.abs(np.asarray(got[s]) - D.T @ tau).max() <= 1e-12 * max(1.0, np.abs(D.T @ tau).max())
    # a rollout of the forward dynamics, differentiated end to end against central differences
    q0, v0, _ = _states(robot, 4)
    taus = np.random.default_rng(5).uniform(-5.0, 5.0, (20, robot.nv))

    def final_speed(taus, forward):
        q, v = q0, v0
        for tau in taus:
            v = v + 0.01 * forward(q, v, tau)
            q = q + 0.01 * v
        return v @ v

    grad = np.asarray(jax.jit(jax.grad(lambda t: final_speed(t, lambda q, v, tau: cj.forward_dynamics(robot, q, v, tau))))(taus))
    numpy_rollout = lambda t: final_speed(t, lambda q, v, tau: cc.forward_dynamics(robot, q, v, tau))  # noqa: E731
    for k in ((0, 0), (7, 3), (19, 6)):
        plus, minus = taus.copy(), taus.copy()
        plus[k] += 1e-6
        minus[k] -= 1e-6
        slope = (numpy_rollout(plus) - numpy_rollout(minus)) / 2e-6
        assert abs(grad[k] - slope) <= 1e-7 * max(1.0, abs(slope)), (k, grad[k], slope)


def test_gravity_is_the_robots_none_or_a_vector():
    robot = cc.load_robot("panda")
    q, v, a = _states(robot, 6)
    for gravity in (True, False, [0.3, -1.0, -9.0]):
        assert _same_bits(jax.jit(lambda q, v, a, g=gravity: cj.inverse_dynamics(robot, q, v, a, gravity=g))(q, v, a),
                          cc.inverse_dynamics(robot, q, v, a, gravity=gravity))
        assert _same_bits(cj.gravity_vector(robot, q, gravity=gravity), cc.gravity_vector(robot, q, gravity=gravity))


def test_a_state_the_numpy_functions_refuse_gives_nan_and_others_are_refused_in_one_line():
    robot = cc.load_robot("panda")
    q, v, a = _states(robot, 7)
    bad = q.copy()
    bad[2] = np.nan
    Q = np.stack([q, bad])
    out = np.asarray(jax.jit(lambda q: cj.mass_matrix(robot, q))(Q))
    assert np.isnan(out[1]).all() and _same_bits(out[0], cc.mass_matrix(robot, q))

    def refused(call, match):
        with pytest.raises(cc.StateError, match=match) as e:
            call()
        assert "\n" not in str(e.value)

    mimic = cc.load_robot(robot_path("gripper.urdf"), mimic="enforce")
    refused(lambda: cj.mass_matrix(mimic, np.zeros(mimic.nq)), "pass robot.full")
    refused(lambda: jax.jacfwd(lambda q_: cj.christoffel(robot, q_))(q), "does not differentiate Γ")
    refused(lambda: cj.inverse_dynamics(robot, q[:5], v, a), r"q must have shape \(\.\.\., 7\)")
    refused(lambda: cj.inverse_dynamics(robot, q, v[:3], a), r"must have shape \(\.\.\., 7\)")
    jax.config.update("jax_enable_x64", False)
    try:
        refused(lambda: cj.mass_matrix(robot, q), "jax_enable_x64")
    finally:
        jax.config.update("jax_enable_x64", True)


def test_every_joint_type_in_the_tangent_space_as_the_numpy_functions(tmp_path):
    """Free, spherical and planar joints (and a free joint's armature), at a state whose
    quaternions and (cos, sin) pairs are off unit norm: the values are the NumPy functions' bits; a tangent of q moves the outputs as the
    analytic derivatives say along the velocity in the tangent space it stands for (integrate's
    direction), a tangent along the quaternion itself moves nothing, and gradients equal central
    differences along integrate."""
    import warnings

    from .engine_cases import robots, states

    def forms(robot):
        return pairs(robot, cj, ("M", "tau", "g", "qdd", "C", "p", "CTqd"))

    checked = 0
    for name, robot in robots(tmp_path):
        if robot.nq == robot.nv:
            continue
        rng = np.random.default_rng(8)
        for q, v, a in list(states(robot, 2, 9))[1:]:  # quaternions and (cos, sin) pairs off unit norm
            delta = rng.standard_normal(robot.nv)
            h = 1e-6
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the NumPy functions say when they normalize a quaternion
                q_plus, q_minus = cc.integrate(robot, q, h * delta), cc.integrate(robot, q, -h * delta)
                # integrate returns unit quaternions and (cos, sin) pairs: the path through q itself
                # has them at q's norms, and a q̇ along q's own pair moves nothing
                qdot = (q_plus - q_minus) / (2 * h)
                radial = np.zeros(robot.nq)
                for body, qs in zip(robot.bodies, robot.q_start):
                    kind, qs = body.joint.type, int(qs)
                    at = {"free": qs + 3, "floating": qs + 3, "spherical": qs, "planar": qs + 2}.get(kind)
                    if at is None:
                        continue
                    width = 2 if kind == "planar" else 4
                    qdot[at:at + width] *= np.linalg.norm(q[at:at + width])
                    radial[at:at + width] = q[at:at + width]
                for key, (ours, numpy_form) in forms(robot).items():
                    try:
                        expected = numpy_form(q, v, a)
                    except cc.SingularMassMatrixError:
                        assert np.isnan(np.asarray(ours(q, v, a))).all(), (name, key)
                        continue
                    assert _same_bits(ours(q, v, a), expected), (name, key)
                    _, along = jax.jvp(lambda q_: ours(q_, v, a), (q,), (qdot,))
                    slope = (numpy_form(q_plus, v, a) - numpy_form(q_minus, v, a)) / (2 * h)
                    scale = max(1.0, np.abs(slope).max())
                    assert np.abs(np.asarray(along) - slope).max() <= 1e-6 * scale, (name, key)
                    _, still = jax.jvp(lambda q_: ours(q_, v, a), (q,), (radial,))
                    assert np.abs(np.asarray(still)).max() <= 1e-12 * max(1.0, np.abs(expected).max()), (name, key)
                    if key in ("tau", "M"):  # reverse mode: the same rules transposed
                        weights = rng.standard_normal(np.shape(expected))
                        grad = np.asarray(jax.grad(lambda q_: jnp_sum(ours(q_, v, a) * weights))(q))
                        assert abs(grad @ qdot - np.sum(slope * weights)) <= \
                            1e-6 * max(1.0, np.abs(slope * weights).sum()), (name, key)
                    checked += 1
    assert checked >= 35, checked


def jnp_sum(x):
    return jax.numpy.sum(x)


@pytest.mark.parametrize("key", ["panda", "quadruped, floating"])
def test_second_derivatives_of_tau_are_the_tensors_and_pass_check_grads(key):
    """τ's Hessians come from inverse_dynamics_second_derivatives (the Jacobians' own derivatives);
    jax.test_util.check_grads holds them to finite differences to order 2, forward and reverse."""
    from jax.test_util import check_grads

    robot = cc.load_robot("panda") if key == "panda" else cc.load_robot(robot_path("quadruped.urdf"), floating_base=True)
    rng = np.random.default_rng(10)
    q = cc.random_configuration(robot, rng)
    v, a = rng.uniform(-1.0, 1.0, (2, robot.nv))

    def tau(q, v, a):
        return cj.inverse_dynamics(robot, q, v, a)

    check_grads(tau, (q, v, a), order=2, modes=("fwd", "rev"))
    T_qq, T_vv, T_qv, T_qa = cc.inverse_dynamics_second_derivatives(robot, q, v, a)
    # jacfwd(jacrev(τ, y), x)[i, k, j] = ∂/∂x_j (∂τ_i/∂y_k): the tensors' [i, j, k]
    hessian = lambda x, y: np.asarray(jax.jit(jax.jacfwd(jax.jacrev(tau, argnums=y), argnums=x))(q, v, a))  # noqa: E731
    assert _same_bits(hessian(1, 1).transpose(0, 2, 1), T_vv)
    if robot.nq == robot.nv:  # on a floating base the q-blocks carry the tangent map's nq columns
        for (x, y), T in {(0, 0): T_qq, (0, 1): T_qv, (0, 2): T_qa}.items():
            assert np.abs(hessian(x, y).transpose(0, 2, 1) - T).max() <= 1e-13 * max(1.0, np.abs(T).max()), (x, y)
    with pytest.raises(cc.StateError, match="no second derivatives of q̈ yet") as e:
        jax.hessian(lambda q_: cj.forward_dynamics(robot, q_, v, a).sum())(q)
    assert "\n" not in str(e.value)


def test_arrays_off_the_cpu_are_refused_in_one_line(monkeypatch):
    """The handlers exist for the CPU only: a GPU's arrays, or a jitted call whose default backend
    is a GPU, get one line saying how to move them, not XLA's error or a silent copy."""
    robot = cc.load_robot("panda")
    q = jnp.zeros(7)
    assert cj.mass_matrix(robot, q).shape == (7, 7)

    class OnAGpu:
        platform = "gpu"

    monkeypatch.setattr(type(q), "devices", lambda self: {OnAGpu()})
    with pytest.raises(cc.StateError, match=r"computes on the CPU, got arrays on gpu: jax.device_put") as e:
        cj.mass_matrix(robot, q)
    assert "\n" not in str(e.value)
    monkeypatch.undo()
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    with pytest.raises(cc.StateError, match="computes on the CPU, got arrays on gpu"):
        jax.jit(lambda x: cj.mass_matrix(robot, x))(q)
