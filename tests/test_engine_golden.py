"""The compiled engine against golden outputs: tests/data/golden, written by the numba engine it
replaced (tests/make_golden.py in the history, after tests/test_engine_equality.py had held the
two engines equal bit for bit on every output). Each tree file holds a model's three arrays,
states and every output, world frame and body coordinates, so that part needs no loader."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from .engine_cases import core_outputs, key_name

GOLDEN = sorted((Path(__file__).parent / "data" / "golden").glob("*.npz"))


def test_there_are_golden_files():
    assert len(GOLDEN) >= 10


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_outputs_equal_the_golden_files_bit_for_bit(path):
    z = np.load(path)
    arrays = SimpleNamespace(ints=z["ints"], cols=z["cols"], geom=z["geom"])
    k = 0
    while f"{k}/q" in z:
        new = core_outputs(arrays, int(z["nq"]), z[f"{k}/q"], z[f"{k}/qd"], z[f"{k}/qdd"])
        for key, (status, value) in new.items():
            name = key_name(key)
            assert status == int(z[f"{k}/{name}/status"]), (name, status)
            for i, v in enumerate(value if isinstance(value, tuple) else (value,)):
                assert v.tobytes() == z[f"{k}/{name}/{i}"].tobytes(), (name, i, np.abs(v - z[f"{k}/{name}/{i}"]).max())
        k += 1
    assert k == 2


COORDINATES = sorted((Path(__file__).parent / "data" / "golden" / "coordinates").glob("*.npz"))


def test_there_are_golden_files_in_other_coordinates():
    assert len(COORDINATES) >= 6


# Outputs in other coordinates that are the compiled core's own arithmetic at the stored state: a
# floating base's M̄ and Γ̄ (X and eqs. 24 and 27 in base_velocity.hpp). Every other output takes
# a product, a tensordot or an SVD in NumPy, whose BLAS and LAPACK kernels round otherwise on
# another CPU (AVX-512 or AVX2, with or without FMA).
CORE_ONLY = {"quadruped_mixed": ("M", "Mcrba", "Gamma"), "quadruped_inertial": ("M", "Mcrba", "Gamma")}
# a product or two in NumPy of length at most nv per entry, and the tree's dynamics at a velocity
# that went through one: each entry within a few ulps of the output's largest (at most 1.1 seen on
# four OpenBLAS kernels); closed loops multiply it by cond(K_d) (at most 3.8 cond(K_d) seen: Ṁ̄ takes
# A twice and Ȧ = −K_d⁺ K̇ A once in each of its three terms)
PRODUCT_ULPS = 8


def _loop_conditioning(robot, q) -> float:
    """cond(K_d) at q: A = [I; −K_d⁺ K_i] and Ȧ = −K_d⁺ K̇ A take K_d⁺ from an SVD, whose rounding
    a pseudo-inverse carries cond(K_d) times."""
    from coriolis_cli.engine.coordinates import evaluation

    return float(np.linalg.cond(evaluation(robot)._solve(q)[2]))


@pytest.mark.parametrize("path", COORDINATES, ids=[p.stem for p in COORDINATES])
def test_robots_in_other_coordinates_equal_their_golden_outputs(path):
    """Base velocities, mimic joints and closed loops, through the public functions, at the stored
    state: the same bits where the work is the core's own (CORE_ONLY), else within a few ulps of
    each output's largest entry, as BLAS and LAPACK round differently on another CPU."""
    from . import engine_cases

    z = np.load(path)
    name = path.stem[len("coordinates_"):]
    (robot,) = [r for n, r in engine_cases.coordinate_robots() if n.replace(".", "_") == name]
    eps = np.finfo(float).eps
    q, qd, _, _ = engine_cases.coordinate_state(robot, 5)
    assert qd.tobytes() == z["qd"].tobytes()  # NumPy's random streams are the same on every machine
    # a unit quaternion is normalized by np.linalg.norm (a BLAS dot); a loop's q̄ is drawn as it is
    assert np.abs(q - z["q"]).max() <= 4 * eps * np.abs(z["q"]).max(), np.abs(q - z["q"]).max()
    out = engine_cases.coordinate_outputs(robot, 5, z["q"], z["qd"])
    loops = "fourbar" in name or "knee" in name
    ulps = PRODUCT_ULPS * _loop_conditioning(robot, z["q"]) if loops else PRODUCT_ULPS
    for key in ("M", "Mdot", "C", "Gamma", "Mcrba", "tau", "slotine"):
        value, ref = out[key], z[key]
        if key in CORE_ONLY.get(name, ()):
            assert value.tobytes() == ref.tobytes(), (key, np.abs(value - ref).max())
        else:
            assert np.abs(value - ref).max() <= ulps * eps * np.abs(ref).max(), (key, np.abs(value - ref).max() / eps / np.abs(ref).max())
