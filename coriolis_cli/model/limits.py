"""Bounds on what users hand us, checked before anything large is read or built.

Each bound has an override in the environment, documented in README: a file larger than
CORIOLIS_MAX_FILE_MB (default 64) is refused before it is read whole (``/dev/zero`` answers in
milliseconds), a robot with more than CORIOLIS_MAX_BODIES bodies (default 10,000) is refused before
its tree is built, and YAML or JSON nested deeper than the interpreter allows, or YAML whose aliases
expand beyond MAX_YAML_NODES nodes (an "alias bomb"), is refused while it is parsed.
"""

from __future__ import annotations

import json
import os

import yaml

MAX_YAML_NODES = 1_000_000


def _env_int(name: str, default: int) -> int:
    try:
        value = int(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


def max_file_bytes() -> int:
    return _env_int("CORIOLIS_MAX_FILE_MB", 64) * 2**20


def max_bodies() -> int:
    return _env_int("CORIOLIS_MAX_BODIES", 10_000)


def read_bounded(path: str) -> bytes:
    """The file's bytes, or ValueError if it holds more than max_file_bytes() (read no further)."""
    limit = max_file_bytes()
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"larger than {limit // 2**20} MiB (set CORIOLIS_MAX_FILE_MB to raise the limit)")
    return data


def _expanded_size(node, memo: dict, budget: int) -> int:
    """Nodes of the document with every alias expanded, computed once per distinct node."""
    key = id(node)
    if key in memo:
        return memo[key]
    memo[key] = 1  # a cycle through an alias counts once (the constructor handles recursion)
    size = 1
    if isinstance(node, yaml.SequenceNode):
        for child in node.value:
            size += _expanded_size(child, memo, budget)
    elif isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            size += _expanded_size(k, memo, budget) + _expanded_size(v, memo, budget)
    memo[key] = size
    if size > budget:
        raise ValueError(f"its aliases expand to more than {budget:,} nodes")
    return size


def load_yaml(text: str):
    """yaml.safe_load, refusing alias bombs and nesting the parser cannot hold: ValueError, or
    yaml.YAMLError for syntax."""
    try:
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _expanded_size(node, {}, MAX_YAML_NODES)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except RecursionError:
        raise ValueError("nested too deeply") from None


def load_json(text: str):
    """json.loads with deep nesting as ValueError."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None
