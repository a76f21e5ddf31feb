"""Who a server's own request is for: the agents whose tool calls are in flight on it.

A server asks the client for things (sampling, elicitation) in the middle of a tool call, but
the protocol does not say which call over stdio.  Each :class:`~agentrig_mcp.McpTool` call
registers its agent here while it runs; a request from the server belongs to that agent when
exactly one agent has calls in flight.  With none, or with several (the request could be any
of theirs), there is no agent to charge: sampling is refused rather than guessed.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import anyio
import attrs

if TYPE_CHECKING:
    from agentrig.agent import Agent
    from agentrig.cancel import CancelSignal

__all__ = ["Caller", "Callers"]


@attrs.define(eq=False)
class Caller:
    """One tool call in flight: its agent, the run's signal, the call's id, and what bounds
    the call in time (its ``timeout`` scopes, and ``limit``: when ``max_call_time`` ends)."""

    agent: Agent
    signal: CancelSignal
    call_id: str
    timeout: float = math.inf
    limit: float = math.inf
    scopes: list[anyio.CancelScope] = attrs.Factory(list)
    _answering: int = 0

    @contextmanager
    def answering(self) -> Iterator[None]:
        """While the client answers the server (a person typing, the model generating), the
        call's ``timeout`` is suspended -- the server is waiting for us, not stuck -- and only
        ``max_call_time`` bounds it; the timeout starts again when the answer is sent."""
        self._answering += 1
        for scope in self.scopes:
            scope.deadline = self.limit
        try:
            yield
        finally:
            self._answering -= 1
            if not self._answering:
                restart = min(anyio.current_time() + self.timeout, self.limit)
                for scope in self.scopes:
                    scope.deadline = restart


class Callers:
    """The tool calls in flight on one server."""

    def __init__(self) -> None:
        self._calls: list[Caller] = []
        #: agents a person allowed to be asked by this server for the rest of the runtime
        #: (``sampling = "ask"`` answered "allow for the session")
        self.sampling_allowed: set[str] = set()

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
