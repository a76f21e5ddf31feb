"""Rule grammar: what each list accepts and what it refuses, with a clear error."""

from __future__ import annotations

from typing import Any

import pytest
from perm_support import TOOLS

from agentrig.errors import AgentrigError
from agentrig.permissions import (
    PermissionRuleError,
    PermissionRules,
    ToolPermissions,
    parse_rule,
    parse_rules,
)

ACCEPTED = [
    ("Bash", "allow", "Bash", None),
    ("Bash(npm run test:*)", "allow", "Bash", "npm run test:*"),
    ("Bash(git push *)", "deny", "Bash", "git push *"),
    ("Read(./src/**)", "allow", "Read", "./src/**"),
    ("Read(//etc/**)", "deny", "Read", "//etc/**"),
    ("Read(~/.ssh/**)", "ask", "Read", "~/.ssh/**"),
    ("WebFetch(domain:example.com)", "allow", "WebFetch", "domain:example.com"),
    ("WebFetch(https://x.com/a(b))", "allow", "WebFetch", "https://x.com/a(b)"),
    ("  Edit  ", "allow", "Edit", None),
    ("mcp__github__*", "allow", "mcp__github__*", None),
    ("mcp__github__get_*", "allow", "mcp__github__get_*", None),
    ("mcp__github__*", "ceiling", "mcp__github__*", None),
    ("*", "deny", "*", None),
    ("Bash*", "ask", "Bash*", None),
    ("mcp__*", "deny", "mcp__*", None),
    ("Ping(*)", "allow", "Ping", "*"),
    ("Ping(**)", "remembered", "Ping", "**"),
    ("mcp__github__create_issue(repo:acme/*)", "deny", "mcp__github__create_issue", "repo:acme/*"),
    ("Bash(git:*)", "allow", "Bash", "git:*"),
    ("my-tool.v2", "allow", "my-tool.v2", None),
]


@pytest.mark.parametrize(("text", "list_name", "tool", "specifier"), ACCEPTED)
def test_accepted(text: str, list_name: str, tool: str, specifier: str | None) -> None:
    rule = parse_rule(text, list_name, tools=TOOLS)  # type: ignore[arg-type]
    assert (rule.tool, rule.specifier, rule.list_name) == (tool, specifier, list_name)


REFUSED = [
    ("", "allow", "empty"),
    ("   ", "deny", "empty"),
    ("Bash()", "deny", "specifier is empty"),
    ("Bash(  )", "ask", "specifier is empty"),
    ("Bash(ls", "deny", "must end with ')'"),
    ("Bash)", "deny", "without a matching"),
    ("(ls)", "deny", "tool name is missing"),
    ("Ba sh", "deny", "may hold only"),
    ("Bash!(x)", "deny", "may hold only"),
    ("*", "allow", "literal server prefix"),
    ("**", "allow", "literal server prefix"),
    ("Bash*", "allow", "literal server prefix"),
    ("mcp__*", "allow", "literal server prefix"),
    ("mcp__git*__x", "allow", "literal server prefix"),
    ("*__github__x", "ceiling", "literal server prefix"),
    ("Bash*", "remembered", "literal server prefix"),
    ("mcp__github__create_issue(repo:acme/*)", "allow", "parameter rules"),
    ("mcp__github__*(title:x)", "allow", "parameter rules"),
    ("Bash(timeout:5)", "ceiling", "parameter rules"),
]


@pytest.mark.parametrize(("text", "list_name", "reason"), REFUSED)
def test_refused(text: str, list_name: str, reason: str) -> None:
    with pytest.raises(PermissionRuleError) as info:
        parse_rule(text, list_name, tools=TOOLS)  # type: ignore[arg-type]
    error = info.value
    assert reason in error.reason
    assert error.list_name == list_name
    assert error.rule == text
    assert repr(text) in str(error)
    assert list_name in str(error)
    assert isinstance(error, AgentrigError)
    assert error.code == "permissions.invalid_rule"
    assert error.category == "user"


def test_parameter_decided_by_declaration_not_shape() -> None:
    tool = ToolPermissions("T", "execute", None, {"repo"})
    assert parse_rule("T(repo:x)", "deny").parameter(tool) == ("repo", "x")
    assert parse_rule("T(git:*)", "deny").parameter(tool) is None
    assert parse_rule("T(https://x)", "deny").parameter(tool) is None


def test_parameter_allow_rule_kept_without_declarations() -> None:
    # without declarations it parses, but can never grant (see the decision table)
    rule = parse_rule("mcp__github__create_issue(repo:me/*)", "allow")
    assert rule.specifier == "repo:me/*"


def test_rules_parse_each_list_with_its_grammar() -> None:
    rules = PermissionRules.parse(allow=["Read"], deny=["*"], ask=["Bash*"])
    assert [r.list_name for r in (*rules.allow, *rules.deny, *rules.ask)] == [
        "allow",
        "deny",
        "ask",
    ]
    with pytest.raises(PermissionRuleError, match="allow list"):
        PermissionRules.parse(allow=["*"])


def test_single_string_is_refused() -> None:
    with pytest.raises(TypeError):
        parse_rules("Bash", "allow")


def test_an_unknown_risk_class_is_refused_when_declared() -> None:
    risk: Any = "network"  # not a risk class: the evaluator would decide it as some other one
    with pytest.raises(AgentrigError) as caught:
        ToolPermissions("WebFetch", risk)
    assert caught.value.code == "permissions.invalid_risk"
    assert "tool 'WebFetch': unknown risk class 'network'" in str(caught.value)
    assert ToolPermissions("Mystery", None).risk is None  # undeclared stays allowed
