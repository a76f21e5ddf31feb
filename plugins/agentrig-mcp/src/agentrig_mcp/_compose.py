"""The composition step of agentrig-mcp (see :mod:`agentrig_mcp._plugin` for where it runs).

1. validates ``[mcp_servers.*]`` and ``[mcp]``, reads the project file (``.mcp.json``) when
   present and keeps only the servers whose content ``[mcp] approved_project_servers``
   approves (``name@sha256:<digest>``);
2. provides the runtime's :class:`~agentrig_mcp.McpClient` as the ``mcp`` service and stops
   its servers when the runtime closes;
3. starts each server an agent uses (``tools = ["mcp__github"]`` or ``"mcp__github__<tool>"``)
   or whose ``startup = "open"``, and registers its tools (``mcp__<server>__<tool>``) and its
   toolset (``mcp__<server>``).  A server no agent uses is started on first use of the client.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from agentrig.agent import agent_configs
from agentrig.credentials import (
    CREDENTIAL_STORES,
    STORE_PREFIX,
    CredentialReferenceError,
    CredentialStore,
    CredentialStoreError,
    resolve_store_reference,
)
from agentrig.errors import ConfigError, Issue, did_you_mean
from agentrig.kernel import Runtime
from agentrig.plugin import TRACE_CONTEXT, resolve_secret, trace_env
from agentrig_mcp._answers import session_callbacks
from agentrig_mcp._client import McpClient
from agentrig_mcp._config import (
    HttpServerSpec,
    McpServers,
    McpSettings,
    StdioServerSpec,
    approval_of,
    mcp_json_digests,
    parse_mcp_json,
)
from agentrig_mcp._connection import Resolve
from agentrig_mcp._oauth import OAuthFor
from agentrig_mcp._plugin import provide_client, register_toolset
from agentrig_mcp._transport import HttpClientFactory

__all__ = ["compose_mcp"]

Spec = StdioServerSpec | HttpServerSpec
_PREFIX = "mcp__"


def _project_servers(
    rt: Runtime, settings: McpSettings, configured: dict[str, Spec]
) -> tuple[dict[str, Spec], dict[str, str]]:
    """(approved project servers, unapproved ones with why) from the project file, if any.

    An approval names the entry's content (``name@sha256:<digest>``): an entry changed since
    it was approved is not approved any more.
    """
    path = None if settings.project_file is False else rt.loaded.base_dir / settings.project_file
    present = path is not None and path.is_file()
    found = parse_mcp_json(path, rt.resolver) if path is not None and present else {}
    digests = mcp_json_digests(path) if path is not None and present else {}
    issues: list[Issue] = []
    approvals: dict[str, str] = {}
    for i, entry in enumerate(settings.approved_project_servers):
        where = ("mcp", "approved_project_servers", i)
        approval = approval_of(entry)
        if approval is None:
            now = digests.get(entry)
            hint = f"; its entry now is {entry}@sha256:{now}" if now else ""
            issues.append(
                Issue(
                    "mcp.approval_by_name",
                    f"{entry!r}: a project server is approved by its content, as "
                    f"'<name>@sha256:<digest>' (`agentrig mcp approve` prints it){hint}",
                    where,
                )
            )
            continue
        name, digest = approval
        if name not in found:
            shown = str(path) if path is not None else "no project file"
            issues.append(
                Issue(
                    "mcp.unknown_server",
                    f"approved project server {name!r} is not in {shown} "
                    f"(its servers: {', '.join(sorted(found)) or 'none'})",
                    where,
                )
            )
        approvals[name] = digest
    for name in sorted(set(found) & set(configured)):
        issues.append(
            Issue(
                "mcp.duplicate_server",
                f"server {name!r} is defined both here and in {path}; rename one",
                ("mcp_servers", name),
            )
        )
    if issues:
        raise ConfigError(issues, source=rt.loaded.source)
    approved: dict[str, Spec] = {}
    unapproved: dict[str, str] = {}
    for name, spec in found.items():
        granted = approvals.get(name)
        if granted == digests[name]:
            approved[name] = spec
        elif granted is None:
            unapproved[name] = (
                f"comes from the project file and is not approved; approve its content with "
                f'approved_project_servers = ["{name}@sha256:{digests[name]}"] in [mcp] '
                "(`agentrig mcp approve` prints it)"
            )
        else:
            unapproved[name] = (
                f"comes from the project file and its entry changed since it was approved "
                f"(approved sha256:{granted[:12]}..., now sha256:{digests[name][:12]}...); "
                f"review it, then approve {name}@sha256:{digests[name]}"
            )
    return approved, unapproved


def _user_servers(rt: Runtime, settings: McpSettings) -> dict[str, Spec]:
    """The servers of ``[mcp] user_files`` (the first file naming a server wins)."""
    from agentrig_mcp._user_files import read_user_file

    found: dict[str, Spec] = {}
    for name in settings.user_files:
        path = Path(name).expanduser()
        path = path if path.is_absolute() else rt.loaded.base_dir / path
        for server, spec in read_user_file(path, rt.loaded.base_dir, rt.resolver).items():
            found.setdefault(server, spec)
    return found


def _rooted(spec: Spec, base: Path) -> Spec:
    """A stdio server runs in the config's directory (``cwd`` is relative to it); its roots
    are absolute, the config's directory unless it names others."""
    roots = tuple(
        str((base / r).resolve()) for r in (spec.roots if spec.roots is not None else ".")
    )
    update: dict[str, object] = {"roots": roots}
    if isinstance(spec, StdioServerSpec):
        update["cwd"] = str(base / (spec.cwd or "."))
    return spec.model_copy(update=update)


