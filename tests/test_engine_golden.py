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


@pytest.mark.parametrize("path", COORDINATES, ids=[p.stem for p in COORDINATES])
def test_robots_in_other_coordinates_equal_their_golden_outputs(path):
    """Base velocities, mimic joints and closed loops, through the public functions: the same bits
    where the work is the same operations; closed loops within 1e-15 of each output's scale, as
    their A = [I; −K_d⁺ K_i] takes K_d⁺ from an SVD, whose LAPACK may round otherwise."""
    from . import engine_cases

    z = np.load(path)
    (robot,) = [r for name, r in engine_cases.coordinate_robots() if path.stem == "coordinates_" + name.replace(".", "_")]
    out = engine_cases.coordinate_outputs(robot, 5)
    loops = "fourbar" in path.stem or "knee" in path.stem
    for key, value in out.items():
        if loops:
            scale = max(1.0, float(np.abs(z[key]).max()))
            assert np.abs(value - z[key]).max() <= 1e-15 * scale, (key, np.abs(value - z[key]).max())
        else:
            assert value.tobytes() == z[key].tobytes(), (key, np.abs(value - z[key]).max())
