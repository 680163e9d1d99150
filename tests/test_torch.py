"""coriolis_cli.torch: the engine's functions as PyTorch operators, with autograd from the
analytic derivatives, fake implementations for torch.compile and vmap rules. Runs where PyTorch
is installed (`make test-torch`); skipped elsewhere."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import coriolis_cli as cc  # noqa: E402
import coriolis_cli.torch as ct  # noqa: E402

from .conftest import robot_path  # noqa: E402
from .framework_pairs import pairs  # noqa: E402

ROBOTS = {"panda": lambda: cc.load_robot("panda"), "quadruped, fixed base": lambda: cc.load_robot(robot_path("quadruped.urdf"))}


def _states(robot, seed=0, K=None):
    rng = np.random.default_rng(seed)
    shape = (robot.nv,) if K is None else (K, robot.nv)
    return tuple(torch.tensor(rng.uniform(-1.0, 1.0, shape)) for _ in range(3))


DIFFERENTIABLE = ("M", "tau", "g", "qdd", "M, Mdot, C", "C v", "p", "CTqd")


def _pairs(robot, keys=DIFFERENTIABLE + ("Gamma",)):
    return pairs(robot, ct, keys)


def _same_bits(a, b):
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_same_bits(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a.detach().numpy() if hasattr(a, "detach") else a), np.asarray(b)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("key", list(ROBOTS))
def test_values_batches_vmap_and_compile_give_the_numpy_functions_bits(key):
    robot = ROBOTS[key]()
    one, batch = _states(robot), _states(robot, 1, K=5)
    numpy = lambda states: [s.numpy() for s in states]  # noqa: E731
    for name, (ours, numpy_form) in _pairs(robot).items():
        assert _same_bits(ours(*one), numpy_form(*numpy(one))), name
        assert _same_bits(ours(*batch), numpy_form(*numpy(batch))), name
        assert _same_bits(torch.vmap(ours)(*batch), numpy_form(*numpy(batch))), name
        assert _same_bits(ours(batch[0], one[1], one[2]),
                          numpy_form(batch[0].numpy(), np.tile(one[1].numpy(), (5, 1)), np.tile(one[2].numpy(), (5, 1)))), name
        assert _same_bits(torch.compile(ours, fullgraph=True)(*batch), numpy_form(*numpy(batch))), name


@pytest.mark.parametrize("key", list(ROBOTS))
def test_gradients_in_both_modes_pass_gradcheck_and_tau_gradgradcheck(key):
    robot = ROBOTS[key]()
    states = tuple(s.requires_grad_(True) for s in _states(robot, 2))
    for name, (ours, _) in _pairs(robot, DIFFERENTIABLE).items():
        assert torch.autograd.gradcheck(ours, states, check_forward_ad=True), name
    tau = _pairs(robot)["tau"][0]
    assert torch.autograd.gradgradcheck(tau, states)
    # and the analytic derivatives themselves, through a compiled function
    q, v, a = (s.detach() for s in states)
    dq, dv, M = cc.inverse_dynamics_derivatives(robot, q.numpy(), v.numpy(), a.numpy())
    jac = torch.autograd.functional.jacobian(lambda q_: ct.inverse_dynamics(robot, q_, v, a), q)
    assert np.abs(jac.numpy() - dq).max() <= 1e-13 * max(1.0, np.abs(dq).max())
    x = q.clone().requires_grad_(True)
    torch.compile(lambda q_: ct.inverse_dynamics(robot, q_, v, a).square().sum(), fullgraph=True)(x).backward()
    tau_value = cc.inverse_dynamics(robot, q.numpy(), v.numpy(), a.numpy())
    assert np.abs(x.grad.numpy() - 2 * tau_value @ dq).max() <= 1e-12 * max(1.0, np.abs(2 * tau_value @ dq).max())


def test_gravity_and_refusals():
    robot = cc.load_robot("panda")
    q, v, a = _states(robot, 3)
    for gravity in (True, False, [0.3, -1.0, -9.0]):
        assert _same_bits(ct.inverse_dynamics(robot, q, v, a, gravity=gravity),
                          cc.inverse_dynamics(robot, q.numpy(), v.numpy(), a.numpy(), gravity=gravity))

    def refused(call, match):
        with pytest.raises(cc.StateError, match=match) as e:
            call()
        assert "\n" not in str(e.value)

    refused(lambda: ct.mass_matrix(robot, q.float()), "float64 tensors on the CPU")
    mimic = cc.load_robot(robot_path("gripper.urdf"), mimic="enforce")
    refused(lambda: ct.mass_matrix(mimic, torch.zeros(mimic.nq, dtype=torch.float64)), "pass robot.full")
    x = q.clone().requires_grad_(True)
    grad = torch.autograd.grad(ct.forward_dynamics(robot, x, v, a).sum(), x, create_graph=True)[0]
    refused(lambda: grad.sum().backward(), "no second derivatives of q̈ yet")
    refused(lambda: ct.christoffel(robot, x).sum().backward(), "does not differentiate Γ")


def _page_examples():
    """docs/api/torch.md's ```py blocks (the pages' test of ```python blocks leaves them here)."""
    import os
    import re

    page = open(os.path.join(os.path.dirname(__file__), "..", "docs", "api", "torch.md"), encoding="utf-8").read()
    return re.findall(r"```py\n(.*?)```", page, re.S)


def test_the_example_on_the_pytorch_page_runs():
    """docs/api/torch.md's example (a ```py block, which the pages' test of ```python blocks leaves
    to this target), run as written."""
    import subprocess
    import sys

    code = _page_examples()[0]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "torch.Size([4096, 7, 7])" in out.stdout and "leaked" not in out.stderr


def test_every_joint_type_gradients_with_respect_to_q_as_it_is_stored(tmp_path):
    """Free, spherical and planar joints, at states whose quaternions and (cos, sin) pairs are off
    unit norm: the values are the NumPy functions' bits, and gradcheck (finite differences in q's
    own nq entries, which the kernels normalize) holds the gradients that the tangent space's
    derivatives give through the transposed tangent map; gradgradcheck holds τ's on a floating base."""
    import warnings

    from .engine_cases import robots, states

    checked = 0
    for name, robot in robots(tmp_path):
        if robot.nq == robot.nv:
            continue
        q, v, a = (torch.tensor(x) for x in list(states(robot, 2, 12))[1])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the NumPy functions say when they normalize a quaternion
            for ours, numpy_form in _pairs(robot).values():
                try:
                    expected = numpy_form(q.numpy(), v.numpy(), a.numpy())
                except cc.SingularMassMatrixError:
                    continue
                assert _same_bits(ours(q, v, a), expected), name
            inputs = tuple(x.clone().requires_grad_(True) for x in (q, v, a))
            for key in ("tau", "M", "qdd", "M, Mdot, C", "C v", "p", "CTqd"):
                ours = _pairs(robot)[key][0]
                try:
                    assert torch.autograd.gradcheck(ours, inputs, check_forward_ad=True), (name, key)
                except cc.SingularMassMatrixError:
                    continue
                checked += 1
            if name == "quadruped.urdf+free":
                assert torch.autograd.gradgradcheck(_pairs(robot)["tau"][0], inputs)
    assert checked >= 40, checked


