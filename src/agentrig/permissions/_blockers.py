"""Action blockers: a deny-only gate that runs after the permission decision.

A permission decision can be answered by a person or a mode; a blocker cannot.  It looks at
the effective call (after any pre-call transform) and either lets it pass or stops it
before input guardrails, validation, approval or the tool itself, so a blocked action has
no side effect.  Blockers run in configuration order; the first that objects wins.

:class:`RuleBasedActionBlocker` matches command prefixes token by token at shell-segment
boundaries, in the usual command arguments (``command``, ``cmd``, ``script``, ``shell`` and
``argv``) and against normalised tool names (``git_push``, ``GitPush``, ``git-push``).  It
reuses the permission splitter, so quoting, wrappers (``sudo``, ``env``, ``timeout``...),
``sh -c`` and substitutions do not get around it, and a command it cannot read
conclusively is blocked.  ``echo git push`` passes: a prefix must start a segment.
Options in a rule (``rm -rf``, ``git reset --hard``) match wherever they appear in the
segment and in any spelling of the same short flags (``-fr``, ``-r -f``, ``--recursive``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, runtime_checkable

import attrs

from agentrig.errors import AgentrigError, Category
from agentrig.permissions._match import loose_prefix
from agentrig.permissions._shell import Candidate, split_command

__all__ = [
    "DEFAULT_BLOCK_RULES",
    "ActionBlocked",
    "ActionBlockedError",
    "ActionBlocker",
    "BlockRule",
    "RuleBasedActionBlocker",
    "first_block",
]

COMMAND_ARGUMENT_KEYS: tuple[str, ...] = ("command", "cmd", "script", "shell", "argv")


@attrs.frozen(slots=True)
class ActionBlocked:
    """A blocker's refusal: the rule that fired and a reason fit to show the model."""

    rule: str
    reason: str


class ActionBlockedError(AgentrigError, PermissionError):
    """Raised by callers that turn an :class:`ActionBlocked` into an exception."""

    code = "permissions.action_blocked"
    category: Category = "user"
    recoverable = False

    def __init__(self, blocked: ActionBlocked, *, tool: str | None = None) -> None:
        where = f"tool {tool!r}: " if tool else ""
        super().__init__(f"{where}action blocked by rule {blocked.rule!r}: {blocked.reason}")
        self.blocked = blocked
        self.tool = tool


@runtime_checkable
class ActionBlocker(Protocol):
    """Anything with ``check(tool, arguments)`` returning :class:`ActionBlocked` or ``None``."""

    def check(self, tool: str, arguments: Mapping[str, object]) -> ActionBlocked | None: ...


@attrs.frozen(slots=True)
class BlockRule:
    """A command prefix to block, such as ``git push`` or ``rm -rf``."""

    text: str
    words: tuple[str, ...] = attrs.field(init=False)
    tool_name: str = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        tokens = tuple(self.text.split())
        if not tokens or tokens[0].startswith("-"):
            raise ValueError(f"block rule {self.text!r} must start with a command name")
        object.__setattr__(self, "words", tokens)
        # normalised once: check() compares it with every call's tool name
        object.__setattr__(self, "tool_name", _normalise_name(" ".join(tokens)))

    def matches(self, candidate: Candidate) -> bool:
        """Whether the argv starts with this rule's words, carrying at least its options."""
        return loose_prefix(self.words, candidate.argv)


@functools.lru_cache(maxsize=1024)  # a runtime has few tool names; each is checked per call
def _normalise_name(name: str) -> str:
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


DEFAULT_BLOCK_RULES: tuple[BlockRule, ...] = tuple(
    BlockRule(text)
    for text in (
        "sudo",
        "rm -rf",
        "git add",
        "git commit",
        "git push",
        "git reset --hard",
        "git merge",
        "git rebase",
    )
)


class RuleBasedActionBlocker:
    """Blocks calls whose command arguments or tool name start with a configured prefix."""

    __slots__ = ("_keys", "_name_hits", "_rules", "_tool_names")

    def __init__(
        self,
        rules: Iterable[BlockRule | str] = DEFAULT_BLOCK_RULES,
        *,
        argument_keys: Sequence[str] = COMMAND_ARGUMENT_KEYS,
        match_tool_names: bool = True,
    ) -> None:
        self._rules = tuple(r if isinstance(r, BlockRule) else BlockRule(r) for r in rules)
        self._keys = tuple(argument_keys)
        self._tool_names = match_tool_names
        self._name_hits: dict[str, ActionBlocked | None] = {}

    @property
    def rules(self) -> tuple[BlockRule, ...]:
        return self._rules

    def check(self, tool: str, arguments: Mapping[str, object]) -> ActionBlocked | None:
        """The first rule the call hits, or ``None`` when it may proceed."""
        if self._tool_names:
            try:
                hit = self._name_hits[tool]
            except KeyError:
                if len(self._name_hits) >= 4096:  # names come from models: stay bounded
                    self._name_hits.clear()
                hit = self._name_hits[tool] = self._check_name(tool)
            if hit is not None:
                return hit
        for key in self._keys:
            if key not in arguments:
                continue
            blocked = self._check_command(key, arguments[key])
            if blocked is not None:
                return blocked
        return None

    def _check_name(self, tool: str) -> ActionBlocked | None:
        # depends on the tool name only, so check() remembers it per name
        name = _normalise_name(tool.rsplit("__", 1)[-1])
        for rule in self._rules:
            wanted = rule.tool_name
            if name == wanted or name.startswith(wanted + "_"):
                return ActionBlocked(rule.text, f"the tool {tool!r} is blocked")
        return None

    def _check_command(self, key: str, value: object) -> ActionBlocked | None:
        if isinstance(value, str):
            parsed = split_command(value)
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            if not value:
                return None
            parsed = split_command([str(v) for v in value])
        else:
            return ActionBlocked("unreadable-command", f"argument {key!r} is not a command")
        for segment in parsed.segments:
            for candidate in segment.candidates:
                for rule in self._rules:
                    if rule.matches(candidate):
                        return ActionBlocked(rule.text, f"{rule.text!r} is blocked ({key!r})")
        if not parsed.conclusive:
            why = "; ".join(parsed.reasons)
            return ActionBlocked(
                "unreadable-command", f"argument {key!r} cannot be read conclusively: {why}"
            )
        return None


def first_block(
    blockers: Iterable[ActionBlocker], tool: str, arguments: Mapping[str, object]
) -> ActionBlocked | None:
    """Run ``blockers`` in order; the first refusal, or ``None`` when all let the call pass."""
    for blocker in blockers:
        blocked = blocker.check(tool, arguments)
        if blocked is not None:
            return blocked
    return None
