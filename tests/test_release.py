"""What a released package has: one version everywhere it is said, a licence that matches the
metadata, a changelog entry and a citation for that version."""

from __future__ import annotations

import os
import re

import yaml

import coriolis_cli

from .conftest import ROOT


def read(name: str) -> str:
    with open(os.path.join(ROOT, name), encoding="utf-8") as f:
        return f.read()


def test_the_version_is_written_once_and_said_by_the_command(run_cli):
    pyproject = read("pyproject.toml")
    assert re.search(r'^dynamic = \["version"\]', pyproject, flags=re.M), "the version must come from the package"
    assert not re.search(r"^version\s*=", pyproject, flags=re.M)
    assert re.fullmatch(r"\d+\.\d+\.\d+([ab]|rc)?\d*", coriolis_cli.__version__)
    r = run_cli("--version")
    assert r.code == 0 and r.out.strip() == f"coriolis, version {coriolis_cli.__version__}", r


def test_the_licence_is_the_one_the_metadata_names():
    assert 'license = "BSD-3-Clause"' in read("pyproject.toml")
    text = read("LICENSE")
    assert text.startswith("BSD 3-Clause License")
    assert "Neither the name of the copyright holder" in text  # the third clause


def test_the_changelog_has_an_entry_for_this_version():
    text = read("CHANGELOG.md")
    assert "Keep a Changelog" in text
    entries = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, flags=re.M)
    assert entries[0] == ("Unreleased", ""), entries
    assert entries[1][0] == coriolis_cli.__version__ and entries[1][1], entries


def test_the_citation_names_this_version_and_the_papers():
    cff = yaml.safe_load(read("CITATION.cff"))
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert str(cff["version"]) == coriolis_cli.__version__
    assert cff["license"] == "BSD-3-Clause"
    titles = [r["title"] for r in cff["references"]]
    assert any("Coriolis Matrix and Christoffel Symbols" in t for t in titles), titles
    assert any("Coriolis Factorizations" in t for t in titles), titles
