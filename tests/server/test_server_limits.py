"""Fail-closed defaults and limits: bind rule, body size, rate, concurrency, budgets,
disconnects, and internal errors that never reach a client."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam
from server_support import KEY, RunningServer, held_run, scripted_config, tool_entries

import agentrig
from agentrig.plugin import PROVIDERS

pytestmark = pytest.mark.integration

ENV = {"SERVER_KEY": KEY}
HI: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Hi"}]


def client(server: RunningServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.base_url}/v1", api_key=KEY, max_retries=0)


def settings(**agents: dict[str, Any]) -> dict[str, Any]:
    return {"api_keys": ["$ENV:SERVER_KEY"], "agents": agents or {"assistant": {}}}


class SessionSpy:
    """A listener plugin that keeps every agent the runtime creates."""

    def __init__(self) -> None:
        self.agents: list[Any] = []

    @agentrig.hookimpl
    def session_start(self, payload: Any) -> None:
        self.agents.append(payload.agent)


def wait_for(server: RunningServer, predicate: Callable[[], bool]) -> None:
    """Poll the server's state (on its own loop) until ``predicate`` holds."""

    async def check() -> bool:
        return predicate()

    for _ in range(500):
        if server.call(check):
            return
        time.sleep(0.02)
    raise AssertionError("condition not reached")


@pytest.mark.anyio
async def test_without_keys_a_non_loopback_bind_is_refused() -> None:
    from agentrig_server import parse_settings
    from agentrig_server._serve import AgentServer

    async with agentrig.open_runtime(scripted_config()) as rt:
        with pytest.raises(agentrig.ConfigError) as info:
            AgentServer(rt, parse_settings({"agents": {"assistant": {}}}), host="0.0.0.0")
        assert "server.host" in str(info.value)
        AgentServer(rt, parse_settings({"agents": {"assistant": {}}}), host="127.0.0.1")
        keyed = parse_settings({"api_keys": ["$ENV:K"], "agents": {"assistant": {}}})
        AgentServer(rt, keyed, host="0.0.0.0")


def test_api_keys_must_be_secret_references_and_agents_must_exist() -> None:
    from agentrig_server import parse_settings

    with pytest.raises(agentrig.ConfigError) as info:
        parse_settings({"api_keys": ["$ENV:K", "sk-literal"]})
    assert "api_keys[1] must be a secret reference" in str(info.value)
    assert "sk-literal" not in str(info.value)  # a key typed in by mistake is never echoed
    with pytest.raises(agentrig.ConfigError) as unknown:
        parse_settings({"agnets": {}})
    assert "server.agnets" in str(unknown.value)
    with (
        pytest.raises(agentrig.ConfigError) as missing,
        RunningServer(scripted_config(), {"agents": {"asistant": {}}}),
    ):
        pass
    assert "did you mean 'assistant'" in str(missing.value)


def test_body_over_the_limit_is_413() -> None:
    with RunningServer(
        scripted_config(), {**settings(), "max_body_bytes": 300}, environ=ENV
    ) as srv:
        with pytest.raises(openai.APIStatusError) as info:
            client(srv).chat.completions.create(
                model="assistant", messages=[{"role": "user", "content": "x" * 1000}]
            )
        assert info.value.status_code == 413
        ok = client(srv).chat.completions.create(model="assistant", messages=HI)
        assert ok.choices[0].message.content == "Hello there!"


def test_rate_limit_is_429_with_retry_after_keyed_by_the_verified_key() -> None:
    with RunningServer(
        scripted_config(), {**settings(), "rate_limit_per_minute": 2}, environ=ENV
    ) as srv:
        for _ in range(2):
            client(srv).chat.completions.create(model="assistant", messages=HI)
        with pytest.raises(openai.RateLimitError) as info:
            client(srv).chat.completions.create(model="assistant", messages=HI)
        assert int(info.value.response.headers["retry-after"]) >= 1
        # a forged header does not buy a fresh budget: limits follow the verified key
        forged = httpx.post(
            f"{srv.base_url}/v1/chat/completions",
            headers={"authorization": f"Bearer {KEY}", "x-forwarded-for": "10.1.2.3"},
            json={"model": "assistant", "messages": HI},
        )
        assert forged.status_code == 429


def test_a_caller_over_its_concurrency_limit_gets_429_others_do_not() -> None:
    other_key = "sk-second-caller-0000"
    config = scripted_config([{"text": "slow " * 40, "delay": 0.05, "chunk_size": 1}])
    keyed = {
        "api_keys": ["$ENV:SERVER_KEY", "$ENV:OTHER_KEY"],
        "max_concurrent_per_key": 1,
        "agents": {"assistant": {}},
    }
    env = {**ENV, "OTHER_KEY": other_key}
    with (
        RunningServer(config, keyed, environ=env) as srv,
        held_run(srv.base_url, KEY, "assistant", HI),
    ):
        with pytest.raises(openai.RateLimitError) as busy:
            client(srv).chat.completions.create(model="assistant", messages=HI)
        assert "caller" in str(busy.value)
        other = openai.OpenAI(base_url=f"{srv.base_url}/v1", api_key=other_key, max_retries=0)
        models = other.models.list()
        assert [m.id for m in models] == ["assistant"]


