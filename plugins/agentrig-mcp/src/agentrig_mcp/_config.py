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
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    ValidationError,
    model_validator,
)

from agentrig.errors import ConfigError, Issue
from agentrig.plugin import SecretResolver

__all__ = [
    "HttpServerSpec",
    "OAuthSettings",
    "McpSettings",
    "ServerSpec",
    "McpServers",
    "ServeClient",
    "ServerEntry",
    "StdioServerSpec",
    "approval_of",
    "expand_vars",
    "mcp_json_digests",
    "parse_mcp_json",
    "named_servers",
    "read_project_servers",
    "parse_settings",
]

_M = TypeVar("_M", bound=BaseModel)
#: 48 at most: mcp__<server>__<tool> must leave room for a tool part in 64 characters
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,48}$")


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
    #: tools (the server's names) that stay resident when the others are deferred
    resident_tools: Annotated[tuple[str, ...], Field(strict=False)] = ()
    #: only these of the server's tools (its names) are used; unset: all (Codex's allow list)
    enabled_tools: Annotated[tuple[str, ...] | None, Field(strict=False)] = None
    #: these of the server's tools are never used, applied after ``enabled_tools``
    disabled_tools: Annotated[tuple[str, ...], Field(strict=False)] = ()
    #: resource URIs to subscribe to once the server starts (``resources/subscribe``); a
    #: server that did not advertise subscriptions is told nothing (a warning says so)
    subscribe: Annotated[tuple[str, ...], Field(strict=False)] = ()
    #: take the server's annotations (read-only, destructive) as risk classes
    trust_annotations: bool = False
    #: show the server's descriptions, results and resources to the model without the label
    #: that marks them as untrusted data (opt in for a server you control)
    trust_content: bool = False
    #: progress notifications extend ``timeout``, up to this many seconds for one call
    max_call_time: float = Field(default=3600.0, gt=0)
    #: directories the server may work in, told to it as MCP roots (relative to the config's
    #: directory); unset: the config's directory; ``[]``: no roots are offered
    roots: Annotated[tuple[str, ...] | None, Field(strict=False)] = None
    #: one message longer than this (a stdio line; an HTTP response body or stream event)
    #: ends the connection with an error naming the limit
    max_message_bytes: int = Field(default=32 * 1024 * 1024, ge=1024)
    #: first restart delay after a crash (doubles per consecutive failure, up to 30 s)
    restart_backoff: float = Field(default=0.5, ge=0)
    #: may the server ask the agent's model (MCP sampling)?  ``off``: not offered; ``ask``:
    #: the approver answers each request; ``allow``.  Always under the agent's provider,
    #: limits and budget, and only while one of its tool calls runs
    sampling: Literal["off", "ask", "allow"] = "off"
    #: the most output tokens one sampling request gets (the agent's own limit still caps it)
    sampling_max_tokens: int = Field(default=4096, gt=0)
    #: may the server ask the person for input (MCP elicitation)?  The approver answers (the
    #: CLI prompt); where nobody can, the request is declined
    elicitation: bool = True
    #: a tool description longer than this is cut (with a note saying so)
    max_description_chars: int = Field(default=2048, ge=64)
    #: an input schema whose JSON is longer than this is replaced by ``{"type": "object"}``
    #: (the server still validates the arguments; the description notes it)
    max_schema_chars: int = Field(default=65_536, ge=256)


class StdioServerSpec(_Common):
    """A server run as a subprocess speaking MCP over stdin/stdout."""

    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: Annotated[tuple[str, ...], Field(strict=False)] = ()
    #: ``$ENV:NAME`` values resolve through the caller's resolver
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None


