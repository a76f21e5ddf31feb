"""A model call made for an agent outside its conversation: the seam for plugins.

An MCP server's sampling request, a plugin's classifier: each wants the agent's model to
answer a prompt of its own, and must not become a way around what holds the agent's calls.
:meth:`~agentrig.agent.Agent.complete_aside` gives such a call the agent's rules:

* the agent's provider and model, chosen by the same ``request_config`` waterfall as a round
  (a budget listener that cancels the run's signal there stops this call too);
* the agent's output limit as a ceiling on what the caller asks;
* the run's cancel signal (a stopped run stops the call);
* its usage logged as a ``model/side-call`` event, counted in the run's record
  (``RunRecord.usage``, apart as ``side_usage``) and by every budget read from the log.

The messages and the reply are not part of the agent's history.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from agentrig.agent._request import request_config
from agentrig.cancel import CancelSignal
from agentrig.llm import (
    PROVIDERS,
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    SystemMessage,
    UserMessage,
)
from agentrig.session import ModelSideCall

if TYPE_CHECKING:
    from agentrig.agent._port import AgentPort

__all__ = ["SideCall", "complete_aside"]


def _messages(
    value: Sequence[UserMessage | AssistantMessage],
) -> tuple[UserMessage | AssistantMessage, ...]:
    items = tuple(value)
    if not items:
        raise ValueError("a side call needs at least one message")
    return items


@attrs.frozen(slots=True)
class SideCall:
    """What a plugin asks the agent's model, apart from the agent's conversation.

    ``source`` names the asker in the session log (``mcp:<server>``); ``max_tokens`` is
    capped by the agent's own limit; ``temperature`` defaults to the agent's.
    """

    messages: tuple[UserMessage | AssistantMessage, ...] = attrs.field(converter=_messages)
    source: str
    system: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    stop: tuple[str, ...] = ()


def _ceiling(asked: int | None, limit: int | None) -> int | None:
    if asked is None or limit is None:
        return limit if asked is None else asked
    return min(asked, limit)


async def complete_aside(
    port: AgentPort, call: SideCall, signal: CancelSignal | None
) -> ModelResponse:
    """Send ``call`` to the agent's model under its rules (see the module docs)."""
    port.ensure_alive()
    signal = signal or port.agent.current_signal or CancelSignal()
    signal.raise_if_cancelled()
    chosen = await request_config(port, remember=False)
    signal.raise_if_cancelled()  # a listener stopped the run (a spent budget): nothing is sent
    provider = port.runtime.catalog(PROVIDERS).require(chosen.provider)
    system = (SystemMessage(text=call.system),) if call.system else ()
    request = ModelRequest(
        model=chosen.model,
        messages=(*system, *call.messages),
        max_tokens=_ceiling(call.max_tokens, chosen.max_tokens),
        temperature=call.temperature if call.temperature is not None else chosen.temperature,
        stop=call.stop,
        reasoning_effort=chosen.reasoning_effort,
    )
    response: ModelResponse | None = None
    with signal.scope():  # the run's signal stops it, like a round's call
        response = await provider.complete(request, signal=signal)
    signal.raise_if_cancelled()
    assert response is not None
    if response.served_model is None:  # the caller learns which model answered
        response = response.model_copy(update={"served_model": chosen.model})
    usage = response.message.usage
    port.side_usages.append(usage)
    await port.log(
        ModelSideCall(
            source=call.source,
            provider=str(chosen.provider),
            model=chosen.model,
            usage=usage,
            stop_reason=response.message.stop_reason,
        )
    )
    return response
