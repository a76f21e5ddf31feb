"""agentrig: a small plugin host for LLM agent runtimes.

The public face.  Importing ``agentrig`` is cheap: it loads pluggy's marker and nothing
else; every other name is imported on first attribute access (PEP 562), so a CLI start or a
plugin's import does not pay for pydantic models it never uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from agentrig._markers import hookimpl

__version__ = "0.1.0"


# name -> module that defines it; resolved lazily by __getattr__ below.
_LAZY: dict[str, str] = {
    # errors
    "AgentrigError": "agentrig.errors",
    "AbortError": "agentrig.errors",
    "ConfigError": "agentrig.errors",
    "CheckResult": "agentrig.errors",
    "ErrorInfo": "agentrig.errors",
    "Issue": "agentrig.errors",
    "PluginLoadError": "agentrig.errors",
    "RuntimeClosedError": "agentrig.errors",
    "UnknownIdError": "agentrig.errors",
    "error_info": "agentrig.errors",
    # kernel
    "open_runtime": "agentrig.kernel",
    "Runtime": "agentrig.kernel",
    "RuntimeConfig": "agentrig.kernel",
    "load_config": "agentrig.kernel",
    "env_resolver": "agentrig.kernel",
    "MemorySource": "agentrig.kernel",
    "PluginIndex": "agentrig.kernel",
    "Enter": "agentrig.kernel",
    "Reject": "agentrig.kernel",
    "Retry": "agentrig.kernel",
    # primitives
    "CancelSignal": "agentrig.cancel",
    "is_abort": "agentrig.cancel",
    "ReadonlyCatalog": "agentrig.catalog",
    "Registry": "agentrig.catalog",
    "Variant": "agentrig.variants",
    "VariantRegistry": "agentrig.variants",
    "enable_diagnostics": "agentrig.diagnostics",
    "run_sync": "agentrig.agent",
    "tool": "agentrig.tools",
}

__all__ = [
    "__version__",
    "hookimpl",
    "AbortError",
    "AgentrigError",
    "CancelSignal",
    "CheckResult",
    "ConfigError",
    "Enter",
    "ErrorInfo",
    "Issue",
    "MemorySource",
    "PluginIndex",
    "PluginLoadError",
    "ReadonlyCatalog",
    "Registry",
    "Reject",
    "Retry",
    "Runtime",
    "RuntimeClosedError",
    "RuntimeConfig",
    "UnknownIdError",
    "Variant",
    "VariantRegistry",
    "enable_diagnostics",
    "env_resolver",
    "error_info",
    "is_abort",
    "load_config",
    "open_runtime",
    "run_sync",
    "tool",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentrig' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:
    from agentrig.agent import run_sync
    from agentrig.cancel import CancelSignal, is_abort
    from agentrig.catalog import ReadonlyCatalog, Registry
    from agentrig.diagnostics import enable_diagnostics
    from agentrig.errors import (
        AbortError,
        AgentrigError,
        CheckResult,
        ConfigError,
        ErrorInfo,
        Issue,
        PluginLoadError,
        RuntimeClosedError,
        UnknownIdError,
        error_info,
    )
    from agentrig.kernel import (
        Enter,
        MemorySource,
        PluginIndex,
        Reject,
        Retry,
        Runtime,
        RuntimeConfig,
        env_resolver,
        load_config,
        open_runtime,
    )
    from agentrig.tools import tool
    from agentrig.variants import Variant, VariantRegistry
