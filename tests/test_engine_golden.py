"""The compiled engine against golden outputs (tests/data/golden, written by tests/make_golden.py
from the numba engine it replaces): each file holds a model's three arrays, states and every
output, world frame and body coordinates, so this test needs neither the loaders nor numba."""

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
