"""Composition steps: build a runtime's catalogs and services from its config.

Each is wrapped as a ``compose`` plugin in :mod:`agentrig.builtins._composition`.  Each step
imports only the plugins the config names; an id already present in a catalog (a test
override, or a plugin's earlier step) is not built again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from agentrig.agent import agent_configs, model_selection_config
from agentrig.builtins._dry_run import PlaceholderResolver
from agentrig.builtins._factory import call_factory
from agentrig.builtins._tool_refs import ToolRefs, bare_file_issue, is_tool_ref, static_issue
from agentrig.credentials import (
    CREDENTIAL_STORES,
    STORE_PREFIX,
    CredentialReferenceError,
    CredentialStore,
    CredentialStoreError,
    resolve_secret,
    resolve_store_reference,
)
from agentrig.errors import (
    AgentrigError,
    ConfigError,
    Issue,
    PluginConflictError,
    PluginDisabledError,
    UnknownIdError,
    did_you_mean,
)
from agentrig.ids import ToolId, provider_id
from agentrig.kernel import (
    AGENTS,
    HTTP,
    MODELS,
    HttpFactory,
    PluginIndex,
    issues_from_validation,
    unknown_key_message,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    import httpx

    from agentrig.kernel import LoadedConfig, Runtime

__all__ = [
    "check_composition",
    "check_ids",
    "compose_egress",
    "compose_providers",
    "compose_stores",
    "compose_agents",
    "compose_tools",
]

Path = tuple[str | int, ...]

#: the registration source of a test override (``open_runtime(overrides=...)``)
OVERRIDE = "override"


def _entry_issue(index: PluginIndex, kind: str, name: str, path: Path) -> Issue | None:
    """An issue when entry ``kind:name`` is unknown, disabled or broken; else None."""
    try:
        index.load(kind, name)
    except UnknownIdError as exc:
        return Issue("config.unknown_id", str(exc), path)
    except PluginDisabledError as exc:
        return Issue("config.plugin_disabled", str(exc), path)
    except PluginConflictError as exc:
        return Issue("config.plugin_conflict", str(exc), path)
    except AgentrigError as exc:
        return Issue("config.plugin_broken", str(exc), path)
    return None


def _options_issues(factory: object, options: dict[str, Any], path: Path) -> list[Issue]:
    model = getattr(factory, "options_model", None)
    if model is None or not (isinstance(model, type) and issubclass(model, BaseModel)):
        return []
    try:
        model.model_validate(options)
    except ValidationError as exc:
        issues = issues_from_validation(exc, model)
        return [Issue(i.code, i.message, (*path, *i.path)) for i in issues]
    return []


def _credential_issues(factory: object, credentials: dict[str, str], path: Path) -> list[Issue]:
    """A credential the factory does not read (it declares ``credential_keys``) is refused:
    a misspelt ``api_key`` would otherwise send requests without a key."""
    known = getattr(factory, "credential_keys", None)
    if known is None:
        return []
    return [
        Issue(
            "config.unknown_credential",
            unknown_key_message(key, sorted(known)),
            (*path, "credentials", key),
        )
        for key in credentials
        if key not in known
    ]


def check_composition(loaded: LoadedConfig, index: PluginIndex) -> list[Issue]:
    """Every unknown, disabled or broken ID the config refers to, with its key path."""
    config = loaded.config
    issues: list[Issue] = []
    for pid, provider in config.providers.items():
        issue = _entry_issue(index, "providers", provider.kind, ("providers", pid, "kind"))
        if issue:
            issues.append(issue)
        else:
            factory = index.load("providers", provider.kind)
            issues += _options_issues(factory, provider.options, ("providers", pid, "options"))
            issues += _credential_issues(factory, provider.credentials, ("providers", pid))
        for key, value in provider.credentials.items():
            # the reference's syntax only: the placeholder reads no environment
            path = ("providers", pid, "credentials", key)
            _, issue = resolve_secret(value, PlaceholderResolver(), path=path)
            if issue is not None:
                issues.append(issue)
    for name, table in loaded.sections.items():
        if name in loaded.imported:
            continue  # its importer read and validated it as the file was loaded
        issue = _entry_issue(index, "config_sections", name, (name,))
        if issue:
            issues.append(issue)
            continue
        model: Any = index.load("config_sections", name)
        try:
            model.model_validate(table)
        except ValidationError as exc:
            issues += [
                Issue(i.code, i.message, (name, *i.path))
                for i in issues_from_validation(exc, model)
            ]
    from agentrig.builtins._compose_security import security_issues  # imports this module

    issues += security_issues(loaded, index)
    for sid, store in config.session_stores.items():
        issue = _entry_issue(index, "session_stores", store.kind, ("session_stores", sid, "kind"))
        if issue:
            issues.append(issue)
        else:
            factory = index.load("session_stores", store.kind)
            issues += _options_issues(factory, store.options, ("session_stores", sid, "options"))
    for tid in config.tools:
        issue = _entry_issue(index, "tools", tid, ("tools", tid))
        if issue:
            issues.append(issue)
    for aid, agent in agent_configs(loaded).items():
        if agent.provider not in config.providers:
            known = ", ".join(sorted(config.providers)) or "none"
            issues.append(
                Issue(
                    "config.unknown_id",
                    f"unknown provider {agent.provider!r} (configured providers: {known})",
                    ("agents", aid, "provider"),
                )
            )
        for i, tool in enumerate(agent.tools):
            at: Path = ("agents", aid, "tools", i)
            if is_tool_ref(tool):  # code: run (and fully checked) when the tools are composed
                issue = static_issue(tool, loaded.base_dir, at)
            else:
                issue = bare_file_issue(tool, at) or _entry_issue(index, "tools", tool, at)
            if issue:
                issues.append(issue)
        if agent.session_store is not None and agent.session_store not in config.session_stores:
            issues.append(
                Issue(
                    "config.unknown_id",
                    f"unknown session store {agent.session_store!r} "
                    f"(configured: {', '.join(sorted(config.session_stores)) or 'none'})",
                    ("agents", aid, "session_store"),
                )
            )
    chosen = model_selection_config(loaded).provider
    if chosen is not None and chosen not in config.providers:
        known = ", ".join(sorted(config.providers)) or "none"
        issues.append(
            Issue(
                "config.unknown_id",
                f"unknown provider {chosen!r} (configured providers: {known})",
                ("model_selection", "provider"),
            )
        )
    if loaded.sections.get("hooks"):  # the hooks layer is imported only for a config that has some
        issues += _hook_issues(loaded, index)
    return issues


def _hook_issues(loaded: LoadedConfig, index: PluginIndex) -> list[Issue]:
    from agentrig.hooks import event_name_problem, hooks_config, matcher_problem

    issues: list[Issue] = []
    for event, entries in hooks_config(loaded).items():
        problem = event_name_problem(event)
        if problem is not None:  # a hook for an event agentrig never fires would never run
            issues.append(Issue("config.hook_event", problem, ("hooks", event)))
        for i, hook in enumerate(entries):
            ignored = matcher_problem(event, hook.matcher) if problem is None else None
            if ignored is not None:
                issues.append(Issue("config.hook_matcher", ignored, ("hooks", event, i, "matcher")))
            issue = _entry_issue(
                index, "hook_strategies", hook.strategy, ("hooks", event, i, "strategy")
            )
            if issue:
                issues.append(issue)
            else:
                factory = index.load("hook_strategies", hook.strategy)
                issues += _options_issues(factory, hook.options, ("hooks", event, i, "options"))
    return issues


def _agent_tool_path(issue: Issue) -> bool:
    return len(issue.path) == 4 and issue.path[0] == "agents" and issue.path[2] == "tools"


async def check_ids(rt: Runtime) -> None:
    """Refuse the composition when it names unknown, disabled or broken plugins.

    An agent's tool that no installed entry provides may still come from a plugin's compose
    step (a toolset); :func:`compose_agents` checks those names once every step ran.
    """
    issues = [
        issue
        for issue in check_composition(rt.loaded, rt.index)
        if not (issue.code == "config.unknown_id" and _agent_tool_path(issue))
    ]
    if issues:
        raise ConfigError(issues, source=rt.loaded.source)


async def compose_egress(rt: Runtime) -> None:
    """Provide ``rt.http``: every caller- or model-supplied URL goes through the egress policy.

    The egress machinery (httpx, httpcore and through it trio) is imported by the first
    client built, so a runtime that never opens a connection never loads it.
    """
    built: list[HttpFactory] = []

    def http(*, allow_private: Iterable[str] = (), **kwargs: Any) -> httpx.AsyncClient:
        if not built:
            from agentrig.builtins._egress_http import make_http_factory

            built.append(make_http_factory(rt))
        return built[0](allow_private=allow_private, **kwargs)

    rt.services.provide(HTTP, http, source="compose-egress")


async def _resolve_credentials(
    rt: Runtime, pid: str, credentials: dict[str, str]
) -> dict[str, str]:
    """``$ENV:`` through the caller's resolver, ``$STORE:`` through the credential stores."""
    resolved: dict[str, str] = {}
    issues: list[Issue] = []
    for key, ref in credentials.items():
        path = ("providers", pid, "credentials", key)
        if ref.startswith(STORE_PREFIX):
            if isinstance(rt.resolver, PlaceholderResolver):  # reads no secret (config check)
                resolved[key] = rt.resolver.value
                continue
            stores: dict[str, CredentialStore] = dict(rt.catalog(CREDENTIAL_STORES).entries())
            try:
                resolved[key] = await resolve_store_reference(ref, stores)
            except CredentialReferenceError as exc:
                issues.append(Issue("config.credential_reference", str(exc), path))
            except CredentialStoreError as exc:
                issues.append(Issue("config.credential_store", str(exc), path))
            continue
        value, issue = resolve_secret(ref, rt.resolver, path=path)
        if issue is not None:
            issues.append(issue)
        elif value is not None:
            resolved[key] = value
    if issues:
        raise ConfigError(issues, source=rt.loaded.source)
    return resolved


