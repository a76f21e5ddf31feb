"""Shared tool declarations and context builders for the permission tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from agentrig.permissions import (
    Mode,
    PermissionArg,
    PermissionCall,
    PermissionContext,
    PermissionDecision,
    PermissionRules,
    ToolPermissions,
    evaluate_permission,
    parse_rules,
)

BASH = ToolPermissions(
    "Bash", "execute", PermissionArg("command", "command"), {"command", "timeout", "description"}
)
READ = ToolPermissions("Read", "inspect", PermissionArg("path", "path"), {"path", "limit"})
EDIT = ToolPermissions("Edit", "modify", PermissionArg("path", "path"), {"path", "content"})
WRITE = ToolPermissions("Write", "modify", PermissionArg("path", "path"), {"path", "content"})
FETCH = ToolPermissions("WebFetch", "execute", PermissionArg("url", "url"), {"url", "prompt"})
SEARCH = ToolPermissions("Search", "inspect", PermissionArg("query", "text"), {"query"})
PING = ToolPermissions("Ping", "execute", None, {"host"})
MYSTERY = ToolPermissions("Mystery", None, PermissionArg("path", "path"), {"path"})
ISSUE = ToolPermissions(
    "mcp__github__create_issue", "modify", None, {"repo", "title", "body", "labels"}
)
TOOLS = {t.tool_id: t for t in (BASH, READ, EDIT, WRITE, FETCH, SEARCH, PING, MYSTERY, ISSUE)}


def workspace(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace root and a home directory, both under ``tmp_path``."""
    root = tmp_path / "ws"
    home = tmp_path / "home"
    (root / "src").mkdir(parents=True, exist_ok=True)
    home.mkdir(exist_ok=True)
    return root, home


def context(
    tmp_path: Path,
    *,
    mode: Mode = "default",
    allow: Iterable[str] = (),
    deny: Iterable[str] = (),
    ask: Iterable[str] = (),
    ceiling: Iterable[str] | None = None,
    remembered: Iterable[str] = (),
) -> PermissionContext:
    root, home = workspace(tmp_path)
    return PermissionContext(
        workspace_root=str(root),
        rules=PermissionRules.parse(allow=allow, deny=deny, ask=ask),
        mode=mode,
        ceiling=None if ceiling is None else parse_rules(ceiling, "ceiling"),
        remembered=parse_rules(remembered, "remembered"),
        home=str(home),
    )


def decide(
    tmp_path: Path, tool: ToolPermissions, arguments: Mapping[str, object], **kwargs: object
) -> PermissionDecision:
    ctx = context(tmp_path, **kwargs)  # type: ignore[arg-type]
    return evaluate_permission(PermissionCall(tool, dict(arguments)), ctx)
