"""Who a server's own request is for: the agents whose tool calls are in flight on it.

A server asks the client for things (sampling, elicitation) in the middle of a tool call, but
the protocol does not say which call over stdio.  Each :class:`~agentrig_mcp.McpTool` call
registers its agent here while it runs; a request from the server belongs to that agent when
exactly one agent has calls in flight.  With none, or with several (the request could be any
of theirs), there is no agent to charge: sampling is refused rather than guessed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from agentrig.agent import Agent
    from agentrig.cancel import CancelSignal

__all__ = ["Caller", "Callers"]


@attrs.frozen(eq=False)
class Caller:
    """One tool call in flight: its agent, the run's signal, the call's id."""

    agent: Agent
    signal: CancelSignal
    call_id: str


class Callers:
    """The tool calls in flight on one server."""

    def __init__(self) -> None:
        self._calls: list[Caller] = []

    @contextmanager
    def calling(self, caller: Caller) -> Iterator[None]:
        """Register ``caller`` for the duration of its call."""
        self._calls.append(caller)
        try:
            yield
        finally:
            self._calls.remove(caller)

    def current(self) -> Caller | None:
        """The call a server request belongs to: the oldest in flight of the one agent with
        calls in flight (None when no agent, or several, have)."""
        agents = {id(caller.agent) for caller in self._calls}
        return self._calls[0] if len(agents) == 1 else None

    def why_none(self) -> str:
        """Why :meth:`current` found no call (for the refusal the server gets)."""
        if not self._calls:
            return "no agent's tool call is in flight on this server"
        return "tool calls of several agents are in flight on this server, so it is unclear whose"