async def resolve_reference(
    rt: Runtime, ref: str, path: tuple[str | int, ...]
) -> tuple[str | None, Issue | None]:
    """A ``$STORE:`` or ``$ENV:`` reference's value (a plain string as is), or the issue."""
    if ref.startswith(STORE_PREFIX):
        stores: dict[str, CredentialStore] = dict(rt.catalog(CREDENTIAL_STORES).entries())
        try:
            return await resolve_store_reference(ref, stores), None
        except (CredentialReferenceError, CredentialStoreError) as exc:
            return None, Issue("config.credential_reference", str(exc), path)
    return resolve_secret(ref, rt.resolver, path=path)


def _resolver(rt: Runtime) -> Resolve:
    async def resolve(name: str, spec: Spec) -> dict[str, str]:
        stdio = isinstance(spec, StdioServerSpec)
        values = spec.env if isinstance(spec, StdioServerSpec) else spec.headers
        resolved: dict[str, str] = {}
        issues: list[Issue] = []
        for key, ref in values.items():
            path = ("mcp_servers", name, "env" if stdio else "headers", key)
            value, issue = await resolve_reference(rt, ref, path)
            if issue is not None:
                issues.append(issue)
            elif value is not None:
                resolved[key] = value
        if issues:
            raise ConfigError(issues, source=rt.loaded.source)
        trace = rt.services.get(TRACE_CONTEXT)
        if stdio and trace is not None:
            # the context the server starts in (its own env entries win)
            resolved = {**trace_env(trace.headers()), **resolved}
        return resolved

    return resolve


def _trace_headers(rt: Runtime) -> dict[str, str]:
    trace = rt.services.get(TRACE_CONTEXT)
    return trace.headers() if trace is not None else {}


_TRACE_HEADERS = ("traceparent", "tracestate")


async def _trace_of_message(request: httpx.Request) -> None:
    """An MCP request over HTTP names the span of the call it serves: its ``_meta``.

    The SDK sends from its own task, whose context is the connection's, not the caller's.
    """
    for name in _TRACE_HEADERS:
        request.headers.pop(name, None)
    try:
        meta = json.loads(request.content)["params"]["_meta"]
    except Exception:  # not a JSON-RPC request with _meta (a notification, a GET): no context
        return
    for name in _TRACE_HEADERS:
        value = meta.get(name) if isinstance(meta, dict) else None
        if isinstance(value, str):
            request.headers[name] = value


