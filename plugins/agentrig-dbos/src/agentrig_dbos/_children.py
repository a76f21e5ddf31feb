"""Durable delegation: a child agent of a durable run is a journaled step of that run.

The runtime's delegation asks :data:`~agentrig.plugin.CHILD_RUNS` first.  For a parent that
is a durable run's agent (or a child of one), the child is named after the delegating call
-- agent ``<child>.<run>.<call>`` on session ``ses-<run>.<call>`` -- so a process that
recovers the run finds it again.  The child's own model calls and tool effects are journaled
like the parent's (the runtime is journaled), so nothing of it depends on the process that
started it.

After a crash the parent's delegation call is an effect journaled as started and never
settled.  Instead of waiting for the host, the recovering run settles it itself: it
continues the child from the journal (a finished child is answered from its record and
runs nothing again; an unfinished one goes on from its last settled step, repeating no
effect), records the child's answer as the call's result and goes on.  A child effect the
journal cannot prove makes the whole run wait for the host, naming the child's effect
(``durable.reconcile`` settles it like any other).
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

import anyio

from agentrig.agent import (
    DELEGATION_TOOL_PREFIX,
    HANDOFF_TOOL_PREFIX,
    AgentConfig,
    ChildRun,
    Lineage,
    RunResult,
    agent_configs,
)
from agentrig.errors import AgentrigError
from agentrig.ids import AgentId, InvocationId, RunId, SessionId, agent_id, session_id
from agentrig.journal import ReconciliationRequired, ToolIntent, reconcile_tool
from agentrig.llm import ToolMessage
from agentrig.session import ToolResultEvent, TurnStart
from agentrig_dbos._errors import DurableError, RunSuspended

if TYPE_CHECKING:
    from agentrig_dbos._host import Durable

__all__ = ["DurableChildren", "child_key", "handed_off"]

_PLAIN = re.compile(r"[A-Za-z0-9_\-]{1,40}")


def child_key(run_key: str, call_id: str) -> str:
    """The key of the child a call of run ``run_key`` delegated to: the run's key and the
    call's id (a digest of it when it is long or has other characters)."""
    if _PLAIN.fullmatch(call_id) is None:
        call_id = "h" + hashlib.sha256(call_id.encode()).hexdigest()[:16]
    return f"{run_key}.{call_id}"


def handed_off(agent: Any) -> tuple[str, str] | None:
    """The agent ``agent``'s last turn handed the conversation to and the id of the
    settled ``transfer_to_<id>`` call that did, or None."""
    for event in reversed(agent.session.events):
        data = event.data
        if isinstance(data, TurnStart):
            return None
        if isinstance(data, ToolResultEvent) and data.message.status == "ok":
            name = data.message.name
            if name.startswith(HANDOFF_TOOL_PREFIX):
                return str(name.removeprefix(HANDOFF_TOOL_PREFIX)), data.message.call_id
    return None


