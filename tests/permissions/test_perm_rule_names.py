"""A tool's ``rule_names``: rules naming another tool apply to it (Claude Code's families)."""

from __future__ import annotations

from agentrig.permissions import (
    PermissionArg,
    PermissionCall,
    PermissionContext,
    PermissionRules,
    ToolPermissions,
    evaluate_permission,
)

SEARCH = ToolPermissions("Search", "inspect", PermissionArg("path", "path"), {"path"}, {"Read"})
WRITE = ToolPermissions(
    "Write", "modify", PermissionArg("file_path", "path"), {"file_path"}, {"Edit"}
)
LOOKUP = ToolPermissions("lookup", "inspect", PermissionArg("path", "path"), {"path"})


def _context(*, allow: tuple[str, ...] = (), deny: tuple[str, ...] = ()) -> PermissionContext:
    rules = PermissionRules.parse(allow=allow, deny=deny)
    return PermissionContext(workspace_root="/ws", rules=rules, resolve_path=lambda p: p)


def test_a_read_deny_rule_reaches_a_tool_of_the_read_family() -> None:
    ctx = _context(deny=("Read(./.env)",))
    assert evaluate_permission(PermissionCall(SEARCH, {"path": ".env"}), ctx).verdict == "deny"
    assert evaluate_permission(PermissionCall(SEARCH, {"path": "src"}), ctx).verdict == "allow"
    # a tool that did not declare the family is not reached
    assert evaluate_permission(PermissionCall(LOOKUP, {"path": ".env"}), ctx).verdict == "allow"


def test_an_edit_allow_rule_grants_a_tool_of_the_edit_family() -> None:
    ctx = _context(allow=("Edit(src/**)",))
    inside = evaluate_permission(PermissionCall(WRITE, {"file_path": "src/a.py"}), ctx)
    assert (inside.verdict, inside.reason) == ("allow", "allow-rule")
    outside = evaluate_permission(PermissionCall(WRITE, {"file_path": "a.py"}), ctx)
    assert outside.verdict == "ask"


def test_the_tools_own_rules_still_apply() -> None:
    ctx = _context(deny=("Search(secrets/**)",))
    assert evaluate_permission(PermissionCall(SEARCH, {"path": "secrets/k"}), ctx).verdict == "deny"
