"""Conversations the server keeps: continued by ``previous_response_id`` or from the chat page.

Each is a live agent with its own session, owned by the caller that started it (another
caller cannot see or continue it).  At most ``limit`` are kept; the least recently used is
dropped first.  They live in the server's memory and end with it.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import attrs

from agentrig.llm import AssistantMessage, ToolMessage, UserMessage
from agentrig_server._errors import ApiError

if TYPE_CHECKING:
    from agentrig.agent import Agent
    from agentrig_server._events import Finished
    from agentrig_server._runs import Prompt

__all__ = ["ServedSession", "Sessions"]

SUMMARY_SOURCE = "compaction-summary"
"""The ``source`` of the message a compaction put in place of the turns it summarised."""


@attrs.define(slots=True, eq=False)
class ServedSession:
    """One kept conversation."""

    model: str
    agent: Agent
    owner: str
    title: str = ""
    created: float = attrs.Factory(time.time)
    updated: float = attrs.Factory(time.time)
    last_response: str | None = None

    @property
    def id(self) -> str:
        return self.agent.session_id

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "model": self.model,
            "title": self.title,
            "created": int(self.created),
            "updated": int(self.updated),
            "last_response_id": self.last_response,
        }

    def transcript(self) -> list[dict[str, Any]]:
        """The conversation as the chat page shows it: user and assistant text, tool calls
        with their results; once compacted, the summary (``role: summary``) in place of the
        turns it replaced -- what the model sees from then on."""
        out: list[dict[str, Any]] = []
        for message in self.agent.session.derive_messages():
            if isinstance(message, UserMessage) and message.source == SUMMARY_SOURCE:
                # the conversation was compacted: what came before is this summary now
                out.append({"role": "summary", "text": message.text})
            elif isinstance(message, UserMessage):
                out.append({"role": "user", "text": message.text})
            elif isinstance(message, AssistantMessage):
                calls = [
                    {"id": c.id, "name": c.name, "arguments": c.arguments}
                    for c in message.tool_calls
                ]
                out.append(
                    {
                        "role": "assistant",
                        "text": message.text,
                        "tool_calls": calls,
                        "interrupted": message.interrupted,
                    }
                )
            elif isinstance(message, ToolMessage):
                out.append(
                    {
                        "role": "tool",
                        "call_id": message.call_id,
                        "name": message.name,
                        "status": message.status,
                        "text": message.text,
                    }
                )
        return out


class Sessions:
    """The kept conversations, by session id and by their latest response id."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._by_id: OrderedDict[str, ServedSession] = OrderedDict()
        self._by_response: dict[str, str] = {}

    def add(self, model: str, agent: Agent, owner: str) -> ServedSession:
        served = ServedSession(model=model, agent=agent, owner=owner)
        self._by_id[served.id] = served
        return served

    def evict(self) -> list[ServedSession]:
        """Drop the least recently used conversations over the limit; returns them."""
        dropped: list[ServedSession] = []
        while len(self._by_id) > self._limit:
            _, served = self._by_id.popitem(last=False)
            if served.last_response is not None:
                self._by_response.pop(served.last_response, None)
            dropped.append(served)
        return dropped

    def get(self, session_id: str, owner: str) -> ServedSession:
        served = self._by_id.get(session_id)
        if served is None or served.owner != owner:
            raise ApiError(404, f"no conversation {session_id!r}", code="not_found")
        return served

    def continuing(self, response_id: str, owner: str) -> ServedSession:
        """The conversation whose latest response is ``response_id``."""
        session_id = self._by_response.get(response_id)
        served = self._by_id.get(session_id) if session_id is not None else None
        if served is None or served.owner != owner:
            raise ApiError(
                404,
                f"previous_response_id {response_id!r} is not the latest response of a "
                "conversation this server keeps (branching from older responses is not "
                "supported; a conversation is kept only when the request had store=true)",
                code="not_found",
                param="previous_response_id",
            )
        self._by_id.move_to_end(served.id)
        return served

    def answered(
        self, served: ServedSession, response_id: str, prompt: Prompt, finished: Finished
    ) -> None:
        if served.last_response is not None:
            self._by_response.pop(served.last_response, None)
        served.last_response = response_id
        self._by_response[response_id] = served.id
        served.updated = time.time()
        if not served.title:
            served.title = prompt.message.text[:80]
        self._by_id.move_to_end(served.id)

    def owned_by(self, owner: str) -> list[ServedSession]:
        return [s for s in reversed(self._by_id.values()) if s.owner == owner]
