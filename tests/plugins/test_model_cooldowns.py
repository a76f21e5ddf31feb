"""Cooldowns per concrete model, against a loopback server answering as OpenAI's chat
completions API does: a 429 with ``retry-after`` cools that deployment (provider kind,
endpoint, model) for the whole process, from the moment the 429 arrives; other runs fail
fast without a request, or the fallback provider skips it."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest

from agentrig.errors import AgentrigError
from agentrig.kernel import open_runtime
from agentrig.llm import (
    COOLDOWNS,
    ModelCooldownError,
    ModelCooldowns,
    ModelDeployment,
    ProviderError,
    RateLimitError,
)
from agentrig.testing import MockProviderServer, MockReply, MockRequest

pytestmark = pytest.mark.anyio

LIMITED = "gpt-limited"
ENV = {"OPENAI_API_KEY": "sk-test"}


def _text(model: str, text: str) -> MockReply:
    def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                "model": model, "choices": [choice]}  # fmt: skip

    return MockReply(events=[chunk({"role": "assistant", "content": text}, None),
                             chunk({}, "stop"), "[DONE]"])  # fmt: skip


def answer(request: MockRequest) -> MockReply:
    """``gpt-limited*`` are over their rate limit for an hour; any other model answers."""
    model = request.body["model"]
    if model.startswith(LIMITED):
        body = {"error": {"type": "rate_limit_exceeded", "message": "Rate limit reached"}}
        return MockReply(status=429, body=body, headers={"retry-after": "3600"})
    return _text(model, f"answered by {model}")


def _config(url: str, **providers: Any) -> dict[str, Any]:
    options = {"base_url": f"{url}/v1", "allow_private_base_url": True, "max_retries": 0}
    return {
        "providers": {"main": {"kind": "openai", "options": options}, **providers},
        "agents": {
            "first": {"provider": "main", "model": LIMITED},
            "second": {"provider": "main", "model": LIMITED},
            "other": {"provider": "main", "model": "gpt-free"},
        },
    }


def _models(server: MockProviderServer) -> list[str]:
    return [r.body["model"] for r in server.requests]


def _at(server: MockProviderServer, model: str) -> ModelDeployment:
    """The deployment a model of the configured ``main`` provider is sent to."""
    return ModelDeployment("openai", f"{server.url}/v1", model)


async def test_a_rate_limit_cools_the_model_and_other_runs_fail_fast() -> None:
    with MockProviderServer(answer) as server:
        async with open_runtime(_config(server.url), environ=ENV) as rt:
            with pytest.raises(RateLimitError) as hit:
                await rt.agent("first").run("hi")
            assert hit.value.code == "provider.rate_limit"
            assert _models(server) == [LIMITED]
            left = COOLDOWNS.remaining(_at(server, LIMITED))
            assert left is not None
            assert 3500 < left <= 3600

            # another agent on the same model: refused at once, nothing sent
            with pytest.raises(ModelCooldownError) as cooled:
                await rt.agent("second").run("hi")
            assert cooled.value.code == "provider.cooldown"
            assert "'gpt-limited' is cooling down after a rate limit" in str(cooled.value)
            assert cooled.value.retry_after is not None
            assert cooled.value.retry_after > 3500
            assert _models(server) == [LIMITED]
            errors = [e.data for e in rt.agent("second").session.events if e.type == "model/error"]
            assert [e.code for e in errors] == ["provider.cooldown"]

            # another model of the same provider is not cooled
            assert (await rt.agent("other").run("hi")).value == "answered by gpt-free"

        # process-wide: a second runtime in the same process waits out the same deadline
        async with open_runtime(_config(server.url), environ=ENV) as rt:
            with pytest.raises(ModelCooldownError):
                await rt.agent("first").run("hi")
        assert _models(server) == [LIMITED, "gpt-free"]


async def test_the_fallback_provider_skips_a_cooling_deployment() -> None:
    with MockProviderServer(answer) as server:
        config = _config(server.url)
        config["providers"]["backup"] = config["providers"]["main"]
        config["providers"]["smart"] = {
            "kind": "fallback",
            "options": {
                "deployments": ["main", "backup"],
                "models": {"main": LIMITED, "backup": "gpt-free"},
            },
        }
        config["agents"] = {"assistant": {"provider": "smart", "model": "smart-model"}}
        async with open_runtime(config, environ=ENV) as rt:
            agent = rt.agent("assistant")
            first = await agent.run("one")
            assert first.value == "answered by gpt-free"
            assert _models(server) == [LIMITED, "gpt-free"]  # the 429, then the backup
            second = await agent.run("two")
            assert second.value == "answered by gpt-free"
            assert _models(server) == [LIMITED, "gpt-free", "gpt-free"]  # no second 429
            assert second.invocation.model == "gpt-free"


async def test_a_fallback_group_fails_fast_while_every_deployment_cools() -> None:
    with MockProviderServer(answer) as server:
        config = _config(server.url)
        config["providers"]["backup"] = config["providers"]["main"]
        config["providers"]["smart"] = {
            "kind": "fallback",
            "options": {
                "deployments": ["main", "backup"],
                "models": {"main": LIMITED, "backup": f"{LIMITED}-too"},
            },
        }
        config["agents"] = {"assistant": {"provider": "smart", "model": "smart-model"}}
        async with open_runtime(config, environ=ENV) as rt:
            agent = rt.agent("assistant")
            with pytest.raises(RateLimitError) as hit:
                await agent.run("one")
            assert hit.value.code == "provider.rate_limit"
            assert _models(server) == [LIMITED, f"{LIMITED}-too"]
            # the concrete models cool, not the group's name (each deployment has its own)
            assert COOLDOWNS.remaining(_at(server, LIMITED)) is not None
            assert COOLDOWNS.remaining(_at(server, f"{LIMITED}-too")) is not None
            assert COOLDOWNS.remaining(ModelDeployment("fallback", "smart", "smart-model")) is None
            with pytest.raises(ModelCooldownError) as cooled:
                await agent.run("two")
            assert "'backup'" in str(cooled.value)
            assert _models(server) == [LIMITED, f"{LIMITED}-too"]  # nothing sent


def test_cooldowns_start_on_a_deadline_extend_to_the_later_and_expire() -> None:
    now = [100.0]
    cooldowns = ModelCooldowns(clock=lambda: now[0])
    m, group = ModelDeployment("k", "https://e", "m"), ModelDeployment("k", "https://e", "g")

    def limited(after: float | None) -> RateLimitError:
        return RateLimitError("429", status=429, retry_after=after, provider="p")

    assert not cooldowns.note(m, limited(None))  # no deadline: nothing to wait for
    assert not cooldowns.note(m, ProviderError("500", status=500, retry_after=5))
    first = limited(30)
    assert cooldowns.note(m, first)
    assert first.cooldown_started
    assert not cooldowns.note(group, first)  # one failure, one cooldown
    assert cooldowns.remaining(group) is None
    assert not cooldowns.note(m, ModelCooldownError("p", "m", 99))
    cooldowns.note(m, limited(10))  # an earlier deadline does not shorten it
    assert cooldowns.remaining(m) == 30
    assert cooldowns.remaining(ModelDeployment("k", "https://other", "m")) is None
    now[0] = 120.0
    with pytest.raises(ModelCooldownError) as info:
        cooldowns.check(m, provider="main")
    assert info.value.retry_after == 10
    assert "provider 'main', model 'm'" in str(info.value)
    assert not info.value.retryable
    assert info.value.can_fallback
    assert isinstance(info.value, AgentrigError)
    now[0] = 130.0
    cooldowns.check(m)  # the deadline passed: sent again
    assert cooldowns.remaining(m) is None


SLOW = "gpt-briefly-limited"


class OnceLimited:
    """``gpt-briefly-limited`` answers its first request with a 429 asking for a 2 s wait,
    then answers; the test is told when the 429 went out."""

    def __init__(self) -> None:
        self.limited = threading.Event()

    def __call__(self, request: MockRequest) -> MockReply:
        model = request.body["model"]
        if model == SLOW and not self.limited.is_set():
            self.limited.set()
            body = {"error": {"type": "rate_limit_exceeded", "message": "Rate limit reached"}}
            return MockReply(status=429, body=body, headers={"retry-after": "2"})
        return _text(model, f"answered by {model}")


async def test_a_429_cools_the_deployment_while_its_own_run_waits_to_retry() -> None:
    """The run that met the 429 waits out ``Retry-After`` in its retry; meanwhile a run
    through another provider id reaching the same endpoint and model fails fast, without a
    request -- the cooldown started at the 429, not after the retries."""
    answer = OnceLimited()
    with MockProviderServer(answer) as server:
        config = _config(server.url)
        retrying = {**config["providers"]["main"]["options"], "max_retries": 1}
        config["providers"]["main"]["options"] = retrying
        config["providers"]["alias"] = {"kind": "openai", "options": dict(retrying)}
        config["agents"] = {
            "first": {"provider": "main", "model": SLOW},
            "second": {"provider": "alias", "model": SLOW},
        }
        async with open_runtime(config, environ=ENV) as rt:
            results: list[str] = []

            async def first() -> None:
                results.append((await rt.agent("first").run("hi")).value)

            async with anyio.create_task_group() as group:
                group.start_soon(first)
                with anyio.fail_after(30):  # until the first run's client met the 429
                    while COOLDOWNS.remaining(_at(server, SLOW)) is None:  # noqa: ASYNC110
                        await anyio.sleep(0.01)
                with pytest.raises(ModelCooldownError) as cooled:
                    await rt.agent("second").run("hi")
                assert "provider 'alias'" in str(cooled.value)
                assert _models(server) == [SLOW]  # the second run sent nothing
            assert results == [f"answered by {SLOW}"]  # the first retried after its wait
            assert _models(server) == [SLOW, SLOW]
