"""What `compute` prints for a robot of hundreds or thousands of DoF, and what its loading costs:
the table of a 1,500-link closed chain's M took 4 minutes and 36 MB of text (every entry, in 300
column blocks), and the pattern of its related DoF 45 s (an integer matrix product NumPy does
without BLAS). A table now lists a large matrix's largest entries, -o writes every entry, and
the pattern is a floating-point product. None of this is timed here: the tests hold what bounds
the work (the lines printed, the product's type, the parser's kind)."""

from __future__ import annotations

import json

import numpy as np
import yaml
from rich.console import Console

import coriolis_cli as cc
from coriolis_cli.model.limits import StrictLoader, load_yaml
from coriolis_cli.report.tables import LARGEST_SHOWN, MAX_TABLE_DOF, MatrixBlocks, matrix_table

from .conftest import assert_one_line_error
from .test_loops import _ring


def _lines(renderable, width=80) -> list[str]:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text().splitlines()


def test_a_matrix_above_the_bound_is_listed_by_its_largest_entries():
    n = 3 * MAX_TABLE_DOF
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n))
    A = A + A.T
    names = [f"joint_{i}" for i in range(n)]
    lines = _lines(matrix_table("M", A, names))
    assert len(lines) < 2 * LARGEST_SHOWN + 12
    text = "\n".join(lines)
    assert f"{n} x {n}" in text and "largest" in text and "-o FILE" in text
    i, j = np.unravel_index(np.argmax(np.abs(np.triu(A))), A.shape)
    first = next(line for line in lines if line.startswith("│"))  # the largest |A_ij|, i ≤ j
    assert f"joint_{i} " in first and f"joint_{j} " in first and f"{A[i, j]: .6g}".strip() in first
    small = A[:MAX_TABLE_DOF, :MAX_TABLE_DOF]  # at the bound, every entry
    assert isinstance(matrix_table("M", small, names[:MAX_TABLE_DOF]), MatrixBlocks)


def test_the_largest_entries_leave_out_what_branch_sparsity_zeroes_and_say_so_when_unsymmetric():
    n = MAX_TABLE_DOF + 1
    A = np.arange(n * n, dtype=float).reshape(n, n)
    related = np.ones((n, n), dtype=bool)
    related[n - 1, n - 1] = False  # the largest entry, not related: not listed
    text = "\n".join(_lines(matrix_table("C", A, [str(k) for k in range(n)], related), width=120))
    assert "symmetric" not in text
    assert f"{A[n - 1, n - 2]: .6g}".strip() in text and f"{A[n - 1, n - 1]: .6g}".strip() not in text


def test_compute_on_a_ring_of_hundreds_of_links_prints_the_largest_entries_and_writes_them_all(tmp_path, run_cli):
    path = tmp_path / "ring.yaml"
    path.write_text(_ring(MAX_TABLE_DOF + 60))
    r = run_cli("compute", path, "--random", "--what", "M")
    assert r.code == 0, r
    assert "the 20 largest" in " ".join(r.out.split()) and len(r.out.splitlines()) < 3 * (MAX_TABLE_DOF + 60)
    out = tmp_path / "m.json"
    assert run_cli("compute", path, "--random", "--what", "M", "-o", out).code == 0
    M = np.array(json.loads(out.read_text())["M"])
    assert M.shape == (MAX_TABLE_DOF + 58,) * 2


def test_the_related_dof_of_a_reduced_robot_are_a_floating_point_product_equal_to_the_integer_one(tmp_path):
    path = tmp_path / "ring.yaml"
    path.write_text(_ring(40))
    robot = cc.load_robot(str(path))
    nz = robot.map.jacobian_pattern().astype(int)
    assert np.array_equal(robot.dof_related, (nz.T @ robot.full.dof_related.astype(int) @ nz) > 0)
    mimic = cc.load_robot("robots/gripper.urdf", mimic="enforce")
    nz = mimic.map.jacobian_pattern().astype(int)
    assert np.array_equal(mimic.dof_related, (nz.T @ mimic.full.dof_related.astype(int) @ nz) > 0)


def test_robot_yaml_is_parsed_by_libyaml_where_pyyaml_has_it_with_the_same_strict_grammar():
    if yaml.__with_libyaml__:
        assert issubclass(StrictLoader, yaml.CSafeLoader)
    assert load_yaml("a: 0x10\nb: 1_0\nc: 1:30\nd: 1e3\ne: 3\n") == {"a": "0x10", "b": "1_0", "c": "1:30", "d": 1000.0,
                                                                   "e": 3}


def test_a_yaml_syntax_error_names_its_line_and_column(tmp_path, run_cli):
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nlinks:\n  - name: a\n   mass: 1\n")
    assert_one_line_error(run_cli("info", path), "malformed YAML at line 4, column 4")


def test_long_names_are_given_by_index_and_a_legend_at_80_columns():
    n = MAX_TABLE_DOF + 1
    A = np.diag(np.arange(n, dtype=float))
    names = [f"left_arm_shoulder_pitch_joint_{k}" for k in range(n)]
    lines = _lines(matrix_table("M", A, names), width=80)
    assert all(len(line) <= 80 for line in lines)
    assert f"{n - 1} {names[n - 1]}" in lines  # the legend, whole names on their own lines
    first = next(line for line in lines if line.startswith("│"))
    assert first.split("│")[1].strip() == str(n - 1) and first.split("│")[2].strip() == str(n - 1)