async def compose_providers(rt: Runtime) -> None:
    """Provide ``rt.models``; build each ``[providers.<id>]`` and register it under ``<id>``."""
    from agentrig.llm import PROVIDERS, ModelRegistry, Provider, ProviderConfig

    models = rt.services.get(MODELS)
    if models is None:
        models = ModelRegistry()
        rt.services.provide(MODELS, models, source="compose-providers")
    if not rt.config.providers:
        return
    registry = rt.registry(PROVIDERS)
    for pid, entry in rt.config.providers.items():
        if registry.has(pid):
            continue
        factory: Any = rt.index.load("providers", entry.kind)
        options: dict[str, Any] = dict(entry.options)
        model = getattr(factory, "options_model", None)
        if isinstance(model, type) and issubclass(model, BaseModel):
            options = model.model_validate(options).model_dump()
        config = ProviderConfig(
            id=pid,
            kind=entry.kind,
            options=options,
            credentials=await _resolve_credentials(rt, pid, entry.credentials),
            http=rt.http,
            models=models,
            peers=lambda name: registry.require(provider_id(name)),
        )
        path = ("providers", pid)
        provider = call_factory(rt, "providers", entry.kind, path, factory, config, Provider)
        registry.register(provider, id=pid, source=f"providers:{entry.kind}")


