"""The scripted provider's conversation-aware modes: a reply chosen from the request (its round
or its last message), so a fresh provider -- as after a worker restart -- answers a request
exactly as the first one did."""

from __future__ import annotations

from typing import Any

import pytest

import agentrig
from agentrig.builtins._scripted import (
    Reply,
    Rule,
    ScriptedCall,
    ScriptedProvider,
    ScriptExhaustedError,
    ScriptNoRuleError,
    factory,
)
from agentrig.cancel import CancelSignal
from agentrig.errors import ConfigError
from agentrig.ids import AgentId
from agentrig.llm import (
    AssistantMessage,
    ModelRequest,
    ProviderConfig,
    StreamChunk,
    ToolCallBlock,
    ToolMessage,
    UserMessage,
)

pytestmark = pytest.mark.anyio

ROUNDS: list[dict[str, Any]] = [
    {"tool_calls": [{"name": "clock", "arguments": {"zone": "utc"}}]},
    {"text": "It is noon."},
]


def _provider(**options: Any) -> ScriptedProvider:
    return factory(ProviderConfig(id="local", kind="scripted", options=options))


def _after_call(call_id: str = "call_0", result: str = "12:00") -> ModelRequest:
    """The request of round 1: the question, the model's call and the tool's result."""
    call = ToolCallBlock(id=call_id, name="clock", arguments={"zone": "utc"})
    return ModelRequest(
        model="m",
        messages=(
            UserMessage.of("What time is it?"),
            AssistantMessage(content=(call,), stop_reason="tool_calls"),
            ToolMessage.of(call_id, "clock", result),
        ),
    )


FIRST = ModelRequest(model="m", messages=(UserMessage.of("What time is it?"),))


async def _chunks(provider: ScriptedProvider, request: ModelRequest) -> list[StreamChunk]:
    return [chunk async for chunk in provider.stream(request, signal=CancelSignal())]


async def test_by_round_the_reply_follows_the_assistant_turns_of_the_request() -> None:
    provider = _provider(rounds=ROUNDS)
    first = await provider.complete(FIRST, signal=CancelSignal())
    assert [(c.name, dict(c.arguments)) for c in first.message.tool_calls] == [
        ("clock", {"zone": "utc"})
    ]
    assert (await provider.complete(_after_call(), signal=CancelSignal())).message.text == (
        "It is noon."
    )
    # the same request again gets the same reply: there is no cursor to advance
    again = await provider.complete(FIRST, signal=CancelSignal())
    assert again.message.tool_calls == first.message.tool_calls
    assert len(provider.requests) == 3


async def test_two_providers_answer_the_same_requests_identically() -> None:
    """As after a restart: a fresh provider streams the very chunks, tool-call ids included."""
    rules = [
        {"when": {"round": 0}, "reply": ROUNDS[0]},
        {"when": {"last_tool_result_contains": "12:00"}, "reply": ROUNDS[1]},
    ]
    for options in ({"rounds": ROUNDS}, {"rules": rules}):
        before, after = _provider(**options), _provider(**options)
        await _chunks(before, FIRST)  # the first process answered round 0, then died
        for request in (_after_call(), FIRST):
            assert await _chunks(after, request) == await _chunks(before, request)


async def test_past_the_last_round_is_an_error_naming_provider_and_round() -> None:
    provider = _provider(rounds=ROUNDS[:1])
    with pytest.raises(ScriptExhaustedError) as info:
        await provider.complete(_after_call(), signal=CancelSignal())
    assert info.value.code == "scripted.exhausted"
    assert str(info.value) == (
        "scripted provider 'local' has no reply for round 1 "
        "(its rounds cover 0..0; last message: tool result of clock '12:00')"
    )
    # on_exhausted = "repeat" answers later rounds with the last one, as asked
    repeating = _provider(rounds=ROUNDS[:1], on_exhausted="repeat")
    reply = await repeating.complete(_after_call(), signal=CancelSignal())
    assert [c.name for c in reply.message.tool_calls] == ["clock"]
    assert reply.message.tool_calls[0].id == "call_1"  # numbered after the request's call


