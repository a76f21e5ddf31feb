"""The plugin kinds: one entry-point group each, the entry-point name being the ID.

Each kind names, as an import string resolved only when an entry of that kind loads, the
function that checks a contribution against the kind's contract.  Keeping these as strings
keeps the kernel free of imports from the layers above it (tools, providers, stores).
"""

from __future__ import annotations

from typing import final

import attrs

__all__ = ["KINDS", "KindSpec", "kind_of_group"]


@final
@attrs.frozen(slots=True)
class KindSpec:
    """One plugin kind."""

    name: str
    group: str
    description: str
    #: "module:function" that checks a loaded object, raising ``ContractViolation``.
    check: str
    #: loaded into every runtime unless disabled (listeners), rather than on demand
    autoload: bool = False


KINDS: dict[str, KindSpec] = {
    spec.name: spec
    for spec in (
        KindSpec(
            "plugins",
            "agentrig.plugins",
            "modules or objects with @agentrig.hookimpl listeners",
            "agentrig.kernel._contracts:check_hook_plugin",
            autoload=True,
        ),
        KindSpec(
            "providers",
            "agentrig.providers",
            "provider factories: factory(ProviderConfig) -> Provider",
            "agentrig.kernel._contracts:check_provider_factory",
        ),
        KindSpec(
            "tools",
            "agentrig.tools",
            "a tool or a toolset",
            "agentrig.kernel._contracts:check_tool",
        ),
        KindSpec(
            "hook_strategies",
            "agentrig.hook_strategies",
            "hook executors (command, http, ...)",
            "agentrig.kernel._contracts:check_factory",
        ),
        KindSpec(
            "sealers",
            "agentrig.sealers",
            "artifact sealers",
            "agentrig.kernel._contracts:check_factory",
        ),
        KindSpec(
            "credential_stores",
            "agentrig.credential_stores",
            "credential stores",
            "agentrig.kernel._contracts:check_factory",
        ),
        KindSpec(
            "session_stores",
            "agentrig.session_stores",
            "session stores",
            "agentrig.kernel._contracts:check_factory",
        ),
        KindSpec(
            "skills",
            "agentrig.skills",
            "skill packages: a package folder holding SKILL.md (the entry-point name is the skill)",
            "agentrig.kernel._contracts:check_skill",
        ),
        KindSpec(
            "config_sections",
            "agentrig.config_sections",
            "top-level config tables a plugin owns: a pydantic model validating the table",
            "agentrig.kernel._contracts:check_config_section",
        ),
        KindSpec(
            "variants",
            "agentrig.variants",
            "tagged-union members (session events, stream chunks, content blocks)",
            "agentrig.kernel._contracts:check_variants",
        ),
        KindSpec(
            "schemas",
            "agentrig.schemas",
            "persisted-payload schemas: register(registry) defining versions and migrations",
            "agentrig.kernel._contracts:check_schema_registrar",
        ),
    )
}

_BY_GROUP = {spec.group: spec for spec in KINDS.values()}


def kind_of_group(group: str) -> KindSpec | None:
    return _BY_GROUP.get(group)
