"""The loop's content-free observations of a model call and of a finished turn.

Each is built only when an ``observe`` listener exists: the common run has none, and an
observation describes a boundary (a provider round, a turn), never the content.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from agentrig.agent._results import sum_usage
from agentrig.errors import error_info
from agentrig.ids import ProviderId
from agentrig.kernel.payloads import Observation, RequestConfig
from agentrig.llm import PROVIDERS, AssistantMessage
from agentrig.session import TurnEndReason

if TYPE_CHECKING:
    from agentrig.agent._turn_state import TurnState

__all__ = ["observe_model_call", "observe_turn"]


def observe_model_call(
    state: TurnState,
    cfg: RequestConfig,
    started: tuple[float, float],
    attempt: int,
    outcome: str,
    message: AssistantMessage | None,
    error: BaseException | None = None,
) -> None:
    """One observation per attempted provider round (forced summary too).

    It describes the call boundary, not proof of a network request.
    """
    agent = state.agent
    hooks = agent.runtime.hooks
    if not hooks.has_listeners("observe"):
        return
    now = time.perf_counter()
    started_at, start = started
    first = state.first_chunk
    session_id, agent_name, run_id = state.observed_ids()
    # one literal, in the documented order: the ids of TurnState.ids(), then the call's own
    data = {
        "session_id": session_id,
        "agent_name": agent_name,
        "run_id": run_id,
        "turn": state.turn,
        "step": state.step,
        "round": state.outcome.rounds + (1 if outcome != "success" else 0),
        "attempt": attempt + 1,
        "provider": cfg.provider,
        "provider_kind": _provider_kind(state, cfg.provider),
        "model": cfg.model,
        "response_model": message.model if message is not None else None,
        "outcome": outcome,
        "stop_reason": message.stop_reason if message is not None else None,
        "usage": message.usage if message is not None else None,
        "started_at": started_at,
        "ended_at": started_at + (now - start),
        "duration_ms": (now - start) * 1000,
        "time_to_first_chunk_ms": (first - start) * 1000 if first else None,
        "error_type": type(error).__name__ if error is not None else None,
        "error_code": error_info(error).code if error is not None else None,
    }
    hooks.notify("observe", Observation("model_call", agent.id, data))


def _provider_kind(state: TurnState, provider_id: ProviderId) -> str | None:
    """The entry-point name of a configured provider (the sealed runtime's catalog does not
    change: looked up once per turn)."""
    kinds = state.provider_kinds
    if kinds is None:
        kinds = state.provider_kinds = {}
    try:
        return kinds[provider_id]
    except KeyError:
        provider = state.agent.runtime.catalog(PROVIDERS).get(provider_id)
        kind = kinds[provider_id] = getattr(provider, "kind", None)
        return kind


def observe_turn(
    state: TurnState, reason: TurnEndReason, error: BaseException | None, code: str | None
) -> None:
    """The observation of a finished turn (``turn``), after its ``turn/end`` is logged."""
    hooks = state.agent.runtime.hooks
    if not hooks.has_listeners("observe"):
        return
    outcome = state.outcome
    started_at, started = state.started
    data = state.ids()
    data.update(
        trigger=state.trigger,
        reason=reason,
        rounds=outcome.rounds,
        tool_calls=outcome.tool_results,
        model=outcome.model,
        usage=sum_usage(outcome.usages),
        started_at=started_at,
        duration_ms=(time.perf_counter() - started) * 1000,
        error_type=type(error).__name__ if error is not None else None,
        error_code=code,
    )
    hooks.notify("observe", Observation(kind="turn", agent_id=state.agent.id, data=data))
