"""A file's extension is honoured or refused: one state's table is never written under a name that
says Parquet, MCAP or a picture (with --recording, compute writes those formats)."""

import pytest

from .conftest import assert_one_line_error


@pytest.mark.parametrize("name", ["t.parquet", "t.mcap", "t.png", "t.yaml"])
def test_compute_refuses_a_name_whose_format_it_does_not_write(run_cli, tmp_path, name):
    r = run_cli("compute", "panda", "--random", "--what", "d2tau_dq2", "-o", tmp_path / name)
    assert_one_line_error(r, "this command writes a table (.txt), JSON, NPZ or CSV, not")
    assert not (tmp_path / name).exists()


@pytest.mark.parametrize("name, fmt", [("t.txt", "table"), ("t.json", "json"), ("t.csv", "csv"), ("t", "table")])
def test_compute_writes_what_the_name_says(run_cli, tmp_path, name, fmt):
    assert run_cli("compute", "panda", "--random", "--what", "M", "-o", tmp_path / name).code == 0
    text = (tmp_path / name).read_text()
    assert text.lstrip().startswith("{") == (fmt == "json")


def test_simulate_refuses_csv_which_it_does_not_write(run_cli, tmp_path):
    r = run_cli("simulate", "panda", "--duration", "0.1", "-o", tmp_path / "s.csv")
    assert_one_line_error(r, "this command writes a table (.txt), JSON or NPZ, not csv")
