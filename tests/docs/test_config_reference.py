"""docs/config-reference.md lists every key the config models accept."""

from __future__ import annotations

import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, RootModel

from agentrig.agent import AgentsConfig, DelegationConfig, ModelSelectionConfig
from agentrig.hooks import ClaudeCodeConfig, HooksConfig
from agentrig.kernel import RuntimeConfig
from agentrig.permissions import PermissionsConfig

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "config-reference.md"


def nested_models(annotation: Any) -> Iterator[type[BaseModel]]:
    """The config models an annotation holds (``X``, ``dict[str, X]``, ``X | None`` ...)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for argument in typing.get_args(annotation):
        yield from nested_models(argument)


def config_keys(
    model: type[BaseModel] = RuntimeConfig, prefix: str = "", seen: set[type] | None = None
) -> Iterator[tuple[str, str]]:
    """``(key path, key)`` for every field of the config models, nested tables included."""
    seen = set() if seen is None else seen
    if model in seen:
        return
    seen.add(model)
    if issubclass(model, RootModel):  # ``[mcp_servers.<name>]``: the names are free
        for nested in nested_models(model.model_fields["root"].annotation):
            yield from config_keys(nested, f"{prefix}.<name>", seen)
        return
    for name, field in model.model_fields.items():
        key = field.alias or name
        path = f"{prefix}.{key}" if prefix else key
        yield path, key
        for nested in nested_models(field.annotation):
            yield from config_keys(nested, path, seen)


#: the layers' own tables (``agentrig.config_sections`` of the core), documented with the
#: kernel's in the reference
LAYER_TABLES: dict[str, type[BaseModel]] = {
    "agents": AgentsConfig,
    "delegation": DelegationConfig,
    "model_selection": ModelSelectionConfig,
    "permissions": PermissionsConfig,
    "hooks": HooksConfig,
    "claude_code": ClaudeCodeConfig,
}


def reference_keys() -> Iterator[tuple[str, str]]:
    """The kernel's keys and those of the layers' tables, each under its table name."""
    yield from config_keys()
    for table, model in LAYER_TABLES.items():
        yield table, table
        for path, key in config_keys(model, table):
            yield path.replace(f"{table}.<name>", table, 1), key  # as the kernel's own walk


def _documented(key: str, text: str) -> bool:
    return any(form in text for form in (f"`{key}`", f"[{key}.", f"[{key}]", f"[[{key}."))


def test_the_walk_reaches_nested_tables() -> None:
    paths = {path for path, _ in reference_keys()}
    assert {"agents.deferral", "permissions.mode", "plugins.disabled", "sealers"} <= paths


def test_every_config_key_is_in_the_config_reference() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    missing = [path for path, key in reference_keys() if not _documented(key, text)]
    assert not missing, f"keys missing from docs/config-reference.md: {missing}"
