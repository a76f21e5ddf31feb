"""The config file formats besides TOML: YAML and JSON, read without losing a duplicate key.

The kernel reads TOML itself and a file of another format through the reader the core
distribution names after its suffix (``agentrig.config_formats`` entry points: ``yaml``,
``yml``, ``json``).  TOML refuses a key defined twice; PyYAML and :mod:`json` keep the last
value silently, so a second ``agents.assistant`` would replace the first without a word.  Both
readers here report every duplicate key with its key path (and, for YAML, both line numbers).
"""

from __future__ import annotations

import json
from typing import Any

from agentrig.errors import ConfigError, Issue

__all__ = ["read_json", "read_yaml"]

PathParts = tuple[str | int, ...]


def _duplicate(path: PathParts, key: str, where: str = "") -> Issue:
    return Issue(
        "config.duplicate_key",
        f"{key!r} is defined more than once{where}; each name may appear once",
        (*path, key),
    )


# ---- YAML ------------------------------------------------------------------------------------


def read_yaml(text: bytes) -> tuple[Any, list[Issue]]:
    """The document's data (an empty one: an empty table) and one issue per duplicate mapping
    key.  Raises ``ValueError`` on a syntax error; ``ConfigError`` without PyYAML."""
    try:
        import yaml
    except ImportError:
        message = "YAML needs PyYAML: pip install 'agentrig[yaml]'"
        raise ConfigError([Issue("config.yaml_unavailable", message)]) from None
    issues: list[Issue] = []
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        if root is not None:
            _yaml_duplicates(root, (), issues, set())
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None
    return {} if data is None else data, issues


def _yaml_duplicates(node: Any, path: PathParts, issues: list[Issue], seen: set[int]) -> None:
    import yaml

    if id(node) in seen:  # anchors and aliases share nodes
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        lines: dict[str, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                continue
            key = str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in lines:
                issues.append(_duplicate(path, key, f" (lines {lines[key]} and {line})"))
            else:
                lines[key] = line
            _yaml_duplicates(value_node, (*path, key), issues, seen)
    elif isinstance(node, yaml.SequenceNode):
        for position, item in enumerate(node.value):
            _yaml_duplicates(item, (*path, position), issues, seen)


# ---- JSON ------------------------------------------------------------------------------------


class _Pairs(list[tuple[str, Any]]):
    """A JSON object as parsed: its pairs in order, duplicates included."""


def read_json(text: bytes) -> tuple[Any, list[Issue]]:
    """The document's data (UTF-8, a byte order mark allowed) and one issue per duplicate
    object key.  Raises ``ValueError`` on a syntax error (:class:`json.JSONDecodeError` is
    one)."""
    raw = json.loads(text.decode("utf-8-sig"), object_pairs_hook=_Pairs)
    issues: list[Issue] = []
    return _json_value(raw, (), issues), issues


def _json_value(value: Any, path: PathParts, issues: list[Issue]) -> Any:
    if isinstance(value, _Pairs):
        out: dict[str, Any] = {}
        for key, item in value:
            if key in out:
                issues.append(_duplicate(path, key))
            out[key] = _json_value(item, (*path, key), issues)
        return out
    if isinstance(value, list):
        return [_json_value(item, (*path, i), issues) for i, item in enumerate(value)]
    return value