async def compose_stores(rt: Runtime) -> None:
    """Build each ``[session_stores.<id>]`` through its factory.

    The factory's spec also carries ``sealers`` (sealer id -> sealer), for a store whose
    options name one (``sealer = "<id>"``); the sealers are composed first.
    """
    from agentrig.sealing import SEALERS
    from agentrig.session import SESSION_STORES, SessionStore

    registry = rt.registry(SESSION_STORES)
    sealers = dict(rt.catalog(SEALERS).entries())
    for sid, entry in rt.config.session_stores.items():
        if registry.has(sid):
            continue
        factory: Any = rt.index.load("session_stores", entry.kind)
        options: dict[str, Any] = dict(entry.options)
        model = getattr(factory, "options_model", None)
        if isinstance(model, type) and issubclass(model, BaseModel):
            options = model.model_validate(options).model_dump()
        spec = {"id": sid, "options": options, "base_dir": rt.loaded.base_dir, "sealers": sealers}
        path = ("session_stores", sid)
        store = call_factory(rt, "session_stores", entry.kind, path, factory, spec, SessionStore)
        registry.register(store, id=sid, source=f"session_stores:{entry.kind}")


async def compose_tools(rt: Runtime) -> None:
    """Load every tool the config names (``[tools.*]`` and each agent's ``tools``).

    One ID, one tool: two entries (tools or toolsets, installed or in memory) that bring the
    same tool id are a config error naming both -- neither silently wins.  A test override
    of an id is the one deliberate replacement.
    """
    wanted: dict[str, Path] = {name: ("tools", name) for name in rt.config.tools}
    for aid, agent in agent_configs(rt.loaded).items():
        for i, name in enumerate(agent.tools):
            wanted.setdefault(name, ("agents", aid, "tools", i))
    if not wanted:
        return
    from agentrig.tools import TOOLS, TOOLSETS

    registry = rt.registry(TOOLS)
    toolsets = rt.registry(TOOLSETS)
    issues: list[Issue] = []
    refs = ToolRefs(rt.loaded.base_dir)
    for name, path in wanted.items():
        if is_tool_ref(name):
            issues += _compose_ref(rt, refs, name, path)
            continue
        entry = rt.index.find("tools", name)
        if toolsets.has(name) or registry.has(ToolId(name)):
            # an override, or a plugin's earlier step, provides it; an installed entry of the
            # same name would be a second source for it
            previous = toolsets.source_of(name) or registry.source_of(ToolId(name))
            if entry is not None and previous not in (OVERRIDE, f"tools:{name}"):
                issues.append(_duplicate(rt, name, previous, f"tools:{name}", path))
            continue
        if entry is None:
            continue  # maybe a plugin's step provides it; compose_agents reports it if not
        tools: Any = rt.index.load("tools", name)  # checked: a tuple of tools
        source = f"tools:{name}"
        for tool in tools:
            previous = registry.source_of(tool.id) if registry.has(tool.id) else None
            if previous is None:
                registry.register(tool, id=tool.id, source=source)
            elif previous != OVERRIDE and registry.get(tool.id) is not tool:
                issues.append(_duplicate(rt, tool.id, previous, source, path))
        if len(tools) != 1 or tools[0].id != name:
            # a toolset: its entry name stands for all of its tools
            toolsets.register(tuple(tool.id for tool in tools), id=name, source=source)
    if issues:
        raise ConfigError(issues, source=rt.loaded.source)


