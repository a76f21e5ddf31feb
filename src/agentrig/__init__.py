"""agentrig: a small plugin host for LLM agent runtimes.

The public face.  Importing ``agentrig`` is cheap: it loads nothing; every name, pluggy's
``hookimpl`` marker included, is imported on first attribute access (PEP 562), so a CLI start
or a plugin's import does not pay for pydantic models (or pluggy) it never uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrig._lazy import lazy_exports

__version__ = "0.1.0"


# name -> module that defines it; resolved lazily by __getattr__ below.  What a user types:
# compose and run agents, declare tools, catch errors.  Plugin authors import from
# agentrig.plugin; the layers' own packages (agentrig.kernel, agentrig.llm, ...) hold the rest.
_LAZY: dict[str, str] = {
    # the hook marker plugins decorate their hook implementations with
    "hookimpl": "agentrig._markers",
    # composing and running
    "open_runtime": "agentrig.kernel",
    "Runtime": "agentrig.kernel",
    "RuntimeConfig": "agentrig.kernel",
    "load_config": "agentrig.kernel",
    "env_resolver": "agentrig.kernel",
    "MemorySource": "agentrig.kernel",
    "Agent": "agentrig.agent",
    "RunResult": "agentrig.agent",
    "run_sync": "agentrig.agent",
    "CancelSignal": "agentrig.cancel",
    "is_abort": "agentrig.cancel",
    "enable_diagnostics": "agentrig.diagnostics",
    # tools
    "tool": "agentrig.tools",
    "Tool": "agentrig.tools",
    # hook answers
    "Enter": "agentrig.lifecycle",
    "Reject": "agentrig.lifecycle",
    "Retry": "agentrig.lifecycle",
    # errors (the tree is drawn in agentrig.errors)
    "AgentrigError": "agentrig.errors",
    "AbortError": "agentrig.errors",
    "ConfigError": "agentrig.errors",
    "HookError": "agentrig.errors",
    "PluginLoadError": "agentrig.errors",
    "RuntimeClosedError": "agentrig.errors",
    "UnknownIdError": "agentrig.errors",
    "ProviderError": "agentrig.llm",
    "ToolInputError": "agentrig.tools",
    "StructuredOutputError": "agentrig.agent",
    "ContextWindowError": "agentrig.agent",
    "ErrorInfo": "agentrig.errors",
    "Issue": "agentrig.errors",
    "error_info": "agentrig.errors",
}

__all__ = [
    "__version__",
    "hookimpl",
    "AbortError",
    "Agent",
    "AgentrigError",
    "CancelSignal",
    "ConfigError",
    "ContextWindowError",
    "Enter",
    "ErrorInfo",
    "HookError",
    "Issue",
    "MemorySource",
    "PluginLoadError",
    "ProviderError",
    "Reject",
    "Retry",
    "RunResult",
    "Runtime",
    "RuntimeClosedError",
    "RuntimeConfig",
    "StructuredOutputError",
    "Tool",
    "ToolInputError",
    "UnknownIdError",
    "enable_diagnostics",
    "env_resolver",
    "error_info",
    "is_abort",
    "load_config",
    "open_runtime",
    "run_sync",
    "tool",
]


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)


if TYPE_CHECKING:
    from agentrig._markers import hookimpl
    from agentrig.agent import (
        Agent,
        ContextWindowError,
        RunResult,
        StructuredOutputError,
        run_sync,
    )
    from agentrig.cancel import CancelSignal, is_abort
    from agentrig.diagnostics import enable_diagnostics
    from agentrig.errors import (
        AbortError,
        AgentrigError,
        ConfigError,
        ErrorInfo,
        HookError,
        Issue,
        PluginLoadError,
        RuntimeClosedError,
        UnknownIdError,
        error_info,
    )
    from agentrig.kernel import (
        MemorySource,
        Runtime,
        RuntimeConfig,
        env_resolver,
        load_config,
        open_runtime,
    )
    from agentrig.lifecycle import Enter, Reject, Retry
    from agentrig.llm import ProviderError
    from agentrig.tools import Tool, ToolInputError, tool