class DurableChildren:
    """The :data:`~agentrig.plugin.CHILD_RUNS` service of a durable runtime."""

    def __init__(self, host: Durable) -> None:
        self.host = host

    def _identity(self, key: str, child: str) -> tuple[AgentId, SessionId, AgentConfig]:
        base = agent_configs(self.host.rt.loaded)[
            AgentId(child)
        ]  # a subagent: checked by the config
        config = base if base.name is not None else base.model_copy(update={"name": child})
        return agent_id(f"{child}.{key}"), session_id(f"ses-{key}"), config

    # ---- handoffs: named after the call, so a restarted process finds the target ---------------
    def handoff_identity(self, parent: Any, target: str, call_id: str) -> tuple[str, str] | None:
        """The agent and session a durable run's ``transfer_to_<target>`` call ``call_id``
        hands the conversation to: ``<target>.<run key>.<call>`` on ``ses-<run key>.<call>``
        (None for a parent outside durable runs: the runtime mints them)."""
        key = self.host.run_key(parent.id)
        if key is None:
            return None
        ckey = child_key(key, call_id)
        aid, sid, _config = self._identity(ckey, target)
        self.host.adopt(aid, ckey)  # its own delegations and handoffs are the run's too
        return str(aid), str(sid)

    async def continue_handoff(self, parent: Any, target: str, call_id: str) -> str:
        """After a crash: the answer of the agent ``parent`` handed the conversation to --
        continued from its journal, or from its session, or (when the crash came before it
        existed) created and run now."""
        key = self.host.run_key(parent.id)
        if key is None:
            raise DurableError(f"agent {parent.id!r} executes no durable run")
        ckey = child_key(key, call_id)
        aid, sid, config = self._identity(ckey, target)
        self.host.adopt(aid, ckey)
        rt = self.host.rt

        async def create() -> Any:
            lineage = Lineage(
                origin="handoff",
                parent_agent=parent.id,
                parent_session=parent.session_id,
                depth=parent.lineage.depth + 1,
                configured_as=AgentId(target),
                fork_point=parent.session.events[-1].seq if parent.session.events else 0,
            )
            return await rt.agents.create_handoff(parent, lineage, agent_id=aid, session_id=sid)

        return await self.host.execute_agent(aid, sid, config, "", create, handoff=True)

    # ---- the first time: the parent's delegation call ------------------------------------------
    async def run_child(self, request: ChildRun) -> RunResult[Any] | None:
        """Run a durable run's child under its call's name; None (run it as usual) for a
        parent that is no durable run's agent, or a delegation without a call."""
        parent = request.parent
        key = self.host.run_key(parent.id)
        child = request.lineage.configured_as
        if key is None or request.call_id is None or child is None:
            return None
        ckey = child_key(key, request.call_id)
        aid, sid, config = self._identity(ckey, child)
        if await self.host.has_state(aid, sid, config):
            # a call is dispatched only when the journal never saw it start, so its child
            # cannot exist yet: something else wrote under this name
            raise DurableError(
                f"the child {aid!r} of durable run {key!r} already has a session or journal; "
                "a new delegation call cannot reuse it"
            )
        rt = self.host.rt
        with self.host.running(aid, ckey):
            agent = await rt.agents.create_child(request.lineage, agent_id=aid, session_id=sid)
            parent.delegations.running.add(aid)
            try:
                return await agent.run(request.prompt, signal=request.signal)
            finally:
                parent.delegations.running.discard(aid)
                with anyio.CancelScope(shield=True):  # a cancelled parent still disposes it
                    await rt.agents.dispose(aid, cancel_running=True)

    # ---- after a crash: the parent's call never settled -----------------------------------------
    async def settle(
        self, exc: ReconciliationRequired, parent: AgentId, parent_sid: SessionId
    ) -> list[str]:
        """Settle the unproven delegation calls of ``exc`` by continuing their children;
        returns the unproven effects left for the host (none: the run can go on)."""
        key = self.host.run_key(parent)
        execution = exc.run_id
        state = await self.host.fresh(RunId(execution)) if execution is not None else None
        left: list[str] = []
        for item in exc.items:
            effect = state.effects.get(str(item.id)) if state is not None else None
            child = self._delegated(effect.intent, parent) if effect is not None else None
            if effect is None or child is None or key is None or execution is None:
                left.append(str(item.id))
                continue
            message = await self._recover(key, child, effect.intent, parent, parent_sid)
            await reconcile_tool(
                self.host.journal, RunId(execution), InvocationId(item.id), message
            )
        return left

    def _delegated(self, intent: ToolIntent, parent: AgentId) -> str | None:
        """The configured child a journaled call of ``parent`` delegated to, or None."""
        if not intent.tool.startswith(DELEGATION_TOOL_PREFIX):
            return None
        child = intent.tool.removeprefix(DELEGATION_TOOL_PREFIX)
        live = self.host.rt.agents.get(parent)
        config = live.config if live is not None else None
        return child if config is not None and child in config.subagents else None

    async def _recover(
        self, key: str, child: str, intent: ToolIntent, parent: AgentId, parent_sid: SessionId
    ) -> ToolMessage:
        ckey = child_key(key, intent.call_id)
        aid, sid, config = self._identity(ckey, child)
        prompt = str(intent.arguments.get("prompt", ""))
        live = self.host.rt.agents.get(parent)
        lineage = Lineage(
            origin="delegated",
            parent_agent=parent,
            parent_session=parent_sid,
            depth=(live.lineage.depth if live is not None else 0) + 1,
            configured_as=AgentId(child),
        )
        rt = self.host.rt

        async def create() -> Any:
            return await rt.agents.create_child(lineage, agent_id=aid, session_id=sid)

        with self.host.running(aid, ckey):
            try:
                text = await self.host.execute_agent(aid, sid, config, prompt, create)
            except RunSuspended:
                raise  # the child waits for a person or the host: so does the run
            except AgentrigError as exc:  # answered as the delegation tool would have
                return ToolMessage.of(intent.call_id, intent.tool, f"{exc.code}: {exc}", "error")
            finally:
                if rt.agents.get(aid) is not None:
                    with anyio.CancelScope(shield=True):
                        await rt.agents.dispose(aid, cancel_running=True)
        return ToolMessage.of(intent.call_id, intent.tool, text)
