"""Conversation-aware replies of the scripted provider: chosen from the request, not a cursor.

A cursor lives in one process; a durable run resumed by another worker (or a delegated run
answered by a fresh provider) would get the script from its start again.  Choosing the reply
from the request itself -- its round (how many assistant messages it already holds) or its
last message -- answers the same request the same way in every process.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from agentrig.errors import AgentrigError
from agentrig.messages import AssistantMessage, ToolMessage, UserMessage

if TYPE_CHECKING:
    from agentrig.builtins._scripted import Reply
    from agentrig.llm import ModelRequest

__all__ = [
    "Rule",
    "ScriptExhaustedError",
    "ScriptNoRuleError",
    "calls_before",
    "choose_by_round",
    "choose_by_rule",
    "round_of",
]

_PREVIEW = 60


class ScriptExhaustedError(AgentrigError):
    """The scripted provider got more requests (or rounds) than its script has replies."""

    code = "scripted.exhausted"
    category = "user"


class ScriptNoRuleError(AgentrigError):
    """No rule of a rule-scripted provider matches the request (never a silent default)."""

    code = "scripted.no_rule"
    category = "user"


@attrs.frozen(slots=True)
class Rule:
    """A reply given when every condition set here holds for the request.

    ``round`` is the number of assistant messages the request already holds (0 for the first
    model call of a conversation); ``last_user_contains`` / ``last_tool_result_contains``
    need the request's last message to be a user message / tool result containing the text.
    A rule with no condition matches every request: a deliberate fallback.
    """

    reply: Reply
    round: int | None = attrs.field(default=None)
    last_user_contains: str | None = None
    last_tool_result_contains: str | None = None

    @round.validator
    def _round_counts(self, _attribute: object, value: int | None) -> None:
        if value is not None and value < 0:
            raise ValueError(f"a rule's round counts assistant messages: 0 or more, not {value}")

    def matches(self, request: ModelRequest, round_number: int) -> bool:
        if self.round is not None and self.round != round_number:
            return False
        last = request.messages[-1] if request.messages else None
        if self.last_user_contains is not None and not (
            isinstance(last, UserMessage) and self.last_user_contains in last.text
        ):
            return False
        return self.last_tool_result_contains is None or (
            isinstance(last, ToolMessage) and self.last_tool_result_contains in last.text
        )


def round_of(request: ModelRequest) -> int:
    """How many assistant messages the request holds: the model round it asks for."""
    return sum(1 for message in request.messages if isinstance(message, AssistantMessage))


def calls_before(request: ModelRequest) -> int:
    """How many tool calls the request's assistant messages made (numbers the next ids)."""
    return sum(
        len(message.tool_calls)
        for message in request.messages
        if isinstance(message, AssistantMessage)
    )


def choose_by_round(
    rounds: Sequence[Reply], request: ModelRequest, *, provider: str, repeat_last: bool
) -> Reply:
    """The reply of the request's round; past the last one, it or an error."""
    number = round_of(request)
    if number < len(rounds):
        return rounds[number]
    if repeat_last and rounds:
        return rounds[-1]
    raise ScriptExhaustedError(
        f"scripted provider {provider!r} has no reply for round {number} "
        f"(its rounds cover 0..{len(rounds) - 1}; last message: {_describe_last(request)})"
    )


def choose_by_rule(rules: Sequence[Rule], request: ModelRequest, *, provider: str) -> Reply:
    """The reply of the first rule that matches the request."""
    number = round_of(request)
    for rule in rules:
        if rule.matches(request, number):
            return rule.reply
    raise ScriptNoRuleError(
        f"scripted provider {provider!r}: no rule matches round {number} "
        f"(last message: {_describe_last(request)})"
    )


def _describe_last(request: ModelRequest) -> str:
    if not request.messages:
        return "none"
    last = request.messages[-1]
    text = last.text
    if len(text) > _PREVIEW:
        text = text[: _PREVIEW - 1] + "…"
    label = f"tool result of {last.name}" if isinstance(last, ToolMessage) else last.role
    return f"{label} {text!r}"
