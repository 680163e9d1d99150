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
    """engine/api.py describes the functions; it calls no kernel and runs no batch itself (the
    one path to the kernels is engine/algorithms.py's)."""
    tree = ast.parse(open(os.path.join(PACKAGE, "engine", "api.py"), encoding="utf-8").read())
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    kernel_calls = [ast.unparse(c.func) for c in calls
                    if isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name) and c.func.value.id == "compiled"]
    machinery = [ast.unparse(c.func) for c in calls if isinstance(c.func, ast.Name)
                 and c.func.id in ("settle", "run_batch", "call", "checked_states", "stacked_states")]
    assert kernel_calls == [] and machinery == [], (kernel_calls, machinery)


def _import_graph():
    """Every import between the package's modules, lazy ones (inside functions) included."""
    modules = {module: (path, is_package) for module, path, is_package in _modules()}
    graph = {module: set() for module in modules}
    for module, (path, is_package) in modules.items():
        for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
            targets = []
            if isinstance(node, ast.ImportFrom):
                source = _resolve(module, is_package, node.level, node.module) if node.level else (node.module or "")
                targets = [f"{source}.{alias.name}" for alias in node.names] + [source]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            for target in targets:
                while target and target not in modules:  # a name imported from a module: the module
                    target = target.rpartition(".")[0]
                if target and target != module and not module.startswith(target + "."):
                    graph[module].add(target)
    return graph


def test_the_model_imports_nothing_from_the_engine():
    graph = _import_graph()
    arrows = sorted(f"{m} -> {t}" for m, targets in graph.items() if m.startswith("coriolis_cli.model")
                    for t in targets if t.startswith("coriolis_cli.engine"))
    assert arrows == []


# docs/ARCHITECTURE.md's layers, lowest first; recordings sit beside the model, and the package's
# __init__ (which loads the engine lazily) and the bundled robots are outside the flow
LAYERS = {"errors": 0, "model": 1, "recordings": 1, "reference": 2, "engine": 2, "peers": 3, "checks": 3, "bench": 3,
          "estimation": 3, "control": 3, "along": 3, "codegen": 3, "jax": 3, "torch": 3, "report": 4,
          "cli": 5}
# the imports against the flow, each with its reason
AGAINST_THE_FLOW = {
    ("coriolis_cli.recordings.align", "coriolis_cli.engine"),  # engine.compiled: the derivative fit's loop over rows
    ("coriolis_cli.along.distributed", "coriolis_cli.report.streams"),  # each part written as compute writes one
    ("coriolis_cli.codegen", "coriolis_cli.report.output"),  # the C files written atomically, as every output
}


def test_data_flows_one_way_through_the_layers():
    graph = _import_graph()
    layer = {m: m.split(".")[1] for m in graph if m.count(".") >= 1}
    against = sorted((m, t) for m, targets in graph.items() for t in targets
                     if layer.get(m) in LAYERS and layer.get(t) in LAYERS and LAYERS[layer[t]] > LAYERS[layer[m]])
    assert set(against) == AGAINST_THE_FLOW, against
    siblings = sorted((m, t) for m, targets in graph.items() for t in targets
                      if {layer.get(m), layer.get(t)} == {"model", "recordings"} and layer.get(m) == "model")
    assert siblings == []  # the model reads no recording
    assert set(layer.values()) - {"robots"} <= set(LAYERS), set(layer.values()) - set(LAYERS)


def test_the_imports_draw_no_cycle():
    """Packages importing their own modules (an ``__init__`` re-exporting them) are no cycle;
    any other loop, lazy or not, is."""
    graph = _import_graph()
    cycles, state = [], {}

    def visit(module, path):
        state[module] = "open"
        for target in sorted(graph[module]):
            if target.startswith(module + "."):
                continue
            if state.get(target) == "open":
                cycles.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target, path + [target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_a_call_with_something_that_is_not_a_robot_says_what_to_pass():
    import numpy as np
    import pytest

    import coriolis_cli as cc

    with pytest.raises(TypeError, match=r"coriolis_matrix\(\) takes a robot from coriolis_cli.load_robot"):
        cc.coriolis_matrix("panda.urdf", np.zeros(7), np.zeros(7))
