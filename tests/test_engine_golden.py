"""The compiled engine against golden outputs (tests/data/golden, written by tests/make_golden.py
from the engine it replaced): each file holds a model's three arrays, states and every output,
so this test needs neither the loaders nor the old engine."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from coriolis_cli.engine import compiled

GOLDEN = sorted((Path(__file__).parent / "data" / "golden").glob("*.npz"))
GRAVITY = np.array([0.0, 0.0, -9.81])


def outputs(w, n, q, qd, qdd):
    M, tau, g, G = np.zeros((n, n)), np.zeros(n), np.zeros(n), np.zeros((n, n, n))
    out = {"M": (compiled.mass_matrix(w, q, M), M), "tau": (compiled.inverse_dynamics(w, q, qd, qdd, GRAVITY, tau), tau),
           "g": (compiled.gravity_vector(w, q, GRAVITY, g), g), "Gamma": (compiled.christoffel(w, q, G), G)}
    for f in (0, 1):
        MMC = np.zeros((3, n, n))
        out[f"coriolis{f}"] = (compiled.coriolis_matrix(w, q, qd, f, MMC), MMC)
    return out


def test_there_are_golden_files():
    assert len(GOLDEN) >= 10


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_outputs_equal_the_golden_files_bit_for_bit(path):
    z = np.load(path)
    n = z["cols"].shape[0]
    w = compiled.Workspace(z["ints"], z["cols"], z["geom"], int(z["nq"]))
    k = 0
    while f"{k}/q" in z:
        new = outputs(w, n, z[f"{k}/q"], z[f"{k}/qd"], z[f"{k}/qdd"])
        for key, (status, value) in new.items():
            assert status == int(z[f"{k}/{key}/status"]), (key, status)
            assert value.tobytes() == z[f"{k}/{key}"].tobytes(), (key, np.abs(value - z[f"{k}/{key}"]).max())
        k += 1
    assert k == 2
