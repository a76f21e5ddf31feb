"""The plugin switches a host reads from its environment, in a module that imports nothing.

The kernel's discovery applies them; the ``agentrig`` command reads them before it decides
whether ``--help`` has any plugin to load at all (the kernel is not imported for nothing).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "CORE_DISTRIBUTION",
    "DISABLE_AUTOLOAD_ENV",
    "DISABLE_PLUGINS_ENV",
    "env_plugin_settings",
]

DISABLE_PLUGINS_ENV = "AGENTRIG_DISABLE_PLUGINS"
DISABLE_AUTOLOAD_ENV = "AGENTRIG_DISABLE_PLUGIN_AUTOLOAD"
CORE_DISTRIBUTION = "agentrig"
"""The core distribution: its listener plugins (the built-in composition steps) load even
when autoloading is off -- as pytest's built-ins do -- unless disabled by name."""


def env_plugin_settings(environ: Mapping[str, str]) -> tuple[frozenset[str], bool]:
    """``(disabled names, autoload)`` from the documented environment switches."""
    raw = environ.get(DISABLE_PLUGINS_ENV, "")
    disabled = frozenset(p.strip() for p in raw.split(",") if p.strip())
    autoload = environ.get(DISABLE_AUTOLOAD_ENV, "").strip().lower() not in {"1", "true", "yes"}
    return disabled, autoload
