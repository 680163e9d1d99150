"""Writes tests/data/golden/*.npz: the numba engine's outputs on a few robots of engine_cases,
with the model arrays they were computed from, so that the compiled engine stays held to them
once numba is gone (tests/test_engine_equality.py). Run once, with numba installed:

    python -m tests.make_golden
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from . import engine_cases
from .engine_cases import key_name
from .test_engine_equality import reference

GOLDEN = Path(__file__).parent / "data" / "golden"
CHOSEN = ("panda.urdf", "panda.urdf+free", "humanoid.urdf+free", "quadruped.urdf+free", "binary:15",
          "planar_2link.urdf", "mixed.urdf+free", "sph.yaml+free", "ball_and_free.xml", "striker.xml")


def main() -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, robot in engine_cases.robots(Path(tmp)):
            if name not in CHOSEN:
                continue
            arrays = {"ints": robot.arrays.ints, "cols": robot.arrays.cols, "geom": robot.arrays.geom,
                      "nq": np.array(robot.nq)}
            for k, (q, qd, qdd) in enumerate(engine_cases.states(robot, 2, seed=7)):
                arrays |= {f"{k}/q": q, f"{k}/qd": qd, f"{k}/qdd": qdd}
                for key, (status, value) in reference(robot, q, qd, qdd).items():
                    label = key_name(key)
                    values = value if isinstance(value, tuple) else (value,)
                    arrays |= {f"{k}/{label}/{i}": v for i, v in enumerate(values)}
                    arrays[f"{k}/{label}/status"] = np.array(status)
            np.savez_compressed(GOLDEN / (name.replace(":", "_").replace("+", "_") + ".npz"), **arrays)
            print(name, os.path.getsize(GOLDEN / (name.replace(":", "_").replace("+", "_") + ".npz")))


if __name__ == "__main__":
    main()
