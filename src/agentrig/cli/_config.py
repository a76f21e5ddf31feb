"""``agentrig config check FILE``: validate a composition without running it."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from agentrig.cli._common import (
    EXIT_FAILURE,
    EXIT_OK,
    Subparsers,
    UsageError,
    config_path,
    plugin_index,
    warning_line,
)

if TYPE_CHECKING:
    from agentrig.errors import Issue
    from agentrig.kernel import LoadedConfig, PluginIndex

__all__ = [
    "check_file",
    "check_issues",
    "construction_issues",
    "plugin_warnings",
    "register",
    "secret_syntax_issues",
]

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_CHECK_HELP = """\
Validate FILE (agentrig.toml, .json, or .yaml/.yml with PyYAML) the way open_runtime()
would: the strict schema (unknown keys, wrong types), then every ID it names (providers,
tools, session stores, hook strategies) against the installed plugins, importing only those,
then construct what it names (a factory that raises is a problem at its key path) -- with
no network call, no autoloaded listener run and no secret read: $ENV: and $STORE:
references are checked for syntax only and stand in as placeholders.

With --online, a valid file is then opened for real (secrets from the environment) and
each provider that can list its endpoint's models (GET /models for openai, GET /v1/models
for anthropic) is asked once: every agent's model, and each fallback deployment's, that
its endpoint does not list is a problem [model.not_listed]; a provider that cannot list
its models is a warning [model.unchecked].

