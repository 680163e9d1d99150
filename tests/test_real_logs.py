"""Real hardware logs, not shipped with the project (their licences are their own): run when
CORIOLIS_REAL_LOGS names a folder holding them, skipped otherwise.

- ``franka_excitation/``: the Franka Emika Panda excitation run of Gaz, Cognetti, Oliva, Robuffo
  Giordano & De Luca, "Dynamic Identification of the Franka Emika Panda Robot With Retrieval of
  Feasible Parameters Using Penalty-Based Optimization", IEEE RA-L 2019, as published in
  github.com/marcocognetti/FrankaEmikaPandaDynModel (matlab/data/Exciting_Traj/Trajectory_1/
  rbt_log: exciting_traj_{time,positions,velocity,torques}.txt, GPL-3). 21 s at about 1 kHz with
  joint torque sensors, PC stamps 0.7 to 8.8 ms apart, 5.6 % of samples logged twice. The bundled
  panda carries that paper's inertial parameters: the published model.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import coriolis_cli as cc

FOLDER = os.environ.get("CORIOLIS_REAL_LOGS", "")
FRANKA = os.path.join(FOLDER, "franka_excitation")
pytestmark = pytest.mark.skipif(not os.path.isdir(FRANKA), reason="CORIOLIS_REAL_LOGS/franka_excitation is not here")

# the published friction model of the same paper (its eq. for τ_f, per joint): A, φ, α
GAZ_FRICTION = (np.array([0.54615, 0.87224, 0.64068, 1.2794, 0.83904, 0.30301, 0.56489]),
                np.array([0.039533, 0.025882, -0.04607, 0.036194, 0.026226, -0.021047, 0.0035526]),
                np.array([5.1181, 9.0657, 10.136, 5.5903, 8.3469, 17.133, 10.336]))


def _published_friction(qd):
    A, phi, alpha = GAZ_FRICTION
    return A / (1 + np.exp(-alpha * (qd + phi))) - A / (1 + np.exp(-alpha * phi))


@pytest.fixture(scope="module")
def franka_csv(tmp_path_factory):
    """The four text files as one recording in the q/, qd/, tau/ layout."""
    read = {name: np.loadtxt(os.path.join(FRANKA, f"exciting_traj_{name}.txt"))
            for name in ("time", "positions", "velocity", "torques")}
    t = read["time"]
    q, qd, tau = (read[n].reshape(len(t), 7) for n in ("positions", "velocity", "torques"))
    names = [f"panda_joint{k}" for k in range(1, 8)]
    path = tmp_path_factory.mktemp("franka") / "franka_excitation.csv"
    header = ["time"] + [f"{kind}/{n}" for kind in ("q", "qd", "tau") for n in names]
    np.savetxt(path, np.column_stack([t, q, qd, tau]), delimiter=",", header=",".join(header), comments="",
               fmt="%.17g")
    return str(path)


def test_identified_on_two_thirds_it_explains_the_last_third_as_the_published_model_does(franka_csv, run_cli):
    panda = cc.load_robot("panda")
    rec = cc.recordings.load_recording(franka_csv, panda, accelerations=True)
    held_out = rec.t >= rec.t[-1] - 0.33 * (rec.t[-1] - rec.t[0])
    published = cc.inverse_dynamics(panda, rec.q[held_out], rec.qd[held_out], rec.qdd[held_out]) + \
        _published_friction(rec.qd[held_out])
    published_rms = np.sqrt(np.mean((published - rec.effort[held_out]) ** 2, axis=0))
    rms = {}
    for form in ("torque", "momentum"):
        r = run_cli("identify", "panda", franka_csv, "--validate-split", "0.33", "--friction", "coulomb-viscous",
                    "--effort", "sampled", "--form", form, "--format", "json")
        assert r.code == 0, r
        rms[form] = np.array(json.loads(r.out)["validation"]["rms_identified"])
        assert np.all(rms[form] <= 1.1 * published_rms), (form, rms[form] / published_rms)
    assert np.all(rms["torque"] <= 1.05 * rms["momentum"]), rms  # its own q̈ does not cost the torque form


def test_the_contact_free_run_raises_no_event(franka_csv, run_cli, tmp_path):
    identified = tmp_path / "identified.urdf"
    r = run_cli("identify", "panda", franka_csv, "--friction", "coulomb-viscous", "--effort", "sampled", "-o", identified)
    assert r.code == 0, r
    for robot in (identified, "panda"):
        r = run_cli("observe", robot, franka_csv, "--format", "json")
        assert r.code == 0 and json.loads(r.out)["events"] == [], r
