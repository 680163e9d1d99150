"""Closed-loop YAML that cannot be what it says: a linkage that never closes, independent
coordinates that name no joint, a fixed joint, a joint twice or none at all. Each is refused in
one line (exit 2) before anything is computed or written; none lets compute pick coordinates of
its own."""

from __future__ import annotations

import pathlib

import pytest

from .conftest import ROOT, assert_one_line_error

FOURBAR = pathlib.Path(ROOT, "robots", "fourbar.yaml").read_text()

CASES = {
    # the pin 0.1 m from each link's joint: the coupler and the rocker never meet
    "never closes": (FOURBAR.replace("xyz: [0.9, 0, 0], child_xyz: [0.8, 0, 0]", "xyz: [0.1, 0, 0], child_xyz: [0.1, 0, 0]"),
                     "the loops do not close"),
    "no such joint": (FOURBAR.replace("independent: [crank_joint]", "independent: [nosuch]"), "'nosuch' is not a joint"),
    "a fixed joint": (FOURBAR.replace("independent: [crank_joint]", "independent: [upright]"), "'upright' is a fixed joint"),
    "a joint twice": (FOURBAR.replace("independent: [crank_joint]", "independent: [crank_joint, crank_joint]"),
                      "listed twice"),
    "not a list": (FOURBAR.replace("independent: [crank_joint]", "independent: crank_joint"), "must be a list"),
    "an empty list": (FOURBAR.replace("independent: [crank_joint]", "independent: []"),
                      "no joint is listed in 'independent:'"),
    "none listed": (FOURBAR.replace("independent: [crank_joint]\n", ""), "no joint is listed in 'independent:'"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_impossible_linkage_is_refused_in_one_line(case, tmp_path, run_cli):
    text, message = CASES[case]
    assert text != FOURBAR
    path = tmp_path / "linkage.yaml"
    path.write_text(text)
    out = tmp_path / "out.json"
    r = run_cli("compute", path, "--random", "--what", "M", "-o", out)
    assert_one_line_error(r, message)
    assert not out.exists()
