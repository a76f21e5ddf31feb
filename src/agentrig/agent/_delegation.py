"""Delegation: an agent hands a task to a configured child agent and gets its answer.

A parent's ``[agents.<id>] subagents`` names the configured agents it may delegate to.  Each
is offered to its model as one tool, ``delegate_<child>``, described by the child's
``description`` and taking one ``prompt``.  A call creates the child through the registry
(a separate agent with a session of its own, carrying its :class:`Lineage`), runs it to
completion, disposes it and answers with its final text.  :meth:`Agent.delegate` is the same
thing for Python callers.  ``[delegation]`` bounds how deep a chain goes and how many
children one agent runs at once, so a recursion (A -> B -> A) ends with an error result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Literal, final

import anyio
import attrs
from pydantic import Field

from agentrig.agent._child_runs import CHILD_RUNS, ChildRun
from agentrig.agent._config import AgentConfig, delegation_config
from agentrig.agent._results import DelegationError, RunRecord, RunResult
from agentrig.cancel import CancelSignal
from agentrig.errors import ConfigError, Issue, did_you_mean
from agentrig.ids import AgentId, SessionId, agent_id, session_id
from agentrig.session import Session, SessionLineage
from agentrig.tools import FunctionTool, ToolContext, tool

if TYPE_CHECKING:
    from agentrig.agent._agent import Agent

__all__ = [
    "DELEGATION_TOOL_PREFIX",
    "Delegations",
    "Lineage",
    "Origin",
    "check_subagents",
    "delegation_chain",
    "delegation_tool",
    "run_delegation",
    "subagent_issues",
]

DELEGATION_TOOL_PREFIX = "delegate_"
"""A child ``reviewer`` is offered to its parent's model as the tool ``delegate_reviewer``."""

Origin = Literal["created", "delegated", "forked", "handoff"]
"""How a session came to be: made by a caller, by a parent delegating to it, copied from
another session's log up to an event (a fork), or handed the conversation by another agent
(a handoff: a copy of that agent's log, continued by the agent it was handed to)."""


@final
@attrs.frozen(slots=True)
class Lineage:
    """Where an agent's session comes from: its parent and how deep in a delegation chain."""

    origin: Origin = "created"
    parent_agent: AgentId | None = None
    parent_session: SessionId | None = None
    #: 0 for an agent a caller created; a child's is its parent's plus one
    depth: int = attrs.field(default=0, validator=attrs.validators.ge(0))
    #: the configured agent it was made from (a child's own id is unique per delegation)
    configured_as: AgentId | None = None
    #: a fork's last copied event (its ``seq``); None unless ``origin`` is ``forked``
    fork_point: int | None = None

    def event(self) -> SessionLineage:
        """The ``session/lineage`` event a delegated session starts with."""
        return SessionLineage(
            origin=self.origin,
            parent_agent=self.parent_agent,
            parent_session=self.parent_session,
            depth=self.depth,
            configured_as=self.configured_as,
            fork_point=self.fork_point,
        )

    @classmethod
    def of_session(cls, session: Session) -> Lineage:
        """The lineage a stored session recorded last (a fork copies its parent's first);
        ``created`` when it recorded none."""
        for event in reversed(session.events):
            data = event.data
            if isinstance(data, SessionLineage):
                return cls(
                    origin=data.origin,
                    parent_agent=_opt_agent(data.parent_agent),
                    parent_session=_opt_session(data.parent_session),
                    depth=data.depth,
                    configured_as=_opt_agent(data.configured_as),
                    fork_point=data.fork_point,
                )
        return cls()

    def __attrs_post_init__(self) -> None:
        delegated = self.origin in ("delegated", "handoff")
        if delegated != (self.parent_agent is not None) or delegated != (self.depth > 0):
            raise ValueError(
                "a delegated (or handed-off) session names its parent and has a depth above 0;"
                f" a created one has neither (got {self!r})"
            )
        forked = self.origin in ("forked", "handoff")
        if forked != (self.fork_point is not None) or (forked and self.parent_session is None):
            raise ValueError(
                f"a forked (or handed-off) session names its parent session and fork point "
                f"({self!r})"
            )


