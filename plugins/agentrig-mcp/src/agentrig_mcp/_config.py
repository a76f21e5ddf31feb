"""MCP server config: ``[mcp_servers.NAME]`` tables, ``[mcp]`` settings and ``.mcp.json``.

Both shapes validate into the same strict models, so an unknown key or a wrong type is a
:class:`~agentrig.errors.ConfigError` naming its path (``mcp_servers.github.timout``).
``.mcp.json`` (Claude Code's project file) is read verbatim: ``${VAR}`` and
``${VAR:-default}`` expand through the caller's resolver only -- never from the environment
on their own.  Its servers start only when ``[mcp] approved_project_servers`` names them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentrig.errors import ConfigError, Issue
from agentrig.kernel import SecretResolver

__all__ = [
    "HttpServerSpec",
    "McpSettings",
    "ServerSpec",
    "StdioServerSpec",
    "check_servers_section",
    "check_settings_section",
    "expand_vars",
    "parse_mcp_json",
    "parse_settings",
]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class _Common(_Strict):
    #: seconds one MCP request (a tool call, a listing) may take
    timeout: float = Field(default=60.0, gt=0)
    #: seconds the server may take to start and answer ``initialize``
    startup_timeout: float = Field(default=30.0, gt=0)
    enabled: bool = True
    #: ``lazy``: start on the first call or listing; ``open``: while the runtime composes
    startup: Literal["lazy", "open"] = "lazy"
    #: above this many tools, the server's tools are deferred (found through ``tool_search``)
    defer_above: int | None = Field(default=None, ge=0)
    #: take the server's annotations (read-only, destructive) as risk classes
    trust_annotations: bool = False
    #: first restart delay after a crash (doubles per consecutive failure, up to 30 s)
    restart_backoff: float = Field(default=0.5, ge=0)


class StdioServerSpec(_Common):
    """A server run as a subprocess speaking MCP over stdin/stdout."""

    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: Annotated[tuple[str, ...], Field(strict=False)] = ()
    #: ``$ENV:NAME`` values resolve through the caller's resolver
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None


class HttpServerSpec(_Common):
    """A server reached over streamable HTTP."""

    type: Literal["http", "streamable-http"] = "http"
    url: str = Field(pattern=r"^https?://")
    #: values may be ``$ENV:NAME`` or ``$STORE:<store>:<service>/<account>`` references
    headers: dict[str, str] = Field(default_factory=dict)
    #: consent to a loopback / private address: exempts exactly the url's host and port
    allow_private_url: bool = False


ServerSpec = Annotated[StdioServerSpec | HttpServerSpec, Field(discriminator="type")]


class McpSettings(_Strict):
    """``[mcp]``: where project servers come from and which of them are approved."""

    #: Claude Code's project file, relative to the config's directory (read when present);
    #: ``false`` reads none
    project_file: str | Literal[False] = ".mcp.json"
    #: project-file servers allowed to start (nothing from a project file starts otherwise)
    approved_project_servers: Annotated[tuple[str, ...], Field(strict=False)] = ()


def _issues(error: ValidationError, prefix: tuple[str | int, ...]) -> list[Issue]:
    from agentrig.kernel.config import issues_from_validation

    return [Issue(i.code, i.message, (*prefix, *i.path)) for i in issues_from_validation(error)]


def _with_type(raw: object) -> object:
    # Claude Code's shape: ``type`` may be absent (stdio when ``command`` is present)
    if isinstance(raw, Mapping) and "type" not in raw:
        return {"type": "http" if "url" in raw and "command" not in raw else "stdio", **raw}
    return raw


def _server(name: str, raw: object, prefix: tuple[str | int, ...]) -> tuple[Any, list[Issue]]:
    from pydantic import TypeAdapter

    if not _NAME.match(name) or "__" in name:
        return None, [
            Issue(
                "mcp.server_name",
                f"server name {name!r} must be 1-64 of [A-Za-z0-9_-] without '__' "
                f"(it becomes mcp__{name}__<tool>)",
                prefix,
            )
        ]
    if isinstance(raw, Mapping) and raw.get("type") == "sse":
        return None, [
            Issue(
                "mcp.transport",
                "the SSE transport is deprecated by MCP and not supported; use type = 'http' "
                "(streamable HTTP)",
                (*prefix, "type"),
            )
        ]
    try:
        spec: StdioServerSpec | HttpServerSpec = TypeAdapter(ServerSpec).validate_python(
            _with_type(raw)
        )
    except ValidationError as exc:
        issues = _issues(exc, prefix)
        # the discriminator's tag appears in pydantic's path; users never wrote it
        return None, [
            Issue(i.code, i.message, tuple(p for p in i.path if p not in ("stdio", "http")))
            for i in issues
        ]
    return spec, []


def parse_settings(
    servers: Mapping[str, Any] | None, settings: Mapping[str, Any] | None, *, source: str | None
) -> tuple[dict[str, StdioServerSpec | HttpServerSpec], McpSettings]:
    """Validate ``[mcp_servers.*]`` and ``[mcp]`` (raises ``ConfigError`` naming each key)."""
    issues: list[Issue] = []
    specs: dict[str, StdioServerSpec | HttpServerSpec] = {}
    for name, raw in (servers or {}).items():
        spec, found = _server(name, raw, ("mcp_servers", name))
        issues += found
        if spec is not None:
            specs[name] = spec
    try:
        parsed = McpSettings.model_validate(settings or {})
    except ValidationError as exc:
        issues += _issues(exc, ("mcp",))
        parsed = McpSettings()
    if issues:
        raise ConfigError(issues, source=source)
    return specs, parsed


def check_servers_section(raw: object) -> list[Issue]:
    """The ``agentrig.config_sections`` check of ``[mcp_servers]`` (issue paths from the table)."""
    if not isinstance(raw, Mapping):
        return [Issue("config.type", "[mcp_servers] must be a table of servers")]
    try:
        parse_settings(raw, None, source=None)
    except ConfigError as exc:
        return [Issue(i.code, i.message, i.path[1:]) for i in exc.issues]
    return []


def check_settings_section(raw: object) -> list[Issue]:
    """The ``agentrig.config_sections`` check of ``[mcp]`` (issue paths from the table)."""
    if not isinstance(raw, Mapping):
        return [Issue("config.type", "[mcp] must be a table")]
    try:
        parse_settings(None, raw, source=None)
    except ConfigError as exc:
        return [Issue(i.code, i.message, i.path[1:]) for i in exc.issues]
    return []


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_vars(
    value: str, resolver: SecretResolver | None, path: tuple[str | int, ...]
) -> tuple[str, list[Issue]]:
    """Expand ``${VAR}`` / ``${VAR:-default}`` through ``resolver`` (Claude Code's syntax)."""
    issues: list[Issue] = []

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = resolver(name) if resolver is not None else None
        if found is not None:
            return found
        if default is not None:
            return default
        if resolver is None:
            message = (
                f"${{{name}}} needs a resolver; pass resolver=agentrig.env_resolver() "
                "(the CLI does) -- agentrig never reads the environment on its own"
            )
        else:
            message = f"variable {name} is not set and has no default (${{{name}:-default}})"
        issues.append(Issue("mcp.variable_unset", message, path))
        return match.group(0)

    return _VAR.sub(replace, value), issues


def _expand(value: object, resolver: SecretResolver | None, path: tuple[str | int, ...]) -> Any:
    if isinstance(value, str):
        return expand_vars(value, resolver, path)
    if isinstance(value, list):
        out, issues = [], []
        for i, item in enumerate(value):
            item_out, item_issues = _expand(item, resolver, (*path, i))
            out.append(item_out)
            issues += item_issues
        return out, issues
    if isinstance(value, dict):
        mapped, issues = {}, []
        for key, item in value.items():
            item_out, item_issues = _expand(item, resolver, (*path, key))
            mapped[key] = item_out
            issues += item_issues
        return mapped, issues
    return value, []


def parse_mcp_json(
    path: Path, resolver: SecretResolver | None
) -> dict[str, StdioServerSpec | HttpServerSpec]:
    """Read Claude Code's ``.mcp.json`` (``{"mcpServers": {...}}``) verbatim."""
    source = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(
            [Issue("mcp.project_file", f"cannot read: {exc}")], source=source
        ) from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(
            [Issue("mcp.project_file", "expected an object with an 'mcpServers' object")],
            source=source,
        )
    issues: list[Issue] = []
    specs: dict[str, StdioServerSpec | HttpServerSpec] = {}
    for name, raw in servers.items():
        prefix = ("mcpServers", name)
        expanded, found = _expand(raw, resolver, prefix)
        issues += found
        spec, problems = _server(name, expanded, prefix)
        issues += problems
        if spec is not None and not found:
            specs[name] = spec
    if issues:
        raise ConfigError(issues, source=source)
    return specs
