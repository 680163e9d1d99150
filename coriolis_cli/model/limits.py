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


def env_int(name: str, default: int) -> int:
    try:
        value = int(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


def max_file_bytes() -> int:
    return env_int("CORIOLIS_MAX_FILE_MB", 64) * 2**20


MAX_XML_DEPTH = 200  # a URDF nests a few levels; Python's XML serializer recurses per level


def xml_depth(root) -> int:
    """How deep an element tree nests (counted without recursion)."""
    deepest, stack = 0, [(root, 1)]
    while stack:
        el, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in el)
    return deepest


def max_bodies() -> int:
    return env_int("CORIOLIS_MAX_BODIES", 10_000)


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


# libyaml's parser where PyYAML was built with it (a 1,500-link robot in 0.25 s, against 1.2 s),
# PyYAML's own otherwise; the resolvers and the constructor below are Python's in both
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class StrictLoader(_SAFE_LOADER):
    """YAML with one number grammar, the decimal one README promises: YAML 1.1's 0x10, 0o10, 010,
    1_0 and 1:30 (read as 16, 8, 8, 10 and 90 by a plain loader) stay text, which the readers
    refuse as not a number; and a key given twice in one mapping is an error naming it."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                continue  # the base class reports unhashable keys
            if key in seen:
                raise DuplicateKey(f"key '{key}' is given twice in one mapping (line {seen[key] + 1} and line "
                                   f"{key_node.start_mark.line + 1})")
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


class DuplicateKey(ValueError):
    """A YAML mapping names a key twice."""


def _decimal_only() -> None:
    import re

    resolvers = {}
    for first, entries in yaml.SafeLoader.yaml_implicit_resolvers.items():
        kept = [(tag, rx) for tag, rx in entries if tag not in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")]
        resolvers[first] = kept
    StrictLoader.yaml_implicit_resolvers = resolvers
    StrictLoader.add_implicit_resolver(
        "tag:yaml.org,2002:int", re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$"), list("-+0123456789"))
    StrictLoader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(r"^[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][-+]?[0-9]+)?$|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$"),
        list("-+0123456789."))


_decimal_only()


def load_yaml(text: str):
    """A strict safe_load (StrictLoader), refusing alias bombs and nesting the parser cannot hold:
    ValueError (DuplicateKey for a key given twice), or yaml.YAMLError for syntax."""
    try:
        loader = StrictLoader(text)
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
    except yaml.YAMLError as e:
        if "nesting depth" in str(getattr(e, "problem", "")):  # libyaml's own bound, before Python's
            raise ValueError("nested too deeply") from None
        raise


def load_json(text: str):
    """json.loads with deep nesting as ValueError, and a key given twice in one object refused
    by name (DuplicateKey), where json.loads keeps the last silently."""

    def pairs(items):
        out = {}
        for key, value in items:
            if key in out:
                raise DuplicateKey(f"key '{key}' is given twice in one object")
            out[key] = value
        return out

    try:
        return json.loads(text, object_pairs_hook=pairs)
    except RecursionError:
        raise ValueError("nested too deeply") from None
