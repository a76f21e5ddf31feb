"""Results and streaming: the one RunResult shape, usage only when reported, the stream's
chunks and result; structured output transports, retries and the dedicated error."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import pytest
from agentloop_support import (
    EnvFactory,
    WatchedProvider,
    check_invariant,
    clock,
    events,
    texts,
)
from pydantic import BaseModel

import agentrig
from agentrig.agent import RunResult, StructuredOutputError
from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.lifecycle import RequestConfig
from agentrig.llm import (
    Capabilities,
    FinishChunk,
    SystemMessage,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    ToolResultChunk,
    Usage,
    UsageChunk,
)

pytestmark = pytest.mark.anyio


class City(BaseModel):
    name: str
    population: int


VALID = '{"name": "Paris", "population": 2100000}'
MISSING_FIELD = '{"name": "Paris"}'


# ---- RunResult -------------------------------------------------------------------------------


async def test_run_returns_value_and_invocation_record(env: EnvFactory) -> None:
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("clock"),), usage=Usage(prompt=10, completion=2, total=12)),
        Reply(text="noon", usage=Usage(prompt=20, completion=3, total=23, cache_read=5)),
    ]
    async with env(script, tools=[clock]) as e:
        result = await e.agent.run("time?")
        assert isinstance(result, RunResult)
        assert result.value == "noon"
        record = result.invocation
        assert record.run_id.startswith("run_")
        assert record.invocation_id.startswith("inv_")
        assert record.agent_id == "assistant"
        assert record.session_id == e.agent.session_id
        assert record.turn == 1
        assert record.outcome == "completed"
        assert not result.interrupted
        assert record.rounds == 2
        assert record.model == "m1"
        assert record.started_at_ms > 0
        assert record.duration_ms >= 0
        assert record.usage is not None
        assert (record.usage.prompt, record.usage.completion, record.usage.total) == (30, 5, 35)
        assert record.usage.cache_read == 5
        assert events(e.agent, "turn/start")[0].run_id == record.run_id
        e.provider.add("again")
        second = await e.agent.run("again")
        assert second.invocation.run_id != record.run_id
        assert second.invocation.turn == 2


async def test_usage_is_none_when_the_provider_reported_none(env: EnvFactory) -> None:
    async with env([Reply(tool_calls=(ScriptedCall("clock"),)), "noon"], tools=[clock]) as e:
        result = await e.agent.run("time?")
        assert result.invocation.usage is None  # never a fabricated zero


async def test_usage_counts_only_the_rounds_that_reported_it(env: EnvFactory) -> None:
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("clock"),)),
        Reply(text="noon", usage=Usage(prompt=7, completion=1, total=8)),
    ]
    async with env(script, tools=[clock]) as e:
        usage = (await e.agent.run("time?")).invocation.usage
        assert usage is not None
        assert (usage.prompt, usage.total) == (7, 8)


# ---- streaming -----------------------------------------------------------------------------


async def test_stream_yields_chunks_then_the_result(env: EnvFactory) -> None:
    script: list[Reply | str] = [
        Reply(
            tool_calls=(ScriptedCall("clock", {}),), usage=Usage(prompt=1, completion=1, total=2)
        ),
        Reply(text="It is noon.", chunk_size=4),
    ]
    async with env(script, tools=[clock]) as e:
        stream = e.agent.stream("time?")
        with pytest.raises(RuntimeError, match="not finished"):
            _ = stream.result
        chunks = [chunk async for chunk in stream]
        kinds = [type(c) for c in chunks]
        assert kinds.index(ToolCallStart) < kinds.index(ToolResultChunk) < kinds.index(TextDelta)
        assert UsageChunk in kinds
        assert FinishChunk in kinds
        tool_result = next(c for c in chunks if isinstance(c, ToolResultChunk))
        assert (tool_result.name, tool_result.status, tool_result.text) == ("clock", "ok", "12:00")
        assert "".join(c.text for c in chunks if isinstance(c, TextDelta)) == "It is noon."
        assert stream.result.value == "It is noon."
        assert stream.result.invocation.rounds == 2
        with pytest.raises(RuntimeError, match="once"):
            stream.__aiter__()
        check_invariant(e.agent)


async def test_stream_delivers_tool_call_arguments(env: EnvFactory) -> None:
    from agentloop_support import echo

    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("echo", {"text": "hi"}),)), "done"]
    async with env(script, tools=[echo]) as e:
        chunks = [chunk async for chunk in e.agent.stream("go")]
        deltas = [c.arguments for c in chunks if isinstance(c, ToolCallDelta)]
        assert json.loads("".join(deltas)) == {"text": "hi"}


async def test_stream_raises_the_runs_failure_to_its_consumer(env: EnvFactory) -> None:
    from agentrig.llm import EmptyCompletionError

    async with env([Reply(text="")]) as e:
        with pytest.raises(EmptyCompletionError):
            async for _chunk in e.agent.stream("hi"):
                pass
        assert e.agent.status == "idle"


# ---- structured output: transports -------------------------------------------------------------


@pytest.mark.parametrize(
    ("declared", "transport", "has_format", "schema_in_prompt"),
    [
        ("native", "native", True, False),
        ("json_mode", "json_mode", True, True),
        ("none", "prompt", False, True),
        (None, None, True, False),
    ],
    ids=["native", "json-mode", "none-prompt", "undeclared"],
)
async def test_structured_output_transport(
    env: EnvFactory,
    declared: Any,
    transport: str | None,
    has_format: bool,
    schema_in_prompt: bool,
) -> None:
    provider = WatchedProvider([VALID], capabilities=Capabilities(structured_output=declared))
    async with env(provider=provider, system_prompt="Be brief.") as e:
        result = await e.agent.run("largest city?", output_type=City)
        assert result.value == City(name="Paris", population=2100000)
        assert result.invocation.structured_attempts == 1
        request = provider.requests[0]
        assert request.structured_output == transport
        if has_format:
            assert request.response_format is not None
            assert request.response_format.name == "City"
            assert request.response_format.schema_ == City.model_json_schema()
        else:
            assert request.response_format is None
        head = request.messages[0]
        assert isinstance(head, SystemMessage)
        assert head.text.startswith("Be brief.")
        assert ('"population"' in head.text) is schema_in_prompt
        # the schema instruction is a request artifact: the stored prompt is unchanged
        assert e.agent.session.system_prompt == "Be brief."
        assert [p.text for p in events(e.agent, "system/prompt")] == ["Be brief."]


async def test_prompt_transport_states_the_schema_without_a_system_prompt(
    env: EnvFactory,
) -> None:
    provider = WatchedProvider([VALID], capabilities=Capabilities(structured_output="none"))
    async with env(provider=provider) as e:
        await e.agent.run("largest city?", output_type=City)
        head = provider.requests[0].messages[0]
        assert isinstance(head, SystemMessage)
        assert '"population"' in head.text
        assert e.agent.session.system_prompt is None
        assert events(e.agent, "system/prompt") == []


class PerModelCapabilities(WatchedProvider):
    """Declares native structured output for m1 only; m2 has no schema transport."""

    def capabilities(self, model: str) -> Capabilities:
        return Capabilities(structured_output="native" if model == "m1" else "none")


class UseM2:
    @agentrig.hookimpl
    async def request_config(
        self, payload: RequestConfig, next: Callable[[RequestConfig], Awaitable[RequestConfig]]
    ) -> RequestConfig:
        return attrs.evolve(await next(payload), model="m2")


async def test_transport_follows_the_model_the_request_actually_uses(env: EnvFactory) -> None:
    provider = PerModelCapabilities([VALID])
    async with env(provider=provider, plugins={"m2": UseM2()}) as e:
        await e.agent.run("largest city?", output_type=City)
        request = provider.requests[0]
        assert request.model == "m2"
        assert request.structured_output == "prompt"
        assert request.response_format is None
        # the schema must still reach the model: stated in the system instruction
        head = request.messages[0]
        assert isinstance(head, SystemMessage)
        assert '"population"' in head.text


# ---- structured output: validation and retries ---------------------------------------------


async def test_invalid_answer_is_retried_with_the_issues(env: EnvFactory) -> None:
    async with env([MISSING_FIELD, "```json\n" + VALID + "\n```"]) as e:
        result = await e.agent.run("largest city?", output_type=City)
        assert result.value == City(name="Paris", population=2100000)
        assert result.invocation.structured_attempts == 2
        retry_request = e.provider.requests[1]
        feedback = retry_request.messages[-1]
        assert feedback.role == "user"
        assert "population" in feedback.text  # the validation issue travels with the retry
        assert retry_request.response_format is not None  # the schema too
        # every attempt is committed to history
        assert texts(e.agent.session.derive_messages())[1] == f"assistant:{MISSING_FIELD}"
        assert len(events(e.agent, "turn/start")) == 2
        check_invariant(e.agent)


@pytest.mark.parametrize("retries", [0, 1, 2])
async def test_exhausted_retries_raise_structured_output_error(
    env: EnvFactory, retries: int
) -> None:
    async with env([MISSING_FIELD] * (retries + 1) + ["unused"]) as e:
        with pytest.raises(StructuredOutputError) as caught:
            await e.agent.run("largest city?", output_type=City, output_retries=retries)
        error = caught.value
        assert error.attempts == retries + 1
        assert error.issues
        assert any("population" in str(i.path) for i in error.issues)
        assert error.text == MISSING_FIELD
        assert len(e.provider.requests) == retries + 1
        answers = [m.message.text for m in events(e.agent, "assistant/message")]
        assert answers == [MISSING_FIELD] * (retries + 1)
        assert e.agent.status == "idle"
        check_invariant(e.agent)


async def test_tools_may_run_within_a_structured_turn(env: EnvFactory) -> None:
    async with env([Reply(tool_calls=(ScriptedCall("clock"),)), VALID], tools=[clock]) as e:
        result = await e.agent.run("largest city?", output_type=City)
        assert result.value.population == 2100000
        check_invariant(e.agent)


async def test_a_structured_stream_returns_the_validated_object(env: EnvFactory) -> None:
    async with env([VALID]) as e:
        stream = e.agent.stream("largest city?", output_type=City)
        chunks = [c async for c in stream]
        assert all(not isinstance(c, City) for c in chunks)
        assert stream.result.value == City(name="Paris", population=2100000)