@pytest.mark.parametrize("key", list(ROBOTS))
def test_torch_func_transforms_give_the_analytic_derivatives(key):
    """torch.func's jacfwd (forward mode, the Functions' jvp), jacrev and hessian, under vmap, give
    the engine's analytic derivatives: forward mode once saw a tangent of zero through the
    operators (register_autograd's functions have no jvp), a silently wrong Jacobian."""
    from torch.func import hessian, jacfwd, jacrev, vmap

    robot = ROBOTS[key]()
    q, v, a = _states(robot, 4, K=3)
    dq, dv, M = cc.inverse_dynamics_derivatives(robot, q.numpy(), v.numpy(), a.numpy())
    tau = lambda q_, v_, a_: ct.inverse_dynamics(robot, q_, v_, a_)  # noqa: E731
    scale = max(1.0, np.abs(dq).max())
    for transform in (jacfwd, jacrev):
        J = vmap(transform(tau, argnums=(0, 1, 2)))(q, v, a)
        for ours, expected in zip(J, (dq, dv, M)):
            assert np.abs(ours.numpy() - expected).max() <= 1e-13 * scale
    T_qq = cc.inverse_dynamics_second_derivatives(robot, q.numpy(), v.numpy(), a.numpy())[0]  # [i, j, k]
    H = vmap(jacfwd(jacrev(tau)))(q, v, a)  # [i, k, j] = ∂²τ_i/∂q_k∂q_j
    assert np.abs(H.numpy() - T_qq.transpose(0, 1, 3, 2)).max() <= 1e-12 * max(1.0, np.abs(T_qq).max())
    assert torch.equal(vmap(lambda q_, v_, a_: hessian(lambda x: tau(x, v_, a_)[1])(q_))(q, v, a), H[:, 1])
    # every differentiable function: forward and reverse mode agree
    for name, (ours, _) in _pairs(robot, DIFFERENTIABLE).items():
        forward, reverse = jacfwd(ours, argnums=(0, 1, 2))(q[0], v[0], a[0]), jacrev(ours, argnums=(0, 1, 2))(q[0], v[0], a[0])
        for f, r in zip(torch.utils._pytree.tree_leaves(forward), torch.utils._pytree.tree_leaves(reverse)):
            assert torch.allclose(f, r, rtol=1e-12, atol=1e-12 * scale), name


def test_the_operators_alone_refuse_to_be_differentiated():
    from coriolis_cli.engine.torch_ops import robot_id

    robot = cc.load_robot("panda")
    q = torch.zeros(7, dtype=torch.float64)
    op = lambda q_: torch.ops.coriolis.gravity_vector(robot_id(robot), q_)  # noqa: E731
    assert torch.equal(op(q), ct.gravity_vector(robot, q))
    for call in (lambda: torch.func.jacfwd(op)(q), lambda: torch.func.jacrev(op)(q),
                 lambda: op(q.clone().requires_grad_(True))):
        with pytest.raises(cc.StateError, match="no derivatives of its own: call coriolis_cli.torch's functions"):
            call()
