"""The conversation a request's messages build, whichever wire format they come in.

OpenAI Chat, OpenAI Responses and Anthropic Messages differ in how a message looks, not in what
the walk over them keeps: system texts join in order; a tool result answers a call an earlier
message of the same request made (by its id, and takes that call's tool name); the last message
is the user's and is what the run answers, the ones before it its history.  Each parser reads
its own format's messages and records them here.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentrig.llm import UserMessage
from agentrig_server._runs import HistoryMessage, Prompt
from agentrig_server._validate import bad, require_str

__all__ = ["Conversation"]


class Conversation:
    """History, system texts and the tool calls made so far, while a request is read."""

    __slots__ = ("_calls", "history", "system")

    def __init__(self, system: Iterable[str] = ()) -> None:
        self.history: list[HistoryMessage] = []
        self.system: list[str] = list(system)
        self._calls: dict[str, str] = {}

    def called(self, call_id: str, name: str) -> None:
        """An assistant message of this request called tool ``name`` as ``call_id``."""
        self._calls[call_id] = name

    def answered(self, value: object, at: str, *, call: str) -> tuple[str, str]:
        """``(call_id, tool name)`` of the call a tool result at ``at`` answers; a 400 naming
        the field when no earlier message made it (``call`` is the format's word for one)."""
        call_id = require_str(value, at)
        name = self._calls.get(call_id)
        if name is None:
            raise bad(at, f"no earlier {call} {call_id!r}")
        return call_id, name

    def prompt(
        self,
        where: str,
        not_the_users: str,
        *,
        model: str,
        max_tokens: int | None,
        temperature: float | None,
        previous_response: str | None = None,
        store: bool = False,
    ) -> Prompt:
        """The run's prompt: the last message (which must be the user's, else a 400 at
        ``where`` saying ``not_the_users``) after the history before it."""
        history = self.history
        if not history or not isinstance(history[-1], UserMessage):
            raise bad(where, not_the_users)
        return Prompt(
            model=model,
            message=history[-1],
            history=tuple(history[:-1]),
            system="\n\n".join(self.system) or None,
            max_tokens=max_tokens,
            temperature=temperature,
            previous_response=previous_response,
            store=store,
        )
