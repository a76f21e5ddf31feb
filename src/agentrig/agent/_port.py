"""The agent's side the loop works with: its log writer, counters, status, tools and gate.

:class:`~agentrig.agent.Agent` is the handle users hold; :class:`AgentPort` is what the run
driver, the turn, the registry and a continuation are given instead of reaching into the
handle's private members.  It owns the state they change -- pending store writes, the turn
counter, the status, the disposed flag, the remembered request configuration -- and the
handle reads it from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, final

import anyio

from agentrig.agent._compaction import Compactor
from agentrig.agent._config import AgentConfig
from agentrig.agent._delegation import Delegations
from agentrig.agent._dispatch import Gate
from agentrig.agent._instructions import PROJECT_INSTRUCTIONS, with_instructions
from agentrig.agent._offer import ToolOffer
from agentrig.errors import RuntimeClosedError
from agentrig.lifecycle import AgentStatus, AgentStatusChanged, Observation, RequestConfig
from agentrig.llm import ToolSpec, Usage
from agentrig.session import (
    InboxSpliced,
    Session,
    SessionEvent,
    SessionEventData,
    SessionWriter,
    SystemPrompt,
    build_event,
)
from agentrig.tools import Tool

if TYPE_CHECKING:
    from agentrig.agent._agent import Agent
    from agentrig.kernel import Runtime

__all__ = ["AgentPort"]


@final
class AgentPort:
    """One agent's loop-facing state and operations (made by the registry, one per agent)."""

    __slots__ = (
        "agent",
        "compactor",
        "config",
        "delegations",
        "disposed",
        "gate",
        "idle",
        "last_request_config",
        "offer",
        "pending",
        "runtime",
        "session",
        "side_usages",
        "status",
        "system_prompt",
        "turns",
        "writer",
    )

    def __init__(
        self,
        runtime: Runtime,
        config: AgentConfig,
        session: Session,
        *,
        tools: Sequence[Tool] = (),
        writer: SessionWriter | None = None,
        gate: Gate | None = None,
        tool_specs: dict[str, tuple[Tool, ToolSpec, int]] | None = None,
        delegations: Delegations | None = None,
    ) -> None:
        self.runtime = runtime
        self.config = config
        self.session = session
        #: its tools and which of them the next request offers (deferral, denied tools)
        self.offer = ToolOffer(runtime, config, tools, gate, specs=tool_specs)
        self.gate = gate
        #: its lineage and the children it runs now (see :mod:`agentrig.agent._delegation`)
        self.delegations = delegations or Delegations()
        self.writer = writer
        #: events recorded from synchronous code (inbox splices), written with the next write
        self.pending: list[SessionEvent] = []
        self.turns = sum(1 for e in session.events if e.type == "turn/start")
        self.status: AgentStatus = "idle"
        self.idle: anyio.Event | None = None
        self.disposed = False
        #: the live system prompt (with the project's instructions, when a plugin found them)
        self.system_prompt = with_instructions(
            config.system_prompt, runtime.services.get(PROJECT_INSTRUCTIONS)
        )
        #: the configuration of the last request (the ``request_config`` waterfall's start)
        self.last_request_config: RequestConfig | None = None
        #: what the side calls made since the current run began reported (``complete_aside``)
        self.side_usages: list[Usage | None] = []
        self.agent: Agent  # the handle, set by it when it is made
        #: shortens the history (automatically past ``compaction.at``, or when asked)
        self.compactor = Compactor(self)

    # ---- the log ------------------------------------------------------------------------
    async def log(self, data: Any) -> SessionEvent:
        """Append ``data`` and persist it (with what sync code recorded before it)."""
        event = self.session.append(data)
        if self.writer is not None:
            batch, self.pending = [*self.pending, event], []
            await self.writer.append(batch)
        return event

    async def append(self, data: Any) -> None:
        """:meth:`log` for the loop, which does not take the event back (without a store
        to write to, no envelope is built unless a session listener takes one)."""
        if self.writer is None:
            self.session.push(data)
        else:
            await self.log(data)

    async def write(self, cls: type[SessionEventData], /, **fields: Any) -> None:
        """:meth:`append` of ``cls(**fields)``: validated like every event, with or without
        a store (one write path: a test without a store runs what a deployment runs); a
        payload repeated verbatim is the shared one (:func:`~agentrig.session.build_event`)."""
        data = build_event(cls, fields)
        if self.writer is None:
            self.session.push(data)
        else:
            await self.log(data)

    def record_inbox(self, data: InboxSpliced) -> None:
        """Log an inbox splice made in sync code; it is persisted with the next write."""
        event = self.session.append(data)
        if self.writer is not None:
            self.pending.append(event)
        hooks = self.runtime.hooks
        if hooks.has_listeners("observe"):
            # per-message notifications; whole-queue consumers rebuild from the splices
            agent_id = self.agent.id
            gone = "inbox.claimed" if data.cause == "claim" else "inbox.discarded"
            for message_id in data.removed:
                hooks.notify("observe", Observation(gone, agent_id, {"message_id": message_id}))
            for message in data.inserted:
                fields = {"message_id": message.id, "target": data.target}
                hooks.notify("observe", Observation("inbox.inserted", agent_id, fields))

    async def flush(self) -> None:
        """Write events recorded from synchronous code (inbox splices) to the store."""
        if self.writer is not None and self.pending:
            batch, self.pending = self.pending, []
            await self.writer.append(batch)

    async def ensure_system_prompt(self) -> None:
        """Log the prompt once per session (and refresh a restored session's stale one)."""
        current = self.system_prompt
        if current is not None and self.session.system_prompt != current:
            await self.log(build_event(SystemPrompt, {"text": current}))

    # ---- turns and status -------------------------------------------------------------------
    def next_turn(self) -> int:
        self.turns += 1
        return self.turns

    def set_status(self, status: AgentStatus) -> None:
        if status == self.status:
            return
        self.status = status
        if status == "idle" and self.idle is not None:
            idle, self.idle = self.idle, None
            idle.set()
        hooks = self.runtime.hooks
        if hooks.has_listeners("agent_status"):  # the payload only for someone who listens
            hooks.notify("agent_status", AgentStatusChanged(agent=self.agent, status=status))

    def ensure_alive(self) -> None:
        """Refuse new work once the agent was disposed or its runtime closed."""
        if self.disposed:
            raise RuntimeClosedError(f"agent {self.agent.id!r} was disposed; it refuses new work")
        self.runtime.ensure_open()