def _compose_ref(rt: Runtime, refs: ToolRefs, ref: str, path: Path) -> list[Issue]:
    """Register the tools a code reference names; the reference stands for all of them."""
    from agentrig.tools import TOOLS, TOOLSETS

    loaded = refs.load(ref, path)
    if isinstance(loaded, Issue):
        return [loaded]
    registry = rt.registry(TOOLS)
    source = f"ref:{ref}"
    issues: list[Issue] = []
    for tool in loaded:
        if not registry.has(tool.id):
            registry.register(tool, id=tool.id, source=source)
        elif registry.get(tool.id) is not tool and registry.source_of(tool.id) != OVERRIDE:
            issues.append(_duplicate(rt, tool.id, registry.source_of(tool.id), source, path))
    rt.registry(TOOLSETS).register(tuple(tool.id for tool in loaded), id=ref, source=source)
    return issues


def _duplicate(rt: Runtime, tool_id: str, first: str | None, second: str, path: Path) -> Issue:
    return Issue(
        "config.duplicate_tool",
        f"tool id {tool_id!r} is brought by two entries: {_entry_label(rt, first)} and "
        f"{_entry_label(rt, second)}; one ID, one tool -- {_duplicate_fix(first, second)}",
        path,
    )


def _duplicate_fix(*sources: str | None) -> str:
    """The fix that applies: a reference is dropped from the agent's ``tools`` or renamed in
    its code (``plugins.disabled`` only reaches installed entries)."""
    refs = [s for s in sources if s and s.startswith("ref:")]
    if len(refs) == len(sources):
        return (
            "drop one reference from the agent's tools, or give one tool another id (@tool(id=...))"
        )
    if refs:
        return (
            "drop the reference from the agent's tools, give its tool another id "
            "(@tool(id=...)), or disable the installed entry (plugins.disabled)"
        )
    return "disable one of them (plugins.disabled) or rename a tool"


def _entry_label(rt: Runtime, source: str | None) -> str:
    kind, _, name = (source or "").partition(":")
    entry = rt.index.find(kind, name) if kind and name else None
    return f"{source} ({entry.describe()})" if entry is not None else str(source)


async def compose_agents(rt: Runtime) -> None:
    """Provide ``rt.agents`` and create the agents declared in ``[agents.*]``."""
    from agentrig.agent import AgentRegistry, ModelSelectionService
    from agentrig.builtins._gate_choice import gate_for
    from agentrig.kernel import MODEL_SELECTION

    _check_agent_tools(rt)
    if rt.services.get(MODEL_SELECTION) is None:
        selection = ModelSelectionService.from_config(rt)
        rt.services.provide(MODEL_SELECTION, selection, source="compose-agents")
    registry = AgentRegistry(rt, gate=gate_for(rt))
    rt.services.provide(AGENTS, registry, source="compose-agents")
    rt.on_close("agents", registry.aclose)
    for agent_id in agent_configs(rt.loaded):
        await registry.create(agent_id)


def _check_agent_tools(rt: Runtime) -> None:
    """Every agent's tool names a tool or a toolset some step registered."""
    from agentrig.tools import TOOLS, TOOLSETS

    tools, toolsets = rt.catalog(TOOLS), rt.catalog(TOOLSETS)
    known = sorted({*tools.ids(), *toolsets.ids(), *rt.index.names("tools")})
    issues: list[Issue] = []
    for aid, agent in agent_configs(rt.loaded).items():
        for i, name in enumerate(agent.tools):
            if tools.has(ToolId(name)) or toolsets.has(name):  # a lookup, not a claim
                continue
            path: Path = ("agents", aid, "tools", i)
            bare = bare_file_issue(name, path)
            if bare is not None:
                issues.append(bare)
                continue
            issue = _entry_issue(rt.index, "tools", name, path)
            if issue is not None and issue.code != "config.unknown_id":
                issues.append(issue)  # disabled or broken
                continue
            if issue is None:  # installed and loadable, but no step registered it
                message = f"tool {name!r} was not composed (is compose-tools disabled?)"
            else:
                message = (
                    f"no tools plugin named {name!r} is installed and no compose step "
                    f"registered it{did_you_mean(name, known)} "
                    f"(known: {', '.join(known) or 'none'})"
                )
            issues.append(Issue("config.unknown_id", message, path))
    if issues:
        raise ConfigError(issues, source=rt.loaded.source)