def _opt_agent(value: str | None) -> AgentId | None:
    return agent_id(value) if value is not None else None


def _opt_session(value: str | None) -> SessionId | None:
    return session_id(value) if value is not None else None


@final
class Delegations:
    """One agent's side of delegation: its lineage and its children running now."""

    __slots__ = ("active", "finished", "handoff", "handoff_call", "lineage", "running")

    def __init__(self, lineage: Lineage | None = None) -> None:
        self.lineage = lineage or Lineage()
        self.running: set[AgentId] = set()
        #: delegations admitted and not finished (counted before the child exists, so
        #: parallel calls cannot all pass the ``max_children`` check at once)
        self.active = 0
        #: records of the children the current run's delegation calls ran (its driver takes
        #: them into its own record: usage rolls up)
        self.finished: list[RunRecord] = []
        #: the agent a ``transfer_to_<id>`` call of the current run handed the conversation
        #: to (its run takes it over when this agent's turn ends)
        self.handoff: AgentId | None = None
        #: the id of that ``transfer_to_<id>`` call (a durable host names the target by it)
        self.handoff_call: str | None = None

    def take_finished(self) -> tuple[RunRecord, ...]:
        finished, self.finished = tuple(self.finished), []
        return finished


def subagent_issues(
    agent_id: str,
    names: Sequence[str],
    configured: Mapping[AgentId, AgentConfig],
    field: Literal["subagents", "handoffs"] = "subagents",
) -> list[Issue]:
    """One issue per entry of ``[agents.<agent_id>] <field>`` that names no configured agent
    (with a "did you mean"), at the key path ``agents.<agent_id>.<field>.<n>``."""
    issues: list[Issue] = []
    known = sorted(configured)
    code, verb = (
        ("config.unknown_subagent", "delegate to")
        if field == "subagents"
        else ("config.unknown_handoff", "hand off to")
    )
    for index, name in enumerate(names):
        if name in configured:
            continue
        hint = did_you_mean(name, known)
        issues.append(
            Issue(
                code,
                f"no configured agent {name!r} to {verb}{hint} "
                f"(agents: {', '.join(known) or 'none'})",
                ("agents", agent_id, field, index),
            )
        )
    return issues


def check_subagents(
    agent_id: str,
    config: AgentConfig,
    configured: Mapping[AgentId, AgentConfig],
    source: str | None,
) -> None:
    """Refuse an agent whose ``subagents`` or ``handoffs`` names an agent the config does
    not declare."""
    issues = subagent_issues(agent_id, config.subagents, configured)
    issues += subagent_issues(agent_id, config.handoffs, configured, "handoffs")
    if issues:
        raise ConfigError(issues, source=source)


def delegation_tool(child: AgentId, config: AgentConfig) -> FunctionTool:
    """The ``delegate_<child>`` tool: runs ``child`` on the model's prompt, answers its text."""
    what = config.description or f"the {child!r} agent"

    async def delegate(prompt: str, ctx: ToolContext) -> str:
        parent: Agent = ctx.agent
        state = parent.delegations
        # the call's id keys the child where a plugin runs children durably
        result = await run_delegation(parent, state, child, prompt, ctx.signal, ctx.call_id)
        parent.delegations.finished.append(result.invocation)  # the parent's run rolls it up
        if result.interrupted or result.timed_out:
            ended = "interrupted" if result.interrupted else "timeout"
            raise DelegationError(
                f"delegation to {child!r} ended {ended}: "
                f"{result.invocation.stop_reason or 'cancelled'}",
                code=f"delegation.{ended}",
            )
        return result.value

    # the schema's description names the child (annotations here are strings otherwise)
    described = Annotated[str, Field(description=f"The task for {child}, self-contained.")]
    delegate.__annotations__ = {"prompt": described, "ctx": ToolContext, "return": str}
    return tool(
        id=f"{DELEGATION_TOOL_PREFIX}{child}",
        description=f"Delegate a task to a sub-agent and get its final answer: {what}",
        risk="inspect",  # it has no effect itself: the child's own calls are gated
        concurrent=True,  # separate agents: several calls of one reply run at once
        # a crash mid-call leaves a child whose effects may have happened: never run it
        # afresh (a durable host continues that child from its own journal instead)
        idempotent=False,
    )(delegate)