def test_a_busy_model_refuses_more_runs_without_blocking_other_models() -> None:
    config = scripted_config(
        [{"text": "slow " * 40, "delay": 0.05, "chunk_size": 1}],
        agents={
            "slow": {"provider": "local", "model": "m"},
            "fast": {"provider": "fast", "model": "m"},
        },
        extra={},
    )
    config["providers"]["fast"] = {
        "kind": "scripted",
        "options": {"script": [{"text": "quick"}], "on_exhausted": "repeat"},
    }
    with (
        RunningServer(config, settings(slow={"max_concurrent": 1}, fast={}), environ=ENV) as srv,
        held_run(srv.base_url, KEY, "slow", HI),  # it holds the model's slot
    ):
        with pytest.raises(openai.RateLimitError) as busy:
            client(srv).chat.completions.create(model="slow", messages=HI)
        assert "concurrent" in str(busy.value)
        other = client(srv).chat.completions.create(model="fast", messages=HI)
        assert other.choices[0].message.content == "quick"


def test_time_budget_ends_the_run_as_a_truncation() -> None:
    config = scripted_config([{"text": "tick " * 50, "delay": 0.5, "chunk_size": 5}])
    with RunningServer(config, settings(assistant={"max_run_seconds": 0.3}), environ=ENV) as srv:
        answer = client(srv).chat.completions.create(model="assistant", messages=HI)
    assert answer.choices[0].finish_reason == "length"


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def entries() -> agentrig.MemorySource:
    return tool_entries("inspect", add)


def test_token_budget_stops_the_run_before_the_next_model_call() -> None:
    script = [
        {
            "tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}],
            "usage": {"prompt": 40, "completion": 10},
        },
        {"text": "3", "usage": {"prompt": 50, "completion": 1}},
    ]
    config = scripted_config(
        script,
        agents={"assistant": {"provider": "local", "model": "m", "tools": ["add"]}},
        repeat=False,
    )
    with RunningServer(
        config, settings(assistant={"max_run_tokens": 20}), environ=ENV, memory=entries()
    ) as srv:
        answer = client(srv).chat.completions.create(model="assistant", messages=HI)
        requests = srv.call(_requests(srv))
    assert answer.choices[0].finish_reason == "length"
    assert requests == 1


def _requests(srv: RunningServer) -> Callable[[], Any]:
    async def count() -> int:
        return len(srv.rt.catalog(PROVIDERS).require("local").requests)

    return count


def test_server_side_tool_calls_never_reach_the_client_as_calls() -> None:
    script = [
        {"text": "Let me add.", "tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
        {"text": "2 + 3 = 5"},
    ]
    config = scripted_config(
        script * 2, agents={"assistant": {"provider": "local", "model": "m", "tools": ["add"]}}
    )
    with RunningServer(config, settings(), environ=ENV, memory=entries()) as srv:
        chunks = list(
            client(srv).chat.completions.create(model="assistant", messages=HI, stream=True)
        )
        plain = client(srv).chat.completions.create(model="assistant", messages=HI)
    assert all(not c.choices or c.choices[0].delta.tool_calls is None for c in chunks)
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert streamed == "Let me add.\n\n2 + 3 = 5"
    assert plain.choices[0].message.content == streamed
    assert plain.choices[0].message.tool_calls is None


def test_history_with_tool_calls_and_results_reaches_the_model_as_agentrig_messages() -> None:
    from agentrig.llm import AssistantMessage, SystemMessage, ToolMessage, UserMessage

    config = scripted_config(
        agents={"assistant": {"provider": "local", "model": "m", "system_prompt": "Be brief."}}
    )
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": "What is 2+3?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "5"},
        {"role": "assistant", "content": "Cinq."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "And this?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ],
        },
    ]
    with RunningServer(config, settings(), environ=ENV) as srv:
        client(srv).chat.completions.create(model="assistant", messages=messages)
        sent = srv.call(_last_request(srv))
    roles = [type(m) for m in sent]
    assert roles == [
        SystemMessage,
        UserMessage,
        AssistantMessage,
        ToolMessage,
        AssistantMessage,
        UserMessage,
    ]
    assert sent[0].text == "Be brief.\n\nAnswer in French."
    assert sent[2].tool_calls[0].arguments == {"a": 2, "b": 3}
    assert (sent[3].call_id, sent[3].name, sent[3].text) == ("call_1", "add", "5")
    assert sent[5].content[1].media_type == "image/png"


