"""The kernel imports nothing above it: the contracts of the kinds the layers above it define
(providers, tools) reach it as entry points."""

from __future__ import annotations

import importlib.metadata
import importlib.util

import pytest

from agentrig.cli._doctor import stray_entry_points
from agentrig.kernel._contracts import KINDS, ContractViolation
from agentrig.kernel._entry_points import CONTRACTS_GROUP, FORMATS_GROUP, IMPORTERS_GROUP
from agentrig.llm import check_provider_contribution
from agentrig.tools import check_tool_contribution, tool


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


def test_the_tools_contract_is_an_entry_point_of_the_core_distribution() -> None:
    (entry,) = importlib.metadata.entry_points(group=CONTRACTS_GROUP, name="tools")
    assert entry.dist is not None
    assert entry.dist.name == "agentrig"
    assert entry.load() is check_tool_contribution
    assert KINDS["tools"](ping, "ping") == (ping,)  # the kernel's check runs the tools layer's
    # a group it reads
    assert not any(f" {CONTRACTS_GROUP}:" in s for s in stray_entry_points())


def test_the_providers_contract_is_an_entry_point_of_the_core_distribution() -> None:
    (entry,) = importlib.metadata.entry_points(group=CONTRACTS_GROUP, name="providers")
    assert entry.dist is not None
    assert entry.dist.name == "agentrig"
    assert entry.load() is check_provider_contribution

    class Factory:
        credential_keys = ("api_key", 1)

        def __call__(self, config: object) -> None: ...

    with pytest.raises(ContractViolation, match="credential_keys must be a tuple"):
        KINDS["providers"](Factory(), "bad")  # the kernel's check runs the llm layer's


def test_the_claude_code_importer_is_an_entry_point_of_the_core_distribution() -> None:
    # the importer lives in the hooks layer; the kernel's config loader reaches it only
    # through the core distribution's own entry point
    from agentrig.hooks._claude_settings import apply_claude_code

    (entry,) = importlib.metadata.entry_points(group=IMPORTERS_GROUP, name="claude_code")
    assert entry.dist is not None
    assert entry.dist.name == "agentrig"
    assert entry.load() is apply_claude_code
    assert not any(f" {IMPORTERS_GROUP}:" in s for s in stray_entry_points())
    assert importlib.util.find_spec("agentrig.kernel._claude_settings") is None


def test_the_yaml_and_json_readers_are_entry_points_of_the_core_distribution() -> None:
    # the readers are a built-in; the kernel reads TOML itself and names no other format
    from agentrig.builtins._config_formats import read_json, read_yaml

    found = {e.name: e for e in importlib.metadata.entry_points(group=FORMATS_GROUP)}
    assert {name: e.load() for name, e in found.items()} == {
        "json": read_json,
        "yaml": read_yaml,
        "yml": read_yaml,
    }
    assert all(e.dist is not None and e.dist.name == "agentrig" for e in found.values())
    assert not any(f" {FORMATS_GROUP}:" in s for s in stray_entry_points())
    assert importlib.util.find_spec("agentrig.kernel._formats") is None