def delegation_chain(parent: Agent) -> list[str]:
    """The configured names from the root down to ``parent`` (for a depth error)."""
    names: list[str] = []
    current: Agent | None = parent
    while current is not None:
        lineage = current.lineage
        names.append(str(lineage.configured_as or current.id))
        up = lineage.parent_agent
        current = current.runtime.agents.get(up) if up is not None else None
    return names[::-1]


def _admit(parent: Agent, state: Delegations, child: str) -> Lineage:
    """The child's lineage, or a :class:`DelegationError` saying which limit refuses it."""
    subagents = parent.config.subagents
    if child not in subagents:
        hint = did_you_mean(child, subagents)
        raise DelegationError(
            f"agent {parent.id!r} cannot delegate to {child!r}{hint} "
            f"(its [agents] subagents: {', '.join(subagents) or 'none'})",
            code="delegation.unknown_subagent",
        )
    limits = delegation_config(parent.runtime.loaded)
    depth = state.lineage.depth + 1
    if depth > limits.max_depth:
        chain = " -> ".join([*delegation_chain(parent), child])
        raise DelegationError(
            f"delegation {chain} would be {depth} levels deep; [delegation] max_depth is "
            f"{limits.max_depth}",
            code="delegation.depth",
        )
    if state.active >= limits.max_children:
        raise DelegationError(
            f"agent {parent.id!r} already runs {state.active} sub-agents; "
            f"[delegation] max_children is {limits.max_children}",
            code="delegation.fan_out",
        )
    return Lineage(
        origin="delegated",
        parent_agent=parent.id,
        parent_session=parent.session_id,
        depth=depth,
        configured_as=AgentId(child),
    )


async def run_delegation(
    parent: Agent,
    state: Delegations,
    child: str,
    prompt: str,
    signal: CancelSignal | None,
    call_id: str | None = None,
) -> RunResult[str]:
    """Create ``child`` for ``parent``, run it on ``prompt``, dispose it; its result.

    Cancelling ``signal`` (default: the parent's running turn) cancels the child's run.  A
    :data:`~agentrig.agent.CHILD_RUNS` service, when the runtime has one, runs the child
    instead (``call_id``: the model's delegation call).
    """
    lineage = _admit(parent, state, child)
    state.active += 1  # no await between the check and this: the slot is taken
    try:
        child_signal = CancelSignal()
        source = signal if signal is not None else parent.current_signal
        detach = None
        if source is not None:

            def forward(reason: object) -> None:
                child_signal.cancel(reason)

            detach = source.on_cancel(forward)
        try:
            runner = parent.runtime.services.get(CHILD_RUNS)
            if runner is not None:
                request = ChildRun(parent, lineage, prompt, child_signal, call_id)
                result: RunResult[str] | None = await runner.run_child(request)
                if result is not None:
                    return result
            return await _run_child(parent, state, lineage, prompt, child_signal)
        finally:
            if detach is not None:
                detach()
    finally:
        state.active -= 1


async def _run_child(
    parent: Agent, state: Delegations, lineage: Lineage, prompt: str, signal: CancelSignal
) -> RunResult[str]:
    registry = parent.runtime.agents
    agent = await registry.create_child(lineage)
    state.running.add(agent.id)
    try:
        return await agent.run(prompt, signal=signal)
    finally:
        state.running.discard(agent.id)
        with anyio.CancelScope(shield=True):  # a cancelled parent still disposes its child
            await registry.dispose(agent.id, cancel_running=True)
