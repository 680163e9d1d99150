"""Spatial algebra: the compiled core's block form of eq. (10) against the term-by-term product,
and its properties; the reference's block form against its definition."""

import numpy as np

from coriolis_cli.engine import compiled
from coriolis_cli.engine.conventions import CHRISTOFFEL, FEATHERSTONE
from coriolis_cli.reference.kinematics import NUMERIC
from coriolis_cli.reference.spatial import body_coriolis_definition, crf, crm, spatial_inertia


def random_inertia(rng):
    A = rng.normal(size=(3, 3))
    return np.asarray(spatial_inertia(rng.uniform(0.1, 3), rng.normal(size=3), A @ A.T, NUMERIC), dtype=float)


def test_block_form_equals_dense_eq10_and_is_admissible():
    rng = np.random.default_rng(7)
    for _ in range(100):
        I = random_inertia(rng) + random_inertia(rng)  # composites too
        v = rng.normal(size=6)
        B, Bf = np.zeros((6, 6)), np.zeros((6, 6))
        compiled.body_factorization(v, I, CHRISTOFFEL, B)
        compiled.body_factorization(v, I, FEATHERSTONE, Bf)
        Bd = np.asarray(body_coriolis_definition(v, I, NUMERIC), dtype=float)  # ½ [crf(v) I + (I v) ×̄* − I crm(v)]
        assert np.abs(B - Bd).max() <= 1e-14 * np.abs(Bd).max()
        assert np.all(B[:, 3:6] == 0.0)
        X = np.asarray(crm(v, NUMERIC), dtype=float)
        Idot = -X.T @ I - I @ X  # crf(v) I − I crm(v)
        vxf = np.asarray(crf(v, NUMERIC), dtype=float) @ (I @ v)
        assert np.abs(Bf - np.asarray(crf(v, NUMERIC), dtype=float) @ I).max() <= 1e-14 * np.abs(Bf).max()  # eq. (9)
        for Bx in (B, Bf):
            assert np.allclose(Bx @ v, vxf, atol=1e-13)  # B(v, I) v = v ×* I v
            assert np.allclose(Bx + Bx.T, Idot, atol=1e-13)  # B + Bᵀ = İ


def test_reference_block_form_equals_the_definition_and_has_a_zero_right_half():
    """The reference algorithms (and the code generated from them) use eq. (10) in blocks; its
    right half is exactly zero, so that traced symbols carry no expression that cancels in value."""
    from coriolis_cli.reference.spatial import body_coriolis

    rng = np.random.default_rng(8)
    for _ in range(100):
        I = random_inertia(rng) + random_inertia(rng)
        v = rng.normal(size=6)
        B, Bd = body_coriolis(v, I, NUMERIC), body_coriolis_definition(v, I, NUMERIC)
        assert np.abs(B - Bd).max() <= 1e-14 * np.abs(Bd).max()
        assert np.all(B[:, 3:6] == 0.0)