async def test_rules_match_the_last_message_and_the_first_match_wins() -> None:
    provider = _provider(
        rules=[
            {"when": {"last_user_contains": "time"}, "reply": ROUNDS[0]},
            {"when": {"last_tool_result_contains": "12:00", "round": 1}, "reply": ROUNDS[1]},
            {"when": {"last_tool_result_contains": "12:00"}, "reply": {"text": "later"}},
            {"when": {}, "reply": {"text": "fallback"}},
        ]
    )
    first = await provider.complete(FIRST, signal=CancelSignal())
    assert [c.name for c in first.message.tool_calls] == ["clock"]
    assert (await provider.complete(_after_call(), signal=CancelSignal())).message.text == (
        "It is noon."
    )
    other = ModelRequest(model="m", messages=(UserMessage.of("Hello"),))
    assert (await provider.complete(other, signal=CancelSignal())).message.text == "fallback"


async def test_no_matching_rule_is_an_error_naming_provider_round_and_message() -> None:
    provider = _provider(rules=[{"when": {"last_user_contains": "weather"}, "reply": {}}])
    with pytest.raises(ScriptNoRuleError) as info:
        await _chunks(provider, FIRST)
    assert info.value.code == "scripted.no_rule"
    assert str(info.value) == (
        "scripted provider 'local': no rule matches round 0 (last message: user 'What time is it?')"
    )
    # a user-message condition does not match a tool result, nor the other way round
    assert not Rule(Reply(), last_user_contains="12:00").matches(_after_call(), 1)
    assert not Rule(Reply(), last_tool_result_contains="time").matches(FIRST, 0)


async def test_a_run_with_a_tool_goes_round_by_round_in_python() -> None:
    @agentrig.tool(risk="inspect")
    def clock(zone: str) -> str:
        """The time of day."""
        return f"12:00 {zone}"

    provider = ScriptedProvider(
        rules=[
            Rule(Reply(tool_calls=(ScriptedCall("clock", {"zone": "utc"}),)), round=0),
            Rule(Reply(text="It is noon."), last_tool_result_contains="12:00 utc"),
        ]
    )
    config = {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {"a": {"provider": "local", "model": "m", "tools": ["clock"]}},
    }
    memory = agentrig.MemorySource()
    memory.add("tools", clock.id, clock)
    async with agentrig.open_runtime(
        config, memory=memory, overrides=[("providers", "local", provider)], environ={}
    ) as rt:
        result = await rt.agent(AgentId("a")).run("What time is it?")
    assert result.value == "It is noon."
    assert len(provider.requests) == 2


@pytest.mark.parametrize(
    ("options", "path", "words"),
    [
        (
            {"rules": [{"when": {"last_user": "x"}, "reply": {}}]},
            ("rules", 0, "when", "last_user"),
            "unknown key 'last_user'",
        ),
        (
            {"rules": [{"when": {}, "reply": {}, "then": 1}]},
            ("rules", 0, "then"),
            "unknown key 'then'",
        ),
        ({"rounds": [{"txt": "x"}]}, ("rounds", 0, "txt"), "unknown key 'txt'"),
        ({"rules": [{"reply": {}}]}, ("rules", 0, "when"), ""),
        ({"script": [{}], "rounds": [{}]}, (), "not script and rounds"),
        ({"rounds": [{}], "rules": []}, (), "not rounds and rules"),
        ({"rules": [], "on_exhausted": "repeat"}, (), "on_exhausted does not apply to rules"),
    ],
)
async def test_the_modes_config_is_strict(
    options: dict[str, Any], path: tuple[Any, ...], words: str
) -> None:
    config = {"providers": {"local": {"kind": "scripted", "options": options}}}
    with pytest.raises(ConfigError) as info:
        async with agentrig.open_runtime(config, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.path[:3] == ("providers", "local", "options")
    assert issue.path[3:] == path
    assert words in issue.message


def test_the_python_modes_are_exclusive_and_not_extended() -> None:
    with pytest.raises(ValueError, match="one of script, rounds or rules"):
        ScriptedProvider(["x"], rounds=["y"])
    with pytest.raises(ValueError, match="one of script, rounds or rules"):
        ScriptedProvider(rounds=["y"], rules=[])
    provider = ScriptedProvider(rounds=["y"])
    assert provider.rounds == (Reply(text="y"),)
    with pytest.raises(ValueError, match="answers by rounds or rules"):
        provider.add("z")
    with pytest.raises(ValueError, match="0 or more, not -1"):
        Rule(Reply(), round=-1)
