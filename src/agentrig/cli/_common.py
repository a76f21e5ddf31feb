"""Shared pieces of the subcommands: exit codes, the usage error, plugin-index construction."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from agentrig.kernel import LoadedConfig, PluginIndex

    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]
else:  # not subscriptable at runtime (typeguard evaluates annotations)
    Subparsers: TypeAlias = argparse._SubParsersAction
"""What ``ArgumentParser.add_subparsers()`` returns (argparse's class is private)."""

__all__ = [
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "Subparsers",
    "UsageError",
    "load_plugin_settings",
    "plugin_index",
    "version_text",
]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """The command line was wrong (exit code 2): a missing file, a bad combination."""


def version_text() -> str:
    from agentrig import __version__

    return f"agentrig {__version__}"


def load_plugin_settings(file: str | None) -> LoadedConfig | None:
    """The config whose plugin settings ``--config FILE`` applies (None without the option)."""
    if file is None:
        return None
    from agentrig.errors import ConfigError
    from agentrig.kernel import load_config

    try:
        return load_config(file)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def plugin_index(
    loaded: LoadedConfig | None = None, environ: Mapping[str, str] | None = None
) -> PluginIndex:
    """The installed plugins, with the config's and the environment's plugin switches applied.

    The CLI is a host: it reads the documented switches ``AGENTRIG_DISABLE_PLUGINS`` and
    ``AGENTRIG_DISABLE_PLUGIN_AUTOLOAD`` from the process environment.
    """
    from agentrig.kernel import PluginIndex
    from agentrig.kernel.discovery import env_plugin_settings

    disabled_env, autoload_env = env_plugin_settings(os.environ if environ is None else environ)
    if loaded is None:
        return PluginIndex(disabled=disabled_env, autoload=autoload_env)
    settings = loaded.config.plugins
    return PluginIndex(
        disabled=set(settings.disabled) | disabled_env,
        autoload=settings.autoload and autoload_env,
        enabled=settings.enabled,
        prefer=settings.prefer,
    )
