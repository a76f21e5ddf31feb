"""Shared pieces of the subcommands: exit codes, the usage error, plugin-index construction."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, TypeAlias

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
    "MODES",
    "Subparsers",
    "UsageError",
    "config_path",
    "load_plugin_settings",
    "plugin_index",
    "prompt_text",
    "set_debug",
    "show_traceback",
    "version_text",
    "warning_line",
]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

MODES = ("default", "plan", "accept-edits", "bypass")
"""The values of ``--mode``: the permission modes of ``[permissions] mode``."""


class UsageError(Exception):
    """The command line was wrong (exit code 2): a missing file, a bad combination.

    ``code`` (e.g. ``cli.not_utf8``) is shown as ``error [code]: ...``, so scripts match the
    problem rather than its wording.
    """

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


def warning_line(command: str | None, code: str, message: str) -> str:
    """``agentrig COMMAND: warning [code]: message``: a warning has the shape of an error line
    (``error [code]: ...``), so scripts and users match both the same way."""
    prefix = "agentrig" if command is None else f"agentrig {command}"
    return f"{prefix}: warning [{code}]: {message}"


_debug = False


def set_debug(on: bool) -> None:
    """``agentrig --debug``: failures also print their traceback."""
    global _debug
    _debug = on


def show_traceback(exc: BaseException, err: IO[str] | None = None) -> None:
    """Print ``exc``'s traceback on ``err`` (stderr) when ``--debug`` is on; else nothing."""
    if _debug:
        import traceback

        traceback.print_exception(exc, file=sys.stderr if err is None else err)


def config_path(file: str) -> Path:
    """The composition file ``file`` names; a usage error when it is missing or a folder."""
    path = Path(file)
    if path.is_dir():
        raise UsageError(
            f"{file} is a directory, not a composition file; give the file itself "
            f"(for example {path / 'agentrig.toml'})",
            code="cli.config_is_directory",
        )
    if not path.is_file():
        raise UsageError(
            f"no such file: {file} (give the composition file, e.g. -c agentrig.toml)",
            code="cli.no_config",
        )
    return path


def prompt_text(raw: str | bytes, source: str) -> str:
    """A prompt as text, refused (before anything is sent or stored) unless it is UTF-8.

    ``raw`` is bytes read from a file or stdin, or a ``str`` Python decoded with
    ``surrogateescape`` (command-line arguments, stdin in a C locale), whose undecodable
    bytes show as lone surrogates.
    """
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogateescape")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"the prompt from {source} is not valid UTF-8 (byte 0x{data[exc.start]:02x} at "
            f"offset {exc.start}); convert it to UTF-8 first (e.g. iconv -t UTF-8)",
            code="cli.not_utf8",
        ) from None


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
        issues = exc.issues
        code = issues[0].code if len(issues) == 1 else "config.invalid"
        problems = "; ".join(str(issue) for issue in issues) or str(exc)
        raise UsageError(f"{file}: {problems}", code=code) from None


def plugin_index(
    loaded: LoadedConfig | None = None, environ: Mapping[str, str] | None = None
) -> PluginIndex:
    """The installed plugins, with the config's and the environment's plugin switches applied.

    The CLI is a host: it reads the documented switches ``AGENTRIG_DISABLE_PLUGINS`` and
    ``AGENTRIG_DISABLE_PLUGIN_AUTOLOAD`` from the process environment.
    """
    from agentrig.kernel import PluginIndex, env_plugin_settings

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