class OAuthSettings(_Strict):
    """``[mcp_servers.NAME.oauth]``: sign in to an HTTP server with OAuth 2.1 (the MCP
    authorization flow: discovery, registration, authorization code with PKCE, refresh)."""

    #: a client registered with the authorization server beforehand; unset: the client
    #: registers itself (dynamic client registration) and keeps what it was given.
    #: ``clientId`` (Claude Code's spelling in ``.mcp.json``) is the same key
    client_id: str | None = Field(
        default=None, min_length=1, validation_alias=AliasChoices("client_id", "clientId")
    )
    #: the registered client's secret, a secret reference (``$ENV:``/``$STORE:``); needs
    #: ``client_id``
    client_secret: str | None = None
    #: the loopback port the authorization server redirects the browser to
    #: (``http://127.0.0.1:<port>/callback``); 0: one is chosen at the first sign-in and kept.
    #: ``callbackPort`` (Claude Code's spelling) is the same key
    callback_port: int = Field(
        default=0, ge=0, le=65535, validation_alias=AliasChoices("callback_port", "callbackPort")
    )
    #: open the sign-in page in the browser (the address is printed either way)
    open_browser: bool = True
    #: seconds to wait for the browser to come back to the loopback address
    login_timeout: float = Field(default=300.0, gt=0)

    @model_validator(mode="after")
    def _secret(self) -> OAuthSettings:
        if self.client_secret is not None:
            if self.client_id is None:
                raise ValueError("client_secret needs client_id (the client it belongs to)")
            if not self.client_secret.startswith(("$ENV:", "$STORE:")):  # never echoed
                raise ValueError(
                    "client_secret must be a secret reference ($ENV:NAME or "
                    "$STORE:<store>:<service>/<account>), never a literal in the config file"
                )
        return self


class HttpServerSpec(_Common):
    """A server reached over streamable HTTP."""

    #: ``sse``: the legacy HTTP+SSE transport (an event stream at ``url``, messages POSTed to
    #: the endpoint it names); otherwise streamable HTTP
    type: Literal["http", "streamable-http", "sse"] = "http"
    url: str = Field(pattern=r"^https?://")
    #: values may be ``$ENV:NAME`` or ``$STORE:<store>:<service>/<account>`` references
    headers: dict[str, str] = Field(default_factory=dict)
    #: consent to a loopback / private address: exempts exactly the url's host and port
    allow_private_url: bool = False
    #: sign in with OAuth (``oauth = {}`` for the defaults); unset: no OAuth
    oauth: OAuthSettings | None = None


ServerSpec = StdioServerSpec | HttpServerSpec

_STDIO_ONLY = ("command", "args", "env", "cwd")
_HTTP_ONLY = ("url", "headers", "allow_private_url", "oauth")


def _server_name(name: str) -> str:
    if not _NAME.match(name) or "__" in name:
        raise ValueError(
            f"server name {name!r} must be 1-48 of [A-Za-z0-9_-] without '__' "
            f"(it becomes mcp__{name}__<tool>)"
        )
    return name


ServerName = Annotated[str, AfterValidator(_server_name)]


class ServerEntry(_Common):
    """One server as written (``[mcp_servers.NAME]`` or an ``.mcp.json`` entry): a stdio
    server has ``command``, an HTTP server ``url``; ``type`` may say which (Claude Code)."""

    type: Literal["stdio", "http", "streamable-http", "sse"] | None = None
    command: str | None = Field(default=None, min_length=1)
    args: Annotated[tuple[str, ...], Field(strict=False)] = ()
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = Field(default=None, pattern=r"^https?://")
    headers: dict[str, str] = Field(default_factory=dict)
    allow_private_url: bool = False
    oauth: OAuthSettings | None = None

    @model_validator(mode="after")
    def _one_transport(self) -> ServerEntry:
        http = self.type in ("http", "streamable-http", "sse") or (self.type is None and self.url)
        if http:
            wrong = [k for k in _STDIO_ONLY if k in self.model_fields_set]
            if self.url is None:
                raise ValueError("an HTTP server needs 'url'")
        else:
            wrong = [k for k in _HTTP_ONLY if k in self.model_fields_set]
            if self.command is None:
                raise ValueError("a server needs 'command' (stdio) or 'url' (HTTP)")
        if wrong:
            kind = "an HTTP" if http else "a stdio"
            raise ValueError(f"{', '.join(wrong)} cannot be set on {kind} server")
        if self.resident_tools and self.defer_above is None:
            # below no threshold the agent's own deferral decides, and it never reads them
            raise ValueError(
                "resident_tools needs defer_above: they stay resident only when the server's "
                "other tools are deferred above that many tools"
            )
        return self

    def spec(self) -> StdioServerSpec | HttpServerSpec:
        """The typed form the client uses."""
        common = {name: getattr(self, name) for name in _Common.model_fields}
        if self.command is not None and self.url is None:
            return StdioServerSpec(
                command=self.command,
                args=self.args,
                env=self.env,
                cwd=self.cwd,
                **common,
            )
        assert self.url is not None
        return HttpServerSpec(
            type="sse" if self.type == "sse" else "http",
            url=self.url,
            headers=self.headers,
            allow_private_url=self.allow_private_url,
            oauth=self.oauth,
            **common,
        )


