"""A state whose values are finite but too large to compute with is said to be so, not blamed on an
input: forward_dynamics_derivatives with q̇ = 1e200 said 'tau[panda_joint1] is not finite (0.0)',
the overflowed q̈ taken for τ; forward_dynamics returned NaN with no word; compute said 'tau ...
(nan)' of a τ the user never gave."""

import numpy as np
import pytest

import coriolis_cli as cc

from .conftest import assert_one_line_error

OVERFLOW = "the dynamics overflow at this state: every input is finite but the result is not"


@pytest.fixture(scope="module")
def panda():
    return cc.load_robot("panda")


@pytest.mark.parametrize("call", [
    lambda r, q, v: cc.forward_dynamics_derivatives(r, q, v, np.zeros(r.nv)),
    lambda r, q, v: cc.forward_dynamics(r, q, v, np.zeros(r.nv)),
    lambda r, q, v: cc.inverse_dynamics(r, q, v, np.zeros(r.nv)),
    lambda r, q, v: cc.forward_dynamics(r, np.tile(q, (3, 1)), np.tile(v, (3, 1)), np.zeros((3, r.nv))),
    lambda r, q, v: cc.forward_dynamics(r, q, v, np.zeros(r.nv), data=cc.create_data(r)),
])
def test_an_overflowing_state_is_said_to_overflow(panda, call):
    v = np.zeros(panda.nv)
    v[0] = 1e200
    with pytest.raises(cc.StateError, match=OVERFLOW):
        call(panda, panda.neutral_configuration(), v)


def test_compute_says_so_in_one_line(run_cli):
    r = run_cli("compute", "panda", "--q", "0,0,0,0,0,0,0", "--qd", "1e200,0,0,0,0,0,0", "--what", "dqdd_dq")
    assert_one_line_error(r, OVERFLOW, "|qd| up to 1e+200")
    assert "tau" not in r.err
