"""A table whose joint series start after its first blocks (another topic's rows first, as
PlotJuggler writes them) is read as if they started at once: the logged velocity too, which was
ignored for a q̇ fitted from q when the first block held no joint sample."""

import numpy as np

import coriolis_cli as cc


def test_a_logged_velocity_that_starts_after_the_first_blocks_is_the_one_used(tmp_path):
    names = [f"panda_joint{k}" for k in range(1, 8)]
    path = tmp_path / "late.csv"
    late = range(400_000, 401_000)
    with open(path, "w") as f:
        f.write("time,other," + ",".join(f"q/{n}" for n in names) + "," + ",".join(f"qd/{n}" for n in names) + "\n")
        f.writelines(f"{k * 1e-3:.6f},{k}," + "," * 13 + "\n" for k in range(400_000))  # 8 MB: two blocks
        # positions and velocities that do not agree: the velocity read must be the logged one
        f.writelines(f"{k * 1e-3:.6f},{k}," + ",".join(f"{0.1 * np.sin(k * 1e-3 + j):.6f}" for j in range(7)) + ","
                     + ",".join(f"{0.5 + j:.6f}" for j in range(7)) + "\n" for k in late)
    assert path.stat().st_size > 8 * 2**20
    recording = cc.recordings.load_recording(str(path), cc.load_robot("panda"))
    assert len(recording.t) == len(late)
    assert np.array_equal(recording.qd, np.tile(0.5 + np.arange(7.0), (len(late), 1)))
