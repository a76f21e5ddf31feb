"""The loop's waterfall hooks: pre_step, request_config, request_error, tool_execution."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import pytest
from agentloop_support import (
    EnvFactory,
    check_invariant,
    clock,
    events,
    request_texts,
    texts,
)

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.lifecycle import (
    Enter,
    PreStep,
    PreStepDecision,
    Reject,
    RequestConfig,
    RequestError,
    Retry,
    ToolExecution,
)
from agentrig.llm import (
    ProviderError,
    RateLimitError,
    ServerError,
    ToolMessage,
    UserMessage,
    error_from_status,
)
from agentrig.tools import tool

pytestmark = pytest.mark.anyio


# ---- pre_step --------------------------------------------------------------------------------


class RewriteBatch:
    def __init__(self) -> None:
        self.seen: list[tuple[int, int, tuple[str, ...]]] = []

    @agentrig.hookimpl
    async def pre_step(
        self, payload: PreStep, next: Callable[[PreStep], Awaitable[PreStepDecision]]
    ) -> PreStepDecision:
        self.seen.append((payload.turn, payload.step, tuple(m.text for m in payload.messages)))
        if payload.step == 1:
            kept = UserMessage(id=payload.messages[0].id, content=payload.messages[0].content)
            added = UserMessage.of("added by pre_step", source="hook")
            return Enter(messages=(added, kept))
        return await next(payload)


class RejectAll:
    def __init__(self) -> None:
        self.signals: list[Any] = []

    @agentrig.hookimpl
    def pre_step(self, payload: PreStep, next: Any) -> PreStepDecision:
        self.signals.append(payload.signal)
        return Reject("not now")


async def test_pre_step_enters_a_modified_batch(env: EnvFactory) -> None:
    listener = RewriteBatch()
    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("clock"),)), "done"]
    async with env(script, tools=[clock], plugins={"rewrite": listener}) as e:
        agent = e.agent
        prompt = UserMessage.of("original prompt")
        await agent.run(prompt)
        # the initial proposal carries the claimed prompt; the tool continuation an empty batch
        assert listener.seen == [(1, 1, ("original prompt",)), (1, 2, ())]
        assert request_texts(e.provider.requests[0]) == [
            "user:added by pre_step",
            "user:original prompt",
        ]
        entered = [ev.message for ev in events(agent, "user/message")]
        assert [m.text for m in entered] == ["added by pre_step", "original prompt"]
        assert entered[1].id == prompt.id  # ids preserved
        assert entered[0].source == "hook"
        check_invariant(agent)


async def test_pre_step_reject_closes_the_turn_without_a_step(env: EnvFactory) -> None:
    listener = RejectAll()
    async with env(["never sent"], plugins={"reject": listener}) as e:
        agent = e.agent
        result = await agent.run("claimed then dropped")
        assert result.value == ""
        assert e.provider.requests == []
        assert len(listener.signals) == 1
        types = [ev.type for ev in agent.session.events]
        assert "step/start" not in types
        assert "user/message" not in types
        assert types[-1] == "turn/end"
        assert events(agent, "turn/end")[-1].reason == "rejected"
        # the claimed message is not in history, and not pending either
        assert all(m.role != "user" for m in agent.session.derive_messages())
        assert len(agent.inbox) == 0
        assert agent.status == "idle"
        check_invariant(agent)


# ---- request_config --------------------------------------------------------------------------


class SwitchModel:
    def __init__(self, model: str) -> None:
        self.model = model
        self.defaults: list[str] = []

    @agentrig.hookimpl
    async def request_config(
        self, payload: RequestConfig, next: Callable[[RequestConfig], Awaitable[RequestConfig]]
    ) -> RequestConfig:
        default = await next(payload)
        self.defaults.append(default.model)
        return attrs.evolve(default, model=self.model, max_tokens=77)


async def test_request_config_waterfall_switches_the_model(env: EnvFactory) -> None:
    listener = SwitchModel("m2")
    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("clock"),)), "done"]
    async with env(script, tools=[clock], plugins={"switch": listener}) as e:
        result = await e.agent.run("hi")
        # the default is the agent's options first, then the last logged request header
        assert listener.defaults == ["m1", "m2"]
        assert [r.model for r in e.provider.requests] == ["m2", "m2"]
        assert [r.max_tokens for r in e.provider.requests] == [77, 77]
        headers = events(e.agent, "request/header")
        assert [(h.model, h.max_tokens) for h in headers] == [("m2", 77), ("m2", 77)]
        assert result.invocation.model == "m2"


async def test_without_listeners_the_request_uses_the_agent_config(env: EnvFactory) -> None:
    async with env(["done"], max_tokens=123, temperature=0.5) as e:
        await e.agent.run("hi")
        request = e.provider.requests[0]
        assert (request.model, request.max_tokens, request.temperature) == ("m1", 123, 0.5)


# ---- request_error ---------------------------------------------------------------------------


class RetryOnce:
    def __init__(self) -> None:
        self.errors: list[tuple[type[BaseException], int, bool]] = []

    @agentrig.hookimpl
    async def request_error(self, payload: RequestError, next: Any) -> Retry | None:
        self.errors.append((type(payload.error), payload.attempt, payload.signal.cancelled))
        if payload.attempt == 1:
            return Retry()
        result: Retry | None = await next(payload)
        return result


def rate_limited() -> ProviderError:
    return error_from_status(
        429, {"error": {"type": "rate_limit", "message": "slow down"}}, {}, provider="scripted"
    )


FAILURES = [
    pytest.param(rate_limited, RateLimitError, id="429"),
    pytest.param(
        lambda: error_from_status(500, "upstream broke", {}, provider="scripted"),
        ServerError,
        id="500",
    ),
]


@pytest.mark.parametrize(("make_error", "error_type"), FAILURES)
async def test_request_error_retry_retries(
    env: EnvFactory, make_error: Callable[[], ProviderError], error_type: type[Exception]
) -> None:
    listener = RetryOnce()
    script: list[Reply | str] = [Reply(error=make_error()), "recovered"]
    async with env(script, plugins={"retry": listener}) as e:
        result = await e.agent.run("hi")
        assert result.value == "recovered"
        assert listener.errors == [(error_type, 1, False)]
        assert len(e.provider.requests) == 2
        assert texts(e.agent.session.derive_messages()) == ["user:hi", "assistant:recovered"]


@pytest.mark.parametrize(("make_error", "error_type"), FAILURES)
async def test_request_error_without_listener_is_terminal(
    env: EnvFactory, make_error: Callable[[], ProviderError], error_type: type[Exception]
) -> None:
    async with env([Reply(error=make_error()), "never used"]) as e:
        with pytest.raises(error_type) as caught:
            await e.agent.run("hi")
        assert len(e.provider.requests) == 1
        # the failure is an event of its own, never assistant text the next request sends
        history = list(e.agent.session.derive_messages())
        assert texts(history) == ["user:hi"]
        (failed,) = events(e.agent, "model/error")
        assert failed.code == caught.value.code  # type: ignore[attr-defined]
        assert failed.message == str(caught.value)  # readable, not "no response received"
        assert (failed.provider, failed.model, failed.attempt) == ("local", "m1", 1)
        assert failed.category == caught.value.category  # type: ignore[attr-defined]
        end = events(e.agent, "turn/end")[-1]
        assert end.reason == "failed"
        assert end.error["code"] == caught.value.code  # type: ignore[attr-defined]
        assert e.agent.status == "idle"
        check_invariant(e.agent)


async def test_a_listener_that_delegates_leaves_the_failure_terminal(env: EnvFactory) -> None:
    class Delegate:
        @agentrig.hookimpl
        async def request_error(self, payload: RequestError, next: Any) -> Retry | None:
            result: Retry | None = await next(payload)
            return result

    async with env([Reply(error=rate_limited()), "unused"], plugins={"d": Delegate()}) as e:
        with pytest.raises(RateLimitError):
            await e.agent.run("hi")
        assert len(e.provider.requests) == 1


async def test_mid_stream_failure_is_readable_and_typed(env: EnvFactory) -> None:
    reply = Reply(text="partial answer", chunk_size=4, error=rate_limited(), fail_after_chunks=2)
    async with env([reply]) as e:
        with pytest.raises(RateLimitError):
            await e.agent.run("hi")
        # readable in the log as a model/error event, not as the model's words
        assert texts(e.agent.session.derive_messages()) == ["user:hi"]
        (failed,) = events(e.agent, "model/error")
        assert "slow down" in failed.message
        check_invariant(e.agent)


# ---- tool_execution ----------------------------------------------------------------------------


class RewriteArgs:
    @agentrig.hookimpl
    async def tool_execution(
        self, payload: ToolExecution, next: Callable[[ToolExecution], Awaitable[ToolMessage]]
    ) -> ToolMessage:
        return await next(attrs.evolve(payload, arguments={"text": "rewritten"}))


class ShortCircuit:
    @agentrig.hookimpl
    def tool_execution(self, payload: ToolExecution, next: Any) -> ToolMessage:
        return ToolMessage.of(payload.call.id, payload.call.name, "from cache")


class Observe:
    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any], str]] = []

    @agentrig.hookimpl
    async def tool_execution(
        self, payload: ToolExecution, next: Callable[[ToolExecution], Awaitable[ToolMessage]]
    ) -> ToolMessage:
        result = await next(payload)
        self.seen.append((payload.call.name, dict(payload.arguments), result.text))
        return result


@pytest.mark.parametrize(
    ("make_listener", "expected", "body_calls"),
    [
        (RewriteArgs, "echo:rewritten", ["rewritten"]),
        (ShortCircuit, "from cache", []),
        (Observe, "echo:original", ["original"]),
    ],
    ids=["rewrite", "short-circuit", "observe"],
)
async def test_tool_execution_waterfall(
    env: EnvFactory, make_listener: Callable[[], Any], expected: str, body_calls: list[str]
) -> None:
    calls: list[str] = []

    @tool(id="echo")
    def counting_echo(text: str) -> str:
        """Repeat the text."""
        calls.append(text)
        return f"echo:{text}"

    listener = make_listener()
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("echo", {"text": "original"}),)),
        "done",
    ]
    async with env(script, tools=[counting_echo], plugins={"listener": listener}) as e:
        await e.agent.run("hi")
        result = events(e.agent, "tool/result")[0].message
        assert result.text == expected
        assert result.call_id == "call_0"
        assert calls == body_calls  # a short-circuit never runs the tool body
        if isinstance(listener, Observe):
            assert listener.seen == [("echo", {"text": "original"}, "echo:original")]
        # the model saw the waterfall's result
        assert request_texts(e.provider.requests[1])[-1] == f"tool:echo={expected}"
        check_invariant(e.agent)


async def test_a_raising_tool_execution_listener_becomes_an_error_result(env: EnvFactory) -> None:
    class Broken:
        @agentrig.hookimpl
        def tool_execution(self, payload: ToolExecution, next: Any) -> ToolMessage:
            raise RuntimeError("listener broke")

    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("clock"),)), "done"]
    async with env(script, tools=[clock], plugins={"broken": Broken()}) as e:
        assert (await e.agent.run("hi")).value == "done"
        result = events(e.agent, "tool/result")[0].message
        assert result.status == "error"
        assert "listener broke" in result.text
        check_invariant(e.agent)
