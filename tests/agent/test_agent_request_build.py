"""The request the loop sends is the one validating its values would give.

The loop fills a request without validating it again (validation would walk the whole
history per call): it must still equal a validated ``ModelRequest`` of the same values,
with every field set, and two requests must share no mutable part.
"""

from __future__ import annotations

from typing import Any

import pytest

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.ids import AgentId
from agentrig.llm import ModelRequest
from agentrig.tools import tool

pytestmark = pytest.mark.anyio

CONFIG = {"providers": {"local": {"kind": "scripted"}}, "agents": {}}


def _noop(x: int = 0) -> str:
    """Does nothing."""
    return "ok"


NOOP = tool(id="noop", risk="inspect")(_noop)


async def test_the_sent_request_equals_the_validated_one() -> None:
    provider = ScriptedProvider(
        [Reply(tool_calls=(ScriptedCall("noop", {"x": 1}),)), Reply(text="done")]
    )
    async with agentrig.open_runtime(
        CONFIG, overrides=[("providers", "local", provider)], environ={}
    ) as rt:
        agent = await rt.agents.create(
            AgentId("a"),
            provider="local",
            model="scripted-1",
            tools=[NOOP],
            max_tokens=64,
            temperature=0.5,
            options={"seed": 7},
            system_prompt="be brief",
        )
        assert (await agent.run("go")).value == "done"
    first, second = provider.requests
    for request in (first, second):
        values: dict[str, Any] = {n: getattr(request, n) for n in ModelRequest.model_fields}
        validated = ModelRequest.model_validate({**values, "messages": tuple(request.messages)})
        assert request == validated
        assert request.model_fields_set == set(ModelRequest.model_fields)
        assert request.system == "be brief"
        assert (request.max_tokens, request.temperature) == (64, 0.5)
        assert request.options == {"seed": 7}
        assert [spec.name for spec in request.tools] == ["noop"]
    assert len(second.messages) == len(first.messages) + 2  # the call and its result
    assert first.options is not second.options
    assert first.model_fields_set is not second.model_fields_set
