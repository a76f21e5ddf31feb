"""Permission rule strings and their grammar.

A rule is ``Tool`` (every call of the tool) or ``Tool(specifier)``.  What the specifier means
depends on the tool the rule is checked against, so parsing keeps it as text and the matcher
reads it later:

* ``*`` or ``**`` matches every call, even of a tool that declares no permission argument;
* ``name:pattern`` is a parameter rule when ``name`` is one of the tool's declared parameters
  (decided by the declaration, never by the text's shape, so ``git:*`` or ``https://x`` keep
  their meaning for a tool without such a parameter);
* anything else is a pattern over the tool's declared permission argument, read in its kind.

Allow-like lists (``allow``, ``ceiling``, ``remembered``) have a narrower grammar: a
tool-name glob needs a literal server prefix (``mcp__server__*``) and parameter rules are
refused, because either form would grant tools or calls the operator never saw.  When the
tool declarations are not known at parse time, a parameter-shaped allow rule is kept but can
never grant anything (see ``_evaluate``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

import attrs

from agentrig.permissions._glob import GlobSyntaxError, parse_path_pattern
from agentrig.permissions._types import PermissionRuleError, RuleList, ToolPermissions

__all__ = ["PermissionRule", "PermissionRules", "parse_rule", "parse_rules"]

_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-*]+")
_PARAM_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(.*)", re.DOTALL)
# an allow-like glob must start with a literal "<namespace>__<server>__" prefix
_SERVER_PREFIXED_GLOB = re.compile(r"[A-Za-z0-9_.\-]+?__[A-Za-z0-9_.\-]+?__[A-Za-z0-9_.\-*]*")
_MCP_SERVER = re.compile(r"mcp__(?:(?!__)[A-Za-z0-9_.\-])+", re.IGNORECASE)
_GRANTING_LISTS: frozenset[str] = frozenset({"allow", "ceiling", "remembered"})
MATCH_ALL_SPECIFIERS: frozenset[str] = frozenset({"*", "**"})


@attrs.frozen(slots=True)
class PermissionRule:
    """One parsed rule: the tool name (maybe a glob), the raw specifier and where it came from."""

    text: str
    list_name: RuleList
    tool: str
    specifier: str | None = None

    @property
    def is_tool_glob(self) -> bool:
        return "*" in self.tool

    @property
    def matches_every_call(self) -> bool:
        """True for ``Tool`` and ``Tool(*)``: the rule covers the whole tool."""
        return self.specifier is None or self.specifier in MATCH_ALL_SPECIFIERS

    def parameter(self, tool: ToolPermissions) -> tuple[str, str] | None:
        """``(name, pattern)`` when the specifier names one of ``tool``'s declared parameters."""
        if self.specifier is None:
            return None
        found = _PARAM_NAME.fullmatch(self.specifier)
        if found is None or found.group(1) not in tool.parameters:
            return None
        return found.group(1), found.group(2)

    def names_tool(self, tool_id: str, *, loose: bool) -> bool:
        """Whether the rule's tool part covers ``tool_id``.

        ``loose`` compares case-insensitively; restricting rules use it (a wrongly wide
        denial is safe, a wrongly narrow one is not), granting rules never do.
        """
        pattern, name = (
            (self.tool.casefold(), tool_id.casefold()) if loose else (self.tool, tool_id)
        )
        if "*" not in pattern:
            # ``mcp__server`` (a server, no tool part) covers every tool of that server, as
            # in Claude Code; ``mcp__server__tool`` names one tool
            server = _MCP_SERVER.fullmatch(pattern) is not None
            return pattern == name or (server and name.startswith(pattern + "__"))
        regex = ".*".join(re.escape(part) for part in pattern.split("*"))
        return re.fullmatch(regex, name, re.DOTALL) is not None

    def __str__(self) -> str:
        return self.text


def parse_rule(
    text: str,
    list_name: RuleList,
    *,
    tools: Mapping[str, ToolPermissions] | None = None,
) -> PermissionRule:
    """Parse one rule string for the given list, or raise :class:`PermissionRuleError`.

    ``tools`` (tool id → declaration), when given, lets the parser refuse a parameter rule in
    an allow-like list up front instead of ignoring it at evaluation time.
    """
    raw = text
    tool, specifier = _split_rule(raw, list_name)
    rule = PermissionRule(raw, list_name, tool, specifier)
    if specifier is not None and tools is not None:
        _check_path_syntax(rule, tools)
    if list_name in _GRANTING_LISTS:
        _check_granting(rule, tools)
    return rule


def _split_rule(raw: str, list_name: RuleList) -> tuple[str, str | None]:
    """``(tool, specifier)`` of ``Tool`` or ``Tool(specifier)``, checked for syntax."""
    text = raw.strip()
    if not text:
        raise PermissionRuleError(raw, list_name, "the rule is empty")
    specifier: str | None = None
    if "(" in text:
        if not text.endswith(")"):
            raise PermissionRuleError(raw, list_name, "a specifier must end with ')'")
        open_at = text.index("(")
        tool, specifier = text[:open_at], text[open_at + 1 : -1]
        if not specifier.strip():
            raise PermissionRuleError(
                raw,
                list_name,
                "the specifier is empty; write the bare tool name to match every call",
            )
    else:
        if text.endswith(")"):
            raise PermissionRuleError(raw, list_name, "')' without a matching '('")
        tool = text
    if not tool:
        raise PermissionRuleError(raw, list_name, "the tool name is missing")
    if _TOOL_NAME.fullmatch(tool) is None:
        raise PermissionRuleError(
            raw,
            list_name,
            f"tool name {tool!r} may hold only letters, digits, '_', '-', '.' and '*'",
        )
    return tool, specifier


