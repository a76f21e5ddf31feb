"""Servers from the files users already have: Claude Code's ``~/.claude.json`` and Codex's
``~/.codex/config.toml``, named in ``[mcp] user_files``.

They are the user's own files, outside any project, so their servers start without
approval.  Each file is read in its tool's shape:

* ``*.json`` (Claude Code): the user-scope ``mcpServers``, then the local-scope
  ``projects["<this config's directory>"].mcpServers`` (which wins); ``${VAR}`` expands
  through the caller's resolver, as in ``.mcp.json``;
* ``*.toml`` (Codex): ``[mcp_servers.<name>]`` with ``command``/``args``/``env``/``cwd`` or
  ``url`` (``bearer_token_env_var`` and ``http_headers`` become headers),
  ``startup_timeout_sec``, ``tool_timeout_sec``, ``enabled``, and the tool filters
  ``enabled_tools`` (an allow list) and ``disabled_tools`` (a deny list applied after it).

These files also configure their own tools, so one entry agentrig cannot use (an SSE
server, a Codex key it does not know) is left out with a warning naming why -- the rest of
the file is read.  A file that is missing is skipped; one that cannot be parsed is an error.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentrig.diagnostics import get_logger
from agentrig.errors import ConfigError, Issue
from agentrig.plugin import SecretResolver
from agentrig_mcp._config import ServerEntry, ServerSpec, expand_vars, named_servers

__all__ = ["read_user_file"]

_CODEX_KEYS = {
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "bearer_token_env_var",
    "http_headers",
    "startup_timeout_sec",
    "tool_timeout_sec",
    "enabled",
    "enabled_tools",
    "disabled_tools",
}


def _expanded(value: Any, resolver: SecretResolver | None, where: str) -> Any:
    if isinstance(value, str):
        text, issues = expand_vars(value, resolver, ())
        if issues:
            raise ValueError(f"{where}: {issues[0].message}")
        return text
    if isinstance(value, list):
        return [_expanded(v, resolver, where) for v in value]
    if isinstance(value, dict):
        return {k: _expanded(v, resolver, f"{where}.{k}") for k, v in value.items()}
    return value


def _codex_entry(raw: dict[str, Any], resolver: SecretResolver | None) -> dict[str, Any]:
    unknown = sorted(set(raw) - _CODEX_KEYS)
    if unknown:
        raise ValueError(f"keys agentrig does not use: {', '.join(unknown)}")
    kept = ("command", "args", "env", "cwd", "url", "enabled", "enabled_tools", "disabled_tools")
    entry: dict[str, Any] = {k: raw[k] for k in kept if k in raw}
    if "startup_timeout_sec" in raw:
        entry["startup_timeout"] = float(raw["startup_timeout_sec"])
    if "tool_timeout_sec" in raw:
        entry["timeout"] = float(raw["tool_timeout_sec"])
    headers = dict(raw.get("http_headers") or {})
    variable = raw.get("bearer_token_env_var")
    if variable is not None:
        token = resolver(str(variable)) if resolver is not None else None
        if not token:
            raise ValueError(f"bearer_token_env_var {variable!r} is not set")
        headers["Authorization"] = f"Bearer {token}"
    if headers:
        entry["headers"] = headers
    return entry


def _servers_of(path: Path, base_dir: Path) -> dict[str, Any]:
    """The file's server tables, by name, in its tool's shape."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        servers = tomllib.loads(text).get("mcp_servers", {})
        return dict(servers) if isinstance(servers, dict) else {}
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    found = dict(data.get("mcpServers") or {})
    projects = data.get("projects")
    local = projects.get(str(base_dir.resolve())) if isinstance(projects, dict) else None
    if isinstance(local, dict):
        found.update(local.get("mcpServers") or {})  # local scope wins, as in Claude Code
    return found


def read_user_file(
    path: Path, base_dir: Path, resolver: SecretResolver | None
) -> dict[str, ServerSpec]:
    """The usable servers of one user file (see the module docs)."""
    log = get_logger("mcp")
    if not path.is_file():
        log.info("%s: no such file; no servers from it", path)
        return {}
    try:
        raw = _servers_of(path, base_dir)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(
            [Issue("mcp.user_file", f"cannot read: {exc}")], source=str(path)
        ) from None
    servers: dict[str, ServerSpec] = {}
    for name, table in named_servers(raw, str(path)).items():
        try:
            if not isinstance(table, dict):
                raise ValueError("not a table")
            entry = _codex_entry(table, resolver) if path.suffix == ".toml" else table
            entry = _expanded(entry, resolver, name)
            servers[name] = ServerEntry.model_validate(entry).spec()
        except (ValueError, ValidationError) as exc:
            reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            log.warning("%s: server %r left out: %s", path, name, reason)
    return servers
