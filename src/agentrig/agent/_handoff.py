"""Handoff: an agent hands the conversation to another configured agent, which answers.

Delegation is call-and-return: the child's answer comes back as a tool result and the parent
goes on.  A handoff transfers control, as the OpenAI Agents SDK's handoffs do: ``[agents.<id>]
handoffs`` names the agents it may hand over to, each offered to its model as the tool
``transfer_to_<target>`` (no input).  Calling it ends the agent's turn at that step; then the
target -- a new agent on a copy of the conversation so far, whose lineage (``handoff``)
names the agent that handed over -- continues it and its answer is the run's answer.  The
target stays live afterwards: it holds the conversation now (``RunRecord.final_agent``).
A chain of handoffs (A -> B -> A ...) is bounded by ``[delegation] max_depth``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from agentrig.agent._child_runs import CHILD_RUNS
from agentrig.agent._config import AgentConfig, delegation_config
from agentrig.agent._delegation import Delegations, Lineage, delegation_chain
from agentrig.agent._results import DelegationError, RunResult
from agentrig.agent._turn_state import Emit
from agentrig.cancel import CancelSignal
from agentrig.ids import AgentId, new_run_id
from agentrig.session import SessionEvent, TurnStart
from agentrig.tools import FunctionTool, ToolContext, ToolOutput, tool

if TYPE_CHECKING:
    from agentrig.agent._agent import Agent
    from agentrig.agent._driver import RunOptions

__all__ = ["HANDOFF_TOOL_PREFIX", "hand_off", "handoff_tool"]

HANDOFF_TOOL_PREFIX = "transfer_to_"
"""A target ``billing`` is offered to the model as the tool ``transfer_to_billing``."""


def handoff_tool(target: AgentId, config: AgentConfig) -> FunctionTool:
    """The ``transfer_to_<target>`` tool: ends the caller's turn; ``target`` answers next."""
    what = config.description or f"the {target!r} agent"

    async def transfer(ctx: ToolContext) -> ToolOutput:
        state: Delegations = ctx.agent.delegations
        if state.handoff is not None and state.handoff != target:
            raise DelegationError(
                f"the conversation is already being handed to {state.handoff!r}; "
                "one handoff per turn",
                code="delegation.handoff_taken",
            )
        _admit(ctx.agent, state, target)  # too deep: refused now, while the model can go on
        state.handoff, state.handoff_call = target, ctx.call_id
        text = f"Transferred to {target}; it answers from here."
        return ToolOutput(text, concludes_turn=True)

    transfer.__annotations__ = {"ctx": ToolContext, "return": ToolOutput}
    return tool(
        id=f"{HANDOFF_TOOL_PREFIX}{target}",
        description=(
            f"Hand the conversation over to another agent, which answers the user from here "
            f"on (you stop): {what}"
        ),
        risk="inspect",  # it has no effect itself: the target's own calls are gated
    )(transfer)


def _admit(parent: Agent, state: Delegations, target: AgentId) -> Lineage:
    limits = delegation_config(parent.runtime.loaded)
    depth = state.lineage.depth + 1
    if depth > limits.max_depth:
        chain = " -> ".join([*delegation_chain(parent), target])
        raise DelegationError(
            f"handoff {chain} would be {depth} levels deep; [delegation] max_depth is "
            f"{limits.max_depth}",
            code="delegation.depth",
        )
    events = parent.session.events
    return Lineage(
        origin="handoff",
        parent_agent=parent.id,
        parent_session=parent.session_id,
        depth=depth,
        configured_as=target,
        fork_point=events[-1].seq if events else 0,
    )


async def hand_off(
    parent: Agent, options: RunOptions, signal: CancelSignal, emit: Emit | None
) -> RunResult[str] | None:
    """Run the handoff ``parent``'s turn asked for (None when it asked for none): the
    target continues the conversation; its result (with its own handoff's, when it hands
    over in turn, as ``invocation.handoff``)."""
    state = parent.delegations
    target, state.handoff = state.handoff, None
    call_id, state.handoff_call = state.handoff_call, None
    if target is None:
        return None
    if options.output_type is not None:
        raise DelegationError(
            f"agent {parent.id!r} handed off to {target!r} in a run that asked for "
            "output_type; a structured run answers itself",
            code="delegation.handoff_structured",
        )
    lineage = _admit(parent, state, target)
    agent_id, session_id = _named(parent, target, call_id)
    agent = await parent.runtime.agents.create_handoff(
        parent, lineage, agent_id=agent_id, session_id=session_id
    )
    started_ms, started = int(time.time() * 1000), time.perf_counter()
    config = agent.config
    # the target's own limits; the run's signal (and with it its deadline) stays in force
    own = attrs.evolve(
        options,
        run_id=new_run_id(),
        max_rounds=config.max_rounds,
        tool_choice=None,
        tool_only_completion=config.tool_only_completion,
    )
    async with agent.continue_run(signal) as run:
        outcome = await run.continue_turn(own, emit)
    further = await hand_off(agent, own, signal, emit)
    record = outcome.record(
        own.run_id,
        agent.id,
        agent.session_id,
        _turns(agent.session.events),
        (started_ms, started),
        subagents=agent.delegations.take_finished(),
        handoff=further.invocation if further is not None else None,
    )
    value = further.value if further is not None else outcome.text
    refused = tuple(outcome.refused) + (further.refused if further is not None else ())
    return RunResult(value=value, invocation=record, refused=refused)


def _named(parent: Agent, target: AgentId, call_id: str | None) -> tuple[str | None, str | None]:
    """The target's agent and session ids from the runtime's :data:`CHILD_RUNS` service
    when it names handoffs (its optional ``handoff_identity``: a durable host names the
    target after the call, so a restarted process finds it); else (None, None): minted."""
    runner = parent.runtime.services.get(CHILD_RUNS)
    name = getattr(runner, "handoff_identity", None)
    if name is None or call_id is None:
        return None, None
    named: tuple[str, str] | None = name(parent, target, call_id)
    return named if named is not None else (None, None)


def _turns(events: Sequence[SessionEvent]) -> int:
    return sum(1 for event in events if isinstance(event.data, TurnStart))
