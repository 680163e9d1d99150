"""README's examples are what the tool really prints and loads."""

import os
import re

import numpy as np

import coriolis_cli as cc

from .conftest import ROOT, robot_path

README = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()


def test_compute_example_matches_real_output(run_cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    cmd = "coriolis compute robots/planar_2link.urdf --q 0.3,0.5 --qd 1,2 --what M,C,Gamma --top 4"
    block = README.split(f"$ {cmd}\n", 1)[1].split("```", 1)[0]
    args = cmd.split()[1:]
    args[1] = robot_path("planar_2link.urdf")
    r = run_cli(*args)
    assert r.code == 0
    strip = lambda text: "\n".join(line.rstrip() for line in text.strip().splitlines())  # noqa: E731
    assert strip(r.out) == strip(block)


def test_yaml_example_is_the_bundled_two_link_arm(tmp_path, rng):
    yaml_text = re.search(r"```yaml\n(.*?)```", README, re.S).group(1)
    p = tmp_path / "arm.yaml"
    p.write_text(yaml_text)
    a, b = cc.load_robot(str(p)), cc.load_robot(robot_path("planar_2link.urdf"))
    for _ in range(5):
        q, qd = rng.uniform(-3, 3, 2), rng.uniform(-10, 10, 2)
        for x, y in zip(cc.coriolis_matrix(a, q, qd), cc.coriolis_matrix(b, q, qd)):
            assert np.allclose(x, y, rtol=0, atol=1e-14)


def test_python_api_examples_run(monkeypatch):
    """Every ```python block of README runs as written, from the repository root."""
    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert len(blocks) >= 2
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})