def _oauth(rt: Runtime, settings: McpSettings) -> OAuthFor:
    """Each server's OAuth sign-in, kept in ``[mcp] state_dir`` (relative to the config)."""
    from agentrig_mcp._oauth import oauth_logins

    state_dir = Path(settings.state_dir).expanduser()

    async def secret(server: str, reference: str) -> str:
        path = ("mcp_servers", server, "oauth", "client_secret")
        value, issue = await resolve_reference(rt, reference, path)
        if issue is not None or value is None:
            raise ConfigError([issue] if issue is not None else [], source=rt.loaded.source)
        return value

    return oauth_logins(rt.loaded.base_dir / state_dir, resolve=secret)


def _http_client(rt: Runtime) -> HttpClientFactory:
    def build(spec: HttpServerSpec, headers: dict[str, str]) -> httpx.AsyncClient:
        allow: list[str] = []
        if spec.allow_private_url:
            url = httpx.URL(spec.url)
            port = url.port or (443 if url.scheme == "https" else 80)
            allow.append(f"[{url.host}]:{port}" if ":" in url.host else f"{url.host}:{port}")
        return rt.http(
            allow_private=allow,
            headers=headers,
            timeout=httpx.Timeout(spec.timeout, read=None),
            event_hooks={"request": [_trace_of_message]},
        )

    return build


def _used_servers(rt: Runtime) -> dict[str, tuple[str | int, ...]]:
    """Server name -> where config first uses it (an agent's tool list or ``[tools.*]``)."""
    used: dict[str, tuple[str | int, ...]] = {}
    for aid, agent in agent_configs(rt.loaded).items():
        for i, name in enumerate(agent.tools):
            if name.startswith(_PREFIX):
                used.setdefault(name[len(_PREFIX) :].split("__", 1)[0], ("agents", aid, "tools", i))
    for name in rt.config.tools:
        if name.startswith(_PREFIX):
            used.setdefault(name[len(_PREFIX) :].split("__", 1)[0], ("tools", name))
    return used


async def compose_mcp(
    rt: Runtime, table: McpServers | None, found_settings: McpSettings | None
) -> McpClient | None:
    """The composition step (see the module docstring); returns the client it provided."""
    configured = table.specs() if table is not None else {}
    settings = found_settings or McpSettings()
    project, unapproved = _project_servers(rt, settings, configured)
    users = _user_servers(rt, settings)
    every = {
        name: _rooted(spec, rt.loaded.base_dir)
        for name, spec in {**users, **configured, **project}.items()
    }
    active = {name: spec for name, spec in every.items() if spec.enabled}
    used = _used_servers(rt)
    issues: list[Issue] = []
    for server, path in used.items():
        if server in active:
            continue
        if server in unapproved:
            message = f"MCP server {server!r} {unapproved[server]}"
            issues.append(Issue("mcp.not_approved", message, path))
        elif server in every:
            message = f"MCP server {server!r} is disabled (mcp_servers.{server}.enabled = false)"
            issues.append(Issue("mcp.disabled", message, path))
        else:
            hint = did_you_mean(server, every)
            message = (
                f"no MCP server {server!r}{hint} (servers: {', '.join(sorted(every)) or 'none'})"
            )
            issues.append(Issue("mcp.unknown_server", message, path))
    if issues:
        raise ConfigError(issues, source=rt.loaded.source)
    if not every:
        return None
    resolve = _resolver(rt)
    for name, spec in active.items():
        await resolve(name, spec)  # a reference that cannot resolve fails the composition now
    client = McpClient(
        active,
        spawn=rt.spawn,
        resolve=resolve,
        http_client=_http_client(rt),
        notify=lambda observation: rt.hooks.notify("observe", observation),
        trace=lambda: _trace_headers(rt),
        answers=session_callbacks(rt.hooks),
        oauth=_oauth(rt, settings),
    )
    provide_client(rt, client)
    starting = [name for name, spec in active.items() if name in used or spec.startup == "open"]
    for server in starting:
        register_toolset(rt, f"{_PREFIX}{server}", await client.tools(server))
    return client
