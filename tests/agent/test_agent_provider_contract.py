"""The loop's side of the provider contract.

* a provider that declares ``streaming=False`` is driven through its non-streaming call, for
  ``run()`` and ``stream()`` alike (the stream reader still gets the reply's chunks);
* a request that needs a capability the model declared absent is refused by the core before
  the provider is called, with an error naming the capability; silence is not absence.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest
from agentloop_support import EnvFactory, WatchedProvider, check_invariant, clock, events

from agentrig import CancelSignal
from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.llm import (
    Capabilities,
    CapabilityError,
    FinishChunk,
    ImageBlock,
    ModelRequest,
    StreamChunk,
    TextBlock,
    TextDelta,
    ToolResultChunk,
    Usage,
    UsageChunk,
    UserMessage,
)

pytestmark = pytest.mark.anyio

EVERYTHING = Capabilities(
    structured_output="native",
    tool_choice=True,
    parallel_tool_calls=True,
    streaming=True,
    reasoning_effort=("low", "high"),
    vision=True,
)


class NonStreaming(WatchedProvider):
    """Declares ``streaming=False``; its ``stream()`` refuses, as such a provider's would."""

    def __init__(self, script: list[Reply | str]) -> None:
        super().__init__(script, capabilities=attrs.evolve(EVERYTHING, streaming=False))
        self.completed = 0

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> Any:
        self.completed += 1
        return await super().complete(request, signal=signal)

    def stream(self, request: ModelRequest, *, signal: CancelSignal) -> AsyncIterator[StreamChunk]:
        raise CapabilityError("this provider cannot stream", provider="non-streaming")


SCRIPT: list[Reply | str] = [
    Reply(tool_calls=(ScriptedCall("clock"),)),
    Reply(text="It is noon.", usage=Usage.of(prompt=10, completion=3)),
]


async def test_run_drives_a_non_streaming_provider_through_complete(env: EnvFactory) -> None:
    provider = NonStreaming(list(SCRIPT))
    async with env(provider=provider, tools=[clock]) as e:
        result = await e.agent.run("what time is it?")
        assert result.value == "It is noon."
        assert result.invocation.usage == Usage.of(prompt=10, completion=3)
        assert provider.completed == 2
        assert [ev.message.text for ev in events(e.agent, "tool/result")] == ["12:00"]
        check_invariant(e.agent)


async def test_stream_drives_a_non_streaming_provider_and_still_yields_chunks(
    env: EnvFactory,
) -> None:
    provider = NonStreaming(list(SCRIPT))
    async with env(provider=provider, tools=[clock]) as e:
        stream = e.agent.stream("what time is it?")
        chunks = [chunk async for chunk in stream]
        assert stream.result.value == "It is noon."
        assert provider.completed == 2
        kinds = [type(c) for c in chunks]
        assert ToolResultChunk in kinds
        assert [c.text for c in chunks if isinstance(c, TextDelta)] == ["It is noon."]
        assert isinstance(chunks[-1], FinishChunk)
        assert any(isinstance(c, UsageChunk) for c in chunks)


def _provider(**declared: Any) -> WatchedProvider:
    return WatchedProvider(["unused"], capabilities=attrs.evolve(EVERYTHING, **declared))


async def _refused(env: EnvFactory, provider: WatchedProvider, run: Any, **settings: Any) -> str:
    async with env(provider=provider, tools=[clock], **settings) as e:
        with pytest.raises(CapabilityError) as caught:
            await run(e.agent)
        assert provider.requests == [], "the provider was called"
        assert events(e.agent, "request/header") == []  # nothing was sent
        assert events(e.agent, "turn/end")[-1].reason == "failed"
        return str(caught.value)


async def test_a_tool_choice_the_model_lacks_is_refused_before_the_call(env: EnvFactory) -> None:
    message = await _refused(
        env, _provider(tool_choice=False), lambda a: a.run("hi", tool_choice="required")
    )
    assert "'tool_choice'" in message
    assert "tool_choice='required'" in message


async def test_an_image_for_a_model_without_vision_is_refused(env: EnvFactory) -> None:
    picture = UserMessage(
        content=(TextBlock(text="what is this?"), ImageBlock(media_type="image/png", data="AA=="))
    )
    message = await _refused(env, _provider(vision=False), lambda a: a.run(picture))
    assert "'vision'" in message
    assert "image block" in message


async def test_undeclared_capabilities_are_not_refused(env: EnvFactory) -> None:
    silent = WatchedProvider(["ok"], capabilities=Capabilities())
    picture = UserMessage(
        content=(TextBlock(text="what is this?"), ImageBlock(media_type="image/png", data="AA=="))
    )
    async with env(provider=silent) as e:
        assert (await e.agent.run(picture, tool_choice="required")).value == "ok"
        assert silent.requests[0].tool_choice == "required"


async def test_the_forced_summary_works_for_a_model_without_tool_choice(env: EnvFactory) -> None:
    provider = WatchedProvider(
        [Reply(tool_calls=(ScriptedCall("clock"),)), "Noon, from what I have."],
        capabilities=attrs.evolve(EVERYTHING, tool_choice=False),
    )
    async with env(provider=provider, tools=[clock], max_rounds=1) as e:
        result = await e.agent.run("what time is it?")
        assert result.value == "Noon, from what I have."
        summary = provider.requests[-1]
        assert summary.tools == ()
        assert summary.tool_choice is None  # not asked of a model that declared it absent
