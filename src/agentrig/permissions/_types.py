"""The values the permission evaluator reads and returns.

They live apart from the evaluator so the rule parser, the matchers, the approval step and
the action blockers can share them without importing each other.  Every value is frozen:
a decision is a fact about one call in one context, and nothing downstream may edit it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, cast

import attrs

from agentrig._seams import core_seam
from agentrig.errors import AgentrigError, Category
from agentrig.ids import CallId
from agentrig.tools import ToolPermissions

if TYPE_CHECKING:
    from agentrig.permissions._rules import PermissionRule, PermissionRules

__all__ = [
    "ArgKind",
    "default_resolver",
    "Mode",
    "MatchOutcome",
    "PermissionCall",
    "PermissionContext",
    "GlobExpander",
    "PathResolver",
    "PermissionDecision",
    "PermissionRuleError",
    "ReasonCode",
    "RuleList",
    "ToolPermissions",
    "Verdict",
]

ArgKind = Literal["path", "url", "command", "text"]
Mode = Literal["default", "plan", "accept-edits", "bypass"]
Verdict = Literal["allow", "deny", "ask"]
RuleList = Literal["allow", "deny", "ask", "ceiling", "remembered"]
MatchOutcome = Literal["match", "no-match", "unevaluable"]
"""A pattern either matched, did not match, or could not be judged in its kind.

``unevaluable`` is kept apart from ``no-match`` on purpose: a deny rule that cannot be
judged must stop the call for a person, while a plain non-match lets it through.
"""

PathResolver = Callable[[str], "str | None"]
"""The evaluator's one port to the filesystem: a path's canonical form, or ``None``.

Given a path (absolute, or relative to the current directory) it answers the absolute path
with every existing symlink resolved, or ``None`` when that cannot be told (a NUL byte, a
symlink loop, an unreadable component).  The evaluator reads paths only through it, so its
decisions are a pure function of the call, the context and the port's answers; ``None``
makes a path unevaluable (a deny or ask rule then asks, an allow rule does not grant).  The
default is the host's ``resolve_path``, bound (through the core distribution's
``agentrig.seams`` entry point ``path_resolver``) when the context is built.
"""

GlobExpander = Callable[[str], "Sequence[str] | None"]
"""The evaluator's port for shell globs: the paths an absolute glob expands to, as written.

It answers every existing path the pattern matches (symlinks not resolved: the evaluator
resolves each through the :data:`PathResolver`), an empty list when nothing matches, or
``None`` when that cannot be told -- which makes a read-only command that uses the glob
ask.  The default is the host's ``expand_glob`` (the seam ``glob_expander``), bound when
the context is built.
"""

ReasonCode = Literal[
    # denials
    "outside-ceiling",
    "deny-rule",
    "plan-mode",
    "plan-undeclared-risk",
    # always-ask cases
    "unevaluable-rule",
    "ask-rule",
    "catastrophic-removal",
    "trust-widening-write",
    "hook-ask",
    # asks left by the mode
    "mode-requires-approval",
    "undeclared-risk",
    # approvals
    "mode-allows",
    "read-only-command",
    "bypass",
    "allow-rule",
    "remembered-consent",
]


class PermissionRuleError(AgentrigError, ValueError):
    """A permission rule string is malformed or not allowed in the list it was given for.

    ``rule`` is the text as written, ``list_name`` the list it came from (``allow``,
    ``deny``, ``ask``, ``ceiling`` or ``remembered``) and ``reason`` what is wrong with it.
    """

    code = "permissions.invalid_rule"
    category: Category = "user"

    def __init__(self, rule: str, list_name: str, reason: str) -> None:
        super().__init__(f"permission rule {rule!r} in the {list_name} list: {reason}")
        self.rule = rule
        self.list_name = list_name
        self.reason = reason


@attrs.frozen(slots=True, eq=False)
class PermissionCall:
    """One invocation to decide: the tool's declaration, its arguments and its call id."""

    tool: ToolPermissions
    arguments: Mapping[str, object] = attrs.field(factory=dict)
    call_id: CallId | None = attrs.field(default=None, kw_only=True)
    """The id of the tool call this is (the provider's); an approver's answer must name it."""

    @property
    def tool_id(self) -> str:
        return self.tool.tool_id


def _default_home() -> str:
    return os.path.expanduser("~")


def default_resolver() -> PathResolver:
    # the edge: the host's canonicalisation, bound by the core distribution (agentrig._seams)
    return cast("PathResolver", core_seam("path_resolver"))


def _default_expander() -> GlobExpander:
    return cast("GlobExpander", core_seam("glob_expander"))


@attrs.frozen(slots=True)
class PermissionContext:
    """Everything a caller contributes to a decision; the order itself is not configurable.

    ``ceiling`` is an allow-set the caller imposes (a background task, a subagent): a call no
    ceiling rule grants is denied outright.  ``None`` means no ceiling.  ``remembered`` holds
    the allow rules a person granted earlier ("allow and remember").  ``trust_paths`` lists
    the path patterns a write into which always asks (see ``DEFAULT_TRUST_WIDENING_PATHS``).
    ``home`` is taken from the environment when the context is built, never while
    evaluating.  ``resolve_path`` is the port every path is canonicalised through (see
    :data:`PathResolver`); the evaluator itself touches no filesystem.
    """

    workspace_root: str
    rules: PermissionRules
    mode: Mode = "default"
    ceiling: tuple[PermissionRule, ...] | None = None
    remembered: tuple[PermissionRule, ...] = ()
    home: str = attrs.field(factory=_default_home)
    trust_paths: tuple[str, ...] | None = None
    #: more workspace roots (Claude Code's ``additionalDirectories``): a read-only command
    #: inside any root is ``inspect``, and removing any root is catastrophic
    additional_roots: tuple[str, ...] = ()
    #: the directory a ``/path`` rule is relative to (Claude Code: the settings source); the
    #: runtime passes its config file's directory.  ``None`` means the workspace root.
    rules_root: str | None = None
    resolve_path: PathResolver = attrs.field(factory=default_resolver, kw_only=True)
    #: the port a read-only command's globs are expanded through (see :data:`GlobExpander`)
    expand_glob: GlobExpander = attrs.field(factory=_default_expander, kw_only=True)


@attrs.frozen(slots=True)
class PermissionDecision:
    """The evaluator's answer: ``allow``, ``deny`` or ``ask``, why, and which rule decided.

    ``always_ask`` marks the cases that reach a person every time (an unevaluable rule, an
    ask rule, a catastrophic removal, a trust-widening write): remembered consent must not be
    recorded for them.
    """

    verdict: Verdict
    reason: ReasonCode
    call: PermissionCall
    rule: PermissionRule | None = None
    message: str = ""
    always_ask: bool = False

    @property
    def allowed(self) -> bool:
        return self.verdict == "allow"
