"""The structure the code promises (docs/ARCHITECTURE.md), walked from the source."""

from __future__ import annotations

import ast
import os

from .conftest import ROOT

PACKAGE = os.path.join(ROOT, "coriolis_cli")


def _modules():
    for folder, _, files in os.walk(PACKAGE):
        if "__pycache__" in folder:
            continue
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                dotted = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                yield dotted.removesuffix(".__init__"), path, name == "__init__.py"


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    base = module.split(".")
    base = base if is_package else base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def test_no_module_imports_a_private_name_of_another():
    offenders = []
    for module, path, is_package in _modules():
        tree = ast.parse(open(path, encoding="utf-8").read())
        imported_modules = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _resolve(module, is_package, node.level, node.module) if node.level else (node.module or "")
                if not source.startswith("coriolis_cli"):
                    continue
                for alias in node.names:
                    if alias.name.startswith("_") and alias.name != "__version__":
                        offenders.append(f"{module}: from {source} import {alias.name}")
                    imported_modules[alias.asname or alias.name] = f"{source}.{alias.name}"
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr.startswith("_")
                    and not node.attr.startswith("__") and node.value.id in imported_modules):
                offenders.append(f"{module}: {node.value.id}.{node.attr}")
    assert offenders == []


def test_the_calling_machinery_is_apart_from_the_public_front():
    lines = open(os.path.join(PACKAGE, "engine", "api.py"), encoding="utf-8").read().count("\n")
    assert lines <= 300, lines