def _check_granting(rule: PermissionRule, tools: Mapping[str, ToolPermissions] | None) -> None:
    """Refuse what an allow-like list must not say: an unprefixed glob, a parameter rule."""
    raw, list_name, tool = rule.text, rule.list_name, rule.tool
    if "*" in tool and _SERVER_PREFIXED_GLOB.fullmatch(tool) is None:
        raise PermissionRuleError(
            raw,
            list_name,
            "a tool-name glob in an allow-like list needs a literal server prefix "
            "(for example 'mcp__server__*'); it would grant tools nobody reviewed",
        )
    if rule.specifier is None or tools is None:
        return
    for tool_id, declared in tools.items():
        if tool == tool_id or ("*" in tool and _glob_hit(tool, tool_id)):
            found = rule.parameter(declared)
            if found is not None:
                raise PermissionRuleError(
                    raw,
                    list_name,
                    f"parameter rules ({found[0]}:...) are not allowed here; they would "
                    "grant calls by one parameter while the others go unchecked",
                )


def _check_path_syntax(rule: PermissionRule, tools: Mapping[str, ToolPermissions]) -> None:
    """Refuse a path pattern the glob syntax does not read, for every path tool it names."""
    assert rule.specifier is not None
    if rule.matches_every_call:
        return
    for tool_id, declared in tools.items():
        arg = declared.arg
        if arg is None or arg.kind != "path" or not rule.names_tool(tool_id, loose=True):
            continue
        if rule.parameter(declared) is not None:
            continue
        try:
            parse_path_pattern(rule.specifier)
        except GlobSyntaxError as exc:
            raise PermissionRuleError(
                rule.text, rule.list_name, f"path pattern {rule.specifier!r}: {exc}"
            ) from None
        return


def _misread_absolute(rule: PermissionRule, settings_dir: str) -> str | None:
    """The absolute path a ``/name/...`` rule's author probably meant, when ``/name`` exists
    at the filesystem root and not under ``settings_dir`` (see :meth:`check_anchors`)."""
    spec = rule.specifier or ""
    if not spec.startswith("/") or spec.startswith("//"):
        return None
    try:
        first = parse_path_pattern(spec).segments[:1]
    except GlobSyntaxError:
        return None
    if not first or first[0].kind != "literal" or not first[0].text:
        return None
    name = first[0].text
    if os.path.lexists(os.path.join("/", name)) and not os.path.lexists(
        os.path.join(settings_dir, name)
    ):
        return name
    return None


def _glob_hit(pattern: str, name: str) -> bool:
    regex = ".*".join(re.escape(part) for part in pattern.split("*"))
    return re.fullmatch(regex, name) is not None


def parse_rules(
    texts: Iterable[str],
    list_name: RuleList,
    *,
    tools: Mapping[str, ToolPermissions] | None = None,
) -> tuple[PermissionRule, ...]:
    """Parse every rule of one list; the first bad rule raises."""
    if isinstance(texts, str):
        raise TypeError("pass a list of rule strings, not a single string")
    return tuple(parse_rule(text, list_name, tools=tools) for text in texts)


@attrs.frozen(slots=True)
class PermissionRules:
    """The operator's three rule lists."""

    allow: tuple[PermissionRule, ...] = ()
    deny: tuple[PermissionRule, ...] = ()
    ask: tuple[PermissionRule, ...] = ()

    @classmethod
    def parse(
        cls,
        *,
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
        ask: Iterable[str] = (),
        tools: Mapping[str, ToolPermissions] | None = None,
    ) -> PermissionRules:
        """Parse the three lists (each with its own grammar) into a rule set."""
        return cls(
            allow=parse_rules(allow, "allow", tools=tools),
            deny=parse_rules(deny, "deny", tools=tools),
            ask=parse_rules(ask, "ask", tools=tools),
        )

    def check_anchors(self, settings_dir: str, tools: Mapping[str, ToolPermissions]) -> None:
        """Refuse a deny or ask path rule ``/name/...`` that reads as absolute but is not.

        Claude Code's grammar anchors ``/x`` at the settings source, so ``Read(/etc/**)``
        in a config file at ``/srv/app`` means ``/srv/app/etc/**``.  When ``/etc`` exists and
        ``/srv/app/etc`` does not, the author almost certainly meant the absolute path, and
        the rule would silently protect nothing: it is refused, naming both spellings.
        """
        for rule in (*self.deny, *self.ask):
            if rule.matches_every_call or not any(
                t.arg is not None and t.arg.kind == "path" and rule.names_tool(tid, loose=True)
                for tid, t in tools.items()
            ):
                continue
            name = _misread_absolute(rule, settings_dir)
            if name is not None:
                spec = rule.specifier or ""
                raise PermissionRuleError(
                    rule.text,
                    rule.list_name,
                    f"'/{name}' is relative to the config file's directory {settings_dir!r} "
                    f"(Claude Code's grammar), where nothing named {name!r} exists; write "
                    f"'/{spec}' for the absolute path, or '.{spec}' for the workspace",
                )
