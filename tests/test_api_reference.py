"""The Python API reference is complete: every public name has an entry on the site, in numpydoc
form (Parameters that match the signature, Returns, an example), and every example runs.

The public API is ``coriolis_cli.__all__`` and the ``__all__`` of ``coriolis_cli.jax`` and
``coriolis_cli.torch``. Other modules keep an ``__all__`` for the package's own imports; they are
listed in INTERNAL, so that a new module with an ``__all__`` is classified on purpose.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import os
import re

import pytest

import coriolis_cli

from .conftest import ROOT

PUBLIC = ("coriolis_cli", "coriolis_cli.jax", "coriolis_cli.torch")
INTERNAL = {"coriolis_cli.along", "coriolis_cli.cli", "coriolis_cli.codegen", "coriolis_cli.engine",
            "coriolis_cli.engine.api", "coriolis_cli.engine.xla", "coriolis_cli.model", "coriolis_cli.recordings",
            "coriolis_cli.reference"}
FRAMEWORK = {"coriolis_cli.jax": "jax", "coriolis_cli.torch": "torch"}


def _entries() -> dict[str, str]:
    """Each ``::: dotted.path`` on the API pages, with its page."""
    folder = os.path.join(ROOT, "docs", "api")
    found = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), encoding="utf-8") as page:
            for path in re.findall(r"^::: ([\w.]+)\s*$", page.read(), re.M):
                found[path] = name
    return found


def _resolve(path: str):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _public(module: str):
    if module in FRAMEWORK:
        pytest.importorskip(FRAMEWORK[module], reason=f"{FRAMEWORK[module]} is not installed")
    mod = importlib.import_module(module)
    return [(name, getattr(mod, name)) for name in mod.__all__]


def _sections(doc: str) -> dict[str, list[str]]:
    """A numpydoc docstring's sections: each header underlined with dashes, and its lines."""
    lines = inspect.cleandoc(doc).splitlines()
    sections, current = {"": []}, ""
    for k, line in enumerate(lines):
        if k + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[k + 1].strip()) and line.strip():
            current = line.strip()
            sections[current] = []
        elif not re.fullmatch(r"-{3,}", line.strip()):
            sections[current].append(line)
    return sections


def _documented_parameters(lines: list[str]) -> list[str]:
    """The names a Parameters section gives (``q, qd : array_like`` names two), in order."""
    names = []
    for line in lines:
        if line and not line[0].isspace():
            names += [n.strip().lstrip("*") for n in line.split(" : ")[0].split(",")]
    return names


def problems(obj) -> list[str]:
    """What the entry of a public function or class lacks, as numpydoc and this project ask."""
    doc = inspect.getdoc(obj) or ""
    sections = _sections(doc)
    summary = [line for line in sections[""] if line.strip()]
    found = []
    if not summary:
        found.append("no summary")
    if "Examples" not in sections or ">>>" not in "\n".join(sections["Examples"]):
        found.append("no Examples section with a doctest")
    if inspect.isclass(obj):
        if issubclass(obj, Warning | Exception):
            return found
        if not ({"Attributes", "Parameters"} & set(sections)):
            found.append("neither Attributes nor Parameters")
        return found
    signature = list(inspect.signature(obj).parameters)
    if signature:
        if "Parameters" not in sections:
            found.append("no Parameters section")
        elif _documented_parameters(sections["Parameters"]) != signature:
            found.append(f"Parameters {_documented_parameters(sections['Parameters'])} are not the signature's {signature}")
    returns_nothing = inspect.signature(obj).return_annotation in (None, "None")
    if not ({"Returns", "Yields"} & set(sections)) and not returns_nothing:
        found.append("no Returns section")
    return found


def test_every_module_with_an_all_is_public_or_internal():
    package = os.path.dirname(coriolis_cli.__file__)
    with_all = set()
    for folder, _, files in os.walk(package):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as source:
                    if re.search(r"^__all__\b", source.read(), re.M):
                        module = os.path.relpath(os.path.join(folder, name), os.path.dirname(package))[:-3]
                        with_all.add(module.replace(os.sep, ".").removesuffix(".__init__"))
    assert with_all == set(PUBLIC) | INTERNAL


@pytest.mark.parametrize("module", PUBLIC)
def test_every_public_name_has_an_entry_on_the_api_pages(module):
    entries = _entries()
    documented = {}
    for path in entries:
        try:
            documented[id(_resolve(path))] = path
        except ImportError:  # a framework that is not installed
            continue
    missing = [name for name, obj in _public(module) if id(obj) not in documented]
    assert not missing, f"no entry on docs/api/*.md for {module}: {missing}"


@pytest.mark.parametrize("module", PUBLIC)
def test_every_entry_is_complete(module):
    incomplete = {name: found for name, obj in _public(module) if (found := problems(obj))}
    assert not incomplete, incomplete


def test_the_check_fails_when_a_docstring_loses_its_parameters():
    """The completeness test can fail: mass_matrix's entry without its Parameters section."""
    function = coriolis_cli.mass_matrix
    assert problems(function) == []

    def without_parameters():
        pass

    sections = re.split(r"\n(?=\s*Returns\n\s*-+\n)", inspect.getdoc(function), maxsplit=1)
    head = re.split(r"\n(?=\s*Parameters\n\s*-+\n)", sections[0], maxsplit=1)[0]
    without_parameters.__doc__ = head + "\n" + sections[1]
    without_parameters.__signature__ = inspect.signature(function)
    assert problems(without_parameters) == ["no Parameters section"]


@pytest.mark.parametrize("module", PUBLIC)
def test_every_example_runs_and_prints_what_it_shows(module, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example's files go to a scratch folder
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    ran = 0
    for name, obj in _public(module):
        for test in finder.find(obj, f"{module}.{name}", globs={}):
            runner.run(test)
            ran += 1
    assert ran >= len(_public(module)) and runner.failures == 0, runner.summarize(verbose=False)