class McpServers(RootModel[dict[ServerName, ServerEntry]]):
    """``[mcp_servers]``: the servers by name (the table's model, for the kernel's config
    sections)."""

    def specs(self) -> dict[str, StdioServerSpec | HttpServerSpec]:
        return {name: entry.spec() for name, entry in self.root.items()}


class ServeClient(_Strict):
    """``[[mcp.serve.clients]]``: one caller's bearer key and the tools it is granted."""

    #: a secret reference to the key the caller sends as ``Authorization: Bearer <key>``
    key: str
    #: tool names (``fnmatch`` patterns: ``ask_*``) the caller may list and call; empty: all
    tools: Annotated[tuple[str, ...], Field(strict=False)] = ()


class ServeSettings(_Strict):
    """``[mcp.serve]``: who may call ``agentrig mcp serve --http``, and under which names."""

    #: bearer keys as secret references (``$ENV:NAME``, ``$STORE:<store>:<service>/<account>``);
    #: without any, only a loopback address may be served
    api_keys: Annotated[tuple[str, ...], Field(strict=False)] = ()
    #: host names, besides the listening address (and loopback names on loopback), that a
    #: request's ``Host`` may name
    allowed_hosts: Annotated[tuple[str, ...], Field(strict=False)] = ()
    #: browser origins (``scheme://host[:port]``) allowed besides the server's own
    allowed_origins: Annotated[tuple[str, ...], Field(strict=False)] = ()
    #: callers with a grant of their own (HTTP only: a grant needs an authenticated caller)
    clients: Annotated[tuple[ServeClient, ...], Field(strict=False)] = ()

    @model_validator(mode="after")
    def _checked(self) -> ServeSettings:
        for index, client in enumerate(self.clients):
            if not client.key.startswith(("$ENV:", "$STORE:")):  # never echoed
                raise ValueError(
                    f"clients[{index}].key must be a secret reference ($ENV:NAME or "
                    "$STORE:<store>:<service>/<account>), never a literal in the config file"
                )
        for index, key in enumerate(self.api_keys):
            if not key.startswith(("$ENV:", "$STORE:")):  # never echoed: it may be a real key
                raise ValueError(
                    f"api_keys[{index}] must be a secret reference ($ENV:NAME or "
                    "$STORE:<store>:<service>/<account>), never a literal in the config file"
                )
        for name in self.allowed_hosts:
            if not name or any(c in name for c in "/:@ *[]"):
                raise ValueError(f"allowed_hosts: {name!r} is not a host name (no scheme or port)")
        for origin in self.allowed_origins:
            if not re.fullmatch(r"https?://[^/\s@]+", origin):
                raise ValueError(f"allowed_origins: {origin!r} is not scheme://host[:port]")
        return self


class McpSettings(_Strict):
    """``[mcp]``: where project servers come from and which of them are approved."""

    #: Claude Code's project file, relative to the config's directory (read when present);
    #: ``false`` reads none
    project_file: str | Literal[False] = ".mcp.json"
    #: project-file servers allowed to start, by content: ``"<name>@sha256:<digest>"`` (the
    #: entry's digest, which ``agentrig mcp approve`` prints); a changed entry is not approved
    approved_project_servers: Annotated[tuple[str, ...], Field(strict=False)] = ()
    #: the user's own files to take servers from (``~/.claude.json``, ``~/.codex/config.toml``;
    #: ``~`` is the home directory, a relative path the config's directory); no approval
    #: needed, and servers of this config or the project file win over theirs
    user_files: Annotated[tuple[str, ...], Field(strict=False)] = ()
    #: ``agentrig mcp serve --http``: keys and the names it answers to
    serve: ServeSettings = ServeSettings()
    #: where the client keeps its own state, owner-only (OAuth registrations and tokens
    #: under ``oauth/``), relative to the config's directory
    state_dir: str = Field(default=".agentrig/mcp", min_length=1)