def _last_request(srv: RunningServer) -> Callable[[], Any]:
    async def last() -> Any:
        return list(srv.rt.catalog(PROVIDERS).require("local").requests[-1].messages)

    return last


def test_a_client_that_disconnects_cancels_its_run_recorded_interrupted() -> None:
    spy = SessionSpy()
    config = scripted_config([{"text": "word " * 200, "delay": 0.05, "chunk_size": 5}])
    with RunningServer(config, settings(), environ=ENV, plugins=[("spy", spy)]) as srv:
        headers = {"authorization": f"Bearer {KEY}"}
        body = {"model": "assistant", "messages": HI, "stream": True}
        with (
            httpx.Client(base_url=srv.base_url, timeout=30) as http,
            http.stream("POST", "/v1/chat/completions", json=body, headers=headers) as response,
        ):
            for line in response.iter_lines():
                if '"content":"word' in line:
                    break  # the run is under way: its first words arrived
        # the connection is closed: the run must end interrupted in its session

        def interrupted() -> bool:
            served = [a for a in spy.agents if ".srv-" in a.id]  # not the declared agent
            events = served[0].session.events if served else ()
            return any(e.type == "turn/end" and e.data.reason == "interrupted" for e in events)

        wait_for(srv, interrupted)
        calls = srv.call(_requests(srv))
    assert calls == 1


class BrokenProvider:
    """A provider whose failure message holds something no client may see."""

    kind = "broken"

    def capabilities(self, model: str) -> Any:
        from agentrig.llm import Capabilities

        return Capabilities(streaming=True)

    async def complete(self, request: Any, *, signal: Any) -> Any:
        raise RuntimeError("database password is hunter2")

    async def stream(self, request: Any, *, signal: Any) -> AsyncIterator[Any]:
        raise RuntimeError("database password is hunter2")
        yield  # pragma: no cover

    async def aclose(self) -> None:
        return None


def test_internal_errors_reach_the_client_as_an_error_id_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with RunningServer(
        scripted_config(),
        settings(),
        environ=ENV,
        overrides=[("providers", "local", BrokenProvider())],
    ) as srv:
        with pytest.raises(openai.InternalServerError) as info:
            client(srv).chat.completions.create(model="assistant", messages=HI)
        streamed = httpx.post(
            f"{srv.base_url}/v1/chat/completions",
            headers={"authorization": f"Bearer {KEY}"},
            json={"model": "assistant", "messages": HI, "stream": True},
        )
    assert "hunter2" not in str(info.value.body)
    assert "error id err_" in str(info.value)
    assert "hunter2" not in streamed.text
    assert "error id err_" in streamed.text


def test_provider_errors_are_502_without_the_upstream_message() -> None:
    script = [{"error": {"status": 401, "message": "upstream key sk-abc is invalid"}}]
    with (
        RunningServer(scripted_config(script), settings(), environ=ENV) as srv,
        pytest.raises(openai.APIStatusError) as info,
    ):
        client(srv).chat.completions.create(model="assistant", messages=HI)
    assert info.value.status_code == 502
    assert "sk-abc" not in str(info.value.body)


class CheckedProvider:
    """A scripted provider with a readiness check that fails (or hangs) on demand."""

    def __init__(self, mode: str) -> None:
        from agentrig.builtins._scripted import ScriptedProvider

        self.inner = ScriptedProvider(["hi"], on_exhausted="repeat")
        self.mode = mode
        self.kind = "checked"

    def capabilities(self, model: str) -> Any:
        return self.inner.capabilities(model)

    async def complete(self, request: Any, *, signal: Any) -> Any:
        return await self.inner.complete(request, signal=signal)

    def stream(self, request: Any, *, signal: Any) -> Any:
        return self.inner.stream(request, signal=signal)

    async def check_ready(self) -> None:
        import anyio

        if self.mode == "fail":
            raise ConnectionError("upstream at 10.0.0.7 refused the connection")
        if self.mode == "hang":
            await anyio.sleep_forever()

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize(("mode", "status"), [("ok", 200), ("fail", 503), ("hang", 503)])
def test_ready_runs_each_provider_check_bounded_and_health_stays_live(
    mode: str, status: int
) -> None:
    auth = {"authorization": f"Bearer {KEY}"}
    with RunningServer(
        scripted_config(),
        {**settings(), "ready_timeout": 0.2},
        environ=ENV,
        overrides=[("providers", "local", CheckedProvider(mode))],
    ) as srv:
        ready = httpx.get(f"{srv.base_url}/ready", headers=auth)
        health = httpx.get(f"{srv.base_url}/health")
    assert ready.status_code == status
    assert health.status_code == 200
    check = ready.json()["checks"]["provider:local"]
    assert check["status"] == ("ok" if mode == "ok" else "failed")
    assert "10.0.0.7" not in ready.text  # the cause is logged, not shown
