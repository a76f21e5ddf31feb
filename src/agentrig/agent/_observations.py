"""The loop's content-free observations of a model call, a tool call and a finished turn.

Each is built only when an ``observe`` listener exists: the common run has none, and an
observation describes a boundary (a provider round, a turn), never the content.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from agentrig.agent._dispatch import CallOutcome
from agentrig.agent._results import ReasoningAudit, sum_usage
from agentrig.errors import error_info
from agentrig.ids import ProviderId
from agentrig.lifecycle import Observation, RequestConfig
from agentrig.llm import PROVIDERS, AssistantMessage, ToolCallBlock
from agentrig.session import TurnEndReason

if TYPE_CHECKING:
    from agentrig.agent._agent import Agent
    from agentrig.agent._turn_state import TurnContext, TurnOutcome
    from agentrig.kernel import HookDispatcher

__all__ = ["observe_direct_tool_call", "observe_model_call", "observe_tool_call", "observe_turn"]


def observe_model_call(
    state: TurnContext,
    produced: TurnOutcome,
    cfg: RequestConfig,
    started: tuple[float, float],
    first: float,
    attempt: int,
    outcome: str,
    message: AssistantMessage | None,
    error: BaseException | None = None,
    *,
    response_id: str | None = None,
    reasoning: ReasoningAudit | None = None,
) -> None:
    """One observation per attempted provider round (forced summary too): the call boundary,
    not proof of a network request.  ``attempt`` counts from 1, ``first`` is when the first
    chunk arrived (0: none), ``reasoning`` None when the provider was not called.  Called
    only when an ``observe`` listener exists: the caller checks."""
    hooks = state.agent.runtime.hooks
    started_at, start = started
    elapsed = time.perf_counter() - start
    session_id, agent_name, run_id, agent_id = state.observed or state.observed_ids()
    provider = cfg.provider
    kinds = state.provider_kinds
    kind = kinds[provider] if kinds and provider in kinds else _provider_kind(state, provider)
    response_model = stop_reason = usage = error_type = error_code = None
    if message is not None:  # how the call ended (written out: once per provider round)
        response_model, stop_reason, usage = message.model, message.stop_reason, message.usage
    if error is not None:
        error_type, error_code = type(error).__name__, error_info(error).code
    # the documented order: the ids every loop observation carries, then the call's own
    data = {
        "session_id": session_id,
        "agent_name": agent_name,
        "run_id": run_id,
        "turn": state.turn,
        "step": state.step,
        "round": produced.rounds if outcome == "success" else produced.rounds + 1,
        "attempt": attempt,
        "provider": provider,
        "provider_kind": kind,
        "model": cfg.model,
        "response_model": response_model,
        "outcome": outcome,
        "stop_reason": stop_reason,
        "usage": usage,
        "started_at": started_at,
        "ended_at": started_at + elapsed,
        "duration_ms": elapsed * 1000,
        "time_to_first_chunk_ms": (first - start) * 1000 if first else None,
        "error_type": error_type,
        "error_code": error_code,
        "response_id": response_id,
        "max_tokens": cfg.max_tokens,
        "temperature": cfg.temperature,
        "reasoning": reasoning.to_dict() if reasoning is not None else None,
    }
    hooks.notify("observe", Observation("model_call", agent_id, data))


def _provider_kind(state: TurnContext, provider_id: ProviderId) -> str | None:
    """The entry-point name of a configured provider, on the turn's first call to it (the
    sealed runtime's catalog does not change: looked up once per turn)."""
    kinds = state.provider_kinds
    if kinds is None:
        kinds = state.provider_kinds = {}
    provider = state.agent.runtime.catalog(PROVIDERS).get(provider_id)
    kind = kinds[provider_id] = getattr(provider, "kind", None)
    return kind


def observe_tool_call(
    state: TurnContext, hooks: HookDispatcher, call: ToolCallBlock, outcome: CallOutcome
) -> None:
    """The ``tool_call`` observation of a call of the turn, once it has its result (called
    only when an ``observe`` listener exists: the caller checks)."""
    session_id, agent_name, run_id, agent_id = state.observed or state.observed_ids()
    data = _tool_call_data(call, outcome, session_id, agent_name, run_id, state.turn, state.step)
    hooks.notify("observe", Observation("tool_call", agent_id, data))


def observe_direct_tool_call(agent: Agent, call: ToolCallBlock, outcome: CallOutcome) -> None:
    """Emit the ``tool_call`` observation of a call settled by ``agent.call_tool()``.

    Outside a turn it carries the session id only (no agent name, run, turn or step).
    """
    hooks = agent.runtime.hooks
    if not hooks.has_listeners("observe"):
        return
    data = _tool_call_data(call, outcome, agent.session.id, "", "", 0, 0)
    for key in _LOOP_ONLY:
        del data[key]
    hooks.notify("observe", Observation("tool_call", agent.id, data))


# the ids a call of a turn carries and one made by ``agent.call_tool()`` does not
_LOOP_ONLY = ("agent_name", "run_id", "turn", "step")


def _tool_call_data(
    call: ToolCallBlock,
    outcome: CallOutcome,
    session_id: str,
    agent_name: str,
    run_id: str,
    turn: int,
    step: int,
) -> dict[str, Any]:
    """The ``tool_call`` observation's data, in the documented order: the ids every loop
    observation carries, then the call's own."""
    return {
        "session_id": session_id,
        "agent_name": agent_name,
        "run_id": run_id,
        "turn": turn,
        "step": step,
        "call_id": call.id,
        "invocation_id": outcome.invocation_id or None,
        "tool": call.name,
        "status": outcome.message.status,
        "executed": outcome.executed,
        "started_at": outcome.started_at or None,
        "duration_ms": outcome.duration_ms,
        "error_type": outcome.error_type,
    }


def observe_turn(
    state: TurnContext,
    outcome: TurnOutcome,
    reason: TurnEndReason,
    error: BaseException | None,
    code: str | None,
) -> None:
    """The observation of a finished turn (``turn``), after its ``turn/end`` is logged."""
    hooks = state.agent.runtime.hooks
    if not hooks.has_listeners("observe"):
        return
    started_at, started = state.started
    session_id, agent_name, run_id, agent_id = state.observed or state.observed_ids()
    # where the agent comes from: a delegated child's (or a handoff target's) parent ids let
    # an observer nest its turn under the parent's call
    lineage = state.agent.lineage
    data = {
        "session_id": session_id,
        "agent_name": agent_name,
        "run_id": run_id,
        "turn": state.turn,
        "step": state.step,
        "trigger": state.trigger,
        "reason": reason,
        "rounds": outcome.rounds,
        "tool_calls": outcome.tool_results,
        "model": outcome.model,
        "usage": sum_usage(outcome.usages),
        "started_at": started_at,
        "duration_ms": (time.perf_counter() - started) * 1000,
        "error_type": type(error).__name__ if error is not None else None,
        "error_code": code,
        "origin": lineage.origin,
        "parent_agent": lineage.parent_agent,
        "parent_session": lineage.parent_session,
    }
    hooks.notify("observe", Observation("turn", agent_id, data))
