"""Everything a plugin author types, in one module: ``from agentrig.plugin import ...``.

* listeners: :data:`hookimpl` and the payload of every hook (``docs/hooks.md`` and the
  ``_hookspecs`` modules of the kernel, :mod:`agentrig.lifecycle`, :mod:`agentrig.skills` and
  :mod:`agentrig.cli` say when each fires and what it may return), the waterfall answers
  ``Enter``, ``Reject``, ``Retry``;
* adding to a runtime: :func:`compose_step` / :class:`Composition` (a composition step),
  :class:`ServiceKey` (a typed service), :class:`Commands` (``agentrig`` subcommands), and
  :class:`Runtime` for annotations; :data:`TRACE_CONTEXT` / :class:`TraceContext` for a
  tracing plugin; :data:`RUN_QUEUE` / :class:`RunQueue` for a plugin that queues runs for
  workers (``agent.submit``; ``agentrig.agent``);
  :data:`CHILD_RUNS` / :class:`ChildRuns` / :class:`ChildRun` for one that runs delegated
  children its own way (durably); :class:`SideCall` for one that asks an agent's model
  something apart from its conversation (``agent.complete_aside``: an MCP server's sampling),
  under the agent's provider, limits, signal and budget;
* the runtime's catalogs by typed key (:class:`CatalogKey`): ``rt.catalog(TOOLS)``,
  ``rt.registry(TOOLSETS)``, ``PROVIDERS``, ``SESSION_STORES``, ``SEALERS``,
  ``CREDENTIAL_STORES``, ``HOOK_STRATEGIES``;
* contributions: the :class:`Provider` port, its :class:`ProviderConfig` and the optional
  :class:`ReadinessCheck` and :class:`RequestOptionsCheck` (with
  :func:`reserved_option_issues`), the
  :class:`Tool` contract with :func:`tool` and :class:`Toolset`, :func:`with_options` for a
  factory's options model, :func:`resolve_secret` / :data:`SecretResolver` and
  :func:`issues_from_validation` for a plugin's own config section,
  :func:`protocol_problems` (what a factory's product lacks of its kind's protocol),
  :class:`Variant` for union members, :class:`ContractViolation`;
* a cheap package face: :func:`lazy_exports` (PEP 562), so a plugin package's entry-point
  module does not pull in its servers and SDKs on every command.

Names are imported on first use (PEP 562), so importing this module costs next to nothing.
See ``docs/plugin-guide.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrig._lazy import lazy_exports
from agentrig._markers import hookimpl

_LAZY: dict[str, str] = {
    # listeners and their payloads
    "AgentCreated": "agentrig.lifecycle",
    "AgentDisposed": "agentrig.lifecycle",
    "AgentHandle": "agentrig.lifecycle",
    "AgentStatusChanged": "agentrig.lifecycle",
    "Enter": "agentrig.lifecycle",
    "Observation": "agentrig.lifecycle",
    "PermissionQuestion": "agentrig.lifecycle",
    "ElicitationAnswer": "agentrig.lifecycle",
    "ElicitationQuestion": "agentrig.lifecycle",
    "RegistrationReview": "agentrig.skills",
    "PreStep": "agentrig.lifecycle",
    "Reject": "agentrig.lifecycle",
    "RequestConfig": "agentrig.lifecycle",
    "RequestError": "agentrig.lifecycle",
    "CompactionPlan": "agentrig.lifecycle",
    "CompactionRequest": "agentrig.lifecycle",
    "Retry": "agentrig.lifecycle",
    "RuntimeStarted": "agentrig.kernel",
    "SessionStart": "agentrig.lifecycle",
    "ToolExecution": "agentrig.lifecycle",
    "TurnStopping": "agentrig.lifecycle",
    # adding to a runtime
    "Commands": "agentrig.cli",
    "Composition": "agentrig.kernel",
    "Phase": "agentrig.kernel",
    "Runtime": "agentrig.kernel",
    "RUN_QUEUE": "agentrig.agent",
    "RunQueue": "agentrig.agent",
    "CHILD_RUNS": "agentrig.agent",
    # a model call for an agent outside its conversation (agent.complete_aside)
    "SideCall": "agentrig.agent",
    "ChildRun": "agentrig.agent",
    "ChildRuns": "agentrig.agent",
    "ServiceKey": "agentrig.kernel",
    "compose_step": "agentrig.kernel",
    # the runtime's catalogs, by typed key: rt.catalog(TOOLS), rt.registry(TOOLSETS)
    "CatalogKey": "agentrig.catalog",
    "CREDENTIAL_STORES": "agentrig.credentials",
    "HOOK_STRATEGIES": "agentrig.hooks",
    "PROVIDERS": "agentrig.llm",
    "SEALERS": "agentrig.sealing",
    "SESSION_STORES": "agentrig.session",
    "TOOLS": "agentrig.tools",
    "TOOLSETS": "agentrig.tools",
    # tracing (a plugin that provides TRACE_CONTEXT)
    "TRACE_CONTEXT": "agentrig.tracing",
    "ScopeKind": "agentrig.tracing",
    "TraceContext": "agentrig.tracing",
    "TraceScope": "agentrig.tracing",
    "trace_env": "agentrig.tracing",
    # contributions
    "ContractViolation": "agentrig.kernel",
    "Provider": "agentrig.llm",
    "ProviderConfig": "agentrig.llm",
    "ReadinessCheck": "agentrig.llm",
    "RequestOptionsCheck": "agentrig.llm",
    "reserved_option_issues": "agentrig.llm",
    "Tool": "agentrig.tools",
    "Toolset": "agentrig.tools",
    "Variant": "agentrig.variants",
    "tool": "agentrig.tools",
    "with_options": "agentrig.kernel",
    # a plugin's own config section: secrets by reference, pydantic errors as config issues
    "SecretResolver": "agentrig.kernel",
    "issues_from_validation": "agentrig.kernel",
    "resolve_secret": "agentrig.credentials",
    # what a factory's product lacks of its kind's protocol (the check composition makes)
    "protocol_problems": "agentrig.kernel",
}

__all__ = [
    "TRACE_CONTEXT",
    "hookimpl",
    "lazy_exports",
    "CREDENTIAL_STORES",
    "HOOK_STRATEGIES",
    "PROVIDERS",
    "SEALERS",
    "SESSION_STORES",
    "TOOLS",
    "TOOLSETS",
    "CatalogKey",
    "AgentCreated",
    "AgentDisposed",
    "AgentHandle",
    "AgentStatusChanged",
    "Commands",
    "Composition",
    "ContractViolation",
    "Enter",
    "Observation",
    "PermissionQuestion",
    "ElicitationAnswer",
    "ElicitationQuestion",
    "RegistrationReview",
    "Phase",
    "PreStep",
    "Provider",
    "ProviderConfig",
    "ReadinessCheck",
    "Reject",
    "RequestOptionsCheck",
    "RequestConfig",
    "RequestError",
    "CompactionPlan",
    "CompactionRequest",
    "Retry",
    "RUN_QUEUE",
    "RunQueue",
    "CHILD_RUNS",
    "ChildRun",
    "ChildRuns",
    "Runtime",
    "RuntimeStarted",
    "ServiceKey",
    "SessionStart",
    "SideCall",
    "ScopeKind",
    "Tool",
    "ToolExecution",
    "Toolset",
    "TraceContext",
    "TraceScope",
    "TurnStopping",
    "Variant",
    "compose_step",
    "reserved_option_issues",
    "tool",
    "trace_env",
    "with_options",
    "SecretResolver",
    "issues_from_validation",
    "protocol_problems",
    "resolve_secret",
]


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)


if TYPE_CHECKING:
    from agentrig.agent import CHILD_RUNS, RUN_QUEUE, ChildRun, ChildRuns, RunQueue, SideCall
    from agentrig.catalog import CatalogKey
    from agentrig.cli import Commands
    from agentrig.credentials import CREDENTIAL_STORES, resolve_secret
    from agentrig.hooks import HOOK_STRATEGIES
    from agentrig.kernel import (
        Composition,
        ContractViolation,
        Phase,
        Runtime,
        RuntimeStarted,
        SecretResolver,
        ServiceKey,
        compose_step,
        issues_from_validation,
        protocol_problems,
        with_options,
    )
    from agentrig.lifecycle import (
        AgentCreated,
        AgentDisposed,
        AgentHandle,
        AgentStatusChanged,
        CompactionPlan,
        CompactionRequest,
        ElicitationAnswer,
        ElicitationQuestion,
        Enter,
        Observation,
        PermissionQuestion,
        PreStep,
        Reject,
        RequestConfig,
        RequestError,
        Retry,
        SessionStart,
        ToolExecution,
        TurnStopping,
    )
    from agentrig.llm import (
        PROVIDERS,
        Provider,
        ProviderConfig,
        ReadinessCheck,
        RequestOptionsCheck,
        reserved_option_issues,
    )
    from agentrig.sealing import SEALERS
    from agentrig.session import SESSION_STORES
    from agentrig.skills import RegistrationReview
    from agentrig.tools import TOOLS, TOOLSETS, Tool, Toolset, tool
    from agentrig.tracing import TRACE_CONTEXT, ScopeKind, TraceContext, TraceScope, trace_env
    from agentrig.variants import Variant