def _issues(
    error: ValidationError, model: type[BaseModel], prefix: tuple[str | int, ...]
) -> list[Issue]:
    from agentrig.plugin import issues_from_validation

    return [
        Issue(i.code, i.message, (*prefix, *(p for p in i.path if p != "[key]")))
        for i in issues_from_validation(error, model)
    ]


def _validated(
    model: type[_M], raw: object, prefix: tuple[str | int, ...]
) -> tuple[_M | None, list[Issue]]:
    try:
        return model.model_validate(raw), []
    except ValidationError as exc:
        return None, _issues(exc, model, prefix)


def parse_settings(
    servers: object, settings: object, *, source: str | None
) -> tuple[dict[str, StdioServerSpec | HttpServerSpec], McpSettings]:
    """Validate ``[mcp_servers]`` and ``[mcp]`` as written (``ConfigError`` naming each key)."""
    table, issues = _validated(McpServers, servers or {}, ("mcp_servers",))
    parsed, more = _validated(McpSettings, settings or {}, ("mcp",))
    issues += more
    if issues or table is None or parsed is None:
        raise ConfigError(issues, source=source)
    return table.specs(), parsed


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


_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")


def named_servers(servers: dict[str, Any], source: str) -> dict[str, Any]:
    """Claude Code accepts any server name; agentrig's must make tool ids (``mcp__<name>__``):
    other characters become ``_`` (``my.server`` is ``my_server``).  A name that cannot be
    made valid, or that then collides, is left out with a warning -- not the whole file."""
    from agentrig.diagnostics import get_logger

    log = get_logger("mcp")
    named: dict[str, Any] = {}
    for name in sorted(servers, key=lambda n: (not _NAME.match(n) or "__" in n, n)):
        usable = bool(_NAME.match(name)) and "__" not in name
        valid = name if usable else re.sub("_{2,}", "_", _NAME_CHARS.sub("_", name)).strip("_")
        if not usable:
            if not _NAME.match(valid) or valid in named:
                why = "it collides with another server" if valid in named else "too long or empty"
                log.warning(
                    "%s: server %r left out: its name cannot be used (%s)", source, name, why
                )
                continue
            log.info(
                "%s: server %r is known as %r (tool ids mcp__%s__<tool>)",
                source,
                name,
                valid,
                valid,
            )
        named[valid] = servers[name]
    return named


_APPROVAL = re.compile(r"^(?P<name>[A-Za-z0-9_-]{1,48})@sha256:(?P<digest>[0-9a-f]{64})$")


def approval_of(entry: str) -> tuple[str, str] | None:
    """``(name, digest)`` of an ``approved_project_servers`` entry; None when malformed."""
    found = _APPROVAL.match(entry)
    return (found["name"], found["digest"]) if found else None


def read_project_servers(path: Path) -> dict[str, Any]:
    """The raw entries of a ``.mcp.json`` by (usable) server name, variables unexpanded."""
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
    return named_servers(servers, source)


def mcp_json_digests(path: Path) -> dict[str, str]:
    """Each server of a ``.mcp.json`` with the SHA-256 of its entry as written (canonical
    JSON, variables unexpanded): what an approval names, so any change asks again."""
    import hashlib

    return {
        name: hashlib.sha256(
            json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        ).hexdigest()
        for name, entry in read_project_servers(path).items()
    }


def parse_mcp_json(
    path: Path, resolver: SecretResolver | None
) -> dict[str, StdioServerSpec | HttpServerSpec]:
    """Read Claude Code's ``.mcp.json`` (``{"mcpServers": {...}}``) verbatim."""
    source = str(path)
    servers = read_project_servers(path)
    expanded, issues = _expand(servers, resolver, ("mcpServers",))
    table, problems = _validated(McpServers, expanded, ("mcpServers",))
    issues += problems
    if issues or table is None:
        raise ConfigError(issues, source=source)
    return table.specs()