Each problem is printed as 'agentrig config: error [code]: FILE: key.path: message'; a
warning (what will not work as installed, on stderr) as 'agentrig config: warning [code]: ...'.
Exit codes: 0 valid, 1 invalid, 2 usage error (e.g. FILE does not exist).
"""


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "config",
        help="work with composition files (agentrig.toml)",
        description="Work with composition files (agentrig.toml).",
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", dest="action")
    check = actions.add_parser(
        "check",
        help="validate a composition file: keys and types, plugin ids (providers, tools, "
        "stores, credential stores, sealers, hook strategies), provider options and "
        "$ENV:/$STORE: reference syntax -- no secret is read",
        description=_CHECK_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("file", metavar="FILE", help="the composition file to check")
    check.add_argument(
        "--online",
        action="store_true",
        help="then open the runtime (secrets from the environment) and ask each provider's "
        "endpoint for its models: one error per configured model it does not list",
    )
    check.set_defaults(handler=run_check)

    def no_action(args: argparse.Namespace) -> int:
        parser.print_usage(sys.stderr)
        raise UsageError(
            "choose an action, e.g. 'agentrig config check FILE'", code="cli.no_action"
        )

    parser.set_defaults(handler=no_action)


def run_check(args: argparse.Namespace) -> int:
    path = config_path(args.file)
    problems, notes = check_issues(path)
    if args.online and not problems:  # only a valid composition is opened for real
        from agentrig.cli._config_online import online_issues
        from agentrig.kernel import load_config

        more, more_notes = online_issues(load_config(path))
        problems += more
        notes += more_notes
    for note in notes:
        print(warning_line(args.command, note.code, f"{path}: {note}"), file=sys.stderr)
    for issue in problems:  # the shape every command's errors have, on stdout: the report
        print(f"agentrig {args.command}: error [{issue.code}]: {path}: {issue}")
    if problems:
        print(f"{args.file}: {len(problems)} problem(s) found", file=sys.stderr)
        return EXIT_FAILURE
    print(f"{args.file}: ok")
    return EXIT_OK


def check_file(path: Path, *, warnings: list[str] | None = None) -> list[str]:
    """Every problem of the composition at ``path`` as ``FILE: key.path: message`` lines.

    ``warnings`` (when given) receives the warnings of :func:`check_issues` as lines.
    """
    problems, notes = check_issues(path)
    if warnings is not None:
        warnings += _lines(str(path), notes)
    return _lines(str(path), problems)


def check_issues(path: Path) -> tuple[list[Issue], list[Issue]]:
    """The problems of the composition at ``path`` and its warnings, each with its code.

    Warnings are what does not make the file invalid but will not work as installed: an
    autoloaded listener plugin that fails to load (a problem instead when ``plugins.strict``
    is on) and a plugin name two distributions register that this file does not use.
    """
    from agentrig.builtins import check_composition
    from agentrig.errors import ConfigError
    from agentrig.kernel import load_config

    try:
        loaded = load_config(path)
    except ConfigError as exc:
        return list(exc.issues), []
    index = plugin_index(loaded)
    issues = [*index.setting_issues(loaded.config.plugins.disabled)]
    issues += check_composition(loaded, index)
    issues += secret_syntax_issues(loaded)
    if not issues:  # every name resolves: build what they name, to find factories that raise
        issues += construction_issues(loaded)
    notes = plugin_warnings(loaded, index)
    if loaded.config.plugins.strict:
        return issues + notes, []
    return issues, notes


def construction_issues(loaded: LoadedConfig) -> list[Issue]:
    """Compose the runtime the way ``open_runtime`` would, then close it -- without network
    (every HTTP request fails), without reading a secret (placeholders) and without running
    autoloaded listener plugins.  Returns what composing raised, at its key path."""
    import anyio
    import httpx

    from agentrig.builtins import PlaceholderResolver
    from agentrig.errors import AgentrigError, ConfigError, Issue
    from agentrig.kernel import DISABLE_AUTOLOAD_ENV, open_runtime

    def no_network(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("agentrig config check makes no network calls", request=request)

    environ = {k: v for k, v in os.environ.items() if k.startswith("AGENTRIG_")}
    environ[DISABLE_AUTOLOAD_ENV] = "1"

    async def compose() -> None:
        async with open_runtime(
            loaded,
            resolver=PlaceholderResolver(),
            environ=environ,
            http_transport=httpx.MockTransport(no_network),
        ):
            pass

    try:
        anyio.run(compose)
    except ConfigError as exc:
        return list(exc.issues)
    except AgentrigError as exc:
        return [Issue(exc.code, str(exc))]
    except Exception as exc:  # a plugin's own failure: reported, never a traceback
        return [Issue("config.compose_failed", f"composing raised {type(exc).__name__}: {exc}")]
    return []


def plugin_warnings(loaded: LoadedConfig, index: PluginIndex) -> list[Issue]:
    """Listener plugins that will not run, and conflicts the config leaves unsettled."""
    from agentrig.errors import AgentrigError, Issue

    notes: list[Issue] = []
    for name in index.autoload_names("plugins"):
        try:
            index.load("plugins", name)
        except AgentrigError as exc:
            notes.append(
                Issue("config.plugin_failed", f"listener plugin {name!r} will not run: {exc}")
            )
    for kind, name in sorted(index.merged().conflicts):
        if kind != "plugins" and not index.is_disabled(kind, name):
            notes.append(
                Issue(
                    "config.plugin_conflict",
                    f"{index.conflict_error(kind, name)} (this file does not use it)",
                )
            )
    return notes


def secret_syntax_issues(loaded: LoadedConfig) -> list[Issue]:
    """``$ENV:NAME`` references whose NAME is not a valid variable name (never resolved)."""
    from agentrig.errors import Issue

    issues = []
    for pid, provider in loaded.config.providers.items():
        for key, value in provider.credentials.items():
            if not value.startswith("$ENV:"):
                continue
            name = value[len("$ENV:") :]
            if name and _ENV_NAME.fullmatch(name) is None:
                issues.append(
                    Issue(
                        "config.secret",
                        f"invalid environment variable name {name!r} in $ENV: reference",
                        ("providers", pid, "credentials", key),
                    )
                )
    return issues


def _lines(source: str, issues: Iterable[Issue]) -> list[str]:
    return [f"{source}: {issue}" for issue in issues]
